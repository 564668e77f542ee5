//! The plan the node reads is the plan a CommonMark reader (GitHub, the main PC's
//! viewer) sees: only a fenced `rx-plan` block at the top level is a plan, and a
//! plan fence anywhere else is refused naming its line and why
//! (docs/protocol.md#2-the-plan). Through `rxnode validate --json`.
use super::*;

const HEADER: &str = "TASK_ID = MD_1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\n\
    EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
    HARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n\
    # Manual check, no radio work\n\n";

const PLAN: &str = r#"{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,"sample_rate_hz":2e6,"gain_db":20,"duration_s":0.1}]}"#;

/// `validate --json` of `HEADER` + `body` (the body starts on line 14).
fn check(body: &str) -> (i32, Report) {
    let dir = tempfile::TempDir::new().unwrap();
    let p = dir.path().join("task.md");
    std::fs::write(&p, format!("{HEADER}{body}")).unwrap();
    validate_json(&p)
}

/// A plan fence CommonMark does not show as a plan is never run: the task is
/// invalid, with the fence's line and the construct that hides it.
#[test]
fn plan_fence_markdown_does_not_show_is_refused_with_line_and_reason() {
    let cases: &[(String, usize, &str)] = &[
        (
            format!("    ```rx-plan\n    {PLAN}\n    ```\n"),
            14,
            "indented by 4 or more spaces",
        ),
        (
            format!("<!--\n```rx-plan\n{PLAN}\n```\n-->\n"),
            15,
            "inside an HTML block or comment (from line 14)",
        ),
        (
            format!("- step one\n\n  ```rx-plan\n  {PLAN}\n  ```\n"),
            16,
            "inside a list (from line 14)",
        ),
        (
            format!("> ```rx-plan\n> {PLAN}\n> ```\n"),
            14,
            "inside a block quote",
        ),
        (
            format!("````markdown\n```rx-plan\n{PLAN}\n```\n````\n"),
            15,
            "inside the fenced code block opened on line 14",
        ),
        (
            format!("```\nnotes\n\n```rx-plan\n{PLAN}\n"),
            17,
            "never closed",
        ),
        (
            format!("~~~ RX-PLAN\n{PLAN}\n~~~\n"),
            14,
            "info string is \"RX-PLAN\"",
        ),
    ];
    for (body, line, why) in cases {
        let (code, r) = check(body);
        assert_eq!(code, 2, "{body}\n{r:?}");
        assert!(!r.valid);
        assert!(
            r.errors.iter().any(|e| e.line == Some(*line)
                && e.field.as_deref() == Some("rx-plan")
                && e.message
                    .contains("looks like a plan fence but is not the task's plan")
                && e.message.contains(why)),
            "{body}\nwant line {line} ~{why:?}: {:#?}",
            r.errors
        );
    }
}

/// The same plan as a top-level fence (``` or ~~~, up to three spaces in) is the
/// plan: valid, one step; a second top-level block is refused.
#[test]
fn top_level_plan_fence_is_the_plan_and_only_one_is_allowed() {
    for body in [
        format!("```rx-plan\n{PLAN}\n```\n"),
        format!("   ~~~~rx-plan\n{PLAN}\n   ~~~~\n"),
    ] {
        let (code, r) = check(&body);
        assert_eq!(code, 0, "{body}\n{r:?}");
        assert_eq!(r.steps.len(), 1, "{body}");
        assert_eq!(r.steps[0].op, "rx_capture");
    }
    let (code, r) = check(&format!(
        "```rx-plan\n{PLAN}\n```\n\n```rx-plan\n{PLAN}\n```\n"
    ));
    assert_eq!(code, 2);
    assert!(
        r.errors.iter().any(|e| e.line == Some(18)
            && e.message
                .contains("more than one rx-plan block (2 found; first on line 14)")),
        "{:#?}",
        r.errors
    );
}

/// A header key spelt with a look-alike letter names the character, its code
/// point and position, and the field it resembles; the key is shown escaped.
#[test]
fn lookalike_header_key_names_the_character() {
    let dir = tempfile::TempDir::new().unwrap();
    let p = dir.path().join("task.md");
    std::fs::write(&p, HEADER.replace("RF_TX = NO", "RF_\u{422}X = NO")).unwrap();
    let (code, r) = validate_json(&p);
    assert_eq!(code, 2);
    let e = r
        .errors
        .iter()
        .find(|e| e.message.starts_with("unknown field"))
        .unwrap_or_else(|| panic!("{:#?}", r.errors));
    assert_eq!(e.line, Some(8));
    assert_eq!(e.field.as_deref(), Some("RF_\\u{422}X"));
    assert_eq!(
        e.message,
        "unknown field \"RF_\\u{422}X\" (U+0422, a Cyrillic letter, at position 4: keys are \
         ASCII; did you mean RF_TX?)"
    );
}

/// Absurd but finite plan numbers are refused at parse time, the value printed
/// compactly with the plausible range; nothing runs to hundreds of digits.
#[test]
fn absurd_plan_numbers_are_refused_compactly() {
    let plan = r#"{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,
        "sample_rate_hz":2e6,"gain_db":-1e308,"duration_s":1e300,
        "clkin":{"tone_hz":100.1e6,"tolerance_ppm":1e6}}]}"#;
    let (code, r) = check(&format!("```rx-plan\n{plan}\n```\n"));
    assert_eq!(code, 2, "{r:?}");
    for (field, want) in [
        (
            "duration_s",
            "duration_s 1e300 s is outside the plausible range 0 … 1000000 s",
        ),
        (
            "gain_db",
            "gain_db -1e308 dB is outside the plausible range -100 … 200 dB",
        ),
        (
            "clkin.tolerance_ppm",
            "clkin.tolerance_ppm 1000000 ppm is outside the plausible range -1000 … 1000 ppm",
        ),
    ] {
        assert!(
            r.errors
                .iter()
                .any(|e| e.field.as_deref() == Some(field) && e.message.contains(want)),
            "{field}: {:#?}",
            r.errors
        );
    }
    assert!(r.errors.iter().all(|e| e.message.len() < 200), "{r:?}");
}

/// A policy saved with a UTF-8 byte-order mark (Windows editors, PowerShell 5) is
/// read as the operator wrote it.
#[test]
fn policy_with_a_byte_order_mark_is_read() {
    let dir = tempfile::TempDir::new().unwrap();
    let task = dir.path().join("task.md");
    std::fs::write(&task, format!("{HEADER}```rx-plan\n{PLAN}\n```\n")).unwrap();
    let pol = dir.path().join("policy.json");
    std::fs::write(
        &pol,
        "\u{feff}{\"rx\": {\"max_duration_s\": 0.05, \"max_gain_db\": 50}}\r\n",
    )
    .unwrap();
    let out = rxnode(
        &[
            "--json".as_ref(),
            "validate".as_ref(),
            task.as_os_str(),
            "--policy".as_ref(),
            pol.as_os_str(),
        ],
        dir.path(),
    );
    let r: Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(r.steps.len(), 1, "{r:?}");
    // The policy was applied: its 0.05 s limit refuses the 0.1 s capture.
    assert!(
        r.steps[0]
            .reason
            .as_deref()
            .is_some_and(|x| x.contains("max_duration_s")),
        "{r:?}"
    );
}
