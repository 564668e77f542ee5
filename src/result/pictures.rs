//! `pictures` in `RX_RESULT.json`: a bounded summary of what the node drew, so a
//! main PC draws the same pictures from the published result alone
//! (docs/protocol.md#pictures).
//!
//! Each spectrum (one per capture with a PSD, one per sweep) is decimated to at
//! most [`MAX_POINTS`] displayed bins, each carrying the minimum, maximum and mean
//! of the bins it covers (dBFS/bin, 0.1 dB steps, `null` where nothing was
//! measured), with its frequency axis, peaks, noise floor, failed hops, CLKIN
//! markers and inset. A sweep with repeats adds its heatmap (frequency × time),
//! at most [`MAX_HEATMAP_COLUMNS`] × [`MAX_HEATMAP_ROWS`] max-held cells. The whole
//! section is kept under [`MAX_PICTURES_BYTES`] of the result's pretty JSON by
//! halving the resolution, then leaving pictures out (named in `omitted`).
//! The `clkin_compare` phase trace and the `freq_cal` detections are already in
//! their own sections and are drawn from there.
use super::plot::{ClkinInset, Heatmap, Marker, SpectrumPlot, Trace};
use serde::{Deserialize, Serialize};

/// Most displayed bins per spectrum.
pub(crate) const MAX_POINTS: usize = 1024;
/// Fewest displayed bins a spectrum is reduced to before it is left out.
const MIN_POINTS: usize = 64;
/// Most frequency columns of a heatmap.
pub(crate) const MAX_HEATMAP_COLUMNS: usize = 256;
/// Most time rows of a heatmap (more repeats are max-held together).
pub(crate) const MAX_HEATMAP_ROWS: usize = 64;
/// The bound on the `pictures` section, bytes of the result's pretty JSON.
pub(crate) const MAX_PICTURES_BYTES: usize = 128 * 1024;
/// Room the rest of a result keeps below the publication limit: the pictures
/// never take a result over it.
const PUBLISH_MARGIN_BYTES: usize = 8 * 1024;

/// The `pictures` section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pictures {
    /// One per capture with a spectrum, then one per sweep.
    pub spectra: Vec<SpectrumPicture>,
    /// One per sweep with repeats.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heatmaps: Vec<HeatmapPicture>,
    /// Pictures left out to keep the bound, one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
}

/// What a spectrum picture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PictureOf {
    /// `captures[index - 1]` (drawn as `SPECTRUM_<index>.png`).
    Capture,
    /// The sweep of plan step `index` (drawn as `SWEEP_<index>.png`).
    Sweep,
}

/// A peak marked on a spectrum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PeakMark {
    /// Where, Hz.
    pub frequency_hz: f64,
    /// Its level, dBFS/bin.
    pub power_db: f64,
}

/// One decimated spectrum with everything drawn on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpectrumPicture {
    /// A capture's or a sweep's.
    pub of: PictureOf,
    /// The number in the node's file name: the 1-based position in `captures`,
    /// or a sweep's plan step.
    pub index: u32,
    /// The picture's title line.
    pub title: String,
    /// `false` when the axis is FFT bins (the centre frequency was unknown).
    pub freq_known: bool,
    /// Centre of displayed bin 0, Hz (or bin number).
    pub start_hz: f64,
    /// Displayed bin spacing, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub step_hz: f64,
    /// Lowest measured bin in each displayed bin, dBFS/bin; `null` = no data.
    #[schemars(length(max = MAX_POINTS))]
    pub min_db: Vec<Option<f32>>,
    /// Highest (what the trace line shows, as the node drew it).
    #[schemars(length(max = MAX_POINTS))]
    pub max_db: Vec<Option<f32>>,
    /// Mean of the measured bins (in dB).
    #[schemars(length(max = MAX_POINTS))]
    pub mean_db: Vec<Option<f32>>,
    /// Labelled peaks, strongest first.
    pub peaks: Vec<PeakMark>,
    /// The noise-floor line, dBFS/bin.
    pub noise_floor_db: Option<f64>,
    /// Ranges with no data (failed hops), `[low, high]` Hz.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_hz: Vec<[f64; 2]>,
    /// A sweep's requested band `[start, stop]` Hz, its edges labelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_hz: Option<[f64; 2]>,
    /// CLKIN markers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
    /// The CLKIN inset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clkin: Option<ClkinInset>,
}

