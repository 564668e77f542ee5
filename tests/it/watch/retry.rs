//! A prompt whose decision cannot be recorded (a full disk, a folder that
//! cannot be written) is offered again by the same watcher.
use super::*;
use crate::util::unwritable;
use std::io::{BufRead, Write};

/// The operator answers `A`, the approval cannot be written (the outbox folder
/// refuses new entries); once it can, the looping watcher asks again at a
/// later poll and the second `A` approves — the task is not left pending
/// unasked until the watcher is restarted.
#[cfg(unix)]
#[test]
fn a_prompt_whose_decision_was_not_recorded_is_offered_again_at_the_next_poll() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_RETRY", &lab.main_head(), &[]));
    let outboxes = lab.local().join("rx_agent_outbox");
    std::fs::create_dir_all(&outboxes).unwrap();
    unwritable(&outboxes, true);
    // Killed and reaped if an assertion below fails: no watcher is left polling.
    let mut w = util::Reaped(
        lab.rxnode()
            .args(["watch", "--interval", "0.2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdin = w.stdin.take().unwrap();
    let stderr = w.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"A\n").unwrap();
    let t0 = Instant::now();
    let failed = loop {
        let left = Duration::from_secs(20).saturating_sub(t0.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains("T_RETRY") && l.contains("rx_agent_outbox") => break l,
            Ok(_) => {}
            Err(e) => {
                unwritable(&outboxes, false);
                panic!("the approval did not fail: {e}");
            }
        }
    };
    unwritable(&outboxes, false);
    assert_eq!(lab.status_of("T_RETRY"), "pending", "{failed}");
    assert!(failed.contains("offered again"), "{failed}");
    // The lost answer is evidence: the ledger says the decision was not recorded.
    let lost: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "decision_not_recorded" && e["task_id"] == "T_RETRY")
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    let why = lost[0]["detail"]["error"].as_str().unwrap_or_default();
    assert!(why.contains("rx_agent_outbox"), "{lost:?}");
    stdin.write_all(b"A\n").unwrap();
    let t0 = Instant::now();
    while lab.status_of("T_RETRY") != "approved" && t0.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let approved = lab.status_of("T_RETRY");
    util::signal(w.id(), libc::SIGTERM);
    let status = stopped_within_2_s(&mut w);
    assert_eq!(approved, "approved", "never asked again after: {failed}");
    assert_eq!(status.code(), Some(0));
    assert_eq!(lab.count_events("prompted", "T_RETRY"), 2);
    assert!(outboxes.join("T_RETRY").join("TASK.md").is_file());
}

/// `watch --once` whose approval cannot be written exits 1 (it tried and
/// failed), not 0: a script that polls with `--once` learns the decision was
/// lost; the task stays pending.
#[cfg(unix)]
#[test]
fn watch_once_whose_decision_was_not_recorded_exits_1() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_ONCE", &lab.main_head(), &[]));
    let outboxes = lab.local().join("rx_agent_outbox");
    std::fs::create_dir_all(&outboxes).unwrap();
    unwritable(&outboxes, true);
    let out = lab.watch_once("A\n");
    unwritable(&outboxes, false);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("T_ONCE") && err.contains("offered again"),
        "{err}"
    );
    assert_eq!(lab.status_of("T_ONCE"), "pending");
    let out = lab.watch_once("A\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(lab.status_of("T_ONCE"), "approved");
}
