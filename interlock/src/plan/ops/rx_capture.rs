//! The `rx_capture` op: a bounded receive capture, with an optional reference-tone
//! (CLKIN) check and IQ recording; its sanity, its RX policy check (also what the
//! other receiving ops are bounded by, as captures) and its prompt line.
use super::{Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::plan::sanity::StepCheck;
use crate::plan::words::{bytes, gain, mhz, msps, radio_settings_text, secs};
use crate::policy::{exceeds, Policy, RxPolicy};
use crate::sweep::GainSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Reference-tone check during a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClkinSpec {
    /// Absolute RF frequency of the reference tone, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tone_hz: f64,
    /// Largest acceptable reference error, in ppm.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tolerance_ppm: f64,
    /// The reference tone's expected level (dBFS), when known: among several carriers
    /// in the search window only one within expected_tolerance_db of it can be the
    /// reference (docs/operator.md#clkin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(max = 0))]
    pub expected_dbfs: Option<f64>,
    /// How far (dB) the reference may be from expected_dbfs (default 6); needs
    /// expected_dbfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0))]
    pub expected_tolerance_db: Option<f64>,
}

/// The sample type of an IQ recording (`rx_capture` `record_format`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RxCaptureStep {
    /// SoapySDR device args, e.g. driver=hackrf,serial=…
    #[schemars(length(min = 1), regex(pattern = DEVICE_PATTERN))]
    pub device: String,
    /// Centre frequency, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub frequency_hz: f64,
    /// Sample rate, S/s.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub sample_rate_hz: f64,
    /// RX gain, if set: overall dB, or dB per gain element (`{"LNA": 24, "VGA": 20}`).
    #[serde(default)]
    pub gain_db: Option<GainSpec>,
    /// Capture length, seconds.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub duration_s: f64,
    /// FFT size for the PSD (any size in 16..=1048576; powers of two are fastest); default 2048.
    #[serde(default)]
    #[schemars(range(min = 16, max = 1048576))]
    pub fft_size: Option<usize>,
    /// Keep the raw IQ under `.local/rx_iq/<TASK_ID>/`.
    #[serde(default)]
    pub record_iq: bool,
    /// The recording's sample type: cf32 (SigMF cf32_le, default), ci16 (the
    /// radio's native CS16 as SigMF ci16_le) or ci8 (the radio's native CS8, a
    /// HackRF's, as SigMF ci8); only with record_iq: true.
    #[serde(default)]
    #[schemars(with = "IqSampleFormat")]
    pub record_format: Option<IqSampleFormat>,
    /// Clock source to select before capturing.
    #[serde(default)]
    pub clock_source: Option<String>,
    /// Analog bandwidth, Hz, if set.
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub bandwidth_hz: Option<f64>,
    /// Antenna, if set.
    #[serde(default)]
    pub antenna: Option<String>,
    /// Reference tone check, if asked; the tone must lie inside frequency_hz ±
    /// sample_rate_hz/2.
    #[serde(default)]
    pub clkin: Option<ClkinSpec>,
    /// Most peaks to list, strongest first (1..=64); default 8.
    #[serde(default)]
    #[schemars(range(min = 1, max = 64))]
    pub max_peaks: Option<usize>,
    /// A peak is listed only this many dB above the noise floor (0..=200); default 6.
    #[serde(default)]
    #[schemars(range(min = 0, max = 200))]
    pub min_snr_db: Option<f64>,
    /// Tune with the radio's frequency calibration from .local/calibration.json
    /// (docs/operator.md#calibrating-a-radio-without-a-generator); a missing or
    /// stale one (older than rx.calibration_max_age_s) blocks the step.
    #[serde(default)]
    pub apply_calibration: bool,
    /// SoapySDR writeSetting key to value (docs/operator.md#radio-settings); every
    /// key must be listed in the node policy's rx.allowed_settings, else the step
    /// is refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub settings: BTreeMap<String, String>,
    /// Stream args for the RX stream; a key other than a buffer size must be
    /// listed in rx.allowed_settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub stream_args: BTreeMap<String, String>,
    /// Automatic gain control on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agc: bool,
    /// Manual frequency correction in ppm (rtl_power's -p); not with apply_calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = -1000, max = 1000))]
    pub ppm: Option<f64>,
    /// RX channel of a multi-channel radio (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize", range(max = 255))]
    pub channel: Option<usize>,
}

