//! The crate's one error type.
use std::path::PathBuf;

/// Everything that can go wrong in `rxnode-dsp`.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A DSP or capture setting is out of range.
    #[error("invalid setting {field}: {detail}")]
    InvalidSetting {
        /// The setting's name.
        field: &'static str,
        /// What is wrong with its value.
        detail: String,
    },
    /// An I/O error on an IQ file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An IQ file is malformed (truncated, odd size, bad header, non-finite sample …).
    #[error("{path}: {detail}")]
    BadIqFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The IQ format is unknown or unsupported.
    #[error("unsupported IQ format: {0}")]
    UnsupportedFormat(String),
    /// Writing more IQ data would exceed the disk budget.
    #[error("disk budget of {budget} bytes reached after {written} bytes; recording stopped")]
    DiskBudget {
        /// The budget in bytes.
        budget: u64,
        /// Bytes written when the recording stopped.
        written: u64,
    },
    /// The sample source failed.
    #[error("sample source: {0}")]
    Source(String),
    /// The CLKIN reference tone could not be measured.
    #[error("clkin: {0}")]
    Clkin(String),
    /// A worker thread of the capture engine panicked.
    #[error("capture worker thread panicked")]
    WorkerPanic,
    /// A [`crate::SampleSource`]'s own error (a radio stream that failed), shown
    /// with its own message.
    #[error(transparent)]
    SourceFailed(Box<dyn std::error::Error + Send + Sync + 'static>),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
