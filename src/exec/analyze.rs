//! `rxnode analyze FILE`: the capture analysis (Welch PSD, peaks, noise floor, CLKIN) on a
//! recorded IQ file, streamed in blocks so memory stays bounded whatever the file size.
//! The file runs through the same capture engine as a live capture
//! ([`rxnode_dsp::run_capture`] over a [`FileSource`]), so the finish is written once.
use crate::context::Ctx;
use crate::exec::{exists_not_a_file, exists_unless_forced, positive};
use crate::exit::{bad_field, bad_field_text, bad_input, FieldText, Outcome};
use anyhow::{Context, Result};
use rxnode_dsp::{
    freq_cal_estimator, run_capture_with_hook, CaptureSettings, CaptureSummary, ClkinReport,
    ClkinStatus, Datatype, FileSource, FreqCalConfig, FreqCalError, FreqCalEstimator, IqFormat,
    IqInfo, IqReader, PsdTrace, WelchConfig,
};
use rxnode_interlock::FreqCalMethod;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Samples per read.
const BLOCK: usize = 1 << 16;
/// Files with more samples than this get a progress bar (on a terminal, not with `--json`).
const PROGRESS_FROM_SAMPLES: u64 = 1 << 26;

/// One peak of the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeakOut {
    /// Hz; absolute when the centre is known.
    pub frequency_hz: f64,
    /// dBFS (peak bin).
    pub power_db: f64,
    /// dB over the noise floor.
    pub snr_db: f64,
}

/// `analyze --json` output: one channel's analysis, and for a multi-channel
/// recording analysed whole, every channel's in `channels`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnalyzeReport {
    /// The file analysed.
    pub file: String,
    /// Its format.
    pub format: IqFormat,
    /// How its samples are stored (SigMF `core:datatype` names).
    pub datatype: Datatype,
    /// Channels in the recording (SigMF `core:num_channels`; 1 for other formats).
    pub num_channels: u32,
    /// The channel this analysis is of (0-based).
    pub channel: u32,
    /// Complex samples analysed.
    pub samples: u64,
    /// Sample rate used.
    pub sample_rate_hz: f64,
    /// Centre frequency, when known.
    pub center_hz: Option<f64>,
    /// FFT size.
    pub fft_size: usize,
    /// Overlap fraction.
    pub overlap: f64,
    /// Segments averaged.
    pub averages: u64,
    /// Strongest distinct peaks.
    pub peaks: Vec<PeakOut>,
    /// Median bin, dBFS per bin.
    pub noise_floor_db: f64,
    /// Mean sample power, dBFS.
    pub mean_power_dbfs: f64,
    /// Fraction of clipped samples.
    pub clipped_fraction: f64,
    /// The CLKIN check, when `--clkin-tone-hz` is given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clkin: Option<ClkinReport>,
    /// How good the recording's frequency axis is: its SigMF `rxnode:clock` as written
    /// at recording time (`from: "recording"`), else `from: "unknown"` with every field
    /// null (docs/protocol.md#clock).
    pub clock: serde_json::Value,
    /// The radio's frequency error measured from a broadcast carrier in the recording
    /// (`--freq-cal`): the same entry `clkin calibrate --json` prints.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub freq_cal: Option<Value>,
    /// Every channel's analysis (this one first), when a multi-channel recording is
    /// analysed whole; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub channels: Vec<AnalyzeReport>,
}

/// `analyze` options.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// The recording.
    pub file: std::path::PathBuf,
    /// Sample rate (raw formats).
    pub rate: Option<f64>,
    /// Centre frequency, for an absolute axis.
    pub center_hz: Option<f64>,
    /// cf32, cs16, cs8, wav or sigmf (default: from the extension).
    pub format: Option<String>,
    /// FFT size.
    pub fft_size: usize,
    /// Overlap fraction, 0 ≤ F < 1.
    pub overlap: f64,
    /// Reference tone RF frequency for the CLKIN check.
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    pub clkin_tolerance_ppm: f64,
    /// The CLKIN reference tone's expected level (dBFS), to tell it from other
    /// carriers in the search window.
    pub clkin_expected_dbfs: Option<f64>,
    /// Write a spectrum PNG.
    pub plot: Option<std::path::PathBuf>,
    /// Overwrite a `--plot` file that exists (refused otherwise).
    pub force: bool,
    /// Most peaks to list (1..=64).
    pub max_peaks: usize,
    /// A peak's least height above the noise floor, dB.
    pub min_snr_db: f64,
    /// Analyse this channel only (0-based); `None`: every channel.
    pub channel: Option<u32>,
    /// Measure the recording radio's frequency error from a broadcast carrier.
    pub freq_cal: Option<FreqCalMethod>,
    /// The carrier's RF frequency (default: the recording's centre).
    pub carrier_hz: Option<f64>,
    /// Keep a PASS `freq_cal` measurement in `.local/calibration.json` for this radio
    /// (`driver=…,serial=…[,remote=…]`, the store's key); never without it.
    pub store_for_radio: Option<String>,
}

