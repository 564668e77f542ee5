//! RED tasks: TX needs the policy and the exact phrase and runs once; steps outside the policy are BLOCKED.
use super::*;

// ---------------------------------------------------------------- 3. RED TX

/// Every wrong phrase, no policy and an out-of-band plan
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
    wrong_phrases_are_refused_in_policy(&rig, id);
    the_authorized_run_transmits_once(&rig, id);
}

/// In policy, every wrong phrase (and bytes that are not UTF-8) is refused after the prompt.
fn wrong_phrases_are_refused_in_policy(rig: &Rig, id: &str) {
    // In policy now: every wrong phrase is refused after the prompt.
    rig.set_policy(TX_POLICY_OK);
    let other = format!("AUTHORIZE {id}\n");
    let other_len = format!("not that phrase ({} characters)", other.len() - 1);
    // Each refusal says what differs; a line that is not the phrase is not echoed.
    for (stdin, why, says) in [
        (
            Some("authorize rf tx\n"),
            "lower case",
            "its letter case differs",
        ),
        (
            Some("AUTHORIZE RF TX \n"),
            "trailing space",
            "its spaces differ",
        ),
        (
            Some(" AUTHORIZE RF TX\n"),
            "leading space",
            "its spaces differ",
        ),
        (
            Some("\u{feff}AUTHORIZE RF TX\n"),
            "byte-order mark",
            "U+FEFF, an invisible format character, at position 1",
        ),
        (
            Some("AUTHORIZE RF T\u{425}\n"),
            "Cyrillic look-alike",
            "U+0425, a Cyrillic letter, at position 15",
        ),
        (Some(other.as_str()), "the other phrase", other_len.as_str()),
        (Some("\n"), "empty line", "an empty line was typed"),
        (
            None,
            "EOF",
            "no line typed and ended with Enter (end of input)",
        ),
        (
            Some("AUTHORIZE RF TX"),
            "the phrase without Enter",
            "no line typed and ended with Enter (end of input)",
        ),
    ] {
        let out = assert_refused(rig, id, stdin, why);
        let err = text(&out.stderr);
        assert!(err.contains(says), "{why}: says {says:?}: {err}");
        assert!(!err.contains(other.trim_end()), "{why}: echoed: {err}");
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
}

/// The one authorized in-policy run keys the transmitter once, records it, and a second run is refused.
fn the_authorized_run_transmits_once(rig: &Rig, id: &str) {
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
    // The tx record is the typed one of the result schema.
    let p = rig.outbox(id).join("RX_RESULT.json");
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let verdict =
        crate::mainpc::schemas::jsonschema_verdicts(&[("tx".into(), "result-typed", raw)]);
    assert!(verdict[0].1, "{:?}", verdict[0].2);

    // A second run of the completed task: refused, with or without the phrase.
    let out = assert_refused(rig, id, Some("AUTHORIZE RF TX\n"), "re-run");
    assert!(text(&out.stderr).contains("already run"), "{}", show(&out));
    assert_eq!(rig.tx_events().len(), 4);
}

/// An answer that never ends its line (stdin from `/dev/zero`) is refused after
/// the bound, without reading on: exit 3, a ledger `refused`, nothing keyed; the
/// task stays runnable and the exact phrase then transmits once.
/// A RED run refused at its prompt (another line, end of input) names the way
/// on: `rxnode run ID` again and the phrase to type, in the text and as
/// `--json`'s `fix`; the ledger keeps the refusal without it; a refusal before
/// the prompt (policy) names no retyping; the phrase typed next time runs.
#[test]
fn authorization_refused_at_the_prompt_names_run_again_and_the_phrase() {
    let rig = Rig::new();
    let id = "RUN_RED_FIX";
    rig.post_and_approve(id, &red_tx(), Some(tx_plan()));
    rig.set_policy(TX_POLICY_OK);
    let fix = format!("`rxnode run {id}` again, then type exactly `AUTHORIZE RF TX` and Enter");
    for (stdin, why) in [
        (Some("authorize rf tx\n"), "lower case"),
        (Some("AUTHORIZE RF TX \r\n"), "trailing space, CRLF"),
        (None, "end of input"),
    ] {
        let out = assert_refused(&rig, id, stdin, why);
        let err = text(&out.stderr);
        assert!(err.contains(&format!(" — fix: {fix}")), "{why}: {err}");
    }
    let out = crate::util::run_fed(
        rig.lab
            .rxnode()
            .args(["--sim", "--json", "run", id])
            .env("RXSIM_EVENT_LOG", &rig.events)
            .env("NO_COLOR", "1"),
        b"AUTHORIZE RF T\n",
    );
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    let line = text(&out.stderr);
    let last = line.lines().last().unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["error"]["fix"], fix.as_str(), "{line}");
    let reasons: Vec<String> = rig
        .lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "refused")
        .map(|e| e["detail"]["reason"].to_string())
        .collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(reasons.iter().all(|r| !r.contains("fix:")), "{reasons:?}");
    // Refused before the prompt (out of policy): typing again is no way on.
    rig.set_policy(
        r#"{"tx": {"allowed_ranges_hz": [[430000000, 433000000]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    );
    let out = assert_refused(&rig, id, Some("AUTHORIZE RF TX\n"), "out of policy");
    assert!(
        !text(&out.stderr).contains("again, then type"),
        "{}",
        show(&out)
    );
    rig.set_policy(TX_POLICY_OK);
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "the fix works: {}", show(&out));
}

