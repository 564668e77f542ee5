//! `freq_cal`: a radio's absolute frequency error from a broadcast signal (GSM FCCH,
//! LTE PSS/SSS), as a plan step and as `rxnode clkin calibrate`
//! (docs/operator.md#calibrating-a-radio-without-a-generator). The estimator rides
//! the capture engine's hot path; nothing is recorded.
use crate::context::Ctx;
use crate::exec::live::{BlockSink, LiveCapture, NotCaptured};
use crate::exec::steps::{Outputs, StepCtx};
use crate::exit::{bad_field_text, bad_input, refused, FieldText, Outcome};
use crate::result::sections::capture::{typed, CaptureDevice};
use crate::result::sections::freq_cal::{
    DeviceArgs, Duplex, FreqCalActual, FreqCalCapture, FreqCalClock, FreqCalEntry, FreqCalRecord,
    FreqCalRequested, FreqCalSource,
};
use crate::result::{Check, Status};
use crate::store::calibration::{self, Measurement};
use crate::store::ledger::{Entry, Event, Refusal};
use crate::store::paths::Paths;
use anyhow::Result;
use num_complex::Complex;
use rxnode_dsp::{
    freq_cal_estimator, CaptureSummary, FreqCalConfig, FreqCalError, FreqCalEstimate,
    FreqCalEstimator, RecordFormat,
};
use rxnode_interlock::{check_freq_cal, FreqCalMethod, FreqCalStep};
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The estimator's spelling of a plan's method.
pub(crate) fn dsp_method(m: FreqCalMethod) -> rxnode_dsp::FreqCalMethod {
    match m {
        FreqCalMethod::Gsm => rxnode_dsp::FreqCalMethod::Gsm,
        FreqCalMethod::Lte => rxnode_dsp::FreqCalMethod::Lte,
    }
}

/// What one measurement came to.
pub(crate) struct Measured {
    /// PASS (an estimate from a complete capture), PARTIAL (an estimate from an
    /// incomplete one), FAIL (no signal, or the radio failed), BLOCKED, NOT RUN.
    pub(crate) status: Status,
    /// One line for the check.
    pub(crate) detail: String,
    /// The result's `freq_cal[]` entry (without `step`).
    pub(crate) entry: FreqCalRecord,
    /// The estimate, when there is one.
    pub(crate) estimate: Option<FreqCalEstimate>,
    /// The radio's identity (driver, serial), when it was opened.
    pub(crate) device: Option<CaptureDevice>,
}

impl Measured {
    fn without_estimate(f: &FreqCalStep, status: Status, detail: String) -> Self {
        let args = FreqCalSource::Args(DeviceArgs {
            args: f.device.clone(),
        });
        let entry = FreqCalRecord::new(args, f.method, f.frequency_hz, status, detail.clone());
        Self {
            status,
            detail,
            entry,
            estimate: None,
            device: None,
        }
    }
}

/// The estimator for the tuned radio, fed on the capture engine's DSP thread.
struct EstimatorSink {
    method: FreqCalMethod,
    carrier_hz: f64,
    est: Option<Box<dyn FreqCalEstimator>>,
}

impl BlockSink for EstimatorSink {
    fn start(&mut self, frequency_hz: f64, sample_rate_hz: f64) -> Result<(), NotCaptured> {
        let cfg = FreqCalConfig::new(self.carrier_hz, frequency_hz, sample_rate_hz);
        match freq_cal_estimator(dsp_method(self.method), cfg) {
            Ok(e) => {
                self.est = Some(e);
                Ok(())
            }
            Err(e) => Err(NotCaptured::Blocked(e.to_string())),
        }
    }

    fn feed(&mut self, block: &[Complex<f32>]) {
        if let Some(e) = &mut self.est {
            e.feed(block);
        }
    }
}

