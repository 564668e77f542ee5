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
//!
//! Writing has the matching door, [`open_regular_write`]: the same non-blocking
//! open and the same look at what was opened, so a FIFO, a device, a socket or a
//! folder at an output's name is refused naming what it is — opening a FIFO for
//! writing would otherwise wait for a reader for ever. The one deliberate FIFO
//! writer, a recording streamed to another program, opens through
//! [`open_fifo_write`], which never waits either. See docs/operator.md#files-rxnode-writes.
use std::fs::File;
use std::io::{self, Read, Write};
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

/// How [`open_regular_write`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// A new file: anything already at the name (of any kind) is `AlreadyExists`.
    CreateNew,
    /// Create it, or empty the regular file there.
    Truncate,
    /// Create it, or open the regular file there as it is (a lock file).
    Keep,
    /// Open the regular file there as it is; `NotFound` when there is none.
    Existing,
}

/// Open `path` for writing if it is (or becomes) a regular file; anything else
/// is an error wrapping [`NotRegular`], and the open never blocks (a FIFO with
/// no reader is refused at once, one with a reader after the look). `private`:
/// a file it creates is readable by its owner only (mode 600 on unix).
pub fn open_regular_write(path: &Path, mode: WriteMode, private: bool) -> io::Result<File> {
    let f = match open_write(path, mode, private) {
        Ok(f) => f,
        // A FIFO without a reader (ENXIO), a folder (EISDIR), a socket: say what it is.
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            return Err(match std::fs::metadata(path) {
                Ok(m) if !m.is_file() => refuse(kind_of(&m.file_type())),
                _ => e,
            })
        }
        Err(e) => return Err(e),
    };
    check_written(&f)?;
    Ok(f)
}

/// Create (or empty) the regular file `path` and write `bytes` into it:
/// [`std::fs::write`] through [`open_regular_write`].
pub fn write_regular(path: &Path, bytes: &[u8]) -> io::Result<()> {
    open_regular_write(path, WriteMode::Truncate, false)?.write_all(bytes)
}

/// Open the FIFO `path` for writing a stream to the program that reads it,
/// without waiting: `Ok(None)` while no program has it open for reading (try
/// again later), the FIFO (its writes blocking as usual) once one has. Anything
/// but a FIFO is an error wrapping [`NotRegular`]'s kind. Unix only; elsewhere
/// an `Unsupported` error (no FIFO lives in a Windows file system).
pub fn open_fifo_write(path: &Path) -> io::Result<Option<File>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let f = match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                return match std::fs::metadata(path) {
                    Ok(m) if m.file_type().is_fifo() => Ok(None),
                    Ok(m) => Err(refuse(kind_of(&m.file_type()))),
                    Err(_) => Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let t = f.metadata()?.file_type();
        if !t.is_fifo() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "not a FIFO: {}",
                    if t.is_file() {
                        "a regular file"
                    } else {
                        kind_of(&t)
                    }
                ),
            ));
        }
        blocking_again(&f)?;
        Ok(Some(f))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no FIFO on this system",
        ))
    }
}

#[cfg(unix)]
fn open_write(path: &Path, mode: WriteMode, private: bool) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = write_options(mode);
    if private {
        o.mode(0o600);
    }
    o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)
}

#[cfg(windows)]
fn open_write(path: &Path, mode: WriteMode, _private: bool) -> io::Result<File> {
    // A folder cannot be opened as a file here (access is denied): say what it is.
    if mode != WriteMode::CreateNew && std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(refuse("a directory"));
    }
    write_options(mode).open(path)
}

#[cfg(not(any(unix, windows)))]
fn open_write(path: &Path, mode: WriteMode, _private: bool) -> io::Result<File> {
    // No non-blocking open here: look first, then look again at what was opened.
    if mode != WriteMode::CreateNew {
        if let Ok(m) = std::fs::metadata(path) {
            if !m.is_file() {
                return Err(refuse(kind_of(&m.file_type())));
            }
        }
    }
    write_options(mode).open(path)
}

