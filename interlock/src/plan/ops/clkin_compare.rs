//! The `clkin_compare` op (docs/protocol.md#clkin_compare): MASTER and SLAVE
//! stream at once and see one tone of any accuracy; SLAVE's clock relative to
//! MASTER's comes from the slope of the tone's phase difference. Its sanity, its
//! RX policy check (each radio bounded as a capture) and its prompt line.
use super::rx_capture::{check_rx_step, RxCaptureStep};
use super::{Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::plan::sanity::StepCheck;
use crate::plan::words::{gain, mhz, msps, secs};
use crate::policy::{Policy, RxPolicy};
use crate::sweep::GainSpec;
use serde::{Deserialize, Serialize};

/// `clkin_compare` step: MASTER and SLAVE stream at once and see one tone of any
/// accuracy; SLAVE's clock relative to MASTER's comes from the slope of the tone's
/// phase difference (docs/protocol.md#clkin_compare).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClkinCompareStep {
    /// SoapySDR device args of [MASTER, SLAVE].
    #[schemars(
        length(min = 2, max = 2),
        inner(length(min = 1), regex(pattern = DEVICE_PATTERN))
    )]
    pub devices: Vec<String>,
    /// Centre frequency both radios tune to, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub frequency_hz: f64,
    /// Sample rate of both streams, S/s.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub sample_rate_hz: f64,
    /// RX gain of both radios, if set: overall dB, or dB per gain element.
    #[serde(default)]
    pub gain_db: Option<GainSpec>,
    /// How long both radios stream, seconds.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub duration_s: f64,
    /// The tone's nominal RF frequency, inside the captured band; it may be off its
    /// dial by tens of ppm.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tone_hz: f64,
    /// LOCKED when |relative| + 2σ ≤ this, ppb (default 10).
    #[serde(default = "default_tolerance_ppb")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub tolerance_ppb: f64,
    /// Clock sources to select first, [MASTER, SLAVE] (e.g. ["internal",
    /// "external"]); absent: each radio keeps its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "Vec<String>",
        length(min = 2, max = 2),
        inner(length(min = 1), regex(pattern = DEVICE_PATTERN))
    )]
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

