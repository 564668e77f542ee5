//! `rxnode run <TASK_ID>`: execute an approved task's plan (docs/protocol.md, docs/safety.md, docs/protocol.md#5-results),
//! as preflight → authorize → execute → record → report.
//!
//! Preflight: the trust root, the run lock and every precondition
//! ([`crate::exec::preconditions`]: each refusal exit 3, a line, a ledger entry,
//! nothing touched), the node policy and the TX policy pre-flight. Authorize: RED
//! work needs the exact authorization line, read at run time. Execute: the RX
//! steps ([`crate::exec::steps`], [`crate::exec::sweep`]) and the one tone
//! ([`crate::exec::tx`]). Record: the result files, the state and the ledger.
use crate::context::Ctx;
use crate::exec::preconditions::{preconditions, refuse, Approved};
use crate::exec::steps::{self, Outputs, StepCtx};
use crate::exec::tx::{self, RefuseTo};
use crate::exit::{bad_input, Outcome};
use crate::result::{write_result_files, AuthorizationRecord, Check, RunClock, RxResult, Status};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Refusal, RunEnd};
use crate::store::lock::Lock;
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use crate::term::Once;
use anyhow::Result;
use rxnode_interlock::{
    required_phrase, verify_node_authorization, Authorization, AuthorizationKind, Plan, Policy,
    Step, TaskId,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// One `run` at a time per checkout: the watcher's lock mechanism on its own file.
fn acquire_run_lock(paths: &Paths, id: &str) -> Result<Lock> {
    crate::store::node::refuse_worktree_of_node(paths, &crate::store::lock::run_command(id))?;
    Lock::acquire_at(
        paths,
        paths.run_lock(),
        &crate::store::lock::run_command(id),
    )
    .map_err(|e| {
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
    })
}

/// What every phase after the preflight sees.
struct Run<'a> {
    ctx: &'a Ctx,
    paths: &'a Paths,
    approved: &'a Approved,
    plan: &'a Plan,
    policy: Policy,
    ids: &'a str,
    sha: &'a str,
}

/// The RED authorization, once verified: the permit's input and the result's record.
struct Authorized {
    authorization: Authorization,
    record: AuthorizationRecord,
}

/// Run an approved task (`rxnode run <TASK_ID>`).
pub fn cmd_run(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    let paths = ctx.paths();
    let id = TaskId::parse(task_id).map_err(|e| bad_input(e.to_string()))?;
    let (_lock, approved) = preflight(ctx, &paths, &id)?;
    say_later_texts(&paths, &id, approved.task.sha256());
    let Some(plan) = approved.task.plan() else {
        manual(ctx, &paths, &id)?;
        return Ok(Outcome::Done);
    };
    let sha = approved.task.sha256().to_owned();
    let to = RefuseTo {
        paths: &paths,
        ids: id.as_str(),
        sha: &sha,
    };
    let policy = load_policy(&to, plan)?;
    let run = Run {
        ctx,
        paths: &paths,
        approved: &approved,
        plan,
        policy,
        ids: id.as_str(),
        sha: &sha,
    };
    let authorized = authorize_red(&run)?;
    let (record, authorization) = match authorized {
        Some(a) => (Some(a.record), Some(a.authorization)),
        None => (None, None),
    };
    let cancel = crate::signals::cancel_flag("the running step");
    let clock = RunClock::start();
    // On record in the Git directory before any radio step, or not at all: the
    // `.local/` ledger alone can be lost to a pull (docs/safety.md §8).
    ledger::append_mirrored(
        &paths,
        &Entry::new(Event::RunStarted {
            steps: plan.steps.len(),
        })
        .task(run.ids)
        .sha(run.sha)
        .commit(&approved.commit),
    )
    .map_err(|e| {
        refuse(
            &paths,
            run.ids,
            Some(run.sha),
            format!(
                "{e:#}: a run is recorded in the Git directory, where no `git pull` can remove it, before any radio step; nothing was run — fix: make the Git directory writable (its owner, a read-only mount, a full disk)"
            ),
        )
    })?;
    let out = execute(&run, authorization, cancel);
    let policy_blocked = out.policy_blocked;
    crate::store::progress::clear(&paths);
    let interrupted = cancel.load(Ordering::SeqCst);
    let (result, dir, unwritten) = record_run(&run, out, record, &clock, interrupted)?;
    // The measurement reaches the operator first, also when its files could
    // not be written (a full disk): then this report is its only copy.
    report(ctx, run.ids, &result, &dir)?;
    if let Some(e) = unwritten {
        return Err(e);
    }
    // One rule for every command (docs/protocol.md#7-exit-status): a step the
    // node policy BLOCKED is a refusal, exit 3, as from `capture` and `sweep`.
    Ok(match result.status {
        Status::Pass => Outcome::Done,
        _ if policy_blocked => Outcome::Code(3),
        _ => Outcome::Code(1),
    })
}

