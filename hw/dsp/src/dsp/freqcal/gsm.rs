//! GSM FCCH: a radio's frequency error from a BCCH carrier's frequency-correction
//! bursts, with no prior estimate (docs/operator.md#calibrating-a-radio-without-a-generator).
//!
//! An FCCH burst is a pure tone a quarter of the bit rate above the carrier
//! (+67.708 kHz) for 148 bits (546 µs), in frames 0, 10, 20, 30 and 40 of each
//! 51-frame multiframe (a frame is 4.615 ms). Between them the carrier is GMSK.
//!
//! 0. **Front end** (above 2 MS/s): the band the tone can be in (± `max_error_ppm`
//!    around its nominal offset, plus a margin) is mixed to 0 Hz and decimated by
//!    `D = ⌊rate / max(1 MS/s, band / 0.3)⌋` with a Kaiser-windowed FIR (60 dB on
//!    every alias of the band); the steps below run at `rate / D`. The phase of the
//!    mixer is exact at every sample count, and the estimator accounts for the shift,
//!    so the ppm is the same as if the detector had run at the radio's rate — at a
//!    few multiply-adds per input sample.
//! 1. **Detect** with a short window (≈ ¼ of a burst, Hann, hop ¼ window): every
//!    search bin's power is compared with that bin's own slow background (a 50 ms
//!    average), so GMSK, noise and a steady spur all read ≈ 1 and a burst's tone
//!    stands far above. A burst is a run of at least five windows peaking on the
//!    same bin (±1); a long Welch average would wash the 546 µs bursts out.
//! 2. **Refine** each burst on its own samples, kept in a ring buffer of a few burst
//!    lengths (no whole-capture buffer): the frequency that maximises the burst's
//!    periodogram (the maximum-likelihood estimate of one tone in white noise).
//! 3. **Combine** the per-burst errors: sort, trim 10 % at each end (as
//!    kalibrate-rtl's `offset.cc`), drop what is further than 5 median absolute
//!    deviations from the median, and average the rest; the uncertainty is the
//!    standard error of that trimmed mean (from the winsorized variance, so the
//!    trim does not shrink it). The confidence is the fraction of bursts spaced a
//!    whole number (≥ 10) of TDMA frames apart, times the fraction of the trimmed
//!    set that agrees, times ½ + ½ × (bursts found / bursts a BCCH sends).
//! 4. **Check the rate.** The stated sample rate turns the tone's place into Hz; the
//!    bursts' start times, fitted to whole TDMA frames, give the time scale the signal
//!    keeps. Unless it matches the stated rate within ± `max_error_ppm` (the radio's own
//!    sample clock) + 4σ of the fit, there is no number.
//! 5. **Check for a steady carrier.** The refinement assumes one tone in the burst. The
//!    windows that detect nothing are averaged into a long-run spectrum of the searched
//!    band; a bin standing 2 dB above the band beside it (3 and 4 bins away, the higher
//!    side) is a steady carrier. One within 5 bins of the bursts' tone pulls every burst
//!    toward it (a −40 dBFS spur 10 kHz above the tone gave −4.86 ± 10⁻¹⁵ ppm for
//!    +5): no number, naming it. With too few bursts found, one anywhere in the searched
//!    range is named, since a burst under it does not stand out from its own background.
use super::fir::{Decimator, Mixer};
use super::{
    offset_for_ppm, ppm_from_offset, FreqCalConfig, FreqCalDetection, FreqCalError,
    FreqCalEstimate, FreqCalEstimator, FreqCalEvidence, FreqCalMethod,
};
use crate::dsp::honest::Checks;
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use std::f64::consts::PI;
use std::sync::Arc;

/// GSM's gross bit rate, 1625000/6 bit/s.
pub const GSM_BIT_RATE_HZ: f64 = 1_625_000.0 / 6.0;
/// The FCCH tone's offset above its carrier: a quarter of the bit rate.
pub const FCCH_OFFSET_HZ: f64 = GSM_BIT_RATE_HZ / 4.0;
/// An FCCH burst lasts 148 bits.
pub const FCCH_BITS: f64 = 148.0;
/// A TDMA frame: 8 timeslots of 156.25 bits (120/26 ms ≈ 4.615 ms).
pub const FRAME_S: f64 = 1250.0 / GSM_BIT_RATE_HZ;
/// The frames of a 51-frame multiframe that carry an FCCH burst.
pub const FCCH_FRAMES: [u32; 5] = [0, 10, 20, 30, 40];

