//! The validator ties array
//! lengths to the sizes a result declares, refuses absolute paths in every
//! string (any OS) and duplicate keys.
use super::*;
use crate::result::files::write_result_files;
use crate::result::model::{overall_status, Check, RxResult, Timeline};
use crate::result::sections::CaptureEntry;
use rxnode_interlock::{validate_task, Approval, ValidateOptions};
use serde_json::json;

const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// A valid result with one capture of `fft_size` 8 and its files in `dir`.
fn one_capture(dir: &Path) -> RxResult {
    let t = format!(
        "TASK_ID = R_13\nTASK_TITLE = Strict\nSOURCE_BRANCH = video-development\n\
         EXPECTED_HEAD = {HEAD}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\n\
         RF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\nBody\n"
    );
    let t = validate_task(&t, &ValidateOptions::default()).unwrap();
    let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
    let mut r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
    r.timeline = Timeline {
        started_at: Some("2026-01-01T10:05:00+00:00".into()),
        completed_at: Some("2026-01-01T10:05:03+00:00".into()),
        wall_clock_step_s: None,
    };
    let _ = dir;
    r.checks = vec![Check::new("step 1: rx_capture", Status::Pass, "ok")];
    r.status = overall_status(&r.checks);
    r.captures = vec![CaptureEntry::Other(json!({
        "device": "driver=rxsim,serial=SIM0", "fft_size": 8,
        "peaks": [{"frequency_hz": 1e8, "power_db": -20.0, "snr_db": 50.0}],
        "psd_db": [-80.0, -79.0, -81.0, -20.0, -80.0, -78.0, -80.0, -80.0],
        "iq_files": [], "status": "PASS"
    }))];
    r
}

fn problems(dir: &Path, r: &RxResult) -> Vec<String> {
    let out = dir.join("out");
    write_result_files(&out, r).unwrap();
    validate_result_files(&out.join(RESULT_JSON), dir)
}

#[test]
fn a_valid_capture_passes() {
    let d = tempfile::tempdir().unwrap();
    let p = problems(d.path(), &one_capture(d.path()));
    assert!(p.is_empty(), "{p:#?}");
}

#[test]
fn arrays_longer_than_the_declared_sizes_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let mut r = one_capture(d.path());
    r.captures[0].other_mut()["psd_db"] = json!(vec![-80.0; 9]);
    let p = problems(d.path(), &r);
    assert!(
        p.iter()
            .any(|s| s
                .contains("captures[0].psd_db: 9 values but the capture has 8 bins (fft_size)")),
        "{p:#?}"
    );
    // Without fft_size: the engine's 512-point trace at most.
    let mut r = one_capture(d.path());
    r.captures[0]
        .other_mut()
        .as_object_mut()
        .unwrap()
        .remove("fft_size");
    r.captures[0].other_mut()["psd_db"] = json!(vec![-80.0; 513]);
    let p = problems(d.path(), &r);
    assert!(
        p.iter()
            .any(|s| s.contains("513 values") && s.contains("no fft_size declared")),
        "{p:#?}"
    );
    // Peaks, IQ files, captures per check, bad element types.
    let mut r = one_capture(d.path());
    r.captures[0].other_mut()["peaks"] = json!(vec![json!({"frequency_hz": 1.0}); 9]);
    r.captures[0].other_mut()["psd_db"] = json!([-80.0, "x"]);
    let p = problems(d.path(), &r);
    assert!(
        p.iter()
            .any(|s| s.contains("captures[0].peaks: 9 peaks; at most 8")),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|s| s.contains("captures[0].psd_db[1]: expected a number")),
        "{p:#?}"
    );
    let mut r = one_capture(d.path());
    r.captures.push(r.captures[0].clone());
    let p = problems(d.path(), &r);
    assert!(
        p.iter()
            .any(|s| s.contains("captures: 2 entries but only 1 checks")),
        "{p:#?}"
    );
    let mut r = one_capture(d.path());
    r.captures[0].other_mut()["fft_size"] = json!(-3);
    let p = problems(d.path(), &r);
    assert!(
        p.iter().any(|s| s.contains("captures[0].fft_size")),
        "{p:#?}"
    );
}

#[test]
fn absolute_paths_on_any_os_are_refused_anywhere() {
    let d = tempfile::tempdir().unwrap();
    for planted in [
        "/etc/passwd",
        "/dev/ttyUSB0",
        "C:\\Users\\lab\\cap.wav",
        "D:/iq/cap.wav",
        "\\\\server\\share\\x",
        "//server/share",
        "~/iq/cap.wav",
        "~alice/iq",
        "file:///home/x",
        "saved to /srv/iq/x.cf32 (3 MB)",
    ] {
        let mut r = one_capture(d.path());
        r.captures[0].other_mut()["note"] = json!(planted);
        let p = problems(d.path(), &r);
        assert!(
            p.iter()
                .any(|s| s.starts_with("captures[0].note: holds the absolute path")),
            "{planted:?}: {p:#?}"
        );
        let mut r = one_capture(d.path());
        r.errors = vec![format!("step 1: {planted}")];
        let p = problems(d.path(), &r);
        assert!(
            p.iter()
                .any(|s| s.starts_with("errors[0]: holds the absolute path")),
            "{planted:?}: {p:#?}"
        );
    }
    for harmless in [
        "rate 2 MS/s, 10/20 ok",
        "see https://example.com/a/b",
        ".local/rx_iq/R_13/capture-1.sigmf-data",
        "driver=rxsim,serial=SIM0",
        "a / b and \\\\ alone",
        "~ 12 ms",
    ] {
        assert_eq!(absolute_path_in(harmless), None, "{harmless:?}");
    }
}

