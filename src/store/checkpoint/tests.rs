//! The checkpoint's answer is the whole ledger's, whatever happens to the ledger or to it.
use super::*;
use crate::store::evidence::checking_key;
use crate::store::ledger::{self, Entry, Event};
use crate::store::state::{contradiction, State, TaskRecord, TaskStatus};
use rxnode_interlock::{Approval, TaskId};
use std::io::Write;

fn checkout() -> (tempfile::TempDir, Paths) {
    let d = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(d.path()).unwrap();
    crate::git::ops::ensure_local_excluded(&repo).unwrap();
    let paths = Paths::new(d.path());
    std::fs::create_dir_all(&paths.local).unwrap();
    key::load_or_create(&paths).unwrap();
    (d, paths)
}

fn approval(paths: &Paths, id: &str) -> Approval {
    let k = key::load(paths).unwrap().unwrap();
    let mut a = Approval {
        task_id: TaskId::parse(id).unwrap(),
        task_sha256: "a".repeat(64),
        commit: "c".repeat(40),
        at: "2026-12-01T00:00:00+00:00".into(),
        mac: None,
    };
    a.mac = rxnode_interlock::record_mac(k.bytes(), &a.fields());
    a
}

fn approve(paths: &Paths, id: &str) {
    let a = approval(paths, id);
    let e = Entry::new(Event::Approved {
        outbox: String::new(),
        signature: serde_json::Value::Null,
    })
    .task(id)
    .sha(&a.task_sha256)
    .commit(&a.commit)
    .approval(&a);
    ledger::append(paths, &e).unwrap();
}

fn event(paths: &Paths, ev: Event, id: &str) {
    ledger::append(paths, &Entry::new(ev).task(id)).unwrap();
}

fn finished() -> Event {
    Event::RunFinished(ledger::RunEnd {
        interrupted: false,
        status: "PASS".to_owned(),
    })
}

/// The answer of the whole ledger, as the load check computed it before
/// there was a checkpoint: every line of the ledger as evidence, each
/// `approved` line's MAC checked.
fn whole(paths: &Paths) -> Said {
    let k = checking_key(paths).unwrap();
    let mut said = Said::default();
    for e in ledger::read_evidence(paths).unwrap() {
        said.entries += 1;
        let Some(id) = e.task_id.as_deref() else {
            continue;
        };
        match e.event() {
            "approved" => {
                let signed = match &k {
                    None => true,
                    Some(k) => line_approval(&e)
                        .is_some_and(|a| key::check_approval(&a, k.as_ref()).is_ok()),
                };
                if signed {
                    said.approved.insert(id.to_owned());
                }
            }
            "run_finished" | "marked_completed" | "run_interrupted" => {
                said.finished.insert(id.to_owned());
            }
            _ => {}
        }
    }
    said
}

/// The run journal of the whole `.local/` ledger, as it was read before the
/// checkpoint kept it: every line, in order.
fn whole_journal(paths: &Paths) -> Vec<crate::store::journal::Unfinished> {
    let mut open = Vec::new();
    for e in ledger::read_all(paths).unwrap() {
        crate::store::journal::apply(&mut open, &e);
    }
    open
}

/// The checkpoint's answer, checked against the whole ledger's (the run
/// journal included).
fn same(paths: &Paths, what: &str) -> Said {
    let k = checking_key(paths).unwrap();
    let said = evidence(paths, &k).unwrap();
    let w = whole(paths);
    assert_eq!(said.approved, w.approved, "{what}");
    assert_eq!(said.finished, w.finished, "{what}");
    let local = read(paths, &k).unwrap().local.open_runs;
    assert_eq!(local, whole_journal(paths), "{what}: run journal");
    assert_eq!(
        crate::store::journal::unfinished(paths).unwrap(),
        local,
        "{what}: journal::unfinished"
    );
    said
}

fn files(paths: &Paths) -> Vec<PathBuf> {
    vec![paths.ledger(), ledger::mirror_path(paths).unwrap()]
}

fn stored(paths: &Paths) -> Checkpoint {
    let k = key::load(paths).unwrap().unwrap();
    load(&checkpoint_path(paths).unwrap(), &k).unwrap()
}

