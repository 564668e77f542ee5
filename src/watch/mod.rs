//! `rxnode watch`: poll the watched branch, check, prompt, record.
//!
//! The event loop runs on a tokio current-thread runtime (docs/architecture.md: watcher on
//! tokio): between polls the watcher awaits a tokio timer or the next event on
//! one channel (no CPU while idle). The process's one signal handler
//! (`crate::signals`: SIGINT/SIGTERM/SIGHUP, Ctrl-C on Windows) and a stdin
//! reader thread post to that channel (`io.rs`), so a signal ends a sleep or a
//! prompt at once; a step in progress (a fetch, a state write) is finished
//! first. git2 calls are blocking and run between awaits.
//!
//! `poll.rs` is the event loop (hold, fetch, back-off, the queue's prompts),
//! `history.rs` walks the branch, `versions.rs` examines each task version,
//! `check.rs` holds the checks of one text, `prompt.rs` the prompt and the
//! approval, `dry_run.rs` the `--dry-run` flow, `stale_locks.rs` the clean-up
//! after a killed watcher's fetch, and `queue.rs` what the queue keeps in state.

mod check;
mod dry_run;
pub(crate) mod history;
mod io;
mod poll;
mod prompt;
pub(crate) mod review;

pub(crate) use check::not_for_this_node;
mod stale_locks;
mod versions;

use crate::context::{Ctx, TaskSource};
use crate::exit::{bad_input, Outcome};
use crate::git::ops;
use crate::heartbeat;
use crate::store::ledger::{self, Entry, Event};
use crate::store::lock::Lock;
use crate::store::paths::Paths;
use crate::store::queue;
use crate::store::state;
use crate::Shell;
use anyhow::Result;
use git2::Repository;
use io::Io;
use rxnode_interlock::ValidTask;
use serde::Serialize;
use std::time::Duration;

/// Longest wait for the last status push (`stopped`) when the watcher ends.
const STATUS_STOP_WAIT: Duration = Duration::from_secs(10);

/// Longest wait between polls after repeated failures.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(300);

/// How a prompt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// `[A]` and the outbox is ready.
    Approved,
    /// `[D]`.
    Deferred,
    /// `[A]`, but the outbox could not be written (task stays pending).
    Refused,
    /// `[S]`: stop the watcher, no decision.
    Stop,
    /// End of input: stop, no decision.
    Eof,
    /// A signal: stop, no decision.
    Signal,
    /// Its `TARGET_NODES` leaves this node out: recorded, not prompted.
    NotForThisNode,
    /// A check made again at the prompt (its signature) refused it: rejected, not prompted.
    Rejected,
}

impl Decision {
    /// Whether the watcher ends after this.
    pub(crate) fn ends_watcher(self) -> bool {
        matches!(self, Decision::Stop | Decision::Eof | Decision::Signal)
    }
}

/// What the checks of one task text found.
pub(crate) enum Verdict {
    /// Valid, a new ID, every check passed: to be queued and prompted.
    New(Box<ValidTask>),
    /// Valid, known and still pending with the same text (already queued).
    Pending(String),
    /// The same, in a dry run: prompted again.
    PendingTask(Box<ValidTask>),
    /// The same text as a task already decided (or refused before).
    Duplicate {
        /// The task ID, when one could be read.
        id: Option<String>,
        /// Its status on this node.
        status: String,
    },
    /// Valid, but its `TARGET_NODES` leaves this node out: recorded, not prompted.
    NotForThisNode,
    /// Refused.
    Refused {
        /// The task ID, when one could be read.
        id: Option<String>,
        /// Why.
        reason: String,
        /// The ledger event written for it now (`None`: refused before).
        written: Option<&'static str>,
    },
}

