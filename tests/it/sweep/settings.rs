//! The radio's own settings on a sweep: `--setting`, `--stream-args`, `--agc`,
//! `--ppm` and the same fields of an `rx_sweep` step, gated by the node policy's
//! `rx.allowed_settings` (fail closed), witnessed in rxsim's own event log.
use super::*;

fn log_of(rig: &Rig) -> String {
    std::fs::read_to_string(&rig.events).unwrap_or_default()
}

/// A setting the policy does not list is refused before the radio is opened
/// (exit 3, naming the key and the policy key), as is a power-named stream arg;
/// once listed it reaches the radio, with the stream args and AGC, and the JSON
/// says what was written. `--ppm` with `--apply-cal` is a usage error.
#[test]
fn sweep_settings_are_refused_unless_listed_and_reach_the_radio() {
    let rig = Rig::new();
    let dev = scene("SET1", "");
    let out = rig.rxnode(
        &sweep_args(&dev, &["--setting", "biastee=true", "--json"]),
        "",
    );
    expect_exit!(out, 3);
    let err = util::text(&out.stderr);
    assert!(
        err.contains("settings.biastee is not in rx.allowed_settings []"),
        "{err}"
    );
    assert!(
        !log_of(&rig).contains("serial=SET1"),
        "the radio was not opened"
    );
    rig.set_policy(r#"{"rx": {"allowed_settings": ["biastee"]}}"#);
    let out = rig.rxnode(
        &sweep_args(&dev, &["--stream-args", "bias_tx=1", "--json"]),
        "",
    );
    expect_exit!(out, 3);
    assert!(util::text(&out.stderr).contains("stream_args.bias_tx is not in rx.allowed_settings"));
    let out = rig.rxnode(
        &sweep_args(
            &dev,
            &[
                "--setting",
                "biastee=true",
                "--stream-args",
                "bufflen=4096,buffers=8",
                "--agc",
                "-p",
                "-1.5",
                "--json",
            ],
        ),
        "",
    );
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["radio_settings"];
    assert_eq!(r["settings"]["biastee"], "true");
    assert_eq!(r["stream_args"]["bufflen"], "4096");
    assert_eq!(r["agc"], true);
    assert_eq!(r["ppm"], -1.5);
    let log = log_of(&rig);
    for want in [
        "writeSetting biastee=true serial=SET1",
        "setGainMode on RX serial=SET1",
        "streamArg bufflen=4096 RX serial=SET1",
        "streamArg buffers=8 RX serial=SET1",
    ] {
        assert!(log.contains(want), "{want} not in\n{log}");
    }
    // The settings are written before the stream is set up.
    let at = |w: &str| log.find(w).unwrap();
    assert!(at("writeSetting biastee") < at("setupStream RX serial=SET1"));
    let out = rig.rxnode(&sweep_args(&dev, &["--ppm", "1", "--apply-cal"]), "");
    expect_exit!(out, 2);
    // A channel the radio has (rxsim: one) is used; one it lacks is refused, naming it.
    let out = rig.rxnode(&sweep_args(&dev, &["-C", "0"]), "");
    expect_exit!(out, 0);
    let out = rig.rxnode(&sweep_args(&scene("SET9", ""), &["--channel", "1"]), "");
    expect_exit!(out, 2);
    let err = util::text(&out.stderr);
    assert!(err.contains("channel") && err.contains("0..0"), "{err}");
    assert!(!log_of(&rig).contains("setupStream RX serial=SET9"));
}

/// In a plan: an `rx_sweep` step's `settings` reach the radio when the policy lists
/// the key; a key it does not list blocks the step without opening the radio.
#[test]
fn plan_sweep_settings_follow_the_policy() {
    let rig = Rig::new();
    let step = |serial: &str, key: &str| {
        format!(
            r#"{{"steps": [{{"op": "rx_sweep", "device": "{}", "start_hz": 88e6, "stop_hz": 98e6,
            "bin_hz": 10e3, "dwell_s": 0.005, "settle_s": 0.002, "settings": {{"{key}": "1"}},
            "agc": true}}]}}"#,
            scene(serial, "")
        )
    };
    rig.set_policy(r#"{"rx": {"allowed_settings": ["biastee"]}}"#);
    rig.post_and_approve("SET_PLAN_1", &step("SETP1", "biastee"));
    let out = rig.rxnode(&["run", "SET_PLAN_1"], "");
    expect_exit!(out, 0);
    let log = log_of(&rig);
    assert!(log.contains("writeSetting biastee=1 serial=SETP1"), "{log}");
    assert!(log.contains("setGainMode on RX serial=SETP1"), "{log}");
    rig.post_and_approve("SET_PLAN_2", &step("SETP2", "direct_samp"));
    let out = rig.rxnode(&["run", "SET_PLAN_2"], "");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(rig.outbox("SET_PLAN_2").join("RX_RESULT.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["checks"][0]["status"], "BLOCKED", "{r:#}");
    assert!(
        r["checks"][0]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("settings.direct_samp is not in rx.allowed_settings"),
        "{r:#}"
    );
    assert!(!log_of(&rig).contains("serial=SETP2"));
}

/// `capture` takes the same settings under the same rule: refused (exit 3) unless
/// listed, written to the radio before its stream when listed; a manual `--ppm`
/// moves the tuning as a calibration would and the `clock` block says so.
#[test]
fn capture_settings_follow_the_policy_and_reach_the_radio() {
    let rig = Rig::new();
    let cap = |serial: &str, extra: &[&str]| {
        let dev = format!("driver=rxsim,serial={serial}");
        let mut a = vec![
            "capture", "-d", &dev, "-f", "100M", "-r", "2M", "-t", "0.1", "--json",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        a.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        rig.rxnode(&refs, "")
    };
    let out = cap("CAP1", &["--setting", "biastee=true"]);
    expect_exit!(out, 3);
    assert!(util::text(&out.stderr).contains("settings.biastee is not in rx.allowed_settings"));
    assert!(!log_of(&rig).contains("serial=CAP1"));
    rig.set_policy(r#"{"rx": {"allowed_settings": ["biastee"]}}"#);
    let out = cap(
        "CAP2",
        &[
            "--setting",
            "biastee=true",
            "--agc",
            "--stream-args",
            "bufflen=4096",
            "--ppm",
            "2",
        ],
    );
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["clock"]["ppm_correction_applied"], 2.0, "{v:#}");
    let log = log_of(&rig);
    let at = |w: &str| log.find(w).unwrap_or_else(|| panic!("{w} not in\n{log}"));
    assert!(at("writeSetting biastee=true serial=CAP2") < at("setupStream RX serial=CAP2"));
    at("setGainMode on RX serial=CAP2");
    at("streamArg bufflen=4096 RX serial=CAP2");
    let out = cap("CAP3", &["--ppm", "2", "--apply-cal"]);
    expect_exit!(out, 2);
}
