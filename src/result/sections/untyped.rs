//! The schemas of the result's parts that are not Rust types yet, written by
//! hand in `untyped.schema.json` beside this file: `sweeps`, `clkin_compares`
//! and `freq_cal` (kept as JSON values in [`crate::result::RxResult`]), and the
//! bounds a capture entry in another build's shape keeps. Each function is the
//! `schema_with` of one field; a part that becomes a type drops its function and
//! its entry in the file, and derives its schema instead.
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

/// `sweeps`: the `rx_sweep` results.
pub(crate) fn sweeps(_: &mut SchemaGenerator) -> Schema {
    part("sweeps")
}

/// `clkin_compares`: the `clkin_compare` results.
pub(crate) fn clkin_compares(_: &mut SchemaGenerator) -> Schema {
    part("clkin_compares")
}

/// `freq_cal`: the `freq_cal` results.
pub(crate) fn freq_cal(_: &mut SchemaGenerator) -> Schema {
    part("freq_cal")
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
        for name in ["sweeps", "clkin_compares", "freq_cal", "other_capture"] {
            assert!(all[name].is_object(), "{name}");
        }
    }
}
