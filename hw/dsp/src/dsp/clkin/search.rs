//! The analysis of the decimated stream: the carriers in the search window, the noise
//! after integration, and the refined frequency of the reference with its standard
//! uncertainty.
use num_complex::Complex;
use rustfft::FftPlanner;
use std::f64::consts::{LN_2, PI};

/// The decimated stream's geometry.
pub(super) struct Grid {
    /// Decimated rate (Hz).
    pub(super) fd: f64,
    /// Decimation factor (the kernel is 2·m taps).
    pub(super) m: usize,
    /// Half-width of the search window (Hz) around the mixer's frequency.
    pub(super) span_hz: f64,
}

impl Grid {
    /// The kernel's amplitude response at `f` Hz from the mixer (1 at 0).
    fn gain(&self, f: f64) -> f64 {
        let m = self.m as f64;
        let x = PI * f / self.fd;
        let d = m * (x / m).sin();
        if d.abs() < 1e-300 {
            1.0
        } else {
            (x.sin() / d).powi(2)
        }
    }
}

/// A carrier found in the window.
#[derive(Debug, Clone)]
pub(super) struct Carrier {
    /// Offset from the mixer's frequency (Hz).
    pub(super) offset_hz: f64,
    /// Level (dBFS).
    pub(super) level_dbfs: f64,
    /// SNR after integration (dB over the mean noise bin around it).
    pub(super) snr_db: f64,
    /// The noise around it on the input scale: σ² of one decimated sample, were the
    /// noise white at that level.
    pub(super) sigma2: f64,
}

/// What the search spectrum shows.
pub(super) struct Seen {
    /// Carriers above the detection threshold, strongest first.
    pub(super) carriers: Vec<Carrier>,
    /// The strongest bin in the window over the mean noise bin (dB).
    pub(super) best_snr_db: f64,
    /// The detection threshold (dB over the mean noise bin).
    pub(super) threshold_db: f64,
    /// The strongest bin outside the window but inside the decimated band's flat
    /// middle (±fd/4), when it stands above the threshold: (offset Hz, dB over the
    /// mean noise bin). A reference at another frequency, or a clock further off.
    pub(super) outside: Option<(f64, f64)>,
}

/// The refined reference.
pub(super) struct Fine {
    /// Offset from the mixer's frequency (Hz).
    pub(super) offset_hz: f64,
    /// Standard uncertainty (Hz).
    pub(super) sigma_hz: f64,
}

/// Window coefficients (symmetric, over `n` points, sample i at (i + ½)/n).
fn window(coef: &[f64], n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = 2.0 * PI * (i as f64 + 0.5) / n as f64;
            coef.iter()
                .enumerate()
                .map(|(k, c)| if k % 2 == 0 { 1.0 } else { -1.0 } * c * (k as f64 * x).cos())
                .sum()
        })
        .collect()
}

/// The spectrum of `dec` windowed by the cosine window `coef` and zero-padded to
/// the power of two at or above twice its length, and the window itself.
fn padded_spectrum(dec: &[Complex<f32>], coef: &[f64]) -> (Vec<Complex<f32>>, Vec<f64>) {
    let n = dec.len();
    let nfft = (2 * n).next_power_of_two();
    let w = window(coef, n);
    let mut buf: Vec<Complex<f32>> = vec![Complex::default(); nfft];
    for ((b, x), w) in buf.iter_mut().zip(dec).zip(&w) {
        *b = x * (*w as f32);
    }
    FftPlanner::<f32>::new()
        .plan_fft_forward(nfft)
        .process(&mut buf);
    (buf, w)
}

const BLACKMAN_HARRIS: [f64; 4] = [0.35875, 0.48829, 0.14128, 0.01168];
const HANN: [f64; 2] = [0.5, 0.5];
/// The Blackman-Harris main lobe's half-width (bins of 1/T): closer peaks are one.
const MAIN_LOBE_BINS: f64 = 4.5;
/// The CFAR annulus of the local noise: from this many bins (of 1/T) from a peak …
const LOCAL_INNER_BINS: f64 = 6.0;
/// … to this many.
const LOCAL_OUTER_BINS: f64 = 120.0;
/// σ is scaled by this: the noise level is a median of ~230 bins beside the tone
/// (≈ 10 % standard error in power, 5 % in σ), and the noise at the tone itself may
/// differ from its neighbours' when it is not white.
const NOISE_MARGIN: f64 = 1.15;
/// At most this many carriers are listed.
const MAX_CARRIERS: usize = 8;
/// False-alarm budget of the detection threshold over the window.
const FALSE_ALARM: f64 = 1e-6;
/// The threshold is never below this (dB): the refinement is linear above it, and a
/// receiver's noise is never perfectly white (the simulated radio, which replays one
/// noise table from random places, shows narrow lines up to ~17 dB over the mean
/// after 1 s).
const MIN_THRESHOLD_DB: f64 = 18.0;