/// Other texts of this task the watcher refused (the main PC posted a revision
/// under the same ID, before or after the approval): said before anything runs, because the
/// run executes the approved text, not what the branch holds now
/// (docs/protocol.md#1b-the-branchs-history-is-a-queue). Read from the ledger; a ledger that cannot be
/// read says nothing here (the preconditions have read it already).
fn say_later_texts(paths: &Paths, id: &TaskId, approved_sha: &str) {
    let mut seen = std::collections::BTreeSet::new();
    let _ = ledger::each_in(&paths.ledger(), |l| {
        let refused = matches!(l.event.as_deref(), Some("refused" | "rejected"));
        let (Some(sha), true) = (l.task_sha256.as_deref(), refused) else {
            return;
        };
        if l.task_id.as_deref() != Some(id.as_str())
            || sha == approved_sha
            || !seen.insert(sha.to_owned())
        {
            return;
        }
        let commit = l.commit.as_deref().map_or("?", |c| &c[..c.len().min(12)]);
        note!(
            "note: the watched branch has posted another text of {id} (commit {commit}, SHA-256 {}…), refused because a known task ID keeps its first text: this run executes the approved text (SHA-256 {}…); a revised task needs a new TASK_ID",
            &sha[..sha.len().min(12)],
            &approved_sha[..approved_sha.len().min(12)]
        );
    });
}

/// The trust root, the state, the run lock and the preconditions, in that order.
fn preflight(ctx: &Ctx, paths: &Paths, id: &TaskId) -> Result<(Option<Lock>, Approved)> {
    // The trust root first: nothing under .local/ is read, locked or written
    // (not even the ledger) while Git could have supplied it.
    crate::store::trust::prepare(paths)?;
    // A lost or replaced state refuses here, before the run lock writes anything.
    state::load(paths)?;
    // A run that started and never finished is finished as interrupted first
    // (docs/protocol.md#interrupted-runs).
    crate::result::finish_and_say(paths, &ctx.source.branch, "run");
    // The files every run writes (the refusal of a precondition too) must be
    // ignored by Git before any of them is written.
    crate::store::trust::check_created(paths, &record_paths(paths))?;
    // …and, read without writing anything, the files its plan would create:
    // refused here, a refusal leaves no lock file behind (checked again below
    // on the text the preconditions accept).
    if let Some(plan) = outbox_plan(ctx, paths, id) {
        crate::store::trust::check_created(paths, &plan_paths(paths, id, Some(&plan)))?;
    }
    // The run lock is taken before the preconditions are read, so two `run`s
    // racing on one task cannot both see it "not completed" and both execute.
    let lock = if paths.is_held() {
        None // preconditions refuse with the STOP reason
    } else {
        Some(acquire_run_lock(paths, id.as_str())?)
    };
    let mut approved = preconditions(ctx, paths, id)?;
    approved.signature = signature_allows(ctx, paths, id, &approved)?;
    // Approved here once, but the node may have been renamed since: its
    // TARGET_NODES must still name this node (docs/protocol.md#header-fields).
    if let Some(why) = crate::watch::not_for_this_node(&paths.repo, &approved.task) {
        return Err(refuse(
            paths,
            id.as_str(),
            Some(approved.task.sha256()),
            format!("task {id} is {why}; it is never run here"),
        ));
    }
    // Every file the plan will create, before any radio step runs: a step
    // that would create a file Git can see is refused here, never half-way.
    crate::store::trust::check_created(paths, &plan_paths(paths, id, approved.task.plan()))?;
    Ok((lock, approved))
}