/// One decimated heatmap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeatmapPicture {
    /// The sweep's plan step (drawn as `SWEEP_<index>_heatmap.png`).
    pub index: u32,
    /// Title line.
    pub title: String,
    /// Centre of column 0, Hz.
    pub start_hz: f64,
    /// Column spacing, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub step_hz: f64,
    /// Seconds since the first row, per row.
    #[schemars(length(max = MAX_HEATMAP_ROWS))]
    pub row_time_s: Vec<f64>,
    /// Max-held dBFS/bin per column, per row; `null` = no data.
    #[schemars(length(max = MAX_HEATMAP_ROWS), inner(length(max = MAX_HEATMAP_COLUMNS)))]
    pub rows: Vec<Vec<Option<f32>>>,
    /// Ranges with no data because a hop failed, `[low, high]` Hz.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_hz: Vec<[f64; 2]>,
}

/// A spectrum as drawn, before decimation.
pub(crate) struct Drawn {
    /// Whose.
    pub of: PictureOf,
    /// 1-based position.
    pub index: u32,
    /// The picture.
    pub plot: SpectrumPlot,
    /// The heatmap of a sweep with repeats.
    pub heatmap: Option<Heatmap>,
}

/// The summary of a run: every capture with a spectrum (as
/// `SPECTRUM_<n>.png` draws it), then the sweeps the run drew.
pub(crate) fn of_run(r: &super::RxResult, sweeps: Vec<Drawn>) -> Option<Pictures> {
    let mut drawn: Vec<Drawn> = r
        .captures
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            Some(Drawn {
                of: PictureOf::Capture,
                index: u32::try_from(i + 1).ok()?,
                plot: super::plot::capture_plot(r, i + 1, c)?,
                heatmap: None,
            })
        })
        .collect();
    drawn.extend(sweeps);
    let rest = r.to_json_bytes().len();
    let limit = usize::try_from(crate::git::scan::MAX_FILE_BYTES).unwrap_or(usize::MAX);
    let budget = limit
        .saturating_sub(rest + PUBLISH_MARGIN_BYTES)
        .min(MAX_PICTURES_BYTES);
    Pictures::of(&drawn, budget)
}

/// One decimated bin: `(min, max, mean)`, each `None` when nothing was measured.
type Cell = (Option<f32>, Option<f32>, Option<f32>);

/// 0.1 dB steps: what a picture can show, and a short number in JSON.
fn tenth(v: f64) -> f32 {
    ((v * 10.0).round() / 10.0) as f32
}

/// `v` in groups of `k` bins: min, max and mean of the finite ones.
fn cells(v: &[f64], k: usize) -> Vec<Cell> {
    v.chunks(k.max(1))
        .map(|c| {
            let f: Vec<f64> = c.iter().copied().filter(|x| x.is_finite()).collect();
            if f.is_empty() {
                return (None, None, None);
            }
            let lo = f.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = f.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mean = f.iter().sum::<f64>() / f.len() as f64;
            (Some(tenth(lo)), Some(tenth(hi)), Some(tenth(mean)))
        })
        .collect()
}

/// Bins per displayed bin so `n` bins fit in `max`.
fn group(n: usize, max: usize) -> usize {
    n.div_ceil(max.max(1)).max(1)
}

