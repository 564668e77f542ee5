//! The engine proper, one function per phase: check the settings, run the reader
//! thread ([`Reader`]), the writer thread ([`write_loop`]) and the DSP on the
//! calling thread or on DSP threads ([`parallel`]), then turn what they counted into a [`CaptureSummary`]
//! ([`summarize`]). Every capture — a radio stream or a file — ends here.
mod parallel;
mod reader;
mod summary;

use super::{BlockSource, CaptureSettings, CaptureSummary, EngineSample};
use crate::dsp::{ClkinEstimator, Welch};
use crate::error::{Error, Result};
use crate::iq::{IqWriter, RecordFormat};
use num_complex::Complex;
use reader::Reader;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};
use summary::{close_recording, judge, summarize, Finished};

/// A filled block for the DSP: its buffer, how many samples are filled, and whether
/// samples were lost between the previous block and this one.
struct Block<T> {
    buf: Vec<T>,
    n: usize,
    after_gap: bool,
}

/// Filled blocks handed from the reader to the DSP in one go, in stream order
/// ([`batch_blocks`]).
type Batch<T> = Vec<Block<T>>;

/// What sees every analysed block, in order, on the DSP thread.
type BlockHook<'f> = dyn FnMut(&[Complex<f32>]) + 'f;

/// A block of `T` samples and how many of them are filled.
type Filled<T> = (Vec<T>, usize);

pub(crate) fn run_engine<T: EngineSample, S: BlockSource<T>>(
    source: S,
    settings: &CaptureSettings,
    cancel: &AtomicBool,
    progress: Option<&AtomicU64>,
    recorder: Option<IqWriter>,
    hook: Option<&mut BlockHook<'_>>,
) -> Result<CaptureSummary> {
    check_settings::<T>(settings, recorder.as_ref())?;
    let threads = dsp_threads(settings, hook.is_some());
    let work = if threads > 1 {
        Work::Threads(parallel::prepare(settings, threads)?)
    } else {
        Work::Inline(Dsp::new::<T>(settings)?)
    };
    let pool = Pool::new(settings, threads);
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
    let lanes = Lanes {
        full: pool.full_rx,
        free: pool.free_tx,
        rec: if recording { pool.rec_tx } else { Vec::new() },
    };

    let (stats, recorder, mut dsp) = std::thread::scope(|s| {
        let writer =
            recorder.map(|w| s.spawn(move || write_loop::<T>(w, pool.rec_rx, writer_free)));
        let reader = s.spawn(move || reader.run());
        let dsp = match work {
            Work::Threads(parts) => parallel::run::<T>(settings, parts, lanes),
            Work::Inline(d) => Ok(d.run_inline(lanes, hook)),
        };
        let stats = reader.join().map_err(|_| Error::WorkerPanic)?;
        let recorder = match writer {
            Some(h) => Some(h.join().map_err(|_| Error::WorkerPanic)?),
            None => None,
        };
        Ok::<_, Error>((stats, recorder, dsp?))
    })?;
    let duration_s = started.elapsed().as_secs_f64();
    // The spectrum first: the recording's SigMF meta carries one annotation per
    // reported peak.
    let spec = dsp.welch.finish();
    let clkin = dsp
        .clkin
        .as_mut()
        .map(|c| judge(c, settings, &stats, &spec));
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

/// The most DSP threads a capture starts, whatever the core count.
const MAX_DSP_THREADS: usize = 8;

/// How many threads run the DSP of `settings`
/// (docs/architecture.md#the-capture-engine): [`CaptureSettings::dsp_threads`], or
/// one per core when it is 0, at most [`MAX_DSP_THREADS`]. One — on the calling
/// thread — when a hook must see the blocks on that thread in order, or when a
/// segment is more than an eighth of a block (each block's worker would redo most
/// of a segment of the block before).
pub(crate) fn dsp_threads(settings: &CaptureSettings, hooked: bool) -> usize {
    if hooked || settings.welch.fft_size.saturating_mul(8) > settings.block_samples {
        return 1;
    }
    let k = match settings.dsp_threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        k => k,
    };
    k.clamp(1, MAX_DSP_THREADS)
}

/// The DSP of a capture, made before anything streams.
enum Work {
    /// On the calling thread.
    Inline(Dsp),
    /// On DSP threads ([`parallel::prepare`]).
    Threads((Dsp, Vec<Welch>)),
}

/// The DSP's ends of the queues: filled blocks in, used buffers back to the pool
/// or on to the writer (one queue per DSP thread, read in turn; empty when not
/// recording).
struct Lanes<T> {
    full: Receiver<Batch<T>>,
    free: SyncSender<Vec<T>>,
    rec: Vec<SyncSender<Filled<T>>>,
}