/// The signature of the commit that last changed the task file, verified
/// again before any radio step (docs/safety.md#who-wrote-it): refused (exit 3)
/// when `tasks.require_signature` applies and it is not a good signature by an
/// allowed signer now — a signer removed or expired since the approval counts.
fn signature_allows(
    ctx: &Ctx,
    paths: &Paths,
    id: &TaskId,
    approved: &Approved,
) -> Result<Option<crate::signers::Checked>> {
    let task = &approved.task;
    // A bad policy: exit 2 as from the TX pre-flight, and the ledger says why nothing ran.
    let rule = match crate::store::policy::load(paths) {
        Ok((p, _)) => p.require_signature(),
        Err(e) => {
            crate::exec::ledger_note(
                paths,
                &Entry::new(Refusal::of("run", format!("local policy: {e:#}")))
                    .task(id.as_str())
                    .sha(task.sha256()),
            );
            return Err(e);
        }
    };
    let applies = rule.applies_to(task.risk());
    let repo = crate::git::ops::open(&paths.repo)?;
    let checked = git2::Oid::from_str(&approved.commit)
        .map_err(|_| {
            crate::exit::refused(format!(
                "task {id}: the approval records no usable commit ({:?})",
                approved.commit
            ))
        })
        .and_then(|c| crate::signers::check(paths, &repo, c, &ctx.source.task_path));
    let checked = match checked {
        Ok(c) => c,
        Err(e) if applies => {
            return Err(refuse(
                paths,
                id.as_str(),
                Some(task.sha256()),
                format!("task {id}: its signature cannot be checked ({e:#}); not run"),
            ))
        }
        Err(e) => {
            tracing::warn!("task {id}: signature not checked: {e:#}");
            return Ok(None);
        }
    };
    if let Some(why) = checked.refusal(rule, task.risk()) {
        return Err(refuse(
            paths,
            id.as_str(),
            Some(task.sha256()),
            format!("task {id}: {why}; not run"),
        ));
    }
    say_signature(ctx, &checked);
    Ok(Some(checked))
}

/// The signature line on stderr, as the prompt showed it. Under `--json` only the
/// documented JSON goes out: the signature is the result's `approval.signature`,
/// and the line goes to the log (`-v`).
fn say_signature(ctx: &Ctx, checked: &crate::signers::Checked) {
    let line = crate::describe::escaped(&checked.line());
    if ctx.json {
        tracing::info!("{line}");
    } else {
        note!("{line}");
    }
}

/// The plan of the outbox's approved text, read and validated without
/// writing anything (`None` when it cannot be: the preconditions refuse then).
fn outbox_plan(ctx: &Ctx, paths: &Paths, id: &TaskId) -> Option<Plan> {
    let bytes = crate::validate::read_task_file(&paths.outbox(id).join("TASK.md")).ok()?;
    let task = crate::validate::check(&bytes, &ctx.source.branch).ok()?;
    task.plan().cloned()
}

/// What every `run` may write under `.local/`: the state (its lock and temp
/// file) and the ledger.
fn record_paths(paths: &Paths) -> Vec<PathBuf> {
    let pid = std::process::id();
    vec![
        paths.state(),
        paths.local.join(format!(".rx_agent_state.json.tmp-{pid}")),
        paths.local.join("rx_agent_state.lock"),
        paths.ledger(),
    ]
}

