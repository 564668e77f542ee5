//! The `rx_sweep` op (docs/operator.md#sweeps-rxnode-sweep): a wideband RX-only
//! sweep; its flat plan fields, its sanity (the one validator of a sweep,
//! [`crate::SweepConfig::problems`], also the operator command's), its RX policy
//! check and its prompt line.
use super::{Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::plan::sanity::StepCheck;
use crate::plan::words::{gain, khz, mhz, msps, radio_settings_text, secs};
use crate::policy::{exceeds, Policy, RxPolicy};
use crate::sweep::{check_rx_gain, GainSpec, SweepConfig};
use schemars::{generate::SchemaGenerator, JsonSchema, Schema};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The fields of an `rx_sweep` step as the plan names them (docs/operator.md#sweeps-rxnode-sweep), in
/// [`RxSweepStep`]'s order: the one list the schema and messages are checked against.
pub const RX_SWEEP_FIELDS: [&str; 17] = [
    "device",
    "start_hz",
    "stop_hz",
    "bin_hz",
    "sample_rate_hz",
    "gain_db",
    "dwell_s",
    "settle_s",
    "crop",
    "repeats",
    "interval_s",
    "apply_calibration",
    "settings",
    "stream_args",
    "agc",
    "ppm",
    "channel",
];

/// `rx_sweep` step (docs/operator.md#sweeps-rxnode-sweep). In the plan its fields
/// are flat ([`RX_SWEEP_FIELDS`]); the sweep's own values are one [`SweepConfig`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RxSweepFields", into = "RxSweepFields")]
pub struct RxSweepStep {
    /// SoapySDR device args.
    pub device: String,
    /// The band, bin, rate, time per hop, crop and passes.
    pub sweep: SweepConfig,
    /// RX gain, overall or per element.
    pub gain_db: Option<GainSpec>,
    /// Tune every hop with the radio's fresh frequency calibration from
    /// `.local/calibration.json`; a missing or stale one blocks the step.
    pub apply_calibration: bool,
    /// The radio's own settings, stream args, AGC and manual ppm
    /// (docs/operator.md#radio-settings).
    pub radio: crate::RadioSettings,
}

/// An `rx_sweep` step as the plan writes it: every field flat, in
/// [`RX_SWEEP_FIELDS`]' order, the defaults [`SweepConfig`]'s. The schema is
/// this type's.
#[derive(Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RxSweepFields {
    /// SoapySDR device args, e.g. driver=hackrf,serial=…
    #[schemars(length(min = 1), regex(pattern = DEVICE_PATTERN))]
    device: String,
    /// Lowest frequency of the band, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    start_hz: f64,
    /// Highest frequency of the band, Hz; above start_hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    stop_hz: f64,
    /// Widest acceptable bin, Hz.
    #[schemars(extend("exclusiveMinimum" = 0))]
    bin_hz: f64,
    /// Sample rate per hop, S/s.
    #[serde(default = "default_rate")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    sample_rate_hz: f64,
    /// RX gain, overall or per element.
    #[serde(default)]
    gain_db: Option<GainSpec>,
    /// Samples analysed per hop, seconds.
    #[serde(default = "default_dwell")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    #[serde(default = "default_settle")]
    #[schemars(range(min = 0))]
    settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    #[serde(default = "default_crop")]
    #[schemars(range(min = 0), extend("exclusiveMaximum" = 1))]
    crop: f64,
    /// Passes over the band.
    #[serde(default = "default_repeats")]
    #[schemars(range(min = 1))]
    repeats: u32,
    /// Seconds from one pass's start to the next's (rtl_power's -i); the radio
    /// idles in between; the policy counts (repeats - 1) x max(interval, pass) + pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0), range(max = 86400))]
    interval_s: Option<f64>,
    /// Tune every hop with the radio's frequency calibration from
    /// .local/calibration.json; a missing or stale one (older than
    /// rx.calibration_max_age_s) blocks the step.
    #[serde(default)]
    apply_calibration: bool,
    /// SoapySDR writeSetting key to value (docs/operator.md#radio-settings); every
    /// key must be listed in the node policy's rx.allowed_settings, else the step
    /// is refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    settings: BTreeMap<String, String>,
    /// Stream args for the RX stream; a key other than a buffer size must be
    /// listed in rx.allowed_settings.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    stream_args: BTreeMap<String, String>,
    /// Automatic gain control on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    agc: bool,
    /// Manual frequency correction in ppm (rtl_power's -p); not with apply_calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = -1000, max = 1000))]
    ppm: Option<f64>,
    /// RX channel of a multi-channel radio (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize", range(max = 255))]
    channel: Option<usize>,
}

/// The step's schema is that of the flat fields the plan writes.
impl JsonSchema for RxSweepStep {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RxSweepStep".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        RxSweepFields::json_schema(generator)
    }
}

