use super::*;
use crate::testutil::*;
use crate::InventoryStep;

/// YELLOW RX-capable header; plan fence is on line 14, its JSON on 15.
fn rx_hdr() -> Vec<(String, String)> {
    fields("YES", "YES", "NO")
}

fn steps(s: &str) -> String {
    format!(r#"{{"steps": [{s}]}}"#)
}

/// A bad header line elsewhere (here an
/// unknown field) used to hide the plan's body/header conflicts.
#[test]
fn conflicts_are_reported_beside_other_header_errors() {
    let f = set(fields("YES", "NO", "NO"), "PRIORITY", Some("HIGH"));
    let e = errs(&render(
        &f,
        &plan(&steps(
            r#"{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": 433.92e6,
               "sample_rate_hz": 2e6, "tone_offset_hz": 5e4, "gain_db": 0, "duration_s": 1}"#,
        )),
    ));
    assert!(
        e.iter().any(|i| i.field.as_deref() == Some("PRIORITY")),
        "{e:?}"
    );
    assert!(
        e.iter().any(|i| i.field.as_deref() == Some("RF_TX")),
        "{e:?}"
    );
}

#[test]
fn full_rx_plan_parses() {
    let t = ok(&render(
        &rx_hdr(),
        &plan(&steps(&format!(
            r#"{{"op": "inventory"}}, {{"op": "clock_check", "device": "driver=hackrf", "expect_source": "external"}}, {RX_STEP}"#
        ))),
    ));
    let p = t.plan().unwrap();
    assert_eq!(t.plan_line(), Some(14));
    assert_eq!(p.steps.len(), 3);
    assert_eq!(p.steps[0], Step::Inventory(InventoryStep {}));
    match &p.steps[2] {
        Step::RxCapture(s) => {
            assert_eq!(s.frequency_hz, 100.0e6);
            assert!(s.record_iq);
            assert_eq!(s.fft_size, Some(2048));
            let c = s.clkin.as_ref().unwrap();
            assert_eq!(c.tone_hz, 100.1e6);
            assert_eq!(c.tolerance_ppm, 0.5);
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(p.steps[1].device(), Some("driver=hackrf"));
    assert_eq!(p.steps[1].op(), "clock_check");
}

#[test]
fn tilde_fence_and_crlf() {
    let body = format!("~~~rx-plan\n{}\n~~~\n", steps(r#"{"op":"inventory"}"#));
    let t = ok(&render(&rx_hdr(), &body).replace('\n', "\r\n"));
    assert_eq!(t.plan().unwrap().steps.len(), 1);
}

#[test]
fn other_fences_ignored() {
    let body = "```json\n{\"steps\": [{\"op\": \"tx_tone\"}]}\n```\n";
    let t = ok(&render(&fields("NO", "NO", "NO"), body));
    assert!(t.plan().is_none());
}

/// An rx-plan example inside a longer fence is text to Markdown and no plan to
/// the node; a reader of the raw text could take it for one, so it is refused,
/// naming the line and the block around it.
#[test]
fn nested_plan_example_is_refused_not_ignored() {
    let body = "````markdown\n```rx-plan\n{\"steps\": []}\n```\n````\n";
    let e = errs(&render(&fields("NO", "NO", "NO"), body));
    has(
        &e,
        Some(13),
        Some("rx-plan"),
        "inside the fenced code block opened on line 12",
    );
}

#[test]
fn unknown_op() {
    let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"op": "reflash"}"#))));
    has(&e, Some(14), Some("op"), "unknown op \"reflash\"");
    let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"device": "x"}"#))));
    has(&e, Some(14), Some("op"), "missing field op");
    let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"op": 3}"#))));
    has(&e, Some(14), Some("op"), "op must be a string");
}

#[test]
fn unknown_fields() {
    let e = errs(&render(
        &rx_hdr(),
        &plan(&steps(r#"{"op": "inventory", "device": "x"}"#)),
    ));
    has(&e, Some(14), Some("device"), "unknown field \"device\"");
    let e = errs(&render(
        &rx_hdr(),
        &plan(&steps(
            r#"{"op": "clock_check", "device": "d", "power_w": 5}"#,
        )),
    ));
    has(&e, Some(14), Some("power_w"), "unknown field `power_w`");
    let e = errs(&render(
        &rx_hdr(),
        &plan(r#"{"steps": [{"op": "inventory"}], "loop": true}"#),
    ));
    has(&e, Some(14), Some("loop"), "unknown field \"loop\"");
    let clk = RX_STEP.replace("\"tolerance_ppm\"", "\"tol\"");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&clk))));
    assert!(
        e.iter().any(|i| i.message.contains("unknown field `tol`")),
        "{e:#?}"
    );
}

