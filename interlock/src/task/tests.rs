use super::*;
use crate::testutil::*;
use proptest::prelude::*;

fn green() -> Vec<(String, String)> {
    fields("NO", "NO", "NO")
}

#[test]
fn valid_green_manual() {
    let t = ok(&render(&green(), "Body.\n"));
    assert_eq!(t.id().as_str(), "T_1");
    assert_eq!(t.risk(), RiskLevel::Green);
    assert!(t.plan().is_none(), "no plan block = manual task");
    assert_eq!(t.body(), "Body.\n");
    assert_eq!(t.header().allow_push, crate::AllowPush::RxResultOnly);
}

#[test]
fn missing_required_field_each() {
    for f in crate::header::FIELDS
        .iter()
        .filter(|f| !crate::header::OPTIONAL.contains(f))
    {
        let e = errs(&render(&set(green(), f, None), ""));
        has(&e, Some(1), Some(f), &format!("missing required field {f}"));
    }
    // RISK_LEVEL is optional.
    ok(&render(&set(green(), "RISK_LEVEL", None), ""));
}

/// `TARGET_NODES` names the nodes a task is for: absent means every node; each
/// name follows the node-name rule; an empty list or entry, a repeated or an
/// invalid name is refused on its line.
#[test]
fn target_nodes_are_node_names_each_once() {
    assert_eq!(ok(&render(&green(), "")).header().target_nodes, None);
    let t = ok(&render(
        &set(green(), "TARGET_NODES", Some("LAB-RX1, LAB-RX2,lab_3")),
        "",
    ));
    assert_eq!(
        t.header().target_nodes.as_deref(),
        Some(
            &[
                "LAB-RX1".to_owned(),
                "LAB-RX2".to_owned(),
                "lab_3".to_owned()
            ][..]
        )
    );
    for (value, needle) in [
        ("", "empty list"),
        ("LAB-RX1,", "entry 2 is empty"),
        ("LAB-RX1, , LAB-RX2", "entry 2 is empty"),
        ("LAB-RX1, LAB-RX1", "node LAB-RX1 is listed twice"),
        (
            "LAB-RX1, lab-rx1",
            "nodes LAB-RX1 and lab-rx1 differ only in letter case",
        ),
        ("LAB RX1", "node name \"LAB RX1\" contains ' '"),
        (
            "LAB-RX1, lab/rx",
            "entry 2: node name \"lab/rx\" contains '/'",
        ),
        (&"x".repeat(33), "at most 32"),
        ("LAB-RX1, con", "is the Windows device name CON"),
        ("Lpt9", "is the Windows device name LPT9"),
    ] {
        let e = errs(&render(&set(green(), "TARGET_NODES", Some(value)), ""));
        has(&e, Some(11), Some("TARGET_NODES"), needle);
    }
    for ok_name in ["LAB-RX2", "a", "rx_1", &"x".repeat(32)] {
        assert!(crate::check_node_name(ok_name).is_ok(), "{ok_name}");
    }
}

/// A node name is a folder and a branch name on every node and main PC, some
/// on Windows: a device name is refused in any letter case, as for task IDs.
#[test]
fn windows_device_names_are_not_node_names() {
    for bad in [
        "CON", "con", "Prn", "AUX", "nul", "COM0", "com9", "LPT1", "lpt9",
    ] {
        let e = crate::check_node_name(bad).unwrap_err();
        assert!(e.contains("Windows device name"), "{bad}: {e}");
    }
    for ok in ["CONSOLE", "COM10", "LPT", "NUL-1", "AUX_2", "xCON"] {
        assert!(crate::check_node_name(ok).is_ok(), "{ok}");
    }
}

#[test]
fn duplicate_field_names_both_lines() {
    let mut f = green();
    f.push(("RF_TX".into(), "NO".into()));
    let e = errs(&render(&f, ""));
    has(
        &e,
        Some(11),
        Some("RF_TX"),
        "duplicate field RF_TX (first on line 8)",
    );
}

#[test]
fn unknown_field() {
    let e = errs(&render(&set(green(), "PRIORITY", Some("HIGH")), ""));
    has(&e, Some(11), Some("PRIORITY"), "unknown field \"PRIORITY\"");
    // Keys are case-sensitive.
    let e = errs(&render(&set(green(), "task_id", Some("x")), ""));
    has(&e, Some(11), Some("task_id"), "unknown field");
}

#[test]
fn invalid_yes_no_values() {
    for f in ["HARDWARE_ACCESS", "RF_RX", "RF_TX", "ALLOW_COMMIT"] {
        let line = green().iter().position(|(k, _)| k == f).map(|p| p + 1);
        for bad in ["yes", "Y", "TRUE", "", "N0"] {
            let e = errs(&render(&set(green(), f, Some(bad)), ""));
            has(&e, line, Some(f), "expected YES or NO");
        }
    }
}

