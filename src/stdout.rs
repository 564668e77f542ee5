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
#[cfg(not(test))]
use std::io::Write as _;

/// Write `args` (and a newline when `newline`) to stdout under one lock. A closed
/// pipe unwinds with its `io::Error` (no panic hook, no message); any other write
/// error panics as std's `println!` does.
#[cfg(not(test))] // tests keep std's macros
pub(crate) fn write_out(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = std::io::stdout().lock();
    let written = out.write_fmt(args).and_then(|()| {
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