#[test]
fn bad_json_names_the_line() {
    let body = "```rx-plan\n{\"steps\": [\n  {\"op\": \"inventory\"},\n  {\"op\": }\n]}\n```\n";
    let e = errs(&render(&rx_hdr(), body));
    // fence on line 12, the broken step on line 15.
    has(&e, Some(15), Some("rx-plan"), "not valid JSON");
    let e = errs(&render(&rx_hdr(), &plan("[1, 2]")));
    has(&e, Some(14), Some("rx-plan"), "must be a JSON object");
    let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": {}}"#)));
    has(&e, Some(14), Some("steps"), "must be an array");
    let e = errs(&render(&rx_hdr(), &plan(r#"{}"#)));
    has(&e, Some(14), Some("steps"), "missing field steps");
    let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": []}"#)));
    has(&e, Some(14), Some("steps"), "steps is empty");
    let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": [1]}"#)));
    has(&e, Some(14), Some("steps"), "not a JSON object");
    let many = vec![r#"{"op":"inventory"}"#; 65].join(",");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&many))));
    has(&e, Some(14), Some("steps"), "65 steps; at most 64");
}

#[test]
fn unclosed_block() {
    let e = errs(&render(
        &rx_hdr(),
        "```rx-plan\n{\"steps\": [{\"op\": \"inventory\"}]}\n",
    ));
    has(&e, Some(12), Some("rx-plan"), "not closed");
}

#[test]
fn two_blocks() {
    let one = plan(&steps(r#"{"op":"inventory"}"#));
    let e = errs(&render(&rx_hdr(), &format!("{one}\n{one}")));
    // second fence: 12 + 6 lines of the first block + blank.
    has(
        &e,
        Some(20),
        Some("rx-plan"),
        "more than one rx-plan block (2 found; first on line 14)",
    );
}

#[test]
fn body_header_conflicts() {
    // tx_tone with RF_TX = NO.
    let e = errs(&render(&rx_hdr(), &plan(&steps(TX_STEP))));
    has(
        &e,
        Some(14),
        Some("RF_TX"),
        "step 1 (tx_tone) transmits but RF_TX = NO",
    );
    // rx_capture with RF_RX = NO.
    let e = errs(&render(&fields("YES", "NO", "NO"), &plan(&steps(RX_STEP))));
    has(
        &e,
        Some(14),
        Some("RF_RX"),
        "step 1 (rx_capture) receives but RF_RX = NO",
    );
    // any device step with HARDWARE_ACCESS = NO.
    for s in [
        r#"{"op":"inventory"}"#,
        r#"{"op":"clock_check","device":"d"}"#,
    ] {
        let e = errs(&render(&fields("NO", "NO", "NO"), &plan(&steps(s))));
        has(
            &e,
            Some(14),
            Some("HARDWARE_ACCESS"),
            "touches hardware but HARDWARE_ACCESS = NO",
        );
    }
    // A conflict is reported even when another step is broken.
    let e = errs(&render(
        &rx_hdr(),
        &plan(&steps(&format!(r#"{{"op":"bogus"}}, {TX_STEP}"#))),
    ));
    has(&e, Some(14), Some("op"), "unknown op");
    has(&e, Some(14), Some("RF_TX"), "step 2 (tx_tone) transmits");
    // TX plan in a RED TX header is fine.
    let t = tx_task();
    assert!(matches!(t.plan().unwrap().steps[0], Step::TxTone(_)));
}

/// `rx_sweep` parses with the fields docs/operator.md#sweeps-rxnode-sweep names, needs RF_RX = YES and
/// HARDWARE_ACCESS = YES, and every bad value is named.
#[test]
fn rx_sweep_parses_conflicts_and_bad_values() {
    let sweep = r#"{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
        "bin_hz": 10e3, "sample_rate_hz": 10e6, "gain_db": {"LNA": 24, "VGA": 10}, "dwell_s": 0.05,
        "settle_s": 0.01, "crop": 0.25, "repeats": 2}"#;
    let t = ok(&render(&rx_hdr(), &plan(&steps(sweep))));
    match &t.plan().unwrap().steps[0] {
        Step::RxSweep(s) => {
            assert_eq!(s.sweep.stop_hz, 108e6);
            assert_eq!(s.sweep.repeats, 2);
            assert_eq!(s.gain_db.as_ref().map(|g| g.total()), Some(34.0));
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(t.plan().unwrap().steps[0].op(), "rx_sweep");
    assert_eq!(t.risk(), crate::RiskLevel::Yellow);
    let e = errs(&render(&fields("YES", "NO", "NO"), &plan(&steps(sweep))));
    has(
        &e,
        Some(14),
        Some("RF_RX"),
        "step 1 (rx_sweep) receives but RF_RX = NO",
    );
    let e = errs(&render(&fields("NO", "NO", "NO"), &plan(&steps(sweep))));
    has(&e, Some(14), Some("HARDWARE_ACCESS"), "touches hardware");
    for (from, to, field, msg) in [
        (
            "\"stop_hz\": 108e6",
            "\"stop_hz\": 80e6",
            "stop_hz",
            "must be above start_hz",
        ),
        (
            "\"crop\": 0.25",
            "\"crop\": 1.5",
            "crop",
            "must be in [0, 0.95)",
        ),
        ("\"repeats\": 2", "\"repeats\": 0", "repeats", "1..=10000"),
        (
            "\"bin_hz\": 10e3",
            "\"bin_hz\": 0",
            "bin_hz",
            "positive finite",
        ),
        (
            "\"bin_hz\": 10e3",
            "\"bin_hz\": 5e6",
            "bin_hz",
            "wider than sample_rate_hz / 16",
        ),
        ("\"settle_s\": 0.01", "\"settle_s\": -1", "settle_s", "≥ 0"),
        (
            "\"VGA\": 10",
            "\"\": 10",
            "gain_db",
            "not a gain element name",
        ),
        (
            "\"stop_hz\": 108e6",
            "\"stop_hz\": 6e15",
            "stop_hz",
            "more than 1000000",
        ),
    ] {
        let s = sweep.replace(from, to);
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some(field),
            msg,
        );
    }
    let s = sweep.replace("\"repeats\": 2", "\"repeats\": 2, \"record_iq\": true");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
    assert!(
        e.iter()
            .any(|i| i.message.contains("unknown field `record_iq`")),
        "{e:#?}"
    );
    let s = sweep.replace("{\"LNA\": 24, \"VGA\": 10}", "\"max\"");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
    assert!(
        e.iter().any(|i| i.message.contains("gain element to dB")),
        "{e:#?}"
    );
}

/// `record_format` picks the recording's sample type; it needs
/// `record_iq`, and only cf32/ci16 exist.
#[test]
fn record_format_is_cf32_or_ci16_and_needs_record_iq() {
    let s = RX_STEP.replace(
        "\"record_iq\": true",
        "\"record_iq\": true, \"record_format\": \"ci16\"",
    );
    let t = ok(&render(&rx_hdr(), &plan(&steps(&s))));
    match &t.plan().unwrap().steps[0] {
        Step::RxCapture(c) => assert_eq!(c.record_format, Some(IqSampleFormat::Ci16)),
        other => panic!("{other:?}"),
    }
    let s = RX_STEP.replace(
        "\"record_iq\": true",
        "\"record_iq\": false, \"record_format\": \"ci16\"",
    );
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("record_format"),
        "needs \"record_iq\": true",
    );
    let s = RX_STEP.replace(
        "\"record_iq\": true",
        "\"record_iq\": true, \"record_format\": \"cs8\"",
    );
    assert!(!errs(&render(&rx_hdr(), &plan(&steps(&s)))).is_empty());
}

#[test]
fn physical_sanity() {
    for (field, bad) in [
        ("frequency_hz", "0"),
        ("frequency_hz", "-100e6"),
        ("sample_rate_hz", "0.0"),
        ("duration_s", "-1"),
    ] {
        let s = RX_STEP.replace(
            &format!("\"{field}\": "),
            &format!("\"{field}\": {bad}, \"_x\": "),
        );
        // Put the bad value in place of the good one.
        let s = s.replace(", \"_x\": ", ", \"_drop\": ");
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let mut o = v.as_object().unwrap().clone();
        o.remove("_drop");
        let e = errs(&render(
            &rx_hdr(),
            &plan(&steps(&serde_json::Value::Object(o).to_string())),
        ));
        has(
            &e,
            Some(14),
            Some(field),
            "must be a positive finite number",
        );
    }
    // Out-of-range numbers (JSON cannot say NaN/inf) are refused as bad JSON.
    let s = RX_STEP.replace("\"duration_s\": 2.0", "\"duration_s\": 1e999");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
    assert!(!e.is_empty());
    let s = RX_STEP.replace("\"duration_s\": 2.0", "\"duration_s\": NaN");
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(15),
        Some("rx-plan"),
        "not valid JSON",
    );
    // Any FFT size in 16..=2^20, as the command line takes (1000 points: exact 1 kHz
    // bins at 1 MS/s); outside it is refused naming the field.
    let s = RX_STEP.replace("2048", "1000");
    ok(&render(&rx_hdr(), &plan(&steps(&s))));
    for bad in ["15", "1048577"] {
        let s = RX_STEP.replace("2048", bad);
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("fft_size"),
            "must be in 16..=1048576",
        );
    }
    // A step of less than one sample (a tone that would key the transmitter and
    // send nothing) is refused before it can be approved.
    let s = RX_STEP.replace("\"duration_s\": 2.0", "\"duration_s\": 1e-9");
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("duration_s"),
        "less than one sample",
    );
    let s = RX_STEP.replace("\"tolerance_ppm\": 0.5", "\"tolerance_ppm\": 0");
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("clkin.tolerance_ppm"),
        "positive",
    );
    let s = RX_STEP.replace(
        "\"tolerance_ppm\": 0.5",
        "\"tolerance_ppm\": 0.5, \"expected_dbfs\": 3",
    );
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("clkin.expected_dbfs"),
        "-300 … 0 dBFS, got 3",
    );
    // Absurd levels, a bandwidth and a manual ppm are refused by the plan's own
    // check (not only later by a node's policy), printed compactly.
    let s = RX_STEP.replace(
        "\"tolerance_ppm\": 0.5",
        "\"tolerance_ppm\": 0.5, \"expected_dbfs\": -1e300",
    );
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("clkin.expected_dbfs"),
        "-300 … 0 dBFS, got -1e300",
    );
    let s = RX_STEP.replace(
        "\"duration_s\": 2.0",
        "\"duration_s\": 2.0, \"ppm\": 1e300, \"bandwidth_hz\": 1e300",
    );
    assert!(s.contains("1e300"), "{s}");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
    has(
        &e,
        Some(14),
        Some("ppm"),
        "ppm 1e300 must be a finite number within ±1000",
    );
    has(
        &e,
        Some(14),
        Some("bandwidth_hz"),
        "bandwidth_hz 1e300 Hz is implausible",
    );
    let s = RX_STEP.replace(
        "\"tolerance_ppm\": 0.5",
        "\"tolerance_ppm\": 0.5, \"expected_tolerance_db\": 3",
    );
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("clkin.expected_tolerance_db"),
        "needs clkin.expected_dbfs",
    );
    let s = RX_STEP.replace("100.1e6", "102e6");
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("clkin.tone_hz"),
        "outside the captured band",
    );
    let s = RX_STEP.replace("\"driver=hackrf\"", "\" \"");
    has(
        &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
        Some(14),
        Some("device"),
        "must not be empty",
    );
    let tx = fields("YES", "NO", "YES");
    let s = TX_STEP.replace("50e3", "1.5e6");
    has(
        &errs(&render(&tx, &plan(&steps(&s)))),
        Some(14),
        Some("tone_offset_hz"),
        "below half the sample rate",
    );
    let s = TX_STEP.replace("\"duration_s\": 1.0", "\"duration_s\": 0");
    has(
        &errs(&render(&tx, &plan(&steps(&s)))),
        Some(14),
        Some("duration_s"),
        "positive finite",
    );
    let s = TX_STEP.replace("\"gain_db\": 0", "\"gain_db\": \"max\"");
    has(
        &errs(&render(&tx, &plan(&steps(&s)))),
        Some(14),
        Some("gain_db"),
        "gain_db: invalid type",
    );
    let s = TX_STEP.replace(", \"gain_db\": 0", "");
    has(
        &errs(&render(&tx, &plan(&steps(&s)))),
        Some(14),
        Some("gain_db"),
        "missing field `gain_db`",
    );
}

