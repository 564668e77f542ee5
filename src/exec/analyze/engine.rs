//! The capture engine over the file (with a progress bar on a terminal) and the
//! report built from its summary.
use super::freq_cal::FreqCalRun;
use super::*;

/// A progress bar for a long file on a terminal (never with `--json`).
pub(super) fn progress_bar(ctx: &Ctx, samples: u64) -> Option<indicatif::ProgressBar> {
    (!ctx.json && samples > PROGRESS_FROM_SAMPLES && crate::term::stderr_progress()).then(|| {
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
pub(super) fn build_report(
    args: &AnalyzeOptions,
    rec: &Recording,
    settings: &CaptureSettings,
    summary: CaptureSummary,
    silence: Silence,
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
        center_from: rec.center_from,
        fft_size: summary.fft_size,
        overlap: settings.welch.overlap,
        averages: summary.averages,
        peaks: summary.peaks.clone(),
        noise_floor_db: summary.noise_floor_db,
        min_snr_db: settings.welch.min_snr_db,
        peak_threshold_db: summary.peak_threshold_db,
        centre_excluded_hz: summary.centre_excluded_hz,
        centre_carrier_dbfs: summary.centre_carrier_dbfs,
        noise_floor_absent: match summary.floor_absent() {
            Some(_) if summary.samples_processed == 0 && silence.samples > 0 => Some(format!(
                "no signal: every sample is zero; digital silence, {} samples skipped, none \
                 analysed",
                silence.samples
            )),
            why => why,
        },
        noise_floor_band_hz: summary.noise_floor_band_hz,
        mean_power_dbfs: summary.mean_power_dbfs,
        clipped_fraction: summary.clipped_fraction,
        clkin: summary.clkin,
        clock: rec.clock.clone(),
        silence,
        freq_cal: None,
        channels: Vec::new(),
    };
    (report, psd)
}

/// Run the capture engine over the whole file (its reader thread converts blocks
/// while this thread runs the DSP and, if any, the frequency estimator); the bar, if
/// any, follows the samples read. A read error of the file is bad input. Gives the
/// summary and the digital silence the file skipped.
pub(super) fn run_file(
    reader: IqReader,
    settings: &CaptureSettings,
    bar: Option<&indicatif::ProgressBar>,
    est: Option<&mut FreqCalRun>,
) -> Result<(CaptureSummary, Silence)> {
    let mut source = FileSource::new(reader);
    let summary = run_with_bar(&mut source, settings, bar, est.map(|f| &mut f.est))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = source.error() {
        return Err(bad_input(e.to_owned()));
    }
    Ok((summary, source.silence().clone()))
}

/// The engine with a thread that moves the bar, if any, and the estimator fed each
/// block on the DSP thread.
pub(super) fn run_with_bar(
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
