//! Crash-safe file writes: temp file in the same folder, flush + fsync, atomic rename.
use anyhow::{Context, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The bytes of a small node-local file, `None` when there is none. A file that is
/// not a regular file (a symlink or folder is never trusted) or is over `max` bytes
/// is a refusal naming it; `fix` (if any) says what the operator does about it.
pub(crate) fn read_small_regular(
    p: &Path,
    max: u64,
    what: &str,
    fix: Option<&str>,
) -> Result<Option<Vec<u8>>> {
    let meta = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if !meta.is_file() {
        let fix = fix.map(|f| format!("; {f}")).unwrap_or_default();
        return Err(crate::exit::refused(format!(
            "{} is not a regular file (a symlink or folder is never trusted){fix}",
            p.display()
        )));
    }
    if meta.len() > max {
        return Err(crate::exit::refused(format!(
            "{} is {} bytes; a {what} is at most {max}",
            p.display(),
            meta.len()
        )));
    }
    let mut buf = Vec::new();
    std::io::Read::take(read_open(p)?, max.saturating_add(1))
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read {}", p.display()))?;
    if buf.len() as u64 > max {
        return Err(crate::exit::refused(format!(
            "{} is more than {max} bytes; a {what} is at most {max}",
            p.display()
        )));
    }
    Ok(Some(buf))
}

/// `p` opened for reading when it is a regular file: never a link (at the final
/// name), a FIFO or a device, and the open does not block on one.
fn read_open(p: &Path) -> Result<std::fs::File> {
    rxnode_dsp::open_regular_nofollow(p).map_err(|e| match rxnode_dsp::not_regular(&e) {
        Some(n) => crate::exit::refused(format!(
            "{} is not a regular file ({}; a symlink or folder is never trusted)",
            p.display(),
            n.kind
        )),
        None => anyhow::Error::new(e).context(format!("cannot read {}", p.display())),
    })
}

/// The bytes of a file rxnode reads: [`std::fs::read`], but a FIFO, a device, a
/// socket or a folder is an error (`not a regular file: …`), never waited on or
/// read without end (docs/operator.md#files-rxnode-reads). `NotFound` stays
/// `NotFound`.
pub(crate) fn read(p: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    rxnode_dsp::read_regular(p.as_ref())
}

/// [`read`] as UTF-8 text.
pub(crate) fn read_to_string(p: impl AsRef<Path>) -> std::io::Result<String> {
    rxnode_dsp::read_regular_to_string(p.as_ref())
}

/// [`read`]'s open: the file, when it is a regular file.
pub(crate) fn open(p: impl AsRef<Path>) -> std::io::Result<std::fs::File> {
    rxnode_dsp::open_regular(p.as_ref())
}

/// Why a file the operator named (a task, a result, a policy, a note) was not read.
#[derive(Debug)]
pub(crate) enum NamedFileError {
    /// It cannot be looked at (not there, no permission).
    Missing(std::io::Error),
    /// A folder, FIFO, device or socket: never read (a FIFO or a device could
    /// block or stream for ever).
    NotRegular,
    /// Over the limit: its size, or `None` when it grew past the limit while read.
    TooBig {
        /// Bytes, as its size said.
        len: Option<u64>,
        /// The limit.
        max: u64,
    },
    /// Opening or reading it failed.
    Io(std::io::Error),
}

impl std::fmt::Display for NamedFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NamedFileError::Missing(e) => write!(f, "cannot read: {e}"),
            NamedFileError::NotRegular => f.write_str("not a regular file"),
            NamedFileError::TooBig { len: Some(n), max } => {
                write!(f, "{n} bytes; at most {max}")
            }
            NamedFileError::TooBig { len: None, max } => write!(f, "more than {max} bytes"),
            NamedFileError::Io(e) => write!(f, "cannot read: {e}"),
        }
    }
}

