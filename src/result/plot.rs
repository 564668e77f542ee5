//! Pictures an SDR engineer can read (issue 17): spectrum PNGs with a frequency axis
//! in MHz, a dBFS axis, a title, labelled peaks, the noise-floor line, CLKIN markers
//! and shaded failed hops; and a frequency × time heatmap with its dB colour scale.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (plotters' `ab_glyph`
//! backend), so a fresh machine with no system fonts renders the same picture.
//! Licence: `src/assets/DejaVuSans-LICENSE.txt` (Bitstream Vera licence; DejaVu
//! changes are public domain — embedding is allowed).
use anyhow::{Context, Result};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
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
pub struct Trace {
    /// Frequency of point 0, Hz.
    pub start_hz: f64,
    /// Spacing, Hz.
    pub step_hz: f64,
    /// dBFS per point; NaN = no data (drawn as a gap, never joined).
    pub db: Vec<f64>,
}

/// A vertical marker (CLKIN expected / measured tone).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Where, Hz.
    pub hz: f64,
    /// Its label.
    pub label: String,
    /// Expected (dashed green) or measured (solid magenta).
    pub measured: bool,
}

/// Everything one spectrum picture shows.
#[derive(Debug, Clone, PartialEq)]
pub struct SpectrumPlot {
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
pub struct Heatmap {
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

/// Picture size of a spectrum PNG.
pub const SPECTRUM_SIZE: (u32, u32) = (1200, 560);

/// Write a spectrum PNG.
pub fn write_spectrum(path: &Path, p: &SpectrumPlot) -> Result<()> {
    atomically(path, |tmp| {
        let root = BitMapBackend::new(tmp, SPECTRUM_SIZE).into_drawing_area();
        draw_spectrum(&root, p, true)?;
        root.present().map_err(err)
    })
}

fn draw_spectrum<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    p: &SpectrumPlot,
    text: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    font_ready()?;
    let (x0h, step, vals) = decimate(p.trace.start_hz, p.trace.step_hz, &p.trace.db, MAX_POINTS);
    anyhow::ensure!(
        vals.iter().any(|v| v.is_finite()),
        "no finite PSD values to plot"
    );
    anyhow::ensure!(
        x0h.is_finite() && step.is_finite() && step > 0.0,
        "plot: frequency axis start {x0h} Hz step {step} Hz is not usable"
    );
    let lo = vals
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min)
        .max(-250.0);
    let hi = vals
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let (y0, y1) = (lo - 5.0, hi.max(lo + 1.0) + 10.0);
    // MHz on the axis, or bins when the frequency is unknown.
    let scale = if p.freq_known { 1e6 } else { 1.0 };
    let x0 = x0h / scale;
    let x1 = (x0h + step * (vals.len().max(2) - 1) as f64) / scale;
    let x1 = if x1 > x0 { x1 } else { x0 + 1e-6 };
    root.fill(&WHITE).map_err(err)?;
    let dec = if p.freq_known {
        mhz_decimals(x1 - x0)
    } else {
        0
    };
    let mut b = ChartBuilder::on(root);
    b.margin(14);
    if text {
        b.caption(&p.title, (FAMILY, 16))
            .x_label_area_size(48)
            .y_label_area_size(72);
    } else {
        b.x_label_area_size(48).y_label_area_size(72);
    }
    let mut chart = b.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?;
    let xfmt = |v: &f64| format!("{v:.dec$}");
    let yfmt = |v: &f64| format!("{v:.0}");
    let blank = |_: &f64| String::new();
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205))
        .x_labels(12)
        .y_labels(10);
    if text {
        mesh.x_desc(if p.freq_known {
            "Frequency (MHz)"
        } else {
            "FFT bin (centre frequency unknown)"
        })
        .y_desc("Power (dBFS per bin)")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .x_label_formatter(&xfmt)
        .y_label_formatter(&yfmt);
    } else {
        mesh.label_style((FAMILY, 14))
            .x_label_formatter(&blank)
            .y_label_formatter(&blank);
    }
    mesh.draw().map_err(err)?;
    // Failed hops: shaded, labelled, never joined over.
    for r in &p.failed_hz {
        let (a, z) = ((r[0] / scale).max(x0), (r[1] / scale).min(x1));
        if z > a {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, y0), (z, y1)],
                    RGBColor(255, 215, 215).filled(),
                )))
                .map_err(err)?;
            if text {
                chart
                    .draw_series(std::iter::once(Text::new(
                        "hop failed",
                        (a, y1 - 2.0),
                        (FAMILY, 12).into_font().color(&RGBColor(170, 0, 0)),
                    )))
                    .map_err(err)?;
            }
        }
    }
    // The trace, one segment per run of measured points.
    let mut seg: Vec<(f64, f64)> = Vec::new();
    let blue = RGBColor(20, 70, 200);
    let mut segments = Vec::new();
    for (i, v) in vals.iter().enumerate() {
        if v.is_finite() {
            seg.push(((x0h + step * i as f64) / scale, v.max(y0)));
        } else if !seg.is_empty() {
            segments.push(std::mem::take(&mut seg));
        }
    }
    if !seg.is_empty() {
        segments.push(seg);
    }
    for s in segments {
        chart
            .draw_series(LineSeries::new(s, blue.stroke_width(1)))
            .map_err(err)?;
    }
    if let Some(f) = p.noise_floor_db.filter(|f| f.is_finite()) {
        chart
            .draw_series(LineSeries::new(
                [(x0, f), (x1, f)],
                RGBColor(200, 30, 30).stroke_width(1),
            ))
            .map_err(err)?;
        if text {
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("noise floor {f:.1} dBFS"),
                    (x0 + (x1 - x0) * 0.86, f + 5.5),
                    (FAMILY, 13).into_font().color(&RGBColor(200, 30, 30)),
                )))
                .map_err(err)?;
        }
    }
    for m in &p.markers {
        let x = m.hz / scale;
        if !(x >= x0 && x <= x1) {
            continue;
        }
        let colour = if m.measured {
            RGBColor(190, 0, 190)
        } else {
            RGBColor(0, 140, 60)
        };
        if m.measured {
            chart
                .draw_series(LineSeries::new([(x, y0), (x, y1)], colour.stroke_width(2)))
                .map_err(err)?;
        } else {
            // Dashed: short segments.
            let n = 40;
            let dy = (y1 - y0) / f64::from(n);
            chart
                .draw_series((0..n).step_by(2).map(|i| {
                    PathElement::new(
                        vec![(x, y0 + dy * f64::from(i)), (x, y0 + dy * f64::from(i + 1))],
                        colour.stroke_width(2),
                    )
                }))
                .map_err(err)?;
        }
    }
    // The markers' legend, at the top on the side away from the strongest peak
    // (a marker line alone would hide its label under the tone it marks, and the
    // strongest peak's own label sits at the top, right of the peak).
    if text {
        let left = legend_left_frac(
            p.peaks
                .first()
                .map(|&(hz, _)| (hz / scale - x0) / (x1 - x0)),
        );
        for (k, m) in p.markers.iter().enumerate() {
            let colour = if m.measured {
                RGBColor(190, 0, 190)
            } else {
                RGBColor(0, 140, 60)
            };
            let y = y1 - (y1 - y0) * (0.03 + 0.045 * k as f64);
            let xa = x0 + (x1 - x0) * left;
            let xb = x0 + (x1 - x0) * (left + 0.03);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(xa, y), (xb, y)],
                    colour.stroke_width(2),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    m.label.clone(),
                    (xb + (x1 - x0) * 0.005, y + (y1 - y0) * 0.012),
                    (FAMILY, 13).into_font().color(&colour),
                )))
                .map_err(err)?;
        }
    }
    for (k, (hz, db)) in p.peaks.iter().take(8).enumerate() {
        let x = hz / scale;
        if !(x >= x0 && x <= x1 && db.is_finite()) {
            continue;
        }
        chart
            .draw_series(std::iter::once(TriangleMarker::new(
                (x, *db + 1.5),
                6,
                RGBColor(230, 120, 0).filled(),
            )))
            .map_err(err)?;
        if text {
            let pdec = (dec + 3).min(6);
            chart
                .draw_series(std::iter::once(Text::new(
                    format!(
                        "{}: {x:.pdec$} {} {db:.1} dBFS",
                        k + 1,
                        if p.freq_known { "MHz" } else { "bin" }
                    ),
                    (x + (x1 - x0) * 0.004, *db + 3.0 + 2.5 * (k % 2) as f64),
                    (FAMILY, 12).into_font().color(&RGBColor(150, 70, 0)),
                )))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// Where the marker legend starts, as a fraction of the x axis, given where the
/// strongest peak stands (0 … 1): right of the axis' middle → the left edge, else
/// the right part, clear of the peak's label (about a fifth of the width).
fn legend_left_frac(peak: Option<f64>) -> f64 {
    match peak {
        Some(f) if f >= 0.5 => 0.03,
        _ => 0.72,
    }
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

fn num(v: &serde_json::Value, path: &[&str]) -> Option<f64> {
    let mut v = v;
    for k in path {
        v = v.get(*k)?;
    }
    v.as_f64().filter(|x| x.is_finite())
}

/// The picture of one capture of a result: its PSD on an absolute MHz axis
/// (from `psd_start_hz`/`psd_step_hz`, else the actual centre and rate), the
/// reported peaks, the noise floor and the CLKIN tones. `None` without a PSD.
pub fn capture_plot(
    r: &crate::result::RxResult,
    n: usize,
    c: &serde_json::Value,
) -> Option<SpectrumPlot> {
    let db: Vec<f64> = c
        .get("psd_db")?
        .as_array()?
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect();
    if !db.iter().any(|v| v.is_finite()) {
        return None;
    }
    let centre = num(c, &["actual", "frequency_hz"]).or(num(c, &["requested", "frequency_hz"]));
    let rate = num(c, &["actual", "sample_rate_hz"]).or(num(c, &["requested", "sample_rate_hz"]));
    let (start, step, known) = match (num(c, &["psd_start_hz"]), num(c, &["psd_step_hz"])) {
        (Some(a), Some(s)) if s > 0.0 => (a, s, true),
        _ => match (centre, rate) {
            (Some(f), Some(rt)) if rt > 0.0 => {
                let s = rt / db.len() as f64;
                (f - rt / 2.0 + s / 2.0, s, true)
            }
            _ => (0.0, 1.0, false),
        },
    };
    let device = match c.get("device") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(d) => d
            .get("args")
            .and_then(|a| a.as_str())
            .unwrap_or("?")
            .to_owned(),
        None => "?".into(),
    };
    let fmt_mhz = |v: Option<f64>| {
        v.map(|f| format!("{:.6} MHz", f / 1e6))
            .unwrap_or("? MHz".into())
    };
    // The plan step this capture came from: the n-th rx_capture check.
    let step_name = r
        .checks
        .iter()
        .filter(|c| c.name.contains("rx_capture"))
        .nth(n - 1)
        .and_then(|c| c.name.split(':').next().map(str::to_owned))
        .unwrap_or_else(|| format!("capture {n}"));
    let title = format!(
        "{} · {step_name} · {} · centre {} · {} MS/s · {}",
        r.task_id,
        short(&device, 32),
        fmt_mhz(centre),
        rate.map(|v| format!("{:.3}", v / 1e6))
            .unwrap_or("?".into()),
        r.timeline.started_at.as_deref().unwrap_or("time unknown")
    );
    let peaks = c
        .get("peaks")
        .and_then(|p| p.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((num(p, &["frequency_hz"])?, num(p, &["power_db"])?)))
                .collect()
        })
        .unwrap_or_default();
    let mut markers = Vec::new();
    if let Some(t) = num(c, &["clkin", "tone_hz"]) {
        markers.push(Marker {
            hz: t,
            label: format!("CLKIN expected {:.6} MHz", t / 1e6),
            measured: false,
        });
    }
    if let Some(m) = num(c, &["clkin", "measured_hz"]) {
        let ppm = num(c, &["clkin", "ppm"])
            .map(|p| format!(" ({} ppm)", rxnode_hw::fmt_ppm(p, 3)))
            .unwrap_or_default();
        markers.push(Marker {
            hz: m,
            label: format!("measured {:.6} MHz{ppm}", m / 1e6),
            measured: true,
        });
    }
    Some(SpectrumPlot {
        title,
        trace: Trace {
            start_hz: start,
            step_hz: step,
            db,
        },
        peaks,
        noise_floor_db: num(c, &["noise_floor_db"]),
        markers,
        failed_hz: Vec::new(),
        freq_known: known,
    })
}

