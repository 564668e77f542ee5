//! The golden result files (`fixtures/results/FIX_YELLOW_001/`): what this
//! build renders, byte for byte, and that they validate.
use super::files::write_result_files;
use super::markdown::render_markdown;
use super::model::{overall_status, Check, RxResult, Status, Timeline};
use super::test_util::COMMIT;
use super::{validate_result_files, RESULT_JSON, RESULT_MD};
use crate::result::sections::{CaptureEntry, Inventory};
use rxnode_interlock::{validate_task, Approval, ValidateOptions};
use serde_json::json;
use std::path::Path;

/// The golden result (`fixtures/results/FIX_YELLOW_001/`): the acceptance
/// shape of a two-capture CLKIN task (two captures, CLKIN PASS then FAIL ⇒ overall FAIL).
fn golden() -> RxResult {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("fixtures/valid_yellow_rx.md")).unwrap();
    let t = validate_task(&text, &ValidateOptions::default()).unwrap();
    let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
    let mut r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
    r.node.soapysdr_version = Some("0.8.1".into());
    r.timeline = Timeline {
        started_at: Some("2026-01-01T10:05:00+00:00".into()),
        completed_at: Some("2026-01-01T10:05:09+00:00".into()),
        wall_clock_step_s: None,
    };
    r.checks = vec![
        Check::new(
            "step 1: inventory",
            Status::Pass,
            "1 device: driver=rxsim,serial=SIM0",
        ),
        Check::new(
            "step 2: clock_check",
            Status::Pass,
            "clock source external, as expected",
        ),
        Check::new(
            "step 3: rx_capture",
            Status::Pass,
            "4000000 of 4000000 samples, 0 overflows",
        ),
        Check::new(
            "capture 1: clkin",
            Status::Fail,
            "+2.5012 ppm ± 0.0040 ppm exceeds 0.5 ppm",
        ),
    ];
    r.status = overall_status(&r.checks);
    r.inventory = Some(Inventory::Other(
        json!([{"driver": "rxsim", "serial": "SIM0", "label": "rxsim simulated radio"}]),
    ));
    let psd: Vec<f64> = (0..128)
        .map(|i| {
            if i == 77 {
                -18.0
            } else {
                -80.0 + ((i * 37) % 11) as f64 * 0.3
            }
        })
        .collect();
    r.captures = vec![CaptureEntry::Other(json!({
        "device": {"driver": "rxsim", "serial": "SIM0"},
        "requested": {"frequency_hz": 100.0e6, "sample_rate_hz": 2.0e6, "gain_db": 20.0, "bandwidth_hz": null},
        "actual": {"frequency_hz": 100.0e6, "sample_rate_hz": 2.0e6, "gain_db": 20.0, "bandwidth_hz": 2.0e6},
        "samples_requested": 4000000, "samples_received": 4000000,
        "overflows": 0, "dropped_samples": 0, "timeouts": 0, "duration_s": 2.0,
        "peaks": [{"frequency_hz": 100099749.6, "power_db": -18.0, "snr_db": 62.0}],
        "noise_floor_db": -79.4, "mean_power_dbfs": -60.2, "clipped_fraction": 0.0,
        "clkin": {"tone_hz": 100.1e6, "measured_hz": 100099749.6, "ppm": 2.5012,
                  "ppm_uncertainty": 0.004, "status": "FAIL"},
        "iq_files": [{"path": ".local/rx_iq/FIX_YELLOW_001/capture_3.sigmf-data", "format": "sigmf",
                      "bytes": 32000000, "sha256": "5".repeat(64)}],
        "psd_db": psd,
        "status": "FAIL"
    }))];
    r
}

/// Golden files: the JSON and Markdown this build renders for [`golden`].
/// `RXNODE_BLESS=1 cargo test -p rxnode --lib golden` rewrites them.
#[test]
fn golden_result_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/FIX_YELLOW_001");
    let r = golden();
    assert_eq!(r.status, Status::Fail);
    if std::env::var_os("RXNODE_BLESS").is_some() {
        write_result_files(&dir, &r).unwrap();
    }
    for (name, got) in [
        (RESULT_JSON, String::from_utf8(r.to_json_bytes()).unwrap()),
        (RESULT_MD, render_markdown(&r)),
    ] {
        let want = std::fs::read_to_string(dir.join(name)).unwrap();
        if want != got {
            let (i, (w, g)) = want
                .lines()
                .zip(got.lines())
                .enumerate()
                .find(|(_, (w, g))| w != g)
                .unwrap_or((0, ("(length differs)", "(length differs)")));
            panic!(
                "{name} differs at line {}:\nexpected: {w}\n     got: {g}",
                i + 1
            );
        }
    }
    // The golden files validate (their IQ file is not on disk: not checked).
    let p = validate_result_files(
        &dir.join(RESULT_JSON),
        Path::new(env!("CARGO_MANIFEST_DIR")),
    );
    assert!(p.is_empty(), "{p:#?}");
    // And the JSON reads back to the same value.
    let back: RxResult =
        serde_json::from_slice(&std::fs::read(dir.join(RESULT_JSON)).unwrap()).unwrap();
    assert_eq!(back, r);
}
