//! TX orchestration for `rxnode run`: the one file in `src/` that can key a
//! transmitter (`find src -name '*tx*'` lists it alone). It pre-flights every
//! `tx_tone` step against the node policy before anybody is asked to authorize,
//! describes the one transmission an `AUTHORIZE RF TX` covers, and runs that
//! step in the TX guard process ([`crate::exec::tx_guard`]): the typed
//! authorization becomes a single-use grant, the guard makes the `TxPermit`
//! through the interlock's `authorize`, and [`crate::exec::tx_watch`] watches
//! the guard. The tone is never keyed without a signal handler or after an
//! interrupt, and stops when Ctrl-C / SIGTERM sets the process's one cancel
//! flag (docs/hardware.md: < 200 ms to `closeStream`, remote too).
use crate::exec::preconditions::refuse;
use crate::exec::steps::{Outputs, StepCtx};
use crate::result::sections::tone::{Tone, TxRecord};
use crate::result::{Check, Status};
use crate::store::paths::Paths;
use crate::store::policy::Source;
use anyhow::Result;
use rxnode_hw::TxReport;
use rxnode_interlock::{Authorization, Plan, Policy, Step, TxGrant, TxToneStep};
use std::sync::atomic::Ordering;

/// Where a refusal of `run` is written: the checkout, the task and its text hash.
pub(crate) struct RefuseTo<'a> {
    /// The checkout's paths.
    pub(crate) paths: &'a Paths,
    /// The task ID.
    pub(crate) ids: &'a str,
    /// The approved text's SHA-256.
    pub(crate) sha: &'a str,
}

/// Pre-flight the TX policy so nobody is asked to authorize what the policy refuses.
pub(crate) fn preflight(
    to: &RefuseTo,
    plan: &Plan,
    policy: &Policy,
    policy_source: &Source,
) -> Result<()> {
    for (i, s) in plan.steps.iter().enumerate() {
        if let Step::TxTone(t) = s {
            if let Err(e) = rxnode_interlock::check_tx_step(t, policy) {
                let mut msg = format!("step {} (tx_tone): {e}", i + 1);
                if *policy_source == Source::Defaults {
                    msg.push_str(&format!(
                        " — no policy file at {}",
                        to.paths.policy().display()
                    ));
                }
                return Err(refuse(to.paths, to.ids, Some(to.sha), msg));
            }
            if let Some(why) = known_clock_error(to.paths, t, policy) {
                let msg = format!("step {} (tx_tone): {why}", i + 1);
                return Err(refuse(to.paths, to.ids, Some(to.sha), msg));
            }
        }
    }
    Ok(())
}

/// The step's radio judged with its kept calibration, as the TX guard judges it
/// once it has opened the radio, when the device args name it (its driver and
/// serial; a SoapyRemote unit by its own driver, serial and server): so nobody
/// is asked to authorize a tone its measured clock error moves out of range
/// (never measured: by up to `tx.unmeasured_clock_ppm`).
/// Args that do not name the radio, or a calibration that cannot be read, are
/// left to the guard.
fn known_clock_error(paths: &Paths, t: &TxToneStep, policy: &Policy) -> Option<String> {
    use crate::store::calibration;
    let args: std::collections::BTreeMap<&str, &str> = t
        .device
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let serial = args.get("serial").copied().filter(|s| !s.is_empty())?;
    let (driver, remote) = match args.get("remote:driver") {
        Some(d) => (*d, args.get("remote").copied()),
        None => (args.get("driver").copied()?, None),
    };
    let m = match calibration::lookup(
        paths,
        calibration::Radio::named(driver, Some(serial), remote),
    )
    .ok()?
    {
        Some(m) => m,
        None => {
            return rxnode_interlock::check_tx_unmeasured_clock(t, policy)
                .err()
                .map(|e| e.to_string())
        }
    };
    let age = match calibration::fresh_for_tx(&m, policy.rx.calibration_max_age_s) {
        Ok(a) => a,
        Err(why) => return Some(why),
    };
    rxnode_interlock::check_tx_clock_error(t, policy, m.ppm, m.uncertainty_ppm)
        .err()
        .map(|e| format!("{e} (measured {} ago)", calibration::fmt_age(age)))
}