/// The carriers in the window, the noise and the threshold, from one zero-padded
/// Blackman-Harris FFT of the whole decimated stream. A peak beside a stronger carrier
/// is a carrier of its own only above that carrier's sidelobes ([`leakage`]): a clean
/// reference 110 dB or more over the noise lifts them over the noise threshold.
pub(super) fn carriers(dec: &[Complex<f32>], g: &Grid) -> Seen {
    let n = dec.len();
    let (buf, w) = padded_spectrum(dec, &BLACKMAN_HARRIS);
    let nfft = buf.len();
    let sw: f64 = w.iter().sum();
    let sw2: f64 = w.iter().map(|v| v * v).sum();
    let df = g.fd / nfft as f64;
    let freq = |k: usize| {
        let k = k as f64;
        if k < nfft as f64 / 2.0 {
            k * df
        } else {
            (k - nfft as f64) * df
        }
    };
    // |amplitude|² on the input scale: a tone of amplitude A on a bin gives A².
    let pow: Vec<f64> = buf
        .iter()
        .enumerate()
        .map(|(k, c)| f64::from(c.norm_sqr()) / (sw * sw * g.gain(freq(k)).powi(2)))
        .collect();
    drop(buf);
    // The noise: the median bin within ±fd/4 (tones are few bins), as a mean.
    let mut near: Vec<f64> = (0..nfft)
        .filter(|&k| freq(k).abs() <= g.fd / 4.0)
        .map(|k| pow[k])
        .collect();
    let mid = near.len() / 2;
    let noise = near
        .select_nth_unstable_by(mid, f64::total_cmp)
        .1
        .max(f64::MIN_POSITIVE)
        / LN_2;
    let t = n as f64 / g.fd;
    let independent = (2.0 * g.span_hz * t).max(1.0);
    let gamma = ((independent / FALSE_ALARM).ln()).max(10f64.powf(MIN_THRESHOLD_DB / 10.0));
    // Bins of the window, in frequency order.
    let reach = (g.span_hz / df).ceil() as i64;
    let idx = |k: i64| k.rem_euclid(nfft as i64) as usize;
    let mut best = 0f64;
    let bins_per_bin = nfft as f64 / n as f64;
    let mut peaks: Vec<(f64, f64, f64)> = Vec::new();
    for k in -reach..=reach {
        let p = pow[idx(k)];
        best = best.max(p);
        let (l, r) = (pow[idx(k - 1)], pow[idx(k + 1)]);
        if !(p / noise >= gamma && p > l && p >= r) {
            continue;
        }
        // The noise around it (a CFAR annulus beside the main lobe): a receiver's
        // noise is not flat on the scale of a few hertz.
        let inner = (LOCAL_INNER_BINS * bins_per_bin).ceil() as i64;
        let outer = (LOCAL_OUTER_BINS * bins_per_bin).ceil() as i64;
        let mut ring: Vec<f64> = (inner..=outer)
            .flat_map(|d| [pow[idx(k - d)], pow[idx(k + d)]])
            .collect();
        let mid = ring.len() / 2;
        let local = ring
            .select_nth_unstable_by(mid, f64::total_cmp)
            .1
            .max(f64::MIN_POSITIVE)
            / LN_2;
        let floor = local.max(noise);
        if p / floor < gamma {
            continue;
        }
        // Parabolic interpolation on the log power.
        let (a, b, c) = (l.max(1e-300).ln(), p.ln(), r.max(1e-300).ln());
        let den = a - 2.0 * b + c;
        let d = if den < 0.0 {
            (0.5 * (a - c) / den).clamp(-0.5, 0.5)
        } else {
            0.0
        };
        let off = (k as f64 + d) * df;
        if off.abs() <= g.span_hz {
            let peak = (b - 0.25 * (a - c) * d).exp();
            peaks.push((off, peak, floor));
        }
    }
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut kept: Vec<(f64, f64, f64)> = Vec::new();
    for p in peaks {
        if kept.len() >= MAX_CARRIERS
            || kept.iter().any(|q| (q.0 - p.0).abs() * t <= MAIN_LOBE_BINS)
        {
            continue;
        }
        // The window's own leakage of the stronger carriers at this peak, worst case
        // over their position within ±½ bin: a peak is a carrier only when its
        // amplitude exceeds that leakage's plus the noise threshold's (a sidelobe with
        // noise on top reaches it with the noise threshold's false-alarm odds).
        let leak: f64 = kept
            .iter()
            .map(|q| {
                let ratio = g.gain(q.0) / g.gain(p.0);
                (q.1 * leakage(&BLACKMAN_HARRIS, n, (q.0 - p.0).abs() * t)).sqrt() * ratio
            })
            .sum();
        if p.1.sqrt() > leak + (gamma * p.2).sqrt() {
            kept.push(p);
        }
    }
    let carriers = kept
        .into_iter()
        .map(|(off, p, floor)| Carrier {
            offset_hz: off,
            level_dbfs: 10.0 * (p - floor).max(1e-30).log10(),
            snr_db: 10.0 * (p / floor).log10(),
            // A noise bin's mean is σ²·Σw²/(Σw)² on this scale.
            sigma2: floor * sw * sw / sw2,
        })
        .collect();
    let outside = (0..nfft)
        .filter(|&k| freq(k).abs() > g.span_hz && freq(k).abs() <= g.fd / 4.0)
        .max_by(|&a, &b| pow[a].total_cmp(&pow[b]))
        .filter(|&k| pow[k] / noise >= gamma)
        .map(|k| (freq(k), 10.0 * (pow[k] / noise).log10()));
    Seen {
        carriers,
        best_snr_db: 10.0 * (best / noise).log10(),
        threshold_db: 10.0 * gamma.log10(),
        outside,
    }
}

