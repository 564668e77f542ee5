//! Where the capture engine's samples come from.
use crate::error::{Error, Result};
use crate::iq::IqReader;
use num_complex::Complex;
use serde::{Deserialize, Serialize};

/// The result of one [`SampleSource::read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// This many samples were written to the start of the buffer.
    Samples(usize),
    /// The driver reported an overflow: samples were lost before this read.
    Overflow,
    /// No samples arrived within the timeout.
    Timeout,
    /// The source skipped this many samples of digital silence — a run of at
    /// least [`MIN_SILENT_RUN`] samples whose I and Q are both exactly zero in a
    /// recording's own encoding (a recorder's fill for samples it lost). They count
    /// as received, are not analysed, and break the analysed stream as a gap does
    /// (docs/reliability.md#8-digital-silence-in-a-recording). Only a file gives it.
    Silence(u64),
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
    /// Samples decoded ahead of the engine (`look[at..len]` not handed out yet), so
    /// a run of zeros is known to be long enough before any of it is handed out.
    look: Vec<Complex<f32>>,
    at: usize,
    len: usize,
    /// The reader has given its last sample.
    eof: bool,
    /// File index of `look[at]`.
    pos: u64,
    /// Inside a run of digital silence (skipped to its end).
    in_run: bool,
    silence: Silence,
}

/// The shortest run of samples whose I and Q are both exactly zero that counts as
/// digital silence (docs/reliability.md#8-digital-silence-in-a-recording): noise
/// quantised to any format's steps gives such a run by chance with a probability
/// below 10⁻²⁹ in 2⁴⁰ samples while its standard deviation is at least a quarter
/// of a step, and a recorder's fill for lost samples is longer.
pub const MIN_SILENT_RUN: u64 = 1024;

/// Runs listed one by one in [`Silence::runs`]; the rest are counted only.
pub const LISTED_SILENT_RUNS: usize = 100;

/// A recording's digital silence: runs of at least [`Silence::min_run`] samples
/// whose I and Q are both exactly zero in the file's own encoding, skipped and not
/// analysed (docs/reliability.md#8-digital-silence-in-a-recording).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Silence {
    /// The shortest run that counts, samples; `null` for an unsigned format (cu8,
    /// cu16, cu32), which has no exactly-zero sample, so none is looked for.
    pub min_run: Option<u64>,
    /// Samples in the runs, in all.
    pub samples: u64,
    /// Runs found.
    pub run_count: u64,
    /// The first runs (at most 100), in file order.
    pub runs: Vec<SilentRun>,
}

/// One run of digital silence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SilentRun {
    /// Index of its first sample in the file (0-based).
    pub start: u64,
    /// Its length, samples.
    pub samples: u64,
}

impl Silence {
    /// None found (yet), with the rule for `datatype`.
    pub fn none_for(datatype: crate::Datatype) -> Self {
        Self {
            min_run: datatype.has_exact_zero().then_some(MIN_SILENT_RUN),
            samples: 0,
            run_count: 0,
            runs: Vec::new(),
        }
    }

    /// Add `n` samples of silence at `start`, joining the last run if it ends there.
    fn add(&mut self, start: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.samples += n;
        if let Some(last) = self
            .runs
            .last_mut()
            .filter(|r| r.start + r.samples == start)
        {
            last.samples += n;
            return;
        }
        if self.run_count > 0 && self.runs.len() as u64 != self.run_count {
            // An unlisted run goes on: only counted.
            return;
        }
        self.run_count += 1;
        if self.runs.len() < LISTED_SILENT_RUNS {
            self.runs.push(SilentRun { start, samples: n });
        }
    }
}

/// Both I and Q exactly zero (`-0.0` included).
#[inline(always)]
fn is_zero(c: &Complex<f32>) -> bool {
    c.re == 0.0 && c.im == 0.0
}

/// Where, among `x`, the first run of at least `min` zero samples starts that
/// starts before `limit`; `None` when there is none (a run that reaches the end of
/// `x` shorter than `min` is not one).
fn first_run(x: &[Complex<f32>], limit: usize, min: usize) -> Option<usize> {
    let min = min.max(1);
    // A run of `min` zeros covers every residue modulo `min`: only every `min`-th
    // sample is looked at until one is zero (a file without silence is scanned at
    // 1/`min` of its samples), then the run around it is measured.
    let mut probe = min - 1;
    while probe < x.len() {
        if !is_zero(&x[probe]) {
            probe += min;
            continue;
        }
        let start = probe - x[..probe].iter().rev().take_while(|c| is_zero(c)).count();
        if start >= limit {
            return None;
        }
        let end = probe + x[probe..].iter().take_while(|c| is_zero(c)).count();
        if end - start >= min {
            return Some(start);
        }
        // A shorter run: the next probe past it.
        while probe < end {
            probe += min;
        }
    }
    None
}

