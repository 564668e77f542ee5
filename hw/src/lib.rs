//! `rxnode-hw`: the only door to radios.
#![deny(missing_docs)]
pub(crate) mod capture;
pub(crate) mod dsp;
mod error;
pub(crate) mod iq;

pub use crate::capture::{
    run_capture, CaptureSettings, CaptureStatus, CaptureSummary, PsdTrace, ReadOutcome,
    SampleSource,
};
pub use crate::dsp::{
    find_peaks, judge_clkin, median_db, ClkinConfig, ClkinEstimate, ClkinEstimator, ClkinReport,
    ClkinStatus, ClockEvidence, EvidenceItem, Peak, Spectrum, Welch, WelchConfig, Window,
};
pub use crate::error::{Error, Result};
pub use crate::iq::{IqFileRecord, IqFormat, IqInfo, IqReader, IqWriter, RecordingMeta};