/// What the checked options and the opened file settle for the later phases.
struct Recording {
    /// The file's format, length, clip level and metadata.
    info: IqInfo,
    /// The sample rate used: `--rate`, else the file's.
    rate: f64,
    /// The centre frequency: `--center-hz`, else the file's, else unknown.
    center: Option<f64>,
    /// The `clock` block of the report, from the file's `rxnode:clock` or unknown.
    clock: Value,
}

/// Run `rxnode analyze`: check the options, open the file, then for each channel
/// settle the Welch, CLKIN and frequency-calibration settings, run the engine and
/// build its report; keep a calibration if the operator named the radio; report (and
/// plot the first channel).
pub fn cmd_analyze(ctx: &Ctx, args: &AnalyzeOptions) -> Result<Outcome> {
    let format = check_options(args)?;
    let (reader, rec) = open_recording(args, format, args.channel.unwrap_or(0))?;
    let channels: Vec<u32> = match args.channel {
        Some(c) => vec![c],
        None => (0..rec.info.num_channels).collect(),
    };
    if args.store_for_radio.is_some() && channels.len() > 1 {
        return Err(bad_field_text(
            "store_for_radio",
            FieldText::text(format!(
                "{}: {} channels, each maybe from another radio; choose one with ",
                args.file.display(),
                channels.len()
            ))
            .then_field("channel"),
        ));
    }
    let mut opened = Some((reader, rec));
    let mut reports = Vec::with_capacity(channels.len());
    let mut first_psd = None;
    for &ch in &channels {
        let (reader, rec) = match opened.take() {
            Some(o) => o,
            None => open_recording(args, format, ch)?,
        };
        let (report, psd) = analyze_channel(ctx, args, reader, &rec)?;
        first_psd.get_or_insert(psd);
        reports.push(report);
    }
    let mut report = reports.first().cloned().context("no channel analysed")?;
    if reports.len() > 1 {
        report.channels = reports;
    }
    if let Some(radio) = &args.store_for_radio {
        store_measurement(ctx, args, radio, &mut report)?;
    }
    if let (Some(plot), Some(psd)) = (&args.plot, &first_psd) {
        write_plot(plot, psd, &report)
            .with_context(|| format!("cannot write plot {}", plot.display()))?;
    }
    ctx.report(&report, render_all)?;
    let all = if report.channels.is_empty() {
        std::slice::from_ref(&report)
    } else {
        report.channels.as_slice()
    };
    let failed = all.iter().any(|r| {
        r.clkin
            .as_ref()
            .is_some_and(|c| c.status == ClkinStatus::Fail)
            || r.freq_cal
                .as_ref()
                .is_some_and(|f| f.get("status").and_then(Value::as_str) != Some("PASS"))
    });
    Ok(if failed {
        Outcome::Code(1)
    } else {
        Outcome::Done
    })
}

/// One channel: the engine over it (with the frequency estimator on its hot path
/// when asked), and its report.
fn analyze_channel(
    ctx: &Ctx,
    args: &AnalyzeOptions,
    reader: IqReader,
    rec: &Recording,
) -> Result<(AnalyzeReport, PsdTrace)> {
    let settings = capture_settings(args, rec)?;
    let mut est = freq_cal_setup(args, rec)?;
    let progress = progress_bar(ctx, rec.info.samples);
    let summary = run_file(reader, &settings, progress.as_ref(), est.as_mut())?;
    let freq_cal = est.map(|mut f| {
        let estimate = f.est.finish();
        let judged = crate::exec::freq_cal::judge(f.method, f.carrier_hz, &summary, estimate);
        freq_cal_entry(args, rec, judged.entry)
    });
    let (mut report, psd) = build_report(args, rec, &settings, summary);
    report.freq_cal = freq_cal;
    Ok((report, psd))
}

/// A frequency calibration over a recording: the method, the carrier, the estimator.
struct FreqCalRun {
    method: FreqCalMethod,
    carrier_hz: f64,
    est: Box<dyn FreqCalEstimator>,
}

