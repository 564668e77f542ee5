//! Streaming IQ readers: every raw layout through one decoder ([`Datatype`]), WAV,
//! SigMF pairs and `.sigmf` archives (read in place, never extracted), one channel of
//! a multi-channel SigMF at a time.
use super::{Datatype, IqFormat};
use crate::error::{Error, Result};
use num_complex::Complex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha512};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

mod gnuradio;
mod sdriq;
mod sigmf;
mod wav;
use sigmf::{archived, read_meta, sample_ranges, sigmf_meta};

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
    /// The rate and centre come from the file's name, as gqrx names its raw I/Q
    /// recordings (`gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw`).
    #[serde(default)]
    pub from_gqrx_name: bool,
    /// The centre comes from the file's name, as the tool named here (`SDR#`,
    /// `HDSDR`) names its baseband WAV recordings ([`wav_name_center`]); the file
    /// carries no centre of its own.
    #[serde(default)]
    pub center_from_name: Option<String>,
    /// The layout, rate and centre come from GNU Radio File Meta Sink headers (in
    /// [`IqInfo::meta_path`]: the data file itself, or its `.hdr`).
    #[serde(default)]
    pub gnuradio_header: bool,
    /// The recording radio's bandwidth, Hz (SigMF `rxnode:bandwidth_hz`), when the
    /// file states one.
    #[serde(default)]
    pub bandwidth_hz: Option<f64>,
}

/// What a gqrx raw I/Q recording's name says: `gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw`,
/// the centre and the rate in whole Hz (gqrx writes complex float32, `cf32`). `None`
/// for any other name; a name of that form with an implausible centre or rate is an
/// error naming it (docs/operator.md#analysing-a-recording).
pub fn gqrx_name(path: &Path) -> Result<Option<(f64, f64)>> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let Some(body) = name
        .strip_prefix("gqrx_")
        .and_then(|b| b.strip_suffix("_fc.raw"))
    else {
        return Ok(None);
    };
    let parts: Vec<&str> = body.split('_').collect();
    let digits = |s: &str, n: Option<usize>| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && n.is_none_or(|n| s.len() == n)
    };
    let [date, time, freq, rate] = parts[..] else {
        return Ok(None);
    };
    if !(digits(date, Some(8)) && digits(time, Some(6)) && digits(freq, None) && digits(rate, None))
    {
        return Ok(None);
    }
    let hz = |s: &str| s.parse::<f64>().unwrap_or(f64::INFINITY);
    let (center, rate) = (hz(freq), hz(rate));
    for (what, v, q, zero) in [
        (
            "centre",
            center,
            rxnode_interlock::Quantity::Frequency,
            "0 Hz is not a frequency > 0",
        ),
        (
            "sample rate",
            rate,
            rxnode_interlock::Quantity::SampleRate,
            "0 S/s is not a rate > 0",
        ),
    ] {
        let why = match v {
            v if !v.is_finite() || v <= 0.0 => Some(zero.to_owned()),
            _ => q.implausible(v),
        };
        if let Some(why) = why {
            return Err(bad(
                path,
                format!("the {what} in its gqrx file name ({name}): {why}"),
            ));
        }
    }
    Ok(Some((center, rate)))
}

