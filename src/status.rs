//! `rxnode status [--json]`: state, heartbeat, tasks, lock, hold.
use crate::context::Ctx;
use crate::exit::Outcome;
use crate::store::lock::{self, Holder};
use crate::store::paths::Paths;
use crate::store::queue::{short, Rewrite, WalkFrom, WalkRecord};
use crate::store::state::{self, PollRecord, PublishRecord, TaskStatus};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One rejected task: which commit, and why.
#[derive(Debug, Serialize)]
pub(crate) struct Rejection {
    /// The task ID.
    pub task_id: String,
    /// The commit it was found at.
    pub commit: String,
    /// Why it was rejected.
    pub reason: String,
}

/// The status report.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The checkout.
    pub repo: String,
    /// Runs that started and never finished, found and finished as interrupted
    /// by this command (docs/protocol.md#interrupted-runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interrupted_runs: Vec<String>,
    /// This node's name (`rxnode node set-name`); `None` when none is set or the
    /// file is damaged (then `node_name_error` says why).
    pub node_name: Option<String>,
    /// Why `.local/rxnode-node.json` could not be used, if it could not.
    pub node_name_error: Option<String>,
    /// Whether a live watcher holds the lock.
    pub watcher_running: bool,
    /// What state says (may be stale after a crash).
    pub state_running: bool,
    /// Watcher PID from state.
    pub watcher_pid: Option<u32>,
    /// The lock holder, if any.
    pub lock_holder: Option<Holder>,
    /// Whether the lock holder is alive.
    pub lock_holder_alive: Option<bool>,
    /// Whether `.local/STOP` holds the watcher.
    pub held: bool,
    /// The `rxnode run` in progress (its live holder of `.local/rxnode-run.lock`).
    pub run_in_progress: Option<Holder>,
    /// Radios some rxnode is using now, with who (docs/operator.md#one-process-per-radio).
    pub radios_in_use: Vec<crate::store::radio_lock::HeldRadio>,
    /// The last poll.
    pub last_poll: Option<PollRecord>,
    /// Seconds since the last poll.
    pub heartbeat_age_s: Option<i64>,
    /// The remote-tracking commit last examined.
    pub remote_marker: Option<String>,
    /// Last seen task.
    pub last_seen_task_id: Option<String>,
    /// Last completed task.
    pub last_completed_task_id: Option<String>,
    /// Task IDs by status.
    pub pending: Vec<String>,
    /// Deferred.
    pub deferred: Vec<String>,
    /// Approved.
    pub approved: Vec<String>,
    /// Completed.
    pub completed: Vec<String>,
    /// Rejected by ID.
    pub rejected: Vec<String>,
    /// Why each rejected task was rejected: the commit and the reason, one line each.
    pub rejections: Vec<Rejection>,
    /// Refused texts without a usable ID or changed under a known ID.
    pub rejected_texts: usize,
    /// Publications.
    pub published: BTreeMap<String, PublishRecord>,
    /// The pending queue, in the order it is prompted.
    pub queue: Vec<QueueItem>,
    /// Withdrawn by the main PC (task file deleted before approval).
    pub withdrawn: Vec<String>,
    /// Tasks whose `TARGET_NODES` leaves this node out (never prompted, never run).
    pub not_for_this_node: Vec<String>,
    /// History rewrites (force pushes) of the watched branch, oldest first.
    pub history_rewrites: Vec<Rewrite>,
    /// The last poll's history walk.
    pub last_walk: Option<WalkRecord>,
    /// Status publication to `rx-status/<NODE>` (docs/protocol.md#node-status):
    /// what would be published now and the last push.
    pub status_publishing: crate::heartbeat::View,
}

/// One pending task version in the queue.
#[derive(Debug, Serialize)]
pub(crate) struct QueueItem {
    /// 1-based place in the queue.
    pub position: usize,
    /// The task.
    pub task_id: String,
    /// The commit that holds the version.
    pub commit: String,
    /// Effective risk.
    pub risk_level: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// When this node first saw it (ISO 8601).
    pub queued_at: String,
    /// Seconds since then.
    pub age_s: Option<i64>,
    /// The commit that replaced it on the branch before the operator saw it.
    pub superseded_by: Option<String>,
}

/// Seconds since `at`; none when `at` is unreadable or more than 5 s in this
/// clock's future (the clock was moved back since): an age that is not known
/// is absent, never negative.
fn age_s(at: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()?;
    let age = (time::OffsetDateTime::now_utc() - t).whole_seconds();
    (age >= -5).then_some(age.max(0))
}

