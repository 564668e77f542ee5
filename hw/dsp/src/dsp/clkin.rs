//! The CLKIN (reference clock) check: measure a known reference tone far below one
//! FFT bin and turn its offset into the receiver's reference error in ppm.
//!
//! Model: with a receiver reference error ε (its clock runs at (1+ε)·nominal), the LO sits
//! at fc·(1+ε) and the ADC samples at fs·(1+ε), so a tone at RF `f` appears at the
//! baseband frequency (f − fc·(1+ε))/(1+ε) on the nominal axis. Solving for ε from the
//! measured baseband frequency b: ε = f/(fc + b) − 1. ε > 0 (clock fast) ⇔ the tone
//! appears below its true frequency.
//!
//! Estimator: the first `coarse_len` samples are buffered and give a coarse frequency
//! (windowed FFT peak near the expected tone, parabolic interpolation); then every sample
//! is mixed down by the coarse frequency and averaged in blocks of M samples (decimated
//! rate ≈ 4 kHz) and a least-squares line is fitted to the unwrapped phase of the block
//! sums — streaming, with memory bounded by `coarse_len` + M.
use crate::error::{Error, Result};
use num_complex::Complex;
use rustfft::{Fft, FftPlanner};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;
use std::sync::Arc;

/// Settings of a [`ClkinEstimator`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClkinConfig {
    /// True RF frequency of the reference tone (Hz).
    pub tone_hz: f64,
    /// Nominal RF centre frequency of the capture (Hz).
    pub center_hz: f64,
    /// Nominal sample rate (Hz).
    pub sample_rate_hz: f64,
    /// Pass/fail tolerance (ppm).
    pub tolerance_ppm: f64,
    /// The tone is searched within ±`search_ppm` of its expected position (plus 4 bins).
    pub search_ppm: f64,
    /// Samples buffered for the coarse estimate (a power of two is fastest).
    pub coarse_len: usize,
    /// Target decimated rate of the fine estimator (Hz).
    pub decimated_rate_hz: f64,
}

