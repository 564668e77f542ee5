//! Streaming Welch power spectrum.
use super::peaks::{find_peaks, median_db, Peak};
use super::simd_psd::{Isa, SimdPsd};
use super::window::Window;
use crate::error::{Error, Result};
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
    /// 2: DC ±1 …), for the DC spike / LO leakage.
    pub dc_exclude_bins: usize,
    /// How many peaks to report.
    pub max_peaks: usize,
    /// Peaks less than this far above the noise floor are ignored (dB).
    pub min_snr_db: f64,
    /// |I| or |Q| at or above this level counts as clipped (full scale = 1.0).
    pub clip_level: f32,
}

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
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |field, detail: String| Err(Error::InvalidSetting { field, detail });
        if !(16..=1 << 20).contains(&self.fft_size) {
            return bad(
                "fft_size",
                format!("{} is not in 16..=1048576", self.fft_size),
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
    pub psd_db: Vec<f32>,
    /// Strongest distinct peaks, strongest first.
    pub peaks: Vec<Peak>,
    /// Median of `psd_db` (dB per bin).
    pub noise_floor_db: f64,
    /// Mean sample power, 10·log10(mean |x|²) (dBFS); −inf when no samples.
    pub mean_power_dbfs: f64,
    /// Fraction of samples with |I| or |Q| at the clip level.
    pub clipped_fraction: f64,
}

impl Spectrum {
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
/// use rxnode_hw::{Welch, WelchConfig};
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
/// # Ok::<(), rxnode_hw::Error>(())
/// ```
pub struct Welch {
    cfg: WelchConfig,
    hop: usize,
    window: Vec<f32>,
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

    fn segment(&mut self, x: &[Complex<f32>]) {
        let src: &[f32] = bytemuck::cast_slice(x);
        let dst: &mut [f32] = bytemuck::cast_slice_mut(&mut self.buf);
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
    fn segment(&mut self, x: &[Complex<f32>]) {
        match self {
            Self::Simd(k) => k.segment(x),
            Self::Portable(p) => p.segment(x),
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

    /// Feed a block of samples (any length, including 0).
    pub fn feed(&mut self, block: &[Complex<f32>]) {
        self.stats(block);
        let n = self.cfg.fft_size;
        let hop = self.hop;
        let mut pos = 0usize;
        // Complete the pending segment first.
        while self.fill > 0 {
            let need = n - self.fill;
            let avail = block.len() - pos;
            if avail < need {
                self.pending[self.fill..self.fill + avail].copy_from_slice(&block[pos..]);
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
        // Whole segments straight from the block.
        let mut start = pos;
        while start + n <= block.len() {
            self.segment(start, block);
            start += hop;
        }
        if start < block.len() {
            let rest = &block[start..];
            self.pending[..rest.len()].copy_from_slice(rest);
            self.fill = rest.len();
        }
    }

    fn stats(&mut self, block: &[Complex<f32>]) {
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
                    *acc += x.re * x.re + x.im * x.im;
                    *cnt += u32::from(x.re.abs().max(x.im.abs()) >= clip);
                }
            }
            let mut s: f64 = p.iter().map(|&v| f64::from(v)).sum();
            clipped += c.iter().map(|&v| u64::from(v)).sum::<u64>();
            for x in it.remainder() {
                s += f64::from(x.re * x.re + x.im * x.im);
                clipped += u64::from(x.re.abs().max(x.im.abs()) >= clip);
            }
            self.power_sum += s;
        }
        self.clipped += clipped;
        self.samples += block.len() as u64;
    }

    /// One segment starting at `block[start]`.
    fn segment(&mut self, start: usize, block: &[Complex<f32>]) {
        let n = self.cfg.fft_size;
        self.engine.segment(&block[start..start + n]);
        self.counted();
    }

    /// One segment made of `pending[..fill]` followed by `tail`.
    fn segment_split(&mut self, fill: usize, tail: &[Complex<f32>]) {
        self.joined[..fill].copy_from_slice(&self.pending[..fill]);
        self.joined[fill..].copy_from_slice(tail);
        self.engine.segment(&self.joined);
        self.counted();
    }

    fn counted(&mut self) {
        self.averages += 1;
        self.partial += 1;
        if self.partial == FLUSH_SEGMENTS {
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
        let mut psd_db = vec![0.0f32; n];
        for (i, out) in psd_db.iter_mut().enumerate() {
            // fftshift: output bin i holds FFT bin (i + n/2) mod n.
            let k = (i + n - half) % n;
            let p = power[k] * scale;
            *out = if p > 0.0 {
                (10.0 * p.log10()) as f32
            } else {
                -300.0
            };
        }
        let noise_floor_db = if self.averages > 0 {
            median_db(&psd_db)
        } else {
            f64::NEG_INFINITY
        };
        let center = self.cfg.center_hz.unwrap_or(0.0);
        let start_hz = center - half as f64 * bin_hz;
        let peaks = if self.averages > 0 {
            find_peaks(
                &psd_db,
                half,
                self.cfg.dc_exclude_bins,
                self.cfg.window,
                noise_floor_db,
                self.cfg.min_snr_db,
                self.cfg.max_peaks,
            )
            .into_iter()
            .map(|(i, p)| Peak {
                frequency_hz: start_hz + i as f64 * bin_hz,
                power_db: f64::from(p),
                snr_db: f64::from(p) - noise_floor_db,
            })
            .collect()
        } else {
            Vec::new()
        };
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
            psd_db,
            peaks,
            noise_floor_db,
            mean_power_dbfs,
            clipped_fraction,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Review of session 1: with an f32-only accumulator a long capture at a
    /// small FFT size lost precision (~2 M segments of one tone read ~0.5 dB
    /// low; past 2^24 segments the sum stopped growing at all).
    #[test]
    fn long_captures_keep_their_level() {
        let mut cfg = WelchConfig::new(16, 16.0);
        cfg.dc_exclude_bins = 0;
        let mut w = Welch::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        let block: Vec<Complex<f32>> = (0..1 << 16)
            .map(|i| Complex::from_polar(0.3, std::f32::consts::TAU * (i % 16) as f32 / 16.0))
            .collect();
        for _ in 0..256 {
            w.feed(&block); // 16 Mi samples, ~2 Mi segments
        }
        assert!(w.averages() > 2_000_000);
        let s = w.finish();
        let want = 20.0 * 0.3f64.log10(); // −10.46 dBFS
        assert!(
            (s.peaks[0].power_db - want).abs() < 0.01,
            "{:?}",
            s.peaks[0]
        );
    }

    /// The estimators under test for `cfg`: one per SIMD kernel this CPU runs at this
    /// size, forced (so that an AVX-512 CPU tests the AVX2 kernel too), or `Welch::new`
    /// where there is none.
    fn fast_engines(cfg: &WelchConfig) -> Vec<Welch> {
        let v: Vec<Welch> = Isa::ALL
            .into_iter()
            .filter(|i| i.on_this_cpu() && cfg.fft_size >= i.min_n())
            .map(|i| {
                let w = Welch::new_with_engine(cfg.clone(), i.name()).unwrap();
                assert_eq!(w.engine(), i.name());
                w
            })
            .collect();
        if v.is_empty() {
            vec![Welch::new(cfg.clone()).unwrap()]
        } else {
            v
        }
    }

    /// `Welch::new` picks AVX-512, else AVX2, else rustfft; `new_with_engine` never falls
    /// back.
    #[test]
    fn the_fastest_engine_is_chosen_and_a_forced_one_is_kept() {
        for n in [64usize, 128, 256, 2048, 1000] {
            let cfg = WelchConfig::new(n, 1e6);
            let want = Isa::ALL
                .into_iter()
                .find(|i| i.on_this_cpu() && n.is_power_of_two() && n >= i.min_n())
                .map_or("rustfft", Isa::name);
            assert_eq!(Welch::new(cfg.clone()).unwrap().engine(), want, "n {n}");
            let p = Welch::new_with_engine(cfg.clone(), "rustfft").unwrap();
            assert_eq!(p.engine(), "rustfft");
        }
        let err = |n: usize, name: &str| {
            Welch::new_with_engine(WelchConfig::new(n, 1e6), name)
                .unwrap_err()
                .to_string()
        };
        assert!(err(1024, "neon").contains("engine"));
        assert!(err(1000, "avx2").contains("engine"));
        assert!(err(128, "avx512").contains("engine"));
        assert!(err(8, "avx2").contains("fft_size"));
    }

    /// The SIMD engines' f32 sums are flushed to f64 every 1024 segments like the
    /// portable engine's: over several flushes they still agree.
    #[test]
    fn engines_agree_across_flushes() {
        let x = tones(300_000, 1e6, &[(203_125.0, 0.5)], 0.01); // on bin 52
        let mut cfg = WelchConfig::new(256, 1e6);
        cfg.dc_exclude_bins = 0;
        let mut slow = Welch::new_portable(cfg.clone()).unwrap();
        slow.feed(&x);
        let b = slow.finish();
        for mut fast in fast_engines(&cfg) {
            fast.feed(&x);
            assert!(fast.averages() > 2 * u64::from(FLUSH_SEGMENTS));
            let a = fast.finish();
            for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
                assert!((u - v).abs() < 0.01, "{}: {u} vs {v}", fast.engine());
            }
            assert!((a.peaks[0].power_db - 20.0 * 0.5f64.log10()).abs() < 0.01);
        }
    }

    /// Deterministic Gaussian noise (xorshift + Box-Muller).
    pub(crate) struct Noise(u64);
    impl Noise {
        pub(crate) fn new(seed: u64) -> Self {
            Self(seed.max(1))
        }
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        pub(crate) fn complex(&mut self, sigma: f64) -> Complex<f64> {
            let r = (-2.0 * self.uniform().ln()).sqrt() * sigma / 2f64.sqrt();
            let t = 2.0 * PI * self.uniform();
            Complex::new(r * t.cos(), r * t.sin())
        }
    }

    fn tones(n: usize, fs: f64, tones: &[(f64, f64)], noise: f64) -> Vec<Complex<f32>> {
        let mut g = Noise::new(7);
        (0..n)
            .map(|i| {
                let t = i as f64 / fs;
                let mut v = g.complex(noise);
                for &(f, a) in tones {
                    v += Complex::from_polar(a, 2.0 * PI * f * t);
                }
                Complex::new(v.re as f32, v.im as f32)
            })
            .collect()
    }

    #[test]
    fn tone_power_frequency_and_floor() {
        let fs = 1.024e6;
        let n = 1024;
        // Tone exactly on a bin: 100 bins above centre, amplitude 0.5 (−6.02 dBFS).
        let x = tones(1 << 16, fs, &[(100_000.0, 0.5)], 0.01);
        let mut cfg = WelchConfig::new(n, fs);
        cfg.center_hz = Some(100e6);
        let mut w = Welch::new(cfg).unwrap();
        w.feed(&x);
        let s = w.finish();
        assert_eq!(s.averages, ((1 << 16) - n) as u64 / 512 + 1);
        let p = &s.peaks[0];
        assert!((p.frequency_hz - 100.1e6).abs() < 1.0, "{p:?}");
        assert!((p.power_db + 6.02).abs() < 0.05, "{p:?}");
        // Noise: total power 1e-4 → per bin 1e-4 · ENBW(1.5) / n → −68.3 dB;
        // the median of a chi² with 2·averages dof sits slightly below the mean.
        assert!(
            (s.noise_floor_db + 68.3).abs() < 0.6,
            "{}",
            s.noise_floor_db
        );
        assert!((p.snr_db - (p.power_db - s.noise_floor_db)).abs() < 1e-9);
        assert!((s.mean_power_dbfs - 10.0 * (0.25f64 + 1e-4).log10()).abs() < 0.02);
        assert_eq!(s.clipped_fraction, 0.0);
        assert_eq!(s.psd_db.len(), n);
        assert!((s.frequency_of(0) - (100e6 - fs / 2.0)).abs() < 1e-6);
    }

    #[test]
    fn block_boundaries_do_not_change_the_result() {
        let x = tones(50_000, 1e6, &[(123_456.0, 0.3), (-200_000.0, 0.01)], 0.05);
        for overlap in [0.0, 0.5, 0.75, 0.9] {
            let mut cfg = WelchConfig::new(256, 1e6);
            cfg.overlap = overlap;
            let mut whole = Welch::new(cfg.clone()).unwrap();
            whole.feed(&x);
            let mut parts = Welch::new(cfg).unwrap();
            let mut i = 0;
            let mut k = 1;
            while i < x.len() {
                let e = (i + k).min(x.len());
                parts.feed(&x[i..e]);
                i = e;
                k = (k * 7 + 3) % 1000;
            }
            let (a, b) = (whole.finish(), parts.finish());
            assert_eq!(a.averages, b.averages, "overlap {overlap}");
            for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
                assert!((u - v).abs() < 1e-3, "overlap {overlap}");
            }
        }
    }

    #[test]
    fn distinct_peaks_not_neighbouring_bins() {
        let fs = 1e6;
        // A strong tone between bins, a weak one far away, DC offset.
        let mut x = tones(1 << 15, fs, &[(100_300.0, 0.9), (-250_000.0, 0.01)], 0.001);
        for v in &mut x {
            *v += Complex::new(0.05, 0.0);
        }
        let mut w = Welch::new(WelchConfig::new(1024, fs)).unwrap();
        w.feed(&x);
        let s = w.finish();
        assert_eq!(s.peaks.len(), 2, "{:?}", s.peaks);
        assert!((s.peaks[0].frequency_hz - 100_300.0).abs() < fs / 1024.0);
        assert!((s.peaks[1].frequency_hz + 250_000.0).abs() < fs / 1024.0);
        assert!(s.peaks[0].power_db > s.peaks[1].power_db);
    }

    #[test]
    fn clipping_is_counted() {
        let mut x = vec![Complex::new(0.1f32, 0.1); 1000];
        x[10] = Complex::new(1.0, 0.0);
        x[20] = Complex::new(0.0, -1.5);
        let mut w = Welch::new(WelchConfig::new(64, 1e3)).unwrap();
        w.feed(&x);
        assert!((w.finish().clipped_fraction - 0.002).abs() < 1e-12);
    }

    /// Issue 4: the AVX-512 and AVX2 kernels and the rustfft engine give the same
    /// estimate, for every overlap and however the input is cut into blocks.
    #[test]
    fn simd_and_portable_engines_agree() {
        let x = tones(70_001, 2e6, &[(123_456.0, 0.3), (-400_000.0, 0.001)], 0.02);
        for (n, overlap, window) in [
            (64, 0.5, Window::Hann),
            (128, 0.25, Window::BlackmanHarris),
            (256, 0.0, Window::Hann),
            (1024, 0.5, Window::BlackmanHarris),
            (2048, 0.5, Window::Hann),
            (2048, 0.75, Window::FlatTop),
            (8192, 0.5, Window::Hann),
        ] {
            let mut cfg = WelchConfig::new(n, 2e6);
            cfg.overlap = overlap;
            cfg.window = window;
            cfg.center_hz = Some(433.92e6);
            let mut slow = Welch::new_portable(cfg.clone()).unwrap();
            assert_eq!(slow.engine(), "rustfft");
            slow.feed(&x);
            let b = slow.finish();
            // `fast_engines` checks that each kernel really is what runs (not a silent
            // fallback).
            for mut fast in fast_engines(&cfg) {
                let e = fast.engine();
                for b in x.chunks(4099) {
                    fast.feed(b);
                }
                let a = fast.finish();
                assert_eq!(a.averages, b.averages);
                assert_eq!(a.samples, b.samples);
                assert_eq!(a.clipped_fraction, b.clipped_fraction);
                for (i, (u, v)) in a.psd_db.iter().zip(&b.psd_db).enumerate() {
                    assert!((u - v).abs() < 0.01, "{e} n {n} bin {i}: {u} vs {v}");
                }
                assert_eq!(a.peaks.len(), b.peaks.len(), "{e} n {n}");
                for (p, q) in a.peaks.iter().zip(&b.peaks) {
                    assert_eq!(p.frequency_hz, q.frequency_hz);
                    assert!((p.power_db - q.power_db).abs() < 0.01);
                }
                assert!((a.noise_floor_db - b.noise_floor_db).abs() < 0.01);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Issue 4: any power-of-two size, overlap, window and block cut: every engine
        /// this CPU runs agrees with rustfft bin for bin.
        #[test]
        fn engines_agree_on_random_input(
            bits in 6u32..=13,
            overlap in 0.0f64..0.9,
            window in 0usize..3,
            len in 0usize..40_000,
            cut in 1usize..9_000,
            seed in 1u64..u64::MAX,
        ) {
            let n = 1usize << bits;
            let mut g = Noise::new(seed);
            let x: Vec<Complex<f32>> = (0..len)
                .map(|_| {
                    let v = g.complex(0.3);
                    Complex::new(v.re as f32, v.im as f32)
                })
                .collect();
            let mut cfg = WelchConfig::new(n, 1e6);
            cfg.overlap = overlap;
            cfg.window = [Window::Hann, Window::BlackmanHarris, Window::FlatTop][window];
            let mut slow = Welch::new_portable(cfg.clone()).unwrap();
            slow.feed(&x);
            let b = slow.finish();
            for mut fast in fast_engines(&cfg) {
                for b in x.chunks(cut) {
                    fast.feed(b);
                }
                let a = fast.finish();
                proptest::prop_assert_eq!(a.averages, b.averages);
                proptest::prop_assert_eq!(a.clipped_fraction, b.clipped_fraction);
                if len > 0 {
                    proptest::prop_assert!((a.mean_power_dbfs - b.mean_power_dbfs).abs() < 1e-4);
                }
                for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
                    proptest::prop_assert!((u - v).abs() < 0.01, "{}: {} vs {}", fast.engine(), u, v);
                }
            }
        }
    }

    #[test]
    fn bad_settings_are_rejected_by_name() {
        let mut c = WelchConfig::new(8, 1e6);
        assert!(Welch::new(c.clone())
            .unwrap_err()
            .to_string()
            .contains("fft_size"));
        c.fft_size = 1024;
        c.overlap = 1.0;
        assert!(Welch::new(c.clone())
            .unwrap_err()
            .to_string()
            .contains("overlap"));
        c.overlap = 0.5;
        c.sample_rate_hz = f64::NAN;
        assert!(Welch::new(c.clone())
            .unwrap_err()
            .to_string()
            .contains("sample_rate_hz"));
        c.sample_rate_hz = 1e6;
        for level in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            c.clip_level = level;
            assert!(Welch::new(c.clone())
                .unwrap_err()
                .to_string()
                .contains("clip_level"));
        }
    }

    #[test]
    fn empty_input_has_no_peaks() {
        let w = Welch::new(WelchConfig::new(64, 1e3)).unwrap();
        let s = w.finish();
        assert_eq!(s.averages, 0);
        assert!(s.peaks.is_empty());
        assert!(s.mean_power_dbfs.is_infinite());
    }

    #[test]
    fn decimation_keeps_the_maximum() {
        let x = tones(1 << 14, 1e6, &[(100_000.0, 0.5)], 0.01);
        let mut w = Welch::new(WelchConfig::new(2048, 1e6)).unwrap();
        w.feed(&x);
        let s = w.finish();
        let (_, step, d) = s.decimated(512);
        assert_eq!(d.len(), 512);
        assert!((step - 4.0 * s.bin_hz).abs() < 1e-9);
        let m = d.iter().copied().fold(f32::MIN, f32::max);
        assert!((f64::from(m) - s.peaks[0].power_db).abs() < 1e-6);
    }
}
