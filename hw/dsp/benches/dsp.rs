//! DSP benchmarks printing MS/s (run: `cargo bench -p rxnode-dsp --bench dsp`).
//!
//! Options (after `--`): `--file PATH` also times the analyze pipeline (reader + Welch
//! N=2048 50 %) on an existing cf32 file; `--seconds S` per case (default 1.5);
//! `--welch-table` prints only the Welch table that `scripts/bench-fftw.sh` sets beside
//! FFTW (every kernel, N = 256 … 65536, 50 %; `--sizes N,N,…` to choose) and exits;
//! `--welch-streamed MIB` prints only Welch N=2048 50 % on every kernel fed once per pass
//! from a buffer of MIB MiB in 64 Ki-sample blocks, timed by CPU time (what
//! `scripts/bench-membw.sh` sets beside the memory bandwidth) and exits.
use num_complex::Complex;
use rxnode_dsp::{
    compare_tracks, ClkinConfig, ClkinEstimator, IqFormat, IqReader, ToneTrackConfig, ToneTracker,
    Welch, WelchConfig,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn signal(n: usize) -> Vec<Complex<f32>> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    (0..n)
        .map(|i| {
            let ph = 2.0 * std::f64::consts::PI * (0.05 * i as f64).fract();
            Complex::new(
                0.1 * ph.cos() as f32 + 0.01 * rnd(),
                0.1 * ph.sin() as f32 + 0.01 * rnd(),
            )
        })
        .collect()
}

/// CPU seconds used by this process (Linux `/proc/self/stat`, 10 ms ticks), if readable.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Run `f` (which processes `samples` samples) repeatedly for at least `secs`.
/// Returns (best wall-clock MS/s, MS/s per CPU-second over all runs): on a loaded
/// machine the second is the single-core figure.
fn rate(secs: f64, samples: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm-up
    let mut best = 0.0f64;
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let mut runs = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let t = Instant::now();
        f();
        runs += 1;
        let r = samples as f64 / t.elapsed().as_secs_f64() / 1e6;
        best = best.max(r);
    }
    let per_cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) if b > a => (runs as f64 * samples as f64) / (b - a) / 1e6,
        _ => f64::NAN,
    };
    (best, per_cpu)
}

/// As [`rate`], but each run starts from a fresh value made by `setup`, which is not
/// timed: (best wall-clock MS/s, MS/s per CPU-second of the timed parts), and the best
/// set-up time in seconds.
fn rate_after_setup<T>(
    secs: f64,
    samples: usize,
    mut setup: impl FnMut() -> T,
    mut f: impl FnMut(&mut T),
) -> ((f64, f64), f64) {
    f(&mut setup()); // warm-up
    let (mut best, mut best_setup) = (0.0f64, f64::INFINITY);
    let (mut runs, mut cpu_timed) = (0u64, 0.0f64);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let t = Instant::now();
        let mut v = setup();
        best_setup = best_setup.min(t.elapsed().as_secs_f64());
        let (t, cpu0) = (Instant::now(), thread_cpu_ns());
        f(&mut v);
        let wall = t.elapsed().as_secs_f64();
        if let (Some(a), Some(b)) = (cpu0, thread_cpu_ns()) {
            cpu_timed += (b - a) as f64 / 1e9;
        }
        black_box(&v);
        runs += 1;
        best = best.max(samples as f64 / wall / 1e6);
    }
    let per_cpu = if cpu_timed > 0.0 {
        runs as f64 * samples as f64 / cpu_timed / 1e6
    } else {
        f64::NAN
    };
    ((best, per_cpu), best_setup)
}

/// The workload `scripts/bench-fftw/welch_fftw.c` runs on FFTW: a buffer of
/// max(64 Ki, 8N) samples of [`signal`] in cache, every whole segment at 50 % overlap per
/// pass, on each kernel that takes N on this CPU. Prints `rxnode ENGINE N MS/s` per case,
/// MS/s being the samples advanced (segments × hop) per second of the best pass.
fn welch_table(secs: f64, sizes: &[usize]) {
    for &n in sizes {
        let len = (8 * n).max(1 << 16);
        let x = signal(len);
        let hop = n / 2;
        let advanced = ((len - n) / hop + 1) * hop;
        for engine in ["avx512", "avx2", "rustfft"] {
            let mut cfg = WelchConfig::new(n, 2e6);
            cfg.overlap = 0.5;
            let Ok(mut w) = Welch::new_with_engine(cfg, engine) else {
                continue;
            };
            let (best, _) = rate(secs, advanced, || {
                w.reset();
                w.feed(&x);
                black_box(w.averages());
            });
            println!("rxnode {engine} {n} {best:.1}");
        }
    }
}

