//! A YELLOW plan runs with complete, honest results; what is not approved does not run.
use super::*;

fn md_row_status(md: &str, key: &str) -> Option<String> {
    md.lines()
        .find(|l| l.starts_with(&format!("| {key} |")))
        .and_then(|l| l.split('|').nth(2))
        .map(|s| s.trim().to_owned())
}

// ---------------------------------------------------------------- 1. YELLOW

/// An approved YELLOW plan runs with complete, honest results.
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
    captures_and_recordings_hold(&rig, &r, id);
    radio_markdown_and_ledger_hold(&rig, &r, id);
}

/// The two captures (A locked, B 2.5 ppm fast) and A's recording: relative paths, true sizes and hashes.
fn captures_and_recordings_hold(rig: &Rig, r: &RxResultT, id: &str) {
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
}

/// Every RX stream opened was closed and none was TX; the Markdown agrees; the ledger and state say completed.
fn radio_markdown_and_ledger_hold(rig: &Rig, r: &RxResultT, id: &str) {
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

/// The disk fills while a plan records IQ (a real file-size limit, RLIMIT_FSIZE,
/// on the rxnode process): the result holds no absolute path, `rxnode
/// validate-result` accepts it, and the partial recording is listed with its
/// checkout-relative path, true size, SHA-256 and `partial: true`.
#[cfg(unix)]
#[test]
fn a_full_disk_while_recording_lists_the_partial_file_in_a_valid_result() {
    use std::os::unix::process::CommandExt;
    const LIMIT: u64 = 2 << 20;
    let rig = Rig::new();
    let id = "RUN_DISK_FULL";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=DF", "frequency_hz": 100.0e6,
       "sample_rate_hz": 1.0e6, "gain_db": 20, "duration_s": 0.5, "fft_size": 2048,
       "record_iq": true}
    ]}"#;
    rig.post_and_approve(id, &yellow(), Some(plan));
    let mut cmd = rig.lab.rxnode();
    cmd.args(["--sim", "run", id])
        .env("RXSIM_EVENT_LOG", &rig.events)
        .env("NO_COLOR", "1");
    // SAFETY: only setrlimit(2), async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: LIMIT as libc::rlim_t,
                rlim_max: LIMIT as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = spawn_fed(&mut cmd, b"").wait_with_output().unwrap();
    assert_eq!(code(&out), Some(1), "not PASS ⇒ exit 1\n{}", show(&out));
    let json_path = rig.outbox(id).join("RX_RESULT.json");
    let json = std::fs::read_to_string(&json_path).unwrap();
    let root = rig.lab.dir.path().canonicalize().unwrap();
    assert!(
        !json.contains(root.to_str().unwrap())
            && !json.contains(rig.lab.dir.path().to_str().unwrap()),
        "an absolute path in the result:\n{json}"
    );
    let v = util::run_fed(rig.lab.rxnode().args(["validate-result", id]), b"");
    assert_eq!(code(&v), Some(0), "validate-result: {}", show(&v));
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_ne!(r["status"], "PASS", "{r:#}");
    let files = r["captures"][0]["iq_files"].as_array().expect("iq_files");
    let data = files
        .iter()
        .find(|f| f["partial"] == true)
        .unwrap_or_else(|| panic!("no partial file listed: {r:#}"));
    let rel = data["path"].as_str().unwrap();
    assert!(rel.starts_with(".local/rx_iq/"), "{rel}");
    let on_disk = rig.lab.rx.join(rel);
    let size = std::fs::metadata(&on_disk).unwrap().len();
    assert_eq!(data["bytes"].as_u64(), Some(size));
    assert!(size > 0 && size <= LIMIT, "{size}");
    assert_eq!(
        data["sha256"].as_str(),
        Some(sha256_file(&on_disk).as_str())
    );
    let why = r.to_string();
    assert!(
        why.contains("recording"),
        "says the recording stopped: {r:#}"
    );
    println!("partial recording listed: {rel}, {size} bytes");
}
