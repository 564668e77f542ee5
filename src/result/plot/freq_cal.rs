//! The `freq_cal` picture: every detection (an FCCH burst, a PSS) as time against
//! its baseband offset, with the offset a perfect clock would give and the searched
//! range; below, each detection's radio error in ppm with the combined value and
//! its uncertainty. Rejected detections are grey.
use super::{atomically, axis_range, err, font_ready, FAMILY};
use crate::result::sections::freq_cal::FreqCalRecord;
use anyhow::Result;
use plotters::prelude::*;
use std::path::Path;

/// Picture size.
pub(crate) const FREQ_CAL_SIZE: (u32, u32) = (1200, 820);

/// One detection read back from a `freq_cal[]` entry.
struct Det {
    t: f64,
    off_khz: f64,
    ppm: f64,
    used: bool,
}

/// Write the picture of one `freq_cal[]` entry (it must hold `detections`);
/// `origin` says what it came from (`TASK step 3`, or a standalone command),
/// shown with the radio and the time under the result.
pub(crate) fn write_freq_cal_png(path: &Path, e: &FreqCalRecord, origin: &str) -> Result<()> {
    let fin = |v: Option<f64>| v.filter(|x| x.is_finite());
    let dets: Vec<Det> = e
        .detections
        .iter()
        .flatten()
        .filter(|d| [d.time_s, d.offset_hz, d.ppm].iter().all(|x| x.is_finite()))
        .map(|d| Det {
            t: d.time_s,
            off_khz: d.offset_hz / 1e3,
            ppm: d.ppm,
            used: d.used,
        })
        .collect();
    anyhow::ensure!(!dets.is_empty(), "plot: no detections to draw");
    let method = e.method.as_str().to_uppercase();
    let cell = e.cell.as_deref().unwrap_or("");
    let title = match (fin(e.ppm), fin(e.uncertainty_ppm)) {
        (Some(p), Some(u)) => {
            format!(
                "{method} {cell}: radio error {} (1σ), {} of {} detections used",
                rxnode_dsp::fmt_uncertain(p, u, "ppm"),
                dets.iter().filter(|d| d.used).count(),
                dets.len()
            )
        }
        _ => format!("{method} {cell}: no estimate"),
    };
    let device = e.device.label();
    let title = format!(
        "{title} · {origin} · {} · {}",
        super::capture::short(device, 40),
        crate::store::fsutil::now_iso()
    );
    let t1 = fin(e.seconds_analysed)
        .unwrap_or(0.0)
        .max(dets.iter().map(|d| d.t).fold(0.0, f64::max))
        .max(1e-3);
    let search = e
        .search_hz
        .iter()
        .flatten()
        .filter(|x| x.is_finite())
        .map(|v| v / 1e3)
        .collect::<Vec<_>>();
    let nominal = fin(e.nominal_offset_hz).map(|v| v / 1e3);
    let (mut y0, mut y1) = dets
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), d| {
            (a.min(d.off_khz), b.max(d.off_khz))
        });
    if let [lo, hi] = search[..] {
        y0 = y0.min(lo);
        y1 = y1.max(hi);
    }
    let pad = ((y1 - y0) * 0.05).max(0.5);
    let (y0, y1) = (y0 - pad, y1 + pad);
    // Lower panel: ppm around the combined value (or the median).
    let mut ppms: Vec<f64> = dets.iter().filter(|d| d.used).map(|d| d.ppm).collect();
    ppms.sort_by(f64::total_cmp);
    let centre = fin(e.ppm)
        .or_else(|| ppms.get(ppms.len() / 2).copied())
        .unwrap_or(0.0);
    let spread = ppms
        .iter()
        .map(|p| (p - centre).abs())
        .fold(0.0, f64::max)
        .max(fin(e.uncertainty_ppm).unwrap_or(0.0) * 4.0)
        .max(1e-3)
        * 1.3;
    // Headroom above the points for the legend: it never sits on a detection.
    let (p0, p1) = (centre - spread, centre + spread * 1.7);
    // Checked before anything is drawn: a range the chart library cannot label is refused.
    let tr = axis_range("time (s)", 0.0, t1)?;
    let yr = axis_range("baseband offset (kHz)", y0, y1)?;
    let pr = axis_range("radio error (ppm)", p0, p1)?;
    atomically(path, |tmp| {
        font_ready()?;
        let root = BitMapBackend::new(tmp, FREQ_CAL_SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = super::draw_title(&root, &title, 17)?;
        let (top, bottom) = root.split_vertically(430);
        let used_c = RGBColor(31, 119, 180);
        let rej_c = RGBColor(170, 170, 170);
        let mut c = ChartBuilder::on(&top)
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(tr.clone(), yr)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("time (s)")
            .y_desc("baseband offset (kHz)")
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 14))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        if let [lo, hi] = search[..] {
            c.draw_series(std::iter::once(Rectangle::new(
                [(0.0, lo), (t1, hi)],
                RGBColor(255, 243, 205).filled(),
            )))
            .map_err(err)?
            .label("searched (±60 ppm)")
            .legend(|(x, y)| {
                Rectangle::new(
                    [(x, y - 5), (x + 14, y + 5)],
                    RGBColor(255, 243, 205).filled(),
                )
            });
        }
        if let Some(n) = nominal {
            c.draw_series(LineSeries::new(
                [(0.0, n), (t1, n)],
                ShapeStyle::from(&RGBColor(44, 160, 44)).stroke_width(2),
            ))
            .map_err(err)?
            .label(format!("perfect clock {n:+.3} kHz"))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], RGBColor(44, 160, 44)));
        }
        c.draw_series(
            dets.iter()
                .filter(|d| d.used)
                .map(|d| Circle::new((d.t, d.off_khz), 3, used_c.filled())),
        )
        .map_err(err)?
        .label("detection (used)")
        .legend(move |(x, y)| Circle::new((x + 7, y), 3, used_c.filled()));
        c.draw_series(
            dets.iter()
                .filter(|d| !d.used)
                .map(|d| Cross::new((d.t, d.off_khz), 4, rej_c.stroke_width(2))),
        )
        .map_err(err)?
        .label("detection (rejected)")
        .legend(move |(x, y)| Cross::new((x + 7, y), 4, rej_c.stroke_width(2)));
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FAMILY, 13))
            .position(emptiest_corner(
                dets.iter()
                    .map(|d| (d.t / t1, (d.off_khz - y0) / (y1 - y0))),
                0.3,
                0.3,
            ))
            .draw()
            .map_err(err)?;
        let mut c = ChartBuilder::on(&bottom)
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(tr, pr)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("time (s)")
            .y_desc("radio error (ppm)")
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 14))
            .light_line_style(RGBColor(235, 235, 235))
            .y_label_formatter(&|v| format!("{v:+.3}"))
            .draw()
            .map_err(err)?;
        if let (Some(p), Some(u)) = (fin(e.ppm), fin(e.uncertainty_ppm)) {
            c.draw_series(std::iter::once(Rectangle::new(
                [(0.0, p - u), (t1, p + u)],
                RGBColor(214, 39, 40).mix(0.15).filled(),
            )))
            .map_err(err)?;
            c.draw_series(LineSeries::new(
                [(0.0, p), (t1, p)],
                ShapeStyle::from(&RGBColor(214, 39, 40)).stroke_width(2),
            ))
            .map_err(err)?
            .label(format!(
                "combined {}",
                rxnode_dsp::fmt_uncertain(p, u, "ppm")
            ))
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], RGBColor(214, 39, 40)));
        }
        c.draw_series(
            dets.iter()
                .filter(|d| d.used && d.ppm >= p0 && d.ppm <= p1)
                .map(|d| Circle::new((d.t, d.ppm), 3, used_c.filled())),
        )
        .map_err(err)?
        .label("per detection")
        .legend(move |(x, y)| Circle::new((x + 7, y), 3, used_c.filled()));
        c.draw_series(
            dets.iter()
                .filter(|d| !d.used)
                .map(|d| Cross::new((d.t, d.ppm.clamp(p0, p1)), 4, rej_c.stroke_width(2))),
        )
        .map_err(err)?;
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FAMILY, 13))
            .position(emptiest_corner(
                dets.iter().map(|d| (d.t / t1, (d.ppm - p0) / (p1 - p0))),
                0.3,
                0.2,
            ))
            .draw()
            .map_err(err)?;
        root.present().map_err(err)
    })
}

