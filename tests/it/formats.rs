//! `rxnode analyze` on recordings other tools write: every SigMF receive datatype
//! (metadata by the `sigmf` package, samples by numpy), SigMF archives, raw files as
//! rtl_sdr, GNU Radio and SoapySDR tools name them, multi-channel SigMF
//! (docs/operator.md#analysing-a-recording).
use crate::util::{show, text};
use serde::Deserialize;
use std::path::Path;
use std::process::Output;

#[derive(Debug, Deserialize)]
struct Peak {
    frequency_hz: f64,
    power_db: f64,
}

#[derive(Debug, Deserialize)]
struct Report {
    datatype: String,
    num_channels: u32,
    channel: u32,
    samples: u64,
    sample_rate_hz: f64,
    center_hz: Option<f64>,
    peaks: Vec<Peak>,
    #[serde(default)]
    channels: Vec<Report>,
}

/// One file the generator wrote: where, the flags it needs, its datatype.
#[derive(Debug, Deserialize)]
struct Written {
    path: String,
    args: Vec<String>,
    datatype: String,
}

const FC: f64 = 100e6;

/// Run `fixtures/recordings/write_formats.py` into `dir` (python3 with numpy and
/// sigmf, as scripts/setup.sh installs them).
fn write_formats(dir: &Path) -> Vec<Written> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/recordings/write_formats.py");
    let o = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        o.status.success(),
        "the generator failed (numpy and sigmf: scripts/setup.sh --tests installs them): {}",
        show(&o)
    );
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn analyze(dir: &Path, args: &[&str]) -> Output {
    crate::util::rxnode_bin()
        .current_dir(dir)
        .arg("--json")
        .arg("analyze")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run rxnode: {e}"))
}

fn report(o: &Output) -> Report {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not a report ({e}): {}", show(o)))
}

/// The tone of amplitude `amp` at `offset_hz` from the centre is the strongest peak,
/// at its frequency and level, and nothing else comes within 30 dB of it.
fn check_tone(r: &Report, offset_hz: f64, amp: f64, what: &str) {
    let p = r.peaks.first().unwrap_or_else(|| panic!("{what}: no peak"));
    assert!(
        (p.frequency_hz - (FC + offset_hz)).abs() < 1.0,
        "{what}: {:?}",
        r.peaks
    );
    let level = 20.0 * amp.log10();
    assert!(
        (p.power_db - level).abs() < 0.1,
        "{what}: {} dBFS, expected {level}",
        p.power_db
    );
    if let Some(q) = r.peaks.get(1) {
        assert!(p.power_db - q.power_db > 30.0, "{what}: {:?}", r.peaks);
    }
}

/// Every SigMF 1.2 complex receive datatype, as a pair and as an archive, and the raw
/// files of common tools (`.cu8`, `.cs8`, `.cs16`, `.cf32`, `.cfile`, `.bin` with
/// `--format` …) read back with the tone where and as loud as it was written.
#[test]
fn every_datatype_other_tools_write_reads_back_its_tone() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let written = write_formats(dir.path());
    assert!(written.len() >= 29, "{written:?}");
    for w in &written {
        let mut args = vec![w.path.as_str()];
        args.extend(w.args.iter().map(String::as_str));
        let o = analyze(dir.path(), &args);
        crate::util::expect_exit(&o, 0, &w.path);
        let r = report(&o);
        assert_eq!(r.datatype, w.datatype, "{}", w.path);
        assert_eq!((r.samples, r.sample_rate_hz), (1 << 16, 2e6), "{}", w.path);
        assert_eq!(r.center_hz, Some(FC), "{}", w.path);
        assert_eq!((r.num_channels, r.channel), (1, 0), "{}", w.path);
        check_tone(&r, 250e3, 0.5, &w.path);
    }
}

