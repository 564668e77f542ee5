//! rxsim's LTE scene (`lte_freq=…,lte_pci=…,lte_snr_db=…`) checked sample by sample
//! against the standard's definitions (3GPP TS 36.211 §6.11, §6.12), written out again
//! here: the PSS of each root, the SSS of a known PCI in subframes 0 and 5, the
//! symbol positions and cyclic prefixes, the QPSK grid, the 5 ms period, the level
//! over the noise, and the radio's ppm moving the cell in frequency and in time.
use num_complex::Complex;
use rustfft::FftPlanner;
use rxnode_hw::{RxConfig, RxRadio};
use std::f64::consts::{FRAC_1_SQRT_2, PI};

mod common;
use common::{init, open_configured, read_exact};

fn capture(args: &str, fc: f64, rate: f64, n: usize) -> Vec<Complex<f64>> {
    let mut radio = open_configured(
        args,
        &RxConfig {
            frequency_hz: fc,
            sample_rate_hz: rate,
            ..RxConfig::default()
        },
    );
    let mut s = radio.rx_stream().expect("stream");
    read_exact(&mut s, n)
        .iter()
        .map(|c| Complex::new(f64::from(c.re), f64::from(c.im)))
        .collect()
}

/// d_u(n) = exp(−jπu·n(n+1)/63) (n < 31), exp(−jπu·(n+1)(n+2)/63) (n ≥ 31).
fn zadoff_chu(u: f64, n: usize) -> Complex<f64> {
    let n = n as f64;
    let m = if n < 31.0 {
        n * (n + 1.0)
    } else {
        (n + 1.0) * (n + 2.0)
    };
    Complex::from_polar(1.0, -PI * u * m / 63.0)
}

/// x(i+5) = Σ x(i+t) mod 2 from 0,0,0,0,1, as ±1.
fn mseq(taps: &[usize]) -> Vec<f64> {
    let mut x = vec![0u32, 0, 0, 0, 1];
    for i in 0..26 {
        x.push(taps.iter().map(|t| x[i + t]).sum::<u32>() % 2);
    }
    x.iter().map(|&b| 1.0 - 2.0 * f64::from(b)).collect()
}

/// The SSS d(0..62) of TS 36.211 §6.11.2.1.
fn sss_ref(n1: usize, n2: usize, subframe5: bool) -> Vec<f64> {
    let (s, c, z) = (mseq(&[2, 0]), mseq(&[3, 0]), mseq(&[4, 2, 1, 0]));
    let q1 = n1 / 30;
    let q = (n1 + q1 * (q1 + 1) / 2) / 30;
    let mp = n1 + q * (q + 1) / 2;
    let (m0, m1) = (mp % 31, (mp % 31 + mp / 31 + 1) % 31);
    let mut d = vec![0.0; 62];
    for n in 0..31 {
        let (s0, s1) = (s[(n + m0) % 31], s[(n + m1) % 31]);
        let (c0, c1) = (c[(n + n2) % 31], c[(n + n2 + 3) % 31]);
        let (z0, z1) = (z[(n + m0 % 8) % 31], z[(n + m1 % 8) % 31]);
        d[2 * n] = if subframe5 { s1 * c0 } else { s0 * c0 };
        d[2 * n + 1] = if subframe5 {
            s0 * c1 * z1
        } else {
            s1 * c1 * z0
        };
    }
    d
}

/// FFT bin of sequence element n on the 128-point grid: n − 31 below DC, n − 30 above.
fn bin(n: usize) -> usize {
    (if n < 31 { n as i64 - 31 } else { n as i64 - 30 }).rem_euclid(128) as usize
}

fn fft128(x: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let mut v = x[..128].to_vec();
    FftPlanner::new().plan_fft_forward(128).process(&mut v);
    v
}

