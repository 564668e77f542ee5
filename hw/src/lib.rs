//! `rxnode-hw`: the only door to radios.
//!
//! SoapySDR access (enumerate, probe, open, RX stream; TX only through a handle
//! that consumed an [`rxnode_interlock::TxPermit`]), and the bundled simulated
//! radio module `rxsim` ([`use_sim`]).
//!
//! ```no_run
//! # fn main() -> Result<(), rxnode_hw::Error> {
//! use rxnode_hw::{use_sim, RxConfig, RxRadio, ReadOutcome, SampleSource};
//! use_sim()?; // before anything else touches SoapySDR
//! let mut radio = RxRadio::open("driver=rxsim,tone_hz=100.1e6")?;
//! let actual = radio.configure(&RxConfig {
//!     frequency_hz: 100e6,
//!     sample_rate_hz: 1e6,
//!     ..RxConfig::default()
//! })?;
//! let mut stream = radio.rx_stream()?;
//! let mut buf = vec![num_complex::Complex::new(0.0f32, 0.0); 4096];
//! if let ReadOutcome::Samples(n) = stream.read(&mut buf, 100_000)? {
//!     println!("{n} samples at {} S/s", actual.sample_rate_hz);
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub(crate) mod capture;
mod clock;
pub(crate) mod dsp;
mod error;
pub(crate) mod iq;
mod probe;
mod radio;
mod sim;
mod sweep;

pub use crate::capture::{
    run_capture, run_capture_ci16, CaptureSettings, CaptureStatus, CaptureSummary, Ci16Source,
    PsdTrace, ReadOutcome, SampleSource,
};
pub use crate::clock::hackrf_clkin_status;
pub use crate::dsp::{
    find_peaks, fmt_ppm, judge_clkin, median_db, ClkinConfig, ClkinEstimate, ClkinEstimator,
    ClkinReport, ClkinStatus, ClockEvidence, EvidenceItem, Peak, Spectrum, Welch, WelchConfig,
    Window,
};
pub use crate::error::{Error, Result};
pub use crate::iq::{
    IqFileRecord, IqFormat, IqInfo, IqReader, IqWriter, PeakAnnotation, RecordFormat, RecordingMeta,
};
pub use crate::{
    probe::{
        enumerate, soapysdr_load_modules, soapysdr_modules, soapysdr_search_paths,
        soapysdr_version, DeviceInfo, GainElement, ModuleLoad,
    },
    radio::{ActualSettings, RxConfig, RxRadio, RxStream, RxStreamCi16, TxRadio, TxReport},
    sim::use_sim,
    sweep::{run_sweep, HopPlan, HopStatus, SweepConfig, SweepHop, SweepReport},
};
