//! Pictures an SDR engineer can read: spectrum PNGs with a frequency axis
//! in MHz, a dBFS axis, a title, labelled peaks, the noise-floor line, CLKIN markers
//! and shaded failed hops; and a frequency × time heatmap with its dB colour scale.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (plotters' `ab_glyph`
//! backend), so a fresh machine with no system fonts renders the same picture.
//! Licence: `src/assets/DejaVuSans-LICENSE` (Bitstream Vera licence; DejaVu
//! changes are public domain — embedding is allowed).
use anyhow::{Context, Result};
use plotters::prelude::{BitMapBackend, DrawingArea, IntoFont, Text, TextStyle};
use plotters::style::FontStyle;
use std::path::Path;

mod capture;
mod compare;
#[cfg(test)]
mod extreme_tests;
mod freq_cal;
mod heatmap;
mod spectrum;

pub(crate) use capture::short;
#[cfg(test)]
pub(crate) use capture::write_spectrum_png;
pub(crate) use capture::write_spectrum_pngs;
pub(crate) use capture::{capture_plot, live_spectrum};
pub(crate) use compare::{write_compare, write_compare_png_of, write_compare_pngs, ComparePlot};
pub(crate) use freq_cal::write_freq_cal_png;
pub(crate) use heatmap::write_heatmap;
pub(crate) use spectrum::write_spectrum;

static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
const FAMILY: &str = "rxnode-sans";

fn font_ready() -> Result<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    anyhow::ensure!(ok, "the embedded font cannot be loaded");
    Ok(())
}

/// Draw `title` centred at the top of `area`, broken at its ` · ` separators
/// into as many lines as it needs to fit the width (never clipped at the
/// edges); returns the area below it, a gap included.
fn draw_title<'a>(
    area: &DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>,
    title: &str,
    px: u32,
) -> Result<DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let style = TextStyle::from((FAMILY, px).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    let width = area.dim_in_pixel().0.saturating_sub(60);
    let fits = |t: &str| {
        area.estimate_text_size(t, &style)
            .map(|(w, _)| w <= width)
            .unwrap_or(true)
    };
    let lines = wrap_title(title, fits);
    let line_h = px + 4;
    let cx = i32::try_from(area.dim_in_pixel().0 / 2).unwrap_or(0);
    for (i, l) in lines.iter().enumerate() {
        let y = 8 + i32::try_from(i).unwrap_or(0) * i32::try_from(line_h).unwrap_or(20);
        area.draw(&Text::new(l.as_str(), (cx, y), style.clone()))
            .map_err(err)?;
    }
    let used = 8 + line_h * u32::try_from(lines.len()).unwrap_or(1) + 6;
    Ok(area.split_vertically(used).1)
}

/// `title` as lines that each `fit`, broken only at its ` · ` separators.
fn wrap_title(title: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for part in title.split(" · ") {
        match lines.last_mut() {
            Some(l) if fits(&format!("{l} · {part}")) => {
                l.push_str(" · ");
                l.push_str(part);
            }
            _ => lines.push(part.to_owned()),
        }
    }
    lines
}

/// Most points drawn per trace (max-held), so a 6 GHz sweep stays a picture.
const MAX_POINTS: usize = 4000;

/// One spectrum: dB per bin on a regular grid; NaN where nothing was measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trace {
    /// Frequency of point 0, Hz.
    pub start_hz: f64,
    /// Spacing, Hz.
    pub step_hz: f64,
    /// dBFS per point; NaN = no data (drawn as a gap, never joined).
    pub db: Vec<f64>,
    /// The lowest bin behind each point of a decimated trace (the published
    /// summary), drawn as the band from it to `db`; empty when `db` is every bin.
    pub low_db: Vec<f64>,
}

/// A vertical marker (CLKIN expected / measured tone).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Marker {
    /// Where, Hz.
    pub hz: f64,
    /// Its label.
    pub label: String,
    /// Expected (dashed green), measured (solid magenta) or another carrier in the
    /// CLKIN search window (solid orange).
    pub kind: MarkerKind,
}

/// What a CLKIN marker marks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MarkerKind {
    /// The reference tone's true frequency.
    Expected,
    /// The reference tone as measured.
    Measured,
    /// Another carrier seen in the search window (a rival or a weaker one).
    Other,
}

