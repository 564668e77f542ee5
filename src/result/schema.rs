//! `rxnode schema plan|result|policy|task`: JSON Schemas (draft 2020-12) for what
//! an orchestrator writes and reads (docs/protocol.md#6-the-main-pcs-side).
//!
//! The schemas live in `schemas/*.schema.json` and are embedded here. They are
//! *tested against* the types the parsers and the validator use: the unit tests
//! below tie every `interlock::plan::Step` op, every result key and every policy
//! field to them, and `tests/mainpc.rs` checks with an independent validator
//! (Python `jsonschema`) that every valid fixture and every result rxnode writes
//! validates and every invalid plan fixture fails.
use crate::exit::Outcome;
use anyhow::Result;

/// The `rx-plan` block.
pub(crate) const PLAN: &str = include_str!("../../schemas/plan.schema.json");
/// `RX_RESULT.json`.
pub(crate) const RESULT: &str = include_str!("../../schemas/result.schema.json");
/// `.local/rxnode-policy.json`.
pub(crate) const POLICY: &str = include_str!("../../schemas/policy.schema.json");
/// A task as `{"header": {...}, "plan": {...} | null}`.
pub(crate) const TASK: &str = include_str!("../../schemas/task.schema.json");

/// The schema text for a kind.
pub(crate) fn text(kind: SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Plan => PLAN,
        SchemaKind::Result => RESULT,
        SchemaKind::Policy => POLICY,
        SchemaKind::Task => TASK,
    }
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
}

impl SchemaKind {
    /// Every kind, in the order they are listed.
    pub const ALL: [SchemaKind; 4] = [Self::Plan, Self::Result, Self::Policy, Self::Task];

    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Result => "result",
            Self::Policy => "policy",
            Self::Task => "task",
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
        let src = include_str!("../../interlock/src/plan/mod.rs");
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
        let keys: BTreeSet<&str> = crate::result::validate::TOP_KEYS
            .iter()
            .chain(crate::result::validate::OPTIONAL_TOP_KEYS)
            .copied()
            .collect();
        assert_eq!(
            props, keys,
            "schemas/result.schema.json vs results::TOP_KEYS and OPTIONAL_TOP_KEYS"
        );
        // Every key a serialized result carries is described, node included.
        let node = crate::result::model::NodeInfo {
            name: Some("LAB-RX2".into()),
            ..crate::result::model::NodeInfo::this_build()
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