/// Everything a decision flow needs.
pub(crate) struct Flow<'a> {
    /// Where state goes (the dry-run area for `--dry-run`).
    pub(crate) paths: Paths,
    /// The checkout's repository (None in dry-run).
    pub(crate) repo: Option<&'a Repository>,
    /// The watched branch.
    pub(crate) branch: String,
    /// The remote.
    pub(crate) remote: String,
    /// The task path.
    pub(crate) task_path: String,
    /// Prompt I/O.
    pub(crate) io: &'a mut Io,
    /// Whether this is a dry run.
    pub(crate) dry_run: bool,
    /// `watch --no-prompt`: queue new tasks and never prompt (approve them with
    /// `rxnode review`).
    pub(crate) no_prompt: bool,
    /// `rxnode review`: the prompt's `[S]` stops the review, not a watcher.
    pub(crate) review: bool,
    /// Where and how the flow speaks: text, or JSON Lines under `--json`.
    pub(crate) shell: Shell,
    /// What this flow last recorded as the poll's result (`last_poll` in state).
    pub(crate) polled: Option<String>,
}

impl<'a> Flow<'a> {
    /// The flow of the watched checkout `repo` (watch, review).
    pub(crate) fn on_branch(
        paths: Paths,
        repo: &'a Repository,
        source: &TaskSource,
        io: &'a mut Io,
    ) -> Flow<'a> {
        Flow::new(paths, Some(repo), source, source.task_path.clone(), io)
    }

    /// A dry run on the local task file named `task_path`: no repository.
    pub(crate) fn dry(
        paths: Paths,
        source: &TaskSource,
        task_path: String,
        io: &'a mut Io,
    ) -> Flow<'a> {
        Flow::new(paths, None, source, task_path, io)
    }

    /// The one constructor: without a repository it is a dry run.
    fn new(
        paths: Paths,
        repo: Option<&'a Repository>,
        source: &TaskSource,
        task_path: String,
        io: &'a mut Io,
    ) -> Flow<'a> {
        Flow {
            paths,
            repo,
            branch: source.branch.clone(),
            remote: source.remote.clone(),
            task_path,
            io,
            dry_run: repo.is_none(),
            no_prompt: false,
            review: false,
            shell: Shell::default(),
            polled: None,
        }
    }
}

/// A valid task text as found at a commit of the branch (`commit` and `blob`
/// empty for a dry run's local file): what a prompt shows and approves.
#[derive(Clone, Copy)]
pub(crate) struct Found<'t> {
    /// The checked task.
    pub(crate) task: &'t ValidTask,
    /// Its bytes, as they go to the outbox.
    pub(crate) bytes: &'t [u8],
    /// The commit that holds it.
    pub(crate) commit: &'t str,
    /// The task file's blob ID at that commit.
    pub(crate) blob: &'t str,
}

/// The ledger line `event` about a task found at `commit`: its ID and SHA-256.
pub(crate) fn task_line(event: Event, task: &ValidTask, commit: &str) -> Entry {
    Entry::new(event)
        .task(task.id().as_str())
        .sha(task.sha256())
        .commit(commit)
}

/// One line of what the watcher says under `--json` (JSON Lines, one object per
/// line, docs/protocol.md#7-exit-status): `{"message": …}` on stdout,
/// `{"warning": {"message": …}}` on stderr, `{"prompt": {"task_id", "text"}}`
/// on stdout for a task shown for a decision.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Said<'a> {
    /// A line for the operator.
    Message(&'a str),
    /// A warning or refusal.
    Warning {
        /// What went wrong.
        message: &'a str,
    },
    /// A task shown for a decision ([A]/[D]/[S]): the card a person reads.
    Prompt {
        /// The task's ID.
        task_id: &'a str,
        /// The card, as text.
        text: &'a str,
    },
}

impl Said<'_> {
    /// The object on one line, and a newline.
    pub(crate) fn line(&self) -> String {
        // A value of these variants always serializes.
        serde_json::to_string(self).map_or_else(|_| String::new(), |s| format!("{s}\n"))
    }
}

/// A line for the operator on stdout, flushed at once (under `--json`, a
/// `{"message": …}` line; an empty line, which only spaces text, is left out).
pub(crate) fn say_in(shell: Shell, msg: impl AsRef<str>) {
    let msg = msg.as_ref();
    // A reader that has gone does not stop the watcher.
    let _ = if !shell.json() {
        shell.out_plain(&format!("{msg}\n"))
    } else if msg.is_empty() {
        Ok(())
    } else {
        shell.out_plain(&Said::Message(msg).line())
    };
}

/// A warning or refusal on stderr (under `--json`, a `{"warning": …}` line).
pub(crate) fn loud_in(shell: Shell, msg: impl AsRef<str>) {
    let msg = msg.as_ref();
    if shell.json() {
        let _ = shell.err(&Said::Warning { message: msg }.line(), false);
    } else {
        note!("rxnode: {msg}");
    }
}

