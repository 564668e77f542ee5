//! The DSP spread over several threads (docs/architecture.md#the-capture-engine).
//!
//! The calling thread deals the filled blocks to the DSP threads in turn (block
//! `i` to thread `i mod k`), each with its carry: the samples, from the blocks
//! before it, of the Welch segments it completes ([`SegmentCarry`]). Each thread
//! runs its own Welch estimator over its block (whose kernels read CS16 themselves;
//! CS8 is converted to float first), then feeds the one CLKIN estimator when its
//! turn in stream order comes ([`InOrder`]; CS16 converted piece by piece), and
//! hands the buffer back to the pool or on to the writer, which reads the threads'
//! queues in the same turn. At the end the Welch estimates are merged
//! ([`Welch::merge`]): the segments are the ones a single estimator makes, only
//! the order of the sums differs.
use super::{Batch, Block, Dsp, EngineSample, Filled, Lanes};
use crate::capture::CaptureSettings;
use crate::dsp::welch::SegmentCarry;
use crate::dsp::{ClkinEstimator, Welch};
use crate::error::{Error, Result};
use num_complex::Complex;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Blocks queued for each DSP thread beside the one it works on: room for its share
/// of a whole batch from the reader, so that dealing one does not wait on the
/// threads block by block.
const QUEUE_PER_THREAD: usize = 8;

/// A block dealt to a DSP thread.
struct Job<T> {
    /// Its place in the stream (0, 1, …).
    seq: u64,
    buf: Vec<T>,
    n: usize,
    /// The samples before it that its first segments need.
    carry: Vec<T>,
    /// Samples were lost just before it.
    after_gap: bool,
}

/// The estimators of `threads` DSP threads for `settings`, made before anything
/// streams: `dsp` (no float buffer of its own; its CLKIN estimator is handed from
/// thread to thread) and a Welch estimator per thread.
pub(super) fn prepare(settings: &CaptureSettings, threads: usize) -> Result<(Dsp, Vec<Welch>)> {
    let dsp = Dsp::new::<Complex<f32>>(settings)?;
    let welches = (0..threads)
        .map(|_| Welch::new(settings.welch.clone()))
        .collect::<Result<Vec<_>>>()?;
    Ok((dsp, welches))
}

/// Run the DSP ([`prepare`]d) over the blocks of `lanes` until the reader stops,
/// one thread per Welch estimator; the merged result.
pub(super) fn run<T: EngineSample>(
    settings: &CaptureSettings,
    (mut dsp, welches): (Dsp, Vec<Welch>),
    lanes: Lanes<T>,
) -> Result<Dsp> {
    let threads = welches.len();
    let order = InOrder::new(dsp.clkin.take());
    let n = settings.welch.fft_size;
    // Carry buffers: one per job that can be queued or worked on, and one more.
    let spares = threads * (QUEUE_PER_THREAD + 1) + 1;
    let (spare_tx, spare_rx) = sync_channel::<Vec<T>>(spares);
    for _ in 0..spares {
        let _ = spare_tx.try_send(Vec::with_capacity(n));
    }
    let Lanes { full, free, rec } = lanes;
    let mut rec = rec.into_iter();
    let parts = std::thread::scope(|s| {
        let mut jobs = Vec::with_capacity(threads);
        let mut workers = Vec::with_capacity(threads);
        for welch in welches {
            let (tx, rx) = sync_channel::<Job<T>>(QUEUE_PER_THREAD);
            jobs.push(tx);
            let worker = Worker {
                welch,
                order: &order,
                spare: spare_tx.clone(),
                free: free.clone(),
                rec: rec.next(),
                head: float_room::<T>(n),
                body: float_room::<T>(settings.block_samples),
                processed: 0,
            };
            workers.push(s.spawn(move || worker.run(rx)));
        }
        // Only the threads hold the way back: when they are all gone, so is the dealer.
        drop(spare_tx);
        deal(&full, &jobs, &spare_rx, n, settings.welch.hop());
        // No more blocks: the threads finish what they hold and end.
        drop(jobs);
        workers
            .into_iter()
            .map(|h| h.join().map_err(|_| Error::WorkerPanic))
            .collect::<Result<Vec<_>>>()
    })?;
    for (welch, processed) in &parts {
        dsp.welch.merge(welch)?;
        dsp.processed += processed;
    }
    dsp.clkin = order.into_clkin();
    Ok(dsp)
}

/// Deal the blocks of `full` to the threads' queues `jobs` in turn, each with its
/// carry, until the reader stops (or a thread is gone: it panicked, which its join
/// reports).
fn deal<T: EngineSample>(
    full: &Receiver<Batch<T>>,
    jobs: &[SyncSender<Job<T>>],
    spares: &Receiver<Vec<T>>,
    fft_size: usize,
    hop: usize,
) {
    let mut carry = SegmentCarry::<T>::new(fft_size, hop);
    for (seq, Block { buf, n, after_gap }) in full.iter().flatten().enumerate() {
        if after_gap {
            carry.restart();
        }
        // A carry buffer comes back as soon as a thread has taken its block's carry.
        let Ok(mut c) = spares.recv() else {
            return;
        };
        c.clear();
        c.extend_from_slice(carry.carry());
        carry.advance(&buf[..n]);
        let job = Job {
            seq: seq as u64,
            buf,
            n,
            carry: c,
            after_gap,
        };
        let Some(to) = jobs.get(seq % jobs.len().max(1)) else {
            return;
        };
        if to.send(job).is_err() {
            return;
        }
    }
}

