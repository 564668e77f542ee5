//! The capture engine on a real SoapySDR RX stream from the bundled rxsim module
//! ppm on internal vs external clock through `run_capture`, and
//! loss accounting when the reader or the consumer is stalled.
//!
//! Modules load once per process: `init()` runs `use_sim()` and sets the event log
//! before any test touches SoapySDR. No test in this binary transmits.
use num_complex::Complex;
use rxnode_dsp::{
    run_capture, CaptureSettings, CaptureStatus, CaptureSummary, ClkinConfig, ClkinStatus,
    ClockEvidence, Error, ReadOutcome, SampleSource, WelchConfig,
};
use rxnode_hw::{RxConfig, RxRadio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

mod common;
use common::init;

const FC: f64 = 100e6;
const TONE: f64 = 100.1e6;

/// Open and configure an rxsim radio; the clock evidence as the driver gives it.
fn radio(args: &str, rate: f64, clock: &str) -> (RxRadio, ClockEvidence) {
    init();
    let mut r = RxRadio::open(args).expect("open rxsim");
    let actual = r
        .configure(&RxConfig {
            frequency_hz: FC,
            sample_rate_hz: rate,
            clock_source: Some(clock.to_owned()),
            ..RxConfig::default()
        })
        .expect("configure");
    assert_eq!(actual.sample_rate_hz, rate);
    let sensors = r.sensors().expect("sensors");
    let ev = ClockEvidence {
        expected_source: Some(clock.to_owned()),
        clock_source: actual.clock_source.clone(),
        ref_locked: sensors.get("ref_locked").map(|v| v == "true"),
        hw_clock_source: r
            .hardware_info()
            .ok()
            .and_then(|h| h.get("clock source").cloned()),
        hackrf_clkin: None,
    };
    (r, ev)
}

fn settings(samples: u64, rate: f64, ev: ClockEvidence) -> CaptureSettings {
    let mut w = WelchConfig::new(2048, rate);
    w.center_hz = Some(FC);
    let mut s = CaptureSettings::new(samples, w);
    s.clkin = Some(ClkinConfig::new(TONE, FC, rate, 0.5));
    s.clock_evidence = ev;
    s.deadline = Some(Duration::from_secs(20));
    s
}

fn capture(args: &str, clock: &str) -> CaptureSummary {
    let rate = 1e6;
    let (mut r, ev) = radio(args, rate, clock);
    let stream = r.rx_stream().expect("rx stream");
    let progress = AtomicU64::new(0);
    let s = run_capture(
        stream,
        &settings(300_000, rate, ev),
        &AtomicBool::new(false),
        Some(&progress),
        None,
    )
    .expect("run_capture");
    assert_eq!(progress.load(Ordering::Relaxed), s.samples_received);
    s
}

#[test]
fn internal_clock_shows_its_ppm_and_fails() {
    let s = capture(
        "driver=rxsim,serial=lc-int,tone_hz=100.1e6,ppm=2,ext_ref=1",
        "internal",
    );
    assert_eq!(s.samples_received, 300_000);
    assert_eq!((s.overflows, s.dropped_samples), (0, 0), "{s:?}");
    assert!(s.clean);
    let k = s.clkin.expect("clkin");
    let ppm = k.ppm.expect("ppm");
    assert!((ppm - 2.0).abs() < 0.02, "ppm {ppm}");
    assert!(k.ppm_uncertainty.expect("uncertainty") < 0.02);
    assert_eq!(k.status, ClkinStatus::Fail);
    assert_eq!(s.status, CaptureStatus::Fail);
    // The tone appears below its true frequency when the receiver clock is fast.
    assert!(k.measured_hz.expect("measured") < TONE);
}

#[test]
fn external_clock_locked_to_clkin_passes() {
    // Same radio (2 ppm internal error), now locked to an exact external reference.
    let s = capture(
        "driver=rxsim,serial=lc-ext,tone_hz=100.1e6,ppm=2,ext_ref=1",
        "external",
    );
    assert!(s.clean, "{s:?}");
    let k = s.clkin.expect("clkin");
    let ppm = k.ppm.expect("ppm");
    assert!(ppm.abs() < 0.02, "ppm {ppm}");
    assert_eq!(k.status, ClkinStatus::Pass, "{}", k.detail);
    assert!(k
        .evidence
        .iter()
        .any(|e| e.name.contains("ref_locked") && e.consistent));
    assert_eq!(s.status, CaptureStatus::Pass);
    assert!((s.peaks[0].frequency_hz - TONE).abs() < 1e6 / 2048.0);
}

#[test]
fn external_selected_but_no_reference_is_not_a_pass() {
    // "external" selected while nothing is wired to CLKIN: the sensor says unlocked,
    // so even a small measured error must not pass.
    let s = capture(
        "driver=rxsim,serial=lc-noref,tone_hz=100.1e6,ppm=0.1",
        "external",
    );
    let k = s.clkin.expect("clkin");
    assert!((k.ppm.expect("ppm") - 0.1).abs() < 0.02);
    assert_eq!(k.status, ClkinStatus::Fail, "{}", k.detail);
    assert!(k.evidence.iter().any(|e| !e.consistent));
}

/// The real RX stream, with the reader thread frozen once (a USB hiccup, a preempted
/// reader): the driver's buffer overruns and says so.
struct Hiccup<S> {
    inner: S,
    reads: u32,
    stall_after: u32,
    stall: Duration,
}

impl<S: SampleSource> SampleSource for Hiccup<S> {
    fn read(&mut self, buf: &mut [Complex<f32>], timeout_us: i64) -> Result<ReadOutcome, Error> {
        self.reads += 1;
        if self.reads == self.stall_after {
            std::thread::sleep(self.stall);
        }
        self.inner.read(buf, timeout_us)
    }

    fn time_ns(&self) -> Option<i64> {
        self.inner.time_ns()
    }
}

#[test]
fn a_stalled_reader_overflows_and_is_not_clean() {
    // Paced at 1 MS/s with a 20 000-sample driver buffer (20 ms): a 150 ms stall
    // overruns it for certain.
    let rate = 1e6;
    let (mut r, ev) = radio(
        "driver=rxsim,serial=lc-ovf,tone_hz=100.1e6,pace=1,buffer_samples=20000",
        rate,
        "internal",
    );
    let stream = Hiccup {
        inner: r.rx_stream().expect("rx stream"),
        reads: 0,
        stall_after: 3,
        stall: Duration::from_millis(150),
    };
    let mut st = settings(400_000, rate, ev);
    st.clkin = None; // a gap breaks the tone's phase: judged elsewhere
    st.block_samples = 8192;
    let s = run_capture(stream, &st, &AtomicBool::new(false), None, None).expect("run");
    assert!(s.overflows >= 1, "{s:?}");
    assert_eq!(s.samples_received, 400_000, "the capture goes on after it");
    assert!(!s.clean);
    assert_eq!(s.status, CaptureStatus::Partial);
    assert_eq!(s.stop_reason, "complete");
}

/// rxsim gives stream times (`HAS_TIME`), so the samples an overflow lost are
/// counted from the jump in time, and the CLKIN check makes no number from the
/// broken stream: NOT_MEASURED with the count, the capture PARTIAL (not FAIL).
#[test]
fn an_overflow_on_a_timed_stream_is_counted_and_clkin_not_measured() {
    // Paced at 1 MS/s with a 20 000-sample driver buffer: a 150 ms stall overruns it;
    // rxsim then skips all but half a buffer, about 140 000 samples.
    let rate = 1e6;
    let (mut r, ev) = radio(
        "driver=rxsim,serial=lc-ovf-t,tone_hz=100.1e6,pace=1,buffer_samples=20000",
        rate,
        "internal",
    );
    let stream = Hiccup {
        inner: r.rx_stream().expect("rx stream"),
        reads: 0,
        stall_after: 6,
        stall: Duration::from_millis(150),
    };
    let mut st = settings(400_000, rate, ev);
    st.block_samples = 8192;
    let s = run_capture(stream, &st, &AtomicBool::new(false), None, None).expect("run");
    assert!(s.overflows >= 1, "{s:?}");
    let lost = s
        .overflow_lost_samples
        .expect("counted from the stream times");
    assert!((100_000..400_000).contains(&lost), "lost {lost}");
    assert_eq!(s.lost_samples, Some(lost + s.dropped_samples));
    assert!(s.gaps >= 1);
    assert_eq!(s.status, CaptureStatus::Partial, "{s:?}");
    let k = s.clkin.expect("clkin");
    assert_eq!(k.status, ClkinStatus::NotMeasured, "{}", k.detail);
    assert_eq!(k.ppm, None);
    assert!(
        k.detail
            .contains(&format!("lost {} samples", lost + s.dropped_samples)),
        "{}",
        k.detail
    );
}

/// A consumer that cannot keep up: the recorder writes into a FIFO nobody reads until
/// the reader has finished. The reader must not wait for it: what it cannot queue is
/// dropped and counted.
#[cfg(unix)]
#[test]
fn a_stalled_consumer_drops_and_counts() {
    let fifo = init().dir.path().join("slow.cf32");
    let ok = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(ok.success());
    let rate = 2e6;
    let samples = 600_000u64;
    let (mut r, ev) = radio(
        "driver=rxsim,serial=lc-drop,tone_hz=100.1e6,pace=0",
        rate,
        "internal",
    );
    let mut st = settings(samples, rate, ev);
    st.clkin = None;
    st.block_samples = 16_384;
    st.pool_blocks = 4;
    let progress = AtomicU64::new(0);
    let drained = std::thread::scope(|sc| {
        // The slow disk: opens the FIFO (unblocking the writer's open), reads nothing
        // until every sample has been received, then drains it.
        let slow = sc.spawn(|| {
            use std::io::Read;
            let mut f = std::fs::File::open(&fifo).expect("open fifo");
            while progress.load(Ordering::Relaxed) < samples {
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut all = Vec::new();
            f.read_to_end(&mut all).expect("drain");
            all.len() as u64
        });
        let meta = rxnode_dsp::RecordingMeta {
            sample_rate_hz: rate,
            ..Default::default()
        };
        // A FIFO is opened for writing only once its reader has it open (never waited
        // on in open): try until the reader above has opened it, as `capture` does.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let w = loop {
            match rxnode_dsp::IqWriter::create(&fifo, meta.clone(), None) {
                Ok(w) => break w,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => {
                    // Let the reader (perhaps still in its open) finish before failing,
                    // or the scope would wait for it for ever.
                    progress.store(samples, Ordering::Relaxed);
                    drop(std::fs::OpenOptions::new().write(true).open(&fifo));
                    let _ = slow.join();
                    panic!("writer on fifo: {e}");
                }
            }
        };
        let stream = r.rx_stream().expect("rx stream");
        let s = run_capture(
            stream,
            &st,
            &AtomicBool::new(false),
            Some(&progress),
            Some(w),
        )
        .expect("run");
        let drained = slow.join().expect("slow reader");
        (s, drained)
    });
    let (s, drained) = drained;
    assert_eq!(s.samples_received, samples);
    // The writer holds at most its 1 MiB buffer plus the pipe (64 KiB) plus the pool
    // before it blocks; the rest could not be queued.
    assert!(s.dropped_samples > 0, "{s:?}");
    assert!(
        s.dropped_samples >= samples - (1 << 17) - 8192 - 5 * 16_384,
        "{s:?}"
    );
    assert_eq!(s.samples_processed + s.dropped_samples, s.samples_received);
    assert_eq!(s.overflows, 0, "the reader itself never stalled");
    assert!(!s.clean);
    assert_eq!(s.status, CaptureStatus::Partial);
    // What was processed is exactly what reached the "disk".
    assert_eq!(drained, 8 * s.samples_processed);
}
