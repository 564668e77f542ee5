use crate::error::Error;
use crate::plan::{ClkinCompareStep, RxCaptureStep, Step};
use serde::{Deserialize, Serialize};

/// Node-local policy (`.local/rxnode-policy.json`), never taken from a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Receive limits.
    #[serde(default)]
    pub rx: RxPolicy,
    /// Transmit limits; `None` (or no range) means TX is refused.
    #[serde(default)]
    pub tx: Option<TxPolicy>,
    /// Radio self-tests (docs/protocol.md#8-radio-health); `None`: no radio is
    /// tested on a schedule (`rxnode health test ARGS` still works).
    #[serde(default)]
    pub health: Option<HealthPolicy>,
    /// Status publication (docs/protocol.md#node-status); `None` (the default):
    /// this node never pushes its status. Setting it is the operator's consent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusPolicy>,
    /// What a task must carry to be offered (docs/safety.md#who-wrote-it); `None`:
    /// the defaults (no signature required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksPolicy>,
}

/// What a task must carry to be offered at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct TasksPolicy {
    /// Which tasks need a good signature by an allowed signer on the commit
    /// that last changed the task file (default `none`).
    #[serde(default)]
    pub require_signature: RequireSignature,
}

/// `tasks.require_signature`: which tasks need a good signature by an allowed signer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RequireSignature {
    /// No task needs one (the signature is still checked and shown).
    #[default]
    None,
    /// RED tasks need one.
    Red,
    /// Every task needs one.
    All,
}

impl RequireSignature {
    /// The policy's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            RequireSignature::None => "none",
            RequireSignature::Red => "red",
            RequireSignature::All => "all",
        }
    }

    /// Whether a task of this risk level needs a good signature.
    pub fn applies_to(self, risk: crate::RiskLevel) -> bool {
        match self {
            RequireSignature::None => false,
            RequireSignature::Red => risk == crate::RiskLevel::Red,
            RequireSignature::All => true,
        }
    }
}

impl Policy {
    /// `tasks.require_signature` (`none` when the policy has no `tasks`).
    pub fn require_signature(&self) -> RequireSignature {
        self.tasks
            .as_ref()
            .map(|t| t.require_signature)
            .unwrap_or_default()
    }
}

/// Radio self-tests: which radios the watcher tests, and how often.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthPolicy {
    /// Seconds between self-tests of each radio (default 86400, at least 10);
    /// the watcher also tests at start and after a radio error.
    #[serde(default = "default_self_test_every")]
    pub self_test_every_s: f64,
    /// The radios to test, as SoapySDR device args (`driver=hackrf,serial=…`).
    #[serde(default)]
    pub radios: Vec<String>,
    /// A reference tone per radio (keyed by its device args exactly as in `radios`):
    /// the self-test then also checks CLKIN against it.
    #[serde(default)]
    pub clkin: std::collections::BTreeMap<String, crate::plan::ClkinSpec>,
}

/// The shortest interval between scheduled self-tests.
pub const MIN_SELF_TEST_EVERY_S: f64 = 10.0;
/// The most radios one policy tests.
pub const MAX_SELF_TEST_RADIOS: usize = 64;

fn default_self_test_every() -> f64 {
    86_400.0
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            self_test_every_s: default_self_test_every(),
            radios: Vec::new(),
            clkin: std::collections::BTreeMap::new(),
        }
    }
}

impl HealthPolicy {
    fn check(&self) -> Result<(), Error> {
        let every = self.self_test_every_s;
        if !(every.is_finite() && every >= MIN_SELF_TEST_EVERY_S) {
            return Err(Error::InvalidPolicy(format!(
                "health.self_test_every_s must be a finite number of at least {MIN_SELF_TEST_EVERY_S}, got {every}"
            )));
        }
        if self.radios.len() > MAX_SELF_TEST_RADIOS {
            return Err(Error::InvalidPolicy(format!(
                "health.radios lists {} radios; at most {MAX_SELF_TEST_RADIOS}",
                self.radios.len()
            )));
        }
        for (i, r) in self.radios.iter().enumerate() {
            if r.trim().is_empty() || r.len() > 512 || r.chars().any(char::is_control) {
                return Err(Error::InvalidPolicy(format!(
                    "health.radios[{i}] = {r:?} must be SoapySDR device args (1 to 512 printable characters)"
                )));
            }
        }
        for (args, spec) in &self.clkin {
            if !self.radios.contains(args) {
                return Err(Error::InvalidPolicy(format!(
                    "health.clkin names {args:?}, which is not in health.radios"
                )));
            }
            let ok = |v: f64| v.is_finite() && v > 0.0;
            if !ok(spec.tone_hz) || !ok(spec.tolerance_ppm) {
                return Err(Error::InvalidPolicy(format!(
                    "health.clkin[{args:?}]: tone_hz and tolerance_ppm must be positive finite numbers"
                )));
            }
        }
        Ok(())
    }
}