/// A window's bin stands out when it is this many times its background.
const DETECT_RATIO: f32 = 8.0;
/// The fewest consecutive detecting windows that make a burst (they span more than
/// one window length, so two of them share no sample).
const MIN_RUN: usize = 5;
/// The background's time constant (s).
const BACKGROUND_S: f64 = 0.05;
/// Windows averaged into the background before anything is detected.
const WARMUP_WINDOWS: u64 = 64;
/// Fewest bursts that make an estimate.
const MIN_BURSTS: usize = 3;
/// Most detections kept (about 8 minutes of bursts); later ones are counted only.
const MAX_DETECTIONS: usize = 10_000;
/// The front end decimates to at least this rate (Hz): the detector's design rate.
const FRONT_END_RATE_HZ: f64 = 1e6;
/// The front end keeps this much beyond the tone's search range on each side (Hz):
/// the detector's edge bins and the refinement's span.
const FRONT_END_MARGIN_HZ: f64 = 20e3;
/// The front end's kept band is at most this fraction of its output rate.
const FRONT_END_FILL: f64 = 0.3;
/// The front end's stopband (dB).
const FRONT_END_STOP_DB: f64 = 60.0;
/// A bin of the long-run spectrum is a steady carrier when it stands this many times
/// (2 dB) above the band beside it (module docs, step 5).
const LINE_RATIO: f64 = 1.585;
/// The band beside a bin: bins this far and one further on each side (outside a Hann
/// window's main lobe).
const LINE_SIDE: usize = 3;
/// A steady carrier this many detector bins or nearer from the bursts' tone pulls
/// their refinement (its ±1.5 bins and the periodogram's own sidelobes).
const LINE_REACH_BINS: f64 = 5.0;

/// Mix the tone's search band to 0 Hz and decimate (see the module docs, step 0).
struct FrontEnd {
    /// The radio's own configuration (the detector's is the decimated one).
    outer: FreqCalConfig,
    /// The search band's centre, mixed to 0 Hz (Hz at the radio's rate).
    shift_hz: f64,
    mixer: Mixer,
    dec: Decimator,
    /// Decimated samples of the current block.
    out: Vec<Complex<f32>>,
    /// Samples seen at the radio's rate.
    seen: u64,
}

/// The streaming FCCH estimator ([`FreqCalEstimator`] for [`FreqCalMethod::Gsm`]).
pub struct FcchEstimator {
    cfg: FreqCalConfig,
    /// The FCCH tone's absolute RF frequency.
    tone_rf_hz: f64,
    /// Searched offsets (Hz).
    search: [f64; 2],
    n: usize,
    hop: usize,
    fft: Arc<dyn Fft<f32>>,
    window: Vec<f32>,
    buf: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// FFT indices of the searched bins and their signed bin numbers.
    bins: Vec<(usize, i64)>,
    background: Vec<f32>,
    alpha: f32,
    windows_done: u64,
    /// The last samples, by absolute index modulo its length (a power of two).
    ring: Vec<Complex<f32>>,
    seen: u64,
    next_window: u64,
    run: Option<Run>,
    max_run_windows: usize,
    burst_samples: f64,
    detections: Vec<Burst>,
    dropped_detections: u64,
    front: Option<FrontEnd>,
    /// The long-run spectrum's bins (FFT index, signed bin number): the search bins
    /// and `LINE_SIDE + 1` more on each side.
    survey: Vec<(usize, i64)>,
    /// Summed power of each survey bin over the windows that detected nothing.
    survey_sum: Vec<f64>,
    survey_windows: u64,
}

/// A steady carrier in the long-run spectrum (step 5).
#[derive(Debug, Clone, Copy)]
struct Line {
    /// Its offset at the detector (Hz).
    offset_hz: f64,
    /// How far it stands above the band beside it (dB).
    excess_db: f64,
}

/// Consecutive detecting windows on one bin.
#[derive(Debug, Clone, Copy)]
struct Run {
    first_start: u64,
    last_start: u64,
    count: usize,
    bin: i64,
    too_long: bool,
}

/// One refined burst.
#[derive(Debug, Clone, Copy)]
struct Burst {
    start: u64,
    offset_hz: f64,
    ppm: f64,
    snr_db: f64,
}

