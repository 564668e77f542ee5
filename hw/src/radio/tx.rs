//! Transmission: the TX-capable radio handle and the one place that opens a TX
//! stream (the single `#[allow(clippy::disallowed_methods)]` of the workspace).
//! A [`TxRadio`] exists only by consuming an [`rxnode_interlock::TxPermit`].
use super::{parse_args, stream_msg, unix_now, Ctl, RxRadio};
use crate::Error;
use num_complex::Complex;
use rxnode_interlock::TxPermit;
use serde::{Deserialize, Serialize};
use soapysdr::{Direction, ErrorCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

impl RxRadio {
    /// Become TX-capable by consuming a permit issued for this radio's device args.
    ///
    /// The permit stays inside the returned handle; its device args must equal this
    /// radio's (same keys and values, order and spaces ignored).
    ///
    /// The only way to a [`TxRadio`] (this compiles; the `compile_fail` examples on
    /// [`RxRadio`] differ only in the forbidden step):
    ///
    /// ```no_run
    /// fn key(radio: rxnode_hw::RxRadio, permit: rxnode_interlock::TxPermit) {
    ///     let cancel = std::sync::atomic::AtomicBool::new(false);
    ///     if let Ok(mut tx) = radio.into_tx(permit) {
    ///         let _ = tx.transmit_tone(&cancel);
    ///     }
    /// }
    /// ```
    pub fn into_tx(self, permit: TxPermit) -> Result<TxRadio, Error> {
        if parse_args(permit.device()) != parse_args(&self.args) {
            return Err(Error::PermitDevice {
                args: self.args.clone(),
                permit: permit.device().to_owned(),
            });
        }
        tracing::warn!(args = %self.args, task = %permit.task_id(), "radio is TX-capable under a permit");
        Ok(TxRadio {
            radio: self,
            permit,
            used: false,
        })
    }
}

/// What one transmission did.
///
/// Times on air come from the monotonic clock (a wall-clock step during the tone
/// does not change them); `stopped_unix_s` is `started_unix_s + on_air_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TxReport {
    /// The authorized task.
    pub task_id: String,
    /// Device args.
    pub device: String,
    /// Stream activation asked, unix seconds (UTC, the wall clock at that moment).
    pub started_unix_s: f64,
    /// `started_unix_s + on_air_s`.
    pub stopped_unix_s: f64,
    /// Samples accepted by the driver.
    pub samples_sent: u64,
    /// Samples of the whole tone (the permit's duration at the actual rate).
    pub samples_planned: u64,
    /// From asking the driver to activate the stream to its confirming the stream
    /// deactivated, s (monotonic clock). When the driver never confirmed it, up to
    /// its last confirmation of anything; see `state_unknown_s`.
    pub on_air_s: f64,
    /// How long the stream stayed active past the permit's duration, s (0 when it
    /// was torn down in time).
    pub past_permit_s: f64,
    /// Set when the driver never confirmed the key-off: how long the transmitter's
    /// state had been unknown (since the driver last took samples) when rxnode
    /// stopped waiting for it, s.
    pub state_unknown_s: Option<f64>,
    /// LO frequency, Hz.
    pub frequency_hz: f64,
    /// Tone offset from the LO, Hz.
    pub tone_offset_hz: f64,
    /// Sample rate, S/s.
    pub sample_rate_hz: f64,
    /// TX gain, dB.
    pub gain_db: f64,
    /// Whether the transmission was cut short by the cancel flag.
    pub cancelled: bool,
}

impl TxReport {
    /// Whether everything planned went on air within the permit: every planned
    /// sample accepted, not cut short, the stream torn down in time and confirmed
    /// off by the driver.
    pub fn complete(&self) -> bool {
        self.samples_sent >= self.samples_planned
            && !self.cancelled
            && self.past_permit_s <= 0.0
            && self.state_unknown_s.is_none()
    }
}

/// A radio that may transmit: exists only by consuming a [`TxPermit`].
pub struct TxRadio {
    radio: RxRadio,
    permit: TxPermit,
    used: bool,
}

impl std::fmt::Debug for TxRadio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxRadio")
            .field("args", &self.radio.args)
            .field("permit", &self.permit)
            .finish()
    }
}

