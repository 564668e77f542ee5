//! Streaming IQ readers.
use super::IqFormat;
use crate::error::{Error, Result};
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// What a recording says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IqInfo {
    /// The format.
    pub format: IqFormat,
    /// The file holding the samples.
    pub data_path: PathBuf,
    /// Sample rate from the file (WAV header, SigMF meta), if it carries one.
    pub sample_rate_hz: Option<f64>,
    /// Centre frequency from the file (SigMF meta), if it carries one.
    pub center_hz: Option<f64>,
    /// Number of complex samples.
    pub samples: u64,
    /// Full-scale clip level of the integer formats after scaling (1.0 for float).
    pub clip_level: f32,
    /// The recording's `clock` block as written (SigMF `global` → `rxnode:clock`,
    /// docs/protocol.md#clock), if it carries one; not checked here.
    pub clock: Option<serde_json::Value>,
}

#[derive(Clone, Copy)]
enum Raw {
    F32,
    I16,
    I8,
}

impl Raw {
    fn size(self) -> usize {
        match self {
            Self::F32 => 8,
            Self::I16 => 4,
            Self::I8 => 2,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Self::F32 => "cf32",
            Self::I16 => "cs16",
            Self::I8 => "cs8",
        }
    }
    fn clip(self) -> f32 {
        match self {
            Self::F32 => 1.0,
            Self::I16 => 32767.0 / 32768.0,
            Self::I8 => 127.0 / 128.0,
        }
    }
}

enum Kind {
    Raw {
        file: File,
        raw: Raw,
        bytes: Vec<u8>,
    },
    WavF32(hound::WavReader<BufReader<File>>),
    WavI16(hound::WavReader<BufReader<File>>),
    WavI8(hound::WavReader<BufReader<File>>),
}

/// A streaming reader: [`IqReader::read`] fills a caller's buffer; memory stays bounded.
pub struct IqReader {
    info: IqInfo,
    kind: Kind,
    done: u64,
}

impl std::fmt::Debug for IqReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IqReader")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

