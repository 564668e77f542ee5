//! IQ files: recording writers (raw cf32, 2-channel float WAV, SigMF 1.2 `cf32_le`) and
//! streaming readers (cf32, cs16, cs8, WAV, SigMF).
pub(crate) mod reader;
pub(crate) mod writer;

pub use reader::{IqInfo, IqReader};
pub use writer::{IqFileRecord, IqWriter, PeakAnnotation, RecordFormat, RecordingMeta};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An IQ file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IqFormat {
    /// Raw interleaved little-endian float32 I/Q.
    Cf32,
    /// Raw interleaved little-endian int16 I/Q (full scale 32768).
    Cs16,
    /// Raw interleaved int8 I/Q (full scale 128).
    Cs8,
    /// WAV, 2 channels (I left, Q right).
    Wav,
    /// SigMF (`.sigmf-meta` + `.sigmf-data`).
    Sigmf,
}

impl IqFormat {
    /// Parse `cf32`, `cs16`, `cs8`, `wav` or `sigmf`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cf32" | "fc32" | "cfile" => Ok(Self::Cf32),
            "cs16" | "sc16" => Ok(Self::Cs16),
            "cs8" | "sc8" => Ok(Self::Cs8),
            "wav" => Ok(Self::Wav),
            "sigmf" | "sigmf-data" | "sigmf-meta" => Ok(Self::Sigmf),
            other => Err(Error::UnsupportedFormat(format!(
                "{other:?} (expected cf32, cs16, cs8, wav or sigmf)"
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
        Self::parse(ext)
    }

    /// The name used in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cf32 => "cf32",
            Self::Cs16 => "cs16",
            Self::Cs8 => "cs8",
            Self::Wav => "wav",
            Self::Sigmf => "sigmf",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names_and_paths() {
        assert_eq!(IqFormat::parse("CS16").unwrap(), IqFormat::Cs16);
        assert_eq!(
            IqFormat::from_path(Path::new("a/b.sigmf-meta")).unwrap(),
            IqFormat::Sigmf
        );
        assert_eq!(
            IqFormat::from_path(Path::new("x.cf32")).unwrap(),
            IqFormat::Cf32
        );
        assert!(IqFormat::from_path(Path::new("x.mp3")).is_err());
        assert!(IqFormat::from_path(Path::new("x")).is_err());
    }
}
