//! A run that did not finish, finished (docs/protocol.md#interrupted-runs): the run
//! journal (`crate::store::journal`) names it; its result is written here as `FAIL`
//! with an `interrupted` record, the task completed and the journal closed with
//! `run_interrupted`.
use crate::result::{write_result_files, Check, RxResult, Status};
use crate::store::journal::{describe, unfinished, Interrupted, Unfinished};
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::{Context, Result};
use rxnode_interlock::TaskId;
use serde_json::Value;
use std::path::Path;

/// [`finish_interrupted`], each line said on stderr (for `run`, `watch`, `publish`).
/// Temporary files of rxnode processes that were killed are removed first
/// (`crate::store::leftovers`).
pub(crate) fn finish_and_say(paths: &Paths, branch: &str, found_by: &str) {
    crate::store::leftovers::clear_and_say(paths);
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
    let written = result_written(&dir);
    let mended = if written { mend_markdown(&dir)? } else { false };
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
        None if mended => format!(
            "{}; its result files had been written and stand ({} was not yet the \
             run's: it is rendered again from {})",
            describe(u),
            crate::result::RESULT_MD,
            crate::result::RESULT_JSON
        ),
        None => format!(
            "{}; its result files had been written and stand",
            describe(u)
        ),
    })
}

/// Whether the run's `RX_RESULT.json` in `dir` is a result of a run (it has a
/// start time), not the approval's `NOT RUN`: the JSON is placed after the
/// Markdown (`super::files`), so it is the sign that both were written.
pub(super) fn result_written(dir: &Path) -> bool {
    crate::store::fsutil::read(dir.join(crate::result::RESULT_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .is_some_and(|v| {
            v.pointer("/timeline/started_at")
                .is_some_and(|t| !t.is_null())
        })
}

/// A written `RX_RESULT.json` whose `RX_RESULT.md` does not carry its hash (a
/// run killed between the two files by a version that placed the JSON first:
/// the Markdown is still the approval's `NOT RUN`, and `publish` would refuse
/// the pair for good) gets its Markdown rendered again from the JSON, which
/// holds the whole result. Returns whether it did; a JSON that does not read
/// as a result is an error naming it.
fn mend_markdown(dir: &Path) -> Result<bool> {
    let json_path = dir.join(crate::result::RESULT_JSON);
    let md_path = dir.join(crate::result::RESULT_MD);
    let json = crate::store::fsutil::read(&json_path)
        .with_context(|| format!("cannot read {}", json_path.display()))?;
    let sha = rxnode_interlock::sha256_hex(&json);
    let md = match crate::store::fsutil::read_to_string(&md_path) {
        Ok(md) => Some(md),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Not UTF-8 (a torn or foreign file) is a Markdown to render again.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", md_path.display())),
    };
    if md.is_some_and(|md| md.contains(&format!(" json_sha256={sha} -->"))) {
        return Ok(false);
    }
    let r: RxResult = serde_json::from_slice(&json).with_context(|| {
        format!(
            "{} does not read as a result, and {} does not match it",
            json_path.display(),
            md_path.display()
        )
    })?;
    crate::store::fsutil::write_atomic(
        &md_path,
        super::markdown::render_markdown_for(&r, &json).as_bytes(),
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::test_util::{ran, task, COMMIT};
    use crate::result::{validate_result_files, RESULT_JSON, RESULT_MD};
    use rxnode_interlock::Approval;

    /// An outbox left by a run killed between its JSON and its Markdown (the
    /// JSON placed first): the JSON holds the whole result, the Markdown is the
    /// approval's `NOT RUN`. The Markdown is rendered again from the JSON, so
    /// the pair agrees and can be published; a pair that agrees is left alone.
    #[test]
    fn a_result_json_beside_the_not_run_markdown_gets_its_markdown_rendered_again() {
        let d = tempfile::TempDir::new().unwrap();
        let t = task(true);
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        write_result_files(d.path(), &RxResult::manual_skeleton(&t, COMMIT, Some(&a))).unwrap();
        let not_run_md = std::fs::read(d.path().join(RESULT_MD)).unwrap();
        write_result_files(d.path(), &ran(d.path())).unwrap();
        let whole_md = std::fs::read(d.path().join(RESULT_MD)).unwrap();
        std::fs::write(d.path().join(RESULT_MD), &not_run_md).unwrap();
        let json = d.path().join(RESULT_JSON);
        assert!(!validate_result_files(&json, d.path()).is_empty());
        assert!(result_written(d.path()));
        assert!(mend_markdown(d.path()).unwrap());
        assert_eq!(std::fs::read(d.path().join(RESULT_MD)).unwrap(), whole_md);
        let p = validate_result_files(&json, d.path());
        assert!(p.is_empty(), "{p:#?}");
        assert!(!mend_markdown(d.path()).unwrap());
        // A JSON that is not a result is named, and its Markdown left alone.
        std::fs::write(&json, br#"{"timeline": {"started_at": "x"}}"#).unwrap();
        let e = format!("{:#}", mend_markdown(d.path()).unwrap_err());
        assert!(e.contains(&json.display().to_string()), "{e}");
        assert_eq!(std::fs::read(d.path().join(RESULT_MD)).unwrap(), whole_md);
    }
}
