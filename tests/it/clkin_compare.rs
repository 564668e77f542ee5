//! CLKIN by comparison through the real binary and two simulated radios (each
//! with its own noise): `rxnode clkin compare` and the `clkin_compare` step of
//! `rxnode run`. The tone is at −30 dBFS over rxsim's noise at −60 dBFS (30 dB
//! SNR in the band), 1 s at 1 MS/s.
use crate::util::{self, show, Lab};
use serde::Deserialize;
use std::path::Path;
use std::process::{Command, Output};

/// `clkin_compare` of an entry.
#[derive(Debug, Deserialize)]
struct FigureT {
    relative_ppb: Option<f64>,
    uncertainty_ppb: Option<f64>,
    verdict: Option<String>,
    tolerance_ppb: f64,
    points: Option<u64>,
    residual_rms_rad: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct ToneT {
    level_dbfs: Option<f64>,
    snr_db: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct RadioT {
    role: String,
    clock_source: Option<String>,
    ref_locked: Option<bool>,
    samples_requested: u64,
    samples_received: u64,
    overflows: u64,
    tone: ToneT,
}

/// One `clkin_compares[]` entry, as `rxnode clkin compare --json` prints it.
#[derive(Debug, Deserialize)]
struct EntryT {
    status: String,
    detail: String,
    master: RadioT,
    slave: RadioT,
    clkin_compare: FigureT,
}

const TONE: &str = "tone_hz=100.2e6,tone_dbfs=-30,noise_dbfs=-60";

fn rxnode(dir: &Path) -> Command {
    let mut c = util::rxnode_cmd();
    c.current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .arg("--sim");
    c
}

/// `rxnode clkin compare --json` of MASTER `m` and SLAVE `s` (device args after the
/// driver), 1 s (unless `extra` says `-t`) at 1 MS/s, tone at 100.2 MHz, then `extra`.
fn compare(dir: &Path, m: &str, s: &str, extra: &[&str]) -> Output {
    rxnode(dir)
        .args([
            "clkin",
            "compare",
            "-d",
            &format!("driver=rxsim,{m}"),
            "-d",
            &format!("driver=rxsim,{s}"),
            "-f",
            "100M",
            "-r",
            "1M",
            "--tone-hz",
            "100.2M",
            "-g",
            "20",
            "--json",
        ])
        .args(if extra.contains(&"-t") {
            &[][..]
        } else {
            &["-t", "1"][..]
        })
        .args(extra)
        .output()
        .unwrap()
}

fn entry(o: &Output) -> EntryT {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not a clkin_compare entry ({e}): {}", show(o)))
}

/// Two radios on one reference (both on the external clock, the same `ext_ppm`)
/// agree within 1 ppb in 1 s: LOCKED, exit 0; each radio's clock source was set,
/// reads back external and locked, and every sample arrived.
#[test]
fn two_radios_on_one_reference_are_locked_within_one_ppb() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M1,seed=1,ext_ref=1,ext_ppm=0.3,{TONE}"),
        &format!("serial=CMP-S1,seed=2,ext_ref=1,ext_ppm=0.3,{TONE}"),
        &["--clock-sources", "external,external"],
    );
    expect_exit!(o, 0);
    let e = entry(&o);
    let k = &e.clkin_compare;
    let rel = k.relative_ppb.expect("a figure");
    assert!(rel.abs() <= 1.0, "{e:#?}");
    assert!(k.uncertainty_ppb.expect("σ") < 0.5, "{e:#?}");
    assert_eq!(k.verdict.as_deref(), Some("LOCKED"));
    assert_eq!(e.status, "PASS");
    assert_eq!(k.tolerance_ppb, 10.0);
    assert!(k.points.unwrap_or(0) >= 16);
    // Each radio has its own noise: the phase difference is not exactly flat, as
    // it would be if both streams carried the same samples.
    assert!(k.residual_rms_rad.expect("residual") > 1e-5, "{e:#?}");
    for (r, role) in [(&e.master, "MASTER"), (&e.slave, "SLAVE")] {
        assert_eq!(r.role, role);
        assert_eq!(r.clock_source.as_deref(), Some("external"));
        assert_eq!(r.ref_locked, Some(true));
        assert_eq!(r.samples_received, r.samples_requested);
        assert_eq!(r.samples_requested, 1_000_000);
        assert_eq!(r.overflows, 0);
        let level = r.tone.level_dbfs.expect("level");
        assert!((level + 30.0).abs() < 1.0, "{r:?}");
        let snr = r.tone.snr_db.expect("snr");
        assert!((snr - 30.0).abs() < 3.0, "{r:?}");
    }
}

