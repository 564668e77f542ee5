//! `rxnode capture`: one bounded, receive-only capture for the operator at the laptop
//! Never transmits: it only ever opens an RX stream through
//! [`crate::exec::live::capture`]. Bounded by the node-local policy (docs/safety.md); a refusal
//! names the limit and exits 3. Ctrl-C stops the capture and writes what was captured
//! (status PARTIAL). Inside a checkout the capture is written to the ledger.
use crate::context::Ctx;
use crate::exec::live::{relative_to, LiveCapture, NotCaptured};
use crate::exec::{exists_not_a_file, exists_unless_forced, positive};
use crate::exit::{
    bad_field, bad_input, field_context, field_failure, refused, FieldText, Outcome,
};
use crate::store::ledger::{
    CaptureAsked, CaptureClkin, CaptureDetail, CaptureFailed, CaptureFile, CapturePeak, CaptureRan,
    Entry, Event, Refusal,
};
use crate::store::paths::Paths;
use crate::store::policy::Source;
use anyhow::{Context as _, Result};
use rxnode_dsp::{CaptureStatus, CaptureSummary, IqFormat, RecordFormat};
use rxnode_interlock::{check_rx_step, IqSampleFormat, RxCaptureStep};
use std::fmt::Write as _;
use std::path::Path;

mod render;

use render::render;
pub(crate) use render::{
    centre_carrier_text, centre_span_note, clkin_error, correction_line, threshold_line,
};

/// Check the arguments themselves (exit 2), before policy and hardware.
fn check_args(args: &CaptureOptions) -> Result<()> {
    if args.device.trim().is_empty() {
        return Err(bad_field(
            "device",
            " must not be empty (e.g. driver=hackrf)",
        ));
    }
    positive("frequency_hz", args.frequency_hz)?;
    positive("sample_rate_hz", args.sample_rate_hz)?;
    positive("duration_s", args.duration_s)?;
    super::at_least_one_sample(args.duration_s, args.sample_rate_hz)?;
    if let Some(b) = args.bandwidth_hz {
        positive("bandwidth_hz", b)?;
    }
    if let Some(a) = args
        .antenna
        .as_ref()
        .filter(|a| a.trim().is_empty() || a.chars().any(char::is_control))
    {
        return Err(bad_field(
            "antenna",
            format!(" {a:?} must be an antenna name (see `rxnode inventory`)"),
        ));
    }
    super::check_peaks(&args.peaks)?;
    if let Some(p) = &args.plot {
        if p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
            != Some("png")
        {
            return Err(bad_field(
                "plot",
                format!(" {}: the picture is a .png file", p.display()),
            ));
        }
        if p.exists() && !args.force {
            return Err(bad_field(
                "plot",
                FieldText::text(": ").then_all(exists_unless_forced(p)),
            ));
        }
        if args.record.as_ref().is_some_and(|r| r == p) {
            return Err(bad_field(
                "plot",
                FieldText::text(" and ")
                    .then_field("record")
                    .then(format!(" name the same file {}", p.display())),
            ));
        }
    }
    if let Some(t) = args.clkin.clkin_tone_hz {
        positive("clkin_tone_hz", t)?;
    }
    if let Some(l) = args
        .clkin
        .clkin_expected_dbfs
        .filter(|l| !(l.is_finite() && *l <= 0.0))
    {
        return Err(bad_field(
            "clkin_expected_dbfs",
            format!(" {l} must be a finite level ≤ 0 dBFS"),
        ));
    }
    if !(args.clkin.clkin_tolerance_ppm.is_finite() && args.clkin.clkin_tolerance_ppm >= 0.0) {
        return Err(bad_field(
            "clkin_tolerance_ppm",
            format!(
                " {} must be a finite number ≥ 0",
                args.clkin.clkin_tolerance_ppm
            ),
        ));
    }
    if !rxnode_interlock::fft_size_ok(args.fft.fft_size) {
        return Err(bad_field(
            "fft_size",
            format!(" {} must be in 16..=1048576", args.fft.fft_size),
        ));
    }
    if let Some(s) = &args.clock_source {
        if s.trim().is_empty() {
            return Err(bad_field("clock_source", " must not be empty"));
        }
    }
    let record_format = record_format(args);
    if let Some(p) = &args.record {
        // A stream (standard output, a FIFO) is read as it is written: nothing to
        // overwrite, and without a recognised extension it carries the raw samples.
        let stream = rxnode_dsp::is_stream_target(p);
        let fmt = match IqFormat::from_path(p) {
            Err(_) if stream => record_format.raw_format(),
            r => r.map_err(|e| bad_field("record", format!(": {e}")))?,
        };
        let fits = match record_format {
            RecordFormat::Cf32 => matches!(fmt, IqFormat::Cf32 | IqFormat::Wav | IqFormat::Sigmf),
            RecordFormat::Ci16 => matches!(fmt, IqFormat::Cs16 | IqFormat::Sigmf),
            RecordFormat::Ci8 => matches!(fmt, IqFormat::Cs8 | IqFormat::Sigmf),
        };
        if !fits {
            return Err(bad_field(
                "record",
                match record_format {
                    RecordFormat::Cf32 => FieldText::text(format!(
                        " {}: recordings are .cf32, .wav, .sigmf-data or .sigmf-meta (.cs16 with ",
                        p.display()
                    ))
                    .then_field("record_format")
                    .then(" ci16, .cs8 with ci8)"),
                    RecordFormat::Ci16 => FieldText::text(format!(" {}: ", p.display()))
                        .then_field("record_format")
                        .then(" ci16 records .sigmf-data, .sigmf-meta or .cs16"),
                    RecordFormat::Ci8 => FieldText::text(format!(" {}: ", p.display()))
                        .then_field("record_format")
                        .then(" ci8 records .sigmf-data, .sigmf-meta or .cs8"),
                },
            ));
        }
        if stream && fmt == IqFormat::Wav {
            return Err(bad_field(
                "record",
                format!(
                    " {}: a WAV header is completed at the end, which a stream cannot do; \
                     record raw samples (.cf32) or SigMF",
                    p.display()
                ),
            ));
        }
        // Never overwrite a recording.
        let targets = if fmt == IqFormat::Sigmf {
            vec![
                p.with_extension("sigmf-data"),
                p.with_extension("sigmf-meta"),
            ]
        } else if stream {
            Vec::new()
        } else {
            vec![p.clone()]
        };
        if let Some(t) = targets
            .iter()
            .find(|t| t.exists() && !rxnode_dsp::is_stream_target(t))
        {
            if !args.force {
                return Err(bad_field(
                    "record",
                    FieldText::text(": ").then_all(exists_unless_forced(t)),
                ));
            }
            if !t.is_file() {
                return Err(bad_field(
                    "record",
                    FieldText::text(": ").then_all(exists_not_a_file(t)),
                ));
            }
        }
    }
    Ok(())
}

