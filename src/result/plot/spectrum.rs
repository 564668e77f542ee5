//! The spectrum picture: axes, failed hops, the trace, the noise floor, CLKIN
//! markers with their legend, and the labelled peaks; each drawn by a phase.
mod inset;

use super::{
    decimate, err, font_ready, mhz_decimals, MarkerKind, SpectrumPlot, FAMILY, MAX_POINTS,
};
use anyhow::Result;
use inset::{draw_clkin_inset, inset_left};
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
            .chain(&p.trace.low_db)
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
        let (x0, x1) = if p.freq_known {
            super::snap_to_labels(x0, x1)
        } else {
            (x0, x1)
        };
        // Checked here, before anything is drawn: a range the chart library
        // cannot label (an end past f64, a width lost in rounding) is refused.
        let x_what = if p.freq_known {
            "frequency (MHz)"
        } else {
            "FFT bin"
        };
        super::axis_range(x_what, x0, x1)?;
        super::axis_range("power (dBFS/bin)", y0, y1)?;
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
    draw_peaks(&mut chart, &f)?;
    if let Some(k) = p.clkin.as_ref().filter(|_| text && p.freq_known) {
        let x = inset_left(&chart, &f);
        draw_clkin_inset(root, &f, k, x)?;
    }
    Ok(())
}

/// Pixels of the plotting area (picture less margins and label areas), for
/// turning a label's size into axis units.
const PLOT_PX: (f64, f64) = (
    SPECTRUM_SIZE.0 as f64 - 72.0 - 28.0,
    SPECTRUM_SIZE.1 as f64 - 48.0 - 28.0 - 26.0,
);

/// A label's box in axis units: `[x left, x right, y bottom, y top]`.
type LabelBox = [f64; 4];

fn overlaps(a: &LabelBox, b: &LabelBox) -> bool {
    a[0] < b[1] && b[0] < a[1] && a[2] < b[3] && b[2] < a[3]
}

/// The chart with its mesh, and with text its caption, labels and axis names.
fn draw_axes<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    f: &Frame<'_>,
) -> Result<Chart<'a, 'b>> {
    let (p, text, dec) = (f.p, f.text, f.dec);
    let mut b = ChartBuilder::on(root);
    b.margin(14).margin_right(34);
    if text {
        b.caption(&p.title, (FAMILY, 16))
            .x_label_area_size(48)
            .y_label_area_size(72);
    } else {
        b.x_label_area_size(48).y_label_area_size(72);
    }
    let mut chart = b
        .build_cartesian_2d(
            super::axis_range("frequency", f.x0, f.x1)?,
            super::axis_range("power (dBFS/bin)", f.y0, f.y1)?,
        )
        .map_err(err)?;
    let xfmt = |v: &f64| format!("{v:.dec$}");
    let yfmt = |v: &f64| format!("{v:.0}");
    let blank = |_: &f64| String::new();
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205))
        .x_labels(super::X_LABELS)
        .y_labels(10);
    // Frequency labels are drawn below at exact multiples of the step: the
    // library's own sum of steps can miss the last one (101.00 of 99–101 MHz).
    let own_x_labels = text && p.freq_known;
    if text {
        mesh.x_desc(if p.freq_known {
            "Frequency (MHz)"
        } else {
            "FFT bin (centre frequency unknown)"
        })
        .y_desc("Power (dBFS/bin)")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .y_label_formatter(&yfmt);
        if own_x_labels {
            mesh.x_label_formatter(&blank);
        } else {
            mesh.x_label_formatter(&xfmt);
        }
    } else {
        mesh.label_style((FAMILY, 14))
            .x_label_formatter(&blank)
            .y_label_formatter(&blank);
    }
    mesh.draw().map_err(err)?;
    if own_x_labels {
        let step = super::label_step(f.x1 - f.x0, super::X_LABELS);
        let first = (f.x0 / step - 1e-6).ceil() as i64;
        let last = (f.x1 / step + 1e-6).floor() as i64;
        let style =
            TextStyle::from((FAMILY, 14).into_font()).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ));
        // The band's own edges carry their own values (433.05 and 434.79 MHz),
        // and a round label too close to one gives way to it.
        let edges: Vec<f64> = p
            .band_hz
            .iter()
            .flatten()
            .map(|e| e / f.scale)
            .filter(|e| (f.x0..=f.x1).contains(e))
            .collect();
        let px_of = |v: f64| chart.backend_coord(&(v, f.y0));
        for e in &edges {
            let (px, py) = px_of(*e);
            root.draw(&Text::new(
                // The axis' decimals, more when the edge needs them (434.79).
                (dec..=6)
                    .map(|d| format!("{e:.d$}"))
                    .find(|t| t.parse::<f64>().is_ok_and(|x| (x - e).abs() < 1e-9))
                    .unwrap_or_else(|| format!("{e:.6}")),
                (px, py + 8),
                style.clone(),
            ))
            .map_err(err)?;
        }
        // At most a dozen labels on a checked axis; bounded whatever it is.
        for k in (first..=last).take(4 * super::X_LABELS) {
            let v = k as f64 * step;
            let (px, py) = px_of(v);
            if edges.iter().any(|e| (px_of(*e).0 - px).abs() < 64) {
                continue;
            }
            root.draw(&Text::new(
                format!("{v:.dec$}"),
                (px, py + 8),
                style.clone(),
            ))
            .map_err(err)?;
        }
    }
    Ok(chart)
}

