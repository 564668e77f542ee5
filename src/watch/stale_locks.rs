//! Git lock files left by a killed watcher's fetch.
use super::loud_in;
use crate::git::ops;
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use git2::Repository;
use std::time::Duration;

/// Remove the Git lock files that a killed watcher's fetch left behind (a
/// SIGKILL or power loss mid-fetch leaves e.g. `.git/shallow.lock`, and every
/// later fetch fails on it). Called only when this watcher took the
/// single-watcher lock over from `dead`, a dead rxnode on this host. Only the
/// files our own fetch creates ([`ops::fetch_lock_files`]) are candidates,
/// and one is removed only when it was last modified before this watcher
/// started taking its lock (or at a time still to come: the clock was stepped
/// back since), no process on this host has it open (Linux), and it
/// is unchanged a moment later — a live `git fetch` of the operator's holds its
/// ref locks for milliseconds and moves or drops them. Each removal is said on
/// stderr and in the ledger (`git_lock_removed`). See docs/reliability.md.
pub(super) fn clear_stale_fetch_locks(
    paths: &Paths,
    repo: &Repository,
    cfg: &crate::context::TaskSource,
    dead: &crate::store::lock::Holder,
    started: std::time::SystemTime,
    shell: crate::Shell,
) -> Result<()> {
    let seen = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| Some((m.modified().ok()?, m.len())))
    };
    let candidates: Vec<_> = ops::fetch_lock_files(repo, &cfg.remote, &cfg.branch)
        .into_iter()
        .filter_map(|p| seen(&p).map(|s| (p, s)))
        .filter(|(_, (mtime, _))| left_before(*mtime, started, std::time::SystemTime::now()))
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    std::thread::sleep(Duration::from_millis(300));
    for (p, first) in candidates {
        if seen(&p) != Some(first) || open_by_a_process(&p) {
            continue; // somebody is at work on it: leave it (the fetch error names it)
        }
        let modified = time::OffsetDateTime::from(first.0)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        loud_in(
            shell,
            format!(
                "warning: removing stale Git lock {} (modified {modified}, before this watcher \
             started; not open by any process) left by the killed {dead}",
                p.display()
            ),
        );
        ledger::append(
            paths,
            &Entry::new(Event::GitLockRemoved {
                path: p.display().to_string(),
                modified: modified.clone(),
                previous_holder: dead.clone(),
            }),
        )?;
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("cannot remove stale {}", p.display()))
            }
        }
    }
    Ok(())
}

/// Whether a lock file modified at `mtime` was there before this watcher started
/// taking its lock at `started`: modified before then, or after `now` (a wall
/// clock stepped back since it was written: a fetch running now would stamp its
/// lock with the clock as it is now, not with a time still to come).
fn left_before(
    mtime: std::time::SystemTime,
    started: std::time::SystemTime,
    now: std::time::SystemTime,
) -> bool {
    mtime < started || mtime > now + Duration::from_secs(2)
}

/// Whether a process on this host has `p` open (libgit2 keeps a lock file open
/// while it writes it). Linux only (`/proc`); elsewhere, and for processes we
/// may not inspect, it answers `false`, leaving the other checks.
fn open_by_a_process(p: &std::path::Path) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(target) = std::fs::canonicalize(p) else {
        return false;
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|proc_| {
        std::fs::read_dir(proc_.path().join("fd")).is_ok_and(|fds| {
            fds.flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == target))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::left_before;
    use std::time::{Duration, SystemTime};

    /// A lock stamped before the watcher started, or in the future (the clock was
    /// stepped back since it was written), was left before; one stamped between
    /// the start and now may be a live fetch's.
    #[test]
    fn a_lock_from_before_the_start_or_from_the_future_was_left_before() {
        let now = SystemTime::now();
        let started = now - Duration::from_secs(1);
        assert!(left_before(started - Duration::from_secs(60), started, now));
        assert!(left_before(now + Duration::from_secs(3600), started, now));
        assert!(!left_before(now, started, now));
        assert!(!left_before(
            started + Duration::from_millis(500),
            started,
            now
        ));
    }
}