/// Before the `AUTHORIZE RF TX` prompt: one authorization covers one
/// transmission, the first `tx_tone` step; every later one is BLOCKED, so the
/// prompt must not claim it.
pub(crate) fn announce(plan: &Plan) {
    let mut first = true;
    for (i, s) in plan.steps.iter().enumerate() {
        if let Step::TxTone(t) = s {
            if first {
                note!(
                    "  This authorizes one transmission, step {} (the first tx_tone): {}",
                    i + 1,
                    describe_tx(t)
                );
                first = false;
            } else {
                note!(
                    "  Step {} (tx_tone) will be BLOCKED, not transmitted: one authorization covers only the first tx_tone ({})",
                    i + 1,
                    describe_tx(t)
                );
            }
        }
    }
}

fn describe_tx(step: &TxToneStep) -> String {
    format!(
        "TX tone on {}: LO {:.6} MHz, tone offset {:+.3} kHz (on air {:.6}–{:.6} MHz incl. image and LO leakage), \
         rate {:.3} MS/s, gain {} dB, for {} s",
        step.device,
        step.frequency_hz / 1e6,
        step.tone_offset_hz / 1e3,
        (step.frequency_hz - step.tone_offset_hz.abs()) / 1e6,
        (step.frequency_hz + step.tone_offset_hz.abs()) / 1e6,
        step.sample_rate_hz / 1e6,
        crate::result::plot::trim_number(step.gain_db, 1),
        step.duration_s
    )
}

pub(crate) fn unix_to_iso(t: f64) -> String {
    let Ok(dt) = time::OffsetDateTime::from_unix_timestamp_nanos((t * 1e9) as i128) else {
        return t.to_string();
    };
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    );
    dt.format(&fmt).unwrap_or_else(|_| t.to_string())
}

/// The `tx_tone` step: with the run's one authorization (`None` once used), a
/// grant for the TX guard process, which makes the permit through the
/// interlock and transmits; this process watches it until it is done
/// (docs/safety.md#the-tx-guard-process).
pub(crate) fn step_tx(s: &StepCtx, auth: Option<Authorization>, t: &TxToneStep, out: &mut Outputs) {
    // Never key a radio another rxnode is receiving on.
    let _held = match crate::exec::steps::hold_radio(s, &t.device) {
        Ok(l) => l,
        Err(why) => {
            out.checks.push(Check::new(&s.name, Status::Blocked, why));
            return;
        }
    };
    let auth = match ready(s, auth) {
        Ok(a) => a,
        Err((status, why)) => {
            out.checks.push(Check::new(&s.name, status, why));
            return;
        }
    };
    guarded(s, auth, t, out);
}

