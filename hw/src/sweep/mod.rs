//! Wideband sweeps (docs/operator.md#sweeps-rxnode-sweep): hop the receiver across `[start, stop]`, discard
//! each retune's settle samples, Welch per hop, keep the centre `1 - crop` of each
//! hop, and stitch one spectrum on one frequency grid.
//!
//! The grid: bin `m` is at `start + m · bin` (bin = rate / fft, fft the smallest
//! power of two whose bin is no wider than asked). Hop `h` keeps the `K` bins
//! `h·K .. (h+1)·K` (K = fft · (1 − crop), even) and is tuned to the centre of
//! that range, so the kept bins of consecutive hops tile the band with no gap and
//! no overlap. A hop that overflows, times out, stalls (nothing for 2 s, or 20 read
//! timeouts in a row) or cannot be tuned is retried once, then marked `FAILED` with
//! its range; its bins stay empty (never interpolated).
//!
//! The stitching itself (kept bins → grid, averaging, peaks) is pure and lives in
//! `rxnode-dsp` ([`rxnode_dsp::Stitcher`]); the hop plan (`plan.rs`) stays here because
//! its limits are the interlock's (`sweep_grid`, `MAX_SWEEP_*`), shared with the policy check.
use crate::radio::unix_now;
use crate::{Error, RxRadio};
use num_complex::Complex;
use rxnode_dsp::{
    band_peaks, band_threshold_db, HopPlacement, Peak, ReadOutcome, SampleSource, Stitcher, Welch,
    WelchConfig,
};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

mod plan;

pub use plan::{HopPlan, SweepConfig};

/// How one hop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HopStatus {
    /// Measured.
    Ok,
    /// Failed twice (overflow, timeout, tuning or stream error), or its input
    /// saturated (more than 1 % of samples clipped): no data.
    Failed,
    /// Not measured: the operator cancelled first.
    NotRun,
}

/// One hop of one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepHop {
    /// Hop number within the repeat (0-based).
    pub hop: usize,
    /// Repeat number (0-based).
    pub repeat: u32,
    /// Centre asked for, Hz.
    pub requested_center_hz: f64,
    /// Centre the driver reported, Hz.
    pub actual_center_hz: Option<f64>,
    /// Frequency of the first kept bin, Hz.
    pub low_hz: f64,
    /// `low_hz + bins · step_hz`.
    pub high_hz: f64,
    /// Bin width, Hz.
    pub step_hz: f64,
    /// Samples analysed (after the settle discard).
    pub samples: u64,
    /// Samples discarded after the retune.
    pub settle_samples: u64,
    /// Overflows met (every attempt).
    pub overflows: u64,
    /// Attempts made (1, or 2 after a retry).
    pub attempts: u32,
    /// Outcome.
    pub status: HopStatus,
    /// Why it failed (the last attempt's reason).
    pub error: Option<String>,
    /// When the hop's kept samples started, Unix seconds.
    pub unix_time_s: f64,
    /// The kept bins, dBFS (empty unless `Ok`).
    pub db: Vec<f32>,
}

impl SweepHop {
    /// Whether the hop failed because the stream stalled (delivered nothing for
    /// 2 s, or 20 reads in a row timed out): the radio needs a self-test.
    pub fn stalled(&self) -> bool {
        self.status == HopStatus::Failed
            && self
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with(STALLED))
    }
}

/// How a stalled hop's error begins.
const STALLED: &str = "stream stalled";
/// Read timeouts in a row that make a stall.
const STALL_TIMEOUTS: u32 = 20;
/// Time without a sample that makes a stall.
const STALL_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// What was asked.
    pub config: SweepConfig,
    /// The actual sample rate.
    pub sample_rate_hz: f64,
    /// The plan it ran.
    pub plan: HopPlan,
    /// Every hop of every repeat, in order.
    pub hops: Vec<SweepHop>,
    /// The stitched spectrum, dBFS per grid bin (mean power over the repeats that
    /// measured it); `None` where every attempt failed, −∞ where the bin was measured
    /// without power (no level; `nan` in the CSV).
    pub spectrum_db: Vec<Option<f32>>,
    /// Strongest peaks over the whole band (absolute Hz, dBFS).
    pub peaks: Vec<Peak>,
    /// −3 dB width of each peak, Hz, same order as `peaks`.
    pub peak_widths_hz: Vec<f64>,
    /// The mean noise power per bin, dBFS: the median of the measured bins corrected
    /// for the averages each holds (docs/operator.md#peaks-and-the-noise-floor);
    /// `None` when no bin was measured or the median bin has no power.
    pub noise_floor_db: Option<f64>,
    /// Why there is no noise floor (`rxnode_dsp::why_no_band_floor`); `None` with one.
    #[serde(default)]
    pub noise_floor_absent: Option<String>,
    /// How far above the floor a band peak must stand, dB: the larger of 10 dB and
    /// the level noise alone reaches by chance with the averages each bin holds;
    /// `None` without a floor.
    #[serde(default)]
    pub peak_threshold_db: Option<f64>,
    /// `[low, high]` Hz of each hop that failed, per repeat.
    pub failed_ranges_hz: Vec<[f64; 2]>,
    /// Wall time of the sweep, seconds.
    pub elapsed_s: f64,
    /// Sum of settle and dwell times of the hops run, seconds (the floor).
    pub floor_s: f64,
    /// Stopped by the operator.
    pub cancelled: bool,
}

