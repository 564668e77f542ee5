//! Radio health (docs/protocol.md#8-radio-health): self-tests, BAD radios kept out of
//! runs until a self-test passes, the stall watchdog and the re-test after it, and
//! unattended operation (`watch --no-prompt` with `rxnode review`, the systemd unit).
//!
//! Faults come from rxsim's device args: `fail_open=1` (the radio cannot be opened)
//! and `rx_stall_after_s=S` (its RX stream stops delivering S s after it started).
use crate::util::{self, show, text, Lab};
use serde::Deserialize;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

mod unattended;

#[derive(Debug, Deserialize)]
struct Listing {
    radios: Vec<Row>,
    self_test_every_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Row {
    device: String,
    identity: String,
    health: String,
    since: Option<String>,
    reason: String,
    last_self_test: Option<SelfTestT>,
    scheduled: bool,
}

#[derive(Debug, Deserialize)]
struct SelfTestT {
    at: String,
    outcome: String,
    reason: String,
}

#[derive(Debug, Deserialize)]
struct ResultT {
    status: String,
    checks: Vec<CheckT>,
    captures: Vec<serde_json::Value>,
    errors: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct CheckT {
    name: String,
    status: String,
    detail: String,
}

fn sim(lab: &Lab, args: &[&str]) -> Output {
    lab.run(&[&["--sim"], args].concat(), "")
}

fn listing(lab: &Lab) -> Listing {
    let out = sim(lab, &["--json", "health"]);
    expect_exit!(out, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}

fn row<'a>(l: &'a Listing, identity: &str) -> &'a Row {
    l.radios
        .iter()
        .find(|r| r.identity == identity)
        .unwrap_or_else(|| panic!("no {identity} in {l:#?}"))
}

fn result(lab: &Lab, id: &str) -> ResultT {
    let p = lab.outbox(id).join("RX_RESULT.json");
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
}

fn yellow() -> Vec<(&'static str, &'static str)> {
    vec![
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "YELLOW"),
    ]
}

fn capture_step(device: &str, duration_s: f64) -> String {
    format!(
        r#"{{"op": "rx_capture", "device": "{device}", "frequency_hz": 100e6,
            "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": {duration_s}}}"#
    )
}

fn run_task(lab: &Lab, id: &str) -> Output {
    lab.run(&["--sim", "run", id], "")
}

