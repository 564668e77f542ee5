//! `rxnode watch`: poll the watched branch, check, prompt, record.
//!
//! The event loop runs on a tokio current-thread runtime (DESIGN §1: watcher on
//! tokio): between polls the watcher awaits a tokio timer or the next event on
//! one channel (no CPU while idle). The signal handler (SIGINT/SIGTERM/SIGHUP,
//! Ctrl-C on Windows) and a stdin reader thread post to that channel, so a
//! signal ends a sleep or a prompt at once; a step in progress (a fetch, a state
//! write) is finished first. git2 calls are blocking and run between awaits.

pub(crate) mod queue;
pub(crate) mod review;
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::git::ops::{self as gitops, Blob};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry};
use crate::store::lock::Lock;
use crate::store::outbox::{self, Prepared};
use crate::store::paths::Paths;
use crate::store::state::{self, PollRecord, RejectedText, TaskRecord, TaskStatus};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use rand::Rng;
use rxnode_interlock::{
    required_phrase, sha256_hex, Approval, AuthorizationKind, RiskLevel, ValidTask, MAX_TASK_BYTES,
};
use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{
    unbounded_channel, UnboundedReceiver as Receiver, UnboundedSender as Sender,
};

/// Longest wait between polls after repeated failures.
pub const BACKOFF_CAP: Duration = Duration::from_secs(300);

/// Something that wakes the watcher.
enum Event {
    Signal,
    Line(Option<String>),
}

/// What a read at the prompt gave.
enum Answer {
    Line(String),
    Eof,
    Signal,
}

/// The channel shared by the signal handler and the stdin reader.
pub struct Io {
    rt: tokio::runtime::Runtime,
    rx: Receiver<Event>,
    tx: Sender<Event>,
    stdin_started: bool,
    queued: VecDeque<Option<String>>,
    /// Where the task being prompted stands in the queue (shown in the prompt).
    queue_note: Option<String>,
}

impl Io {
    /// Subscribe to the process's signals (`crate::signals`) and make the channel.
    pub fn new() -> Result<Io> {
        let (tx, rx) = unbounded_channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .context("cannot start the watcher's event loop")?;
        let to_loop = tx.clone();
        crate::signals::subscribe(move || to_loop.send(Event::Signal).is_ok())
            .map_err(|e| anyhow::anyhow!(e))
            .context("cannot install the signal handler")?;
        Ok(Io {
            rt,
            rx,
            tx,
            stdin_started: false,
            queued: VecDeque::new(),
            queue_note: None,
        })
    }

    /// Whether a stop signal arrived.
    pub fn stopping(&self) -> bool {
        crate::signals::received()
    }

    /// Set (or clear) the queue line shown with the next prompts.
    pub(crate) fn set_queue_note(&mut self, note: Option<String>) {
        self.queue_note = note;
    }

