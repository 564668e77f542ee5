//! The estimators' streaming front ends: Kaiser-windowed-sinc FIR design, a
//! decimating FIR, and a numerically controlled oscillator that mixes a band to 0 Hz.
//!
//! The hot loop is one dot product per output: the taps stored twice (`h0 h0 h1 h1
//! …`) against the interleaved samples (`re0 im0 re1 im1 …`), summed in 16 independent
//! lanes so the compiler keeps it in SIMD registers (a single running sum per real and
//! imaginary part would be a chain of dependent additions, one tap per few cycles).
use num_complex::Complex;
use std::f64::consts::PI;

/// Kaiser window's β for `stop_db` of stopband, and the number of taps for a
/// transition band of `transition` (as a fraction of the sample rate).
pub(crate) fn kaiser_design(transition: f64, stop_db: f64) -> (f64, usize) {
    let beta = 0.1102 * (stop_db - 8.7);
    let taps = ((stop_db - 8.0) / (2.285 * 2.0 * PI * transition)).ceil() as usize + 1;
    (beta, taps)
}

/// Modified Bessel function of the first kind, order 0 (series; converges fast for the
/// β used here).
fn bessel_i0(x: f64) -> f64 {
    let (mut sum, mut term, q) = (1.0, 1.0, x * x / 4.0);
    for k in 1..64 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

/// Kaiser-windowed sinc at `t` (input samples from the centre) for a half-length of
/// `half` samples and a cutoff of `cutoff` (fraction of the sample rate).
pub(crate) fn windowed_sinc(t: f64, half: f64, cutoff: f64, beta: f64) -> f64 {
    if t.abs() >= half {
        return 0.0;
    }
    let x = 2.0 * cutoff * t;
    let sinc = if x.abs() < 1e-12 {
        1.0
    } else {
        (PI * x).sin() / (PI * x)
    };
    let r = t / half;
    sinc * bessel_i0(beta * (1.0 - r * r).max(0.0).sqrt()) / bessel_i0(beta)
}

/// Lanes of the dot product (f32: 16 = eight complex samples).
const LANES: usize = 16;

/// `Σ x[i]·h[i]` for complex `x` and real taps given twice each (`h2 = h0 h0 h1 h1 …`,
/// `h2.len() == 2·x.len()`). With AVX2 where the CPU has it (run-time detection), else
/// the same code for the build's baseline (SSE2 on x86-64).
pub(crate) fn dot(x: &[Complex<f32>], h2: &[f32]) -> Complex<f32> {
    let xs: &[f32] = bytemuck::cast_slice(x);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above); the function only reads its
        // two slices.
        return unsafe { dot_avx2(xs, h2) };
    }
    dot_lanes(xs, h2)
}

/// [`dot_lanes`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(xs: &[f32], h2: &[f32]) -> Complex<f32> {
    dot_lanes(xs, h2)
}

/// The interleaved dot product in `LANES` independent sums.
#[inline(always)]
fn dot_lanes(xs: &[f32], h2: &[f32]) -> Complex<f32> {
    let n = xs.len().min(h2.len());
    let (xa, xr) = xs[..n].as_chunks::<LANES>();
    let (ha, hr) = h2[..n].as_chunks::<LANES>();
    let mut acc = [0.0f32; LANES];
    for (a, b) in xa.iter().zip(ha) {
        for j in 0..LANES {
            acc[j] += a[j] * b[j];
        }
    }
    for (j, (a, b)) in xr.iter().zip(hr).enumerate() {
        acc[j] += a * b;
    }
    let (mut re, mut im) = (0.0f32, 0.0f32);
    for pair in acc.chunks_exact(2) {
        re += pair[0];
        im += pair[1];
    }
    Complex::new(re, im)
}

/// Real taps as `dot` wants them: each twice.
pub(crate) fn doubled(taps: &[f64]) -> Vec<f32> {
    taps.iter().flat_map(|&t| [t as f32, t as f32]).collect()
}

/// A low-pass FIR keeping every `d`-th output: at `rate` in, `rate / d` out, flat over
/// ± `pass_hz` and with every alias of that band `stop_db` down.
pub(crate) struct Decimator {
    d: usize,
    /// Taps, each twice (see [`dot`]).
    taps2: Vec<f32>,
    hist: Vec<Complex<f32>>,
    next: usize,
}

