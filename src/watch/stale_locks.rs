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
/// back since), it is unchanged a moment later, and no process on this host has
/// it open ([`Unopened::claim`]: Linux and Windows; elsewhere nothing is removed) — a live `git fetch` of the operator's holds its
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
        if seen(&p) != Some(first) {
            continue; // somebody is at work on it: leave it (the fetch error names it)
        }
        let Some(unopened) = Unopened::claim(&p) else {
            continue; // open by a process, or no way to tell: leave it (the fetch error names it)
        };
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
        match unopened.remove(&p) {
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

/// A lock file no process on this host has open, claimed for its removal.
/// Linux: no `/proc/*/fd` entry names it (processes we may not inspect are not
/// seen). Windows: it was opened with no sharing at all, which Windows refuses
/// (`ERROR_SHARING_VIOLATION`) while any process has it open to read, write or
/// delete it — libgit2 and Git keep their lock files open while they write
/// them — and the handle is kept, so that no process can open it until it is
/// removed through that same handle. Elsewhere there is no way to tell: never
/// claimed, the file is left and the fetch error names it.
struct Unopened {
    #[cfg(windows)]
    handle: std::fs::File,
}

impl Unopened {
    #[cfg(target_os = "linux")]
    fn claim(p: &std::path::Path) -> Option<Unopened> {
        let target = std::fs::canonicalize(p).ok()?;
        let procs = std::fs::read_dir("/proc").ok()?;
        let open = procs.flatten().any(|proc_| {
            std::fs::read_dir(proc_.path().join("fd")).is_ok_and(|fds| {
                fds.flatten()
                    .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == target))
            })
        });
        (!open).then_some(Unopened {})
    }

    #[cfg(windows)]
    fn claim(p: &std::path::Path) -> Option<Unopened> {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            DELETE, FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES, FILE_SHARE_NONE,
        };
        // No sharing: refused while any other handle may read, write or delete it.
        std::fs::OpenOptions::new()
            .access_mode(DELETE | FILE_READ_ATTRIBUTES)
            .share_mode(FILE_SHARE_NONE)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(p)
            .ok()
            .map(|handle| Unopened { handle })
    }

    #[cfg(not(any(target_os = "linux", windows)))]
    fn claim(_p: &std::path::Path) -> Option<Unopened> {
        None
    }

    /// Remove the claimed file (Windows: through the claiming handle).
    #[cfg(not(windows))]
    fn remove(self, p: &std::path::Path) -> std::io::Result<()> {
        std::fs::remove_file(p)
    }

    #[cfg(windows)]
    fn remove(self, _p: &std::path::Path) -> std::io::Result<()> {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            FileDispositionInfo, SetFileInformationByHandle, FILE_DISPOSITION_INFO,
        };
        let info = FILE_DISPOSITION_INFO { DeleteFile: true };
        // SAFETY: the handle is open with DELETE access; `info` is a
        // FILE_DISPOSITION_INFO of the size given. The file goes when the handle
        // closes, at the end of this call.
        let ok = unsafe {
            SetFileInformationByHandle(
                self.handle.as_raw_handle(),
                FileDispositionInfo,
                std::ptr::from_ref(&info).cast(),
                std::mem::size_of::<FILE_DISPOSITION_INFO>() as u32,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{left_before, Unopened};
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

    /// A lock file another handle has open (as libgit2 and Git keep theirs
    /// while they write them) is not claimed; once it is closed it is, and it
    /// is removed (Windows: run under Wine by scripts/check-windows.sh).
    #[cfg(any(target_os = "linux", windows))]
    #[test]
    fn a_lock_file_open_by_a_process_is_not_claimed_for_removal() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("shallow.lock");
        let open =
            rxnode_dsp::open_regular_write(&p, rxnode_dsp::WriteMode::CreateNew, false).unwrap();
        assert!(Unopened::claim(&p).is_none(), "claimed while open");
        assert!(p.exists());
        drop(open);
        let claimed = Unopened::claim(&p).expect("a closed lock file is claimed");
        claimed.remove(&p).unwrap();
        assert!(!p.exists(), "the claimed lock file is removed");
    }
}
