//! The replay behind `rxnode state rebuild`: the ledger's decisions, then the
//! outboxes, into a new state. Evidence only ever *restricts* (see
//! [`crate::store::evidence`]).
use crate::store::evidence::{checking_key, finished_outbox, line_approval, outbox_ids};
use crate::store::fsutil::now_iso;
use crate::store::ledger;
use crate::store::paths::Paths;
use crate::store::state::{PublishRecord, State, TaskRecord, TaskStatus};
use anyhow::Result;
use rxnode_interlock::{Approval, TaskId};
use std::ops::ControlFlow;

/// Replay the ledger and the outboxes into a state.
pub(super) fn rebuild_from_evidence(paths: &Paths, notes: &mut Vec<String>) -> Result<State> {
    let mut s = State::default();
    let evidence = ledger::evidence_path(paths)?;
    let key = checking_key(paths)?;
    let mut unsigned = std::collections::BTreeSet::new();
    let mut last_seen = None;
    ledger::try_each_in(&evidence, |e| {
        let e = &e;
        const GO: ControlFlow<()> = ControlFlow::Continue(());
        let (Some(id), Some(ev)) = (e.task_id.as_deref(), e.event.as_deref()) else {
            return Ok(GO);
        };
        if TaskId::parse(id).is_err() {
            notes.push(format!(
                "ledger entry with an invalid task ID {id:?} skipped"
            ));
            return Ok(GO);
        }
        let d = Decision {
            id,
            sha: e.task_sha256.as_deref().unwrap_or_default().to_owned(),
            commit: e.commit.as_deref().unwrap_or_default().to_owned(),
            at: e.at.as_deref().unwrap_or_default().to_owned(),
            mac: e.mac.clone(),
        };
        // An `approved` line this node cannot verify is not an approval: the
        // task is only known (pending), and the operator is told to re-approve.
        if ev == "approved" {
            if let Some(k) = &key {
                let check = line_approval(e)
                    .ok_or_else(|| "not a readable approval".to_owned())
                    .and_then(|a| crate::store::key::check_approval(&a, k.as_ref()));
                if let Err(reason) = check {
                    if unsigned.insert(id.to_owned()) {
                        notes.push(crate::store::key::unsigned_message(id, &reason));
                    }
                    d.record(&mut s);
                    return Ok(GO);
                }
            }
        }
        if d.apply(&mut s, ev, e)? {
            last_seen = Some(id.to_owned());
        }
        Ok(GO)
    })?;
    s.last_seen_task_id = last_seen;
    apply_outboxes(paths, &mut s, notes);
    // A completed task keeps the approval it ran under, as in a state the watcher
    // and `run` wrote: `publish` needs it (the result it publishes must be of the
    // approved text), and `run` refuses a completed task whatever its approval.
    let done: Vec<String> = s.ids_with(TaskStatus::Completed);
    for id in &done {
        s.deferred_task_ids.remove(id);
    }
    add_titles(paths, &mut s);
    Ok(s)
}

/// One ledger entry about a task, as the replay reads it.
struct Decision<'a> {
    id: &'a str,
    sha: String,
    commit: String,
    at: String,
    mac: Option<String>,
}

