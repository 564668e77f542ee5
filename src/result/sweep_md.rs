//! One sweep's section of `RX_RESULT.md`, rendered from its `sweeps[]` entry
//! (the same text for `rxnode sweep` and the `rx_sweep` step of a run).
use super::sections::sweep::{SweepEntry, SweepRecord};
use std::fmt::Write as _;

/// A number as the section shows it: finite, or not at all.
fn fin(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

/// One sweep's section of `RX_RESULT.md`.
pub(crate) fn render_sweep_md(o: &mut String, n: usize, s: &SweepEntry) {
    let _ = writeln!(o, "### Sweep {n}\n");
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| Status | {} |", s.status());
    let s = match s {
        SweepEntry::Swept(s) => s,
        SweepEntry::NotSwept(row) => {
            let _ = writeln!(
                o,
                "| Detail | {} |",
                row.detail.replace('|', "\\|").replace('\n', " ")
            );
            return;
        }
    };
    md_settings(o, s);
    md_files(o, s);
    md_peaks(o, s);
    md_failed_hops(o, s);
    let _ = writeln!(o);
}

/// The band asked for, what the radio had, the noise floor and the time.
fn md_settings(o: &mut String, s: &SweepRecord) {
    let req = &s.requested;
    let _ = writeln!(
        o,
        "| Band | {:.6}–{:.6} MHz |\n| Bin | {:.2} Hz (asked {:.2}) |\n| Settle / dwell | {} s / {} s |\n| Crop | {} |\n| Repeats | {} |",
        req.start_hz / 1e6,
        req.stop_hz / 1e6,
        s.bin_hz,
        req.bin_hz,
        req.settle_s,
        req.dwell_s,
        req.crop,
        f64::from(req.repeats)
    );
    let a = &s.actual;
    let _ = writeln!(
        o,
        "| Rate (actual) | {} |\n| Gain (read back) | {} dB {} |",
        fin(Some(a.sample_rate_hz)).map_or_else(|| "n/a".to_owned(), rxnode_interlock::fmt_rate),
        fin(a.gain_db)
            .map(|g| g.to_string())
            .unwrap_or("n/a".into()),
        serde_json::to_string(&a.gain_elements_db)
            .unwrap_or_default()
            .replace('|', "\\|")
    );
    let _ = writeln!(
        o,
        "| Noise floor | {} |",
        crate::result::md_cell::md_cell(&s.floor_words(2))
    );
    let _ = writeln!(
        o,
        "| Time | {:.3} s (settle + dwell floor {:.3} s) |",
        s.elapsed_s, s.settle_dwell_floor_s
    );
}

/// The CSV and the hop-table file, with their hashes.
fn md_files(o: &mut String, s: &SweepRecord) {
    if let Some(c) = &s.csv {
        let _ = writeln!(
            o,
            "| CSV | `{}` {} bytes, SHA-256 `{}` |",
            c.file.as_deref().unwrap_or("?"),
            c.bytes,
            c.sha256
        );
    }
    if let Some(c) = &s.hops_file {
        let _ = writeln!(
            o,
            "| Hop table | `{}` ({} hops; here only the hops that did not go cleanly), SHA-256 `{}` |",
            c.file, c.hops, c.sha256
        );
    }
}

/// The band's peaks.
fn md_peaks(o: &mut String, s: &SweepRecord) {
    if s.peaks.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n| Peak | Frequency | Power | SNR | −3 dB width |\n|---|---|---|---|---|"
    );
    for (i, k) in s.peaks.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {} | {:.6} MHz | {:.2} dBFS | {} | {:.0} Hz |",
            i + 1,
            k.frequency_hz / 1e6,
            k.power_db,
            fin(k.snr_db).map_or_else(
                || "n/a (no noise floor)".to_owned(),
                |v| format!("{v:.1} dB")
            ),
            k.width_3db_hz
        );
    }
}

/// The hops that failed twice (never interpolated).
fn md_failed_hops(o: &mut String, s: &SweepRecord) {
    if s.failed_hops.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nFailed hops (no data, never interpolated):\n");
    for h in &s.failed_hops {
        let _ = writeln!(o, "- {:.6}–{:.6} MHz", h.low_hz / 1e6, h.high_hz / 1e6);
    }
}
