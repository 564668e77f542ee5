//! `rxnode review TASK_ID` and `rxnode mark-completed TASK_ID`.
use crate::context::Ctx;
use crate::exit::{bad_input, refused, Outcome};
use crate::git::ops;
use crate::store::ledger::{self, Entry, Event};
use crate::store::lock::Lock;
use crate::store::state::{self, TaskStatus};
use crate::watch::io::Io;
use crate::watch::{Decision, Flow};
use anyhow::Result;
use rxnode_interlock::TaskId;

fn parse_id(id: &str) -> Result<String> {
    TaskId::parse(id)
        .map(|t| t.to_string())
        .map_err(|e| bad_input(format!("task ID {id:?}: {e}")))
}

/// Prompt again for a deferred or pending task (from the commit recorded in
/// state; no fetch). Holds the watcher lock while prompting.
pub fn cmd_review(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    let id = parse_id(task_id)?;
    let paths = ctx.paths();
    let repo = ops::open(&ctx.repo)?;
    crate::store::trust::prepare(&paths)?;
    let _lock = review_lock(&paths, &id)?;
    let mut io = Io::new()?;
    let mut flow = Flow::on_branch(paths.clone(), &repo, &ctx.source, &mut io);
    flow.shell = ctx.shell();
    flow.review = true;
    // (`reprompt` checks the status under the lock: nothing decided meanwhile
    // is prompted again.)
    match flow.reprompt(&id)? {
        Decision::Refused => Err(refused(format!(
            "task {id} was approved but its outbox could not be prepared; it stays pending"
        ))),
        Decision::Rejected => Err(refused(format!(
            "task {id} was rejected (see `rxnode status`); not prompted"
        ))),
        Decision::NotForThisNode => Err(refused(format!(
            "task {id} is not for this node (TARGET_NODES); recorded, not prompted"
        ))),
        d @ (Decision::Stop | Decision::Eof | Decision::Signal) => {
            let how = match d {
                Decision::Stop => "[S] was chosen",
                Decision::Eof => "the input ended or could not be read",
                _ => "a stop signal arrived (Ctrl-C, SIGTERM, or the terminal closed)",
            };
            let still = state::load(&paths)
                .ok()
                .and_then(|s| {
                    s.tasks
                        .get(&id)
                        .map(|r| format!(", it is still {}", r.status))
                })
                .unwrap_or_default();
            Err(refused(format!(
                "task {id} was not decided: {how}; nothing changed{still} — \
                 fix: `rxnode review {id}` and answer A (approve) or D (defer)"
            )))
        }
        Decision::Approved | Decision::Deferred => Ok(Outcome::Done),
    }
}

/// The lock a review of task `id` prompts under: the watcher lock, or — beside a
/// live watcher — `.local/rxnode-review.lock`, so one review prompts at a time.
/// Beside a watcher that prompts, only a task it is not showing can be reviewed:
/// a deferred one (a watcher never prompts those again); a pending one is on, or
/// next for, the watcher's own prompt, and is answered there. Every decision is
/// written under the state lock, so the watcher and a review never lose each
/// other's changes.
fn review_lock(paths: &crate::store::paths::Paths, id: &str) -> Result<Lock> {
    let e = match Lock::acquire(paths, "review") {
        Ok(l) => return Ok(l),
        Err(e) => e,
    };
    let Some(watcher) = crate::store::lock::holder(paths)
        .ok()
        .flatten()
        .filter(|h| h.command.starts_with("watch") && crate::store::lock::holder_alive(h))
    else {
        return Err(e);
    };
    if watcher.command != crate::watch::NO_PROMPT_WATCHER {
        let pending = state::load(paths)
            .ok()
            .and_then(|s| s.tasks.get(id).map(|r| r.status == TaskStatus::Pending))
            .unwrap_or(false);
        if pending {
            return Err(refused(format!(
                "task {id} is pending, so the running watcher ({watcher}) shows it at its own \
                 prompt — fix: answer [A]/[D]/[S] in the watcher's terminal; `rxnode review` \
                 decides deferred tasks beside a watcher"
            )));
        }
    }
    Lock::acquire_at(paths, paths.local.join("rxnode-review.lock"), "review")
}

/// The text of `--note-file F`, read through the bounded reader: a FIFO or a
/// device is refused, a file at most 64 KiB (the note itself is held to
/// its character limit after).
pub fn read_note_file(f: &std::path::Path) -> anyhow::Result<String> {
    let bad = |e: String| crate::exit::bad_input(format!("--note-file {}: {e}", f.display()));
    let bytes = crate::store::fsutil::read_named_file(f, 64 * 1024).map_err(|e| match e {
        crate::store::fsutil::NamedFileError::Missing(e)
        | crate::store::fsutil::NamedFileError::Io(e) => bad(e.to_string()),
        e => bad(e.to_string()),
    })?;
    String::from_utf8(bytes).map_err(|_| bad("stream did not contain valid UTF-8".into()))
}

/// What the operator says of a manual task they finished: its status and a note.
/// With no status the outbox's result files are taken as they are (and must validate).
#[derive(Debug, Default)]
pub struct MarkCompleted {
    /// PASS, FAIL, PARTIAL or SKIP.
    pub status: Option<crate::result::ManualStatus>,
    /// What was done, one line in the result.
    pub note: Option<String>,
}

