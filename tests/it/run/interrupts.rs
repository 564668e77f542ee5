//! Tampering, the STOP file, Ctrl-C and SIGTERM during a run, and the other interlock edges.
use super::*;

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

/// The run's terminal closed (SIGHUP) mid-capture: the capture stops as for
/// Ctrl-C (PARTIAL, exit 1), and the result's note names the terminal closing
/// among the signals that stop a run, not only "Ctrl-C / SIGTERM", which the
/// operator did not type.
#[cfg(unix)]
#[test]
fn a_run_whose_terminal_closes_says_so_in_its_partial_result() {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let id = "RUN_SIGHUP_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=LONGRUN", "frequency_hz": 100e6,
       "sample_rate_hz": 250e3, "duration_s": 30.0}
    ]}"#;
    rig.post_and_approve(id, &yellow(), Some(plan));
    let started = Instant::now();
    let child = rig.spawn_run(id, None);
    while !rig
        .stream_events("RX")
        .iter()
        .any(|(e, s)| e == "activateStream" && s == "LONGRUN")
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the capture never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    crate::util::signal(child.id(), libc::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let r = rig.result(id);
    assert_eq!(r.status, "PARTIAL");
    assert!(
        r.errors
            .iter()
            .any(|e| e.contains("interrupted") && e.contains("SIGHUP: its terminal closed")),
        "{:?}",
        r.errors
    );
}

// ---------------------------------------------------------------- more interlock edges

/// The approved-text check does not trust the state file alone: a forged
/// approval hash matching an edited `TASK.md` is refused — the approval's MAC
/// no longer verifies (a refusal of the state itself, which writes nothing),
/// and the text must equal the blob at the approved commit anyway.
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
    let refused_before = rig.refused_count(id);
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(3), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(&format!("approval for {id} is not signed by this node")),
        "{}",
        show(&out)
    );
    assert_eq!(rig.refused_count(id), refused_before, "nothing written");
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

/// `.local/STOP` put in place while a run is capturing holds every step that
/// has not started: the RED plan's `tx_tone` is `NOT RUN` naming the hold, the
/// TX radio is never opened, the capture that was running finishes.
#[test]
fn a_hold_put_in_place_during_a_run_keys_nothing_after_it() {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let id = "RUN_HOLD_MID_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=LISTEN", "frequency_hz": 433.92e6,
       "sample_rate_hz": 250e3, "duration_s": 1.5},
      {"op": "inventory"},
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
    std::fs::write(rig.lab.local().join("STOP"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let r = rig.result(id);
    let st: Vec<&str> = r.checks.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(st, ["PASS", "NOT RUN", "NOT RUN"], "{:#?}", r.checks);
    for c in &r.checks[1..] {
        assert!(c.detail.contains(".local/STOP"), "{:#?}", r.checks);
    }
    assert!(r.tx.is_none());
    assert!(rig.tx_events().is_empty(), "{:?}", rig.events());
    assert!(
        !rig.events().iter().any(|l| l.contains("TXNEVER")),
        "the TX radio was never opened: {:?}",
        rig.events()
    );
}

/// Ctrl-C (SIGINT) at the `AUTHORIZE RF TX` prompt: the run refuses as for a wrong
/// line — exit 3, one `refused` ledger line naming the interrupt, the run lock
/// released, the task still approved — instead of dying with its lock left for
/// the next run to take over as a stale one ("its PID is dead"). The next run,
/// authorized, transmits with no word of a stale lock.
#[cfg(unix)]
#[test]
fn ctrl_c_at_the_authorize_prompt_refuses_and_leaves_no_lock() {
    let rig = Rig::new();
    let id = "RUN_AUTH_INT_1";
    rig.set_policy(TX_POLICY_OK);
    rig.post_and_approve(id, &red_tx(), Some(tx_plan()));
    let refused_before = rig.refused_count(id);
    let mut pty = crate::util::Pty::spawn(
        rig.lab
            .rxnode()
            .args(["--sim", "run", id])
            .env("RXSIM_EVENT_LOG", &rig.events),
    );
    pty.wait_for("to authorize", 1, 60);
    // SAFETY: kill(2) on the child's own PID.
    assert_eq!(
        unsafe { libc::kill(pty.child.id() as i32, libc::SIGINT) },
        0
    );
    let status = pty.exited(20);
    assert_eq!(status.code(), Some(3), "{status:?}: {}", pty.screen());
    assert!(
        pty.screen().contains("interrupted at the prompt"),
        "{}",
        pty.screen()
    );
    assert!(!rig.lab.local().join("rxnode-run.lock").exists());
    assert_eq!(rig.refused_count(id), refused_before + 1);
    assert_eq!(rig.lab.status_of(id), "approved");
    assert!(rig.stream_events("TX").is_empty(), "{:?}", rig.events());
    let out = rig.run(id, Some("AUTHORIZE RF TX\n"));
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert!(!text(&out.stderr).contains("stale"), "{}", show(&out));
    assert_eq!(rig.result(id).status, "PASS");
}
