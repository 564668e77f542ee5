//! The DSP on several threads against the DSP on one: the same PSD (to 0.001 dB),
//! peaks, counts and CLKIN figures, and the recording in stream order.
use super::*;

/// A capture of `samples` from a 2 MS/s synthetic radio (a tone 1 ppm off, noise,
/// reads of 5000 samples, an overflow at `overflow_at` reads), the DSP on
/// `threads` threads. The pool holds the whole capture, so nothing is dropped
/// however slow the DSP runs on a busy machine.
fn capture(threads: usize, overflow_at: Option<u64>) -> CaptureSummary {
    let mut src = Synth::new(2e6, 100e6, 100.1e6, 1.0e-6);
    src.max_read = 5000;
    src.overflow_at = overflow_at;
    let mut s = settings(1_500_000);
    s.pool_blocks = 100;
    s.dsp_threads = threads;
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    run_capture(src, &s, &AtomicBool::new(false), None, None).unwrap()
}

/// What must not change with the number of DSP threads.
fn assert_same(one: &CaptureSummary, many: &CaptureSummary, what: &str) {
    assert_eq!(one.samples_processed, many.samples_processed, "{what}");
    assert_eq!(one.dropped_samples, 0, "{what}");
    assert_eq!(many.dropped_samples, 0, "{what}");
    assert_eq!(one.gaps, many.gaps, "{what}");
    assert_eq!(one.averages, many.averages, "{what}");
    assert_eq!(one.status, many.status, "{what}");
    assert_eq!(one.clipped_fraction, many.clipped_fraction, "{what}");
    let (p, q) = (one.psd.as_ref().unwrap(), many.psd.as_ref().unwrap());
    assert_eq!(p.db.len(), q.db.len());
    let worst =
        p.db.iter()
            .zip(&q.db)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
    assert!(worst < 1e-3, "{what}: PSD {worst} dB apart");
    let nf = |s: &CaptureSummary| s.noise_floor_db.unwrap();
    assert!((nf(one) - nf(many)).abs() < 1e-3, "{what}");
    let mp = |s: &CaptureSummary| s.mean_power_dbfs.unwrap();
    assert!((mp(one) - mp(many)).abs() < 1e-9, "{what}");
    // Peaks between bins are solved from three bins: the same to a thousandth of a bin.
    assert_eq!(one.peaks.len(), many.peaks.len(), "{what}");
    let bin = 2e6 / one.fft_size as f64;
    for (a, b) in one.peaks.iter().zip(&many.peaks) {
        assert!(
            (a.frequency_hz - b.frequency_hz).abs() < 1e-3 * bin,
            "{what}: {a:?} {b:?}"
        );
    }
    assert!(!one.peaks.is_empty());
    let (a, b) = (one.clkin.as_ref().unwrap(), many.clkin.as_ref().unwrap());
    assert_eq!(a.status, b.status, "{what}");
    // The CLKIN estimator is fed the same blocks in the same order: the same figures.
    assert_eq!(a.ppm, b.ppm, "{what}");
    assert_eq!(a.ppm_uncertainty, b.ppm_uncertainty, "{what}");
}

/// Two, three and eight DSP threads give one thread's PSD, peaks, counts and
/// CLKIN figures, with and without a gap (an overflow) in the stream.
#[test]
fn dsp_threads_give_the_one_thread_result() {
    for overflow_at in [None, Some(77)] {
        let one = capture(1, overflow_at);
        if overflow_at.is_none() {
            assert_eq!(one.status, CaptureStatus::Pass, "{one:?}");
            let ppm = one.clkin.as_ref().and_then(|k| k.ppm).unwrap();
            assert!((ppm - 1.0).abs() < 0.01, "{ppm}");
        } else {
            assert_eq!(one.gaps, 1, "{one:?}");
            let k = one.clkin.as_ref().unwrap();
            assert_eq!(k.status, ClkinStatus::NotMeasured, "{k:?}");
        }
        for threads in [2, 3, 8] {
            let many = capture(threads, overflow_at);
            assert_same(
                &one,
                &many,
                &format!("{threads} threads, overflow at {overflow_at:?}"),
            );
        }
    }
}