/// Deactivates the TX stream when dropped (return, `?`, or panic unwind); the
/// inner stream then closes itself.
struct TxGuard(soapysdr::TxStream<Complex<f32>>);

impl Drop for TxGuard {
    fn drop(&mut self) {
        if self.0.active() {
            if let Err(e) = self.0.deactivate(None) {
                tracing::error!(error = %e, "deactivating the tx stream failed");
            }
        }
    }
}

impl TxRadio {
    /// The permit this handle transmits under.
    pub fn permit(&self) -> &TxPermit {
        &self.permit
    }

    /// Transmit the permitted CW tone, once.
    ///
    /// Frequency, rate, offset, gain and duration come from the permit only. The
    /// tone stops at `duration_s` by sample count and by the monotonic clock,
    /// whichever is first, or within a few milliseconds of `cancel` becoming true.
    /// The stream is deactivated and closed on every exit path, including a panic
    /// unwind. A driver that does not return is not waited for past the permit's
    /// deadline: the report then says since when the transmitter's state is unknown
    /// ([`TxReport::state_unknown_s`]); [`TxReport::complete`] says whether the
    /// tone went on air whole and in time.
    pub fn transmit_tone(&mut self, cancel: &AtomicBool) -> Result<TxReport, Error> {
        self.transmit_tone_observed(cancel, &|_| {})
    }

    /// [`TxRadio::transmit_tone`], calling `on_keyed` (on the calling thread, within
    /// a few milliseconds) with the monotonic instant the stream's activation was
    /// asked: from then on the transmitter may be keyed. The TX guard process
    /// starts its own deadline from it (docs/safety.md#the-tx-guard-process).
    pub fn transmit_tone_observed(
        &mut self,
        cancel: &AtomicBool,
        on_keyed: &dyn Fn(Instant),
    ) -> Result<TxReport, Error> {
        if self.used {
            return Err(Error::PermitUsed {
                args: self.radio.args.clone(),
                task_id: self.permit.task_id().to_string(),
            });
        }
        self.used = true;
        let p = &self.permit;
        let dev = &self.radio.dev;
        let args = self.radio.args.as_str();
        let tx = Ctl {
            dev,
            args,
            dir: Direction::Tx,
            ch: 0,
        };
        if let Some(report) = self.before_keying(&tx, cancel)? {
            return Ok(report);
        }
        let air = tune_and_verify(&tx, p)?;
        let rate = air.rate;

        // The one guarded place that opens a TX stream: a permit was consumed to get here.
        // Over SoapyRemote the stream's socket window (default 42 MiB: seconds of
        // samples) accepted the whole tone at once, so rxnode reported it sent and
        // closed the stream while the far radio had transmitted a fraction. The window
        // is bounded to ~50 ms of samples so writes follow the far DAC; a window named
        // in the device args is not honoured for TX.
        let mut stream_args = soapysdr::Args::new();
        if parse_args(args).get("driver").map(String::as_str) == Some("remote") {
            let window = ((rate * 0.05 * 4.0) as usize).max(64 * 1024);
            stream_args.set("remote:window", window.to_string());
        }
        #[allow(clippy::disallowed_methods)]
        let stream = dev
            .tx_stream_args::<Complex<f32>, _>(&[0], stream_args)
            .map_err(|e| tx.driver("set up tx stream".into(), e))?;
        let guard = TxGuard(stream);
        let plan = Tone {
            args: args.to_owned(),
            total: (p.duration_s() * rate).floor() as u64,
            limit: Duration::try_from_secs_f64(p.duration_s()).unwrap_or(Duration::MAX),
            step: p.tone_offset_hz() / rate,
            rate,
        };
        let (keyed, driven) = drive_watched(guard, plan, cancel, on_keyed)?;
        Ok(self.report(&keyed, driven, &air))
    }