impl FcchEstimator {
    /// An estimator for a radio tuned to `cfg.center_hz` looking at a BCCH carrier at
    /// `cfg.carrier_hz`; the FCCH tone's whole search range (± `max_error_ppm`) must
    /// lie inside ±45 % of the sample rate. Above 2 MS/s the detector runs behind a
    /// decimating front end (module docs, step 0).
    pub fn new(cfg: FreqCalConfig) -> Result<Self, FreqCalError> {
        let direct = Self::without_front_end(cfg)?;
        let [lo, hi] = direct.search;
        let pass_hz = 0.5 * (hi - lo) + FRONT_END_MARGIN_HZ;
        let target = (pass_hz / FRONT_END_FILL).max(FRONT_END_RATE_HZ);
        let rate = cfg.sample_rate_hz;
        let d = (rate / target).floor() as usize;
        if d < 2 {
            return Ok(direct);
        }
        drop(direct);
        let shift_hz = 0.5 * (lo + hi);
        let inner = FreqCalConfig {
            center_hz: cfg.center_hz + shift_hz,
            sample_rate_hz: rate / d as f64,
            ..cfg
        };
        let mut est = Self::without_front_end(inner)?;
        let dec = Decimator::new(rate, d, pass_hz, FRONT_END_STOP_DB);
        est.front = Some(FrontEnd {
            outer: cfg,
            shift_hz,
            mixer: Mixer::new(shift_hz, rate),
            dec,
            out: Vec::new(),
            seen: 0,
        });
        Ok(est)
    }

