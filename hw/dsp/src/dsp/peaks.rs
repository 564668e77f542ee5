//! Peak picking and the noise floor.
use super::window::Window;
use serde::{Deserialize, Serialize};

/// A spectral peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Peak {
    /// Frequency (Hz; absolute RF when the centre is known, else baseband).
    pub frequency_hz: f64,
    /// Power of the peak bin, dBFS per FFT bin (as [`crate::Spectrum::psd_db`]).
    pub power_db: f64,
    /// Power above the noise floor (dB); `null` when the spectrum has no floor — the
    /// samples carry no noise above the FFT's rounding — and so no SNR
    /// (docs/operator.md#levels-without-power).
    #[serde(default)]
    pub snr_db: Option<f64>,
}

impl Peak {
    /// `SNR  12.3 dB` (the number 5 wide), or `SNR n/a (no noise floor)` — the one way
    /// a peak's SNR is shown in text.
    pub fn snr_text(&self) -> String {
        fmt_snr(self.snr_db)
    }
}

/// `SNR  12.3 dB` (the number 5 wide), or `SNR n/a (no noise floor)` when there is
/// no SNR: the samples have no noise floor for a peak to stand above (the floor's
/// line says why).
pub fn fmt_snr(snr_db: Option<f64>) -> String {
    match snr_db.filter(|v| v.is_finite()) {
        Some(v) => format!("SNR {v:5.1} dB"),
        None => "SNR n/a (no noise floor)".to_owned(),
    }
}

/// What a peak must stand `min_snr_db` above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PeakReference {
    /// The noise floor (dB per bin): a peak is at least `min_snr_db` above it.
    Floor(f64),
    /// No floor (noiseless samples): the reach of the arithmetic's rounding (dB per
    /// bin, [`crate::ROUNDING_SPURS_DB`] below the mean bin). A peak is at least `min_snr_db`
    /// above it and stands `min_snr_db` above the spectrum around it (its prominence:
    /// above the higher of the lowest bins on each side before a higher bin), so the
    /// ripple where a tone's window leakage meets the rounding is no peak.
    Resolution(f64),
}

/// Why a spectrum has no noise floor, in words a user reads: from the Welch segments
/// averaged and the mean sample power (`None`: no power at all).
pub fn why_no_floor(averages: u64, mean_power_dbfs: Option<f64>) -> &'static str {
    if averages == 0 {
        "no Welch segment: fewer samples than one FFT"
    } else if mean_power_dbfs.is_none() {
        "no signal: every sample is zero"
    } else {
        "the samples carry no noise above the FFT's rounding"
    }
}

/// Median of a dB vector (the noise-floor estimate). NaN-free input expected (a bin
/// without power is −∞ and sorts lowest); `-inf` if empty.
pub fn median_db(db: &[f32]) -> f64 {
    if db.is_empty() {
        return f64::NEG_INFINITY;
    }
    let mut v = db.to_vec();
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f32::total_cmp);
    f64::from(*m)
}

/// Distinct peaks of a fftshifted dB spectrum, strongest first, as `(bin, power_db)`.
///
/// A peak is a local maximum at least `min_snr_db` above `above` (a bin without
/// power, −∞, is never one; see [`PeakReference`]), not less than
/// `dc_exclude` bins from `dc_bin` (0: DC allowed, 1: the DC bin excluded, 2: DC ±1 …). Maxima inside the main lobe of a stronger accepted
/// peak, or in its sidelobe region and below its sidelobe level, belong to that peak.
pub fn find_peaks(
    db: &[f32],
    dc_bin: usize,
    dc_exclude: usize,
    window: Window,
    above: PeakReference,
    min_snr_db: f64,
    max_peaks: usize,
) -> Vec<(usize, f32)> {
    let n = db.len();
    if n < 3 || max_peaks == 0 {
        return Vec::new();
    }
    let (reference, prominence) = match above {
        PeakReference::Floor(f) => (f, None),
        PeakReference::Resolution(r) => (r, Some(min_snr_db as f32)),
    };
    let threshold = (reference + min_snr_db) as f32;
    let mut cand: Vec<(usize, f32)> = (0..n)
        .filter(|&i| {
            let p = db[i];
            let left_ok = i == 0 || p > db[i - 1];
            let right_ok = i + 1 == n || p >= db[i + 1];
            left_ok
                && right_ok
                && p.is_finite()
                && p >= threshold
                && dc_bin.abs_diff(i) >= dc_exclude
        })
        .map(|i| (i, db[i]))
        .collect();
    cand.sort_by(|a, b| b.1.total_cmp(&a.1));
    let lobe = window.main_lobe_bins();
    let side_region = 16 * lobe;
    let side_db = window.sidelobe_db() as f32;
    let mut out: Vec<(usize, f32)> = Vec::with_capacity(max_peaks);
    for (i, p) in cand {
        let owned = out.iter().any(|&(j, q)| {
            let d = i.abs_diff(j);
            d <= lobe || (d <= side_region && p < q - side_db)
        });
        if !owned && prominence.is_none_or(|d| prominent(db, i, d)) {
            out.push((i, p));
            if out.len() == max_peaks {
                break;
            }
        }
    }
    out
}

