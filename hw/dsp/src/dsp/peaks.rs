//! Peak picking and the noise floor.
use super::window::Window;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A spectral peak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Peak {
    /// Frequency (Hz; absolute RF when the centre is known, else baseband): the
    /// tone's, between bins, when the peak bin and its two neighbours have one tone's
    /// shape through the window ([`tone_between_bins`]); else the peak bin's centre.
    pub frequency_hz: f64,
    /// Power, dBFS: the tone's (the window's loss between bins put back) when its
    /// frequency is a tone's, else the peak bin's, dBFS per FFT bin (as
    /// [`crate::Spectrum::psd_db`]).
    pub power_db: f64,
    /// Power above the noise floor (dB); `null` when the spectrum has no floor — the
    /// samples carry no noise above the FFT's rounding — and so no SNR
    /// (docs/operator.md#levels-without-power).
    #[serde(default)]
    pub snr_db: Option<f64>,
    /// The emission the peak belongs to, `[from, to]` Hz: the run of bins around it
    /// that stand above the peak threshold, given only when that run is wider than one
    /// tone of the peak's level could make it through the window (a modulated or
    /// wideband signal, or a carrier with a skirt: docs/operator.md#peaks-and-the-noise-floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 2))]
    pub emission_hz: Option<[f64; 2]>,
    /// The frequency of a peak at least [`IMAGE_DB`] stronger at this one's mirror
    /// position about the tuned centre (within one bin): this peak may be the
    /// radio's IQ image of it rather than an emitter of its own
    /// (docs/operator.md#peaks-and-the-noise-floor). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_of_hz: Option<f64>,
    /// The receiver's passband, `[from, to]` Hz (the middle 80 % of its known
    /// bandwidth, where the floor is read), when the peak lies outside
    /// it: in the filter's roll-off, where `power_db` and `snr_db` may read low by
    /// an amount the data does not tell (docs/operator.md#peaks-and-the-noise-floor).
    /// Absent inside it, or when the bandwidth is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 2))]
    pub outside_passband_hz: Option<[f64; 2]>,
}

/// How much stronger (dB) a peak at the mirror position about the centre must be
/// for a peak to be named as its possible IQ image: receivers reject their image
/// by 25–60 dB, so an equal pair is two emitters, not a tone and its image.
pub const IMAGE_DB: f64 = 10.0;

/// Name, on each peak of `peaks`, a peak at least [`IMAGE_DB`] stronger at its
/// mirror position about `centre_hz` within `bin_hz` ([`Peak::image_of_hz`]). A
/// peak within one bin of the centre has no mirror of its own.
pub fn mark_images(peaks: &mut [Peak], centre_hz: f64, bin_hz: f64) {
    let found: Vec<Option<f64>> = peaks
        .iter()
        .map(|p| {
            let offset = p.frequency_hz - centre_hz;
            if offset.abs() <= bin_hz {
                return None;
            }
            peaks
                .iter()
                .filter(|q| {
                    (q.frequency_hz - centre_hz + offset).abs() <= bin_hz
                        && q.power_db >= p.power_db + IMAGE_DB
                })
                .max_by(|a, b| a.power_db.total_cmp(&b.power_db))
                .map(|q| q.frequency_hz)
        })
        .collect();
    for (p, f) in peaks.iter_mut().zip(found) {
        p.image_of_hz = f;
    }
}

impl Peak {
    /// `SNR  12.3 dB` (the number 5 wide), or `SNR n/a (no noise floor)` — the one way
    /// a peak's SNR is shown in text.
    pub fn snr_text(&self) -> String {
        fmt_snr(self.snr_db)
    }