/// Where the PSS of root `u` starts (its useful part), searching the first 5 ms.
fn pss_start(x: &[Complex<f64>], u: f64, shift_hz: f64) -> (usize, f64) {
    let t: Vec<Complex<f64>> = (0..128)
        .map(|i| {
            (0..62)
                .map(|n| {
                    let k = if n < 31 {
                        n as f64 - 31.0
                    } else {
                        n as f64 - 30.0
                    };
                    zadoff_chu(u, n)
                        * Complex::from_polar(
                            1.0,
                            2.0 * PI * (k * i as f64 / 128.0 + shift_hz * i as f64 / 1.92e6),
                        )
                })
                .sum::<Complex<f64>>()
        })
        .collect();
    let te: f64 = t.iter().map(|v| v.norm_sqr()).sum();
    let mut best = (0, 0.0);
    for p in 0..9600 {
        let w = &x[p..p + 128];
        let c: Complex<f64> = w.iter().zip(&t).map(|(a, b)| a * b.conj()).sum();
        let e: f64 = w.iter().map(|v| v.norm_sqr()).sum();
        let rho2 = c.norm_sqr() / (e * te).max(1e-300);
        if rho2 > best.1 {
            best = (p, rho2);
        }
    }
    best
}

/// The PSS, SSS, cyclic prefixes, QPSK grid and 5 ms period of PCI 301 (N_ID_1 100,
/// N_ID_2 1) match the standard, read from a radio tuned exactly to the cell at
/// 1.92 MS/s with no clock error.
#[test]
fn lte_scene_is_the_standard_s_pss_sss_and_grid() {
    let x = capture(
        "driver=rxsim,serial=lte-std,pace=0,noise_dbfs=-100,lte_freq=806e6,lte_pci=301,lte_snr_db=80",
        806e6,
        1.92e6,
        3 * 9600 + 2000,
    );
    let (p0, rho2) = pss_start(&x, 29.0, 0.0);
    assert!(rho2 > 0.999, "PSS root 29 correlation {rho2}");
    for u in [25.0, 34.0] {
        assert!(pss_start(&x, u, 0.0).1 < 0.2, "root {u} also correlates");
    }
    assert!(p0 >= 832, "need the half frame before the PSS; p0 = {p0}");
    let mut sss_subframes = Vec::new();
    for half in 0..3 {
        let p = p0 + half * 9600;
        // PSS: every element is d_29(n) times one common factor; nothing at DC or ±32..36.
        let y = fft128(&x[p..]);
        let g = y[bin(0)] / zadoff_chu(29.0, 0);
        for n in 0..62 {
            let r = y[bin(n)] / zadoff_chu(29.0, n);
            assert!((r - g).norm() < 1e-3 * g.norm(), "half {half} PSS n={n}");
        }
        for k in [
            0i64, 32, 33, 34, 35, 36, -32, -33, -34, -35, -36, 37, -37, 50, -60,
        ] {
            assert!(
                y[k.rem_euclid(128) as usize].norm() < 1e-3 * g.norm(),
                "half {half} bin {k}"
            );
        }
        // Cyclic prefix of the PSS symbol (9 samples).
        for i in 1..=9 {
            assert!(
                (x[p - i] - x[p + 128 - i]).norm() < 1e-3 * g.norm() / 11.0,
                "PSS CP"
            );
        }
        // SSS one symbol (137 samples) earlier: real ±1 times the same factor.
        let ys = fft128(&x[p - 137..]);
        let d: Vec<f64> = (0..62).map(|n| (ys[bin(n)] / g).re).collect();
        assert!(
            (0..62).all(|n| (ys[bin(n)] / g - d[n]).norm() < 1e-3),
            "SSS not real"
        );
        let sf = [false, true].into_iter().find(|&sf5| {
            sss_ref(100, 1, sf5)
                .iter()
                .zip(&d)
                .all(|(a, b)| (a - b).abs() < 1e-3)
        });
        sss_subframes.push(sf.expect("SSS is the standard's for PCI 301"));
        // Next slot's symbol 0: cyclic prefix of 10, then random QPSK on ±1..36 only.
        let s1 = p + 128;
        for i in 0..10 {
            assert!(
                (x[s1 + i] - x[s1 + i + 128]).norm() < 1e-3 * g.norm() / 11.0,
                "slot CP"
            );
        }
        let yd = fft128(&x[s1 + 10..]);
        for k in -64i64..64 {
            let v = yd[k.rem_euclid(128) as usize] / g;
            if k != 0 && k.abs() <= 36 {
                assert!(
                    (v.re.abs() - FRAC_1_SQRT_2).abs() < 2e-3
                        && (v.im.abs() - FRAC_1_SQRT_2).abs() < 2e-3,
                    "QPSK at {k}: {v}"
                );
            } else {
                assert!(v.norm() < 1e-3, "{k} not empty: {v}");
            }
        }
    }
    // Subframes 0 and 5 alternate every 5 ms.
    assert_ne!(sss_subframes[0], sss_subframes[1]);
    assert_eq!(sss_subframes[0], sss_subframes[2]);
}

