//! A capture's section of `RX_RESULT.md`, from the typed record this build
//! writes or from an entry in another build's shape (read by its keys): both
//! become one [`Shown`], written by one writer, so the two never differ.
use super::markdown::{fmt_hz, fmt_opt, num, sparkline, text_of};
use super::md_cell::md_cell;
use super::sections::capture::{CaptureRecord, RequestedGain};
use super::sections::{CaptureEntry, StepRow};
use rxnode_dsp::{CaptureStatus, ClkinStatus};
use serde_json::Value;
use std::fmt::Write as _;

/// What a capture's section shows.
#[derive(Debug, Default, PartialEq)]
struct Shown {
    /// The heading's radio.
    device: String,
    /// The capture's status, when recorded.
    status: Option<String>,
    /// Frequency, rate, bandwidth and gain asked for.
    requested: Settings,
    /// The same as the radio read them back.
    actual: Settings,
    /// Samples received and requested, overflows, dropped samples, timeouts, gaps.
    counts: [String; 6],
    /// The lost-samples line.
    lost: Lost,
    /// Noise floor, dBFS/bin.
    noise_floor_db: Option<f64>,
    /// Why there is no floor, as the capture's errors say it.
    floor_absent: Option<String>,
    /// The level above the peak threshold in the centre span the peak search skips,
    /// dBFS/bin, and half that span, Hz.
    centre: Option<(f64, f64)>,
    /// Mean power, dBFS.
    mean_power_dbfs: Option<f64>,
    /// Frequency, power and SNR of each peak.
    peaks: Vec<[Option<f64>; 3]>,
    /// The CLKIN check.
    clkin: Option<Clkin>,
    /// Path, bytes and SHA-256 of each IQ file.
    iq_files: Vec<[String; 3]>,
    /// The PSD's levels, when it has some.
    psd_db: Option<Vec<f64>>,
}

/// One side of the settings table.
#[derive(Debug, Default, PartialEq)]
struct Settings {
    frequency_hz: Option<f64>,
    sample_rate_hz: Option<f64>,
    bandwidth_hz: Option<f64>,
    gain_db: Option<f64>,
}

/// The lost-samples line.
#[derive(Debug, Default, PartialEq)]
enum Lost {
    /// None lost, or a result that does not count them: no line.
    #[default]
    NotShown,
    /// Lost in overflows without stream times.
    Unknown,
    /// This many.
    Count(String),
}

/// The CLKIN line.
#[derive(Debug, PartialEq)]
struct Clkin {
    status: String,
    ppm: Option<f64>,
    ppm_uncertainty: Option<f64>,
    tone_hz: Option<f64>,
    measured_hz: Option<f64>,
}

/// A number as JSON holds it: a non-finite one is `null`, shown as absent.
fn fin(x: f64) -> Option<f64> {
    Some(x).filter(|x| x.is_finite())
}

/// A number as JSON holds it, when there is one.
fn fin_opt(x: Option<f64>) -> Option<f64> {
    x.and_then(fin)
}

/// Capture `n`'s section.
pub(super) fn render_capture(out: &mut String, n: usize, entry: &CaptureEntry) {
    let shown = match entry {
        CaptureEntry::Captured(r) => of_record(r),
        CaptureEntry::NotCaptured(row) => of_row(row),
        CaptureEntry::Other(v) => of_value(v),
    };
    write(out, n, &shown);
}