/// Overwrite `old` by `new` (same length) in place: same file, same size.
fn edit_in_place(p: &Path, old: &str, new: &str) {
    assert_eq!(old.len(), new.len());
    let bytes = std::fs::read(p).unwrap();
    let at = bytes
        .windows(old.len())
        .position(|w| w == old.as_bytes())
        .unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    f.seek(SeekFrom::Start(at as u64)).unwrap();
    f.write_all(new.as_bytes()).unwrap();
}

fn state_with(paths: &Paths, approved: &[&str]) -> State {
    let mut s = State::default();
    for id in approved {
        s.approvals.insert((*id).to_owned(), approval(paths, id));
        s.tasks.insert(
            (*id).to_owned(),
            TaskRecord {
                status: TaskStatus::Approved,
                task_sha256: "a".repeat(64),
                commit: "c".repeat(40),
                risk_level: None,
                title: None,
                first_seen: "t".into(),
                reason: None,
            },
        );
    }
    s
}

/// Whatever happens to either ledger, the answer through the checkpoint is
/// the whole ledger's: appends, a torn line, a line that is not JSON, an
/// unsigned approval, a truncated `.local/` ledger (the mirror answers),
/// a replaced file, a lost mirror.
#[test]
fn the_checkpoint_answers_as_the_whole_ledger_after_every_change() {
    let (_d, paths) = checkout();
    same(&paths, "no ledger yet");
    approve(&paths, "A");
    same(&paths, "one approval");
    for i in 0..50 {
        event(&paths, Event::Detected, &format!("T{i}"));
    }
    event(&paths, finished(), "A");
    let s = same(&paths, "finished");
    assert!(s.approved.contains("A") && s.finished.contains("A"));
    assert!(stored(&paths).marks.iter().all(|m| m.len > 0));
    // A line that is not JSON, then a torn one (no line feed).
    for p in files(&paths) {
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"not json\n{\"at\":\"x\",\"event\":\"run_finished\",\"task_id\":\"B\"}")
            .unwrap();
    }
    let s = same(&paths, "torn last line");
    assert!(
        s.finished.contains("B"),
        "an unterminated whole line counts"
    );
    event(&paths, Event::MarkedCompleted, "C");
    let s = same(&paths, "after the torn line");
    assert!(s.finished.contains("C") && s.finished.contains("B"));
    // An approval this node did not sign.
    let mut forged = approval(&paths, "D");
    forged.mac = Some("0".repeat(64));
    ledger::append(
        &paths,
        &Entry::new(Event::Approved {
            outbox: String::new(),
            signature: serde_json::Value::Null,
        })
        .task("D")
        .approval(&forged),
    )
    .unwrap();
    assert!(!same(&paths, "unsigned approval").approved.contains("D"));
    // The `.local/` ledger truncated: the mirror holds more and answers.
    let local = std::fs::read(paths.ledger()).unwrap();
    std::fs::write(paths.ledger(), &local[..local.len() / 3]).unwrap();
    same(&paths, "truncated local");
    // Replaced by other content, then the mirror lost.
    std::fs::write(paths.ledger(), b"").unwrap();
    ledger::append(
        &paths,
        &Entry::new(Event::RunInterrupted {
            interrupted: crate::store::journal::Interrupted {
                started_at: "t".into(),
                keyed_at: None,
                last_progress: None,
                guard_exit: None,
                found_at: "t".into(),
                found_by: "status".into(),
            },
            result_rewritten: false,
        })
        .task("E"),
    )
    .unwrap();
    same(&paths, "replaced local");
    std::fs::remove_file(ledger::mirror_path(&paths).unwrap()).unwrap();
    let s = same(&paths, "mirror lost");
    assert_eq!(s.finished.iter().collect::<Vec<_>>(), ["E"]);
}

/// Once the ledger's times are recorded, an unchanged ledger is not read
/// at all: the idle poll's cost does not grow with the history.
#[test]
fn an_unchanged_ledger_is_not_read_again() {
    let (_d, paths) = checkout();
    approve(&paths, "A");
    for i in 0..200 {
        event(&paths, Event::Detected, &format!("T{i}"));
    }
    same(&paths, "fresh");
    // Written a moment ago: its times are not recorded yet.
    assert!(stored(&paths).marks.iter().all(|m| m.times.is_none()));
    std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
    same(&paths, "settled");
    let c = stored(&paths);
    let k = checking_key(&paths).unwrap();
    for m in &c.marks {
        assert!(m.times.is_some(), "{}", m.path.display());
        let again = scan(&m.path, Some(m), &k).unwrap();
        assert_eq!(again.read, 0, "{}", m.path.display());
        assert_eq!(&again.mark, m);
    }
    // One line more: only that line is new, and the answer is the whole one.
    event(&paths, finished(), "A");
    let s = same(&paths, "appended");
    assert!(s.finished.contains("A"));
}

