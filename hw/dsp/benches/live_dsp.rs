//! The live path's DSP on CS16 blocks just written by another thread (as the capture
//! engine's reader writes them), two ways, alternating: the whole 64 Ki-sample block
//! converted to float, then Welch over it (what the engine does), against the block
//! converted and fed to Welch in chunks that stay in the first-level caches (CS16 →
//! float fused with the Welch pass at cache level). Welch N = 2048 at 50 %.
//!
//! Prints, per round and way, MS/s per CPU-second of the DSP thread (its own CPU time,
//! from `/proc/thread-self/stat`, so other load on the machine does not count).
//!
//! Then the whole capture engine (Welch N = 2048 at 50 % and the CLKIN estimator) over a
//! source that waits for it (CF32 blocks copied from a table, as a file source), with
//! the DSP on one thread and on two, alternating: MS/s (wall) and CPU-seconds of the
//! process per 10⁹ samples.
//!
//! Then the capture engine on CS16 blocks paced at 200 MS/s (the live path's
//! workload without the radio), two DSP threads: CPU-seconds of the process per 10⁹
//! samples and samples lost (a lower rate in MS/s as the third argument, for a
//! machine too busy to keep up).
//!
//! run: `cargo bench -p rxnode-dsp --bench live_dsp [-- SECONDS [ROUNDS [MSPS]]]` (default 2 s, 3, 200).
use num_complex::Complex;
use rxnode_dsp::{
    run_capture, run_capture_native, CaptureSettings, ClkinConfig, EngineSample, NativeSource,
    ReadOutcome, SampleSource, Welch, WelchConfig,
};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

const BLOCK: usize = 1 << 16;