impl From<RxSweepFields> for RxSweepStep {
    fn from(f: RxSweepFields) -> Self {
        RxSweepStep {
            device: f.device,
            sweep: SweepConfig {
                start_hz: f.start_hz,
                stop_hz: f.stop_hz,
                bin_hz: f.bin_hz,
                sample_rate_hz: f.sample_rate_hz,
                dwell_s: f.dwell_s,
                settle_s: f.settle_s,
                crop: f.crop,
                repeats: f.repeats,
                interval_s: f.interval_s,
            },
            gain_db: f.gain_db,
            apply_calibration: f.apply_calibration,
            radio: crate::RadioSettings {
                settings: f.settings,
                stream_args: f.stream_args,
                agc: f.agc,
                ppm: f.ppm,
                channel: f.channel,
            },
        }
    }
}

impl From<RxSweepStep> for RxSweepFields {
    fn from(s: RxSweepStep) -> Self {
        let c = s.sweep;
        RxSweepFields {
            device: s.device,
            start_hz: c.start_hz,
            stop_hz: c.stop_hz,
            bin_hz: c.bin_hz,
            sample_rate_hz: c.sample_rate_hz,
            gain_db: s.gain_db,
            dwell_s: c.dwell_s,
            settle_s: c.settle_s,
            crop: c.crop,
            repeats: c.repeats,
            interval_s: c.interval_s,
            apply_calibration: s.apply_calibration,
            settings: s.radio.settings,
            stream_args: s.radio.stream_args,
            agc: s.radio.agc,
            ppm: s.radio.ppm,
            channel: s.radio.channel,
        }
    }
}

fn default_rate() -> f64 {
    SweepConfig::DEFAULT_SAMPLE_RATE_HZ
}
fn default_dwell() -> f64 {
    SweepConfig::DEFAULT_DWELL_S
}
fn default_settle() -> f64 {
    SweepConfig::DEFAULT_SETTLE_S
}
fn default_crop() -> f64 {
    SweepConfig::DEFAULT_CROP
}
fn default_repeats() -> u32 {
    SweepConfig::DEFAULT_REPEATS
}

impl RxSweepStep {
    /// Hops per pass at the requested rate (`None` when the numbers are unusable).
    pub fn hops(&self) -> Option<usize> {
        self.sweep.hops()
    }

    /// Total time on the radio, seconds ([`SweepConfig::duration_s`]).
    pub fn duration_s(&self) -> Option<f64> {
        self.sweep.duration_s()
    }

    /// Every problem of the step's own values, each naming its field.
    fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = self
            .sweep
            .problems()
            .into_iter()
            .map(|p| (p.field, p.message))
            .collect();
        if let Some(g) = &self.gain_db {
            out.extend(g.problems().into_iter().map(|p| ("gain_db", p)));
        }
        out.extend(self.radio.problems());
        if self.radio.ppm.is_some() && self.apply_calibration {
            out.push((
                "ppm",
                "ppm and apply_calibration both correct the frequency: give one".to_owned(),
            ));
        }
        out
    }
}