#[test]
fn duplicate_keys_in_a_result_are_refused_with_key_and_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    write_result_files(&out, &one_capture(d.path())).unwrap();
    let p = out.join(RESULT_JSON);
    let text = std::fs::read_to_string(&p).unwrap();
    let text = text.replacen(
        "\"status\": \"PASS\",",
        "\"status\": \"FAIL\",\n  \"status\": \"PASS\",",
        1,
    );
    std::fs::write(&p, &text).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"status\": \"PASS\""))
        .unwrap()
        + 1;
    let probs = validate_result_files(&p, d.path());
    assert!(
        probs
            .iter()
            .any(|s| s.contains(&format!("line {line}: duplicate key \"status\""))),
        "{probs:#?}"
    );
}

/// `pictures` is checked as its type and its bounds: a trace longer than 1024
/// points or arrays of unequal length are refused, naming the field.
#[test]
fn a_pictures_section_out_of_its_bounds_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let mut r = one_capture(d.path());
    let spectrum = |n: usize, m: usize| {
        json!({"spectra": [{"of": "capture", "index": 1, "title": "t", "freq_known": true,
               "start_hz": 1e8, "step_hz": 1e3, "min_db": vec![-80.0; n],
               "max_db": vec![-70.0; n], "mean_db": vec![-75.0; m], "peaks": [],
               "noise_floor_db": null}]})
    };
    r.pictures = serde_json::from_value(spectrum(10, 10)).unwrap();
    let p = problems(d.path(), &r);
    assert!(p.is_empty(), "{p:#?}");
    r.pictures = serde_json::from_value(spectrum(1025, 1025)).unwrap();
    let p = problems(d.path(), &r);
    assert!(
        p.iter()
            .any(|s| s.contains("pictures.spectra[0]") && s.contains("1024")),
        "{p:?}"
    );
    r.pictures = serde_json::from_value(spectrum(10, 9)).unwrap();
    let p = problems(d.path(), &r);
    assert!(p.iter().any(|s| s.contains("pictures.spectra[0]")), "{p:?}");
}

/// A picture whose axis no radio shows is refused, naming the field: an end that
/// overflows f64 (start 1e308, step 1e307), a start beyond 1 THz, a peak at 1e300
/// Hz, a level past ±1000 dB, a heatmap row at 1e300 s; and two spectra of one
/// index (drawn into one file) are refused, naming the index.
#[test]
fn a_picture_axis_no_radio_shows_is_refused_naming_the_field() {
    let d = tempfile::tempdir().unwrap();
    let mut r = one_capture(d.path());
    let spectrum = |index: u32, start: f64, step: f64| {
        json!({"of": "capture", "index": index, "title": "t", "freq_known": true,
               "start_hz": start, "step_hz": step, "min_db": vec![-80.0; 10],
               "max_db": vec![-70.0; 10], "mean_db": vec![-75.0; 10], "peaks": [],
               "noise_floor_db": null})
    };
    let refused = |r: &mut RxResult, pictures: serde_json::Value, needle: &str| {
        r.pictures = serde_json::from_value(pictures).unwrap();
        let p = problems(d.path(), r);
        assert!(p.iter().any(|s| s.contains(needle)), "{needle}: {p:#?}");
    };
    refused(
        &mut r,
        json!({"spectra": [spectrum(1, 1e308, 1e307)]}),
        "pictures.spectra[0].start_hz: 1e308 is not a frequency axis start",
    );
    refused(
        &mut r,
        json!({"spectra": [spectrum(1, 1e8, 1e307)]}),
        "pictures.spectra[0].step_hz: 1e307 is not a frequency axis step",
    );
    refused(
        &mut r,
        json!({"spectra": [spectrum(1, 9.99e11, 1e9)]}),
        "pictures.spectra[0].step_hz: start_hz 999000000000 + step_hz 1000000000 × 9 ends at 1008000000000 Hz",
    );
    let mut peak = spectrum(1, 1e8, 1e3);
    peak["peaks"] = json!([{"frequency_hz": 1e300, "power_db": -20.0}]);
    refused(
        &mut r,
        json!({"spectra": [peak]}),
        "pictures.spectra[0].peaks[0].frequency_hz: 1e300 Hz is not a frequency",
    );
    let mut loud = spectrum(1, 1e8, 1e3);
    loud["max_db"][2] = json!(1.7014118346046923e38);
    refused(
        &mut r,
        json!({"spectra": [loud]}),
        "pictures.spectra[0]: a level of 1.7014118346046923e38 dB is not a level",
    );
    refused(
        &mut r,
        json!({"spectra": [spectrum(1, 1e8, 1e3), spectrum(1, 2e8, 1e3)]}),
        "pictures.spectra[1]: capture index 1 again (pictures.spectra[0] is drawn as SPECTRUM_1.png already)",
    );
    refused(
        &mut r,
        json!({"spectra": [], "heatmaps": [{"index": 2, "title": "h", "start_hz": 1e8,
               "step_hz": 1e3, "row_time_s": [0.0, 1e300], "rows": [[-80.0], [-81.0]]}]}),
        "pictures.heatmaps[0].row_time_s[1]: 1e300 s is not a row time",
    );
}