#[test]
fn an_endless_answer_line_is_refused_after_the_bound_and_keys_nothing() {
    let rig = Rig::new();
    let id = "RUN_RED_LONG_1";
    rig.post_and_approve(id, &red_tx(), Some(tx_plan()));
    rig.set_policy(TX_POLICY_OK);
    let refused_before = rig.refused_count(id);
    let (out, written) = util::run_fed_endless_line(
        rig.lab
            .rxnode()
            .args(["--sim", "run", id])
            .env("RXSIM_EVENT_LOG", &rig.events)
            .env("NO_COLOR", "1"),
        256 << 20,
    );
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains("Type exactly `AUTHORIZE RF TX`"), "{err}");
    assert!(err.contains("longer than 4096 bytes"), "{err}");
    // What the pipe took: the bound plus the pipe's own buffer, not the stream.
    assert!(
        written < 1 << 20,
        "{written} bytes were read for one answer"
    );
    assert_eq!(rig.refused_count(id), refused_before + 1);
    assert_eq!(rig.lab.count_events("authorized", id), 0);
    assert!(rig.tx_events().is_empty(), "{:?}", rig.tx_events());
    assert_ne!(rig.lab.status_of(id), "completed");
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(rig.tx_events().len(), 4, "{:?}", rig.tx_events());
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
    assert_eq!(
        code(&out),
        Some(3),
        "steps BLOCKED by the policy ⇒ exit 3, as from capture\n{}",
        show(&out)
    );
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

/// A radio whose TX write hangs mid-tone (rxsim `tx_stall_after_s`, like a hung
/// USB transfer) is not waited for past the permit: rxnode keys off from its side
/// at the deadline, the run ends within ~0.5 s of it, and the result is FAIL with
/// "TX state unknown for N s" — never PASS.
#[test]
fn a_hung_tx_write_is_abandoned_at_the_permit_deadline_and_never_pass() {
    let rig = Rig::new();
    let id = "RUN_TX_STALL";
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TXSTALL,tx_stall_after_s=0.3",
      "frequency_hz": 433.92e6, "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3,
      "gain_db": 0, "duration_s": 1.0}]}"#;
    rig.post_and_approve(id, &red_tx(), Some(plan));
    rig.set_policy(TX_POLICY_OK);
    let child = rig.spawn_run(id, Some("AUTHORIZE RF TX\n"));
    let out = child.wait_with_output().unwrap();
    let ended = unix_now();
    let activated = rig
        .event_time("activateStream TX serial=TXSTALL")
        .unwrap_or_else(|| panic!("never keyed: {}", show(&out)));
    let stalled = rig
        .event_time("stallWrite TX serial=TXSTALL")
        .expect("the write hung");
    println!(
        "stall at {:.3} s, rxnode done {:.3} s after activation",
        stalled - activated,
        ended - activated
    );
    // Deadline: 1.0 s + 0.25 s grace; then 0.25 s for the driver; the rest is
    // writing the result.
    assert!(
        ended - activated < 1.0 + 0.5 + 1.0,
        "run ended {:.3} s after activation",
        ended - activated
    );
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let r = rig.result(id);
    assert_eq!(r.checks[0].status, "FAIL", "{:#?}", r.checks);
    assert_ne!(r.status, "PASS");
    let t = r.tx.as_ref().expect("tx record");
    let unknown = t.state_unknown_s.expect("state_unknown_s");
    assert!(unknown > 0.9 && unknown < 1.7, "unknown for {unknown} s");
    assert!(t.samples_sent < t.samples_planned, "{t:?}");
    assert!(
        t.on_air_s < 0.5,
        "confirmed on air only until the stall: {t:?}"
    );
    let detail = &r.checks[0].detail;
    assert!(
        detail.contains(&format!("TX state unknown for {unknown:.1} s")),
        "{detail}"
    );
}

