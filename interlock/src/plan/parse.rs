//! Parsing the `rx-plan` block (found by `markdown`): read the JSON strictly,
//! then each step by its op's entry in the table (`ops/mod.rs`). Every problem
//! is listed, not only the first.
use super::ops::{self, Needs, Step};
use super::sanity::StepCheck;
use super::Plan;
use crate::error::Issue;
use crate::header::{truncate, TaskHeader};
use serde_json::{Map, Value};

/// One plan being parsed: the line of its fence, the header its steps are
/// checked against, and where the issues go.
struct PlanCtx<'a> {
    line: usize,
    header: Option<&'a TaskHeader>,
    issues: &'a mut Vec<Issue>,
}

impl PlanCtx<'_> {
    /// Record one problem on the fence line.
    fn push(&mut self, field: Option<&str>, message: impl Into<String>) {
        self.issues
            .push(Issue::new(Some(self.line), field, message));
    }

    /// The checks of step `n`, reporting on the fence line.
    fn step(&mut self, n: usize) -> StepCheck<'_> {
        StepCheck {
            line: self.line,
            n,
            issues: &mut *self.issues,
        }
    }
}

/// Parse one plan JSON text; `line` is the line of the block's fence.
///
/// Body/header conflicts are checked per step from its op name as soon as the
/// op is known, so a conflict is reported even when another field of the same
/// step (or another step) is invalid: every problem is listed, not only the first.
pub(crate) fn parse_plan(
    json: &str,
    line: usize,
    header: Option<&TaskHeader>,
    issues: &mut Vec<Issue>,
) -> Option<Plan> {
    let mut cx = PlanCtx {
        line,
        header,
        issues,
    };
    let obj = plan_object(json, &mut cx)?;
    let steps_v = steps_array(obj, &mut cx)?;
    let before = cx.issues.len();
    let mut steps = Vec::new();
    for (i, sv) in steps_v.into_iter().enumerate() {
        if let Some(s) = parse_step(sv, i + 1, &mut cx) {
            steps.push(s);
        }
    }
    if cx.issues.len() != before {
        return None;
    }
    Some(Plan { steps })
}

/// The plan text as one strict JSON object: no duplicate key, valid JSON, no
/// invisible format character, an object at the top.
fn plan_object(json: &str, cx: &mut PlanCtx<'_>) -> Option<Map<String, Value>> {
    if let Some(d) = crate::strict_json::find_duplicate_key(json) {
        cx.issues.push(Issue::new(
            Some(cx.line + d.line),
            Some(&truncate(&d.key, 80)),
            format!(
                "rx-plan: duplicate key {:?} in {} (a key may appear once)",
                truncate(&d.key, 80),
                d.path
            ),
        ));
        return None;
    }
    let value: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            cx.issues.push(Issue::new(
                Some(cx.line + e.line()),
                Some("rx-plan"),
                format!("rx-plan is not valid JSON: {e}"),
            ));
            return None;
        }
    };
    if let Some((path, u)) = crate::strict_json::find_format_char(&value) {
        cx.push(
            Some("rx-plan"),
            format!(
                "rx-plan: {path} holds {u} (bidi/zero-width/control characters could hide what runs)"
            ),
        );
        return None;
    }
    match value {
        Value::Object(o) => Some(o),
        _ => {
            cx.push(
                Some("rx-plan"),
                "rx-plan must be a JSON object {\"steps\": [...]}",
            );
            None
        }
    }
}

/// Most steps a plan may have.
pub(crate) const MAX_STEPS: usize = 64;

/// The object's `steps` array (at most [`MAX_STEPS`]); every other top-level key is unknown.
fn steps_array(mut obj: Map<String, Value>, cx: &mut PlanCtx<'_>) -> Option<Vec<Value>> {
    for k in obj.keys() {
        if k != "steps" {
            let shown = crate::strict_json::visible(&truncate(k, 80));
            let why = crate::strict_json::non_ascii_note(k)
                .map(|n| format!(" ({n}: keys are ASCII)"))
                .unwrap_or_default();
            cx.push(
                Some(&shown),
                format!("rx-plan: unknown field \"{shown}\"{why}"),
            );
        }
    }
    let steps_v = match obj.remove("steps") {
        Some(Value::Array(a)) => a,
        Some(_) => {
            cx.push(Some("steps"), "rx-plan: steps must be an array");
            return None;
        }
        None => {
            cx.push(Some("steps"), "rx-plan: missing field steps");
            return None;
        }
    };
    if steps_v.is_empty() {
        cx.push(Some("steps"), "rx-plan: steps is empty");
    }
    if steps_v.len() > MAX_STEPS {
        cx.push(
            Some("steps"),
            format!("rx-plan: {} steps; at most {MAX_STEPS}", steps_v.len()),
        );
        return None;
    }
    Some(steps_v)
}

/// Step `n`: its op, the op's conflicts with the header, then its fields.
fn parse_step(sv: Value, n: usize, cx: &mut PlanCtx<'_>) -> Option<Step> {
    let mut o = match sv {
        Value::Object(o) => o,
        _ => {
            cx.push(
                Some("steps"),
                format!("rx-plan step {n}: not a JSON object"),
            );
            return None;
        }
    };
    let op = match o.remove("op") {
        Some(Value::String(s)) => s,
        Some(_) => {
            cx.push(Some("op"), format!("rx-plan step {n}: op must be a string"));
            return None;
        }
        None => {
            cx.push(Some("op"), format!("rx-plan step {n}: missing field op"));
            return None;
        }
    };
    if let Some(h) = cx.header {
        op_conflicts(n, &op, h, cx);
    }
    step_fields(&op, o, &mut cx.step(n))
}

/// The fields of a step whose op is `op` (the op itself already taken out), by
/// the op's entry in the table.
fn step_fields(op: &str, rest: Map<String, Value>, chk: &mut StepCheck<'_>) -> Option<Step> {
    match ops::find(op) {
        Some(entry) => (entry.parse)(rest, chk),
        None => {
            let n = chk.n;
            chk.push(
                Some("op"),
                format!(
                    "rx-plan step {n}: unknown op {:?} (known: {})",
                    truncate(op, 40),
                    ops::known_list()
                ),
            );
            None
        }
    }
}

/// Body/header conflicts for one step, from what its op needs: steps the header
/// does not allow.
fn op_conflicts(n: usize, op: &str, header: &TaskHeader, cx: &mut PlanCtx<'_>) {
    let Some(entry) = ops::find(op) else {
        return;
    };
    if !header.hardware_access {
        cx.push(
            Some("HARDWARE_ACCESS"),
            format!("rx-plan step {n} ({op}) touches hardware but HARDWARE_ACCESS = NO"),
        );
    }
    match entry.needs {
        Needs::Hardware => {}
        Needs::Receive if !header.rf_rx => cx.push(
            Some("RF_RX"),
            format!("rx-plan step {n} ({op}) receives but RF_RX = NO"),
        ),
        Needs::Transmit if !header.rf_tx => cx.push(
            Some("RF_TX"),
            format!("rx-plan step {n} ({op}) transmits but RF_TX = NO"),
        ),
        Needs::Receive | Needs::Transmit => {}
    }
}
