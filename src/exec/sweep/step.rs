//! The `rx_sweep` step of a task's plan: the policy, the sweep, then
//! `SWEEP_<n>.csv`, `SWEEP_<n>.png` (and the heatmap, and a long hop table as
//! `SWEEP_<n>_hops.json`) in the outbox; a check and a row in the result.
use super::radio::{execute, status_of, write_new, NotSwept, Swept};
use super::report::{heatmap, rtl_power_csv, spectrum_plot, sweep_record};
use crate::exec::steps::{Outputs, StepCtx};
use crate::health::guard;
use crate::result::sections::sweep::{FileRecord, HopsFile, SweepEntry, SweepRecord};
use crate::result::{Check, Status};
use anyhow::Result;
use rxnode_hw::HopStatus;
use rxnode_interlock::{check_rx_sweep, RxSweepStep};
use std::path::Path;

/// The `rx_sweep` plan step: policy, run, `SWEEP_<n>.csv` (+ PNGs) in the outbox.
pub(crate) fn step_sweep(st: &StepCtx, s: &RxSweepStep, out: &mut Outputs) {
    let n = st.index + 1;
    if let Err(e) = check_rx_sweep(s, &st.policy.rx) {
        out.policy_blocked = true;
        out.not_swept(st, Status::Blocked, e.to_string());
        return;
    }
    let _held = match crate::exec::steps::hold_radio(st, &s.device) {
        Ok(l) => l,
        Err(why) => {
            out.not_swept(st, Status::Blocked, why);
            return;
        }
    };
    // Again under the radio's lock: a self-test that ran meanwhile may have found it BAD.
    if let Some(why) = guard::bad_reason(st.paths, &s.device) {
        out.not_swept(st, Status::Blocked, why);
        return;
    }
    let cancel = crate::signals::cancel_flag("the running step");
    let cal = crate::exec::live::CalibrationUse {
        paths: st.paths.clone(),
        max_age_s: st.policy.rx.calibration_max_age_s,
        apply: s.apply_calibration,
    };
    let sw = match execute(s, cancel, &cal, &mut |_| {}) {
        Ok(sw) => sw,
        Err(NotSwept::Unsupported(why)) => {
            out.not_swept(st, Status::Blocked, why);
            return;
        }
        Err(NotSwept::Blocked(why)) => {
            // Not opened or not set up: the self-test tells a radio fault from a setting.
            let line = guard::retest(st.paths, st.policy, &s.device);
            out.errors.push(format!("{}: {line}", st.name));
            out.not_swept(st, Status::Blocked, why);
            return;
        }
        Err(NotSwept::Failed(why)) => {
            out.errors.push(format!("{}: {why}", st.name));
            let what = format!("{} of task {}: {why}", st.name, st.task.id());
            let line = guard::radio_failed(st.paths, st.policy, &s.device, &what);
            out.errors.push(format!("{}: {line}", st.name));
            out.not_swept(st, Status::Fail, why);
            return;
        }
    };
    // A hop whose stream stalled: the radio is BAD until a self-test passes.
    if let Some(h) = sw.report.hops.iter().find(|h| h.stalled()) {
        let what = format!(
            "{} of task {}: hop {} of repeat {}: {}",
            st.name,
            st.task.id(),
            h.hop + 1,
            h.repeat + 1,
            h.error.as_deref().unwrap_or("stalled")
        );
        let line = guard::radio_failed(st.paths, st.policy, &s.device, &what);
        out.errors.push(format!("{}: {line}", st.name));
    }
    let dir = st.paths.outbox(st.task.id());
    let csv_rec = step_files(st, &dir, &sw, &mut out.errors);
    let what = format!("{} · step {n}", st.task.id().as_str());
    // A band without one bin of power has no picture (as a capture without one).
    let plot = spectrum_plot(&sw, &what);
    if plot.trace.db.iter().any(|v| v.is_finite()) {
        out.drawn.push(crate::result::pictures::Drawn {
            of: crate::result::pictures::PictureOf::Sweep,
            index: u32::try_from(n).unwrap_or(u32::MAX),
            plot,
            heatmap: heatmap(&sw, &what),
        });
    }
    let r = &sw.report;
    let detail = format!(
        "{:.3}–{:.3} MHz in {} hop(s) × {} repeat(s), {} failed, bin {:.1} Hz, noise floor {}, {} peak(s), {:.2} s",
        r.config.start_hz / 1e6,
        r.config.stop_hz / 1e6,
        r.plan.centers_hz.len(),
        r.config.repeats,
        r.failed_ranges_hz.len(),
        r.plan.bin_hz,
        super::command::floor_words(r.noise_floor_db, r.noise_floor_absent.as_deref()),
        r.peaks.len(),
        r.elapsed_s
    );
    for f in &r.failed_ranges_hz {
        out.errors.push(format!(
            "{}: hop {:.3}–{:.3} MHz failed twice (no data, not interpolated)",
            st.name,
            f[0] / 1e6,
            f[1] / 1e6
        ));
    }
    let detail = match &sw.clamped {
        Some(c) => format!("{detail}; {}", c.describe()),
        None => detail,
    };
    out.checks.push(Check::new(&st.name, status_of(r), detail));
    let mut rec = sweep_record(n, &sw, csv_rec);
    if r.hops.len() > MAX_HOPS_IN_RESULT {
        if let Err(e) = hops_to_file(&dir, n, &mut rec) {
            out.errors.push(format!("{}: {e:#}", st.name));
        }
    }
    out.sweeps.push(SweepEntry::Swept(Box::new(rec)));
}