#[test]
fn trailing_space_in_value_is_trimmed() {
    ok(&render(&set(green(), "RF_TX", Some("NO   ")), ""));
}

#[test]
fn task_id_bad_chars_length_traversal() {
    for bad in [
        "../etc/passwd",
        "a b",
        "a/b",
        "a.b",
        "",
        "é",
        "x\\y",
        &"x".repeat(65),
    ] {
        let e = errs(&render(&set(green(), "TASK_ID", Some(bad)), ""));
        has(
            &e,
            Some(1),
            Some("TASK_ID"),
            "must match [A-Za-z0-9_-]{1,64}",
        );
    }
    ok(&render(&set(green(), "TASK_ID", Some(&"a".repeat(64))), ""));
    ok(&render(&set(green(), "TASK_ID", Some("a-B_9")), ""));
}

#[test]
fn expected_head_length_and_hex() {
    for bad in [
        "0123456789abcdef0123456789abcdef0123456",   // 39
        "0123456789abcdef0123456789abcdef012345678", // 41
        "0123456789abcdef0123456789abcdef0123456g",  // non-hex
        "",
    ] {
        let e = errs(&render(&set(green(), "EXPECTED_HEAD", Some(bad)), ""));
        has(
            &e,
            Some(4),
            Some("EXPECTED_HEAD"),
            "exactly 40 hex characters",
        );
    }
    ok(&render(
        &set(green(), "EXPECTED_HEAD", Some(&"ABCDEF0123".repeat(4))),
        "",
    ));
}

#[test]
fn requires_approval_no_rejected() {
    let e = errs(&render(&set(green(), "REQUIRES_APPROVAL", Some("NO")), ""));
    has(&e, Some(5), Some("REQUIRES_APPROVAL"), "NO is rejected");
    let e = errs(&render(
        &set(green(), "REQUIRES_APPROVAL", Some("MAYBE")),
        "",
    ));
    has(&e, Some(5), Some("REQUIRES_APPROVAL"), "expected YES");
}

#[test]
fn source_branch_mismatch_and_parameter() {
    let text = render(&set(green(), "SOURCE_BRANCH", Some("main")), "");
    let e = errs(&text);
    has(
        &e,
        Some(3),
        Some("SOURCE_BRANCH"),
        "is not the watched branch \"video-development\"",
    );
    let opts = ValidateOptions {
        watched_branch: "main".into(),
    };
    assert!(validate_task(&text, &opts).is_ok());
}

#[test]
fn allow_push_invalid() {
    for bad in ["YES", "ALL", "rx_result_only"] {
        let e = errs(&render(&set(green(), "ALLOW_PUSH", Some(bad)), ""));
        has(
            &e,
            Some(10),
            Some("ALLOW_PUSH"),
            "expected NO or RX_RESULT_ONLY",
        );
    }
    let t = ok(&render(&set(green(), "ALLOW_PUSH", Some("NO")), ""));
    assert_eq!(t.header().allow_push, crate::AllowPush::No);
}

#[test]
fn rf_without_hardware_access() {
    let e = errs(&render(&fields("NO", "YES", "NO"), ""));
    has(
        &e,
        Some(7),
        Some("RF_RX"),
        "RF_RX = YES needs HARDWARE_ACCESS = YES",
    );
    let e = errs(&render(&fields("NO", "NO", "YES"), ""));
    has(
        &e,
        Some(8),
        Some("RF_TX"),
        "RF_TX = YES needs HARDWARE_ACCESS = YES",
    );
}

#[test]
fn title_empty_long_control() {
    let e = errs(&render(&set(green(), "TASK_TITLE", Some("")), ""));
    has(&e, Some(2), Some("TASK_TITLE"), "empty title");
    let e = errs(&render(
        &set(green(), "TASK_TITLE", Some(&"t".repeat(201))),
        "",
    ));
    has(
        &e,
        Some(2),
        Some("TASK_TITLE"),
        "201 characters long; at most 200",
    );
    ok(&render(
        &set(green(), "TASK_TITLE", Some(&"é".repeat(200))),
        "",
    ));
    let e = errs(&render(&set(green(), "TASK_TITLE", Some("a\u{7}b")), ""));
    has(&e, Some(2), Some("TASK_TITLE"), "control characters");
}

