//! The native CS16 → SigMF ci16_le recording path, and transport limits.
use super::*;

// ------------------------------------------------------------ 5. native recording

/// `capture --record … --record-format ci16` writes the driver's CS16
/// as SigMF `ci16_le` (exactly 4 bytes a sample); the sigmf Python package validates
/// it and numpy finds the tone where the radio put it.
#[test]
fn ci16_recording_validates_with_sigmf_and_numpy_finds_the_tone() {
    let dir = tempfile::tempdir().unwrap();
    let meta = dir.path().join("native.sigmf-meta");
    let mut c = crate::util::rxnode_bin();
    c.arg("--sim").env_remove("RUST_LOG");
    let out = capture(
        &mut c,
        "driver=rxsim,serial=ci16,tone_hz=100.25e6,tone_dbfs=-12",
        &[
            "--sample-rate-hz",
            "2e6",
            "--duration-s",
            "1",
            "--record",
            meta.to_str().unwrap(),
            "--record-format",
            "ci16",
        ],
    );
    expect_exit!(out, 0);
    let s = json_of(&out);
    assert_eq!(s["status"], "PASS", "{s:#}");
    let data = dir.path().join("native.sigmf-data");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 4 * 2_000_000);
    let files = s["iq_files"].as_array().unwrap();
    assert_eq!(files[0]["bytes"], 4 * 2_000_000);
    let script = r#"
import sys
import numpy as np
import sigmf
from sigmf import sigmffile
f = sigmffile.fromfile(sys.argv[1])
f.validate()
g = f.get_global_info()
assert g["core:datatype"] == "ci16_le", g
x = f.read_samples()
n = len(x)
fs = g["core:sample_rate"]
spec = np.abs(np.fft.fftshift(np.fft.fft(x[:1 << 18] * np.hanning(1 << 18))))
freqs = np.fft.fftshift(np.fft.fftfreq(1 << 18, 1.0 / fs))
peak = float(freqs[int(np.argmax(spec))])
rms = float(np.sqrt(np.mean(np.abs(x) ** 2)))
print(f"{n} {peak} {rms} {sigmf.__version__}")
"#;
    let py = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&meta)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        py.status.success(),
        "the sigmf check failed (pip install sigmf numpy; scripts/setup.sh does it): {}",
        show(&py)
    );
    let o = text(&py.stdout);
    let v: Vec<&str> = o.split_whitespace().collect();
    assert_eq!(v[0], "2000000", "{o}");
    let peak: f64 = v[1].parse().unwrap();
    assert!(
        (peak - 250e3).abs() < 2e6 / (1 << 18) as f64 * 2.0,
        "tone at {peak} Hz: {o}"
    );
    // -12 dBFS tone (+ -60 dBFS noise): amplitude 0.251 of full scale.
    let rms: f64 = v[2].parse().unwrap();
    assert!((rms - 0.2512).abs() < 0.01, "level {rms}: {o}");
}

/// A ci16 recording on a WAV or cf32 file name is refused before any radio opens.
#[test]
fn ci16_recording_refuses_file_types_that_cannot_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.wav", "x.cf32"] {
        let p = dir.path().join(name);
        let mut c = crate::util::rxnode_bin();
        c.arg("--sim").env_remove("RUST_LOG");
        let out = capture(
            &mut c,
            "driver=rxsim",
            &[
                "--sample-rate-hz",
                "2e6",
                "--duration-s",
                "1",
                "--record",
                p.to_str().unwrap(),
                "--record-format",
                "ci16",
            ],
        );
        expect_exit!(out, 2, "{name}");
        assert!(
            text(&out.stderr).contains("--record-format ci16"),
            "{}",
            show(&out)
        );
        assert!(!p.exists());
    }
    let mut c = crate::util::rxnode_bin();
    c.arg("--sim").env_remove("RUST_LOG");
    let out = capture(
        &mut c,
        "driver=rxsim",
        &[
            "--sample-rate-hz",
            "2e6",
            "--duration-s",
            "1",
            "--record",
            dir.path().join("y.sigmf-data").to_str().unwrap(),
            "--record-format",
            "cu8",
        ],
    );
    expect_exit!(out, 2);
    assert!(text(&out.stderr).contains("cu8"), "{}", show(&out));
}

/// p2 item 3: `remote:mtu=9000` (beyond what SoapyRemote 0.5.2 can send) fails the
/// capture; the error used to be a bare "StreamError: " (the driver's message is
/// empty). It must name the device args, the operation and the code.
#[test]
fn an_oversized_remote_mtu_fails_naming_args_operation_and_code() {
    let srv = Server::start();
    let device = srv.device("remote:mtu=9000");
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = client();
    cmd.current_dir(dir.path());
    let out = capture(
        &mut cmd,
        &device,
        &["--sample-rate-hz", "2e6", "--duration-s", "1"],
    );
    expect_exit!(out, 1);
    let j = json_of(&out);
    assert_eq!(j["status"], "FAIL", "{j:#}");
    let err = j["errors"][0].as_str().unwrap_or_default();
    assert!(err.contains("remote:mtu=9000"), "{j:#}");
    assert!(err.contains("read rx stream"), "{j:#}");
    assert!(err.contains("StreamError (SoapySDR code -2)"), "{j:#}");
    assert!(!err.trim_end().ends_with(':'), "{j:#}");
}