/// The estimator `--freq-cal` asks for, set up for the recording's centre and rate;
/// the carrier defaults to the centre (as `clkin calibrate` tunes to it).
fn freq_cal_setup(args: &AnalyzeOptions, rec: &Recording) -> Result<Option<FreqCalRun>> {
    let Some(method) = args.freq_cal else {
        return Ok(None);
    };
    let Some(center) = rec.center else {
        return Err(bad_field_text(
            "freq_cal",
            FieldText::text(format!(
                "{}: the recording's centre frequency is unknown; give ",
                args.file.display()
            ))
            .then_field("center_hz"),
        ));
    };
    let carrier = match args.carrier_hz {
        Some(c) if !(c.is_finite() && c > 0.0) => {
            return Err(bad_field(
                "carrier_hz",
                format!(" {c} must be a frequency > 0"),
            ))
        }
        Some(c) => c,
        None => center,
    };
    let cfg = FreqCalConfig::new(carrier, center, rec.rate);
    match freq_cal_estimator(crate::exec::freq_cal::dsp_method(method), cfg) {
        Ok(est) => Ok(Some(FreqCalRun {
            method,
            carrier_hz: carrier,
            est,
        })),
        Err(e @ FreqCalError::Unavailable(_)) => Err(bad_input(e.to_string())),
        Err(e) => Err(bad_field_text(
            "freq_cal",
            FieldText::text(format!("{}: {e}", args.file.display())),
        )),
    }
}

/// The `freq_cal` entry of a recording: as `clkin calibrate` prints it, with the
/// recording in place of the radio, and nothing stored (yet).
fn freq_cal_entry(args: &AnalyzeOptions, rec: &Recording, mut entry: Value) -> Value {
    if let Some(o) = entry.as_object_mut() {
        o.insert(
            "device".into(),
            json!({"recording": args.file.display().to_string(), "channel": rec.info.channel}),
        );
        o.insert(
            "requested".into(),
            json!({"frequency_hz": rec.center, "sample_rate_hz": rec.rate}),
        );
        o.insert(
            "actual".into(),
            json!({"frequency_hz": rec.center, "sample_rate_hz": rec.rate}),
        );
        if o.contains_key("ppm") {
            o.insert("calibration_stored".into(), json!(false));
            o.insert(
                "calibration_note".into(),
                json!("not kept: a recording's radio is not necessarily this node's (docs/operator.md#calibrating-from-a-recording)"),
            );
        }
        o.insert("clock".into(), rec.clock.clone());
    }
    entry
}

/// The checks that need no file: the plot name is free, the format is known, the
/// overlap and FFT size are in range. Gives the format asked for, if any.
fn check_options(args: &AnalyzeOptions) -> Result<Option<IqFormat>> {
    if let Some(p) = args.plot.as_ref().filter(|p| p.exists()) {
        if !args.force {
            return Err(bad_field(
                "plot",
                FieldText::text(": ").then_all(exists_unless_forced(p)),
            ));
        }
        if !p.is_file() {
            return Err(bad_field(
                "plot",
                FieldText::text(": ").then_all(exists_not_a_file(p)),
            ));
        }
    }
    super::check_peaks(args.max_peaks, args.min_snr_db)?;
    if args.freq_cal.is_none() {
        for (field, given) in [
            ("carrier_hz", args.carrier_hz.is_some()),
            ("store_for_radio", args.store_for_radio.is_some()),
        ] {
            if given {
                return Err(bad_field_text(
                    field,
                    FieldText::field(field)
                        .then(" is for a frequency calibration: give ")
                        .then_field("freq_cal"),
                ));
            }
        }
    }
    let format = match &args.format {
        Some(f) => Some(IqFormat::parse(f).map_err(|e| bad_field("format", format!(": {e}")))?),
        None => None,
    };
    if !(args.overlap.is_finite() && (0.0..1.0).contains(&args.overlap)) {
        return Err(bad_field(
            "overlap",
            format!(" {} must be in [0, 1)", args.overlap),
        ));
    }
    if !rxnode_interlock::fft_size_ok(args.fft_size) {
        return Err(bad_field(
            "fft_size",
            format!(" {} must be in 16..=1048576", args.fft_size),
        ));
    }
    Ok(format)
}

