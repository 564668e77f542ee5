//! The first stage of both CLKIN estimators ([`super::ClkinEstimator`] and the
//! comparison's `ToneTracker`): every sample is mixed down by the tone's nominal
//! baseband frequency and low-passed by a triangular (sinc²) kernel of 2·M taps,
//! decimated by M. The kernel's two halves, with the mixer folded in, are two tables
//! of M entries; each block of M samples is summed against both, and decimated
//! sample b is the previous block's first-half sum plus this block's second-half
//! sum, turned back by the mixer's phase at the previous block's start.
use num_complex::Complex;
use std::f64::consts::PI;

use super::mac::{mac2_dup, mac2_dup_cs16, DupTable};

/// The two kernel tables and their multiply-accumulate: Σ x·t₁[from..] and
/// Σ x·t₂[from..] over `x`.
pub(crate) trait Tables {
    /// The layout of the two halves `t1` and `t2` (M entries each).
    fn new(t1: Vec<Complex<f32>>, t2: Vec<Complex<f32>>) -> Self;
    /// M, the entries of each table.
    fn len(&self) -> usize;
    /// Σ x·t₁[from..] and Σ x·t₂[from..] (`from + x.len()` ≤ M).
    fn mac(&self, x: &[Complex<f32>], from: usize) -> (Complex<f32>, Complex<f32>);
}

/// The tables as complex slices, summed by [`super::mac2`] in four lanes.
pub(crate) struct Plain {
    t1: Vec<Complex<f32>>,
    t2: Vec<Complex<f32>>,
}

impl Tables for Plain {
    fn new(t1: Vec<Complex<f32>>, t2: Vec<Complex<f32>>) -> Self {
        Self { t1, t2 }
    }

    fn len(&self) -> usize {
        self.t1.len()
    }

    #[inline]
    fn mac(&self, x: &[Complex<f32>], from: usize) -> (Complex<f32>, Complex<f32>) {
        let to = from + x.len();
        super::mac2(x, &self.t1[from..to], &self.t2[from..to])
    }
}

/// The tables in the duplicated layout of `clkin/mac.rs`, summed by its SIMD kernels.
pub(crate) struct Dup {
    t1: DupTable,
    t2: DupTable,
}

impl Tables for Dup {
    fn new(t1: Vec<Complex<f32>>, t2: Vec<Complex<f32>>) -> Self {
        Self {
            t1: DupTable::new(&t1),
            t2: DupTable::new(&t2),
        }
    }

    fn len(&self) -> usize {
        self.t1.len()
    }

    #[inline]
    fn mac(&self, x: &[Complex<f32>], from: usize) -> (Complex<f32>, Complex<f32>) {
        mac2_dup(x, &self.t1, &self.t2, from)
    }
}

/// The mixer and decimating low-pass, fed any number of samples at a time.
pub(crate) struct FirstStage<T> {
    /// The mixer's frequency (Hz).
    nco_hz: f64,
    /// Nominal sample rate (Hz).
    fs: f64,
    /// h[m]·e^{-jωm} and h[M+m]·e^{-jω(M+m)}, m = 0..M.
    tables: T,
    /// Position in the current block of M samples.
    pos: usize,
    acc1: Complex<f32>,
    acc2: Complex<f32>,
    /// The first half's sum over the previous block, once there is one.
    prev1: Option<Complex<f32>>,
    block: u64,
}

impl<T: Tables> FirstStage<T> {
    /// Decimation by `m`, mixing down by `nco_hz` at the sample rate `fs` (Hz).
    pub(crate) fn new(m: usize, nco_hz: f64, fs: f64) -> Self {
        let w = -2.0 * PI * nco_hz / fs;
        let mm = m as f64;
        let tab = |i: usize, h: f64| {
            let c = Complex::from_polar(h, w * i as f64);
            Complex::new(c.re as f32, c.im as f32)
        };
        let t1: Vec<_> = (0..m)
            .map(|i| tab(i, (i as f64 + 0.5) / (mm * mm)))
            .collect();
        let t2: Vec<_> = (0..m)
            .map(|i| tab(m + i, (mm - i as f64 - 0.5) / (mm * mm)))
            .collect();
        Self {
            nco_hz,
            fs,
            tables: T::new(t1, t2),
            pos: 0,
            acc1: Complex::default(),
            acc2: Complex::default(),
            prev1: None,
            block: 0,
        }
    }

    /// M, the decimation factor.
    pub(crate) fn decimation(&self) -> usize {
        self.tables.len()
    }

    /// Take the samples of `x` up to the end of the current block: how many it took,
    /// and the decimated sample that block's end completed, if any.
    #[inline]
    pub(crate) fn push(&mut self, x: &[Complex<f32>]) -> (usize, Option<Complex<f64>>) {
        let m = self.tables.len();
        let take = (m - self.pos).min(x.len());
        let sums = self.tables.mac(&x[..take], self.pos);
        (take, self.add(take, sums))
    }

    /// Add the sums over the next `take` samples of the current block: the decimated
    /// sample that block's end completed, if any.
    #[inline]
    fn add(&mut self, take: usize, (a1, a2): (Complex<f32>, Complex<f32>)) -> Option<Complex<f64>> {
        self.acc1 += a1;
        self.acc2 += a2;
        self.pos += take;
        if self.pos == self.tables.len() {
            self.close_block()
        } else {
            None
        }
    }

    fn close_block(&mut self) -> Option<Complex<f64>> {
        let m = self.tables.len();
        let y = self.prev1.map(|p| {
            // y_b = e^{-jω(b−1)M} · (Σ_{block b−1} x·t1 + Σ_{block b} x·t2)
            let per_block = (self.nco_hz / self.fs * m as f64).fract();
            let cycles = (per_block * (self.block - 1) as f64).fract();
            let rot = Complex::from_polar(1.0, -2.0 * PI * cycles);
            let z = Complex::new(
                f64::from(p.re + self.acc2.re),
                f64::from(p.im + self.acc2.im),
            );
            z * rot
        });
        self.prev1 = Some(self.acc1);
        self.acc1 = Complex::default();
        self.acc2 = Complex::default();
        self.pos = 0;
        self.block += 1;
        y
    }
}

impl FirstStage<Dup> {
    /// [`FirstStage::push`] over CS16 samples read as they are (v/32768 each, the same
    /// sums to the bit as over the converted samples), where this CPU has a kernel for
    /// it; `None` (nothing taken) where it has not.
    #[inline]
    pub(crate) fn push_cs16(
        &mut self,
        x: &[Complex<i16>],
    ) -> Option<(usize, Option<Complex<f64>>)> {
        let take = (self.tables.len() - self.pos).min(x.len());
        let sums = mac2_dup_cs16(&x[..take], &self.tables.t1, &self.tables.t2, self.pos)?;
        Some((take, self.add(take, sums)))
    }
}