impl PlanOp for ClkinCompareStep {
    const NAME: &'static str = "clkin_compare";
    const NEEDS: Needs = Needs::Receive;
    const ABOUT: &'static str = "CLKIN by comparison (YELLOW; RF_RX = YES): MASTER and SLAVE stream at once and see one tone of any accuracy; SLAVE's clock relative to MASTER's from the slope of the tone's phase difference (docs/protocol.md#clkin_compare). The tone must lie inside frequency_hz ± sample_rate_hz/2 and the two devices must differ.";
    const EXAMPLE: &'static str = r#"{"op": "clkin_compare", "devices": ["driver=rxsim,serial=M",
        "driver=rxsim,serial=S"], "frequency_hz": 100e6, "sample_rate_hz": 2e6, "gain_db": 20,
        "duration_s": 2, "tone_hz": 100.2e6, "clock_sources": ["internal", "external"]}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) = (
        r#"{"op": "clkin_compare", "devices": ["driver=rxsim"], "frequency_hz": 100e6,
        "sample_rate_hz": 2e6, "duration_s": 2, "tone_hz": 100.2e6}"#,
        "devices",
    );

    /// Two different radios, the tone inside the captured band, a positive
    /// tolerance, two clock sources if any.
    fn sanity(&self, chk: &mut StepCheck<'_>) {
        let s = self;
        let n = chk.n;
        if s.devices.len() != 2 {
            chk.push(
                Some("devices"),
                format!(
                    "rx-plan step {n}: devices must be exactly two radios [MASTER, SLAVE], got {}",
                    s.devices.len()
                ),
            );
        }
        for d in &s.devices {
            chk.device(d);
        }
        if let [m, sl] = s.devices.as_slice() {
            if m.trim() == sl.trim() && !m.trim().is_empty() {
                chk.push(
                    Some("devices"),
                    format!("rx-plan step {n}: MASTER and SLAVE are the same device args {m:?}"),
                );
            }
        }
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
        chk.positive_finite(s.tone_hz, "tone_hz");
        chk.plausible(s.tone_hz, "tone_hz", crate::Quantity::Frequency);
        chk.positive_finite(s.tolerance_ppb, "tolerance_ppb");
        if let Some(g) = &s.gain_db {
            for p in g.problems() {
                chk.push(Some("gain_db"), format!("rx-plan step {n}: {p}"));
            }
        }
        if s.tone_hz.is_finite()
            && s.frequency_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.sample_rate_hz > 0.0
            && (s.tone_hz - s.frequency_hz).abs() >= s.sample_rate_hz / 2.0
        {
            chk.push(
                Some("tone_hz"),
                format!(
                    "rx-plan step {n}: tone {} Hz is outside the captured band {} Hz ± {} Hz",
                    s.tone_hz,
                    s.frequency_hz,
                    s.sample_rate_hz / 2.0
                ),
            );
        }
        if let Some(c) = &s.clock_sources {
            if c.len() != 2 {
                chk.push(
                    Some("clock_sources"),
                    format!(
                        "rx-plan step {n}: clock_sources must be two names [MASTER, SLAVE], got {}",
                        c.len()
                    ),
                );
            }
            if c.iter()
                .any(|x| x.trim().is_empty() || x.chars().any(char::is_control))
            {
                chk.push(
                    Some("clock_sources"),
                    format!("rx-plan step {n}: a clock source must be a name without control characters"),
                );
            }
        }
    }

    fn policy(&self, policy: &Policy) -> Result<(), Error> {
        check_clkin_compare(self, &policy.rx)
    }

    fn describe(&self) -> String {
        let c = self;
        let dev = |i: usize| {
            c.devices
                .get(i)
                .map_or_else(|| "?".to_owned(), |d| escaped(d))
        };
        let mut s = format!(
            "clkin_compare MASTER {} and SLAVE {} at once: {}, {}, {}, {} each, tone {}; \
             LOCKED when SLAVE is within ±{} ppb of MASTER and a radio runs from an external reference",
            dev(0),
            dev(1),
            mhz(c.frequency_hz),
            msps(c.sample_rate_hz),
            gain(c.gain_db.as_ref()),
            secs(c.duration_s),
            mhz(c.tone_hz),
            c.tolerance_ppb
        );
        if let Some(cs) = &c.clock_sources {
            let names: Vec<String> = cs.iter().map(|x| escaped(x)).collect();
            s.push_str(&format!(", clock sources MASTER/SLAVE {}", names.join("/")));
        }
        s.push_str(", no IQ recorded");
        s
    }

    fn device(&self) -> Option<&str> {
        self.devices.first().map(String::as_str)
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.duration_s)
    }

    fn rx_gain(&self) -> Option<Option<&GainSpec>> {
        Some(self.gain_db.as_ref())
    }
}

/// Check a `clkin_compare` step against the RX policy: each radio's stream is bounded
/// as a capture of the same duration, rate and gain ([`check_rx_step`]); the error
/// names the radio (MASTER or SLAVE) and the limit.
pub fn check_clkin_compare(step: &ClkinCompareStep, policy: &RxPolicy) -> Result<(), Error> {
    if step.devices.len() != 2 {
        return Err(Error::Policy(format!(
            "devices must be exactly two radios, got {}",
            step.devices.len()
        )));
    }
    for (who, c) in ["MASTER", "SLAVE"].iter().zip(step.captures()) {
        check_rx_step(&c, policy).map_err(|e| match e {
            Error::Policy(why) => Error::Policy(format!("{who}: {why}")),
            other => other,
        })?;
    }
    Ok(())
}
