//! `rxnode analyze` of short recordings of pure Gaussian noise: one Welch average.
use super::*;

/// `n` samples of complex Gaussian noise, 0.001 rms per component (xorshift seeded by
/// `seed`, Box-Muller), as cf32 bytes.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut uni = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let x: Vec<(f32, f32)> = (0..n)
        .map(|_| {
            let r = (-2.0 * uni().ln()).sqrt() * 0.001;
            let t = 2.0 * PI * uni();
            ((r * t.cos()) as f32, (r * t.sin()) as f32)
        })
        .collect();
    cf32(&x)
}

/// 2048 samples (one average at FFT 2048) of noise, ten recordings: no peak in any
/// (the threshold is the level noise reaches with one average, 10.9 dB, said in the
/// JSON and the text), and the floor is the noise's mean power per bin
/// (σ²·1.5/2048 = −88.35 dBFS for Hann) within 0.25 dB on average — the median alone
/// read 1.6 dB (ln 2) low.
#[test]
fn one_average_of_noise_lists_no_peak_and_reads_the_mean_floor() {
    let dir = tempfile::tempdir().unwrap();
    let truth = 10.0 * (2e-6 * 1.5 / 2048.0f64).log10();
    let mut floors = Vec::new();
    for seed in 1..=10u64 {
        let f = dir.path().join(format!("noise{seed}.cf32"));
        std::fs::write(&f, noise(2048, seed)).unwrap();
        let (code, out, err) = run(&["--json", "analyze", f.to_str().unwrap(), "--rate", "2e6"]);
        assert_eq!(code, 0, "{out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["averages"], 1, "{v}");
        assert_eq!(
            v["peaks"].as_array().map(Vec::len),
            Some(0),
            "seed {seed}: {v}"
        );
        let t = v["peak_threshold_db"].as_f64().expect("a threshold");
        assert!((10.5..11.5).contains(&t), "{t}");
        assert_eq!(v["min_snr_db"], 6.0);
        floors.push(v["noise_floor_db"].as_f64().unwrap());
    }
    let mean = floors.iter().sum::<f64>() / floors.len() as f64;
    assert!((mean - truth).abs() < 0.25, "{floors:?} vs {truth}");
    let f = dir.path().join("noise1.cf32");
    let (_, text, _) = run(&["analyze", f.to_str().unwrap(), "--rate", "2e6"]);
    assert!(
        text.contains("threshold     peaks stand 10.")
            && text.contains("with 1 average(s) noise alone reaches"),
        "{text}"
    );
    assert!(
        text.contains("peaks         none (the centre ±1.465 kHz is not searched)"),
        "{text}"
    );
}
