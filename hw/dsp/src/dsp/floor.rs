//! Where a spectrum's noise floor can be read: the median bin is the mean noise power
//! per bin only where the noise is the same across the bins it is taken over
//! (docs/operator.md#peaks-and-the-noise-floor).
//!
//! A receiver's filter narrower than the sample rate (a radio's bandwidth set below
//! the rate, a decimating front end's roll-off, a recording filtered before it was
//! saved) leaves the band's edges below its middle. Once the edges hold more than half
//! of the bins the median lies in them, many dB below the noise of the passband, and
//! that noise then stands above the threshold as one wide "emission". Signals only add
//! power to the bins they cover, so a part of the band lying well below the median is
//! never a signal: the noise there is not the noise the median stands for.
use super::noise_stats::median_sigma_db;
use super::peaks::{median_db, Emissions};
use super::window::Window;
use std::ops::Range;

/// How many parts the band's noise is compared over (at most).
const PARTS: usize = 32;
/// The fewest bins a part holds; a band of fewer than four such parts is not checked.
const PART_MIN_BINS: usize = 16;
/// How far below the band's median bin a part's median bin must lie, beyond four
/// standard errors of the two medians, to hold noise weaker than the median's: 3 dB,
/// a filter's edge.
pub const UNEVEN_DB: f64 = 3.0;

/// Why a spectrum whose noise is not the same across its band has no noise floor,
/// in words a user reads ([`crate::why_no_floor`]).
pub const NOT_LEVEL: &str =
    "the noise is not the same across the band: part of it lies well below the rest, or a \
     wide emission sits on the tuned frequency (a receive filter narrower than the sample \
     rate and a signal cannot be told apart); give the radio's bandwidth";

/// ` over 99.920000–100.080000 MHz, the receiver's passband` for a floor read over part
/// of the spectrum ([`crate::Spectrum::noise_floor_band_hz`]), else empty: the one way
/// text shows it.
pub fn fmt_floor_band(band_hz: Option<[f64; 2]>) -> String {
    band_hz.map_or_else(String::new, |[lo, hi]| {
        format!(
            " over {:.6}–{:.6} MHz, the receiver's passband",
            lo / 1e6,
            hi / 1e6
        )
    })
}

/// Where the noise floor of a spectrum was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FloorSite {
    /// The noise is level over `bins`: its median bin there is `median_db`.
    Level {
        /// The bins the floor was read over.
        bins: Range<usize>,
        /// Their median bin, dB (not yet corrected to the mean).
        median_db: f64,
    },
    /// The noise is not the same across the band: no floor. Peaks stand above the
    /// highest part's median bin (`upper_db`), a level noise alone does not exceed.
    Uneven {
        /// The highest part's median bin, dB.
        upper_db: f64,
    },
    /// The median bin has no level (no power, or below the arithmetic's resolution).
    NoLevel,
}

/// Where the floor of `db` can be read over `searched` (the radio's passband when
/// known, else every bin), each bin the mean of `shape` independent averages.
/// `edges`: parts of low noise at the ends of `searched`, a quarter of it at most,
/// are a filter's roll-off (a spectrum around one tuned frequency), and the floor is
/// read between them; more than that could as well be a signal filling the middle,
/// and without `edges` (a sweep's band, a known passband) any low part leaves the
/// band without a floor.
pub(crate) fn floor_site(db: &[f32], searched: Range<usize>, shape: f64, edges: bool) -> FloorSite {
    // Edges may be taken off up to a quarter of the band, a few parts at a time: a
    // roll-off's inner parts lie below the median only once its outer ones are off.
    let most = if edges { searched.len() / 4 } else { 0 };
    let mut range = searched.clone();
    loop {
        match level_over(db, range.clone(), shape) {
            Ok(median_db) => {
                return FloorSite::Level {
                    bins: range,
                    median_db,
                }
            }
            Err(Some(inner))
                if searched.len() - inner.len() <= most && inner.len() < range.len() =>
            {
                range = inner;
            }
            Err(_) => {
                return match db.get(searched.clone()).map(median_db) {
                    Some(m) if m.is_finite() => FloorSite::Uneven {
                        upper_db: upper_level(db, searched),
                    },
                    _ => FloorSite::NoLevel,
                }
            }
        }
    }
}

