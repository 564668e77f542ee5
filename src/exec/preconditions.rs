//! The preconditions of `rxnode run <TASK_ID>` (docs/protocol.md, docs/safety.md, docs/protocol.md#5-results), each refusal
//! an exit 3, a line and a ledger entry, with nothing touched: approved in state;
//! the outbox `TASK.md` hashes to the approved SHA-256 and equals the blob at the
//! recorded commit; it validates; not completed before; not held by `.local/STOP`;
//! and the ledger and outbox show no earlier run.
use crate::context::Ctx;
use crate::exit::refused;
use crate::store::ledger::{self, Entry, Refusal};
use crate::store::paths::Paths;
use crate::store::state::{self, TaskStatus};
use anyhow::Result;
use rxnode_interlock::{sha256_hex, Approval, TaskId, ValidTask, MAX_TASK_BYTES};

/// Refuse: ledger entry + exit-3 error.
pub(crate) fn refuse(paths: &Paths, id: &str, sha: Option<&str>, reason: String) -> anyhow::Error {
    let mut e = Entry::new(Refusal::of("run", reason.clone())).task(id);
    if let Some(s) = sha {
        e = e.sha(s);
    }
    crate::exec::ledger_note(paths, &e);
    refused(reason)
}

/// Everything checked before anything runs.
pub(crate) struct Approved {
    /// The approved task, validated again.
    pub(crate) task: ValidTask,
    /// The state's approval of it.
    pub(crate) approval: Approval,
    /// The commit the approval recorded.
    pub(crate) commit: String,
    /// Its signature, checked again by `run` (`None` until then, or when the
    /// allowed signers cannot be read and the policy requires none).
    pub(crate) signature: Option<crate::signers::Checked>,
}

/// Check every precondition of `run`.
pub(crate) fn preconditions(ctx: &Ctx, paths: &Paths, id: &TaskId) -> Result<Approved> {
    let ids = id.as_str();
    if paths.is_held() {
        return Err(refuse(
            paths,
            ids,
            None,
            format!("held by {}: remove it to run tasks", paths.stop().display()),
        ));
    }
    let approval = approval_of(paths, ids)?;
    let bytes = approved_text(paths, id, &approval)?;
    let sha = sha256_hex(&bytes);
    let commit = approval.commit.clone();
    text_at_commit(ctx, paths, ids, &commit, &bytes)?;
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
        signature: None,
    })
}

/// The state's approval of `ids`: refused when the task completed or was never approved.
fn approval_of(paths: &Paths, ids: &str) -> Result<Approval> {
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
    // A published result stands for the task for good (a result is never
    // overwritten): a run after it would do radio work whose result could never
    // be published (docs/publishing.md#publish-after-the-run).
    if let Some(p) = st.published.get(ids) {
        return Err(refuse(
            paths,
            ids,
            st.approvals.get(ids).map(|a| a.task_sha256.as_str()),
            format!(
                "task {ids}'s result was already published as commit {} at {}, and a published result is \
                 never overwritten, so this run's result could never be published; nothing is run — ask \
                 the main PC to post the task again under a new TASK_ID",
                p.commit, p.at
            ),
        ));
    }
    let Some(approval) = st.approvals.get(ids).cloned() else {
        let why = match st.tasks.get(ids).map(|r| r.status) {
            Some(TaskStatus::Deferred) => format!(
                "it is deferred — fix: `rxnode review {ids}` and answer A (approve), then run it again"
            ),
            Some(TaskStatus::Pending) => format!(
                "it is pending: nobody approved it — fix: answer A at the watcher's prompt \
                 (`rxnode watch`), or `rxnode review {ids}`, then run it again"
            ),
            Some(TaskStatus::Rejected) => "it was rejected".to_owned(),
            Some(TaskStatus::Withdrawn) => {
                "the main PC withdrew it (deleted the task file)".to_owned()
            }
            Some(TaskStatus::NotForThisNode) => {
                "it is not for this node (TARGET_NODES)".to_owned()
            }
            _ => match st.other_case_hint(ids) {
                hint if hint.is_empty() => "it is unknown to this node: no watcher here has seen \
                    it — fix: `rxnode watch` fetches the watched branch and shows each new task \
                    for approval ([A]); approved, it runs with `rxnode run`"
                    .to_owned(),
                hint => format!("it is unknown to this node{hint}"),
            },
        };
        return Err(refuse(
            paths,
            ids,
            None,
            format!("task {ids} is not approved: {why}"),
        ));
    };
    // `state::load` refused any approval this node did not sign; checked again
    // here, at the one place an approval becomes a run.
    let key = crate::store::key::load(paths)?;
    if let Err(reason) = crate::store::key::check_approval(&approval, key.as_ref()) {
        return Err(refused(crate::store::key::unsigned_message(ids, &reason)));
    }
    Ok(approval)
}

