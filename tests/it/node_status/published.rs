//! What a node status carries beyond being alive, each published at once: the
//! radio health, the running task and its step, the last calibration of each radio,
//! and when the last result landed.
use super::*;

/// A radio's health reaches the status as it changes: the policy's radio is
/// `UNTESTED` until tested, `GOOD` after a passing self-test and `BAD` (with
/// why) after a failing one — each published at once, not at the next heartbeat.
#[test]
fn radio_health_changes_are_published_at_once() {
    let lab = Lab::new();
    name(&lab, "HEALTH-RX");
    lab.set_policy(
        r#"{"status": {"publish_every_s": 60},
            "health": {"radios": ["driver=rxsim,serial=hs1"], "self_test_every_s": 86400}}"#,
    );
    let radio = |lab: &Lab| -> Option<Value> {
        published(&lab.origin, "HEALTH-RX")?["radios"]
            .as_array()?
            .iter()
            .find(|r| r["device"] == "driver=rxsim,serial=hs1")
            .cloned()
    };
    // Before the watcher runs: what would be published lists the radio UNTESTED.
    let out = lab.run(&["--json", "status"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let radios = &v["status_publishing"]["would_publish"]["radios"];
    assert_eq!(radios[0]["device"], "driver=rxsim,serial=hs1", "{v}");
    assert_eq!(radios[0]["health"], "UNTESTED", "{v}");
    let mut c = lab.rxnode();
    c.arg("--sim");
    let _w = Watcher::start(c, "0.3");
    // The watcher self-tests the policy's radio at start.
    let good = wait_for(Duration::from_secs(30), || {
        radio(&lab).filter(|r| r["health"] == "GOOD")
    })
    .expect("GOOD after the start-up self-test");
    assert!(good["last_self_test"].is_string(), "{good}");
    let out = lab.run(
        &[
            "--sim",
            "health",
            "test",
            "driver=rxsim,serial=hs1,fail_open=1",
        ],
        "",
    );
    expect_exit!(out, 1);
    let bad = wait_for(Duration::from_secs(10), || {
        radio(&lab).filter(|r| r["health"] == "BAD")
    })
    .expect("BAD in the status well before the next (60 s) heartbeat");
    assert!(
        bad["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{bad}"
    );
    let list = nodes(&lab.main);
    let n = node_of(&list, "HEALTH-RX").unwrap();
    assert_eq!(n["radios"][0]["health"], "BAD", "{n}");
    let status = published(&lab.origin, "HEALTH-RX").unwrap();
    let file = local_json(&lab, "rxnode-health.json");
    let mut odd = file.clone();
    odd["sealed"]["radios"]["driver=rxsim,serial=hs1"]["health"] = "FINE".into();
    let mut no_mac = file.clone();
    no_mac.as_object_mut().unwrap().remove("node_mac");
    assert_schemas(vec![
        ("published status", "status", status, true),
        ("health file", "health", file, true),
        ("health FINE", "health", odd, false),
        ("no node_mac", "health", no_mac, false),
    ]);
}

/// A run starting, moving to its next step and ending reaches the status at
/// once: the running task and its step while `rxnode run` works, nothing after.
#[test]
fn a_running_task_and_its_step_are_published_while_it_runs() {
    let lab = Lab::new();
    name(&lab, "RUN-RX");
    let plan = r#"{"steps": [
      {"op": "inventory"},
      {"op": "rx_capture", "device": "driver=rxsim,serial=STATUSRUN", "frequency_hz": 100e6,
       "sample_rate_hz": 250e3, "duration_s": 4.0}
    ]}"#;
    lab.post_and_approve(
        "RUN_STATUS_1",
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(plan),
    );
    set_status_policy(&lab, 60.0);
    let _w = Watcher::start(lab.rxnode(), "0.3");
    let first = wait_for(Duration::from_secs(15), || published(&lab.origin, "RUN-RX"));
    assert_eq!(first.unwrap()["queue"]["approved"], 1);
    let run = lab
        .rxnode()
        .args(["--sim", "run", "RUN_STATUS_1"])
        .env("RXSIM_EVENT_LOG", lab.events_log())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut run = Watcher(run);
    let running = wait_for(Duration::from_secs(15), || {
        let s = published(&lab.origin, "RUN-RX")?;
        let r = s["queue"]["running"].clone();
        (r["step"] == 2).then_some(r)
    })
    .expect("the running capture step in the status");
    assert_eq!(running["task_id"], "RUN_STATUS_1", "{running}");
    assert_eq!(running["steps"], 2, "{running}");
    assert_eq!(running["op"], "rx_capture", "{running}");
    let st = run.0.wait().unwrap();
    assert!(st.success(), "{st:?}");
    let after = wait_for(Duration::from_secs(10), || {
        published(&lab.origin, "RUN-RX")
            .filter(|s| s["queue"]["running"].is_null() && s["queue"]["approved"] == 0)
    })
    .expect("no running task and nothing approved left after the run");
    assert_eq!(after["watcher"], "running", "{after}");
    assert!(!lab.local().join("rx_run_progress.json").exists());
}

