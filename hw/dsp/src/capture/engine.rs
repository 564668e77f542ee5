//! The engine proper, one function per phase: check the settings, run the reader
//! thread ([`Reader`]), the writer thread ([`write_loop`]) and the DSP on the
//! calling thread, then turn what they counted into a [`CaptureSummary`]
//! ([`summarize`]). Every capture — a radio stream or a file — ends here.
use super::{
    peak_annotations, BlockSource, CaptureSettings, CaptureStatus, CaptureSummary, EngineSample,
    PsdTrace,
};
use crate::dsp::{judge_clkin, ClkinEstimator, ClkinReport, ClkinStatus, Spectrum, Welch};
use crate::error::{Error, Result};
use crate::iq::{IqFileRecord, IqWriter, RecordFormat};
use crate::ReadOutcome;
use num_complex::Complex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

#[derive(Default)]
struct ReaderStats {
    received: u64,
    dropped: u64,
    overflows: u64,
    timeouts: u64,
    short_reads: u64,
    stop: &'static str,
    error: Option<String>,
    /// How long the stream had delivered nothing when the watchdog stopped it.
    quiet: Duration,
    /// Read timeouts in a row when the watchdog stopped it.
    in_a_row: u32,
    /// Gaps between analysed samples (a run of lost samples with analysed ones
    /// before and after it).
    gaps: u64,
    /// Samples lost in driver overflows, counted from the stream times.
    overflow_lost: u64,
    /// An overflow's lost samples could not be counted (no trusted stream times).
    overflow_loss_unknown: bool,
}

/// A filled block for the DSP: its buffer, how many samples are filled, and whether
/// samples were lost between the previous block and this one.
struct Block<T> {
    buf: Vec<T>,
    n: usize,
    after_gap: bool,
}

/// A block of `T` samples and how many of them are filled.
type Filled<T> = (Vec<T>, usize);

pub(crate) fn run_engine<T: EngineSample, S: BlockSource<T>>(
    source: S,
    settings: &CaptureSettings,
    cancel: &AtomicBool,
    progress: Option<&AtomicU64>,
    recorder: Option<IqWriter>,
    hook: &mut dyn FnMut(&[Complex<f32>]),
) -> Result<CaptureSummary> {
    check_settings::<T>(settings, recorder.as_ref())?;
    let mut dsp = Dsp::new::<T>(settings)?;
    let pool = Pool::new(settings);
    let started = Instant::now();
    let recording = recorder.is_some();
    let writer_free = pool.free_tx.clone();
    let reader = Reader::new(
        source,
        settings,
        cancel,
        progress,
        started,
        pool.free_rx,
        pool.full_tx,
    );

    let (stats, recorder) = std::thread::scope(|s| {
        let writer =
            recorder.map(|w| s.spawn(move || write_loop::<T>(w, pool.rec_rx, writer_free)));
        let reader = s.spawn(move || reader.run());
        for Block { buf, n, after_gap } in pool.full_rx.iter() {
            if after_gap {
                dsp.gap();
            }
            dsp.feed(&buf[..n], hook);
            if recording {
                // Only fails if the writer thread is gone (a panic, reported below).
                let _ = pool.rec_tx.send((buf, n));
            } else {
                let _ = pool.free_tx.try_send(buf);
            }
        }
        drop(pool.rec_tx);
        let stats = reader.join().map_err(|_| Error::WorkerPanic)?;
        let recorder = match writer {
            Some(h) => Some(h.join().map_err(|_| Error::WorkerPanic)?),
            None => None,
        };
        Ok::<_, Error>((stats, recorder))
    })?;
    let duration_s = started.elapsed().as_secs_f64();
    // The spectrum first: the recording's SigMF meta carries one annotation per
    // reported peak.
    let spec = dsp.welch.finish();
    let clkin = dsp.clkin.as_mut().map(|c| judge(c, settings, &stats));
    let (iq_files, recording_error) = close_recording(recorder, &spec, clkin.as_ref());
    Ok(summarize(Finished {
        settings,
        stats,
        processed: dsp.processed,
        duration_s,
        spec,
        iq_files,
        recording_error,
        clkin,
    }))
}

