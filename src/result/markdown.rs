//! `RX_RESULT.md`: the Markdown twin of `RX_RESULT.json`, with the trailer line
//! that binds it to the exact JSON bytes.
use super::md_cell::md_cell;
use super::model::RxResult;
use super::sections::freq_cal::FreqCalEntry;
use super::sections::tone::Tone;
use super::sections::TxRecord;
use rxnode_interlock::sha256_hex;
use serde_json::Value;
use std::fmt::Write as _;

pub(super) fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

pub(super) fn fmt_hz(v: Option<f64>) -> String {
    match v {
        Some(f) if f.abs() >= 1e6 => format!("{:.6} MHz", f / 1e6),
        Some(f) if f.abs() >= 1e3 => format!("{:.3} kHz", f / 1e3),
        Some(f) => format!("{f} Hz"),
        None => "—".to_owned(),
    }
}

pub(super) fn fmt_opt(v: Option<f64>, unit: &str, prec: usize) -> String {
    match v {
        Some(f) => format!("{f:.prec$}{unit}"),
        None => "—".to_owned(),
    }
}

pub(super) fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

/// A Unicode block sparkline of a PSD (dB), at most `width` columns (each the
/// maximum of its bins, so narrow tones stay visible). Non-finite values are ignored.
pub(crate) fn sparkline(psd_db: &[f64], width: usize) -> Option<String> {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = psd_db.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || width == 0 {
        return None;
    }
    let cols = width.min(finite.len());
    let mut buckets = Vec::with_capacity(cols);
    for c in 0..cols {
        let a = c * finite.len() / cols;
        let b = ((c + 1) * finite.len() / cols).max(a + 1);
        buckets.push(
            finite[a..b]
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        );
    }
    let lo = buckets.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = buckets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = hi - lo;
    Some(
        buckets
            .iter()
            .map(|v| {
                if span <= 0.0 {
                    BLOCKS[0]
                } else {
                    let i = ((v - lo) / span * 7.0).round() as usize;
                    BLOCKS[i.min(7)]
                }
            })
            .collect(),
    )
}

/// The trailer line that binds the Markdown to the JSON bytes.
fn trailer(r: &RxResult, json_sha256: &str) -> String {
    format!(
        "<!-- rxnode-result schema_version={} task_id={} status=\"{}\" json_sha256={} -->",
        r.schema_version, r.task_id, r.status, json_sha256
    )
}

/// The `json_sha256=` value of the Markdown's last `<!-- rxnode-result … -->`
/// trailer line, when it is 64 lower-case hex digits: rxnode's own hash line, which
/// the publication's secret scan must not take for a secret (whether it matches the
/// JSON is the validator's check, and a mismatch is refused there).
pub(crate) fn trailer_json_sha256(md: &str) -> Option<&str> {
    let line = md
        .lines()
        .rev()
        .find(|l| l.starts_with("<!-- rxnode-result ") && l.ends_with(" -->"))?;
    let v = line.split(" json_sha256=").nth(1)?.split(' ').next()?;
    (v.len() == 64
        && v.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(v)
}

/// Render `RX_RESULT.md` from the value (the trailer hashes [`RxResult::to_json_bytes`]).
pub(crate) fn render_markdown(r: &RxResult) -> String {
    render_markdown_for(r, &r.to_json_bytes())
}

/// The Markdown rxnode renders for these `RX_RESULT.json` bytes, when they
/// deserialize into a result (`None` otherwise): what the result fuzzer drives.
pub fn markdown_for_result_json(json: &[u8]) -> Option<String> {
    serde_json::from_slice::<RxResult>(json)
        .ok()
        .map(|r| render_markdown(&r))
}

/// Render `RX_RESULT.md` for JSON bytes already serialized (no second pass over
/// captures and their PSD arrays).
pub(crate) fn render_markdown_for(r: &RxResult, json: &[u8]) -> String {
    let json_sha = sha256_hex(json);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# RX result: {} — {}\n",
        md_cell(&r.task_id),
        md_cell(&r.task_title)
    );
    render_summary(&mut o, r);
    render_checks(&mut o, r);
    render_captures_and_sweeps(&mut o, r);
    render_tx(&mut o, r);
    render_inventory_and_errors(&mut o, r);
    let _ = writeln!(o, "\n{}", trailer(r, &json_sha));
    o
}

