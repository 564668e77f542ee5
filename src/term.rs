//! Colour for the operator's terminal: only when stdout is a terminal, `TERM`
//! is not `dumb`, and `NO_COLOR` is unset or empty (<https://no-color.org>).
use std::io::IsTerminal;

/// Whether stdout should get ANSI colour.
pub fn stdout_colour() -> bool {
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
/// `colour` is on: PASS green, FAIL red, PARTIAL/BLOCKED yellow, others plain.
pub fn status(word: &str, width: usize, colour: bool) -> String {
    let padded = format!("{word:<width$}");
    if !colour {
        return padded;
    }
    let code = match word.trim_matches(|c: char| !c.is_ascii_alphabetic()) {
        "PASS" | "OK" => "32",
        "FAIL" | "FAILED" => "31",
        "PARTIAL" | "BLOCKED" | "HELD" => "33",
        _ => return padded,
    };
    // Colour only the word, so the padding stays plain.
    let pad = padded.len() - word.len();
    format!("\x1b[{code};1m{word}\x1b[0m{}", " ".repeat(pad))
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