/// A 2-channel SigMF: each channel analysed on its own (the tone of each, and not
/// the other's), or one chosen with `--channel`; a channel it does not have is
/// refused by name.
#[test]
fn multi_channel_sigmf_is_analysed_per_channel() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_formats(dir.path());
    let o = analyze(dir.path(), &["two.sigmf-meta"]);
    crate::util::expect_exit(&o, 0, "two channels");
    let r = report(&o);
    assert_eq!((r.num_channels, r.channel), (2, 0));
    assert_eq!(r.channels.len(), 2);
    check_tone(&r, 250e3, 0.5, "channel 0 (top)");
    check_tone(&r.channels[0], 250e3, 0.5, "channel 0");
    assert_eq!(r.channels[1].channel, 1);
    check_tone(&r.channels[1], -125e3, 0.1, "channel 1");
    let o = analyze(dir.path(), &["two.sigmf-data", "--channel", "1"]);
    crate::util::expect_exit(&o, 0, "channel 1");
    let r = report(&o);
    assert!(r.channels.is_empty());
    assert_eq!((r.num_channels, r.channel), (2, 1));
    check_tone(&r, -125e3, 0.1, "--channel 1");
    let o = analyze(dir.path(), &["two.sigmf-meta", "--channel", "2"]);
    crate::util::expect_exit(&o, 2, "channel 2");
    assert!(
        text(&o.stderr).contains("channel 2 asked for, but core:num_channels is 2"),
        "{}",
        show(&o)
    );
}

/// The file's own rate and centre win; a flag that disagrees is refused naming both
/// (and the meta); a flag that agrees is fine. A `.bin` without `--format` is refused
/// naming the formats; archives that are not one recording are refused by name.
#[test]
fn metadata_wins_and_ambiguous_files_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write_formats(dir.path());
    let o = analyze(
        dir.path(),
        &["pair_cu8.sigmf-meta", "--sample-rate-hz", "2M"],
    );
    crate::util::expect_exit(&o, 0, "agreeing rate");
    let o = analyze(
        dir.path(),
        &["pair_cu8.sigmf-meta", "--sample-rate-hz", "1M"],
    );
    crate::util::expect_exit(&o, 2, "disagreeing rate");
    let err = text(&o.stderr);
    assert!(
        err.contains("--sample-rate-hz 1000000 disagrees with the recording's own 2000000")
            && err.contains("core:sample_rate")
            && err.contains("pair_cu8.sigmf-meta"),
        "{err}"
    );
    let o = analyze(
        dir.path(),
        &["arch_ci8/rec_ci8.sigmf", "--frequency-hz", "101M"],
    );
    crate::util::expect_exit(&o, 2, "disagreeing centre");
    assert!(text(&o.stderr).contains("core:frequency"), "{}", show(&o));
    let o = analyze(dir.path(), &["rtl_sdr.bin", "--sample-rate-hz", "2M"]);
    crate::util::expect_exit(&o, 2, "bin without format");
    assert!(
        text(&o.stderr).contains("give the format") && text(&o.stderr).contains("cu8"),
        "{}",
        show(&o)
    );
    // Not a tar; a tar with two recordings.
    std::fs::write(dir.path().join("junk.sigmf"), b"not an archive at all").unwrap_or_default();
    let o = analyze(dir.path(), &["junk.sigmf"]);
    crate::util::expect_exit(&o, 2, "junk archive");
    assert!(text(&o.stderr).contains("junk.sigmf"), "{}", show(&o));
    let two = std::process::Command::new("tar")
        .current_dir(dir.path())
        .args([
            "cf",
            "both.sigmf",
            "pair_ci8.sigmf-meta",
            "pair_ci8.sigmf-data",
            "pair_cu8.sigmf-meta",
            "pair_cu8.sigmf-data",
        ])
        .output()
        .unwrap_or_else(|e| panic!("tar: {e}"));
    assert!(two.status.success(), "{}", show(&two));
    let o = analyze(dir.path(), &["both.sigmf"]);
    crate::util::expect_exit(&o, 2, "two recordings in one archive");
    assert!(
        text(&o.stderr).contains("the archive holds 2 recordings"),
        "{}",
        show(&o)
    );
}

