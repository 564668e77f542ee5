//! Issue 6 (executor): `rxnode run <TASK_ID>` against a real bare origin and the
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

fn md_row_status(md: &str, key: &str) -> Option<String> {
    md.lines()
        .find(|l| l.starts_with(&format!("| {key} |")))
        .and_then(|l| l.split('|').nth(2))
        .map(|s| s.trim().to_owned())
}

fn parse_iso(s: &str) -> time::OffsetDateTime {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{s:?} is not ISO 8601 with offset: {e}"))
}

// ---------------------------------------------------------------- 1. YELLOW

/// Issue 6 acceptance: an approved YELLOW plan runs with complete, honest results.
#[test]
fn yellow_plan_runs_with_complete_honest_results() {
    let rig = Rig::new();
    let id = "RUN_YELLOW_1";
    let plan = r#"{"steps": [
      {"op": "inventory"},
      {"op": "rx_capture", "device": "driver=rxsim,serial=A,ext_ref=1,tone_hz=100100000",
       "clock_source": "external", "frequency_hz": 100.0e6, "sample_rate_hz": 1.0e6,
       "gain_db": 20, "duration_s": 0.4, "fft_size": 2048, "record_iq": true,
       "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}},
      {"op": "rx_capture", "device": "driver=rxsim,serial=B,ppm=2.5,tone_hz=100100000",
       "clock_source": "internal", "frequency_hz": 100.0e6, "sample_rate_hz": 1.0e6,
       "gain_db": 20, "duration_s": 0.4, "fft_size": 2048,
       "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}}
    ]}"#;
    let posted = rig.post_and_approve(id, &yellow(), Some(plan));
    let commit = rig.lab.main_head();
    let head_before = git(&rig.lab.rx, &["rev-parse", "HEAD"]);
    let branch_before = git(&rig.lab.rx, &["symbolic-ref", "HEAD"]);

    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(1), "overall FAIL ⇒ exit 1\n{}", show(&out));
    assert_eq!(git(&rig.lab.rx, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(git(&rig.lab.rx, &["symbolic-ref", "HEAD"]), branch_before);

    let r = rig.result(id);
    assert_eq!(r.schema_version, 1);
    assert_eq!(r.task_id, id);
    assert_eq!(r.task_title, "Check the lab clock");
    assert_eq!(r.status, "FAIL", "{r:#?}");
    assert_eq!(r.risk_level, "YELLOW");
    assert_eq!(r.source_branch, util::BRANCH);
    assert_eq!(r.source_commit.as_deref(), Some(commit.as_str()));
    assert!(posted.contains(&format!("EXPECTED_HEAD = {}", r.expected_head)));
    let approval = r.approval.as_ref().expect("approval record");
    assert_eq!(
        approval.task_sha256,
        hex::encode(Sha256::digest(posted.as_bytes()))
    );
    parse_iso(&approval.at);
    assert!(r.authorization.is_none(), "YELLOW needs no authorization");
    assert!(!r.node.rxnode_version.is_empty());
    let t0 = parse_iso(r.timeline.started_at.as_deref().unwrap());
    let t1 = parse_iso(r.timeline.completed_at.as_deref().unwrap());
    assert!(t0 <= t1, "timeline order");

    // Checks: one per step, in order, honest statuses.
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["PASS", "PASS", "FAIL"], "{:#?}", r.checks);
    assert!(r.checks[0].name.contains("inventory"));
    assert!(r.checks[1].name.contains("rx_capture"));
    let inv = r.inventory.as_ref().expect("inventory recorded");
    assert!(
        inv["devices"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d.to_string().contains("rxsim"))),
        "inventory lists the simulated radio: {inv}"
    );

    // Captures: A locked to the reference, B free-running 2.5 ppm fast.
    assert_eq!(r.captures.len(), 2);
    let a = &r.captures[0];
    let b = &r.captures[1];
    assert_eq!(a.device.as_ref().unwrap()["serial"], "A");
    assert_eq!(b.device.as_ref().unwrap()["serial"], "B");
    for (c, clock) in [(a, "external"), (b, "internal")] {
        let req = c.requested.as_ref().expect("requested settings");
        assert_eq!(req["frequency_hz"].as_f64(), Some(100.0e6));
        assert_eq!(req["sample_rate_hz"].as_f64(), Some(1.0e6));
        let act = c.actual.as_ref().expect("settings read back");
        assert!((act.frequency_hz - 100.0e6).abs() < 1.0, "{act:?}");
        assert!((act.sample_rate_hz - 1.0e6).abs() < 1.0, "{act:?}");
        assert!((act.gain_db - 20.0).abs() < 1e-6, "{act:?}");
        assert_eq!(act.clock_source.as_deref(), Some(clock));
        assert!(c.noise_floor_db.is_some());
        // The 100.1 MHz reference tone is the strongest peak (within 2 ppm·f + a bin).
        let p = c.peaks.first().expect("PSD peaks");
        assert!(
            (p.frequency_hz - 100.1e6).abs() < 1_000.0,
            "tone peak at {} Hz",
            p.frequency_hz
        );
        assert!(p.snr_db > 20.0, "{p:?}");
        assert_eq!(c.samples_requested, Some(400_000));
        assert_eq!(c.samples_received, c.samples_requested);
        assert_eq!(c.overflows, Some(0));
    }
    let ka = a.clkin.as_ref().expect("CLKIN on A");
    assert_eq!(ka.status, "PASS", "{ka:#?}");
    let pa = ka.ppm.expect("ppm measured on A");
    assert!(pa.abs() < 0.05, "A is locked: {pa} ppm");
    assert!((ka.tone_hz - 100.1e6).abs() < 1.0);
    let kb = b.clkin.as_ref().expect("CLKIN on B");
    assert_eq!(kb.status, "FAIL", "{kb:#?}");
    let pb = kb.ppm.expect("ppm measured on B");
    assert!((pb - 2.5).abs() < 0.05, "B is 2.5 ppm fast, measured {pb}");
    assert!(kb.ppm_uncertainty.is_some_and(|u| u < 0.5));
    assert_eq!(a.status, "PASS");
    assert_eq!(b.status, "FAIL");

    // IQ: only A recorded; files exist, relative paths, sizes and hashes match.
    assert!(b.iq_files.is_empty());
    assert!(!a.iq_files.is_empty());
    let iq_dir = format!(".local/rx_iq/{id}/");
    let mut data_bytes = 0;
    for f in &a.iq_files {
        assert!(
            f.path.starts_with(&iq_dir) && !f.path.contains(".."),
            "relative IQ path under {iq_dir}: {}",
            f.path
        );
        assert!(!Path::new(&f.path).is_absolute());
        let on_disk = rig.lab.rx.join(&f.path);
        let meta = std::fs::metadata(&on_disk).unwrap_or_else(|e| panic!("{}: {e}", f.path));
        assert_eq!(meta.len(), f.bytes, "{}", f.path);
        assert_eq!(sha256_file(&on_disk), f.sha256, "{}", f.path);
        if f.path.ends_with(".sigmf-data") {
            data_bytes = f.bytes;
        }
    }
    assert_eq!(data_bytes, 400_000 * 8, "cf32 samples on disk");

    // The radio: every RX stream opened was closed, no TX at all.
    let rx = rig.stream_events("RX");
    for serial in ["A", "B"] {
        for ev in [
            "setupStream",
            "activateStream",
            "deactivateStream",
            "closeStream",
        ] {
            let n = rx.iter().filter(|(e, s)| e == ev && s == serial).count();
            assert_eq!(n, 1, "{ev} RX serial={serial} once: {rx:?}");
        }
    }
    assert!(rig.tx_events().is_empty());

    // MD agrees with JSON; validate-result passes.
    let md = std::fs::read_to_string(rig.outbox(id).join("RX_RESULT.md")).unwrap();
    assert_eq!(md_row_status(&md, "Status").as_deref(), Some("FAIL"));
    for (i, c) in r.checks.iter().enumerate() {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {} | {} |", i + 1, c.name)))
            .unwrap_or_else(|| panic!("no MD row for check {}: {md}", c.name));
        assert!(row.contains(&format!("| {} |", c.status)), "{row}");
    }
    assert!(
        md.contains('▁') || md.contains('█'),
        "text spectrum in the MD"
    );
    for n in [1, 2] {
        let png = rig.outbox(id).join(format!("SPECTRUM_{n}.png"));
        let b = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
        assert!(
            b.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} is a PNG",
            png.display()
        );
    }
    let v = rig.lab.run(&["validate-result", id], "");
    assert_eq!(code(&v), Some(0), "validate-result\n{}", show(&v));

    // Ledger: run_started and run_finished; state: completed.
    assert_eq!(rig.lab.count_events("run_started", id), 1);
    assert_eq!(rig.lab.count_events("run_finished", id), 1);
    assert_eq!(rig.lab.status_of(id), "completed");
}