impl SpectrumPicture {
    /// `p` decimated to at most `points` displayed bins.
    fn of(d: &Drawn, points: usize) -> SpectrumPicture {
        let p = &d.plot;
        let k = group(p.trace.db.len(), points);
        let c = cells(&p.trace.db, k);
        SpectrumPicture {
            of: d.of,
            index: d.index,
            title: p.title.clone(),
            freq_known: p.freq_known,
            start_hz: p.trace.start_hz + p.trace.step_hz * (k as f64 - 1.0) / 2.0,
            step_hz: p.trace.step_hz * k as f64,
            min_db: c.iter().map(|x| x.0).collect(),
            max_db: c.iter().map(|x| x.1).collect(),
            mean_db: c.iter().map(|x| x.2).collect(),
            peaks: p
                .peaks
                .iter()
                .map(|&(frequency_hz, power_db)| PeakMark {
                    frequency_hz,
                    power_db,
                })
                .collect(),
            noise_floor_db: p.noise_floor_db,
            failed_hz: p.failed_hz.clone(),
            band_hz: p.band_hz,
            markers: p.markers.clone(),
            clkin: p.clkin.clone(),
        }
    }

    /// The file the node drew this picture in (and `results show --plot` draws).
    pub(crate) fn file_name(&self) -> String {
        match self.of {
            PictureOf::Capture => super::model::spectrum_png_name(self.index as usize),
            PictureOf::Sweep => format!("SWEEP_{}.png", self.index),
        }
    }

    /// The picture to draw: the max-held trace with the peaks, floor and markers,
    /// as the node drew it.
    pub(crate) fn plot(&self) -> SpectrumPlot {
        let db = |v: &[Option<f32>]| v.iter().map(|x| x.map_or(f64::NAN, f64::from)).collect();
        SpectrumPlot {
            title: self.title.clone(),
            trace: Trace {
                start_hz: self.start_hz,
                step_hz: self.step_hz,
                db: db(&self.max_db),
                low_db: db(&self.min_db),
            },
            peaks: self
                .peaks
                .iter()
                .map(|p| (p.frequency_hz, p.power_db))
                .collect(),
            noise_floor_db: self.noise_floor_db,
            markers: self.markers.clone(),
            failed_hz: self.failed_hz.clone(),
            band_hz: self.band_hz,
            freq_known: self.freq_known,
            clkin: self.clkin.clone(),
        }
    }
}

impl HeatmapPicture {
    /// `h` reduced to at most `cols` columns and [`MAX_HEATMAP_ROWS`] rows (max-held).
    fn of(index: u32, h: &Heatmap, cols: usize) -> HeatmapPicture {
        let width = h.rows.iter().map(Vec::len).max().unwrap_or(0);
        let k = group(width, cols);
        let r = group(h.rows.len(), MAX_HEATMAP_ROWS);
        let mut rows = Vec::new();
        let mut times = Vec::new();
        for (g, chunk) in h.rows.chunks(r).enumerate() {
            let mut merged = vec![f64::NAN; width];
            for row in chunk {
                for (m, v) in merged.iter_mut().zip(row) {
                    if v.is_finite() {
                        *m = if m.is_finite() { m.max(*v) } else { *v };
                    }
                }
            }
            rows.push(cells(&merged, k).into_iter().map(|c| c.1).collect());
            times.push(h.row_time_s.get(g * r).copied().unwrap_or(0.0));
        }
        HeatmapPicture {
            index,
            title: h.title.clone(),
            start_hz: h.start_hz + h.step_hz * (k as f64 - 1.0) / 2.0,
            step_hz: h.step_hz * k as f64,
            row_time_s: times,
            rows,
            failed_hz: h.failed_hz.clone(),
        }
    }

    /// The file the node drew this heatmap in.
    pub(crate) fn file_name(&self) -> String {
        format!("SWEEP_{}_heatmap.png", self.index)
    }

    /// The heatmap to draw.
    pub(crate) fn heatmap(&self) -> Heatmap {
        Heatmap {
            title: self.title.clone(),
            start_hz: self.start_hz,
            step_hz: self.step_hz,
            row_time_s: self.row_time_s.clone(),
            rows: self
                .rows
                .iter()
                .map(|r| r.iter().map(|x| x.map_or(f64::NAN, f64::from)).collect())
                .collect(),
            failed_hz: self.failed_hz.clone(),
        }
    }
}

