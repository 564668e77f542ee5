//! The plan model: the steps of a task's one `rx-plan` block. Parsing the
//! block is in `parse`, the physical sanity of each step's values in `sanity`.
use serde::{Deserialize, Serialize};

mod parse;
mod sanity;
#[cfg(test)]
mod tests;

pub(crate) use parse::{find_plan_blocks, parse_plan};

/// The machine-readable plan: the steps of the one `rx-plan` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Steps, executed in order.
    pub steps: Vec<Step>,
}

/// One plan step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// Enumerate and probe radios, read-only.
    Inventory,
    /// Set/read the clock source and check the expected source.
    ClockCheck(ClockCheckStep),
    /// A bounded receive capture.
    RxCapture(RxCaptureStep),
    /// A CW tone transmission (RED; needs a `TxPermit`).
    TxTone(TxToneStep),
    /// A wideband receive sweep (docs/operator.md#sweeps-rxnode-sweep).
    RxSweep(crate::sweep::RxSweepStep),
    /// Two radios at once on one tone: SLAVE's clock relative to MASTER's
    /// (docs/operator.md#verifying-a-slaves-clkin).
    ClkinCompare(ClkinCompareStep),
    /// A radio's frequency error from a broadcast signal
    /// (docs/operator.md#calibrating-a-radio-without-a-generator).
    FreqCal(crate::freq_cal::FreqCalStep),
}

impl Step {
    /// The op name as written in the plan.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Inventory => "inventory",
            Step::ClockCheck(_) => "clock_check",
            Step::RxCapture(_) => "rx_capture",
            Step::TxTone(_) => "tx_tone",
            Step::RxSweep(_) => "rx_sweep",
            Step::ClkinCompare(_) => "clkin_compare",
            Step::FreqCal(_) => "freq_cal",
        }
    }

    /// The device args the step addresses, if it addresses one (MASTER for
    /// `clkin_compare`, which addresses two).
    pub fn device(&self) -> Option<&str> {
        match self {
            Step::Inventory => None,
            Step::ClockCheck(s) => Some(&s.device),
            Step::RxCapture(s) => Some(&s.device),
            Step::TxTone(s) => Some(&s.device),
            Step::RxSweep(s) => Some(&s.device),
            Step::ClkinCompare(s) => s.devices.first().map(String::as_str),
            Step::FreqCal(s) => Some(&s.device),
        }
    }
}

/// `clock_check` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockCheckStep {
    /// SoapySDR device args.
    pub device: String,
    /// The clock source expected (`internal`, `external` …), if any.
    #[serde(default)]
    pub expect_source: Option<String>,
    /// A clock source to set before checking, if any.
    #[serde(default)]
    pub clock_source: Option<String>,
}

/// Reference-tone check during a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClkinSpec {
    /// Absolute RF frequency of the reference tone.
    pub tone_hz: f64,
    /// Largest acceptable reference error, in ppm.
    pub tolerance_ppm: f64,
    /// The reference tone's expected level (dBFS), when known: among several carriers
    /// in the search window only one within ±`expected_tolerance_db` of it can be the
    /// reference (`docs/operator.md#clkin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_dbfs: Option<f64>,
    /// How far (dB) the reference may be from `expected_dbfs` (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_tolerance_db: Option<f64>,
}

/// The sample type of an IQ recording (`rx_capture` `record_format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IqSampleFormat {
    /// SigMF `cf32_le`: float32 I/Q, 8 bytes per sample (the default).
    #[default]
    Cf32,
    /// SigMF `ci16_le`: the radio's native int16 I/Q (SoapySDR CS16) as it came,
    /// 4 bytes per sample; for full-rate recording.
    Ci16,
    /// SigMF `ci8`: the radio's native int8 I/Q (SoapySDR CS8, the HackRF's) as it
    /// came, 2 bytes per sample.
    Ci8,
}

impl IqSampleFormat {
    /// Bytes one complex sample takes on disk.
    pub fn sample_bytes(self) -> u64 {
        match self {
            Self::Cf32 => 8,
            Self::Ci16 => 4,
            Self::Ci8 => 2,
        }
    }
}

/// `rx_capture` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxCaptureStep {
    /// SoapySDR device args.
    pub device: String,
    /// Centre frequency.
    pub frequency_hz: f64,
    /// Sample rate.
    pub sample_rate_hz: f64,
    /// RX gain, if set: overall dB, or dB per gain element (`{"LNA": 24, "VGA": 20}`).
    #[serde(default)]
    pub gain_db: Option<crate::sweep::GainSpec>,
    /// Capture length.
    pub duration_s: f64,
    /// FFT size for the PSD (any size in 16..=1048576; powers of two are fastest); default 2048.
    #[serde(default)]
    pub fft_size: Option<usize>,
    /// Keep the raw IQ under `.local/rx_iq/<TASK_ID>/`.
    #[serde(default)]
    pub record_iq: bool,
    /// The recording's sample type (`cf32` default, `ci16` native); only with `record_iq`.
    #[serde(default)]
    pub record_format: Option<IqSampleFormat>,
    /// Clock source to select before capturing.
    #[serde(default)]
    pub clock_source: Option<String>,
    /// Analog bandwidth, if set.
    #[serde(default)]
    pub bandwidth_hz: Option<f64>,
    /// Antenna, if set.
    #[serde(default)]
    pub antenna: Option<String>,
    /// Reference tone check, if asked.
    #[serde(default)]
    pub clkin: Option<ClkinSpec>,
    /// Most peaks to list, strongest first (1..=64); default [`DEFAULT_MAX_PEAKS`].
    #[serde(default)]
    pub max_peaks: Option<usize>,
    /// A peak is listed only this far above the noise floor, dB (0..=200);
    /// default [`DEFAULT_MIN_SNR_DB`].
    #[serde(default)]
    pub min_snr_db: Option<f64>,
    /// Tune with the radio's fresh frequency calibration from `.local/calibration.json`
    /// (docs/operator.md#calibrating-a-radio-without-a-generator); a missing or
    /// stale one blocks the step.
    #[serde(default)]
    pub apply_calibration: bool,
    /// SoapySDR settings to write (docs/operator.md#radio-settings): every key must
    /// be listed in the policy's `rx.allowed_settings`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
    /// Stream args for the RX stream.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub stream_args: std::collections::BTreeMap<String, String>,
    /// Automatic gain control on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agc: bool,
    /// Manual frequency correction, ppm (not with `apply_calibration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppm: Option<f64>,
    /// The RX channel (0 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<usize>,
}

