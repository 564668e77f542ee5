//! The run journal: a run that started and did not finish (docs/protocol.md#interrupted-runs).
//!
//! Before a radio is touched, `rxnode run` writes `run_started` to the ledger;
//! while a tone is keyed it adds `tx_keyed`, and when the TX guard process
//! ends, `tx_guard_exit`; `run_finished` (or `run_ended_before_radio`) closes
//! the run. A `run_started` that nothing closes, with no live `rxnode run`
//! holding the run lock, is an interrupted run (killed, crashed, power loss).
//! The next `status`, `doctor`, `run`, `watch` or `publish` finishes its result
//! (`crate::result::interrupted`: the store does not know the result model)
//! as `FAIL` with an `interrupted` record — what the journal knows: when it
//! started, when it keyed, its last progress, the guard's exit — never the
//! "not started" placeholder and never `PASS`; the task is completed (a re-run
//! needs a new `TASK_ID`) and `run_interrupted` closes the journal.
use crate::store::evidence::RUN_ENDED_BEFORE_RADIO;
use crate::store::ledger;
use crate::store::paths::Paths;
use anyhow::Result;
use serde::{Deserialize, Serialize};

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

/// One unfinished run (also kept in the ledger checkpoint, `crate::store::checkpoint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The runs the ledger shows started and not closed, unless an `rxnode run`
/// still holds this checkout's run lock (it may be the one running). Read
/// through the ledger checkpoint when this node has a key (only the lines
/// added since are parsed); the answer is the whole `.local/` ledger's either way.
pub(crate) fn unfinished(paths: &Paths) -> Result<Vec<Unfinished>> {
    if crate::store::lock::run_holder(paths).is_some_and(|h| crate::store::lock::holder_alive(&h)) {
        return Ok(Vec::new());
    }
    let k = crate::store::evidence::checking_key(paths)?;
    if let Some(Some(_)) = &k {
        return Ok(crate::store::checkpoint::read(paths, &k)?.local.open_runs);
    }
    let mut open: Vec<Unfinished> = Vec::new();
    ledger::each_in(&paths.ledger(), |e| apply(&mut open, &e))?;
    Ok(open)
}

/// The run journal after one more ledger line `e`: a `run_started` opens its
/// task's run (replacing an earlier open one), `tx_keyed` and `tx_guard_exit`
/// add to it, and `run_finished`, `run_ended_before_radio` or
/// `run_interrupted` close it.
pub(crate) fn apply(open: &mut Vec<Unfinished>, e: &ledger::Line) {
    let (Some(ev), Some(id)) = (e.event.as_deref(), e.task_id.clone()) else {
        return;
    };
    let at = e.at.clone().unwrap_or_default();
    match ev {
        "run_started" => {
            open.retain(|u| u.task_id != id);
            open.push(Unfinished {
                task_id: id,
                sha: e.task_sha256.clone(),
                commit: e.commit.clone(),
                started_at: at.clone(),
                keyed_at: None,
                guard_exit: None,
                last_at: at,
            });
        }
        TX_KEYED => {
            if let Some(u) = open.iter_mut().find(|u| u.task_id == id) {
                u.keyed_at = e.detail_str("keyed_at").map(str::to_owned);
                u.last_at = at;
            }
        }
        TX_GUARD_EXIT => {
            if let Some(u) = open.iter_mut().find(|u| u.task_id == id) {
                u.guard_exit = e.detail_str("exit").map(str::to_owned);
                u.last_at = at;
            }
        }
        "run_finished" | RUN_ENDED_BEFORE_RADIO | RUN_INTERRUPTED => {
            open.retain(|u| u.task_id != id);
        }
        _ => {}
    }
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
