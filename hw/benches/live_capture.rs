//! Live capture on the paced rxsim radio (the figures of docs/benchmarks.md): the whole engine
//! — reader thread on a real SoapySDR RX stream, bounded pool, Welch PSD + CLKIN on the
//! consumer, optionally a cf32 recording — and what it lost.
//!
//! `cargo bench -p rxnode-hw --bench live_capture [-- SECONDS [FILTER]]` (default 3 s
//! per run; FILTER: only runs whose label contains it, e.g. `ci16`).
//! Targets: 0 lost samples at 61.44 MS/s with FFT + CLKIN, at 20 MS/s while recording
//! cf32, and at 61.44 MS/s while recording the native CS16 as SigMF
//! `ci16_le` on the writer thread — a file of exactly SECONDS × 61.44e6 samples.
//! At 200 MS/s (analysis only, native CS16 pool): 0 lost on an otherwise idle machine.
//! Also prints the consumer's own throughput (no radio) to explain any loss, and the
//! cost of analysis in CPU-seconds per 10⁹ samples: the Welch core alone, the DSP of
//! the live path (CS16 → float, Welch, CLKIN, peaks) alone, and each live run's whole
//! process (the reader thread, rxsim generating in-process, the DSP thread).
//! The 200 MS/s run streams the driver's native CS16 into a 0.5 s pool, as
//! `rxnode capture` does above 100 MS/s.
use num_complex::Complex;
use rxnode_dsp::{
    run_capture, run_capture_native, CaptureSettings, CaptureSummary, ClkinConfig, ClkinEstimator,
    IqFormat, IqWriter, RecordFormat, RecordingMeta, Welch, WelchConfig,
};
use rxnode_hw::{use_sim, RxConfig, RxRadio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const FC: f64 = 100e6;
const TONE: f64 = 100.1e6;

fn welch(rate: f64, fft: usize) -> WelchConfig {
    let mut w = WelchConfig::new(fft, rate);
    w.center_hz = Some(FC);
    w
}

/// The consumer alone: Welch (+ CLKIN) fed 64 Ki-sample blocks of a tone for ~2 s.
fn consumer_alone(
    rate: f64,
    fft: usize,
    clkin: bool,
    record: Option<&std::path::Path>,
) -> Result<f64, rxnode_hw::Error> {
    let block = 1 << 16;
    let step = (TONE - FC) / rate;
    let x: Vec<Complex<f32>> = (0..block)
        .map(|i| {
            let ph = 2.0 * std::f64::consts::PI * (step * i as f64).fract();
            Complex::new(0.1 * ph.cos() as f32, 0.1 * ph.sin() as f32)
        })
        .collect();
    let mut w = Welch::new(welch(rate, fft))?;
    let mut c = if clkin {
        Some(ClkinEstimator::new(ClkinConfig::new(TONE, FC, rate, 0.5))?)
    } else {
        None
    };
    let mut rec = match record {
        Some(p) => Some(IqWriter::create(
            p,
            RecordingMeta {
                sample_rate_hz: rate,
                ..Default::default()
            },
            None,
        )?),
        None => None,
    };
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed() < Duration::from_secs(2) {
        w.feed(&x);
        if let Some(c) = &mut c {
            c.feed(&x);
        }
        if let Some(r) = &mut rec {
            r.write(&x)?;
        }
        n += block as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    if let Some(r) = rec {
        let f = Instant::now();
        r.finish()?;
        println!(
            "  (recording: {:.0} MB written at {:.0} MB/s to the page cache; fsync at the end {:.2} s)",
            8.0 * n as f64 / 1e6,
            8.0 * n as f64 / secs / 1e6,
            f.elapsed().as_secs_f64()
        );
    }
    let _ = w.finish();
    if let Some(p) = record {
        let _ = std::fs::remove_file(p);
    }
    Ok(n as f64 / secs / 1e6)
}

/// The writer thread's own work: a ci16 SigMF recording (write + SHA-256)
/// of 64 Ki-sample blocks for ~2 s, in MS/s.
fn ci16_writer_alone(dir: &std::path::Path) -> Result<f64, rxnode_hw::Error> {
    let block: Vec<Complex<i16>> = (0..1 << 16)
        .map(|i| Complex::new((i % 3000) as i16, -((i % 1700) as i16)))
        .collect();
    let p = dir.join("writer-alone.sigmf-data");
    let meta = RecordingMeta {
        sample_rate_hz: 61.44e6,
        ..Default::default()
    };
    let mut w = IqWriter::create_with(&p, IqFormat::Sigmf, RecordFormat::Ci16, meta, None)?;
    let t = Instant::now();
    let mut n = 0u64;
    while t.elapsed() < Duration::from_secs(2) {
        w.write_ci16(&block)?;
        n += block.len() as u64;
    }
    let secs = t.elapsed().as_secs_f64();
    w.finish()?;
    for f in ["writer-alone.sigmf-data", "writer-alone.sigmf-meta"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    Ok(n as f64 / secs / 1e6)
}

/// CPU time (user + system) of the whole process so far, in seconds.
#[cfg(unix)]
fn process_cpu_s() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is given; no other effect.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Without getrusage, no figure (the runs still print their losses).
#[cfg(not(unix))]
fn process_cpu_s() -> f64 {
    f64::NAN
}

/// CPU-seconds per 10⁹ samples of the DSP alone, single thread, ~2 s each: the Welch
/// core on CF32 blocks, and the live path's DSP on CS16 blocks (convert, Welch, CLKIN,
/// then the peaks at the end), at `rate`.
fn dsp_cost(rate: f64, fft: usize) -> Result<(f64, f64), rxnode_hw::Error> {
    let block = 1 << 16;
    let x16: Vec<Complex<i16>> = (0..block)
        .map(|i: usize| {
            let h = (i as u64).wrapping_mul(6364136223846793005) >> 33;
            Complex::new((h & 0x3ff) as i16 - 512, ((h >> 10) & 0x3ff) as i16 - 512)
        })
        .collect();
    let mut xf: Vec<Complex<f32>> = x16
        .iter()
        .map(|q| Complex::new(f32::from(q.re) / 32768.0, f32::from(q.im) / 32768.0))
        .collect();
    let per_1e9 = |cpu: f64, n: u64| cpu / n as f64 * 1e9;
    // The Welch core.
    let mut w = Welch::new(welch(rate, fft))?;
    let (c0, t) = (process_cpu_s(), Instant::now());
    let mut n = 0u64;
    while t.elapsed() < Duration::from_secs(2) {
        w.feed(&xf);
        n += block as u64;
    }
    let welch_core = per_1e9(process_cpu_s() - c0, n);
    let _ = w.finish();
    // The live path's DSP.
    let mut w = Welch::new(welch(rate, fft))?;
    let mut c = ClkinEstimator::new(ClkinConfig::new(TONE, FC, rate, 0.5))?;
    let (c0, t) = (process_cpu_s(), Instant::now());
    let mut n = 0u64;
    while t.elapsed() < Duration::from_secs(2) {
        for (o, q) in xf.iter_mut().zip(&x16) {
            *o = Complex::new(f32::from(q.re) / 32768.0, f32::from(q.im) / 32768.0);
        }
        w.feed(&xf);
        c.feed(&xf);
        n += block as u64;
    }
    let band = w.finish();
    let _ = c.finish(&band);
    Ok((welch_core, per_1e9(process_cpu_s() - c0, n)))
}

struct Run {
    label: String,
    rate: f64,
    seconds: f64,
    fft: usize,
    clkin: bool,
    record: bool,
    /// Stream CS16 and record it as SigMF ci16_le (else CF32, recorded as cf32).
    ci16: bool,
    block: usize,
    pool: usize,
}

/// The summary and, for a recording, the data file's size in bytes.
fn live(
    run: &Run,
    dir: &std::path::Path,
) -> Result<(CaptureSummary, Option<u64>), rxnode_hw::Error> {
    let serial = format!("bench{}", (run.rate / 1e3) as u64);
    let mut radio = RxRadio::open(&format!(
        "driver=rxsim,serial={serial},pace=1,tone_hz={TONE}"
    ))?;
    let actual = radio.configure(&RxConfig {
        frequency_hz: FC,
        sample_rate_hz: run.rate,
        ..RxConfig::default()
    })?;
    let samples = (run.seconds * actual.sample_rate_hz).round() as u64;
    let mut s = CaptureSettings::new(samples, welch(actual.sample_rate_hz, run.fft));
    s.block_samples = run.block;
    s.pool_blocks = run.pool;
    s.deadline = Some(Duration::from_secs_f64(run.seconds * 3.0 + 5.0));
    if run.clkin {
        s.clkin = Some(ClkinConfig::new(TONE, FC, actual.sample_rate_hz, 0.5));
    }
    let recorder = if run.record {
        let meta = RecordingMeta {
            sample_rate_hz: actual.sample_rate_hz,
            center_hz: Some(FC),
            ..Default::default()
        };
        Some(if run.ci16 {
            IqWriter::create_with(
                &dir.join("bench.sigmf-data"),
                IqFormat::Sigmf,
                RecordFormat::Ci16,
                meta,
                None,
            )?
        } else {
            IqWriter::create(&dir.join("bench.cf32"), meta, None)?
        })
    } else {
        None
    };
    let sum = if run.ci16 {
        let stream = radio.rx_stream_ci16()?;
        run_capture_native(stream, &s, &AtomicBool::new(false), None, recorder)?
    } else {
        let stream = radio.rx_stream()?;
        run_capture(stream, &s, &AtomicBool::new(false), None, recorder)?
    };
    let bytes = sum
        .iq_files
        .first()
        .and_then(|f| std::fs::metadata(&f.path).ok())
        .map(|m| m.len());
    for f in ["bench.cf32", "bench.sigmf-data", "bench.sigmf-meta"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    Ok((sum, bytes))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use_sim()?;
    let seconds: f64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3.0);
    let filter: Option<String> = std::env::args()
        .skip(1)
        .find(|a| a.parse::<f64>().is_err() && !a.starts_with('-'));
    let dir = tempfile::tempdir()?;
    println!(
        "machine: {} CPU(s); load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let rec = dir.path().join("alone.cf32");
    let alone: &[(bool, Option<&std::path::Path>)] = if filter.is_some() {
        &[]
    } else {
        &[(false, None), (true, None), (true, Some(rec.as_path()))]
    };
    for &(clkin, record) in alone {
        let r = consumer_alone(61.44e6, 2048, clkin, record)?;
        println!(
            "consumer alone (Welch N=2048, 50% overlap{}{}): {r:.1} MS/s",
            if clkin { " + CLKIN" } else { "" },
            if record.is_some() {
                " + cf32 recording with SHA-256"
            } else {
                ""
            }
        );
    }
    let (welch_core, dsp_path) = dsp_cost(200e6, 2048)?;
    println!(
        "CPU-s per 10^9 samples (one thread, no radio): Welch core (N=2048, 50% overlap) {welch_core:.2}; \
         live-path DSP (CS16 -> float, Welch, CLKIN, peaks) {dsp_path:.2}"
    );
    let w = ci16_writer_alone(dir.path())?;
    println!(
        "ci16 writer alone (SigMF ci16_le: write + SHA-256): {w:.1} MS/s = {:.0} MB/s",
        w * 4.0
    );
    let runs = [
        Run {
            label: "200 MS/s, FFT 2048 + CLKIN, native CS16 0.5 s pool (analysis only)".into(),
            rate: 200e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: false,
            ci16: true,
            block: 1 << 16,
            pool: 1526,
        },
        Run {
            label: "2 MS/s, FFT 2048 + CLKIN (sanity)".into(),
            rate: 2e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: false,
            ci16: false,
            block: 1 << 16,
            pool: 64,
        },
        Run {
            label: "61.44 MS/s, FFT 2048 + CLKIN".into(),
            rate: 61.44e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: false,
            ci16: false,
            block: 1 << 16,
            pool: 64,
        },
        Run {
            label: "20 MS/s, FFT 2048 + CLKIN, recording cf32".into(),
            rate: 20e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: true,
            ci16: false,
            block: 1 << 16,
            pool: 64,
        },
        Run {
            label: "61.44 MS/s, FFT 2048 + CLKIN, 4x pool".into(),
            rate: 61.44e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: false,
            ci16: false,
            block: 1 << 16,
            pool: 256,
        },
        Run {
            label: "20 MS/s, FFT 2048 + CLKIN, recording cf32, 4x pool".into(),
            rate: 20e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: true,
            ci16: false,
            block: 1 << 16,
            pool: 256,
        },
        Run {
            label: "61.44 MS/s, FFT 2048 + CLKIN, recording ci16 (native CS16, writer thread), 0.5 s pool".into(),
            rate: 61.44e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: true,
            ci16: true,
            block: 1 << 16,
            pool: 469,
        },
        Run {
            label: "20 MS/s, FFT 2048 + CLKIN, recording cf32 (writer thread), 0.5 s pool".into(),
            rate: 20e6,
            seconds,
            fft: 2048,
            clkin: true,
            record: true,
            ci16: false,
            block: 1 << 16,
            pool: 153,
        },
    ];
    for run in runs
        .iter()
        .filter(|r| filter.as_ref().is_none_or(|f| r.label.contains(f.as_str())))
    {
        let (t, cpu0) = (Instant::now(), process_cpu_s());
        let (s, bytes) = live(run, dir.path())?;
        let wall = t.elapsed().as_secs_f64();
        let cpu = process_cpu_s() - cpu0;
        // Samples lost inside the driver on an overflow are not counted by the driver;
        // an overflow is reported as such (and makes the capture not clean).
        let lost = s.dropped_samples + (s.samples_requested - s.samples_received);
        println!(
            "live {} ({} s, pool {} x {}): requested {} received {} processed {} | \
             overflows {} dropped {} timeouts {} | dropped+missing {} | {:.2} s wall, {:.1} MS/s \
             processed | {:.2} CPU-s = {:.2} CPU-s per 10^9 samples (whole process) | CLKIN {} | status {:?}{}{}",
            run.label,
            run.seconds,
            run.pool,
            run.block,
            s.samples_requested,
            s.samples_received,
            s.samples_processed,
            s.overflows,
            s.dropped_samples,
            s.timeouts,
            lost,
            wall,
            s.samples_processed as f64 / s.duration_s / 1e6,
            cpu,
            cpu / s.samples_received.max(1) as f64 * 1e9,
            s.clkin
                .as_ref()
                .and_then(|k| k.ppm)
                .map_or("n/a".into(), |p| format!("{p:+.4} ppm")),
            s.status,
            if s.overflows > 0 {
                " (overflows: each loses part of the driver buffer)"
            } else {
                ""
            },
            bytes.map_or(String::new(), |b| format!(
                " | file {b} bytes = {} samples{}",
                b / if run.ci16 { 4 } else { 8 },
                s.recording_error
                    .as_ref()
                    .map_or(String::new(), |e| format!(", recording error: {e}"))
            ))
        );
    }
    Ok(())
}
