//! `rxnode analyze` of samples without power: no floor, no peak, no plot.
use super::*;

/// Samples that are all zero (a −60 dBFS noise recorded as CS8 or SigMF ci8
/// quantises to nothing; a file of zeros) have no level: the floor and the mean
/// power are `null` with the reason, no peak, no plot, exit 1 — never −300 dBFS.
/// Being one run of digital silence, nothing of them is analysed and the CLKIN
/// check is not measured.
#[test]
fn all_zero_samples_have_no_floor_and_fail() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 16;
    // A −60 dBFS signal: |I|, |Q| stay far below half an 8-bit step.
    let quiet: Vec<(f32, f32)> = (0..n)
        .map(|i| {
            let a = 1e-3 * ((i as f32) * 0.7).sin() / 2f32.sqrt();
            (a, -a)
        })
        .collect();
    assert!(
        cs8(&quiet).iter().all(|b| *b == 0),
        "the noise quantises to zeros"
    );
    let zero_cf32 = dir.path().join("zero.cf32");
    std::fs::write(&zero_cf32, vec![0u8; 8 * n]).unwrap();
    let low_cs8 = dir.path().join("low.cs8");
    std::fs::write(&low_cs8, cs8(&quiet)).unwrap();
    let low_sigmf = sigmf(dir.path(), "low", "ci8", &cs8(&quiet));
    for (file, extra) in [
        (&zero_cf32, &["--rate", "2e6"][..]),
        (&low_cs8, &["--rate", "2e6"][..]),
        (&low_sigmf, &[][..]),
    ] {
        let png = dir.path().join("p.png");
        let mut args = extra.to_vec();
        args.extend(["--plot", png.to_str().unwrap()]);
        let (code, r) = analyze_json(file, &args);
        assert_eq!(code, 1, "{file:?}: {r:?}");
        assert_eq!((r.samples, r.averages), (0, 0), "{r:?}");
        assert_eq!((r.noise_floor_db, r.mean_power_dbfs), (None, None), "{r:?}");
        assert_eq!(
            r.noise_floor_absent.as_deref(),
            Some(
                "no signal: every sample is zero; digital silence, 65536 samples skipped, \
                 none analysed"
            )
        );
        assert!(r.peaks.is_empty(), "{:?}", r.peaks);
        assert!(!png.exists(), "{file:?}: a plot of nothing was written");
        let (code, text, err) = run(&[
            "analyze",
            file.to_str().unwrap(),
            "--plot",
            png.to_str().unwrap(),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .collect::<Vec<_>>());
        assert_eq!(code, 1, "{text}{err}");
        assert!(
            text.contains("noise floor   n/a (no signal: every sample is zero; digital silence"),
            "{text}"
        );
        assert!(text.contains("mean power    n/a"), "{text}");
        assert!(
            err.contains("no plot written") && err.contains("no PSD bin has power"),
            "{err}"
        );
        for bad in ["-300", "inf", "NaN"] {
            assert!(!text.contains(bad), "{bad} in:\n{text}");
        }
        // With a reference tone: no SNR quoted, FAIL by name.
        let (code, text, _) = run(&[
            "analyze",
            file.to_str().unwrap(),
            "--center-hz",
            "100e6",
            "--clkin-tone-hz",
            "100.1e6",
        ]
        .into_iter()
        .chain(extra.iter().copied().filter(|_| file != &low_sigmf))
        .collect::<Vec<_>>());
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains(
                "CLKIN         NOT MEASURED: not measured: every sample is digital silence"
            ),
            "{text}"
        );
        for bad in ["-300", "inf", "NaN"] {
            assert!(!text.contains(bad), "{bad} in:\n{text}");
        }
    }
}

/// `n` samples of a tone of amplitude `amp` at `offset_hz` from the centre, over
/// complex Gaussian noise of total power `noise_power` (0: none, as numpy's
/// `np.exp(2j*np.pi*f*t).astype(np.complex64)` makes).
fn tone(n: usize, offset_hz: f64, amp: f64, noise_power: f64) -> Vec<(f32, f32)> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut uni = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let ph = 2.0 * PI * (offset_hz * i as f64 / FS).fract();
            let r = (-noise_power * uni().ln()).sqrt();
            let t = 2.0 * PI * uni();
            (
                (amp * ph.cos() + r * t.cos()) as f32,
                (amp * ph.sin() + r * t.sin()) as f32,
            )
        })
        .collect()
}

const NO_NOISE: &str = "the samples carry no noise above the FFT's rounding";