/// The `freq_cal` entry, as `clkin calibrate --json` prints it and `analyze
/// --freq-cal` carries it.
#[derive(Debug, Deserialize)]
struct FreqCal {
    status: String,
    detail: String,
    method: String,
    ppm: Option<f64>,
    uncertainty_ppm: Option<f64>,
    cell: Option<String>,
    calibration_stored: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct WithFreqCal {
    samples: u64,
    sample_rate_hz: f64,
    freq_cal: FreqCal,
}

/// One scene measured live (`clkin calibrate`) by one radio and recorded (`capture
/// --record`) by another with the same error, then the recording analysed with
/// `--freq-cal`: both PASS, the same cell, the two numbers within 4 combined σ of
/// each other and of the truth; nothing kept from the file unless the radio is named.
/// Prints the analysis speed against the live estimator's (the radio's rate).
fn live_and_recorded(method: &str, scene: &str, centre: &str, rate: &str, ppm: f64, secs: &str) {
    use crate::util::{run_fed, Lab};
    let lab = Lab::new();
    let radio = |serial: &str| format!("driver=rxsim,serial={serial},pace=0,ppm={ppm},{scene}");
    let live = run_fed(
        lab.rxnode().arg("--sim").args([
            "clkin",
            "calibrate",
            "-d",
            &radio("live"),
            "--method",
            method,
            "-f",
            centre,
            "-r",
            rate,
            "-t",
            secs,
            "--json",
        ]),
        b"",
    );
    crate::util::expect_exit(&live, 0, "live calibrate");
    let live: FreqCal = serde_json::from_slice(&live.stdout)
        .unwrap_or_else(|e| panic!("not a freq_cal entry ({e}): {}", show(&live)));
    let rec = lab.local().join(format!("rx_iq/{method}.sigmf-meta"));
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture",
            "-d",
            &radio("recorder"),
            "-f",
            centre,
            "-r",
            rate,
            "-t",
            secs,
            "--record",
            rec.to_str().unwrap_or_default(),
            "--json",
        ]),
        b"",
    );
    crate::util::expect_exit(&o, 0, "capture --record");
    let analyze_file = |extra: &[&str]| {
        let start = std::time::Instant::now();
        let o = run_fed(
            lab.rxnode()
                .args(["--json", "analyze", rec.to_str().unwrap_or_default()])
                .args(["--freq-cal", method])
                .args(extra),
            b"",
        );
        (o, start.elapsed().as_secs_f64())
    };
    let (o, wall) = analyze_file(&[]);
    crate::util::expect_exit(&o, 0, "analyze --freq-cal");
    let r: WithFreqCal = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no freq_cal in the report ({e}): {}", show(&o)));
    let f = &r.freq_cal;
    assert_eq!(
        (f.status.as_str(), f.method.as_str(), live.status.as_str()),
        ("PASS", method, "PASS"),
        "{} / {}",
        f.detail,
        live.detail
    );
    assert_eq!(f.cell, live.cell);
    let (p, u) = (
        f.ppm.unwrap_or(f64::NAN),
        f.uncertainty_ppm.unwrap_or(f64::NAN),
    );
    let (lp, lu) = (
        live.ppm.unwrap_or(f64::NAN),
        live.uncertainty_ppm.unwrap_or(f64::NAN),
    );
    let both = (u * u + lu * lu).sqrt();
    assert!(
        (p - lp).abs() <= 4.0 * both + 1e-6,
        "file {p} ± {u}, live {lp} ± {lu}"
    );
    assert!(
        (p - ppm).abs() <= 4.0 * u + 1e-6,
        "file {p} ± {u}, truth {ppm}"
    );
    assert_eq!(f.calibration_stored, Some(false));
    let rate_sps = r.samples as f64 / wall;
    eprintln!(
        "analyze --freq-cal {method}: {} samples in {wall:.2} s (whole process) = {:.2} MS/s, \
         {:.1}× the live estimator's {:.2} MS/s",
        r.samples,
        rate_sps / 1e6,
        rate_sps / r.sample_rate_hz,
        r.sample_rate_hz / 1e6
    );
    let stored = || {
        std::fs::read_to_string(lab.local().join("calibration.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| {
                v["sealed"]["radios"]["driver=rxsim,serial=recorder"]["latest"]["ppm"].as_f64()
            })
    };
    assert_eq!(stored(), None, "kept without the radio named");
    let (o, _) = analyze_file(&["--store-for-radio", "driver=rxsim,serial=recorder"]);
    crate::util::expect_exit(&o, 0, "analyze --store-for-radio");
    let r: WithFreqCal = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no freq_cal in the report ({e}): {}", show(&o)));
    assert_eq!(r.freq_cal.calibration_stored, Some(true), "{}", show(&o));
    assert_eq!(stored(), r.freq_cal.ppm);
    // Without a store key it is refused by name.
    let (o, _) = analyze_file(&["--store-for-radio", "serial=recorder"]);
    crate::util::expect_exit(&o, 2, "a radio without its driver");
    assert!(
        show(&o).contains("driver=DRIVER,serial=SERIAL"),
        "{}",
        show(&o)
    );
}