/// The power response of the `n`-point window of [`window`] with coefficients `coef`
/// to a carrier `d` bins (of 1/T) away, relative to its peak, at its highest over
/// d ± ½ bin (the carrier's position is known to a fraction of a bin): the envelope of
/// the window's sidelobes, exact for this `n`. For a sum of cosines the response is a
/// sum of Dirichlet kernels, A(ν) = c₀·D(ν) + Σₖ cₖ/2·(D(ν−k) + D(ν+k)) with
/// D(x) = sin(πx)/sin(πx/n) and A(0) = c₀·n.
fn leakage(coef: &[f64], n: usize, d: f64) -> f64 {
    let nf = n as f64;
    let dirichlet = |x: f64| {
        let s = (PI * x / nf).sin();
        if s.abs() < 1e-12 {
            nf
        } else {
            (PI * x).sin() / s
        }
    };
    let amp = |v: f64| {
        coef.iter()
            .enumerate()
            .map(|(k, c)| {
                if k == 0 {
                    c * dirichlet(v)
                } else {
                    0.5 * c * (dirichlet(v - k as f64) + dirichlet(v + k as f64))
                }
            })
            .sum::<f64>()
    };
    let peak = coef[0] * nf;
    const STEPS: usize = 32;
    (0..=STEPS)
        .map(|i| {
            let v = d - 0.5 + i as f64 / STEPS as f64;
            (amp(v) / peak).powi(2)
        })
        .fold(0.0, f64::max)
}

/// Where `dec` (a part of the capture) has its strongest Hann-windowed bin within
/// ±`reach_hz` of `around_hz` (zero-padded to twice its length or more), and whether
/// that is the reach's edge (the tone may lie beyond it).
pub(super) fn strongest_near(
    dec: &[Complex<f32>],
    g: &Grid,
    around_hz: f64,
    reach_hz: f64,
) -> (f64, bool) {
    let (buf, _) = padded_spectrum(dec, &HANN);
    let nfft = buf.len();
    let df = g.fd / nfft as f64;
    let k0 = (around_hz / df).round() as i64;
    let r = (reach_hz / df).ceil().max(1.0) as i64;
    let idx = |k: i64| k.rem_euclid(nfft as i64) as usize;
    let best = (k0 - r..=k0 + r)
        .max_by(|&a, &b| buf[idx(a)].norm_sqr().total_cmp(&buf[idx(b)].norm_sqr()))
        .unwrap_or(k0);
    (best as f64 * df, (best - k0).abs() >= r)
}

/// |Σ w_i y_i e^{-j2πf i/fd}|² on the input scale.
fn power_at(dec: &[Complex<f32>], w: &[f64], g: &Grid, f: f64) -> Complex<f64> {
    let step = Complex::from_polar(1.0, -2.0 * PI * f / g.fd);
    let mut acc = Complex::<f64>::default();
    for (c, (xs, ws)) in dec.chunks(1024).zip(w.chunks(1024)).enumerate() {
        let mut ph = Complex::from_polar(1.0, -2.0 * PI * f / g.fd * (c * 1024) as f64);
        for (x, w) in xs.iter().zip(ws) {
            acc += Complex::new(f64::from(x.re), f64::from(x.im)) * ph * *w;
            ph *= step;
        }
    }
    acc
}

