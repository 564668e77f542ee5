//! Stitching sweep hops into one spectrum on one frequency grid (docs/operator.md#sweeps-rxnode-sweep).
//!
//! The grid: bin `m` is at `start + m · bin`. A hop kept the grid bins `b0 .. b1`
//! around its requested centre; [`Stitcher::add_hop`] indexes them from the hop's
//! spectrum, shifted by how far the actual centre is from the requested one, and
//! averages every hop that measured a bin in linear power. Missing bins stay empty
//! (never interpolated). The radio side (retune, settle, the hop plan's limits) is
//! in `rxnode-hw`.
use crate::dsp::floor::{floor_site, FloorSite};
use crate::dsp::peaks::tone_between_bins;
use crate::dsp::{find_peaks, median_db, NoiseLevels, Peak, PeakReference, Window};

/// Where one hop sits on the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HopPlacement {
    /// First grid bin the hop keeps.
    pub first_bin: usize,
    /// One past the last grid bin it keeps.
    pub end_bin: usize,
    /// Bins kept per hop (the plan's `kept_bins`).
    pub kept_bins: usize,
    /// The hop's FFT size.
    pub fft_size: usize,
    /// Bin width, Hz.
    pub bin_hz: f64,
    /// The centre the hop was tuned to, Hz.
    pub requested_hz: f64,
    /// The centre the radio reports, Hz.
    pub actual_hz: f64,
}

/// Linear-power averages of the hops measured so far, per grid bin.
#[derive(Debug, Clone, PartialEq)]
pub struct Stitcher {
    sum: Vec<f64>,
    count: Vec<u32>,
    /// Hops judged ([`Stitcher::judge_hop`]) whose kept bins' noise is level, and
    /// those whose is not.
    level_hops: u32,
    uneven_hops: u32,
}

impl Stitcher {
    /// An empty grid of `total_bins` bins.
    pub fn new(total_bins: usize) -> Self {
        Self {
            sum: vec![0.0; total_bins],
            count: vec![0; total_bins],
            level_hops: 0,
            uneven_hops: 0,
        }
    }

    /// Add one hop's spectrum (`psd_db`, FFT order with DC in the middle); returns
    /// the hop's own dB values on its kept bins (NaN where the spectrum has none).
    pub fn add_hop(&mut self, psd_db: &[f32], at: &HopPlacement) -> Vec<f32> {
        // Grid bin m sits at (m − b0 − K/2) bins from the requested
        // centre; index it from the actual centre's spectrum.
        let shift = (at.actual_hz - at.requested_hz) / at.bin_hz;
        let mid = (at.fft_size / 2) as f64;
        let mut db = Vec::with_capacity(at.end_bin.saturating_sub(at.first_bin));
        for m in at.first_bin..at.end_bin {
            let off = (m - at.first_bin) as f64 - (at.kept_bins / 2) as f64;
            let idx = (mid + off - shift).round();
            let v = if idx >= 0.0 && (idx as usize) < psd_db.len() {
                psd_db[idx as usize]
            } else {
                f32::NAN
            };
            db.push(v);
            // A bin without power (−∞) was measured: it adds no power but counts.
            if v.is_finite() || v == f32::NEG_INFINITY {
                if let (Some(s), Some(c)) = (self.sum.get_mut(m), self.count.get_mut(m)) {
                    *s += 10f64.powf(f64::from(v) / 10.0);
                    *c += 1;
                }
            }
        }
        db
    }

    /// Judge whether the noise of a hop's kept bins is level (its spectrum `psd_db`,
    /// placed as [`Stitcher::add_hop`] places it, each bin the mean of `shape`
    /// independent averages): a radio's filter narrower than the kept bins leaves
    /// them low towards their ends and a plateau over the hop's centre, at every hop
    /// alike (docs/operator.md#peaks-and-the-noise-floor).
    pub fn judge_hop(&mut self, psd_db: &[f32], at: &HopPlacement, shape: f64) {
        let shift = ((at.actual_hz - at.requested_hz) / at.bin_hz).round();
        let first = (at.fft_size / 2) as f64 - (at.kept_bins / 2) as f64 - shift;
        let len = at.end_bin.saturating_sub(at.first_bin);
        let kept = if first >= 0.0 {
            let f = first as usize;
            f..(f + len).min(psd_db.len())
        } else {
            0..0
        };
        if crate::dsp::floor::kept_level(psd_db, kept, shape) {
            self.level_hops += 1;
        } else {
            self.uneven_hops += 1;
        }
    }