/// A constant input (a converter stuck at one code, CF32 or CS16) has power only at
/// DC: the rest of its spectrum is the FFT's rounding, which is no level — no floor
/// with the reason, no invented peak, exit 1 (it was a −190 dBFS floor and a "peak"
/// 22.6 dB above it).
#[test]
fn constant_samples_have_no_floor_and_no_rounding_peaks() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 18;
    let c = vec![(0.314_159_2f32, -0.271_828f32); n];
    let cf = dir.path().join("const.cf32");
    std::fs::write(&cf, cf32(&c)).unwrap();
    let cs = dir.path().join("const.cs16");
    std::fs::write(&cs, cs16(&c)).unwrap();
    for (file, format) in [(&cf, "cf32"), (&cs, "cs16")] {
        let args = ["--format", format, "--rate", "1e6"];
        let (code, r) = analyze_json(file, &args);
        assert_eq!(code, 1, "{file:?}: {r:?}");
        assert_eq!(r.noise_floor_db, None, "{r:?}");
        assert_eq!(r.noise_floor_absent.as_deref(), Some(NO_NOISE));
        let mean = r.mean_power_dbfs.expect("the constant has power");
        let want = 10.0 * (0.314_159_2f64.powi(2) + 0.271_828f64.powi(2)).log10();
        assert!((mean - want).abs() < 0.01, "{mean} vs {want}");
        assert!(r.peaks.is_empty(), "{format}: {:?}", r.peaks);
        let mut a = vec!["analyze", file.to_str().unwrap()];
        a.extend(args);
        let (code, text, err) = run(&a);
        assert_eq!(code, 1, "{text}{err}");
        assert!(
            text.contains(&format!("noise floor   n/a ({NO_NOISE})")),
            "{text}"
        );
        assert!(text.contains("peaks         none"), "{text}");
        for bad in ["-300", "inf", "NaN", "dBFS/bin"] {
            assert!(!text.contains(bad), "{bad} in:\n{text}");
        }
    }
}

/// A noiseless tone still has its peak, where and as loud as it is, but no floor
/// and so no SNR (it was an "SNR" of ~150 dB over the rounding): `null` in JSON,
/// `SNR n/a (no noise floor)` in text, the floor's reason said, exit 0 (the file holds
/// nothing more to measure; a constant, without a peak, still exits 1). The same tone
/// over noise 60 dB down has its floor and SNR as expected.
#[test]
fn a_noiseless_tone_has_its_peak_without_a_floor_or_snr() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 17;
    // 250 kHz is bin 256 of 2048 at 2 MS/s: the tone's level reads exactly.
    let clean = dir.path().join("clean.cf32");
    std::fs::write(&clean, cf32(&tone(n, 250e3, 0.5, 0.0))).unwrap();
    let args = ["--format", "cf32", "--rate", "2e6", "--center-hz", "100e6"];
    let (code, r) = analyze_json(&clean, &args);
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(r.noise_floor_db, None, "{r:?}");
    assert_eq!(r.noise_floor_absent.as_deref(), Some(NO_NOISE));
    assert_eq!(r.peaks.len(), 1, "{:?}", r.peaks);
    let p = &r.peaks[0];
    assert!((p.frequency_hz - (FC + 250e3)).abs() < 1.0, "{p:?}");
    assert!((p.power_db + 6.02).abs() < 0.05, "{p:?}");
    assert_eq!(p.snr_db, None);
    let mut a = vec!["analyze", clean.to_str().unwrap()];
    a.extend(args);
    let (code, text, err) = run(&a);
    assert_eq!(code, 0, "{text}{err}");
    assert!(
        text.contains(&format!("noise floor   n/a ({NO_NOISE})")),
        "{text}"
    );
    assert!(
        text.contains("peaks         100.250000 MHz     -6.0 dBFS  SNR n/a (no noise floor)"),
        "{text}"
    );
    for bad in ["inf", "NaN", "dBFS/bin"] {
        assert!(!text.contains(bad), "{bad} in:\n{text}");
    }
    // The JSON says `null`, not a number.
    let (_, out, _) = run(&[&["--json"][..], &a].concat());
    assert!(out.contains(r#""snr_db": null"#), "{out}");

    // Noise 60 dB below the tone: 0.25e-6 in all, per bin ·1.5/2048 → −97.37 dBFS.
    let noisy = dir.path().join("noisy.cf32");
    std::fs::write(&noisy, cf32(&tone(n, 250e3, 0.5, 0.25e-6))).unwrap();
    let (code, r) = analyze_json(&noisy, &args);
    assert_eq!(code, 0, "{r:?}");
    let floor = r.noise_floor_db.expect("a floor");
    let want = 10.0 * (0.25e-6f64 * 1.5 / 2048.0).log10();
    assert!((floor - want).abs() < 0.5, "{floor} vs {want}");
    assert_eq!(r.noise_floor_absent, None);
    assert_eq!(r.peaks.len(), 1, "{:?}", r.peaks);
    let snr = r.peaks[0].snr_db.expect("an SNR");
    assert!((snr - (-6.02 - want)).abs() < 0.5, "{snr}");
}