/// A task with an `rx-plan` gets its result from `rxnode run` (a `--status` for it
/// is refused where the result is written): marking it completed as it is before
/// any run started would close it with the approval's `NOT RUN` placeholder — never
/// run, and never runnable again. Only a planned task a run has started (one that
/// ended before any radio, which leaves it approved with its BLOCKED result) may be
/// closed as it is. The plan is read
/// from the outbox's approved text; when that cannot be read the answer is no.
fn planned_task_refusal(
    ctx: &Ctx,
    paths: &crate::store::paths::Paths,
    id: &str,
    outbox: &std::path::Path,
) -> Result<()> {
    let text = outbox.join("TASK.md");
    let bytes = crate::validate::read_task_file(&text).map_err(|e| {
        refused(format!(
            "task {id}: cannot tell whether it has an rx-plan ({e:#}); not marked completed"
        ))
    })?;
    let task = crate::validate::check(&bytes, &ctx.source.branch).map_err(|issues| {
        refused(format!(
            "task {id}: cannot tell whether it has an rx-plan: {} does not validate ({}); \
             not marked completed",
            text.display(),
            crate::validate::issue_list(&issues)
        ))
    })?;
    let Some(plan) = task.plan() else {
        return Ok(());
    };
    let steps = plan.steps.len();
    let started = ledger::any_in(&paths.ledger(), |e| {
        e.task_id.as_deref() == Some(id) && e.event() == "run_started"
    })?;
    if !started {
        return Err(refused(format!(
            "task {id} has an rx-plan of {steps} step(s) and has not run (its outbox holds the \
             approval's NOT RUN placeholder): marking it completed would leave it never run and \
             never runnable; nothing changed — fix: `rxnode run {id}`"
        )));
    }
    Ok(())
}

/// Mark an approved (manually finished) task complete; with a status, write its
/// result files first (both from one value, validated before they replace the old).
pub fn cmd_mark_completed(ctx: &Ctx, task_id: &str, opts: &MarkCompleted) -> Result<Outcome> {
    let id = parse_id(task_id)?;
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let tid = TaskId::parse(&id).map_err(|e| bad_input(format!("task ID {id:?}: {e}")))?;
    let outbox = paths.outbox(&tid);
    // Every file the result would create is checked to be ignored by Git before
    // anything is created, the run lock's files included: a refusal writes nothing.
    if opts.status.is_some() {
        crate::store::trust::check_created(&paths, &crate::result::manual_files_created(&outbox))?;
    }
    // The run lock, as `run` takes it: a run of the task, or a second
    // `mark-completed`, would otherwise write the same outbox at the same time
    // (both stage in one folder, and each clears it when it starts).
    crate::store::node::refuse_worktree_of_node(&paths, &format!("mark-completed {id}"))?;
    let _lock = Lock::acquire_at(&paths, paths.run_lock(), &format!("mark-completed {id}"))
        .map_err(|e| {
            if e.downcast_ref::<crate::exit::Refused>().is_some() {
                refused(format!(
                    "another `rxnode run` or `mark-completed` is at work in this checkout: {e:#}"
                ))
            } else {
                e
            }
        })?;
    let current = state::load(&paths)?.tasks.get(&id).map(|r| r.status);
    if current == Some(TaskStatus::Approved) && opts.status.is_none() {
        planned_task_refusal(ctx, &paths, &id, &outbox)?;
    }
    match (current, opts.status) {
        (Some(TaskStatus::Approved), Some(status)) => crate::result::complete_manual(
            &outbox,
            &ctx.repo,
            status,
            opts.note.as_deref(),
            &crate::store::fsutil::now_iso(),
        )?,
        (Some(TaskStatus::Approved), None) if outbox.join(crate::result::RESULT_JSON).exists() => {
            if let Some(why) = crate::result::interrupted_completion(&paths, &tid) {
                return Err(refused(why));
            }
            crate::result::check_manual_result(&outbox, &ctx.repo)?
        }
        (Some(TaskStatus::Completed), Some(_)) => {
            return Err(refused(format!(
                "task {id} is already completed; its result stays as it is"
            )))
        }
        _ => {}
    }
    let done = state::update(&paths, |s| {
        let hint = s.other_case_hint(&id);
        let rec = s
            .tasks
            .get_mut(&id)
            .ok_or_else(|| bad_input(format!("task {id} is not known on this node{hint}")))?;
        match rec.status {
            TaskStatus::Completed => Ok(false),
            TaskStatus::Approved => {
                rec.status = TaskStatus::Completed;
                s.last_completed_task_id = Some(id.clone());
                Ok(true)
            }
            other => Err(refused(format!(
                "task {id} is {other}; only an approved task can be marked completed"
            ))),
        }
    })?;
    let sha = state::load(&paths)?
        .tasks
        .get(&id)
        .map(|r| (r.task_sha256.clone(), r.commit.clone()));
    if done {
        let mut e = Entry::new(Event::MarkedCompleted).task(&id);
        if let Some((sha, commit)) = &sha {
            e = e.sha(sha).commit(commit);
        }
        ledger::append(&paths, &e)?;
    }
    // One line of JSON, as `mark-completed --json` has always printed it.
    let out = serde_json::value::RawValue::from_string(serde_json::to_string(
        &crate::exec::run::TaskMarked {
            changed: done,
            completed: Some(true),
            manual: None,
            task_id: &id,
        },
    )?)?;
    ctx.report(&out, |_| {
        if done {
            format!("task {id} marked completed\n")
        } else {
            format!("task {id} was already completed; nothing changed\n")
        }
    })?;
    Ok(Outcome::Done)
}
