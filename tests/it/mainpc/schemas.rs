//! `rxnode schema` and the JSON Schemas, checked by an independent validator (tests/support/schema_check.py).
use super::*;

// -------------------------------------------------------------------- schemas

/// The interpreter for the schema checks (`RXNODE_TEST_PYTHON` overrides, e.g. a venv).
fn python() -> String {
    std::env::var("RXNODE_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Run the independent validator; every case's verdict by name.
pub(crate) fn jsonschema_verdicts(
    cases: &[(String, &str, Value)],
) -> Vec<(String, bool, Vec<String>)> {
    let d = tempfile::tempdir().unwrap();
    let mut schemas = serde_json::Map::new();
    for kind in [
        "plan",
        "result",
        "policy",
        "task",
        "status",
        "log-meta",
        "calibration",
        "health",
        "sigmf-rxnode",
    ] {
        let out = rxnode(d.path(), &["schema", kind], "");
        expect_exit!(out, 0);
        let s: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
        if kind == "result" {
            schemas.insert("result-typed".into(), typed_only(&s));
        }
        schemas.insert(kind.into(), s);
    }
    let req = json!({
        "schemas": schemas,
        "cases": cases.iter().map(|(n, s, i)| json!({"name": n, "schema": s, "instance": i})).collect::<Vec<_>>(),
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/schema_check.py");
    let mut child = Command::new(python())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{} must run the schema checks (scripts/setup.sh): {e}",
                python()
            )
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the independent validator failed (pip install jsonschema; scripts/setup.sh): {}",
        show(&out)
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    v.into_iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["valid"].as_bool().unwrap(),
                r["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// The result schema with each typed section held to its Rust type alone
/// (`result-typed`): what this build writes is the typed record, never the
/// shape the schema keeps for results of other builds.
fn typed_only(result: &Value) -> Value {
    let mut s = result.clone();
    let defs = &mut s["$defs"];
    for (def, typed) in [
        (
            "CaptureEntry",
            json!({"anyOf": [{"$ref": "#/$defs/CaptureRecord"}, {"$ref": "#/$defs/StepRow"}]}),
        ),
        ("Inventory", json!({"$ref": "#/$defs/Devices"})),
        ("TxRecord", json!({"$ref": "#/$defs/Tone"})),
    ] {
        assert!(defs[def].is_object(), "the result schema has $defs/{def}");
        defs[def] = typed;
    }
    s
}

/// A task fixture as the task schema's `{"header": {...}, "plan": ...}`, plus
/// how many `rx-plan` blocks it has and whether their JSON parsed.
fn task_document(path: &Path) -> (Value, usize, bool) {
    let raw = std::fs::read_to_string(path).unwrap();
    let t = raw.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    let (head, body) = t.split_once("\n\n").unwrap_or((&t, ""));
    let mut header = serde_json::Map::new();
    for l in head.lines() {
        if let Some((k, v)) = l.split_once('=') {
            header.insert(k.trim().to_owned(), Value::String(v.trim().to_owned()));
        }
    }
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for l in body.lines() {
        match &mut cur {
            None if l.trim_start().starts_with("```rx-plan") => cur = Some(String::new()),
            Some(b) if l.trim() == "```" => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(l);
                b.push('\n');
            }
            None => {}
        }
    }
    let parsed: Vec<Option<Value>> = blocks
        .iter()
        .map(|b| serde_json::from_str(b).ok())
        .collect();
    let ok = parsed.iter().all(Option::is_some);
    let plan = parsed.into_iter().next().flatten().unwrap_or(Value::Null);
    (json!({"header": header, "plan": plan}), blocks.len(), ok)
}

#[test]
fn the_schemas_are_draft_2020_12_and_the_files_docs_link() {
    let d = tempfile::tempdir().unwrap();
    for kind in [
        "plan",
        "result",
        "policy",
        "task",
        "status",
        "log-meta",
        "calibration",
        "health",
        "sigmf-rxnode",
    ] {
        let out = rxnode(d.path(), &["schema", kind], "");
        expect_exit!(out, 0);
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{kind}.schema.json"));
        assert_eq!(
            stdout(&out),
            std::fs::read_to_string(&file).unwrap(),
            "{kind}"
        );
        let s: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    }
    let protocol =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/protocol.md"))
            .unwrap();
    for kind in [
        "plan",
        "result",
        "policy",
        "task",
        "status",
        "log-meta",
        "calibration",
        "health",
        "sigmf-rxnode",
    ] {
        assert!(
            protocol.contains(&format!("schemas/{kind}.schema.json")),
            "docs/protocol.md does not link schemas/{kind}.schema.json"
        );
    }
    let out = rxnode(d.path(), &["schema", "nonsense"], "");
    expect_exit!(out, 2);
}

#[test]
fn every_fixture_validates_or_fails_as_the_parser_says_with_an_independent_validator() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = Vec::new();
    let mut expect = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "md") && p.file_name().unwrap() != "README.md"
        })
        .collect();
    files.sort();
    let mut invalid_plans = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let valid = name.starts_with("valid_") || name == "watcher_test_task.md";
        let (doc, blocks, parsed) = task_document(f);
        if valid {
            // The parser agrees first (so the fixture is what its name says).
            let out = rxnode(&fixtures, &["validate", f.to_str().unwrap()], "");
            expect_exit!(out, 0, "{name}");
            assert!(blocks <= 1 && parsed, "{name}");
            cases.push((format!("{name} as a task"), "task", doc.clone()));
            expect.push((format!("{name} as a task"), true));
            if !doc["plan"].is_null() {
                cases.push((format!("{name} plan"), "plan", doc["plan"].clone()));
                expect.push((format!("{name} plan"), true));
            }
        } else if name.starts_with("invalid_plan_") {
            invalid_plans += 1;
            let out = rxnode(&fixtures, &["validate", f.to_str().unwrap()], "");
            expect_exit!(out, 2, "{name}");
            if !parsed {
                // Not JSON: no JSON validator can accept it.
                assert_eq!(name, "invalid_plan_bad_json.md");
                continue;
            }
            if blocks > 1 {
                // Two rx-plan blocks cannot even be written as one task document.
                assert_eq!(name, "invalid_plan_two_blocks.md");
                continue;
            }
            cases.push((format!("{name} as a task"), "task", doc.clone()));
            expect.push((format!("{name} as a task"), false));
        }
    }
    assert_eq!(
        invalid_plans, 8,
        "the invalid_plan_* fixtures changed: review this test"
    );
    // Plan-only failures (no header needed) fail the plan schema alone too.
    for name in [
        "invalid_plan_unknown_field.md",
        "invalid_plan_unknown_op.md",
        "invalid_plan_nonpositive.md",
    ] {
        let (doc, _, _) = task_document(&fixtures.join(name));
        cases.push((format!("{name} plan"), "plan", doc["plan"].clone()));
        expect.push((format!("{name} plan"), false));
    }
    push_parser_forms_and_policies(&mut cases, &mut expect);
    let verdicts = jsonschema_verdicts(&cases);
    assert_eq!(verdicts.len(), expect.len());
    for ((name, valid, errors), (ename, want)) in verdicts.iter().zip(&expect) {
        assert_eq!(name, ename);
        assert_eq!(
            valid, want,
            "{name}: schema says valid={valid}, expected {want}; errors {errors:?}"
        );
    }
}

