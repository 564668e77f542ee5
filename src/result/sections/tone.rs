//! `tx`: the one transmission of a task, when a tone was transmitted.
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `tx` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum TxRecord {
    /// What this build writes.
    Tone(Box<Tone>),
    /// What another build wrote in another shape: kept as it is.
    #[schemars(schema_with = "super::untyped::any_object")]
    Other(Value),
}

/// A transmitted tone: its radio, settings, samples and time on air
/// (docs/safety.md#time-on-air).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tone {
    /// Whether the transmission was cut short by the cancel flag.
    pub(crate) cancelled: bool,
    /// Device args.
    pub(crate) device: String,
    /// LO frequency, Hz.
    pub(crate) frequency_hz: f64,
    /// TX gain, dB.
    pub(crate) gain_db: f64,
    /// The job-control signal that keyed the transmitter off, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) keyed_off_by: Option<String>,
    /// From asking the driver to activate the stream to its confirming it off, s.
    #[schemars(range(min = 0.0))]
    pub(crate) on_air_s: f64,
    /// How long the stream stayed active past the permit's duration, s.
    #[schemars(range(min = 0.0))]
    pub(crate) past_permit_s: f64,
    /// Sample rate, S/s.
    pub(crate) sample_rate_hz: f64,
    /// Samples of the whole tone.
    pub(crate) samples_planned: u64,
    /// Samples the driver accepted.
    pub(crate) samples_sent: u64,
    /// When the stream was asked to start (ISO 8601 UTC, milliseconds).
    pub(crate) started_at: String,
    /// Set when the driver never confirmed the key-off: how long the
    /// transmitter's state was unknown, s; `null` when it confirmed.
    pub(crate) state_unknown_s: Option<f64>,
    /// `started_at` plus `on_air_s`.
    pub(crate) stopped_at: String,
    /// Tone offset from the LO, Hz.
    pub(crate) tone_offset_hz: f64,
}