/// Open one channel of the file and settle its rate and centre: the file's own
/// where it has them (an option that disagrees is refused, naming both), else the
/// options; the file must hold at least one FFT.
fn open_recording(
    args: &AnalyzeOptions,
    format: Option<IqFormat>,
    channel: u32,
) -> Result<(IqReader, Recording)> {
    let reader = IqReader::open_channel(&args.file, format, channel)
        .map_err(|e| bad_input(e.to_string()))?;
    let info = reader.info().clone();
    let rate = match settled(&info, "rate", args.rate, info.sample_rate_hz)? {
        Some(r) => positive("rate", r)?,
        None => {
            return Err(bad_field_text(
                "rate",
                FieldText::text(match info.format {
                    IqFormat::Sigmf => format!(
                        "{}: the SigMF meta has no core:sample_rate; give ",
                        args.file.display()
                    ),
                    f => format!(
                        "{}: a raw {} file carries no sample rate; give ",
                        args.file.display(),
                        f.name()
                    ),
                })
                .then_field("rate")
                .then(" HZ"),
            ))
        }
    };
    if let Some(c) = args.center_hz.filter(|c| !c.is_finite()) {
        return Err(bad_field("center_hz", format!(" {c} is not finite")));
    }
    let center = settled(&info, "center_hz", args.center_hz, info.center_hz)?;
    let clock = recorded_clock(&info)?;
    if info.samples < args.fft_size as u64 {
        return Err(bad_field_text(
            "fft_size",
            FieldText::text(format!(
                "{}: {} samples, fewer than ",
                args.file.display(),
                info.samples
            ))
            .then_field("fft_size")
            .then(format!(" {}", args.fft_size)),
        ));
    }
    Ok((
        reader,
        Recording {
            info,
            rate,
            center,
            clock,
        },
    ))
}

/// A value the file may state and an option may give: the file's when it has one
/// (an option that disagrees by more than 1 part in 10⁹ is refused, naming both),
/// else the option's.
fn settled(
    info: &IqInfo,
    field: &'static str,
    given: Option<f64>,
    own: Option<f64>,
) -> Result<Option<f64>> {
    match (given, own) {
        (Some(g), Some(o)) if (g - o).abs() > 1e-9 * o.abs().max(1.0) => {
            let whose = match info.format {
                IqFormat::Wav => "WAV header",
                _ => "SigMF meta",
            };
            let what = if field == "rate" {
                "core:sample_rate"
            } else {
                "core:frequency"
            };
            let place = info.meta_path.as_ref().unwrap_or(&info.data_path);
            Err(bad_field_text(
                field,
                FieldText::field(field)
                    .then(format!(
                        " {g} disagrees with the recording's own {o} ({what} of its {whose}, {}): \
                     the file's value is used; leave ",
                        place.display()
                    ))
                    .then_field(field)
                    .then(" out"),
            ))
        }
        (_, Some(o)) => Ok(Some(o)),
        (g, None) => Ok(g),
    }
}

/// The report's `clock` block: the recording's SigMF `rxnode:clock`, checked field by
/// field and kept as written (its `age_s` and `stale` are as of the recording), or
/// — when the file carries none — `from: "unknown"` with every field null: a
/// recording's calibration is never taken from this node's own records, since the
/// file may come from another radio or another day.
fn recorded_clock(info: &IqInfo) -> Result<Value> {
    let Some(c) = &info.clock else {
        let what = match info.format {
            IqFormat::Sigmf => "its SigMF meta has no rxnode:clock",
            _ => "the format carries no clock metadata",
        };
        return Ok(json!({
            "from": "unknown",
            "detail": format!("{what}: the recording radio's clock source and frequency calibration are unknown"),
            "source": null,
            "radio": null,
            "last_measurement": null,
            "ppm_correction_applied": null,
        }));
    };
    let meta = info
        .meta_path
        .clone()
        .unwrap_or_else(|| info.data_path.clone());
    let bad = |field: &str, v: &Value, want: &str| {
        bad_input(format!(
            "{}: rxnode:clock{field} {v} must be {want}",
            meta.display()
        ))
    };
    let Some(o) = c.as_object() else {
        return Err(bad("", c, "an object"));
    };
    let text_or_null = |k: &str| -> Result<Value> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(Value::Null),
            Some(v @ Value::String(_)) => Ok(v.clone()),
            Some(v) => Err(bad(&format!(".{k}"), v, "a string or null")),
        }
    };
    let finite = |v: &Value| v.as_f64().is_some_and(f64::is_finite);
    let applied = match o.get("ppm_correction_applied") {
        None | Some(Value::Null) => Value::Null,
        Some(v) if finite(v) => v.clone(),
        Some(v) => {
            return Err(bad(
                ".ppm_correction_applied",
                v,
                "a finite number of ppm or null",
            ))
        }
    };
    let last = match o.get("last_measurement") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Object(m)) => {
            let field = |k: &str| format!(".last_measurement.{k}");
            for k in ["ppm", "uncertainty_ppm"] {
                let v = m.get(k).unwrap_or(&Value::Null);
                if !finite(v) || (k == "uncertainty_ppm" && v.as_f64() < Some(0.0)) {
                    return Err(bad(&field(k), v, "a finite number of ppm"));
                }
            }
            for k in ["method", "reference", "time"] {
                let v = m.get(k).unwrap_or(&Value::Null);
                if !v.is_string() {
                    return Err(bad(&field(k), v, "a string"));
                }
            }
            Value::Object(m.clone())
        }
        Some(v) => {
            return Err(bad(
                ".last_measurement",
                v,
                "an object (ppm, uncertainty_ppm, method, reference, time) or null",
            ))
        }
    };
    Ok(json!({
        "from": "recording",
        "detail": format!("{}: rxnode:clock, as written when it was recorded", meta.display()),
        "source": text_or_null("source")?,
        "radio": text_or_null("radio")?,
        "last_measurement": last,
        "ppm_correction_applied": applied,
    }))
}