    /// The checks before anything is set on the radio, in this order: a TX channel,
    /// an offset under half the permit's sample rate. `Some` (the report of a
    /// transmission that never keyed) when interrupted already or nothing to send.
    fn before_keying(&self, tx: &Ctl<'_>, cancel: &AtomicBool) -> Result<Option<TxReport>, Error> {
        let p = &self.permit;
        if tx.dev.num_channels(Direction::Tx).unwrap_or(0) == 0 {
            return Err(tx.unsupported("tx channel", 0, "none".into()));
        }
        let rate = p.sample_rate_hz();
        if p.tone_offset_hz().abs() >= rate / 2.0 {
            return Err(tx.unsupported(
                "tone_offset_hz",
                p.tone_offset_hz(),
                format!("|offset| < sample_rate_hz / 2 = {}", rate / 2.0),
            ));
        }
        // Interrupted already, or nothing to send: the transmitter is never keyed.
        if cancel.load(Ordering::SeqCst) || (p.duration_s() * rate).floor() < 1.0 {
            return Ok(Some(self.not_keyed(cancel.load(Ordering::SeqCst))));
        }
        Ok(None)
    }

    /// What went on air, from the driving thread's account and the watcher's.
    fn report(&self, keyed: &Keyed, driven: Driven, air: &OnAir) -> TxReport {
        let p = &self.permit;
        let (on_air_s, state_unknown_s) = match driven {
            Driven::Off { off } => (off.duration_since(keyed.activating).as_secs_f64(), None),
            Driven::Abandoned { confirmed, at } => (
                confirmed.duration_since(keyed.activating).as_secs_f64(),
                Some(at.duration_since(confirmed).as_secs_f64()),
            ),
        };
        // The stream is active from the activate call until the driver confirms it
        // off; beyond the permit's duration plus the teardown's own grace it
        // outlived the permit.
        let over = on_air_s + state_unknown_s.unwrap_or(0.0) - p.duration_s();
        let past_permit_s = if over > KEY_OFF_GRACE.as_secs_f64() {
            over
        } else {
            0.0
        };
        // A field only when it has a value: `state_unknown_s=None` reads as a fault.
        match state_unknown_s {
            Some(unknown) => tracing::warn!(
                args = %self.radio.args,
                sent = keyed.sent,
                cancelled = keyed.cancelled,
                on_air_s,
                state_unknown_s = unknown,
                "TX off"
            ),
            None => tracing::warn!(
                args = %self.radio.args,
                sent = keyed.sent,
                cancelled = keyed.cancelled,
                on_air_s,
                "TX off"
            ),
        }
        TxReport {
            task_id: p.task_id().to_string(),
            device: self.radio.args.clone(),
            started_unix_s: keyed.started_unix_s,
            stopped_unix_s: keyed.started_unix_s + on_air_s,
            samples_sent: keyed.sent,
            samples_planned: keyed.total,
            on_air_s,
            past_permit_s,
            state_unknown_s,
            frequency_hz: air.lo,
            tone_offset_hz: p.tone_offset_hz(),
            sample_rate_hz: air.rate,
            gain_db: air.gain,
            cancelled: keyed.cancelled,
        }
    }

    /// The report of a transmission that never keyed the transmitter.
    fn not_keyed(&self, cancelled: bool) -> TxReport {
        let p = &self.permit;
        let now = unix_now();
        TxReport {
            task_id: p.task_id().to_string(),
            device: self.radio.args.clone(),
            started_unix_s: now,
            stopped_unix_s: now,
            samples_sent: 0,
            samples_planned: (p.duration_s() * p.sample_rate_hz()).floor() as u64,
            on_air_s: 0.0,
            past_permit_s: 0.0,
            state_unknown_s: None,
            frequency_hz: p.frequency_hz(),
            tone_offset_hz: p.tone_offset_hz(),
            sample_rate_hz: p.sample_rate_hz(),
            gain_db: p.gain_db(),
            cancelled,
        }
    }
}

/// What the driver really set for the transmission.
struct OnAir {
    /// Actual sample rate, S/s.
    rate: f64,
    /// Actual LO, Hz.
    lo: f64,
    /// Actual gain, dB.
    gain: f64,
}

