//! `.local/rx_agent_state.json`: what this node knows and decided (docs/operator.md#files-under-local).
//!
//! Written to a temp file, fsynced, atomically renamed. A corrupt file is moved
//! aside with a timestamp suffix and reported; never silently reset.
use crate::store::evidence::checking_key;
use crate::store::fsutil::{now_iso, write_atomic};
use crate::store::key;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use rxnode_interlock::Approval;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Current state schema.
pub(crate) const STATE_SCHEMA: u32 = 1;

/// Lifecycle of a known task on this node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    /// Detected and prompted, no decision yet.
    Pending,
    /// `[D]`: not prompted again until `rxnode review`.
    Deferred,
    /// `[A]`: may be run.
    Approved,
    /// Failed validation or a check before the prompt.
    Rejected,
    /// Run to completion or marked completed.
    Completed,
    /// Removed from the branch by the main PC before it was approved:
    /// kept in state, never offered again.
    Withdrawn,
    /// Its `TARGET_NODES` does not name this node: recorded, never prompted or run.
    NotForThisNode,
}

impl TaskStatus {
    /// The word people see (`approved`, `not for this node`), as `status` prints it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Deferred => "deferred",
            TaskStatus::Approved => "approved",
            TaskStatus::Rejected => "rejected",
            TaskStatus::Completed => "completed",
            TaskStatus::Withdrawn => "withdrawn",
            TaskStatus::NotForThisNode => "not for this node",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

/// One task this node has seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TaskRecord {
    /// Current status.
    pub(crate) status: TaskStatus,
    /// SHA-256 of the text seen.
    pub(crate) task_sha256: String,
    /// Commit that held it (empty for dry-run files).
    pub(crate) commit: String,
    /// Derived/effective risk, protocol spelling.
    pub(crate) risk_level: Option<String>,
    /// Title, for `status`.
    pub(crate) title: Option<String>,
    /// First seen (ISO 8601).
    pub(crate) first_seen: String,
    /// Why rejected, when rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// A publication to `rx-node`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PublishRecord {
    /// The commit made on `refs/heads/rx-node`.
    pub(crate) commit: String,
    /// When.
    pub(crate) at: String,
    /// Whether it was pushed to the remote.
    pub(crate) pushed: bool,
}

/// The last poll.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PollRecord {
    /// When it happened (ISO 8601).
    pub(crate) at: String,
    /// One-line result ("nothing new", "prompted X", "fetch failed: …").
    pub(crate) result: String,
    /// Whether it succeeded.
    pub(crate) ok: bool,
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct State {
    /// Schema version ([`STATE_SCHEMA`]).
    pub(crate) schema_version: u32,
    /// Last task ID detected (recorded before any prompt is left).
    pub(crate) last_seen_task_id: Option<String>,
    /// Last task run to completion or marked completed.
    pub(crate) last_completed_task_id: Option<String>,
    /// Deferred task IDs.
    pub(crate) deferred_task_ids: BTreeSet<String>,
    /// Approvals by task ID.
    pub(crate) approvals: BTreeMap<String, Approval>,
    /// Every task seen, by ID.
    #[serde(default)]
    pub(crate) tasks: BTreeMap<String, TaskRecord>,
    /// Publications by task ID.
    #[serde(default)]
    pub(crate) published: BTreeMap<String, PublishRecord>,
    /// Whether a watcher is running.
    pub(crate) running: bool,
    /// PID of the running watcher.
    pub(crate) watcher_pid: Option<u32>,
    /// The last poll.
    pub(crate) last_poll: Option<PollRecord>,
    /// The remote-tracking commit last examined (skip parsing when unchanged).
    pub(crate) remote_marker: Option<String>,
    /// Refused texts that have no usable task ID (invalid files) or that changed
    /// under a known ID, by text SHA-256, so they are reported once.
    #[serde(default)]
    pub(crate) rejected_texts: BTreeMap<String, RejectedText>,
    /// The task queue read from the branch's history.
    #[serde(default)]
    pub(crate) queue: QueueState,
}

/// A refused task text, keyed by its SHA-256 in [`State::rejected_texts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RejectedText {
    /// The task ID the text claims, if one could be read.
    pub(crate) task_id: Option<String>,
    /// The commit that held it.
    pub(crate) commit: String,
    /// Why it was refused.
    pub(crate) reason: String,
    /// When (ISO 8601).
    pub(crate) at: String,
}

/// What the queue keeps in `.local/rx_agent_state.json` (field `queue`); the
/// queue's order over it is `store::queue`'s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QueueState {
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
pub(crate) struct Withdrawal {
    /// The commit that deleted the task file.
    pub commit: String,
    /// The status the task had (`pending` or `deferred`).
    pub was: TaskStatus,
    /// When this node saw it (ISO 8601).
    pub at: String,
}

