//! A run that ended before any radio stream was opened may run again (after the
//! operator changes the policy); a run that transmitted stays single-use.
use super::*;

const RX_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=RERUN", "frequency_hz": 100e6,
   "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.3}
]}"#;

/// BLOCKED by the policy, nothing reached the radio: the task stays approved, the
/// ledger says so, and once the limit is raised the same task runs (PASS); after
/// that it is single-use as ever.
#[test]
fn a_run_blocked_before_any_radio_stream_runs_again_after_the_policy_changes() {
    let rig = Rig::new();
    let id = "RUN_AGAIN_1";
    rig.set_policy(r#"{"rx": {"max_duration_s": 0.2}}"#);
    rig.post_and_approve(id, &yellow(), Some(RX_PLAN));
    let out = rig.run(id, None);
    assert_eq!(
        code(&out),
        Some(3),
        "BLOCKED by the policy: exit 3\n{}",
        show(&out)
    );
    assert_eq!(rig.result(id).status, "BLOCKED");
    assert!(
        text(&out.stdout).contains(&format!(
            "nothing reached a radio: {id} stays approved; after changing the policy, `rxnode run {id}` runs it again"
        )),
        "{}",
        show(&out)
    );
    assert_eq!(rig.lab.status_of(id), "approved");
    assert_eq!(rig.lab.count_events("run_ended_before_radio", id), 1);
    assert_eq!(rig.lab.count_events("run_finished", id), 0);
    assert!(rig.stream_events("RX").is_empty(), "{:?}", rig.events());

    rig.set_policy(r#"{"rx": {"max_duration_s": 1}}"#);
    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(rig.result(id).status, "PASS");
    assert_eq!(rig.lab.status_of(id), "completed");
    assert_eq!(
        rig.lab.count_events("run_started", id),
        2,
        "each attempt is a ledger line"
    );
    assert_eq!(rig.lab.count_events("run_finished", id), 1);
    assert!(rig.stream_events("RX").iter().any(|(_, s)| s == "RERUN"));
    let out = assert_refused(&rig, id, None, "ran to completion");
    assert!(text(&out.stderr).contains("already"), "{}", show(&out));
}

/// RED work that ended before any radio: the re-run asks for a fresh
/// authorization (none typed: refused) and records a second `authorized` line.
#[test]
fn a_red_run_that_reached_no_radio_needs_a_fresh_authorization_to_run_again() {
    let rig = Rig::new();
    let id = "RUN_AGAIN_RED";
    let red = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "RED"),
    ];
    rig.set_policy(r#"{"rx": {"max_duration_s": 0.2}}"#);
    rig.post_and_approve(id, &red, Some(RX_PLAN));
    let phrase = format!("AUTHORIZE {id}\n");
    let out = rig.run(id, Some(&phrase));
    assert_eq!(
        code(&out),
        Some(3),
        "BLOCKED by the policy: exit 3\n{}",
        show(&out)
    );
    assert_eq!(rig.result(id).status, "BLOCKED");
    assert!(
        text(&out.stdout).contains("(it asks for a fresh authorization)"),
        "{}",
        show(&out)
    );
    rig.set_policy(r#"{"rx": {"max_duration_s": 1}}"#);
    let out = assert_refused(&rig, id, None, "no fresh authorization");
    assert!(
        text(&out.stderr).contains("authorization refused"),
        "{}",
        show(&out)
    );
    // Said once: "authorization refused for X: authorization refused for task X" repeated itself.
    for typed in [None, Some("AUTHORISE it\n")] {
        let out = rig.run(id, typed);
        let err = text(&out.stderr);
        assert_eq!(
            err.matches("authorization refused").count(),
            1,
            "{}",
            show(&out)
        );
        assert!(
            err.contains(&format!("authorization refused for task {id}: ")),
            "{}",
            show(&out)
        );
    }
    let out = rig.run(id, Some(&phrase));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(rig.result(id).status, "PASS");
    assert_eq!(rig.lab.count_events("authorized", id), 2);
    assert_eq!(rig.lab.count_events("run_started", id), 2);
}

/// A run whose tone went on air stays single-use, even though another step of it
/// was BLOCKED by the policy.
#[test]
fn a_run_that_opened_a_tx_stream_stays_single_use_though_a_step_was_blocked() {
    let rig = Rig::new();
    let id = "RUN_ONCE_TX";
    let red = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RF_TX", "YES"),
        ("RISK_LEVEL", "RED"),
    ];
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=RX1", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 30},
      {"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
       "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.3}
    ]}"#;
    rig.set_policy(TX_POLICY_OK);
    rig.post_and_approve(id, &red, Some(plan));
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["BLOCKED", "PASS"], "{}", show(&out));
    assert!(!text(&out.stdout).contains("nothing reached a radio"));
    assert_eq!(rig.lab.status_of(id), "completed");
    let tx_streams = rig.tx_events().len();
    assert!(tx_streams > 0);
    assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), "transmitted once");
    assert_eq!(rig.tx_events().len(), tx_streams, "no second transmission");
}

