//! A radio reached through SoapyRemote is its own radio for calibration: its
//! measurement is kept under its server, never given to a local radio with the same
//! driver and serial.
use super::*;

/// `clkin calibrate` of a served rxsim `rcal` (+12 ppm) keeps the measurement under
/// `driver=…,remote=tcp://…,serial=rcal`; a local rxsim with the same serial has
/// none (`--apply-cal` refuses naming it), and the served one finds its own.
#[test]
fn a_served_radios_calibration_is_kept_under_its_server_not_the_local_radio() {
    let srv = Server::start();
    let lab = Lab::new();
    let remote = srv.device("serial=rcal,pace=0,ppm=12,gsm_freq=935.2e6,gsm_snr_db=10");
    let out = client()
        .arg("--repo")
        .arg(&lab.rx)
        .args([
            "clkin",
            "calibrate",
            "-d",
            &remote,
            "--method",
            "gsm",
            "-f",
            "935.2M",
            "-t",
            "3",
            "--json",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let r = json_of(&out);
    assert_eq!(r["calibration_stored"], true, "{r:#}");
    let radio = r["clock"]["radio"].as_str().unwrap_or_default().to_owned();
    assert!(
        radio.contains(&format!("remote={}", srv.url())) && radio.ends_with("serial=rcal"),
        "{radio}"
    );
    let file: Value =
        serde_json::from_slice(&std::fs::read(lab.local().join("calibration.json")).unwrap())
            .unwrap();
    let keys: Vec<&String> = file["sealed"]["radios"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, vec![&radio], "{file:#}");
    // The local radio with the same driver and serial was never measured.
    let out = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture",
            "-d",
            "driver=rxsim,serial=rcal,pace=0",
            "-f",
            "935.2M",
            "-r",
            "1M",
            "-t",
            "0.2",
            "--apply-cal",
            "--json",
        ]),
        b"",
    );
    expect_exit!(out, 3);
    assert!(
        show(&out).contains("no frequency calibration of driver=rxsim,serial=rcal"),
        "{}",
        show(&out)
    );
}