/// The cell's power over the noise in its 1.08 MHz is `lte_snr_db`: at 10 dB and
/// 1.92 MS/s the cell's power is 10 × 1.08/1.92 of the noise's power over the band before
/// the anti-alias filter, which leaves 0.875 of it (its roll-off past ±0.4·fs, outside
/// the cell): the total is the noise's × (1 + 10 × 1.08/1.92 / 0.875).
#[test]
fn lte_scene_level_is_relative_to_the_noise_in_its_band() {
    let n = 1 << 20;
    let p = |args: &str| {
        let x = capture(args, 1842.5e6, 1.92e6, n);
        x.iter().map(|v| v.norm_sqr()).sum::<f64>() / n as f64
    };
    let noise = p("driver=rxsim,serial=lte-lvl0,pace=0,noise_dbfs=-50");
    let total = p("driver=rxsim,serial=lte-lvl1,pace=0,noise_dbfs=-50,lte_freq=1842.5e6,lte_pci=7,lte_snr_db=10");
    let ratio = total / noise - 1.0;
    assert!((ratio - 10.0 * 1.08 / 1.92 / 0.875).abs() < 0.15, "{ratio}");
}

/// A radio at +20 ppm sees the cell 20 ppm early in time (its sample clock runs fast)
/// and at (F − fc(1+e))/(1+e) in frequency: the PSS 200 half frames later arrives
/// 200 × 9600 × (1 + 20e-6) samples later, and the carrier stays at that offset.
#[test]
fn lte_scene_follows_the_radio_ppm_in_time_and_frequency() {
    let (f, e) = (1842.5e6, 20e-6);
    let off = (f - f * (1.0 + e)) / (1.0 + e);
    let x = capture(
        "driver=rxsim,serial=lte-ppm,pace=0,noise_dbfs=-80,ppm=20,lte_freq=1842.5e6,lte_pci=2,lte_snr_db=60",
        f,
        1.92e6,
        201 * 9600 + 2000,
    );
    // (The drift puts the PSS between samples: up to 15 % correlation loss.)
    let (p0, rho2) = pss_start(&x, 34.0, off);
    assert!(rho2 > 0.8, "{rho2}");
    assert!(
        pss_start(&x, 34.0, 0.0).1 < 0.5,
        "the cell is not shifted in frequency"
    );
    let late = &x[200 * 9600 - 100..];
    let (p200, rho2) = pss_start(late, 34.0, off);
    let p200 = p200 as f64 + (200 * 9600 - 100) as f64;
    assert!(rho2 > 0.8, "{rho2}");
    let expected = p0 as f64 + 200.0 * 9600.0 * (1.0 + e);
    assert!(
        (p200 - expected).abs() <= 1.0,
        "PSS at {p200}, expected {expected}"
    );
    // The carrier sits at exactly `off`: mixed down by it, the PSS 200 half frames
    // later has the phase of the first (0.05 rad over 1 s: within 0.01 Hz).
    let mixed: Vec<Complex<f64>> = x
        .iter()
        .enumerate()
        .map(|(i, v)| v * Complex::from_polar(1.0, -2.0 * PI * (off * i as f64 / 1.92e6).fract()))
        .collect();
    let c = |p: usize| -> Complex<f64> {
        let y = fft128(&mixed[p..]);
        (0..62)
            .map(|n| y[bin(n)] * zadoff_chu(34.0, n).conj())
            .sum()
    };
    let residual = (c(expected.round() as usize) * c(p0).conj()).arg();
    assert!(
        residual.abs() < 0.05,
        "carrier phase moved {residual} rad in 1 s"
    );
}