/// Measure: refuse early what cannot work (no estimator for the method in this
/// build, a rate too low for the search range), then capture with the estimator on
/// the hot path and judge.
pub(crate) fn measure(
    f: &FreqCalStep,
    checkout: Option<&Path>,
    cancel: &AtomicBool,
    show_progress: bool,
) -> Measured {
    // Before any radio opens: is there an estimator, and do the asked values fit it?
    let probe = FreqCalConfig::new(f.frequency_hz, f.frequency_hz, f.sample_rate_hz);
    match freq_cal_estimator(dsp_method(f.method), probe) {
        Err(FreqCalError::Unavailable(why)) => {
            return Measured::without_estimate(f, Status::NotRun, why)
        }
        Err(e) => return Measured::without_estimate(f, Status::Blocked, e.to_string()),
        Ok(_) => {}
    }
    let (gain_db, gain_elements) = crate::exec::live::split_gain(f.gain_db.as_ref());
    let live = LiveCapture {
        device: f.device.clone(),
        frequency_hz: f.frequency_hz,
        sample_rate_hz: f.sample_rate_hz,
        gain_db,
        gain_elements,
        bandwidth_hz: None,
        antenna: None,
        clock_source: None,
        duration_s: f.duration_s,
        fft_size: 2048,
        clkin: None,
        record: None,
        record_format: RecordFormat::Cf32,
        max_iq_bytes: None,
        calibration: None,
        radio: Default::default(),
        max_peaks: rxnode_interlock::DEFAULT_MAX_PEAKS,
        min_snr_db: rxnode_interlock::DEFAULT_MIN_SNR_DB,
    };
    let mut sink = EstimatorSink {
        method: f.method,
        carrier_hz: f.frequency_hz,
        est: None,
    };
    let summary = match crate::exec::live::capture_into(
        &live,
        checkout,
        cancel,
        show_progress,
        Some(&mut sink),
    ) {
        Ok(s) => s,
        Err(NotCaptured::Blocked(why))
        | Err(NotCaptured::OverLimit(why))
        | Err(NotCaptured::Unsupported(why)) => {
            return Measured::without_estimate(f, Status::Blocked, why)
        }
        Err(NotCaptured::Failed(why)) => return Measured::without_estimate(f, Status::Fail, why),
    };
    let result = match &mut sink.est {
        Some(e) => e.finish(),
        None => Err(FreqCalError::NotFound("the estimator never started".into())),
    };
    // The live capture layer describes the radio it opened; a description that
    // does not read (a value the radio reported as NaN) leaves the args the step gave.
    let device = match typed::<CaptureDevice>(&summary.device) {
        Some(d) => FreqCalSource::Radio(d),
        None => FreqCalSource::Args(DeviceArgs {
            args: f.device.clone(),
        }),
    };
    judge(f.method, f.frequency_hz, &summary, result, device)
}

