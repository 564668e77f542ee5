//! `sweeps[]` of the result and what `rxnode sweep --json` prints
//! (docs/operator.md#sweeps-rxnode-sweep): the band asked for and swept, what the
//! radio had, the hop table, the band's peaks, the noise floor, failed hops and the
//! CSV's record.
use super::step_row::StepRow;
use super::wire::{one_of, sorted};
use crate::result::Status;
use crate::store::calibration::ClockBlock;
use rxnode_hw::HopStatus;
use rxnode_interlock::{RadioSettings, SweepConfig};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One entry of `sweeps[]`: a sweep that ran, or the row of one that did not.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum SweepEntry {
    /// The sweep ran (some hops may have failed).
    Swept(Box<SweepRecord>),
    /// Refused, blocked or failed before the first hop.
    NotSwept(StepRow),
}

impl<'de> Deserialize<'de> for SweepEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Only the row of a sweep that did not run carries `detail`.
        Ok(
            match one_of::<D, StepRow, SweepRecord>(d, "detail", "sweep")? {
                Ok(row) => SweepEntry::NotSwept(row),
                Err(r) => SweepEntry::Swept(Box::new(r)),
            },
        )
    }
}

impl SweepEntry {
    /// The status of the sweep or of its step.
    pub(crate) fn status(&self) -> Status {
        match self {
            SweepEntry::Swept(r) => r.status,
            SweepEntry::NotSwept(row) => row.status,
        }
    }
}

/// A sweep that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct SweepRecord {
    /// What the radio had.
    pub actual: SweepActual,
    /// The bin width used, Hz.
    pub bin_hz: f64,
    /// Stopped by the operator before the last pass ended.
    pub cancelled: bool,
    /// The band as asked, when it was narrowed to the radio's tuning range.
    pub clamped: Option<Clamp>,
    /// The radio's clock source, last frequency calibration and the correction
    /// applied (docs/protocol.md#clock).
    pub clock: ClockBlock,
    /// The rtl_power CSV's record; `null` when none was written.
    pub csv: Option<FileRecord>,
    /// The radio.
    pub device: SweepDevice,
    /// Wall time of the sweep, s.
    pub elapsed_s: f64,
    /// The hops that failed twice, never interpolated.
    pub failed_hops: Vec<HzRange>,
    /// FFT size per hop.
    pub fft_size: usize,
    /// The hop table (in a result with many hops: only the hops that did not go
    /// cleanly; the whole table is in `hops_file`).
    pub hops: Vec<HopRow>,
    /// The whole hop table's file, when it was moved out of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops_file: Option<HopsFile>,
    /// Hops per pass over the band.
    pub hops_per_repeat: usize,
    /// The mean noise power per bin of the stitched spectrum, dBFS per bin: its
    /// median bin corrected for the averages each bin holds
    /// (docs/operator.md#peaks-and-the-noise-floor); `null` when nothing was
    /// measured or the median bin has no power (then the sweep FAILs).
    pub noise_floor_db: Option<f64>,
    /// Why there is no noise floor, in the words a capture's
    /// `noise floor not measured (…)` uses: `no hop measured`, `no signal: every
    /// sample is zero`, or `the samples carry no noise above the FFT's rounding`;
    /// absent with a floor (and from a sweep recorded before it was said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor_absent: Option<String>,
    /// How far above the floor a band peak must stand, dB: the larger of 10 dB and
    /// the level noise alone reaches by chance with the averages each bin holds;
    /// absent without a floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_threshold_db: Option<f64>,
    /// Passes that ran to their end.
    pub passes_completed: u32,
    /// The band's strongest distinct peaks.
    pub peaks: Vec<SweepPeak>,
    /// The radio's own settings written, stream args, AGC and manual ppm; `null`
    /// when none was given (absent from a sweep of a node before radio settings).
    #[serde(default, serialize_with = "sorted")]
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub radio_settings: Option<RadioSettings>,
    /// The sweep as asked (the plan's or the command line's values).
    #[serde(serialize_with = "sorted")]
    #[schemars(with = "BTreeMap<String, Value>")]
    pub requested: SweepConfig,
    /// The least time the settle and dwell samples take at this rate, s.
    pub settle_dwell_floor_s: f64,
    /// When it started (ISO 8601).
    pub started_at: String,
    /// PASS (every hop measured), PARTIAL (some failed, or cancelled), FAIL (none measured).
    pub status: Status,
    /// The step's number in the plan; 0 for `rxnode sweep`.
    pub step: usize,
}

impl SweepRecord {
    /// The noise floor for a person: `-97.3 dBFS/bin` (`decimals`), or `n/a` and why
    /// (from `noise_floor_absent`; a record without it: from its hop table).
    pub(crate) fn floor_words(&self, decimals: usize) -> String {
        if let Some(f) = self.noise_floor_db.filter(|f| f.is_finite()) {
            return format!("{f:.decimals$} dBFS/bin");
        }
        let why = self.noise_floor_absent.clone().unwrap_or_else(|| {
            let measured = self.hops.iter().any(|h| h.status == HopStatus::Ok);
            if measured || self.hops_file.is_some() {
                "the median bin has no power"
            } else {
                "no hop measured"
            }
            .to_owned()
        });
        format!("n/a ({why})")
    }
}

