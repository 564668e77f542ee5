//! Colour for the operator's terminal: only when stdout is a terminal, `TERM`
//! is not `dumb`, and `NO_COLOR` is unset or empty (<https://no-color.org>);
//! and lines read from the operator.
//!
//! Every prompt goes through [`draw_prompt`] (or [`ask`], which draws and reads):
//! on a terminal an answer counts only if it was typed after the prompt was fully
//! drawn, so whatever was typed before is discarded (docs/safety.md#typed-ahead-input).
//! A pipe keeps every line it carries, in order (automation).
use std::io::IsTerminal;

/// Whether stdout should get ANSI colour.
pub(crate) fn stdout_colour() -> bool {
    allowed(
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
}

/// Whether stderr should get ANSI colour (it carries the report when stdout carries
/// samples).
pub(crate) fn stderr_colour() -> bool {
    allowed(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
}

/// Whether a progress bar may be drawn on stderr: a terminal whose `TERM` is not
/// `dumb`. A bar redraws its line with `\r` and an ANSI erase (`ESC [2K`), which
/// a dumb terminal (an editor's shell buffer, a serial console's log) prints as
/// text, one bar per redraw (docs/operator.md#progress). `NO_COLOR` leaves it on:
/// a bar has no colour.
pub(crate) fn stderr_progress() -> bool {
    progress_allowed(
        std::io::stderr().is_terminal(),
        std::env::var_os("TERM").as_deref(),
    )
}

fn progress_allowed(terminal: bool, term: Option<&std::ffi::OsStr>) -> bool {
    terminal && term.is_none_or(|t| t != "dumb")
}

fn allowed(
    terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty()) && term.is_none_or(|t| t != "dumb")
}

/// `word` left-aligned in `width` columns, coloured by what it says when
/// `colour` is on: PASS green, FAIL red, WARN/PARTIAL/BLOCKED yellow, others plain.
pub(crate) fn status(word: &str, width: usize, colour: bool) -> String {
    let padded = format!("{word:<width$}");
    if !colour {
        return padded;
    }
    let code = match word.trim_matches(|c: char| !c.is_ascii_alphabetic()) {
        "PASS" | "OK" => "32",
        "FAIL" | "FAILED" => "31",
        "WARN" | "PARTIAL" | "BLOCKED" | "HELD" => "33",
        _ => return padded,
    };
    // Colour only the word, so the padding stays plain.
    let pad = padded.len() - word.len();
    format!("\x1b[{code};1m{word}\x1b[0m{}", " ".repeat(pad))
}

/// Where a prompt is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum To {
    Stdout,
    Stderr,
}

/// Whether stdin is a terminal (an operator typing) rather than a pipe or file.
pub(crate) fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// Draw `prompt` on `to` and flush it; then, when stdin is a terminal, discard
/// every byte typed so far (the kernel's pending input; the console input buffer
/// or the MSYS/Cygwin terminal's pipe on Windows), so the next line read was typed
/// after the prompt was on the screen. Returns whether stdin is a terminal.
///
/// A terminal whose typed-ahead input cannot be discarded is an error: no line
/// read from it could be told apart from one typed before the prompt, so the
/// caller decides nothing (the watcher stops without a decision, `run` and
/// `publish` refuse) instead of taking a stale key as consent.
pub(crate) fn draw_prompt(prompt: &str, to: To) -> std::io::Result<bool> {
    let shell = crate::Shell::default();
    let _ = match to {
        To::Stdout => shell.out_plain(prompt),
        To::Stderr => shell.err(prompt, false),
    };
    let tty = stdin_is_terminal();
    if tty {
        // The prompt is on the screen only once the terminal has sent it (a serial
        // console takes its time): wait for that before dropping what was typed.
        #[cfg(unix)]
        drain_output(to);
        discard_typeahead().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot discard the input typed before the prompt on this terminal ({e}), \
                     so no answer read from it counts (docs/safety.md#typed-ahead-input)"
                ),
            )
        })?;
    }
    Ok(tty)
}

/// Draw `prompt` ([`draw_prompt`]) and read one line from stdin
/// ([`read_line_lossy`]): the one way a command asks the operator for a line.
pub(crate) fn ask(prompt: &str, to: To) -> std::io::Result<Option<String>> {
    draw_prompt(prompt, to)?;
    read_answer()
}

