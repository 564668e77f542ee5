//! IQ files: recording writers (raw cf32, 2-channel float WAV, SigMF 1.2 `cf32_le`) and
//! streaming readers (every SigMF receive datatype, raw files, WAV, SigMF pairs and
//! archives, multi-channel SigMF one channel at a time).
mod element;
pub(crate) mod reader;
pub mod sigmf;
pub(crate) mod writer;

pub use element::Datatype;
pub use reader::{IqInfo, IqReader};
pub use writer::{
    is_stream_target, IqFileRecord, IqWriter, NativeIq, PeakAnnotation, RecordFormat,
    RecordingMeta, STDOUT_TARGET,
};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An IQ file format: a raw sample layout, WAV, or SigMF (a `.sigmf-meta` +
/// `.sigmf-data` pair, or a `.sigmf` archive holding both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum IqFormat {
    /// Raw interleaved little-endian float32 I/Q (GNU Radio's `.cfile`).
    #[serde(rename = "cf32")]
    Cf32,
    /// Raw interleaved big-endian float32 I/Q.
    #[serde(rename = "cf32_be")]
    Cf32Be,
    /// Raw interleaved little-endian float64 I/Q.
    #[serde(rename = "cf64")]
    Cf64,
    /// Raw interleaved little-endian int32 I/Q (full scale 2³¹).
    #[serde(rename = "cs32")]
    Cs32,
    /// Raw interleaved big-endian int32 I/Q (full scale 2³¹).
    #[serde(rename = "cs32_be")]
    Cs32Be,
    /// Raw interleaved little-endian int16 I/Q (full scale 32768).
    #[serde(rename = "cs16")]
    Cs16,
    /// Raw interleaved big-endian int16 I/Q (full scale 32768).
    #[serde(rename = "cs16_be")]
    Cs16Be,
    /// Raw interleaved little-endian unsigned 16-bit I/Q (offset 32767.5).
    #[serde(rename = "cu16")]
    Cu16,
    /// Raw interleaved int8 I/Q (full scale 128).
    #[serde(rename = "cs8")]
    Cs8,
    /// Raw interleaved unsigned 8-bit I/Q, offset 127.5 (rtl-sdr, `rtl_sdr`'s output).
    #[serde(rename = "cu8")]
    Cu8,
    /// WAV, 2 channels (I left, Q right).
    #[serde(rename = "wav")]
    Wav,
    /// SigMF (`.sigmf-meta` + `.sigmf-data`, or a `.sigmf` archive).
    #[serde(rename = "sigmf")]
    Sigmf,
    /// SDRangel's `.sdriq`: a 32-byte header (rate, centre, start time, sample size,
    /// CRC-32), then int16 I/Q, or 24-bit values in int32 words. Told by its header,
    /// never named by `--format` (a recording is not written in it).
    #[serde(rename = "sdriq")]
    Sdriq,
}

/// The raw formats with their names (first: the canonical one) and sample layout.
const RAW: [(IqFormat, &[&str], Datatype); 10] = [
    (
        IqFormat::Cf32,
        &["cf32", "cf32_le", "fc32", "cfile", "complex64"],
        Datatype::Cf32Le,
    ),
    (IqFormat::Cf32Be, &["cf32_be"], Datatype::Cf32Be),
    (
        IqFormat::Cf64,
        &["cf64", "cf64_le", "fc64", "complex128"],
        Datatype::Cf64Le,
    ),
    (
        IqFormat::Cs32,
        &["cs32", "ci32", "ci32_le", "sc32"],
        Datatype::Ci32Le,
    ),
    (IqFormat::Cs32Be, &["cs32_be", "ci32_be"], Datatype::Ci32Be),
    (
        IqFormat::Cs16,
        &["cs16", "ci16", "ci16_le", "sc16"],
        Datatype::Ci16Le,
    ),
    (IqFormat::Cs16Be, &["cs16_be", "ci16_be"], Datatype::Ci16Be),
    (IqFormat::Cu16, &["cu16", "cu16_le"], Datatype::Cu16Le),
    (IqFormat::Cs8, &["cs8", "ci8", "sc8"], Datatype::Ci8),
    (IqFormat::Cu8, &["cu8", "uc8"], Datatype::Cu8),
];

/// Extensions that name no layout: raw dumps whose format must be given.
const AMBIGUOUS: [&str; 4] = ["bin", "raw", "dat", "iq"];

fn expected() -> String {
    let mut names: Vec<&str> = RAW.iter().map(|(_, n, _)| n[0]).collect();
    names.extend(["wav", "sigmf"]);
    names.join(", ")
}