// ---------------------------------------------------------------- 2. not approved

#[test]
fn deferred_and_unknown_tasks_are_refused() {
    let rig = Rig::new();
    let id = "RUN_DEFER_1";
    rig.post(id, &yellow(), Some(r#"{"steps": [{"op": "inventory"}]}"#));
    let w = rig.lab.watch_once("D\n");
    assert_eq!(code(&w), Some(0), "{}", show(&w));
    assert_eq!(rig.lab.status_of(id), "deferred");

    let out = assert_refused(&rig, id, None, "deferred task");
    assert!(text(&out.stderr).contains("deferred"), "{}", show(&out));
    assert!(!rig.outbox(id).join("RX_RESULT.json").exists());

    let out = assert_refused(&rig, "NO_SUCH_TASK", None, "unknown task");
    assert!(text(&out.stderr).contains("unknown"), "{}", show(&out));
    assert!(!rig.outbox("NO_SUCH_TASK").exists());

    // An approval given in a dry run (`watch --dry-run --task-file`) never runs.
    let dry = "RUN_DRY_1";
    let f = rig.lab.dir.path().join("dry-task.md");
    let mut t = Lab::task(dry, &rig.lab.main_head(), &red_tx());
    t.push_str(&format!("\n```rx-plan\n{}\n```\n", tx_plan()));
    std::fs::write(&f, t).unwrap();
    let w = rig.lab.run(
        &["watch", "--dry-run", "--task-file", f.to_str().unwrap()],
        "A\n",
    );
    assert_eq!(code(&w), Some(0), "{}", show(&w));
    rig.set_policy(TX_POLICY_OK);
    let out = assert_refused(&rig, dry, Some("AUTHORIZE RF TX\n"), "dry-run approval");
    assert!(text(&out.stderr).contains("unknown"), "{}", show(&out));

    // A manual task (no rx-plan): `run` says so and changes nothing.
    let manual = "RUN_MANUAL_1";
    rig.post_and_approve(manual, &[], None);
    let outbox_before = rig.outbox_listing(manual);
    let ledger_before = rig.lab.ledger_events().len();
    let out = rig.run(manual, None);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains("manual task"), "{}", show(&out));
    assert_eq!(rig.outbox_listing(manual), outbox_before);
    assert_eq!(rig.lab.ledger_events().len(), ledger_before);
    assert_eq!(rig.lab.status_of(manual), "approved");
    assert!(rig.events().is_empty(), "no radio was touched");
}

// ---------------------------------------------------------------- 3. RED TX

/// Issue 6 acceptance: every wrong phrase, no policy and an out-of-band plan
/// are refused with no TX stream; the one authorized in-policy run opens
/// exactly one TX stream and closes it; a re-run is refused.
#[test]
fn red_tx_needs_policy_and_exact_phrase_and_runs_once() {
    let rig = Rig::new();
    let id = "RUN_RED_TX_1";
    rig.post_and_approve(id, &red_tx(), Some(tx_plan()));

    // No policy file: refused without even asking.
    rig.remove_policy();
    let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), "no policy");
    let err = text(&out.stderr);
    assert!(err.contains("no tx section"), "{err}");
    assert!(!err.contains("Type exactly"), "must not ask: {err}");

    // A malformed policy file: invalid input (exit 2), ledgered, never asks.
    rig.set_policy("{\"tx\": {\"allowed_ranges_hz\": [[433050000, 434790000]]");
    let refused_before = rig.refused_count(id);
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("rxnode-policy.json"),
        "{}",
        show(&out)
    );
    assert!(!text(&out.stderr).contains("Type exactly"));
    assert_eq!(rig.refused_count(id), refused_before + 1);
    assert!(rig.tx_events().is_empty());

    // A policy whose ranges do not hold frequency ± |offset|.
    for (ranges, why) in [
        ("[[430000000, 433000000]]", "entirely out of band"),
        (
            "[[433900000, 434000000]]",
            "the image 433.87 MHz falls outside",
        ),
        (
            "[[433800000, 433950000]]",
            "the tone 433.97 MHz falls outside",
        ),
    ] {
        rig.set_policy(&format!(
            r#"{{"tx": {{"allowed_ranges_hz": {ranges}, "max_gain_db": 10, "max_duration_s": 2}}}}"#
        ));
        let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), why);
        let err = text(&out.stderr);
        assert!(err.contains("not inside"), "{why}: {err}");
        assert!(!err.contains("Type exactly"), "{why}: must not ask: {err}");
    }
    // Gain and duration over policy.
    for (pol, needle) in [
        (
            r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": -1, "max_duration_s": 2}}"#,
            "tx.max_gain_db",
        ),
        (
            r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 0.1}}"#,
            "tx.max_duration_s",
        ),
    ] {
        rig.set_policy(pol);
        let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), needle);
        assert!(text(&out.stderr).contains(needle), "{}", show(&out));
    }

    // In policy now: every wrong phrase is refused after the prompt.
    rig.set_policy(TX_POLICY_OK);
    let other = format!("AUTHORIZE {id}\n");
    for (stdin, why) in [
        (Some("authorize rf tx\n"), "lower case"),
        (Some("AUTHORIZE RF TX \n"), "trailing space"),
        (Some(" AUTHORIZE RF TX\n"), "leading space"),
        (Some(other.as_str()), "the other phrase"),
        (Some("\n"), "empty line"),
        (None, "EOF"),
    ] {
        let out = assert_refused(&rig, id, stdin, why);
        let err = text(&out.stderr);
        assert!(
            err.contains("Type exactly `AUTHORIZE RF TX`"),
            "{why}: prompt shown: {err}"
        );
        assert!(
            err.contains("433.920000 MHz") && err.contains("TX1"),
            "{why}: what will be transmitted is shown: {err}"
        );
        assert_ne!(rig.lab.status_of(id), "completed");
    }
    // Not UTF-8 after the phrase: a wrong answer (exit 3), not a read error.
    let refused_before = rig.refused_count(id);
    let out = rig
        .spawn_run_bytes(id, Some(b"AUTHORIZE RF TX\xff\n"))
        .wait_with_output()
        .unwrap();
    assert_eq!(code(&out), Some(3), "non-UTF-8 line\n{}", show(&out));
    assert_eq!(rig.refused_count(id), refused_before + 1);
    assert_eq!(rig.lab.count_events("authorized", id), 0);
    assert!(rig.events().is_empty(), "no radio opened yet");

    // The one authorized in-policy run.
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let tx = rig.tx_events();
    for ev in [
        "setupStream",
        "activateStream",
        "deactivateStream",
        "closeStream",
    ] {
        let n = tx.iter().filter(|(e, s)| e == ev && s == "TX1").count();
        assert_eq!(n, 1, "{ev} TX once: {tx:?}");
    }
    assert_eq!(tx.len(), 4, "{tx:?}");
    let order: Vec<&str> = tx.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        order,
        [
            "setupStream",
            "activateStream",
            "deactivateStream",
            "closeStream"
        ]
    );
    assert_eq!(rig.lab.count_events("authorized", id), 1);

    let r = rig.result(id);
    assert_eq!(r.status, "PASS", "{r:#?}");
    assert_eq!(r.risk_level, "RED");
    let auth = r.authorization.as_ref().expect("authorization record");
    assert_eq!(auth.kind, "RF_TX");
    parse_iso(&auth.at);
    let t = r.tx.as_ref().expect("tx record");
    let (s, e) = (parse_iso(&t.started_at), parse_iso(&t.stopped_at));
    assert!(s <= e);
    assert!(
        (t.on_air_s - 0.3).abs() < 0.25,
        "on air about 0.3 s: {}",
        t.on_air_s
    );
    assert!((t.frequency_hz - 433.92e6).abs() < 1.0);
    assert!((t.tone_offset_hz - 50e3).abs() < 1e-6);
    assert!(t.gain_db.abs() < 1e-9);
    assert!(!t.cancelled);
    assert!(t.samples_sent > 0);
    assert_eq!(rig.lab.status_of(id), "completed");
    let v = rig.lab.run(&["validate-result", id], "");
    assert_eq!(code(&v), Some(0), "validate-result\n{}", show(&v));

    // A second run of the completed task: refused, with or without the phrase.
    let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), "re-run");
    assert!(text(&out.stderr).contains("already run"), "{}", show(&out));
    assert_eq!(rig.tx_events().len(), 4);
}