/// Two free-running radios (internal clocks) whose crystals happen to agree are within
/// tolerance, but neither reports an external reference: the verdict is AGREE, never
/// LOCKED, and the step is not a PASS (exit 1), the detail naming the clock sources.
#[test]
fn two_free_running_radios_that_agree_are_agree_not_locked() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(
        dir.path(),
        &format!("serial=CMP-A1,seed=31,ppm=0.3,{TONE}"),
        &format!("serial=CMP-A2,seed=32,ppm=0.3,{TONE}"),
        &[],
    );
    expect_exit!(o, 1);
    let e = entry(&o);
    let rel = e.clkin_compare.relative_ppb.expect("a figure");
    assert!(rel.abs() <= 1.0, "{e:#?}");
    assert_eq!(e.clkin_compare.verdict.as_deref(), Some("AGREE"), "{e:#?}");
    assert_eq!(e.status, "FAIL");
    assert!(
        e.detail
            .contains("neither radio reports an external reference clock"),
        "{}",
        e.detail
    );
    for r in [&e.master, &e.slave] {
        assert_ne!(r.clock_source.as_deref(), Some("external"), "{r:?}");
    }
}

/// A slave on its own crystal 0.05 ppm fast is measured as +50 ± 2 ppb: UNLOCKED,
/// FAIL, exit 1.
#[test]
fn a_slave_on_its_own_crystal_fifty_ppb_off_is_unlocked() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M2,seed=3,{TONE}"),
        &format!("serial=CMP-S2,seed=4,ppm=0.05,{TONE}"),
        &[],
    );
    expect_exit!(o, 1);
    let e = entry(&o);
    let rel = e.clkin_compare.relative_ppb.expect("a figure");
    assert!((rel - 50.0).abs() <= 2.0, "{e:#?}");
    assert_eq!(e.clkin_compare.verdict.as_deref(), Some("UNLOCKED"));
    assert_eq!(e.status, "FAIL");
    assert!(e.detail.contains("UNLOCKED"), "{}", e.detail);
}

/// A slave 5 ppm off (500 Hz at 100.2 MHz) is measured, not reported as "no tone".
#[test]
fn a_slave_five_ppm_off_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M3,seed=5,{TONE}"),
        &format!("serial=CMP-S3,seed=6,ppm=5,{TONE}"),
        &[],
    );
    expect_exit!(o, 1);
    let e = entry(&o);
    let rel = e.clkin_compare.relative_ppb.expect("a figure");
    assert!((rel - 5000.0).abs() <= 2.0, "{e:#?}");
    assert_eq!(e.clkin_compare.verdict.as_deref(), Some("UNLOCKED"));
}

/// A tone too weak in SLAVE, or a SLAVE whose stream delivers nothing, gives no
/// number: FAIL with the reason, exit 1.
#[test]
fn a_weak_tone_or_a_silent_stream_gives_no_number() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M4,seed=7,{TONE}"),
        "serial=CMP-S4,seed=8,tone_hz=100.2e6,tone_dbfs=-100,noise_dbfs=-60",
        &[],
    );
    expect_exit!(o, 1);
    let e = entry(&o);
    assert_eq!(e.status, "FAIL");
    assert_eq!(e.clkin_compare.relative_ppb, None);
    assert_eq!(e.clkin_compare.verdict, None);
    assert!(e.detail.contains("tone too weak in SLAVE"), "{}", e.detail);
    // SLAVE's PLL never locks at 100 MHz: its stream delivers nothing.
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M5,seed=9,{TONE}"),
        &format!("serial=CMP-S5,seed=10,dead_hz=99e6:101e6,{TONE}"),
        &["-t", "0.5"],
    );
    expect_exit!(o, 1);
    let e = entry(&o);
    assert_eq!(e.clkin_compare.relative_ppb, None);
    assert_eq!(e.slave.samples_received, 0);
    assert!(
        e.detail.contains("SLAVE delivered 0 samples") && e.detail.contains("stalled"),
        "{}",
        e.detail
    );
}