#[test]
fn risk_derivation_and_declared() {
    assert_eq!(
        ok(&render(&fields("YES", "NO", "NO"), "")).risk(),
        RiskLevel::Yellow
    );
    assert_eq!(
        ok(&render(&fields("YES", "YES", "NO"), "")).risk(),
        RiskLevel::Yellow
    );
    assert_eq!(
        ok(&render(&fields("YES", "NO", "YES"), "")).risk(),
        RiskLevel::Red
    );
    // Declared lower than derived: rejected, naming both.
    let f = set(fields("YES", "YES", "NO"), "RISK_LEVEL", Some("GREEN"));
    let e = errs(&render(&f, ""));
    has(
        &e,
        Some(11),
        Some("RISK_LEVEL"),
        "declared GREEN is lower than the derived YELLOW",
    );
    let f = set(fields("YES", "NO", "YES"), "RISK_LEVEL", Some("YELLOW"));
    has(
        &errs(&render(&f, "")),
        Some(11),
        Some("RISK_LEVEL"),
        "lower than the derived RED",
    );
    // Declared higher: kept.
    let f = set(green(), "RISK_LEVEL", Some("RED"));
    let t = ok(&render(&f, ""));
    assert_eq!(t.risk(), RiskLevel::Red);
    assert_eq!(t.derived_risk(), RiskLevel::Green);
    assert!(t.risk_reasons().iter().any(|r| r.contains("kept")));
    // Equal: fine.
    let f = set(fields("YES", "NO", "NO"), "RISK_LEVEL", Some("YELLOW"));
    assert_eq!(ok(&render(&f, "")).risk(), RiskLevel::Yellow);
    // Invalid spelling.
    let f = set(green(), "RISK_LEVEL", Some("red"));
    has(
        &errs(&render(&f, "")),
        Some(11),
        Some("RISK_LEVEL"),
        "expected GREEN, YELLOW or RED",
    );
}

#[test]
fn bom_crlf_and_no_spaces() {
    let base = render(&green(), "Body\n");
    let t_plain = ok(&base);
    let bom = format!("\u{feff}{base}");
    let t = ok(&bom);
    assert_eq!(t.id().as_str(), "T_1");
    // The hash covers the exact bytes, BOM included.
    assert_ne!(t.sha256(), t_plain.sha256());
    assert_eq!(t.sha256(), sha256_hex(bom.as_bytes()));
    let crlf = base.replace('\n', "\r\n");
    let t = ok(&crlf);
    assert_eq!(t.header().task_title, "A test task");
    let tight = base.replace(" = ", "=");
    ok(&tight);
    let loose = base.replace(" = ", "   =\t");
    ok(&loose);
    // BOM + CRLF + errors still report the right line.
    let bad = format!(
        "\u{feff}{}",
        render(&set(green(), "RF_RX", Some("X")), "").replace('\n', "\r\n")
    );
    has(&errs(&bad), Some(7), Some("RF_RX"), "invalid value \"X\"");
}

#[test]
fn all_errors_reported_with_lines() {
    let f = set(green(), "TASK_ID", Some("../x"));
    let f = set(f, "EXPECTED_HEAD", Some("abc"));
    let f = set(f, "ALLOW_PUSH", Some("YES"));
    let f = set(f, "ALLOW_COMMIT", None);
    let f = set(f, "BOGUS", Some("1"));
    let e = errs(&render(&f, ""));
    has(&e, Some(1), Some("TASK_ID"), "must match");
    has(&e, Some(4), Some("EXPECTED_HEAD"), "40 hex");
    has(&e, Some(9), Some("ALLOW_PUSH"), "RX_RESULT_ONLY");
    has(&e, Some(1), Some("ALLOW_COMMIT"), "missing");
    has(&e, Some(10), Some("BOGUS"), "unknown field");
    assert_eq!(e.len(), 5, "{e:#?}");
}

#[test]
fn not_key_value_and_empty() {
    let text = render(&green(), "").replacen("RF_TX = NO\n", "RF_TX NO\n", 1);
    let e = errs(&text);
    has(&e, Some(8), None, "not KEY = VALUE");
    has(&e, Some(1), Some("RF_TX"), "missing");
    let e = errs(&render(&green(), "").replacen("RF_TX = NO", "= NO", 1));
    has(&e, Some(8), None, "no field name");
    has(&errs(""), Some(1), None, "empty");
    has(&errs("\u{feff}\n\n  \n"), Some(1), None, "empty");
    has(&errs("\nTASK_ID = X\n"), Some(1), None, "no header");
}