impl SweepReport {
    /// Frequency of grid bin `m`, Hz.
    pub fn frequency_of(&self, m: usize) -> f64 {
        self.config.start_hz + m as f64 * self.plan.bin_hz
    }
}

/// One attempt's outcome.
struct Attempt {
    actual: Option<f64>,
    samples: u64,
    overflows: u64,
    error: Option<String>,
    started: f64,
    /// The measured samples of the last read, in the read buffer, not yet averaged.
    last_block: std::ops::Range<usize>,
}

/// Sweep with an already-configured radio (rate and gain set, stream not open).
/// `cancel` stops between reads; hops not reached are `NOT_RUN`.
pub fn run_sweep(
    radio: &mut RxRadio,
    cfg: &SweepConfig,
    cancel: &AtomicBool,
) -> Result<SweepReport, Error> {
    run_sweep_with_progress(radio, cfg, cancel, &SweepProgress::default())
}

/// How far a running sweep is, for a progress display on another thread: hops
/// finished and the total (hops × repeats, known once the plan is made).
#[derive(Debug, Default)]
pub struct SweepProgress {
    /// Hops finished (measured or failed), over every repeat.
    pub done: AtomicU64,
    /// Hops × repeats; 0 until the plan is made.
    pub total: AtomicU64,
    /// Hops per repeat; 0 until the plan is made.
    pub per_repeat: AtomicU64,
}

/// [`run_sweep`], counting finished hops into `progress` as it goes.
pub fn run_sweep_with_progress(
    radio: &mut RxRadio,
    cfg: &SweepConfig,
    cancel: &AtomicBool,
    progress: &SweepProgress,
) -> Result<SweepReport, Error> {
    run_sweep_observed(radio, cfg, cancel, progress, &mut |_| {})
}