/// What [`ask_once`] read.
pub(crate) enum Once {
    /// A line (terminator stripped).
    Line(String),
    /// End of input before a line.
    Eof,
    /// Ctrl-C or a stop signal arrived while the prompt waited.
    Interrupted,
    /// stdin gave no line that can be an answer; why.
    Unreadable(String),
}

/// The way out of a prompt for an exact phrase left without it (a different
/// line, end of input, Ctrl-C): `command` again, then the phrase. The one place
/// that words it, so `run`'s `AUTHORIZE …` and `publish`'s `PUBLISH <ID>` name
/// the same next step; `--json` carries it as the error's `fix`.
pub(crate) fn retype_fix(command: &str, phrase: &str) -> String {
    format!(" — fix: `{command}` again, then type exactly `{phrase}` and Enter")
}

/// [`ask`] for a command that asks once (`run`'s `AUTHORIZE …`, `publish`'s
/// `PUBLISH <ID>`), woken by the process's signal handler (`crate::signals`): Ctrl-C
/// or SIGTERM ends the wait with [`Once::Interrupted`] instead of killing the
/// process, so the caller refuses, records and releases what it holds as for any
/// other answer. Without a signal handler, the plain read.
pub(crate) fn ask_once(prompt: &str, to: To) -> Once {
    let once = |r: std::io::Result<Option<String>>| match r {
        Ok(Some(l)) => Once::Line(l),
        Ok(None) => Once::Eof,
        Err(e) => Once::Unreadable(e.to_string()),
    };
    let (tx, rx) = std::sync::mpsc::channel::<Option<std::io::Result<Option<String>>>>();
    let on_signal = tx.clone();
    if crate::signals::subscribe(move || on_signal.send(None).is_ok()).is_err() {
        let answer = once(ask(prompt, to));
        end_prompt_line(prompt, to, &answer);
        return answer;
    }
    if crate::signals::received() {
        return Once::Interrupted;
    }
    if let Err(e) = draw_prompt(prompt, to) {
        return Once::Unreadable(e.to_string());
    }
    // The read blocks; a signal answers through the channel meanwhile.
    std::thread::spawn(move || {
        let _ = tx.send(Some(read_answer()));
    });
    let answer = match rx.recv() {
        Ok(Some(r)) => once(r),
        Ok(None) | Err(_) => Once::Interrupted,
    };
    end_prompt_line(prompt, to, &answer);
    answer
}

/// After Ctrl-D or Ctrl-C at a prompt that leaves the cursor on its line, the
/// terminal echoed no line end (`… to go ahead: ^C`): end that line, so what
/// the command says next starts a line of its own.
fn end_prompt_line(prompt: &str, to: To, answer: &Once) {
    if matches!(answer, Once::Eof | Once::Interrupted) && !prompt.ends_with('\n') {
        let shell = crate::Shell::default();
        let _ = match to {
            To::Stdout => shell.out_plain("\n"),
            To::Stderr => shell.err("\n", false),
        };
    }
}

/// Read one answer line from stdin ([`read_line_lossy`]). On a terminal (unix)
/// the bytes are taken one `read(2)` at a time straight from the descriptor, so
/// nothing past the line's end leaves the kernel's input queue, where the next
/// prompt's discard reaches it. A terminal in non-canonical mode (`stty -icanon`,
/// raw, as a crashed full-screen program leaves it) hands over every byte typed
/// so far, several lines at once: a buffer in this process would keep the lines
/// after the first as answers to later prompts, typed before those were drawn.
/// A pipe is read through the process's buffered stdin (every line counts).
///
/// On Windows the same holds for an MSYS/Cygwin terminal (mintty, Git Bash),
/// which hands a native program a pipe: it is read one byte per `ReadFile`. A
/// console hands over one line per read in its line mode.
pub(crate) fn read_answer() -> std::io::Result<Option<String>> {
    #[cfg(unix)]
    if stdin_is_terminal() {
        return read_line_lossy(&mut std::io::BufReader::with_capacity(1, TerminalIn));
    }
    #[cfg(windows)]
    if stdin_is_terminal() && win::stdin_is_pipe() {
        return read_line_lossy(&mut std::io::BufReader::with_capacity(1, win::PipeIn));
    }
    read_line_lossy(&mut std::io::stdin().lock())
}

/// The terminal on stdin, read at most one byte per call and never buffered.
#[cfg(unix)]
struct TerminalIn;

