//! Review pass r1: the hostile main PC. Each test is one hole found by attacking the
//! merged product end to end (a real bare origin, a real RX checkout), failing
//! before its fix.
mod common;
use common::{text, Lab};
use std::process::Output;

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

fn post_and_approve(lab: &Lab, id: &str, overrides: &[(&str, &str)], plan: &str) {
    let base = lab.main_head();
    let mut t = Lab::task(id, &base, overrides);
    t.push_str(&format!("\n```rx-plan\n{plan}\n```\n"));
    lab.post(&t);
    let out = lab.watch_once("A\n");
    assert_eq!(out.status.code(), Some(0), "watch: {}", show(&out));
    assert_eq!(lab.status_of(id), "approved", "{}", show(&out));
}

const RED: [(&str, &str); 3] = [
    ("HARDWARE_ACCESS", "YES"),
    ("RF_TX", "YES"),
    ("RISK_LEVEL", "RED"),
];

/// SoapySDR parses device args into a map where the *last* `key=value` wins, but
/// the TX device check read the *first*: `remote=<allowed>,remote=<other>` passed
/// the `tx.allowed_remote_servers` check and then transmitted on the other server,
/// and `driver=rxsim,driver=remote` (no `remote=`) passed as a local radio and then
/// let SoapyRemote transmit on whatever server it discovers. A TX device with a key
/// given twice is refused by the policy (exit 3) before the phrase is asked.
#[test]
fn tx_device_with_a_repeated_key_is_refused() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.local()).unwrap();
    let devices = [
        (
            "TWO_REMOTES",
            "driver=remote,remote=tcp://127.0.0.1:1,remote=tcp://192.0.2.7:55132,remote:driver=rxsim",
        ),
        ("TWO_DRIVERS", "driver=rxsim,driver=remote,remote:driver=rxsim"),
        ("TWO_DRIVERS_SP", "driver=rxsim, driver =remote"),
    ];
    for (id, dev) in devices {
        let plan = format!(
            r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
            "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}}]}}"#
        );
        post_and_approve(&lab, id, &RED, &plan);
        std::fs::write(
            lab.local().join("rxnode-policy.json"),
            r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10,
                "max_duration_s": 3, "allowed_remote_servers": ["tcp://127.0.0.1:1"]}}"#,
        )
        .unwrap();
        let out = lab.run(&["--sim", "run", id], "AUTHORIZE RF TX\n");
        assert_eq!(out.status.code(), Some(3), "{dev}: {}", show(&out));
        let se = text(&out.stderr);
        assert!(se.contains("more than once"), "{dev}: {}", show(&out));
        assert_eq!(lab.count_events("tx_started", id), 0, "{dev}");
    }
}