/// The summary table: status, task, risk, source, approval, node, times.
fn render_summary(o: &mut String, r: &RxResult) {
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| Status | {} |", r.status);
    let _ = writeln!(o, "| Task | `{}` |", md_cell(&r.task_id));
    let _ = writeln!(o, "| Risk level | {} |", r.risk_level);
    let _ = writeln!(
        o,
        "| Source | `{}` @ `{}` |",
        md_cell(&r.source_branch),
        md_cell(r.source_commit.as_deref().unwrap_or("—"))
    );
    let _ = writeln!(o, "| Expected head | `{}` |", md_cell(&r.expected_head));
    let _ = writeln!(
        o,
        "| Approval | {} |",
        r.approval
            .as_ref()
            .map(|a| format!(
                "{} (task SHA-256 `{}`)",
                md_cell(&a.at),
                md_cell(&a.task_sha256)
            ))
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        o,
        "| Authorization | {} |",
        r.authorization
            .as_ref()
            .map(|a| format!("{} at {}", md_cell(&a.kind), md_cell(&a.at)))
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        o,
        "| Node | {}rxnode {}, SoapySDR {}{} |",
        r.node
            .name
            .as_deref()
            .map(|n| format!("{}, ", md_cell(n)))
            .unwrap_or_default(),
        md_cell(&r.node.rxnode_version),
        md_cell(r.node.soapysdr_version.as_deref().unwrap_or("—")),
        r.node
            .hostname
            .as_deref()
            .map(|h| format!(", host {}", md_cell(h)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "| Started | {} |",
        md_cell(r.timeline.started_at.as_deref().unwrap_or("—"))
    );
    let _ = writeln!(
        o,
        "| Completed | {} |",
        md_cell(r.timeline.completed_at.as_deref().unwrap_or("—"))
    );
    if let Some(step) = r.timeline.wall_clock_step_s {
        let _ = writeln!(
            o,
            "| Wall-clock step | {step:+.3} s during the run (times above from the monotonic clock) |"
        );
    }
}

/// One row per check (the validator finds each by its `| n | name | status |`).
fn render_checks(o: &mut String, r: &RxResult) {
    let _ = writeln!(
        o,
        "\n## Checks\n\n| # | Check | Status | Detail |\n|---|---|---|---|"
    );
    for (i, c) in r.checks.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            i + 1,
            md_cell(&c.name),
            c.status,
            md_cell(&c.detail)
        );
    }
}

/// The capture sections, the sweep sections, then the CLKIN comparisons.
fn render_captures_and_sweeps(o: &mut String, r: &RxResult) {
    if !r.captures.is_empty() {
        let _ = writeln!(o, "\n## Captures\n");
        for (i, c) in r.captures.iter().enumerate() {
            super::capture_md::render_capture(o, i + 1, c);
        }
    }
    if !r.sweeps.is_empty() {
        let _ = writeln!(o, "\n## Sweeps\n");
        for (i, sw) in r.sweeps.iter().enumerate() {
            super::sweep_md::render_sweep_md(o, i + 1, sw);
        }
    }
    if !r.clkin_compares.is_empty() {
        let _ = writeln!(o, "\n## CLKIN comparisons\n");
        for (i, e) in r.clkin_compares.iter().enumerate() {
            super::compare_md::render_compare_md(o, i + 1, e);
        }
    }
    render_freq_cal(o, r);
}

/// The `freq_cal` steps: the radio error with its uncertainty, the signal, the
/// clock's last measurement (docs/protocol.md#freq_cal).
fn render_freq_cal(o: &mut String, r: &RxResult) {
    if r.freq_cal.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n## Frequency calibration\n");
    let _ = writeln!(
        o,
        "ppm > 0: the radio's clock runs fast (docs/operator.md#calibrating-a-radio-without-a-generator).\n"
    );
    let _ = writeln!(
        o,
        "| step | status | method | cell | radio error (ppm, 1σ) | confidence | bursts used | clock | detail |\n|---|---|---|---|---|---|---|---|---|"
    );
    for e in &r.freq_cal {
        let _ = writeln!(o, "{}", freq_cal_row(e));
    }
}

