//! The result value (docs/protocol.md#5-results): the statuses, the overall-status rule, the
//! records of `RX_RESULT.json` and [`RxResult`] itself.
//!
//! Overall status ([`overall_status`]), from the per-check statuses:
//!
//! 1. no checks: `NOT RUN`;
//! 2. every check `PASS`: `PASS` (the only way to get `PASS`);
//! 3. some `FAIL`: `PARTIAL` when some check is `BLOCKED`, `NOT RUN` or
//!    `PARTIAL` (not everything ran), else `FAIL`;
//! 4. no `FAIL` but some `PASS` or `PARTIAL`: `PARTIAL` (a `SKIP` beside a
//!    `PASS` also gives `PARTIAL`: a skipped step did not run);
//! 5. nothing passed or failed: `BLOCKED` if any check is blocked, else
//!    `NOT RUN` if any did not run, else `SKIP`.
use rxnode_interlock::{Approval, RiskLevel, ValidTask};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// ISO 8601 with seconds and an offset, as every result time.
const ISO_TIME: &str =
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$";
/// A full commit ID.
const COMMIT_ID: &str = "^[0-9a-fA-F]{40}$";
/// A task ID (docs/protocol.md#1-the-file).
const TASK_ID: &str = "^[A-Za-z0-9_-]{1,64}$";

/// The schema written by this build.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The result's file names, in the outbox and as published (docs/protocol.md#5-results).
pub const RESULT_JSON: &str = "RX_RESULT.json";
/// The Markdown twin of [`RESULT_JSON`].
pub const RESULT_MD: &str = "RX_RESULT.md";
/// The publication's record beside the two result files on `rx-node`.
pub(crate) const LOG_META: &str = "LOG_META.json";
/// The folder on `rx-node` holding every published result.
pub(crate) const RESULTS_DIR: &str = "rx-results";

/// A check or overall status. Serialized exactly as the protocol spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Status {
    /// Ran and met its criterion.
    #[serde(rename = "PASS")]
    Pass,
    /// Ran and did not meet its criterion.
    #[serde(rename = "FAIL")]
    Fail,
    /// Only part of it ran (interrupted, or some sub-steps blocked).
    #[serde(rename = "PARTIAL")]
    Partial,
    /// Deliberately not run (nothing to do).
    #[serde(rename = "SKIP")]
    Skip,
    /// Refused by policy, device not found, or a precondition.
    #[serde(rename = "BLOCKED")]
    Blocked,
    /// Never started.
    #[serde(rename = "NOT RUN")]
    NotRun,
}

impl Status {
    /// Every status, protocol spelling.
    pub const ALL: [Status; 6] = [
        Status::Pass,
        Status::Fail,
        Status::Partial,
        Status::Skip,
        Status::Blocked,
        Status::NotRun,
    ];

    /// The protocol spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Partial => "PARTIAL",
            Status::Skip => "SKIP",
            Status::Blocked => "BLOCKED",
            Status::NotRun => "NOT RUN",
        }
    }

    /// Parse the exact protocol spelling.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A status as a person types it on a command line: any case, `_` or `-` for
    /// the space (`partial`, `not-run`, `NOT_RUN`). Files keep the exact spelling
    /// ([`Status::parse`]).
    pub fn parse_typed(s: &str) -> Option<Status> {
        let spelled = s.trim().to_uppercase().replace(['_', '-'], " ");
        Status::parse(&spelled)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The overall status from the per-check statuses (rules in the module docs).
pub(crate) fn overall_status(checks: &[Check]) -> Status {
    use Status::*;
    if checks.is_empty() {
        return NotRun;
    }
    let any = |s: Status| checks.iter().any(|c| c.status == s);
    if checks.iter().all(|c| c.status == Pass) {
        return Pass;
    }
    let incomplete = any(Blocked) || any(NotRun) || any(Partial);
    if any(Fail) {
        return if incomplete { Partial } else { Fail };
    }
    if any(Pass) || any(Partial) {
        return Partial;
    }
    if any(Blocked) {
        Blocked
    } else if any(NotRun) {
        NotRun
    } else {
        Skip
    }
}

/// `approval` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ApprovalRecord {
    /// When it was approved (ISO 8601 with offset).
    #[schemars(regex(pattern = ISO_TIME))]
    pub at: String,
    /// SHA-256 of the approved task text.
    #[schemars(regex(pattern = "^[0-9a-fA-F]{64}$"))]
    pub task_sha256: String,
    /// The signature of the commit that last changed the task file, as checked
    /// when the task was approved or run (docs/safety.md#who-wrote-it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
}