/// The engine's settings for the whole file: Welch over it, the CLKIN check if
/// asked (it needs the centre), the whole PSD kept for the plot.
fn capture_settings(args: &AnalyzeOptions, rec: &Recording) -> Result<CaptureSettings> {
    let mut wcfg = WelchConfig::new(args.fft_size, rec.rate);
    wcfg.overlap = args.overlap;
    wcfg.max_peaks = args.max_peaks;
    wcfg.min_snr_db = args.min_snr_db;
    wcfg.center_hz = rec.center;
    wcfg.clip_level = rec.info.clip_level;
    let clkin = match args.clkin_tone_hz {
        None => None,
        Some(tone) => {
            let Some(c) = rec.center else {
                return Err(bad_field(
                    "clkin_tone_hz",
                    FieldText::text(" needs the centre frequency: give ")
                        .then_field("center_hz")
                        .then(" (or use SigMF)"),
                ));
            };
            if let Some(l) = args
                .clkin_expected_dbfs
                .filter(|l| !(l.is_finite() && *l <= 0.0))
            {
                return Err(bad_field(
                    "clkin_expected_dbfs",
                    format!(" {l} must be a finite level ≤ 0 dBFS"),
                ));
            }
            if !(args.clkin_tolerance_ppm.is_finite() && args.clkin_tolerance_ppm >= 0.0) {
                return Err(bad_field(
                    "clkin_tolerance_ppm",
                    format!(" {} must be ≥ 0", args.clkin_tolerance_ppm),
                ));
            }
            Some(crate::exec::live::clkin_config(
                &rxnode_interlock::ClkinSpec {
                    tone_hz: tone,
                    tolerance_ppm: args.clkin_tolerance_ppm,
                    expected_dbfs: args.clkin_expected_dbfs,
                    expected_tolerance_db: None,
                },
                c,
                rec.rate,
            ))
        }
    };
    let mut settings = CaptureSettings::new(rec.info.samples, wcfg);
    settings.block_samples = BLOCK;
    settings.pool_blocks = 4;
    // A recording carries no driver evidence (the default): the CLKIN verdict rests
    // on the measurement.
    settings.clkin = clkin;
    // The whole PSD, for the plot.
    settings.psd_points = args.fft_size;
    Ok(settings)
}

