//! `rxnode run <TASK_ID>`: execute an approved task's plan (DESIGN §2, §3, §5).
//!
//! Preconditions (each refusal: exit 3, a line, a ledger entry, nothing touched):
//! approved in state; the outbox `TASK.md` hashes to the approved SHA-256 and
//! equals the blob at the recorded commit; it validates; not completed before;
//! not held by `.local/STOP`. RED work then needs the exact authorization line.
use crate::context::Ctx;
use crate::exec::live::{LiveCapture, NotCaptured};
use crate::exit::{bad_input, refused, Outcome};
use crate::result::{write_result_files, AuthorizationRecord, Check, RxResult, Status, Timeline};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::{Context, Result};
use rxnode_interlock::{
    authorize, check_rx_step, required_phrase, sha256_hex, verify_authorization, Approval,
    AuthorizationKind, Policy, RxCaptureStep, Step, TaskId, TxToneStep, ValidTask, MAX_TASK_BYTES,
};
use serde_json::json;
use std::sync::atomic::Ordering;

/// Refuse: ledger entry + exit-3 error.
fn refuse(paths: &Paths, id: &str, sha: Option<&str>, reason: String) -> anyhow::Error {
    let mut e = Entry::new("refused")
        .task(id)
        .detail(json!({"command": "run", "reason": reason}));
    if let Some(s) = sha {
        e = e.sha(s);
    }
    if let Err(err) = ledger::append(paths, &e) {
        tracing::error!("cannot write the ledger: {err:#}");
    }
    refused(reason)
}

/// Everything checked before anything runs.
pub struct Approved {
    pub task: ValidTask,
    pub approval: Approval,
    pub commit: String,
}

/// Check every precondition of `run` (shared with `publish` and `doctor` where useful).
pub fn preconditions(ctx: &Ctx, paths: &Paths, id: &TaskId) -> Result<Approved> {
    let ids = id.as_str();
    if paths.stop().exists() {
        return Err(refuse(
            paths,
            ids,
            None,
            format!("held by {}: remove it to run tasks", paths.stop().display()),
        ));
    }
    let st = state::load(paths)?;
    if let Some(rec) = st.tasks.get(ids) {
        if rec.status == TaskStatus::Completed {
            return Err(refuse(
                paths,
                ids,
                Some(&rec.task_sha256),
                format!("task {ids} was already run to completion; a re-run needs a new TASK_ID"),
            ));
        }
    }
    let Some(approval) = st.approvals.get(ids).cloned() else {
        let why = match st.tasks.get(ids).map(|r| r.status) {
            Some(TaskStatus::Deferred) => "it is deferred (use `rxnode review` to decide)",
            Some(TaskStatus::Pending) => "it is pending: nobody approved it",
            Some(TaskStatus::Rejected) => "it was rejected",
            Some(TaskStatus::Withdrawn) => "the main PC withdrew it (deleted the task file)",
            _ => "it is unknown to this node",
        };
        return Err(refuse(
            paths,
            ids,
            None,
            format!("task {ids} is not approved: {why}"),
        ));
    };
    let dir = paths.outbox(id);
    let task_md = dir.join("TASK.md");
    let bytes = crate::validate::read_task_file(&task_md).map_err(|e| {
        refuse(
            paths,
            ids,
            Some(&approval.task_sha256),
            format!("cannot read the approved text {}: {e:#}", task_md.display()),
        )
    })?;
    let sha = sha256_hex(&bytes);
    if sha != approval.task_sha256 {
        return Err(refuse(
            paths,
            ids,
            Some(&approval.task_sha256),
            format!(
                "{} changed since approval (SHA-256 {sha}, approved {})",
                task_md.display(),
                approval.task_sha256
            ),
        ));
    }
    // The approved text must equal the blob at the recorded commit.
    let commit = approval.commit.clone();
    if !commit.is_empty() {
        let repo = crate::git::ops::open(&paths.repo)?;
        let oid = git2::Oid::from_str(&commit).map_err(|_| {
            refuse(
                paths,
                ids,
                Some(&sha),
                format!("approved commit {commit:?} is not a commit id"),
            )
        })?;
        match crate::git::ops::read_blob_at(&repo, oid, &ctx.source.task_path, MAX_TASK_BYTES) {
            Ok(crate::git::ops::Blob::Content { bytes: b, .. }) if b == bytes => {}
            Ok(_) => {
                return Err(refuse(
                    paths,
                    ids,
                    Some(&sha),
                    format!(
                        "{} at commit {commit} is not the approved text",
                        ctx.source.task_path
                    ),
                ))
            }
            Err(e) => {
                return Err(refuse(
                    paths,
                    ids,
                    Some(&sha),
                    format!("cannot read the task at commit {commit}: {e:#}"),
                ))
            }
        }
    } else {
        return Err(refuse(
            paths,
            ids,
            Some(&sha),
            format!(
                "task {ids} was approved in a dry run (no commit): dry-run approvals never run"
            ),
        ));
    }
    let task = crate::validate::check(&bytes, &ctx.source.branch).map_err(|issues| {
        let msg = issues
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        refuse(
            paths,
            ids,
            Some(&sha),
            format!("the approved text no longer validates: {msg}"),
        )
    })?;
    if task.id() != id {
        return Err(refuse(
            paths,
            ids,
            Some(&sha),
            format!("the outbox text is task {}, not {ids}", task.id()),
        ));
    }
    evidence_allows(paths, &task, &approval)?;
    Ok(Approved {
        task,
        approval,
        commit,
    })
}