/// `approval.signature` in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct SignatureRecord {
    /// The commit that last changed the task file.
    #[schemars(regex(pattern = "^[0-9a-f]{40}$"))]
    pub commit: String,
    /// `good`, `unsigned`, `openpgp` (signed, not verified), or why it did not
    /// count (`unknown key`, `bad signature`, …).
    #[schemars(schema_with = "signature_status_schema")]
    pub status: String,
    /// The allowed signer's principals (a good signature only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The SHA-256 of the signing key, hex (the bytes `ssh-keygen -l` shows
    /// as `SHA256:<base64>`; a good signature only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub key_sha256: Option<String>,
}

/// `authorization` in the result (RED tasks only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct AuthorizationRecord {
    /// `RF_TX` or `RED_OTHER`.
    #[schemars(schema_with = "authorization_kind_schema")]
    pub kind: String,
    /// When it was given (ISO 8601 with offset).
    #[schemars(regex(pattern = ISO_TIME))]
    pub at: String,
}

/// `node` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct NodeInfo {
    /// The node's name (`rxnode node set-name`), when one was set; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[A-Za-z0-9_-]{1,32}$"))]
    pub name: Option<String>,
    /// Host name, only when the operator allows it.
    pub hostname: Option<String>,
    /// This build's version.
    pub rxnode_version: String,
    /// libSoapySDR's version, when it was loaded.
    pub soapysdr_version: Option<String>,
}

impl NodeInfo {
    /// This build, no host name, SoapySDR unknown.
    pub fn this_build() -> NodeInfo {
        NodeInfo {
            name: None,
            hostname: None,
            rxnode_version: env!("CARGO_PKG_VERSION").to_owned(),
            soapysdr_version: None,
        }
    }
}

/// `timeline` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub(crate) struct Timeline {
    /// When the run started (ISO 8601, seconds, with offset), `null` if it never did.
    #[schemars(regex(pattern = ISO_TIME))]
    pub started_at: Option<String>,
    /// When it ended; `null` if it never started. For a run, `started_at` plus
    /// the run's duration on the monotonic clock, so never before `started_at`.
    #[schemars(regex(pattern = ISO_TIME))]
    pub completed_at: Option<String>,
    /// How far the wall clock was stepped during the run, s (the wall clock's
    /// elapsed time minus the monotonic clock's), when more than a second; absent
    /// otherwise (docs/safety.md#monotonic-time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_step_s: Option<f64>,
}

/// Which reading of a timeline stands for both when the wall clock was stepped
/// back between them ([`Timeline::order_after_clock_step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// `started_at` (the end is the unknown one).
    Start,
    /// `completed_at` (the start is the unknown one).
    End,
}

impl Timeline {
    /// A `completed_at` that reads before `started_at`: the wall clock was
    /// stepped back between the two readings (NTP setting right a clock that
    /// was ahead), so one of them is not known. The reading `keep` stands for
    /// both, and the line returned (for the result's errors) names both
    /// readings; `None`, nothing changed, when the two are in order or either
    /// cannot be read. A result is never left out of order, which no validator
    /// accepts and no `publish` sends.
    pub(crate) fn order_after_clock_step(&mut self, keep: Keep) -> Option<String> {
        let parse = |s: &str| {
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
        };
        let (start, end) = (self.started_at.clone()?, self.completed_at.clone()?);
        if parse(&end)? >= parse(&start)? {
            return None;
        }
        let (unknown, stands) = match keep {
            Keep::Start => {
                self.completed_at = Some(start.clone());
                ("when it ended", "its start")
            }
            Keep::End => {
                self.started_at = Some(end.clone());
                ("when it started", "its end")
            }
        };
        Some(format!(
            "the wall clock was stepped back: the end was read as {end}, before the start read as \
             {start}; {unknown} is not known, and {stands} stands for it"
        ))
    }
}

