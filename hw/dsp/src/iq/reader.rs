//! Streaming IQ readers: every raw layout through one decoder ([`Datatype`]), WAV,
//! SigMF pairs and `.sigmf` archives (read in place, never extracted), one channel of
//! a multi-channel SigMF at a time.
use super::{Datatype, IqFormat};
use crate::error::{Error, Result};
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The most bytes a `.sigmf-meta` may have (its annotations included).
const META_MAX_BYTES: u64 = 64 << 20;

/// What a recording says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IqInfo {
    /// The format.
    pub format: IqFormat,
    /// How the samples are stored (WAV: the layout of its frames).
    pub datatype: Datatype,
    /// The file holding the samples (a `.sigmf` archive for an archived recording).
    pub data_path: PathBuf,
    /// The file holding the metadata (SigMF: the `.sigmf-meta`, or the archive).
    pub meta_path: Option<PathBuf>,
    /// Sample rate from the file (WAV header, SigMF meta), if it carries one.
    pub sample_rate_hz: Option<f64>,
    /// Centre frequency from the file (SigMF meta), if it carries one.
    pub center_hz: Option<f64>,
    /// Number of complex samples (per channel).
    pub samples: u64,
    /// Channels interleaved in the file (SigMF `core:num_channels`; 1 otherwise).
    pub num_channels: u32,
    /// The channel this reader reads (0-based).
    pub channel: u32,
    /// Full-scale clip level of the integer formats after scaling (1.0 for float).
    pub clip_level: f32,
    /// The recording's `clock` block as written (SigMF `global` → `rxnode:clock`,
    /// docs/protocol.md#clock), if it carries one; not checked here.
    pub clock: Option<serde_json::Value>,
}

