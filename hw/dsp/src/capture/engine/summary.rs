//! What a finished capture counted and measured, turned into its result: the CLKIN
//! verdict, the recording closed with its annotations, the errors in words, PASS,
//! PARTIAL or FAIL, and the [`CaptureSummary`].
use super::reader::ReaderStats;
use crate::capture::{peak_annotations, CaptureSettings, CaptureStatus, CaptureSummary, PsdTrace};
use crate::dsp::{judge_clkin, ClkinEstimator, ClkinReport, ClkinStatus, Spectrum};
use crate::iq::{IqFileRecord, IqWriter};

/// The CLKIN verdict on what the estimator measured and what the driver said; not
/// measured when samples were lost between analysed ones.
pub(super) fn judge(
    c: &mut ClkinEstimator,
    settings: &CaptureSettings,
    stats: &ReaderStats,
    band: &Spectrum,
) -> ClkinReport {
    if stats.silent > 0 && stats.silent == stats.received {
        // A recording of nothing but digital silence: nothing was analysed, so
        // nothing was measured (a FAIL would say the clock is wrong).
        let cfg = c.config();
        return ClkinReport::not_measured(
            cfg.tone_hz,
            cfg.tolerance_ppm,
            format!(
                "not measured: every sample is digital silence ({} samples exactly zero \
                 skipped, none analysed)",
                stats.silent
            ),
        );
    }
    if stats.gaps > 0 {
        let cfg = c.config();
        return ClkinReport::not_measured(
            cfg.tone_hz,
            cfg.tolerance_ppm,
            format!(
                "not measured: {}; the coherent estimate needs one unbroken stretch",
                lost_in_words(stats)
            ),
        );
    }
    let est = c.finish(band);
    let cfg = c.config();
    judge_clkin(
        cfg.tone_hz,
        cfg.tolerance_ppm,
        est.as_ref(),
        &settings.clock_evidence,
        c.tones(),
    )
}

/// Samples lost, overall: the ones dropped and the ones driver overflows lost;
/// `None` when an overflow's loss could not be counted.
fn lost_samples(stats: &ReaderStats) -> Option<u64> {
    (!stats.overflow_loss_unknown).then_some(stats.dropped + stats.overflow_lost)
}

/// What the stream lost, in words: `the stream lost 4096 samples in 2 gaps`.
fn lost_in_words(stats: &ReaderStats) -> String {
    let gaps = match stats.gaps {
        1 => "1 gap".to_owned(),
        k => format!("{k} gaps"),
    };
    let silent = format!(
        "{} samples of digital silence skipped (docs/reliability.md#8-digital-silence-in-a-recording)",
        stats.silent
    );
    match lost_samples(stats) {
        Some(0) if stats.silent > 0 => format!("the stream has {gaps}: {silent}"),
        Some(n) if stats.silent > 0 => {
            format!("the stream lost {n} samples and had {silent}, in {gaps}")
        }
        Some(n) => format!("the stream lost {n} samples in {gaps}"),
        None => format!(
            "the stream had {gaps} ({} dropped samples, {} driver overflow(s) that lost an \
             unknown number of samples: the driver gives no stream times)",
            stats.dropped, stats.overflows
        ),
    }
}

/// The recording closed, with one SigMF annotation per reported peak and one for
/// the CLKIN check, if any: its files and why it stopped early, if it did.
pub(super) fn close_recording(
    recorder: Option<(IqWriter, Option<String>)>,
    spec: &Spectrum,
    clkin: Option<&ClkinReport>,
) -> (Vec<IqFileRecord>, Option<String>) {
    let Some((mut w, mut recording_error)) = recorder else {
        return (Vec::new(), None);
    };
    let mut notes = peak_annotations(spec);
    notes.extend(clkin.map(clkin_annotation));
    w.annotate(notes);
    // A recording cut short (a full disk) is still listed, marked partial.
    let (files, e) = w.finish_partial();
    if let (None, Some(e)) = (&recording_error, e) {
        recording_error = Some(e.to_string());
    }
    (files, recording_error)
}

/// The CLKIN check as a SigMF annotation: its verdict and number as the label, its
/// detail as the comment, the band it searched (the tolerance around the tone on
/// the receiver's axis, widened to the tone found) as the edges.
fn clkin_annotation(c: &ClkinReport) -> crate::PeakAnnotation {
    let status = match c.status {
        ClkinStatus::Pass => "PASS",
        ClkinStatus::Fail => "FAIL",
        ClkinStatus::NotMeasured => "NOT MEASURED",
    };
    let number = match (c.ppm, c.ppm_uncertainty) {
        (Some(p), Some(u)) => format!(" {} (1σ)", crate::fmt_uncertain(p, u, "ppm")),
        _ => String::new(),
    };
    let tol = c.tolerance_ppm * 1e-6;
    let (mut lo, mut hi) = (c.tone_hz / (1.0 + tol), c.tone_hz / (1.0 - tol).max(1e-9));
    if let Some(m) = c.measured_hz.filter(|m| m.is_finite()) {
        (lo, hi) = (lo.min(m), hi.max(m));
    }
    crate::PeakAnnotation {
        label: format!(
            "CLKIN {status}:{number} reference {:.6} MHz, tolerance {} ppm",
            c.tone_hz / 1e6,
            c.tolerance_ppm
        ),
        freq_lower_hz: lo,
        freq_upper_hz: hi,
        comment: Some(c.detail.clone()),
    }
}

