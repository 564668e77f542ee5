//! Issue 17: wideband sweeps. `rxnode sweep` and the `rx_sweep` plan step over an
//! rxsim scene (`emitters=…`, `settle_s=…`, `dead_hz=…`), checked through a reader
//! of the published rtl_power CSV format written here, the typed JSON, the outbox
//! and the radio's own event log.
use crate::util;
use crate::util::{git, run_fed, show, Lab};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Output, Stdio};

const EMITTERS: [(f64, f64); 3] = [(88.5e6, -30.0), (101.1e6, -25.0), (104.3e6, -45.0)];

fn scene(serial: &str, extra: &str) -> String {
    let list: Vec<String> = EMITTERS.iter().map(|(f, p)| format!("{f}:{p}")).collect();
    format!(
        "driver=rxsim,serial={serial},emitters={},settle_s=0.002,noise_dbfs=-60{extra}",
        list.join(";")
    )
}

// ------------------------------------------------------------ rtl_power reader

/// One rtl_power CSV line: `date, time, Hz low, Hz high, Hz step, samples, dB, …`.
#[derive(Debug)]
struct RtlRow {
    date: String,
    time: String,
    hz_low: f64,
    hz_high: f64,
    hz_step: f64,
    samples: u64,
    db: Vec<f64>,
}

/// A reader written to the published format (rtl_power's `heatmap.py` reads the
/// same): comma-separated, the first six fields fixed, then one dB per bin, bin
/// `i` at `hz_low + i · hz_step`, `(hz_high − hz_low) / hz_step` bins.
fn read_rtl_power(text: &str) -> Vec<RtlRow> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        assert!(f.len() > 6, "line {}: {} fields: {line:?}", n + 1, f.len());
        let date = f[0];
        assert!(
            date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
            "line {}: date {date:?}",
            n + 1
        );
        let time = f[1];
        assert!(
            time.len() == 8 && time.as_bytes()[2] == b':' && time.as_bytes()[5] == b':',
            "line {}: time {time:?}",
            n + 1
        );
        let num = |i: usize| -> f64 {
            f[i].parse()
                .unwrap_or_else(|_| panic!("line {}: field {i} {:?}", n + 1, f[i]))
        };
        let row = RtlRow {
            date: date.to_owned(),
            time: time.to_owned(),
            hz_low: num(2),
            hz_high: num(3),
            hz_step: num(4),
            samples: f[5]
                .parse()
                .unwrap_or_else(|_| panic!("line {}: samples {:?}", n + 1, f[5])),
            db: f[6..].iter().enumerate().map(|(i, _)| num(6 + i)).collect(),
        };
        let bins = ((row.hz_high - row.hz_low) / row.hz_step).round() as usize;
        assert_eq!(bins, row.db.len(), "line {}: bin count", n + 1);
        assert!(row.hz_step > 0.0 && row.samples > 0);
        rows.push(row);
    }
    rows
}

/// `(Hz, dB)` per frequency over every row (repeats averaged in power), in order.
fn bins(rows: &[RtlRow]) -> Vec<(f64, f64)> {
    let mut m: BTreeMap<i64, (f64, f64, u32)> = BTreeMap::new();
    for r in rows {
        for (i, d) in r.db.iter().enumerate() {
            let hz = r.hz_low + i as f64 * r.hz_step;
            let e = m.entry(hz.round() as i64).or_insert((hz, 0.0, 0));
            e.1 += 10f64.powf(d / 10.0);
            e.2 += 1;
        }
    }
    m.values()
        .map(|(hz, p, n)| (*hz, 10.0 * (p / f64::from(*n)).log10()))
        .collect()
}

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

// ------------------------------------------------------------ typed JSON