/// A SLAVE that delivers every sample as zero has no tone level and no SNR (`null`,
/// `—` in text), and the reason says so: never −300 dBFS or a clamp's SNR.
#[test]
fn a_radio_of_zeros_has_no_tone_level() {
    let dir = tempfile::tempdir().unwrap();
    let (m, s) = (
        format!("serial=CMP-M6,seed=11,{TONE}"),
        "serial=CMP-S6,seed=12,noise_dbfs=-1000",
    );
    let o = compare(dir.path(), &m, s, &["-t", "0.3"]);
    expect_exit!(o, 1);
    let e = entry(&o);
    assert_eq!(e.status, "FAIL");
    assert_eq!(e.clkin_compare.relative_ppb, None);
    assert_eq!((e.slave.tone.level_dbfs, e.slave.tone.snr_db), (None, None));
    assert!(e
        .master
        .tone
        .level_dbfs
        .is_some_and(|l| (l + 30.0).abs() < 3.0));
    assert!(
        e.detail.contains("no tone in SLAVE: no signal"),
        "{}",
        e.detail
    );
    let o = rxnode(dir.path())
        .args(["clkin", "compare", "-d", &format!("driver=rxsim,{m}")])
        .args(["-d", &format!("driver=rxsim,{s}")])
        .args(["-f", "100M", "-r", "1M", "--tone-hz", "100.2M", "-t", "0.3"])
        .output()
        .unwrap();
    let text = util::text(&o.stdout);
    assert!(
        text.contains("tone — (— over the band's noise)"),
        "{}",
        show(&o)
    );
    assert!(!text.contains("-300") && !text.contains("inf"), "{text}");
}

/// Bad usage is exit 2 and names the problem; `--plot` writes the picture.
#[test]
fn bad_usage_is_refused_by_name_and_the_plot_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let one = rxnode(dir.path())
        .args([
            "clkin",
            "compare",
            "-d",
            "driver=rxsim",
            "-f",
            "100M",
            "-r",
            "1M",
        ])
        .args(["--tone-hz", "100.2M"])
        .output()
        .unwrap();
    expect_exit!(one, 2);
    assert!(
        util::text(&one.stderr).contains("exactly two radios"),
        "{}",
        show(&one)
    );
    let same = compare(dir.path(), "serial=X", "serial=X", &[]);
    expect_exit!(same, 2);
    assert!(
        util::text(&same.stderr).contains("same radio"),
        "{}",
        show(&same)
    );
    // One radio in two spellings (same driver and serial, other extra keys) is the
    // same radio: refused at once naming both args, never a 3 s wait that blames
    // "another rxnode" with this process's own PID.
    let t = std::time::Instant::now();
    let twice = compare(
        dir.path(),
        "serial=a,tone_hz=100200000",
        "serial=a,tone_hz=100200000,ppm=3",
        &[],
    );
    expect_exit!(twice, 2);
    let e: serde_json::Value = serde_json::from_slice(&twice.stderr).unwrap();
    assert_eq!(
        e["error"]["message"],
        "MASTER \"driver=rxsim,serial=a,tone_hz=100200000\" and SLAVE \
         \"driver=rxsim,serial=a,tone_hz=100200000,ppm=3\" are the same radio \
         (driver=rxsim,serial=a): give two different radios",
        "{}",
        show(&twice)
    );
    assert!(
        !util::text(&twice.stderr).contains("another rxnode"),
        "{}",
        show(&twice)
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        t.elapsed()
    );
    let out_of_band = compare(dir.path(), "serial=X", "serial=Y", &["--tone-hz", "101M"]);
    expect_exit!(out_of_band, 2);
    assert!(
        util::text(&out_of_band.stderr).contains("--tone-hz"),
        "{}",
        show(&out_of_band)
    );
    let png = dir.path().join("cmp.png");
    let o = compare(
        dir.path(),
        &format!("serial=CMP-M6,seed=11,{TONE}"),
        &format!("serial=CMP-S6,seed=12,ppm=0.02,{TONE}"),
        &["-t", "0.5", "--plot", png.to_str().unwrap()],
    );
    expect_exit!(o, 1);
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{}",
        bytes.len()
    );
}

/// The node policy bounds each radio like a capture: over its duration the step is
/// refused, exit 3, naming the radio and the limit.
#[test]
fn the_policy_bounds_both_radios() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 0.5}}"#);
    let o = lab
        .rxnode()
        .args(["--sim", "clkin", "compare", "-d", "driver=rxsim,serial=P1"])
        .args(["-d", "driver=rxsim,serial=P2", "-f", "100M", "-r", "1M"])
        .args(["--tone-hz", "100.2M", "-t", "1"])
        .output()
        .unwrap();
    expect_exit!(o, 3);
    assert!(
        util::text(&o.stderr).contains("MASTER: --duration-s 1 exceeds rx.max_duration_s 0.5"),
        "{}",
        show(&o)
    );
}

