//! The hop plan: what a sweep asks for ([`SweepConfig`], checked field by field) and
//! how it tiles the band at the actual sample rate ([`HopPlan`]). The limits are the
//! interlock's (`sweep_grid`, `MAX_SWEEP_*`), shared with the policy check.
use crate::Error;
use rxnode_interlock::{sweep_grid, SweepGrid, FFT_SIZE_MAX, MAX_SWEEP_HOPS, MAX_SWEEP_VALUES};
use serde::{Deserialize, Serialize};

/// What a sweep asks for (the radio's rate and gain are set by the caller).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Lowest frequency of the band, Hz.
    pub start_hz: f64,
    /// Highest frequency of the band, Hz.
    pub stop_hz: f64,
    /// Widest acceptable bin, Hz.
    pub bin_hz: f64,
    /// Sample rate, S/s (the actual rate read back is used for the grid).
    pub sample_rate_hz: f64,
    /// Samples kept per hop, seconds (at least one FFT).
    pub dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    pub settle_s: f64,
    /// Fraction of each hop's band thrown away (half at each edge), 0 ≤ crop < 1.
    pub crop: f64,
    /// How many times the whole band is swept.
    pub repeats: u32,
}

impl SweepConfig {
    /// Check every field; the error names the field and value.
    pub fn validate(&self) -> Result<(), Error> {
        let bad =
            |field: &'static str, detail: String| Err(Error::InvalidSetting { field, detail });
        for (field, v) in [
            ("start_hz", self.start_hz),
            ("stop_hz", self.stop_hz),
            ("bin_hz", self.bin_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("dwell_s", self.dwell_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return bad(field, format!("{v} must be a positive finite number"));
            }
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            return bad("settle_s", format!("{} must be ≥ 0", self.settle_s));
        }
        if self.stop_hz <= self.start_hz {
            return bad(
                "stop_hz",
                format!("{} must be above start_hz {}", self.stop_hz, self.start_hz),
            );
        }
        if !(self.crop.is_finite() && (0.0..0.95).contains(&self.crop)) {
            return bad("crop", format!("{} must be in [0, 0.95)", self.crop));
        }
        if self.repeats == 0 {
            return bad("repeats", "0 must be at least 1".into());
        }
        if self.bin_hz > self.sample_rate_hz / 16.0 {
            return bad(
                "bin_hz",
                format!(
                    "{} is wider than sample_rate_hz / 16 ({})",
                    self.bin_hz,
                    self.sample_rate_hz / 16.0
                ),
            );
        }
        if self.sample_rate_hz / self.bin_hz > FFT_SIZE_MAX as f64 {
            return bad(
                "bin_hz",
                format!(
                    "{} needs an FFT over {FFT_SIZE_MAX} points at {} S/s",
                    self.bin_hz, self.sample_rate_hz
                ),
            );
        }
        Ok(())
    }
}

/// The hop plan at one sample rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopPlan {
    /// FFT size per hop.
    pub fft_size: usize,
    /// Bin width, Hz (rate / fft_size).
    pub bin_hz: f64,
    /// Bins kept per hop.
    pub kept_bins: usize,
    /// Bins of the whole stitched band.
    pub total_bins: usize,
    /// Requested centre of every hop, Hz.
    pub centers_hz: Vec<f64>,
    /// Samples discarded after each retune.
    pub settle_samples: u64,
    /// Samples analysed per hop.
    pub dwell_samples: u64,
}

