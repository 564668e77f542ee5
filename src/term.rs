//! Colour for the operator's terminal: only when stdout is a terminal, `TERM`
//! is not `dumb`, and `NO_COLOR` is unset or empty (<https://no-color.org>);
//! and lines read from the operator.
use std::io::IsTerminal;

/// Whether stdout should get ANSI colour.
pub(crate) fn stdout_colour() -> bool {
    allowed(
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
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

/// Read one line; strip only the line terminator (`\n` or `\r\n`); `None` at
/// end of input. Bytes that are not UTF-8 become U+FFFD, so such a line never
/// equals a phrase or an answer and is refused like any wrong one — it is
/// never mistaken for end of input.
pub(crate) fn read_line_lossy(r: &mut impl std::io::BufRead) -> std::io::Result<Option<String>> {
    let mut raw = Vec::new();
    if r.read_until(b'\n', &mut raw)? == 0 {
        return Ok(None);
    }
    if raw.last() == Some(&b'\n') {
        raw.pop();
        if raw.last() == Some(&b'\r') {
            raw.pop();
        }
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
        assert_eq!(read_line_lossy(&mut r).unwrap().as_deref(), Some("last"));
        assert_eq!(read_line_lossy(&mut r).unwrap(), None);
    }
}