#[derive(Debug, Deserialize)]
struct SweepT {
    status: String,
    bin_hz: f64,
    fft_size: usize,
    hops_per_repeat: usize,
    hops: Vec<HopT>,
    peaks: Vec<PeakT>,
    noise_floor_db: Option<f64>,
    failed_hops: Vec<RangeT>,
    actual: ActualT,
    csv: Option<CsvT>,
    elapsed_s: f64,
    settle_dwell_floor_s: f64,
}
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct HopT {
    hop: usize,
    repeat: u32,
    requested_center_hz: f64,
    actual_center_hz: Option<f64>,
    low_hz: f64,
    high_hz: f64,
    samples: u64,
    settle_samples: u64,
    overflows: u64,
    attempts: u32,
    status: String,
    error: Option<String>,
}
#[derive(Debug, Deserialize)]
struct PeakT {
    frequency_hz: f64,
    power_db: f64,
    width_3db_hz: f64,
}
#[derive(Debug, Deserialize)]
struct RangeT {
    low_hz: f64,
    high_hz: f64,
}
#[derive(Debug, Deserialize)]
struct ActualT {
    sample_rate_hz: f64,
    gain_db: Option<f64>,
    gain_elements_db: BTreeMap<String, f64>,
}
#[derive(Debug, Deserialize)]
struct CsvT {
    file: String,
    bytes: u64,
    sha256: String,
}

// ------------------------------------------------------------ helpers

struct Rig {
    lab: Lab,
    events: PathBuf,
}

impl Rig {
    fn new() -> Rig {
        let lab = Lab::new();
        let events = lab.events_log();
        Rig { lab, events }
    }

    fn rxnode(&self, args: &[&str], stdin: &str) -> Output {
        run_fed(
            self.lab
                .rxnode()
                .arg("--sim")
                .args(args)
                .env("RXSIM_EVENT_LOG", &self.events)
                .env("NO_COLOR", "1"),
            stdin.as_bytes(),
        )
    }

    fn streams_of(&self, serial: &str) -> usize {
        std::fs::read_to_string(&self.events)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("setupStream") && l.ends_with(&format!("serial={serial}")))
            .count()
    }

    fn set_policy(&self, json: &str) {
        self.lab.set_policy(json);
    }

    fn post_and_approve(&self, id: &str, plan: &str) {
        self.lab.post_and_approve(
            id,
            &[
                ("HARDWARE_ACCESS", "YES"),
                ("RF_RX", "YES"),
                ("RISK_LEVEL", "YELLOW"),
            ],
            Some(plan),
        );
    }

    fn outbox(&self, id: &str) -> PathBuf {
        self.lab.outbox(id)
    }
}

fn sweep_args<'a>(device: &'a str, out: &'a [&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "sweep",
        "--device",
        device,
        "--start-hz",
        "88e6",
        "--stop-hz",
        "108e6",
        "--bin-hz",
        "10e3",
        "--sample-rate-hz",
        "10e6",
        "--dwell-s",
        "0.005",
        "--settle-s",
        "0.002",
    ];
    v.extend_from_slice(out);
    v
}

