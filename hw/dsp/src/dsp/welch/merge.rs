//! One stream's Welch estimate made by several estimators and added back together.
//!
//! Welch's sums are additive: Σ|X|² per bin, the segment count, the sample count,
//! Σ|x|² and the clipped count of a stream are the sums of those of its parts. So
//! the stream can be cut into blocks, each block's segments handled by any of
//! several estimators, and their estimates merged ([`Welch::merge`]) into the one a
//! single estimator fed the whole stream would have made — the same segments, the
//! same samples; only the order in which the f32 and f64 sums were added differs
//! (a relative difference of the order of f32 rounding, far below 0.01 dB).
//!
//! A segment that starts in one block and ends in the next belongs to the
//! estimator of the block it ends in: that estimator is first told the samples
//! from the start of that segment on ([`Welch::resume`]), which the estimator of
//! the previous block fed and counted. [`SegmentCarry`] tracks which samples those
//! are as the blocks go by.
use super::Welch;
use crate::error::{Error, Result};

impl Welch {
    /// Add what `other` has averaged to this estimate: its |X|² sums, segments,
    /// samples, power and clipped count, as if this estimator had been fed its
    /// segments too. Both must have the same settings (else `merge` fails, naming
    /// the difference). `other`'s incomplete segment is not carried over.
    ///
    /// ```
    /// use num_complex::Complex;
    /// use rxnode_dsp::{Welch, WelchConfig};
    ///
    /// let cfg = WelchConfig::new(256, 1e6);
    /// let x: Vec<Complex<f32>> = (0..4096)
    ///     .map(|i| Complex::from_polar(0.5, 0.3 * i as f32))
    ///     .collect();
    /// let mut whole = Welch::new(cfg.clone())?;
    /// whole.feed(&x);
    /// // Two estimators: the segments starting at 0 … 1792, then those from 1920
    /// // on (the hop is 128), each fed the samples its segments cover.
    /// let (mut a, mut b) = (Welch::new(cfg.clone())?, Welch::new(cfg)?);
    /// a.feed(&x[..2048]);
    /// b.feed(&x[1920..]);
    /// a.merge(&b)?;
    /// assert_eq!(a.averages(), whole.averages());
    /// let (one, two) = (whole.finish(), a.finish());
    /// for (p, q) in one.psd_db.iter().zip(&two.psd_db) {
    ///     assert!((p - q).abs() < 1e-3);
    /// }
    /// # Ok::<(), rxnode_dsp::Error>(())
    /// ```
    pub fn merge(&mut self, other: &Welch) -> Result<()> {
        if self.cfg != other.cfg {
            return Err(Error::InvalidSetting {
                field: "merge",
                detail: format!(
                    "estimates of different settings cannot be added: {:?} and {:?}",
                    self.cfg, other.cfg
                ),
            });
        }
        other.engine.peek(&mut self.acc64);
        for (a, b) in self.acc64.iter_mut().zip(&other.acc64) {
            *a += b;
        }
        self.averages += other.averages;
        self.samples += other.samples;
        self.power_sum += other.power_sum;
        self.clipped += other.clipped;
        Ok(())
    }

    /// The next block continues a stream whose samples from the start of its next
    /// segment on are `carry` (fewer than `fft_size`; fed and counted by another
    /// estimator, see [`SegmentCarry`]): the segments that start in `carry` are
    /// completed with the next block, exactly as if this estimator had been fed the
    /// stream before it. Replaces any incomplete segment; `carry` is not counted
    /// again. Of a longer `carry` only the last `fft_size − 1` samples are kept.
    pub(crate) fn resume<E: super::WelchSample>(&mut self, carry: &[E]) {
        let keep = carry.len().min(self.cfg.fft_size - 1);
        let carry = &carry[carry.len() - keep..];
        super::to_cf32(carry, &mut self.pending[..keep]);
        self.fill = keep;
    }
}

/// Which samples of a stream cut into blocks belong to segments not yet complete:
/// the `carry` to hand, with the next block, to whichever estimator takes it
/// ([`Welch::resume`]). Segments start every `hop` samples from the start of the
/// stream (or from the last [`SegmentCarry::restart`], a gap), as a single
/// [`Welch`] starts them.
pub(crate) struct SegmentCarry<T> {
    n: u64,
    hop: u64,
    /// Samples since the stream (re)started.
    end: u64,
    /// Where the first segment not yet complete starts.
    next: u64,
    /// The samples `next .. end` (fewer than `n`).
    tail: Vec<T>,
}

impl<T: Copy> SegmentCarry<T> {
    /// For segments of `fft_size` every `hop` samples (`1 ≤ hop ≤ fft_size`).
    pub(crate) fn new(fft_size: usize, hop: usize) -> Self {
        Self {
            n: fft_size as u64,
            hop: hop.clamp(1, fft_size.max(1)) as u64,
            end: 0,
            next: 0,
            tail: Vec::with_capacity(fft_size),
        }
    }

    /// The samples of segments not yet complete, before the next block.
    pub(crate) fn carry(&self) -> &[T] {
        &self.tail
    }

    /// Samples were lost: the next segment starts with the next block (as
    /// [`Welch::break_stream`]).
    pub(crate) fn restart(&mut self) {
        self.end = 0;
        self.next = 0;
        self.tail.clear();
    }

    /// The block `x` follows: complete the segments it completes, keep the
    /// samples of those it starts and does not complete.
    pub(crate) fn advance(&mut self, x: &[T]) {
        self.end += x.len() as u64;
        if self.end >= self.next + self.n {
            let k = (self.end - self.n - self.next) / self.hop + 1;
            self.next += k * self.hop;
        }
        // < n, so within the capacity reserved: never reallocates.
        let keep = (self.end - self.next) as usize;
        if keep <= x.len() {
            self.tail.clear();
            self.tail.extend_from_slice(&x[x.len() - keep..]);
        } else {
            let from_tail = keep - x.len();
            let drop = self.tail.len().saturating_sub(from_tail);
            self.tail.drain(..drop);
            self.tail.extend_from_slice(x);
        }
    }
}

#[cfg(test)]
mod tests;