/// The forms the parsers take and the policies, as cases with the verdict expected.
fn push_parser_forms_and_policies(
    cases: &mut Vec<(String, &'static str, Value)>,
    expect: &mut Vec<(String, bool)>,
) {
    // The forms the parsers take: rx_sweep exactly as docs/operator.md#sweeps-rxnode-sweep names it,
    // and gain_db per element.
    let extra = [
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "sample_rate_hz": 10e6, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01,
            "crop": 0.25, "repeats": 1}]}),
            true,
        ),
        (
            json!({"steps": [{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 1e8,
            "sample_rate_hz": 2e6, "duration_s": 1, "gain_db": {"LNA": 16, "VGA": 20}}]}),
            true,
        ),
        (
            json!({"steps": [{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 1e8,
            "sample_rate_hz": 2e6, "duration_s": 1, "gain_db": {"LNA": "max"}}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "crop": 1.0}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "power_w": 5}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "clkin_compare", "devices": ["driver=rxsim,serial=m", "driver=rxsim,serial=s"],
            "frequency_hz": 100e6, "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 1, "tone_hz": 100.2e6,
            "tolerance_ppb": 10, "clock_sources": ["internal", "external"]}]}),
            true,
        ),
        (
            json!({"steps": [{"op": "clkin_compare", "devices": ["driver=rxsim,serial=m"],
            "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 1, "tone_hz": 100.2e6}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "clkin_compare", "devices": ["driver=rxsim,serial=m", "driver=rxsim,serial=s"],
            "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 1, "tone_hz": 100.2e6, "tolerance_ppm": 1}]}),
            false,
        ),
        (json!({"steps": []}), false),
        (json!({"steps": [{"op": "inventory"}], "extra": 1}), false),
        (
            json!({"steps": [{"op": "clock_check", "device": ""}]}),
            false,
        ),
    ];
    for (i, (plan, ok)) in extra.into_iter().enumerate() {
        cases.push((format!("extra plan {i}"), "plan", plan));
        expect.push((format!("extra plan {i}"), ok));
    }
    // Policies: the demo's, the defaults ({}), and broken ones.
    let policies = [
        (
            json!({"rx": {"max_duration_s": 10, "max_sample_rate_hz": 20000000, "max_gain_db": 50,
            "max_iq_bytes": 104857600}, "tx": {"allowed_ranges_hz": [[433050000, 434790000]],
            "max_gain_db": 10, "max_duration_s": 2}}),
            true,
        ),
        (json!({}), true),
        (json!({"rx": {"max_duration_s": -1}}), false),
        (
            json!({"tx": {"allowed_ranges_hz": [[1, 2, 3]], "max_gain_db": 0, "max_duration_s": 1}}),
            false,
        ),
        (
            json!({"rx": {"max_duration_s": 5}, "tx_enabled": true}),
            false,
        ),
    ];
    for (i, (p, ok)) in policies.into_iter().enumerate() {
        cases.push((format!("policy {i}"), "policy", p));
        expect.push((format!("policy {i}"), ok));
    }
}

#[test]
fn every_result_rxnode_writes_validates_against_the_result_schema() {
    let lab = Lab::new();
    let a = lab.node("LAB-SCHEMA");
    let mut cases = Vec::new();
    // A manual task's skeleton (NOT RUN), as approved.
    lab.post("SCH_MANUAL", &[]);
    approve(&a);
    // A real capture run on the simulated radio (PASS), and a mis-clocked one (FAIL).
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post("SCH_CLKIN", &["--rx", "--plan", &plan]);
    approve(&a);
    expect_exit!(rxnode(&a, &["--sim", "run", "SCH_CLKIN"], ""), 0);
    let bad_clock = CLKIN_PLAN
        .replace("serial=lab-locked,ext_ref=1", "serial=lab-free,ppm=2.5")
        .replace("\"external\"", "\"internal\"");
    let plan2 = lab.plan_file("clkin2.json", &bad_clock);
    lab.post("SCH_FREE", &["--rx", "--plan", &plan2]);
    approve(&a);
    expect_exit!(rxnode(&a, &["--sim", "run", "SCH_FREE"], ""), 1);
    // Two radios compared on one tone (a slave off by 50 ppb: FAIL, UNLOCKED).
    let compare = r#"{"steps": [{"op": "clkin_compare",
      "devices": ["driver=rxsim,serial=sch-m,tone_hz=100.2e6,tone_dbfs=-30",
                  "driver=rxsim,serial=sch-s,ppm=0.05,tone_hz=100.2e6,tone_dbfs=-30"],
      "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 0.5, "tone_hz": 100.2e6}]}"#;
    let plan3 = lab.plan_file("compare.json", compare);
    lab.post("SCH_COMPARE", &["--rx", "--plan", &plan3]);
    approve(&a);
    assert_eq!(
        rxnode(&a, &["--sim", "run", "SCH_COMPARE"], "")
            .status
            .code(),
        Some(1)
    );
    // A frequency calibration on the simulated radio's GSM scene (PASS, with a clock block).
    let fc = r#"{"steps": [{"op": "freq_cal", "device": "driver=rxsim,serial=sch-fc,pace=0,ppm=3,gsm_freq=935.2e6,gsm_snr_db=10",
        "method": "gsm", "frequency_hz": 935.2e6, "sample_rate_hz": 1e6, "duration_s": 2}]}"#;
    let plan4 = lab.plan_file("freqcal.json", fc);
    lab.post("SCH_FREQCAL", &["--rx", "--plan", &plan4]);
    approve(&a);
    assert_eq!(
        rxnode(&a, &["--sim", "run", "SCH_FREQCAL"], "")
            .status
            .code(),
        Some(0)
    );
    // An inventory and a capture the radio refuses (a step row in captures).
    let inv = r#"{"steps": [{"op": "inventory"},
      {"op": "rx_capture", "device": "driver=nosuch",
       "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 0.1}]}"#;
    let plan5 = lab.plan_file("inventory.json", inv);
    lab.post("SCH_INV", &["--rx", "--plan", &plan5]);
    approve(&a);
    rxnode(&a, &["--sim", "run", "SCH_INV"], "");
    let mut typed = Vec::new();
    for id in [
        "SCH_MANUAL",
        "SCH_CLKIN",
        "SCH_FREE",
        "SCH_COMPARE",
        "SCH_FREQCAL",
        "SCH_INV",
    ] {
        let p = a.join(format!(".local/rx_agent_outbox/{id}/RX_RESULT.json"));
        let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["node"]["name"], "LAB-SCHEMA");
        typed.push((format!("typed {id}"), "result-typed", v.clone()));
        cases.push((id.to_owned(), "result", v));
    }
    let inv = &typed[5].2;
    assert!(inv["inventory"]["devices"].is_array(), "{inv:#}");
    assert_eq!(inv["captures"][0]["step"], 2, "{inv:#}");
    assert!(typed[1].2["captures"][0]["psd_db"].is_array());
    cases.extend(typed);
    // The golden result fixture.
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results/FIX_YELLOW_001/RX_RESULT.json");
    let g: Value = serde_json::from_slice(&std::fs::read(&golden).unwrap()).unwrap();
    cases.push(("golden".into(), "result", g.clone()));
    let n_good = cases.len();
    // And the schema can fail: broken variants of a real result.
    let real = cases[1].2.clone();
    let mut broken = Vec::new();
    // A freq_cal confidence above 1 and an unknown method are refused.
    let mut b = cases[4].2.clone();
    b["freq_cal"][0]["confidence"] = json!(2.0);
    broken.push(b);
    let mut b = cases[4].2.clone();
    b["freq_cal"][0]["method"] = json!("umts");
    broken.push(b);
    let mut b = real.clone();
    b["status"] = json!("MAYBE");
    broken.push(b);
    let mut b = real.clone();
    b["captures"][0]["iq_files"] =
        json!([{"path": "/home/op/.local/x.cf32", "bytes": 1, "sha256": "0".repeat(64)}]);
    broken.push(b);
    let mut b = real.clone();
    b["node"]["name"] = json!("bad name");
    broken.push(b);
    let mut b = real.clone();
    b.as_object_mut().unwrap().remove("timeline");
    broken.push(b);
    let mut b = real;
    b["surprise"] = json!(1);
    broken.push(b);
    let mut b = cases[3].2.clone();
    assert_eq!(
        b["clkin_compares"][0]["clkin_compare"]["verdict"],
        "UNLOCKED"
    );
    b["clkin_compares"][0]["clkin_compare"]["verdict"] = json!("MAYBE");
    broken.push(b);
    for (i, b) in broken.into_iter().enumerate() {
        cases.push((format!("broken {i}"), "result", b));
    }
    let verdicts = jsonschema_verdicts(&cases);
    for (i, (name, valid, errors)) in verdicts.iter().enumerate() {
        assert_eq!(
            *valid,
            i < n_good,
            "{name}: valid={valid}; errors {errors:?}"
        );
    }
}

