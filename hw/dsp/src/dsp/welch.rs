//! Streaming Welch power spectrum.
use super::floor::{centred_plateau, floor_site, upper_level, FloorSite, NOT_LEVEL};
use super::noise_stats::{centre_carrier, equivalent_averages, overlap_correlations, NoiseLevels};
use super::peaks::{find_peaks, tone_between_bins, why_no_floor, Emissions, Peak, PeakReference};
use super::simd_psd::{Isa, SimdPsd};
use super::window::Window;
use crate::error::{Error, Result};
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

mod merge;
pub(crate) use merge::SegmentCarry;

/// A sample type [`Welch::feed`] takes as the radio delivers it: CF32, or the
/// driver's native CS16, read as `v / 32768` (exactly the float the capture's
/// conversion gives) by the transform's first stage itself, so a CS16 block is not
/// copied to float first. Sealed: `Complex<f32>` and `Complex<i16>`.
pub trait WelchSample: Copy + Default + Send + Sync + 'static + sealed::Sealed {
    /// This sample as CF32 (CS16: `v / 32768`).
    fn to_cf32(self) -> Complex<f32>;
    /// [`Welch::feed`] for this type: a concrete function per type, so the kernels
    /// are compiled here, optimised, whichever crate calls `feed` (a generic
    /// function is compiled in the crate that names its type, at that crate's
    /// optimisation level, and the kernels' intrinsics are not inlined unoptimised).
    #[doc(hidden)]
    fn feed_welch(w: &mut Welch, block: &[Self]);
}

/// How the kernels read a [`WelchSample`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SampleKind {
    /// Interleaved f32.
    Cf32,
    /// Interleaved int16, full scale 32768.
    Cs16,
}

mod sealed {
    /// Only the types the kernels read; `KIND` tells them how.
    pub trait Sealed {
        /// The layout of the type.
        #[allow(private_interfaces)]
        const KIND: super::SampleKind;
    }
    impl Sealed for num_complex::Complex<f32> {
        #[allow(private_interfaces)]
        const KIND: super::SampleKind = super::SampleKind::Cf32;
    }
    impl Sealed for num_complex::Complex<i16> {
        #[allow(private_interfaces)]
        const KIND: super::SampleKind = super::SampleKind::Cs16;
    }
}

impl WelchSample for Complex<f32> {
    #[inline(always)]
    fn to_cf32(self) -> Complex<f32> {
        self
    }
    fn feed_welch(w: &mut Welch, block: &[Self]) {
        w.feed_as(block);
    }
}

/// `x` as CF32 into `out` (as many as both hold): the short pieces of a block that
/// do not fill a segment by themselves.
fn to_cf32<E: WelchSample>(x: &[E], out: &mut [Complex<f32>]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o = v.to_cf32();
    }
}

impl WelchSample for Complex<i16> {
    #[inline(always)]
    fn to_cf32(self) -> Complex<f32> {
        const SCALE: f32 = 1.0 / 32768.0;
        Complex::new(f32::from(self.re) * SCALE, f32::from(self.im) * SCALE)
    }
    fn feed_welch(w: &mut Welch, block: &[Self]) {
        w.feed_as(block);
    }
}

/// The smallest FFT size a [`WelchConfig`] takes.
pub(crate) const FFT_SIZE_MIN: usize = 16;
/// The largest FFT size a [`WelchConfig`] takes (1 Mi).
pub(crate) const FFT_SIZE_MAX: usize = 1 << 20;

/// How far below the mean bin a bin's power can lie and still be a level of the
/// samples, dB; a bin further down holds only the arithmetic's rounding and has no
/// level (−∞), as a bin without power (docs/operator.md#levels-without-power).
///
/// The mean bin is the mean sample power on the per-bin scale, so the distance is the
/// samples' own signal-to-noise ratio, whatever the FFT size. The single-precision
/// FFT's rounding (and a float recording's) lies 138 to 151 dB below the mean bin
/// (measured for a constant and for a noiseless tone, FFT 16 to 1 Mi); a radio's noise
/// lies far above that: a 16-bit converter's quantisation noise is about 100 dB below
/// a full-scale signal, an 8-bit one's about 50 dB, and receivers' own noise higher
/// still. 125 dB sits between, with a margin of at least 13 dB to the rounding and 25
/// dB to a 16-bit converter's noise.
pub const RESOLUTION_DB: f64 = 125.0;

/// How far below the mean bin the rounding's spurs reach, dB. Rounding is not white:
/// the single-precision samples of a noiseless tone carry spurs of their own rounding
/// up to about 118 dB below the mean bin, above [`RESOLUTION_DB`]. So without a noise
/// floor a peak must stand its minimum SNR above this level (and above the spectrum
/// around it) to be told from the arithmetic.
pub const ROUNDING_SPURS_DB: f64 = 105.0;

