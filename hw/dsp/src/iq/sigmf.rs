//! The SigMF `.sigmf-meta` document as one type: what the writer serializes and the
//! reader deserializes. The `core:*` keys rxnode writes or reads, and its own
//! `rxnode` extension (docs/operator.md#what-a-sigmf-recording-says).
//!
//! Other tools' files carry keys rxnode does not know and values of other types:
//! every field is [`Lenient`], keys it does not know are kept in `other`, so reading
//! a file never fails on a key the reader does not use, and a value it does use is
//! refused naming it as written.
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A value as a file holds it: `Valid` when it reads as a `T`, else the JSON as
/// written (so a reader refuses it naming the value, and a key it does not use never
/// makes a file unreadable). Its schema is `T`'s: rxnode writes only `Valid`.
#[derive(Debug, Clone, PartialEq)]
pub enum Lenient<T> {
    /// The value reads as a `T`.
    Valid(T),
    /// It does not: the JSON as written.
    Other(Value),
}

impl<T> Lenient<T> {
    /// The value, if it reads as a `T`.
    pub fn valid(&self) -> Option<&T> {
        match self {
            Self::Valid(t) => Some(t),
            Self::Other(_) => None,
        }
    }
}

impl<T> From<T> for Lenient<T> {
    fn from(t: T) -> Self {
        Self::Valid(t)
    }
}

impl<T: Serialize> Serialize for Lenient<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Valid(t) => t.serialize(s),
            Self::Other(v) => v.serialize(s),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match T::deserialize(&v) {
            Ok(t) => Self::Valid(t),
            Err(_) => Self::Other(v),
        })
    }
}

impl<T: JsonSchema> JsonSchema for Lenient<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// A list as a file holds it: an entry that is not an object of the entry's type
/// reads as an empty entry, a list that is not a list as none.
fn lenient_list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items
            .iter()
            .map(|i| T::deserialize(i).unwrap_or_default())
            .collect(),
        _ => Vec::new(),
    })
}

/// An object as a file holds it: one that is not reads as an empty one.
fn lenient_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    Ok(Some(
        T::deserialize(&Value::deserialize(d)?).unwrap_or_default(),
    ))
}

/// A sample rate, Hz: finite and > 0 when read (one that is not reads as
/// [`Lenient::Other`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct Rate(pub f64);

impl TryFrom<f64> for Rate {
    type Error = &'static str;
    fn try_from(r: f64) -> Result<Self, Self::Error> {
        if r.is_finite() && r > 0.0 {
            Ok(Self(r))
        } else {
            Err("not a rate in Hz > 0")
        }
    }
}

impl From<Rate> for f64 {
    fn from(r: Rate) -> f64 {
        r.0
    }
}

/// A channel count, 1..=1024 when read (one that is not reads as
/// [`Lenient::Other`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Channels(pub u32);

impl TryFrom<u64> for Channels {
    type Error = &'static str;
    fn try_from(n: u64) -> Result<Self, Self::Error> {
        u32::try_from(n)
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .map(Self)
            .ok_or("not a count in 1..=1024")
    }
}

impl From<Channels> for u64 {
    fn from(c: Channels) -> u64 {
        c.0.into()
    }
}

/// A key that is present, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A `.sigmf-meta` document (SigMF 1.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SigmfMeta {
    /// `global`: absent in a file that is no SigMF meta.
    #[serde(default, deserialize_with = "lenient_object")]
    pub global: Option<Global>,
    /// `captures`: the capture segments.
    #[serde(default, deserialize_with = "lenient_list")]
    pub captures: Vec<Capture>,
    /// `annotations`.
    #[serde(default, deserialize_with = "lenient_list")]
    pub annotations: Vec<Annotation>,
    /// Keys rxnode does not know, as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// The `global` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Global {
    /// `core:datatype`, e.g. `cf32_le`.
    #[serde(
        rename = "core:datatype",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub datatype: Option<Lenient<String>>,
    /// `core:sample_rate`, Hz.
    #[serde(
        rename = "core:sample_rate",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_rate: Option<Lenient<Rate>>,
    /// `core:version`.
    #[serde(
        rename = "core:version",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub version: Option<Lenient<String>>,
    /// `core:recorder`.
    #[serde(
        rename = "core:recorder",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub recorder: Option<Lenient<String>>,
    /// `core:num_channels`.
    #[serde(
        rename = "core:num_channels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub num_channels: Option<Lenient<Channels>>,
    /// `core:sha512` of the dataset, hex.
    #[serde(
        rename = "core:sha512",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sha512: Option<Lenient<String>>,
    /// `core:hw`.
    #[serde(rename = "core:hw", default, skip_serializing_if = "Option::is_none")]
    pub hw: Option<Lenient<String>>,
    /// `core:description`.
    #[serde(
        rename = "core:description",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Lenient<String>>,
    /// `core:extensions`: the extension namespaces the meta uses.
    #[serde(
        rename = "core:extensions",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub extensions: Option<Lenient<Vec<Lenient<Extension>>>>,
    /// `core:dataset`: the data file of a Non-Conforming Dataset, next to the meta.
    #[serde(
        rename = "core:dataset",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub dataset: Option<Lenient<String>>,
    /// `core:metadata_only`: the recording is distributed without its samples.
    #[serde(
        rename = "core:metadata_only",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata_only: Option<Lenient<bool>>,
    /// `core:trailing_bytes`: bytes after the samples that are not samples.
    #[serde(
        rename = "core:trailing_bytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub trailing_bytes: Option<Lenient<u64>>,
    /// The `rxnode` extension's keys.
    #[serde(flatten)]
    pub rxnode: RxnodeGlobal,
    /// Keys rxnode does not know, as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// The `rxnode` extension's keys of the `global` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RxnodeGlobal {
    /// How good the recording's frequency axis is: the radio's clock source, its last
    /// calibration and the check of both (docs/protocol.md#clock); written as the
    /// recorder gave it.
    #[serde(
        rename = "rxnode:clock",
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub clock: Option<Value>,
}

