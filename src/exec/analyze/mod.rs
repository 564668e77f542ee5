//! `rxnode analyze FILE`: the capture analysis (Welch PSD, peaks, noise floor, CLKIN) on a
//! recorded IQ file, streamed in blocks so memory stays bounded whatever the file size.
//! The file runs through the same capture engine as a live capture
//! ([`rxnode_dsp::run_capture`] over a [`FileSource`]), so the finish is written once.
use crate::context::Ctx;
use crate::exec::{exists_not_a_file, exists_unless_forced, positive};
use crate::exit::{bad_field, bad_field_text, bad_input, FieldText, Outcome};
use crate::result::sections::freq_cal::{
    FreqCalActual, FreqCalClock, FreqCalRecord, FreqCalRequested, FreqCalSource, RecordingChannel,
    RecordingSettings, StoredFor,
};
use anyhow::{Context, Result};
use rxnode_dsp::{
    freq_cal_estimator, run_capture_with_hook, CaptureSettings, CaptureSummary, ClkinReport,
    ClkinStatus, Datatype, FileSource, FreqCalConfig, FreqCalError, FreqCalEstimator, IqFormat,
    IqInfo, IqReader, PsdTrace, Silence, WelchConfig,
};
use rxnode_interlock::FreqCalMethod;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

mod engine;
mod freq_cal;
mod recording;
mod render;
#[cfg(test)]
mod tests;

pub use crate::result::sections::recording_clock::{
    ClockFrom, RecordedMeasurement, RecordingClock,
};
use engine::{build_report, progress_bar, run_file};
use freq_cal::{freq_cal_entry, freq_cal_setup, store_measurement};
use recording::{capture_settings, check_options, open_recording};
use render::{render_all, write_plot};

/// Samples per read.
const BLOCK: usize = 1 << 16;
/// Files with more samples than this get a progress bar (on a terminal, not with `--json`).
const PROGRESS_FROM_SAMPLES: u64 = 1 << 26;

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
    /// Complex samples analysed: the file's, less its digital silence (`silence`).
    pub samples: u64,
    /// Sample rate used.
    pub sample_rate_hz: f64,
    /// Centre frequency, when known.
    pub center_hz: Option<f64>,
    /// Where `center_hz` comes from: `recording` (the file's own metadata: a SigMF
    /// meta, a WAV's `auxi` chunk, a GNU Radio or SDRangel `.sdriq` header),
    /// `file_name` (the name a tool gives its recordings: gqrx, SDR#, HDSDR) or
    /// `option` (`--center-hz`); `null` when the centre is unknown.
    pub center_from: Option<CenterFrom>,
    /// FFT size.
    pub fft_size: usize,
    /// Overlap fraction.
    pub overlap: f64,
    /// Segments averaged.
    pub averages: u64,
    /// Strongest distinct peaks.
    pub peaks: Vec<rxnode_dsp::Peak>,
    /// The mean noise power per bin, dBFS per bin, from the median bin corrected for
    /// the number of averages (docs/operator.md#peaks-and-the-noise-floor); `null`
    /// when it cannot be measured (`noise_floor_absent` says why, and the analysis
    /// exits 1).
    pub noise_floor_db: Option<f64>,
    /// The minimum peak SNR asked for (`--min-snr-db`), dB.
    pub min_snr_db: f64,
    /// How far above the floor a peak must stand, dB: the larger of `min_snr_db` and
    /// the level noise alone reaches by chance with this many averages; `null`
    /// without a floor.
    pub peak_threshold_db: Option<f64>,
    /// Half the span around the centre the peak search skips, Hz.
    pub centre_excluded_hz: f64,
    /// The strongest level in that span when it stands above the peak threshold (a
    /// carrier at the centre, or the radio's DC offset), dBFS per bin.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub centre_carrier_dbfs: Option<f64>,
    /// Why `noise_floor_db` is `null` (`no signal: every sample is zero`, `the samples
    /// carry no noise above the FFT's rounding`, `the noise is not the same across the
    /// band: …`); absent when the floor was measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub noise_floor_absent: Option<String>,
    /// The band the floor was read over, `[from, to]` Hz, when it is not the whole
    /// spectrum: the middle of the recording radio's bandwidth (SigMF
    /// `rxnode:bandwidth_hz`), or the band between a receive filter's low edges
    /// (docs/operator.md#peaks-and-the-noise-floor).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub noise_floor_band_hz: Option<[f64; 2]>,
    /// Mean sample power of the samples analysed, dBFS; `null` when every sample is
    /// zero or none was analysed (all digital silence).
    pub mean_power_dbfs: Option<f64>,
    /// Fraction of clipped samples.
    pub clipped_fraction: f64,
    /// The CLKIN check, when `--clkin-tone-hz` is given.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clkin: Option<ClkinReport>,
    /// How good the recording's frequency axis is: its SigMF `rxnode:clock` as written
    /// at recording time (`from: "recording"`), else `from: "unknown"` with every field
    /// null (docs/protocol.md#clock).
    pub clock: RecordingClock,
    /// The file's digital silence: runs of samples whose I and Q are both exactly
    /// zero (a recorder's fill for samples it lost), skipped and never analysed, so
    /// every level, the floor, the peaks and any frequency estimate are of the
    /// recorded samples only (docs/reliability.md#8-digital-silence-in-a-recording).
    pub silence: Silence,
    /// The radio's frequency error measured from a broadcast carrier in the recording
    /// (`--freq-cal`): the same entry `clkin calibrate --json` prints.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub freq_cal: Option<FreqCalRecord>,
    /// Every channel's analysis (this one first), when a multi-channel recording is
    /// analysed whole; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub channels: Vec<AnalyzeReport>,
}