impl Flow<'_> {
    /// [`say_in`] in this flow's output mode.
    pub(crate) fn say(&self, msg: impl AsRef<str>) {
        say_in(self.shell, msg);
    }

    /// [`loud_in`] in this flow's output mode.
    pub(crate) fn loud(&self, msg: impl AsRef<str>) {
        loud_in(self.shell, msg);
    }
}

/// `watch` options.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchOptions {
    /// One poll cycle, then exit.
    #[arg(long)]
    pub once: bool,
    /// Time between polls (seconds, fractions allowed, or `30s`, `2m`).
    #[arg(long, default_value_t = 30.0, value_parser = crate::options::seconds)]
    pub interval: f64,
    /// The decision flow on a local file: no fetch, no radio, no commit, no push.
    #[arg(long, requires = "task_file")]
    pub dry_run: bool,
    /// The task file for --dry-run (only with --dry-run: a live watch reads the branch).
    #[arg(long, requires = "dry_run")]
    pub task_file: Option<std::path::PathBuf>,
    /// Task versions examined per poll at most (the oldest not yet examined;
    /// the next poll goes on after the last one, so none is left out).
    #[arg(long, env = "RXNODE_HISTORY_LIMIT", default_value_t = crate::store::queue::DEFAULT_HISTORY_LIMIT)]
    pub history_limit: usize,
    /// Commits one poll walks at most (the newest; older history is reported
    /// as not examined). Lower it on a slow laptop; it cannot be raised.
    #[arg(long, env = "RXNODE_WALK_LIMIT", default_value_t = crate::store::queue::DEFAULT_WALK_LIMIT)]
    pub walk_limit: usize,
    /// Unattended: queue new tasks and never prompt (approve them with `rxnode
    /// review TASK_ID` from any terminal while the watcher runs).
    #[arg(long, conflicts_with = "dry_run")]
    pub no_prompt: bool,
}

/// The `watch` command.
pub fn cmd_watch(ctx: &Ctx, args: &WatchOptions) -> Result<Outcome> {
    check_options(args)?;
    if args.dry_run {
        return dry_run::dry_run(ctx, args);
    }
    let paths = ctx.paths();
    crate::store::node::refuse_worktree_of_node(&paths, watcher_command(args))?;
    let repo = ops::open(&ctx.repo)?;
    ops::ensure_local_excluded(&repo)?;
    // Nothing trusted that Git could supply: loading the state checks the
    // whole trust root first (`trust::prepare`); a corrupt state stops here, kept aside.
    state::load(&paths)?;
    crate::result::finish_and_say(&paths, &ctx.source.branch, "watch");
    // Status publication (docs/protocol.md#node-status): asked for but impossible
    // is refused before anything starts; an unreadable policy publishes nothing.
    let status = match heartbeat::setting(&paths, &ctx.source) {
        heartbeat::Setting::On(cfg) => Some(cfg),
        heartbeat::Setting::Off => None,
        heartbeat::Setting::Refused(why) => return Err(crate::exit::refused(why)),
        heartbeat::Setting::PolicyUnreadable(why) => {
            loud_in(ctx.shell(), why);
            None
        }
    };
    let acquired_at = std::time::SystemTime::now();
    let lock = Lock::acquire(&paths, watcher_command(args)).map_err(|e| {
        if let Some(crate::exit::Refused(why)) = e.downcast_ref::<crate::exit::Refused>() {
            crate::exit::refused(format!(
                "{why}; one watcher runs per checkout — fix: let that rxnode finish, or stop it \
                 (a watcher: [S] at its prompt or Ctrl-C in its terminal; the service: `rxnode \
                 service uninstall`), then start this one again"
            ))
        } else {
            e
        }
    })?;
    if let Some(dead) = lock.took_over() {
        stale_locks::clear_stale_fetch_locks(
            &paths,
            &repo,
            &ctx.source,
            dead,
            acquired_at,
            ctx.shell(),
        )?;
    }
    let mut io = Io::new()?;
    started(&paths, ctx, args)?;
    let publisher = match status {
        Some(cfg) if !args.once => Some(heartbeat::Worker::start(paths.clone(), cfg)?),
        _ => None,
    };
    let mut flow = Flow::on_branch(paths.clone(), &repo, &ctx.source, &mut io);
    flow.no_prompt = args.no_prompt;
    flow.shell = ctx.shell();
    if args.no_prompt {
        flow.say("unattended (--no-prompt): new tasks are queued, never prompted; approve with `rxnode review TASK_ID`");
    }
    let result = poll::run_loop(&mut flow, args);
    let why = match &result {
        Ok(_) if flow.io.stopping() => "signal",
        Ok(_) => "done",
        Err(_) => "error",
    };
    let fin = state::update(&paths, |s| {
        s.running = false;
        s.watcher_pid = None;
        Ok(())
    });
    if let Some(p) = publisher {
        p.stop(STATUS_STOP_WAIT);
    }
    let _ = ledger::append(
        &paths,
        &Entry::new(Event::WatcherStopped {
            reason: why.to_owned(),
        }),
    );
    drop(lock);
    fin?;
    if why == "signal" {
        say_in(ctx.shell(), "stopped by signal; state saved, lock released");
    }
    result
}

