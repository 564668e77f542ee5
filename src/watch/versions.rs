//! The examination of one task version: exactly one ledger line each
//! (`offered`, `superseded`, `refused`, `duplicate`, `withdrawn`,
//! `task_file_deleted`; see `queue.rs`).
use super::{Flow, Verdict};
use crate::git::ops::{self, Blob, Version};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Refusal};
use crate::store::queue::{short, Withdrawal};
use crate::store::state::{self, State, TaskStatus};
use anyhow::Result;
use git2::Repository;
use rxnode_interlock::{lenient_task_id, sha256_hex, ValidTask, MAX_TASK_BYTES};

/// The ledger line of one version, with what is known of it.
fn version_line(event: Event, v: &Version, id: Option<&str>, sha: Option<&str>) -> Entry {
    let mut e = Entry::new(event).commit(&v.commit.to_string());
    if let Some(id) = id {
        e = e.task(id);
    }
    if let Some(sha) = sha {
        e = e.sha(sha);
    }
    e
}

/// Examine one version; `Some(id)` when it queued a new task.
pub(super) fn examine_version(
    flow: &mut Flow<'_>,
    repo: &Repository,
    v: &Version,
    next: Option<&Version>,
) -> Result<Option<String>> {
    if v.entry.is_none() {
        withdraw(flow, repo, v)?;
        return Ok(None);
    }
    let Some((bytes, blob)) = read_version(flow, repo, v)? else {
        return Ok(None);
    };
    let sha = sha256_hex(&bytes);
    match flow.check_version(&bytes, Some(v.commit))? {
        Verdict::New(task) => queue_new(flow, v, next, &task, &blob).map(Some),
        Verdict::Pending(id) => already_queued(flow, v, &id, &sha),
        // (Only a dry run gets the task itself back; the same here.)
        Verdict::PendingTask(t) => already_queued(flow, v, t.id().as_ref(), &sha),
        // (Its `not_for_this_node` line is this version's line.)
        Verdict::NotForThisNode => Ok(None),
        Verdict::Duplicate { id, status } => {
            ledger::append(
                &flow.paths,
                &version_line(
                    Event::Duplicate {
                        known: status.clone(),
                        note: Some("decided before; not prompted again".to_owned()),
                        reason: None,
                    },
                    v,
                    id.as_deref(),
                    Some(&sha),
                ),
            )?;
            Ok(None)
        }
        Verdict::Refused {
            id,
            reason,
            written,
        } => {
            match written {
                // The refusal's own `refused` line is this version's line.
                Some("refused") => {}
                Some(_) => ledger::append(
                    &flow.paths,
                    &version_line(Refusal::version(reason), v, id.as_deref(), Some(&sha)),
                )?,
                None => ledger::append(
                    &flow.paths,
                    &version_line(
                        Event::Duplicate {
                            known: "refused before".to_owned(),
                            note: None,
                            reason: Some(reason),
                        },
                        v,
                        id.as_deref(),
                        Some(&sha),
                    ),
                )?,
            }
            Ok(None)
        }
    }
}

/// The version's task file and its blob ID; `None` when it was not read (too
/// large, not a regular file: refused and recorded here).
fn read_version(
    flow: &Flow<'_>,
    repo: &Repository,
    v: &Version,
) -> Result<Option<(Vec<u8>, String)>> {
    let commit_s = v.commit.to_string();
    let (key, reason) = match ops::read_blob_at(repo, v.commit, &flow.task_path, MAX_TASK_BYTES)?
    {
        Blob::Content { bytes, blob } => return Ok(Some((bytes, blob))),
        Blob::Missing => return Ok(None), // not reached: `entry` is Some
        Blob::TooLarge { size, blob } => (
            blob,
            format!(
                "task file {} on {}/{} at {commit_s} is {size} bytes; at most {MAX_TASK_BYTES} (1 MiB); not loaded",
                flow.task_path, flow.remote, flow.branch
            ),
        ),
        Blob::NotAFile { kind, id } => (
            id,
            format!(
                "task path {} on {}/{} at {commit_s} is {kind}, not a regular file; not read",
                flow.task_path, flow.remote, flow.branch
            ),
        ),
    };
    refused_blob(flow, v, &key, reason)?;
    Ok(None)
}

/// A blob that was never read: rejected once by its object ID, and the
/// version's own line (`refused`, or `duplicate` when refused before).
fn refused_blob(flow: &Flow<'_>, v: &Version, key: &str, reason: String) -> Result<()> {
    let written = flow.reject_blob(key, v.commit, &reason)?;
    let event = if written {
        Refusal::version(reason)
    } else {
        Event::Duplicate {
            known: "refused before".to_owned(),
            note: None,
            reason: Some(reason),
        }
    };
    // `reject_blob` wrote a `rejected` line; this is the version's own.
    ledger::append(&flow.paths, &version_line(event, v, None, None))
}

/// A valid new task: recorded pending, queued (superseded when a later
/// version replaced it), and its `offered` or `superseded` line; its ID.
fn queue_new(
    flow: &Flow<'_>,
    v: &Version,
    next: Option<&Version>,
    task: &ValidTask,
    blob: &str,
) -> Result<String> {
    let commit_s = v.commit.to_string();
    // The task was checked from exactly these bytes: its SHA-256 is theirs.
    let sha = task.sha256();
    let id = task.id().to_string();
    let superseded_by = next
        .filter(|n| n.entry.is_some())
        .map(|n| n.commit.to_string());
    flow.record_pending(task, &commit_s)?;
    state::update(&flow.paths, |s| {
        let State { tasks, queue, .. } = s;
        queue.enqueue(&id, tasks);
        if let Some(by) = &superseded_by {
            s.queue.superseded.insert(id.clone(), by.clone());
        }
        Ok(())
    })?;
    let (blob, risk_level) = (blob.to_owned(), task.risk().as_str().to_owned());
    let event = match superseded_by {
        Some(by) => Event::Superseded {
            superseded_by: by,
            queued: true,
            blob,
            risk_level,
        },
        None => Event::Offered {
            queued: true,
            blob,
            risk_level,
        },
    };
    ledger::append(&flow.paths, &version_line(event, v, Some(&id), Some(sha)))?;
    Ok(id)
}

