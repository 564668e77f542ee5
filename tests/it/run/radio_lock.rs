//! One process per radio: while `rxnode run` streams from a radio, a `capture`
//! or `sweep` on the same radio (written with other, non-identifying args) is
//! refused naming the holder, `status` says who uses it; a run step on a radio
//! a capture holds is BLOCKED naming the capture; once released it is free.
use super::*;
use std::time::{Duration, Instant};

const RADIO: &str = "driver=rxsim,serial=LOCK1";

fn long_capture_plan(seconds: f64) -> String {
    format!(
        r#"{{"steps": [{{"op": "rx_capture", "device": "{RADIO}", "frequency_hz": 100e6,
          "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": {seconds}}}]}}"#
    )
}

/// Wait until some process holds a radio in this checkout (its holder file is there).
fn wait_held(rig: &Rig, identity: &str) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let out = rig
            .lab
            .rxnode()
            .args(["status", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        // `status` lists every radio held on this machine: another test's real-radio
        // lock (the machine folder) may be there too; this one is ours.
        if let Some(held) = v["radios_in_use"]
            .as_array()
            .and_then(|a| a.iter().find(|h| h["identity"] == identity))
        {
            let mut v = v.clone();
            v["radios_in_use"] = serde_json::json!([held]);
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{identity} was never held: {}",
            show(&out)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn capture(rig: &Rig, device: &str, seconds: &str) -> std::process::Command {
    let mut c = rig.lab.rxnode();
    c.args([
        "--sim", "capture", "-d", device, "-f", "100M", "-r", "250k", "-t", seconds,
    ])
    .env("RXSIM_EVENT_LOG", &rig.events);
    c
}

#[test]
fn a_radio_in_use_is_refused_by_capture_sweep_and_run_naming_the_holder() {
    let rig = Rig::new();
    // Long enough that a loaded machine still refuses both commands before it ends.
    rig.post_and_approve("LOCK_RUN_1", &yellow(), Some(&long_capture_plan(20.0)));
    rig.post_and_approve("LOCK_RUN_2", &yellow(), Some(&long_capture_plan(0.2)));

    // A run holds the radio: capture and sweep wait briefly, then refuse (exit 1,
    // a device error) naming the run's PID, command and step.
    let run = rig.spawn_run("LOCK_RUN_1", None);
    let status = wait_held(&rig, RADIO);
    let held = &status["radios_in_use"][0];
    assert_eq!(held["identity"], "driver=rxsim,serial=LOCK1", "{status}");
    assert_eq!(held["command"], "run LOCK_RUN_1 step 1", "{status}");
    assert_eq!(held["pid"], run.id(), "{status}");
    assert_eq!(status["run_in_progress"]["command"], "run LOCK_RUN_1");
    let human = rig.lab.rxnode().arg("status").output().unwrap();
    assert!(
        text(&human.stdout).contains(&format!(
            "radio:      driver=rxsim,serial=LOCK1 in use by run LOCK_RUN_1 step 1 (PID {}",
            run.id()
        )),
        "{}",
        show(&human)
    );

    let other_args = "serial=LOCK1,driver=rxsim,tone_hz=100.1e6";
    let out = capture(&rig, other_args, "0.2").output().unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let said = text(&out.stderr);
    assert!(
        said.contains(&format!("PID {}", run.id()))
            && said.contains("run LOCK_RUN_1 step 1")
            && said.contains("in use"),
        "{}",
        show(&out)
    );
    // As operator.md shows it: the args typed, then the unit they open.
    assert!(
        said.contains(&format!(
            "rxnode: error: radio {other_args} (driver=rxsim,serial=LOCK1) is in use by another rxnode: PID {}",
            run.id()
        )) && said.contains("waited 3 s — fix: wait for that command to finish"),
        "{}",
        show(&out)
    );
    let out = rig
        .lab
        .rxnode()
        .args([
            "--sim",
            "--json",
            "sweep",
            "-d",
            RADIO,
            "--start-hz",
            "99M",
            "--stop-hz",
            "101M",
            "-B",
            "10k",
            "-r",
            "1M",
            "--dwell-s",
            "0.01",
        ])
        .env("RXSIM_EVENT_LOG", &rig.events)
        .output()
        .unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("PID {}", run.id()))),
        "{err}"
    );
    let out = run.wait_with_output().unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));

    // A capture holds the radio: the run's step is BLOCKED naming the capture.
    let mut cap = capture(&rig, RADIO, "6").spawn().unwrap();
    let status = wait_held(&rig, RADIO);
    assert_eq!(status["radios_in_use"][0]["command"], "capture");
    let out = rig.run("LOCK_RUN_2", None);
    assert_ne!(code(&out), Some(0), "{}", show(&out));
    let r = rig.result("LOCK_RUN_2");
    assert_eq!(r.checks[0].status, "BLOCKED", "{:?}", r.checks);
    assert!(
        r.checks[0].detail.contains(&format!("PID {}", cap.id()))
            && r.checks[0].detail.contains("capture"),
        "{:?}",
        r.checks
    );
    // The fix it gives is one that works: no step reached a radio, so the task
    // runs again once the radio is free (and it says so).
    assert!(
        r.checks[0]
            .detail
            .contains("if no step of this run reached a radio, `rxnode run LOCK_RUN_2` again")
            && !r.checks[0].detail.contains("try again"),
        "{:?}",
        r.checks
    );
    assert!(cap.wait().unwrap().success());
    let again = rig.run("LOCK_RUN_2", None);
    assert_eq!(code(&again), Some(0), "{}", show(&again));

    // Released: the radio is free again and nothing says it is in use.
    let out = rig
        .lab
        .rxnode()
        .args(["status", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["radios_in_use"], serde_json::json!([]), "{v}");
    let out = capture(&rig, RADIO, "0.1").output().unwrap();
    assert_eq!(code(&out), Some(0), "{}", show(&out));
}