/// What the watcher lock says the holder is: `watch --no-prompt` lets
/// `rxnode review` prompt while it runs (it never prompts itself).
pub(crate) fn watcher_command(args: &WatchOptions) -> &'static str {
    if args.no_prompt {
        NO_PROMPT_WATCHER
    } else {
        "watch"
    }
}

/// The watcher lock's command of a watcher that never prompts.
pub(crate) const NO_PROMPT_WATCHER: &str = "watch --no-prompt";

/// `--interval`, `--history-limit` and `--walk-limit` in range.
fn check_options(args: &WatchOptions) -> Result<()> {
    if !(args.interval.is_finite() && args.interval > 0.0 && args.interval <= 86_400.0) {
        return Err(bad_input(format!(
            "--interval {}: must be a number of seconds in (0, 86400]",
            args.interval
        )));
    }
    let max = queue::MAX_HISTORY_LIMIT;
    if !(1..=max).contains(&args.history_limit) {
        return Err(bad_input(format!(
            "--history-limit {}: must be a number of task versions in 1..={max}",
            args.history_limit
        )));
    }
    let max = queue::DEFAULT_WALK_LIMIT;
    if !(1..=max).contains(&args.walk_limit) {
        return Err(bad_input(format!(
            "--walk-limit {}: must be a number of commits in 1..={max} (it can lower the bound, not raise it)",
            args.walk_limit
        )));
    }
    Ok(())
}

/// Record in state and the ledger that this watcher runs.
fn started(paths: &Paths, ctx: &Ctx, args: &WatchOptions) -> Result<()> {
    state::update(paths, |s| {
        s.running = true;
        s.watcher_pid = Some(std::process::id());
        Ok(())
    })?;
    ledger::append(
        paths,
        &Entry::new(Event::WatcherStarted {
            pid: std::process::id(),
            remote: ctx.source.remote.clone(),
            branch: ctx.source.branch.clone(),
            task_path: ctx.source.task_path.clone(),
            interval_s: args.interval,
            once: args.once,
            no_prompt: args.no_prompt,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(interval: f64, history_limit: usize) -> WatchOptions {
        WatchOptions {
            once: true,
            interval,
            dry_run: false,
            task_file: None,
            history_limit,
            walk_limit: queue::DEFAULT_WALK_LIMIT,
            no_prompt: false,
        }
    }

    #[test]
    fn interval_and_history_limit_are_checked_before_anything_runs() {
        assert!(check_options(&opts(0.5, 1)).is_ok());
        assert!(check_options(&opts(86_400.0, queue::MAX_HISTORY_LIMIT)).is_ok());
        for bad in [0.0, -1.0, 86_400.5, f64::NAN, f64::INFINITY] {
            let e = check_options(&opts(bad, 50)).unwrap_err();
            assert!(e.to_string().starts_with("--interval "), "{e}");
        }
        for bad in [0, queue::MAX_HISTORY_LIMIT + 1] {
            let e = check_options(&opts(1.0, bad)).unwrap_err();
            assert!(e.to_string().starts_with("--history-limit "), "{e}");
        }
    }
}
