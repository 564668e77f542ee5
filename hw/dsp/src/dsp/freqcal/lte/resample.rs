//! Any sample rate ≥ 1.92 MS/s down to LTE's 1.92 MS/s (the 128-point grid of the six
//! central resource blocks), streaming.
//!
//! Two stages: an integer decimator by `D = ⌊rate / 3.84 MS/s⌋` (skipped when `D` is 1)
//! to a rate in 3.84..7.68 MS/s, then a polyphase fractional resampler to 1.92 MS/s
//! (skipped when the rate already is 1.92 MS/s). Both are Kaiser-windowed sincs with
//! about 70 dB stopband that pass ±0.72 MHz flat (the synchronisation signals' ±0.47 MHz
//! plus the largest carrier offset searched) and keep every alias out of that band.
//! The delay is constant, so the arrival-time drift of the PSS is preserved.
use super::super::fir::{dot, kaiser_design, windowed_sinc, Decimator};
use num_complex::Complex;

/// The output rate (Hz).
pub(crate) const LTE_RATE_HZ: f64 = 1.92e6;
/// What must survive the chain: ± this many Hz around the centre.
const PASS_HZ: f64 = 0.72e6;
/// Stopband attenuation the filters are designed for (dB).
const STOP_DB: f64 = 70.0;
/// Phases of the fractional resampler's table (its timing is quantised to 1/PHASES
/// of an input sample: ≤ 0.1 ns at 3.84 MS/s, far below what a PSS can resolve).
const PHASES: usize = 1024;

/// Stage 2: polyphase windowed-sinc interpolation at positions `j·ratio`.
struct FractionalResampler {
    ratio: f64,
    /// Taps per output (2·half).
    width: usize,
    /// `PHASES + 1` rows of `width` taps, each given twice (see `fir::dot`): row φ is
    /// the filter for a fractional position φ/PHASES.
    table: Vec<f32>,
    hist: Vec<Complex<f32>>,
    /// Outputs produced, and input samples dropped from `hist`.
    produced: u64,
    dropped: u64,
}

impl FractionalResampler {
    fn new(rate: f64) -> Self {
        let ratio = rate / LTE_RATE_HZ;
        let (beta, n) = kaiser_design((LTE_RATE_HZ - 2.0 * PASS_HZ) / rate, STOP_DB);
        let half = n.div_ceil(2).max(2);
        let width = 2 * half;
        let cutoff = 0.5 * LTE_RATE_HZ / rate;
        let mut table = Vec::with_capacity((PHASES + 1) * width);
        for ph in 0..=PHASES {
            let mu = ph as f64 / PHASES as f64;
            // Output at fractional position mu after input index `half - 1` of the window.
            let row: Vec<f64> = (0..width)
                .map(|t| {
                    windowed_sinc(mu + (half - 1) as f64 - t as f64, half as f64, cutoff, beta)
                })
                .collect();
            let sum: f64 = row.iter().sum();
            table.extend(
                row.iter()
                    .flat_map(|v| [(v / sum) as f32, (v / sum) as f32]),
            );
        }
        Self {
            ratio,
            width,
            table,
            hist: Vec::new(),
            produced: 0,
            dropped: 0,
        }
    }

    fn process(&mut self, input: &[Complex<f32>], out: &mut Vec<Complex<f32>>) {
        self.hist.extend_from_slice(input);
        let half = self.width / 2;
        loop {
            // Position of the next output in stream samples, from the count (no drift).
            let pos = self.produced as f64 * self.ratio + (half - 1) as f64;
            let base = pos.floor();
            let mut ph = ((pos - base) * PHASES as f64).round() as usize;
            let mut start = base as u64 + 1 - half as u64;
            if ph == PHASES {
                ph = 0;
                start += 1;
            }
            let Some(local) = start.checked_sub(self.dropped) else {
                break;
            };
            let local = local as usize;
            if local + self.width > self.hist.len() {
                break;
            }
            let w = &self.hist[local..local + self.width];
            let taps = &self.table[2 * ph * self.width..2 * (ph + 1) * self.width];
            out.push(dot(w, taps));
            self.produced += 1;
        }
        // Keep what the next output needs.
        let pos = self.produced as f64 * self.ratio + (half - 1) as f64;
        let keep_from = (pos.floor() as u64).saturating_sub(half as u64);
        let drop = keep_from
            .saturating_sub(self.dropped)
            .min(self.hist.len() as u64) as usize;
        self.hist.drain(..drop);
        self.dropped += drop as u64;
    }
}