/// The last-level cache of CPU 0 in bytes, read from
/// `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}` (the highest level that holds
/// data), or `None` where that is unreadable.
fn last_level_cache_bytes() -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for entry in std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()? {
        let dir = entry.ok()?.path();
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let size = size.trim();
        let (digits, unit) = match size.strip_suffix('K') {
            Some(d) => (d, 1 << 10),
            None => match size.strip_suffix('M') {
                Some(d) => (d, 1 << 20),
                None => (size, 1),
            },
        };
        let Ok(n) = digits.parse::<usize>() else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, n * unit));
        }
    }
    best.map(|(_, bytes)| bytes)
}

/// CPU time of this thread in ns (Linux `/proc/thread-self/schedstat`), if readable.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Welch N=2048 50 % on each kernel over `mib` MiB of [`signal`], fed once per pass in
/// 64 Ki-sample blocks. Prints `welch-streamed ENGINE MIB MS/s GB/s clock` (the best pass;
/// GB/s of input read, 8 bytes per sample). A pass takes tens of ms, long enough to be
/// preempted on a loaded machine, so each pass is timed by this thread's CPU time
/// (`clock` = `cpu`; as `scripts/bench-membw/read_bw.c` does) where Linux gives it,
/// else by the wall clock (`wall`).
fn welch_streamed(secs: f64, mib: usize) {
    let len = mib * (1 << 20) / 8;
    let x = signal(len);
    let clock = if thread_cpu_ns().is_some() {
        "cpu"
    } else {
        "wall"
    };
    for engine in ["avx512", "avx2", "rustfft"] {
        let Ok(mut w) = Welch::new_with_engine(WelchConfig::new(2048, 2e6), engine) else {
            continue;
        };
        let mut pass = || {
            w.reset();
            for b in x.chunks(1 << 16) {
                w.feed(b);
            }
            black_box(w.averages());
        };
        pass();
        let start = Instant::now();
        let mut best = f64::MAX;
        let mut passes = 0;
        while passes < 3 || start.elapsed().as_secs_f64() < secs {
            let (t, c) = (Instant::now(), thread_cpu_ns());
            pass();
            let took = match (c, thread_cpu_ns()) {
                (Some(a), Some(b)) if b > a => (b - a) as f64 * 1e-9,
                _ => t.elapsed().as_secs_f64(),
            };
            best = best.min(took);
            passes += 1;
        }
        let ms = len as f64 / best / 1e6;
        println!(
            "welch-streamed {engine} {mib} {ms:.1} {:.2} {clock}",
            ms * 8.0 / 1e3
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let secs: f64 = opt("--seconds").and_then(|s| s.parse().ok()).unwrap_or(1.5);
    if args.iter().any(|a| a == "--welch-table") {
        let sizes: Vec<usize> = match opt("--sizes") {
            Some(list) => list.split(',').filter_map(|v| v.parse().ok()).collect(),
            None => (8..=16).map(|b| 1usize << b).collect(),
        };
        welch_table(secs, &sizes);
        return;
    }
    if let Some(mib) = opt("--welch-streamed").and_then(|v| v.parse().ok()) {
        welch_streamed(secs, mib);
        return;
    }
    let n = 1 << 22;
    let x = signal(n);
    // The reader and capture threads hand the DSP 64 Ki-sample blocks (512 KiB) that they
    // have just written: "in cache" feeds one such block over and over (the DSP core's
    // own speed); "streamed" feeds a buffer of 4× the last-level cache once per run, so it
    // comes from DRAM (adds the memory bandwidth).
    let block = 1 << 16;
    let hot = &x[..block];
    let reps = n / block;
    let llc = last_level_cache_bytes();
    let streamed_bytes = llc.map_or(128 << 20, |b| 4 * b);
    let big = signal(streamed_bytes.div_ceil(8).div_ceil(block) * block);
    println!("# rxnode-dsp DSP benchmark: best of repeated runs over {n} samples, one thread");
    let why = match llc {
        Some(b) => format!("4x the last-level cache of {} KiB", b >> 10),
        None => "the last-level cache is unreadable from /sys/devices/system/cpu/cpu0/cache, \
                 so 128 MiB is used"
            .to_string(),
    };
    println!(
        "# streamed: {} MiB ({} samples) fed once per run: {why}",
        (big.len() * 8) >> 20,
        big.len()
    );
    for fft in [1024usize, 2048, 8192] {
        for overlap in [0.0, 0.5] {
            let mut cfg = WelchConfig::new(fft, 2e6);
            cfg.overlap = overlap;
            let mut w = Welch::new(cfg).expect("welch");
            let cached = rate(secs, n, || {
                w.reset();
                for _ in 0..reps {
                    w.feed(hot);
                }
                black_box(w.averages());
            });
            let streamed = rate(secs, big.len(), || {
                w.reset();
                for b in big.chunks(block) {
                    w.feed(b);
                }
                black_box(w.averages());
            });
            println!(
                "welch  N={fft:<5} overlap={:>2}% [{}]  in cache {:7.1} MS/s  streamed {:7.1} MS/s wall ({:.1} per CPU-s)",
                (overlap * 100.0) as u32,
                w.engine(),
                cached.0,
                streamed.0,
                streamed.1
            );
        }
    }
    // Load-robust comparison on the block in cache: alternate our Welch N=2048 50 %,
    // the same estimator forced onto the AVX2 kernel (when the CPU has AVX2 but the
    // default is AVX-512), on the portable rustfft engine, and a plain rustfft loop (copy
    // segment, FFT in place, hop 1024: no window, no |X|², no statistics), best of each,
    // so all see the same machine state.
    {
        use rustfft::FftPlanner;
        let fft = FftPlanner::<f32>::new().plan_fft_forward(2048);
        let mut buf = vec![Complex::default(); 2048];
        let mut scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
        let cfg = WelchConfig::new(2048, 2e6);
        let mut w = Welch::new(cfg.clone()).expect("welch");
        let mut p = Welch::new_portable(cfg.clone()).expect("welch");
        // Forced AVX2 when the default is something else and the CPU runs it.
        let mut avx2 = Some(w.engine())
            .filter(|&e| e != "avx2")
            .and_then(|_| Welch::new_with_engine(cfg, "avx2").ok());
        let mut best = [f64::MAX; 4];
        let rounds = (secs * 20.0).max(5.0) as usize;
        for _ in 0..rounds {
            let engines = [Some(&mut w), Some(&mut p), avx2.as_mut()];
            for (k, e) in engines.into_iter().enumerate() {
                let Some(e) = e else { continue };
                let t = Instant::now();
                e.reset();
                for _ in 0..reps {
                    e.feed(hot);
                }
                black_box(e.averages());
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
            let t = Instant::now();
            for _ in 0..reps {
                let mut i = 0;
                while i + 2048 <= hot.len() {
                    buf.copy_from_slice(&hot[i..i + 2048]);
                    fft.process_with_scratch(&mut buf, &mut scratch);
                    i += 1024;
                }
            }
            black_box(buf[1]);
            best[3] = best[3].min(t.elapsed().as_secs_f64());
        }
        let ms = |t: f64| n as f64 / t / 1e6;
        let forced = if avx2.is_some() {
            format!(
                ", welch [avx2, forced] {:.1} MS/s (ratio {:.2})",
                ms(best[2]),
                best[3] / best[2]
            )
        } else {
            String::new()
        };
        println!(
            "alternating, in cache, N=2048 50%: welch [{}] {:.1} MS/s, welch [rustfft] {:.1} MS/s, plain rustfft loop {:.1} MS/s; ratio to the plain loop {:.2}{forced}",
            w.engine(),
            ms(best[0]),
            ms(best[1]),
            ms(best[3]),
            best[3] / best[0]
        );
    }
    // CLKIN: the hot path (mix + sinc² decimation, per sample) alone, then with the
    // end-of-capture search (one long FFT, the refinement); at 2, 61.44 and 200 MS/s
    // (the signal's tone sits at 0.05 cycles/sample, i.e. fs/20 above the centre).
    for fs in [2e6, 61.44e6, 200e6] {
        let fc = 100e6;
        let cfg = ClkinConfig::new(fc + 0.05 * fs, fc, fs, 5.0);
        // The estimator is made once per capture: its set-up (the mixer tables, M
        // entries each, M growing with the rate) is timed apart from the feeding.
        let (r, setup_s) = rate_after_setup(
            secs,
            n,
            || ClkinEstimator::new(cfg.clone()).expect("clkin"),
            |c| {
                for b in x.chunks(1 << 16) {
                    c.feed(b);
                }
            },
        );
        println!(
            "clkin  feed only  ({:5.2} MS/s, ±10 ppm)  {:8.1} MS/s wall  {:8.1} MS/s per CPU-s  (set-up {:.3} ms, not counted)",
            fs / 1e6,
            r.0,
            r.1,
            setup_s * 1e3
        );
        // As the live path feeds it: one 64 Ki-sample block, already in cache, again
        // and again (the same samples as many times as the input has blocks).
        let block = &x[..x.len().min(1 << 16)];
        let (rc, _) = rate_after_setup(
            secs,
            block.len() * (n / block.len()),
            || ClkinEstimator::new(cfg.clone()).expect("clkin"),
            |c| {
                for _ in 0..n / block.len() {
                    c.feed(block);
                }
            },
        );
        println!(
            "clkin  feed only, one block in cache ({:5.2} MS/s) {:8.1} MS/s wall  {:8.1} MS/s per CPU-s",
            fs / 1e6,
            rc.0,
            rc.1
        );
        // The full-band spectrum the folding check reads, made once (a capture's
        // Welch runs anyway; its cost is timed apart above).
        let band = {
            let mut wc = WelchConfig::new(2048, fs);
            wc.center_hz = Some(fc);
            let mut w = Welch::new(wc).expect("welch");
            w.feed(&x);
            w.finish()
        };
        let r = rate(secs, n, || {
            let mut c = ClkinEstimator::new(cfg.clone()).expect("clkin");
            for b in x.chunks(1 << 16) {
                c.feed(b);
            }
            let _ = black_box(c.finish(&band));
        });
        println!(
            "clkin  feed+finish ({:5.2} MS/s, ±10 ppm) {:8.1} MS/s wall  {:8.1} MS/s per CPU-s",
            fs / 1e6,
            r.0,
            r.1
        );
    }
    // CLKIN by comparison: one radio's tone tracker (mix + sinc² decimation, the
    // coarse search, the phase points), per sample, at 2 and 61.44 MS/s; a
    // comparison runs two, one per stream thread. Then the fit of two tracks.
    for fs in [2e6, 61.44e6] {
        let fc = 100e6;
        let cfg = ToneTrackConfig::new(fc + 0.05 * fs, fc, fs);
        let r = rate(secs, n, || {
            let mut t = ToneTracker::new(cfg.clone()).expect("tracker");
            for b in x.chunks(1 << 16) {
                t.feed(b);
            }
            black_box(t.finish());
        });
        println!(
            "clkin_compare tracker ({:5.2} MS/s, ±50 ppm) {:8.1} MS/s wall  {:8.1} MS/s per CPU-s",
            fs / 1e6,
            r.0,
            r.1
        );
    }
    {
        let cfg = ToneTrackConfig::new(100.1e6, 100e6, 2e6);
        let mut t = ToneTracker::new(cfg).expect("tracker");
        for b in x.chunks(1 << 16) {
            t.feed(b);
        }
        let track = t.finish();
        let t0 = Instant::now();
        let runs = 200;
        for _ in 0..runs {
            let _ = black_box(compare_tracks(&track, &track));
        }
        println!(
            "clkin_compare fit of two tracks ({} points): {:.3} ms",
            track.points.len(),
            t0.elapsed().as_secs_f64() * 1e3 / runs as f64
        );
    }
    let r = rate(secs, n, || {
        let mut w = Welch::new(WelchConfig::new(2048, 2e6)).expect("welch");
        let s = {
            for b in x.chunks(1 << 16) {
                w.feed(b);
            }
            w.finish()
        };
        black_box(s.peaks.len());
    });
    println!(
        "welch+finish N=2048 50% (peaks, median) {:8.1} MS/s wall  {:8.1} MS/s per CPU-s",
        r.0, r.1
    );
    if let Some(path) = opt("--file") {
        let path = std::path::PathBuf::from(path);
        let mut buf = vec![Complex::default(); 1 << 16];
        let mut total = 0u64;
        let t = Instant::now();
        let mut rd = IqReader::open(&path, Some(IqFormat::Cf32)).expect("open");
        let mut w = Welch::new(WelchConfig::new(2048, 2e6)).expect("welch");
        loop {
            let k = rd.read(&mut buf).expect("read");
            if k == 0 {
                break;
            }
            w.feed(&buf[..k]);
            total += k as u64;
        }
        black_box(w.finish());
        let r = total as f64 / t.elapsed().as_secs_f64() / 1e6;
        println!(
            "reader+welch on {} ({total} samples, one thread) {r:8.1} MS/s",
            path.display()
        );
    }
}