/// Whether bin `i` stands at least `by_db` above the spectrum on both sides: walking
/// away from it, the bins fall `by_db` below it before one rises above it (or the
/// spectrum ends). Each walk stops at the first of the two, so a peak costs the width
/// of its skirt, not the spectrum's.
fn prominent(db: &[f32], i: usize, by_db: f32) -> bool {
    let (p, base) = (db[i], db[i] - by_db);
    // The first bin that decides: one fallen far enough (true), one above (false).
    let side = |v: f32| (v <= base || v > p).then_some(v <= base);
    let left = db[..i].iter().rev().find_map(|&v| side(v));
    let right = db[i + 1..].iter().find_map(|&v| side(v));
    left.unwrap_or(false) && right.unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median_db(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_db(&[4.0, 1.0, 3.0, 2.0]), 3.0);
        assert!(median_db(&[]).is_infinite());
    }

    #[test]
    fn shoulders_and_dc_are_not_peaks() {
        let mut db = vec![-100.0f32; 64];
        // A tone with shoulders at bins 10..=14, a DC spike at 32, a small tone at 50.
        db[10] = -60.0;
        db[11] = -30.0;
        db[12] = -10.0;
        db[13] = -29.0;
        db[14] = -59.0;
        db[16] = -58.0; // a sidelobe-level bump near the strong tone
        db[32] = 0.0;
        db[50] = -80.0;
        let p = find_peaks(
            &db,
            32,
            2,
            Window::Hann,
            PeakReference::Floor(-100.0),
            6.0,
            8,
        );
        assert_eq!(p, vec![(12, -10.0), (50, -80.0)]);
        let p = find_peaks(
            &db,
            32,
            0,
            Window::Hann,
            PeakReference::Floor(-100.0),
            6.0,
            1,
        );
        assert_eq!(p, vec![(32, 0.0)]);
    }

    /// A bin without power (−∞) is never a peak, whatever the floor; a median bin
    /// without power is a floor of −∞ (which the spectrum reports as none).
    #[test]
    fn bins_without_power_are_no_peaks() {
        let mut db = vec![f32::NEG_INFINITY; 32];
        db[5] = -120.0;
        assert_eq!(median_db(&db), f64::NEG_INFINITY);
        assert_eq!(
            find_peaks(
                &db,
                16,
                1,
                Window::Hann,
                PeakReference::Floor(f64::NEG_INFINITY),
                6.0,
                8
            ),
            vec![(5, -120.0)]
        );
        let flat = vec![f32::NEG_INFINITY; 32];
        assert!(find_peaks(
            &flat,
            16,
            0,
            Window::Hann,
            PeakReference::Floor(f64::NEG_INFINITY),
            0.0,
            8
        )
        .is_empty());
        assert_eq!(why_no_floor(3, None), "no signal: every sample is zero");
        assert_eq!(
            why_no_floor(3, Some(-40.0)),
            "the samples carry no noise above the FFT's rounding"
        );
    }

    /// Without a floor a peak must stand its minimum SNR above the spectrum around it:
    /// the ripple of a tone's leakage tail (local maxima a fraction of a dB high) is no
    /// peak, a tone on that tail is; nor is anything below the resolution limit.
    #[test]
    fn without_a_floor_peaks_stand_above_their_surroundings() {
        // A tone at bin 20 with a tail falling 0.2 dB a bin, rippling ±0.3 dB, into
        // bins without level; a second tone at bin 60 standing 10 dB out of the tail.
        let mut db = vec![f32::NEG_INFINITY; 128];
        db[20] = 0.0;
        for (k, v) in db.iter_mut().enumerate().take(110).skip(21) {
            let ripple = if k % 3 == 0 { 0.3 } else { -0.3 };
            *v = -40.0 - 0.2 * (k - 21) as f32 + ripple;
        }
        db[60] = -40.0 - 0.2 * 39.0 + 10.0;
        let res = PeakReference::Resolution(-150.0);
        assert_eq!(
            find_peaks(&db, 0, 0, Window::Hann, res, 6.0, 8),
            vec![(20, 0.0), (60, db[60])]
        );
        // The same spectrum against a floor of the tail's end lists the ripple too.
        let with_floor = find_peaks(&db, 0, 0, Window::Hann, PeakReference::Floor(-70.0), 6.0, 8);
        assert_eq!(with_floor.len(), 8, "{with_floor:?}");
        // Above the resolution limit only.
        let high = PeakReference::Resolution(-20.0);
        assert_eq!(
            find_peaks(&db, 0, 0, Window::Hann, high, 6.0, 8),
            vec![(20, 0.0)]
        );
        assert_eq!(fmt_snr(None), "SNR n/a (no noise floor)");
        assert_eq!(fmt_snr(Some(12.34)), "SNR  12.3 dB");
    }

    #[test]
    fn below_threshold_is_ignored() {
        let mut db = vec![-100.0f32; 32];
        db[5] = -97.0;
        assert!(find_peaks(
            &db,
            16,
            1,
            Window::Hann,
            PeakReference::Floor(-100.0),
            6.0,
            8
        )
        .is_empty());
    }
}