/// Every file a run of `plan` creates under `.local/`: the outbox's result
/// files (and their temp files), spectrum and sweep images, and the IQ
/// recordings of each step in every format rxnode writes.
fn plan_paths(paths: &Paths, id: &TaskId, plan: Option<&Plan>) -> Vec<PathBuf> {
    let pid = std::process::id();
    let ob = paths.outbox(id);
    let mut v = Vec::new();
    for name in [crate::result::RESULT_JSON, crate::result::RESULT_MD] {
        v.push(ob.join(name));
        v.push(ob.join(format!(".{name}.tmp-{pid}")));
    }
    let n = plan.map_or(0, |p| p.steps.len());
    for i in 1..=n {
        v.push(ob.join(format!("SPECTRUM_{i}.png")));
        v.push(ob.join(format!("SWEEP_{i}.png")));
        v.push(ob.join(format!("SWEEP_{i}_heatmap.png")));
        v.push(ob.join(crate::result::compare_png_name(i)));
        v.push(ob.join(format!("FREQCAL_{i}.png")));
    }
    if plan.is_some_and(|p| p.steps.iter().any(|s| matches!(s, Step::FreqCal(_)))) {
        v.extend(crate::store::calibration::created_paths(paths));
    }
    if let Some(p) = plan {
        let iq = paths.iq_dir(id);
        for (i, s) in p.steps.iter().enumerate() {
            if matches!(s, Step::RxCapture(c) if c.record_iq) {
                for ext in ["sigmf-data", "sigmf-meta", "wav"] {
                    v.push(iq.join(format!("capture-{}.{ext}", i + 1)));
                }
            }
        }
    }
    v
}

/// What `run` of a manual task and `mark-completed` print with `--json`, one line:
/// the task, whether its state changed, and what it is.
#[derive(serde::Serialize)]
pub(crate) struct TaskMarked<'a> {
    /// Whether the node's state changed.
    pub(crate) changed: bool,
    /// `true`: the task is completed (`mark-completed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) completed: Option<bool>,
    /// `true`: the task has no plan, so nothing ran (`run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) manual: Option<bool>,
    /// The task.
    pub(crate) task_id: &'a str,
}

/// A task without a plan: nothing runs and nothing changes.
fn manual(ctx: &Ctx, paths: &Paths, id: &TaskId) -> Result<()> {
    let ids = id.as_str();
    ctx.report_with(
        &TaskMarked {
            changed: false,
            completed: None,
            manual: Some(true),
            task_id: ids,
        },
        serde_json::to_string,
        |_| {
            format!(
                "{ids} is a manual task (no rx-plan block): nothing to execute and nothing was changed.\n\
                 Do the work by hand, then say how it went: \
                 `rxnode mark-completed {ids} --status PASS|FAIL|PARTIAL|SKIP --note TEXT` \
                 (it writes the result files in {}).\n",
                paths.outbox(id).display()
            )
        },
    )
}

/// The node policy (a bad file: still exit 2, but the ledger says why nothing
/// ran), then the TX pre-flight against it.
fn load_policy(to: &RefuseTo, plan: &Plan) -> Result<Policy> {
    let (policy, policy_source) = match crate::store::policy::load(to.paths) {
        Ok(p) => p,
        Err(e) => {
            crate::exec::ledger_note(
                to.paths,
                &Entry::new(Refusal::of("run", format!("local policy: {e:#}")))
                    .task(to.ids)
                    .sha(to.sha),
            );
            return Err(e);
        }
    };
    tx::preflight(to, plan, &policy, &policy_source)?;
    Ok(policy)
}

