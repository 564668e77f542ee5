//! The capture engine: a reader thread owns the source and reads only into pool
//! buffers (allocated when first needed, up to the pool's bound, then reused); DSP
//! (Welch PSD, CLKIN) runs on DSP threads — one per core, each taking whole blocks
//! in turn, their Welch sums added at the end and the CLKIN estimator fed in
//! stream order — or on the calling thread (one core, a hook, a large FFT), fed
//! through a bounded queue; the recording (if any) runs on a writer thread of its
//! own, fed in stream order with the same buffers, which then return to the pool.
//! When the DSP or the writer falls behind, the reader never waits for them: with
//! no free buffer it reads into a scratch buffer and counts the samples as dropped.
//!
//! The engine carries the samples in the source's type: CF32 ([`SampleSource`],
//! [`run_capture`]) or the driver's native CS16 or CS8 ([`NativeSource`],
//! [`run_capture_native`]), which is recorded as it came (SigMF `ci16_le`, `ci8`) and
//! converted to float only for the DSP, on the DSP thread that takes the block: CS16
//! by the Welch kernels' first stage itself (no float copy of the block) and for the
//! CLKIN estimator 4096 samples at a time; CS8 a whole block at a time.
mod convert;
mod engine;
mod source;

use engine::{measure_dsp, run_engine};
pub use source::{
    FileSource, NativeSource, ReadOutcome, SampleSource, Silence, SilentRun, LISTED_SILENT_RUNS,
    MIN_SILENT_RUN,
};

use crate::dsp::{
    ClkinConfig, ClkinEstimator, ClkinReport, ClockEvidence, Peak, Welch, WelchConfig,
};
use crate::error::Result;
use crate::iq::{IqFileRecord, IqWriter, NativeIq, RecordFormat};
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

/// Settings of one bounded capture.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSettings {
    /// Samples to capture (duration × rate).
    pub samples: u64,
    /// Stop after this long even if fewer samples arrived.
    pub deadline: Option<Duration>,
    /// Samples per pool buffer.
    pub block_samples: usize,
    /// Pool buffers (the queue depth between reader and consumer).
    pub pool_blocks: usize,
    /// Timeout of one source read (µs).
    pub timeout_us: i64,
    /// The stall watchdog: this many read timeouts in a row end the capture as
    /// stalled (docs/reliability.md#6-the-stall-watchdog).
    pub max_consecutive_timeouts: u32,
    /// The stall watchdog: a live stream that delivers nothing for this long ends
    /// the capture as stalled, however its reads return; `None`: no time limit.
    pub stall_after: Option<Duration>,
    /// The Welch PSD.
    pub welch: WelchConfig,
    /// The CLKIN check, if a reference tone is given.
    pub clkin: Option<ClkinConfig>,
    /// What the driver said about the reference clock (for the CLKIN verdict).
    pub clock_evidence: ClockEvidence,
    /// Points of the PSD kept in the summary (max-hold decimated); 0 = none.
    pub psd_points: usize,
    /// Threads that run the DSP, 0 = one per core (at most 8); each takes whole
    /// blocks in turn, and their Welch sums are added at the end. One thread (the
    /// calling one) whatever this says when a hook sees the blocks, or when the FFT
    /// size is more than an eighth of `block_samples`
    /// (docs/architecture.md#the-capture-engine).
    pub dsp_threads: usize,
}

impl CaptureSettings {
    /// Defaults: 64 Ki-sample buffers, 64 of them, 100 ms read timeout, a stream that
    /// delivers nothing for 2 s (or 20 timeouts in a row) has stalled, 512-point PSD trace.
    pub fn new(samples: u64, welch: WelchConfig) -> Self {
        Self {
            samples,
            deadline: None,
            block_samples: 1 << 16,
            pool_blocks: 64,
            timeout_us: 100_000,
            max_consecutive_timeouts: 20,
            stall_after: Some(Duration::from_secs(2)),
            welch,
            clkin: None,
            clock_evidence: ClockEvidence::default(),
            psd_points: 512,
            dsp_threads: 0,
        }
    }
}

