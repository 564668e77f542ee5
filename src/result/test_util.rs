//! What the result tests share: a task, a result that ran one capture.
use super::model::{overall_status, Check, RxResult, Status, Timeline};
use crate::result::sections::CaptureEntry;
use rxnode_interlock::{sha256_hex, validate_task, Approval, ValidTask, ValidateOptions};
use serde_json::json;
use std::path::Path;

pub(super) const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
pub(super) const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";
pub(super) fn task(plan: bool) -> ValidTask {
    let mut t = format!(
        "TASK_ID = R_1\nTASK_TITLE = Result | test\nSOURCE_BRANCH = video-development\n\
         EXPECTED_HEAD = {HEAD}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\n\
         RF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\nBody\n"
    );
    if plan {
        t.push_str("```rx-plan\n{\"steps\": [{\"op\": \"inventory\"}, {\"op\": \"rx_capture\", \"device\": \"driver=rxsim\", \"frequency_hz\": 1e8, \"sample_rate_hz\": 1e6, \"duration_s\": 1}]}\n```\n");
    }
    validate_task(&t, &ValidateOptions::default()).unwrap()
}
pub(super) fn ran(dir: &Path) -> RxResult {
    let t = task(true);
    let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
    let mut r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
    r.timeline = Timeline {
        started_at: Some("2026-01-01T10:05:00+00:00".into()),
        completed_at: Some("2026-01-01T11:05:03+01:00".into()),
        wall_clock_step_s: None,
    };
    let iq = dir.join(".local/rx_iq/R_1/cap1.sigmf-data");
    std::fs::create_dir_all(iq.parent().unwrap()).unwrap();
    std::fs::write(&iq, b"0123456789").unwrap();
    r.checks = vec![
        Check::new("step 1: inventory", Status::Pass, "1 device"),
        Check::new("step 2: rx_capture", Status::Pass, "2000000 samples"),
    ];
    r.status = overall_status(&r.checks);
    r.captures = vec![CaptureEntry::Other(json!({
        "device": "driver=rxsim,serial=SIM0",
        "requested": {"frequency_hz": 1e8, "sample_rate_hz": 1e6, "gain_db": 20.0},
        "actual": {"frequency_hz": 1e8, "sample_rate_hz": 1e6, "gain_db": 20.0, "bandwidth_hz": 1e6},
        "samples_requested": 1000000, "samples_received": 1000000,
        "overflows": 0, "dropped_samples": 0, "timeouts": 0,
        "peaks": [{"frequency_hz": 100.1e6, "power_db": -20.5, "snr_db": 60.1}],
        "noise_floor_db": -80.25,
        "clkin": {"tone_hz": 100.1e6, "measured_hz": 100.1e6, "ppm": 0.0012, "ppm_uncertainty": 0.003, "status": "PASS"},
        "iq_files": [{"path": ".local/rx_iq/R_1/cap1.sigmf-data", "format": "sigmf", "bytes": 10,
                      "sha256": sha256_hex(b"0123456789")}],
        "psd_db": [-80.0, -79.0, -81.0, -20.0, -80.0, -78.0],
        "status": "PASS"
    }))];
    r
}
