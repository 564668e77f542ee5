//! `rxnode capture`: one bounded, receive-only capture for the operator at the laptop
//! Never transmits: it only ever opens an RX stream through
//! [`crate::exec::live::capture`]. Bounded by the node-local policy (docs/safety.md); a refusal
//! names the limit and exits 3. Ctrl-C stops the capture and writes what was captured
//! (status PARTIAL). Inside a checkout the capture is written to the ledger.
use crate::context::Ctx;
use crate::exec::live::{relative_to, LiveCapture, NotCaptured};
use crate::exit::{bad_input, refused, Outcome};
use crate::store::ledger::Entry;
use crate::store::paths::Paths;
use crate::store::policy::Source;
use anyhow::Result;
use rxnode_dsp::{CaptureStatus, CaptureSummary, ClkinReport, IqFormat, RecordFormat};
use rxnode_interlock::{check_rx_step, IqSampleFormat, RxCaptureStep};
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

fn positive(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(bad_input(format!("{name} {v} must be a finite number > 0")))
    }
}

/// Check the arguments themselves (exit 2), before policy and hardware.
fn check_args(args: &CaptureOptions) -> Result<()> {
    if args.device.trim().is_empty() {
        return Err(bad_input("--device must not be empty (e.g. driver=hackrf)"));
    }
    positive("--frequency-hz", args.frequency_hz)?;
    positive("--sample-rate-hz", args.sample_rate_hz)?;
    positive("--duration-s", args.duration_s)?;
    if let Some(g) = args.gain_db {
        if !g.is_finite() {
            return Err(bad_input(format!("--gain-db {g} is not finite")));
        }
    }
    if let Some(t) = args.clkin_tone_hz {
        positive("--clkin-tone-hz", t)?;
    }
    if let Some(l) = args
        .clkin_expected_dbfs
        .filter(|l| !(l.is_finite() && *l <= 0.0))
    {
        return Err(bad_input(format!(
            "--clkin-expected-dbfs {l} must be a finite level ≤ 0 dBFS"
        )));
    }
    if !(args.clkin_tolerance_ppm.is_finite() && args.clkin_tolerance_ppm >= 0.0) {
        return Err(bad_input(format!(
            "--clkin-tolerance-ppm {} must be a finite number ≥ 0",
            args.clkin_tolerance_ppm
        )));
    }
    if !rxnode_interlock::fft_size_ok(args.fft_size) {
        return Err(bad_input(format!(
            "--fft-size {} must be in 16..=1048576",
            args.fft_size
        )));
    }
    if let Some(s) = &args.clock_source {
        if s.trim().is_empty() {
            return Err(bad_input("--clock-source must not be empty"));
        }
    }
    let record_format = record_format(args)?;
    if let Some(p) = &args.record {
        let fmt = IqFormat::from_path(p).map_err(|e| bad_input(format!("--record: {e}")))?;
        let fits = match record_format {
            RecordFormat::Cf32 => matches!(fmt, IqFormat::Cf32 | IqFormat::Wav | IqFormat::Sigmf),
            RecordFormat::Ci16 => matches!(fmt, IqFormat::Cs16 | IqFormat::Sigmf),
        };
        if !fits {
            return Err(bad_input(match record_format {
                RecordFormat::Cf32 => format!(
                    "--record {}: recordings are .cf32, .wav, .sigmf-data or .sigmf-meta (.cs16 with --record-format ci16)",
                    p.display()
                ),
                RecordFormat::Ci16 => format!(
                    "--record {}: --record-format ci16 records .sigmf-data, .sigmf-meta or .cs16",
                    p.display()
                ),
            }));
        }
        // Never overwrite a recording.
        let targets = if fmt == IqFormat::Sigmf {
            vec![
                p.with_extension("sigmf-data"),
                p.with_extension("sigmf-meta"),
            ]
        } else {
            vec![p.clone()]
        };
        if let Some(t) = targets.iter().find(|t| t.exists()) {
            return Err(bad_input(format!(
                "--record: {} already exists; choose another name (recordings are never overwritten)",
                t.display()
            )));
        }
    }
    Ok(())
}