/// What the typed record shows.
fn of_record(r: &CaptureRecord) -> Shown {
    let d = &r.device;
    let ident: Vec<String> = [
        Some(("driver", d.driver.as_str())),
        d.serial.as_deref().map(|s| ("serial", s)),
        d.hardware_key
            .as_deref()
            .filter(|k| *k != d.driver)
            .map(|k| ("hardware key", k)),
    ]
    .into_iter()
    .flatten()
    .filter(|(_, s)| !s.is_empty())
    .map(|(k, s)| format!("{k} {s}"))
    .collect();
    let a = &r.actual.settings;
    let q = &r.requested;
    Shown {
        device: with_identity(&d.args, &ident),
        status: Some(
            match r.status {
                CaptureStatus::Pass => "PASS",
                CaptureStatus::Partial => "PARTIAL",
                CaptureStatus::Fail => "FAIL",
            }
            .to_owned(),
        ),
        requested: Settings {
            frequency_hz: fin(q.frequency_hz),
            sample_rate_hz: fin(q.sample_rate_hz),
            bandwidth_hz: fin_opt(q.bandwidth_hz),
            gain_db: match q.gain_db {
                RequestedGain::Total(g) => fin_opt(g),
                RequestedGain::Elements(_) => None,
            },
        },
        actual: Settings {
            frequency_hz: fin(a.frequency_hz),
            sample_rate_hz: fin(a.sample_rate_hz),
            bandwidth_hz: fin_opt(a.bandwidth_hz),
            gain_db: fin(a.gain_db),
        },
        counts: [
            r.samples_received,
            r.samples_requested,
            r.overflows,
            r.dropped_samples,
            r.timeouts,
            r.gaps,
        ]
        .map(|c| c.to_string()),
        lost: match r.lost_samples {
            Some(0) => Lost::NotShown,
            Some(n) => Lost::Count(n.to_string()),
            None => Lost::Unknown,
        },
        noise_floor_db: fin_opt(r.noise_floor_db),
        floor_absent: floor_absent(
            fin_opt(r.noise_floor_db),
            r.errors.iter().map(String::as_str),
        ),
        centre: fin_opt(r.centre_carrier_dbfs).zip(fin_opt(r.centre_excluded_hz)),
        mean_power_dbfs: fin_opt(r.mean_power_dbfs),
        peaks: r
            .peaks
            .iter()
            .map(|p| [fin(p.frequency_hz), fin(p.power_db), fin_opt(p.snr_db)])
            .collect(),
        clkin: r.clkin.as_ref().map(|k| Clkin {
            status: match k.status {
                ClkinStatus::Pass => "PASS",
                ClkinStatus::Fail => "FAIL",
                ClkinStatus::NotMeasured => "NOT_MEASURED",
            }
            .to_owned(),
            ppm: fin_opt(k.ppm),
            ppm_uncertainty: fin_opt(k.ppm_uncertainty),
            tone_hz: fin(k.tone_hz),
            measured_hz: fin_opt(k.measured_hz),
        }),
        iq_files: r
            .iq_files
            .iter()
            .map(|f| {
                [
                    f.path.to_str().unwrap_or("?").to_owned(),
                    f.bytes.to_string(),
                    f.sha256.clone(),
                ]
            })
            .collect(),
        psd_db: r
            .psd_db
            .as_ref()
            .map(|p| p.iter().flatten().copied().collect()),
    }
}

/// Why a capture has no noise floor, from its errors (`noise floor not measured
/// (WHY)`); `None` when it has one or its errors do not say.
fn floor_absent<'a>(
    floor: Option<f64>,
    mut errors: impl Iterator<Item = &'a str>,
) -> Option<String> {
    if floor.is_some() {
        return None;
    }
    errors.find_map(|e| {
        e.strip_prefix("noise floor not measured (")
            .and_then(|w| w.strip_suffix(')'))
            .map(str::to_owned)
    })
}

/// What a step that captured nothing shows: its status, nothing measured.
fn of_row(row: &StepRow) -> Shown {
    Shown {
        device: text_of(None),
        status: Some(row.status.as_str().to_owned()),
        ..Shown::default()
    }
    .with_absent_counts()
}

impl Shown {
    /// Every count absent (`—`).
    fn with_absent_counts(mut self) -> Shown {
        self.counts = std::array::from_fn(|_| "—".to_owned());
        self
    }
}

/// The radio's args, then the driver's identity apart ("driver=rxsim,serial=X
/// (driver rxsim, serial X)"), so the driver's keys do not read as a repeated
/// args string.
fn with_identity(args: &str, ident: &[String]) -> String {
    let args = if args.is_empty() {
        "(default device)"
    } else {
        args
    };
    if ident.is_empty() {
        args.to_owned()
    } else {
        format!("{args} ({})", ident.join(", "))
    }
}

/// A capture's device for the heading, from an entry read by its keys.
fn device_text(v: Option<&Value>) -> String {
    let Some(Value::Object(o)) = v else {
        return text_of(v);
    };
    let Some(args) = o.get("args").and_then(Value::as_str) else {
        return text_of(v);
    };
    let ident: Vec<String> = ["driver", "serial", "hardware_key"]
        .iter()
        .filter_map(|k| match o.get(*k) {
            // A hardware key equal to the driver name says nothing new.
            Some(Value::String(s))
                if !s.is_empty() && (*k != "hardware_key" || o.get("driver") != o.get(*k)) =>
            {
                Some(format!("{} {s}", k.replace('_', " ")))
            }
            _ => None,
        })
        .collect();
    with_identity(args, &ident)
}

