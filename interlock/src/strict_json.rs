//! Strict JSON rules shared by every parser that reads hostile JSON.
//!
//! serde keeps the *last* of two equal keys, so a second `"tx"` section in a
//! policy, or a second `"frequency_hz"` in a plan step, would silently win over
//! the one a reviewer read. [`find_duplicate_key`] is a generic pre-pass over
//! the JSON text (any shape, any op added later) that finds the first object
//! naming a key twice, with its line. [`find_format_char`] finds Unicode format
//! characters (category Cf: bidi overrides and isolates, zero-width characters,
//! …) and line/paragraph separators in any string or key, which could make a
//! prompt show something other than what will run.
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

/// A key named twice in one JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key.
    pub key: String,
    /// Where the object is (`$`, `$.steps[0]`, …).
    pub path: String,
    /// 1-based line of the second occurrence in the text.
    pub line: usize,
}

impl fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: duplicate key {:?} in {} (a key may appear once; JSON parsers disagree on which one wins)",
            self.line, self.key, self.path
        )
    }
}

/// The first duplicate key in `text`, if any. Text that is not valid JSON gives
/// `None`: the caller's own parser reports the syntax error.
pub fn find_duplicate_key(text: &str) -> Option<DuplicateKey> {
    let found = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let r = Walk {
        path: "$".to_owned(),
        found: &found,
    }
    .deserialize(&mut de);
    match r {
        Ok(()) => None,
        Err(e) => found.into_inner().map(|(key, path)| DuplicateKey {
            key,
            path,
            line: e.line().max(1),
        }),
    }
}

struct Walk<'a> {
    path: String,
    found: &'a RefCell<Option<(String, String)>>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }
    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(Walk {
                path: format!("{}[{i}]", self.path),
                found: self.found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(k) = map.next_key::<String>()? {
            if !seen.insert(k.clone()) {
                *self.found.borrow_mut() = Some((k, self.path.clone()));
                return Err(de::Error::custom("duplicate key"));
            }
            let path = format!("{}.{k}", self.path);
            map.next_value_seed(Walk {
                path,
                found: self.found,
            })?;
        }
        Ok(())
    }
}

/// Whether `c` cannot be shown as itself on a terminal: a control character (C0,
/// DEL, C1 such as U+009B, which some terminals read as an escape sequence), a
/// format character (bidi overrides and isolates, zero-width characters), a
/// line or paragraph separator, or a character that shows as nothing at all
/// ([`is_blank_filler`]).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || is_format_char(c)
        || matches!(c, '\u{2028}' | '\u{2029}')
        || is_blank_filler(c)
}

/// Whether `c` shows as nothing (or as a blank) although it is neither a control
/// nor a format character: the combining grapheme joiner U+034F, the Hangul
/// fillers U+115F, U+1160, U+3164, U+FFA0, the Khmer inherent vowels U+17B4 and
/// U+17B5, the Mongolian variation selectors, the braille blank U+2800 and the
/// variation selectors. A task title could hide a gap, or a second text, with them.
pub fn is_blank_filler(c: char) -> bool {
    matches!(c as u32,
        0x034F
        | 0x115F
        | 0x1160
        | 0x17B4
        | 0x17B5
        | 0x180B..=0x180D
        | 0x180F
        | 0x2800
        | 0x3164
        | 0xFE00..=0xFE0F
        | 0xFFA0
        | 0xE0100..=0xE01EF)
}

/// Combining marks shown on one character at most: a stack of more (a letter
/// with dozens of accents) draws over the lines above and below it, over the
/// prompt's other fields. Each mark past these is escaped.
pub const MAX_STACKED_MARKS: usize = 2;

/// Whether `c` is a combining mark of the blocks that attach to any letter
/// (combining diacritical marks, their extended and supplement blocks, marks
/// for symbols, half marks, the Cyrillic combining signs): the marks a stack
/// over one character is made of.
pub fn is_stacking_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F
        | 0x0483..=0x0489
        | 0x1AB0..=0x1AFF
        | 0x1DC0..=0x1DFF
        | 0x20D0..=0x20FF
        | 0xFE20..=0xFE2F)
}

