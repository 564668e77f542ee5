//! The run journal: a run that started and did not finish (docs/protocol.md#interrupted-runs).
//!
//! Before a radio is touched, `rxnode run` writes `run_started` to the ledger;
//! while a tone is keyed it adds `tx_keyed`, and when the TX guard process
//! ends, `tx_guard_exit`; `run_finished` (or `run_ended_before_radio`) closes
//! the run. A `run_started` that nothing closes, with no live `rxnode run`
//! holding the run lock, is an interrupted run (killed, crashed, power loss).
//! The next `status`, `doctor`, `run`, `watch` or `publish` finishes its result
//! as `FAIL` with an `interrupted` record — what the journal knows: when it
//! started, when it keyed, its last progress, the guard's exit — never the
//! "not started" placeholder and never `PASS`; the task is completed (a re-run
//! needs a new `TASK_ID`) and `run_interrupted` closes the journal.
use crate::result::{write_result_files, Check, RxResult, Status};
use crate::store::evidence::RUN_ENDED_BEFORE_RADIO;
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::Result;
use rxnode_interlock::TaskId;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The ledger event that closes an interrupted run.
pub(crate) const RUN_INTERRUPTED: &str = "run_interrupted";
/// The ledger event written when the TX guard says the stream's activation was asked.
pub(crate) const TX_KEYED: &str = "tx_keyed";
/// The ledger event written when the TX guard process has ended.
pub(crate) const TX_GUARD_EXIT: &str = "tx_guard_exit";

/// What the journal knows of a run that did not finish; the result's
/// `interrupted` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Interrupted {
    /// When the run started (ledger `run_started`).
    pub started_at: String,
    /// When a transmitter was keyed, if one was (ledger `tx_keyed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed_at: Option<String>,
    /// The last step the run reported (`step N/M: op`), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_progress: Option<String>,
    /// How the TX guard process ended, if the journal has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_exit: Option<String>,
    /// When this node found the run unfinished.
    pub found_at: String,
    /// The command that found it.
    pub found_by: String,
}

/// One unfinished run.
#[derive(Debug, Clone)]
pub(crate) struct Unfinished {
    /// The task.
    pub(crate) task_id: String,
    /// Its text hash.
    pub(crate) sha: Option<String>,
    /// Its commit.
    pub(crate) commit: Option<String>,
    /// What the journal knows.
    pub(crate) started_at: String,
    pub(crate) keyed_at: Option<String>,
    pub(crate) guard_exit: Option<String>,
    /// The last time the journal heard from the run.
    pub(crate) last_at: String,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_owned)
}

/// The runs the ledger shows started and not closed, unless an `rxnode run`
/// still holds this checkout's run lock (it may be the one running).
pub(crate) fn unfinished(paths: &Paths) -> Result<Vec<Unfinished>> {
    if crate::store::lock::run_holder(paths).is_some_and(|h| crate::store::lock::holder_alive(&h)) {
        return Ok(Vec::new());
    }
    let mut open: Vec<Unfinished> = Vec::new();
    for e in ledger::read_all(paths)? {
        let (Some(ev), Some(id)) = (s(&e, "event"), s(&e, "task_id")) else {
            continue;
        };
        match ev.as_str() {
            "run_started" => {
                open.retain(|u| u.task_id != id);
                open.push(Unfinished {
                    task_id: id,
                    sha: s(&e, "task_sha256"),
                    commit: s(&e, "commit"),
                    started_at: s(&e, "at").unwrap_or_default(),
                    keyed_at: None,
                    guard_exit: None,
                    last_at: s(&e, "at").unwrap_or_default(),
                });
            }
            TX_KEYED => {
                if let Some(u) = open.iter_mut().find(|u| u.task_id == id) {
                    u.keyed_at = e.get("detail").and_then(|d| s(d, "keyed_at"));
                    u.last_at = s(&e, "at").unwrap_or_default();
                }
            }
            TX_GUARD_EXIT => {
                if let Some(u) = open.iter_mut().find(|u| u.task_id == id) {
                    u.guard_exit = e.get("detail").and_then(|d| s(d, "exit"));
                    u.last_at = s(&e, "at").unwrap_or_default();
                }
            }
            "run_finished" | RUN_ENDED_BEFORE_RADIO | RUN_INTERRUPTED => {
                open.retain(|u| u.task_id != id);
            }
            _ => {}
        }
    }
    Ok(open)
}

/// One line for a person about an unfinished run.
pub(crate) fn describe(u: &Unfinished) -> String {
    let mut line = format!(
        "{}: the run started at {} did not finish",
        u.task_id, u.started_at
    );
    if let Some(k) = &u.keyed_at {
        line.push_str(&format!("; a transmitter was keyed at {k}"));
    }
    if let Some(g) = &u.guard_exit {
        line.push_str(&format!("; TX guard: {g}"));
    }
    line
}

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
    let written = std::fs::read(dir.join(crate::result::RESULT_JSON))
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
    let mut entry = Entry::new(RUN_INTERRUPTED)
        .task(id.as_str())
        .detail(json!({"interrupted": record, "result_rewritten": status.is_some()}));
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
