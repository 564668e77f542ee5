//! Transmission: the TX-capable radio handle and the one place that opens a TX
//! stream (the single `#[allow(clippy::disallowed_methods)]` of the workspace).
//! A [`TxRadio`] exists only by consuming an [`rxnode_interlock::TxPermit`]; the
//! tone it keys is driven and watched in `tx_tone.rs`.
use super::tx_tone::{drive_watched, Driven, Keyed, Tone, KEY_OFF_GRACE};
use super::{parse_args, unix_now, Ctl, RxRadio};
use crate::Error;
use num_complex::Complex;
use rxnode_interlock::{TxPermit, TX_LO_TOLERANCE_HZ};
use serde::{Deserialize, Serialize};
use soapysdr::Direction;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// sample accepted, the stream active at least as long as those samples take
    /// at the rate (a driver that buffers still holds the tone's end when the last
    /// write returns), not cut short, the stream torn down in time and confirmed
    /// off by the driver.
    pub fn complete(&self) -> bool {
        let needed_s = self.samples_planned as f64 / self.sample_rate_hz;
        self.samples_sent >= self.samples_planned
            && self.on_air_s >= needed_s
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
pub(super) struct TxGuard(pub(super) soapysdr::TxStream<Complex<f32>>);

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

/// How much more TX gain than permitted the driver may report (its rounding).
const TX_GAIN_TOLERANCE_DB: f64 = 0.5;
