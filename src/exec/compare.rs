//! CLKIN by comparison (docs/operator.md#verifying-a-slaves-clkin): MASTER and SLAVE
//! stream at once, each on a thread of its own, and the relative frequency of SLAVE's
//! clock to MASTER's comes from the slope of the tone's phase difference
//! ([`rxnode_dsp::compare_tracks`]). Shared by `rxnode run` (the `clkin_compare` step)
//! and `rxnode clkin compare`. Receive only: nothing here can transmit.
use crate::exec::live::{split_gain, NotCaptured};
use crate::result::sections::compare::{
    CompareDevice, CompareEntry, CompareFigures, CompareRadio, CompareRecord, PhaseTrace, Role,
    ToneLevels, Verdict,
};
use crate::result::sections::step_row::StepRow;
use crate::result::Status;
use rxnode_dsp::{
    compare_tracks, judge_compare, CompareEstimate, CompareVerdict, ReadOutcome, SampleSource,
    ToneTrack, ToneTrackConfig, ToneTracker,
};
use rxnode_hw::{ActualSettings, DeviceInfo, RxConfig, RxRadio};
use rxnode_interlock::{ClkinCompareStep, GainSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The two radios' names in results and messages, in `devices` order.
pub(crate) const ROLES: [Role; 2] = Role::BOTH;

/// A stream that delivers nothing for this long has stalled.
const STALL: Duration = Duration::from_secs(2);

/// One read's timeout.
const READ_TIMEOUT_US: i64 = 100_000;

/// Samples per read.
const READ_BLOCK: usize = 1 << 14;

/// What a finished comparison reports: its status, one line, and the result entry.
#[derive(Debug, Clone)]
pub(crate) struct Compared {
    /// PASS (LOCKED), FAIL (AGREE, UNLOCKED, undecided, or no number), PARTIAL (a number
    /// over less than was asked).
    pub(crate) status: Status,
    /// One line: the figure and its verdict, or why there is none.
    pub(crate) detail: String,
    /// The result's entry (docs/protocol.md#clkin_compare).
    pub(crate) entry: CompareRecord,
}

/// One radio, opened and configured.
struct Radio {
    role: Role,
    radio: RxRadio,
    info: DeviceInfo,
    actual: ActualSettings,
    ref_locked: Option<bool>,
}

/// What one stream delivered.
#[derive(Debug)]
struct Streamed {
    track: ToneTrack,
    requested: u64,
    received: u64,
    overflows: u64,
    timeouts: u64,
    /// Why the stream ended before `requested`, if it did.
    short: Option<String>,
    /// The stream's own error, if it failed.
    error: Option<String>,
    /// When its first samples arrived.
    first_at: Option<Instant>,
}

/// Run one comparison as `step` asks, until done or `cancel`.
pub(crate) fn compare(
    step: &ClkinCompareStep,
    cancel: &AtomicBool,
) -> Result<Compared, NotCaptured> {
    let [m, s] = step.devices.as_slice() else {
        return Err(NotCaptured::Failed(format!(
            "devices must be exactly two radios [MASTER, SLAVE], got {}",
            step.devices.len()
        )));
    };
    let mut radios = Vec::with_capacity(2);
    for (i, dev) in [m, s].into_iter().enumerate() {
        radios.push(open(ROLES[i], dev, step, i)?);
    }
    let rates: Vec<f64> = radios.iter().map(|r| r.actual.sample_rate_hz).collect();
    if (rates[0] - rates[1]).abs() > 1e-6 * rates[0] {
        return Err(NotCaptured::Failed(format!(
            "MASTER runs at {} and SLAVE at {}: both must stream at one rate",
            rxnode_interlock::fmt_rate(rates[0]),
            rxnode_interlock::fmt_rate(rates[1])
        )));
    }
    let mut streams = Vec::with_capacity(2);
    for r in &mut radios {
        let role = r.role;
        let st = r
            .radio
            .rx_stream()
            .map_err(|e| NotCaptured::Failed(format!("{role}: {e}")))?;
        streams.push(st);
    }
    let configs: Vec<ToneTrackConfig> = radios
        .iter()
        .map(|r| ToneTrackConfig::new(step.tone_hz, r.actual.frequency_hz, r.actual.sample_rate_hz))
        .collect();
    let mut trackers = Vec::with_capacity(2);
    for (r, c) in radios.iter().zip(configs) {
        trackers.push(
            ToneTracker::new(c).map_err(|e| NotCaptured::Failed(format!("{}: {e}", r.role)))?,
        );
    }
    let samples = |r: &Radio| (step.duration_s * r.actual.sample_rate_hz).round() as u64;
    let deadline =
        Duration::try_from_secs_f64(step.duration_s * 1.5 + 2.0).unwrap_or(Duration::MAX);
    let start = Barrier::new(2);
    let reqs = [samples(&radios[0]), samples(&radios[1])];
    let mut it = streams.into_iter().zip(trackers).zip(reqs);
    let (Some(((st_m, tr_m), n_m)), Some(((st_s, tr_s), n_s))) = (it.next(), it.next()) else {
        return Err(NotCaptured::Failed("two streams were not set up".into()));
    };
    let (a, b) = std::thread::scope(|sc| {
        let start = &start;
        let hm = sc.spawn(move || stream(st_m, tr_m, n_m, deadline, start, cancel));
        let hs = sc.spawn(move || stream(st_s, tr_s, n_s, deadline, start, cancel));
        (hm.join(), hs.join())
    });
    let (Ok(master), Ok(slave)) = (a, b) else {
        return Err(NotCaptured::Failed("a stream thread panicked".into()));
    };
    Ok(judge(step, &radios, &master, &slave))
}

/// Open and configure one radio; a radio that is absent or cannot do what is asked
/// blocks the step, naming its role.
fn open(role: Role, dev: &str, step: &ClkinCompareStep, i: usize) -> Result<Radio, NotCaptured> {
    let named = |e: rxnode_hw::Error| match e {
        rxnode_hw::Error::Open { .. } | rxnode_hw::Error::Unsupported { .. } => {
            NotCaptured::Blocked(format!("{role}: {e}"))
        }
        rxnode_hw::Error::NotFound { .. } => NotCaptured::Blocked(format!(
            "{role}: {e} — {}",
            crate::health::guard::absent_fix()
        )),
        other => NotCaptured::Failed(format!("{role}: {other}")),
    };
    let mut radio = RxRadio::open(dev).map_err(named)?;
    let info = radio.probe();
    // The device's own limits stand in where the policy sets none, as for a capture.
    crate::exec::live::within_device_limits(
        step.sample_rate_hz,
        step.gain_db.as_ref().map(GainSpec::total),
        &info,
    )
    .map_err(|e| NotCaptured::OverLimit(format!("{role}: {e}")))?;
    let (gain_db, elements) = split_gain(step.gain_db.as_ref());
    let clock_source = step.clock_sources.as_ref().and_then(|c| c.get(i).cloned());
    let mut actual = radio
        .configure(&RxConfig {
            frequency_hz: step.frequency_hz,
            sample_rate_hz: step.sample_rate_hz,
            gain_db,
            bandwidth_hz: None,
            antenna: None,
            clock_source,
        })
        .map_err(named)?;
    if let Some(m) = &elements {
        radio.set_gain_elements(m).map_err(named)?;
        actual = radio.actual().map_err(named)?;
    }
    let ref_locked = radio
        .sensors()
        .unwrap_or_default()
        .iter()
        .find(|(k, _)| k.as_str() == "ref_locked" || k.contains("ref_lock"))
        .and_then(|(_, v)| match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Some(true),
            "false" | "0" | "no" => Some(false),
            _ => None,
        });
    Ok(Radio {
        role,
        radio,
        info,
        actual,
        ref_locked,
    })
}

