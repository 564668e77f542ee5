//! The GSM FCCH estimator: its accuracy over seeds and its speed (run:
//! `cargo bench -p rxnode-dsp --bench freqcal [-- SEEDS] [--rate R] [--front-end-rate R]`, default 20 seeds).
//!
//! Accuracy: a BCCH carrier at 935.2 MHz, 0 dB SNR in its 200 kHz channel, the radio's
//! error drawn uniformly in ±60 ppm, no prior, 6 s at 1 MS/s, one seed per case;
//! prints the worst and median |error|, the largest stated uncertainty and the lowest
//! confidence. Speed: 6 s of that signal (generated beforehand) fed in 64 Ki-sample
//! blocks, as the capture engine hands them, then `finish()`: wall time and MS/s on one
//! thread, best of five.
//!
//! Behind the front end: the same accuracy cases at 8 MS/s (`-- --front-end-rate R`),
//! generated and fed block by block.
//!
//! Streaming at the radio's rate (default 61.44 MS/s; `-- --rate R` changes it): 2 s of
//! the GSM scene and 2 s of the LTE scene generated block by block (64 Ki samples, not
//! timed), each block fed to Welch (N = 2048, 50 %), the CLKIN estimator (a ±10 ppm window
//! 1 MHz off centre), the GSM estimator (behind its decimating front end) and the LTE
//! estimator: each one's MS/s on one thread (wall and per CPU-s), all four together
//! (one over the sum of their costs per sample), and the estimators' peak heap (a counting
//! allocator; the generated block is not counted).
use num_complex::Complex;
use rxnode_dsp::{
    freq_cal_estimator, ClkinConfig, ClkinEstimator, FcchEstimator, FreqCalConfig,
    FreqCalEstimator, FreqCalMethod, GsmScene, LteCell, LteScene, Welch, WelchConfig,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes held and their high-water mark.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters
// only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            let now = HELD.fetch_add(new, Ordering::Relaxed) + new;
            PEAK.fetch_max(now, Ordering::Relaxed);
            HELD.fetch_sub(l.size(), Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// CPU seconds this thread has run (Linux `/proc/thread-self/schedstat`, in ns), if
/// readable.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Time spent in one consumer: wall and CPU.
#[derive(Default, Clone, Copy)]
struct Cost {
    wall: Duration,
    cpu: f64,
}

impl Cost {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (t, c) = (Instant::now(), cpu_seconds());
        let r = f();
        self.wall += t.elapsed();
        self.cpu += cpu_seconds().zip(c).map_or(0.0, |(b, a)| b - a);
        r
    }
    fn line(&self, name: &str, samples: f64) -> String {
        format!(
            "{name:<28} {:7.1} MS/s wall, {:7.1} MS/s per CPU-s ({:.3} s wall, {:.2} CPU-s)",
            samples / self.wall.as_secs_f64() / 1e6,
            samples / self.cpu.max(0.01) / 1e6,
            self.wall.as_secs_f64(),
            self.cpu
        )
    }
}

/// Welch, CLKIN, GSM and LTE on one `rate` stream each, as the capture engine feeds them.
fn streaming(rate: f64) {
    let seconds = 2.0;
    let n = (seconds * rate) as usize;
    let (gsm_carrier, lte_carrier) = (935.2e6, 1842.5e6);
    let mut block = vec![Complex::new(0.0f32, 0.0); 1 << 16];
    let held0 = HELD.load(Ordering::Relaxed);
    PEAK.store(held0, Ordering::Relaxed);
    let mut welch = Welch::new(WelchConfig::new(2048, rate)).expect("welch");
    let mut clkin =
        ClkinEstimator::new(ClkinConfig::new(gsm_carrier + 1e6, gsm_carrier, rate, 5.0))
            .expect("clkin");
    let mut gsm =
        FcchEstimator::new(FreqCalConfig::new(gsm_carrier, gsm_carrier, rate)).expect("gsm config");
    let mut lte = freq_cal_estimator(
        FreqCalMethod::Lte,
        FreqCalConfig::new(lte_carrier, lte_carrier, rate),
    )
    .expect("lte config");
    let (mut cw, mut cc, mut cg, mut cl) = Default::default();
    let (gsm_ppm, lte_ppm) = (23.0, 37.0);
    let mut scene = GsmScene::new(gsm_carrier, gsm_carrier, rate, gsm_ppm, 0.0, 61);
    let mut left = n;
    while left > 0 {
        let k = left.min(block.len());
        scene.fill(&mut block[..k]);
        Cost::time(&mut cw, || welch.feed(&block[..k]));
        Cost::time(&mut cc, || clkin.feed(&block[..k]));
        Cost::time(&mut cg, || gsm.feed(&block[..k]));
        left -= k;
    }
    let mut scene = LteScene::new(
        LteCell::new(301, lte_carrier, rate)
            .ppm(lte_ppm)
            .snr_db(Some(-6.0))
            .seed(1),
    );
    let mut left = n;
    while left > 0 {
        let k = left.min(block.len());
        scene.fill(&mut block[..k]);
        Cost::time(&mut cl, || lte.feed(&block[..k]));
        left -= k;
    }
    let g = Cost::time(&mut cg, || gsm.finish());
    let l = Cost::time(&mut cl, || lte.finish());
    let band = Cost::time(&mut cw, || welch.finish());
    let _ = Cost::time(&mut cc, || clkin.finish(&band));
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(held0);
    let samples = n as f64;
    println!(
        "# streaming at {:.2} MS/s: {seconds} s of each scene in 64 Ki blocks, one thread",
        rate / 1e6
    );
    println!("{}", cw.line("Welch 2048 50 %", samples));
    println!("{}", cc.line("CLKIN (±10 ppm window)", samples));
    println!(
        "{}  [detector at {:.4} MS/s]",
        cg.line("GSM FCCH (front end)", samples),
        gsm.detector_rate_hz() / 1e6
    );
    println!("{}", cl.line("LTE PSS/SSS", samples));
    let per = |c: &Cost| c.wall.as_secs_f64() / samples;
    let per_cpu = |c: &Cost| c.cpu / samples;
    let all = [cw, cc, cg, cl];
    println!(
        "all four on one thread: {:.1} MS/s wall, {:.1} MS/s per CPU-s (need {:.2})",
        1.0 / all.iter().map(per).sum::<f64>() / 1e6,
        1.0 / all.iter().map(per_cpu).sum::<f64>() / 1e6,
        rate / 1e6
    );
    println!(
        "peak heap of the four consumers (built, fed, finished): {:.1} MB",
        peak as f64 / 1e6
    );
    match g {
        Ok(e) => println!(
            "GSM at {:.2} MS/s: {:+.4} ppm (true {gsm_ppm:+}), |error| {:.4}, {} bursts used",
            rate / 1e6,
            e.ppm,
            (e.ppm - gsm_ppm).abs(),
            e.evidence.detections.iter().filter(|d| d.used).count()
        ),
        Err(e) => println!("GSM at {:.2} MS/s: NO ESTIMATE: {e}", rate / 1e6),
    }
    match l {
        Ok(e) => println!(
            "LTE at {:.2} MS/s: {:+.6} ppm (true {lte_ppm:+}), |error| {:.2e}, {}",
            rate / 1e6,
            e.ppm,
            (e.ppm - lte_ppm).abs(),
            e.cell
        ),
        Err(e) => println!("LTE at {:.2} MS/s: NO ESTIMATE: {e}", rate / 1e6),
    }
}

fn samples(scene: &mut GsmScene, n: usize) -> Vec<Complex<f32>> {
    let mut v = vec![Complex::default(); n];
    scene.fill(&mut v);
    v
}

/// The accuracy table behind the front end: the same cases (0 dB, ±60 ppm, 6 s) at
/// `rate`, generated and fed block by block.
fn front_end_accuracy(seeds: u64, rate: f64) {
    let carrier = 935.2e6;
    let mut pick = GsmScene::new(carrier, carrier, 1e6, 0.0, 0.0, 999);
    let mut errs = Vec::new();
    let (mut worst_u, mut min_conf) = (0.0f64, 1.0f64);
    let mut block = vec![Complex::default(); 1 << 16];
    for seed in 0..seeds {
        let mut u = [Complex::default(); 1];
        pick.fill(&mut u);
        let ppm = f64::from(u[0].re.atan2(u[0].im)) / std::f64::consts::PI * 60.0;
        let mut scene = GsmScene::new(carrier, carrier, rate, ppm, 0.0, seed + 1);
        let mut est =
            FcchEstimator::new(FreqCalConfig::new(carrier, carrier, rate)).expect("config");
        let mut left = (6.0 * rate) as usize;
        while left > 0 {
            let k = left.min(block.len());
            scene.fill(&mut block[..k]);
            est.feed(&block[..k]);
            left -= k;
        }
        match est.finish() {
            Ok(e) => {
                let err = (e.ppm - ppm).abs();
                println!(
                    "front end seed {seed:2}: true {ppm:+8.3} ppm, got {:+8.4} ± {:.4} (1σ), |error| {err:.4} ppm, confidence {:.2}",
                    e.ppm, e.uncertainty_ppm, e.confidence
                );
                errs.push(err);
                worst_u = worst_u.max(e.uncertainty_ppm);
                min_conf = min_conf.min(e.confidence);
            }
            Err(e) => {
                println!("front end seed {seed:2}: true {ppm:+8.3} ppm: NO ESTIMATE: {e}");
                errs.push(f64::INFINITY);
            }
        }
    }
    errs.sort_by(f64::total_cmp);
    println!(
        "accuracy over {seeds} seeds at {:.2} MS/s through the front end (0 dB SNR, ±60 ppm, 6 s): \
         worst |error| {:.4} ppm, median {:.4} ppm, largest stated 1σ {worst_u:.4} ppm, lowest confidence {min_conf:.2}",
        rate / 1e6,
        errs.last().copied().unwrap_or(f64::NAN),
        errs.get(errs.len() / 2).copied().unwrap_or(f64::NAN)
    );
}

fn run(x: &[Complex<f32>], carrier: f64) -> (Result<rxnode_dsp::FreqCalEstimate, String>, f64) {
    let t = Instant::now();
    let est = FcchEstimator::new(FreqCalConfig::new(carrier, carrier, 1e6));
    let r = est.map_err(|e| e.to_string()).and_then(|mut e| {
        for b in x.chunks(1 << 16) {
            e.feed(b);
        }
        e.finish().map_err(|e| e.to_string())
    });
    (r, t.elapsed().as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rate: f64 = args
        .iter()
        .position(|a| a == "--rate")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(61.44e6);
    // SEEDS: the first plain number that is not a flag's value.
    let seeds: u64 = (1..args.len())
        .filter(|&i| !args[i - 1].starts_with("--rate") && args[i - 1] != "--front-end-rate")
        .find_map(|i| args[i].parse().ok())
        .unwrap_or(20);
    let carrier = 935.2e6;
    let n = 6_000_000;
    let mut errs = Vec::new();
    let (mut worst_u, mut min_conf, mut times) = (0.0f64, 1.0f64, Vec::new());
    let mut pick = rxnode_dsp::GsmScene::new(carrier, carrier, 1e6, 0.0, 0.0, 999);
    for seed in 0..seeds {
        // The error, uniform in ±60 ppm, from the scene generator's own noise.
        let mut u = [Complex::default(); 1];
        pick.fill(&mut u);
        let ppm = f64::from(u[0].re.atan2(u[0].im)) / std::f64::consts::PI * 60.0;
        let mut scene = GsmScene::new(carrier, carrier, 1e6, ppm, 0.0, seed + 1);
        let x = samples(&mut scene, n);
        let (r, secs) = run(&x, carrier);
        times.push(secs);
        match r {
            Ok(e) => {
                let err = (e.ppm - ppm).abs();
                println!(
                    "seed {seed:2}: true {ppm:+8.3} ppm, got {:+8.4} ± {:.4} (1σ), |error| {err:.4} ppm, \
                     confidence {:.2}, {} bursts",
                    e.ppm,
                    e.uncertainty_ppm,
                    e.confidence,
                    e.evidence.detections.iter().filter(|d| d.used).count()
                );
                errs.push(err);
                worst_u = worst_u.max(e.uncertainty_ppm);
                min_conf = min_conf.min(e.confidence);
            }
            Err(e) => {
                println!("seed {seed:2}: true {ppm:+8.3} ppm: NO ESTIMATE: {e}");
                errs.push(f64::INFINITY);
            }
        }
    }
    errs.sort_by(f64::total_cmp);
    println!(
        "accuracy over {seeds} seeds (0 dB SNR, ±60 ppm, 6 s at 1 MS/s): worst |error| {:.4} ppm, \
         median {:.4} ppm, largest stated 1σ {worst_u:.4} ppm, lowest confidence {min_conf:.2}",
        errs.last().copied().unwrap_or(f64::NAN),
        errs[errs.len() / 2]
    );
    let mut scene = GsmScene::new(carrier, carrier, 1e6, 23.0, 0.0, 77);
    let x = samples(&mut scene, n);
    let best = (0..5)
        .map(|_| run(&x, carrier).1)
        .fold(f64::INFINITY, f64::min);
    println!(
        "speed: 6 s at 1 MS/s (6 M samples) in {:.3} s wall = {:.1} MS/s on one thread \
         ({:.1}× real time); per seed above median {:.3} s",
        best,
        n as f64 / best / 1e6,
        6.0 / best,
        {
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        }
    );
    let front: f64 = args
        .iter()
        .position(|a| a == "--front-end-rate")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(8e6);
    front_end_accuracy(seeds, front);
    streaming(rate);
}