/// A run's two clocks, read together at its start: the wall clock names the
/// start, the monotonic clock measures everything after it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunClock {
    wall0: time::OffsetDateTime,
    mono0: std::time::Instant,
}

/// A wall-clock step smaller than this is not recorded (NTP slews and rounding).
const WALL_CLOCK_STEP_MIN_S: f64 = 1.0;

impl RunClock {
    /// Read both clocks now.
    pub(crate) fn start() -> RunClock {
        RunClock {
            wall0: time::OffsetDateTime::now_utc(),
            mono0: std::time::Instant::now(),
        }
    }

    /// When the run started (ISO 8601 UTC).
    pub(crate) fn started_at(&self) -> String {
        iso_seconds(self.wall0)
    }

    /// The timeline of a run that ends now.
    pub(crate) fn timeline(&self) -> Timeline {
        self.timeline_at(time::OffsetDateTime::now_utc(), std::time::Instant::now())
    }

    /// The timeline of a run that ends when the wall clock reads `wall` and the
    /// monotonic clock `mono`: `completed_at` is `started_at` plus the monotonic
    /// duration; a disagreeing wall clock is recorded as a step.
    pub(crate) fn timeline_at(
        &self,
        wall: time::OffsetDateTime,
        mono: std::time::Instant,
    ) -> Timeline {
        let elapsed = mono.saturating_duration_since(self.mono0);
        let end = self.wall0 + elapsed;
        let step = (wall - end).as_seconds_f64();
        Timeline {
            started_at: Some(self.started_at()),
            completed_at: Some(iso_seconds(end)),
            wall_clock_step_s: (step.abs() >= WALL_CLOCK_STEP_MIN_S)
                .then(|| (step * 1e3).round() / 1e3),
        }
    }
}

/// `t` as ISO 8601 UTC with seconds, as every result time.
fn iso_seconds(t: time::OffsetDateTime) -> String {
    let fmt =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]+00:00");
    t.format(&fmt)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// One entry of `checks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Check {
    /// What was checked, e.g. `step 2: rx_capture` or `capture 1: clkin`.
    pub name: String,
    /// Its status.
    pub status: Status,
    /// One line: why (limits named, measured values).
    pub detail: String,
}

impl Check {
    /// A check.
    pub fn new(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status,
            detail: detail.into(),
        }
    }
}

/// The whole `RX_RESULT.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct RxResult {
    /// This file's version, [`SCHEMA_VERSION`].
    #[schemars(extend("const" = SCHEMA_VERSION), description = "This file's version: 1.")]
    pub schema_version: u32,
    /// The task.
    #[schemars(regex(pattern = TASK_ID))]
    pub task_id: String,
    /// Its title.
    pub task_title: String,
    /// Overall status (normally [`overall_status`] of `checks`).
    #[schemars(
        description = "Overall status, from the checks' statuses (docs/protocol.md#5-results)."
    )]
    pub status: Status,
    /// Effective risk level of the task.
    #[schemars(schema_with = "risk_level_schema")]
    pub risk_level: RiskLevel,
    /// The watched branch.
    pub source_branch: String,
    /// Full SHA of the commit that held the task; `null` for a local dry run.
    #[schemars(regex(pattern = COMMIT_ID))]
    pub source_commit: Option<String>,
    /// `EXPECTED_HEAD` of the task.
    #[schemars(regex(pattern = COMMIT_ID))]
    pub expected_head: String,
    /// The approval, if recorded.
    pub approval: Option<ApprovalRecord>,
    /// The RED authorization, if any.
    pub authorization: Option<AuthorizationRecord>,
    /// The node.
    pub node: NodeInfo,
    /// Start and end.
    pub timeline: Timeline,
    /// One status per check.
    pub checks: Vec<Check>,
    /// The `inventory` step's output, if it ran.
    #[serde(serialize_with = "super::sections::sorted")]
    pub inventory: Option<super::sections::Inventory>,
    /// Capture summaries of the capture engine (IQ paths relative to the checkout).
    #[serde(serialize_with = "super::sections::sorted")]
    pub captures: Vec<super::sections::CaptureEntry>,
    /// TX window and parameters, when a tone was transmitted.
    #[serde(serialize_with = "super::sections::sorted")]
    pub tx: Option<super::sections::TxRecord>,
    /// Errors met, one line each.
    pub errors: Vec<String>,
    /// `rx_sweep` results (built by `crate::exec::sweep`): hop
    /// table, band peaks, noise floor, failed hops, the CSV's name, size and SHA-256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "rx_sweep results (docs/operator.md#sweeps-rxnode-sweep); present only when a plan has one"
    )]
    pub sweeps: Vec<super::sections::sweep::SweepEntry>,
    /// `clkin_compare` results (built by `crate::exec::compare`): both radios, the
    /// relative frequency of SLAVE to MASTER, its uncertainty, the verdict and the
    /// phase trace (docs/protocol.md#clkin_compare).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "one entry per clkin_compare step (docs/protocol.md#clkin_compare); present only when a plan has one"
    )]
    pub clkin_compares: Vec<super::sections::compare::CompareEntry>,
    /// `freq_cal` results, one per step (built by `crate::exec::freq_cal`): the
    /// radio's error in ppm with its uncertainty, method, cell, confidence and the
    /// bursts behind it (docs/protocol.md#freq_cal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "one entry per freq_cal step (docs/protocol.md#freq_cal); ppm, uncertainty_ppm, cell and confidence only when the signal was found"
    )]
    pub freq_cal: Vec<super::sections::freq_cal::FreqCalEntry>,
    /// A run that started and did not finish, as the run journal knows it
    /// (docs/protocol.md#interrupted-runs); its status is then `FAIL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<crate::store::journal::Interrupted>,
    /// A bounded summary of the pictures the node drew (decimated spectra and
    /// heatmaps), so the main PC draws them from the published result
    /// (docs/protocol.md#pictures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pictures: Option<super::pictures::Pictures>,
}

