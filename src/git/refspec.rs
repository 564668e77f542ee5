//! The only push refspecs rxnode can produce — the shared `rx-node` or this
//! node's own `rx-results/<NODE>` (never forced), and this node's own
//! `rx-status/<NODE>` (forced by design) — and credential callbacks that try
//! each kind once (docs/publishing.md, docs/protocol.md#node-status).
use std::fmt;

/// The shared branch results are published to (the default layout).
pub(crate) const RX_NODE_REF: &str = "refs/heads/rx-node";
/// Where a node that publishes to a ref of its own keeps its results:
/// `refs/heads/rx-results/<NODE>` (docs/publishing.md#one-ref-per-node).
pub(crate) const OWN_RESULTS_PREFIX: &str = "refs/heads/rx-results/";

/// A push refspec that passed [`push_refspec`] or [`own_results_refspec`]:
/// `refs/heads/rx-node:refs/heads/rx-node` or
/// `refs/heads/rx-results/<NODE>:refs/heads/rx-results/<NODE>`, never forced,
/// the same branch on both sides. The fields are private, so no other value can
/// be built outside this module.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PushRefspec {
    spec: String,
    branch: String,
}

impl PushRefspec {
    /// The refspec text handed to libgit2.
    pub(crate) fn as_str(&self) -> &str {
        &self.spec
    }
    /// The branch it pushes, in full (`refs/heads/rx-node`), the same locally and on the remote.
    pub(crate) fn branch(&self) -> &str {
        &self.branch
    }
    /// The branch's short name (`rx-node`, `rx-results/<NODE>`).
    pub(crate) fn short(&self) -> &str {
        self.branch.trim_start_matches("refs/heads/")
    }
    /// Whether this is the shared `rx-node`, which every node of the shared
    /// layout writes (rather than this node's own `rx-results/<NODE>`).
    pub(crate) fn is_shared(&self) -> bool {
        self.branch == RX_NODE_REF
    }
}

impl fmt::Display for PushRefspec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

/// Why a refspec was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefspecRefused(pub String);

impl fmt::Display for RefspecRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RefspecRefused {}

fn full_branch(name: &str) -> String {
    if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("refs/heads/{name}")
    }
}

/// Build the push refspec `src:dst`. Refused unless both sides are exactly
/// `refs/heads/rx-node`, with no leading `+` (force), no wildcard, and the
/// destination is not the watched branch (named in full or short form).
pub(crate) fn push_refspec(
    src: &str,
    dst: &str,
    watched_branch: &str,
) -> Result<PushRefspec, RefspecRefused> {
    if src.starts_with('+') || dst.starts_with('+') {
        return Err(RefspecRefused(format!(
            "forced push refspec {src}:{dst} refused: rxnode never force-pushes"
        )));
    }
    if src.contains('*') || dst.contains('*') || src.contains(':') || dst.contains(':') {
        return Err(RefspecRefused(format!(
            "pattern or malformed refspec {src}:{dst} refused"
        )));
    }
    let watched = full_branch(watched_branch);
    if full_branch(dst) == watched || dst == watched_branch {
        return Err(RefspecRefused(format!(
            "push to the watched branch {watched} refused: rxnode never writes the branch it takes tasks from"
        )));
    }
    if dst != RX_NODE_REF {
        return Err(RefspecRefused(format!(
            "push destination {dst} refused: only {RX_NODE_REF} may be pushed"
        )));
    }
    if src != RX_NODE_REF {
        return Err(RefspecRefused(format!(
            "push source {src} refused: only {RX_NODE_REF} may be pushed"
        )));
    }
    Ok(PushRefspec {
        spec: format!("{RX_NODE_REF}:{RX_NODE_REF}"),
        branch: RX_NODE_REF.to_owned(),
    })
}

/// The shared layout's refspec (refused if the watched branch is `rx-node` itself).
pub(crate) fn rx_node_refspec(watched_branch: &str) -> Result<PushRefspec, RefspecRefused> {
    push_refspec(RX_NODE_REF, RX_NODE_REF, watched_branch)
}

/// The own-ref layout's refspec of node `node`:
/// `refs/heads/rx-results/<NODE>:refs/heads/rx-results/<NODE>`, never forced;
/// refused unless `node` is a valid node name (no `/`, `*`, `:`, `..` or `+`
/// can reach the refspec) and the watched branch is not that branch.
pub(crate) fn own_results_refspec(
    node: &str,
    watched_branch: &str,
) -> Result<PushRefspec, RefspecRefused> {
    crate::store::node::check_name(node)
        .map_err(|e| RefspecRefused(format!("results refspec refused: node name {e}")))?;
    let branch = format!("{OWN_RESULTS_PREFIX}{node}");
    if full_branch(watched_branch) == branch {
        return Err(RefspecRefused(format!(
            "push to the watched branch {branch} refused: rxnode never writes the branch it takes tasks from"
        )));
    }
    Ok(PushRefspec {
        spec: format!("{branch}:{branch}"),
        branch,
    })
}

