//! Result JSON validation (the `rxnode` library's `validate_result_files`):
//! arbitrary bytes as RX_RESULT.json beside a fixed RX_RESULT.md →
//! `validate_result_files` must not panic; and whatever deserializes into the
//! typed result must render to Markdown without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rxnode::{markdown_for_result_json, validate_result_files, RESULT_JSON, RESULT_MD};

const MD: &[u8] = include_bytes!("../../fixtures/results/FIX_YELLOW_001/RX_RESULT.md");

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let out = dir.path().join("out");
    if std::fs::create_dir(&out).is_err() {
        return;
    }
    let json = out.join(RESULT_JSON);
    if std::fs::write(&json, data).is_err() || std::fs::write(out.join(RESULT_MD), MD).is_err() {
        return;
    }
    let problems = validate_result_files(&json, dir.path());
    if serde_json::from_slice::<serde_json::Value>(data).is_err() {
        assert!(!problems.is_empty(), "invalid JSON judged valid");
    }
    if let Some(md) = markdown_for_result_json(data) {
        assert!(!md.is_empty());
    }
});