/// The `clkin_compare` step of an approved YELLOW task: the result carries the
/// figure and verdict for both radios, RX_RESULT.md its section, the outbox its
/// picture, and the result validates.
#[test]
fn the_run_step_records_the_comparison_in_the_result() {
    let lab = Lab::new();
    let id = "CMP_RUN_1";
    let plan = format!(
        r#"{{"steps": [{{"op": "clkin_compare",
          "devices": ["driver=rxsim,serial=RUN-M,seed=21,ext_ref=1,ext_ppm=-1.2,{TONE}",
                      "driver=rxsim,serial=RUN-S,seed=22,ext_ref=1,ext_ppm=-1.2,{TONE}"],
          "frequency_hz": 100e6, "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 1,
          "tone_hz": 100.2e6, "tolerance_ppb": 10, "clock_sources": ["external", "external"]}}]}}"#
    );
    lab.post_and_approve(
        id,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(&plan),
    );
    let out = lab.run(&["--sim", "run", id], "");
    expect_exit!(out, 0);
    let ob = lab.outbox(id);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ob.join("RX_RESULT.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "PASS", "{r:#}");
    assert_eq!(r["checks"][0]["name"], "step 1: clkin_compare");
    let e: EntryT = serde_json::from_value(r["clkin_compares"][0].clone()).unwrap();
    assert_eq!(r["clkin_compares"][0]["step"], 1);
    // Each radio says how good its frequency axis is: its clock source and its last
    // calibration on this node (none yet), with no correction applied.
    for role in ["master", "slave"] {
        let c = &r["clkin_compares"][0][role]["clock"];
        assert!(
            c["radio"].as_str().is_some_and(|s| s.contains("rxsim")),
            "{role}: {c:#}"
        );
        assert!(c["last_measurement"].is_null(), "{role}: {c:#}");
        assert!(c["ppm_correction_applied"].is_null(), "{role}: {c:#}");
    }
    assert_eq!(e.clkin_compare.verdict.as_deref(), Some("LOCKED"));
    assert!(e.clkin_compare.relative_ppb.unwrap().abs() <= 1.0, "{e:#?}");
    let md = std::fs::read_to_string(ob.join("RX_RESULT.md")).unwrap();
    assert!(
        md.contains("## CLKIN comparisons") && md.contains("| Verdict | LOCKED |"),
        "{md}"
    );
    let png = std::fs::read(ob.join("CLKIN_COMPARE_1.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    let v = lab.run(&["validate-result", id], "");
    expect_exit!(v, 0);
}

/// Ctrl-C during the comparison stops both streams: the number is measured over what
/// came, and the result is PARTIAL with the reason, never a PASS.
#[cfg(unix)]
#[test]
fn an_interrupted_comparison_is_partial_over_what_came() {
    let dir = tempfile::tempdir().unwrap();
    let child = rxnode(dir.path())
        .args(["clkin", "compare", "--json"])
        .args([
            "-d",
            &format!("driver=rxsim,serial=CMP-M7,seed=13,ext_ref=1,ext_ppm=1,{TONE}"),
        ])
        .args([
            "-d",
            &format!("driver=rxsim,serial=CMP-S7,seed=14,ext_ref=1,ext_ppm=1,{TONE}"),
        ])
        .args(["-f", "100M", "-r", "1M", "--tone-hz", "100.2M", "-t", "8"])
        .args(["--clock-sources", "external,external"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    util::signal(child.id(), libc::SIGINT);
    let o = child.wait_with_output().unwrap();
    expect_exit!(o, 1);
    let e = entry(&o);
    assert_eq!(e.status, "PARTIAL", "{e:#?}");
    assert!(
        e.detail.contains("interrupted by the operator"),
        "{}",
        e.detail
    );
    assert!(
        e.detail.contains("LOCKED over part of the run"),
        "{}",
        e.detail
    );
    assert!(e.master.samples_received < e.master.samples_requested);
    assert!(
        e.clkin_compare.relative_ppb.expect("a figure").abs() <= 1.0,
        "{e:#?}"
    );
}
