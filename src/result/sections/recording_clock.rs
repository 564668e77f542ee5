//! The `clock` block of a recording, as `analyze` reports it and a `freq_cal`
//! entry of a recording carries it (docs/protocol.md#clock): what the file says
//! of the radio that recorded it.
use serde::{Deserialize, Serialize};

/// Where a recording's `clock` block comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClockFrom {
    /// The recording's own `rxnode:clock`, as written when it was recorded.
    Recording,
    /// The file carries none: nothing is known.
    Unknown,
}

/// How good a recording's frequency axis is (docs/protocol.md#clock), as
/// `analyze` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordingClock {
    /// Where it comes from, in words (the file named).
    pub detail: String,
    /// `recording` or `unknown`.
    pub from: ClockFrom,
    /// The radio's frequency calibration when it recorded, as the file holds it.
    pub last_measurement: Option<RecordedMeasurement>,
    /// The correction (ppm) the recording's tuning had; `null`: none.
    pub ppm_correction_applied: Option<f64>,
    /// `driver=…,serial=…` of the recording radio, when the file names it.
    pub radio: Option<String>,
    /// The radio's clock source, when the file names it.
    pub source: Option<String>,
}

/// A frequency calibration as a recording holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordedMeasurement {
    /// Its age when the recording was made, s (absent when the file has none; null
    /// when it was unknown then).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub age_s: Option<Option<f64>>,
    /// `gsm`, `lte` or another method's name.
    pub method: String,
    /// The radio's error, ppm.
    pub ppm: f64,
    /// What it was measured against.
    pub reference: String,
    /// Whether it was older than the policy allowed then (absent when the file has
    /// none; null when it was not said).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub stale: Option<Option<bool>>,
    /// When it was measured (ISO 8601).
    pub time: String,
    /// One standard deviation of `ppm`.
    pub uncertainty_ppm: f64,
}

/// A field that is there, null or not (an absent one is `None` by `default`).
fn present<'de, D, T>(d: D) -> std::result::Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
