//! The receive-only steps of a task's plan (`inventory`, `clock_check`,
//! `rx_capture`; `rx_sweep` is in [`crate::exec::sweep`]): each records a check,
//! and what it measured, in [`Outputs`]. None of them can transmit: TX is
//! [`crate::exec::tx`] alone.
use crate::context::Ctx;
use crate::exec::live::{LiveCapture, NotCaptured};
use crate::health::guard;
use crate::result::sections::{capture::CaptureRecord, CaptureEntry, Inventory, StepRow, TxRecord};
use crate::result::{Check, Status};
use crate::store::paths::Paths;
use rxnode_dsp::CaptureSummary;
use rxnode_interlock::{
    check_rx_step, Approval, Authorization, ClockCheckStep, Policy, RxCaptureStep, Step, ValidTask,
};

/// What the steps produced.
#[derive(Default)]
pub(crate) struct Outputs {
    /// One check per step.
    pub(crate) checks: Vec<Check>,
    /// The `inventory` step's devices.
    pub(crate) inventory: Option<Inventory>,
    /// One entry per `rx_capture` step.
    pub(crate) captures: Vec<CaptureEntry>,
    /// The transmission, if one was made.
    pub(crate) tx: Option<TxRecord>,
    /// What went wrong, for the result's error list.
    pub(crate) errors: Vec<String>,
    /// One entry per `rx_sweep` step.
    pub(crate) sweeps: Vec<crate::result::sections::sweep::SweepEntry>,
    /// One entry per `freq_cal` step.
    pub(crate) freq_cal: Vec<crate::result::sections::freq_cal::FreqCalEntry>,
    /// IQ bytes recorded so far (against the policy's `rx.max_iq_bytes`).
    pub(crate) iq_used: u64,
    /// One entry per `clkin_compare` step.
    pub(crate) compares: Vec<crate::result::sections::compare::CompareEntry>,
    /// A step was BLOCKED by the node policy (or the device maximum standing in
    /// for it): the run exits 3, as `capture` and `sweep` do for the same limit.
    pub(crate) policy_blocked: bool,
    /// The sweeps' pictures, for the result's `pictures` summary.
    pub(crate) drawn: Vec<crate::result::pictures::Drawn>,
}

impl Outputs {
    /// An `rx_capture` step that captured nothing: its check and its table row.
    pub(crate) fn not_captured(&mut self, s: &StepCtx, status: Status, why: String) {
        self.checks.push(Check::new(&s.name, status, why.clone()));
        self.captures.push(CaptureEntry::NotCaptured(StepRow::new(
            s.index, status, why,
        )));
    }

    /// A `freq_cal` step that measured nothing: its check and its table row.
    pub(crate) fn not_calibrated(&mut self, s: &StepCtx, status: Status, why: String) {
        use crate::result::sections::{freq_cal::FreqCalEntry, step_row::StepRow};
        self.checks.push(Check::new(&s.name, status, why.clone()));
        self.freq_cal.push(FreqCalEntry::NotMeasured(StepRow::new(
            s.index, status, why,
        )));
    }

    /// An `rx_sweep` step that swept nothing: its check and its table row.
    pub(crate) fn not_swept(&mut self, s: &StepCtx, status: Status, why: String) {
        use crate::result::sections::{step_row::StepRow, sweep::SweepEntry};
        self.checks.push(Check::new(&s.name, status, why.clone()));
        self.sweeps
            .push(SweepEntry::NotSwept(StepRow::new(s.index, status, why)));
    }
}

/// What one step of a run sees.
pub(crate) struct StepCtx<'a> {
    /// The node's context.
    pub(crate) ctx: &'a Ctx,
    /// The checkout's paths.
    pub(crate) paths: &'a Paths,
    /// The approved task.
    pub(crate) task: &'a ValidTask,
    /// Its approval.
    pub(crate) approval: &'a Approval,
    /// The node-local policy.
    pub(crate) policy: &'a Policy,
    /// The step's index in the plan (from 0).
    pub(crate) index: usize,
    /// `step <n>: <op>`.
    pub(crate) name: String,
}