/// One stream on its own thread: wait for the other at `start`, then read and track
/// until `requested` samples, the deadline, a stall, an error or `cancel`. An overflow
/// ends the phase track (the samples lost are unknown), not the stream's count.
fn stream<S: SampleSource>(
    mut src: S,
    mut tracker: ToneTracker,
    requested: u64,
    deadline: Duration,
    start: &Barrier,
    cancel: &AtomicBool,
) -> Streamed {
    let mut buf = vec![num_complex::Complex::<f32>::default(); READ_BLOCK];
    let (mut received, mut overflows, mut timeouts) = (0u64, 0u64, 0u64);
    let (mut short, mut error, mut first_at) = (None, None, None);
    start.wait();
    let t0 = Instant::now();
    let mut last_data = t0;
    while received < requested {
        if cancel.load(Ordering::SeqCst) {
            short = Some("interrupted by the operator".to_owned());
            break;
        }
        if t0.elapsed() > deadline {
            short = Some(format!(
                "deadline of {:.1} s reached",
                deadline.as_secs_f64()
            ));
            break;
        }
        if last_data.elapsed() > STALL {
            short = Some(format!(
                "stream stalled: no samples for {} s",
                STALL.as_secs()
            ));
            break;
        }
        let want = ((requested - received) as usize).min(READ_BLOCK);
        match src.read(&mut buf[..want], READ_TIMEOUT_US) {
            Ok(ReadOutcome::Samples(n)) => {
                let n = n.min(want);
                if n > 0 {
                    first_at.get_or_insert_with(Instant::now);
                    last_data = Instant::now();
                }
                tracker.feed(&buf[..n]);
                received += n as u64;
            }
            Ok(ReadOutcome::Overflow) => {
                overflows += 1;
                tracker.break_track();
            }
            // Only a recording skips silence; a radio's stream never does.
            Ok(ReadOutcome::Silence(n)) => {
                received += n;
                tracker.break_track();
            }
            Ok(ReadOutcome::Timeout) => timeouts += 1,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    Streamed {
        track: tracker.finish(),
        requested,
        received,
        overflows,
        timeouts,
        short,
        error,
        first_at,
    }
}

/// The status, the line and the entry of a comparison that streamed.
fn judge(step: &ClkinCompareStep, radios: &[Radio], m: &Streamed, s: &Streamed) -> Compared {
    let pair = [m, s];
    let est = compare_tracks(&m.track, &s.track);
    // LOCKED needs a radio that says it runs from an external reference; two
    // free-running radios that happen to agree only AGREE.
    let external = radios.iter().any(|r| {
        r.actual
            .clock_source
            .as_deref()
            .is_some_and(rxnode_dsp::is_external_clock)
    });
    let verdict = est
        .as_ref()
        .ok()
        .and_then(|e| judge_compare(e, step.tolerance_ppb, external));
    let mut problems: Vec<String> = Vec::new();
    for (i, st) in pair.iter().enumerate() {
        let role = ROLES[i];
        if let Some(e) = &st.error {
            problems.push(format!("{role} stream failed: {e}"));
        }
        if let Some(w) = &st.short {
            problems.push(format!(
                "{role} delivered {} of {} samples ({w})",
                st.received, st.requested
            ));
        }
        if st.overflows > 0 {
            problems.push(format!(
                "{role} overflowed {} time(s): samples were lost, so the phase track ends at sample {}",
                st.overflows,
                st.track.broken_at.unwrap_or(st.received)
            ));
        }
    }
    let (status, detail) = match &est {
        Err(e) => {
            let mut why = e.to_string();
            why = why.trim_start_matches("clkin: ").to_owned();
            if !problems.is_empty() {
                why = format!("{why}; {}", problems.join("; "));
            }
            (Status::Fail, format!("no relative frequency: {why}"))
        }
        Ok(e) => {
            let figure = format!(
                "SLAVE relative to MASTER {} over {:.3} s (tolerance ±{} ppb)",
                crate::result::fmt_ppb(e.relative_ppb, e.uncertainty_ppb),
                e.span_s,
                step.tolerance_ppb
            );
            let said = match verdict {
                Some(CompareVerdict::Locked) => "LOCKED".to_owned(),
                Some(CompareVerdict::Unlocked) => "UNLOCKED".to_owned(),
                Some(CompareVerdict::Agree) => format!(
                    "AGREE (not LOCKED: neither radio reports an external reference clock; clock sources read back {})",
                    radios
                        .iter()
                        .map(|r| r.actual.clock_source.as_deref().unwrap_or("unknown"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => format!(
                    "cannot tell LOCKED from UNLOCKED: ±2σ straddles the tolerance of {} ppb",
                    step.tolerance_ppb
                ),
            };
            if problems.is_empty() {
                let st = if verdict == Some(CompareVerdict::Locked) {
                    Status::Pass
                } else {
                    Status::Fail
                };
                (st, format!("{said}: {figure}"))
            } else {
                (
                    Status::Partial,
                    format!(
                        "{said} over part of the run: {figure}; {}",
                        problems.join("; ")
                    ),
                )
            }
        }
    };
    // What the drivers say beside the measurement (it does not change the verdict).
    let mut detail = detail;
    for (i, r) in radios.iter().enumerate() {
        if r.ref_locked == Some(false)
            && r.actual
                .clock_source
                .as_deref()
                .is_some_and(|c| c.to_ascii_lowercase().contains("ext"))
        {
            detail.push_str(&format!(
                "; note: {}'s ref_locked sensor reads false on the external clock",
                ROLES[i]
            ));
        }
    }
    let start_offset_s = match (m.first_at, s.first_at) {
        (Some(a), Some(b)) => Some(if b >= a {
            (b - a).as_secs_f64()
        } else {
            -(a - b).as_secs_f64()
        }),
        _ => None,
    };
    let entry = CompareRecord {
        clkin_compare: figures(step, est.as_ref().ok(), verdict, start_offset_s),
        detail: detail.clone(),
        master: radio_record(step, &radios[0], m, 0),
        phase_trace: est.as_ref().ok().map(phase_trace),
        slave: radio_record(step, &radios[1], s, 1),
        status,
        step: None,
    };
    Compared {
        status,
        detail,
        entry,
    }
}

/// The `clkin_compare` step of a run: policy, both radios, its check and its entry.
pub(crate) fn step_compare(
    s: &crate::exec::steps::StepCtx,
    c: &ClkinCompareStep,
    out: &mut crate::exec::steps::Outputs,
) {
    let not_done = |out: &mut crate::exec::steps::Outputs, status: Status, why: String| {
        out.checks
            .push(crate::result::Check::new(&s.name, status, why.clone()));
        out.compares.push(CompareEntry::NotCompared(StepRow::new(
            s.index, status, why,
        )));
    };
    if let Err(e) = rxnode_interlock::check_clkin_compare(c, &s.policy.rx) {
        out.policy_blocked = true;
        not_done(out, Status::Blocked, e.to_string());
        return;
    }
    if let Some(why) = crate::store::radio_lock::same_radio_twice(&c.devices, &["MASTER", "SLAVE"])
    {
        not_done(out, Status::Blocked, why);
        return;
    }
    // One process per radio, for both radios (docs/operator.md#one-process-per-radio).
    let mut held = Vec::with_capacity(c.devices.len());
    for d in &c.devices {
        match crate::exec::steps::hold_radio(s, d) {
            Ok(l) => held.push(l),
            Err(why) => {
                not_done(out, Status::Blocked, why);
                return;
            }
        }
    }
    // Again under the radios' locks: either radio may have been found BAD meanwhile
    // (docs/protocol.md#8-radio-health).
    if let Some(why) = c
        .devices
        .iter()
        .find_map(|d| crate::health::guard::bad_reason(s.paths, d))
    {
        not_done(out, Status::Blocked, why);
        return;
    }
    match compare(c, crate::signals::cancel_flag("the running step")) {
        Ok(done) => {
            if done.status != Status::Pass {
                out.errors.push(format!("{}: {}", s.name, done.detail));
            }
            let mut entry = done.entry;
            add_clock_blocks(&mut entry, s.paths, s.policy.rx.calibration_max_age_s);
            entry.step = Some(s.index + 1);
            out.checks
                .push(crate::result::Check::new(&s.name, done.status, done.detail));
            out.compares.push(CompareEntry::Compared(Box::new(entry)));
        }
        Err(NotCaptured::OverLimit(why)) => {
            out.policy_blocked = true;
            not_done(out, Status::Blocked, why);
        }
        Err(NotCaptured::Blocked(why)) | Err(NotCaptured::Unsupported(why)) => {
            not_done(out, Status::Blocked, why);
        }
        Err(NotCaptured::Failed(why)) => {
            out.errors.push(format!("{}: {why}", s.name));
            not_done(out, Status::Fail, why);
        }
    }
}

/// Each radio's `clock` block (docs/protocol.md#clock): its clock source and its
/// last frequency calibration on this node, as every capture carries. A comparison
/// applies no correction, so `ppm_correction_applied` is null.
pub(crate) fn add_clock_blocks(
    entry: &mut CompareRecord,
    paths: &crate::store::paths::Paths,
    max_age_s: f64,
) {
    for r in [&mut entry.master, &mut entry.slave] {
        let radio = crate::store::calibration::Radio::named(
            &r.device.driver,
            r.device.serial.as_deref(),
            r.device.remote.as_deref(),
        );
        if radio.driver.is_empty() {
            continue;
        }
        let block = crate::store::calibration::clock_of(
            paths,
            radio,
            r.clock_source.as_deref(),
            max_age_s,
            None,
        );
        r.clock = Some(block);
    }
}

/// One radio's part of the entry: what it was, had and delivered.
fn radio_record(step: &ClkinCompareStep, r: &Radio, st: &Streamed, i: usize) -> CompareRadio {
    CompareRadio {
        actual: r.actual.clone(),
        clock: None,
        clock_source: r.actual.clock_source.clone(),
        clock_source_set: step.clock_sources.as_ref().and_then(|c| c.get(i).cloned()),
        device: CompareDevice {
            args: step.devices.get(i).cloned(),
            driver: r.info.driver.clone(),
            hardware_key: r.info.hardware_key.clone(),
            remote: r.info.remote.clone(),
            serial: r.info.serial.clone(),
        },
        overflows: st.overflows,
        phase_track_broken_at_sample: st.track.broken_at,
        ref_locked: r.ref_locked,
        role: r.role,
        samples_received: st.received,
        samples_requested: st.requested,
        stopped: st.short.clone().or_else(|| st.error.clone()),
        timeouts: st.timeouts,
        tone: ToneLevels {
            clipped_fraction: (st.track.samples > 0)
                .then(|| st.track.clipped as f64 / st.track.samples as f64),
            level_dbfs: st.track.level_dbfs.map(round3),
            point_snr_db: st.track.point_snr_db.map(round3),
            snr_db: st.track.snr_db.map(round3),
        },
    }
}

/// The figure, its verdict and the settings it was measured with.
fn figures(
    step: &ClkinCompareStep,
    est: Option<&CompareEstimate>,
    verdict: Option<CompareVerdict>,
    start_offset_s: Option<f64>,
) -> CompareFigures {
    CompareFigures {
        difference_hz: est.map(|e| e.difference_hz),
        duration_s: step.duration_s,
        frequency_hz: step.frequency_hz,
        points: est.map(|e| e.points),
        relative_ppb: est.map(|e| e.relative_ppb),
        residual_lag1: est.map(|e| e.residual_lag1),
        residual_max_rad: est.map(|e| e.residual_max_rad),
        residual_rms_rad: est.map(|e| e.residual_rms_rad),
        sample_rate_hz: step.sample_rate_hz,
        span_s: est.map(|e| e.span_s),
        start_offset_s,
        tolerance_ppb: step.tolerance_ppb,
        tone_hz: step.tone_hz,
        uncertainty_ppb: est.map(|e| e.uncertainty_ppb),
        verdict: verdict.map(Verdict::from),
    }
}

/// The phase difference and its fitted line, rounded to 1e-6.
fn phase_trace(e: &CompareEstimate) -> PhaseTrace {
    PhaseTrace {
        fit_intercept_rad: e.fit_intercept_rad,
        fit_slope_rad_s: e.fit_slope_rad_s,
        rad: e.trace_rad.iter().map(|r| round6(*r)).collect(),
        t_s: e.trace_t_s.iter().map(|t| round6(*t)).collect(),
    }
}

fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}