impl FileSource {
    /// Read samples from `reader`, from where it stands.
    pub fn new(reader: IqReader) -> Self {
        let silence = Silence::none_for(reader.info().datatype);
        Self {
            reader,
            error: None,
            look: Vec::new(),
            at: 0,
            len: 0,
            eof: false,
            pos: 0,
            in_run: false,
            silence,
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

    /// The digital silence skipped so far (all of it once the engine has read the file).
    pub fn silence(&self) -> &Silence {
        &self.silence
    }

    /// Keep the first error, and give it back.
    fn failed(&mut self, e: Error) -> Error {
        self.error.get_or_insert_with(|| e.to_string());
        e
    }

    /// Decode ahead until `want` samples wait (or the file ends).
    fn fill(&mut self, want: usize) -> Result<(), Error> {
        if self.len - self.at >= want || self.eof {
            return Ok(());
        }
        self.look.copy_within(self.at..self.len, 0);
        self.len -= self.at;
        self.at = 0;
        if self.look.len() < want {
            self.look.resize(want, Complex::default());
        }
        while self.len < want {
            let n = self.reader.read(&mut self.look[self.len..want])?;
            if n == 0 {
                self.eof = true;
                break;
            }
            self.len += n;
        }
        Ok(())
    }

    /// The silence from here on, a look-ahead's worth at a time (so the progress
    /// moves): skipped up to the first non-zero sample, the end of the file, or the
    /// end of what was decoded (then the run goes on at the next read).
    fn skip_run(&mut self) -> Result<ReadOutcome, Error> {
        if self.at == self.len {
            self.fill(self.look.len().max(1 << 16))?;
        }
        let zeros = self.look[self.at..self.len]
            .iter()
            .take_while(|c| is_zero(c))
            .count();
        self.at += zeros;
        self.in_run = self.at == self.len && !self.eof;
        self.silence.add(self.pos, zeros as u64);
        self.pos += zeros as u64;
        Ok(ReadOutcome::Silence(zeros as u64))
    }

    /// One read: the samples up to the next run of silence, or the run itself.
    fn read_checked(&mut self, buf: &mut [Complex<f32>]) -> Result<ReadOutcome, Error> {
        let Some(min) = self.silence.min_run.map(|m| m as usize) else {
            // No exact zero in this format: read straight through.
            let n = self.reader.read(buf)?;
            return self.delivered(n);
        };
        if self.in_run {
            return self.skip_run();
        }
        self.fill(buf.len() + min)?;
        let limit = buf.len().min(self.len - self.at);
        match first_run(&self.look[self.at..self.len], limit, min) {
            Some(0) => {
                self.in_run = true;
                self.skip_run()
            }
            found => {
                let n = found.unwrap_or(limit);
                buf[..n].copy_from_slice(&self.look[self.at..self.at + n]);
                self.at += n;
                self.delivered(n)
            }
        }
    }

    /// `n` samples handed out.
    fn delivered(&mut self, n: usize) -> Result<ReadOutcome, Error> {
        self.pos += n as u64;
        Ok(ReadOutcome::Samples(n))
    }
}

impl SampleSource for FileSource {
    fn read(&mut self, buf: &mut [Complex<f32>], _timeout_us: i64) -> Result<ReadOutcome, Error> {
        match self.read_checked(buf) {
            Ok(ReadOutcome::Samples(0)) if !buf.is_empty() => {
                let e = Error::BadIqFile {
                    path: self.reader.info().data_path.clone(),
                    detail: format!("no sample left after {} samples", self.samples()),
                };
                Err(self.failed(e))
            }
            Ok(o) => Ok(o),
            Err(e) => Err(self.failed(e)),
        }
    }

    fn is_live(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first run, sample by sample: the rule [`first_run`] must give.
    fn first_run_by_each_sample(x: &[Complex<f32>], limit: usize, min: usize) -> Option<usize> {
        let mut run = 0usize;
        for (i, c) in x.iter().enumerate() {
            if is_zero(c) {
                run += 1;
                let start = i + 1 - run;
                if start >= limit {
                    return None;
                }
                if run >= min {
                    return Some(start);
                }
            } else {
                run = 0;
                if i + 1 >= limit {
                    return None;
                }
            }
        }
        None
    }

    /// Looking at every `min`-th sample first finds the run a sample-by-sample scan
    /// finds, over 3 000 patterns of zero runs of every length around `min` (runs at
    /// the start, at the end, cut by the limit, one sample short, back to back).
    #[test]
    fn the_first_run_found_by_probing_is_the_one_each_sample_gives() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let one = Complex::new(0.5f32, -0.25);
        for case in 0..3000 {
            let min = [1usize, 2, 3, 7, 16, 1024][case % 6];
            let len = next(6 * min as u64 + 8) as usize;
            let mut x = vec![one; len];
            let mut i = 0;
            while i < len {
                let gap = next(2 * min as u64 + 2) as usize;
                let run = next(2 * min as u64 + 2) as usize;
                for c in x.iter_mut().skip(i + gap).take(run) {
                    *c = Complex::default();
                }
                i += gap + run + 1;
            }
            let limit = next(len as u64 + 2) as usize;
            assert_eq!(
                first_run(&x, limit, min),
                first_run_by_each_sample(&x, limit, min),
                "case {case}: len {len}, limit {limit}, min {min}"
            );
        }
    }
}
