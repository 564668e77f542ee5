//! `rxnode analyze` of samples without power: no floor, no peak, no plot.
use super::*;

/// Samples that are all zero (a −60 dBFS noise recorded as CS8 or SigMF ci8
/// quantises to nothing; a file of zeros) have no level: the floor and the mean
/// power are `null` with the reason, no peak, no plot, exit 1 — never −300 dBFS.
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
        assert!(r.averages > 0, "{r:?}");
        assert_eq!((r.noise_floor_db, r.mean_power_dbfs), (None, None), "{r:?}");
        assert_eq!(
            r.noise_floor_absent.as_deref(),
            Some("no signal: every sample is zero")
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
            text.contains("noise floor   n/a (no signal: every sample is zero)"),
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
            text.contains("CLKIN         FAIL: clkin: reference tone too weak: no signal"),
            "{text}"
        );
        for bad in ["-300", "inf", "NaN"] {
            assert!(!text.contains(bad), "{bad} in:\n{text}");
        }
    }
}