/// What the radio had for a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct SweepActual {
    /// Overall gain read back, dB.
    pub gain_db: Option<f64>,
    /// Each gain element read back, dB.
    pub gain_elements_db: BTreeMap<String, f64>,
    /// The sample rate per hop, S/s.
    pub sample_rate_hz: f64,
}

/// The radio of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct SweepDevice {
    /// SoapySDR device args as given.
    pub args: String,
    /// The driver that opened it.
    pub driver: String,
    /// The remote host of a networked radio.
    pub remote: Option<String>,
    /// Its serial, when it reports one.
    pub serial: Option<String>,
}

/// A band narrowed to the radio's tuning range: the edge hop is moved inside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Clamp {
    /// The radio's tuning range, `[low, high]` Hz.
    pub device_range_hz: [f64; 2],
    /// The band's start as asked, Hz.
    pub requested_start_hz: f64,
    /// The band's stop as asked, Hz.
    pub requested_stop_hz: f64,
    /// The band swept, Hz.
    pub start_hz: f64,
    /// The band swept, Hz.
    pub stop_hz: f64,
}

impl Clamp {
    /// One line for people: what was asked, what was swept, why.
    pub(crate) fn describe(&self) -> String {
        format!(
            "band clamped to the radio's tuning range {:.3}–{:.3} MHz: swept {:.3}–{:.3} MHz of the {:.3}–{:.3} MHz asked",
            self.device_range_hz[0] / 1e6,
            self.device_range_hz[1] / 1e6,
            self.start_hz / 1e6,
            self.stop_hz / 1e6,
            self.requested_start_hz / 1e6,
            self.requested_stop_hz / 1e6
        )
    }
}

/// A file written beside the result (or `-`, standard output): name, size, hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct FileRecord {
    /// Its size, bytes.
    pub bytes: usize,
    /// Its name (no folder); `-` for standard output.
    pub file: Option<String>,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

/// `SWEEP_<n>_hops.json`: the whole hop table of a long sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct HopsFile {
    /// Its size, bytes.
    pub bytes: usize,
    /// Its name in the outbox.
    pub file: String,
    /// Hops in it.
    pub hops: usize,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

/// A range of the band, Hz.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct HzRange {
    /// Its top, Hz.
    pub high_hz: f64,
    /// Its bottom, Hz.
    pub low_hz: f64,
}

/// One hop of one pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct HopRow {
    /// The centre the radio reported, Hz.
    pub actual_center_hz: Option<f64>,
    /// Tries (a failed hop is tried twice).
    pub attempts: u32,
    /// Why it failed.
    pub error: Option<String>,
    /// The top of its kept bins, Hz.
    pub high_hz: f64,
    /// Its index in the pass, from 0.
    pub hop: usize,
    /// The bottom of its kept bins, Hz.
    pub low_hz: f64,
    /// Overflows while it streamed.
    pub overflows: u64,
    /// The pass, from 0.
    pub repeat: u32,
    /// The centre asked for, Hz.
    pub requested_center_hz: f64,
    /// Samples analysed.
    pub samples: u64,
    /// Samples discarded after the retune.
    pub settle_samples: u64,
    /// `OK`, `FAILED` or `NOT_RUN`.
    #[schemars(with = "HopStatusSchema")]
    pub status: HopStatus,
}

/// How one hop ended, as the schema names it.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
enum HopStatusSchema {
    /// Measured.
    #[serde(rename = "OK")]
    Ok,
    /// Failed twice.
    #[serde(rename = "FAILED")]
    Failed,
    /// Not reached (the sweep was stopped).
    #[serde(rename = "NOT_RUN")]
    NotRun,
}

/// A peak of the band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct SweepPeak {
    /// Hz.
    pub frequency_hz: f64,
    /// dBFS (peak bin).
    #[serde(deserialize_with = "nan_for_null")]
    #[schemars(with = "Option<f64>")]
    pub power_db: f64,
    /// dB over the noise floor; `null` when the band has no floor (its samples carry
    /// no noise above the FFT's rounding: docs/operator.md#levels-without-power).
    #[serde(default)]
    pub snr_db: Option<f64>,
    /// Its width 3 dB down, Hz; `null` when it could not be measured.
    #[serde(deserialize_with = "nan_for_null")]
    #[schemars(with = "Option<f64>")]
    pub width_3db_hz: f64,
    /// The emission it lies in, `[from, to]` Hz, when wider than a tone could make it
    /// (docs/operator.md#peaks-and-the-noise-floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 2))]
    pub emission_hz: Option<[f64; 2]>,
}

/// A number that was written as `null` because it was not finite.
fn nan_for_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}