/// The whole chain: samples at `rate` in, 1.92 MS/s out.
pub(crate) struct Resampler {
    integer: Option<Decimator>,
    fractional: Option<FractionalResampler>,
    mid: Vec<Complex<f32>>,
}

impl Resampler {
    /// A chain for `rate` (Hz, ≥ 1.92 MS/s; the caller checks).
    pub(crate) fn new(rate: f64) -> Self {
        let d = (rate / (2.0 * LTE_RATE_HZ)).floor() as usize;
        let (integer, mid_rate) = if d >= 2 {
            (
                Some(Decimator::new(rate, d, PASS_HZ, STOP_DB)),
                rate / d as f64,
            )
        } else {
            (None, rate)
        };
        let fractional = if (mid_rate - LTE_RATE_HZ).abs() < 1e-6 {
            None
        } else {
            Some(FractionalResampler::new(mid_rate))
        };
        Self {
            integer,
            fractional,
            mid: Vec::new(),
        }
    }

    /// Append the 1.92 MS/s samples that `input` completes to `out`.
    pub(crate) fn process(&mut self, input: &[Complex<f32>], out: &mut Vec<Complex<f32>>) {
        match (&mut self.integer, &mut self.fractional) {
            (None, None) => out.extend_from_slice(input),
            (Some(i), None) => i.process(input, out),
            (None, Some(f)) => f.process(input, out),
            (Some(i), Some(f)) => {
                self.mid.clear();
                i.process(input, &mut self.mid);
                f.process(&self.mid, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsp::freqcal::fir::tests::tone;
    use std::f64::consts::PI;

    /// A tone inside ±0.72 MHz comes out at the same frequency and level at 1.92 MS/s,
    /// whatever the input rate and however the input is split into blocks; one outside
    /// the passband that would alias onto it is suppressed.
    #[test]
    fn resampler_keeps_the_passband_and_rejects_aliases() {
        for rate in [1.92e6, 2.4e6, 3.84e6, 5e6, 10e6, 30.72e6, 61.44e6] {
            let n = (rate * 0.02) as usize;
            for (hz, expect_amp) in [(600e3f64, 1.0f64), (-450e3, 1.0), (1.92e6 - 300e3, 0.0)] {
                if hz.abs() >= rate / 2.0 {
                    continue;
                }
                let x = tone(rate, hz, n);
                let mut r = Resampler::new(rate);
                let mut out = Vec::new();
                for chunk in x.chunks(777) {
                    r.process(chunk, &mut out);
                }
                let expected = (n as f64 / rate * LTE_RATE_HZ) as usize;
                assert!(
                    out.len() + 200 > expected && out.len() <= expected + 1,
                    "{rate}: {} of {expected}",
                    out.len()
                );
                // Skip the start-up, then compare with the ideal tone's phase progression.
                let tail = &out[100..out.len() - 10];
                let amp = tail.iter().map(|c| c.norm() as f64).sum::<f64>() / tail.len() as f64;
                if expect_amp > 0.0 {
                    assert!((amp - 1.0).abs() < 0.003, "{rate} {hz}: amplitude {amp}");
                    let step = tail
                        .windows(2)
                        .map(|w| (w[1] * w[0].conj()).arg() as f64)
                        .sum::<f64>()
                        / (tail.len() - 1) as f64;
                    let got = step * LTE_RATE_HZ / (2.0 * PI);
                    assert!((got - hz).abs() < 0.5, "{rate} {hz}: got {got}");
                } else {
                    assert!(amp < 0.003, "{rate} {hz}: alias at amplitude {amp}");
                }
            }
        }
    }
}
