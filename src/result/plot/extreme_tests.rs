//! Every kind of picture given axes no chart can show (an end past f64, a width
//! lost in rounding) returns an error promptly: the chart library's label search
//! never ends on such a range, so each is checked before drawing.
use super::compare::{write_compare, ComparePlot};
use super::*;
use crate::result::sections::freq_cal::FreqCalEntry;
use std::sync::mpsc;
use std::time::Duration;

/// Run `draw` on its own thread; its error text, or a failure when it returns
/// `Ok` or has not returned within 20 s (a hang fails the test, never hangs it).
fn refused_promptly(what: &str, draw: impl FnOnce() -> Result<()> + Send + 'static) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(draw().map_err(|e| format!("{e:#}")));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Err(e)) => e,
        Ok(Ok(())) => panic!("{what}: drawn, expected a refusal"),
        Err(_) => panic!("{what}: still drawing after 20 s"),
    }
}

fn spectrum(start_hz: f64, step_hz: f64) -> SpectrumPlot {
    SpectrumPlot {
        title: "extreme".into(),
        trace: Trace {
            start_hz,
            step_hz,
            db: (0..100).map(|i| -90.0 + f64::from(i % 7)).collect(),
            low_db: Vec::new(),
        },
        peaks: vec![(start_hz, -84.0)],
        noise_floor_db: Some(-89.0),
        markers: Vec::new(),
        failed_hz: Vec::new(),
        freq_known: true,
        clkin: None,
        band_hz: None,
    }
}

/// A spectrum whose axis end overflows (1e308 + 1e307 × 99), one whose width is
/// lost in rounding, one with levels past f64 and one whose CLKIN inset is 1e300 Hz
/// wide: each an error naming the axis, no file left behind.
#[test]
fn a_spectrum_with_extreme_axes_is_refused_promptly() {
    let d = tempfile::tempdir().unwrap();
    let mut huge_db = spectrum(100e6, 1e3);
    huge_db.trace.db[3] = 1e308;
    huge_db.trace.db[4] = -1e308;
    let mut inset = spectrum(100e6, 1e3);
    inset.clkin = Some(ClkinInset {
        expected_hz: 100e6,
        measured_hz: Some(1e300),
        ppm: Some(1.0),
        ppm_uncertainty: None,
        tolerance_ppm: 0.5,
        status: "FAIL".into(),
        detail: None,
    });
    let cases = [
        ("end past f64", spectrum(1e308, 1e307), "frequency"),
        ("width lost", spectrum(1e300, 1e-300), "frequency"),
        ("levels past f64", huge_db, "power"),
        ("inset past f64", inset, "CLKIN inset"),
    ];
    for (what, p, axis) in cases {
        let path = d.path().join("s.png");
        let at = path.clone();
        let e = refused_promptly(what, move || write_spectrum(&at, &p));
        assert!(
            e.contains(axis) && e.contains("cannot be drawn"),
            "{what}: {e}"
        );
        assert!(!path.exists(), "{what}");
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

/// A heatmap whose columns or rows run past f64.
#[test]
fn a_heatmap_with_extreme_axes_is_refused_promptly() {
    let d = tempfile::tempdir().unwrap();
    let h = |start_hz: f64, step_hz: f64, t: f64| Heatmap {
        title: "extreme".into(),
        start_hz,
        step_hz,
        row_time_s: vec![0.0, t],
        rows: vec![vec![-90.0, -80.0, -85.0]; 2],
        failed_hz: Vec::new(),
    };
    let cases = [
        ("columns past f64", h(1e308, 1e307, 1.0), "frequency"),
        ("rows past f64", h(100e6, 1e3, 1.7e308), "time"),
    ];
    for (what, hm, axis) in cases {
        let path = d.path().join("h.png");
        let at = path.clone();
        let e = refused_promptly(what, move || write_heatmap(&at, &hm));
        assert!(
            e.contains(axis) && e.contains("cannot be drawn"),
            "{what}: {e}"
        );
        assert!(!path.exists(), "{what}");
    }
}

/// A `clkin_compare` trace whose time or phase runs past f64.
#[test]
fn a_compare_trace_with_extreme_axes_is_refused_promptly() {
    let d = tempfile::tempdir().unwrap();
    let c = |t_end: f64, slope: f64| ComparePlot {
        title: "extreme".into(),
        t_s: vec![0.0, t_end / 2.0, t_end],
        rad: vec![0.0, 0.1, 0.2],
        slope,
        intercept: 0.0,
        tolerance_slope: 1e-3,
        verdict: "v".into(),
        locked: None,
    };
    let cases = [
        ("time past f64", c(1.7e308, 0.0), "time"),
        ("phase past f64", c(10.0, 1e300), "phase"),
    ];
    for (what, p, axis) in cases {
        let path = d.path().join("c.png");
        let at = path.clone();
        let e = refused_promptly(what, move || write_compare(&at, &p));
        assert!(
            e.contains(axis) && e.contains("cannot be drawn"),
            "{what}: {e}"
        );
        assert!(!path.exists(), "{what}");
    }
}

/// `freq_cal` detections whose time or offset runs past f64.
#[test]
fn freq_cal_detections_with_extreme_axes_are_refused_promptly() {
    let d = tempfile::tempdir().unwrap();
    let entries: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../../../fixtures/sections/freq_cal.json")).unwrap();
    let cases = [
        ("time past f64", "time_s", 1.7e308, "time"),
        ("offset past f64", "offset_hz", 1.7e308, "baseband offset"),
    ];
    for (what, key, v, axis) in cases {
        let mut e = entries[0].clone();
        e["detections"][0][key] = serde_json::json!(v);
        let entry: FreqCalEntry = serde_json::from_value(e).unwrap();
        let path = d.path().join("f.png");
        let at = path.clone();
        let err = refused_promptly(what, move || {
            let r = entry.record().expect("measured");
            write_freq_cal_png(&at, r, "T step 1")
        });
        assert!(
            err.contains(axis) && err.contains("cannot be drawn"),
            "{what}: {err}"
        );
        assert!(!path.exists(), "{what}");
    }
}
