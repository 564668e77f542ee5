//! `rxnode schema KIND`: JSON Schemas (draft 2020-12) for what an orchestrator
//! writes and reads (docs/protocol.md#6-the-main-pcs-side) and for the node's own
//! files.
//!
//! The schemas live in `schemas/*.schema.json`. Every one of them — the plan, the
//! task, the policy, `RX_RESULT.json`, `LOG_META.json`, `STATUS.json`, the calibration file, the
//! health file and the `rxnode` extension of a recording's `.sigmf-meta` — is generated from the Rust types that write and read them
//! ([`generated`]; the plan's and the task's from the interlock's op table); a test
//! fails when a checked-in file differs from its type's, and
//! `RXNODE_WRITE_SCHEMAS=1 cargo test --lib checked_in_schemas` rewrites them
//! (docs/architecture.md#how-to-add-an-output-field). The integration tests check
//! with an independent validator (Python `jsonschema`) that every valid fixture and
//! every result rxnode writes validates and every invalid plan fixture fails.
use crate::exit::Outcome;
use anyhow::Result;

/// The schema text for a kind: the one generated from the kind's type (which the
/// checked-in file equals).
pub(crate) fn text(kind: SchemaKind) -> std::borrow::Cow<'static, str> {
    match kind {
        SchemaKind::Result
        | SchemaKind::Plan
        | SchemaKind::Policy
        | SchemaKind::Task
        | SchemaKind::Status
        | SchemaKind::LogMeta
        | SchemaKind::Calibration
        | SchemaKind::Health
        | SchemaKind::SigmfRxnode => generated(kind)
            .map(|s| file_text(&s))
            .unwrap_or_default()
            .into(),
    }
}

/// The schema generated from the Rust type of a kind's file.
pub(crate) fn generated(kind: SchemaKind) -> Option<serde_json::Value> {
    match kind {
        SchemaKind::Result => Some(result_schema()),
        SchemaKind::Plan => Some(rxnode_interlock::plan_schema()),
        SchemaKind::Policy => Some(rxnode_interlock::policy_schema()),
        SchemaKind::Task => Some(rxnode_interlock::task_schema()),
        SchemaKind::Status => Some(crate::heartbeat::snapshot::schema()),
        SchemaKind::LogMeta => Some(crate::git::publish::log_meta::schema()),
        SchemaKind::Calibration => Some(crate::store::calibration::schema()),
        SchemaKind::Health => Some(crate::store::health::schema()),
        SchemaKind::SigmfRxnode => Some(sigmf_rxnode_schema()),
    }
}

/// The JSON Schema of `RX_RESULT.json`, from [`crate::result::RxResult`].
fn result_schema() -> serde_json::Value {
    let mut s = crate::result::written_schema::<crate::result::RxResult>(
        "rxnode RX_RESULT.json (schema_version 1)",
    );
    if let Some(o) = s.as_object_mut() {
        o.insert(
            "$id".into(),
            "https://rxnode.invalid/schemas/result.schema.json".into(),
        );
        o.insert(
            "description".into(),
            "What `rxnode run` writes and `rxnode validate-result` / `rxnode results verify` \
             check (docs/protocol.md#5-results). Rules across fields (status agrees with the \
             checks; PASS/FAIL/PARTIAL need both times; completed_at not before started_at; \
             RX_RESULT.md agrees) are checked by the validator."
                .into(),
        );
    }
    s
}

