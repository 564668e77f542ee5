//! A radio's frequency error from an LTE downlink's synchronisation signals (FDD,
//! normal cyclic prefix): the primary (PSS) and secondary (SSS) synchronisation
//! signals every 5 ms in the six central resource blocks
//! (docs/operator.md#calibrating-a-radio-without-a-generator).
//!
//! # How
//!
//! 1. **Decimate** to 1.92 MS/s (`resample`), the 128-point grid of the central
//!    1.08 MHz, whatever the radio's rate.
//! 2. **Acquire**: over 80 ms (16 PSS), correlate with the three PSS roots shifted
//!    to every carrier offset that ±`max_error_ppm` allows (3.75 kHz steps, by rotating
//!    FFT bins), fold the correlation power every 5 ms — each fold corrected for the
//!    sample-clock drift that offset implies, as one crystal drives LO and sample
//!    clock — and take the strongest peak against its fold's mean. Below the
//!    threshold, the next 80 ms is tried, four times at most: then "no LTE cell found".
//! 3. **Track** every later PSS in a ±4-sample window around its predicted arrival
//!    (a running fit of the arrivals): its correlation peak, then a 128-point FFT of
//!    the PSS gives the fractional arrival time (the delay whose linear phase across
//!    the subcarriers best aligns them: the correlation interpolated exactly; with the
//!    SSS too once it is known) and the carrier phase at a known sample position. The
//!    SSS one symbol earlier is correlated with the 2 × 168 SSS of that root (which of
//!    the two PSS per frame is subframe 0 is a hypothesis too), and the cyclic prefixes
//!    of the 70 symbols of the half frame are correlated with their symbol tails (the
//!    carrier offset modulo 15 kHz).
//! 4. **Estimate** (at the end, from one small record per PSS):
//!    - the arrival times' slope against the PSS count gives the sample clock's error
//!      (ε_τ), hence where the carrier must be (ε drives LO and sample clock alike);
//!    - the cyclic prefixes and the PSS–SSS phase give the carrier offset modulo
//!      15 kHz and 14 kHz, each unwrapped around that (so a lock onto a Zadoff-Chu
//!      delay-Doppler ghost cannot pull them);
//!    - together they place the carrier within a few tens of Hz, enough to pick the
//!      right one of the PSS phase progression's aliases (200 Hz apart: one turn per
//!      5 ms);
//!    - the carrier phase against sample position, fitted over every PSS (outliers
//!      rejected), gives the offset to a small fraction of a Hz; its standard error
//!      from the fit residuals is the uncertainty. If the aliases cannot be told apart
//!      safely (4 σ), the coarser combined estimate is reported instead, never a guess:
//!      its σ widened by the looks' scatter about it when they disagree more than
//!      their σ allow. When the arrival drift and the carrier looks disagree (no
//!      cross-check left), no number: the step fails, saying the error is not
//!      measurable.
//!    - the SSS candidate that stands out gives N_ID_1, so PCI = 3·N_ID_1 + N_ID_2.
//!
//! Memory: the 1.92 MS/s samples of the last ~10 ms; while acquiring, the 80 ms window
//! (and its block spectra) and the samples that arrive while the search, spread over
//! them, runs (at most 1 s: `ACQ_SPREAD`); one small record per PSS (at most
//! [`MAX_RECORDS`]).
use super::{
    ppm_from_offset, FreqCalConfig, FreqCalDetection, FreqCalError, FreqCalEstimate,
    FreqCalEstimator, FreqCalEvidence, FreqCalMethod,
};
use crate::dsp::honest::Checks;
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::f64::consts::PI;
use std::sync::Arc;

mod resample;
pub(crate) mod seq;
mod synth;
#[cfg(test)]
mod tests;

use resample::{Resampler, LTE_RATE_HZ};
use seq::{bin, pss, pss_time, sss, subcarrier, NFFT, N_ID_1_COUNT, SEQ_LEN};
pub use synth::LteScene;

/// Samples per 5 ms (half frame) at 1.92 MS/s: the PSS period.
const HALF_FRAME: usize = 9600;
/// A slot at 1.92 MS/s.
const SLOT: usize = 960;
/// OFDM symbols 1..6 of a slot: 9 cyclic-prefix samples + 128.
const SYMBOL: usize = 137;
/// Where the PSS's useful part starts in slot 0 (after symbols 0..5 and its own CP).
const PSS_IN_SLOT: usize = 10 + NFFT + 5 * SYMBOL + 9;
/// In a TDD cell (frame structure type 2, TS 36.211 §6.11.2.2) the SSS is the last
/// symbol of subframe 0/5 and the PSS the third of subframe 1/6: its useful part starts
/// this many samples before the PSS's (slot 2·k symbol 0 with its 10-sample CP, then
/// symbols 1 and 2), where an FDD cell's is one symbol (137) before.
const TDD_SSS_LEAD: usize = 10 + NFFT + 2 * SYMBOL;
/// Half frames folded while acquiring.
const ACQ_PERIODS: usize = 16;
/// Acquisition FFT size and the new samples per block (the rest is the PSS overlap).
const ACQ_FFT: usize = 512;
const ACQ_STEP: usize = ACQ_FFT - NFFT;
/// The acquisition window (samples at 1.92 MS/s).
const ACQ_LEN: usize = ACQ_PERIODS * HALF_FRAME + ACQ_FFT;
/// Acquisition windows tried before giving up.
const ACQ_ATTEMPTS: usize = 4;
/// The acquisition searches one (root, offset) pair (about 2 ms of CPU) per
/// `min(HALF_FRAME, ACQ_SPREAD / pairs)` new 1.92 MS/s samples, so no block waits for the
/// whole search (0.3–0.7 CPU-s) and the capture engine's DSP thread keeps pace; the
/// samples that arrive meanwhile (at most `ACQ_SPREAD`: 1 s) are kept and tracked once it
/// is done, so no PSS is lost to the wait.
const ACQ_SPREAD: usize = 1_920_000;
/// A fold peak must stand this far above its fold's mean: with 16 folds of noise
/// (Gamma(16)/16), less than 1e-4 chance over all roots, offsets and lags at 2.7 GHz.
const ACQ_THRESHOLD: f64 = 3.6;
/// Tracking window: ± samples around the predicted arrival.
const TRACK_HALF_WINDOW: i64 = 4;
/// A tracked PSS counts as found when its normalised correlation |ρ|² exceeds this
/// (noise alone: chance e^(−128·x) per lag, 3e-3 over the window).
const FOUND_RHO2: f64 = 8.0 / NFFT as f64;
/// The FFT window starts this many samples into the PSS's cyclic prefix (9 samples).
const CP_BACKOFF: i64 = 2;
/// At most this many PSS records are kept (≈ 11 minutes); later PSS are not used.
pub(crate) const MAX_RECORDS: usize = 1 << 17;
/// Fewer found PSS than this: no estimate.
const MIN_FOUND: usize = 10;
/// Less than this fraction of the expected PSS found: no estimate.
const MIN_CONFIDENCE: f64 = 0.25;
/// A phase sample off its neighbours' median by more than this (rad) is an outlier.
const PHASE_GATE: f64 = 1.2;
/// The alias must be picked with this many standard deviations of margin.
const ALIAS_SIGMAS: f64 = 4.0;