fn assert_emitters_found(s: &SweepT, csv: &str) {
    // JSON: every emitter among the band peaks, within one bin, at its level.
    for (f, p) in EMITTERS {
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
    let b = bins(&rows);
    let found = csv_peaks(&b);
    assert_eq!(found.len(), EMITTERS.len(), "CSV peaks {found:?}");
    for (f, p) in EMITTERS {
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

/// Issue 17 acceptance: over a scene, `rxnode sweep` finds every emitter within one
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let s: SweepT = serde_json::from_slice(&out.stdout).unwrap();
    // A first sweep in a fresh checkout leaves its ledger invisible to Git.
    assert_eq!(
        rig.lab.porcelain(),
        "",
        "the sweep's .local/ is visible to Git"
    );
    assert_eq!(s.status, "PASS");
    assert_eq!(s.fft_size, 1024);
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
    // Never overwrites what the operator named.
    let out = rig.rxnode(&sweep_args(&dev, &["--csv", csv.to_str().unwrap()]), "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(util::text(&out.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
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
    let out = rig.rxnode(&sweep_args(&dev, &more), "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
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
        &sweep_args(&dev, &["--gain-db", "10", "--csv", s, "--plot", s]),
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
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
    let out = rig.rxnode(&sweep_args(&dev, &human), "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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

/// Issue 17: the `rx_sweep` step writes `SWEEP_<n>.csv` into the outbox (not
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(v.status.code(), Some(0), "{}", show(&v));
    // Nothing of the sweep entered Git.
    assert_eq!(git(&rig.lab.rx, &["status", "--porcelain"]), "");
}

/// Issue 17: the RX policy bounds a sweep — duration (hops × (settle + dwell) ×
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
        assert_eq!(out.status.code(), Some(want), "{serial}: {}", show(&out));
        assert!(
            util::text(&out.stderr).contains(msg),
            "{serial}: {}",
            show(&out)
        );
        assert_eq!(rig.streams_of(serial), 0, "{serial} opened a stream");
    }
    // An element the device does not have: refused by the device check, no stream.
    let dev = scene("R8", "");
    let mut a = sweep_args(&dev, &["--gain-db", "MIX=3"]);
    let i = a.iter().position(|x| *x == "--stop-hz").unwrap();
    a[i + 1] = "90e6";
    let out = rig.rxnode(&a, "");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(util::text(&out.stderr).contains("MIX"), "{}", show(&out));
    assert_eq!(rig.streams_of("R8"), 0);
    // A band the device cannot tune to the end: refused before streaming.
    let dev = scene("R10", "");
    let mut a = sweep_args(&dev, &["--gain-db", "10"]);
    for (flag, v) in [("--start-hz", "5.99e9"), ("--stop-hz", "6.01e9")] {
        let i = a.iter().position(|x| *x == flag).unwrap();
        a[i + 1] = v;
    }
    let out = rig.rxnode(&a, "");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        util::text(&out.stderr).contains("outside the device's frequency ranges"),
        "{}",
        show(&out)
    );
    assert_eq!(rig.streams_of("R10"), 0);
    // In a plan: the over-long sweep is BLOCKED naming the limit; no stream.
    let id = "SWEEP_BLOCKED_1";
    let plan = format!(
        r#"{{"steps": [{{"op": "rx_sweep", "device": "{}", "start_hz": 88e6, "stop_hz": 108e6,
        "bin_hz": 10e3, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01}}]}}"#,
        scene("R9", "")
    );
    rig.post_and_approve(id, &plan);
    let out = rig.rxnode(&["run", id], "");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
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

/// Issue 17: a hop the radio cannot deliver is retried once, then marked failed
/// with its range in the JSON, has no CSV line, and the result is PARTIAL.
#[test]
fn a_dead_band_is_marked_failed_and_never_filled_in() {
    let rig = Rig::new();
    let d = rig.lab.dir.path();
    let csv = d.join("dead.csv");
    let dev = scene("SWD", ",dead_hz=98e6:100e6");
    let out = rig.rxnode(
        &sweep_args(&dev, &["--csv", csv.to_str().unwrap(), "--json"]),
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let s: SweepT = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s.status, "PARTIAL");
    assert_eq!(s.failed_hops.len(), 1);
    let f = &s.failed_hops[0];
    let dead: Vec<&HopT> = s.hops.iter().filter(|h| h.status == "FAILED").collect();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].attempts, 2, "retried once");
    assert!(dead[0].error.as_deref().unwrap_or("").contains("timeout"));
    assert_eq!((f.low_hz, f.high_hz), (dead[0].low_hz, dead[0].high_hz));
    let rows = read_rtl_power(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(rows.len(), s.hops.len() - 1);
    for r in &rows {
        assert!(
            r.hz_high <= f.low_hz + 1.0 || r.hz_low >= f.high_hz - 1.0,
            "row {} overlaps the dead hop",
            r.hz_low
        );
    }
    // The emitter at 101.1 MHz lies in the dead hop: not reported, not invented.
    assert!(!s
        .peaks
        .iter()
        .any(|p| (p.frequency_hz - 101.1e6).abs() < 1e6));
    assert!(s
        .peaks
        .iter()
        .any(|p| (p.frequency_hz - 88.5e6).abs() <= s.bin_hz));
}

