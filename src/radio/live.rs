//! One live RX capture on a radio: open, configure, read back, gather clock
//! evidence, run the capture engine, make IQ paths relative to the checkout.
//! Shared by `rxnode run` (rx_capture steps) and `rxnode capture`.
mod pace;
mod streaming;

use crate::result::sections::capture::{
    CaptureActual, CaptureDevice, CaptureRequested, Described, RequestedGain,
};
use crate::result::Status;
use num_complex::Complex;
use pace::{dsp_threads, pool_blocks, speed_check, wants_native};
use rxnode_dsp::{
    CaptureSettings, CaptureStatus, CaptureSummary, ClkinConfig, ClockEvidence, IqFormat, IqWriter,
    RecordFormat, RecordingMeta, WelchConfig,
};
use rxnode_hw::{ActualSettings, DeviceInfo, RxConfig, RxRadio};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use streaming::{Stream, Streaming};

/// What to capture.
#[derive(Debug, Clone)]
pub(crate) struct LiveCapture {
    /// SoapySDR device args.
    pub(crate) device: String,
    /// Centre frequency.
    pub(crate) frequency_hz: f64,
    /// Sample rate.
    pub(crate) sample_rate_hz: f64,
    /// RX gain (overall).
    pub(crate) gain_db: Option<f64>,
    /// RX gain per element (`LNA` → dB …), set after the overall gain.
    pub(crate) gain_elements: Option<std::collections::BTreeMap<String, f64>>,
    /// Analog bandwidth.
    pub(crate) bandwidth_hz: Option<f64>,
    /// Antenna.
    pub(crate) antenna: Option<String>,
    /// Clock source to select (also the expected source for the CLKIN verdict).
    pub(crate) clock_source: Option<String>,
    /// Length.
    pub(crate) duration_s: f64,
    /// FFT size.
    pub(crate) fft_size: usize,
    /// The CLKIN check, when asked.
    pub(crate) clkin: Option<rxnode_interlock::ClkinSpec>,
    /// Record IQ to this file (format from the extension).
    pub(crate) record: Option<PathBuf>,
    /// The recording's sample type: `Ci16` streams the driver's CS16 and records it
    /// as it came (no float round trip); `Cf32` streams CF32.
    pub(crate) record_format: RecordFormat,
    /// IQ disk budget.
    pub(crate) max_iq_bytes: Option<u64>,
    /// Most peaks to list.
    pub(crate) max_peaks: usize,
    /// A peak's least height above the noise floor, dB.
    pub(crate) min_snr_db: f64,
    /// The node's frequency calibrations: the `clock` block of the summary and the
    /// recording, and the correction when asked.
    pub(crate) calibration: Option<CalibrationUse>,
    /// The radio's own settings (checked against the policy before), stream args,
    /// AGC and manual ppm.
    pub(crate) radio: rxnode_interlock::RadioSettings,
}

/// How a capture uses the node's frequency calibrations
/// (docs/operator.md#calibrating-a-radio-without-a-generator).
#[derive(Debug, Clone)]
pub(crate) struct CalibrationUse {
    /// Where `.local/calibration.json` is.
    pub(crate) paths: crate::store::paths::Paths,
    /// Older than this (s) is stale (the policy's `rx.calibration_max_age_s`).
    pub(crate) max_age_s: f64,
    /// Apply the radio's measurement (`apply_calibration`, `--apply-cal`): a missing
    /// or stale one blocks the capture, naming it.
    pub(crate) apply: bool,
}

impl CalibrationUse {
    /// The correction (ppm) to apply to this radio, if asked: its fresh measurement.
    pub(crate) fn correction(&self, info: &DeviceInfo) -> Result<Option<f64>, NotCaptured> {
        if !self.apply {
            return Ok(None);
        }
        crate::store::calibration::correction_for(
            &self.paths,
            crate::store::calibration::Radio::of(info),
            self.max_age_s,
        )
        .map(|m| Some(m.ppm))
        // A refusal of the node's own rule, as a policy limit is.
        .map_err(NotCaptured::OverLimit)
    }