/// The SSS candidate's 62 subcarriers, timing slope removed.
type SssSpectrum = [Complex<f64>; SEQ_LEN];

/// One tracked PSS.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// PSS count since the first tracked one.
    n: u64,
    /// Normalised correlation |ρ|² at the peak.
    rho2: f64,
    /// FFT window start (1.92 MS/s sample index).
    w: i64,
    /// Arrival of the PSS's useful part (fractional sample index).
    tau: f64,
    /// Carrier phase of the mixed-down signal at the window centre `w + 63.5` (rad).
    theta: f64,
    /// SNR per subcarrier, dB.
    snr_db: f64,
    /// Cyclic-prefix correlation over the 70 following symbols (mixed-down signal).
    cp: Complex<f64>,
    /// PSS correlation times the conjugate SSS correlation (once the SSS is known;
    /// else zero): its phase is the carrier's turn over one symbol.
    ps: Complex<f64>,
}

enum State {
    Acquiring { attempts: usize },
    Tracking(Box<Track>),
    GaveUp,
}

struct Track {
    n_id_2: usize,
    /// Mix-down frequency (Hz at the nominal 1.92 MS/s) from acquisition.
    mix_hz: f64,
    /// Samples of `buf` already mixed down.
    mixed: usize,
    /// Next PSS count and the initial prediction.
    next_n: u64,
    tau0: f64,
    period0: f64,
    /// Running least squares of arrival against count (found PSS only).
    fit: LineFit,
    records: Vec<Record>,
    processed: u64,
    /// SSS metric per (N_ID_1, which PSS parity is subframe 0).
    sss_acc: Vec<f64>,
    /// The same metric where a TDD cell's SSS would be (three symbols before the PSS).
    sss_acc_tdd: Vec<f64>,
    sss_table: Vec<[f32; SEQ_LEN]>,
    /// The SSS hypothesis (N_ID_1, parity) once it stands out.
    sss_known: Option<(usize, usize)>,
}

/// Incremental least squares line y = a + b·x.
#[derive(Debug, Clone, Copy, Default)]
struct LineFit {
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

impl LineFit {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
    }
    /// (a, b), when at least two distinct x.
    fn line(&self) -> Option<(f64, f64)> {
        let det = self.n * self.sxx - self.sx * self.sx;
        if self.n < 2.0 || det.abs() < 1e-9 {
            return None;
        }
        let b = (self.n * self.sxy - self.sx * self.sy) / det;
        Some(((self.sy - b * self.sx) / self.n, b))
    }
}

/// Least squares line through (x, y) with weights 1: (a, b, σ_b, residual rms).
fn fit_line(pts: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n as f64;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let b = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    let a = my - b * mx;
    let rss: f64 = pts.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let s2 = rss / (n - 2) as f64;
    Some((a, b, (s2 / sxx).sqrt(), s2.sqrt()))
}

/// Wrap an angle to (−π, π].
fn wrap(a: f64) -> f64 {
    let r = (a + PI).rem_euclid(2.0 * PI) - PI;
    if r <= -PI {
        r + 2.0 * PI
    } else {
        r
    }
}

/// The carrier offset residual (Hz, after the mix-down) from products whose phase
/// turns by 2π·offset·`lag`/1.92 MS/s, its standard error from their spread, and its
/// alias spacing (Hz). `None` with fewer than two products.
fn circular_offset(products: &[Complex<f64>], lag: f64) -> Option<(f64, f64, f64)> {
    if products.len() < 2 {
        return None;
    }
    let sum: Complex<f64> = products.iter().sum();
    let k = LTE_RATE_HZ / (2.0 * PI * lag);
    let var = products
        .iter()
        .map(|p| wrap(p.arg() - sum.arg()).powi(2))
        .sum::<f64>()
        / (products.len() - 1) as f64;
    let sd = (var.sqrt() / (products.len() as f64).sqrt() * k.abs()).max(1e-3);
    Some((sum.arg() * k, sd, LTE_RATE_HZ / lag.abs()))
}

/// The inverse-variance mean of (value, σ) measurements of one quantity, its σ, and
/// the Birge ratio √(χ²/(n − 1)) of their scatter about it (1 for a single one): above
/// 1, they disagree by more than their σ allow. `None` when empty.
fn combine(looks: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let w: f64 = looks.iter().map(|l| l.1.powi(-2)).sum();
    if looks.is_empty() || !(w > 0.0 && w.is_finite()) {
        return None;
    }
    let mean = looks.iter().map(|l| l.0 * l.1.powi(-2)).sum::<f64>() / w;
    let birge = if looks.len() > 1 {
        let chi2: f64 = looks.iter().map(|l| ((l.0 - mean) / l.1).powi(2)).sum();
        (chi2 / (looks.len() - 1) as f64).sqrt()
    } else {
        1.0
    };
    Some((mean, w.powf(-0.5), birge))
}

/// |Σ_k Y_k·exp(j2πkδ/128)|² for a PSS that starts δ samples into its FFT window.
fn aligned_power(y: &[Complex<f64>; SEQ_LEN], delta: f64) -> f64 {
    let w = Complex::from_polar(1.0, 2.0 * PI * delta / NFFT as f64);
    // exp(j2πkδ/128) for k = −31..−1, then +1..+31, by rotation.
    let mut r = Complex::from_polar(1.0, -2.0 * PI * 31.0 * delta / NFFT as f64);
    let mut acc = Complex::new(0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        if i == 31 {
            r *= w; // skip DC
        }
        acc += v * r;
        r *= w;
    }
    acc.norm_sqr()
}

