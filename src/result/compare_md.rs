//! One `clkin_compare` section of `RX_RESULT.md`, rendered from its
//! `clkin_compares[]` JSON (the same text for `rxnode clkin compare` and the step).
use super::md_cell::md_cell;
use crate::json::num_of;
use serde_json::Value;
use std::fmt::Write as _;

/// `+r ± σ ppb` with as many decimals as σ needs (two significant figures:
/// [`rxnode_dsp::fmt_uncertain`]).
pub(crate) fn fmt_ppb(r: f64, sigma: f64) -> String {
    rxnode_dsp::fmt_uncertain(r, sigma, "ppb")
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_owned())
}

/// One comparison's section: the figure and verdict, how it was measured, one row
/// per radio.
pub(crate) fn render_compare_md(o: &mut String, n: usize, e: &Value) {
    let _ = writeln!(o, "### CLKIN comparison {n}\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    let st = e.get("status").and_then(Value::as_str).unwrap_or("?");
    let _ = writeln!(o, "| Status | {} |", md_cell(st));
    let k = e.get("clkin_compare").cloned().unwrap_or(Value::Null);
    if k.is_null() {
        if let Some(d) = e.get("detail").and_then(Value::as_str) {
            let _ = writeln!(o, "| Detail | {} |\n", md_cell(d));
        }
        return;
    }
    let verdict = k
        .get("verdict")
        .and_then(Value::as_str)
        .unwrap_or("none (no number, or ±2σ straddles the tolerance)");
    let _ = writeln!(o, "| Verdict | {} |", md_cell(verdict));
    let _ = writeln!(
        o,
        "| SLAVE relative to MASTER | {} |",
        match (
            num_of(&k, &["relative_ppb"]),
            num_of(&k, &["uncertainty_ppb"])
        ) {
            (Some(r), Some(s)) => format!("{} (1σ)", fmt_ppb(r, s)),
            _ => "—".to_owned(),
        }
    );
    let _ = writeln!(
        o,
        "| Tolerance | ±{} ppb |",
        or_dash(num_of(&k, &["tolerance_ppb"]).map(|t| t.to_string()))
    );
    let _ = writeln!(
        o,
        "| Tone | {} MHz (tuned {} MHz, {} MS/s, {} s) |",
        or_dash(num_of(&k, &["tone_hz"]).map(|t| format!("{:.6}", t / 1e6))),
        or_dash(num_of(&k, &["frequency_hz"]).map(|t| format!("{:.6}", t / 1e6))),
        or_dash(num_of(&k, &["sample_rate_hz"]).map(|t| format!("{}", t / 1e6))),
        or_dash(num_of(&k, &["duration_s"]).map(|t| t.to_string()))
    );
    if let (Some(p), Some(span)) = (num_of(&k, &["points"]), num_of(&k, &["span_s"])) {
        let _ = writeln!(
            o,
            "| Fit | {p:.0} phase points over {span:.3} s; residual RMS {} rad (max {}), lag-1 {} |",
            or_dash(num_of(&k, &["residual_rms_rad"]).map(|v| format!("{v:.4}"))),
            or_dash(num_of(&k, &["residual_max_rad"]).map(|v| format!("{v:.3}"))),
            or_dash(num_of(&k, &["residual_lag1"]).map(|v| format!("{v:.2}")))
        );
    }
    if let Some(d) = num_of(&k, &["difference_hz"]) {
        let _ = writeln!(o, "| SLAVE − MASTER tone | {d:+.6} Hz |");
    }
    if let Some(s) = num_of(&k, &["start_offset_s"]) {
        let _ = writeln!(
            o,
            "| Start offset | {:+.3} ms (SLAVE's first samples after MASTER's; adds only a constant phase) |",
            s * 1e3
        );
    }
    if let Some(d) = e.get("detail").and_then(Value::as_str) {
        let _ = writeln!(o, "| Detail | {} |", md_cell(d));
    }
    let _ = writeln!(
        o,
        "\n| Radio | Device | Clock source | ref_locked | Tone level | Tone SNR (band) | Samples | Overflows |\n|---|---|---|---|---|---|---|---|"
    );
    for role in ["master", "slave"] {
        let Some(r) = e.get(role) else { continue };
        let s = |k: &str| r.get(k).and_then(Value::as_str).map(md_cell);
        let u = |k: &str| r.get(k).and_then(Value::as_u64);
        let _ = writeln!(
            o,
            "| {} | `{}` | {}{} | {} | {} | {} | {} of {} | {} |",
            or_dash(s("role")),
            or_dash(
                r.get("device")
                    .and_then(|d| d.get("args"))
                    .and_then(Value::as_str)
                    .map(md_cell)
            ),
            or_dash(s("clock_source")),
            s("clock_source_set")
                .map(|c| format!(" (set to {c})"))
                .unwrap_or_default(),
            or_dash(
                r.get("ref_locked")
                    .and_then(Value::as_bool)
                    .map(|b| b.to_string())
            ),
            or_dash(num_of(r, &["tone", "level_dbfs"]).map(|v| format!("{v:.1} dBFS"))),
            or_dash(num_of(r, &["tone", "snr_db"]).map(|v| format!("{v:.1} dB"))),
            or_dash(u("samples_received").map(|v| v.to_string())),
            or_dash(u("samples_requested").map(|v| v.to_string())),
            or_dash(u("overflows").map(|v| v.to_string()))
        );
    }
    let _ = writeln!(o);
}

/// The operator's text of one comparison: the verdict line, the figure, each radio.
pub(crate) fn render_compare_text(o: &mut String, e: &Value) {
    let st = e.get("status").and_then(Value::as_str).unwrap_or("?");
    let _ = writeln!(
        o,
        "{st}: {}",
        e.get("detail").and_then(Value::as_str).unwrap_or("")
    );
    let k = e.get("clkin_compare").cloned().unwrap_or(Value::Null);
    if let Some(d) = num_of(&k, &["difference_hz"]) {
        let _ = writeln!(
            o,
            "  SLAVE − MASTER tone {d:+.6} Hz over {} phase points; residual RMS {} rad",
            or_dash(num_of(&k, &["points"]).map(|p| format!("{p:.0}"))),
            or_dash(num_of(&k, &["residual_rms_rad"]).map(|v| format!("{v:.4}")))
        );
    }
    for role in ["master", "slave"] {
        let Some(r) = e.get(role) else { continue };
        let _ = writeln!(
            o,
            "  {:<6} {}: clock {}{}, ref_locked {}, tone {} ({} over the band's noise), {} of {} samples, {} overflow(s)",
            r.get("role").and_then(Value::as_str).unwrap_or(role),
            r.get("device").and_then(|d| d.get("args")).and_then(Value::as_str).unwrap_or("?"),
            r.get("clock_source").and_then(Value::as_str).unwrap_or("?"),
            r.get("clock_source_set")
                .and_then(Value::as_str)
                .map(|c| format!(" (set to {c})"))
                .unwrap_or_default(),
            or_dash(r.get("ref_locked").and_then(Value::as_bool).map(|b| b.to_string())),
            or_dash(num_of(r, &["tone", "level_dbfs"]).map(|v| format!("{v:.1} dBFS"))),
            or_dash(num_of(r, &["tone", "snr_db"]).map(|v| format!("{v:.1} dB"))),
            r.get("samples_received").and_then(Value::as_u64).unwrap_or(0),
            r.get("samples_requested").and_then(Value::as_u64).unwrap_or(0),
            r.get("overflows").and_then(Value::as_u64).unwrap_or(0)
        );
    }
}
