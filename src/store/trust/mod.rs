//! The trust root (docs/safety.md).
//!
//! Everything the interlock trusts lives under `.local/` (or, for the policy,
//! where `--policy` / `RXNODE_POLICY` points). None of it may come from Git: a
//! plain `git pull` silently replaces an *ignored* file by a tracked one. So
//! before any command trusts a node-local file it runs [`verify`], which refuses
//! (exit 3, one line naming the path and the fix) when
//!
//! - anything under `.local/` (any letter case) is tracked in `HEAD` or the index;
//! - `.local`, the policy, the allowed signers, the state, the ledger, an outbox (or a file in it),
//!   `rx_iq` is a symlink (dangling or not) or not a regular file / directory;
//! - on unix: one of those files has more than one hard link or another owner,
//!   or the policy or `.local/allowed_signers` is writable by group/others;
//! - Git can see a file under `.local/` (asked about the actual files, with the
//!   ignore rules of `.gitignore`, `.git/info/exclude` and `core.excludesFile`),
//!   or a `.gitattributes` rule gives one a `filter` (asked of libgit2 and of
//!   Git's own rules, [`gitattributes`]);
//! - `.local` belongs to another work tree (Git's work tree is not the checkout,
//!   e.g. `core.worktree`, or `.local` holds a `.git` of its own);
//! - an explicit policy path lies inside the work tree but outside `.local/`.
//!
//!
//! [`files`] holds the file-level checks, [`repo`] the Git-level ones (and the
//! watched tip's and `capture --record`'s).
mod files;
mod gitattributes;
mod gitignore;
pub(crate) use gitignore::GitIgnores;
mod repo;
mod rules_file;

pub(crate) use repo::{check_created, check_record_target, check_watched_tip, visible_files};
use repo::{check_created_in, explicit_policy_finding};

use crate::store::fsutil::atomic_tmp;
use crate::store::paths::Paths;
use anyhow::Result;
use files::file_findings;
pub(crate) use files::signers_file_finding;
use git2::Repository;
use repo::git_findings;
use std::path::Path;

/// One reason not to trust the node-local files.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// What is wrong, naming the path.
    pub(crate) detail: String,
    /// One line on how to fix it.
    pub(crate) fix: String,
}

impl Finding {
    pub(super) fn new(detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            detail: detail.into(),
            fix: fix.into(),
        }
    }
}

/// Whether a path's first component names `.local` on some file system a
/// checkout may live on (a commit names it, the file system picks the folder):
/// any letter case (`.LOCAL`: Windows, macOS); with trailing dots or spaces
/// (`.local.`: Win32 drops them) or an NTFS stream (`.local::$INDEX_ALLOCATION`);
/// as a Windows 8.3 short name (`LOCAL~1`, or
/// the hashed form `LOxxxx~N` after four); with code points HFS+ ignores
/// (U+200C–U+200F, U+202A–U+202E, U+206A–U+206F, U+FEFF: `.lo\u{200c}cal`).
/// The rule, not the file system this runs on, decides: a checkout may be
/// moved to such a laptop.
pub(super) fn under_local(path: &[u8]) -> bool {
    let first = path.split(|&b| b == b'/').next().unwrap_or_default();
    let name: String = String::from_utf8_lossy(first)
        .chars()
        .filter(|&c| !hfs_ignored(c))
        .collect();
    // NTFS: `NAME:STREAM` (`.local::$INDEX_ALLOCATION`) is the folder NAME.
    let name = name.split(':').next().unwrap_or_default();
    let name = name.trim_end_matches(['.', ' ']);
    if name.eq_ignore_ascii_case(".local") {
        return true;
    }
    let Some((stem, n)) = name.split_once('~') else {
        return false;
    };
    let digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let hashed = stem.len() == 6
        && stem.is_char_boundary(2)
        && stem[..2].eq_ignore_ascii_case("lo")
        && stem[2..].bytes().all(|b| b.is_ascii_hexdigit());
    digits && (stem.eq_ignore_ascii_case("local") || hashed)
}

/// A code point HFS+ drops from a file name (Git's `next_hfs_char`).
fn hfs_ignored(c: char) -> bool {
    matches!(c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff)
}

/// Every problem, without changing anything (doctor).
pub(crate) fn findings(paths: &Paths) -> Vec<Finding> {
    let repo = Repository::open(&paths.repo).ok();
    findings_in(paths, repo.as_ref())
}

/// [`findings`] on a repository already open (`None`: not a checkout).
fn findings_in(paths: &Paths, repo: Option<&Repository>) -> Vec<Finding> {
    findings_after(file_findings(paths), paths, repo)
}

/// [`findings_in`] with the file-level findings `files` already made.
fn findings_after(files: Vec<Finding>, paths: &Paths, repo: Option<&Repository>) -> Vec<Finding> {
    let mut out = files;
    out.extend(explicit_policy_finding(paths));
    match repo {
        Some(repo) if !repo.is_bare() => out.extend(git_findings(paths, repo)),
        Some(_) => {}
        None => out.extend(enclosed_local_finding(paths)),
    }
    out
}