impl ClkinConfig {
    /// Defaults: search ±50 ppm, 64 Ki coarse samples, 4 kHz decimated rate.
    pub fn new(tone_hz: f64, center_hz: f64, sample_rate_hz: f64, tolerance_ppm: f64) -> Self {
        Self {
            tone_hz,
            center_hz,
            sample_rate_hz,
            tolerance_ppm,
            search_ppm: 50.0,
            coarse_len: 1 << 16,
            decimated_rate_hz: 4000.0,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |field, detail: String| Err(Error::InvalidSetting { field, detail });
        for (field, v) in [
            ("tone_hz", self.tone_hz),
            ("center_hz", self.center_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("tolerance_ppm", self.tolerance_ppm),
            ("search_ppm", self.search_ppm),
            ("decimated_rate_hz", self.decimated_rate_hz),
        ] {
            if !v.is_finite() {
                return bad(field, format!("{v} is not finite"));
            }
        }
        if self.sample_rate_hz <= 0.0 {
            return bad(
                "sample_rate_hz",
                format!("{} is not > 0", self.sample_rate_hz),
            );
        }
        if self.tone_hz <= 0.0 {
            return bad("tone_hz", format!("{} is not > 0", self.tone_hz));
        }
        let off = self.tone_hz - self.center_hz;
        if off.abs() >= 0.45 * self.sample_rate_hz {
            return bad(
                "tone_hz",
                format!(
                    "{} Hz is {off} Hz from the centre {} Hz, outside the captured band ±{} Hz",
                    self.tone_hz,
                    self.center_hz,
                    0.45 * self.sample_rate_hz
                ),
            );
        }
        if !(256..=1 << 22).contains(&self.coarse_len) {
            return bad(
                "coarse_len",
                format!("{} is not in 256..=4194304", self.coarse_len),
            );
        }
        if self.tolerance_ppm < 0.0 || self.search_ppm <= 0.0 || self.decimated_rate_hz <= 0.0 {
            return bad(
                "tolerance_ppm",
                "tolerance, search span and rate must be > 0".into(),
            );
        }
        // The mixing table holds one entry per input sample of a decimated one.
        let factor = self.sample_rate_hz / self.decimated_rate_hz;
        if factor > MAX_DECIMATION as f64 {
            return bad(
                "sample_rate_hz",
                format!(
                    "{} is {factor:.0} times the decimated rate {} Hz; at most {MAX_DECIMATION}",
                    self.sample_rate_hz, self.decimated_rate_hz
                ),
            );
        }
        Ok(())
    }
}

/// Largest `sample_rate_hz / decimated_rate_hz` (the mixing table's length).
const MAX_DECIMATION: usize = 1 << 22;

/// The measured reference tone and the reference error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClkinEstimate {
    /// True RF frequency of the tone (Hz).
    pub tone_hz: f64,
    /// Measured RF frequency on the receiver's nominal axis: centre + baseband (Hz).
    pub measured_hz: f64,
    /// Measured baseband frequency (Hz).
    pub baseband_hz: f64,
    /// Receiver reference error (ppm), positive when the receiver clock runs fast.
    pub ppm: f64,
    /// One-sigma uncertainty of `ppm`.
    pub ppm_uncertainty: f64,
    /// Tone power over the median of the coarse spectrum (dB).
    pub tone_snr_db: f64,
    /// Samples used.
    pub samples: u64,
}

enum Stage {
    Collecting,
    Tracking,
    Failed(String),
}

/// Streaming CLKIN estimator: [`ClkinEstimator::feed`] blocks, then [`ClkinEstimator::finish`].
pub struct ClkinEstimator {
    cfg: ClkinConfig,
    stage: Stage,
    coarse: Vec<Complex<f32>>,
    coarse_fill: usize,
    /// Planned in `new` so the switch to tracking does no planning mid-stream.
    coarse_fft: Arc<dyn Fft<f32>>,
    coarse_window: Vec<f32>,
    coarse_work: Vec<Complex<f32>>,
    coarse_hz: f64,
    tone_snr_db: f64,
    /// e^{-j2π f_c m / fs}, m = 0..M.
    table: Vec<Complex<f32>>,
    m: usize,
    acc: Complex<f32>,
    block: u64,
    prev: Complex<f64>,
    phase: f64,
    // Regression sums over (t = block index, y = unwrapped phase).
    s_t: f64,
    s_tt: f64,
    s_y: f64,
    s_ty: f64,
    s_yy: f64,
    samples: u64,
}

impl std::fmt::Debug for ClkinEstimator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClkinEstimator")
            .field("cfg", &self.cfg)
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl ClkinEstimator {
    /// Allocate every buffer (coarse buffer and mixing table).
    pub fn new(cfg: ClkinConfig) -> Result<Self> {
        cfg.validate()?;
        let m = ((cfg.sample_rate_hz / cfg.decimated_rate_hz).round() as usize).max(1);
        let nfft = cfg.coarse_len.next_power_of_two();
        Ok(Self {
            coarse_fft: FftPlanner::<f32>::new().plan_fft_forward(nfft),
            coarse_window: super::window::Window::Hann.build(cfg.coarse_len),
            coarse_work: vec![Complex::default(); nfft],
            coarse: vec![Complex::default(); cfg.coarse_len],
            table: vec![Complex::default(); m],
            cfg,
            stage: Stage::Collecting,
            coarse_fill: 0,
            coarse_hz: 0.0,
            tone_snr_db: 0.0,
            m: 0,
            acc: Complex::default(),
            block: 0,
            prev: Complex::default(),
            phase: 0.0,
            s_t: 0.0,
            s_tt: 0.0,
            s_y: 0.0,
            s_ty: 0.0,
            s_yy: 0.0,
            samples: 0,
        })
    }

    /// The settings.
    pub fn config(&self) -> &ClkinConfig {
        &self.cfg
    }

    /// Feed a block of samples (any length).
    pub fn feed(&mut self, x: &[Complex<f32>]) {
        self.samples += x.len() as u64;
        match self.stage {
            Stage::Failed(_) => {}
            Stage::Tracking => self.track(x),
            Stage::Collecting => {
                let take = (self.coarse.len() - self.coarse_fill).min(x.len());
                self.coarse[self.coarse_fill..self.coarse_fill + take].copy_from_slice(&x[..take]);
                self.coarse_fill += take;
                if self.coarse_fill == self.coarse.len() {
                    self.start_tracking();
                    if matches!(self.stage, Stage::Tracking) {
                        self.track(&x[take..]);
                    }
                }
            }
        }
    }

    fn start_tracking(&mut self) {
        match self.coarse_estimate() {
            Ok((hz, snr)) => {
                self.coarse_hz = hz;
                self.tone_snr_db = snr;
                let w = -2.0 * PI * hz / self.cfg.sample_rate_hz;
                for (i, t) in self.table.iter_mut().enumerate() {
                    let c = Complex::from_polar(1.0, w * i as f64);
                    *t = Complex::new(c.re as f32, c.im as f32);
                }
                self.stage = Stage::Tracking;
                let buf = std::mem::take(&mut self.coarse);
                self.track(&buf[..self.coarse_fill]);
                self.coarse = buf;
            }
            Err(e) => self.stage = Stage::Failed(e),
        }
    }

    /// Coarse tone frequency (baseband Hz) and its SNR over the median bin.
    fn coarse_estimate(&mut self) -> std::result::Result<(f64, f64), String> {
        let n = self.coarse_fill;
        if n < 64 {
            return Err(format!("only {n} samples, too few to find the tone"));
        }
        let fs = self.cfg.sample_rate_hz;
        let nfft = self.coarse_work.len();
        // A short capture (finish before the buffer filled) gets its own window.
        let short;
        let win: &[f32] = if n == self.coarse_window.len() {
            &self.coarse_window
        } else {
            short = super::window::Window::Hann.build(n);
            &short
        };
        let buf = &mut self.coarse_work;
        buf.iter_mut().for_each(|b| *b = Complex::default());
        for ((b, x), w) in buf.iter_mut().zip(&self.coarse[..n]).zip(win) {
            *b = x * *w;
        }
        self.coarse_fft.process(buf);
        let pow: Vec<f32> = buf.iter().map(|c| c.norm_sqr()).collect();
        let bin = fs / nfft as f64;
        let expected = self.cfg.tone_hz - self.cfg.center_hz;
        let span = self.cfg.search_ppm * 1e-6 * self.cfg.tone_hz.abs() + 4.0 * bin;
        // |expected| < 0.45·fs (validated), so the centre bin is within the spectrum;
        // a search wider than the whole spectrum looks at each bin once.
        let centre = (expected / bin).round() as i64;
        let reach = ((span / bin).ceil() as i64).min(nfft as i64 / 2);
        let (lo, hi) = (centre - reach, centre + reach);
        let idx = |k: i64| k.rem_euclid(nfft as i64) as usize;
        let (mut best_k, mut best_p) = (lo, f32::MIN);
        for k in lo..=hi {
            let p = pow[idx(k)];
            if p > best_p {
                best_p = p;
                best_k = k;
            }
        }
        let mut sorted = pow.clone();
        let mid = sorted.len() / 2;
        let median = *sorted.select_nth_unstable_by(mid, f32::total_cmp).1;
        let snr = 10.0 * (f64::from(best_p) / f64::from(median.max(f32::MIN_POSITIVE))).log10();
        if snr.is_nan() || snr < 10.0 {
            return Err(format!(
                "no tone within ±{span:.1} Hz of {:.1} Hz (best {snr:.1} dB over the median)",
                self.cfg.tone_hz
            ));
        }
        // Parabolic interpolation on the log magnitude.
        let l = f64::from(pow[idx(best_k - 1)].max(f32::MIN_POSITIVE)).ln();
        let c = f64::from(best_p.max(f32::MIN_POSITIVE)).ln();
        let r = f64::from(pow[idx(best_k + 1)].max(f32::MIN_POSITIVE)).ln();
        let den = l - 2.0 * c + r;
        let delta = if den.abs() > 0.0 {
            (0.5 * (l - r) / den).clamp(-0.5, 0.5)
        } else {
            0.0
        };
        Ok(((best_k as f64 + delta) * bin, snr))
    }

    fn track(&mut self, mut x: &[Complex<f32>]) {
        let mlen = self.table.len();
        while !x.is_empty() {
            let take = (mlen - self.m).min(x.len());
            let (head, rest) = x.split_at(take);
            let mut re = [0.0f32; 4];
            let mut im = [0.0f32; 4];
            let tab = &self.table[self.m..self.m + take];
            let mut xc = head.chunks_exact(4);
            let mut tc = tab.chunks_exact(4);
            for (a, b) in (&mut xc).zip(&mut tc) {
                for j in 0..4 {
                    re[j] += a[j].re * b[j].re - a[j].im * b[j].im;
                    im[j] += a[j].re * b[j].im + a[j].im * b[j].re;
                }
            }
            let mut acc = self.acc + Complex::new(re.iter().sum::<f32>(), im.iter().sum::<f32>());
            for (a, b) in xc.remainder().iter().zip(tc.remainder()) {
                acc += a * b;
            }
            self.acc = acc;
            self.m += take;
            x = rest;
            if self.m == mlen {
                self.close_block();
            }
        }
    }

    fn close_block(&mut self) {
        let mlen = self.table.len() as f64;
        let n0 = self.block as f64 * mlen;
        let cycles = (self.coarse_hz / self.cfg.sample_rate_hz * n0).fract();
        let rot = Complex::from_polar(1.0, -2.0 * PI * cycles);
        let z = Complex::new(f64::from(self.acc.re), f64::from(self.acc.im)) * rot;
        if self.block == 0 {
            self.phase = z.arg();
        } else {
            self.phase += (z * self.prev.conj()).arg();
        }
        self.prev = z;
        let t = self.block as f64;
        let y = self.phase;
        self.s_t += t;
        self.s_tt += t * t;
        self.s_y += y;
        self.s_ty += t * y;
        self.s_yy += y * y;
        self.block += 1;
        self.m = 0;
        self.acc = Complex::default();
    }

    /// The estimate from everything fed so far.
    pub fn finish(&mut self) -> Result<ClkinEstimate> {
        if let Stage::Collecting = self.stage {
            self.start_tracking();
        }
        if let Stage::Failed(e) = &self.stage {
            return Err(Error::Clkin(e.clone()));
        }
        let k = self.block as f64;
        if self.block < 8 {
            return Err(Error::Clkin(format!(
                "only {} samples, too few for the fine estimate",
                self.samples
            )));
        }
        let sxx = self.s_tt - self.s_t * self.s_t / k;
        let sxy = self.s_ty - self.s_t * self.s_y / k;
        let syy = self.s_yy - self.s_y * self.s_y / k;
        let slope = sxy / sxx;
        let sse = (syy - slope * sxy).max(0.0);
        let se = (sse / (k - 2.0) / sxx).sqrt();
        let dec_rate = self.cfg.sample_rate_hz / self.table.len() as f64;
        let to_hz = dec_rate / (2.0 * PI);
        let baseband = self.coarse_hz + slope * to_hz;
        let sigma_hz = se * to_hz;
        let rf = self.cfg.center_hz + baseband;
        let eps = self.cfg.tone_hz / rf - 1.0;
        let deps = self.cfg.tone_hz / (rf * rf) * sigma_hz;
        Ok(ClkinEstimate {
            tone_hz: self.cfg.tone_hz,
            measured_hz: rf,
            baseband_hz: baseband,
            ppm: eps * 1e6,
            ppm_uncertainty: deps * 1e6,
            tone_snr_db: self.tone_snr_db,
            samples: self.samples,
        })
    }
}

/// What the driver says about the reference clock (each piece optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockEvidence {
    /// The clock source the task expects (`internal`, `external` …).
    pub expected_source: Option<String>,
    /// The clock source read back from the driver.
    pub clock_source: Option<String>,
    /// A `ref_locked`-style sensor.
    pub ref_locked: Option<bool>,
    /// The hardware-info `clock source` key (SoapyHackRF's only signal).
    pub hw_clock_source: Option<String>,
    /// `hackrf_clock` CLKIN status: `true` when a clock signal is detected.
    pub hackrf_clkin: Option<bool>,
}