fn radio_health_lines(lab: &Lab) -> Vec<(String, String, String)> {
    lab.ledger_events()
        .iter()
        .filter(|e| e["event"] == "radio_health")
        .map(|e| {
            let d = &e["detail"];
            (
                d["radio"].as_str().unwrap_or("").to_owned(),
                d["from"].as_str().unwrap_or("").to_owned(),
                d["to"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// `health test -d ARGS` (the device flag of every radio command, and the form the
/// operator guide gives after an upgrade) tests that radio, like ARGS without `-d`;
/// both forms together test each radio once in the order given. It was refused as
/// "unexpected argument '-d'" (exit 2).
#[test]
fn health_test_takes_the_device_flag_of_every_radio_command() {
    let lab = Lab::new();
    let out = sim(
        &lab,
        &[
            "health",
            "test",
            "-d",
            "driver=rxsim,serial=D1",
            "--device",
            "driver=rxsim,serial=D2",
        ],
    );
    expect_exit!(out, 0);
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.matches("PASS driver=rxsim,serial=D").count(),
        2,
        "{}",
        show(&out)
    );
    let out = sim(
        &lab,
        &[
            "health",
            "test",
            "driver=rxsim,serial=P1",
            "-d",
            "driver=rxsim,serial=D3",
        ],
    );
    expect_exit!(out, 0);
    let stdout = text(&out.stdout);
    let (p1, d3) = (stdout.find("serial=P1"), stdout.find("serial=D3"));
    assert!(p1.is_some() && d3.is_some() && p1 < d3, "{}", show(&out));
    let l = listing(&lab);
    for serial in ["D1", "D2", "D3", "P1"] {
        assert_eq!(
            row(&l, &format!("driver=rxsim,serial={serial}")).health,
            "GOOD"
        );
    }
}

/// `health test` passes a working radio (GOOD), fails one that cannot be opened
/// (BAD) and one whose stream never delivers (BAD, naming the stall); `health
/// --json` lists them with the policy's radio that was never tested as UNTESTED;
/// each self-test and each change of health is a ledger line.
#[test]
fn self_tests_make_radios_good_or_bad_and_are_listed() {
    let lab = Lab::new();
    lab.set_policy(
        r#"{"health": {"self_test_every_s": 3600, "radios": ["driver=rxsim,serial=NEVER"]}}"#,
    );
    let out = sim(&lab, &["health", "test", "driver=rxsim,serial=OK"]);
    expect_exit!(out, 0);
    assert!(text(&out.stdout).starts_with("PASS"), "{}", show(&out));
    let out = sim(
        &lab,
        &["health", "test", "driver=rxsim,serial=GONE,fail_open=1"],
    );
    expect_exit!(out, 1);
    assert!(
        text(&out.stdout).contains("simulated fault fail_open=1"),
        "{}",
        show(&out)
    );
    let t0 = Instant::now();
    let out = sim(
        &lab,
        &[
            "health",
            "test",
            "driver=rxsim,serial=QUIET,rx_stall_after_s=0",
        ],
    );
    expect_exit!(out, 1);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());

    let l = listing(&lab);
    assert_eq!(l.self_test_every_s, Some(3600.0));
    let ok = row(&l, "driver=rxsim,serial=OK");
    assert_eq!(ok.health, "GOOD");
    assert!(!ok.scheduled);
    let t = ok.last_self_test.as_ref().unwrap();
    assert_eq!(t.outcome, "PASS");
    assert!(t.reason.contains("250000 samples"), "{t:?}");
    assert!(!t.at.is_empty());
    let gone = row(&l, "driver=rxsim,serial=GONE");
    assert_eq!(gone.health, "BAD");
    assert_eq!(gone.device, "driver=rxsim,serial=GONE,fail_open=1");
    assert!(gone.reason.contains("cannot open the radio"), "{gone:?}");
    let quiet = row(&l, "driver=rxsim,serial=QUIET");
    assert_eq!(quiet.health, "BAD");
    assert!(
        quiet.reason.contains("stream stalled at sample 0"),
        "{quiet:?}"
    );
    let never = row(&l, "driver=rxsim,serial=NEVER");
    assert_eq!((never.health.as_str(), never.scheduled), ("UNTESTED", true));
    assert!(never.since.is_none() && never.last_self_test.is_none());

    let tests = lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "self_test")
        .count();
    assert_eq!(tests, 3);
    assert_eq!(
        radio_health_lines(&lab),
        [
            (
                "driver=rxsim,serial=OK".into(),
                "UNTESTED".into(),
                "GOOD".into()
            ),
            (
                "driver=rxsim,serial=GONE".into(),
                "UNTESTED".into(),
                "BAD".into()
            ),
            (
                "driver=rxsim,serial=QUIET".into(),
                "UNTESTED".into(),
                "BAD".into()
            ),
        ]
    );
    // No radio named and none in the policy: bad usage, exit 2.
    lab.remove_policy();
    let out = sim(&lab, &["health", "test"]);
    expect_exit!(out, 2);
    assert!(
        text(&out.stderr).contains("health.radios"),
        "{}",
        show(&out)
    );
}

/// A run step that needs a BAD radio ends BLOCKED, naming the failure and when it
/// was found, and the radio is never opened; an UNTESTED radio is not blocked; a
/// passing self-test returns the radio to GOOD and the next task runs on it.
#[test]
fn a_bad_radio_blocks_run_steps_until_a_self_test_passes() {
    let lab = Lab::new();
    let events = lab.events_log();
    // The radio BAD1 fails its self-test (it cannot be opened then).
    let out = sim(
        &lab,
        &["health", "test", "driver=rxsim,serial=BAD1,fail_open=1"],
    );
    expect_exit!(out, 1);
    let since = row(&listing(&lab), "driver=rxsim,serial=BAD1")
        .since
        .clone()
        .unwrap();
    let plan = format!(
        r#"{{"steps": [{}, {}]}}"#,
        capture_step("driver=rxsim,serial=BAD1", 0.2),
        capture_step("driver=rxsim,serial=FRESH", 0.2)
    );
    lab.post_and_approve("HEALTH_BAD_1", &yellow(), Some(&plan));
    let out = util::run_fed(
        lab.rxnode()
            .args(["--sim", "run", "HEALTH_BAD_1"])
            .env("RXSIM_EVENT_LOG", &events),
        b"",
    );
    expect_exit!(out, 1);
    let r = result(&lab, "HEALTH_BAD_1");
    assert_eq!(r.checks[0].status, "BLOCKED", "{r:#?}");
    let d = &r.checks[0].detail;
    assert!(
        d.contains("BAD since") && d.contains(&since) && d.contains("cannot open the radio"),
        "{d}"
    );
    assert!(d.contains("rxnode health test"), "{d}");
    assert_eq!(r.checks[1].status, "PASS", "an UNTESTED radio runs: {r:#?}");
    assert_eq!(r.status, "PARTIAL", "one step blocked, one passed");
    // The run never opened BAD1 (rxsim logs every make of a device).
    let log = std::fs::read_to_string(&events).unwrap_or_default();
    assert!(!log.contains("serial=BAD1"), "BAD1 was opened: {log}");

    // A passing self-test (the radio is back) makes it GOOD; the next task runs on it.
    let out = sim(&lab, &["health", "test", "driver=rxsim,serial=BAD1"]);
    expect_exit!(out, 0);
    assert_eq!(
        row(&listing(&lab), "driver=rxsim,serial=BAD1").health,
        "GOOD"
    );
    let plan = format!(
        r#"{{"steps": [{}]}}"#,
        capture_step("driver=rxsim,serial=BAD1", 0.2)
    );
    lab.post_and_approve("HEALTH_BAD_2", &yellow(), Some(&plan));
    let out = run_task(&lab, "HEALTH_BAD_2");
    expect_exit!(out, 0);
    assert_eq!(result(&lab, "HEALTH_BAD_2").status, "PASS");
    assert_eq!(
        radio_health_lines(&lab),
        [
            (
                "driver=rxsim,serial=BAD1".into(),
                "UNTESTED".into(),
                "BAD".into()
            ),
            (
                "driver=rxsim,serial=BAD1".into(),
                "BAD".into(),
                "GOOD".into()
            ),
        ]
    );
}

/// The stall watchdog in runs, trial after trial with nobody restarting anything:
/// a capture whose stream stops delivering ends PARTIAL, "stream stalled at sample
/// N", within 3 s of the stall; the radio is marked BAD and re-tested (the test
/// passes: the fault shows only after 0.6 s of streaming), so the next task runs on
/// it again; the capture after the stalled one, on a good radio, passes. The
/// 100-trial version is `scripts/soak-health.sh` (docs/benchmarks.md).
#[test]
fn a_stalled_stream_ends_partial_within_3_s_and_the_next_capture_passes() {
    const TRIALS: usize = 3;
    const STALL_S: f64 = 0.6;
    let lab = Lab::new();
    let stalling = format!("driver=rxsim,serial=STALL,rx_stall_after_s={STALL_S}");
    for trial in 0..TRIALS {
        let id = format!("HEALTH_STALL_{trial}");
        let plan = format!(
            r#"{{"steps": [{}, {}]}}"#,
            capture_step(&stalling, 3.0),
            capture_step("driver=rxsim,serial=GOOD", 0.3)
        );
        lab.post_and_approve(&id, &yellow(), Some(&plan));
        let out = run_task(&lab, &id);
        expect_exit!(out, 1, "trial {trial}");
        let r = result(&lab, &id);
        let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
        assert_eq!(st, ["PARTIAL", "PASS"], "trial {trial}: {r:#?}");
        assert!(r.checks[0].name.contains("rx_capture"));
        let c = &r.captures[0];
        assert_eq!(c["stop_reason"], "stalled", "trial {trial}: {c:#}");
        let got = c["samples_received"].as_u64().unwrap();
        assert!(got > 0 && got < 3_000_000, "trial {trial}: {got}");
        let took = c["duration_s"].as_f64().unwrap();
        assert!(
            took < STALL_S + 3.0,
            "trial {trial}: the capture took {took} s; the stall began at {STALL_S} s"
        );
        let errors = r.errors.join("\n");
        assert!(
            errors.contains(&format!("stream stalled at sample {got}")),
            "trial {trial}: {errors}"
        );
        assert!(
            errors.contains("marked BAD; re-tested: PASS") && errors.contains("now GOOD"),
            "trial {trial}: {errors}"
        );
        assert_eq!(r.captures[1]["status"], "PASS", "trial {trial}");
    }
    // Each trial: BAD at the stall, GOOD after the re-test.
    let lines = radio_health_lines(&lab);
    assert_eq!(lines.len(), 2 * TRIALS, "{lines:?}");
    for pair in lines.chunks(2) {
        assert_eq!(pair[0].2, "BAD");
        assert_eq!(pair[1].2, "GOOD");
    }
}

/// A radio that fails its re-test after a stall stays BAD: the next task's step on
/// it is BLOCKED, never dispatched.
#[test]
fn a_radio_that_fails_its_re_test_is_not_used_by_the_next_task() {
    let lab = Lab::new();
    // Stalls at once: every capture and every self-test on it fails.
    let dead = "driver=rxsim,serial=DEAD,rx_stall_after_s=0";
    let plan = format!(r#"{{"steps": [{}]}}"#, capture_step(dead, 1.0));
    lab.post_and_approve("HEALTH_DEAD_1", &yellow(), Some(&plan));
    let out = run_task(&lab, "HEALTH_DEAD_1");
    expect_exit!(out, 1);
    let r = result(&lab, "HEALTH_DEAD_1");
    assert_eq!(r.checks[0].status, "FAIL", "nothing received: {r:#?}");
    let errors = r.errors.join("\n");
    assert!(errors.contains("re-tested: FAIL"), "{errors}");
    assert!(errors.contains("now BAD"), "{errors}");
    lab.post_and_approve("HEALTH_DEAD_2", &yellow(), Some(&plan));
    let t0 = Instant::now();
    let out = run_task(&lab, "HEALTH_DEAD_2");
    expect_exit!(out, 1);
    let r = result(&lab, "HEALTH_DEAD_2");
    assert_eq!(r.checks[0].status, "BLOCKED", "{r:#?}");
    assert!(r.checks[0].detail.contains("stream stalled"), "{r:#?}");
    // Blocked before the radio: no 2 s stall waited.
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

/// A sweep hop whose stream stalls is marked failed and never filled in.
#[test]
fn a_sweep_hop_that_stalls_is_marked_failed_not_filled_in() {
    let lab = Lab::new();
    let out = lab.run(
        &[
            "--sim",
            "--json",
            "sweep",
            "--device",
            "driver=rxsim,serial=SWSTALL,rx_stall_after_s=0.3",
            "--start-hz",
            "100e6",
            "--stop-hz",
            "130e6",
            "--bin-hz",
            "10e3",
            "--sample-rate-hz",
            "2e6",
            "--dwell-s",
            "0.05",
        ],
        "",
    );
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    let hops = v["hops"].as_array().unwrap_or_else(|| panic!("{v:#}"));
    let stalled: Vec<&serde_json::Value> = hops
        .iter()
        .filter(|h| {
            h["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("stream stalled at sample"))
        })
        .collect();
    assert!(!stalled.is_empty(), "{}", show(&out));
    let failed = v["failed_hops"].as_array().unwrap();
    for h in &stalled {
        assert_eq!(h["status"], "FAILED", "{h:#}");
        assert_eq!(h["samples"], 0, "nothing of a stalled hop is kept: {h:#}");
        assert!(
            failed
                .iter()
                .any(|f| f["low_hz"] == h["low_hz"] && f["high_hz"] == h["high_hz"]),
            "its range is listed as failed: {h:#} {failed:?}"
        );
    }
    assert!(
        hops.iter().any(|h| h["status"] == "OK"),
        "hops before the stall were measured: {}",
        show(&out)
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
}

/// The watcher self-tests the policy's radios when it starts.
#[test]
fn the_watcher_self_tests_the_policys_radios_at_start() {
    let lab = Lab::new();
    lab.set_policy(
        r#"{"health": {"radios": ["driver=rxsim,serial=W1", "driver=rxsim,serial=W2,fail_open=1"]}}"#,
    );
    let out = lab.run(&["--sim", "watch", "--once", "--interval", "0.2"], "");
    expect_exit!(out, 0);
    let so = text(&out.stdout) + &text(&out.stderr);
    assert!(so.contains("self-test PASS driver=rxsim,serial=W1"), "{so}");
    assert!(so.contains("self-test FAIL driver=rxsim,serial=W2"), "{so}");
    let l = listing(&lab);
    assert_eq!(row(&l, "driver=rxsim,serial=W1").health, "GOOD");
    assert_eq!(row(&l, "driver=rxsim,serial=W2").health, "BAD");
    assert!(row(&l, "driver=rxsim,serial=W2").scheduled);
}

/// A damaged health file, or one this node did not write, is refused, never reset:
/// a run on any radio is BLOCKED (fail closed) and `rxnode health` names the file.
#[test]
fn a_damaged_health_file_blocks_runs_and_is_kept() {
    let lab = Lab::new();
    let plan = format!(
        r#"{{"steps": [{}]}}"#,
        capture_step("driver=rxsim,serial=X", 0.2)
    );
    lab.post_and_approve("HEALTH_DAMAGED", &yellow(), Some(&plan));
    let f = lab.local().join("rxnode-health.json");
    std::fs::write(&f, "{\"schema_version\": 1, \"radios\": ").unwrap();
    let out = run_task(&lab, "HEALTH_DAMAGED");
    expect_exit!(out, 1);
    let r = result(&lab, "HEALTH_DAMAGED");
    assert_eq!(r.checks[0].status, "BLOCKED", "{r:#?}");
    assert!(r.checks[0].detail.contains("rxnode-health.json"), "{r:#?}");
    let out = sim(&lab, &["health"]);
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains("not a radio health file"),
        "{}",
        show(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "{\"schema_version\": 1, \"radios\": "
    );
    // A well-formed health this node did not record (planted, copied, or from an
    // rxnode before node-sealed files): refused with the fix, never used.
    let planted = r#"{"schema_version": 1, "radios": {"driver=rxsim,serial=X": {
        "identity": "driver=rxsim,serial=X", "device_args": "driver=rxsim,serial=X",
        "health": "GOOD", "since": "2026-12-01T10:00:00+00:00", "reason": "planted"}}}"#;
    std::fs::write(&f, planted).unwrap();
    let out = sim(&lab, &["health"]);
    expect_exit!(out, 3);
    let e = text(&out.stderr);
    assert!(
        e.contains("rxnode-health.json was not written by this node")
            && e.contains("rxnode health test"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), planted);
}

/// A radio another rxnode is using is not self-tested: `NOT RUN`, naming the holder,
/// exit 1, and nothing recorded about its health.
#[test]
fn a_radio_in_use_is_not_self_tested() {
    let lab = Lab::new();
    // Makes .local/ ignored before the capture writes there.
    let out = sim(&lab, &["health"]);
    expect_exit!(out, 0);
    let mut cap = util::spawn_fed(
        lab.rxnode().args([
            "--sim",
            "capture",
            "--device",
            "driver=rxsim,serial=BUSY",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "1e6",
            "--gain-db",
            "10",
            "--duration-s",
            "8",
        ]),
        b"",
    );
    let t0 = Instant::now();
    let held = || {
        let out = lab.rxnode().args(["status", "--json"]).output().ok();
        let v: Option<serde_json::Value> = out.and_then(|o| serde_json::from_slice(&o.stdout).ok());
        // Another test's lock may be listed too (the machine folder): this one is ours.
        v.is_some_and(|v| {
            v["radios_in_use"].as_array().is_some_and(|a| {
                a.iter()
                    .any(|h| h["identity"] == "driver=rxsim,serial=BUSY")
            })
        })
    };
    while !held() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the capture never held the radio"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = sim(
        &lab,
        &["--json", "health", "test", "driver=rxsim,serial=BUSY"],
    );
    let _ = cap.kill();
    let _ = cap.wait();
    expect_exit!(out, 1);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["tests"][0];
    assert_eq!(t["outcome"], "NOT RUN", "{v:#}");
    assert!(t["reason"].as_str().unwrap().contains("capture"), "{v:#}");
    assert!(listing(&lab).radios.is_empty(), "nothing recorded");
    assert!(!lab
        .ledger_events()
        .iter()
        .any(|e| e["event"] == "self_test"));
}

/// A `tx_tone` step on a BAD radio is BLOCKED and still uses up the run's one
/// authorization: a second `tx_tone` step on a good radio does not transmit.
#[test]
fn a_bad_radio_s_tx_step_is_blocked_and_uses_up_the_authorization() {
    let lab = Lab::new();
    let events = lab.events_log();
    lab.set_policy(
        r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    );
    let out = sim(
        &lab,
        &["health", "test", "driver=rxsim,serial=TXBAD,fail_open=1"],
    );
    expect_exit!(out, 1);
    let tone = |serial: &str| {
        format!(
            r#"{{"op": "tx_tone", "device": "driver=rxsim,serial={serial}", "frequency_hz": 433.92e6,
                "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}}"#
        )
    };
    let plan = format!(r#"{{"steps": [{}, {}]}}"#, tone("TXBAD"), tone("TXGOOD"));
    let red = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_TX", "YES"),
        ("RISK_LEVEL", "RED"),
    ];
    lab.post_and_approve("HEALTH_TX", &red, Some(&plan));
    let out = util::run_fed(
        lab.rxnode()
            .args(["--sim", "run", "HEALTH_TX"])
            .env("RXSIM_EVENT_LOG", &events),
        b"AUTHORIZE RF TX\n",
    );
    let r = result(&lab, "HEALTH_TX");
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["BLOCKED", "BLOCKED"], "{}\n{r:#?}", show(&out));
    assert!(r.checks[0].detail.contains("BAD since"), "{r:#?}");
    let log = std::fs::read_to_string(&events).unwrap_or_default();
    assert!(!log.contains(" TX "), "nothing transmitted: {log}");
}

/// A radio that is not on this machine at all (a forgotten `--sim`, a missing
/// SoapySDR module) is no health failure: the step is BLOCKED naming the modules
/// SoapySDR loaded, the radios it finds and how to select the simulator; the radio
/// is never marked BAD, so the next correct run is not blocked by it.
#[test]
fn a_radio_that_is_not_there_is_named_with_the_fix_and_never_marked_bad() {
    let lab = Lab::new();
    let plan = format!(
        r#"{{"steps": [{}]}}"#,
        capture_step("driver=nosuchradio", 0.2)
    );
    lab.post_and_approve("ABSENT_1", &yellow(), Some(&plan));
    let out = run_task(&lab, "ABSENT_1");
    let r = result(&lab, "ABSENT_1");
    assert_eq!(r.checks[0].status, "BLOCKED", "{r:#?} {}", show(&out));
    let all = format!("{}\n{}", r.checks[0].detail, r.errors.join("\n"));
    for want in [
        "no radio matches \"driver=nosuchradio\"",
        "finds these radios: driver=rxsim,serial=rxsim0",
        "name it `driver=rxsim`",
        "not re-tested and not marked BAD",
    ] {
        assert!(all.contains(want), "no {want:?} in:\n{all}");
    }
    assert!(
        radio_health_lines(&lab).is_empty(),
        "{:?}",
        radio_health_lines(&lab)
    );
    let l = listing(&lab);
    assert!(l.radios.iter().all(|r| r.health != "BAD"), "{l:#?}");
    // `health test` of it: NOT RUN, nothing recorded.
    let out = sim(&lab, &["health", "test", "driver=nosuchradio"]);
    assert!(
        text(&out.stdout).contains("NOT RUN driver=nosuchradio"),
        "{}",
        show(&out)
    );
    assert!(radio_health_lines(&lab).is_empty());
    // Without --sim, rxsim is not loaded: the fix names --sim / RXNODE_SIM.
    let out = lab.run(
        &[
            "capture",
            "-d",
            "driver=rxsim",
            "-f",
            "100M",
            "-r",
            "1M",
            "-t",
            "0.1",
        ],
        "",
    );
    expect_exit!(out, 1);
    let se = text(&out.stderr);
    assert!(
        se.contains("no radio matches \"driver=rxsim\"") && se.contains("--sim or RXNODE_SIM=1"),
        "{se}"
    );
}