/// A version whose text is a task already queued (pending): one `duplicate` line.
fn already_queued(flow: &Flow<'_>, v: &Version, id: &str, sha: &str) -> Result<Option<String>> {
    ledger::append(
        &flow.paths,
        &version_line(
            Event::Duplicate {
                known: "pending".to_owned(),
                note: Some("already queued".to_owned()),
                reason: None,
            },
            v,
            Some(id),
            Some(sha),
        ),
    )?;
    Ok(None)
}

/// The task file was deleted at `v`: withdraw the task it held if that task
/// is pending or deferred (never an approved one).
fn withdraw(flow: &mut Flow<'_>, repo: &Repository, v: &Version) -> Result<()> {
    let commit_s = v.commit.to_string();
    // A folder on the way that became a submodule (or a link, a file) removes
    // the task file as a deletion does: said as what it is.
    let (deleted, gone) = match ops::path_blocked(repo, v.commit, &flow.task_path) {
        Some(why) => (
            format!("gone ({why})"),
            format!("removed {} ({why})", flow.task_path),
        ),
        None => ("deleted".to_owned(), format!("deleted {}", flow.task_path)),
    };
    let (sha, id) = match held_by_deleted(repo, v) {
        Some((sha, Some(id))) => (sha, id),
        other => {
            ledger::append(
                &flow.paths,
                &version_line(
                    Event::TaskFileDeleted {
                        known: None,
                        withdrew: None,
                        why: "the removed file held no usable task ID".to_owned(),
                    },
                    v,
                    None,
                    other.as_ref().map(|o| o.0.as_str()),
                ),
            )?;
            flow.say(format!(
                "{}/{} at {}: {} {deleted} (it held no usable task)",
                flow.remote,
                flow.branch,
                short(&commit_s),
                flow.task_path
            ));
            return Ok(());
        }
    };
    match withdraw_in_state(flow, &id, &sha, &commit_s)? {
        Ok(was) => {
            ledger::append(
                &flow.paths,
                &version_line(
                    Event::Withdrawn {
                        was,
                        why: "the main PC deleted the task file".to_owned(),
                    },
                    v,
                    Some(&id),
                    Some(&sha),
                ),
            )?;
            flow.say(format!(
                "task {id} WITHDRAWN: {}/{} {gone} at {} before it was approved; it is kept in state and not offered again",
                flow.remote, flow.branch, short(&commit_s)
            ));
        }
        Err(known) => {
            ledger::append(
                &flow.paths,
                &version_line(
                    Event::TaskFileDeleted {
                        known: Some(known.clone()),
                        withdrew: None,
                        why: "only a pending or deferred task is withdrawn".to_owned(),
                    },
                    v,
                    Some(&id),
                    Some(&sha),
                ),
            )?;
            flow.say(format!(
                "{}/{} at {}: {} {deleted}; task {id} is {known}, left as it is",
                flow.remote,
                flow.branch,
                short(&commit_s),
                flow.task_path
            ));
        }
    }
    Ok(())
}

/// What the deleted file held: its SHA-256 and the task ID its header names
/// (read leniently); `None` for a link, a missing or an oversized object.
fn held_by_deleted(repo: &Repository, v: &Version) -> Option<(String, Option<String>)> {
    let (oid, mode) = v.before?;
    if mode == 0o120000 {
        return None;
    }
    // The header first: an oversized blob is never loaded (a few hundred KiB of
    // zlib inflate to hundreds of MiB, which reading it whole would hold).
    let (size, kind) = repo.odb().ok()?.read_header(oid).ok()?;
    if kind != git2::ObjectType::Blob || size > MAX_TASK_BYTES {
        return None;
    }
    let b = repo.find_blob(oid).ok()?;
    Some((
        sha256_hex(b.content()),
        lenient_task_id(b.content()).map(|t| t.to_string()),
    ))
}

/// Mark `id` withdrawn when it is pending or deferred with this text: the
/// status it had, or (`Err`) what it is, left as it is.
fn withdraw_in_state(
    flow: &Flow<'_>,
    id: &str,
    sha: &str,
    commit_s: &str,
) -> Result<std::result::Result<TaskStatus, String>> {
    state::update(&flow.paths, |s| {
        let Some(rec) = s.tasks.get_mut(id) else {
            return Ok(Err("never seen by this node".to_owned()));
        };
        if rec.task_sha256 != sha {
            return Ok(Err(format!("{} with a different text", rec.status)));
        }
        let was = rec.status;
        if !matches!(was, TaskStatus::Pending | TaskStatus::Deferred) {
            return Ok(Err(format!("{was:?}").to_lowercase()));
        }
        rec.status = TaskStatus::Withdrawn;
        s.deferred_task_ids.remove(id);
        s.queue.order.retain(|i| i != id);
        s.queue.withdrawn.insert(
            id.to_owned(),
            Withdrawal {
                commit: commit_s.to_owned(),
                was,
                at: now_iso(),
            },
        );
        Ok(Ok(was))
    })
}
