//! Opening a file for reading only when it is a regular file: the one door every
//! file rxnode reads goes through (a recording, a SigMF meta, a task, a result, a
//! policy, a calibration, the node's own state).
//!
//! A FIFO, a device, a socket or a folder is refused before anything is read from
//! it, and the open itself cannot block on one: on unix the file is opened with
//! `O_NONBLOCK` (opening a FIFO without a writer, or a serial line without
//! carrier, returns at once) and `O_NOCTTY`, and what was opened is then looked
//! at (`fstat`), so a FIFO swapped in after any earlier look is refused too, never
//! waited on. `O_NONBLOCK` has no effect on a regular file's reads. On Windows the
//! opened handle must be a disk file (`GetFileType`), which a named pipe, a
//! console or a serial port is not. See docs/operator.md#files-rxnode-reads.
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Why a path was not opened: it is not a regular file (the `io::Error` of kind
/// `InvalidInput` that [`open_regular`] returns wraps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotRegular {
    /// What it is, in words: `a pipe or FIFO`, `a character device`, `a directory`…
    pub kind: &'static str,
}

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a regular file: {}", self.kind)
    }
}

impl std::error::Error for NotRegular {}

/// The [`NotRegular`] inside an error from [`open_regular`] or [`read_regular`],
/// when that is why it failed.
pub fn not_regular(e: &io::Error) -> Option<NotRegular> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<NotRegular>())
        .copied()
}

fn refuse(kind: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NotRegular { kind })
}

/// Open `path` for reading if it is a regular file (a symlink to one is followed);
/// anything else is an error wrapping [`NotRegular`], and the open never blocks.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open(path, false)
}

/// [`open_regular`], but a symlink (on Windows any reparse point) at the final
/// name is refused, never followed.
pub fn open_regular_nofollow(path: &Path) -> io::Result<File> {
    open(path, true)
}

/// The bytes of a regular file: [`std::fs::read`] that refuses a FIFO, a device,
/// a socket or a folder instead of blocking on it or reading it without end.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut f = open_regular(path)?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// [`read_regular`] as UTF-8 text (an `InvalidData` error when it is not).
pub fn read_regular_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()))
}

#[cfg(unix)]
fn open(path: &Path, nofollow: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if nofollow {
        flags |= libc::O_NOFOLLOW;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_file() {
        return Ok(f);
    }
    Err(refuse(kind_of(&t)))
}

#[cfg(windows)]
fn open(path: &Path, nofollow: bool) -> io::Result<File> {
    use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        GetFileType, FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_OPEN_REPARSE_POINT, FILE_TYPE_CHAR,
        FILE_TYPE_DISK, FILE_TYPE_PIPE,
    };
    // A folder cannot be opened as a file here (access is denied): say what it is.
    // (No FIFO lives in a Windows file system, so this look races with nothing
    // that could block.)
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(refuse("a directory"));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    if nofollow {
        o.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let f = o.open(path)?;
    // SAFETY: the handle is the open file's own, valid while `f` lives;
    // GetFileType only reads its type.
    let ft = unsafe { GetFileType(f.as_raw_handle()) };
    if ft != FILE_TYPE_DISK {
        return Err(refuse(match ft {
            FILE_TYPE_PIPE => "a pipe or FIFO",
            FILE_TYPE_CHAR => "a character device",
            _ => "a pipe, FIFO or device",
        }));
    }
    let md = f.metadata()?;
    if nofollow && md.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refuse("a symlink or junction"));
    }
    if !md.is_file() {
        return Err(refuse(kind_of(&md.file_type())));
    }
    Ok(f)
}

#[cfg(not(any(unix, windows)))]
fn open(path: &Path, nofollow: bool) -> io::Result<File> {
    // No non-blocking open here: look first, then look again at what was opened.
    let md = if nofollow {
        std::fs::symlink_metadata(path)?
    } else {
        std::fs::metadata(path)?
    };
    if !md.is_file() {
        return Err(refuse(kind_of(&md.file_type())));
    }
    let f = File::open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_file() {
        return Ok(f);
    }
    Err(refuse(kind_of(&t)))
}

/// What a file that is not a regular file is, in words.
pub(crate) fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        return "a directory";
    }
    if t.is_symlink() {
        return "a symlink";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a pipe or FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a pipe, FIFO or device"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A regular file is read whole; a folder is refused with its kind.
    #[test]
    fn a_regular_file_is_read_and_a_folder_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.txt");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_regular(&p).unwrap(), b"hello");
        assert_eq!(read_regular_to_string(&p).unwrap(), "hello");
        let e = read_regular(d.path()).unwrap_err();
        assert_eq!(not_regular(&e).map(|n| n.kind), Some("a directory"));
        assert_eq!(e.to_string(), "not a regular file: a directory");
        let missing = read_regular(&d.path().join("none")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(not_regular(&missing).is_none());
    }

    /// A FIFO with no writer is refused at once (opening it plainly would wait for
    /// a writer for ever), and so is a character device that never ends.
    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_and_a_device_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("meta.sigmf-meta");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let f2 = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular(&f2).map_err(|e| not_regular(&e)));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("reading a FIFO without a writer returned (did not block)");
        assert_eq!(
            got,
            Err(Some(NotRegular {
                kind: "a pipe or FIFO"
            }))
        );
        let e = read_regular(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(not_regular(&e).map(|n| n.kind), Some("a character device"));
    }

    /// The no-follow open refuses a symlink at the final name; the plain one follows it.
    #[cfg(unix)]
    #[test]
    fn nofollow_refuses_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("real");
        std::fs::write(&p, b"x").unwrap();
        let l = d.path().join("link");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert!(open_regular(&l).is_ok());
        assert!(open_regular_nofollow(&l).is_err());
        assert!(open_regular_nofollow(&p).is_ok());
    }
}