enum Kind {
    Raw {
        data: Chunks,
        datatype: Datatype,
        channels: usize,
        channel: usize,
        bytes: Vec<u8>,
    },
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
#[derive(Clone)]
struct DataRange {
    path: PathBuf,
    offset: u64,
    len: u64,
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
    /// The dataset's SHA-512, checked as it is read (SigMF `core:sha512`).
    hash: Option<Box<DatasetHash>>,
}

/// A dataset's SHA-512 as its meta states it, and the hash of what was read so far:
/// every byte of the dataset (samples, headers between segments, trailing bytes) in
/// file order, as SigMF defines `core:sha512` (docs/operator.md#analysing-a-recording).
struct DatasetHash {
    /// The meta stating it.
    meta_path: PathBuf,
    /// The hash stated, lower-case hex.
    want: String,
    hasher: Sha512,
    /// The next byte to hash (a file offset) and the dataset's end.
    next: u64,
    end: u64,
}

impl Chunks {
    fn new(
        mut file: File,
        ranges: Vec<(u64, u64)>,
        hash: Option<Box<DatasetHash>>,
    ) -> std::io::Result<Self> {
        let (first, left) = ranges.first().copied().unwrap_or((0, 0));
        // Hashed from the dataset's first byte: what lies before the samples too.
        file.seek(SeekFrom::Start(hash.as_ref().map_or(first, |h| h.next)))?;
        let mut chunks = Self {
            file,
            ranges,
            at: 0,
            left,
            hash,
        };
        chunks.hash_up_to(first)?;
        Ok(chunks)
    }

    /// Hash the bytes that are no samples up to file offset `to` (the file is at the
    /// next byte to hash); without a hash, nothing.
    fn hash_up_to(&mut self, to: u64) -> std::io::Result<()> {
        let Some(h) = self.hash.as_mut() else {
            return Ok(());
        };
        let mut buf = [0u8; 1 << 14];
        while h.next < to {
            let want = (to - h.next).min(buf.len() as u64) as usize;
            let n = self.file.read(&mut buf[..want])?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            h.hasher.update(&buf[..n]);
            h.next += n as u64;
        }
        Ok(())
    }

    /// After the last sample: hash the rest of the dataset and compare it with the
    /// meta's `core:sha512`; a mismatch names both hashes and both files.
    fn check_hash(&mut self, data_path: &Path) -> Result<()> {
        let Some(end) = self.hash.as_ref().map(|h| h.end) else {
            return Ok(());
        };
        self.hash_up_to(end).map_err(io(data_path))?;
        let Some(h) = self.hash.take() else {
            return Ok(());
        };
        let got = hex::encode(h.hasher.finalize());
        if got == h.want {
            return Ok(());
        }
        Err(bad(
            &h.meta_path,
            format!(
                "core:sha512 does not match the dataset {}: the meta says {}, the data \
                 hashes to {got}: the samples are not the ones recorded (changed, truncated \
                 or mixed with another file's); nothing is reported from them",
                data_path.display(),
                h.want
            ),
        ))
    }
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.left == 0 {
            self.at += 1;
            let Some(&(offset, len)) = self.ranges.get(self.at) else {
                return Ok(0);
            };
            if self.hash.is_some() {
                self.hash_up_to(offset)?;
            } else {
                self.file.seek(SeekFrom::Start(offset))?;
            }
            self.left = len;
        }
        let want = (buf.len() as u64).min(self.left) as usize;
        let n = self.file.read(&mut buf[..want])?;
        self.left -= n as u64;
        if let Some(h) = self.hash.as_mut() {
            h.hasher.update(&buf[..n]);
            h.next += n as u64;
        }
        Ok(n)
    }
}

/// A file opened for reading samples: a regular file, never a pipe, FIFO or device,
/// whose length the reader needs before it reads (and which `/dev/zero` never ends).
/// Opened without blocking on a FIFO ([`crate::open_regular`]).
fn open_regular(path: &Path) -> Result<(File, u64)> {
    let file = crate::open_regular(path).map_err(|e| match crate::not_regular(&e) {
        Some(n) => not_regular(path, n.kind),
        None => io(path)(e),
    })?;
    let len = file.metadata().map_err(io(path))?.len();
    Ok((file, len))
}

/// The refusal of a file that is not a regular file, `kind` in words.
pub(super) fn not_regular(path: &Path, kind: &str) -> Error {
    bad(
        path,
        format!(
            "not a regular file: {kind}; a recording is read from a file whose length is known \
             before it is read, never from a stream: save the stream to a file first \
             (e.g. `… > rec.cf32`) and name that file (docs/operator.md#analysing-a-recording)"
        ),
    )
}

