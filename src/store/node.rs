//! The node's name (docs/protocol.md#6-the-main-pcs-side), as `rxnode node set-name
//! NAME` sets it and `rxnode node show` reads it.
//!
//! The name is chosen by the operator (never the host name unless chosen), stored
//! node-locally in `.local/rxnode-node.json` (a regular file sealed with the node
//! key, `crate::store::sealed`: a name the branch planted is never used) and carried in every result this node writes and publishes, so one
//! `rx-node` branch serves a fleet. Publishing without a name is refused with the fix
//! (docs/decisions.md): a default would make two unnamed laptops indistinguishable.
use crate::exit::refused;
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// The node file, sealed with the node key.
const SEALED: crate::store::sealed::Sealed = crate::store::sealed::Sealed {
    kind: "node-name",
    what: "node file",
    fix: "run `rxnode node set-name NAME` to write it again",
    max_bytes: 4096,
};

/// `.local/rxnode-node.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeFile {
    /// Always 1.
    pub(crate) schema_version: u32,
    /// The name, `[A-Za-z0-9_-]{1,32}`.
    pub(crate) name: String,
    /// When it was set (ISO 8601 with offset).
    pub(crate) set_at: String,
    /// Where this node publishes its results (`rxnode node set-publish-ref`);
    /// absent in the file for the default, the shared `rx-node`.
    #[serde(default, skip_serializing_if = "PublishRef::is_shared")]
    pub(crate) publish_ref: PublishRef,
}

/// Where a node publishes its results (docs/publishing.md#one-ref-per-node):
/// the operator's choice, kept in the sealed node file, never read from a branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PublishRef {
    /// The one branch every node shares, `rx-node` (the default).
    #[default]
    Shared,
    /// A branch of this node's own, `rx-results/<NODE>`: its pushes never wait on another node's.
    Own,
}

impl PublishRef {
    fn is_shared(&self) -> bool {
        *self == PublishRef::Shared
    }

    /// The branch this layout publishes to for node `node`, in short (`rx-node`, `rx-results/<NODE>`).
    pub(crate) fn branch(self, node: &str) -> String {
        match self {
            PublishRef::Shared => "rx-node".to_owned(),
            PublishRef::Own => format!("rx-results/{node}"),
        }
    }

    /// `shared` or `own`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PublishRef::Shared => "shared",
            PublishRef::Own => "own",
        }
    }
}

/// Check a node name: `[A-Za-z0-9_-]{1,32}`; the error names the value (the one
/// rule, shared with a task's `TARGET_NODES`).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    rxnode_interlock::check_node_name(name)
}

/// The configured name of this node; `Ok(None)` when none was set. A file that is
/// not a regular file, is too big, does not parse or holds an invalid name is an error
/// naming the file (never silently treated as "no name").
pub(crate) fn load_name(paths: &Paths) -> Result<Option<String>> {
    Ok(load_file(paths)?.map(|f| f.name))
}

/// The node file, checked; `Ok(None)` when none was written (errors as [`load_name`]).
pub(crate) fn load_file(paths: &Paths) -> Result<Option<NodeFile>> {
    let p = paths.node_name();
    let Some(f) = SEALED.read::<NodeFile>(paths, &p)? else {
        return Ok(None);
    };
    if f.schema_version != 1 {
        return Err(refused(format!(
            "{}: schema_version {} is not 1",
            p.display(),
            f.schema_version
        )));
    }
    check_name(&f.name).map_err(|e| refused(format!("{}: {e}", p.display())))?;
    Ok(Some(f))
}

/// Set where this node publishes (`rxnode node set-publish-ref shared|own`): the
/// node must have a name (its own ref is named after it); the change is in the
/// ledger. Returns the previous layout.
pub(crate) fn set_publish_ref(paths: &Paths, layout: PublishRef) -> Result<PublishRef> {
    let Some(mut f) = load_file(paths)? else {
        return Err(refused(format!(
            "this node has no name, and where it publishes is kept with its name; {}",
            set_name_fix(paths)
        )));
    };
    let old = f.publish_ref;
    if old != layout {
        f.publish_ref = layout;
        SEALED.write(paths, &paths.node_name(), &f)?;
    }
    let entry = Entry::new(Event::PublishRefSet {
        publish_ref: layout.as_str().to_owned(),
        previous: old.as_str().to_owned(),
        branch: layout.branch(&f.name),
    });
    if let Err(e) = ledger::append(paths, &entry) {
        tracing::warn!("cannot record where this node publishes in the ledger: {e:#}");
    }
    Ok(old)
}

/// The name to write into a result: the configured one; `None` when none is set or
/// the file is damaged (logged — `publish` then refuses with the reason).
pub(crate) fn name_for_result(paths: &Paths) -> Option<String> {
    match load_name(paths) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!("the result names no node: {e:#}");
            None
        }
    }
}

/// The name, or a refusal that says how to set it.
pub(crate) fn require_name(paths: &Paths, what: &str) -> Result<String> {
    load_name(paths)?.ok_or_else(|| {
        refused(format!(
            "this node has no name, so {what} could not say which node answered; {}",
            set_name_fix(paths)
        ))
    })
}

/// What to do when this checkout has no node name: set one — unless the checkout
/// is a linked Git worktree of an RX node, whose name, policy and state are in the
/// main work tree's `.local/` (each work tree has its own): then rxnode belongs
/// there, and a name set here would make a second node of the same repository.
pub(crate) fn set_name_fix(paths: &Paths) -> String {
    match crate::store::paths::worktree_of_node(&paths.repo) {
        Some(main) => format!(
            "this checkout is a linked Git worktree of the RX node {main}, and each work tree \
             keeps its own .local/ (the node's name, policy and state are in {local}) — \
             fix: run rxnode in {main} (`rxnode --repo {main} …`); a second node needs a clone \
             of its own (`git clone`), not a worktree that shares the node's branches",
            main = main.display(),
            local = main.join(".local").display()
        ),
        None => "set one once with `rxnode node set-name NAME` \
                 (1 to 32 of A-Z a-z 0-9 _ -, e.g. LAB-RX2)"
            .to_owned(),
    }
}

