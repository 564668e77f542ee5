//! The checks of one task version: header and plan, a known ID with a
//! changed text, `EXPECTED_HEAD` ancestry; refusals recorded once per text.
use super::{task_line, Decision, Flow, Found, Verdict};
use crate::git::ops;
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Refusal};
use crate::store::state::{self, PollRecord, RejectedText, TaskRecord, TaskStatus};
use anyhow::Result;
use git2::Oid;
use rxnode_interlock::{lenient_task_id, same_folder, sha256_hex, Issue, ValidTask};

impl Flow<'_> {
    pub(super) fn record_poll(&mut self, result: &str, ok: bool) -> Result<()> {
        state::update(&self.paths, |s| {
            s.last_poll = Some(PollRecord {
                at: now_iso(),
                result: result.to_owned(),
                ok,
            });
            Ok(())
        })?;
        self.polled = Some(result.to_owned());
        Ok(())
    }

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

    /// Reject a text that has no usable ID, or changed under a known ID: once per text.
    /// Returns whether this was new (reported now).
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
            let (key_, reason_) = (Some(key.to_owned()), reason.to_owned());
            let ev = if event == "refused" {
                Event::Refused(Refusal {
                    key: key_,
                    reason: reason_,
                    ..Refusal::default()
                })
            } else {
                Event::Rejected {
                    key: key_,
                    reason: reason_,
                }
            };
            let mut e = Entry::new(ev).commit(commit);
            if let Some(id) = id {
                e = e.task(id);
            }
            if !key.starts_with("blob:") {
                e = e.sha(key);
            }
            ledger::append(&self.paths, &e)?;
            self.loud(reason);
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
            &Entry::new(Event::Rejected {
                key: None,
                reason: reason.to_owned(),
            })
            .task(id)
            .sha(sha)
            .commit(commit),
        )?;
        self.loud(format!("task {id} rejected: {reason}"));
        Ok(())
    }

    /// Check task bytes found at `commit` (`None` in dry-run) and prompt when new.
    /// Returns the decision, or `None` when nothing was prompted.
    pub(crate) fn examine(
        &mut self,
        bytes: &[u8],
        commit: Option<Oid>,
        blob: &str,
    ) -> Result<Option<Decision>> {
        let commit_s = commit.map(|c| c.to_string()).unwrap_or_default();
        match self.check_version(bytes, commit)? {
            Verdict::New(task) | Verdict::PendingTask(task) => {
                let d = self.prompt(&Found {
                    task: &task,
                    bytes,
                    commit: &commit_s,
                    blob,
                })?;
                Ok(Some(d))
            }
            Verdict::Pending(_)
            | Verdict::Duplicate { .. }
            | Verdict::Refused { .. }
            | Verdict::NotForThisNode => Ok(None),
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
            Err(issues) => return self.refuse_invalid(bytes, &issues, &sha, &commit_s),
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
                    "task {id} already seen ({}); not prompted again",
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
        } else if let Some(other) = st.tasks.keys().find(|k| same_folder(k, &id)) {
            return self.refuse_case_twin(&id, other, &sha, &commit_s);
        }
        if let Some(why) = not_for_this_node(&self.paths.repo, &task) {
            self.record_not_for_us(&task, &commit_s, &why)?;
            return Ok(Verdict::NotForThisNode);
        }
        if let Some(refused) = self.check_ancestry(&task, &sha, commit)? {
            return Ok(refused);
        }
        if let Some(refused) = self.check_signature(&task, &sha, commit)? {
            return Ok(refused);
        }
        Ok(if pending {
            Verdict::PendingTask(Box::new(task))
        } else {
            Verdict::New(Box::new(task))
        })
    }

    /// A task whose `TARGET_NODES` leaves this node out: recorded in state and
    /// the ledger (`not_for_this_node`), said once, never prompted.
    pub(super) fn record_not_for_us(
        &self,
        task: &ValidTask,
        commit: &str,
        why: &str,
    ) -> Result<()> {
        let id = task.id().to_string();
        state::update(&self.paths, |s| {
            s.tasks.insert(
                id.clone(),
                TaskRecord {
                    status: TaskStatus::NotForThisNode,
                    task_sha256: task.sha256().to_owned(),
                    commit: commit.to_owned(),
                    risk_level: Some(task.risk().as_str().to_owned()),
                    title: Some(task.header().task_title.clone()),
                    first_seen: now_iso(),
                    reason: Some(why.to_owned()),
                },
            );
            Ok(())
        })?;
        ledger::append(
            &self.paths,
            &task_line(
                Event::NotForThisNode {
                    reason: why.to_owned(),
                    target_nodes: task.header().target_nodes.clone(),
                },
                task,
                commit,
            ),
        )?;
        self.say(format!("task {id}: {why}; not prompted"));
        Ok(())
    }

    /// An invalid text: refused under the ID its header names, if usable (a
    /// known ID with the same text was reported before), else once per text.
    fn refuse_invalid(
        &self,
        bytes: &[u8],
        issues: &[Issue],
        sha: &str,
        commit_s: &str,
    ) -> Result<Verdict> {
        let list = crate::validate::issue_list(issues);
        let id = lenient_task_id(bytes).map(|t| t.to_string());
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
                return self.refuse_changed(id, rec, sha, commit_s);
            }
            let reason = format!("invalid task file: {list}");
            self.reject_task(id, sha, commit_s, None, &reason)?;
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
                commit_s
            },
            list
        );
        let new = self.reject_text("rejected", sha, None, commit_s, &reason)?;
        Ok(Verdict::Refused {
            id: None,
            reason,
            written: new.then_some("rejected"),
        })
    }

    /// `EXPECTED_HEAD` must be a strict ancestor of the task commit (skipped,
    /// and said, in a dry run): `Some` refusal, recorded, when it is not.
    fn check_ancestry(
        &self,
        task: &ValidTask,
        sha: &str,
        commit: Option<Oid>,
    ) -> Result<Option<Verdict>> {
        let (Some(repo), Some(c)) = (self.repo, commit) else {
            self.say("dry run: ancestry check of EXPECTED_HEAD skipped (no fetch, no remote)");
            return Ok(None);
        };
        let base = &task.header().expected_head;
        if ops::is_strict_ancestor(repo, base, c)? {
            return Ok(None);
        }
        let reason = ops::not_an_ancestor_reason(repo, base, c);
        self.reject_at(task, sha, c, reason).map(Some)
    }

    /// Reject the valid `task` found at commit `c` for `reason`: recorded in the
    /// state and the ledger (`rejected`), and its verdict.
    fn reject_at(&self, task: &ValidTask, sha: &str, c: Oid, reason: String) -> Result<Verdict> {
        let id = task.id().to_string();
        self.reject_task(
            &id,
            sha,
            &c.to_string(),
            Some(task.header().task_title.clone()),
            &reason,
        )?;
        Ok(Verdict::Refused {
            id: Some(id),
            reason,
            written: Some("rejected"),
        })
    }

    /// The signature of `commit` (the commit that last changed the task file)
    /// against `tasks.require_signature` (docs/safety.md#who-wrote-it): `Some`
    /// refusal, recorded, when the rule applies and it is not a good signature
    /// by an allowed signer. Nothing is checked in a dry run (no commit).
    pub(super) fn check_signature(
        &self,
        task: &ValidTask,
        sha: &str,
        commit: Option<Oid>,
    ) -> Result<Option<Verdict>> {
        let (Some(repo), Some(c)) = (self.repo, commit) else {
            return Ok(None);
        };
        let Some(reason) = self.signature_refusal(task, repo, c)?.1 else {
            return Ok(None);
        };
        self.reject_at(task, sha, c, reason).map(Some)
    }

    /// The signature of `commit` and, when the node's rule refuses it, why.
    /// Under the rule `none` a signature that cannot be checked (an unreadable
    /// allowed-signers file) is shown as such; under a rule that applies, it is
    /// an error (the poll fails and is tried again), never an acceptance.
    pub(super) fn signature_refusal(
        &self,
        task: &ValidTask,
        repo: &git2::Repository,
        commit: Oid,
    ) -> Result<(
        std::result::Result<crate::signers::Checked, String>,
        Option<String>,
    )> {
        let rule = crate::store::policy::load(&self.paths)?
            .0
            .require_signature();
        let applies = rule.applies_to(task.risk());
        match crate::signers::check(&self.paths, repo, commit, &self.task_path) {
            Ok(checked) => {
                let why = checked.refusal(rule, task.risk());
                Ok((Ok(checked), why))
            }
            Err(e) if applies => Err(e),
            Err(e) => Ok((Err(format!("{e:#}")), None)),
        }
    }

    /// Reject a task that was queued (pending) and fails a check made again at
    /// its prompt: recorded like a rejection at examination.
    pub(super) fn reject_queued(&self, task: &ValidTask, commit: &str, reason: &str) -> Result<()> {
        self.reject_task(
            task.id().as_str(),
            task.sha256(),
            commit,
            Some(task.header().task_title.clone()),
            reason,
        )?;
        state::update(&self.paths, |s| {
            s.queue.order.retain(|i| i != task.id().as_str());
            Ok(())
        })
    }

    /// A new ID that only the letter case tells from a known one: on a
    /// case-insensitive file system (Windows, macOS) both name one outbox, one
    /// `rx_iq/` folder and one `rx-results/` folder.
    fn refuse_case_twin(&self, id: &str, known: &str, sha: &str, commit: &str) -> Result<Verdict> {
        let reason = format!(
            "REFUSED: task {id} differs from the known task {known} only in letter case: on a case-insensitive \
             file system (Windows, macOS) both would use one folder (.local/rx_agent_outbox/{known}/, \
             .local/rx_iq/{known}/, rx-results/{known}/), so one task's results could overwrite or pass for the \
             other's; post it under a TASK_ID that differs by more than letter case — not prompted"
        );
        let new = self.reject_text("refused", sha, Some(id), commit, &reason)?;
        Ok(Verdict::Refused {
            id: Some(id.to_owned()),
            reason,
            written: new.then_some("refused"),
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
            "REFUSED: task {id} is already known ({}) with text SHA-256 {}, but the file now has a different text (SHA-256 {sha}); a revised task needs a new TASK_ID — not prompted",
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
            ledger::append(&self.paths, &task_line(Event::Detected, task, commit))?;
        }
        Ok(is_new)
    }
}

/// Why `task` is not for this node (`None`: it is): its `TARGET_NODES` does not
/// list the name `rxnode node set-name` gave this checkout, or this node has no
/// usable name. Absent `TARGET_NODES` = every node.
pub(crate) fn not_for_this_node(repo: &std::path::Path, task: &ValidTask) -> Option<String> {
    let targets = task.header().target_nodes.as_ref()?;
    let list = targets.join(", ");
    match crate::store::node::load_name(&crate::store::paths::Paths::new(repo)) {
        Ok(Some(me)) if targets.contains(&me) => None,
        Ok(Some(me)) => Some(format!(
            "not for this node: TARGET_NODES = {list}; this node is {me}"
        )),
        Ok(None) => Some(format!(
            "not for this node: TARGET_NODES = {list}, and this node has no name (`rxnode node set-name NAME`)"
        )),
        Err(e) => Some(format!(
            "not for this node: TARGET_NODES = {list}, and this node's name cannot be read ({e:#})"
        )),
    }
}
