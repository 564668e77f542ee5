//! The CLKIN (reference clock) check: measure a known reference tone far below one
//! FFT bin and turn its offset into the receiver's reference error in ppm — or say
//! why no number can be given (too weak, ambiguous, not steady), never a wrong one.
//!
//! Model: with a receiver reference error ε (its clock runs at (1+ε)·nominal), the LO sits
//! at fc·(1+ε) and the ADC samples at fs·(1+ε), so a tone at RF `f` appears at the
//! baseband frequency (f − fc·(1+ε))/(1+ε) on the nominal axis. Solving for ε from the
//! measured baseband frequency b: ε = f/(fc + b) − 1. ε > 0 (clock fast) ⇔ the tone
//! appears below its true frequency.
//!
//! Estimator (streaming, memory bounded): every sample is mixed down by the tone's
//! expected baseband frequency and low-passed by a triangular (sinc²) kernel of 2·M
//! taps, decimated by M, so the search window ±W ppm fills a quarter of the decimated
//! band (a few kHz) and carriers outside it alias in ≥ 34 dB down. Only the decimated
//! stream is kept (at most [`ClkinConfig::max_decimated`] samples). At the end one long
//! zero-padded Blackman-Harris FFT of the whole stream finds every carrier in the window
//! (a peak counts only above the window's own leakage of the stronger carriers) and the
//! noise level after integration; the reference is then refined by maximising
//! the Hann-windowed spectrum of the whole stream, and its standard uncertainty is the
//! linearised variance of that very estimator at the measured SNR (the Cramér–Rao
//! shape, σ_f² ∝ 1/(SNR·N³)), plus a bound on the pull of the other carriers seen and
//! a model-error floor. `docs/operator.md#clkin` states the rules.
use super::honest::{fmt_sigma, fmt_uncertain, Checked, Checks};
use super::welch::Spectrum;
use crate::error::{Error, Result};
use num_complex::Complex;
use serde::{Deserialize, Serialize};

mod mac;
mod search;
mod stage;

use stage::Dup;
pub(crate) use stage::{FirstStage, Plain};

/// The narrowest default search window (± ppm).
pub const DEFAULT_SEARCH_PPM: f64 = 10.0;

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
    /// The tone is searched within ±`search_ppm` of its expected position
    /// ([`ClkinConfig::new`]: twice the tolerance, at least 10 ppm, so a clock well
    /// outside a tight tolerance is still measured and reported as outside it).
    pub search_ppm: f64,
    /// The reference tone's expected level (dBFS), when known: among several carriers
    /// in the window only those within ±`expected_tolerance_db` of it can be the
    /// reference.
    pub expected_dbfs: Option<f64>,
    /// How far (dB) the reference may be from `expected_dbfs`.
    pub expected_tolerance_db: f64,
    /// At most this many decimated samples are kept; a longer capture is measured
    /// over its first `max_decimated` decimated samples.
    pub max_decimated: usize,
}

impl ClkinConfig {
    /// Defaults: search ±max(2 × tolerance, 10) ppm, no expected level (±6 dB when
    /// one is set), at most 2²⁰ decimated samples kept.
    pub fn new(tone_hz: f64, center_hz: f64, sample_rate_hz: f64, tolerance_ppm: f64) -> Self {
        Self {
            tone_hz,
            center_hz,
            sample_rate_hz,
            tolerance_ppm,
            search_ppm: (2.0 * tolerance_ppm).max(DEFAULT_SEARCH_PPM),
            expected_dbfs: None,
            expected_tolerance_db: 6.0,
            max_decimated: 1 << 20,
        }
    }

    /// The decimated rate the search window asks for (Hz): the window fills a quarter
    /// of the decimated band.
    fn decimated_target_hz(&self) -> f64 {
        (8.0 * self.span_hz()).max(MIN_DECIMATED_RATE_HZ)
    }

    /// Half-width of the search window (Hz).
    fn span_hz(&self) -> f64 {
        self.search_ppm * 1e-6 * self.tone_hz.abs()
    }

