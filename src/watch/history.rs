//! A poll's walk of the watched branch's first-parent history, from the
//! marker (or the merge base after a rewrite) to the tip (see `queue.rs`).
use super::versions::examine_version;
use super::Flow;
use crate::git::ops::{self, History, Version};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, NotExamined};
use crate::store::queue::{pending_in_order, short, Rewrite, WalkFrom, WalkRecord};
use crate::store::state::{self, State};
use anyhow::Result;
use git2::{Oid, Repository};
use rxnode_interlock::MAX_TASK_BYTES;

/// History rewrites kept in state (the ledger keeps them all).
const REWRITES_KEPT: usize = 20;
/// Commit IDs listed in one `not_examined` ledger line / state record.
const LISTED: usize = 100;

/// Bytes of task file one poll reads at most over all the versions it examines
/// (a version's file or, for a deletion, the file it deleted; at least one
/// version is examined whatever its size). A task file is at most 1 MiB, and
/// 300 versions of one cost a poll 2.8 s: the versions past this budget (or past
/// `--history-limit`) wait, in order, for the next poll (docs/protocol.md#bound).
pub(crate) const POLL_TASK_BYTES: u64 = 32 << 20;

/// A poll's bounds: task versions examined and commits walked
/// (`--history-limit`, `--walk-limit`; docs/protocol.md#bound).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Versions examined by one poll at most (the oldest not yet examined;
    /// the next poll goes on from there).
    pub(crate) versions: usize,
    /// Commits walked at most, by the history walk and by each ancestry or
    /// merge-base search.
    pub(crate) commits: usize,
}

/// What to examine this poll.
struct Plan {
    from: WalkFrom,
    since: Option<Oid>,
    history: History,
    /// Every version found, oldest first (a poll examines the oldest of them
    /// within its budget, [`in_budget`]).
    examine: Vec<Version>,
}

fn plan(
    repo: &Repository,
    start: Option<Oid>,
    from: WalkFrom,
    tip: Oid,
    path: &str,
    bounds: Bounds,
) -> Result<Plan> {
    if from == WalkFrom::FirstStart {
        let entry = ops::entry_at(repo, tip, path)?;
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
        });
    }
    let history = ops::task_history(repo, tip, start, path, bounds.commits)?;
    let examine = history.versions.clone();
    Ok(Plan {
        from,
        since: start,
        history,
        examine,
    })
}

/// Bytes a version's examination reads: its file, or for a deletion the file
/// it deleted (only the object's header is read here).
fn version_bytes(repo: &Repository, v: &Version) -> u64 {
    let Ok(odb) = repo.odb() else { return 0 };
    v.entry
        .or(v.before)
        .and_then(|(id, _)| odb.read_header(id).ok())
        .filter(|(_, kind)| *kind == git2::ObjectType::Blob)
        .map_or(0, |(size, _)| size.min(MAX_TASK_BYTES) as u64)
}

/// How many of `versions` (oldest first) one poll examines: at most
/// `limit`, and no more than [`POLL_TASK_BYTES`] of task file read, but
/// always the first one.
fn in_budget(repo: &Repository, versions: &[Version], limit: usize) -> usize {
    let mut bytes = 0u64;
    let mut n = 0;
    for v in versions.iter().take(limit) {
        bytes = bytes.saturating_add(version_bytes(repo, v));
        if n > 0 && bytes > POLL_TASK_BYTES {
            break;
        }
        n += 1;
    }
    n
}

