//! The spectrum picture: axes, failed hops, the trace, the noise floor, CLKIN
//! markers with their legend, and the labelled peaks; each drawn by a phase.
use super::{
    decimate, err, font_ready, mhz_decimals, MarkerKind, SpectrumPlot, FAMILY, MAX_POINTS,
};
use anyhow::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

/// Picture size of a spectrum PNG.
pub(crate) const SPECTRUM_SIZE: (u32, u32) = (1200, 560);

/// Write a spectrum PNG.
pub(crate) fn write_spectrum(path: &Path, p: &SpectrumPlot) -> Result<()> {
    super::atomically(path, |tmp| {
        let root = BitMapBackend::new(tmp, SPECTRUM_SIZE).into_drawing_area();
        draw_spectrum(&root, p, true)?;
        root.present().map_err(err)
    })
}

/// The chart every phase draws on: x in MHz (or bins), y in dBFS.
type Chart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// What the phases share: the plot, whether text is drawn, the decimated
/// trace and the axes' ranges.
struct Frame<'p> {
    p: &'p SpectrumPlot,
    text: bool,
    /// Frequency of the first decimated point, Hz.
    x0h: f64,
    /// Spacing of the decimated points, Hz.
    step: f64,
    vals: Vec<f64>,
    /// Hz per axis unit: 1e6 (MHz) or 1 (bins).
    scale: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Decimals of the x labels.
    dec: usize,
}

impl<'p> Frame<'p> {
    /// Decimate the trace and choose the axes; refuses a trace with nothing to draw.
    fn new(p: &'p SpectrumPlot, text: bool) -> Result<Frame<'p>> {
        let (x0h, step, vals) =
            decimate(p.trace.start_hz, p.trace.step_hz, &p.trace.db, MAX_POINTS);
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
        let dec = if p.freq_known {
            mhz_decimals(x1 - x0)
        } else {
            0
        };
        Ok(Frame {
            p,
            text,
            x0h,
            step,
            vals,
            scale,
            x0,
            x1,
            y0,
            y1,
            dec,
        })
    }
}

pub(super) fn draw_spectrum(
    root: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    p: &SpectrumPlot,
    text: bool,
) -> Result<()> {
    font_ready()?;
    let f = Frame::new(p, text)?;
    root.fill(&WHITE).map_err(err)?;
    let mut chart = draw_axes(root, &f)?;
    draw_failed_hops(&mut chart, &f)?;
    draw_trace(&mut chart, &f)?;
    draw_noise_floor(&mut chart, &f)?;
    draw_markers(&mut chart, &f)?;
    if text {
        draw_legend(&mut chart, &f)?;
    }
    draw_peaks(&mut chart, &f)
}

/// The chart with its mesh, and with text its caption, labels and axis names.
fn draw_axes<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    f: &Frame<'_>,
) -> Result<Chart<'a, 'b>> {
    let (p, text, dec) = (f.p, f.text, f.dec);
    let mut b = ChartBuilder::on(root);
    b.margin(14);
    if text {
        b.caption(&p.title, (FAMILY, 16))
            .x_label_area_size(48)
            .y_label_area_size(72);
    } else {
        b.x_label_area_size(48).y_label_area_size(72);
    }
    let mut chart = b.build_cartesian_2d(f.x0..f.x1, f.y0..f.y1).map_err(err)?;
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
    Ok(chart)
}

/// Failed hops: shaded, labelled, never joined over.
fn draw_failed_hops(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, y0, y1, scale) = (f.x0, f.x1, f.y0, f.y1, f.scale);
    for r in &f.p.failed_hz {
        let (a, z) = ((r[0] / scale).max(x0), (r[1] / scale).min(x1));
        if z > a {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, y0), (z, y1)],
                    RGBColor(255, 215, 215).filled(),
                )))
                .map_err(err)?;
            if f.text {
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
    Ok(())
}

/// The trace, one segment per run of measured points.
fn draw_trace(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0h, step, scale, y0) = (f.x0h, f.step, f.scale, f.y0);
    let mut seg: Vec<(f64, f64)> = Vec::new();
    let blue = RGBColor(20, 70, 200);
    let mut segments = Vec::new();
    for (i, v) in f.vals.iter().enumerate() {
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
    Ok(())
}

/// The noise floor line, with text its value.
fn draw_noise_floor(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1) = (f.x0, f.x1);
    if let Some(fl) = f.p.noise_floor_db.filter(|f| f.is_finite()) {
        chart
            .draw_series(LineSeries::new(
                [(x0, fl), (x1, fl)],
                RGBColor(200, 30, 30).stroke_width(1),
            ))
            .map_err(err)?;
        if f.text {
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("noise floor {fl:.1} dBFS"),
                    (x0 + (x1 - x0) * 0.86, fl + 5.5),
                    (FAMILY, 13).into_font().color(&RGBColor(200, 30, 30)),
                )))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// A marker's colour: measured magenta, expected green, other carriers orange.
fn marker_colour(kind: MarkerKind) -> RGBColor {
    match kind {
        MarkerKind::Measured => RGBColor(190, 0, 190),
        MarkerKind::Expected => RGBColor(0, 140, 60),
        MarkerKind::Other => RGBColor(230, 120, 0),
    }
}

/// The CLKIN markers: measured and other carriers solid, expected dashed.
fn draw_markers(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, y0, y1) = (f.x0, f.x1, f.y0, f.y1);
    for m in &f.p.markers {
        let x = m.hz / f.scale;
        if !(x >= x0 && x <= x1) {
            continue;
        }
        let colour = marker_colour(m.kind);
        if m.kind != MarkerKind::Expected {
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
    Ok(())
}

/// The markers' legend, at the top on the side away from the strongest peak
/// (a marker line alone would hide its label under the tone it marks, and the
/// strongest peak's own label sits at the top, right of the peak).
fn draw_legend(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, y0, y1) = (f.x0, f.x1, f.y0, f.y1);
    let left = legend_left_frac(
        f.p.peaks
            .first()
            .map(|&(hz, _)| (hz / f.scale - x0) / (x1 - x0)),
    );
    for (k, m) in f.p.markers.iter().enumerate() {
        let colour = marker_colour(m.kind);
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
    Ok(())
}

/// The strongest eight peaks: a triangle each, with text their frequency and power.
fn draw_peaks(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, p) = (f.x0, f.x1, f.p);
    for (k, (hz, db)) in p.peaks.iter().take(8).enumerate() {
        let x = hz / f.scale;
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
        if f.text {
            let pdec = (f.dec + 3).min(6);
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
pub(super) fn legend_left_frac(peak: Option<f64>) -> f64 {
    match peak {
        Some(f) if f >= 0.5 => 0.03,
        _ => 0.72,
    }
}
