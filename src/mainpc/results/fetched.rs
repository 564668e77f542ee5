//! What every `results` subcommand reads: the private refs the results branches
//! (`rx-node`, every `rx-results/<NODE>`) and the status branches are fetched
//! into, the fetched tips, and a result found there.
use crate::context::Ctx;
use git2::{Oid, Repository};
use std::rc::Rc;

/// Where the main PC keeps its copy of the remote `rx-node` (a private ref).
pub(crate) const PRIVATE_REF: &str = "refs/rxnode/main-pc/rx-node";
/// Where the main PC keeps its copy of every node's `rx-status/<NODE>`.
pub(crate) const STATUS_PRIVATE_PREFIX: &str = "refs/rxnode/main-pc/rx-status/";
/// Where the main PC keeps its copy of every node's own `rx-results/<NODE>`.
pub(crate) const OWN_PRIVATE_PREFIX: &str = "refs/rxnode/main-pc/rx-results/";

/// A branch results are read from: the shared `rx-node` or a node's own
/// `rx-results/<NODE>` (docs/publishing.md#one-ref-per-node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    /// `rx-node` or `rx-results/<NODE>`.
    pub(crate) branch: String,
    /// The node whose own ref it is; `None` for the shared `rx-node`.
    pub(crate) owner: Option<String>,
    /// Its tip as fetched.
    pub(crate) tip: Oid,
}

impl Source {
    /// The shared `rx-node` at `tip`.
    pub(crate) fn shared(tip: Oid) -> Source {
        Source {
            branch: "rx-node".to_owned(),
            owner: None,
            tip,
        }
    }
}

/// One published result found on a results branch.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub(super) task_id: String,
    /// `Some` for `rx-results/<ID>/<NODE>/`; `None` for the layout before node names.
    pub(super) dir_node: Option<String>,
    /// The tree holding the three files.
    pub(super) tree: Oid,
    /// `rx-results/<ID>/<NODE>` (or `rx-results/<ID>`).
    pub(super) path: String,
    /// The branch it was read from.
    pub(super) source: Rc<Source>,
}

impl Found {
    /// The node every view names it by and `--from` picks it by: its folder's
    /// name, or for the layout before node names the node its `RX_RESULT.json`
    /// (`node.name`) or else its `LOG_META.json` (`node_name`) names (made safe
    /// to show, as listed); `None` when it names none.
    pub(super) fn node(&self, repo: &Repository) -> Option<String> {
        use crate::result::{LOG_META, RESULT_JSON};
        if let Some(d) = &self.dir_node {
            return Some(d.clone());
        }
        let named = |file: &str, path: &[&str]| {
            super::tree::read_json(repo, self.tree, file)
                .ok()
                .and_then(|v| super::text::str_of(&v, path))
        };
        named(RESULT_JSON, &["node", "name"]).or_else(|| named(LOG_META, &["node_name"]))
    }

    /// [`Found::node`], `(unnamed)` when it names none.
    pub(super) fn node_label(&self, repo: &Repository) -> String {
        self.node(repo).unwrap_or_else(|| "(unnamed)".into())
    }

    /// Each result's node, and its folder beside it where two results name the
    /// same node (`LAB1 (rx-results/T1)`), so that each can be told apart and
    /// picked with `--from`.
    pub(super) fn labels(found: &[Found], repo: &Repository) -> Vec<String> {
        let names: Vec<String> = found.iter().map(|f| f.node_label(repo)).collect();
        names
            .iter()
            .zip(found)
            .map(|(n, f)| {
                if names.iter().filter(|m| *m == n).count() > 1 {
                    format!("{n} ({})", f.path)
                } else {
                    n.clone()
                }
            })
            .collect()
    }
}

/// What every subcommand reads: the context, the repository and the tips of
/// the results branches as fetched.
pub(super) struct Fetched<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) repo: &'a Repository,
    /// The tip of `rx-node` (`None` when the remote has none).
    pub(super) tip: Option<Oid>,
    /// Every results branch with a tip: `rx-node` first (when there is one),
    /// then each node's own `rx-results/<NODE>` by name.
    pub(super) sources: Vec<Rc<Source>>,
    /// `--no-fetch` with nothing fetched before: there is no copy to read.
    pub(super) never_fetched: bool,
    /// What the main PC saw before of each branch that was rewritten or
    /// deleted since (docs/protocol.md#6-the-main-pcs-side): branch → why.
    pub(super) rewritten: std::collections::BTreeMap<String, String>,
    /// What this command may still read of the results branches' trees and histories.
    pub(super) budget: super::tree::Budget,
    /// The watched branch as this clone has it: what ties a result to a task
    /// the main PC posted.
    pub(super) posted: super::posted::Posted,
}

impl Fetched<'_> {
    /// Why there are no results to read: nothing fetched yet, or no results branch on the remote.
    pub(super) fn none_yet(&self) -> String {
        if self.never_fetched {
            format!(
                "nothing fetched yet: --no-fetch reads the copy of rx-node the last fetch left in {PRIVATE_REF}, and there is none — run `rxnode results` without --no-fetch to fetch it"
            )
        } else {
            "no rx-node branch on the remote yet (and no rx-results/<NODE> branch): no node has published".to_owned()
        }
    }

    /// Whether there is any results branch to read.
    pub(super) fn any(&self) -> bool {
        !self.sources.is_empty()
    }
}
