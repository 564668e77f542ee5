//! The operator's sweep and the plan's rx_sweep find every emitter; refusals before any stream.
use super::*;
use std::path::Path;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Bins that are local maxima at least 20 dB over the median: the CSV's emitters.
fn csv_peaks(b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let floor = median(b.iter().map(|x| x.1).collect());
    (1..b.len() - 1)
        .filter(|&i| b[i].1 > b[i - 1].1 && b[i].1 >= b[i + 1].1 && b[i].1 > floor + 20.0)
        .map(|i| b[i])
        .collect()
}

/// rxsim's emitters are at their given dBFS at its reference gain of 20 dB, and every dB
/// of gain read back from the radio moves them by a dB (docs/hardware.md#rx-gain-and-levels).
fn assert_emitters_found(s: &SweepT, csv: &str) {
    let gain = s.actual.gain_db.expect("the sweep reads its gain back");
    let emitters = EMITTERS.map(|(f, p)| (f, p + gain - 20.0));
    // JSON: every emitter among the band peaks, within one bin, at its level.
    for (f, p) in emitters {
        let hit = s
            .peaks
            .iter()
            .find(|k| (k.frequency_hz - f).abs() <= s.bin_hz)
            .unwrap_or_else(|| panic!("JSON: emitter {f} Hz not within one bin: {:?}", s.peaks));
        assert!(
            (hit.power_db - p).abs() < 2.0,
            "JSON: {f}: {} dBFS",
            hit.power_db
        );
        assert!(hit.width_3db_hz >= s.bin_hz && hit.width_3db_hz < 5.0 * s.bin_hz);
    }
    assert_eq!(
        s.peaks.len(),
        EMITTERS.len(),
        "no false peaks: {:?}",
        s.peaks
    );
    // CSV, through the reader: the same emitters, within one bin, and nothing else.
    let rows = read_rtl_power(csv);
    assert_eq!(
        rows.len(),
        s.hops.iter().filter(|h| h.status == "OK").count()
    );
    // One time stamp per pass on every line of it, as rtl_power writes it (heatmap
    // tools make one picture row of each time stamp).
    for pass in rows.chunks(s.hops_per_repeat) {
        assert!(
            pass.iter()
                .all(|r| (&r.date, &r.time) == (&pass[0].date, &pass[0].time)),
            "one pass, several time stamps: {:?}",
            pass.iter().map(|r| &r.time).collect::<Vec<_>>()
        );
    }
    let b = bins(&rows);
    let found = csv_peaks(&b);
    assert_eq!(found.len(), EMITTERS.len(), "CSV peaks {found:?}");
    for (f, p) in emitters {
        let step = rows[0].hz_step;
        let hit = found
            .iter()
            .find(|(hz, _)| (hz - f).abs() <= step)
            .unwrap_or_else(|| panic!("CSV: emitter {f} Hz not within one bin: {found:?}"));
        assert!((hit.1 - p).abs() < 2.0, "CSV: {f}: {} dB", hit.1);
    }
    // The kept bins tile the band: no gap, no overlap between consecutive rows.
    for w in rows.windows(2) {
        if w[0].date == w[1].date && w[1].hz_low > w[0].hz_low {
            assert!(
                (w[1].hz_low - w[0].hz_high).abs() < 1.0,
                "{} vs {}",
                w[0].hz_high,
                w[1].hz_low
            );
        }
    }
    assert!(rows[0].hz_low <= 88e6 + 1.0);
    assert!(rows.iter().map(|r| r.hz_high).fold(0.0, f64::max) >= 108e6);
    let floor = median(b.iter().map(|x| x.1).collect());
    assert!((floor - s.noise_floor_db.unwrap()).abs() < 1.0, "{floor}");
    assert!(rows.iter().all(|r| !r.time.is_empty()));
}

// ------------------------------------------------------------ tests