/// Build the report.
pub(crate) fn report(paths: &Paths, source: &crate::context::TaskSource) -> Result<Report> {
    let st = state::load(paths)?;
    let holder = lock::holder(paths).unwrap_or(None);
    let alive = holder.as_ref().map(lock::holder_alive);
    let (node_name, node_name_error) = match crate::store::node::load_name(paths) {
        Ok(n) => (n, None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    Ok(Report {
        repo: paths.repo.display().to_string(),
        interrupted_runs: Vec::new(),
        node_name,
        node_name_error,
        watcher_running: alive == Some(true),
        state_running: st.running,
        watcher_pid: st.watcher_pid,
        lock_holder: holder,
        lock_holder_alive: alive,
        held: paths.is_held(),
        run_in_progress: lock::run_holder(paths).filter(lock::holder_alive),
        radios_in_use: crate::store::radio_lock::held_radios(),
        heartbeat_age_s: st.last_poll.as_ref().and_then(|p| age_s(&p.at)),
        last_poll: st.last_poll.clone(),
        remote_marker: st.remote_marker.clone(),
        last_seen_task_id: st.last_seen_task_id.clone(),
        last_completed_task_id: st.last_completed_task_id.clone(),
        pending: st.ids_with(TaskStatus::Pending),
        deferred: st.ids_with(TaskStatus::Deferred),
        approved: st.ids_with(TaskStatus::Approved),
        completed: st.ids_with(TaskStatus::Completed),
        rejected: st.ids_with(TaskStatus::Rejected),
        rejections: st
            .tasks
            .iter()
            .filter(|(_, r)| r.status == TaskStatus::Rejected)
            .map(|(id, r)| Rejection {
                task_id: id.clone(),
                commit: r.commit.clone(),
                reason: r.reason.clone().unwrap_or_default(),
            })
            .collect(),
        rejected_texts: st.rejected_texts.len(),
        published: st.published.clone(),
        queue: crate::store::queue::pending_in_order(&st)
            .into_iter()
            .enumerate()
            .filter_map(|(i, id)| {
                let r = st.tasks.get(&id)?;
                Some(QueueItem {
                    position: i + 1,
                    commit: r.commit.clone(),
                    risk_level: r.risk_level.clone(),
                    title: r.title.clone(),
                    queued_at: r.first_seen.clone(),
                    age_s: age_s(&r.first_seen),
                    superseded_by: st.queue.superseded.get(&id).cloned(),
                    task_id: id,
                })
            })
            .collect(),
        withdrawn: st.ids_with(TaskStatus::Withdrawn),
        not_for_this_node: st.ids_with(TaskStatus::NotForThisNode),
        history_rewrites: st.queue.rewrites.clone(),
        last_walk: st.queue.last_walk.clone(),
        status_publishing: crate::heartbeat::view(paths, source, alive == Some(true)),
    })
}

/// The command.
pub fn cmd_status(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    // The trust root and the state first (a refusal finishes nothing), then any
    // run that started and never finished (docs/protocol.md#interrupted-runs).
    report(&paths, &ctx.source)?;
    crate::store::leftovers::clear_and_say(&paths);
    let interrupted = crate::result::finish_interrupted(&paths, &ctx.source.branch, "status");
    let mut r = report(&paths, &ctx.source)?;
    r.interrupted_runs = interrupted;
    ctx.report(&r, |r| render_report(r, &paths))?;
    Ok(Outcome::Done)
}

/// The status for a person, as text: watcher, task lists, queue, publication.
fn render_report(r: &Report, paths: &Paths) -> String {
    let colour = crate::term::stdout_colour();
    let mut out = String::new();
    for line in &r.interrupted_runs {
        out.push_str(&format!("INTERRUPTED run: {line}\n"));
    }
    render_watcher(&mut out, r, paths, colour);
    let list = |out: &mut String, name: &str, v: &[String]| {
        let _ = writeln!(
            out,
            "{name:<11} {}",
            if v.is_empty() {
                "-".to_owned()
            } else {
                v.join(", ")
            }
        );
    };
    list(&mut out, "pending:", &r.pending);
    list(&mut out, "deferred:", &r.deferred);
    list(&mut out, "approved:", &r.approved);
    list(&mut out, "completed:", &r.completed);
    list(&mut out, "rejected:", &r.rejected);
    for j in &r.rejections {
        let _ = writeln!(
            out,
            "  {} at {}: {}",
            j.task_id,
            short(&j.commit),
            crate::describe::escaped(&j.reason)
        );
    }
    list(&mut out, "withdrawn:", &r.withdrawn);
    if !r.not_for_this_node.is_empty() {
        list(&mut out, "not for us:", &r.not_for_this_node);
    }
    render_queue(&mut out, r, colour);
    if r.rejected_texts > 0 {
        let _ = writeln!(
            out,
            "refused texts (no usable ID or changed under a known ID): {}",
            r.rejected_texts
        );
    }
    render_status_publishing(&mut out, &r.status_publishing, colour);
    if r.published.is_empty() {
        let _ = writeln!(out, "published:  -");
    } else {
        for (id, p) in &r.published {
            let _ = writeln!(
                out,
                "published:  {id} -> {} at {}{}",
                p.commit,
                p.at,
                if p.pushed { " (pushed)" } else { " (local)" }
            );
        }
    }
    out
}

/// Status publication: on or off, the last push, what would be published now.
fn render_status_publishing(out: &mut String, v: &crate::heartbeat::View, colour: bool) {
    let _ = match v.publishing {
        "off" => writeln!(out,
            "status:     not published (no \"status\" in the policy; docs/operator.md#letting-the-main-pc-see-this-node)"
        ),
        "refused" => writeln!(out,
            "status:     {} {}",
            crate::term::status("[REFUSED]", 9, colour),
            v.refused.as_deref().unwrap_or("")
        ),
        _ => writeln!(out,
            "status:     published to {} every {} s",
            v.remote_ref.as_deref().unwrap_or("?"),
            v.publish_every_s.unwrap_or(0.0)
        ),
    };
    if let Some(p) = &v.last_push {
        let _ = match (&p.last_error, &p.last_pushed_at) {
            (Some(e), last) => writeln!(
                out,
                "            last push {} at {} ({} in a row): {e}; last landed: {}",
                crate::term::status("[FAILED]", 8, colour),
                p.last_attempt_at.as_deref().unwrap_or("?"),
                p.failures_in_a_row,
                last.as_deref().unwrap_or("never")
            ),
            (None, Some(at)) => writeln!(out, "            last pushed at {at}"),
            (None, None) => Ok(()),
        };
    } else if v.publishing == "on" {
        let _ = writeln!(out, "            not pushed yet (the watcher pushes it)");
    }
    if let Some(e) = &v.would_be_refused {
        let _ = writeln!(
            out,
            "            {} {e}",
            crate::term::status("[WOULD BE REFUSED]", 18, colour)
        );
    }
    if let Some(s) = &v.would_publish {
        let q = &s.queue;
        let _ = writeln!(out,
            "            would publish: watcher {}, {} pending approval, {} deferred, {} approved{}, {} refusal(s), {} radio(s)",
            s.watcher,
            q.pending_approval,
            q.deferred,
            q.approved,
            q.running
                .as_ref()
                .map(|r| format!(", running {} step {}/{} ({})", r.task_id, r.step, r.steps, r.op))
                .unwrap_or_default(),
            s.refusals.len(),
            s.radios.len()
        );
    }
}

/// The node, the watcher, the hold, the last poll and the examined commit.
fn render_watcher(out: &mut String, r: &Report, paths: &Paths, colour: bool) {
    let watcher = match (&r.lock_holder, r.lock_holder_alive) {
        (Some(h), Some(true)) => format!("running ({h})"),
        (Some(h), _) => format!("not running (stale lock: {h})"),
        (None, _) if r.state_running => {
            "not running (state says running: the last watcher did not stop cleanly)".to_owned()
        }
        (None, _) => "not running".to_owned(),
    };
    let _ = match (&r.node_name, &r.node_name_error) {
        (Some(n), _) => writeln!(out, "node:       {n}"),
        (None, Some(e)) => writeln!(
            out,
            "node:       {} {e}",
            crate::term::status("[FAILED]", 8, colour)
        ),
        (None, None) => writeln!(
            out,
            "node:       no name set: a publish would be refused; {}",
            crate::store::node::set_name_fix(paths)
        ),
    };
    let _ = writeln!(out, "watcher:    {watcher}");
    if let Some(h) = &r.run_in_progress {
        let _ = writeln!(
            out,
            "run:        {} in progress (PID {}, since {})",
            h.command, h.pid, h.since
        );
    }
    for radio in &r.radios_in_use {
        let h = &radio.holder;
        let _ = writeln!(
            out,
            "radio:      {} in use by {} (PID {}, since {})",
            radio.identity, h.command, h.pid, h.since
        );
    }
    if r.held {
        let _ = writeln!(
            out,
            "hold:       {} by {}",
            crate::term::status("HELD", 4, colour),
            paths.stop().display()
        );
    }
    let _ = match (&r.last_poll, r.heartbeat_age_s) {
        (Some(p), Some(a)) => writeln!(
            out,
            "last poll:  {} ({a} s ago): {}{}",
            p.at,
            p.result,
            if p.ok {
                String::new()
            } else {
                format!(" {}", crate::term::status("[FAILED]", 8, colour))
            }
        ),
        (Some(p), None) => writeln!(
            out,
            "last poll:  {} (age unknown: unreadable, or later than this clock's now — was the clock moved back?): {}",
            p.at, p.result
        ),
        _ => writeln!(out, "last poll:  never"),
    };
    if let Some(m) = &r.remote_marker {
        let _ = writeln!(out, "examined:   {m}");
    }
}

/// The pending queue in prompt order, the last walk and the history rewrites.
fn render_queue(out: &mut String, r: &Report, colour: bool) {
    if r.queue.is_empty() {
        let _ = writeln!(out, "queue:      -");
    } else {
        let _ = writeln!(
            out,
            "queue:      {} pending, prompted in this order:",
            r.queue.len()
        );
        for q in &r.queue {
            let _ = writeln!(
                out,
                "  {:>3}. {}  {}  commit {}  queued {}{}{}",
                q.position,
                q.task_id,
                q.risk_level.as_deref().unwrap_or("?"),
                short(&q.commit),
                q.age_s
                    .map(|a| format!("{a} s ago"))
                    .unwrap_or_else(|| q.queued_at.clone()),
                q.title
                    .as_deref()
                    .map(|t| format!("  \"{t}\""))
                    .unwrap_or_default(),
                q.superseded_by
                    .as_deref()
                    .map(|b| format!("  (replaced on the branch by {})", short(b)))
                    .unwrap_or_default(),
            );
        }
    }
    if let Some(w) = &r.last_walk {
        render_walk(out, w, colour);
    }
    for rw in &r.history_rewrites {
        let _ = writeln!(
            out,
            "{} at {}: {} -> {}, examined from {}{}",
            crate::term::status("HISTORY REWRITTEN", 17, colour),
            rw.at,
            short(&rw.old),
            short(&rw.new),
            rw.merge_base
                .as_deref()
                .map(|b| format!("the merge base {}", short(b)))
                .unwrap_or_else(|| "the root (no common history)".to_owned()),
            if rw.pending_off_branch.is_empty() {
                String::new()
            } else {
                format!(
                    "; pending but no longer on the branch: {}",
                    rw.pending_off_branch.join(", ")
                )
            }
        );
    }
}

/// The last poll's history walk.
fn render_walk(out: &mut String, w: &WalkRecord, colour: bool) {
    let from = match (&w.from, &w.since) {
        (WalkFrom::FirstStart, _) => "first start: tip only".to_owned(),
        (WalkFrom::Root, _) => "from the root (no common history)".to_owned(),
        (WalkFrom::Bound, _) => "from the tip back to the walk bound".to_owned(),
        (_, Some(s)) => format!("since {}", short(s)),
        (_, None) => String::new(),
    };
    let _ = writeln!(
        out,
        "last walk:  {} ({from}): {} commit(s), {} version(s), {} examined, {} not examined{}",
        w.at,
        w.commits,
        w.versions,
        w.examined,
        w.not_examined,
        if w.walk_truncated {
            " (walk stopped at its commit limit)"
        } else {
            ""
        }
    );
    let waiting = w.versions.saturating_sub(w.examined + w.not_examined);
    if waiting > 0 {
        let _ = writeln!(
            out,
            "            {waiting} newer version(s) waiting for the next poll (a poll examines at most {} and reads at most {} MiB of task file)",
            w.limit,
            crate::watch::history::POLL_TASK_BYTES >> 20
        );
    }
    if w.not_examined > 0 {
        let _ =
            writeln!(out,
            "            {} older version(s) {} (recorded by an earlier rxnode, which examined only the newest {} a poll)",
            w.not_examined,
            crate::term::status("NOT EXAMINED", 12, colour),
            w.limit
        );
    }
    if let Some(from) = &w.not_walked_from {
        let _ =
            writeln!(out,
            "            history from {} back {} (a poll walks at most {} commits; --walk-limit)",
            short(from),
            crate::term::status("NOT EXAMINED", 12, colour),
            w.walk_limit
        );
    } else if w.walk_truncated {
        let _ = writeln!(out,
            "            older history {} (the walk stopped early: its commit limit or an incomplete history)",
            crate::term::status("NOT EXAMINED", 12, colour),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::age_s;

    /// An age is known or absent: a time later than now (the clock was moved back
    /// since it was written) has none, where it printed "-172168 s ago"; a time a
    /// few seconds ahead (clock jitter) counts as now.
    #[test]
    fn an_age_from_the_future_is_absent_never_negative() {
        let at = |dt: time::Duration| {
            (time::OffsetDateTime::now_utc() + dt)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        };
        assert_eq!(age_s(&at(time::Duration::days(2))), None);
        assert_eq!(age_s(&at(time::Duration::seconds(3))), Some(0));
        let past = age_s(&at(-time::Duration::seconds(100))).unwrap();
        assert!((99..=101).contains(&past), "{past}");
        assert_eq!(age_s("not a time"), None);
    }
}