/// What an entry in another build's shape shows, read by its keys (any of them
/// may be missing or of another type).
fn of_value(c: &Value) -> Shown {
    let get = |k: &str| c.get(k);
    let setting = |side: &str, k: &str| c.get(side).and_then(|o| o.get(k)).and_then(num);
    let settings = |side: &str| Settings {
        frequency_hz: setting(side, "frequency_hz"),
        sample_rate_hz: setting(side, "sample_rate_hz"),
        bandwidth_hz: setting(side, "bandwidth_hz"),
        gain_db: setting(side, "gain_db"),
    };
    let int = |k: &str| match get(k) {
        Some(Value::Null) | None => "—".to_owned(),
        Some(v) => v.to_string(),
    };
    Shown {
        device: device_text(get("device")),
        status: get("status").and_then(Value::as_str).map(str::to_owned),
        requested: settings("requested"),
        actual: settings("actual"),
        counts: [
            "samples_received",
            "samples_requested",
            "overflows",
            "dropped_samples",
            "timeouts",
            "gaps",
        ]
        .map(int),
        // Only results that count their losses have `lost_samples` (`null`: unknown).
        lost: match get("lost_samples") {
            None => Lost::NotShown,
            Some(Value::Number(n)) if n.as_u64() == Some(0) => Lost::NotShown,
            Some(Value::Null) => Lost::Unknown,
            Some(v) => Lost::Count(v.to_string()),
        },
        noise_floor_db: get("noise_floor_db").and_then(num),
        floor_absent: floor_absent(
            get("noise_floor_db").and_then(num),
            get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        ),
        centre: get("centre_carrier_dbfs")
            .and_then(num)
            .zip(get("centre_excluded_hz").and_then(num)),
        mean_power_dbfs: get("mean_power_dbfs").and_then(num),
        peaks: get("peaks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| ["frequency_hz", "power_db", "snr_db"].map(|k| p.get(k).and_then(num)))
            .collect(),
        clkin: get("clkin").filter(|v| !v.is_null()).map(|k| Clkin {
            status: k
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("—")
                .to_owned(),
            ppm: k.get("ppm").and_then(num),
            ppm_uncertainty: k.get("ppm_uncertainty").and_then(num),
            tone_hz: k.get("tone_hz").and_then(num),
            measured_hz: k.get("measured_hz").and_then(num),
        }),
        iq_files: get("iq_files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|f| {
                [
                    f.get("path")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned(),
                    f.get("bytes")
                        .map(|b| b.to_string())
                        .unwrap_or_else(|| "?".into()),
                    f.get("sha256")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned(),
                ]
            })
            .collect(),
        psd_db: get("psd_db")
            .and_then(Value::as_array)
            .map(|p| p.iter().filter_map(Value::as_f64).collect()),
    }
}

/// Write a capture's section.
fn write(out: &mut String, n: usize, c: &Shown) {
    let _ = writeln!(out, "### Capture {n}: {}\n", md_cell(&c.device));
    if let Some(s) = &c.status {
        let _ = writeln!(out, "Status: **{s}**\n");
    }
    write_settings(out, c);
    write_levels(out, c);
    write_peaks(out, c);
    write_clkin(out, c);
    write_iq_files(out, c);
    write_spectrum(out, c);
    out.push('\n');
}

/// The requested and the actual frequency, rate, bandwidth and gain.
fn write_settings(out: &mut String, c: &Shown) {
    let (q, a) = (&c.requested, &c.actual);
    let _ = writeln!(out, "| | requested | actual |\n|---|---|---|");
    for (label, req, act) in [
        ("frequency", q.frequency_hz, a.frequency_hz),
        ("sample rate", q.sample_rate_hz, a.sample_rate_hz),
        ("bandwidth", q.bandwidth_hz, a.bandwidth_hz),
    ] {
        let _ = writeln!(out, "| {label} | {} | {} |", fmt_hz(req), fmt_hz(act));
    }
    let _ = writeln!(
        out,
        "| gain | {} | {} |",
        fmt_opt(q.gain_db, " dB", 1),
        fmt_opt(a.gain_db, " dB", 1)
    );
}

/// Sample counts, stream faults, lost samples, noise floor and mean power.
fn write_levels(out: &mut String, c: &Shown) {
    let [received, requested, overflows, dropped, timeouts, gaps] = &c.counts;
    let _ = writeln!(
        out,
        "\nSamples: {received} received of {requested} requested; overflows: {overflows}; dropped samples: {dropped}; timeouts: {timeouts}",
    );
    let lost = match &c.lost {
        Lost::NotShown => None,
        Lost::Unknown => Some("an unknown number (overflows without stream times)".to_owned()),
        Lost::Count(n) => Some(n.clone()),
    };
    if let Some(lost) = lost {
        let _ = writeln!(
            out,
            "Lost samples: {lost} in {gaps} gap(s); the PSD averages gap-free segments only",
        );
    }
    let _ = writeln!(
        out,
        "Noise floor: {}; mean power: {}",
        match (&c.noise_floor_db, &c.floor_absent) {
            (None, Some(why)) => format!("n/a ({})", md_cell(why)),
            (floor, _) => fmt_opt(*floor, " dBFS/bin", 1),
        },
        fmt_opt(c.mean_power_dbfs, " dBFS", 1)
    );
}