/// `--record-format`, default cf32.
fn record_format(args: &CaptureOptions) -> Result<RecordFormat> {
    match &args.record_format {
        None => Ok(RecordFormat::Cf32),
        Some(s) => RecordFormat::parse(s)
            .map_err(|_| bad_input(format!("--record-format {s:?}: expected cf32 or ci16"))),
    }
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
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// SoapySDR device args.
    pub device: String,
    /// Centre frequency.
    pub frequency_hz: f64,
    /// Sample rate.
    pub sample_rate_hz: f64,
    /// Capture length.
    pub duration_s: f64,
    /// RX gain.
    pub gain_db: Option<f64>,
    /// Clock source to select.
    pub clock_source: Option<String>,
    /// Reference tone RF frequency for the CLKIN check.
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    pub clkin_tolerance_ppm: f64,
    /// The CLKIN reference tone's expected level (dBFS), to tell it from other
    /// carriers in the search window.
    pub clkin_expected_dbfs: Option<f64>,
    /// FFT size.
    pub fft_size: usize,
    /// Record IQ: `.cf32`, `.wav`, `.sigmf-data` or `.sigmf-meta` (`.cs16` with
    /// `--record-format ci16`).
    pub record: Option<std::path::PathBuf>,
    /// Sample type of the recording: `cf32` (default) or `ci16`, the radio's native
    /// CS16 as it came (SigMF `ci16_le`, half the bytes; for full rate).
    pub record_format: Option<String>,
    /// Tune with the radio's fresh frequency calibration (`.local/calibration.json`);
    /// a missing or stale one refuses the capture.
    pub apply_cal: bool,
}

/// Run `rxnode capture`.
pub fn cmd_capture(ctx: &Ctx, args: &CaptureOptions) -> Result<Outcome> {
    check_args(args)?;
    let paths = ctx.paths();
    let ledger_on = in_checkout(&ctx.repo);
    let (policy, source) = crate::store::policy::load(&paths)?;
    // Raw IQ never where Git can see it (after `.local/` was excluded).
    if let Some(p) = &args.record {
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
            Entry::new("refused").detail(json!({"command": "capture", "reason": reason})),
        );
        refused(reason)
    };
    if let Err(e) = check_rx_step(&step_of(args), &policy.rx) {
        return Err(refuse(e.to_string()));
    }
    let cancel = crate::signals::cancel_flag("the capture");
    let calibration = crate::exec::live::CalibrationUse {
        paths: paths.clone(),
        max_age_s: policy.rx.calibration_max_age_s,
        apply: args.apply_cal,
    };
    let live = live_of(args, policy.rx.max_iq_bytes, calibration)?;
    // No checkout rewrite: `iq_files` paths stay as the operator gave them.
    let summary = match crate::exec::live::capture(&live, None, cancel, !ctx.json) {
        Ok(s) => s,
        // The live layer checks the device's own limits (the default policy bound).
        Err(NotCaptured::OverLimit(why)) => return Err(refuse(why)),
        Err(NotCaptured::Blocked(why)) | Err(NotCaptured::Failed(why)) => {
            log(
                &paths,
                ledger_on,
                Entry::new("capture").detail(json!({
                    "device": args.device,
                    "frequency_hz": args.frequency_hz,
                    "sample_rate_hz": args.sample_rate_hz,
                    "duration_s": args.duration_s,
                    "status": "FAIL",
                    "error": why,
                })),
            );
            return Err(anyhow::anyhow!("capture on {}: {why}", args.device));
        }
    };
    log(
        &paths,
        ledger_on,
        Entry::new("capture").detail(ledger_detail(&summary, args, &ctx.repo)),
    );
    let text = if ctx.json {
        format!("{}\n", serde_json::to_string_pretty(&summary)?)
    } else {
        render(&summary, args)
    };
    // A closed pipe (`| head`) is not an error of the capture.
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    Ok(match summary.status {
        CaptureStatus::Pass => Outcome::Done,
        CaptureStatus::Partial | CaptureStatus::Fail => Outcome::Code(1),
    })
}