// ---------------------------------------------------------------- 4. RED other

#[test]
fn red_other_needs_authorize_task_id() {
    let rig = Rig::new();
    let id = "RUN_RED_OTHER_1";
    rig.post_and_approve(
        id,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "RED"),
        ],
        Some(r#"{"steps": [{"op": "inventory"}]}"#),
    );
    for (stdin, why) in [
        (Some("AUTHORIZE RF TX\n"), "the RF TX phrase"),
        (Some("authorize RUN_RED_OTHER_1\n"), "lower case"),
        (Some("AUTHORIZE RUN_RED_OTHER_1 \n"), "trailing space"),
        (Some("AUTHORIZE RUN_RED_OTHER_2\n"), "another task ID"),
        (None, "EOF"),
    ] {
        let out = assert_refused(&rig, id, stdin, why);
        assert!(
            text(&out.stderr).contains(&format!("Type exactly `AUTHORIZE {id}`")),
            "{why}: {}",
            show(&out)
        );
    }
    assert!(rig.events().is_empty(), "nothing touched a radio");
    let out = rig.run(id, Some(&format!("AUTHORIZE {id}\n")));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let r = rig.result(id);
    assert_eq!(r.status, "PASS");
    assert_eq!(
        r.authorization.as_ref().map(|a| a.kind.as_str()),
        Some("RED_OTHER")
    );
    assert!(rig.tx_events().is_empty());
    assert_eq!(rig.lab.count_events("authorized", id), 1);
}