/// Room for `len` floats when `T` must be converted (none for CF32, used as it is).
fn float_room<T: EngineSample>(len: usize) -> Vec<Complex<f32>> {
    let native = T::RECORD != crate::iq::RecordFormat::Cf32;
    vec![Complex::default(); if native { len } else { 0 }]
}

/// One DSP thread.
struct Worker<'a, T> {
    welch: Welch,
    order: &'a InOrder,
    spare: SyncSender<Vec<T>>,
    free: SyncSender<Vec<T>>,
    /// Its queue to the writer, when recording.
    rec: Option<SyncSender<Filled<T>>>,
    /// The float view of a carry and of a block.
    head: Vec<Complex<f32>>,
    body: Vec<Complex<f32>>,
    processed: u64,
}

impl<T: EngineSample> Worker<'_, T> {
    /// Every block dealt to this thread, in order; its Welch estimate and the
    /// samples it analysed.
    fn run(mut self, jobs: Receiver<Job<T>>) -> (Welch, u64) {
        // A panic here must not leave the other threads waiting for its turn.
        let _unblock = Unblock(self.order);
        for job in jobs.iter() {
            if !T::resume_welch(&mut self.welch, &job.carry) {
                self.welch.resume(T::as_cf32(&job.carry, &mut self.head));
            }
            // The carry's buffer goes back before the block's work, so the dealer
            // never waits for one.
            let _ = self.spare.try_send(job.carry);
            let block = &job.buf[..job.n];
            // Welch reads a CS16 block itself; the CLKIN estimator then reads it too
            // (AVX-512) or is fed it converted piece by piece, on its turn.
            if T::feed_welch(&mut self.welch, block) {
                let body = &mut self.body;
                self.order.clkin(job.seq, job.after_gap, |c| {
                    T::feed_clkin(c, block, body);
                });
            } else {
                let x = T::as_cf32(block, &mut self.body);
                self.welch.feed(x);
                self.order.clkin(job.seq, job.after_gap, |c| c.feed(x));
            }
            self.processed += job.n as u64;
            match &self.rec {
                // Only fails if the writer thread is gone (a panic, reported by the caller).
                Some(rec) => {
                    let _ = rec.send((job.buf, job.n));
                }
                None => {
                    let _ = self.free.try_send(job.buf);
                }
            }
        }
        (self.welch, self.processed)
    }
}

/// The CLKIN estimator, fed block after block in stream order by whichever thread
/// holds the next block: its mixer's phase and its decimator run over one unbroken
/// stream, so it cannot be split as Welch's sums are.
struct InOrder {
    turn: Mutex<Turn>,
    next_up: Condvar,
    /// `false` without a CLKIN check: no thread waits for a turn.
    wanted: bool,
}

struct Turn {
    /// The block whose turn it is.
    next: u64,
    clkin: Option<ClkinEstimator>,
    /// Samples were lost: the estimator is fed no more (as on one thread).
    gapped: bool,
    /// A thread panicked: nobody waits for a turn any more.
    broken: bool,
    /// Threads waiting for their turn (none: passing the turn wakes nobody).
    waiting: usize,
}

impl InOrder {
    fn new(clkin: Option<ClkinEstimator>) -> Self {
        Self {
            wanted: clkin.is_some(),
            turn: Mutex::new(Turn {
                next: 0,
                clkin,
                gapped: false,
                broken: false,
                waiting: 0,
            }),
            next_up: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Turn> {
        // A thread that panicked holding the lock left the estimator as it was
        // between two blocks; the capture reports the panic.
        self.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Block `seq` (`feed` gives it to the estimator): wait for its turn, feed it,
    /// pass the turn on.
    fn clkin(&self, seq: u64, after_gap: bool, feed: impl FnOnce(&mut ClkinEstimator)) {
        if !self.wanted {
            return;
        }
        let mut t = self.lock();
        while t.next != seq && !t.broken {
            t.waiting += 1;
            t = self.next_up.wait(t).unwrap_or_else(|e| e.into_inner());
            t.waiting -= 1;
        }
        if t.broken {
            return;
        }
        t.gapped |= after_gap;
        if !t.gapped {
            if let Some(c) = t.clkin.as_mut() {
                feed(c);
            }
        }
        t.next += 1;
        let wake = t.waiting > 0;
        drop(t);
        if wake {
            self.next_up.notify_all();
        }
    }

    fn into_clkin(self) -> Option<ClkinEstimator> {
        self.turn
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .clkin
    }
}

/// Ends the waiting for turns when its thread unwinds from a panic.
struct Unblock<'a>(&'a InOrder);

impl Drop for Unblock<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().broken = true;
            self.0.next_up.notify_all();
        }
    }
}