/// Validate a `.sigmf-meta` with the Python `sigmf` package (CI: `pip install
/// sigmf`, see scripts/setup.sh); prints the annotations as JSON.
fn sigmf_validate(meta: &std::path::Path) -> Result<serde_json::Value, String> {
    let script = "import json, sys\n\
from sigmf import sigmffile\n\
f = sigmffile.fromfile(sys.argv[1])\n\
f.validate()\n\
print(json.dumps(f.get_annotations()))\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(meta)
        .output()
        .map_err(|e| {
            format!("python3 not runnable ({e}); scripts/setup.sh installs it with sigmf")
        })?;
    if !out.status.success() {
        return Err(util::text(&out.stderr));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// Issue 17: every recorded capture's `.sigmf-meta` carries one annotation per
/// reported peak (label, generator rxnode, −3 dB edges around the peak, the
/// capture's sample range), accepted by the sigmf package's validator — which
/// does reject a broken annotation, so the check can fail.
#[test]
fn sigmf_annotations_per_peak_pass_the_sigmf_validator() {
    let rig = Rig::new();
    let d = rig.lab.dir.path();
    let data = d.join("cap.sigmf-data");
    let out = rig.rxnode(
        &[
            "capture",
            "--device",
            "driver=rxsim,serial=SG1,tone_hz=100.1e6,emitters=99.7e6:-50;100.5e6:-40",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "2e6",
            "--duration-s",
            "0.2",
            "--record",
            data.to_str().unwrap(),
            "--json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let peaks = summary["peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), 3, "{peaks:?}");
    let samples = summary["samples_processed"].as_u64().unwrap();
    let meta = d.join("cap.sigmf-meta");
    let ann = sigmf_validate(&meta).unwrap_or_else(|e| panic!("sigmf validator: {e}"));
    let ann: Vec<&serde_json::Value> = ann
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a.get("core:generator").is_some())
        .collect();
    assert_eq!(ann.len(), peaks.len(), "one annotation per peak: {ann:?}");
    for (a, p) in ann.iter().zip(peaks) {
        let f = p["frequency_hz"].as_f64().unwrap();
        assert_eq!(a["core:generator"], "rxnode");
        assert_eq!(a["core:sample_start"], 0);
        assert_eq!(a["core:sample_count"].as_u64(), Some(samples));
        let (lo, hi) = (
            a["core:freq_lower_edge"].as_f64().unwrap(),
            a["core:freq_upper_edge"].as_f64().unwrap(),
        );
        assert!(lo < f && f < hi, "{lo} < {f} < {hi}");
        assert!(hi - lo < 10e3, "a CW tone is narrow: {}", hi - lo);
        let label = a["core:label"].as_str().unwrap();
        assert!(label.contains(&format!("{:.6} MHz", f / 1e6)), "{label}");
    }
    // The validator is real: a broken annotation is refused.
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
    m["annotations"][1]["core:freq_lower_edge"] = "low".into();
    let bad = d.join("bad.sigmf-meta");
    std::fs::write(&bad, serde_json::to_vec(&m).unwrap()).unwrap();
    std::fs::copy(&data, d.join("bad.sigmf-data")).unwrap();
    assert!(
        sigmf_validate(&bad).is_err(),
        "the validator must reject a string edge"
    );
}

/// Issue 17: `gain_db` as an object of element → dB on an `rx_capture`: set per
/// element, each read back into the result; an element the device does not have
/// is BLOCKED naming it, and never streams.
#[test]
fn per_element_gains_on_a_capture_are_set_read_back_or_blocked() {
    let rig = Rig::new();
    let id = "GAIN_ELEM_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=GE1,tone_hz=100.1e6", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": {"LNA": 24, "VGA": 7}, "duration_s": 0.1},
      {"op": "rx_capture", "device": "driver=rxsim,serial=GE2,tone_hz=100.1e6", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": {"MIX": 3}, "duration_s": 0.1}
    ]}"#;
    rig.post_and_approve(id, plan);
    let out = rig.rxnode(&["run", id], "");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rig.outbox(id).join("RX_RESULT.json")).unwrap())
            .unwrap();
    assert_eq!(r["checks"][0]["status"], "PASS", "{:#}", r["checks"]);
    let c = &r["captures"][0];
    assert_eq!(c["actual"]["gain_elements_db"]["LNA"], 24.0);
    assert_eq!(c["actual"]["gain_elements_db"]["VGA"], 7.0);
    assert_eq!(c["actual"]["gain_db"], 31.0);
    assert_eq!(c["requested"]["gain_db"]["LNA"], 24.0);
    assert_eq!(r["checks"][1]["status"], "BLOCKED");
    let d = r["checks"][1]["detail"].as_str().unwrap();
    assert!(d.contains("MIX") && d.contains("LNA, VGA"), "{d}");
    assert_eq!(rig.streams_of("GE2"), 0);
}

