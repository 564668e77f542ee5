//! Recordings read honestly: a SigMF dataset that no longer matches its `core:sha512`,
//! a meta naming a key twice, implausible rates and centres in a meta or a WAV
//! header, and streams (pipes, FIFOs, devices) are refused naming what is wrong and
//! where it came from, never analysed as if they were intact
//! (docs/operator.md#analysing-a-recording).
use super::{json, python, rxnode};
use crate::util::{expect_exit, show};
use std::path::Path;

/// Writes, with the `sigmf` package, `ok.sigmf-meta`/`-data` and `ok.sigmf` (an
/// archive) holding a 100 kHz tone at 915 MHz over noise 77 dB down with their `core:sha512`, then
/// `mixed.sigmf-meta`/`-data`: the same, its second half overwritten afterwards.
/// Prints the hashes the package computed.
const WRITE_HASHED: &str = r#"
import json, sys, numpy as np, sigmf
from sigmf import SigMFFile
d = sys.argv[1]; fs = 2e6; n = 100000; t = np.arange(n) / fs
rng = np.random.default_rng(7)
noise = 1e-4 * (rng.standard_normal(n) + 1j * rng.standard_normal(n))
x = (0.1 * np.exp(2j * np.pi * 1e5 * t) + noise).astype(np.complex64)
out = {}
for name in ('ok', 'mixed'):
    x.tofile(f'{d}/{name}.sigmf-data')
    m = SigMFFile(data_file=f'{d}/{name}.sigmf-data', global_info={
        'core:datatype': 'cf32_le', 'core:sample_rate': fs, 'core:version': sigmf.__version__})
    m.add_capture(0, metadata={'core:frequency': 915e6})
    m.tofile(f'{d}/{name}.sigmf-meta')
    if name == 'ok':
        m.tofile(f'{d}/ok.sigmf', toarchive=True)
    out[name] = m.get_global_field('core:sha512')
y = x.copy(); y[n // 2:] = (0.1 * np.exp(-2j * np.pi * 3e5 * t[n // 2:])).astype(np.complex64)
y.tofile(f'{d}/mixed.sigmf-data')
try:
    sigmf.sigmffile.fromfile(f'{d}/mixed.sigmf-meta')
    out['package'] = 'read'
except sigmf.error.SigMFFileError as e:
    out['package'] = str(e)
print(json.dumps(out))
"#;

/// A dataset the `sigmf` package wrote with its `core:sha512` is read (a pair and an
/// archive); the same dataset changed afterwards, which the package refuses, is
/// refused too (exit 2) naming both hashes, the meta and the dataset.
#[test]
fn sigmf_dataset_that_fails_its_sha512_is_refused_naming_both_hashes() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let dstr = d.to_string_lossy();
    let h = python("python3", WRITE_HASHED, &[&dstr], "the sigmf package");
    let want = h["mixed"].as_str().unwrap_or_else(|| panic!("{h}"));
    assert!(
        h["package"].as_str().is_some_and(|p| p.contains("hash")),
        "the sigmf package read the changed dataset: {h}"
    );
    for ok in ["ok.sigmf-meta", "ok.sigmf"] {
        let o = rxnode(d, &["analyze", ok]);
        expect_exit(&o, 0, ok);
        let r = json(&o);
        assert_eq!(r["samples"].as_u64(), Some(100_000), "{ok}: {r}");
        let f = r["peaks"][0]["frequency_hz"].as_f64().unwrap_or_default();
        assert!((f - 915.1e6).abs() < 1e3, "{ok}: {r}");
    }
    let o = rxnode(d, &["analyze", "mixed.sigmf-meta"]);
    expect_exit(&o, 2, "a dataset that fails its core:sha512");
    let s = said(&o);
    assert!(o.stdout.is_empty() || !s.contains("\"peaks\""), "{s}");
    for part in [
        "mixed.sigmf-meta",
        "core:sha512 does not match the dataset",
        "mixed.sigmf-data",
        want,
    ] {
        assert!(s.contains(part), "{part}: {s}");
    }
    let got = hex_sha512(&d.join("mixed.sigmf-data"));
    assert!(s.contains(&got), "the data's own hash {got}: {s}");
}