/// Single use whatever happened to the state (issue 13): the ledger and the
/// outbox are evidence. Refused — writing nothing, since the evidence itself is
/// what is in question — when the ledger or the outbox shows a finished run (for
/// RED also a started one: it may have transmitted before a crash), or when the
/// state's approval is not one the ledger recorded (same text hash and commit).
fn evidence_allows(paths: &Paths, task: &ValidTask, approval: &Approval) -> Result<()> {
    let ids = task.id().as_str();
    let red = task.risk() == rxnode_interlock::RiskLevel::Red;
    if let Some(why) = crate::store::rebuild::finished_run(paths, ids, red)? {
        return Err(refused(format!(
            "task {ids} already ran on this node ({why}; {}) — a task runs once; fix: post the work again under a new TASK_ID",
            paths.outbox(task.id()).display()
        )));
    }
    // The mirror in the Git directory, when there is one, is what a planted or
    // padded `.local/` ledger cannot supply: the approval must be in it.
    let entries = match ledger::read_mirror(paths)? {
        Some(m) => m,
        None => ledger::read_evidence(paths)?,
    };
    let recorded = entries.iter().any(|e| {
        e["event"] == "approved"
            && e["task_id"] == ids
            && e["task_sha256"] == approval.task_sha256.as_str()
            && e["commit"] == approval.commit.as_str()
    });
    if !recorded {
        return Err(refused(format!(
            "the approval of {ids} in the state {} (SHA-256 {}, commit {}) is not one the ledger recorded; {}",
            paths.state().display(),
            approval.task_sha256,
            approval.commit,
            crate::store::state::REBUILD_HINT
        )));
    }
    Ok(())
}

/// Read one line from stdin (see [`crate::term::read_line_lossy`]).
pub fn read_line_exact() -> Result<Option<String>> {
    crate::term::read_line_lossy(&mut std::io::stdin().lock()).context("cannot read stdin")
}

/// One `run` at a time per checkout: the watcher's lock mechanism on its own file.
fn acquire_run_lock(paths: &Paths, id: &str) -> Result<crate::store::lock::Lock> {
    crate::store::lock::Lock::acquire_at(paths, paths.run_lock(), &format!("run {id}")).map_err(
        |e| {
            if e.downcast_ref::<crate::exit::Refused>().is_some() {
                refuse(
                    paths,
                    id,
                    None,
                    format!("another `rxnode run` is running in this checkout: {e:#}"),
                )
            } else {
                e
            }
        },
    )
}

fn describe_tx(step: &TxToneStep) -> String {
    format!(
        "TX tone on {}: LO {:.6} MHz, tone offset {:+.3} kHz (on air {:.6}–{:.6} MHz incl. image and LO leakage), \
         rate {} S/s, gain {} dB, for {} s",
        step.device,
        step.frequency_hz / 1e6,
        step.tone_offset_hz / 1e3,
        (step.frequency_hz - step.tone_offset_hz.abs()) / 1e6,
        (step.frequency_hz + step.tone_offset_hz.abs()) / 1e6,
        step.sample_rate_hz,
        step.gain_db,
        step.duration_s
    )
}

fn unix_to_iso(t: f64) -> String {
    let Ok(dt) = time::OffsetDateTime::from_unix_timestamp_nanos((t * 1e9) as i128) else {
        return t.to_string();
    };
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    );
    dt.format(&fmt).unwrap_or_else(|_| t.to_string())
}

