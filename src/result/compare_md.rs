//! One `clkin_compare` section of `RX_RESULT.md`, rendered from its
//! `clkin_compares[]` JSON (the same text for `rxnode clkin compare` and the step).
use super::md_cell::md_cell;
use super::sections::compare::{CompareEntry, CompareRecord, Verdict};
use std::fmt::Write as _;

/// `+r ± σ ppb` with as many decimals as σ needs (two significant figures:
/// [`rxnode_dsp::fmt_uncertain`]).
pub(crate) fn fmt_ppb(r: f64, sigma: f64) -> String {
    rxnode_dsp::fmt_uncertain(r, sigma, "ppb")
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_owned())
}

/// A number as the section shows it: finite, or not at all.
fn fin(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// One comparison's section: the figure and verdict, how it was measured, one row
/// per radio.
pub(crate) fn render_compare_md(o: &mut String, n: usize, e: &CompareEntry) {
    let _ = writeln!(o, "### CLKIN comparison {n}\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| Status | {} |", md_cell(e.status().as_str()));
    let Some(e) = e.record() else {
        let _ = writeln!(o, "| Detail | {} |\n", md_cell(e.detail()));
        return;
    };
    let k = &e.clkin_compare;
    let verdict = k.verdict.map_or(
        "none (no number, or ±2σ straddles the tolerance)",
        Verdict::as_str,
    );
    let _ = writeln!(o, "| Verdict | {} |", md_cell(verdict));
    let _ = writeln!(
        o,
        "| SLAVE relative to MASTER | {} |",
        match (fin(k.relative_ppb), fin(k.uncertainty_ppb)) {
            (Some(r), Some(s)) => format!("{} (1σ)", fmt_ppb(r, s)),
            _ => "—".to_owned(),
        }
    );
    let _ = writeln!(
        o,
        "| Tolerance | ±{} ppb |",
        or_dash(fin(Some(k.tolerance_ppb)).map(|t| t.to_string()))
    );
    let _ = writeln!(
        o,
        "| Tone | {} MHz (tuned {} MHz, {} MS/s, {} s) |",
        or_dash(fin(Some(k.tone_hz)).map(|t| format!("{:.6}", t / 1e6))),
        or_dash(fin(Some(k.frequency_hz)).map(|t| format!("{:.6}", t / 1e6))),
        or_dash(fin(Some(k.sample_rate_hz)).map(|t| format!("{}", t / 1e6))),
        or_dash(fin(Some(k.duration_s)).map(|t| t.to_string()))
    );
    if let (Some(p), Some(span)) = (k.points, fin(k.span_s)) {
        let _ = writeln!(
            o,
            "| Fit | {:.0} phase points over {span:.3} s; residual RMS {} rad (max {}), lag-1 {} |",
            p as f64,
            or_dash(fin(k.residual_rms_rad).map(|v| format!("{v:.4}"))),
            or_dash(fin(k.residual_max_rad).map(|v| format!("{v:.3}"))),
            or_dash(fin(k.residual_lag1).map(|v| format!("{v:.2}")))
        );
    }
    if let Some(d) = fin(k.difference_hz) {
        let _ = writeln!(o, "| SLAVE − MASTER tone | {d:+.6} Hz |");
    }
    if let Some(s) = fin(k.start_offset_s) {
        let _ = writeln!(
            o,
            "| Start offset | {:+.3} ms (SLAVE's first samples after MASTER's; adds only a constant phase) |",
            s * 1e3
        );
    }
    let _ = writeln!(o, "| Detail | {} |", md_cell(&e.detail));
    let _ = writeln!(
        o,
        "\n| Radio | Device | Clock source | ref_locked | Tone level | Tone SNR (band) | Samples | Overflows |\n|---|---|---|---|---|---|---|---|"
    );
    for r in [&e.master, &e.slave] {
        let _ = writeln!(
            o,
            "| {} | `{}` | {}{} | {} | {} | {} | {} of {} | {} |",
            md_cell(r.role.as_str()),
            or_dash(r.device.args.as_deref().map(md_cell)),
            or_dash(r.clock_source.as_deref().map(md_cell)),
            r.clock_source_set
                .as_deref()
                .map(|c| format!(" (set to {})", md_cell(c)))
                .unwrap_or_default(),
            or_dash(r.ref_locked.map(|b| b.to_string())),
            tone_level(&r.tone),
            or_dash(fin(r.tone.snr_db).map(|v| format!("{v:.1} dB"))),
            r.samples_received,
            r.samples_requested,
            r.overflows
        );
    }
    let _ = writeln!(o);
}

/// A radio's tone level, or why it has none: a saturated input's is the converter's.
fn tone_level(t: &super::sections::compare::ToneLevels) -> String {
    if let Some(c) = t
        .clipped_fraction
        .filter(|c| *c > rxnode_dsp::MAX_CLIPPED_FRACTION)
    {
        return format!(
            "n/a (the input saturated: {:.1} % of samples clipped; lower the gain)",
            100.0 * c
        );
    }
    or_dash(fin(t.level_dbfs).map(|v| format!("{v:.1} dBFS")))
}

/// The operator's text of one comparison: the verdict line, the figure, each radio.
pub(crate) fn render_compare_text(o: &mut String, e: &CompareRecord) {
    let _ = writeln!(o, "{}: {}", e.status, e.detail);
    let k = &e.clkin_compare;
    if let Some(d) = fin(k.difference_hz) {
        let _ = writeln!(
            o,
            "  SLAVE − MASTER tone {d:+.6} Hz over {} phase points; residual RMS {} rad",
            or_dash(k.points.map(|p| format!("{:.0}", p as f64))),
            or_dash(fin(k.residual_rms_rad).map(|v| format!("{v:.4}")))
        );
    }
    for r in [&e.master, &e.slave] {
        let _ = writeln!(
            o,
            "  {:<6} {}: clock {}{}, ref_locked {}, tone {} ({} over the band's noise), {} of {} samples, {} overflow(s)",
            r.role.as_str(),
            r.device.args.as_deref().unwrap_or("?"),
            r.clock_source.as_deref().unwrap_or("?"),
            r.clock_source_set
                .as_deref()
                .map(|c| format!(" (set to {c})"))
                .unwrap_or_default(),
            or_dash(r.ref_locked.map(|b| b.to_string())),
            tone_level(&r.tone),
            or_dash(fin(r.tone.snr_db).map(|v| format!("{v:.1} dB"))),
            r.samples_received,
            r.samples_requested,
            r.overflows
        );
    }
}
