//! Frequency calibration from a broadcast signal: a radio's absolute frequency
//! error, with no generator and no prior estimate (docs/operator.md#calibrating-a-radio-without-a-generator).
//!
//! One estimate type ([`FreqCalEstimate`]) and one streaming estimator trait
//! ([`FreqCalEstimator`]) serve every method; each method (GSM FCCH in `gsm`,
//! LTE PSS/SSS) is a type implementing the trait, built by [`freq_cal_estimator`].
//!
//! # Sign convention
//!
//! `ppm > 0` means the radio's clock runs fast: tuned to `fc` its LO really sits at
//! `fc·(1 + ppm·1e-6)`, and its sample clock runs fast by the same factor, since one
//! crystal drives both (rxsim's `ppm` device arg means exactly this). A signal at RF
//! `f` then appears at baseband offset `(f − fc·(1+e))/(1+e)` (`e = ppm·1e-6`), so the
//! error follows from the feature's known RF frequency and its observed offset:
//! `1 + e = f / (fc + offset)` ([`ppm_from_offset`]). To correct, tune to
//! `fc / (1 + e)` (about `fc·(1 − e)`) and take the sample rate as `rate·(1 + e)`.
use crate::dsp::honest::Checked;
use num_complex::Complex;
use serde::{Deserialize, Serialize};

mod fir;
pub(crate) mod gsm;
pub(crate) mod lte;
pub(crate) mod synth;

pub use gsm::FcchEstimator;
pub use lte::{LteCell, LteFrame, LteScene};
pub use synth::GsmScene;

/// The broadcast signal an estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FreqCalMethod {
    /// An LTE downlink's synchronisation signals (PSS/SSS).
    Lte,
    /// A GSM BCCH carrier's frequency-correction bursts (FCCH).
    Gsm,
}

impl FreqCalMethod {
    /// The protocol spelling: `lte` or `gsm`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lte => "lte",
            Self::Gsm => "gsm",
        }
    }
}

/// What an estimator knows before the first sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FreqCalConfig {
    /// The frequency the radio was tuned to (Hz, as read back from the driver).
    pub center_hz: f64,
    /// The sample rate (Hz, as read back from the driver).
    pub sample_rate_hz: f64,
    /// Where the broadcast carrier is (absolute RF Hz): for GSM the BCCH carrier
    /// (its ARFCN's downlink frequency), for LTE the downlink's centre.
    pub carrier_hz: f64,
    /// The largest radio error searched, ± ppm (60 by default).
    pub max_error_ppm: f64,
}

impl FreqCalConfig {
    /// A radio tuned to `center_hz` at `sample_rate_hz` looking at a carrier at
    /// `carrier_hz`, searched over ±60 ppm.
    pub fn new(carrier_hz: f64, center_hz: f64, sample_rate_hz: f64) -> Self {
        Self {
            center_hz,
            sample_rate_hz,
            carrier_hz,
            max_error_ppm: 60.0,
        }
    }
}

/// One detection that went into an estimate (one FCCH burst, one PSS): what the
/// picture shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FreqCalDetection {
    /// When it started, seconds from the first sample.
    pub time_s: f64,
    /// The feature's observed baseband offset (Hz).
    pub offset_hz: f64,
    /// The radio error this detection alone gives (ppm).
    pub ppm: f64,
    /// Its strength: the feature's SNR in its own bandwidth (dB).
    pub snr_db: f64,
    /// `false` when outlier rejection left it out of the combined value.
    pub used: bool,
}

/// The evidence behind an estimate, for the picture and the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FreqCalEvidence {
    /// Every detection, in time order.
    pub detections: Vec<FreqCalDetection>,
    /// The baseband offset where the feature would be with a perfect clock (Hz).
    pub nominal_offset_hz: f64,
    /// The searched offsets `[low, high]` (Hz).
    pub search_hz: [f64; 2],
    /// Seconds of samples the estimator saw.
    pub seconds_analysed: f64,
}

