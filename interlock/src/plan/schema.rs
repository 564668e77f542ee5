//! The JSON Schemas (draft 2020-12) of the `rx-plan` block, of a task and of the
//! node policy, generated from the types the parsers read and from the op table
//! (`ops/mod.rs`): a step's schema is its type's, its op and description the
//! table's, and the task's header/plan conflict rules come from what each op
//! needs. `rxnode schema KIND` prints them; `schemas/` holds them checked in.
use super::ops::{Needs, OPS};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Map, Value};

/// The generator every schema here is made with: draft 2020-12, `$defs`.
fn generator() -> SchemaGenerator {
    SchemaGenerator::new(SchemaSettings::draft2020_12())
}

/// The plan's `$defs`: `step`, `step_<op>` for each op, and the parts they share.
fn plan_defs(generator: &mut SchemaGenerator) -> Map<String, Value> {
    let mut defs = Map::new();
    for op in OPS {
        let mut step = (op.schema)(generator).to_value();
        if let Some(o) = step.as_object_mut() {
            o.remove("title");
            o.insert("description".into(), op.about.into());
            let mut props = Map::new();
            props.insert("op".into(), json!({ "const": op.name }));
            if let Some(Value::Object(p)) = o.remove("properties") {
                props.extend(p);
            }
            o.insert("properties".into(), Value::Object(props));
            let mut required = vec![Value::from("op")];
            if let Some(Value::Array(r)) = o.remove("required") {
                required.extend(r);
            }
            o.insert("required".into(), Value::Array(required));
        }
        defs.insert(format!("step_{}", op.name), step);
    }
    defs.insert(
        "step".into(),
        json!({
            "type": "object",
            "required": ["op"],
            "properties": {"op": {"enum": OPS.iter().map(|o| o.name).collect::<Vec<_>>()}},
            "oneOf": OPS
                .iter()
                .map(|o| json!({"$ref": format!("#/$defs/step_{}", o.name)}))
                .collect::<Vec<_>>(),
        }),
    );
    defs.extend(generator.take_definitions(true));
    defs
}

/// The plan object: its steps (1 to 64), nothing else.
fn plan_object() -> Value {
    json!({
        "type": "object",
        "required": ["steps"],
        "additionalProperties": false,
        "properties": {
            "steps": {
                "type": "array",
                "minItems": 1,
                "maxItems": super::parse::MAX_STEPS,
                "items": {"$ref": "#/$defs/step"}
            }
        }
    })
}

/// The schema of the JSON inside a task's `rx-plan` block.
pub fn plan_schema() -> Value {
    let mut s = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rxnode.invalid/schemas/plan.schema.json",
        "title": "rxnode rx-plan block",
        "description": "The JSON inside the one ```rx-plan fenced block of a task (docs/protocol.md). Checks a schema cannot express (header/plan conflicts: see task.schema via `rxnode schema task`; device ranges; node policy) are made by `rxnode validate` and at run time.",
    });
    if let (Some(o), Value::Object(p)) = (s.as_object_mut(), plan_object()) {
        o.extend(p);
        o.insert("$defs".into(), Value::Object(plan_defs(&mut generator())));
    }
    s
}

/// A rule of the task schema: with `field = NO` in the header, no step of the
/// plan has an op in `ops`.
fn conflict_rule(field: &str, ops: Vec<&str>) -> Value {
    json!({
        "if": {"properties": {"header": {
            "properties": {field: {"const": "NO"}},
            "required": [field]
        }}},
        "then": {"properties": {"plan": {"anyOf": [
            {"type": "null"},
            {"properties": {"steps": {"items": {"not": {
                "properties": {"op": {"enum": ops}},
                "required": ["op"]
            }}}}}
        ]}}}
    })
}

/// The schema of a task as `{"header": {...}, "plan": {...} | null}`, with the
/// header/plan conflict rules each op's needs make.
pub fn task_schema() -> Value {
    let names = |f: fn(Needs) -> bool| -> Vec<&str> {
        OPS.iter().filter(|o| f(o.needs)).map(|o| o.name).collect()
    };
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rxnode.invalid/schemas/task.schema.json",
        "title": "rxnode task: header and rx-plan as one JSON value",
        "description": "A task file's header (KEY = VALUE lines, here as a JSON object of strings) and its rx-plan (null for a manual task), with the header/plan conflict rules of docs/protocol.md. An orchestrator validates this before rendering the Markdown; `rxnode task new` writes the file.",
        "type": "object",
        "additionalProperties": false,
        "required": ["header", "plan"],
        "properties": {
            "header": crate::header::header_schema(),
            "plan": {"anyOf": [
                {"type": "null", "description": "no rx-plan block: a manual task"},
                plan_object()
            ]}
        },
        "allOf": [
            conflict_rule("RF_TX", names(|n| n == Needs::Transmit)),
            conflict_rule("RF_RX", names(|n| n == Needs::Receive)),
            conflict_rule("HARDWARE_ACCESS", names(|_| true)),
        ],
        "$defs": plan_defs(&mut generator()),
    })
}

/// The schema of the node policy, `.local/rxnode-policy.json`: its type's.
pub fn policy_schema() -> Value {
    let mut generator = generator();
    let mut body = generator.root_schema_for::<crate::Policy>().to_value();
    let mut s = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rxnode.invalid/schemas/policy.schema.json",
        "title": "rxnode node policy .local/rxnode-policy.json",
        "description": "Node-local limits, never from a task (docs/safety.md). No tx (or no range) means TX is refused whatever a task says.",
    });
    if let (Some(o), Some(b)) = (s.as_object_mut(), body.as_object_mut()) {
        b.remove("$schema");
        b.remove("title");
        b.remove("description");
        o.extend(std::mem::take(b));
    }
    s
}
