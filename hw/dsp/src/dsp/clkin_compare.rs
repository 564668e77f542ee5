//! CLKIN by comparison: two radios that stream at once see one tone of any accuracy;
//! the relative frequency of the second radio's clock (SLAVE) to the first's (MASTER)
//! is the slope of the phase difference of the tone in the two streams
//! (`docs/operator.md#verifying-a-slaves-clkin`).
//!
//! Model: a radio whose clock runs at (1+ε)·nominal (LO and sample clock alike) sees a
//! tone at RF `f` at the baseband frequency b = f/(1+ε) − fc, per sample index, in
//! nominal hertz. For two radios tuned to the same `fc`, (1+ε_s)/(1+ε_m) =
//! (fc + b_m)/(fc + b_s): the tone's own frequency `f` drops out, so it may be of any
//! accuracy, as long as both radios see the same one.
//!
//! Estimator, per radio ([`ToneTracker`], streaming, memory bounded):
//!
//! 1. mix down by the tone's nominal baseband frequency and low-pass with a triangular
//!    (sinc²) kernel of 2·M taps, decimated by M, so the search window (±`search_ppm`
//!    of the tone, at least ±1 kHz) fills a quarter of the decimated band;
//! 2. the first `W` decimated samples (about 0.1 s) are kept for a coarse search: one
//!    zero-padded Hann FFT finds the tone in the window, its level and the noise;
//! 3. from then on every decimated sample is mixed down by that coarse frequency and
//!    summed over blocks of K = W/16 samples: one complex *phase point* per block
//!    (the coarse error is below a quarter of a point's bandwidth, so consecutive
//!    points turn by less than 1/32 cycle and nothing aliases).
//!
//! Only the coarse-search block and the phase points are kept (≈ 160 points a second,
//! at most [`ToneTrackConfig::max_points`]), whatever the sample rate or duration.
//!
//! Comparison ([`compare_tracks`]): the phase of SLAVE's points minus MASTER's, point by
//! point (aligned by sample count: a start offset between the streams only adds a
//! constant phase), unwrapped and fitted with a straight line by least squares. The
//! slope plus the difference of the coarse frequencies is b_s − b_m. Its standard
//! uncertainty comes from the fit's residual, widened by the residual's lag-1
//! autocorrelation (a drifting, not white, phase difference counts as fewer
//! independent points), so it is never smaller than the data support.
use crate::dsp::clkin::{FirstStage, Plain};
use crate::error::{Error, Result};
use num_complex::Complex;
use rustfft::FftPlanner;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// The default search window around the tone (± ppm): a free-running lab generator
/// and two free-running radios are each within ±20 ppm.
pub const COMPARE_SEARCH_PPM: f64 = 50.0;

/// The search window is at least this wide on each side (Hz).
const MIN_SPAN_HZ: f64 = 1_000.0;

/// The largest first-stage decimation (keeps the mixing tables small).
const MAX_DECIMATION: usize = 1 << 16;

/// A phase point is the sum of this fraction of the coarse-search block.
const POINTS_PER_WARMUP: usize = 16;

/// A phase point needs at least this SNR (dB): below it the phase difference of two
/// points is too noisy to unwrap without cycle slips.
pub const MIN_POINT_SNR_DB: f64 = 10.0;

/// The fit needs at least this many phase points in both streams.
pub const MIN_POINTS: usize = 16;

/// Settings of one radio's [`ToneTracker`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToneTrackConfig {
    /// The tone's nominal RF frequency (Hz); its real frequency may be off by up to
    /// `search_ppm`.
    pub tone_hz: f64,
    /// Nominal RF centre frequency the radio is tuned to (Hz).
    pub center_hz: f64,
    /// Nominal sample rate (Hz).
    pub sample_rate_hz: f64,
    /// Half-width of the window the tone is searched in (ppm of `tone_hz`).
    pub search_ppm: f64,
    /// At most this many phase points are kept; a longer stream is measured over its
    /// first `max_points` points.
    pub max_points: usize,
}