/// `risk_level`: the task's level as the protocol spells it.
fn risk_level_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": ["GREEN", "YELLOW", "RED"]})
}

/// `authorization.kind`.
fn authorization_kind_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": ["RF_TX", "RED_OTHER"]})
}

/// `approval.signature.status`: a verdict of the signature check
/// (docs/safety.md#who-wrote-it).
fn signature_status_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"enum": [
        "good",
        "unsigned",
        "openpgp",
        "unknown key",
        "bad signature",
        "key not allowed for this namespace",
        "expired",
        "not yet valid",
        "malformed signature",
        "history not available"
    ]})
}

impl RxResult {
    /// The result of a task before (or without) running it: status `NOT RUN`.
    /// A manual task (no `rx-plan`) keeps this shape for the operator to fill in.
    pub fn manual_skeleton(
        task: &ValidTask,
        commit: &str,
        approval: Option<&Approval>,
    ) -> RxResult {
        let manual = task.plan().is_none();
        let checks = if manual {
            vec![Check::new(
                "manual task",
                Status::NotRun,
                "no rx-plan block: nothing touches hardware; the operator fills in the result",
            )]
        } else {
            task.plan()
                .map(|p| {
                    p.steps
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            Check::new(
                                format!("step {}: {}", i + 1, s.op()),
                                Status::NotRun,
                                "not started",
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        RxResult {
            schema_version: SCHEMA_VERSION,
            task_id: task.id().to_string(),
            task_title: task.header().task_title.clone(),
            status: overall_status(&checks),
            risk_level: task.risk(),
            source_branch: task.header().source_branch.clone(),
            source_commit: (!commit.is_empty()).then(|| commit.to_owned()),
            expected_head: task.header().expected_head.clone(),
            approval: approval.map(|a| ApprovalRecord {
                at: a.at.clone(),
                task_sha256: a.task_sha256.clone(),
                signature: None,
            }),
            authorization: None,
            node: NodeInfo::this_build(),
            timeline: Timeline::default(),
            checks,
            inventory: None,
            captures: Vec::new(),
            tx: None,
            errors: Vec::new(),
            sweeps: Vec::new(),
            clkin_compares: Vec::new(),
            freq_cal: Vec::new(),
            interrupted: None,
            pictures: None,
        }
    }

    /// Set `status` from the checks ([`overall_status`]); call after the last check.
    pub fn recompute_status(&mut self) {
        self.status = overall_status(&self.checks);
    }

    /// The exact bytes of `RX_RESULT.json`: pretty JSON and a final newline.
    /// This result with every absolute path in it made relative to `checkout`, or
    /// withheld where it is outside (docs/safety.md#honest-results): rxnode never
    /// writes a result its own validator refuses, whatever a driver's or the OS's
    /// message names.
    pub(crate) fn with_relative_paths(self, checkout: &Path) -> RxResult {
        let Ok(mut v) = serde_json::to_value(&self) else {
            return self;
        };
        if super::abs_path::withhold_absolute_paths(&mut v, checkout) == 0 {
            return self;
        }
        match serde_json::from_value(v) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("cannot rebuild the result without absolute paths: {e}");
                self
            }
        }
    }

    pub fn to_json_bytes(&self) -> Vec<u8> {
        // Serializing plain structs, strings, numbers and JSON values cannot fail
        // except on non-finite floats inside `Value`s, which serde_json maps to null.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            tracing::error!("cannot serialize result: {e}");
            String::from("{}")
        });
        s.push('\n');
        s.into_bytes()
    }
}

