//! Node-local policy (`.local/rxnode-policy.json`): its type, which is its
//! schema, its parsing and checks, and the verdict on a plan step.
use crate::error::Error;
use crate::plan::Step;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Node-local policy (`.local/rxnode-policy.json`), never taken from a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Receive limits.
    #[serde(default)]
    pub rx: RxPolicy,
    /// Transmit limits; absent (or no range): TX is refused.
    #[serde(default)]
    pub tx: Option<TxPolicy>,
    /// Radio self-tests (docs/protocol.md#8-radio-health); absent: no radio is
    /// tested on a schedule (`rxnode health test ARGS` still works).
    #[serde(default)]
    pub health: Option<HealthPolicy>,
    /// Status publication (docs/protocol.md#node-status); absent (the default):
    /// this node never pushes its status. Setting it is the operator's consent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusPolicy>,
    /// What a task must carry to be offered (docs/safety.md#who-wrote-it); absent:
    /// the defaults (no signature required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksPolicy>,
}

/// What a task must carry to be offered at all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TasksPolicy {
    /// Which tasks need a good signature by an allowed signer on the commit
    /// that last changed the task file (default `none`).
    #[serde(default)]
    pub require_signature: RequireSignature,
}

/// `tasks.require_signature`: which tasks need a good signature by an allowed signer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthPolicy {
    /// Seconds between self-tests of each radio (default 86400, at least 10);
    /// the watcher also tests at start and after a radio error.
    #[serde(default = "default_self_test_every")]
    #[schemars(range(min = 10))]
    pub self_test_every_s: f64,
    /// The radios to test, as SoapySDR device args (`driver=hackrf,serial=…`).
    #[serde(default)]
    #[schemars(length(max = 64), inner(length(min = 1, max = 512)))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusPolicy {
    /// Seconds between heartbeats, 0.2 to 86400 (a day).
    #[schemars(range(min = 0.2, max = 86400))]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RxPolicy {
    /// Longest capture, seconds (default 60).
    #[serde(default = "default_max_duration")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub max_duration_s: f64,
    /// Highest sample rate; absent: the device's maximum.
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub max_sample_rate_hz: Option<f64>,
    /// Highest RX gain; absent: the device's maximum.
    #[serde(default)]
    pub max_gain_db: Option<f64>,
    /// Most IQ bytes on disk per task (default 4 GiB).
    #[serde(default = "default_max_iq")]
    pub max_iq_bytes: u64,
    /// A radio's frequency calibration older than this (seconds, default 24 h) is
    /// stale: shown as such and never applied
    /// (docs/operator.md#calibrating-a-radio-without-a-generator).
    #[serde(default = "default_calibration_max_age")]
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub calibration_max_age_s: f64,
    /// Radio setting keys (SoapySDR `writeSetting`, as the driver spells them) an RX
    /// step may write; every other key is refused (default: none), as is a stream
    /// arg naming power that is not listed (docs/operator.md#radio-settings).
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub allowed_settings: Vec<String>,
    /// Radios of other hosts a task's receive step may use: SoapyRemote servers
    /// (`tcp://HOST:PORT`, exactly as in the device args' `remote=`) and network
    /// radios by the device arg that addresses them (`addr=192.168.10.2`,
    /// `hostname=pluto.lab`, `uri=ip:192.168.2.1`), compared as written. A radio
    /// `tx.allowed_remote_servers` lists may receive too. Empty (the default): a
    /// task reaches no other host.
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub allowed_remote_servers: Vec<String>,
}

/// `tx.allowed_ranges_hz`: `[lo, hi]` pairs of positive frequencies.
fn allowed_ranges_schema(_: &mut schemars::generate::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "[lo, hi] in Hz, lo < hi; everything a tone puts on air must fit in one",
        "type": "array",
        "items": {
            "type": "array",
            "prefixItems": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "number", "exclusiveMinimum": 0}
            ],
            "minItems": 2,
            "maxItems": 2
        }
    })
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
            allowed_remote_servers: Vec::new(),
        }
    }
}