impl Pictures {
    /// The summary of `drawn`, within `budget` bytes: full resolution
    /// ([`MAX_POINTS`]) when it fits, else halved until it does (down to 64
    /// displayed bins), else the last pictures are left out and named.
    /// `None` when nothing was drawn.
    pub(crate) fn of(drawn: &[Drawn], budget: usize) -> Option<Pictures> {
        if drawn.is_empty() {
            return None;
        }
        let (mut points, mut cols) = (MAX_POINTS, MAX_HEATMAP_COLUMNS);
        loop {
            let p = Pictures::at(drawn, points, cols);
            if p.published_bytes() <= budget {
                return Some(p);
            }
            if points <= MIN_POINTS {
                break;
            }
            points /= 2;
            cols = (cols / 2).max(MIN_POINTS / 2);
        }
        // Too many even at the lowest resolution: the most leading pictures that fit.
        let first = |keep: usize| {
            let mut p = Pictures::at(&drawn[..keep], points, cols);
            p.omitted = drawn[keep..]
                .iter()
                .map(|d| {
                    format!(
                        "{}: left out to keep the pictures within {budget} bytes",
                        SpectrumPicture::of(d, 1).file_name()
                    )
                })
                .collect();
            p
        };
        let fits = |keep: usize| first(keep).published_bytes() <= budget;
        if !fits(0) {
            return None;
        }
        let (mut lo, mut hi) = (0, drawn.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(first(lo))
    }

    fn at(drawn: &[Drawn], points: usize, cols: usize) -> Pictures {
        Pictures {
            spectra: drawn
                .iter()
                .map(|d| SpectrumPicture::of(d, points))
                .collect(),
            heatmaps: drawn
                .iter()
                .filter_map(|d| Some(HeatmapPicture::of(d.index, d.heatmap.as_ref()?, cols)))
                .collect(),
            omitted: Vec::new(),
        }
    }

    /// Bytes this section takes in `RX_RESULT.json` (pretty, one level in).
    /// What breaks the section's bound or shape (docs/protocol.md#pictures), one
    /// line each: the validator refuses a result for any, and the main PC draws
    /// nothing from a section that has one (it came from another node).
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let bytes = self.published_bytes();
        if bytes > MAX_PICTURES_BYTES {
            out.push(format!(
                "pictures: {bytes} bytes; at most {MAX_PICTURES_BYTES}"
            ));
        }
        let mut seen = std::collections::BTreeMap::new();
        for (i, s) in self.spectra.iter().enumerate() {
            let at = format!("pictures.spectra[{i}]");
            let n = s.max_db.len();
            if n > MAX_POINTS || s.min_db.len() != n || s.mean_db.len() != n {
                out.push(format!(
                    "{at}: min_db, max_db and mean_db must be equally long, at most {MAX_POINTS} (got {}, {n}, {})",
                    s.min_db.len(),
                    s.mean_db.len()
                ));
            }
            // Two pictures of one name would be drawn into one file.
            if let Some(first) = seen.insert(s.file_name(), i) {
                out.push(format!(
                    "{at}: {} index {} again (pictures.spectra[{first}] is drawn as {} already)",
                    picture_of(s.of),
                    s.index,
                    s.file_name()
                ));
            }
            check_axis(&at, s.start_hz, s.step_hz, n, &mut out);
            let levels = [&s.min_db, &s.max_db, &s.mean_db];
            check_levels(
                &at,
                levels.iter().flat_map(|v| v.iter().flatten()),
                &mut out,
            );
            for (k, p) in s.peaks.iter().enumerate() {
                check_hz(
                    &format!("{at}.peaks[{k}].frequency_hz"),
                    p.frequency_hz,
                    &mut out,
                );
                check_db(&format!("{at}.peaks[{k}].power_db"), p.power_db, &mut out);
            }
            if let Some(f) = s.noise_floor_db {
                check_db(&format!("{at}.noise_floor_db"), f, &mut out);
            }
            for (k, m) in s.markers.iter().enumerate() {
                check_hz(&format!("{at}.markers[{k}].hz"), m.hz, &mut out);
            }
            check_ranges(&format!("{at}.failed_hz"), &s.failed_hz, &mut out);
            if let Some(b) = s.band_hz {
                check_ranges(&format!("{at}.band_hz"), &[b], &mut out);
            }
            if let Some(k) = &s.clkin {
                check_hz(&format!("{at}.clkin.expected_hz"), k.expected_hz, &mut out);
                if let Some(m) = k.measured_hz {
                    check_hz(&format!("{at}.clkin.measured_hz"), m, &mut out);
                }
            }
        }
        let mut seen = std::collections::BTreeMap::new();
        for (i, h) in self.heatmaps.iter().enumerate() {
            let at = format!("pictures.heatmaps[{i}]");
            if h.rows.len() != h.row_time_s.len()
                || h.rows.len() > MAX_HEATMAP_ROWS
                || h.rows.iter().any(|r| r.len() > MAX_HEATMAP_COLUMNS)
            {
                out.push(format!(
                    "{at}: one time per row, at most {MAX_HEATMAP_ROWS} rows and {MAX_HEATMAP_COLUMNS} columns"
                ));
            }
            if let Some(first) = seen.insert(h.index, i) {
                out.push(format!(
                    "{at}: index {} again (pictures.heatmaps[{first}] is drawn as {} already)",
                    h.index,
                    h.file_name()
                ));
            }
            let width = h.rows.iter().map(Vec::len).max().unwrap_or(0);
            check_axis(&at, h.start_hz, h.step_hz, width, &mut out);
            for (k, t) in h.row_time_s.iter().enumerate() {
                if !(t.is_finite() && t.abs() <= MAX_ROW_TIME_S) {
                    out.push(format!(
                        "{at}.row_time_s[{k}]: {} s is not a row time (finite, at most {MAX_ROW_TIME_S:e} s)",
                        num(*t)
                    ));
                    break;
                }
            }
            check_levels(&at, h.rows.iter().flatten().flatten(), &mut out);
            check_ranges(&format!("{at}.failed_hz"), &h.failed_hz, &mut out);
        }
        out
    }

