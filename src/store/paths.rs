//! Where local state lives (docs/operator.md#files-under-local). Everything is under `<checkout>/.local/`.
use rxnode_interlock::TaskId;
use std::path::{Path, PathBuf};

/// The local-state layout of one checkout.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The checkout (work tree root).
    pub(crate) repo: PathBuf,
    /// `<repo>/.local`.
    pub(crate) local: PathBuf,
    /// `--policy PATH` / `RXNODE_POLICY` (absolute), when given.
    pub(crate) policy_override: Option<PathBuf>,
}

impl Paths {
    /// Layout for a checkout.
    pub(crate) fn new(repo: &Path) -> Paths {
        Paths {
            repo: repo.to_path_buf(),
            local: repo.join(".local"),
            policy_override: None,
        }
    }
    /// The same layout with the node policy at `policy` (`--policy` / `RXNODE_POLICY`).
    pub(crate) fn with_policy(mut self, policy: Option<PathBuf>) -> Paths {
        self.policy_override = policy;
        self
    }
    /// Whether the policy path was given explicitly (`--policy` / `RXNODE_POLICY`).
    pub(crate) fn policy_is_explicit(&self) -> bool {
        self.policy_override.is_some()
    }
    /// Whether this is the checkout's own `.local/` (not `watch --dry-run`'s area).
    pub(crate) fn is_checkout_local(&self) -> bool {
        self.local == self.repo.join(".local")
    }
    /// `.local/allowed_signers` of the checkout (also for `watch --dry-run`'s
    /// area: the signers are the node's, docs/operator.md#signing-tasks).
    pub(crate) fn allowed_signers(&self) -> PathBuf {
        self.repo.join(".local").join("allowed_signers")
    }
    /// `.local/rx_agent_state.json`.
    pub(crate) fn state(&self) -> PathBuf {
        self.local.join("rx_agent_state.json")
    }
    /// `.local/rx_agent_ledger.jsonl`.
    pub(crate) fn ledger(&self) -> PathBuf {
        self.local.join("rx_agent_ledger.jsonl")
    }
    /// `.local/rx_agent_outbox/`.
    pub(crate) fn outbox_root(&self) -> PathBuf {
        self.local.join("rx_agent_outbox")
    }
    /// `.local/rx_agent_outbox/<TASK_ID>/`.
    pub(crate) fn outbox(&self, id: &TaskId) -> PathBuf {
        self.outbox_root().join(id.as_str())
    }
    /// `.local/rx_iq/<TASK_ID>/`.
    pub(crate) fn iq_dir(&self, id: &TaskId) -> PathBuf {
        self.local.join("rx_iq").join(id.as_str())
    }
    /// `.local/rxnode.lock`.
    pub(crate) fn lock(&self) -> PathBuf {
        self.local.join("rxnode.lock")
    }
    /// `.local/rxnode-run.lock` (one `rxnode run` at a time; beside the watcher's lock).
    pub(crate) fn run_lock(&self) -> PathBuf {
        self.local.join("rxnode-run.lock")
    }
    /// `.local/STOP`.
    pub(crate) fn stop(&self) -> PathBuf {
        self.local.join("STOP")
    }
    /// The node policy: `--policy PATH` / `RXNODE_POLICY` when given, else
    /// the checkout's `.local/rxnode-policy.json` (docs/decisions.md "Policy
    /// location") — also for `watch --dry-run`, whose verdicts are the real
    /// watcher's.
    pub(crate) fn policy(&self) -> PathBuf {
        match &self.policy_override {
            Some(p) => p.clone(),
            None => self.repo.join(".local").join("rxnode-policy.json"),
        }
    }
    /// `.local/rxnode-node.json`: the node's name (`rxnode node set-name`).
    pub(crate) fn node_name(&self) -> PathBuf {
        self.local.join("rxnode-node.json")
    }
    /// `.local/dry-run/` (the only place `watch --dry-run` writes).
    pub(crate) fn dry_run(&self) -> PathBuf {
        self.local.join("dry-run")
    }
}
