//! Result JSON validation (`src/results.rs` of the `rxnode` binary, compiled
//! here through `#[path]` with the small modules it names): arbitrary bytes as
//! RX_RESULT.json beside a fixed RX_RESULT.md → `validate_result_files` must
//! not panic; and whatever deserializes into the typed `RxResult` must render
//! to Markdown without panicking.
#![no_main]
#![allow(dead_code, unused_imports)]
use libfuzzer_sys::fuzz_target;

#[path = "../../src/cli.rs"]
mod cli;
#[path = "../../src/exit.rs"]
mod exit;
#[path = "../../src/fsutil.rs"]
mod fsutil;
#[path = "../../src/paths.rs"]
mod paths;
#[path = "../../src/results.rs"]
mod results;

const MD: &[u8] = include_bytes!("../../fixtures/results/FIX_YELLOW_001/RX_RESULT.md");

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let out = dir.path().join("out");
    if std::fs::create_dir(&out).is_err() {
        return;
    }
    let json = out.join("RX_RESULT.json");
    if std::fs::write(&json, data).is_err() || std::fs::write(out.join("RX_RESULT.md"), MD).is_err()
    {
        return;
    }
    let problems = results::validate_result_files(&json, dir.path());
    if serde_json::from_slice::<serde_json::Value>(data).is_err() {
        assert!(!problems.is_empty(), "invalid JSON judged valid");
    }
    if let Ok(r) = serde_json::from_slice::<results::RxResult>(data) {
        let md = results::render_markdown(&r);
        assert!(!md.is_empty());
    }
});
