//! `run --json`: nothing but the documented JSON goes out (docs/protocol.md#7-exit-status);
//! the signature line a person sees is in the result's `approval.signature`.
use super::*;

#[test]
fn run_json_writes_no_plain_text_to_stderr() {
    let rig = Rig::new();
    let id = "JSON_RUN_1";
    let plan = r#"{"steps": [{"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 100e6,
        "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.1}]}"#;
    rig.post_and_approve(id, &yellow(), Some(plan));
    let out = rig
        .lab
        .rxnode()
        .args(["--sim", "--json", "run", id])
        .env("RXSIM_EVENT_LOG", &rig.events)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(!err.contains("Unsigned"), "{}", show(&out));
    for line in err.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "plain text on stderr under --json: {line:?}\n{}",
            show(&out)
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", show(&out)));
    assert!(v.is_object(), "{v}");
    // Without --json the operator still reads the line.
    rig.lab
        .post_and_approve("JSON_RUN_2", &yellow(), Some(plan));
    let out = rig.run("JSON_RUN_2", None);
    assert!(
        text(&out.stderr).contains("Unsigned (commit "),
        "{}",
        show(&out)
    );
}
