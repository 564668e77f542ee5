//! `.local/rx_run_progress.json`: which task `rxnode run` is executing and its
//! step, for `rxnode status` and the node's published status
//! (docs/protocol.md#node-status). Written at each step, removed when the run
//! ends; a file left by a run that died (its process is gone) is ignored.
//! Informational only: a failure to write it is logged and never stops a run.
use crate::store::fsutil::write_atomic;
use crate::store::paths::Paths;
use serde::{Deserialize, Serialize};

/// The largest progress file read.
const MAX_FILE_BYTES: u64 = 4096;

/// A run in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Progress {
    /// The task.
    pub(crate) task_id: String,
    /// The step being executed (1-based).
    pub(crate) step: usize,
    /// Steps in the plan.
    pub(crate) steps: usize,
    /// The step's operation.
    pub(crate) op: String,
    /// The `rxnode run` process.
    pub(crate) pid: u32,
    /// Its host.
    pub(crate) host: String,
    /// Its start as the kernel counts it (`crate::store::lock::process_start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<String>,
}

/// `.local/rx_run_progress.json`.
pub(crate) fn path(paths: &Paths) -> std::path::PathBuf {
    paths.local.join("rx_run_progress.json")
}

/// Record that step `step` of `steps` (`op`) of task `task_id` starts.
pub(crate) fn step(paths: &Paths, task_id: &str, step: usize, steps: usize, op: &str) {
    let p = path(paths);
    let tmp = crate::store::fsutil::atomic_tmp(&p);
    let r = crate::store::trust::check_created(paths, &[p.clone(), tmp]).and_then(|()| {
        let v = Progress {
            task_id: task_id.to_owned(),
            step,
            steps,
            op: op.to_owned(),
            pid: std::process::id(),
            host: crate::store::lock::hostname(),
            started: crate::store::lock::process_start(std::process::id()),
        };
        write_atomic(&p, &serde_json::to_vec(&v)?)
    });
    if let Err(e) = r {
        tracing::warn!("run progress not recorded: {e:#}");
    }
}

/// The run ended: no progress file.
pub(crate) fn clear(paths: &Paths) {
    match std::fs::remove_file(path(paths)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!("run progress not cleared: {e}"),
    }
}

/// The last progress any run wrote, alive or not (for an interrupted run's result).
pub(crate) fn last(paths: &Paths) -> Option<Progress> {
    let p = path(paths);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > MAX_FILE_BYTES {
        return None;
    }
    serde_json::from_slice(&crate::store::fsutil::read(&p).ok()?).ok()
}

/// The run in progress, if its process is alive (a regular file, bounded in size).
pub(crate) fn running(paths: &Paths) -> Option<Progress> {
    let p = path(paths);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > MAX_FILE_BYTES {
        return None;
    }
    let v: Progress = serde_json::from_slice(&crate::store::fsutil::read(&p).ok()?).ok()?;
    // A run on this host whose process is gone left the file behind.
    crate::store::lock::process_running(v.pid, &v.host, v.started.as_deref()).then_some(v)
}