/// A history rewrite (force push) of the watched branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Rewrite {
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
pub(crate) enum WalkFrom {
    /// No marker (first start): only the tip version was examined.
    FirstStart,
    /// From the marker, an ancestor of the tip.
    Marker,
    /// From the merge base after a history rewrite.
    MergeBase,
    /// After a rewrite with no common history: from the root, bounded.
    Root,
    /// The examined commit is neither within the walk bound of the tip nor
    /// shares a commit with it within the bound (a rewrite, or more commits
    /// than the bound since): the newest commits only, the rest not examined.
    Bound,
}

/// One poll's history walk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WalkRecord {
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
    /// The walk stopped at its commit bound (`walk_limit`), or at an
    /// incomplete history (a shallow clone): older history was not looked at.
    pub walk_truncated: bool,
    /// When the walk stopped at its bound: the newest commit not walked
    /// (everything from it back is not examined).
    #[serde(default)]
    pub not_walked_from: Option<String>,
    /// The commit bound in force (`--walk-limit`).
    #[serde(default)]
    pub walk_limit: usize,
    /// The first (oldest) commits of the versions not examined (at most 100).
    #[serde(default)]
    pub not_examined_commits: Vec<String>,
    /// The bound in force.
    pub limit: usize,
}

impl State {
    /// ` (task T1 is known: IDs are case-sensitive)` when a known task's ID
    /// differs from `id` only in letter case (`t1` typed for `T1`), else empty.
    pub(crate) fn other_case_hint(&self, id: &str) -> String {
        self.tasks
            .keys()
            .find(|k| k.as_str() != id && k.eq_ignore_ascii_case(id))
            .map(|k| format!(" (task {k} is known: task IDs are case-sensitive)"))
            .unwrap_or_default()
    }

    /// IDs of tasks with this status, in ID order.
    pub(crate) fn ids_with(&self, status: TaskStatus) -> Vec<String> {
        self.tasks
            .iter()
            .filter(|(_, r)| r.status == status)
            .map(|(id, _)| id.clone())
            .collect()
    }
}

impl Default for State {
    fn default() -> Self {
        State {
            schema_version: STATE_SCHEMA,
            last_seen_task_id: None,
            last_completed_task_id: None,
            deferred_task_ids: BTreeSet::new(),
            approvals: BTreeMap::new(),
            tasks: BTreeMap::new(),
            published: BTreeMap::new(),
            running: false,
            watcher_pid: None,
            last_poll: None,
            remote_marker: None,
            rejected_texts: BTreeMap::new(),
            queue: Default::default(),
        }
    }
}

/// Prefix of a state file kept aside as corrupt.
pub(crate) const CORRUPT_PREFIX: &str = "rx_agent_state.json.corrupt-";

/// What the operator runs when the state cannot be trusted (never "delete it").
pub(crate) const REBUILD_HINT: &str =
    "fix: run `rxnode state rebuild` (it recovers every decision from the ledger and the outboxes)";

/// Load the state. A missing file is a fresh state only on a node with no
/// history: when a corrupt state is kept aside, or the ledger or an outbox
/// shows decisions, the command refuses until the operator rebuilds it — a lost
/// state is never a fresh start. A corrupt (or empty) file is moved
/// aside (`rx_agent_state.json.corrupt-<time>-<pid>`) and an error names both
/// files. A state that contradicts the ledger (an approval the ledger never
/// recorded, a task the ledger saw finish that the state does not call
/// completed) was replaced: refused.
pub(crate) fn load(paths: &Paths) -> Result<State> {
    crate::store::trust::prepare(paths)?;
    load_verified(paths)
}

/// [`load`] right after the trust root was checked ([`update`] under its lock).
fn load_verified(paths: &Paths) -> Result<State> {
    let p = paths.state();
    let bytes = match crate::store::fsutil::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(aside) = corrupt_aside(paths) {
                anyhow::bail!(
                    "state file {} is missing and a corrupt one is kept aside as {}; {REBUILD_HINT}",
                    p.display(),
                    aside.display()
                );
            }
            let evidence = crate::store::evidence::history(paths)?;
            if !evidence.is_empty() {
                return Err(crate::exit::refused(format!(
                    "state file {} is missing but this node has history ({}): every task counts as never approved \
                     and nothing runs until the state is rebuilt — {REBUILD_HINT}",
                    p.display(),
                    evidence.join(", ")
                )));
            }
            return Ok(State::default());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read state file {}", p.display())),
    };
    match serde_json::from_slice::<State>(&bytes) {
        Ok(s) => {
            if let Some(why) = unsigned_approval(paths, &s)? {
                return Err(crate::exit::refused(format!(
                    "state file {}: {why}",
                    p.display()
                )));
            }
            if let Some(why) = contradiction(paths, &s)? {
                return Err(crate::exit::refused(format!(
                    "state file {} does not match the ledger: {why}; the state was replaced or rolled back — {REBUILD_HINT}",
                    p.display()
                )));
            }
            Ok(s)
        }
        Err(e) => {
            let stamp = now_iso().replace([':', '+'], "");
            let aside = p.with_file_name(format!("{CORRUPT_PREFIX}{stamp}-{}", std::process::id()));
            std::fs::rename(&p, &aside).with_context(|| {
                format!(
                    "state file {} is corrupt ({e}) and could not be moved aside",
                    p.display()
                )
            })?;
            anyhow::bail!(
                "state file {} is corrupt ({e}); kept aside as {} — nothing was reset; {REBUILD_HINT}",
                p.display(),
                aside.display()
            )
        }
    }
}

