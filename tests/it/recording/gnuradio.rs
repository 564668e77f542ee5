//! GNU Radio 3.10 (Debian's `gnuradio`, installed by scripts/setup.sh --tests) as the
//! program at the other end: its file source reads a FIFO while `capture --record
//! FIFO` writes it, and `--record -` piped into it; its file sink writes a `.cfile`
//! that `analyze` reads. The flowgraphs are tests/support/gr_check.py. Linux only:
//! scripts/setup.sh installs GNU Radio on Debian.
use super::{capture_args, json, rxnode};
use crate::util::{rxnode_cmd, show, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Debian's GNU Radio is built for Debian's own python3 (`/usr/bin/python3`), not
/// for another python3 first on PATH (a pyenv or venv); `RXNODE_TEST_GR_PYTHON`
/// names another interpreter that imports `gnuradio`.
fn gr_python() -> String {
    std::env::var("RXNODE_TEST_GR_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into())
}

fn gr_check() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/gr_check.py")
}

/// What GNU Radio read: the sample count and the strongest tone's offset.
#[derive(Debug, serde::Deserialize)]
struct Read {
    samples: u64,
    tone_hz: Option<f64>,
    version: String,
}

fn parse_read(o: &std::process::Output) -> Read {
    assert!(
        o.status.success(),
        "GNU Radio's flowgraph failed (scripts/setup.sh --tests installs gnuradio): {}",
        show(o)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("GNU Radio's flowgraph said ({e}): {}", show(o)))
}

/// 500 000 samples at 1 MS/s with rxsim's tone 100 kHz above the centre (bins of
/// 61 Hz), read by GNU Radio 3.10.
fn check_read(r: &Read, what: &str) {
    assert!(
        r.version.starts_with("3.10"),
        "{what}: GNU Radio {}",
        r.version
    );
    assert_eq!(r.samples, 500_000, "{what}: {r:?}");
    let tone = r
        .tone_hz
        .unwrap_or_else(|| panic!("{what}: no tone: {r:?}"));
    assert!((tone - 100e3).abs() < 130.0, "{what}: {r:?}");
}

/// GNU Radio's file source reads a FIFO while `capture --record FIFO` writes it,
/// and reads `capture --record -` from a pipe: every sample, the tone where rxsim
/// put it.
#[test]
fn gnuradio_reads_a_capture_live_from_a_fifo_and_from_standard_output() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("live.fifo");
    let mk = Command::new("mkfifo")
        .arg(&fifo)
        .output()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(mk.status.success(), "{}", show(&mk));
    let mut gr = Command::new(gr_python())
        .arg(gr_check())
        .args(["read", fifo.to_str().unwrap_or_default(), "1e6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", gr_python()));
    let args = capture_args("gr1", &["--record", fifo.to_str().unwrap_or_default()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rxnode(dir.path(), &args);
    if o.status.code() != Some(0) {
        // The FIFO may never have been opened: the flowgraph would wait for ever.
        let _ = gr.kill();
    }
    crate::util::expect_exit(&o, 0, "capture --record FIFO");
    let s = json(&o);
    assert_eq!(s["iq_files"][0]["bytes"].as_u64(), Some(500_000 * 8), "{s}");
    let got = gr
        .wait_with_output()
        .unwrap_or_else(|e| panic!("GNU Radio: {e}"));
    check_read(&parse_read(&got), "the FIFO");

    // `--record -` into GNU Radio's file source on its standard input.
    let mut cap = rxnode_cmd();
    cap.current_dir(dir.path())
        .args(["--sim", "--json"])
        .args(capture_args("gr2", &["--record", "-"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut cap = cap.spawn().unwrap_or_else(|e| panic!("rxnode: {e}"));
    let pipe = cap
        .stdout
        .take()
        .unwrap_or_else(|| panic!("no stdout pipe"));
    let got = Command::new(gr_python())
        .arg(gr_check())
        .args(["read", "/dev/stdin", "1e6"])
        .stdin(pipe)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", gr_python()));
    let cap = cap
        .wait_with_output()
        .unwrap_or_else(|e| panic!("rxnode: {e}"));
    assert_eq!(cap.status.code(), Some(0), "{}", text(&cap.stderr));
    let s: serde_json::Value = serde_json::from_slice(&cap.stderr)
        .unwrap_or_else(|e| panic!("the report on stderr ({e}): {}", text(&cap.stderr)));
    assert_eq!(s["iq_files"][0]["path"], "-", "{s}");
    check_read(&parse_read(&got), "the pipe");
}

/// A `.cfile` written by GNU Radio's file sink (a 250 kHz tone at amplitude 0.5,
/// 65 536 samples) is read by `analyze` with the rate and centre given: every
/// sample, the tone at its frequency and level.
#[test]
fn analyze_reads_a_cfile_gnuradio_wrote() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfile = dir.path().join("tone.cfile");
    let w = Command::new(gr_python())
        .arg(gr_check())
        .args([
            "write",
            cfile.to_str().unwrap_or_default(),
            "2e6",
            "250e3",
            "65536",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", gr_python()));
    assert!(
        w.status.success(),
        "GNU Radio's file sink flowgraph failed (scripts/setup.sh --tests installs gnuradio): {}",
        show(&w)
    );
    let o = rxnode(
        dir.path(),
        &[
            "analyze",
            "tone.cfile",
            "--rate",
            "2M",
            "--center-hz",
            "100M",
        ],
    );
    crate::util::expect_exit(&o, 0, "analyze tone.cfile");
    let r = json(&o);
    assert_eq!(r["datatype"], "cf32_le", "{r}");
    assert_eq!(r["samples"].as_u64(), Some(65_536), "{r}");
    let f = r["peaks"][0]["frequency_hz"].as_f64().unwrap_or_default();
    let db = r["peaks"][0]["power_db"].as_f64().unwrap_or_default();
    assert!((f - 100.25e6).abs() < 1.0, "{r}");
    assert!((db - 20.0 * 0.5f64.log10()).abs() < 0.1, "{r}");
}

/// GNU Radio's File Meta Sink (the way GNU Radio records with metadata), its headers
/// attached before every segment of samples or detached in `FILE.hdr`, cf32 or
/// int16: `analyze` skips the headers and takes the layout, rate and centre
/// (`rx_freq`) from them — every sample, the tone where GNU Radio put it, alone.
/// Headers read as samples (before) made an attached int16 file of 300 000 samples
/// 300 171, each segment shifted by a header's 171 bytes: 4 "carriers", the
/// strongest at 433.670 MHz (the tone is at 434.170), exit 0. A rate or format that
/// disagrees with the header is refused naming it; a file cut short is refused as
/// truncated.
#[test]
fn analyze_reads_gnuradio_file_meta_sink_recordings() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (name, item, detached) in [
        ("att16.bin", "short", "0"),
        ("att.cfile", "float", "0"),
        ("det.cfile", "float", "1"),
        ("det16.dat", "short", "1"),
    ] {
        let path = dir.path().join(name);
        let w = Command::new(gr_python())
            .arg(gr_check())
            .args(["meta", path.to_str().unwrap_or_default(), "2e6", "250e3"])
            .args(["300000", item, detached, "433.92e6"])
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", gr_python()));
        assert!(
            w.status.success(),
            "GNU Radio's File Meta Sink: {}",
            show(&w)
        );
        let o = rxnode(dir.path(), &["analyze", name]);
        crate::util::expect_exit(&o, 0, name);
        let r = json(&o);
        let want = if item == "short" {
            "ci16_le"
        } else {
            "cf32_le"
        };
        assert_eq!(r["datatype"], want, "{name}: {r}");
        assert_eq!(r["samples"].as_u64(), Some(300_000), "{name}: {r}");
        assert_eq!(r["sample_rate_hz"].as_f64(), Some(2e6), "{name}: {r}");
        assert_eq!(r["center_hz"].as_f64(), Some(433.92e6), "{name}: {r}");
        let f = r["peaks"][0]["frequency_hz"].as_f64().unwrap_or_default();
        let db = r["peaks"][0]["power_db"].as_f64().unwrap_or_default();
        assert!((f - 434.17e6).abs() < 1.0, "{name}: {r}");
        assert!((db - 20.0 * 0.5f64.log10()).abs() < 0.1, "{name}: {r}");
        assert_eq!(r["peaks"].as_array().map(Vec::len), Some(1), "{name}: {r}");
    }
    let o = rxnode(dir.path(), &["analyze", "att.cfile", "--rate", "2.4M"]);
    crate::util::expect_exit(&o, 2, "a rate the header contradicts");
    assert!(
        text(&o.stderr).contains("(rx_rate of its GNU Radio File Meta Sink header"),
        "{}",
        show(&o)
    );
    let o = rxnode(dir.path(), &["analyze", "det.cfile", "--format", "cs16"]);
    crate::util::expect_exit(&o, 2, "a format the header contradicts");
    assert!(
        text(&o.stderr).contains("header says the samples are cf32"),
        "{}",
        show(&o)
    );
    // A `.hdr` of another kind beside a raw file (an ENVI header) leaves it a raw file.
    let plain = std::fs::read(dir.path().join("det.cfile")).unwrap_or_default();
    std::fs::write(dir.path().join("plain.cfile"), &plain).unwrap_or_default();
    std::fs::write(dir.path().join("plain.cfile.hdr"), "ENVI\nsamples = 5\n").unwrap_or_default();
    let o = rxnode(dir.path(), &["analyze", "plain.cfile", "--rate", "2M"]);
    crate::util::expect_exit(&o, 0, "a raw file beside a .hdr of another kind");
    assert_eq!(json(&o)["samples"].as_u64(), Some(300_000), "{}", show(&o));
    let whole = std::fs::read(dir.path().join("att.cfile")).unwrap_or_default();
    std::fs::write(dir.path().join("cut.cfile"), &whole[..1_000_000]).unwrap_or_default();
    let o = rxnode(dir.path(), &["analyze", "cut.cfile"]);
    crate::util::expect_exit(&o, 2, "a File Meta Sink recording cut short");
    assert!(text(&o.stderr).contains("truncated"), "{}", show(&o));
}