/// The clkin block's optional expected level parses; without it the field is absent.
#[test]
fn clkin_expected_level_is_optional() {
    let s = RX_STEP.replace(
        "\"tolerance_ppm\": 0.5",
        "\"tolerance_ppm\": 0.5, \"expected_dbfs\": -70, \"expected_tolerance_db\": 4",
    );
    let t = ok(&render(&rx_hdr(), &plan(&steps(&s))));
    match &t.plan().unwrap().steps[0] {
        Step::RxCapture(s) => {
            let c = s.clkin.as_ref().unwrap();
            assert_eq!(c.expected_dbfs, Some(-70.0));
            assert_eq!(c.expected_tolerance_db, Some(4.0));
        }
        o => panic!("{o:?}"),
    }
}

/// A `clkin_compare` step with every field.
const COMPARE_STEP: &str = r#"{"op": "clkin_compare", "devices": ["driver=rxsim,serial=m", "driver=rxsim,serial=s"], "frequency_hz": 100e6, "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 1.0, "tone_hz": 100.2e6, "tolerance_ppb": 10, "clock_sources": ["internal", "external"]}"#;

#[test]
fn clkin_compare_parses_with_its_defaults() {
    let t = ok(&render(&rx_hdr(), &plan(&steps(COMPARE_STEP))));
    let p = t.plan().unwrap();
    assert_eq!(p.steps[0].op(), "clkin_compare");
    assert_eq!(p.steps[0].device(), Some("driver=rxsim,serial=m"));
    let Step::ClkinCompare(s) = &p.steps[0] else {
        panic!("{:?}", p.steps[0]);
    };
    assert_eq!(s.devices.len(), 2);
    assert_eq!(s.tolerance_ppb, 10.0);
    assert_eq!(t.risk(), crate::RiskLevel::Yellow);
    let caps = s.captures();
    assert_eq!(caps[1].device, "driver=rxsim,serial=s");
    assert_eq!(caps[1].clock_source.as_deref(), Some("external"));
    // The tolerance defaults to 10 ppb; the clock sources to none.
    let bare = r#"{"op": "clkin_compare", "devices": ["driver=rxsim,serial=m", "driver=rxsim,serial=s"], "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 1.0, "tone_hz": 100.2e6}"#;
    let t = ok(&render(&rx_hdr(), &plan(&steps(bare))));
    let Some(Step::ClkinCompare(s)) = t.plan().and_then(|p| p.steps.first()) else {
        panic!("no step");
    };
    assert_eq!(s.tolerance_ppb, 10.0);
    assert_eq!(s.clock_sources, None);
}