/// Status publication: the node keeps `rx-status/<NODE>` on its remote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusPolicy {
    /// Seconds between heartbeats, in [`StatusPolicy::MIN_EVERY_S`]..=[`StatusPolicy::MAX_EVERY_S`].
    pub publish_every_s: f64,
}

impl StatusPolicy {
    /// Shortest heartbeat interval accepted (seconds). A lab uses minutes;
    /// sub-second intervals exist for tests and benchmarks on loopback.
    pub const MIN_EVERY_S: f64 = 0.2;
    /// Longest heartbeat interval accepted (seconds: one day).
    pub const MAX_EVERY_S: f64 = 86_400.0;
}

/// Receive limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxPolicy {
    /// Longest capture, seconds (default 60).
    #[serde(default = "default_max_duration")]
    pub max_duration_s: f64,
    /// Highest sample rate; `None` = the device's maximum.
    #[serde(default)]
    pub max_sample_rate_hz: Option<f64>,
    /// Highest RX gain; `None` = the device's maximum.
    #[serde(default)]
    pub max_gain_db: Option<f64>,
    /// Most IQ bytes on disk per task (default 4 GiB).
    #[serde(default = "default_max_iq")]
    pub max_iq_bytes: u64,
    /// A radio's frequency calibration older than this (seconds, default 24 h) is
    /// stale: shown as such and never applied
    /// (docs/operator.md#calibrating-a-radio-without-a-generator).
    #[serde(default = "default_calibration_max_age")]
    pub calibration_max_age_s: f64,
    /// Radio setting keys (SoapySDR `writeSetting`, as the driver spells them) an RX
    /// step may write; every other key is refused (default: none), as is a stream
    /// arg naming power that is not listed (docs/operator.md#radio-settings).
    #[serde(default)]
    pub allowed_settings: Vec<String>,
}

fn default_max_duration() -> f64 {
    60.0
}
fn default_calibration_max_age() -> f64 {
    24.0 * 3600.0
}
fn default_max_iq() -> u64 {
    4 * 1024 * 1024 * 1024
}

impl Default for RxPolicy {
    fn default() -> Self {
        RxPolicy {
            max_duration_s: default_max_duration(),
            max_sample_rate_hz: None,
            max_gain_db: None,
            max_iq_bytes: default_max_iq(),
            calibration_max_age_s: default_calibration_max_age(),
            allowed_settings: Vec::new(),
        }
    }
}

/// Transmit limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxPolicy {
    /// Allowed `[lo, hi]` ranges in Hz; everything a tone puts on air must fit in one.
    pub allowed_ranges_hz: Vec<[f64; 2]>,
    /// Highest TX gain.
    pub max_gain_db: f64,
    /// Longest transmission, seconds.
    pub max_duration_s: f64,
    /// Radios of other hosts that may transmit: SoapyRemote servers (`tcp://HOST:PORT`,
    /// exactly as in the device args' `remote=`) and network radios by the device arg
    /// that addresses them (`addr=192.168.10.2`, `uri=ip:192.168.2.1`). Empty (the
    /// default): no TX on a radio of another host.
    #[serde(default)]
    pub allowed_remote_servers: Vec<String>,
}