/// Over a scene, `rxnode sweep` finds every emitter within one
/// bin in both the CSV and the JSON; the CSV parses as rtl_power; the pictures exist.
#[test]
fn operator_sweep_finds_every_emitter_in_csv_and_json() {
    let rig = Rig::new();
    let d = rig.lab.dir.path();
    let csv = d.join("fm.csv");
    let png = d.join("fm.png");
    let dev = scene("SW1", "");
    let extra = [
        "--repeats",
        "2",
        "--gain-db",
        "LNA=24,VGA=10",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
        "--json",
    ];
    let out = rig.rxnode(&sweep_args(&dev, &extra), "");
    expect_exit!(out, 0);
    let s: SweepT = serde_json::from_slice(&out.stdout).unwrap();
    // A first sweep in a fresh checkout leaves its ledger invisible to Git.
    assert_eq!(
        rig.lab.porcelain(),
        "",
        "the sweep's .local/ is visible to Git"
    );
    assert_eq!(s.status, "PASS");
    // 10 MS/s / 10 kHz: the bin asked exactly, from a 1000-point FFT.
    assert_eq!(s.fft_size, 1000);
    assert_eq!(s.bin_hz, 10e3);
    // The fewest hops: 20 MHz in hops of 10 MHz × (1 − 0.25).
    assert_eq!(s.hops_per_repeat, 3);
    assert_eq!(s.hops.len(), 2 * s.hops_per_repeat);
    assert!(s.failed_hops.is_empty());
    assert_eq!(s.actual.sample_rate_hz, 10e6);
    // Per-element gains, as read back from the device.
    assert_eq!(s.actual.gain_elements_db.get("LNA"), Some(&24.0));
    assert_eq!(s.actual.gain_elements_db.get("VGA"), Some(&10.0));
    assert_eq!(s.actual.gain_db, Some(34.0));
    for h in &s.hops {
        assert_eq!(h.status, "OK");
        assert_eq!(h.settle_samples, 20_000);
        assert_eq!(h.samples, 50_000);
        assert_eq!(h.attempts, 1);
        let a = h.actual_center_hz.unwrap();
        assert!((a - h.requested_center_hz).abs() < 1.0);
    }
    assert!(s.elapsed_s >= s.settle_dwell_floor_s * 0.9);
    let text = std::fs::read_to_string(&csv).unwrap();
    let c = s.csv.as_ref().unwrap();
    assert_eq!(c.file, "fm.csv");
    assert_eq!(c.bytes, text.len() as u64);
    assert_eq!(c.sha256, hex::encode(Sha256::digest(text.as_bytes())));
    assert_emitters_found(&s, &text);
    for p in [png.clone(), d.join("fm_heatmap.png")] {
        let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    }
    never_overwrites_and_names_what_it_wrote(&rig, &dev, &csv, &text);
}

/// A sweep never overwrites what the operator named (nor a heatmap, nor one output with another), names every file it wrote, and only ever streams RX.
fn never_overwrites_and_names_what_it_wrote(rig: &Rig, dev: &str, csv: &Path, text: &str) {
    let d = rig.lab.dir.path();
    // Never overwrites what the operator named.
    let out = rig.rxnode(&sweep_args(dev, &["--csv", csv.to_str().unwrap()]), "");
    expect_exit!(out, 2);
    assert!(util::text(&out.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(csv).unwrap(), text);
    // Nor the heatmap beside a fresh spectrum name: `fm2.png` is new, but a
    // repeated sweep would write `fm2_heatmap.png`, which the operator has.
    let heat = std::fs::read(d.join("fm_heatmap.png")).unwrap();
    std::fs::write(d.join("fm2_heatmap.png"), &heat[..100]).unwrap();
    let png2 = d.join("fm2.png");
    let more = [
        "--repeats",
        "2",
        "--gain-db",
        "LNA=24,VGA=10",
        "--plot",
        png2.to_str().unwrap(),
    ];
    let out = rig.rxnode(&sweep_args(dev, &more), "");
    expect_exit!(out, 2);
    assert!(util::text(&out.stderr).contains("fm2_heatmap.png already exists"));
    assert_eq!(
        std::fs::read(d.join("fm2_heatmap.png")).unwrap(),
        &heat[..100]
    );
    assert!(
        !png2.exists(),
        "the spectrum was written although the sweep was refused"
    );
    // Nor one output over another: the CSV the report hashes stays a CSV.
    let same = d.join("same.png");
    let s = same.to_str().unwrap();
    let out = rig.rxnode(
        &sweep_args(dev, &["--gain-db", "10", "--csv", s, "--plot", s]),
        "",
    );
    expect_exit!(out, 2);
    assert!(
        util::text(&out.stderr).contains("two outputs"),
        "{}",
        show(&out)
    );
    assert!(!same.exists());
    // Polish review: the human output names every file it wrote.
    let (csv3, png3) = (d.join("fm3.csv"), d.join("fm3.png"));
    let human = [
        "--repeats",
        "2",
        "--gain-db",
        "LNA=24,VGA=10",
        "--csv",
        csv3.to_str().unwrap(),
        "--plot",
        png3.to_str().unwrap(),
    ];
    let out = rig.rxnode(&sweep_args(dev, &human), "");
    expect_exit!(out, 0);
    let said = util::text(&out.stdout);
    for (what, p) in [
        ("CSV", csv3.clone()),
        ("spectrum PNG", png3.clone()),
        ("heatmap PNG", d.join("fm3_heatmap.png")),
    ] {
        assert!(p.exists(), "{}", p.display());
        let line = format!("wrote {what}: {}", p.display());
        assert!(said.lines().any(|l| l == line), "no {line:?} in\n{said}");
    }
    // The ledger has the sweep; the radio saw RX only.
    let sweeps = rig
        .lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "sweep")
        .count();
    assert_eq!(
        sweeps, 2,
        "one ledger entry per sweep that ran (--json, then human)"
    );
    let log = std::fs::read_to_string(&rig.events).unwrap();
    assert!(!log.lines().any(|l| l.contains(" TX ")), "{log}");
}

