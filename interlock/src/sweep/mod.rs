//! A sweep's values from the plan step or the operator's flags to the hop
//! planner ([`SweepConfig`], its one validator), and the sweep grid. The
//! `rx_sweep` plan op is `plan/ops/rx_sweep.rs`; a gain is `gain.rs`.
use serde::{Deserialize, Serialize};

mod gain;

pub use gain::{check_rx_gain, GainSpec};

/// What a sweep asks for, from the plan step (or the operator's flags) to the hop
/// planner: the band, the bin, the sample rate, the time per hop, the crop and the
/// passes. Its one validator is [`SweepConfig::problems`]; the defaults are the
/// `DEFAULT_*` constants (docs/operator.md#sweeps-rxnode-sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Lowest frequency of the band, Hz.
    pub start_hz: f64,
    /// Highest frequency of the band, Hz.
    pub stop_hz: f64,
    /// Widest acceptable bin, Hz.
    pub bin_hz: f64,
    /// Sample rate per hop, S/s (the hop plan uses the rate the radio really set).
    pub sample_rate_hz: f64,
    /// Samples analysed per hop, seconds (at least one FFT is analysed).
    pub dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge), 0 ≤ crop < 0.95.
    pub crop: f64,
    /// Passes over the band, 1..=[`SweepConfig::MAX_REPEATS`].
    pub repeats: u32,
    /// Seconds from one pass's start to the next's (rtl_power's `-i`): the radio
    /// idles, its stream stopped, between passes. `None`: the passes follow each
    /// other at once. A pass longer than the interval starts the next at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
}

/// One problem with a sweep's values: the field, and a message naming it and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepProblem {
    /// The field (`repeats`, `bin_hz`, …).
    pub field: &'static str,
    /// What is wrong, naming the field and its value.
    pub message: String,
}

impl std::fmt::Display for SweepProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl SweepConfig {
    /// Default sample rate per hop, S/s.
    pub const DEFAULT_SAMPLE_RATE_HZ: f64 = 10e6;
    /// Default dwell per hop, seconds.
    pub const DEFAULT_DWELL_S: f64 = 0.05;
    /// Default settle time after each retune, seconds.
    pub const DEFAULT_SETTLE_S: f64 = 0.01;
    /// Default crop.
    pub const DEFAULT_CROP: f64 = 0.25;
    /// Default passes over the band.
    pub const DEFAULT_REPEATS: u32 = 1;
    /// Most passes over the band.
    pub const MAX_REPEATS: u32 = 10_000;
    /// Longest interval between passes, seconds (a day).
    pub const MAX_INTERVAL_S: f64 = 86_400.0;

    /// The band and the bin, every other field at its default.
    pub fn new(start_hz: f64, stop_hz: f64, bin_hz: f64) -> Self {
        SweepConfig {
            start_hz,
            stop_hz,
            bin_hz,
            sample_rate_hz: Self::DEFAULT_SAMPLE_RATE_HZ,
            dwell_s: Self::DEFAULT_DWELL_S,
            settle_s: Self::DEFAULT_SETTLE_S,
            crop: Self::DEFAULT_CROP,
            repeats: Self::DEFAULT_REPEATS,
            interval_s: None,
        }
    }

    /// The frequency grid at `rate` (the requested rate, or the one the radio set);
    /// `None` when the numbers are unusable.
    pub fn grid_at(&self, rate: f64) -> Option<SweepGrid> {
        sweep_grid(self.start_hz, self.stop_hz, self.bin_hz, rate, self.crop)
    }

    /// Hops per pass at the requested rate (`None` when the numbers are unusable).
    pub fn hops(&self) -> Option<usize> {
        self.grid_at(self.sample_rate_hz).map(|g| g.hops)
    }