impl PlanOp for RxSweepStep {
    const NAME: &'static str = "rx_sweep";
    const NEEDS: Needs = Needs::Receive;
    const ABOUT: &'static str = "an RX-only wideband sweep (docs/operator.md#sweeps-rxnode-sweep; YELLOW; RF_RX = YES); stop_hz must be above start_hz";
    const EXAMPLE: &'static str = r#"{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6,
        "stop_hz": 108e6, "bin_hz": 10e3, "gain_db": 20, "repeats": 2, "interval_s": 5}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) = (
        r#"{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 108e6,
        "stop_hz": 88e6, "bin_hz": 10e3}"#,
        "stop_hz",
    );

    fn sanity(&self, chk: &mut StepCheck<'_>) {
        chk.device(&self.device);
        let n = chk.n;
        for (field, p) in self
            .problems()
            .into_iter()
            .chain(self.radio.task_problems())
        {
            chk.push(Some(field), format!("rx-plan step {n}: {p}"));
        }
    }

    fn policy(&self, policy: &Policy) -> Result<(), Error> {
        check_rx_sweep(self, &policy.rx)
    }

    fn describe(&self) -> String {
        let w = self;
        let c = &w.sweep;
        let grid = c.grid_at(c.sample_rate_hz);
        let mut s = format!(
            "rx_sweep {}: {} – {}, ",
            escaped(&w.device),
            mhz(c.start_hz),
            mhz(c.stop_hz)
        );
        match grid {
            Some(g) => s.push_str(&format!(
                "bin {} (asked {}; FFT {} at {}), {} hop(s) × {} repeat(s)",
                khz(c.sample_rate_hz / g.fft_size as f64),
                khz(c.bin_hz),
                g.fft_size,
                msps(c.sample_rate_hz),
                g.hops,
                c.repeats
            )),
            None => s.push_str("hop plan cannot be computed"),
        }
        if let Some(i) = c.interval_s {
            s.push_str(&format!(", one pass every {}", secs(i)));
        }
        if let Some(d) = w.sweep.duration_s() {
            s.push_str(&format!(", ≈ {} on the radio", secs(d)));
        }
        s.push_str(&format!(", {}, no IQ recorded", gain(w.gain_db.as_ref())));
        if w.apply_calibration {
            s.push_str(
                ", tuned with the radio's frequency calibration (blocked if missing or stale)",
            );
        }
        s.push_str(&radio_settings_text(&w.radio));
        s
    }

    fn device(&self) -> Option<&str> {
        Some(&self.device)
    }

    fn duration_s(&self) -> Option<f64> {
        self.sweep.duration_s()
    }

    fn rx_gain(&self) -> Option<Option<&GainSpec>> {
        Some(self.gain_db.as_ref())
    }
}

/// Every problem of a sweep step's own values (the operator command's checks),
/// each naming its field and value.
pub fn validate_sweep_step(step: &RxSweepStep) -> Vec<String> {
    step.problems()
        .into_iter()
        .map(|(_, p)| crate::escaped(&p))
        .collect()
}

