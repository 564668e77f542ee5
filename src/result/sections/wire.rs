//! Serde helpers shared by the sections: a nested type of another crate written
//! with sorted keys, and the choice between a step's two shapes.
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Serialize `v` with its keys sorted at every level (as a JSON value is), for a
/// type of another crate whose field order is not the section's.
pub(crate) fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::Error as _;
    serde_json::to_value(v)
        .map_err(S::Error::custom)?
        .serialize(s)
}

/// One of a step's two shapes, chosen by whether its object has `key`: a step that
/// measured (`A`) or the `{"step", "status", "detail"}` row of one that did not (`B`).
/// The error names the shape read.
pub(crate) fn one_of<'de, D, A, B>(d: D, key: &str, what: &str) -> Result<Result<A, B>, D::Error>
where
    D: Deserializer<'de>,
    A: DeserializeOwned,
    B: DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    if !v.is_object() {
        return Err(D::Error::custom(format!(
            "{what}: expected an object, got {}",
            kind(&v)
        )));
    }
    if v.get(key).is_some() {
        A::deserialize(v)
            .map(Ok)
            .map_err(|e| D::Error::custom(format!("{what}: {e}")))
    } else {
        B::deserialize(v)
            .map(Err)
            .map_err(|e| D::Error::custom(format!("{what} (a step that did not run): {e}")))
    }
}

/// Read one entry of a section as the validator does: the shape chosen by `key`,
/// and a refusal naming the field's path inside the entry, to follow the entry's
/// own name (`.clkin_compare.verdict: unknown variant …`, or `: missing field …`).
pub(crate) fn read_entry<A, B>(v: &Value, key: &str) -> Result<Result<A, B>, String>
where
    A: DeserializeOwned + Serialize,
    B: DeserializeOwned + Serialize,
{
    if !v.is_object() {
        return Err(format!(": expected an object, got {}", kind(v)));
    }
    if v.get(key).is_some() {
        read_as(v).map(Ok)
    } else {
        read_as(v).map(Err)
    }
}

/// Read `v`, an entry in this build's shape, as `T`, a refusal naming the field's
/// path inside it as [`read_entry`] does (`.iq_files[0].bytes: invalid type …`, or
/// `: missing field …`). This build writes every field of its records, `null` for
/// none, so an optional field left out is refused as any missing field is
/// (`.clkin: missing field `ppm``), where serde alone would read it as none; an
/// entry in another build's shape is read by its keys instead, never through here.
pub(crate) fn read_as<T: DeserializeOwned + Serialize>(v: &Value) -> Result<T, String> {
    let t = read_lenient::<T>(v)?;
    // What the type writes back names every field it has: one written `null` but
    // absent from the entry was left out, not left empty.
    match serde_json::to_value(&t) {
        Ok(written) => match left_out(v, &written, "") {
            Some(missing) => Err(missing),
            None => Ok(t),
        },
        Err(e) => Err(format!(": {e}")),
    }
}

/// Read `v` as `T` as serde does (an optional field left out reads as none), a
/// refusal naming the field's path as [`read_as`] does: for drawing what any build
/// wrote, not for judging this build's shape.
pub(crate) fn read_lenient<T: DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!(": {}", e.into_inner())
        } else {
            format!(".{path}: {}", e.into_inner())
        }
    })
}

/// The first field `written` has as `null` that `read` lacks, as a refusal naming
/// its path under `at` (`.clkin: missing field `ppm``).
fn left_out(read: &Value, written: &Value, at: &str) -> Option<String> {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => w.iter().find_map(|(k, wv)| match r.get(k) {
            None if wv.is_null() => Some(format!("{at}: missing field `{k}`")),
            None => None,
            Some(rv) => left_out(rv, wv, &format!("{at}.{k}")),
        }),
        (Value::Array(r), Value::Array(w)) => r
            .iter()
            .zip(w)
            .enumerate()
            .find_map(|(i, (rv, wv))| left_out(rv, wv, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// What a JSON value is, for a refusal.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
