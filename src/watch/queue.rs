//! The watched branch's history is a queue (issue 15, DESIGN §2 "Every posted
//! task reaches the operator").
//!
//! A poll walks the first-parent history from the last examined commit (the
//! marker) to the fetched tip and collects, oldest first, every commit that
//! changed the task file: one *task version* each. Every version is checked
//! against the commit that holds it and leaves exactly one examination line in
//! the ledger:
//!
//! | line | when |
//! |---|---|
//! | `offered` | a valid new task, the branch's current one: queued and prompted |
//! | `superseded` | a valid new task that a later commit replaced before the operator saw it: still queued and prompted |
//! | `refused` | invalid, `EXPECTED_HEAD` not an ancestor, a known ID with a changed text, too large, not a file (with the reason) |
//! | `duplicate` | a text this node already knows (decided, queued, or refused before): not prompted again |
//! | `withdrawn` | the file was deleted while the task it held was pending or deferred: kept in state, never offered again |
//! | `task_file_deleted` | the file was deleted, but what it held was already decided or never seen |
//!
//! and, per poll, `history_rewritten` (the marker is no longer an ancestor of
//! the tip) and `not_examined` (versions beyond the bound, or a first start).
use crate::git::ops::{self as gitops, Blob, History, Version};
use crate::store::ledger::{self, Entry};
use crate::store::state::{self, State, TaskStatus};
use crate::watch::{Flow, Verdict};
use anyhow::Result;
use git2::{Oid, Repository};
use rxnode_interlock::{sha256_hex, MAX_TASK_BYTES};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Versions examined per poll unless `--history-limit` says otherwise.
pub const DEFAULT_HISTORY_LIMIT: usize = 50;
/// The largest `--history-limit` accepted.
pub const MAX_HISTORY_LIMIT: usize = 10_000;
/// First-parent commits walked per poll at most (a hostile branch cannot make
/// a poll walk for ever); older history is reported as not examined.
pub const MAX_WALK_COMMITS: usize = 200_000;
/// History rewrites kept in state (the ledger keeps them all).
const REWRITES_KEPT: usize = 20;
/// Commit IDs listed in one `not_examined` ledger line / state record.
const LISTED: usize = 100;

/// What the queue keeps in `.local/rx_agent_state.json` (field `queue`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueState {
    /// Task IDs in the order their versions were committed; the pending ones
    /// are prompted in this order.
    #[serde(default)]
    pub order: Vec<String>,
    /// Task ID → the commit whose change replaced its version on the branch
    /// before the operator saw it.
    #[serde(default)]
    pub superseded: BTreeMap<String, String>,
    /// Tasks withdrawn by a deletion of the task file, by ID.
    #[serde(default)]
    pub withdrawn: BTreeMap<String, Withdrawal>,
    /// The latest history rewrites seen (oldest first, at most 20).
    #[serde(default)]
    pub rewrites: Vec<Rewrite>,
    /// The last history walk.
    #[serde(default)]
    pub last_walk: Option<WalkRecord>,
}

/// A task withdrawn by the main PC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Withdrawal {
    /// The commit that deleted the task file.
    pub commit: String,
    /// The status the task had (`pending` or `deferred`).
    pub was: TaskStatus,
    /// When this node saw it (ISO 8601).
    pub at: String,
}

/// A history rewrite (force push) of the watched branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rewrite {
    /// When it was seen (ISO 8601).
    pub at: String,
    /// The examined commit that is no longer an ancestor of the tip.
    pub old: String,
    /// The new tip.
    pub new: String,
    /// Where examination restarted (`None`: no common history, so the newest
    /// versions from the root were examined).
    pub merge_base: Option<String>,
    /// Pending tasks whose commit is no longer on the branch (kept pending:
    /// the rewrite decides nothing).
    #[serde(default)]
    pub pending_off_branch: Vec<String>,
}

/// How a poll's walk started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WalkFrom {
    /// No marker (first start): only the tip version was examined.
    FirstStart,
    /// From the marker, an ancestor of the tip.
    Marker,
    /// From the merge base after a history rewrite.
    MergeBase,
    /// After a rewrite with no common history: from the root, bounded.
    Root,
}

