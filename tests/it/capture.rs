//! `rxnode --sim capture`: the real binary against the bundled rxsim
//! radio. Captures are short (≤ 0.3 s at 1 MS/s) so the debug build keeps up.
use crate::util::{git, sha256_file};
use rxnode_dsp::{CaptureStatus, CaptureSummary, ClkinStatus};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod spectrum;

const TONE: f64 = 100.1e6;
const FC: f64 = 100e6;
const RATE: f64 = 1e6;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn rxnode(&self) -> Command {
        let mut c = crate::util::rxnode_bin();
        c.current_dir(self.path())
            .env("RXSIM_EVENT_LOG", self.path().join("events.log"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env_remove("RXNODE_SIM")
            .env_remove("RXNODE_REPO")
            .arg("--sim");
        c
    }
    /// `capture` with the common settings plus `extra`.
    fn capture(&self, device: &str, duration: &str, extra: &[&str]) -> Output {
        self.rxnode()
            .args([
                "capture",
                "--device",
                device,
                "--frequency-hz",
                "100e6",
                "--sample-rate-hz",
                "1e6",
                "--duration-s",
                duration,
            ])
            .args(extra)
            .output()
            .unwrap()
    }
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn summary(o: &Output) -> CaptureSummary {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not a capture summary ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            err(o)
        )
    })
}

