//! GNU Radio's File Meta Sink: its headers (serialized PMT dictionaries: `strt`,
//! `bytes`, `type`, `size`, `cplx`, `rx_rate`, … then the extras, e.g. `rx_freq`),
//! attached before every segment of samples or detached in a `.hdr` file beside them,
//! read into where the samples are, their layout, rate and centre.
use super::{bad, io, DataRange};
use crate::error::Result;
use crate::iq::Datatype;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// How a header begins: a dictionary whose first pair's key is the symbol `strt` and
/// whose value is a `uint64`.
const MAGIC: [u8; 10] = [0x09, 0x07, 0x02, 0x00, 0x04, b's', b't', b'r', b't', 0x0b];

/// The most bytes one header (with its extras) may have.
const HEADER_MAX: u64 = 1 << 16;

/// The most headers read (a segment is 1 M items by default: 4 Mi of them is far
/// past any disk).
const SEGMENTS_MAX: usize = 1 << 22;

/// Whether `file`'s first bytes are a File Meta Sink header.
pub(super) fn starts_with_header(file: &mut File) -> bool {
    let mut head = [0u8; 10];
    file.read_exact(&mut head).is_ok() && head == MAGIC
}

/// A PMT value, as far as a header needs one.
#[derive(Debug, Clone, PartialEq)]
enum Pmt {
    Bool(bool),
    Symbol(String),
    Int(i64),
    Double(f64),
    Null,
    /// A pair, a tuple, a vector, a dictionary: their items (a dictionary's as pairs).
    List(Vec<Pmt>),
}

/// Reads one serialized PMT from `b` at `at` (big-endian, as `pmt::serialize`).
struct Parser<'a> {
    b: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A value; `None` for bytes that are no PMT this reader knows (or nested past
    /// 256: a dictionary nests one level per key, and a header has a dozen).
    fn value(&mut self, depth: u32) -> Option<Pmt> {
        if depth > 256 {
            return None;
        }
        let tag = *self.take(1)?.first()?;
        Some(match tag {
            0x00 => Pmt::Bool(true),
            0x01 => Pmt::Bool(false),
            0x02 => {
                let n = u16::from_be_bytes(self.take(2)?.try_into().ok()?);
                Pmt::Symbol(String::from_utf8_lossy(self.take(n.into())?).into_owned())
            }
            0x03 => Pmt::Int(i64::from(self.u32()? as i32)),
            0x04 => Pmt::Double(f64::from_bits(self.u64()?)),
            0x05 => {
                self.take(16)?;
                Pmt::Null
            }
            0x06 => Pmt::Null,
            // A pair, a dictionary (its first pair, then the rest): car and cdr.
            0x07 | 0x09 => Pmt::List(vec![self.value(depth + 1)?, self.value(depth + 1)?]),
            0x08 | 0x0c => {
                let n = self.u32()?;
                // Each item is at least one byte: a count past what is left is no PMT.
                if n as usize > self.b.len().saturating_sub(self.at) {
                    return None;
                }
                let mut v = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    v.push(self.value(depth + 1)?);
                }
                Pmt::List(v)
            }
            0x0b => Pmt::Int(i64::try_from(self.u64()?).ok()?),
            0x0d => Pmt::Int(self.u64()? as i64),
            _ => return None,
        })
    }

    /// A dictionary's pairs in order (key symbol, value); `None` if it is none.
    fn dict(&mut self) -> Option<Vec<(String, Pmt)>> {
        let mut out = Vec::new();
        let mut d = self.value(0)?;
        loop {
            match d {
                Pmt::Null => return Some(out),
                Pmt::List(mut v) if v.len() == 2 => {
                    let rest = v.pop()?;
                    match v.pop()? {
                        Pmt::List(mut kv) if kv.len() == 2 => {
                            let val = kv.pop()?;
                            let Pmt::Symbol(k) = kv.pop()? else {
                                return None;
                            };
                            out.push((k, val));
                        }
                        _ => return None,
                    }
                    d = rest;
                }
                _ => return None,
            }
        }
    }
}

/// One header: its length with its extras, its segment's bytes, its layout, rate and
/// the extras' `rx_freq`.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    strt: u64,
    bytes: u64,
    datatype: Datatype,
    rate: f64,
    center: Option<f64>,
}