/// The first approval in the state this node cannot verify as its own, or a
/// task the state calls approved with no approval at all: the message, naming
/// the task and the fix.
pub(crate) fn unsigned_approval(paths: &Paths, s: &State) -> Result<Option<String>> {
    let Some(k) = checking_key(paths)? else {
        return Ok(None);
    };
    for (id, a) in &s.approvals {
        if let Err(reason) = key::check_approval(a, k.as_ref()) {
            return Ok(Some(key::unsigned_message(id, &reason)));
        }
        if a.task_id.as_str() != id {
            return Ok(Some(key::unsigned_message(
                id,
                &format!(
                    "it is filed under {id} but is {}'s approval: a planted record",
                    a.task_id
                ),
            )));
        }
    }
    if let Some(id) = s
        .ids_with(TaskStatus::Approved)
        .into_iter()
        .find(|id| !s.approvals.contains_key(id))
    {
        return Ok(Some(key::unsigned_message(
            &id,
            "the state calls it approved but holds no approval record: a planted or edited state",
        )));
    }
    Ok(None)
}

/// Why a parsed state contradicts the ledger, if it does: an approval this
/// node did not sign ([`unsigned_approval`]), an approval with no signed ledger
/// `approved` entry for that task (planted), or a task the ledger saw finish
/// that the state does not call completed (rolled back).
pub(crate) fn contradiction(paths: &Paths, s: &State) -> Result<Option<String>> {
    if let Some(why) = unsigned_approval(paths, s)? {
        return Ok(Some(why));
    }
    let k = checking_key(paths)?;
    let said = crate::store::checkpoint::evidence(paths, &k)?;
    let (approved, finished) = (said.approved, said.finished);
    if let Some(id) = s.approvals.keys().find(|id| !approved.contains(*id)) {
        return Ok(Some(format!(
            "it holds an approval of task {id} that the ledger never recorded (as signed by this node)"
        )));
    }
    for id in &finished {
        let done = s
            .tasks
            .get(id)
            .is_some_and(|r| r.status == TaskStatus::Completed);
        if !done {
            return Ok(Some(format!(
                "the ledger shows task {id} finished but the state does not call it completed"
            )));
        }
    }
    Ok(None)
}

/// A state file kept aside as corrupt and not yet dealt with, if any.
pub(crate) fn corrupt_aside(paths: &Paths) -> Option<std::path::PathBuf> {
    std::fs::read_dir(&paths.local)
        .ok()?
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with(CORRUPT_PREFIX))
        .map(|e| e.path())
}

/// Save the state atomically.
pub(crate) fn save(paths: &Paths, state: &State) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(state)?;
    bytes.push(b'\n');
    write_atomic(&paths.state(), &bytes)
}

/// Load, change, save — under an exclusive OS lock on
/// `.local/rx_agent_state.lock`, so the watcher, `run`, `publish` and
/// `mark-completed` never lose each other's changes. The OS releases the lock
/// if the process dies. Readers need no lock: the file is replaced atomically.
///
/// The whole trust root is checked first ([`crate::store::trust::prepare`]), so a
/// long-running watcher notices a `git pull` that brought `.local/` files.
pub(crate) fn update<T>(paths: &Paths, f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
    // Taking the lock checked the whole trust root a moment ago: not twice.
    let _guard = lock_state(paths)?;
    let mut s = load_verified(paths)?;
    let out = f(&mut s)?;
    save(paths, &s)?;
    Ok(out)
}

/// Take the exclusive state lock (`.local/rx_agent_state.lock`) after checking
/// the trust root; released when the returned file is dropped.
pub(crate) fn lock_state(paths: &Paths) -> Result<std::fs::File> {
    let lock_path = paths.local.join("rx_agent_state.lock");
    crate::store::trust::lock_local_file(paths, &lock_path, &paths.state())
}

#[cfg(test)]
mod watch_ext_tests {
    use super::*;

    #[test]
    fn state_without_the_new_fields_still_loads() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(&paths.local).unwrap();
        let old = r#"{"schema_version":1,"last_seen_task_id":"A","last_completed_task_id":null,
            "deferred_task_ids":[],"approvals":{},"running":false,"watcher_pid":null,
            "last_poll":null,"remote_marker":null,
            "tasks":{"A":{"status":"pending","task_sha256":"x","commit":"c","risk_level":null,
            "title":null,"first_seen":"t"}}}"#;
        std::fs::write(paths.state(), old).unwrap();
        let s = load(&paths).unwrap();
        assert!(s.rejected_texts.is_empty());
        assert_eq!(s.ids_with(TaskStatus::Pending), vec!["A".to_owned()]);
        assert!(s.ids_with(TaskStatus::Approved).is_empty());
    }
}
