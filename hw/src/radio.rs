//! The radio handle (RX-only) and its TX typestate.
//!
//! [`RxRadio`] wraps a SoapySDR device privately. Transmission exists only on
//! [`TxRadio`], obtained by consuming an [`rxnode_interlock::TxPermit`].
use crate::probe::{probe_into, DeviceInfo};
use crate::{sim, Error};
use crate::{Ci16Source, ReadOutcome, SampleSource};
use num_complex::Complex;
use rxnode_interlock::TxPermit;
use serde::Serialize;
use soapysdr::{Device, Direction, ErrorCode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What to set on the receiver. `None` leaves a setting as the device has it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RxConfig {
    /// Centre frequency, Hz.
    pub frequency_hz: f64,
    /// Sample rate, S/s.
    pub sample_rate_hz: f64,
    /// Overall RX gain, dB.
    pub gain_db: Option<f64>,
    /// Analog bandwidth, Hz.
    pub bandwidth_hz: Option<f64>,
    /// Antenna name.
    pub antenna: Option<String>,
    /// Clock (reference) source, e.g. `internal` / `external`.
    pub clock_source: Option<String>,
}

/// The settings read back from the device after [`RxRadio::configure`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActualSettings {
    /// Actual centre frequency, Hz.
    pub frequency_hz: f64,
    /// Actual sample rate, S/s.
    pub sample_rate_hz: f64,
    /// Actual overall gain, dB.
    pub gain_db: f64,
    /// Actual analog bandwidth, Hz (`None` when the driver has none).
    pub bandwidth_hz: Option<f64>,
    /// Selected antenna.
    pub antenna: Option<String>,
    /// Selected clock source.
    pub clock_source: Option<String>,
}

/// An open radio, receive-only. The SoapySDR handle never leaves this crate.
///
/// There is no transmit method on the RX-only handle:
///
/// ```compile_fail
/// fn key(radio: &mut rxnode_hw::RxRadio, cancel: &std::sync::atomic::AtomicBool) {
///     let _ = radio.transmit_tone(cancel);
/// }
/// ```
///
/// A permit cannot be skipped or made up to get a [`TxRadio`]:
///
/// ```compile_fail
/// fn key(radio: rxnode_hw::RxRadio) {
///     let _ = radio.into_tx(Default::default());
/// }
/// ```
///
/// Nor cloned to transmit twice:
///
/// ```compile_fail
/// fn twice(radio: rxnode_hw::RxRadio, permit: rxnode_interlock::TxPermit) {
///     let _ = radio.into_tx(permit.clone());
/// }
/// ```
pub struct RxRadio {
    dev: Device,
    args: String,
}

impl std::fmt::Debug for RxRadio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxRadio").field("args", &self.args).finish()
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

fn fmt_ranges(r: &[soapysdr::Range]) -> String {
    r.iter()
        .map(|r| format!("{}..{}", r.minimum, r.maximum))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parse `k=v,k=v` device args into a sorted map (whitespace trimmed).
pub(crate) fn parse_args(args: &str) -> BTreeMap<String, String> {
    args.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), v.trim().to_owned()),
            None => (p.trim().to_owned(), String::new()),
        })
        .collect()
}

/// SoapyRemote's transport options are *stream* args (its client reads `remote:mtu`,
/// `remote:window` and `remote:priority` only at setupStream); named in the device args
/// of a task they would be ignored. Passed on from the device args, unchanged.
fn remote_stream_args(args: &str) -> soapysdr::Args {
    let mut out = soapysdr::Args::new();
    for (k, v) in parse_args(args) {
        if matches!(
            k.as_str(),
            "remote:mtu" | "remote:window" | "remote:priority" | "remote:prot"
        ) {
            out.set(k.as_str(), v.as_str());
        }
    }
    out
}

/// Shared setters: check against the device's ranges, then set, naming args and value.
struct Ctl<'a> {
    dev: &'a Device,
    args: &'a str,
    dir: Direction,
}

