//! `rxnode analyze` of recordings whose recorder filled lost samples with zeros:
//! the run of exact zeros is skipped, counted and reported by position and length,
//! in every format that has an exact zero, so the levels are of the recorded
//! samples only (docs/reliability.md#8-digital-silence-in-a-recording).
use super::*;

#[derive(Debug, Deserialize, PartialEq)]
struct Run {
    start: u64,
    samples: u64,
}

#[derive(Debug, Deserialize)]
struct Silence {
    min_run: Option<u64>,
    samples: u64,
    run_count: u64,
    runs: Vec<Run>,
}

#[derive(Debug, Deserialize)]
struct Silent {
    samples: u64,
    mean_power_dbfs: Option<f64>,
    noise_floor_db: Option<f64>,
    peaks: Vec<Peak>,
    silence: Silence,
}

fn silent_json(file: &Path, extra: &[&str]) -> (i32, Silent) {
    let mut args = vec!["--json", "analyze", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    let r: Silent = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, r)
}

/// Raw cf32, cs16, cs8 and cf64, WAV int16, int8 and float, SigMF ci16_le and cf32_le:
/// 20 % of the file zero-filled in its middle. The run is found at its place, the
/// mean power and the peak are the recorded signal's (not 1 dB low), and the human
/// text says so. cu8 has no exact zero: its zero bytes are analysed as they are.
#[test]
fn a_zero_filled_stretch_is_skipped_and_reported_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let n = 400_000usize;
    let (from, len) = (160_000usize, 80_000usize);
    let mut x = signal(n, 0.0, 0.1);
    x[from..from + len].fill((0.0, 0.0));
    let kept = x[..from].iter().chain(&x[from + len..]);
    let want = 10.0
        * (kept
            .map(|&(i, q)| f64::from(i).powi(2) + f64::from(q).powi(2))
            .sum::<f64>()
            / (n - len) as f64)
            .log10();
    let cf64: Vec<u8> = x
        .iter()
        .flat_map(|&(i, q)| [f64::from(i).to_le_bytes(), f64::from(q).to_le_bytes()].concat())
        .collect();
    let u8wav: Vec<u8> = cs8(&x).iter().map(|b| b.wrapping_add(128)).collect();
    let d = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let raw = ["--rate", "2e6", "--center-hz", "100e6"];
    let files = [
        (d("g.cf32", &cf32(&x)), &raw[..]),
        (d("g.cs16", &cs16(&x)), &raw[..]),
        (d("g.cs8", &cs8(&x)), &raw[..]),
        (d("g.cf64", &cf64), &raw[..]),
        (d("i16.wav", &wav(&cs16(&x), 2, 16, false, None)), &[][..]),
        (d("f32.wav", &wav(&cf32(&x), 2, 32, true, None)), &[][..]),
        (sigmf(dir.path(), "s16", "ci16_le", &cs16(&x)), &[][..]),
        (sigmf(dir.path(), "sf", "cf32_le", &cf32(&x)), &[][..]),
    ];
    for (file, extra) in &files {
        let (code, r) = silent_json(file, extra);
        assert_eq!(code, 0, "{file:?}: {r:?}");
        assert_eq!(r.silence.min_run, Some(1024), "{file:?}");
        assert_eq!(
            (r.silence.samples, r.silence.run_count),
            (len as u64, 1),
            "{file:?}"
        );
        assert_eq!(
            r.silence.runs,
            [Run {
                start: from as u64,
                samples: len as u64
            }],
            "{file:?}"
        );
        assert_eq!(r.samples, (n - len) as u64, "{file:?}");
        let mean = r.mean_power_dbfs.unwrap();
        // 8 bits quantise the −40 dBFS noise and interferer coarsely: 0.05 dB.
        assert!((mean - want).abs() < 0.05, "{file:?}: {mean} vs {want}");
        assert!(r.noise_floor_db.is_some(), "{file:?}");
        assert!(
            (r.peaks[0].power_db + 20.0).abs() < 0.5,
            "{file:?}: {:?}",
            r.peaks
        );
    }
    let (code, text, err) = run(&[
        "analyze",
        files[0].0.to_str().unwrap(),
        "-r",
        "2M",
        "-f",
        "100M",
    ]);
    assert_eq!(code, 0, "{text}{err}");
    for line in [
        "samples       320000 analysed of the file's 400000 at 2.000 MS/s (0.160 s of 0.200 s)",
        "silence       80000 samples (20.0 %) in 1 run of exact zeros (I and Q both 0, at least 1024 in a row): not analysed; every level, the floor and the peaks below are of the 320000 recorded samples only",
        "              samples 160000…239999 (80000 samples, 0.080000 s to 0.120000 s)",
    ] {
        assert!(text.contains(line), "{line}\nnot in:\n{text}");
    }
    // cu8: the recorder's zero bytes are the full-scale corner, no silence.
    let cu8: Vec<u8> = cs8(&x)
        .iter()
        .enumerate()
        .map(|(k, b)| {
            if (2 * from..2 * (from + len)).contains(&k) {
                0
            } else {
                b.wrapping_add(128)
            }
        })
        .collect();
    let (_, r) = silent_json(&d("g.cu8", &cu8), &raw);
    assert_eq!(r.silence.min_run, None);
    assert_eq!((r.silence.samples, r.samples), (0, n as u64));
    // An 8-bit WAV is read as cu8 (its zero half a code below 128): a recorder's fill
    // of 128s is a constant half a count above zero, analysed as it is.
    let (_, r) = silent_json(&d("i8.wav", &wav(&u8wav, 2, 8, false, None)), &[]);
    assert_eq!(r.silence.min_run, None);
    assert_eq!((r.silence.samples, r.samples), (0, n as u64));
}

/// A run one sample short of the rule is analysed as samples; one of 1024 is not.
#[test]
fn a_zero_run_counts_from_1024_samples() {
    let dir = tempfile::tempdir().unwrap();
    for (len, silent) in [(1023usize, 0u64), (1024, 1024)] {
        let mut x = signal(100_000, 0.0, 0.1);
        x[50_000..50_000 + len].fill((0.0, 0.0));
        let p = dir.path().join(format!("r{len}.cs16"));
        std::fs::write(&p, cs16(&x)).unwrap();
        let (_, r) = silent_json(&p, &["--rate", "2e6"]);
        assert_eq!(r.silence.samples, silent, "{len}");
        assert_eq!(r.samples, 100_000 - silent, "{len}");
    }
}