#[test]
fn gsm_freq_cal_from_a_recording_matches_the_live_answer() {
    live_and_recorded(
        "gsm",
        "gsm_freq=935.2e6,gsm_snr_db=10",
        "935.2M",
        "1M",
        23.4,
        "3",
    );
}

#[test]
fn lte_freq_cal_from_a_recording_matches_the_live_answer() {
    live_and_recorded(
        "lte",
        "lte_freq=1842.5e6,lte_pci=301,lte_snr_db=0",
        "1842.5M",
        "1.92M",
        -14.0,
        "2",
    );
}

/// A capture's SigMF meta, written by the real capture and read by the `sigmf`
/// package: valid, with the radio's settings (gain per element, antenna, bandwidth,
/// hardware) and every annotation labelled, the CLKIN check's among them.
#[test]
fn sigmf_recording_carries_the_radio_settings_and_a_labelled_clkin_annotation() {
    use crate::util::{run_fed, Lab};
    let lab = Lab::new();
    let rec = lab.local().join("rx_iq/settings.sigmf-meta");
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture",
            "-d",
            "driver=rxsim,serial=meta1,pace=0,ppm=0.3,tone_hz=100.1e6",
            "-f",
            "100M",
            "-r",
            "1M",
            "-t",
            "0.5",
            "-g",
            "LNA=16,VGA=20",
            "--clkin-tone-hz",
            "100.1e6",
            "--clkin-tolerance-ppm",
            "2",
            "--record",
            rec.to_str().unwrap_or_default(),
            "--json",
        ]),
        b"",
    );
    // The verdict is the capture's (its driver evidence weighs in); the annotation
    // says the same.
    let summary: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&o)));
    let status = summary["clkin"]["status"]
        .as_str()
        .unwrap_or_default()
        .replace('_', " ");
    assert!(summary["clkin"]["ppm"].as_f64().is_some(), "{summary}");
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, json\nfrom sigmf import sigmffile\nf = sigmffile.fromfile(sys.argv[1])\n\
             f.validate()\nc = f.get_captures()[0]\n\
             print(json.dumps({'hw': f.get_global_field('core:hw'), 'capture': c, \
             'labels': [a.get('core:label') for a in f.get_annotations()], \
             'comments': [a.get('core:comment') for a in f.get_annotations()]}))",
        )
        .arg(&rec)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        py.status.success(),
        "the sigmf check failed (scripts/setup.sh --tests installs sigmf): {}",
        show(&py)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&py.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&py)));
    assert_eq!(v["hw"], "rxsim (rxsim)", "{v}");
    let c = &v["capture"];
    assert_eq!(
        c["rxnode:gain_elements"],
        serde_json::json!({"LNA": 16.0, "VGA": 20.0}),
        "{v}"
    );
    assert_eq!(c["rxnode:gain_db"], 36.0, "{v}");
    assert_eq!(c["rxnode:antenna"], "RX", "{v}");
    // The radio's settings validate against `rxnode schema sigmf-rxnode`; a gain
    // in words does not.
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(rec.with_extension("sigmf-meta")).unwrap_or_default(),
    )
    .unwrap_or_default();
    let mut bad = written.clone();
    bad["captures"][0]["rxnode:gain_db"] = "high".into();
    let verdicts = crate::mainpc::schemas::jsonschema_verdicts(&[
        ("recorded meta".into(), "sigmf-rxnode", written),
        ("gain in words".into(), "sigmf-rxnode", bad),
    ]);
    let valid: Vec<bool> = verdicts.iter().map(|v| v.1).collect();
    assert_eq!(valid, [true, false], "{verdicts:?}");
    assert!(
        c["rxnode:bandwidth_hz"].as_f64().is_some_and(|b| b > 0.0),
        "{v}"
    );
    let labels: Vec<String> = serde_json::from_value(v["labels"].clone())
        .unwrap_or_else(|e| panic!("every annotation labelled ({e}): {v}"));
    assert_eq!(labels[0], "rxnode capture");
    assert!(
        // The tone rxsim sends at 100.1 MHz, read by a radio 0.3 ppm fast: 30 Hz low.
        labels
            .iter()
            .any(|l| l.starts_with("peak 1: 100.099970 MHz")),
        "{labels:?}"
    );
    let clkin = labels
        .iter()
        .position(|l| l.starts_with(&format!("CLKIN {status}: +0.30")) && l.contains("ppm (1σ)"))
        .unwrap_or_else(|| panic!("no CLKIN annotation: {labels:?}"));
    assert!(
        v["comments"][clkin]
            .as_str()
            .is_some_and(|c| c.contains("ppm")),
        "{v}"
    );
}

