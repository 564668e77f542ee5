//! Where the capture engine's samples come from.

/// The result of one [`SampleSource::read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// This many samples were written to the start of the buffer.
    Samples(usize),
    /// The driver reported an overflow: samples were lost before this read.
    Overflow,
    /// No samples arrived within the timeout.
    Timeout,
}

/// A stream of complex baseband samples (the SoapySDR RX stream, a file, a test signal).
pub trait SampleSource: Send {
    /// Read up to `buf.len()` samples, waiting at most `timeout_us` microseconds.
    fn read(
        &mut self,
        buf: &mut [num_complex::Complex<f32>],
        timeout_us: i64,
    ) -> Result<ReadOutcome, crate::Error>;
}

/// A stream of the driver's native CS16 samples (SoapySDR `CS16`: interleaved int16
/// I/Q, full scale 32768), recorded without conversion by [`crate::run_capture_ci16`].
pub trait Ci16Source: Send {
    /// Read up to `buf.len()` samples, waiting at most `timeout_us` microseconds.
    fn read_ci16(
        &mut self,
        buf: &mut [num_complex::Complex<i16>],
        timeout_us: i64,
    ) -> Result<ReadOutcome, crate::Error>;
}