/// An earlier line edited in place after the checkpoint recorded the
/// ledger's times (same file, same size) is seen: the approval it held no
/// longer verifies, and the state holding that approval is refused.
#[test]
fn an_earlier_line_edited_after_a_settled_checkpoint_is_still_caught() {
    let (_d, paths) = checkout();
    approve(&paths, "A");
    for i in 0..20 {
        event(&paths, Event::Detected, &format!("T{i}"));
    }
    std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
    let s = state_with(&paths, &["A"]);
    assert_eq!(contradiction(&paths, &s).unwrap(), None);
    assert!(stored(&paths).marks.iter().all(|m| m.times.is_some()));
    let mac = approval(&paths, "A").mac.unwrap();
    let flipped = format!(
        "{}{}",
        if mac.starts_with('0') { "1" } else { "0" },
        &mac[1..]
    );
    for p in files(&paths) {
        edit_in_place(&p, &mac, &flipped);
    }
    same(&paths, "edited MAC");
    let why = contradiction(&paths, &s).unwrap().unwrap();
    assert!(
        why.contains("approval of task A that the ledger never recorded"),
        "{why}"
    );
}

/// The same edit in the same clock tick as the write the checkpoint saw:
/// the times were not recorded yet, the prefix hash sees it.
#[test]
fn an_edit_right_after_a_write_is_caught_by_the_prefix_hash() {
    let (_d, paths) = checkout();
    approve(&paths, "A");
    event(&paths, finished(), "A");
    same(&paths, "fresh");
    for p in files(&paths) {
        edit_in_place(&p, "run_finished", "run_finishex");
    }
    assert!(same(&paths, "edited at once").finished.is_empty());
}

/// A ledger truncated after a checkpoint (both copies: no longer copy
/// answers) is read again from its first line: the run it lost is lost to
/// the answer too, exactly as the whole ledger says; truncated and grown
/// back to the same size with other lines, the same.
#[test]
fn a_truncated_ledger_is_read_again() {
    let (_d, paths) = checkout();
    approve(&paths, "A");
    event(&paths, finished(), "A");
    let before_finish: Vec<Vec<u8>> = files(&paths)
        .iter()
        .map(|p| {
            let b = std::fs::read(p).unwrap();
            let cut = b[..b.len() - 1].iter().rposition(|&c| c == b'\n').unwrap() + 1;
            b[..cut].to_vec()
        })
        .collect();
    std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
    assert!(same(&paths, "finished").finished.contains("A"));
    assert!(stored(&paths).marks.iter().all(|m| m.times.is_some()));
    for (p, b) in files(&paths).iter().zip(&before_finish) {
        std::fs::write(p, b).unwrap();
    }
    assert!(same(&paths, "truncated").finished.is_empty());
    let s = state_with(&paths, &["A"]);
    assert_eq!(contradiction(&paths, &s).unwrap(), None);
    // Grown back to the old size with a line that finishes another task.
    event(&paths, finished(), "B");
    let s = same(&paths, "grown back");
    assert_eq!(s.finished.iter().collect::<Vec<_>>(), ["B"]);
}