/// A progress bar for a long file on a terminal (never with `--json`).
fn progress_bar(ctx: &Ctx, samples: u64) -> Option<indicatif::ProgressBar> {
    (!ctx.json
        && samples > PROGRESS_FROM_SAMPLES
        && std::io::IsTerminal::is_terminal(&std::io::stderr()))
    .then(|| {
        let bar = indicatif::ProgressBar::new(samples);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} analyze [{bar:40}] {percent:>3}% {elapsed}/{duration}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}

/// The report of the engine's summary (and the PSD for the plot).
fn build_report(
    args: &AnalyzeOptions,
    rec: &Recording,
    settings: &CaptureSettings,
    summary: CaptureSummary,
) -> (AnalyzeReport, PsdTrace) {
    let psd = summary.psd.clone().unwrap_or(PsdTrace {
        start_hz: 0.0,
        step_hz: 0.0,
        db: Vec::new(),
    });
    let report = AnalyzeReport {
        file: args.file.display().to_string(),
        format: rec.info.format,
        datatype: rec.info.datatype,
        num_channels: rec.info.num_channels,
        channel: rec.info.channel,
        samples: summary.samples_processed,
        sample_rate_hz: rec.rate,
        center_hz: rec.center,
        fft_size: summary.fft_size,
        overlap: settings.welch.overlap,
        averages: summary.averages,
        peaks: summary
            .peaks
            .iter()
            .map(|p| PeakOut {
                frequency_hz: p.frequency_hz,
                power_db: p.power_db,
                snr_db: p.snr_db,
            })
            .collect(),
        // Not finite only with no Welch segment, where the spectrum says −inf.
        noise_floor_db: summary.noise_floor_db.unwrap_or(f64::NEG_INFINITY),
        mean_power_dbfs: summary.mean_power_dbfs.unwrap_or(-300.0),
        clipped_fraction: summary.clipped_fraction,
        clkin: summary.clkin,
        clock: rec.clock.clone(),
        freq_cal: None,
        channels: Vec::new(),
    };
    (report, psd)
}

/// Run the capture engine over the whole file (its reader thread converts blocks
/// while this thread runs the DSP and, if any, the frequency estimator); the bar, if
/// any, follows the samples read. A read error of the file is bad input.
fn run_file(
    reader: IqReader,
    settings: &CaptureSettings,
    bar: Option<&indicatif::ProgressBar>,
    est: Option<&mut FreqCalRun>,
) -> Result<CaptureSummary> {
    let mut source = FileSource::new(reader);
    let summary = run_with_bar(&mut source, settings, bar, est.map(|f| &mut f.est))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = source.error() {
        return Err(bad_input(e.to_owned()));
    }
    Ok(summary)
}

/// The engine with a thread that moves the bar, if any, and the estimator fed each
/// block on the DSP thread.
fn run_with_bar(
    source: &mut FileSource,
    settings: &CaptureSettings,
    bar: Option<&indicatif::ProgressBar>,
    mut est: Option<&mut Box<dyn FreqCalEstimator>>,
) -> Result<CaptureSummary> {
    let never = AtomicBool::new(false);
    let read = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let mut hook = |block: &[num_complex::Complex<f32>]| {
        if let Some(e) = est.as_mut() {
            e.feed(block);
        }
    };
    std::thread::scope(|s| {
        if let Some(bar) = bar {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    bar.set_position(read.load(Ordering::Relaxed));
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            });
        }
        let r = run_capture_with_hook(source, settings, &never, Some(&read), None, &mut hook);
        done.store(true, Ordering::Relaxed);
        r
    })
    .map_err(|e| bad_input(e.to_string()))
}

/// Keep the `freq_cal` measurement for the radio the operator named (`driver=…,
/// serial=…[,remote=…]`, the key of `.local/calibration.json`): only a PASS, only in
/// a checkout, and never from a recording whose tuning was already corrected (its
/// error would be the residual, not the radio's).
fn store_measurement(
    ctx: &Ctx,
    args: &AnalyzeOptions,
    radio: &str,
    report: &mut AnalyzeReport,
) -> Result<()> {
    let refuse = |why: String| {
        bad_field_text(
            "store_for_radio",
            FieldText::field("store_for_radio").then(format!(" {radio:?}: {why}")),
        )
    };
    let mut driver = None;
    let mut serial = None;
    let mut remote = None;
    for part in radio.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| refuse(format!("{part:?} is not KEY=VALUE")))?;
        let v = v.trim();
        if v.is_empty() || v.chars().any(char::is_control) {
            return Err(refuse(format!("{k} has no usable value")));
        }
        match k.trim() {
            "driver" => driver = Some(v),
            "serial" => serial = Some(v),
            "remote" => remote = Some(v),
            other => {
                return Err(refuse(format!(
                    "unknown key {other:?} (driver, serial, remote)"
                )))
            }
        }
    }
    let (Some(driver), Some(serial)) = (driver, serial) else {
        return Err(refuse(
            "name the radio as driver=DRIVER,serial=SERIAL[,remote=HOST] (as `rxnode inventory` lists it)"
                .to_owned(),
        ));
    };
    if !crate::exec::capture::in_checkout(&ctx.repo) {
        return Err(refuse(
            "not run in an rxnode checkout: nowhere to keep it".to_owned(),
        ));
    }
    if let Some(p) = report
        .clock
        .get("ppm_correction_applied")
        .and_then(Value::as_f64)
        .filter(|p| *p != 0.0)
    {
        return Err(refuse(format!(
            "the recording was tuned with a {p:+} ppm correction: its error is the residual, not the radio's"
        )));
    }
    let Some(entry) = report.freq_cal.as_mut() else {
        return Ok(());
    };
    let num = |k: &str| entry.get(k).and_then(Value::as_f64);
    let (Some(ppm), Some(unc), Some("PASS")) = (
        num("ppm"),
        num("uncertainty_ppm"),
        entry.get("status").and_then(Value::as_str),
    ) else {
        return Ok(());
    };
    let method = args.freq_cal.map_or("", |m| m.as_str());
    let meas = crate::store::calibration::Measurement {
        ppm,
        uncertainty_ppm: unc,
        method: method.to_owned(),
        reference: format!(
            "{} {} (recording {})",
            method.to_uppercase(),
            entry
                .get("cell")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            args.file.display()
        ),
        confidence: num("confidence").unwrap_or(0.0),
        time: crate::store::fsutil::now_iso(),
        task_id: None,
    };
    let paths = ctx.paths();
    let r = crate::store::calibration::Radio {
        driver,
        serial,
        remote,
    };
    let stored = crate::store::calibration::record(&paths, r, meas)?;
    if let Some(o) = entry.as_object_mut() {
        o.insert("calibration_stored".into(), json!(stored));
        o.remove("calibration_note");
        o.insert(
            "stored_for".into(),
            json!({"driver": driver, "serial": serial, "remote": remote}),
        );
    }
    let mut detail = entry.clone();
    if let Some(d) = detail.as_object_mut() {
        d.remove("detections");
        d.insert("command".into(), json!("analyze"));
    }
    crate::exec::ledger_note(
        &paths,
        &crate::store::ledger::Entry::new("freq_cal").detail(detail),
    );
    Ok(())
}