/// Take the radio `device` for this step (`run <ID> step <n>`): `Err` is the
/// step's `BLOCKED` reason, naming who holds it
/// (docs/operator.md#one-process-per-radio).
pub(crate) fn hold_radio(
    s: &StepCtx,
    device: &str,
) -> Result<crate::store::radio_lock::RadioLock, String> {
    crate::store::radio_lock::RadioLock::acquire(
        s.paths,
        device,
        &format!("run {} step {}", s.task.id().as_str(), s.index + 1),
    )
    .map_err(|e| {
        use crate::store::radio_lock::{RadioBusy, RadioUnnamed};
        // A task runs once: "try again" would be refused. Say what does work.
        let again = |first: &str| {
            format!(
                "this step never reached the radio. fix: {first}; if no step of this run reached \
                 a radio, `rxnode run {id}` again; if another step did, task {id} has run (a task \
                 runs once): ask the main PC for a new task (a new TASK_ID) with this step",
                id = s.task.id().as_str()
            )
        };
        if let Some(busy) = e.downcast_ref::<RadioBusy>() {
            format!(
                "{} — {}",
                busy.what(),
                again("wait until that radio is free")
            )
        } else if let Some(unnamed) = e.downcast_ref::<RadioUnnamed>() {
            format!("{} — {}", unnamed.what(), again(RadioUnnamed::FIX))
        } else {
            format!("{e:#}")
        }
    })
}