// ---------------------------------------------------------------- 5. BLOCKED

#[test]
fn steps_outside_policy_or_without_device_are_blocked_not_failed() {
    let rig = Rig::new();
    let id = "RUN_BLOCKED_1";
    rig.set_policy(
        r#"{"rx": {"max_duration_s": 0.5, "max_sample_rate_hz": 2e6, "max_gain_db": 30,
                   "max_iq_bytes": 1000000}}"#,
    );
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=LONG", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "duration_s": 2.0},
      {"op": "rx_capture", "device": "driver=rxsim,serial=FAST", "frequency_hz": 100e6,
       "sample_rate_hz": 4e6, "duration_s": 0.2},
      {"op": "rx_capture", "device": "driver=rxsim,serial=LOUD", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": 40, "duration_s": 0.2},
      {"op": "rx_capture", "device": "driver=rxsim,serial=BIG", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.2, "record_iq": true},
      {"op": "rx_capture", "device": "driver=nosuchdriver", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.2},
      {"op": "clock_check", "device": "driver=nosuchdriver,serial=X"},
      {"op": "rx_capture", "device": "driver=rxsim,serial=OK", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.2},
      {"op": "inventory"}
    ]}"#;
    rig.post_and_approve(id, &yellow(), Some(plan));
    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(1), "not PASS ⇒ exit 1\n{}", show(&out));
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(
        st,
        ["BLOCKED", "BLOCKED", "BLOCKED", "BLOCKED", "BLOCKED", "BLOCKED", "PASS", "PASS"],
        "{:#?}",
        r.checks
    );
    for (i, limit) in [
        "rx.max_duration_s",
        "rx.max_sample_rate_hz",
        "rx.max_gain_db",
        "rx.max_iq_bytes",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            r.checks[i].detail.contains(limit),
            "the limit {limit} is named: {}",
            r.checks[i].detail
        );
    }
    for i in [4, 5] {
        assert!(
            r.checks[i].detail.contains("nosuchdriver")
                || r.checks[i].detail.contains("not available"),
            "{}",
            r.checks[i].detail
        );
    }
    assert_eq!(r.status, "PARTIAL", "blocked steps make the whole PARTIAL");
    assert!(r.captures.iter().any(|c| c.status == "BLOCKED"));
    // The over-long capture never reached the radio; the in-policy one did.
    let rx = rig.stream_events("RX");
    for serial in ["LONG", "FAST", "LOUD", "BIG"] {
        assert!(!rx.iter().any(|(_, s)| s == serial), "{serial}: {rx:?}");
    }
    assert!(!rig.lab.local().join("rx_iq").join(id).exists());
    assert_eq!(
        rx.iter()
            .filter(|(e, s)| e == "closeStream" && s == "OK")
            .count(),
        1
    );
    let v = rig.lab.run(&["validate-result", id], "");
    assert_eq!(code(&v), Some(0), "validate-result\n{}", show(&v));
}