/// The header at the start of `b` (its extras included), checked; the error says why.
fn header(b: &[u8]) -> std::result::Result<Header, String> {
    let mut p = Parser { b, at: 0 };
    let main = p.dict().ok_or("a header that is no PMT dictionary")?;
    let extras = if (p.at as u64) < b.len() as u64 {
        p.dict().ok_or("extras that are no PMT dictionary")?
    } else {
        Vec::new()
    };
    let get = |k: &str| main.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let int = |k: &str| match get(k) {
        Some(Pmt::Int(n)) => Ok(*n),
        other => Err(format!("its {k} is {other:?}, not an integer")),
    };
    if p.at != b.len() {
        return Err(format!("{} bytes after its extras", b.len() - p.at));
    }
    let strt = u64::try_from(int("strt")?).map_err(|_| "its strt is negative")?;
    if strt != b.len() as u64 {
        return Err(format!("its strt {strt} is not its length {}", b.len()));
    }
    let bytes = u64::try_from(int("bytes")?).map_err(|_| "its bytes is negative")?;
    let (kind, size) = (int("type")?, int("size")?);
    let cplx = match get("cplx") {
        Some(Pmt::Bool(c)) => *c,
        other => return Err(format!("its cplx is {other:?}, not a bool")),
    };
    let rate = match get("rx_rate") {
        Some(Pmt::Double(r)) => *r,
        other => return Err(format!("its rx_rate is {other:?}, not a number")),
    };
    // gr_file_types: byte/char 0, short 1, int 2, float 5, double 6; complex items
    // are two of them, in the byte order of the host that wrote them (little-endian).
    let datatype = match (cplx, kind, size) {
        (true, 0, 2) => Datatype::Ci8,
        (true, 1, 4) => Datatype::Ci16Le,
        (true, 2, 8) => Datatype::Ci32Le,
        (true, 5, 8) => Datatype::Cf32Le,
        (true, 6, 16) => Datatype::Cf64Le,
        (false, ..) => {
            return Err(
                "its samples are real (cplx false), and analysis needs complex I/Q".to_owned(),
            )
        }
        (true, t, s) => {
            return Err(format!(
                "its item type {t} of {s} bytes is no complex layout this reader knows (char, \
                 short, int, float, double)"
            ))
        }
    };
    let center = extras.iter().find_map(|(k, v)| match (k.as_str(), v) {
        ("rx_freq", Pmt::Double(f)) => Some(*f),
        _ => None,
    });
    Ok(Header {
        strt,
        bytes,
        datatype,
        rate,
        center,
    })
}

/// What a File Meta Sink recording says, checked: where its samples are, their
/// layout, rate and centre, and the file its headers are in.
pub(super) struct GnuRadioSays {
    pub(super) headers_path: PathBuf,
    pub(super) datatype: Datatype,
    pub(super) rate: f64,
    pub(super) center: Option<f64>,
    /// (offset, length) of each segment's samples in the data file.
    pub(super) ranges: Vec<(u64, u64)>,
    /// The samples' total bytes.
    pub(super) total: u64,
}