/// Settings of a [`Welch`] estimator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WelchConfig {
    /// FFT size (segment length), 16 ..= 1 Mi.
    pub fft_size: usize,
    /// Overlap fraction between segments, 0 ≤ overlap < 1.
    pub overlap: f64,
    /// The window.
    pub window: Window,
    /// Sample rate in Hz (for the frequency axis).
    pub sample_rate_hz: f64,
    /// RF centre frequency in Hz, when known (absolute axis).
    pub center_hz: Option<f64>,
    /// Peaks closer than this many bins to DC are ignored (0: none, 1: the DC bin,
    /// 2: DC ±1 …), for the DC spike / LO leakage; a carrier there is reported as
    /// [`Spectrum::centre_carrier_db`] instead.
    pub dc_exclude_bins: usize,
    /// How many peaks to report.
    pub max_peaks: usize,
    /// Peaks less than this far above the noise floor are ignored (dB); with few
    /// averages the level noise alone reaches is higher and counts instead
    /// ([`Spectrum::peak_threshold_db`]).
    pub min_snr_db: f64,
    /// |I| or |Q| at or above this level counts as clipped (full scale = 1.0).
    pub clip_level: f32,
    /// The radio's bandwidth, Hz, when it was set and read back (or a recording
    /// says it): the noise floor is read over the middle [`PASSBAND_USED`] of it
    /// around the centre, where its filter passes the noise
    /// (docs/operator.md#peaks-and-the-noise-floor). `None`: from the data alone.
    #[serde(default)]
    pub passband_hz: Option<f64>,
}

/// The part of a known bandwidth the floor is read over, around the centre: a
/// radio's filter rolls off towards the bandwidth's edges.
pub const PASSBAND_USED: f64 = 0.8;