/// The bytes of a file the operator named, at most `max`: the one bounded
/// reader behind every such argument. Opened without blocking and looked at
/// (`rxnode_dsp::open_regular`): a FIFO or a device is refused before anything is
/// read (reading one may never end), also one swapped in meanwhile; a regular
/// file over `max` is refused by its size, and read through `take(max + 1)` so
/// one that grows meanwhile is refused too.
pub(crate) fn read_named_file(path: &Path, max: u64) -> Result<Vec<u8>, NamedFileError> {
    use std::io::Read;
    let f = rxnode_dsp::open_regular(path).map_err(|e| {
        if rxnode_dsp::not_regular(&e).is_some() {
            NamedFileError::NotRegular
        } else if matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
        ) {
            NamedFileError::Missing(e)
        } else {
            NamedFileError::Io(e)
        }
    })?;
    let len = f.metadata().map_err(NamedFileError::Io)?.len();
    if len > max {
        return Err(NamedFileError::TooBig {
            len: Some(len),
            max,
        });
    }
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    f.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(NamedFileError::Io)?;
    if buf.len() as u64 > max {
        return Err(NamedFileError::TooBig { len: None, max });
    }
    Ok(buf)
}

/// Every file rxnode writes is opened through one door,
/// `rxnode_dsp::open_regular_write`: a FIFO, a device, a socket or a folder at
/// the name is refused (naming what it is) instead of waited on
/// (docs/operator.md#files-rxnode-writes).
fn open_write(path: &Path, mode: rxnode_dsp::WriteMode) -> Result<std::fs::File> {
    rxnode_dsp::open_regular_write(path, mode, false).map_err(|e| {
        match rxnode_dsp::not_regular(&e) {
            Some(n) => crate::exit::refused(format!(
                "cannot write {}: it is {}, not a regular file",
                path.display(),
                n.kind
            )),
            None => anyhow::Error::new(e).context(format!("cannot create {}", path.display())),
        }
    })
}

/// Create (or truncate) `path` with `bytes`, flushed and fsynced.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = open_write(path, rxnode_dsp::WriteMode::Truncate)?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Create `path` (it must not exist; a link there is not followed) with
/// `bytes`, flushed and fsynced.
fn write_new_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = open_write(path, rxnode_dsp::WriteMode::CreateNew)?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Open (creating) `path` and take the OS's exclusive lock on it, waiting
/// for it; the kernel drops the lock with the returned file, also if the
/// process dies.
pub(crate) fn lock_exclusive(path: &Path) -> Result<std::fs::File> {
    let f = open_write(path, rxnode_dsp::WriteMode::Keep)?;
    f.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(f)
}

/// Create the checkout's `.local/` (and its parents) when missing. On Windows a
/// new `.local` gets a protected owner-only DACL, inherited by everything rxnode
/// writes in it, so no other user may read or write the node's files
/// (docs/safety.md#windows); on unix the files keep their own modes.
pub(crate) fn create_local(local: &Path) -> Result<()> {
    #[cfg(windows)]
    let existed = std::fs::symlink_metadata(local).is_ok();
    std::fs::create_dir_all(local).with_context(|| format!("cannot create {}", local.display()))?;
    #[cfg(windows)]
    if !existed {
        crate::store::winsec::set_owner_only(local, true)
            .with_context(|| format!("cannot make {} private to this user", local.display()))?;
    }
    Ok(())
}

/// Whether `md` (from `symlink_metadata`) is a link: a symlink, and on Windows
/// any reparse point (a junction too).
pub(crate) fn is_link(md: &std::fs::Metadata) -> bool {
    #[cfg(windows)]
    if crate::store::winsec::is_reparse_point(md) {
        return true;
    }
    md.file_type().is_symlink()
}

