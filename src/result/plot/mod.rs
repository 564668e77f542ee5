//! Pictures an SDR engineer can read: spectrum PNGs with a frequency axis
//! in MHz, a dBFS axis, a title, labelled peaks, the noise-floor line, CLKIN markers
//! and shaded failed hops; and a frequency × time heatmap with its dB colour scale.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (plotters' `ab_glyph`
//! backend), so a fresh machine with no system fonts renders the same picture.
//! Licence: `src/assets/DejaVuSans-LICENSE` (Bitstream Vera licence; DejaVu
//! changes are public domain — embedding is allowed).
use anyhow::{Context, Result};
use plotters::style::FontStyle;
use std::path::Path;

mod capture;
mod freq_cal;
mod heatmap;
mod spectrum;

pub(crate) use capture::clkin_markers_of;
#[cfg(test)]
pub(crate) use capture::write_spectrum_png;
pub(crate) use capture::write_spectrum_pngs;
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
}

/// A vertical marker (CLKIN expected / measured tone).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Marker {
    /// Where, Hz.
    pub hz: f64,
    /// Its label.
    pub label: String,
    /// Expected (dashed green), measured (solid magenta) or another carrier in the
    /// CLKIN search window (solid orange).
    pub kind: MarkerKind,
}

/// What a [`Marker`] marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Write atomically: draw into a temporary PNG beside `path`, then rename.
fn atomically(path: &Path, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("plot");
    let tmp = path.with_file_name(format!(".{stem}.tmp-{}.png", std::process::id()));
    let r = draw(&tmp);
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return r;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
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
        r2.captures[0]["psd_db"] = Value::Null;
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
