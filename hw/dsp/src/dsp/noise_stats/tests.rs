//! Unit tests of `noise_stats`.
use super::*;
use crate::dsp::welch::tests::Noise;
use crate::{Welch, WelchConfig, Window};
use num_complex::Complex;

/// Q(a, x) for an integer a in closed form: e^−x Σ_{k<a} x^k / k! (summed in logs).
fn q_integer(a: u32, x: f64) -> f64 {
    (0..a)
        .map(|k| (f64::from(k) * x.ln() - x - ln_gamma(f64::from(k) + 1.0)).exp())
        .sum()
}

#[test]
fn incomplete_gamma_matches_closed_forms() {
    for a in [1u32, 2, 10, 1000] {
        for x in [0.01, 0.5, 1.0, 3.0, 9.5, 30.0, 900.0, 1000.0, 1100.0] {
            let (got, want) = (gamma_q(f64::from(a), x), q_integer(a, x));
            assert!(
                (got - want).abs() <= 1e-12 + 1e-9 * want,
                "a {a} x {x}: {got} vs {want}"
            );
        }
    }
    assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-14);
    assert!((ln_gamma(171.0) - 706.573_062_245_787_4).abs() < 1e-9);
}

/// Exponential (one average): the median is ln 2, the correction 1.59 dB, and the
/// threshold for 1024 bins is ln(1/q) exactly.
#[test]
fn thresholds_at_one_two_ten_and_a_thousand_averages() {
    let l = NoiseLevels::new(1.0, 1024).unwrap();
    assert!((l.floor_correction_db + 10.0 * std::f64::consts::LN_2.log10()).abs() < 1e-9);
    let q = 1.0 - 0.99f64.powf(1.0 / 1024.0);
    let quantile_db = l.noise_threshold_db - l.floor_margin_db;
    assert!((quantile_db - 10.0 * (-q.ln()).log10()).abs() < 1e-9);
    // 10.6 dB above the mean for one average, 1024 bins, and 0.05 dB for the
    // scatter of the median of 1024 bins: 10.72 dB in all.
    assert!((quantile_db - 10.62).abs() < 0.01, "{l:?}");
    assert!((l.floor_margin_db - 0.051).abs() < 0.001, "{l:?}");
    // Integer shapes: Q(a, a·t) = q in closed form.
    let mut last = f64::INFINITY;
    for (a, thr, corr) in [(2u32, 8.56, 0.761), (10, 4.71, 0.146), (1000, 0.57, 0.0014)] {
        let l = NoiseLevels::new(f64::from(a), 1024).unwrap();
        let t = f64::from(a) * 10f64.powf((l.noise_threshold_db - l.floor_margin_db) / 10.0);
        assert!((q_integer(a, t) / q - 1.0).abs() < 1e-6, "a {a}");
        let m = f64::from(a) / 10f64.powf(l.floor_correction_db / 10.0);
        assert!((q_integer(a, m) - 0.5).abs() < 1e-9, "a {a}");
        assert!((l.noise_threshold_db - thr).abs() < 0.01, "a {a}: {l:?}");
        assert!((l.floor_correction_db - corr).abs() < 0.001, "a {a}: {l:?}");
        assert!(l.noise_threshold_db < last);
        last = l.noise_threshold_db;
    }
    // Many averages: the floor moves by less than 0.05 dB from 100 averages on.
    let rho2 = overlap_correlations(&Window::Hann.build(1024), 512);
    let shape = equivalent_averages(100, &rho2);
    assert!(
        NoiseLevels::new(shape, 1 << 20)
            .unwrap()
            .floor_correction_db
            < 0.05
    );
    assert!(NoiseLevels::new(0.0, 1024).is_none());
    assert!(NoiseLevels::new(1.0, 0).is_none());
}

/// Welch 1967 / Percival & Walden (292b): Hann at 50 % overlap has ρ(1) = 1/6; one
/// segment is one average, overlapping ones count less, none overlapping count one.
#[test]
fn equivalent_averages_of_overlapping_hann() {
    let w = Window::Hann.build(1024);
    let rho2 = overlap_correlations(&w, 512);
    assert_eq!(rho2.len(), 1);
    assert!((rho2[0] - 1.0 / 36.0).abs() < 1e-8, "{rho2:?}");
    assert_eq!(equivalent_averages(0, &rho2), 0.0);
    assert!((equivalent_averages(1, &rho2) - 1.0).abs() < 1e-12);
    assert!((equivalent_averages(2, &rho2) - 2.0 / (1.0 + 1.0 / 36.0)).abs() < 1e-6);
    assert!((equivalent_averages(10, &rho2) - 10.0 / 1.05).abs() < 1e-6);
    assert!((equivalent_averages(1000, &rho2) - 1000.0 / (1.0 + 2.0 * 0.999 / 36.0)).abs() < 1e-4);
    assert!(overlap_correlations(&w, 1024).is_empty());
    assert_eq!(equivalent_averages(7, &[]), 7.0);
}

/// Spectra of pure complex Gaussian noise, `k` Welch averages each (Hann, 50 %).
fn noise_spectra(k: usize, n: usize, runs: u64, min_snr_db: f64) -> Vec<crate::Spectrum> {
    let mut cfg = WelchConfig::new(n, 1e6);
    cfg.min_snr_db = min_snr_db;
    let len = n / 2 * (k + 1);
    (0..runs)
        .map(|seed| {
            let mut g = Noise::new(seed * 7919 + 13);
            let x: Vec<Complex<f32>> = (0..len)
                .map(|_| {
                    let v = g.complex(0.1);
                    Complex::new(v.re as f32, v.im as f32)
                })
                .collect();
            let mut w = Welch::new(cfg.clone()).unwrap();
            w.feed(&x);
            let s = w.finish();
            assert_eq!(s.averages, k as u64);
            s
        })
        .collect()
}

/// Over many spectra of pure noise at 1 and 2 averages, the share with any peak
/// stays within the chosen 1 % (plus three standard deviations of the count), even
/// with no minimum SNR at all; and the floor is the mean noise power (−0.8 dB and
/// −1.6 dB low before the correction).
#[test]
fn noise_alone_makes_a_peak_in_at_most_one_spectrum_in_a_hundred() {
    let n = 256;
    // Per-bin mean: σ² · Σw² / (Σw)² = 0.01 · 1.5 / n for Hann.
    let truth = 10.0 * (0.01 * 1.5 / n as f64).log10();
    for k in [1usize, 2, 10] {
        let runs = 1500u64;
        let spectra = noise_spectra(k, n, runs, 0.0);
        let with_peak = spectra.iter().filter(|s| !s.peaks.is_empty()).count() as f64;
        let limit = runs as f64 * FALSE_ALARM_PER_SPECTRUM;
        let sigma = (limit * (1.0 - FALSE_ALARM_PER_SPECTRUM)).sqrt();
        assert!(
            with_peak <= limit + 3.0 * sigma,
            "{k} averages: {with_peak} of {runs} noise spectra had a peak"
        );
        let mean_floor = spectra
            .iter()
            .map(|s| s.noise_floor_db.unwrap())
            .sum::<f64>()
            / runs as f64;
        assert!(
            (mean_floor - truth).abs() < 0.1,
            "{k} averages: floor {mean_floor:.3} vs {truth:.3}"
        );
        eprintln!(
            "{k} averages: {with_peak} of {runs} with a peak, floor {:+.3} dB",
            mean_floor - truth
        );
    }
}