    /// The detector alone, at the radio's rate.
    fn without_front_end(cfg: FreqCalConfig) -> Result<Self, FreqCalError> {
        let bad =
            |field: &'static str, detail: String| FreqCalError::InvalidSetting { field, detail };
        for (field, v) in [
            ("center_hz", cfg.center_hz),
            ("sample_rate_hz", cfg.sample_rate_hz),
            ("carrier_hz", cfg.carrier_hz),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(field, format!("{v} must be a positive finite number")));
            }
        }
        if !(cfg.max_error_ppm.is_finite() && cfg.max_error_ppm > 0.0 && cfg.max_error_ppm < 1000.0)
        {
            return Err(bad(
                "max_error_ppm",
                format!("{} must be in (0, 1000)", cfg.max_error_ppm),
            ));
        }
        let rate = cfg.sample_rate_hz;
        let tone_rf_hz = cfg.carrier_hz + FCCH_OFFSET_HZ;
        let a = offset_for_ppm(tone_rf_hz, cfg.center_hz, cfg.max_error_ppm);
        let b = offset_for_ppm(tone_rf_hz, cfg.center_hz, -cfg.max_error_ppm);
        let search = [a.min(b), a.max(b)];
        if search[0] < -0.45 * rate || search[1] > 0.45 * rate {
            return Err(bad(
                "sample_rate_hz",
                format!(
                    "{rate} Hz is too low: the FCCH tone may be anywhere in {:+.0}..{:+.0} Hz, \
                     which must lie within ±45 % of the sample rate",
                    search[0], search[1]
                ),
            ));
        }
        if !(100e3..=100e6).contains(&rate) {
            return Err(bad(
                "sample_rate_hz",
                format!("{rate} Hz is outside 100 kHz..100 MHz"),
            ));
        }
        // Window: the largest power of two up to 280 µs (140..280 µs, about a
        // quarter to a half of a burst).
        let want = (rate * 280e-6).floor().max(32.0) as usize;
        let n = 1usize << (usize::BITS - 1 - want.leading_zeros());
        let hop = n / 4;
        let fft = FftPlanner::<f32>::new().plan_fft_forward(n);
        let window = (0..n)
            .map(|i| (0.5 - 0.5 * (2.0 * PI * i as f64 / n as f64).cos()) as f32)
            .collect();
        let bin_hz = rate / n as f64;
        let k_lo = (search[0] / bin_hz).floor() as i64 - 1;
        let k_hi = (search[1] / bin_hz).ceil() as i64 + 1;
        let bins: Vec<(usize, i64)> = (k_lo..=k_hi)
            .map(|k| (k.rem_euclid(n as i64) as usize, k))
            .collect();
        let burst_samples = FCCH_BITS / GSM_BIT_RATE_HZ * rate;
        let ring_len = ((3.0 * burst_samples) as usize + 4 * n).next_power_of_two();
        let max_run_windows = ((2.0 * burst_samples) / hop as f64).ceil() as usize;
        let half = (n / 2) as i64 - 1;
        let side = LINE_SIDE as i64 + 1;
        let survey: Vec<(usize, i64)> = ((k_lo - side).max(-half)..=(k_hi + side).min(half))
            .map(|k| (k.rem_euclid(n as i64) as usize, k))
            .collect();
        Ok(Self {
            tone_rf_hz,
            search,
            n,
            hop,
            scratch: vec![Complex::default(); fft.get_inplace_scratch_len()],
            fft,
            window,
            buf: vec![Complex::default(); n],
            background: vec![0.0; bins.len()],
            bins,
            alpha: (hop as f64 / (rate * BACKGROUND_S)) as f32,
            windows_done: 0,
            ring: vec![Complex::default(); ring_len],
            seen: 0,
            next_window: 0,
            run: None,
            max_run_windows,
            burst_samples,
            detections: Vec::new(),
            dropped_detections: 0,
            front: None,
            survey_sum: vec![0.0; survey.len()],
            survey,
            survey_windows: 0,
            cfg,
        })
    }

    /// The analysis window's length (samples at the detector's rate).
    pub fn window_len(&self) -> usize {
        self.n
    }

    /// The detector's sample rate: the radio's, or the front end's output rate.
    pub fn detector_rate_hz(&self) -> f64 {
        self.cfg.sample_rate_hz
    }

    /// Feed the detector samples at its own rate.
    fn detect(&mut self, block: &[Complex<f32>]) {
        let mask = self.ring.len() - 1;
        for chunk in block.chunks(self.hop.max(1)) {
            for &x in chunk {
                self.ring[(self.seen as usize) & mask] = x;
                self.seen += 1;
            }
            while self.next_window + self.n as u64 <= self.seen {
                let s = self.next_window;
                self.window_at(s);
                self.next_window += self.hop as u64;
            }
        }
    }

    fn at(&self, i: u64) -> Complex<f32> {
        self.ring[(i as usize) & (self.ring.len() - 1)]
    }

    /// Analyse the window starting at sample `start` (all of it in the ring).
    fn window_at(&mut self, start: u64) {
        for (i, b) in self.buf.iter_mut().enumerate() {
            let x = self.ring[((start as usize) + i) & (self.ring.len() - 1)];
            *b = x * self.window[i];
        }
        self.fft
            .process_with_scratch(&mut self.buf, &mut self.scratch);
        self.windows_done += 1;
        let warm = self.windows_done <= WARMUP_WINDOWS;
        let alpha = if warm {
            1.0 / self.windows_done as f32
        } else {
            self.alpha
        };
        let mut best: Option<(f32, i64)> = None;
        for (j, &(idx, k)) in self.bins.iter().enumerate() {
            let p = self.buf[idx].norm_sqr();
            let bg = self.background[j];
            if !warm && bg > 0.0 {
                let r = p / bg;
                if r > DETECT_RATIO && best.is_none_or(|(br, _)| r > br) {
                    best = Some((r, k));
                }
            }
            self.background[j] = bg + alpha * (p - bg);
        }
        if !warm && best.is_none() {
            for (sum, &(idx, _)) in self.survey_sum.iter_mut().zip(&self.survey) {
                *sum += f64::from(self.buf[idx].norm_sqr());
            }
            self.survey_windows += 1;
        }
        self.track(start, best.map(|(_, k)| k));
    }

    /// Extend, end or start the current run with this window's detection.
    fn track(&mut self, start: u64, hit: Option<i64>) {
        if let Some(r) = &mut self.run {
            if let Some(k) = hit.filter(|k| (k - r.bin).abs() <= 1) {
                r.last_start = start;
                r.count += 1;
                r.bin = k;
                if r.count > self.max_run_windows {
                    r.too_long = true;
                }
                return;
            }
            let done = *r;
            self.run = None;
            self.burst_from(done);
        }
        self.run = hit.map(|bin| Run {
            first_start: start,
            last_start: start,
            count: 1,
            bin,
            too_long: false,
        });
    }

    /// The steady carriers of the long-run spectrum in the searched range (step 5),
    /// strongest first.
    fn steady_lines(&self) -> Vec<Line> {
        if self.survey_windows == 0 {
            return Vec::new();
        }
        let bin_hz = self.cfg.sample_rate_hz / self.n as f64;
        let (k_min, k_max) = (
            (self.search[0] / bin_hz).floor() as i64,
            (self.search[1] / bin_hz).ceil() as i64,
        );
        let m = &self.survey_sum;
        let s = LINE_SIDE;
        let mut lines = Vec::new();
        for j in (s + 1)..m.len().saturating_sub(s + 1) {
            let k = self.survey[j].1;
            if k < k_min || k > k_max || !(m[j] >= m[j - 1] && m[j] > m[j + 1]) {
                continue;
            }
            let beside = (0.5 * (m[j - s] + m[j - s - 1])).max(0.5 * (m[j + s] + m[j + s + 1]));
            if m[j] <= LINE_RATIO * beside {
                continue;
            }
            // The peak between bins: a parabola through the logarithms of three.
            let (a, b, c) = (m[j - 1].ln(), m[j].ln(), m[j + 1].ln());
            let den = a - 2.0 * b + c;
            let d = if den < 0.0 {
                (0.5 * (a - c) / den).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            lines.push(Line {
                offset_hz: (k as f64 + d) * bin_hz,
                excess_db: 10.0 * (m[j] / beside.max(f64::MIN_POSITIVE)).log10(),
            });
        }
        lines.sort_by(|x, y| y.excess_db.total_cmp(&x.excess_db));
        lines
    }

    /// A finished run: refine it into a burst if it is one.
    fn burst_from(&mut self, r: Run) {
        if r.count < MIN_RUN || r.too_long {
            return;
        }
        // The burst lies between the centres of the first and last detecting
        // windows (a window detects when most of it is tone); at most 95 % of a burst.
        let half = (self.n / 2) as u64;
        let (mut a, mut b) = (r.first_start + half, r.last_start + half);
        let cap = (0.95 * self.burst_samples) as u64;
        if b - a > cap {
            let mid = a + (b - a) / 2;
            a = mid - cap / 2;
            b = a + cap;
        }
        if a + (self.ring.len() as u64) < self.seen || b > self.seen || b <= a + 8 {
            return;
        }
        let bin_hz = self.cfg.sample_rate_hz / self.n as f64;
        let coarse = r.bin as f64 * bin_hz;
        let seg: Vec<Complex<f64>> = (a..b)
            .map(|i| {
                let x = self.at(i);
                Complex::new(f64::from(x.re), f64::from(x.im))
            })
            .collect();
        let (f, tone_power) = refine_tone(&seg, self.cfg.sample_rate_hz, coarse, bin_hz);
        if !(f >= self.search[0] - bin_hz && f <= self.search[1] + bin_hz) {
            return;
        }
        let total = seg.iter().map(|x| x.norm_sqr()).sum::<f64>() / seg.len() as f64;
        let noise = (total - tone_power).max(total * 1e-6);
        let burst = Burst {
            start: a,
            offset_hz: f,
            ppm: ppm_from_offset(self.tone_rf_hz, self.cfg.center_hz, f),
            snr_db: 10.0 * (tone_power / noise).log10(),
        };
        if self.detections.len() < MAX_DETECTIONS {
            self.detections.push(burst);
        } else {
            self.dropped_detections += 1;
        }
    }
}