impl Ctl<'_> {
    fn driver(&self, op: String, e: soapysdr::Error) -> Error {
        Error::Driver {
            args: self.args.to_owned(),
            op,
            message: e.message,
        }
    }

    fn unsupported(&self, setting: &str, value: impl ToString, supported: String) -> Error {
        Error::Unsupported {
            args: self.args.to_owned(),
            setting: setting.to_owned(),
            value: value.to_string(),
            supported,
        }
    }

    fn in_ranges(v: f64, r: &[soapysdr::Range]) -> bool {
        v.is_finite() && r.iter().any(|r| r.minimum <= v && v <= r.maximum)
    }

    fn frequency(&self, hz: f64) -> Result<(), Error> {
        let r = self
            .dev
            .frequency_range(self.dir, 0)
            .map_err(|e| self.driver("get frequency range".into(), e))?;
        if !Self::in_ranges(hz, &r) {
            return Err(self.unsupported("frequency_hz", hz, fmt_ranges(&r)));
        }
        self.dev
            .set_frequency(self.dir, 0, hz, ())
            .map_err(|e| self.driver(format!("set frequency {hz} Hz"), e))
    }

    fn sample_rate(&self, rate: f64) -> Result<(), Error> {
        let r = self
            .dev
            .get_sample_rate_range(self.dir, 0)
            .map_err(|e| self.driver("get sample rate range".into(), e))?;
        if !Self::in_ranges(rate, &r) {
            return Err(self.unsupported("sample_rate_hz", rate, fmt_ranges(&r)));
        }
        self.dev
            .set_sample_rate(self.dir, 0, rate)
            .map_err(|e| self.driver(format!("set sample rate {rate} S/s"), e))
    }

    fn gain(&self, db: f64) -> Result<(), Error> {
        let r = self
            .dev
            .gain_range(self.dir, 0)
            .map_err(|e| self.driver("get gain range".into(), e))?;
        if !Self::in_ranges(db, std::slice::from_ref(&r)) {
            return Err(self.unsupported("gain_db", db, fmt_ranges(&[r])));
        }
        self.dev
            .set_gain(self.dir, 0, db)
            .map_err(|e| self.driver(format!("set gain {db} dB"), e))
    }
}

impl RxRadio {
    /// Open the device matching `args` (e.g. `driver=hackrf,serial=…`).
    pub fn open(args: &str) -> Result<RxRadio, Error> {
        sim::touch();
        let dev = Device::new(args).map_err(|e| Error::Open {
            args: args.to_owned(),
            message: e.message,
        })?;
        tracing::info!(args, "opened radio");
        Ok(RxRadio {
            dev,
            args: args.to_owned(),
        })
    }

    /// The args this radio was opened with.
    pub fn args(&self) -> &str {
        &self.args
    }

