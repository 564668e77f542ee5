//! The schemas of the result's parts that are not Rust types, written by hand in
//! `untyped.schema.json` beside this file: the bounds a capture entry in another
//! build's shape keeps, and what an inventory or a `tx` record in another build's
//! shape may be. Each function is the `schema_with` of one field.
use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

/// The hand-written sub-schemas, by name.
const TEXT: &str = include_str!("untyped.schema.json");

/// The sub-schema `name` of the file (an empty schema, which admits anything,
/// if the file lacks it: a test keeps every name present).
fn part(name: &str) -> Schema {
    let all: Value = serde_json::from_str(TEXT).unwrap_or(Value::Null);
    all.get(name)
        .cloned()
        .and_then(|v| Schema::try_from(v).ok())
        .unwrap_or_default()
}

/// A capture entry in another build's shape.
pub(crate) fn other_capture(_: &mut SchemaGenerator) -> Schema {
    part("other_capture")
}

/// An inventory in another build's shape: anything.
pub(crate) fn any_inventory(_: &mut SchemaGenerator) -> Schema {
    Schema::default()
}

/// A `tx` record in another build's shape: an object.
pub(crate) fn any_object(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"type": "object"})
}

#[cfg(test)]
mod tests {
    /// Every part a function names is in the file.
    #[test]
    fn every_hand_written_part_is_in_the_file() {
        let all: serde_json::Value = serde_json::from_str(super::TEXT).expect("JSON");
        assert!(all["other_capture"].is_object(), "other_capture");
    }
}