/// The frequency (Hz) maximising the periodogram of `x` within ±1.5 bins of
/// `coarse_hz`, and the tone's power there (per sample).
fn refine_tone(x: &[Complex<f64>], rate: f64, coarse_hz: f64, bin_hz: f64) -> (f64, f64) {
    let power = |f: f64| {
        let w = -2.0 * PI * f / rate;
        let step = Complex::new(w.cos(), w.sin());
        let mut ph = Complex::new(1.0, 0.0);
        let mut acc = Complex::new(0.0, 0.0);
        for (i, v) in x.iter().enumerate() {
            acc += v * ph;
            ph *= step;
            if i % 256 == 255 {
                ph /= ph.norm();
            }
        }
        acc.norm_sqr()
    };
    // A grid of 1/8 of the periodogram's own resolution, then golden section.
    let res = rate / x.len() as f64;
    let step = res / 8.0;
    let span = 1.5 * bin_hz + res;
    let mut best = (coarse_hz, f64::MIN);
    let mut f = coarse_hz - span;
    while f <= coarse_hz + span {
        let p = power(f);
        if p > best.1 {
            best = (f, p);
        }
        f += step;
    }
    let (mut lo, mut hi) = (best.0 - step, best.0 + step);
    let g = 0.618_033_988_749_895;
    let (mut c, mut d) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut pc, mut pd) = (power(c), power(d));
    for _ in 0..30 {
        if pc > pd {
            hi = d;
            d = c;
            pd = pc;
            c = hi - g * (hi - lo);
            pc = power(c);
        } else {
            lo = c;
            c = d;
            pc = pd;
            d = lo + g * (hi - lo);
            pd = power(d);
        }
    }
    let f = 0.5 * (lo + hi);
    let n = x.len() as f64;
    (f, power(f) / (n * n))
}

