//! Text from RX nodes made safe to show, the key figures of a result, and times.
use crate::result::sections::sweep::{SweepEntry, SweepRecord};
use serde::Deserialize as _;
use serde_json::{json, Value};

/// How many peaks a listing carries per result.
const MAX_PEAKS: usize = 3;

/// The string at `path`, made safe to show ([`shown`], at most 200 characters).
pub(super) fn str_of(v: &Value, path: &[&str]) -> Option<String> {
    crate::json::str_of(v, path).map(|s| shown(s, 200))
}

/// Whether `c` must never reach a terminal raw: control characters (C0, DEL,
/// C1 such as U+009B), format characters (bidi overrides such as U+202E,
/// zero-width characters), line/paragraph separators and private-use or
/// non-characters.
pub(super) fn non_printable(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || rxnode_interlock::is_format_char(c)
        || matches!(u, 0x2028 | 0x2029 | 0xE000..=0xF8FF | 0xFFF9..=0xFFFB | 0xFFFE | 0xFFFF)
        || (u & 0xFFFE) == 0xFFFE
        || (0xFDD0..=0xFDEF).contains(&u)
        || u >= 0xF0000
}

/// JSON text with every [`non_printable`] character escaped as `\uXXXX`
/// (a surrogate pair above U+FFFF): the same value for a JSON reader, nothing
/// raw for a terminal. The JSON's own layout (newlines, indentation) is kept;
/// any other such character occurs only inside a string, where the escape is
/// valid (serde_json already escapes C0 controls there).
pub(super) fn json_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if non_printable(c) && !matches!(c, '\n' | '\t' | '\r') {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A value as pretty JSON text, [`json_safe`]: what `--json` prints, handed to
/// the reporter as raw JSON so that it prints these very bytes.
pub(super) fn safe_json(v: &Value) -> anyhow::Result<Box<serde_json::value::RawValue>> {
    let text = json_safe(&serde_json::to_string_pretty(v)?);
    Ok(serde_json::value::RawValue::from_string(text)?)
}

/// Printable: control and format characters (ANSI escapes, bidi overrides and
/// zero-width characters from a hostile result) become
/// `\u{…}`; at most `max` characters.
pub(super) fn shown(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i >= max {
            out.push('…');
            break;
        }
        if non_printable(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Terminal-safe text: keeps newlines and tabs, escapes every other control
/// character and every format character (bidi, zero-width).
pub(super) fn terminal_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' || c == '\t' || !non_printable(c) {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect()
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

/// Key figures: captures, overflows, CLKIN ppm, the strongest peaks (captures and sweeps).
pub(super) fn figures(r: &Value) -> Value {
    let captures = r
        .get("captures")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // A sweep that ran is one that reads as its section's type with its hop table.
    let sweeps: Vec<Option<SweepRecord>> = r
        .get("sweeps")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| match SweepEntry::deserialize(e) {
                    Ok(SweepEntry::Swept(s)) => Some(*s),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let mut overflows = 0u64;
    let mut clkin = Vec::new();
    let mut clkin_u = Vec::new();
    let mut peaks: Vec<(f64, f64)> = Vec::new();
    for c in &captures {
        overflows =
            overflows.saturating_add(c.get("overflows").and_then(Value::as_u64).unwrap_or(0));
        if let Some(p) = c.get("clkin").and_then(|k| k.get("ppm")).and_then(num) {
            clkin.push(p);
            clkin_u.push(
                c.get("clkin")
                    .and_then(|k| k.get("ppm_uncertainty"))
                    .and_then(num),
            );
        }
        if let Some(ps) = c.get("peaks").and_then(Value::as_array) {
            for p in ps {
                let f = p.get("frequency_hz").or_else(|| p.get("hz")).and_then(num);
                let d = p
                    .get("power_db")
                    .or_else(|| p.get("dbfs"))
                    .or_else(|| p.get("power_dbfs"))
                    .and_then(num);
                if let (Some(f), Some(d)) = (f, d) {
                    peaks.push((f, d));
                }
            }
        }
    }
    for p in sweeps.iter().flatten().flat_map(|s| &s.peaks) {
        let finite = |x: f64| Some(x).filter(|x| x.is_finite());
        if let (Some(f), Some(d)) = (finite(p.frequency_hz), finite(p.power_db)) {
            peaks.push((f, d));
        }
    }
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    peaks.truncate(MAX_PEAKS);
    // A step that captured nothing (BLOCKED, NOT RUN) has only its step, status and
    // detail: it is counted apart, never as a capture.
    let ran = |v: &Value| v.get("samples_received").is_some() || v.get("hops").is_some();
    json!({
        "captures": captures.iter().filter(|c| ran(c)).count(),
        "captures_not_run": captures.iter().filter(|c| !ran(c)).count(),
        "sweeps": sweeps.iter().flatten().count(),
        "overflows": overflows,
        "clkin_ppm": clkin,
        "clkin_uncertainty_ppm": clkin_u,
        "peaks": peaks.iter().map(|(f, d)| json!({"frequency_hz": f, "power_db": d})).collect::<Vec<_>>(),
    })
}

pub(super) fn figures_line(f: &Value) -> String {
    let mut parts = Vec::new();
    let n = |k: &str| f.get(k).and_then(Value::as_u64).unwrap_or(0);
    if n("captures") > 0 {
        parts.push(format!(
            "{} capture(s), {} overflow(s)",
            n("captures"),
            n("overflows")
        ));
    }
    if n("captures_not_run") > 0 {
        parts.push(format!("{} capture step(s) not run", n("captures_not_run")));
    }
    if n("sweeps") > 0 {
        parts.push(format!("{} sweep(s)", n("sweeps")));
    }
    if let Some(c) = f.get("clkin_ppm").and_then(Value::as_array) {
        let u = f.get("clkin_uncertainty_ppm").and_then(Value::as_array);
        let v: Vec<String> = c
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let p = num(p)?;
                Some(match u.and_then(|u| u.get(i)).and_then(num) {
                    Some(s) => rxnode_dsp::fmt_uncertain(p, s, "ppm"),
                    None => format!("{} ppm", rxnode_dsp::fmt_ppm(p, 4)),
                })
            })
            .collect();
        if !v.is_empty() {
            parts.push(format!("CLKIN {}", v.join(", ")));
        }
    }
    if let Some(p) = f
        .get("peaks")
        .and_then(Value::as_array)
        .and_then(|p| p.first())
    {
        if let (Some(hz), Some(db)) = (
            p.get("frequency_hz").and_then(num),
            p.get("power_db").and_then(num),
        ) {
            parts.push(format!("peak {:.6} MHz {db:.1} dBFS", hz / 1e6));
        }
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

pub(super) fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// `since`: RFC 3339 (`2026-12-01T08:00:00+00:00`), a date (`2026-12-01`, UTC
/// midnight) or an age (`90s`, `30m`, `12h`, `7d`) before `now`; a refusal names
/// the field.
pub(super) fn parse_since(
    s: &str,
    now: time::OffsetDateTime,
) -> Result<time::OffsetDateTime, crate::exit::BadField> {
    let t = s.trim();
    if let Some(x) = parse_time(t) {
        return Ok(x);
    }
    let date_fmt = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(d) = time::Date::parse(t, &date_fmt) {
        return Ok(d.midnight().assume_utc());
    }
    // An age is a duration as every duration flag reads it (`90m`, `1.5h`, `7d`).
    let age = rxnode_interlock::parse_seconds(t)
        .ok()
        .filter(|s| *s <= 100.0 * 365.0 * 86400.0)
        .and_then(time::Duration::checked_seconds_f64);
    match age {
        Some(a) => Ok(now - a),
        None => Err(crate::exit::BadField {
            field: "since",
            message: crate::exit::FieldText::field("since").then(format!(
                " {s:?}: use a time (2026-12-01T08:00:00+00:00), a date (2026-12-01) or an age (90m, 12h, 7d)"
            )),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_times_dates_and_ages() {
        let now = parse_time("2026-12-01T12:00:00+00:00").unwrap();
        assert_eq!(
            parse_since("2026-12-01T08:00:00+00:00", now).unwrap(),
            parse_time("2026-12-01T08:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("2026-11-30", now).unwrap(),
            parse_time("2026-11-30T00:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("2h", now).unwrap(),
            parse_time("2026-12-01T10:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("7d", now).unwrap(),
            parse_time("2026-11-24T12:00:00+00:00").unwrap()
        );
        for bad in ["", "yesterday", "2h30", "-1h", "12x", "2026-13-01"] {
            let e = parse_since(bad, now).unwrap_err();
            assert_eq!(e.field, "since", "{bad}: {e}");
            let e = e.message.told(|f| if f == "since" { "--since" } else { f });
            assert!(e.contains("--since"), "{bad}: {e}");
        }
    }

    #[test]
    fn hostile_text_never_reaches_the_terminal_raw() {
        assert_eq!(shown("a\u{1b}[2Jb", 10), "a\\u{1b}[2Jb");
        assert_eq!(terminal_safe("x\n\ty\u{7}"), "x\n\ty\\u{7}");
        assert_eq!(shown("abcdef", 3), "abc…");
    }

    #[test]
    fn figures_sum_overflows_and_pick_the_strongest_peaks() {
        let r = json!({"captures": [
            {"samples_received": 100, "overflows": 2, "clkin": {"ppm": 0.25}, "peaks": [{"frequency_hz": 1e8, "power_db": -20.0}]},
            {"samples_received": 100, "overflows": 1, "peaks": [{"frequency_hz": 2e8, "power_db": -10.0}, {"frequency_hz": 3e8, "power_db": -90.0}]}
        ]});
        let f = figures(&r);
        assert_eq!(f["captures"], 2);
        assert_eq!(f["overflows"], 3);
        assert_eq!(f["clkin_ppm"], json!([0.25]));
        assert_eq!(f["peaks"][0]["frequency_hz"], 2e8);
        assert_eq!(f["peaks"].as_array().unwrap().len(), 3);
        assert_eq!(figures(&Value::Null)["captures"], 0);
    }

    /// Polish review: a locked reference measuring -0.0 ppm printed "CLKIN -0.0000 ppm".
    #[test]
    fn figures_line_prints_signed_zero_ppm_plain() {
        let f = json!({"captures": 1, "overflows": 0, "clkin_ppm": [-0.0, -0.00001, 1.25]});
        let line = figures_line(&f);
        assert!(
            line.contains("CLKIN 0.0000 ppm, 0.0000 ppm, +1.2500 ppm"),
            "{line}"
        );
        assert!(!line.contains("-0.0000"), "{line}");
    }

    /// A listing shows each CLKIN number with its uncertainty to two significant
    /// figures, never a rounded `± 0.0000`.
    #[test]
    fn figures_line_prints_the_uncertainty_with_the_digits_it_needs() {
        let r = json!({"captures": [{"clkin": {"ppm": 0.8, "ppm_uncertainty": 1e-6}}]});
        let line = figures_line(&figures(&r));
        assert!(line.contains("CLKIN +0.8000000 ± 0.0000010 ppm"), "{line}");
    }
}

#[cfg(test)]
mod figure_tests {
    use super::*;

    /// A capture step that never ran (BLOCKED, NOT RUN) is not counted as a capture:
    /// the listing says how many ran and how many did not.
    #[test]
    fn capture_steps_that_did_not_run_are_counted_apart() {
        let r = json!({"captures": [
            {"step": 1, "samples_received": 1000, "overflows": 2},
            {"step": 2, "samples_received": 0, "overflows": 0},
            {"step": 3, "status": "BLOCKED", "detail": "rx.max_duration_s"}
        ], "sweeps": [{"step": 4, "status": "BLOCKED", "detail": "busy"}]});
        let f = figures(&r);
        assert_eq!(f["captures"], 2);
        assert_eq!(f["captures_not_run"], 1);
        assert_eq!(f["sweeps"], 0);
        assert_eq!(
            figures_line(&f),
            "2 capture(s), 2 overflow(s); 1 capture step(s) not run"
        );
    }

    /// A sweep that ran is counted and its peaks are among the figures; the row of
    /// one that did not run, and an entry that does not read as a sweep, are not.
    #[test]
    fn sweeps_that_ran_are_counted_with_their_peaks() {
        let real: Vec<Value> =
            serde_json::from_str(include_str!("../../../fixtures/sections/sweeps.json"))
                .expect("fixture");
        let mut broken = real[0].clone();
        broken["hops"] = json!("none");
        let r = json!({"captures": [], "sweeps": [real[0], real[1], broken]});
        let f = figures(&r);
        assert_eq!(f["sweeps"], 1);
        let want = &real[0]["peaks"][0];
        assert_eq!(f["peaks"][0]["frequency_hz"], want["frequency_hz"]);
        assert_eq!(f["peaks"][0]["power_db"], want["power_db"]);
    }
}
