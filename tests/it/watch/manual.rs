//! A manual task's result, as the operator gives it: `mark-completed --status`.
use crate::util::{text, Lab};

/// `mark-completed ID --status PASS --note …` writes `RX_RESULT.json` and
/// `RX_RESULT.md` from one value: `validate-result` accepts them, `publish` sends them
/// (its secret scanner does not mistake the result's own trailer for one), and the
/// status and note are what the operator said.
#[test]
fn mark_completed_with_a_status_writes_a_result_that_validates_and_publishes() {
    let lab = Lab::new();
    lab.post_and_approve("T_MANUAL", &[("ALLOW_PUSH", "RX_RESULT_ONLY")], None);
    let out = lab.run(&["node", "set-name", "LAB-RX1"], "");
    expect_exit!(out, 0);
    let out = lab.run(
        &[
            "mark-completed",
            "T_MANUAL",
            "--status",
            "PASS",
            "--note",
            "NTP synchronised: offset 0.3 ms\nchecked with chronyc tracking",
        ],
        "",
    );
    expect_exit!(out, 0);
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(lab.outbox("T_MANUAL").join("RX_RESULT.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["status"], "PASS", "{r:#}");
    assert_eq!(r["checks"][0]["status"], "PASS");
    assert_eq!(
        r["checks"][0]["detail"],
        "NTP synchronised: offset 0.3 ms / checked with chronyc tracking"
    );
    assert!(r["timeline"]["completed_at"].is_string(), "{r:#}");
    let out = lab.run(&["validate-result", "T_MANUAL"], "");
    expect_exit!(out, 0);
    let out = lab.run(&["publish", "T_MANUAL"], "PUBLISH T_MANUAL\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_MANUAL"), "completed");
    // A completed task's result stays as it is.
    let out = lab.run(&["mark-completed", "T_MANUAL", "--status", "FAIL"], "");
    expect_exit!(out, 3);
    // An ID this node never saw is the operator's input error, as operator.md
    // says (exit 2), naming it.
    let out = lab.run(&["mark-completed", "T_NEVER_SEEN", "--status", "PASS"], "");
    expect_exit!(out, 2);
    assert!(text(&out.stderr).contains("T_NEVER_SEEN is not known on this node"));
}

/// Result files that disagree (the JSON edited by hand, the Markdown not) are
/// refused by `mark-completed` itself, naming the problem; the task stays approved.
#[test]
fn mark_completed_refuses_result_files_that_disagree() {
    let lab = Lab::new();
    lab.post_and_approve("T_EDITED", &[], None);
    let json = lab.outbox("T_EDITED").join("RX_RESULT.json");
    let edited = std::fs::read_to_string(&json)
        .unwrap()
        .replace("\"NOT RUN\"", "\"PASS\"");
    std::fs::write(&json, edited).unwrap();
    let out = lab.run(&["mark-completed", "T_EDITED"], "");
    expect_exit!(out, 2);
    let err = text(&out.stderr);
    assert!(
        err.contains("do not validate") && err.contains("--status"),
        "{err}"
    );
    assert_eq!(lab.status_of("T_EDITED"), "approved");
    // Letting rxnode write both files mends it.
    let out = lab.run(
        &[
            "mark-completed",
            "T_EDITED",
            "--status",
            "SKIP",
            "--note",
            "not needed today",
        ],
        "",
    );
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_EDITED"), "completed");
}
