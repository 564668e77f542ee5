//! The event loop: poll, back off after failures, prompt the queue.
use super::{history, Flow, WatchOptions, BACKOFF_CAP};
use crate::exit::Outcome;
use crate::git::ops;
use crate::store::ledger::{self, Entry, Event, Refusal};
use crate::store::queue;
use crate::store::state::{self, TaskStatus};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use rand::Rng;
use std::time::Duration;

/// What `cycle` carries from one poll to the next.
#[derive(Default)]
struct LoopState {
    /// The hold message was shown (and not yet the release).
    held_said: bool,
    /// Tasks left pending by an earlier run have been shown.
    pending_shown: bool,
    /// Pending tasks whose prompt failed (a full disk, a state that could not
    /// be written), with the error last said: offered again at the next poll,
    /// the same error not said twice.
    unshown: std::collections::BTreeMap<String, String>,
}

pub(super) fn run_loop(flow: &mut Flow<'_>, args: &WatchOptions) -> Result<Outcome> {
    let interval = Duration::from_secs_f64(args.interval);
    let limit = history::Bounds {
        versions: args.history_limit,
        commits: args.walk_limit,
    };
    let mut failures: u32 = 0;
    let mut ls = LoopState::default();
    let mut self_tests = crate::health::schedule::Schedule::default();
    loop {
        if flow.io.stopping() {
            return Ok(Outcome::Done);
        }
        // Radio self-tests at start and every health.self_test_every_s
        // (docs/protocol.md#8-radio-health); not while held by .local/STOP.
        if !flow.paths.is_held() {
            self_tests.run_due(&flow.paths, &|m| flow.say(m));
        }
        let outcome = cycle(flow, &mut ls, limit);
        let wait = match outcome {
            Ok(end) => {
                failures = 0;
                if args.once {
                    // What the poll recorded in state (no second read of it).
                    if let Some(p) = flow.polled.take() {
                        flow.say(format!("poll: {p}"));
                    }
                }
                // `--once`: a task whose decision could not be recorded is
                // a failure (exit 1), not "done" (docs/protocol.md#7-exit-status).
                if args.once && !ls.unshown.is_empty() {
                    return Ok(Outcome::Code(1));
                }
                if end || args.once {
                    return Ok(Outcome::Done);
                }
                jitter(interval)
            }
            Err(e) => {
                failures = failures.saturating_add(1);
                if args.once {
                    return Err(e);
                }
                let cap = BACKOFF_CAP.max(interval);
                let back = interval
                    .saturating_mul(2u32.saturating_pow(failures.min(16)))
                    .min(cap);
                let w = jitter(back);
                flow.loud(format!(
                    "{e:#} (failure {failures}; next try in {:.1} s)",
                    w.as_secs_f64()
                ));
                w
            }
        };
        if flow.io.sleep(wait) {
            return Ok(Outcome::Done);
        }
    }
}

fn jitter(d: Duration) -> Duration {
    d.mul_f64(rand::thread_rng().gen_range(0.9..1.1))
}

/// Prompt each task of `ids` that is still pending, in order; the first
/// `earlier` of them were left pending by an earlier run. Each prompt says
/// where the task stands in the queue. Stops at a hold (`Ok(None)`: the rest
/// are shown once it is released) or when a prompt ends the watcher
/// (`Ok(Some(true))`); `[D]` and `[A]` move on to the next. A task whose
/// prompt fails stays in `unshown` (with the error said) until a later poll
/// shows it, or it is no longer pending.
fn prompt_queue(
    flow: &mut Flow<'_>,
    ids: &[String],
    earlier: usize,
    unshown: &mut std::collections::BTreeMap<String, String>,
) -> Result<Option<bool>> {
    if flow.no_prompt {
        queue_unprompted(flow, ids)?;
        return Ok(Some(false));
    }
    let n = ids.len();
    for (i, id) in ids.iter().enumerate() {
        if flow.paths.is_held() {
            return Ok(None);
        }
        let st = state::load(&flow.paths)?;
        if st.tasks.get(id).map(|r| r.status) != Some(TaskStatus::Pending) {
            unshown.remove(id);
            continue; // decided meanwhile (another command) or withdrawn
        }
        if i < earlier {
            flow.say(format!("task {id} is still pending from an earlier run"));
        }
        let more = n - i - 1;
        let mut note = format!(
            "{} of {n} in this poll; {more} more queued{}",
            i + 1,
            if more > 0 { " after this one" } else { "" }
        );
        if let Some(by) = st.queue.superseded.get(id) {
            note.push_str(&format!(
                "; replaced on the branch by commit {by} before you saw it (still offered)"
            ));
        }
        if st
            .queue
            .rewrites
            .last()
            .is_some_and(|r| r.pending_off_branch.contains(id))
        {
            note.push_str(
                "; WARNING: its commit is no longer on the watched branch (history rewritten)",
            );
        }
        if n > 1 {
            flow.say(format!("queue: task {id} is {note}"));
        }
        flow.io.set_queue_note(Some(note));
        let r = flow.reprompt(id);
        flow.io.set_queue_note(None);
        if r.is_ok() {
            unshown.remove(id);
        }
        match r {
            Ok(d) if d.ends_watcher() => {
                if more > 0 {
                    flow.say(format!(
                        "{more} more task(s) stay pending in the queue and are shown at the next start"
                    ));
                }
                return Ok(Some(true));
            }
            Ok(_) => {}
            Err(e) => {
                let e = format!("{e:#}");
                if unshown.get(id) != Some(&e) {
                    // Evidence that an answer may have been typed and lost, written
                    // before it is said (the ledger may be on the same full disk:
                    // then only the screen says it).
                    let line = Entry::new(Event::DecisionNotRecorded { error: e.clone() }).task(id);
                    if let Err(le) = ledger::append(&flow.paths, &line) {
                        tracing::warn!("ledger: {le:#}");
                    }
                    flow.loud(format!(
                        "task {id} could not be shown or its decision recorded: {e}; it stays pending and is offered again at the next poll"
                    ));
                }
                unshown.insert(id.clone(), e);
            }
        }
        if flow.io.stopping() {
            return Ok(Some(true));
        }
    }
    Ok(Some(false))
}