/// The reference's frequency: the maximum of the Hann-windowed spectrum of the whole
/// stream near the search peak; its standard uncertainty from that estimator's
/// linearised variance at the measured SNR, the pull of the other carriers and a floor.
pub(super) fn refine(dec: &[Complex<f32>], g: &Grid, pick: &Carrier, others: &[&Carrier]) -> Fine {
    let n = dec.len();
    let t = n as f64 / g.fd;
    let w = window(&HANN, n);
    let obj = |f: f64| power_at(dec, &w, g, f).norm_sqr();
    // A grid over ±1 bin, then golden section around its best point.
    let bin = 1.0 / t;
    let steps = 16;
    let h = 2.0 * bin / steps as f64;
    let (mut bf, mut bp) = (pick.offset_hz, f64::MIN);
    for i in 0..=steps {
        let f = pick.offset_hz - bin + i as f64 * h;
        let p = obj(f);
        if p > bp {
            (bf, bp) = (f, p);
        }
    }
    let (mut a, mut b) = (bf - h, bf + h);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    let (mut pc, mut pd) = (obj(c), obj(d));
    while (b - a) > 1e-7 * bin {
        if pc > pd {
            (b, d, pd) = (d, c, pc);
            c = b - r * (b - a);
            pc = obj(c);
        } else {
            (a, c, pc) = (c, d, pd);
            d = a + r * (b - a);
            pd = obj(d);
        }
    }
    let f = 0.5 * (a + b);
    // Linearised variance of the windowed-periodogram maximum (ω in rad/sample):
    // var ω̂ = σ²·Σ n²w² / (2·A²·(Σ n²w)²), n from the window's centre.
    let centre = (n as f64 - 1.0) / 2.0;
    let (mut sw, mut sw2, mut s1, mut s2) = (0.0, 0.0, 0.0, 0.0);
    for (i, w) in w.iter().enumerate() {
        let u = (i as f64 - centre).powi(2);
        sw += w;
        sw2 += w * w;
        s1 += u * w * w;
        s2 += u * w;
    }
    let gain = g.gain(f).powi(2);
    let a2 = (obj(f) / (sw * sw * gain) - pick.sigma2 * sw2 / (sw * sw))
        .max(pick.sigma2 * sw2 / (sw * sw) * 1e-3);
    let var_w = pick.sigma2 * s1 / (2.0 * a2 * s2 * s2);
    let sigma_noise = var_w.sqrt() * g.fd / (2.0 * PI);
    // The pull of another carrier at d bins and relative amplitude ρ through the Hann
    // sidelobes: below ρ/d³ bins (a conservative bound).
    let pull: f64 = others
        .iter()
        .map(|o| {
            let d = ((o.offset_hz - f).abs() * t).max(MAIN_LOBE_BINS);
            let rho = 10f64.powf((o.level_dbfs - 10.0 * a2.log10()) / 20.0);
            rho / d.powi(3) * bin
        })
        .sum();
    let floor = 1e-4 * bin;
    Fine {
        offset_hz: f,
        sigma_hz: (NOISE_MARGIN.powi(2) * (sigma_noise.powi(2) + pull.powi(2)) + floor.powi(2))
            .sqrt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window's sidelobe envelope in closed form is the window's own transform
    /// (summed directly) and has the levels docs/operator.md#clkin states: −92 dB at
    /// 4.5 bins, −93 at 6.5, −104 at 12.5.
    #[test]
    fn the_leakage_envelope_is_the_windows_own_transform() {
        let n = 257;
        let w = window(&BLACKMAN_HARRIS, n);
        let sw: f64 = w.iter().sum();
        let direct = |v: f64| {
            let z: Complex<f64> = w
                .iter()
                .enumerate()
                .map(|(i, x)| Complex::from_polar(*x, -2.0 * PI * v * i as f64 / n as f64))
                .sum();
            (z.norm() / sw).powi(2)
        };
        for d in [4.7, 6.5, 9.25, 12.5, 40.0] {
            let env = (0..=320)
                .map(|i| direct(d - 0.5 + i as f64 / 320.0))
                .fold(0.0, f64::max);
            let got = leakage(&BLACKMAN_HARRIS, n, d);
            assert!(
                (10.0 * (got / env).log10()).abs() < 0.05,
                "{d}: {got:e} vs {env:e}"
            );
        }
        let db = |d: f64| 10.0 * leakage(&BLACKMAN_HARRIS, 100_000, d).log10();
        assert!((db(5.0) + 92.0).abs() < 0.2, "{}", db(5.0));
        assert!((db(6.5) + 93.0).abs() < 0.2, "{}", db(6.5));
        assert!((db(12.5) + 104.1).abs() < 0.2, "{}", db(12.5));
    }
}