/// Issue 17 hardening: the published result stays small (≤ 256 KiB) however long
/// the sweep — a hop table over 200 rows moves to `SWEEP_<n>_hops.json` in the
/// outbox, its hash in the result.
#[test]
fn a_long_hop_table_moves_to_its_own_file() {
    let rig = Rig::new();
    let id = "SWEEP_LONG_1";
    let plan = r#"{"steps": [{"op": "rx_sweep", "device": "driver=rxsim,serial=SL1,emitters=915e6:-30",
        "start_hz": 70e6, "stop_hz": 1.8e9, "bin_hz": 100e3, "sample_rate_hz": 10e6, "gain_db": 10,
        "dwell_s": 0.0002, "settle_s": 0}]}"#;
    rig.post_and_approve(id, plan);
    let out = rig.rxnode(&["run", id], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let dir = rig.outbox(id);
    let bytes = std::fs::read(dir.join("RX_RESULT.json")).unwrap();
    assert!(bytes.len() < 256 * 1024, "{} bytes", bytes.len());
    let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let sw = &r["sweeps"][0];
    let total = sw["hops_per_repeat"].as_u64().unwrap();
    assert!(total > 200, "{total}");
    assert_eq!(sw["hops"].as_array().unwrap().len(), 0, "all hops clean");
    let hf = &sw["hops_file"];
    assert_eq!(hf["file"], "SWEEP_1_hops.json");
    assert_eq!(hf["hops"].as_u64(), Some(total));
    let text = std::fs::read(dir.join("SWEEP_1_hops.json")).unwrap();
    assert_eq!(hf["sha256"], hex::encode(Sha256::digest(&text)));
    let hops: Vec<HopT> = serde_json::from_slice(&text).unwrap();
    assert_eq!(hops.len() as u64, total);
    assert!(sw["peaks"].as_array().unwrap().iter().any(|p| {
        (p["frequency_hz"].as_f64().unwrap() - 915e6).abs() <= sw["bin_hz"].as_f64().unwrap()
    }));
    let v = rig.rxnode(&["validate-result", id], "");
    assert_eq!(v.status.code(), Some(0), "{}", show(&v));
}

/// Issue 17: Ctrl-C stops a sweep between reads: the stream is closed, the hops not
/// reached are `NOT_RUN`, the status is PARTIAL (exit 1) and what was measured is
/// still written.
#[cfg(unix)]
#[test]
fn sigint_stops_a_sweep_partial_with_hops_not_run() {
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let csv = rig.lab.dir.path().join("cut.csv");
    let dev = scene("SIG1", "");
    let mut args = vec!["--sim".to_owned()];
    args.extend(
        sweep_args(&dev, &["--csv", csv.to_str().unwrap(), "--json"])
            .iter()
            .map(|s| s.to_string()),
    );
    let i = args.iter().position(|x| x == "--stop-hz").unwrap();
    args[i + 1] = "5.99e9".into();
    let child = rig
        .lab
        .rxnode()
        .args(&args)
        .env("RXSIM_EVENT_LOG", &rig.events)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the sweep streams, then interrupt it.
    let t = Instant::now();
    while rig.streams_of("SIG1") == 0 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own, not yet reaped child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["status"], "PARTIAL");
    assert_eq!(s["cancelled"], true);
    let hops = s["hops"].as_array().unwrap();
    let ok = hops.iter().filter(|h| h["status"] == "OK").count();
    let not_run = hops.iter().filter(|h| h["status"] == "NOT_RUN").count();
    assert!(ok > 0 && not_run > 0, "ok {ok}, not run {not_run}");
    let rows = read_rtl_power(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(
        rows.len(),
        ok,
        "one CSV line per measured hop, none for the rest"
    );
    let log = std::fs::read_to_string(&rig.events).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("closeStream RX serial=SIG1")),
        "{log}"
    );
}