    /// One pass on the radio: hops × (settle + dwell), seconds. The dwell counted
    /// is what the radio really runs: at least one FFT (a dwell asked shorter than
    /// `fft / rate` cannot make the policy under-count).
    pub fn pass_s(&self) -> Option<f64> {
        let g = self.grid_at(self.sample_rate_hz)?;
        let dwell = self.dwell_s.max(g.fft_size as f64 / self.sample_rate_hz);
        Some(g.hops as f64 * (self.settle_s + dwell))
    }

    /// Total time of the sweep, seconds: pass × repeats, or with an interval
    /// (repeats − 1) × max(interval, pass) + pass, the wall time from the first
    /// pass's start to the last one's end.
    pub fn duration_s(&self) -> Option<f64> {
        let pass = self.pass_s()?;
        let n = f64::from(self.repeats);
        Some(match self.interval_s {
            Some(i) if i.is_finite() => (n - 1.0).max(0.0) * i.max(pass) + pass,
            _ => pass * n,
        })
    }

    /// Every problem with the values, each naming its field and value: each value on
    /// its own, the bin against the rate, and the whole sweep's size at the
    /// requested rate. The one validator of a sweep, for the plan, the command and
    /// the hop planner.
    pub fn problems(&self) -> Vec<SweepProblem> {
        let mut out = Vec::new();
        self.value_problems(&mut out);
        self.resolution_problems(&mut out);
        out.extend(self.size_problems_at(self.sample_rate_hz));
        out
    }