/// Every JSON file a node publishes has a schema the main PC can check it
/// against: `LOG_META.json` had none (`rxnode schema` offered no kind for it).
/// A published one validates with the independent validator; another version,
/// an unknown key and a size that is not a number fail.
#[test]
fn a_published_log_meta_validates_against_rxnode_schema_log_meta() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("META_1", &[]);
    approve(&a);
    expect_exit!(publish(&a, "META_1"), 0);
    let meta: Value = serde_json::from_str(&git(
        &lab.origin,
        &["show", "rx-node:rx-results/META_1/LAB-A/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["node_name"], "LAB-A", "{meta:#}");
    let mut other_version = meta.clone();
    other_version["schema_version"] = json!(2);
    let mut unknown_key = meta.clone();
    unknown_key["extra"] = json!(1);
    let mut bytes_text = meta.clone();
    bytes_text["files"][0]["bytes"] = json!("12");
    let verdicts = jsonschema_verdicts(&[
        ("published".into(), "log-meta", meta),
        ("version 2".into(), "log-meta", other_version),
        ("unknown key".into(), "log-meta", unknown_key),
        ("bytes as text".into(), "log-meta", bytes_text),
    ]);
    assert!(verdicts[0].1, "{:?}", verdicts[0]);
    for v in &verdicts[1..] {
        assert!(!v.1, "{} must fail: {:?}", v.0, v.2);
    }
}