/// Walk from the marker to `tip`, examine the oldest versions within the
/// poll's budget, and return the task IDs newly queued by this poll, in commit
/// order (prompted by the caller), with the number of versions left for the
/// next poll. The marker is moved to the last version examined when some are
/// left, else to `tip`.
pub(crate) fn examine_history(
    flow: &mut Flow<'_>,
    repo: &Repository,
    tip: Oid,
    bounds: Bounds,
) -> Result<(Vec<String>, usize)> {
    let (start, from) = walk_start(flow, repo, tip, bounds)?;
    let p = plan(repo, start, from, tip, &flow.task_path, bounds)?;
    if from == WalkFrom::FirstStart {
        first_start(flow, &p, tip)?;
    }
    report_not_examined(flow, &p, tip, bounds)?;
    let now = in_budget(repo, &p.examine, bounds.versions);
    let mut queued: Vec<String> = Vec::new();
    for (i, v) in p.examine.iter().take(now).enumerate() {
        // The next version, examined now or by a later poll, supersedes it.
        let next = p.examine.get(i + 1);
        if let Some(id) = examine_version(flow, repo, v, next)? {
            queued.push(id);
        }
    }
    // Where the next poll goes on from: the last version examined, when some
    // wait; else the tip.
    let left = p.examine.len() - now;
    let marker = match now.checked_sub(1).and_then(|i| p.examine.get(i)) {
        Some(last) if left > 0 => {
            flow.say(format!(
                "{now} of {} task version(s) of {} on {} examined (a poll examines at most {} (--history-limit) and reads at most {} MiB of task file); the next poll goes on after {}, with {left} version(s) newer than it",
                p.examine.len(),
                flow.task_path,
                where_(flow),
                bounds.versions,
                POLL_TASK_BYTES >> 20,
                short(&last.commit.to_string()),
            ));
            last.commit
        }
        _ => tip,
    };
    let record = WalkRecord {
        at: now_iso(),
        from: p.from,
        since: p.since.map(|s| s.to_string()),
        tip: tip.to_string(),
        commits: p.history.commits,
        versions: p.examine.len(),
        examined: now,
        not_examined: 0,
        walk_truncated: p.history.truncated || p.history.incomplete.is_some(),
        not_walked_from: p.history.not_walked_from.map(|c| c.to_string()),
        walk_limit: bounds.commits,
        not_examined_commits: vec![],
        limit: bounds.versions,
    };
    state::update(&flow.paths, |s| {
        s.remote_marker = Some(marker.to_string());
        s.queue.last_walk = Some(record);
        Ok(())
    })?;
    Ok((queued, left))
}

/// Where the walk starts: after the marker when it is an ancestor of the tip
/// within the commit bound, else (a history rewrite, said and recorded) after
/// the merge base, or from the tip back to the bound when none is found
/// within it; only the tip on a first start. No search here looks at more
/// than the bound's commits.
fn walk_start(
    flow: &Flow<'_>,
    repo: &Repository,
    tip: Oid,
    bounds: Bounds,
) -> Result<(Option<Oid>, WalkFrom)> {
    let st = state::load(&flow.paths)?;
    let Some(m) = st.remote_marker.as_deref() else {
        return Ok((None, WalkFrom::FirstStart));
    };
    let parsed = Oid::from_str(m);
    if let Ok(m) = parsed {
        if ops::is_ancestor_within(repo, m, tip, bounds.commits)? {
            return Ok((Some(m), WalkFrom::Marker));
        }
    }
    let base = match parsed {
        Ok(m) => ops::merge_base_within(repo, m, tip, bounds.commits)?,
        Err(_) => None,
    };
    // Without a common commit within the bound, the two share no history at
    // all only when the tip's own history ends within it.
    let from = match base {
        Some(_) => WalkFrom::MergeBase,
        None if ops::task_history(repo, tip, None, &flow.task_path, bounds.commits)?.truncated => {
            WalkFrom::Bound
        }
        None => WalkFrom::Root,
    };
    let moved = Moved {
        old: m,
        tip,
        base,
        from,
    };
    rewritten(flow, repo, &st, moved, bounds)?;
    Ok((base, from))
}

/// A ledger line `event` about the walk to `tip`.
fn tip_line(flow: &Flow<'_>, event: Event, tip: Oid) -> Result<()> {
    ledger::append(&flow.paths, &Entry::new(event).commit(&tip.to_string()))
}

/// `remote/branch`, as the messages name it.
fn where_(flow: &Flow<'_>) -> String {
    format!("{}/{}", flow.remote, flow.branch)
}

/// A first start examines only the tip: say so (and record it when the tip
/// holds a task file).
fn first_start(flow: &Flow<'_>, p: &Plan, tip: Oid) -> Result<()> {
    let where_ = where_(flow);
    if p.examine.is_empty() {
        flow.say(format!(
            "{where_} at {tip}: no {} (first start: nothing examined before the tip)",
            flow.task_path
        ));
        return Ok(());
    }
    let msg = format!(
        "first start (no examined commit recorded): only the task file at the tip {} of {where_} is examined; earlier versions in its history are not",
        short(&tip.to_string())
    );
    flow.say(&msg);
    tip_line(
        flow,
        Event::NotExamined(NotExamined::FirstStart {
            reason: "first start: no examined commit recorded, only the tip version is examined"
                .to_owned(),
            branch: where_,
            task_path: flow.task_path.clone(),
        }),
        tip,
    )
}

