//! The radio self-test (docs/protocol.md#8-radio-health): read-only — open the radio,
//! one short capture at safe settings (the lowest gain, a modest rate, a quarter of
//! a second, within the RX policy), then check that every sample arrived, with no
//! overflow, no read timeout, no stall, almost no clipping, and CLKIN when the
//! policy gives the radio a reference tone. Never transmits.
use crate::radio::live::{self, LiveCapture, NotCaptured};
use crate::store::health::{self, Event, RadioHealth};
use crate::store::paths::Paths;
use anyhow::Result;
use rxnode_dsp::{CaptureStatus, CaptureSummary, RecordFormat};
use rxnode_hw::{DeviceInfo, RxRadio};
use rxnode_interlock::{ClkinSpec, Policy};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// The self-test's capture length, seconds (shortened to the RX policy's limit).
pub(crate) const SELF_TEST_S: f64 = 0.25;
/// The self-test's preferred sample rate (moved into the radio's and the policy's range).
const SELF_TEST_RATE: f64 = 1e6;
/// The self-test's preferred frequency when no reference tone is configured.
const SELF_TEST_HZ: f64 = 100e6;
/// The largest fraction of clipped samples a passing self-test may have (a capture's
/// spectrum is not measured beyond it either).
const MAX_CLIPPED: f64 = rxnode_dsp::MAX_CLIPPED_FRACTION;

/// One self-test and what it did to the radio's health.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SelfTest {
    /// The device args tested.
    pub(crate) device: String,
    /// `PASS`, `FAIL`, or `NOT RUN` (another rxnode held the radio).
    pub(crate) outcome: &'static str,
    /// What was measured, or every reason it failed.
    pub(crate) reason: String,
    /// The radio's record after this test (`None` when it could not be stored).
    pub(crate) health: Option<RadioHealth>,
    /// Why the record could not be stored, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) store_error: Option<String>,
}

impl SelfTest {
    /// Whether it passed.
    pub(crate) fn passed(&self) -> bool {
        self.outcome == "PASS"
    }
}

/// The reference tone the policy gives these device args, if any (matched by the
/// radio's identity, so `b=2,a=1` finds the entry for `a=1,b=2`).
pub(crate) fn clkin_for<'p>(policy: &'p Policy, device: &str) -> Option<&'p ClkinSpec> {
    let id = health::identity(device);
    policy
        .health
        .as_ref()?
        .clkin
        .iter()
        .find(|(k, _)| health::identity(k) == id)
        .map(|(_, v)| v)
}

/// Take the radio's lock (one process per radio), test it and record the outcome.
/// A radio another rxnode holds is not tested: the outcome is `NOT RUN`, naming the
/// holder, and nothing is recorded.
pub(crate) fn test_and_record(
    paths: &Paths,
    policy: &Policy,
    device: &str,
    command: &str,
) -> SelfTest {
    let _held = match crate::store::radio_lock::RadioLock::acquire(paths, device, command) {
        Ok(l) => l,
        Err(e) => {
            return SelfTest {
                device: device.to_owned(),
                outcome: "NOT RUN",
                reason: format!("not tested: {e:#}"),
                health: health::lookup(paths, device).ok().flatten(),
                store_error: None,
            }
        }
    };
    test_and_record_held(paths, policy, device)
}

/// Test `device`, whose radio lock the caller holds, and record the outcome in the
/// health store (a ledger line for the test, another when its health changes).
pub(crate) fn test_and_record_held(paths: &Paths, policy: &Policy, device: &str) -> SelfTest {
    // No such radio on this machine (a missing module, a forgotten --sim): not a
    // radio fault, so nothing is recorded and its health stays what it was.
    if let Some(why) = crate::radio::absent(device) {
        return SelfTest {
            device: device.to_owned(),
            outcome: "NOT RUN",
            reason: why,
            health: health::lookup(paths, device).ok().flatten(),
            store_error: None,
        };
    }
    let cancel = AtomicBool::new(false);
    let (ok, reason) = match run(policy, device, &cancel) {
        Ok(measured) => (true, measured),
        Err(why) => (false, why),
    };
    let (health, store_error) = match health::record(
        paths,
        device,
        &Event::SelfTest {
            ok,
            reason: reason.clone(),
        },
    ) {
        Ok(r) => (Some(r), None),
        Err(e) => {
            tracing::warn!("cannot record the self-test of {device}: {e:#}");
            (None, Some(format!("{e:#}")))
        }
    };
    SelfTest {
        device: device.to_owned(),
        outcome: if ok { "PASS" } else { "FAIL" },
        reason,
        health,
        store_error,
    }
}

/// The self-test proper: `Ok(what was measured)` or `Err(every reason it failed)`.
fn run(policy: &Policy, device: &str, cancel: &AtomicBool) -> Result<String, String> {
    let info = {
        let radio = RxRadio::open(device).map_err(|e| format!("cannot open the radio: {e}"))?;
        radio.probe()
    };
    let clkin = clkin_for(policy, device).cloned();
    let c = safe_capture(policy, device, &info, clkin)?;
    let summary = live::capture(&c, None, cancel, false).map_err(|e| match e {
        NotCaptured::Blocked(why)
        | NotCaptured::OverLimit(why)
        | NotCaptured::Unsupported(why)
        | NotCaptured::Failed(why) => {
            format!("the test capture did not run: {why}")
        }
    })?;
    judge(&summary)
}

