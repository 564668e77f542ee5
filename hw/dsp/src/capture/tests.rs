//! Unit tests of the capture engine.
use super::*;
use crate::dsp::welch::tests::Noise;
use crate::dsp::ClkinStatus;
use crate::error::Error;
use std::f64::consts::PI;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

mod silence;
mod stream_times;
mod threads;

/// Test source: a tone seen by a receiver with reference error `eps`, plus noise;
/// optionally paced to a sample rate, with injected overflows/timeouts/cancel.
struct Synth {
    fs: f64,
    cyc: f64,
    amp: f64,
    noise: Noise,
    sigma: f64,
    n: u64,
    reads: u64,
    pace: bool,
    t0: Option<Instant>,
    overflow_at: Option<u64>,
    timeout_at: Option<u64>,
    cancel_at: Option<(u64, Arc<AtomicBool>)>,
    always_timeout: bool,
    max_read: usize,
    /// A live stream (dropped when the DSP is behind), else a source that waits.
    live: bool,
}

impl Synth {
    fn new(fs: f64, fc: f64, tone: f64, eps: f64) -> Self {
        Self {
            fs,
            cyc: (tone - fc * (1.0 + eps)) / (1.0 + eps) / fs,
            amp: 0.1,
            noise: Noise::new(11),
            sigma: 0.01,
            n: 0,
            reads: 0,
            pace: false,
            t0: None,
            overflow_at: None,
            timeout_at: None,
            cancel_at: None,
            always_timeout: false,
            max_read: usize::MAX,
            live: true,
        }
    }
}

impl SampleSource for Synth {
    fn is_live(&self) -> bool {
        self.live
    }

    fn read(&mut self, buf: &mut [Complex<f32>], _t: i64) -> Result<ReadOutcome> {
        self.reads += 1;
        if let Some((k, c)) = &self.cancel_at {
            if self.reads == *k {
                c.store(true, Ordering::Relaxed);
            }
        }
        if self.always_timeout || self.timeout_at == Some(self.reads) {
            std::thread::sleep(Duration::from_millis(1));
            return Ok(ReadOutcome::Timeout);
        }
        if self.overflow_at == Some(self.reads) {
            return Ok(ReadOutcome::Overflow);
        }
        let len = buf.len().min(self.max_read);
        for (i, b) in buf[..len].iter_mut().enumerate() {
            let ph = 2.0 * PI * (self.cyc * (self.n + i as u64) as f64).fract();
            let v = Complex::from_polar(self.amp, ph) + self.noise.complex(self.sigma);
            *b = Complex::new(v.re as f32, v.im as f32);
        }
        self.n += len as u64;
        if self.pace {
            let t0 = *self.t0.get_or_insert_with(Instant::now);
            let due = Duration::from_secs_f64(self.n as f64 / self.fs);
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        Ok(ReadOutcome::Samples(len))
    }
}

fn settings(samples: u64) -> CaptureSettings {
    let mut w = WelchConfig::new(2048, 2e6);
    w.center_hz = Some(100e6);
    let mut s = CaptureSettings::new(samples, w);
    s.block_samples = 16384;
    s
}

#[test]
fn paced_capture_is_clean_and_measures_ppm() {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 1.0e-6);
    src.pace = true;
    src.max_read = 5000; // short reads are normal, not loss
    let mut s = settings(1_000_000);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let cancel = AtomicBool::new(false);
    let progress = AtomicU64::new(0);
    let sum = run_capture(src, &s, &cancel, Some(&progress), None).unwrap();
    assert_eq!(sum.samples_received, 1_000_000);
    assert_eq!(sum.samples_processed, 1_000_000);
    assert_eq!(sum.dropped_samples, 0);
    assert!(sum.short_reads > 0);
    assert!(sum.clean);
    assert_eq!(sum.status, CaptureStatus::Pass, "{sum:?}");
    assert_eq!(progress.load(Ordering::Relaxed), 1_000_000);
    assert!(sum.duration_s >= 0.45, "paced: {}", sum.duration_s);
    let c = sum.clkin.as_ref().unwrap();
    assert!((c.ppm.unwrap() - 1.0).abs() < 0.01, "{c:?}");
    assert_eq!(c.status, ClkinStatus::Pass);
    assert!((sum.peaks[0].frequency_hz - 100.1e6).abs() < 2e6 / 2048.0);
    let psd = sum.psd.as_ref().unwrap();
    assert_eq!(psd.db.len(), 512);
    // JSON round trip.
    let back: CaptureSummary = serde_json::from_str(&serde_json::to_string(&sum).unwrap()).unwrap();
    assert_eq!(back.status, CaptureStatus::Pass);
    assert_eq!(back.samples_received, sum.samples_received);
}

