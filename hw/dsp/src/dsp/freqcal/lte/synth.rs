//! An LTE downlink as a radio with a clock error sees it, for tests and the benchmark,
//! built from the standard's definitions (3GPP TS 36.211 §4, §6.11, §6.12) independently
//! of the estimator's own path (only the PSS and SSS sequences are shared): a 1.4 MHz
//! cell (six resource blocks of random QPSK; FDD: the PSS and SSS in the last two
//! symbols of slots 0 and 10; TDD: see [`LteFrame::Tdd`]; normal cyclic prefix, or
//! extended for [`LteFrame::FddExtendedCp`]) tabulated over two frames at 30.72 MS/s
//! and read at the radio's true sample instants (its sample clock's error), turned to
//! the offset its LO error gives, plus white noise.
use super::seq::{pss, sss, subcarrier, SEQ_LEN};
use crate::dsp::freqcal::synth::Xorshift;
use num_complex::Complex;
use rustfft::FftPlanner;
use std::f64::consts::PI;

/// Samples of two frames at 30.72 MS/s.
const TABLE_LEN: usize = 614_400;

/// The scene (see the module docs).
#[derive(Debug, Clone)]
pub struct LteScene {
    /// The cell's centre (RF Hz).
    pub carrier_hz: f64,
    /// Where the radio is tuned (Hz).
    pub center_hz: f64,
    /// The radio's nominal sample rate.
    pub rate: f64,
    /// The radio's error (ppm, > 0 fast): its LO's.
    pub ppm: f64,
    /// Its sample clock's error (ppm); `new` sets it to `ppm` (one crystal drives
    /// both), a radio with a separate sample clock differs.
    pub clock_ppm: f64,
    /// The cell's power over the noise in its 1.08 MHz (dB); `None`: noise only.
    pub snr_db: Option<f64>,
    table: Vec<Complex<f32>>,
    rng: Xorshift,
    n: u64,
    t0: f64,
    phi0: f64,
}

/// The frame structure and cyclic prefix of a scene's cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LteFrame {
    /// FDD, normal cyclic prefix: the PSS and SSS in the last two symbols of slots 0
    /// and 10.
    #[default]
    Fdd,
    /// FDD with the extended cyclic prefix (TS 36.211 §6.12: six symbols a slot, each
    /// with a 512-sample prefix at 30.72 MS/s; the PSS in the last symbol of slots 0
    /// and 10, the SSS in the one before).
    FddExtendedCp,
    /// TDD (frame structure type 2, uplink-downlink configuration 1 `DSUUDDSUUD`,
    /// TS 36.211 §4.2): the SSS in the last symbol of subframes 0 and 5, the PSS in
    /// the third of subframes 1 and 6 (§6.11.2.2), the special subframes' downlink
    /// part three symbols long, nothing from the cell in the uplink subframes or the
    /// guard period.
    Tdd,
}

/// What a scene shows: cell `pci` (0..=503) at `carrier_hz`, seen by a radio tuned
/// to `center_hz` at `rate` with an error of `ppm`; `seed` picks the data, the noise
/// and where in its frame the cell is at the first sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LteCell {
    /// The cell's physical cell ID.
    pub pci: u16,
    /// The cell's centre (RF Hz).
    pub carrier_hz: f64,
    /// Where the radio is tuned (Hz).
    pub center_hz: f64,
    /// The radio's nominal sample rate.
    pub rate: f64,
    /// The radio's error (ppm, > 0 fast), its LO's and its sample clock's.
    pub ppm: f64,
    /// The cell's power over the noise in its 1.08 MHz (dB); `None`: noise only.
    pub snr_db: Option<f64>,
    /// The data, the noise and the cell's frame position.
    pub seed: u64,
    /// FDD or TDD, and the cyclic prefix.
    pub frame: LteFrame,
}

impl LteCell {
    /// An FDD cell `pci` at `carrier_hz`, a radio tuned to it at `rate` with no
    /// error, noise only, seed 0; set the rest with the other methods.
    pub fn new(pci: u16, carrier_hz: f64, rate: f64) -> Self {
        Self {
            pci,
            carrier_hz,
            center_hz: carrier_hz,
            rate,
            ppm: 0.0,
            snr_db: None,
            seed: 0,
            frame: LteFrame::Fdd,
        }
    }

    /// The radio's error, ppm.
    pub fn ppm(self, ppm: f64) -> Self {
        Self { ppm, ..self }
    }

    /// The cell's SNR in its 1.08 MHz, dB (`None`: noise only).
    pub fn snr_db(self, snr_db: Option<f64>) -> Self {
        Self { snr_db, ..self }
    }

    /// The seed.
    pub fn seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// The frame structure.
    pub fn frame(self, frame: LteFrame) -> Self {
        Self { frame, ..self }
    }

    /// Where the radio is tuned, when not to the cell's centre.
    pub fn tuned_to(self, center_hz: f64) -> Self {
        Self { center_hz, ..self }
    }
}