    /// Whether the hops' noise is level: no more of the judged hops are uneven than
    /// level ([`Stitcher::judge_hop`]); a signal centred on one hop makes that hop
    /// uneven, a filter narrower than the kept bins every hop.
    pub fn noise_level(&self) -> bool {
        self.uneven_hops <= self.level_hops
    }

    /// The fewest hops any measured bin averages (0 when none was measured): a bin
    /// of the stitched spectrum holds at least this many hops' averages.
    pub fn fewest_hops(&self) -> u32 {
        self.count
            .iter()
            .copied()
            .filter(|&c| c > 0)
            .min()
            .unwrap_or(0)
    }

    /// The stitched spectrum, dB per grid bin; `None` where no hop measured, −∞
    /// where every hop that measured the bin found no power there (no level).
    pub fn finish(&self) -> Vec<Option<f32>> {
        self.sum
            .iter()
            .zip(&self.count)
            .map(|(s, &c)| {
                (c > 0).then(|| {
                    if *s > 0.0 {
                        (10.0 * (s / f64::from(c)).log10()) as f32
                    } else {
                        f32::NEG_INFINITY
                    }
                })
            })
            .collect()
    }
}

/// The band's minimum peak SNR, dB (noise alone may require more: [`band_threshold_db`]).
pub const BAND_MIN_SNR_DB: f64 = 10.0;

/// How far above the floor a peak of a stitched band of `bins` measured bins, each
/// of at least `shape` equivalent independent averages, must stand: the larger of
/// [`BAND_MIN_SNR_DB`] and the level noise alone reaches by chance
/// (docs/operator.md#peaks-and-the-noise-floor).
pub fn band_threshold_db(shape: f64, bins: usize) -> f64 {
    NoiseLevels::new(shape, bins).map_or(BAND_MIN_SNR_DB, |l| l.threshold_db(BAND_MIN_SNR_DB))
}

