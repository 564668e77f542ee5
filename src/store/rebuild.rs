//! The ledger and the outboxes as evidence, and `rxnode state rebuild`.
//!
//! The state file is a cache of decisions; the append-only ledger and the
//! outboxes are the evidence. A lost, emptied, corrupt or replaced state is
//! never a fresh start: `state::load` refuses while the evidence disagrees, and
//! `rxnode state rebuild` replays the ledger into a new state. Evidence only
//! ever *restricts*: an approval is recovered only from a ledger `approved`
//! entry, while a finished run is recovered from the ledger *or* an outbox.
use crate::context::Ctx;
use crate::exit::{refused, Outcome};
use crate::store::fsutil::now_iso;
use crate::store::key::{self, NodeKey};
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use crate::store::replay::rebuild_from_evidence;
use crate::store::state::{self, State, TaskStatus};
use anyhow::{Context, Result};
use rxnode_interlock::{Approval, TaskId};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Ledger events that record a decision about a task (not polls, not captures).
const DECISIONS: &[&str] = &[
    "detected",
    "approved",
    "deferred",
    "rejected",
    "authorized",
    "run_started",
    "run_finished",
    "marked_completed",
    "published",
    "pushed",
];

/// A string field of a ledger entry.
pub(super) fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// Task folders in the outbox root (crash leftovers `.tmp-…` aside).
pub(super) fn outbox_ids(paths: &Paths) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(paths.outbox_root())
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The status in an outbox's `RX_RESULT.json`, when it is anything but
/// `NOT RUN` (a run wrote it, or someone edited it: either way not fresh).
pub(crate) fn finished_outbox(paths: &Paths, id: &str) -> Option<String> {
    let p = paths.outbox_root().join(id).join("RX_RESULT.json");
    let b = std::fs::read(&p).ok()?;
    let st = match serde_json::from_slice::<Value>(&b) {
        Ok(v) => v
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unreadable")
            .to_owned(),
        Err(_) => "unreadable".to_owned(),
    };
    (st != "NOT RUN").then_some(st)
}

/// The ledger event of a run that ended before any radio stream was opened (every
/// step BLOCKED or NOT RUN): the task stays approved and may be run again.
pub(crate) const RUN_ENDED_BEFORE_RADIO: &str = "run_ended_before_radio";

/// The ledger entries that show task `id` ran (or may have run): `run_finished`
/// and `marked_completed` always; for a RED task also `run_started` (it may have
/// keyed the transmitter before a crash) unless the same ledger closes it with
/// [`RUN_ENDED_BEFORE_RADIO`], in the `.local/` ledger or its mirror; else a result
/// in the outbox — except the BLOCKED / NOT RUN result of a run that each ledger
/// says ended before any radio stream was opened. The first one found, described.
pub(crate) fn finished_run(paths: &Paths, id: &str, red: bool) -> Result<Option<String>> {
    for e in ledger::read_both(paths)? {
        let ev = str_of(&e, "event").unwrap_or_default();
        if str_of(&e, "task_id") == Some(id) && (ev == "run_finished" || ev == "marked_completed") {
            return Ok(Some(format!(
                "ledger `{ev}` at {}",
                str_of(&e, "at").unwrap_or("?")
            )));
        }
    }
    let mut ledgers = vec![ledger::read_all(paths)?];
    ledgers.extend(ledger::read_mirror(paths)?);
    // Each ledger on its own: a closing line planted in one does not close a
    // `run_started` the other holds open.
    let mut every_last_run_ended_before_radio = true;
    for entries in &ledgers {
        let mut open: Option<&str> = None;
        let mut last: Option<&str> = None;
        for e in entries {
            if str_of(e, "task_id") != Some(id) {
                continue;
            }
            let ev = str_of(e, "event").unwrap_or_default();
            let at = str_of(e, "at").unwrap_or("?");
            match ev {
                "run_started" => open = Some(at),
                RUN_ENDED_BEFORE_RADIO => open = None,
                _ => continue,
            }
            last = Some(ev);
        }
        if let (true, Some(at)) = (red, open) {
            return Ok(Some(format!("ledger `run_started` at {at}")));
        }
        every_last_run_ended_before_radio &= last == Some(RUN_ENDED_BEFORE_RADIO);
    }
    Ok(finished_outbox(paths, id)
        .filter(|s| !(every_last_run_ended_before_radio && s == "BLOCKED"))
        .map(|s| format!("its outbox result is {s}")))
}

