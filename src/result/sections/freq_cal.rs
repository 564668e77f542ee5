//! `freq_cal[]` of the result, what `rxnode clkin calibrate --json` prints and the
//! `freq_cal` of `rxnode analyze --json` (docs/protocol.md#freq_cal): the radio's
//! error in ppm with its uncertainty, the method, the cell (its PCI and duplex for
//! LTE), the confidence and the detections behind it.
use super::capture::{CaptureActual, CaptureDevice, CaptureRequested};
use super::recording_clock::RecordingClock;
use super::step_row::StepRow;
use super::wire::{one_of, sorted};
use crate::result::Status;
use crate::store::calibration::ClockBlock;
use rxnode_dsp::FreqCalDetection;
use rxnode_interlock::FreqCalMethod;
use serde::{Deserialize, Deserializer, Serialize};

/// One entry of `freq_cal[]`: a measurement (with or without a number), or the
/// row of a step that did not get to measure.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum FreqCalEntry {
    /// The step measured (or tried to).
    Measured(Box<FreqCalRecord>),
    /// Refused or blocked before its radio opened.
    NotMeasured(StepRow),
}

impl<'de> Deserialize<'de> for FreqCalEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(
            match one_of::<D, FreqCalRecord, StepRow>(d, "method", "freq_cal")? {
                Ok(r) => FreqCalEntry::Measured(Box::new(r)),
                Err(row) => FreqCalEntry::NotMeasured(row),
            },
        )
    }
}

impl FreqCalEntry {
    /// The measurement, when the step got to measure.
    pub(crate) fn record(&self) -> Option<&FreqCalRecord> {
        match self {
            FreqCalEntry::Measured(r) => Some(r),
            FreqCalEntry::NotMeasured(_) => None,
        }
    }
}

/// One measurement of a radio's frequency error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct FreqCalRecord {
    /// The capture engine's settings read back (a recording: its centre and rate).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted"
    )]
    pub actual: Option<FreqCalActual>,
    /// Detections found (FCCH bursts, or PSS of the cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub bursts: Option<usize>,
    /// Detections that went into the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub bursts_used: Option<usize>,
    /// Why the measurement was not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_note: Option<String>,
    /// Whether it was kept in `.local/calibration.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_stored: Option<bool>,
    /// What the capture delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<FreqCalCapture>,
    /// Which cell: GSM `BCCH 935.200 MHz`, LTE `PCI 212 at 751.0 MHz` (the PCI is
    /// also `pci`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// The cell's own frequency error as one standard deviation, ppm: its 3GPP
    /// tolerance (±0.05 ppm, TS 45.005 §6.1 / TS 36.104 §6.5.1) over √3; a term of
    /// `uncertainty_ppm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub cell_uncertainty_ppm: Option<f64>,
    /// How good the frequency axis is (docs/protocol.md#clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<FreqCalClock>,
    /// How sure the estimator is that it locked to the right signal, 0..1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: Option<f64>,
    /// One line: the figure, or why there is none.
    pub detail: String,
    /// Every detection, used or rejected, for the picture.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted",
        deserialize_with = "detections"
    )]
    #[schemars(with = "Option<Vec<DetectionSchema>>")]
    pub detections: Option<Vec<FreqCalDetection>>,
    /// The radio (its args, driver, serial), or the recording and its channel.
    pub device: FreqCalSource,
    /// LTE: the cell's frame structure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<Duplex>,
    /// The carrier's RF frequency, Hz.
    pub frequency_hz: f64,
    /// One standard deviation of the measurement against the cell alone (the
    /// detections' spread), ppm; a term of `uncertainty_ppm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub measurement_uncertainty_ppm: Option<f64>,
    /// `gsm` or `lte`.
    #[schemars(with = "MethodSchema")]
    pub method: FreqCalMethod,
    /// The baseband offset of the feature with a perfect clock, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_offset_hz: Option<f64>,
    /// LTE: the cell's physical cell ID, when its SSS was decoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 503))]
    pub pci: Option<u16>,
    /// The radio's error, ppm; > 0: its clock runs fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppm: Option<f64>,
    /// The capture engine's settings as asked (a recording: its centre and rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<FreqCalRequested>,
    /// The searched baseband offsets `[low, high]`, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_hz: Option<[f64; 2]>,
    /// Seconds of samples the estimator saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_analysed: Option<f64>,
    /// PASS (a number from a complete capture), PARTIAL (from an incomplete one),
    /// FAIL, BLOCKED, NOT RUN.
    pub status: Status,
    /// The step's number in the plan (absent outside a run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub step: Option<usize>,
    /// The radio `rxnode analyze --store-for-radio` kept it for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_for: Option<StoredFor>,
    /// One standard deviation of `ppm` as the radio's error:
    /// `measurement_uncertainty_ppm` and `cell_uncertainty_ppm` in quadrature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub uncertainty_ppm: Option<f64>,
}