/// [`run_sweep_with_progress`], handing each pass's hops to `on_pass` as soon as
/// the pass is finished (their spectra complete), and the hops of a pass cut short
/// by `cancel` at the end: every hop run is handed over once, in order. With
/// `cfg.interval_s`, each pass starts that long after the previous one started
/// (the stream stopped in between; at once when a pass took longer).
pub fn run_sweep_observed(
    radio: &mut RxRadio,
    cfg: &SweepConfig,
    cancel: &AtomicBool,
    progress: &SweepProgress,
    on_pass: &mut dyn FnMut(&[SweepHop]),
) -> Result<SweepReport, Error> {
    let rate = radio.actual()?.sample_rate_hz;
    let plan = HopPlan::new(cfg, rate)?;
    let per_repeat = plan.centers_hz.len() as u64;
    progress.per_repeat.store(per_repeat, Ordering::Relaxed);
    progress
        .total
        .store(per_repeat * u64::from(cfg.repeats), Ordering::Relaxed);
    let mut wcfg = WelchConfig::new(plan.fft_size, rate);
    wcfg.dc_exclude_bins = 0;
    let mut welch = Welch::new(wcfg)?;
    let mut stream = radio.rx_stream()?;
    let mut buf = vec![Complex::new(0.0f32, 0.0); 16384];
    let t0 = Instant::now();
    let mut grid = Stitcher::new(plan.total_bins);
    let mut cancelled = false;
    let mut run = HopRun {
        radio,
        stream: &mut stream,
        welch: &mut welch,
        plan: &plan,
        buf: &mut buf,
        cancel,
        grid: &mut grid,
        hops: Vec::new(),
        unfinished: None,
        floor_s: 0.0,
        hop_s: (plan.settle_samples + plan.dwell_samples) as f64 / rate,
        hop_shape: None,
    };
    let mut pass_start = Instant::now();
    let mut handed = 0;
    for repeat in 0..cfg.repeats {
        if let (Some(interval), true) = (cfg.interval_s, repeat > 0 && !cancelled) {
            // Idle until the next pass is due, the stream stopped (a radio left
            // streaming unread would overflow), waking for `cancel`.
            let _ = run.stream.pause();
            let due = std::time::Duration::try_from_secs_f64(interval)
                .ok()
                .and_then(|d| pass_start.checked_add(d))
                .unwrap_or(pass_start);
            while Instant::now() < due {
                if cancel.load(Ordering::SeqCst) {
                    cancelled = true;
                    break;
                }
                let left = due.saturating_duration_since(Instant::now());
                std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
            }
        }
        pass_start = Instant::now();
        for (h, &center) in plan.centers_hz.iter().enumerate() {
            let (b0, b1) = plan.hop_bins(h);
            let hop = pending_hop(cfg, &plan, (h, repeat), center);
            if cancelled || cancel.load(Ordering::SeqCst) {
                cancelled = true;
                run.hops.push(hop);
                continue;
            }
            if run.measure(hop, center, (b0, b1)) {
                cancelled = true;
            }
            progress.done.fetch_add(1, Ordering::Relaxed);
        }
        if !cancelled {
            // The pass's last spectrum now, so the pass can be handed over whole.
            run.finish_previous();
            on_pass(&run.hops[handed..]);
            handed = run.hops.len();
        }
    }
    // The last measured hop's spectrum (every earlier one was finished while the
    // hop after it settled).
    run.finish_previous();
    if handed < run.hops.len() {
        on_pass(&run.hops[handed..]);
    }
    let floor_s = run.floor_s;
    let hop_shape = run.hop_shape;
    let hops = std::mem::take(&mut run.hops);
    let _ = stream.pause();
    drop(stream);
    let spectrum_db = grid.finish();
    // Each bin holds the averages of at least this many hops of this many each.
    let shape = hop_shape.unwrap_or(0.0) * f64::from(grid.fewest_hops());
    let measured = spectrum_db.iter().flatten().count();
    let (peaks, peak_widths_hz, noise_floor_db) = band_peaks(
        &spectrum_db,
        cfg.start_hz,
        plan.bin_hz,
        shape,
        grid.noise_level(),
    );
    let peak_threshold_db = noise_floor_db.map(|_| band_threshold_db(shape, measured));
    let noise_floor_absent = noise_floor_db
        .is_none()
        .then(|| rxnode_dsp::why_no_band_floor(&spectrum_db).to_owned());
    let failed_ranges_hz = hops
        .iter()
        .filter(|h| h.status == HopStatus::Failed)
        .map(|h| [h.low_hz, h.high_hz])
        .collect();
    Ok(SweepReport {
        config: cfg.clone(),
        sample_rate_hz: rate,
        plan,
        hops,
        spectrum_db,
        peaks,
        peak_widths_hz,
        noise_floor_db,
        noise_floor_absent,
        peak_threshold_db,
        failed_ranges_hz,
        elapsed_s: t0.elapsed().as_secs_f64(),
        floor_s,
        cancelled,
    })
}

/// Hop `h` of repeat `repeat`, tuned to `center`, before it runs: its kept range and
/// settle count from the plan, no data, `NOT_RUN`.
fn pending_hop(
    cfg: &SweepConfig,
    plan: &HopPlan,
    (h, repeat): (usize, u32),
    center: f64,
) -> SweepHop {
    let (b0, b1) = plan.hop_bins(h);
    let low = cfg.start_hz + b0 as f64 * plan.bin_hz;
    SweepHop {
        hop: h,
        repeat,
        requested_center_hz: center,
        actual_center_hz: None,
        low_hz: low,
        high_hz: low + (b1 - b0) as f64 * plan.bin_hz,
        step_hz: plan.bin_hz,
        samples: 0,
        settle_samples: plan.settle_samples,
        overflows: 0,
        attempts: 0,
        status: HopStatus::NotRun,
        error: None,
        unix_time_s: 0.0,
        db: Vec::new(),
    }
}

/// What every hop of one sweep works with.
struct HopRun<'a> {
    radio: &'a mut RxRadio,
    stream: &'a mut crate::RxStream,
    welch: &'a mut Welch,
    plan: &'a HopPlan,
    buf: &'a mut [Complex<f32>],
    cancel: &'a AtomicBool,
    grid: &'a mut Stitcher,
    /// Every hop so far, in order.
    hops: Vec<SweepHop>,
    /// The measured hop whose spectrum is not finished yet: its last block is still
    /// in `buf`, to be averaged in while the next hop settles.
    unfinished: Option<Unfinished>,
    /// The sweep's time floor so far: settle + dwell of every attempt.
    floor_s: f64,
    hop_s: f64,
    /// The fewest equivalent independent averages of a finished hop's spectrum.
    hop_shape: Option<f64>,
}