// ---------------------------------------------------------------- 6. tampering, STOP

#[test]
fn tampered_outbox_text_and_stop_file_are_refused() {
    let rig = Rig::new();
    let id = "RUN_TAMPER_1";
    rig.post_and_approve(id, &yellow(), Some(r#"{"steps": [{"op": "inventory"}]}"#));

    // STOP held: refused.
    let stop = rig.lab.local().join("STOP");
    std::fs::write(&stop, "maintenance\n").unwrap();
    let out = assert_refused(&rig, id, None, "STOP file");
    assert!(text(&out.stderr).contains("STOP"), "{}", show(&out));
    std::fs::remove_file(&stop).unwrap();

    // The approved text edited after approval: refused.
    let task_md = rig.outbox(id).join("TASK.md");
    let original = std::fs::read(&task_md).unwrap();
    let mut edited = original.clone();
    edited.extend_from_slice(b"\nAlso transmit a little.\n");
    std::fs::write(&task_md, &edited).unwrap();
    let out = assert_refused(&rig, id, None, "edited TASK.md");
    assert!(
        text(&out.stderr).contains("changed since approval"),
        "{}",
        show(&out)
    );
    assert!(rig.events().is_empty());

    // Restored byte for byte: it runs.
    std::fs::write(&task_md, &original).unwrap();
    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
}

// ---------------------------------------------------------------- 7. Ctrl-C

#[cfg(unix)]
#[test]
fn sigint_during_capture_writes_partial_results_and_closes_the_stream() {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let id = "RUN_SIGINT_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=LONGRUN", "frequency_hz": 100e6,
       "sample_rate_hz": 250e3, "duration_s": 30.0},
      {"op": "inventory"}
    ]}"#;
    // 30 s, so an ignored SIGINT shows up as a stream closed ≥ 29 s after the
    // signal, far past the generous bounds below (this test once failed at
    // 3.16 s against a 2 s exit limit on a loaded 2-core machine).
    rig.post_and_approve(id, &yellow(), Some(plan));
    let started = Instant::now();
    let child = rig.spawn_run(id, None);
    // Wait until the RX stream is active, then a little longer.
    let active = |r: &Rig| {
        r.stream_events("RX")
            .iter()
            .any(|(e, s)| e == "activateStream" && s == "LONGRUN")
    };
    while !active(&rig) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the capture never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(800));
    let pid = i32::try_from(child.id()).unwrap();
    let sent = Instant::now();
    let sent_unix = unix_now();
    // SAFETY: kill(2) on our own child's PID.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    // The radio saw the stream stop promptly (the process then still analyses
    // what it captured and writes the results). The evidence is rxsim's own
    // timestamp; the bound leaves room for a loaded CI machine (typically
    // 5–20 ms here) and is still far below the ≥ 29 s of an ignored SIGINT.
    let closed = rig
        .event_time("deactivateStream RX serial=LONGRUN")
        .expect("deactivateStream RX in the event log");
    println!(
        "RX stream closed {:.3} s after SIGINT (rxsim's clock); exit {:.3} s after it",
        closed - sent_unix,
        took.as_secs_f64()
    );
    assert!(
        closed - sent_unix < 2.0,
        "RX stream stopped {:.3} s after SIGINT",
        closed - sent_unix
    );
    // The exit only has to come well before the capture would have ended:
    // Welch over what was captured, the inventory NOT RUN and the results are
    // written after the stream closed, which took over 3 s under build load.
    assert!(
        took < Duration::from_secs(15),
        "exit well before the 30 s capture would have ended, took {took:?}"
    );
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["PARTIAL", "NOT RUN"], "{:#?}", r.checks);
    assert_eq!(r.status, "PARTIAL");
    let c = &r.captures[0];
    assert_eq!(c.cancelled, Some(true));
    let got = c.samples_received.unwrap();
    assert!(got > 0 && got < 1_250_000, "partial samples: {got}");
    assert!(r.errors.iter().any(|e| e.contains("interrupted")));
    let rx = rig.stream_events("RX");
    for ev in ["deactivateStream", "closeStream"] {
        assert_eq!(
            rx.iter().filter(|(e, s)| e == ev && s == "LONGRUN").count(),
            1,
            "{ev}: {rx:?}"
        );
    }
    assert_eq!(rig.lab.porcelain(), "");
}