impl LteScene {
    /// The scene of `cell` (see the module docs).
    pub fn new(cell: LteCell) -> Self {
        let LteCell {
            pci,
            carrier_hz,
            center_hz,
            rate,
            ppm,
            snr_db,
            seed,
            frame,
        } = cell;
        let (tdd, extended_cp) = match frame {
            LteFrame::Fdd => (false, false),
            LteFrame::FddExtendedCp => (false, true),
            LteFrame::Tdd => (true, false),
        };
        let pci = usize::from(pci % 504);
        let (n1, n2) = (pci / 3, pci % 3);
        let mut rng = Xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let n = 2048;
        let ifft = FftPlanner::new().plan_fft_inverse(n);
        let mut table = Vec::with_capacity(TABLE_LEN);
        let mut grid = vec![Complex::new(0.0f32, 0.0); n];
        let symbols = if extended_cp { 6 } else { 7 };
        for slot in 0..40 {
            for l in 0..symbols {
                grid.iter_mut().for_each(|v| *v = Complex::new(0.0, 0.0));
                let sf = (slot / 2) % 10;
                // TDD: uplink subframes, and the special subframes past their three
                // downlink symbols, carry nothing from the cell.
                let silent = tdd
                    && (matches!(sf, 2 | 3 | 7 | 8)
                        || (matches!(sf, 1 | 6) && (slot % 2 == 1 || l >= 3)));
                let (sss_here, pss_here) = if tdd {
                    (slot % 10 == 1 && l == symbols - 1, slot % 10 == 2 && l == 2)
                } else {
                    (
                        slot % 10 == 0 && l == symbols - 2,
                        slot % 10 == 0 && l == symbols - 1,
                    )
                };
                for k in (-36i32..=36).filter(|&k| k != 0 && !silent) {
                    let bits = rng.next_u64();
                    let q = Complex::new(
                        if bits & 1 == 0 { 1.0 } else { -1.0 },
                        if bits & 2 == 0 { 1.0 } else { -1.0 },
                    ) / 2f32.sqrt();
                    grid[k.rem_euclid(n as i32) as usize] = q;
                }
                if sss_here || pss_here {
                    for k in [-36i32, -35, -34, -33, -32, 32, 33, 34, 35, 36] {
                        grid[k.rem_euclid(n as i32) as usize] = Complex::new(0.0, 0.0);
                    }
                    let p = pss(n2);
                    let s = sss(n1, n2, slot % 20 >= 10);
                    for i in 0..SEQ_LEN {
                        let k = subcarrier(i).rem_euclid(n as i32) as usize;
                        grid[k] = if pss_here {
                            Complex::new(p[i].re as f32, p[i].im as f32)
                        } else {
                            Complex::new(f32::from(s[i]), 0.0)
                        };
                    }
                }
                ifft.process(&mut grid);
                let cp = match (extended_cp, l) {
                    (true, _) => 512,
                    (false, 0) => 160,
                    (false, _) => 144,
                };
                table.extend_from_slice(&grid[n - cp..]);
                table.extend_from_slice(&grid);
            }
        }
        let p = table.iter().map(|c| f64::from(c.norm_sqr())).sum::<f64>() / table.len() as f64;
        let g = (1.0 / p).sqrt() as f32;
        table.iter_mut().for_each(|c| *c *= g);
        let t0 = rng.uniform() * 0.02;
        let phi0 = 2.0 * PI * rng.uniform();
        Self {
            carrier_hz,
            center_hz,
            rate,
            ppm,
            clock_ppm: ppm,
            snr_db,
            table,
            rng,
            n: 0,
            t0,
            phi0,
        }
    }

    /// The cell's baseband at `t` seconds of its own (exact) clock.
    fn at(&self, t: f64) -> Complex<f32> {
        let len = self.table.len();
        let pos = (t * 30.72e6).rem_euclid(len as f64);
        let i = (pos.floor() as usize).min(len - 1);
        let f = (pos - pos.floor()) as f32;
        self.table[i] * (1.0 - f) + self.table[(i + 1) % len] * f
    }

    /// The next `out.len()` samples.
    pub fn fill(&mut self, out: &mut [Complex<f32>]) {
        let e = self.ppm * 1e-6;
        let true_rate = self.rate * (1.0 + self.clock_ppm * 1e-6);
        let delta = self.carrier_hz - self.center_hz * (1.0 + e);
        let noise_amp = 0.05f64;
        let amp = self.snr_db.map_or(0.0, |s| {
            noise_amp * (10f64.powf(s / 10.0) * 1.08e6 / self.rate).sqrt()
        });
        for o in out.iter_mut() {
            let t = self.n as f64 / true_rate;
            let rot = Complex::from_polar(amp, self.phi0 + 2.0 * PI * (delta * t).fract());
            let s = self.at(t + self.t0);
            let v =
                Complex::new(f64::from(s.re), f64::from(s.im)) * rot + self.rng.gauss() * noise_amp;
            *o = Complex::new(v.re as f32, v.im as f32);
            self.n += 1;
        }
    }
}
