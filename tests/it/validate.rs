//! `rxnode validate` on the fixtures, through the real binary.
use serde::Deserialize;
use std::path::{Path, PathBuf};
#[cfg_attr(not(unix), allow(unused_imports))]
use std::process::{Command, Output};

mod plan_markdown;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    valid: bool,
    task_id: Option<String>,
    risk_level: Option<String>,
    risk_reasons: Vec<String>,
    task_sha256: Option<String>,
    errors: Vec<ErrorEntry>,
    #[serde(default)]
    target_nodes: Option<Vec<String>>,
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    steps: Vec<StepEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepEntry {
    step: usize,
    op: String,
    summary: String,
    transmits: bool,
    iq_bytes: u64,
    verdict: Option<String>,
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorEntry {
    line: Option<usize>,
    field: Option<String>,
    message: String,
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn rxnode(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    crate::util::rxnode_bin()
        .args(args)
        .current_dir(cwd)
        .env_remove("RXNODE_BRANCH")
        .env_remove("RXNODE_REPO")
        .output()
        .expect("run rxnode")
}

fn validate_json(path: &Path) -> (i32, Report) {
    let tmp = tempfile::TempDir::new().unwrap();
    let out = rxnode(
        &["validate".as_ref(), path.as_os_str(), "--json".as_ref()],
        tmp.path(),
    );
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: not a report ({e}): {}\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

#[test]
fn valid_fixtures_and_their_risk() {
    for (name, id, risk) in [
        ("watcher_test_task.md", "WATCHER_TEST_001", "GREEN"),
        ("valid_green.md", "FIX_GREEN_001", "GREEN"),
        ("valid_yellow_rx.md", "FIX_YELLOW_001", "YELLOW"),
        ("valid_red_transmit.md", "FIX_RED_TX_001", "RED"),
        ("valid_red_other.md", "FIX_RED_FW_001", "RED"),
        ("valid_declared_higher.md", "FIX_HIGHER_001", "YELLOW"),
        ("valid_bom_crlf_tight.md", "FIX_BOM_001", "GREEN"),
        ("valid_target_nodes.md", "FIX_TARGETS_001", "GREEN"),
    ] {
        let (code, r) = validate_json(&fixture(name));
        let want_nodes = (name == "valid_target_nodes.md")
            .then(|| vec!["LAB-RX1".to_owned(), "LAB-RX2".to_owned()]);
        assert_eq!(r.target_nodes, want_nodes, "{name}");
        assert_eq!(code, 0, "{name}: {r:?}");
        assert!(r.valid, "{name}");
        assert_eq!(r.task_id.as_deref(), Some(id), "{name}");
        assert_eq!(r.risk_level.as_deref(), Some(risk), "{name}");
        assert!(r.errors.is_empty(), "{name}");
    }
}

/// (fixture, [(line, field, message fragment)]) — every error of the file, exactly.
/// An expected error: line, field, message fragment.
type Expected = (usize, Option<&'static str>, &'static str);

const INVALID: &[(&str, &[Expected])] = &[
    (
        "invalid_missing_field.md",
        &[(1, Some("RF_TX"), "missing required field RF_TX")],
    ),
    (
        "invalid_duplicate_field.md",
        &[(11, Some("RF_RX"), "duplicate field RF_RX (first on line 7)")],
    ),
    (
        "invalid_unknown_field.md",
        &[(11, Some("PRIORITY"), "unknown field \"PRIORITY\"")],
    ),
    (
        "invalid_bad_value.md",
        &[(
            6,
            Some("HARDWARE_ACCESS"),
            "invalid value \"yes\": expected YES or NO",
        )],
    ),
    (
        "invalid_task_id_traversal.md",
        &[(
            1,
            Some("TASK_ID"),
            "\"../../etc/passwd\": must match [A-Za-z0-9_-]{1,64}",
        )],
    ),
    (
        "invalid_task_id_space.md",
        &[(1, Some("TASK_ID"), "\"TASK 1\": must match")],
    ),
    (
        "invalid_task_id_long.md",
        &[(1, Some("TASK_ID"), "must match [A-Za-z0-9_-]{1,64}")],
    ),
    (
        "invalid_expected_head.md",
        &[(
            4,
            Some("EXPECTED_HEAD"),
            "expected exactly 40 hex characters",
        )],
    ),
    (
        "invalid_expected_head_hex.md",
        &[(
            4,
            Some("EXPECTED_HEAD"),
            "expected exactly 40 hex characters",
        )],
    ),
    (
        "invalid_requires_approval_no.md",
        &[(5, Some("REQUIRES_APPROVAL"), "NO is rejected")],
    ),
    (
        "invalid_source_branch.md",
        &[(
            3,
            Some("SOURCE_BRANCH"),
            "\"main\" is not the watched branch \"video-development\"",
        )],
    ),
    (
        "invalid_target_nodes.md",
        &[
            (
                11,
                Some("TARGET_NODES"),
                "entry 2 is empty (a stray comma?)",
            ),
            (11, Some("TARGET_NODES"), "node LAB-RX1 is listed twice"),
        ],
    ),
    (
        "invalid_allow_push.md",
        &[(10, Some("ALLOW_PUSH"), "expected NO or RX_RESULT_ONLY")],
    ),
    (
        "invalid_rf_rx_without_hardware.md",
        &[(7, Some("RF_RX"), "RF_RX = YES needs HARDWARE_ACCESS = YES")],
    ),
    (
        "invalid_rf_transmit_without_hardware.md",
        &[(8, Some("RF_TX"), "RF_TX = YES needs HARDWARE_ACCESS = YES")],
    ),
    (
        "invalid_empty_title.md",
        &[(2, Some("TASK_TITLE"), "empty title")],
    ),
    (
        "invalid_long_title.md",
        &[(2, Some("TASK_TITLE"), "201 characters long; at most 200")],
    ),
    (
        "invalid_risk_lower.md",
        &[(
            11,
            Some("RISK_LEVEL"),
            "declared GREEN is lower than the derived RED",
        )],
    ),
    (
        "invalid_not_key_value.md",
        &[
            (1, Some("RF_TX"), "missing required field RF_TX"),
            (8, None, "header line is not KEY = VALUE"),
        ],
    ),
    (
        "invalid_plan_unknown_op.md",
        &[(14, Some("op"), "unknown op \"flash_firmware\"")],
    ),
    (
        "invalid_plan_unknown_field.md",
        &[(14, Some("power_w"), "unknown field `power_w`")],
    ),
    (
        "invalid_plan_bad_json.md",
        &[(17, Some("rx-plan"), "rx-plan is not valid JSON")],
    ),
    (
        "invalid_plan_two_blocks.md",
        &[(
            22,
            Some("rx-plan"),
            "more than one rx-plan block (2 found; first on line 14)",
        )],
    ),
    (
        "invalid_plan_transmit_without_rf_transmit.md",
        &[(14, Some("RF_TX"), "(tx_tone) transmits but RF_TX = NO")],
    ),
    (
        "invalid_plan_rx_without_rf_rx.md",
        &[(14, Some("RF_RX"), "(rx_capture) receives but RF_RX = NO")],
    ),
    (
        "invalid_plan_hw_without_access.md",
        &[(
            14,
            Some("HARDWARE_ACCESS"),
            "(inventory) touches hardware but HARDWARE_ACCESS = NO",
        )],
    ),
    (
        "invalid_plan_nonpositive.md",
        &[
            (
                14,
                Some("sample_rate_hz"),
                "sample_rate_hz must be a positive finite number, got 0",
            ),
            (
                14,
                Some("duration_s"),
                "duration_s must be a positive finite number, got -2",
            ),
        ],
    ),
    (
        "invalid_many_errors.md",
        &[
            (
                1,
                Some("ALLOW_COMMIT"),
                "missing required field ALLOW_COMMIT",
            ),
            (1, Some("TASK_ID"), "\"bad id!\""),
            (2, Some("TASK_TITLE"), "empty title"),
            (4, Some("EXPECTED_HEAD"), "\"xyz\""),
            (9, Some("ALLOW_PUSH"), "\"ALL\""),
            (10, Some("COLOR"), "unknown field \"COLOR\""),
        ],
    ),
];

#[test]
fn invalid_fixtures_json_every_error() {
    for (name, expected) in INVALID {
        let (code, r) = validate_json(&fixture(name));
        assert_eq!(code, 2, "{name}");
        assert!(!r.valid, "{name}");
        assert_eq!(r.task_id, None, "{name}");
        assert_eq!(r.risk_level, None, "{name}");
        assert_eq!(r.errors.len(), expected.len(), "{name}: {:#?}", r.errors);
        for (line, field, msg) in *expected {
            assert!(
                r.errors.iter().any(|e| e.line == Some(*line)
                    && e.field.as_deref() == *field
                    && e.message.contains(msg)),
                "{name}: no error ({line}, {field:?}, ~{msg:?}) in {:#?}",
                r.errors
            );
        }
    }
}

#[test]
fn every_invalid_fixture_is_covered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("invalid_") {
            assert!(
                INVALID.iter().any(|(n, _)| *n == name),
                "{name} has no expectation"
            );
        }
    }
}

#[test]
fn human_output_lines() {
    let tmp = tempfile::TempDir::new().unwrap();
    let f = fixture("invalid_many_errors.md");
    let out = rxnode(&["validate".as_ref(), f.as_os_str()], tmp.path());
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let name = f.display().to_string();
    for line in [
        format!("{name}:1: ALLOW_COMMIT: missing required field ALLOW_COMMIT"),
        format!("{name}:2: TASK_TITLE: empty title"),
        format!("{name}:10: COLOR: unknown field \"COLOR\""),
    ] {
        assert!(err.lines().any(|l| l == line), "missing {line:?} in\n{err}");
    }
    assert!(err.contains("invalid (6 error(s))"));
    // A file that cannot be read has no line or field: protocol.md's
    // `FILE: message`, with no placeholder for either.
    let missing = tmp.path().join("no_such_task.md");
    let out = rxnode(&["validate".as_ref(), missing.as_os_str()], tmp.path());
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let name = missing.display().to_string();
    assert!(
        err.lines()
            .any(|l| l.starts_with(&format!("{name}: cannot open task file"))),
        "{err}"
    );
    assert!(!err.contains(":-"), "{err}");
    assert!(
        err.contains(&format!("{name}: invalid (1 error(s))")),
        "{err}"
    );

    let f = fixture("valid_red_transmit.md");
    let out = rxnode(&["validate".as_ref(), f.as_os_str()], tmp.path());
    expect_exit!(out, 0);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("FIX_RED_TX_001"), "{s}");
    assert!(s.contains("risk:  RED"), "{s}");
}