// ---------------------------------------------------------------- more interlock edges

/// The approved-text check does not trust the state file alone: a forged
/// approval hash matching an edited `TASK.md` is still refused, because the
/// text must equal the blob at the approved commit.
#[test]
fn forged_state_hash_with_edited_text_is_refused() {
    let rig = Rig::new();
    let id = "RUN_FORGE_1";
    rig.post_and_approve(id, &red_tx(), Some(tx_plan()));
    rig.set_policy(TX_POLICY_OK);
    let task_md = rig.outbox(id).join("TASK.md");
    let edited = String::from_utf8(std::fs::read(&task_md).unwrap())
        .unwrap()
        .replace("\"duration_s\": 0.3", "\"duration_s\": 1.9");
    std::fs::write(&task_md, &edited).unwrap();
    let state_path = rig.lab.local().join("rx_agent_state.json");
    let mut st = rig.lab.state();
    st["approvals"][id]["task_sha256"] =
        serde_json::Value::String(hex::encode(Sha256::digest(edited.as_bytes())));
    std::fs::write(&state_path, serde_json::to_vec_pretty(&st).unwrap()).unwrap();
    let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), "forged approval hash");
    assert!(
        text(&out.stderr).contains("is not the approved text"),
        "{}",
        show(&out)
    );
    assert!(rig.events().is_empty());
}

