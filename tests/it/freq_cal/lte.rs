//! Calibrating on an LTE cell: `clkin calibrate --method lte` over the simulated
//! radio's FDD and TDD cells, and the LTE `freq_cal` step of a run.
use super::*;

fn lte_radio(serial: &str, ppm: f64, snr_db: f64, pci: u16) -> String {
    format!(
        "driver=rxsim,serial={serial},pace=0,ppm={ppm},lte_freq=1842.5e6,lte_pci={pci},lte_snr_db={snr_db}"
    )
}

fn calibrate_lte(lab: &Lab, device: &str, extra: &[&str]) -> Output {
    run_fed(
        lab.rxnode()
            .arg("--sim")
            .args([
                "clkin",
                "calibrate",
                "-d",
                device,
                "--method",
                "lte",
                "-f",
                "1842.5M",
                "--json",
            ])
            .args(extra),
        b"",
    )
}

/// The LTE acceptance case through the binary: a cell at −6 dB in its 1.08 MHz, a
/// radio at +37 ppm, 2 s → within ±0.05 ppm with an honest uncertainty, the cell's
/// PCI named, the measurement kept for the radio, a picture drawn.
#[test]
fn clkin_calibrate_finds_an_lte_radio_error_and_its_cell() {
    let lab = Lab::new();
    let png = lab.dir.path().join("pss.png");
    let o = calibrate_lte(
        &lab,
        &lte_radio("lte1", 37.0, -6.0, 301),
        &["-t", "2", "--plot", png.to_str().unwrap_or_default()],
    );
    expect_exit!(o, 0);
    let r = parsed(&o);
    assert_eq!(
        (r.status.as_str(), r.method.as_str()),
        ("PASS", "lte"),
        "{}",
        r.detail
    );
    let ppm = r.ppm.unwrap_or(f64::NAN);
    assert!((ppm - 37.0).abs() <= 0.05, "{ppm}: {}", r.detail);
    let u = r.uncertainty_ppm.unwrap_or(f64::NAN);
    let mu = r.measurement_uncertainty_ppm.unwrap_or(f64::NAN);
    assert!(mu > 0.0 && mu < 0.02, "{mu}");
    assert!(
        (u - mu.hypot(0.05 / 3f64.sqrt())).abs() < 1e-9,
        "{u} from {mu}"
    );
    assert!((ppm - 37.0).abs() <= 5.0 * u + 1e-4, "{ppm} ± {u}");
    assert_eq!(r.cell.as_deref(), Some("PCI 301 at 1842.5 MHz"));
    assert_eq!((r.pci, r.duplex.as_deref()), (Some(301), Some("fdd")));
    assert!(
        r.confidence.is_some_and(|c| (0.7..=1.0).contains(&c)),
        "{r:?}"
    );
    assert_eq!(r.calibration_stored, Some(true), "{r:?}");
    let m = r
        .clock
        .and_then(|c| c.last_measurement)
        .unwrap_or_else(|| panic!("no last measurement"));
    assert_eq!((m.ppm, m.method.as_str()), (ppm, "lte"));
    assert_eq!(
        lab.porcelain(),
        "",
        "calibration.json must be ignored by Git"
    );
    let bytes = std::fs::read(&png).unwrap_or_default();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000,
        "{} bytes",
        bytes.len()
    );
}

/// A TDD cell in the simulated radio (frame structure type 2: SSS three symbols before
/// the PSS, uplink subframes silent), radio at −23 ppm, 0 dB, 2 s: measured, not
/// refused — PASS, the cell named with "(TDD)", the number within 3 of its stated σ.
#[test]
fn clkin_calibrate_measures_a_tdd_lte_cell() {
    let lab = Lab::new();
    let dev = format!("{},lte_tdd=1", lte_radio("ltetdd1", -23.0, 0.0, 77));
    let o = calibrate_lte(&lab, &dev, &["-t", "2"]);
    expect_exit!(o, 0);
    let r = parsed(&o);
    assert_eq!(r.status, "PASS", "{}", r.detail);
    assert_eq!(r.cell.as_deref(), Some("PCI 77 at 1842.5 MHz (TDD)"));
    assert_eq!((r.pci, r.duplex.as_deref()), (Some(77), Some("tdd")));
    let (ppm, u) = (
        r.ppm.unwrap_or(f64::NAN),
        r.uncertainty_ppm.unwrap_or(f64::NAN),
    );
    assert!(u > 0.0 && u < 0.05, "{ppm} ± {u}");
    assert!((ppm + 23.0).abs() <= 3.0 * u, "{ppm} ± {u}");
}