impl FreqCalRecord {
    /// A measurement of `method` against the carrier at `frequency_hz` with only its
    /// status and detail (the radio and the rest are filled in by the caller).
    pub(crate) fn new(
        device: FreqCalSource,
        method: FreqCalMethod,
        frequency_hz: f64,
        status: Status,
        detail: String,
    ) -> FreqCalRecord {
        FreqCalRecord {
            actual: None,
            bursts: None,
            bursts_used: None,
            calibration_note: None,
            calibration_stored: None,
            capture: None,
            cell: None,
            cell_uncertainty_ppm: None,
            clock: None,
            confidence: None,
            detail,
            detections: None,
            device,
            duplex: None,
            frequency_hz,
            measurement_uncertainty_ppm: None,
            method,
            nominal_offset_hz: None,
            pci: None,
            ppm: None,
            requested: None,
            search_hz: None,
            seconds_analysed: None,
            status,
            step: None,
            stored_for: None,
            uncertainty_ppm: None,
        }
    }
}

/// The radio a measurement was made on, or the recording it was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum FreqCalSource {
    /// The radio as it was opened.
    Radio(CaptureDevice),
    /// The radio's args, when it was not opened.
    Args(DeviceArgs),
    /// A recording and its channel (`rxnode analyze`).
    Recording(RecordingChannel),
}

impl FreqCalSource {
    /// The radio's args, or the recording's name.
    pub(crate) fn label(&self) -> &str {
        match self {
            FreqCalSource::Radio(d) => &d.args,
            FreqCalSource::Args(a) => &a.args,
            FreqCalSource::Recording(r) => &r.recording,
        }
    }
}

/// A radio named by its args only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviceArgs {
    /// The SoapySDR device args the step gave.
    pub args: String,
}

/// One channel of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordingChannel {
    /// Its channel (0-based).
    pub channel: u32,
    /// The recording, as named on the command line.
    pub recording: String,
}

/// A recording's centre and rate (both what was asked and what was read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordingSettings {
    /// Its RF centre, Hz; `null` when the file does not say.
    pub frequency_hz: Option<f64>,
    /// Its sample rate, S/s.
    pub sample_rate_hz: f64,
}

/// What the measurement asked for: a radio's capture settings, or a recording's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum FreqCalRequested {
    /// A recording's centre and rate.
    Recording(RecordingSettings),
    /// The capture settings asked of the radio.
    Radio(CaptureRequested),
}

/// What the measurement had: a radio's settings read back, or a recording's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum FreqCalActual {
    /// A recording's centre and rate.
    Recording(RecordingSettings),
    /// The settings the radio read back.
    Radio(CaptureActual),
}

/// How good the measurement's frequency axis is (docs/protocol.md#clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum FreqCalClock {
    /// This node's radio: its stored calibration.
    Radio(ClockBlock),
    /// A recording: what the file holds.
    Recording(RecordingClock),
}

/// A clock block's last measurement, as one row of a table shows it.
pub(crate) struct LastSeen<'a> {
    /// The radio's error, ppm.
    pub ppm: f64,
    /// Its one-sigma uncertainty, ppm.
    pub uncertainty_ppm: f64,
    /// Its age when the block was made, s; `None` when not known.
    pub age_s: Option<f64>,
    /// `gsm`, `lte`, …
    pub method: &'a str,
    /// When (ISO 8601).
    pub time: &'a str,
    /// Older than the policy allowed (or not said).
    pub stale: bool,
}

