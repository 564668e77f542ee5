//! `rxnode state rebuild` in the store: a lost, emptied, corrupt or replaced state
//! is never a fresh start. `state::load` refuses while the evidence
//! ([`crate::store::evidence`]) disagrees; [`rebuild`] replays the ledger and the
//! outboxes into a new state ([`crate::store::replay`]), keeps the old files aside
//! under names that say what they were, and records it in the ledger.
use crate::exit::refused;
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use crate::store::replay::rebuild_from_evidence;
use crate::store::state::{self, contradiction, State, TaskStatus};
use anyhow::{Context, Result};
use std::collections::BTreeMap;

/// What `rxnode state rebuild` did.
pub(crate) enum Rebuild {
    /// The state agrees with the ledger and the outboxes: nothing rebuilt.
    Consistent,
    /// A new state was written from the evidence.
    Rebuilt {
        /// Tasks, approved, completed, deferred, published in the new state.
        counts: BTreeMap<&'static str, usize>,
        /// The files kept aside (the replaced state, corrupt copies).
        kept: Vec<String>,
        /// What the replay noticed (an outbox with no approval …).
        notes: Vec<String>,
    },
}

/// Rebuild the state from the evidence unless it already agrees with it.
///
/// Never beside a live watcher or run: the watcher lock is taken for the whole
/// rebuild (a watcher that holds it refuses this, naming it), and a live `run` is
/// refused the same way. What the ledger does not hold — the last poll — is
/// carried over from the replaced state when it can be read.
pub(crate) fn rebuild(paths: &Paths) -> Result<Rebuild> {
    crate::store::node::refuse_worktree_of_node(paths, "state rebuild")?;
    let _watcher = crate::store::lock::Lock::acquire(paths, "state rebuild").map_err(|e| {
        refused(format!(
            "state rebuild needs the node idle: {e:#} — fix: stop that watcher (Ctrl-C in its \
             terminal, or stop its service), then run `rxnode state rebuild` again"
        ))
    })?;
    if let Some(h) = crate::store::lock::run_holder(paths) {
        if crate::store::lock::holder_alive(&h) {
            return Err(refused(format!(
                "state rebuild needs the node idle: `rxnode run` is running ({h}) — fix: let it \
                 finish, then run `rxnode state rebuild` again"
            )));
        }
    }
    let _guard = state::lock_state(paths)?;
    let p = paths.state();
    let current = match crate::store::fsutil::read(&p) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if let Some(b) = &current {
        if let Ok(s) = serde_json::from_slice::<State>(b) {
            if contradiction(paths, &s)?.is_none() && state::corrupt_aside(paths).is_none() {
                return Ok(Rebuild::Consistent);
            }
        }
    }
    let mut notes = Vec::new();
    let mut rebuilt = rebuild_from_evidence(paths, &mut notes)?;
    // The last poll is not evidence (the ledger does not hold polls): keep what the
    // replaced state said, when it can be read, so `status` still shows it.
    if let Some(old) = current
        .as_deref()
        .and_then(|b| serde_json::from_slice::<State>(b).ok())
    {
        rebuilt.last_poll = old.last_poll;
    }
    if let Some(why) = contradiction(paths, &rebuilt)? {
        return Err(refused(format!(
            "the rebuilt state would still contradict the ledger ({why}); nothing changed"
        )));
    }
    let kept = keep_aside(paths, current.is_some())?;
    state::save(paths, &rebuilt)?;
    let counts: BTreeMap<&'static str, usize> = [
        ("tasks", rebuilt.tasks.len()),
        ("approved", rebuilt.approvals.len()),
        ("completed", rebuilt.ids_with(TaskStatus::Completed).len()),
        ("deferred", rebuilt.deferred_task_ids.len()),
        ("published", rebuilt.published.len()),
    ]
    .into_iter()
    .collect();
    ledger::append(
        paths,
        &Entry::new(Event::StateRebuilt {
            counts: counts.clone(),
            kept_aside: kept.clone(),
            notes: notes.clone(),
        }),
    )?;
    Ok(Rebuild::Rebuilt {
        counts,
        kept,
        notes,
    })
}