/// An entry of `core:extensions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    /// The namespace, e.g. `rxnode`.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Whether a reader may ignore it.
    pub optional: bool,
}

/// A capture segment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// `core:sample_start`: the index of the segment's first sample.
    #[serde(
        rename = "core:sample_start",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_start: Option<Lenient<u64>>,
    /// `core:header_bytes`: bytes before the segment's samples that are not samples.
    #[serde(
        rename = "core:header_bytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub header_bytes: Option<Lenient<u64>>,
    /// `core:datetime`, RFC 3339.
    #[serde(
        rename = "core:datetime",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub datetime: Option<Lenient<String>>,
    /// `core:frequency`: the centre frequency, Hz.
    #[serde(
        rename = "core:frequency",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub frequency: Option<Lenient<f64>>,
    /// The `rxnode` extension's keys: the radio's settings.
    #[serde(flatten)]
    pub rxnode: RxnodeCapture,
    /// Keys rxnode does not know, as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// The `rxnode` extension's keys of a capture segment: the radio's settings, which
/// SigMF's core has no field for (its `antenna` extension describes the antenna, not
/// the radio's port).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RxnodeCapture {
    /// The overall RX gain as the radio read it back, dB.
    #[schemars(with = "f64")]
    #[serde(
        rename = "rxnode:gain_db",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub gain_db: Option<Lenient<f64>>,
    /// The gain of each element as the radio read it back, dB (e.g. `{"LNA": 24}`).
    #[schemars(with = "BTreeMap<String, f64>")]
    #[serde(
        rename = "rxnode:gain_elements",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub gain_elements: Option<Lenient<BTreeMap<String, f64>>>,
    /// The antenna port selected.
    #[schemars(with = "String")]
    #[serde(
        rename = "rxnode:antenna",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub antenna: Option<Lenient<String>>,
    /// The analog bandwidth, Hz.
    #[schemars(with = "f64")]
    #[serde(
        rename = "rxnode:bandwidth_hz",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub bandwidth_hz: Option<Lenient<f64>>,
}

impl RxnodeCapture {
    /// Whether it carries none of the extension's keys.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// An annotation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    /// `core:sample_start`.
    #[serde(
        rename = "core:sample_start",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_start: Option<Lenient<u64>>,
    /// `core:sample_count`.
    #[serde(
        rename = "core:sample_count",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_count: Option<Lenient<u64>>,
    /// `core:generator`.
    #[serde(
        rename = "core:generator",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub generator: Option<Lenient<String>>,
    /// `core:label`.
    #[serde(
        rename = "core:label",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Lenient<String>>,
    /// `core:freq_lower_edge`, Hz.
    #[serde(
        rename = "core:freq_lower_edge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub freq_lower_edge: Option<Lenient<f64>>,
    /// `core:freq_upper_edge`, Hz.
    #[serde(
        rename = "core:freq_upper_edge",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub freq_upper_edge: Option<Lenient<f64>>,
    /// `core:comment`.
    #[serde(
        rename = "core:comment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub comment: Option<Lenient<String>>,
    /// Keys rxnode does not know, as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl SigmfMeta {
    /// The document as rxnode writes it: pretty JSON with its keys sorted (each
    /// object written through a [`Value`], whose keys are ordered) and a newline.
    pub fn to_file_text(&self) -> serde_json::Result<Vec<u8>> {
        let mut text = serde_json::to_vec_pretty(&serde_json::to_value(self)?)?;
        text.push(b'\n');
        Ok(text)
    }
}

