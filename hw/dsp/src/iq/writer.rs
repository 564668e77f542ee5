//! Recording writers with byte size and hashes computed while writing, and a disk budget.
use super::IqFormat;
use crate::error::{Error, Result};
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256, Sha512};
use std::io::Write;
use std::path::{Path, PathBuf};

mod meta;
mod sink;

pub(crate) use meta::hash_file;
use meta::sigmf_meta;
use sink::{check_record_format, clone_err, create_new, io, open_sink, wav_err, Sink};
pub use sink::{is_stream_target, STDOUT_TARGET};

/// Bytes reserved for a WAV header when checking the disk budget.
const WAV_HEADER_RESERVE: u64 = 256;
/// Samples converted per chunk (the byte buffer is allocated once).
const CHUNK: usize = 8192;

/// The sample type a recording stores (SigMF `core:datatype`).
///
/// `Ci16` is the native format of most radios (SoapySDR `CS16`), `Ci8` that of the
/// HackRF (SoapySDR `CS8`): recorded as the driver delivered them, with no float
/// round trip, at a half and a quarter of the bytes of `Cf32`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordFormat {
    /// Little-endian float32 I/Q (`cf32_le`), 8 bytes per sample.
    #[default]
    Cf32,
    /// Little-endian int16 I/Q (`ci16_le`, full scale 32768), 4 bytes per sample.
    Ci16,
    /// Int8 I/Q (`ci8`, full scale 128), 2 bytes per sample.
    Ci8,
}

impl RecordFormat {
    /// Parse `cf32`, `ci16` or `ci8` (`cs16` and `cs8` are accepted as the SoapySDR
    /// names of `ci16` and `ci8`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cf32" | "cf32_le" => Ok(Self::Cf32),
            "ci16" | "ci16_le" | "cs16" => Ok(Self::Ci16),
            "ci8" | "cs8" => Ok(Self::Ci8),
            other => Err(Error::UnsupportedFormat(format!(
                "record format {other:?} (expected cf32, ci16 or ci8)"
            ))),
        }
    }

    /// `cf32`, `ci16` or `ci8`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cf32 => "cf32",
            Self::Ci16 => "ci16",
            Self::Ci8 => "ci8",
        }
    }

    /// The raw file format of this sample type (`cf32`, `cs16` or `cs8`), as written
    /// to a stream.
    pub fn raw_format(self) -> IqFormat {
        match self {
            Self::Cf32 => IqFormat::Cf32,
            Self::Ci16 => IqFormat::Cs16,
            Self::Ci8 => IqFormat::Cs8,
        }
    }

    /// The SigMF `core:datatype` of this sample type.
    pub fn datatype(self) -> super::Datatype {
        match self {
            Self::Cf32 => super::Datatype::Cf32Le,
            Self::Ci16 => super::Datatype::Ci16Le,
            Self::Ci8 => super::Datatype::Ci8,
        }
    }

    /// Bytes per complex sample.
    pub fn sample_bytes(self) -> u64 {
        match self {
            Self::Cf32 => 8,
            Self::Ci16 => 4,
            Self::Ci8 => 2,
        }
    }
}

/// A driver's native integer sample, recorded as it came (no conversion): the
/// value type of [`IqWriter::write_native`].
pub trait NativeIq: Copy + private::Sealed {
    /// The recording format that stores this type as it is.
    const RECORD: RecordFormat;
    /// Append the sample's bytes, little-endian, I then Q.
    fn put_le(&self, out: &mut Vec<u8>);
}

mod private {
    /// Only the sample types below are native ones.
    pub trait Sealed {}
    impl Sealed for num_complex::Complex<i16> {}
    impl Sealed for num_complex::Complex<i8> {}
}

impl NativeIq for Complex<i16> {
    const RECORD: RecordFormat = RecordFormat::Ci16;
    fn put_le(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.re.to_le_bytes());
        out.extend_from_slice(&self.im.to_le_bytes());
    }
}

impl NativeIq for Complex<i8> {
    const RECORD: RecordFormat = RecordFormat::Ci8;
    fn put_le(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.re.to_le_bytes());
        out.extend_from_slice(&self.im.to_le_bytes());
    }
}