/// A radio's frequency calibration (`rxnode clkin calibrate`) reaches the
/// status at once, and the main PC shows it per node.
#[test]
fn the_last_calibration_of_each_radio_is_published() {
    let lab = Lab::new();
    name(&lab, "CAL-RX");
    set_status_policy(&lab, 60.0);
    let _w = Watcher::start(lab.rxnode(), "0.3");
    let first = wait_for(Duration::from_secs(15), || published(&lab.origin, "CAL-RX"))
        .expect("a first status");
    assert_eq!(first["calibration"], serde_json::json!([]), "{first}");
    let out = crate::util::run_fed(
        lab.rxnode().arg("--sim").args([
            "clkin",
            "calibrate",
            "-d",
            "driver=rxsim,serial=stcal,pace=0,ppm=12.5,gsm_freq=935.2e6,gsm_snr_db=10",
            "--method",
            "gsm",
            "-f",
            "935.2M",
        ]),
        b"",
    );
    expect_exit!(out, 0);
    let cal = wait_for(Duration::from_secs(10), || {
        published(&lab.origin, "CAL-RX")?["calibration"]
            .as_array()?
            .first()
            .cloned()
    })
    .expect("the calibration in the status before the next heartbeat");
    assert_eq!(cal["device"], "driver=rxsim,serial=stcal", "{cal}");
    assert_eq!(cal["method"], "gsm", "{cal}");
    let ppm = cal["ppm"].as_f64().unwrap();
    assert!((ppm - 12.5).abs() < 0.2, "{cal}");
    assert!(cal["time"].is_string(), "{cal}");
    let list = nodes(&lab.main);
    let n = node_of(&list, "CAL-RX").unwrap();
    assert_eq!(
        n["calibration"][0]["device"], "driver=rxsim,serial=stcal",
        "{n}"
    );
    // What was written and published validates against the schemas generated
    // from the types; a broken variant does not.
    let status = published(&lab.origin, "CAL-RX").unwrap();
    let file = local_json(&lab, "calibration.json");
    let mut v2 = file.clone();
    v2["sealed"]["schema_version"] = 2.into();
    let mut extra = file.clone();
    extra["sealed"]["radios"]["driver=rxsim,serial=stcal"]["latest"]["note"] = "x".into();
    let mut no_ppm = status.clone();
    no_ppm["calibration"][0]["ppm"] = "12.5".into();
    assert_schemas(vec![
        ("published status", "status", status, true),
        ("calibration file", "calibration", file, true),
        ("schema_version 2", "calibration", v2, false),
        ("unknown field", "calibration", extra, false),
        ("ppm as text", "status", no_ppm, false),
    ]);
}

/// `last_result_landed_at` has the form of every other time `results nodes`
/// prints (`2026-12-01T08:00:09+00:00`): it was the only one ending in `Z`.
#[test]
fn the_landing_time_has_the_form_of_every_other_time() {
    let lab = Lab::new();
    name(&lab, "LANDED-RX");
    let t = Lab::task(
        "LANDED_FORM_1",
        &lab.main_head(),
        &[("ALLOW_PUSH", "RX_RESULT_ONLY")],
    );
    lab.post(&t);
    lab.approve("LANDED_FORM_1");
    let out = lab.run(
        &["publish", "LANDED_FORM_1", "--push"],
        "PUBLISH LANDED_FORM_1\n",
    );
    expect_exit!(out, 0);
    let list = nodes(&lab.main);
    let n = node_of(&list, "LANDED-RX").expect("the node");
    let landed = n["last_result_landed_at"].as_str().expect("a landing time");
    let b = landed.as_bytes();
    assert!(
        b.len() == 25
            && landed.ends_with("+00:00")
            && b[10] == b'T'
            && b.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 | 16 => *c == b':',
                19..=24 => true,
                _ => c.is_ascii_digit(),
            }),
        "{landed}"
    );
}

/// A node whose newest result carries no completion time (a manual task published
/// without a run) shows when that result landed, never a bare dash.
#[test]
fn a_last_result_without_a_completion_time_shows_when_it_landed() {
    let lab = Lab::new();
    name(&lab, "MANUAL-RX");
    let t = Lab::task(
        "MANUAL_LANDED_1",
        &lab.main_head(),
        &[("ALLOW_PUSH", "RX_RESULT_ONLY")],
    );
    lab.post(&t);
    lab.approve("MANUAL_LANDED_1");
    let out = lab.run(
        &["publish", "MANUAL_LANDED_1", "--push"],
        "PUBLISH MANUAL_LANDED_1\n",
    );
    expect_exit!(out, 0);
    let list = nodes(&lab.main);
    let n = node_of(&list, "MANUAL-RX").expect("the node");
    assert_eq!(n["last_task_id"], "MANUAL_LANDED_1", "{n}");
    assert!(n["last_result_at"].is_null(), "{n}");
    let landed = n["last_result_landed_at"].as_str().expect("a landing time");
    assert!(landed.starts_with("20"), "{n}");
    assert_eq!(n["state"], "silent", "no status published: {n}");
    let out = crate::util::run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(&lab.main)
            .args(["results", "nodes"]),
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("landed on rx-node {landed}")),
        "{text}"
    );
    assert!(!text.contains('—'), "{text}");
}
