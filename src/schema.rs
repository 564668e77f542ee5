//! `rxnode schema KIND`: JSON Schemas (draft 2020-12) for what an orchestrator
//! writes and reads (docs/protocol.md#6-the-main-pcs-side) and for the node's own
//! files.
//!
//! The schemas live in `schemas/*.schema.json` and are embedded here. Those of
//! `STATUS.json`, the calibration file and the health file are generated from
//! the Rust types that write and read them ([`generated`]); a test fails when a
//! checked-in file differs from its type's, and
//! `RXNODE_WRITE_SCHEMAS=1 cargo test --lib checked_in_schemas` rewrites them
//! (docs/architecture.md#how-to-add-an-output-field). The others are written by
//! hand and *tested against* the types the parsers and the validator use: the unit tests
//! below tie every `interlock::plan::Step` op, every result key and every policy
//! field to them, and `tests/mainpc.rs` checks with an independent validator
//! (Python `jsonschema`) that every valid fixture and every result rxnode writes
//! validates and every invalid plan fixture fails.
use crate::exit::Outcome;
use anyhow::Result;

/// The `rx-plan` block.
pub(crate) const PLAN: &str = include_str!("../schemas/plan.schema.json");
/// `RX_RESULT.json`.
pub(crate) const RESULT: &str = include_str!("../schemas/result.schema.json");
/// `.local/rxnode-policy.json`.
pub(crate) const POLICY: &str = include_str!("../schemas/policy.schema.json");
/// A task as `{"header": {...}, "plan": {...} | null}`.
pub(crate) const TASK: &str = include_str!("../schemas/task.schema.json");

/// The schema text for a kind: the embedded file, or the one generated from the
/// kind's type (which the checked-in file equals).
pub(crate) fn text(kind: SchemaKind) -> std::borrow::Cow<'static, str> {
    match kind {
        SchemaKind::Plan => PLAN.into(),
        SchemaKind::Result => RESULT.into(),
        SchemaKind::Policy => POLICY.into(),
        SchemaKind::Task => TASK.into(),
        SchemaKind::Status | SchemaKind::Calibration | SchemaKind::Health => generated(kind)
            .map(|s| file_text(&s))
            .unwrap_or_default()
            .into(),
    }
}

/// The schema generated from the Rust type of a kind's file, `None` for the
/// kinds written by hand.
pub(crate) fn generated(kind: SchemaKind) -> Option<serde_json::Value> {
    match kind {
        SchemaKind::Plan | SchemaKind::Result | SchemaKind::Policy | SchemaKind::Task => None,
        SchemaKind::Status => Some(crate::heartbeat::snapshot::schema()),
        SchemaKind::Calibration => Some(crate::store::calibration::schema()),
        SchemaKind::Health => Some(crate::store::health::schema()),
    }
}

