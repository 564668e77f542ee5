//! Text as it may reach a terminal ([`terminal_safe`]), for the one door for
//! output ([`crate::shell::Shell`]) and for the log ([`SafeStderr`]).

/// The colour sequences rxnode itself writes (`crate::term::status`): the only
/// escape sequences that reach a terminal raw, and only when colour is on.
const OWN_COLOURS: [&str; 4] = ["\x1b[31;1m", "\x1b[32;1m", "\x1b[33;1m", "\x1b[0m"];

/// Text as it may reach a terminal, the last step before stdout and stderr:
/// every character [`rxnode_interlock::Escaper`] flags that an earlier
/// escape let through (a server's error text, a peer's ref name) becomes a
/// `\uXXXX` escape — the JSON form, so a JSON document stays valid and means
/// the same — except a newline, a tab, and with `colour` rxnode's own colours.
/// The usual place to escape outside text is where it is shown
/// ([`rxnode_interlock::escaped`]); this door makes sure nothing raw is missed.
pub(crate) fn terminal_safe(s: &str, colour: bool) -> std::borrow::Cow<'_, str> {
    let flags = |e: &mut rxnode_interlock::Escaper, c: char| e.escape(c) && c != '\n' && c != '\t';
    let mut e = rxnode_interlock::Escaper::default();
    if !s.chars().any(|c| flags(&mut e, c)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut rest = s;
    let mut e = rxnode_interlock::Escaper::default();
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' && colour {
            if let Some(own) = OWN_COLOURS.iter().find(|o| rest.starts_with(**o)) {
                out.push_str(own);
                rest = &rest[own.len()..];
                continue;
            }
        }
        if flags(&mut e, c) {
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

    /// What no escaper before it caught — a braille blank, a Hangul filler, a
    /// letter under a stack of accents — leaves the door escaped, as JSON
    /// escapes, the letter keeping two accents; the JSON still means the same.
    #[test]
    fn the_door_escapes_blank_fillers_and_mark_stacks() {
        let text = "T\u{2800}\u{3164}e\u{301}\u{302}\u{303}\u{304}";
        assert_eq!(
            terminal_safe(text, false),
            "T\\u2800\\u3164e\u{301}\u{302}\\u0303\\u0304"
        );
        let doc = serde_json::json!({ "t": text }).to_string();
        let back: serde_json::Value = serde_json::from_str(&terminal_safe(&doc, false)).unwrap();
        assert_eq!(back["t"], text);
    }
}