#[cfg(unix)]
impl std::io::Read for TerminalIn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(first) = buf.first_mut() else {
            return Ok(0);
        };
        // SAFETY: read(2) of at most one byte into a live, writable byte of `buf`.
        let n = unsafe { libc::read(libc::STDIN_FILENO, std::ptr::from_mut(first).cast(), 1) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            // What a terminal whose window was closed (a hang-up) answers a reader.
            if e.raw_os_error() == Some(libc::EIO) {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("the terminal was closed or hung up ({e})"),
                ));
            }
            return Err(e);
        }
        Ok(n.unsigned_abs())
    }
}

/// Wait until the terminal has sent everything written to `to` (`tcdrain`); a
/// stream that is not a terminal has nothing to wait for.
#[cfg(unix)]
fn drain_output(to: To) {
    let fd = match to {
        To::Stdout => libc::STDOUT_FILENO,
        To::Stderr => libc::STDERR_FILENO,
    };
    // SAFETY: isatty and tcdrain only read the descriptor number.
    if unsafe { libc::isatty(fd) } == 1 && unsafe { libc::tcdrain(fd) } != 0 {
        tracing::debug!(
            "tcdrain before the prompt's discard: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Drop the terminal input not read yet (`tcflush(TCIFLUSH)`).
#[cfg(unix)]
fn discard_typeahead() -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = std::io::stdin().as_raw_fd();
    // SAFETY: tcflush only reads the descriptor number; a bad one gives an error.
    if unsafe { libc::tcflush(fd, libc::TCIFLUSH) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Drop the console input not read yet (`FlushConsoleInputBuffer`); on an
/// MSYS/Cygwin terminal, whose input reaches a native program through a pipe,
/// every byte the pipe holds.
#[cfg(windows)]
fn discard_typeahead() -> std::io::Result<()> {
    let h = win::stdin_handle();
    // SAFETY: the handle is this process's stdin handle; a handle that is not a
    // console gives an error, nothing else.
    if unsafe { windows_sys::Win32::System::Console::FlushConsoleInputBuffer(h) } != 0 {
        return Ok(());
    }
    let console = std::io::Error::last_os_error();
    if !win::stdin_is_pipe() {
        return Err(console);
    }
    win::drain_pipe(h)
}

/// stdin on Windows when it is the pipe an MSYS/Cygwin terminal gives.
#[cfg(windows)]
mod win {
    use windows_sys::Win32::Foundation::HANDLE;

    /// The most typed-ahead bytes dropped from a terminal's pipe: far more than
    /// anyone types; a pipe that keeps delivering past it is not a person typing.
    const MAX_DISCARD: usize = 1 << 20;

    pub(super) fn stdin_handle() -> HANDLE {
        use std::os::windows::io::AsRawHandle;
        std::io::stdin().as_raw_handle() as HANDLE
    }

    /// Whether stdin is a pipe (what `is_terminal` calls a terminal only for an
    /// MSYS/Cygwin terminal's pipe).
    pub(super) fn stdin_is_pipe() -> bool {
        use windows_sys::Win32::Storage::FileSystem::{GetFileType, FILE_TYPE_PIPE};
        // SAFETY: GetFileType only reads the handle value.
        unsafe { GetFileType(stdin_handle()) == FILE_TYPE_PIPE }
    }

    /// stdin as a file, for reads, without taking ownership of the handle.
    fn stdin_file() -> std::mem::ManuallyDrop<std::fs::File> {
        use std::os::windows::io::FromRawHandle;
        // SAFETY: the handle is this process's stdin, open for the process's life;
        // `ManuallyDrop` keeps it from being closed here.
        std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_handle(stdin_handle()) })
    }

    /// Read and drop every byte the pipe `h` holds now, without waiting for more.
    pub(super) fn drain_pipe(h: HANDLE) -> std::io::Result<()> {
        use std::io::Read;
        use windows_sys::Win32::System::Pipes::PeekNamedPipe;
        let mut buf = [0u8; 4096];
        let mut dropped = 0usize;
        loop {
            let mut avail: u32 = 0;
            // SAFETY: no data buffer is passed (size 0); `avail` is a live u32.
            let ok = unsafe {
                PeekNamedPipe(
                    h,
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    &mut avail,
                    std::ptr::null_mut(),
                )
            };
            if ok == 0 {
                return Err(std::io::Error::last_os_error());
            }
            if avail == 0 {
                return Ok(());
            }
            if dropped >= MAX_DISCARD {
                return Err(std::io::Error::other(format!(
                    "more than {MAX_DISCARD} bytes wait on stdin"
                )));
            }
            let want = (avail as usize).min(buf.len());
            // The bytes are there (peeked), so this read does not wait.
            match stdin_file().read(&mut buf[..want])? {
                0 => return Ok(()),
                got => dropped += got,
            }
        }
    }

    /// The terminal's pipe on stdin, read at most one byte per call and never
    /// buffered, so what is past the answer's line stays for the next discard.
    pub(super) struct PipeIn;

    impl std::io::Read for PipeIn {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match buf.first_mut() {
                // A closed pipe reads as end of input.
                Some(first) => stdin_file().read(std::slice::from_mut(first)),
                None => Ok(0),
            }
        }
    }
}

/// Elsewhere there is no way to reach the terminal's input queue: nothing to drop.
#[cfg(not(any(unix, windows)))]
fn discard_typeahead() -> std::io::Result<()> {
    Ok(())
}

/// The longest line read as an answer, terminator included. Every phrase and
/// answer is a few dozen bytes; a longer line is never one of them.
pub(crate) const MAX_ANSWER_BYTES: usize = 4096;

/// Read one line; strip only the line terminator (`\n` or `\r\n`); `None` at
/// end of input — also when input ends in the middle of a line (a pipe whose
/// last line has no newline, Ctrl-D typed after some characters): what was not
/// ended with Enter is not an answer, so a phrase or an answer counts only once
/// its line is complete. Bytes that are not UTF-8 become U+FFFD, so such a line never
/// equals a phrase or an answer and is refused like any wrong one — it is
/// never mistaken for end of input. At most [`MAX_ANSWER_BYTES`] are read: a
/// longer line (a stream that never ends a line, such as `/dev/zero`) is an
/// `InvalidData` error naming the bound, and nothing more is read from it.
pub(crate) fn read_line_lossy(r: &mut impl std::io::BufRead) -> std::io::Result<Option<String>> {
    use std::io::{BufRead, Read};
    let mut raw = Vec::new();
    if Read::take(&mut *r, MAX_ANSWER_BYTES as u64).read_until(b'\n', &mut raw)? == 0 {
        return Ok(None);
    }
    if raw.len() == MAX_ANSWER_BYTES && raw.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a line longer than {MAX_ANSWER_BYTES} bytes is not an answer"),
        ));
    }
    if raw.last() != Some(&b'\n') {
        return Ok(None);
    }
    raw.pop();
    if raw.last() == Some(&b'\r') {
        raw.pop();
    }
    Ok(Some(String::from_utf8_lossy(&raw).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn no_color_and_pipes_turn_colour_off() {
        assert!(allowed(true, None, Some(OsStr::new("xterm"))));
        assert!(allowed(true, Some(OsStr::new("")), None));
        assert!(!allowed(true, Some(OsStr::new("1")), None));
        assert!(!allowed(false, None, None));
        assert!(!allowed(true, None, Some(OsStr::new("dumb"))));
        assert!(progress_allowed(true, Some(OsStr::new("xterm"))));
        assert!(progress_allowed(true, None));
        assert!(!progress_allowed(true, Some(OsStr::new("dumb"))));
        assert!(!progress_allowed(false, Some(OsStr::new("xterm"))));
    }

    #[test]
    fn statuses_are_painted_and_padded() {
        assert_eq!(status("PASS", 6, false), "PASS  ");
        assert_eq!(status("PASS", 6, true), "\x1b[32;1mPASS\x1b[0m  ");
        assert_eq!(status("FAIL", 4, true), "\x1b[31;1mFAIL\x1b[0m");
        assert_eq!(status("SKIP", 6, true), "SKIP  ");
        assert_eq!(status("NOT RUN", 4, true), "NOT RUN");
    }
}

#[cfg(test)]
mod line_tests {
    use super::read_line_lossy;

    #[test]
    fn only_the_terminator_is_stripped_and_bad_bytes_are_not_eof() {
        let mut r = std::io::Cursor::new(b"AUTHORIZE RF TX \r\n\xff\xfe\nlast".to_vec());
        assert_eq!(
            read_line_lossy(&mut r).unwrap().as_deref(),
            Some("AUTHORIZE RF TX ")
        );
        assert_eq!(
            read_line_lossy(&mut r).unwrap().as_deref(),
            Some("\u{fffd}\u{fffd}")
        );
        // A last line without its terminator is end of input, not an answer.
        assert_eq!(read_line_lossy(&mut r).unwrap(), None);
        let mut r = std::io::Cursor::new(b"AUTHORIZE RF TX".to_vec());
        assert_eq!(read_line_lossy(&mut r).unwrap(), None);
        assert_eq!(read_line_lossy(&mut r).unwrap(), None);
    }

    #[test]
    fn a_line_past_the_bound_is_an_error_and_is_not_read_to_its_end() {
        let limit = super::MAX_ANSWER_BYTES;
        // The longest line that fits: its terminator is the last byte read.
        let mut fits = vec![b'x'; limit - 1];
        fits.push(b'\n');
        let mut r = std::io::Cursor::new(fits);
        assert_eq!(
            read_line_lossy(&mut r).unwrap().map(|l| l.len()),
            Some(limit - 1)
        );
        // One byte more: refused, naming the bound, after reading only the bound.
        let mut r = std::io::Cursor::new(vec![0u8; 64 * limit]);
        let e = read_line_lossy(&mut r).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains(&limit.to_string()), "{e}");
        assert_eq!(r.position(), limit as u64);
    }
}

