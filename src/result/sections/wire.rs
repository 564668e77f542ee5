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
    A: DeserializeOwned + Serialize + schemars::JsonSchema,
    B: DeserializeOwned + Serialize + schemars::JsonSchema,
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
/// (`.clkin: missing field `ppm``), where serde alone would read it as none — but
/// for a field the type reads with a default (`#[serde(default)]`: one added after
/// nodes had written the record without it). An entry in another build's shape is
/// read by its keys instead, never through here.
pub(crate) fn read_as<T>(v: &Value) -> Result<T, String>
where
    T: DeserializeOwned + Serialize + schemars::JsonSchema,
{
    let t = read_lenient::<T>(v)?;
    // What the type writes back names every field it has: one written `null` but
    // absent from the entry was left out, not left empty.
    let written = serde_json::to_value(&t).map_err(|e| format!(": {e}"))?;
    let reading = schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let reading = serde_json::to_value(reading).unwrap_or(Value::Null);
    let at = Place {
        root: &reading,
        schema: Some(&reading),
        path: String::new(),
    };
    match left_out(v, &written, &at) {
        Some(missing) => Err(missing),
        None => Ok(t),
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

/// Where [`left_out`] is: the reading schema's root (for `$ref`s), the schema of the
/// value there (when known) and its path in the entry.
struct Place<'a> {
    root: &'a Value,
    schema: Option<&'a Value>,
    path: String,
}

impl<'a> Place<'a> {
    /// The object or array schema behind `$ref`s and an `Option`'s `anyOf`.
    fn shape(&self) -> Option<&'a Value> {
        let mut s = self.schema?;
        for _ in 0..8 {
            if let Some(r) = s.get("$ref").and_then(Value::as_str) {
                s = self.root.pointer(r.strip_prefix('#')?)?;
            } else if let Some(Value::Array(alts)) = s.get("anyOf").or_else(|| s.get("oneOf")) {
                s = alts
                    .iter()
                    .find(|a| a.get("type").and_then(Value::as_str) != Some("null"))?;
            } else {
                return Some(s);
            }
        }
        None
    }

    fn field(&self, key: &str) -> Place<'a> {
        Place {
            root: self.root,
            schema: self
                .shape()
                .and_then(|s| s.get("properties"))
                .and_then(|p| p.get(key)),
            path: format!("{}.{key}", self.path),
        }
    }

    fn item(&self, i: usize) -> Place<'a> {
        Place {
            root: self.root,
            schema: self.shape().and_then(|s| s.get("items")),
            path: format!("{}[{i}]", self.path),
        }
    }

    /// Whether the type reads `key` here with a default when it is absent.
    fn defaults(&self, key: &str) -> bool {
        self.field(key)
            .schema
            .is_some_and(|s| s.get("default").is_some())
    }
}

/// The first field `written` has as `null` that `read` lacks (and the type does not
/// read with a default), as a refusal naming its path (`.clkin: missing field `ppm``).
fn left_out(read: &Value, written: &Value, at: &Place<'_>) -> Option<String> {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => w.iter().find_map(|(k, wv)| match r.get(k) {
            None if wv.is_null() && !at.defaults(k) => {
                Some(format!("{}: missing field `{k}`", at.path))
            }
            None => None,
            Some(rv) => left_out(rv, wv, &at.field(k)),
        }),
        (Value::Array(r), Value::Array(w)) => r
            .iter()
            .zip(w)
            .enumerate()
            .find_map(|(i, (rv, wv))| left_out(rv, wv, &at.item(i))),
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
