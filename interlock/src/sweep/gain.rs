//! An RX gain as a plan or the operator gives it: one figure, or dB per gain
//! element; its value checks, its schema and its RX policy check.
use crate::error::Error;
use crate::policy::{exceeds, RxPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// An RX gain: one overall figure, or dB per named gain element of the device
/// (`{"LNA": 24, "VGA": 20}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GainSpec {
    /// Overall gain, dB (the driver distributes it).
    Total(f64),
    /// dB per gain element, by the device's element names.
    Elements(BTreeMap<String, f64>),
}

impl GainSpec {
    /// The overall gain: the figure, or the sum of the elements.
    pub fn total(&self) -> f64 {
        match self {
            GainSpec::Total(g) => *g,
            GainSpec::Elements(m) => m.values().sum(),
        }
    }

    /// Problems with the value itself (not with a device or policy), each naming it.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            GainSpec::Total(g) => {
                if !g.is_finite() {
                    out.push(format!("gain_db {g} must be finite"));
                } else if let Some(why) = crate::Quantity::Gain.implausible(*g) {
                    out.push(format!("gain_db {why}"));
                }
            }
            GainSpec::Elements(m) => {
                if m.is_empty() {
                    out.push("gain_db {} names no gain element".to_owned());
                }
                if m.len() > 16 {
                    out.push(format!("gain_db names {} elements; at most 16", m.len()));
                }
                for (k, v) in m {
                    let name = crate::header::truncate(k, 40);
                    if k.trim().is_empty()
                        || k.len() > 32
                        || k.chars().any(|c| c.is_control() || c == ',' || c == '=')
                    {
                        out.push(format!(
                            "gain_db element name {name:?} is not a gain element name"
                        ));
                    }
                    if !v.is_finite() {
                        out.push(format!("gain_db.{name} {v} must be finite"));
                    } else if let Some(why) = crate::Quantity::Gain.implausible(*v) {
                        out.push(format!("gain_db.{name} {why}"));
                    }
                }
            }
        }
        out
    }
}

impl<'de> Deserialize<'de> for GainSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = GainSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a gain in dB or an object of gain element to dB, e.g. {\"LNA\": 24, \"VGA\": 20}",
                )
            }
            fn visit_f64<E>(self, v: f64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<GainSpec, E> {
                Ok(GainSpec::Total(v as f64))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<GainSpec, A::Error> {
                let mut m = BTreeMap::new();
                while let Some((k, v)) = a.next_entry::<String, f64>()? {
                    if m.insert(k.clone(), v).is_some() {
                        return Err(serde::de::Error::custom(format!(
                            "gain element {:?} given twice",
                            crate::header::truncate(&k, 40)
                        )));
                    }
                }
                Ok(GainSpec::Elements(m))
            }
        }
        d.deserialize_any(V)
    }
}

/// The schema of a gain, beside the deserializer it describes.
impl schemars::JsonSchema for GainSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GainSpec".into()
    }

    fn json_schema(_: &mut schemars::generate::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "overall gain in dB, or per gain element (e.g. {\"LNA\": 16, \"VGA\": 20})",
            "oneOf": [
                {"type": "number"},
                {
                    "type": "object",
                    "minProperties": 1,
                    "propertyNames": {"minLength": 1},
                    "additionalProperties": {"type": "number"}
                }
            ]
        })
    }
}

/// Check a gain against the RX policy: the overall figure, or each element and
/// their sum. Under `rx.max_gain_db` a gain must be given.
pub fn check_rx_gain(gain: Option<&GainSpec>, policy: &RxPolicy) -> Result<(), Error> {
    if let Some(g) = gain {
        if let Some(p) = g.problems().into_iter().next() {
            return Err(Error::Policy(p));
        }
    }
    let Some(max) = policy.max_gain_db else {
        return Ok(());
    };
    let Some(g) = gain else {
        return Err(Error::Policy(format!(
            "gain_db is required while rx.max_gain_db {max} is set"
        )));
    };
    if let GainSpec::Elements(m) = g {
        for (k, v) in m {
            if exceeds(*v, max) {
                return Err(Error::Policy(format!(
                    "gain_db.{k} {v} exceeds rx.max_gain_db {max}"
                )));
            }
        }
    }
    // A negative element never lowers the total checked here: a radio clamps each
    // element to its own range, so {"LNA": 32, "VGA": 30, "TIA": -30} may run at 62.
    let total = match g {
        GainSpec::Total(t) => *t,
        GainSpec::Elements(m) => m.values().map(|v| v.max(0.0)).sum(),
    };
    if exceeds(total, max) {
        return Err(Error::Policy(match g {
            GainSpec::Total(_) => format!("gain_db {total} exceeds rx.max_gain_db {max}"),
            GainSpec::Elements(_) => {
                format!("gain_db total {total} exceeds rx.max_gain_db {max}")
            }
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_number_or_elements() {
        let g: GainSpec = serde_json::from_str("20").unwrap();
        assert_eq!(g, GainSpec::Total(20.0));
        let g: GainSpec = serde_json::from_str(r#"{"LNA": 24, "VGA": 20.5}"#).unwrap();
        assert_eq!(g.total(), 44.5);
        let e = serde_json::from_str::<GainSpec>(r#""max""#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("gain element to dB"), "{e}");
        let e = serde_json::from_str::<GainSpec>(r#"{"LNA": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid type"), "{e}");
        assert!(!GainSpec::Elements(BTreeMap::new()).problems().is_empty());
        let bad = GainSpec::Elements([("A,B=1".to_owned(), 1.0)].into());
        assert!(bad.problems()[0].contains("not a gain element name"));
    }
}