    /// [`fmt_emission`] of its emission, and when it may be an IQ image, of
    /// what: the one way text shows what a peak is.
    pub fn emission_text(&self) -> String {
        let mut t = fmt_emission(self.emission_hz);
        if let Some(f) = self.image_of_hz {
            t.push_str(&format!(
                "  (mirror of {:.6} MHz: may be its IQ image)",
                f / 1e6
            ));
        }
        if let Some([lo, hi]) = self.outside_passband_hz {
            t.push_str(&format!(
                "  (outside the receiver's passband {:.6}–{:.6} MHz: its filter's roll-off \
                 may hold this level and SNR low)",
                lo / 1e6,
                hi / 1e6
            ));
        }
        t
    }
}

/// `  in an emission 99.700000–100.100000 MHz (400.0 kHz wide)` for a peak in an
/// emission wider than a tone ([`Peak::emission_hz`]), else empty.
pub fn fmt_emission(emission_hz: Option<[f64; 2]>) -> String {
    let Some([lo, hi]) = emission_hz else {
        return String::new();
    };
    let w = hi - lo;
    let width = if w >= 1e6 {
        format!("{:.3} MHz", w / 1e6)
    } else if w >= 1e3 {
        format!("{:.1} kHz", w / 1e3)
    } else {
        format!("{w:.0} Hz")
    };
    format!(
        "  in an emission {:.6}–{:.6} MHz ({width} wide)",
        lo / 1e6,
        hi / 1e6
    )
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

/// Why the spectrum of noiseless samples (a synthetic tone, a constant) has no noise
/// floor: their levels and peaks are measured, their floor is not there to measure.
pub const NOISELESS: &str = "the samples carry no noise above the FFT's rounding";

/// Why a spectrum has no noise floor, in words a user reads: from the Welch segments
/// averaged, the mean sample power (`None`: no power at all) and the fraction of
/// samples clipped (more than [`crate::MAX_CLIPPED_FRACTION`]: the input saturated).
pub fn why_no_floor(
    averages: u64,
    mean_power_dbfs: Option<f64>,
    clipped_fraction: f64,
) -> &'static str {
    if clipped_fraction > super::welch::MAX_CLIPPED_FRACTION {
        super::welch::SATURATED
    } else if averages == 0 {
        "no Welch segment: fewer samples than one FFT"
    } else if mean_power_dbfs.is_none() {
        "no signal: every sample is zero"
    } else {
        NOISELESS
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
///
/// Against a floor, a peak is also a distinct emission: the bins standing above the
/// threshold form runs ([`emission_runs`]), and a run is one emission — a modulated or
/// wideband signal whose spectrum ripples is not one carrier per ripple. Its strongest
/// maximum is a peak; another maximum in it is one only when it stands `min_snr_db`
/// above the emission around it (the median of the run's bins within
/// [`LOCAL_LOBES`] main lobes on either side, outside its own main lobe): a pilot on
/// a plateau, a second carrier on a first one's skirt.
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
    // Against a floor: the emissions, and whether each has given its strongest peak.
    let runs = match prominence {
        None => emission_runs(db, threshold, bridge_bins(window, dc_exclude)),
        Some(_) => Vec::new(),
    };
    let mut run_seen = vec![false; runs.len()];
    let mut distinct = |i: usize, p: f32| match prominence {
        Some(d) => prominent(db, i, d),
        None => match run_index(&runs, i) {
            None => true,
            Some(k) if !run_seen[k] => {
                run_seen[k] = true;
                true
            }
            Some(k) => local_level(db, &runs[k], i, lobe, lobe)
                .is_none_or(|level| f64::from(p) >= f64::from(level) + min_snr_db),
        },
    };
    let mut out: Vec<(usize, f32)> = Vec::with_capacity(max_peaks);
    for (i, p) in cand {
        let owned = out.iter().any(|&(j, q)| {
            let d = i.abs_diff(j);
            d <= lobe || (d <= side_region && p < q - side_db)
        });
        // Asked of every maximum in order, so an emission's strongest is its first.
        let distinct = distinct(i, p);
        if !owned && distinct {
            out.push((i, p));
            if out.len() == max_peaks {
                break;
            }
        }
    }
    out
}

/// How many main lobes on either side of a maximum make the emission level it must
/// stand above ([`find_peaks`]).
pub const LOCAL_LOBES: usize = 16;

/// The bins below the threshold that may lie between two parts of one emission (a
/// radio's DC notch, a dip in a modulated spectrum): two main lobes, or the centre
/// span the peak search skips.
pub fn bridge_bins(window: Window, dc_exclude: usize) -> usize {
    (2 * window.main_lobe_bins()).max(2 * dc_exclude)
}

/// The emissions of a spectrum: the runs of bins at or above `level` (dB), gaps of at
/// most `bridge` bins closed, as half-open bin ranges in order. A bin without power
/// (−∞) or without a level (NaN) is below any level.
pub fn emission_runs(db: &[f32], level: f32, bridge: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < db.len() {
        if db[i] >= level {
            let start = i;
            while i < db.len() && db[i] >= level {
                i += 1;
            }
            match out.last_mut() {
                Some(last) if start - last.end <= bridge => last.end = i,
                _ => out.push(start..i),
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Which of `runs` (in order, disjoint) holds bin `i`.
fn run_index(runs: &[Range<usize>], i: usize) -> Option<usize> {
    let k = runs.partition_point(|r| r.end <= i);
    runs.get(k).filter(|r| r.contains(&i)).map(|_| k)
}

/// The level of an emission around bin `i`: the median of the run's finite bins within
/// [`LOCAL_LOBES`] main lobes of `i`, more than `own` bins from it (`None`: no such bin).
fn local_level(db: &[f32], run: &Range<usize>, i: usize, lobe: usize, own: usize) -> Option<f32> {
    let reach = LOCAL_LOBES * lobe + own;
    let lo = run.start.max(i.saturating_sub(reach));
    let hi = run.end.min(i.saturating_add(reach + 1));
    let mut v: Vec<f32> = (lo..hi)
        .filter(|&j| j.abs_diff(i) > own)
        .filter_map(|j| db.get(j).copied())
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f32::total_cmp);
    Some(*m)
}

/// A spectrum's emissions at one level ([`emission_runs`] with [`bridge_bins`]),
/// found once and asked about each peak and the centre.
pub struct Emissions {
    runs: Vec<Range<usize>>,
    level: f32,
    bridge: usize,
}

impl Emissions {
    /// The runs of `db` at or above `level`, gaps of [`bridge_bins`] closed.
    pub fn of(db: &[f32], level: f32, window: Window, dc_exclude: usize) -> Emissions {
        let bridge = bridge_bins(window, dc_exclude);
        Emissions {
            runs: emission_runs(db, level, bridge),
            level,
            bridge,
        }
    }

    fn run_of(&self, i: usize) -> Option<&Range<usize>> {
        self.runs.get(run_index(&self.runs, i)?)
    }

    /// The emission holding bin `i`, if any.
    pub(crate) fn run_at(&self, i: usize) -> Option<Range<usize>> {
        self.run_of(i).cloned()
    }

    /// Whether bin `i` of `db` stands `by_db` above the emission it lies in, as a
    /// second maximum must ([`find_peaks`]), its own span `own` bins either side
    /// (the centre span the peak search skips): true when no emission holds it or
    /// the emission has no bin outside that span.
    pub fn stands_out(&self, db: &[f32], i: usize, by_db: f64, window: Window, own: usize) -> bool {
        let Some(run) = self.run_of(i) else {
            return true;
        };
        let lobe = window.main_lobe_bins();
        let p = db.get(i).copied().unwrap_or(f32::NEG_INFINITY);
        local_level(db, run, i, lobe, own.max(lobe))
            .is_none_or(|l| f64::from(p) >= f64::from(l) + by_db)
    }

    /// The emission of a peak at bin `i` (`peak_db` strong), when it is wider than
    /// one tone that strong could make it through `window`: a tone's response falls
    /// below the level within [`tone_reach_bins`] of its bin, so a run reaching
    /// further on either side (by more than the bridge and a bin for the tone lying
    /// between bins) holds more than one tone's leakage. `None` for a peak whose run a
    /// tone explains.
    pub fn wide(&self, i: usize, peak_db: f32, window: Window) -> Option<Range<usize>> {
        let run = self.run_of(i)?;
        // 3 dB more than the peak's height above the level: the noise that the run's
        // bins also hold can lift a sidelobe that much short of the level above it.
        let reach =
            tone_reach_bins(window, f64::from(peak_db - self.level) + 3.0) + self.bridge + 1;
        let wide = i - run.start > reach || run.end - 1 - i > reach;
        wide.then(|| run.clone())
    }
}

/// How many bins from a tone its window response stays within `drop_db` of the tone's
/// bin at some offset: the least `k` with the response at every offset ≥ `k` bins at
/// least `drop_db` down (large-N cosine-sum response, the tone anywhere in its bin).
pub fn tone_reach_bins(window: Window, drop_db: f64) -> usize {
    let limit = 10f64.powf(-drop_db.max(0.0) / 10.0);
    // The response's highest power at offsets k..k+8 bins, relative to the centre's.
    let beyond = |k: usize| {
        (0..=256)
            .map(|s| window.tone_power(k as f64 + f64::from(s) / 32.0))
            .fold(0.0f64, f64::max)
    };
    let (mut lo, mut hi) = (0usize, window.main_lobe_bins().max(1));
    while beyond(hi) > limit {
        lo = hi;
        hi *= 2;
        if hi > 1 << 22 {
            return hi;
        }
    }
    // beyond(hi) ≤ limit < beyond(lo) (or lo = 0): the least such hi.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if beyond(mid) > limit {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// A tone's place and power from the peak bin `i` of `db` (dB) and its two
/// neighbours: `(δ, power_db)`, the tone `δ` bins from the bin's centre (|δ| ≤ ½) and
/// its power with the window's loss there put back, the noise floor's mean power
/// (`floor_db`) taken out of each bin first. Solved from the window's own
/// response ([`Window::tone_power`]): the neighbours' difference over the peak fixes δ,
/// and their sum must then be what one tone at δ gives, within
/// [`TONE_SHAPE_TOLERANCE_DB`] — noise near the floor, a modulated signal or a second
/// tone in the main lobe break that shape, and then there is no such number (`None`).
pub fn tone_between_bins(
    db: &[f32],
    i: usize,
    window: Window,
    floor_db: Option<f64>,
) -> Option<(f64, f64)> {
    // The noise's mean power in each bin taken out first (`floor_db`, when measured).
    let noise = floor_db.map_or(0.0, |f| 10f64.powf(f / 10.0));
    let lin = |v: f32| 10f64.powf(f64::from(v) / 10.0) - noise;
    let (pm, p0, pp) = (
        lin(*db.get(i.checked_sub(1)?)?),
        lin(*db.get(i)?),
        lin(*db.get(i + 1)?),
    );
    if !(p0 > 0.0 && p0.is_finite() && pm > 0.0 && pm.is_finite() && pp > 0.0 && pp.is_finite()) {
        return None;
    }
    // Bin k holds the tone's response k − δ bins away.
    let at = |k: f64, d: f64| window.tone_power(k - d);
    let diff = |d: f64| (at(1.0, d) - at(-1.0, d)) / at(0.0, d);
    let sum = |d: f64| (at(1.0, d) + at(-1.0, d)) / at(0.0, d);
    let (mut lo, mut hi) = (-0.5f64, 0.5f64);
    let (dlo, dhi) = (diff(lo), diff(hi));
    // A tone half-way between two bins may show either as the peak, its neighbours'
    // difference a hair past the half-bin's for noise: up to 5 % of the range is
    // taken as that edge (the shape check below still applies).
    let slack = 0.05 * (dhi - dlo);
    let observed = (pp - pm) / p0;
    if !(dlo - slack..=dhi + slack).contains(&observed) {
        return None;
    }
    let observed = observed.clamp(dlo, dhi);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if diff(mid) < observed {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let d = 0.5 * (lo + hi);
    let shape_db = 10.0 * ((pp + pm) / p0 / sum(d)).log10();
    (shape_db.abs() <= TONE_SHAPE_TOLERANCE_DB).then(|| (d, 10.0 * (p0 / at(0.0, d)).log10()))
}

/// How far (dB) the sum of a peak's neighbours may lie from one tone's before its
/// place between bins is not a tone's ([`tone_between_bins`]).
pub const TONE_SHAPE_TOLERANCE_DB: f64 = 0.2;

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
        assert_eq!(
            why_no_floor(3, None, 0.0),
            "no signal: every sample is zero"
        );
        assert!(why_no_floor(3, Some(-40.0), 0.02).starts_with("the input saturated"));
        assert_eq!(
            why_no_floor(3, Some(-40.0), 0.01),
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
        // Against a floor below the tail's end the tail is one emission: its ripple is
        // no peak either, the tone standing 10 dB out of it is.
        let with_floor = find_peaks(&db, 0, 0, Window::Hann, PeakReference::Floor(-70.0), 6.0, 8);
        assert_eq!(with_floor, vec![(20, 0.0), (60, db[60])]);
        // Above the resolution limit only.
        let high = PeakReference::Resolution(-20.0);
        assert_eq!(
            find_peaks(&db, 0, 0, Window::Hann, high, 6.0, 8),
            vec![(20, 0.0)]
        );
        assert_eq!(fmt_snr(None), "SNR n/a (no noise floor)");
        assert_eq!(fmt_snr(Some(12.34)), "SNR  12.3 dB");
    }

    /// A tone's reach through each window: Hann's response is 6 dB down one bin off
    /// and its first sidelobe −31.5 dB; Blackman-Harris' −92 dB; the reach grows as the
    /// tone stands higher above the level.
    #[test]
    fn a_tones_reach_follows_its_window() {
        assert!((Window::Hann.tone_power(1.0) - 0.25).abs() < 1e-12);
        // Half a bin off: the scalloping loss, −1.42 dB.
        assert!((10.0 * Window::Hann.tone_power(0.5).log10() + 1.424).abs() < 1e-3);
        let first_sidelobe = (128..256)
            .map(|k| Window::Hann.tone_power(f64::from(k) / 64.0))
            .fold(0.0, f64::max);
        assert!(
            (10.0 * first_sidelobe.log10() + 31.47).abs() < 0.01,
            "{first_sidelobe}"
        );
        let hann: Vec<usize> = [3.0, 30.0, 40.0, 60.0, 80.0, 100.0]
            .iter()
            .map(|&d| tone_reach_bins(Window::Hann, d))
            .collect();
        assert_eq!(hann, [1, 2, 3, 7, 15, 32]);
        let bh: Vec<usize> = [60.0, 90.0, 100.0, 120.0]
            .iter()
            .map(|&d| tone_reach_bins(Window::BlackmanHarris, d))
            .collect();
        assert_eq!(bh, [4, 4, 11, 18]);
        assert_eq!(tone_reach_bins(Window::FlatTop, 90.0), 5);
    }

    /// Runs at or above a level, closing short gaps.
    #[test]
    fn emissions_are_runs_with_short_gaps_closed() {
        let mut db = vec![-100.0f32; 40];
        for i in (2..6).chain(9..12).chain(20..22) {
            db[i] = -50.0;
        }
        db[30] = f32::NAN;
        db[31] = f32::NEG_INFINITY;
        assert_eq!(emission_runs(&db, -60.0, 3), vec![2..12, 20..22]);
        assert_eq!(emission_runs(&db, -60.0, 2), vec![2..6, 9..12, 20..22]);
        assert!(emission_runs(&db, -40.0, 3).is_empty());
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
