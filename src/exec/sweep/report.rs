//! What a sweep leaves behind: its JSON (in the result and for `--json`), the
//! rtl_power CSV, the spectrum and heatmap pictures, and its section of
//! `RX_RESULT.md`.
use super::radio::{status_of, Swept};
use crate::result::plot::{Heatmap, SpectrumPlot, Trace};
use crate::result::sections::sweep::{
    FileRecord, HopRow, HzRange, SweepActual, SweepPeak, SweepRecord,
};
use rxnode_hw::{HopStatus, SweepHop, SweepReport};
use std::fmt::Write as _;

/// The record of a sweep (in the result and for `--json`).
pub(crate) fn sweep_record(step: usize, sw: &Swept, csv: Option<FileRecord>) -> SweepRecord {
    let r = &sw.report;
    let hops = r
        .hops
        .iter()
        .map(|h| HopRow {
            actual_center_hz: h.actual_center_hz,
            attempts: h.attempts,
            error: h.error.clone(),
            high_hz: h.high_hz,
            hop: h.hop,
            low_hz: h.low_hz,
            overflows: h.overflows,
            repeat: h.repeat,
            requested_center_hz: h.requested_center_hz,
            samples: h.samples,
            settle_samples: h.settle_samples,
            status: h.status,
        })
        .collect();
    let peaks = r
        .peaks
        .iter()
        .zip(&r.peak_widths_hz)
        .map(|(p, w)| SweepPeak {
            frequency_hz: p.frequency_hz,
            power_db: p.power_db,
            snr_db: p.snr_db,
            width_3db_hz: *w,
            emission_hz: p.emission_hz,
        })
        .collect();
    SweepRecord {
        actual: SweepActual {
            gain_db: sw.gain_db,
            gain_elements_db: sw.gain_elements_db.clone(),
            sample_rate_hz: r.sample_rate_hz,
        },
        bin_hz: r.plan.bin_hz,
        cancelled: r.cancelled,
        clamped: sw.clamped.clone(),
        clock: sw.clock.clone(),
        csv,
        device: sw.device.clone(),
        elapsed_s: r.elapsed_s,
        failed_hops: r
            .failed_ranges_hz
            .iter()
            .map(|f| HzRange {
                high_hz: f[1],
                low_hz: f[0],
            })
            .collect(),
        fft_size: r.plan.fft_size,
        hops,
        hops_file: None,
        hops_per_repeat: r.plan.centers_hz.len(),
        noise_floor_db: r.noise_floor_db,
        noise_floor_absent: r.noise_floor_absent.clone(),
        peak_threshold_db: r.peak_threshold_db,
        passes_completed: passes_completed(r),
        peaks,
        radio_settings: (!sw.radio.is_empty()).then(|| sw.radio.clone()),
        requested: r.config.clone(),
        settle_dwell_floor_s: r.floor_s,
        started_at: sw.started_at.clone(),
        status: status_of(r),
        step,
    }
}

/// rtl_power CSV: one line per hop run, per repeat,
/// `date, time, Hz low, Hz high, Hz step, samples, dB, dB, …` (UTC). A failed hop
/// keeps its line, marked: `samples` 0 and every bin `nan` (rtl_power's own
/// spelling of no data), so the band has no hole and nothing is filled in
/// (docs/operator.md#failed-hops-in-the-csv). Hops not run (cancelled) have no line.
pub(crate) fn rtl_power_csv(r: &SweepReport) -> String {
    rtl_power_rows(&r.hops)
}

/// The rtl_power lines of `hops` (one pass, or a whole sweep), in their order.
pub(crate) fn rtl_power_rows(hops: &[SweepHop]) -> String {
    let mut out = String::new();
    let fmt = time::macros::format_description!("[year]-[month]-[day], [hour]:[minute]:[second]");
    // One time stamp per pass, its start, on every line of it, as rtl_power writes it:
    // heatmap tools take the lines of one time stamp as one row of the picture, so a
    // pass that crossed a second boundary must not split into two half rows.
    let mut pass_start: std::collections::BTreeMap<u32, f64> = Default::default();
    for h in hops.iter().filter(|h| h.unix_time_s > 0.0) {
        let t = pass_start.entry(h.repeat).or_insert(h.unix_time_s);
        *t = t.min(h.unix_time_s);
    }
    for h in hops.iter().filter(|h| {
        (h.status == HopStatus::Ok && !h.db.is_empty()) || h.status == HopStatus::Failed
    }) {
        let at = pass_start.get(&h.repeat).copied().unwrap_or(h.unix_time_s);
        let t = time::OffsetDateTime::from_unix_timestamp(at as i64)
            .ok()
            .and_then(|t| t.format(&fmt).ok())
            .unwrap_or_else(|| "1970-01-01, 00:00:00".into());
        let samples = if h.status == HopStatus::Ok {
            h.samples
        } else {
            0
        };
        let _ = write!(
            out,
            "{t}, {:.0}, {:.0}, {:.2}, {samples}",
            h.low_hz, h.high_hz, h.step_hz
        );
        if h.status == HopStatus::Failed {
            let bins = if h.step_hz > 0.0 {
                ((h.high_hz - h.low_hz) / h.step_hz).round().max(0.0) as usize
            } else {
                0
            };
            for _ in 0..bins {
                out.push_str(", nan");
            }
        }
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

/// Passes over the band that ran to their end: every hop of the plan reached,
/// measured or failed (an interrupted sweep stops within one pass, and a pass
/// cut short may not list its later hops at all).
pub(crate) fn passes_completed(r: &SweepReport) -> u32 {
    let per = r.plan.centers_hz.len();
    let done = (0..r.config.repeats)
        .filter(|rep| {
            let of_pass = r.hops.iter().filter(|h| h.repeat == *rep);
            let (mut reached, mut not_run) = (0usize, false);
            for h in of_pass {
                reached += 1;
                not_run |= h.status == HopStatus::NotRun;
            }
            per > 0 && reached >= per && !not_run
        })
        .count();
    u32::try_from(done).unwrap_or(u32::MAX)
}

fn title(sw: &Swept, what: &str) -> String {
    let r = &sw.report;
    let args = sw.device.args.as_str();
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
            low_db: Vec::new(),
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
        clkin: None,
        band_hz: Some([r.config.start_hz, r.config.stop_hz]),
    }
}

/// The heatmap of a sweep (one row per repeat that started), `None` for a single
/// pass; an interrupted sweep's title says PARTIAL and how many passes were done.
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
    // A pass that never started is no row: the picture ends where the sweep did.
    let started = (0..r.config.repeats)
        .filter(|rep| {
            r.hops
                .iter()
                .any(|h| h.repeat == *rep && h.status != HopStatus::NotRun)
        })
        .count()
        .max(1);
    for rep in 0..u32::try_from(started).unwrap_or(u32::MAX) {
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
    let what = if r.cancelled {
        format!(
            "{what} heatmap · PARTIAL: stopped after {} of {} passes",
            passes_completed(r),
            r.config.repeats
        )
    } else {
        format!("{what} heatmap")
    };
    Some(Heatmap {
        title: title(sw, &what),
        start_hz: r.config.start_hz,
        step_hz: r.plan.bin_hz,
        row_time_s: times,
        rows,
        failed_hz: r.failed_ranges_hz.clone(),
    })
}