#[test]
fn branch_flag_changes_the_watched_branch() {
    let tmp = tempfile::TempDir::new().unwrap();
    let f = fixture("invalid_source_branch.md");
    let out = rxnode(
        &[
            "validate".as_ref(),
            f.as_os_str(),
            "--branch".as_ref(),
            "main".as_ref(),
            "--json".as_ref(),
        ],
        tmp.path(),
    );
    expect_exit!(out, 0);
    let out = rxnode(
        &[
            "validate".as_ref(),
            fixture("valid_green.md").as_os_str(),
            "--branch".as_ref(),
            "main".as_ref(),
        ],
        tmp.path(),
    );
    expect_exit!(out, 2);
}

/// `validate --json` carries what the text prints as fields: the SHA-256 of the
/// file's bytes (the `task_sha256` a node records for the task it ran) and the
/// risk's reasons; an invalid task has neither.
#[test]
fn validate_json_carries_the_task_hash_and_risk_reasons_the_text_prints() {
    use sha2::Digest as _;
    for name in ["valid_yellow_rx.md", "valid_bom_crlf_tight.md"] {
        let p = fixture(name);
        let want = hex::encode(sha2::Sha256::digest(std::fs::read(&p).unwrap()));
        let (code, r) = validate_json(&p);
        assert_eq!(code, 0, "{name}: {r:?}");
        assert_eq!(r.task_sha256.as_deref(), Some(want.as_str()), "{name}");
        let tmp = tempfile::TempDir::new().unwrap();
        let text =
            String::from_utf8(rxnode(&["validate".as_ref(), p.as_os_str()], tmp.path()).stdout)
                .unwrap();
        assert!(text.contains(&format!("sha256: {want}")), "{name}: {text}");
        assert!(
            !r.risk_reasons.is_empty() || r.risk_level.as_deref() == Some("GREEN"),
            "{name}"
        );
        for reason in &r.risk_reasons {
            assert!(
                text.contains(reason.as_str()),
                "{name}: {reason:?} not in {text}"
            );
        }
    }
    let (code, r) = validate_json(&fixture("invalid_missing_field.md"));
    assert_eq!(code, 2);
    assert_eq!(r.task_sha256, None);
    assert!(r.risk_reasons.is_empty());
}

