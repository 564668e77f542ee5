//! Where a recording goes and in which container: a new file (never one that
//! exists), standard output (`-`) or a FIFO for a stream; raw samples or WAV;
//! which file formats each sample type may be recorded in.
use super::super::IqFormat;
use super::{RecordFormat, RecordingMeta};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

pub(super) enum Sink {
    Raw(BufWriter<File>),
    Wav(hound::WavWriter<WavFile>),
}

/// A WAV recording's file (opened write-only): buffered writes, and the
/// header it was started with read back from memory — hound reads it to
/// append samples after a header that holds an `auxi` chunk before the data.
pub(super) struct WavFile {
    file: BufWriter<File>,
    header: Option<std::io::Cursor<Vec<u8>>>,
}

impl Read for WavFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.header {
            Some(h) => h.read(buf),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a recording is not read back",
            )),
        }
    }
}

impl Write for WavFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.header = None;
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for WavFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match &mut self.header {
            // While the header is read back, positions are the header's (the
            // file holds the same bytes).
            Some(h) => {
                let at = h.seek(pos)?;
                self.file.seek(SeekFrom::Start(at))
            }
            None => self.file.seek(pos),
        }
    }
}

/// Bytes of the `auxi` chunk's body as HDSDR writes it: two SYSTEMTIMEs
/// (start, stop), CenterFreq, ADFrequency, IFFrequency, Bandwidth, IQOffset,
/// four unused words, and a 96-byte next-file name.
pub(super) const AUXI_LEN: usize = 164;

/// The `auxi` chunk (SpectraVue's layout, which SDR#, HDSDR and SDRuno write
/// and read): the start time (UTC) as a SYSTEMTIME, the stop time left 0, the
/// centre as a whole number of Hz (0, "not recorded", when unknown or past
/// 4 294 967 295 Hz) and the sample rate.
pub(super) fn auxi_chunk(meta: &RecordingMeta, rate: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + AUXI_LEN);
    b.extend_from_slice(b"auxi");
    b.extend_from_slice(&(AUXI_LEN as u32).to_le_bytes());
    let start = meta
        .datetime
        .as_deref()
        .and_then(|d| {
            time::OffsetDateTime::parse(d, &time::format_description::well_known::Rfc3339).ok()
        })
        .unwrap_or_else(time::OffsetDateTime::now_utc)
        .to_offset(time::UtcOffset::UTC);
    let words = [
        u16::try_from(start.year()).unwrap_or(0),
        u16::from(u8::from(start.month())),
        u16::from(start.weekday().number_days_from_sunday()),
        u16::from(start.day()),
        u16::from(start.hour()),
        u16::from(start.minute()),
        u16::from(start.second()),
        start.millisecond(),
    ];
    for w in words {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b.extend_from_slice(&[0u8; 16]);
    let center = meta
        .center_hz
        .map(f64::round)
        .filter(|c| c.is_finite() && *c >= 1.0 && *c <= f64::from(u32::MAX))
        .map_or(0, |c| c as u32);
    b.extend_from_slice(&center.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes());
    b.resize(8 + AUXI_LEN, 0);
    b
}

/// A new WAV file's header as hound writes it, with the `auxi` chunk between
/// `fmt ` and `data`.
fn wav_header_with_auxi(path: &Path, spec: hound::WavSpec, auxi: &[u8]) -> Result<Vec<u8>> {
    let mut c = std::io::Cursor::new(Vec::new());
    hound::WavWriter::new(&mut c, spec)
        .and_then(hound::WavWriter::finalize)
        .map_err(|e| wav_err(path, e))?;
    let mut head = c.into_inner();
    let data_at = head.len().saturating_sub(8);
    if head.get(data_at..data_at + 4) != Some(b"data".as_slice()) {
        return Err(Error::BadIqFile {
            path: path.to_path_buf(),
            detail: "the WAV header does not end with its data chunk".into(),
        });
    }
    head.splice(data_at..data_at, auxi.iter().copied());
    let riff = u32::try_from(head.len() - 8).unwrap_or(u32::MAX);
    head[4..8].copy_from_slice(&riff.to_le_bytes());
    Ok(head)
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The `--record` target that means standard output.
pub const STDOUT_TARGET: &str = "-";

/// Whether a recording target is a stream another program reads as it is written
/// (standard output as `-`, or an existing FIFO) rather than a file that stays.
pub fn is_stream_target(path: &Path) -> bool {
    path.as_os_str() == STDOUT_TARGET || is_fifo(path)
}

/// Standard output as a file of its own (a duplicate of its descriptor), so the
/// recording is written past the text buffer in large blocks.
#[cfg(unix)]
fn stdout_file() -> std::io::Result<File> {
    use std::os::fd::AsFd;
    Ok(File::from(std::io::stdout().as_fd().try_clone_to_owned()?))
}

#[cfg(windows)]
fn stdout_file() -> std::io::Result<File> {
    use std::os::windows::io::AsHandle;
    Ok(File::from(
        std::io::stdout().as_handle().try_clone_to_owned()?,
    ))
}

/// Create `path` for writing; an existing file is an error (`AlreadyExists`), never
/// truncated: a recording is evidence, and a second writer must not replace it. A FIFO
/// that already exists is opened as it is (it stores nothing: another program reads the
/// recording as it is written) once a program has it open for reading — never waited
/// on here: without a reader it is an error saying so (`rxnode capture` waits for the
/// reader before it opens the radio); `-` is standard output.
pub(super) fn create_new(path: &Path) -> Result<File> {
    if path.as_os_str() == STDOUT_TARGET {
        return stdout_file().map_err(io(path));
    }
    match crate::open_regular_write(path, crate::WriteMode::CreateNew, false) {
        Ok(f) => Ok(f),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && is_fifo(path) => {
            match crate::open_fifo_write(path).map_err(io(path))? {
                Some(f) => Ok(f),
                None => Err(io(path)(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "no program has this FIFO open for reading (start the reader first)",
                ))),
            }
        }
        Err(e) => Err(io(path)(e)),
    }
}