    fn rx(&self) -> Ctl<'_> {
        Ctl {
            dev: &self.dev,
            args: &self.args,
            dir: Direction::Rx,
        }
    }

    fn driver_err(&self, op: impl Into<String>, e: soapysdr::Error) -> Error {
        Error::Driver {
            args: self.args.clone(),
            op: op.into(),
            message: e.message,
        }
    }

    /// Probe this open device (read-only), as [`crate::enumerate`] does.
    pub fn probe(&self) -> DeviceInfo {
        let map = parse_args(&self.args);
        let mut info = DeviceInfo {
            args: self.args.clone(),
            driver: map.get("driver").cloned().unwrap_or_default(),
            serial: map.get("serial").cloned(),
            label: None,
            hardware_key: None,
            rx_channels: 0,
            tx_channels: 0,
            frequency_ranges_hz: Vec::new(),
            sample_rate_ranges_hz: Vec::new(),
            gain_range_db: None,
            gain_elements: Vec::new(),
            antennas: Vec::new(),
            clock_sources: Vec::new(),
            sensors: BTreeMap::new(),
            hardware_info: BTreeMap::new(),
            error: None,
        };
        probe_into(&self.dev, &mut info);
        if info.serial.is_none() {
            info.serial = info.hardware_info.get("serial").cloned();
        }
        info
    }

    /// Set clock source, rate, frequency, bandwidth, gain and antenna (in that order),
    /// each checked against the device's ranges first; then read back what the device has.
    pub fn configure(&mut self, cfg: &RxConfig) -> Result<ActualSettings, Error> {
        if let Some(src) = &cfg.clock_source {
            self.set_clock_source(src)?;
        }
        let rx = self.rx();
        rx.sample_rate(cfg.sample_rate_hz)?;
        rx.frequency(cfg.frequency_hz)?;
        if let Some(bw) = cfg.bandwidth_hz {
            let r = self
                .dev
                .bandwidth_range(Direction::Rx, 0)
                .map_err(|e| self.driver_err("get bandwidth range", e))?;
            if !r.is_empty() && !Ctl::in_ranges(bw, &r) {
                return Err(rx.unsupported("bandwidth_hz", bw, fmt_ranges(&r)));
            }
            self.dev
                .set_bandwidth(Direction::Rx, 0, bw)
                .map_err(|e| self.driver_err(format!("set bandwidth {bw} Hz"), e))?;
        }
        if let Some(g) = cfg.gain_db {
            rx.gain(g)?;
        }
        if let Some(a) = &cfg.antenna {
            let list = self
                .dev
                .antennas(Direction::Rx, 0)
                .map_err(|e| self.driver_err("list antennas", e))?;
            if !list.contains(a) {
                return Err(rx.unsupported("antenna", a, list.join(", ")));
            }
            self.dev
                .set_antenna(Direction::Rx, 0, a.as_str())
                .map_err(|e| self.driver_err(format!("set antenna {a}"), e))?;
        }
        self.actual()
    }

    /// Read back the current RX settings.
    pub fn actual(&self) -> Result<ActualSettings, Error> {
        let rx = Direction::Rx;
        Ok(ActualSettings {
            frequency_hz: self
                .dev
                .frequency(rx, 0)
                .map_err(|e| self.driver_err("get frequency", e))?,
            sample_rate_hz: self
                .dev
                .sample_rate(rx, 0)
                .map_err(|e| self.driver_err("get sample rate", e))?,
            gain_db: self
                .dev
                .gain(rx, 0)
                .map_err(|e| self.driver_err("get gain", e))?,
            bandwidth_hz: self.dev.bandwidth(rx, 0).ok().filter(|b| *b > 0.0),
            antenna: self.dev.antenna(rx, 0).ok().filter(|a| !a.is_empty()),
            clock_source: self.clock_source()?,
        })
    }

    /// The clock sources this device offers.
    pub fn clock_sources(&self) -> Result<Vec<String>, Error> {
        self.dev
            .list_clock_sources()
            .map_err(|e| self.driver_err("list clock sources", e))
    }

    /// The selected clock source (`None` when the device has no choice).
    pub fn clock_source(&self) -> Result<Option<String>, Error> {
        if self.clock_sources()?.is_empty() {
            return Ok(None);
        }
        self.dev
            .get_clock_source()
            .map(Some)
            .map_err(|e| self.driver_err("get clock source", e))
    }

    /// Select a clock source; it must be one the device lists.
    pub fn set_clock_source(&mut self, source: &str) -> Result<(), Error> {
        let list = self.clock_sources()?;
        if !list.iter().any(|s| s == source) {
            return Err(self
                .rx()
                .unsupported("clock_source", source, list.join(", ")));
        }
        self.dev
            .set_clock_source(source)
            .map_err(|e| self.driver_err(format!("set clock source {source}"), e))
    }

    /// Every device sensor with its current reading.
    pub fn sensors(&self) -> Result<BTreeMap<String, String>, Error> {
        let keys = self
            .dev
            .list_sensors()
            .map_err(|e| self.driver_err("list sensors", e))?;
        let mut out = BTreeMap::new();
        for k in keys {
            let v = self
                .dev
                .read_sensor(k.as_str())
                .map_err(|e| self.driver_err(format!("read sensor {k}"), e))?;
            out.insert(k, v);
        }
        Ok(out)
    }

    /// The driver's hardware info key/values (e.g. `clock source`).
    pub fn hardware_info(&self) -> Result<BTreeMap<String, String>, Error> {
        let hw = self
            .dev
            .hardware_info()
            .map_err(|e| self.driver_err("get hardware info", e))?;
        Ok(hw
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect())
    }

    /// Set up an RX stream (CF32, channel 0); it is activated by its first read.
    /// Deactivated (if active) and closed on drop.
    pub fn rx_stream(&mut self) -> Result<RxStream, Error> {
        // Set up now, activate on the first read: whatever the caller does in
        // between (threads, buffers, FFT plans) never counts against the
        // driver's buffer and cannot cause an overflow before the first sample.
        let inner = self
            .dev
            .rx_stream_args::<Complex<f32>, _>(&[0], remote_stream_args(&self.args))
            .map_err(|e| self.driver_err("set up rx stream", e))?;
        Ok(RxStream {
            inner,
            args: self.args.clone(),
        })
    }

    /// Retune the receiver (checked against the device's range) and read back the
    /// centre the driver really set (used by sweeps between hops).
    pub fn tune(&mut self, frequency_hz: f64) -> Result<f64, Error> {
        self.rx().frequency(frequency_hz)?;
        self.dev
            .frequency(Direction::Rx, 0)
            .map_err(|e| self.driver_err("get frequency", e))
    }

    /// Set named RX gain elements (e.g. `LNA`, `VGA`), each checked against the
    /// element's own range first; an element the device does not list is refused.
    pub fn set_gain_elements(&mut self, gains: &BTreeMap<String, f64>) -> Result<(), Error> {
        let names = self
            .dev
            .list_gains(Direction::Rx, 0)
            .map_err(|e| self.driver_err("list gain elements", e))?;
        for (name, db) in gains {
            if !names.iter().any(|n| n == name) {
                return Err(self
                    .rx()
                    .unsupported("gain element", name, names.join(", ")));
            }
            let r = self
                .dev
                .gain_element_range(Direction::Rx, 0, name.as_str())
                .map_err(|e| self.driver_err(format!("get gain range of {name}"), e))?;
            if !Ctl::in_ranges(*db, std::slice::from_ref(&r)) {
                return Err(self.rx().unsupported(
                    &format!("gain_db.{name}"),
                    db,
                    fmt_ranges(&[r]),
                ));
            }
            self.dev
                .set_gain_element(Direction::Rx, 0, name.as_str(), *db)
                .map_err(|e| self.driver_err(format!("set gain {name} {db} dB"), e))?;
        }
        Ok(())
    }

    /// Every RX gain element with the gain the driver reports for it now.
    pub fn gain_elements(&self) -> Result<BTreeMap<String, f64>, Error> {
        let names = self
            .dev
            .list_gains(Direction::Rx, 0)
            .map_err(|e| self.driver_err("list gain elements", e))?;
        let mut out = BTreeMap::new();
        for n in names {
            let g = self
                .dev
                .gain_element(Direction::Rx, 0, n.as_str())
                .map_err(|e| self.driver_err(format!("get gain {n}"), e))?;
            out.insert(n, g);
        }
        Ok(out)
    }

    /// Set up an RX stream in the driver's native CS16 format (channel 0), for
    /// recording full rate without a float round trip (SigMF `ci16_le`). Activated by
    /// its first read; deactivated (if active) and closed on drop. Fails (naming the
    /// device) when the driver offers no CS16 stream.
    pub fn rx_stream_ci16(&mut self) -> Result<RxStreamCi16, Error> {
        let formats = self
            .dev
            .stream_formats(Direction::Rx, 0)
            .map_err(|e| self.driver_err("list rx stream formats", e))?;
        if !formats.contains(&soapysdr::Format::CS16) {
            return Err(self.rx().unsupported(
                "record_format",
                "ci16",
                formats
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        let inner = self
            .dev
            .rx_stream_args::<Complex<i16>, _>(&[0], remote_stream_args(&self.args))
            .map_err(|e| self.driver_err("set up rx stream (CS16)", e))?;
        Ok(RxStreamCi16 {
            inner,
            args: self.args.clone(),
        })
    }

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

/// An active RX stream (CF32, channel 0), owned and `Send`.
pub struct RxStream {
    inner: soapysdr::RxStream<Complex<f32>>,
    args: String,
}

impl std::fmt::Debug for RxStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxStream")
            .field("args", &self.args)
            .finish()
    }
}

impl RxStream {
    /// Deactivate the stream (if active); the next read activates it again. A
    /// sweep pauses between hops so no sample from before a retune is kept.
    pub fn pause(&mut self) -> Result<(), Error> {
        if self.inner.active() {
            self.inner.deactivate(None).map_err(|e| Error::Stream {
                args: self.args.clone(),
                message: stream_msg("deactivate rx stream", &e),
            })?;
        }
        Ok(())
    }
}

impl SampleSource for RxStream {
    fn read(&mut self, buf: &mut [Complex<f32>], timeout_us: i64) -> Result<ReadOutcome, Error> {
        read_native(&mut self.inner, &self.args, buf, timeout_us)
    }
}

/// One read of an RX stream in its own sample type, activating it on the first
/// read: overflow and timeout are outcomes, anything else a stream error naming
/// the device (shared by the CF32 and the native CS16 streams).
fn read_native<E: soapysdr::StreamSample>(
    inner: &mut soapysdr::RxStream<E>,
    args: &str,
    buf: &mut [E],
    timeout_us: i64,
) -> Result<ReadOutcome, Error> {
    let err = |op: &str, e: &soapysdr::Error| Error::Stream {
        args: args.to_owned(),
        message: stream_msg(op, e),
    };
    if !inner.active() {
        inner
            .activate(None)
            .map_err(|e| err("activate rx stream", &e))?;
    }
    match inner.read(&mut [buf], timeout_us) {
        Ok(n) => Ok(ReadOutcome::Samples(n)),
        Err(e) if e.code == ErrorCode::Overflow => Ok(ReadOutcome::Overflow),
        Err(e) if e.code == ErrorCode::Timeout => Ok(ReadOutcome::Timeout),
        Err(e) => Err(err("read rx stream", &e)),
    }
}

/// An RX stream in the driver's native CS16 format (channel 0), owned and `Send`.
pub struct RxStreamCi16 {
    inner: soapysdr::RxStream<Complex<i16>>,
    args: String,
}

impl std::fmt::Debug for RxStreamCi16 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxStreamCi16")
            .field("args", &self.args)
            .finish()
    }
}