impl WelchConfig {
    /// Defaults: Hann, 50 % overlap, DC ±1 bin excluded (`dc_exclude_bins` 2), 8 peaks, 6 dB minimum SNR.
    pub fn new(fft_size: usize, sample_rate_hz: f64) -> Self {
        Self {
            fft_size,
            overlap: 0.5,
            window: Window::Hann,
            sample_rate_hz,
            center_hz: None,
            dc_exclude_bins: 2,
            max_peaks: 8,
            min_snr_db: 6.0,
            clip_level: 1.0,
            passband_hz: None,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |field, detail: String| Err(Error::InvalidSetting { field, detail });
        if !(FFT_SIZE_MIN..=FFT_SIZE_MAX).contains(&self.fft_size) {
            return bad(
                "fft_size",
                format!(
                    "{} is not in {FFT_SIZE_MIN}..={FFT_SIZE_MAX}",
                    self.fft_size
                ),
            );
        }
        if !(self.overlap.is_finite() && (0.0..1.0).contains(&self.overlap)) {
            return bad("overlap", format!("{} is not in [0, 1)", self.overlap));
        }
        if !(self.sample_rate_hz.is_finite() && self.sample_rate_hz > 0.0) {
            return bad(
                "sample_rate_hz",
                format!("{} is not > 0", self.sample_rate_hz),
            );
        }
        if let Some(c) = self.center_hz {
            if !c.is_finite() {
                return bad("center_hz", format!("{c} is not finite"));
            }
        }
        if !(self.clip_level.is_finite() && self.clip_level > 0.0) {
            return bad(
                "clip_level",
                format!("{} is not a finite level > 0", self.clip_level),
            );
        }
        if let Some(b) = self.passband_hz {
            if !(b.is_finite() && b > 0.0) {
                return bad("passband_hz", format!("{b} is not a finite bandwidth > 0"));
            }
        }
        if self.dc_exclude_bins >= self.fft_size / 4 {
            return bad(
                "dc_exclude_bins",
                format!(
                    "{} is too large for fft_size {}",
                    self.dc_exclude_bins, self.fft_size
                ),
            );
        }
        Ok(())
    }

    /// Samples between the starts of consecutive segments.
    pub fn hop(&self) -> usize {
        let h = (self.fft_size as f64 * (1.0 - self.overlap)).round() as usize;
        h.clamp(1, self.fft_size)
    }

    /// The bins (fftshifted) the floor is read over when the bandwidth is known and
    /// narrower than the sample rate: the middle [`PASSBAND_USED`] of it around the
    /// centre, at least one bin either side of it. `None` otherwise.
    fn passband_bins(&self) -> Option<std::ops::Range<usize>> {
        let n = self.fft_size;
        let bandwidth = self.passband_hz?;
        if bandwidth >= self.sample_rate_hz {
            return None;
        }
        let used = bandwidth * PASSBAND_USED;
        let half_bins = ((used / 2.0) / (self.sample_rate_hz / n as f64)).floor() as usize;
        let half_bins = half_bins.max(1);
        let dc = n / 2;
        Some(dc.saturating_sub(half_bins)..(dc + half_bins + 1).min(n))
    }
}

/// The result of a Welch estimate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spectrum {
    /// Samples fed.
    pub samples: u64,
    /// Segments averaged.
    pub averages: u64,
    /// FFT size.
    pub fft_size: usize,
    /// Overlap fraction used.
    pub overlap: f64,
    /// Frequency of bin 0 of `psd_db` (Hz; absolute when the centre is known).
    pub start_hz: f64,
    /// Bin spacing (Hz).
    pub bin_hz: f64,
    /// Power per bin in dBFS, fftshifted (lowest frequency first), normalised so that a
    /// tone's peak bin reads the tone's power (a full-scale complex tone reads 0 dB).
    /// A bin without power has no level: it is −∞ (`null` in JSON), never a stand-in
    /// number.
    pub psd_db: Vec<f32>,
    /// Strongest distinct peaks, strongest first.
    pub peaks: Vec<Peak>,
    /// The mean noise power per bin (dB per bin): the median of `psd_db` corrected by
    /// the median-to-mean ratio of a noise bin averaged over
    /// [`Spectrum::equivalent_averages`] (docs/operator.md#peaks-and-the-noise-floor);
    /// `None` when it cannot be measured ([`Spectrum::noise_floor_absent`] says why).
    pub noise_floor_db: Option<f64>,
    /// How far above the floor a peak must stand (dB): the larger of the configured
    /// minimum SNR and the level noise alone exceeds anywhere in the spectrum with a
    /// chance of 1 %; `None` without a floor.
    pub peak_threshold_db: Option<f64>,
    /// The equivalent number of independent averages of a bin (Welch's overlapping
    /// segments count less than one each); 0 without a segment.
    pub equivalent_averages: f64,
    /// Half the width of the span around the centre that the peak search skips
    /// (`dc_exclude_bins`), Hz; 0 when none is skipped.
    pub centre_excluded_hz: f64,
    /// The strongest bin of that skipped span when it stands above the peak
    /// threshold (a carrier at the tuned frequency, or the radio's DC offset), dB per
    /// bin; `None` otherwise.
    pub centre_carrier_db: Option<f64>,
    /// Mean sample power, 10·log10(mean |x|²) (dBFS); −inf when no samples.
    pub mean_power_dbfs: f64,
    /// Fraction of samples with |I| or |Q| at the clip level.
    pub clipped_fraction: f64,
    /// The band the floor was read over, `[from, to]` Hz (its first and last bins),
    /// when that is not the whole spectrum: the passband of a known bandwidth, or
    /// the band between a filter's low edges (docs/operator.md#peaks-and-the-noise-floor).
    #[serde(default)]
    pub noise_floor_band_hz: Option<[f64; 2]>,
    /// The noise is not the same across the band, so it has no floor
    /// ([`NOT_LEVEL`]).
    #[serde(default)]
    pub noise_uneven: bool,
}

/// The largest fraction of clipped samples (|I| or |Q| at the converter's full scale)
/// whose spectrum is still measured: beyond it the input saturated
/// (docs/operator.md#peaks-and-the-noise-floor).
pub const MAX_CLIPPED_FRACTION: f64 = 0.01;

/// Why a saturated spectrum has no floor and no peaks, in words a user reads.
pub const SATURATED: &str =
    "the input saturated: more than 1 % of samples at the converter's full scale, so \
     its spectrum holds distortion products beside the signals; lower the gain";

impl Spectrum {
    /// Why [`Spectrum::noise_floor_db`] is absent, in words a user reads; `None` when
    /// it was measured.
    pub fn noise_floor_absent(&self) -> Option<&'static str> {
        match self.noise_floor_db {
            Some(_) => None,
            None if self.noise_uneven => Some(NOT_LEVEL),
            None => Some(why_no_floor(
                self.averages,
                Some(self.mean_power_dbfs).filter(|p| p.is_finite()),
                self.clipped_fraction,
            )),
        }
    }

    /// Frequency of bin `i` of `psd_db`.
    pub fn frequency_of(&self, i: usize) -> f64 {
        self.start_hz + i as f64 * self.bin_hz
    }

    /// The PSD reduced to at most `max_points` points by max-hold (for plots and sparklines).
    pub fn decimated(&self, max_points: usize) -> (f64, f64, Vec<f32>) {
        let n = self.psd_db.len();
        if max_points == 0 || n <= max_points {
            return (self.start_hz, self.bin_hz, self.psd_db.clone());
        }
        let k = n.div_ceil(max_points);
        let out = self
            .psd_db
            .chunks(k)
            .map(|c| c.iter().copied().fold(f32::NEG_INFINITY, f32::max))
            .collect();
        let step = self.bin_hz * k as f64;
        (
            self.start_hz + self.bin_hz * (k as f64 - 1.0) / 2.0,
            step,
            out,
        )
    }
}