#[test]
fn clkin_compare_needs_rf_rx_and_hardware_access() {
    let e = errs(&render(
        &fields("YES", "NO", "NO"),
        &plan(&steps(COMPARE_STEP)),
    ));
    has(
        &e,
        Some(14),
        Some("RF_RX"),
        "(clkin_compare) receives but RF_RX = NO",
    );
    let e = errs(&render(
        &fields("NO", "YES", "NO"),
        &plan(&steps(COMPARE_STEP)),
    ));
    has(&e, Some(14), Some("HARDWARE_ACCESS"), "touches hardware");
}

#[test]
fn clkin_compare_fields_are_checked_by_name() {
    let bad = |from: &str, to: &str, field: &str, needle: &str| {
        let text = COMPARE_STEP.replace(from, to);
        assert_ne!(text, COMPARE_STEP, "{from}");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&text))));
        has(&e, Some(14), Some(field), needle);
    };
    bad(
        r#"["driver=rxsim,serial=m", "driver=rxsim,serial=s"]"#,
        r#"["driver=rxsim,serial=m"]"#,
        "devices",
        "exactly two radios [MASTER, SLAVE], got 1",
    );
    bad(
        r#""driver=rxsim,serial=s"]"#,
        r#""driver=rxsim,serial=m"]"#,
        "devices",
        "MASTER and SLAVE are the same device args",
    );
    bad(
        r#""tone_hz": 100.2e6"#,
        r#""tone_hz": 100.6e6"#,
        "tone_hz",
        "outside the captured band",
    );
    bad(
        r#""tolerance_ppb": 10"#,
        r#""tolerance_ppb": -1"#,
        "tolerance_ppb",
        "positive finite",
    );
    bad(
        r#""duration_s": 1.0"#,
        r#""duration_s": 0"#,
        "duration_s",
        "positive finite",
    );
    bad(
        r#""gain_db": 20"#,
        r#""gain_db": 20, "fft_size": 1024"#,
        "fft_size",
        "unknown field `fft_size`",
    );
    bad(
        r#"["internal", "external"]"#,
        r#"["external"]"#,
        "clock_sources",
        "two names",
    );
    bad(
        r#""devices""#,
        r#""device""#,
        "device",
        "unknown field `device`",
    );
}

