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
    /// Power above the noise floor (dB).
    pub snr_db: f64,
}

/// Why a spectrum has no noise floor, in words a user reads: from the Welch segments
/// averaged and the mean sample power (`None`: no power at all).
pub fn why_no_floor(averages: u64, mean_power_dbfs: Option<f64>) -> &'static str {
    if averages == 0 {
        "no Welch segment: fewer samples than one FFT"
    } else if mean_power_dbfs.is_none() {
        "no signal: every sample is zero"
    } else {
        "the median bin has no power"
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
/// A peak is a local maximum at least `min_snr_db` above `floor_db` (a finite
/// floor: a bin without power, −∞, is never one), less than
/// `dc_exclude` bins from `dc_bin` (0: DC allowed, 1: the DC bin excluded, 2: DC ±1 …). Maxima inside the main lobe of a stronger accepted
/// peak, or in its sidelobe region and below its sidelobe level, belong to that peak.
pub fn find_peaks(
    db: &[f32],
    dc_bin: usize,
    dc_exclude: usize,
    window: Window,
    floor_db: f64,
    min_snr_db: f64,
    max_peaks: usize,
) -> Vec<(usize, f32)> {
    let n = db.len();
    if n < 3 || max_peaks == 0 {
        return Vec::new();
    }
    let threshold = (floor_db + min_snr_db) as f32;
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
        if !owned {
            out.push((i, p));
            if out.len() == max_peaks {
                break;
            }
        }
    }
    out
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
        let p = find_peaks(&db, 32, 2, Window::Hann, -100.0, 6.0, 8);
        assert_eq!(p, vec![(12, -10.0), (50, -80.0)]);
        let p = find_peaks(&db, 32, 0, Window::Hann, -100.0, 6.0, 1);
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
            find_peaks(&db, 16, 1, Window::Hann, f64::NEG_INFINITY, 6.0, 8),
            vec![(5, -120.0)]
        );
        let flat = vec![f32::NEG_INFINITY; 32];
        assert!(find_peaks(&flat, 16, 0, Window::Hann, f64::NEG_INFINITY, 0.0, 8).is_empty());
        assert_eq!(why_no_floor(3, None), "no signal: every sample is zero");
        assert_eq!(why_no_floor(3, Some(-40.0)), "the median bin has no power");
    }

    #[test]
    fn below_threshold_is_ignored() {
        let mut db = vec![-100.0f32; 32];
        db[5] = -97.0;
        assert!(find_peaks(&db, 16, 1, Window::Hann, -100.0, 6.0, 8).is_empty());
    }
}