/// Why a file about to be read as the raw format `given` is not raw samples: a WAV
/// or RF64 (`RIFF`/`RF64`/`BW64` … `WAVE`) or a tar archive (a `.sigmf` archive), as
/// its first 512 bytes show; read as raw, its headers (and a SigMF archive's meta)
/// would be taken as samples and shift every sample after them. `None` for any other
/// file, and for one too short to tell.
fn container_read_as_raw(file: &mut File, given: IqFormat) -> Option<String> {
    let mut h = Vec::with_capacity(512);
    Read::by_ref(file).take(512).read_to_end(&mut h).ok()?;
    let at = |off: usize, tag: &[u8]| h.get(off..off + tag.len()) == Some(tag);
    let what = if (at(0, b"RIFF") || at(0, b"RF64") || at(0, b"BW64")) && at(8, b"WAVE") {
        "a WAV recording (it opens with a RIFF/RF64 … WAVE header): read as {given}, its \
         header and chunks would be taken as samples; give --format wav (or name it .wav) and \
         it is read from its header"
    } else if at(257, b"ustar") {
        "a tar archive (a .sigmf archive holds a .sigmf-meta and its .sigmf-data): read as \
         {given}, its tar headers and meta would be taken as samples; name it .sigmf and it is \
         read from its meta"
    } else {
        return None;
    };
    Some(format!(
        "not raw samples but {}",
        what.replace("{given}", given.name())
    ))
}

impl IqReader {
    /// Open a recording (channel 0); the format comes from the extension unless given.
    pub fn open(path: &Path, format: Option<IqFormat>) -> Result<Self> {
        Self::open_channel(path, format, 0)
    }

    /// Open one channel of a recording (0-based; only SigMF holds more than one).
    pub fn open_channel(path: &Path, format: Option<IqFormat>, channel: u32) -> Result<Self> {
        if let Some(r) = Self::open_gnuradio(path, format)? {
            let mut r = r;
            r.check_channel(channel)?;
            return Ok(r);
        }
        if let Some(r) = Self::open_sdriq(path, format)? {
            let mut r = r;
            r.check_channel(channel)?;
            return Ok(r);
        }
        // A gqrx recording's name says its layout (cf32), centre and rate.
        let gqrx = gqrx_name(path)?;
        let format = match format {
            Some(f) => f,
            None if gqrx.is_some() => IqFormat::Cf32,
            None => IqFormat::from_path(path)?,
        };
        if let Some(datatype) = format.datatype() {
            let (mut f, len) = open_regular(path)?;
            if let Some(why) = container_read_as_raw(&mut f, format) {
                return Err(bad(path, why));
            }
            let data = DataRange {
                path: path.to_path_buf(),
                offset: 0,
                len,
            };
            let mut r = Self::open_raw(data, datatype, 1, 0, format)?;
            r.check_channel(channel)?;
            // Only for the layout gqrx writes: another --format is a file the name
            // no longer describes.
            if let (Some((center, rate)), IqFormat::Cf32) = (gqrx, format) {
                r.info.center_hz = Some(center);
                r.info.sample_rate_hz = Some(rate);
                r.info.from_gqrx_name = true;
            }
            return Ok(r);
        }
        let mut r = match format {
            IqFormat::Wav => Self::open_wav(path)?,
            _ => Self::open_sigmf(path, channel)?,
        };
        r.check_channel(channel)?;
        Ok(r)
    }