/// The `inventory` step: this node's radios. A task does not make the node search
/// the LAN for SoapyRemote servers and connect to whichever answers
/// (docs/safety.md#a-tasks-reach-on-the-network).
pub(crate) fn step_inventory(name: &str, out: &mut Outputs) {
    match rxnode_hw::enumerate(rxnode_hw::LOCAL_RADIOS) {
        Ok(devs) => {
            let detail = format!(
                "{} device(s): {}",
                devs.len(),
                devs.iter()
                    .map(|d| d.args.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            out.inventory = Some(Inventory::of(devs));
            out.checks.push(Check::new(name, Status::Pass, detail));
        }
        Err(e) => {
            out.errors.push(format!("{name}: {e}"));
            out.checks
                .push(Check::new(name, Status::Fail, e.to_string()));
        }
    }
}

/// The `clock_check` step.
pub(crate) fn step_clock(s: &StepCtx, c: &ClockCheckStep, out: &mut Outputs) {
    let name = s.name.as_str();
    let _held = match hold_radio(s, &c.device) {
        Ok(l) => l,
        Err(why) => {
            out.checks.push(Check::new(name, Status::Blocked, why));
            return;
        }
    };
    let mut radio = match rxnode_hw::RxRadio::open(&c.device) {
        Ok(r) => r,
        Err(e) => {
            out.checks.push(Check::new(
                name,
                Status::Blocked,
                format!("device not available: {e}"),
            ));
            return;
        }
    };
    if let Some(src) = &c.clock_source {
        if let Err(e) = radio.set_clock_source(src) {
            out.checks.push(Check::new(
                name,
                Status::Fail,
                format!("cannot select clock source {src:?}: {e}"),
            ));
            return;
        }
    }
    let source = radio.clock_source().ok().flatten();
    let sensors = radio.sensors().unwrap_or_default();
    let info = radio.hardware_info().unwrap_or_default();
    let sensor_list = if sensors.is_empty() {
        "none".to_owned()
    } else {
        sensors
            .iter()
            .map(|(k, v)| format!("{k} = {}", v.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut detail = format!(
        "clock source {}; sensors: {sensor_list}; hardware info clock source {}",
        source.as_deref().unwrap_or("not reported"),
        info.get("clock source")
            .map(String::as_str)
            .unwrap_or("not reported")
    );
    let status = match &c.expect_source {
        None => Status::Pass,
        Some(want) => {
            let ok = source
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(want));
            let locked_contradicts = want.to_ascii_lowercase().contains("ext")
                && sensors
                    .get("ref_locked")
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"));
            detail.push_str(&format!("; expected {want}"));
            if locked_contradicts {
                detail.push_str("; ref_locked = false (no reference at CLKIN)");
            }
            if ok && !locked_contradicts {
                Status::Pass
            } else {
                Status::Fail
            }
        }
    };
    out.checks.push(Check::new(name, status, detail));
}

/// The `rx_capture` step: policy, live capture, its check and its table row.
pub(crate) fn step_capture(s: &StepCtx, c: &RxCaptureStep, out: &mut Outputs) {
    if let Err(e) = check_rx_step(c, &s.policy.rx) {
        out.policy_blocked = true;
        out.not_captured(s, Status::Blocked, e.to_string());
        return;
    }
    let live = live_of(s, c, out.iq_used);
    let _held = match hold_radio(s, &c.device) {
        Ok(l) => l,
        Err(why) => {
            out.not_captured(s, Status::Blocked, why);
            return;
        }
    };
    // Again under the radio's lock: a self-test that ran meanwhile may have found it BAD.
    if let Some(why) = guard::bad_reason(s.paths, &c.device) {
        out.not_captured(s, Status::Blocked, why);
        return;
    }
    match crate::exec::live::capture(
        &live,
        Some(&s.paths.repo),
        crate::signals::cancel_flag("the running step"),
        !s.ctx.json,
    ) {
        Ok(summary) => {
            captured(&s.name, &summary, out);
            // A stalled or failing stream: the radio is BAD until a self-test passes.
            if matches!(summary.stop_reason.as_str(), "stalled" | "source error") {
                let what = format!(
                    "{} of task {}: {}",
                    s.name,
                    s.task.id(),
                    summary
                        .errors
                        .first()
                        .map_or("stream failed", String::as_str)
                );
                let line = guard::radio_failed(s.paths, s.policy, &c.device, &what);
                out.errors.push(format!("{}: {line}", s.name));
            }
        }
        Err(NotCaptured::OverLimit(why)) => {
            out.policy_blocked = true;
            out.not_captured(s, Status::Blocked, why);
        }
        Err(NotCaptured::Unsupported(why)) => out.not_captured(s, Status::Blocked, why),
        Err(NotCaptured::Blocked(why)) => {
            // Not opened or not set up: the self-test tells a radio fault from a setting.
            let line = guard::retest(s.paths, s.policy, &c.device);
            out.errors.push(format!("{}: {line}", s.name));
            out.not_captured(s, Status::Blocked, why);
        }
        Err(NotCaptured::Failed(why)) => {
            out.errors.push(format!("{}: {why}", s.name));
            let what = format!("{} of task {}: {why}", s.name, s.task.id());
            let line = guard::radio_failed(s.paths, s.policy, &c.device, &what);
            out.errors.push(format!("{}: {line}", s.name));
            out.not_captured(s, Status::Fail, why);
        }
    }
}

/// The one place a plan op meets the executor: run step `s`, or, when its radio
/// is `BAD` (or its health cannot be read: `bad_radio` says why), record it
/// BLOCKED as its op records a step that did not run, nothing touching the
/// radio. The match is exhaustive: a new op does not compile until it says how
/// it runs and how it is blocked (docs/architecture.md#how-to-add-a-plan-op).
/// The one authorization goes to the first `tx_tone` step, run or not.
pub(crate) fn exec_step(
    s: &StepCtx,
    step: &Step,
    bad_radio: Option<String>,
    authorization: &mut Option<Authorization>,
    out: &mut Outputs,
) {
    use crate::exec::{compare, freq_cal, sweep, tx};
    match (step, bad_radio) {
        (Step::Inventory(_), None) => step_inventory(&s.name, out),
        (Step::ClockCheck(c), None) => step_clock(s, c, out),
        (Step::RxCapture(c), None) => step_capture(s, c, out),
        (Step::RxSweep(sw), None) => sweep::step_sweep(s, sw, out),
        (Step::FreqCal(f), None) => freq_cal::step_freq_cal(s, f, out),
        (Step::TxTone(t), None) => tx::step_tx(s, authorization.take(), t, out),
        (Step::ClkinCompare(c), None) => compare::step_compare(s, c, out),
        (Step::RxCapture(_), Some(why)) => out.not_captured(s, Status::Blocked, why),
        (Step::RxSweep(_), Some(why)) => out.not_swept(s, Status::Blocked, why),
        (Step::ClkinCompare(_), Some(why)) => {
            out.compares
                .push(crate::result::sections::compare::CompareEntry::NotCompared(
                    crate::result::sections::step_row::StepRow::new(
                        s.index,
                        Status::Blocked,
                        why.clone(),
                    ),
                ));
            out.checks.push(Check::new(&s.name, Status::Blocked, why));
        }
        (Step::TxTone(_), Some(why)) => {
            drop(authorization.take());
            out.checks.push(Check::new(&s.name, Status::Blocked, why));
        }
        (Step::Inventory(_) | Step::ClockCheck(_) | Step::FreqCal(_), Some(why)) => {
            out.checks.push(Check::new(&s.name, Status::Blocked, why))
        }
    }
}

/// The live capture a plan step asks for, within what is left of the IQ budget.
fn live_of(s: &StepCtx, c: &RxCaptureStep, iq_used: u64) -> LiveCapture {
    let record = c.record_iq.then(|| {
        s.paths
            .iq_dir(s.task.id())
            .join(format!("capture-{}.sigmf-data", s.index + 1))
    });
    let (gain_db, gain_elements) = crate::exec::live::split_gain(c.gain_db.as_ref());
    LiveCapture {
        device: c.device.clone(),
        frequency_hz: c.frequency_hz,
        sample_rate_hz: c.sample_rate_hz,
        gain_db,
        gain_elements,
        bandwidth_hz: c.bandwidth_hz,
        antenna: c.antenna.clone(),
        clock_source: c.clock_source.clone(),
        duration_s: c.duration_s,
        fft_size: c
            .fft_size
            .unwrap_or(rxnode_interlock::DEFAULT_CAPTURE_FFT_SIZE),
        clkin: c.clkin.clone(),
        record,
        record_format: crate::exec::live::record_format_of(c.record_format),
        max_iq_bytes: Some(s.policy.rx.max_iq_bytes.saturating_sub(iq_used)),
        max_peaks: c.max_peaks.unwrap_or(rxnode_interlock::DEFAULT_MAX_PEAKS),
        min_snr_db: c.min_snr_db.unwrap_or(rxnode_interlock::DEFAULT_MIN_SNR_DB),
        calibration: Some(crate::exec::live::CalibrationUse {
            paths: s.paths.clone(),
            max_age_s: s.policy.rx.calibration_max_age_s,
            apply: c.apply_calibration,
        }),
        radio: c.radio(),
    }
}

/// A finished capture: the bytes it recorded, its check, errors and table row.
fn captured(name: &str, summary: &CaptureSummary, out: &mut Outputs) {
    out.iq_used += summary.iq_files.iter().map(|f| f.bytes).sum::<u64>();
    let status = crate::exec::live::status_of(summary.status);
    let mut detail = format!(
        "{} of {} samples, {} overflow(s), {} dropped, {}noise floor {}",
        summary.samples_received,
        summary.samples_requested,
        summary.overflows,
        summary.dropped_samples,
        match summary.lost_samples {
            Some(0) => String::new(),
            _ => format!("lost {}, ", summary.lost_in_words()),
        },
        summary
            .noise_floor_db
            .map(|n| format!("{n:.1} dBFS/bin"))
            .unwrap_or_else(|| format!("n/a ({})", summary.floor_absent().unwrap_or_default()))
    );
    if let Some(k) = &summary.clkin {
        detail.push_str(&format!(
            "; CLKIN {}: {} (tolerance {} ppm)",
            match k.status {
                rxnode_dsp::ClkinStatus::Pass => "PASS",
                rxnode_dsp::ClkinStatus::Fail => "FAIL",
                rxnode_dsp::ClkinStatus::NotMeasured => "NOT MEASURED",
            },
            crate::exec::capture::clkin_error(k.ppm, k.ppm_uncertainty),
            k.tolerance_ppm
        ));
    }
    if let Some(r) = &summary.recording_error {
        detail.push_str(&format!("; recording stopped: {r}"));
    }
    out.errors
        .extend(summary.errors.iter().map(|e| format!("{name}: {e}")));
    out.captures.push(match CaptureRecord::of(summary) {
        Some(r) => CaptureEntry::Captured(Box::new(r)),
        None => CaptureEntry::Other(untyped_record(summary)),
    });
    out.checks.push(Check::new(name, status, detail));
}

/// A summary whose `device`, `requested`, `actual` or `clock` does not read as
/// its type (a NaN the radio reported, written `null`), as the record's JSON.
fn untyped_record(summary: &CaptureSummary) -> serde_json::Value {
    let mut v = serde_json::to_value(summary).unwrap_or(serde_json::Value::Null);
    let Some(obj) = v.as_object_mut() else {
        return v;
    };
    if let Some(p) = summary.psd.as_ref() {
        let num = |x: f64| serde_json::to_value(x).unwrap_or(serde_json::Value::Null);
        obj.insert(
            "psd_db".into(),
            p.db.iter().map(|x| num(f64::from(*x))).collect(),
        );
        obj.insert("psd_start_hz".into(), num(p.start_hz));
        obj.insert("psd_step_hz".into(), num(p.step_hz));
        obj.remove("psd");
    }
    v
}