/// The delay in `start ± 2.5` samples maximising [`aligned_power`]: a 0.25-sample grid,
/// then golden-section search to 1e-4 sample.
fn best_delay(
    y: &[Complex<f64>; SEQ_LEN],
    y2: Option<&[Complex<f64>; SEQ_LEN]>,
    start: f64,
) -> f64 {
    let aligned_power = |y: &[Complex<f64>; SEQ_LEN], d: f64| {
        aligned_power(y, d) + y2.map_or(0.0, |y2| aligned_power(y2, d))
    };
    let mut best = (f64::MIN, start);
    for i in -10..=10 {
        let d = start + 0.25 * f64::from(i);
        let p = aligned_power(y, d);
        if p > best.0 {
            best = (p, d);
        }
    }
    let (mut lo, mut hi) = (best.1 - 0.25, best.1 + 0.25);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (aligned_power(y, x1), aligned_power(y, x2));
    while hi - lo > 1e-4 {
        if f1 > f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = aligned_power(y, x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = aligned_power(y, x2);
        }
    }
    0.5 * (lo + hi)
}

/// Phases (time, wrapped) unwrapped from record `first` on, each against the median of
/// the last three accepted; those off by more than `PHASE_GATE` are left out.
/// Returns (record index, time, unwrapped phase).
fn unwrap_from(psis: &[(f64, f64)], first: usize) -> Vec<(usize, f64, f64)> {
    let mut hist = [0.0f64; 3];
    let mut len = 0usize;
    let mut out = Vec::with_capacity(psis.len() - first);
    for (i, &(tt, psi)) in psis.iter().enumerate().skip(first) {
        let reference = match len {
            0 => psi,
            1 => hist[0],
            2 => 0.5 * (hist[0] + hist[1]),
            _ => {
                let mut h = hist;
                median(&mut h)
            }
        };
        let u = reference + wrap(psi - reference);
        if (u - reference).abs() > PHASE_GATE {
            continue;
        }
        hist[len % 3] = u;
        len += 1;
        out.push((i, tt, u));
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The LTE PSS/SSS estimator ([`FreqCalEstimator`] for [`FreqCalMethod::Lte`]).
pub(crate) struct LteEstimator {
    config: FreqCalConfig,
    resampler: Resampler,
    /// 1.92 MS/s samples from index `buf_start` on.
    buf: Vec<Complex<f32>>,
    buf_start: i64,
    seen: u64,
    state: State,
    /// PSS expected in acquisition windows that found nothing.
    missed_in_acquisition: u64,
    /// PSS templates (time, 128) and their 512-point spectra.
    templates: [[Complex<f32>; NFFT]; 3],
    template_spectra: Vec<Vec<Complex<f32>>>,
    fft128: Arc<dyn Fft<f32>>,
    fft512: Arc<dyn Fft<f32>>,
    ifft512: Arc<dyn Fft<f32>>,
    scratch: Vec<Complex<f32>>,
    /// Offsets (bins of 3.75 kHz) the acquisition searches.
    shifts: Vec<i64>,
    /// The acquisition in progress, if any.
    search: Option<Box<Search>>,
    /// New samples not yet spent on acquisition work.
    credit: usize,
    /// New samples per (root, offset) pair searched.
    per_pair: usize,
    /// Where the last searched acquisition window ended (1.92 MS/s sample index).
    searched_to: i64,
}

/// An acquisition in progress over the first `ACQ_LEN` samples of the buffer: the
/// window's block spectra, the (root, offset) pairs done, the best fold peak so far.
struct Search {
    spectra: Vec<Complex<f32>>,
    fold: Vec<f32>,
    work: Vec<Complex<f32>>,
    /// Next pair: `root · shifts + offset index`.
    next: usize,
    /// (metric, root, shift, fold index).
    best: (f64, usize, i64, usize),
}

impl LteEstimator {
    /// An estimator for `config`: the LTE downlink centred at `carrier_hz`, received by
    /// a radio tuned to `center_hz` at `sample_rate_hz` (≥ 1.92 MS/s).
    pub(crate) fn new(config: FreqCalConfig) -> Result<Self, FreqCalError> {
        let bad =
            |field: &'static str, detail: String| FreqCalError::InvalidSetting { field, detail };
        let c = &config;
        if !(c.sample_rate_hz.is_finite() && c.sample_rate_hz >= LTE_RATE_HZ - 1e-6) {
            return Err(bad(
                "sample_rate_hz",
                format!(
                    "{} S/s is below the 1.92 MS/s an LTE PSS needs",
                    c.sample_rate_hz
                ),
            ));
        }
        if c.sample_rate_hz > 200e6 {
            return Err(bad(
                "sample_rate_hz",
                format!("{} S/s is above 200 MS/s", c.sample_rate_hz),
            ));
        }
        if !(c.carrier_hz.is_finite()
            && c.carrier_hz > 0.0
            && c.center_hz.is_finite()
            && c.center_hz > 0.0)
        {
            return Err(bad(
                "frequency_hz",
                format!("{} Hz is not a frequency", c.carrier_hz),
            ));
        }
        if !(c.max_error_ppm.is_finite() && c.max_error_ppm > 0.0 && c.max_error_ppm <= 200.0) {
            return Err(bad(
                "max_error_ppm",
                format!("{} is not in (0, 200]", c.max_error_ppm),
            ));
        }
        let lo = super::offset_for_ppm(c.carrier_hz, c.center_hz, c.max_error_ppm);
        let hi = super::offset_for_ppm(c.carrier_hz, c.center_hz, -c.max_error_ppm);
        // The PSS spans ±0.47 MHz; the decimator passes ±0.72 MHz.
        let reach = lo.abs().max(hi.abs());
        if reach > 0.22e6 {
            return Err(bad(
                "frequency_hz",
                format!(
                    "an LTE carrier at {:.6} MHz received at {:.6} MHz with ±{} ppm can be {:.0} kHz off centre; \
                     at most 220 kHz fits the 1.92 MS/s search",
                    c.carrier_hz / 1e6,
                    c.center_hz / 1e6,
                    c.max_error_ppm,
                    reach / 1e3
                ),
            ));
        }
        let bin_hz = LTE_RATE_HZ / ACQ_FFT as f64;
        let s_lo = ((lo - 0.5 * bin_hz) / bin_hz).floor() as i64;
        let s_hi = ((hi + 0.5 * bin_hz) / bin_hz).ceil() as i64;
        let mut planner = FftPlanner::new();
        let fft512 = planner.plan_fft_forward(ACQ_FFT);
        let templates = [pss_time(0), pss_time(1), pss_time(2)];
        let template_spectra = templates
            .iter()
            .map(|t| {
                let mut v = vec![Complex::new(0.0, 0.0); ACQ_FFT];
                v[..NFFT].copy_from_slice(t);
                fft512.process(&mut v);
                v.iter().map(|x| x.conj()).collect()
            })
            .collect();
        Ok(Self {
            config,
            resampler: Resampler::new(c.sample_rate_hz),
            buf: Vec::with_capacity(ACQ_LEN + ACQ_SPREAD + 8 * HALF_FRAME),
            buf_start: 0,
            seen: 0,
            state: State::Acquiring { attempts: 0 },
            missed_in_acquisition: 0,
            templates,
            template_spectra,
            fft128: planner.plan_fft_forward(NFFT),
            fft512,
            ifft512: planner.plan_fft_inverse(ACQ_FFT),
            scratch: Vec::new(),
            shifts: (s_lo..=s_hi).collect(),
            search: None,
            credit: 0,
            per_pair: (ACQ_SPREAD / (3 * (s_hi - s_lo + 1)).max(1) as usize).clamp(1, HALF_FRAME),
            searched_to: 0,
        })
    }

    /// The radio error (as a fraction) that a carrier offset of `offset_hz` means.
    fn eps_of_offset(&self, offset_hz: f64) -> f64 {
        ppm_from_offset(self.config.carrier_hz, self.config.center_hz, offset_hz) * 1e-6
    }

    /// Advance: acquisition work as the credit allows (all of it when `unlimited`,
    /// at the end of the capture), then tracking.
    fn step(&mut self, unlimited: bool) {
        loop {
            match &mut self.state {
                State::GaveUp => {
                    self.buf.clear();
                    return;
                }
                State::Acquiring { attempts } => {
                    if self.buf.len() < ACQ_LEN {
                        return;
                    }
                    let attempts_now = *attempts + 1;
                    let mut search = match self.search.take() {
                        Some(s) => s,
                        None => Box::new(self.start_search()),
                    };
                    let total = 3 * self.shifts.len();
                    let left = total - search.next;
                    let pairs = if unlimited {
                        left
                    } else {
                        (self.credit / self.per_pair).min(left)
                    };
                    self.credit -= (pairs * self.per_pair).min(self.credit);
                    self.search_pairs(&mut search, pairs);
                    if search.next < total {
                        self.search = Some(search);
                        return;
                    }
                    self.searched_to = self.buf_start + ACQ_LEN as i64;
                    match self.acquired(&search) {
                        Some(track) => self.state = State::Tracking(Box::new(track)),
                        None => {
                            // The next window: the newest samples (those that arrived
                            // during the search), at least the next 80 ms.
                            self.missed_in_acquisition += ACQ_PERIODS as u64;
                            let drop = (ACQ_PERIODS * HALF_FRAME)
                                .max(self.buf.len().saturating_sub(ACQ_LEN));
                            self.buf.drain(..drop);
                            self.buf_start += drop as i64;
                            self.state = if attempts_now >= ACQ_ATTEMPTS {
                                State::GaveUp
                            } else {
                                State::Acquiring {
                                    attempts: attempts_now,
                                }
                            };
                        }
                    }
                }
                State::Tracking(_) => {
                    self.track();
                    return;
                }
            }
        }
    }

    /// The block spectra of the acquisition window (the first `ACQ_LEN` samples).
    fn start_search(&mut self) -> Search {
        let blocks = ACQ_PERIODS * HALF_FRAME / ACQ_STEP;
        let mut spectra = vec![Complex::new(0.0f32, 0.0); blocks * ACQ_FFT];
        for (b, s) in spectra.chunks_mut(ACQ_FFT).enumerate() {
            s.copy_from_slice(&self.buf[b * ACQ_STEP..b * ACQ_STEP + ACQ_FFT]);
            self.fft512.process(s);
        }
        Search {
            spectra,
            fold: vec![0.0f32; HALF_FRAME],
            work: vec![Complex::new(0.0f32, 0.0); ACQ_FFT],
            next: 0,
            best: (0.0, 0, 0, 0),
        }
    }

    /// Search the next `pairs` (root, offset) pairs of `search`: correlate with the root
    /// shifted by the offset, fold every 5 ms (corrected for the sample-clock drift that
    /// offset implies) and keep the strongest peak against its fold's mean.
    fn search_pairs(&self, search: &mut Search, pairs: usize) {
        let bin_hz = LTE_RATE_HZ / ACQ_FFT as f64;
        let Search {
            spectra,
            fold,
            work,
            next,
            best,
        } = search;
        for _ in 0..pairs {
            let root = *next / self.shifts.len();
            let s = self.shifts[*next % self.shifts.len()];
            *next += 1;
            let tmpl = &self.template_spectra[root];
            let eps = self.eps_of_offset(s as f64 * bin_hz);
            let period = HALF_FRAME as f64 * (1.0 + eps);
            fold.iter_mut().for_each(|v| *v = 0.0);
            for (b, spec) in spectra.chunks(ACQ_FFT).enumerate() {
                for (k, w) in work.iter_mut().enumerate() {
                    let t = (k as i64 - s).rem_euclid(ACQ_FFT as i64) as usize;
                    *w = spec[k] * tmpl[t];
                }
                self.ifft512.process(work);
                for (m, c) in work[..ACQ_STEP].iter().enumerate() {
                    let pos = (b * ACQ_STEP + m) as f64;
                    let p = (pos / period).floor();
                    let f = (pos - p * period).round() as usize % HALF_FRAME;
                    fold[f] += c.norm_sqr();
                }
            }
            let mean = fold.iter().map(|&v| f64::from(v)).sum::<f64>() / HALF_FRAME as f64;
            let (idx, peak) =
                fold.iter()
                    .enumerate()
                    .fold((0, 0.0f32), |a, (i, &v)| if v > a.1 { (i, v) } else { a });
            if mean > 0.0 {
                let metric = f64::from(peak) / mean;
                if metric > best.0 {
                    *best = (metric, root, s, idx);
                }
            }
        }
    }

    /// The track a finished search found, if its peak stands out.
    fn acquired(&self, search: &Search) -> Option<Track> {
        let bin_hz = LTE_RATE_HZ / ACQ_FFT as f64;
        let (metric, root, s, idx) = search.best;
        tracing::debug!(metric, root, shift = s, idx, "lte acquisition");
        if metric < ACQ_THRESHOLD {
            return None;
        }
        let mix_hz = s as f64 * bin_hz;
        let eps = self.eps_of_offset(mix_hz);
        Some(Track {
            n_id_2: root,
            mix_hz,
            mixed: 0,
            next_n: 0,
            tau0: self.buf_start as f64 + idx as f64,
            period0: HALF_FRAME as f64 * (1.0 + eps),
            fit: LineFit::default(),
            records: Vec::new(),
            processed: 0,
            sss_acc: vec![0.0; 2 * N_ID_1_COUNT],
            sss_acc_tdd: vec![0.0; 2 * N_ID_1_COUNT],
            sss_table: (0..2 * N_ID_1_COUNT)
                .map(|i| sss(i / 2, root, i % 2 == 1).map(f32::from))
                .collect(),
            sss_known: None,
        })
    }

    /// Process every PSS whose surroundings are in `buf`.
    fn track(&mut self) {
        let State::Tracking(t) = &mut self.state else {
            return;
        };
        // Mix down what is new: exact phase every 1024 samples, a rotating phasor between.
        let step = Complex::from_polar(1.0, -2.0 * PI * t.mix_hz / LTE_RATE_HZ);
        let mut rot = Complex::new(1.0f64, 0.0);
        for (i, x) in self.buf.iter_mut().enumerate().skip(t.mixed) {
            if i == t.mixed || i % 1024 == 0 {
                let idx = self.buf_start + i as i64;
                rot = Complex::from_polar(
                    1.0,
                    -2.0 * PI * (t.mix_hz * idx as f64 / LTE_RATE_HZ).fract(),
                );
            }
            *x *= Complex::new(rot.re as f32, rot.im as f32);
            rot *= step;
        }
        t.mixed = self.buf.len();
        let buf_end = self.buf_start + self.buf.len() as i64;
        // Samples before `floor` are done with.
        let mut floor = self.buf_start;
        loop {
            let n = t.next_n;
            let pred = match t.fit.line() {
                Some((a, b)) => a + b * n as f64,
                None => t.tau0 + t.period0 * n as f64,
            };
            let centre = pred.round() as i64;
            // Needed: this half frame from its slot 0 (the SSS and the 70 symbols' cyclic
            // prefixes), up to the end of its slot 9.
            let need_lo = centre - PSS_IN_SLOT as i64 - TRACK_HALF_WINDOW - 4;
            let need_hi = centre - PSS_IN_SLOT as i64 + HALF_FRAME as i64 + TRACK_HALF_WINDOW + 2;
            if need_hi > buf_end {
                break;
            }
            t.next_n += 1;
            if need_lo < floor {
                continue;
            }
            if t.records.len() >= MAX_RECORDS {
                break;
            }
            t.processed += 1;
            let known_sss = t.sss_known.map(|(n1, parity)| {
                let sub5 = (n + parity as u64) % 2 == 1;
                &t.sss_table[2 * n1 + usize::from(sub5)]
            });
            let rec = Self::measure(
                &self.buf,
                self.buf_start,
                centre,
                n,
                &self.templates[t.n_id_2],
                t.n_id_2,
                known_sss,
                &self.fft128,
                &mut self.scratch,
            );
            if let Some((rec, sss_spec, tdd_spec)) = rec {
                if rec.rho2 >= FOUND_RHO2 {
                    t.fit.add(n as f64, rec.tau);
                    // Table row 2·N_ID_1 + (subframe 5); hypothesis 2·N_ID_1 + parity,
                    // where parity says which PSS count parity is subframe 0. The same
                    // at the TDD position, to tell the frame structure.
                    for (spec, acc) in
                        [(&sss_spec, &mut t.sss_acc), (&tdd_spec, &mut t.sss_acc_tdd)]
                    {
                        for n1 in 0..N_ID_1_COUNT {
                            let corr = |row: &[f32; SEQ_LEN]| {
                                let mut a = Complex::new(0.0f64, 0.0);
                                for (v, &s) in spec.iter().zip(row.iter()) {
                                    a += v * f64::from(s);
                                }
                                a.norm_sqr()
                            };
                            let (v0, v5) =
                                (corr(&t.sss_table[2 * n1]), corr(&t.sss_table[2 * n1 + 1]));
                            for parity in 0..2u64 {
                                let sub5 = (n + parity) % 2 == 1;
                                acc[2 * n1 + parity as usize] += if sub5 { v5 } else { v0 };
                            }
                        }
                    }
                    t.records.push(rec);
                    if t.sss_known.is_none() && t.records.len() >= 40 && t.records.len() % 10 == 0 {
                        t.sss_known = sss_decision(&t.sss_acc);
                    }
                }
            }
            // Keep from just before the next half frame (dropped once, after the loop:
            // after an acquisition the buffer may hold a second of samples).
            floor = (centre + HALF_FRAME as i64 - PSS_IN_SLOT as i64 - 2 * TRACK_HALF_WINDOW - 8)
                .max(floor);
        }
        let drop = ((floor - self.buf_start) as usize).min(self.buf.len());
        self.buf.drain(..drop);
        self.buf_start += drop as i64;
        t.mixed = t.mixed.saturating_sub(drop);
    }

    /// Measure the PSS expected near `centre`: the correlation peak, fractional arrival,
    /// phase, SNR, cyclic prefixes, and the SSS's subcarriers (timing slope removed).
    #[allow(clippy::too_many_arguments)]
    fn measure(
        buf: &[Complex<f32>],
        buf_start: i64,
        centre: i64,
        n: u64,
        tmpl: &[Complex<f32>; NFFT],
        n_id_2: usize,
        known_sss: Option<&[f32; SEQ_LEN]>,
        fft128: &Arc<dyn Fft<f32>>,
        scratch: &mut Vec<Complex<f32>>,
    ) -> Option<(Record, SssSpectrum, SssSpectrum)> {
        let at = |i: i64| -> Option<&[Complex<f32>]> {
            let s = usize::try_from(i - buf_start).ok()?;
            buf.get(s..s + NFFT)
        };
        let one =
            |i: i64| -> Option<&Complex<f32>> { buf.get(usize::try_from(i - buf_start).ok()?) };
        // Correlation peak in the window.
        let mut best = (-1.0f64, centre);
        for lag in centre - TRACK_HALF_WINDOW..=centre + TRACK_HALF_WINDOW {
            let x = at(lag)?;
            let (mut c, mut e) = (Complex::new(0.0f32, 0.0), 0.0f32);
            for (a, b) in x.iter().zip(tmpl) {
                c += a * b.conj();
                e += a.norm_sqr();
            }
            // The template has energy NFFT: |ρ|² is in 0..1.
            let rho2 = if e > 0.0 {
                f64::from(c.norm_sqr() / e) / NFFT as f64
            } else {
                0.0
            };
            if rho2 > best.0 {
                best = (rho2, lag);
            }
        }
        let (rho2, peak) = best;
        let w = peak - CP_BACKOFF;
        let mut spec = [Complex::new(0.0f32, 0.0); NFFT];
        spec.copy_from_slice(at(w)?);
        if scratch.len() < fft128.get_inplace_scratch_len() {
            scratch.resize(fft128.get_inplace_scratch_len(), Complex::new(0.0, 0.0));
        }
        fft128.process_with_scratch(&mut spec, scratch);
        let d = pss(n_id_2);
        let y: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| {
            let v = spec[bin(i)];
            Complex::new(f64::from(v.re), f64::from(v.im)) * d[i].conj()
        });
        // SSS: the symbol before, same window offset.
        let mut sspec = [Complex::new(0.0f32, 0.0); NFFT];
        sspec.copy_from_slice(at(w - SYMBOL as i64)?);
        fft128.process_with_scratch(&mut sspec, scratch);
        let sraw: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| {
            let v = sspec[bin(i)];
            Complex::new(f64::from(v.re), f64::from(v.im))
        });
        // Timing: the delay δ (samples into the window) that best aligns the PSS (and
        // the SSS, once known), maximising |Σ_k Y_k·exp(j2πkδ/128)|² — the correlation,
        // interpolated exactly.
        let ys: Option<[Complex<f64>; SEQ_LEN]> =
            known_sss.map(|d| std::array::from_fn(|i| sraw[i] * f64::from(d[i])));
        let delta = best_delay(&y, ys.as_ref(), CP_BACKOFF as f64);
        let derot = |i: usize| {
            Complex::from_polar(
                1.0,
                2.0 * PI * f64::from(subcarrier(i)) * delta / NFFT as f64,
            )
        };
        let yc: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| y[i] * derot(i));
        let mean = yc.iter().sum::<Complex<f64>>() / SEQ_LEN as f64;
        let noise = yc.iter().map(|v| (v - mean).norm_sqr()).sum::<f64>() / (SEQ_LEN - 1) as f64;
        let snr_db = 10.0 * (mean.norm_sqr().max(1e-30) / noise.max(1e-30)).log10();
        let sss_spec: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| sraw[i] * derot(i));
        // Where a TDD cell's SSS would be.
        let mut tspec = [Complex::new(0.0f32, 0.0); NFFT];
        tspec.copy_from_slice(at(w - TDD_SSS_LEAD as i64)?);
        fft128.process_with_scratch(&mut tspec, scratch);
        let tdd_spec: [Complex<f64>; SEQ_LEN] = std::array::from_fn(|i| {
            let v = tspec[bin(i)];
            Complex::new(f64::from(v.re), f64::from(v.im)) * derot(i)
        });
        let ps = match &ys {
            Some(ys) => {
                let cs: Complex<f64> = ys.iter().enumerate().map(|(i, v)| v * derot(i)).sum();
                mean * SEQ_LEN as f64 * cs.conj()
            }
            None => Complex::new(0.0, 0.0),
        };
        // Cyclic prefixes of the 70 symbols from this half frame's slot 0 on (the PSS
        // symbol's own included), inner samples only.
        let tau = w as f64 + delta;
        let slot0 = (tau - PSS_IN_SLOT as f64).round() as i64;
        let mut cp = Complex::new(0.0f64, 0.0);
        for slot in 0..(HALF_FRAME / SLOT) as i64 {
            for l in 0..7i64 {
                let (start, len) = if l == 0 {
                    (0, 10)
                } else {
                    (10 + NFFT as i64 + (l - 1) * SYMBOL as i64, 9)
                };
                let s0 = slot0 + slot * SLOT as i64 + start;
                for i in 2..len - 2 {
                    let (Some(&a), Some(&b)) = (one(s0 + i), one(s0 + i + NFFT as i64)) else {
                        continue;
                    };
                    let p = a * b.conj();
                    cp += Complex::new(f64::from(p.re), f64::from(p.im));
                }
            }
        }
        Some((
            Record {
                n,
                rho2,
                w,
                tau,
                theta: mean.arg(),
                snr_db,
                cp,
                ps,
            },
            sss_spec,
            tdd_spec,
        ))
    }

    /// The estimate from the records.
    fn estimate(&self, t: &Track) -> Result<FreqCalEstimate, FreqCalError> {
        let cfg = &self.config;
        let seconds = self.seen as f64 / cfg.sample_rate_hz;
        let expected = t.processed + self.missed_in_acquisition;
        let found = t.records.len();
        let confidence = if expected > 0 {
            found as f64 / expected as f64
        } else {
            0.0
        };
        if found < MIN_FOUND || confidence < MIN_CONFIDENCE {
            return Err(not_found(format!(
                "a PSS (N_ID_2 {}) was seen but only {found} of {expected} expected were found in {seconds:.2} s",
                t.n_id_2
            )));
        }
        // 0. The frame structure: this estimator's SSS and cyclic-prefix looks assume
        //    FDD. A TDD cell's SSS sits three symbols before the PSS and half its
        //    subframes are uplink: no number rather than one from the wrong geometry.
        if let (Some((n1, _)), None) = (sss_decision(&t.sss_acc_tdd), sss_decision(&t.sss_acc)) {
            return Err(FreqCalError::NotFound(format!(
                "LTE cell PCI {} at {:.1} MHz is TDD (its SSS three symbols before the PSS): not measurable, \
                 TDD frame structure is not supported by this estimator",
                3 * n1 + t.n_id_2,
                cfg.carrier_hz / 1e6
            )));
        }
        // 1. Arrival times against count: the sample clock.
        let mut pts: Vec<(f64, f64)> = t.records.iter().map(|r| (r.n as f64, r.tau)).collect();
        let (a, b, _, _) =
            fit_line(&pts).ok_or_else(|| not_found("too few PSS arrivals to fit".into()))?;
        let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - a - b * p.0).abs()).collect();
        let gate = (6.0 * 1.4826 * median(&mut res)).max(0.5);
        pts.retain(|p| (p.1 - a - b * p.0).abs() <= gate);
        let (_, period, period_sd, _) =
            fit_line(&pts).ok_or_else(|| not_found("too few PSS arrivals to fit".into()))?;
        let eps_tau = period / HALF_FRAME as f64 - 1.0;
        let eps_tau_sd = period_sd / HALF_FRAME as f64;
        let off_tau = super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, eps_tau * 1e6);
        let off_tau_sd = cfg.carrier_hz * eps_tau_sd;
        // 2. Two more looks at the carrier, each known only modulo its own alias
        //    spacing: the cyclic prefixes (one turn per 128 samples: 15 kHz) and the
        //    PSS against the SSS one symbol earlier (137 samples: 14.01 kHz).
        let cp: Vec<Complex<f64>> = t.records.iter().map(|r| r.cp).collect();
        let ps: Vec<Complex<f64>> = t
            .records
            .iter()
            .map(|r| r.ps)
            .filter(|p| p.norm_sqr() > 0.0)
            .collect();
        let looks = [
            circular_offset(&cp, -(NFFT as f64)),
            if ps.len() >= MIN_FOUND {
                circular_offset(&ps, SYMBOL as f64)
            } else {
                None
            },
        ];
        // Each look's alias nearest `around`.
        let unwrap_looks = |around: f64| -> Vec<(f64, f64)> {
            looks
                .iter()
                .flatten()
                .map(|&(resid, sd, spacing)| {
                    let v = t.mix_hz + resid;
                    (v + ((around - v) / spacing).round() * spacing, sd)
                })
                .collect()
        };
        // 3. Around the arrival-drift estimate (never aliased: it holds even when the
        //    acquisition locked onto a Zadoff-Chu delay-Doppler ghost a few subcarriers
        //    off), combined with it; if they disagree, the sample clock is not tied to
        //    the LO and the carrier looks alone, around the acquisition's offset, count.
        //    The combined σ is widened by the looks' own scatter about their mean
        //    (never narrowed), so looks that disagree more than their σ allow (a bias
        //    in one of them) widen the coarse estimate's stated uncertainty.
        //    Whether they agree is judged with the looks' widened σ too: looks that
        //    scatter among themselves cannot claim to contradict the arrival drift.
        let carrier = combine(&unwrap_looks(off_tau));
        let (off_prior, prior_sd, tied) = match carrier {
            Some((off_c, sd_c, birge))
                if (off_tau - off_c).abs()
                    <= 4.0 * (off_tau_sd.powi(2) + (sd_c * birge.max(1.0)).powi(2)).sqrt() =>
            {
                let mut all = unwrap_looks(off_tau);
                all.push((off_tau, off_tau_sd));
                let (m, sd, birge) = combine(&all).unwrap_or((off_tau, off_tau_sd, 1.0));
                (m, sd * birge.max(1.0), true)
            }
            None => (off_tau, off_tau_sd, true),
            Some(_) => {
                let (off_c, sd_c, birge) =
                    combine(&unwrap_looks(t.mix_hz)).unwrap_or((off_tau, off_tau_sd, 1.0));
                tracing::warn!(
                    off_tau,
                    off_c,
                    "lte: the PSS arrival drift and the carrier disagree; using the carrier alone"
                );
                (off_c, sd_c * birge.max(1.0), false)
            }
        };
        // 4. Carrier phase at each window centre, against time.
        let phase_t = |r: &Record| (r.w as f64 + 63.5) / LTE_RATE_HZ;
        let phase_of = |r: &Record| {
            r.theta + 2.0 * PI * (t.mix_hz * (r.w as f64 + 63.5) / LTE_RATE_HZ).fract()
        };
        // Residual step per PSS, from consecutive pairs (no unwrapping needed).
        let mut lag1 = Complex::new(0.0, 0.0);
        let mut dt_sum = 0.0;
        let mut pairs = 0.0;
        for p in t.records.windows(2) {
            if p[1].n == p[0].n + 1 {
                let dt = phase_t(&p[1]) - phase_t(&p[0]);
                let d = phase_of(&p[1]) - phase_of(&p[0]) - 2.0 * PI * (off_prior * dt).fract();
                lag1 += Complex::from_polar(1.0, d);
                dt_sum += dt;
                pairs += 1.0;
            }
        }
        let alias_hz = if pairs > 0.0 {
            pairs / dt_sum
        } else {
            LTE_RATE_HZ / period
        };
        let off1 = off_prior + lag1.arg() / (2.0 * PI) * alias_hz;
        // Unwrap against the median of the last three accepted phases, starting from
        // whichever of the first records keeps the most (an outlier first would
        // reject the rest); fit.
        let psis: Vec<(f64, f64)> = t
            .records
            .iter()
            .map(|r| {
                let tt = phase_t(r);
                (tt, wrap(phase_of(r) - 2.0 * PI * (off1 * tt).fract()))
            })
            .collect();
        let mut phase_pts: Vec<(usize, f64, f64)> = Vec::new();
        for first in 0..psis.len().min(8) {
            let pts = unwrap_from(&psis, first);
            if pts.len() > phase_pts.len() {
                phase_pts = pts;
            }
            if 2 * phase_pts.len() > psis.len() {
                break;
            }
        }
        let xy: Vec<(f64, f64)> = phase_pts.iter().map(|p| (p.1, p.2)).collect();
        let fit = fit_line(&xy).ok_or_else(|| not_found("too few PSS phases to fit".into()))?;
        let mut res: Vec<f64> = xy
            .iter()
            .map(|p| (p.1 - fit.0 - fit.1 * p.0).abs())
            .collect();
        let gate = (4.0 * 1.4826 * median(&mut res)).max(1e-6);
        let kept: Vec<(usize, f64, f64)> = phase_pts
            .iter()
            .copied()
            .filter(|p| (p.2 - fit.0 - fit.1 * p.1).abs() <= gate)
            .collect();
        let xy: Vec<(f64, f64)> = kept.iter().map(|p| (p.1, p.2)).collect();
        let (pa, pb, pb_sd, _) =
            fit_line(&xy).ok_or_else(|| not_found("too few PSS phases to fit".into()))?;
        let off_phase = off1 + pb / (2.0 * PI);
        let off_phase_sd = pb_sd / (2.0 * PI);
        // 5. Is the alias safe? And were the estimate's assumptions borne out?
        let margin = 0.5 * alias_hz - (off_phase - off_prior).abs();
        let (offset, offset_sd, how) = if margin >= ALIAS_SIGMAS * prior_sd {
            (off_phase, off_phase_sd, "PSS phase")
        } else {
            (off_prior, prior_sd, "PSS timing, cyclic prefixes and SSS")
        };
        let ppm = ppm_from_offset(cfg.carrier_hz, cfg.center_hz, offset);
        let mut checks = Checks::new();
        // Two independent measures of the carrier — the arrival drift (the sample
        // clock, taken to share the LO's crystal) and the carrier looks — must agree:
        // a radio whose LO and sample clock run on different crystals (or a lock onto
        // something that is not this cell's timing) has no number.
        checks.check("LO and sample clock on one crystal", tied, || {
            format!(
                "the PSS arrival drift (the sample clock) puts the carrier {:+.1} ± {:.1} Hz from nominal, \
                 the cyclic prefixes and SSS (the LO) {:+.1} ± {:.1} Hz; they disagree, so the LO and the \
                 sample clock do not share one crystal (or the timing is not this cell's)",
                off_tau - cfg.carrier_hz + cfg.center_hz,
                off_tau_sd,
                off_prior - cfg.carrier_hz + cfg.center_hz,
                prior_sd
            )
        });
        // The carrier looks (cyclic prefixes, PSS–SSS), each known modulo its own alias
        // spacing, must agree with each other where they are unwrapped: when they
        // scatter by more than 4 σ, one of them sits on another alias (an LO 14 or
        // 15 kHz from where the sample clock says), and widening σ would hide it.
        let looks_birge = carrier.map_or(1.0, |c| c.2);
        checks.check(
            "the carrier looks agree",
            looks_birge <= ALIAS_SIGMAS,
            || {
                format!(
                    "the cyclic prefixes and the SSS place the carrier {looks_birge:.1} σ apart \
                     around the PSS arrival drift (an LO not on the sample clock's crystal, or not this cell)"
                )
            },
        );
        checks.in_range("the radio error", ppm, cfg.max_error_ppm);
        let checked = checks.pass().map_err(|why| {
            FreqCalError::NotFound(format!(
                "LTE cell (N_ID_2 {}) found but its frequency error is not measurable: {why}",
                t.n_id_2
            ))
        })?;
        tracing::debug!(
            off_tau,
            off_tau_sd,
            off_prior,
            prior_sd,
            off_phase,
            off_phase_sd,
            how,
            "lte estimate"
        );
        let k = 1.0 + ppm * 1e-6;
        let uncertainty_ppm = offset_sd * k * k / cfg.carrier_hz * 1e6;
        // SSS → PCI.
        let cell = self.cell_name(t);
        let pci = sss_decision(&t.sss_acc)
            .and_then(|(n_id_1, _)| u16::try_from(3 * n_id_1 + t.n_id_2).ok());
        // Evidence: one detection per found PSS; its offset from the phase step since
        // the previous kept one.
        let kept_set: std::collections::HashMap<usize, (f64, f64)> =
            kept.iter().map(|p| (p.0, (p.1, p.2))).collect();
        let mut prev: Option<(f64, f64)> = None;
        let detections = t
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let used = kept_set.get(&i).copied();
                let off = match (used, prev) {
                    (Some((tt, u)), Some((pt, pu))) if tt > pt => {
                        let resid = (u - pa - pb * tt) - (pu - pa - pb * pt);
                        off_phase + resid / (2.0 * PI * (tt - pt))
                    }
                    _ => offset,
                };
                if used.is_some() {
                    prev = used;
                }
                FreqCalDetection {
                    time_s: r.tau / LTE_RATE_HZ,
                    offset_hz: off,
                    ppm: ppm_from_offset(cfg.carrier_hz, cfg.center_hz, off),
                    snr_db: r.snr_db,
                    used: used.is_some(),
                }
            })
            .collect();
        let lo = super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, cfg.max_error_ppm);
        let hi = super::offset_for_ppm(cfg.carrier_hz, cfg.center_hz, -cfg.max_error_ppm);
        Ok(FreqCalEstimate {
            ppm,
            uncertainty_ppm,
            method: FreqCalMethod::Lte,
            cell,
            confidence: confidence.min(1.0),
            pci,
            evidence: FreqCalEvidence {
                detections,
                nominal_offset_hz: cfg.carrier_hz - cfg.center_hz,
                search_hz: [lo, hi],
                seconds_analysed: seconds,
            },
            checked,
        })
    }

    /// "PCI 123 at 806.0 MHz", or with the N_ID_2 only when no SSS stands out.
    fn cell_name(&self, t: &Track) -> String {
        let mhz = self.config.carrier_hz / 1e6;
        match sss_decision(&t.sss_acc) {
            Some((n_id_1, _)) => format!("PCI {} at {mhz:.1} MHz", 3 * n_id_1 + t.n_id_2),
            None => format!(
                "PCI unknown (N_ID_2 {}, SSS not decided) at {mhz:.1} MHz",
                t.n_id_2
            ),
        }
    }
}

