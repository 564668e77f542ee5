//! Pure DSP: windows, streaming Welch PSD, peaks and noise floor, the CLKIN estimator.
//!
//! Slices in, results out: no I/O, and no allocation once a processor is built.
pub(crate) mod clkin;
pub(crate) mod clkin_compare;
pub(crate) mod floor;
pub(crate) mod freqcal;
pub(crate) mod honest;
pub(crate) mod noise_stats;
pub(crate) mod peaks;
pub(crate) mod scenes;
// Only x86_64 builds the kernels; elsewhere `SimdPsd::new` is always `None`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) mod simd_psd;
pub(crate) mod welch;
pub(crate) mod window;

pub use clkin::{
    fmt_ppm, is_external_clock, judge_clkin, ppm_decimals, ClkinConfig, ClkinEstimate,
    ClkinEstimator, ClkinReport, ClkinStatus, ClkinTone, ClockEvidence, EvidenceItem,
};
pub use clkin_compare::{
    compare_tracks, judge_compare, CompareEstimate, CompareVerdict, ToneTrack, ToneTrackConfig,
    ToneTracker, COMPARE_SEARCH_PPM, MIN_POINTS, MIN_POINT_SNR_DB, TRACE_POINTS,
};
pub use floor::{fmt_floor_band, NOT_LEVEL, UNEVEN_DB};
pub use freqcal::{
    confirm_carrier, freq_cal_estimator, offset_for_ppm, ppm_from_offset, with_cell_uncertainty,
    FcchEstimator, FreqCalConfig, FreqCalDetection, FreqCalError, FreqCalEstimate,
    FreqCalEstimator, FreqCalEvidence, FreqCalMethod, GsmScene, LteCell, LteFrame, LteScene,
    CELL_TOLERANCE_PPM, CELL_UNCERTAINTY_PPM, LTE_UNAVAILABLE,
};
pub use honest::{fmt_sigma, fmt_uncertain, uncertainty_decimals, Checked, Checks};
pub use noise_stats::{equivalent_averages, NoiseLevels, FALSE_ALARM_PER_SPECTRUM};
pub use peaks::{
    find_peaks, fmt_emission, fmt_snr, median_db, why_no_floor, Emissions, Peak, PeakReference,
    NOISELESS,
};
pub use scenes::{run_scene, Knowable, SceneKind, SceneOutcome, SceneSummary};
pub use welch::{
    Spectrum, Welch, WelchConfig, WelchSample, MAX_CLIPPED_FRACTION, RESOLUTION_DB,
    ROUNDING_SPURS_DB, SATURATED,
};
pub use window::Window;