/// The corner of a chart where a legend `w` × `h` (fractions of the plot) covers
/// the fewest points (`(x, y)` as fractions, y up); upper right on a tie.
fn emptiest_corner(
    points: impl Iterator<Item = (f64, f64)> + Clone,
    w: f64,
    h: f64,
) -> SeriesLabelPosition {
    let corners = [
        (SeriesLabelPosition::UpperRight, 1.0 - w, 1.0 - h),
        (SeriesLabelPosition::UpperLeft, 0.0, 1.0 - h),
        (SeriesLabelPosition::LowerRight, 1.0 - w, 0.0),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
    ];
    let mut best = (SeriesLabelPosition::UpperRight, usize::MAX);
    for (pos, x0, y0) in corners {
        let covered = points
            .clone()
            .filter(|(x, y)| (x0..=x0 + w).contains(x) && (y0..=y0 + h).contains(y))
            .count();
        if covered < best.1 {
            best = (pos, covered);
        }
    }
    best.0
}

#[cfg(test)]
mod legend_tests {
    use super::*;

    /// The legend goes where it hides the fewest points.
    #[test]
    fn the_legend_takes_the_emptiest_corner() {
        let upper_right = [(0.9, 0.9), (0.8, 0.95), (0.1, 0.1)];
        assert!(matches!(
            emptiest_corner(upper_right.iter().copied(), 0.3, 0.3),
            SeriesLabelPosition::UpperLeft
        ));
        let none: [(f64, f64); 0] = [];
        assert!(matches!(
            emptiest_corner(none.iter().copied(), 0.3, 0.3),
            SeriesLabelPosition::UpperRight
        ));
    }
}