impl ToneTrackConfig {
    /// Defaults: search ±[`COMPARE_SEARCH_PPM`], at most 2²⁰ phase points.
    pub fn new(tone_hz: f64, center_hz: f64, sample_rate_hz: f64) -> Self {
        Self {
            tone_hz,
            center_hz,
            sample_rate_hz,
            search_ppm: COMPARE_SEARCH_PPM,
            max_points: 1 << 20,
        }
    }

    /// Half-width of the search window (Hz).
    fn span_hz(&self) -> f64 {
        (self.search_ppm * 1e-6 * self.tone_hz).max(MIN_SPAN_HZ)
    }

    fn validate(&self) -> Result<()> {
        let bad = |field, detail: String| Err(Error::InvalidSetting { field, detail });
        for (field, v) in [
            ("tone_hz", self.tone_hz),
            ("center_hz", self.center_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("search_ppm", self.search_ppm),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(field, format!("{v} is not a positive finite number"));
            }
        }
        let nco = self.tone_hz - self.center_hz;
        if nco.abs() >= self.sample_rate_hz / 2.0 {
            return bad(
                "tone_hz",
                format!(
                    "{} Hz is outside the captured band {} Hz ± {} Hz",
                    self.tone_hz,
                    self.center_hz,
                    self.sample_rate_hz / 2.0
                ),
            );
        }
        if self.max_points < MIN_POINTS {
            return bad(
                "max_points",
                format!("{} is below {MIN_POINTS}", self.max_points),
            );
        }
        Ok(())
    }
}

/// What the coarse search found in one stream.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Coarse {
    /// The tone's offset from the nominal baseband frequency (Hz).
    offset_hz: f64,
    /// The tone's amplitude (full scale 1).
    amplitude: f64,
    /// Noise power per decimated sample.
    noise_dec: f64,
}

/// One radio's streaming tone tracker: [`ToneTracker::feed`] blocks, mark a break in
/// the stream with [`ToneTracker::break_track`], then [`ToneTracker::finish`].
pub struct ToneTracker {
    cfg: ToneTrackConfig,
    /// The tone's nominal baseband frequency (Hz).
    nco_hz: f64,
    /// The first stage: the mixer and decimating low-pass.
    stage: FirstStage<Plain>,
    /// Decimated samples so far (the first stage's output index).
    dec_count: u64,
    /// The coarse-search block (`warmup` decimated samples).
    warm: Vec<Complex<f32>>,
    warmup: usize,
    coarse: Option<Coarse>,
    /// The phase-point accumulator and how many decimated samples it holds.
    pacc: Complex<f64>,
    pfill: usize,
    points: Vec<Complex<f32>>,
    samples: u64,
    /// Input samples with |I| or |Q| at full scale (1.0, as a capture counts them).
    clipped: u64,
    /// Input samples fed before the stream broke (an overflow), if it did.
    broken_at: Option<u64>,
}

impl std::fmt::Debug for ToneTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToneTracker")
            .field("cfg", &self.cfg)
            .field("decimation", &self.stage.decimation())
            .field("samples", &self.samples)
            .field("points", &self.points.len())
            .finish_non_exhaustive()
    }
}

