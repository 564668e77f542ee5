//! Temporary files an rxnode process left behind when it was killed (SIGKILL,
//! power loss) between writing a file under its temporary name and renaming it
//! into place (docs/reliability.md#temporary-files-of-a-killed-command).
//!
//! Only rxnode's own temporaries are touched, in rxnode's own folders, and only
//! those of a process that is no longer running on this host:
//!
//! - `.<NAME>.tmp-<PID>` and `.<NAME>.tmp-<PID>.png` files (what every atomic write
//!   and every picture goes through) directly in `.local/`, in each outbox folder
//!   `.local/rx_agent_outbox/<ID>/` and in `<git dir>/rxnode/`;
//! - `.tmp-<ID>-<PID>` folders in `.local/rx_agent_outbox/` (an approval's outbox
//!   being written).
//!
//! A link of such a name is never followed nor removed, nor is anything of another
//! shape (a `mark-completed` staging folder `.tmp-<ID>.mark-completed` is evidence
//! of an unfinished command and is left to that command).
use crate::store::paths::Paths;
use std::path::{Path, PathBuf};

/// The PID in an atomic write's temporary file name `.<NAME>.tmp-<PID>` or
/// `.<NAME>.tmp-<PID>.png`, `NAME` not empty.
fn file_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (stem, pid) = rest.rsplit_once(".tmp-")?;
    let pid = pid.strip_suffix(".png").unwrap_or(pid);
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// The PID in an approval's temporary outbox folder name `.tmp-<ID>-<PID>`,
/// `<ID>` a valid task ID.
fn folder_pid(name: &str) -> Option<u32> {
    let (id, pid) = name.strip_prefix(".tmp-")?.rsplit_once('-')?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rxnode_interlock::TaskId::parse(id).ok()?;
    pid.parse().ok()
}

/// What a dead PID's temporary in `dir` is: `Some(true)` a folder, `Some(false)`
/// a regular file, `None` not ours to remove (a link, another shape, a live PID,
/// this process).
fn leftover(entry: &std::fs::DirEntry, folders: bool) -> Option<bool> {
    let name = entry.file_name();
    let name = name.to_str()?;
    let pid = if folders {
        folder_pid(name)?
    } else {
        file_pid(name)?
    };
    if pid == std::process::id() || crate::store::lock::pid_alive(pid) {
        return None;
    }
    // `DirEntry::file_type` does not follow links.
    let t = entry.file_type().ok()?;
    if crate::store::fsutil::is_link(&std::fs::symlink_metadata(entry.path()).ok()?) {
        return None;
    }
    match (folders, t.is_dir(), t.is_file()) {
        (true, true, _) => Some(true),
        (false, _, true) => Some(false),
        _ => None,
    }
}

/// Remove the dead processes' temporaries in `dir` (files, or with `folders` the
/// outbox's temporary folders); each removed path is pushed to `out`.
fn clear_in(dir: &Path, folders: bool, out: &mut Vec<PathBuf>) {
    let Ok(list) = std::fs::read_dir(dir) else {
        return;
    };
    for e in list.flatten() {
        let gone = match leftover(&e, folders) {
            // `remove_dir_all` removes links inside as links, never what they name.
            Some(true) => std::fs::remove_dir_all(e.path()),
            Some(false) => std::fs::remove_file(e.path()),
            None => continue,
        };
        if gone.is_ok() {
            out.push(e.path());
        }
    }
}

/// Remove every temporary file and folder of an rxnode process that has ended
/// (see the module text); returns what was removed.
pub(crate) fn clear(paths: &Paths) -> Vec<PathBuf> {
    let mut out = Vec::new();
    clear_in(&paths.local, false, &mut out);
    let root = paths.outbox_root();
    clear_in(&root, true, &mut out);
    if let Ok(list) = std::fs::read_dir(&root) {
        for e in list.flatten() {
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            let name = e.file_name();
            let task = name
                .to_str()
                .is_some_and(|n| rxnode_interlock::TaskId::parse(n).is_ok());
            if is_dir && task {
                clear_in(&e.path(), false, &mut out);
            }
        }
    }
    if paths.is_checkout_local() {
        if let Ok(Some(git)) = crate::store::paths::git_dir(&paths.repo) {
            clear_in(&git.join("rxnode"), false, &mut out);
        }
    }
    out
}