/// The median bin of `range` when no part of it lies well below it (`Ok`); else
/// `Err` with the bins between its low parts when they all lie at its ends
/// (`None`: a low part in the middle, or a median without a level).
fn level_over(db: &[f32], range: Range<usize>, shape: f64) -> Result<f64, Option<Range<usize>>> {
    let median = db.get(range.clone()).map_or(f64::NEG_INFINITY, median_db);
    if !median.is_finite() {
        return Err(None);
    }
    let parts = parts_of(range.clone());
    if parts.len() < 4 {
        return Ok(median);
    }
    let levels = part_levels(db, &parts);
    let sigma = median_sigma_db(shape, parts[0].len()).hypot(median_sigma_db(shape, range.len()));
    let low_at = median - (UNEVEN_DB + 4.0 * sigma);
    let low: Vec<bool> = levels.iter().map(|&l| l < low_at).collect();
    if !low.contains(&true) {
        return Ok(median);
    }
    let first = low.iter().take_while(|&&l| l).count();
    let last = low.iter().rev().take_while(|&&l| l).count();
    if first + last >= parts.len() || low[first..parts.len() - last].contains(&true) {
        return Err(None);
    }
    Err(Some(parts[first].start..parts[parts.len() - 1 - last].end))
}

/// The median bin of each part.
fn part_levels(db: &[f32], parts: &[Range<usize>]) -> Vec<f64> {
    parts
        .iter()
        .map(|p| db.get(p.clone()).map_or(f64::NEG_INFINITY, median_db))
        .collect()
}

/// The highest median bin of the parts of `range` ([`floor_site`]'s parts; the median
/// of `range` when it is too short to part), dB: a level the noise of no part
/// exceeds, for peaks to stand above when there is no floor.
pub(crate) fn upper_level(db: &[f32], range: Range<usize>) -> f64 {
    let parts = parts_of(range.clone());
    if parts.len() < 4 {
        return db.get(range).map_or(f64::NEG_INFINITY, median_db);
    }
    part_levels(db, &parts)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max)
}

/// `range` cut into at most [`PARTS`] equal parts of at least [`PART_MIN_BINS`] bins
/// (the remainder spread over the first ones), in order.
fn parts_of(range: Range<usize>) -> Vec<Range<usize>> {
    let n = range.len();
    let count = (n / PART_MIN_BINS).min(PARTS);
    if count == 0 {
        return Vec::new();
    }
    let (base, extra) = (n / count, n % count);
    let mut out = Vec::with_capacity(count);
    let mut at = range.start;
    for k in 0..count {
        let len = base + usize::from(k < extra);
        out.push(at..at + len);
        at += len;
    }
    out
}

/// Whether the emission over the centre bin `dc` of `db` is a wide plateau centred on
/// it: a run wider than one tone could make ([`Emissions::wide`]), its middle within
/// 5 % of its width (or two main lobes) of the centre, and the middle half of its bins
/// as level as noise of `shape` averages is (their quartiles no more than 3 dB further
/// apart than noise's). That is what a receive filter narrower than the sample rate
/// makes of the radio's own noise — and what a signal tuned to the centre makes too.
pub(crate) fn centred_plateau(
    db: &[f32],
    dc: usize,
    emissions: &Emissions,
    window: Window,
    shape: f64,
) -> bool {
    let Some(run) = emissions.run_at(dc) else {
        return false;
    };
    // A run reaching an end of the bins goes on beyond them: no edge of a passband in
    // them (a sweep hop's kept bins inside its radio's passband).
    if run.start == 0 || run.end >= db.len() {
        return false;
    }
    let Some((peak, p)) = run
        .clone()
        .filter_map(|i| db.get(i).map(|&v| (i, v)))
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return false;
    };
    if emissions.wide(peak, p, window).is_none() {
        return false;
    }
    let width = run.len() as f64;
    let middle = (run.start + run.end - 1) as f64 / 2.0;
    let off = (middle - dc as f64).abs();
    if off > (0.05 * width).max(2.0 * window.main_lobe_bins() as f64) {
        return false;
    }
    let quarter = run.len() / 4;
    let mut mid: Vec<f32> = db
        .get(run.start + quarter..run.end - quarter)
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if mid.len() < 4 {
        return false;
    }
    mid.sort_by(f32::total_cmp);
    let q = |f: f64| f64::from(mid[((mid.len() - 1) as f64 * f).round() as usize]);
    let spread = q(0.75) - q(0.25);
    super::noise_stats::quartile_spread_db(shape).is_some_and(|noise| spread <= noise + 3.0)
}