/// The outbox `TASK.md`, refused unless it hashes to the approved SHA-256.
fn approved_text(paths: &Paths, id: &TaskId, approval: &Approval) -> Result<Vec<u8>> {
    let ids = id.as_str();
    let task_md = paths.outbox(id).join("TASK.md");
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
    Ok(bytes)
}

/// The approved text must equal the blob at the recorded commit (a dry-run
/// approval, with no commit, never runs).
fn text_at_commit(ctx: &Ctx, paths: &Paths, ids: &str, commit: &str, bytes: &[u8]) -> Result<()> {
    let sha = sha256_hex(bytes);
    if commit.is_empty() {
        return Err(refuse(
            paths,
            ids,
            Some(&sha),
            format!(
                "task {ids} was approved in a dry run (no commit): dry-run approvals never run"
            ),
        ));
    }
    let repo = crate::git::ops::open(&paths.repo)?;
    let oid = git2::Oid::from_str(commit).map_err(|_| {
        refuse(
            paths,
            ids,
            Some(&sha),
            format!("approved commit {commit:?} is not a commit id"),
        )
    })?;
    let task_path = &ctx.source.task_path;
    match crate::git::ops::read_blob_at(&repo, oid, task_path, MAX_TASK_BYTES) {
        Ok(crate::git::ops::Blob::Content { bytes: b, .. }) if b == bytes => Ok(()),
        Ok(_) => Err(refuse(
            paths,
            ids,
            Some(&sha),
            format!("{task_path} at commit {commit} is not the approved text"),
        )),
        Err(e) => Err(refuse(
            paths,
            ids,
            Some(&sha),
            format!("cannot read the task at commit {commit}: {e:#}"),
        )),
    }
}

/// Single use whatever happened to the state: the ledger and the
/// outbox are evidence. Refused — writing nothing, since the evidence itself is
/// what is in question — when the ledger or the outbox shows a finished run (for
/// RED also a started one: it may have transmitted before a crash), or when the
/// state's approval is not one the ledger recorded (same text hash and commit).
fn evidence_allows(paths: &Paths, task: &ValidTask, approval: &Approval) -> Result<()> {
    let ids = task.id().as_str();
    let red = task.risk() == rxnode_interlock::RiskLevel::Red;
    if let Some(why) = crate::store::evidence::finished_run(paths, ids, red)? {
        return Err(refused(format!(
            "task {ids} already ran on this node ({why}; {}) — a task runs once; fix: post the work again under a new TASK_ID",
            paths.outbox(task.id()).display()
        )));
    }
    // The mirror in the Git directory, when there is one, is what a planted or
    // padded `.local/` ledger cannot supply: the approval must be in it.
    let file = match ledger::nonempty_mirror(paths)? {
        Some(m) => m,
        None => ledger::evidence_path(paths)?,
    };
    let recorded = ledger::any_in(&file, |e| {
        e.event() == "approved"
            && e.task_id.as_deref() == Some(ids)
            && e.task_sha256.as_deref() == Some(approval.task_sha256.as_str())
            && e.commit.as_deref() == Some(approval.commit.as_str())
            && e.at.as_deref() == Some(approval.at.as_str())
            && approval.mac.is_some()
            && e.mac == approval.mac
    })?;
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