#[test]
fn bytes_size_binary_utf8() {
    let big = vec![b'a'; MAX_TASK_BYTES + 1];
    let e = validate_task_bytes(&big, &ValidateOptions::default()).unwrap_err();
    has(&e, None, None, "at most 1048576");
    let mut bin = render(&green(), "x\n").into_bytes();
    bin.push(0);
    let e = validate_task_bytes(&bin, &ValidateOptions::default()).unwrap_err();
    has(&e, Some(13), None, "NUL byte");
    let mut latin1 = render(&green(), "").into_bytes();
    latin1.extend_from_slice(b"caf\xe9\n");
    let e = validate_task_bytes(&latin1, &ValidateOptions::default()).unwrap_err();
    has(&e, Some(12), None, "not UTF-8");
    let good = render(&green(), "");
    assert!(validate_task_bytes(good.as_bytes(), &ValidateOptions::default()).is_ok());
    // Saved as "Unicode" (UTF-16 with its byte order mark): named, not "binary".
    for (bom, enc) in [
        ([0xFF, 0xFE], "UTF-16 little-endian"),
        ([0xFE, 0xFF], "UTF-16 big-endian"),
    ] {
        let mut utf16 = bom.to_vec();
        for u in good.encode_utf16() {
            let b = if bom[0] == 0xFF {
                u.to_le_bytes()
            } else {
                u.to_be_bytes()
            };
            utf16.extend_from_slice(&b);
        }
        let e = validate_task_bytes(&utf16, &ValidateOptions::default()).unwrap_err();
        has(&e, Some(1), None, &format!("task file is {enc}"));
        has(&e, Some(1), None, "save it as UTF-8");
        assert_eq!(e.len(), 1, "{e:?}");
    }
}

/// A task file committed through Git LFS reaches the node as the LFS pointer:
/// it is refused as that, on line 1, with the object it names, not as 13
/// missing header fields.
#[test]
fn a_git_lfs_pointer_is_refused_as_one_not_as_a_header_without_fields() {
    let oid = "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
    let pointer = format!("version https://git-lfs.github.com/spec/v1\n{oid}\nsize 12345\n");
    let e = validate_task_bytes(pointer.as_bytes(), &ValidateOptions::default()).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    has(&e, Some(1), None, "task file is a Git LFS pointer");
    has(&e, Some(1), None, &format!("({oid}, 12345 bytes)"));
    has(&e, Some(1), None, "commit the task file as a plain file");
    // A task whose body quotes a pointer is a task.
    ok(&render(
        &green(),
        "version https://git-lfs.github.com/spec/v1\nsize 1\n",
    ));
}

proptest! {
    #![proptest_config(crate::testutil::proptest_config(512, "task"))]
    /// Arbitrary text never panics.
    #[test]
    fn random_text_never_panics(s in "\\PC{0,400}") {
        let _ = validate_task(&s, &ValidateOptions::default());
    }

    /// Arbitrary bytes never panic.
    #[test]
    fn random_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = validate_task_bytes(&b, &ValidateOptions::default());
    }

    /// Headers built from known keys and random values never panic, and
    /// when valid the risk is never below the derived one.
    #[test]
    fn random_headers(
        entries in proptest::collection::vec(
            (prop::sample::select(crate::header::FIELDS.to_vec()),
             prop_oneof![Just("YES".to_string()), Just("NO".to_string()), Just("RED".to_string()),
                         Just("GREEN".to_string()), Just("RX_RESULT_ONLY".to_string()),
                         "[ -~]{0,50}".prop_map(|s| s)]),
            0..16),
        sep in prop_oneof![Just(" = "), Just("="), Just("= "), Just("\t=\t")],
        crlf in any::<bool>(),
        bom in any::<bool>(),
        body in "\\PC{0,100}",
    ) {
        let mut s = String::new();
        if bom { s.push('\u{feff}'); }
        for (k, v) in &entries {
            s.push_str(k);
            s.push_str(sep);
            s.push_str(v);
            s.push_str(if crlf { "\r\n" } else { "\n" });
        }
        s.push('\n');
        s.push_str(&body);
        match validate_task(&s, &ValidateOptions::default()) {
            Ok(t) => {
                let h = t.header();
                let (d, _) = derive_risk(h.hardware_access, h.rf_rx, h.rf_tx);
                prop_assert!(t.risk() >= d);
                prop_assert!(!h.rf_rx || h.hardware_access);
                prop_assert!(!h.rf_tx || h.hardware_access);
            }
            Err(issues) => {
                prop_assert!(!issues.is_empty());
                for i in &issues {
                    prop_assert!(!i.message.is_empty());
                    if let Some(l) = i.line { prop_assert!(l >= 1); }
                }
            }
        }
    }
}

/// Names that differ only in letter case are one folder on a case-insensitive file
/// system: `same_folder` pairs them (never a name with itself), and
/// `same_folder_groups` gathers each such group once, a repeated name counted once.
#[test]
fn names_differing_only_in_letter_case_are_one_folder() {
    use crate::{same_folder, same_folder_groups};
    assert!(same_folder("LAB1", "lab1"));
    assert!(!same_folder("LAB1", "LAB1"));
    assert!(!same_folder("LAB1", "LAB2"));
    assert_eq!(
        same_folder_groups(["T1", "b", "t1", "T2", "T1", "B", "x"]),
        vec![vec!["B", "b"], vec!["T1", "t1"]]
    );
    assert!(same_folder_groups(["T1", "T1", "T2"]).is_empty());
}
