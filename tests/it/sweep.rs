//! Wideband sweeps. `rxnode sweep` and the `rx_sweep` plan step over an
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
use std::time::{Duration, Instant};

mod bands;
mod noise;
mod operator;
mod pipe;
mod settings;

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
/// `i` at `hz_low + i · hz_step`, `(hz_high − hz_low) / hz_step` bins. A failed
/// hop's line has `samples` 0 and every bin `nan`.
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
        assert!(row.hz_step > 0.0);
        assert!(
            row.samples > 0 || row.db.iter().all(|d| d.is_nan()),
            "line {}: 0 samples but values",
            n + 1
        );
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
    #[serde(default)]
    noise_floor_absent: Option<String>,
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

    /// Start `rxnode ARGS` (stdin closed, outputs captured), wait until the radio
    /// `serial` has set up a stream (at most 20 s), let it run `after`, then send
    /// SIGINT: its output and when the signal went.
    fn interrupt_while_streaming(
        &self,
        args: &[String],
        serial: &str,
        after: Duration,
    ) -> (Output, Instant) {
        let child = self
            .lab
            .rxnode()
            .args(args)
            .env("RXSIM_EVENT_LOG", &self.events)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while self.streams_of(serial) == 0 && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(after);
        util::signal(child.id(), libc::SIGINT);
        let sent = Instant::now();
        (child.wait_with_output().unwrap(), sent)
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

/// A radio that delivers zeros on every hop measured nothing: the sweep FAILs,
/// its floor is `null` (text: `n/a` and why), no peak, every CSV bin is rtl_power's
/// `nan` (as a failed hop's), no picture with a made-up axis — never −300 dB.
#[test]
fn sweep_of_a_silent_radio_fails_with_nan_bins_and_no_floor() {
    let rig = Rig::new();
    let csv = rig.lab.dir.path().join("silent.csv");
    let png = rig.lab.dir.path().join("silent.png");
    let dev = "driver=rxsim,serial=SILENT,settle_s=0.002,noise_dbfs=-1000";
    let out = rig.rxnode(
        &sweep_args(
            dev,
            &[
                "--json",
                "--csv",
                csv.to_str().unwrap(),
                "--plot",
                png.to_str().unwrap(),
            ],
        ),
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let v: SweepT =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert_eq!(v.status, "FAIL");
    assert_eq!(v.noise_floor_db, None);
    assert_eq!(
        v.noise_floor_absent.as_deref(),
        Some("no signal: every sample is zero")
    );
    assert!(v.peaks.is_empty(), "{:?}", v.peaks);
    assert!(v.hops.iter().all(|h| h.status == "OK"), "{:?}", v.hops);
    let rows = read_rtl_power(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(rows.len(), v.hops.len());
    assert!(rows
        .iter()
        .all(|r| r.samples > 0 && r.db.iter().all(|d| d.is_nan())));
    assert!(!png.exists(), "a picture of nothing was drawn");
    let csv2 = rig.lab.dir.path().join("silent2.csv");
    let out = rig.rxnode(
        &sweep_args(
            dev,
            &[
                "--csv",
                csv2.to_str().unwrap(),
                "--plot",
                png.to_str().unwrap(),
            ],
        ),
        "",
    );
    let text = util::text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(text.starts_with("sweep FAIL:"), "{text}");
    assert!(
        text.contains("noise floor n/a (no signal: every sample is zero)"),
        "{text}"
    );
    assert!(text.contains("no plot written to"), "{text}");
    assert!(!text.contains("-300") && !text.contains("NaN"), "{text}");
}

/// A carrier above the converter's full scale saturates the hops whose raw band
/// holds it: those hops hold the converter's distortion, not the band, so they are
/// failed hops (not filled in, the reason and the clipped share named), never peaks
/// with SNR; the hops away from it are measured. The sweep is PARTIAL.
#[test]
fn hops_whose_input_saturated_are_failed_not_measured() {
    let rig = Rig::new();
    let dev = "driver=rxsim,serial=HOT,settle_s=0.002,noise_dbfs=-60,tone_hz=91e6,tone_dbfs=3";
    let out = rig.rxnode(&sweep_args(dev, &["--json"]), "");
    let v: SweepT =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert_eq!(v.status, "PARTIAL", "{}", show(&out));
    let hot: Vec<&HopT> = v.hops.iter().filter(|h| h.status == "FAILED").collect();
    assert!(!hot.is_empty(), "{:?}", v.hops);
    for h in &hot {
        let e = h.error.as_deref().unwrap_or_default();
        assert!(
            e.contains("% of samples clipped: the input saturated"),
            "{h:?}"
        );
        // Its raw band (centre ± half the rate) holds the carrier.
        assert!((h.requested_center_hz - 91e6).abs() <= 5e6, "{h:?}");
    }
    assert!(v.hops.iter().any(|h| h.status == "OK"), "{:?}", v.hops);
    assert_eq!(v.failed_hops.len(), hot.len());
    // No peak from a saturated hop's band.
    for p in &v.peaks {
        assert!(
            !v.failed_hops
                .iter()
                .any(|r| (r.low_hz..r.high_hz).contains(&p.frequency_hz)),
            "{p:?}"
        );
    }
    assert!(util::text(&out.stderr).contains("marked failed (not filled in)"));
}

/// A CSV that cannot be written (its folder is a file here; a full disk alike)
/// loses no measurement: the sweep is printed (JSON on stdout, the 95 MHz
/// carrier in it), logged to the ledger, and the failed write is the error after
/// it, exit 1; the text says where nothing was written, never "no bin has power".
#[test]
fn a_sweep_whose_csv_cannot_be_written_is_still_reported() {
    let rig = Rig::new();
    let blocker = rig.lab.dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let csv = blocker.join("s.csv");
    let png = rig.lab.dir.path().join("s.png");
    let dev = "driver=rxsim,serial=UNWRITTEN,settle_s=0.002,emitters=95e6:-30";
    let out = rig.rxnode(
        &sweep_args(dev, &["--json", "--csv", csv.to_str().unwrap()]),
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let v: SweepT =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert!(
        v.peaks.iter().any(|p| (p.frequency_hz - 95e6).abs() < 20e3),
        "{:?}",
        v.peaks
    );
    assert!(v.csv.is_none());
    let err = util::text(&out.stderr);
    assert!(
        err.contains(
            "the sweep was measured and reported on stdout, but a file asked for was not written"
        ) && err.contains("s.csv"),
        "{err}"
    );
    let sweeps = rig
        .lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "sweep")
        .count();
    assert_eq!(sweeps, 1, "the sweep is in the ledger");
    let out = rig.rxnode(
        &sweep_args(
            dev,
            &[
                "--csv",
                csv.to_str().unwrap(),
                "--plot",
                png.to_str().unwrap(),
            ],
        ),
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = util::text(&out.stdout);
    assert!(text.starts_with("sweep PASS:"), "{text}");
    assert!(!text.contains("no plot written"), "{text}");
    assert!(!png.exists());
}

/// Outputs are never overwritten without `--force`, also when another program
/// (a second rxnode naming the same file) writes one while the sweep runs: the
/// CSV and the PNG that appeared meanwhile are kept as they are, the sweep's
/// report is still printed, and the error names the file. Both sweeps said
/// "wrote CSV" and the first one's CSV was silently lost.
#[test]
fn an_output_that_appears_during_the_sweep_is_not_replaced() {
    let d = tempfile::tempdir().unwrap();
    let (csv, png) = (d.path().join("same.csv"), d.path().join("same.png"));
    let log = d.path().join("events.log");
    let child = crate::util::rxnode_cmd()
        .current_dir(d.path())
        .env("RXSIM_EVENT_LOG", &log)
        .args([
            "--sim",
            "sweep",
            "-d",
            "driver=rxsim,serial=appear,pace=1",
            "--start-hz",
            "100M",
            "--stop-hz",
            "108M",
            "--bin-hz",
            "10k",
            "--csv",
            "same.csv",
            "--plot",
            "same.png",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The checks at the start found neither; once the radio streams, another
    // program writes both.
    let t0 = Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("activateStream")) {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the sweep never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(&csv, b"theirs\n").unwrap();
    std::fs::write(&png, b"their picture").unwrap();
    let out = child.wait_with_output().unwrap();
    let se = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{se}");
    assert_eq!(std::fs::read(&csv).unwrap(), b"theirs\n", "{se}");
    assert_eq!(std::fs::read(&png).unwrap(), b"their picture", "{se}");
    assert!(
        se.contains(
            "same.csv appeared while this command ran (another program wrote it): not replaced"
        ),
        "{se}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("sweep "),
        "the report was not printed"
    );
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}
