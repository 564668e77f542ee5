//! The frequency × time heatmap with its dB colour scale.
use super::{
    atomically, axis_range, db_decimals, decimate, err, font_ready, mhz_decimals, Heatmap, FAMILY,
};
use anyhow::Result;
use plotters::prelude::*;
use std::path::Path;

/// Viridis-like colour for `t` in 0..1.
pub(super) fn colour_of(t: f64) -> RGBColor {
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
pub(crate) fn write_heatmap(path: &Path, h: &Heatmap) -> Result<()> {
    font_ready()?;
    let g = Grid::new(h)?;
    atomically(path, |tmp| {
        let root = BitMapBackend::new(tmp, (1200, 600)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        // The title above the picture and its scale, with room under it: the
        // time axis' first tick never touches it.
        let body = super::draw_title(&root, &h.title, 16)?;
        let (main, legend) = body.split_horizontally(1080);
        draw_cells(&main, &g, &h.failed_hz)?;
        draw_scale(&legend, &g)?;
        root.present().map_err(err)
    })
}

/// The rows as drawn: binned, their time edges and the axes' ranges.
struct Grid {
    /// Per drawn row: start Hz, step Hz, dBFS per column (max-held).
    rows: Vec<(f64, f64, Vec<f64>)>,
    /// Frequency of column 0 and the column spacing, Hz.
    x0h: f64,
    step: f64,
    /// The dB range of the colour scale.
    lo: f64,
    hi: f64,
    /// The x axis, MHz.
    x0: f64,
    x1: f64,
    /// Row r spans `edges[r] .. edges[r + 1]` seconds.
    edges: Vec<f64>,
}

impl Grid {
    fn new(h: &Heatmap) -> Result<Grid> {
        anyhow::ensure!(!h.rows.is_empty(), "no rows to plot");
        let width = h.rows.iter().map(Vec::len).max().unwrap_or(0);
        anyhow::ensure!(width > 0, "no columns to plot");
        // At most 600 rows (max-held in groups) and 1000 columns: a picture, not a dump.
        let group = h.rows.len().div_ceil(600).max(1);
        let rows = bin_rows(h, group);
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
        let (x0, x1) = super::snap_to_labels(x0, x1);
        let edges = row_edges(&row_times, rows.len());
        // Checked before anything is drawn: a range the chart library cannot label is refused.
        axis_range("frequency (MHz)", x0, x1)?;
        axis_range("time (s)", edges[0], edges[rows.len()])?;
        axis_range("power (dBFS/bin)", lo, hi)?;
        Ok(Grid {
            rows,
            x0h,
            step,
            lo,
            hi,
            x0,
            x1,
            edges,
        })
    }
}

/// Rows max-held in groups of `group`, each decimated to at most 1000 columns.
fn bin_rows(h: &Heatmap, group: usize) -> Vec<(f64, f64, Vec<f64>)> {
    h.rows
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
        .collect()
}

/// Row r spans from its own start time to the next row's (the last one the mean
/// spacing): rows touch, with no gap and no overlap, however uneven the times.
fn row_edges(row_times: &[f64], n: usize) -> Vec<f64> {
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
    edges
}

/// The cells, on a frequency × time chart with its title and axes.
fn draw_cells(
    main: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    g: &Grid,
    failed_hz: &[[f64; 2]],
) -> Result<()> {
    let (x0h, step, lo, hi, edges) = (g.x0h, g.step, g.lo, g.hi, &g.edges);
    let (t0, t1) = (edges[0], edges[g.rows.len()]);
    let dec = mhz_decimals(g.x1 - g.x0);
    let mut chart = ChartBuilder::on(main)
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(axis_range("frequency (MHz)", g.x0, g.x1)?, {
            // Time runs down the picture.
            let t = axis_range("time (s)", t0, t1)?;
            t.end..t.start
        })
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
        .y_label_formatter(&|v| super::trim_number(*v, 3))
        .draw()
        .map_err(err)?;
    for (r, (_, _, vals)) in g.rows.iter().enumerate() {
        let (ta, tb) = (edges[r], edges[r + 1]);
        chart
            .draw_series(vals.iter().enumerate().map(|(i, v)| {
                let xa = (x0h + step * (i as f64 - 0.5)) / 1e6;
                let xb = (x0h + step * (i as f64 + 0.5)) / 1e6;
                let hz = x0h + step * i as f64;
                let c = if v.is_finite() {
                    colour_of((v - lo) / (hi - lo))
                } else if failed_hz.iter().any(|f| f[0] <= hz && hz <= f[1]) {
                    // A failed hop: the spectrum's shade, never a colour of the scale.
                    FAILED_SHADE
                } else {
                    RGBColor(255, 255, 255)
                };
                Rectangle::new([(xa, ta), (xb, tb)], c.filled())
            }))
            .map_err(err)?;
    }
    // One label per failed band, at the top.
    let gap = step * 1.5;
    for (r, n) in super::spectrum::merge_failed(failed_hz, gap) {
        let (a, z) = ((r[0] / 1e6).max(g.x0), (r[1] / 1e6).min(g.x1));
        if z <= a {
            continue;
        }
        let label = if n == 1 {
            "hop failed: no data".to_owned()
        } else {
            format!("{n} hops failed: no data")
        };
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (a + (g.x1 - g.x0) * 0.004, t0 + (t1 - t0) * 0.012),
                (FAMILY, 12).into_font().color(&RGBColor(170, 0, 0)),
            )))
            .map_err(err)?;
    }
    Ok(())
}

/// The shade of a failed hop's cells, as in the spectrum picture.
const FAILED_SHADE: RGBColor = RGBColor(255, 215, 215);

/// The colour legend: a bar from lo (bottom) to hi (top) with a dB axis.
fn draw_scale(
    legend: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    g: &Grid,
) -> Result<()> {
    let (lo, hi) = (g.lo, g.hi);
    let ddec = db_decimals(hi - lo);
    let mut lc = ChartBuilder::on(legend)
        .margin_top(50)
        .margin_bottom(62)
        .margin_right(8)
        .y_label_area_size(58)
        .build_cartesian_2d(0.0..1.0, axis_range("power (dBFS/bin)", lo, hi)?)
        .map_err(err)?;
    lc.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc("dBFS/bin")
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
    Ok(())
}
