//! What [`super::prepare`] hands on once the outbox passed every check: the
//! result ready to commit, its key under `rx-results/`, and the node name it
//! is published under. The checks and the Git plumbing read it; it reads
//! neither.
use crate::store::outbox::TaskMeta;
use rxnode_interlock::TaskId;
use serde_json::Value;

/// Everything checked and ready to commit.
pub(super) struct Prepared {
    pub(super) id: TaskId,
    pub(super) title: String,
    pub(super) source_branch: String,
    pub(super) task_sha256: String,
    pub(super) meta: TaskMeta,
    pub(super) approved_at: String,
    pub(super) md: String,
    pub(super) json_text: String,
    pub(super) json: Value,
    pub(super) status: String,
    pub(super) stray: Vec<String>,
    /// This node's name (`rxnode node set-name`): the result lands in `rx-results/<ID>/<node>/`.
    pub(super) node: String,
}

impl Prepared {
    /// `<ID>/<NODE>`: this result's key under `rx-results/`.
    pub(super) fn key(&self) -> String {
        result_key(&self.id, &self.node)
    }
}

/// `<ID>/<NODE>`: a per-node result's key under `rx-results/` (docs/protocol.md#6-the-main-pcs-side).
pub(super) fn result_key(id: &TaskId, node: &str) -> String {
    format!("{}/{node}", id.as_str())
}

/// The node name to publish: the result's own `node.hostname` (null by
/// default, docs/decisions.md), reduced to `[A-Za-z0-9._-]`; `None` when the
/// result names no host. Publication never reads this machine's host name.
pub(super) fn published_node(json: &Value) -> Option<String> {
    let h: String = json
        .get("node")
        .and_then(|n| n.get("hostname"))
        .and_then(Value::as_str)?
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .collect();
    (!h.is_empty()).then_some(h)
}