fn bad(path: &Path, detail: impl Into<String>) -> Error {
    Error::BadIqFile {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl IqReader {
    /// Open a recording; the format comes from the extension unless given.
    pub fn open(path: &Path, format: Option<IqFormat>) -> Result<Self> {
        let format = match format {
            Some(f) => f,
            None => IqFormat::from_path(path)?,
        };
        match format {
            IqFormat::Cf32 => Self::open_raw(path, Raw::F32, format, None, None),
            IqFormat::Cs16 => Self::open_raw(path, Raw::I16, format, None, None),
            IqFormat::Cs8 => Self::open_raw(path, Raw::I8, format, None, None),
            IqFormat::Wav => Self::open_wav(path),
            IqFormat::Sigmf => Self::open_sigmf(path),
        }
    }

    /// What the file says about itself.
    pub fn info(&self) -> &IqInfo {
        &self.info
    }

    fn open_raw(
        path: &Path,
        raw: Raw,
        format: IqFormat,
        rate: Option<f64>,
        center: Option<f64>,
    ) -> Result<Self> {
        let file = File::open(path).map_err(io(path))?;
        let len = file.metadata().map_err(io(path))?.len();
        if len == 0 {
            return Err(bad(path, "empty file (0 bytes)"));
        }
        let size = raw.size() as u64;
        if len % size != 0 {
            return Err(bad(
                path,
                format!(
                    "{len} bytes is not a whole number of {} samples ({size} bytes each): \
                     truncated or wrong format",
                    raw.name()
                ),
            ));
        }
        Ok(Self {
            info: IqInfo {
                format,
                data_path: path.to_path_buf(),
                sample_rate_hz: rate,
                center_hz: center,
                samples: len / size,
                clip_level: raw.clip(),
                clock: None,
            },
            kind: Kind::Raw {
                file,
                raw,
                bytes: Vec::new(),
            },
            done: 0,
        })
    }

    fn open_wav(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(io(path))?;
        if file.metadata().map_err(io(path))?.len() == 0 {
            return Err(bad(path, "empty file (0 bytes)"));
        }
        let r = hound::WavReader::new(BufReader::new(file))
            .map_err(|e| bad(path, format!("not a readable WAV file: {e}")))?;
        let spec = r.spec();
        if spec.channels != 2 {
            return Err(bad(
                path,
                format!(
                    "WAV has {} channel(s); IQ needs 2 (I left, Q right)",
                    spec.channels
                ),
            ));
        }
        let (kind, clip) = match (spec.sample_format, spec.bits_per_sample) {
            (hound::SampleFormat::Float, 32) => (Kind::WavF32(r), 1.0),
            (hound::SampleFormat::Int, 16) => (Kind::WavI16(r), 32767.0 / 32768.0),
            (hound::SampleFormat::Int, 8) => (Kind::WavI8(r), 127.0 / 128.0),
            (f, b) => {
                return Err(bad(
                    path,
                    format!(
                    "WAV sample format {f:?} {b}-bit is not supported (float 32, int 16, int 8)"
                ),
                ))
            }
        };
        let samples = match &kind {
            Kind::WavF32(r) | Kind::WavI16(r) | Kind::WavI8(r) => u64::from(r.duration()),
            Kind::Raw { .. } => 0,
        };
        if samples == 0 {
            return Err(bad(path, "WAV holds no samples"));
        }
        Ok(Self {
            info: IqInfo {
                format: IqFormat::Wav,
                data_path: path.to_path_buf(),
                sample_rate_hz: Some(f64::from(spec.sample_rate)),
                center_hz: None,
                samples,
                clip_level: clip,
                clock: None,
            },
            kind,
            done: 0,
        })
    }

    fn open_sigmf(path: &Path) -> Result<Self> {
        let meta_path = path.with_extension("sigmf-meta");
        let data_path = path.with_extension("sigmf-data");
        let text = std::fs::read_to_string(&meta_path).map_err(io(&meta_path))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| bad(&meta_path, format!("invalid SigMF meta JSON: {e}")))?;
        let global = v
            .get("global")
            .ok_or_else(|| bad(&meta_path, "SigMF meta has no \"global\" object"))?;
        let dt = global
            .get("core:datatype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad(&meta_path, "SigMF meta has no core:datatype"))?;
        let raw = match dt {
            "cf32_le" => Raw::F32,
            "ci16_le" => Raw::I16,
            "ci8" => Raw::I8,
            other => {
                return Err(bad(
                    &meta_path,
                    format!(
                    "unsupported SigMF core:datatype {other:?} (supported: cf32_le, ci16_le, ci8)"
                ),
                ))
            }
        };
        let rate = global
            .get("core:sample_rate")
            .and_then(|r| r.as_f64())
            .filter(|r| r.is_finite() && *r > 0.0)
            .ok_or_else(|| bad(&meta_path, "SigMF meta has no valid core:sample_rate"))?;
        // What this reader cannot read is refused by name, never read wrongly: several
        // channels interleaved sample by sample, or capture segments at different
        // centre frequencies (docs/operator.md#analysing-a-recording).
        let channels = match global.get("core:num_channels") {
            None => 1,
            Some(c) => c.as_u64().filter(|&n| n >= 1).ok_or_else(|| {
                bad(
                    &meta_path,
                    format!("core:num_channels {c} is not a count ≥ 1"),
                )
            })?,
        };
        if channels != 1 {
            return Err(bad(
                &meta_path,
                format!(
                    "core:num_channels is {channels}: its channels are interleaved sample by sample, \
                     and only single-channel SigMF is read (read as one channel it would be wrong); \
                     split the channels into recordings of their own"
                ),
            ));
        }
        let segments = v
            .get("captures")
            .and_then(|c| c.as_array())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let freq_of = |c: &serde_json::Value| c.get("core:frequency").and_then(|f| f.as_f64());
        let center = segments.first().and_then(freq_of);
        if let Some((i, other)) = segments
            .iter()
            .enumerate()
            .skip(1)
            .find(|(_, c)| freq_of(c) != center)
        {
            let hz =
                |f: Option<f64>| f.map_or("no core:frequency".to_owned(), |f| format!("{f} Hz"));
            return Err(bad(
                &meta_path,
                format!(
                    "{} capture segments at different centre frequencies (segment 0 at {}, segment {i} at {}): \
                     each would need its own frequency axis, and only recordings whose segments share one \
                     core:frequency are read",
                    segments.len(),
                    hz(center),
                    hz(freq_of(other))
                ),
            ));
        }
        let mut r = Self::open_raw(&data_path, raw, IqFormat::Sigmf, Some(rate), center)?;
        r.info.clock = global.get("rxnode:clock").cloned();
        Ok(r)
    }

    /// Read up to `out.len()` samples; `Ok(0)` at the end of the file. A truncated file,
    /// a read error or a non-finite sample is an error naming the sample index.
    pub fn read(&mut self, out: &mut [Complex<f32>]) -> Result<usize> {
        let left = self.info.samples - self.done;
        let want = (out.len() as u64).min(left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let out = &mut out[..want];
        let path = &self.info.data_path;
        let start = self.done;
        match &mut self.kind {
            Kind::Raw { file, raw, bytes } => {
                let size = raw.size();
                bytes.resize(want * size, 0);
                file.read_exact(bytes).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        bad(
                            path,
                            format!("file ended early near sample {start} (truncated)"),
                        )
                    } else {
                        Error::Io {
                            path: path.clone(),
                            source: e,
                        }
                    }
                })?;
                match raw {
                    Raw::F32 => {
                        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
                            *o = Complex::new(
                                f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                                f32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                            );
                        }
                        check_finite(path, start, out)?;
                    }
                    Raw::I16 => {
                        const S: f32 = 1.0 / 32768.0;
                        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                            *o = Complex::new(
                                f32::from(i16::from_le_bytes([b[0], b[1]])) * S,
                                f32::from(i16::from_le_bytes([b[2], b[3]])) * S,
                            );
                        }
                    }
                    Raw::I8 => {
                        const S: f32 = 1.0 / 128.0;
                        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                            *o = Complex::new(f32::from(b[0] as i8) * S, f32::from(b[1] as i8) * S);
                        }
                    }
                }
            }
            Kind::WavF32(r) => {
                read_wav(path, start, r.samples::<f32>(), out, 1.0)?;
                check_finite(path, start, out)?;
            }
            Kind::WavI16(r) => read_wav(path, start, r.samples::<i16>(), out, 1.0 / 32768.0)?,
            Kind::WavI8(r) => read_wav(path, start, r.samples::<i8>(), out, 1.0 / 128.0)?,
        }
        self.done += want as u64;
        Ok(want)
    }
}

fn read_wav<T: Into<f64>>(
    path: &Path,
    start: u64,
    mut it: impl Iterator<Item = hound::Result<T>>,
    out: &mut [Complex<f32>],
    scale: f64,
) -> Result<()> {
    for (k, o) in out.iter_mut().enumerate() {
        let mut next = || match it.next() {
            Some(Ok(v)) => Ok((v.into() * scale) as f32),
            Some(Err(e)) => Err(bad(
                path,
                format!("WAV data unreadable at sample {}: {e}", start + k as u64),
            )),
            None => Err(bad(
                path,
                format!("WAV data ends at sample {} (truncated)", start + k as u64),
            )),
        };
        let i = next()?;
        let q = next()?;
        *o = Complex::new(i, q);
    }
    Ok(())
}

fn check_finite(path: &Path, start: u64, x: &[Complex<f32>]) -> Result<()> {
    if x.iter().all(|c| c.re.is_finite() && c.im.is_finite()) {
        return Ok(());
    }
    let k = x
        .iter()
        .position(|c| !(c.re.is_finite() && c.im.is_finite()))
        .unwrap_or(0);
    Err(bad(
        path,
        format!(
            "sample {} is not finite (NaN or infinity)",
            start + k as u64
        ),
    ))
}
