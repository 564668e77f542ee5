//! Where the capture engine's samples come from.
use crate::error::{Error, Result};
use crate::iq::IqReader;
use num_complex::Complex;

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
    fn read(&mut self, buf: &mut [Complex<f32>], timeout_us: i64) -> Result<ReadOutcome, Error>;

    /// `true` (the default) for a live stream, which cannot wait: when the engine's
    /// consumer is behind, its samples are dropped and counted. `false` for a source
    /// that can wait (a file): the engine then waits for a free buffer and drops nothing.
    fn is_live(&self) -> bool {
        true
    }

    /// The stream time (ns) of the first sample of the last read that delivered
    /// samples, as the driver gave it; `None` (the default) when the source has no
    /// stream times. The engine trusts these times only once consecutive reads
    /// have agreed with the sample count, and then counts the samples an overflow
    /// lost from the jump in time (docs/reliability.md#7-lost-samples-and-gaps).
    fn time_ns(&self) -> Option<i64> {
        None
    }
}

impl<S: SampleSource + ?Sized> SampleSource for &mut S {
    fn read(&mut self, buf: &mut [Complex<f32>], timeout_us: i64) -> Result<ReadOutcome, Error> {
        (**self).read(buf, timeout_us)
    }

    fn is_live(&self) -> bool {
        (**self).is_live()
    }

    fn time_ns(&self) -> Option<i64> {
        (**self).time_ns()
    }
}

/// A stream of a driver's native integer samples — `Complex<i16>` (SoapySDR `CS16`,
/// full scale 32768) or `Complex<i8>` (`CS8`, the HackRF's, full scale 128) —
/// recorded without conversion by [`crate::run_capture_native`].
pub trait NativeSource<T: crate::NativeIq>: Send {
    /// Read up to `buf.len()` samples, waiting at most `timeout_us` microseconds.
    fn read_native(&mut self, buf: &mut [T], timeout_us: i64) -> Result<ReadOutcome, Error>;

    /// See [`SampleSource::time_ns`].
    fn time_ns(&self) -> Option<i64> {
        None
    }
}

/// A recorded IQ file as a [`SampleSource`], so `rxnode analyze` runs the same
/// capture engine as a live capture. It is not live: the engine waits for it
/// and drops nothing. Ask the engine for [`FileSource::samples`] samples.
///
/// ```
/// # fn main() -> Result<(), rxnode_dsp::Error> {
/// use rxnode_dsp::{run_capture, CaptureSettings, FileSource, IqReader, WelchConfig};
/// use std::sync::atomic::AtomicBool;
/// # let dir = tempfile::tempdir().map_err(|e| rxnode_dsp::Error::Source(e.to_string()))?;
/// # let path = dir.path().join("tone.cf32");
/// # let bytes: Vec<u8> = (0..8192u32)
/// #     .flat_map(|n| {
/// #         let ph = std::f32::consts::TAU * n as f32 / 8.0;
/// #         [ph.cos() * 0.5, ph.sin() * 0.5]
/// #     })
/// #     .flat_map(f32::to_le_bytes)
/// #     .collect();
/// # std::fs::write(&path, bytes).map_err(|e| rxnode_dsp::Error::Source(e.to_string()))?;
/// let mut file = FileSource::new(IqReader::open(&path, None)?);
/// let settings = CaptureSettings::new(file.samples(), WelchConfig::new(1024, 1e6));
/// let summary = run_capture(&mut file, &settings, &AtomicBool::new(false), None, None)?;
/// assert_eq!(file.error(), None);
/// assert_eq!(summary.samples_processed, 8192);
/// assert!((summary.peaks[0].frequency_hz - 125e3).abs() < 1e3);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileSource {
    reader: IqReader,
    error: Option<String>,
}

impl FileSource {
    /// Read samples from `reader`, from where it stands.
    pub fn new(reader: IqReader) -> Self {
        Self {
            reader,
            error: None,
        }
    }

    /// Complex samples in the file (its [`crate::IqInfo::samples`]).
    pub fn samples(&self) -> u64 {
        self.reader.info().samples
    }

    /// The reader's first error (truncated file, non-finite sample …), with the
    /// reader's own message; the engine stops at it.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

impl SampleSource for FileSource {
    fn read(&mut self, buf: &mut [Complex<f32>], _timeout_us: i64) -> Result<ReadOutcome, Error> {
        match self.reader.read(buf) {
            Ok(0) if !buf.is_empty() => {
                let e = Error::BadIqFile {
                    path: self.reader.info().data_path.clone(),
                    detail: format!("no sample left after {} samples", self.samples()),
                };
                self.error = Some(e.to_string());
                Err(e)
            }
            Ok(n) => Ok(ReadOutcome::Samples(n)),
            Err(e) => {
                self.error = Some(e.to_string());
                Err(e)
            }
        }
    }

    fn is_live(&self) -> bool {
        false
    }
}