/// A 20 MS/s live stream of 16 Ki-sample blocks: the reader hands the DSP four blocks
/// at a time. Against the same stream from a source that waits (one block per
/// hand-over): the same figures, on one DSP thread and on three, with and without
/// a gap.
#[test]
fn blocks_handed_over_in_batches_give_the_block_by_block_result() {
    let run = |live: bool, threads: usize, overflow_at: Option<u64>| {
        let mut src = Synth::new(20e6, 100e6, 100.1e6, 1.0e-6);
        src.max_read = 5000;
        src.live = live;
        src.overflow_at = overflow_at;
        let mut w = WelchConfig::new(2048, 20e6);
        w.center_hz = Some(100e6);
        let mut s = CaptureSettings::new(3_000_000, w);
        s.block_samples = 16384;
        // The whole capture fits the pool: nothing is dropped however slow the DSP.
        s.pool_blocks = 200;
        s.dsp_threads = threads;
        s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 20e6, 2.0));
        assert_eq!(engine::batch_blocks(&s, live), if live { 4 } else { 1 });
        run_capture(src, &s, &AtomicBool::new(false), None, None).unwrap()
    };
    for overflow_at in [None, Some(131)] {
        let by_block = run(false, 1, overflow_at);
        assert_eq!(by_block.samples_received, 3_000_000);
        assert_eq!(
            by_block.gaps,
            u64::from(overflow_at.is_some()),
            "{by_block:?}"
        );
        for threads in [1, 3] {
            let batched = run(true, threads, overflow_at);
            assert_eq!(batched.samples_received, 3_000_000);
            assert_same(
                &by_block,
                &batched,
                &format!("batched, {threads} threads, overflow at {overflow_at:?}"),
            );
        }
    }
}

/// Blocks per hand-over: about 4 ms of a live stream, at most 16 and a quarter of
/// the pool; one for a source that waits, or when a block lasts longer.
#[test]
fn a_hand_over_gathers_about_four_milliseconds_of_a_live_stream() {
    let at = |rate: f64, block: usize, pool: usize, live: bool| {
        let mut s = CaptureSettings::new(1, WelchConfig::new(2048, rate));
        s.block_samples = block;
        s.pool_blocks = pool;
        engine::batch_blocks(&s, live)
    };
    assert_eq!(at(200e6, 1 << 16, 1526, true), 12);
    assert_eq!(at(61.44e6, 1 << 16, 469, true), 3);
    assert_eq!(at(20e6, 1 << 16, 64, true), 1);
    assert_eq!(at(2e6, 1 << 16, 64, true), 1);
    assert_eq!(at(200e6, 1 << 16, 1526, false), 1);
    assert_eq!(at(200e6, 1 << 12, 10_000, true), 16);
    assert_eq!(at(200e6, 1 << 16, 8, true), 2);
    assert_eq!(at(200e6, 1 << 16, 2, true), 1);
    assert_eq!(at(f64::NAN, 1 << 16, 64, true), 1);
}

/// Native CS16 recorded with the DSP on three threads: the recording holds every
/// sample the source delivered, in order (the writer takes the blocks from the
/// threads in turn), and the figures are one thread's.
#[test]
fn a_recording_made_beside_dsp_threads_is_in_stream_order() {
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: usize, name: &str| {
        let p = dir.path().join(name);
        let meta = crate::iq::RecordingMeta {
            sample_rate_hz: 2e6,
            ..Default::default()
        };
        let w = IqWriter::create_with(&p, crate::IqFormat::Sigmf, RecordFormat::Ci16, meta, None)
            .unwrap();
        let mut src = Synth16(Synth::new(2e6, 100e6, 100.1e6, 1.0e-6), Vec::new());
        src.0.max_read = 5000;
        let mut s = settings(1_000_000);
        s.pool_blocks = 100;
        s.dsp_threads = threads;
        s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
        let sum = run_capture_native(src, &s, &AtomicBool::new(false), None, Some(w)).unwrap();
        (sum, std::fs::read(&p).unwrap())
    };
    let (one, one_data) = run(1, "one.sigmf-data");
    let (many, data) = run(3, "three.sigmf-data");
    assert_eq!(many.status, CaptureStatus::Pass, "{many:?}");
    assert_same(&one, &many, "native, 3 threads");
    let want = synth16_source_samples();
    let want: Vec<u8> = want
        .iter()
        .flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()])
        .flatten()
        .collect();
    assert_eq!(data.len(), want.len());
    let first_wrong = data.iter().zip(&want).position(|(a, b)| a != b);
    assert_eq!(first_wrong, None, "the recording differs from the source");
    assert_eq!(data, one_data);
}

/// One core, a hook or a segment longer than an eighth of a block: one thread.
#[test]
fn one_thread_when_more_cannot_help_or_must_not_run() {
    let mut s = settings(1000);
    s.dsp_threads = 4;
    assert_eq!(engine::dsp_threads(&s, false), 4);
    assert_eq!(engine::dsp_threads(&s, true), 1);
    s.dsp_threads = 1;
    assert_eq!(engine::dsp_threads(&s, false), 1);
    s.dsp_threads = 1000;
    assert_eq!(engine::dsp_threads(&s, false), 8);
    s.dsp_threads = 4;
    s.welch.fft_size = s.block_samples / 4;
    assert_eq!(engine::dsp_threads(&s, false), 1);
    s.dsp_threads = 0;
    s.welch.fft_size = 2048;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(engine::dsp_threads(&s, false), cores.min(8));
}