/// `mark-completed` of an approved task with an `rx-plan` that never ran is refused
/// (exit 3, naming `rxnode run ID`): it closed the task with the approval's NOT RUN
/// placeholder, after which `run` refused it as "already run to completion". A
/// `--status` for a planned task stays refused (exit 2: its result is the run's). A
/// run that ended before any radio (BLOCKED, still approved) may be closed as it is.
#[test]
fn mark_completed_of_a_planned_task_that_never_ran_is_refused_and_it_still_runs() {
    let rig = Rig::new();
    let id = "PLANNED_MARK_1";
    rig.set_policy(r#"{"rx": {"max_duration_s": 0.2}}"#);
    rig.post_and_approve(id, &yellow(), Some(RX_PLAN));
    let out = rig.lab.run(&["mark-completed", id], "");
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("has an rx-plan of 1 step(s) and has not run")
            && text(&out.stderr).contains(&format!("`rxnode run {id}`")),
        "{}",
        show(&out)
    );
    let out = rig.lab.run(
        &["mark-completed", id, "--status", "PASS", "--note", "x"],
        "",
    );
    assert_eq!(code(&out), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("not from --status"),
        "{}",
        show(&out)
    );
    assert_eq!(rig.lab.status_of(id), "approved");
    assert_eq!(rig.lab.count_events("marked_completed", id), 0);
    assert_eq!(rig.result(id).status, "NOT RUN");
    // The run still runs it (BLOCKED here: nothing reached a radio), and then the
    // operator may close it with that result; a --status is still refused.
    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    assert_eq!(rig.result(id).status, "BLOCKED");
    let out = rig.lab.run(&["mark-completed", id, "--status", "SKIP"], "");
    assert_eq!(code(&out), Some(2), "{}", show(&out));
    let out = rig.lab.run(&["mark-completed", id], "");
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(rig.lab.status_of(id), "completed");
    assert_eq!(rig.result(id).status, "BLOCKED");
}

/// A task ID typed in the wrong letter case (`case_1` for `CASE_1`) was only
/// "unknown to this node": `run`, `review` and `mark-completed` now name the
/// known task, as task IDs are case-sensitive; nothing runs or changes.
#[test]
fn a_task_id_in_the_wrong_letter_case_names_the_known_task() {
    let rig = Rig::new();
    let id = "CASE_1";
    rig.post_and_approve(id, &[], None);
    let hint = format!("task {id} is known: task IDs are case-sensitive");
    let out = rig.run("case_1", None);
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    assert!(text(&out.stderr).contains(&hint), "{}", show(&out));
    for args in [
        &["review", "case_1"][..],
        &[
            "mark-completed",
            "case_1",
            "--status",
            "PASS",
            "--note",
            "x",
        ][..],
    ] {
        let out = rig.lab.run(args, "");
        assert_eq!(code(&out), Some(2), "{args:?}: {}", show(&out));
        assert!(
            text(&out.stderr).contains(&hint),
            "{args:?}: {}",
            show(&out)
        );
    }
    assert_eq!(rig.lab.status_of(id), "approved");
}
