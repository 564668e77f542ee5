//! Where local state lives (docs/operator.md#files-under-local). Everything is under `<checkout>/.local/`.
use rxnode_interlock::TaskId;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `--policy PATH` / `RXNODE_POLICY`, set once by `main` before any command.
static POLICY_OVERRIDE: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Record the explicit policy path (relative paths are taken from the current
/// directory). Called once by `main`.
pub(crate) fn set_policy_override(p: Option<&Path>) {
    let p = p.map(|p| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|d| d.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        }
    });
    let _ = POLICY_OVERRIDE.set(p);
}

/// Whether the policy path was given explicitly (`--policy` / `RXNODE_POLICY`).
pub(crate) fn policy_is_explicit() -> bool {
    matches!(POLICY_OVERRIDE.get(), Some(Some(_)))
}

/// The local-state layout of one checkout.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The checkout (work tree root).
    pub(crate) repo: PathBuf,
    /// `<repo>/.local`.
    pub(crate) local: PathBuf,
}

impl Paths {
    /// Layout for a checkout.
    pub(crate) fn new(repo: &Path) -> Paths {
        Paths {
            repo: repo.to_path_buf(),
            local: repo.join(".local"),
        }
    }
    /// Whether this is the checkout's own `.local/` (not `watch --dry-run`'s area).
    pub(crate) fn is_checkout_local(&self) -> bool {
        self.local == self.repo.join(".local")
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
    /// `.local/rxnode-policy.json` (docs/decisions.md "Policy location").
    pub(crate) fn policy(&self) -> PathBuf {
        match POLICY_OVERRIDE.get() {
            Some(Some(p)) => p.clone(),
            _ => self.local.join("rxnode-policy.json"),
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