/// One row of the `freq_cal` table.
fn freq_cal_row(e: &FreqCalEntry) -> String {
    let fin = |v: Option<f64>| v.filter(|x| x.is_finite());
    let (step, status, detail) = match e {
        FreqCalEntry::Measured(m) => (m.step, m.status, m.detail.as_str()),
        FreqCalEntry::NotMeasured(row) => (Some(row.step), row.status, row.detail.as_str()),
    };
    let m = e.record();
    let err = match m.map(|m| (fin(m.ppm), fin(m.uncertainty_ppm))) {
        Some((Some(p), Some(u))) => rxnode_dsp::fmt_uncertain(p, u, ""),
        _ => "—".to_owned(),
    };
    let bursts = match m.map(|m| (m.bursts_used, m.bursts)) {
        Some((Some(u), Some(n))) => format!("{u} of {n}"),
        _ => "—".to_owned(),
    };
    let clock = m
        .and_then(|m| m.clock.as_ref())
        .map(|c| {
            let (source, last) = c.parts();
            let src = source.unwrap_or("?");
            match last {
                // The value with its uncertainty and its age, as a capture's
                // correction line says them: a calibration is only as good as both.
                Some(l) => {
                    let age = match l.age_s.filter(|a| a.is_finite()) {
                        Some(a) => format!("{} old", crate::store::calibration::fmt_age(a)),
                        None => "age unknown".to_owned(),
                    };
                    let value = if l.ppm.is_finite() && l.uncertainty_ppm.is_finite() {
                        format!(
                            "{} (1σ)",
                            rxnode_dsp::fmt_uncertain(l.ppm, l.uncertainty_ppm, "ppm")
                        )
                    } else {
                        "— (not a finite number)".to_owned()
                    };
                    format!(
                        "{src}; last {value} ({}, {}, {age}{})",
                        l.method,
                        l.time,
                        if l.stale { ", stale" } else { "" }
                    )
                }
                None => format!("{src}; never measured"),
            }
        })
        .unwrap_or_else(|| "—".to_owned());
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
        step.map_or_else(|| "—".to_owned(), |n| n.to_string()),
        md_cell(status.as_str()),
        md_cell(m.map_or("", |m| m.method.as_str())),
        md_cell(m.and_then(|m| m.cell.as_deref()).unwrap_or("")),
        err,
        fin(m.and_then(|m| m.confidence))
            .map(|c| format!("{c:.2}"))
            .unwrap_or_else(|| "—".to_owned()),
        bursts,
        md_cell(&clock),
        md_cell(detail),
    )
}

/// The transmission's parameters, when a tone was transmitted.
fn render_tx(o: &mut String, r: &RxResult) {
    match &r.tx {
        Some(TxRecord::Tone(t)) => render_tx_rows(o, &tone_rows(t)),
        Some(TxRecord::Other(v)) => render_tx_table(o, v),
        None => {}
    }
}

/// The `## Transmission` section of a `tx` record in another build's shape,
/// read by its keys.
fn render_tx_table(o: &mut String, tx: &Value) {
    if let Some(obj) = tx.as_object() {
        let rows: Vec<(&str, String)> = obj
            .iter()
            .map(|(k, v)| (k.as_str(), tx_value(k, v)))
            .collect();
        render_tx_rows(o, &rows);
    } else {
        let _ = writeln!(o, "\n## Transmission\n");
        let _ = writeln!(o, "{}", md_cell(&tx.to_string()));
    }
}

/// The `## Transmission` section: one row per field, named in words.
fn render_tx_rows(o: &mut String, rows: &[(&str, String)]) {
    let _ = writeln!(o, "\n## Transmission\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    for (k, v) in rows {
        let _ = writeln!(o, "| {} | {} |", md_cell(&tx_label(k)), md_cell(v));
    }
}

/// A tone's record field by field, in the order the file has them (sorted), each
/// value as [`tx_value`] shows the same field.
fn tone_rows(t: &Tone) -> Vec<(&'static str, String)> {
    let shown = |x: Option<f64>, f: &dyn Fn(f64) -> String| {
        x.filter(|x| x.is_finite())
            .map_or_else(|| "—".to_owned(), f)
    };
    let hz = |x: f64| shown(Some(x), &|x| fmt_hz(Some(x)));
    let secs = |x: Option<f64>| shown(x, &|x| format!("{x:.3} s"));
    let mut rows = vec![
        ("cancelled", t.cancelled.to_string()),
        ("device", t.device.clone()),
        ("frequency_hz", hz(t.frequency_hz)),
        ("gain_db", shown(Some(t.gain_db), &|x| format!("{x:.1} dB"))),
    ];
    if let Some(k) = &t.keyed_off_by {
        rows.push(("keyed_off_by", k.clone()));
    }
    rows.extend([
        ("on_air_s", secs(Some(t.on_air_s))),
        ("past_permit_s", secs(Some(t.past_permit_s))),
        (
            "sample_rate_hz",
            shown(Some(t.sample_rate_hz), &rxnode_interlock::fmt_rate),
        ),
        ("samples_planned", t.samples_planned.to_string()),
        ("samples_sent", t.samples_sent.to_string()),
        ("started_at", t.started_at.clone()),
        ("state_unknown_s", secs(t.state_unknown_s)),
        ("stopped_at", t.stopped_at.clone()),
        ("tone_offset_hz", hz(t.tone_offset_hz)),
    ]);
    rows
}