/// What a recording says about the capture: written into the SigMF meta (the
/// radio's settings into its capture segment, docs/protocol.md#recordings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordingMeta {
    /// Sample rate (Hz).
    pub sample_rate_hz: f64,
    /// RF centre frequency (Hz), when known.
    pub center_hz: Option<f64>,
    /// UTC start time, RFC 3339 (`None`: now).
    pub datetime: Option<String>,
    /// Hardware description (SigMF `core:hw`).
    pub hw: Option<String>,
    /// Free text (SigMF `core:description`).
    pub description: Option<String>,
    /// The overall RX gain as the radio reads it back, dB (`rxnode:gain_db`).
    #[serde(default)]
    pub gain_db: Option<f64>,
    /// The gain of each element as the radio reads it back, dB
    /// (`rxnode:gain_elements`, e.g. `{"LNA": 24, "VGA": 20}`).
    #[serde(default)]
    pub gain_elements: Option<std::collections::BTreeMap<String, f64>>,
    /// The antenna port selected (`rxnode:antenna`).
    #[serde(default)]
    pub antenna: Option<String>,
    /// The analog bandwidth, Hz (`rxnode:bandwidth_hz`).
    #[serde(default)]
    pub bandwidth_hz: Option<f64>,
}

/// A SigMF annotation of one reported peak: written into the
/// `.sigmf-meta` over the whole capture's sample range, `core:generator` = rxnode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakAnnotation {
    /// `core:label`, e.g. `peak 1: 100.100000 MHz -20.3 dBFS`.
    pub label: String,
    /// `core:freq_lower_edge`, Hz (the peak's −3 dB lower edge).
    pub freq_lower_hz: f64,
    /// `core:freq_upper_edge`, Hz (the peak's −3 dB upper edge).
    pub freq_upper_hz: f64,
    /// `core:comment`: the whole finding in words (the CLKIN check's detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// One file written: what a capture summary lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IqFileRecord {
    /// Where it is: as given to the writer; in a result, relative to the checkout,
    /// never absolute, no `..`.
    #[schemars(
        length(min = 1),
        extend("not" = {"anyOf": [
            {"pattern": "^/"},
            {"pattern": "^[A-Za-z]:"},
            {"pattern": "(^|[/\\\\])\\.\\.([/\\\\]|$)"},
            {"pattern": "^\\\\"}
        ]})
    )]
    pub path: PathBuf,
    /// `cf32`, `wav`, `sigmf-data` or `sigmf-meta`.
    pub format: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256, lowercase hex.
    #[schemars(regex(pattern = "^[0-9a-fA-F]{64}$"))]
    pub sha256: String,
    /// `true` when the recording was cut short by an I/O error (a full disk, a
    /// file-size limit): the file holds what reached the disk, and `bytes` and
    /// `sha256` were read back from it. Absent (false) for a whole file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// An IQ recording in progress. Write blocks with [`IqWriter::write`], end with
/// [`IqWriter::finish`]. Past the disk budget or after a write error the recording stops
/// and every further write returns the same error.
pub struct IqWriter {
    format: IqFormat,
    samples_as: RecordFormat,
    path: PathBuf,
    meta: RecordingMeta,
    sink: Sink,
    budget: Option<u64>,
    bytes: u64,
    samples: u64,
    sha256: Sha256,
    sha512: Option<Sha512>,
    annotations: Vec<PeakAnnotation>,
    clock: Option<serde_json::Value>,
    buf: Vec<u8>,
    stopped: Option<Error>,
}