/// File name of step `n`'s phase-difference image (`clkin_compare`) in the outbox
/// (never published).
pub(crate) fn compare_png_name(n: usize) -> String {
    format!("CLKIN_COMPARE_{n}.png")
}

/// File name of capture `n`'s spectrum image in the outbox (never published).
pub(crate) fn spectrum_png_name(n: usize) -> String {
    format!("SPECTRUM_{n}.png")
}

#[cfg(test)]
mod tests {
    /// A wall clock stepped back an hour mid-run: `completed_at` is still
    /// `started_at` plus the monotonic duration, and the step is recorded.
    #[test]
    fn a_wall_clock_step_is_recorded_and_the_timeline_stays_in_order() {
        let c = RunClock::start();
        let mono = c.mono0 + std::time::Duration::from_secs_f64(12.4);
        let wall = c.wall0 + time::Duration::seconds_f64(12.4 - 3600.0);
        let t = c.timeline_at(wall, mono);
        let parse = |s: &str| {
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .expect("iso")
        };
        let (s, e) = (
            parse(t.started_at.as_deref().expect("started")),
            parse(t.completed_at.as_deref().expect("completed")),
        );
        assert!(e >= s && (e - s).whole_seconds() >= 11, "{t:?}");
        assert_eq!(t.wall_clock_step_s, Some(-3600.0));
        // No step: nothing recorded.
        let t = c.timeline_at(
            c.wall0 + time::Duration::seconds(3),
            c.mono0 + std::time::Duration::from_secs(3),
        );
        assert_eq!(t.wall_clock_step_s, None);
    }

    use super::*;
    use crate::result::test_util::{task, COMMIT, HEAD};
    use crate::result::validate::TOP_KEYS;

    /// An end read before its start (the wall clock stepped back between the two
    /// readings) is put in order: the reading kept stands for both, and the line
    /// returned names both readings; an ordered timeline is left as it is.
    #[test]
    fn an_end_read_before_its_start_after_a_clock_step_is_put_in_order_naming_both() {
        let (start, end) = ("2026-01-01T10:00:00+00:00", "2026-01-01T09:00:00.306+00:00");
        let stepped = || Timeline {
            started_at: Some(start.into()),
            completed_at: Some(end.into()),
            wall_clock_step_s: None,
        };
        let mut t = stepped();
        let e = t.order_after_clock_step(Keep::Start).expect("a line");
        assert_eq!(t.completed_at.as_deref(), Some(start));
        assert_eq!(t.started_at.as_deref(), Some(start));
        assert!(
            e.contains(start) && e.contains(end) && e.contains("stepped back"),
            "{e}"
        );
        let mut t = stepped();
        t.order_after_clock_step(Keep::End).expect("a line");
        assert_eq!(t.started_at.as_deref(), Some(end));
        let mut ordered = Timeline {
            started_at: Some(end.into()),
            completed_at: Some(start.into()),
            wall_clock_step_s: None,
        };
        let before = ordered.clone();
        assert_eq!(ordered.order_after_clock_step(Keep::Start), None);
        assert_eq!(ordered, before);
    }