/// The tone in the TX guard process, watched from here.
fn guarded(s: &StepCtx, auth: Authorization, t: &TxToneStep, out: &mut Outputs) {
    let grant = match grant(s, auth) {
        Ok(g) => g,
        Err((status, why)) => {
            out.checks.push(Check::new(&s.name, status, why));
            return;
        }
    };
    // While keyed, Ctrl-C / SIGTERM and a job-control stop (Ctrl-Z) key off first;
    // a held-back stop takes effect when `keyed` drops, after the teardown.
    let keyed = crate::signals::KeyedGuard::new();
    let r = crate::exec::tx_watch::run_guard(s, &grant, t, keyed.key_off_flag());
    let suspended_by = keyed.suspended_by();
    drop(keyed);
    match r {
        Ok(GuardOutcome::Done {
            report,
            keyed_off_by,
        }) => {
            let by = suspended_by.map(str::to_owned).or(keyed_off_by);
            transmitted(&s.name, &report, by.as_deref(), out);
        }
        Ok(GuardOutcome::NotKeyed { status, detail }) => {
            if status == Status::Fail {
                out.errors.push(format!("{}: {detail}", s.name));
            }
            out.checks.push(Check::new(&s.name, status, detail));
        }
        Ok(GuardOutcome::Ended { keyed_at, why }) => {
            let detail = match keyed_at {
                Some(at) => format!(
                    "keyed at {}; {why}: the transmitter was keyed off by the end of the guard process that held it; how much of the tone went on air is unknown",
                    unix_to_iso(at)
                ),
                None => format!("{why}; the transmitter was never keyed"),
            };
            out.errors.push(format!("{}: {detail}", s.name));
            out.checks.push(Check::new(&s.name, Status::Fail, detail));
        }
        Err(e) => {
            out.errors.push(format!("{}: {e:#}", s.name));
            out.checks
                .push(Check::new(&s.name, Status::Fail, format!("{e:#}")));
        }
    }
}

/// Everything before the tone, in order; the first that fails is the step's
/// status and detail and nothing is keyed.
fn ready(s: &StepCtx, auth: Option<Authorization>) -> Result<Authorization, (Status, String)> {
    let Some(auth) = auth else {
        return Err((
            Status::Blocked,
            "no authorization left: one AUTHORIZE RF TX covers one tx_tone step".to_owned(),
        ));
    };
    // Without a signal handler a Ctrl-C would kill the process mid-tone, skipping the
    // teardown: never key the transmitter then.
    if !crate::signals::cancel_handler_installed() {
        return Err((
            Status::Blocked,
            "Ctrl-C / SIGTERM cannot be caught in this process, so a stop could not tear the transmission down; not transmitting".to_owned(),
        ));
    }
    // Ctrl-C between steps: never key the transmitter after an interrupt.
    if crate::signals::cancel_flag("the running step").load(Ordering::SeqCst) {
        return Err((Status::NotRun, "interrupted before this step".to_owned()));
    }
    // A hold put in place since the step began (its radio lock was taken).
    if let Some(why) = crate::exec::held(s.paths) {
        return Err((Status::NotRun, why));
    }
    // The policy and the step, checked here as the permit checks them again.
    if let Some(Step::TxTone(t)) = s.task.plan().and_then(|p| p.steps.get(s.index)) {
        if let Err(e) = rxnode_interlock::check_tx_step(t, s.policy) {
            return Err((Status::Blocked, e.to_string()));
        }
    }
    Ok(auth)
}

/// The authorization, consumed into the single-use grant for the guard process.
fn grant(s: &StepCtx, auth: Authorization) -> Result<TxGrant, (Status, String)> {
    let key = match crate::store::key::load(s.paths) {
        Ok(Some(k)) => k,
        Ok(None) => return Err((Status::Blocked, "this node has no key".to_owned())),
        Err(e) => return Err((Status::Blocked, format!("{e:#}"))),
    };
    let nonce = format!("{:032x}", rand::random::<u128>());
    auth.into_grant(
        key.bytes(),
        &s.approval.commit,
        s.index,
        &nonce,
        std::process::id(),
    )
    .ok_or_else(|| {
        (
            Status::Blocked,
            "the authorization is not AUTHORIZE RF TX".to_owned(),
        )
    })
}

/// How the guard ended, as the parent saw it.
pub(crate) enum GuardOutcome {
    /// The tone ended and the guard reported it.
    Done {
        /// The driver's account.
        report: TxReport,
        /// What keyed it off early.
        keyed_off_by: Option<String>,
    },
    /// Nothing was keyed.
    NotKeyed {
        /// The step's status.
        status: Status,
        /// Why.
        detail: String,
    },
    /// The guard process ended without a report (killed, stopped then killed,
    /// or ended at its own deadline).
    Ended {
        /// When it said it keyed, unix seconds.
        keyed_at: Option<f64>,
        /// What happened.
        why: String,
    },
}