/// On an MSYS/Cygwin terminal (mintty, Git Bash) a native program's stdin is a
/// pipe named `msys-…-pty…`: typed-ahead lines must be dropped there too.
#[cfg(all(test, windows))]
mod msys_terminal_tests {
    use super::{draw_prompt, read_answer, stdin_is_terminal, To};
    use std::io::Write;
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::Foundation::{GENERIC_READ, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, OPEN_EXISTING, PIPE_ACCESS_OUTBOUND,
    };
    use windows_sys::Win32::System::Console::{GetStdHandle, SetStdHandle, STD_INPUT_HANDLE};
    use windows_sys::Win32::System::Pipes::{CreateNamedPipeW, PIPE_TYPE_BYTE, PIPE_WAIT};

    #[test]
    fn lines_typed_before_a_prompt_on_an_msys_terminal_answer_nothing() {
        let name: Vec<u16> = format!(
            r"\\.\pipe\msys-1888ae32e00d56aa-pty{}-from-master",
            std::process::id()
        )
        .encode_utf16()
        .chain([0])
        .collect();
        // SAFETY: a NUL-terminated name; no security attributes.
        let server = unsafe {
            CreateNamedPipeW(
                name.as_ptr(),
                PIPE_ACCESS_OUTBOUND,
                PIPE_TYPE_BYTE | PIPE_WAIT,
                1,
                4096,
                4096,
                0,
                std::ptr::null(),
            )
        };
        assert_ne!(
            server,
            INVALID_HANDLE_VALUE,
            "{}",
            std::io::Error::last_os_error()
        );
        // SAFETY: the same name; the client end is this process's new stdin.
        let client = unsafe {
            CreateFileW(
                name.as_ptr(),
                GENERIC_READ,
                0,
                std::ptr::null(),
                OPEN_EXISTING,
                0,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(
            client,
            INVALID_HANDLE_VALUE,
            "{}",
            std::io::Error::last_os_error()
        );
        // SAFETY: `server` is a handle this test owns from here on.
        let mut keys = unsafe { std::fs::File::from_raw_handle(server) };
        // SAFETY: GetStdHandle/SetStdHandle take and give handle values only.
        let before = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
        assert_ne!(unsafe { SetStdHandle(STD_INPUT_HANDLE, client) }, 0);

        keys.write_all(b"a\ns\n").unwrap();
        assert!(stdin_is_terminal(), "an msys pty pipe is a terminal");
        let first = draw_prompt("", To::Stderr);
        keys.write_all(b"d\nq\n").unwrap();
        let answer = read_answer();
        // What is past the answer's line stays in the pipe for the next prompt's discard.
        let second = draw_prompt("", To::Stderr);
        keys.write_all(b"x\n").unwrap();
        let next = read_answer();

        // SAFETY: the handle value saved above; the client handle is closed once.
        unsafe {
            SetStdHandle(STD_INPUT_HANDLE, before);
            drop(std::fs::File::from_raw_handle(client));
        }
        assert!(first.unwrap(), "the prompt saw a terminal");
        assert_eq!(answer.unwrap().as_deref(), Some("d"));
        assert!(second.unwrap());
        assert_eq!(next.unwrap().as_deref(), Some("x"));
    }
}