impl Decision<'_> {
    /// The task's record, created `Pending` on its first entry.
    fn record<'s>(&self, s: &'s mut State) -> &'s mut TaskRecord {
        s.tasks
            .entry(self.id.to_owned())
            .or_insert_with(|| TaskRecord {
                status: TaskStatus::Pending,
                task_sha256: self.sha.clone(),
                commit: self.commit.clone(),
                risk_level: None,
                title: None,
                first_seen: self.at.clone(),
                reason: None,
            })
    }

    /// Move the task to `st` (Completed is final: no later entry brings a
    /// task back) and take the entry's text, unless it completes.
    fn set(&self, s: &mut State, st: TaskStatus) {
        let r = self.record(s);
        if r.status != TaskStatus::Completed {
            r.status = st;
        }
        if !self.sha.is_empty() && st != TaskStatus::Completed {
            r.task_sha256 = self.sha.clone();
            r.commit = self.commit.clone();
        }
    }

    /// Replay the entry `ev` (the whole entry is `e`) into `s`; whether it
    /// names the last task seen.
    fn apply(&self, s: &mut State, ev: &str, e: &ledger::Line) -> Result<bool> {
        let id = self.id;
        match ev {
            "detected" | "prompted" => {
                self.record(s);
                return Ok(true);
            }
            "approved" => self.approve(s)?,
            "deferred" => {
                self.set(s, TaskStatus::Deferred);
                s.deferred_task_ids.insert(id.to_owned());
            }
            "rejected" => {
                self.set(s, TaskStatus::Rejected);
                if let Some(r) = s.tasks.get_mut(id) {
                    r.reason = e.detail_str("reason").map(str::to_owned);
                }
            }
            "not_for_this_node" => {
                self.set(s, TaskStatus::NotForThisNode);
                if let Some(r) = s.tasks.get_mut(id) {
                    r.reason = e.detail_str("reason").map(str::to_owned);
                }
            }
            "run_finished" | "marked_completed" | crate::store::journal::RUN_INTERRUPTED => {
                self.set(s, TaskStatus::Completed);
                s.last_completed_task_id = Some(id.to_owned());
            }
            "published" => {
                s.published.insert(
                    id.to_owned(),
                    PublishRecord {
                        commit: self.commit.clone(),
                        at: self.at.clone(),
                        pushed: false,
                    },
                );
            }
            "pushed" => {
                if let Some(p) = s.published.get_mut(id) {
                    p.pushed = true;
                    if !self.commit.is_empty() {
                        p.commit = self.commit.clone();
                    }
                }
            }
            _ => {}
        }
        Ok(false)
    }

    /// An `approved` entry: the approval, unless the task already completed.
    fn approve(&self, s: &mut State) -> Result<()> {
        let id = self.id;
        self.set(s, TaskStatus::Approved);
        let completed = s
            .tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Completed);
        if !completed {
            s.deferred_task_ids.remove(id);
            let task_id = TaskId::parse(id).map_err(|e| anyhow::anyhow!("{e}"))?;
            s.approvals.insert(
                id.to_owned(),
                Approval {
                    task_id,
                    task_sha256: self.sha.clone(),
                    commit: self.commit.clone(),
                    at: self.at.clone(),
                    mac: self.mac.clone(),
                },
            );
        }
        Ok(())
    }
}

/// Outboxes: a finished one completes its task; one the ledger never
/// approved is listed and never becomes an approval.
fn apply_outboxes(paths: &Paths, s: &mut State, notes: &mut Vec<String>) {
    for id in outbox_ids(paths) {
        if TaskId::parse(&id).is_err() {
            notes.push(format!("outbox folder {id:?} is not a task ID; ignored"));
            continue;
        }
        if let Some(st) = finished_outbox(paths, &id) {
            let r = s.tasks.entry(id.clone()).or_insert_with(|| TaskRecord {
                status: TaskStatus::Completed,
                task_sha256: String::new(),
                commit: String::new(),
                risk_level: None,
                title: None,
                first_seen: now_iso(),
                reason: None,
            });
            if r.status != TaskStatus::Completed {
                notes.push(format!("task {id}: its outbox result is {st}: completed"));
                r.status = TaskStatus::Completed;
            }
        } else if !s.approvals.contains_key(&id)
            && s.tasks.get(&id).map(|r| r.status) != Some(TaskStatus::Completed)
        {
            notes.push(format!(
                "outbox {id} has no `approved` entry in the ledger: not approved (approve it again with `rxnode review {id}` after checking it)"
            ));
        }
    }
}

/// Titles and risk from the approved texts, where the outbox has them.
fn add_titles(paths: &Paths, s: &mut State) {
    for (id, r) in s.tasks.iter_mut() {
        if let Ok(b) = crate::store::fsutil::read(paths.outbox_root().join(id).join("TASK.md")) {
            if let Ok(t) = rxnode_interlock::validate_task_bytes(
                &b,
                &rxnode_interlock::ValidateOptions {
                    watched_branch: rxnode_interlock::lenient_field(&b, "SOURCE_BRANCH")
                        .unwrap_or_default(),
                },
            ) {
                r.title = Some(t.header().task_title.clone());
                r.risk_level = Some(t.risk().as_str().to_owned());
            }
        }
    }
}