impl FreqCalEstimator for FcchEstimator {
    fn method(&self) -> FreqCalMethod {
        FreqCalMethod::Gsm
    }

    fn feed(&mut self, block: &[Complex<f32>]) {
        match self.front.take() {
            None => self.detect(block),
            Some(mut f) => {
                f.seen += block.len() as u64;
                f.out.clear();
                let mixed = f.mixer.process(block);
                f.dec.process(mixed, &mut f.out);
                self.detect(&f.out);
                self.front = Some(f);
            }
        }
    }

    fn samples_seen(&self) -> u64 {
        self.front.as_ref().map_or(self.seen, |f| f.seen)
    }

    fn finish(&mut self) -> Result<FreqCalEstimate, FreqCalError> {
        if let Some(r) = self.run.take() {
            self.burst_from(r);
        }
        let rate = self.cfg.sample_rate_hz;
        let seconds = match &self.front {
            Some(f) => f.seen as f64 / f.outer.sample_rate_hz,
            None => self.seen as f64 / rate,
        };
        // Back to the radio's frame: offsets by the front end's shift, times by its
        // filter's delay.
        let (shift_hz, delay_s, outer) = match &self.front {
            Some(f) => (f.shift_hz, f.dec.delay() / f.outer.sample_rate_hz, f.outer),
            None => (0.0, 0.0, self.cfg),
        };
        let not_found = |why: String| FreqCalError::NotFound(format!("no GSM FCCH found: {why}"));
        let lines = self.steady_lines();
        let line_at = |l: &Line| {
            format!(
                "a steady carrier at {:.6} MHz ({:.1} dB above the band beside it)",
                (outer.center_hz + l.offset_hz + shift_hz) / 1e6,
                l.excess_db
            )
        };
        if self.detections.len() < MIN_BURSTS {
            let masked = match lines.first() {
                Some(l) => format!(
                    "; {} is in the searched range: an FCCH burst on it does not stand out \
                     from its own background, so a spur there hides the bursts",
                    line_at(l)
                ),
                // Nothing in the way: say what the search covered, so a radio
                // further off than it (or another carrier) is not read as "no signal".
                None if self.detections.is_empty() => format!(
                    "; the search covers a radio error within ±{:.0} ppm of the carrier at {:.6} MHz: \
                     a radio further off, another carrier frequency or no BCCH there give none",
                    outer.max_error_ppm,
                    outer.carrier_hz / 1e6
                ),
                None => String::new(),
            };
            return Err(not_found(format!(
                "{} burst(s) in {seconds:.2} s (at least {MIN_BURSTS} needed; a BCCH carrier has about 21 a second){masked}",
                self.detections.len()
            )));
        }
        let ppms: Vec<f64> = self.detections.iter().map(|b| b.ppm).collect();
        let used = robust_inliers(&ppms);
        let kept: Vec<f64> = ppms
            .iter()
            .zip(&used)
            .filter(|(_, u)| **u)
            .map(|(p, _)| *p)
            .collect();
        if kept.len() < MIN_BURSTS {
            return Err(not_found(format!(
                "{} candidate burst(s) in {seconds:.2} s do not agree on one frequency",
                ppms.len()
            )));
        }
        let m = kept.len() as f64;
        let mean = kept.iter().sum::<f64>() / m;
        let uncertainty = trimmed_mean_se(&kept, ppms.len());
        let spacing = spacing_consistency(&self.detections, &used, rate);
        let expected = seconds / (51.0 * FRAME_S) * FCCH_FRAMES.len() as f64;
        let coverage = (ppms.len() as f64 / expected.max(1.0)).min(1.0);
        // Of the values the 10 % trim leaves, the fraction that agree (the trim
        // itself says nothing about the signal).
        let core = ppms.len() - 2 * (ppms.len() / 10);
        let kept_fraction = m / core.max(1) as f64;
        let confidence = (spacing * kept_fraction * (0.5 + 0.5 * coverage)).clamp(0.0, 1.0);
        // The LO's error is what the FCCH tone measures; the sample clock only scales its
        // 67.7 kHz offset (20 ppm apart move it 1.4 Hz), so a separate sample clock
        // needs no check. The value must lie inside the searched range.
        let mut checks = Checks::new();
        checks.in_range("the radio error", mean, self.cfg.max_error_ppm);
        // The stated sample rate turns the tone's place into Hz. GSM's TDMA frame is a
        // clock in the signal: the bursts' spacing must give the same time scale, within
        // the sample clock's own error (the searched range) and the timing's noise. A
        // recording with a wrong rate (1 MS/s stated for 1.024) scales the offset with it.
        let timing = frame_timing(&self.detections, &used, rate, self.hop as f64 / rate);
        let limit = self.cfg.max_error_ppm * 1e-6;
        checks.check(
            "the bursts keep GSM's TDMA frame timing at the stated sample rate",
            timing.is_some_and(|(s, sigma)| (s - 1.0).abs() <= limit + 4.0 * sigma),
            || match timing {
                Some((s, sigma)) => format!(
                    "the {} tone burst(s) found do not keep GSM's TDMA frame timing at the \
                     stated {:.6} MS/s: their spacing says the samples ran at {:.6} MS/s \
                     ({:+.4} %, beyond the ±{} ppm searched + 4σ of {:.4} %); a wrong sample \
                     rate scales the tone's offset with it",
                    m as usize,
                    outer.sample_rate_hz / 1e6,
                    outer.sample_rate_hz * s / 1e6,
                    (s - 1.0) * 100.0,
                    self.cfg.max_error_ppm,
                    4.0 * sigma * 100.0
                ),
                None => format!(
                    "the {} tone burst(s) found give no TDMA frame timing to check the stated \
                     sample rate against",
                    m as usize
                ),
            },
        );
        // The refinement assumes one tone in the burst: a steady carrier near it pulls
        // every burst toward itself.
        let mean_offset = {
            let kept_offsets: Vec<f64> = self
                .detections
                .iter()
                .zip(&used)
                .filter(|(_, u)| **u)
                .map(|(b, _)| b.offset_hz)
                .collect();
            kept_offsets.iter().sum::<f64>() / kept_offsets.len().max(1) as f64
        };
        let bin_hz = rate / self.n as f64;
        let near = lines
            .iter()
            .find(|l| (l.offset_hz - mean_offset).abs() <= LINE_REACH_BINS * bin_hz);
        checks.check(
            "no steady carrier beside the bursts' tone",
            near.is_none(),
            || match near {
                Some(l) => format!(
                    "{} is {:.1} kHz from the bursts' tone at {:.6} MHz: a second tone in the \
                     bursts pulls their frequency toward it",
                    line_at(l),
                    (l.offset_hz - mean_offset) / 1e3,
                    (outer.center_hz + mean_offset + shift_hz) / 1e6
                ),
                None => String::new(),
            },
        );
        let checked = checks.pass().map_err(not_found)?;
        let detections = self
            .detections
            .iter()
            .zip(&used)
            .map(|(b, u)| FreqCalDetection {
                time_s: b.start as f64 / rate + delay_s,
                offset_hz: b.offset_hz + shift_hz,
                ppm: b.ppm,
                snr_db: b.snr_db,
                used: *u,
            })
            .collect();
        Ok(FreqCalEstimate {
            ppm: mean,
            uncertainty_ppm: super::with_cell_uncertainty(uncertainty),
            measurement_uncertainty_ppm: uncertainty,
            method: FreqCalMethod::Gsm,
            cell: format!("BCCH {:.3} MHz", self.cfg.carrier_hz / 1e6),
            confidence,
            pci: None,
            duplex: None,
            evidence: FreqCalEvidence {
                detections,
                nominal_offset_hz: self.tone_rf_hz - outer.center_hz,
                search_hz: [self.search[0] + shift_hz, self.search[1] + shift_hz],
                seconds_analysed: seconds,
            },
            checked,
        })
    }
}