impl std::fmt::Debug for IqWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IqWriter")
            .field("format", &self.format)
            .field("path", &self.path)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl IqWriter {
    /// Create a recording; the format comes from the extension (`.cf32`, `.wav`,
    /// `.sigmf-data`, `.sigmf-meta`). `max_bytes` is the disk budget for the data.
    pub fn create(path: &Path, meta: RecordingMeta, max_bytes: Option<u64>) -> Result<Self> {
        let format = IqFormat::from_path(path)?;
        Self::create_as(path, format, meta, max_bytes)
    }

    /// Create a recording in the given format (cf32, wav or sigmf).
    pub fn create_as(
        path: &Path,
        format: IqFormat,
        meta: RecordingMeta,
        max_bytes: Option<u64>,
    ) -> Result<Self> {
        Self::create_with(path, format, RecordFormat::Cf32, meta, max_bytes)
    }

    /// Create a recording of the given file format holding `samples_as` samples:
    /// `Cf32` in `.cf32`, `.wav` or SigMF `cf32_le` (written with [`IqWriter::write`]);
    /// `Ci16` in `.cs16` or SigMF `ci16_le`, `Ci8` in `.cs8` or SigMF `ci8` (written
    /// with [`IqWriter::write_native`], the driver's samples as they came).
    pub fn create_with(
        path: &Path,
        format: IqFormat,
        samples_as: RecordFormat,
        meta: RecordingMeta,
        max_bytes: Option<u64>,
    ) -> Result<Self> {
        check_record_format(format, samples_as, &meta)?;
        let path = match format {
            IqFormat::Sigmf => path.with_extension("sigmf-data"),
            _ => path.to_path_buf(),
        };
        let sink = open_sink(&path, format, samples_as, &meta)?;
        Ok(Self {
            format,
            samples_as,
            // SigMF's optional `core:sha512` costs more CPU than everything else the
            // writer does; a full-rate ci16 recording goes without it. Its
            // SHA-256 is computed as for every file and carried by the result.
            sha512: (format == IqFormat::Sigmf && samples_as == RecordFormat::Cf32)
                .then(Sha512::new),
            annotations: Vec::new(),
            clock: None,
            path,
            meta,
            sink,
            // A WAV header counts its data in 32 bits (hound would wrap past
            // 4 GiB and leave a corrupt file): the format's own limit is a budget.
            budget: match format {
                IqFormat::Wav => Some(
                    max_bytes
                        .unwrap_or(u64::MAX)
                        .min(u64::from(u32::MAX) - WAV_HEADER_RESERVE),
                ),
                _ => max_bytes,
            },
            bytes: 0,
            samples: 0,
            sha256: Sha256::new(),
            buf: Vec::with_capacity(CHUNK * 8),
            stopped: None,
        })
    }

    /// Data bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Samples written so far.
    pub fn samples_written(&self) -> u64 {
        self.samples
    }

    /// Why the recording stopped early, if it did.
    pub fn stopped(&self) -> Option<&Error> {
        self.stopped.as_ref()
    }

    /// The sample type this recording stores.
    pub fn record_format(&self) -> RecordFormat {
        self.samples_as
    }

    /// How many of `n` samples still fit the budget (`None`: all of them).
    fn room(&self, n: usize) -> Option<usize> {
        let b = self.budget?;
        let reserve = if self.format == IqFormat::Wav {
            WAV_HEADER_RESERVE
        } else {
            0
        };
        let room = b.saturating_sub(self.bytes + reserve) / self.samples_as.sample_bytes();
        ((n as u64) > room).then_some(room as usize)
    }

    /// Record an error that ends the recording and return it.
    fn stop(&mut self, e: Error) -> Error {
        self.stopped = Some(clone_err(&e));
        e
    }

    fn over_budget(&mut self) -> Error {
        let e = Error::DiskBudget {
            budget: self.budget.unwrap_or(0),
            written: self.bytes,
        };
        self.stop(e)
    }

    /// Append samples. Past the budget, whole samples that fit are written, then the
    /// recording stops with [`Error::DiskBudget`].
    pub fn write(&mut self, x: &[Complex<f32>]) -> Result<()> {
        if let Some(e) = &self.stopped {
            return Err(clone_err(e));
        }
        if self.samples_as != RecordFormat::Cf32 {
            return Err(Error::UnsupportedFormat(format!(
                "float samples into a {} recording (no silent conversion)",
                self.samples_as.name()
            )));
        }
        let room = self.room(x.len());
        let x = &x[..room.unwrap_or(x.len())];
        if let Err(e) = self.write_inner(x) {
            return Err(self.stop(e));
        }
        if room.is_some() {
            return Err(self.over_budget());
        }
        Ok(())
    }

    /// Append CS16 samples as they came from the driver (`ci16_le`, no conversion: the
    /// bytes are the driver's). Past the budget, whole samples that fit are written,
    /// then the recording stops with [`Error::DiskBudget`].
    pub fn write_ci16(&mut self, x: &[Complex<i16>]) -> Result<()> {
        self.write_native(x)
    }

    /// Append a driver's native integer samples as they came (`ci16_le` for CS16,
    /// `ci8` for CS8; no conversion: the bytes are the driver's) into a recording of
    /// that sample type. Past the budget, whole samples that fit are written, then
    /// the recording stops with [`Error::DiskBudget`].
    pub fn write_native<T: NativeIq>(&mut self, x: &[T]) -> Result<()> {
        if let Some(e) = &self.stopped {
            return Err(clone_err(e));
        }
        if self.samples_as != T::RECORD {
            return Err(Error::UnsupportedFormat(format!(
                "{} samples into a {} recording (no silent conversion)",
                T::RECORD.name(),
                self.samples_as.name()
            )));
        }
        let room = self.room(x.len());
        let x = &x[..room.unwrap_or(x.len())];
        if let Err(e) = self.write_native_inner(x) {
            return Err(self.stop(e));
        }
        if room.is_some() {
            return Err(self.over_budget());
        }
        Ok(())
    }

    fn write_native_inner<T: NativeIq>(&mut self, x: &[T]) -> Result<()> {
        for chunk in x.chunks(CHUNK * 2) {
            let bytes: &[u8] = if cfg!(target_endian = "little") {
                // SAFETY: the native types (sealed: Complex<i16>, Complex<i8>) are
                // #[repr(C)] with two integer fields and no padding, so their memory on
                // a little-endian host is the little-endian file layout; any byte
                // pattern is a valid u8; the slice covers exactly the chunk's memory
                // and lives no longer than it.
                unsafe {
                    std::slice::from_raw_parts(
                        chunk.as_ptr().cast::<u8>(),
                        std::mem::size_of_val(chunk),
                    )
                }
            } else {
                self.buf.clear();
                for c in chunk {
                    c.put_le(&mut self.buf);
                }
                &self.buf
            };
            let Sink::Raw(w) = &mut self.sink else {
                return Err(Error::UnsupportedFormat(format!(
                    "{} samples into a WAV file",
                    T::RECORD.name()
                )));
            };
            w.write_all(bytes).map_err(io(&self.path))?;
            self.sha256.update(bytes);
            if let Some(h) = &mut self.sha512 {
                h.update(bytes);
            }
            self.bytes += bytes.len() as u64;
            self.samples += chunk.len() as u64;
        }
        Ok(())
    }

    fn write_inner(&mut self, x: &[Complex<f32>]) -> Result<()> {
        for chunk in x.chunks(CHUNK) {
            self.buf.clear();
            for c in chunk {
                self.buf.extend_from_slice(&c.re.to_le_bytes());
                self.buf.extend_from_slice(&c.im.to_le_bytes());
            }
            match &mut self.sink {
                Sink::Raw(w) => w.write_all(&self.buf).map_err(io(&self.path))?,
                Sink::Wav(w) => {
                    for c in chunk {
                        w.write_sample(c.re).map_err(|e| wav_err(&self.path, e))?;
                        w.write_sample(c.im).map_err(|e| wav_err(&self.path, e))?;
                    }
                }
            }
            if self.format != IqFormat::Wav {
                self.sha256.update(&self.buf);
            }
            if let Some(h) = &mut self.sha512 {
                h.update(&self.buf);
            }
            self.bytes += self.buf.len() as u64;
            self.samples += chunk.len() as u64;
        }
        Ok(())
    }

    /// How good the recording's frequency axis is (the radio's clock source, its last
    /// frequency calibration, the correction applied): written into the
    /// `.sigmf-meta`'s global object as `rxnode:clock`, the `rxnode` extension
    /// declared in `core:extensions` (docs/protocol.md#clock); ignored by the other
    /// formats.
    pub fn set_clock(&mut self, clock: serde_json::Value) {
        self.clock = Some(clock);
    }

    /// Annotations for the `.sigmf-meta` (one per reported peak); ignored by the
    /// other formats. Non-finite or inverted edges are dropped.
    pub fn annotate(&mut self, peaks: Vec<PeakAnnotation>) {
        self.annotations = peaks
            .into_iter()
            .filter(|a| {
                a.freq_lower_hz.is_finite()
                    && a.freq_upper_hz.is_finite()
                    && a.freq_lower_hz <= a.freq_upper_hz
            })
            .collect();
    }

    /// Flush and close; for SigMF also write the `.sigmf-meta`. Returns every file written.
    /// (A WAV header is patched when the file is finalised, so a WAV file's hash is
    /// computed by reading it back once; raw and SigMF data are hashed while written.)
    pub fn finish(self) -> Result<Vec<IqFileRecord>> {
        match self.finish_partial() {
            (files, None) => Ok(files),
            (_, Some(e)) => Err(e),
        }
    }

    /// [`IqWriter::finish`] for a recording that may have failed on the way:
    /// every file that is on disk is listed — one cut short by an I/O error (a
    /// full disk, a file-size limit) as `partial`, its size and SHA-256 read back
    /// from the disk — with the error met while closing, if any.
    pub fn finish_partial(self) -> (Vec<IqFileRecord>, Option<Error>) {
        let cut_short = matches!(self.stopped, Some(Error::Io { .. }));
        let path = self.path.clone();
        let data_format = match self.format {
            IqFormat::Sigmf => "sigmf-data".to_owned(),
            f => f.name().to_owned(),
        };
        let meta_path = (self.format == IqFormat::Sigmf).then(|| path.with_extension("sigmf-meta"));
        let (mut files, err) = match self.finish_whole() {
            Ok(files) => (files, None),
            Err(e) => {
                let mut files = vec![];
                for (p, format) in [
                    (Some(path.clone()), data_format),
                    (meta_path, "sigmf-meta".to_owned()),
                ] {
                    // Only a regular file is read back (a FIFO would block).
                    let Some(p) = p.filter(|p| p.metadata().is_ok_and(|m| m.is_file())) else {
                        continue;
                    };
                    if let Ok((bytes, sha256)) = hash_file(&p) {
                        files.push(IqFileRecord {
                            path: p,
                            format,
                            bytes,
                            sha256,
                            partial: true,
                        });
                    }
                }
                return (files, Some(e));
            }
        };
        if cut_short {
            if let Some(f) = files.iter_mut().find(|f| f.path == path) {
                let regular = path.metadata().is_ok_and(|m| m.is_file());
                if let Some((bytes, sha256)) = regular.then(|| hash_file(&path).ok()).flatten() {
                    (f.bytes, f.sha256) = (bytes, sha256);
                }
                f.partial = true;
            }
        }
        (files, err)
    }

    fn finish_whole(self) -> Result<Vec<IqFileRecord>> {
        let Self {
            format,
            samples_as,
            path,
            meta,
            sink,
            sha256,
            sha512,
            bytes,
            samples,
            annotations,
            clock,
            ..
        } = self;
        match sink {
            Sink::Raw(mut w) => {
                w.flush().map_err(io(&path))?;
                let f = w.into_inner().map_err(|e| Error::Io {
                    path: path.clone(),
                    source: e.into_error(),
                })?;
                // A pipe or FIFO has nothing to sync (and refuses to).
                if f.metadata().is_ok_and(|m| m.is_file()) {
                    f.sync_all().map_err(io(&path))?;
                }
            }
            Sink::Wav(w) => w.finalize().map_err(|e| wav_err(&path, e))?,
        }
        let mut out = Vec::new();
        match format {
            IqFormat::Wav => {
                let (len, hash) = hash_file(&path)?;
                out.push(IqFileRecord {
                    path,
                    format: "wav".into(),
                    bytes: len,
                    sha256: hash,
                    partial: false,
                });
            }
            IqFormat::Sigmf => {
                let sha512 = sha512.map(|h| hex::encode(h.finalize()));
                let text = sigmf_meta(
                    &meta,
                    samples_as,
                    sha512.as_deref(),
                    samples,
                    &annotations,
                    clock.as_ref(),
                )?;
                let meta_path = path.with_extension("sigmf-meta");
                create_new(&meta_path)?
                    .write_all(&text)
                    .map_err(io(&meta_path))?;
                out.push(IqFileRecord {
                    path,
                    format: "sigmf-data".into(),
                    bytes,
                    sha256: hex::encode(sha256.finalize()),
                    partial: false,
                });
                out.push(IqFileRecord {
                    path: meta_path,
                    format: "sigmf-meta".into(),
                    bytes: text.len() as u64,
                    sha256: hex::encode(Sha256::digest(&text)),
                    partial: false,
                });
            }
            _ => out.push(IqFileRecord {
                path,
                format: format.name().into(),
                bytes,
                sha256: hex::encode(sha256.finalize()),
                partial: false,
            }),
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
