//! The crate's one error type.
use std::path::PathBuf;

/// Everything that can go wrong in `rxnode-hw`.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A DSP, IQ-file or capture-engine error from `rxnode-dsp`, shown as is.
    #[error(transparent)]
    Dsp(rxnode_dsp::Error),
    /// A radio or sweep setting is out of range (a DSP setting that
    /// `rxnode-dsp` refuses arrives here too, so callers see one variant).
    #[error("invalid setting {field}: {detail}")]
    InvalidSetting {
        /// The setting's name.
        field: &'static str,
        /// What is wrong with its value.
        detail: String,
    },
    /// SoapySDR enumeration failed.
    #[error("enumerating devices with args {args:?} failed: {message}")]
    Enumerate {
        /// The filter args.
        args: String,
        /// The driver's message.
        message: String,
    },
    /// No device matches the args, or the driver could not open it (absent, busy, unplugged).
    #[error("cannot open device {args:?}: {message}")]
    Open {
        /// The device args.
        args: String,
        /// The driver's message.
        message: String,
    },
    /// No radio answers to the args at all (nothing enumerates): not a radio
    /// fault. The detail names the modules SoapySDR loaded and the radios it finds.
    #[error("{detail}")]
    NotFound {
        /// The device args.
        args: String,
        /// What SoapySDR loaded and found, in one line.
        detail: String,
    },
    /// A driver call failed.
    #[error("device {args:?}: {op} failed: {message}")]
    Driver {
        /// The device args.
        args: String,
        /// The call, with its value (e.g. `set frequency 100000000 Hz`).
        op: String,
        /// The driver's message.
        message: String,
    },
    /// A requested setting is outside what the device supports.
    #[error("device {args:?}: {setting} {value} is not supported (supported: {supported})")]
    Unsupported {
        /// The device args.
        args: String,
        /// Which setting (`frequency_hz`, `sample_rate_hz`, `gain_db` …).
        setting: String,
        /// The requested value.
        value: String,
        /// What the device offers.
        supported: String,
    },
    /// A streaming error: the device disappeared or the driver failed mid-stream.
    #[error("device {args:?}: stream error: {message}")]
    Stream {
        /// The device args.
        args: String,
        /// The driver's message.
        message: String,
    },
    /// The TX permit was issued for other device args than this radio's.
    #[error("tx permit is for device {permit:?}, but this radio was opened with {args:?}")]
    PermitDevice {
        /// This radio's args.
        args: String,
        /// The permit's args.
        permit: String,
    },
    /// The permit of this TX handle was already used for one transmission.
    #[error("device {args:?}: the tx permit for task {task_id} was already used")]
    PermitUsed {
        /// The device args.
        args: String,
        /// The task the permit was for.
        task_id: String,
    },
    /// The bundled rxsim module could not be installed in the cache folder.
    #[error("cannot install the bundled rxsim module at {path}: {source}")]
    SimInstall {
        /// The file or folder concerned.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The SoapySDR library cannot be loaded (Windows: `SoapySDR.dll` is loaded at
    /// the first radio call, so everything else runs without it).
    #[error(
        "{library} cannot be loaded ({detail}): radio commands need SoapySDR; on Windows install \
         PothosSDR (https://downloads.myriadrf.org/builds/PothosSDR/, \"Add PothosSDR to the \
         system PATH\"), see docs/hardware.md#windows"
    )]
    NoSoapySdr {
        /// The library file looked for.
        library: &'static str,
        /// Why it did not load.
        detail: String,
    },
    /// `use_sim()` was called after SoapySDR had already loaded its modules.
    #[error("use_sim() called after SoapySDR was already used in this process; call it first")]
    SimTooLate,
}

impl From<rxnode_dsp::Error> for Error {
    fn from(e: rxnode_dsp::Error) -> Self {
        match e {
            rxnode_dsp::Error::InvalidSetting { field, detail } => {
                Error::InvalidSetting { field, detail }
            }
            other => Error::Dsp(other),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