/// Everything a finished capture counted and measured.
pub(super) struct Finished<'a> {
    pub(super) settings: &'a CaptureSettings,
    pub(super) stats: ReaderStats,
    pub(super) processed: u64,
    pub(super) duration_s: f64,
    pub(super) spec: Spectrum,
    pub(super) iq_files: Vec<IqFileRecord>,
    pub(super) recording_error: Option<String>,
    pub(super) clkin: Option<ClkinReport>,
}

/// The errors met on the way, in words.
fn errors_of(f: &Finished) -> Vec<String> {
    let (settings, stats) = (f.settings, &f.stats);
    let mut errors = Vec::new();
    if let Some(e) = &stats.error {
        errors.push(format!("source: {e}"));
    }
    if stats.stop == "stalled" {
        // A radio on another host whose server died, a radio unplugged, a stalled
        // driver: the stream goes quiet without an error. Say so in words.
        errors.push(format!(
            "source: stream stalled at sample {} (after {} of {} samples): no samples for {:.1} s \
             ({} read timeouts of {} ms in a row); the radio (or the server serving it) stopped delivering",
            stats.received,
            stats.received,
            settings.samples,
            stats.quiet.as_secs_f64(),
            stats.in_a_row,
            settings.timeout_us / 1000,
        ));
    }
    if let Some(e) = &f.recording_error {
        errors.push(format!("recording: {e}"));
    }
    if let Some(why) = unmeasured(f) {
        let counts = if f.spec.averages == 0 {
            format!(
                ": {} samples analysed, fft_size {}",
                f.processed, f.spec.fft_size
            )
        } else {
            String::new()
        };
        errors.push(format!("noise floor not measured ({why}{counts})"));
    }
    if stats.overflow_loss_unknown {
        errors.push(format!(
            "source: {} driver overflow(s); the samples they lost are not counted (the driver \
             gives no stream times)",
            stats.overflows
        ));
    }
    errors
}

/// Why no noise floor was measured (and so no peak, no SNR): no Welch segment from
/// the samples analysed (fewer than one FFT), or segments without a floor. `None`
/// when the floor was measured, or when nothing was received or the operator
/// cancelled (those say so in their own words).
fn unmeasured(f: &Finished) -> Option<&'static str> {
    let said_otherwise = f.stats.received == 0 || f.stats.stop == "cancelled";
    (!said_otherwise)
        .then(|| f.spec.noise_floor_absent())
        .flatten()
}

/// PASS, PARTIAL or FAIL, and whether the capture was clean.
fn verdict(f: &Finished) -> (CaptureStatus, bool) {
    let (settings, stats) = (f.settings, &f.stats);
    let cancelled = stats.stop == "cancelled";
    let clean = stats.received == settings.samples
        && f.processed == settings.samples
        && stats.overflows == 0
        && stats.dropped == 0
        && stats.timeouts == 0
        && stats.error.is_none()
        && f.recording_error.is_none();
    // Nothing measured is a failure, whether the source errored or stayed silent until
    // the deadline; an operator's cancel before the first sample stays PARTIAL.
    let source_failed = stats.received == 0 && !cancelled;
    let clkin_failed = f
        .clkin
        .as_ref()
        .is_some_and(|r| r.status == ClkinStatus::Fail);
    // Samples without a measurable floor (all zero, most often) measured nothing.
    let status = if source_failed || clkin_failed || unmeasured(f).is_some() {
        CaptureStatus::Fail
    } else if clean {
        CaptureStatus::Pass
    } else {
        CaptureStatus::Partial
    };
    (status, clean)
}

pub(super) fn summarize(f: Finished) -> CaptureSummary {
    let errors = errors_of(&f);
    let (status, clean) = verdict(&f);
    let settings = f.settings;
    let spec = f.spec;
    let psd = (settings.psd_points > 0 && spec.averages > 0).then(|| {
        let (start_hz, step_hz, db) = spec.decimated(settings.psd_points);
        PsdTrace {
            start_hz,
            step_hz,
            db,
        }
    });
    let finite = |v: f64| v.is_finite().then_some(v);
    let noise_floor_absent = spec.noise_floor_absent().map(str::to_owned);
    CaptureSummary {
        device: serde_json::Value::Null,
        requested: serde_json::Value::Null,
        actual: serde_json::Value::Null,
        samples_requested: settings.samples,
        samples_received: f.stats.received,
        samples_processed: f.processed,
        overflows: f.stats.overflows,
        overflow_lost_samples: (!f.stats.overflow_loss_unknown).then_some(f.stats.overflow_lost),
        lost_samples: lost_samples(&f.stats),
        gaps: f.stats.gaps,
        silent_samples: f.stats.silent,
        dropped_samples: f.stats.dropped,
        timeouts: f.stats.timeouts,
        short_reads: f.stats.short_reads,
        duration_s: f.duration_s,
        fft_size: spec.fft_size,
        averages: spec.averages,
        peaks: spec.peaks,
        noise_floor_db: spec.noise_floor_db,
        noise_floor_band_hz: spec.noise_floor_band_hz,
        noise_floor_absent,
        peak_threshold_db: spec.peak_threshold_db,
        centre_excluded_hz: spec.centre_excluded_hz,
        centre_carrier_dbfs: spec.centre_carrier_db,
        mean_power_dbfs: finite(spec.mean_power_dbfs),
        clipped_fraction: spec.clipped_fraction,
        clkin: f.clkin,
        iq_files: f.iq_files,
        recording_error: f.recording_error,
        status,
        clean,
        cancelled: f.stats.stop == "cancelled",
        stop_reason: f.stats.stop.to_string(),
        errors,
        psd,
        clock: None,
    }
}