impl FreqCalClock {
    /// The clock source read back and the last measurement, when there was one.
    pub(crate) fn parts(&self) -> (Option<&str>, Option<LastSeen<'_>>) {
        match self {
            FreqCalClock::Radio(c) => (
                c.source.as_deref(),
                c.last_measurement.as_ref().map(|m| LastSeen {
                    ppm: m.ppm,
                    uncertainty_ppm: m.uncertainty_ppm,
                    age_s: m.age_s,
                    method: &m.method,
                    time: &m.time,
                    stale: m.stale,
                }),
            ),
            FreqCalClock::Recording(c) => (
                c.source.as_deref(),
                c.last_measurement.as_ref().map(|m| LastSeen {
                    ppm: m.ppm,
                    uncertainty_ppm: m.uncertainty_ppm,
                    age_s: m.age_s.flatten(),
                    method: &m.method,
                    time: &m.time,
                    // Not said: counted as stale, as nothing vouches for its age.
                    stale: m.stale.flatten().unwrap_or(true),
                }),
            ),
        }
    }
}

/// The detections as written: a number that was not finite was written as `null`
/// and reads back as NaN (the picture leaves such a detection out).
fn detections<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<FreqCalDetection>>, D::Error> {
    #[derive(Deserialize)]
    struct Written {
        offset_hz: Option<f64>,
        ppm: Option<f64>,
        snr_db: Option<f64>,
        time_s: Option<f64>,
        used: bool,
    }
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    Ok(Some(
        Vec::<Written>::deserialize(d)?
            .into_iter()
            .map(|w| FreqCalDetection {
                time_s: nan(w.time_s),
                offset_hz: nan(w.offset_hz),
                ppm: nan(w.ppm),
                snr_db: nan(w.snr_db),
                used: w.used,
            })
            .collect(),
    ))
}

/// What the capture of a measurement delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct FreqCalCapture {
    /// Samples dropped.
    pub dropped_samples: u64,
    /// Mean sample power, dBFS.
    pub mean_power_dbfs: Option<f64>,
    /// Overflows.
    pub overflows: u64,
    /// Samples analysed.
    pub samples_processed: u64,
    /// Samples delivered.
    pub samples_received: u64,
    /// Samples asked for.
    pub samples_requested: u64,
    /// Why it stopped.
    pub stop_reason: String,
}

/// An LTE cell's frame structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Duplex {
    /// Frequency-division duplex.
    Fdd,
    /// Time-division duplex.
    Tdd,
}

impl Duplex {
    /// The estimator's spelling (`fdd`, `tdd`), if it is one.
    pub(crate) fn of(s: &str) -> Option<Duplex> {
        match s {
            "fdd" => Some(Duplex::Fdd),
            "tdd" => Some(Duplex::Tdd),
            _ => None,
        }
    }
}

/// The radio a measurement from a recording was kept for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct StoredFor {
    /// Its driver.
    pub driver: String,
    /// Its remote host, for a networked radio.
    pub remote: Option<String>,
    /// Its serial.
    pub serial: String,
}

/// `gsm` or `lte`, as the schema names them.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum MethodSchema {
    /// LTE PSS/SSS.
    Lte,
    /// GSM FCCH.
    Gsm,
}

/// One detection, as the schema names its fields.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct DetectionSchema {
    /// Its observed baseband offset, Hz.
    #[schemars(required)]
    offset_hz: Option<f64>,
    /// The radio error it alone gives, ppm.
    #[schemars(required)]
    ppm: Option<f64>,
    /// Its SNR in its own bandwidth, dB.
    #[schemars(required)]
    snr_db: Option<f64>,
    /// When it started, s from the first sample.
    #[schemars(required)]
    time_s: Option<f64>,
    /// Whether it went into the value.
    used: bool,
}