/// What shows this node has history, for a missing state file (empty = none).
pub(crate) fn evidence(paths: &Paths) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let n = ledger::read_evidence(paths)?
        .iter()
        .filter(|e| {
            str_of(e, "task_id").is_some()
                && DECISIONS.contains(&str_of(e, "event").unwrap_or_default())
        })
        .count();
    if n > 0 {
        out.push(format!(
            "{n} task decision(s) in {}",
            paths.ledger().display()
        ));
    }
    // Outboxes rxnode wrote (an approval's TASK.meta.json, or a result).
    let ob: Vec<String> = outbox_ids(paths)
        .into_iter()
        .filter(|id| {
            let d = paths.outbox_root().join(id);
            d.join("TASK.meta.json").exists() || d.join("RX_RESULT.json").exists()
        })
        .collect();
    if !ob.is_empty() {
        out.push(format!(
            "{} outbox(es) in {}",
            ob.len(),
            paths.outbox_root().display()
        ));
    }
    Ok(out)
}

/// The approval an `approved` ledger line records (its time and MAC as
/// written), when the line names a valid task ID.
pub(crate) fn line_approval(e: &Value) -> Option<Approval> {
    Some(Approval {
        task_id: TaskId::parse(str_of(e, "task_id")?).ok()?,
        task_sha256: str_of(e, "task_sha256").unwrap_or_default().to_owned(),
        commit: str_of(e, "commit").unwrap_or_default().to_owned(),
        at: str_of(e, "at").unwrap_or_default().to_owned(),
        mac: str_of(e, "mac").map(str::to_owned),
    })
}

/// The node key for checking records, or `None` in `watch --dry-run`'s area
/// (whose approvals never run and are not checked).
pub(crate) fn checking_key(paths: &Paths) -> Result<Option<Option<NodeKey>>> {
    if !paths.is_checkout_local() {
        return Ok(None);
    }
    // Outside a Git checkout there is no key: nothing verifies.
    if git2::Repository::open(&paths.repo).is_err() {
        return Ok(Some(None));
    }
    Ok(Some(key::load(paths)?))
}

/// The first approval in the state this node cannot verify as its own, or a
/// task the state calls approved with no approval at all: the message, naming
/// the task and the fix.
pub(crate) fn unsigned_approval(paths: &Paths, s: &State) -> Result<Option<String>> {
    let Some(k) = checking_key(paths)? else {
        return Ok(None);
    };
    for (id, a) in &s.approvals {
        if let Err(reason) = key::check_approval(a, k.as_ref()) {
            return Ok(Some(key::unsigned_message(id, &reason)));
        }
        if a.task_id.as_str() != id {
            return Ok(Some(key::unsigned_message(
                id,
                &format!(
                    "it is filed under {id} but is {}'s approval: a planted record",
                    a.task_id
                ),
            )));
        }
    }
    if let Some(id) = s
        .ids_with(TaskStatus::Approved)
        .into_iter()
        .find(|id| !s.approvals.contains_key(id))
    {
        return Ok(Some(key::unsigned_message(
            &id,
            "the state calls it approved but holds no approval record: a planted or edited state",
        )));
    }
    Ok(None)
}