/// Every channel's analysis for a person, one after the other.
fn render_all(r: &AnalyzeReport) -> String {
    if r.channels.is_empty() {
        return render_human(r);
    }
    let mut out = String::new();
    for c in &r.channels {
        let _ = writeln!(out, "── channel {} of {} ──", c.channel, c.num_channels);
        out.push_str(&render_human(c));
    }
    out
}

/// The analysis for a person, as text: the file, the Welch levels, the peaks, the clock.
fn render_human(r: &AnalyzeReport) -> String {
    let mut out = String::new();
    let mhz = |hz: f64| format!("{:.6} MHz", hz / 1e6);
    // Without a centre the peaks are baseband offsets: kHz with a sign.
    let freq = |hz: f64| match r.center_hz {
        Some(_) => mhz(hz),
        None => format!("{:+.3} kHz", hz / 1e3),
    };
    let _ = writeln!(
        out,
        "file          {} ({}, {}{})",
        r.file,
        r.format.name(),
        r.datatype.sigmf_name(),
        if r.num_channels > 1 {
            format!(", channel {} of {}", r.channel, r.num_channels)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "samples       {} at {} ({:.3} s)",
        r.samples,
        rxnode_interlock::fmt_rate(r.sample_rate_hz),
        r.samples as f64 / r.sample_rate_hz
    );
    let _ = match r.center_hz {
        Some(c) => writeln!(out, "centre        {}", mhz(c)),
        None => writeln!(
            out,
            "centre        unknown (peaks are offsets from the centre)"
        ),
    };
    let _ = writeln!(
        out,
        "welch         FFT {}, overlap {} %, {} averages",
        r.fft_size,
        crate::result::plot::trim_number(r.overlap * 100.0, 1),
        r.averages
    );
    let _ = writeln!(out, "noise floor   {:.1} dBFS/bin", r.noise_floor_db);
    let _ = writeln!(out, "mean power    {:.1} dBFS", r.mean_power_dbfs);
    let _ = writeln!(out, "clipped       {:.4} %", r.clipped_fraction * 100.0);
    if r.peaks.is_empty() {
        let _ = writeln!(out, "peaks         none");
    }
    for (i, p) in r.peaks.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}{}  {:7.1} dBFS  SNR {:5.1} dB",
            if i == 0 {
                "peaks         "
            } else {
                "              "
            },
            freq(p.frequency_hz),
            p.power_db,
            p.snr_db
        );
    }
    let _ = writeln!(out, "clock         {}", clock_line(&r.clock));
    if let Some(c) = &r.clkin {
        let status = match c.status {
            ClkinStatus::Pass => "PASS",
            ClkinStatus::Fail => "FAIL",
            ClkinStatus::NotMeasured => "NOT MEASURED",
        };
        let _ = writeln!(out, "CLKIN         {status}: {}", c.detail);
        if let (Some(m), Some(p), Some(u)) = (c.measured_hz, c.ppm, c.ppm_uncertainty) {
            let _ = writeln!(
                out,
                "              tone {} measured {} → {} (1σ)",
                mhz(c.tone_hz),
                mhz(m),
                rxnode_dsp::fmt_uncertain(p, u, "ppm")
            );
        }
        for e in c
            .evidence
            .iter()
            .filter(|e| e.name.starts_with("other carrier"))
        {
            let _ = writeln!(out, "              {}: {}", e.name, e.value);
        }
    }
    if let Some(f) = &r.freq_cal {
        let text = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default();
        let _ = writeln!(out, "freq cal      {}: {}", text("status"), text("detail"));
        if let Some(n) = f.get("calibration_note").and_then(Value::as_str) {
            let _ = writeln!(out, "              calibration {n}");
        } else if f.get("calibration_stored") == Some(&json!(true)) {
            let _ = writeln!(
                out,
                "              kept in .local/calibration.json for the radio named"
            );
        }
    }
    out
}