fn header_bytes() -> Vec<u8> {
    std::fs::read(fixture("valid_green.md")).unwrap()
}

#[test]
fn oversized_file_rejected_without_panic() {
    let tmp = tempfile::TempDir::new().unwrap();
    let p = tmp.path().join("big.md");
    let mut b = header_bytes();
    b.resize(1024 * 1024 + 1, b'x');
    std::fs::write(&p, &b).unwrap();
    let (code, r) = validate_json(&p);
    assert_eq!(code, 2);
    assert!(!r.valid);
    assert!(
        r.errors[0]
            .message
            .contains("1048577 bytes; at most 1048576"),
        "{r:?}"
    );
    // Exactly 1 MiB is still read (and here valid: the body is just long).
    b.truncate(1024 * 1024);
    std::fs::write(&p, &b).unwrap();
    assert_eq!(validate_json(&p).0, 0);
}

#[test]
fn a_missing_file_is_bad_input_exit_2() {
    let tmp = tempfile::TempDir::new().unwrap();
    let p = tmp.path().join("no-such-task.md");
    let (code, r) = validate_json(&p);
    assert_eq!(code, 2, "{r:?}");
    assert!(!r.valid);
    assert!(r.errors[0].message.contains("no-such-task.md"), "{r:?}");
}

#[test]
fn binary_and_non_utf8_rejected() {
    let tmp = tempfile::TempDir::new().unwrap();
    let p = tmp.path().join("bin.md");
    let mut b = header_bytes();
    b.extend_from_slice(b"\x00\x01\x02\xff");
    std::fs::write(&p, &b).unwrap();
    let (code, r) = validate_json(&p);
    assert_eq!(code, 2);
    assert!(
        r.errors.iter().any(|e| e.message.contains("NUL byte")),
        "{r:?}"
    );

    let mut b = header_bytes();
    b.extend_from_slice(b"caf\xe9\n");
    std::fs::write(&p, &b).unwrap();
    let (code, r) = validate_json(&p);
    assert_eq!(code, 2);
    assert!(
        r.errors.iter().any(|e| e.message.contains("not UTF-8")),
        "{r:?}"
    );

    // Random bytes (an image, say): exit 2 and a report, never a panic.
    let junk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&p, &junk).unwrap();
    let out = rxnode(&["validate".as_ref(), p.as_os_str()], tmp.path());
    expect_exit!(out, 2);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn missing_file_and_directory() {
    let tmp = tempfile::TempDir::new().unwrap();
    let out = rxnode(&["validate".as_ref(), "nope.md".as_ref()], tmp.path());
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.md"));
    let out = rxnode(
        &["validate".as_ref(), ".".as_ref(), "--json".as_ref()],
        tmp.path(),
    );
    expect_exit!(out, 2);
}

