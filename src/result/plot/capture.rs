//! The spectrum picture of a result's capture, and the bare-PSD picture.
use super::{write_spectrum, Marker, MarkerKind, SpectrumPlot, Trace};
use crate::json::num_of;
use crate::result::RxResult;
use anyhow::Result;
use std::path::Path;

/// The picture of a capture the operator ran or a recording analysed: its Welch
/// trace, the peaks `(Hz, dBFS)`, the noise floor and the CLKIN check (tones
/// marked, and the inset).
pub(crate) fn live_spectrum(
    title: String,
    psd: &rxnode_dsp::PsdTrace,
    peaks: Vec<(f64, f64)>,
    noise_floor_db: Option<f64>,
    clkin: Option<&rxnode_dsp::ClkinReport>,
) -> SpectrumPlot {
    let clkin = clkin.and_then(|c| serde_json::to_value(c).ok());
    SpectrumPlot {
        title,
        trace: Trace {
            start_hz: psd.start_hz,
            step_hz: psd.step_hz,
            db: psd.db.iter().map(|&v| f64::from(v)).collect(),
            low_db: Vec::new(),
        },
        peaks,
        noise_floor_db,
        markers: clkin.as_ref().map(clkin_markers_of).unwrap_or_default(),
        failed_hz: Vec::new(),
        freq_known: true,
        clkin: clkin.as_ref().and_then(clkin_inset_of),
        band_hz: None,
    }
}

/// The picture of one capture of a result: its PSD on an absolute MHz axis
/// (from `psd_start_hz`/`psd_step_hz`, else the actual centre and rate), the
/// reported peaks, the noise floor and the CLKIN tones. `None` without a PSD.
pub(crate) fn capture_plot(r: &RxResult, n: usize, c: &serde_json::Value) -> Option<SpectrumPlot> {
    let db: Vec<f64> = c
        .get("psd_db")?
        .as_array()?
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect();
    if !db.iter().any(|v| v.is_finite()) {
        return None;
    }
    let (start, step, known) = frequency_axis(c, db.len());
    let title = capture_title(r, n, c);
    let peaks = c
        .get("peaks")
        .and_then(|p| p.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((num_of(p, &["frequency_hz"])?, num_of(p, &["power_db"])?)))
                .collect()
        })
        .unwrap_or_default();
    let markers = clkin_markers(c);
    let clkin = c.get("clkin").and_then(clkin_inset_of);
    Some(SpectrumPlot {
        title,
        trace: Trace {
            start_hz: start,
            step_hz: step,
            db,
            low_db: Vec::new(),
        },
        peaks,
        noise_floor_db: num_of(c, &["noise_floor_db"]),
        markers,
        failed_hz: Vec::new(),
        freq_known: known,
        clkin,
        band_hz: None,
    })
}

/// `(start Hz, step Hz, known)` of a capture's PSD bins: from `psd_start_hz` and
/// `psd_step_hz`, else from the actual (or requested) centre and rate, else bins.
fn frequency_axis(c: &serde_json::Value, bins: usize) -> (f64, f64, bool) {
    let (centre, rate) = centre_and_rate(c);
    match (num_of(c, &["psd_start_hz"]), num_of(c, &["psd_step_hz"])) {
        (Some(a), Some(s)) if s > 0.0 => (a, s, true),
        _ => match (centre, rate) {
            (Some(f), Some(rt)) if rt > 0.0 => {
                let s = rt / bins as f64;
                (f - rt / 2.0 + s / 2.0, s, true)
            }
            _ => (0.0, 1.0, false),
        },
    }
}

/// The actual (else requested) centre frequency and sample rate, Hz.
fn centre_and_rate(c: &serde_json::Value) -> (Option<f64>, Option<f64>) {
    let centre =
        num_of(c, &["actual", "frequency_hz"]).or(num_of(c, &["requested", "frequency_hz"]));
    let rate =
        num_of(c, &["actual", "sample_rate_hz"]).or(num_of(c, &["requested", "sample_rate_hz"]));
    (centre, rate)
}

/// The title line: task, plan step, device, centre, rate and start time.
fn capture_title(r: &RxResult, n: usize, c: &serde_json::Value) -> String {
    let (centre, rate) = centre_and_rate(c);
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
    let rbw = match (rate, num_of(c, &["fft_size"])) {
        (Some(rt), Some(n)) if n > 0.0 => format!(" · RBW {}", super::fmt_rbw(rt / n)),
        _ => String::new(),
    };
    let status = c
        .get("status")
        .and_then(|s| s.as_str())
        .map(|s| format!(" · {s}"))
        .unwrap_or_default();
    format!(
        "{} · {step_name} · {} · centre {} · {} MS/s{rbw}{status} · {}",
        r.task_id,
        short(&device, 32),
        fmt_mhz(centre),
        rate.map(|v| format!("{:.3}", v / 1e6))
            .unwrap_or("?".into()),
        r.timeline.started_at.as_deref().unwrap_or("time unknown")
    )
}

