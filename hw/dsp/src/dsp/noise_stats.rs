//! The statistics of a Welch spectrum of noise: how many independent averages its
//! bins hold, where the noise floor lies (the mean noise power per bin, from the
//! median bin) and how far above it noise alone reaches by chance
//! (docs/operator.md#peaks-and-the-noise-floor).
//!
//! A bin of the periodogram of complex Gaussian noise is exponentially distributed;
//! the mean of `K` independent ones is Gamma(K, mean/K). Welch's overlapping
//! segments are not independent: the bin is then close to Gamma(ν/2, 2·mean/ν), with
//! ν the equivalent degrees of freedom of Welch (1967), in the form of Percival &
//! Walden, *Spectral Analysis for Physical Applications* (1993), eq. (292b):
//!
//! ```text
//! ν = 2K / (1 + 2 Σ_{m=1}^{K−1} (1 − m/K) ρ(m)²),   ρ(m) = Σ_t w_t w_{t+mD} / Σ_t w_t²
//! ```
//!
//! (`w` the window, `D` the hop between segments; Hann at 50 % overlap: ρ(1) = 1/6, so
//! ν → 2K/1.056 for many segments, and ν = 2 for one).

/// The chance that noise alone puts a peak anywhere in one spectrum: a peak must
/// stand so far above the floor that a spectrum of pure noise shows one in at most
/// 1 % of captures.
pub const FALSE_ALARM_PER_SPECTRUM: f64 = 0.01;

/// Shapes above this are taken as this: the floor's correction is then below
/// 0.0001 dB and the noise's threshold below 0.1 dB, and the incomplete gamma
/// function's series stays short. A smaller shape is a wider distribution, so the
/// threshold errs on the high side.
const SHAPE_MAX: f64 = 1e5;

/// Squared correlations ρ(m)² of the window with itself shifted by `m` hops,
/// m = 1, 2 … while the segments overlap (empty without overlap). Computed once per
/// estimator.
pub(crate) fn overlap_correlations(window: &[f32], hop: usize) -> Vec<f64> {
    let energy: f64 = window.iter().map(|&w| f64::from(w) * f64::from(w)).sum();
    if hop == 0 || energy <= 0.0 {
        return Vec::new();
    }
    (1..)
        .map(|m| m * hop)
        .take_while(|&s| s < window.len())
        .map(|s| {
            let c: f64 = window
                .iter()
                .zip(&window[s..])
                .map(|(&a, &b)| f64::from(a) * f64::from(b))
                .sum();
            (c / energy).powi(2)
        })
        .collect()
}

/// The shape ν/2 of the Gamma distribution of a bin averaged over `averages` Welch
/// segments whose windows correlate as `rho2` ([`overlap_correlations`]): the
/// equivalent number of independent averages (1 for one segment; `averages` without
/// overlap). 0 for no segment.
pub fn equivalent_averages(averages: u64, rho2: &[f64]) -> f64 {
    if averages == 0 {
        return 0.0;
    }
    let k = averages as f64;
    let sum: f64 = rho2
        .iter()
        .take((averages - 1).min(rho2.len() as u64) as usize)
        .enumerate()
        .map(|(i, r)| (1.0 - (i + 1) as f64 / k) * r)
        .sum();
    k / (1.0 + 2.0 * sum)
}

/// What a noise bin of `shape` independent averages implies for a spectrum of `bins`
/// searched bins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseLevels {
    /// The equivalent number of independent averages (Gamma shape).
    pub shape: f64,
    /// Mean over median of the bin's distribution, dB: added to the median bin it
    /// gives the mean noise power per bin (1.59 dB = −10·log10(ln 2) for one
    /// average, → 0 for many).
    pub floor_correction_db: f64,
    /// How far above the mean noise power a bin of noise alone reaches with
    /// probability [`FALSE_ALARM_PER_SPECTRUM`] anywhere in the spectrum, dB
    /// (`floor_margin_db` included).
    pub noise_threshold_db: f64,
    /// The part of `noise_threshold_db` that makes up for the floor being estimated
    /// from the same bins (the median of `bins` bins scatters; a floor read low lets
    /// more noise through): c·σ²/2, with σ the median's standard error in dB and c
    /// the slope of ln Q at the threshold per dB (to first order, the factor
    /// E[e^(c·δ)] the scatter δ of the floor multiplies the false-alarm chance by).
    pub floor_margin_db: f64,
}

impl NoiseLevels {
    /// The levels of `bins` searched bins, each the mean of `shape` independent
    /// averages (`None` for a shape or a bin count of zero, or not finite).
    pub fn new(shape: f64, bins: usize) -> Option<Self> {
        if !(shape.is_finite() && shape > 0.0) || bins == 0 {
            return None;
        }
        let a = shape.min(SHAPE_MAX);
        let median = gamma_upper_quantile(a, 0.5)?;
        // Each bin may exceed t with probability q, so that none does with 1 − p_fa.
        let q = per_bin_probability(bins);
        let t = gamma_upper_quantile(a, q)?;
        let db_per_ln = 10.0 / std::f64::consts::LN_10;
        // The sample median's standard error: √(1/4M) / (f(m)·m), in dB.
        let sigma_db = db_per_ln * (0.25 / bins as f64).sqrt() / (gamma_pdf(a, median) * median);
        // d ln Q / d dB at t: f(t)·t / Q(t) per neper of level.
        let slope = gamma_pdf(a, t) * t / gamma_q(a, t) / db_per_ln;
        let floor_margin_db = slope * sigma_db * sigma_db / 2.0;
        Some(Self {
            shape,
            floor_correction_db: 10.0 * (a / median).log10(),
            noise_threshold_db: 10.0 * (t / a).log10() + floor_margin_db,
            floor_margin_db,
        })
    }
}