/// The capture as a plan step, for the policy's check.
fn step_of(args: &CaptureOptions) -> RxCaptureStep {
    RxCaptureStep {
        device: args.device.clone(),
        frequency_hz: args.frequency_hz,
        sample_rate_hz: args.sample_rate_hz,
        gain_db: args.gain_db.map(rxnode_interlock::GainSpec::Total),
        duration_s: args.duration_s,
        fft_size: Some(args.fft_size),
        record_iq: args.record.is_some(),
        record_format: args.record.as_ref().map(|_| match record_format(args) {
            Ok(RecordFormat::Ci16) => IqSampleFormat::Ci16,
            _ => IqSampleFormat::Cf32,
        }),
        clock_source: args.clock_source.clone(),
        bandwidth_hz: None,
        antenna: None,
        clkin: None,
        apply_calibration: args.apply_cal,
    }
}

/// The live capture asked for, within the policy's IQ budget.
fn live_of(
    args: &CaptureOptions,
    max_iq_bytes: u64,
    calibration: crate::exec::live::CalibrationUse,
) -> Result<LiveCapture> {
    Ok(LiveCapture {
        device: args.device.clone(),
        frequency_hz: args.frequency_hz,
        sample_rate_hz: args.sample_rate_hz,
        gain_db: args.gain_db,
        gain_elements: None,
        bandwidth_hz: None,
        antenna: None,
        clock_source: args.clock_source.clone(),
        duration_s: args.duration_s,
        fft_size: args.fft_size,
        clkin: args.clkin_tone_hz.map(|t| rxnode_interlock::ClkinSpec {
            tone_hz: t,
            tolerance_ppm: args.clkin_tolerance_ppm,
            expected_dbfs: args.clkin_expected_dbfs,
            expected_tolerance_db: None,
        }),
        record: args.record.clone(),
        record_format: record_format(args)?,
        max_iq_bytes: Some(max_iq_bytes),
        calibration: Some(calibration),
    })
}

/// The ledger's view of a capture: key figures, no absolute paths, no PSD.
fn ledger_detail(s: &CaptureSummary, args: &CaptureOptions, repo: &Path) -> serde_json::Value {
    json!({
        "device": args.device,
        "frequency_hz": args.frequency_hz,
        "sample_rate_hz": args.sample_rate_hz,
        "duration_s": args.duration_s,
        "samples_requested": s.samples_requested,
        "samples_received": s.samples_received,
        "overflows": s.overflows,
        "dropped_samples": s.dropped_samples,
        "timeouts": s.timeouts,
        "noise_floor_db": s.noise_floor_db,
        "peak": s.peaks.first().map(|p| json!({"frequency_hz": p.frequency_hz, "power_db": p.power_db})),
        "clkin": s.clkin.as_ref().map(|k| json!({
            "tone_hz": k.tone_hz,
            "ppm": k.ppm,
            "ppm_uncertainty": k.ppm_uncertainty,
            "status": k.status,
        })),
        "iq_files": s.iq_files.iter().map(|f| json!({
            "path": ledger_path(&f.path, repo),
            "format": f.format,
            "bytes": f.bytes,
            "sha256": f.sha256,
        })).collect::<Vec<_>>(),
        "stop_reason": s.stop_reason,
        "status": status_name(s.status),
    })
}

fn opt(v: Option<f64>, unit: &str, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$} {unit}"))
        .unwrap_or_else(|| "n/a".into())
}

/// The report's label column: the label on a list's first line, blank below it.
fn column(i: usize, label: &str) -> String {
    if i == 0 {
        format!("{label:<14}")
    } else {
        " ".repeat(14)
    }
}

fn mhz(hz: f64) -> String {
    format!("{:.6} MHz", hz / 1e6)
}

/// The human report: one readable block.
fn render(s: &CaptureSummary, args: &CaptureOptions) -> String {
    let mut o = String::new();
    render_settings(&mut o, s, args);
    render_stream(&mut o, s);
    if let Some(k) = &s.clkin {
        render_clkin(&mut o, k);
    }
    render_files(&mut o, s);
    let _ = writeln!(
        o,
        "status: {}{}",
        status_name(s.status),
        if s.cancelled {
            " (interrupted: what was captured is written)"
        } else {
            ""
        }
    );
    o
}