/// CPU seconds of the calling thread (Linux, 10 ms ticks), if readable.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Run `secs` of blocks written by a producer thread through `dsp`; MS/s per
/// CPU-second of this thread.
fn run(secs: f64, mut dsp: impl FnMut(&[Complex<i16>])) -> f64 {
    let (full_tx, full_rx) = sync_channel::<Vec<Complex<i16>>>(4);
    let (free_tx, free_rx) = sync_channel::<Vec<Complex<i16>>>(4);
    for _ in 0..4 {
        let _ = free_tx.send(vec![Complex::default(); BLOCK]);
    }
    let producer = std::thread::spawn(move || {
        let mut k = 0u64;
        for mut b in free_rx.iter() {
            for (i, c) in b.iter_mut().enumerate() {
                let h = (k + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                *c = Complex::new((h >> 48) as i16 / 8, (h >> 32) as i16 / 8);
            }
            k += BLOCK as u64;
            if full_tx.send(b).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let cpu0 = thread_cpu_s().unwrap_or(f64::NAN);
    let mut samples = 0u64;
    for b in full_rx.iter() {
        dsp(&b);
        samples += b.len() as u64;
        if start.elapsed() >= Duration::from_secs_f64(secs) {
            break;
        }
        let _ = free_tx.send(b);
    }
    let cpu = thread_cpu_s().unwrap_or(f64::NAN) - cpu0;
    drop(free_tx);
    drop(full_rx);
    let _ = producer.join();
    samples as f64 / cpu / 1e6
}

/// CPU seconds of this process (Linux, 10 ms ticks), if readable.
fn process_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// CF32 samples copied from a table of one second's worth of noise and a tone; it
/// waits for the engine (not live), so nothing is dropped.
struct Table {
    x: Vec<Complex<f32>>,
    at: usize,
}

impl SampleSource for Table {
    fn read(&mut self, buf: &mut [Complex<f32>], _t: i64) -> rxnode_dsp::Result<ReadOutcome> {
        let n = buf.len().min(self.x.len() - self.at);
        buf[..n].copy_from_slice(&self.x[self.at..self.at + n]);
        self.at = (self.at + n) % self.x.len();
        Ok(ReadOutcome::Samples(n))
    }

    fn is_live(&self) -> bool {
        false
    }
}

/// CS16 samples copied from a table, paced at `rate`: each read waits until its
/// samples are due, as a radio delivers them (the live path at 200 MS/s).
struct PacedCs16 {
    x: Vec<Complex<i16>>,
    at: usize,
    rate: f64,
    start: Option<Instant>,
    sent: u64,
}

impl NativeSource<Complex<i16>> for PacedCs16 {
    fn read_native(
        &mut self,
        buf: &mut [Complex<i16>],
        _t: i64,
    ) -> rxnode_dsp::Result<ReadOutcome> {
        let start = *self.start.get_or_insert_with(Instant::now);
        let due = start + Duration::from_secs_f64(self.sent as f64 / self.rate);
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let n = buf.len().min(self.x.len() - self.at);
        buf[..n].copy_from_slice(&self.x[self.at..self.at + n]);
        self.at = (self.at + n) % self.x.len();
        self.sent += n as u64;
        Ok(ReadOutcome::Samples(n))
    }
}

/// The capture engine on [`PacedCs16`] at `rate` for `samples`, the DSP on two
/// threads: (process CPU-s per 10⁹ samples processed, samples lost).
fn run_paced_cs16(table: &[Complex<i16>], samples: u64, rate: f64) -> (f64, u64) {
    let mut w = WelchConfig::new(2048, rate);
    w.center_hz = Some(100e6);
    let mut s = CaptureSettings::new(samples, w);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, rate, 0.5));
    s.dsp_threads = 2;
    let src = PacedCs16 {
        x: table.to_vec(),
        at: 0,
        rate,
        start: None,
        sent: 0,
    };
    let cpu0 = process_cpu_s().unwrap_or(f64::NAN);
    let r = run_capture_native(src, &s, &AtomicBool::new(false), None, None);
    let cpu = process_cpu_s().unwrap_or(f64::NAN) - cpu0;
    match r {
        Ok(sum) => (
            cpu / sum.samples_processed as f64 * 1e9,
            sum.lost_samples.unwrap_or(0) + sum.dropped_samples,
        ),
        Err(e) => {
            println!("engine: {e}");
            (f64::NAN, 0)
        }
    }
}

/// The capture engine over `samples` of [`Table`] with the DSP on `threads`
/// threads: (MS/s wall, process CPU-s per 10⁹ samples).
fn run_engine(table: &[Complex<f32>], samples: u64, threads: usize) -> (f64, f64) {
    let rate = 200e6;
    let mut w = WelchConfig::new(2048, rate);
    w.center_hz = Some(100e6);
    let mut s = CaptureSettings::new(samples, w);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, rate, 0.5));
    s.dsp_threads = threads;
    s.pool_blocks = 16;
    let src = Table {
        x: table.to_vec(),
        at: 0,
    };
    let cpu0 = process_cpu_s().unwrap_or(f64::NAN);
    let t = Instant::now();
    let r = run_capture(src, &s, &AtomicBool::new(false), None, None);
    let wall = t.elapsed().as_secs_f64();
    let cpu = process_cpu_s().unwrap_or(f64::NAN) - cpu0;
    match r {
        Ok(sum) => (
            sum.samples_processed as f64 / wall / 1e6,
            cpu / sum.samples_processed as f64 * 1e9,
        ),
        Err(e) => {
            println!("engine: {e}");
            (f64::NAN, f64::NAN)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let pace_ms: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200.0);
    let cfg = WelchConfig::new(2048, 200e6);
    let engine = Welch::new(cfg.clone()).map(|w| w.engine()).unwrap_or("?");
    println!("# live DSP on fresh CS16 blocks: Welch N=2048 50 % [{engine}], MS/s per CPU-s of the DSP thread");
    println!(
        "{:<8} {:>14} {:>14} {:>14} {:>14}",
        "round", "whole block", "CS16 in kernel", "chunks 8192", "chunks 2048"
    );
    for r in 1..=rounds {
        let mut out = Vec::new();
        for chunk in [BLOCK, 0, 8192, 2048] {
            let Ok(mut w) = Welch::new(cfg.clone()) else {
                return;
            };
            let mut float = vec![Complex::<f32>::default(); chunk];
            out.push(if chunk == 0 {
                run(secs, |b| w.feed(b))
            } else {
                run(secs, |b| {
                    for c in b.chunks(chunk) {
                        w.feed(Complex::<i16>::as_cf32(c, &mut float));
                    }
                })
            });
            std::hint::black_box(w.finish());
        }
        println!(
            "{:<8} {:>14.1} {:>14.1} {:>14.1} {:>14.1}",
            r, out[0], out[1], out[2], out[3]
        );
    }
    let table: Vec<Complex<f32>> = (0..1usize << 22)
        .map(|i| {
            let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let ph = std::f64::consts::TAU * (i as f64 * 0.0005);
            Complex::new(
                0.03 * ph.cos() as f32 + ((h >> 48) as i16) as f32 / 3.3e6,
                0.03 * ph.sin() as f32 + ((h >> 32) as i16) as f32 / 3.3e6,
            )
        })
        .collect();
    let cs16: Vec<Complex<i16>> = table
        .iter()
        .map(|c| Complex::new((c.re * 32768.0) as i16, (c.im * 32768.0) as i16))
        .collect();
    println!("# the capture engine on CS16 paced at {pace_ms} MS/s, 2 DSP threads: process CPU-s per 1e9 samples, lost");
    for r in 1..=rounds {
        let (cpu, lost) = run_paced_cs16(&cs16, (secs * pace_ms * 1e6) as u64, pace_ms * 1e6);
        println!("{r:<8} {cpu:>10.2} {lost:>12}");
    }
    let samples = (secs * 300e6) as u64;
    println!(
        "# the capture engine over a source that waits: Welch N=2048 50 % + CLKIN, {samples} samples per run"
    );
    println!(
        "{:<8} {:>22} {:>22}",
        "round", "1 DSP thread", "2 DSP threads"
    );
    println!(
        "{:<8} {:>11} {:>10} {:>11} {:>10}",
        "", "MS/s", "CPU-s/1e9", "MS/s", "CPU-s/1e9"
    );
    for r in 1..=rounds {
        let (a, b) = (
            run_engine(&table, samples, 1),
            run_engine(&table, samples, 2),
        );
        println!(
            "{:<8} {:>11.1} {:>10.2} {:>11.1} {:>10.2}",
            r, a.0, a.1, b.0, b.1
        );
    }
}