/// Which values survive: a 10 % trim at each end of the sorted values, then
/// nothing further than 5 median absolute deviations from the median of the rest.
pub(crate) fn robust_inliers(v: &[f64]) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let trim = v.len() / 10;
    let mut keep = vec![false; v.len()];
    let core: Vec<usize> = idx[trim..v.len() - trim].to_vec();
    let mut vals: Vec<f64> = core.iter().map(|&i| v[i]).collect();
    let median = median_of(&mut vals);
    let mut dev: Vec<f64> = vals.iter().map(|x| (x - median).abs()).collect();
    let mad = median_of(&mut dev).max(1e-9);
    for i in core {
        keep[i] = (v[i] - median).abs() <= 5.0 * 1.4826 * mad;
    }
    keep
}

/// The standard error of the mean of `kept` — what is left of `n` values after
/// trimming — by the winsorized variance (Tukey–McLaughlin): the kept values'
/// spread understates the spread of all `n`, their mean's error is
/// `s_w / ((kept / n) · √n)`.
fn trimmed_mean_se(kept: &[f64], n: usize) -> f64 {
    let mut v = kept.to_vec();
    v.sort_by(f64::total_cmp);
    let (lo, hi) = match (v.first(), v.last()) {
        (Some(a), Some(b)) => (*a, *b),
        _ => return f64::NAN,
    };
    // The trimmed ones count as the nearest kept value.
    let cut = n.saturating_sub(v.len());
    let below = cut / 2;
    let above = cut - below;
    let mut w = Vec::with_capacity(n);
    w.extend(std::iter::repeat_n(lo, below));
    w.extend_from_slice(&v);
    w.extend(std::iter::repeat_n(hi, above));
    let nw = w.len() as f64;
    let mean = w.iter().sum::<f64>() / nw;
    let var = w.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nw - 1.0).max(1.0);
    var.sqrt() / ((v.len() as f64 / nw) * nw.sqrt())
}