#[test]
fn stalled_consumer_loses_samples_and_says_so() {
    let src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    let mut s = settings(2_000_000);
    s.pool_blocks = 4;
    let cancel = AtomicBool::new(false);
    let mut seen = 0u64;
    let sum = run_capture_with_hook(src, &s, &cancel, None, None, &mut |x| {
        seen += x.len() as u64;
        std::thread::sleep(Duration::from_millis(30));
    })
    .unwrap();
    assert_eq!(sum.samples_received, 2_000_000);
    assert_partial_with_drops(&sum, seen);
}

/// A capture whose DSP fell behind: samples dropped, every received one either
/// analysed (`seen` by the hook) or dropped, PARTIAL and not clean.
fn assert_partial_with_drops(sum: &CaptureSummary, seen: u64) {
    assert!(sum.dropped_samples > 0, "{sum:?}");
    assert_eq!(
        sum.samples_processed + sum.dropped_samples,
        sum.samples_received
    );
    assert_eq!(sum.samples_processed, seen);
    assert!(!sum.clean);
    assert_eq!(sum.status, CaptureStatus::Partial);
}

#[test]
fn overflows_and_timeouts_are_counted_and_not_clean() {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    src.overflow_at = Some(3);
    src.timeout_at = Some(5);
    src.pace = true;
    let s = settings(200_000);
    let cancel = AtomicBool::new(false);
    let sum = run_capture(src, &s, &cancel, None, None).unwrap();
    assert_eq!(sum.overflows, 1);
    assert_eq!(sum.timeouts, 1);
    assert_eq!(sum.samples_received, 200_000);
    assert!(!sum.clean);
    assert_eq!(sum.status, CaptureStatus::Partial);
}

#[test]
fn cancellation_returns_what_was_captured_as_partial() {
    let cancel = Arc::new(AtomicBool::new(false));
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    src.cancel_at = Some((5, cancel.clone()));
    src.pace = true;
    let s = settings(10_000_000);
    let sum = run_capture(src, &s, &cancel, None, None).unwrap();
    assert!(sum.cancelled);
    assert_eq!(sum.stop_reason, "cancelled");
    assert_eq!(sum.samples_received, 5 * 16384);
    assert_eq!(sum.samples_processed, 5 * 16384);
    assert_eq!(sum.status, CaptureStatus::Partial);
    assert!(sum.averages > 0);
}

/// A CS16 source: the synthetic tone quantised as a driver would deliver it.
struct Synth16(Synth, Vec<Complex<f32>>);

impl NativeSource<Complex<i16>> for Synth16 {
    fn read_native(&mut self, buf: &mut [Complex<i16>], t: i64) -> Result<ReadOutcome> {
        self.1.resize(buf.len(), Complex::default());
        let r = self.0.read(&mut self.1, t)?;
        if let ReadOutcome::Samples(n) = r {
            for (o, c) in buf[..n].iter_mut().zip(&self.1) {
                *o = Complex::new((c.re * 32767.0) as i16, (c.im * 32767.0) as i16);
            }
        }
        Ok(r)
    }
}