impl HopPlan {
    /// Plan the hops of `cfg` at `rate` (the actual sample rate).
    pub fn new(cfg: &SweepConfig, rate: f64) -> Result<HopPlan, Error> {
        cfg.validate()?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(Error::InvalidSetting {
                field: "sample_rate_hz",
                detail: format!("actual rate {rate} is not positive"),
            });
        }
        let SweepGrid {
            fft_size,
            kept_bins: kept,
            total_bins,
            hops,
        } = sweep_grid(cfg.start_hz, cfg.stop_hz, cfg.bin_hz, rate, cfg.crop).ok_or_else(|| {
            Error::InvalidSetting {
                field: "bin_hz",
                detail: format!(
                    "no usable hop plan for {} Hz bins at {rate} S/s",
                    cfg.bin_hz
                ),
            }
        })?;
        let bin_hz = rate / fft_size as f64;
        if (total_bins as u64).saturating_mul(u64::from(cfg.repeats)) > MAX_SWEEP_VALUES {
            return Err(Error::InvalidSetting {
                field: "bin_hz",
                detail: format!(
                    "{total_bins} bins × {} repeats is more than {MAX_SWEEP_VALUES} values",
                    cfg.repeats
                ),
            });
        }
        if (hops as u64).saturating_mul(u64::from(cfg.repeats)) > MAX_SWEEP_HOPS {
            return Err(Error::InvalidSetting {
                field: "stop_hz",
                detail: format!(
                    "{hops} hops × {} repeats is more than {MAX_SWEEP_HOPS}",
                    cfg.repeats
                ),
            });
        }
        let centers_hz = (0..hops)
            .map(|h| cfg.start_hz + ((h * kept) as f64 + (kept / 2) as f64) * bin_hz)
            .collect();
        Ok(HopPlan {
            fft_size,
            bin_hz,
            kept_bins: kept,
            total_bins,
            centers_hz,
            settle_samples: (cfg.settle_s * rate).ceil() as u64,
            dwell_samples: ((cfg.dwell_s * rate).ceil() as u64).max(fft_size as u64),
        })
    }

    /// Grid bins `[first, end)` hop `h` keeps.
    pub fn hop_bins(&self, h: usize) -> (usize, usize) {
        let first = h * self.kept_bins;
        (first, (first + self.kept_bins).min(self.total_bins))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> SweepConfig {
        SweepConfig {
            start_hz: 88e6,
            stop_hz: 108e6,
            bin_hz: 10e3,
            sample_rate_hz: 10e6,
            dwell_s: 0.005,
            settle_s: 0.001,
            crop: 0.25,
            repeats: 1,
        }
    }

    #[test]
    fn hops_tile_the_band_without_gap_or_overlap() {
        let p = HopPlan::new(&cfg(), 10e6).unwrap();
        // 10 MS/s / 10 kHz: exactly the bin asked, from a 1000-point FFT.
        assert_eq!(p.fft_size, 1000);
        assert_eq!(p.kept_bins, 750);
        assert_eq!(p.bin_hz, 10e3);
        // Consecutive hops: the next starts where the previous ended.
        let mut next = 0;
        for h in 0..p.centers_hz.len() {
            let (a, b) = p.hop_bins(h);
            assert_eq!(a, next);
            assert!(b > a);
            next = b;
            // The kept bins lie inside the hop's band with the crop on both sides.
            let lo = 88e6 + a as f64 * p.bin_hz;
            let hi = 88e6 + (b - 1) as f64 * p.bin_hz;
            assert!(lo >= p.centers_hz[h] - 0.375 * 10e6 - 1e-3, "hop {h}");
            assert!(hi <= p.centers_hz[h] + 0.375 * 10e6, "hop {h}");
        }
        assert_eq!(next, p.total_bins);
        assert!(88e6 + (p.total_bins - 1) as f64 * p.bin_hz >= 108e6 - p.bin_hz);
        assert_eq!(p.centers_hz.len(), p.total_bins.div_ceil(750));
        // The fewest hops: 20 MHz in 7.5 MHz hops.
        assert_eq!(p.centers_hz.len(), 3);
        assert_eq!(p.settle_samples, 10_000);
        assert_eq!(p.dwell_samples, 50_000);
    }

    #[test]
    fn bad_configs_name_their_field() {
        type Edit = Box<dyn Fn(&mut SweepConfig)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("stop_hz", Box::new(|c| c.stop_hz = 80e6)),
            ("bin_hz", Box::new(|c| c.bin_hz = 0.0)),
            ("bin_hz", Box::new(|c| c.bin_hz = 5e6)),
            ("bin_hz", Box::new(|c| c.bin_hz = 1.0)),
            ("crop", Box::new(|c| c.crop = 1.0)),
            ("crop", Box::new(|c| c.crop = f64::NAN)),
            ("settle_s", Box::new(|c| c.settle_s = -1.0)),
            ("dwell_s", Box::new(|c| c.dwell_s = f64::INFINITY)),
            ("repeats", Box::new(|c| c.repeats = 0)),
        ];
        for (field, edit) in cases {
            let mut c = cfg();
            edit(&mut c);
            match HopPlan::new(&c, 10e6) {
                Err(Error::InvalidSetting { field: f, .. }) => assert_eq!(f, field),
                o => panic!("{field}: {o:?}"),
            }
        }
        let mut c = cfg();
        c.start_hz = 1e6;
        c.stop_hz = 6e12;
        c.bin_hz = 1e3;
        c.sample_rate_hz = 1e6;
        assert!(HopPlan::new(&c, 1e6).is_err(), "too many hops");
    }
}