/// A generated schema as its checked-in file holds it: pretty JSON and a newline.
pub(crate) fn file_text(schema: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The schemas `rxnode schema` prints (declared here once: the command line takes
/// its names and lines from [`SchemaKind::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaKind {
    /// The `rx-plan` JSON block.
    Plan,
    /// `RX_RESULT.json`.
    Result,
    /// `.local/rxnode-policy.json`.
    Policy,
    /// A task as `{"header": {...}, "plan": {...}}`, with the header/plan conflict rules.
    Task,
    /// `STATUS.json` on a node's status branch.
    Status,
    /// `.local/calibration.json`, the radios' frequency calibrations.
    Calibration,
    /// `.local/rxnode-health.json`, the radios' health.
    Health,
}

impl SchemaKind {
    /// Every kind, in the order they are listed.
    pub const ALL: [SchemaKind; 7] = [
        Self::Plan,
        Self::Result,
        Self::Policy,
        Self::Task,
        Self::Status,
        Self::Calibration,
        Self::Health,
    ];

    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Result => "result",
            Self::Policy => "policy",
            Self::Task => "task",
            Self::Status => "status",
            Self::Calibration => "calibration",
            Self::Health => "health",
        }
    }

    /// What the schema describes, in one line.
    pub fn about(self) -> &'static str {
        match self {
            Self::Plan => "The `rx-plan` JSON block",
            Self::Result => "`RX_RESULT.json`",
            Self::Policy => "`.local/rxnode-policy.json`",
            Self::Task => {
                "A task as `{\"header\": {...}, \"plan\": {...}}`, with the header/plan conflict rules"
            }
            Self::Status => "`STATUS.json` on a node's status branch",
            Self::Calibration => "`.local/calibration.json`, the radios' frequency calibrations",
            Self::Health => "`.local/rxnode-health.json`, the radios' health",
        }
    }

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<SchemaKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The command: print the schema (it is JSON whether or not `--json` is given).
pub fn cmd_schema(kind: SchemaKind) -> Result<Outcome> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text(kind).as_bytes())?;
    out.flush()?;
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeSet;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).expect("an embedded schema is JSON")
    }

    fn schema_ops() -> BTreeSet<String> {
        parse(PLAN)["$defs"]["step"]["properties"]["op"]["enum"]
            .as_array()
            .expect("op enum")
            .iter()
            .map(|v| v.as_str().expect("op name").to_owned())
            .collect()
    }

    /// The op names `interlock::plan::Step::op` returns, read from its source
    /// (the match arms `Step::X… => "name"`), so a new variant cannot be missed.
    fn step_ops_from_source() -> BTreeSet<String> {
        let src = include_str!("../interlock/src/plan/mod.rs");
        let start = src.find("pub fn op(&self)").expect("Step::op exists");
        let body = &src[start..];
        let end = body.find("\n    }\n").expect("end of Step::op");
        body[..end]
            .lines()
            .filter(|l| l.trim_start().starts_with("Step::"))
            .filter_map(|l| l.split('"').nth(1).map(str::to_owned))
            .collect()
    }

    /// The ops the parser names when it refuses an unknown one.
    fn parser_known_ops() -> BTreeSet<String> {
        let head = "0123456789abcdef0123456789abcdef01234567";
        let text = format!(
            "TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = {head}\n\
             REQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\n\
             ALLOW_PUSH = NO\n\n```rx-plan\n{{\"steps\": [{{\"op\": \"no_such_op\"}}]}}\n```\n"
        );
        let issues =
            crate::validate::check(text.as_bytes(), "video-development").expect_err("unknown op");
        let msg = issues
            .iter()
            .map(|i| i.message.clone())
            .find(|m| m.contains("known:"))
            .expect("the refusal lists the known ops");
        let list = msg.split("known:").nth(1).expect("list");
        list.trim_end_matches(')')
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    }

    #[test]
    fn every_step_op_of_the_interlock_is_in_the_plan_schema() {
        let ops = step_ops_from_source();
        assert!(
            ops.contains("inventory") && ops.contains("tx_tone"),
            "{ops:?}"
        );
        let schema = schema_ops();
        for op in ops.iter().chain(parser_known_ops().iter()) {
            assert!(
                schema.contains(op),
                "op {op} of the parser is missing from schemas/plan.schema.json"
            );
            assert!(
                parse(PLAN)["$defs"][format!("step_{op}")].is_object(),
                "no $defs/step_{op}"
            );
        }
        // docs/operator.md#sweeps-rxnode-sweep names rx_sweep's fields exactly.
        let sweep = &parse(PLAN)["$defs"]["step_rx_sweep"]["properties"];
        for f in rxnode_interlock::RX_SWEEP_FIELDS {
            assert!(sweep[f].is_object(), "rx_sweep.{f}");
        }
    }

    /// The first line where two texts differ, for a readable failure.
    fn first_difference(have: &str, want: &str) -> String {
        let (mut h, mut w) = (have.lines(), want.lines());
        for n in 1.. {
            match (h.next(), w.next()) {
                (None, None) => break,
                (a, b) if a == b => continue,
                (a, b) => {
                    return format!(
                        "line {n}:\n- checked in: {}\n+ generated:  {}",
                        a.unwrap_or("(end of file)"),
                        b.unwrap_or("(end of file)")
                    )
                }
            }
        }
        "the texts differ in line endings only".into()
    }

    /// Every generated schema is the checked-in file, byte for byte; with
    /// `RXNODE_WRITE_SCHEMAS=1` the files are rewritten from the types first.
    #[test]
    fn checked_in_schemas_are_the_ones_generated_from_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let write = std::env::var_os("RXNODE_WRITE_SCHEMAS").is_some_and(|v| v == "1");
        let mut stale = Vec::new();
        let mut seen = 0;
        for kind in SchemaKind::ALL {
            let Some(schema) = generated(kind) else {
                continue;
            };
            seen += 1;
            let want = file_text(&schema);
            let file = dir.join(format!("{}.schema.json", kind.name()));
            if write {
                std::fs::write(&file, &want).expect("write the schema file");
                continue;
            }
            let have = std::fs::read_to_string(&file).unwrap_or_default();
            if have != want {
                stale.push(format!(
                    "schemas/{}.schema.json differs from the schema of its type, {}",
                    kind.name(),
                    first_difference(&have, &want)
                ));
            }
        }
        assert_eq!(seen, 3, "status, calibration and health are generated");
        assert!(
            stale.is_empty(),
            "{}\nregenerate with: RXNODE_WRITE_SCHEMAS=1 cargo test --lib checked_in_schemas",
            stale.join("\n")
        );
    }

    /// Every object of a schema by its path: its property names, its required
    /// ones and whether it refuses others (`Option`'s `anyOf […, null]` and
    /// `type: [x, "null"]` are looked through).
    fn objects(
        v: &Value,
        path: &str,
        out: &mut std::collections::BTreeMap<String, (Vec<String>, Vec<String>, bool)>,
    ) {
        for alt in ["anyOf", "oneOf"] {
            for b in v[alt].as_array().into_iter().flatten() {
                objects(b, path, out);
            }
        }
        if let Some(props) = v["properties"].as_object() {
            let mut required: Vec<String> = v["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_owned))
                .collect();
            required.sort();
            out.insert(
                path.to_owned(),
                (
                    props.keys().cloned().collect(),
                    required,
                    v["additionalProperties"] == Value::Bool(false),
                ),
            );
            for (k, p) in props {
                objects(p, &format!("{path}.{k}"), out);
            }
        }
        if v["items"].is_object() {
            objects(&v["items"], &format!("{path}[]"), out);
        }
    }

    /// The hand-written `pictures` part of the result schema has the objects,
    /// fields, required fields and closed objects of `pictures::Pictures`.
    #[test]
    fn the_pictures_schema_has_the_fields_of_its_type() {
        let generated = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator()
            .into_root_schema_for::<crate::result::pictures::Pictures>()
            .to_value();
        let (mut want, mut have) = (Default::default(), Default::default());
        objects(&generated, "pictures", &mut want);
        objects(
            &parse(RESULT)["properties"]["pictures"],
            "pictures",
            &mut have,
        );
        assert_eq!(
            have, want,
            "schemas/result.schema.json's pictures against the type"
        );
    }

    #[test]
    fn the_task_schema_carries_the_plan_schema_unchanged() {
        assert_eq!(parse(TASK)["$defs"], parse(PLAN)["$defs"]);
        let plan_in_task = &parse(TASK)["properties"]["plan"]["anyOf"][1];
        assert_eq!(plan_in_task["properties"], parse(PLAN)["properties"]);
        assert_eq!(plan_in_task["required"], parse(PLAN)["required"]);
    }

    #[test]
    fn the_result_schema_has_exactly_the_validators_keys() {
        let s = parse(RESULT);
        let props: BTreeSet<&str> = s["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        let keys: BTreeSet<&str> = crate::result::TOP_KEYS
            .iter()
            .chain(crate::result::OPTIONAL_TOP_KEYS)
            .copied()
            .collect();
        assert_eq!(
            props, keys,
            "schemas/result.schema.json vs results::TOP_KEYS and OPTIONAL_TOP_KEYS"
        );
        // Every key a serialized result carries is described, node included.
        let node = crate::result::NodeInfo {
            name: Some("LAB-RX2".into()),
            ..crate::result::NodeInfo::this_build()
        };
        let v = serde_json::to_value(&node).expect("node");
        for k in v.as_object().expect("object").keys() {
            assert!(
                s["properties"]["node"]["properties"][k].is_object(),
                "node.{k}"
            );
        }
    }

    #[test]
    fn the_policy_schema_describes_every_policy_field() {
        let full = rxnode_interlock::Policy::from_json(
            r#"{"rx": {"max_duration_s": 5, "max_sample_rate_hz": 2e6, "max_gain_db": 30,
                 "max_iq_bytes": 1000},
                "tx": {"allowed_ranges_hz": [[433.05e6, 434.79e6]], "max_gain_db": 10,
                 "max_duration_s": 2},
                "health": {"self_test_every_s": 60, "radios": ["driver=rxsim"],
                 "clkin": {"driver=rxsim": {"tone_hz": 100.1e6, "tolerance_ppm": 2}}},
                "status": {"publish_every_s": 300},
                "tasks": {"require_signature": "red"}}"#,
        )
        .expect("a valid policy");
        let v = serde_json::to_value(&full).expect("policy");
        let s = parse(POLICY);
        for part in ["rx", "tx", "health", "status", "tasks"] {
            let props = &s["properties"][part]["anyOf"][0]["properties"];
            for k in v[part].as_object().expect("object").keys() {
                assert!(
                    props[k].is_object(),
                    "policy {part}.{k} missing from the schema"
                );
            }
            for k in props.as_object().expect("props").keys() {
                assert!(
                    v[part].get(k).is_some(),
                    "schema {part}.{k} is not a policy field"
                );
            }
        }
    }
}
