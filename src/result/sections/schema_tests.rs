//! The step sections against real entries (`fixtures/sections/*.json`, written by
//! `rxnode run`, `sweep`, `clkin compare`, `clkin calibrate` and `analyze`): each
//! reads as its type and is written back to the same bytes, and the schema
//! generated from the type accepts every entry the hand-written result schema of
//! schema_version 1 accepted and refuses what it refused, by the
//! independent validator the integration tests use (Python `jsonschema`).
use super::compare::CompareEntry;
use super::freq_cal::FreqCalEntry;
use super::sweep::SweepEntry;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Write as _;
use std::path::Path;

/// The schema generated from `T`, as `rxnode schema` would print it.
fn generated<T: schemars::JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The hand-written schema of one entry of `section`, as the result schema was
/// written before it was generated from the types
/// (`fixtures/sections/result-v1-hand.schema.json`): the generated one must not
/// be looser.
fn hand(section: &str) -> Value {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sections/result-v1-hand.schema.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let s: Value = serde_json::from_str(&text).expect("hand result schema");
    let mut items = s["properties"][section]["items"].clone();
    if let Some(o) = items.as_object_mut() {
        o.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
    }
    items
}

/// The real entries of `section`.
fn fixture(section: &str) -> Vec<Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/sections/{section}.json"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Each entry reads as `T` and is written back to the bytes the untyped section
/// gave (field order, nulls, absent fields, numbers).
fn round_trips<T: Serialize + DeserializeOwned>(section: &str, entries: &[Value]) {
    for (i, e) in entries.iter().enumerate() {
        let typed: T = serde_json::from_value(e.clone())
            .unwrap_or_else(|err| panic!("{section}[{i}] does not read as its type: {err}"));
        let want = serde_json::to_string_pretty(e).expect("value");
        let got = serde_json::to_string_pretty(&typed).expect("typed");
        assert_eq!(got, want, "{section}[{i}] written back differs");
    }
}