/// The error message a `--json` command printed (its output when it printed none).
fn said(o: &std::process::Output) -> String {
    serde_json::from_slice::<serde_json::Value>(&o.stderr)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| show(o))
}

/// The SHA-512 of a file, hex, by `sha512sum`'s twin in python.
fn hex_sha512(p: &Path) -> String {
    let code = "import hashlib,json,sys; print(json.dumps(hashlib.sha512(open(sys.argv[1],'rb').read()).hexdigest()))";
    let v = python("python3", code, &[&p.to_string_lossy()], "hashlib");
    v.as_str().unwrap_or_default().to_owned()
}

/// Writes `NAME.sigmf-meta` (the text given) beside 20 000 cf32 samples.
fn meta(dir: &Path, name: &str, text: &str) {
    let samples: Vec<u8> = (0..20_000u32)
        .flat_map(|k| {
            let ph = 2.0 * std::f32::consts::PI * 0.05 * k as f32;
            [0.1 * ph.cos(), 0.1 * ph.sin()]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(dir.join(format!("{name}.sigmf-data")), samples)
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join(format!("{name}.sigmf-meta")), text).unwrap_or_else(|e| panic!("{e}"));
}

/// A meta whose `global` holds `g` and whose one capture segment holds `c`.
fn doc(g: &str, c: &str) -> String {
    format!(
        r#"{{"global": {{"core:datatype": "cf32_le", "core:version": "1.2.0"{g}}},
"captures": [{{"core:sample_start": 0{c}}}], "annotations": []}}"#
    )
}

/// A key named twice, in `global` or deeper in a capture segment, is refused (exit
/// 2) naming the key and where it is: serde would take the last, another reader the
/// first.
#[test]
fn sigmf_meta_with_a_duplicate_key_is_refused_naming_key_and_path() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let cases = [
        (
            "global",
            doc(
                r#", "core:sample_rate": 2e6, "core:sample_rate": 1e6"#,
                r#", "core:frequency": 915e6"#,
            ),
            r#"duplicate key "core:sample_rate" in $.global"#,
        ),
        (
            "capture",
            doc(
                r#", "core:sample_rate": 2e6"#,
                r#", "core:frequency": 915e6, "core:frequency": 433e6"#,
            ),
            r#"duplicate key "core:frequency" in $.captures[0]"#,
        ),
    ];
    for (name, text, want) in cases {
        meta(d, name, &text);
        let o = rxnode(d, &["analyze", &format!("{name}.sigmf-meta")]);
        expect_exit(&o, 2, name);
        let s = said(&o);
        assert!(
            s.contains(want) && s.contains(&format!("{name}.sigmf-meta")),
            "{name}: {s}"
        );
    }
}

