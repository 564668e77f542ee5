//! Git access through git2 (never the `git` program).
//!
//! Everything here reads from or adds to the object database and remote-tracking
//! refs only: no checkout, no change to HEAD, the index or the work tree.
//! [`remote`] holds the fetch and the remote callbacks, [`history`] the blob
//! and history reads; the publisher and the executor reuse [`open`],
//! [`fetch`] and [`read_blob_at`].
mod deadline;
mod history;
pub(crate) mod packs;
mod remote;
pub(crate) mod tls;

pub(crate) use history::{
    commit, entry_at, is_ancestor_within, is_strict_ancestor, last_change, merge_base_within,
    not_an_ancestor_reason, oversized, oversized_on_chain, path_blocked, read_blob_at,
    task_history, tree, walk_bytes_budget, Blob, History, Version,
};
pub(crate) use remote::{
    credentials_callback, fetch, fetch_bounded, fetch_lock_files, missing_local_remote,
    oversized_advertised, redact, remote_callbacks, remote_callbacks_for, set_timeouts,
    tracking_ref, FetchFailure,
};

use anyhow::{Context, Result};
use git2::Repository;
use std::path::Path;

/// The remote `name` of `repo`; a name the checkout does not have is bad input
/// (exit 2) with the fix, in plain words.
pub(crate) fn find_remote<'r>(repo: &'r Repository, name: &str) -> Result<git2::Remote<'r>> {
    match repo.find_remote(name) {
        Ok(r) => Ok(r),
        Err(e)
            if e.code() == git2::ErrorCode::NotFound || e.class() == git2::ErrorClass::Config =>
        {
            let known: Vec<String> = repo
                .remotes()
                .map(|r| r.iter().flatten().map(str::to_owned).collect())
                .unwrap_or_default();
            Err(crate::exit::bad_input(if known.is_empty() {
                format!(
                    "no remote named {name:?}: this checkout has no remote — fix: add it with `git remote add {name} URL`"
                )
            } else {
                format!(
                    "no remote named {name:?} in this checkout (it has: {}) — fix: pass --remote with one of those, or add it with `git remote add {name} URL`",
                    known.join(", ")
                )
            }))
        }
        Err(e) => Err(anyhow::anyhow!(
            "cannot read remote {name:?}: {}",
            e.message()
        )),
    }
}