    /// The `clock` block for this radio, its clock source and the correction applied.
    pub(crate) fn block(
        &self,
        info: &DeviceInfo,
        source: Option<&str>,
        applied: Option<(f64, crate::store::calibration::CorrectionFrom)>,
    ) -> crate::store::calibration::ClockBlock {
        crate::store::calibration::clock_of(
            &self.paths,
            crate::store::calibration::Radio::of(info),
            source,
            self.max_age_s,
            applied,
        )
    }
}

/// Split a plan's gain into the overall figure and the per-element map.
pub(crate) fn split_gain(
    g: Option<&rxnode_interlock::GainSpec>,
) -> (Option<f64>, Option<std::collections::BTreeMap<String, f64>>) {
    match g {
        Some(rxnode_interlock::GainSpec::Total(v)) => (Some(*v), None),
        Some(rxnode_interlock::GainSpec::Elements(m)) => (None, Some(m.clone())),
        None => (None, None),
    }
}

/// Why a capture did not happen.
#[derive(Debug)]
pub(crate) enum NotCaptured {
    /// The request exceeds the policy's or the device's limit (named): refused before streaming.
    OverLimit(String),
    /// The device is absent or busy: BLOCKED (`capture`: exit 1, a device error).
    Blocked(String),
    /// The radio cannot do what was asked (a frequency, antenna or bandwidth outside
    /// its ranges): BLOCKED (`capture`: exit 2, invalid input for this radio).
    Unsupported(String),
    /// Anything else: FAIL.
    Failed(String),
}

impl std::fmt::Display for NotCaptured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotCaptured::OverLimit(s)
            | NotCaptured::Blocked(s)
            | NotCaptured::Unsupported(s)
            | NotCaptured::Failed(s) => f.write_str(s),
        }
    }
}

fn classify(e: rxnode_hw::Error) -> NotCaptured {
    match e {
        rxnode_hw::Error::Open { .. } => NotCaptured::Blocked(e.to_string()),
        rxnode_hw::Error::NotFound { .. } => {
            NotCaptured::Blocked(format!("{e} — {}", super::absent_fix()))
        }
        rxnode_hw::Error::Unsupported { .. } => NotCaptured::Unsupported(e.to_string()),
        other => NotCaptured::Failed(other.to_string()),
    }
}

/// A capture's status in the result's words (PASS, PARTIAL, FAIL).
pub(crate) fn status_of(s: CaptureStatus) -> Status {
    match s {
        CaptureStatus::Pass => Status::Pass,
        CaptureStatus::Partial => Status::Partial,
        CaptureStatus::Fail => Status::Fail,
    }
}

/// The hardware crate's record format for a plan step's `record_format`.
pub(crate) fn record_format_of(f: Option<rxnode_interlock::IqSampleFormat>) -> RecordFormat {
    match f.unwrap_or_default() {
        rxnode_interlock::IqSampleFormat::Cf32 => RecordFormat::Cf32,
        rxnode_interlock::IqSampleFormat::Ci16 => RecordFormat::Ci16,
        rxnode_interlock::IqSampleFormat::Ci8 => RecordFormat::Ci8,
    }
}

/// A path relative to the checkout, with `/` separators; an absolute path if it is outside.
pub(crate) fn relative_to(path: &Path, checkout: &Path) -> String {
    let abs = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (p, c) = (abs(path), abs(checkout));
    match p.strip_prefix(&c) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => p.display().to_string(),
    }
}

/// An analysis that rides a live capture: told what the radio really has once it is
/// tuned, then handed every analysed block on the capture engine's DSP thread.
pub(crate) trait BlockSink {
    /// The radio is tuned to `frequency_hz` at `sample_rate_hz` (read back): get
    /// ready, or refuse (nothing has streamed yet).
    fn start(&mut self, frequency_hz: f64, sample_rate_hz: f64) -> Result<(), NotCaptured>;
    /// The next block of samples.
    fn feed(&mut self, block: &[Complex<f32>]);
}