/// Where a node's status branch lives on the remote: `refs/heads/rx-status/<NODE>`.
pub(crate) const STATUS_REF_PREFIX: &str = "refs/heads/rx-status/";
/// The node's own copy of the status commit it last built (a private ref).
pub(crate) const LOCAL_STATUS_PREFIX: &str = "refs/rxnode/node-status/";

/// The status push refspec: always
/// `+refs/rxnode/node-status/<NODE>:refs/heads/rx-status/<NODE>` for this
/// node's checked name. Forced, because the branch holds exactly one
/// parentless commit that each heartbeat replaces. The fields are private, so
/// no other value can be built outside this module.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StatusRefspec {
    spec: String,
    local: String,
    remote: String,
}

impl StatusRefspec {
    /// The refspec text handed to libgit2.
    pub(crate) fn as_str(&self) -> &str {
        &self.spec
    }
    /// The local ref the status commit is kept in before the push.
    pub(crate) fn local_ref(&self) -> &str {
        &self.local
    }
    /// The one remote ref it updates.
    pub(crate) fn remote_ref(&self) -> &str {
        &self.remote
    }
    /// The deletion refspec (`:<ref>`) of a remote ref nested below this node's
    /// status ref (`rx-status/<NODE>/…`), which rxnode never writes and which
    /// keeps the status ref itself from being created (a ref cannot be both a
    /// branch and a folder of branches); `None` for any other ref.
    pub(crate) fn nested_deletion(&self, remote_ref: &str) -> Option<String> {
        let rest = remote_ref
            .strip_prefix(self.remote.as_str())?
            .strip_prefix('/')?;
        (!rest.is_empty()).then(|| format!(":{remote_ref}"))
    }
}

impl fmt::Display for StatusRefspec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