/// Set the permit's rate, LO and gain, then read them back.
///
/// What goes on air is what the driver set, not what was asked. The policy
/// judged the permit's span (LO ± |offset|); a driver that rounds the LO off it,
/// or sets more gain, is refused before keying. The tone is synthesised from the
/// actual rate, so its offset is exact.
fn tune_and_verify(tx: &Ctl<'_>, p: &TxPermit) -> Result<OnAir, Error> {
    let dev = tx.dev;
    tx.sample_rate(p.sample_rate_hz())?;
    tx.frequency(p.frequency_hz())?;
    tx.gain(p.gain_db())?;
    let readback = |what: &str, e: soapysdr::Error| tx.driver(format!("read back tx {what}"), e);
    let rate = dev
        .sample_rate(Direction::Tx, 0)
        .map_err(|e| readback("sample rate", e))?;
    let lo = dev
        .frequency(Direction::Tx, 0)
        .map_err(|e| readback("frequency", e))?;
    let gain = dev
        .gain(Direction::Tx, 0)
        .map_err(|e| readback("gain", e))?;
    if !lo.is_finite() || (lo - p.frequency_hz()).abs() > TX_LO_TOLERANCE_HZ {
        return Err(tx.unsupported(
            "tx frequency_hz (read back)",
            lo,
            format!(
                "the permit's {} Hz ± {TX_LO_TOLERANCE_HZ} Hz",
                p.frequency_hz()
            ),
        ));
    }
    if !gain.is_finite() || gain > p.gain_db() + TX_GAIN_TOLERANCE_DB {
        return Err(tx.unsupported(
            "tx gain_db (read back)",
            gain,
            format!("at most the permit's {} dB", p.gain_db()),
        ));
    }
    if !rate.is_finite() || rate <= 0.0 || p.tone_offset_hz().abs() >= rate / 2.0 {
        return Err(tx.unsupported(
            "tone_offset_hz",
            p.tone_offset_hz(),
            format!("|offset| < actual sample rate / 2 = {}", rate / 2.0),
        ));
    }
    Ok(OnAir { rate, lo, gain })
}

/// The tone to send, owned by the thread that drives the stream.
struct Tone {
    /// Device args (for messages).
    args: String,
    /// Samples of the whole tone.
    total: u64,
    /// The permit's duration.
    limit: Duration,
    /// Tone phase step per sample, cycles.
    step: f64,
    /// Actual sample rate, S/s.
    rate: f64,
}

/// What the keyed transmitter did.
struct Keyed {
    /// Samples accepted by the driver.
    sent: u64,
    /// Samples of the whole tone.
    total: u64,
    /// When the stream's activation was asked (monotonic): from then on the
    /// transmitter may be keyed.
    activating: Instant,
    /// The same moment on the wall clock, unix seconds.
    started_unix_s: f64,
    /// Cut short by the cancel flag (or by the permit's deadline).
    cancelled: bool,
}

/// How the tone ended for the driver.
enum Driven {
    /// The driver confirmed the stream deactivated at `off` (then it was closed).
    Off { off: Instant },
    /// The driver had not answered since `confirmed` when rxnode stopped waiting at
    /// `at`: the transmitter's state is unknown from `confirmed` on.
    Abandoned { confirmed: Instant, at: Instant },
}

/// What the driving thread shares with the watcher while the tone is on.
struct Shared {
    /// Asks the driving thread to key off at its next step.
    stop: AtomicBool,
    /// The driver's account so far.
    progress: Mutex<Progress>,
}

/// The driver's account so far, as the driving thread updates it.
struct Progress {
    /// Activation asked (monotonic, wall clock unix s).
    activating: Option<(Instant, f64)>,
    /// Samples accepted.
    sent: u64,
    /// When the driver last answered: activation confirmed, samples taken.
    confirmed: Option<Instant>,
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut Progress)) {
        if let Ok(mut p) = self.progress.lock() {
            f(&mut p);
        }
    }

    fn snapshot(&self) -> (Option<(Instant, f64)>, u64, Option<Instant>) {
        match self.progress.lock() {
            Ok(p) => (p.activating, p.sent, p.confirmed),
            Err(_) => (None, 0, None),
        }
    }
}