/// One piece of evidence and whether it supports the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceItem {
    /// What was looked at.
    pub name: String,
    /// What it said.
    pub value: String,
    /// `false` when it contradicts a PASS.
    pub consistent: bool,
}

/// PASS or FAIL of the CLKIN check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ClkinStatus {
    /// Within tolerance and nothing contradicts.
    Pass,
    /// Anything else.
    Fail,
}

/// The CLKIN check's verdict with every piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClkinReport {
    /// True RF frequency of the reference tone (Hz).
    pub tone_hz: f64,
    /// Measured tone frequency on the receiver's axis (Hz), when found.
    pub measured_hz: Option<f64>,
    /// Reference error (ppm, positive = receiver clock fast), when measured.
    pub ppm: Option<f64>,
    /// One-sigma uncertainty (ppm).
    pub ppm_uncertainty: Option<f64>,
    /// Tolerance applied (ppm).
    pub tolerance_ppm: f64,
    /// The verdict.
    pub status: ClkinStatus,
    /// Why, in one line.
    pub detail: String,
    /// Every piece of evidence considered.
    pub evidence: Vec<EvidenceItem>,
}

fn is_external(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    s.contains("ext") || s.contains("clkin") || s == "gpsdo" || s == "mimo"
}

/// A reference error in ppm, signed, with `prec` decimals — the one formatter
/// every command uses. A value that rounds to zero (including `-0.0`) prints as
/// plain `0.0000`, never `-0.0000` or `+0.0000`.
pub fn fmt_ppm(ppm: f64, prec: usize) -> String {
    let s = format!("{ppm:+.prec$}");
    let digits = s.trim_start_matches(['+', '-']);
    if digits.bytes().all(|b| b == b'0' || b == b'.') {
        digits.to_owned()
    } else {
        s
    }
}