/// The files `--record` writes (both halves of a SigMF pair).
fn record_targets(p: &Path) -> Vec<std::path::PathBuf> {
    if matches!(IqFormat::from_path(p), Ok(IqFormat::Sigmf)) {
        vec![
            p.with_extension("sigmf-data"),
            p.with_extension("sigmf-meta"),
        ]
    } else {
        vec![p.to_path_buf()]
    }
}

/// `--force`: make way for the recording the operator asked to overwrite.
fn clear_for_force(args: &CaptureOptions) -> Result<()> {
    if !args.force {
        return Ok(());
    }
    // A stream (standard output, a FIFO) is never removed: another program reads it.
    for t in args
        .record
        .iter()
        .flat_map(|p| record_targets(p))
        .filter(|t| !rxnode_dsp::is_stream_target(t))
    {
        match std::fs::remove_file(&t) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(field_context(
                    e,
                    FieldText::field("force").then(format!(": cannot remove {}", t.display())),
                ))
            }
        }
    }
    Ok(())
}

/// The recording's sample type, default cf32.
fn record_format(args: &CaptureOptions) -> RecordFormat {
    args.record_format.unwrap_or_default()
}

/// Inside a checkout: the ledger is written and `.local/` kept out of Git.
pub(crate) fn in_checkout(repo: &Path) -> bool {
    match git2::Repository::open(repo) {
        Ok(r) => {
            if let Err(e) = crate::git::ops::ensure_local_excluded(&r) {
                tracing::warn!("cannot keep .local/ out of Git: {e:#}");
            }
            true
        }
        Err(_) => false,
    }
}

/// A path fit for the ledger: relative to the checkout, or only the file name when the
/// file is outside it (the ledger never holds an absolute path).
fn ledger_path(p: &Path, checkout: &Path) -> String {
    let rel = relative_to(p, checkout);
    if Path::new(&rel).is_absolute() {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        rel
    }
}

