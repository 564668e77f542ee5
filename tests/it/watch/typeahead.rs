//! On a terminal an answer counts only if it was typed after the prompt was
//! drawn (docs/safety.md#typed-ahead-input): the watcher runs on a real
//! pseudo-terminal and the test types at it.
use crate::util::{Lab, Pty, PROMPT};
use std::time::{Duration, Instant};

/// Wait until `id` has the state status `want`; panics with the screen after 20 s.
fn wait_status(lab: &Lab, pty: &Pty, id: &str, want: &str) {
    let t0 = Instant::now();
    while lab.status_of(id) != want {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{id} not {want}; screen:\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A line typed at an idle watcher (before any prompt, and again after one was
/// answered) approves nothing and does not stop it: the next task's prompt
/// waits, and so does the re-prompt after an invalid answer; a line typed after
/// the prompt is taken.
#[test]
fn lines_typed_while_the_watcher_is_idle_answer_no_later_prompt() {
    let lab = Lab::new();
    let mut cmd = lab.rxnode();
    cmd.args(["watch", "--interval", "0.2"]);
    let mut pty = Pty::spawn(&mut cmd);
    let t0 = Instant::now();
    while !lab.local().join("rx_agent_state.json").exists() || lab.state()["last_poll"].is_null() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "watcher did not poll; screen:\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // Idle, no prompt drawn yet: an approval and a stop typed ahead.
    pty.type_text("a\ns\n");
    std::thread::sleep(Duration::from_millis(500));
    lab.post(&Lab::task("T_AHEAD_1", &lab.main_head(), &[]));
    pty.wait_for(PROMPT, 1, 20);
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(
        lab.count_events("approved", "T_AHEAD_1"),
        0,
        "{}",
        pty.screen()
    );
    assert_eq!(lab.status_of("T_AHEAD_1"), "pending");
    assert!(pty.child.try_wait().unwrap().is_none(), "{}", pty.screen());
    pty.type_text("a\n");
    wait_status(&lab, &pty, "T_AHEAD_1", "approved");
    assert_eq!(lab.count_events("approved", "T_AHEAD_1"), 1);

    // Idle again, after a prompt was answered: typed-ahead lines are dropped too.
    pty.type_text("a\n");
    std::thread::sleep(Duration::from_millis(500));
    lab.post(&Lab::task("T_AHEAD_2", &lab.main_head(), &[]));
    pty.wait_for(PROMPT, 2, 20);
    // An invalid answer, and an approval typed before the re-prompt is drawn.
    pty.type_text("x\na\n");
    pty.wait_for("unknown answer", 1, 20);
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(
        lab.count_events("approved", "T_AHEAD_2"),
        0,
        "{}",
        pty.screen()
    );
    assert_eq!(lab.status_of("T_AHEAD_2"), "pending");
    pty.type_text("a\n");
    wait_status(&lab, &pty, "T_AHEAD_2", "approved");
}

/// On a terminal in non-canonical mode one read hands over every line typed so
/// far: an invalid answer and an approval typed together answer only the prompt
/// they followed. The approval, typed before the re-prompt was drawn, approves
/// nothing; one typed after the re-prompt is taken.
#[test]
fn a_second_line_typed_with_an_answer_on_a_raw_terminal_answers_no_later_prompt() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_RAW_1", &lab.main_head(), &[]));
    let mut cmd = lab.rxnode();
    cmd.args(["watch", "--interval", "0.2"]);
    let mut pty = Pty::spawn_noncanonical(&mut cmd);
    pty.wait_for(PROMPT, 1, 20);
    std::thread::sleep(Duration::from_millis(300));
    pty.type_text("x\na\n");
    pty.wait_for("unknown answer", 1, 20);
    pty.wait_for(PROMPT, 2, 20);
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(
        lab.count_events("approved", "T_RAW_1"),
        0,
        "{}",
        pty.screen()
    );
    assert_eq!(lab.status_of("T_RAW_1"), "pending");
    assert!(pty.child.try_wait().unwrap().is_none(), "{}", pty.screen());
    pty.type_text("a\n");
    wait_status(&lab, &pty, "T_RAW_1", "approved");
    assert_eq!(lab.count_events("approved", "T_RAW_1"), 1);
}

/// Wait until the child on `pty` exits; its exit code. Panics with the screen after 30 s.
fn exit_code(pty: &mut Pty) -> Option<i32> {
    pty.exited(30).code()
}

/// `rxnode run`'s authorization line typed before the line was asked for does
/// not authorize a transmission: the run waits, keys nothing, and goes ahead
/// only with the line typed after the prompt.
#[test]
fn authorization_typed_before_the_prompt_keys_nothing() {
    let lab = Lab::new();
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=ahead",
        "frequency_hz": 433.92e6, "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3,
        "gain_db": 0, "duration_s": 0.2}]}"#;
    lab.post_and_approve(
        "T_AHEAD_TX",
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "RED"),
        ],
        Some(plan),
    );
    lab.set_policy(
        r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    );
    let mut cmd = lab.rxnode();
    cmd.args(["--sim", "run", "T_AHEAD_TX"]);
    let mut pty = Pty::spawn_typed(&mut cmd, "AUTHORIZE RF TX\n");
    pty.wait_for("to authorize", 1, 30);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(pty.child.try_wait().unwrap().is_none(), "{}", pty.screen());
    assert_eq!(lab.count_events("authorized", "T_AHEAD_TX"), 0);
    assert_eq!(lab.count_events("run_started", "T_AHEAD_TX"), 0);
    pty.type_text("AUTHORIZE RF TX\n");
    assert_eq!(exit_code(&mut pty), Some(0), "{}", pty.screen());
    assert_eq!(lab.count_events("authorized", "T_AHEAD_TX"), 1);
    assert_eq!(lab.count_events("run_finished", "T_AHEAD_TX"), 1);
}

/// `rxnode publish`'s confirmation typed before the prompt publishes nothing.
#[test]
fn publish_confirmation_typed_before_the_prompt_publishes_nothing() {
    let lab = Lab::new();
    lab.post_and_approve("T_AHEAD_PUB", &[("ALLOW_PUSH", "RX_RESULT_ONLY")], None);
    let out = lab.run(&["node", "set-name", "LAB-RX1"], "");
    expect_exit!(out, 0);
    let out = lab.run(
        &[
            "mark-completed",
            "T_AHEAD_PUB",
            "--status",
            "PASS",
            "--note",
            "ok",
        ],
        "",
    );
    expect_exit!(out, 0);
    let mut cmd = lab.rxnode();
    cmd.args(["publish", "T_AHEAD_PUB"]);
    let mut pty = Pty::spawn_typed(&mut cmd, "PUBLISH T_AHEAD_PUB\n");
    pty.wait_for("to go ahead", 1, 30);
    std::thread::sleep(Duration::from_millis(1000));
    assert!(pty.child.try_wait().unwrap().is_none(), "{}", pty.screen());
    assert_eq!(lab.count_events("published", "T_AHEAD_PUB"), 0);
    pty.type_text("PUBLISH T_AHEAD_PUB\n");
    assert_eq!(exit_code(&mut pty), Some(0), "{}", pty.screen());
    assert_eq!(lab.count_events("published", "T_AHEAD_PUB"), 1);
}