/// A rate or centre a flag would refuse as implausible is refused from a SigMF meta
/// too, naming the key (not a flag); a NaN, which is no JSON, is named with its key.
#[test]
fn sigmf_implausible_rate_or_centre_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let rate = |r: &str| format!(r#", "core:sample_rate": {r}"#);
    let freq = |f: &str| format!(r#", "core:frequency": {f}"#);
    let cases = [
        (
            "tiny",
            doc(&rate("1e-300"), &freq("915e6")),
            "core:sample_rate: 1e-300 S/s is implausible (below 1 kS/s)",
        ),
        (
            "huge",
            doc(&rate("1e308"), &freq("915e6")),
            "core:sample_rate: 1e308 S/s is implausible (above 100 GS/s)",
        ),
        (
            "negative",
            doc(&rate("2e6"), &freq("-915e6")),
            "capture segment 0 has core:frequency: -915000000.0 is not a frequency in Hz > 0",
        ),
        (
            "far",
            doc(&rate("2e6"), &freq("1.7e308")),
            "capture segment 0 has core:frequency: 1.7e308 Hz is implausible (above 300 GHz)",
        ),
        (
            "text",
            doc(&rate("2e6"), &freq(r#""915M""#)),
            r#"core:frequency: "915M" is not a frequency in Hz > 0"#,
        ),
        (
            "nan",
            doc(&rate("NaN"), &freq("915e6")),
            r#"the value of "core:sample_rate" is `NaN"#,
        ),
    ];
    for (name, text, want) in cases {
        meta(d, name, &text);
        let o = rxnode(d, &["analyze", &format!("{name}.sigmf-meta")]);
        expect_exit(&o, 2, name);
        let s = said(&o);
        assert!(s.contains(want), "{name}: want {want}: {s}");
        assert!(
            !s.contains("--sample-rate-hz") && !s.contains("--frequency-hz"),
            "{name}: {s}"
        );
    }
}

/// A 16-bit stereo WAV with `rate` in its fmt chunk: a sawtooth over white
/// noise (a seeded generator), so the spectrum has a floor to read.
fn wav(path: &Path, rate: u32) {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let pcm: Vec<u8> = (0..40_000u32)
        .flat_map(|k| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let noise = (seed % 2001) as i16 - 1000;
            ((k % 200) as i16 * 100 + noise).to_le_bytes()
        })
        .collect();
    let mut f = b"RIFF".to_vec();
    f.extend((36 + pcm.len() as u32).to_le_bytes());
    f.extend(b"WAVEfmt ");
    f.extend(16u32.to_le_bytes());
    f.extend(1u16.to_le_bytes());
    f.extend(2u16.to_le_bytes());
    f.extend(rate.to_le_bytes());
    f.extend((rate.wrapping_mul(4)).to_le_bytes());
    f.extend(4u16.to_le_bytes());
    f.extend(16u16.to_le_bytes());
    f.extend(b"data");
    f.extend((pcm.len() as u32).to_le_bytes());
    f.extend(pcm);
    std::fs::write(path, f).unwrap_or_else(|e| panic!("{e}"));
}

/// A WAV header's rate of 0 or of 500 S/s is refused naming the header, never a
/// flag that was not given; a plausible one is read.
#[test]
fn wav_header_rate_refused_naming_the_header_not_a_flag() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    for (rate, want) in [
        (0, "rate0.wav: the WAV header's sample rate (fmt chunk): 0 S/s is not a rate > 0"),
        (500, "rate500.wav: the WAV header's sample rate (fmt chunk): 500 S/s is implausible (below 1 kS/s)"),
    ] {
        let name = format!("rate{rate}.wav");
        wav(&d.join(&name), rate);
        let o = rxnode(d, &["analyze", &name]);
        expect_exit(&o, 2, &name);
        let s = said(&o);
        assert!(s.contains(want) && !s.contains("--sample-rate-hz"), "{name}: {s}");
    }
    wav(&d.join("ok.wav"), 48_000);
    let o = rxnode(d, &["analyze", "ok.wav"]);
    expect_exit(&o, 0, "ok.wav");
    assert_eq!(
        json(&o)["sample_rate_hz"].as_f64(),
        Some(48_000.0),
        "{}",
        show(&o)
    );
}

/// A pipe carrying samples, a FIFO and `/dev/zero` are refused as what they are (not
/// a regular file: a pipe or FIFO / a character device), never called empty and never
/// read without end.
#[cfg(unix)]
#[test]
fn streams_are_refused_as_not_a_regular_file() {
    use std::io::Write as _;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let d = dir.path();
    let mut child = crate::util::rxnode_cmd()
        .current_dir(d)
        .args(["--json", "analyze", "/dev/stdin", "-F", "cf32", "-r", "2M"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut i) = child.stdin.take() {
        // The reader may refuse before reading: a closed pipe here is expected.
        let _ = i.write_all(&[0u8; 1 << 16]);
    }
    let o = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    expect_exit(&o, 2, "a pipe");
    let s = said(&o);
    assert!(
        s.contains("/dev/stdin: not a regular file: a pipe or FIFO") && !s.contains("empty"),
        "{s}"
    );
    let fifo = d.join("f.cf32");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ok.success());
    // Opened read-write, the FIFO has a writer, so the reader's open never blocks.
    let _writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap_or_else(|e| panic!("{e}"));
    let o = rxnode(d, &["analyze", "f.cf32", "-r", "2M"]);
    expect_exit(&o, 2, "a FIFO");
    assert!(
        show(&o).contains("f.cf32: not a regular file: a pipe or FIFO"),
        "{}",
        show(&o)
    );
    let o = rxnode(d, &["analyze", "/dev/zero", "-F", "cs8", "-r", "2M"]);
    expect_exit(&o, 2, "/dev/zero");
    assert!(
        show(&o).contains("/dev/zero: not a regular file: a character device"),
        "{}",
        show(&o)
    );
}
