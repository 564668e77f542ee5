//! The spectrum picture of a result's capture, and the bare-PSD picture.
use super::{write_spectrum, Marker, MarkerKind, SpectrumPlot, Trace};
use crate::json::num_of;
use crate::result::sections::{capture::CaptureRecord, CaptureEntry};
use crate::result::RxResult;
use anyhow::Result;
use rxnode_dsp::ClkinReport;
use std::path::Path;

/// The picture of a capture the operator ran or a recording analysed: its Welch
/// trace, the peaks `(Hz, dBFS)`, the noise floor and the CLKIN check (tones
/// marked, and the inset).
pub(crate) fn live_spectrum(
    title: String,
    psd: &rxnode_dsp::PsdTrace,
    peaks: Vec<(f64, f64)>,
    noise_floor_db: Option<f64>,
    clkin: Option<&ClkinReport>,
) -> SpectrumPlot {
    let clkin = clkin.map(ClkinView::of_report);
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
        markers: clkin.as_ref().map(ClkinView::markers).unwrap_or_default(),
        failed_hz: Vec::new(),
        freq_known: true,
        clkin: clkin.as_ref().and_then(ClkinView::inset),
        band_hz: None,
    }
}

/// What a capture's picture is drawn from: the typed record this build writes,
/// or an entry in another build's shape read by its keys.
struct CaptureView {
    /// The PSD's levels, NaN where there is none.
    psd_db: Vec<f64>,
    /// The PSD's first point and spacing, Hz.
    psd_axis: (Option<f64>, Option<f64>),
    /// The actual (else requested) centre frequency and sample rate, Hz.
    centre_and_rate: (Option<f64>, Option<f64>),
    /// The device args.
    device: String,
    /// The FFT size.
    fft_size: Option<f64>,
    /// The capture's status.
    status: Option<String>,
    /// The peaks, `(Hz, dBFS)`.
    peaks: Vec<(f64, f64)>,
    /// The noise floor, dBFS/bin.
    noise_floor_db: Option<f64>,
    /// The CLKIN check.
    clkin: Option<ClkinView>,
}

/// A number as JSON holds it: a non-finite one is `null`, absent.
fn fin(x: f64) -> Option<f64> {
    Some(x).filter(|x| x.is_finite())
}

impl CaptureView {
    /// The view of an entry; `None` without a PSD.
    fn of(entry: &CaptureEntry) -> Option<CaptureView> {
        match entry {
            CaptureEntry::Captured(r) => Some(Self::of_record(r)),
            CaptureEntry::NotCaptured(_) => None,
            CaptureEntry::Other(v) => Self::of_value(v),
        }
    }

    fn of_record(r: &CaptureRecord) -> CaptureView {
        let (a, q) = (&r.actual.settings, &r.requested);
        CaptureView {
            psd_db: r
                .psd_db
                .iter()
                .flatten()
                .map(|x| x.unwrap_or(f64::NAN))
                .collect(),
            psd_axis: (r.psd_start_hz.and_then(fin), r.psd_step_hz.and_then(fin)),
            centre_and_rate: (
                fin(a.frequency_hz).or(fin(q.frequency_hz)),
                fin(a.sample_rate_hz).or(fin(q.sample_rate_hz)),
            ),
            device: r.device.args.clone(),
            fft_size: Some(r.fft_size as f64),
            status: serde_json::to_value(r.status)
                .ok()
                .and_then(|s| s.as_str().map(str::to_owned)),
            peaks: r
                .peaks
                .iter()
                .filter_map(|p| Some((fin(p.frequency_hz)?, fin(p.power_db)?)))
                .collect(),
            noise_floor_db: r.noise_floor_db.and_then(fin),
            clkin: r.clkin.as_ref().map(ClkinView::of_report),
        }
    }

