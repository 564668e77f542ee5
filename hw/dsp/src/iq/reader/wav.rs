//! WAV recordings, RIFF and RF64: the `fmt ` chunk read once for both, the samples
//! read in place through the one decoder every raw layout uses, the centre from an
//! `auxi` chunk or else the name SDR# or HDSDR gives the file.
use super::{bad, io, open_regular, DataRange, IqReader};
use crate::error::Result;
use crate::iq::{Datatype, IqFormat};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Why a WAV file's header disagrees with its size, when it does: a recorder
/// stopped before it closed the file leaves the data chunk's length 0 (or the
/// placeholder 0xFFFFFFFF of a writer that streams), with the samples after it.
/// `None` when the chunks cannot be walked or the length is no placeholder.
fn unfinalised_wav(path: &Path) -> Option<String> {
    let mut f = crate::open_regular(path).ok()?;
    let size = f.metadata().ok()?.len();
    let mut head = Vec::new();
    Read::by_ref(&mut f)
        .take(1 << 16)
        .read_to_end(&mut head)
        .ok()?;
    if head.get(..4)? != b"RIFF" || head.get(8..12)? != b"WAVE" {
        return None;
    }
    let mut at = 12usize;
    while at + 8 <= head.len() {
        let id = &head[at..at + 4];
        let declared = u64::from(u32::from_le_bytes(head[at + 4..at + 8].try_into().ok()?));
        if id == b"data" {
            let present = size.saturating_sub(at as u64 + 8);
            // Only the placeholders: a copy cut short fails where its samples end.
            if present == 0 || (declared != 0 && declared != u64::from(u32::MAX)) {
                return None;
            }
            return Some(format!(
                "; its header says the data chunk holds {declared} bytes, but {present} bytes \
                 follow it: the header was not finalised (the recorder was stopped before it \
                 closed the file); rewrite the header from the file's size, e.g. `sox \
                 --ignore-length {} fixed.wav`, and analyse that",
                path.display()
            ));
        }
        // Chunks are padded to an even length.
        let next = (at as u64 + 8).checked_add(declared + (declared & 1))?;
        at = usize::try_from(next).ok()?;
    }
    None
}

/// The most of an `auxi` chunk read: SDR Console's XML is a few KiB.
const AUXI_MAX: u64 = 1 << 20;

/// The centre frequency a WAV's `auxi` chunk records, when it has one. Two tools'
/// chunks share the name: the binary one SpectraVue, HDSDR, SDR# and SDRuno write
/// (two SYSTEMTIMEs, then `CenterFreq`, a 32-bit Hz count), and SDR Console's, an
/// XML text (UTF-16LE or UTF-8) whose `RadioCenterFreq` attribute is the centre.
/// Each is read as what it is; a chunk that is neither (SYSTEMTIMEs no clock
/// shows) is refused naming the field, never read as a number. `None` without the
/// chunk, without the attribute or with a 0 (not recorded); an implausible value
/// is an error naming the chunk (docs/operator.md#analysing-a-recording).
fn auxi_center(path: &Path) -> Result<Option<f64>> {
    let (mut f, size) = open_regular(path)?;
    let mut head = [0u8; 12];
    if f.read_exact(&mut head).is_err()
        || !matches!(&head[..4], b"RIFF" | b"RF64")
        || &head[8..12] != b"WAVE"
    {
        return Ok(None);
    }
    let mut at = 12u64;
    // A few chunks: fmt, auxi, data, maybe a list; never more than 64 looked at.
    for _ in 0..64 {
        let mut h = [0u8; 8];
        if at + 8 > size || f.seek(SeekFrom::Start(at)).is_err() || f.read_exact(&mut h).is_err() {
            return Ok(None);
        }
        let len = u64::from(u32::from_le_bytes([h[4], h[5], h[6], h[7]]));
        if &h[..4] == b"auxi" {
            let mut body = Vec::new();
            Read::by_ref(&mut f)
                .take(len.min(AUXI_MAX))
                .read_to_end(&mut body)
                .map_err(io(path))?;
            return auxi_body_center(path, &body, len);
        }
        at += 8 + len + (len & 1);
    }
    Ok(None)
}

/// The centre the `auxi` chunk's `body` (of `len` bytes declared) records: SDR
/// Console's XML or the binary SYSTEMTIME layout, told apart by their first bytes.
fn auxi_body_center(path: &Path, body: &[u8], len: u64) -> Result<Option<f64>> {
    if let Some(text) = auxi_xml(path, body)? {
        return xml_center(path, &text);
    }
    if body.len() < 36 {
        return Err(bad(
            path,
            format!("its auxi chunk is {len} bytes, too short to hold CenterFreq (36)"),
        ));
    }
    let word = |i: usize| u16::from_le_bytes([body[i], body[i + 1]]);
    // SYSTEMTIME: year, month, day of week, day, hour, minute, second, ms; all 0
    // when a writer records no time.
    let limits: [(&str, u16, u16); 8] = [
        ("wYear", 1601, 30827),
        ("wMonth", 1, 12),
        ("wDayOfWeek", 0, 6),
        ("wDay", 1, 31),
        ("wHour", 0, 23),
        ("wMinute", 0, 59),
        ("wSecond", 0, 59),
        ("wMilliseconds", 0, 999),
    ];
    for (which, base) in [("StartTime", 0usize), ("StopTime", 16)] {
        if (0..8).all(|k| word(base + 2 * k) == 0) {
            continue;
        }
        for (k, (field, lo, hi)) in limits.iter().enumerate() {
            let v = word(base + 2 * k);
            if v < *lo || v > *hi {
                return Err(bad(
                    path,
                    format!(
                        "its auxi chunk's {which}.{field} (byte {} of the chunk) is {v}, \
                         not {lo}..{hi}: the chunk is not the SYSTEMTIME layout SDR#, HDSDR \
                         and SDRuno write, nor SDR Console's XML, so its CenterFreq cannot be \
                         trusted; analyse a copy without the chunk, giving the centre with \
                         --center-hz",
                        base + 2 * k
                    ),
                ));
            }
        }
    }
    let hz = f64::from(u32::from_le_bytes([body[32], body[33], body[34], body[35]]));
    if hz == 0.0 {
        return Ok(None);
    }
    if let Some(why) = rxnode_interlock::Quantity::Frequency.implausible(hz) {
        return Err(bad(path, format!("the auxi chunk's CenterFreq: {why}")));
    }
    Ok(Some(hz))
}