/// Make a rename in `dir` durable (unix; a no-op elsewhere).
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The temporary file [`write_atomic`] writes `path` through (`.<name>.tmp-<pid>`
/// beside it): what a caller checks Git ignores before the first write.
pub(crate) fn atomic_tmp(path: &Path) -> PathBuf {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    dir.join(format!(".{name}.tmp-{}", std::process::id()))
}

/// Create the folder `dir` and its parents. When a path on the way is a file, the
/// error names it (`x.png is not a folder`) instead of the system's `File exists`.
pub(crate) fn create_folder(dir: &Path) -> Result<()> {
    let Err(e) = std::fs::create_dir_all(dir) else {
        return Ok(());
    };
    let blocker = dir
        .ancestors()
        .find(|a| !a.as_os_str().is_empty() && std::fs::metadata(a).is_ok_and(|m| !m.is_dir()));
    match blocker {
        Some(b) if b == dir => Err(anyhow::anyhow!(
            "cannot create folder {}: it is a file, not a folder",
            dir.display()
        )),
        Some(b) => Err(anyhow::anyhow!(
            "cannot create folder {}: {} is a file, not a folder",
            dir.display(),
            b.display()
        )),
        None => Err(e).with_context(|| format!("cannot create {}", dir.display())),
    }
}

/// Atomically replace `path` with `bytes` (portable: `std::fs::rename`
/// replaces an existing file on Windows too). A failed write leaves no temp file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    create_folder(dir)?;
    let tmp = atomic_tmp(path);
    // A leftover of this PID (or a planted link) is removed, then the temp file
    // is created new: never written through a link.
    let _ = std::fs::remove_file(&tmp);
    let done = write_new_synced(&tmp, bytes).and_then(|()| {
        std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))
    });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done?;
    sync_dir(dir);
    Ok(())
}

/// [`write_atomic`] for an output that must not replace anything: the file
/// appears whole or not at all, and only where nothing is (see [`place_new`]).
pub(crate) fn write_atomic_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    create_folder(dir)?;
    let tmp = atomic_tmp(path);
    let _ = std::fs::remove_file(&tmp);
    let done = write_new_synced(&tmp, bytes).and_then(|()| place_new(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Put the finished file `tmp` at `path` only if nothing is there, never
/// replacing what another program (another rxnode naming the same output)
/// wrote while this command ran: a hard link, which fails when the name is
/// taken, then `tmp` removed. On a file system without hard links (FAT, exFAT,
/// some network shares) the bytes are copied into a file created new there
/// (docs/operator.md#files-rxnode-writes).
pub(crate) fn place_new(tmp: &Path, path: &Path) -> Result<()> {
    let taken = || {
        anyhow::anyhow!(
            "{} appeared while this command ran (another program wrote it): not replaced; \
             choose another name, or --force to overwrite it",
            path.display()
        )
    };
    match std::fs::hard_link(tmp, path) {
        Ok(()) => {
            let _ = std::fs::remove_file(tmp);
            sync_dir(path.parent().unwrap_or_else(|| Path::new(".")));
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(tmp);
            Err(taken())
        }
        Err(_) => {
            let bytes = read(tmp).with_context(|| format!("cannot read {}", tmp.display()))?;
            let _ = std::fs::remove_file(tmp);
            match rxnode_dsp::open_regular_write(path, rxnode_dsp::WriteMode::CreateNew, false) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(taken()),
                Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
                Ok(mut f) => f
                    .write_all(&bytes)
                    .and_then(|()| f.sync_all())
                    .with_context(|| format!("cannot write {}", path.display())),
            }
        }
    }
}

/// Now, as ISO 8601 with offset, seconds precision (UTC, `+00:00`).
pub(crate) fn now_iso() -> String {
    iso_utc(time::OffsetDateTime::now_utc())
}

/// A time as every record and report writes one: ISO 8601 UTC, seconds, `+00:00`.
pub(crate) fn iso_utc(t: time::OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let fmt =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]+00:00");
    t.format(&fmt)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder that cannot be made because a path on the way is a file says which.
    #[test]
    fn a_folder_through_a_file_names_the_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x.png");
        std::fs::write(&f, b"png").unwrap();
        let e = format!("{:#}", create_folder(&f).unwrap_err());
        assert_eq!(
            e,
            format!(
                "cannot create folder {}: it is a file, not a folder",
                f.display()
            )
        );
        let e = format!("{:#}", create_folder(&f.join("sub")).unwrap_err());
        assert!(
            e.ends_with(&format!("{} is a file, not a folder", f.display())),
            "{e}"
        );
        create_folder(&d.path().join("a/b")).unwrap();
        assert!(d.path().join("a/b").is_dir());
    }

    /// The helper the state lock and the watcher lock's guard share: held
    /// while the file lives, free again once it is dropped.
    #[test]
    fn lock_exclusive_holds_until_dropped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.lock");
        let held = lock_exclusive(&p).unwrap();
        let other = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        assert!(other.try_lock().is_err());
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