/// One radio however its args are written and wherever rxnode runs: while a
/// capture streams `driver=rxsim` (the unit `rxsim0`) from the checkout, a capture
/// of the same unit written `driver=rxsim,serial=rxsim0`, `serial=rxsim0` (no
/// driver), `Serial=…,driver=rxsim` (a key the driver does not read: it still
/// opens rxsim0) or with a repeated key, run from another folder that is no
/// checkout, is refused naming the holder's PID and the unit; another unit is free.
#[test]
fn one_unit_is_one_lock_however_its_args_are_written_and_from_any_folder() {
    let rig = Rig::new();
    let mut cap = capture(&rig, "driver=rxsim", "40").spawn().unwrap();
    let status = wait_held(&rig, "driver=rxsim,serial=rxsim0");
    assert_eq!(
        status["radios_in_use"][0]["identity"], "driver=rxsim,serial=rxsim0",
        "{status}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let capture_elsewhere = |args: &str| {
        crate::util::rxnode_cmd()
            .current_dir(elsewhere.path())
            .args([
                "--sim", "capture", "-d", args, "-f", "100M", "-r", "250k", "-t", "0.2",
            ])
            .output()
            .unwrap()
    };
    for args in [
        "driver=rxsim,serial=rxsim0",
        "serial=rxsim0",
        "Serial=LOCK9,driver=rxsim",
        "driver=rxsim,serial=LOCK9,serial=rxsim0",
    ] {
        let out = capture_elsewhere(args);
        assert_eq!(code(&out), Some(1), "{args}: {}", show(&out));
        let said = text(&out.stderr);
        assert!(
            said.contains(&format!("PID {}", cap.id()))
                && said.contains("(driver=rxsim,serial=rxsim0) is in use"),
            "{args}: {}",
            show(&out)
        );
    }
    let out = capture_elsewhere("driver=rxsim,serial=FREE1");
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    let _ = cap.kill();
    let _ = cap.wait();
}

/// Two shells that disagree on `TMPDIR` and on `XDG_RUNTIME_DIR` (one without
/// it: `su`, cron, an SSH login without a session manager, a watcher left in tmux
/// after logout): one radio is still one lock, so the second capture is refused
/// naming the first, never opened beside it.
#[test]
fn one_radio_is_one_lock_whatever_tmpdir_each_shell_has() {
    let rig = Rig::new();
    let radio = format!("driver=rxsim,serial=TMPDIR{}", std::process::id());
    let (tmp_a, tmp_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let session = tempfile::tempdir().unwrap();
    let in_shell = |tmp: &std::path::Path| {
        let mut c = rig.lab.rxnode();
        c.env_remove("RXNODE_RADIO_LOCK_DIR")
            .env("TMPDIR", tmp)
            .env("RXSIM_EVENT_LOG", &rig.events);
        if tmp == tmp_a.path() {
            c.env("XDG_RUNTIME_DIR", session.path());
        } else {
            c.env_remove("XDG_RUNTIME_DIR");
        }
        c
    };
    let mut cap = in_shell(tmp_a.path())
        .args([
            "--sim", "capture", "-d", &radio, "-f", "100M", "-r", "250k", "-t", "20",
        ])
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let out = in_shell(tmp_a.path())
            .args(["status", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let held = v["radios_in_use"].as_array().is_some_and(|a| {
            a.iter()
                .any(|h| h["pid"] == cap.id() && h["command"] == "capture")
        });
        if held {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the capture never held {radio}: {}",
            show(&out)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = in_shell(tmp_b.path())
        .args([
            "--sim", "capture", "-d", &radio, "-f", "100M", "-r", "250k", "-t", "0.2",
        ])
        .output()
        .unwrap();
    let _ = cap.kill();
    let _ = cap.wait();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(&format!("is in use by another rxnode: PID {}", cap.id())),
        "{}",
        show(&out)
    );
}