/// libfaketime's preload library, as Debian's `faketime` package installs it.
fn libfaketime() -> std::path::PathBuf {
    let candidates = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
    ];
    candidates
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("libfaketime not found in {candidates:?}: apt-get install faketime (scripts/setup.sh)")
        })
}

/// The wall clock stepped back an hour in the middle of a tone (libfaketime, the
/// rxnode process only): `on_air_s` still comes from the monotonic clock,
/// `completed_at` is not before `started_at`, the step is recorded as
/// `timeline.wall_clock_step_s`, and `rxnode validate-result` accepts the result.
#[cfg(target_os = "linux")]
#[test]
fn a_wall_clock_step_back_mid_tone_is_recorded_and_the_result_stays_valid() {
    let rig = Rig::new();
    let id = "RUN_TX_CLOCK_STEP";
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TXCLK",
      "frequency_hz": 433.92e6, "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3,
      "gain_db": 0, "duration_s": 1.5}]}"#;
    rig.post_and_approve(id, &red_tx(), Some(plan));
    rig.set_policy(TX_POLICY_OK);
    let spec = rig.lab.dir.path().join("faketime-spec");
    std::fs::write(&spec, "+0\n").unwrap();
    let child = spawn_fed(
        rig.lab
            .rxnode()
            .args(["--sim", "run", id])
            .env("RXSIM_EVENT_LOG", &rig.events)
            .env("LD_PRELOAD", libfaketime())
            .env("FAKETIME_TIMESTAMP_FILE", &spec)
            .env("FAKETIME_NO_CACHE", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        b"AUTHORIZE RF TX\n",
    );
    let t0 = std::time::Instant::now();
    while !rig
        .tx_events()
        .iter()
        .any(|(e, s)| e == "activateStream" && s == "TXCLK")
    {
        assert!(t0.elapsed().as_secs() < 20, "TX never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::fs::write(&spec, "-1h\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let r = rig.result(id);
    assert_eq!(r.status, "PASS", "{:#?}", r.checks);
    let t = r.tx.as_ref().expect("tx record");
    assert!((t.on_air_s - 1.5).abs() < 0.25, "on_air_s {}", t.on_air_s);
    assert!(
        parse_iso(&t.started_at) <= parse_iso(&t.stopped_at),
        "{t:?}"
    );
    let (s, c) = (
        parse_iso(r.timeline.started_at.as_deref().unwrap()),
        parse_iso(r.timeline.completed_at.as_deref().unwrap()),
    );
    assert!(c >= s, "completed_at {c} before started_at {s}");
    let step = r
        .timeline
        .wall_clock_step_s
        .expect("wall_clock_step_s recorded");
    assert!((step + 3600.0).abs() < 5.0, "step {step}");
    println!(
        "wall clock step recorded: {step} s; on_air_s {:.3}",
        t.on_air_s
    );
    let v = util::run_fed(rig.lab.rxnode().args(["validate-result", id]), b"");
    assert_eq!(code(&v), Some(0), "{}", show(&v));
}

/// Keep a GSM calibration of the rxsim unit `serial` running `ppm` fast (rxsim's
/// GSM scene), as `rxnode clkin calibrate` does.
fn calibrate_gsm(rig: &Rig, serial: &str, ppm: i32) {
    let device =
        format!("driver=rxsim,serial={serial},pace=0,ppm={ppm},gsm_freq=935.2e6,gsm_snr_db=10");
    let o = util::run_fed(
        rig.lab.rxnode().arg("--sim").args([
            "clkin",
            "calibrate",
            "-d",
            &device,
            "--method",
            "gsm",
            "-f",
            "935.2M",
            "-t",
            "3",
        ]),
        b"",
    );
    assert_eq!(code(&o), Some(0), "calibrate: {}", show(&o));
}

/// A 0.2 s tone on `device` with its LO at `frequency_hz` and the tone 5 kHz above.
fn edge_tone_plan(device: &str, frequency_hz: &str) -> String {
    format!(
        r#"{{"steps": [{{"op": "tx_tone", "device": "{device}", "frequency_hz": {frequency_hz},
          "sample_rate_hz": 1.0e6, "tone_offset_hz": 5e3, "gain_db": 0, "duration_s": 0.2}}]}}"#
    )
}