/// The DSP: Welch, the CLKIN estimator if asked, and what they have seen.
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

    /// The DSP on the calling thread: every block in order, the hook first.
    fn run_inline<T: EngineSample>(
        mut self,
        lanes: Lanes<T>,
        mut hook: Option<&mut BlockHook<'_>>,
    ) -> Self {
        for Block { buf, n, after_gap } in lanes.full.iter().flatten() {
            if after_gap {
                self.gap();
            }
            self.feed(&buf[..n], hook.as_deref_mut());
            match lanes.rec.first() {
                // Only fails if the writer thread is gone (a panic, reported by the caller).
                Some(rec) => {
                    let _ = rec.send((buf, n));
                }
                None => {
                    let _ = lanes.free.try_send(buf);
                }
            }
        }
        self
    }

    /// One filled block: the hook sees it first, then Welch and CLKIN.
    /// Without a hook, Welch reads a CS16 block itself and the CLKIN estimator reads it
    /// too (AVX-512) or is fed it converted piece by piece: the block is never copied to
    /// float whole.
    fn feed<T: EngineSample>(&mut self, block: &[T], hook: Option<&mut BlockHook<'_>>) {
        self.processed += block.len() as u64;
        if hook.is_none() && T::feed_welch(&mut self.welch, block) {
            if let Some(c) = self.clkin.as_mut().filter(|_| !self.gapped) {
                T::feed_clkin(c, block, &mut self.as_float);
            }
            return;
        }
        let x = T::as_cf32(block, &mut self.as_float);
        if let Some(h) = hook {
            h(x);
        }
        self.welch.feed(x);
        if let Some(c) = self.clkin.as_mut().filter(|_| !self.gapped) {
            c.feed(x);
        }
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
    dsp.feed(&block, None);
    let want = (rate_hz * stream_s).max(0.0);
    let started = Instant::now();
    let mut samples = 0u64;
    loop {
        dsp.feed(&block, None);
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
    full_tx: SyncSender<Batch<T>>,
    full_rx: Receiver<Batch<T>>,
    /// DSP → writer, one queue per DSP thread.
    rec_tx: Vec<SyncSender<Filled<T>>>,
    rec_rx: Vec<Receiver<Filled<T>>>,
}

impl<T: EngineSample> Pool<T> {
    /// The queues for at most `pool_blocks` buffers of `block_samples`, for `threads`
    /// DSP threads. The pool starts empty: the reader allocates a buffer only when no
    /// used one is free ([`Reader::take_free_buffer`]), so the memory the pool takes
    /// is what the stream needed, never more than its bound.
    fn new(settings: &CaptureSettings, threads: usize) -> Self {
        let (free_tx, free_rx) = sync_channel::<Vec<T>>(settings.pool_blocks);
        // A batch holds at least one buffer, so a send never finds the queue full.
        let (full_tx, full_rx) = sync_channel::<Batch<T>>(settings.pool_blocks);
        // DSP → writer: every buffer may be waiting there, so a send never blocks for long.
        let (rec_tx, rec_rx) = (0..threads.max(1))
            .map(|_| sync_channel::<Filled<T>>(settings.pool_blocks))
            .unzip();
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

/// The stream time the reader gathers into one hand-over to the DSP, at most.
const BATCH_SECONDS: f64 = 0.004;

/// The most blocks in one hand-over.
const BATCH_MAX_BLOCKS: usize = 16;

/// Blocks per hand-over from the reader to the DSP
/// (docs/architecture.md#the-capture-engine): as many whole blocks as
/// [`BATCH_SECONDS`] of a live stream fill, at most [`BATCH_MAX_BLOCKS`] and a
/// quarter of the pool; one for a source that waits for the DSP (a file), or
/// when a block alone lasts that long. Each hand-over wakes a waiting DSP
/// thread, and at high rates the wake-ups of one per 64 Ki-sample block (3 000 a
/// second at 200 MS/s) cost a measurable share of the CPU; gathered, the
/// blocks wait at most [`BATCH_SECONDS`] more.
pub(crate) fn batch_blocks(settings: &CaptureSettings, live: bool) -> usize {
    if !live || settings.block_samples == 0 {
        return 1;
    }
    let per_batch = settings.welch.sample_rate_hz * BATCH_SECONDS / settings.block_samples as f64;
    let k = if per_batch.is_finite() && per_batch >= 1.0 {
        per_batch as usize
    } else {
        1
    };
    k.min(BATCH_MAX_BLOCKS).min(settings.pool_blocks / 4).max(1)
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
/// The DSP threads hand it the blocks in turn (block `i` from thread `i mod k`), so
/// it reads their queues in turn and records the stream in order. After a write
/// error it keeps draining (the capture goes on, the recording has stopped and
/// says why).
fn write_loop<T: EngineSample>(
    mut w: IqWriter,
    rec_rx: Vec<Receiver<Filled<T>>>,
    free: SyncSender<Vec<T>>,
) -> (IqWriter, Option<String>) {
    let mut err: Option<String> = None;
    for rx in rec_rx.iter().cycle() {
        // A thread that has ended was handed no further block: the stream is over.
        let Ok((buf, n)) = rx.recv() else {
            break;
        };
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