/// RED: say what is authorized, read the exact line, verify it and write it to
/// the ledger. `None` for work that needs no authorization.
fn authorize_red(run: &Run) -> Result<Option<Authorized>> {
    let task = &run.approved.task;
    let Some((kind, phrase)) = required_phrase(task) else {
        return Ok(None);
    };
    let ids = run.ids;
    note!("Task {ids} — {} — is RED.", task.header().task_title);
    match kind {
        AuthorizationKind::RfTx => tx::announce(run.plan),
        AuthorizationKind::RedOther => {
            note!(
                "  RED work (declared RISK_LEVEL = RED): {} step(s):",
                run.plan.steps.len()
            );
            for (i, s) in run.plan.steps.iter().enumerate() {
                note!(
                    "    {}. {}{}",
                    i + 1,
                    s.op(),
                    s.device().map(|d| format!(" on {d}")).unwrap_or_default()
                );
            }
        }
    }
    // On a terminal, input typed before the prompt was drawn is discarded
    // ([`crate::term::ask_once`]); Ctrl-C or SIGTERM at the prompt authorizes
    // nothing: the run refuses as for any other line (ledger line, lock
    // released) instead of being killed with its lock left behind.
    let line = crate::term::ask_once(
        &format!("Type exactly `{phrase}` and Enter to authorize, anything else refuses:\n"),
        crate::term::To::Stderr,
    );
    let at = now_iso();
    // Another line, end of input or a signal: nothing ran, the approval stands,
    // and the phrase typed at the next `run` is the way on. Not for stdin that
    // cannot be read or an approval this node cannot vouch for.
    let mut retype = true;
    let verified = match line {
        Once::Eof => Err("no line typed and ended with Enter (end of input)".to_owned()),
        Once::Interrupted => Err(
            "interrupted at the prompt (Ctrl-C or a stop signal): nothing was authorized and nothing ran"
                .to_owned(),
        ),
        // A line past the bound, or stdin that cannot be read: never the phrase.
        Once::Unreadable(why) => {
            retype = false;
            Err(format!("cannot read stdin: {why}"))
        }
        Once::Line(l) => match crate::store::key::load(run.paths) {
            Ok(Some(k)) => {
                verify_node_authorization(task, &run.approved.approval, k.bytes(), &l, &at)
                    .map_err(|e| {
                        retype = matches!(e, rxnode_interlock::Error::WrongPhrase { .. });
                        e.to_string()
                    })
            }
            Ok(None) => {
                retype = false;
                Err("this node has no key, so it made no approval".to_owned())
            }
            Err(e) => {
                retype = false;
                Err(format!("{e:#}"))
            }
        },
    };
    let a = verified.map_err(|why| {
        // The interlock's refusal names the task already: one sentence per fact.
        let reason = if why.starts_with("authorization refused") {
            why
        } else {
            format!("authorization refused for task {ids}: {why}")
        };
        let recorded = refuse(run.paths, ids, Some(run.sha), reason.clone());
        if retype {
            crate::exit::refused(format!(
                "{reason}{}",
                crate::term::retype_fix(&format!("rxnode run {ids}"), &phrase)
            ))
        } else {
            recorded
        }
    })?;
    let mac = crate::store::key::load(run.paths)?
        .and_then(|k| a.record_mac(k.bytes(), &run.approved.commit));
    ledger::append(
        run.paths,
        &Entry::new(Event::Authorized {
            kind: a.kind(),
            at: a.at().to_owned(),
        })
        .task(ids)
        .sha(run.sha)
        .commit(&run.approved.commit)
        .mac(mac),
    )?;
    let record = AuthorizationRecord {
        kind: match a.kind() {
            AuthorizationKind::RfTx => "RF_TX".to_owned(),
            AuthorizationKind::RedOther => "RED_OTHER".to_owned(),
        },
        at: a.at().to_owned(),
    };
    Ok(Some(Authorized {
        authorization: a,
        record,
    }))
}

