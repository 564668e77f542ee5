//! The sample-source abstraction the capture engine reads from.

/// What one read produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// This many samples were written to the start of the buffer.
    Samples(usize),
    /// The source dropped samples since the last read (the reader fell behind).
    Overflow,
    /// Nothing arrived within the timeout.
    Timeout,
}

/// A source of complex baseband samples (a radio stream, a file, a test signal).
pub trait SampleSource: Send {
    /// Read up to `buf.len()` samples, waiting at most `timeout_us` microseconds.
    fn read(
        &mut self,
        buf: &mut [num_complex::Complex<f32>],
        timeout_us: i64,
    ) -> Result<ReadOutcome, crate::Error>;
}