/// `capture --record FIFO` while another program reads the FIFO (as GNU Radio's file
/// source or csdr would): the reader gets every sample as raw cf32, and the FIFO is
/// left in place; `--record -` writes the samples to standard output and the report
/// to standard error.
#[cfg(unix)]
#[test]
fn capture_streams_to_a_fifo_and_to_standard_output() {
    use crate::util::{run_fed, Lab};
    let lab = Lab::new();
    // Outside the checkout, as an operator's pipeline would have it.
    let fifo = lab.dir.path().join("live.fifo");
    let mk = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .output()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(mk.status.success(), "{}", show(&mk));
    // Another process reads the FIFO as the samples arrive (`wc -c`, as GNU Radio's
    // file source or csdr would read them).
    let mut reader = std::process::Command::new("sh")
        .args(["-c", "wc -c < \"$1\"", "sh"])
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("sh: {e}"));
    let device = "driver=rxsim,serial=fifo1,pace=0,tone_hz=100.1e6";
    let capture = |record: &str| {
        run_fed(
            lab.rxnode().arg("--sim").args([
                "capture", "-d", device, "-f", "100M", "-r", "1M", "-t", "0.5", "--record", record,
                "--json",
            ]),
            b"",
        )
    };
    let o = capture(fifo.to_str().unwrap_or_default());
    if o.status.code() != Some(0) {
        // The FIFO may never have been opened: the reader would wait for ever.
        let _ = reader.kill();
    }
    crate::util::expect_exit(&o, 0, "capture --record FIFO");
    let counted = reader
        .wait_with_output()
        .unwrap_or_else(|e| panic!("the reader failed: {e}"));
    let read: u64 = text(&counted.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("wc -c said {:?}: {e}", text(&counted.stdout)));
    let s: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&o)));
    assert_eq!(read, 500_000 * 8, "{s}");
    assert_eq!(s["iq_files"][0]["bytes"].as_u64(), Some(read), "{s}");
    assert_eq!(s["iq_files"][0]["format"], "cf32", "{s}");
    let kept = std::fs::symlink_metadata(&fifo).unwrap_or_else(|e| panic!("{e}"));
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kept.file_type()));
    // Standard output.
    let o = capture("-");
    crate::util::expect_exit(&o, 0, "capture --record -");
    assert_eq!(o.stdout.len(), 500_000 * 8, "{}", text(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stderr)
        .unwrap_or_else(|e| panic!("the report on stderr ({e}): {}", text(&o.stderr)));
    assert_eq!(s["iq_files"][0]["path"], "-", "{s}");
    assert!(s["peaks"][0]["frequency_hz"]
        .as_f64()
        .is_some_and(|f| (f - 100.1e6).abs() < 1e3));
}

