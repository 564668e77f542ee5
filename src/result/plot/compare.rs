//! The `clkin_compare` picture: SLAVE's tone phase minus MASTER's against time, the
//! fitted line, the tolerance band (the phases a ±tolerance clock offset would reach)
//! and the figure with its verdict; below it the fit's residual.
use super::{axis_range, err, font_ready, FAMILY};
use crate::result::sections::compare::{CompareRadio, CompareRecord, Verdict};
use crate::result::RxResult;
use anyhow::Result;
use plotters::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Picture size.
pub(crate) const COMPARE_SIZE: (u32, u32) = (1200, 720);

/// What one picture shows, read from a result entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ComparePlot {
    /// Title line.
    pub title: String,
    /// Seconds, per point.
    pub t_s: Vec<f64>,
    /// Phase difference, rad, per point.
    pub rad: Vec<f64>,
    /// The fit: slope (rad/s) and value at t = 0 (rad).
    pub slope: f64,
    pub intercept: f64,
    /// The slope a clock offset of the tolerance gives (rad/s).
    pub tolerance_slope: f64,
    /// The figure and verdict line.
    pub verdict: String,
    /// LOCKED (green), UNLOCKED (red) or AGREE / undecided (orange).
    pub locked: Option<bool>,
}

impl ComparePlot {
    /// The picture of result entry `e` (`None` when it holds no phase trace).
    pub(crate) fn of(title: String, e: &CompareRecord) -> Option<ComparePlot> {
        let fin = |v: f64| Some(v).filter(|x| x.is_finite());
        let tr = e.phase_trace.as_ref()?;
        let k = &e.clkin_compare;
        let rel = fin(k.relative_ppb?)?;
        let sigma = fin(k.uncertainty_ppb?)?;
        let tol = fin(k.tolerance_ppb)?;
        let tone = fin(k.tone_hz)?;
        let verdict = k.verdict;
        // AGREE (within tolerance, no external reference) is drawn as undecided.
        let locked = match verdict {
            Some(Verdict::Locked) => Some(true),
            Some(Verdict::Unlocked) => Some(false),
            _ => None,
        };
        Some(ComparePlot {
            title,
            slope: fin(tr.fit_slope_rad_s)?,
            intercept: fin(tr.fit_intercept_rad)?,
            tolerance_slope: 2.0 * std::f64::consts::PI * tol * 1e-9 * tone,
            verdict: format!(
                "SLAVE vs MASTER: {} (1σ) — tolerance ±{tol} ppb — {}",
                crate::result::fmt_ppb(rel, sigma),
                verdict.map_or("cannot tell (±2σ straddles the tolerance)", Verdict::as_str)
            ),
            locked,
            t_s: tr.t_s.iter().map(|t| fin(*t)).collect::<Option<_>>()?,
            rad: tr.rad.iter().map(|r| fin(*r)).collect::<Option<_>>()?,
        })
        .filter(|p| p.t_s.len() >= 2 && p.t_s.len() == p.rad.len())
    }
}

/// Write `CLKIN_COMPARE_<step>.png` beside the result for every `clkin_compare`
/// entry holding a phase trace; returns the files written.
pub(crate) fn write_compare_pngs(dir: &Path, r: &RxResult) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for (i, e) in r.clkin_compares.iter().enumerate() {
        let n = e.step().unwrap_or(i + 1);
        let Some(e) = e.record() else { continue };
        let dev = |r: &CompareRadio| r.device.args.clone().unwrap_or_else(|| "?".to_owned());
        let title = format!(
            "{} step {n}: clkin_compare · MASTER {} · SLAVE {} · {}",
            r.task_id,
            super::capture::short(&dev(&e.master), 40),
            super::capture::short(&dev(&e.slave), 40),
            r.timeline
                .completed_at
                .as_deref()
                .or(r.timeline.started_at.as_deref())
                .unwrap_or("time unknown")
        );
        if let Some(p) = ComparePlot::of(title, e) {
            let path = dir.join(crate::result::compare_png_name(n));
            write_compare(&path, &p)?;
            out.push(path);
        }
    }
    Ok(out)
}

/// Write the picture of one entry to `path` under `title`; `false` when the entry
/// holds no phase trace (nothing was measured), so nothing was written.
pub(crate) fn write_compare_png_of(path: &Path, title: &str, e: &CompareRecord) -> Result<bool> {
    match ComparePlot::of(title.to_owned(), e) {
        Some(p) => write_compare(path, &p).map(|()| true),
        None => Ok(false),
    }
}

/// Write one picture.
pub(crate) fn write_compare(path: &Path, p: &ComparePlot) -> Result<()> {
    super::atomically(path, |tmp| {
        let root = BitMapBackend::new(tmp, COMPARE_SIZE).into_drawing_area();
        draw(&root, p)?;
        root.present().map_err(err)
    })
}