/// A hop whose samples are all read but whose spectrum is not finished: where it
/// is in the hop list, its last block in the read buffer, where it goes on the grid.
struct Unfinished {
    index: usize,
    last_block: std::ops::Range<usize>,
    placement: HopPlacement,
}

impl HopRun<'_> {
    /// Finish the previous hop's spectrum: its last block into its Welch average,
    /// its kept bins onto the grid. Called once the next hop's stream runs (the work
    /// overlaps that hop's settle time), before anything else is read into `buf`.
    fn finish_previous(&mut self) {
        let Some(u) = self.unfinished.take() else {
            return;
        };
        if let Some(block) = self.buf.get(u.last_block) {
            self.welch.feed(block);
        }
        let spec = self.welch.finish();
        // A hop whose input saturated holds the converter's distortion, not the band:
        // failed, not filled in (a retry at the same gain would saturate again).
        if spec.clipped_fraction > rxnode_dsp::MAX_CLIPPED_FRACTION {
            if let Some(hop) = self.hops.get_mut(u.index) {
                let e = format!(
                    "{:.1} % of samples clipped: {}",
                    spec.clipped_fraction * 100.0,
                    rxnode_dsp::SATURATED
                );
                tracing::warn!(
                    "sweep hop {} of repeat {} at {:.6} MHz: {e}; marked failed (not filled in)",
                    hop.hop + 1,
                    hop.repeat + 1,
                    u.placement.requested_hz / 1e6
                );
                hop.status = HopStatus::Failed;
                hop.error = Some(e);
            }
            return;
        }
        let shape = spec.equivalent_averages;
        self.hop_shape = Some(self.hop_shape.map_or(shape, |s| s.min(shape)));
        let db = self.grid.add_hop(&spec.psd_db, &u.placement);
        self.grid.judge_hop(&spec.psd_db, &u.placement, shape);
        if let Some(hop) = self.hops.get_mut(u.index) {
            hop.db = db;
        }
    }

    /// Up to two attempts at one hop (a failed one is retried once), its kept bins
    /// stitched onto the grid (when the next hop starts, or at the end); `true` when
    /// the operator cancelled during it.
    fn measure(&mut self, mut hop: SweepHop, center: f64, (b0, b1): (usize, usize)) -> bool {
        let mut cancelled = false;
        for _attempt in 0..2 {
            hop.attempts += 1;
            let a = self.one_hop(center);
            self.floor_s += self.hop_s;
            hop.overflows += a.overflows;
            hop.actual_center_hz = a.actual.or(hop.actual_center_hz);
            hop.unix_time_s = a.started;
            if self.cancel.load(Ordering::SeqCst) && a.error.is_some() {
                cancelled = true;
                hop.error = a.error;
                break;
            }
            match a.error {
                None => {
                    hop.samples = a.samples;
                    hop.error = None;
                    hop.status = HopStatus::Ok;
                    self.unfinished = Some(Unfinished {
                        index: self.hops.len(),
                        last_block: a.last_block,
                        placement: HopPlacement {
                            first_bin: b0,
                            end_bin: b1,
                            kept_bins: self.plan.kept_bins,
                            fft_size: self.plan.fft_size,
                            bin_hz: self.plan.bin_hz,
                            requested_hz: center,
                            actual_hz: a.actual.unwrap_or(center),
                        },
                    });
                    break;
                }
                Some(e) => {
                    // One line per attempt, saying which it was and what follows.
                    let then = if hop.attempts < 2 {
                        "retrying it once"
                    } else {
                        "marked failed (not filled in)"
                    };
                    tracing::warn!(
                        "sweep hop {} of repeat {} at {:.6} MHz, attempt {} of 2, failed: {e}; {then}",
                        hop.hop + 1,
                        hop.repeat + 1,
                        center / 1e6,
                        hop.attempts
                    );
                    hop.error = Some(e);
                    hop.status = HopStatus::Failed;
                }
            }
        }
        if hop.status == HopStatus::Failed && self.cancel.load(Ordering::SeqCst) {
            cancelled = true;
        }
        self.hops.push(hop);
        cancelled
    }

    /// One attempt: stop the stream, retune, restart the stream, then (while the
    /// new hop settles) finish the previous hop and read the centre back; then
    /// discard the settle samples and average the dwell samples, all but the last
    /// block (kept in `buf` for [`HopRun::finish_previous`]).
    fn one_hop(&mut self, center: f64) -> Attempt {
        let mut a = Attempt {
            actual: None,
            samples: 0,
            overflows: 0,
            error: None,
            started: unix_now(),
            last_block: 0..0,
        };
        // Pause first: no sample from before the retune may be kept.
        let restarted = self
            .stream
            .pause()
            .map_err(|e| e.to_string())
            .and_then(|()| {
                self.radio
                    .set_center(center)
                    .map_err(|e| format!("tune {center} Hz: {e}"))
            })
            .and_then(|()| self.stream.resume().map_err(|e| e.to_string()));
        // The previous hop's last block is still in `buf`: finish it before the
        // first read, whether or not this hop could start.
        self.finish_previous();
        self.welch.reset();
        if let Err(e) = restarted {
            a.error = Some(e);
            return a;
        }
        match self.radio.center() {
            Ok(f) => a.actual = Some(f),
            Err(e) => {
                a.error = Some(format!("tune {center} Hz: {e}"));
                return a;
            }
        }
        read_hop(
            &mut *self.stream,
            &mut *self.welch,
            self.plan,
            center,
            &mut *self.buf,
            self.cancel,
            &mut a,
        );
        a
    }
}