/// Native CS16 through the engine: the DSP measures the tone and CLKIN
/// on the float view, and the ci16 recording (on the writer thread) holds exactly
/// the samples the source delivered, in order.
#[test]
fn native_ci16_capture_records_the_source_samples_and_measures() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("n.sigmf-data");
    let meta = crate::iq::RecordingMeta {
        sample_rate_hz: 2e6,
        ..Default::default()
    };
    let w = IqWriter::create_with(
        &p,
        crate::IqFormat::Sigmf,
        RecordFormat::Ci16,
        meta.clone(),
        None,
    )
    .unwrap();
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 1.0e-6);
    src.max_read = 5000;
    let mut s = settings(1_000_000);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let sum = run_capture_native(
        Synth16(src, Vec::new()),
        &s,
        &AtomicBool::new(false),
        None,
        Some(w),
    )
    .unwrap();
    assert_eq!(sum.samples_processed, 1_000_000);
    assert_eq!(sum.status, CaptureStatus::Pass, "{sum:?}");
    assert_eq!(sum.iq_files[0].bytes, 4_000_000);
    let c = sum.clkin.as_ref().unwrap();
    assert!((c.ppm.unwrap() - 1.0).abs() < 0.01, "{c:?}");
    assert!((sum.peaks[0].frequency_hz - 100.1e6).abs() < 2e6 / 2048.0);
    // The file is the same source's samples, quantised the same way.
    let want = synth16_source_samples();
    let data = std::fs::read(&p).unwrap();
    assert_eq!(data.len(), 4_000_000);
    for (i, c) in want.iter().enumerate().step_by(997) {
        let re = i16::from_le_bytes([data[4 * i], data[4 * i + 1]]);
        let im = i16::from_le_bytes([data[4 * i + 2], data[4 * i + 3]]);
        assert_eq!((re, im), (c.re, c.im), "sample {i}");
    }
    // A cf32 recorder on a CS16 stream (or the reverse) is refused up front.
    let w = IqWriter::create(&dir.path().join("f.cf32"), meta.clone(), None).unwrap();
    let src = Synth16(Synth::new(2e6, 100e6, 100.1e6, 0.0), Vec::new());
    let e = run_capture_native(src, &settings(1000), &AtomicBool::new(false), None, Some(w))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidSetting {
                field: "record_format",
                ..
            }
        ),
        "{e}"
    );
    let w = IqWriter::create_with(
        &dir.path().join("g.cs16"),
        crate::IqFormat::Cs16,
        RecordFormat::Ci16,
        meta,
        None,
    )
    .unwrap();
    let src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    let e = run_capture(src, &settings(1000), &AtomicBool::new(false), None, Some(w)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidSetting {
                field: "record_format",
                ..
            }
        ),
        "{e}"
    );
}

/// A stream that goes quiet (a remote server killed) ends with the
/// reason in words, not only `timeouts`.
#[test]
fn a_stream_that_goes_quiet_says_so() {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    src.timeout_at = None;
    let mut s = settings(100_000);
    s.max_consecutive_timeouts = 3;
    // Deliver some samples, then only timeouts.
    struct Quiet(Synth, u32);
    impl SampleSource for Quiet {
        fn read(&mut self, buf: &mut [Complex<f32>], t: i64) -> Result<ReadOutcome> {
            self.1 += 1;
            if self.1 > 2 {
                return Ok(ReadOutcome::Timeout);
            }
            let n = buf.len().min(1000);
            self.0.read(&mut buf[..n], t)
        }
    }
    let sum = run_capture(Quiet(src, 0), &s, &AtomicBool::new(false), None, None).unwrap();
    assert_eq!(sum.stop_reason, "stalled");
    assert!(
        sum.errors
            .iter()
            .any(|e| e.contains("stream stalled at sample 2000")),
        "{:?}",
        sum.errors
    );
    assert_eq!(sum.samples_received, 2000);
    // 2000 samples are less than one FFT: nothing was measured, so FAIL.
    assert_eq!(sum.status, CaptureStatus::Fail);
    assert!(
        sum.errors.iter().any(|e| e.contains("no Welch segment")),
        "{:?}",
        sum.errors
    );
    assert!(
        sum.errors
            .iter()
            .any(|e| e.contains("stopped delivering") && e.contains("after 2000 of 100000")),
        "{:?}",
        sum.errors
    );
}

/// Zero samples asked used to come back a clean PASS.
#[test]
fn asking_for_no_samples_is_an_invalid_setting() {
    let src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    let r = run_capture(src, &settings(0), &AtomicBool::new(false), None, None);
    assert!(
        matches!(
            r,
            Err(Error::InvalidSetting {
                field: "samples",
                ..
            })
        ),
        "{r:?}"
    );
}