/// PASS, PARTIAL or FAIL of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum CaptureStatus {
    /// Every requested sample processed, no loss, CLKIN (if any) passed.
    Pass,
    /// Cancelled, stopped at the deadline, or anything lost or not recorded.
    Partial,
    /// Nothing was received (the source failed or stayed silent until the deadline;
    /// not when the operator cancelled), or the CLKIN check failed.
    Fail,
}

/// A decimated PSD for plots and sparklines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PsdTrace {
    /// Frequency of the first point (Hz).
    pub start_hz: f64,
    /// Spacing of the points (Hz).
    pub step_hz: f64,
    /// dBFS per FFT bin, max-held over each point's bins; −∞ (`null` in JSON) where
    /// no bin of the point has power: no level.
    #[serde(deserialize_with = "levels_or_none")]
    pub db: Vec<f32>,
}

/// `true` for 0 (a count left out of the JSON when nothing was counted).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// dB levels as written: a number, or `null` for a point without power (−∞).
fn levels_or_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Vec<f32>, D::Error> {
    let v: Vec<Option<f32>> = Deserialize::deserialize(d)?;
    Ok(v.into_iter()
        .map(|x| x.unwrap_or(f32::NEG_INFINITY))
        .collect())
}

/// What a capture did and found (docs/protocol.md#5-results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureSummary {
    /// The device (driver, serial, args): filled in by the caller.
    pub device: serde_json::Value,
    /// Requested settings: filled in by the caller.
    pub requested: serde_json::Value,
    /// Settings read back from the device: filled in by the caller.
    pub actual: serde_json::Value,
    /// Samples asked for.
    pub samples_requested: u64,
    /// Samples the source delivered.
    pub samples_received: u64,
    /// Samples analysed (and recorded): received − dropped.
    pub samples_processed: u64,
    /// Driver overflows.
    pub overflows: u64,
    /// Samples lost in driver overflows, counted from the driver's stream times;
    /// `null` when an overflow's loss could not be counted (the driver gives no
    /// stream times). 0 without overflows.
    #[serde(default)]
    pub overflow_lost_samples: Option<u64>,
    /// Samples lost in all: `dropped_samples` + `overflow_lost_samples`; `null`
    /// when an overflow's loss could not be counted.
    #[serde(default)]
    pub lost_samples: Option<u64>,
    /// Gaps in the analysed stream: runs of lost samples (or of a recording's
    /// digital silence, `silent_samples`) with analysed samples on both sides. No Welch segment spans a gap (the PSD is averaged over gap-free
    /// segments only) and the coherent CLKIN estimate is not made when there is one
    /// (docs/reliability.md#7-lost-samples-and-gaps).
    #[serde(default)]
    pub gaps: u64,
    /// Samples of digital silence a recording skipped: runs of samples exactly zero,
    /// counted as received and never analysed (a run between analysed samples is a
    /// gap; docs/reliability.md#8-digital-silence-in-a-recording). Absent when 0 (a
    /// live stream never has any).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub silent_samples: u64,
    /// Samples received but skipped because the consumer was behind.
    pub dropped_samples: u64,
    /// Reads that timed out.
    pub timeouts: u64,
    /// Reads that returned fewer samples than asked (normal for most drivers).
    pub short_reads: u64,
    /// Wall-clock duration (s).
    pub duration_s: f64,
    /// FFT size.
    pub fft_size: usize,
    /// Welch segments averaged.
    pub averages: u64,
    /// Strongest distinct peaks.
    pub peaks: Vec<Peak>,
    /// Median PSD bin (dBFS per bin); `null` when it cannot be measured: nothing
    /// analysed, the median bin has no power (all-zero samples), or the noise is not
    /// the same across the band; then `errors` and `noise_floor_absent` say why and
    /// the capture FAILs (docs/operator.md#numbers-that-are-true-or-absent).
    pub noise_floor_db: Option<f64>,
    /// The band the floor was read over, `[from, to]` Hz, when it is not the whole
    /// spectrum: the middle of the radio's bandwidth, or the band between a receive
    /// filter's low edges (docs/operator.md#peaks-and-the-noise-floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor_band_hz: Option<[f64; 2]>,
    /// Why `noise_floor_db` is `null`, in words; absent when it was measured (and in
    /// records written before it was kept: [`CaptureSummary::floor_absent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor_absent: Option<String>,
    /// How far above the floor a peak must stand (dB): the larger of the minimum SNR
    /// and the level noise alone reaches by chance with this many averages
    /// (docs/operator.md#peaks-and-the-noise-floor); absent without a floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_threshold_db: Option<f64>,
    /// Half the span around the centre the peak search skips (the radio's DC
    /// offset / LO leakage), Hz.
    #[serde(default)]
    pub centre_excluded_hz: f64,
    /// The strongest level in that span when it stands above the peak threshold:
    /// a carrier at the tuned frequency, or the radio's DC offset (dBFS per bin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centre_carrier_dbfs: Option<f64>,
    /// Mean sample power (dBFS); `null` when nothing was analysed or every sample is zero.
    pub mean_power_dbfs: Option<f64>,
    /// Fraction of clipped samples.
    pub clipped_fraction: f64,
    /// The CLKIN check, when a reference tone was given.
    pub clkin: Option<ClkinReport>,
    /// Files recorded.
    pub iq_files: Vec<IqFileRecord>,
    /// Why recording stopped early (disk budget, disk full …).
    pub recording_error: Option<String>,
    /// The verdict.
    pub status: CaptureStatus,
    /// `true` only when every requested sample arrived and was processed without loss.
    pub clean: bool,
    /// `true` when the capture was cancelled (Ctrl-C).
    pub cancelled: bool,
    /// Why the capture ended: `complete`, `cancelled`, `deadline`, `timeouts`, `source error`.
    pub stop_reason: String,
    /// Errors met on the way.
    pub errors: Vec<String>,
    /// The PSD, decimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psd: Option<PsdTrace>,
    /// How good the frequency axis is (the radio's clock source, its last frequency
    /// calibration, `ppm_correction_applied`): filled in by the caller
    /// (docs/protocol.md#clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<serde_json::Value>,
}