/// Drive the stream on a thread of its own while this one watches the permit's
/// deadline and `cancel`.
///
/// A driver call that blocks (a hung USB radio, a frozen SoapySDRServer) cannot
/// hold the transmitter keyed behind rxnode's back: at the permit's deadline (its
/// duration plus [`KEY_OFF_GRACE`] after activation was asked), or on `cancel`, the
/// driving thread is told to key off; if the driver does not confirm within
/// [`ABANDON_AFTER`], rxnode stops feeding it, stops waiting and reports the
/// transmitter's state as unknown since the driver's last answer. The abandoned
/// thread still deactivates and closes the stream if the driver ever returns; the
/// process's exit closes its connections (a SoapySDRServer then tears its stream
/// down when it sees the client gone).
fn drive_watched(
    guard: TxGuard,
    tone: Tone,
    cancel: &AtomicBool,
    on_keyed: &dyn Fn(Instant),
) -> Result<(Keyed, Driven), Error> {
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        progress: Mutex::new(Progress {
            activating: None,
            sent: 0,
            confirmed: None,
        }),
    });
    let total = tone.total;
    let limit = tone.limit;
    let args = tone.args.clone();
    let (done_tx, done_rx) = mpsc::channel();
    let worker = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("rxnode-tx".into())
            .spawn(move || {
                let r = drive(guard, &tone, &shared);
                let _ = done_tx.send(r);
            })
            .map_err(|e| Error::Stream {
                args: args.clone(),
                message: format!("cannot start the tx thread: {e}"),
            })?
    };
    let mut cancelled = false;
    let mut stop_asked: Option<Instant> = None;
    let mut told_keyed = false;
    loop {
        match done_rx.recv_timeout(WATCH_STEP) {
            Ok(r) => {
                // `stop` is only ever set here: by `cancel` or at the deadline.
                let (_, off) = r?;
                let (act, sent, _) = shared.snapshot();
                let Some((activating, started_unix_s)) = act else {
                    return Err(Error::Stream {
                        args,
                        message: "the tx thread ended without activating the stream".into(),
                    });
                };
                let keyed = Keyed {
                    sent,
                    total,
                    activating,
                    started_unix_s,
                    cancelled,
                };
                return Ok((keyed, Driven::Off { off }));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The driving thread ended without a word: it panicked. Its guard
                // deactivated and closed the stream during the unwind.
                return match worker.join() {
                    Err(panic) => std::panic::resume_unwind(panic),
                    Ok(()) => Err(Error::Stream {
                        args,
                        message: "the tx thread ended without a report".into(),
                    }),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let (act, sent, confirmed) = shared.snapshot();
        if let (false, Some((activating, _))) = (told_keyed, act) {
            told_keyed = true;
            on_keyed(activating);
        }
        if stop_asked.is_none() && cancel.load(Ordering::SeqCst) {
            cancelled = true;
            shared.stop.store(true, Ordering::SeqCst);
            stop_asked = Some(now);
        }
        if let Some((activating, _)) = act {
            if stop_asked.is_none() && now >= activating + limit + KEY_OFF_GRACE {
                tracing::error!(args = %args, sent, "tx stream still active at the permit's deadline: keying off");
                shared.stop.store(true, Ordering::SeqCst);
                stop_asked = Some(now);
            }
        }
        let (Some(asked), Some((activating, started_unix_s))) = (stop_asked, act) else {
            continue;
        };
        if now >= asked + ABANDON_AFTER {
            tracing::error!(args = %args, sent, "the driver does not answer: tx state unknown");
            let keyed = Keyed {
                sent,
                total,
                activating,
                started_unix_s,
                cancelled,
            };
            let confirmed = confirmed.unwrap_or(activating);
            return Ok((keyed, Driven::Abandoned { confirmed, at: now }));
        }
    }
}

/// The driving thread: activate, write the tone until it is sent, its duration
/// ends or `stop` is set, deactivate; the stream closes when `guard` drops (also
/// on a panic unwind). Returns whether `stop` cut it short and when the driver
/// confirmed the stream off.
fn drive(mut guard: TxGuard, tone: &Tone, shared: &Shared) -> Result<(bool, Instant), Error> {
    let activating = Instant::now();
    let started = unix_now();
    shared.update(|p| p.activating = Some((activating, started)));
    guard.0.activate(None).map_err(|e| Error::Driver {
        args: tone.args.clone(),
        op: "activate tx stream".into(),
        message: e.message,
    })?;
    shared.update(|p| p.confirmed = Some(Instant::now()));
    tracing::warn!(args = %tone.args, "TX on");
    let (sent, cancelled) = send_tone(&mut guard, tone, shared, activating, started)?;
    // A radio on another host whose server died fails here: the node then knows
    // only what it sent, not whether the far transmitter stopped. Say so.
    guard.0.deactivate(None).map_err(|e| Error::Stream {
        args: tone.args.clone(),
        message: format!(
            "deactivate tx stream failed: {}; {}",
            e.message.trim_end_matches([' ', ':']),
            tx_state_unknown(sent, tone.total, started)
        ),
    })?;
    let off = Instant::now();
    drop(guard);
    Ok((cancelled, off))
}

/// Write the tone at `rate` until its duration (by sample count and by the
/// monotonic clock) ends or `stop` is set: samples sent, and whether `stop` cut
/// it short. Each write waits at most until the permit's end.
fn send_tone(
    guard: &mut TxGuard,
    tone: &Tone,
    shared: &Shared,
    t0: Instant,
    started: f64,
) -> Result<(u64, bool), Error> {
    let (total, rate, step) = (tone.total, tone.rate, tone.step);
    let block = write_len(rate, guard.0.mtu().unwrap_or(4096).max(1));
    let mut buf = vec![Complex::new(0.0f32, 0.0); block];
    let mut phase = 0.0f64;
    let mut sent = 0u64;
    while sent < total {
        if shared.stop.load(Ordering::SeqCst) {
            return Ok((sent, true));
        }
        let elapsed = t0.elapsed();
        let Some(left) = tone.limit.checked_sub(elapsed).filter(|d| !d.is_zero()) else {
            break;
        };
        // Never more than TX_LEAD of tone ahead of the clock: a driver or a
        // SoapyRemote link with deep buffers (socket buffers of many MB) would
        // otherwise take the whole tone in a fraction of its duration, so that a
        // Ctrl-C could no longer stop what is already queued and the report's
        // time on air would be the time it took to queue.
        let ahead = sent as f64 / rate - elapsed.as_secs_f64();
        if ahead > TX_LEAD.as_secs_f64() {
            let nap = (ahead - TX_LEAD.as_secs_f64()).min(0.002);
            std::thread::sleep(Duration::from_secs_f64(nap));
            continue;
        }
        let n = (total - sent).min(block as u64) as usize;
        synth(&mut buf[..n], &mut phase, step);
        #[cfg(test)]
        if sent > 0 && tests::PANIC_IN_TX.load(Ordering::SeqCst) {
            panic!("injected panic while transmitting");
        }
        let last = sent + n as u64 >= total;
        let timeout_us = left.min(WRITE_TIMEOUT).as_micros().max(1) as i64;
        match write_block(guard, &buf[..n], last, &mut phase, step, timeout_us) {
            // A timeout says nothing about the radio (a frozen server's client
            // times out too): only samples taken count as its answer.
            Ok(0) => {}
            Ok(w) => {
                sent += w as u64;
                shared.update(|p| {
                    p.sent = sent;
                    p.confirmed = Some(Instant::now());
                });
            }
            Err(e) => {
                return Err(Error::Stream {
                    args: tone.args.clone(),
                    message: format!(
                        "{}; {}",
                        stream_msg("tx write", &e),
                        tx_state_unknown(sent, total, started)
                    ),
                })
            }
        }
    }
    Ok((sent, false))
}

/// Hand `block` to the driver: how many samples it took (none on a timeout); the
/// phase is rewound for the samples it did not take.
fn write_block(
    guard: &mut TxGuard,
    block: &[Complex<f32>],
    last: bool,
    phase: &mut f64,
    step: f64,
    timeout_us: i64,
) -> Result<usize, soapysdr::Error> {
    let n = block.len();
    match guard.0.write(&[block], None, last, timeout_us) {
        Ok(w) => {
            // Rewind the phase for samples the driver did not take.
            *phase = (*phase - step * (n - w) as f64).rem_euclid(1.0);
            Ok(w)
        }
        Err(e) if e.code == ErrorCode::Timeout => {
            *phase = (*phase - step * n as f64).rem_euclid(1.0);
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

/// Samples per write: about 2 ms, so `cancel` is seen promptly.
/// (`max` before `min`: a driver reporting an MTU below 64 must not panic `clamp`.)
fn write_len(rate: f64, mtu: usize) -> usize {
    ((rate * 0.002) as usize)
        .max(64)
        .min(mtu.min(65_536))
        .max(1)
}

/// The next `buf.len()` samples of the tone (amplitude 0.7), from `phase` (cycles).
fn synth(buf: &mut [Complex<f32>], phase: &mut f64, step: f64) {
    for s in buf.iter_mut() {
        let a = std::f64::consts::TAU * *phase;
        *s = Complex::new((0.7 * a.cos()) as f32, (0.7 * a.sin()) as f32);
        *phase = (*phase + step).rem_euclid(1.0);
    }
}

/// How far ahead of the clock `transmit_tone` may hand samples to the driver.
const TX_LEAD: Duration = Duration::from_millis(50);
/// The longest one write may wait for the driver (less when the permit ends sooner).
const WRITE_TIMEOUT: Duration = Duration::from_millis(10);
/// How long after the permit's duration the stream may take to be torn down
/// before rxnode keys off from its side (docs/safety.md#time-on-air).
const KEY_OFF_GRACE: Duration = Duration::from_millis(250);
/// How long rxnode waits for the driver to confirm a key-off it asked for before
/// it reports the transmitter's state as unknown and stops waiting.
const ABANDON_AFTER: Duration = Duration::from_millis(150);
/// How often the watcher looks at `cancel` and the deadline.
const WATCH_STEP: Duration = Duration::from_millis(2);

/// What is known about a transmitter whose stream failed mid-tone.
fn tx_state_unknown(sent: u64, total: u64, started_unix_s: f64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos((started_unix_s * 1e9) as i128)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| format!("{started_unix_s:.3} (unix s)"));
    format!(
        "keyed at {at}, {sent} of {total} samples accepted by the driver; the transmitter's \
         state after that is unknown (a radio on another host may still be keyed): check it"
    )
}

/// How far the driver's actual TX LO may sit from the permit's (drivers round to
/// their synthesizer's step; anything more would move the on-air span the
/// policy approved).
const TX_LO_TOLERANCE_HZ: f64 = 1.0;
/// How much more TX gain than permitted the driver may report (its rounding).
const TX_GAIN_TOLERANCE_DB: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    /// Test-only: make `transmit_tone` panic after its first write.
    pub(super) static PANIC_IN_TX: AtomicBool = AtomicBool::new(false);

    /// A panic while the tone is on air still deactivates and closes the TX stream.
    /// (The only unit test in this crate that loads SoapySDR modules.)
    #[test]
    fn tx_stream_is_torn_down_on_panic_unwind() {
        use rxnode_interlock::{
            authorize, validate_task, verify_authorization, Approval, Policy, ValidateOptions,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.log");
        std::env::set_var("RXSIM_EVENT_LOG", &log);
        crate::use_sim().expect("use_sim");
        let dev = "driver=rxsim,serial=unwind";
        let text = format!(
            "TASK_ID = UNWIND\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\n\
EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
HARDWARE_ACCESS = YES\nRF_RX = NO\nRF_TX = YES\nALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n\
```rx-plan\n{{\"steps\": [{{\"op\": \"tx_tone\", \"device\": \"{dev}\", \
\"frequency_hz\": 434.0e6, \"sample_rate_hz\": 1.0e6, \"tone_offset_hz\": 50e3, \
\"gain_db\": 0, \"duration_s\": 0.5}}]}}\n```\n"
        );
        let task = validate_task(&text, &ValidateOptions::default()).expect("task");
        let approval = Approval::new(&task, "c", "t");
        let auth = verify_authorization(&task, &approval, "AUTHORIZE RF TX", "t").expect("auth");
        let policy = Policy::from_json(
            r#"{"tx": {"allowed_ranges_hz": [[433e6, 435e6]], "max_gain_db": 10, "max_duration_s": 1}}"#,
        )
        .expect("policy");
        let permit = authorize(&task, &approval, auth, 0, &policy).expect("permit");
        let mut tx = RxRadio::open(dev)
            .expect("open")
            .into_tx(permit)
            .expect("into_tx");
        PANIC_IN_TX.store(true, Ordering::SeqCst);
        let cancel = AtomicBool::new(false);
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tx.transmit_tone(&cancel)));
        PANIC_IN_TX.store(false, Ordering::SeqCst);
        assert!(r.is_err(), "the injected panic did not happen");
        let events = std::fs::read_to_string(&log).expect("log");
        for ev in ["activateStream", "deactivateStream", "closeStream"] {
            let n = events
                .lines()
                .filter(|l| l.contains(&format!(" {ev} TX serial=unwind")))
                .count();
            assert_eq!(n, 1, "{ev}: {events}");
        }
    }
}