/// Every step in order; after an interrupt the rest are NOT RUN. The one
/// authorization goes to the first `tx_tone` step.
fn execute(run: &Run, mut authorization: Option<Authorization>, cancel: &AtomicBool) -> Outputs {
    let mut out = Outputs::default();
    // Step by step on the operator's terminal; nothing of it through a pipe.
    let show_progress = !run.ctx.json && crate::term::stderr_progress();
    for (i, step) in run.plan.steps.iter().enumerate() {
        let name = format!("step {}: {}", i + 1, step.op());
        if cancel.load(Ordering::SeqCst) {
            out.checks.push(Check::new(
                name,
                Status::NotRun,
                "interrupted before this step",
            ));
            continue;
        }
        if let Some(why) = crate::exec::held(run.paths) {
            out.checks.push(Check::new(name, Status::NotRun, why));
            continue;
        }
        if show_progress {
            // A step the policy blocks, or one on a BAD radio, opens no radio.
            let blocked = |s: &Step| {
                rxnode_interlock::check_step(s, &run.policy)
                    .err()
                    .map(|e| format!("blocked by the node's policy ({e})"))
                    .or_else(|| {
                        s.device()
                            .and_then(|d| crate::health::guard::bad_reason(run.paths, d))
                            .map(|_| "blocked: its radio is BAD".to_owned())
                    })
            };
            note!("{}", progress_line(run.plan, &blocked, i));
        }
        crate::store::progress::step(run.paths, run.ids, i + 1, run.plan.steps.len(), step.op());
        let s = StepCtx {
            ctx: run.ctx,
            paths: run.paths,
            task: &run.approved.task,
            approval: &run.approved.approval,
            policy: &run.policy,
            index: i,
            name,
        };
        // A BAD radio is not used (docs/protocol.md#8-radio-health); a comparison checks
        // its second radio under the radios' locks.
        // A radio of another host the policy does not list is not reached: the
        // step is BLOCKED before any radio is opened (docs/safety.md).
        let off_policy = rxnode_interlock::check_reach(step, &run.policy)
            .err()
            .map(|e| format!("blocked by the node's policy ({e})"));
        out.policy_blocked |= off_policy.is_some();
        let bad_radio = off_policy.or_else(|| {
            step.device()
                .and_then(|d| crate::health::guard::bad_reason(run.paths, d))
        });
        steps::exec_step(&s, step, bad_radio, &mut authorization, &mut out);
    }
    out
}

/// `[2/3] rx_capture on driver=hackrf: 5.0 s (about 7 s left in the run)`: the
/// step, its radio, its length and the time the timed steps from here take —
/// those that will run (`blocked` says why a step will not: the node's policy,
/// a BAD radio; it takes no time).
fn progress_line(
    plan: &rxnode_interlock::Plan,
    blocked: &dyn Fn(&Step) -> Option<String>,
    i: usize,
) -> String {
    let Some(step) = plan.steps.get(i) else {
        return String::new();
    };
    let (device, secs) = (step.device(), step.duration_s());
    let mut line = format!("[{}/{}] {}", i + 1, plan.steps.len(), step.op());
    if let Some(d) = device {
        line.push_str(&format!(" on {d}"));
    }
    if let Some(why) = blocked(step) {
        line.push_str(&format!(": {why}"));
    } else if let Some(s) = secs {
        line.push_str(&format!(": {} s", crate::result::plot::trim_number(s, 1)));
    }
    let left: f64 = plan
        .steps
        .iter()
        .skip(i)
        .filter(|s| blocked(s).is_none())
        .filter_map(Step::duration_s)
        .sum();
    if left > 0.0 {
        line.push_str(&format!(" (about {} s left in the run)", left.ceil()));
    }
    line
}