/// `watch --no-prompt`: say which tasks wait for approval (once per watcher
/// start for each), and how to approve them; nothing is read from stdin.
fn queue_unprompted(flow: &Flow<'_>, ids: &[String]) -> Result<()> {
    let st = state::load(&flow.paths)?;
    for id in ids {
        if st.tasks.get(id).map(|r| r.status) != Some(TaskStatus::Pending) {
            continue;
        }
        flow.say(format!(
            "queued for approval: task {id} — approve from any terminal with `rxnode review {id}`"
        ));
    }
    Ok(())
}

/// One poll. `Ok(true)` ends the watcher; `Err` is a fetch/git failure.
///
/// The `.local/STOP` hold is checked first: while it exists nothing is
/// fetched and nothing is prompted, not even tasks pending from an earlier run.
/// Then: fetch; when the tip moved, examine the history since the marker
/// (`queue::examine_history`); then prompt, in commit order, the tasks left
/// pending by an earlier run (first poll only) and every task this poll queued.
fn cycle(flow: &mut Flow<'_>, ls: &mut LoopState, limit: history::Bounds) -> Result<bool> {
    if held(flow, &mut ls.held_said)? {
        return Ok(false);
    }
    let repo = flow.repo.context("no repository")?;
    let fetched = ops::fetch(repo, &flow.remote, &flow.branch, flow.io.flag());
    let oid = match fetched {
        Ok(o) => o,
        // A Ctrl-C/SIGTERM cancels the transfer: the watcher is stopping, and
        // that is not a fetch failure (no `fetch_failed`, no failed last poll).
        Err(_) if flow.io.stopping() => return Ok(true),
        Err(e) => return fetch_failed(flow, ls, e),
    };
    // One verified read of the state serves the checks below: none of them
    // writes it (each state read checks the trust root and the whole ledger).
    let st = state::load(&flow.paths)?;
    fetch_recovered(flow, &st, oid)?;
    refuse_oversized(flow, repo, oid, st.remote_marker.as_deref(), limit)?;
    crate::store::trust::check_watched_tip(&flow.paths, repo, oid, &flow.remote, &flow.branch)?;
    let earlier = if ls.pending_shown {
        Vec::new()
    } else {
        queue::pending_in_order(&st)
    };
    let queued = examine_new(flow, repo, oid, st.remote_marker.as_deref(), limit)?;
    let mut ids = earlier.clone();
    // Then the tasks whose prompt failed at an earlier poll (in queue order;
    // one decided meanwhile is forgotten), then the new ones.
    let pending = queue::pending_in_order(&st);
    ls.unshown.retain(|id, _| pending.contains(id));
    let retry = pending.into_iter().filter(|id| ls.unshown.contains_key(id));
    for id in retry.chain(queued) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        ls.pending_shown = true;
        return Ok(false);
    }
    let end = prompt_queue(flow, &ids, earlier.len(), &mut ls.unshown)?;
    // A hold that appeared between two prompts: everything still pending is
    // shown (in queue order) after it is released.
    ls.pending_shown = end.is_some();
    if flow.io.stopping() {
        return Ok(true);
    }
    Ok(end == Some(true))
}