/// A refusal (exit 3) of `command` in a linked Git worktree of an RX node: its
/// `.local/` would be a second, empty one (no name, no policy, no state) deciding
/// and running the node's tasks in the node's repository.
pub(crate) fn refuse_worktree_of_node(paths: &Paths, command: &str) -> Result<()> {
    if crate::store::paths::worktree_of_node(&paths.repo).is_none() {
        return Ok(());
    }
    Err(refused(format!(
        "`rxnode {command}` not started, nothing was written: {}",
        set_name_fix(paths)
    )))
}

/// Set this node's name (the caller checked it with [`check_name`]): `.local/` made
/// ignored first, a damaged regular node file replaced, the change in the ledger.
/// `new_key`: a lost node key is replaced ([`crate::store::key::load_or_create_new`]).
/// Returns the previous name.
pub(crate) fn set_name(paths: &Paths, name: &str, new_key: bool) -> Result<Option<String>> {
    // A linked worktree of a node shares its repository (branches, remote refs):
    // named, it would be a second node fighting the first over them.
    refuse_worktree_of_node(paths, &format!("node set-name {name}"))?;
    // The node's checkout: `.local/` is made ignored before anything is written in it.
    let repo = crate::git::ops::open(&paths.repo)?;
    crate::git::ops::ensure_local_excluded(&repo)?;
    if std::fs::symlink_metadata(&paths.local).is_ok_and(|m| !m.is_dir()) {
        return Err(refused(format!(
            "{} is not a folder (a symlink is never trusted); nothing was written",
            paths.local.display()
        )));
    }
    // A lost node key is replaced only when asked, before anything is written.
    crate::store::key::load_or_create_new(paths, new_key)?;
    // A damaged or untrusted file is reported, not overwritten blindly — except that a
    // regular file that does not parse or is not sealed by this node is exactly what
    // set-name repairs.
    let old = match load_file(paths) {
        Ok(o) => o,
        Err(e) => {
            let p = paths.node_name();
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                tracing::warn!("replacing the damaged or untrusted node file: {e:#}");
                None
            } else {
                return Err(e);
            }
        }
    };
    // A rename keeps where the node publishes (a damaged file falls back to the default).
    let publish_ref = old.as_ref().map(|f| f.publish_ref).unwrap_or_default();
    let old = old.map(|f| f.name);
    let f = NodeFile {
        schema_version: 1,
        name: name.to_owned(),
        set_at: now_iso(),
        publish_ref,
    };
    crate::store::fsutil::create_local(&paths.local)?;
    SEALED.write(paths, &paths.node_name(), &f)?;
    let entry = Entry::new(Event::NodeNamed {
        name: name.to_owned(),
        previous: old.clone(),
    });
    if let Err(e) = ledger::append(paths, &entry) {
        tracing::warn!("cannot record the node name in the ledger: {e:#}");
    }
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern() {
        for ok in ["LAB-RX2", "a", "rx_1", &"x".repeat(32)] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "LAB RX",
            "lab/rx",
            "..",
            "é",
            "a.b",
            "x\n",
            &"x".repeat(33),
        ] {
            let e = check_name(bad).unwrap_err();
            assert!(e.contains("node name"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_damaged_unsealed_or_symlinked_file_is_an_error_not_no_name() {
        let d = tempfile::TempDir::new().unwrap();
        git2::Repository::init(d.path()).unwrap();
        let paths = Paths::new(d.path());
        assert_eq!(load_name(&paths).unwrap(), None);
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(paths.node_name(), "{").unwrap();
        assert!(load_name(&paths).is_err());
        // A well-formed name this node did not write (no node MAC): never used.
        std::fs::write(
            paths.node_name(),
            r#"{"schema_version":1,"name":"RX-9","set_at":"x"}"#,
        )
        .unwrap();
        let e = format!("{:#}", load_name(&paths).unwrap_err());
        assert!(
            e.contains("carries no node MAC") && e.contains("rxnode node set-name NAME"),
            "{e}"
        );
        // The fix: set-name writes it again, sealed.
        assert_eq!(set_name(&paths, "RX-1", false).unwrap(), None);
        assert_eq!(load_name(&paths).unwrap().as_deref(), Some("RX-1"));
        // The layout is the default until set, and survives a rename.
        assert_eq!(
            load_file(&paths).unwrap().unwrap().publish_ref,
            PublishRef::Shared
        );
        let shared = std::fs::read_to_string(paths.node_name()).unwrap();
        assert!(!shared.contains("publish_ref"), "{shared}");
        assert_eq!(
            set_publish_ref(&paths, PublishRef::Own).unwrap(),
            PublishRef::Shared
        );
        assert_eq!(
            set_name(&paths, "RX-2", false).unwrap().as_deref(),
            Some("RX-1")
        );
        assert_eq!(
            load_file(&paths).unwrap().unwrap().publish_ref,
            PublishRef::Own
        );
        assert_eq!(PublishRef::Own.branch("RX-2"), "rx-results/RX-2");
        #[cfg(unix)]
        {
            let other = d.path().join("elsewhere.json");
            std::fs::rename(paths.node_name(), &other).unwrap();
            std::os::unix::fs::symlink(&other, paths.node_name()).unwrap();
            assert!(load_name(&paths).is_err());
        }
    }
}