    fn flag(&self) -> &'static AtomicBool {
        crate::signals::flag()
    }

    /// Sleep, waking early on a signal (returns `true` then).
    fn sleep(&mut self, d: Duration) -> bool {
        if self.stopping() {
            return true;
        }
        let end = Instant::now() + d;
        loop {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            let Io { rt, rx, .. } = self;
            match rt.block_on(async { tokio::time::timeout(end - now, rx.recv()).await }) {
                Ok(Some(Event::Signal)) => return true,
                Ok(Some(Event::Line(l))) => self.queued.push_back(l),
                Err(_elapsed) => return false,
                Ok(None) => return self.stopping(),
            }
        }
    }

    fn read_answer(&mut self) -> Answer {
        if self.stopping() {
            return Answer::Signal;
        }
        if let Some(l) = self.queued.pop_front() {
            return l.map(Answer::Line).unwrap_or(Answer::Eof);
        }
        if !self.stdin_started {
            self.stdin_started = true;
            let tx = self.tx.clone();
            std::thread::spawn(move || {
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                loop {
                    // Non-UTF-8 bytes are an unknown answer, not end of input.
                    match crate::term::read_line_lossy(&mut lock) {
                        Ok(None) | Err(_) => {
                            let _ = tx.send(Event::Line(None));
                            break;
                        }
                        Ok(Some(l)) => {
                            if tx.send(Event::Line(Some(l))).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        }
        let Io { rt, rx, .. } = self;
        match rt.block_on(rx.recv()) {
            Some(Event::Signal) => Answer::Signal,
            Some(Event::Line(Some(l))) => Answer::Line(l),
            Some(Event::Line(None)) | None => Answer::Eof,
        }
    }
}

/// How a prompt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
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
}

impl Decision {
    /// Whether the watcher ends after this.
    pub fn ends_watcher(self) -> bool {
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
pub struct Flow<'a> {
    /// Where state goes (the dry-run area for `--dry-run`).
    pub paths: Paths,
    /// The checkout's repository (None in dry-run).
    pub repo: Option<&'a Repository>,
    /// The watched branch.
    pub branch: String,
    /// The remote.
    pub remote: String,
    /// The task path.
    pub task_path: String,
    /// Prompt I/O.
    pub io: &'a mut Io,
    /// Whether this is a dry run.
    pub dry_run: bool,
}

pub(crate) fn say(msg: impl AsRef<str>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", msg.as_ref());
    let _ = out.flush();
}

pub(crate) fn loud(msg: impl AsRef<str>) {
    eprintln!("rxnode: {}", msg.as_ref());
}

impl Flow<'_> {
    fn record_poll(&self, result: &str, ok: bool) -> Result<()> {
        state::update(&self.paths, |s| {
            s.last_poll = Some(PollRecord {
                at: now_iso(),
                result: result.to_owned(),
                ok,
            });
            Ok(())
        })
    }

    /// Reject a text that has no usable ID, or changed under a known ID: once per text.
    /// Reject a task blob that was never read (too large, not a regular file),
    /// keyed by its object ID, once.
    /// Returns whether this was new (reported now).
    pub(crate) fn reject_blob(&self, blob: &str, commit: Oid, reason: &str) -> Result<bool> {
        self.reject_text(
            "rejected",
            &format!("blob:{blob}"),
            None,
            &commit.to_string(),
            reason,
        )
    }

    fn reject_text(
        &self,
        event: &str,
        key: &str,
        id: Option<&str>,
        commit: &str,
        reason: &str,
    ) -> Result<bool> {
        let new = state::update(&self.paths, |s| {
            if s.rejected_texts.contains_key(key) {
                return Ok(false);
            }
            s.rejected_texts.insert(
                key.to_owned(),
                RejectedText {
                    task_id: id.map(str::to_owned),
                    commit: commit.to_owned(),
                    reason: reason.to_owned(),
                    at: now_iso(),
                },
            );
            Ok(true)
        })?;
        if new {
            let mut e = Entry::new(event)
                .commit(commit)
                .detail(serde_json::json!({ "reason": reason, "key": key }));
            if let Some(id) = id {
                e = e.task(id);
            }
            if !key.starts_with("blob:") {
                e = e.sha(key);
            }
            ledger::append(&self.paths, &e)?;
            loud(reason);
        }
        Ok(new)
    }

    /// Reject a task under its ID (recorded so it is reported once).
    fn reject_task(
        &self,
        id: &str,
        sha: &str,
        commit: &str,
        title: Option<String>,
        reason: &str,
    ) -> Result<()> {
        state::update(&self.paths, |s| {
            s.last_seen_task_id = Some(id.to_owned());
            s.tasks.insert(
                id.to_owned(),
                TaskRecord {
                    status: TaskStatus::Rejected,
                    task_sha256: sha.to_owned(),
                    commit: commit.to_owned(),
                    risk_level: None,
                    title,
                    first_seen: now_iso(),
                    reason: Some(reason.to_owned()),
                },
            );
            Ok(())
        })?;
        ledger::append(
            &self.paths,
            &Entry::new("rejected")
                .task(id)
                .sha(sha)
                .commit(commit)
                .detail(serde_json::json!({ "reason": reason })),
        )?;
        loud(format!("task {id} rejected: {reason}"));
        Ok(())
    }

    /// Check task bytes found at `commit` (`None` in dry-run) and prompt when new.
    /// Returns the decision, or `None` when nothing was prompted.
    pub fn examine(
        &mut self,
        bytes: &[u8],
        commit: Option<Oid>,
        blob: &str,
    ) -> Result<Option<Decision>> {
        let commit_s = commit.map(|c| c.to_string()).unwrap_or_default();
        match self.check_version(bytes, commit)? {
            Verdict::New(task) | Verdict::PendingTask(task) => {
                let d = self.prompt(&task, bytes, &commit_s, blob)?;
                Ok(Some(d))
            }
            Verdict::Pending(_) | Verdict::Duplicate { .. } | Verdict::Refused { .. } => Ok(None),
        }
    }

    /// Every check of one task text found at `commit` (`None` in dry-run):
    /// header and plan, a known ID with a changed text, `EXPECTED_HEAD`
    /// ancestry. Refusals are recorded and reported here (once per text);
    /// nothing is prompted.
    pub(crate) fn check_version(&mut self, bytes: &[u8], commit: Option<Oid>) -> Result<Verdict> {
        let commit_s = commit.map(|c| c.to_string()).unwrap_or_default();
        let sha = sha256_hex(bytes);
        let task = match crate::validate::check(bytes, &self.branch) {
            Ok(t) => t,
            Err(issues) => {
                let list: Vec<String> = issues.iter().map(|i| i.to_string()).collect();
                let id = rxnode_interlock::lenient_task_id(bytes).map(|t| t.to_string());
                let st = state::load(&self.paths)?;
                if let Some(id) = &id {
                    if let Some(rec) = st.tasks.get(id) {
                        if rec.task_sha256 == sha {
                            // Reported before.
                            return Ok(Verdict::Duplicate {
                                id: Some(id.clone()),
                                status: format!("{:?}", rec.status).to_lowercase(),
                            });
                        }
                        return self.refuse_changed(id, rec, &sha, &commit_s);
                    }
                    let reason = format!("invalid task file: {}", list.join("; "));
                    self.reject_task(id, &sha, &commit_s, None, &reason)?;
                    return Ok(Verdict::Refused {
                        id: Some(id.clone()),
                        reason,
                        written: Some("rejected"),
                    });
                }
                let reason = format!(
                    "invalid task file at {} ({}) without a usable TASK_ID: {}",
                    self.task_path,
                    if commit_s.is_empty() {
                        "local file"
                    } else {
                        &commit_s
                    },
                    list.join("; ")
                );
                let new = self.reject_text("rejected", &sha, None, &commit_s, &reason)?;
                return Ok(Verdict::Refused {
                    id: None,
                    reason,
                    written: new.then_some("rejected"),
                });
            }
        };
        let id = task.id().to_string();
        let st = state::load(&self.paths)?;
        let mut pending = false;
        if let Some(rec) = st.tasks.get(&id) {
            if rec.task_sha256 != sha {
                return self.refuse_changed(&id, rec, &sha, &commit_s);
            }
            if rec.status != TaskStatus::Pending {
                tracing::info!(
                    "task {id} already seen ({:?}); not prompted again",
                    rec.status
                );
                return Ok(Verdict::Duplicate {
                    id: Some(id),
                    status: format!("{:?}", rec.status).to_lowercase(),
                });
            }
            if !self.dry_run {
                // Already queued, checked at the commit that first held it;
                // the same text at another commit changes nothing.
                return Ok(Verdict::Pending(id));
            }
            pending = true;
        }
        match (self.repo, commit) {
            (Some(repo), Some(c)) => {
                let base = &task.header().expected_head;
                if !gitops::is_strict_ancestor(repo, base, c)? {
                    let reason = format!(
                        "EXPECTED_HEAD {base} is not a strict ancestor of the task commit {c}"
                    );
                    self.reject_task(
                        &id,
                        &sha,
                        &commit_s,
                        Some(task.header().task_title.clone()),
                        &reason,
                    )?;
                    return Ok(Verdict::Refused {
                        id: Some(id),
                        reason,
                        written: Some("rejected"),
                    });
                }
            }
            _ => say("dry run: ancestry check of EXPECTED_HEAD skipped (no fetch, no remote)"),
        }
        Ok(if pending {
            Verdict::PendingTask(Box::new(task))
        } else {
            Verdict::New(Box::new(task))
        })
    }

    fn refuse_changed(
        &self,
        id: &str,
        rec: &TaskRecord,
        sha: &str,
        commit: &str,
    ) -> Result<Verdict> {
        let reason = format!(
            "REFUSED: task {id} is already known ({:?}) with text SHA-256 {}, but the file now has a different text (SHA-256 {sha}); a revised task needs a new TASK_ID — not prompted",
            rec.status, rec.task_sha256
        );
        let new = self.reject_text("refused", sha, Some(id), commit, &reason)?;
        Ok(Verdict::Refused {
            id: Some(id.to_owned()),
            reason,
            written: new.then_some("refused"),
        })
    }

    /// Record a valid task as pending (before any prompt); `true` when it was
    /// new (then a `detected` line is written).
    pub(crate) fn record_pending(&self, task: &ValidTask, commit: &str) -> Result<bool> {
        let id = task.id().to_string();
        let is_new = state::update(&self.paths, |s| {
            s.last_seen_task_id = Some(id.clone());
            let new = !s.tasks.contains_key(&id);
            s.tasks.entry(id.clone()).or_insert_with(|| TaskRecord {
                status: TaskStatus::Pending,
                task_sha256: task.sha256().to_owned(),
                commit: commit.to_owned(),
                risk_level: Some(task.risk().as_str().to_owned()),
                title: Some(task.header().task_title.clone()),
                first_seen: now_iso(),
                reason: None,
            });
            Ok(new)
        })?;
        if is_new {
            ledger::append(
                &self.paths,
                &Entry::new("detected")
                    .task(&id)
                    .sha(task.sha256())
                    .commit(commit),
            )?;
        }
        Ok(is_new)
    }

    /// Record the task as pending, show it, and ask.
    pub fn prompt(
        &mut self,
        task: &ValidTask,
        bytes: &[u8],
        commit: &str,
        blob: &str,
    ) -> Result<Decision> {
        let id = task.id().to_string();
        self.record_pending(task, commit)?;
        self.show(task, commit, blob);
        ledger::append(
            &self.paths,
            &Entry::new("prompted")
                .task(&id)
                .sha(task.sha256())
                .commit(commit),
        )?;
        loop {
            say("[A] Approve  [D] Defer  [S] Stop watcher");
            print!("> ");
            let _ = std::io::stdout().flush();
            let line = match self.io.read_answer() {
                Answer::Line(l) => {
                    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                        say(&l); // keep a piped transcript readable
                    }
                    l
                }
                Answer::Eof => {
                    say("");
                    say(format!("end of input: stopping without a decision; {id} stays pending and is shown at the next start"));
                    ledger::append(
                        &self.paths,
                        &Entry::new("stopped")
                            .task(&id)
                            .sha(task.sha256())
                            .detail(serde_json::json!({"reason": "end of input at the prompt"})),
                    )?;
                    return Ok(Decision::Eof);
                }
                Answer::Signal => {
                    say("");
                    say(format!(
                        "signal: stopping without a decision; {id} stays pending"
                    ));
                    ledger::append(
                        &self.paths,
                        &Entry::new("stopped")
                            .task(&id)
                            .sha(task.sha256())
                            .detail(serde_json::json!({"reason": "signal at the prompt"})),
                    )?;
                    return Ok(Decision::Signal);
                }
            };
            match line.trim().to_ascii_lowercase().as_str() {
                "a" | "approve" => return self.approve(task, bytes, commit, blob),
                "d" | "defer" => {
                    state::update(&self.paths, |s| {
                        if let Some(r) = s.tasks.get_mut(&id) {
                            r.status = TaskStatus::Deferred;
                        }
                        s.deferred_task_ids.insert(id.clone());
                        Ok(())
                    })?;
                    ledger::append(
                        &self.paths,
                        &Entry::new("deferred")
                            .task(&id)
                            .sha(task.sha256())
                            .commit(commit),
                    )?;
                    say(format!(
                        "deferred {id}; not prompted again until `rxnode review {id}`"
                    ));
                    return Ok(Decision::Deferred);
                }
                "s" | "stop" => {
                    ledger::append(
                        &self.paths,
                        &Entry::new("stopped")
                            .task(&id)
                            .sha(task.sha256())
                            .detail(serde_json::json!({"reason": "operator chose [S]"})),
                    )?;
                    say(format!(
                        "stopping the watcher; {id} stays pending and is shown at the next start"
                    ));
                    return Ok(Decision::Stop);
                }
                other => say(format!("unknown answer {other:?}: type A, D or S")),
            }
        }
    }

    fn show(&self, task: &ValidTask, commit: &str, blob: &str) {
        let h = task.header();
        let mut s = String::new();
        let src = if self.dry_run {
            "DRY RUN (local file)".to_owned()
        } else {
            format!("{}/{}:{}", self.remote, self.branch, self.task_path)
        };
        s.push_str(&format!("\n=== Task from {src} ===\n"));
        s.push_str(&format!("  ID:      {}\n", task.id()));
        s.push_str(&format!("  Title:   {}\n", h.task_title));
        s.push_str(&format!("  Risk:    {}", task.risk().as_str()));
        if task.risk() != task.derived_risk() {
            s.push_str(&format!(
                " (declared; derived {})",
                task.derived_risk().as_str()
            ));
        }
        s.push('\n');
        for r in task.risk_reasons() {
            s.push_str(&format!("           - {r}\n"));
        }
        if !commit.is_empty() {
            s.push_str(&format!("  Commit:  {commit} (blob {blob})\n"));
            s.push_str(&format!(
                "  Base:    {} (EXPECTED_HEAD, strict ancestor: yes)\n",
                h.expected_head
            ));
        } else {
            s.push_str(&format!(
                "  Base:    {} (EXPECTED_HEAD, not checked in dry run)\n",
                h.expected_head
            ));
        }
        s.push_str(&format!("  SHA-256: {}\n", task.sha256()));
        s.push_str("  Header:\n");
        for (line, k, v) in &h.lines {
            s.push_str(&format!("    {line:>3}  {k} = {v}\n"));
        }
        match task.plan() {
            Some(p) => {
                s.push_str(&format!("  Plan:    {} step(s)\n", p.steps.len()));
                for (i, st) in p.steps.iter().enumerate() {
                    let j = serde_json::to_string(st).unwrap_or_default();
                    s.push_str(&format!("    {}. {} {j}\n", i + 1, st.op()));
                }
            }
            None => s.push_str("  Plan:    none — manual task: approval prepares the outbox, nothing touches hardware\n"),
        }
        if task.risk() == RiskLevel::Red {
            s.push_str("  RED: approval is not authorization.\n");
            if let Some((kind, phrase)) = required_phrase(task) {
                let what = match kind {
                    AuthorizationKind::RfTx => "transmission",
                    _ => "this RED work",
                };
                s.push_str(&format!(
                    "       `rxnode run {}` will ask you to type exactly `{phrase}` before {what}.\n",
                    task.id()
                ));
            }
        }
        if let Some(note) = &self.io.queue_note {
            s.push_str(&format!("  Queue:   {note}\n"));
        }
        print!("{s}");
        let _ = std::io::stdout().flush();
    }

    fn approve(
        &mut self,
        task: &ValidTask,
        bytes: &[u8],
        commit: &str,
        blob: &str,
    ) -> Result<Decision> {
        let id = task.id().to_string();
        let approval = Approval::new(task, commit, &now_iso());
        let dir = match outbox::prepare(&self.paths, task, bytes, &approval, blob) {
            Ok(Prepared::Written(d)) => d,
            Ok(Prepared::AlreadyThere(d)) => {
                say(format!(
                    "outbox {} already holds exactly this task; left as it is",
                    d.display()
                ));
                d
            }
            Err(e)
                if e.chain()
                    .any(|c| c.downcast_ref::<crate::exit::Refused>().is_some()) =>
            {
                loud(format!(
                    "{e:#}; approval of {id} not recorded, it stays pending"
                ));
                ledger::append(
                    &self.paths,
                    &Entry::new("refused")
                        .task(&id)
                        .sha(task.sha256())
                        .commit(commit)
                        .detail(serde_json::json!({"reason": format!("{e:#}")})),
                )?;
                return Ok(Decision::Refused);
            }
            Err(e) => return Err(e),
        };
        // The audit line goes first: a crash between the two leaves the task
        // pending with its outbox in place (asked again, `AlreadyThere`), never
        // approved in state without an `approved` line in the ledger.
        ledger::append(
            &self.paths,
            &Entry::new("approved").task(&id).sha(task.sha256()).commit(commit).detail(serde_json::json!({"outbox": dir.strip_prefix(&self.paths.repo).unwrap_or(&dir).to_string_lossy()})),
        )?;
        state::update(&self.paths, |s| {
            s.approvals.insert(id.clone(), approval.clone());
            s.deferred_task_ids.remove(&id);
            if let Some(r) = s.tasks.get_mut(&id) {
                r.status = TaskStatus::Approved;
            }
            Ok(())
        })?;
        say(format!("approved {id}; outbox: {}", dir.display()));
        if let Some((_, phrase)) = required_phrase(task) {
            say(format!(
                "approval is not authorization: `rxnode run {id}` will ask for `{phrase}`"
            ));
        } else if task.plan().is_some() {
            say(format!("next: `rxnode run {id}`"));
        } else {
            say(format!(
                "manual task: do the work, fill in the outbox, then `rxnode mark-completed {id}`"
            ));
        }
        Ok(Decision::Approved)
    }

    /// Prompt for a known pending/deferred task from the commit recorded in state.
    pub fn reprompt(&mut self, id: &str) -> Result<Decision> {
        let st = state::load(&self.paths)?;
        let rec = st
            .tasks
            .get(id)
            .ok_or_else(|| bad_input(format!("task {id} is not known on this node")))?
            .clone();
        if !matches!(rec.status, TaskStatus::Pending | TaskStatus::Deferred) {
            return Err(bad_input(format!(
                "task {id} is {:?}; only pending or deferred tasks can be reviewed",
                rec.status
            )));
        }
        let repo = self.repo.context("no repository")?;
        let commit = Oid::from_str(&rec.commit).map_err(|_| {
            bad_input(format!(
                "task {id} has no usable commit in state ({:?})",
                rec.commit
            ))
        })?;
        let (bytes, blob) =
            match gitops::read_blob_at(repo, commit, &self.task_path, MAX_TASK_BYTES)? {
                Blob::Content { bytes, blob } => (bytes, blob),
                other => anyhow::bail!(
                    "task {id}: {} at {commit} is no longer readable ({other:?})",
                    self.task_path
                ),
            };
        if sha256_hex(&bytes) != rec.task_sha256 {
            return Err(crate::exit::refused(format!(
                "task {id}: the text at {commit} does not match the recorded SHA-256 {}",
                rec.task_sha256
            )));
        }
        let task = crate::validate::check(&bytes, &self.branch).map_err(|issues| {
            bad_input(format!(
                "task {id} no longer validates: {}",
                issues
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        })?;
        if !gitops::is_strict_ancestor(repo, &task.header().expected_head, commit)? {
            return Err(crate::exit::refused(format!(
                "task {id}: EXPECTED_HEAD is not a strict ancestor of {commit}"
            )));
        }
        self.prompt(&task, &bytes, &rec.commit, &blob)
    }
}

/// `watch` options.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// One poll cycle, then exit.
    pub once: bool,
    /// Seconds between polls (fractions allowed).
    pub interval: f64,
    /// The decision flow on a local file: no fetch, no radio, no commit, no push.
    pub dry_run: bool,
    /// The task file for --dry-run.
    pub task_file: Option<std::path::PathBuf>,
    /// Task versions examined per poll at most (the newest; older ones are
    /// reported as not examined).
    pub history_limit: usize,
}

/// The `watch` command.
pub fn cmd_watch(ctx: &Ctx, args: &WatchOptions) -> Result<Outcome> {
    if !(args.interval.is_finite() && args.interval > 0.0 && args.interval <= 86_400.0) {
        return Err(bad_input(format!(
            "--interval {}: must be a number of seconds in (0, 86400]",
            args.interval
        )));
    }
    let max = crate::watch::queue::MAX_HISTORY_LIMIT;
    if !(1..=max).contains(&args.history_limit) {
        return Err(bad_input(format!(
            "--history-limit {}: must be a number of task versions in 1..={max}",
            args.history_limit
        )));
    }
    if args.dry_run {
        return dry_run(ctx, args);
    }
    let paths = Paths::new(&ctx.repo);
    let repo = gitops::open(&ctx.repo)?;
    gitops::ensure_local_excluded(&repo)?;
    crate::store::trust::verify(&paths)?; // issue 13: nothing trusted that Git could supply
    state::load(&paths)?; // a corrupt state stops here, kept aside
    let acquired_at = std::time::SystemTime::now();
    let lock = Lock::acquire(&paths, "watch")?;
    if let Some(dead) = lock.took_over() {
        clear_stale_fetch_locks(&paths, &repo, &ctx.source, dead, acquired_at)?;
    }
    let mut io = Io::new()?;
    state::update(&paths, |s| {
        s.running = true;
        s.watcher_pid = Some(std::process::id());
        Ok(())
    })?;
    ledger::append(
        &paths,
        &Entry::new("watcher_started").detail(serde_json::json!({
            "pid": std::process::id(), "remote": ctx.source.remote,
            "branch": ctx.source.branch, "task_path": ctx.source.task_path,
            "interval_s": args.interval, "once": args.once,
        })),
    )?;
    let mut flow = Flow {
        paths: paths.clone(),
        repo: Some(&repo),
        branch: ctx.source.branch.clone(),
        remote: ctx.source.remote.clone(),
        task_path: ctx.source.task_path.clone(),
        io: &mut io,
        dry_run: false,
    };
    let result = run_loop(&mut flow, args);
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
    let _ = ledger::append(
        &paths,
        &Entry::new("watcher_stopped").detail(serde_json::json!({ "reason": why })),
    );
    drop(lock);
    fin?;
    if why == "signal" {
        say("stopped by signal; state saved, lock released");
    }
    result
}

/// Remove the Git lock files that a killed watcher's fetch left behind (a
/// SIGKILL or power loss mid-fetch leaves e.g. `.git/shallow.lock`, and every
/// later fetch fails on it). Called only when this watcher took the
/// single-watcher lock over from `dead`, a dead rxnode on this host. Only the
/// files our own fetch creates ([`gitops::fetch_lock_files`]) are candidates,
/// and one is removed only when it was last modified before this watcher
/// started taking its lock, no process on this host has it open (Linux), and it
/// is unchanged a moment later — a live `git fetch` of the operator's holds its
/// ref locks for milliseconds and moves or drops them. Each removal is said on
/// stderr and in the ledger (`git_lock_removed`). See docs/reliability.md.
fn clear_stale_fetch_locks(
    paths: &Paths,
    repo: &Repository,
    cfg: &crate::context::TaskSource,
    dead: &crate::store::lock::Holder,
    started: std::time::SystemTime,
) -> Result<()> {
    let seen = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.file_type().is_file())
            .and_then(|m| Some((m.modified().ok()?, m.len())))
    };
    let candidates: Vec<_> = gitops::fetch_lock_files(repo, &cfg.remote, &cfg.branch)
        .into_iter()
        .filter_map(|p| seen(&p).map(|s| (p, s)))
        .filter(|(_, (mtime, _))| *mtime < started)
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    std::thread::sleep(Duration::from_millis(300));
    for (p, first) in candidates {
        if seen(&p) != Some(first) || open_by_a_process(&p) {
            continue; // somebody is at work on it: leave it (the fetch error names it)
        }
        let modified = time::OffsetDateTime::from(first.0)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        loud(format!(
            "warning: removing stale Git lock {} (modified {modified}, before this watcher \
             started; not open by any process) left by the killed {dead}",
            p.display()
        ));
        ledger::append(
            paths,
            &Entry::new("git_lock_removed").detail(serde_json::json!({
                "path": p.display().to_string(),
                "modified": modified,
                "previous_holder": dead,
            })),
        )?;
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("cannot remove stale {}", p.display()))
            }
        }
    }
    Ok(())
}

