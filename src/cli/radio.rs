//! The radio's commands (`inventory`, `capture`, `sweep`, `analyze`, `clkin`):
//! their options are the library's own types ([`rxnode::CaptureOptions`] …),
//! which clap fills directly, the shared groups (FFT, peaks, CLKIN, the radio's
//! own settings) flattened into each (docs/architecture.md#typed-at-the-edge).
use clap::Subcommand;

/// `clkin` subcommands.
#[derive(Debug, Subcommand)]
pub enum ClkinCmd {
    /// Two radios stream at once on one tone of any accuracy: SLAVE's clock relative
    /// to MASTER's, in ppb, LOCKED (with an external reference), AGREE or UNLOCKED (RX only).
    Compare(rxnode::ClkinCompareOptions),
    /// Measure a radio's absolute frequency error from a broadcast signal (GSM FCCH,
    /// LTE PSS/SSS), no generator and no prior estimate needed within ±60 ppm; RX only.
    Calibrate(rxnode::CalibrateOptions),
}