/// A FIFO given as the task file used to block `validate`
/// for ever (it was opened before it was looked at); now it is refused at once.
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("task.md");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success());
    let (code, r) = validate_json(&fifo);
    assert_eq!(code, 2);
    assert!(!r.valid);
    assert!(
        r.errors[0].message.contains("not a regular file"),
        "{:?}",
        r.errors
    );
}

/// Polish review: an issue with no line or field used to print placeholders
/// ("nope.md:-: -: cannot read…"); print only what is known. `validate-result`
/// used to name the path twice ("x.json: x.json: cannot read…").
#[test]
fn human_output_has_no_placeholders() {
    let tmp = tempfile::TempDir::new().unwrap();
    let out = rxnode(&["validate".as_ref(), "nope.md".as_ref()], tmp.path());
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("nope.md: "), "{err}");
    // A message that starts with the name (an oversized file) names it once.
    std::fs::write(tmp.path().join("big.md"), vec![b'x'; 1_048_577]).unwrap();
    let out = rxnode(&["validate".as_ref(), "big.md".as_ref()], tmp.path());
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("big.md: task file is 1048577 bytes"),
        "{err}"
    );
    assert!(!err.contains(":-:") && !err.contains(" -: "), "{err}");

    let out = rxnode(
        &["validate-result".as_ref(), "missing.json".as_ref()],
        tmp.path(),
    );
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert!(first.starts_with("missing.json: cannot read"), "{err}");
    assert_eq!(first.matches("missing.json").count(), 1, "{err}");
}