fn write_options(mode: WriteMode) -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    match mode {
        WriteMode::CreateNew => o.create_new(true),
        WriteMode::Truncate => o.create(true).truncate(true),
        WriteMode::Keep => o.create(true).truncate(false),
        WriteMode::Existing => &mut o,
    };
    o
}

/// What [`open_write`] opened must be a regular file (on Windows a disk file);
/// on unix its writes block again as usual.
fn check_written(f: &File) -> io::Result<()> {
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            GetFileType, FILE_TYPE_CHAR, FILE_TYPE_DISK, FILE_TYPE_PIPE,
        };
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
    }
    let t = f.metadata()?.file_type();
    if !t.is_file() {
        return Err(refuse(kind_of(&t)));
    }
    #[cfg(unix)]
    blocking_again(f)?;
    Ok(())
}

/// Clear `O_NONBLOCK` on an opened file: the open had it so as not to wait,
/// the writes after it wait as usual.
#[cfg(unix)]
fn blocking_again(f: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: `fd` is the open file's own descriptor, valid while `f` lives;
    // F_GETFL / F_SETFL only read and set its status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;

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

    #[cfg(unix)]
    fn mkfifo(p: &Path) {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    /// The write door refuses a FIFO without a reader and one with a reader, a
    /// device and a folder, each by its kind and at once (opening a FIFO for
    /// writing plainly waits for a reader); a regular file is written, and a
    /// new one made private when asked.
    #[cfg(unix)]
    #[test]
    fn the_write_door_refuses_what_is_not_a_regular_file_without_blocking() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("out.csv");
        mkfifo(&fifo);
        let (tx, rx) = std::sync::mpsc::channel();
        let f2 = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(write_regular(&f2, b"x").map_err(|e| not_regular(&e)));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("writing a FIFO without a reader returned (did not block)");
        assert_eq!(
            got,
            Err(Some(NotRegular {
                kind: "a pipe or FIFO"
            }))
        );
        // A reader there: the open succeeds, what it opened is refused.
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        for mode in [WriteMode::Truncate, WriteMode::Keep, WriteMode::Existing] {
            let e = open_regular_write(&fifo, mode, false).unwrap_err();
            assert_eq!(not_regular(&e).map(|n| n.kind), Some("a pipe or FIFO"));
        }
        drop(held);
        let e = open_regular_write(&fifo, WriteMode::CreateNew, false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let e = write_regular(Path::new("/dev/null"), b"x").unwrap_err();
        assert_eq!(not_regular(&e).map(|n| n.kind), Some("a character device"));
        let e = write_regular(d.path(), b"x").unwrap_err();
        assert_eq!(not_regular(&e).map(|n| n.kind), Some("a directory"));
        let p = d.path().join("ok.txt");
        write_regular(&p, b"hello").unwrap();
        write_regular(&p, b"hi").unwrap();
        assert_eq!(read_regular(&p).unwrap(), b"hi");
        let k = d.path().join("key");
        drop(open_regular_write(&k, WriteMode::CreateNew, true).unwrap());
        assert_eq!(
            std::fs::metadata(&k).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    /// A FIFO opened to stream into: `None` while nobody reads it (never a wait),
    /// the FIFO once a program does; a regular file is no FIFO.
    #[cfg(unix)]
    #[test]
    fn a_stream_fifo_is_opened_only_with_a_reader() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("iq");
        mkfifo(&fifo);
        assert!(open_fifo_write(&fifo).unwrap().is_none());
        let mut reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let mut w = open_fifo_write(&fifo).unwrap().expect("a reader is there");
        w.write_all(b"iq").unwrap();
        let mut got = [0u8; 2];
        reader.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"iq");
        let p = d.path().join("plain");
        std::fs::write(&p, b"").unwrap();
        assert!(open_fifo_write(&p).is_err());
    }
}