#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

/// The file formats each sample type may be recorded in, and a usable rate.
pub(super) fn check_record_format(
    format: IqFormat,
    samples_as: RecordFormat,
    meta: &RecordingMeta,
) -> Result<()> {
    let fits = match samples_as {
        RecordFormat::Cf32 => {
            matches!(format, IqFormat::Cf32 | IqFormat::Wav | IqFormat::Sigmf)
        }
        RecordFormat::Ci16 => matches!(format, IqFormat::Cs16 | IqFormat::Sigmf),
        RecordFormat::Ci8 => matches!(format, IqFormat::Cs8 | IqFormat::Sigmf),
    };
    if !fits {
        return Err(Error::UnsupportedFormat(format!(
            "recording {} samples as {} (cf32: .cf32, .wav or SigMF; ci16: .cs16 or SigMF; \
             ci8: .cs8 or SigMF)",
            samples_as.name(),
            format.name()
        )));
    }
    if !(meta.sample_rate_hz.is_finite() && meta.sample_rate_hz > 0.0) {
        return Err(Error::InvalidSetting {
            field: "sample_rate_hz",
            detail: format!("{} is not > 0", meta.sample_rate_hz),
        });
    }
    Ok(())
}

/// Create the data file (never over an existing one) and its writer.
pub(super) fn open_sink(
    path: &Path,
    format: IqFormat,
    samples_as: RecordFormat,
    meta: &RecordingMeta,
) -> Result<Sink> {
    let sink = match format {
        IqFormat::Cf32 | IqFormat::Sigmf => {
            Sink::Raw(BufWriter::with_capacity(1 << 20, create_new(path)?))
        }
        IqFormat::Cs16 if samples_as == RecordFormat::Ci16 => {
            Sink::Raw(BufWriter::with_capacity(1 << 20, create_new(path)?))
        }
        IqFormat::Cs8 if samples_as == RecordFormat::Ci8 => {
            Sink::Raw(BufWriter::with_capacity(1 << 20, create_new(path)?))
        }
        IqFormat::Wav => {
            let rate = meta.sample_rate_hz.round();
            if rate > f64::from(u32::MAX) || (rate - meta.sample_rate_hz).abs() > 1e-6 {
                return Err(Error::InvalidSetting {
                    field: "sample_rate_hz",
                    detail: format!(
                        "{} Hz cannot be stored in a WAV header (whole Hz ≤ 4294967295)",
                        meta.sample_rate_hz
                    ),
                });
            }
            let spec = hound::WavSpec {
                channels: 2,
                sample_rate: rate as u32,
                bits_per_sample: 32,
                sample_format: hound::SampleFormat::Float,
            };
            let file = create_new(path)?;
            // A stream (standard output, a FIFO) cannot be read back: hound's
            // own header, without the auxi chunk.
            let regular = file.metadata().is_ok_and(|m| m.is_file());
            let mut f = WavFile {
                file: BufWriter::with_capacity(1 << 20, file),
                header: None,
            };
            if regular {
                let head = wav_header_with_auxi(path, spec, &auxi_chunk(meta, rate as u32))?;
                f.write_all(&head).map_err(io(path))?;
                f.header = Some(std::io::Cursor::new(head));
                Sink::Wav(hound::WavWriter::new_append(f).map_err(|e| wav_err(path, e))?)
            } else {
                Sink::Wav(hound::WavWriter::new(f, spec).map_err(|e| wav_err(path, e))?)
            }
        }
        _ => {
            return Err(Error::UnsupportedFormat(format!(
                "recording as {} (record cf32, wav or sigmf)",
                format.name()
            )))
        }
    };
    Ok(sink)
}

pub(super) fn wav_err(path: &Path, e: hound::Error) -> Error {
    match e {
        hound::Error::IoError(source) => Error::Io {
            path: path.to_path_buf(),
            source,
        },
        other => Error::BadIqFile {
            path: path.to_path_buf(),
            detail: other.to_string(),
        },
    }
}

/// Errors are not `Clone` (io::Error); keep the message for repeated reports.
pub(super) fn clone_err(e: &Error) -> Error {
    match e {
        Error::DiskBudget { budget, written } => Error::DiskBudget {
            budget: *budget,
            written: *written,
        },
        Error::Io { path, source } => Error::Io {
            path: path.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
        other => Error::Source(other.to_string()),
    }
}