/// Run one capture. `checkout`: make IQ paths relative to it. `show_progress`: a
/// progress bar on stderr when it is a terminal.
pub(crate) fn capture(
    c: &LiveCapture,
    checkout: Option<&Path>,
    cancel: &AtomicBool,
    show_progress: bool,
) -> Result<CaptureSummary, NotCaptured> {
    capture_into(c, checkout, cancel, show_progress, None)
}

/// [`capture`], handing every analysed block to `sink` too (CF32; `sink` captures
/// never record CS16).
pub(crate) fn capture_into(
    c: &LiveCapture,
    checkout: Option<&Path>,
    cancel: &AtomicBool,
    show_progress: bool,
    mut sink: Option<&mut dyn BlockSink>,
) -> Result<CaptureSummary, NotCaptured> {
    // HackRF's only CLKIN signal besides the hardware-info key: ask `hackrf_clock`
    // (read-only) before we open the radio, as a HackRF takes one process at a time.
    let hackrf_clkin = c
        .clkin
        .as_ref()
        .and_then(|_| rxnode_hw::hackrf_clkin_status(&c.device));
    // A recording streamed to a FIFO: its reader first, so no radio is held
    // while nobody reads. Held open until the recorder has opened it too.
    let _fifo_reader = wait_for_fifo_reader(c.record.as_deref(), cancel, FIFO_PATIENCE)?;
    let mut radio = RxRadio::open(&c.device).map_err(classify)?;
    let info = radio.probe();
    let total_gain = c
        .gain_db
        .or_else(|| c.gain_elements.as_ref().map(|m| m.values().sum()));
    within_device_limits(c.sample_rate_hz, total_gain, &info)?;
    // A correction asked for: the radio's fresh measurement, or nothing streams.
    let calibrated = match &c.calibration {
        Some(k) => k.correction(&info)?,
        None => None,
    };
    // A manual correction (`ppm`) tunes as a calibration does; never both (the
    // policy check refuses it).
    let applied_from = {
        use crate::store::calibration::CorrectionFrom;
        (calibrated.map(|p| (p, CorrectionFrom::Calibration)))
            .or(c.radio.ppm.map(|p| (p, CorrectionFrom::Manual)))
    };
    let applied = applied_from.map(|a| a.0);
    // The LO of a radio whose clock runs fast by e sits at f·(1+e): to be at fc
    // really, tune to fc/(1+e).
    let scale = 1.0 + applied.unwrap_or(0.0) * 1e-6;
    let mut asked = c.clone();
    asked.frequency_hz = c.frequency_hz / scale;
    if let Some(ch) = c.radio.channel {
        radio.set_channel(ch).map_err(classify)?;
    }
    let tuned = configure(&mut radio, &asked, hackrf_clkin)?;
    // The radio's own settings, AGC and stream args, before the stream is set up.
    radio.write_settings(&c.radio.settings).map_err(classify)?;
    if c.radio.agc {
        radio.set_agc(true).map_err(classify)?;
    }
    radio.set_stream_args(&c.radio.stream_args);
    let mut settings = settings_of(c, &tuned);
    if applied.is_some() {
        // The PSD's axis in true RF.
        settings.welch.center_hz = Some(tuned.actual.frequency_hz * scale);
    }
    let clock = c
        .calibration
        .as_ref()
        .map(|k| k.block(&info, tuned.actual.clock_source.as_deref(), applied_from))
        // The capture engine and the recorder carry it as a JSON value.
        .map(|b| serde_json::to_value(b).unwrap_or(serde_json::Value::Null));
    if let Some(k) = sink.as_deref_mut() {
        k.start(tuned.actual.frequency_hz, tuned.actual.sample_rate_hz)?;
    }
    // A recording's `core:frequency` is its true RF centre: the dial setting times
    // (1 + e) when a correction was applied (docs/protocol.md#clock).
    let mut recorder = recorder_of(c, &tuned, &info, tuned.actual.frequency_hz * scale)?;
    if let (Some(w), Some(k)) = (recorder.as_mut(), &clock) {
        w.set_clock(k.clone());
    }
    // Native CS16 or CS8 when recording it, or CS16 at rates whose CF32 pool would
    // not fit (when the driver offers CS16); otherwise CF32 as before.
    let recording = sink.is_none() && c.record.is_some();
    let stream = if recording && c.record_format == RecordFormat::Ci16 {
        Stream::I16(radio.rx_stream_ci16().map_err(classify)?)
    } else if recording && c.record_format == RecordFormat::Ci8 {
        Stream::I8(radio.rx_stream_native().map_err(classify)?)
    } else if wants_native(c, sink.is_some()) {
        match radio.rx_stream_ci16() {
            Ok(s) => Stream::I16(s),
            Err(rxnode_hw::Error::Unsupported { .. }) => {
                Stream::F32(radio.rx_stream().map_err(classify)?)
            }
            Err(e) => return Err(classify(e)),
        }
    } else {
        Stream::F32(radio.rx_stream().map_err(classify)?)
    };
    let native = !matches!(stream, Stream::F32(_));
    settings.pool_blocks = pool_blocks(
        tuned.actual.sample_rate_hz,
        settings.block_samples,
        match stream {
            Stream::F32(_) => 8,
            Stream::I16(_) => 4,
            Stream::I8(_) => 2,
        },
        settings.pool_blocks,
    );
    speed_check(&settings, native, tuned.actual.sample_rate_hz);
    let run = Streaming {
        stream,
        settings: &settings,
        cancel,
        recorder,
        bar_on: show_progress && crate::term::stderr_progress(),
        sink,
    };
    let mut summary = run.run().map_err(|e| NotCaptured::Failed(e.to_string()))?;
    describe(&mut summary, c, &info, &tuned);
    summary.clock = clock;
    if let Some(co) = checkout {
        for f in &mut summary.iq_files {
            f.path = PathBuf::from(relative_to(&f.path, co));
        }
    }
    Ok(summary)
}