/// The result files (and spectrum pictures) in the outbox, the task completed in
/// the state, `run_finished` in the ledger. When the result files cannot be
/// written (a full disk) the run still counts as run: the third value is the
/// error to give after the result is reported, and the outbox keeps no result
/// at all — never the `NOT RUN` one written at approval, which `publish` would
/// send for a task that ran (docs/reliability.md#a-full-disk).
fn record_run(
    run: &Run,
    out: Outputs,
    authorization: Option<AuthorizationRecord>,
    clock: &RunClock,
    interrupted: bool,
) -> Result<(RxResult, PathBuf, Option<anyhow::Error>)> {
    let approved = run.approved;
    let mut result =
        RxResult::manual_skeleton(&approved.task, &approved.commit, Some(&approved.approval));
    if let Some(a) = &mut result.approval {
        a.signature = approved
            .signature
            .as_ref()
            .map(crate::signers::Checked::record);
    }
    result.authorization = authorization;
    result.node.soapysdr_version = Some(rxnode_hw::soapysdr_version());
    result.node.name = crate::store::node::name_for_result(run.paths);
    // `completed_at` is `started_at` plus the monotonic duration: a wall-clock
    // step during the run is recorded, and never makes the result invalid.
    result.timeline = clock.timeline();
    result.checks = out.checks;
    result.inventory = out.inventory;
    result.captures = out.captures;
    result.tx = out.tx;
    result.errors = out.errors;
    result.sweeps = out.sweeps;
    result.clkin_compares = out.compares;
    result.freq_cal = out.freq_cal;
    result.pictures = crate::result::pictures::of_run(&result, out.drawn);
    if interrupted {
        result.errors.push(
            "interrupted by a stop signal (Ctrl-C, SIGTERM, or SIGHUP: its terminal closed)"
                .to_owned(),
        );
    }
    result.recompute_status();
    let result = result.with_relative_paths(&run.paths.repo);
    let dir = run.paths.outbox(approved.task.id());
    // The radio was touched: whatever fails now, the ledger gets its
    // `run_finished` and the state its completion, and the error is never a
    // refusal (exit 3) — the run happened.
    let written = write_result_files(&dir, &result);
    if written.is_ok() {
        if let Err(e) = crate::result::write_spectrum_pngs(&dir, &result) {
            tracing::warn!("spectrum plot in {}: {e:#}", dir.display());
        }
        if let Err(e) = crate::result::plot::write_compare_pngs(&dir, &result) {
            tracing::warn!("clkin_compare plot in {}: {e:#}", dir.display());
        }
        for e in result
            .freq_cal
            .iter()
            .filter_map(|e| e.record())
            .filter(|e| e.detections.is_some())
        {
            let n = e.step.unwrap_or(0);
            let png = dir.join(format!("FREQCAL_{n}.png"));
            let origin = format!("{} step {n}", run.ids);
            if let Err(err) = crate::result::write_freq_cal_png(&png, e, &origin) {
                tracing::warn!("freq_cal plot {}: {err:#}", png.display());
            }
        }
    }
    // The state first: a `run_finished` line the state does not yet match
    // would make the state's own update refuse ("rolled back").
    let ids = run.ids.to_owned();
    if opened_no_stream(&result) {
        // Nothing reached a radio: the task stays approved and may be run again
        // (after a policy change, say); a RED run asks for a fresh authorization.
        let logged = ledger::append(
            run.paths,
            &Entry::new(Event::RunEndedBeforeRadio(RunEnd {
                status: result.status.as_str().to_owned(),
                interrupted,
            }))
            .task(run.ids)
            .sha(run.sha)
            .commit(&approved.commit),
        );
        written?;
        logged?;
        return Ok((result, dir, None));
    }
    let saved = state::update(run.paths, |s| {
        if let Some(r) = s.tasks.get_mut(&ids) {
            r.status = TaskStatus::Completed;
        }
        s.last_completed_task_id = Some(ids.clone());
        Ok(())
    });
    let logged = ledger::append(
        run.paths,
        &Entry::new(Event::RunFinished(RunEnd {
            status: result.status.as_str().to_owned(),
            interrupted,
        }))
        .task(run.ids)
        .sha(run.sha)
        .commit(&approved.commit),
    );
    for (what, r) in [
        ("the ledger's run_finished line", logged),
        ("the state's completion", saved),
    ] {
        if let Err(e) = r {
            return Err(anyhow::anyhow!(
                "task {} ran (status {}), but {what} could not be written: {e:#}; it counts as run — {}",
                run.ids,
                result.status.as_str(),
                crate::store::state::REBUILD_HINT
            ));
        }
    }
    let unwritten = written.err().map(|e| {
        // Removing needs no space: what stays is no result, never a false one.
        for name in [crate::result::RESULT_JSON, crate::result::RESULT_MD] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        anyhow::anyhow!(
            "task {} ran (status {}), but its result files could not be written: {e:#}; it \
             counts as run and cannot run again, and with no result in its outbox it cannot \
             be published. The result printed above is the only copy of this measurement: \
             keep it. Mend what the error names (a full disk: free space, `df {}`), then ask \
             the main PC for the task again under a new TASK_ID to measure and publish it",
            run.ids,
            result.status.as_str(),
            dir.display()
        )
    });
    Ok((result, dir, unwritten))
}