impl RxCaptureStep {
    /// The step's radio settings, stream args, AGC and manual ppm as one value.
    pub fn radio(&self) -> crate::RadioSettings {
        crate::RadioSettings {
            settings: self.settings.clone(),
            stream_args: self.stream_args.clone(),
            agc: self.agc,
            ppm: self.ppm,
            channel: self.channel,
        }
    }

    /// A capture of `duration_s` at `frequency_hz`, `sample_rate_hz` and `gain_db` on
    /// `device`, everything else left to its default: no recording, no clock source,
    /// bandwidth or antenna set, no CLKIN check, no calibration applied. What the RX
    /// policy checks of a step that streams like a capture.
    pub(crate) fn plain(
        device: String,
        frequency_hz: f64,
        sample_rate_hz: f64,
        gain_db: Option<crate::sweep::GainSpec>,
        duration_s: f64,
    ) -> Self {
        Self {
            device,
            frequency_hz,
            sample_rate_hz,
            gain_db,
            duration_s,
            fft_size: None,
            record_iq: false,
            record_format: None,
            clock_source: None,
            bandwidth_hz: None,
            antenna: None,
            clkin: None,
            max_peaks: None,
            min_snr_db: None,
            apply_calibration: false,
            settings: Default::default(),
            stream_args: Default::default(),
            agc: false,
            ppm: None,
            channel: None,
        }
    }
}

/// How many peaks a capture lists when `max_peaks` is not given.
pub const DEFAULT_MAX_PEAKS: usize = 8;
/// Most peaks a capture may list (`max_peaks`).
pub const MAX_PEAKS_LIMIT: usize = 64;
/// How far above the noise floor a peak must be when `min_snr_db` is not given, dB.
pub const DEFAULT_MIN_SNR_DB: f64 = 6.0;

/// `tx_tone` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxToneStep {
    /// SoapySDR device args.
    pub device: String,
    /// LO (centre) frequency.
    pub frequency_hz: f64,
    /// Sample rate.
    pub sample_rate_hz: f64,
    /// Baseband offset of the tone from the LO (may be negative).
    pub tone_offset_hz: f64,
    /// TX gain.
    pub gain_db: f64,
    /// How long the tone is on air.
    pub duration_s: f64,
}

/// `clkin_compare` step: MASTER and SLAVE stream at once and see one tone of any
/// accuracy; SLAVE's clock relative to MASTER's comes from the slope of the tone's
/// phase difference (docs/protocol.md#clkin_compare).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClkinCompareStep {
    /// SoapySDR device args of exactly two radios: `[MASTER, SLAVE]`.
    pub devices: Vec<String>,
    /// Centre frequency both radios tune to.
    pub frequency_hz: f64,
    /// Sample rate of both streams.
    pub sample_rate_hz: f64,
    /// RX gain of both radios, if set: overall dB, or dB per gain element.
    #[serde(default)]
    pub gain_db: Option<crate::sweep::GainSpec>,
    /// How long both radios stream.
    pub duration_s: f64,
    /// The tone's nominal RF frequency, inside the captured band; its real frequency
    /// may be off by tens of ppm.
    pub tone_hz: f64,
    /// Largest |relative frequency| (ppb) at which SLAVE counts as LOCKED (default 10).
    #[serde(default = "default_tolerance_ppb")]
    pub tolerance_ppb: f64,
    /// Clock sources to select before streaming, `[MASTER, SLAVE]` (e.g.
    /// `["internal", "external"]`); absent: each radio keeps its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_sources: Option<Vec<String>>,
}

fn default_tolerance_ppb() -> f64 {
    10.0
}

impl ClkinCompareStep {
    /// The bounded capture each radio makes, as the RX policy sees it: the same
    /// duration, rate and gain on each device.
    pub fn captures(&self) -> Vec<RxCaptureStep> {
        self.devices
            .iter()
            .enumerate()
            .map(|(i, d)| RxCaptureStep {
                clock_source: self.clock_sources.as_ref().and_then(|c| c.get(i).cloned()),
                ..RxCaptureStep::plain(
                    d.clone(),
                    self.frequency_hz,
                    self.sample_rate_hz,
                    self.gain_db.clone(),
                    self.duration_s,
                )
            })
            .collect()
    }
}