/// Why a parsed state contradicts the ledger, if it does: an approval this
/// node did not sign ([`unsigned_approval`]), an approval with no signed ledger
/// `approved` entry for that task (planted), or a task the ledger saw finish
/// that the state does not call completed (rolled back).
pub(crate) fn contradiction(paths: &Paths, s: &State) -> Result<Option<String>> {
    if let Some(why) = unsigned_approval(paths, s)? {
        return Ok(Some(why));
    }
    let k = checking_key(paths)?;
    let entries = ledger::read_evidence(paths)?;
    let mut approved = BTreeSet::new();
    let mut finished = BTreeSet::new();
    for e in &entries {
        let Some(id) = str_of(e, "task_id") else {
            continue;
        };
        match str_of(e, "event").unwrap_or_default() {
            "approved" => {
                let signed = match &k {
                    None => true,
                    Some(k) => line_approval(e)
                        .is_some_and(|a| key::check_approval(&a, k.as_ref()).is_ok()),
                };
                if signed {
                    approved.insert(id.to_owned());
                }
            }
            "run_finished" | "marked_completed" => {
                finished.insert(id.to_owned());
            }
            _ => {}
        }
    }
    if let Some(id) = s.approvals.keys().find(|id| !approved.contains(*id)) {
        return Ok(Some(format!(
            "it holds an approval of task {id} that the ledger never recorded (as signed by this node)"
        )));
    }
    for id in &finished {
        let done = s
            .tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Completed);
        if !done {
            return Ok(Some(format!(
                "the ledger shows task {id} finished but the state does not call it completed"
            )));
        }
    }
    Ok(None)
}

/// `rxnode state rebuild`.
pub fn cmd_rebuild(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    let _guard = state::lock_state(&paths)?;
    let p = paths.state();
    let current = match std::fs::read(&p) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if let Some(b) = &current {
        if let Ok(s) = serde_json::from_slice::<State>(b) {
            if contradiction(&paths, &s)?.is_none() && state::corrupt_aside(&paths).is_none() {
                if ctx.json {
                    println!("{}", json!({"rebuilt": false, "reason": "consistent"}));
                } else {
                    println!(
                        "{} agrees with the ledger and the outboxes; nothing rebuilt",
                        p.display()
                    );
                }
                return Ok(Outcome::Done);
            }
        }
    }
    let mut notes = Vec::new();
    let rebuilt = rebuild_from_evidence(&paths, &mut notes)?;
    if let Some(why) = contradiction(&paths, &rebuilt)? {
        return Err(refused(format!(
            "the rebuilt state would still contradict the ledger ({why}); nothing changed"
        )));
    }
    let kept = keep_aside(&paths, current.is_some())?;
    state::save(&paths, &rebuilt)?;
    let counts: BTreeMap<&str, usize> = [
        ("tasks", rebuilt.tasks.len()),
        ("approved", rebuilt.approvals.len()),
        ("completed", rebuilt.ids_with(TaskStatus::Completed).len()),
        ("deferred", rebuilt.deferred_task_ids.len()),
        ("published", rebuilt.published.len()),
    ]
    .into_iter()
    .collect();
    ledger::append(
        &paths,
        &Entry::new("state_rebuilt")
            .detail(json!({"counts": counts, "kept_aside": kept, "notes": notes})),
    )?;
    let rebuilt = Rebuilt {
        counts,
        kept,
        notes,
    };
    rebuilt.report(ctx, &paths);
    Ok(Outcome::Done)
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

/// What a rebuild did, as printed.
struct Rebuilt<'a> {
    counts: BTreeMap<&'a str, usize>,
    kept: Vec<String>,
    notes: Vec<String>,
}

impl Rebuilt<'_> {
    fn report(&self, ctx: &Ctx, paths: &Paths) {
        let Rebuilt {
            counts,
            kept,
            notes,
        } = self;
        if ctx.json {
            println!(
                "{}",
                json!({"rebuilt": true, "counts": counts, "kept_aside": kept, "notes": notes})
            );
            return;
        }
        println!(
            "rebuilt {} from the ledger and the outboxes: {} task(s), {} approved, {} completed, {} deferred, {} published",
            paths.state().display(),
            counts["tasks"],
            counts["approved"],
            counts["completed"],
            counts["deferred"],
            counts["published"]
        );
        for k in kept {
            println!("  kept aside: {k}");
        }
        for n in notes {
            println!("  note: {n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let a = line_approval(&v).unwrap();
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
        assert!(evidence(&paths).unwrap().is_empty());
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(paths.ledger(), line("run_started", "R", &"a".repeat(64))).unwrap();
        assert_eq!(finished_run(&paths, "R", false).unwrap(), None);
        assert!(finished_run(&paths, "R", true)
            .unwrap()
            .unwrap()
            .contains("run_started"));
        assert_eq!(evidence(&paths).unwrap().len(), 1);
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
