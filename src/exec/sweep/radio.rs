//! Opening, configuring and sweeping the radio (RX only): what the command and the
//! plan step share, and what a finished sweep holds.
pub(crate) use crate::result::sections::sweep::Clamp;
use crate::result::sections::sweep::SweepDevice;
use crate::result::Status;
use crate::store::calibration::ClockBlock;
use anyhow::{Context, Result};
use rxnode_hw::{
    run_sweep_observed, HopStatus, RxConfig, RxRadio, SweepHop, SweepProgress, SweepReport,
};
use rxnode_interlock::{GainSpec, RxSweepStep};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Why a sweep did not run.
#[derive(Debug)]
pub(crate) enum NotSwept {
    /// The device is not there or busy: `BLOCKED` (`sweep`: exit 1, a device error).
    Blocked(String),
    /// The radio cannot do what was asked (a band wholly outside its tuning range,
    /// gain elements it lacks): `BLOCKED` (`sweep`: exit 2, invalid input for this radio).
    Unsupported(String),
    /// It started and the driver failed: `FAIL`.
    Failed(String),
}

/// A finished sweep with what the radio really had.
#[derive(Debug)]
pub(crate) struct Swept {
    /// The engine's report.
    pub(crate) report: SweepReport,
    /// Device args, driver and serial.
    pub(crate) device: SweepDevice,
    /// Overall gain read back, dB.
    pub(crate) gain_db: Option<f64>,
    /// Each gain element as read back, dB.
    pub(crate) gain_elements_db: BTreeMap<String, f64>,
    /// When it started (ISO 8601).
    pub(crate) started_at: String,
    /// The radio's clock source, last frequency calibration and the correction
    /// applied (docs/protocol.md#clock).
    pub(crate) clock: ClockBlock,
    /// The band as asked, when it was clamped to the radio's tuning range.
    pub(crate) clamped: Option<Clamp>,
    /// The radio's own settings written, stream args, AGC and manual ppm.
    pub(crate) radio: rxnode_interlock::RadioSettings,
}

/// Open, configure (rate, first centre, gains — each checked by the device) and sweep.
/// With `cal.apply`, every hop is tuned with the radio's fresh frequency
/// calibration (a missing or stale one blocks the sweep, naming it). Each pass's
/// hops go to `on_pass` as soon as the pass is done ([`run_sweep_observed`]).
pub(crate) fn execute(
    asked: &RxSweepStep,
    cancel: &AtomicBool,
    cal: &crate::exec::live::CalibrationUse,
    on_pass: &mut dyn FnMut(&[SweepHop]),
) -> Result<Swept, NotSwept> {
    let started_at = crate::store::fsutil::now_iso();
    let mut radio = RxRadio::open(&asked.device)
        .map_err(|e| NotSwept::Blocked(format!("device not available: {e}")))?;
    let info = radio.probe();
    if let Some(ch) = asked.radio.channel {
        radio.set_channel(ch).map_err(blocked_or_failed)?;
    }
    let (clamped_step, clamped) = clamp_to_device(asked, &info.frequency_ranges_hz)?;
    let s = &clamped_step;
    let applied = cal
        .correction(&info)
        .map_err(|e| NotSwept::Blocked(e.to_string()))?;
    // The manual correction (`ppm`) tunes as a calibration would; the two are
    // never given together (the step's check refuses it).
    let correction_from = {
        use crate::store::calibration::CorrectionFrom;
        (applied.map(|p| (p, CorrectionFrom::Calibration)))
            .or(s.radio.ppm.map(|p| (p, CorrectionFrom::Manual)))
    };
    let correction = correction_from.map(|a| a.0);
    if let Some(ppm) = correction {
        radio
            .set_lo_correction_ppm(ppm)
            .map_err(|e| NotSwept::Blocked(e.to_string()))?;
    }
    // Tune to the first hop's centre first: the radio never sits outside the band.
    let w = &s.sweep;
    let first = w
        .grid_at(w.sample_rate_hz)
        .map(|g| w.start_hz + (g.kept_bins / 2) as f64 * w.sample_rate_hz / g.fft_size as f64)
        .unwrap_or(w.start_hz);
    let cfg = RxConfig {
        frequency_hz: first / (1.0 + correction.unwrap_or(0.0) * 1e-6),
        sample_rate_hz: w.sample_rate_hz,
        gain_db: match &s.gain_db {
            Some(GainSpec::Total(g)) => Some(*g),
            _ => None,
        },
        ..RxConfig::default()
    };
    // The device's own limits are the bound where the policy sets none.
    if let (Some(GainSpec::Elements(_)), true) = (&s.gain_db, info.gain_elements.is_empty()) {
        return Err(NotSwept::Unsupported(format!(
            "device {} lists no gain elements; give gain_db as one number",
            s.device
        )));
    }
    hops_in_range(s, &info.frequency_ranges_hz)?;
    radio.configure(&cfg).map_err(blocked_or_failed)?;
    if let Some(GainSpec::Elements(m)) = &s.gain_db {
        radio.set_gain_elements(m).map_err(blocked_or_failed)?;
    }
    // The radio's own settings (allowed by the policy), AGC and stream args.
    radio
        .write_settings(&s.radio.settings)
        .map_err(blocked_or_failed)?;
    if s.radio.agc {
        radio.set_agc(true).map_err(blocked_or_failed)?;
    }
    radio.set_stream_args(&s.radio.stream_args);
    let actual = radio
        .actual()
        .map_err(|e| NotSwept::Failed(e.to_string()))?;
    let gain_elements_db = radio.gain_elements().unwrap_or_default();
    let progress = SweepProgress::default();
    let done = AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        // Passes at an interval report one line each instead (the caller's `on_pass`).
        if crate::term::stderr_progress() && s.sweep.interval_s.is_none() {
            scope.spawn(|| progress_bar(&progress, &done));
        }
        let r = run_sweep_observed(&mut radio, &s.sweep, cancel, &progress, on_pass);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    })
    .map_err(blocked_or_failed)?;
    Ok(Swept {
        report,
        device: SweepDevice {
            args: s.device.clone(),
            driver: info.driver.clone(),
            remote: info.remote.clone(),
            serial: info.serial.clone(),
        },
        gain_db: Some(actual.gain_db),
        gain_elements_db,
        started_at,
        clamped,
        radio: s.radio.clone(),
        clock: cal.block(&info, actual.clock_source.as_deref(), correction_from),
    })
}

