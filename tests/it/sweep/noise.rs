//! The band's floor and peaks of a sweep of pure noise with a short dwell (one Welch
//! average per hop), and a manual `--ppm` told once.
use super::*;

/// `sweep --json` of rxsim's noise over 88-108 MHz at 1 kHz bins: the JSON value.
fn noise_sweep(rig: &Rig, dwell: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec![
        "sweep",
        "--device",
        "driver=rxsim,serial=NOISE",
        "--start-hz",
        "88e6",
        "--stop-hz",
        "108e6",
        "--bin-hz",
        "1e3",
        "--sample-rate-hz",
        "2e6",
        "--dwell-s",
        dwell,
        "--settle-s",
        "0",
        "--gain-db",
        "20",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = rig.rxnode(&args, "");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    (out, v)
}

/// One average per hop over ~20 000 bins of noise lists no band peak (the noise's
/// own level, above the 10 dB minimum, is the threshold: `peak_threshold_db`), and
/// its floor reads the long dwell's within 0.3 dB (1.6 dB low before the median was
/// corrected to the mean).
#[test]
fn a_short_dwell_sweep_of_noise_lists_no_peak_and_keeps_the_floor() {
    let rig = Rig::new();
    let (out, long) = noise_sweep(&rig, "0.05", &[]);
    assert_eq!(long["status"], "PASS", "{}", show(&out));
    let (out, short) = noise_sweep(&rig, "0.0011", &[]);
    assert_eq!(short["status"], "PASS", "{}", show(&out));
    assert_eq!(
        short["peaks"].as_array().map(Vec::len),
        Some(0),
        "{short:#}"
    );
    let t = short["peak_threshold_db"].as_f64().expect("a threshold");
    assert!((11.0..13.0).contains(&t), "{t}");
    let lt = long["peak_threshold_db"].as_f64().expect("a threshold");
    assert_eq!(lt, 10.0);
    let (f, lf) = (
        short["noise_floor_db"].as_f64().unwrap(),
        long["noise_floor_db"].as_f64().unwrap(),
    );
    assert!((f - lf).abs() < 0.3, "short {f} vs long {lf}");
}

/// `sweep -p 10` says its correction once, as manual (`clock.ppm_correction_from`),
/// not as the radio's calibration and not a second time among the radio settings.
#[test]
fn a_sweep_says_a_manual_ppm_once() {
    let rig = Rig::new();
    let (out, v) = noise_sweep(&rig, "0.005", &["-p", "10"]);
    assert!(out.status.success(), "{}", show(&out));
    assert_eq!(v["clock"]["ppm_correction_from"], "manual", "{v:#}");
    let args: Vec<&str> = [
        "sweep",
        "--device",
        "driver=rxsim,serial=NOISE",
        "--start-hz",
        "88e6",
        "--stop-hz",
        "92e6",
        "--bin-hz",
        "10e3",
        "-p",
        "10",
    ]
    .to_vec();
    let out = rig.rxnode(&args, "");
    let text = util::text(&out.stdout);
    assert!(out.status.success(), "{}", show(&out));
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("correction")).collect();
    assert_eq!(
        lines,
        ["  correction    +10.000 ppm applied (manual, -p): the radio is tuned off the requested \
          frequency by that much so that the requested frequency is at the centre"],
        "{text}"
    );
}