impl Decimator {
    /// A decimator by `d` for input at `rate` that keeps ± `pass_hz`
    /// (`pass_hz < rate / (2·d)`; the caller checks).
    pub(crate) fn new(rate: f64, d: usize, pass_hz: f64, stop_db: f64) -> Self {
        let out_rate = rate / d as f64;
        // Cutoff halfway between the passband and the first alias of it.
        let (beta, n) = kaiser_design((out_rate - 2.0 * pass_hz) / rate, stop_db);
        let cutoff = 0.5 * out_rate / rate;
        let half = n as f64 / 2.0;
        let mut taps: Vec<f64> = (0..n)
            .map(|i| windowed_sinc(i as f64 - (n - 1) as f64 / 2.0, half, cutoff, beta))
            .collect();
        let sum: f64 = taps.iter().sum();
        taps.iter_mut().for_each(|t| *t /= sum);
        Self {
            d,
            taps2: doubled(&taps),
            hist: Vec::new(),
            next: 0,
        }
    }

    /// Taps of the filter.
    pub(crate) fn taps(&self) -> usize {
        self.taps2.len() / 2
    }

    /// The delay from an input sample to the output centred on it, in input samples:
    /// output `m` is centred on input `m·d + delay()`.
    pub(crate) fn delay(&self) -> f64 {
        (self.taps() - 1) as f64 / 2.0
    }

    /// Append the outputs that `input` completes to `out`. Windows inside the block
    /// are read in place; only the block's last few samples (less than the filter's
    /// length plus `d`) are kept for the next one.
    pub(crate) fn process(&mut self, input: &[Complex<f32>], out: &mut Vec<Complex<f32>>) {
        let n = self.taps();
        let h = self.hist.len();
        let total = h + input.len();
        // Windows that start in the history: stitched with the start of the block.
        if self.next < h {
            let need = (n - 1).min(input.len());
            self.hist.extend_from_slice(&input[..need]);
            while self.next < h && self.next + n <= self.hist.len() {
                out.push(dot(&self.hist[self.next..self.next + n], &self.taps2));
                self.next += self.d;
            }
            self.hist.truncate(h);
        }
        // Windows inside the block.
        if self.next >= h {
            let mut s = self.next - h;
            while s + n <= input.len() {
                out.push(dot(&input[s..s + n], &self.taps2));
                s += self.d;
            }
            self.next = s + h;
        }
        // Keep what the next window needs.
        let keep_from = self.next.min(total);
        if keep_from >= h {
            self.hist.clear();
            self.hist.extend_from_slice(&input[keep_from - h..]);
        } else {
            self.hist.drain(..keep_from);
            self.hist.extend_from_slice(input);
        }
        self.next -= keep_from;
    }
}

/// Samples mixed per phase reset of the oscillator.
const NCO_CHUNK: usize = 64;

/// Shifts a stream down by `shift_hz` (a signal at `shift_hz` comes out at 0 Hz), with
/// the exact phase recomputed from the sample count every 64 samples (no drift).
pub(crate) struct Mixer {
    /// Cycles per sample.
    cycles: f64,
    /// `exp(−j2π·cycles·i)` for i in 0..64.
    table: [Complex<f32>; NCO_CHUNK],
    seen: u64,
    out: Vec<Complex<f32>>,
}

impl Mixer {
    /// A mixer for samples at `rate` shifting down by `shift_hz`.
    pub(crate) fn new(shift_hz: f64, rate: f64) -> Self {
        let cycles = shift_hz / rate;
        let table = std::array::from_fn(|i| {
            let ph = -2.0 * PI * (cycles * i as f64).fract();
            Complex::new(ph.cos() as f32, ph.sin() as f32)
        });
        Self {
            cycles,
            table,
            seen: 0,
            out: Vec::new(),
        }
    }

