//! The radio handle (RX-only) and its TX typestate.
//!
//! [`RxRadio`] wraps a SoapySDR device privately: open, configure, read back,
//! clocks and sensors here; its RX streams in `rx.rs`. Transmission exists only on
//! [`TxRadio`] in `tx.rs`, obtained by consuming an [`rxnode_interlock::TxPermit`];
//! `tx.rs` is the only file of the workspace that can open a TX stream.
mod rx;
mod tx;
mod tx_tone;

pub use rx::{RxStream, RxStreamCi16, RxStreamNative};
pub use tx::{TxRadio, TxReport};

use crate::probe::{probe_into, DeviceInfo};
use crate::{sim, Error};
use serde::Serialize;
use soapysdr::{Device, Direction};
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

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
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
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
    /// `1 + e` of the frequency calibration [`RxRadio::tune`] applies (1: none).
    lo_scale: f64,
    /// Stream args the caller gave, for every RX stream set up after.
    stream_args: Vec<(String, String)>,
    /// The RX channel every setting and stream uses (0 unless chosen).
    channel: usize,
}

impl std::fmt::Debug for RxRadio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxRadio").field("args", &self.args).finish()
    }
}

/// Seconds since the Unix epoch (0 on a clock before it): the times in stream
/// and hop records.
pub(crate) fn unix_now() -> f64 {
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
    ch: usize,
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
            .frequency_range(self.dir, self.ch)
            .map_err(|e| self.driver("get frequency range".into(), e))?;
        if !Self::in_ranges(hz, &r) {
            return Err(self.unsupported("frequency_hz", hz, fmt_ranges(&r)));
        }
        self.dev
            .set_frequency(self.dir, self.ch, hz, ())
            .map_err(|e| self.driver(format!("set frequency {hz} Hz"), e))
    }

    fn sample_rate(&self, rate: f64) -> Result<(), Error> {
        let r = self
            .dev
            .get_sample_rate_range(self.dir, self.ch)
            .map_err(|e| self.driver("get sample rate range".into(), e))?;
        if !Self::in_ranges(rate, &r) {
            return Err(self.unsupported("sample_rate_hz", rate, fmt_ranges(&r)));
        }
        self.dev
            .set_sample_rate(self.dir, self.ch, rate)
            .map_err(|e| self.driver(format!("set sample rate {rate} S/s"), e))
    }

    fn gain(&self, db: f64) -> Result<(), Error> {
        let r = self
            .dev
            .gain_range(self.dir, self.ch)
            .map_err(|e| self.driver("get gain range".into(), e))?;
        if !Self::in_ranges(db, std::slice::from_ref(&r)) {
            return Err(self.unsupported("gain_db", db, fmt_ranges(&[r])));
        }
        self.dev
            .set_gain(self.dir, self.ch, db)
            .map_err(|e| self.driver(format!("set gain {db} dB"), e))
    }
}