/// The text of an `auxi` chunk that holds XML (it opens with `<`, in UTF-16LE or
/// UTF-8, after an optional byte order mark), its trailing NULs dropped; `None`
/// for a binary chunk. XML in neither encoding is refused naming the chunk.
fn auxi_xml(path: &Path, body: &[u8]) -> Result<Option<String>> {
    let utf16 = |b: &[u8]| -> Option<String> {
        let units: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16(&units).ok()
    };
    let text = if let Some(rest) = body.strip_prefix(&[0xFF, 0xFE]) {
        utf16(rest)
    } else if body.starts_with(b"<\0") {
        utf16(body)
    } else if let Some(rest) = body.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        String::from_utf8(rest.to_vec()).ok()
    } else if body.first() == Some(&b'<') {
        String::from_utf8(body.to_vec()).ok()
    } else {
        return Ok(None);
    };
    match text {
        Some(t) => Ok(Some(t.trim_end_matches('\0').to_owned())),
        None => Err(bad(
            path,
            "its auxi chunk holds XML (as SDR Console writes it) that is neither UTF-16LE nor \
             UTF-8 text, so its RadioCenterFreq cannot be read",
        )),
    }
}

/// The centre SDR Console's XML `auxi` text states in its `RadioCenterFreq`
/// attribute, in Hz (`None` without one, or with 0: not recorded). A value that is
/// no decimal number, an implausible one, or the attribute given twice (which to
/// believe?) is refused naming it.
fn xml_center(path: &Path, text: &str) -> Result<Option<f64>> {
    const KEY: &str = "RadioCenterFreq";
    let mut found: Vec<&str> = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(KEY) {
        let start = from + i;
        from = start + KEY.len();
        // The whole attribute name: not the tail or head of a longer one.
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '-') {
            continue;
        }
        let rest = text[from..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            return Err(bad(
                path,
                "its auxi chunk's XML (SDR Console) gives RadioCenterFreq no quoted value",
            ));
        };
        let Some(end) = rest[1..].find(quote) else {
            return Err(bad(
                path,
                "its auxi chunk's XML (SDR Console) leaves RadioCenterFreq's value unclosed",
            ));
        };
        found.push(&rest[1..1 + end]);
    }
    let value = match found[..] {
        [] => return Ok(None),
        [v] => v,
        _ => {
            return Err(bad(
                path,
                format!(
                    "its auxi chunk's XML (SDR Console) states RadioCenterFreq {} times ({}): \
                     rxnode does not pick one",
                    found.len(),
                    found
                        .iter()
                        .map(|v| format!("\"{v}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    };
    let decimal = {
        let (int, frac) = value.split_once('.').unwrap_or((value, "0"));
        !int.is_empty()
            && !frac.is_empty()
            && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    };
    let hz = if decimal {
        value.parse::<f64>().ok()
    } else {
        None
    };
    let Some(hz) = hz.filter(|v| v.is_finite()) else {
        return Err(bad(
            path,
            format!(
                "its auxi chunk's XML (SDR Console) RadioCenterFreq is \"{value}\", not a \
                 frequency in Hz"
            ),
        ));
    };
    if hz == 0.0 {
        return Ok(None);
    }
    if let Some(why) = rxnode_interlock::Quantity::Frequency.implausible(hz) {
        return Err(bad(
            path,
            format!("the auxi chunk's XML (SDR Console) RadioCenterFreq: {why}"),
        ));
    }
    Ok(Some(hz))
}

/// A name `WAVE_FORMAT_*` gives a `wFormatTag`, for messages.
fn wav_tag_name(tag: u16) -> &'static str {
    match tag {
        1 => "PCM",
        2 => "Microsoft ADPCM",
        3 => "IEEE float",
        6 => "A-law",
        7 => "µ-law",
        0x11 => "IMA ADPCM",
        0x55 => "MPEG layer 3",
        0xFFFE => "extensible",
        _ => "unknown",
    }
}

/// The tail every `KSDATAFORMAT_SUBTYPE_*` GUID shares after its 4-byte format tag
/// (`xxxxxxxx-0000-0010-8000-00aa00389b71`, little-endian as a WAV stores it).
const KSDATAFORMAT_TAIL: [u8; 12] = [0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71];

/// How a WAV stores its samples and at what rate, from its `fmt ` chunk: the one
/// reading of that chunk, for a RIFF and an RF64 WAV alike. Two channels (I left, Q
/// right) of PCM 8 (unsigned, as every 8-bit WAV), 16, 24 or 32 bits, or IEEE float
/// 32 or 64 bits, as `WAVE_FORMAT_PCM`/`WAVE_FORMAT_IEEE_FLOAT` or
/// `WAVE_FORMAT_EXTENSIBLE` with either sub-format (samples in containers wider than
/// their valid bits are left-justified, so they scale by the container). Anything
/// else is refused naming the field and its value.
fn wav_fmt(path: &Path, fmt: &[u8]) -> Result<(Datatype, f64)> {
    if fmt.len() < 16 {
        return Err(bad(
            path,
            format!(
                "its fmt chunk is {} bytes, too short for a WAVEFORMAT (16)",
                fmt.len()
            ),
        ));
    }
    let u16_at = |i: usize| u16::from_le_bytes([fmt[i], fmt[i + 1]]);
    let (tag, channels, block_align, bits) = (u16_at(0), u16_at(2), u16_at(12), u16_at(14));
    let rate = f64::from(u32::from_le_bytes([fmt[4], fmt[5], fmt[6], fmt[7]]));
    let (format, valid, what) = if tag == 0xFFFE {
        if fmt.len() < 40 {
            return Err(bad(
                path,
                format!(
                    "its fmt chunk's wFormatTag is 0xFFFE (extensible), which needs a 40-byte \
                     chunk; it has {} bytes",
                    fmt.len()
                ),
            ));
        }
        if fmt[26..28] != [0, 0] || fmt[28..40] != KSDATAFORMAT_TAIL {
            return Err(bad(
                path,
                format!(
                    "its fmt chunk's SubFormat {} is no KSDATAFORMAT_SUBTYPE (PCM or IEEE \
                     float)",
                    hex::encode(&fmt[24..40])
                ),
            ));
        }
        (u16_at(24), u16_at(18), "SubFormat")
    } else {
        (tag, bits, "wFormatTag")
    };
    if channels != 2 {
        return Err(bad(
            path,
            format!(
                "WAV has {channels} channel(s) (its fmt chunk's nChannels); IQ needs 2 (I left, \
                 Q right)"
            ),
        ));
    }
    if valid > bits {
        return Err(bad(
            path,
            format!(
                "its fmt chunk's wValidBitsPerSample {valid} exceeds its wBitsPerSample {bits}"
            ),
        ));
    }
    let datatype = match (format, bits) {
        (1, 8) => Datatype::Cu8,
        (1, 16) => Datatype::Ci16Le,
        (1, 24) => Datatype::Ci24Le,
        (1, 32) => Datatype::Ci32Le,
        (3, 32) => Datatype::Cf32Le,
        (3, 64) => Datatype::Cf64Le,
        (1 | 3, b) => {
            return Err(bad(
                path,
                format!(
                    "its fmt chunk's wBitsPerSample {b} with {what} {format} ({}) is not read \
                     (PCM: 8, 16, 24 or 32; IEEE float: 32 or 64)",
                    wav_tag_name(format)
                ),
            ))
        }
        (t, _) => {
            return Err(bad(
                path,
                format!(
                    "its fmt chunk's {what} {t} ({}) is not a sample format read (1 PCM, 3 IEEE \
                     float, or 0xFFFE extensible with either)",
                    wav_tag_name(t)
                ),
            ))
        }
    };
    let frame = datatype.sample_bytes();
    if usize::from(block_align) != frame {
        return Err(bad(
            path,
            format!(
                "its fmt chunk's nBlockAlign {block_align} is not 2 channels of {bits} bits \
                 ({frame} bytes)"
            ),
        ));
    }
    let why = match rate {
        0.0 => Some("0 S/s is not a rate > 0".to_owned()),
        _ => rxnode_interlock::Quantity::SampleRate.implausible(rate),
    };
    if let Some(why) = why {
        return Err(bad(
            path,
            format!("the WAV header's sample rate (fmt chunk): {why}"),
        ));
    }
    Ok((datatype, rate))
}

/// A centre frequency a file's name states.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NamedCenter {
    /// The centre, Hz, as written.
    pub hz: f64,
    /// One unit of the name's last digit, Hz (`7100kHz`: 1000).
    pub resolution_hz: f64,
    /// The tool whose pattern the name follows (`SDR#`, `HDSDR`).
    pub tool: &'static str,
}

/// What the name of a baseband WAV says of its centre, in the two patterns its
/// writers document: SDR#'s `SDRSharp_YYYYMMDD_HHMMSSZ_FREQ_IQ.wav` and HDSDR's
/// `HDSDR_YYYYMMDD_HHMMSSZ_FREQ_RF.wav` (the `Z` absent for local time), `FREQ` a
/// number in `Hz`, `kHz`, `MHz` or `GHz` (`100100000Hz`, `7100kHz`, `14.074MHz`).
/// Their audio recordings (`_AF.wav`) name the tuned frequency, not a centre, and
/// are no match. `None` for any other name; a name of the pattern with a 0 or an
/// implausible centre is an error naming it (docs/operator.md#analysing-a-recording).
pub(crate) fn wav_name_center(path: &Path) -> Result<Option<NamedCenter>> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let Some(stem) = name
        .strip_suffix(".wav")
        .or_else(|| name.strip_suffix(".WAV"))
    else {
        return Ok(None);
    };
    let parts: Vec<&str> = stem.split('_').collect();
    let [tool, date, time, freq, kind] = parts[..] else {
        return Ok(None);
    };
    let tool = match (tool, kind) {
        ("SDRSharp", "IQ") => "SDR#",
        ("HDSDR", "RF") => "HDSDR",
        _ => return Ok(None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let time = time.strip_suffix('Z').unwrap_or(time);
    if !(date.len() == 8 && digits(date) && time.len() == 6 && digits(time)) {
        return Ok(None);
    }
    let Some((number, exp)) = [("GHz", 9i32), ("MHz", 6), ("kHz", 3), ("Hz", 0)]
        .iter()
        .find_map(|(unit, e)| freq.strip_suffix(unit).map(|n| (n, *e)))
    else {
        return Ok(None);
    };
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) if digits(f) => (i, f),
        Some(_) => return Ok(None),
        None => (number, ""),
    };
    if !digits(int) {
        return Ok(None);
    }
    let scale = exp - frac.len() as i32;
    let resolution_hz = 10f64.powi(scale);
    let hz = format!("{int}{frac}")
        .parse::<u64>()
        .map_or(f64::INFINITY, |m| m as f64 * resolution_hz);
    let why = match hz {
        v if !v.is_finite() || v <= 0.0 => Some(format!("{freq} is not a frequency > 0")),
        v => rxnode_interlock::Quantity::Frequency.implausible(v),
    };
    if let Some(why) = why {
        return Err(bad(
            path,
            format!("the centre in its {tool} file name ({name}): {why}"),
        ));
    }
    Ok(Some(NamedCenter {
        hz,
        resolution_hz,
        tool,
    }))
}

impl IqReader {
    /// A WAV, RIFF or RF64 (EBU Tech 3306: a WAV over 4 GiB, as HDSDR and SDRuno
    /// write it, its `ds64` chunk holding the data chunk's 64-bit size): its chunks
    /// walked as RIFF lays them out (a pad byte after each of odd length), its layout
    /// and rate from `fmt ` ([`wav_fmt`]), its samples read in place through the one
    /// decoder every raw layout uses, its centre from an `auxi` chunk or else its
    /// name ([`wav_name_center`]).
    pub(super) fn open_wav(path: &Path) -> Result<Self> {
        let (mut f, size) = open_regular(path)?;
        if size == 0 {
            return Err(bad(path, "empty file (0 bytes)"));
        }
        let mut head = [0u8; 12];
        let rf64 = match f.read_exact(&mut head) {
            Ok(()) if &head[..4] == b"RF64" && &head[8..12] == b"WAVE" => true,
            Ok(()) if &head[..4] == b"RIFF" && &head[8..12] == b"WAVE" => false,
            Ok(()) if &head[..4] == b"RF64" => {
                return Err(bad(path, "an RF64 file that is not a WAVE"))
            }
            _ => {
                return Err(bad(
                    path,
                    "not a readable WAV file: it does not begin with RIFF (or RF64) and WAVE",
                ))
            }
        };
        let (mut ds64_data, mut fmt, mut data_at) = (None, None, None);
        let mut at = 12u64;
        for _ in 0..64 {
            let mut h = [0u8; 8];
            if at + 8 > size
                || f.seek(SeekFrom::Start(at)).is_err()
                || f.read_exact(&mut h).is_err()
            {
                break;
            }
            let len = u64::from(u32::from_le_bytes([h[4], h[5], h[6], h[7]]));
            let body = |f: &mut File, n: usize| -> Result<Vec<u8>> {
                let mut b = vec![0u8; n];
                f.read_exact(&mut b).map_err(io(path))?;
                Ok(b)
            };
            match &h[..4] {
                b"ds64" if rf64 && len >= 16 => {
                    let b = body(&mut f, 16)?;
                    ds64_data = Some(u64::from_le_bytes(b[8..16].try_into().unwrap_or_default()));
                }
                b"fmt " => fmt = Some(body(&mut f, len.min(64) as usize)?),
                b"data" => {
                    let n = match (rf64, len, ds64_data) {
                        (true, 0xFFFF_FFFF, Some(n)) => (n, "ds64 chunk"),
                        (true, 0xFFFF_FFFF, None) => {
                            return Err(bad(path, "RF64 data chunk without a ds64 size before it"))
                        }
                        (_, n, _) => (n, "data chunk"),
                    };
                    data_at = Some((at + 8, n));
                    break;
                }
                _ => {}
            }
            at += 8 + len + (len & 1);
        }
        let Some(fmt) = fmt else {
            return Err(bad(
                path,
                "not a readable WAV file: no fmt chunk before its data",
            ));
        };
        let Some((offset, (n, said_by))) = data_at else {
            return Err(bad(path, "not a readable WAV file: no data chunk"));
        };
        let (datatype, rate) = wav_fmt(path, &fmt)?;
        let present = size.saturating_sub(offset);
        if n == 0 || n > present {
            if let Some(why) = unfinalised_wav(path) {
                return Err(bad(path, format!("WAV holds no readable samples{why}")));
            }
            if n == 0 {
                return Err(bad(path, "WAV holds no samples (its data chunk is empty)"));
            }
            return Err(bad(
                path,
                format!(
                    "its {said_by} says the data holds {n} bytes, but only {present} follow the \
                     header: truncated"
                ),
            ));
        }
        let named = wav_name_center(path)?;
        let (center_hz, center_from_name) = match (auxi_center(path)?, named) {
            (Some(c), Some(n)) if (c - n.hz).abs() >= n.resolution_hz => {
                return Err(bad(
                    path,
                    format!(
                        "two centres: its auxi chunk's CenterFreq is {c} Hz, its {} file name \
                         says {} Hz; rxnode does not pick one of them: rename the file so its \
                         name states no centre (or the chunk's), and analyse that",
                        n.tool, n.hz
                    ),
                ))
            }
            (Some(c), _) => (Some(c), None),
            (None, Some(n)) => (Some(n.hz), Some(n.tool.to_owned())),
            (None, None) => (None, None),
        };
        let data = DataRange {
            path: path.to_path_buf(),
            offset,
            len: n,
        };
        let mut r = Self::open_raw(data, datatype, 1, 0, IqFormat::Wav)?;
        r.info.sample_rate_hz = Some(rate);
        r.info.center_hz = center_hz;
        r.info.center_from_name = center_from_name;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    const RATE: u32 = 48_000;

    /// A `fmt ` chunk's body: WAVEFORMAT (16 bytes), or WAVEFORMATEXTENSIBLE (40)
    /// with `sub` as its sub-format tag and `valid` bits.
    fn fmt(tag: u16, bits: u16, ext: Option<(u16, u16)>) -> Vec<u8> {
        let align = 2 * bits / 8;
        let mut f = Vec::new();
        f.extend(if ext.is_some() { 0xFFFEu16 } else { tag }.to_le_bytes());
        f.extend(2u16.to_le_bytes());
        f.extend(RATE.to_le_bytes());
        f.extend((RATE * u32::from(align)).to_le_bytes());
        f.extend(align.to_le_bytes());
        f.extend(bits.to_le_bytes());
        if let Some((sub, valid)) = ext {
            f.extend(22u16.to_le_bytes());
            f.extend(valid.to_le_bytes());
            f.extend(3u32.to_le_bytes());
            f.extend(u32::from(sub).to_le_bytes());
            f.extend(KSDATAFORMAT_TAIL);
        }
        f
    }

    /// A WAV of `fmt` and `data`: RIFF, or RF64 with the sizes in `ds64`.
    fn wav(fmt: &[u8], data: &[u8], rf64: bool) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(if rf64 { b"RF64" } else { b"RIFF" });
        out.extend(
            if rf64 {
                u32::MAX
            } else {
                20 + fmt.len() as u32 + data.len() as u32
            }
            .to_le_bytes(),
        );
        out.extend(b"WAVE");
        if rf64 {
            out.extend(b"ds64");
            out.extend(28u32.to_le_bytes());
            out.extend(0u64.to_le_bytes());
            out.extend((data.len() as u64).to_le_bytes());
            out.extend(0u64.to_le_bytes());
            out.extend(0u32.to_le_bytes());
        }
        out.extend(b"fmt ");
        out.extend((fmt.len() as u32).to_le_bytes());
        out.extend(fmt);
        out.extend(b"data");
        out.extend(if rf64 { u32::MAX } else { data.len() as u32 }.to_le_bytes());
        out.extend(data);
        out
    }

    /// Every sample of the recording at `path`.
    fn read_all(path: &Path, format: Option<IqFormat>) -> Vec<Complex<f32>> {
        let mut r = IqReader::open(path, format).unwrap();
        let mut out = vec![Complex::new(0.0, 0.0); r.info().samples as usize];
        assert_eq!(r.read(&mut out).unwrap(), out.len());
        out
    }

    /// 24- and 32-bit integer PCM, as `WAVE_FORMAT_PCM` and as
    /// `WAVE_FORMAT_EXTENSIBLE` with the PCM sub-format (24 valid bits in 32-bit
    /// containers, 12 in 16-bit ones too), read to full scale 1: each value is the
    /// container's integer over 2^(container bits − 1), the extremes included (they
    /// were refused: "Int 24-bit is not supported", "Int 12-bit").
    #[test]
    fn wav_pcm_of_24_and_32_bits_reads_to_full_scale() {
        let dir = tempfile::tempdir().unwrap();
        let values: [i64; 6] = [i64::MAX, i64::MIN, 1, -1, 0x1234_5678_9abc_def0, 0];
        for (name, bits, container, ext) in [
            ("pcm24.wav", 24u16, 24u16, None),
            ("ext24.wav", 24, 24, Some(24)),
            ("pcm32.wav", 32, 32, None),
            ("ext32.wav", 32, 32, Some(32)),
            ("ext24in32.wav", 24, 32, Some(24)),
            ("ext12in16.wav", 12, 16, Some(12)),
        ] {
            // The top `bits` of each value, left-justified in a container as the
            // format stores it (the bytes below the valid bits 0).
            let top = |v: i64| (v >> (64 - bits)) << (container - bits);
            let bytes = usize::from(container / 8);
            let data: Vec<u8> = values
                .iter()
                .flat_map(|&v| top(v).to_le_bytes()[..bytes].to_vec())
                .collect();
            let f = fmt(1, container, ext.map(|v| (1, v)));
            let p = dir.path().join(name);
            std::fs::write(&p, wav(&f, &data, false)).unwrap();
            let got = read_all(&p, None);
            let want: Vec<Complex<f32>> = values
                .chunks(2)
                .map(|c| {
                    let s = |v: i64| (top(v) as f64 / 2f64.powi(i32::from(container) - 1)) as f32;
                    Complex::new(s(c[0]), s(c[1]))
                })
                .collect();
            assert_eq!(got, want, "{name}");
            // The largest value is 1 − 2^(1 − bits), the smallest −1.
            let top_value = 1.0 - 2f32.powi(1 - i32::from(bits));
            assert!(
                got[0].re >= top_value && got[0].im == -1.0,
                "{name}: {:?}",
                got[0]
            );
        }
    }

    /// The same unsigned 8-bit bytes read as raw `cu8`, as a SigMF `cu8` pair, as an
    /// 8-bit WAV and as an 8-bit RF64 WAV give the same values, each (x − 127.5)/128
    /// (the WAV was read as (x − 128)/128 and the RF64 as (x − 127.5)/128).
    #[test]
    fn unsigned_8_bit_samples_read_the_same_on_every_path() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..=255u8).flat_map(|b| [b, 255 - b]).collect();
        let want: Vec<Complex<f32>> = bytes
            .chunks(2)
            .map(|c| {
                let v = |b: u8| ((f64::from(b) - 127.5) / 128.0) as f32;
                Complex::new(v(c[0]), v(c[1]))
            })
            .collect();
        let raw = dir.path().join("r.cu8");
        std::fs::write(&raw, &bytes).unwrap();
        let meta = dir.path().join("s.sigmf-meta");
        std::fs::write(
            &meta,
            r#"{"global": {"core:datatype": "cu8", "core:version": "1.2.0"}, "captures": []}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("s.sigmf-data"), &bytes).unwrap();
        let riff = dir.path().join("w.wav");
        std::fs::write(&riff, wav(&fmt(1, 8, None), &bytes, false)).unwrap();
        let rf64 = dir.path().join("w64.wav");
        std::fs::write(&rf64, wav(&fmt(1, 8, None), &bytes, true)).unwrap();
        let ext = dir.path().join("ext.wav");
        std::fs::write(&ext, wav(&fmt(1, 8, Some((1, 8))), &bytes, false)).unwrap();
        for p in [&raw, &meta, &riff, &rf64, &ext] {
            assert_eq!(read_all(p, None), want, "{}", p.display());
        }
        assert_eq!(read_all(&raw, Some(IqFormat::Cu8)), want);
    }

    /// 32- and 64-bit IEEE float WAV are read as stored.
    #[test]
    fn wav_float_samples_are_read_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let x = [0.25f64, -0.75, 1.5, -1e-9];
        for (bits, ext) in [(32u16, None), (32, Some((3, 32))), (64, None)] {
            let data: Vec<u8> = match bits {
                32 => x.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
                _ => x.iter().flat_map(|&v| v.to_le_bytes()).collect(),
            };
            let p = dir.path().join(format!("f{bits}.wav"));
            std::fs::write(&p, wav(&fmt(3, bits, ext), &data, false)).unwrap();
            let got = read_all(&p, None);
            let want = [
                Complex::new(0.25f32, -0.75),
                Complex::new(1.5, -1e-9f64 as f32),
            ];
            assert_eq!(got, want, "{bits} {ext:?}");
        }
    }

    /// What no reading of the header makes samples of is refused naming the `fmt `
    /// field and its value: a compressed format, an odd width, an unknown
    /// sub-format, valid bits past the container, a block size that is no frame.
    #[test]
    fn a_wav_layout_that_cannot_be_read_is_refused_by_field() {
        let dir = tempfile::tempdir().unwrap();
        let refusal = |name: &str, f: Vec<u8>| {
            let p = dir.path().join(name);
            std::fs::write(&p, wav(&f, &[0u8; 96], false)).unwrap();
            IqReader::open(&p, None).unwrap_err().to_string()
        };
        let e = refusal("adpcm.wav", fmt(2, 16, None));
        assert!(e.contains("wFormatTag 2 (Microsoft ADPCM)"), "{e}");
        let e = refusal("pcm12.wav", fmt(1, 12, None));
        assert!(
            e.contains("wBitsPerSample 12 with wFormatTag 1 (PCM)"),
            "{e}"
        );
        let e = refusal("f16.wav", fmt(3, 16, None));
        assert!(
            e.contains("wBitsPerSample 16 with wFormatTag 3 (IEEE float)"),
            "{e}"
        );
        let e = refusal("alaw.wav", fmt(1, 8, Some((6, 8))));
        assert!(e.contains("SubFormat 6 (A-law)"), "{e}");
        let mut odd = fmt(1, 16, Some((1, 16)));
        odd[30] = 0x11;
        let e = refusal("guid.wav", odd);
        assert!(e.contains("SubFormat 01000000000011"), "{e}");
        let e = refusal("valid.wav", fmt(1, 16, Some((1, 20))));
        assert!(
            e.contains("wValidBitsPerSample 20 exceeds its wBitsPerSample 16"),
            "{e}"
        );
        let mut align = fmt(1, 16, None);
        align[12] = 6;
        let e = refusal("align.wav", align);
        assert!(
            e.contains("nBlockAlign 6 is not 2 channels of 16 bits (4 bytes)"),
            "{e}"
        );
        let mut short = fmt(1, 16, Some((1, 16)));
        short.truncate(24);
        let e = refusal("short.wav", short);
        assert!(
            e.contains("wFormatTag is 0xFFFE (extensible), which needs a 40-byte"),
            "{e}"
        );
    }

    /// The centre a name states, in SDR#'s and HDSDR's patterns only.
    #[test]
    fn a_wav_name_states_a_centre_only_in_its_writers_patterns() {
        let c = |n: &str| {
            wav_name_center(Path::new(n))
                .unwrap()
                .map(|c| (c.hz, c.resolution_hz, c.tool))
        };
        assert_eq!(
            c("SDRSharp_20230115_093012Z_100100000Hz_IQ.wav"),
            Some((100_100_000.0, 1.0, "SDR#"))
        );
        assert_eq!(
            c("HDSDR_20230115_093012Z_7100kHz_RF.wav"),
            Some((7_100_000.0, 1000.0, "HDSDR"))
        );
        assert_eq!(
            c("HDSDR_20230115_093012_14.074MHz_RF.wav"),
            Some((14_074_000.0, 1000.0, "HDSDR"))
        );
        for other in [
            "SDRSharp_20230115_093012Z_100100000Hz_AF.wav",
            "HDSDR_20230115_093012Z_7100kHz_AF.wav",
            "HDSDR_20230115_093012Z_7100kHz_IQ.wav",
            "SDRSharp_2023011_093012Z_100100000Hz_IQ.wav",
            "SDRSharp_20230115_093012Z_100100000_IQ.wav",
            "SDRSharp_20230115_093012Z_1e8Hz_IQ.wav",
            "SDRSharp_20230115_093012Z_100100000Hz_IQ.raw",
            "x_SDRSharp_20230115_093012Z_100100000Hz_IQ.wav",
            "rec.wav",
        ] {
            assert_eq!(c(other), None, "{other}");
        }
        let e = wav_name_center(Path::new("SDRSharp_20230115_093012Z_0Hz_IQ.wav")).unwrap_err();
        assert!(e.to_string().contains("0Hz is not a frequency > 0"), "{e}");
    }

    /// A 16-bit RIFF WAV of one sample with `body` as its `auxi` chunk, between
    /// `fmt ` and `data`.
    fn wav_with_auxi(body: &[u8]) -> Vec<u8> {
        let f = fmt(1, 16, None);
        let plain = wav(&f, &[1, 0, 2, 0], false);
        let at = 12 + 8 + f.len();
        let mut chunk = b"auxi".to_vec();
        chunk.extend((body.len() as u32).to_le_bytes());
        chunk.extend(body);
        if body.len() % 2 == 1 {
            chunk.push(0);
        }
        let mut out = plain[..at].to_vec();
        out.extend(chunk);
        out.extend(&plain[at..]);
        let riff = (out.len() - 8) as u32;
        out[4..8].copy_from_slice(&riff.to_le_bytes());
        out
    }

    /// SDR Console's XML, as it writes it into its `auxi` chunk.
    fn sdr_console_xml(center: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?><SDR-XML-Root xml:lang=\"EN\" Description=\"Saved \
             recording data\" Created=\"07-Dec-2026 12:00\"><Definition \
             CurrentTimeUTC=\"07-12-2026 12:00:00\" Filename=\"rec.wav\" \
             SoftwareName=\"SDR Console\" {center} SampleRate=\"48000\" \
             BitsPerSample=\"16\" UTCSeconds=\"1796644800\"></Definition></SDR-XML-Root>"
        )
    }

    /// The binary `auxi` body SpectraVue, HDSDR, SDR# and SDRuno write: two
    /// SYSTEMTIMEs (`start`, `stop`), then `CenterFreq` and the rate.
    fn binary_auxi(start: [u16; 8], stop: [u16; 8], center: u32) -> Vec<u8> {
        let mut b: Vec<u8> = start
            .iter()
            .chain(&stop)
            .flat_map(|w| w.to_le_bytes())
            .collect();
        b.extend(center.to_le_bytes());
        b.extend(RATE.to_le_bytes());
        b.resize(164, 0);
        b
    }

    /// The centre `IqReader` reads from a WAV whose `auxi` chunk is `body`, or its
    /// error's text.
    fn auxi_read(body: &[u8]) -> std::result::Result<Option<f64>, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rec.wav");
        std::fs::write(&p, wav_with_auxi(body)).unwrap();
        IqReader::open(&p, None)
            .map(|r| r.info().center_hz)
            .map_err(|e| e.to_string())
    }

    /// Two tools write an `auxi` chunk: SDR#/HDSDR/SDRuno a binary layout, SDR
    /// Console XML text (UTF-16LE, or UTF-8) whose `RadioCenterFreq` is the
    /// centre. The XML was read as the binary layout: bytes 32..36 of its text
    /// taken as CenterFreq, a 7.1 MHz recording analysed at 3.145774 MHz (UTF-16)
    /// or 2015.392879 MHz (UTF-8). Now each is read as what it is, and a chunk
    /// that is neither is refused naming the field.
    #[test]
    fn an_auxi_chunk_is_read_as_the_tool_that_wrote_it_wrote_it() {
        let xml = sdr_console_xml("RadioCenterFreq=\"7100000\"");
        let utf16 = |t: &str| -> Vec<u8> {
            let mut b: Vec<u8> = t.encode_utf16().flat_map(u16::to_le_bytes).collect();
            b.extend([0, 0]);
            b
        };
        let mut bom16 = vec![0xFF, 0xFE];
        bom16.extend(utf16(&xml));
        let mut bom8 = vec![0xEF, 0xBB, 0xBF];
        bom8.extend(xml.as_bytes());
        for (what, body) in [
            ("UTF-16LE", utf16(&xml)),
            ("UTF-16LE with BOM", bom16),
            ("UTF-8", [xml.as_bytes(), &[0]].concat()),
            ("UTF-8 with BOM", bom8),
        ] {
            assert_eq!(auxi_read(&body), Ok(Some(7_100_000.0)), "{what}");
        }
        let one = |attr: &str| auxi_read(&utf16(&sdr_console_xml(attr)));
        assert_eq!(
            one("RadioCenterFreq = '145800000.5'"),
            Ok(Some(145_800_000.5))
        );
        // No attribute, or 0: the centre is not recorded; a longer name is another one.
        assert_eq!(one("Frequency=\"7100000\""), Ok(None));
        assert_eq!(one("RadioCenterFreqOffset=\"5\""), Ok(None));
        assert_eq!(one("RadioCenterFreq=\"0\""), Ok(None));
        for (attr, want) in [
            (
                "RadioCenterFreq=\"7.1 MHz\"",
                "RadioCenterFreq is \"7.1 MHz\", not a frequency in Hz",
            ),
            (
                "RadioCenterFreq=\"-7100000\"",
                "RadioCenterFreq is \"-7100000\"",
            ),
            ("RadioCenterFreq=\"1e9\"", "RadioCenterFreq is \"1e9\""),
            ("RadioCenterFreq=\"5\"", "RadioCenterFreq: "),
            (
                "RadioCenterFreq=7100000",
                "gives RadioCenterFreq no quoted value",
            ),
            (
                "RadioCenterFreq=\"7100000\" RadioCenterFreq=\"14074000\"",
                "states RadioCenterFreq 2 times (\"7100000\", \"14074000\")",
            ),
        ] {
            let e = one(attr).unwrap_err();
            assert!(e.contains(want), "{attr}: {e}");
        }
        let e = xml_center(Path::new("r.wav"), "<D RadioCenterFreq=\"7100000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("RadioCenterFreq's value unclosed"), "{e}");
        // An unpaired surrogate: XML in no encoding.
        let mut broken = utf16("<x RadioCenterFreq=\"1\"");
        broken.extend(0xD800u16.to_le_bytes());
        let e = auxi_read(&broken).unwrap_err();
        assert!(e.contains("neither UTF-16LE nor UTF-8"), "{e}");

        // The binary layout: read as before, times or none.
        let t = [2026, 12, 1, 7, 12, 0, 0, 0];
        assert_eq!(
            auxi_read(&binary_auxi(t, [0; 8], 433_920_000)),
            Ok(Some(433_920_000.0))
        );
        assert_eq!(
            auxi_read(&binary_auxi([0; 8], [0; 8], 433_920_000)),
            Ok(Some(433_920_000.0))
        );
        assert_eq!(auxi_read(&binary_auxi(t, t, 0)), Ok(None));
        // SYSTEMTIMEs no clock shows: not that layout, its CenterFreq not trusted.
        let mut bad_month = t;
        bad_month[1] = 13;
        let e = auxi_read(&binary_auxi(t, bad_month, 433_920_000)).unwrap_err();
        assert!(
            e.contains("StopTime.wMonth (byte 18 of the chunk) is 13, not 1..12"),
            "{e}"
        );
        let e = auxi_read(&binary_auxi([1, 0, 0, 0, 0, 0, 0, 0], [0; 8], 7)).unwrap_err();
        assert!(
            e.contains("StartTime.wYear (byte 0 of the chunk) is 1"),
            "{e}"
        );
        let e = auxi_read(&[0u8; 20]).unwrap_err();
        assert!(e.contains("auxi chunk is 20 bytes, too short"), "{e}");
    }

    /// A WAV or RF64, or a tar archive (a `.sigmf` archive), named as a raw
    /// recording or given a raw `--format`, was read as raw samples: a 16-bit WAV
    /// named `.cs16` analysed as 11 more samples than it holds (its 44-byte header),
    /// a `.sigmf` archive named `.cf32` its tar headers and meta taken as samples.
    /// Now refused naming what the file is and how it is read; a raw file that
    /// merely starts with `RIFF` is read as raw.
    #[test]
    fn a_container_is_not_read_as_raw_samples() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..64u8).collect();
        let f = fmt(1, 16, None);
        for rf64 in [false, true] {
            let p = dir.path().join(format!("rec{rf64}.cs16"));
            std::fs::write(&p, wav(&f, &data, rf64)).unwrap();
            for given in [
                None,
                Some(IqFormat::Cs16),
                Some(IqFormat::Cf32),
                Some(IqFormat::Cu8),
            ] {
                let e = IqReader::open(&p, given).unwrap_err().to_string();
                let name = given.map_or("cs16", IqFormat::name);
                assert!(
                    e.contains("not raw samples but a WAV recording")
                        && e.contains(&format!("read as {name}, its header and chunks"))
                        && e.contains("--format wav"),
                    "{rf64} {given:?}: {e}"
                );
            }
            // Read as what it is, it is whole.
            let r = IqReader::open(&p, Some(IqFormat::Wav)).unwrap();
            assert_eq!(r.info().samples, 16, "{rf64}");
        }
        let mut tar = vec![0u8; 2048];
        tar[..12].copy_from_slice(b"x.sigmf-meta");
        tar[257..263].copy_from_slice(b"ustar\0");
        let p = dir.path().join("x.cf32");
        std::fs::write(&p, &tar).unwrap();
        let e = IqReader::open(&p, None).unwrap_err().to_string();
        assert!(
            e.contains("not raw samples but a tar archive") && e.contains("name it .sigmf"),
            "{e}"
        );
        // Raw samples that open with the bytes "RIFF" are raw samples.
        let mut raw = b"RIFF".to_vec();
        raw.resize(2048, 7);
        let p = dir.path().join("y.cs16");
        std::fs::write(&p, &raw).unwrap();
        assert_eq!(IqReader::open(&p, None).unwrap().info().samples, 512);
    }
}