/// What the driver said about the reference clock, each item marked consistent or
/// not with the expected source.
fn driver_evidence(evidence: &ClockEvidence) -> Vec<EvidenceItem> {
    let mut items = Vec::new();
    let want_ext = evidence.expected_source.as_deref().map(is_external);
    if let Some(e) = &evidence.expected_source {
        items.push(EvidenceItem {
            name: "expected clock source".into(),
            value: e.clone(),
            consistent: true,
        });
    }
    let mut source_item = |name: &str, v: &Option<String>| {
        if let Some(v) = v {
            let consistent = want_ext.is_none_or(|w| w == is_external(v));
            items.push(EvidenceItem {
                name: name.into(),
                value: v.clone(),
                consistent,
            });
        }
    };
    source_item("clock source read back", &evidence.clock_source);
    source_item("hardware info clock source", &evidence.hw_clock_source);
    if let Some(l) = evidence.ref_locked {
        items.push(EvidenceItem {
            name: "ref_locked sensor".into(),
            value: l.to_string(),
            consistent: l,
        });
    }
    if let Some(c) = evidence.hackrf_clkin {
        items.push(EvidenceItem {
            name: "hackrf_clock CLKIN".into(),
            value: if c {
                "clock signal detected"
            } else {
                "no clock signal detected"
            }
            .into(),
            consistent: want_ext.is_none_or(|w| w == c),
        });
    }
    items
}

