//! `.local/rx_status_push.json`: when this node last pushed its status and
//! whether that push failed (for `rxnode status` and `rxnode doctor`).
use crate::store::fsutil::{now_iso, write_atomic};
use crate::store::paths::Paths;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The largest record read.
const MAX_FILE_BYTES: u64 = 16 * 1024;

/// The last status push.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PushRecord {
    /// The remote ref pushed (`refs/heads/rx-status/<NODE>`).
    pub(crate) remote_ref: String,
    /// The last attempt (ISO 8601).
    pub(crate) last_attempt_at: Option<String>,
    /// The last push that landed (ISO 8601).
    pub(crate) last_pushed_at: Option<String>,
    /// The status commit last pushed.
    pub(crate) last_commit: Option<String>,
    /// Why the last attempt failed; `None` when it landed.
    pub(crate) last_error: Option<String>,
    /// Attempts since the watcher started.
    pub(crate) attempts: u64,
    /// Failed attempts in a row.
    pub(crate) failures_in_a_row: u64,
}

/// `.local/rx_status_push.json`.
pub(crate) fn path(paths: &Paths) -> std::path::PathBuf {
    paths.local.join("rx_status_push.json")
}

/// The files [`save`] creates (checked ignored by Git before the first is written).
pub(crate) fn created(paths: &Paths) -> Vec<std::path::PathBuf> {
    vec![
        path(paths),
        paths
            .local
            .join(format!(".rx_status_push.json.tmp-{}", std::process::id())),
    ]
}

/// The record, if there is a readable one.
pub(crate) fn load(paths: &Paths) -> Option<PushRecord> {
    let p = path(paths);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > MAX_FILE_BYTES {
        return None;
    }
    serde_json::from_slice(&crate::store::fsutil::read(&p).ok()?).ok()
}

/// Record one attempt: `Ok(commit)` landed, `Err(why)` failed.
pub(crate) fn note(
    paths: &Paths,
    rec: &mut PushRecord,
    outcome: Result<String, String>,
) -> Result<()> {
    let now = now_iso();
    rec.attempts += 1;
    rec.last_attempt_at = Some(now.clone());
    match outcome {
        Ok(c) => {
            rec.last_pushed_at = Some(now);
            rec.last_commit = Some(c);
            rec.last_error = None;
            rec.failures_in_a_row = 0;
        }
        Err(e) => {
            rec.last_error = Some(e);
            rec.failures_in_a_row += 1;
        }
    }
    save(paths, rec)
}

fn save(paths: &Paths, rec: &PushRecord) -> Result<()> {
    let mut b = serde_json::to_vec_pretty(rec)?;
    b.push(b'\n');
    write_atomic(&path(paths), &b)
}
