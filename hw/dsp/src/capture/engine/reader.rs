//! The reader thread: it owns the source, reads into pool buffers, never waits for
//! the DSP or the writer, and counts what the stream lost, from the driver's stream
//! times when it gives them.
use super::{batch_blocks, Batch, Block, EngineSample};
use crate::capture::{BlockSource, CaptureSettings};
use crate::error::Result;
use crate::ReadOutcome;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct ReaderStats {
    pub(super) received: u64,
    pub(super) dropped: u64,
    pub(super) overflows: u64,
    pub(super) timeouts: u64,
    pub(super) short_reads: u64,
    pub(super) stop: &'static str,
    pub(super) error: Option<String>,
    /// How long the stream had delivered nothing when the watchdog stopped it.
    pub(super) quiet: Duration,
    /// Read timeouts in a row when the watchdog stopped it.
    pub(super) in_a_row: u32,
    /// Gaps between analysed samples (a run of lost samples with analysed ones
    /// before and after it).
    pub(super) gaps: u64,
    /// Samples lost in driver overflows, counted from the stream times.
    pub(super) overflow_lost: u64,
    /// An overflow's lost samples could not be counted (no trusted stream times).
    pub(super) overflow_loss_unknown: bool,
    /// Samples of digital silence a file skipped (counted as received, not analysed).
    pub(super) silent: u64,
}

/// The reader thread: owns the source and reads only into pool buffers. A live
/// source never waits for the consumer: with no free buffer it reads into
/// `scratch` and the samples count as dropped.
pub(super) struct Reader<'a, T, S> {
    source: S,
    settings: &'a CaptureSettings,
    cancel: &'a AtomicBool,
    progress: Option<&'a AtomicU64>,
    started: Instant,
    live: bool,
    free_rx: Receiver<Vec<T>>,
    full_tx: SyncSender<Batch<T>>,
    /// Filled blocks not handed to the DSP yet, and how many make a hand-over.
    batch: Batch<T>,
    batch_len: usize,
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
    pub(super) fn new(
        source: S,
        settings: &'a CaptureSettings,
        cancel: &'a AtomicBool,
        progress: Option<&'a AtomicU64>,
        started: Instant,
        free_rx: Receiver<Vec<T>>,
        full_tx: SyncSender<Batch<T>>,
    ) -> Self {
        let batch_len = batch_blocks(settings, source.is_live());
        Reader {
            batch: Vec::with_capacity(batch_len),
            batch_len,
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

    pub(super) fn run(mut self) -> ReaderStats {
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
                Ok(ReadOutcome::Silence(_)) => {
                    in_a_row = 0;
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
        self.hand_over();
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
                self.send(b);
            }
        }
    }

    /// A filled block for the DSP: into the batch, which goes when it is full.
    fn send(&mut self, b: Block<T>) {
        self.batch.push(b);
        if self.batch.len() >= self.batch_len {
            self.hand_over();
        }
    }

    /// Hand the blocks gathered so far to the DSP.
    fn hand_over(&mut self) {
        if !self.batch.is_empty() {
            let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(self.batch_len));
            // The queue holds as many batches as the pool has buffers: never full.
            let _ = self.full_tx.try_send(batch);
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
                self.hand_over();
                if let Ok(buf) = self.free_rx.recv_timeout(Duration::from_millis(100)) {
                    self.cur = fresh(buf);
                }
                return Next::Again;
            }
            // No buffer free: the DSP is behind. It gets what is gathered now, and
            // the samples of this read are dropped.
            Err(TryRecvError::Empty) => self.hand_over(),
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
        if let ReadOutcome::Silence(n) = outcome {
            // Skipped, not lost: counted as received, analysed never, and the
            // analysed stream breaks here as at a loss.
            let n = n.min(left);
            self.st.received += n;
            self.st.silent += n;
            if n > 0 {
                self.lost();
            }
            if let Some(p) = self.progress {
                p.store(self.st.received, Ordering::Relaxed);
            }
            return Ok(outcome);
        }
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
                            self.send(full);
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
