//! What every `results` subcommand reads: the private refs `rx-node` and the
//! status branches are fetched into, the fetched tip, and a result found there.
use crate::context::Ctx;
use git2::{Oid, Repository};

/// Where the main PC keeps its copy of the remote `rx-node` (a private ref).
pub(crate) const PRIVATE_REF: &str = "refs/rxnode/main-pc/rx-node";
/// Where the main PC keeps its copy of every node's `rx-status/<NODE>`.
pub(crate) const STATUS_PRIVATE_PREFIX: &str = "refs/rxnode/main-pc/rx-status/";

/// One published result found on `rx-node`.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub(super) task_id: String,
    /// `Some` for `rx-results/<ID>/<NODE>/`; `None` for the layout before node names.
    pub(super) dir_node: Option<String>,
    /// The tree holding the three files.
    pub(super) tree: Oid,
    /// `rx-results/<ID>/<NODE>` (or `rx-results/<ID>`).
    pub(super) path: String,
}

impl Found {
    /// The node it came from, `(unnamed)` for the layout before node names.
    pub(super) fn node_label(&self) -> String {
        self.dir_node.clone().unwrap_or_else(|| "(unnamed)".into())
    }
}

/// What every subcommand reads: the context, the repository and the tip of
/// `rx-node` as fetched (`None` when the remote has none).
pub(super) struct Fetched<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) repo: &'a Repository,
    pub(super) tip: Option<Oid>,
    /// `--no-fetch` with nothing fetched before: there is no copy to read.
    pub(super) never_fetched: bool,
}

impl Fetched<'_> {
    /// Why there are no results to read: nothing fetched yet, or no `rx-node` on the remote.
    pub(super) fn none_yet(&self) -> String {
        if self.never_fetched {
            format!(
                "nothing fetched yet: --no-fetch reads the copy of rx-node the last fetch left in {PRIVATE_REF}, and there is none — run `rxnode results` without --no-fetch to fetch it"
            )
        } else {
            "no rx-node branch on the remote yet: no node has published".to_owned()
        }
    }
}