/// A radio whose LO and sample clock run on two crystals (LO −20 ppm, sample clock
/// +20 ppm), with an FDD and a TDD cell: never a confident wrong number — either no
/// number, saying the error is not measurable, or the LO's −20 ppm within 3 stated σ.
#[test]
fn clkin_calibrate_gives_no_wrong_lte_number_with_two_clocks() {
    let lab = Lab::new();
    for (serial, frame) in [("lte2c1", ""), ("lte2c2", ",lte_tdd=1")] {
        let dev = format!("{}{frame},sample_ppm=20", lte_radio(serial, -20.0, 0.0, 77));
        let o = calibrate_lte(&lab, &dev, &["-t", "2"]);
        let r = parsed(&o);
        match (r.ppm, r.uncertainty_ppm) {
            (Some(ppm), Some(u)) => {
                expect_exit!(o, 0);
                assert!((ppm + 20.0).abs() <= 3.0 * u, "{frame}: {ppm} ± {u}");
            }
            _ => {
                expect_exit!(o, 1);
                assert_eq!(r.status, "FAIL");
                assert!(r.detail.contains("not measurable"), "{frame}: {}", r.detail);
                assert_eq!(r.calibration_stored, None);
            }
        }
    }
}

/// No LTE cell (noise only, or a GSM carrier where the cell should be): FAIL "no LTE
/// cell found", exit 1, never a number, nothing kept; a rate below LTE's 1.92 MS/s
/// grid is bad input naming the field.
#[test]
fn no_lte_cell_fails_without_a_number() {
    let lab = Lab::new();
    for dev in [
        "driver=rxsim,serial=lte2,pace=0",
        "driver=rxsim,serial=lte3,pace=0,gsm_freq=1842.5e6",
    ] {
        let o = calibrate_lte(&lab, dev, &["-t", "1"]);
        expect_exit!(o, 1);
        let r = parsed(&o);
        assert_eq!(r.status, "FAIL");
        assert!(r.detail.starts_with("no LTE cell found"), "{}", r.detail);
        assert_eq!(
            (r.ppm, r.uncertainty_ppm, r.calibration_stored),
            (None, None, None)
        );
    }
    assert!(!lab.local().join("calibration.json").exists());
    let o = calibrate_lte(&lab, &lte_radio("lte4", 0.0, 10.0, 0), &["-r", "1M"]);
    expect_exit!(o, 2);
    assert!(
        show(&o).contains("sample_rate_hz 1000000 is too low for lte"),
        "{}",
        show(&o)
    );
}

/// An LTE `freq_cal` step in an approved task on a cell at 0 dB, radio at −21.4 ppm:
/// PASS, the number and the PCI in `freq_cal[]` and RX_RESULT.md, the result valid.
#[test]
fn an_lte_freq_cal_step_in_a_run() {
    let lab = Lab::new();
    let dev = "driver=rxsim,serial=lte5,pace=0,ppm=-21.4,lte_freq=806e6,lte_pci=77,lte_snr_db=0";
    let plan = format!(
        r#"{{"steps": [
  {{"op": "freq_cal", "device": "{dev}", "method": "lte", "frequency_hz": 806e6,
    "sample_rate_hz": 1.92e6, "gain_db": 20, "duration_s": 1.5}}
]}}"#
    );
    lab.post_and_approve(
        "FC_LTE_1",
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(&plan),
    );
    let o = run_fed(lab.rxnode().arg("--sim").args(["run", "FC_LTE_1"]), b"");
    expect_exit!(o, 0);
    let dir = lab.outbox("FC_LTE_1");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("RX_RESULT.json")).unwrap_or_default())
            .unwrap_or_default();
    let rows: Vec<FreqCal> = serde_json::from_value(r["freq_cal"].clone())
        .unwrap_or_else(|e| panic!("freq_cal rows ({e}): {}", r["freq_cal"]));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].status.as_str(), rows[0].method.as_str()),
        ("PASS", "lte"),
        "{rows:?}"
    );
    let ppm = rows[0].ppm.unwrap_or(f64::NAN);
    assert!((ppm + 21.4).abs() <= 0.05, "{ppm}");
    assert_eq!(rows[0].cell.as_deref(), Some("PCI 77 at 806.0 MHz"));
    assert_eq!(r["freq_cal"][0]["pci"], 77, "{}", r["freq_cal"]);
    assert_eq!(r["freq_cal"][0]["duplex"], "fdd", "{}", r["freq_cal"]);
    // The result validates against `rxnode schema result`; a PCI out of 0…503 does not.
    let mut bad = r.clone();
    bad["freq_cal"][0]["pci"] = 504.into();
    let verdicts = crate::mainpc::schemas::jsonschema_verdicts(&[
        ("lte result".into(), "result", r.clone()),
        ("pci 504".into(), "result", bad),
    ]);
    let valid: Vec<bool> = verdicts.iter().map(|v| v.1).collect();
    assert_eq!(valid, [true, false], "{verdicts:?}");
    let md = std::fs::read_to_string(dir.join("RX_RESULT.md")).unwrap_or_default();
    // The number as a person is shown it: with its uncertainty.
    let shown = rxnode_dsp::fmt_uncertain(ppm, rows[0].uncertainty_ppm.unwrap_or(f64::NAN), "");
    assert!(
        md.contains("PCI 77 at 806.0 MHz") && md.contains(&format!("| {shown} |")),
        "{md}"
    );
    assert!(dir.join("FREQCAL_1.png").exists());
    let v = run_fed(lab.rxnode().args(["validate-result", "FC_LTE_1"]), b"");
    expect_exit!(v, 0);
}