/// A recording made with a frequency correction (`-p 5` on a radio 5 ppm off)
/// holds the error left after it, not the radio's: `analyze --freq-cal` called
/// that residual "radio error". It now says what it is, and the number is the
/// residual (within 0.05 ppm of zero here).
#[test]
fn a_corrected_recordings_freq_cal_is_named_the_error_left_after_the_correction() {
    use crate::util::{run_fed, Lab};
    let lab = Lab::new();
    let rec = lab.local().join("rx_iq/corrected.sigmf-meta");
    let o = run_fed(
        lab.rxnode().arg("--sim").args([
            "capture",
            "-d",
            "driver=rxsim,serial=corr1,pace=0,ppm=5,gsm_freq=935.2e6,gsm_snr_db=10",
            "-f",
            "935.2M",
            "-r",
            "1M",
            "-t",
            "2",
            "-p",
            "5",
            "--record",
            rec.to_str().unwrap_or_default(),
        ]),
        b"",
    );
    crate::util::expect_exit(&o, 0, "capture -p 5 --record");
    let o = run_fed(
        lab.rxnode().args([
            "analyze",
            rec.to_str().unwrap_or_default(),
            "--freq-cal",
            "gsm",
            "--json",
        ]),
        b"",
    );
    crate::util::expect_exit(&o, 0, "analyze --freq-cal gsm");
    let a: WithFreqCal = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not an analyze report ({e}): {}", show(&o)));
    let f = a.freq_cal;
    assert!(
        f.detail
            .contains("error left after the recording's +5.0000 ppm correction")
            && !f.detail.contains("radio error"),
        "{}",
        f.detail
    );
    let ppm = f.ppm.unwrap_or(f64::NAN);
    assert!(ppm.abs() < 0.05, "the residual: {ppm} ({})", f.detail);
}

/// An SDRangel `.sdriq` recording (`bits` 16 or 24) of a tone at +100 kHz, 2 MS/s,
/// centre 100 MHz, amplitude 0.5 of full scale (−6 dBFS) in a little noise: its 32-byte header with its
/// CRC-32, then 2^16 I/Q pairs (int16, or int32 holding 24-bit values), ≤ 512 KiB.
fn sdriq(bits: u32) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&2_000_000u32.to_le_bytes());
    out.extend_from_slice(&100_000_000u64.to_le_bytes());
    out.extend_from_slice(&1_700_000_000_000u64.to_le_bytes());
    out.extend_from_slice(&bits.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    let full = if bits == 24 {
        f64::from(1u32 << 23)
    } else {
        32768.0
    };
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.01
    };
    for i in 0..1u32 << 16 {
        let p = std::f64::consts::TAU * 0.05 * f64::from(i % 20);
        for v in [p.cos(), p.sin()] {
            let v = ((v * 0.5 + noise()) * full).round();
            if bits == 24 {
                out.extend_from_slice(&(v as i32).to_le_bytes());
            } else {
                out.extend_from_slice(&(v as i16).to_le_bytes());
            }
        }
    }
    out
}