/// Everything one spectrum picture shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpectrumPlot {
    /// Title line (task, step, device, centre, rate, time).
    pub title: String,
    /// The trace.
    pub trace: Trace,
    /// Peaks to mark and label, `(Hz, dBFS)`, strongest first.
    pub peaks: Vec<(f64, f64)>,
    /// The noise floor, dBFS per bin.
    pub noise_floor_db: Option<f64>,
    /// CLKIN markers.
    pub markers: Vec<Marker>,
    /// Ranges with no data (failed hops), `[low, high]` Hz.
    pub failed_hz: Vec<[f64; 2]>,
    /// `false` when the trace's axis is FFT bins, not Hz (a bare PSD).
    pub freq_known: bool,
    /// The CLKIN check, drawn zoomed in an inset: expected and measured tone
    /// side by side, with the error in ppm and the verdict.
    pub clkin: Option<ClkinInset>,
    /// The band asked for (a sweep's `[start, stop]`, Hz): its edges are labelled
    /// with their own values on the axis.
    pub band_hz: Option<[f64; 2]>,
}

/// What the CLKIN inset shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClkinInset {
    /// The reference tone's true frequency, Hz.
    pub expected_hz: f64,
    /// As measured, Hz.
    pub measured_hz: Option<f64>,
    /// The error, ppm.
    pub ppm: Option<f64>,
    /// Its one-sigma uncertainty, ppm.
    pub ppm_uncertainty: Option<f64>,
    /// The tolerance, ± ppm (`null` in JSON when unknown).
    #[serde(deserialize_with = "nan_if_null")]
    #[schemars(with = "Option<f64>")]
    pub tolerance_ppm: f64,
    /// `PASS` or `FAIL`.
    pub status: String,
    /// Why, when the verdict is not the ppm's alone (a FAIL within tolerance).
    pub detail: Option<String>,
}

/// A number that JSON writes as `null` when it is not finite.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::Deserialize as _;
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A frequency × time picture: one row per repeat.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Heatmap {
    /// Title line.
    pub title: String,
    /// Frequency of column 0, Hz.
    pub start_hz: f64,
    /// Column spacing, Hz.
    pub step_hz: f64,
    /// Seconds since the first row, per row.
    pub row_time_s: Vec<f64>,
    /// dBFS per column, per row; NaN = no data.
    pub rows: Vec<Vec<f64>>,
    /// Ranges with no data because a hop failed, `[low, high]` Hz: drawn as a
    /// shaded, labelled band where their cells are empty.
    pub failed_hz: Vec<[f64; 2]>,
}