impl CaptureSummary {
    /// Why there is no noise floor (`None` when there is one): as kept, or, for a
    /// record without it, from its averages, mean power and clipped fraction.
    pub fn floor_absent(&self) -> Option<String> {
        self.noise_floor_db.is_none().then(|| {
            self.noise_floor_absent.clone().unwrap_or_else(|| {
                crate::why_no_floor(self.averages, self.mean_power_dbfs, self.clipped_fraction)
                    .to_owned()
            })
        })
    }

    /// The samples lost, in words for a report line: `none`, `4096 samples in 2
    /// gaps`, or, when a driver overflow's loss could not be counted, `an unknown
    /// number (…)`.
    pub fn lost_in_words(&self) -> String {
        let gaps = match self.gaps {
            1 => "1 gap".to_owned(),
            k => format!("{k} gaps"),
        };
        match self.lost_samples {
            Some(0) => "none".to_owned(),
            Some(n) => format!("{n} samples in {gaps}"),
            None => format!(
                "an unknown number in {gaps} ({} dropped, {} overflow(s) without stream times)",
                self.dropped_samples, self.overflows
            ),
        }
    }
}

/// Run a bounded capture: read `settings.samples` samples from `source` (or until the
/// deadline, too many timeouts, a source error, or `cancel`), analyse and optionally
/// record them. `progress`, if given, follows the samples received.
///
/// Errors only for invalid settings (a `ci16` recorder included: CF32 samples are
/// never narrowed silently); what goes wrong during the capture is in the summary.
pub fn run_capture<S: SampleSource>(
    source: S,
    settings: &CaptureSettings,
    cancel: &AtomicBool,
    progress: Option<&AtomicU64>,
    recorder: Option<IqWriter>,
) -> Result<CaptureSummary> {
    run_engine::<Complex<f32>, S>(source, settings, cancel, progress, recorder, None)
}