/// The name after `prefix` of a branch among a remote's advertised `heads` that
/// differs from `own` only in letter case (one ref file on a Windows or macOS
/// main PC), if there is one.
pub(crate) fn advertised_case_twin(
    heads: &[git2::RemoteHead<'_>],
    prefix: &str,
    own: &str,
) -> Option<String> {
    heads.iter().find_map(|h| {
        h.name()
            .strip_prefix(prefix)
            .filter(|n| rxnode_interlock::same_folder(n, own))
            .map(str::to_owned)
    })
}

/// That `repo` is a checkout (not bare), for the commands that keep the node's
/// record in it; the error names the folder and the fix.
pub fn require_checkout(repo: &Path) -> Result<()> {
    open(repo).map(drop)
}

/// When opening the repository at `repo` failed because a path is longer than
/// Git (libgit2) opens on Windows — 260 characters (`MAX_PATH`), counting the
/// files inside `.git` — the error that says so and how to fix it; `None` for
/// any other failure. Such a folder is a Git checkout, only too deep for Git.
pub(crate) fn path_too_long(repo: &Path, e: &git2::Error) -> Option<anyhow::Error> {
    if e.class() != git2::ErrorClass::Filesystem || !e.message().starts_with("path too long") {
        return None;
    }
    Some(anyhow::anyhow!(
        "{} cannot be opened by Git: {} — on Windows Git (libgit2) opens no path longer than \
         260 characters (MAX_PATH), counting the files inside .git — fix: move the clone to \
         a shorter folder (e.g. C:\\lab\\rx) and pass that with --repo",
        repo.display(),
        e.message()
    ))
}

/// Open the checkout (`--repo`); a bare repository is refused because the
/// node needs a work tree for `.local/`.
pub(crate) fn open(repo: &Path) -> Result<Repository> {
    let r = match Repository::open(repo) {
        Ok(r) => r,
        Err(e) => {
            if let Some(top) = crate::store::paths::enclosing_top(repo) {
                return Err(crate::exit::bad_input(format!(
                    "{} is a folder inside the Git checkout {}, not its top — fix: run rxnode in {} or pass --repo {}",
                    repo.display(),
                    top.display(),
                    top.display(),
                    top.display()
                )));
            }
            if let Some(long) = path_too_long(repo, &e) {
                return Err(long);
            }
            let msg = format!(
                "{} is not a Git checkout ({}) — fix: run rxnode inside the RX clone or pass it with --repo DIR; make one with `git clone URL DIR`",
                repo.display(),
                e.message()
            );
            // No repository there is bad usage (the folder given or the one rxnode
            // was started in); one that exists and cannot be opened is a failure.
            return Err(if e.code() == git2::ErrorCode::NotFound {
                crate::exit::bad_input(msg)
            } else {
                anyhow::anyhow!(msg)
            });
        }
    };
    if r.is_bare() {
        return Err(crate::exit::bad_input(format!(
            "{} is a bare repository; rxnode needs a checkout",
            repo.display()
        )));
    }
    Ok(r)
}

/// Make sure `.local/` is ignored by a rule of this node's own: append
/// `/.local/` to the exclude file (`info/exclude` in the repository's common
/// Git directory, which Git also reads for linked work trees) unless that file
/// already holds the line — whatever a committed `.gitignore` says, since the
/// branch can delete its line at any time. Returns whether the file changed.
pub(crate) fn ensure_local_excluded(repo: &Repository) -> Result<bool> {
    let info = repo.commondir().join("info");
    let p = info.join("exclude");
    let mut text = match crate::store::fsutil::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if text.lines().any(|l| l.trim_end() == "/.local/") {
        return Ok(false);
    }
    std::fs::create_dir_all(&info).with_context(|| format!("cannot create {}", info.display()))?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# rxnode local state (never in Git)\n/.local/\n");
    crate::store::fsutil::write_atomic(&p, text.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libgit2's "path too long" (Windows' 260 characters) is said as such, with the
    /// fix, and never as "not a Git checkout"; any other error is left alone.
    #[test]
    fn a_path_too_long_for_git_on_windows_says_so_and_how_to_fix_it() {
        let repo = Path::new("C:/deep/rx");
        let long = git2::Error::new(
            git2::ErrorCode::GenericError,
            git2::ErrorClass::Filesystem,
            "path too long: 'C:/deep/rx/.git/'",
        );
        let msg = format!("{:#}", path_too_long(repo, &long).unwrap());
        assert!(msg.contains("C:/deep/rx cannot be opened by Git"), "{msg}");
        assert!(msg.contains("260 characters (MAX_PATH)"), "{msg}");
        assert!(msg.contains("move the clone to a shorter folder"), "{msg}");
        assert!(!msg.contains("not a Git checkout"), "{msg}");
        let other = git2::Error::new(
            git2::ErrorCode::NotFound,
            git2::ErrorClass::Repository,
            "could not find repository",
        );
        assert!(path_too_long(repo, &other).is_none());
    }

    #[test]
    fn exclude_is_added_once() {
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        assert!(ensure_local_excluded(&repo).unwrap());
        assert!(!ensure_local_excluded(&repo).unwrap());
        let text = std::fs::read_to_string(repo.path().join("info/exclude")).unwrap();
        assert_eq!(text.matches("/.local/").count(), 1);
    }

    /// A committed `.gitignore` that ignores `.local/` is the branch's to
    /// delete: the exclude file gets its own `/.local/` line anyway.
    #[test]
    fn exclude_is_written_even_when_a_gitignore_already_ignores_local() {
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        std::fs::write(d.path().join(".gitignore"), "/.local/\n").unwrap();
        assert!(repo.is_path_ignored(".local/").unwrap());
        assert!(ensure_local_excluded(&repo).unwrap());
        let text = std::fs::read_to_string(repo.path().join("info/exclude")).unwrap();
        assert!(text.lines().any(|l| l == "/.local/"), "{text}");
        std::fs::remove_file(d.path().join(".gitignore")).unwrap();
        let repo = Repository::open(d.path()).unwrap();
        assert!(repo.is_path_ignored(".local/rx_agent_state.json").unwrap());
    }
}
