//! `.local/rx_agent_ledger.jsonl`: the append-only audit trail (DESIGN §4).
use crate::fsutil::now_iso;
use crate::paths::Paths;
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Write;

/// One ledger line.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// UTC time, ISO 8601.
    pub at: String,
    /// What happened: detected, rejected, prompted, approved, deferred, stopped,
    /// refused, authorized, run_started, run_finished, published, marked_completed …
    pub event: String,
    /// The task, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// SHA-256 of the task text, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_sha256: Option<String>,
    /// The commit concerned, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Event-specific details.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

impl Entry {
    /// A new entry stamped now.
    pub fn new(event: &str) -> Entry {
        Entry {
            at: now_iso(),
            event: event.to_owned(),
            task_id: None,
            task_sha256: None,
            commit: None,
            detail: serde_json::Value::Null,
        }
    }
    /// With a task ID.
    pub fn task(mut self, id: &str) -> Entry {
        self.task_id = Some(id.to_owned());
        self
    }
    /// With a task text hash.
    pub fn sha(mut self, sha: &str) -> Entry {
        self.task_sha256 = Some(sha.to_owned());
        self
    }
    /// With a commit.
    pub fn commit(mut self, c: &str) -> Entry {
        self.commit = Some(c.to_owned());
        self
    }
    /// With details.
    pub fn detail(mut self, d: serde_json::Value) -> Entry {
        self.detail = d;
        self
    }
}

/// Append one whole line (a single `write_all` of line + `\n`), then flush and fsync.
pub fn append(paths: &Paths, entry: &Entry) -> Result<()> {
    let p = paths.ledger();
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .with_context(|| format!("cannot open ledger {}", p.display()))?;
    f.write_all(&line)
        .with_context(|| format!("cannot append to ledger {}", p.display()))?;
    f.sync_data()
        .with_context(|| format!("cannot fsync ledger {}", p.display()))?;
    Ok(())
}

/// Read the ledger entries as JSON values (a torn last line is skipped and reported).
pub fn read_all(paths: &Paths) -> Result<Vec<serde_json::Value>> {
    let p = paths.ledger();
    let text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| format!("cannot read ledger {}", p.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(v) => out.push(v),
            Err(e) => tracing::warn!(
                "ledger {} line {}: not JSON ({e}); skipped",
                p.display(),
                i + 1
            ),
        }
    }
    Ok(out)
}
