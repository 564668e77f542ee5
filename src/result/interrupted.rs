//! A run that did not finish, finished (docs/protocol.md#interrupted-runs): the run
//! journal (`crate::store::journal`) names it; its result is written here as `FAIL`
//! with an `interrupted` record, the task completed and the journal closed with
//! `run_interrupted`.
use crate::result::{write_result_files, Check, RxResult, Status};
use crate::store::journal::{describe, unfinished, Interrupted, Unfinished};
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::Result;
use rxnode_interlock::TaskId;
use serde_json::Value;

/// [`finish_interrupted`], each line said on stderr (for `run`, `watch`, `publish`).
pub(crate) fn finish_and_say(paths: &Paths, branch: &str, found_by: &str) {
    for line in finish_interrupted(paths, branch, found_by) {
        note!("rxnode: interrupted run: {line}");
    }
}

/// Find every unfinished run and finish its result as interrupted
/// (`found_by` names the command). Returns one line per run finished; a run
/// whose result cannot be rebuilt is reported and left for the next command.
pub(crate) fn finish_interrupted(paths: &Paths, branch: &str, found_by: &str) -> Vec<String> {
    let list = match unfinished(paths) {
        Ok(l) => l,
        Err(e) => return vec![format!("the run journal cannot be read: {e:#}")],
    };
    list.iter()
        .map(|u| match finish_one(paths, branch, found_by, u) {
            Ok(line) => line,
            Err(e) => format!("{}; its result could not be finished: {e:#}", describe(u)),
        })
        .collect()
}

fn finish_one(paths: &Paths, branch: &str, found_by: &str, u: &Unfinished) -> Result<String> {
    let id = TaskId::parse(&u.task_id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = paths.outbox(&id);
    // A run killed after its result files were written: they stand.
    let written = crate::store::fsutil::read(dir.join(crate::result::RESULT_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| {
            v.pointer("/timeline/started_at")
                .is_some_and(|t| !t.is_null())
        });
    let progress = crate::store::progress::last(paths).filter(|p| p.task_id == u.task_id);
    let found_at = crate::store::fsutil::now_iso();
    let record = Interrupted {
        started_at: u.started_at.clone(),
        keyed_at: u.keyed_at.clone(),
        last_progress: progress
            .as_ref()
            .map(|p| format!("step {}/{}: {}", p.step, p.steps, p.op)),
        guard_exit: u.guard_exit.clone(),
        found_at: found_at.clone(),
        found_by: found_by.to_owned(),
    };
    let status = if written {
        None
    } else {
        let bytes = crate::validate::read_task_file(&dir.join("TASK.md"))?;
        let task = crate::validate::check(&bytes, branch)
            .map_err(|i| anyhow::anyhow!("{}", crate::validate::issue_list(&i)))?;
        let st = state::load(paths)?;
        let commit = u.commit.clone().unwrap_or_default();
        let mut result = RxResult::manual_skeleton(&task, &commit, st.approvals.get(id.as_str()));
        let running = progress.as_ref().map_or(0, |p| p.step);
        for (i, c) in result.checks.iter_mut().enumerate() {
            let n = i + 1;
            *c = if n < running {
                Check::new(
                    c.name.clone(),
                    Status::Fail,
                    "INTERRUPTED: this step ran, but the run ended before its result was written",
                )
            } else if n == running || (running == 0 && n == 1) {
                Check::new(
                    c.name.clone(),
                    Status::Fail,
                    format!(
                        "INTERRUPTED: the run ended while this step ran ({})",
                        describe(u)
                    ),
                )
            } else {
                Check::new(
                    c.name.clone(),
                    Status::NotRun,
                    "interrupted before this step",
                )
            };
        }
        // The end is unknown: the last time the journal heard from the run.
        result.timeline.started_at = Some(u.started_at.clone());
        result.timeline.completed_at = Some(u.last_at.clone());
        // A clock stepped back during the run (the keying read before the
        // start): the start stands, the keying time stays in `interrupted`.
        if let Some(e) = result
            .timeline
            .order_after_clock_step(crate::result::Keep::Start)
        {
            result.errors.push(e);
        }
        result.errors.push(format!(
            "INTERRUPTED: {}; found by `rxnode {found_by}` at {found_at}",
            describe(u)
        ));
        result.interrupted = Some(record.clone());
        result.recompute_status();
        write_result_files(&dir, &result)?;
        Some(result.status)
    };
    state::update(paths, |s| {
        if let Some(r) = s.tasks.get_mut(id.as_str()) {
            r.status = TaskStatus::Completed;
        }
        s.last_completed_task_id = Some(id.to_string());
        Ok(())
    })?;
    let mut entry = Entry::new(Event::RunInterrupted {
        interrupted: record,
        result_rewritten: status.is_some(),
    })
    .task(id.as_str());
    if let Some(sha) = &u.sha {
        entry = entry.sha(sha);
    }
    if let Some(c) = &u.commit {
        entry = entry.commit(c);
    }
    ledger::append(paths, &entry)?;
    if progress.is_some() {
        crate::store::progress::clear(paths);
    }
    Ok(match status {
        Some(st) => format!(
            "{}; result finished as {} (INTERRUPTED) in {}",
            describe(u),
            st.as_str(),
            dir.display()
        ),
        None => format!(
            "{}; its result files had been written and stand",
            describe(u)
        ),
    })
}
