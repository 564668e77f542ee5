//! One sweep's section of `RX_RESULT.md`, rendered from its `sweeps[]` JSON
//! (the same text for `rxnode sweep` and the `rx_sweep` step of a run).
use serde_json::Value;
use std::fmt::Write as _;

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
            "| Rate (actual) | {} |\n| Gain (read back) | {} dB {} |",
            a.get("sample_rate_hz")
                .and_then(Value::as_f64)
                .map_or_else(|| "n/a".to_owned(), rxnode_interlock::fmt_rate),
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