/// A radio's absolute frequency error (docs/protocol.md#freq_cal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FreqCalEstimate {
    /// The radio's error, ppm (> 0: its clock runs fast; see the module docs).
    pub ppm: f64,
    /// One-sigma (standard) uncertainty of `ppm` as the radio's error: the
    /// measurement's own ([`measurement_uncertainty_ppm`](Self::measurement_uncertainty_ppm))
    /// and the cell's own frequency error ([`CELL_UNCERTAINTY_PPM`]) in quadrature.
    pub uncertainty_ppm: f64,
    /// One-sigma uncertainty of the measurement against the cell alone (from the
    /// spread of the detections): how well the cell's frequency was seen, not how
    /// well the radio's error is known.
    pub measurement_uncertainty_ppm: f64,
    /// The signal it comes from.
    pub method: FreqCalMethod,
    /// Which cell: for GSM the carrier (`"BCCH 935.2 MHz"`), for LTE its PCI
    /// (`"PCI 123 at 806.0 MHz"`).
    pub cell: String,
    /// How sure the estimator is that it locked to the right signal, 0..1.
    pub confidence: f64,
    /// LTE: the cell's PCI when its SSS was decoded (`None` for GSM, or when no
    /// SSS hypothesis stood out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci: Option<u16>,
    /// LTE: the cell's frame structure, `"fdd"` or `"tdd"` (`None` for GSM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<&'static str>,
    /// Detections used and rejected, for the picture.
    pub evidence: FreqCalEvidence,
    /// The assumptions checked in the data (docs/operator.md#numbers-that-are-true-or-absent).
    pub checked: Checked,
}

/// A base station's own frequency error: 3GPP TS 45.005 §6.1 (GSM BTS) and
/// TS 36.104 §6.5.1 (LTE wide area BS) allow ±0.05 ppm. The estimators measure the
/// radio against the cell, so every radio error carries this term.
pub const CELL_TOLERANCE_PPM: f64 = 0.05;
/// The cell's frequency error as a standard uncertainty: the ±0.05 ppm tolerance
/// read as a rectangular distribution (GUM 4.3.7: a/√3), 0.0289 ppm.
pub const CELL_UNCERTAINTY_PPM: f64 = CELL_TOLERANCE_PPM / 1.732_050_807_568_877_2;

/// The radio error's one-sigma uncertainty from a measurement's own: the cell's
/// frequency error ([`CELL_UNCERTAINTY_PPM`]) added in quadrature.
pub fn with_cell_uncertainty(measurement_uncertainty_ppm: f64) -> f64 {
    measurement_uncertainty_ppm.hypot(CELL_UNCERTAINTY_PPM)
}

/// Why an estimator gives no number.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FreqCalError {
    /// The signal was not found in the samples (`"no GSM FCCH found"`): the
    /// step is FAIL.
    #[error("{0}")]
    NotFound(String),
    /// An estimate was made but its carrier is not confirmed (off its channel
    /// raster, or an LTE cell not identified): the number is not the radio's error
    /// and is dropped; the step is FAIL.
    #[error("{0}")]
    NotConfirmed(String),
    /// This build has no estimator for the method: the step is NOT RUN.
    #[error("{0}")]
    Unavailable(String),
    /// The settings cannot work (the search range does not fit the sample rate …):
    /// the step is BLOCKED before any radio opens.
    #[error("{field}: {detail}")]
    InvalidSetting {
        /// The setting's name.
        field: &'static str,
        /// What is wrong with its value.
        detail: String,
    },
}

/// A streaming frequency estimator: blocks of samples in, one estimate out.
///
/// # What an implementation must do
///
/// - Be built from a [`FreqCalConfig`] (centre, sample rate, the carrier's RF
///   frequency, the ± ppm range) by a constructor that checks it and returns
///   [`FreqCalError::InvalidSetting`] naming the field when the search range does not
///   fit the sample rate; add its arm to [`freq_cal_estimator`].
/// - [`feed`](Self::feed) is called on the capture engine's DSP thread with every
///   block of samples in order (any length, possibly 0; samples at
///   `sample_rate_hz` around `center_hz`). It must not allocate per block (plan FFTs
///   and buffers in the constructor) and must keep bounded memory: no whole-capture
///   buffer; what grows with time is at most a small record per detection.
/// - It needs no prior estimate: the error may be anywhere in ± `max_error_ppm`.
/// - [`finish`](Self::finish) returns the estimate — whose [`Checked`] proof comes
///   only from [`crate::Checks::pass`] after every assumption was checked in the data
///   (one crystal, inside ± `max_error_ppm` …) — or
///   [`FreqCalError::NotFound`] (`"no LTE cell found"`) when the signal is not
///   there — never a number it does not have. `ppm` follows the sign convention of
///   this module and accounts for the sample clock sharing the crystal: use
///   [`ppm_from_offset`] with the feature's known RF frequency.
/// - `measurement_uncertainty_ppm` is one standard deviation of `ppm` from the
///   spread of the individual detections (after outlier rejection), not a fixed
///   figure; `uncertainty_ppm` is that with the cell's own frequency error added
///   ([`with_cell_uncertainty`]);
///   `confidence` is in 0..=1; `cell` names what was measured; `evidence` holds one
///   [`FreqCalDetection`] per detection (time, offset, ppm, SNR, used).
pub trait FreqCalEstimator: Send {
    /// The method this estimator implements.
    fn method(&self) -> FreqCalMethod;
    /// Process the next block of samples.
    fn feed(&mut self, block: &[Complex<f32>]);
    /// Samples seen so far.
    fn samples_seen(&self) -> u64;
    /// The estimate from everything fed, or why there is none.
    fn finish(&mut self) -> Result<FreqCalEstimate, FreqCalError>;
}

