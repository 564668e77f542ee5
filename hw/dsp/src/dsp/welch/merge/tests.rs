//! Unit tests of `welch::merge`: a stream cut into blocks, the blocks dealt to
//! several estimators in turn with their carries, merged, against one estimator
//! fed the whole stream.
use super::super::{Welch, WelchConfig};
use super::SegmentCarry;
use num_complex::Complex;

/// A fixed pseudo-random sequence (an LCG), so every run tests the same input.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn unit(&mut self) -> f32 {
        self.next() as f32 / (1u64 << 31) as f32 - 0.5
    }
}

/// Two tones in noise, `len` samples.
fn signal(len: usize, rng: &mut Lcg) -> Vec<Complex<f32>> {
    (0..len)
        .map(|i| {
            let t = i as f32;
            Complex::from_polar(0.3, 0.71 * t)
                + Complex::from_polar(0.01, -2.03 * t)
                + Complex::new(rng.unit(), rng.unit()) * 0.02
        })
        .collect()
}

/// Block lengths that cover `len`: some shorter than a segment, some empty, some
/// long; `true` marks a gap (samples lost) before a block.
fn cuts(len: usize, n: usize, rng: &mut Lcg, gaps: bool) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let l = match rng.next() % 6 {
            0 => (rng.next() as usize) % n.max(2),
            1 => 0,
            2 => n - 1,
            _ => (rng.next() as usize) % (8 * n) + n,
        }
        .min(len - at);
        let gap = gaps && rng.next().is_multiple_of(9);
        out.push((at, l, gap));
        at += l;
    }
    out
}

/// The whole stream through one estimator, and the blocks dealt round-robin to
/// `k` estimators (each given its block's carry first), merged.
fn one_and_merged(cfg: &WelchConfig, engine: &str, k: usize, gaps: bool) -> (Welch, Welch) {
    let mut rng = Lcg(cfg.fft_size as u64 * 31 + k as u64);
    let x = signal(40 * cfg.fft_size + 123, &mut rng);
    let blocks = cuts(x.len(), cfg.fft_size, &mut rng, gaps);
    let make = || Welch::new_with_engine(cfg.clone(), engine).unwrap_or_else(|e| panic!("{e}"));
    let mut one = make();
    let mut parts: Vec<Welch> = (0..k).map(|_| make()).collect();
    let mut carry = SegmentCarry::new(cfg.fft_size, cfg.hop());
    for (i, &(at, l, gap)) in blocks.iter().enumerate() {
        let b = &x[at..at + l];
        if gap {
            one.break_stream();
            carry.restart();
        }
        one.feed(b);
        let w = &mut parts[i % k];
        w.resume(carry.carry());
        w.feed(b);
        carry.advance(b);
    }
    let mut merged = make();
    for p in &parts {
        merged.merge(p).unwrap_or_else(|e| panic!("{e}"));
    }
    (one, merged)
}

/// The engines this CPU runs at `n`: the portable one, and each SIMD kernel.
fn engines(n: usize) -> Vec<&'static str> {
    ["rustfft", "avx512", "avx2"]
        .into_iter()
        .filter(|e| Welch::new_with_engine(WelchConfig::new(n, 1e6), e).is_ok())
        .collect()
}

/// Blocks dealt to 2, 3 and 5 estimators and merged give the single estimator's
/// PSD (to 0.001 dB; only the order of the sums differs), its segment, sample and
/// clipped counts, mean power and peaks — at several sizes and overlaps, every
/// engine, blocks shorter than a segment, empty ones, and gaps.
#[test]
fn merged_estimates_are_the_single_estimate() {
    for n in [16, 64, 256, 2048] {
        for overlap in [0.0, 0.5, 0.75, 0.3] {
            for engine in engines(n) {
                for k in [2, 3, 5] {
                    for gaps in [false, true] {
                        let mut cfg = WelchConfig::new(n, 1e6);
                        cfg.overlap = overlap;
                        cfg.clip_level = 0.3;
                        let (one, merged) = one_and_merged(&cfg, engine, k, gaps);
                        let what = format!("n {n} overlap {overlap} {engine} k {k} gaps {gaps}");
                        let (a, b) = (one.finish(), merged.finish());
                        assert!(a.averages > 30, "{what}: {} segments", a.averages);
                        assert_eq!(a.averages, b.averages, "{what}");
                        assert_eq!(a.samples, b.samples, "{what}");
                        assert_eq!(a.clipped_fraction, b.clipped_fraction, "{what}");
                        assert!(
                            (a.mean_power_dbfs - b.mean_power_dbfs).abs() < 1e-9,
                            "{what}"
                        );
                        let worst = a
                            .psd_db
                            .iter()
                            .zip(&b.psd_db)
                            .map(|(p, q)| (p - q).abs())
                            .fold(0.0f32, f32::max);
                        assert!(worst < 1e-3, "{what}: {worst} dB apart");
                        let f = |s: &crate::Spectrum| -> Vec<f64> {
                            s.peaks.iter().map(|p| p.frequency_hz).collect()
                        };
                        assert_eq!(f(&a), f(&b), "{what}");
                    }
                }
            }
        }
    }
}

/// With one estimator given its own carry each time, the sums are added in the
/// same order as without: the PSD is the same bit for bit, so the carry holds
/// exactly the samples the segments need.
#[test]
fn one_estimator_resumed_with_its_carry_is_bit_identical() {
    for n in [16, 256, 2048] {
        for engine in engines(n) {
            let cfg = WelchConfig::new(n, 1e6);
            let (one, resumed) = one_and_merged(&cfg, engine, 1, true);
            let (a, b) = (one.finish(), resumed.finish());
            let bits = |s: &crate::Spectrum| -> Vec<u32> {
                s.psd_db.iter().map(|v| v.to_bits()).collect()
            };
            assert_eq!(bits(&a), bits(&b), "n {n} {engine}");
            assert_eq!(a.averages, b.averages);
        }
    }
}

/// Estimates of different settings are not added: the error names them.
#[test]
fn merge_refuses_different_settings() {
    let mut a = Welch::new(WelchConfig::new(256, 1e6)).unwrap_or_else(|e| panic!("{e}"));
    for other in [WelchConfig::new(512, 1e6), {
        let mut c = WelchConfig::new(256, 1e6);
        c.overlap = 0.75;
        c
    }] {
        let b = Welch::new(other).unwrap_or_else(|e| panic!("{e}"));
        let e = a.merge(&b).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("merge") && e.contains("different settings"),
            "{e}"
        );
    }
    assert_eq!(a.averages(), 0);
}

/// The carry is always shorter than a segment and is the stream's last samples.
#[test]
fn the_carry_is_the_last_samples_and_shorter_than_a_segment() {
    let mut rng = Lcg(7);
    for (n, hop) in [(16, 8), (16, 16), (64, 17), (2048, 1024), (2048, 1)] {
        let x: Vec<u32> = (0..50 * n as u32).collect();
        let mut c = SegmentCarry::new(n, hop);
        let mut at = 0;
        for (_, l, _) in cuts(x.len(), n, &mut rng, false) {
            c.advance(&x[at..at + l]);
            at += l;
            let t = c.carry();
            assert!(t.len() < n, "n {n} hop {hop}: {}", t.len());
            assert_eq!(t, &x[at - t.len()..at]);
            // The carry starts on a segment boundary.
            assert_eq!(t.first().map_or(0, |&v| v as usize % hop), 0);
        }
    }
}