/// The peak table, when peaks were found.
fn write_peaks(out: &mut String, c: &Shown) {
    if let Some((dbfs, span_hz)) = c.centre {
        let _ = writeln!(
            out,
            "\nCentre: {dbfs:.1} dBFS, a carrier or the radio's DC offset at the tuned \
             frequency (±{} not searched for peaks)",
            fmt_hz(Some(span_hz))
        );
    }
    if c.peaks.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n| peak | frequency | power | SNR |\n|---|---|---|---|"
    );
    for (i, [f, p, snr]) in c.peaks.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            i + 1,
            fmt_hz(*f),
            fmt_opt(*p, " dBFS", 1),
            snr.map_or_else(
                || "n/a (no noise floor)".to_owned(),
                |v| format!("{v:.1} dB")
            )
        );
    }
}

/// The CLKIN line, when the capture measured a reference tone.
fn write_clkin(out: &mut String, c: &Shown) {
    let Some(k) = &c.clkin else {
        return;
    };
    let _ = writeln!(
        out,
        "\nCLKIN: {} — reference error {} (tone {}, measured {})",
        k.status,
        match (k.ppm, k.ppm_uncertainty) {
            (Some(p), Some(u)) => rxnode_dsp::fmt_uncertain(p, u, "ppm"),
            _ => "—".to_owned(),
        },
        fmt_hz(k.tone_hz),
        fmt_hz(k.measured_hz),
    );
}

/// The IQ files the capture recorded, with sizes and hashes.
fn write_iq_files(out: &mut String, c: &Shown) {
    if c.iq_files.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n| IQ file | bytes | SHA-256 |\n|---|---|---|");
    for [path, bytes, sha] in &c.iq_files {
        let _ = writeln!(
            out,
            "| `{}` | {bytes} | `{}` |",
            md_cell(path),
            md_cell(sha)
        );
    }
}