/// Segments summed in f32 before being added to the f64 totals (bounded
/// rounding whatever the capture length; one extra pass per 1024 FFTs).
const FLUSH_SEGMENTS: u32 = 1024;

/// A streaming Welch estimator: feed blocks of any length, then [`Welch::finish`].
///
/// The FFT is planned and every buffer allocated in [`Welch::new`]; [`Welch::feed`]
/// never allocates. Window, FFT and |X|² accumulation are fused per segment.
///
/// ```
/// use num_complex::Complex;
/// use rxnode_dsp::{Welch, WelchConfig};
///
/// let mut cfg = WelchConfig::new(1024, 1.024e6);
/// cfg.center_hz = Some(100e6);
/// let mut w = Welch::new(cfg)?;
/// // A tone 64 bins (64 kHz) above the centre, fed in two uneven blocks.
/// let x: Vec<Complex<f32>> = (0..20_000)
///     .map(|i| Complex::from_polar(0.5, std::f32::consts::TAU * (i % 16) as f32 / 16.0))
///     .collect();
/// w.feed(&x[..777]);
/// w.feed(&x[777..]);
/// let s = w.finish();
/// assert!((s.peaks[0].frequency_hz - 100.064e6).abs() < 1.0);
/// assert!((s.peaks[0].power_db + 6.02).abs() < 0.01);
/// # Ok::<(), rxnode_dsp::Error>(())
/// ```
pub struct Welch {
    cfg: WelchConfig,
    hop: usize,
    window: Vec<f32>,
    /// The window's squared overlap correlations, for the equivalent averages.
    rho2: Vec<f64>,
    engine: Engine,
    /// Σ|X|² per FFT bin (natural order), flushed from the engine's f32 sums every
    /// [`FLUSH_SEGMENTS`] segments: an f32 sum alone stops growing once it is ~2^24
    /// times one segment (seconds at high rates).
    acc64: Vec<f64>,
    /// Segments in the engine's f32 sums since the last flush.
    partial: u32,
    /// Samples of the next, incomplete segment.
    pending: Vec<Complex<f32>>,
    /// One whole segment assembled from `pending` and the next block.
    joined: Vec<Complex<f32>>,
    fill: usize,
    averages: u64,
    samples: u64,
    power_sum: f64,
    clipped: u64,
}

/// What windows, transforms and accumulates one segment.
enum Engine {
    /// A fused SIMD kernel: AVX-512 (power-of-two sizes ≥ 256 on CPUs with AVX-512F/DQ)
    /// or AVX2 (power-of-two sizes ≥ 64 on CPUs with AVX2/FMA).
    Simd(Box<SimdPsd>),
    /// rustfft (every size, every CPU).
    Portable(Box<Portable>),
}

/// Which engine [`Welch::build`] makes.
#[derive(Clone, Copy)]
enum Choice {
    /// The fastest SIMD kernel this CPU has for the size, else rustfft.
    Fastest,
    /// This kernel, else rustfft (the caller checks).
    Kernel(Isa),
    /// rustfft.
    Portable,
}

/// The portable engine: window, rustfft in place, |X|² per flat f32 lane.
struct Portable {
    fft: Arc<dyn Fft<f32>>,
    /// The window with every value twice (multiplies interleaved I/Q as flat f32).
    window2: Vec<f32>,
    buf: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// |X|² accumulated per flat f32 lane (re², im² interleaved).
    acc: Vec<f32>,
}

impl Portable {
    fn new(window: &[f32]) -> Self {
        let n = window.len();
        let fft = FftPlanner::<f32>::new().plan_fft_forward(n);
        Self {
            scratch: vec![Complex::default(); fft.get_inplace_scratch_len()],
            fft,
            window2: window.iter().flat_map(|&w| [w, w]).collect(),
            buf: vec![Complex::default(); n],
            acc: vec![0.0; 2 * n],
        }
    }

    fn segment<E: WelchSample>(&mut self, x: &[E]) {
        let dst: &mut [f32] = bytemuck::cast_slice_mut(&mut self.buf);
        let src = x.iter().flat_map(|v| {
            let c = v.to_cf32();
            [c.re, c.im]
        });
        for ((b, x), w) in dst.iter_mut().zip(src).zip(&self.window2) {
            *b = x * w;
        }
        self.fft
            .process_with_scratch(&mut self.buf, &mut self.scratch);
        let flat: &[f32] = bytemuck::cast_slice(&self.buf);
        for (a, x) in self.acc.iter_mut().zip(flat) {
            *a += x * x;
        }
    }

