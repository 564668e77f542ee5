//! The validator's tests: schema, statuses, timeline, IQ files, MD/JSON agreement.
use super::*;
use crate::result::files::write_result_files;
use crate::result::markdown::render_markdown;
use crate::result::model::{Check, RxResult, Status, Timeline};
use crate::result::test_util::{ran, task, COMMIT};
use crate::result::RESULT_MD;
use rxnode_interlock::sha256_hex;
use serde_json::json;

fn write_raw(dir: &Path, v: &Value) -> std::path::PathBuf {
    // Write a JSON value and a Markdown twin that agrees with it byte for byte.
    let r: RxResult = serde_json::from_value(v.clone()).unwrap();
    let out = dir.join("out");
    write_result_files(&out, &r).unwrap();
    out.join(RESULT_JSON)
}

#[test]
fn written_files_validate_and_render_details() {
    let d = tempfile::TempDir::new().unwrap();
    let r = ran(d.path());
    let out = d.path().join(".local/rx_agent_outbox/R_1");
    write_result_files(&out, &r).unwrap();
    let p = validate_result_files(&out.join(RESULT_JSON), d.path());
    assert!(p.is_empty(), "{p:#?}");
    let md = std::fs::read_to_string(out.join(RESULT_MD)).unwrap();
    assert!(md.contains("| Status | PASS |"));
    assert!(md.contains("Result \\| test"), "pipes escaped");
    assert!(md.contains("+0.0012 ± 0.0030 ppm"), "{md}");
    assert!(md.contains("| `.local/rx_iq/R_1/cap1.sigmf-data` | 10 |"));
    assert!(md.contains("-80.2 dB") || md.contains("-80.3 dB"));
    assert!(md.contains("overflows: 0; dropped samples: 0"));
    assert!(md.contains('█') && md.contains('▁'), "sparkline: {md}");
    assert!(
        md.contains("Spectrum (99.500000 MHz … 100.500000 MHz, -81.0 dB … -20.0 dB)"),
        "{md}"
    );
    assert!(md.trim_end().ends_with("-->"));
    let json = std::fs::read(out.join(RESULT_JSON)).unwrap();
    assert!(md.contains(&format!("json_sha256={} -->", sha256_hex(&json))));
    // The JSON reads back into the same value.
    let back: RxResult = serde_json::from_slice(&json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn skeleton_files_validate() {
    let d = tempfile::TempDir::new().unwrap();
    let r = RxResult::manual_skeleton(&task(false), "", None);
    write_result_files(d.path(), &r).unwrap();
    let p = validate_result_files(&d.path().join(RESULT_JSON), d.path());
    assert!(p.is_empty(), "{p:#?}");
}

fn problems_after(edit: impl Fn(&mut Value)) -> Vec<String> {
    let d = tempfile::TempDir::new().unwrap();
    let mut v = serde_json::to_value(ran(d.path())).unwrap();
    edit(&mut v);
    // Render a twin that agrees, so only the edited property is wrong.
    let out = d.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let bytes = {
        let mut s = serde_json::to_string_pretty(&v).unwrap();
        s.push('\n');
        s.into_bytes()
    };
    std::fs::write(out.join(RESULT_JSON), &bytes).unwrap();
    let md = match serde_json::from_value::<RxResult>(v.clone()) {
        Ok(r) => render_markdown(&r).replace(&sha256_hex(&r.to_json_bytes()), &sha256_hex(&bytes)),
        Err(_) => format!(
            "| Status | {} |\n<!-- rxnode-result schema_version=1 task_id={} status=\"{}\" json_sha256={} -->\n",
            v["status"].as_str().unwrap_or(""),
            v["task_id"].as_str().unwrap_or(""),
            v["status"].as_str().unwrap_or(""),
            sha256_hex(&bytes)
        ),
    };
    std::fs::write(out.join(RESULT_MD), md).unwrap();
    validate_result_files(&out.join(RESULT_JSON), d.path())
}

fn expect(p: &[String], needle: &str) {
    assert!(
        p.iter().any(|x| x.contains(needle)),
        "no {needle:?} in {p:#?}"
    );
}

#[test]
fn schema_problems_named() {
    expect(
        &problems_after(|v| v["schema_version"] = json!(2)),
        "schema_version: 2 is not supported",
    );
    expect(
        &problems_after(|v| v["schema_version"] = json!("1")),
        "schema_version: expected a number",
    );
    expect(
        &problems_after(|v| {
            v.as_object_mut().unwrap().remove("task_title");
        }),
        "task_title: missing",
    );
    expect(
        &problems_after(|v| v["task_id"] = json!("../x")),
        "task_id: \"../x\"",
    );
    expect(
        &problems_after(|v| v["extra"] = json!(1)),
        "extra: unknown key",
    );
    expect(
        &problems_after(|v| v["risk_level"] = json!("ORANGE")),
        "risk_level",
    );
    expect(
        &problems_after(|v| v["source_commit"] = json!("abc")),
        "source_commit",
    );
    expect(
        &problems_after(|v| v["approval"]["task_sha256"] = json!("zz")),
        "approval.task_sha256",
    );
    expect(
        &problems_after(|v| {
            v["authorization"] = json!({"kind": "YOLO", "at": "2026-01-01T00:00:00Z"})
        }),
        "authorization.kind",
    );
    expect(
        &problems_after(|v| v["errors"] = json!([1])),
        "errors[0]: expected a string",
    );
    expect(
        &problems_after(|v| v["captures"] = json!({})),
        "captures: expected an array",
    );
    expect(
        &problems_after(|v| v["node"] = json!({})),
        "node.rxnode_version: missing",
    );
}

#[test]
fn status_vocabulary_and_consistency() {
    expect(
        &problems_after(|v| v["status"] = json!("pass")),
        "status: \"pass\" is not one of",
    );
    expect(
        &problems_after(|v| v["checks"][0]["status"] = json!("OK")),
        "checks[0].status: \"OK\"",
    );
    expect(
        &problems_after(|v| v["checks"][1]["status"] = json!("FAIL")),
        "status: PASS disagrees with the checks, which give FAIL",
    );
    expect(
        &problems_after(|v| v["checks"] = json!([])),
        "status: PASS disagrees with the checks, which give NOT RUN",
    );
    expect(
        &problems_after(|v| v["captures"][0]["clkin"]["status"] = json!("GOOD")),
        "captures[0].clkin.status",
    );
}

/// A CLKIN check on a stream that lost samples is NOT_MEASURED, and a result that
/// says so is valid (the capture is PARTIAL; the check made no number).
#[test]
fn a_clkin_check_not_measured_on_a_broken_stream_is_valid() {
    let p = problems_after(|v| v["captures"][0]["clkin"]["status"] = json!("NOT_MEASURED"));
    assert!(p.is_empty(), "{p:?}");
}

#[test]
fn timeline_rules() {
    expect(
        &problems_after(|v| v["timeline"]["completed_at"] = json!("2026-01-01T09:00:00+00:00")),
        "completed_at is before started_at",
    );
    // 11:05:03+01:00 is 10:05:03 UTC: offsets are honoured.
    let p = problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01T10:05:04Z"));
    expect(&p, "completed_at is before started_at");
    expect(
        &problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01T10:05:00")),
        "not ISO 8601",
    );
    expect(
        &problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01 10:05")),
        "not ISO 8601",
    );
    expect(
        &problems_after(|v| v["timeline"]["started_at"] = Value::Null),
        "completed_at without started_at",
    );
    expect(
        &problems_after(|v| v["timeline"] = json!({"started_at": null, "completed_at": null})),
        "status PASS needs started_at and completed_at",
    );
}

#[test]
fn iq_paths_and_hashes() {
    let f = |v: &mut Value, k: &str, x: Value| v["captures"][0]["iq_files"][0][k] = x;
    expect(
        &problems_after(|v| f(v, "path", json!("/home/op/.local/x.cf32"))),
        "must be relative",
    );
    expect(
        &problems_after(|v| f(v, "path", json!("../x.cf32"))),
        "without '..'",
    );
    expect(
        &problems_after(|v| f(v, "path", json!(".local/../../x"))),
        "without '..'",
    );
    expect(
        &problems_after(|v| f(v, "path", json!("C:\\x.cf32"))),
        "must be relative",
    );
    expect(
        &problems_after(|v| f(v, "bytes", json!(11))),
        "is 10 bytes on disk, the result says 11",
    );
    expect(
        &problems_after(|v| f(v, "sha256", json!("0".repeat(64)))),
        "has SHA-256",
    );
    expect(
        &problems_after(|v| f(v, "sha256", json!("xyz"))),
        "not 64 hex",
    );
    expect(
        &problems_after(|v| f(v, "bytes", json!(-1))),
        "non-negative integer",
    );
    // A file that is not on this machine is not an error.
    assert!(problems_after(|v| f(v, "path", json!(".local/rx_iq/R_1/elsewhere.cf32"))).is_empty());
    assert!(is_safe_relative("a/b.cf32") && is_safe_relative("./a"));
    assert!(!is_safe_relative("") && !is_safe_relative("\\\\server\\x"));
}

/// A trailer that disagrees with the JSON quotes both values as they are, or
/// says `(none)`: the message showed Rust's `Some("PASS")` and `None`.
#[test]
fn trailer_disagreement_quotes_the_values_never_rust_options() {
    let d = tempfile::TempDir::new().unwrap();
    let r = ran(d.path());
    write_result_files(d.path(), &r).unwrap();
    let j = d.path().join(RESULT_JSON);
    let m = d.path().join(RESULT_MD);
    let md = std::fs::read_to_string(&m).unwrap();
    std::fs::write(&m, md.replace("status=\"PASS\"", "status=\"FAIL\"")).unwrap();
    let p = validate_result_files(&j, d.path());
    expect(
        &p,
        "trailer status \"FAIL\" disagrees with the JSON \"PASS\"",
    );
    let no_status = md.replace(" status=\"PASS\"", "");
    assert_ne!(no_status, md);
    std::fs::write(&m, no_status).unwrap();
    let q = validate_result_files(&j, d.path());
    expect(&q, "trailer status (none) disagrees with the JSON \"PASS\"");
    assert!(
        !p.iter()
            .chain(&q)
            .any(|x| x.contains("Some(") || x.contains("None")),
        "{p:#?} {q:#?}"
    );
}

#[test]
fn md_json_disagreement() {
    let d = tempfile::TempDir::new().unwrap();
    let r = ran(d.path());
    write_result_files(d.path(), &r).unwrap();
    let j = d.path().join(RESULT_JSON);
    let m = d.path().join(RESULT_MD);
    let md = std::fs::read_to_string(&m).unwrap();
    // JSON edited after rendering: hash no longer matches.
    let json = std::fs::read_to_string(&j).unwrap();
    std::fs::write(&j, json.replace("1 device", "2 devices")).unwrap();
    expect(&validate_result_files(&j, d.path()), "does not match");
    std::fs::write(&j, &json).unwrap();
    assert!(validate_result_files(&j, d.path()).is_empty());
    // Markdown status row edited.
    std::fs::write(&m, md.replace("| Status | PASS |", "| Status | FAIL |")).unwrap();
    expect(
        &validate_result_files(&j, d.path()),
        "summary row `| Status | PASS |` not found",
    );
    std::fs::write(
        &m,
        md.replace(
            "| 2 | step 2: rx_capture | PASS |",
            "| 2 | step 2: rx_capture | FAIL |",
        ),
    )
    .unwrap();
    expect(
        &validate_result_files(&j, d.path()),
        "check row `| 2 | step 2: rx_capture | PASS |`",
    );
    std::fs::write(&m, md.replace("status=\"PASS\"", "status=\"FAIL\"")).unwrap();
    expect(&validate_result_files(&j, d.path()), "trailer status");
    let no_trailer: String = md
        .lines()
        .filter(|l| !l.starts_with("<!--"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&m, no_trailer).unwrap();
    expect(&validate_result_files(&j, d.path()), "trailer line");
    std::fs::remove_file(&m).unwrap();
    expect(
        &validate_result_files(&j, d.path()),
        "cannot read the Markdown twin",
    );
}

#[test]
fn unreadable_json() {
    let d = tempfile::TempDir::new().unwrap();
    let j = d.path().join(RESULT_JSON);
    expect(&validate_result_files(&j, d.path()), "cannot read");
    std::fs::write(&j, b"{not json").unwrap();
    expect(&validate_result_files(&j, d.path()), "not valid JSON");
    std::fs::write(&j, b"[]").unwrap();
    expect(
        &validate_result_files(&j, d.path()),
        "must be a JSON object",
    );
    std::fs::write(&j, b"\xff\xfe").unwrap();
    expect(&validate_result_files(&j, d.path()), "not valid JSON");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Whatever the check names, details, errors and title hold (pipes,
    /// newlines, backticks, Unicode), the two written files validate.
    #[test]
    fn any_text_round_trips(
        checks in proptest::collection::vec(("(\\PC|[|\\n\\r`\\\\]){0,30}", 0usize..6, "(\\PC|[|\\n\\r]){0,40}"), 0..6),
        title in "\\PC{1,60}",
        errors in proptest::collection::vec("\\PC{0,40}", 0..3),
        with_time in proptest::bool::ANY,
    ) {
        let d = tempfile::TempDir::new().unwrap();
        let mut r = RxResult::manual_skeleton(&task(false), COMMIT, None);
        r.task_title = title;
        r.errors = errors;
        r.checks = checks.into_iter().map(|(n, i, det)| Check::new(n, Status::ALL[i], det)).collect();
        r.recompute_status();
        if with_time || matches!(r.status, Status::Pass | Status::Fail | Status::Partial) {
            r.timeline = Timeline {
                started_at: Some("2026-01-01T10:05:00+00:00".into()),
                completed_at: Some("2026-01-01T10:05:00+00:00".into()),
                wall_clock_step_s: None,
            };
        }
        write_result_files(d.path(), &r).unwrap();
        let p = validate_result_files(&d.path().join(RESULT_JSON), d.path());
        // Text that holds an absolute path (any OS) is refused for
        // that reason and no other; any other text validates.
        let texts: Vec<&str> = std::iter::once(r.task_title.as_str())
            .chain(r.errors.iter().map(String::as_str))
            .chain(r.checks.iter().flat_map(|c| [c.name.as_str(), c.detail.as_str()]))
            .collect();
        if texts.iter().any(|t| absolute_path_in(t).is_some()) {
            proptest::prop_assert!(!p.is_empty());
            proptest::prop_assert!(p.iter().all(|x| x.contains("holds the absolute path")), "{:#?}", p);
        } else {
            proptest::prop_assert!(p.is_empty(), "{:#?}", p);
        }
    }
}

#[test]
fn write_raw_helper_round_trip() {
    let d = tempfile::TempDir::new().unwrap();
    let v = serde_json::to_value(ran(d.path())).unwrap();
    let j = write_raw(d.path(), &v);
    assert!(validate_result_files(&j, d.path()).is_empty());
}

/// A `clkin_compares` entry: a verdict needs its number and uncertainty, PASS needs
/// LOCKED, and a made-up verdict or status is named by its field.
#[test]
fn clkin_compare_entries_are_checked() {
    // A real entry (`rxnode run`'s), its status, verdict and figure changed.
    let real: Vec<Value> = serde_json::from_str(include_str!(
        "../../../fixtures/sections/clkin_compares.json"
    ))
    .expect("fixture");
    let entry = |status: &str, verdict: Value, rel: Value| {
        let mut e = real[0].clone();
        e["status"] = json!(status);
        e["clkin_compare"]["verdict"] = verdict;
        e["clkin_compare"]["relative_ppb"] = rel;
        json!([e])
    };
    // The result's overall status stays as it was; only the entry is judged here.
    let p = problems_after(|v| v["clkin_compares"] = entry("PASS", json!("LOCKED"), json!(0.1)));
    assert!(!p.iter().any(|m| m.contains("clkin_compares")), "{p:#?}");
    let p = problems_after(|v| v["clkin_compares"] = entry("FAIL", json!("MAYBE"), json!(0.1)));
    assert!(
        p.iter()
            .any(|m| m.contains("clkin_compares[0].clkin_compare.verdict")),
        "{p:#?}"
    );
    let p = problems_after(|v| v["clkin_compares"] = entry("PASS", json!("UNLOCKED"), json!(50)));
    assert!(
        p.iter()
            .any(|m| m.contains("PASS without the verdict LOCKED")),
        "{p:#?}"
    );
    let p = problems_after(|v| v["clkin_compares"] = entry("FAIL", json!("LOCKED"), Value::Null));
    assert!(
        p.iter()
            .any(|m| m.contains("verdict LOCKED without relative_ppb")),
        "{p:#?}"
    );
    let p = problems_after(|v| v["clkin_compares"] = entry("GOOD", Value::Null, Value::Null));
    assert!(
        p.iter().any(|m| m.contains("clkin_compares[0].status")),
        "{p:#?}"
    );
}

/// `sweeps` and `freq_cal` entries read as their types: real entries pass, and a
/// field of the wrong type is named by its path inside the entry.
#[test]
fn sweep_and_freq_cal_entries_are_checked_by_their_types() {
    let sweeps: Vec<Value> =
        serde_json::from_str(include_str!("../../../fixtures/sections/sweeps.json"))
            .expect("fixture");
    let fc: Vec<Value> =
        serde_json::from_str(include_str!("../../../fixtures/sections/freq_cal.json"))
            .expect("fixture");
    let p = problems_after(|v| {
        v["sweeps"] = json!(sweeps[..2]);
        v["freq_cal"] = json!(fc[..4]);
    });
    assert!(
        !p.iter()
            .any(|m| m.contains("sweeps") || m.contains("freq_cal")),
        "{p:#?}"
    );
    let p = problems_after(|v| {
        let mut e = fc[0].clone();
        e["pci"] = json!("77");
        v["freq_cal"] = json!([e]);
    });
    assert!(
        p.iter().any(|m| m.starts_with("freq_cal[0].pci: ")),
        "{p:#?}"
    );
    let p = problems_after(|v| {
        let mut e = sweeps[0].clone();
        e["hops"][0]["status"] = json!("MAYBE");
        v["sweeps"] = json!([e]);
    });
    assert!(
        p.iter()
            .any(|m| m.starts_with("sweeps[0].hops[0].status: ")),
        "{p:#?}"
    );
}

/// A capture, inventory or `tx` record in this build's shape is held to its type:
/// the real record passes; a field the capture bounds never read (a count, the
/// stop reason) is named by its path when mistyped or missing; a bound every
/// capture keeps is named as before, alone; an entry in an older node's shape
/// (without the record's loss counts) still passes.
#[test]
fn records_in_this_builds_shape_are_held_to_their_types() {
    use crate::result::sections::capture::{tests::summary, CaptureRecord};
    let record = serde_json::to_value(CaptureRecord::of(&summary()).expect("record")).unwrap();
    let tone = json!({"cancelled": false, "device": "driver=rxsim,serial=TX1",
        "frequency_hz": 433.92e6, "gain_db": 0.0, "on_air_s": 0.95, "past_permit_s": 0.0,
        "sample_rate_hz": 2e6, "samples_planned": 2_000_000, "samples_sent": 1_900_000,
        "started_at": "2026-01-01T10:05:01.000Z", "state_unknown_s": null,
        "stopped_at": "2026-01-01T10:05:01.950Z", "tone_offset_hz": 1e5});
    let with = |edit: &dyn Fn(&mut Value, &mut Value)| {
        problems_after(|v| {
            let (mut c, mut t) = (record.clone(), tone.clone());
            edit(&mut c, &mut t);
            v["captures"] = json!([c]);
            v["tx"] = t;
            // A transmission is a RED task's, authorized for RF TX.
            v["risk_level"] = json!("RED");
            v["authorization"] = json!({"kind": "RF_TX", "at": "2026-01-01T10:05:00Z"});
            v["inventory"] = json!({"devices": []});
        })
    };
    let p = with(&|_, _| {});
    assert!(p.is_empty(), "{p:#?}");
    let p = with(&|c, _| c["samples_received"] = json!("many"));
    assert_eq!(
        p,
        ["captures[0].samples_received: invalid type: string \"many\", expected u64"]
    );
    let p = with(&|c, _| {
        c.as_object_mut().unwrap().remove("stop_reason");
    });
    assert_eq!(p, ["captures[0]: missing field `stop_reason`"]);
    let p = with(&|c, _| c["device"]["args"] = json!(7));
    assert_eq!(
        p,
        ["captures[0].device.args: invalid type: integer `7`, expected a string"]
    );
    // A bound every capture keeps: its own message, not the type's as well.
    let p = with(&|c, _| c["iq_files"][0]["bytes"] = json!(-1));
    assert_eq!(
        p,
        ["captures[0].iq_files[0].bytes: expected a non-negative integer, got -1"]
    );
    let p = with(&|_, t| t["samples_sent"] = json!(null));
    assert_eq!(p, ["tx.samples_sent: invalid type: null, expected u64"]);
    let p = problems_after(|v| v["inventory"] = json!({"devices": [{"driver": "rxsim"}]}));
    expect(&p, "inventory.devices[0]: missing field");
    // Older shapes: a capture without the loss counts, a device list, a tx record
    // without `state_unknown_s`.
    let p = with(&|c, t| {
        let c = c.as_object_mut().unwrap();
        c.remove("overflow_lost_samples");
        c.remove("stop_reason");
        c.insert("samples_received".into(), json!("many"));
        t.as_object_mut().unwrap().remove("state_unknown_s");
        t["samples_sent"] = json!("lots");
    });
    assert!(p.is_empty(), "{p:#?}");
}

/// This build writes every field of its records, `null` for none: an optional
/// field left out of an entry in this build's shape is refused by its path (serde
/// alone read it as none), `null` is accepted, a field the type writes only when
/// it has one may be left out, and an entry in an older node's shape is still read
/// by its keys.
#[test]
fn an_optional_field_left_out_is_refused_and_null_accepted() {
    use crate::result::sections::capture::{tests::summary, CaptureRecord};
    let record = serde_json::to_value(CaptureRecord::of(&summary()).expect("record")).unwrap();
    let sweeps: Vec<Value> =
        serde_json::from_str(include_str!("../../../fixtures/sections/sweeps.json")).unwrap();
    let compares: Vec<Value> = serde_json::from_str(include_str!(
        "../../../fixtures/sections/clkin_compares.json"
    ))
    .unwrap();
    let with = |edit: &dyn Fn(&mut Value, &mut Value, &mut Value)| {
        problems_after(|v| {
            let (mut c, mut s, mut k) = (record.clone(), sweeps[0].clone(), compares[0].clone());
            edit(&mut c, &mut s, &mut k);
            v["captures"] = json!([c]);
            v["sweeps"] = json!([s]);
            v["clkin_compares"] = json!([k]);
        })
    };
    let drop = |v: &mut Value, key: &str| {
        assert!(
            v.as_object_mut().unwrap().remove(key).is_some(),
            "{key} in {v:#}"
        );
    };
    assert_eq!(with(&|_, _, _| {}), Vec::<String>::new());
    let p = with(&|c, s, k| {
        drop(c, "noise_floor_db");
        drop(s, "noise_floor_db");
        drop(&mut k["clkin_compare"], "relative_ppb");
    });
    assert_eq!(
        p,
        [
            "captures[0]: missing field `noise_floor_db`",
            "sweeps[0]: missing field `noise_floor_db`",
            "clkin_compares[0].clkin_compare: missing field `relative_ppb`",
        ]
    );
    let p = with(&|c, _, _| drop(&mut c["clkin"], "ppm"));
    assert_eq!(p, ["captures[0].clkin: missing field `ppm`"]);
    // `null` is the written none; `clock` and `psd_db` are written only when there.
    let p = with(&|c, s, _| {
        c["noise_floor_db"] = Value::Null;
        c["clkin"]["ppm"] = Value::Null;
        c["clkin"]["ppm_uncertainty"] = Value::Null;
        s["noise_floor_db"] = Value::Null;
        drop(c, "psd_db");
    });
    assert!(p.is_empty(), "{p:#?}");
    // An older node's capture (without the loss counts) lacking the floor: kept.
    let p = with(&|c, _, _| {
        drop(c, "overflow_lost_samples");
        drop(c, "noise_floor_db");
    });
    assert!(p.is_empty(), "{p:#?}");
}

/// A tone's check agrees with its record (docs/safety.md#time-on-air): PASS only
/// with every sample sent, nothing cutting it short and on air within its samples'
/// length plus the key-off grace; keyed past that it is FAIL, never PASS or
/// PARTIAL — however consistent the files a node wrote around the claim.
#[test]
fn a_tone_is_pass_only_when_its_record_says_it_was_whole_and_within_its_permit() {
    let tone = json!({"cancelled": false, "device": "driver=rxsim,serial=TX1",
        "frequency_hz": 433.92e6, "gain_db": 0.0, "on_air_s": 1.02, "past_permit_s": 0.0,
        "sample_rate_hz": 2e6, "samples_planned": 2_000_000, "samples_sent": 2_000_000,
        "started_at": "2026-01-01T10:05:01.000Z", "state_unknown_s": null,
        "stopped_at": "2026-01-01T10:05:02.020Z", "tone_offset_hz": 1e5});
    let with = |status: &str, edit: &dyn Fn(&mut Value)| {
        problems_after(|v| {
            let mut t = tone.clone();
            edit(&mut t);
            v["tx"] = t;
            v["risk_level"] = json!("RED");
            v["authorization"] = json!({"kind": "RF_TX", "at": "2026-01-01T10:05:00Z"});
            v["checks"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "step 9: tx_tone", "status": status, "detail": "d"}));
            let checks: Vec<Check> = serde_json::from_value(v["checks"].clone()).unwrap();
            v["status"] = json!(crate::result::model::overall_status(&checks).to_string());
        })
    };
    assert!(
        with("PASS", &|_| {}).is_empty(),
        "{:#?}",
        with("PASS", &|_| {})
    );
    // Right at the bound: 1 s of samples, on air 1.25 s.
    let p = with("PASS", &|t| t["on_air_s"] = json!(1.25));
    assert!(p.is_empty(), "{p:#?}");
    for (edit, needle) in [
        (
            &(|t: &mut Value| t["past_permit_s"] = json!(4.0)) as &dyn Fn(&mut Value),
            "tx.past_permit_s is 4 s",
        ),
        (
            &|t| t["on_air_s"] = json!(4.3),
            "tx.on_air_s 4.3 s is longer",
        ),
        (
            &|t| t["state_unknown_s"] = json!(1.5),
            "tx.state_unknown_s is 1.5 s",
        ),
        (
            &|t| t["sample_rate_hz"] = json!(0.0),
            "gives its 2000000 samples no length",
        ),
    ] {
        for status in ["PASS", "PARTIAL"] {
            let p = with(status, edit);
            assert_eq!(p.len(), 1, "{status} {needle}: {p:#?}");
            assert!(
                p[0].contains(&format!("step 9: tx_tone: {status} although"))
                    && p[0].contains(needle),
                "{p:#?}"
            );
        }
        assert!(with("FAIL", edit).is_empty(), "{needle}");
    }
    for (edit, needle) in [
        (
            &(|t: &mut Value| t["samples_sent"] = json!(1_900_000)) as &dyn Fn(&mut Value),
            "tx.samples_sent 1900000 of 2000000 planned",
        ),
        (&|t| t["cancelled"] = json!(true), "tx.cancelled is true"),
        // Deactivated while the driver still held the tone's last 50 ms.
        (
            &|t| t["on_air_s"] = json!(0.95),
            "tx.on_air_s 0.95 s is shorter than the 1.000 s its 2000000 samples take at 2000000 S/s",
        ),
        (
            &|t| t["keyed_off_by"] = json!("SIGTSTP"),
            "tx.keyed_off_by is \"SIGTSTP\"",
        ),
    ] {
        let p = with("PASS", edit);
        assert_eq!(p.len(), 1, "{needle}: {p:#?}");
        assert!(
            p[0].contains("PASS although") && p[0].contains(needle),
            "{p:#?}"
        );
        assert!(with("PARTIAL", edit).is_empty(), "{needle}");
    }
}

/// A transmission is recorded only under a RED task authorized with `AUTHORIZE RF
/// TX`, and a tone that went on air (PASS, PARTIAL) has its record: a result
/// saying otherwise — a node that keyed against its interlock, or a peer framing
/// one — does not validate.
#[test]
fn a_transmission_is_recorded_only_under_a_red_task_with_rf_tx_authorization() {
    let tone = json!({"cancelled": false, "device": "driver=rxsim,serial=TX1",
        "frequency_hz": 433.92e6, "gain_db": 0.0, "on_air_s": 1.02, "past_permit_s": 0.0,
        "sample_rate_hz": 2e6, "samples_planned": 2_000_000, "samples_sent": 2_000_000,
        "started_at": "2026-01-01T10:05:01.000Z", "state_unknown_s": null,
        "stopped_at": "2026-01-01T10:05:02.020Z", "tone_offset_hz": 1e5});
    let with = |tx: Value, risk: &str, auth: Value, status: &str| {
        problems_after(|v| {
            v["tx"] = tx.clone();
            v["risk_level"] = json!(risk);
            v["authorization"] = auth.clone();
            v["checks"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "step 9: tx_tone", "status": status, "detail": "d"}));
            let checks: Vec<Check> = serde_json::from_value(v["checks"].clone()).unwrap();
            v["status"] = json!(crate::result::model::overall_status(&checks).to_string());
        })
    };
    let rf = json!({"kind": "RF_TX", "at": "2026-01-01T10:05:00Z"});
    let p = with(tone.clone(), "RED", rf.clone(), "PASS");
    assert!(p.is_empty(), "{p:#?}");
    let p = with(tone.clone(), "YELLOW", rf.clone(), "PASS");
    assert_eq!(
        p,
        ["tx: a transmission is recorded under a task whose risk level is YELLOW: only a RED task transmits (docs/safety.md)"]
    );
    let p = with(tone.clone(), "RED", Value::Null, "PASS");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].contains("without an RF_TX authorization (authorization is null)"),
        "{p:#?}"
    );
    let other = json!({"kind": "RED_OTHER", "at": "2026-01-01T10:05:00Z"});
    let p = with(tone.clone(), "RED", other, "FAIL");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("(authorization.kind is RED_OTHER)"), "{p:#?}");
    // A tone said to have gone on air, with no record of it.
    for status in ["PASS", "PARTIAL"] {
        let p = with(Value::Null, "RED", rf.clone(), status);
        assert_eq!(
            p,
            [format!("step 9: tx_tone: {status} but `tx` is null: a tone that went on air has its record")]
        );
    }
    // Never keyed (refused, not run, failed before keying): no record, nothing to say.
    for status in ["BLOCKED", "NOT RUN", "FAIL"] {
        let p = with(Value::Null, "RED", rf.clone(), status);
        assert!(p.is_empty(), "{status}: {p:#?}");
    }
}