/// [`run_capture`] on the driver's native integer samples (CS16 or CS8): the recorder
/// (which must be one of that sample type, [`IqWriter::create_with`]) gets them
/// exactly as the driver delivered them, on its own thread; the DSP sees them scaled
/// to float (÷ 32768, ÷ 128).
pub fn run_capture_native<T: EngineSample + NativeIq, S: NativeSource<T>>(
    source: S,
    settings: &CaptureSettings,
    cancel: &AtomicBool,
    progress: Option<&AtomicU64>,
    recorder: Option<IqWriter>,
) -> Result<CaptureSummary> {
    run_engine(
        NativeReader(source),
        settings,
        cancel,
        progress,
        recorder,
        None,
    )
}

/// What [`dsp_speed`] measured: the DSP's own throughput on this machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DspSpeed {
    /// Samples processed while measuring.
    pub samples: u64,
    /// Wall-clock seconds they took.
    pub seconds: f64,
    /// Samples per second.
    pub samples_per_s: f64,
}

/// The quick calibration before a live capture: how fast this machine runs the
/// capture's DSP (Welch, the CLKIN estimator if asked and, for a native CS16 stream
/// (`ci16`), the conversion to float) on synthetic blocks — until it has handled
/// `stream_s` seconds of a stream at `rate_hz` or spent `budget`. The capture
/// itself is not touched; see `docs/decisions.md#live-analysis-speed-check`.
pub fn dsp_speed(
    settings: &CaptureSettings,
    ci16: bool,
    rate_hz: f64,
    stream_s: f64,
    budget: Duration,
) -> Result<DspSpeed> {
    // Noise-like samples (a fixed LCG), so no branch or table sees a constant.
    let noise = |i: usize| {
        let h = (i as u64)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((h >> 40) as i16, (h >> 20) as i16)
    };
    if ci16 {
        measure_dsp(settings, rate_hz, stream_s, budget, |i| {
            let (a, b) = noise(i);
            Complex::new(a / 8, b / 8)
        })
    } else {
        measure_dsp(settings, rate_hz, stream_s, budget, |i| {
            let (a, b) = noise(i);
            Complex::new(f32::from(a) / 262_144.0, f32::from(b) / 262_144.0)
        })
    }
}

/// Samples converted to float at a time for the CLKIN estimator when Welch reads a
/// native block itself: 32 KiB of CF32, well inside the first-level data cache.
pub(crate) const CONVERT_PIECE: usize = 4096;

