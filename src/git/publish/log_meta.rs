//! `LOG_META.json`, the third file of a published result: small, path-free
//! metadata about the publication (docs/publishing.md#log_metajson). One type
//! writes it, gives `rxnode schema log-meta` and is what the main PC's `rxnode
//! results verify` reads (a file of an earlier build may lack `node` and
//! `node_name`, which later builds added: they read as `null` and empty). The fields are declared in the
//! order of their names, the order the file has always had.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// This file's version.
pub(crate) const LOG_META_SCHEMA: u32 = 1;

/// `LOG_META.json` beside `RX_RESULT.md` and `RX_RESULT.json` in
/// `rx-results/<ID>/<NODE>/`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct LogMeta {
    /// Counts taken from the result.
    pub(crate) counts: Counts,
    /// Name, byte size and SHA-256 of `RX_RESULT.md` and `RX_RESULT.json`.
    pub(crate) files: Vec<FileEntry>,
    /// The node's audit trail for this task (at most the last 100 entries).
    pub(crate) ledger: Vec<LedgerLine>,
    /// The result's `node.hostname`, reduced to `[A-Za-z0-9._-]`; `null` unless
    /// the result names its host.
    #[serde(default)]
    pub(crate) node: Option<String>,
    /// The publishing node's name (`rxnode node set-name`): the folder
    /// `rx-results/<ID>/<node_name>/`.
    #[serde(default)]
    pub(crate) node_name: String,
    /// The publishing build's version.
    pub(crate) rxnode_version: String,
    /// This file's version: 1.
    #[schemars(extend("const" = LOG_META_SCHEMA), description = "This file's version: 1.")]
    pub(crate) schema_version: u32,
    /// The watched branch the task came from.
    pub(crate) source_branch: String,
    /// The commit that held the task text.
    pub(crate) source_commit: String,
    /// The overall status, as in `RX_RESULT.json`.
    pub(crate) status: String,
    /// The task.
    pub(crate) task_id: String,
    /// SHA-256 (hex) of the task text this result answers.
    pub(crate) task_sha256: String,
    /// When the task was approved, run and published.
    pub(crate) timeline: Timeline,
}

/// Counts taken from the result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Counts {
    /// Entries of `captures`.
    pub(crate) captures: usize,
    /// Entries of `checks`.
    pub(crate) checks: usize,
    /// Checks per status.
    pub(crate) checks_by_status: BTreeMap<String, usize>,
    /// Entries of `errors`.
    pub(crate) errors: usize,
    /// The node's ledger entries for this task (all of them; `ledger` holds the last 100).
    pub(crate) ledger_entries: usize,
}

/// One published file of the result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct FileEntry {
    /// Its size in bytes.
    pub(crate) bytes: usize,
    /// `RX_RESULT.md` or `RX_RESULT.json`.
    pub(crate) name: String,
    /// SHA-256 (hex) of its bytes.
    pub(crate) sha256: String,
}

/// One ledger entry of the task: what happened and when, details left on the node.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct LedgerLine {
    /// When (UTC, ISO 8601); left out when the line has none (written by an
    /// older build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at: Option<String>,
    /// The commit concerned, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    /// What happened (`detected`, `approved`, `run_started`, `run_finished` …);
    /// left out when the line has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event: Option<String>,
}

/// When the task was approved, run and published (ISO 8601, seconds, with offset).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct Timeline {
    /// When the operator approved it.
    pub(crate) approved_at: String,
    /// The result's `timeline.completed_at` (`null` when it has none).
    pub(crate) completed_at: Option<String>,
    /// When this publication was made.
    pub(crate) published_at: String,
    /// The result's `timeline.started_at` (`null` when it has none).
    pub(crate) started_at: Option<String>,
}

/// The JSON Schema of `LOG_META.json` (`rxnode schema log-meta`).
pub(crate) fn schema() -> serde_json::Value {
    crate::result::written_schema::<LogMeta>("rxnode LOG_META.json (schema_version 1)")
}
