//! The node's context: what every command needs, built once by `main` from the
//! command line (clap stays in the binary; nothing here knows about it).
use std::path::PathBuf;

/// Where tasks come from (docs/protocol.md defaults).
#[derive(Debug, Clone)]
pub struct TaskSource {
    /// Git remote to poll.
    pub remote: String,
    /// Watched branch on that remote.
    pub branch: String,
    /// Path of the task file inside the watched branch.
    pub task_path: String,
}

/// The global options every command sees.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// Use only the bundled simulated radio module `rxsim`.
    pub sim: bool,
    /// Print one JSON document instead of human text.
    pub json: bool,
    /// The RX checkout (a Git work tree).
    pub repo: PathBuf,
    /// The node policy file named on the command line or in `RXNODE_POLICY`.
    pub policy: Option<PathBuf>,
    /// Where tasks come from.
    pub source: TaskSource,
}

impl Ctx {
    /// The context for one process. Call once, before any command: it fixes the
    /// policy location for the process (see `store::paths`).
    pub fn new(
        sim: bool,
        json: bool,
        repo: PathBuf,
        policy: Option<PathBuf>,
        source: TaskSource,
    ) -> Ctx {
        crate::store::paths::set_policy_override(policy.as_deref());
        Ctx {
            sim,
            json,
            repo,
            policy,
            source,
        }
    }
}
