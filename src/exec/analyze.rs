//! `rxnode analyze FILE`: the capture analysis (Welch PSD, peaks, noise floor, CLKIN) on a
//! recorded IQ file, streamed in blocks so memory stays bounded whatever the file size.
//! The file runs through the same capture engine as a live capture
//! ([`rxnode_dsp::run_capture`] over a [`FileSource`]), so the finish is written once.
use crate::context::Ctx;
use crate::exec::{exists_not_a_file, exists_unless_forced, positive};
use crate::exit::{bad_field, bad_field_text, bad_input, FieldText, Outcome};
use anyhow::{Context, Result};
use rxnode_dsp::{
    run_capture, CaptureSettings, CaptureSummary, ClkinReport, ClkinStatus, FileSource, IqFormat,
    IqInfo, IqReader, PsdTrace, WelchConfig,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Samples per read.
const BLOCK: usize = 1 << 16;
/// Files with more samples than this get a progress bar (on a terminal, not with `--json`).
const PROGRESS_FROM_SAMPLES: u64 = 1 << 26;

/// One peak of the report.
#[derive(Debug, Serialize, Deserialize)]
pub struct PeakOut {
    /// Hz; absolute when the centre is known.
    pub frequency_hz: f64,
    /// dBFS (peak bin).
    pub power_db: f64,
    /// dB over the noise floor.
    pub snr_db: f64,
}

/// `analyze --json` output.
#[derive(Debug, Serialize, Deserialize)]
pub struct AnalyzeReport {
    /// The file analysed.
    pub file: String,
    /// Its format.
    pub format: IqFormat,
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

/// Run `rxnode analyze`: check the options, open the file, settle the Welch and CLKIN
/// settings, run the engine, then report (and plot).
pub fn cmd_analyze(ctx: &Ctx, args: &AnalyzeOptions) -> Result<Outcome> {
    let format = check_options(args)?;
    let (reader, rec) = open_recording(args, format)?;
    let settings = capture_settings(args, &rec)?;
    let progress = progress_bar(ctx, rec.info.samples);
    let summary = run_file(reader, &settings, progress.as_ref())?;
    let (report, psd) = build_report(args, &rec, &settings, summary);
    if let Some(plot) = &args.plot {
        write_plot(plot, &psd, &report)
            .with_context(|| format!("cannot write plot {}", plot.display()))?;
    }
    ctx.report(&report, render_human)?;
    let failed = report
        .clkin
        .as_ref()
        .is_some_and(|c| c.status == ClkinStatus::Fail);
    Ok(if failed {
        Outcome::Code(1)
    } else {
        Outcome::Done
    })
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

/// Open the file and settle its rate and centre (the options over the file's own);
/// the file must hold at least one FFT.
fn open_recording(
    args: &AnalyzeOptions,
    format: Option<IqFormat>,
) -> Result<(IqReader, Recording)> {
    let reader = IqReader::open(&args.file, format).map_err(|e| bad_input(e.to_string()))?;
    let info = reader.info().clone();
    let rate = match (args.rate, info.sample_rate_hz) {
        (Some(r), _) => positive("rate", r)?,
        (None, Some(r)) => r,
        (None, None) => {
            return Err(bad_field_text(
                "rate",
                FieldText::text(format!(
                    "{}: a raw {} file carries no sample rate; give ",
                    args.file.display(),
                    info.format.name()
                ))
                .then_field("rate")
                .then(" HZ"),
            ))
        }
    };
    let center = match args.center_hz {
        Some(c) if !c.is_finite() => {
            return Err(bad_field("center_hz", format!(" {c} is not finite")))
        }
        Some(c) => Some(c),
        None => info.center_hz,
    };
    let clock = recorded_clock(&args.file, &info)?;
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

/// The report's `clock` block: the recording's SigMF `rxnode:clock`, checked field by
/// field and kept as written (its `age_s` and `stale` are as of the recording), or
/// — when the file carries none — `from: "unknown"` with every field null: a
/// recording's calibration is never taken from this node's own records, since the
/// file may come from another radio or another day.
fn recorded_clock(file: &std::path::Path, info: &IqInfo) -> Result<Value> {
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
    let meta = file.with_extension("sigmf-meta");
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
    };
    (report, psd)
}

/// Run the capture engine over the whole file (its reader thread converts blocks
/// while this thread runs the DSP); the bar, if any, follows the samples read. A
/// read error of the file is bad input.
fn run_file(
    reader: IqReader,
    settings: &CaptureSettings,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<CaptureSummary> {
    let mut source = FileSource::new(reader);
    let summary = run_with_bar(&mut source, settings, bar)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = source.error() {
        return Err(bad_input(e.to_owned()));
    }
    Ok(summary)
}

/// The engine with a thread that moves the bar, if any.
fn run_with_bar(
    source: &mut FileSource,
    settings: &CaptureSettings,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<CaptureSummary> {
    let never = AtomicBool::new(false);
    let read = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        if let Some(bar) = bar {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    bar.set_position(read.load(Ordering::Relaxed));
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            });
        }
        let r = run_capture(source, settings, &never, Some(&read), None);
        done.store(true, Ordering::Relaxed);
        r
    })
    .map_err(|e| bad_input(e.to_string()))
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
    let _ = writeln!(out, "file          {} ({})", r.file, r.format.name());
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