/// Combine the measurement with the driver's evidence. PASS only when |ppm| ≤ tolerance,
/// the uncertainty is below the tolerance, and no evidence contradicts.
pub fn judge_clkin(
    tone_hz: f64,
    tolerance_ppm: f64,
    estimate: std::result::Result<&ClkinEstimate, &Error>,
    evidence: &ClockEvidence,
) -> ClkinReport {
    let mut items = driver_evidence(evidence);
    let (measured_hz, ppm, unc, mut detail, mut pass) = match estimate {
        Ok(e) => {
            items.push(EvidenceItem {
                name: "measured reference error".into(),
                value: format!("{} ± {:.4} ppm", fmt_ppm(e.ppm, 4), e.ppm_uncertainty),
                consistent: e.ppm.abs() <= tolerance_ppm,
            });
            let ok = e.ppm.abs() <= tolerance_ppm && e.ppm_uncertainty < tolerance_ppm;
            let d = if ok {
                format!("{} ppm within ±{tolerance_ppm} ppm", fmt_ppm(e.ppm, 4))
            } else if e.ppm.abs() > tolerance_ppm {
                format!("{} ppm outside ±{tolerance_ppm} ppm", fmt_ppm(e.ppm, 4))
            } else {
                format!(
                    "uncertainty {:.4} ppm too large for ±{tolerance_ppm} ppm",
                    e.ppm_uncertainty
                )
            };
            (
                Some(e.measured_hz),
                Some(e.ppm),
                Some(e.ppm_uncertainty),
                d,
                ok,
            )
        }
        Err(err) => (None, None, None, err.to_string(), false),
    };
    let against: Vec<&str> = items
        .iter()
        .filter(|i| !i.consistent && i.name != "measured reference error")
        .map(|i| i.name.as_str())
        .collect();
    if !against.is_empty() {
        pass = false;
        detail = format!("{detail}; contradicted by {}", against.join(", "));
    }
    ClkinReport {
        tone_hz,
        measured_hz,
        ppm,
        ppm_uncertainty: unc,
        tolerance_ppm,
        status: if pass {
            ClkinStatus::Pass
        } else {
            ClkinStatus::Fail
        },
        detail,
        evidence: items,
    }
}

#[cfg(test)]
pub(crate) mod tests;