/// The unit suffixes of transmission fields, and the word a person reads.
const TX_UNITS: [(&str, &str); 4] = [("_hz", "Hz"), ("_s", "s"), ("_db", "dB"), ("_ppm", "ppm")];

/// A transmission field's name for people: its words without the unit suffix
/// (`frequency_hz` → `frequency`, `samples_sent` → `samples sent`).
fn tx_label(key: &str) -> String {
    let bare = TX_UNITS
        .iter()
        .find_map(|(suffix, _)| key.strip_suffix(suffix))
        .unwrap_or(key);
    bare.replace('_', " ")
}

/// A transmission field's value for people, with its unit: frequencies in the SI
/// prefix a person reads (`433.920000 MHz`), rates in MS/s, times in seconds to
/// the millisecond (`0.950 s`, not `0.9501707553863525`), gains in dB; other
/// values as recorded, and an absent one as `—`.
fn tx_value(key: &str, v: &Value) -> String {
    let Some(x) = v.as_f64() else {
        return if v.is_null() {
            "—".to_owned()
        } else {
            text_of(Some(v))
        };
    };
    if key.ends_with("rate_hz") {
        return rxnode_interlock::fmt_rate(x);
    }
    if key.ends_with("_hz") {
        return fmt_hz(Some(x));
    }
    match TX_UNITS.iter().find(|(suffix, _)| key.ends_with(suffix)) {
        Some(("_s", _)) => format!("{x:.3} s"),
        Some(("_db", _)) => format!("{x:.1} dB"),
        Some((_, unit)) => format!("{x} {unit}"),
        None => text_of(Some(v)),
    }
}