/// Read one hop from the restarted stream: discard the settle samples and feed the
/// dwell samples to `welch`, except the last read's, which stay in `buf` at
/// `a.last_block` for the caller to feed while the next hop settles.
fn read_hop(
    stream: &mut crate::RxStream,
    welch: &mut Welch,
    plan: &HopPlan,
    center: f64,
    buf: &mut [Complex<f32>],
    cancel: &AtomicBool,
    a: &mut Attempt,
) {
    let rate = plan.bin_hz * plan.fft_size as f64;
    let total = plan.settle_samples + plan.dwell_samples;
    // A hop that has not delivered its samples within 4× their time (+0.5 s) has
    // timed out.
    let budget = std::time::Duration::try_from_secs_f64(4.0 * total as f64 / rate + 0.5)
        .unwrap_or(std::time::Duration::from_secs(86_400));
    let now = Instant::now();
    let deadline = now.checked_add(budget).unwrap_or(now);
    let mut got = 0u64;
    let mut started = false;
    // The stall watchdog (docs/reliability.md#6-the-stall-watchdog): reads that time
    // out in a row, and how long since the stream last delivered.
    let mut in_a_row = 0u32;
    let mut last_alive = Instant::now();
    while got < total {
        if cancel.load(Ordering::SeqCst) {
            a.error = Some("cancelled by the operator".into());
            return;
        }
        let quiet = last_alive.elapsed();
        let over = Instant::now() > deadline;
        if in_a_row >= STALL_TIMEOUTS || quiet >= STALL_AFTER || (over && in_a_row > 0) {
            a.error = Some(format!(
                "{STALLED} at sample {got} of {total} at {center} Hz: no samples for {:.1} s \
                 ({in_a_row} read timeouts in a row)",
                quiet.as_secs_f64()
            ));
            return;
        }
        if over {
            a.error = Some(format!("timeout: {got} of {total} samples at {center} Hz"));
            return;
        }
        let want = ((total - got) as usize).min(buf.len());
        match stream.read(&mut buf[..want], 100_000) {
            Ok(ReadOutcome::Samples(n)) => {
                let n = n.min(want);
                in_a_row = 0;
                if n > 0 {
                    last_alive = Instant::now();
                }
                let mut block = &buf[..n];
                if got < plan.settle_samples {
                    let skip = ((plan.settle_samples - got) as usize).min(n);
                    block = &block[skip..];
                }
                got += n as u64;
                if !block.is_empty() {
                    if !started {
                        a.started = unix_now();
                        started = true;
                    }
                    a.samples += block.len() as u64;
                    if got < total {
                        welch.feed(block);
                    } else {
                        // The hop's last block: averaged while the next hop settles.
                        a.last_block = n - block.len()..n;
                    }
                }
            }
            Ok(ReadOutcome::Overflow) => {
                a.overflows += 1;
                a.error = Some(format!("overflow at {center} Hz after {got} samples"));
                return;
            }
            Ok(ReadOutcome::Timeout) => in_a_row += 1,
            // Only a recording skips silence; a radio's stream never does.
            Ok(ReadOutcome::Silence(n)) => {
                a.error = Some(format!(
                    "{n} samples of digital silence at {center} Hz after {got} samples"
                ));
                return;
            }
            Err(e) => {
                a.error = Some(e.to_string());
                return;
            }
        }
    }
}