impl NoiseLevels {
    /// How far above the floor a peak must stand: the larger of `min_snr_db` and
    /// [`NoiseLevels::noise_threshold_db`].
    pub fn threshold_db(&self, min_snr_db: f64) -> f64 {
        min_snr_db.max(self.noise_threshold_db)
    }
}

/// The strongest bin less than `exclude` bins from `dc_bin` (the span the peak
/// search skips) when it reaches `level` (dB): a carrier at the tuned frequency or
/// the radio's DC offset, told rather than hidden.
pub(crate) fn centre_carrier(
    db: &[f32],
    dc_bin: usize,
    exclude: usize,
    level: f64,
    threshold: f64,
    emissions: &super::peaks::Emissions,
    window: crate::Window,
) -> Option<f64> {
    let lo = dc_bin.saturating_sub(exclude.saturating_sub(1));
    let hi = dc_bin.saturating_add(exclude).min(db.len());
    let (at, v) = db
        .get(lo..hi)?
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, v)| (lo + k, f64::from(*v)))?;
    // Inside a wider emission (a signal across the centre) the centre must stand out
    // of it as a second peak must, or it is that signal, not a carrier or DC offset.
    (v >= level && emissions.stands_out(db, at, threshold, window, exclude)).then_some(v)
}

/// The standard error, dB, of the median of `bins` noise bins each the mean of
/// `shape` independent averages: √(1/4M) / (f(m)·m) nepers, as
/// [`NoiseLevels::floor_margin_db`] uses it. Infinite for no bin or no shape.
pub(crate) fn median_sigma_db(shape: f64, bins: usize) -> f64 {
    if !(shape.is_finite() && shape > 0.0) || bins == 0 {
        return f64::INFINITY;
    }
    let a = shape.min(SHAPE_MAX);
    let Some(m) = gamma_upper_quantile(a, 0.5) else {
        return f64::INFINITY;
    };
    10.0 / std::f64::consts::LN_10 * (0.25 / bins as f64).sqrt() / (gamma_pdf(a, m) * m)
}

/// How far apart, dB, the upper and lower quartiles of a noise bin of `shape`
/// independent averages lie (6.8 dB for one average, 0.19 dB for a thousand).
pub(crate) fn quartile_spread_db(shape: f64) -> Option<f64> {
    if !(shape.is_finite() && shape > 0.0) {
        return None;
    }
    let a = shape.min(SHAPE_MAX);
    Some(10.0 * (gamma_upper_quantile(a, 0.25)? / gamma_upper_quantile(a, 0.75)?).log10())
}

/// The chance per bin that keeps the chance for any of `bins` independent bins at
/// [`FALSE_ALARM_PER_SPECTRUM`]: 1 − (1 − p)^(1/bins).
fn per_bin_probability(bins: usize) -> f64 {
    -((-FALSE_ALARM_PER_SPECTRUM).ln_1p() / bins as f64).exp_m1()
}

/// The density of Gamma(a, 1) at x > 0.
fn gamma_pdf(a: f64, x: f64) -> f64 {
    ((a - 1.0) * x.ln() - x - ln_gamma(a)).exp()
}

/// ln Γ(a), a > 0 (Lanczos, g = 7, n = 9: relative error below 1e-15).
fn ln_gamma(a: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if a < 0.5 {
        // Reflection: Γ(a)Γ(1−a) = π / sin(πa).
        let pi = std::f64::consts::PI;
        return (pi / (pi * a).sin()).ln() - ln_gamma(1.0 - a);
    }
    let x = a - 1.0;
    let mut s = C[0];
    for (i, &c) in C.iter().enumerate().skip(1) {
        s += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The regularized upper incomplete gamma function Q(a, x) = Γ(a, x)/Γ(a), a > 0,
/// x ≥ 0: the chance that a Gamma(a, 1) variable exceeds x. The series for
/// x < a + 1, Lentz's continued fraction beyond (Numerical Recipes, 3rd ed., §6.2),
/// each to full double precision.
pub(crate) fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let front = (a * x.ln() - x - ln_gamma(a)).exp();
    if x < a + 1.0 {
        // P(a, x) = e^−x x^a / Γ(a+1) · Σ x^n / ((a+1)…(a+n)).
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..100_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (1.0 - sum * front).max(0.0)
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..100_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        front * h
    }
}

/// The x with Q(a, x) = q (0 < q < 1): the level a Gamma(a, 1) variable exceeds with
/// probability q. Bisection on ln x to a relative 1e-12.
pub(crate) fn gamma_upper_quantile(a: f64, q: f64) -> Option<f64> {
    if !(a > 0.0 && q > 0.0 && q < 1.0) {
        return None;
    }
    // Q falls from 1 to 0 as x grows: bracket, then halve.
    let (mut lo, mut hi) = (a * 1e-3, a + 1.0);
    while gamma_q(a, lo) < q {
        lo *= 1e-3;
        if lo < 1e-300 {
            return None;
        }
    }
    while gamma_q(a, hi) > q {
        hi *= 2.0;
        if !hi.is_finite() {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if gamma_q(a, mid) > q {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo - 1.0 < 1e-12 {
            break;
        }
    }
    Some((lo * hi).sqrt())
}

#[cfg(test)]
mod tests;
