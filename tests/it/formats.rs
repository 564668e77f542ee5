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
    let o = analyze(dir.path(), &["pair_cu8.sigmf-meta", "--rate", "2M"]);
    crate::util::expect_exit(&o, 0, "agreeing rate");
    let o = analyze(dir.path(), &["pair_cu8.sigmf-meta", "--rate", "1M"]);
    crate::util::expect_exit(&o, 2, "disagreeing rate");
    let err = text(&o.stderr);
    assert!(
        err.contains("--rate 1000000 disagrees with the recording's own 2000000")
            && err.contains("core:sample_rate")
            && err.contains("pair_cu8.sigmf-meta"),
        "{err}"
    );
    let o = analyze(
        dir.path(),
        &["arch_ci8/rec_ci8.sigmf", "--center-hz", "101M"],
    );
    crate::util::expect_exit(&o, 2, "disagreeing centre");
    assert!(text(&o.stderr).contains("core:frequency"), "{}", show(&o));
    let o = analyze(dir.path(), &["rtl_sdr.bin", "--rate", "2M"]);
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