/// Transmit limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TxPolicy {
    /// Allowed `[lo, hi]` ranges in Hz; everything a tone puts on air must fit in one.
    #[schemars(schema_with = "allowed_ranges_schema")]
    pub allowed_ranges_hz: Vec<[f64; 2]>,
    /// Highest TX gain.
    pub max_gain_db: f64,
    /// Longest transmission, seconds.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub max_duration_s: f64,
    /// Radios of other hosts that may transmit: SoapyRemote servers (`tcp://HOST:PORT`,
    /// exactly as in the device args' `remote=`) and network radios by the device arg
    /// that addresses them (`addr=192.168.10.2`, `uri=ip:192.168.2.1`). Empty (the
    /// default): no TX on a radio of another host.
    #[serde(default)]
    #[schemars(inner(length(min = 1)))]
    pub allowed_remote_servers: Vec<String>,
    /// The clock error, in ppm either way, assumed for a radio whose error was
    /// never measured (no calibration kept for it): the on-air span must stay
    /// inside an allowed range moved by this much. Default 20 ppm, a free-running
    /// crystal's tolerance (HackRF One, LimeSDR); a radio with a TCXO or a
    /// disciplined reference may say less; 0 judges it at its nominal frequency.
    #[serde(default = "TxPolicy::default_unmeasured_clock_ppm")]
    #[schemars(range(min = 0, max = 1000))]
    pub unmeasured_clock_ppm: f64,
}

impl TxPolicy {
    /// [`TxPolicy::unmeasured_clock_ppm`] when the policy does not say.
    pub const DEFAULT_UNMEASURED_CLOCK_PPM: f64 = 20.0;

    fn default_unmeasured_clock_ppm() -> f64 {
        Self::DEFAULT_UNMEASURED_CLOCK_PPM
    }
}

impl Policy {
    /// The largest policy file read, bytes: a policy is a few hundred bytes.
    pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

    /// The fix of a policy file that does not parse (a trailing comma, a wrong
    /// type, an unknown key): one wording for every command and `doctor`.
    pub fn repair_fix(file: &str) -> String {
        format!("repair {file} (docs/operator.md shows the fields)")
    }

    /// A policy file's bytes as text: UTF-8; a UTF-16 file (as an editor's "Unicode"
    /// saves it) is named as such. The error completes "policy FILE …".
    pub fn text_of(bytes: Vec<u8>) -> Result<String, String> {
        if let Some(enc) = crate::utf16_bom(&bytes) {
            return Err(format!(
                "is {enc} (it starts with that byte order mark); a policy is UTF-8 JSON: \
                 save it as UTF-8"
            ));
        }
        String::from_utf8(bytes).map_err(|e| {
            format!(
                "is not UTF-8 (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            )
        })
    }

    /// Parse and check a policy JSON text.
    ///
    /// A leading UTF-8 byte-order mark (as Windows editors and PowerShell 5 save
    /// files) is skipped: the policy is the operator's own file
    /// (docs/operator.md#files-saved-on-windows).
    pub fn from_json(text: &str) -> Result<Policy, Error> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
                    "{name} must be a positive finite number, got {}",
                    crate::compact(v)
                )))
            }
        };
        pos("rx.max_duration_s", self.rx.max_duration_s)?;
        for (i, a) in self.rx.allowed_remote_servers.iter().enumerate() {
            if a.trim().is_empty() || a.chars().any(char::is_control) {
                return Err(Error::InvalidPolicy(format!(
                    "rx.allowed_remote_servers[{i}] = {a:?} must name a server or a network radio \
                     (\"tcp://HOST:PORT\", \"addr=192.168.10.2\"), without control characters"
                )));
            }
        }
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
            let u = tx.unmeasured_clock_ppm;
            if !(u.is_finite() && (0.0..=1000.0).contains(&u)) {
                return Err(Error::InvalidPolicy(format!(
                    "tx.unmeasured_clock_ppm must be a number of ppm in [0, 1000], got {u}"
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

/// The node policy's verdict on one plan step, by the very check `rxnode run`
/// applies: each op's own, in its module (`plan/ops/`): [`crate::check_rx_step`]
/// for `rx_capture`, [`crate::check_tx_step`] for `tx_tone` (the run refuses a
/// whole RED run over it before anybody is asked to authorize), and so on;
/// `inventory` and `clock_check` have no policy limits. The approval prompt and `rxnode validate
/// --policy` show it, so the operator learns before `[A]` what the run would block.
///
/// A receive step whose radio is on another host is blocked unless the policy
/// lists that host ([`crate::check_reach`]).
pub fn check_step(step: &Step, policy: &Policy) -> Result<(), Error> {
    crate::reach::check_reach(step, policy)?;
    step.policy(policy)
}

/// `value` over `limit`, failing closed: a NaN on either side counts as over (a policy
/// built by hand, not parsed, may hold one).
pub(crate) fn exceeds(value: f64, limit: f64) -> bool {
    value.is_nan() || limit.is_nan() || value > limit
}

#[cfg(test)]
mod tests;
