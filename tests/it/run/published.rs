//! A task's run and its publication do not overlap: `publish` refuses while the
//! task's own run holds the run lock (its outbox still holds the approval's
//! `NOT RUN` placeholder), refuses a result that changed while the operator was
//! asked, and `run` refuses a task whose result was already published (a
//! published result is never overwritten, so that run's result could never go out).
use super::*;
use std::time::{Duration, Instant};

/// A 3 s paced capture: long enough to publish during it.
const LONG_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,pace=1,serial=PUBRUN", "frequency_hz": 100e6,
   "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 3}
]}"#;

fn publishable() -> Vec<(&'static str, &'static str)> {
    let mut v = yellow();
    v.push(("ALLOW_PUSH", "RX_RESULT_ONLY"));
    v
}

fn named(rig: &Rig) {
    let out = rig.lab.run(&["node", "set-name", "LAB1"], "");
    assert_eq!(code(&out), Some(0), "{}", show(&out));
}

/// `rxnode publish ID`, confirmed.
fn publish(rig: &Rig, id: &str) -> Output {
    util::run_fed(
        rig.lab.rxnode().args(["publish", id]),
        format!("PUBLISH {id}\n").as_bytes(),
    )
}

/// Wait (30 s at most) until the run's capture has activated its stream.
fn capture_started(rig: &Rig) {
    let started = Instant::now();
    while !rig.events().iter().any(|l| l.contains("activateStream RX")) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the capture never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (`secs` at most) for the process on the pty to end; its exit status.
#[cfg(unix)]
fn exited(pty: &mut crate::util::Pty, secs: u64) -> std::process::ExitStatus {
    pty.exited(secs)
}

/// The status of `id`'s result on the local `rx-node`, if one is there.
fn published_status(rig: &Rig, id: &str) -> Option<String> {
    let spec = format!("rx-node:rx-results/{id}/LAB1/RX_RESULT.json");
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&rig.lab.rx)
        .args(["show", &spec])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["status"].as_str().map(str::to_owned)
}

/// `publish` while the task's run is capturing: refused (exit 3, the run lock and
/// its holder named), nothing on `rx-node`; once the run has ended the PASS
/// result is published. It used to publish the `NOT RUN` placeholder, and the
/// run's PASS could then never be published.
#[test]
fn publish_during_the_tasks_own_run_is_refused_and_the_result_goes_out_after() {
    let rig = Rig::new();
    let id = "PUB_DURING_RUN_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), Some(LONG_PLAN));
    let run = rig.spawn_run(id, None);
    let lock = rig.lab.local().join("rxnode-run.lock");
    capture_started(&rig);
    assert!(lock.exists(), "the run holds its lock while capturing");
    let out = publish(&rig, id);
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("task {id} is being run now"))
            && err.contains("rxnode-run.lock")
            && err.contains(&format!("(run {id}, since")),
        "{err}"
    );
    assert_eq!(published_status(&rig, id), None, "nothing may be published");
    let out = run.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let out = publish(&rig, id);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(published_status(&rig, id).as_deref(), Some("PASS"));
}