/// The DSP on the calling thread: Welch, the CLKIN estimator if asked, and what
/// they have seen.
struct Dsp {
    welch: Welch,
    clkin: Option<ClkinEstimator>,
    /// The DSP's float view of a native block (unused for CF32).
    as_float: Vec<Complex<f32>>,
    /// Samples fed.
    processed: u64,
    /// Samples were lost between two fed blocks: the CLKIN estimator, which needs
    /// one unbroken stretch, is fed no more.
    gapped: bool,
}

impl Dsp {
    /// The estimators of `settings`, for blocks of `T`.
    fn new<T: EngineSample>(settings: &CaptureSettings) -> Result<Self> {
        let welch = Welch::new(settings.welch.clone())?;
        let clkin = settings
            .clkin
            .clone()
            .map(ClkinEstimator::new)
            .transpose()?;
        let as_float = vec![
            Complex::<f32>::default();
            if T::RECORD == RecordFormat::Cf32 {
                0
            } else {
                settings.block_samples
            }
        ];
        Ok(Self {
            welch,
            clkin,
            as_float,
            processed: 0,
            gapped: false,
        })
    }

    /// One filled block: the hook sees it first, then Welch and CLKIN.
    fn feed<T: EngineSample>(&mut self, block: &[T], hook: &mut dyn FnMut(&[Complex<f32>])) {
        let x = T::as_cf32(block, &mut self.as_float);
        hook(x);
        self.welch.feed(x);
        if let Some(c) = self.clkin.as_mut().filter(|_| !self.gapped) {
            c.feed(x);
        }
        self.processed += block.len() as u64;
    }

    /// Samples were lost before the next block: no Welch segment spans the gap
    /// (the partial segment before it is discarded), and the coherent CLKIN
    /// estimate is not made (docs/reliability.md#7-lost-samples-and-gaps).
    fn gap(&mut self) {
        self.welch.break_stream();
        self.gapped = true;
    }
}

