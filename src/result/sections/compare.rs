//! `clkin_compares[]` of the result and what `rxnode clkin compare --json` prints
//! (docs/protocol.md#clkin_compare): both radios, the relative frequency of SLAVE
//! to MASTER with its uncertainty, the verdict and the phase trace.
use super::step_row::StepRow;
use super::wire::{one_of, sorted};
use crate::result::Status;
use crate::store::calibration::ClockBlock;
use rxnode_hw::ActualSettings;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One entry of `clkin_compares[]`: a comparison that streamed, or the row of one
/// that did not.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum CompareEntry {
    /// Both radios streamed (the figure may still be missing).
    Compared(Box<CompareRecord>),
    /// Refused, blocked or failed before the radios streamed.
    NotCompared(StepRow),
}

impl<'de> Deserialize<'de> for CompareEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match one_of::<D, CompareRecord, StepRow>(d, "clkin_compare", "clkin_compare")? {
                Ok(r) => CompareEntry::Compared(Box::new(r)),
                Err(row) => CompareEntry::NotCompared(row),
            },
        )
    }
}

impl CompareEntry {
    /// The comparison, when the radios streamed.
    pub(crate) fn record(&self) -> Option<&CompareRecord> {
        match self {
            CompareEntry::Compared(r) => Some(r),
            CompareEntry::NotCompared(_) => None,
        }
    }

    /// Its status.
    pub(crate) fn status(&self) -> Status {
        match self {
            CompareEntry::Compared(r) => r.status,
            CompareEntry::NotCompared(row) => row.status,
        }
    }

    /// Its detail line.
    pub(crate) fn detail(&self) -> &str {
        match self {
            CompareEntry::Compared(r) => &r.detail,
            CompareEntry::NotCompared(row) => &row.detail,
        }
    }

    /// Its step number, when it is a step of a plan.
    pub(crate) fn step(&self) -> Option<usize> {
        match self {
            CompareEntry::Compared(r) => r.step,
            CompareEntry::NotCompared(row) => Some(row.step),
        }
    }
}

/// A comparison whose radios streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CompareRecord {
    /// The figure, the verdict and how it was measured.
    pub clkin_compare: CompareFigures,
    /// One line: the figure and its verdict, or why there is none.
    pub detail: String,
    /// The MASTER radio.
    pub master: CompareRadio,
    /// SLAVE's tone phase minus MASTER's and the fitted line, when there is a figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_trace: Option<PhaseTrace>,
    /// The SLAVE radio.
    pub slave: CompareRadio,
    /// PASS (LOCKED), FAIL (AGREE, UNLOCKED, undecided, or no number), PARTIAL (a
    /// number over less than was asked).
    pub status: Status,
    /// The step's number in the plan (absent for `rxnode clkin compare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub step: Option<usize>,
}

/// The figure of a comparison and the settings it was measured with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CompareFigures {
    /// SLAVE's tone minus MASTER's, Hz.
    pub difference_hz: Option<f64>,
    /// The duration asked for, s.
    pub duration_s: f64,
    /// The centre both radios were tuned to, Hz.
    pub frequency_hz: f64,
    /// Phase points in the fit.
    pub points: Option<usize>,
    /// (1+ε_slave)/(1+ε_master) − 1 in ppb, positive when SLAVE's clock runs fast;
    /// `null` when nothing could be measured.
    pub relative_ppb: Option<f64>,
    /// Lag-1 autocorrelation of the fit's residual.
    pub residual_lag1: Option<f64>,
    /// Largest residual of the fit, rad.
    pub residual_max_rad: Option<f64>,
    /// RMS residual of the fit, rad.
    pub residual_rms_rad: Option<f64>,
    /// The sample rate asked for, S/s.
    pub sample_rate_hz: f64,
    /// Time the phase points span, s.
    pub span_s: Option<f64>,
    /// SLAVE's first samples after MASTER's, s (adds only a constant phase).
    pub start_offset_s: Option<f64>,
    /// The tolerance, ± ppb.
    pub tolerance_ppb: f64,
    /// The reference tone's RF frequency, Hz.
    pub tone_hz: f64,
    /// Standard (1σ) uncertainty of `relative_ppb` from the fit's residual.
    pub uncertainty_ppb: Option<f64>,
    /// The verdict; `null`: no number, or the measurement cannot tell.
    pub verdict: Option<Verdict>,
}