/// Whether a run ended before any radio stream was opened: every step BLOCKED
/// (by the policy, or a radio that could not be opened or streamed) or NOT RUN,
/// and no `tx_tone` step got past NOT RUN (a TX step that began keying stays
/// single-use whatever its status says).
fn opened_no_stream(result: &RxResult) -> bool {
    result.tx.is_none()
        && !result.checks.is_empty()
        && result.checks.iter().all(|c| {
            c.status == Status::NotRun
                || (c.status == Status::Blocked && !c.name.ends_with(": tx_tone"))
        })
}

/// What lets a run that reached no radio run again, from why its steps did not
/// run: a hold, the node's policy, or whatever the lines above name.
fn what_to_mend(checks: &[Check]) -> &'static str {
    let said = |what: &str| checks.iter().any(|c| c.detail.contains(what));
    if said(".local/STOP") {
        "after removing .local/STOP"
    } else if said("policy") {
        "after changing the policy"
    } else {
        "once what the lines above name is mended"
    }
}

/// The result on stdout: the JSON (`RX_RESULT.json`'s bytes), or the status and
/// one line per check.
fn report(ctx: &Ctx, ids: &str, result: &RxResult, dir: &std::path::Path) -> Result<()> {
    let json = |r: &RxResult| Ok(String::from_utf8_lossy(&r.to_json_bytes()).into_owned());
    ctx.report_with(result, json, |result| render_report(ids, result, dir))
}

/// The result for a person: the status, one line per check, where the result
/// files are, and whether the task can run again.
fn render_report(ids: &str, result: &RxResult, dir: &std::path::Path) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let colour = crate::term::stdout_colour();
    let st = result.status.as_str();
    let _ = writeln!(out, "{ids}: {}", crate::term::status(st, st.len(), colour));
    for c in &result.checks {
        let _ = writeln!(
            out,
            "  {} {} — {}",
            crate::term::status(c.status.as_str(), 8, colour),
            c.name,
            c.detail
        );
    }
    let _ = writeln!(out, "results: {}", dir.display());
    if opened_no_stream(result) {
        let _ = writeln!(
            out,
            "nothing reached a radio: {ids} stays approved; {}, `rxnode run {ids}` runs it again{}",
            what_to_mend(&result.checks),
            if result.authorization.is_some() {
                " (it asks for a fresh authorization)"
            } else {
                ""
            }
        );
    }
    out
}

#[cfg(test)]
mod mend_tests {
    use super::*;

    /// The line after a run that reached no radio names what stopped it: the hold,
    /// the policy, or the lines above.
    #[test]
    fn a_run_that_reached_no_radio_names_what_to_mend() {
        let c = |d: &str| vec![Check::new("step 1: rx_capture", Status::NotRun, d)];
        let held = c("held by .local/STOP (put in place during the run): not started");
        assert_eq!(what_to_mend(&held), "after removing .local/STOP");
        let policy = c("blocked by the node policy: max_duration_s 0.2 < 1");
        assert_eq!(what_to_mend(&policy), "after changing the policy");
        let radio = c("could not open driver=rxsim: no such device");
        assert_eq!(
            what_to_mend(&radio),
            "once what the lines above name is mended"
        );
    }
}