/// The headers of a File Meta Sink recording: attached (`data` begins with one, each
/// segment's samples follow its header) or detached (`hdr`, the headers one after
/// another; the samples in `data` without a break). Every segment must agree on the
/// layout, rate and centre, and the sizes the headers state on the data's size.
pub(super) fn read(data: &Path, hdr: Option<&Path>) -> Result<GnuRadioSays> {
    let headers_path = hdr.unwrap_or(data).to_path_buf();
    let (mut f, len) = super::open_regular(&headers_path)?;
    let data_len = match hdr {
        Some(_) => super::open_regular(data)?.1,
        None => len,
    };
    let refuse = |at: u64, why: String| {
        bad(
            &headers_path,
            format!("GNU Radio File Meta Sink header at byte {at}: {why}"),
        )
    };
    let mut first: Option<Header> = None;
    let mut ranges = Vec::new();
    let (mut at, mut data_at, mut total) = (0u64, 0u64, 0u64);
    while at < len {
        if ranges.len() >= SEGMENTS_MAX {
            return Err(refuse(at, format!("more than {SEGMENTS_MAX} segments")));
        }
        let mut b = vec![0u8; (len - at).min(HEADER_MAX) as usize];
        f.seek(SeekFrom::Start(at)).map_err(io(&headers_path))?;
        f.read_exact(&mut b).map_err(io(&headers_path))?;
        if b.get(..MAGIC.len()) != Some(&MAGIC[..]) {
            return Err(refuse(at, "no header begins there".to_owned()));
        }
        // The header's own length first, so its extras end where it says.
        let strt = b
            .get(10..18)
            .and_then(|s| s.try_into().ok())
            .map(u64::from_be_bytes)
            .filter(|&s| s >= 18 && s <= b.len() as u64)
            .ok_or_else(|| refuse(at, "its strt is no header length".to_owned()))?;
        let h = header(&b[..strt as usize]).map_err(|why| refuse(at, why))?;
        if let Some(f0) = &first {
            let same = (h.datatype, h.rate, h.center) == (f0.datatype, f0.rate, f0.center);
            if !same {
                return Err(refuse(
                    at,
                    format!(
                        "its segment is {} at {} S/s {}, the first {} at {} S/s {}: each would \
                         need its own axis, and only recordings whose segments share them are \
                         read",
                        h.datatype.sigmf_name(),
                        h.rate,
                        centred(h.center),
                        f0.datatype.sigmf_name(),
                        f0.rate,
                        centred(f0.center)
                    ),
                ));
            }
        }
        let begin = match hdr {
            Some(_) => data_at,
            None => at + strt,
        };
        let end = begin.checked_add(h.bytes).filter(|&e| e <= data_len);
        let Some(end) = end else {
            return Err(refuse(
                at,
                format!(
                    "its segment of {} bytes from byte {begin} runs past the end of {} ({data_len} \
                     bytes): truncated",
                    h.bytes,
                    data.display()
                ),
            ));
        };
        if h.bytes > 0 {
            ranges.push((begin, h.bytes));
        }
        total += h.bytes;
        data_at = end;
        at = match hdr {
            Some(_) => at + strt,
            None => end,
        };
        first.get_or_insert(h);
    }
    let Some(h) = first else {
        return Err(refuse(0, "the header file is empty".to_owned()));
    };
    if hdr.is_some() && data_at != data_len {
        return Err(bad(
            &headers_path,
            format!(
                "its headers state {data_at} bytes of samples, but {} has {data_len}",
                data.display()
            ),
        ));
    }
    Ok(GnuRadioSays {
        headers_path,
        datatype: h.datatype,
        rate: h.rate,
        center: h.center,
        ranges,
        total,
    })
}

/// A segment's centre in words.
fn centred(center: Option<f64>) -> String {
    center.map_or("with no rx_freq".to_owned(), |f| {
        format!("centred at {f} Hz")
    })
}

/// The data a File Meta Sink recording's samples are in.
pub(super) fn data_range(data: &Path, total: u64) -> DataRange {
    DataRange {
        path: data.to_path_buf(),
        offset: 0,
        len: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header GNU Radio 3.10's File Meta Sink wrote (detached): cf32, 100 000
    /// items of 8 bytes, 1 MS/s, extras `rx_freq` 433.92 MHz; 171 bytes.
    fn written() -> Vec<u8> {
        let hex = [
            "0907020004737472740b00000000000000ab090702000562797465730b00000000000c3500090702000463706c780009",
            "07020004747970650300000005090702000473697a650300000008090702000772785f74696d650c000000020b000000",
            "0000000000040000000000000000090702000772785f7261746504412e848000000000090702000776657273696f6e03",
            "0000000006090702000772785f667265710441b9dd180000000006",
        ]
        .concat();
        hex::decode(hex).unwrap()
    }

    /// The header reads as written; every shorter cut of it, and bytes that nest
    /// without end, are refused (an error, never a panic nor a stack overflow).
    #[test]
    fn a_written_header_reads_and_its_cuts_are_refused() {
        let b = written();
        assert_eq!(b.len(), 171);
        assert_eq!(
            header(&b),
            Ok(Header {
                strt: 171,
                bytes: 800_000,
                datatype: Datatype::Cf32Le,
                rate: 1e6,
                center: Some(433.92e6),
            })
        );
        for k in 0..b.len() - 1 {
            assert!(header(&b[..k]).is_err(), "cut at {k}");
        }
        let nested = vec![0x07u8; 1 << 16];
        assert!(header(&nested).is_err());
        // Extras of 40 keys (a dictionary nests a level per key) read, rx_freq absent.
        let mut many = b[..149].to_vec();
        for k in 0..40u8 {
            many.extend_from_slice(&[0x09, 0x07, 0x02, 0x00, 0x02, b'k', b'0' + k, 0x06]);
        }
        many.push(0x06);
        let strt = many.len() as u64;
        many[10..18].copy_from_slice(&strt.to_be_bytes());
        let h = header(&many).unwrap();
        assert_eq!((h.strt, h.center, h.rate), (strt, None, 1e6));
        let mut real = b.clone();
        real[0x2e] = 0x01; // cplx false
        assert!(header(&real).unwrap_err().contains("real"));
    }
}