    fn of_value(c: &serde_json::Value) -> Option<CaptureView> {
        let psd_db = c
            .get("psd_db")?
            .as_array()?
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect();
        let n = |path: &[&str]| num_of(c, path);
        Some(CaptureView {
            psd_db,
            psd_axis: (n(&["psd_start_hz"]), n(&["psd_step_hz"])),
            centre_and_rate: (
                n(&["actual", "frequency_hz"]).or(n(&["requested", "frequency_hz"])),
                n(&["actual", "sample_rate_hz"]).or(n(&["requested", "sample_rate_hz"])),
            ),
            device: match c.get("device") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(d) => d
                    .get("args")
                    .and_then(|a| a.as_str())
                    .unwrap_or("?")
                    .to_owned(),
                None => "?".into(),
            },
            fft_size: n(&["fft_size"]),
            status: c.get("status").and_then(|s| s.as_str()).map(str::to_owned),
            peaks: c
                .get("peaks")
                .and_then(|p| p.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|p| {
                            Some((num_of(p, &["frequency_hz"])?, num_of(p, &["power_db"])?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            noise_floor_db: n(&["noise_floor_db"]),
            clkin: c.get("clkin").map(ClkinView::of_value),
        })
    }
}

/// The picture of one capture of a result: its PSD on an absolute MHz axis
/// (from `psd_start_hz`/`psd_step_hz`, else the actual centre and rate), the
/// reported peaks, the noise floor and the CLKIN tones. `None` without a PSD.
pub(crate) fn capture_plot(r: &RxResult, n: usize, entry: &CaptureEntry) -> Option<SpectrumPlot> {
    let c = CaptureView::of(entry)?;
    if !c.psd_db.iter().any(|v| v.is_finite()) {
        return None;
    }
    let (start, step, known) = frequency_axis(&c);
    let title = capture_title(r, n, &c);
    Some(SpectrumPlot {
        title,
        markers: c.clkin.as_ref().map(ClkinView::markers).unwrap_or_default(),
        clkin: c.clkin.as_ref().and_then(ClkinView::inset),
        trace: Trace {
            start_hz: start,
            step_hz: step,
            db: c.psd_db,
            low_db: Vec::new(),
        },
        peaks: c.peaks,
        noise_floor_db: c.noise_floor_db,
        failed_hz: Vec::new(),
        freq_known: known,
        band_hz: None,
    })
}

/// `(start Hz, step Hz, known)` of a capture's PSD bins: from `psd_start_hz` and
/// `psd_step_hz`, else from the actual (or requested) centre and rate, else bins.
fn frequency_axis(c: &CaptureView) -> (f64, f64, bool) {
    let bins = c.psd_db.len();
    match c.psd_axis {
        (Some(a), Some(s)) if s > 0.0 => (a, s, true),
        _ => match c.centre_and_rate {
            (Some(f), Some(rt)) if rt > 0.0 => {
                let s = rt / bins as f64;
                (f - rt / 2.0 + s / 2.0, s, true)
            }
            _ => (0.0, 1.0, false),
        },
    }
}

/// The title line: task, plan step, device, centre, rate and start time.
fn capture_title(r: &RxResult, n: usize, c: &CaptureView) -> String {
    let (centre, rate) = c.centre_and_rate;
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
    let rbw = match (rate, c.fft_size) {
        (Some(rt), Some(n)) if n > 0.0 => format!(" · RBW {}", super::fmt_rbw(rt / n)),
        _ => String::new(),
    };
    let status = c
        .status
        .as_deref()
        .map(|s| format!(" · {s}"))
        .unwrap_or_default();
    format!(
        "{} · {step_name} · {} · centre {} · {} MS/s{rbw}{status} · {}",
        r.task_id,
        short(&c.device, 32),
        fmt_mhz(centre),
        rate.map(|v| format!("{:.3}", v / 1e6))
            .unwrap_or("?".into()),
        r.timeline.started_at.as_deref().unwrap_or("time unknown")
    )
}

/// What the CLKIN markers and inset are drawn from.
struct ClkinView {
    tone_hz: Option<f64>,
    measured_hz: Option<f64>,
    ppm: Option<f64>,
    ppm_uncertainty: Option<f64>,
    tolerance_ppm: Option<f64>,
    status: Option<String>,
    detail: Option<String>,
    /// Every carrier in the search window, when listed.
    tones: Option<Vec<ToneView>>,
}

/// A carrier in the CLKIN search window: Hz, dBFS, ppm, and whether it is the
/// reference.
type ToneView = (Option<f64>, Option<f64>, Option<f64>, bool);

impl ClkinView {
    fn of_report(k: &ClkinReport) -> ClkinView {
        ClkinView {
            tone_hz: fin(k.tone_hz),
            measured_hz: k.measured_hz.and_then(fin),
            ppm: k.ppm.and_then(fin),
            ppm_uncertainty: k.ppm_uncertainty.and_then(fin),
            tolerance_ppm: fin(k.tolerance_ppm),
            status: serde_json::to_value(k.status)
                .ok()
                .and_then(|s| s.as_str().map(str::to_owned)),
            detail: Some(k.detail.clone()),
            // An empty list is not written.
            tones: (!k.tones.is_empty()).then(|| {
                k.tones
                    .iter()
                    .map(|t| {
                        (
                            fin(t.frequency_hz),
                            fin(t.level_dbfs),
                            fin(t.ppm),
                            t.reference,
                        )
                    })
                    .collect()
            }),
        }
    }

    fn of_value(k: &serde_json::Value) -> ClkinView {
        let n = |v: &serde_json::Value, key: &str| num_of(v, &[key]);
        ClkinView {
            tone_hz: n(k, "tone_hz"),
            measured_hz: n(k, "measured_hz"),
            ppm: n(k, "ppm"),
            ppm_uncertainty: n(k, "ppm_uncertainty"),
            tolerance_ppm: n(k, "tolerance_ppm"),
            status: k.get("status").and_then(|s| s.as_str()).map(str::to_owned),
            detail: k.get("detail").and_then(|d| d.as_str()).map(str::to_owned),
            tones: k.get("tones").and_then(|t| t.as_array()).map(|a| {
                a.iter()
                    .map(|t| {
                        (
                            n(t, "frequency_hz"),
                            n(t, "level_dbfs"),
                            n(t, "ppm"),
                            t.get("reference").and_then(|r| r.as_bool()) == Some(true),
                        )
                    })
                    .collect()
            }),
        }
    }

    /// The expected tone, the measured one with its ppm, then every other carrier
    /// seen in the search window (both rivals of an ambiguous check).
    fn markers(&self) -> Vec<Marker> {
        let mut markers = Vec::new();
        if let Some(t) = self.tone_hz {
            markers.push(Marker {
                hz: t,
                label: format!("CLKIN expected {:.6} MHz", t / 1e6),
                kind: MarkerKind::Expected,
            });
        }
        if let Some(m) = self.measured_hz {
            let ppm = match (self.ppm, self.ppm_uncertainty) {
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
        let rivals = self.tones.as_ref().is_some_and(|t| !t.iter().any(|t| t.3));
        for (hz, level, ppm, _) in self.tones.iter().flatten().filter(|t| !t.3) {
            let (Some(hz), Some(l)) = (hz, level) else {
                continue;
            };
            let ppm = ppm.map_or(String::new(), |p| {
                format!(", {} ppm", rxnode_dsp::fmt_ppm(p, 3))
            });
            markers.push(Marker {
                hz: *hz,
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

    /// The inset; `None` without a tone.
    fn inset(&self) -> Option<super::ClkinInset> {
        Some(super::ClkinInset {
            expected_hz: self.tone_hz?,
            measured_hz: self.measured_hz,
            ppm: self.ppm,
            ppm_uncertainty: self.ppm_uncertainty,
            tolerance_ppm: self.tolerance_ppm.unwrap_or(f64::NAN),
            status: self.status.as_deref().unwrap_or("?").to_ascii_uppercase(),
            detail: self.detail.clone(),
        })
    }
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
        if let Some(p) = capture_plot(r, i + 1, c) {
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

#[cfg(test)]
mod view_tests {
    use super::*;
    use crate::result::sections::capture::tests::summary;

    /// A capture's picture is the same drawn from the typed record and from its
    /// JSON read by keys (as a result in another build's shape is), CLKIN tones,
    /// markers and inset included; a step that captured nothing has none.
    #[test]
    fn the_typed_record_draws_as_its_json_read_by_keys() {
        let record = CaptureRecord::of(&summary()).expect("typed");
        assert!(record.clkin.as_ref().is_some_and(|k| !k.tones.is_empty()));
        let typed = CaptureEntry::Captured(Box::new(record));
        let keyed = CaptureEntry::Other(serde_json::to_value(&typed).expect("value"));
        let t = crate::result::test_util::task(true);
        let mut r = RxResult::manual_skeleton(&t, "", None);
        r.captures = vec![typed.clone()];
        let a = capture_plot(&r, 1, &typed).expect("a picture");
        let b = capture_plot(&r, 1, &keyed).expect("a picture");
        assert_eq!(a, b);
        assert!(
            a.freq_known && a.markers.len() > 2 && a.clkin.is_some(),
            "{a:?}"
        );
        let row = CaptureEntry::NotCaptured(crate::result::sections::StepRow::new(
            0,
            crate::result::Status::Blocked,
            "no radio".into(),
        ));
        assert_eq!(capture_plot(&r, 1, &row), None);
    }
}