/// A number with at most `dec` decimals and no trailing zeros: `5`, `0.01`, `2.5`.
pub(crate) fn trim_number(v: f64, dec: usize) -> String {
    let s = format!("{v:.dec$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    };
    if s == "-0" {
        "0".to_owned()
    } else {
        s
    }
}

/// The axis range `[x0, x1]` widened to the nearest label a ~12-label axis
/// puts just outside it, when that is within 2 % of the span: the band's own
/// edges (88 and 108 MHz) then carry their labels.
pub(crate) fn snap_to_labels(x0: f64, x1: f64) -> (f64, f64) {
    let span = x1 - x0;
    if !(span.is_finite() && span > 0.0) {
        return (x0, x1);
    }
    let nice = label_step(span, X_LABELS);
    let up = (x1 / nice).ceil() * nice;
    let down = (x0 / nice).floor() * nice;
    let eps = span * 1e-9;
    let a = if x0 - down <= 0.02 * span {
        down - eps
    } else {
        x0
    };
    let b = if up - x1 <= 0.02 * span { up + eps } else { x1 };
    (a, b)
}

/// How many frequency labels an axis carries at most.
pub(crate) const X_LABELS: usize = 12;

/// The label spacing for a span: the finest of 10ᵏ, 10ᵏ/2, 10ᵏ/5 that gives at
/// most `max` labels (the grid the chart library draws its lines on).
pub(crate) fn label_step(span: f64, max: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let fits = |s: f64| (span / s).floor() + 1.0 <= max as f64;
    let mut scale = 10f64.powf(span.log10().floor());
    if !fits(scale) {
        scale *= 10.0;
    }
    // Finer and finer (÷2, ÷5, ÷10 of each decade) while the labels still fit.
    for _ in 0..64 {
        let old = scale;
        for nxt in [2.0, 5.0, 10.0] {
            let s = old / nxt;
            if !fits(s) {
                return scale;
            }
            scale = s;
        }
    }
    scale
}

/// A resolution bandwidth for people: `976.6 Hz`, `7.81 kHz`, `1.95 MHz`.
pub(crate) fn fmt_rbw(hz: f64) -> String {
    if hz >= 1e6 {
        format!("{:.3} MHz", hz / 1e6)
    } else if hz >= 1e3 {
        format!("{:.2} kHz", hz / 1e3)
    } else {
        format!("{hz:.1} Hz")
    }
}

/// The largest end an axis may have, in its own units (MHz, bins, dB, seconds,
/// radians): far beyond any picture of a radio, far below where sums overflow.
const MAX_AXIS_END: f64 = 1e15;

/// The narrowest axis, as a fraction of its ends' size: about 4500 steps of
/// f64's resolution, so labels can still be told apart.
const MIN_AXIS_WIDTH: f64 = 1e-12;

/// `lo..hi` as an axis the chart library can draw, else an error naming `what`:
/// both ends finite and at most [`MAX_AXIS_END`], the width positive, finite and
/// at least [`MIN_AXIS_WIDTH`] of the ends' size. The library's label search
/// never ends on an infinite range, and finds no labels on a degenerate one:
/// every chart is built through here, whatever it is given.
pub(crate) fn axis_range(what: &str, lo: f64, hi: f64) -> Result<std::ops::Range<f64>> {
    let width = hi - lo;
    let size = lo.abs().max(hi.abs());
    let ok = lo.is_finite()
        && hi.is_finite()
        && size <= MAX_AXIS_END
        && width.is_finite()
        && width > 0.0
        && width >= size * MIN_AXIS_WIDTH;
    let num = crate::result::pictures::num;
    anyhow::ensure!(
        ok,
        "plot: the {what} axis from {} to {} cannot be drawn (its ends must be finite, \
         at most {MAX_AXIS_END:e}, and apart by more than {MIN_AXIS_WIDTH:e} of their size)",
        num(lo),
        num(hi)
    );
    Ok(lo..hi)
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plot: {e}")
}

/// Max-hold decimation to at most `max` points: `(start, step, values)`.
fn decimate(start: f64, step: f64, v: &[f64], max: usize) -> (f64, f64, Vec<f64>) {
    if v.len() <= max || max == 0 {
        return (start, step, v.to_vec());
    }
    let k = v.len().div_ceil(max);
    let out = v
        .chunks(k)
        .map(|c| {
            c.iter()
                .copied()
                .filter(|x| x.is_finite())
                .fold(f64::NAN, f64::max)
        })
        .collect();
    (start + step * (k as f64 - 1.0) / 2.0, step * k as f64, out)
}

/// Decimals for MHz tick labels over a span of `span_mhz`.
fn mhz_decimals(span_mhz: f64) -> usize {
    if span_mhz >= 50.0 {
        0
    } else if span_mhz >= 5.0 {
        1
    } else if span_mhz >= 0.5 {
        2
    } else if span_mhz >= 0.05 {
        3
    } else {
        4
    }
}

/// Decimals for dB labels over a span of `span_db`: a colour scale only 1.4 dB
/// wide must not read "-82, -82, -82, …, -83".
fn db_decimals(span_db: f64) -> usize {
    if span_db >= 20.0 {
        0
    } else if span_db >= 2.0 {
        1
    } else {
        2
    }
}

/// An operator's output picture: with `replace` (`--force`) drawn over `path`
/// by `draw` (one of this module's writers); without it drawn beside `path`
/// and put there only if nothing is there yet — never over a file another
/// program wrote while the command ran
/// ([`crate::store::fsutil::place_new`]).
pub(crate) fn write_output(
    path: &Path,
    replace: bool,
    draw: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    if replace {
        return draw(path);
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("plot");
    let tmp = path.with_file_name(format!(".{stem}.new-{}.png", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let r = draw(&tmp).and_then(|()| crate::store::fsutil::place_new(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Write atomically: draw into a temporary PNG beside `path`, then rename.
fn atomically(path: &Path, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("plot");
    let tmp = path.with_file_name(format!(".{stem}.tmp-{}.png", std::process::id()));
    // Made here first, so a folder that is missing, not a folder, read-only or full
    // is said plainly (the drawing library would wrap the same error in its own).
    rxnode_dsp::open_regular_write(&tmp, rxnode_dsp::WriteMode::Truncate, false)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let r = draw(&tmp);
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return r;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    /// A long title is broken at its separators, every part kept, none clipped.
    #[test]
    fn a_long_title_wraps_at_its_separators() {
        let t = "rxnode sweep heatmap · PARTIAL: stopped after 3 of 10 passes · driver=rxsim · 2026-12-06T07:25:16+00:00";
        let lines = wrap_title(t, |l| l.chars().count() <= 55);
        assert_eq!(
            lines,
            [
                "rxnode sweep heatmap",
                "PARTIAL: stopped after 3 of 10 passes · driver=rxsim",
                "2026-12-06T07:25:16+00:00"
            ]
        );
        assert_eq!(wrap_title("a · b", |_| true), ["a · b"]);
    }

    use super::heatmap::colour_of;
    use super::spectrum::{draw_spectrum, legend_left_frac, SPECTRUM_SIZE};
    use super::*;
    use crate::result::test_util::ran;
    use plotters::prelude::*;
    use serde_json::Value;

    #[test]
    fn spectrum_png() {
        let d = tempfile::TempDir::new().unwrap();
        let r = ran(d.path());
        let files = write_spectrum_pngs(d.path(), &r).unwrap();
        assert_eq!(files, vec![d.path().join("SPECTRUM_1.png")]);
        let b = std::fs::read(&files[0]).unwrap();
        assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
        assert!(write_spectrum_png(&d.path().join("x.png"), &[f64::NAN]).is_err());
        let mut r2 = r.clone();
        r2.captures[0].other_mut()["psd_db"] = Value::Null;
        assert!(write_spectrum_pngs(d.path(), &r2).unwrap().is_empty());
    }

    fn plot() -> SpectrumPlot {
        let mut db = vec![-90.0; 2001];
        for (i, v) in db.iter_mut().enumerate() {
            *v += ((i * 7919) % 13) as f64 * 0.3;
        }
        db[700] = -25.0;
        db[1400] = -40.0;
        for v in &mut db[1600..1700] {
            *v = f64::NAN;
        }
        SpectrumPlot {
            title: "T1 · step 1 · driver=rxsim · 98.000 MHz · 10 MS/s".into(),
            trace: Trace {
                start_hz: 88e6,
                step_hz: 10e3,
                db,
                low_db: Vec::new(),
            },
            peaks: vec![(95e6, -25.0), (102e6, -40.0)],
            noise_floor_db: Some(-89.0),
            markers: vec![
                Marker {
                    hz: 100e6,
                    label: "CLKIN expected".into(),
                    kind: MarkerKind::Expected,
                },
                Marker {
                    hz: 100.002e6,
                    label: "measured".into(),
                    kind: MarkerKind::Measured,
                },
            ],
            failed_hz: vec![[104e6, 105e6]],
            freq_known: true,
            clkin: None,
            band_hz: Some([88e6, 108e6]),
        }
    }

    /// Render into memory; `text` on or off.
    fn pixels(p: &SpectrumPlot, text: bool) -> Vec<u8> {
        let (w, h) = SPECTRUM_SIZE;
        let mut buf = vec![0u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, SPECTRUM_SIZE).into_drawing_area();
            draw_spectrum(&root, p, text).unwrap();
            root.present().unwrap();
        }
        buf
    }

    /// Dark (text-coloured) pixels in the rectangle `x0..x1 × y0..y1`.
    fn dark(buf: &[u8], x0: u32, x1: u32, y0: u32, y1: u32) -> usize {
        let w = SPECTRUM_SIZE.0;
        let mut n = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                let i = ((y * w + x) * 3) as usize;
                if buf[i] < 90 && buf[i + 1] < 90 && buf[i + 2] < 90 {
                    n += 1;
                }
            }
        }
        n
    }

    /// The axis labels, the axis names and the title are really drawn:
    /// the label areas hold text-coloured pixels with text on, and none with it
    /// off — so this fails if the labels vanish (e.g. no font backend).
    #[test]
    fn axis_labels_and_title_are_drawn() {
        let (w, h) = SPECTRUM_SIZE;
        let on = pixels(&plot(), true);
        let off = pixels(&plot(), false);
        // Below the x axis (tick labels + "Frequency (MHz)"), left of the y axis,
        // and the caption band at the top.
        let areas = [
            ("x labels", 100, w - 20, h - 55, h - 14),
            ("y labels", 14, 80, 60, h - 70),
            ("title", 100, w - 100, 0, 36),
        ];
        for (what, x0, x1, y0, y1) in areas {
            let a = dark(&on, x0, x1, y0, y1);
            let b = dark(&off, x0, x1, y0, y1);
            assert!(a > 200, "{what}: only {a} text pixels with text on");
            assert!(
                b < a / 10,
                "{what}: {b} dark pixels with text off vs {a} on"
            );
        }
    }

    /// Pixels of exactly this colour in the rectangle.
    fn count_colour(buf: &[u8], c: RGBColor, x0: u32, x1: u32, y0: u32, y1: u32) -> Vec<u32> {
        let w = SPECTRUM_SIZE.0;
        let mut xs = Vec::new();
        for y in y0..y1 {
            for x in x0..x1 {
                let i = ((y * w + x) * 3) as usize;
                if (buf[i], buf[i + 1], buf[i + 2]) == (c.0, c.1, c.2) {
                    xs.push(x);
                }
            }
        }
        xs
    }

    /// A CLKIN check 2.5 ppm low (−250 Hz at 100 MHz): FAIL against ±0.5 ppm.
    fn fail_2_5_ppm() -> ClkinInset {
        ClkinInset {
            expected_hz: 100e6,
            measured_hz: Some(100e6 - 250.0),
            ppm: Some(-2.5),
            ppm_uncertainty: Some(1e-6),
            tolerance_ppm: 0.5,
            status: "FAIL".into(),
            detail: None,
        }
    }

    /// A 2.5 ppm CLKIN FAIL: in the zoomed inset the expected (green) and
    /// measured (magenta) lines stand apart, so the picture cannot read as a PASS.
    #[test]
    fn the_clkin_inset_shows_expected_and_measured_apart() {
        let mut p = plot();
        p.peaks = vec![(100e6, -25.0)];
        p.clkin = Some(fail_2_5_ppm());
        let buf = pixels(&p, true);
        // The inset sits right of the axis' middle when the strongest peak is left of it.
        let (x0, x1, y0, y1) = (SPECTRUM_SIZE.0 - 440, SPECTRUM_SIZE.0 - 40, 140, 300);
        let green = count_colour(&buf, RGBColor(0, 140, 60), x0, x1, y0, y1);
        let magenta = count_colour(&buf, RGBColor(190, 0, 190), x0, x1, y0, y1);
        assert!(
            green.len() > 20 && magenta.len() > 20,
            "{} {}",
            green.len(),
            magenta.len()
        );
        let mean = |v: &[u32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        assert!(
            mean(&magenta) + 20.0 < mean(&green),
            "measured (−250 Hz) left of expected: {} vs {}",
            mean(&magenta),
            mean(&green)
        );
    }

    /// The CLKIN inset never hides a labelled peak: with a second emitter where the
    /// inset would go (right of the strongest peak), it moves to the quiet left, and
    /// the second peak's marker stays in view.
    #[test]
    fn the_clkin_inset_keeps_clear_of_every_labelled_peak() {
        let mut p = plot();
        for v in &mut p.trace.db[690..1410] {
            *v = -90.0;
        }
        p.trace.db[1200] = -25.0;
        p.trace.db[1500] = -30.0;
        p.peaks = vec![(100e6, -25.0), (103e6, -30.0)];
        p.clkin = Some(fail_2_5_ppm());
        let buf = pixels(&p, true);
        let orange = RGBColor(230, 120, 0);
        let (w, _) = SPECTRUM_SIZE;
        // 103 MHz sits about three quarters across the axis: its marker is drawn.
        let near = count_colour(&buf, orange, w * 3 / 4 - 60, w * 3 / 4 + 60, 40, 340);
        assert!(
            near.len() > 10,
            "the second peak's marker is hidden: {}",
            near.len()
        );
        // The inset (its expected and measured lines) is on the left.
        let green = count_colour(&buf, RGBColor(0, 140, 60), 100, 500, 140, 300);
        let magenta = count_colour(&buf, RGBColor(190, 0, 190), 100, 500, 140, 300);
        assert!(
            green.len() > 20 && magenta.len() > 20,
            "{} {}",
            green.len(),
            magenta.len()
        );
    }

    #[test]
    fn failed_hops_of_every_repeat_merge_into_one_labelled_region() {
        let r = [
            [95e6, 96.5e6],
            [96.5e6, 98e6],
            [95e6, 96.5e6],
            [96.5e6, 98e6],
            [100e6, 101e6],
        ];
        let m = spectrum::merge_failed(&r, 1.0);
        assert_eq!(m, vec![([95e6, 98e6], 2), ([100e6, 101e6], 1)]);
    }

    #[test]
    fn axis_numbers_for_people() {
        assert_eq!(trim_number(5.0, 3), "5");
        assert_eq!(trim_number(0.010, 3), "0.01");
        assert_eq!(trim_number(-0.0001, 3), "0");
        // 88–107.995 MHz reaches its 108 label; a span well inside labels stays.
        let (a, b) = snap_to_labels(88.0, 107.995);
        assert!(a <= 88.0 && (108.0..108.001).contains(&b), "{a} {b}");
        assert_eq!(snap_to_labels(88.5, 107.0), (88.5, 107.0));
        assert_eq!(label_step(2.0, 12), 0.2);
        assert_eq!(label_step(20.0, 12), 2.0);
        assert_eq!(label_step(1.0, 12), 0.1);
        assert_eq!(fmt_rbw(488.28125), "488.3 Hz");
        assert_eq!(fmt_rbw(7812.5), "7.81 kHz");
    }

    #[test]
    fn files_are_written_and_bad_input_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.png");
        write_spectrum(&p, &plot()).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let mut bad = plot();
        bad.trace.db = vec![f64::NAN; 10];
        assert!(write_spectrum(&d.path().join("b.png"), &bad).is_err());
        assert!(!d.path().join("b.png").exists());
        let hm = Heatmap {
            title: "heatmap".into(),
            start_hz: 88e6,
            step_hz: 10e3,
            row_time_s: vec![0.0, 0.5, 1.0],
            rows: vec![plot().trace.db; 3],
            failed_hz: vec![[88.01e6, 88.03e6]],
        };
        let hp = d.path().join("h.png");
        write_heatmap(&hp, &hm).unwrap();
        assert_eq!(&std::fs::read(&hp).unwrap()[..4], b"\x89PNG");
        assert_eq!(colour_of(0.0), RGBColor(68, 1, 84));
        assert_eq!(colour_of(1.0), RGBColor(253, 231, 37));
    }

    #[test]
    fn the_marker_legend_keeps_clear_of_the_strongest_peak_label() {
        // The peak's label runs from the peak about 0.22 of the width to the
        // right; the legend (0.25 wide) must not share that stretch at the top.
        for i in 0..=100 {
            let f = f64::from(i) / 100.0;
            let l = legend_left_frac(Some(f));
            let (la, lb) = (l, l + 0.25);
            let (pa, pb) = (f, f + 0.22);
            assert!(lb <= pa || la >= pb, "peak at {f}: legend {la}..{lb}");
            assert!(lb <= 1.0);
        }
        // The CLKIN case the demo draws: tone just right of the centre.
        assert!(legend_left_frac(Some(0.55)) < 0.1);
    }

    #[test]
    fn db_labels_stay_distinct_on_a_narrow_colour_scale() {
        // Ten ticks across the span, as the legend draws them: every label differs.
        for span in [0.2, 1.4, 1.99, 2.0, 15.0, 19.9, 20.0, 80.0] {
            let d = db_decimals(span);
            let labels: std::collections::BTreeSet<String> = (0..=10)
                .map(|i| format!("{:.d$}", -82.9 + span * f64::from(i) / 10.0))
                .collect();
            assert_eq!(labels.len(), 11, "span {span} dB: {labels:?}");
        }
        assert_eq!(db_decimals(40.0), 0);
    }

    #[test]
    fn decimation_max_holds_and_keeps_gaps() {
        let v = vec![1.0, 5.0, f64::NAN, f64::NAN, 2.0, 3.0];
        let (s, st, out) = decimate(0.0, 1.0, &v, 3);
        assert_eq!(st, 2.0);
        assert_eq!(s, 0.5);
        assert_eq!(out[0], 5.0);
        assert!(out[1].is_nan());
        assert_eq!(out[2], 3.0);
    }
}
