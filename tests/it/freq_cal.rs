//! Calibrating a radio without a generator: `rxnode clkin calibrate` and the
//! `freq_cal` plan step over the simulated radio's GSM scene
//! (docs/operator.md#calibrating-a-radio-without-a-generator). A number only when
//! the signal is there; an LTE step in a build without that estimator is NOT RUN.
use crate::util::{run_fed, show, Lab};
use serde::Deserialize;
use std::process::Output;

/// The `freq_cal[]` entry / `clkin calibrate --json` output, typed.
#[derive(Debug, Deserialize)]
struct FreqCal {
    status: String,
    detail: String,
    method: String,
    ppm: Option<f64>,
    uncertainty_ppm: Option<f64>,
    cell: Option<String>,
    confidence: Option<f64>,
    bursts_used: Option<usize>,
    calibration_stored: Option<bool>,
    clock: Option<Clock>,
    step: Option<usize>,
}

#[derive(Debug, Deserialize)]
struct Clock {
    source: Option<String>,
    radio: Option<String>,
    last_measurement: Option<Measurement>,
    ppm_correction_applied: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Measurement {
    ppm: f64,
    method: String,
    reference: String,
    stale: bool,
}

fn gsm_radio(serial: &str, ppm: f64, snr_db: f64) -> String {
    format!("driver=rxsim,serial={serial},pace=0,ppm={ppm},gsm_freq=935.2e6,gsm_snr_db={snr_db}")
}

fn calibrate(lab: &Lab, device: &str, method: &str, extra: &[&str]) -> Output {
    run_fed(
        lab.rxnode()
            .arg("--sim")
            .args([
                "clkin",
                "calibrate",
                "-d",
                device,
                "--method",
                method,
                "-f",
                "935.2M",
                "--json",
            ])
            .args(extra),
        b"",
    )
}

fn parsed(o: &Output) -> FreqCal {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not a freq_cal entry ({e}): {}", show(o)))
}

/// 0 dB SNR in the channel, +41.7 ppm, no prior: the error within 0.1 ppm from 6 s,
/// kept per radio in .local/calibration.json (ignored by Git), a picture drawn.
#[test]
fn clkin_calibrate_finds_a_gsm_radio_error_and_keeps_it() {
    let lab = Lab::new();
    let png = lab.dir.path().join("fcch.png");
    let o = calibrate(
        &lab,
        &gsm_radio("fc1", 41.7, 0.0),
        "gsm",
        &["--plot", png.to_str().unwrap_or_default()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let r = parsed(&o);
    assert_eq!(r.status, "PASS", "{}", r.detail);
    assert_eq!(r.method, "gsm");
    let ppm = r.ppm.unwrap_or(f64::NAN);
    assert!((ppm - 41.7).abs() <= 0.1, "{ppm}: {}", r.detail);
    let u = r.uncertainty_ppm.unwrap_or(f64::NAN);
    assert!(u > 0.0 && u < 0.05, "{u}");
    assert!((ppm - 41.7).abs() <= 5.0 * u + 0.01, "{ppm} ± {u}");
    assert_eq!(r.cell.as_deref(), Some("BCCH 935.200 MHz"));
    assert!(
        r.confidence.is_some_and(|c| (0.5..=1.0).contains(&c)),
        "{r:?}"
    );
    assert!(r.bursts_used.is_some_and(|n| n >= 60), "{r:?}");
    assert_eq!(r.calibration_stored, Some(true), "{r:?}");
    let clock = r.clock.unwrap_or_else(|| panic!("no clock block"));
    assert_eq!(clock.radio.as_deref(), Some("driver=rxsim,serial=fc1"));
    assert_eq!(clock.source.as_deref(), Some("internal"));
    assert_eq!(clock.ppm_correction_applied, None);
    let m = clock
        .last_measurement
        .unwrap_or_else(|| panic!("no last measurement"));
    assert_eq!((m.ppm, m.method.as_str(), m.stale), (ppm, "gsm", false));
    assert_eq!(m.reference, "GSM BCCH 935.200 MHz");
    let stored: serde_json::Value = serde_json::from_slice(
        &std::fs::read(lab.local().join("calibration.json")).unwrap_or_default(),
    )
    .unwrap_or_default();
    assert_eq!(
        stored["radios"]["driver=rxsim,serial=fc1"]["latest"]["ppm"].as_f64(),
        Some(ppm)
    );
    assert_eq!(
        lab.porcelain(),
        "",
        "calibration.json must be ignored by Git"
    );
    let bytes = std::fs::read(&png).unwrap_or_default();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "{} bytes",
        bytes.len()
    );
}

/// No BCCH carrier (noise only, or a carrier without FCCH elsewhere): FAIL "no GSM
/// FCCH found", exit 1, never a number, nothing kept.
#[test]
fn no_gsm_signal_fails_without_a_number() {
    let lab = Lab::new();
    let o = calibrate(&lab, "driver=rxsim,serial=fc2,pace=0", "gsm", &["-t", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = parsed(&o);
    assert_eq!(r.status, "FAIL");
    assert!(r.detail.starts_with("no GSM FCCH found"), "{}", r.detail);
    assert_eq!(
        (r.ppm, r.uncertainty_ppm, r.calibration_stored),
        (None, None, None)
    );
    assert!(!lab.local().join("calibration.json").exists());
}

/// Until the LTE estimator is in the build, `--method lte` is NOT RUN with the
/// reason, opens no radio and gives no number.
#[test]
fn lte_without_its_estimator_is_not_run_and_gives_no_number() {
    let lab = Lab::new();
    let o = calibrate(&lab, &gsm_radio("fc3", 3.0, 10.0), "lte", &["-t", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let r = parsed(&o);
    assert_eq!(r.status, "NOT RUN");
    assert_eq!(r.detail, "lte estimator not available in this build");
    assert_eq!(r.ppm, None);
}

/// Bad values are bad input (exit 2) naming the field; the policy's limits refuse
/// (exit 3) naming the limit.
#[test]
fn bad_values_and_policy_limits_are_named() {
    let lab = Lab::new();
    let o = calibrate(&lab, &gsm_radio("fc4", 0.0, 10.0), "gsm", &["-r", "200k"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        show(&o).contains("sample_rate_hz 200000 is too low for gsm"),
        "{}",
        show(&o)
    );
    lab.set_policy(r#"{"rx": {"max_duration_s": 2}}"#);
    let o = calibrate(&lab, &gsm_radio("fc4", 0.0, 10.0), "gsm", &[]);
    assert_eq!(o.status.code(), Some(3), "{}", show(&o));
    assert!(
        show(&o).contains("duration_s 6 exceeds rx.max_duration_s 2"),
        "{}",
        show(&o)
    );
}

/// The `freq_cal` step of an approved task: the GSM step measures and is PASS with its
/// number in `freq_cal[]` and in RX_RESULT.md; the LTE step is NOT RUN; the result
/// passes `validate-result`.
#[test]
fn freq_cal_steps_in_a_run() {
    let lab = Lab::new();
    let dev = gsm_radio("fc5", -12.5, 6.0);
    let plan = format!(
        r#"{{"steps": [
  {{"op": "freq_cal", "device": "{dev}", "method": "gsm", "frequency_hz": 935.2e6,
    "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 4}},
  {{"op": "freq_cal", "device": "{dev}", "method": "lte", "frequency_hz": 806e6,
    "sample_rate_hz": 1.92e6, "duration_s": 1}}
]}}"#
    );
    lab.post_and_approve(
        "FC_RUN_1",
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(&plan),
    );
    let o = run_fed(lab.rxnode().arg("--sim").args(["run", "FC_RUN_1"]), b"");
    // The LTE step is NOT RUN, so the whole run is not PASS.
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let dir = lab.outbox("FC_RUN_1");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("RX_RESULT.json")).unwrap_or_default())
            .unwrap_or_default();
    let rows: Vec<FreqCal> = serde_json::from_value(r["freq_cal"].clone())
        .unwrap_or_else(|e| panic!("freq_cal rows ({e}): {}", r["freq_cal"]));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (rows[0].step, rows[0].status.as_str()),
        (Some(1), "PASS"),
        "{rows:?}"
    );
    let ppm = rows[0].ppm.unwrap_or(f64::NAN);
    assert!((ppm + 12.5).abs() <= 0.1, "{ppm}");
    assert_eq!(
        (rows[1].step, rows[1].status.as_str()),
        (Some(2), "NOT RUN")
    );
    assert_eq!(rows[1].ppm, None);
    let md = std::fs::read_to_string(dir.join("RX_RESULT.md")).unwrap_or_default();
    assert!(
        md.contains("lte estimator not available in this build"),
        "{md}"
    );
    assert!(md.contains(&format!("{ppm:+.4}")), "{md}");
    assert!(dir.join("FREQCAL_1.png").exists());
    let v = run_fed(lab.rxnode().args(["validate-result", "FC_RUN_1"]), b"");
    assert_eq!(v.status.code(), Some(0), "{}", show(&v));
}