/// A sparkline of the PSD with its frequency span and dB range.
fn write_spectrum(out: &mut String, c: &Shown) {
    let Some(vals) = &c.psd_db else {
        return;
    };
    let Some(line) = sparkline(vals, 64) else {
        return;
    };
    let finite = || vals.iter().copied().filter(|v| v.is_finite());
    let lo = finite().fold(f64::INFINITY, f64::min);
    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
    let span = match (c.actual.frequency_hz, c.actual.sample_rate_hz) {
        (Some(f), Some(r)) => format!(
            "{} … {}, ",
            fmt_hz(Some(f - r / 2.0)),
            fmt_hz(Some(f + r / 2.0))
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "\nSpectrum ({span}{lo:.1} dB … {hi:.1} dB):\n\n```text\n{line}\n```"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::sections::capture::tests::summary;
    use serde_json::json;

    /// A section as rendered from the typed entry, and from the same entry read
    /// by its keys (as a result in another build's shape is).
    fn both(entry: &CaptureEntry) -> (String, String) {
        let (mut typed, mut keyed) = (String::new(), String::new());
        render_capture(&mut typed, 1, entry);
        let v = serde_json::to_value(entry).expect("value");
        render_capture(&mut keyed, 1, &CaptureEntry::Other(v));
        (typed, keyed)
    }

    /// The typed record and its JSON read by keys render the same section, for a
    /// real capture and for its variants (nothing measured, no CLKIN, no PSD, an
    /// unknown loss, gain per element, a remote radio, a step that captured nothing).
    #[test]
    fn the_typed_record_renders_as_its_json_read_by_keys() {
        let s = summary();
        let full = CaptureRecord::of(&s).expect("typed");
        let (typed, keyed) = both(&CaptureEntry::Captured(Box::new(full.clone())));
        assert_eq!(typed, keyed);
        for want in [
            "CLKIN: ",
            "| IQ file |",
            "Spectrum (",
            "| peak |",
            "(driver rxsim, serial S1)",
        ] {
            assert!(typed.contains(want), "no {want:?} in {typed}");
        }
        let mut bare = full.clone();
        bare.clkin = None;
        bare.psd_db = None;
        bare.lost_samples = None;
        bare.noise_floor_db = Some(f64::NEG_INFINITY);
        bare.peaks.clear();
        bare.iq_files.clear();
        bare.requested.gain_db = RequestedGain::Total(None);
        bare.device.remote = Some("tcp://10.0.0.2:55132".into());
        bare.device.hardware_key = Some("rxsim".into());
        bare.device.serial = None;
        bare.actual.settings.gain_db = f64::NAN;
        let (typed, keyed) = both(&CaptureEntry::Captured(Box::new(bare)));
        assert_eq!(typed, keyed);
        assert!(typed.contains("an unknown number"), "{typed}");
        // Noiseless samples: no floor, a peak without SNR, said in words both ways.
        let mut noiseless = full.clone();
        noiseless.noise_floor_db = None;
        noiseless.errors.push(
            "noise floor not measured (the samples carry no noise above the FFT's rounding)".into(),
        );
        for p in &mut noiseless.peaks {
            p.snr_db = None;
        }
        let (typed, keyed) = both(&CaptureEntry::Captured(Box::new(noiseless)));
        assert_eq!(typed, keyed);
        assert!(typed.contains("dBFS | n/a (no noise floor) |"), "{typed}");
        assert!(
            typed.contains(
                "Noise floor: n/a (the samples carry no noise above the FFT's rounding); mean power"
            ),
            "{typed}"
        );
        // A carrier in the centre span the peak search skips is said, with the span.
        let mut centred = full.clone();
        centred.centre_carrier_dbfs = Some(-20.04);
        centred.centre_excluded_hz = Some(1464.84375);
        let (typed, keyed) = both(&CaptureEntry::Captured(Box::new(centred)));
        assert_eq!(typed, keyed);
        assert!(
            typed.contains(
                "Centre: -20.0 dBFS, a carrier or the radio's DC offset at the tuned frequency \
                 (±1.465 kHz not searched for peaks)"
            ),
            "{typed}"
        );
        assert!(!keyed.is_empty() && !full.errors.iter().any(|e| e.contains("noise floor")));
        assert!(!both(&CaptureEntry::Captured(Box::new(full.clone())))
            .0
            .contains("Centre:"));
        let mut lost = full;
        lost.lost_samples = Some(4096);
        lost.gaps = 2;
        let (typed, keyed) = both(&CaptureEntry::Captured(Box::new(lost)));
        assert_eq!(typed, keyed);
        assert!(typed.contains("Lost samples: 4096 in 2 gap(s)"), "{typed}");
        let row = CaptureEntry::NotCaptured(StepRow::new(
            0,
            crate::result::Status::Blocked,
            "no radio".into(),
        ));
        let (typed, keyed) = both(&row);
        assert_eq!(typed, keyed);
        assert!(typed.contains("Status: **BLOCKED**"), "{typed}");
    }

    /// The capture heading gives the requested args, then the driver's identity
    /// apart: requested args and the driver's keys never run together.
    #[test]
    fn capture_heading_shows_args_then_identity() {
        let d = json!({"args": "driver=rxsim,serial=demo-free,ppm=2.5", "driver": "rxsim",
                       "serial": "demo-free", "hardware_key": "rxsim"});
        assert_eq!(
            device_text(Some(&d)),
            "driver=rxsim,serial=demo-free,ppm=2.5 (driver rxsim, serial demo-free)"
        );
        let mut out = String::new();
        render_capture(&mut out, 1, &CaptureEntry::Other(json!({"device": d})));
        assert!(!out.contains("args="), "{out}");
        assert_eq!(device_text(Some(&json!("driver=rxsim"))), "driver=rxsim");
    }

    /// A capture that lost samples says how many and in how many gaps (or that the
    /// count is unknown); one that lost none, or predates the count, adds nothing.
    #[test]
    fn lost_samples_line_says_the_count_or_that_it_is_unknown() {
        let line = |c: serde_json::Value| {
            let mut out = String::new();
            write_levels(&mut out, &of_value(&c));
            out.lines()
                .find(|l| l.starts_with("Lost samples"))
                .map(str::to_owned)
        };
        assert_eq!(
            line(json!({"lost_samples": 4096, "gaps": 2})).as_deref(),
            Some("Lost samples: 4096 in 2 gap(s); the PSD averages gap-free segments only")
        );
        let unknown = line(json!({"lost_samples": null, "gaps": 1})).unwrap_or_default();
        assert!(unknown.contains("an unknown number"), "{unknown}");
        assert_eq!(line(json!({"lost_samples": 0, "gaps": 0})), None);
        assert_eq!(line(json!({"overflows": 0})), None);
    }
}