/// The status, detail and entry of a finished capture (or a recording read through
/// the capture engine) and its estimate against the carrier at `carrier_hz`, on
/// `device` (the radio, or the recording).
pub(crate) fn judge(
    method: FreqCalMethod,
    carrier_hz: f64,
    summary: &CaptureSummary,
    result: Result<FreqCalEstimate, FreqCalError>,
    device: FreqCalSource,
) -> Measured {
    let complete = summary.clean && !summary.cancelled;
    let capture = FreqCalCapture {
        dropped_samples: summary.dropped_samples,
        mean_power_dbfs: summary.mean_power_dbfs,
        overflows: summary.overflows,
        samples_processed: summary.samples_processed,
        samples_received: summary.samples_received,
        samples_requested: summary.samples_requested,
        stop_reason: summary.stop_reason.clone(),
    };
    // A number is true or absent: an estimate against a carrier that is not
    // confirmed (off its channel raster; an LTE cell whose SSS was not decoded) is
    // the tuning offset, not the radio's error — FAIL, saying why, with no number.
    let result = result.and_then(|e| rxnode_dsp::confirm_carrier(&e, carrier_hz).map(|()| e));
    let (status, detail, estimate) = match result {
        Ok(e) => {
            let status = if complete {
                Status::Pass
            } else {
                Status::Partial
            };
            let used = e.evidence.detections.iter().filter(|d| d.used).count();
            // What one detection is: an FCCH burst, or one PSS of the LTE cell.
            let what = match method {
                FreqCalMethod::Gsm => "burst(s)",
                FreqCalMethod::Lte => "PSS",
            };
            // The radio is measured against the cell: its own frequency error is a
            // term of the radio's, however sharply the cell was seen.
            let mut detail = format!(
                "{} {}: radio error {} (1σ: the cell's own ±{} ppm tolerance as {} ppm, \
                 the measurement {} ppm) from {used} of {} {what}, confidence {:.2}",
                method.as_str().to_uppercase(),
                e.cell,
                rxnode_dsp::fmt_uncertain(e.ppm, e.uncertainty_ppm, "ppm"),
                rxnode_dsp::CELL_TOLERANCE_PPM,
                rxnode_dsp::fmt_sigma(rxnode_dsp::CELL_UNCERTAINTY_PPM),
                rxnode_dsp::fmt_sigma(e.measurement_uncertainty_ppm),
                e.evidence.detections.len(),
                e.confidence
            );
            if !complete {
                detail.push_str(&format!(
                    "; not every sample was analysed (stream end: {}; {} of {} samples analysed, {} dropped{})",
                    summary.stop_reason,
                    summary.samples_processed,
                    summary.samples_requested,
                    summary.dropped_samples,
                    if summary.silent_samples > 0 {
                        format!(
                            ", {} of digital silence not analysed: the estimate is of the \
                             recorded samples only, fed across {} gap(s)",
                            summary.silent_samples, summary.gaps
                        )
                    } else {
                        String::new()
                    }
                ));
            }
            (status, detail, Some(e))
        }
        Err(FreqCalError::NotFound(why)) => {
            let detail = match method {
                FreqCalMethod::Gsm if why.starts_with("no GSM FCCH found") => why,
                FreqCalMethod::Gsm => format!("no GSM FCCH found: {why}"),
                // Also "LTE cell … found but its frequency error is not measurable".
                FreqCalMethod::Lte
                    if why.starts_with("no LTE cell found") || why.starts_with("LTE cell ") =>
                {
                    why
                }
                FreqCalMethod::Lte => format!("no LTE cell found: {why}"),
            };
            (Status::Fail, detail, None)
        }
        Err(e @ FreqCalError::Unavailable(_)) => (Status::NotRun, e.to_string(), None),
        Err(e) => (Status::Fail, e.to_string(), None),
    };
    // A radio's settings as the live capture layer described them; a recording's
    // are filled in by `analyze`. A value that does not read is left out.
    let radio = match &device {
        FreqCalSource::Radio(d) => Some(d.clone()),
        _ => None,
    };
    let mut entry = FreqCalRecord {
        actual: typed(&summary.actual).map(FreqCalActual::Radio),
        capture: Some(capture),
        requested: typed(&summary.requested).map(FreqCalRequested::Radio),
        ..FreqCalRecord::new(device, method, carrier_hz, status, detail.clone())
    };
    if let Some(e) = &estimate {
        let ev = &e.evidence;
        entry.bursts = Some(ev.detections.len());
        entry.bursts_used = Some(ev.detections.iter().filter(|d| d.used).count());
        entry.cell = Some(e.cell.clone());
        entry.confidence = Some(e.confidence);
        entry.detections = Some(ev.detections.clone());
        entry.duplex = e.duplex.and_then(Duplex::of);
        entry.nominal_offset_hz = Some(ev.nominal_offset_hz);
        entry.pci = e.pci;
        entry.ppm = Some(e.ppm);
        entry.search_hz = Some(ev.search_hz);
        entry.seconds_analysed = Some(ev.seconds_analysed);
        entry.uncertainty_ppm = Some(e.uncertainty_ppm);
        entry.measurement_uncertainty_ppm = Some(e.measurement_uncertainty_ppm);
        entry.cell_uncertainty_ppm = Some(rxnode_dsp::CELL_UNCERTAINTY_PPM);
    }
    Measured {
        status,
        detail,
        entry,
        estimate,
        device: radio,
    }
}