/// `freq_cal` parses with its method, is YELLOW, needs RF_RX = YES and
/// HARDWARE_ACCESS = YES, and a bad method, rate or unknown field is named.
#[test]
fn freq_cal_parses_conflicts_and_bad_values() {
    let fc = r#"{"op": "freq_cal", "device": "driver=rxsim", "method": "gsm", "frequency_hz": 935.2e6,
        "sample_rate_hz": 1e6, "gain_db": 30, "duration_s": 6}"#;
    let t = ok(&render(&rx_hdr(), &plan(&steps(fc))));
    match &t.plan().unwrap().steps[0] {
        Step::FreqCal(s) => {
            assert_eq!(s.method, crate::FreqCalMethod::Gsm);
            assert_eq!(s.frequency_hz, 935.2e6);
            assert_eq!(s.duration_s, 6.0);
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(t.plan().unwrap().steps[0].op(), "freq_cal");
    assert_eq!(t.plan().unwrap().steps[0].device(), Some("driver=rxsim"));
    assert_eq!(t.risk(), crate::RiskLevel::Yellow);
    let lte = fc
        .replace("\"gsm\"", "\"lte\"")
        .replace("\"sample_rate_hz\": 1e6", "\"sample_rate_hz\": 1.92e6");
    assert!(matches!(
        &ok(&render(&rx_hdr(), &plan(&steps(&lte)))).plan().unwrap().steps[0],
        Step::FreqCal(s) if s.method == crate::FreqCalMethod::Lte
    ));
    // LTE is read on its 1.92 MS/s grid: a lower rate is refused naming the field.
    let slow = fc.replace("\"gsm\"", "\"lte\"");
    let e = errs(&render(&rx_hdr(), &plan(&steps(&slow))));
    assert!(
        e.iter()
            .any(|i| i.field.as_deref() == Some("sample_rate_hz")
                && i.message.contains("too low for lte")),
        "{e:?}"
    );
    let e = errs(&render(&fields("YES", "NO", "NO"), &plan(&steps(fc))));
    has(
        &e,
        Some(14),
        Some("RF_RX"),
        "step 1 (freq_cal) receives but RF_RX = NO",
    );
    let e = errs(&render(&fields("NO", "NO", "NO"), &plan(&steps(fc))));
    has(&e, Some(14), Some("HARDWARE_ACCESS"), "touches hardware");
    for (from, to, field, msg) in [
        (
            "\"gsm\"",
            "\"umts\"",
            "method",
            "method \"umts\" must be \"lte\" or \"gsm\"",
        ),
        (
            "\"sample_rate_hz\": 1e6",
            "\"sample_rate_hz\": 2e5",
            "sample_rate_hz",
            "too low for gsm",
        ),
        (
            "\"duration_s\": 6",
            "\"duration_s\": -1",
            "duration_s",
            "positive finite",
        ),
        (
            "\"gain_db\": 30",
            "\"gain_db\": 30, \"record_iq\": true",
            "record_iq",
            "unknown field",
        ),
    ] {
        let e = errs(&render(&rx_hdr(), &plan(&steps(&fc.replace(from, to)))));
        has(&e, Some(14), Some(field), msg);
    }
}

/// A plan comes from the branch: device args that name a file on the node for a
/// radio to read (the simulator's `replay=FILE`, `replay_*`) are refused by field;
/// a serial that merely contains the word is not.
#[test]
fn device_args_that_name_a_local_file_are_refused() {
    for dev in [
        "driver=rxsim,replay=/home/op/.ssh/id_ed25519",
        "driver=rxsim, replay_format=cf32",
    ] {
        let step = capture_on(dev);
        let e = errs(&render(&rx_hdr(), &plan(&steps(&step))));
        assert!(
            e.iter().any(|i| i.field.as_deref() == Some("device")
                && i.message.contains("may not hold")),
            "{dev}: {e:?}"
        );
    }
    let step = r#"{"op": "rx_capture", "device": "driver=rxsim,serial=replay1", "frequency_hz": 100e6,
               "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1}"#;
    ok(&render(&rx_hdr(), &plan(&steps(step))));
}

/// A plan comes from the branch, and so may a file in the checkout: device args
/// that make a radio load an FPGA image or firmware (UHD's `fpga=`, `fw=`, any
/// case, spaces around) are refused by field, in a capture and a clock check; a
/// serial or a value holding the word is not.
#[test]
fn device_args_that_load_an_fpga_image_or_firmware_are_refused() {
    for dev in [
        "driver=uhd,type=b200,fpga=/home/op/lab/fpga/b210.bin",
        "driver=uhd, FW = usrp_b200_fw.hex",
        "driver=uhd,Fpga=HG",
    ] {
        for step in [
            format!(
                r#"{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100e6,
                   "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1}}"#
            ),
            format!(r#"{{"op": "clock_check", "device": "{dev}", "expect_source": "external"}}"#),
        ] {
            let e = errs(&render(&rx_hdr(), &plan(&steps(&step))));
            assert!(
                e.iter().any(|i| i.field.as_deref() == Some("device")
                    && i.message.contains("may not hold")
                    && i.message.contains("FPGA image or firmware")),
                "{dev}: {e:?}"
            );
        }
    }
    let step = r#"{"op": "rx_capture", "device": "driver=rxsim,serial=fpga1,label=fw", "frequency_hz": 100e6,
               "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1}"#;
    ok(&render(&rx_hdr(), &plan(&steps(step))));
}

/// A driver reads every device arg when the device is made, outside the settings
/// policy and the TX checks (SoapyAirspy writes `biastee=true` as a setting; UHD
/// sets `clock_source=`; libiio reads `uri=xml:FILE`; SoapyRemote passes
/// `remote:KEY` on as `KEY`): a task's device args hold only the keys that pick a
/// radio (a network radio by its address), each other key refused by field, named,
/// with the fix. The simulator's model keys pass
/// beside `driver=rxsim` only (locally or as the remote's driver).
/// A one-second `rx_capture` step on the radio `dev`.
fn capture_on(dev: &str) -> String {
    format!(
        r#"{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100e6,
           "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1}}"#
    )
}

#[test]
fn device_args_hold_only_the_keys_that_pick_a_radio() {
    for (dev, key) in [
        ("driver=airspy,serial=0x1,biastee=true", "biastee"),
        ("driver=rtlsdr, biastee = 1", "biastee"),
        (
            "driver=uhd,addr=203.0.113.5,mgmt_addr=203.0.113.6",
            "mgmt_addr",
        ),
        ("driver=plutosdr,uri=xml:/home/op/.ssh/id_ed25519", "uri"),
        ("driver=uhd,type=b200,clock_source=external", "clock_source"),
        ("driver=lime,cacheCalibrations=1", "cacheCalibrations"),
        ("driver=plutosdr,uri=ip:203.0.113.9,usb=1", "usb"),
        ("serial=1,biastee=true", "biastee"),
        ("driver=airspy,tone_hz=1e6", "tone_hz"),
        ("driver=rxsim,driver=airspy,biastee=1", "biastee"),
        (
            "driver=remote,remote=tcp://127.0.0.1:1,remote:biastee=true",
            "remote:biastee",
        ),
        (
            "driver=remote,remote=tcp://127.0.0.1:1,remote:driver=airspy,biastee=true",
            "biastee",
        ),
        (
            "driver=remote,remote=tcp://127.0.0.1:1,remote:remote=tcp://198.51.100.1:1",
            "remote:remote",
        ),
        (
            "driver=remote,remote=tcp://127.0.0.1:1,remote:fpga=x.bin",
            "remote:fpga",
        ),
    ] {
        let step = capture_on(dev);
        let e = errs(&render(&rx_hdr(), &plan(&steps(&step))));
        assert!(
            e.iter().any(|i| i.field.as_deref() == Some("device")
                && i.message.contains(&format!("may not hold {key:?}"))
                && (i.message.contains("--device"))),
            "{dev}: {e:?}"
        );
    }
    let e = errs(&render(
        &rx_hdr(),
        &plan(&steps(
            r#"{"op": "rx_capture", "device": "driver=airspy,biastee=true", "frequency_hz": 100e6,
               "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1}"#,
        )),
    ));
    assert!(
        e.iter()
            .any(|i| i.message.contains("fix: drop \"biastee\"")),
        "{e:?}"
    );
    for dev in [
        "driver=hackrf,serial=0000000000000000457863c82b3e1f4f",
        "driver=uhd,type=b200,product=B210,name=lab,serial=31F2",
        "driver=rtlsdr,label=Generic RTL2832U OEM :: 00000001",
        "driver=rxsim,serial=s1,tone_hz=100.1e6,ppm=2,ext_ref=1",
        "driver=remote,remote=tcp://127.0.0.1:1,remote:driver=rxsim,serial=far2,tone_hz=100.1e6",
        "driver=remote,remote=tcp://127.0.0.1:1,remote:driver=hackrf,remote:serial=1",
        "driver=uhd,addr=192.168.10.2",
        "driver=plutosdr,uri=ip:192.168.2.1",
        "driver=plutosdr,uri=usb:1.2.5",
        "driver=plutosdr,hostname=pluto.local",
    ] {
        let step = capture_on(dev);
        ok(&render(&rx_hdr(), &plan(&steps(&step))));
    }
}

/// `"device": "hackrf"` (a driver's name without `driver=`) is refused by field,
/// naming the word and the fix; a bare word beside a `driver=` is refused too,
/// without suggesting a second driver.
#[test]
fn device_args_with_a_bare_word_are_refused_naming_driver_equals() {
    for (dev, fix) in [
        ("hackrf", "fix: `driver=hackrf`"),
        (
            "driver=rxsim,serial",
            "fix: give it a value (`serial=…`) or drop it",
        ),
    ] {
        let step = capture_on(dev);
        let e = errs(&render(&rx_hdr(), &plan(&steps(&step))));
        assert!(
            e.iter().any(|i| i.field.as_deref() == Some("device")
                && i.message.contains("is not KEY=VALUE")
                && i.message.contains(fix)),
            "{dev}: {e:?}"
        );
    }
}

/// A value of the wrong type is refused naming its field, not the value: serde's
/// message quotes the value (`boolean `true``), which was taken for the field.
#[test]
fn a_plan_value_of_the_wrong_type_names_its_field() {
    for (field, value, shown) in [
        (
            "duration_s",
            "true",
            "invalid type: boolean `true`, expected f64",
        ),
        (
            "fft_size",
            "2048.5",
            "invalid type: floating point `2048.5`",
        ),
        (
            "record_iq",
            "\"yes\"",
            "invalid type: string \"yes\", expected a boolean",
        ),
        (
            "duration_s",
            "\"1s\"",
            "invalid type: string \"1s\", expected f64",
        ),
    ] {
        let step = format!(
            r#"{{"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 100e6,
               "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 1, "{field}": {value}}}"#
        )
        .replacen(r#""duration_s": 1, "duration_s""#, r#""duration_s""#, 1);
        let e = errs(&render(&rx_hdr(), &plan(&steps(&step))));
        has(&e, Some(14), Some(field), &format!("{field}: {shown}"));
    }
}