/// Verdicts of the independent validator: `(case, valid)` for each instance under
/// the hand schema and the generated one.
fn verdicts(hand: &Value, gen: &Value, cases: &[Value]) -> Vec<(bool, bool, Vec<String>)> {
    let mut named = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        named.push(json!({"name": format!("hand {i}"), "schema": "hand", "instance": c}));
        named.push(json!({"name": format!("gen {i}"), "schema": "gen", "instance": c}));
    }
    let req = json!({"schemas": {"hand": hand, "gen": gen}, "cases": named});
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/schema_check.py");
    let python = std::env::var("RXNODE_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = std::process::Command::new(&python)
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{python} must run the schema checks (scripts/setup.sh): {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(req.to_string().as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("validator");
    assert!(
        out.status.success(),
        "the independent validator failed (pip install jsonschema): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).expect("verdicts");
    v.chunks(2)
        .map(|p| {
            let errs = p[1]["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect();
            (p[0]["valid"] == true, p[1]["valid"] == true, errs)
        })
        .collect()
}

/// The generated schema accepts every real entry (those of a run, which the hand
/// schema accepts, and those the commands print, which have no step), and refuses
/// each broken one the hand schema refuses.
fn same_verdicts<T: schemars::JsonSchema>(section: &str, good: &[Value], bad: &[Value]) {
    let (hand, gen) = (hand(section), generated::<T>());
    let mut by_hand = 0;
    for (i, (h, g, errs)) in verdicts(&hand, &gen, good).into_iter().enumerate() {
        by_hand += usize::from(h);
        assert!(
            g,
            "{section}[{i}]: the generated schema refuses a real entry: {errs:?}"
        );
        if good[i].get("step").and_then(Value::as_u64).unwrap_or(0) > 0 {
            assert!(h, "{section}[{i}]: the hand schema refuses a run's entry");
        }
    }
    assert!(by_hand >= 2, "{section}: only {by_hand} entries of a run");
    for (i, (h, g, _)) in verdicts(&hand, &gen, bad).into_iter().enumerate() {
        assert!(!h, "{section} broken case {i}: the hand schema accepts it");
        assert!(
            !g,
            "{section} broken case {i}: the generated schema accepts it"
        );
    }
}

/// `entries[i]` with `f` applied.
fn broken(entries: &[Value], i: usize, f: impl Fn(&mut Value)) -> Value {
    let mut e = entries[i].clone();
    f(&mut e);
    e
}

#[test]
fn sweep_entries_are_their_type_and_schema() {
    let good = fixture("sweeps");
    assert!(good.len() >= 5, "{}", good.len());
    round_trips::<SweepEntry>("sweeps", &good);
    let row = good
        .iter()
        .position(|e| e.get("detail").is_some())
        .expect("a row");
    let bad = [
        broken(&good, 0, |e| e["status"] = json!("GOOD")),
        json!("not an object"),
    ];
    assert!(serde_json::from_value::<SweepEntry>(good[row].clone()).is_ok());
    same_verdicts::<SweepEntry>("sweeps", &good, &bad[1..]);
    // The typed reader refuses what the hand schema lets through as "an object".
    assert!(serde_json::from_value::<SweepEntry>(bad[0].clone()).is_err());
}

#[test]
fn compare_entries_are_their_type_and_schema() {
    let good = fixture("clkin_compares");
    assert!(good.len() >= 4, "{}", good.len());
    round_trips::<CompareEntry>("clkin_compares", &good);
    let bad = [
        broken(&good, 0, |e| e["clkin_compare"]["verdict"] = json!("MAYBE")),
        broken(&good, 0, |e| e["status"] = json!("GOOD")),
        broken(&good, 0, |e| e["master"]["role"] = json!("BOSS")),
        broken(&good, 0, |e| e["master"]["samples_received"] = json!(-1)),
        broken(&good, 1, |e| e["step"] = json!(0)),
        broken(&good, 1, |e| {
            if let Some(o) = e.as_object_mut() {
                o.remove("detail");
            }
        }),
    ];
    same_verdicts::<CompareEntry>("clkin_compares", &good, &bad);
}

#[test]
fn freq_cal_entries_are_their_type_and_schema() {
    let good = fixture("freq_cal");
    assert!(good.len() >= 8, "{}", good.len());
    round_trips::<FreqCalEntry>("freq_cal", &good);
    let lte = good
        .iter()
        .position(|e| e.get("pci").is_some())
        .expect("an LTE entry with its PCI");
    let bad = [
        broken(&good, lte, |e| e["pci"] = json!(504)),
        broken(&good, lte, |e| e["duplex"] = json!("half")),
        broken(&good, 0, |e| e["confidence"] = json!(1.5)),
        broken(&good, 0, |e| e["uncertainty_ppm"] = json!(-0.1)),
        broken(&good, 0, |e| e["method"] = json!("umts")),
        broken(&good, 0, |e| e["step"] = json!(0)),
        broken(&good, 0, |e| e["detections"][0] = json!({"time_s": 0.1})),
    ];
    same_verdicts::<FreqCalEntry>("freq_cal", &good, &bad);
}

/// A number that is not finite is written as `null`, as the untyped sections wrote
/// it, and the entry still reads back (the number as NaN).
#[test]
fn non_finite_numbers_are_written_as_null_and_read_back() {
    let mut fc: FreqCalEntry =
        serde_json::from_value(fixture("freq_cal")[0].clone()).expect("freq_cal");
    if let FreqCalEntry::Measured(m) = &mut fc {
        m.detections.as_mut().expect("detections")[0].snr_db = f64::NEG_INFINITY;
    }
    let text = serde_json::to_string(&fc).expect("written");
    assert!(text.contains(r#""snr_db":null"#), "{text}");
    let back: FreqCalEntry = serde_json::from_str(&text).expect("read back");
    let d = &back
        .record()
        .and_then(|m| m.detections.clone())
        .expect("detections")[0];
    assert!(d.snr_db.is_nan() && d.ppm.is_finite());
    let mut sw: SweepEntry = serde_json::from_value(fixture("sweeps")[0].clone()).expect("sweep");
    if let SweepEntry::Swept(s) = &mut sw {
        s.peaks[0].power_db = f64::NAN;
    }
    let text = serde_json::to_string(&sw).expect("written");
    assert!(text.contains(r#""power_db":null"#), "{text}");
    let back: SweepEntry = serde_json::from_str(&text).expect("read back");
    match back {
        SweepEntry::Swept(s) => assert!(s.peaks[0].power_db.is_nan()),
        SweepEntry::NotSwept(_) => panic!("a sweep that ran reads back as one"),
    }
}