/// Peaks, their −3 dB widths and the noise floor of a stitched spectrum whose bins
/// each hold at least `shape` equivalent independent averages (the hop's
/// [`crate::Spectrum::equivalent_averages`] × [`Stitcher::fewest_hops`]). The floor
/// is the median bin corrected to the mean noise power, where the noise is the same
/// across the band: a part of it lying well below the median leaves the band without
/// a floor, its peaks standing above the highest part's level without an SNR
/// ([`crate::NOT_LEVEL`]); a peak stands
/// [`band_threshold_db`] above it (docs/operator.md#peaks-and-the-noise-floor). A
/// band without a floor (its median bin has no level: the hops' samples carry no
/// noise above the FFT's rounding) still has its peaks, each standing
/// [`BAND_MIN_SNR_DB`] above the spectrum around it, without an SNR
/// (docs/operator.md#levels-without-power). `hops_level`: whether the hops' own
/// noise was level ([`Stitcher::noise_level`]); when not (a radio's filter narrower
/// than each hop's kept bins, the band's median in the dips between its passbands),
/// the band has no floor either.
pub fn band_peaks(
    db: &[Option<f32>],
    start: f64,
    bin: f64,
    shape: f64,
    hops_level: bool,
) -> (Vec<Peak>, Vec<f64>, Option<f64>) {
    // Measured bins, those without power (−∞) among them.
    let valid: Vec<f32> = db.iter().flatten().copied().collect();
    let correction = NoiseLevels::new(shape, valid.len()).map_or(0.0, |l| l.floor_correction_db);
    let (floor, upper) = match floor_site(&valid, 0..valid.len(), shape, false) {
        FloorSite::Level { .. } if !hops_level => (
            None,
            Some(crate::dsp::floor::upper_level(&valid, 0..valid.len()) + correction),
        ),
        FloorSite::Level { median_db, .. } => (Some(median_db + correction), None),
        FloorSite::Uneven { upper_db } => (None, Some(upper_db + correction)),
        FloorSite::NoLevel => (None, None),
    };
    let reference = floor.or(upper);
    // Missing bins read as the floor (or no level) for peak picking only (never reported).
    let fill = reference.map_or(f32::NEG_INFINITY, |f| f as f32);
    let filled: Vec<f32> = db.iter().map(|v| v.unwrap_or(fill)).collect();
    let (above, threshold_db) = match reference {
        Some(f) => (
            PeakReference::Floor(f),
            band_threshold_db(shape, valid.len()),
        ),
        None => (
            PeakReference::Resolution(f64::NEG_INFINITY),
            BAND_MIN_SNR_DB,
        ),
    };
    let found = find_peaks(
        &filled,
        usize::MAX,
        0,
        Window::Hann,
        above,
        threshold_db,
        16,
    );
    let emissions = reference
        .map(|f| crate::dsp::Emissions::of(&filled, (f + threshold_db) as f32, Window::Hann, 0));
    let mut peaks = Vec::new();
    let mut widths = Vec::new();
    for (i, p) in found {
        let half = p - 3.0;
        let mut lo = i;
        while lo > 0 && filled[lo - 1] >= half {
            lo -= 1;
        }
        let mut hi = i;
        while hi + 1 < filled.len() && filled[hi + 1] >= half {
            hi += 1;
        }
        let emission = emissions.as_ref().and_then(|e| e.wide(i, p, Window::Hann));
        // A tone between bins: its place and power, as a capture's (the grid's bins
        // are the hops' own Hann bins); a missing neighbour (read as the floor) or
        // another shape keeps the bin's.
        let measured = |k: Option<usize>| k.and_then(|k| db.get(k)).is_some_and(Option::is_some);
        let (offset, power_db) =
            (emission.is_none() && measured(i.checked_sub(1)) && measured(Some(i + 1)))
                .then(|| tone_between_bins(&filled, i, Window::Hann, floor))
                .flatten()
                .unwrap_or((0.0, f64::from(p)));
        peaks.push(Peak {
            frequency_hz: start + (i as f64 + offset) * bin,
            power_db,
            snr_db: floor.map(|f| power_db - f),
            emission_hz: emission.map(|r| {
                [
                    start + r.start as f64 * bin,
                    start + (r.end - 1) as f64 * bin,
                ]
            }),
            // Each hop has its own centre, and so its own images: not named here.
            image_of_hz: None,
            outside_passband_hz: None,
        });
        widths.push((hi - lo + 1) as f64 * bin);
    }
    (peaks, widths, floor)
}

