//! The `freq_cal` step (docs/operator.md#calibrating-a-radio-without-a-generator):
//! a radio's absolute frequency error from a broadcast signal (GSM FCCH, LTE
//! PSS/SSS), with its sanity and RX policy checks and its prompt line.
use super::rx_capture::{check_rx_step, RxCaptureStep};
use super::{de, Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::header::truncate;
use crate::plan::sanity::StepCheck;
use crate::plan::words::{gain, mhz, msps, secs};
use crate::policy::{Policy, RxPolicy};
use crate::sweep::GainSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// GSM's gross bit rate, 1625000/6 bit/s (≈ 270.833 kbit/s).
pub const GSM_BIT_RATE_HZ: f64 = 1_625_000.0 / 6.0;
/// Where a GSM FCCH burst's tone sits above its carrier: a quarter of the bit rate
/// (≈ +67.708 kHz).
pub const GSM_FCCH_OFFSET_HZ: f64 = GSM_BIT_RATE_HZ / 4.0;
/// The largest radio error searched without a prior estimate, ± ppm.
pub const FREQ_CAL_MAX_ERROR_PPM: f64 = 60.0;
/// The lowest usable GSM sample rate is the searched tone range plus this much
/// room on each side (Hz).
const GSM_EDGE_MARGIN_HZ: f64 = 10e3;
/// The lowest LTE sample rate: the 128-point grid of the six central resource blocks.
pub const LTE_MIN_RATE_HZ: f64 = 1.92e6;
/// The usable part of the captured band: ± this fraction of the sample rate (the
/// radio's own anti-alias filter eats the edges).
const USABLE_BAND: f64 = 0.45;

/// The broadcast signal a `freq_cal` step measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FreqCalMethod {
    /// An LTE downlink's synchronisation signals (PSS/SSS) centred at `frequency_hz`.
    Lte,
    /// A GSM BCCH carrier at `frequency_hz` and its FCCH bursts.
    Gsm,
}

impl FreqCalMethod {
    /// The protocol spelling: `lte` or `gsm`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lte => "lte",
            Self::Gsm => "gsm",
        }
    }
}

/// `freq_cal` step: tune to the broadcast carrier and measure the radio's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FreqCalStep {
    /// SoapySDR device args, e.g. driver=hackrf,serial=…
    #[schemars(length(min = 1), regex(pattern = DEVICE_PATTERN))]
    pub device: String,
    /// gsm: a BCCH carrier's FCCH bursts at frequency_hz; lte: an LTE downlink's
    /// PSS/SSS centred at frequency_hz.
    pub method: FreqCalMethod,
    /// The broadcast carrier's absolute frequency, Hz (GSM: the BCCH carrier; LTE:
    /// the downlink's centre); the radio is tuned there.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub frequency_hz: f64,
    /// Sample rate, S/s; gsm: at least (67.708 kHz + 60 ppm of frequency_hz + 10
    /// kHz) / 0.45 (1e6 fits every GSM band); lte: at least 1.92e6.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub sample_rate_hz: f64,
    /// RX gain, if set: overall dB, or dB per gain element.
    #[serde(default)]
    pub gain_db: Option<GainSpec>,
    /// How long to listen, seconds (6 s gives ±0.1 ppm at 0 dB SNR for gsm).
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub duration_s: f64,
}

impl FreqCalStep {
    /// The baseband offsets `[low, high]` (Hz) where the measured feature can be for a
    /// radio error within ± [`FREQ_CAL_MAX_ERROR_PPM`]: for GSM the FCCH tone.
    pub fn search_range_hz(&self) -> [f64; 2] {
        let spread = self.frequency_hz * FREQ_CAL_MAX_ERROR_PPM * 1e-6;
        match self.method {
            FreqCalMethod::Gsm => [GSM_FCCH_OFFSET_HZ - spread, GSM_FCCH_OFFSET_HZ + spread],
            FreqCalMethod::Lte => [-spread, spread],
        }
    }