/// A radio's clock error moves its tone as it moves its LO: with a kept
/// calibration of +20 ppm, a tone 5 kHz inside the allowed range by the asked
/// frequency lands ~3.7 kHz outside it: `run` refuses before the `AUTHORIZE`
/// prompt, no TX stream opens (rxsim's log: no TX line); the same tone on a radio
/// with no measurement, whose policy says its clock is within 2 ppm, goes on air.
#[test]
fn a_tone_its_radios_measured_clock_error_moves_out_of_range_is_blocked() {
    let rig = Rig::new();
    rig.set_policy(
        r#"{"rx": {"max_duration_s": 10},
 "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2,
        "unmeasured_clock_ppm": 2}}"#,
    );
    // The radio `serial` measured +20 ppm fast (rxsim's GSM scene), kept by the node.
    let calibrate = |serial: &str| calibrate_gsm(&rig, serial, 20);
    calibrate("TXCAL");
    // LO 434.78 MHz + 5 kHz: 434.785 MHz, 5 kHz under the range's 434.79 MHz edge;
    // +20 ppm puts it at 434.7937 MHz.
    let plan = |device: &str| edge_tone_plan(device, "434.78e6");
    rig.post_and_approve(
        "RUN_TX_CAL",
        &red_tx(),
        Some(&plan("driver=rxsim,serial=TXCAL")),
    );
    let out = rig.run("RUN_TX_CAL", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    // The args name the radio: refused before anybody is asked to authorize.
    assert_eq!(code(&out), Some(3), "{all}");
    assert!(all.contains("measured clock error of +20"), "{all}");
    assert!(!all.contains("Type exactly"), "must not ask: {all}");
    assert!(rig.tx_events().is_empty(), "{:?}", rig.tx_events());
    // The same tone on a radio nobody measured, within 2 ppm by the policy: on air, whole.
    rig.post_and_approve(
        "RUN_TX_NOCAL",
        &red_tx(),
        Some(&plan("driver=rxsim,serial=TXNOCAL")),
    );
    let out = rig.run("RUN_TX_NOCAL", Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(
        rig.tx_events()
            .iter()
            .filter(|(e, s)| e == "activateStream" && s == "TXNOCAL")
            .count(),
        1
    );
    // Args that do not name the serial: the guard learns which radio it is when it
    // opens it, and blocks there (the radio was opened: exit 1, not a refusal).
    calibrate("rxsim0");
    rig.post_and_approve("RUN_TX_CAL_G", &red_tx(), Some(&plan("driver=rxsim")));
    let out = rig.run("RUN_TX_CAL_G", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    assert_eq!(code(&out), Some(1), "{all}");
    assert!(
        all.contains("BLOCKED") && all.contains("measured clock error of +20"),
        "{all}"
    );
    assert!(
        !rig.tx_events()
            .iter()
            .any(|(e, s)| e == "activateStream" && s == "rxsim0"),
        "{:?}",
        rig.tx_events()
    );
}

/// A radio whose clock error was never measured may be off by its crystal's
/// whole tolerance: a tone 5 kHz inside the range by its asked frequency (434.785
/// MHz, the range ending at 434.79 MHz) would land outside it at +20 ppm, so with
/// the default `tx.unmeasured_clock_ppm` (20) it is refused before the `AUTHORIZE`
/// prompt when the args name the radio, and BLOCKED by the guard, the radio opened
/// but never keyed, when they do not; a tone 100 kHz from the edge still goes on air.
#[test]
fn a_tone_an_unmeasured_radios_crystal_could_move_out_of_range_is_refused() {
    let rig = Rig::new();
    rig.set_policy(TX_POLICY_OK);
    let plan = edge_tone_plan;
    rig.post_and_approve(
        "RUN_TX_UNM",
        &red_tx(),
        Some(&plan("driver=rxsim,serial=TXUNM", "434.78e6")),
    );
    let out = rig.run("RUN_TX_UNM", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    assert_eq!(code(&out), Some(3), "{all}");
    assert!(
        all.contains("clock error was never measured") && all.contains("tx.unmeasured_clock_ppm"),
        "{all}"
    );
    assert!(!all.contains("Type exactly"), "must not ask: {all}");
    assert!(rig.tx_events().is_empty(), "{:?}", rig.tx_events());
    // Args that do not name the radio: the guard judges the radio it opened.
    rig.post_and_approve(
        "RUN_TX_UNM_G",
        &red_tx(),
        Some(&plan("driver=rxsim", "434.78e6")),
    );
    let out = rig.run("RUN_TX_UNM_G", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    assert_eq!(code(&out), Some(1), "{all}");
    assert!(
        all.contains("BLOCKED") && all.contains("clock error was never measured"),
        "{all}"
    );
    assert!(
        !rig.tx_events().iter().any(|(e, _)| e == "activateStream"),
        "{:?}",
        rig.tx_events()
    );
    // Far from the edge (434.69 MHz: 20 ppm is 8.7 kHz), the same radio transmits.
    rig.post_and_approve(
        "RUN_TX_UNM_OK",
        &red_tx(),
        Some(&plan("driver=rxsim,serial=TXUNM", "434.69e6")),
    );
    let out = rig.run("RUN_TX_UNM_OK", Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert_eq!(
        rig.tx_events()
            .iter()
            .filter(|(e, s)| e == "activateStream" && s == "TXUNM")
            .count(),
        1
    );
}

/// The policy's `rx.calibration_max_age_s` bounds every use of a kept calibration,
/// the TX range check's too: a radio measured at 0 ppm whose measurement has since
/// aged past the limit (here 2 s), now running +20 ppm, must not have its tone at
/// 434.785 MHz (on air 434.7937 MHz, past the range's 434.79 MHz) judged by the old
/// figure. It was keyed; now it is refused before the prompt (args naming the radio)
/// or BLOCKED by the guard (args that do not), naming the measurement's age.
#[test]
fn a_tone_judged_by_a_calibration_past_its_max_age_is_refused() {
    let rig = Rig::new();
    rig.set_policy(
        r#"{"rx": {"max_duration_s": 10, "calibration_max_age_s": 2},
 "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    );
    let calibrate = |serial: &str| calibrate_gsm(&rig, serial, 0);
    calibrate("TXOLD");
    calibrate("rxsim0");
    std::thread::sleep(std::time::Duration::from_secs(3));
    let plan = |device: &str| edge_tone_plan(device, "434.78e6");
    rig.post_and_approve(
        "RUN_TX_OLD",
        &red_tx(),
        Some(&plan("driver=rxsim,serial=TXOLD,ppm=20")),
    );
    let out = rig.run("RUN_TX_OLD", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    assert_eq!(code(&out), Some(3), "{all}");
    assert!(
        all.contains("kept calibration")
            && all.contains(" old, past rx.calibration_max_age_s (2 s)"),
        "{all}"
    );
    assert!(!all.contains("Type exactly"), "must not ask: {all}");
    assert!(rig.tx_events().is_empty(), "{:?}", rig.tx_events());
    // Args that do not name the serial: the guard judges the radio it opened.
    rig.post_and_approve(
        "RUN_TX_OLD_G",
        &red_tx(),
        Some(&plan("driver=rxsim,ppm=20")),
    );
    let out = rig.run("RUN_TX_OLD_G", Some("AUTHORIZE RF TX\n"));
    let all = show(&out);
    assert_eq!(code(&out), Some(1), "{all}");
    assert!(
        all.contains("BLOCKED") && all.contains(" old, past rx.calibration_max_age_s"),
        "{all}"
    );
    assert!(
        !rig.tx_events().iter().any(|(e, _)| e == "activateStream"),
        "{:?}",
        rig.tx_events()
    );
}