/// The policy's own limits were applied by `check_rx_step` before we got
/// here; where the policy sets none, the limit is the device's maximum.
pub(crate) fn within_device_limits(
    sample_rate_hz: f64,
    total_gain_db: Option<f64>,
    info: &DeviceInfo,
) -> Result<(), NotCaptured> {
    let dev_max_rate = info
        .sample_rate_ranges_hz
        .iter()
        .map(|r| r[1])
        .fold(f64::NAN, f64::max);
    if dev_max_rate.is_finite() && sample_rate_hz > dev_max_rate {
        return Err(NotCaptured::OverLimit(format!(
            "sample_rate_hz {sample_rate_hz} exceeds the device maximum {dev_max_rate}"
        )));
    }
    if let (Some(g), Some([_, m])) = (total_gain_db, info.gain_range_db) {
        if g > m {
            return Err(NotCaptured::OverLimit(format!(
                "gain_db {g} exceeds the device maximum {m}"
            )));
        }
    }
    Ok(())
}

/// What the radio really has after configuring, and its clock evidence.
struct Tuned {
    actual: ActualSettings,
    gain_elements_db: std::collections::BTreeMap<String, f64>,
    evidence: ClockEvidence,
}

/// Configure, set per-element gains, read everything back, gather clock evidence.
fn configure(
    radio: &mut RxRadio,
    c: &LiveCapture,
    hackrf_clkin: Option<bool>,
) -> Result<Tuned, NotCaptured> {
    let actual = radio
        .configure(&RxConfig {
            frequency_hz: c.frequency_hz,
            sample_rate_hz: c.sample_rate_hz,
            gain_db: c.gain_db,
            bandwidth_hz: c.bandwidth_hz,
            antenna: c.antenna.clone(),
            clock_source: c.clock_source.clone(),
        })
        .map_err(classify)?;
    // Per-element gains: each checked against the element's own range by `hw`;
    // then read everything back again.
    let actual = match &c.gain_elements {
        Some(m) => {
            radio.set_gain_elements(m).map_err(classify)?;
            radio.actual().map_err(classify)?
        }
        None => actual,
    };
    let gain_elements_db = radio.gain_elements().unwrap_or_default();
    let sensors = radio.sensors().unwrap_or_default();
    let hwinfo = radio.hardware_info().unwrap_or_default();
    let evidence = ClockEvidence {
        expected_source: c.clock_source.clone(),
        clock_source: actual.clock_source.clone(),
        ref_locked: sensors
            .iter()
            .find(|(k, _)| k.as_str() == "ref_locked" || k.contains("ref_lock"))
            .and_then(|(_, v)| match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Some(true),
                "false" | "0" | "no" => Some(false),
                _ => None,
            }),
        hw_clock_source: hwinfo.get("clock source").cloned(),
        hackrf_clkin,
    };
    Ok(Tuned {
        actual,
        gain_elements_db,
        evidence,
    })
}