    fn validate(&self) -> Result<()> {
        let bad = |field, detail: String| Err(Error::InvalidSetting { field, detail });
        for (field, v) in [
            ("tone_hz", self.tone_hz),
            ("center_hz", self.center_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("tolerance_ppm", self.tolerance_ppm),
            ("search_ppm", self.search_ppm),
            ("expected_tolerance_db", self.expected_tolerance_db),
        ] {
            if !v.is_finite() {
                return bad(field, format!("{v} is not finite"));
            }
        }
        if let Some(l) = self.expected_dbfs {
            if !(l.is_finite() && l <= 0.0) {
                return bad("expected_dbfs", format!("{l} is not a level ≤ 0 dBFS"));
            }
        }
        if self.expected_tolerance_db <= 0.0 {
            return bad(
                "expected_tolerance_db",
                format!("{} is not > 0", self.expected_tolerance_db),
            );
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
        if self.tolerance_ppm < 0.0 {
            return bad(
                "tolerance_ppm",
                format!("{} is not ≥ 0", self.tolerance_ppm),
            );
        }
        if self.search_ppm <= 0.0 {
            return bad("search_ppm", format!("{} is not > 0", self.search_ppm));
        }
        let off = self.tone_hz - self.center_hz;
        let edge = 0.45 * self.sample_rate_hz;
        if off.abs() >= edge {
            return bad(
                "tone_hz",
                format!(
                    "{} Hz is {off} Hz from the centre {} Hz, outside the captured band ±{edge} Hz",
                    self.tone_hz, self.center_hz,
                ),
            );
        }
        if off.abs() + self.span_hz() >= edge {
            return bad(
                "tolerance_ppm",
                format!(
                    "the search window ±{} ppm (±{:.0} Hz) around {} Hz leaves the captured band ±{edge} Hz",
                    self.search_ppm,
                    self.span_hz(),
                    self.tone_hz
                ),
            );
        }
        let factor = self.sample_rate_hz / self.decimated_target_hz();
        if factor > MAX_DECIMATION as f64 {
            return bad(
                "sample_rate_hz",
                format!(
                    "{} is {factor:.0} times the decimated rate {} Hz of the search window; at most {MAX_DECIMATION}",
                    self.sample_rate_hz,
                    self.decimated_target_hz()
                ),
            );
        }
        if self.max_decimated < 64 {
            return bad(
                "max_decimated",
                format!("{} is not ≥ 64", self.max_decimated),
            );
        }
        Ok(())
    }
}

/// Largest decimation factor (the length of each mixing table).
const MAX_DECIMATION: usize = 1 << 20;
/// The decimated rate is at least this (Hz), so the noise is measured over many bins.
const MIN_DECIMATED_RATE_HZ: f64 = 1000.0;

/// A carrier seen inside the search window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClkinTone {
    /// RF frequency on the receiver's nominal axis (Hz).
    pub frequency_hz: f64,
    /// Level (dBFS, a full-scale complex tone is 0 dBFS).
    pub level_dbfs: f64,
    /// Its SNR after integration over the whole capture (dB over the mean noise bin).
    pub snr_db: f64,
    /// The reference error (ppm) it would mean if it were the reference.
    pub ppm: f64,
    /// `true` for the carrier taken as the reference.
    pub reference: bool,
}

/// The measured reference tone and the reference error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClkinEstimate {
    /// True RF frequency of the tone (Hz).
    pub tone_hz: f64,
    /// Measured RF frequency on the receiver's nominal axis: centre + baseband (Hz).
    pub measured_hz: f64,
    /// Measured baseband frequency (Hz).
    pub baseband_hz: f64,
    /// Receiver reference error (ppm), positive when the receiver clock runs fast.
    pub ppm: f64,
    /// One-sigma (standard) uncertainty of `ppm`.
    pub ppm_uncertainty: f64,
    /// The tone's SNR after integration (dB over the mean noise bin).
    pub tone_snr_db: f64,
    /// Samples used.
    pub samples: u64,
    /// The assumptions checked in the data (docs/operator.md#numbers-that-are-true-or-absent).
    pub checked: Checked,
}

/// Streaming CLKIN estimator: [`ClkinEstimator::feed`] blocks, then [`ClkinEstimator::finish`].
pub struct ClkinEstimator {
    cfg: ClkinConfig,
    /// The expected baseband frequency of the tone (the mixer's frequency, Hz).
    nco_hz: f64,
    /// The mixer and decimating low-pass, its tables laid out for the
    /// multiply-accumulate of `clkin/mac.rs`.
    stage: FirstStage<Dup>,
    /// The decimated stream.
    dec: Vec<Complex<f32>>,
    samples: u64,
    /// Every carrier seen in the window, after `finish`.
    tones: Vec<ClkinTone>,
}