/// Failed hops: shaded, never joined over; touching hops are one region with
/// one label (`3 hops failed`), and a label that would overprint the one
/// before it goes a row lower.
fn draw_failed_hops(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, y0, y1, scale) = (f.x0, f.x1, f.y0, f.y1, f.scale);
    let regions = merge_failed(&f.p.failed_hz, (x1 - x0) * scale * 1e-6);
    let x_per_px = (x1 - x0) / PLOT_PX.0;
    let row = (y1 - y0) / PLOT_PX.1 * 15.0;
    let mut placed: Vec<LabelBox> = Vec::new();
    for (r, n) in regions {
        let (a, z) = ((r[0] / scale).max(x0), (r[1] / scale).min(x1));
        if z <= a {
            continue;
        }
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, y0), (z, y1)],
                RGBColor(255, 215, 215).filled(),
            )))
            .map_err(err)?;
        if !f.text {
            continue;
        }
        let label = if n == 1 {
            "hop failed".to_owned()
        } else {
            format!("{n} hops failed")
        };
        let w = label.chars().count() as f64 * 6.5 * x_per_px;
        let xa = a.min(x1 - w);
        let mut y = y1 - 2.0 * (y1 - y0) / PLOT_PX.1;
        let mut b = [xa, xa + w, y - row, y];
        while placed.iter().any(|p| overlaps(p, &b)) && y - row > y0 {
            y -= row;
            b = [xa, xa + w, y - row, y];
        }
        placed.push(b);
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (xa, y),
                (FAMILY, 12).into_font().color(&RGBColor(170, 0, 0)),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// Failed ranges sorted and merged where they touch (within `gap` Hz), each
/// with how many hops it holds.
pub(super) fn merge_failed(ranges: &[[f64; 2]], gap: f64) -> Vec<([f64; 2], usize)> {
    let mut v: Vec<[f64; 2]> = ranges.to_vec();
    v.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mut out: Vec<([f64; 2], usize)> = Vec::new();
    let mut prev: Option<[f64; 2]> = None;
    for r in v {
        // The same hop failed in several repeats: one hop.
        let again = prev.is_some_and(|p| (r[0] - p[0]).abs() <= gap && (r[1] - p[1]).abs() <= gap);
        prev = Some(r);
        match out.last_mut() {
            Some((last, n)) if r[0] <= last[1] + gap => {
                last[1] = last[1].max(r[1]);
                if !again {
                    *n += 1;
                }
            }
            _ => out.push((r, 1)),
        }
    }
    out
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
    // A published summary: each point's spread from its lowest to its highest
    // bin, so the trace reads as dense as the node's full-resolution one.
    let low = &f.p.trace.low_db;
    if low.len() == f.vals.len() && f.vals.len() == f.p.trace.db.len() {
        let bars = f
            .vals
            .iter()
            .zip(low)
            .enumerate()
            .filter(|(_, (hi, lo))| hi.is_finite() && lo.is_finite())
            .map(|(i, (hi, lo))| {
                let x = (x0h + step * i as f64) / scale;
                PathElement::new(vec![(x, lo.max(y0)), (x, hi.max(y0))], blue.stroke_width(1))
            });
        chart.draw_series(bars).map_err(err)?;
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
                    format!("noise floor {fl:.1} dBFS/bin"),
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

/// The strongest eight peaks: a triangle each, with text their frequency and
/// power. A label sits right of its peak, or left of it near the right edge so
/// it is never cut off; a label that would overprint another moves up a row
/// (or, at the top, below its peak).
fn draw_peaks(chart: &mut Chart<'_, '_>, f: &Frame<'_>) -> Result<()> {
    let (x0, x1, y0, y1, p) = (f.x0, f.x1, f.y0, f.y1, f.p);
    let x_per_px = (x1 - x0) / PLOT_PX.0;
    let y_per_px = (y1 - y0) / PLOT_PX.1;
    let row = 15.0 * y_per_px;
    let mut placed: Vec<LabelBox> = Vec::new();
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
        // The triangle itself is taken.
        placed.push([
            x - 6.0 * x_per_px,
            x + 6.0 * x_per_px,
            *db,
            *db + 12.0 * y_per_px,
        ]);
        if !f.text {
            continue;
        }
        let pdec = (f.dec + 3).min(6);
        let label = format!(
            "{}: {x:.pdec$} {} {db:.1} dBFS",
            k + 1,
            if p.freq_known { "MHz" } else { "bin" }
        );
        let w = label.chars().count() as f64 * 6.6 * x_per_px;
        let gap = 8.0 * x_per_px;
        let xa = if x + gap + w <= x1 {
            x + gap
        } else {
            (x - gap - w).max(x0)
        };
        let top = y1 - 0.5 * row;
        let ups = (0..10).map(|n| (db + 3.0 + row * (0.2 + f64::from(n))).min(top));
        let downs = (1..10).map(|n| db - row * f64::from(n));
        let mut chosen = None;
        for y in ups.chain(downs).filter(|y| *y - row > y0) {
            let b = [xa, xa + w, y - row, y];
            if !placed.iter().any(|q| overlaps(q, &b)) {
                chosen = Some(b);
                break;
            }
        }
        let b = chosen.unwrap_or([
            xa,
            xa + w,
            (db + 3.0 + row).min(top) - row,
            (db + 3.0 + row).min(top),
        ]);
        placed.push(b);
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (b[0], b[3]),
                (FAMILY, 12).into_font().color(&RGBColor(150, 70, 0)),
            )))
            .map_err(err)?;
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