/// Why a stitched band (`db` as [`band_peaks`] takes it) has no noise floor, in the
/// words a capture uses ([`crate::why_no_floor`]): no bin measured (every hop
/// failed), no bin with power (every sample zero), a median bin with a level (so the
/// noise is not the same across the band, [`crate::NOT_LEVEL`]), or the median bin
/// below the arithmetic's resolution (noiseless samples).
pub fn why_no_band_floor(db: &[Option<f32>]) -> &'static str {
    let mut measured = db.iter().flatten().peekable();
    if measured.peek().is_none() {
        return "no hop measured";
    }
    let valid: Vec<f32> = db.iter().flatten().copied().collect();
    if median_db(&valid).is_finite() {
        return crate::NOT_LEVEL;
    }
    if measured.all(|v| *v == f32::NEG_INFINITY) {
        return crate::why_no_floor(1, None, 0.0);
    }
    crate::why_no_floor(1, Some(0.0), 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A band without a floor says why, as a capture does: nothing measured, no
    /// power at all, or noiseless samples; a band with a floor has none of these.
    #[test]
    fn a_band_without_a_floor_says_why() {
        let why = |db: &[Option<f32>]| {
            let (_, _, floor) = band_peaks(db, 100e6, 1e3, 16.0, true);
            (floor.is_none()).then(|| why_no_band_floor(db))
        };
        assert_eq!(why(&[None; 8]), Some("no hop measured"));
        let zero = [None, Some(f32::NEG_INFINITY), Some(f32::NEG_INFINITY)];
        assert_eq!(why(&zero), Some("no signal: every sample is zero"));
        let mut noiseless = vec![Some(f32::NEG_INFINITY); 9];
        noiseless[4] = Some(-10.0);
        assert_eq!(
            why(&noiseless),
            Some("the samples carry no noise above the FFT's rounding")
        );
        assert_eq!(why(&[Some(-90.0); 9]), None);
    }

    /// A sweep's peak of a tone between bins read its bin's centre and up to 1.42 dB
    /// low (rxsim, 5 kHz bins: a −40 dBFS emitter at 101.2525 MHz read 101.250000 MHz
    /// −41.4 dBFS), where a capture gives the tone's own place and power. A tone on a
    /// hop's edge is the same; one whose neighbour was not measured keeps its bin.
    #[test]
    fn a_sweep_tone_between_bins_has_its_own_frequency_and_power() {
        let noise = 10f64.powf(-90.0 / 10.0);
        for d in [0.5, 0.37, -0.25] {
            let db: Vec<Option<f32>> = (0..200)
                .map(|k| {
                    let tone = 1e-4 * Window::Hann.tone_power(k as f64 - (50.0 + d));
                    Some((10.0 * (tone + noise).log10()) as f32)
                })
                .collect();
            let (p, _, _) = band_peaks(&db, 1e6, 1e3, 1e5, true);
            assert_eq!(p.len(), 1, "{d}: {p:?}");
            let want = 1e6 + (50.0 + d) * 1e3;
            assert!(
                (p[0].frequency_hz - want).abs() < 10.0 && (p[0].power_db + 40.0).abs() < 0.02,
                "{d}: {:?}",
                p[0]
            );
            if d == 0.37 {
                let mut cut = db.clone();
                cut[49] = None;
                let (p, _, _) = band_peaks(&cut, 1e6, 1e3, 1e5, true);
                assert!(
                    p.len() == 1 && p[0].frequency_hz == 1e6 + 50e3,
                    "a missing neighbour: {p:?}"
                );
            }
        }
    }

    #[test]
    fn peaks_widths_and_floor_ignore_missing_bins() {
        let mut db: Vec<Option<f32>> = vec![Some(-90.0); 200];
        db[50] = Some(-30.0);
        db[49] = Some(-31.0);
        db[51] = Some(-40.0);
        for v in &mut db[120..160] {
            *v = None;
        }
        let (p, w, floor) = band_peaks(&db, 1e6, 1e3, 1e5, true);
        // 1e5 averages: the median is the mean to 0.0001 dB.
        assert!(floor.is_some_and(|f| (f + 90.0).abs() < 1e-4), "{floor:?}");
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].frequency_hz, 1e6 + 50e3);
        assert_eq!(w[0], 2e3);
        assert!(band_peaks(&[None, None], 0.0, 1.0, 1.0, true).2.is_none());
    }

    /// A band whose hops each lost their outer parts to the radio's filter (every
    /// hop's kept bins 20 dB down over 40 % of them, the stitched band dipping at every
    /// hop) has no floor, and says why: one number cannot be the noise of both the
    /// hops' passbands and the dips between them. A carrier over the passbands' noise
    /// is still a peak, without SNR.
    #[test]
    fn a_band_whose_noise_dips_between_hops_has_no_floor() {
        let mut db: Vec<Option<f32>> = (0..1024)
            .map(|i| {
                Some(if (i % 128) < 26 || (i % 128) >= 102 {
                    -110.0
                } else {
                    -90.0
                })
            })
            .collect();
        db[300] = Some(-40.0);
        let (p, _, floor) = band_peaks(&db, 0.0, 1e3, 1e3, true);
        assert_eq!(floor, None);
        assert_eq!(why_no_band_floor(&db), crate::NOT_LEVEL);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].frequency_hz, p[0].snr_db), (300e3, None));
    }

    /// Hops whose radio filter is narrower than their kept bins (each hop's noise a
    /// plateau over its centre, 40 dB over the converter's noise around it, the
    /// plateau a third of the kept bins): the stitched band's median lay in the dips
    /// between the plateaus, 40 dB below their noise, and each plateau stood above it
    /// as an emission with a 40 dB "SNR". Every hop is judged uneven, so the band has
    /// no floor, and its plateaus are no peaks; hops of level noise keep the floor.
    #[test]
    fn hops_narrower_than_their_kept_bins_leave_the_band_without_a_floor() {
        let ripple = |i: usize| 0.4 * (((i * 7919) % 13) as f32 / 6.0 - 1.0);
        let hop = |plateau: bool| -> Vec<f32> {
            (0..1024)
                .map(|i| {
                    let inside = !plateau || (427..597).contains(&i);
                    (if inside { -90.0 } else { -130.0 }) + ripple(i)
                })
                .collect()
        };
        let at = |k: usize| HopPlacement {
            first_bin: k * 512,
            end_bin: (k + 1) * 512,
            kept_bins: 512,
            fft_size: 1024,
            bin_hz: 1e3,
            requested_hz: 0.0,
            actual_hz: 0.0,
        };
        for plateau in [true, false] {
            let mut g = Stitcher::new(2048);
            for k in 0..4 {
                let db = hop(plateau);
                g.add_hop(&db, &at(k));
                g.judge_hop(&db, &at(k), 100.0);
            }
            assert_eq!(g.noise_level(), !plateau);
            let band = g.finish();
            let (p, _, floor) = band_peaks(&band, 0.0, 1e3, 100.0, g.noise_level());
            assert_eq!(floor.is_some(), !plateau, "{floor:?}");
            assert!(p.is_empty(), "{p:?}");
            if plateau {
                assert_eq!(why_no_band_floor(&band), crate::NOT_LEVEL);
                // Without the hops' judgement the band's floor was the dips'.
                let (p, _, floor) = band_peaks(&band, 0.0, 1e3, 100.0, true);
                assert!(floor.is_some_and(|f| f < -125.0), "{floor:?}");
                assert_eq!(p.len(), 4, "{p:?}");
            }
        }
    }

    /// Bins measured without power (−∞) count as measured, have no level, and a
    /// median among them leaves the band without a floor, its peaks without SNR.
    #[test]
    fn bins_without_power_have_no_level_and_no_floor() {
        let mut g = Stitcher::new(8);
        let at = HopPlacement {
            requested_hz: 0.0,
            actual_hz: 0.0,
            bin_hz: 1.0,
            fft_size: 8,
            kept_bins: 8,
            first_bin: 0,
            end_bin: 8,
        };
        let mut psd = vec![f32::NEG_INFINITY; 8];
        psd[6] = -40.0;
        let hop = g.add_hop(&psd, &at);
        assert_eq!(hop.iter().filter(|v| **v == f32::NEG_INFINITY).count(), 7);
        let db = g.finish();
        assert_eq!(
            db.iter().filter(|v| **v == Some(f32::NEG_INFINITY)).count(),
            7
        );
        assert_eq!(
            db.iter().filter(|v| v.is_some_and(f32::is_finite)).count(),
            1
        );
        // No floor, so no SNR; the one bin with a level stands out of the bins
        // without: a peak of the band (bins at the arithmetic's rounding were cut
        // to −∞ by the hop's own spectrum already).
        let (p, w, floor) = band_peaks(&db, 0.0, 1.0, 1.0, true);
        assert_eq!((p.len(), w.len(), floor), (1, 1, None));
        assert_eq!(
            (p[0].frequency_hz, p[0].power_db, p[0].snr_db),
            (6.0, -40.0, None)
        );
        let (p, _, floor) = band_peaks(&[Some(f32::NEG_INFINITY); 8], 0.0, 1.0, 1.0, true);
        assert_eq!((p.len(), floor), (0, None));
    }
}
