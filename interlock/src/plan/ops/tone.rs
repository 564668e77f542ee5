//! The `tx_tone` op: a CW tone on air (RED). Its policy check is the TX
//! policy's (`permit.rs`, the same check `authorize` applies).
use super::{Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::plan::sanity::StepCheck;
use crate::plan::words::{mhz, msps, secs};
use crate::policy::Policy;
use serde::{Deserialize, Serialize};

/// `tx_tone` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TxToneStep {
    /// SoapySDR device args, e.g. driver=hackrf,serial=…
    #[schemars(length(min = 1), regex(pattern = DEVICE_PATTERN))]
    pub device: String,
    /// LO (centre) frequency, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub frequency_hz: f64,
    /// Sample rate, S/s.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub sample_rate_hz: f64,
    /// Baseband offset of the tone from the LO, Hz (may be negative); its magnitude
    /// must be below half the sample rate.
    pub tone_offset_hz: f64,
    /// TX gain, dB.
    pub gain_db: f64,
    /// How long the tone is on air, seconds.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub duration_s: f64,
}

impl PlanOp for TxToneStep {
    const NAME: &'static str = "tx_tone";
    const NEEDS: Needs = Needs::Transmit;
    const ABOUT: &'static str = "a CW tone transmission (RED; RF_TX = YES; needs AUTHORIZE RF TX and a node TX policy range); |tone_offset_hz| must be below sample_rate_hz/2";
    const EXAMPLE: &'static str = r#"{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": 433.92e6,
        "sample_rate_hz": 2e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 1}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) = (
        r#"{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": 433.92e6,
        "sample_rate_hz": 2e6, "tone_offset_hz": 1.5e6, "gain_db": 0, "duration_s": 1}"#,
        "tone_offset_hz",
    );

    fn sanity(&self, chk: &mut StepCheck<'_>) {
        let s = self;
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
        chk.finite(s.tone_offset_hz, "tone_offset_hz");
        chk.finite(s.gain_db, "gain_db");
        if s.tone_offset_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.tone_offset_hz.abs() >= s.sample_rate_hz / 2.0
        {
            let n = chk.n;
            chk.push(
                Some("tone_offset_hz"),
                format!(
                    "rx-plan step {n}: |tone_offset_hz| {} must be below half the sample rate {}",
                    s.tone_offset_hz.abs(),
                    s.sample_rate_hz / 2.0
                ),
            );
        }
    }

    /// [`crate::check_tx_step`]: `rxnode run` refuses a whole RED run over it
    /// before anybody is asked to authorize.
    fn policy(&self, policy: &Policy) -> Result<(), Error> {
        crate::permit::check_tx_step(self, policy)
    }

    fn describe(&self) -> String {
        let t = self;
        let off = t.tone_offset_hz.abs();
        format!(
            "TRANSMIT tx_tone {}: LO {}, tone offset {:+.3} kHz → on air {} (image {}, LO leakage {}), {}, TX gain {} dB, {}",
            escaped(&t.device),
            mhz(t.frequency_hz),
            t.tone_offset_hz / 1e3,
            mhz(t.frequency_hz + t.tone_offset_hz),
            mhz(t.frequency_hz - t.tone_offset_hz),
            if off > 0.0 { mhz(t.frequency_hz) } else { "same".to_owned() },
            msps(t.sample_rate_hz),
            t.gain_db,
            secs(t.duration_s)
        )
    }

    fn device(&self) -> Option<&str> {
        Some(&self.device)
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.duration_s)
    }
}