/// How fast the DSP of `settings` (Welch, the CLKIN estimator if asked, and the
/// conversion to float of a native `T` stream) runs on this machine, on synthetic
/// blocks of `settings.block_samples`: after one warm-up block, blocks until the DSP
/// has handled `stream_s` seconds of the stream at `rate_hz`, or `budget` is spent
/// (whichever comes first). Wall time, so a machine busy with other work measures
/// slower, as the capture would run.
pub(crate) fn measure_dsp<T: EngineSample>(
    settings: &CaptureSettings,
    rate_hz: f64,
    stream_s: f64,
    budget: Duration,
    synth: impl Fn(usize) -> T,
) -> Result<super::DspSpeed> {
    check_settings::<T>(settings, None)?;
    let mut dsp = Dsp::new::<T>(settings)?;
    let block: Vec<T> = (0..settings.block_samples).map(synth).collect();
    let mut none = |_: &[Complex<f32>]| {};
    dsp.feed(&block, &mut none);
    let want = (rate_hz * stream_s).max(0.0);
    let started = Instant::now();
    let mut samples = 0u64;
    loop {
        dsp.feed(&block, &mut none);
        samples += block.len() as u64;
        if samples as f64 >= want || started.elapsed() >= budget {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(super::DspSpeed {
        samples,
        seconds,
        samples_per_s: samples as f64 / seconds.max(1e-9),
    })
}

/// The buffer pool and the queues between the reader, the DSP and the writer.
struct Pool<T> {
    free_tx: SyncSender<Vec<T>>,
    free_rx: Receiver<Vec<T>>,
    full_tx: SyncSender<Block<T>>,
    full_rx: Receiver<Block<T>>,
    rec_tx: SyncSender<Filled<T>>,
    rec_rx: Receiver<Filled<T>>,
}

impl<T: EngineSample> Pool<T> {
    /// The queues for at most `pool_blocks` buffers of `block_samples`. The pool
    /// starts empty: the reader allocates a buffer only when no used one is free
    /// ([`Reader::take_free_buffer`]), so the memory the pool takes is what the
    /// stream needed, never more than its bound.
    fn new(settings: &CaptureSettings) -> Self {
        let (free_tx, free_rx) = sync_channel::<Vec<T>>(settings.pool_blocks);
        let (full_tx, full_rx) = sync_channel::<Block<T>>(settings.pool_blocks);
        // DSP → writer: every buffer may be waiting there, so a send never blocks for long.
        let (rec_tx, rec_rx) = sync_channel::<Filled<T>>(settings.pool_blocks);
        Self {
            free_tx,
            free_rx,
            full_tx,
            full_rx,
            rec_tx,
            rec_rx,
        }
    }
}

/// The CLKIN verdict on what the estimator measured and what the driver said; not
/// measured when samples were lost between analysed ones.
fn judge(c: &mut ClkinEstimator, settings: &CaptureSettings, stats: &ReaderStats) -> ClkinReport {
    if stats.gaps > 0 {
        let cfg = c.config();
        return ClkinReport::not_measured(
            cfg.tone_hz,
            cfg.tolerance_ppm,
            format!(
                "not measured: {}; the coherent estimate needs one unbroken stretch",
                lost_in_words(stats)
            ),
        );
    }
    let est = c.finish();
    let cfg = c.config();
    judge_clkin(
        cfg.tone_hz,
        cfg.tolerance_ppm,
        est.as_ref(),
        &settings.clock_evidence,
        c.tones(),
    )
}

/// Samples lost, overall: the ones dropped and the ones driver overflows lost;
/// `None` when an overflow's loss could not be counted.
fn lost_samples(stats: &ReaderStats) -> Option<u64> {
    (!stats.overflow_loss_unknown).then_some(stats.dropped + stats.overflow_lost)
}

/// What the stream lost, in words: `the stream lost 4096 samples in 2 gaps`.
fn lost_in_words(stats: &ReaderStats) -> String {
    let gaps = match stats.gaps {
        1 => "1 gap".to_owned(),
        k => format!("{k} gaps"),
    };
    match lost_samples(stats) {
        Some(n) => format!("the stream lost {n} samples in {gaps}"),
        None => format!(
            "the stream had {gaps} ({} dropped samples, {} driver overflow(s) that lost an \
             unknown number of samples: the driver gives no stream times)",
            stats.dropped, stats.overflows
        ),
    }
}

/// The settings the engine refuses before it starts.
fn check_settings<T: EngineSample>(
    settings: &CaptureSettings,
    recorder: Option<&IqWriter>,
) -> Result<()> {
    if settings.samples == 0 {
        // Nothing asked is nothing to report: never a clean PASS of no samples.
        return Err(Error::InvalidSetting {
            field: "samples",
            detail: "a capture must ask for at least one sample".into(),
        });
    }
    if settings.block_samples == 0 || settings.pool_blocks == 0 {
        return Err(Error::InvalidSetting {
            field: "block_samples",
            detail: "block_samples and pool_blocks must be > 0".into(),
        });
    }
    if let Some(w) = recorder {
        if w.record_format() != T::RECORD {
            return Err(Error::InvalidSetting {
                field: "record_format",
                detail: format!(
                    "a {} recording of a {} stream (samples are never converted for the recording)",
                    w.record_format().name(),
                    T::RECORD.name()
                ),
            });
        }
    }
    Ok(())
}

/// The writer thread: records each block, then hands the buffer back to the pool.
/// After a write error it keeps draining (the capture goes on, the recording has
/// stopped and says why).
fn write_loop<T: EngineSample>(
    mut w: IqWriter,
    rec_rx: Receiver<Filled<T>>,
    free: SyncSender<Vec<T>>,
) -> (IqWriter, Option<String>) {
    let mut err: Option<String> = None;
    for (buf, n) in rec_rx.iter() {
        if err.is_none() {
            if let Err(e) = T::record(&mut w, &buf[..n]) {
                tracing::warn!("recording stopped: {e}");
                err = Some(e.to_string());
            }
        }
        let _ = free.try_send(buf);
    }
    (w, err)
}

/// The reader thread: owns the source and reads only into pool buffers. A live
/// source never waits for the consumer: with no free buffer it reads into
/// `scratch` and the samples count as dropped.
struct Reader<'a, T, S> {
    source: S,
    settings: &'a CaptureSettings,
    cancel: &'a AtomicBool,
    progress: Option<&'a AtomicU64>,
    started: Instant,
    live: bool,
    free_rx: Receiver<Vec<T>>,
    full_tx: SyncSender<Block<T>>,
    scratch: Vec<T>,
    /// The pool buffer being filled and how far.
    cur: Option<Block<T>>,
    /// Pool buffers not allocated yet (of `pool_blocks`).
    unallocated: usize,
    st: ReaderStats,
    /// Samples were lost since the last one that went to the DSP.
    gap_open: bool,
    /// Some samples went to the DSP.
    analysed_any: bool,
    times: StreamTimes,
}

/// The driver's stream times, checked against the sample count: trusted once two
/// consecutive reads agree to half a sample, and then an overflow's lost samples
/// are the jump in time × the rate.
#[derive(Default)]
struct StreamTimes {
    /// The first time seen (ns): times are compared relative to it, so an epoch
    /// time (~1.7e18 ns) keeps nanosecond resolution as an `f64`.
    origin_ns: Option<i64>,
    /// The time (ns after `origin_ns`) the next sample should carry, after the last read.
    expect_ns: Option<f64>,
    trusted: bool,
    /// An overflow since the last read that delivered samples.
    overflow_pending: bool,
}

impl StreamTimes {
    /// A read delivered `n > 0` samples, the first at `time_ns`: the samples lost
    /// in the overflow(s) before it, when they can be counted; `Err(())` when an
    /// overflow's loss cannot be.
    fn delivered(
        &mut self,
        time_ns: Option<i64>,
        n: usize,
        rate_hz: f64,
    ) -> std::result::Result<u64, ()> {
        let period_ns = 1e9 / rate_hz;
        let usable = period_ns.is_finite() && period_ns > 0.0;
        let pending = std::mem::take(&mut self.overflow_pending);
        let origin = *self.origin_ns.get_or_insert(time_ns.unwrap_or(0));
        let relative = time_ns.and_then(|t| t.checked_sub(origin));
        let Some(t) = relative.filter(|_| usable).map(|t| t as f64) else {
            self.expect_ns = None;
            self.trusted = false;
            return if pending { Err(()) } else { Ok(0) };
        };
        let expected = self.expect_ns.replace(t + n as f64 * period_ns);
        let lost = match expected {
            // Half a sample, plus the driver's rounding to whole nanoseconds.
            Some(e) if !pending => {
                self.trusted = (t - e).abs() <= period_ns / 2.0 + 1.0;
                Ok(0)
            }
            Some(e) if self.trusted => {
                let k = ((t - e) / period_ns).round();
                if k.is_finite() && k >= 0.0 {
                    Ok(k as u64)
                } else {
                    Err(())
                }
            }
            None if !pending => Ok(0),
            _ => Err(()),
        };
        if pending {
            // The time base after an overflow is checked again from scratch.
            self.trusted = self.trusted && lost.is_ok();
        }
        lost
    }
}

/// What to do after looking for a free buffer.
enum Next {
    Read,
    Again,
    Stop(&'static str),
}

impl<'a, T: EngineSample, S: BlockSource<T>> Reader<'a, T, S> {
    fn new(
        source: S,
        settings: &'a CaptureSettings,
        cancel: &'a AtomicBool,
        progress: Option<&'a AtomicU64>,
        started: Instant,
        free_rx: Receiver<Vec<T>>,
        full_tx: SyncSender<Block<T>>,
    ) -> Self {
        Reader {
            live: source.is_live(),
            source,
            settings,
            cancel,
            progress,
            started,
            free_rx,
            full_tx,
            // Allocated the first time samples are dropped.
            scratch: Vec::new(),
            cur: None,
            unallocated: settings.pool_blocks,
            st: ReaderStats {
                stop: "complete",
                ..Default::default()
            },
            gap_open: false,
            analysed_any: false,
            times: StreamTimes::default(),
        }
    }

    fn run(mut self) -> ReaderStats {
        let mut in_a_row = 0u32;
        // The stall watchdog's clock: the last time the stream delivered (or
        // reported an overflow, which shows it is alive).
        let mut last_alive = Instant::now();
        while self.st.received < self.settings.samples {
            if self.cancel.load(Ordering::Relaxed) {
                self.st.stop = "cancelled";
                break;
            }
            if self
                .settings
                .deadline
                .is_some_and(|d| self.started.elapsed() >= d)
            {
                self.st.stop = "deadline";
                break;
            }
            match self.take_free_buffer() {
                Next::Read => {}
                Next::Again => continue,
                Next::Stop(why) => {
                    self.st.stop = why;
                    break;
                }
            }
            match self.read_once() {
                Ok(ReadOutcome::Samples(n)) => {
                    in_a_row = 0;
                    if n > 0 {
                        last_alive = Instant::now();
                    }
                }
                Ok(ReadOutcome::Overflow) => {
                    self.st.overflows += 1;
                    self.times.overflow_pending = true;
                    self.lost();
                    last_alive = Instant::now();
                }
                Ok(ReadOutcome::Timeout) => {
                    self.st.timeouts += 1;
                    in_a_row += 1;
                    if in_a_row >= self.settings.max_consecutive_timeouts {
                        self.st.stop = "stalled";
                        self.st.quiet = last_alive.elapsed();
                        self.st.in_a_row = in_a_row;
                        break;
                    }
                }
                Err(e) => {
                    self.st.error = Some(e.to_string());
                    self.st.stop = "source error";
                    break;
                }
            }
            if self.live
                && self
                    .settings
                    .stall_after
                    .is_some_and(|d| last_alive.elapsed() >= d)
            {
                self.st.stop = "stalled";
                self.st.quiet = last_alive.elapsed();
                self.st.in_a_row = in_a_row;
                break;
            }
        }
        self.send_partial();
        if self.times.overflow_pending {
            // No read after the last overflow: its loss is unknown.
            self.st.overflow_loss_unknown = true;
        }
        self.st
    }

    /// Samples were lost: the block being filled ends here, so the gap lies
    /// between two blocks and the DSP is told of it with the next one.
    fn lost(&mut self) {
        self.send_partial();
        self.gap_open = true;
    }

    /// Hand the block being filled to the DSP, if it holds any samples.
    fn send_partial(&mut self) {
        if self.cur.as_ref().is_some_and(|b| b.n > 0) {
            if let Some(b) = self.cur.take() {
                let _ = self.full_tx.try_send(b);
            }
        }
    }

    /// A buffer to read into: a used one the DSP (or the writer) gave back, else a
    /// new one while the pool is below its bound.
    fn take_free_buffer(&mut self) -> Next {
        if self.cur.is_some() {
            return Next::Read;
        }
        let fresh = |buf| {
            Some(Block {
                buf,
                n: 0,
                after_gap: false,
            })
        };
        match self.free_rx.try_recv() {
            Ok(buf) => self.cur = fresh(buf),
            Err(TryRecvError::Empty) if self.unallocated > 0 => {
                self.unallocated -= 1;
                self.cur = fresh(vec![T::default(); self.settings.block_samples]);
            }
            // A source that can wait (a file) waits for the consumer instead of
            // dropping samples; cancel and deadline still apply.
            Err(TryRecvError::Empty) if !self.live => {
                if let Ok(buf) = self.free_rx.recv_timeout(Duration::from_millis(100)) {
                    self.cur = fresh(buf);
                }
                return Next::Again;
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => return Next::Stop("consumer stopped"),
        }
        Next::Read
    }

    /// One read into the current pool buffer (or the scratch buffer), counted.
    fn read_once(&mut self) -> Result<ReadOutcome> {
        let block = self.settings.block_samples;
        let left = self.settings.samples - self.st.received;
        let (target, into_pool) = match &mut self.cur {
            Some(b) => {
                let want = (block - b.n).min(left as usize);
                (&mut b.buf[b.n..b.n + want], true)
            }
            None => {
                let want = block.min(left as usize);
                if self.scratch.len() < want {
                    self.scratch.resize(block, T::default());
                }
                (&mut self.scratch[..want], false)
            }
        };
        let want = target.len();
        let outcome = self.source.read_block(target, self.settings.timeout_us)?;
        if let ReadOutcome::Samples(n) = outcome {
            let n = n.min(want);
            if n < want {
                self.st.short_reads += 1;
            }
            self.st.received += n as u64;
            if n > 0 {
                let time_ns = self.source.time_ns();
                match self
                    .times
                    .delivered(time_ns, n, self.settings.welch.sample_rate_hz)
                {
                    Ok(0) => {}
                    Ok(k) => self.st.overflow_lost += k,
                    Err(()) => self.st.overflow_loss_unknown = true,
                }
            }
            if into_pool && n > 0 {
                let gap = std::mem::take(&mut self.gap_open) && self.analysed_any;
                self.analysed_any = true;
                if let Some(b) = &mut self.cur {
                    if gap {
                        // The block is fresh: a loss ends the one before it.
                        b.after_gap = true;
                        self.st.gaps += 1;
                    }
                    b.n += n;
                    if b.n == block {
                        if let Some(full) = self.cur.take() {
                            let _ = self.full_tx.try_send(full);
                        }
                    }
                }
            } else if n > 0 {
                self.st.dropped += n as u64;
                self.gap_open = true;
            }
            if let Some(p) = self.progress {
                p.store(self.st.received, Ordering::Relaxed);
            }
        }
        Ok(outcome)
    }
}

/// The recording closed, with one SigMF annotation per reported peak and one for
/// the CLKIN check, if any: its files and why it stopped early, if it did.
fn close_recording(
    recorder: Option<(IqWriter, Option<String>)>,
    spec: &Spectrum,
    clkin: Option<&ClkinReport>,
) -> (Vec<IqFileRecord>, Option<String>) {
    let Some((mut w, mut recording_error)) = recorder else {
        return (Vec::new(), None);
    };
    let mut notes = peak_annotations(spec);
    notes.extend(clkin.map(clkin_annotation));
    w.annotate(notes);
    // A recording cut short (a full disk) is still listed, marked partial.
    let (files, e) = w.finish_partial();
    if let (None, Some(e)) = (&recording_error, e) {
        recording_error = Some(e.to_string());
    }
    (files, recording_error)
}

/// The CLKIN check as a SigMF annotation: its verdict and number as the label, its
/// detail as the comment, the band it searched (the tolerance around the tone on
/// the receiver's axis, widened to the tone found) as the edges.
fn clkin_annotation(c: &ClkinReport) -> crate::PeakAnnotation {
    let status = match c.status {
        ClkinStatus::Pass => "PASS",
        ClkinStatus::Fail => "FAIL",
        ClkinStatus::NotMeasured => "NOT MEASURED",
    };
    let number = match (c.ppm, c.ppm_uncertainty) {
        (Some(p), Some(u)) => format!(" {} (1σ)", crate::fmt_uncertain(p, u, "ppm")),
        _ => String::new(),
    };
    let tol = c.tolerance_ppm * 1e-6;
    let (mut lo, mut hi) = (c.tone_hz / (1.0 + tol), c.tone_hz / (1.0 - tol).max(1e-9));
    if let Some(m) = c.measured_hz.filter(|m| m.is_finite()) {
        (lo, hi) = (lo.min(m), hi.max(m));
    }
    crate::PeakAnnotation {
        label: format!(
            "CLKIN {status}:{number} reference {:.6} MHz, tolerance {} ppm",
            c.tone_hz / 1e6,
            c.tolerance_ppm
        ),
        freq_lower_hz: lo,
        freq_upper_hz: hi,
        comment: Some(c.detail.clone()),
    }
}

/// Everything a finished capture counted and measured.
struct Finished<'a> {
    settings: &'a CaptureSettings,
    stats: ReaderStats,
    processed: u64,
    duration_s: f64,
    spec: Spectrum,
    iq_files: Vec<IqFileRecord>,
    recording_error: Option<String>,
    clkin: Option<ClkinReport>,
}

/// The errors met on the way, in words.
fn errors_of(f: &Finished) -> Vec<String> {
    let (settings, stats) = (f.settings, &f.stats);
    let mut errors = Vec::new();
    if let Some(e) = &stats.error {
        errors.push(format!("source: {e}"));
    }
    if stats.stop == "stalled" {
        // A radio on another host whose server died, a radio unplugged, a stalled
        // driver: the stream goes quiet without an error. Say so in words.
        errors.push(format!(
            "source: stream stalled at sample {} (after {} of {} samples): no samples for {:.1} s \
             ({} read timeouts of {} ms in a row); the radio (or the server serving it) stopped delivering",
            stats.received,
            stats.received,
            settings.samples,
            stats.quiet.as_secs_f64(),
            stats.in_a_row,
            settings.timeout_us / 1000,
        ));
    }
    if let Some(e) = &f.recording_error {
        errors.push(format!("recording: {e}"));
    }
    if stats.overflow_loss_unknown {
        errors.push(format!(
            "source: {} driver overflow(s); the samples they lost are not counted (the driver \
             gives no stream times)",
            stats.overflows
        ));
    }
    errors
}

/// PASS, PARTIAL or FAIL, and whether the capture was clean.
fn verdict(f: &Finished) -> (CaptureStatus, bool) {
    let (settings, stats) = (f.settings, &f.stats);
    let cancelled = stats.stop == "cancelled";
    let clean = stats.received == settings.samples
        && f.processed == settings.samples
        && stats.overflows == 0
        && stats.dropped == 0
        && stats.timeouts == 0
        && stats.error.is_none()
        && f.recording_error.is_none();
    // Nothing measured is a failure, whether the source errored or stayed silent until
    // the deadline; an operator's cancel before the first sample stays PARTIAL.
    let source_failed = stats.received == 0 && !cancelled;
    let clkin_failed = f
        .clkin
        .as_ref()
        .is_some_and(|r| r.status == ClkinStatus::Fail);
    let status = if source_failed || clkin_failed {
        CaptureStatus::Fail
    } else if clean {
        CaptureStatus::Pass
    } else {
        CaptureStatus::Partial
    };
    (status, clean)
}

fn summarize(f: Finished) -> CaptureSummary {
    let errors = errors_of(&f);
    let (status, clean) = verdict(&f);
    let settings = f.settings;
    let spec = f.spec;
    let psd = (settings.psd_points > 0 && spec.averages > 0).then(|| {
        let (start_hz, step_hz, db) = spec.decimated(settings.psd_points);
        PsdTrace {
            start_hz,
            step_hz,
            db,
        }
    });
    let finite = |v: f64| v.is_finite().then_some(v);
    CaptureSummary {
        device: serde_json::Value::Null,
        requested: serde_json::Value::Null,
        actual: serde_json::Value::Null,
        samples_requested: settings.samples,
        samples_received: f.stats.received,
        samples_processed: f.processed,
        overflows: f.stats.overflows,
        overflow_lost_samples: (!f.stats.overflow_loss_unknown).then_some(f.stats.overflow_lost),
        lost_samples: lost_samples(&f.stats),
        gaps: f.stats.gaps,
        dropped_samples: f.stats.dropped,
        timeouts: f.stats.timeouts,
        short_reads: f.stats.short_reads,
        duration_s: f.duration_s,
        fft_size: spec.fft_size,
        averages: spec.averages,
        peaks: spec.peaks,
        noise_floor_db: finite(spec.noise_floor_db),
        mean_power_dbfs: finite(spec.mean_power_dbfs),
        clipped_fraction: spec.clipped_fraction,
        clkin: f.clkin,
        iq_files: f.iq_files,
        recording_error: f.recording_error,
        status,
        clean,
        cancelled: f.stats.stop == "cancelled",
        stop_reason: f.stats.stop.to_string(),
        errors,
        psd,
        clock: None,
    }
}