/// The human line of the `clock` block.
fn clock_line(c: &Value) -> String {
    let text = |k: &str| c.get(k).and_then(Value::as_str);
    if text("from") != Some("recording") {
        return format!("unknown ({})", text("detail").unwrap_or_default());
    }
    let mut s = format!(
        "from the recording: source {}",
        text("source").unwrap_or("not recorded")
    );
    match c.get("last_measurement").filter(|m| m.is_object()) {
        Some(m) => {
            let f = |k: &str| m.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let t = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or_default();
            s.push_str(&format!(
                "; last calibration {} ({}, {}, {})",
                rxnode_dsp::fmt_uncertain(f("ppm"), f("uncertainty_ppm"), "ppm"),
                t("method"),
                t("reference"),
                t("time")
            ));
        }
        None => s.push_str("; no calibration recorded"),
    }
    match c.get("ppm_correction_applied").and_then(Value::as_f64) {
        Some(p) => s.push_str(&format!("; tuning corrected by {p:+} ppm")),
        None => s.push_str("; no correction applied"),
    }
    s
}

/// Spectrum PNG with axes, title, labelled peaks, noise floor and CLKIN markers
/// (`crate::result::plot`).
fn write_plot(path: &std::path::Path, psd: &PsdTrace, r: &AnalyzeReport) -> Result<()> {
    let name = std::path::Path::new(&r.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.file.clone());
    let title = format!(
        "{name} · {} · {:.3} MS/s · fft {} · {} averages",
        r.center_hz
            .map(|c| format!("centre {:.6} MHz", c / 1e6))
            .unwrap_or_else(|| "baseband (centre unknown)".into()),
        r.sample_rate_hz / 1e6,
        r.fft_size,
        r.averages
    );
    let peaks = r
        .peaks
        .iter()
        .map(|p| (p.frequency_hz, p.power_db))
        .collect();
    crate::result::plot::write_spectrum(
        path,
        &crate::result::plot::live_spectrum(
            title,
            psd,
            peaks,
            Some(r.noise_floor_db),
            r.clkin.as_ref(),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> AnalyzeOptions {
        AnalyzeOptions {
            file: "x.cf32".into(),
            rate: None,
            center_hz: None,
            format: None,
            fft_size: 2048,
            overlap: 0.5,
            clkin_tone_hz: None,
            clkin_tolerance_ppm: 0.5,
            clkin_expected_dbfs: None,
            plot: None,
            force: false,
            max_peaks: 8,
            min_snr_db: 6.0,
            channel: None,
            freq_cal: None,
            carrier_hz: None,
            store_for_radio: None,
        }
    }

    /// A refused option is named by the request's field (exit 2), never by a flag;
    /// a second field in the message is named as a field too.
    #[test]
    fn bad_options_name_the_fields_not_flags() {
        assert!(check_options(&options()).is_ok());
        let refusal = |o: AnalyzeOptions| {
            let e = check_options(&o).expect_err("must be refused");
            let b = crate::exit::expect_field_error(&e);
            (
                b.field,
                b.message.fields().collect::<Vec<_>>(),
                e.to_string(),
            )
        };
        let (field, _, text) = refusal(AnalyzeOptions {
            max_peaks: 0,
            ..options()
        });
        assert_eq!(field, "max_peaks");
        assert_eq!(text, "max_peaks 0 must be in 1..=64");
        let (field, _, text) = refusal(AnalyzeOptions {
            overlap: 1.0,
            ..options()
        });
        assert_eq!(field, "overlap");
        assert_eq!(text, "overlap 1 must be in [0, 1)");
        let dir = tempfile::tempdir().expect("tempdir");
        let plot = dir.path().join("a.png");
        std::fs::write(&plot, b"").expect("write");
        let (field, fields, text) = refusal(AnalyzeOptions {
            plot: Some(plot.clone()),
            ..options()
        });
        assert_eq!(field, "plot");
        assert_eq!(fields, ["plot", "force"]);
        assert_eq!(
            text,
            format!(
                "plot: {} already exists; choose another name, or force to overwrite it",
                plot.display()
            )
        );
    }
}