impl Ci16Source for RxStreamCi16 {
    fn read_ci16(
        &mut self,
        buf: &mut [Complex<i16>],
        timeout_us: i64,
    ) -> Result<ReadOutcome, Error> {
        read_native(&mut self.inner, &self.args, buf, timeout_us)
    }
}

/// What one transmission did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxReport {
    /// The authorized task.
    pub task_id: String,
    /// Device args.
    pub device: String,
    /// Stream activated, unix seconds (UTC).
    pub started_unix_s: f64,
    /// Stream torn down, unix seconds (UTC).
    pub stopped_unix_s: f64,
    /// Samples accepted by the driver.
    pub samples_sent: u64,
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
    /// tone stops at `duration_s` by sample count and by wall clock, whichever is
    /// first, or within a few milliseconds of `cancel` becoming true. The stream is
    /// deactivated and closed on every exit path, including a panic unwind.
    pub fn transmit_tone(&mut self, cancel: &AtomicBool) -> Result<TxReport, Error> {
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
        };
        if dev.num_channels(Direction::Tx).unwrap_or(0) == 0 {
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
        let not_keyed = |cancelled: bool| {
            let now = unix_now();
            TxReport {
                task_id: p.task_id().to_string(),
                device: args.to_owned(),
                started_unix_s: now,
                stopped_unix_s: now,
                samples_sent: 0,
                frequency_hz: p.frequency_hz(),
                tone_offset_hz: p.tone_offset_hz(),
                sample_rate_hz: rate,
                gain_db: p.gain_db(),
                cancelled,
            }
        };
        // Interrupted already, or nothing to send: the transmitter is never keyed.
        if cancel.load(Ordering::SeqCst) || (p.duration_s() * rate).floor() < 1.0 {
            return Ok(not_keyed(cancel.load(Ordering::SeqCst)));
        }
        tx.sample_rate(rate)?;
        tx.frequency(p.frequency_hz())?;
        tx.gain(p.gain_db())?;
        // What goes on air is what the driver set, not what was asked: read it
        // back. The policy judged the permit's span (LO ± |offset|); a driver
        // that rounds the LO off it, or sets more gain, is refused before keying.
        // The tone is synthesised from the actual rate, so its offset is exact.
        let readback =
            |what: &str, e: soapysdr::Error| tx.driver(format!("read back tx {what}"), e);
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
        let mut guard = TxGuard(stream);
        let mtu = guard.0.mtu().unwrap_or(4096).max(1);
        // About 2 ms per write so `cancel` is seen promptly.
        // (`max` before `min`: a driver reporting an MTU below 64 must not panic `clamp`.)
        let block = ((rate * 0.002) as usize)
            .max(64)
            .min(mtu.min(65_536))
            .max(1);
        let total = (p.duration_s() * rate).floor() as u64;
        let limit = Duration::try_from_secs_f64(p.duration_s()).unwrap_or(Duration::MAX);
        let step = p.tone_offset_hz() / rate;
        let mut buf = vec![Complex::new(0.0f32, 0.0); block];
        let mut phase = 0.0f64;
        let mut sent = 0u64;
        let mut cancelled = false;

        guard
            .0
            .activate(None)
            .map_err(|e| tx.driver("activate tx stream".into(), e))?;
        let started = unix_now();
        let t0 = Instant::now();
        tracing::warn!(
            args,
            freq = p.frequency_hz(),
            offset = p.tone_offset_hz(),
            "TX on"
        );
        while sent < total {
            if cancel.load(Ordering::SeqCst) {
                cancelled = true;
                break;
            }
            if t0.elapsed() >= limit {
                break;
            }
            // Never more than TX_LEAD of tone ahead of the wall clock: a driver or a
            // SoapyRemote link with deep buffers (socket buffers of many MB) would
            // otherwise take the whole tone in a fraction of its duration, so that a
            // Ctrl-C could no longer stop what is already queued and the report's
            // time on air would be the time it took to queue.
            let ahead = sent as f64 / rate - t0.elapsed().as_secs_f64();
            if ahead > TX_LEAD.as_secs_f64() {
                let nap = (ahead - TX_LEAD.as_secs_f64()).min(0.002);
                std::thread::sleep(Duration::from_secs_f64(nap));
                continue;
            }
            let n = (total - sent).min(block as u64) as usize;
            for s in buf[..n].iter_mut() {
                let a = std::f64::consts::TAU * phase;
                *s = Complex::new((0.7 * a.cos()) as f32, (0.7 * a.sin()) as f32);
                phase = (phase + step).rem_euclid(1.0);
            }
            #[cfg(test)]
            if sent > 0 && tests::PANIC_IN_TX.with(std::cell::Cell::get) {
                panic!("injected panic while transmitting");
            }
            let last = sent + n as u64 >= total;
            match guard.0.write(&[&buf[..n]], None, last, 10_000) {
                Ok(w) => {
                    sent += w as u64;
                    // Rewind the phase for samples the driver did not take.
                    phase = (phase - step * (n - w) as f64).rem_euclid(1.0);
                }
                Err(e) if e.code == ErrorCode::Timeout => {
                    phase = (phase - step * n as f64).rem_euclid(1.0);
                }
                Err(e) => {
                    return Err(Error::Stream {
                        args: args.to_owned(),
                        message: format!(
                            "{}; {}",
                            stream_msg("tx write", &e),
                            tx_state_unknown(sent, total, started)
                        ),
                    })
                }
            }
        }
        // A radio on another host whose server died fails here: the node then knows
        // only what it sent, not whether the far transmitter stopped. Say so.
        guard.0.deactivate(None).map_err(|e| Error::Stream {
            args: args.to_owned(),
            message: format!(
                "deactivate tx stream failed: {}; {}",
                e.message.trim_end_matches([' ', ':']),
                tx_state_unknown(sent, total, started)
            ),
        })?;
        drop(guard);
        let stopped = unix_now();
        tracing::warn!(args, sent, cancelled, "TX off");
        Ok(TxReport {
            task_id: p.task_id().to_string(),
            device: args.to_owned(),
            started_unix_s: started,
            stopped_unix_s: stopped,
            samples_sent: sent,
            frequency_hz: lo,
            tone_offset_hz: p.tone_offset_hz(),
            sample_rate_hz: rate,
            gain_db: gain,
            cancelled,
        })
    }
}

