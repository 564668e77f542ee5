//! Using a kept calibration: `capture --apply-cal` and `sweep --apply-cal` tune with
//! the fresh measurement and say so; a missing or stale one refuses.
use super::*;

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(o)))
}

/// `capture --apply-cal` tunes with the radio's fresh measurement (the tone lands at
/// its true RF) and says so in the `clock` block of the summary and of the SigMF
/// recording (the `rxnode` extension, accepted by the sigmf package's validator); a
/// capture without it only reports the measurement; a missing or stale one refuses.
#[test]
fn apply_cal_corrects_with_a_fresh_measurement_and_refuses_a_missing_or_stale_one() {
    let lab = Lab::new();
    let o = calibrate(&lab, &gsm_radio("fc6", 17.3, 10.0), "gsm", &["-t", "3"]);
    expect_exit!(o, 0);
    let measured = parsed(&o).ppm.unwrap_or(f64::NAN);
    let radio = "driver=rxsim,serial=fc6,pace=0,ppm=17.3,tone_hz=935.3e6";
    // Without --apply-cal: the tone where the fast clock puts it, the measurement shown.
    let plain = json_of(&capture(&lab, radio, &[]));
    let peak = plain["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!(
        (peak - (935.3e6 - 17.3e-6 * 935.2e6)).abs() < 1_000.0,
        "{peak}"
    );
    assert_eq!(
        plain["clock"]["ppm_correction_applied"],
        serde_json::Value::Null
    );
    assert_eq!(
        plain["clock"]["last_measurement"]["ppm"].as_f64(),
        Some(measured)
    );
    assert_eq!(plain["clock"]["last_measurement"]["stale"], false);
    // With it: at its true RF, recorded with the clock block.
    let rec = lab.local().join("rx_iq/cal.sigmf-data");
    let o = capture(
        &lab,
        radio,
        &["--apply-cal", "--record", rec.to_str().unwrap_or_default()],
    );
    expect_exit!(o, 0);
    let cor = json_of(&o);
    assert_eq!(
        cor["clock"]["ppm_correction_applied"].as_f64(),
        Some(measured)
    );
    let peak = cor["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!((peak - 935.3e6).abs() < 1_000.0, "{peak}");
    let meta = rec.with_extension("sigmf-meta");
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys\nfrom sigmf import sigmffile\nf = sigmffile.fromfile(sys.argv[1])\nf.validate()\n\
             ext = [e['name'] for e in f.get_global_field('core:extensions')]\n\
             print(ext, f.get_global_field('rxnode:clock')['ppm_correction_applied'])",
        )
        .arg(&meta)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        py.status.success(),
        "the sigmf check failed (pip install sigmf; scripts/setup.sh does it): {}",
        show(&py)
    );
    assert_eq!(
        String::from_utf8_lossy(&py.stdout).trim(),
        format!("['rxnode'] {measured}")
    );
    // Its `rxnode:*` keys validate against `rxnode schema sigmf-rxnode`; a clock
    // block without its source does not.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap_or_default())
            .unwrap_or_default();
    let mut bad = written.clone();
    if let Some(c) = bad["global"]["rxnode:clock"].as_object_mut() {
        c.remove("source");
    }
    let verdicts = crate::mainpc::schemas::jsonschema_verdicts(&[
        ("recorded meta".into(), "sigmf-rxnode", written),
        ("clock without source".into(), "sigmf-rxnode", bad),
    ]);
    let valid: Vec<bool> = verdicts.iter().map(|v| v.1).collect();
    assert_eq!(valid, [true, false], "{verdicts:?}");
    // Analysed later, the recording's clock block comes with it.
    let an = json_of(&run_fed(
        lab.rxnode()
            .args(["--json", "analyze", meta.to_str().unwrap_or_default()]),
        b"",
    ));
    assert_eq!(an["clock"]["from"], "recording", "{an}");
    assert_eq!(
        an["clock"]["last_measurement"]["ppm"].as_f64(),
        Some(measured)
    );
    assert_eq!(
        an["clock"]["ppm_correction_applied"].as_f64(),
        Some(measured)
    );
    // The recording's core:frequency is its true RF centre (not the corrected dial
    // setting, 16 kHz lower), so `analyze` and any SigMF reader put the tone at its
    // true RF.
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap_or_default())
            .unwrap_or_default();
    let centre = m["captures"][0]["core:frequency"].as_f64().unwrap_or(0.0);
    assert!((centre - 935.2e6).abs() < 1.0, "{centre}");
    let peak = an["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!((peak - 935.3e6).abs() < 1_000.0, "{peak}: {an}");
    // A sweep with it: every hop tuned with the correction, the emitter at its true RF.
    let sweep = |extra: &[&str]| {
        json_of(&run_fed(
            lab.rxnode()
                .arg("--sim")
                .args([
                    "sweep",
                    "-d",
                    "driver=rxsim,serial=fc6,pace=0,ppm=17.3,emitters=935.3e6:-30",
                    "--start-hz",
                    "934.5M",
                    "--stop-hz",
                    "936M",
                    "--bin-hz",
                    "500",
                    "-r",
                    "2M",
                    "--json",
                ])
                .args(extra),
            b"",
        ))
    };
    let plain = sweep(&[]);
    let peak = plain["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!(
        (peak - (935.3e6 - 17.3e-6 * 935.2e6)).abs() < 1_500.0,
        "{peak}"
    );
    assert_eq!(
        plain["clock"]["ppm_correction_applied"],
        serde_json::Value::Null
    );
    let cor = sweep(&["--apply-cal"]);
    let peak = cor["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!((peak - 935.3e6).abs() < 1_000.0, "{peak}");
    assert_eq!(
        cor["clock"]["ppm_correction_applied"].as_f64(),
        Some(measured)
    );
    // Another radio was never measured: refused, naming it.
    let o = capture(
        &lab,
        "driver=rxsim,serial=fc7,pace=0,tone_hz=935.3e6",
        &["--apply-cal"],
    );
    expect_exit!(o, 3);
    assert!(
        show(&o).contains("no frequency calibration of driver=rxsim,serial=fc7"),
        "{}",
        show(&o)
    );
    // A measurement older than the policy's limit is stale: shown so, never applied.
    lab.set_policy(r#"{"rx": {"calibration_max_age_s": 1}}"#);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let o = capture(&lab, radio, &["--apply-cal"]);
    expect_exit!(o, 3);
    assert!(
        show(&o).contains("the calibration of driver=rxsim,serial=fc6"),
        "{}",
        show(&o)
    );
    assert!(show(&o).contains("is stale"), "{}", show(&o));
    let plain = json_of(&capture(&lab, radio, &[]));
    assert_eq!(plain["clock"]["last_measurement"]["stale"], true);
    assert_eq!(
        plain["clock"]["ppm_correction_applied"],
        serde_json::Value::Null
    );
}

/// A correction is never silent: `capture --apply-cal` and `sweep --apply-cal` say in
/// text which correction they applied and from which measurement (an actual frequency
/// off the requested one then does not read as a tuning error), and `clkin calibrate`
/// offers `--apply-cal` only for a measurement it kept.
#[test]
fn applied_corrections_are_said_in_text_and_apply_cal_is_offered_only_when_kept() {
    let lab = Lab::new();
    let dev = gsm_radio("fc9", 17.3, 10.0);
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "clkin",
            "calibrate",
            "-d",
            &dev,
            "--method",
            "gsm",
            "-f",
            "935.2M",
            "-t",
            "3",
        ]),
        b"",
    );
    expect_exit!(o, 0);
    let so = text(&o.stdout);
    assert!(
        so.contains("kept in .local/calibration.json: `--apply-cal` on a capture or sweep"),
        "{so}"
    );
    let radio = "driver=rxsim,serial=fc9,pace=0,ppm=17.3,tone_hz=935.3e6";
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture",
            "-d",
            radio,
            "-f",
            "935.2M",
            "-r",
            "1M",
            "-t",
            "0.3",
            "--apply-cal",
        ]),
        b"",
    );
    expect_exit!(o, 0);
    let so = text(&o.stdout);
    assert!(
        so.contains("  correction    +17.3") && so.contains("ppm applied (gsm measurement of "),
        "{so}"
    );
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "sweep",
            "-d",
            "driver=rxsim,serial=fc9,pace=0,ppm=17.3,emitters=935.3e6:-30",
            "--start-hz",
            "934.5M",
            "--stop-hz",
            "936M",
            "--bin-hz",
            "1k",
            "-r",
            "2M",
            "--apply-cal",
        ]),
        b"",
    );
    expect_exit!(o, 0);
    assert!(
        text(&o.stdout).contains("ppm applied (gsm measurement of "),
        "{}",
        show(&o)
    );
    // Without --apply-cal nothing claims a correction.
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture", "-d", radio, "-f", "935.2M", "-r", "1M", "-t", "0.3",
        ]),
        b"",
    );
    assert!(!text(&o.stdout).contains("correction"), "{}", show(&o));
    // Outside a checkout nothing is kept, and --apply-cal is not offered.
    let away = tempfile::tempdir().unwrap();
    let o = run_fed(
        util::rxnode_cmd()
            .current_dir(away.path())
            .arg("--sim")
            .args([
                "clkin",
                "calibrate",
                "-d",
                &dev,
                "--method",
                "gsm",
                "-f",
                "935.2M",
                "-t",
                "3",
            ]),
        b"",
    );
    let so = text(&o.stdout);
    assert!(
        so.contains("`--apply-cal` will not use this measurement"),
        "{so}"
    );
    assert!(!so.contains("or apply it with --apply-cal"), "{so}");
}