/// What an LTE step ends with in a build without the LTE estimator.
pub const LTE_UNAVAILABLE: &str = "lte estimator not available in this build";

/// The estimator for `method`, checked against `config`.
pub fn freq_cal_estimator(
    method: FreqCalMethod,
    config: FreqCalConfig,
) -> Result<Box<dyn FreqCalEstimator>, FreqCalError> {
    match method {
        FreqCalMethod::Gsm => Ok(Box::new(gsm::FcchEstimator::new(config)?)),
        FreqCalMethod::Lte => Ok(Box::new(lte::LteEstimator::new(config)?)),
    }
}

/// The GSM channel raster (3GPP TS 45.005 §2): every ARFCN's carrier frequency is a
/// multiple of 200 kHz in every band (GSM 450/480/850/900, DCS 1800, PCS 1900).
pub const GSM_RASTER_HZ: f64 = 200e3;
/// The LTE channel raster (3GPP TS 36.101 §5.7.2): every EARFCN's carrier frequency is
/// a multiple of 100 kHz.
pub const LTE_RASTER_HZ: f64 = 100e3;
/// How far (fraction of the carrier) a broadcast carrier may sit from its raster
/// channel: a base station's own frequency accuracy, ±0.05 ppm (3GPP TS 45.005 /
/// TS 36.104), plus 1 Hz for the carrier as the task writes it.
pub const CARRIER_TOLERANCE: f64 = 0.05e-6;

/// Whether an estimate measured the radio against the carrier it names: the error
/// follows from the carrier's known frequency, so a carrier the estimator was told
/// about is only known when it lies on its method's channel raster (GSM 200 kHz, LTE
/// 100 kHz) — an estimate "of the radio" against a carrier tuned off the raster is
/// the tuning offset, not the radio's error — and, for LTE, when the cell was
/// identified (its PCI decoded from the SSS). `Err` says why the number is not the
/// radio's error (docs/operator.md#calibrating-a-radio-without-a-generator).
pub fn confirm_carrier(estimate: &FreqCalEstimate, carrier_hz: f64) -> Result<(), FreqCalError> {
    confirm(estimate, carrier_hz).map_err(FreqCalError::NotConfirmed)
}

fn confirm(estimate: &FreqCalEstimate, carrier_hz: f64) -> Result<(), String> {
    let (raster, name) = match estimate.method {
        FreqCalMethod::Gsm => (GSM_RASTER_HZ, "GSM ARFCN"),
        FreqCalMethod::Lte => (LTE_RASTER_HZ, "LTE EARFCN"),
    };
    if !carrier_hz.is_finite() || carrier_hz <= 0.0 {
        return Err(format!(
            "the carrier frequency {carrier_hz} Hz is not a frequency"
        ));
    }
    let channel = (carrier_hz / raster).round() * raster;
    let off = carrier_hz - channel;
    let tol = CARRIER_TOLERANCE * carrier_hz + 1.0;
    if off.abs() > tol {
        return Err(format!(
            "carrier not confirmed: {:.6} MHz is {:+.3} kHz from the nearest {name} raster channel \
             ({:.6} MHz, raster {:.0} kHz, tolerance ±{:.0} Hz), so the measured offset would be the \
             tuning error, not the radio's (it would read {:+.2} ppm); no calibration kept — fix: set \
             frequency_hz to the carrier's channel frequency",
            carrier_hz / 1e6,
            off / 1e3,
            channel / 1e6,
            raster / 1e3,
            tol,
            estimate.ppm
        ));
    }
    if estimate.method == FreqCalMethod::Lte && estimate.pci.is_none() {
        return Err(format!(
            "carrier not confirmed: the LTE cell's SSS was not decoded ({}), so it is not known \
             to be a cell; no calibration kept — fix: measure longer or at a stronger cell",
            estimate.cell
        ));
    }
    Ok(())
}

