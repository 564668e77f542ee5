//! `rxnode run <TASK_ID>` against a real bare origin and the
//! simulated radio `rxsim`, observed from outside through `RXSIM_EVENT_LOG`.
//!
//! Every test builds a fresh lab (bare origin, a main-PC clone that posts the
//! task, the RX clone), approves with `rxnode watch --once` fed `A`, then runs
//! `rxnode --sim run ID` and checks exit codes, the ledger, the outbox, the
//! result files and the radio event log.
use crate::util;
use crate::util::{git, read_lines, sha256_file, show, spawn_fed, text, unix_now, Lab};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};

mod interrupts;
mod json_only;
mod progress;
mod published;
mod radio_lock;
mod red;
mod rerun;
#[cfg(unix)]
mod unwritten;
mod yellow;

// ---------------------------------------------------------------- typed result

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct RxResultT {
    schema_version: u32,
    task_id: String,
    task_title: String,
    status: String,
    risk_level: String,
    source_branch: String,
    source_commit: Option<String>,
    expected_head: String,
    approval: Option<ApprovalT>,
    authorization: Option<AuthorizationT>,
    node: NodeT,
    timeline: TimelineT,
    checks: Vec<CheckT>,
    inventory: Option<serde_json::Value>,
    captures: Vec<CaptureT>,
    tx: Option<TxT>,
    errors: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct ApprovalT {
    at: String,
    task_sha256: String,
}

#[derive(Debug, Deserialize)]
struct AuthorizationT {
    kind: String,
    at: String,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct NodeT {
    rxnode_version: String,
    soapysdr_version: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TimelineT {
    started_at: Option<String>,
    completed_at: Option<String>,
    #[serde(default)]
    wall_clock_step_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct CheckT {
    name: String,
    status: String,
    detail: String,
}

/// A capture entry: a full capture summary, or a `{step, status, detail}` stub
/// for a step that never reached the radio.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct CaptureT {
    status: String,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    device: Option<serde_json::Value>,
    #[serde(default)]
    samples_requested: Option<u64>,
    #[serde(default)]
    samples_received: Option<u64>,
    #[serde(default)]
    overflows: Option<u64>,
    #[serde(default)]
    cancelled: Option<bool>,
    #[serde(default)]
    requested: Option<serde_json::Value>,
    #[serde(default)]
    actual: Option<ActualT>,
    #[serde(default)]
    peaks: Vec<PeakT>,
    #[serde(default)]
    noise_floor_db: Option<f64>,
    #[serde(default)]
    clkin: Option<ClkinT>,
    #[serde(default)]
    iq_files: Vec<IqFileT>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct ActualT {
    frequency_hz: f64,
    sample_rate_hz: f64,
    gain_db: f64,
    clock_source: Option<String>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct PeakT {
    frequency_hz: f64,
    power_db: f64,
    snr_db: f64,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct ClkinT {
    tone_hz: f64,
    ppm: Option<f64>,
    ppm_uncertainty: Option<f64>,
    tolerance_ppm: f64,
    status: String,
    detail: String,
}

#[derive(Debug, Deserialize)]
struct IqFileT {
    path: String,
    bytes: u64,
    sha256: String,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct TxT {
    device: String,
    frequency_hz: f64,
    tone_offset_hz: f64,
    gain_db: f64,
    samples_sent: u64,
    started_at: String,
    stopped_at: String,
    on_air_s: f64,
    cancelled: bool,
    samples_planned: u64,
    past_permit_s: f64,
    state_unknown_s: Option<f64>,
}

// ---------------------------------------------------------------- the rig

const TX_POLICY_OK: &str = r#"{"rx": {"max_duration_s": 10},
 "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#;

struct Rig {
    lab: Lab,
    events: PathBuf,
}

impl Rig {
    fn new() -> Rig {
        let lab = Lab::new();
        let events = lab.events_log();
        Rig { lab, events }
    }

    /// Post a task with `overrides` and an optional `rx-plan` JSON, approve it
    /// (`A`) with the watcher; returns the task text as posted.
    fn post_and_approve(&self, id: &str, overrides: &[(&str, &str)], plan: Option<&str>) -> String {
        self.lab.post_and_approve(id, overrides, plan)
    }

    fn post(&self, id: &str, overrides: &[(&str, &str)], plan: Option<&str>) -> String {
        let t = self.lab.plan_task(id, overrides, plan);
        self.lab.post(&t);
        t
    }

    fn set_policy(&self, json: &str) {
        self.lab.set_policy(json);
    }

    fn remove_policy(&self) {
        self.lab.remove_policy();
    }

    fn spawn_run(&self, id: &str, stdin: Option<&str>) -> Child {
        self.spawn_run_bytes(id, stdin.map(str::as_bytes))
    }

    fn spawn_run_bytes(&self, id: &str, stdin: Option<&[u8]>) -> Child {
        spawn_fed(
            self.lab
                .rxnode()
                .args(["--sim", "run", id])
                .env("RXSIM_EVENT_LOG", &self.events)
                .env("NO_COLOR", "1"),
            stdin.unwrap_or_default(),
        )
    }

    /// `rxnode --sim run ID` with `stdin` typed (then EOF); asserts that HEAD,
    /// branch, index and `git status` of the RX checkout are unchanged.
    fn run(&self, id: &str, stdin: Option<&str>) -> Output {
        let before = self.lab.snapshot();
        let out = self.spawn_run(id, stdin).wait_with_output().unwrap();
        assert_eq!(before, self.lab.snapshot(), "run {id} changed the checkout");
        assert_eq!(self.lab.porcelain(), "", "git status not clean after run");
        out
    }

    fn events(&self) -> Vec<String> {
        read_lines(&self.events)
    }

    /// Event lines `<unix s> pid=<pid> <event> [RX|TX] serial=<serial>` with direction `dir`.
    fn stream_events(&self, dir: &str) -> Vec<(String, String)> {
        self.events()
            .iter()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                assert!(
                    f.len() >= 4 && f[0].parse::<f64>().is_ok() && f[1].starts_with("pid="),
                    "malformed event line {l:?}"
                );
                (f.len() == 5 && f[3] == dir).then(|| {
                    (
                        f[2].to_owned(),
                        f[4].trim_start_matches("serial=").to_owned(),
                    )
                })
            })
            .collect()
    }

    /// The time stamp of the first event line ending in `what`.
    fn event_time(&self, what: &str) -> Option<f64> {
        self.events()
            .iter()
            .find(|l| l.ends_with(&format!(" {what}")))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
    }

    fn tx_events(&self) -> Vec<(String, String)> {
        self.stream_events("TX")
    }

    fn outbox(&self, id: &str) -> PathBuf {
        self.lab.outbox(id)
    }

    fn result(&self, id: &str) -> RxResultT {
        let p = self.outbox(id).join("RX_RESULT.json");
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// Every file under the outbox folder of `id` with its content hash.
    fn outbox_listing(&self, id: &str) -> Vec<(String, String)> {
        let dir = self.outbox(id);
        let mut v = vec![];
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let b = std::fs::read(e.path()).unwrap_or_default();
                v.push((
                    e.file_name().to_string_lossy().into_owned(),
                    hex::encode(Sha256::digest(&b)),
                ));
            }
        }
        v.sort();
        v
    }

    fn refused_count(&self, id: &str) -> usize {
        self.lab.count_events("refused", id)
    }
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

/// Assert a refusal: exit 3, one more ledger `refused` entry, nothing new on
/// the TX side of the radio, the outbox untouched.
fn assert_refused(rig: &Rig, id: &str, stdin: Option<&str>, why: &str) -> Output {
    let refused_before = rig.refused_count(id);
    let tx_before = rig.tx_events().len();
    let outbox_before = rig.outbox_listing(id);
    let out = rig.run(id, stdin);
    assert_eq!(
        code(&out),
        Some(3),
        "{why}: must be refused\n{}",
        show(&out)
    );
    assert_eq!(
        rig.refused_count(id),
        refused_before + 1,
        "{why}: one ledger `refused` entry"
    );
    assert_eq!(
        rig.tx_events().len(),
        tx_before,
        "{why}: no TX stream may appear in the event log: {:?}",
        rig.tx_events()
    );
    assert_eq!(
        rig.outbox_listing(id),
        outbox_before,
        "{why}: the outbox must not change"
    );
    out
}

fn yellow() -> Vec<(&'static str, &'static str)> {
    vec![
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "YELLOW"),
    ]
}

fn red_tx() -> Vec<(&'static str, &'static str)> {
    vec![
        ("HARDWARE_ACCESS", "YES"),
        ("RF_TX", "YES"),
        ("RISK_LEVEL", "RED"),
    ]
}

fn tx_plan() -> &'static str {
    r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
      "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.3}]}"#
}

fn parse_iso(s: &str) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{s:?} is not ISO 8601 with offset: {e}"))
}

/// `run` of a task that is not approved names the fix for where it stands: unknown
/// (`run` before any `watch`) → `rxnode watch`; pending → answer A at the
/// watcher's prompt or `rxnode review ID`; deferred → `rxnode review ID`. Nothing
/// is run, exit 3.
#[test]
fn run_of_a_task_not_approved_names_the_fix_for_where_it_stands() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_NA", &lab.main_head(), &[]));
    let cases = [
        ("", "it is unknown to this node: no watcher here has seen it — fix: `rxnode watch`"),
        ("s\n", "it is pending: nobody approved it — fix: answer A at the watcher's prompt (`rxnode watch`), or `rxnode review T_NA`"),
        ("d\n", "it is deferred — fix: `rxnode review T_NA` and answer A (approve)"),
    ];
    for (answer, want) in cases {
        if !answer.is_empty() {
            expect_exit!(lab.watch_once(answer), 0);
        }
        let out = lab.run(&["--sim", "run", "T_NA"], "");
        expect_exit!(out, 3, "{answer:?}");
        let se = text(&out.stderr);
        assert!(
            se.contains(&format!("task T_NA is not approved: {want}")),
            "{answer:?}: {se}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(lab.events_log()).unwrap_or_default(),
        ""
    );
}