impl RxRadio {
    /// Open the device matching `args` (e.g. `driver=hackrf,serial=…`).
    pub fn open(args: &str) -> Result<RxRadio, Error> {
        crate::soapysdr_available()?;
        sim::touch();
        let dev = Device::new(args).map_err(|e| match crate::probe::why_absent(args) {
            Some(detail) => Error::NotFound {
                args: args.to_owned(),
                detail,
            },
            None => Error::Open {
                args: args.to_owned(),
                message: e.message,
            },
        })?;
        tracing::info!(args, "opened radio");
        Ok(RxRadio {
            dev,
            args: args.to_owned(),
            lo_scale: 1.0,
            stream_args: Vec::new(),
            channel: 0,
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
            ch: self.channel,
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
        let mut info = DeviceInfo::unprobed(
            self.args.clone(),
            map.get("driver").cloned().unwrap_or_default(),
            map.get("serial").cloned(),
            None,
        );
        info.remote = map.get("remote").filter(|r| !r.is_empty()).cloned();
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
                .bandwidth_range(Direction::Rx, self.channel)
                .map_err(|e| self.driver_err("get bandwidth range", e))?;
            if !r.is_empty() && !Ctl::in_ranges(bw, &r) {
                return Err(rx.unsupported("bandwidth_hz", bw, fmt_ranges(&r)));
            }
            self.dev
                .set_bandwidth(Direction::Rx, self.channel, bw)
                .map_err(|e| self.driver_err(format!("set bandwidth {bw} Hz"), e))?;
        }
        if let Some(g) = cfg.gain_db {
            rx.gain(g)?;
        }
        if let Some(a) = &cfg.antenna {
            let list = self
                .dev
                .antennas(Direction::Rx, self.channel)
                .map_err(|e| self.driver_err("list antennas", e))?;
            if !list.contains(a) {
                return Err(rx.unsupported("antenna", a, list.join(", ")));
            }
            self.dev
                .set_antenna(Direction::Rx, self.channel, a.as_str())
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
                .frequency(rx, self.channel)
                .map_err(|e| self.driver_err("get frequency", e))?,
            sample_rate_hz: self
                .dev
                .sample_rate(rx, self.channel)
                .map_err(|e| self.driver_err("get sample rate", e))?,
            gain_db: self
                .dev
                .gain(rx, self.channel)
                .map_err(|e| self.driver_err("get gain", e))?,
            bandwidth_hz: self
                .dev
                .bandwidth(rx, self.channel)
                .ok()
                .filter(|b| *b > 0.0),
            antenna: self
                .dev
                .antenna(rx, self.channel)
                .ok()
                .filter(|a| !a.is_empty()),
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

    /// Retune the receiver (checked against the device's range) and read back the
    /// centre the driver really set (used by sweeps between hops). With a frequency
    /// calibration set ([`RxRadio::set_lo_correction_ppm`]) the radio is tuned to
    /// `frequency_hz / (1 + e)` and the centre returned is the true RF one.
    pub fn tune(&mut self, frequency_hz: f64) -> Result<f64, Error> {
        self.set_center(frequency_hz)?;
        self.center()
    }

    /// The first half of [`RxRadio::tune`]: retune (checked against the device's
    /// range, calibration applied) without reading back. A sweep restarts its stream
    /// right after this and reads the centre back while the new hop settles.
    pub(crate) fn set_center(&mut self, frequency_hz: f64) -> Result<(), Error> {
        self.rx().frequency(frequency_hz / self.lo_scale)
    }

    /// The second half of [`RxRadio::tune`]: the true RF centre the driver reports.
    pub(crate) fn center(&self) -> Result<f64, Error> {
        self.dev
            .frequency(Direction::Rx, self.channel)
            .map(|f| f * self.lo_scale)
            .map_err(|e| self.driver_err("get frequency", e))
    }

    /// Apply a frequency calibration to every later [`RxRadio::tune`]: this radio's
    /// clock runs fast by `ppm` (its LO sits at `f·(1 + e)` when asked for `f`).
    /// Refused unless finite and within ±1000 ppm.
    pub fn set_lo_correction_ppm(&mut self, ppm: f64) -> Result<(), Error> {
        if !(ppm.is_finite() && ppm.abs() <= 1000.0) {
            return Err(self.rx().unsupported(
                "frequency correction (ppm)",
                ppm,
                "a finite value within ±1000".to_owned(),
            ));
        }
        self.lo_scale = 1.0 + ppm * 1e-6;
        Ok(())
    }

    /// Write SoapySDR settings (`writeSetting`), in key order, naming the one the
    /// driver refused.
    pub fn write_settings(&mut self, settings: &BTreeMap<String, String>) -> Result<(), Error> {
        for (k, v) in settings {
            self.dev
                .write_setting(k.as_str(), v.as_str())
                .map_err(|e| self.driver_err(format!("write setting {k}={v}"), e))?;
        }
        Ok(())
    }

    /// Use RX channel `ch` for every later setting, read-back and stream; refused
    /// (naming the count) when the device has no such channel.
    pub fn set_channel(&mut self, ch: usize) -> Result<(), Error> {
        let n = self
            .dev
            .num_channels(Direction::Rx)
            .map_err(|e| self.driver_err("count rx channels", e))?;
        if ch >= n {
            return Err(self.rx().unsupported(
                "channel",
                ch,
                format!("0..{}", n.saturating_sub(1)),
            ));
        }
        self.channel = ch;
        Ok(())
    }

    /// Automatic gain control on or off (`setGainMode`).
    pub fn set_agc(&mut self, on: bool) -> Result<(), Error> {
        self.dev
            .set_gain_mode(Direction::Rx, self.channel, on)
            .map_err(|e| self.driver_err(format!("set AGC {}", if on { "on" } else { "off" }), e))
    }

    /// Stream args for every RX stream set up after this (besides the remote ones
    /// from the device args).
    pub fn set_stream_args(&mut self, args: &BTreeMap<String, String>) {
        self.stream_args = args.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    }

    /// The stream args of an RX stream: the remote ones from the device args, then
    /// the caller's.
    pub(crate) fn rx_stream_args(&self) -> soapysdr::Args {
        let mut a = remote_stream_args(&self.args);
        for (k, v) in &self.stream_args {
            a.set(k.as_str(), v.as_str());
        }
        a
    }

    /// Set named RX gain elements (e.g. `LNA`, `VGA`), each checked against the
    /// element's own range first; an element the device does not list is refused.
    pub fn set_gain_elements(&mut self, gains: &BTreeMap<String, f64>) -> Result<(), Error> {
        let names = self
            .dev
            .list_gains(Direction::Rx, self.channel)
            .map_err(|e| self.driver_err("list gain elements", e))?;
        for (name, db) in gains {
            if !names.iter().any(|n| n == name) {
                return Err(self
                    .rx()
                    .unsupported("gain element", name, names.join(", ")));
            }
            let r = self
                .dev
                .gain_element_range(Direction::Rx, self.channel, name.as_str())
                .map_err(|e| self.driver_err(format!("get gain range of {name}"), e))?;
            if !Ctl::in_ranges(*db, std::slice::from_ref(&r)) {
                return Err(self.rx().unsupported(
                    &format!("gain_db.{name}"),
                    db,
                    fmt_ranges(&[r]),
                ));
            }
            self.dev
                .set_gain_element(Direction::Rx, self.channel, name.as_str(), *db)
                .map_err(|e| self.driver_err(format!("set gain {name} {db} dB"), e))?;
        }
        Ok(())
    }

    /// Every RX gain element with the gain the driver reports for it now.
    pub fn gain_elements(&self) -> Result<BTreeMap<String, f64>, Error> {
        let names = self
            .dev
            .list_gains(Direction::Rx, self.channel)
            .map_err(|e| self.driver_err("list gain elements", e))?;
        let mut out = BTreeMap::new();
        for n in names {
            let g = self
                .dev
                .gain_element(Direction::Rx, self.channel, n.as_str())
                .map_err(|e| self.driver_err(format!("get gain {n}"), e))?;
            out.insert(n, g);
        }
        Ok(out)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use soapysdr::ErrorCode;

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