/// [`clear`], said on stderr in one line when anything was removed.
pub(crate) fn clear_and_say(paths: &Paths) {
    let gone = clear(paths);
    if gone.is_empty() {
        return;
    }
    let shown: Vec<String> = gone
        .iter()
        .map(|p| {
            p.strip_prefix(&paths.repo)
                .unwrap_or(p)
                .display()
                .to_string()
        })
        .collect();
    note!(
        "rxnode: removed {} temporary file(s) left by an rxnode process that was killed before it \
         renamed them into place (nothing reads them): {}",
        gone.len(),
        shown.join(", ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PID no process has: the largest PID Linux hands out is below 2^22.
    const DEAD: u32 = 4_000_000;

    /// A `run` killed between writing a result file under its temporary name and
    /// renaming it left `.RX_RESULT.md.tmp-<pid>` (and the state's, the progress
    /// file's, a picture's, the ledger checkpoint's, an approval's folder) for good.
    /// The next command removes those of a process that has ended — and only those:
    /// a live process's temporary, a link of such a name, a name of another shape and
    /// a `mark-completed` staging folder stay.
    #[test]
    fn temporaries_of_a_killed_rxnode_are_removed_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let id = rxnode_interlock::TaskId::parse("T1").unwrap();
        let outbox = paths.outbox(&id);
        std::fs::create_dir_all(&outbox).unwrap();
        let me = std::process::id();
        let dead = [
            outbox.join(format!(".RX_RESULT.md.tmp-{DEAD}")),
            outbox.join(format!(".RX_RESULT.json.tmp-{DEAD}")),
            outbox.join(format!(".SPECTRUM_1.tmp-{DEAD}.png")),
            paths.local.join(format!(".rx_agent_state.json.tmp-{DEAD}")),
            paths
                .local
                .join(format!(".rx_run_progress.json.tmp-{DEAD}")),
        ];
        let kept = [
            outbox.join(format!(".RX_RESULT.md.tmp-{me}")),
            outbox.join(".RX_RESULT.md.tmp-12x"),
            outbox.join(format!("RX_RESULT.md.tmp-{DEAD}")),
            outbox.join(format!("..tmp-{DEAD}")),
            paths.local.join(format!("notes.tmp-{DEAD}")),
        ];
        for p in dead.iter().chain(&kept) {
            std::fs::write(p, b"half").unwrap();
        }
        let folder = paths.outbox_root().join(format!(".tmp-T2-{DEAD}"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("TASK.md"), b"half").unwrap();
        let staging = paths.outbox_root().join(".tmp-T1.mark-completed");
        std::fs::create_dir(&staging).unwrap();
        #[cfg(unix)]
        let link = {
            let target = d.path().join("elsewhere");
            std::fs::write(&target, b"not rxnode's").unwrap();
            let l = outbox.join(format!(".RX_RESULT.json.tmp-{}", DEAD + 1));
            std::os::unix::fs::symlink(&target, &l).unwrap();
            (l, target)
        };
        let gone = clear(&paths);
        for p in dead.iter().chain([&folder]) {
            assert!(!p.exists(), "{} was kept", p.display());
            assert!(gone.contains(p), "{} not said: {gone:?}", p.display());
        }
        for p in kept.iter().chain([&staging]) {
            assert!(p.exists(), "{} was removed", p.display());
        }
        #[cfg(unix)]
        {
            assert!(
                std::fs::symlink_metadata(&link.0).is_ok(),
                "the link was removed"
            );
            assert!(link.1.exists(), "what the link names was removed");
        }
        assert_eq!(gone.len(), dead.len() + 1, "{gone:?}");
        assert!(clear(&paths).is_empty());
    }

    #[test]
    fn names_of_temporaries() {
        assert_eq!(file_pid(".RX_RESULT.md.tmp-12"), Some(12));
        assert_eq!(file_pid(".SPECTRUM_1.tmp-12.png"), Some(12));
        assert_eq!(file_pid(".x.tmp-"), None);
        assert_eq!(file_pid("x.tmp-12"), None);
        assert_eq!(file_pid("..tmp-12"), None);
        assert_eq!(folder_pid(".tmp-T-1-77"), Some(77));
        assert_eq!(folder_pid(".tmp-T1.mark-completed"), None);
        assert_eq!(folder_pid(".tmp--77"), None);
    }
}