    #[test]
    fn status_spelling() {
        let s: Vec<String> = Status::ALL
            .iter()
            .map(|s| serde_json::to_string(s).unwrap())
            .collect();
        assert_eq!(
            s,
            [
                "\"PASS\"",
                "\"FAIL\"",
                "\"PARTIAL\"",
                "\"SKIP\"",
                "\"BLOCKED\"",
                "\"NOT RUN\""
            ]
        );
        for st in Status::ALL {
            assert_eq!(Status::parse(st.as_str()), Some(st));
            let back: Status = serde_json::from_str(&serde_json::to_string(&st).unwrap()).unwrap();
            assert_eq!(back, st);
        }
        assert!(serde_json::from_str::<Status>("\"pass\"").is_err());
        assert!(serde_json::from_str::<Status>("\"NOT_RUN\"").is_err());
    }

    #[test]
    fn overall_rules() {
        use Status::*;
        let o = |s: &[Status]| {
            overall_status(
                &s.iter()
                    .map(|s| Check::new("c", *s, ""))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(o(&[]), NotRun);
        assert_eq!(o(&[Pass]), Pass);
        assert_eq!(o(&[Pass, Pass]), Pass);
        assert_eq!(o(&[Pass, Fail]), Fail);
        assert_eq!(o(&[Fail, Skip]), Fail);
        assert_eq!(o(&[Pass, Fail, Blocked]), Partial);
        assert_eq!(o(&[Fail, NotRun]), Partial);
        assert_eq!(o(&[Pass, Blocked]), Partial);
        assert_eq!(o(&[Pass, NotRun]), Partial);
        assert_eq!(o(&[Pass, Skip]), Partial);
        assert_eq!(o(&[Partial]), Partial);
        assert_eq!(o(&[Blocked]), Blocked);
        assert_eq!(o(&[Blocked, NotRun, Skip]), Blocked);
        assert_eq!(o(&[NotRun, Skip]), NotRun);
        assert_eq!(o(&[Skip]), Skip);
        // Nothing that did not run is ever PASS.
        for s in [Fail, Partial, Skip, Blocked, NotRun] {
            assert_ne!(o(&[Pass, Pass, s]), Pass);
        }
    }

    #[test]
    fn skeletons() {
        let t = task(false);
        let r = RxResult::manual_skeleton(&t, "", None);
        assert_eq!(r.status, Status::NotRun);
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.source_commit, None);
        assert_eq!(r.approval, None);
        assert_eq!(r.checks.len(), 1);
        assert_eq!(r.expected_head, HEAD);
        assert_eq!(r.risk_level, RiskLevel::Yellow);
        let v: serde_json::Value = serde_json::from_slice(&r.to_json_bytes()).unwrap();
        for k in TOP_KEYS {
            assert!(v.get(*k).is_some(), "key {k} missing");
        }
        assert_eq!(v["status"], "NOT RUN");
        assert_eq!(v["timeline"]["started_at"], serde_json::Value::Null);
        let t = task(true);
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        let r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
        assert_eq!(r.checks.len(), 2);
        assert!(r.checks.iter().all(|c| c.status == Status::NotRun));
        assert_eq!(r.approval.as_ref().unwrap().task_sha256, t.sha256());
        assert_eq!(r.source_commit.as_deref(), Some(COMMIT));
    }

    proptest::proptest! {
        /// PASS exactly when there are checks and all passed; FAIL only when
        /// something failed; never PASS with anything that did not run.
        #[test]
        fn overall_is_honest(idx in proptest::collection::vec(0usize..6, 0..8)) {
            let checks: Vec<Check> = idx.iter().map(|i| Check::new("c", Status::ALL[*i], "")).collect();
            let o = overall_status(&checks);
            let all_pass = !checks.is_empty() && checks.iter().all(|c| c.status == Status::Pass);
            proptest::prop_assert_eq!(o == Status::Pass, all_pass);
            if o == Status::Fail {
                proptest::prop_assert!(checks.iter().any(|c| c.status == Status::Fail));
            }
            if checks.iter().any(|c| c.status == Status::Fail) {
                proptest::prop_assert!(matches!(o, Status::Fail | Status::Partial));
            }
        }
    }
}