/// A finished (or interrupted) tone: the result's `tx` record and the step's check.
///
/// PASS only when every planned sample went on air and the driver confirmed the
/// stream off within the permit (docs/safety.md#time-on-air); `suspended_by` names
/// the job-control signal that keyed it off, if one did.
fn transmitted(name: &str, rep: &TxReport, suspended_by: Option<&str>, out: &mut Outputs) {
    let (status, why) = tone_status(rep, suspended_by);
    out.tx = Some(TxRecord::Tone(Box::new(Tone {
        cancelled: rep.cancelled,
        device: rep.device.clone(),
        frequency_hz: rep.frequency_hz,
        gain_db: rep.gain_db,
        keyed_off_by: suspended_by.map(str::to_owned),
        on_air_s: rep.on_air_s,
        past_permit_s: rep.past_permit_s,
        sample_rate_hz: rep.sample_rate_hz,
        samples_planned: rep.samples_planned,
        samples_sent: rep.samples_sent,
        started_at: unix_to_iso(rep.started_unix_s),
        state_unknown_s: rep.state_unknown_s,
        stopped_at: unix_to_iso(rep.stopped_unix_s),
        tone_offset_hz: rep.tone_offset_hz,
    })));
    let mut detail = format!(
        "{} of {} samples sent at {:.6} MHz {:+.3} kHz, {} dB, {:.3} s on air",
        rep.samples_sent,
        rep.samples_planned,
        rep.frequency_hz / 1e6,
        rep.tone_offset_hz / 1e3,
        rep.gain_db,
        rep.on_air_s,
    );
    if let Some(why) = &why {
        detail.push_str(": ");
        detail.push_str(why);
    }
    if status == Status::Fail {
        out.errors.push(format!("{name}: {detail}"));
    }
    out.checks.push(Check::new(name, status, detail));
}

/// The status of a tone and, unless PASS, why.
fn tone_status(rep: &TxReport, suspended_by: Option<&str>) -> (Status, Option<String>) {
    let (sent, planned) = (rep.samples_sent, rep.samples_planned);
    if let Some(unknown) = rep.state_unknown_s {
        return (
            Status::Fail,
            Some(format!(
                "TX state unknown for {unknown:.1} s: the driver took nothing after {sent} of {planned} samples and did not confirm the key-off; rxnode stopped feeding it at the permit's deadline and its TX guard process then ended, which closes the device (a radio on another host stays keyed until its server sees the guard gone): check it"
            )),
        );
    }
    if rep.past_permit_s > 0.0 {
        return (
            Status::Fail,
            Some(format!(
                "the TX stream stayed active {:.3} s past its permit (by the driver's account), {sent} of {planned} samples sent",
                rep.past_permit_s
            )),
        );
    }
    if let Some(sig) = suspended_by {
        return (
            Status::Partial,
            Some(format!(
                "keyed off by {sig} after {sent} of {planned} samples (the process stopped only after the key-off)"
            )),
        );
    }
    if rep.cancelled {
        return (
            Status::Partial,
            Some(format!(
                "cut short by interrupt after {sent} of {planned} samples"
            )),
        );
    }
    if sent < planned {
        return (
            Status::Fail,
            Some(format!(
                "sent {sent} of {planned} planned samples: the driver did not take the rest within the permit's duration"
            )),
        );
    }
    if !rep.complete() {
        return (
            Status::Fail,
            Some(format!(
                "the TX stream was active {:.3} s, shorter than the {:.3} s its {planned} samples take at {} S/s: the tone's end was not on air",
                rep.on_air_s,
                planned as f64 / rep.sample_rate_hz,
                rep.sample_rate_hz
            )),
        );
    }
    (Status::Pass, None)
}