/// The JSON Schema of the `rxnode` SigMF extension, from the recording's types
/// ([`rxnode_dsp::sigmf_rxnode_schema`]), its `rxnode:clock` the `clock` block of a
/// result entry (docs/protocol.md#clock), from that block's type.
fn sigmf_rxnode_schema() -> serde_json::Value {
    let mut s = rxnode_dsp::sigmf_rxnode_schema();
    let mut clock = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<crate::store::calibration::ClockBlock>()
        .to_value();
    let Some(c) = clock.as_object_mut() else {
        return s;
    };
    c.remove("$schema");
    c.remove("title");
    let inner = c.remove("$defs");
    let Some(defs) = s.get_mut("$defs").and_then(|d| d.as_object_mut()) else {
        return s;
    };
    if let Some(serde_json::Value::Object(inner)) = inner {
        defs.extend(inner);
    }
    defs.insert("ClockBlock".into(), clock);
    if let Some(p) = defs
        .get_mut("RxnodeGlobal")
        .and_then(|g| g.pointer_mut("/properties/rxnode:clock"))
        .and_then(|p| p.as_object_mut())
    {
        p.insert("$ref".into(), "#/$defs/ClockBlock".into());
    }
    s
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
    /// `LOG_META.json` beside a published result.
    LogMeta,
    /// `.local/calibration.json`, the radios' frequency calibrations.
    Calibration,
    /// `.local/rxnode-health.json`, the radios' health.
    Health,
    /// The `rxnode:*` keys of a recording's `.sigmf-meta` (the `rxnode` SigMF extension).
    SigmfRxnode,
}

impl SchemaKind {
    /// Every kind, in the order they are listed.
    pub const ALL: [SchemaKind; 9] = [
        Self::Plan,
        Self::Result,
        Self::Policy,
        Self::Task,
        Self::Status,
        Self::LogMeta,
        Self::Calibration,
        Self::Health,
        Self::SigmfRxnode,
    ];

    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Result => "result",
            Self::Policy => "policy",
            Self::Task => "task",
            Self::Status => "status",
            Self::LogMeta => "log-meta",
            Self::Calibration => "calibration",
            Self::Health => "health",
            Self::SigmfRxnode => "sigmf-rxnode",
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
            Self::LogMeta => "`LOG_META.json` beside a published result",
            Self::Calibration => "`.local/calibration.json`, the radios' frequency calibrations",
            Self::Health => "`.local/rxnode-health.json`, the radios' health",
            Self::SigmfRxnode => {
                "The `rxnode:*` keys of a recording's `.sigmf-meta` (the `rxnode` SigMF extension)"
            }
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

    fn plan() -> Value {
        generated(SchemaKind::Plan).expect("the plan schema is generated")
    }

    fn schema_ops() -> BTreeSet<String> {
        plan()["$defs"]["step"]["properties"]["op"]["enum"]
            .as_array()
            .expect("op enum")
            .iter()
            .map(|v| v.as_str().expect("op name").to_owned())
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

    /// The ops the parser knows are the schema's, each with its step definition.
    #[test]
    fn every_op_the_parser_knows_is_in_the_plan_schema() {
        let ops = parser_known_ops();
        assert!(
            ops.contains("inventory") && ops.contains("tx_tone"),
            "{ops:?}"
        );
        assert_eq!(ops, schema_ops());
        for op in &ops {
            assert!(
                plan()["$defs"][format!("step_{op}")].is_object(),
                "no $defs/step_{op}"
            );
        }
        // docs/operator.md#sweeps-rxnode-sweep names rx_sweep's fields exactly.
        let sweep = &plan()["$defs"]["step_rx_sweep"]["properties"];
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
        assert_eq!(seen, 9, "every schema is generated from its type");
        assert!(
            stale.is_empty(),
            "{}\nregenerate with: RXNODE_WRITE_SCHEMAS=1 cargo test --lib checked_in_schemas",
            stale.join("\n")
        );
    }

    #[test]
    fn the_task_schema_carries_the_plan_schema_unchanged() {
        let task = generated(SchemaKind::Task).expect("the task schema is generated");
        assert_eq!(task["$defs"], plan()["$defs"]);
        let plan_in_task = &task["properties"]["plan"]["anyOf"][1];
        assert_eq!(plan_in_task["properties"], plan()["properties"]);
        assert_eq!(plan_in_task["required"], plan()["required"]);
    }

    #[test]
    fn the_result_schema_has_exactly_the_validators_keys() {
        let s = generated(SchemaKind::Result).expect("the result schema is generated");
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
                s["$defs"]["NodeInfo"]["properties"][k].is_object(),
                "node.{k}"
            );
        }
    }
}