/// The inventory's device count and the errors met.
fn render_inventory_and_errors(o: &mut String, r: &RxResult) {
    if let Some(inv) = r.inventory.as_ref().filter(|v| !v.is_null()) {
        let n = inv.device_count();
        let _ = writeln!(
            o,
            "\n## Inventory\n\n{} (details in RX_RESULT.json)",
            n.map(|n| format!("{n} device(s)"))
                .unwrap_or_else(|| "recorded".into())
        );
    }
    if !r.errors.is_empty() {
        let _ = writeln!(o, "\n## Errors\n");
        for e in &r.errors {
            let _ = writeln!(o, "- {}", md_cell(e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The transmission table names fields in words with their units: times to the
    /// millisecond (not to the last bit of a float), frequencies in MHz, rates in
    /// MS/s, gains in dB, counts as recorded, an absent value as `—`.
    #[test]
    fn transmission_fields_read_in_words_and_units() {
        let tx = json!({"on_air_s": 0.9501707553863525, "past_permit_s": 0.0,
                        "samples_sent": 1900341, "frequency_hz": 433920000.0,
                        "sample_rate_hz": 2e6, "gain_db": 0.0, "state_unknown_s": null});
        let mut out = String::new();
        render_tx_table(&mut out, &tx);
        for want in [
            "| on air | 0.950 s |",
            "| past permit | 0.000 s |",
            "| samples sent | 1900341 |",
            "| frequency | 433.920000 MHz |",
            "| sample rate | 2.000 MS/s |",
            "| gain | 0.0 dB |",
            "| state unknown | — |",
        ] {
            assert!(out.contains(want), "no {want:?} in {out}");
        }
        assert!(!out.contains("0.9501707553863525"), "{out}");
        assert!(!out.contains("_hz") && !out.contains("None"), "{out}");
    }

    /// A tone's record shows field by field as its JSON object does, read by its
    /// keys (as a record in another build's shape is): a present `keyed_off_by`
    /// and an unknown state included.
    #[test]
    fn a_tone_record_shows_as_its_json_does() {
        let mut tone = Tone {
            cancelled: false,
            device: "driver=rxsim,serial=S|1".into(),
            frequency_hz: 433.92e6,
            gain_db: 10.0,
            keyed_off_by: None,
            on_air_s: 0.9501707553863525,
            past_permit_s: 0.0,
            sample_rate_hz: 2e6,
            samples_planned: 2_000_000,
            samples_sent: 1_900_341,
            started_at: "2026-12-01T10:00:00.000Z".into(),
            state_unknown_s: None,
            stopped_at: "2026-12-01T10:00:00.950Z".into(),
            tone_offset_hz: 100e3,
        };
        for _ in 0..2 {
            let record = TxRecord::Tone(Box::new(tone.clone()));
            let (mut typed, mut keyed) = (String::new(), String::new());
            render_tx_rows(&mut typed, &tone_rows(&tone));
            render_tx_table(&mut keyed, &serde_json::to_value(&record).unwrap());
            assert_eq!(typed, keyed);
            assert!(typed.contains("| tone offset | 100.000 kHz |"), "{typed}");
            tone.keyed_off_by = Some("SIGTERM".into());
            tone.state_unknown_s = Some(0.25);
        }
    }

    /// The freq_cal table's clock cell shows the radio's last calibration as every
    /// measured number is shown: with its one-sigma uncertainty and its age (or
    /// "age unknown"), never the bare value.
    #[test]
    fn a_freq_cal_last_calibration_shows_its_sigma_and_age() {
        let mut row = json!({"actual": {"antenna": "RX", "bandwidth_hz": 750000.0,
            "clock_source": "internal", "frequency_hz": 935200000.0, "gain_db": 20.0,
            "gain_elements_db": {"LNA": 16.0, "VGA": 4.0}, "sample_rate_hz": 1000000.0},
            "bursts": 84, "bursts_used": 68, "calibration_stored": true,
            "capture": {"dropped_samples": 0, "mean_power_dbfs": -57.8, "overflows": 0,
                "samples_processed": 4000000, "samples_received": 4000000,
                "samples_requested": 4000000, "stop_reason": "complete"},
            "cell": "BCCH 935.200 MHz", "cell_uncertainty_ppm": 0.0289,
            "clock": {"last_measurement": {"age_s": 5400.0, "method": "gsm",
                "ppm": -12.49655405624769, "reference": "GSM BCCH 935.200 MHz",
                "stale": false, "time": "2026-12-07T16:58:04+00:00",
                "uncertainty_ppm": 0.029256371743489405},
                "ppm_correction_applied": null, "radio": "driver=rxsim,serial=s",
                "source": "internal"},
            "confidence": 0.99, "detail": "measured", "detections": [],
            "device": {"args": "driver=rxsim,serial=s", "driver": "rxsim",
                "hardware_key": "rxsim", "serial": "s"},
            "frequency_hz": 935200000.0, "measurement_uncertainty_ppm": 0.0048,
            "method": "gsm", "nominal_offset_hz": 67708.3, "ppm": -12.49655405624769,
            "requested": {"antenna": null, "bandwidth_hz": null, "clock_source": null,
                "duration_s": 4.0, "frequency_hz": 935200000.0, "gain_db": 20.0,
                "sample_rate_hz": 1000000.0},
            "search_hz": [11595.6, 123827.7], "seconds_analysed": 4.0, "status": "PASS",
            "step": 2, "uncertainty_ppm": 0.029256371743489405});
        let entry: FreqCalEntry = serde_json::from_value(row.clone()).unwrap();
        let md = freq_cal_row(&entry);
        assert!(
            md.contains(
                "internal; last -12.497 ± 0.029 ppm (1σ) (gsm, 2026-12-07T16:58:04+00:00, 90.0 min old)"
            ),
            "{md}"
        );
        assert!(!md.contains("-12.4966"), "{md}");
        row["clock"]["last_measurement"]["age_s"] = json!(null);
        let entry: FreqCalEntry = serde_json::from_value(row).unwrap();
        let md = freq_cal_row(&entry);
        assert!(
            md.contains("± 0.029 ppm (1σ) (gsm, 2026-12-07T16:58:04+00:00, age unknown)"),
            "{md}"
        );
    }

    #[test]
    fn sparkline_shape() {
        assert_eq!(sparkline(&[], 10), None);
        assert_eq!(sparkline(&[f64::NAN], 10), None);
        assert_eq!(sparkline(&[0.0, 7.0], 10).unwrap(), "▁█");
        assert_eq!(sparkline(&[1.0, 1.0, 1.0], 10).unwrap(), "▁▁▁");
        let wide: Vec<f64> = (0..1000)
            .map(|i| if i == 500 { 0.0 } else { -90.0 })
            .collect();
        let s = sparkline(&wide, 64).unwrap();
        assert_eq!(s.chars().count(), 64);
        assert_eq!(
            s.chars().filter(|c| *c == '█').count(),
            1,
            "a one-bin tone stays visible"
        );
    }
}