/// The capture engine's settings for what the radio really has.
fn settings_of(c: &LiveCapture, tuned: &Tuned) -> CaptureSettings {
    let actual = &tuned.actual;
    let mut welch = WelchConfig::new(c.fft_size, actual.sample_rate_hz);
    welch.center_hz = Some(actual.frequency_hz);
    welch.max_peaks = c.max_peaks;
    welch.min_snr_db = c.min_snr_db;
    // The radio's filter as the radio reads it back (as a recording keeps it in
    // `rxnode:bandwidth_hz`): the floor is read inside it
    // (docs/operator.md#peaks-and-the-noise-floor).
    welch.passband_hz = actual.bandwidth_hz.filter(|b| b.is_finite() && *b > 0.0);
    let samples = (c.duration_s * actual.sample_rate_hz).round() as u64;
    let mut settings = CaptureSettings::new(samples, welch);
    // A policy may allow very long captures: saturate rather than panic.
    settings.deadline =
        Some(Duration::try_from_secs_f64(c.duration_s * 1.5 + 2.0).unwrap_or(Duration::MAX));
    settings.clkin = c
        .clkin
        .as_ref()
        .map(|k| clkin_config(k, actual.frequency_hz, actual.sample_rate_hz));
    settings.clock_evidence = tuned.evidence.clone();
    settings.dsp_threads = dsp_threads();
    // The pool is sized once the stream's sample type is known (`pool_blocks`).
    settings
}

/// The CLKIN estimator's settings for a check on a capture at `center_hz`, `rate_hz`:
/// the search window from the tolerance, the expected level if given
/// (`docs/operator.md#clkin`).
pub(crate) fn clkin_config(
    k: &rxnode_interlock::ClkinSpec,
    center_hz: f64,
    rate_hz: f64,
) -> ClkinConfig {
    let mut cfg = ClkinConfig::new(k.tone_hz, center_hz, rate_hz, k.tolerance_ppm);
    cfg.expected_dbfs = k.expected_dbfs;
    if let Some(t) = k.expected_tolerance_db {
        cfg.expected_tolerance_db = t;
    }
    cfg
}

/// How long a capture waits for a program to open its `--record` FIFO for reading.
const FIFO_PATIENCE: Duration = Duration::from_secs(60);