/// One poll's history walk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WalkRecord {
    /// When (ISO 8601).
    pub at: String,
    /// How it started.
    pub from: WalkFrom,
    /// The commit it started after (the marker or merge base), if any.
    pub since: Option<String>,
    /// The tip.
    pub tip: String,
    /// First-parent commits walked.
    pub commits: usize,
    /// Task versions found.
    pub versions: usize,
    /// Versions examined.
    pub examined: usize,
    /// Versions found but not examined (older than the newest `limit`), plus
    /// any beyond the walk's commit limit (then `walk_truncated`).
    pub not_examined: usize,
    /// The walk stopped at [`MAX_WALK_COMMITS`], or at an incomplete history
    /// (a shallow clone): older history was not looked at.
    pub walk_truncated: bool,
    /// The first (oldest) commits of the versions not examined (at most 100).
    #[serde(default)]
    pub not_examined_commits: Vec<String>,
    /// The bound in force.
    pub limit: usize,
}

impl QueueState {
    /// Append `id` to the queue order (pruning IDs no longer pending, here and
    /// in `superseded`; the ledger keeps the history).
    pub fn enqueue(&mut self, id: &str, tasks: &BTreeMap<String, crate::store::state::TaskRecord>) {
        self.order.retain(|i| {
            i != id
                && tasks
                    .get(i)
                    .is_some_and(|r| r.status == TaskStatus::Pending)
        });
        self.order.push(id.to_owned());
        self.superseded.retain(|i, _| {
            tasks
                .get(i)
                .is_some_and(|r| r.status == TaskStatus::Pending)
        });
    }
}