impl AnalyzeReport {
    /// Noiseless samples (a synthetic tone) whose peaks were measured: no floor to
    /// read, every other figure there (docs/operator.md#levels-without-power).
    fn noiseless_with_peaks(&self) -> bool {
        self.noise_floor_db.is_none()
            && self.noise_floor_absent.as_deref() == Some(rxnode_dsp::NOISELESS)
            && !self.peaks.is_empty()
    }
}

/// Where an analysis's centre frequency comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CenterFrom {
    /// The file's own metadata (SigMF meta, WAV `auxi` chunk, GNU Radio header).
    Recording,
    /// The file's name, as a tool names its recordings (gqrx, SDR#, HDSDR).
    FileName,
    /// `--center-hz`: the file states no centre.
    Option,
}

/// `analyze` options.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalyzeOptions {
    /// The recording.
    pub file: std::path::PathBuf,
    /// Sample rate (raw formats), S/s (`2M`); the file's own metadata wins, a
    /// different value is refused.
    #[arg(short = 'r', long, alias = "rate", value_parser = crate::options::sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// Centre frequency, for an absolute axis, Hz (`100M`); the file's own
    /// metadata wins, a different value is refused.
    #[arg(short = 'f', long, alias = "center-hz", value_parser = crate::options::frequency)]
    pub frequency_hz: Option<f64>,
    /// The recording radio's bandwidth (its receive filter), Hz (`200k`): the noise
    /// floor is read inside it (docs/operator.md#peaks-and-the-noise-floor). A
    /// SigMF recording's own `rxnode:bandwidth_hz` wins, a different value is refused.
    #[arg(short = 'w', long, value_parser = crate::options::frequency)]
    pub bandwidth_hz: Option<f64>,
    /// How the file stores its samples (default: from the extension): cu8, cs8,
    /// cs16, cs16_be, cu16, cs32, cs32_be, cf32 (GNU Radio's cfile), cf32_be, cf64,
    /// wav or sigmf (a .sigmf-meta/.sigmf-data pair or a .sigmf archive). SigMF's
    /// names (ci16_le …) are accepted too. A .bin, .raw, .dat or .iq file needs it.
    #[arg(short = 'F', long, ignore_case = true, value_parser = crate::options::iq_format())]
    pub format: Option<IqFormat>,
    /// Analyse this channel only (0-based) of a multi-channel SigMF recording
    /// (default: every channel, each reported on its own).
    #[arg(short = 'C', long, value_name = "N")]
    pub channel: Option<u32>,
    /// Measure the recording radio's frequency error from a broadcast carrier in it,
    /// as `clkin calibrate` does live (docs/operator.md#calibrating-from-a-recording).
    #[arg(long, value_parser = crate::options::cal_method(), value_name = "METHOD")]
    pub freq_cal: Option<FreqCalMethod>,
    /// The carrier's frequency for `--freq-cal`, Hz (`935.2M`; default: the
    /// recording's centre): the BCCH carrier (gsm) or the downlink's centre (lte).
    #[arg(long, value_parser = crate::options::frequency, value_name = "HZ")]
    pub carrier_hz: Option<f64>,
    /// Keep a PASS `--freq-cal` measurement in .local/calibration.json for this radio,
    /// `driver=DRIVER,serial=SERIAL[,remote=HOST]` (nothing is kept without it).
    #[arg(long, value_name = "RADIO")]
    pub store_for_radio: Option<String>,
    /// The FFT (`--fft-size`).
    #[command(flatten)]
    pub fft: crate::options::FftOptions,
    /// Overlap fraction, 0 ≤ F < 1.
    #[arg(long, default_value_t = 0.5)]
    pub overlap: f64,
    /// The CLKIN check (`--clkin-*`).
    #[command(flatten)]
    pub clkin: crate::options::ClkinOptions,
    /// Write a spectrum PNG.
    #[arg(long)]
    pub plot: Option<std::path::PathBuf>,
    /// Overwrite a `--plot` file that exists (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// The peak list (`--max-peaks`, `--min-snr-db`).
    #[command(flatten)]
    pub peaks: crate::options::PeakOptions,
}