/// A source that delivers nothing until the deadline was
/// PARTIAL; nothing was measured, so it is FAIL.
#[test]
fn a_silent_source_stops_at_the_deadline() {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    src.always_timeout = true;
    let mut s = settings(1000);
    s.deadline = Some(Duration::from_millis(50));
    s.max_consecutive_timeouts = 1_000_000;
    let sum = run_capture(src, &s, &AtomicBool::new(false), None, None).unwrap();
    assert_eq!(sum.stop_reason, "deadline");
    assert!(sum.timeouts > 0);
    assert_eq!(sum.samples_received, 0);
    assert_eq!(sum.noise_floor_db, None);
    assert_eq!(sum.status, CaptureStatus::Fail);
    let json = serde_json::to_string(&sum).unwrap();
    let _: CaptureSummary = serde_json::from_str(&json).unwrap();
}

/// A radio that delivers every sample, each of them zero, measured nothing: no
/// floor, no mean power, no peak, no PSD level, and FAIL saying why.
#[test]
fn a_source_of_zeros_fails_without_a_floor() {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    (src.amp, src.sigma) = (0.0, 0.0);
    let sum = run_capture(src, &settings(50_000), &AtomicBool::new(false), None, None).unwrap();
    assert_eq!(sum.samples_processed, 50_000);
    assert!(sum.clean);
    assert!(sum.averages > 0);
    assert_eq!((sum.noise_floor_db, sum.mean_power_dbfs), (None, None));
    assert!(sum.peaks.is_empty(), "{:?}", sum.peaks);
    assert_eq!(sum.status, CaptureStatus::Fail);
    assert!(
        sum.errors
            .iter()
            .any(|e| e == "noise floor not measured (no signal: every sample is zero)"),
        "{:?}",
        sum.errors
    );
    if let Some(p) = &sum.psd {
        assert!(p.db.iter().all(|v| !v.is_finite()), "{:?}", &p.db[..4]);
    }
}

#[test]
fn cancelled_before_the_first_sample_is_partial() {
    let cancel = Arc::new(AtomicBool::new(false));
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    src.always_timeout = true;
    src.cancel_at = Some((1, cancel.clone()));
    let mut s = settings(1000);
    s.max_consecutive_timeouts = 1_000_000;
    let sum = run_capture(src, &s, &cancel, None, None).unwrap();
    assert_eq!(sum.stop_reason, "cancelled");
    assert_eq!(sum.samples_received, 0);
    assert_eq!(sum.status, CaptureStatus::Partial);
}

#[test]
fn recording_through_the_engine_and_the_disk_budget() {
    let dir = tempfile::tempdir().unwrap();
    let meta = crate::iq::RecordingMeta {
        sample_rate_hz: 2e6,
        ..Default::default()
    };
    let p = dir.path().join("r.sigmf-data");
    // 100 000 samples of a paced stream into `w`.
    let record = |w: IqWriter| {
        let mut src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
        src.pace = true;
        run_capture(
            src,
            &settings(100_000),
            &AtomicBool::new(false),
            None,
            Some(w),
        )
        .unwrap()
    };
    let sum = record(IqWriter::create(&p, meta.clone(), None).unwrap());
    assert_eq!(sum.iq_files.len(), 2);
    assert_eq!(sum.iq_files[0].bytes, 800_000);
    assert_eq!(
        std::fs::metadata(&sum.iq_files[0].path).unwrap().len(),
        800_000
    );
    assert_eq!(sum.status, CaptureStatus::Pass);

    let p = dir.path().join("b.cf32");
    let sum = record(IqWriter::create(&p, meta, Some(400_000)).unwrap());
    assert!(sum
        .recording_error
        .as_deref()
        .unwrap_or("")
        .contains("disk budget"));
    assert_eq!(sum.iq_files[0].bytes, 400_000);
    assert_eq!(sum.samples_processed, 100_000);
    assert!(!sum.clean);
    assert_eq!(sum.status, CaptureStatus::Partial);
}