/// The lowest level a reference tone may be expected at, dBFS: far below any
/// radio's noise per bin, and above the arithmetic's rounding.
pub const MIN_LEVEL_DBFS: f64 = -300.0;

/// How many peaks a capture lists when `max_peaks` is not given.
pub const DEFAULT_MAX_PEAKS: usize = 8;
/// Most peaks a capture may list (`max_peaks`).
pub const MAX_PEAKS_LIMIT: usize = 64;
/// How far above the noise floor a peak must be when `min_snr_db` is not given, dB.
pub const DEFAULT_MIN_SNR_DB: f64 = 6.0;

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
        gain_db: Option<GainSpec>,
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

    /// The reference-tone check: its own values, and the tone inside the captured band.
    fn clkin_sanity(&self, c: &ClkinSpec, chk: &mut StepCheck<'_>) {
        let s = self;
        chk.positive_finite(c.tone_hz, "clkin.tone_hz");
        chk.plausible(c.tone_hz, "clkin.tone_hz", crate::Quantity::Frequency);
        chk.positive_finite(c.tolerance_ppm, "clkin.tolerance_ppm");
        if let Some(t) = c.expected_tolerance_db {
            chk.positive_finite(t, "clkin.expected_tolerance_db");
        }
        if c.expected_tolerance_db.is_some() && c.expected_dbfs.is_none() {
            let n = chk.n;
            chk.push(
                Some("clkin.expected_tolerance_db"),
                format!("rx-plan step {n}: clkin.expected_tolerance_db needs clkin.expected_dbfs"),
            );
        }
        if let Some(l) = c
            .expected_dbfs
            .filter(|l| !(l.is_finite() && (MIN_LEVEL_DBFS..=0.0).contains(l)))
        {
            let n = chk.n;
            chk.push(
                Some("clkin.expected_dbfs"),
                format!(
                    "rx-plan step {n}: clkin.expected_dbfs must be a level in {MIN_LEVEL_DBFS} … 0 dBFS, got {}",
                    crate::compact(l)
                ),
            );
        }
        if c.tone_hz.is_finite()
            && s.frequency_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.sample_rate_hz > 0.0
            && (c.tone_hz - s.frequency_hz).abs() >= s.sample_rate_hz / 2.0
        {
            let n = chk.n;
            chk.push(
                Some("clkin.tone_hz"),
                format!(
                    "rx-plan step {n}: clkin tone {} Hz is outside the captured band {} Hz ± {} Hz",
                    c.tone_hz,
                    s.frequency_hz,
                    s.sample_rate_hz / 2.0
                ),
            );
        }
    }
}

/// The FFT size a capture step without `fft_size` uses.
pub const DEFAULT_CAPTURE_FFT_SIZE: usize = 2048;

impl RxCaptureStep {
    /// `duration_s × sample_rate_hz` must fill at least one Welch segment of
    /// `fft_size` samples: with fewer there is no spectrum, no floor and no peak
    /// (docs/operator.md#peaks-and-the-noise-floor).
    fn segment_sanity(&self, chk: &mut StepCheck<'_>) {
        let fft = self.fft_size.unwrap_or(DEFAULT_CAPTURE_FFT_SIZE);
        let samples = self.duration_s * self.sample_rate_hz;
        // Below one sample `at_least_one_sample` has said so already.
        if !(samples.is_finite() && samples >= 1.0) || samples >= fft as f64 {
            return;
        }
        let n = chk.n;
        chk.push(
            Some("duration_s"),
            format!(
                "rx-plan step {n}: duration_s {} × sample_rate_hz {} = {} samples, fewer than one \
                 Welch segment of fft_size {fft}: no spectrum would be measured; give duration_s ≥ {} \
                 or a smaller fft_size",
                self.duration_s,
                self.sample_rate_hz,
                samples.floor(),
                fft as f64 / self.sample_rate_hz
            ),
        );
    }
}

