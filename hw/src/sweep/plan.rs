//! The hop plan: how a sweep ([`SweepConfig`], the interlock's one sweep type, checked
//! by its one validator) tiles the band at the actual sample rate ([`HopPlan`]). The
//! limits are the interlock's (`sweep_grid`, `MAX_SWEEP_*`), shared with the policy
//! check.
use crate::Error;
use rxnode_interlock::{SweepGrid, SweepProblem};
use serde::{Deserialize, Serialize};

pub use rxnode_interlock::SweepConfig;

/// A sweep value the interlock's validator refused, as this crate's error.
fn invalid(p: SweepProblem) -> Error {
    Error::InvalidSetting {
        field: p.field,
        detail: p.message,
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
        cfg.validate().map_err(invalid)?;
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
        } = cfg.grid_at(rate).ok_or_else(|| Error::InvalidSetting {
            field: "bin_hz",
            detail: format!(
                "no usable hop plan for {} Hz bins at {rate} S/s",
                cfg.bin_hz
            ),
        })?;
        let bin_hz = rate / fft_size as f64;
        // The size again at the rate the radio really set.
        if let Some(p) = cfg.size_problems_at(rate).into_iter().next() {
            return Err(invalid(p));
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
            interval_s: None,
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

    /// The hop planner refuses what the plan's and the command's check refuse: one
    /// validator, so more than 10 000 repeats is refused here too, naming the value.
    #[test]
    fn repeats_over_the_limit_are_refused_by_the_planner_too() {
        let mut c = cfg();
        // 1 MHz: 100 bins × 10 000 repeats is within the values a sweep may keep.
        c.stop_hz = 89e6;
        c.repeats = 10_000;
        assert!(HopPlan::new(&c, 10e6).is_ok());
        c.repeats = 10_001;
        match HopPlan::new(&c, 10e6) {
            Err(Error::InvalidSetting { field, detail }) => {
                assert_eq!(field, "repeats");
                assert_eq!(detail, "repeats 10001 must be in 1..=10000");
            }
            o => panic!("{o:?}"),
        }
    }
}