    /// The first of [`SweepConfig::problems`], if any.
    pub fn validate(&self) -> Result<(), SweepProblem> {
        match self.problems().into_iter().next() {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }

    /// Each value on its own: positive, finite, in range.
    fn value_problems(&self, out: &mut Vec<SweepProblem>) {
        let mut bad = |field: &'static str, message: String| {
            out.push(SweepProblem { field, message });
        };
        for (field, v) in [
            ("start_hz", self.start_hz),
            ("stop_hz", self.stop_hz),
            ("bin_hz", self.bin_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("dwell_s", self.dwell_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bad(
                    field,
                    format!(
                        "{field} must be a positive finite number, got {}",
                        crate::compact(v)
                    ),
                );
            }
        }
        for (field, v, q) in [
            ("start_hz", self.start_hz, crate::Quantity::Frequency),
            ("stop_hz", self.stop_hz, crate::Quantity::Frequency),
            (
                "sample_rate_hz",
                self.sample_rate_hz,
                crate::Quantity::SampleRate,
            ),
        ] {
            if let Some(why) = q.implausible(v) {
                bad(field, format!("{field} {why}"));
            }
        }
        for (field, v) in [("dwell_s", self.dwell_s), ("settle_s", self.settle_s)] {
            if let Some(why) = crate::Quantity::Duration.implausible(v) {
                bad(field, format!("{field} {why}"));
            }
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            bad(
                "settle_s",
                format!(
                    "settle_s must be a finite number ≥ 0, got {}",
                    self.settle_s
                ),
            );
        }
        if self.start_hz.is_finite() && self.stop_hz.is_finite() && self.stop_hz <= self.start_hz {
            bad(
                "stop_hz",
                format!(
                    "stop_hz {} must be above start_hz {}",
                    self.stop_hz, self.start_hz
                ),
            );
        }
        if !(self.crop.is_finite() && (0.0..0.95).contains(&self.crop)) {
            bad(
                "crop",
                format!("crop {} must be in [0, 0.95)", crate::compact(self.crop)),
            );
        }
        if let Some(i) = self.interval_s {
            if !(i.is_finite() && i > 0.0 && i <= Self::MAX_INTERVAL_S) {
                bad(
                    "interval_s",
                    format!(
                        "interval_s {} must be a finite number in (0, {}]",
                        crate::compact(i),
                        Self::MAX_INTERVAL_S
                    ),
                );
            }
        }
        if self.repeats == 0 || self.repeats > Self::MAX_REPEATS {
            bad(
                "repeats",
                format!(
                    "repeats {} must be in 1..={}",
                    self.repeats,
                    Self::MAX_REPEATS
                ),
            );
        }
    }

    /// The bin against the sample rate: at least 16 bins per hop, an FFT of at
    /// most 2²⁰ points.
    fn resolution_problems(&self, out: &mut Vec<SweepProblem>) {
        if self.bin_hz.is_finite()
            && self.sample_rate_hz.is_finite()
            && self.sample_rate_hz > 0.0
            && self.bin_hz > 0.0
        {
            if self.bin_hz > self.sample_rate_hz / 16.0 {
                out.push(SweepProblem {
                    field: "bin_hz",
                    message: format!(
                        "bin_hz {} is wider than sample_rate_hz / 16 ({})",
                        crate::compact(self.bin_hz),
                        crate::compact(self.sample_rate_hz / 16.0)
                    ),
                });
            } else if self.sample_rate_hz / self.bin_hz > FFT_SIZE_MAX as f64 {
                out.push(SweepProblem {
                    field: "bin_hz",
                    message: format!(
                        "bin_hz {} needs an FFT over {FFT_SIZE_MAX} points at {} S/s",
                        crate::compact(self.bin_hz),
                        crate::compact(self.sample_rate_hz)
                    ),
                });
            }
        }
    }

    /// The whole sweep at `rate`: values kept and hops, times the repeats, within
    /// bounds. The hop planner asks again at the rate the radio really set.
    pub fn size_problems_at(&self, rate: f64) -> Vec<SweepProblem> {
        let mut out = Vec::new();
        let Some(g) = self.grid_at(rate) else {
            return out;
        };
        if (g.total_bins as u64).saturating_mul(u64::from(self.repeats)) > MAX_SWEEP_VALUES {
            out.push(SweepProblem {
                field: "bin_hz",
                message: format!(
                    "{} bins × {} repeats is more than {MAX_SWEEP_VALUES} values (widen bin_hz, narrow the band or sweep fewer times)",
                    g.total_bins, self.repeats
                ),
            });
        }
        if (g.hops as u64).saturating_mul(u64::from(self.repeats)) > MAX_SWEEP_HOPS {
            out.push(SweepProblem {
                field: "stop_hz",
                message: format!(
                    "{} hops × {} repeats is more than {MAX_SWEEP_HOPS}",
                    g.hops, self.repeats
                ),
            });
        }
        out
    }
}

/// Fewest FFT points any capture, analysis or sweep uses.
pub const FFT_SIZE_MIN: usize = 16;
/// Most FFT points any capture, analysis or sweep uses (2²⁰).
pub const FFT_SIZE_MAX: usize = 1 << 20;

/// Whether `n` is an FFT size rxnode runs: any size in
/// [`FFT_SIZE_MIN`]`..=`[`FFT_SIZE_MAX`] (powers of two take the SIMD kernels, other
/// sizes the portable FFT).
pub fn fft_size_ok(n: usize) -> bool {
    (FFT_SIZE_MIN..=FFT_SIZE_MAX).contains(&n)
}

/// A sweep's frequency grid at one sample rate. Grid bin `i` is centred at
/// `start_hz + i · bin`, `bin = rate / fft_size`; hop `h` keeps grid bins
/// `h·kept_bins .. (h+1)·kept_bins`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepGrid {
    /// FFT points per hop.
    pub fft_size: usize,
    /// Grid bins each hop keeps: the centre `1 − crop` of its band (an even number).
    pub kept_bins: usize,
    /// Bins of the whole grid, `[start, stop)`.
    pub total_bins: usize,
    /// Hops per pass: ⌈total_bins / kept_bins⌉.
    pub hops: usize,
}

/// `x` as the integer it is within rounding (`rate / bin` of `10e6 / 10e3`), else `None`.
fn near_integer(x: f64) -> Option<f64> {
    let r = x.round();
    ((x - r).abs() <= 1e-9 * x.abs().max(1.0)).then_some(r)
}

