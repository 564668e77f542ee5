//! A GSM BCCH carrier as a radio with a clock error sees it, for tests and the
//! benchmark: FCCH bursts in frames 0/10/20/30/40 of each 51-frame multiframe,
//! GMSK-modulated random bits in every other timeslot, white noise; the radio's
//! error on its LO and sample clock alike.
use super::gsm::{FCCH_BITS, FCCH_FRAMES, GSM_BIT_RATE_HZ};
use num_complex::Complex;
use std::f64::consts::PI;

/// A small deterministic generator.
#[derive(Debug, Clone)]
pub struct Xorshift(pub u64);

impl Xorshift {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut s = self.0.max(1);
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        self.0 = s;
        s
    }
    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Complex Gaussian of unit power.
    pub fn gauss(&mut self) -> Complex<f64> {
        let r = (-self.uniform().ln()).sqrt();
        let a = 2.0 * PI * self.uniform();
        Complex::new(r * a.cos(), r * a.sin())
    }
}

/// The scene (see the module docs).
#[derive(Debug, Clone)]
pub struct GsmScene {
    /// The BCCH carrier (RF Hz).
    pub carrier_hz: f64,
    /// Where the radio is tuned (Hz).
    pub center_hz: f64,
    /// The radio's nominal sample rate.
    pub rate: f64,
    /// The radio's error (ppm, > 0 fast).
    pub ppm: f64,
    /// Carrier power over the noise in a 200 kHz channel (dB).
    pub snr_db: f64,
    /// Send FCCH bursts (else GMSK everywhere).
    pub fcch: bool,
    /// A steady CW carrier at this baseband offset, `cw_db` from the carrier.
    pub cw_hz: Option<f64>,
    /// The CW carrier's power over the carrier's (dB, 0 as strong).
    pub cw_db: f64,
    rng: Xorshift,
    n: u64,
    phase: f64,
    bit_phase: f64,
    pulse: f64,
    symbol: f64,
    symbol_at: f64,
}

impl GsmScene {
    /// A scene; `seed` picks the noise, the data bits and the frame timing.
    pub fn new(
        carrier_hz: f64,
        center_hz: f64,
        rate: f64,
        ppm: f64,
        snr_db: f64,
        seed: u64,
    ) -> Self {
        let mut rng = Xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let t0 = rng.uniform() * 51.0 * 1250.0;
        Self {
            carrier_hz,
            center_hz,
            rate,
            ppm,
            snr_db,
            fcch: true,
            cw_hz: None,
            cw_db: 0.0,
            rng,
            n: 0,
            phase: 0.0,
            bit_phase: t0,
            pulse: 0.0,
            symbol: 1.0,
            symbol_at: -1.0,
        }
    }

    /// The next samples.
    pub fn fill(&mut self, out: &mut [Complex<f32>]) {
        let e = self.ppm * 1e-6;
        // True time per sample of the radio's (fast or slow) sample clock.
        let dt = 1.0 / (self.rate * (1.0 + e));
        // The carrier's baseband frequency in true Hz; the FCCH is its +Rb/4.
        let fb = self.carrier_hz - self.center_hz * (1.0 + e);
        let noise_amp = (10f64.powf(-self.snr_db / 10.0) * self.rate / 200e3).sqrt();
        let bits_per_sample = GSM_BIT_RATE_HZ * dt;
        // GMSK: h = 1/2, a Gaussian-smoothed frequency pulse (BT 0.3) approximated by a
        // one-pole smoother of the NRZ frequency (0.3 × bit rate corner).
        let k = 1.0 - (-2.0 * PI * 0.3 * GSM_BIT_RATE_HZ * dt).exp();
        let cw_amp = 10f64.powf(self.cw_db / 20.0);
        for o in out.iter_mut() {
            let bit = self.bit_phase; // bits since the start of a 51-multiframe cycle
            if bit.floor() != self.symbol_at || self.n == 0 {
                self.symbol_at = bit.floor();
                let frame = (bit / 1250.0).floor();
                let in_frame = bit - frame * 1250.0;
                let slot = (in_frame / 156.25).floor();
                let in_slot = in_frame - slot * 156.25;
                let fcch_bit = self.fcch
                    && slot == 0.0
                    && FCCH_FRAMES.contains(&((frame as u32) % 51))
                    && in_slot < FCCH_BITS;
                // The FCCH's all-zero bits give a steady +Rb/4; data bits ±Rb/4.
                self.symbol = if fcch_bit || self.rng.next_u64() & 1 == 0 {
                    1.0
                } else {
                    -1.0
                };
            }
            self.pulse += k * (self.symbol - self.pulse);
            let inst = fb + self.pulse * GSM_BIT_RATE_HZ / 4.0;
            self.phase = (self.phase + 2.0 * PI * inst * dt) % (2.0 * PI);
            let mut s = Complex::new(self.phase.cos(), self.phase.sin());
            if let Some(cw) = self.cw_hz {
                let p = 2.0 * PI * cw * self.n as f64 / self.rate;
                s += Complex::new(p.cos(), p.sin()) * cw_amp;
            }
            s += self.rng.gauss() * noise_amp;
            *o = Complex::new(s.re as f32, s.im as f32);
            self.bit_phase = (bit + bits_per_sample) % (51.0 * 1250.0);
            self.n += 1;
        }
    }
}