/// A band that runs past the radio's tuning range is narrowed so its edge hops
/// tune inside it (a hop's centre may sit at the range's edge; its bins reach
/// half a hop beyond). A band with no hop inside the range is refused.
fn clamp_to_device(
    s: &RxSweepStep,
    ranges: &[[f64; 2]],
) -> Result<(RxSweepStep, Option<Clamp>), NotSwept> {
    let (Some(lo), Some(hi)) = (
        ranges.iter().map(|r| r[0]).reduce(f64::min),
        ranges.iter().map(|r| r[1]).reduce(f64::max),
    ) else {
        return Ok((s.clone(), None));
    };
    let w = &s.sweep;
    let Some(g) = w.grid_at(w.sample_rate_hz) else {
        return Ok((s.clone(), None));
    };
    let bin = w.sample_rate_hz / g.fft_size as f64;
    let hop = g.kept_bins as f64 * bin;
    let half = (g.kept_bins / 2) as f64 * bin;
    let start = w.start_hz.max(lo - half);
    // Whole hops from `start` whose centres stay at or below `hi`.
    let fit = ((hi - start - half) / hop).floor() + 1.0;
    let stop = if fit >= 1.0 {
        w.stop_hz.min(start + fit * hop)
    } else {
        start
    };
    if stop <= start || start >= w.stop_hz {
        return Err(NotSwept::Unsupported(format!(
            "the band {:.3}–{:.3} MHz is outside the radio's tuning range {:.3}–{:.3} MHz",
            w.start_hz / 1e6,
            w.stop_hz / 1e6,
            lo / 1e6,
            hi / 1e6
        )));
    }
    if start == w.start_hz && stop == w.stop_hz {
        return Ok((s.clone(), None));
    }
    let mut c = s.clone();
    c.sweep.start_hz = start;
    c.sweep.stop_hz = stop;
    let clamp = Clamp {
        requested_start_hz: w.start_hz,
        requested_stop_hz: w.stop_hz,
        start_hz: start,
        stop_hz: stop,
        device_range_hz: [lo, hi],
    };
    tracing::info!("{}", clamp.describe());
    Ok((c, Some(clamp)))
}

/// A progress line on the operator's terminal until `done`: hop k of n, the repeat,
/// elapsed time and the time left at the pace so far.
fn progress_bar(p: &SweepProgress, done: &AtomicBool) {
    use std::sync::atomic::Ordering::Relaxed;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} sweep [{bar:24}] hop {pos}/{len} {msg} ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    while !done.load(Relaxed) {
        let (n, total, per) = (
            p.done.load(Relaxed),
            p.total.load(Relaxed),
            p.per_repeat.load(Relaxed),
        );
        bar.set_length(total);
        bar.set_position(n);
        if per > 0 && total > per {
            bar.set_message(format!(
                "(repeat {} of {})",
                (n / per + 1).min(total / per),
                total / per
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

/// Every hop's centre must be one the device can tune (when it lists its
/// ranges): refuse before streaming rather than fail hops one by one.
fn hops_in_range(s: &RxSweepStep, ranges: &[[f64; 2]]) -> Result<(), NotSwept> {
    let w = &s.sweep;
    let Some(rxnode_interlock::SweepGrid {
        fft_size: fft,
        kept_bins: k,
        hops,
        ..
    }) = w.grid_at(w.sample_rate_hz)
    else {
        return Ok(());
    };
    if ranges.is_empty() {
        return Ok(());
    }
    let bin = w.sample_rate_hz / fft as f64;
    for h in 0..hops {
        let c = w.start_hz + ((h * k) as f64 + (k / 2) as f64) * bin;
        if !ranges.iter().any(|r| r[0] <= c && c <= r[1]) {
            return Err(NotSwept::Unsupported(format!(
                "hop centre {:.3} MHz is outside the radio's tuning ranges {}",
                c / 1e6,
                ranges
                    .iter()
                    .map(|r| format!("{:.3}–{:.3} MHz", r[0] / 1e6, r[1] / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

fn blocked_or_failed(e: rxnode_hw::Error) -> NotSwept {
    match e {
        rxnode_hw::Error::Unsupported { .. } | rxnode_hw::Error::InvalidSetting { .. } => {
            NotSwept::Unsupported(e.to_string())
        }
        other => NotSwept::Failed(other.to_string()),
    }
}

/// The status of a finished sweep: PASS when every hop measured; PARTIAL when some
/// hops failed or the operator cancelled; FAIL when no hop measured.
pub(crate) fn status_of(r: &SweepReport) -> Status {
    let ok = r.hops.iter().filter(|h| h.status == HopStatus::Ok).count();
    // A band without a measurable floor (its median bin has no power: the radio
    // delivered zeros) measured nothing, whatever its hops say.
    if ok == 0 || r.noise_floor_db.is_none() {
        Status::Fail
    } else if ok == r.hops.len() && !r.cancelled {
        Status::Pass
    } else {
        Status::Partial
    }
}

/// Write `bytes` atomically, never over an existing file the operator named.
pub(super) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::store::fsutil::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