/// Draw a bare PSD (dB per bin, frequency unknown) with a bin axis.
#[cfg(test)]
pub fn write_spectrum_png(path: &Path, psd_db: &[f64]) -> Result<()> {
    write_spectrum(
        path,
        &SpectrumPlot {
            title: "PSD (centre frequency unknown)".into(),
            trace: Trace {
                start_hz: 0.0,
                step_hz: 1.0,
                db: psd_db.to_vec(),
            },
            peaks: Vec::new(),
            noise_floor_db: None,
            markers: Vec::new(),
            failed_hz: Vec::new(),
            freq_known: false,
        },
    )
}

/// Write `SPECTRUM_<n>.png` beside the result for every capture carrying a
/// `psd_db` array; returns the files written.
pub fn write_spectrum_pngs(
    dir: &Path,
    r: &crate::result::RxResult,
) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for (i, c) in r.captures.iter().enumerate() {
        if let Some(p) = capture_plot(r, i + 1, c) {
            let path = dir.join(crate::result::model::spectrum_png_name(i + 1));
            write_spectrum(&path, &p)?;
            out.push(path);
        }
    }
    Ok(out)
}

/// Viridis-like colour for `t` in 0..1.
fn colour_of(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round().clamp(0.0, 255.0) as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Write a heatmap PNG: frequency (MHz) × time (s), a dB colour scale with its legend.
pub fn write_heatmap(path: &Path, h: &Heatmap) -> Result<()> {
    font_ready()?;
    anyhow::ensure!(!h.rows.is_empty(), "no rows to plot");
    let width = h.rows.iter().map(Vec::len).max().unwrap_or(0);
    anyhow::ensure!(width > 0, "no columns to plot");
    // At most 600 rows (max-held in groups) and 1000 columns: a picture, not a dump.
    let group = h.rows.len().div_ceil(600).max(1);
    let rows: Vec<(f64, f64, Vec<f64>)> = h
        .rows
        .chunks(group)
        .map(|g| {
            let w = g.iter().map(Vec::len).max().unwrap_or(0);
            let merged: Vec<f64> = (0..w)
                .map(|i| {
                    g.iter()
                        .filter_map(|r| r.get(i).copied())
                        .filter(|v| v.is_finite())
                        .fold(f64::NAN, f64::max)
                })
                .collect();
            decimate(h.start_hz, h.step_hz, &merged, 1000)
        })
        .collect();
    let row_times: Vec<f64> = h.row_time_s.iter().step_by(group).copied().collect();
    let (x0h, step) = (rows[0].0, rows[0].1);
    let finite = rows
        .iter()
        .flat_map(|r| r.2.iter())
        .copied()
        .filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    anyhow::ensure!(lo.is_finite(), "no finite values to plot");
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let cols = rows.iter().map(|r| r.2.len()).max().unwrap_or(1);
    let x0 = x0h / 1e6 - step / 2e6;
    let x1 = (x0h + step * cols as f64) / 1e6 - step / 2e6;
    // Row r spans from its own start time to the next row's (the last one the mean
    // spacing): rows touch, with no gap and no overlap, however uneven the times.
    let n = rows.len();
    let times: Vec<f64> = (0..n)
        .map(|r| {
            row_times
                .get(r)
                .copied()
                .filter(|t| t.is_finite())
                .unwrap_or(r as f64)
        })
        .collect();
    let span = times[n - 1] - times[0];
    let mean = if n > 1 && span > 0.0 {
        span / (n - 1) as f64
    } else {
        1.0
    };
    let mut edges: Vec<f64> = times.clone();
    edges.push(times[n - 1] + mean);
    for i in 1..edges.len() {
        if edges[i] <= edges[i - 1] {
            edges[i] = edges[i - 1] + mean * 1e-3;
        }
    }
    let (t0, t1) = (edges[0], edges[n]);
    let dec = mhz_decimals(x1 - x0);
    let ddec = db_decimals(hi - lo);
    atomically(path, |tmp| {
        let root = BitMapBackend::new(tmp, (1200, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (main, legend) = root.split_horizontally(1080);
        let mut chart = ChartBuilder::on(&main)
            .margin(14)
            .caption(&h.title, (FAMILY, 16))
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, t1..t0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("Frequency (MHz)")
            .y_desc("Sweep start time (s since the first)")
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 15))
            .x_labels(12)
            .x_label_formatter(&|v| format!("{v:.dec$}"))
            .y_label_formatter(&|v| format!("{v:.3}"))
            .draw()
            .map_err(err)?;
        for (r, (_, _, vals)) in rows.iter().enumerate() {
            let (ta, tb) = (edges[r], edges[r + 1]);
            chart
                .draw_series(vals.iter().enumerate().map(|(i, v)| {
                    let xa = (x0h + step * (i as f64 - 0.5)) / 1e6;
                    let xb = (x0h + step * (i as f64 + 0.5)) / 1e6;
                    let c = if v.is_finite() {
                        colour_of((v - lo) / (hi - lo))
                    } else {
                        RGBColor(255, 255, 255)
                    };
                    Rectangle::new([(xa, ta), (xb, tb)], c.filled())
                }))
                .map_err(err)?;
        }
        // The colour legend: a bar from lo (bottom) to hi (top) with a dB axis.
        let mut lc = ChartBuilder::on(&legend)
            .margin_top(50)
            .margin_bottom(62)
            .margin_right(8)
            .y_label_area_size(58)
            .build_cartesian_2d(0.0..1.0, lo..hi)
            .map_err(err)?;
        lc.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_desc("dBFS")
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 14))
            .y_label_formatter(&|v| format!("{v:.ddec$}"))
            .draw()
            .map_err(err)?;
        let steps = 100;
        lc.draw_series((0..steps).map(|i| {
            let a = lo + (hi - lo) * f64::from(i) / f64::from(steps);
            let b = lo + (hi - lo) * f64::from(i + 1) / f64::from(steps);
            Rectangle::new(
                [(0.0, a), (1.0, b)],
                colour_of(f64::from(i) / f64::from(steps - 1)).filled(),
            )
        }))
        .map_err(err)?;
        root.present().map_err(err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::test_util::ran;
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
                    measured: false,
                },
                Marker {
                    hz: 100.002e6,
                    label: "measured".into(),
                    measured: true,
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

    /// Issue 17: the axis labels, the axis names and the title are really drawn:
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