/// `validate FILE --policy P` gives the verdict the prompt gives, per step, in text
/// and in `--json`: a TX step is marked TRANSMIT and is refused by a policy without
/// a TX range, allowed by one that holds its on-air span; an RX step over a limit
/// would be BLOCKED, naming the limit.
#[test]
fn validate_with_a_policy_prints_the_verdict_per_step() {
    let tmp = tempfile::TempDir::new().unwrap();
    let pol = |name: &str, json: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, json).unwrap();
        p
    };
    let no_tx = pol("no-tx.json", r#"{"rx": {"max_duration_s": 1}}"#);
    let tx_ok = pol(
        "tx.json",
        r#"{"tx": {"allowed_ranges_hz": [[433.05e6, 434.79e6]], "max_gain_db": 0, "max_duration_s": 2}}"#,
    );
    let red = fixture("valid_red_transmit.md");
    let run = |file: &Path, policy: &Path, json: bool| {
        let mut a: Vec<&std::ffi::OsStr> = vec![
            "validate".as_ref(),
            file.as_os_str(),
            "--policy".as_ref(),
            policy.as_os_str(),
        ];
        if json {
            a.push("--json".as_ref());
        }
        rxnode(&a, tmp.path())
    };
    let out = run(&red, &no_tx, false);
    let so = String::from_utf8_lossy(&out.stdout).into_owned();
    expect_exit!(out, 0);
    assert!(
        so.contains("1. TRANSMIT tx_tone driver=rxsim,serial=SIM0: LO 433.920 MHz, tone offset +50.000 kHz → on air 433.970 MHz (image 433.870 MHz, LO leakage 433.920 MHz), 2.000 MS/s, TX gain 0 dB, 1.0 s"),
        "{so}"
    );
    assert!(
        so.contains("→ would be REFUSED — `rxnode run` stops before any step: no tx section in the local policy: TX is refused"),
        "{so}"
    );
    let out = run(&red, &tx_ok, true);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.policy.as_deref(), Some(tx_ok.to_str().unwrap()));
    assert_eq!(r.steps.len(), 1);
    let s = &r.steps[0];
    assert_eq!((s.step, s.op.as_str(), s.transmits), (1, "tx_tone", true));
    assert_eq!(s.verdict.as_deref(), Some("within policy"), "{s:?}");
    assert!(s.summary.starts_with("TRANSMIT tx_tone"), "{s:?}");
    // An RX capture over the duration limit.
    let yellow = fixture("valid_yellow_rx.md");
    let out = run(&yellow, &no_tx, true);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    let blocked: Vec<&StepEntry> = r
        .steps
        .iter()
        .filter(|s| s.verdict.as_deref() == Some("blocked"))
        .collect();
    assert!(!blocked.is_empty(), "{r:?}");
    for s in blocked {
        let why = s.reason.as_deref().unwrap_or("");
        assert!(why.contains("exceeds rx.max_duration_s 1"), "{s:?}");
    }
    let captures: Vec<&StepEntry> = r.steps.iter().filter(|s| s.op == "rx_capture").collect();
    assert_eq!(captures.len(), 1, "{r:?}");
    assert_eq!(captures[0].iq_bytes, 32_000_000, "2 s × 2 MS/s × 8 B");
    assert!(
        captures[0].summary.starts_with(
            "rx_capture driver=rxsim,serial=SIM0: 100.000 MHz, 2.000 MS/s, gain 20 dB, 2.0 s"
        ) && captures[0].summary.ends_with("records IQ cf32 ≈ 32 MB"),
        "{captures:?}"
    );
    // A policy that does not parse is bad input, naming the file.
    let bad = pol("bad.json", r#"{"rx": {"max_duration": 1}}"#);
    let out = run(&yellow, &bad, false);
    expect_exit!(out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json"));
}

/// A plan value written in MHz or MS/s where the plan takes Hz and S/s
/// (`"frequency_hz": 433.92`, `"sample_rate_hz": 2`) is refused as implausible,
/// naming the field and the value it probably meant, never shown as 0.000434 MHz.
#[test]
fn a_plan_value_in_the_wrong_unit_is_refused_naming_the_field() {
    let tmp = tempfile::TempDir::new().unwrap();
    let text = std::fs::read_to_string(fixture("valid_yellow_rx.md"))
        .unwrap()
        .replace("\"frequency_hz\": 100.0e6", "\"frequency_hz\": 433.92")
        .replace("\"sample_rate_hz\": 2.0e6", "\"sample_rate_hz\": 2");
    let f = tmp.path().join("T.md");
    std::fs::write(&f, text).unwrap();
    let (code, r) = validate_json(&f);
    assert_eq!(code, 2, "{r:?}");
    assert!(!r.valid);
    let msg = |field: &str| {
        r.errors
            .iter()
            .find(|e| e.field.as_deref() == Some(field))
            .map(|e| e.message.clone())
            .unwrap_or_else(|| panic!("no error on {field}: {r:?}"))
    };
    assert_eq!(
        msg("frequency_hz"),
        "rx-plan step 3: frequency_hz 433.92 Hz is implausible (below 1 kHz); \
         plan values are in Hz and S/s (433.92 M is 433920000)"
    );
    assert_eq!(
        msg("sample_rate_hz"),
        "rx-plan step 3: sample_rate_hz 2 S/s is implausible (below 1 kS/s); \
         plan values are in Hz and S/s (2 M is 2000000)"
    );
}

/// An `rx_capture` whose `duration_s × sample_rate_hz` is below its `fft_size` would
/// measure no spectrum (no Welch segment): refused, naming the fields and the counts.
#[test]
fn a_capture_shorter_than_one_fft_is_refused() {
    let tmp = tempfile::TempDir::new().unwrap();
    let text = std::fs::read_to_string(fixture("valid_yellow_rx.md")).unwrap();
    let (was, now) = (
        "\"duration_s\": 2.0, \"fft_size\": 2048",
        "\"duration_s\": 0.1, \"fft_size\": 1048576",
    );
    assert!(text.contains(was), "{text}");
    let text = text.replace(was, now);
    let f = tmp.path().join("T.md");
    std::fs::write(&f, text).unwrap();
    let (code, r) = validate_json(&f);
    assert_eq!(code, 2, "{r:?}");
    let e = r
        .errors
        .iter()
        .find(|e| e.field.as_deref() == Some("duration_s"))
        .unwrap_or_else(|| panic!("no duration_s error: {r:?}"));
    assert!(
        e.message.contains(
            "duration_s 0.1 × sample_rate_hz 2000000 = 200000 samples, fewer than one Welch \
             segment of fft_size 1048576: no spectrum would be measured; give duration_s ≥ \
             0.524288 or a smaller fft_size"
        ),
        "{}",
        e.message
    );
}

/// A task or a policy saved as UTF-16 (an editor's "Unicode", with its byte
/// order mark) is refused naming that encoding and the fix, exit 2 — not as
/// "binary content (NUL byte)" or "stream did not contain valid UTF-8".
#[test]
fn utf16_task_and_policy_are_named_with_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let utf16 = |text: &str| {
        let mut b = vec![0xFF, 0xFE];
        for u in text.encode_utf16() {
            b.extend_from_slice(&u.to_le_bytes());
        }
        b
    };
    let task = "TASK_ID = U16\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\n\
                EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\n\
                REQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\n\
                ALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# t\n";
    std::fs::write(d.path().join("u8.md"), task).unwrap();
    std::fs::write(d.path().join("u16.md"), utf16(task)).unwrap();
    std::fs::write(
        d.path().join("policy.json"),
        utf16(r#"{"rx": {"max_duration_s": 10}}"#),
    )
    .unwrap();
    let run = |args: &[&str]| {
        crate::util::rxnode_bin()
            .current_dir(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&["validate", "u16.md"]);
    assert_eq!(o.status.code(), Some(2));
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("u16.md:1: task file is UTF-16 little-endian (it starts with that byte order mark); a task is UTF-8: save it as UTF-8"),
        "{said}"
    );
    let o = run(&["--policy", "policy.json", "validate", "u8.md"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("policy.json is UTF-16 little-endian") && err.contains("save it as UTF-8"),
        "{err}"
    );
}