fn median_of(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// The fraction of used bursts spaced from the previous used one by a whole
/// number (≥ 10) of TDMA frames, as FCCH bursts are (10 or 11 frames apart, more
/// when some were missed).
/// The bursts' time scale against GSM's TDMA frame: their start times (s, at the stated
/// rate) fitted by least squares to whole frame numbers, `t = a + s · n · FRAME_S`. The
/// frame numbers are chained from neighbour to neighbour, with a first scale from the
/// median of the neighbours 1..=12 frames apart (an FCCH follows 10 or 11 frames after
/// the last). Returns `(s, σ of s)`, σ from the fit's residual, never below the detector's
/// own time step (`hop_s` / √12); `None` with fewer than three bursts or one frame.
fn frame_timing(d: &[Burst], used: &[bool], rate: f64, hop_s: f64) -> Option<(f64, f64)> {
    let t: Vec<f64> = d
        .iter()
        .zip(used)
        .filter(|(_, u)| **u)
        .map(|(b, _)| b.start as f64 / rate)
        .collect();
    if t.len() < 3 {
        return None;
    }
    let mut ratios: Vec<f64> = t
        .windows(2)
        .filter_map(|w| {
            let frames = (w[1] - w[0]) / FRAME_S;
            let whole = frames.round();
            (1.0..=12.0).contains(&whole).then(|| frames / whole)
        })
        .collect();
    let s0 = if ratios.is_empty() {
        1.0
    } else {
        median_of(&mut ratios)
    };
    let mut n = Vec::with_capacity(t.len());
    n.push(0.0);
    for w in t.windows(2) {
        let step = ((w[1] - w[0]) / (FRAME_S * s0)).round();
        n.push(n[n.len() - 1] + step);
    }
    let k = t.len() as f64;
    let (nm, tm) = (n.iter().sum::<f64>() / k, t.iter().sum::<f64>() / k);
    let sxx: f64 = n.iter().map(|x| (x - nm) * (x - nm)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = n.iter().zip(&t).map(|(x, y)| (x - nm) * (y - tm)).sum();
    let b = sxy / sxx;
    let a = tm - b * nm;
    let rss: f64 = n.iter().zip(&t).map(|(x, y)| (y - a - b * x).powi(2)).sum();
    let var = (rss / (k - 2.0)).max(hop_s * hop_s / 12.0);
    let s = b / FRAME_S;
    let sigma = (var / sxx).sqrt() / FRAME_S;
    (s.is_finite() && sigma.is_finite()).then_some((s, sigma))
}

fn spacing_consistency(d: &[Burst], used: &[bool], rate: f64) -> f64 {
    let starts: Vec<f64> = d
        .iter()
        .zip(used)
        .filter(|(_, u)| **u)
        .map(|(b, _)| b.start as f64 / rate)
        .collect();
    if starts.len() < 2 {
        return 0.0;
    }
    let ok = starts
        .windows(2)
        .filter(|w| {
            let frames = (w[1] - w[0]) / FRAME_S;
            frames.round() >= 10.0 && (frames - frames.round()).abs() * FRAME_S < 0.15e-3
        })
        .count();
    ok as f64 / (starts.len() - 1) as f64
}

#[cfg(test)]
mod tests;