/// The radio error (ppm) from a feature at absolute RF `rf_hz` observed at baseband
/// `offset_hz` by a radio tuned to `center_hz`, whose LO and sample clock share one
/// crystal: `1 + e = rf_hz / (center_hz + offset_hz)`.
pub fn ppm_from_offset(rf_hz: f64, center_hz: f64, offset_hz: f64) -> f64 {
    (rf_hz / (center_hz + offset_hz) - 1.0) * 1e6
}

/// The baseband offset at which a radio with error `ppm`, tuned to `center_hz`,
/// sees a feature at absolute RF `rf_hz` (the inverse of [`ppm_from_offset`]).
pub fn offset_for_ppm(rf_hz: f64, center_hz: f64, ppm: f64) -> f64 {
    let k = 1.0 + ppm * 1e-6;
    (rf_hz - center_hz * k) / k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ppm_and_offset_are_inverse_and_fast_clock_is_positive() {
        let (rf, fc) = (935.2e6 + 67_708.3, 935.2e6);
        for ppm in [-60.0, -3.2, 0.0, 0.7, 60.0] {
            let off = offset_for_ppm(rf, fc, ppm);
            assert!((ppm_from_offset(rf, fc, off) - ppm).abs() < 1e-9, "{ppm}");
        }
        // A fast LO sits above the carrier: the tone appears lower.
        assert!(offset_for_ppm(rf, fc, 10.0) < 67_708.3 - 9_000.0);
    }

    fn est(method: FreqCalMethod, pci: Option<u16>) -> FreqCalEstimate {
        FreqCalEstimate {
            ppm: 21.38,
            uncertainty_ppm: with_cell_uncertainty(0.01),
            measurement_uncertainty_ppm: 0.01,
            method,
            cell: "x".into(),
            confidence: 0.9,
            pci,
            duplex: None,
            evidence: FreqCalEvidence::default(),
            checked: crate::dsp::honest::Checks::new()
                .pass()
                .unwrap_or_else(|e| panic!("{e}")),
        }
    }

    #[test]
    fn only_a_carrier_on_its_raster_and_an_identified_cell_confirm() {
        let g = est(FreqCalMethod::Gsm, None);
        assert_eq!(confirm_carrier(&g, 935.2e6), Ok(()));
        assert!(matches!(
            confirm_carrier(&g, 935.18e6),
            Err(FreqCalError::NotConfirmed(_))
        ));
        let confirm_carrier = confirm;
        assert_eq!(confirm_carrier(&g, 1805.2e6), Ok(()));
        assert_eq!(confirm_carrier(&g, 935.2e6 + 40.0), Ok(()));
        let e = confirm_carrier(&g, 935.18e6).unwrap_err();
        assert!(e.contains("-20.000 kHz") && e.contains("GSM ARFCN"), "{e}");
        assert!(confirm_carrier(&g, 935.3e6).is_err());
        let l = est(FreqCalMethod::Lte, Some(77));
        assert_eq!(confirm_carrier(&l, 806.0e6), Ok(()));
        assert_eq!(confirm_carrier(&l, 806.1e6), Ok(()));
        assert!(confirm_carrier(&l, 806.05e6).is_err());
        let e = confirm_carrier(&est(FreqCalMethod::Lte, None), 806e6).unwrap_err();
        assert!(e.contains("SSS was not decoded"), "{e}");
        assert!(confirm_carrier(&g, f64::NAN).is_err());
    }

    #[test]
    fn lte_builds_its_estimator() {
        let r = freq_cal_estimator(FreqCalMethod::Lte, FreqCalConfig::new(806e6, 806e6, 1.92e6));
        assert_eq!(r.map(|e| e.method()), Ok(FreqCalMethod::Lte));
    }
}