enum Kind {
    Raw {
        data: Chunks,
        datatype: Datatype,
        channels: usize,
        channel: usize,
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

/// Where a recording's samples are: a file, or a byte range of an archive.
struct DataRange {
    path: PathBuf,
    offset: u64,
    len: u64,
}

/// What a SigMF meta says, checked.
struct SigmfMeta {
    datatype: Datatype,
    rate: Option<f64>,
    center: Option<f64>,
    channels: u32,
    clock: Option<serde_json::Value>,
    /// `core:dataset`: the data file of a Non-Conforming Dataset, next to the meta.
    dataset: Option<String>,
    /// `core:metadata_only`.
    metadata_only: bool,
    /// Each capture segment's first sample, counted from the dataset's first one
    /// (`core:sample_start` less the first segment's), and its `core:header_bytes`.
    segments: Vec<(u64, u64)>,
    /// `core:trailing_bytes`: bytes after the samples that are not samples.
    trailing_bytes: u64,
}

/// The byte ranges of a file that hold samples (one for a conforming dataset; one
/// per capture segment when headers sit between them), read as one stream.
struct Chunks {
    file: File,
    /// (offset, length) of each range, in order.
    ranges: Vec<(u64, u64)>,
    /// The range being read and what is left of it.
    at: usize,
    left: u64,
}

impl Chunks {
    fn new(mut file: File, ranges: Vec<(u64, u64)>) -> std::io::Result<Self> {
        let (first, left) = ranges.first().copied().unwrap_or((0, 0));
        file.seek(SeekFrom::Start(first))?;
        Ok(Self {
            file,
            ranges,
            at: 0,
            left,
        })
    }
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.left == 0 {
            self.at += 1;
            let Some(&(offset, len)) = self.ranges.get(self.at) else {
                return Ok(0);
            };
            self.file.seek(SeekFrom::Start(offset))?;
            self.left = len;
        }
        let want = (buf.len() as u64).min(self.left) as usize;
        let n = self.file.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

impl IqReader {
    /// Open a recording (channel 0); the format comes from the extension unless given.
    pub fn open(path: &Path, format: Option<IqFormat>) -> Result<Self> {
        Self::open_channel(path, format, 0)
    }

    /// Open one channel of a recording (0-based; only SigMF holds more than one).
    pub fn open_channel(path: &Path, format: Option<IqFormat>, channel: u32) -> Result<Self> {
        let format = match format {
            Some(f) => f,
            None => IqFormat::from_path(path)?,
        };
        if let Some(datatype) = format.datatype() {
            let len = File::open(path)
                .and_then(|f| f.metadata())
                .map_err(io(path))?
                .len();
            let data = DataRange {
                path: path.to_path_buf(),
                offset: 0,
                len,
            };
            let mut r = Self::open_raw(data, datatype, 1, 0, format)?;
            r.check_channel(channel)?;
            return Ok(r);
        }
        let mut r = match format {
            IqFormat::Wav => Self::open_wav(path)?,
            _ => Self::open_sigmf(path, channel)?,
        };
        r.check_channel(channel)?;
        Ok(r)
    }

    fn check_channel(&mut self, channel: u32) -> Result<()> {
        if channel >= self.info.num_channels {
            let path = self.info.meta_path.as_ref().unwrap_or(&self.info.data_path);
            return Err(bad(
                path,
                format!(
                    "channel {channel} asked for, but the recording has {} channel(s) \
                     (numbered from 0)",
                    self.info.num_channels
                ),
            ));
        }
        Ok(())
    }

    /// What the file says about itself.
    pub fn info(&self) -> &IqInfo {
        &self.info
    }

    fn open_raw(
        data: DataRange,
        datatype: Datatype,
        channels: u32,
        channel: u32,
        format: IqFormat,
    ) -> Result<Self> {
        let whole = vec![(data.offset, data.len)];
        Self::open_ranges(data, whole, datatype, channels, channel, format)
    }

    /// [`IqReader::open_raw`] over the byte ranges of `data.path` that hold samples
    /// (`data.len`: their total).
    fn open_ranges(
        data: DataRange,
        ranges: Vec<(u64, u64)>,
        datatype: Datatype,
        channels: u32,
        channel: u32,
        format: IqFormat,
    ) -> Result<Self> {
        let path = &data.path;
        let file = File::open(path).map_err(io(path))?;
        if data.len == 0 {
            return Err(bad(path, "empty file (0 bytes)"));
        }
        let size = datatype.sample_bytes() as u64 * u64::from(channels);
        if !data.len.is_multiple_of(size) {
            return Err(bad(
                path,
                format!(
                    "{} bytes is not a whole number of {} samples ({size} bytes each{}): \
                     truncated or wrong format",
                    data.len,
                    match format {
                        IqFormat::Sigmf => datatype.sigmf_name(),
                        f => f.name(),
                    },
                    if channels > 1 {
                        format!(" for {channels} channels")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let data_chunks = Chunks::new(file, ranges).map_err(io(path))?;
        Ok(Self {
            info: IqInfo {
                format,
                datatype,
                data_path: data.path.clone(),
                meta_path: None,
                sample_rate_hz: None,
                center_hz: None,
                samples: data.len / size,
                num_channels: channels,
                channel,
                clip_level: datatype.clip_level(),
                clock: None,
            },
            kind: Kind::Raw {
                data: data_chunks,
                datatype,
                channels: channels as usize,
                channel: channel as usize,
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
        let (kind, datatype) = match (spec.sample_format, spec.bits_per_sample) {
            (hound::SampleFormat::Float, 32) => (Kind::WavF32(r), Datatype::Cf32Le),
            (hound::SampleFormat::Int, 16) => (Kind::WavI16(r), Datatype::Ci16Le),
            (hound::SampleFormat::Int, 8) => (Kind::WavI8(r), Datatype::Ci8),
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
                datatype,
                data_path: path.to_path_buf(),
                meta_path: None,
                sample_rate_hz: Some(f64::from(spec.sample_rate)),
                center_hz: None,
                samples,
                num_channels: 1,
                channel: 0,
                clip_level: datatype.clip_level(),
                clock: None,
            },
            kind,
            done: 0,
        })
    }

    /// A SigMF recording: a `.sigmf` archive, or the pair next to `path` (or the
    /// meta and its Non-Conforming Dataset, `core:dataset`).
    fn open_sigmf(path: &Path, channel: u32) -> Result<Self> {
        let archive = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sigmf"));
        let (meta_path, m, data) = if archive {
            let (text, data) = archived(path)?;
            (path.to_path_buf(), sigmf_meta(path, &text)?, data)
        } else {
            let meta_path = path.with_extension("sigmf-meta");
            let m = sigmf_meta(&meta_path, &read_meta(&meta_path)?)?;
            let data_path = match &m.dataset {
                Some(name) => meta_path.with_file_name(name),
                None => path.with_extension("sigmf-data"),
            };
            if m.metadata_only && !data_path.is_file() {
                return Err(bad(
                    &meta_path,
                    "core:metadata_only is true: the recording is distributed without its \
                     samples, so there is nothing to analyse",
                ));
            }
            let len = File::open(&data_path)
                .and_then(|f| f.metadata())
                .map_err(io(&data_path))?
                .len();
            let data = DataRange {
                path: data_path,
                offset: 0,
                len,
            };
            (meta_path, m, data)
        };
        if channel >= m.channels {
            return Err(bad(
                &meta_path,
                format!(
                    "channel {channel} asked for, but core:num_channels is {} (channels are \
                     numbered from 0)",
                    m.channels
                ),
            ));
        }
        let frame = m.datatype.sample_bytes() as u64 * u64::from(m.channels);
        let (ranges, len) = sample_ranges(&meta_path, &m, &data, frame)?;
        let data = DataRange { len, ..data };
        let mut r = Self::open_ranges(
            data,
            ranges,
            m.datatype,
            m.channels,
            channel,
            IqFormat::Sigmf,
        )?;
        r.info.meta_path = Some(meta_path);
        r.info.sample_rate_hz = m.rate;
        r.info.center_hz = m.center;
        r.info.clock = m.clock;
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
            Kind::Raw {
                data,
                datatype,
                channels,
                channel,
                bytes,
            } => {
                bytes.resize(want * datatype.sample_bytes() * *channels, 0);
                data.read_exact(bytes).map_err(|e| {
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
                datatype.decode(bytes, *channels, *channel, out);
                if datatype.is_float() {
                    check_finite(path, start, out)?;
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

/// A `.sigmf-meta` file's text, bounded in size.
fn read_meta(meta_path: &Path) -> Result<String> {
    let f = File::open(meta_path).map_err(io(meta_path))?;
    let mut text = String::new();
    f.take(META_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io(meta_path))?;
    if text.len() as u64 > META_MAX_BYTES {
        return Err(bad(
            meta_path,
            format!("SigMF meta is larger than {META_MAX_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// A SigMF archive (a tar holding one `.sigmf-meta` and its `.sigmf-data`): the
/// meta's text and where the data lies inside the archive, read in place.
fn archived(path: &Path) -> Result<(String, DataRange)> {
    let file = File::open(path).map_err(io(path))?;
    let mut tar = tar::Archive::new(file);
    let not_tar = |e: std::io::Error| bad(path, format!("not a readable SigMF archive (tar): {e}"));
    let mut metas: Vec<(PathBuf, String)> = Vec::new();
    let mut datas: Vec<(PathBuf, u64, u64)> = Vec::new();
    for entry in tar.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry.path().map_err(not_tar)?.into_owned();
        match name.extension().and_then(|e| e.to_str()) {
            Some("sigmf-meta") => {
                if entry.size() > META_MAX_BYTES {
                    return Err(bad(
                        path,
                        format!(
                            "{} in the archive is larger than {META_MAX_BYTES} bytes",
                            name.display()
                        ),
                    ));
                }
                let mut text = String::new();
                entry.read_to_string(&mut text).map_err(|e| {
                    bad(
                        path,
                        format!("{} in the archive is unreadable: {e}", name.display()),
                    )
                })?;
                metas.push((name, text));
            }
            Some("sigmf-data") => {
                datas.push((name, entry.raw_file_position(), entry.size()));
            }
            _ => {}
        }
    }
    let (meta_name, text) = match metas.len() {
        1 => metas.swap_remove(0),
        0 => return Err(bad(path, "the archive holds no .sigmf-meta")),
        n => {
            let names: Vec<String> = metas.iter().map(|(p, _)| p.display().to_string()).collect();
            return Err(bad(
                path,
                format!(
                    "the archive holds {n} recordings ({}); only an archive of one is read: \
                     extract it and name the .sigmf-meta",
                    names.join(", ")
                ),
            ));
        }
    };
    let want = meta_name.with_extension("sigmf-data");
    let (_, offset, len) = datas
        .into_iter()
        .find(|(p, _, _)| *p == want)
        .ok_or_else(|| {
            bad(
                path,
                format!("the archive holds no {} for its meta", want.display()),
            )
        })?;
    Ok((
        text,
        DataRange {
            path: path.to_path_buf(),
            offset,
            len,
        },
    ))
}

/// Check a SigMF meta: its datatype, rate, channels and capture segments. What this
/// reader cannot read is refused by name, never read wrongly: capture segments at
/// different centre frequencies, or a header inside the data
/// (docs/operator.md#analysing-a-recording). Keys it does not know are left alone.
fn sigmf_meta(meta_path: &Path, text: &str) -> Result<SigmfMeta> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| bad(meta_path, format!("invalid SigMF meta JSON: {e}")))?;
    let global = v
        .get("global")
        .ok_or_else(|| bad(meta_path, "SigMF meta has no \"global\" object"))?;
    let dt = global
        .get("core:datatype")
        .and_then(|d| d.as_str())
        .ok_or_else(|| bad(meta_path, "SigMF meta has no core:datatype"))?;
    // A multi-byte type without `_le`/`_be` (not SigMF, but written by some tools) is
    // read little-endian, as the `sigmf` package reads it on little-endian hosts.
    let spelled = dt.to_ascii_lowercase();
    let datatype = Datatype::from_sigmf(&spelled)
        .or_else(|| {
            (!spelled.contains('_'))
                .then(|| Datatype::from_sigmf(&format!("{spelled}_le")))
                .flatten()
        })
        .ok_or_else(|| {
            bad(
                meta_path,
                format!(
                    "unsupported SigMF core:datatype {dt:?}{} (supported: {})",
                    if dt.starts_with('r') {
                        ": real-valued samples, and analysis needs complex I/Q"
                    } else {
                        ""
                    },
                    Datatype::sigmf_names()
                ),
            )
        })?;
    // Optional in SigMF: a recording without it needs the rate given.
    let rate = match global.get("core:sample_rate") {
        None => None,
        Some(r) => Some(
            r.as_f64()
                .filter(|r| r.is_finite() && *r > 0.0)
                .ok_or_else(|| {
                    bad(
                        meta_path,
                        format!("core:sample_rate {r} is not a rate in Hz > 0"),
                    )
                })?,
        ),
    };
    let channels = match global.get("core:num_channels") {
        None => 1,
        Some(c) => c
            .as_u64()
            .filter(|&n| n >= 1)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|&n| n <= 1024)
            .ok_or_else(|| {
                bad(
                    meta_path,
                    format!("core:num_channels {c} is not a count in 1..=1024"),
                )
            })?,
    };
    let segments = v
        .get("captures")
        .and_then(|c| c.as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    let count = |at: &str, key: &str, x: Option<&serde_json::Value>| -> Result<u64> {
        match x {
            None => Ok(0),
            Some(n) => n.as_u64().ok_or_else(|| {
                bad(
                    meta_path,
                    format!("{at} has {key} {n}: not a count (a whole number ≥ 0)"),
                )
            }),
        }
    };
    // Each segment's first sample counted from the dataset's (the first segment
    // starts it, whatever `core:offset` says the index of that sample is), and the
    // header bytes before it (a Non-Conforming Dataset).
    let mut starts = Vec::with_capacity(segments.len().max(1));
    let mut first = None;
    for (i, c) in segments.iter().enumerate() {
        let at = format!("capture segment {i}");
        let start = count(&at, "core:sample_start", c.get("core:sample_start"))?;
        let first = *first.get_or_insert(start);
        let rel = start.checked_sub(first).ok_or_else(|| {
            bad(
                meta_path,
                format!(
                    "{at} has core:sample_start {start}, before segment 0's {first}: segments \
                     must be sorted by core:sample_start"
                ),
            )
        })?;
        if let Some(&(prev, _)) = starts.last() {
            if rel < prev {
                return Err(bad(
                    meta_path,
                    format!(
                        "{at} has core:sample_start {start}, before the segment before it: \
                         segments must be sorted by core:sample_start"
                    ),
                ));
            }
        }
        let header = count(&at, "core:header_bytes", c.get("core:header_bytes"))?;
        starts.push((rel, header));
    }
    if starts.is_empty() {
        starts.push((0, 0));
    }
    let trailing_bytes = count(
        "the global object",
        "core:trailing_bytes",
        global.get("core:trailing_bytes"),
    )?;
    let dataset = match global.get("core:dataset") {
        None => None,
        Some(d) => {
            let name = d.as_str().unwrap_or_default();
            let plain = !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\', ':'])
                && Path::new(name).file_name().is_some_and(|f| f == name);
            if !plain {
                return Err(bad(
                    meta_path,
                    format!(
                        "core:dataset {d} is not a file name: the dataset must be a file in \
                         the meta's own folder, named without a path"
                    ),
                ));
            }
            Some(name.to_owned())
        }
    };
    let metadata_only = global
        .get("core:metadata_only")
        .and_then(|m| m.as_bool())
        .unwrap_or(false);
    let freq_of = |c: &serde_json::Value| c.get("core:frequency").and_then(|f| f.as_f64());
    let center = segments.first().and_then(freq_of);
    if let Some((i, other)) = segments
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, c)| freq_of(c) != center)
    {
        let hz = |f: Option<f64>| f.map_or("no core:frequency".to_owned(), |f| format!("{f} Hz"));
        return Err(bad(
            meta_path,
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
    Ok(SigmfMeta {
        datatype,
        rate,
        center,
        channels,
        clock: global.get("rxnode:clock").cloned(),
        dataset,
        metadata_only,
        segments: starts,
        trailing_bytes,
    })
}

/// The byte ranges of `data` that hold samples, and their total: each capture
/// segment's samples after its `core:header_bytes`, the last one up to the
/// `core:trailing_bytes` at the end. A dataset too short for what the meta says is
/// refused naming the segment.
fn sample_ranges(
    meta_path: &Path,
    m: &SigmfMeta,
    data: &DataRange,
    frame: u64,
) -> Result<(Vec<(u64, u64)>, u64)> {
    let short = |what: String| {
        bad(
            meta_path,
            format!(
                "{what}, but the dataset {} has {} bytes",
                data.path.display(),
                data.len
            ),
        )
    };
    let end = data
        .len
        .checked_sub(m.trailing_bytes)
        .ok_or_else(|| short(format!("core:trailing_bytes is {}", m.trailing_bytes)))?;
    let mut ranges = Vec::with_capacity(m.segments.len());
    let mut pos = 0u64;
    let mut total = 0u64;
    for (i, &(start, header)) in m.segments.iter().enumerate() {
        let begin = start
            .checked_mul(frame)
            .and_then(|b| b.checked_add(pos))
            .and_then(|b| b.checked_add(header))
            .filter(|&b| b <= end)
            .ok_or_else(|| {
                short(format!(
                    "capture segment {i} starts at sample {start} after core:header_bytes {header}"
                ))
            })?;
        pos += header;
        let stop = match m.segments.get(i + 1) {
            Some(&(next, _)) => next
                .checked_mul(frame)
                .and_then(|b| b.checked_add(pos))
                .filter(|&b| b <= end)
                .ok_or_else(|| {
                    short(format!("capture segment {} starts at sample {next}", i + 1))
                })?,
            None => end,
        };
        let len = stop - begin;
        if i + 1 < m.segments.len() && len % frame != 0 {
            return Err(short(format!("capture segment {i} is not whole samples")));
        }
        ranges.push((data.offset + begin, len));
        total += len;
    }
    Ok((ranges, total))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A meta and 100 ci8 samples beside it; the error `open` gives, as text.
    fn refusal(meta: serde_json::Value) -> String {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sigmf-meta");
        std::fs::write(&p, meta.to_string()).unwrap();
        std::fs::write(dir.path().join("r.sigmf-data"), [0u8; 200]).unwrap();
        IqReader::open(&p, None).unwrap_err().to_string()
    }

    /// Hostile capture segments are refused naming the key, never read wrongly nor a
    /// panic: sizes past u64, out-of-order segments, counts that are not counts.
    #[test]
    fn bad_capture_segments_are_refused_by_key() {
        let global = serde_json::json!({"core:datatype": "ci8", "core:sample_rate": 1e6});
        let with = |captures: serde_json::Value| {
            refusal(serde_json::json!({"global": global, "captures": captures}))
        };
        let e = with(serde_json::json!([{"core:sample_start": 0, "core:header_bytes": u64::MAX}]));
        assert!(e.contains("core:header_bytes"), "{e}");
        let e =
            with(serde_json::json!([{"core:sample_start": 0}, {"core:sample_start": u64::MAX}]));
        assert!(e.contains("segment 1 starts at sample"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": 50}, {"core:sample_start": 10}]));
        assert!(e.contains("sorted by core:sample_start"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": -1}]));
        assert!(e.contains("core:sample_start -1"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": 0, "core:header_bytes": 1.5}]));
        assert!(e.contains("core:header_bytes 1.5"), "{e}");
        let e = refusal(serde_json::json!({"global": {
            "core:datatype": "ci8", "core:trailing_bytes": 201}}));
        assert!(e.contains("core:trailing_bytes is 201"), "{e}");
        let e = refusal(serde_json::json!({"global": {
            "core:datatype": "ci8", "core:dataset": "/etc/passwd"}}));
        assert!(e.contains("core:dataset"), "{e}");
        let e = refusal(serde_json::json!({"global": {"core:datatype": "rf32_le"}}));
        assert!(e.contains("real-valued"), "{e}");
    }

    /// Samples after a header, between segments' headers and before a footer are
    /// read in order, the header and footer bytes never.
    #[test]
    fn headers_and_footers_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = vec![0xEEu8; 3];
        data.extend([1, 2, 3, 4]);
        data.extend([0xEE; 5]);
        data.extend([5, 6]);
        data.extend([0xEE; 7]);
        std::fs::write(dir.path().join("x.dat"), &data).unwrap();
        let meta = serde_json::json!({
            "global": {"core:datatype": "ci8", "core:dataset": "x.dat",
                       "core:trailing_bytes": 7},
            "captures": [{"core:sample_start": 10, "core:header_bytes": 3},
                         {"core:sample_start": 12, "core:header_bytes": 5}]});
        let p = dir.path().join("x.sigmf-meta");
        std::fs::write(&p, meta.to_string()).unwrap();
        let mut r = IqReader::open(&p, None).unwrap();
        assert_eq!(r.info().samples, 3);
        assert_eq!(r.info().sample_rate_hz, None);
        let mut out = vec![Complex::new(0.0f32, 0.0); 8];
        assert_eq!(r.read(&mut out).unwrap(), 3);
        let got: Vec<(f32, f32)> = out[..3]
            .iter()
            .map(|c| (c.re * 128.0, c.im * 128.0))
            .collect();
        assert_eq!(got, [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]);
    }
}