/// Which characters of a text, read in order, must be escaped to be shown: each
/// one that [`needs_escape`], and each stacking mark ([`is_stacking_mark`]) past
/// [`MAX_STACKED_MARKS`] in a row. Every escaper of outside text reads through one.
#[derive(Debug, Default, Clone, Copy)]
pub struct Escaper {
    marks: usize,
}

impl Escaper {
    /// Whether `c`, the next character of the text, must be escaped.
    pub fn escape(&mut self, c: char) -> bool {
        // An escape is shown as ASCII: the marks after it start a new stack.
        if needs_escape(c) {
            self.marks = 0;
            return true;
        }
        if is_stacking_mark(c) {
            self.marks += 1;
            return self.marks > MAX_STACKED_MARKS;
        }
        self.marks = 0;
        false
    }
}

/// Text made safe for a terminal: every character that [`Escaper`] flags becomes
/// a visible `\u{…}` escape; nothing of the input is dropped (a tab is shown as
/// `\u{9}` too). The one escaper for text that comes from outside (Git, a
/// server, a peer, a task file).
pub fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut e = Escaper::default();
    for c in s.chars() {
        if e.escape(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `c` is a format character (Unicode category Cf) or a line/paragraph
/// separator: invisible in a terminal, able to reorder or hide what is shown.
pub fn is_format_char(c: char) -> bool {
    matches!(c as u32,
        0x00AD
        | 0x0600..=0x0605
        | 0x061C
        | 0x06DD
        | 0x070F
        | 0x0890..=0x0891
        | 0x08E2
        | 0x180E
        | 0x200B..=0x200F
        | 0x2028..=0x202E
        | 0x2060..=0x2064
        | 0x2066..=0x206F
        | 0xFEFF
        | 0xFFF9..=0xFFFB
        | 0x110BD
        | 0x110CD
        | 0x13430..=0x1343F
        | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A
        | 0xE0001
        | 0xE0020..=0xE007F)
}

/// Whether `c` is a C1 control character (U+0080–U+009F): a terminal may act
/// on it (U+009B is CSI, which can move the cursor and overwrite what is shown).
pub fn is_c1_control(c: char) -> bool {
    matches!(c as u32, 0x80..=0x9F)
}

/// The first format character ([`is_format_char`]) or C1 control character
/// ([`is_c1_control`]) in `s`, described with its code point: "the invisible
/// format character U+202E" / "the C1 control character U+009B".
pub fn format_char_in(s: &str) -> Option<String> {
    s.chars().find_map(|c| {
        if is_format_char(c) {
            Some(format!("the invisible format character U+{:04X}", c as u32))
        } else if is_c1_control(c) {
            Some(format!("the C1 control character U+{:04X}", c as u32))
        } else {
            None
        }
    })
}

/// `s` with every character that is not printable ASCII written as `\u{…}`, so a
/// look-alike (Cyrillic `Т` for `T`) or an invisible character shows on screen.
pub fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c.to_string()
            } else {
                format!("\\u{{{:x}}}", c as u32)
            }
        })
        .collect()
}

/// The characters of `s` that are not printable ASCII, each with its code point,
/// what it is (when known) and its 1-based position:
/// `U+0422, a Cyrillic letter, at position 4`; `None` when `s` is printable ASCII.
pub fn non_ascii_note(s: &str) -> Option<String> {
    let notes: Vec<String> = s
        .chars()
        .enumerate()
        .filter(|(_, c)| !(c.is_ascii_graphic() || *c == ' '))
        .take(4)
        .map(|(i, c)| match char_kind(c) {
            Some(k) => format!("U+{:04X}, {k}, at position {}", c as u32, i + 1),
            None => format!("U+{:04X} at position {}", c as u32, i + 1),
        })
        .collect();
    (!notes.is_empty()).then(|| notes.join(", "))
}

/// The ASCII letter, digit or `_` that `c` looks like, for the Cyrillic and Greek
/// capitals and the fullwidth forms a header key can be spelt with by mistake.
pub(crate) fn latin_lookalike(c: char) -> Option<char> {
    let u = c as u32;
    if (0xFF01..=0xFF5E).contains(&u) {
        return char::from_u32(u - 0xFF01 + 0x21);
    }
    Some(match c {
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' | 'Ϲ' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' | 'Ӏ' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Ν' => 'N',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'У' | 'Υ' | 'Ү' => 'Y',
        'Ζ' => 'Z',
        _ => return None,
    })
}