impl ToneTracker {
    /// Allocate every buffer.
    pub fn new(cfg: ToneTrackConfig) -> Result<Self> {
        cfg.validate()?;
        let fs = cfg.sample_rate_hz;
        let target = 8.0 * cfg.span_hz();
        let m = ((fs / target).floor() as usize).clamp(1, MAX_DECIMATION);
        let nco_hz = cfg.tone_hz - cfg.center_hz;
        // About 0.1 s of decimated samples for the coarse search, a power of two.
        let fd = fs / m as f64;
        let warmup = ((0.1 * fd) as usize)
            .next_power_of_two()
            .clamp(1 << 10, 1 << 14);
        Ok(Self {
            cfg,
            nco_hz,
            stage: FirstStage::new(m, nco_hz, fs),
            dec_count: 0,
            warm: Vec::with_capacity(warmup),
            warmup,
            coarse: None,
            pacc: Complex::default(),
            pfill: 0,
            points: Vec::new(),
            samples: 0,
            clipped: 0,
            broken_at: None,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ToneTrackConfig {
        &self.cfg
    }

    /// The first stage's decimated rate (Hz).
    fn fd(&self) -> f64 {
        self.cfg.sample_rate_hz / self.stage.decimation() as f64
    }

    /// Decimated samples summed into one phase point.
    fn per_point(&self) -> usize {
        self.warmup / POINTS_PER_WARMUP
    }

    /// Input samples that make one phase point.
    pub fn samples_per_point(&self) -> u64 {
        (self.per_point() * self.stage.decimation()) as u64
    }

    /// Samples fed (up to the break, if the stream broke).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Feed a block of samples (any length). Ignored once the track is broken or full.
    pub fn feed(&mut self, mut x: &[Complex<f32>]) {
        while !x.is_empty() && self.broken_at.is_none() && self.points.len() < self.cfg.max_points {
            let (take, y) = self.stage.push(x);
            self.samples += take as u64;
            self.clipped += x[..take.min(x.len())]
                .iter()
                .filter(|v| v.re.abs() >= 1.0 || v.im.abs() >= 1.0)
                .count() as u64;
            x = &x[take..];
            if let Some(y) = y {
                self.decimated(y);
            }
        }
    }

    /// The stream lost samples here (an overflow): the phase track ends, as its
    /// continuation could be any number of cycles on.
    pub fn break_track(&mut self) {
        if self.broken_at.is_none() {
            self.broken_at = Some(self.samples);
        }
    }

    /// One first-stage output sample.
    fn decimated(&mut self, y: Complex<f64>) {
        if self.coarse.is_none() {
            self.warm.push(Complex::new(y.re as f32, y.im as f32));
            if self.warm.len() == self.warmup {
                self.lock();
            }
            return;
        }
        self.track(y);
    }

    /// The coarse search over the warm-up block, then its samples into phase points.
    fn lock(&mut self) {
        let c = coarse(&self.warm, self.fd(), self.cfg.span_hz());
        self.coarse = Some(c);
        let warm = std::mem::take(&mut self.warm);
        for y in warm {
            self.track(Complex::new(f64::from(y.re), f64::from(y.im)));
        }
    }

    /// Mix one decimated sample down by the coarse offset and sum it into the
    /// current phase point.
    fn track(&mut self, y: Complex<f64>) {
        let Some(c) = self.coarse else { return };
        let cycles = (c.offset_hz / self.fd() * self.dec_count as f64).fract();
        self.pacc += y * Complex::from_polar(1.0, -2.0 * PI * cycles);
        self.dec_count += 1;
        self.pfill += 1;
        if self.pfill == self.per_point() {
            let p = self.pacc / self.pfill as f64;
            if self.points.len() < self.cfg.max_points {
                self.points.push(Complex::new(p.re as f32, p.im as f32));
            }
            self.pacc = Complex::default();
            self.pfill = 0;
        }
    }

    /// More than [`super::welch::MAX_CLIPPED_FRACTION`] of the samples clipped.
    fn saturated(&self) -> bool {
        self.samples > 0
            && self.clipped as f64 / self.samples as f64 > super::welch::MAX_CLIPPED_FRACTION
    }

    /// The track: the tone's coarse frequency, level and SNR, and the phase points.
    /// A stream too short for the coarse search is searched over what it gave.
    pub fn finish(mut self) -> ToneTrack {
        if self.coarse.is_none() && self.warm.len() >= 64 {
            // Short stream: search what there is; its points use the same K.
            self.lock();
        }
        let fd = self.fd();
        let k = self.per_point();
        let (offset_hz, level_dbfs, snr_db, point_snr_db) = match self.coarse {
            Some(c) => {
                let tone = c.amplitude * c.amplitude;
                // The first stage keeps the noise density (its kernel sums to 1):
                // the whole band holds M times a decimated sample's share.
                let full_band_noise = c.noise_dec * self.stage.decimation() as f64;
                // A tone without power (all-zero samples) has no level and no SNR; a
                // saturated input's level and band noise are the converter's, not the
                // signal's (the phase points keep the tone's frequency).
                let has_tone = tone > 0.0;
                let level = has_tone && !self.saturated();
                (
                    Some(c.offset_hz),
                    level.then(|| 20.0 * c.amplitude.log10()),
                    level.then(|| 10.0 * (tone / full_band_noise.max(1e-300)).log10()),
                    has_tone.then(|| 10.0 * (tone * k as f64 / c.noise_dec.max(1e-300)).log10()),
                )
            }
            None => (None, None, None, None),
        };
        ToneTrack {
            tone_hz: self.cfg.tone_hz,
            center_hz: self.cfg.center_hz,
            nco_hz: self.nco_hz,
            coarse_offset_hz: offset_hz,
            point_rate_hz: fd / k as f64,
            level_dbfs,
            snr_db,
            point_snr_db,
            samples: self.samples,
            clipped: self.clipped,
            samples_per_point: (k * self.stage.decimation()) as u64,
            broken_at: self.broken_at,
            points: self.points,
        }
    }
}

/// What one radio's [`ToneTracker`] saw.
#[derive(Debug, Clone, PartialEq)]
pub struct ToneTrack {
    /// The tone's nominal RF frequency (Hz).
    pub tone_hz: f64,
    /// The radio's nominal centre frequency (Hz).
    pub center_hz: f64,
    /// The tone's nominal baseband frequency (Hz).
    pub nco_hz: f64,
    /// The coarse search's tone offset from `nco_hz` (Hz), if the search ran.
    pub coarse_offset_hz: Option<f64>,
    /// Phase points per second of samples.
    pub point_rate_hz: f64,
    /// The tone's level (dBFS); `None` without a search, when the band searched
    /// has no power (all-zero samples), or when the input saturated (more than
    /// [`super::welch::MAX_CLIPPED_FRACTION`] of the samples clipped).
    pub level_dbfs: Option<f64>,
    /// The tone's power over the noise power in the whole captured band (dB); `None`
    /// as `level_dbfs`.
    pub snr_db: Option<f64>,
    /// Samples with |I| or |Q| at full scale.
    pub clipped: u64,
    /// The SNR of one phase point (dB); `None` as `level_dbfs`.
    pub point_snr_db: Option<f64>,
    /// Samples fed (up to the break).
    pub samples: u64,
    /// Input samples per phase point.
    pub samples_per_point: u64,
    /// Samples fed before the stream broke, if it did.
    pub broken_at: Option<u64>,
    /// The phase points.
    pub points: Vec<Complex<f32>>,
}

/// The relative frequency of SLAVE to MASTER and how it was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareEstimate {
    /// (1+ε_slave)/(1+ε_master) − 1, in ppb: positive when SLAVE's clock runs fast.
    pub relative_ppb: f64,
    /// Standard (1σ) uncertainty of `relative_ppb`, from the fit's residual.
    pub uncertainty_ppb: f64,
    /// The tone's baseband frequency in MASTER (Hz, nominal axis).
    pub master_baseband_hz: f64,
    /// SLAVE's baseband frequency minus MASTER's (Hz).
    pub difference_hz: f64,
    /// Phase points fitted.
    pub points: usize,
    /// Seconds of samples the fit spans.
    pub span_s: f64,
    /// RMS of the fit's residual (rad).
    pub residual_rms_rad: f64,
    /// Largest |residual| (rad): well above 1 means the phase track jumped.
    pub residual_max_rad: f64,
    /// Lag-1 autocorrelation of the residual (0 for white phase noise).
    pub residual_lag1: f64,
    /// The unwrapped phase difference, at most [`TRACE_POINTS`] points: seconds
    /// from the first point, radians.
    pub trace_t_s: Vec<f64>,
    /// SLAVE's tone phase minus MASTER's (rad) at `trace_t_s`, unwrapped, starting at 0.
    pub trace_rad: Vec<f64>,
    /// The fitted line's slope (rad/s) through the trace: 2π × `difference_hz`.
    pub fit_slope_rad_s: f64,
    /// The fitted line's value at t = 0 (rad).
    pub fit_intercept_rad: f64,
}

/// At most this many points of the phase trace are kept in an estimate (for its plot).
pub const TRACE_POINTS: usize = 400;

/// The relative frequency of `slave` to `master` from the slope of their phase
/// difference, or why there is none (a tone too weak in either, too few points).
pub fn compare_tracks(master: &ToneTrack, slave: &ToneTrack) -> Result<CompareEstimate> {
    for (who, t) in [("MASTER", master), ("SLAVE", slave)] {
        if t.coarse_offset_hz.is_some() && t.point_snr_db.is_none() {
            return Err(Error::Clkin(format!(
                "no tone in {who}: no signal, the band searched for the tone has no power \
                 (all-zero samples; {} delivered)",
                t.samples
            )));
        }
        let Some(snr) = t.point_snr_db else {
            return Err(Error::Clkin(format!(
                "{who} delivered {} samples, too few to search for the tone",
                t.samples
            )));
        };
        if snr < MIN_POINT_SNR_DB {
            return Err(Error::Clkin(format!(
                "tone too weak in {who}: {:.1} dB SNR per phase point, need {MIN_POINT_SNR_DB} dB \
                 ({:.1} dBFS, {:.1} dB over the noise in the captured band)",
                snr,
                t.level_dbfs.unwrap_or(f64::NAN),
                t.snr_db.unwrap_or(f64::NAN)
            )));
        }
    }
    for (who, t) in [("MASTER", master), ("SLAVE", slave)] {
        if t.points.len() < MIN_POINTS {
            return Err(Error::Clkin(format!(
                "{who} delivered {} samples{}, too few: the fit needs {MIN_POINTS} phase points \
                 of {} samples each after the tone search",
                t.samples,
                if t.broken_at.is_some() {
                    " before its stream broke"
                } else {
                    ""
                },
                t.samples_per_point
            )));
        }
    }
    if master.samples_per_point != slave.samples_per_point
        || (master.point_rate_hz - slave.point_rate_hz).abs() > 1e-9 * master.point_rate_hz
    {
        return Err(Error::Clkin(format!(
            "the two tracks differ in their phase points ({} and {} samples per point)",
            master.samples_per_point, slave.samples_per_point
        )));
    }
    let n = master.points.len().min(slave.points.len());
    if n < MIN_POINTS {
        return Err(Error::Clkin(format!(
            "only {n} phase points in both streams ({:.3} s), need {MIN_POINTS}",
            n as f64 / master.point_rate_hz
        )));
    }
    let dt = 1.0 / master.point_rate_hz;
    let d: Vec<f64> = unwrap(
        master.points[..n]
            .iter()
            .zip(&slave.points[..n])
            .map(|(m, s)| {
                let z = Complex::<f64>::new(f64::from(s.re), f64::from(s.im))
                    * Complex::<f64>::new(f64::from(m.re), -f64::from(m.im));
                z.arg()
            }),
    );
    let pm: Vec<f64> = unwrap(master.points[..n].iter().map(|p| p.arg() as f64));
    let fit_d = line_fit(&d, dt);
    let fit_m = line_fit(&pm, dt);
    let (cm, cs) = (
        master.coarse_offset_hz.unwrap_or(0.0),
        slave.coarse_offset_hz.unwrap_or(0.0),
    );
    let bm = master.nco_hz + cm + fit_m.slope / (2.0 * PI);
    let db = (slave.nco_hz + cs) - (master.nco_hz + cm) + fit_d.slope / (2.0 * PI);
    let sigma_db = fit_d.sigma_slope / (2.0 * PI);
    // A radio's DC offset and its LO leaking in are a carrier at 0 Hz of its baseband
    // whatever its clock does: two radios with the tone at their tuned centre and no
    // tone connected compare their own leakage, and agree to a fraction of a ppb. A
    // tone read within two of the fit's bins (and 4σ) of either radio's DC cannot be
    // told from that leakage.
    let span_s = n as f64 * dt;
    let reach_hz = 2.0 / span_s + 4.0 * (fit_m.sigma_slope / (2.0 * PI)).max(sigma_db);
    for (who, b) in [("MASTER", bm), ("SLAVE", bm + db)] {
        if b.abs() <= reach_hz {
            return Err(Error::Clkin(format!(
                "the tone lies at {who}'s own DC: it reads {b:+.3} Hz from the tuned centre, within \
                 {reach_hz:.3} Hz (two of the {:.3} Hz bins of {span_s:.3} s), where a radio's DC offset or \
                 LO leakage sits whatever its clock does and two radios agree with no tone connected; \
                 tune both radios away from the tone (e.g. 100 kHz below it)",
                1.0 / span_s,
            )));
        }
    }
    let fm = master.center_hz + bm;
    let fsl = fm + db;
    let rel = fm / fsl - 1.0;
    let sigma_rel = sigma_db * fm / (fsl * fsl);
    // The trace is the whole phase difference: the points were mixed down by each
    // radio's coarse frequency, so their difference turns that much slower.
    let coarse_rad_s = 2.0 * PI * ((slave.nco_hz + cs) - (master.nco_hz + cm));
    let step = n.div_ceil(TRACE_POINTS);
    let (trace_t_s, trace_rad): (Vec<f64>, Vec<f64>) = (0..n)
        .step_by(step)
        .map(|k| {
            let t = k as f64 * dt;
            (t, d[k] - d[0] + coarse_rad_s * t)
        })
        .unzip();
    Ok(CompareEstimate {
        relative_ppb: rel * 1e9,
        uncertainty_ppb: sigma_rel * 1e9,
        master_baseband_hz: bm,
        difference_hz: db,
        points: n,
        span_s,
        residual_rms_rad: fit_d.rms,
        residual_max_rad: fit_d.max,
        residual_lag1: fit_d.lag1,
        trace_t_s,
        trace_rad,
        fit_slope_rad_s: fit_d.slope + coarse_rad_s,
        fit_intercept_rad: fit_d.intercept - d[0],
    })
}

/// LOCKED, AGREE or UNLOCKED, from the measured relative frequency, the tolerance
/// and whether a radio reports running from an external reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CompareVerdict {
    /// |relative| + 2σ ≤ tolerance and a radio reports an external reference clock:
    /// SLAVE follows MASTER's reference.
    Locked,
    /// |relative| + 2σ ≤ tolerance, but no radio reports an external reference clock:
    /// the two agree, which free-running crystals can do by chance.
    Agree,
    /// |relative| − 2σ > tolerance: SLAVE does not follow it.
    Unlocked,
}

/// The verdict on an estimate: `None` when the ±2σ interval straddles the tolerance
/// (the measurement cannot tell). Within tolerance it is LOCKED only when
/// `external_reference` (a radio's clock source read back names an external
/// reference: [`is_external_clock`]), else AGREE.
pub fn judge_compare(
    e: &CompareEstimate,
    tolerance_ppb: f64,
    external_reference: bool,
) -> Option<CompareVerdict> {
    let (r, s) = (e.relative_ppb.abs(), 2.0 * e.uncertainty_ppb);
    if !(r.is_finite() && s.is_finite()) {
        return None;
    }
    if r + s <= tolerance_ppb {
        Some(if external_reference {
            CompareVerdict::Locked
        } else {
            CompareVerdict::Agree
        })
    } else if r - s > tolerance_ppb {
        Some(CompareVerdict::Unlocked)
    } else {
        None
    }
}

/// A least-squares line and its residual.
struct Fit {
    slope: f64,
    intercept: f64,
    sigma_slope: f64,
    rms: f64,
    max: f64,
    lag1: f64,
}

/// y[k] at t = k·dt fitted with a line; the slope's σ from the residual, widened by
/// its lag-1 autocorrelation ρ by √((1+ρ)/(1−ρ)) (an AR(1) residual's effective count).
fn line_fit(y: &[f64], dt: f64) -> Fit {
    let n = y.len() as f64;
    let tm = (n - 1.0) / 2.0 * dt;
    let ym = y.iter().sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (k, v) in y.iter().enumerate() {
        let t = k as f64 * dt - tm;
        sxx += t * t;
        sxy += t * (v - ym);
    }
    let slope = sxy / sxx;
    let intercept = ym - slope * tm;
    let e: Vec<f64> = y
        .iter()
        .enumerate()
        .map(|(k, v)| v - (intercept + slope * k as f64 * dt))
        .collect();
    let ss: f64 = e.iter().map(|v| v * v).sum();
    let lag: f64 = e.windows(2).map(|w| w[0] * w[1]).sum();
    let rho = if ss > 0.0 {
        (lag / ss).clamp(0.0, 0.99)
    } else {
        0.0
    };
    let s2 = ss / (n - 2.0).max(1.0);
    let sigma_slope = (s2 / sxx).sqrt() * ((1.0 + rho) / (1.0 - rho)).sqrt();
    Fit {
        slope,
        intercept,
        sigma_slope,
        rms: (ss / n).sqrt(),
        max: e.iter().fold(0.0, |a, v| a.max(v.abs())),
        lag1: rho,
    }
}

/// Phases (rad) unwrapped: each step taken to the nearest turn.
fn unwrap(phases: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    let mut last = 0.0;
    let mut turns = 0.0;
    for (i, p) in phases.enumerate() {
        if i > 0 {
            let d = p - last;
            turns -= (d / (2.0 * PI)).round() * 2.0 * PI;
        }
        last = p;
        out.push(p + turns);
    }
    out
}

/// The coarse search: the strongest bin of a 4× zero-padded Hann FFT within ±`span`,
/// refined by a parabola on the log power; the noise from the median bin.
fn coarse(x: &[Complex<f32>], fd: f64, span: f64) -> Coarse {
    let n = x.len();
    let nfft = (4 * n).next_power_of_two();
    let w: Vec<f64> = (0..n)
        .map(|i| 0.5 - 0.5 * (2.0 * PI * (i as f64 + 0.5) / n as f64).cos())
        .collect();
    let sw: f64 = w.iter().sum();
    let sw2: f64 = w.iter().map(|v| v * v).sum();
    let mut buf = vec![Complex::<f32>::default(); nfft];
    for ((b, v), w) in buf.iter_mut().zip(x).zip(&w) {
        *b = v * (*w as f32);
    }
    FftPlanner::<f32>::new()
        .plan_fft_forward(nfft)
        .process(&mut buf);
    let pow: Vec<f64> = buf.iter().map(|c| f64::from(c.norm_sqr())).collect();
    let df = fd / nfft as f64;
    let reach = ((span.min(fd / 2.0)) / df).floor() as i64;
    let idx = |k: i64| k.rem_euclid(nfft as i64) as usize;
    let mut best = 0i64;
    for k in -reach..=reach {
        if pow[idx(k)] > pow[idx(best)] {
            best = k;
        }
    }
    let (l, p, r) = (pow[idx(best - 1)], pow[idx(best)], pow[idx(best + 1)]);
    let (a, b, c) = (l.max(1e-300).ln(), p.max(1e-300).ln(), r.max(1e-300).ln());
    let den = a - 2.0 * b + c;
    let d = if den < 0.0 {
        (0.5 * (a - c) / den).clamp(-0.5, 0.5)
    } else {
        0.0
    };
    // The strongest bin without power: no tone, amplitude 0 (never the clamp's 1e-300).
    let peak = if p > 0.0 {
        (b - 0.25 * (a - c) * d).exp()
    } else {
        0.0
    };
    // The noise near the centre (±fd/4, where the first stage passes it flat): the
    // median bin, as a mean (a median bin of exponential noise is ln 2 of its mean).
    let quarter = (nfft / 4) as i64;
    let mut near: Vec<f64> = (-quarter..=quarter).map(|k| pow[idx(k)]).collect();
    let mid = near.len() / 2;
    let noise_bin = *near.select_nth_unstable_by(mid, f64::total_cmp).1 / std::f64::consts::LN_2;
    Coarse {
        offset_hz: (best as f64 + d) * df,
        amplitude: peak.sqrt() / sw,
        noise_dec: noise_bin / sw2,
    }
}

#[cfg(test)]
mod tests;