/// What was asked for beside what the radio really had.
fn render_settings(o: &mut String, s: &CaptureSummary, args: &CaptureOptions) {
    let a = &s.actual;
    let num = |k: &str| a.get(k).and_then(serde_json::Value::as_f64);
    let _ = writeln!(o, "capture on {}", args.device);
    let _ = writeln!(
        o,
        "  frequency     requested {}  actual {}",
        mhz(args.frequency_hz),
        num("frequency_hz").map(mhz).unwrap_or_else(|| "n/a".into())
    );
    let _ = writeln!(
        o,
        "  sample rate   requested {:.6} MS/s  actual {}",
        args.sample_rate_hz / 1e6,
        num("sample_rate_hz")
            .map(|r| format!("{:.6} MS/s", r / 1e6))
            .unwrap_or_else(|| "n/a".into())
    );
    let _ = writeln!(
        o,
        "  gain          requested {}  actual {}",
        opt(args.gain_db, "dB", 1),
        opt(num("gain_db"), "dB", 1)
    );
    let _ = writeln!(
        o,
        "  clock source  requested {}  actual {}",
        args.clock_source.as_deref().unwrap_or("(unchanged)"),
        a.get("clock_source")
            .and_then(|v| v.as_str())
            .unwrap_or("n/a")
    );
}

/// The samples, their losses, the peaks and the noise floor.
fn render_stream(o: &mut String, s: &CaptureSummary) {
    let _ = writeln!(
        o,
        "  samples       {} of {} received, {} processed in {:.2} s ({})",
        s.samples_received, s.samples_requested, s.samples_processed, s.duration_s, s.stop_reason
    );
    let _ = writeln!(
        o,
        "  loss          {} overflow(s), {} dropped, {} timeout(s){}",
        s.overflows,
        s.dropped_samples,
        s.timeouts,
        if s.clean { "" } else { " — NOT clean" }
    );
    if s.peaks.is_empty() {
        let _ = writeln!(o, "  peaks         none");
    }
    for (i, p) in s.peaks.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}{}  {:7.1} dBFS  SNR {:5.1} dB",
            column(i, "peaks"),
            mhz(p.frequency_hz),
            p.power_db,
            p.snr_db
        );
    }
    let _ = writeln!(
        o,
        "  noise floor   {} per bin (FFT {}, {} averages); mean power {}; clipped {:.4} %",
        opt(s.noise_floor_db, "dBFS", 1),
        s.fft_size,
        s.averages,
        opt(s.mean_power_dbfs, "dBFS", 1),
        s.clipped_fraction * 100.0
    );
}

/// The CLKIN verdict and its evidence.
fn render_clkin(o: &mut String, k: &ClkinReport) {
    let dp = rxnode_dsp::ppm_decimals(k.ppm_uncertainty.unwrap_or(0.0));
    let _ = writeln!(
        o,
        "  CLKIN         {}: tone {} measured {}, error {} ± {} (tolerance {} ppm)",
        match k.status {
            rxnode_dsp::ClkinStatus::Pass => "PASS",
            rxnode_dsp::ClkinStatus::Fail => "FAIL",
        },
        mhz(k.tone_hz),
        k.measured_hz
            .map(|m| format!("{:.3} Hz", m))
            .unwrap_or_else(|| "n/a".into()),
        k.ppm
            .map(|p| format!("{} ppm", rxnode_dsp::fmt_ppm(p, dp)))
            .unwrap_or_else(|| "n/a".into()),
        opt(k.ppm_uncertainty, "ppm", dp),
        k.tolerance_ppm
    );
    let _ = writeln!(o, "                {}", k.detail);
    for e in &k.evidence {
        let _ = writeln!(
            o,
            "                {} {} = {}",
            if e.consistent { "ok " } else { "!! " },
            e.name,
            e.value
        );
    }
}

/// The recorded files, a stopped recording and the errors.
fn render_files(o: &mut String, s: &CaptureSummary) {
    for (i, f) in s.iq_files.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}{} ({}, {} bytes, sha256 {})",
            column(i, "files"),
            f.path.display(),
            f.format,
            f.bytes,
            f.sha256
        );
    }
    if let Some(r) = &s.recording_error {
        let _ = writeln!(o, "  recording     stopped: {r}");
    }
    for e in &s.errors {
        let _ = writeln!(o, "  error         {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
