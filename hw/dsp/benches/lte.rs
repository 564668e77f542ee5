//! The LTE frequency-calibration estimator: accuracy over seeds and speed
//! (run: `cargo bench -p rxnode-dsp --bench lte`).
//!
//! A synthetic 1.4 MHz FDD cell (`LteScene`) at −6 dB in its 1.08 MHz, a radio at
//! +37 ppm, 2 s of samples: the error of each estimate (worst and median over the
//! seeds), whether the PCI came out right, and the estimator's own time (feeding and
//! finishing; generating the samples is not counted), at 1.92 MS/s for every seed and
//! at 7.68 and 61.44 MS/s for one. Options (after `--`): `--seeds N` (default 10).
use num_complex::Complex;
use rxnode_dsp::{freq_cal_estimator, FreqCalConfig, FreqCalMethod, LteCell, LteScene};
use std::time::{Duration, Instant};

/// CPU seconds this thread has run (Linux `/proc/thread-self/schedstat`, in ns), if
/// readable.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

struct Run {
    error_ppm: Option<f64>,
    uncertainty_ppm: f64,
    pci_ok: bool,
    wall: Duration,
    cpu: f64,
}

fn run(carrier: f64, rate: f64, pci: u16, seed: u64, seconds: f64) -> Run {
    let mut scene = LteScene::new(
        LteCell::new(pci, carrier, rate)
            .ppm(37.0)
            .snr_db(Some(-6.0))
            .seed(seed),
    );
    let mut est = freq_cal_estimator(
        FreqCalMethod::Lte,
        FreqCalConfig::new(carrier, carrier, rate),
    )
    .expect("config");
    let mut block = vec![Complex::new(0.0f32, 0.0); 1 << 16];
    let mut left = (seconds * rate) as usize;
    let mut wall = Duration::ZERO;
    let mut cpu = 0.0;
    while left > 0 {
        let k = left.min(block.len());
        scene.fill(&mut block[..k]);
        let (t, c) = (Instant::now(), cpu_seconds());
        est.feed(&block[..k]);
        wall += t.elapsed();
        cpu += cpu_seconds().zip(c).map_or(0.0, |(b, a)| b - a);
        left -= k;
    }
    let (t, c) = (Instant::now(), cpu_seconds());
    let r = est.finish();
    wall += t.elapsed();
    cpu += cpu_seconds().zip(c).map_or(0.0, |(b, a)| b - a);
    match r {
        Ok(e) => Run {
            error_ppm: Some(e.ppm - 37.0),
            uncertainty_ppm: e.uncertainty_ppm,
            pci_ok: e.cell.starts_with(&format!("PCI {pci} ")),
            wall,
            cpu,
        },
        Err(e) => {
            println!("  seed {seed}: {e}");
            Run {
                error_ppm: None,
                uncertainty_ppm: f64::NAN,
                pci_ok: false,
                wall,
                cpu,
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seeds: u64 = args
        .iter()
        .position(|a| a == "--seeds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    println!("# LTE PSS/SSS estimator: -6 dB in 1.08 MHz, radio at +37 ppm, 2 s of samples, {seeds} seeds");
    for carrier in [806e6, 1842.5e6, 2680e6] {
        let runs: Vec<Run> = (1..=seeds)
            .map(|s| run(carrier, 1.92e6, (s * 37 % 504) as u16, s, 2.0))
            .collect();
        let errs: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.error_ppm.map(f64::abs))
            .collect();
        let worst = errs.iter().copied().fold(0.0f64, f64::max);
        let z = runs
            .iter()
            .filter_map(|r| r.error_ppm.map(|e| e.abs() / r.uncertainty_ppm))
            .fold(0.0f64, f64::max);
        let sigma_max = runs
            .iter()
            .map(|r| r.uncertainty_ppm)
            .fold(0.0f64, f64::max);
        let walls: Vec<f64> = runs.iter().map(|r| r.wall.as_secs_f64()).collect();
        let cpus: Vec<f64> = runs.iter().map(|r| r.cpu).collect();
        println!(
            "lte {:7.1} MHz @ 1.92 MS/s: {}/{seeds} estimates, |error| worst {:.2e} ppm median {:.2e} ppm, \
             1σ median {:.2e} largest {:.2e} ppm, largest |error|/1σ {:.1}, PCI right {}/{seeds}; estimator {:.3} s wall median ({:.1} MS/s), {:.3} CPU-s median",
            carrier / 1e6,
            errs.len(),
            worst,
            median(errs.clone()),
            median(runs.iter().map(|r| r.uncertainty_ppm).collect()),
            sigma_max,
            z,
            runs.iter().filter(|r| r.pci_ok).count(),
            median(walls.clone()),
            2.0 * 1.92 / median(walls),
            median(cpus)
        );
    }
    for rate in [7.68e6, 61.44e6] {
        let r = run(1842.5e6, rate, 301, 1, 2.0);
        println!(
            "lte  1842.5 MHz @ {:5.2} MS/s: error {} ppm, PCI right {}; estimator {:.3} s wall ({:.1} MS/s), {:.2} CPU-s ({:.1} MS/s per CPU-s)",
            rate / 1e6,
            r.error_ppm.map_or("none".into(), |e| format!("{e:+.2e}")),
            r.pci_ok,
            r.wall.as_secs_f64(),
            2.0 * rate / 1e6 / r.wall.as_secs_f64(),
            r.cpu,
            2.0 * rate / 1e6 / r.cpu
        );
    }
}