/// The CLKIN markers of a capture.
fn clkin_markers(c: &serde_json::Value) -> Vec<Marker> {
    c.get("clkin").map(clkin_markers_of).unwrap_or_default()
}

/// The CLKIN markers of one CLKIN report (as JSON): the expected tone, the measured
/// one with its ppm, then every other carrier seen in the search window (both rivals
/// of an ambiguous check).
pub(crate) fn clkin_markers_of(k: &serde_json::Value) -> Vec<Marker> {
    let mut markers = Vec::new();
    if let Some(t) = num_of(k, &["tone_hz"]) {
        markers.push(Marker {
            hz: t,
            label: format!("CLKIN expected {:.6} MHz", t / 1e6),
            kind: MarkerKind::Expected,
        });
    }
    if let Some(m) = num_of(k, &["measured_hz"]) {
        let ppm = match (num_of(k, &["ppm"]), num_of(k, &["ppm_uncertainty"])) {
            (Some(p), Some(u)) => format!(" ({})", rxnode_dsp::fmt_uncertain(p, u, "ppm")),
            (Some(p), None) => format!(" ({} ppm)", rxnode_dsp::fmt_ppm(p, 3)),
            _ => String::new(),
        };
        markers.push(Marker {
            hz: m,
            label: format!("measured {:.6} MHz{ppm}", m / 1e6),
            kind: MarkerKind::Measured,
        });
    }
    let tones = k.get("tones").and_then(|t| t.as_array());
    let is_ref = |t: &serde_json::Value| t.get("reference").and_then(|r| r.as_bool()) == Some(true);
    let rivals = tones.is_some_and(|t| !t.iter().any(is_ref));
    for t in tones.into_iter().flatten().filter(|t| !is_ref(t)) {
        let (Some(hz), Some(l)) = (num_of(t, &["frequency_hz"]), num_of(t, &["level_dbfs"])) else {
            continue;
        };
        let ppm = num_of(t, &["ppm"]).map_or(String::new(), |p| {
            format!(", {} ppm", rxnode_dsp::fmt_ppm(p, 3))
        });
        markers.push(Marker {
            hz,
            label: format!(
                "{} {:.6} MHz {l:.1} dBFS{ppm}",
                if rivals { "candidate" } else { "other carrier" },
                hz / 1e6
            ),
            kind: MarkerKind::Other,
        });
    }
    markers
}

/// The CLKIN inset of one CLKIN report (as JSON); `None` without a tone.
pub(crate) fn clkin_inset_of(k: &serde_json::Value) -> Option<super::ClkinInset> {
    Some(super::ClkinInset {
        expected_hz: num_of(k, &["tone_hz"])?,
        measured_hz: num_of(k, &["measured_hz"]),
        ppm: num_of(k, &["ppm"]),
        ppm_uncertainty: num_of(k, &["ppm_uncertainty"]),
        tolerance_ppm: num_of(k, &["tolerance_ppm"]).unwrap_or(f64::NAN),
        status: k
            .get("status")
            .and_then(|s| s.as_str())
            .unwrap_or("?")
            .to_ascii_uppercase(),
        detail: k.get("detail").and_then(|d| d.as_str()).map(str::to_owned),
    })
}

/// Draw a bare PSD (dB per bin, frequency unknown) with a bin axis.
#[cfg(test)]
pub(crate) fn write_spectrum_png(path: &Path, psd_db: &[f64]) -> Result<()> {
    write_spectrum(
        path,
        &SpectrumPlot {
            title: "PSD (centre frequency unknown)".into(),
            trace: Trace {
                start_hz: 0.0,
                step_hz: 1.0,
                db: psd_db.to_vec(),
                low_db: Vec::new(),
            },
            peaks: Vec::new(),
            noise_floor_db: None,
            markers: Vec::new(),
            failed_hz: Vec::new(),
            freq_known: false,
            clkin: None,
            band_hz: None,
        },
    )
}

/// Write `SPECTRUM_<n>.png` beside the result for every capture carrying a
/// `psd_db` array; returns the files written.
pub(crate) fn write_spectrum_pngs(dir: &Path, r: &RxResult) -> Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    for (i, c) in r.captures.iter().enumerate() {
        if let Some(p) = capture_plot(r, i + 1, &c.to_value()) {
            let path = dir.join(crate::result::model::spectrum_png_name(i + 1));
            write_spectrum(&path, &p)?;
            out.push(path);
        }
    }
    Ok(out)
}

pub(crate) fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}
