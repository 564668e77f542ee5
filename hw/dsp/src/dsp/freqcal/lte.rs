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

mod acquire;
mod estimate;
mod resample;
pub(crate) mod seq;
mod synth;
#[cfg(test)]
mod tests;
mod track;

use resample::{Resampler, LTE_RATE_HZ};
use seq::{bin, pss, pss_time, sss, subcarrier, NFFT, N_ID_1_COUNT, SEQ_LEN};
pub use synth::{LteCell, LteFrame, LteScene};

/// Samples per 5 ms (half frame) at 1.92 MS/s: the PSS period.
const HALF_FRAME: usize = 9600;
/// A slot at 1.92 MS/s.
const SLOT: usize = 960;
/// OFDM symbols 1..6 of a slot: 9 cyclic-prefix samples + 128.
const SYMBOL: usize = 137;
/// FDD (frame structure type 1): where the PSS's useful part starts in the half frame
/// (the last symbol of slot 0: after symbols 0..5 and its own CP).
const PSS_IN_SLOT: usize = 10 + NFFT + 5 * SYMBOL + 9;
/// TDD (frame structure type 2, TS 36.211 §6.11.2.2): the PSS is the third symbol of
/// subframe 1/6 (slot 2 of the half frame): its useful part starts here.
const TDD_PSS_IN_HALF: usize = 2 * SLOT + 10 + NFFT + SYMBOL + 9;
/// TDD: the SSS is the last symbol of subframe 0/5: its useful part starts this many
/// samples before the PSS's (slot 2's symbol 0 with its 10-sample CP, then symbols 1
/// and 2), where an FDD cell's is one symbol (137) before.
const TDD_SSS_LEAD: usize = 10 + NFFT + 2 * SYMBOL;
/// Samples before a PSS's useful part that its measurement reads (the TDD half frame's
/// start, the farther of the two).
const LOOKBACK: usize = TDD_PSS_IN_HALF;
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
/// Carrier looks (cyclic prefixes, PSS–SSS) closer together than this (Hz) sit on one
/// alias whatever their σ say: two looks on different aliases fall at least 0.44 kHz
/// apart within ±60 ppm (FDD: 15 kHz against 14.01 kHz, 0.99 kHz; TDD: 15 kHz against
/// 4.66 kHz, 0.44 kHz at 16 SSS aliases). Closer than that, looks that scatter beyond
/// their σ disagree by a bias (a strong cell's σ of a hertz against a look's few hertz
/// of timing–frequency coupling), which widens the coarse σ instead of losing the number.
const LOOKS_ONE_ALIAS_HZ: f64 = 200.0;

/// The SSS candidate's 62 subcarriers, timing slope removed.
type SssSpectrum = [Complex<f64>; SEQ_LEN];

/// A cell's frame structure, told from where its SSS correlates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Duplex {
    /// Frame structure type 1: the SSS one symbol before the PSS, every subframe
    /// downlink.
    Fdd,
    /// Frame structure type 2: the SSS three symbols before the PSS, which is in the
    /// special subframe's downlink part; uplink subframes between.
    Tdd,
}

impl Duplex {
    /// Both, in the order of [`Record::cp`].
    const BOTH: [Duplex; 2] = [Duplex::Fdd, Duplex::Tdd];

    /// Samples from the SSS's useful part to the PSS's.
    fn sss_lead(self) -> usize {
        match self {
            Duplex::Fdd => SYMBOL,
            Duplex::Tdd => TDD_SSS_LEAD,
        }
    }

    /// Where the PSS's useful part starts in its half frame.
    fn pss_in_half(self) -> usize {
        match self {
            Duplex::Fdd => PSS_IN_SLOT,
            Duplex::Tdd => TDD_PSS_IN_HALF,
        }
    }

    /// (slot, symbol) of the half frame's symbols that are downlink whatever the
    /// configuration: all 70 (FDD); subframe 0/5 and the three symbols of the special
    /// subframe's shortest downlink part, up to the PSS (TDD: uplink subframes and the
    /// guard period carry no cell signal, or a UE's).
    fn downlink_symbols(self) -> impl Iterator<Item = (usize, usize)> {
        let slots = match self {
            Duplex::Fdd => 10,
            Duplex::Tdd => 3,
        };
        (0..slots)
            .flat_map(|slot| (0..7).map(move |l| (slot, l)))
            .filter(move |&(slot, l)| self == Duplex::Fdd || slot < 2 || l <= 2)
    }

    fn index(self) -> usize {
        match self {
            Duplex::Fdd => 0,
            Duplex::Tdd => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Duplex::Fdd => "FDD",
            Duplex::Tdd => "TDD",
        }
    }
}

/// The SSS hypothesis that stood out: the cell's N_ID_1, which PSS count parity is
/// subframe 0 (or 1, TDD), and the frame structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SssFound {
    n_id_1: usize,
    parity: usize,
    duplex: Duplex,
}

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
    /// Cyclic-prefix correlation over the half frame's downlink symbols (mixed-down
    /// signal), for each frame structure ([`Duplex::BOTH`]).
    cp: [Complex<f64>; 2],
    /// PSS correlation times the conjugate SSS correlation (once the SSS is known;
    /// else zero): its phase is the carrier's turn over the SSS's lead.
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
    /// The SSS hypothesis once it stands out (at one of the two positions).
    sss_known: Option<SssFound>,
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