    /// The lowest sample rate at which the search range fits the usable band.
    pub fn min_sample_rate_hz(&self) -> f64 {
        let [lo, hi] = self.search_range_hz();
        let edge = match self.method {
            FreqCalMethod::Gsm => lo.abs().max(hi.abs()) + GSM_EDGE_MARGIN_HZ,
            FreqCalMethod::Lte => hi.abs(),
        };
        edge / USABLE_BAND
    }

    /// Problems with the step's own values, each naming its field.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, v) in [
            ("frequency_hz", self.frequency_hz),
            ("sample_rate_hz", self.sample_rate_hz),
            ("duration_s", self.duration_s),
        ] {
            if !(v.is_finite() && v > 0.0) {
                out.push(format!(
                    "{name} must be a positive finite number, got {}",
                    crate::compact(v)
                ));
            }
        }
        for (name, v, q) in [
            (
                "frequency_hz",
                self.frequency_hz,
                crate::Quantity::Frequency,
            ),
            (
                "sample_rate_hz",
                self.sample_rate_hz,
                crate::Quantity::SampleRate,
            ),
        ] {
            if let Some(why) = q.implausible(v) {
                out.push(format!("{name} {why}"));
            }
        }
        if let Some(g) = &self.gain_db {
            out.extend(g.problems());
        }
        if out.is_empty() && self.method == FreqCalMethod::Gsm {
            let need = self.min_sample_rate_hz();
            if self.sample_rate_hz < need {
                let [lo, hi] = self.search_range_hz();
                out.push(format!(
                    "sample_rate_hz {} is too low for gsm at {} Hz: the FCCH tone may be \
                     anywhere in {lo:+.0}..{hi:+.0} Hz (±{FREQ_CAL_MAX_ERROR_PPM} ppm), which \
                     needs at least {need:.0} Hz",
                    self.sample_rate_hz, self.frequency_hz
                ));
            }
        }
        if out.is_empty()
            && self.method == FreqCalMethod::Lte
            && self.sample_rate_hz < LTE_MIN_RATE_HZ
        {
            out.push(format!(
                "sample_rate_hz {} is too low for lte: the PSS and SSS are read on LTE's \
                 1.92 MS/s grid, which needs at least {LTE_MIN_RATE_HZ:.0} Hz",
                self.sample_rate_hz
            ));
        }
        out
    }

    /// The step as the bounded capture it is, for the RX policy's checks.
    fn as_capture(&self) -> RxCaptureStep {
        RxCaptureStep::plain(
            self.device.clone(),
            self.frequency_hz,
            self.sample_rate_hz,
            self.gain_db.clone(),
            self.duration_s,
        )
    }
}

impl PlanOp for FreqCalStep {
    const NAME: &'static str = "freq_cal";
    const NEEDS: Needs = Needs::Receive;
    const ABOUT: &'static str = "a radio's absolute frequency error from a broadcast signal, no prior estimate needed within ±60 ppm (YELLOW; RF_RX = YES; bounded by the RX policy like a capture; records nothing); docs/operator.md#calibrating-a-radio-without-a-generator";
    const EXAMPLE: &'static str = r#"{"op": "freq_cal", "device": "driver=rxsim", "method": "gsm",
        "frequency_hz": 935.2e6, "sample_rate_hz": 1e6, "gain_db": 30, "duration_s": 6}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) = (
        r#"{"op": "freq_cal", "device": "driver=rxsim", "method": "gsm",
        "frequency_hz": 935.2e6, "sample_rate_hz": 200e3, "duration_s": 6}"#,
        "sample_rate_hz",
    );

    /// The method first, named with the words it may be (serde would name the
    /// enum's variants), then the fields.
    fn parse(rest: Map<String, Value>, chk: &mut StepCheck<'_>) -> Option<Self> {
        if !matches!(
            rest.get("method").and_then(Value::as_str),
            Some("lte" | "gsm")
        ) {
            let got = match rest.get("method") {
                None => "missing".to_owned(),
                Some(v) => truncate(&v.to_string(), 40),
            };
            let n = chk.n;
            chk.push(
                Some("method"),
                format!("rx-plan step {n} (freq_cal): method {got} must be \"lte\" or \"gsm\""),
            );
            return None;
        }
        let s = de::<Self>(rest, Self::NAME, chk)?;
        s.sanity(chk);
        Some(s)
    }

    fn sanity(&self, chk: &mut StepCheck<'_>) {
        chk.device(&self.device);
        let n = chk.n;
        for p in self.problems() {
            let field = p.split_whitespace().next();
            chk.push(field, format!("rx-plan step {n} (freq_cal): {p}"));
        }
    }

    fn policy(&self, policy: &Policy) -> Result<(), Error> {
        check_freq_cal(self, &policy.rx)
    }

    fn describe(&self) -> String {
        let f = self;
        let what = match f.method {
            FreqCalMethod::Gsm => "GSM BCCH carrier (FCCH bursts)",
            FreqCalMethod::Lte => "LTE downlink (PSS/SSS)",
        };
        format!(
            "freq_cal {}: measures the radio's frequency error from the {what} at {}, {}, {}, {}, receive only, no IQ recorded",
            escaped(&f.device),
            mhz(f.frequency_hz),
            msps(f.sample_rate_hz),
            gain(f.gain_db.as_ref()),
            secs(f.duration_s)
        )
    }

    fn device(&self) -> Option<&str> {
        Some(&self.device)
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.duration_s)
    }

    fn rx_gain(&self) -> Option<Option<&GainSpec>> {
        Some(self.gain_db.as_ref())
    }
}