    fn peek(&self, totals: &mut [f64]) {
        for (t, a) in totals.iter_mut().zip(self.acc.chunks_exact(2)) {
            *t += f64::from(a[0]) + f64::from(a[1]);
        }
    }
}

impl Engine {
    fn segment<E: WelchSample>(&mut self, x: &[E]) {
        match self {
            Self::Simd(k) => k.segment(x),
            Self::Portable(p) => p.segment(x),
        }
    }

    /// The `count` segments that start every `hop` samples of `x` from its first.
    fn segments<E: WelchSample>(&mut self, x: &[E], hop: usize, count: usize) {
        match self {
            Self::Simd(k) => k.segments(x, hop, count),
            Self::Portable(p) => {
                let n = p.buf.len();
                for k in 0..count {
                    p.segment(&x[k * hop..k * hop + n]);
                }
            }
        }
    }

    /// Add the f32 sums to `totals` (natural bin order).
    fn peek(&self, totals: &mut [f64]) {
        match self {
            Self::Simd(k) => k.peek(totals),
            Self::Portable(p) => p.peek(totals),
        }
    }

    fn clear(&mut self) {
        match self {
            Self::Simd(k) => k.reset(),
            Self::Portable(p) => p.acc.fill(0.0),
        }
    }
}

impl std::fmt::Debug for Welch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Welch")
            .field("cfg", &self.cfg)
            .field("averages", &self.averages)
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl Welch {
    /// Plan the FFT and allocate every buffer. Power-of-two sizes get the fastest fused
    /// SIMD kernel the CPU runs at that size: AVX-512 (AVX-512F and DQ, sizes from 256),
    /// else AVX2 (AVX2 and FMA, sizes from 64); everything else the portable rustfft
    /// engine.
    pub fn new(cfg: WelchConfig) -> Result<Self> {
        Self::build(cfg, Choice::Fastest)
    }

    /// As [`Welch::new`], but always with the portable rustfft engine (for comparison;
    /// the engines agree to f32 rounding).
    pub fn new_portable(cfg: WelchConfig) -> Result<Self> {
        Self::build(cfg, Choice::Portable)
    }

    /// As [`Welch::new`], but with the engine named as [`Welch::engine`] names it
    /// (`"avx512"`, `"avx2"` or `"rustfft"`), for tests and benchmarks: it lets an
    /// AVX-512 CPU run the AVX2 kernel too. Fails (`engine`) on an unknown name, or on a
    /// kernel this CPU lacks or that does not take `fft_size`; never falls back.
    #[doc(hidden)]
    pub fn new_with_engine(cfg: WelchConfig, name: &str) -> Result<Self> {
        if name == "rustfft" {
            return Self::build(cfg, Choice::Portable);
        }
        let Some(isa) = Isa::ALL.into_iter().find(|i| i.name() == name) else {
            return Err(Error::InvalidSetting {
                field: "engine",
                detail: format!("{name} is not avx512, avx2 or rustfft"),
            });
        };
        let n = cfg.fft_size;
        let w = Self::build(cfg, Choice::Kernel(isa))?;
        if w.engine() != name {
            return Err(Error::InvalidSetting {
                field: "engine",
                detail: format!("{name} does not run fft_size {n} on this CPU"),
            });
        }
        Ok(w)
    }

    fn build(cfg: WelchConfig, choice: Choice) -> Result<Self> {
        cfg.validate()?;
        let n = cfg.fft_size;
        let window = cfg.window.build(n);
        let kernel = match choice {
            Choice::Fastest => SimdPsd::new(&window),
            Choice::Kernel(isa) => SimdPsd::with_isa(&window, isa),
            Choice::Portable => None,
        };
        let engine = match kernel {
            Some(k) => Engine::Simd(Box::new(k)),
            None => Engine::Portable(Box::new(Portable::new(&window))),
        };
        Ok(Self {
            hop: cfg.hop(),
            rho2: overlap_correlations(&window, cfg.hop()),
            window,
            engine,
            acc64: vec![0.0; n],
            partial: 0,
            pending: vec![Complex::default(); n],
            joined: vec![Complex::default(); n],
            fill: 0,
            averages: 0,
            samples: 0,
            power_sum: 0.0,
            clipped: 0,
            cfg,
        })
    }

    /// Which engine runs the segments: `"avx512"`, `"avx2"` or `"rustfft"`.
    pub fn engine(&self) -> &'static str {
        match &self.engine {
            Engine::Simd(k) => k.isa().name(),
            Engine::Portable(_) => "rustfft",
        }
    }

    /// The settings.
    pub fn config(&self) -> &WelchConfig {
        &self.cfg
    }

    /// Segments averaged so far.
    pub fn averages(&self) -> u64 {
        self.averages
    }

    /// Forget everything fed so far (keeps the plan and buffers).
    pub fn reset(&mut self) {
        self.engine.clear();
        self.acc64.iter_mut().for_each(|v| *v = 0.0);
        self.partial = 0;
        self.fill = 0;
        self.averages = 0;
        self.samples = 0;
        self.power_sum = 0.0;
        self.clipped = 0;
    }

    /// The stream broke (samples were lost) before the next block: the partial
    /// segment is discarded, so no segment spans the break. What was averaged so
    /// far is kept.
    pub fn break_stream(&mut self) {
        self.fill = 0;
    }

    /// Feed a block of samples (any length, including 0): CF32, or CS16 read as
    /// `v / 32768` (see [`WelchSample`]).
    #[inline]
    pub fn feed<E: WelchSample>(&mut self, block: &[E]) {
        E::feed_welch(self, block);
    }

    /// [`Welch::feed`]'s work, instantiated only by [`WelchSample::feed_welch`].
    fn feed_as<E: WelchSample>(&mut self, block: &[E]) {
        self.stats(block);
        let n = self.cfg.fft_size;
        let hop = self.hop;
        let mut pos = 0usize;
        // Complete the pending segment first.
        while self.fill > 0 {
            let need = n - self.fill;
            let avail = block.len() - pos;
            if avail < need {
                to_cf32(
                    &block[pos..],
                    &mut self.pending[self.fill..self.fill + avail],
                );
                self.fill += avail;
                return;
            }
            let fill = self.fill;
            self.segment_split(fill, &block[pos..pos + need]);
            if hop < fill {
                self.pending.copy_within(hop..fill, 0);
                self.fill = fill - hop;
            } else {
                pos += hop - fill;
                self.fill = 0;
            }
        }
        // Whole segments straight from the block, as many per call as the f32 sums
        // take before their next flush.
        let mut start = pos;
        while start + n <= block.len() {
            let whole = (block.len() - start - n) / hop + 1;
            let count = whole.min((FLUSH_SEGMENTS - self.partial) as usize);
            self.engine.segments(&block[start..], hop, count);
            self.counted(count);
            start += count * hop;
        }
        if start < block.len() {
            let rest = &block[start..];
            to_cf32(rest, &mut self.pending[..rest.len()]);
            self.fill = rest.len();
        }
    }

    fn stats<E: WelchSample>(&mut self, block: &[E]) {
        let clip = self.cfg.clip_level;
        if let Engine::Simd(k) = &self.engine {
            let (p, c) = k.stats(block, clip);
            self.power_sum += p;
            self.clipped += c;
            self.samples += block.len() as u64;
            return;
        }
        let mut clipped = 0u64;
        for chunk in block.chunks(4096) {
            let mut p = [0.0f32; 8];
            let mut c = [0u32; 8];
            let mut it = chunk.chunks_exact(8);
            for c8 in &mut it {
                for ((acc, cnt), x) in p.iter_mut().zip(c.iter_mut()).zip(c8) {
                    let x = x.to_cf32();
                    *acc += x.re * x.re + x.im * x.im;
                    *cnt += u32::from(x.re.abs().max(x.im.abs()) >= clip);
                }
            }
            let mut s: f64 = p.iter().map(|&v| f64::from(v)).sum();
            clipped += c.iter().map(|&v| u64::from(v)).sum::<u64>();
            for x in it.remainder().iter().map(|x| x.to_cf32()) {
                s += f64::from(x.re * x.re + x.im * x.im);
                clipped += u64::from(x.re.abs().max(x.im.abs()) >= clip);
            }
            self.power_sum += s;
        }
        self.clipped += clipped;
        self.samples += block.len() as u64;
    }

    /// One segment made of `pending[..fill]` followed by `tail`.
    fn segment_split<E: WelchSample>(&mut self, fill: usize, tail: &[E]) {
        self.joined[..fill].copy_from_slice(&self.pending[..fill]);
        to_cf32(tail, &mut self.joined[fill..]);
        self.engine.segment(&self.joined);
        self.counted(1);
    }

    /// `count` more segments are in the engine's f32 sums (at most
    /// [`FLUSH_SEGMENTS`] since the last flush).
    fn counted(&mut self, count: usize) {
        self.averages += count as u64;
        // count ≤ FLUSH_SEGMENTS − partial, so it fits.
        self.partial += count as u32;
        if self.partial >= FLUSH_SEGMENTS {
            self.engine.peek(&mut self.acc64);
            self.engine.clear();
            self.partial = 0;
        }
    }

    /// The estimate of everything fed so far (the estimator can keep going afterwards).
    pub fn finish(&self) -> Spectrum {
        let n = self.cfg.fft_size;
        let bin_hz = self.cfg.sample_rate_hz / n as f64;
        let wsum: f64 = self.window.iter().map(|&w| f64::from(w)).sum();
        let scale = if self.averages > 0 {
            1.0 / (wsum * wsum * self.averages as f64)
        } else {
            0.0
        };
        let half = n / 2;
        let mut power = self.acc64.clone();
        self.engine.peek(&mut power);
        // Below the arithmetic's resolution (RESOLUTION_DB under the mean bin) a bin
        // holds rounding, not the samples' power.
        let mean_bin = power.iter().sum::<f64>() * scale / n as f64;
        let resolution = mean_bin * 10f64.powf(-RESOLUTION_DB / 10.0);
        let mut psd_db = vec![0.0f32; n];
        for (i, out) in psd_db.iter_mut().enumerate() {
            // fftshift: output bin i holds FFT bin (i + n/2) mod n.
            let k = (i + n - half) % n;
            let p = power[k] * scale;
            // No power, no level: −∞, which no floor, peak or plot takes for a level.
            *out = if p > resolution && p > 0.0 {
                (10.0 * p.log10()) as f32
            } else {
                f32::NEG_INFINITY
            };
        }
        // The median bin without power (all-zero input, a constant, a noiseless
        // tone): no floor. Corrected by the median-to-mean ratio of a noise bin of
        // this many averages.
        // More than MAX_CLIPPED_FRACTION clipped: the receiver was not linear, and
        // neither a floor nor a peak of its spectrum is true.
        let saturated =
            self.samples > 0 && self.clipped as f64 / self.samples as f64 > MAX_CLIPPED_FRACTION;
        let shape = equivalent_averages(self.averages, &self.rho2);
        let levels = NoiseLevels::new(shape, n.saturating_sub(2 * self.cfg.dc_exclude_bins));
        let correction = levels.map_or(0.0, |l| l.floor_correction_db);
        let threshold = levels.map_or(self.cfg.min_snr_db, |l| l.threshold_db(self.cfg.min_snr_db));
        // Where the noise is level: the known passband, else the data decides
        // (docs/operator.md#peaks-and-the-noise-floor).
        let known = self.cfg.passband_hz.is_some();
        let site = if self.averages > 0 && !saturated {
            // A bandwidth as wide as the spectrum (or wider: a radio's analog filter set
            // at or above the rate) says nothing of the band's edges, where a decimating
            // front end rolls off: they are read as when the bandwidth is unknown.
            let passband = self.cfg.passband_bins();
            let edges = passband.is_none();
            floor_site(&psd_db, passband.unwrap_or(0..n), shape, edges)
        } else {
            FloorSite::NoLevel
        };
        let (mut noise_floor_db, mut upper, band) = match site.clone() {
            FloorSite::Level { bins, median_db } => {
                (Some(median_db + correction), None, Some(bins))
            }
            FloorSite::Uneven { upper_db } => (None, Some(upper_db + correction), None),
            FloorSite::NoLevel => (None, None, None),
        };
        // A wide plateau centred on the tuned frequency is a receive filter's passband
        // of the radio's own noise, or a signal tuned to the centre: unless the radio's
        // bandwidth says which, there is no floor.
        if let (Some(f), false) = (noise_floor_db, known) {
            let e = Emissions::of(
                &psd_db,
                (f + threshold) as f32,
                self.cfg.window,
                self.cfg.dc_exclude_bins,
            );
            if centred_plateau(&psd_db, half, &e, self.cfg.window, shape) {
                noise_floor_db = None;
                upper = Some(upper_level(&psd_db, 0..n) + correction);
            }
        }
        // No level at the median, yet a wide level plateau of noise over the centre
        // (noise through a filter whose stopband holds nothing, as a float recording
        // filtered before it was saved): noise that is not level, not noiseless samples.
        if site == FloorSite::NoLevel && self.averages > 0 && !saturated && mean_bin > 0.0 && !known
        {
            // The plateau's edges: 10 dB below the highest part's level.
            let top = upper_level(&psd_db, 0..n);
            let e = Emissions::of(
                &psd_db,
                (top - 10.0) as f32,
                self.cfg.window,
                self.cfg.dc_exclude_bins,
            );
            if top.is_finite() && centred_plateau(&psd_db, half, &e, self.cfg.window, shape) {
                upper = Some(top + correction);
            }
        }
        let noise_uneven = upper.is_some();
        let band = band.filter(|b| noise_floor_db.is_some() && b.len() < n);
        let peak_threshold_db = noise_floor_db.map(|_| threshold);
        let center = self.cfg.center_hz.unwrap_or(0.0);
        let start_hz = center - half as f64 * bin_hz;
        let noise_floor_band_hz = band.map(|b| {
            [
                start_hz + b.start as f64 * bin_hz,
                start_hz + (b.end - 1) as f64 * bin_hz,
            ]
        });
        // Peaks stand above the floor, and have an SNR; without one, above the level
        // no part's noise exceeds (noise not level) or the resolution limit and their
        // surroundings (noiseless samples), with no SNR.
        let above = match (noise_floor_db, upper) {
            (Some(f), _) => Some(PeakReference::Floor(f)),
            (None, Some(u)) => Some(PeakReference::Floor(u)),
            (None, None) => (mean_bin > 0.0 && !saturated)
                .then(|| PeakReference::Resolution(10.0 * mean_bin.log10() - ROUNDING_SPURS_DB)),
        };
        let reference = noise_floor_db.or(upper);
        // The emissions above the peak threshold, when there is a level to stand above.
        let emissions = reference.map(|f| {
            Emissions::of(
                &psd_db,
                (f + threshold) as f32,
                self.cfg.window,
                self.cfg.dc_exclude_bins,
            )
        });
        // A peak outside the known passband lies in the filter's roll-off: its level
        // is what reached the converter, not what arrived, and is named so.
        let passband = self.cfg.passband_bins().map(|b| {
            let hz = [
                start_hz + b.start as f64 * bin_hz,
                start_hz + (b.end - 1) as f64 * bin_hz,
            ];
            (b, hz)
        });
        let peaks = above.map_or_else(Vec::new, |above| {
            find_peaks(
                &psd_db,
                half,
                self.cfg.dc_exclude_bins,
                self.cfg.window,
                above,
                match above {
                    PeakReference::Floor(_) => threshold,
                    PeakReference::Resolution(_) => self.cfg.min_snr_db,
                },
                self.cfg.max_peaks,
            )
            .into_iter()
            .map(|(i, p)| {
                let emission = emissions
                    .as_ref()
                    .and_then(|e| e.wide(i, p, self.cfg.window));
                // A tone between bins: its place and power; else the bin's.
                let (offset, power_db) = emission
                    .is_none()
                    .then(|| tone_between_bins(&psd_db, i, self.cfg.window, noise_floor_db))
                    .flatten()
                    .unwrap_or((0.0, f64::from(p)));
                Peak {
                    frequency_hz: start_hz + (i as f64 + offset) * bin_hz,
                    power_db,
                    snr_db: noise_floor_db.map(|f| power_db - f),
                    emission_hz: emission.map(|r| {
                        [
                            start_hz + r.start as f64 * bin_hz,
                            start_hz + (r.end - 1) as f64 * bin_hz,
                        ]
                    }),
                    image_of_hz: None,
                    outside_passband_hz: passband
                        .as_ref()
                        .filter(|(b, _)| !b.contains(&i))
                        .map(|(_, hz)| *hz),
                }
            })
            .collect::<Vec<_>>()
        });
        let mut peaks = peaks;
        // A weak peak at a strong one's mirror about the centre may be the radio's
        // IQ image of it: named, never dropped (it is in the data).
        crate::dsp::peaks::mark_images(&mut peaks, start_hz + half as f64 * bin_hz, bin_hz);
        let (mean_power_dbfs, clipped_fraction) = if self.samples > 0 {
            (
                10.0 * (self.power_sum / self.samples as f64).log10(),
                self.clipped as f64 / self.samples as f64,
            )
        } else {
            (f64::NEG_INFINITY, 0.0)
        };
        Spectrum {
            samples: self.samples,
            averages: self.averages,
            fft_size: n,
            overlap: self.cfg.overlap,
            start_hz,
            bin_hz,
            centre_excluded_hz: (self.cfg.dc_exclude_bins as f64 - 0.5).max(0.0) * bin_hz,
            centre_carrier_db: noise_floor_db
                .zip(peak_threshold_db)
                .zip(emissions.as_ref())
                .and_then(|((f, t), e)| {
                    centre_carrier(
                        &psd_db,
                        half,
                        self.cfg.dc_exclude_bins,
                        f + t,
                        t,
                        e,
                        self.cfg.window,
                    )
                }),
            psd_db,
            peaks,
            noise_floor_db,
            peak_threshold_db,
            equivalent_averages: shape,
            mean_power_dbfs,
            clipped_fraction,
            noise_floor_band_hz,
            noise_uneven,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