/// `lte_tdd=1` is frame structure type 2 (TS 36.211 §4.2, §6.11), configuration 1
/// with the shortest downlink part of the special subframe: the PSS in the third symbol
/// of subframe 1/6, the standard's SSS for PCI 301 in the last symbol of subframe 0/5
/// (412 samples before the PSS at 1.92 MS/s), QPSK data where the FDD SSS would be, and
/// nothing from the cell after the special subframe's three symbols until subframe 4.
#[test]
fn lte_tdd_scene_has_the_type_2_frame_geometry() {
    let x = capture(
        "driver=rxsim,serial=lte-tdd,pace=0,noise_dbfs=-100,lte_freq=806e6,lte_pci=301,lte_snr_db=80,lte_tdd=1",
        806e6,
        1.92e6,
        3 * 9600 + 2000,
    );
    let (p, rho2) = pss_start(&x, 29.0, 0.0);
    assert!(rho2 > 0.999, "PSS root 29 correlation {rho2}");
    let p = if p < 2204 { p + 9600 } else { p };
    let y = fft128(&x[p..]);
    let g = y[bin(0)] / zadoff_chu(29.0, 0);
    // The SSS three symbols (412 samples) earlier: real ±1 times the PSS's factor.
    let ys = fft128(&x[p - 412..]);
    let d: Vec<f64> = (0..62).map(|n| (ys[bin(n)] / g).re).collect();
    assert!(
        [false, true].into_iter().any(|sf5| sss_ref(100, 1, sf5)
            .iter()
            .zip(&d)
            .all(|(a, b)| (a - b).abs() < 1e-3)),
        "no SSS of PCI 301 three symbols before the PSS"
    );
    // One symbol earlier (where an FDD cell's SSS is): QPSK data.
    let yf = fft128(&x[p - 137..]);
    let v = yf[bin(0)] / g;
    assert!(
        (v.re.abs() - FRAC_1_SQRT_2).abs() < 2e-3 && (v.im.abs() - FRAC_1_SQRT_2).abs() < 2e-3,
        "not QPSK before the PSS: {v}"
    );
    // Silent from the end of the PSS symbol (the special subframe's guard period, then
    // the uplink subframes 2 and 3) to subframe 4; data again after.
    let h = p - 2204; // the half frame's start
    let power =
        |a: usize, b: usize| x[a..b].iter().map(|v| v.norm_sqr()).sum::<f64>() / (b - a) as f64;
    let data = power(h, h + 1920);
    assert!(
        power(h + 2332 + 2, h + 7680 - 2) < 1e-6 * data,
        "uplink not silent"
    );
    assert!(power(h + 7680, h + 9600) > 0.5 * data, "subframe 4 silent");
}

/// `sample_ppm=20` with the LO exact: the cell arrives 20 ppm early in time (the sample
/// clock runs fast) and stays at 0 Hz (the LO's), a radio with two clocks.
#[test]
fn lte_scene_sample_ppm_moves_time_not_frequency() {
    let e = 20e-6;
    let x = capture(
        "driver=rxsim,serial=lte-2clk,pace=0,noise_dbfs=-80,sample_ppm=20,lte_freq=1842.5e6,lte_pci=2,lte_snr_db=60",
        1842.5e6,
        1.92e6,
        201 * 9600 + 2000,
    );
    let (p0, rho2) = pss_start(&x, 34.0, 0.0);
    assert!(rho2 > 0.8, "not at 0 Hz: {rho2}");
    let late = &x[200 * 9600 - 100..];
    let (p200, rho2) = pss_start(late, 34.0, 0.0);
    assert!(rho2 > 0.8, "{rho2}");
    let p200 = p200 as f64 + (200 * 9600 - 100) as f64;
    let expected = p0 as f64 + 200.0 * 9600.0 * (1.0 + e);
    assert!(
        (p200 - expected).abs() <= 1.0,
        "PSS at {p200}, expected {expected}"
    );
}

/// Bad scene arguments are refused when the radio opens, naming the argument.
#[test]
fn lte_scene_arguments_are_checked() {
    init();
    for (args, key) in [
        ("lte_freq=806e6,lte_pci=504", "lte_pci"),
        ("lte_freq=806e6,lte_pci=1.5", "lte_pci"),
        ("lte_freq=806e6,lte_snr_db=x", "lte_snr_db"),
        ("lte_freq=0", "lte_freq"),
        ("lte_freq=806e6,lte_seed=-1", "lte_seed"),
        ("lte_freq=806e6,lte_tdd=2", "lte_tdd"),
        ("sample_ppm=x", "sample_ppm"),
        ("sample_ppm=5000", "sample_ppm"),
    ] {
        let Err(err) = RxRadio::open(&format!("driver=rxsim,serial=lte-bad,{args}")) else {
            panic!("{args}: accepted");
        };
        assert!(format!("{err:#}").contains(key), "{args}: {err:#}");
    }
}