#[test]
fn external_clock_locked_to_clkin_passes() {
    let env = Env::new();
    // The internal oscillator is 3 ppm off; locked to the external reference it is exact.
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6,ppm=3,ext_ref=1",
        "0.25",
        &[
            "--clock-source",
            "external",
            "--clkin-tone-hz",
            "100.1e6",
            "--clkin-tolerance-ppm",
            "0.5",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(s.status, CaptureStatus::Pass);
    assert!(s.clean);
    assert_eq!(s.samples_requested, 250_000);
    assert_eq!(s.samples_received, 250_000);
    assert_eq!(s.samples_processed, 250_000);
    assert_eq!((s.overflows, s.dropped_samples), (0, 0));
    assert_eq!(s.actual["clock_source"], "external");
    let k = s.clkin.expect("clkin report");
    assert_eq!(k.status, ClkinStatus::Pass, "{}", k.detail);
    let ppm = k.ppm.expect("ppm measured");
    assert!(ppm.abs() < 0.05, "ppm {ppm}");
    assert!(k.evidence.iter().all(|e| e.consistent), "{:?}", k.evidence);
    assert!((s.peaks[0].frequency_hz - TONE).abs() < 2.0 * RATE / 2048.0);
    assert!(s.iq_files.is_empty());
}

#[test]
fn free_running_internal_clock_fails_with_its_ppm() {
    let env = Env::new();
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6,ppm=2.5",
        "0.25",
        &["--clkin-tone-hz", "100.1e6", "--json"],
    );
    assert_eq!(code(&o), 1, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(s.status, CaptureStatus::Fail);
    let k = s.clkin.expect("clkin report");
    assert_eq!(k.status, ClkinStatus::Fail);
    let ppm = k.ppm.expect("ppm measured");
    assert!((ppm - 2.5).abs() < 0.05, "ppm {ppm}");
    // A fast clock sees the tone below its true frequency.
    assert!(k.measured_hz.expect("measured") < TONE);
    // The human report says so too.
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6,ppm=2.5",
        "0.1",
        &["--clkin-tone-hz", "100.1e6"],
    );
    assert_eq!(code(&o), 1, "{}", err(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("CLKIN         FAIL"), "{text}");
    assert!(text.contains("+2.5"), "{text}");
    assert!(text.trim_end().ends_with("status: FAIL"), "{text}");
}

#[derive(Debug, Deserialize)]
struct AnalyzeReport {
    samples: u64,
    sample_rate_hz: f64,
    center_hz: Option<f64>,
    peaks: Vec<AnalyzePeak>,
    noise_floor_db: f64,
    mean_power_dbfs: f64,
    clkin: Option<AnalyzeClkin>,
}

#[derive(Debug, Deserialize)]
struct AnalyzePeak {
    frequency_hz: f64,
}

#[derive(Debug, Deserialize)]
struct AnalyzeClkin {
    ppm: Option<f64>,
}

#[test]
fn sigmf_recording_analyzes_to_the_live_figures() {
    let env = Env::new();
    let o = env.capture(
        // Locked to an external reference that is itself 1.5 ppm fast.
        "driver=rxsim,tone_hz=100.1e6,ext_ref=1,ext_ppm=1.5",
        "0.3",
        &[
            "--clock-source",
            "external",
            "--clkin-tone-hz",
            "100.1e6",
            "--clkin-tolerance-ppm",
            "2",
            "--record",
            "rec/x.sigmf-data",
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let live = summary(&o);
    assert_eq!(live.status, CaptureStatus::Pass);
    let n = live.samples_processed;
    assert_eq!(n, 300_000);
    // Both files listed, paths as given, sizes and hashes true.
    let formats: Vec<&str> = live.iq_files.iter().map(|f| f.format.as_str()).collect();
    assert_eq!(formats, ["sigmf-data", "sigmf-meta"]);
    assert_eq!(live.iq_files[0].path, PathBuf::from("rec/x.sigmf-data"));
    assert_eq!(live.iq_files[1].path, PathBuf::from("rec/x.sigmf-meta"));
    for f in &live.iq_files {
        let p = env.path().join(&f.path);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), f.bytes, "{p:?}");
        assert_eq!(sha256_file(&p), f.sha256, "{p:?}");
    }
    assert_eq!(live.iq_files[0].bytes, 8 * n);

    let o = env
        .rxnode()
        .args([
            "analyze",
            "rec/x.sigmf-meta",
            "--clkin-tone-hz",
            "100.1e6",
            "--clkin-tolerance-ppm",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let a: AnalyzeReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a.samples, n);
    assert_eq!(a.sample_rate_hz, RATE);
    assert_eq!(a.center_hz, Some(FC));
    let live_ppm = live.clkin.as_ref().and_then(|k| k.ppm).expect("live ppm");
    let file_ppm = a.clkin.as_ref().and_then(|k| k.ppm).expect("file ppm");
    assert!((live_ppm - 1.5).abs() < 0.05, "live {live_ppm}");
    assert!(
        (live_ppm - file_ppm).abs() < 1e-3,
        "{live_ppm} vs {file_ppm}"
    );
    assert!((a.peaks[0].frequency_hz - live.peaks[0].frequency_hz).abs() < 1.0);
    let nf = live.noise_floor_db.expect("live noise floor");
    assert!(
        (a.noise_floor_db - nf).abs() < 0.5,
        "{} vs {nf}",
        a.noise_floor_db
    );
    let mp = live.mean_power_dbfs.expect("live mean power");
    assert!((a.mean_power_dbfs - mp).abs() < 0.05);
}

#[test]
fn wav_and_cf32_recordings_have_true_sizes_and_hashes() {
    let env = Env::new();
    for (name, format) in [("a.cf32", "cf32"), ("b.wav", "wav")] {
        let o = env.capture(
            "driver=rxsim,tone_hz=100.1e6",
            "0.2",
            &["--record", name, "--json"],
        );
        assert_eq!(code(&o), 0, "{}", err(&o));
        let s = summary(&o);
        assert_eq!(s.samples_processed, 200_000);
        assert_eq!(s.iq_files.len(), 1);
        let f = &s.iq_files[0];
        assert_eq!(f.format, format);
        assert_eq!(f.path, PathBuf::from(name));
        let bytes = std::fs::read(env.path().join(name)).unwrap();
        assert_eq!(bytes.len() as u64, f.bytes);
        assert_eq!(hex::encode(Sha256::digest(&bytes)), f.sha256);
        let data = 8 * s.samples_processed;
        match format {
            "cf32" => assert_eq!(f.bytes, data),
            _ => {
                // A float WAV: RIFF header (68 bytes) and the auxi chunk (8 + 164),
                // then exactly the samples.
                assert_eq!(&bytes[..4], b"RIFF");
                assert_eq!(f.bytes - data, 68 + 8 + 164, "{}", f.bytes);
                assert_eq!(&bytes[60..64], b"auxi");
            }
        }
        // The recording holds the tone: analyze finds it where the capture did.
        let mut a = env.rxnode();
        a.args(["analyze", name, "--center-hz", "100e6", "--json"]);
        if format == "cf32" {
            a.args(["--rate", "1e6"]);
        }
        let o = a.output().unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        let r: AnalyzeReport = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r.samples, s.samples_processed);
        assert!((r.peaks[0].frequency_hz - s.peaks[0].frequency_hz).abs() < 1.0);
    }
    // Never overwrite a recording.
    let before = sha256_file(&env.path().join("a.cf32"));
    let o = env.capture("driver=rxsim", "0.1", &["--record", "a.cf32"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("already exists"), "{}", err(&o));
    assert_eq!(sha256_file(&env.path().join("a.cf32")), before);
}

#[test]
fn policy_refusals_exit_3_and_name_the_limit_and_the_flag_typed() {
    let env = Env::new();
    // Default policy: 60 s.
    let o = env.capture("driver=rxsim", "61", &[]);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(err(&o).contains("max_duration_s"), "{}", err(&o));
    // Default policy: the device's maximum rate (rxsim: 250 MS/s).
    let o = env
        .rxnode()
        .args([
            "capture",
            "--device",
            "driver=rxsim",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "300e6",
            "--duration-s",
            "0.1",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(err(&o).contains("device maximum"), "{}", err(&o));
    // A policy file.
    std::fs::create_dir_all(env.path().join(".local")).unwrap();
    std::fs::write(
        env.path().join(".local/rxnode-policy.json"),
        r#"{"rx": {"max_duration_s": 1, "max_gain_db": 30, "max_iq_bytes": 1000000}}"#,
    )
    .unwrap();
    // The refusal names the flag the operator typed, as `sweep`'s does.
    let o = env.capture("driver=rxsim", "2", &["--gain-db", "20"]);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(
        err(&o).contains("--duration-s 2 exceeds rx.max_duration_s 1"),
        "{}",
        err(&o)
    );
    let o = env.capture("driver=rxsim", "0.1", &["--gain-db", "40"]);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(
        err(&o).contains("--gain-db 40 exceeds rx.max_gain_db"),
        "{}",
        err(&o)
    );
    // No gain under a gain limit is refused, not left to the radio.
    let o = env.capture("driver=rxsim", "0.1", &[]);
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(
        err(&o).contains("--gain-db is required while rx.max_gain_db 30"),
        "{}",
        err(&o)
    );
    // 0.5 s × 1 MS/s × 8 bytes = 4 MB > 1 MB.
    let o = env.capture(
        "driver=rxsim",
        "0.5",
        &["--record", "big.cf32", "--gain-db", "20"],
    );
    assert_eq!(code(&o), 3, "{}", err(&o));
    assert!(err(&o).contains("rx.max_iq_bytes"), "{}", err(&o));
    assert!(!env.path().join("big.cf32").exists());
    // Nothing was streamed for any refusal.
    let log = std::fs::read_to_string(env.path().join("events.log")).unwrap_or_default();
    assert!(!log.contains("activateStream"), "{log}");
    assert!(!log.contains(" TX "), "{log}");
}

#[test]
fn bad_arguments_exit_2() {
    let env = Env::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--duration-s", "0"], "--duration-s"),
        (&["--duration-s", "NaN"], "--duration-s"),
        (&["--sample-rate-hz=-2e6"], "--sample-rate-hz"),
        (&["--frequency-hz=0"], "--frequency-hz"),
        (&["--fft-size", "8"], "--fft-size"),
        (&["--clkin-tone-hz=-1"], "--clkin-tone-hz"),
        (&["--clkin-tolerance-ppm=-1"], "--clkin-tolerance-ppm"),
        (&["--record", "x.txt"], "--record"),
        (&["--duration-s", "abc"], "duration"),
    ];
    for (extra, needle) in cases {
        let mut args = vec![
            "capture",
            "--device",
            "driver=rxsim",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "1e6",
            "--duration-s",
            "0.1",
        ];
        args.extend_from_slice(extra);
        let o = env.rxnode().args(&args).output().unwrap();
        assert_eq!(code(&o), 2, "{extra:?}: {}", err(&o));
        assert!(err(&o).contains(needle), "{extra:?}: {}", err(&o));
    }
    let log = std::fs::read_to_string(env.path().join("events.log")).unwrap_or_default();
    assert!(!log.contains("activateStream"), "{log}");
}

#[test]
fn inside_a_checkout_the_capture_is_in_the_ledger_without_absolute_paths() {
    let env = Env::new();
    let repo = env.path().join("lab");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let rec = repo.join(".local/rx_iq/manual/c.cf32");
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6",
        "0.1",
        &[
            "--repo",
            repo.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = summary(&o);
    let ledger = std::fs::read_to_string(repo.join(".local/rx_agent_ledger.jsonl")).unwrap();
    let entries: Vec<serde_json::Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 1, "{ledger}");
    let e = &entries[0];
    assert_eq!(e["event"], "capture");
    assert_eq!(e["detail"]["status"], "PASS");
    assert_eq!(e["detail"]["samples_received"], s.samples_received);
    assert_eq!(e["detail"]["dropped_samples"], 0);
    assert_eq!(
        e["detail"]["iq_files"][0]["path"],
        ".local/rx_iq/manual/c.cf32"
    );
    assert_eq!(e["detail"]["iq_files"][0]["sha256"], s.iq_files[0].sha256);
    let tmp = env.path().to_string_lossy().into_owned();
    assert!(
        !ledger.contains(&tmp),
        "absolute path in the ledger: {ledger}"
    );
    // `.local/` is kept out of Git.
    let exclude = std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert!(
        exclude
            .lines()
            .any(|l| l.trim().trim_start_matches('/').starts_with(".local")),
        "{exclude}"
    );

    // A refusal is in the ledger too; outside a checkout there is no ledger at all.
    let o = env.capture("driver=rxsim", "61", &["--repo", repo.to_str().unwrap()]);
    assert_eq!(code(&o), 3);
    let ledger = std::fs::read_to_string(repo.join(".local/rx_agent_ledger.jsonl")).unwrap();
    assert!(
        ledger.lines().nth(1).unwrap_or("").contains("\"refused\""),
        "{ledger}"
    );
    let o = env.capture("driver=rxsim", "0.05", &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!env.path().join(".local/rx_agent_ledger.jsonl").exists());
}

/// Ctrl-C stops the capture and writes what was captured, status PARTIAL.
#[cfg(unix)]
#[test]
fn interrupt_writes_what_was_captured_as_partial() {
    use std::time::{Duration, Instant};
    let env = Env::new();
    let child = env
        .rxnode()
        .args([
            "capture",
            "--device",
            "driver=rxsim,tone_hz=100.1e6",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "1e6",
            "--duration-s",
            "30",
            "--record",
            "cut.sigmf-data",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the stream is running (the handler is installed before it starts).
    let t0 = Instant::now();
    let log = env.path().join("events.log");
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("activateStream RX")
    {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the stream never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(400));
    let k = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(k.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(t0.elapsed() < Duration::from_secs(20));
    let s = summary(&o);
    assert_eq!(s.status, CaptureStatus::Partial);
    assert!(s.cancelled);
    assert_eq!(s.stop_reason, "cancelled");
    assert!(s.samples_processed > 0 && s.samples_processed < 30_000_000);
    assert!(!s.clean);
    let data = env.path().join("cut.sigmf-data");
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        8 * s.samples_processed
    );
    assert_eq!(sha256_file(&data), s.iq_files[0].sha256);
    assert!(env.path().join("cut.sigmf-meta").exists());
}

/// A bandwidth given as the sample rate or wider (an analog filter set at or above the
/// rate) keeps the floor: rxsim's anti-alias filter rolls the band's edges off, and they
/// are taken off as without a bandwidth — the floor is the one read without it, inside
/// the rolled-off edges; before, it was read over them and the capture had no floor
/// (FAIL).
#[test]
fn a_bandwidth_at_or_above_the_rate_keeps_the_floor_inside_the_rolled_off_edges() {
    let env = Env::new();
    let run = |extra: &[&str]| {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let o = env.capture("driver=rxsim,tone_hz=100.1e6", "0.2", &args);
        assert_eq!(code(&o), 0, "{extra:?}: {}", err(&o));
        summary(&o)
    };
    let none = run(&[]);
    let floor = none.noise_floor_db.expect("a floor without a bandwidth");
    for bw in ["1M", "1.5M"] {
        let s = run(&["--bandwidth-hz", bw]);
        assert_eq!(s.status, CaptureStatus::Pass, "{bw}: {s:?}");
        let f = s
            .noise_floor_db
            .unwrap_or_else(|| panic!("{bw}: no floor: {s:?}"));
        assert!((f - floor).abs() < 0.5, "{bw}: {f:.2} against {floor:.2}");
        let [lo, hi] = s.noise_floor_band_hz.expect("read inside the edges");
        assert!(
            lo > 99.5e6 && lo < 99.65e6 && hi > 100.35e6 && hi < 100.5e6,
            "{bw}: {lo} {hi}"
        );
    }
}

/// `capture` takes `--antenna`, `--bandwidth-hz` and a per-element gain
/// (`-g LNA=24,VGA=10`), shows the requested gain as asked, and draws `--plot`. The
/// bandwidth is rxsim's flat part (±0.4·fs), where the floor is read: its anti-alias
/// filter rolls off past it (docs/hardware.md#the-receive-anti-alias-filter).
#[test]
fn capture_sets_antenna_bandwidth_per_element_gain_and_plots() {
    let env = Env::new();
    let png = env.path().join("spectrum.png");
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6",
        "0.2",
        &[
            "--json",
            "-g",
            "LNA=24,VGA=10",
            "-a",
            "RX",
            "--bandwidth-hz",
            "0.8M",
            "--plot",
            png.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(s.requested["antenna"], "RX");
    assert_eq!(s.requested["gain_db"]["LNA"], 24.0);
    assert_eq!(s.actual["gain_elements_db"]["VGA"], 10.0);
    assert_eq!(s.actual["bandwidth_hz"], 0.8e6);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    // The human report names the per-element request and where the picture went.
    let png2 = env.path().join("again.png");
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6",
        "0.1",
        &["-g", "LNA=24,VGA=10", "--plot", png2.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains("requested LNA 24.0 + VGA 10.0 dB")
            && text.contains("(LNA 24.0, VGA 10.0 dB)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("wrote spectrum PNG: {}", png2.display())),
        "{text}"
    );
    // A gain that is neither a number nor ELEMENT=DB is bad usage.
    let o = env.capture("driver=rxsim", "0.1", &["-g", "loud"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("ELEMENT=DB"), "{}", err(&o));
}

/// An output that exists (`--plot`, `--record`) is refused naming the file and
/// left as it was; `--force` overwrites it.
#[test]
fn capture_outputs_are_never_overwritten_without_force() {
    let env = Env::new();
    let png = env.path().join("p.png");
    let rec = env.path().join("r.cf32");
    std::fs::write(&png, b"keep me").unwrap();
    std::fs::write(&rec, b"keep me too").unwrap();
    for (flag, path) in [("--plot", &png), ("--record", &rec)] {
        let o = env.capture("driver=rxsim", "0.1", &[flag, path.to_str().unwrap()]);
        assert_eq!(code(&o), 2, "{}", err(&o));
        assert!(
            err(&o).contains(&path.display().to_string()) && err(&o).contains("--force"),
            "{}",
            err(&o)
        );
    }
    assert_eq!(std::fs::read(&png).unwrap(), b"keep me");
    assert_eq!(std::fs::read(&rec).unwrap(), b"keep me too");
    let o = env.capture(
        "driver=rxsim",
        "0.1",
        &[
            "--json",
            "--force",
            "--plot",
            png.to_str().unwrap(),
            "--record",
            rec.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    assert_eq!(
        std::fs::metadata(&rec).unwrap().len(),
        8 * s.samples_received
    );
}

/// More than eight carriers are all listed with `--max-peaks`; the default lists
/// eight; `--min-snr-db` keeps only those that far above the floor.
#[test]
fn capture_lists_peaks_up_to_max_peaks_above_min_snr() {
    let env = Env::new();
    // Twelve carriers 30 kHz apart, -30 … -63 dBFS.
    let emitters: Vec<String> = (0..12)
        .map(|i| format!("{}:{}", 100e6 - 200e3 + f64::from(i) * 30e3, -30 - 3 * i))
        .collect();
    let dev = format!(
        "driver=rxsim,noise_dbfs=-90,emitters={}",
        emitters.join(";")
    );
    let peaks = |extra: &[&str]| {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let o = env.capture(&dev, "0.2", &args);
        assert_eq!(code(&o), 0, "{}", err(&o));
        summary(&o).peaks
    };
    assert_eq!(peaks(&[]).len(), 8, "the default lists 8");
    let all = peaks(&["--max-peaks", "12"]);
    assert_eq!(all.len(), 12, "{all:?}");
    // The carriers stand 58 … 90 dB above the floor per bin.
    let strong = peaks(&["--max-peaks", "12", "--min-snr-db", "70"]);
    assert!(strong.len() > 3 && strong.len() < 12, "{strong:?}");
    assert!(
        strong.iter().all(|p| p.snr_db.is_some_and(|s| s >= 70.0)),
        "{strong:?}"
    );
    let o = env.capture(&dev, "0.1", &["--max-peaks", "0"]);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("--max-peaks 0"), "{}", err(&o));
}

/// One rule for exit codes: the same policy limit is 3 from `capture` and
/// `sweep`; a frequency the radio cannot tune is 2 from both; a radio that is not
/// there is 1 from both; a band running past the radio's range is clamped and
/// reported, not refused.
#[test]
fn capture_and_sweep_give_the_same_exit_code_for_the_same_cause() {
    let env = Env::new();
    let sweep_dwell = |dev: &str, start: &str, stop: &str, dwell: &str, extra: &[&str]| {
        env.rxnode()
            .args([
                "sweep",
                "-d",
                dev,
                "--start-hz",
                start,
                "--stop-hz",
                stop,
                "-B",
                "100k",
            ])
            .args(["-r", "10M", "-t", dwell])
            .args(extra)
            .output()
            .unwrap()
    };
    let sweep = |dev: &str, start: &str, stop: &str, extra: &[&str]| {
        sweep_dwell(dev, start, stop, "0.005", extra)
    };
    // Policy (the default: 60 s at most).
    let c = env.capture("driver=rxsim", "100", &[]);
    let s = sweep_dwell("driver=rxsim", "100M", "110M", "100", &[]);
    assert_eq!((code(&c), code(&s)), (3, 3), "{}\n{}", err(&c), err(&s));
    // Outside the radio's tuning range (rxsim: 1 MHz – 6 GHz).
    let c = env
        .rxnode()
        .args([
            "capture",
            "-d",
            "driver=rxsim",
            "-f",
            "10G",
            "-r",
            "1M",
            "-t",
            "0.1",
        ])
        .output()
        .unwrap();
    let s = sweep("driver=rxsim", "7G", "7.5G", &[]);
    assert_eq!((code(&c), code(&s)), (2, 2), "{}\n{}", err(&c), err(&s));
    assert!(err(&s).contains("7000.000–7500.000 MHz"), "{}", err(&s));
    // No such radio.
    let c = env.capture("driver=nosuch", "0.1", &[]);
    let s = sweep("driver=nosuch", "100M", "110M", &[]);
    assert_eq!((code(&c), code(&s)), (1, 1), "{}\n{}", err(&c), err(&s));
    // Past the top of the range: clamped, swept, reported.
    let s = sweep("driver=rxsim", "5.9G", "6.5G", &["--json"]);
    assert_eq!(code(&s), 0, "{}", err(&s));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let cl = &v["clamped"];
    assert_eq!(cl["requested_stop_hz"], 6.5e9, "{v}");
    let stop = cl["stop_hz"].as_f64().unwrap();
    assert!(stop > 6.0e9 - 1.0 && stop < 6.01e9, "{v}");
    assert_eq!(cl["device_range_hz"][1], 6e9);
    let hops = v["hops"].as_array().unwrap();
    assert!(hops
        .iter()
        .all(|h| h["requested_center_hz"].as_f64().unwrap() <= 6e9));
    let s = sweep("driver=rxsim", "5.9G", "6.5G", &[]);
    assert!(
        String::from_utf8_lossy(&s.stdout).contains("clamped: the radio tunes 1.000–6000.000 MHz"),
        "{}",
        String::from_utf8_lossy(&s.stdout)
    );
}

/// A `--plot` that cannot be written loses no capture: the recording is kept and
/// its JSON report (size, SHA-256, peaks) printed whole, then the picture's
/// failure is the error, exit 1.
#[test]
fn an_unwritable_plot_keeps_the_capture_and_its_recording() {
    let env = Env::new();
    std::fs::write(env.path().join("not-a-folder"), b"x").unwrap();
    let o = env.capture(
        "driver=rxsim,tone_hz=100.1e6",
        "0.2",
        &[
            "--record",
            "kept.cf32",
            "--plot",
            "not-a-folder/x.png",
            "--json",
        ],
    );
    assert_eq!(code(&o), 1, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(s.samples_processed, 200_000);
    let bytes = std::fs::read(env.path().join("kept.cf32")).unwrap();
    assert_eq!(hex::encode(Sha256::digest(&bytes)), s.iq_files[0].sha256);
    assert!(s.peaks.iter().any(|p| (p.frequency_hz - TONE).abs() < 1e3));
    assert!(
        err(&o).contains("the capture was measured and reported, but its --plot was not written"),
        "{}",
        err(&o)
    );
}

/// The progress bar is drawn on a terminal, and not on a dumb one: it redraws
/// its line with `ESC [2K`, which a dumb terminal (an editor's shell buffer, a
/// serial console's log) shows as text, one bar per redraw.
#[cfg(unix)]
#[test]
fn no_progress_bar_on_a_dumb_terminal() {
    for (term, bar) in [("xterm", true), ("dumb", false)] {
        let mut cmd = crate::util::rxnode_cmd();
        cmd.args([
            "--sim",
            "capture",
            "-d",
            &format!("driver=rxsim,pace=1,serial=term{term}"),
            "-f",
            "100M",
            "-r",
            "1M",
            "-t",
            "1",
        ])
        .env("TERM", term);
        let mut pty = crate::util::Pty::spawn(&mut cmd);
        pty.wait_for("status: PASS", 1, 60);
        pty.exited(60);
        let screen = pty.screen();
        assert_eq!(
            screen.contains("\x1b[2K") && screen.contains(" capture ["),
            bar,
            "TERM={term}: {screen:?}"
        );
    }
}