    /// A GNU Radio File Meta Sink recording: the file begins with a header (headers
    /// attached, one before each segment), or `FILE.hdr` beside it holds them
    /// (detached). Its layout, rate and `rx_freq` are the file's own; a `--format` of
    /// another layout is refused naming both. `None` for any other file (and for a
    /// WAV or SigMF name).
    fn open_gnuradio(path: &Path, format: Option<IqFormat>) -> Result<Option<Self>> {
        let named = format.map_or_else(|| IqFormat::from_path(path).ok(), Some);
        if matches!(named, Some(IqFormat::Wav | IqFormat::Sigmf)) {
            return Ok(None);
        }
        let hdr = path.file_name().map(|n| {
            let mut n = n.to_os_string();
            n.push(".hdr");
            path.with_file_name(n)
        });
        // A `.hdr` of another kind (an ENVI header, a text note) is no concern here.
        let hdr = hdr.filter(|h| {
            h.is_file()
                && crate::open_regular(h).is_ok_and(|mut f| gnuradio::starts_with_header(&mut f))
        });
        let attached = hdr.is_none() && {
            let (mut f, _) = open_regular(path)?;
            gnuradio::starts_with_header(&mut f)
        };
        if hdr.is_none() && !attached {
            return Ok(None);
        }
        let says = gnuradio::read(path, hdr.as_deref())?;
        let Some(own) = IqFormat::raw_of(says.datatype) else {
            return Err(bad(&says.headers_path, "no raw format for its layout"));
        };
        if let Some(given) = format.filter(|f| f.datatype() != Some(says.datatype)) {
            return Err(bad(
                &says.headers_path,
                format!(
                    "its GNU Radio File Meta Sink header says the samples are {} ({}); the \
                     format given, {}, is not: leave --format out",
                    own.name(),
                    says.datatype.sigmf_name(),
                    given.name()
                ),
            ));
        }
        let why = match says.rate {
            r if !r.is_finite() || r <= 0.0 => Some(format!("{r} S/s is not a finite rate > 0")),
            r => rxnode_interlock::Quantity::SampleRate.implausible(r),
        };
        if let Some(why) = why {
            return Err(bad(
                &says.headers_path,
                format!("its header's rx_rate: {why}"),
            ));
        }
        if let Some(f) = says.center {
            let why = match f {
                f if !f.is_finite() || f <= 0.0 => {
                    Some(format!("{f} Hz is not a finite frequency > 0"))
                }
                f => rxnode_interlock::Quantity::Frequency.implausible(f),
            };
            if let Some(why) = why {
                return Err(bad(
                    &says.headers_path,
                    format!("its header's rx_freq: {why}"),
                ));
            }
        }
        let frame = says.datatype.sample_bytes() as u64;
        if let Some(&(at, n)) = says.ranges.iter().find(|(_, n)| n % frame != 0) {
            return Err(bad(
                &says.headers_path,
                format!(
                    "the segment of {n} bytes at byte {at} is not a whole number of {} samples \
                     ({frame} bytes each)",
                    says.datatype.sigmf_name()
                ),
            ));
        }
        let data = gnuradio::data_range(path, says.total);
        let mut r = Self::open_ranges(data, says.ranges, None, says.datatype, 1, 0, own)?;
        r.info.meta_path = Some(says.headers_path);
        r.info.sample_rate_hz = Some(says.rate);
        r.info.center_hz = says.center;
        r.info.gnuradio_header = true;
        Ok(Some(r))
    }