/// The SSS hypothesis that stands out: (N_ID_1, parity), when its metric is 8 standard
/// deviations above the others' mean and 1.5 × the runner-up.
fn sss_decision(acc: &[f64]) -> Option<(usize, usize)> {
    let (best_i, best) = acc
        .iter()
        .copied()
        .enumerate()
        .fold((0, f64::MIN), |a, (i, v)| if v > a.1 { (i, v) } else { a });
    let others: Vec<f64> = acc
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best_i)
        .map(|(_, v)| *v)
        .collect();
    let n = others.len() as f64;
    let mean = others.iter().sum::<f64>() / n;
    let sd = (others.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let second = others.iter().copied().fold(f64::MIN, f64::max);
    (best > 0.0 && best >= mean + 8.0 * sd && best >= 1.5 * second)
        .then_some((best_i / 2, best_i % 2))
}

fn not_found(detail: String) -> FreqCalError {
    FreqCalError::NotFound(format!("no LTE cell found: {detail}"))
}

impl FreqCalEstimator for LteEstimator {
    fn method(&self) -> FreqCalMethod {
        FreqCalMethod::Lte
    }

    fn feed(&mut self, block: &[Complex<f32>]) {
        self.seen += block.len() as u64;
        if matches!(self.state, State::GaveUp) {
            return;
        }
        if let State::Tracking(t) = &self.state {
            if t.records.len() >= MAX_RECORDS {
                return;
            }
        }
        let before = self.buf.len();
        self.resampler.process(block, &mut self.buf);
        if matches!(self.state, State::Acquiring { .. }) {
            self.credit += self.buf.len() - before;
        }
        self.step(false);
    }

    fn samples_seen(&self) -> u64 {
        self.seen
    }

    fn finish(&mut self) -> Result<FreqCalEstimate, FreqCalError> {
        // An acquisition still in progress completes on what was received.
        self.step(true);
        let seconds = self.seen as f64 / self.config.sample_rate_hz;
        match &self.state {
            State::Tracking(t) => self.estimate(t),
            State::GaveUp => Err(not_found(format!(
                "no PSS of any root within ±{} ppm in {ACQ_ATTEMPTS} windows of {:.0} ms over the first {:.2} s",
                self.config.max_error_ppm,
                (ACQ_PERIODS * HALF_FRAME) as f64 / LTE_RATE_HZ * 1e3,
                self.searched_to as f64 / LTE_RATE_HZ
            ))),
            State::Acquiring { attempts: 0 } => Err(not_found(format!(
                "{seconds:.3} s of samples is too short: at least {:.3} s are needed",
                ACQ_LEN as f64 / LTE_RATE_HZ + 0.1
            ))),
            State::Acquiring { .. } => Err(not_found(format!(
                "no PSS of any root within ±{} ppm in {seconds:.2} s",
                self.config.max_error_ppm
            ))),
        }
    }
}