impl std::fmt::Debug for ClkinEstimator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClkinEstimator")
            .field("cfg", &self.cfg)
            .field("decimation", &self.stage.decimation())
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl ClkinEstimator {
    /// Allocate every buffer (the mixing tables and room for the decimated stream).
    pub fn new(cfg: ClkinConfig) -> Result<Self> {
        cfg.validate()?;
        let fs = cfg.sample_rate_hz;
        let m = ((fs / cfg.decimated_target_hz()).floor() as usize).clamp(1, MAX_DECIMATION);
        let nco_hz = cfg.tone_hz - cfg.center_hz;
        let room = cfg.max_decimated.min(1 << 16);
        Ok(Self {
            cfg,
            nco_hz,
            stage: FirstStage::new(m, nco_hz, fs),
            dec: Vec::with_capacity(room),
            samples: 0,
            tones: Vec::new(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &ClkinConfig {
        &self.cfg
    }

    /// Every carrier seen inside the search window by the last [`ClkinEstimator::finish`],
    /// strongest first (the reference marked), also when no number could be given.
    pub fn tones(&self) -> &[ClkinTone] {
        &self.tones
    }

    /// Feed a block of samples (any length).
    pub fn feed(&mut self, mut x: &[Complex<f32>]) {
        while !x.is_empty() && self.dec.len() < self.cfg.max_decimated {
            let (take, y) = self.stage.push(x);
            self.samples += take as u64;
            x = &x[take..];
            if let Some(y) = y {
                self.dec.push(Complex::new(y.re as f32, y.im as f32));
            }
        }
    }

    /// Feed a block of CS16 samples (each int16 the float v/32768) as they are, with no
    /// float copy, where this CPU has a mixer kernel that reads them (AVX-512): the same
    /// estimate to the bit as [`Self::feed`] of the converted block. `false`, and nothing
    /// fed, where it has not: the caller then converts and uses [`Self::feed`].
    pub fn feed_cs16(&mut self, mut x: &[Complex<i16>]) -> bool {
        if !mac::reads_cs16() {
            return false;
        }
        while !x.is_empty() && self.dec.len() < self.cfg.max_decimated {
            let Some((take, y)) = self.stage.push_cs16(x) else {
                // Not reached: the kernel's presence was asked above.
                return false;
            };
            self.samples += take as u64;
            x = &x[take..];
            if let Some(y) = y {
                self.dec.push(Complex::new(y.re as f32, y.im as f32));
            }
        }
        true
    }

    /// The estimate from everything fed so far, or why there is none: too few
    /// samples, no tone above the detection threshold ("reference tone too weak"), or
    /// several carriers the task does not tell apart ("ambiguous"), or a carrier
    /// outside the decimated band that `band` (the same samples' full-band spectrum)
    /// shows folding onto the tone read. [`Self::tones`] then lists what was seen.
    pub fn finish(&mut self, band: &Spectrum) -> Result<ClkinEstimate> {
        self.tones.clear();
        let n = self.dec.len();
        if n < 64 {
            return Err(Error::Clkin(format!(
                "only {} samples, too few for the reference-tone search",
                self.samples
            )));
        }
        let m = self.stage.decimation();
        let fs = self.cfg.sample_rate_hz;
        let grid = search::Grid {
            fd: fs / m as f64,
            m,
            span_hz: self.cfg.span_hz(),
        };
        let seen = search::carriers(&self.dec, &grid);
        let cfg = &self.cfg;
        let to_ppm = |off: f64| (cfg.tone_hz / (cfg.center_hz + self.nco_hz + off) - 1.0) * 1e6;
        let to_rf = |off: f64| cfg.center_hz + self.nco_hz + off;
        self.tones = seen
            .carriers
            .iter()
            .map(|c| ClkinTone {
                frequency_hz: to_rf(c.offset_hz),
                level_dbfs: c.level_dbfs,
                snr_db: c.snr_db,
                ppm: to_ppm(c.offset_hz),
                reference: false,
            })
            .collect();
        let window = format!(
            "±{} ppm of {:.6} MHz over {:.3} s",
            cfg.search_ppm,
            cfg.tone_hz / 1e6,
            n as f64 / grid.fd
        );
        if seen.carriers.is_empty() && !seen.best_snr_db.is_finite() {
            // No power in the band (all-zero samples): no SNR to quote.
            return Err(Error::Clkin(format!(
                "reference tone too weak: no signal, the searched band has no power \
                 (searched {window})"
            )));
        }
        if seen.carriers.is_empty() && seen.best_snr_db >= seen.threshold_db {
            // Power over the threshold, yet no peak over its own surroundings: spread.
            return Err(Error::Clkin(format!(
                "no steady reference tone: the window's strongest bin stands {:.1} dB over the noise \
                 (need {:.1} dB), but no peak stands that far above the spectrum around it as one tone \
                 does: a drifting or modulated reference spreads over many bins (searched {window})",
                seen.best_snr_db, seen.threshold_db
            )));
        }
        if seen.carriers.is_empty() {
            // Nothing in the window; a carrier just beside it is not "too weak".
            if let Some((off, snr)) = seen.outside {
                return Err(Error::Clkin(format!(
                    "no reference tone within {window}: the strongest bin there stands {:.1} dB over the noise \
                     (need {:.1} dB), but a carrier {snr:.1} dB over it lies outside the window at {:.6} MHz \
                     ({} ppm if it were the reference): a reference at another frequency, or a clock further \
                     off than the window (a wider tolerance widens it)",
                    seen.best_snr_db,
                    seen.threshold_db,
                    to_rf(off) / 1e6,
                    fmt_ppm(to_ppm(off), 2)
                )));
            }
            return Err(Error::Clkin(format!(
                "reference tone too weak: SNR {:.1} dB after integration, need {:.1} dB (searched {window})",
                seen.best_snr_db, seen.threshold_db
            )));
        }
        // Which carriers can be the reference: all, or those at the expected level.
        // One carrier in the window is an assumption of the estimate, checked here:
        // a second one, at any level, makes the reference ambiguous unless the task's
        // expected level leaves exactly one.
        let mut can: Vec<usize> = (0..seen.carriers.len()).collect();
        if let Some(l) = cfg.expected_dbfs {
            can.retain(|&i| (seen.carriers[i].level_dbfs - l).abs() <= cfg.expected_tolerance_db);
        }
        let mut checks = Checks::new();
        checks.check("a carrier at the expected level", !can.is_empty(), || {
            format!(
                "no tone at the expected {} ± {} dBFS within {window}; seen {}",
                cfg.expected_dbfs.unwrap_or(f64::NAN),
                cfg.expected_tolerance_db,
                list(&self.tones, self.tones.len())
            )
        });
        checks.check("one carrier in the search window", can.len() <= 1, || {
            let rivals: Vec<ClkinTone> = can.iter().map(|&i| self.tones[i].clone()).collect();
            format!(
                "ambiguous: {} tones within ±{} ppm of the reference{}: {}; \
                 give the reference's expected level (clkin.expected_dbfs) or a tolerance that leaves one",
                rivals.len(),
                cfg.search_ppm,
                if cfg.expected_dbfs.is_some() {
                    " at the expected level"
                } else {
                    ""
                },
                list(&rivals, rivals.len())
            )
        });
        let pick = can.first().copied().unwrap_or(0);
        let others: Vec<&search::Carrier> = seen
            .carriers
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != pick)
            .map(|(_, c)| c)
            .collect();
        let fine = search::refine(&self.dec, &grid, &seen.carriers[pick], &others);
        // One steady tone is an assumption too: the number is the tone's frequency over
        // the whole capture, its σ the estimator's noise. Each half is measured on its
        // own (around the whole's carrier, ± one of the half's bins); halves further
        // apart than 4σ of their difference moved. A move within a tenth of the
        // tolerance cannot change the verdict and widens the uncertainty to cover it;
        // a larger one, or a half whose tone left its search, is no single number.
        let mut drift_ppm = None;
        if can.len() == 1 {
            let (h1, h2) = self.dec.split_at(n / 2);
            let per_hz = to_ppm_per_hz(cfg, self.nco_hz);
            let allowed_ppm = cfg.tolerance_ppm / 10.0;
            // Each half's own tone, looked for within the allowance and two of its bins.
            let reach_hz = allowed_ppm / per_hz + 4.0 * grid.fd / n as f64;
            let whole = &seen.carriers[pick];
            let halves = [h1, h2].map(|h| {
                let (at, edge) = search::strongest_near(h, &grid, fine.offset_hz, reach_hz);
                let c = search::Carrier {
                    offset_hz: at,
                    ..whole.clone()
                };
                (search::refine(h, &grid, &c, &others), edge)
            });
            let left: Vec<&str> = ["first", "second"]
                .into_iter()
                .zip(&halves)
                .filter(|(_, h)| h.1)
                .map(|(name, _)| name)
                .collect();
            let half_ppm = halves.each_ref().map(|h| to_ppm(h.0.offset_hz));
            let moved_ppm = half_ppm[1] - half_ppm[0];
            let moved_sigma_ppm = per_hz * halves[0].0.sigma_hz.hypot(halves[1].0.sigma_hz);
            let drifted = moved_ppm.abs() > 4.0 * moved_sigma_ppm;
            checks.check(
                "the reference tone steady over the capture",
                left.is_empty() && (!drifted || moved_ppm.abs() <= allowed_ppm),
                || {
                    let why = if left.is_empty() {
                        format!(
                            "the capture's first half reads {} ppm, its second {} ppm ({:.0}σ apart, more than \
                             a tenth of the ±{} ppm tolerance)",
                            fmt_ppm(half_ppm[0], 4),
                            fmt_ppm(half_ppm[1], 4),
                            moved_ppm.abs() / moved_sigma_ppm.max(f64::MIN_POSITIVE),
                            cfg.tolerance_ppm
                        )
                    } else {
                        format!(
                            "in the capture's {} half the tone lies further than the {} ppm looked at around \
                             the whole capture's",
                            left.join(" and "),
                            fmt_ppm(reach_hz * per_hz, 4).trim_start_matches('+')
                        )
                    };
                    format!(
                        "the reference tone is not steady: {why}: a drifting reference or an unlocked clock has \
                         no single error over the capture"
                    )
                },
            );
            drift_ppm = drifted.then_some(moved_ppm);
            // One tone has one amplitude. Two carriers closer than the search resolves
            // read as one whose frequency lies between them, and beat: the tone's
            // amplitude in eighths of the capture (each at its own frequency, within the
            // halves' reach, so an allowed drift does not count) must agree within
            // AMPLITUDE_STEADY plus 5σ of the noise.
            if seen.carriers.len() == 1 {
                if let Some((worst, allowed)) =
                    amplitude_spread(&self.dec, fine.offset_hz, reach_hz, grid.fd, whole.sigma2)
                {
                    checks.check(
                        "the reference tone's amplitude steady over the capture",
                        worst <= allowed,
                        || {
                            format!(
                                "the reference tone is not one carrier: its amplitude in eighths of the \
                                 capture moves {:.1} % from its mean (noise allows {:.1} %): two carriers \
                                 too close for the search to tell apart beat, and read as one between them",
                                100.0 * worst,
                                100.0 * allowed
                            )
                        },
                    );
                }
            }
        }
        // The receiver's own DC (its converters' offset, its LO leaking in) is a carrier
        // at 0 Hz of baseband whatever its clock does, so a tone read there measures
        // nothing: with no reference connected the leakage alone reads as a perfect
        // clock. A tone within two of the capture's bins (and 4σ) of it cannot be told
        // from that leakage, nor from a blend of it with the reference.
        let dc_reach_hz = 2.0 * grid.fd / n as f64 + 4.0 * fine.sigma_hz;
        let at_dc_hz = self.nco_hz + fine.offset_hz;
        checks.check(
            "the reference tone away from the receiver's DC",
            at_dc_hz.abs() > dc_reach_hz,
            || {
                format!(
                    "the reference tone lies at the receiver's own DC: it reads {at_dc_hz:+.3} Hz from the \
                     tuned centre, within {dc_reach_hz:.3} Hz (two of the capture's {:.3} Hz bins), where \
                     the radio's DC offset or LO leakage sits whatever its clock does and reads as \
                     {} ppm with no reference connected; tune the centre further from the tone than the \
                     ±{} ppm search window (e.g. 100 kHz below it)",
                    grid.fd / n as f64,
                    fmt_ppm(to_ppm(-self.nco_hz), 4),
                    cfg.search_ppm
                )
            },
        );
        // The decimation keeps only a few kHz around the tone, and a carrier outside
        // that band folds into it, ≥ 34 dB down but at a place of its own: with no
        // reference there (or one much weaker) that image alone read as the reference.
        // The capture's full-band spectrum shows every carrier outside the band; one
        // whose image lands on the tone read, within 20 dB of its level, may be what was
        // read.
        let fold = folded_onto(
            band,
            &grid,
            self.nco_hz,
            fine.offset_hz,
            seen.carriers[pick].level_dbfs,
        );
        checks.check(
            "no carrier outside the decimated band folded onto the reference",
            fold.is_none(),
            || {
                let f = fold.unwrap_or_default();
                format!(
                    "the tone read at {:.6} MHz ({:.1} dBFS) may be another carrier folded in: the \
                     capture's spectrum shows {:.1} dBFS at {:.6} MHz, {:+.3} kHz from the expected tone \
                     and outside the ±{:.3} kHz the search decimates to, whose image falls on the tone \
                     read (about {:.1} dBFS through the search's filter); switch that carrier off, or give a wider tolerance (a wider \
                     window keeps it in band, where it is seen as it is)",
                    to_rf(fine.offset_hz) / 1e6,
                    seen.carriers[pick].level_dbfs,
                    f.level_dbfs,
                    (cfg.center_hz + self.nco_hz + f.offset_hz) / 1e6,
                    f.offset_hz / 1e3,
                    grid.fd / 2e3,
                    f.image_dbfs
                )
            },
        );
        let checked = checks.pass().map_err(Error::Clkin)?;
        if can.is_empty() {
            return Err(Error::Clkin(format!("no tone within {window}")));
        }
        self.tones[pick].reference = true;
        let baseband = self.nco_hz + fine.offset_hz;
        let rf = cfg.center_hz + baseband;
        let eps = cfg.tone_hz / rf - 1.0;
        let deps = cfg.tone_hz / (rf * rf) * fine.sigma_hz;
        // A move between the halves within the allowance: the uncertainty covers it.
        let deps = drift_ppm.map_or(deps, |d| deps.hypot(d * 1e-6));
        self.tones[pick].frequency_hz = rf;
        self.tones[pick].ppm = eps * 1e6;
        Ok(ClkinEstimate {
            tone_hz: cfg.tone_hz,
            measured_hz: rf,
            baseband_hz: baseband,
            ppm: eps * 1e6,
            ppm_uncertainty: deps * 1e6,
            tone_snr_db: seen.carriers[pick].snr_db,
            samples: (n as u64 + 1) * m as u64,
            checked,
        })
    }
}

/// A carrier of the full-band spectrum outside the decimated band whose image lands
/// on the tone read ([`folded_onto`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Folded {
    /// Its offset from the expected tone (Hz).
    offset_hz: f64,
    /// Its level in the spectrum (dBFS per bin: a tone's power).
    level_dbfs: f64,
    /// Its image's level after the decimating filter (dBFS).
    image_dbfs: f64,
}

/// The images within this many dB under the tone read count: a weaker one moves it
/// less than a tenth of its amplitude.
const FOLD_MARGIN_DB: f64 = 20.0;

/// The strongest bin of `band` outside the decimated band (offsets from the expected
/// tone `nco_hz` beyond ±fd/2) whose image — at its offset less the nearest multiple of
/// fd, through the first stage's sinc² response — lies within one of the spectrum's
/// bins of `read_hz` (an offset from the expected tone) and within [`FOLD_MARGIN_DB`]
/// of `read_dbfs`. Only bins over the spectrum's peak threshold count (every bin with
/// power when it has no floor): noise folds in too, and the search measures it.
fn folded_onto(
    band: &Spectrum,
    g: &search::Grid,
    nco_hz: f64,
    read_hz: f64,
    read_dbfs: f64,
) -> Option<Folded> {
    let n = band.psd_db.len();
    let gate = match (band.noise_floor_db, band.peak_threshold_db) {
        (Some(f), Some(t)) => f + t,
        _ => f64::NEG_INFINITY,
    };
    let mm = g.m as f64;
    let mut worst: Option<Folded> = None;
    for (i, &p) in band.psd_db.iter().enumerate() {
        let level = f64::from(p);
        if !level.is_finite() || level < gate {
            continue;
        }
        let offset_hz = (i as f64 - (n / 2) as f64) * band.bin_hz - nco_hz;
        if offset_hz.abs() <= g.fd / 2.0 {
            continue;
        }
        let image_hz = offset_hz - (offset_hz / g.fd).round() * g.fd;
        if (image_hz - read_hz).abs() > band.bin_hz {
            continue;
        }
        // The first stage: a triangle of 2M taps at the input rate fs = M·fd.
        let x = std::f64::consts::PI * offset_hz / (mm * g.fd);
        let amp = if x.sin().abs() < f64::MIN_POSITIVE {
            1.0
        } else {
            ((mm * x).sin() / (mm * x.sin())).powi(2)
        };
        let image_dbfs = level + 20.0 * amp.max(1e-30).log10();
        if image_dbfs >= read_dbfs - FOLD_MARGIN_DB
            && worst.is_none_or(|w| image_dbfs > w.image_dbfs)
        {
            worst = Some(Folded {
                offset_hz,
                level_dbfs: level,
                image_dbfs,
            });
        }
    }
    worst
}

/// A steady tone's amplitude in each eighth of the capture may differ from their mean
/// by this fraction (0.4 dB) plus the noise's 5σ.
const AMPLITUDE_STEADY: f64 = 0.05;

/// The tone near `offset_hz` (decimated rate `fd`) in eighths of `x`, each eighth at
/// its own strongest frequency within ±`reach_hz` (at least one of its bins): the
/// largest relative departure of an eighth's amplitude from their mean, and the
/// departure allowed (`AMPLITUDE_STEADY` + 5σ of white noise of variance `sigma2` per
/// sample). `None` when the eighths are too short or the tone has no amplitude.
fn amplitude_spread(
    x: &[Complex<f32>],
    offset_hz: f64,
    reach_hz: f64,
    fd: f64,
    sigma2: f64,
) -> Option<(f64, f64)> {
    const PARTS: usize = 8;
    let len = x.len() / PARTS;
    if len < 16 {
        return None;
    }
    // A grid of an eighth of an eighth's bin: at most 0.7 % of amplitude lost between
    // its points; at most 400 points each side.
    let step = fd / len as f64 / 8.0;
    let half = (reach_hz.max(fd / len as f64) / step).ceil().min(400.0) as i64;
    let amps: Vec<f64> = (0..PARTS)
        .map(|k| {
            let seg = &x[k * len..(k + 1) * len];
            (-half..=half)
                .map(|j| {
                    let w = -2.0 * std::f64::consts::PI * (offset_hz + j as f64 * step) / fd;
                    let turn = Complex::new(w.cos(), w.sin());
                    let mut ph = Complex::new(1.0f64, 0.0);
                    let mut acc = Complex::new(0.0f64, 0.0);
                    for (i, v) in seg.iter().enumerate() {
                        acc += Complex::new(f64::from(v.re), f64::from(v.im)) * ph;
                        ph *= turn;
                        if i % 1024 == 1023 {
                            ph /= ph.norm();
                        }
                    }
                    acc.norm() / len as f64
                })
                .fold(0.0, f64::max)
        })
        .collect();
    let mean = amps.iter().sum::<f64>() / PARTS as f64;
    if !(mean > 0.0 && mean.is_finite()) {
        return None;
    }
    let worst = amps
        .iter()
        .map(|a| (a / mean - 1.0).abs())
        .fold(0.0, f64::max);
    let noise = (sigma2.max(0.0) / (2.0 * len as f64)).sqrt() / mean;
    Some((worst, AMPLITUDE_STEADY + 5.0 * noise))
}

/// ppm per Hz of baseband offset near the reference (magnitude).
fn to_ppm_per_hz(cfg: &ClkinConfig, nco_hz: f64) -> f64 {
    (cfg.tone_hz / (cfg.center_hz + nco_hz).powi(2) * 1e6).abs()
}

/// `a` at F MHz, L dBFS (P ppm), …
fn list(tones: &[ClkinTone], k: usize) -> String {
    tones
        .iter()
        .take(k)
        .map(|t| {
            format!(
                "{:.6} MHz at {:.1} dBFS ({} ppm)",
                t.frequency_hz / 1e6,
                t.level_dbfs,
                fmt_ppm(t.ppm, 3)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Σ x·a and Σ x·b over equal-length slices, in four lanes (the hot loop of the
/// CLKIN estimator and of the comparison's tone tracker).
pub(crate) fn mac2(
    x: &[Complex<f32>],
    a: &[Complex<f32>],
    b: &[Complex<f32>],
) -> (Complex<f32>, Complex<f32>) {
    let (mut ar, mut ai, mut br, mut bi) = ([0f32; 4], [0f32; 4], [0f32; 4], [0f32; 4]);
    let xc = x.chunks_exact(4);
    let ac = a.chunks_exact(4);
    let bc = b.chunks_exact(4);
    let (xr, ar_, br_) = (xc.remainder(), ac.remainder(), bc.remainder());
    for ((x, a), b) in xc.zip(ac).zip(bc) {
        for j in 0..4 {
            ar[j] += x[j].re * a[j].re - x[j].im * a[j].im;
            ai[j] += x[j].re * a[j].im + x[j].im * a[j].re;
            br[j] += x[j].re * b[j].re - x[j].im * b[j].im;
            bi[j] += x[j].re * b[j].im + x[j].im * b[j].re;
        }
    }
    let mut sa = Complex::new(ar.iter().sum::<f32>(), ai.iter().sum::<f32>());
    let mut sb = Complex::new(br.iter().sum::<f32>(), bi.iter().sum::<f32>());
    for ((x, a), b) in xr.iter().zip(ar_).zip(br_) {
        sa += x * a;
        sb += x * b;
    }
    (sa, sb)
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvidenceItem {
    /// What was looked at.
    pub name: String,
    /// What it said.
    pub value: String,
    /// `false` when it contradicts a PASS.
    pub consistent: bool,
}

/// PASS or FAIL of the CLKIN check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum ClkinStatus {
    /// Within tolerance and nothing contradicts.
    Pass,
    /// Anything else.
    Fail,
    /// No estimate was made (the stream lost samples between analysed ones): no
    /// number and no verdict.
    #[serde(rename = "NOT_MEASURED")]
    NotMeasured,
}

/// The CLKIN check's verdict with every piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Every carrier seen in the search window, strongest first, the reference
    /// marked (none marked when no number could be given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tones: Vec<ClkinTone>,
}

impl ClkinReport {
    /// No estimate was made, for the reason in `detail`: no number, no verdict, no
    /// evidence weighed.
    pub fn not_measured(tone_hz: f64, tolerance_ppm: f64, detail: String) -> Self {
        Self {
            tone_hz,
            measured_hz: None,
            ppm: None,
            ppm_uncertainty: None,
            tolerance_ppm,
            status: ClkinStatus::NotMeasured,
            detail,
            evidence: Vec::new(),
            tones: Vec::new(),
        }
    }
}

/// Whether a clock source name (as a driver reads it back) is an external reference:
/// `external`, `ext`, `clkin`, `gpsdo`, `mimo`.
pub fn is_external_clock(s: &str) -> bool {
    is_external(s)
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

/// Decimals that show an uncertainty of `uncertainty_ppm` with two significant
/// digits (0 to 12; [`crate::uncertainty_decimals`]), for the value and its
/// uncertainty alike; 4 when there is no uncertainty.
pub fn ppm_decimals(uncertainty_ppm: f64) -> usize {
    if uncertainty_ppm.is_finite() && uncertainty_ppm > 0.0 {
        super::honest::uncertainty_decimals(uncertainty_ppm)
    } else {
        4
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
/// the uncertainty is below the tolerance, and no evidence contradicts. `tones` are the
/// carriers the estimator saw ([`ClkinEstimator::tones`]); each one beside the
/// reference is listed as evidence.
pub fn judge_clkin(
    tone_hz: f64,
    tolerance_ppm: f64,
    estimate: std::result::Result<&ClkinEstimate, &Error>,
    evidence: &ClockEvidence,
    tones: &[ClkinTone],
) -> ClkinReport {
    let mut items = driver_evidence(evidence);
    if estimate.is_ok() {
        let top = tones.iter().find(|t| t.reference).map(|t| t.level_dbfs);
        for t in tones.iter().filter(|t| !t.reference) {
            items.push(EvidenceItem {
                name: "other carrier in the search window".into(),
                value: format!(
                    "{:.6} MHz at {:.1} dBFS ({:.1} dB below the reference; {} ppm if it were the reference)",
                    t.frequency_hz / 1e6,
                    t.level_dbfs,
                    top.map_or(f64::NAN, |l| l - t.level_dbfs),
                    fmt_ppm(t.ppm, 3)
                ),
                consistent: true,
            });
        }
    }
    let (measured_hz, ppm, unc, mut detail, mut pass) = match estimate {
        Ok(e) => {
            let dp = ppm_decimals(e.ppm_uncertainty);
            items.push(EvidenceItem {
                name: "measured reference error".into(),
                value: format!(
                    "{} (1σ; SNR {:.1} dB after integration)",
                    fmt_uncertain(e.ppm, e.ppm_uncertainty, "ppm"),
                    e.tone_snr_db
                ),
                consistent: e.ppm.abs() <= tolerance_ppm,
            });
            let ok = e.ppm.abs() <= tolerance_ppm && e.ppm_uncertainty < tolerance_ppm;
            let d = if ok {
                format!("{} ppm within ±{tolerance_ppm} ppm", fmt_ppm(e.ppm, dp))
            } else if e.ppm.abs() > tolerance_ppm {
                format!("{} ppm outside ±{tolerance_ppm} ppm", fmt_ppm(e.ppm, dp))
            } else {
                format!(
                    "uncertainty {} ppm too large for ±{tolerance_ppm} ppm",
                    fmt_sigma(e.ppm_uncertainty)
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
        tones: tones.to_vec(),
    }
}

#[cfg(test)]
pub(crate) mod tests;