impl PlanOp for RxCaptureStep {
    const NAME: &'static str = "rx_capture";
    const NEEDS: Needs = Needs::Receive;
    const ABOUT: &'static str = "a bounded receive capture (YELLOW; RF_RX = YES); the clkin tone must lie inside frequency_hz ± sample_rate_hz/2";
    const EXAMPLE: &'static str = r#"{"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 100e6,
        "sample_rate_hz": 2e6, "gain_db": 20, "duration_s": 2, "record_iq": true,
        "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) = (
        r#"{"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 100e6,
        "sample_rate_hz": 2e6, "duration_s": 2, "max_peaks": 65}"#,
        "max_peaks",
    );

    fn sanity(&self, chk: &mut StepCheck<'_>) {
        let s = self;
        let n = chk.n;
        chk.device(&s.device);
        chk.positive_finite(s.frequency_hz, "frequency_hz");
        chk.positive_finite(s.sample_rate_hz, "sample_rate_hz");
        chk.plausible(s.frequency_hz, "frequency_hz", crate::Quantity::Frequency);
        chk.plausible(
            s.sample_rate_hz,
            "sample_rate_hz",
            crate::Quantity::SampleRate,
        );
        chk.positive_finite(s.duration_s, "duration_s");
        chk.at_least_one_sample(s.duration_s, s.sample_rate_hz);
        if let Some(g) = &s.gain_db {
            for p in g.problems() {
                chk.push(Some("gain_db"), format!("rx-plan step {n}: {p}"));
            }
        }
        if let Some(b) = s.bandwidth_hz {
            chk.positive_finite(b, "bandwidth_hz");
            chk.plausible(b, "bandwidth_hz", crate::Quantity::Frequency);
        }
        // The radio's own settings and the manual ppm, as a sweep's are checked.
        let radio = s.radio();
        for (field, p) in radio.problems().into_iter().chain(radio.task_problems()) {
            chk.push(Some(field), format!("rx-plan step {n}: {p}"));
        }
        if let (Some(f), false) = (s.record_format, s.record_iq) {
            chk.push(
                Some("record_format"),
                format!(
                    "rx-plan step {n}: record_format {} needs \"record_iq\": true",
                    serde_json::to_string(&f).unwrap_or_default()
                ),
            );
        }
        if let Some(f) = s.fft_size {
            if !crate::sweep::fft_size_ok(f) {
                chk.push(
                    Some("fft_size"),
                    format!(
                        "rx-plan step {n}: fft_size {f} must be in {}..={}",
                        crate::sweep::FFT_SIZE_MIN,
                        crate::sweep::FFT_SIZE_MAX
                    ),
                );
            }
        }
        s.segment_sanity(chk);
        if let Some(c) = &s.clkin {
            s.clkin_sanity(c, chk);
        }
        if let Some(m) = s.max_peaks {
            if !(1..=MAX_PEAKS_LIMIT).contains(&m) {
                chk.push(
                    Some("max_peaks"),
                    format!("rx-plan step {n}: max_peaks {m} must be in 1..={MAX_PEAKS_LIMIT}"),
                );
            }
        }
        if let Some(t) = s
            .min_snr_db
            .filter(|t| !(t.is_finite() && (0.0..=200.0).contains(t)))
        {
            chk.push(
                Some("min_snr_db"),
                format!(
                    "rx-plan step {n}: min_snr_db {} must be a number of dB in 0..=200",
                    crate::compact(t)
                ),
            );
        }
    }

    fn policy(&self, policy: &Policy) -> Result<(), Error> {
        check_rx_step(self, &policy.rx)
    }

    fn describe(&self) -> String {
        let c = self;
        let mut s = format!(
            "rx_capture {}: {}, {}, {}, {}",
            escaped(&c.device),
            mhz(c.frequency_hz),
            msps(c.sample_rate_hz),
            gain(c.gain_db.as_ref()),
            secs(c.duration_s)
        );
        if let Some(b) = c.bandwidth_hz {
            s.push_str(&format!(", bandwidth {}", mhz(b)));
        }
        if let Some(a) = &c.antenna {
            s.push_str(&format!(", antenna {}", escaped(a)));
        }
        if let Some(cs) = &c.clock_source {
            s.push_str(&format!(", clock source {}", escaped(cs)));
        }
        if let Some(k) = &c.clkin {
            s.push_str(&format!(
                ", CLKIN reference tone {} ± {} ppm",
                mhz(k.tone_hz),
                k.tolerance_ppm
            ));
        }
        if c.apply_calibration {
            s.push_str(
                ", tuned with the radio's frequency calibration (blocked if missing or stale)",
            );
        }
        s.push_str(&radio_settings_text(&c.radio()));
        if c.record_iq {
            let fmt = serde_json::to_value(c.record_format.unwrap_or_default())
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "cf32".to_owned());
            s.push_str(&format!(", records IQ {fmt} ≈ {}", bytes(c.iq_bytes())));
        } else {
            s.push_str(", no IQ recorded");
        }
        s
    }

    fn device(&self) -> Option<&str> {
        Some(&self.device)
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.duration_s)
    }

    fn iq_bytes(&self) -> f64 {
        if !self.record_iq {
            return 0.0;
        }
        let per = self.record_format.unwrap_or_default().sample_bytes() as f64;
        self.duration_s * self.sample_rate_hz * per
    }

    fn rx_gain(&self) -> Option<Option<&GainSpec>> {
        Some(self.gain_db.as_ref())
    }
}