/// What the steps produced.
struct Outputs {
    checks: Vec<Check>,
    inventory: Option<serde_json::Value>,
    captures: Vec<serde_json::Value>,
    tx: Option<serde_json::Value>,
    errors: Vec<String>,
    sweeps: Vec<serde_json::Value>,
}

/// The command.
pub fn cmd_run(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    let paths = Paths::new(&ctx.repo);
    let id = TaskId::parse(task_id).map_err(|e| bad_input(e.to_string()))?;
    let ids = id.as_str().to_owned();
    // The trust root first: nothing under .local/ is read, locked or written
    // (not even the ledger) while Git could have supplied it (issue 13).
    crate::store::trust::prepare(&paths)?;
    // A lost or replaced state refuses here, before the run lock writes anything.
    state::load(&paths)?;
    // The run lock is taken before the preconditions are read, so two `run`s
    // racing on one task cannot both see it "not completed" and both execute.
    let _lock = if paths.stop().exists() {
        None // preconditions refuse with the STOP reason
    } else {
        Some(acquire_run_lock(&paths, &ids)?)
    };
    let Approved {
        task,
        approval,
        commit,
    } = preconditions(ctx, &paths, &id)?;
    let sha = task.sha256().to_owned();
    let Some(plan) = task.plan() else {
        if ctx.json {
            println!(
                "{}",
                json!({"task_id": ids, "manual": true, "changed": false})
            );
        } else {
            println!(
                "{ids} is a manual task (no rx-plan block): nothing to execute and nothing was changed.\n\
                 Do the work by hand, edit {}/RX_RESULT.md and RX_RESULT.json if you want to publish, then \
                 `rxnode mark-completed {ids}`.",
                paths.outbox(&id).display()
            );
        }
        return Ok(Outcome::Done);
    };
    let (policy, policy_source) = match crate::store::policy::load(&paths) {
        Ok(p) => p,
        Err(e) => {
            // Still exit 2 (invalid input), but the ledger says why nothing ran.
            let e2 = ledger::append(
                &paths,
                &Entry::new("refused")
                    .task(&ids)
                    .sha(&sha)
                    .detail(json!({"command": "run", "reason": format!("local policy: {e:#}")})),
            );
            if let Err(err) = e2 {
                tracing::error!("cannot write the ledger: {err:#}");
            }
            return Err(e);
        }
    };
    // Pre-flight the TX policy so nobody is asked to authorize what the policy refuses.
    for (i, s) in plan.steps.iter().enumerate() {
        if let Step::TxTone(t) = s {
            if let Err(e) = rxnode_interlock::check_tx_step(t, &policy) {
                let mut msg = format!("step {} (tx_tone): {e}", i + 1);
                if policy_source == crate::store::policy::Source::Defaults {
                    msg.push_str(&format!(
                        " — no policy file at {}",
                        paths.policy().display()
                    ));
                }
                return Err(refuse(&paths, &ids, Some(&sha), msg));
            }
        }
    }
    // RED: the exact authorization line, read at run time.
    let mut authorization = None;
    let mut auth_record = None;
    if let Some((kind, phrase)) = required_phrase(&task) {
        eprintln!("Task {ids} — {} — is RED.", task.header().task_title);
        match kind {
            AuthorizationKind::RfTx => {
                // One authorization covers one transmission: the first tx_tone step.
                // Every later tx_tone step is BLOCKED, so the prompt must not claim it.
                let mut first = true;
                for (i, s) in plan.steps.iter().enumerate() {
                    if let Step::TxTone(t) = s {
                        if first {
                            eprintln!(
                                "  This authorizes one transmission, step {} (the first tx_tone): {}",
                                i + 1,
                                describe_tx(t)
                            );
                            first = false;
                        } else {
                            eprintln!(
                                "  Step {} (tx_tone) will be BLOCKED, not transmitted: one authorization covers only the first tx_tone ({})",
                                i + 1,
                                describe_tx(t)
                            );
                        }
                    }
                }
            }
            AuthorizationKind::RedOther => {
                eprintln!(
                    "  RED work (declared RISK_LEVEL = RED): {} step(s):",
                    plan.steps.len()
                );
                for (i, s) in plan.steps.iter().enumerate() {
                    eprintln!(
                        "    {}. {}{}",
                        i + 1,
                        s.op(),
                        s.device().map(|d| format!(" on {d}")).unwrap_or_default()
                    );
                }
            }
        }
        eprintln!("Type exactly `{phrase}` and Enter to authorize, anything else refuses:");
        let line = read_line_exact()?;
        let at = now_iso();
        let verified = match line {
            None => Err(format!(
                "authorization refused for task {ids}: no line typed (end of input)"
            )),
            Some(l) => verify_authorization(&task, &approval, &l, &at).map_err(|e| e.to_string()),
        };
        match verified {
            Ok(a) => {
                ledger::append(
                    &paths,
                    &Entry::new("authorized")
                        .task(&ids)
                        .sha(&sha)
                        .commit(&commit)
                        .detail(json!({"kind": a.kind(), "at": a.at()})),
                )?;
                auth_record = Some(AuthorizationRecord {
                    kind: match a.kind() {
                        AuthorizationKind::RfTx => "RF_TX".to_owned(),
                        AuthorizationKind::RedOther => "RED_OTHER".to_owned(),
                    },
                    at: a.at().to_owned(),
                });
                authorization = Some(a);
            }
            Err(why) => {
                return Err(refuse(
                    &paths,
                    &ids,
                    Some(&sha),
                    format!("authorization refused for {ids}: {why}"),
                ));
            }
        }
    }
    let cancel = crate::term::cancel_flag("the running step");
    let started_at = now_iso();
    ledger::append(
        &paths,
        &Entry::new("run_started")
            .task(&ids)
            .sha(&sha)
            .commit(&commit)
            .detail(json!({"steps": plan.steps.len()})),
    )?;
    let mut out = Outputs {
        checks: vec![],
        inventory: None,
        captures: vec![],
        tx: None,
        errors: vec![],
        sweeps: vec![],
    };
    let mut iq_used: u64 = 0;
    for (i, step) in plan.steps.iter().enumerate() {
        let name = format!("step {}: {}", i + 1, step.op());
        if cancel.load(Ordering::SeqCst) {
            out.checks.push(Check::new(
                name,
                Status::NotRun,
                "interrupted before this step",
            ));
            continue;
        }
        eprintln!("[{}/{}] {}", i + 1, plan.steps.len(), step.op());
        match step {
            Step::Inventory => step_inventory(&name, &mut out),
            Step::ClockCheck(c) => step_clock(&name, c, &mut out),
            Step::RxCapture(c) => step_capture(
                ctx,
                &paths,
                &id,
                &policy,
                i,
                &name,
                c,
                &mut iq_used,
                &mut out,
            ),
            Step::RxSweep(s) => crate::exec::sweep::step_sweep(
                &paths,
                &id,
                &policy,
                i,
                &name,
                s,
                &mut out.checks,
                &mut out.sweeps,
                &mut out.errors,
            ),
            Step::TxTone(t) => {
                let auth = authorization.take();
                step_tx(&task, &approval, auth, &policy, i, &name, t, &mut out)
            }
        }
    }
    let interrupted = cancel.load(Ordering::SeqCst);
    let mut result = RxResult::manual_skeleton(&task, &commit, Some(&approval));
    result.authorization = auth_record;
    result.node.soapysdr_version = Some(rxnode_hw::soapysdr_version());
    result.node.name = crate::store::node::name_for_result(&paths);
    result.timeline = Timeline {
        started_at: Some(started_at),
        completed_at: Some(now_iso()),
    };
    result.checks = out.checks;
    result.inventory = out.inventory;
    result.captures = out.captures;
    result.tx = out.tx;
    result.errors = out.errors;
    result.sweeps = out.sweeps;
    if interrupted {
        result
            .errors
            .push("interrupted by the operator (Ctrl-C / SIGTERM)".to_owned());
    }
    result.recompute_status();
    let dir = paths.outbox(&id);
    write_result_files(&dir, &result)?;
    if let Err(e) = crate::result::write_spectrum_pngs(&dir, &result) {
        tracing::warn!("spectrum plot in {}: {e:#}", dir.display());
    }
    state::update(&paths, |s| {
        if let Some(r) = s.tasks.get_mut(&ids) {
            r.status = TaskStatus::Completed;
        }
        s.last_completed_task_id = Some(ids.clone());
        Ok(())
    })?;
    ledger::append(
        &paths,
        &Entry::new("run_finished")
            .task(&ids)
            .sha(&sha)
            .commit(&commit)
            .detail(json!({"status": result.status.as_str(), "interrupted": interrupted})),
    )?;
    if ctx.json {
        println!("{}", String::from_utf8_lossy(&result.to_json_bytes()));
    } else {
        let colour = crate::term::stdout_colour();
        let st = result.status.as_str();
        println!("{ids}: {}", crate::term::status(st, st.len(), colour));
        for c in &result.checks {
            println!(
                "  {} {} — {}",
                crate::term::status(c.status.as_str(), 8, colour),
                c.name,
                c.detail
            );
        }
        println!("results: {}", dir.display());
    }
    Ok(match result.status {
        Status::Pass => Outcome::Done,
        _ => Outcome::Code(1),
    })
}