/// The stall watchdog's clock: a stream whose reads return at once with nothing
/// (never a timeout, so the timeout count never trips) ends as stalled once it
/// has delivered nothing for `stall_after`, naming the sample it stalled at.
#[test]
fn a_stream_that_delivers_nothing_for_stall_after_ends_stalled() {
    struct Empty(Synth, u32);
    impl SampleSource for Empty {
        fn read(&mut self, buf: &mut [Complex<f32>], t: i64) -> Result<ReadOutcome> {
            self.1 += 1;
            if self.1 > 3 {
                std::thread::sleep(Duration::from_millis(1));
                return Ok(ReadOutcome::Samples(0));
            }
            let n = buf.len().min(500);
            self.0.read(&mut buf[..n], t)
        }
    }
    let mut s = settings(100_000);
    s.stall_after = Some(Duration::from_millis(200));
    let t0 = std::time::Instant::now();
    let src = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    let sum = run_capture(Empty(src, 0), &s, &AtomicBool::new(false), None, None).unwrap();
    let took = t0.elapsed();
    assert_eq!(sum.stop_reason, "stalled");
    assert_eq!(sum.samples_received, 1500);
    // Fewer samples than one FFT measured nothing: FAIL.
    assert_eq!(sum.status, CaptureStatus::Fail);
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert!(
        sum.errors
            .iter()
            .any(|e| e.contains("stream stalled at sample 1500")),
        "{:?}",
        sum.errors
    );
}

/// The pooled native CS16 path loses samples only by saying so: with a pool of one
/// buffer and a DSP slower than the stream, the capture is PARTIAL, not clean, and
/// counts every sample it received but could not analyse.
#[test]
fn a_native_capture_that_falls_behind_is_partial_with_the_count() {
    let src = Synth16(Synth::new(2e6, 100e6, 100.1e6, 0.0), Vec::new());
    let mut s = settings(600_000);
    s.pool_blocks = 1;
    let mut seen = 0u64;
    let sum = run_engine(
        NativeReader(src),
        &s,
        &AtomicBool::new(false),
        None,
        None,
        Some(&mut |x| {
            seen += x.len() as u64;
            std::thread::sleep(Duration::from_millis(20));
        }),
    )
    .unwrap();
    assert_eq!(sum.samples_received, 600_000);
    assert_partial_with_drops(&sum, seen);
}

/// The speed check measures the capture's own DSP on this machine and stops at
/// the stream time asked (or the budget): a real rate, never zero or infinite.
#[test]
fn the_speed_check_measures_the_dsp_of_the_settings() {
    let mut s = settings(1);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    for ci16 in [false, true] {
        // 0.1 s of a 2 MS/s stream: 200 000 samples, 13 blocks of 16384.
        let m = dsp_speed(&s, ci16, 2e6, 0.1, Duration::from_secs(30)).unwrap();
        assert_eq!(m.samples, 13 * 16384, "{m:?}");
        assert!(m.seconds > 0.0 && m.samples_per_s.is_finite() && m.samples_per_s > 0.0);
        // The budget bounds it whatever the rate asked.
        let t = Instant::now();
        let m = dsp_speed(&s, ci16, 1e15, 1.0, Duration::from_millis(50)).unwrap();
        assert!(
            m.seconds >= 0.05 && t.elapsed() < Duration::from_secs(5),
            "{m:?}"
        );
    }
    let mut bad = settings(1);
    bad.block_samples = 0;
    assert!(dsp_speed(&bad, false, 2e6, 0.1, Duration::from_millis(50)).is_err());
}