/// Keep an estimate in `.local/calibration.json` under the radio's identity and add
/// the `clock` block (with it as the last measurement) to the entry.
/// `calibration_stored` says whether it was kept, `calibration_note` why not.
fn keep(paths: &Paths, m: &mut Measured, f: &FreqCalStep, task_id: Option<&str>, max_age_s: f64) {
    let device = m.device.clone();
    let radio = match &device {
        Some(d) => calibration::Radio::named(&d.driver, d.serial.as_deref(), d.remote.as_deref()),
        None => calibration::Radio::default(),
    };
    let mut note = None;
    let stored = match &m.estimate {
        Some(e) if m.status == Status::Pass => {
            let meas = Measurement {
                ppm: e.ppm,
                uncertainty_ppm: e.uncertainty_ppm,
                method: f.method.as_str().to_owned(),
                reference: format!("{} {}", f.method.as_str().to_uppercase(), e.cell),
                confidence: e.confidence,
                time: crate::store::fsutil::now_iso(),
                task_id: task_id.map(str::to_owned),
            };
            match calibration::record(paths, radio, meas) {
                Ok(true) => true,
                Ok(false) => {
                    note = Some("the radio reports no serial: not kept".to_owned());
                    false
                }
                Err(e) => {
                    note = Some(format!("not kept: {e:#}"));
                    false
                }
            }
        }
        Some(_) => {
            note = Some("not kept: the capture was incomplete".to_owned());
            false
        }
        None => false,
    };
    let source = match &m.entry.actual {
        Some(FreqCalActual::Radio(a)) => a.settings.clock_source.clone(),
        _ => None,
    };
    let clock = calibration::clock_of(paths, radio, source.as_deref(), max_age_s, None);
    if m.estimate.is_some() {
        m.entry.calibration_stored = Some(stored);
        m.entry.calibration_note = note;
    }
    m.entry.clock = Some(FreqCalClock::Radio(clock));
}

/// `rxnode clkin calibrate` options.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateOptions {
    /// SoapySDR device args (`driver=hackrf,serial=…`).
    #[arg(short = 'd', long, value_parser = crate::options::device)]
    pub device: String,
    /// The broadcast signal to measure.
    #[arg(long, value_parser = crate::options::cal_method())]
    pub method: FreqCalMethod,
    /// The carrier's frequency, Hz (`935.2M`): the BCCH carrier (gsm) or the
    /// downlink's centre (lte); the radio is tuned there.
    #[arg(short = 'f', long, value_parser = crate::options::frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (default: 1M for gsm, 1.92M for lte).
    #[arg(short = 'r', long, value_parser = crate::options::sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// RX gain, dB (default: not set, the radio keeps its driver's gain).
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long to listen (seconds, or `6s`, `500ms`, `1m`).
    #[arg(short = 't', long, default_value_t = 6.0, value_parser = crate::options::duration)]
    pub duration_s: f64,
    /// Draw the detections (time vs offset, per-burst errors, the combined value) as a PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// The default sample rate of a method: GSM 1 MS/s (the FCCH tone's ±60 ppm range
/// at 1.9 GHz and a margin fit in ±450 kHz), LTE 1.92 MS/s (the 6 central resource
/// blocks that carry PSS/SSS).
pub fn default_rate(m: FreqCalMethod) -> f64 {
    match m {
        FreqCalMethod::Gsm => 1e6,
        FreqCalMethod::Lte => 1.92e6,
    }
}

/// `rxnode clkin calibrate`: check the values and the policy, measure, keep the
/// measurement, draw it if asked, print it.
pub fn cmd_calibrate(ctx: &Ctx, o: &CalibrateOptions) -> Result<Outcome> {
    let step = FreqCalStep {
        device: o.device.clone(),
        method: o.method,
        frequency_hz: o.frequency_hz,
        sample_rate_hz: o.sample_rate_hz.unwrap_or_else(|| default_rate(o.method)),
        gain_db: o.gain_db.map(rxnode_interlock::GainSpec::Total),
        duration_s: o.duration_s,
    };
    if let Some(p) = step.problems().into_iter().next() {
        return Err(bad_input(format!("clkin calibrate: {p}")));
    }
    if o.device.trim().is_empty() || o.device.chars().any(char::is_control) {
        return Err(bad_field_text(
            "device",
            FieldText::text("clkin calibrate: ")
                .then_field("device")
                .then(" must name a radio"),
        ));
    }
    let paths = ctx.paths();
    let in_checkout = crate::exec::capture::in_checkout(&ctx.repo);
    let (policy, _) = crate::store::policy::load(&paths)?;
    if let Err(e) = check_freq_cal(&step, &policy.rx) {
        let reason = crate::options::policy_flags::<CalibrateOptions>(&e.to_string());
        if in_checkout {
            crate::exec::ledger_note(
                &paths,
                &Entry::new(Refusal::of("clkin calibrate", reason.clone())),
            );
        }
        return Err(refused(reason));
    }
    // One process per radio (docs/operator.md#one-process-per-radio).
    let _held = crate::store::radio_lock::RadioLock::acquire(&paths, &o.device, "clkin calibrate")?;
    let mut m = measure(
        &step,
        None,
        crate::signals::cancel_flag("the calibration"),
        !ctx.json,
    );
    if in_checkout {
        keep(&paths, &mut m, &step, None, policy.rx.calibration_max_age_s);
        let detail = FreqCalRecord {
            detections: None,
            ..m.entry.clone()
        };
        crate::exec::ledger_note(
            &paths,
            &Entry::new(Event::FreqCal(
                serde_json::to_value(detail).unwrap_or_default(),
            )),
        );
    } else {
        m.entry.calibration_stored = Some(false);
        m.entry.calibration_note = Some("not kept: not run in an rxnode checkout".to_owned());
    }
    if let Some(p) = &o.plot {
        if m.estimate.is_some() || m.entry.detections.is_some() {
            crate::result::write_freq_cal_png(p, &m.entry, "rxnode clkin calibrate (standalone)")?;
        } else {
            tracing::warn!("no picture: nothing was detected");
        }
    }
    ctx.report_to_pipe(&m.entry, |_| render(&m))?;
    Ok(match m.status {
        Status::Pass => Outcome::Done,
        _ => Outcome::Code(1),
    })
}