    /// `input` mixed down (the slice lives until the next call).
    pub(crate) fn process(&mut self, input: &[Complex<f32>]) -> &[Complex<f32>] {
        self.out.clear();
        self.out.reserve(input.len());
        let mut i = 0;
        while i < input.len() {
            // Within a chunk aligned to the absolute sample count.
            let pos = (self.seen % NCO_CHUNK as u64) as usize;
            let k = (NCO_CHUNK - pos).min(input.len() - i);
            let base = self.seen - pos as u64;
            let ph = -2.0 * PI * (self.cycles * base as f64).fract();
            let p = Complex::new(ph.cos() as f32, ph.sin() as f32);
            self.out.extend(
                input[i..i + k]
                    .iter()
                    .zip(&self.table[pos..pos + k])
                    .map(|(x, t)| x * (p * t)),
            );
            i += k;
            self.seen += k as u64;
        }
        &self.out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `n` samples of a unit complex tone at `hz`, sampled at `rate`.
    pub(crate) fn tone(rate: f64, hz: f64, n: usize) -> Vec<Complex<f32>> {
        (0..n)
            .map(|i| {
                let ph = 2.0 * PI * (hz * i as f64 / rate).fract();
                Complex::new(ph.cos() as f32, ph.sin() as f32)
            })
            .collect()
    }

    #[test]
    fn dot_matches_the_plain_sum_for_every_length() {
        for n in [1usize, 7, 8, 9, 31, 255, 256, 359] {
            let x: Vec<Complex<f32>> = (0..n)
                .map(|i| Complex::new((i as f32 * 0.37).sin(), (i as f32 * 0.11).cos()))
                .collect();
            let h: Vec<f64> = (0..n).map(|i| ((i * 7 % 13) as f64 - 6.0) / 10.0).collect();
            let want: Complex<f64> = x
                .iter()
                .zip(&h)
                .map(|(a, b)| Complex::new(f64::from(a.re), f64::from(a.im)) * *b)
                .sum();
            let got = dot(&x, &doubled(&h));
            assert!(
                (f64::from(got.re) - want.re).abs() < 1e-4,
                "{n}: {got} {want}"
            );
            assert!(
                (f64::from(got.im) - want.im).abs() < 1e-4,
                "{n}: {got} {want}"
            );
        }
    }

    /// The mixer brings a tone at `shift` to 0 Hz with a steady phase, however the
    /// stream is split into blocks.
    #[test]
    fn mixer_brings_the_shifted_tone_to_dc_across_blocks() {
        let (rate, shift) = (61.44e6, 1_234_567.8);
        let x = tone(rate, shift, 100_000);
        let mut m = Mixer::new(shift, rate);
        let mut out = Vec::new();
        for c in x.chunks(997) {
            out.extend_from_slice(m.process(c));
        }
        for (i, v) in out.iter().enumerate() {
            assert!((v - Complex::new(1.0, 0.0)).norm() < 1e-3, "{i}: {v}");
        }
    }

    /// The decimator's outputs do not depend on how the stream is split into blocks
    /// (blocks shorter than the filter, longer, of one sample).
    #[test]
    fn decimator_output_does_not_depend_on_the_block_split() {
        let x: Vec<Complex<f32>> = (0..20_000)
            .map(|i| Complex::new((i as f32 * 0.013).sin(), (i as f32 * 0.007).cos()))
            .collect();
        let whole = {
            let mut d = Decimator::new(61.44e6, 16, 0.72e6, 70.0);
            let mut out = Vec::new();
            d.process(&x, &mut out);
            out
        };
        for split in [1usize, 5, 16, 17, 100, 111, 4099] {
            let mut d = Decimator::new(61.44e6, 16, 0.72e6, 70.0);
            let mut out = Vec::new();
            for c in x.chunks(split) {
                d.process(c, &mut out);
            }
            assert_eq!(out, whole, "split {split}");
            assert!(
                d.hist.len() < d.taps() + 16,
                "split {split}: {}",
                d.hist.len()
            );
        }
    }

    /// A decimator keeps a tone in its passband at its level and frequency and
    /// suppresses one that would alias onto it.
    #[test]
    fn decimator_keeps_the_passband_and_rejects_aliases() {
        let (rate, d, pass) = (61.44e6, 61, 150e3);
        let out_rate = rate / d as f64;
        for (hz, keep) in [(120e3, true), (-100e3, true), (out_rate + 50e3, false)] {
            let x = tone(rate, hz, 400_000);
            let mut dec = Decimator::new(rate, d, pass, 60.0);
            let mut out = Vec::new();
            for c in x.chunks(4099) {
                dec.process(c, &mut out);
            }
            assert!(out.len() + 1 >= (400_000 - dec.taps()) / d, "{}", out.len());
            let amp = out.iter().map(|c| f64::from(c.norm())).sum::<f64>() / out.len() as f64;
            if keep {
                assert!((amp - 1.0).abs() < 0.01, "{hz}: {amp}");
                let step = out
                    .windows(2)
                    .map(|w| f64::from((w[1] * w[0].conj()).arg()))
                    .sum::<f64>()
                    / (out.len() - 1) as f64;
                assert!((step * out_rate / (2.0 * PI) - hz).abs() < 1.0, "{hz}");
            } else {
                assert!(amp < 2e-3, "{hz}: alias at {amp}");
            }
        }
    }
}