/// What kind of character `c` is, for the scripts whose letters look like Latin
/// ones and for the invisible ones.
fn char_kind(c: char) -> Option<&'static str> {
    if is_format_char(c) {
        return Some("an invisible format character");
    }
    if is_c1_control(c) || c.is_control() {
        return Some("a control character");
    }
    Some(match c as u32 {
        0x00A0 | 0x2000..=0x200A | 0x202F | 0x205F | 0x3000 => "a space that is not ASCII",
        0x00C0..=0x024F => "a Latin letter with a mark",
        0x0370..=0x03FF => "a Greek letter",
        0x0400..=0x052F => "a Cyrillic letter",
        0x0530..=0x058F => "an Armenian letter",
        0x13A0..=0x13FF => "a Cherokee letter",
        0x2010..=0x2015 | 0x2212 => "a dash that is not ASCII",
        0xFF01..=0xFF5E => "a fullwidth form",
        0x1D400..=0x1D7FF => "a mathematical letter",
        _ => return None,
    })
}

/// The first string or key in `v` holding a format or C1 control character:
/// (path, description as [`format_char_in`] gives it).
pub fn find_format_char(v: &serde_json::Value) -> Option<(String, String)> {
    fn walk(v: &serde_json::Value, path: &str) -> Option<(String, String)> {
        match v {
            serde_json::Value::String(s) => format_char_in(s).map(|u| (path.to_owned(), u)),
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| walk(x, &format!("{path}[{i}]"))),
            serde_json::Value::Object(o) => o.iter().find_map(|(k, x)| {
                let p = format!("{path}.{}", k.escape_debug());
                format_char_in(k)
                    .map(|u| (p.clone(), u))
                    .or_else(|| walk(x, &p))
            }),
            _ => None,
        }
    }
    walk(v, "$")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A title can hide a gap or a second text with characters that show as
    /// nothing (the braille blank, the Hangul filler), and draw over the lines
    /// around it with a stack of accents: both are shown escaped, a letter keeps
    /// its first two marks, and text in scripts with marks reads as it is.
    #[test]
    fn escaped_shows_blank_fillers_and_stacked_marks() {
        assert_eq!(escaped("a\u{2800}b\u{3164}c"), "a\\u{2800}b\\u{3164}c");
        assert_eq!(escaped("x\u{34f}\u{fe0f}"), "x\\u{34f}\\u{fe0f}");
        assert_eq!(
            escaped("e\u{301}\u{302}\u{303}\u{304} o"),
            "e\u{301}\u{302}\\u{303}\\u{304} o"
        );
        for ok in [
            "Cafe\u{301} cre\u{300}me",
            "Việt Nam",
            "हिन्दी",
            "ไทย",
            "Привет",
        ] {
            assert_eq!(escaped(ok), ok);
        }
        assert!(needs_escape('\u{2800}') && !needs_escape('\u{301}'));
    }

    #[test]
    fn duplicates_are_found_with_key_path_and_line() {
        let t = "{\"rx\": {},\n \"tx\": {\"a\": 1},\n \"tx\": {\"a\": 2}}";
        let d = find_duplicate_key(t).unwrap();
        assert_eq!(d.key, "tx");
        assert_eq!(d.path, "$");
        assert_eq!(d.line, 3);
        let t = "{\"steps\": [{\"op\": \"x\"},\n{\"op\": \"y\",\n \"f\": 1, \"f\": 2}]}";
        let d = find_duplicate_key(t).unwrap();
        assert_eq!(
            (d.key.as_str(), d.path.as_str(), d.line),
            ("f", "$.steps[1]", 3)
        );
        assert!(d.to_string().contains("line 3: duplicate key \"f\""));
        // Escaped spellings of one key are one key.
        let d = find_duplicate_key(r#"{"tx": 1, "t\u0078": 2}"#).unwrap();
        assert_eq!(d.key, "tx");
    }

    #[test]
    fn no_duplicates_or_not_json_is_none() {
        assert_eq!(
            find_duplicate_key(r#"{"a": {"a": {"a": [1, {"a": 2}]}}}"#),
            None
        );
        assert_eq!(find_duplicate_key(r#"[{"a": 1}, {"a": 1}]"#), None);
        assert_eq!(find_duplicate_key("{\"a\": "), None);
        assert_eq!(find_duplicate_key(""), None);
    }

    #[test]
    fn format_characters() {
        for c in [
            '\u{202E}',
            '\u{2066}',
            '\u{2069}',
            '\u{200B}',
            '\u{200D}',
            '\u{FEFF}',
            '\u{2028}',
            '\u{E0041}',
            '\u{00AD}',
        ] {
            assert!(is_format_char(c), "{:04X}", c as u32);
        }
        for c in ['a', 'é', 'µ', '–', '…', '中', ' '] {
            assert!(!is_format_char(c), "{:04X}", c as u32);
        }
        let v: serde_json::Value =
            serde_json::from_str(r#"{"steps": [{"device": "driver=rxsim\u202e"}]}"#).unwrap();
        assert_eq!(
            find_format_char(&v),
            Some((
                "$.steps[0].device".to_owned(),
                "the invisible format character U+202E".to_owned()
            ))
        );
        let v: serde_json::Value = serde_json::from_str(r#"{"de\u200bvice": 1}"#).unwrap();
        assert_eq!(
            find_format_char(&v).unwrap().1,
            "the invisible format character U+200B"
        );
    }
}

/// Hostile text in the task header, the rx-plan and the policy is refused.
#[cfg(test)]
mod hostile_parsers {
    use super::{format_char_in, is_c1_control};
    use crate::testutil::{errs, fields, plan, render, set};
    use crate::{Policy, TaskId};

    fn messages(text: &str) -> Vec<String> {
        errs(text).iter().map(|i| i.to_string()).collect()
    }

    #[test]
    fn a_second_key_in_a_plan_step_is_refused_with_key_and_line() {
        let body = plan(
            "{\"steps\": [{\"op\": \"rx_capture\", \"device\": \"driver=rxsim\",\n \"frequency_hz\": 100e6, \"sample_rate_hz\": 1e6,\n \"duration_s\": 1, \"frequency_hz\": 2.4e9}]}",
        );
        let text = render(&fields("YES", "YES", "NO"), &body);
        let fence = text
            .lines()
            .position(|l| l.starts_with("```rx-plan"))
            .unwrap()
            + 1;
        let m = messages(&text);
        assert!(
            m.iter().any(
                |s| s.starts_with(&format!("line {}: frequency_hz:", fence + 3))
                    && s.contains("duplicate key \"frequency_hz\"")
                    && s.contains("$.steps[0]")
            ),
            "{m:?}"
        );
        // A duplicate `op` (the field that selects what runs) too.
        let body = plan(r#"{"steps": [{"op": "inventory", "op": "tx_tone"}]}"#);
        let m = messages(&render(&fields("YES", "YES", "NO"), &body));
        assert!(
            m.iter().any(|s| s.contains("duplicate key \"op\"")),
            "{m:?}"
        );
        let body = plan(r#"{"steps": [{"op": "inventory"}], "steps": []}"#);
        let m = messages(&render(&fields("YES", "YES", "NO"), &body));
        assert!(
            m.iter().any(|s| s.contains("duplicate key \"steps\"")),
            "{m:?}"
        );
    }

    #[test]
    fn a_second_tx_section_in_a_policy_is_refused() {
        let text = "{\"tx\": {\"allowed_ranges_hz\": [], \"max_gain_db\": 0, \"max_duration_s\": 1},\n\
                    \"tx\": {\"allowed_ranges_hz\": [[2.4e9, 2.5e9]], \"max_gain_db\": 40, \"max_duration_s\": 60}}";
        let e = Policy::from_json(text).unwrap_err().to_string();
        assert!(e.contains("line 2: duplicate key \"tx\""), "{e}");
        let e = Policy::from_json("{\"rx\": {\"max_duration_s\": 1, \"max_duration_s\": 600}}")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("duplicate key \"max_duration_s\" in $.rx"),
            "{e}"
        );
    }

    #[test]
    fn format_characters_in_header_values_and_plan_strings_are_refused() {
        for (k, v) in [
            ("TASK_TITLE", "Check the clock\u{202E}XT FR"),
            ("TASK_TITLE", "\u{2066}safe\u{2069}"),
            ("TASK_TITLE", "zero\u{200B}width"),
            ("SOURCE_BRANCH", "video-development\u{200D}"),
            ("ALLOW_PUSH", "NO\u{FEFF}"),
        ] {
            let text = render(&set(fields("NO", "NO", "NO"), k, Some(v)), "Body.\n");
            let m = messages(&text);
            assert!(
                m.iter().any(|s| s.contains(&format!(
                    ": {k}: value holds the invisible format character U+"
                ))),
                "{k}={v:?}: {m:?}"
            );
            // The field is there, refused for its value: never also "missing".
            assert!(
                !m.iter().any(|s| s.contains("missing required field")),
                "{k}={v:?}: {m:?}"
            );
        }
        let body =
            plan(r#"{"steps": [{"op": "clock_check", "device": "driver=rxsim,serial=A\u202e"}]}"#);
        let m = messages(&render(&fields("YES", "YES", "NO"), &body));
        assert!(
            m.iter().any(
                |s| s.contains("$.steps[0].device holds the invisible format character U+202E")
            ),
            "{m:?}"
        );
    }

    /// C1 control characters (U+0080–U+009F; U+009B is CSI, which lets a VT
    /// overwrite what the prompt shows) are refused in every header value and
    /// every plan string, naming the field, line and code point.
    #[test]
    fn c1_control_characters_in_header_values_and_plan_strings_are_refused() {
        for (k, v) in [
            ("TASK_TITLE", "Check the clock 2K\u{9B}"),
            ("TASK_TITLE", "\u{80}"),
            ("SOURCE_BRANCH", "video-development\u{85}"),
            ("ALLOW_PUSH", "NO\u{9F}"),
        ] {
            let text = render(&set(fields("NO", "NO", "NO"), k, Some(v)), "Body.\n");
            let m = messages(&text);
            let cp = format!("U+{:04X}", v.chars().last().unwrap() as u32);
            assert!(
                m.iter().any(|s| s.starts_with("line ")
                    && s.contains(&format!(": {k}: value holds the C1 control character "))),
                "{k}={v:?}: {m:?}"
            );
            assert!(m.iter().any(|s| s.contains(&cp)), "{cp}: {m:?}");
        }
        for (field, json) in [
            ("antenna", r#""antenna": "RX\u009b2K""#),
            ("clock_source", r#""clock_source": "external\u0085""#),
        ] {
            let body = plan(&format!(
                r#"{{"steps": [{{"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 1e8,
                 "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": 0.1, {json}}}]}}"#
            ));
            let m = messages(&render(&fields("YES", "YES", "NO"), &body));
            assert!(
                m.iter().any(|s| s.contains(&format!(
                    "$.steps[0].{field} holds the C1 control character U+"
                ))),
                "{field}: {m:?}"
            );
        }
        let body = plan(
            r#"{"steps": [{"op": "clock_check", "device": "driver=rxsim", "expect_source": "external\u009b"}]}"#,
        );
        let m = messages(&render(&fields("YES", "YES", "NO"), &body));
        assert!(
            m.iter()
                .any(|s| s
                    .contains("$.steps[0].expect_source holds the C1 control character U+009B")),
            "{m:?}"
        );
        // U+00A0 and above are ordinary text.
        assert!(format_char_in("caf\u{e9} \u{a0}").is_none());
        assert!(is_c1_control('\u{80}') && is_c1_control('\u{9f}'));
        assert!(!is_c1_control('\u{7f}') && !is_c1_control('\u{a0}'));
    }

    #[test]
    fn a_task_id_may_not_start_with_a_dash() {
        for id in ["-rf", "--force", "-"] {
            assert!(TaskId::parse(id).is_err(), "{id}");
            let text = render(
                &set(fields("NO", "NO", "NO"), "TASK_ID", Some(id)),
                "Body.\n",
            );
            let m = messages(&text);
            assert!(
                m.iter()
                    .any(|s| s.contains("TASK_ID") && s.contains("not start with '-'")),
                "{m:?}"
            );
        }
        assert!(TaskId::parse("A-1").is_ok());
        assert!(TaskId::parse("_x-").is_ok());
    }
}