impl Policy {
    /// Parse and check a policy JSON text.
    pub fn from_json(text: &str) -> Result<Policy, Error> {
        // serde would also accept a JSON array as a struct (fields by position);
        // a policy is only ever an object.
        if let Some(d) = crate::strict_json::find_duplicate_key(text) {
            return Err(Error::InvalidPolicy(d.to_string()));
        }
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::InvalidPolicy(e.to_string()))?;
        if !v.is_object() {
            return Err(Error::InvalidPolicy(
                "invalid type: the policy must be a JSON object".to_owned(),
            ));
        }
        for key in ["rx", "tx", "health", "status", "tasks"] {
            if let Some(x) = v.get(key) {
                if !(x.is_object() || x.is_null()) {
                    return Err(Error::InvalidPolicy(format!(
                        "invalid type: {key} must be a JSON object"
                    )));
                }
            }
        }
        let p: Policy =
            serde_json::from_value(v).map_err(|e| Error::InvalidPolicy(e.to_string()))?;
        p.check()?;
        Ok(p)
    }

    fn check(&self) -> Result<(), Error> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::InvalidPolicy(format!(
                    "{name} must be a positive finite number, got {v}"
                )))
            }
        };
        pos("rx.max_duration_s", self.rx.max_duration_s)?;
        pos("rx.calibration_max_age_s", self.rx.calibration_max_age_s)?;
        if let Some(r) = self.rx.max_sample_rate_hz {
            pos("rx.max_sample_rate_hz", r)?;
        }
        if let Some(g) = self.rx.max_gain_db {
            if !g.is_finite() {
                return Err(Error::InvalidPolicy(format!(
                    "rx.max_gain_db must be finite, got {g}"
                )));
            }
        }
        if let Some(h) = &self.health {
            h.check()?;
        }
        if let Some(tx) = &self.tx {
            pos("tx.max_duration_s", tx.max_duration_s)?;
            if !tx.max_gain_db.is_finite() {
                return Err(Error::InvalidPolicy(format!(
                    "tx.max_gain_db must be finite, got {}",
                    tx.max_gain_db
                )));
            }
            for (i, [lo, hi]) in tx.allowed_ranges_hz.iter().enumerate() {
                if !(lo.is_finite() && hi.is_finite() && *lo > 0.0 && lo < hi) {
                    return Err(Error::InvalidPolicy(format!(
                        "tx.allowed_ranges_hz[{i}] = [{lo}, {hi}] must be positive, finite and lo < hi"
                    )));
                }
            }
        }
        if let Some(st) = &self.status {
            let v = st.publish_every_s;
            if !(v.is_finite()
                && (StatusPolicy::MIN_EVERY_S..=StatusPolicy::MAX_EVERY_S).contains(&v))
            {
                return Err(Error::InvalidPolicy(format!(
                    "status.publish_every_s must be a number of seconds in [{}, {}], got {v}",
                    StatusPolicy::MIN_EVERY_S,
                    StatusPolicy::MAX_EVERY_S
                )));
            }
        }
        Ok(())
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