/// What the checked options and the opened file settle for the later phases.
struct Recording {
    /// The file's format, length, clip level and metadata.
    info: IqInfo,
    /// The sample rate used: `--rate`, else the file's.
    rate: f64,
    /// The centre frequency: the file's, else `--center-hz`, else unknown.
    center: Option<f64>,
    /// Where `center` comes from.
    center_from: Option<CenterFrom>,
    /// The `clock` block of the report, from the file's `rxnode:clock` or unknown.
    clock: RecordingClock,
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
    // A spectrum without one bin of power has nothing to draw: no picture, said why.
    let plot = args.plot.as_ref().zip(first_psd.as_ref());
    let drawable = |psd: &PsdTrace| psd.db.iter().any(|v| v.is_finite());
    // A picture that cannot be written loses no analysis: the report is printed
    // first, then the failed write is the command's error.
    let unplotted = plot
        .filter(|(_, psd)| drawable(psd))
        .and_then(|(plot, psd)| {
            write_plot(plot, args.force, psd, &report)
                .with_context(|| format!("cannot write plot {}", plot.display()))
                .err()
        });
    ctx.report(&report, render_all)?;
    if let Some(e) = unplotted {
        return Err(e.context(format!(
            "the recording was analysed and reported{}, but its --plot was not written",
            if ctx.json { "" } else { " above" }
        )));
    }
    if let Some((plot, _)) = plot.filter(|(_, psd)| !drawable(psd)) {
        ctx.shell().errln(format_args!(
            "rxnode: no plot written to {}: no PSD bin has power ({})",
            plot.display(),
            report
                .noise_floor_absent
                .as_deref()
                .unwrap_or("nothing analysed")
        ))?;
    }
    let all = if report.channels.is_empty() {
        std::slice::from_ref(&report)
    } else {
        report.channels.as_slice()
    };
    // A figure that could not be measured fails the analysis, as a failed check does.
    // Noiseless samples with a peak (a synthetic tone) measured all they hold: their
    // levels and peaks are reported, the floor absent with its reason, and the file is
    // no receive path that lost its noise.
    let failed = all.iter().any(|r| {
        (r.noise_floor_db.is_none() && !r.noiseless_with_peaks())
            || r.clkin
                .as_ref()
                .is_some_and(|c| c.status == ClkinStatus::Fail)
            || r.freq_cal
                .as_ref()
                .is_some_and(|f| f.status != crate::result::Status::Pass)
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
    let (summary, silence) = run_file(reader, &settings, progress.as_ref(), est.as_mut())?;
    let freq_cal = est.map(|mut f| {
        let estimate = f.est.finish();
        let source = FreqCalSource::Recording(RecordingChannel {
            channel: rec.info.channel,
            recording: args.file.display().to_string(),
        });
        let judged =
            crate::exec::freq_cal::judge(f.method, f.carrier_hz, &summary, estimate, source);
        freq_cal_entry(rec, judged.entry)
    });
    let (mut report, psd) = build_report(args, rec, &settings, summary, silence);
    report.freq_cal = freq_cal;
    Ok((report, psd))
}