/// When `record` is an existing FIFO: wait until a program has it open for reading
/// (the FIFO held open for writing, returned), at most `patience`, a Ctrl-C or
/// SIGTERM (`cancel`) ending the wait — never in an open(2) nothing can end
/// (docs/operator.md#streaming-a-capture-to-another-program). `None` for anything else.
fn wait_for_fifo_reader(
    record: Option<&Path>,
    cancel: &AtomicBool,
    patience: Duration,
) -> Result<Option<std::fs::File>, NotCaptured> {
    let Some(p) = record
        .filter(|p| p.as_os_str() != rxnode_dsp::STDOUT_TARGET && rxnode_dsp::is_stream_target(p))
    else {
        return Ok(None);
    };
    let start = std::time::Instant::now();
    let mut told = false;
    loop {
        match rxnode_dsp::open_fifo_write(p) {
            Ok(Some(f)) => return Ok(Some(f)),
            Ok(None) => {}
            Err(e) => return Err(NotCaptured::Failed(format!("{}: {e}", p.display()))),
        }
        if cancel.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(NotCaptured::Failed(format!(
                "stopped while waiting for a program to read the FIFO {}; nothing was captured",
                p.display()
            )));
        }
        if start.elapsed() >= patience {
            return Err(NotCaptured::Failed(format!(
                "no program opened the FIFO {} for reading within {} s; start the program that \
                 reads it (e.g. `cat {} > file`, GNU Radio's File Source), then the capture",
                p.display(),
                patience.as_secs(),
                p.display()
            )));
        }
        if !told {
            tracing::warn!(
                "waiting for a program to open the FIFO {} for reading (at most {} s; Ctrl-C stops)",
                p.display(),
                patience.as_secs()
            );
            told = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The IQ writer when recording (its folder created), `None` otherwise; `center_hz`
/// is the true RF centre (the dial setting corrected by any calibration applied).
fn recorder_of(
    c: &LiveCapture,
    tuned: &Tuned,
    info: &DeviceInfo,
    center_hz: f64,
) -> Result<Option<IqWriter>, NotCaptured> {
    let Some(p) = &c.record else {
        return Ok(None);
    };
    let actual = &tuned.actual;
    let stream = rxnode_dsp::is_stream_target(p);
    if let Some(d) = p.parent().filter(|_| !stream) {
        std::fs::create_dir_all(d)
            .map_err(|e| NotCaptured::Failed(format!("cannot create {}: {e}", d.display())))?;
    }
    let meta = RecordingMeta {
        sample_rate_hz: actual.sample_rate_hz,
        center_hz: Some(center_hz),
        datetime: None,
        hw: Some(format!(
            "{} ({})",
            info.driver,
            info.hardware_key.clone().unwrap_or_default()
        )),
        description: Some("rxnode capture".to_owned()),
        gain_db: Some(actual.gain_db).filter(|g| g.is_finite()),
        gain_elements: Some(tuned.gain_elements_db.clone()).filter(|g| !g.is_empty()),
        antenna: actual.antenna.clone().filter(|a| !a.is_empty()),
        bandwidth_hz: actual.bandwidth_hz.filter(|b| b.is_finite() && *b > 0.0),
    };
    let format = match IqFormat::from_path(p) {
        Err(_) if stream => c.record_format.raw_format(),
        r => r.map_err(|e| NotCaptured::Failed(e.to_string()))?,
    };
    let writer = IqWriter::create_with(p, format, c.record_format, meta, c.max_iq_bytes)
        .map_err(|e| NotCaptured::Failed(e.to_string()))?;
    Ok(Some(writer))
}

/// The summary's device, what was requested and what the radio really had
/// ([`Described`]; the engine's summary carries them as JSON values).
fn describe(summary: &mut CaptureSummary, c: &LiveCapture, info: &DeviceInfo, tuned: &Tuned) {
    Described {
        device: CaptureDevice {
            args: c.device.clone(),
            driver: info.driver.clone(),
            hardware_key: info.hardware_key.clone(),
            // A radio behind SoapyRemote: its server is part of its identity.
            remote: info.remote.clone(),
            serial: info.serial.clone(),
        },
        requested: CaptureRequested {
            antenna: c.antenna.clone(),
            bandwidth_hz: c.bandwidth_hz,
            clock_source: c.clock_source.clone(),
            duration_s: c.duration_s,
            frequency_hz: c.frequency_hz,
            gain_db: match &c.gain_elements {
                Some(m) => RequestedGain::Elements(m.clone()),
                None => RequestedGain::Total(c.gain_db),
            },
            sample_rate_hz: c.sample_rate_hz,
        },
        actual: CaptureActual {
            settings: tuned.actual.clone(),
            gain_elements_db: tuned.gain_elements_db.clone(),
        },
    }
    .fill(summary);
}

#[cfg(test)]
mod tests;