    pub(crate) fn published_bytes(&self) -> usize {
        let s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.len() + 2 * s.lines().count() + "  \"pictures\": ,\n".len()
    }
}

/// The largest frequency a picture may show, Hz (either sign: a band edge
/// below 0 Hz is a capture's lower half). No radio rxnode drives tunes above
/// 300 GHz (the bound on frequencies everywhere else); 1 THz leaves room for an
/// axis around it and keeps every derived value far from where f64 sums overflow.
pub(crate) const MAX_PICTURE_HZ: f64 = 1e12;
/// The largest level a picture may show, ± dB: far beyond any dBFS a radio reports.
pub(crate) const MAX_PICTURE_DB: f64 = 1e3;
/// The latest row time of a heatmap, seconds (about 30 years).
const MAX_ROW_TIME_S: f64 = 1e9;

/// `capture` or `sweep`, as a problem names it.
fn picture_of(of: PictureOf) -> &'static str {
    match of {
        PictureOf::Capture => "capture",
        PictureOf::Sweep => "sweep",
    }
}

/// A frequency axis of `n` points: its step positive, its first and last point
/// (`start + step × (n − 1)`, so every point between) finite and within
/// ±[`MAX_PICTURE_HZ`]; a problem names `at`'s field otherwise.
fn check_axis(at: &str, start: f64, step: f64, n: usize, out: &mut Vec<String>) {
    let within = |v: f64| v.is_finite() && v.abs() <= MAX_PICTURE_HZ;
    let start_ok = within(start);
    let step_ok = step.is_finite() && step > 0.0 && step <= MAX_PICTURE_HZ;
    if !start_ok {
        out.push(format!(
            "{at}.start_hz: {} is not a frequency axis start (finite, within ±{MAX_PICTURE_HZ:e} Hz)",
            num(start)
        ));
    }
    if !step_ok {
        out.push(format!(
            "{at}.step_hz: {} is not a frequency axis step (positive, at most {MAX_PICTURE_HZ:e} Hz)",
            num(step)
        ));
    }
    let end = start + step * n.saturating_sub(1) as f64;
    if start_ok && step_ok && !within(end) {
        out.push(format!(
            "{at}.step_hz: start_hz {} + step_hz {} × {} ends at {} Hz, beyond ±{MAX_PICTURE_HZ:e} Hz",
            num(start),
            num(step),
            n.saturating_sub(1),
            num(end)
        ));
    }
}