/// Whether the noise of a sweep hop's kept bins `kept` of its spectrum `db` (each bin
/// the mean of `shape` independent averages) is level: no part of them lies well
/// below the rest, and no wide level emission is centred on the hop's centre and ends
/// inside them (the radio's passband narrower than the kept bins). Kept bins without
/// a level (noiseless samples) are not judged (`true`).
pub(crate) fn kept_level(db: &[f32], kept: Range<usize>, shape: f64) -> bool {
    let Some(bins) = db.get(kept) else {
        return true;
    };
    match floor_site(bins, 0..bins.len(), shape, false) {
        FloorSite::Level { median_db, .. } => {
            let Some(levels) = super::noise_stats::NoiseLevels::new(shape, bins.len()) else {
                return true;
            };
            let level = median_db + levels.floor_correction_db + levels.threshold_db(6.0);
            let e = Emissions::of(bins, level as f32, Window::Hann, 0);
            !centred_plateau(bins, bins.len() / 2, &e, Window::Hann, shape)
        }
        FloorSite::Uneven { .. } => false,
        FloorSite::NoLevel => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Noise-like bins around `level` dB: a fixed ripple of ±`ripple` dB.
    fn noise(n: usize, level: f32, ripple: f32) -> Vec<f32> {
        (0..n)
            .map(|i| level + ripple * (((i * 7919) % 13) as f32 / 6.0 - 1.0))
            .collect()
    }

    /// A band whose noise is level has its floor over every bin; a band whose edges
    /// (a filter's roll-off, a quarter of it) lie 20 dB down has it between them; a
    /// band with a low part in its middle, with low edges in a sweep, or with edges
    /// holding more than a quarter of it (a centred signal as wide would look the
    /// same) has none.
    #[test]
    fn the_floor_is_read_where_the_noise_is_level() {
        let flat = noise(1024, -90.0, 0.5);
        assert!(matches!(
            floor_site(&flat, 0..1024, 100.0, true),
            FloorSite::Level { bins, .. } if bins == (0..1024)
        ));
        let mut edged = flat.clone();
        for (i, v) in edged.iter_mut().enumerate() {
            if !(128..896).contains(&i) {
                *v -= 20.0;
            }
        }
        match floor_site(&edged, 0..1024, 100.0, true) {
            FloorSite::Level { bins, median_db } => {
                assert_eq!(bins, 128..896);
                assert!((median_db + 90.0).abs() < 0.6, "{median_db}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            floor_site(&edged, 0..1024, 100.0, false),
            FloorSite::Uneven { upper_db } if (upper_db + 90.0).abs() < 0.6
        ));
        let mut wide = flat.clone();
        for (i, v) in wide.iter_mut().enumerate() {
            if !(192..832).contains(&i) {
                *v -= 20.0;
            }
        }
        assert!(matches!(
            floor_site(&wide, 0..1024, 100.0, true),
            FloorSite::Uneven { .. }
        ));
        let mut hole = flat;
        for v in &mut hole[448..576] {
            *v -= 20.0;
        }
        assert!(matches!(
            floor_site(&hole, 0..1024, 100.0, true),
            FloorSite::Uneven { .. }
        ));
    }

    /// Pure noise is level: no spectrum of it, at 1, 2 or 10 averages, loses its
    /// floor or its kept bins' judgement (500 spectra each, 1024 bins).
    #[test]
    fn noise_alone_is_always_level() {
        use crate::dsp::welch::tests::Noise;
        use crate::{Welch, WelchConfig};
        use num_complex::Complex;
        let n = 1024;
        for k in [1usize, 2, 10] {
            for seed in 0..500u64 {
                let mut g = Noise::new(seed * 104_729 + 3);
                let x: Vec<Complex<f32>> = (0..n / 2 * (k + 1))
                    .map(|_| {
                        let v = g.complex(0.1);
                        Complex::new(v.re as f32, v.im as f32)
                    })
                    .collect();
                let mut w = Welch::new(WelchConfig::new(n, 1e6)).unwrap();
                w.feed(&x);
                let s = w.finish();
                assert!(s.noise_floor_db.is_some(), "{k} averages, seed {seed}");
                assert_eq!(s.noise_floor_band_hz, None, "{k} averages, seed {seed}");
                let kept = n / 4..3 * n / 4;
                assert!(
                    kept_level(&s.psd_db, kept, s.equivalent_averages),
                    "{k} averages, seed {seed}"
                );
            }
        }
    }
}
