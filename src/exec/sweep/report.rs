//! What a sweep leaves behind: its JSON (in the result and for `--json`), the
//! rtl_power CSV, the spectrum and heatmap pictures, and its section of
//! `RX_RESULT.md`.
use super::{status_of, Swept};
use crate::result::plot::{Heatmap, SpectrumPlot, Trace};
use rxnode_hw::{HopStatus, SweepReport};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The JSON of a sweep (in the result and for `--json`).
pub(crate) fn sweep_json(step: usize, sw: &Swept, csv: Option<Value>) -> Value {
    let r = &sw.report;
    let hops: Vec<Value> = r
        .hops
        .iter()
        .map(|h| {
            json!({
                "hop": h.hop,
                "repeat": h.repeat,
                "requested_center_hz": h.requested_center_hz,
                "actual_center_hz": h.actual_center_hz,
                "low_hz": h.low_hz,
                "high_hz": h.high_hz,
                "samples": h.samples,
                "settle_samples": h.settle_samples,
                "overflows": h.overflows,
                "attempts": h.attempts,
                "status": h.status,
                "error": h.error,
            })
        })
        .collect();
    let peaks: Vec<Value> = r
        .peaks
        .iter()
        .zip(&r.peak_widths_hz)
        .map(|(p, w)| {
            json!({"frequency_hz": p.frequency_hz, "power_db": p.power_db, "snr_db": p.snr_db, "width_3db_hz": w})
        })
        .collect();
    json!({
        "step": step,
        "status": status_of(r).as_str(),
        "device": sw.device,
        "started_at": sw.started_at,
        "requested": r.config,
        "actual": {
            "sample_rate_hz": r.sample_rate_hz,
            "gain_db": sw.gain_db,
            "gain_elements_db": sw.gain_elements_db,
        },
        "fft_size": r.plan.fft_size,
        "bin_hz": r.plan.bin_hz,
        "hops_per_repeat": r.plan.centers_hz.len(),
        "hops": hops,
        "peaks": peaks,
        "noise_floor_db": r.noise_floor_db,
        "failed_hops": r.failed_ranges_hz.iter().map(|f| json!({"low_hz": f[0], "high_hz": f[1]})).collect::<Vec<_>>(),
        "elapsed_s": r.elapsed_s,
        "settle_dwell_floor_s": r.floor_s,
        "cancelled": r.cancelled,
        "csv": csv,
    })
}

/// rtl_power CSV: one line per measured hop and repeat,
/// `date, time, Hz low, Hz high, Hz step, samples, dB, dB, …` (UTC). A failed hop
/// has no line (its range is in the JSON): nothing is filled in.
pub(crate) fn rtl_power_csv(r: &SweepReport) -> String {
    let mut out = String::new();
    let fmt = time::macros::format_description!("[year]-[month]-[day], [hour]:[minute]:[second]");
    for h in r
        .hops
        .iter()
        .filter(|h| h.status == HopStatus::Ok && !h.db.is_empty())
    {
        let t = time::OffsetDateTime::from_unix_timestamp(h.unix_time_s as i64)
            .ok()
            .and_then(|t| t.format(&fmt).ok())
            .unwrap_or_else(|| "1970-01-01, 00:00:00".into());
        let _ = write!(
            out,
            "{t}, {:.0}, {:.0}, {:.2}, {}",
            h.low_hz, h.high_hz, h.step_hz, h.samples
        );
        for v in &h.db {
            if v.is_finite() {
                let _ = write!(out, ", {v:.2}");
            } else {
                // A bin outside the hop's FFT after a large retune error: rtl_power's
                // own "no data" spelling.
                out.push_str(", nan");
            }
        }
        out.push('\n');
    }
    out
}

fn title(sw: &Swept, what: &str) -> String {
    let r = &sw.report;
    let args = sw.device.get("args").and_then(Value::as_str).unwrap_or("?");
    let dev: String = if args.chars().count() > 32 {
        args.chars().take(31).chain(std::iter::once('…')).collect()
    } else {
        args.to_owned()
    };
    format!(
        "{what} · {dev} · {:.3}–{:.3} MHz · {:.3} MS/s · bin {:.2} kHz · {}",
        r.config.start_hz / 1e6,
        r.config.stop_hz / 1e6,
        r.sample_rate_hz / 1e6,
        r.plan.bin_hz / 1e3,
        sw.started_at
    )
}

/// The stitched spectrum picture of a sweep.
pub(crate) fn spectrum_plot(sw: &Swept, what: &str) -> SpectrumPlot {
    let r = &sw.report;
    SpectrumPlot {
        title: title(sw, what),
        trace: Trace {
            start_hz: r.config.start_hz,
            step_hz: r.plan.bin_hz,
            db: r
                .spectrum_db
                .iter()
                .map(|v| v.map_or(f64::NAN, f64::from))
                .collect(),
        },
        peaks: r
            .peaks
            .iter()
            .map(|p| (p.frequency_hz, p.power_db))
            .collect(),
        noise_floor_db: r.noise_floor_db,
        markers: Vec::new(),
        failed_hz: r.failed_ranges_hz.clone(),
        freq_known: true,
    }
}