/// PASS, PARTIAL or FAIL.
fn status_name(s: CaptureStatus) -> &'static str {
    crate::exec::live::status_of(s).as_str()
}

/// A ledger line, inside a checkout only.
fn log(paths: &Paths, ledger_on: bool, e: Entry) {
    if ledger_on {
        crate::exec::ledger_note(paths, &e);
    }
}

/// `capture` options.
#[derive(Debug, Clone, clap::Args)]
pub struct CaptureOptions {
    /// SoapySDR device args (`driver=hackrf,serial=…`).
    #[arg(short = 'd', long, value_parser = crate::options::device)]
    pub device: String,
    /// Centre frequency, Hz (SI suffixes: `100M`, `433.92MHz`, `2.4G`).
    #[arg(short = 'f', long, value_parser = crate::options::frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (`2M`, `2e6`).
    #[arg(short = 'r', long, value_parser = crate::options::sample_rate)]
    pub sample_rate_hz: f64,
    /// Capture length (seconds, or `2s`, `500ms`, `1m`).
    #[arg(short = 't', long, value_parser = crate::options::duration)]
    pub duration_s: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20` (default: not set, the
    /// radio keeps its driver's gain; the report shows it).
    #[arg(short = 'g', long, value_parser = crate::options::gain)]
    pub gain_db: Option<rxnode_interlock::GainSpec>,
    /// Antenna to select (`rxnode inventory` lists them; default: the one the
    /// radio has selected).
    #[arg(short = 'A', long, short_alias = 'a')]
    pub antenna: Option<String>,
    /// Analog (baseband filter) bandwidth, Hz (`1.75M`; default: not set, the
    /// driver's own).
    #[arg(short = 'w', long, value_parser = crate::options::frequency)]
    pub bandwidth_hz: Option<f64>,
    /// Clock source to select (`rxnode inventory` lists them; default: the one
    /// the radio has selected).
    #[arg(long)]
    pub clock_source: Option<String>,
    /// The CLKIN check (`--clkin-*`).
    #[command(flatten)]
    pub clkin: crate::options::ClkinOptions,
    /// The FFT (`--fft-size`).
    #[command(flatten)]
    pub fft: crate::options::FftOptions,
    /// Record IQ: `.cf32`, `.wav`, `.sigmf-data` or `.sigmf-meta` (`.cs16` with
    /// `--record-format ci16`, `.cs8` with `ci8`); `-` streams raw samples to standard output (the report
    /// goes to standard error), an existing FIFO streams to the program reading it.
    #[arg(long)]
    pub record: Option<std::path::PathBuf>,
    /// Sample type of the recording: `cf32` (default), `ci16`, the radio's native
    /// CS16 as it came (SigMF `ci16_le`, half the bytes; for full rate), or `ci8`, the
    /// native CS8 of a HackRF (SigMF `ci8`, a quarter of the bytes).
    #[arg(long, requires = "record", ignore_case = true, value_parser = crate::options::record_format())]
    pub record_format: Option<RecordFormat>,
    /// Write a spectrum PNG (peaks, noise floor, CLKIN tones, RBW, status).
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
    /// Overwrite `--record` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// The peak list (`--max-peaks`, `--min-snr-db`).
    #[command(flatten)]
    pub peaks: crate::options::PeakOptions,
    /// Tune with the radio's frequency calibration from `rxnode clkin calibrate`
    /// (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long, conflicts_with = "ppm")]
    pub apply_cal: bool,
    /// The radio's own settings, stream args, AGC, manual ppm and channel.
    #[command(flatten)]
    pub radio: crate::options::RadioOptions,
}

/// Run `rxnode capture`.
pub fn cmd_capture(ctx: &Ctx, args: &CaptureOptions) -> Result<Outcome> {
    check_args(args)?;
    let paths = ctx.paths();
    let ledger_on = in_checkout(&ctx.repo);
    let (policy, source) = crate::store::policy::load(&paths)?;
    // Raw IQ never where Git can see it (after `.local/` was excluded).
    if let Some(p) = args
        .record
        .as_ref()
        .filter(|p| p.as_os_str() != rxnode_dsp::STDOUT_TARGET)
    {
        crate::store::trust::check_record_target(p)?;
    }
    let refuse = |reason: String| {
        let mut reason = reason;
        if source == Source::Defaults {
            reason.push_str(" (default policy: no file at .local/rxnode-policy.json)");
        }
        log(
            &paths,
            ledger_on,
            Entry::new(Refusal::of("capture", reason.clone())),
        );
        refused(reason)
    };
    if let Err(e) = check_rx_step(&step_of(args), &policy.rx) {
        return Err(refuse(crate::options::policy_flags::<CaptureOptions>(
            &e.to_string(),
        )));
    }
    let calibration = crate::exec::live::CalibrationUse {
        paths: paths.clone(),
        max_age_s: policy.rx.calibration_max_age_s,
        apply: args.apply_cal,
    };
    let live = live_of(args, policy.rx.max_iq_bytes, calibration)?;
    // One process per radio (docs/operator.md#one-process-per-radio).
    let _held = crate::store::radio_lock::RadioLock::acquire(&paths, &args.device, "capture")?;
    clear_for_force(args)?;
    let cancel = crate::signals::cancel_flag("the capture");
    // No checkout rewrite: `iq_files` paths stay as the operator gave them.
    let summary = match crate::exec::live::capture(&live, None, cancel, !ctx.json) {
        Ok(s) => s,
        // The live layer checks the device's own limits (the default policy bound).
        Err(NotCaptured::OverLimit(why)) => return Err(refuse(why)),
        Err(NotCaptured::Unsupported(why)) => {
            return Err(bad_input(format!(
                "capture on {}: {why} — fix: pick a setting the radio supports (`rxnode inventory --dry-run` lists its ranges)",
                args.device
            )));
        }
        Err(NotCaptured::Blocked(why)) | Err(NotCaptured::Failed(why)) => {
            log(
                &paths,
                ledger_on,
                Entry::new(Event::Capture(CaptureDetail::Failed(CaptureFailed {
                    asked: asked(args),
                    error: why.clone(),
                    status: "FAIL",
                }))),
            );
            return Err(anyhow::anyhow!("capture on {}: {why}", args.device));
        }
    };
    log(
        &paths,
        ledger_on,
        Entry::new(Event::Capture(ledger_detail(&summary, args, &ctx.repo))),
    );
    // A picture that cannot be drawn or written loses no measurement: the report is
    // printed first, then the picture's failure is the command's error.
    let (plotted, unplotted) = match args.plot.as_ref().map(|p| write_plot(p, &summary, args)) {
        Some(Ok(p)) => (Some(p), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    // A closed pipe (`| head`) is not an error of the capture. With the samples on
    // standard output, the report goes to standard error.
    let to_stderr = args
        .record
        .as_ref()
        .is_some_and(|p| p.as_os_str() == rxnode_dsp::STDOUT_TARGET);
    ctx.report_to_pipe_or_stderr(to_stderr, &summary, |s| {
        let mut t = render(s, args);
        if let Some(p) = &plotted {
            let _ = writeln!(t, "wrote spectrum PNG: {}", p.display());
        }
        t
    })?;
    if let Some(e) = unplotted {
        return Err(e.context(format!(
            "the capture was measured and reported{}, but its --plot was not written",
            if ctx.json || to_stderr { "" } else { " above" }
        )));
    }
    Ok(match summary.status {
        CaptureStatus::Pass => Outcome::Done,
        CaptureStatus::Partial | CaptureStatus::Fail => Outcome::Code(1),
    })
}

/// The capture as a plan step, for the policy's check.
fn step_of(args: &CaptureOptions) -> RxCaptureStep {
    let radio = args.radio.settings();
    RxCaptureStep {
        device: args.device.clone(),
        frequency_hz: args.frequency_hz,
        sample_rate_hz: args.sample_rate_hz,
        gain_db: args.gain_db.clone(),
        duration_s: args.duration_s,
        fft_size: Some(args.fft.fft_size),
        record_iq: args.record.is_some(),
        record_format: args.record.as_ref().map(|_| match record_format(args) {
            RecordFormat::Ci16 => IqSampleFormat::Ci16,
            RecordFormat::Ci8 => IqSampleFormat::Ci8,
            RecordFormat::Cf32 => IqSampleFormat::Cf32,
        }),
        clock_source: args.clock_source.clone(),
        bandwidth_hz: args.bandwidth_hz,
        antenna: args.antenna.clone(),
        clkin: None,
        max_peaks: Some(args.peaks.max_peaks),
        min_snr_db: Some(args.peaks.min_snr_db),
        apply_calibration: args.apply_cal,
        settings: radio.settings,
        stream_args: radio.stream_args,
        agc: radio.agc,
        ppm: radio.ppm,
        channel: radio.channel,
    }
}

/// The live capture asked for, within the policy's IQ budget.
fn live_of(
    args: &CaptureOptions,
    max_iq_bytes: u64,
    calibration: crate::exec::live::CalibrationUse,
) -> Result<LiveCapture> {
    let (gain_db, gain_elements) = crate::exec::live::split_gain(args.gain_db.as_ref());
    Ok(LiveCapture {
        device: args.device.clone(),
        frequency_hz: args.frequency_hz,
        sample_rate_hz: args.sample_rate_hz,
        gain_db,
        gain_elements,
        bandwidth_hz: args.bandwidth_hz,
        antenna: args.antenna.clone(),
        clock_source: args.clock_source.clone(),
        duration_s: args.duration_s,
        fft_size: args.fft.fft_size,
        clkin: args
            .clkin
            .clkin_tone_hz
            .map(|t| rxnode_interlock::ClkinSpec {
                tone_hz: t,
                tolerance_ppm: args.clkin.clkin_tolerance_ppm,
                expected_dbfs: args.clkin.clkin_expected_dbfs,
                expected_tolerance_db: None,
            }),
        record: args.record.clone(),
        record_format: record_format(args),
        max_iq_bytes: Some(max_iq_bytes),
        max_peaks: args.peaks.max_peaks,
        min_snr_db: args.peaks.min_snr_db,
        calibration: Some(calibration),
        radio: args.radio.settings(),
    })
}

/// The spectrum PNG of a capture (`--plot`): the PSD on an absolute MHz axis,
/// the listed peaks, the noise floor, the CLKIN tones; RBW and status in the title.
fn write_plot(
    path: &Path,
    s: &CaptureSummary,
    args: &CaptureOptions,
) -> Result<std::path::PathBuf> {
    let Some(psd) = &s.psd else {
        return Err(field_failure(FieldText::field("plot").then(format!(
            " {}: the capture produced no spectrum ({}), so there is nothing to draw",
            path.display(),
            s.stop_reason
        ))));
    };
    if !psd.db.iter().any(|v| v.is_finite()) {
        return Err(field_failure(FieldText::field("plot").then(format!(
            " {}: no bin of the capture's spectrum has power ({}), so there is nothing to draw",
            path.display(),
            s.floor_absent().unwrap_or_default()
        ))));
    }
    let rate = s
        .actual
        .get("sample_rate_hz")
        .and_then(|v| v.as_f64())
        .unwrap_or(args.sample_rate_hz);
    let centre = s
        .actual
        .get("frequency_hz")
        .and_then(|v| v.as_f64())
        .unwrap_or(args.frequency_hz);
    let title = format!(
        "capture · {} · centre {:.6} MHz · {:.3} MS/s · RBW {} · {}",
        args.device,
        centre / 1e6,
        rate / 1e6,
        crate::result::plot::fmt_rbw(rate / s.fft_size.max(1) as f64),
        status_name(s.status)
    );
    let peaks = s
        .peaks
        .iter()
        .map(|p| (p.frequency_hz, p.power_db))
        .collect();
    let plot =
        crate::result::plot::live_spectrum(title, psd, peaks, s.noise_floor_db, s.clkin.as_ref());
    crate::result::plot::write_output(path, args.force, |t| {
        crate::result::plot::write_spectrum(t, &plot)
    })
    .with_context(|| format!("cannot write plot {}", path.display()))?;
    Ok(path.to_path_buf())
}

/// What a capture was asked for, as the ledger keeps it.
fn asked(args: &CaptureOptions) -> CaptureAsked {
    CaptureAsked {
        device: args.device.clone(),
        duration_s: args.duration_s,
        frequency_hz: args.frequency_hz,
        sample_rate_hz: args.sample_rate_hz,
    }
}

/// The ledger's view of a capture: key figures, no absolute paths, no PSD.
fn ledger_detail(s: &CaptureSummary, args: &CaptureOptions, repo: &Path) -> CaptureDetail {
    CaptureDetail::Ran(Box::new(CaptureRan {
        asked: asked(args),
        clkin: s.clkin.as_ref().map(|k| CaptureClkin {
            ppm: k.ppm,
            ppm_uncertainty: k.ppm_uncertainty,
            status: k.status,
            tone_hz: k.tone_hz,
        }),
        dropped_samples: s.dropped_samples,
        gaps: s.gaps,
        iq_files: s
            .iq_files
            .iter()
            .map(|f| CaptureFile {
                bytes: f.bytes,
                format: f.format.clone(),
                path: ledger_path(&f.path, repo),
                sha256: f.sha256.clone(),
            })
            .collect(),
        lost_samples: s.lost_samples,
        noise_floor_db: s.noise_floor_db,
        overflows: s.overflows,
        peak: s.peaks.first().map(|p| CapturePeak {
            frequency_hz: p.frequency_hz,
            power_db: p.power_db,
        }),
        samples_requested: s.samples_requested,
        samples_received: s.samples_received,
        status: status_name(s.status),
        stop_reason: s.stop_reason.clone(),
        timeouts: s.timeouts,
    }))
}

#[cfg(test)]
mod tests {
    use super::render::column;
    use super::*;

    fn options() -> CaptureOptions {
        CaptureOptions {
            device: "driver=x".into(),
            frequency_hz: 100e6,
            sample_rate_hz: 2e6,
            duration_s: 1.0,
            gain_db: None,
            antenna: None,
            bandwidth_hz: None,
            clock_source: None,
            clkin: crate::options::ClkinOptions {
                clkin_tone_hz: None,
                clkin_tolerance_ppm: 1.0,
                clkin_expected_dbfs: None,
            },
            fft: crate::options::FftOptions { fft_size: 2048 },
            record: None,
            record_format: None,
            plot: None,
            force: false,
            peaks: crate::options::PeakOptions {
                max_peaks: 8,
                min_snr_db: 6.0,
            },
            apply_cal: false,
            radio: Default::default(),
        }
    }

    /// A refused argument is named by the request's field, not by a flag, and exits 2.
    #[test]
    fn bad_arguments_name_the_field_not_a_flag() {
        let field_of = |o: CaptureOptions| {
            let e = check_args(&o).expect_err("must be refused");
            let b = crate::exit::expect_field_error(&e);
            assert!(!e.to_string().contains("--"), "{e}");
            b.field
        };
        assert!(check_args(&options()).is_ok());
        let o = CaptureOptions {
            sample_rate_hz: 0.0,
            ..options()
        };
        assert_eq!(field_of(o), "sample_rate_hz");
        let mut o = options();
        o.peaks.max_peaks = 0;
        assert_eq!(field_of(o), "max_peaks");
        let mut o = options();
        o.fft.fft_size = 8;
        assert_eq!(field_of(o), "fft_size");
        let o = CaptureOptions {
            device: " ".into(),
            ..options()
        };
        assert_eq!(field_of(o), "device");
        let mut o = options();
        o.clkin.clkin_tolerance_ppm = -1.0;
        assert_eq!(
            check_args(&o).map_err(|e| e.to_string()).unwrap_err(),
            "clkin_tolerance_ppm -1 must be a finite number ≥ 0"
        );
    }

    /// A duration too short for one sample reached the engine and was refused as
    /// "invalid setting samples", naming no flag and no value; now it is
    /// refused before the radio opens (exit 2) by `duration_s` with its value.
    #[test]
    fn a_duration_under_one_sample_is_refused_naming_duration_and_value() {
        let o = CaptureOptions {
            duration_s: 1e-9,
            ..options()
        };
        let e = check_args(&o).expect_err("must be refused");
        assert_eq!(crate::exit::expect_field_error(&e).field, "duration_s");
        assert_eq!(
            e.to_string(),
            "duration_s 0.000000001 at 2000000 samples/s is less than one sample: give at \
             least 0.0000005 s"
        );
        // Half a sample rounds to the one sample the engine asks for.
        let o = CaptureOptions {
            duration_s: 2.5e-7,
            ..options()
        };
        assert!(check_args(&o).is_ok());
        let o = CaptureOptions {
            duration_s: 2.4e-7,
            ..options()
        };
        assert!(check_args(&o).is_err());
    }

    #[test]
    fn ledger_paths_are_never_absolute() {
        let d = tempfile::tempdir().unwrap();
        let inside = d.path().join(".local").join("x.cf32");
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        std::fs::write(&inside, b"").unwrap();
        assert_eq!(ledger_path(&inside, d.path()), ".local/x.cf32");
        let other = tempfile::tempdir().unwrap();
        let outside = other.path().join("y.wav");
        std::fs::write(&outside, b"").unwrap();
        assert_eq!(ledger_path(&outside, d.path()), "y.wav");
    }

    #[test]
    fn the_label_column_is_fourteen_wide() {
        assert_eq!(column(0, "peaks"), "peaks         ");
        assert_eq!(column(0, "files"), "files         ");
        assert_eq!(column(2, "peaks"), "              ");
    }
}