/// `mark-completed` of a task while its run is capturing wrote the operator's
/// result into the outbox the run was about to fill and marked the task completed
/// under the running step. It takes the run lock as `run` does: refused (exit 3,
/// naming the lock), the run's result stands.
#[test]
fn mark_completed_during_a_run_is_refused_and_the_runs_result_stands() {
    let rig = Rig::new();
    let id = "MARK_DURING_RUN_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), Some(LONG_PLAN));
    let run = rig.spawn_run(id, None);
    capture_started(&rig);
    let out = rig
        .lab
        .rxnode()
        .args([
            "mark-completed",
            id,
            "--status",
            "FAIL",
            "--note",
            "by hand",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("rxnode-run.lock") && err.contains(&format!("(run {id}, since")),
        "{err}"
    );
    let out = run.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let json = rig
        .lab
        .local()
        .join(format!("rx_agent_outbox/{id}/RX_RESULT.json"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(v["status"], "PASS", "the run's own result: {v:#}");
}

/// The outbox's result changes while `PUBLISH <ID>` is being asked (a run that
/// ended meanwhile): refused, naming the file, and nothing is committed; the
/// next publish shows and sends the result as it is.
#[cfg(unix)]
#[test]
fn a_result_that_changed_while_publish_asked_is_not_published() {
    let rig = Rig::new();
    let id = "PUB_CHANGED_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), None);
    let mut pty = crate::util::Pty::spawn(rig.lab.rxnode().args(["publish", id]));
    pty.wait_for("to go ahead", 1, 30);
    assert!(pty.screen().contains("status NOT RUN"), "{}", pty.screen());
    // The operator marks the manual task completed in another terminal.
    let out = rig.lab.run(
        &[
            "mark-completed",
            id,
            "--status",
            "PASS",
            "--note",
            "done by hand",
        ],
        "",
    );
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    pty.type_text(&format!("PUBLISH {id}\n"));
    let status = exited(&mut pty, 30);
    assert_eq!(status.code(), Some(3), "{}", pty.screen());
    pty.wait_for("RX_RESULT.md changed after it was shown", 1, 10);
    assert_eq!(published_status(&rig, id), None, "nothing may be published");
    let out = publish(&rig, id);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(published_status(&rig, id).as_deref(), Some("PASS"));
}

/// A task whose result was published (here the approval's `NOT RUN`
/// placeholder) is not run: exit 3, no radio stream, the published result stands.
/// It used to run and PASS, its result then refused by every publish.
#[test]
fn a_task_whose_result_was_published_is_not_run() {
    let rig = Rig::new();
    let id = "PUB_BEFORE_RUN_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), Some(LONG_PLAN));
    let out = publish(&rig, id);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let out = assert_refused(&rig, id, None, "a published task");
    assert!(
        text(&out.stderr).contains(&format!("task {id}'s result was already published")),
        "{}",
        show(&out)
    );
    assert!(rig.stream_events("RX").is_empty(), "{:?}", rig.events());
    assert_eq!(published_status(&rig, id).as_deref(), Some("NOT RUN"));
}

/// Ctrl-C (SIGINT) at the `PUBLISH <ID>` prompt: a refusal like any other answer
/// (exit 3, one `refused` ledger line naming the interrupt, nothing committed),
/// not a death by signal with no word; the next publish goes ahead.
#[cfg(unix)]
#[test]
fn ctrl_c_at_the_publish_prompt_refuses_and_commits_nothing() {
    let rig = Rig::new();
    let id = "PUB_INT_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), None);
    let refused_before = rig.refused_count(id);
    let mut pty = crate::util::Pty::spawn(rig.lab.rxnode().args(["publish", id]));
    pty.wait_for("to go ahead", 1, 30);
    // SAFETY: kill(2) on the child's own PID.
    assert_eq!(
        unsafe { libc::kill(pty.child.id() as i32, libc::SIGINT) },
        0
    );
    let status = exited(&mut pty, 20);
    assert_eq!(status.code(), Some(3), "{status:?}: {}", pty.screen());
    assert!(
        pty.screen().contains("interrupted at the prompt")
            && pty.screen().contains("nothing was written"),
        "{}",
        pty.screen()
    );
    assert_eq!(rig.refused_count(id), refused_before + 1);
    let rx_node = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "-q", "refs/heads/rx-node"])
        .current_dir(&rig.lab.rx)
        .output()
        .unwrap();
    assert!(!rx_node.status.success(), "a commit was made");
    let out = rig.lab.run(&["publish", id], &format!("PUBLISH {id}\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
}

/// Ctrl-D or Ctrl-C at `PUBLISH <ID>` on a terminal (which echoes no line end)
/// puts the refusal on a line of its own, not after the prompt's `go ahead: `.
#[cfg(unix)]
#[test]
fn ctrl_d_or_ctrl_c_at_the_publish_prompt_puts_the_refusal_on_its_own_line() {
    let rig = Rig::new();
    let id = "PUB_EOL_1";
    named(&rig);
    rig.post_and_approve(id, &publishable(), None);
    for key in ["Ctrl-D", "Ctrl-C"] {
        let mut pty = crate::util::Pty::spawn(rig.lab.rxnode().args(["publish", id]));
        pty.wait_for("to go ahead: ", 1, 30);
        // Past the prompt's discard of what was typed before it was drawn.
        std::thread::sleep(std::time::Duration::from_millis(500));
        if key == "Ctrl-D" {
            pty.type_text("\u{4}");
        } else {
            // SAFETY: kill(2) on the child's own PID.
            assert_eq!(
                unsafe { libc::kill(pty.child.id() as i32, libc::SIGINT) },
                0
            );
        }
        let status = exited(&mut pty, 20);
        let screen = pty.screen();
        assert_eq!(status.code(), Some(3), "{key}: {status:?}: {screen}");
        assert!(
            screen.contains("\nrxnode: error: refused: "),
            "{key}: the refusal starts a line: {screen:?}"
        );
        assert!(
            !screen.contains("go ahead: rxnode"),
            "{key}: glued to the prompt: {screen:?}"
        );
    }
}