/// A commit (or its root tree, or a folder on the way to the task path) on the
/// new part of the branch that is larger than any real one (2 MiB, 16 MiB), or new
/// commits that together hold more than the walk's byte budget
/// (`RXNODE_WALK_BYTES`): a few KiB pushed that would inflate to GiBs in every
/// read. The poll is refused before
/// anything reads it — one ledger line per tip — and nothing is examined until
/// the main PC replaces the branch's tip (docs/protocol.md#bound).
fn refuse_oversized(
    flow: &mut Flow<'_>,
    repo: &Repository,
    tip: Oid,
    marker: Option<&str>,
    limit: history::Bounds,
) -> Result<()> {
    let stop = marker.and_then(|m| Oid::from_str(m).ok());
    // A first start examines only the tip: only the tip is checked.
    let max = if marker.is_none() { 1 } else { limit.commits };
    let bytes = ops::walk_bytes_budget();
    let Some(why) = ops::oversized_on_chain(repo, tip, stop, max, Some(&flow.task_path), bytes)
    else {
        return Ok(());
    };
    let reason = format!(
        "{}/{} at {tip}: {why}; nothing on the branch is examined until the main PC replaces \
         that commit (a commit is a few hundred bytes; docs/protocol.md#bound)",
        flow.remote, flow.branch
    );
    let tip_s = tip.to_string();
    let seen = ledger::any_in(&flow.paths.ledger(), |e| {
        e.event() == "refused"
            && e.commit.as_deref() == Some(tip_s.as_str())
            && e.detail_str("command") == Some("watch")
    })?;
    if !seen {
        ledger::append(
            &flow.paths,
            &Entry::new(Refusal::of("watch", reason.clone())).commit(&tip_s),
        )?;
    }
    flow.record_poll(&format!("refused: {reason}"), false)?;
    Err(crate::exit::refused(reason))
}

/// The `.local/STOP` hold: `true` while it holds (said once, recorded each
/// poll); its release is said once.
fn held(flow: &mut Flow<'_>, held_said: &mut bool) -> Result<bool> {
    if flow.paths.is_held() {
        if !*held_said {
            *held_said = true;
            flow.say(format!(
                "held: {} exists — fetching nothing, prompting nothing until it is removed",
                flow.paths.stop().display()
            ));
            ledger::append(&flow.paths, &Entry::new(Event::Held))?;
        }
        flow.record_poll("held by .local/STOP", true)?;
        return Ok(true);
    }
    if *held_said {
        *held_said = false;
        flow.say("hold released (.local/STOP removed); polling again");
        ledger::append(&flow.paths, &Entry::new(Event::HoldReleased))?;
    }
    Ok(false)
}

/// A failed fetch: recorded (one ledger line per distinct failure), then the
/// tasks already known are prompted even while the remote is unreachable.
/// `Ok(true)` when a prompt ended the watcher, else the fetch error.
fn fetch_failed(flow: &mut Flow<'_>, ls: &mut LoopState, e: anyhow::Error) -> Result<bool> {
    let msg = format!("fetch failed: {e:#}");
    // One ledger line per distinct failure (not one per back-off retry).
    let prev = state::load(&flow.paths)?.last_poll;
    if prev.is_none_or(|p| p.ok || p.result != msg) {
        ledger::append(
            &flow.paths,
            &Entry::new(Event::FetchFailed {
                remote: flow.remote.to_owned(),
                branch: flow.branch.to_owned(),
                error: format!("{e:#}"),
            }),
        )?;
    }
    flow.record_poll(&msg, false)?;
    // Tasks already known are shown even while the remote is unreachable.
    if !ls.pending_shown {
        let earlier = queue::pending_in_order(&state::load(&flow.paths)?);
        match prompt_queue(flow, &earlier, earlier.len(), &mut ls.unshown)? {
            Some(true) => return Ok(true),
            Some(false) => ls.pending_shown = true,
            None => {}
        }
    }
    Err(e)
}

/// The first good fetch after failed ones (`st`, the state as this poll read
/// it, says the last poll failed): a `fetch_recovered` line.
fn fetch_recovered(flow: &Flow<'_>, st: &state::State, oid: Oid) -> Result<()> {
    if st
        .last_poll
        .as_ref()
        .is_some_and(|p| !p.ok && p.result.starts_with("fetch failed"))
    {
        ledger::append(
            &flow.paths,
            &Entry::new(Event::FetchRecovered {
                remote: flow.remote.to_owned(),
                branch: flow.branch.to_owned(),
            })
            .commit(&oid.to_string()),
        )?;
    }
    Ok(())
}

/// Examine the history since the marker (`marker`, as this poll read the
/// state) when the tip moved; the task IDs this poll queued, in commit order.
fn examine_new(
    flow: &mut Flow<'_>,
    repo: &Repository,
    oid: Oid,
    marker: Option<&str>,
    limit: history::Bounds,
) -> Result<Vec<String>> {
    if marker == Some(oid.to_string().as_str()) {
        tracing::info!("poll: nothing new at {oid}");
        flow.record_poll("nothing new", true)?;
        return Ok(Vec::new());
    }
    let (q, left) = history::examine_history(flow, repo, oid, limit)?;
    let examined = if left > 0 {
        format!("examined the history towards {oid} in part ({left} newer task version(s) left for the next poll)")
    } else {
        format!("examined {oid}")
    };
    flow.record_poll(
        &format!(
            "{examined}; {} new task(s) queued{}",
            q.len(),
            if q.is_empty() {
                ", nothing to prompt"
            } else {
                ""
            }
        ),
        true,
    )?;
    Ok(q)
}
