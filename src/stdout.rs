//! Standard output for the commands' reports. Inside this library `println!` and
//! `print!` are the two macros below: they write to stdout exactly as std's do,
//! and when the reader has gone (a closed pipe: `rxnode status | head -1`) they
//! unwind with that [`std::io::Error`] as the payload rather than std's panic
//! text. `main` finds `io::ErrorKind::BrokenPipe` in it by kind, as it does in an
//! error's chain, and ends quietly with status 0; every drop guard (the TX
//! teardown among them) runs on the way out. Tests keep std's macros, whose
//! output the test harness captures.
#[cfg(not(test))]
use std::fmt;
#[cfg_attr(test, allow(unused_imports))]
use std::io::Write as _;

/// The colour sequences rxnode itself writes (`crate::term::status`): the only
/// escape sequences that reach a terminal raw, and only when colour is on.
const OWN_COLOURS: [&str; 4] = ["\x1b[31;1m", "\x1b[32;1m", "\x1b[33;1m", "\x1b[0m"];

/// Text as it may reach a terminal, the last step before stdout and stderr:
/// every character [`rxnode_interlock::needs_escape`] flags that an earlier
/// escape let through (a server's error text, a peer's ref name) becomes a
/// `\uXXXX` escape — the JSON form, so a JSON document stays valid and means
/// the same — except a newline, a tab, and with `colour` rxnode's own colours.
/// The usual place to escape outside text is where it is shown
/// ([`rxnode_interlock::escaped`]); this door makes sure nothing raw is missed.
pub(crate) fn terminal_safe(s: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    if !s
        .chars()
        .any(|c| c != '\n' && c != '\t' && rxnode_interlock::needs_escape(c))
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && colour {
            if let Some(own) = OWN_COLOURS.iter().find(|o| rest.starts_with(**o)) {
                out.push_str(own);
                rest = &rest[own.len()..];
                continue;
            }
        }
        if c != '\n' && c != '\t' && rxnode_interlock::needs_escape(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Write `args` (and a newline when `newline`) to stderr under one lock, made
/// [`terminal_safe`]; a failed write is ignored (there is nowhere left to say it).
#[cfg(not(test))]
pub(crate) fn write_err(args: fmt::Arguments<'_>, newline: bool) {
    let text = fmt::format(args);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(terminal_safe(&text, false).as_bytes());
    if newline {
        let _ = err.write_all(b"\n");
    }
}

/// Write `args` (and a newline when `newline`) to stdout under one lock. A closed
/// pipe unwinds with its `io::Error` (no panic hook, no message); any other write
/// error panics as std's `println!` does.
#[cfg(not(test))] // tests keep std's macros
pub(crate) fn write_out(args: fmt::Arguments<'_>, newline: bool) {
    let text = fmt::format(args);
    let safe = terminal_safe(&text, crate::term::stdout_colour());
    let mut out = std::io::stdout().lock();
    let written = out.write_all(safe.as_bytes()).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::panic::resume_unwind(Box::new(e));
        }
        panic!("failed printing to stdout: {e}");
    }
}

/// Whether a panic's payload is a closed pipe on stdout ([`write_out`]).
pub fn is_broken_pipe_payload(payload: &(dyn std::any::Any + Send)) -> bool {
    payload
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// `println!` for this library: std's, but a closed pipe unwinds with its
/// `io::Error` ([`write_out`]).
#[cfg(not(test))]
macro_rules! println {
    () => {
        $crate::stdout::write_out(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write_out(format_args!($($arg)*), true)
    };
}

/// `print!` for this library, as [`println!`] without the newline.
#[cfg(not(test))]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::stdout::write_out(format_args!($($arg)*), false)
    };
}

/// `eprintln!` for this library: std's, made [`terminal_safe`] ([`write_err`]).
#[cfg(not(test))]
macro_rules! eprintln {
    () => {
        $crate::stdout::write_err(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write_err(format_args!($($arg)*), true)
    };
}

/// `eprint!` for this library, as [`eprintln!`] without the newline.
#[cfg(not(test))]
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::stdout::write_err(format_args!($($arg)*), false)
    };
}

/// Stderr for the log (`tracing`): each write made [`terminal_safe`], so a
/// logged value from outside (a server's error text) reaches the terminal escaped.
#[derive(Debug, Clone, Copy, Default)]
pub struct SafeStderr;

impl std::io::Write for SafeStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr()
            .lock()
            .write_all(terminal_safe(&text, false).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn nothing_raw_reaches_a_terminal_but_lines_tabs_and_own_colours() {
        let hostile = "a\x1b[2J b\u{9b}31m c\x07 d\u{202e}e\u{7f}\n\tf";
        assert_eq!(
            terminal_safe(hostile, true),
            "a\\u001b[2J b\\u009b31m c\\u0007 d\\u202ee\\u007f\n\tf"
        );
        assert_eq!(
            terminal_safe("\x1b[32;1mPASS\x1b[0m", true),
            "\x1b[32;1mPASS\x1b[0m"
        );
        assert_eq!(
            terminal_safe("\x1b[32;1mPASS\x1b[0m", false),
            "\\u001b[32;1mPASS\\u001b[0m"
        );
        // A JSON document stays valid and means the same.
        let doc = serde_json::json!({"m": "x\u{9b}\u{202e}\u{e0001}"}).to_string();
        let safe = terminal_safe(&doc, false);
        assert!(
            safe.chars().all(|c| !rxnode_interlock::needs_escape(c)),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["m"], "x\u{9b}\u{202e}\u{e0001}");
    }
}