fn draw(
    root: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    p: &ComparePlot,
) -> Result<()> {
    font_ready()?;
    let t1 = p.t_s.last().copied().unwrap_or(1.0).max(1e-9);
    let Ranges {
        time: xr,
        phase: yr,
        residual: rr,
        pad,
    } = ranges(p, t1)?;
    root.fill(&WHITE).map_err(err)?;
    // The title above both panels, wrapped at its separators rather than clipped.
    let body = super::draw_title(root, &p.title, 15)?;
    let upper = (body.dim_in_pixel().1 * 500) / COMPARE_SIZE.1;
    let (top, bottom) = body.split_vertically(upper);
    let fit = |t: f64| p.intercept + p.slope * t;
    let band = |t: f64, s: f64| p.intercept + s * t;
    let y1 = yr.end;
    let colour = match p.locked {
        Some(true) => RGBColor(0, 130, 40),
        Some(false) => RGBColor(190, 0, 0),
        None => RGBColor(200, 110, 0),
    };
    let mut chart = ChartBuilder::on(&top)
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(xr.clone(), yr)
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205))
        .x_desc("Time (s)")
        .y_desc("SLAVE − MASTER phase (rad)")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .draw()
        .map_err(err)?;
    // The tolerance band: a cone around the fit's start.
    let cone: Vec<(f64, f64)> = vec![
        (0.0, band(0.0, 0.0)),
        (t1, band(t1, p.tolerance_slope)),
        (t1, band(t1, -p.tolerance_slope)),
    ];
    chart
        .draw_series(std::iter::once(Polygon::new(
            cone,
            RGBColor(120, 200, 130).mix(0.35).filled(),
        )))
        .map_err(err)?
        .label("tolerance band (±tolerance from the start)")
        .legend(|(x, y)| {
            Rectangle::new(
                [(x, y - 5), (x + 18, y + 5)],
                RGBColor(120, 200, 130).filled(),
            )
        });
    chart
        .draw_series(LineSeries::new(
            [(0.0, fit(0.0)), (t1, fit(t1))],
            colour.stroke_width(1),
        ))
        .map_err(err)?
        .label("least-squares line (slope = relative frequency)")
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], colour.stroke_width(2)));
    let blue = RGBColor(20, 70, 200);
    chart
        .draw_series(
            p.t_s
                .iter()
                .zip(&p.rad)
                .map(|(t, r)| Circle::new((*t, *r), 2, blue.filled())),
        )
        .map_err(err)?
        .label("measured phase difference (points)")
        .legend(move |(x, y)| Circle::new((x + 9, y), 3, blue.filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FAMILY, 13))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(Text::new(
            p.verdict.clone(),
            (t1 * 0.30, y1 - 0.4 * pad),
            (FAMILY, 17).into_font().color(&colour),
        )))
        .map_err(err)?;
    draw_residual(&bottom, p, xr, rr)
}

/// The checked ranges of the picture.
struct Ranges {
    /// Seconds.
    time: Range<f64>,
    /// The phase: the trace, the fit and the band, with room above for the verdict.
    phase: Range<f64>,
    /// The fit's residual.
    residual: Range<f64>,
    /// The room kept around the phase, rad.
    pad: f64,
}

/// The picture's ranges, each checked.
fn ranges(p: &ComparePlot, t1: f64) -> Result<Ranges> {
    let fit = |t: f64| p.intercept + p.slope * t;
    let band = |t: f64, s: f64| p.intercept + s * t;
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in p.rad.iter().copied().chain([
        fit(0.0),
        fit(t1),
        band(t1, p.tolerance_slope),
        band(t1, -p.tolerance_slope),
    ]) {
        if v.is_finite() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    anyhow::ensure!(lo.is_finite() && hi.is_finite(), "no finite phase to plot");
    let pad = ((hi - lo) * 0.08).max(0.05);
    let m = residual(p)
        .iter()
        .map(|(_, r)| r.abs())
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.2;
    Ok(Ranges {
        time: axis_range("time (s)", 0.0, t1)?,
        phase: axis_range("phase (rad)", lo - pad, hi + 2.5 * pad)?,
        residual: axis_range("residual (rad)", -m, m)?,
        pad,
    })
}

/// The fit's residual per point, `(s, rad)`.
fn residual(p: &ComparePlot) -> Vec<(f64, f64)> {
    p.t_s
        .iter()
        .zip(&p.rad)
        .map(|(t, r)| (*t, r - (p.intercept + p.slope * t)))
        .collect()
}

/// The fit's residual against time.
fn draw_residual(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    p: &ComparePlot,
    xr: Range<f64>,
    rr: Range<f64>,
) -> Result<()> {
    let res = residual(p);
    let mut chart = ChartBuilder::on(area)
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(xr, rr)
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(205, 205, 205))
        .x_desc("Time (s)")
        .y_desc("residual (rad)")
        .y_labels(5)
        .label_style((FAMILY, 13))
        .axis_desc_style((FAMILY, 14))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(res, RGBColor(90, 90, 90).stroke_width(1)))
        .map_err(err)?;
    Ok(())
}