/// Pending task IDs in queue order (commit order), then any pending task the
/// queue does not list (a state from before issue 15), in ID order.
pub fn pending_in_order(st: &State) -> Vec<String> {
    let pending = |id: &String| {
        st.tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Pending)
    };
    let mut out: Vec<String> = Vec::new();
    for id in &st.queue.order {
        if pending(id) && !out.contains(id) {
            out.push(id.clone());
        }
    }
    for id in st.ids_with(TaskStatus::Pending) {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// What to examine this poll.
struct Plan {
    from: WalkFrom,
    since: Option<Oid>,
    history: History,
    /// Oldest first, at most `limit`.
    examine: Vec<Version>,
    /// Older versions beyond the bound, oldest first.
    skipped: Vec<Version>,
}

fn plan(
    repo: &Repository,
    start: Option<Oid>,
    from: WalkFrom,
    tip: Oid,
    path: &str,
    limit: usize,
) -> Result<Plan> {
    if from == WalkFrom::FirstStart {
        let entry = gitops::entry_at(repo, tip, path)?;
        let examine = match entry {
            Some(_) => vec![Version {
                commit: tip,
                entry,
                before: None,
            }],
            None => vec![],
        };
        return Ok(Plan {
            from,
            since: None,
            history: History::default(),
            examine,
            skipped: vec![],
        });
    }
    let history = gitops::task_history(repo, tip, start, path, MAX_WALK_COMMITS)?;
    let mut all = history.versions.clone();
    let cut = all.len().saturating_sub(limit);
    let examine = all.split_off(cut);
    Ok(Plan {
        from,
        since: start,
        history,
        examine,
        skipped: all,
    })
}

fn short(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// Walk from the marker to `tip`, examine every version, and return the task
/// IDs newly queued by this poll, in commit order (prompted by the caller).
/// The marker is moved to `tip` once every version is recorded.
pub fn examine_history(
    flow: &mut Flow<'_>,
    repo: &Repository,
    tip: Oid,
    limit: usize,
) -> Result<Vec<String>> {
    let st = state::load(&flow.paths)?;
    let marker = st.remote_marker.clone();
    let (start, from) = match marker.as_deref() {
        None => (None, WalkFrom::FirstStart),
        Some(m) => match Oid::from_str(m) {
            Ok(m) if gitops::is_ancestor_or_same(repo, m, tip)? => (Some(m), WalkFrom::Marker),
            parsed => {
                let base = match parsed {
                    Ok(m) => gitops::merge_base(repo, m, tip)?,
                    Err(_) => None,
                };
                rewritten(flow, repo, &st, m, tip, base, limit)?;
                match base {
                    Some(b) => (Some(b), WalkFrom::MergeBase),
                    None => (None, WalkFrom::Root),
                }
            }
        },
    };
    let p = plan(repo, start, from, tip, &flow.task_path, limit)?;
    let where_ = format!("{}/{}", flow.remote, flow.branch);
    if from == WalkFrom::FirstStart && p.examine.is_empty() {
        crate::watch::say(format!(
            "{where_} at {tip}: no {} (first start: nothing examined before the tip)",
            flow.task_path
        ));
    } else if from == WalkFrom::FirstStart {
        let msg = format!(
            "first start (no examined commit recorded): only the task file at the tip {} of {where_} is examined; earlier versions in its history are not",
            short(&tip.to_string())
        );
        crate::watch::say(&msg);
        ledger::append(
            &flow.paths,
            &Entry::new("not_examined")
                .commit(&tip.to_string())
                .detail(serde_json::json!({
                    "reason": "first start: no examined commit recorded, only the tip version is examined",
                    "branch": where_, "task_path": flow.task_path,
                })),
        )?;
    }
    let not_examined = p.skipped.len();
    let incomplete = p.history.incomplete.clone();
    if not_examined > 0 || p.history.truncated || incomplete.is_some() {
        let listed: Vec<String> = p
            .skipped
            .iter()
            .take(LISTED)
            .map(|v| v.commit.to_string())
            .collect();
        let mut more = if p.history.truncated {
            format!(
                "; the walk stopped after {MAX_WALK_COMMITS} commits, so older history is not examined either"
            )
        } else {
            String::new()
        };
        if let Some(why) = &incomplete {
            more.push_str(&format!(
                "; history incomplete, older versions not examined: {why}"
            ));
        }
        let since = p
            .since
            .map(|s| short(&s.to_string()).to_owned())
            .unwrap_or_else(|| "the root".into());
        if not_examined > 0 {
            crate::watch::loud(format!(
                "{not_examined} older task version(s) of {} on {where_} NOT EXAMINED: only the newest {limit} since {since} are (--history-limit){more}",
                flow.task_path,
            ));
        } else {
            crate::watch::loud(format!(
                "older task versions of {} on {where_} since {since} NOT EXAMINED{more}",
                flow.task_path,
            ));
        }
        ledger::append(
            &flow.paths,
            &Entry::new("not_examined")
                .commit(&tip.to_string())
                .detail(serde_json::json!({
                    "reason": if incomplete.is_some() || p.history.truncated {
                        "older than the newest --history-limit versions, or beyond where the history could be walked"
                    } else {
                        "older than the newest --history-limit versions"
                    },
                    "count": not_examined, "limit": limit,
                    "walk_truncated": p.history.truncated,
                    "history_incomplete": incomplete,
                    "since": p.since.map(|s| s.to_string()),
                    "commits": listed, "commits_listed_max": LISTED,
                })),
        )?;
    }
    let mut queued: Vec<String> = Vec::new();
    for (i, v) in p.examine.iter().enumerate() {
        let next = p.examine.get(i + 1);
        if let Some(id) = examine_version(flow, repo, v, next)? {
            queued.push(id);
        }
    }
    let record = WalkRecord {
        at: crate::store::fsutil::now_iso(),
        from: p.from,
        since: p.since.map(|s| s.to_string()),
        tip: tip.to_string(),
        commits: p.history.commits,
        versions: p.history.versions.len().max(p.examine.len()),
        examined: p.examine.len(),
        not_examined,
        walk_truncated: p.history.truncated || incomplete.is_some(),
        not_examined_commits: p
            .skipped
            .iter()
            .take(LISTED)
            .map(|v| v.commit.to_string())
            .collect(),
        limit,
    };
    state::update(&flow.paths, |s| {
        s.remote_marker = Some(tip.to_string());
        s.queue.last_walk = Some(record);
        Ok(())
    })?;
    Ok(queued)
}

/// The examined commit is no longer an ancestor of the tip: say so loudly,
/// on stderr, in the ledger and in state. Nothing is decided by it.
fn rewritten(
    flow: &Flow<'_>,
    repo: &Repository,
    st: &State,
    old: &str,
    tip: Oid,
    base: Option<Oid>,
    limit: usize,
) -> Result<()> {
    let mut off = Vec::new();
    for id in pending_in_order(st) {
        let on = st
            .tasks
            .get(&id)
            .and_then(|r| Oid::from_str(&r.commit).ok())
            .map(|c| gitops::is_ancestor_or_same(repo, c, tip))
            .transpose()?
            .unwrap_or(false);
        if !on {
            off.push(id);
        }
    }
    let from = match base {
        Some(b) => format!("examining from the merge base {b}"),
        None => format!(
            "the two share no history: examining the newest {limit} version(s) from the root"
        ),
    };
    let mut msg = format!(
        "HISTORY REWRITTEN: {}/{} was force-pushed; the examined commit {old} is no longer an ancestor of the tip {tip}; {from}. Nothing is approved by the rewrite; decided task IDs are never offered again",
        flow.remote, flow.branch
    );
    if !off.is_empty() {
        msg.push_str(&format!(
            "; still pending although their commit is no longer on the branch: {}",
            off.join(", ")
        ));
    }
    crate::watch::loud(&msg);
    ledger::append(
        &flow.paths,
        &Entry::new("history_rewritten")
            .commit(&tip.to_string())
            .detail(serde_json::json!({
                "old": old, "new": tip.to_string(),
                "merge_base": base.map(|b| b.to_string()),
                "pending_off_branch": off,
                "branch": format!("{}/{}", flow.remote, flow.branch),
            })),
    )?;
    let rec = Rewrite {
        at: crate::store::fsutil::now_iso(),
        old: old.to_owned(),
        new: tip.to_string(),
        merge_base: base.map(|b| b.to_string()),
        pending_off_branch: off,
    };
    state::update(&flow.paths, |s| {
        s.queue.rewrites.push(rec);
        let n = s.queue.rewrites.len();
        if n > REWRITES_KEPT {
            s.queue.rewrites.drain(..n - REWRITES_KEPT);
        }
        Ok(())
    })
}

fn version_line(event: &str, v: &Version, id: Option<&str>, sha: Option<&str>) -> Entry {
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
fn examine_version(
    flow: &mut Flow<'_>,
    repo: &Repository,
    v: &Version,
    next: Option<&Version>,
) -> Result<Option<String>> {
    if v.entry.is_none() {
        withdraw(flow, repo, v)?;
        return Ok(None);
    }
    let commit_s = v.commit.to_string();
    let refused_blob = |flow: &Flow<'_>, key: &str, reason: String| -> Result<()> {
        let written = flow.reject_blob(key, v.commit, &reason)?;
        let e = version_line(if written { "refused" } else { "duplicate" }, v, None, None);
        let detail = if written {
            serde_json::json!({ "reason": reason })
        } else {
            serde_json::json!({ "reason": reason, "known": "refused before" })
        };
        // `reject_blob` wrote a `rejected` line; this is the version's own.
        ledger::append(&flow.paths, &e.detail(detail))
    };
    let (bytes, blob) = match gitops::read_blob_at(repo, v.commit, &flow.task_path, MAX_TASK_BYTES)?
    {
        Blob::Content { bytes, blob } => (bytes, blob),
        Blob::Missing => return Ok(None), // not reached: `entry` is Some
        Blob::TooLarge { size, blob } => {
            let reason = format!(
                "task file {} on {}/{} at {commit_s} is {size} bytes; at most {MAX_TASK_BYTES} (1 MiB); not loaded",
                flow.task_path, flow.remote, flow.branch
            );
            refused_blob(flow, &blob, reason)?;
            return Ok(None);
        }
        Blob::NotAFile { kind, id } => {
            let reason = format!(
                "task path {} on {}/{} at {commit_s} is {kind}, not a regular file; not read",
                flow.task_path, flow.remote, flow.branch
            );
            refused_blob(flow, &id, reason)?;
            return Ok(None);
        }
    };
    let sha = sha256_hex(&bytes);
    match flow.check_version(&bytes, Some(v.commit))? {
        Verdict::New(task) => {
            let id = task.id().to_string();
            let superseded_by = next
                .filter(|n| n.entry.is_some())
                .map(|n| n.commit.to_string());
            flow.record_pending(&task, &commit_s)?;
            state::update(&flow.paths, |s| {
                let State { tasks, queue, .. } = s;
                queue.enqueue(&id, tasks);
                if let Some(by) = &superseded_by {
                    s.queue.superseded.insert(id.clone(), by.clone());
                }
                Ok(())
            })?;
            let (event, detail) = match &superseded_by {
                Some(by) => (
                    "superseded",
                    serde_json::json!({"superseded_by": by, "queued": true, "blob": blob,
                        "risk_level": task.risk().as_str()}),
                ),
                None => (
                    "offered",
                    serde_json::json!({"queued": true, "blob": blob, "risk_level": task.risk().as_str()}),
                ),
            };
            ledger::append(
                &flow.paths,
                &version_line(event, v, Some(&id), Some(&sha)).detail(detail),
            )?;
            Ok(Some(id))
        }
        Verdict::Pending(id) => already_queued(flow, v, &id, &sha),
        // (Only a dry run gets the task itself back; the same here.)
        Verdict::PendingTask(t) => already_queued(flow, v, t.id().as_ref(), &sha),
        Verdict::Duplicate { id, status } => {
            ledger::append(
                &flow.paths,
                &version_line("duplicate", v, id.as_deref(), Some(&sha)).detail(
                    serde_json::json!({"known": status, "note": "decided before; not prompted again"}),
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
                    &version_line("refused", v, id.as_deref(), Some(&sha))
                        .detail(serde_json::json!({ "reason": reason })),
                )?,
                None => ledger::append(
                    &flow.paths,
                    &version_line("duplicate", v, id.as_deref(), Some(&sha))
                        .detail(serde_json::json!({ "known": "refused before", "reason": reason })),
                )?,
            }
            Ok(None)
        }
    }
}

/// A version whose text is a task already queued (pending): one `duplicate` line.
fn already_queued(flow: &Flow<'_>, v: &Version, id: &str, sha: &str) -> Result<Option<String>> {
    ledger::append(
        &flow.paths,
        &version_line("duplicate", v, Some(id), Some(sha))
            .detail(serde_json::json!({"known": "pending", "note": "already queued"})),
    )?;
    Ok(None)
}

/// The task file was deleted at `v`: withdraw the task it held if that task
/// is pending or deferred (never an approved one).
fn withdraw(flow: &mut Flow<'_>, repo: &Repository, v: &Version) -> Result<()> {
    let commit_s = v.commit.to_string();
    let held = match v.before {
        Some((oid, mode)) if mode != 0o120000 => match repo.find_object(oid, None) {
            Ok(o) => match o.as_blob() {
                Some(b) if b.size() <= MAX_TASK_BYTES => Some((
                    sha256_hex(b.content()),
                    rxnode_interlock::lenient_task_id(b.content()).map(|t| t.to_string()),
                )),
                _ => None,
            },
            Err(_) => None,
        },
        _ => None,
    };
    let (sha, id) = match held {
        Some((sha, Some(id))) => (sha, id),
        other => {
            ledger::append(
                &flow.paths,
                &version_line("task_file_deleted", v, None, other.as_ref().map(|o| o.0.as_str()))
                    .detail(serde_json::json!({"withdrew": null, "why": "the removed file held no usable task ID"})),
            )?;
            crate::watch::say(format!(
                "{}/{} at {}: {} deleted (it held no usable task)",
                flow.remote,
                flow.branch,
                short(&commit_s),
                flow.task_path
            ));
            return Ok(());
        }
    };
    let was = state::update(&flow.paths, |s| {
        let Some(rec) = s.tasks.get_mut(&id) else {
            return Ok(Err("never seen by this node".to_owned()));
        };
        if rec.task_sha256 != sha {
            return Ok(Err(
                format!("{:?} with a different text", rec.status).to_lowercase()
            ));
        }
        let was = rec.status;
        if !matches!(was, TaskStatus::Pending | TaskStatus::Deferred) {
            return Ok(Err(format!("{was:?}").to_lowercase()));
        }
        rec.status = TaskStatus::Withdrawn;
        s.deferred_task_ids.remove(&id);
        s.queue.order.retain(|i| i != &id);
        s.queue.withdrawn.insert(
            id.clone(),
            Withdrawal {
                commit: commit_s.clone(),
                was,
                at: crate::store::fsutil::now_iso(),
            },
        );
        Ok(Ok(was))
    })?;
    match was {
        Ok(was) => {
            ledger::append(
                &flow.paths,
                &version_line("withdrawn", v, Some(&id), Some(&sha)).detail(
                    serde_json::json!({"was": was, "why": "the main PC deleted the task file"}),
                ),
            )?;
            crate::watch::say(format!(
                "task {id} WITHDRAWN: {}/{} deleted {} at {} before it was approved; it is kept in state and not offered again",
                flow.remote, flow.branch, flow.task_path, short(&commit_s)
            ));
        }
        Err(known) => {
            ledger::append(
                &flow.paths,
                &version_line("task_file_deleted", v, Some(&id), Some(&sha))
                    .detail(serde_json::json!({"withdrew": null, "known": known,
                        "why": "only a pending or deferred task is withdrawn"})),
            )?;
            crate::watch::say(format!(
                "{}/{} at {}: {} deleted; task {id} is {known}, left as it is",
                flow.remote,
                flow.branch,
                short(&commit_s),
                flow.task_path
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::state::TaskRecord;

    fn rec(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            status,
            task_sha256: "s".into(),
            commit: "c".into(),
            risk_level: None,
            title: None,
            first_seen: "t".into(),
            reason: None,
        }
    }

    #[test]
    fn pending_tasks_come_in_queue_order_then_unlisted_ones_by_id() {
        let mut st = State::default();
        for (id, s) in [
            ("A", TaskStatus::Pending),
            ("B", TaskStatus::Pending),
            ("C", TaskStatus::Approved),
            ("D", TaskStatus::Pending),
            ("E", TaskStatus::Withdrawn),
        ] {
            st.tasks.insert(id.into(), rec(s));
        }
        st.queue.order = vec!["D".into(), "C".into(), "B".into(), "E".into(), "D".into()];
        assert_eq!(pending_in_order(&st), ["D", "B", "A"]);
    }

    #[test]
    fn enqueue_appends_once_and_prunes_decided_ids() {
        let mut tasks = BTreeMap::new();
        tasks.insert("A".to_owned(), rec(TaskStatus::Approved));
        tasks.insert("B".to_owned(), rec(TaskStatus::Pending));
        tasks.insert("C".to_owned(), rec(TaskStatus::Pending));
        let mut q = QueueState {
            order: vec!["A".into(), "C".into(), "B".into()],
            ..Default::default()
        };
        q.enqueue("C", &tasks);
        assert_eq!(q.order, ["B", "C"]);
    }

    #[test]
    fn a_state_without_the_queue_loads_with_an_empty_one() {
        let st: State = serde_json::from_str(
            r#"{"schema_version":1,"last_seen_task_id":null,"last_completed_task_id":null,
            "deferred_task_ids":[],"approvals":{},"running":false,"watcher_pid":null,
            "last_poll":null,"remote_marker":null}"#,
        )
        .unwrap();
        assert_eq!(st.queue, QueueState::default());
    }
}