/// The node policy's verdict on one plan step, by the very checks `rxnode run`
/// applies: [`check_rx_step`] for `rx_capture`, [`check_clkin_compare`] for
/// `clkin_compare`, [`crate::check_rx_sweep`] for `rx_sweep`,
/// [`crate::check_freq_cal`] for `freq_cal`, [`crate::check_tx_step`] for `tx_tone` (the run refuses a whole RED
/// run over it before anybody is asked to authorize). `inventory` and
/// `clock_check` have no policy limits. The approval prompt and `rxnode validate
/// --policy` show it, so the operator learns before `[A]` what the run would block.
pub fn check_step(step: &Step, policy: &Policy) -> Result<(), Error> {
    match step {
        Step::Inventory | Step::ClockCheck(_) => Ok(()),
        Step::RxCapture(c) => check_rx_step(c, &policy.rx),
        Step::RxSweep(s) => crate::sweep::check_rx_sweep(s, &policy.rx),
        Step::FreqCal(s) => crate::freq_cal::check_freq_cal(s, &policy.rx),
        Step::TxTone(t) => crate::permit::check_tx_step(t, policy),
        Step::ClkinCompare(c) => check_clkin_compare(c, &policy.rx),
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

/// `value` over `limit`, failing closed: a NaN on either side counts as over (a policy
/// built by hand, not parsed, may hold one).
pub(crate) fn exceeds(value: f64, limit: f64) -> bool {
    value.is_nan() || limit.is_nan() || value > limit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step() -> RxCaptureStep {
        RxCaptureStep {
            record_iq: true,
            ..RxCaptureStep::plain(
                "driver=rxsim".into(),
                100e6,
                2e6,
                Some(crate::sweep::GainSpec::Total(20.0)),
                2.0,
            )
        }
    }

    /// NaN or negative values must not slip
    /// past the limits, which were written as `x > max` (false for NaN).
    #[test]
    fn non_finite_or_negative_values_are_refused_whatever_the_limits() {
        let p = RxPolicy::default();
        for (dur, rate, gain) in [
            (f64::NAN, 2e6, Some(20.0)),
            (-1.0, 2e6, Some(20.0)),
            (1.0, f64::NAN, Some(20.0)),
            (1.0, f64::INFINITY, Some(20.0)),
            (1.0, 0.0, Some(20.0)),
            (1.0, 2e6, Some(f64::NAN)),
        ] {
            let mut s = step();
            s.duration_s = dur;
            s.sample_rate_hz = rate;
            s.gain_db = gain.map(crate::sweep::GainSpec::Total);
            assert!(
                matches!(check_rx_step(&s, &p), Err(Error::Policy(_))),
                "{dur} {rate} {gain:?}"
            );
        }
        assert!(check_rx_step(&step(), &p).is_ok());
    }

    #[test]
    fn defaults_and_full() {
        let p = Policy::from_json("{}").unwrap();
        assert_eq!(p.rx.max_duration_s, 60.0);
        assert_eq!(p.rx.max_iq_bytes, 4 * 1024 * 1024 * 1024);
        assert!(p.tx.is_none());
        let p = Policy::from_json(
            r#"{"rx": {"max_duration_s": 5, "max_sample_rate_hz": 10e6, "max_gain_db": 40, "max_iq_bytes": 1000},
                "tx": {"allowed_ranges_hz": [[433.05e6, 434.79e6]], "max_gain_db": 10, "max_duration_s": 2}}"#,
        )
        .unwrap();
        assert_eq!(p.rx.max_sample_rate_hz, Some(10e6));
        let tx = p.tx.unwrap();
        assert_eq!(tx.allowed_ranges_hz, vec![[433.05e6, 434.79e6]]);
        assert_eq!(tx.max_gain_db, 10.0);
    }

    #[test]
    fn status_publication_is_off_unless_the_policy_says_so() {
        assert!(Policy::from_json("{}").unwrap().status.is_none());
        let p = Policy::from_json(r#"{"status": {"publish_every_s": 300}}"#).unwrap();
        assert_eq!(p.status.map(|s| s.publish_every_s), Some(300.0));
        for (text, needle) in [
            (
                r#"{"status": {"publish_every_s": 0.1}}"#,
                "status.publish_every_s",
            ),
            (
                r#"{"status": {"publish_every_s": 90000}}"#,
                "status.publish_every_s",
            ),
            (r#"{"status": {}}"#, "missing field `publish_every_s`"),
            (
                r#"{"status": {"publish_every_s": 60, "push_to": "x"}}"#,
                "unknown field",
            ),
            (r#"{"status": 300}"#, "status must be a JSON object"),
        ] {
            let e = Policy::from_json(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn rejects_bad_policies() {
        for (text, needle) in [
            ("", "EOF"),
            ("[]", "invalid type"),
            (r#"{"rx": [1, 2, 3, 4]}"#, "rx must be a JSON object"),
            (r#"{"tx": [[[1, 2]], 0, 1]}"#, "tx must be a JSON object"),
            (
                r#"[{"max_duration_s": 1}, {"allowed_ranges_hz": [[1, 2]], "max_gain_db": 0, "max_duration_s": 1}]"#,
                "must be a JSON object",
            ),
            (
                r#"{"rx": {"max_duration": 5}}"#,
                "unknown field `max_duration`",
            ),
            (r#"{"danger": 1}"#, "unknown field `danger`"),
            (
                r#"{"rx": {"max_duration_s": 0}}"#,
                "rx.max_duration_s must be a positive",
            ),
            (r#"{"rx": {"max_duration_s": -1}}"#, "rx.max_duration_s"),
            (
                r#"{"rx": {"max_sample_rate_hz": 0}}"#,
                "rx.max_sample_rate_hz",
            ),
            (r#"{"rx": {"max_iq_bytes": -1}}"#, "invalid value"),
            (
                r#"{"tx": {"allowed_ranges_hz": [[2, 1]], "max_gain_db": 0, "max_duration_s": 1}}"#,
                "lo < hi",
            ),
            (
                r#"{"tx": {"allowed_ranges_hz": [[0, 1]], "max_gain_db": 0, "max_duration_s": 1}}"#,
                "allowed_ranges_hz[0]",
            ),
            (
                r#"{"tx": {"allowed_ranges_hz": [[1, 2]], "max_gain_db": 0, "max_duration_s": 0}}"#,
                "tx.max_duration_s",
            ),
            (
                r#"{"tx": {"allowed_ranges_hz": [[1, 2]], "max_duration_s": 1}}"#,
                "missing field `max_gain_db`",
            ),
            (
                r#"{"tx": {"allowed_ranges_hz": [[1, 2, 3]], "max_gain_db": 0, "max_duration_s": 1}}"#,
                "invalid length",
            ),
        ] {
            match Policy::from_json(text) {
                Err(Error::InvalidPolicy(m)) => assert!(m.contains(needle), "{text}: {m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn health_self_tests_are_checked_and_named() {
        let p = Policy::from_json(r#"{"health": {"radios": ["driver=rtlsdr"]}}"#).unwrap();
        let h = p.health.unwrap();
        assert_eq!(h.self_test_every_s, 86_400.0);
        assert_eq!(h.radios, vec!["driver=rtlsdr".to_owned()]);
        let p = Policy::from_json(
            r#"{"health": {"self_test_every_s": 60, "radios": ["driver=hackrf"],
                "clkin": {"driver=hackrf": {"tone_hz": 100.1e6, "tolerance_ppm": 2}}}}"#,
        )
        .unwrap();
        assert_eq!(p.health.unwrap().clkin["driver=hackrf"].tone_hz, 100.1e6);
        for (text, needle) in [
            (r#"{"health": 1}"#, "health must be a JSON object"),
            (
                r#"{"health": {"self_test_every_s": 1}}"#,
                "health.self_test_every_s must be a finite number of at least 10",
            ),
            (r#"{"health": {"radios": [""]}}"#, "health.radios[0]"),
            (r#"{"health": {"every": 5}}"#, "unknown field `every`"),
            (
                r#"{"health": {"radios": ["a=1"], "clkin": {"b=2": {"tone_hz": 1e6, "tolerance_ppm": 1}}}}"#,
                "not in health.radios",
            ),
            (
                r#"{"health": {"radios": ["a=1"], "clkin": {"a=1": {"tone_hz": -1, "tolerance_ppm": 1}}}}"#,
                "health.clkin",
            ),
        ] {
            match Policy::from_json(text) {
                Err(Error::InvalidPolicy(m)) => assert!(m.contains(needle), "{text}: {m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn rx_limits_named() {
        let p = RxPolicy {
            max_duration_s: 2.0,
            max_sample_rate_hz: Some(2e6),
            max_gain_db: Some(20.0),
            max_iq_bytes: 32_000_000,
            ..RxPolicy::default()
        };
        // Exactly at every limit: allowed (2 s × 2 MS/s × 8 B = 32 MB).
        check_rx_step(&step(), &p).unwrap();
        let over = |f: &dyn Fn(&mut RxCaptureStep), needle: &str| {
            let mut s = step();
            f(&mut s);
            match check_rx_step(&s, &p) {
                Err(Error::Policy(m)) => assert!(m.contains(needle), "{m}"),
                o => panic!("{o:?}"),
            }
        };
        over(&|s| s.duration_s = 2.001, "rx.max_duration_s 2");
        over(&|s| s.sample_rate_hz = 2.1e6, "rx.max_sample_rate_hz");
        over(
            &|s| s.gain_db = Some(crate::sweep::GainSpec::Total(20.5)),
            "rx.max_gain_db 20",
        );
        let p2 = RxPolicy {
            max_iq_bytes: 31_999_999,
            ..p.clone()
        };
        let mut s = step();
        assert!(
            matches!(check_rx_step(&s, &p2), Err(Error::Policy(m)) if m.contains("rx.max_iq_bytes"))
        );
        // A ci16 recording takes 4 bytes a sample, half of cf32's 8.
        s.record_format = Some(crate::IqSampleFormat::Ci16);
        check_rx_step(&s, &p2).unwrap();
        let p3 = RxPolicy {
            max_iq_bytes: 15_999_999,
            ..p.clone()
        };
        assert!(
            matches!(check_rx_step(&s, &p3), Err(Error::Policy(m)) if m.contains("16000000 bytes"))
        );
        s.record_format = None;
        s.record_iq = false;
        check_rx_step(&s, &p2).unwrap();
        // No gain asked under a gain limit is refused (the radio
        // would keep whatever gain it had, perhaps above the limit); without a gain
        // limit, no gain is fine.
        let mut s = step();
        s.gain_db = None;
        assert!(
            matches!(check_rx_step(&s, &p), Err(Error::Policy(m)) if m.contains("gain_db is required while rx.max_gain_db 20"))
        );
        let no_gain_limit = RxPolicy {
            max_gain_db: None,
            ..p.clone()
        };
        check_rx_step(&s, &no_gain_limit).unwrap();
        // A NaN limit (a policy built by hand, not parsed) refuses instead of passing.
        for bad in [
            RxPolicy {
                max_duration_s: f64::NAN,
                ..p.clone()
            },
            RxPolicy {
                max_sample_rate_hz: Some(f64::NAN),
                ..p.clone()
            },
            RxPolicy {
                max_gain_db: Some(f64::NAN),
                ..p.clone()
            },
        ] {
            assert!(check_rx_step(&step(), &bad).is_err(), "{bad:?}");
        }
        assert!(exceeds(1.0, f64::NAN) && exceeds(f64::NAN, 1.0) && !exceeds(1.0, 1.0));
    }

    /// A `clkin_compare` step is bounded like a capture on each of its radios, and
    /// the refusal names the radio and the limit.
    #[test]
    fn clkin_compare_is_bounded_like_a_capture_on_both_radios() {
        let p = RxPolicy {
            max_duration_s: 2.0,
            max_sample_rate_hz: Some(2e6),
            max_gain_db: Some(20.0),
            max_iq_bytes: 1,
            ..RxPolicy::default()
        };
        let mut s = crate::ClkinCompareStep {
            devices: vec![
                "driver=rxsim,serial=m".into(),
                "driver=rxsim,serial=s".into(),
            ],
            frequency_hz: 100e6,
            sample_rate_hz: 2e6,
            gain_db: Some(crate::sweep::GainSpec::Total(20.0)),
            duration_s: 2.0,
            tone_hz: 100.2e6,
            tolerance_ppb: 10.0,
            clock_sources: None,
        };
        // At every limit, and no IQ is recorded whatever the IQ budget.
        check_clkin_compare(&s, &p).unwrap();
        check_step(
            &Step::ClkinCompare(s.clone()),
            &Policy {
                rx: p.clone(),
                tx: None,
                ..Default::default()
            },
        )
        .unwrap();
        s.duration_s = 2.5;
        assert!(matches!(check_clkin_compare(&s, &p),
            Err(Error::Policy(m)) if m.contains("MASTER: duration_s 2.5 exceeds rx.max_duration_s 2")));
        s.duration_s = 2.0;
        s.sample_rate_hz = 4e6;
        assert!(matches!(check_clkin_compare(&s, &p),
            Err(Error::Policy(m)) if m.contains("rx.max_sample_rate_hz")));
        s.sample_rate_hz = 2e6;
        s.gain_db = None;
        assert!(matches!(check_clkin_compare(&s, &p),
            Err(Error::Policy(m)) if m.contains("gain_db is required")));
        s.gain_db = Some(crate::sweep::GainSpec::Total(20.0));
        s.devices.pop();
        assert!(matches!(check_clkin_compare(&s, &p),
            Err(Error::Policy(m)) if m.contains("exactly two radios")));
    }
}