/// How far ahead of the wall clock `transmit_tone` may hand samples to the driver.
const TX_LEAD: Duration = Duration::from_millis(50);

/// A stream failure's message: the operation, the SoapySDR code (name and number)
/// and the driver's message, or that it gave none (SoapyRemote's can be empty,
/// which printed a bare "StreamError: "). [`Error::Stream`] adds the device args.
fn stream_msg(op: &str, e: &soapysdr::Error) -> String {
    let msg = e.message.trim();
    let msg = if msg.is_empty() {
        "the driver gave no message"
    } else {
        msg
    };
    format!(
        "{op}: {:?} (SoapySDR code {}): {msg}",
        e.code, e.code as i32
    )
}

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

    /// An empty driver message (SoapyRemote with mtu=9000) still names the device
    /// args, the operation and the code.
    #[test]
    fn stream_error_with_an_empty_driver_message_names_args_op_and_code() {
        let e = soapysdr::Error {
            code: ErrorCode::StreamError,
            message: String::new(),
        };
        let text = Error::Stream {
            args: "remote=127.0.0.1,remote:mtu=9000".into(),
            message: stream_msg("read rx stream", &e),
        }
        .to_string();
        assert!(text.contains("remote:mtu=9000"), "{text}");
        assert!(text.contains("read rx stream"), "{text}");
        assert!(text.contains("StreamError (SoapySDR code -2)"), "{text}");
        assert!(text.contains("the driver gave no message"), "{text}");
        assert!(!text.trim_end().ends_with(':'), "{text}");
    }

    thread_local! {
        /// Test-only: make `transmit_tone` panic after its first write.
        pub(super) static PANIC_IN_TX: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

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
        PANIC_IN_TX.with(|c| c.set(true));
        let cancel = AtomicBool::new(false);
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tx.transmit_tone(&cancel)));
        PANIC_IN_TX.with(|c| c.set(false));
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

    #[test]
    fn args_compare_ignores_order_and_spaces() {
        assert_eq!(
            parse_args("driver=rxsim, serial=a"),
            parse_args("serial=a,driver=rxsim")
        );
        assert_ne!(
            parse_args("driver=rxsim,serial=a"),
            parse_args("driver=rxsim,serial=b")
        );
        assert_ne!(parse_args("driver=rxsim"), parse_args(""));
    }

    #[test]
    fn rx_stream_is_send() {
        fn is_send<T: Send>() {}
        is_send::<RxStream>();
        is_send::<RxRadio>();
    }
}