/// The human text of a measurement.
fn render(m: &Measured) -> String {
    let mut s = format!("{}: {}\n", m.status.as_str(), m.detail);
    if let Some(e) = &m.estimate {
        let fc = Some(m.entry.frequency_hz)
            .filter(|f| f.is_finite())
            .unwrap_or(0.0);
        s.push_str(&format!(
            "  the radio's clock runs {} by {:.4} ppm: tuned to {:.6} MHz its LO sits at {:.6} MHz;\n  \
             to receive {:.6} MHz exactly, tune to {:.6} MHz\n",
            if e.ppm >= 0.0 { "fast" } else { "slow" },
            e.ppm.abs(),
            fc / 1e6,
            fc * (1.0 + e.ppm * 1e-6) / 1e6,
            fc / 1e6,
            fc / (1.0 + e.ppm * 1e-6) / 1e6,
        ));
    }
    // Only a kept measurement is one `--apply-cal` can apply: say which it is.
    if let Some(n) = &m.entry.calibration_note {
        s.push_str(&format!(
            "  calibration {n}; `--apply-cal` will not use this measurement\n"
        ));
    } else if m.entry.calibration_stored == Some(true) {
        s.push_str(
            "  kept in .local/calibration.json: `--apply-cal` on a capture or sweep of this radio applies it\n",
        );
    }
    s
}

/// The `freq_cal` step: policy, measurement, its check and its `freq_cal[]` row.
pub(crate) fn step_freq_cal(s: &StepCtx, f: &FreqCalStep, out: &mut Outputs) {
    if let Err(e) = check_freq_cal(f, &s.policy.rx) {
        out.policy_blocked = true;
        out.not_calibrated(s, Status::Blocked, e.to_string());
        return;
    }
    let _held = match crate::exec::steps::hold_radio(s, &f.device) {
        Ok(l) => l,
        Err(why) => {
            out.not_calibrated(s, Status::Blocked, why);
            return;
        }
    };
    // Again under the radio's lock: a self-test may have found it BAD meanwhile.
    if let Some(why) = crate::health::guard::bad_reason(s.paths, &f.device) {
        out.not_calibrated(s, Status::Blocked, why);
        return;
    }
    let mut m = measure(
        f,
        Some(&s.paths.repo),
        crate::signals::cancel_flag("the running step"),
        !s.ctx.json,
    );
    keep(
        s.paths,
        &mut m,
        f,
        Some(s.task.id().as_str()),
        s.policy.rx.calibration_max_age_s,
    );
    if m.status == Status::Fail {
        out.errors.push(format!("{}: {}", s.name, m.detail));
    }
    let mut entry = m.entry;
    entry.step = Some(s.index + 1);
    out.freq_cal.push(FreqCalEntry::Measured(Box::new(entry)));
    out.checks.push(Check::new(&s.name, m.status, m.detail));
}