/// One `AUTHORIZE RF TX` keys the transmitter once: a second `tx_tone` step in
/// the same plan is BLOCKED, and the event log shows exactly one TX stream.
#[test]
fn one_authorization_covers_one_tx_step() {
    let rig = Rig::new();
    let id = "RUN_TX_TWICE_1";
    let plan = r#"{"steps": [
      {"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
       "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2},
      {"op": "tx_tone", "device": "driver=rxsim,serial=TX2", "frequency_hz": 434.0e6,
       "sample_rate_hz": 1.0e6, "tone_offset_hz": -20e3, "gain_db": 0, "duration_s": 0.2}
    ]}"#;
    rig.post_and_approve(id, &red_tx(), Some(plan));
    rig.set_policy(TX_POLICY_OK);
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    // The prompt says what the authorization covers: the first tx_tone only, and
    // that the second will be BLOCKED (it used to say "This will transmit" for both).
    let err = text(&out.stderr);
    assert!(
        err.contains("This authorizes one transmission, step 1 (the first tx_tone)"),
        "{err}"
    );
    assert!(
        err.contains("Step 2 (tx_tone) will be BLOCKED, not transmitted"),
        "{err}"
    );
    assert!(!err.contains("This will transmit"), "{err}");
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["PASS", "BLOCKED"], "{:#?}", r.checks);
    assert!(r.checks[1].detail.contains("no authorization left"));
    let tx = rig.tx_events();
    assert_eq!(tx.len(), 4, "one TX stream: {tx:?}");
    assert!(tx.iter().all(|(_, s)| s == "TX1"), "{tx:?}");
}