/// Check a `freq_cal` step against the RX policy: the same limits as a capture of
/// its length, rate and gain (it records nothing); the error names the limit.
pub fn check_freq_cal(step: &FreqCalStep, policy: &RxPolicy) -> Result<(), Error> {
    if let Some(p) = step.problems().into_iter().next() {
        return Err(Error::Policy(p));
    }
    check_rx_step(&step.as_capture(), policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gsm(rate: f64) -> FreqCalStep {
        FreqCalStep {
            device: "driver=rxsim".into(),
            method: FreqCalMethod::Gsm,
            frequency_hz: 935.2e6,
            sample_rate_hz: rate,
            gain_db: Some(GainSpec::Total(30.0)),
            duration_s: 6.0,
        }
    }

    #[test]
    fn gsm_search_range_covers_sixty_ppm_around_the_fcch_tone() {
        let [lo, hi] = gsm(1e6).search_range_hz();
        assert!((GSM_FCCH_OFFSET_HZ - 67_708.333).abs() < 1e-3);
        assert!((lo - (67_708.333 - 56_112.0)).abs() < 1.0, "{lo}");
        assert!((hi - (67_708.333 + 56_112.0)).abs() < 1.0, "{hi}");
    }

    #[test]
    fn a_gsm_rate_too_low_for_the_search_range_is_refused_naming_the_field() {
        assert!(gsm(1e6).problems().is_empty());
        let p = gsm(200e3).problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("sample_rate_hz 200000 is too low"),
            "{}",
            p[0]
        );
    }

    #[test]
    fn an_lte_rate_below_its_grid_is_refused_naming_the_field() {
        let lte = |rate| FreqCalStep {
            method: FreqCalMethod::Lte,
            frequency_hz: 1842.5e6,
            ..gsm(rate)
        };
        assert!(lte(1.92e6).problems().is_empty());
        assert!(lte(61.44e6).problems().is_empty());
        let p = lte(1e6).problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("sample_rate_hz 1000000 is too low for lte"),
            "{}",
            p[0]
        );
    }

    #[test]
    fn policy_bounds_freq_cal_like_a_capture() {
        let mut pol = RxPolicy {
            max_duration_s: 5.0,
            ..RxPolicy::default()
        };
        let e = check_freq_cal(&gsm(1e6), &pol).map_err(|e| e.to_string());
        assert!(
            matches!(&e, Err(m) if m.contains("duration_s 6 exceeds rx.max_duration_s 5")),
            "{e:?}"
        );
        pol.max_duration_s = 60.0;
        pol.max_sample_rate_hz = Some(0.5e6);
        assert!(check_freq_cal(&gsm(1e6), &pol).is_err());
        pol.max_sample_rate_hz = None;
        assert!(check_freq_cal(&gsm(1e6), &pol).is_ok());
        let mut s = gsm(1e6);
        s.duration_s = f64::NAN;
        assert!(check_freq_cal(&s, &pol).is_err());
    }
}
