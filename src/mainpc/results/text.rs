//! Text from RX nodes made safe to show, the key figures of a result, and times.
use crate::result::sections::sweep::{SweepEntry, SweepRecord};
use crate::result::sections::CaptureEntry;
use serde::Serialize;
use serde_json::Value;

/// How many peaks a listing carries per result.
const MAX_PEAKS: usize = 3;

/// The string at `path`, made safe to show ([`shown`], at most 200 characters).
pub(super) fn str_of(v: &Value, path: &[&str]) -> Option<String> {
    crate::json::str_of(v, path).map(|s| shown(s, 200))
}

/// Whether `c` must never reach a terminal raw: control characters (C0, DEL,
/// C1 such as U+009B), format characters (bidi overrides such as U+202E,
/// zero-width characters), line/paragraph separators, characters that show as
/// nothing ([`rxnode_interlock::is_blank_filler`]) and private-use or
/// non-characters. (A stack of combining marks is escaped by the callers'
/// [`rxnode_interlock::Escaper`], which needs the characters before.)
pub(super) fn non_printable(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || rxnode_interlock::needs_escape(c)
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
    let mut e = rxnode_interlock::Escaper::default();
    for c in s.chars() {
        if (e.escape(c) || non_printable(c)) && !matches!(c, '\n' | '\t' | '\r') {
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
/// the reporter as raw JSON so that it prints these very bytes. Keys come in the
/// order of their names at every level, whatever order a type declares them in.
pub(super) fn safe_json<T: serde::Serialize + ?Sized>(
    v: &T,
) -> anyhow::Result<Box<serde_json::value::RawValue>> {
    let text = json_safe(&serde_json::to_string_pretty(&serde_json::to_value(v)?)?);
    Ok(serde_json::value::RawValue::from_string(text)?)
}

/// Printable: control and format characters (ANSI escapes, bidi overrides and
/// zero-width characters from a hostile result) become
/// `\u{…}`; at most `max` characters.
pub(super) fn shown(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut e = rxnode_interlock::Escaper::default();
    for (i, c) in s.chars().enumerate() {
        if i >= max {
            out.push('…');
            break;
        }
        if e.escape(c) || non_printable(c) {
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
    let mut e = rxnode_interlock::Escaper::default();
    s.chars()
        .map(|c| {
            let flagged = e.escape(c) || non_printable(c);
            if c == '\n' || c == '\t' || !flagged {
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

/// A number that JSON can hold (a non-finite one is absent).
fn finite(x: f64) -> Option<f64> {
    Some(x).filter(|x| x.is_finite())
}

/// The key figures of one result, as a listing carries them (fields in sorted
/// order, as the listing has always written them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(super) struct Figures {
    /// Captures that ran.
    captures: usize,
    /// Capture steps that captured nothing (BLOCKED, NOT RUN).
    captures_not_run: usize,
    /// Each capture's CLKIN error, ppm.
    clkin_ppm: Vec<f64>,
    /// The uncertainty of each of `clkin_ppm`, when recorded.
    clkin_uncertainty_ppm: Vec<Option<f64>>,
    /// Driver overflows of all captures.
    overflows: u64,
    /// The strongest peaks of captures and sweeps, strongest first.
    peaks: Vec<FigurePeak>,
    /// Sweeps that ran.
    sweeps: usize,
}

/// One of the strongest peaks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(super) struct FigurePeak {
    /// Its frequency, Hz.
    frequency_hz: f64,
    /// Its level, dBFS.
    power_db: f64,
}

/// What one capture entry adds to the figures.
#[derive(Debug, Default, PartialEq)]
struct CaptureFigures {
    /// Whether it captured (a step's row did not).
    ran: bool,
    overflows: u64,
    /// CLKIN error and its uncertainty, ppm.
    clkin: Option<(f64, Option<f64>)>,
    /// Frequency and level of each peak.
    peaks: Vec<(f64, f64)>,
}

impl CaptureFigures {
    /// The figures of one entry: a record's fields, or, for an entry in another
    /// build's shape, its keys.
    fn of(e: &CaptureEntry) -> CaptureFigures {
        match e {
            CaptureEntry::Captured(r) => CaptureFigures {
                ran: true,
                overflows: r.overflows,
                clkin: r.clkin.as_ref().and_then(|k| {
                    let p = k.ppm.and_then(finite)?;
                    Some((p, k.ppm_uncertainty.and_then(finite)))
                }),
                peaks: r
                    .peaks
                    .iter()
                    .filter_map(|p| Some((finite(p.frequency_hz)?, finite(p.power_db)?)))
                    .collect(),
            },
            CaptureEntry::NotCaptured(_) => CaptureFigures::default(),
            CaptureEntry::Other(c) => CaptureFigures::of_value(c),
        }
    }

    /// The figures of an entry in another build's shape, read by its keys.
    fn of_value(c: &Value) -> CaptureFigures {
        let clkin = c.get("clkin");
        CaptureFigures {
            // A step that captured nothing (BLOCKED, NOT RUN) has only its step,
            // status and detail.
            ran: c.get("samples_received").is_some() || c.get("hops").is_some(),
            overflows: c.get("overflows").and_then(Value::as_u64).unwrap_or(0),
            clkin: clkin.and_then(|k| k.get("ppm")).and_then(num).map(|p| {
                (
                    p,
                    clkin.and_then(|k| k.get("ppm_uncertainty")).and_then(num),
                )
            }),
            peaks: c
                .get("peaks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| {
                    let f = p.get("frequency_hz").or_else(|| p.get("hz")).and_then(num);
                    let d = p
                        .get("power_db")
                        .or_else(|| p.get("dbfs"))
                        .or_else(|| p.get("power_dbfs"))
                        .and_then(num);
                    f.zip(d)
                })
                .collect(),
        }
    }
}

/// The entries of the section `key`, each read as `T` (those that do not read
/// are left out).
fn section<T: serde::de::DeserializeOwned>(r: &Value, key: &str) -> Vec<T> {
    r.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| serde::Deserialize::deserialize(e).ok())
        .collect()
}

/// Key figures: captures, overflows, CLKIN ppm, the strongest peaks (captures and sweeps).
pub(super) fn figures(r: &Value) -> Figures {
    // Any capture entry reads (one in another build's shape as such).
    let captures: Vec<CaptureFigures> = section::<CaptureEntry>(r, "captures")
        .iter()
        .map(CaptureFigures::of)
        .collect();
    // A sweep that ran is one that reads as its section's type with its hop table.
    let sweeps: Vec<SweepRecord> = section::<SweepEntry>(r, "sweeps")
        .into_iter()
        .filter_map(|e| match e {
            SweepEntry::Swept(s) => Some(*s),
            _ => None,
        })
        .collect();
    let mut f = Figures {
        captures: captures.iter().filter(|c| c.ran).count(),
        captures_not_run: captures.iter().filter(|c| !c.ran).count(),
        sweeps: sweeps.len(),
        ..Figures::default()
    };
    let mut peaks: Vec<(f64, f64)> = Vec::new();
    for c in &captures {
        f.overflows = f.overflows.saturating_add(c.overflows);
        if let Some((p, u)) = c.clkin {
            f.clkin_ppm.push(p);
            f.clkin_uncertainty_ppm.push(u);
        }
        peaks.extend(&c.peaks);
    }
    for p in sweeps.iter().flat_map(|s| &s.peaks) {
        if let (Some(f), Some(d)) = (finite(p.frequency_hz), finite(p.power_db)) {
            peaks.push((f, d));
        }
    }
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    peaks.truncate(MAX_PEAKS);
    f.peaks = peaks
        .into_iter()
        .map(|(frequency_hz, power_db)| FigurePeak {
            frequency_hz,
            power_db,
        })
        .collect();
    f
}

pub(super) fn figures_line(f: &Figures) -> String {
    let mut parts = Vec::new();
    if f.captures > 0 {
        parts.push(format!(
            "{} capture(s), {} overflow(s)",
            f.captures, f.overflows
        ));
    }
    if f.captures_not_run > 0 {
        parts.push(format!("{} capture step(s) not run", f.captures_not_run));
    }
    if f.sweeps > 0 {
        parts.push(format!("{} sweep(s)", f.sweeps));
    }
    let clkin: Vec<String> = f
        .clkin_ppm
        .iter()
        .enumerate()
        .map(
            |(i, p)| match f.clkin_uncertainty_ppm.get(i).copied().flatten() {
                Some(s) => rxnode_dsp::fmt_uncertain(*p, s, "ppm"),
                None => format!("{} ppm", rxnode_dsp::fmt_ppm(*p, 4)),
            },
        )
        .collect();
    if !clkin.is_empty() {
        parts.push(format!("CLKIN {}", clkin.join(", ")));
    }
    if let Some(p) = f.peaks.first() {
        parts.push(format!(
            "peak {:.6} MHz {:.1} dBFS",
            p.frequency_hz / 1e6,
            p.power_db
        ));
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
) -> Result<time::OffsetDateTime, String> {
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
        None => Err(
            "use a time (2026-12-01T08:00:00+00:00), a date (2026-12-01) or an age (90m, 12h, 7d)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

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
            assert!(e.contains("an age (90m, 12h, 7d)"), "{bad}: {e}");
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
        assert_eq!(f.captures, 2);
        assert_eq!(f.overflows, 3);
        assert_eq!(f.clkin_ppm, [0.25]);
        assert_eq!(f.peaks[0].frequency_hz, 2e8);
        assert_eq!(f.peaks.len(), 3);
        assert_eq!(figures(&Value::Null), Figures::default());
    }

    /// Polish review: a locked reference measuring -0.0 ppm printed "CLKIN -0.0000 ppm".
    #[test]
    fn figures_line_prints_signed_zero_ppm_plain() {
        let f = Figures {
            captures: 1,
            clkin_ppm: vec![-0.0, -0.00001, 1.25],
            clkin_uncertainty_ppm: vec![None; 3],
            ..Figures::default()
        };
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
    use serde_json::json;

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
        assert_eq!(f.captures, 2);
        assert_eq!(f.captures_not_run, 1);
        assert_eq!(f.sweeps, 0);
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
        assert_eq!(f.sweeps, 1);
        let want = &real[0]["peaks"][0];
        assert_eq!(json!(f.peaks[0].frequency_hz), want["frequency_hz"]);
        assert_eq!(json!(f.peaks[0].power_db), want["power_db"]);
    }

    /// A capture record gives the figures its JSON gives read by its keys (as an
    /// entry in another build's shape is read): the CLKIN number, its
    /// uncertainty, the overflows and the peaks.
    #[test]
    fn a_capture_record_gives_the_figures_of_its_json_read_by_keys() {
        use crate::result::sections::capture::{tests::summary, CaptureRecord};
        let mut record = CaptureRecord::of(&summary()).expect("record");
        if let Some(k) = record.clkin.as_mut() {
            (k.ppm, k.ppm_uncertainty) = (Some(0.25), Some(0.01));
        }
        let v = serde_json::to_value(&record).expect("value");
        let entry: CaptureEntry = serde_json::from_value(v.clone()).expect("entry");
        assert!(matches!(entry, CaptureEntry::Captured(_)), "{entry:?}");
        let typed = CaptureFigures::of(&entry);
        assert_eq!(typed.clkin, Some((0.25, Some(0.01))));
        assert!(typed.ran && !typed.peaks.is_empty(), "{typed:?}");
        assert_eq!(typed, CaptureFigures::of_value(&v));
    }
}