/// One `run` at a time per checkout: a live run lock refuses, with a ledger entry.
#[test]
fn a_live_run_lock_refuses_a_second_run() {
    let rig = Rig::new();
    let id = "RUN_LOCK_1";
    rig.post_and_approve(id, &yellow(), Some(r#"{"steps": [{"op": "inventory"}]}"#));
    let lock = rig.lab.local().join("rxnode-run.lock");
    // The lock file format of `.local/rxnode.lock` (src/lock.rs `Holder`).
    let holder = |pid: u32| {
        serde_json::json!({"pid": pid, "host": gethostname::gethostname().to_string_lossy(),
            "since": "2026-11-30T00:00:00+00:00", "command": "run OTHER_TASK"})
        .to_string()
    };
    std::fs::write(&lock, holder(std::process::id())).unwrap();
    let out = assert_refused(&rig, id, None, "live run lock");
    assert!(
        text(&out.stderr).contains("another `rxnode run`"),
        "{}",
        show(&out)
    );
    assert!(lock.exists(), "someone else's lock is left alone");
    assert!(rig.events().is_empty());
    // A stale lock (dead PID) is taken over.
    std::fs::write(&lock, holder(999_999_999)).unwrap();
    let out = rig.run(id, None);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert!(!lock.exists(), "the run removes its own lock");
}

/// Ctrl-C while transmitting: the tone stops at once, the TX stream is
/// deactivated and closed, and the result records the cut-short window.
#[cfg(unix)]
#[test]
fn sigint_during_tx_tears_the_stream_down() {
    signal_during_tx(libc::SIGINT, "RUN_TX_SIGINT_1");
}

/// The same for SIGTERM (a service manager stopping the node).
#[cfg(unix)]
#[test]
fn sigterm_during_tx_tears_the_stream_down() {
    signal_during_tx(libc::SIGTERM, "RUN_TX_SIGTERM_1");
}

#[cfg(unix)]
fn signal_during_tx(signal: libc::c_int, id: &str) {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TXLONG",
      "frequency_hz": 433.92e6, "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3,
      "gain_db": 0, "duration_s": 2.0}]}"#;
    rig.post_and_approve(id, &red_tx(), Some(plan));
    rig.set_policy(TX_POLICY_OK);
    let started = Instant::now();
    let child = rig.spawn_run(id, Some("AUTHORIZE RF TX\n"));
    while !rig
        .tx_events()
        .iter()
        .any(|(e, s)| e == "activateStream" && s == "TXLONG")
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "TX never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pid = i32::try_from(child.id()).unwrap();
    let sent = Instant::now();
    let sent_unix = unix_now();
    // SAFETY: kill(2) on our own child's PID.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_millis(2500),
        "exit within ~2 s: {:?}",
        sent.elapsed()
    );
    // The radio saw the TX stream deactivated promptly after the signal.
    let deactivated = rig
        .event_time("deactivateStream TX serial=TXLONG")
        .expect("deactivateStream TX in the event log");
    assert!(
        deactivated - sent_unix < 0.5,
        "TX off {:.3} s after SIGINT",
        deactivated - sent_unix
    );
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let tx = rig.tx_events();
    let order: Vec<&str> = tx.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        order,
        [
            "setupStream",
            "activateStream",
            "deactivateStream",
            "closeStream"
        ]
    );
    let r = rig.result(id);
    assert_eq!(r.checks[0].status, "PARTIAL", "{:#?}", r.checks);
    let t = r.tx.as_ref().expect("tx window recorded");
    assert!(t.cancelled);
    assert!(t.on_air_s < 1.5, "cut short: {} s on air", t.on_air_s);
    assert!(parse_iso(&t.started_at) <= parse_iso(&t.stopped_at));
}

/// Ctrl-C during an RX step of a RED TX plan: the later `tx_tone` step is
/// `NOT RUN` and the transmitter is never keyed.
#[cfg(unix)]
#[test]
fn sigint_before_the_tx_step_means_no_transmission() {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let id = "RUN_RX_THEN_TX_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=LISTEN", "frequency_hz": 433.92e6,
       "sample_rate_hz": 250e3, "duration_s": 5.0},
      {"op": "tx_tone", "device": "driver=rxsim,serial=TXNEVER", "frequency_hz": 433.92e6,
       "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.3}
    ]}"#;
    let mut hdr = red_tx();
    hdr.push(("RF_RX", "YES"));
    rig.post_and_approve(id, &hdr, Some(plan));
    rig.set_policy(TX_POLICY_OK);
    let started = Instant::now();
    let child = rig.spawn_run(id, Some("AUTHORIZE RF TX\n"));
    while rig.event_time("activateStream RX serial=LISTEN").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "RX never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's PID.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["PARTIAL", "NOT RUN"], "{:#?}", r.checks);
    assert!(r.tx.is_none());
    assert!(rig.tx_events().is_empty(), "{:?}", rig.events());
    assert!(
        !rig.events().iter().any(|l| l.contains("TXNEVER")),
        "the TX radio was never even opened: {:?}",
        rig.events()
    );
}