/// The sweep grid at one sample rate. The bin is exactly `bin_hz` whenever
/// `rate / bin_hz` is an integer (an FFT of that many points, whatever its
/// factors); otherwise the FFT is the next size up, so the bin is the widest no
/// wider than asked. The grid has ⌈band / bin⌉ bins, so a pass takes the fewest
/// hops, ⌈band / (rate × (1 − crop))⌉ up to the even rounding of the kept bins.
/// `None` when the inputs are not usable numbers (see [`crate::validate_sweep_step`]).
pub fn sweep_grid(
    start_hz: f64,
    stop_hz: f64,
    bin_hz: f64,
    rate: f64,
    crop: f64,
) -> Option<SweepGrid> {
    let ok = [start_hz, stop_hz, bin_hz, rate]
        .iter()
        .all(|v| v.is_finite() && *v > 0.0)
        && stop_hz > start_hz
        && crop.is_finite()
        && (0.0..0.95).contains(&crop)
        && rate / bin_hz <= FFT_SIZE_MAX as f64;
    if !ok {
        return None;
    }
    let ratio = rate / bin_hz;
    let fft = near_integer(ratio)
        .unwrap_or_else(|| ratio.ceil())
        .max(FFT_SIZE_MIN as f64) as usize;
    let fft = fft.min(FFT_SIZE_MAX);
    let bin = rate / fft as f64;
    let mut kept = ((fft as f64) * (1.0 - crop)).floor() as usize;
    kept -= kept % 2;
    let kept = kept.max(2);
    let bins = (stop_hz - start_hz) / bin;
    let total = near_integer(bins).unwrap_or_else(|| bins.ceil()).max(1.0);
    if total > 1e12 {
        return None;
    }
    let total = total as usize;
    Some(SweepGrid {
        fft_size: fft,
        kept_bins: kept,
        total_bins: total,
        hops: total.div_ceil(kept),
    })
}

/// Most hops × repeats a sweep may ask for.
pub const MAX_SWEEP_HOPS: u64 = 1_000_000;

/// Most bins × repeats a sweep may measure (each is kept for the CSV): 2²⁴, e.g.
/// 70 MHz–6 GHz at 10 kHz bins 27 times. Bounds the memory a plan can make us use.
pub const MAX_SWEEP_VALUES: u64 = 1 << 24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bin_and_fewest_hops() {
        for (start, stop, bin, rate, crop, fft, hops) in [
            (420e6, 480e6, 10e3, 10e6, 0.25, 1000, 8),
            (88e6, 108e6, 1e3, 2.4e6, 0.25, 2400, 12),
            (100e6, 101e6, 1e3, 2.048e6, 0.0, 2048, 1),
            (1e9, 2e9, 100e3, 20e6, 0.25, 200, 67),
        ] {
            let g = sweep_grid(start, stop, bin, rate, crop).unwrap();
            assert_eq!(g.fft_size, fft, "{start}..{stop} at {bin} Hz, {rate} S/s");
            assert!(((rate / g.fft_size as f64) - bin).abs() < 1e-9 * bin);
            let fewest = ((stop - start) / (rate * (1.0 - crop))).ceil() as usize;
            assert_eq!(g.hops, hops);
            assert_eq!(g.hops, fewest, "{start}..{stop}");
        }
        // Not an integer ratio: the next size up, so the bin is no wider than asked.
        let g = sweep_grid(88e6, 108e6, 7e3, 2.4e6, 0.25).unwrap();
        assert_eq!(g.fft_size, 343);
        assert!(2.4e6 / g.fft_size as f64 <= 7e3);
        assert!(fft_size_ok(1000) && fft_size_ok(16) && !fft_size_ok(15));
        assert!(fft_size_ok(1 << 20) && !fft_size_ok((1 << 20) + 1));
    }
}