/// Samples the pool could not take leave gaps in the analysed stream: the capture
/// is PARTIAL with the count, the PSD is still made (of gap-free segments), and the
/// coherent CLKIN estimate is not made from the gappy data — no number, no verdict.
#[test]
fn a_capture_with_dropped_blocks_gives_no_clkin_number_and_is_partial() {
    let mut synth = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    synth.pace = true;
    let src = Synth16(synth, Vec::new());
    let mut s = settings(600_000);
    s.pool_blocks = 1;
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let sum = run_engine(
        NativeReader(src),
        &s,
        &AtomicBool::new(false),
        None,
        None,
        Some(&mut |_| std::thread::sleep(Duration::from_millis(20))),
    )
    .unwrap();
    assert!(sum.dropped_samples > 0, "{sum:?}");
    assert!(sum.gaps > 0, "{sum:?}");
    assert_eq!(sum.overflows, 0);
    assert_eq!(sum.overflow_lost_samples, Some(0));
    assert_eq!(sum.lost_samples, Some(sum.dropped_samples));
    assert_eq!(sum.status, CaptureStatus::Partial, "{sum:?}");
    assert!(!sum.clean);
    let k = sum.clkin.as_ref().unwrap();
    assert_eq!(k.status, ClkinStatus::NotMeasured, "{k:?}");
    assert_eq!(
        (k.measured_hz, k.ppm, k.ppm_uncertainty),
        (None, None, None)
    );
    assert!(k.tones.is_empty() && k.evidence.is_empty(), "{k:?}");
    let gaps = if sum.gaps == 1 {
        "1 gap".to_owned()
    } else {
        format!("{} gaps", sum.gaps)
    };
    assert!(
        k.detail.contains(&format!(
            "the stream lost {} samples in {gaps}",
            sum.dropped_samples
        )),
        "{}",
        k.detail
    );
    assert!(!k.detail.contains("weak") && !k.detail.contains("ambiguous"));
    // The PSD of what was analysed still finds the tone.
    assert!(sum.averages > 0);
    assert!((sum.peaks[0].frequency_hz - 100.1e6).abs() < 2e6 / 2048.0);
}

/// A live source that delivers whole blocks at once and says when it has delivered
/// everything asked.
struct Burst {
    synth: Synth,
    delivered: u64,
    total: u64,
    done: Arc<AtomicBool>,
}

impl SampleSource for Burst {
    fn read(&mut self, buf: &mut [Complex<f32>], t: i64) -> Result<ReadOutcome> {
        let r = self.synth.read(buf, t)?;
        if let ReadOutcome::Samples(n) = r {
            self.delivered += n as u64;
            if self.delivered >= self.total {
                self.done.store(true, Ordering::Relaxed);
            }
        }
        Ok(r)
    }
}

/// The pool's buffers are allocated when first needed, and never more than
/// `pool_blocks` of them: with the DSP held on the first block until the whole
/// stream has been read, exactly `pool_blocks` blocks are analysed and every other
/// sample is dropped and counted.
#[test]
fn the_pool_grows_only_to_its_bound() {
    let total = 20 * 16384;
    let done = Arc::new(AtomicBool::new(false));
    let src = Burst {
        synth: Synth::new(2e6, 100e6, 100.1e6, 0.0),
        delivered: 0,
        total,
        done: done.clone(),
    };
    let mut s = settings(total);
    s.pool_blocks = 4;
    let mut seen = 0u64;
    let sum = run_capture_with_hook(src, &s, &AtomicBool::new(false), None, None, &mut |x| {
        let t = Instant::now();
        while seen == 0 && !done.load(Ordering::Relaxed) && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(1));
        }
        seen += x.len() as u64;
    })
    .unwrap();
    assert!(done.load(Ordering::Relaxed), "the source never finished");
    assert_eq!(sum.samples_received, total);
    assert_eq!(sum.samples_processed, 4 * 16384, "{sum:?}");
    assert_eq!(sum.dropped_samples, 16 * 16384);
    assert_eq!(sum.lost_samples, Some(16 * 16384));
    assert_partial_with_drops(&sum, seen);
}

/// The first million samples of the CS16 source the native-recording tests capture
/// (2 MS/s, tone at +100 kHz, clock +1 ppm), read again from a fresh source, to hold
/// a recording to.
fn synth16_source_samples() -> Vec<Complex<i16>> {
    let mut again = Synth16(Synth::new(2e6, 100e6, 100.1e6, 1.0e-6), Vec::new());
    again.0.max_read = 5000;
    let mut want = vec![Complex::<i16>::default(); 1_000_000];
    let mut got = 0;
    while got < want.len() {
        let end = (got + 16384).min(want.len());
        if let ReadOutcome::Samples(n) = again.read_native(&mut want[got..end], 0).unwrap() {
            got += n;
        }
    }
    want
}