/// Move the replaced state (when there is one) and every corrupt copy aside
/// under names that say what they were; the names kept.
fn keep_aside(paths: &Paths, has_current: bool) -> Result<Vec<String>> {
    let p = paths.state();
    let stamp = now_iso().replace([':', '+'], "");
    let mut kept = Vec::new();
    if has_current {
        let aside = p.with_file_name(format!(
            "rx_agent_state.json.replaced-{stamp}-{}",
            std::process::id()
        ));
        std::fs::rename(&p, &aside)
            .with_context(|| format!("cannot move {} aside", p.display()))?;
        kept.push(aside.display().to_string());
    }
    while let Some(c) = state::corrupt_aside(paths) {
        let name = c
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let to = c.with_file_name(name.replacen(
            state::CORRUPT_PREFIX,
            "rx_agent_state.json.rebuilt-from-corrupt-",
            1,
        ));
        std::fs::rename(&c, &to).with_context(|| format!("cannot rename {}", c.display()))?;
        kept.push(to.display().to_string());
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::evidence::{finished_run, history, line_approval, RUN_ENDED_BEFORE_RADIO};
    use crate::store::key;
    use rxnode_interlock::{Approval, TaskId};
    use serde_json::json;
    use serde_json::Value;

    fn line(ev: &str, id: &str, sha: &str) -> String {
        format!(
            "{{\"at\":\"2026-12-01T00:00:00+00:00\",\"event\":\"{ev}\",\"task_id\":\"{id}\",\"task_sha256\":\"{sha}\",\"commit\":\"{}\"}}\n",
            "c".repeat(40)
        )
    }

    /// [`line`], signed with the checkout's node key as rxnode writes it.
    fn signed(paths: &Paths, ev: &str, id: &str, sha: &str) -> String {
        let mut v: Value = serde_json::from_str(&line(ev, id, sha)).unwrap();
        if ev == "approved" {
            let k = key::load_or_create(paths).unwrap();
            let a = line_approval(&ledger::Line::of(v.clone())).unwrap();
            v["mac"] = json!(rxnode_interlock::record_mac(k.bytes(), &a.fields()).unwrap());
        }
        format!("{v}\n")
    }

    #[test]
    fn replay_recovers_every_decision_and_only_restricts() {
        let d = tempfile::tempdir().unwrap();
        git2::Repository::init(d.path()).unwrap();
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(paths.outbox_root()).unwrap();
        let mut ledger = String::new();
        for (ev, id) in [
            ("detected", "A"),
            ("approved", "A"),
            ("run_started", "A"),
            ("run_finished", "A"),
            ("approved", "A"), // a later approval never brings a completed task back
            ("detected", "B"),
            ("deferred", "B"),
            ("detected", "C"),
            ("approved", "C"),
            ("detected", "D"),
            ("rejected", "D"),
            ("published", "A"),
            ("pushed", "A"),
        ] {
            ledger.push_str(&signed(&paths, ev, id, &"a".repeat(64)));
        }
        ledger.push_str("not json\n");
        std::fs::write(paths.ledger(), ledger).unwrap();
        // An outbox the ledger never approved, and one with a finished result.
        std::fs::create_dir_all(paths.outbox_root().join("E")).unwrap();
        std::fs::write(paths.outbox_root().join("E/TASK.meta.json"), "{}").unwrap();
        std::fs::create_dir_all(paths.outbox_root().join("C")).unwrap();
        std::fs::write(
            paths.outbox_root().join("C/RX_RESULT.json"),
            r#"{"status": "PARTIAL"}"#,
        )
        .unwrap();
        let mut notes = vec![];
        let s = rebuild_from_evidence(&paths, &mut notes).unwrap();
        assert_eq!(s.tasks["A"].status, TaskStatus::Completed);
        // The approval it ran under stays (publish needs it); run refuses it as completed.
        assert_eq!(s.approvals["A"].task_sha256, "a".repeat(64));
        assert_eq!(s.tasks["B"].status, TaskStatus::Deferred);
        assert!(s.deferred_task_ids.contains("B"));
        assert_eq!(
            s.tasks["C"].status,
            TaskStatus::Completed,
            "finished outbox"
        );
        assert!(
            s.approvals.contains_key("C"),
            "a finished run stays publishable"
        );
        assert_eq!(s.tasks["D"].status, TaskStatus::Rejected);
        assert!(!s.tasks.contains_key("E"));
        assert!(
            notes
                .iter()
                .any(|n| n.contains("outbox E has no `approved` entry")),
            "{notes:?}"
        );
        assert!(s.published["A"].pushed);
        assert_eq!(contradiction(&paths, &s).unwrap(), None);
        assert!(finished_run(&paths, "A", false).unwrap().is_some());
        assert!(finished_run(&paths, "C", false)
            .unwrap()
            .unwrap()
            .contains("PARTIAL"));
        assert_eq!(finished_run(&paths, "B", true).unwrap(), None);
        // A state with an approval the ledger never recorded contradicts it.
        let mut planted = s.clone();
        planted.approvals.insert(
            "Z".into(),
            Approval {
                task_id: TaskId::parse("Z").unwrap(),
                task_sha256: "b".repeat(64),
                commit: "c".repeat(40),
                at: "t".into(),
                mac: None,
            },
        );
        assert!(contradiction(&paths, &planted)
            .unwrap()
            .unwrap()
            .contains("approval for Z is not signed by this node"));
        // Signed by this node but never in the ledger (a lost ledger line).
        let k = key::load_or_create(&paths).unwrap();
        let z = planted.approvals.get_mut("Z").unwrap();
        z.mac = rxnode_interlock::record_mac(k.bytes(), &z.fields());
        assert!(contradiction(&paths, &planted)
            .unwrap()
            .unwrap()
            .contains("task Z that the ledger never recorded"));
        let mut rolled = s.clone();
        rolled.tasks.get_mut("A").unwrap().status = TaskStatus::Approved;
        assert!(contradiction(&paths, &rolled)
            .unwrap()
            .unwrap()
            .contains("task A finished"));
    }

    #[test]
    fn red_run_started_counts_as_ran_and_evidence_lists_history() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        assert!(history(&paths).unwrap().is_empty());
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(paths.ledger(), line("run_started", "R", &"a".repeat(64))).unwrap();
        assert_eq!(finished_run(&paths, "R", false).unwrap(), None);
        assert!(finished_run(&paths, "R", true)
            .unwrap()
            .unwrap()
            .contains("run_started"));
        assert_eq!(history(&paths).unwrap().len(), 1);
    }

    /// A `run_started` closed by `run_ended_before_radio` (the run reached no radio)
    /// no longer counts, and neither does its BLOCKED outbox result — but only when
    /// each ledger closes it: a closing line planted in the `.local/` ledger alone
    /// leaves the mirror's `run_started` open.
    #[test]
    fn a_run_ended_before_radio_reopens_only_when_each_ledger_says_so() {
        let d = tempfile::tempdir().unwrap();
        git2::Repository::init(d.path()).unwrap();
        let paths = Paths::new(d.path());
        let sha = "a".repeat(64);
        let closed = format!(
            "{}{}",
            line("run_started", "R", &sha),
            line(RUN_ENDED_BEFORE_RADIO, "R", &sha)
        );
        std::fs::create_dir_all(paths.outbox_root().join("R")).unwrap();
        std::fs::write(
            paths.outbox_root().join("R").join("RX_RESULT.json"),
            r#"{"status": "BLOCKED"}"#,
        )
        .unwrap();
        std::fs::write(paths.ledger(), &closed).unwrap();
        // No mirror yet: the `.local/` ledger alone decides.
        assert_eq!(finished_run(&paths, "R", true).unwrap(), None);
        let mirror = ledger::mirror_path(&paths).unwrap();
        std::fs::create_dir_all(mirror.parent().unwrap()).unwrap();
        std::fs::write(&mirror, line("run_started", "R", &sha)).unwrap();
        let why = finished_run(&paths, "R", true).unwrap().unwrap();
        assert!(why.contains("run_started"), "{why}");
        let why = finished_run(&paths, "R", false).unwrap().unwrap();
        assert!(why.contains("BLOCKED"), "{why}");
        std::fs::write(&mirror, &closed).unwrap();
        assert_eq!(finished_run(&paths, "R", true).unwrap(), None);
        // A finished run in either ledger counts, whatever else they say.
        std::fs::write(
            &mirror,
            format!("{closed}{}", line("run_finished", "R", &sha)),
        )
        .unwrap();
        assert!(finished_run(&paths, "R", false).unwrap().is_some());
    }
}