/// A number as a problem shows it: plain when it is of a usual size, else in
/// exponent form (`1e308`, never 309 digits).
pub(crate) fn num(v: f64) -> String {
    if v == 0.0 || (1e-3..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A frequency drawn on a picture (a peak, a marker, a band edge).
fn check_hz(at: &str, v: f64, out: &mut Vec<String>) {
    if !(v.is_finite() && v.abs() <= MAX_PICTURE_HZ) {
        out.push(format!(
            "{at}: {} Hz is not a frequency (finite, within ±{MAX_PICTURE_HZ:e} Hz)",
            num(v)
        ));
    }
}

/// A level drawn on a picture.
fn check_db(at: &str, v: f64, out: &mut Vec<String>) {
    if !(v.is_finite() && v.abs() <= MAX_PICTURE_DB) {
        out.push(format!(
            "{at}: {} dB is not a level (finite, within ±{MAX_PICTURE_DB} dB)",
            num(v)
        ));
    }
}

/// Every level of a trace or a heatmap: the first bad one is named.
fn check_levels<'a>(at: &str, v: impl Iterator<Item = &'a f32>, out: &mut Vec<String>) {
    if let Some(bad) = v
        .map(|x| f64::from(*x))
        .find(|x| !(x.is_finite() && x.abs() <= MAX_PICTURE_DB))
    {
        out.push(format!(
            "{at}: a level of {} dB is not a level (finite, within ±{MAX_PICTURE_DB} dB)",
            num(bad)
        ));
    }
}

/// `[low, high]` frequency ranges.
fn check_ranges(at: &str, r: &[[f64; 2]], out: &mut Vec<String>) {
    for (k, [a, b]) in r.iter().enumerate() {
        check_hz(&format!("{at}[{k}][0]"), *a, out);
        check_hz(&format!("{at}[{k}][1]"), *b, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::plot::MarkerKind;

    fn drawn(of: PictureOf, index: u32, bins: usize, repeats: usize) -> Drawn {
        let mut db: Vec<f64> = (0..bins)
            .map(|i| -90.0 + ((i * 7919) % 13) as f64 * 0.37)
            .collect();
        db[bins / 3] = -20.0;
        for v in &mut db[bins / 2..bins / 2 + bins / 20] {
            *v = f64::NAN;
        }
        let plot = SpectrumPlot {
            title: format!("T · {index}"),
            trace: Trace {
                start_hz: 88e6,
                step_hz: 1e3,
                db: db.clone(),
                low_db: Vec::new(),
            },
            peaks: vec![(88e6 + 1e3 * (bins / 3) as f64, -20.0)],
            noise_floor_db: Some(-89.0),
            markers: vec![Marker {
                hz: 90e6,
                label: "CLKIN expected".into(),
                kind: MarkerKind::Expected,
            }],
            failed_hz: vec![[95e6, 96e6]],
            band_hz: None,
            freq_known: true,
            clkin: None,
        };
        let heatmap = (repeats > 1).then(|| Heatmap {
            title: "h".into(),
            start_hz: 88e6,
            step_hz: 1e3,
            row_time_s: (0..repeats).map(|r| r as f64).collect(),
            rows: vec![db; repeats],
            failed_hz: vec![[95e6, 96e6]],
        });
        Drawn {
            of,
            index,
            plot,
            heatmap,
        }
    }

    /// A 65 536-bin spectrum becomes 1024 displayed bins carrying min, max and
    /// mean; the peak survives in `max_db`; gaps stay `null`; the axis still spans
    /// the same band.
    #[test]
    fn a_spectrum_is_decimated_to_min_max_mean_with_its_axis() {
        let p = Pictures::of(
            &[drawn(PictureOf::Capture, 1, 65536, 1)],
            MAX_PICTURES_BYTES,
        )
        .unwrap();
        let s = &p.spectra[0];
        assert_eq!(s.max_db.len(), MAX_POINTS);
        assert_eq!(s.step_hz, 64e3);
        assert!((s.start_hz - (88e6 + 31.5e3)).abs() < 1e-6);
        let peak = s.max_db.iter().flatten().fold(f32::MIN, |a, b| a.max(*b));
        assert_eq!(peak, -20.0);
        assert!(s.min_db.iter().flatten().all(|v| *v < -85.0));
        for i in 0..MAX_POINTS {
            if let (Some(a), Some(b), Some(m)) = (s.min_db[i], s.max_db[i], s.mean_db[i]) {
                assert!(a <= m && m <= b, "{i}: {a} {m} {b}");
            }
        }
        assert!(s.max_db.iter().any(Option::is_none));
        assert!(p.published_bytes() <= MAX_PICTURES_BYTES);
        // What is drawn is the max-held trace on the same axis.
        let plot = s.plot();
        assert_eq!(plot.trace.db.len(), MAX_POINTS);
        assert_eq!(plot.markers.len(), 1);
        assert_eq!(s.file_name(), "SPECTRUM_1.png");
    }

    /// Many pictures stay within the bound: the resolution halves first, then
    /// pictures are left out and named; the JSON round-trips exactly.
    #[test]
    fn many_pictures_stay_within_the_bound() {
        let d: Vec<Drawn> = (1..=40)
            .map(|i| drawn(PictureOf::Sweep, i, 4000, 8))
            .collect();
        let p = Pictures::of(&d, MAX_PICTURES_BYTES).unwrap();
        let text = serde_json::to_string_pretty(&p).unwrap();
        assert!(p.published_bytes() <= MAX_PICTURES_BYTES, "{}", text.len());
        assert!(p.spectra.len() < 40 && !p.omitted.is_empty());
        assert_eq!(p.spectra.len() + p.omitted.len(), 40);
        assert!(p.omitted[0].contains("SWEEP_"), "{:?}", p.omitted);
        let back: Pictures = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p);
        // One sweep fits at full resolution: 4000 bins in 1000 displayed bins of 4.
        let few = Pictures::of(&d[..1], MAX_PICTURES_BYTES).unwrap();
        assert_eq!(few.spectra[0].max_db.len(), 1000);
        assert_eq!(few.spectra[0].step_hz, 4e3);
        let tight = Pictures::of(&d[..2], 30 * 1024).unwrap();
        assert!(tight.published_bytes() <= 30 * 1024);
        assert_eq!(tight.spectra.len(), 2);
        assert!(tight.spectra[0].max_db.len() < 1000);
        assert_eq!(few.heatmaps.len(), 1);
        assert_eq!(few.heatmaps[0].rows.len(), 8);
        assert_eq!(few.heatmaps[0].rows[0].len(), 4000_usize.div_ceil(16));
        assert!(few.heatmaps[0].rows[0].len() <= MAX_HEATMAP_COLUMNS);
        assert_eq!(few.heatmaps[0].file_name(), "SWEEP_1_heatmap.png");
        assert!(Pictures::of(&[], MAX_PICTURES_BYTES).is_none());
        assert!(Pictures::of(&d[..1], 100).is_none());
    }

    /// More repeats than rows are max-held together, keeping the first row's time.
    #[test]
    fn a_long_heatmap_is_held_to_its_row_bound() {
        let p = Pictures::of(&[drawn(PictureOf::Sweep, 3, 500, 200)], MAX_PICTURES_BYTES).unwrap();
        let h = &p.heatmaps[0];
        assert_eq!(h.rows.len(), 200_usize.div_ceil(4));
        assert_eq!(h.row_time_s[1], 4.0);
        assert_eq!(h.heatmap().rows.len(), h.rows.len());
    }
}