/// Check an `rx_sweep` step against the RX policy; the error names the limit.
/// Fails closed on anything not a usable number. Sweeps record no IQ.
pub fn check_rx_sweep(step: &RxSweepStep, policy: &RxPolicy) -> Result<(), Error> {
    if let Some(p) = validate_sweep_step(step).into_iter().next() {
        return Err(Error::Policy(p));
    }
    let Some(dur) = step.duration_s() else {
        return Err(Error::Policy(
            "the sweep's hop plan cannot be computed".into(),
        ));
    };
    if exceeds(dur, policy.max_duration_s) {
        let how = match step.sweep.interval_s {
            Some(i) => format!(
                "{} passes, one every interval_s {i} s, a pass {:.3} s",
                step.sweep.repeats,
                step.sweep.pass_s().unwrap_or(0.0)
            ),
            None => format!(
                "{} hops × ({} s settle + {} s dwell) × {} repeats",
                step.hops().unwrap_or(0),
                step.sweep.settle_s,
                step.sweep.dwell_s,
                step.sweep.repeats
            ),
        };
        return Err(Error::Policy(format!(
            "sweep duration {dur:.3} s ({how}) exceeds rx.max_duration_s {}",
            policy.max_duration_s
        )));
    }
    if let Some(max) = policy.max_sample_rate_hz {
        if exceeds(step.sweep.sample_rate_hz, max) {
            return Err(Error::Policy(format!(
                "sample_rate_hz {} exceeds rx.max_sample_rate_hz {max}",
                step.sweep.sample_rate_hz
            )));
        }
    }
    check_rx_gain(step.gain_db.as_ref(), policy)?;
    crate::check_radio_settings(&step.radio, policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    /// `RX_SWEEP_FIELDS` is exactly what serde reads and writes for a step.
    #[test]
    fn the_field_list_is_the_steps_fields() {
        let step: RxSweepStep = serde_json::from_str(
            r#"{"device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6, "bin_hz": 10e3,
                "interval_s": 5, "settings": {"biastee": "true"}, "stream_args": {"bufflen": "1"},
                "agc": true, "ppm": 1.5, "channel": 0}"#,
        )
        .unwrap();
        let v = serde_json::to_value(&step).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = RX_SWEEP_FIELDS.to_vec();
        want.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, want);
    }

    fn step() -> RxSweepStep {
        serde_json::from_str(
            r#"{"device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6, "bin_hz": 10e3,
                "sample_rate_hz": 10e6, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01,
                "crop": 0.25, "repeats": 1}"#,
        )
        .unwrap()
    }

    #[test]
    fn grid_and_duration() {
        let s = step();
        let g = s.sweep.grid_at(s.sweep.sample_rate_hz).unwrap();
        // A dwell shorter than one FFT counts as one FFT.
        let mut short = s.clone();
        short.sweep.dwell_s = 1e-6;
        let want = 3.0 * (0.01 + 1000.0 / 10e6);
        assert!((short.duration_s().unwrap() - want).abs() < 1e-12);
        // Too many values to keep.
        let mut huge = s.clone();
        huge.sweep.start_hz = 1e6;
        huge.sweep.stop_hz = 6e9;
        huge.sweep.sample_rate_hz = 1e6;
        huge.sweep.bin_hz = 1.0;
        let issues = validate_sweep_step(&huge);
        assert!(issues.iter().any(|i| i.contains("values")), "{issues:?}");
        // 10 MS/s / 10 kHz: exactly 10 kHz bins from a 1000-point FFT.
        assert_eq!((g.fft_size, g.kept_bins), (1000, 750));
        assert_eq!(g.total_bins, 2000);
        assert_eq!(g.hops, 3);
        assert_eq!(s.hops(), Some(3));
        assert!((s.duration_s().unwrap() - 3.0 * 0.06).abs() < 1e-12);
    }

    /// The bin asked is the bin given whenever `rate / bin` is an integer, and a pass
    /// takes the fewest hops, ⌈band / (rate × (1 − crop))⌉: 420–480 MHz at 10 kHz
    /// and 10 MS/s is 8 hops of 7.5 MHz (as soapy_power plans it), not 9.
    #[test]
    fn policy_bounds_each_element_the_sum_duration_and_rate() {
        let mut p = RxPolicy {
            max_gain_db: Some(40.0),
            ..RxPolicy::default()
        };
        let mut s = step();
        check_rx_sweep(&s, &p).unwrap();
        s.gain_db = Some(GainSpec::Elements(
            [("LNA".into(), 24.0), ("VGA".into(), 20.0)].into(),
        ));
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("gain_db total 44 exceeds rx.max_gain_db 40"),
            "{e}"
        );
        s.gain_db = Some(GainSpec::Elements([("LNA".into(), 41.0)].into()));
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(e.contains("gain_db.LNA 41 exceeds"), "{e}");
        s.gain_db = None;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("required"));
        s.gain_db = Some(GainSpec::Total(10.0));
        p.max_duration_s = 0.1;
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(e.contains("sweep duration 0.180 s (3 hops"), "{e}");
        assert!(e.contains("rx.max_duration_s 0.1"), "{e}");
        p.max_duration_s = 60.0;
        p.max_sample_rate_hz = Some(2e6);
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("rx.max_sample_rate_hz"));
        p.max_sample_rate_hz = None;
        s.sweep.repeats = 1000;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("exceeds rx.max_duration_s"));
        // An interval: the passes' wall time, from the first start to the last end.
        s.sweep.repeats = 3;
        s.sweep.interval_s = Some(30.0);
        assert!((s.duration_s().unwrap() - (2.0 * 30.0 + 0.18)).abs() < 1e-9);
        let e = check_rx_sweep(&s, &p).unwrap_err().to_string();
        assert!(
            e.contains("sweep duration 60.180 s (3 passes, one every interval_s 30 s"),
            "{e}"
        );
        // A pass longer than the interval: the passes follow each other at once.
        s.sweep.interval_s = Some(0.01);
        assert!((s.duration_s().unwrap() - 3.0 * 0.18).abs() < 1e-9);
        s.sweep.interval_s = Some(0.0);
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("interval_s 0 must be"));
        s.sweep.interval_s = None;
        s.sweep.repeats = 1;
        s.sweep.crop = f64::NAN;
        assert!(check_rx_sweep(&s, &p)
            .unwrap_err()
            .to_string()
            .contains("crop"));
    }
}