    /// An SDRangel `.sdriq` recording, read from its header's rate, centre and sample
    /// size: a file named `.sdriq` (a header that is not one is refused naming the
    /// field), or any other file but a WAV or SigMF that starts with an `.sdriq` header,
    /// told by its CRC-32. A `--format` other than the header's layout is refused (its
    /// header would be read as samples). `None` for any other file.
    fn open_sdriq(path: &Path, format: Option<IqFormat>) -> Result<Option<Self>> {
        let named = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sdriq"));
        let h = if named {
            let (mut f, len) = open_regular(path)?;
            if len < sdriq::HEADER_BYTES {
                return Err(bad(
                    path,
                    format!(
                        "{len} bytes, shorter than the 32-byte header of an SDRangel .sdriq recording its name says it is"
                    ),
                ));
            }
            let mut b = [0u8; 32];
            f.read_exact(&mut b).map_err(io(path))?;
            sdriq::parse_checked(&b).map_err(|why| {
                bad(
                    path,
                    format!("not an SDRangel .sdriq recording as its name says: {why}"),
                )
            })?
        } else {
            if matches!(
                format.or_else(|| IqFormat::from_path(path).ok()),
                Some(IqFormat::Wav | IqFormat::Sigmf)
            ) {
                return Ok(None);
            }
            let Ok((mut f, _)) = open_regular(path) else {
                return Ok(None);
            };
            let Some(h) = sdriq::header_of(&mut f) else {
                return Ok(None);
            };
            h
        };
        if let Some(why) = h.implausible() {
            return Err(bad(
                path,
                format!("an SDRangel .sdriq recording whose header's {why}"),
            ));
        }
        let datatype = h.datatype();
        if let Some(given) = format.filter(|f| f.datatype() != Some(datatype)) {
            return Err(bad(
                path,
                format!(
                    "an SDRangel .sdriq recording{}",
                    sdriq::wrong_format(&h, given.name())
                ),
            ));
        }
        let (_, len) = open_regular(path)?;
        let samples = len.saturating_sub(sdriq::HEADER_BYTES);
        if samples == 0 {
            return Err(bad(
                path,
                "an SDRangel .sdriq recording holding its 32-byte header and no samples",
            ));
        }
        let data = DataRange {
            path: path.to_path_buf(),
            offset: sdriq::HEADER_BYTES,
            len: samples,
        };
        let ranges = vec![(sdriq::HEADER_BYTES, samples)];
        let mut r = Self::open_ranges(data, ranges, None, datatype, 1, 0, IqFormat::Sdriq)?;
        r.info.sample_rate_hz = Some(f64::from(h.rate));
        r.info.center_hz = Some(h.center_hz as f64);
        Ok(Some(r))
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
        Self::open_ranges(data, whole, None, datatype, channels, channel, format)
    }

    /// [`IqReader::open_raw`] over the byte ranges of `data.path` that hold samples
    /// (`data.len`: their total), checking the dataset's hash when given.
    #[allow(clippy::too_many_arguments)]
    fn open_ranges(
        data: DataRange,
        ranges: Vec<(u64, u64)>,
        hash: Option<Box<DatasetHash>>,
        datatype: Datatype,
        channels: u32,
        channel: u32,
        format: IqFormat,
    ) -> Result<Self> {
        let path = &data.path;
        let (file, _) = open_regular(path)?;
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
                        IqFormat::Sigmf | IqFormat::Sdriq => datatype.sigmf_name(),
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
        let data_chunks = Chunks::new(file, ranges, hash).map_err(io(path))?;
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
                from_gqrx_name: false,
                center_from_name: None,
                gnuradio_header: false,
                bandwidth_hz: None,
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
            let (_, len) = open_regular(&data_path)?;
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
        let hash = m.sha512.clone().map(|want| {
            Box::new(DatasetHash {
                meta_path: meta_path.clone(),
                want,
                hasher: Sha512::new(),
                next: data.offset,
                end: data.offset + data.len,
            })
        });
        let data = DataRange { len, ..data };
        let mut r = Self::open_ranges(
            data,
            ranges,
            hash,
            m.datatype,
            m.channels,
            channel,
            IqFormat::Sigmf,
        )?;
        r.info.meta_path = Some(meta_path);
        r.info.sample_rate_hz = m.rate;
        r.info.center_hz = m.center;
        r.info.clock = m.clock;
        r.info.bandwidth_hz = m.bandwidth_hz;
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
                if start + want as u64 == self.info.samples {
                    data.check_hash(path)?;
                }
            }
        }
        self.done += want as u64;
        Ok(want)
    }
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