fn step_inventory(name: &str, out: &mut Outputs) {
    match rxnode_hw::enumerate("") {
        Ok(devs) => {
            let detail = format!(
                "{} device(s): {}",
                devs.len(),
                devs.iter()
                    .map(|d| d.args.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            out.inventory = serde_json::to_value(&devs)
                .ok()
                .map(|d| json!({"devices": d}));
            out.checks.push(Check::new(name, Status::Pass, detail));
        }
        Err(e) => {
            out.errors.push(format!("{name}: {e}"));
            out.checks
                .push(Check::new(name, Status::Fail, e.to_string()));
        }
    }
}

fn step_clock(name: &str, c: &rxnode_interlock::ClockCheckStep, out: &mut Outputs) {
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
    let mut detail = format!(
        "clock source {:?}; sensors {:?}; hardware info clock source {:?}",
        source.as_deref().unwrap_or("?"),
        sensors,
        info.get("clock source")
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
            detail.push_str(&format!("; expected {want:?}"));
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

#[allow(clippy::too_many_arguments)]
fn step_capture(
    ctx: &Ctx,
    paths: &Paths,
    id: &TaskId,
    policy: &Policy,
    index: usize,
    name: &str,
    c: &RxCaptureStep,
    iq_used: &mut u64,
    out: &mut Outputs,
) {
    if let Err(e) = check_rx_step(c, &policy.rx) {
        out.checks
            .push(Check::new(name, Status::Blocked, e.to_string()));
        out.captures
            .push(json!({"step": index + 1, "status": "BLOCKED", "detail": e.to_string()}));
        return;
    }
    let record = c.record_iq.then(|| {
        paths
            .iq_dir(id)
            .join(format!("capture-{}.sigmf-data", index + 1))
    });
    let (gain_db, gain_elements) = crate::exec::live::split_gain(c.gain_db.as_ref());
    let live = LiveCapture {
        device: c.device.clone(),
        frequency_hz: c.frequency_hz,
        sample_rate_hz: c.sample_rate_hz,
        gain_db,
        gain_elements,
        bandwidth_hz: c.bandwidth_hz,
        antenna: c.antenna.clone(),
        clock_source: c.clock_source.clone(),
        duration_s: c.duration_s,
        fft_size: c.fft_size.unwrap_or(2048),
        clkin: c.clkin.as_ref().map(|k| (k.tone_hz, k.tolerance_ppm)),
        record,
        record_format: crate::exec::live::record_format_of(c.record_format),
        max_iq_bytes: Some(policy.rx.max_iq_bytes.saturating_sub(*iq_used)),
    };
    match crate::exec::live::capture(
        &live,
        Some(&paths.repo),
        crate::term::cancel_flag("the running step"),
        !ctx.json,
    ) {
        Ok(summary) => {
            *iq_used += summary.iq_files.iter().map(|f| f.bytes).sum::<u64>();
            let status = match summary.status {
                rxnode_hw::CaptureStatus::Pass => Status::Pass,
                rxnode_hw::CaptureStatus::Partial => Status::Partial,
                rxnode_hw::CaptureStatus::Fail => Status::Fail,
            };
            let mut detail = format!(
                "{} of {} samples, {} overflow(s), {} dropped, noise floor {}",
                summary.samples_received,
                summary.samples_requested,
                summary.overflows,
                summary.dropped_samples,
                summary
                    .noise_floor_db
                    .map(|n| format!("{n:.1} dB"))
                    .unwrap_or_else(|| "n/a".into())
            );
            if let Some(k) = &summary.clkin {
                detail.push_str(&format!(
                    "; CLKIN {:?}: {} ± {} ppm (tolerance {} ppm)",
                    k.status,
                    k.ppm
                        .map(|p| format!("{p:+.4}"))
                        .unwrap_or_else(|| "n/a".into()),
                    k.ppm_uncertainty
                        .map(|p| format!("{p:.4}"))
                        .unwrap_or_else(|| "n/a".into()),
                    k.tolerance_ppm
                ));
            }
            if let Some(r) = &summary.recording_error {
                detail.push_str(&format!("; recording stopped: {r}"));
            }
            out.errors
                .extend(summary.errors.iter().map(|e| format!("{name}: {e}")));
            let mut v = serde_json::to_value(&summary).unwrap_or(serde_json::Value::Null);
            if let (Some(obj), Some(p)) = (v.as_object_mut(), summary.psd.as_ref()) {
                obj.insert("psd_db".into(), json!(p.db));
                obj.insert("psd_start_hz".into(), json!(p.start_hz));
                obj.insert("psd_step_hz".into(), json!(p.step_hz));
                obj.remove("psd");
            }
            out.captures.push(v);
            out.checks.push(Check::new(name, status, detail));
        }
        Err(NotCaptured::Blocked(why)) | Err(NotCaptured::OverLimit(why)) => {
            out.checks
                .push(Check::new(name, Status::Blocked, why.clone()));
            out.captures
                .push(json!({"step": index + 1, "status": "BLOCKED", "detail": why}));
        }
        Err(NotCaptured::Failed(why)) => {
            out.errors.push(format!("{name}: {why}"));
            out.checks.push(Check::new(name, Status::Fail, why.clone()));
            out.captures
                .push(json!({"step": index + 1, "status": "FAIL", "detail": why}));
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn step_tx(
    task: &ValidTask,
    approval: &Approval,
    auth: Option<rxnode_interlock::Authorization>,
    policy: &Policy,
    index: usize,
    name: &str,
    t: &TxToneStep,
    out: &mut Outputs,
) {
    let Some(auth) = auth else {
        out.checks.push(Check::new(
            name,
            Status::Blocked,
            "no authorization left: one AUTHORIZE RF TX covers one tx_tone step",
        ));
        return;
    };
    // Without a signal handler a Ctrl-C would kill the process mid-tone, skipping the
    // teardown: never key the transmitter then.
    if !crate::term::cancel_handler_installed() {
        out.checks.push(Check::new(
            name,
            Status::Blocked,
            "Ctrl-C / SIGTERM cannot be caught in this process, so a stop could not tear the transmission down; not transmitting",
        ));
        return;
    }
    // Ctrl-C between steps: never key the transmitter after an interrupt.
    if crate::term::cancel_flag("the running step").load(Ordering::SeqCst) {
        out.checks.push(Check::new(
            name,
            Status::NotRun,
            "interrupted before this step",
        ));
        return;
    }
    let permit = match authorize(task, approval, auth, index, policy) {
        Ok(p) => p,
        Err(e) => {
            out.checks
                .push(Check::new(name, Status::Blocked, e.to_string()));
            return;
        }
    };
    let radio = match rxnode_hw::RxRadio::open(&t.device) {
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
    let mut txr = match radio.into_tx(permit) {
        Ok(r) => r,
        Err(e) => {
            out.checks
                .push(Check::new(name, Status::Blocked, e.to_string()));
            return;
        }
    };
    match txr.transmit_tone(crate::term::cancel_flag("the running step")) {
        Ok(rep) => {
            let status = if rep.cancelled {
                Status::Partial
            } else {
                Status::Pass
            };
            out.tx = Some(json!({
                "device": rep.device,
                "frequency_hz": rep.frequency_hz,
                "tone_offset_hz": rep.tone_offset_hz,
                "sample_rate_hz": rep.sample_rate_hz,
                "gain_db": rep.gain_db,
                "samples_sent": rep.samples_sent,
                "started_at": unix_to_iso(rep.started_unix_s),
                "stopped_at": unix_to_iso(rep.stopped_unix_s),
                "on_air_s": rep.stopped_unix_s - rep.started_unix_s,
                "cancelled": rep.cancelled,
            }));
            out.checks.push(Check::new(
                name,
                status,
                format!(
                    "{} samples sent at {:.6} MHz {:+.3} kHz, {} dB, {:.3} s on air{}",
                    rep.samples_sent,
                    rep.frequency_hz / 1e6,
                    rep.tone_offset_hz / 1e3,
                    rep.gain_db,
                    rep.stopped_unix_s - rep.started_unix_s,
                    if rep.cancelled {
                        " (cut short by interrupt)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        Err(e) => {
            out.errors.push(format!("{name}: {e}"));
            out.checks
                .push(Check::new(name, Status::Fail, e.to_string()));
        }
    }
}
