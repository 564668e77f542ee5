//! The permitted tone on air: the driving thread that paces the writes (never
//! more than [`TX_LEAD`] ahead of the clock) and the watcher that keys off at the
//! permit's deadline or on `cancel`, and stops waiting for a driver that does not
//! answer. Reached only from [`super::tx::TxRadio::transmit_tone`], which holds
//! the stream it drives.
use super::tx::TxGuard;
use super::{stream_msg, unix_now};
use crate::Error;
use num_complex::Complex;
use soapysdr::ErrorCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The tone to send, owned by the thread that drives the stream.
pub(super) struct Tone {
    /// Device args (for messages).
    pub(super) args: String,
    /// Samples of the whole tone.
    pub(super) total: u64,
    /// The permit's duration.
    pub(super) limit: Duration,
    /// Tone phase step per sample, cycles.
    pub(super) step: f64,
    /// Actual sample rate, S/s.
    pub(super) rate: f64,
}

/// What the keyed transmitter did.
pub(super) struct Keyed {
    /// Samples accepted by the driver.
    pub(super) sent: u64,
    /// Samples of the whole tone.
    pub(super) total: u64,
    /// When the stream's activation was asked (monotonic): from then on the
    /// transmitter may be keyed.
    pub(super) activating: Instant,
    /// The same moment on the wall clock, unix seconds.
    pub(super) started_unix_s: f64,
    /// Cut short by the cancel flag (or by the permit's deadline).
    pub(super) cancelled: bool,
}

/// How the tone ended for the driver.
pub(super) enum Driven {
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
pub(super) fn drive_watched(
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
    let active = Instant::now();
    shared.update(|p| p.confirmed = Some(active));
    tracing::warn!(args = %tone.args, "TX on");
    let (sent, mut cancelled) = send_tone(&mut guard, tone, shared, activating, started)?;
    if !cancelled {
        cancelled = let_the_tone_out(tone, shared, activating, active, sent);
    }
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

/// Keep the stream active until the samples handed over have had their own
/// duration on air since the activation returned — never past the permit's limit
/// from the activation asked. The driver (USB transfer queues, a SoapyRemote
/// link) still holds up to [`TX_LEAD`] of tone when the last write returns: a
/// deactivate then would cut the tone's end off, and it would be reported whole.
/// Returns whether `stop` ended the wait (the end of the tone was then cut).
fn let_the_tone_out(
    tone: &Tone,
    shared: &Shared,
    activating: Instant,
    active: Instant,
    sent: u64,
) -> bool {
    let needed = Duration::try_from_secs_f64(sent as f64 / tone.rate).unwrap_or(Duration::MAX);
    let until = (active + needed).min(activating + tone.limit);
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return true;
        }
        let now = Instant::now();
        if now >= until {
            return false;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(2)));
    }
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
pub(super) const KEY_OFF_GRACE: Duration = Duration::from_millis(250);
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

#[cfg(test)]
mod tests {
    use super::super::RxRadio;
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