/// Whether a process on this host has `p` open (libgit2 keeps a lock file open
/// while it writes it). Linux only (`/proc`); elsewhere, and for processes we
/// may not inspect, it answers `false`, leaving the other checks.
fn open_by_a_process(p: &std::path::Path) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(target) = std::fs::canonicalize(p) else {
        return false;
    };
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|proc_| {
        std::fs::read_dir(proc_.path().join("fd")).is_ok_and(|fds| {
            fds.flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == target))
        })
    })
}

/// What `cycle` carries from one poll to the next.
#[derive(Default)]
struct LoopState {
    /// The hold message was shown (and not yet the release).
    held_said: bool,
    /// Tasks left pending by an earlier run have been shown.
    pending_shown: bool,
}

fn run_loop(flow: &mut Flow<'_>, args: &WatchOptions) -> Result<Outcome> {
    let interval = Duration::from_secs_f64(args.interval);
    let limit = args.history_limit;
    let mut failures: u32 = 0;
    let mut ls = LoopState::default();
    loop {
        if flow.io.stopping() {
            return Ok(Outcome::Done);
        }
        let outcome = cycle(flow, &mut ls, limit);
        let wait = match outcome {
            Ok(end) => {
                failures = 0;
                if args.once {
                    if let Some(p) = state::load(&flow.paths)?.last_poll {
                        say(format!("poll: {}", p.result));
                    }
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
                loud(format!(
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
/// (`Ok(Some(true))`); `[D]` and `[A]` move on to the next.
fn prompt_queue(flow: &mut Flow<'_>, ids: &[String], earlier: usize) -> Result<Option<bool>> {
    let n = ids.len();
    for (i, id) in ids.iter().enumerate() {
        if flow.paths.stop().exists() {
            return Ok(None);
        }
        let st = state::load(&flow.paths)?;
        if st.tasks.get(id).map(|r| r.status) != Some(TaskStatus::Pending) {
            continue; // decided meanwhile (another command) or withdrawn
        }
        if i < earlier {
            say(format!("task {id} is still pending from an earlier run"));
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
            say(format!("queue: task {id} is {note}"));
        }
        flow.io.set_queue_note(Some(note));
        let r = flow.reprompt(id);
        flow.io.set_queue_note(None);
        match r {
            Ok(d) if d.ends_watcher() => {
                if more > 0 {
                    say(format!(
                        "{more} more task(s) stay pending in the queue and are shown at the next start"
                    ));
                }
                return Ok(Some(true));
            }
            Ok(_) => {}
            Err(e) => loud(format!("cannot show pending task {id}: {e:#}")),
        }
        if flow.io.stopping() {
            return Ok(Some(true));
        }
    }
    Ok(Some(false))
}

/// One poll. `Ok(true)` ends the watcher; `Err` is a fetch/git failure.
///
/// The `.local/STOP` hold is checked first: while it exists nothing is
/// fetched and nothing is prompted, not even tasks pending from an earlier run.
/// Then: fetch; when the tip moved, examine the history since the marker
/// (`queue::examine_history`); then prompt, in commit order, the tasks left
/// pending by an earlier run (first poll only) and every task this poll queued.
fn cycle(flow: &mut Flow<'_>, ls: &mut LoopState, limit: usize) -> Result<bool> {
    let held_said = &mut ls.held_said;
    if flow.paths.stop().exists() {
        if !*held_said {
            *held_said = true;
            say(format!(
                "held: {} exists — fetching nothing, prompting nothing until it is removed",
                flow.paths.stop().display()
            ));
            ledger::append(&flow.paths, &Entry::new("held"))?;
        }
        flow.record_poll("held by .local/STOP", true)?;
        return Ok(false);
    }
    if *held_said {
        *held_said = false;
        say("hold released (.local/STOP removed); polling again");
        ledger::append(&flow.paths, &Entry::new("hold_released"))?;
    }
    let repo = flow.repo.context("no repository")?;
    let fetched = gitops::fetch(repo, &flow.remote, &flow.branch, flow.io.flag());
    let oid = match fetched {
        Ok(o) => o,
        // A Ctrl-C/SIGTERM cancels the transfer: the watcher is stopping, and
        // that is not a fetch failure (no `fetch_failed`, no failed last poll).
        Err(_) if flow.io.stopping() => return Ok(true),
        Err(e) => {
            let msg = format!("fetch failed: {e:#}");
            // One ledger line per distinct failure (not one per back-off retry).
            let prev = state::load(&flow.paths)?.last_poll;
            if prev.is_none_or(|p| p.ok || p.result != msg) {
                ledger::append(
                    &flow.paths,
                    &Entry::new("fetch_failed").detail(serde_json::json!({
                        "remote": flow.remote, "branch": flow.branch, "error": format!("{e:#}"),
                    })),
                )?;
            }
            flow.record_poll(&msg, false)?;
            // Tasks already known are shown even while the remote is unreachable.
            if !ls.pending_shown {
                let earlier = crate::watch::queue::pending_in_order(&state::load(&flow.paths)?);
                match prompt_queue(flow, &earlier, earlier.len())? {
                    Some(true) => return Ok(true),
                    Some(false) => ls.pending_shown = true,
                    None => {}
                }
            }
            return Err(e);
        }
    };
    if state::load(&flow.paths)?
        .last_poll
        .is_some_and(|p| !p.ok && p.result.starts_with("fetch failed"))
    {
        ledger::append(
            &flow.paths,
            &Entry::new("fetch_recovered")
                .commit(&oid.to_string())
                .detail(serde_json::json!({"remote": flow.remote, "branch": flow.branch})),
        )?;
    }
    crate::store::trust::check_watched_tip(&flow.paths, repo, oid, &flow.remote, &flow.branch)?;
    let earlier = if ls.pending_shown {
        Vec::new()
    } else {
        crate::watch::queue::pending_in_order(&state::load(&flow.paths)?)
    };
    let marker = state::load(&flow.paths)?.remote_marker;
    let queued = if marker.as_deref() == Some(oid.to_string().as_str()) {
        tracing::info!("poll: nothing new at {oid}");
        flow.record_poll("nothing new", true)?;
        Vec::new()
    } else {
        let q = crate::watch::queue::examine_history(flow, repo, oid, limit)?;
        flow.record_poll(
            &format!(
                "examined {oid}; {} new task(s) queued{}",
                q.len(),
                if q.is_empty() {
                    ", nothing to prompt"
                } else {
                    ""
                }
            ),
            true,
        )?;
        q
    };
    let mut ids = earlier.clone();
    for id in queued {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        ls.pending_shown = true;
        return Ok(false);
    }
    let end = prompt_queue(flow, &ids, earlier.len())?;
    // A hold that appeared between two prompts: everything still pending is
    // shown (in queue order) after it is released.
    ls.pending_shown = end.is_some();
    if flow.io.stopping() {
        return Ok(true);
    }
    Ok(end == Some(true))
}

fn dry_run(ctx: &Ctx, args: &WatchOptions) -> Result<Outcome> {
    let file = args
        .task_file
        .as_deref()
        .ok_or_else(|| bad_input("--dry-run needs --task-file FILE"))?;
    let real = Paths::new(&ctx.repo);
    let paths = Paths {
        repo: ctx.repo.clone(),
        local: real.dry_run(),
    };
    // Keep `git status` clean when run inside a checkout; no repository is needed.
    if let Ok(repo) = Repository::open(&ctx.repo) {
        let _ = gitops::ensure_local_excluded(&repo);
    }
    say(format!(
        "dry run: no fetch, no radio, no commit, no push; writing only under {}",
        paths.local.display()
    ));
    let bytes = crate::validate::read_task_file(file)?;
    let mut io = Io::new()?;
    let mut flow = Flow {
        paths: paths.clone(),
        repo: None,
        branch: ctx.source.branch.clone(),
        remote: ctx.source.remote.clone(),
        task_path: file.display().to_string(),
        io: &mut io,
        dry_run: true,
    };
    if let Err(issues) = crate::validate::check(&bytes, &flow.branch) {
        // Report every problem the way `validate` does, and record it in the dry-run area.
        for i in &issues {
            eprintln!("{}: {i}", file.display());
        }
        flow.examine(&bytes, None, "")?;
        return Err(bad_input(format!(
            "{}: invalid task ({} error(s))",
            file.display(),
            issues.len()
        )));
    }
    let d = flow.examine(&bytes, None, "")?;
    if d.is_none() {
        say("dry run: already decided in the dry-run area (see its state); nothing prompted");
    }
    say(format!(
        "dry run finished; state, ledger and outbox are under {}",
        paths.local.display()
    ));
    Ok(Outcome::Done)
}