/// The status refspec of node `node`: refused unless `node` is a valid node
/// name (`[A-Za-z0-9_-]{1,32}`: no `/`, `*`, `:`, `..` or `+` can reach the
/// refspec) and the watched branch is not that status branch.
pub(crate) fn status_refspec(
    node: &str,
    watched_branch: &str,
) -> Result<StatusRefspec, RefspecRefused> {
    crate::store::node::check_name(node)
        .map_err(|e| RefspecRefused(format!("status refspec refused: node name {e}")))?;
    let remote = format!("{STATUS_REF_PREFIX}{node}");
    if full_branch(watched_branch) == remote {
        return Err(RefspecRefused(format!(
            "push to the watched branch {remote} refused: rxnode never writes the branch it takes tasks from"
        )));
    }
    let local = format!("{LOCAL_STATUS_PREFIX}{node}");
    Ok(StatusRefspec {
        spec: format!("+{local}:{remote}"),
        local,
        remote,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::ops::{credentials_callback, redact};

    /// The status refspec names this node's status branch and nothing else,
    /// whatever the name tries.
    #[test]
    fn the_status_refspec_reaches_only_this_nodes_status_branch() {
        let s = status_refspec("LAB-RX1", "video-development").unwrap();
        assert_eq!(
            s.as_str(),
            "+refs/rxnode/node-status/LAB-RX1:refs/heads/rx-status/LAB-RX1"
        );
        assert_eq!(s.remote_ref(), "refs/heads/rx-status/LAB-RX1");
        assert_eq!(
            s.nested_deletion("refs/heads/rx-status/LAB-RX1/x")
                .as_deref(),
            Some(":refs/heads/rx-status/LAB-RX1/x")
        );
        for other in [
            "refs/heads/rx-status/LAB-RX1",
            "refs/heads/rx-status/LAB-RX1/",
            "refs/heads/rx-status/LAB-RX10/x",
            "refs/heads/rx-status/LAB-RX2/x",
            "refs/heads/rx-node",
        ] {
            assert_eq!(s.nested_deletion(other), None, "{other}");
        }
        for bad in [
            "",
            "a/b",
            "../rx-node",
            "*",
            "x:refs/heads/main",
            "+x",
            "rx node",
            "a.b",
            "A23456789012345678901234567890123",
            "LAB\\RX",
        ] {
            assert!(status_refspec(bad, "main").is_err(), "{bad:?}");
        }
        // Every name that passes yields exactly the one shape.
        for ok in ["a", "LAB_RX-2", "rx-node", "main"] {
            let s = status_refspec(ok, "video-development").unwrap();
            assert_eq!(s.as_str().matches(':').count(), 1);
            assert_eq!(s.remote_ref(), format!("refs/heads/rx-status/{ok}"));
            assert!(s.as_str().ends_with(&format!(":refs/heads/rx-status/{ok}")));
            assert!(git2::Reference::is_valid_name(s.local_ref()));
            assert!(git2::Reference::is_valid_name(s.remote_ref()));
        }
        assert!(status_refspec("N1", "rx-status/N1").is_err());
        assert!(status_refspec("N1", "refs/heads/rx-status/N1").is_err());
    }

    /// The own-ref refspec names this node's results branch and nothing else,
    /// never forced, whatever the name tries.
    #[test]
    fn the_own_results_refspec_reaches_only_this_nodes_results_branch() {
        let s = own_results_refspec("LAB-RX1", "video-development").unwrap();
        assert_eq!(
            s.as_str(),
            "refs/heads/rx-results/LAB-RX1:refs/heads/rx-results/LAB-RX1"
        );
        assert_eq!(s.branch(), "refs/heads/rx-results/LAB-RX1");
        assert_eq!(s.short(), "rx-results/LAB-RX1");
        assert!(!s.is_shared());
        for bad in ["", "a/b", "../rx-node", "*", "x:y", "+x", "a.b", "rx node"] {
            assert!(own_results_refspec(bad, "main").is_err(), "{bad:?}");
        }
        assert!(own_results_refspec("N1", "rx-results/N1").is_err());
        assert!(own_results_refspec("N1", "refs/heads/rx-results/N1").is_err());
        assert!(!own_results_refspec("N1", "main")
            .unwrap()
            .as_str()
            .starts_with('+'));
    }

    #[test]
    fn the_rx_node_refspec_is_the_only_one() {
        assert!(rx_node_refspec("main").is_ok_and(|r| r.is_shared()));
        let r = rx_node_refspec("video-development").map(|r| r.to_string());
        assert_eq!(r, Ok("refs/heads/rx-node:refs/heads/rx-node".to_owned()));
        assert!(!r.unwrap_or_default().starts_with('+'));
    }

    /// A refspec to the watched branch cannot be produced.
    #[test]
    fn watched_branch_destination_is_refused() {
        for dst in ["refs/heads/video-development", "video-development"] {
            let e = push_refspec(RX_NODE_REF, dst, "video-development").unwrap_err();
            assert!(e.0.contains("watched branch"), "{e}");
        }
        let e = push_refspec(RX_NODE_REF, "refs/heads/main", "main").unwrap_err();
        assert!(e.0.contains("watched branch"), "{e}");
    }

    #[test]
    fn watching_rx_node_itself_makes_publication_impossible() {
        for w in ["rx-node", "refs/heads/rx-node"] {
            let e = rx_node_refspec(w).unwrap_err();
            assert!(e.0.contains("watched branch"), "{w}: {e}");
        }
    }

    #[test]
    fn forced_pattern_and_other_refspecs_are_refused() {
        let w = "video-development";
        assert!(push_refspec("+refs/heads/rx-node", RX_NODE_REF, w).is_err());
        assert!(push_refspec(RX_NODE_REF, "+refs/heads/rx-node", w).is_err());
        assert!(push_refspec("refs/heads/*", "refs/heads/*", w).is_err());
        assert!(push_refspec(RX_NODE_REF, "refs/heads/main", w).is_err());
        assert!(push_refspec(RX_NODE_REF, "refs/heads/rx-node2", w).is_err());
        assert!(push_refspec(RX_NODE_REF, "refs/tags/rx-node", w).is_err());
        assert!(push_refspec("refs/heads/video-development", RX_NODE_REF, w).is_err());
        assert!(push_refspec("HEAD", RX_NODE_REF, w).is_err());
        assert!(push_refspec(RX_NODE_REF, "rx-node", w).is_err());
        assert!(push_refspec(RX_NODE_REF, "refs/heads/rx-node:x", w).is_err());
    }

    #[test]
    fn urls_lose_their_credentials() {
        assert_eq!(
            redact("https://alice:s3cret@example.com/a/b.git"),
            "https://***@example.com/a/b.git"
        );
        assert_eq!(
            redact("https://tok@example.com/x@y"),
            "https://***@example.com/x@y"
        );
        assert_eq!(redact("git@example.com:a/b.git"), "git@example.com:a/b.git");
        assert_eq!(redact("file:///srv/x.git"), "file:///srv/x.git");
    }

    #[test]
    fn credentials_are_tried_once_each_then_fail() {
        let mut cb = credentials_callback(None);
        let all = git2::CredentialType::SSH_KEY
            | git2::CredentialType::USER_PASS_PLAINTEXT
            | git2::CredentialType::DEFAULT;
        let mut results = Vec::new();
        for _ in 0..6 {
            results.push(cb("https://u:p@example.com/x.git", None, all).is_ok());
        }
        // ssh-agent, the helper (no config: an error), the default: each once; then only errors.
        assert!(results[3..].iter().all(|ok| !ok), "{results:?}");
        let e = cb("https://u:p@example.com/x.git", None, all).err();
        let msg = e.map(|e| e.message().to_owned()).unwrap_or_default();
        assert!(msg.contains("tried ssh-agent"), "{msg}");
        assert!(!msg.contains("u:p@"), "{msg}");
    }
}
