//! `capture --record-format cs8`: the HackRF's native CS8 (rxsim offers it as a
//! HackRF does) recorded as it came — SigMF `ci8` or a raw `.cs8` — then checked by
//! the `sigmf` package and numpy, and read back by `analyze`.
use super::{capture_args, json, python, rxnode};

/// The `sigmf` package validates the recording, finds `ci8`, and numpy finds the
/// tone in its int8 samples.
const SIGMF_CI8: &str = "import sys, json\nimport numpy as np\nfrom sigmf import sigmffile\n\
f = sigmffile.fromfile(sys.argv[1])\nf.validate()\n\
x = f.read_samples()\n\
raw = np.fromfile(f.data_file, dtype=np.int8)\n\
n = 1 << 14\nw = np.hanning(n)\n\
s = sum(np.abs(np.fft.fft(x[k:k + n] * w)) ** 2 for k in range(0, len(x) - n + 1, n))\n\
tone = float(np.fft.fftfreq(n, 1 / f.get_global_field('core:sample_rate'))[int(np.argmax(s))])\n\
print(json.dumps({'datatype': f.get_global_field('core:datatype'), 'samples': len(x), \
'bytes': int(raw.size), 'peak_int': int(np.abs(raw).max()), 'tone_hz': tone, \
'frequency': f.get_captures()[0].get('core:frequency')}))";

/// A cs8 capture to SigMF and to a raw `.cs8` (and `ci8`, its SigMF name): 2 bytes
/// a sample, valid SigMF `ci8` with the tone where rxsim put it, read back by
/// `analyze` with the live capture's peak; a `.cf32` file with cs8 is refused.
#[test]
fn cs8_recording_is_valid_sigmf_ci8_and_reads_back() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let args = capture_args("c8a", &["--record", "c8.sigmf", "--record-format", "cs8"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rxnode(dir.path(), &args);
    crate::util::expect_exit(&o, 0, "capture --record-format cs8");
    let live = json(&o);
    assert_eq!(
        live["iq_files"][0]["bytes"].as_u64(),
        Some(500_000 * 2),
        "{live}"
    );
    let live_peak = live["peaks"][0]["frequency_hz"]
        .as_f64()
        .unwrap_or_default();
    assert!((live_peak - 100.1e6).abs() < 1e3, "{live}");

    let meta = dir.path().join("c8.sigmf-meta");
    let v = python(
        "python3",
        SIGMF_CI8,
        &[meta.to_str().unwrap_or_default()],
        "the sigmf check of a ci8 recording",
    );
    assert_eq!(v["datatype"], "ci8", "{v}");
    assert_eq!(v["samples"].as_u64(), Some(500_000), "{v}");
    assert_eq!(v["bytes"].as_u64(), Some(1_000_000), "{v}");
    assert_eq!(v["frequency"].as_f64(), Some(100e6), "{v}");
    // Integers, not floats squeezed into 8 bits: the tone's −20 dBFS is ~13 counts.
    assert!(
        (5..=127).contains(&v["peak_int"].as_i64().unwrap_or(0)),
        "{v}"
    );
    let tone = v["tone_hz"].as_f64().unwrap_or_default();
    assert!((tone - 100e3).abs() < 130.0, "{v}");

    let o = rxnode(dir.path(), &["analyze", "c8.sigmf-meta"]);
    crate::util::expect_exit(&o, 0, "analyze c8.sigmf-meta");
    let r = json(&o);
    assert_eq!(r["datatype"], "ci8", "{r}");
    assert_eq!(r["samples"].as_u64(), Some(500_000), "{r}");
    // The same tone: solved between bins from three bins, to a milli-bin (1e6 / 2048 Hz).
    let read_back = r["peaks"][0]["frequency_hz"].as_f64().unwrap_or_default();
    assert!((read_back - live_peak).abs() < 1e-3 * 1e6 / 2048.0, "{r}");

    // A raw .cs8 under the SigMF name ci8, read back with --format and as .cs8.
    let args = capture_args("c8b", &["--record", "c8.cs8", "--record-format", "ci8"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rxnode(dir.path(), &args);
    crate::util::expect_exit(&o, 0, "capture --record c8.cs8");
    assert_eq!(json(&o)["iq_files"][0]["format"], "cs8");
    for extra in [&[][..], &["--format", "cs8"][..]] {
        let mut a = vec!["analyze", "c8.cs8", "--rate", "1M", "--center-hz", "100M"];
        a.extend_from_slice(extra);
        let o = rxnode(dir.path(), &a);
        crate::util::expect_exit(&o, 0, "analyze c8.cs8");
        let r = json(&o);
        assert_eq!(r["datatype"], "ci8", "{r}");
        assert_eq!(r["samples"].as_u64(), Some(500_000), "{r}");
        let read_back = r["peaks"][0]["frequency_hz"].as_f64().unwrap_or_default();
        assert!((read_back - live_peak).abs() < 1e-3 * 1e6 / 2048.0, "{r}");
    }

    let args = capture_args("c8c", &["--record", "x.cf32", "--record-format", "cs8"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rxnode(dir.path(), &args);
    crate::util::expect_exit(&o, 2, "cs8 into .cf32");
    assert!(
        crate::util::text(&o.stderr).contains("ci8 records .sigmf-data, .sigmf-meta or .cs8"),
        "{}",
        crate::util::show(&o)
    );
}

/// rxsim's CS8 carries its 8-bit converter's own noise, as a HackRF's does: its
/// −20 dBFS tone over a −60 dBFS floor (under one count) captured as CS8 lists the
/// tone alone, never the harmonics that rounding a clean signal to 8 bits makes
/// (five of them were PASS peaks, up to 27 dB SNR); the floor is the converter's,
/// −76.5 dBFS/bin at FFT 2048 (a count's noise: ½ count rms per component).
#[test]
fn cs8_capture_lists_the_tone_not_quantisation_harmonics() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (serial, format) in [("c8h", "cs8"), ("c8f", "cf32")] {
        let rec = format!("h.{serial}.{format}");
        let args = capture_args(serial, &["--record", &rec, "--record-format", format]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = rxnode(dir.path(), &args);
        crate::util::expect_exit(&o, 0, "capture");
        let r = json(&o);
        let peaks = r["peaks"].as_array().cloned().unwrap_or_default();
        assert_eq!(peaks.len(), 1, "{format}: {peaks:?}");
        let f = peaks[0]["frequency_hz"].as_f64().unwrap_or_default();
        assert!((f - 100.1e6).abs() < 1e3, "{format}: {peaks:?}");
        if format == "cs8" {
            let floor = r["noise_floor_db"].as_f64().unwrap_or_default();
            assert!((floor + 76.5).abs() < 1.0, "{format}: floor {floor}: {r}");
        }
    }
}