/// Outside a checkout's top, a `.local/` that lies inside a Git work tree (a
/// folder of a clone: `docs/.local/`) is a folder Git can write — a commit can
/// carry `docs/.local/rxnode-policy.json` — and none of the Git-level checks
/// apply to it there: refused, naming the work tree.
fn enclosed_local_finding(paths: &Paths) -> Option<Finding> {
    std::fs::symlink_metadata(&paths.local).ok()?;
    let top = crate::store::paths::enclosing_top(&paths.repo)?;
    Some(Finding::new(
        format!(
            "{} lies inside the Git work tree {}, not at its top: Git can write it (a commit can carry its policy)",
            paths.local.display(),
            top.display()
        ),
        format!(
            "run rxnode in the checkout's top ({}) or in a folder outside every checkout",
            top.display()
        ),
    ))
}

fn refusal(f: &Finding) -> anyhow::Error {
    crate::exit::refused(format!(
        "untrusted node-local files: {} — fix: {}",
        f.detail, f.fix
    ))
}

/// Every check as a refusal (exit 3), changing nothing.
pub(crate) fn verify(paths: &Paths) -> Result<()> {
    match findings(paths).first() {
        Some(f) => Err(refusal(f)),
        None => Ok(()),
    }
}

/// What a command runs before it trusts anything: keep `.local/` excluded
/// (`.git/info/exclude`, as `watch` always did), then [`verify`].
pub(crate) fn prepare(paths: &Paths) -> Result<()> {
    prepare_open(paths).map(|_| ())
}

/// [`prepare`], handing back the checkout it opened (`None` outside one) so the
/// checks that follow at once ([`check_created`]) need not open it again: each
/// open reads every Git config file, and a state update runs these checks
/// several times per watcher poll.
fn prepare_open(paths: &Paths) -> Result<Option<Repository>> {
    let mut repo = Repository::open(&paths.repo).ok();
    // Looked at once: the exclude file written below changes none of them.
    let files = file_findings(paths);
    if let Some(r) = &repo {
        if !r.is_bare() && files.is_empty() {
            // Only when .local is a folder of ours: never write through a link.
            match crate::git::ops::ensure_local_excluded(r) {
                // The exclude file changed under an open repository: ask a
                // fresh one, so no cached ignore rule answers for it.
                Ok(true) => repo = Repository::open(&paths.repo).ok(),
                Ok(false) => {}
                Err(e) => tracing::warn!("cannot keep .local/ out of Git: {e:#}"),
            }
        }
    }
    match findings_after(files, paths, repo.as_ref()).first() {
        Some(f) => Err(refusal(f)),
        None => Ok(repo),
    }
}

/// Take the exclusive OS lock `lock` that guards the `.local/` file `file`
/// (replaced through [`write_atomic`](crate::store::fsutil::write_atomic)),
/// after [`prepare`]: the lock, the file and its temporary file must be
/// ignored by Git before any of them is created, so a refusal writes nothing.
/// Released when the returned file is dropped.
pub(crate) fn lock_local_file(paths: &Paths, lock: &Path, file: &Path) -> Result<std::fs::File> {
    let repo = prepare_open(paths)?;
    check_created_in(
        paths,
        repo.as_ref(),
        &[lock.to_path_buf(), file.to_path_buf(), atomic_tmp(file)],
    )?;
    drop(repo);
    crate::store::fsutil::create_local(&paths.local)?;
    crate::store::fsutil::lock_exclusive(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_in_any_case_is_local() {
        assert!(under_local(b".local/x"));
        assert!(under_local(b".LOCAL/rx_agent_state.json"));
        assert!(under_local(b".Local"));
        assert!(!under_local(b"docs/.local/x"));
        assert!(!under_local(b".localx/y"));
    }

    /// Names a Windows or HFS+ file system folds into `.local`, judged by the
    /// rule on every OS; near misses are not.
    #[test]
    fn names_other_file_systems_fold_into_local_are_under_local() {
        for name in [
            "LOCAL~1/rxnode-policy.json",
            "local~12/x",
            "LO1A2B~1/x",
            ".local./x",
            ".local . /x",
            ".LOCAL /x",
            ".lo\u{200c}cal/x",
            "\u{feff}.local/x",
            ".local\u{206a}./x",
            ".local::$INDEX_ALLOCATION/x",
            "LOCAL~1:$DATA",
        ] {
            assert!(under_local(name.as_bytes()), "{name:?}");
        }
        for name in [
            "LOCAL/x",
            "local/x",
            "LOCAL~/x",
            "LOCAL~1a/x",
            "LOXYZW~1/x",
            "docs/LOCAL~1/x",
            ".lo\u{200b}cal/x",
            "..local/x",
            "x:.local/y",
        ] {
            assert!(!under_local(name.as_bytes()), "{name:?}");
        }
    }
}