/// The `rxnode` extension's keys of a `.sigmf-meta`: what a schema of it describes.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct RxnodeExtension {
    /// The `global` object's `rxnode:*` keys.
    global: RxnodeGlobal,
    /// Each capture segment's `rxnode:*` keys.
    #[serde(default)]
    captures: Vec<RxnodeCapture>,
}

/// The JSON Schema (draft 2020-12) of the `rxnode` SigMF extension, generated from
/// its types: the `rxnode:*` keys of a `.sigmf-meta`'s `global` object and capture
/// segments (any other key is left to SigMF's own schema).
pub fn rxnode_extension_schema() -> Value {
    let mut s = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<RxnodeExtension>()
        .to_value();
    if let Some(o) = s.as_object_mut() {
        o.insert(
            "$id".into(),
            "https://rxnode.invalid/schemas/sigmf-rxnode.schema.json".into(),
        );
        o.insert(
            "title".into(),
            "rxnode SigMF extension (`rxnode` namespace, version 1.0.0)".into(),
        );
        o.insert(
            "description".into(),
            "The `rxnode:*` keys rxnode writes into a `.sigmf-meta`: the clock block in \
             `global`, the radio's settings in each capture segment \
             (docs/operator.md#what-a-sigmf-recording-says). The `core:*` keys are SigMF's."
                .into(),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another tool's meta reads whole: its own keys kept, a value of another type
    /// kept as written, and written back unchanged.
    #[test]
    fn another_tools_meta_reads_and_writes_back_unchanged() {
        let foreign = serde_json::json!({
            "global": {
                "core:datatype": "ci16_le", "core:sample_rate": -5,
                "core:num_channels": 2000, "core:hw": 7, "core:metadata_only": "yes",
                "core:extensions": "none", "antenna:gain": 3.5,
                "rxnode:clock": null, "rxnode:future": [1]
            },
            "captures": [
                {"core:sample_start": -1, "core:frequency": "100 MHz", "core:global_index": 9,
                 "rxnode:gain_db": "high", "rxnode:gain_elements": {"LNA": "max"}}
            ],
            "annotations": [{"core:sample_start": 0, "core:label": 5, "x:y": {}}],
            "spec": "something else"
        });
        let m: SigmfMeta = serde_json::from_value(foreign.clone()).unwrap();
        let g = m.global.as_ref().unwrap();
        assert_eq!(g.datatype, Some(Lenient::Valid("ci16_le".into())));
        assert_eq!(g.sample_rate, Some(Lenient::Other((-5).into())));
        assert_eq!(g.num_channels, Some(Lenient::Other(2000.into())));
        assert_eq!(g.rxnode.clock, Some(Value::Null));
        assert_eq!(g.other["antenna:gain"], 3.5);
        assert_eq!(g.other["rxnode:future"], serde_json::json!([1]));
        let c = &m.captures[0];
        assert_eq!(c.sample_start, Some(Lenient::Other((-1).into())));
        assert_eq!(c.other["core:global_index"], 9);
        assert!(matches!(c.rxnode.gain_db, Some(Lenient::Other(_))));
        assert_eq!(m.other["spec"], "something else");
        assert_eq!(serde_json::to_value(&m).unwrap(), foreign);
    }

    /// A rate ≤ 0 and a channel count past 1..=1024 are not valid values.
    #[test]
    fn rates_and_channel_counts_are_checked_when_read() {
        let read = |g: Value| -> Global { serde_json::from_value(g).unwrap() };
        let g = read(serde_json::json!({"core:sample_rate": 0, "core:num_channels": 0}));
        assert!(matches!(g.sample_rate, Some(Lenient::Other(_))));
        assert!(matches!(g.num_channels, Some(Lenient::Other(_))));
        let g = read(serde_json::json!({"core:sample_rate": 2e6, "core:num_channels": 1024}));
        assert_eq!(g.sample_rate, Some(Lenient::Valid(Rate(2e6))));
        assert_eq!(g.num_channels, Some(Lenient::Valid(Channels(1024))));
    }

    /// The extension's schema names every `rxnode:*` key the types write.
    #[test]
    fn the_extension_schema_has_every_rxnode_key() {
        let s = rxnode_extension_schema();
        let text = s.to_string();
        for k in [
            "rxnode:clock",
            "rxnode:gain_db",
            "rxnode:gain_elements",
            "rxnode:antenna",
            "rxnode:bandwidth_hz",
        ] {
            assert!(text.contains(&format!("\"{k}\"")), "{k}: {text}");
        }
    }
}