impl IqFormat {
    /// Every name [`IqFormat::parse`] takes: the one shown first, then its other
    /// spellings (so a command line can list and complete them).
    pub fn names() -> Vec<(&'static str, Vec<&'static str>)> {
        let mut v: Vec<(&'static str, Vec<&'static str>)> = RAW
            .iter()
            .map(|(_, n, _)| (n[0], n[1..].to_vec()))
            .collect();
        v.push(("wav", Vec::new()));
        v.push(("sigmf", vec!["sigmf-data", "sigmf-meta"]));
        v
    }

    /// Parse a format name: the raw layouts (`cu8`, `cs8`, `cs16`, `cs16_be`, `cu16`,
    /// `cs32`, `cs32_be`, `cf32`, `cf32_be`, `cf64`, with their SigMF spellings such
    /// as `ci16_le` and GNU Radio's `cfile`), `wav` or `sigmf`.
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.to_ascii_lowercase();
        if let Some((f, _, _)) = RAW.iter().find(|(_, names, _)| names.contains(&s.as_str())) {
            return Ok(*f);
        }
        match s.as_str() {
            "wav" => Ok(Self::Wav),
            "sigmf" | "sigmf-data" | "sigmf-meta" => Ok(Self::Sigmf),
            other => Err(Error::UnsupportedFormat(format!(
                "{other:?} (expected {})",
                expected()
            ))),
        }
    }

    /// The format a file name's extension implies.
    pub fn from_path(path: &Path) -> Result<Self> {
        let ext = path.extension().and_then(|e| e.to_str()).ok_or_else(|| {
            Error::UnsupportedFormat(format!(
                "{} has no extension; give the format",
                path.display()
            ))
        })?;
        if AMBIGUOUS.contains(&ext.to_ascii_lowercase().as_str()) {
            return Err(Error::UnsupportedFormat(format!(
                "{}: a .{ext} file does not say how its samples are stored; give the format \
                 ({})",
                path.display(),
                expected()
            )));
        }
        Self::parse(ext)
    }

    /// The name used in summaries.
    pub fn name(self) -> &'static str {
        match RAW.iter().find(|(f, _, _)| *f == self) {
            Some((_, names, _)) => names[0],
            None if self == Self::Wav => "wav",
            None if self == Self::Sdriq => "sdriq",
            None => "sigmf",
        }
    }

    /// The raw format of a sample layout (`None` for one no raw format reads).
    pub fn raw_of(datatype: Datatype) -> Option<Self> {
        RAW.iter()
            .find(|(_, _, d)| *d == datatype)
            .map(|(f, _, _)| *f)
    }

    /// The sample layout of a raw format (`None` for WAV and SigMF, whose files say).
    pub fn datatype(self) -> Option<Datatype> {
        RAW.iter().find(|(f, _, _)| *f == self).map(|(_, _, d)| *d)
    }
}

#[cfg(test)]
mod tests {
    /// Every listed name and spelling parses, so the command line offers only names that work.
    #[test]
    fn every_listed_name_parses() {
        for (name, aliases) in IqFormat::names() {
            for n in std::iter::once(name).chain(aliases) {
                assert!(IqFormat::parse(n).is_ok(), "{n}");
            }
        }
    }

    use super::*;

    #[test]
    fn formats_from_names_and_paths() {
        assert_eq!(IqFormat::parse("CS16").unwrap(), IqFormat::Cs16);
        assert_eq!(IqFormat::parse("ci16_be").unwrap(), IqFormat::Cs16Be);
        assert_eq!(
            IqFormat::from_path(Path::new("a/b.sigmf-meta")).unwrap(),
            IqFormat::Sigmf
        );
        assert_eq!(
            IqFormat::from_path(Path::new("a/b.sigmf")).unwrap(),
            IqFormat::Sigmf
        );
        assert_eq!(
            IqFormat::from_path(Path::new("x.cf32")).unwrap(),
            IqFormat::Cf32
        );
        assert_eq!(
            IqFormat::from_path(Path::new("x.cfile")).unwrap(),
            IqFormat::Cf32
        );
        assert_eq!(
            IqFormat::from_path(Path::new("x.cu8")).unwrap(),
            IqFormat::Cu8
        );
        let e = IqFormat::from_path(Path::new("x.bin")).unwrap_err();
        assert!(e.to_string().contains("give the format"), "{e}");
        assert!(IqFormat::from_path(Path::new("x.mp3")).is_err());
        assert!(IqFormat::from_path(Path::new("x")).is_err());
        for (f, names, _) in RAW {
            assert_eq!(IqFormat::parse(f.name()).unwrap(), f);
            for n in names {
                assert_eq!(IqFormat::parse(n).unwrap(), f, "{n}");
            }
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
        }
    }
}