/// An SDRangel `.sdriq` recording is read from its header: rate, centre and sample
/// size (16-bit, or 24-bit in 32-bit words at full scale 2^23), whether named `.sdriq`
/// or told by its header's CRC-32 under another name. `analyze x.sdriq` refused both
/// (`an SDRangel .sdriq recording … not read`, exit 2). Now each reads its −6 dBFS
/// tone at 100.1 MHz; a `--format` other than the header's layout, an option that
/// disagrees with the header, and a `.sdriq` whose header is not one (too short, its
/// CRC-32 wrong, a sample size of 8, a rate of 0) are refused naming the field.
#[test]
fn an_sdrangel_sdriq_recording_is_read_from_its_header() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    for bits in [16, 24] {
        let bytes = sdriq(bits);
        for name in [format!("rec{bits}.sdriq"), format!("rec{bits}.bin")] {
            std::fs::write(d.join(&name), &bytes).unwrap_or_else(|e| panic!("{e}"));
            let o = analyze(d, &[name.as_str()]);
            assert_eq!(o.status.code(), Some(0), "{name}: {}", show(&o));
            let r = report(&o);
            assert_eq!(r.samples, 1 << 16, "{name}");
            assert_eq!(r.sample_rate_hz, 2e6, "{name}");
            assert_eq!(r.center_hz, Some(FC), "{name}");
            check_tone(&r, 100e3, 0.5, &name);
        }
        let name = format!("rec{bits}.sdriq");
        for args in [
            vec!["--format", "cs32", "-r", "2M", "-f", "100M", name.as_str()],
            vec!["--format", "cf32", name.as_str()],
        ] {
            let o = analyze(d, &args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
            let said = text(&o.stderr);
            assert!(
                said.contains("an SDRangel .sdriq recording")
                    && said.contains(&format!("2000000 S/s, centre 100000000 Hz, {bits}-bit I/Q"))
                    && said.contains("leave --format out"),
                "{args:?}: {}",
                show(&o)
            );
        }
        let o = analyze(d, &["-f", "101M", name.as_str()]);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        assert!(
            text(&o.stderr).contains("centre frequency of its SDRangel .sdriq header"),
            "{}",
            show(&o)
        );
    }
    // The 16-bit layout named as cs16 is the header's own: read past the header.
    let o = analyze(d, &["--format", "cs16", "rec16.sdriq"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    check_tone(&report(&o), 100e3, 0.5, "rec16.sdriq as cs16");
    let good = sdriq(16);
    let resealed = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        let crc = crc32fast::hash(&b[..28]);
        b[28..32].copy_from_slice(&crc.to_le_bytes());
        b
    };
    let mut wrong_crc = good.clone();
    wrong_crc[28] ^= 1;
    for (bytes, said) in [
        (
            good[..20].to_vec(),
            "20 bytes, shorter than the 32-byte header",
        ),
        (wrong_crc, "its header's CRC-32 (bytes 28..32) is 0x"),
        (
            resealed(&|b| b[20..24].copy_from_slice(&8u32.to_le_bytes())),
            "its header's sample size (bytes 20..24) is 8",
        ),
        (
            resealed(&|b| b[0..4].copy_from_slice(&0u32.to_le_bytes())),
            "header's sample rate is 0 S/s",
        ),
        (
            resealed(&|b| b[4..12].copy_from_slice(&0u64.to_le_bytes())),
            "header's centre frequency is 0 Hz",
        ),
    ] {
        std::fs::write(d.join("bad.sdriq"), bytes).unwrap_or_else(|e| panic!("{e}"));
        let o = analyze(d, &["bad.sdriq"]);
        assert_eq!(o.status.code(), Some(2), "{said}: {}", show(&o));
        assert!(text(&o.stderr).contains(said), "{said}: {}", show(&o));
    }
}
