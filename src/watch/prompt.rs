//! The prompt: show a task, ask `[A]`/`[D]`/`[S]`, record the answer, and
//! prepare the outbox on approval.
use super::io::Answer;
use super::{task_line, Decision, Flow, Found};
use crate::describe::{self, escaped};
use crate::exit::bad_input;
use crate::git::ops::{self, Blob};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Refusal};
use crate::store::outbox::{self, Prepared};
use crate::store::policy::Source;
use crate::store::state::{self, TaskStatus};
use anyhow::{Context, Result};
use git2::Oid;
use rxnode_interlock::{
    required_phrase, sha256_hex, AuthorizationKind, RiskLevel, ValidTask, MAX_TASK_BYTES,
};

/// The watcher's menu.
pub(crate) const WATCH_MENU: &str = "[A] Approve  [D] Defer  [S] Stop watcher";
/// `rxnode review`'s menu: `[S]` leaves the task undecided and ends the review.
pub(crate) const REVIEW_MENU: &str = "[A] Approve  [D] Defer  [S] Stop review";

impl Flow<'_> {
    /// Record the task as pending, show it, and ask.
    pub(crate) fn prompt(&mut self, found: &Found<'_>) -> Result<Decision> {
        let Found { task, commit, .. } = *found;
        let id = task.id().to_string();
        // Checked again here: the node may have been renamed since the task was queued.
        if let Some(why) = super::not_for_this_node(&self.paths.repo, task) {
            self.record_not_for_us(task, commit, &why)?;
            return Ok(Decision::NotForThisNode);
        }
        let (sig_line, signature) = match self.repo.zip(Oid::from_str(commit).ok()) {
            Some((repo, c)) => {
                // Checked again at the prompt: the signers or the policy may have
                // changed since the task was queued.
                let (checked, why) = self.signature_refusal(task, repo, c)?;
                if let Some(why) = why {
                    self.reject_queued(task, commit, &why)?;
                    return Ok(Decision::Rejected);
                }
                match checked {
                    Ok(c) => (c.line(), Some(c)),
                    Err(e) => (format!("Signature: cannot be checked ({e})"), None),
                }
            }
            None => (
                "Unsigned (a local file in a dry run: no commit to verify)".to_owned(),
                None,
            ),
        };
        self.record_pending(task, commit)?;
        // What is left when the prompt ends without a decision: a task `review`
        // shows again may be deferred, and stays so (a watcher never shows it again).
        let left = match state::load(&self.paths)?.tasks.get(&id).map(|r| r.status) {
            Some(TaskStatus::Deferred) => format!(
                "{id} stays deferred: a watcher does not show it again; `rxnode review {id}` decides it"
            ),
            _ => format!("{id} stays pending and is shown at the next start"),
        };
        self.show(found, &sig_line)?;
        ledger::append(&self.paths, &task_line(Event::Prompted, task, commit))?;
        // `[S]` ends what asked: the watcher, or a review (which has no watcher to stop).
        let (menu, stopping) = if self.review {
            (REVIEW_MENU, "stopping the review")
        } else {
            (WATCH_MENU, "stopping the watcher")
        };
        loop {
            self.say(menu);
            // Under `--json` stdout carries JSON lines only: the `> ` for a person at a
            // terminal goes to stderr, and a program answering on a pipe gets none.
            let (prompt, to) = if !self.shell.json() {
                ("> ", crate::term::To::Stdout)
            } else if crate::term::stdin_is_terminal() {
                ("> ", crate::term::To::Stderr)
            } else {
                ("", crate::term::To::Stderr)
            };
            let line = match self.io.ask(prompt, to) {
                Answer::Line(l) => {
                    if !crate::term::stdin_is_terminal() && !self.shell.json() {
                        self.say(&l); // keep a piped transcript readable
                    }
                    l
                }
                Answer::Eof => {
                    self.say("");
                    self.say(format!("end of input: stopping without a decision; {left}"));
                    self.stopped(task, "end of input at the prompt")?;
                    return Ok(Decision::Eof);
                }
                Answer::Unreadable(why) => {
                    self.say("");
                    self.say(format!("cannot read an answer from stdin ({why}): stopping without a decision; {left}"));
                    self.stopped(task, &format!("no answer readable at the prompt: {why}"))?;
                    return Ok(Decision::Eof);
                }
                Answer::Signal => {
                    self.say("");
                    self.say(format!("signal: stopping without a decision; {left}"));
                    self.stopped(task, "signal at the prompt")?;
                    return Ok(Decision::Signal);
                }
            };
            match line.trim().to_ascii_lowercase().as_str() {
                "a" | "approve" => return self.approve(found, signature.as_ref()),
                "d" | "defer" => return self.defer(task, commit),
                "s" | "stop" => {
                    self.stopped(task, "operator chose [S]")?;
                    self.say(format!("{stopping}; {left}"));
                    return Ok(Decision::Stop);
                }
                other => self.say(format!("unknown answer {other:?}: type A, D or S")),
            }
        }
    }

    /// The prompt ended without a decision: a `stopped` line saying why.
    fn stopped(&self, task: &ValidTask, reason: &str) -> Result<()> {
        ledger::append(
            &self.paths,
            &Entry::new(Event::Stopped {
                reason: reason.to_owned(),
            })
            .task(task.id().as_str())
            .sha(task.sha256()),
        )
    }

    /// `[D]`: deferred in state and the ledger, not prompted again until `review`.
    fn defer(&self, task: &ValidTask, commit: &str) -> Result<Decision> {
        let id = task.id().to_string();
        state::update(&self.paths, |s| {
            if let Some(r) = s.tasks.get_mut(&id) {
                r.status = TaskStatus::Deferred;
            }
            s.deferred_task_ids.insert(id.clone());
            Ok(())
        })?;
        ledger::append(&self.paths, &task_line(Event::Deferred, task, commit))?;
        if self.dry_run {
            // `review` reads the node's own state, where a dry run records nothing.
            self.say(format!(
                "dry run: deferred {id} only under {} (the dry-run area); not rehearsed again until \
                 you remove that folder (`rxnode review {id}` reads the node's own state and does not know it)",
                self.paths.local.display()
            ));
        } else {
            self.say(format!(
                "deferred {id}; not prompted again until `rxnode review {id}`"
            ));
        }
        Ok(Decision::Deferred)
    }

    fn show(&self, found: &Found<'_>, signature: &str) -> std::io::Result<()> {
        let Found {
            task, commit, blob, ..
        } = *found;
        let h = task.header();
        let mut s = String::new();
        let src = if self.dry_run {
            "DRY RUN (local file)".to_owned()
        } else {
            format!("{}/{}:{}", self.remote, self.branch, self.task_path)
        };
        s.push_str(&format!("\n=== Task from {src} ===\n"));
        s.push_str(&format!("  ID:      {}\n", task.id()));
        s.push_str(&format!("  Title:   {}\n", escaped(&h.task_title)));
        s.push_str(&format!("  Risk:    {}", task.risk().as_str()));
        if task.risk() != task.derived_risk() {
            s.push_str(&format!(
                " (declared; derived {})",
                task.derived_risk().as_str()
            ));
        }
        s.push('\n');
        for r in task.risk_reasons() {
            s.push_str(&format!("           - {}\n", escaped(r)));
        }
        if let Some(t) = &h.target_nodes {
            // (Only a listed node gets here: see `not_for_this_node`.)
            s.push_str(&format!(
                "  Nodes:   {} (TARGET_NODES; this node is one of them)\n",
                t.join(", ")
            ));
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
        s.push_str(&format!("  {}\n", escaped(signature)));
        s.push_str("  Header:\n");
        for (line, k, v) in &h.lines {
            s.push_str(&format!("    {line:>3}  {} = {}\n", escaped(k), escaped(v)));
        }
        self.show_body(&mut s, task, commit);
        self.show_plan(&mut s, task);
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
        if self.shell.json() {
            let id = task.id().to_string();
            let card = super::Said::Prompt {
                task_id: &id,
                text: s.trim_start_matches('\n'),
            };
            return self.shell.out_plain(&card.line());
        }
        self.shell.out(&s)
    }

    /// The Markdown body, escaped and wrapped, cut at 40 lines with where the rest is.
    fn show_body(&self, s: &mut String, task: &ValidTask, commit: &str) {
        let v = describe::body_view(task.body());
        if v.total == 0 {
            s.push_str("  Body:    (empty)\n");
            return;
        }
        s.push_str(&format!(
            "  Body:    {} line(s); control and invisible characters shown as \\u{{…}}\n",
            v.total
        ));
        for l in &v.lines {
            s.push_str(&format!("    | {l}\n"));
        }
        if v.more > 0 {
            let whole = if commit.is_empty() {
                format!("the whole file: {}", escaped(&self.task_path))
            } else {
                format!(
                    "the whole text: git show {commit}:{}",
                    escaped(&self.task_path)
                )
            };
            s.push_str(&format!(
                "    … {} more line(s) not shown; {whole}\n",
                v.more
            ));
        }
    }

    /// Each plan step in plain units, with this node's policy verdict.
    fn show_plan(&self, s: &mut String, task: &ValidTask) {
        let Some(p) = task.plan() else {
            s.push_str("  Plan:    none — manual task: approval prepares the outbox, nothing touches hardware\n");
            return;
        };
        // The node's own policy, as `rxnode run` will load it (the real checkout's,
        // also in a dry run).
        let policy = match crate::store::policy::load(&self.paths) {
            Ok((pol, src)) => {
                match src {
                    Source::File => s.push_str(&format!(
                        "  Policy:  {}\n",
                        escaped(&self.paths.policy().display().to_string())
                    )),
                    Source::Defaults => s.push_str(
                        "  Policy:  no policy file: defaults (RX up to 60 s, 4 GiB IQ; TX refused)\n",
                    ),
                }
                Some(pol)
            }
            Err(e) => {
                s.push_str(&format!(
                    "  Policy:  cannot be used ({}): `rxnode run` would refuse to start\n",
                    escaped(&format!("{e:#}"))
                ));
                None
            }
        };
        s.push_str(&format!(
            "  Plan:    {} step(s), each with this node's policy verdict\n",
            p.steps.len()
        ));
        for l in describe::plan_lines(p, policy.as_ref(), "    ") {
            s.push_str(&l);
            s.push('\n');
        }
    }

    fn approve(
        &mut self,
        found: &Found<'_>,
        signature: Option<&crate::signers::Checked>,
    ) -> Result<Decision> {
        let Found {
            task,
            bytes,
            commit,
            blob,
        } = *found;
        let id = task.id().to_string();
        let approval = crate::store::key::sign_approval(&self.paths, task, commit, &now_iso())?;
        let sig_record = signature.map(crate::signers::Checked::record);
        let skeleton = |d: &std::path::Path| {
            crate::result::write_skeleton(
                &self.paths,
                d,
                task,
                commit,
                &approval,
                sig_record.as_ref(),
            )
        };
        let dir = match outbox::prepare(&self.paths, task, bytes, &approval, blob, &skeleton) {
            Ok(Prepared::Written(d)) => d,
            Ok(Prepared::AlreadyThere(d)) => {
                self.say(format!(
                    "outbox {} already holds exactly this task; left as it is",
                    d.display()
                ));
                d
            }
            Err(e)
                if e.chain()
                    .any(|c| c.downcast_ref::<crate::exit::Refused>().is_some()) =>
            {
                self.loud(format!(
                    "{e:#}; approval of {id} not recorded, it stays pending"
                ));
                ledger::append(
                    &self.paths,
                    &task_line(Refusal::version(format!("{e:#}")), task, commit),
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
            &task_line(
                Event::Approved {
                    outbox: dir
                        .strip_prefix(&self.paths.repo)
                        .unwrap_or(&dir)
                        .to_string_lossy()
                        .into_owned(),
                    signature: serde_json::to_value(&sig_record).unwrap_or_default(),
                },
                task,
                commit,
            )
            .approval(&approval),
        )?;
        state::update(&self.paths, |s| {
            s.approvals.insert(id.clone(), approval.clone());
            s.deferred_task_ids.remove(&id);
            if let Some(r) = s.tasks.get_mut(&id) {
                r.status = TaskStatus::Approved;
            }
            Ok(())
        })?;
        self.say(format!("approved {id}; outbox: {}", dir.display()));
        if self.dry_run {
            // Nothing here is the node's own state: `run` would not know the task.
            self.say(format!(
                "dry run: this approval is recorded only under {} (the dry-run area) and runs nothing; \
                 `rxnode run {id}` does not know it. For real: commit and push the task to the watched branch, \
                 approve it in `rxnode watch`, then `rxnode run {id}`",
                self.paths.local.display()
            ));
        } else if let Some((_, phrase)) = required_phrase(task) {
            self.say(format!(
                "approval is not authorization: `rxnode run {id}` will ask for `{phrase}`"
            ));
        } else if task.plan().is_some() {
            self.say(format!("next: `rxnode run {id}`"));
        } else {
            self.say(format!(
                "manual task: do the work, then `rxnode mark-completed {id} --status PASS|FAIL|PARTIAL|SKIP --note TEXT`"
            ));
        }
        Ok(Decision::Approved)
    }

    /// Prompt for a known pending/deferred task from the commit recorded in state.
    pub(crate) fn reprompt(&mut self, id: &str) -> Result<Decision> {
        let st = state::load(&self.paths)?;
        let rec = st
            .tasks
            .get(id)
            .ok_or_else(|| {
                bad_input(format!(
                    "task {id} is not known on this node{}",
                    st.other_case_hint(id)
                ))
            })?
            .clone();
        if !matches!(rec.status, TaskStatus::Pending | TaskStatus::Deferred) {
            return Err(bad_input(format!(
                "task {id} is {}; only pending or deferred tasks can be reviewed",
                rec.status
            )));
        }
        let repo = self.repo.context("no repository")?;
        let commit = Oid::from_str(&rec.commit).map_err(|_| {
            bad_input(format!(
                "task {id} has no usable commit in state ({:?}) — fix: `rxnode state rebuild`",
                rec.commit
            ))
        })?;
        let (bytes, blob) = match ops::read_blob_at(repo, commit, &self.task_path, MAX_TASK_BYTES)?
        {
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
                crate::validate::issue_list(&issues)
            ))
        })?;
        let base = &task.header().expected_head;
        if !ops::is_strict_ancestor(repo, base, commit)? {
            return Err(crate::exit::refused(format!(
                "task {id}: {}",
                ops::not_an_ancestor_reason(repo, base, commit)
            )));
        }
        self.prompt(&Found {
            task: &task,
            bytes: &bytes,
            commit: &rec.commit,
            blob: &blob,
        })
    }
}
