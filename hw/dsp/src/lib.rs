//! `rxnode-dsp`: rxnode's pure signal processing, cut from `rxnode-hw`.
//!
//! Windows, the streaming Welch PSD (with fused SIMD kernels where the CPU has
//! them, else rustfft), peaks and the noise floor, the CLKIN estimator, the IQ
//! file readers and writers (cf32, cs16, cs8, WAV, SigMF), the stitching of
//! sweep hops into one spectrum, and the capture engine over any
//! [`SampleSource`] — a radio stream from `rxnode-hw`, or a recorded file
//! through [`FileSource`].
//!
//! No SoapySDR, no build script, no radio: this crate builds without g++ or
//! libsoapysdr, so its benches, proptests and the IQ fuzzer do too. The DSP
//! works on slices and does no I/O; only `iq` and the capture engine's
//! recorder touch files, and every file is opened for reading through
//! [`open_regular`], which refuses a FIFO or a device without blocking on it.
//!
//! The SIMD kernels (`dsp/simd_psd*`) use `std::arch` intrinsics behind
//! `#[target_feature]` and run-time CPU detection, so this crate cannot
//! `#![forbid(unsafe_code)]`; each `unsafe` block states its `SAFETY`, and the
//! kernels are tested bin for bin against rustfft.
//!
//! ```
//! # fn main() -> Result<(), rxnode_dsp::Error> {
//! use num_complex::Complex;
//! use rxnode_dsp::{Welch, WelchConfig};
//! // A tone 100 kHz above the centre, sampled at 1 MS/s.
//! let rate = 1e6;
//! let tone: Vec<Complex<f32>> = (0..65_536)
//!     .map(|n| {
//!         let ph = 2.0 * std::f64::consts::PI * 100e3 * n as f64 / rate;
//!         Complex::new(ph.cos() as f32, ph.sin() as f32) * 0.5
//!     })
//!     .collect();
//! let mut welch = Welch::new(WelchConfig::new(1024, rate))?;
//! welch.feed(&tone);
//! let spectrum = welch.finish();
//! let strongest = &spectrum.peaks[0];
//! assert!((strongest.frequency_hz - 100e3).abs() < 2.0 * spectrum.bin_hz);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
// No unwrap/expect in product code: every failure on input is an error that names it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod capture;
mod dsp;
mod error;
mod iq;
mod regular;
mod stitch;

pub use crate::{
    capture::{
        dsp_speed, run_capture, run_capture_native, run_capture_with_hook, CaptureSettings,
        CaptureStatus, CaptureSummary, DspSpeed, EngineSample, FileSource, NativeSource, PsdTrace,
        ReadOutcome, SampleSource, Silence, SilentRun, LISTED_SILENT_RUNS, MIN_SILENT_RUN,
    },
    dsp::{
        compare_tracks, confirm_carrier, find_peaks, fmt_emission, fmt_floor_band, fmt_ppm,
        fmt_sigma, fmt_snr, fmt_uncertain, freq_cal_estimator, is_external_clock, judge_clkin,
        judge_compare, median_db, offset_for_ppm, ppm_decimals, ppm_from_offset,
        uncertainty_decimals, why_no_floor, with_cell_uncertainty, Checked, Checks, ClkinConfig,
        ClkinEstimate, ClkinEstimator, ClkinReport, ClkinStatus, ClkinTone, ClockEvidence,
        EvidenceItem, FcchEstimator, FreqCalConfig, FreqCalDetection, FreqCalError,
        FreqCalEstimate, FreqCalEstimator, FreqCalEvidence, FreqCalMethod, GsmScene, LteCell,
        LteFrame, LteScene, Peak, PeakReference, Spectrum, Welch, WelchConfig, WelchSample, Window,
        CELL_TOLERANCE_PPM, CELL_UNCERTAINTY_PPM, LTE_UNAVAILABLE, MAX_CLIPPED_FRACTION, NOISELESS,
        NOT_LEVEL, RESOLUTION_DB, ROUNDING_SPURS_DB, SATURATED, UNEVEN_DB,
    },
    dsp::{equivalent_averages, NoiseLevels, FALSE_ALARM_PER_SPECTRUM},
    dsp::{
        run_scene, CompareEstimate, CompareVerdict, Knowable, SceneKind, SceneOutcome,
        SceneSummary, ToneTrack, ToneTrackConfig, ToneTracker, COMPARE_SEARCH_PPM, MIN_POINTS,
        MIN_POINT_SNR_DB, TRACE_POINTS,
    },
    error::{Error, Result},
    iq::{
        is_stream_target, sigmf::rxnode_extension_schema as sigmf_rxnode_schema, Datatype,
        IqFileRecord, IqFormat, IqInfo, IqReader, IqWriter, NativeIq, PeakAnnotation, RecordFormat,
        RecordingMeta, STDOUT_TARGET,
    },
    regular::{
        not_regular, open_fifo_write, open_regular, open_regular_nofollow, open_regular_write,
        read_regular, read_regular_to_string, write_regular, NotRegular, WriteMode,
    },
    stitch::{
        band_peaks, band_threshold_db, why_no_band_floor, HopPlacement, Stitcher, BAND_MIN_SNR_DB,
    },
};