/// Check an `rx_capture` step against the RX policy; the error names the limit.
/// Fails closed: a non-finite or non-positive duration or rate, or a non-finite
/// gain, is refused first, whatever the limits, so the comparisons below only
/// ever see finite numbers (the limits are checked finite by `Policy::from_json`).
pub fn check_rx_step(step: &RxCaptureStep, policy: &RxPolicy) -> Result<(), Error> {
    for (name, v) in [
        ("duration_s", step.duration_s),
        ("sample_rate_hz", step.sample_rate_hz),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(Error::Policy(format!(
                "{name} {v} must be a positive finite number"
            )));
        }
    }
    if let Some(p) = step
        .gain_db
        .as_ref()
        .and_then(|g| g.problems().into_iter().next())
    {
        return Err(Error::Policy(p));
    }
    if exceeds(step.duration_s, policy.max_duration_s) {
        return Err(Error::Policy(format!(
            "duration_s {} exceeds rx.max_duration_s {}",
            step.duration_s, policy.max_duration_s
        )));
    }
    if let Some(max) = policy.max_sample_rate_hz {
        if exceeds(step.sample_rate_hz, max) {
            return Err(Error::Policy(format!(
                "sample_rate_hz {} exceeds rx.max_sample_rate_hz {max}",
                step.sample_rate_hz
            )));
        }
    }
    // Without a gain the radio keeps whatever gain it had, which may be above the
    // limit: under a gain limit the step must say its gain (each element and the
    // sum are bounded).
    crate::sweep::check_rx_gain(step.gain_db.as_ref(), policy)?;
    if step.ppm.is_some() && step.apply_calibration {
        return Err(Error::Policy(
            "ppm and apply_calibration both correct the frequency: give one".into(),
        ));
    }
    crate::check_radio_settings(&step.radio(), policy)?;
    if step.record_iq {
        // cf32: 8 bytes per sample; ci16: 4.
        let per_sample = step.record_format.unwrap_or_default().sample_bytes() as f64;
        let bytes = step.duration_s * step.sample_rate_hz * per_sample;
        if bytes > policy.max_iq_bytes as f64 {
            return Err(Error::Policy(format!(
                "recording needs {bytes:.0} bytes of IQ; rx.max_iq_bytes is {}",
                policy.max_iq_bytes
            )));
        }
    }
    Ok(())
}