/// A walk cut at its commit bound, or an incomplete (shallow) history: said
/// loudly and recorded in a `not_examined` line. (Versions past a poll's budget
/// are not among them: the next poll examines them.)
fn report_not_examined(flow: &Flow<'_>, p: &Plan, tip: Oid, bounds: Bounds) -> Result<()> {
    let limit = bounds.versions;
    let incomplete = p.history.incomplete.clone();
    if !p.history.truncated && incomplete.is_none() {
        return Ok(());
    }
    let where_ = where_(flow);
    let mut more = if p.history.truncated {
        format!(
            "; the walk stopped after {} commits (--walk-limit), so older history{} is NOT EXAMINED",
            bounds.commits,
            p.history
                .not_walked_from
                .map(|c| format!(" (from {} back)", short(&c.to_string())))
                .unwrap_or_default()
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
    flow.loud(format!(
        "older task versions of {} on {where_} since {since} NOT EXAMINED{more}",
        flow.task_path,
    ));
    tip_line(
        flow,
        Event::NotExamined(NotExamined::Bounded {
            reason: "beyond where the history could be walked".to_owned(),
            count: 0,
            limit,
            walk_truncated: p.history.truncated,
            walk_limit: bounds.commits,
            not_walked_from: p.history.not_walked_from.map(|c| c.to_string()),
            history_incomplete: incomplete,
            since: p.since.map(|s| s.to_string()),
            commits: vec![],
            commits_listed_max: LISTED,
        }),
        tip,
    )
}

/// How the branch moved in a history rewrite.
#[derive(Clone, Copy)]
struct Moved<'s> {
    /// The examined commit (the marker), no longer an ancestor of the tip.
    old: &'s str,
    /// The new tip.
    tip: Oid,
    /// Where examination restarts (`None`: no common commit within the bound).
    base: Option<Oid>,
    /// How the walk starts: from the merge base, the root, or the bound.
    from: WalkFrom,
}

/// The examined commit is no longer an ancestor of the tip: say so loudly,
/// on stderr, in the ledger and in state. Nothing is decided by it.
fn rewritten(
    flow: &Flow<'_>,
    repo: &Repository,
    st: &State,
    moved: Moved<'_>,
    bounds: Bounds,
) -> Result<()> {
    let Moved {
        old,
        tip,
        base,
        from,
    } = moved;
    let limit = bounds.versions;
    let mut off = Vec::new();
    for id in pending_in_order(st) {
        let on = st
            .tasks
            .get(&id)
            .and_then(|r| Oid::from_str(&r.commit).ok())
            .map(|c| ops::is_ancestor_within(repo, c, tip, bounds.commits))
            .transpose()?
            .unwrap_or(false);
        if !on {
            off.push(id);
        }
    }
    let (what, from) = match (base, from) {
        (Some(b), _) => (
            "was force-pushed; the examined commit {old} is no longer an ancestor of the tip",
            format!("examining from the merge base {b}"),
        ),
        (None, WalkFrom::Bound) => (
            "was force-pushed, or moved by more commits than one poll walks; the examined commit {old} is not within the newest commits of the tip",
            format!(
                "no common commit within {} commits (--walk-limit): examining the versions of the newest {} commits, oldest first, at most {limit} a poll; older history is NOT EXAMINED",
                bounds.commits, bounds.commits
            ),
        ),
        (None, _) => (
            "was force-pushed; the examined commit {old} is no longer an ancestor of the tip",
            format!(
                "the two share no history: examining from the root, oldest first, at most {limit} version(s) a poll"
            ),
        ),
    };
    let what = what.replace("{old}", old);
    let mut msg = format!(
        "HISTORY REWRITTEN: {}/{} {what} {tip}; {from}. Nothing is approved by the rewrite; decided task IDs are never offered again",
        flow.remote, flow.branch
    );
    if !off.is_empty() {
        msg.push_str(&format!(
            "; still pending although their commit is no longer on the branch: {}",
            off.join(", ")
        ));
    }
    flow.loud(&msg);
    tip_line(
        flow,
        Event::HistoryRewritten {
            old: old.to_owned(),
            new: tip.to_string(),
            merge_base: base.map(|b| b.to_string()),
            pending_off_branch: off.clone(),
            branch: format!("{}/{}", flow.remote, flow.branch),
        },
        tip,
    )?;
    let rec = Rewrite {
        at: now_iso(),
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
