//! Shared helpers for the unit tests: a valid header to mutate.
use crate::{validate_task, Issue, ValidTask, ValidateOptions};

/// The ten required fields of a valid YELLOW-capable header, in order.
pub(crate) fn fields(hw: &str, rx: &str, tx: &str) -> Vec<(String, String)> {
    [
        ("TASK_ID", "T_1"),
        ("TASK_TITLE", "A test task"),
        ("SOURCE_BRANCH", "video-development"),
        ("EXPECTED_HEAD", "0123456789abcdef0123456789abcdef01234567"),
        ("REQUIRES_APPROVAL", "YES"),
        ("HARDWARE_ACCESS", hw),
        ("RF_RX", rx),
        ("RF_TX", tx),
        ("ALLOW_COMMIT", "NO"),
        ("ALLOW_PUSH", "RX_RESULT_ONLY"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Render header fields plus a body.
pub(crate) fn render(fields: &[(String, String)], body: &str) -> String {
    let mut s = String::new();
    for (k, v) in fields {
        s.push_str(&format!("{k} = {v}\n"));
    }
    s.push('\n');
    s.push_str(body);
    s
}

/// Replace (or with `None` remove) a field.
pub(crate) fn set(
    mut f: Vec<(String, String)>,
    key: &str,
    v: Option<&str>,
) -> Vec<(String, String)> {
    match v {
        Some(v) => {
            if let Some(e) = f.iter_mut().find(|(k, _)| k == key) {
                e.1 = v.to_owned();
            } else {
                f.push((key.to_owned(), v.to_owned()));
            }
        }
        None => f.retain(|(k, _)| k != key),
    }
    f
}

/// A plan block around some JSON.
pub(crate) fn plan(json: &str) -> String {
    format!("# Plan\n\n```rx-plan\n{json}\n```\n")
}

pub(crate) fn ok(text: &str) -> ValidTask {
    match validate_task(text, &ValidateOptions::default()) {
        Ok(t) => t,
        Err(e) => panic!("expected valid, got {e:?}\n{text}"),
    }
}

pub(crate) fn errs(text: &str) -> Vec<Issue> {
    match validate_task(text, &ValidateOptions::default()) {
        Ok(t) => panic!("expected invalid, got valid {}\n{text}", t.id()),
        Err(e) => e,
    }
}

/// Assert one issue has this line, field, and a message containing `needle`.
pub(crate) fn has(issues: &[Issue], line: Option<usize>, field: Option<&str>, needle: &str) {
    assert!(
        issues
            .iter()
            .any(|i| i.line == line && i.field.as_deref() == field && i.message.contains(needle)),
        "no issue ({line:?}, {field:?}, ~{needle:?}) in {issues:#?}"
    );
}

pub(crate) const TX_STEP: &str = r#"{"op": "tx_tone", "device": "driver=hackrf", "frequency_hz": 433.92e6, "sample_rate_hz": 2.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 1.0}"#;
pub(crate) const RX_STEP: &str = r#"{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 100.0e6, "sample_rate_hz": 2.0e6, "gain_db": 20, "duration_s": 2.0, "fft_size": 2048, "record_iq": true, "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}}"#;

/// A valid RED TX task with one tx_tone step.
pub(crate) fn tx_task() -> ValidTask {
    ok(&render(
        &fields("YES", "NO", "YES"),
        &plan(&format!(r#"{{"steps": [{TX_STEP}]}}"#)),
    ))
}

/// Proptest settings for `cases` cases whose failure seeds persist in
/// `interlock/proptest-regressions/<seeds>.seeds` — not proptest's default
/// `<file>.txt`, so that `find . -name '*tx*'` lists only the files that can
/// key a transmitter.
pub(crate) fn proptest_config(cases: u32, seeds: &str) -> proptest::prelude::ProptestConfig {
    let path = format!(
        "{}/proptest-regressions/{seeds}.seeds",
        env!("CARGO_MANIFEST_DIR")
    );
    proptest::prelude::ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(Box::leak(path.into_boxed_str())),
        )),
        ..proptest::prelude::ProptestConfig::default()
    }
}
