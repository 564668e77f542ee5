//! `rxnode-hw`: the only door to radios.
//!
//! SoapySDR access (enumerate, probe, open, RX stream; TX only through a handle
//! that consumed an [`rxnode_interlock::TxPermit`], in `radio/tx.rs`), clocks,
//! radio-driven sweeps, and the bundled simulated radio module `rxsim`
//! ([`use_sim`]). The DSP, the IQ files and the capture engine are in the pure
//! crate `rxnode-dsp` (`hw/dsp/`); a radio stream is one of its `SampleSource`s.
//!
//! ```no_run
//! # fn main() -> Result<(), rxnode_hw::Error> {
//! use rxnode_dsp::{ReadOutcome, SampleSource};
//! use rxnode_hw::{use_sim, RxConfig, RxRadio};
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
// No unwrap/expect in product code: every failure on input is an error that names it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod clock;
mod error;
mod library;
mod probe;
mod radio;
mod sim;
mod sweep;

pub use crate::{
    clock::hackrf_clkin_status,
    error::{Error, Result},
    library::soapysdr_available,
    probe::{
        enumerate, resolve_unit, soapysdr_load_modules, soapysdr_modules, soapysdr_search_paths,
        soapysdr_version, why_absent, DeviceInfo, GainElement, ModuleLoad, LOCAL_RADIOS,
    },
    radio::{
        ActualSettings, RxConfig, RxRadio, RxStream, RxStreamCi16, RxStreamNative, TxRadio,
        TxReport,
    },
    sim::{sim_in_use, use_sim},
    sweep::{
        run_sweep, run_sweep_observed, run_sweep_with_progress, HopPlan, HopStatus, SweepConfig,
        SweepHop, SweepProgress, SweepReport,
    },
};