/// A sample type the capture engine carries from the source to the DSP and the
/// recording: `Complex<f32>`, `Complex<i16>` or `Complex<i8>` (sealed).
pub trait EngineSample: Copy + Default + Send + Sync + 'static + engine_sample::Sealed {
    /// The recording format that stores this type as it is.
    const RECORD: RecordFormat;
    /// The float view for the DSP: `x` itself for CF32, else converted into `scratch`.
    fn as_cf32<'a>(x: &'a [Self], scratch: &'a mut [Complex<f32>]) -> &'a [Complex<f32>];
    /// Feed `x` to `w` when Welch reads this type itself (CF32, and CS16, which the
    /// kernels convert in their input stage, with no float copy of the block): `true`.
    /// `false` (CS8): the caller converts it ([`Self::as_cf32`]) and feeds that.
    #[doc(hidden)]
    fn feed_welch(w: &mut Welch, x: &[Self]) -> bool {
        let _ = (w, x);
        false
    }
    /// Hand `w` the carry of a segment begun in the block before, as
    /// [`Self::feed_welch`] feeds: `false` when the caller must convert it first.
    #[doc(hidden)]
    fn resume_welch(w: &mut Welch, carry: &[Self]) -> bool {
        let _ = (w, carry);
        false
    }
    /// `f` over `x` as CF32: CF32 as it is; else converted into `scratch` a piece of
    /// at most 4096 samples at a time, each used while it is still in the first-level
    /// cache (the CLKIN estimator's feed when Welch read the block itself). `scratch`
    /// is not empty for a type that is converted.
    #[doc(hidden)]
    fn in_cf32_pieces(
        x: &[Self],
        scratch: &mut [Complex<f32>],
        mut f: impl FnMut(&[Complex<f32>]),
    ) {
        let room = scratch.len().clamp(1, CONVERT_PIECE);
        for p in x.chunks(room) {
            f(Self::as_cf32(p, scratch));
        }
    }
    /// Feed `x` to the CLKIN estimator when Welch read the block itself: CS16 straight to
    /// the estimator's mixer where the CPU has a kernel that reads int16, else as
    /// [`Self::in_cf32_pieces`] gives it.
    #[doc(hidden)]
    fn feed_clkin(c: &mut ClkinEstimator, x: &[Self], scratch: &mut [Complex<f32>]) {
        Self::in_cf32_pieces(x, scratch, |p| c.feed(p));
    }
    /// Append to a recording.
    fn record(w: &mut IqWriter, x: &[Self]) -> Result<()>;
}

mod engine_sample {
    /// Only the engine's own sample types.
    pub trait Sealed {}
    impl Sealed for num_complex::Complex<f32> {}
    impl Sealed for num_complex::Complex<i16> {}
    impl Sealed for num_complex::Complex<i8> {}
}

impl EngineSample for Complex<f32> {
    const RECORD: RecordFormat = RecordFormat::Cf32;
    fn as_cf32<'a>(x: &'a [Self], _: &'a mut [Complex<f32>]) -> &'a [Complex<f32>] {
        x
    }
    fn feed_welch(w: &mut Welch, x: &[Self]) -> bool {
        w.feed(x);
        true
    }
    fn resume_welch(w: &mut Welch, carry: &[Self]) -> bool {
        w.resume(carry);
        true
    }
    fn in_cf32_pieces(x: &[Self], _: &mut [Complex<f32>], mut f: impl FnMut(&[Complex<f32>])) {
        f(x);
    }
    fn record(w: &mut IqWriter, x: &[Self]) -> Result<()> {
        w.write(x)
    }
}

impl EngineSample for Complex<i16> {
    const RECORD: RecordFormat = RecordFormat::Ci16;
    fn as_cf32<'a>(x: &'a [Self], scratch: &'a mut [Complex<f32>]) -> &'a [Complex<f32>] {
        let out = &mut scratch[..x.len()];
        convert::cs16_to_cf32(x, out);
        out
    }
    fn feed_welch(w: &mut Welch, x: &[Self]) -> bool {
        w.feed(x);
        true
    }
    fn resume_welch(w: &mut Welch, carry: &[Self]) -> bool {
        w.resume(carry);
        true
    }
    fn feed_clkin(c: &mut ClkinEstimator, x: &[Self], scratch: &mut [Complex<f32>]) {
        if !c.feed_cs16(x) {
            Self::in_cf32_pieces(x, scratch, |p| c.feed(p));
        }
    }
    fn record(w: &mut IqWriter, x: &[Self]) -> Result<()> {
        w.write_native(x)
    }
}