/// The capture a self-test makes: the lowest gain, a rate near 1 MS/s, a quarter of
/// a second, all within the radio's ranges and the RX policy; tuned beside the
/// reference tone when there is one, else near 100 MHz.
fn safe_capture(
    policy: &Policy,
    device: &str,
    info: &DeviceInfo,
    clkin: Option<ClkinSpec>,
) -> Result<LiveCapture, String> {
    let mut rate = SELF_TEST_RATE;
    if let Some(max) = policy.rx.max_sample_rate_hz {
        rate = rate.min(max);
    }
    rate = clamp_into(rate, &info.sample_rate_ranges_hz);
    let gain = info.gain_range_db.map(|[lo, _]| lo).or(Some(0.0));
    if let (Some(g), Some(max)) = (gain, policy.rx.max_gain_db) {
        if g > max {
            return Err(format!(
                "the radio's lowest gain {g} dB is above rx.max_gain_db {max}: no self-test within the policy"
            ));
        }
    }
    // Beside the reference (a quarter of the band off, away from DC), else 100 MHz.
    let want_hz = clkin
        .as_ref()
        .map_or(SELF_TEST_HZ, |k| k.tone_hz - rate / 4.0);
    let frequency_hz = clamp_into(want_hz, &info.frequency_ranges_hz);
    let duration_s = SELF_TEST_S.min(policy.rx.max_duration_s);
    Ok(LiveCapture {
        device: device.to_owned(),
        frequency_hz,
        sample_rate_hz: rate,
        gain_db: gain,
        gain_elements: None,
        bandwidth_hz: None,
        antenna: None,
        clock_source: None,
        duration_s,
        fft_size: 1024,
        clkin,
        record: None,
        record_format: RecordFormat::Cf32,
        max_iq_bytes: Some(0),
        max_peaks: rxnode_interlock::DEFAULT_MAX_PEAKS,
        min_snr_db: rxnode_interlock::DEFAULT_MIN_SNR_DB,
        calibration: None,
        radio: Default::default(),
    })
}

/// `v`, or the nearest value inside one of `ranges` (`v` when none are known).
fn clamp_into(v: f64, ranges: &[[f64; 2]]) -> f64 {
    if ranges.is_empty() || ranges.iter().any(|[lo, hi]| *lo <= v && v <= *hi) {
        return v;
    }
    ranges
        .iter()
        .map(|[lo, hi]| v.clamp(*lo, hi.max(*lo)))
        .min_by(|a, b| (a - v).abs().total_cmp(&(b - v).abs()))
        .unwrap_or(v)
}

/// PASS only when every sample arrived with no overflow, timeout or stall, almost
/// nothing clipped, and CLKIN (when checked) passed; otherwise every reason.
fn judge(s: &CaptureSummary) -> Result<String, String> {
    let mut why = Vec::new();
    if s.samples_received < s.samples_requested {
        why.push(format!(
            "{} of {} samples received",
            s.samples_received, s.samples_requested
        ));
    }
    if s.overflows > 0 {
        why.push(format!("{} overflow(s)", s.overflows));
    }
    if s.timeouts > 0 {
        why.push(format!("{} read timeout(s)", s.timeouts));
    }
    if s.clipped_fraction > MAX_CLIPPED {
        why.push(format!(
            "{:.1} % of samples clipped at the lowest gain",
            s.clipped_fraction * 100.0
        ));
    }
    if let Some(k) = &s.clkin {
        if k.status != rxnode_dsp::ClkinStatus::Pass {
            why.push(format!(
                "CLKIN {:?}: {}",
                k.status,
                k.ppm
                    .map(|p| format!("{p:+.3} ppm (tolerance {} ppm)", k.tolerance_ppm))
                    .unwrap_or_else(|| "reference not found".to_owned())
            ));
        }
    }
    why.extend(s.errors.iter().cloned());
    if s.status != CaptureStatus::Pass && why.is_empty() {
        why.push(format!("the test capture ended {:?}", s.status));
    }
    if !why.is_empty() {
        return Err(why.join("; "));
    }
    let mut ok = format!(
        "{} samples at {:.3} MS/s, no overflow, no timeout",
        s.samples_received,
        s.actual
            .get("sample_rate_hz")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0)
            / 1e6
    );
    if let Some(p) = s.clkin.as_ref().and_then(|k| k.ppm) {
        ok.push_str(&format!(", CLKIN {p:+.3} ppm"));
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_moved_into_the_radios_ranges() {
        assert_eq!(clamp_into(1e6, &[]), 1e6);
        assert_eq!(clamp_into(1e6, &[[2e6, 20e6]]), 2e6);
        assert_eq!(clamp_into(100e6, &[[24e6, 1766e6]]), 100e6);
        assert_eq!(clamp_into(5e6, &[[1e6, 2e6], [8e6, 9e6]]), 2e6);
        assert_eq!(clamp_into(7e6, &[[1e6, 2e6], [8e6, 9e6]]), 8e6);
    }
}