/// `SWEEP_<n>.csv` (its record for the result, `None` if it could not be
/// written), the spectrum PNG and the heatmap PNG in the outbox `dir`.
fn step_files(
    st: &StepCtx,
    dir: &Path,
    sw: &Swept,
    errors: &mut Vec<String>,
) -> Option<FileRecord> {
    let n = st.index + 1;
    let csv_name = format!("SWEEP_{n}.csv");
    let csv = rtl_power_csv(&sw.report);
    let csv_rec = match write_new(&dir.join(&csv_name), csv.as_bytes()) {
        Ok(()) => Some(FileRecord {
            bytes: csv.len(),
            file: Some(csv_name),
            sha256: rxnode_interlock::sha256_hex(csv.as_bytes()),
        }),
        Err(e) => {
            errors.push(format!("{}: {e:#}", st.name));
            None
        }
    };
    let what = format!("{} · step {n}", st.task.id().as_str());
    if !sw
        .report
        .spectrum_db
        .iter()
        .any(|v| v.is_some_and(f32::is_finite))
    {
        // No bin of the band has power: nothing to draw (the result says why).
        return csv_rec;
    }
    if let Err(e) = crate::result::plot::write_spectrum(
        &dir.join(format!("SWEEP_{n}.png")),
        &spectrum_plot(sw, &what),
    ) {
        tracing::warn!("sweep plot: {e:#}");
    }
    if let Some(h) = heatmap(sw, &what) {
        if let Err(e) =
            crate::result::plot::write_heatmap(&dir.join(format!("SWEEP_{n}_heatmap.png")), &h)
        {
            tracing::warn!("sweep heatmap: {e:#}");
        }
    }
    csv_rec
}

/// The result is published (≤ 256 KiB): a long hop table goes to
/// `SWEEP_<n>_hops.json` in the outbox (hash in the result); the result keeps
/// every hop that did not go cleanly. Unchanged if the file cannot be written.
fn hops_to_file(dir: &Path, n: usize, rec: &mut SweepRecord) -> Result<()> {
    let text = serde_json::to_vec_pretty(&rec.hops).unwrap_or_default();
    let file = format!("SWEEP_{n}_hops.json");
    write_new(&dir.join(&file), &text)?;
    let hops = rec.hops.len();
    rec.hops
        .retain(|h| h.status != HopStatus::Ok || h.attempts != 1 || h.overflows != 0);
    rec.hops_file = Some(HopsFile {
        bytes: text.len(),
        file,
        hops,
        sha256: rxnode_interlock::sha256_hex(&text),
    });
    Ok(())
}

/// Hop rows kept in `RX_RESULT.json` before the table moves to its own file.
const MAX_HOPS_IN_RESULT: usize = 200;
