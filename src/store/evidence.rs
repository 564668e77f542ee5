//! The ledger and the outboxes as evidence: what they say a task went through
//! (approved as signed by this node, run, finished), read the same way by the
//! state's load check (`state::contradiction`), the replay behind
//! `rxnode state rebuild`, the outbox and `rxnode run`'s preconditions.
//!
//! The state file is a cache of decisions; the append-only ledger and the
//! outboxes are the evidence. Evidence only ever *restricts*: an approval is
//! recovered only from a ledger `approved` entry, while a finished run is
//! recovered from the ledger *or* an outbox.
use crate::store::key::{self, NodeKey};
use crate::store::ledger;
use crate::store::paths::Paths;
use anyhow::Result;
use rxnode_interlock::{Approval, TaskId};
use serde_json::Value;

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

/// Task folders in the outbox root (crash leftovers `.tmp-…` aside).
pub(crate) fn outbox_ids(paths: &Paths) -> Vec<String> {
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
    let b = crate::store::fsutil::read(&p).ok()?;
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
    for p in ledger::both_paths(paths) {
        let mut found = None;
        ledger::any_in(&p, |e| {
            let ev = e.event();
            let hit = e.task_id.as_deref() == Some(id)
                && (ev == "run_finished" || ev == "marked_completed");
            if hit {
                found = Some(format!(
                    "ledger `{ev}` at {}",
                    e.at.as_deref().unwrap_or("?")
                ));
            }
            hit
        })?;
        if found.is_some() {
            return Ok(found);
        }
    }
    let mut ledgers = vec![paths.ledger()];
    ledgers.extend(ledger::nonempty_mirror(paths)?);
    // Each ledger on its own: a closing line planted in one does not close a
    // `run_started` the other holds open.
    let mut every_last_run_ended_before_radio = true;
    for p in &ledgers {
        let mut open: Option<String> = None;
        let mut last: Option<String> = None;
        ledger::each_in(p, |e| {
            if e.task_id.as_deref() != Some(id) {
                return;
            }
            let ev = e.event();
            match ev {
                "run_started" => open = Some(e.at.clone().unwrap_or_else(|| "?".to_owned())),
                RUN_ENDED_BEFORE_RADIO => open = None,
                _ => return,
            }
            last = Some(ev.to_owned());
        })?;
        let last = last.as_deref();
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
pub(crate) fn history(paths: &Paths) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut n = 0usize;
    ledger::each_in(&ledger::evidence_path(paths)?, |e| {
        n += usize::from(e.task_id.as_deref().is_some() && DECISIONS.contains(&e.event()));
    })?;
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
pub(crate) fn line_approval(e: &ledger::Line) -> Option<Approval> {
    Some(Approval {
        task_id: TaskId::parse(e.task_id.as_deref()?).ok()?,
        task_sha256: e.task_sha256.as_deref().unwrap_or_default().to_owned(),
        commit: e.commit.as_deref().unwrap_or_default().to_owned(),
        at: e.at.as_deref().unwrap_or_default().to_owned(),
        mac: e.mac.clone(),
    })
}

/// The node key for checking records, or `None` in `watch --dry-run`'s area
/// (whose approvals never run and are not checked).
pub(crate) fn checking_key(paths: &Paths) -> Result<Option<Option<NodeKey>>> {
    if !paths.is_checkout_local() {
        return Ok(None);
    }
    // Outside a Git checkout there is no key: nothing verifies.
    if crate::store::paths::git_dir(&paths.repo).is_err() {
        return Ok(Some(None));
    }
    Ok(Some(key::load(paths)?))
}