/// A checkpoint this node did not seal — its content edited (a finished
/// run removed), sealed by another checkout's key, not sealed at all, or
/// another sealed file in its place — is never used: the whole ledger
/// answers, and the rolled-back state is refused.
#[test]
fn a_forged_checkpoint_is_refused() {
    let (_d, paths) = checkout();
    approve(&paths, "A");
    event(&paths, finished(), "A");
    std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
    same(&paths, "settled");
    let cp = checkpoint_path(&paths).unwrap();
    let good = std::fs::read_to_string(&cp).unwrap();
    assert!(good.contains("\"finished\":[\"A\"]"), "{good}");
    let rolled = state_with(&paths, &["A"]);
    let refused = |what: &str| {
        let why = contradiction(&paths, &rolled).unwrap().unwrap_or_default();
        assert!(why.contains("task A finished"), "{what}: {why}");
    };
    // Edited: the finished run removed, the MAC kept.
    std::fs::write(&cp, good.replace("\"finished\":[\"A\"]", "\"finished\":[]")).unwrap();
    refused("edited checkpoint");
    // Sealed by another checkout's key.
    let (_d2, other) = checkout();
    let k2 = key::load(&other).unwrap().unwrap();
    let mut c = stored(&paths);
    for m in &mut c.marks {
        m.said.finished.clear();
    }
    save(&cp, &k2, &c).unwrap();
    refused("another checkout's key");
    // Not sealed: the bare content.
    std::fs::write(&cp, serde_json::to_string(&c).unwrap()).unwrap();
    refused("unsealed");
    // Sealed by this key for another role (a node file's MAC).
    let k = key::load(&paths).unwrap().unwrap();
    let body = serde_json::to_string(&c).unwrap();
    std::fs::write(
        &cp,
        crate::store::sealed::seal(&k, "node-name", &body).unwrap(),
    )
    .unwrap();
    refused("another kind");
    // And the node writes a good one again.
    assert!(stored(&paths)
        .marks
        .iter()
        .all(|m| m.said.finished.contains("A")));
}

/// The run journal through the checkpoint is the whole ledger's after every
/// change: runs started, keyed, their guard's exit, closed, started again; an
/// unterminated last line; the recorded prefix settled; an edit in place that
/// closes a run, one that reopens it; a replaced ledger.
#[test]
fn the_run_journal_through_the_checkpoint_is_the_whole_ledgers() {
    let (_d, paths) = checkout();
    let ids = |paths: &Paths| -> Vec<String> {
        crate::store::journal::unfinished(paths)
            .unwrap()
            .into_iter()
            .map(|u| u.task_id)
            .collect()
    };
    same(&paths, "no ledger yet");
    event(&paths, Event::RunStarted { steps: 2 }, "A");
    event(&paths, Event::RunStarted { steps: 1 }, "B");
    event(
        &paths,
        Event::TxKeyed {
            keyed_at: "2026-12-01T00:00:01+00:00".into(),
            step: 1,
        },
        "A",
    );
    same(&paths, "two open, one keyed");
    assert_eq!(ids(&paths), ["A", "B"]);
    event(&paths, finished(), "B");
    event(
        &paths,
        Event::TxGuardExit {
            exit: "exit status 0".into(),
            step: 1,
        },
        "A",
    );
    same(&paths, "one closed");
    let open = crate::store::journal::unfinished(&paths).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(
        open[0].keyed_at.as_deref(),
        Some("2026-12-01T00:00:01+00:00")
    );
    assert_eq!(open[0].guard_exit.as_deref(), Some("exit status 0"));
    // Settled: read from the recorded times, then one line more.
    std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
    same(&paths, "settled");
    assert!(stored(&paths).marks.iter().all(|m| m.times.is_some()));
    event(&paths, Event::RunStarted { steps: 3 }, "B");
    same(&paths, "started again after settling");
    assert_eq!(ids(&paths), ["A", "B"]);
    // An unterminated last line that closes A counts, and is not recorded.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(paths.ledger())
        .unwrap();
    f.write_all(b"{\"at\":\"x\",\"event\":\"run_finished\",\"task_id\":\"A\"}")
        .unwrap();
    drop(f);
    same(&paths, "torn last line");
    assert_eq!(ids(&paths), ["B"]);
    assert!(stored(&paths)
        .marks
        .iter()
        .any(|m| m.said.open_runs.iter().any(|u| u.task_id == "A")));
    ledger::append(&paths, &Entry::new(Event::Detected)).unwrap();
    // An edit in place of a recorded line: B's restart no longer is one.
    let bytes = std::fs::read(paths.ledger()).unwrap();
    let restart = b"\"run_started\",\"task_id\":\"B\"";
    let at = bytes
        .windows(restart.len())
        .rposition(|w| w == restart)
        .unwrap();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(paths.ledger())
        .unwrap();
    f.seek(SeekFrom::Start(at as u64 + 11)).unwrap();
    f.write_all(b"x").unwrap();
    drop(f);
    same(&paths, "restart edited away");
    assert!(ids(&paths).is_empty());
    // Replaced by a ledger with one run open.
    std::fs::write(paths.ledger(), b"").unwrap();
    event(&paths, Event::RunStarted { steps: 1 }, "C");
    same(&paths, "replaced");
    assert_eq!(ids(&paths), ["C"]);
}