impl EngineSample for Complex<i8> {
    const RECORD: RecordFormat = RecordFormat::Ci8;
    fn as_cf32<'a>(x: &'a [Self], scratch: &'a mut [Complex<f32>]) -> &'a [Complex<f32>] {
        const SCALE: f32 = 1.0 / 128.0;
        let out = &mut scratch[..x.len()];
        for (o, c) in out.iter_mut().zip(x) {
            *o = Complex::new(f32::from(c.re) * SCALE, f32::from(c.im) * SCALE);
        }
        out
    }
    fn record(w: &mut IqWriter, x: &[Self]) -> Result<()> {
        w.write_native(x)
    }
}

/// What the reader thread reads from, in the engine's sample type.
pub(crate) trait BlockSource<T>: Send {
    fn read_block(&mut self, buf: &mut [T], timeout_us: i64) -> Result<ReadOutcome>;
    /// See [`SampleSource::is_live`].
    fn is_live(&self) -> bool {
        true
    }
    /// See [`SampleSource::time_ns`].
    fn time_ns(&self) -> Option<i64> {
        None
    }
}

impl<S: SampleSource> BlockSource<Complex<f32>> for S {
    fn read_block(&mut self, buf: &mut [Complex<f32>], timeout_us: i64) -> Result<ReadOutcome> {
        self.read(buf, timeout_us)
    }

    fn is_live(&self) -> bool {
        SampleSource::is_live(self)
    }

    fn time_ns(&self) -> Option<i64> {
        SampleSource::time_ns(self)
    }
}

/// Adapts a [`NativeSource`] (a newtype, so the two blanket impls never meet).
pub(crate) struct NativeReader<S>(pub(crate) S);

impl<T: NativeIq, S: NativeSource<T>> BlockSource<T> for NativeReader<S> {
    fn read_block(&mut self, buf: &mut [T], timeout_us: i64) -> Result<ReadOutcome> {
        self.0.read_native(buf, timeout_us)
    }

    fn time_ns(&self) -> Option<i64> {
        self.0.time_ns()
    }
}

/// [`run_capture`] that also hands every analysed block to `hook`, on the DSP
/// thread, in order (a streaming estimator such as [`crate::FreqCalEstimator`]
/// rides the capture's hot path this way).
pub fn run_capture_with_hook<S: SampleSource>(
    source: S,
    settings: &CaptureSettings,
    cancel: &AtomicBool,
    progress: Option<&AtomicU64>,
    recorder: Option<IqWriter>,
    hook: &mut dyn FnMut(&[Complex<f32>]),
) -> Result<CaptureSummary> {
    run_engine::<Complex<f32>, S>(source, settings, cancel, progress, recorder, Some(hook))
}

/// One SigMF annotation per reported peak: its −3 dB edges from the PSD bins
/// around it (at least one bin wide).
pub(crate) fn peak_annotations(spec: &crate::Spectrum) -> Vec<crate::PeakAnnotation> {
    let db = &spec.psd_db;
    let bin = spec.bin_hz;
    spec.peaks
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            if db.is_empty() || bin.is_nan() || bin <= 0.0 {
                return None;
            }
            let i = ((p.frequency_hz - spec.start_hz) / bin).round();
            if !(i >= 0.0 && (i as usize) < db.len()) {
                return None;
            }
            let i = i as usize;
            let half = db[i] - 3.0;
            let (mut lo, mut hi) = (i, i);
            while lo > 0 && db[lo - 1] >= half {
                lo -= 1;
            }
            while hi + 1 < db.len() && db[hi + 1] >= half {
                hi += 1;
            }
            Some(crate::PeakAnnotation {
                label: format!(
                    "peak {}: {:.6} MHz {:.1} dBFS ({})",
                    k + 1,
                    p.frequency_hz / 1e6,
                    p.power_db,
                    match p.snr_db {
                        Some(s) => format!("SNR {s:.1} dB"),
                        None => "no SNR: no noise floor".to_owned(),
                    }
                ),
                freq_lower_hz: spec.frequency_of(lo) - bin / 2.0,
                freq_upper_hz: spec.frequency_of(hi) + bin / 2.0,
                comment: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