/// What a comparison says of SLAVE's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) enum Verdict {
    /// |relative| + 2σ ≤ tolerance and a radio's clock source read back is an
    /// external reference.
    #[serde(rename = "LOCKED")]
    Locked,
    /// Within tolerance, but neither radio reports an external reference.
    #[serde(rename = "AGREE")]
    Agree,
    /// |relative| − 2σ > tolerance.
    #[serde(rename = "UNLOCKED")]
    Unlocked,
}

impl Verdict {
    /// The protocol spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Locked => "LOCKED",
            Verdict::Agree => "AGREE",
            Verdict::Unlocked => "UNLOCKED",
        }
    }
}

impl From<rxnode_dsp::CompareVerdict> for Verdict {
    fn from(v: rxnode_dsp::CompareVerdict) -> Verdict {
        match v {
            rxnode_dsp::CompareVerdict::Locked => Verdict::Locked,
            rxnode_dsp::CompareVerdict::Agree => Verdict::Agree,
            rxnode_dsp::CompareVerdict::Unlocked => Verdict::Unlocked,
        }
    }
}

/// A radio's role in a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) enum Role {
    /// The reference.
    #[serde(rename = "MASTER")]
    Master,
    /// The radio whose clock is checked.
    #[serde(rename = "SLAVE")]
    Slave,
}

impl Role {
    /// The two roles, in `devices` order.
    pub(crate) const BOTH: [Role; 2] = [Role::Master, Role::Slave];

    /// The protocol spelling.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Master => "MASTER",
            Role::Slave => "SLAVE",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One radio of a comparison: what it was, what it had, what its stream delivered
/// and the tone it saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CompareRadio {
    /// The settings read back.
    #[serde(serialize_with = "sorted")]
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub actual: ActualSettings,
    /// How good its frequency axis is (docs/protocol.md#clock); absent outside a checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockBlock>,
    /// The clock source read back.
    pub clock_source: Option<String>,
    /// The clock source asked for.
    pub clock_source_set: Option<String>,
    /// The radio.
    pub device: CompareDevice,
    /// Overflows of its stream.
    pub overflows: u64,
    /// The sample where an overflow ended the phase track.
    pub phase_track_broken_at_sample: Option<u64>,
    /// Its `ref_locked` sensor, when it has one.
    pub ref_locked: Option<bool>,
    /// MASTER or SLAVE.
    pub role: Role,
    /// Samples it delivered.
    pub samples_received: u64,
    /// Samples asked of it.
    pub samples_requested: u64,
    /// Why its stream ended early, if it did.
    pub stopped: Option<String>,
    /// Read timeouts of its stream.
    pub timeouts: u64,
    /// The tone it saw.
    pub tone: ToneLevels,
}

/// The radio of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CompareDevice {
    /// SoapySDR device args as given.
    pub args: Option<String>,
    /// The driver that opened it.
    pub driver: String,
    /// Its hardware key.
    pub hardware_key: Option<String>,
    /// The remote host of a networked radio.
    pub remote: Option<String>,
    /// Its serial, when it reports one.
    pub serial: Option<String>,
}

/// The reference tone as one radio saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ToneLevels {
    /// The fraction of the radio's samples with |I| or |Q| at full scale; above 0.01
    /// the input saturated, and the tone has no level and no band SNR. Absent from
    /// results written before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipped_fraction: Option<f64>,
    /// Its level, dBFS.
    pub level_dbfs: Option<f64>,
    /// SNR of one phase point, dB.
    pub point_snr_db: Option<f64>,
    /// Tone power over the noise in the whole captured band, dB.
    pub snr_db: Option<f64>,
}

/// SLAVE's tone phase minus MASTER's (unwrapped, from 0) and the fitted line, at
/// most 400 points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct PhaseTrace {
    /// The fit's value at t = 0, rad.
    pub fit_intercept_rad: f64,
    /// The fit's slope, rad/s.
    pub fit_slope_rad_s: f64,
    /// Phase difference per point, rad.
    pub rad: Vec<f64>,
    /// Time per point, s.
    pub t_s: Vec<f64>,
}
