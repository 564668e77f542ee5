//! RX streams: the CF32 and the native CS16/CS8 streams of a radio, and their reads.
//! Nothing here can key a transmitter.
use super::{stream_msg, RxRadio};
use crate::Error;
use num_complex::Complex;
use rxnode_dsp::{NativeIq, NativeSource, ReadOutcome, SampleSource};
use soapysdr::{Direction, ErrorCode};

impl RxRadio {
    /// Set up an RX stream (CF32, channel 0); it is activated by its first read.
    /// Deactivated (if active) and closed on drop.
    pub fn rx_stream(&mut self) -> Result<RxStream, Error> {
        // Set up now, activate on the first read: whatever the caller does in
        // between (threads, buffers, FFT plans) never counts against the
        // driver's buffer and cannot cause an overflow before the first sample.
        let inner = self
            .dev
            .rx_stream_args::<Complex<f32>, _>(&[self.channel], self.rx_stream_args())
            .map_err(|e| self.driver_err("set up rx stream", e))?;
        Ok(RxStream {
            inner,
            args: self.args.clone(),
        })
    }

    /// Set up an RX stream in the driver's native CS16 format (channel 0), for
    /// recording full rate without a float round trip (SigMF `ci16_le`): see
    /// [`RxRadio::rx_stream_native`].
    pub fn rx_stream_ci16(&mut self) -> Result<RxStreamCi16, Error> {
        self.rx_stream_native()
    }

    /// Set up an RX stream in one of the driver's native integer formats (channel 0):
    /// `Complex<i16>` for CS16, `Complex<i8>` for CS8 (the HackRF's), recorded as
    /// they came (SigMF `ci16_le`, `ci8`). Activated by its first read; deactivated
    /// (if active) and closed on drop. Fails (naming the device and the formats it
    /// offers) when the driver does not list the format for the channel.
    pub fn rx_stream_native<E: NativeIq + soapysdr::StreamSample>(
        &mut self,
    ) -> Result<RxStreamNative<E>, Error> {
        let formats = self
            .dev
            .stream_formats(Direction::Rx, self.channel)
            .map_err(|e| self.driver_err("list rx stream formats", e))?;
        if !formats.contains(&E::STREAM_FORMAT) {
            return Err(self.rx().unsupported(
                "record_format",
                E::RECORD.name(),
                formats
                    .iter()
                    .map(|f| f.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        let inner = self
            .dev
            .rx_stream_args::<E, _>(&[self.channel], self.rx_stream_args())
            .map_err(|e| self.driver_err(format!("set up rx stream ({})", E::STREAM_FORMAT), e))?;
        Ok(RxStreamNative {
            inner,
            args: self.args.clone(),
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

    /// Activate the stream now (if it is not active) rather than on the next read: a
    /// sweep starts the next hop's settle time running before it finishes the
    /// previous hop's spectrum and reads the new centre back.
    pub(crate) fn resume(&mut self) -> Result<(), Error> {
        if !self.inner.active() {
            self.inner.activate(None).map_err(|e| Error::Stream {
                args: self.args.clone(),
                message: stream_msg("activate rx stream", &e),
            })?;
        }
        Ok(())
    }
}

impl SampleSource for RxStream {
    fn read(
        &mut self,
        buf: &mut [Complex<f32>],
        timeout_us: i64,
    ) -> Result<ReadOutcome, rxnode_dsp::Error> {
        read_native(&mut self.inner, &self.args, buf, timeout_us).map_err(to_source_error)
    }

    /// The driver's time of the last read's first sample. The crate does not
    /// expose the read's `HAS_TIME` flag, so a driver without stream times leaves
    /// this unchanged; the engine trusts it only once reads agree with the sample
    /// count.
    fn time_ns(&self) -> Option<i64> {
        Some(self.inner.time_ns())
    }
}

/// A stream error as the capture engine's source error, keeping its message.
fn to_source_error(e: Error) -> rxnode_dsp::Error {
    rxnode_dsp::Error::SourceFailed(Box::new(e))
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

/// An RX stream in one of the driver's native integer formats (channel 0), owned and
/// `Send`.
pub struct RxStreamNative<E: soapysdr::StreamSample> {
    inner: soapysdr::RxStream<E>,
    args: String,
}

/// The driver's native CS16 stream.
pub type RxStreamCi16 = RxStreamNative<Complex<i16>>;

impl<E: soapysdr::StreamSample> std::fmt::Debug for RxStreamNative<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxStreamNative")
            .field("args", &self.args)
            .finish()
    }
}

impl<E: NativeIq + soapysdr::StreamSample + Send> NativeSource<E> for RxStreamNative<E> {
    fn read_native(
        &mut self,
        buf: &mut [E],
        timeout_us: i64,
    ) -> Result<ReadOutcome, rxnode_dsp::Error> {
        read_native(&mut self.inner, &self.args, buf, timeout_us).map_err(to_source_error)
    }

    /// As for the CF32 stream: the driver's time of the last read's first sample.
    fn time_ns(&self) -> Option<i64> {
        Some(self.inner.time_ns())
    }
}