/// The `rx_sweep` step writes `SWEEP_<n>.csv` into the outbox (not
/// published), its SHA-256 in the result, the hop table, peaks and floor; the
/// result validates; a settle the plan honours keeps the relock garbage out.
#[test]
fn plan_rx_sweep_records_csv_hash_hops_and_peaks() {
    let rig = Rig::new();
    let id = "SWEEP_PLAN_1";
    let dev = scene("SWP", "");
    let plan = format!(
        r#"{{"steps": [{{"op": "rx_sweep", "device": "{dev}", "start_hz": 88e6, "stop_hz": 108e6,
        "bin_hz": 10e3, "sample_rate_hz": 10e6, "gain_db": {{"LNA": 16, "VGA": 4}}, "dwell_s": 0.005,
        "settle_s": 0.002, "crop": 0.25, "repeats": 1}}]}}"#
    );
    rig.post_and_approve(id, &plan);
    let out = rig.rxnode(&["run", id], "");
    expect_exit!(out, 0);
    let dir = rig.outbox(id);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("RX_RESULT.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "PASS", "{r:#}");
    assert_eq!(r["checks"][0]["name"], "step 1: rx_sweep");
    let s: SweepT = serde_json::from_value(r["sweeps"][0].clone()).unwrap();
    let csv = std::fs::read_to_string(dir.join("SWEEP_1.csv")).unwrap();
    let c = s.csv.as_ref().unwrap();
    assert_eq!(c.file, "SWEEP_1.csv");
    assert_eq!(c.sha256, hex::encode(Sha256::digest(csv.as_bytes())));
    assert_emitters_found(&s, &csv);
    assert_eq!(s.actual.gain_elements_db.get("LNA"), Some(&16.0));
    assert_eq!(s.actual.gain_elements_db.get("VGA"), Some(&4.0));
    assert!(dir.join("SWEEP_1.png").exists());
    assert!(
        !dir.join("SWEEP_1_heatmap.png").exists(),
        "one pass: no heatmap"
    );
    let md = std::fs::read_to_string(dir.join("RX_RESULT.md")).unwrap();
    assert!(md.contains("## Sweeps") && md.contains("SWEEP_1.csv") && md.contains(&c.sha256));
    assert!(
        r["sweeps"][0].get("hops_file").is_none(),
        "3 hops stay in the result"
    );
    assert_eq!(s.hops.len(), 3);
    let v = rig.rxnode(&["validate-result", id], "");
    expect_exit!(v, 0);
    // Nothing of the sweep entered Git.
    assert_eq!(git(&rig.lab.rx, &["status", "--porcelain"]), "");
}

/// The RX policy bounds a sweep — duration (hops × (settle + dwell) ×
/// repeats), rate, gain (each element and the sum); a device element that does
/// not exist is refused; bad values are exit 2. None of the refused sweeps opened
/// a stream.
#[test]
fn sweep_policy_and_bad_input_are_refused_before_any_stream() {
    let rig = Rig::new();
    rig.set_policy(
        r#"{"rx": {"max_duration_s": 0.05, "max_sample_rate_hz": 12000000, "max_gain_db": 30}}"#,
    );
    let cases: [(&str, &[&str], i32, &str); 7] = [
        (
            "R1",
            &["--gain-db", "20", "--dwell-s", "0.05"],
            3,
            "rx.max_duration_s 0.05",
        ),
        (
            "R2",
            &[
                "--gain-db",
                "20",
                "--stop-hz",
                "90e6",
                "--sample-rate-hz",
                "20e6",
            ],
            3,
            "rx.max_sample_rate_hz",
        ),
        ("R3", &["--stop-hz", "90e6"], 3, "--gain-db is required"),
        (
            "R4",
            &["--stop-hz", "90e6", "--gain-db", "LNA=24,VGA=10"],
            3,
            "--gain-db total 34 exceeds rx.max_gain_db 30",
        ),
        (
            "R5",
            &["--stop-hz", "90e6", "--gain-db", "LNA=32"],
            3,
            "gain_db.LNA 32 exceeds",
        ),
        (
            "R6",
            &["--stop-hz", "80e6", "--gain-db", "10"],
            2,
            "--stop-hz 80000000 must be above --start-hz",
        ),
        (
            "R7",
            &["--stop-hz", "90e6", "--gain-db", "loud"],
            2,
            "--gain-db",
        ),
    ];
    for (serial, extra, want, msg) in cases {
        let dev = scene(serial, "");
        let mut a = sweep_args(&dev, &[]);
        // Later flags win in clap only for repeats: rebuild with overrides instead.
        for pair in extra.chunks(2) {
            if let Some(i) = a.iter().position(|x| *x == pair[0]) {
                a[i + 1] = pair[1];
            } else {
                a.extend_from_slice(pair);
            }
        }
        let out = rig.rxnode(&a, "");
        expect_exit!(out, want, "{serial}");
        assert!(
            util::text(&out.stderr).contains(msg),
            "{serial}: {}",
            show(&out)
        );
        assert_eq!(rig.streams_of(serial), 0, "{serial} opened a stream");
    }
    device_checks_refuse_before_any_stream(&rig);
}

/// An element the device lacks is refused before streaming (exit 2: invalid for
/// this radio); a band running past the radio's range is clamped and reported;
/// in a plan the over-long sweep is BLOCKED (exit 3, a policy refusal).
fn device_checks_refuse_before_any_stream(rig: &Rig) {
    // An element the device does not have: refused by the device check, no stream.
    let dev = scene("R8", "");
    let mut a = sweep_args(&dev, &["--gain-db", "MIX=3"]);
    let i = a.iter().position(|x| *x == "--stop-hz").unwrap();
    a[i + 1] = "90e6";
    let out = rig.rxnode(&a, "");
    expect_exit!(out, 2);
    assert!(util::text(&out.stderr).contains("MIX"), "{}", show(&out));
    assert_eq!(rig.streams_of("R8"), 0);
    // A band the device cannot tune to the end: clamped to its range, and said.
    let dev = scene("R10", "");
    let mut a = sweep_args(&dev, &["--gain-db", "10"]);
    for (flag, v) in [("--start-hz", "5.99e9"), ("--stop-hz", "6.01e9")] {
        let i = a.iter().position(|x| *x == flag).unwrap();
        a[i + 1] = v;
    }
    let out = rig.rxnode(&a, "");
    expect_exit!(out, 0);
    assert!(
        util::text(&out.stdout).contains("clamped: the radio tunes 1.000–6000.000 MHz"),
        "{}",
        show(&out)
    );
    assert!(rig.streams_of("R10") > 0);
    // In a plan: the over-long sweep is BLOCKED naming the limit; no stream.
    let id = "SWEEP_BLOCKED_1";
    let plan = format!(
        r#"{{"steps": [{{"op": "rx_sweep", "device": "{}", "start_hz": 88e6, "stop_hz": 108e6,
        "bin_hz": 10e3, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01}}]}}"#,
        scene("R9", "")
    );
    rig.post_and_approve(id, &plan);
    let out = rig.rxnode(&["run", id], "");
    expect_exit!(out, 3);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rig.outbox(id).join("RX_RESULT.json")).unwrap())
            .unwrap();
    assert_eq!(r["checks"][0]["status"], "BLOCKED");
    let d = r["checks"][0]["detail"].as_str().unwrap();
    assert!(
        d.contains("sweep duration 0.180 s (3 hops") && d.contains("rx.max_duration_s"),
        "{d}"
    );
    assert_eq!(rig.streams_of("R9"), 0);
    assert!(!rig.outbox(id).join("SWEEP_1.csv").exists());
}
