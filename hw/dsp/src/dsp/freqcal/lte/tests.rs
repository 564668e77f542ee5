//! The LTE estimator against synthetic downlinks generated here, sample by sample from
//! the standard's definitions (not through rxsim): a 1.4 MHz FDD cell (6 resource
//! blocks, random QPSK everywhere but the PSS and SSS), seen by a radio whose LO and
//! sample clock are off by the same ppm, plus Gaussian noise.
use super::*;
use crate::dsp::freqcal::{freq_cal_estimator, offset_for_ppm};
use rustfft::FftPlanner;

/// xorshift64*, uniform in (0, 1).
pub(crate) struct Rng(u64);
impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((v >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Complex Gaussian of unit power.
    pub(crate) fn gauss(&mut self) -> Complex<f64> {
        let r = (-self.uniform().ln()).sqrt();
        Complex::from_polar(r, 2.0 * PI * self.uniform())
    }
}

/// Two frames (20 ms) of an LTE 1.4 MHz downlink at 30.72 MS/s (2048-point grid),
/// unit mean power; evaluated anywhere by linear interpolation (−56 dB at 0.54 MHz).
pub(crate) struct Downlink {
    table: Vec<Complex<f32>>,
}

/// Samples per frame at 30.72 MS/s.
const FRAME_30M: usize = 307_200;

impl Downlink {
    pub(crate) fn new(pci: usize, seed: u64) -> Self {
        let (n1, n2) = (pci / 3, pci % 3);
        let mut rng = Rng::new(seed);
        let n = 2048;
        let ifft = FftPlanner::new().plan_fft_inverse(n);
        let mut table = Vec::with_capacity(2 * FRAME_30M);
        for slot in 0..40 {
            for l in 0..7 {
                let mut grid = vec![Complex::new(0.0f32, 0.0); n];
                // 72 subcarriers −36..−1, +1..+36 of random QPSK.
                for k in (-36i32..=36).filter(|&k| k != 0) {
                    let q = Complex::new(
                        if rng.uniform() < 0.5 { 1.0 } else { -1.0 },
                        if rng.uniform() < 0.5 { 1.0 } else { -1.0 },
                    ) / 2f32.sqrt();
                    grid[k.rem_euclid(n as i32) as usize] = q;
                }
                if slot % 10 == 0 && (l == 5 || l == 6) {
                    for k in [-36i32, -35, -34, -33, -32, 32, 33, 34, 35, 36] {
                        grid[k.rem_euclid(n as i32) as usize] = Complex::new(0.0, 0.0);
                    }
                    for i in 0..SEQ_LEN {
                        let k = subcarrier(i).rem_euclid(n as i32) as usize;
                        grid[k] = if l == 6 {
                            let v = pss(n2)[i];
                            Complex::new(v.re as f32, v.im as f32)
                        } else {
                            Complex::new(f32::from(sss(n1, n2, slot % 20 == 10)[i]), 0.0)
                        };
                    }
                }
                ifft.process(&mut grid);
                let cp = if l == 0 { 160 } else { 144 };
                table.extend_from_slice(&grid[n - cp..]);
                table.extend_from_slice(&grid);
            }
        }
        let p = table.iter().map(|c| c.norm_sqr() as f64).sum::<f64>() / table.len() as f64;
        let g = (1.0 / p).sqrt() as f32;
        table.iter_mut().for_each(|c| *c *= g);
        Self { table }
    }

    /// The baseband at `t` seconds after the start of frame 0.
    pub(crate) fn at(&self, t: f64) -> Complex<f32> {
        let len = self.table.len();
        let pos = (t * 30.72e6).rem_euclid(len as f64);
        let i = pos.floor() as usize % len;
        let f = (pos - pos.floor()) as f32;
        self.table[i] * (1.0 - f) + self.table[(i + 1) % len] * f
    }
}

/// What a radio sees of a cell.
#[derive(Clone, Copy)]
pub(crate) struct Scene {
    pub carrier_hz: f64,
    pub center_hz: f64,
    pub rate: f64,
    pub ppm: f64,
    /// Cell power over the noise in its 1.08 MHz; `None`: no cell.
    pub snr_db: Option<f64>,
    /// Where in its frame the cell is at the first sample (s).
    pub t0: f64,
}

/// `seconds` of a radio's samples, in blocks, handed to `sink`.
pub(crate) fn radio_samples(
    scene: Scene,
    cell: &Downlink,
    seconds: f64,
    seed: u64,
    mut sink: impl FnMut(&[Complex<f32>]),
) {
    let mut rng = Rng::new(seed ^ 0xABCD);
    let e = scene.ppm * 1e-6;
    let true_rate = scene.rate * (1.0 + e);
    let delta = scene.carrier_hz - scene.center_hz * (1.0 + e);
    let noise_amp = 0.05f64;
    let amp = scene
        .snr_db
        .map(|s| noise_amp * (10f64.powf(s / 10.0) * 1.08e6 / scene.rate).sqrt())
        .unwrap_or(0.0);
    let phi0 = 2.0 * PI * rng.uniform();
    let total = (seconds * scene.rate) as u64;
    let mut block = Vec::with_capacity(8192);
    let mut k = 0u64;
    while k < total {
        block.clear();
        for _ in 0..8192.min(total - k) {
            let t = k as f64 / true_rate;
            let rot = Complex::from_polar(amp, phi0 + 2.0 * PI * (delta * t).fract());
            let s = cell.at(t + scene.t0);
            let v = Complex::new(f64::from(s.re), f64::from(s.im)) * rot + rng.gauss() * noise_amp;
            block.push(Complex::new(v.re as f32, v.im as f32));
            k += 1;
        }
        sink(&block);
    }
}

fn run(
    scene: Scene,
    pci: usize,
    seconds: f64,
    seed: u64,
) -> (Result<FreqCalEstimate, FreqCalError>, usize) {
    let cell = Downlink::new(pci, seed);
    let mut est = LteEstimator::new(FreqCalConfig::new(
        scene.carrier_hz,
        scene.center_hz,
        scene.rate,
    ))
    .expect("config");
    let mut max_buf = 0;
    radio_samples(scene, &cell, seconds, seed, |b| {
        est.feed(b);
        max_buf = max_buf.max(est.buf.capacity());
    });
    (est.finish(), max_buf)
}

/// The acceptance case: −6 dB, a radio at +37 ppm, 2 s → within ±0.05 ppm, the PCI
/// reported, and memory bounded (the 1.92 MS/s buffer never holds more than the
/// acquisition window and a half frame).
#[test]
fn minus_6_db_at_plus_37_ppm_is_measured_within_005_ppm_with_its_pci() {
    for (seed, carrier, pci, t0) in [
        (1u64, 1842.5e6, 301usize, 0.0123),
        (2, 806e6, 17, 0.0031),
        (3, 2680e6, 503, 0.0),
    ] {
        let scene = Scene {
            carrier_hz: carrier,
            center_hz: carrier,
            rate: 1.92e6,
            ppm: 37.0,
            snr_db: Some(-6.0),
            t0,
        };
        let (r, max_buf) = run(scene, pci, 2.0, seed);
        let e = r.expect("estimate");
        assert!(
            (e.ppm - 37.0).abs() < 0.05,
            "seed {seed}: {} ppm ± {}",
            e.ppm,
            e.uncertainty_ppm
        );
        assert!(
            e.uncertainty_ppm > 0.0 && e.uncertainty_ppm < 0.02,
            "{}",
            e.uncertainty_ppm
        );
        // The reported uncertainty covers the error (5 σ).
        assert!(
            (e.ppm - 37.0).abs() < 5.0 * e.uncertainty_ppm + 1e-4,
            "{} ± {}",
            e.ppm,
            e.uncertainty_ppm
        );
        assert_eq!(e.cell, format!("PCI {pci} at {:.1} MHz", carrier / 1e6));
        assert!(
            e.confidence > 0.7 && e.confidence <= 1.0,
            "{}",
            e.confidence
        );
        assert_eq!(e.method, FreqCalMethod::Lte);
        assert!(e.evidence.detections.len() > 250);
        assert!(max_buf <= 2 * ACQ_LEN + 4 * HALF_FRAME, "{max_buf}");
    }
}

/// A radio at 7.68 MS/s and −52 ppm, tuned 50 kHz off the cell, at 2.68 GHz: the
/// decimator and the offset search cover it.
#[test]
fn other_rates_signs_and_an_offset_tuning_are_measured() {
    let scene = Scene {
        carrier_hz: 2680e6,
        center_hz: 2680.05e6,
        rate: 7.68e6,
        ppm: -52.0,
        snr_db: Some(0.0),
        t0: 0.0071,
    };
    let e = run(scene, 42, 1.0, 7).0.expect("estimate");
    assert!(
        (e.ppm + 52.0).abs() < 0.05,
        "{} ± {}",
        e.ppm,
        e.uncertainty_ppm
    );
    assert_eq!(e.cell, "PCI 42 at 2680.0 MHz");
    let scene = Scene {
        rate: 2.4e6,
        ppm: 11.3,
        center_hz: 2680e6,
        ..scene
    };
    let e = run(scene, 0, 1.0, 8).0.expect("estimate");
    assert!(
        (e.ppm - 11.3).abs() < 0.05,
        "{} ± {}",
        e.ppm,
        e.uncertainty_ppm
    );
    assert_eq!(e.cell, "PCI 0 at 2680.0 MHz");
}

/// Noise alone: an error saying no cell was found, never a number.
#[test]
fn no_cell_is_an_error_never_a_number() {
    let scene = Scene {
        carrier_hz: 806e6,
        center_hz: 806e6,
        rate: 1.92e6,
        ppm: 10.0,
        snr_db: None,
        t0: 0.0,
    };
    for seed in [1, 2] {
        match run(scene, 0, 1.0, seed).0 {
            Err(FreqCalError::NotFound(m)) => assert!(m.starts_with("no LTE cell found"), "{m}"),
            other => panic!("expected no cell, got {other:?}"),
        }
    }
    // Too short to say anything: also no number.
    match run(
        Scene {
            snr_db: Some(10.0),
            ..scene
        },
        3,
        0.02,
        3,
    )
    .0
    {
        Err(FreqCalError::NotFound(m)) => assert!(m.contains("too short"), "{m}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Settings that cannot work are refused up front, naming the field.
#[test]
fn impossible_settings_are_refused_naming_the_field() {
    let bad = |c: FreqCalConfig| match freq_cal_estimator(FreqCalMethod::Lte, c) {
        Err(FreqCalError::InvalidSetting { field, .. }) => field,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    };
    assert_eq!(bad(FreqCalConfig::new(806e6, 806e6, 1e6)), "sample_rate_hz");
    assert_eq!(
        bad(FreqCalConfig::new(806e6, 806.5e6, 1.92e6)),
        "frequency_hz"
    );
    assert_eq!(
        bad(FreqCalConfig {
            max_error_ppm: f64::NAN,
            ..FreqCalConfig::new(806e6, 806e6, 1.92e6)
        }),
        "max_error_ppm"
    );
    assert!(freq_cal_estimator(
        FreqCalMethod::Lte,
        FreqCalConfig::new(2680e6, 2680e6, 61.44e6)
    )
    .is_ok());
    let _ = offset_for_ppm(1.0, 1.0, 0.0);
}