/// The heatmap of a sweep (one row per repeat), `None` for a single pass.
pub(crate) fn heatmap(sw: &Swept, what: &str) -> Option<Heatmap> {
    let r = &sw.report;
    if r.config.repeats < 2 {
        return None;
    }
    let n = r.plan.total_bins;
    let mut rows = Vec::new();
    let mut times = Vec::new();
    let t0 = r
        .hops
        .iter()
        .map(|h| h.unix_time_s)
        .find(|t| *t > 0.0)
        .unwrap_or(0.0);
    for rep in 0..r.config.repeats {
        let mut row = vec![f64::NAN; n];
        let mut t = None;
        for h in r
            .hops
            .iter()
            .filter(|h| h.repeat == rep && h.status == HopStatus::Ok)
        {
            t.get_or_insert(h.unix_time_s - t0);
            let (b0, _) = r.plan.hop_bins(h.hop);
            for (i, v) in h.db.iter().enumerate() {
                if let Some(x) = row.get_mut(b0 + i) {
                    *x = f64::from(*v);
                }
            }
        }
        times.push(t.unwrap_or_else(|| times.last().copied().unwrap_or(0.0)));
        rows.push(row);
    }
    Some(Heatmap {
        title: title(sw, &format!("{what} heatmap")),
        start_hz: r.config.start_hz,
        step_hz: r.plan.bin_hz,
        row_time_s: times,
        rows,
    })
}

/// One sweep's section of `RX_RESULT.md`.
pub(crate) fn render_sweep_md(o: &mut String, n: usize, s: &Value) {
    let _ = writeln!(o, "### Sweep {n}\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(
        o,
        "| Status | {} |",
        s.get("status").and_then(Value::as_str).unwrap_or("?")
    );
    if let Some(d) = s.get("detail").and_then(Value::as_str) {
        let _ = writeln!(
            o,
            "| Detail | {} |",
            d.replace('|', "\\|").replace('\n', " ")
        );
        return;
    }
    md_settings(o, s);
    md_files(o, s);
    md_peaks(o, s);
    md_failed_hops(o, s);
    let _ = writeln!(o);
}

/// The band asked for, what the radio had, the noise floor and the time.
fn md_settings(o: &mut String, s: &Value) {
    let f = |k: &str| s.get(k).and_then(Value::as_f64);
    if let Some(req) = s.get("requested") {
        let g = |k: &str| req.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let _ = writeln!(
            o,
            "| Band | {:.6}–{:.6} MHz |\n| Bin | {:.2} Hz (asked {:.2}) |\n| Settle / dwell | {} s / {} s |\n| Crop | {} |\n| Repeats | {} |",
            g("start_hz") / 1e6,
            g("stop_hz") / 1e6,
            f("bin_hz").unwrap_or(f64::NAN),
            g("bin_hz"),
            g("settle_s"),
            g("dwell_s"),
            g("crop"),
            g("repeats")
        );
    }
    if let Some(a) = s.get("actual") {
        let _ = writeln!(
            o,
            "| Rate (actual) | {} S/s |\n| Gain (read back) | {} dB {} |",
            a.get("sample_rate_hz")
                .and_then(Value::as_f64)
                .unwrap_or(f64::NAN),
            a.get("gain_db")
                .and_then(Value::as_f64)
                .map(|g| g.to_string())
                .unwrap_or("n/a".into()),
            a.get("gain_elements_db")
                .map(|g| g.to_string())
                .unwrap_or_default()
                .replace('|', "\\|")
        );
    }
    let _ = writeln!(
        o,
        "| Noise floor | {} |",
        f("noise_floor_db")
            .map(|v| format!("{v:.2} dBFS/bin"))
            .unwrap_or("n/a".into())
    );
    let _ = writeln!(
        o,
        "| Time | {:.3} s (settle + dwell floor {:.3} s) |",
        f("elapsed_s").unwrap_or(f64::NAN),
        f("settle_dwell_floor_s").unwrap_or(f64::NAN)
    );
}

/// The CSV and the hop-table file, with their hashes.
fn md_files(o: &mut String, s: &Value) {
    if let Some(c) = s.get("csv").filter(|c| !c.is_null()) {
        let _ = writeln!(
            o,
            "| CSV | `{}` {} bytes, SHA-256 `{}` |",
            c.get("file").and_then(Value::as_str).unwrap_or("?"),
            c.get("bytes").and_then(Value::as_u64).unwrap_or(0),
            c.get("sha256").and_then(Value::as_str).unwrap_or("?")
        );
    }
    if let Some(c) = s.get("hops_file").filter(|c| !c.is_null()) {
        let _ = writeln!(
            o,
            "| Hop table | `{}` ({} hops; here only the hops that did not go cleanly), SHA-256 `{}` |",
            c.get("file").and_then(Value::as_str).unwrap_or("?"),
            c.get("hops").and_then(Value::as_u64).unwrap_or(0),
            c.get("sha256").and_then(Value::as_str).unwrap_or("?")
        );
    }
}

/// The band's peaks.
fn md_peaks(o: &mut String, s: &Value) {
    if let Some(p) = s
        .get("peaks")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
    {
        let _ = writeln!(
            o,
            "\n| Peak | Frequency | Power | SNR | −3 dB width |\n|---|---|---|---|---|"
        );
        for (i, k) in p.iter().enumerate() {
            let g = |key: &str| k.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let _ = writeln!(
                o,
                "| {} | {:.6} MHz | {:.2} dBFS | {:.1} dB | {:.0} Hz |",
                i + 1,
                g("frequency_hz") / 1e6,
                g("power_db"),
                g("snr_db"),
                g("width_3db_hz")
            );
        }
    }
}

/// The hops that failed twice (never interpolated).
fn md_failed_hops(o: &mut String, s: &Value) {
    if let Some(fh) = s
        .get("failed_hops")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
    {
        let _ = writeln!(o, "\nFailed hops (no data, never interpolated):\n");
        for h in fh {
            let g = |key: &str| h.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let _ = writeln!(
                o,
                "- {:.6}–{:.6} MHz",
                g("low_hz") / 1e6,
                g("high_hz") / 1e6
            );
        }
    }
}
