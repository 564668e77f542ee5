//! `rxnode publish <TASK_ID> [--push]`: the confirmed publication of one
//! result to `refs/heads/rx-node`, or to this node's own
//! `refs/heads/rx-results/<NODE>` when the operator chose that layout
//! (docs/publishing.md#one-ref-per-node).
//!
//! The commit is built from blobs and trees with git2, never through the
//! index or the work tree; HEAD and the current branch are not touched. The
//! push refspec comes only from [`rx_node_refspec`] or [`own_results_refspec`].
//!
//! This file is the command's flow; [`prepare`] reads and checks the outbox
//! into a [`prepared::Prepared`] result, [`checks`] holds the content checks and
//! the push gate, [`tree`] the Git plumbing (base, trees, commit, ref) and
//! [`push`] the push with its retries ([`local`]: to a repository on this machine),
//! [`resume`] a publication begun earlier.
mod checks;
mod local;
pub(crate) mod log_meta;
mod prepare;
mod prepared;
mod push;
mod resume;
mod tree;

pub(crate) use tree::delta_path;

use crate::git::refspec::{own_results_refspec, rx_node_refspec, PushRefspec};
use crate::result::{RESULT_JSON as JSON, RESULT_MD as MD};
use crate::store::node::PublishRef;
use checks::check_log_meta;
use prepare::{make_log_meta, prepare};
use prepared::Prepared;
use push::{fetch_rx_node, push_with_retry, PushJob};
use resume::{own_unrecorded, push_pending, resume};
use tree::{
    also_pushed, build_commit, case_twin_at, commit_message, plan_base,
    refuse_if_rx_node_checked_out, result_at, result_subtree, same_result, set_rx_node, signature,
    BasePlan, Tips,
};

use crate::context::Ctx;
use crate::exit::{bad_input, refused, Outcome, Refused};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Published, PublishedFile, Refusal};
use crate::store::paths::Paths;
use crate::store::state::{self, PublishRecord};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use rxnode_interlock::TaskId;
use std::time::Instant;

// The folder on `rx-node` holding every published result, and the third
// published file (written by the publication itself): named once, in result/.
use crate::result::{LOG_META, RESULTS_DIR};

/// `rxnode publish <TASK_ID> [--push]`: check the outbox, show what would be
/// published, ask for `PUBLISH <TASK_ID>`, commit it to the local `rx-node`
/// and, with `push`, push it. A refusal or failure is recorded in the ledger.
pub fn cmd_publish(ctx: &Ctx, task_id: &str, push: bool) -> Result<Outcome> {
    let id = TaskId::parse(task_id).map_err(|e| bad_input(format!("task ID: {e}")))?;
    let paths = ctx.paths();
    crate::git::ops::set_timeouts();
    // A wrong push budget is said before anything is asked or committed.
    push::push_budget()?;
    // Nothing under an untrusted .local/ is read or written, not even the ledger.
    crate::store::trust::prepare(&paths)?;
    // An interrupted run's result is finished before anything is published; one
    // that cannot be finished is never published as its "not started" placeholder.
    crate::store::state::load(&paths)?;
    crate::result::finish_and_say(&paths, &ctx.source.branch, "publish");
    let result = match crate::store::journal::unfinished(&paths) {
        Ok(u) if u.iter().any(|u| u.task_id == id.as_str()) => Err(refused(format!(
            "task {id}: its run did not finish and its result could not be finished as interrupted; nothing is published (docs/protocol.md#interrupted-runs)"
        ))),
        _ => not_being_run(&paths, &id).and_then(|()| publish(ctx, &paths, &id, push)),
    };
    if let Err(e) = &result {
        let is_refusal = e.chain().any(|c| c.downcast_ref::<Refused>().is_some());
        let event = if is_refusal {
            "refused"
        } else {
            "publish_failed"
        };
        let refusal = Refusal {
            action: Some("publish".to_owned()),
            push: Some(push),
            reason: format!("{e:#}"),
            ..Refusal::default()
        };
        let entry = Entry::new(if is_refusal {
            Event::Refused(refusal)
        } else {
            Event::PublishFailed(refusal)
        })
        .task(id.as_str());
        if let Err(le) = ledger::append(&paths, &entry) {
            tracing::warn!("cannot record the {event} publication in the ledger: {le:#}");
        }
    }
    result
}

/// One publication under way, after the outbox passed every check: what the
/// phases after the confirmation read.
struct Publication<'a> {
    ctx: &'a Ctx,
    paths: &'a Paths,
    id: &'a TaskId,
    push: bool,
    repo: &'a Repository,
    refspec: &'a PushRefspec,
    prep: &'a Prepared,
    /// `<ID>/<NODE>` under `rx-results/`.
    key: String,
    /// `LOG_META.json` exactly as shown and checked.
    log_meta: &'a str,
}

/// The local commit of a publication, and what a rebuild of it needs.
struct LocalCommit {
    commit: Oid,
    msg: String,
    sig: git2::Signature<'static>,
}

/// The refspec of the layout this node's trust root names (`rxnode node
/// set-publish-ref`): `rx-node`, or `rx-results/<NODE>`. No refspec to the
/// watched branch can be formed.
fn publish_refspec(ctx: &Ctx, paths: &Paths) -> Result<PushRefspec> {
    let file = crate::store::node::load_file(paths)?;
    match file {
        Some(f) if f.publish_ref == PublishRef::Own => {
            own_results_refspec(&f.name, &ctx.source.branch).map_err(|e| refused(e.0))
        }
        _ => rx_node_refspec(&ctx.source.branch).map_err(|e| refused(e.0)),
    }
}

fn publish(ctx: &Ctx, paths: &Paths, id: &TaskId, push: bool) -> Result<Outcome> {
    // First of all: no refspec to the watched branch can even be formed.
    let refspec = publish_refspec(ctx, paths)?;
    let st = state::load(paths)?;
    if let Some(p) = st.published.get(id.as_str()) {
        if push && !p.pushed {
            return push_pending(ctx, paths, id, p);
        }
        return Err(refused(format!(
            "task {id} was already published as commit {} at {} ({}); a result is never overwritten",
            p.commit,
            p.at,
            if p.pushed { "pushed" } else { "not pushed" }
        )));
    }
    let prep = prepare(ctx, paths, &st, id)?;
    let repo = open_checkout(ctx, &refspec)?;
    let remote = ctx.source.remote.as_str();
    if push {
        // Build on the freshest remote tip and see a same-ID result before asking.
        fetch_rx_node(&repo, remote, &refspec).context("before publishing")?;
    }
    let tips = Tips::read(&repo, remote, &refspec)?;
    if let Some(rec) = own_unrecorded(&repo, paths, &tips, &prep, &refspec)? {
        return resume(ctx, paths, id, push, &rec);
    }
    let mut plan = plan_base(&repo, &tips)?;
    refuse_existing(&repo, &plan, &tips, &prep, &refspec)?;

    // Show, then confirm.
    let log_meta = make_log_meta(paths, &prep)?;
    check_log_meta(&prep, &log_meta)?;
    let p = Publication {
        ctx,
        paths,
        id,
        push,
        repo: &repo,
        refspec: &refspec,
        prep: &prep,
        key: prep.key(),
        log_meta: &log_meta,
    };
    let also = if push {
        also_pushed(&repo, &plan, &tips, &p.key)?
    } else {
        Vec::new()
    };
    let (gone, restore) = taken_away(&repo, &st, plan.base.as_ref(), &prep.node);
    let shown = p.shown(&plan, &also) + &gone;
    // Each is put back as this node published it, named in `Carried-Over:`.
    plan.carry.extend(restore);
    confirm(ctx, &shown, id, push)?;
    // The operator may have taken a while: what is committed is what was shown
    // and what the outbox holds now, never a result a run replaced meanwhile.
    not_being_run(paths, id)?;
    unchanged_since_shown(paths, &prep)?;
    // From here on a Ctrl-C / SIGTERM no longer kills the process half-way through a
    // ref update (which left a stale `rx-node.lock`) or between the local commit and
    // its state record: it is honoured before the push.
    let cancel = crate::signals::cancel_flag("publish");
    let local = p.commit_locally(&plan, &tips)?;
    if push && cancel.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(anyhow::anyhow!(
            "interrupted before the push: {id} is committed on the local {} ({}); `rxnode publish {id} --push` pushes it",
            refspec.branch(),
            local.commit
        ));
    }
    let (final_commit, attempts) = if push {
        p.push(&local)?
    } else {
        (local.commit, 0)
    };
    p.report(final_commit, attempts)
}

/// The most of this node's pushed results missing from the base whose
/// publication commit is looked for in the base's history (each search bounded).
const TAKEN_AWAY_CHECKS: usize = 20;

/// Lines naming this node's results, recorded as pushed, that `base` (the
/// remote tip this publication builds on) no longer holds though it descends
/// from the commit that published them: a later commit by someone else took
/// them away, and the operator is told before confirming. Also each such
/// result as this node published it (`<ID>/<NODE>` → its tree in that commit),
/// which this publication puts back (docs/publishing.md).
fn taken_away(
    repo: &Repository,
    st: &state::State,
    base: Option<&git2::Commit<'_>>,
    node: &str,
) -> (String, std::collections::BTreeMap<String, Oid>) {
    let mut restore = std::collections::BTreeMap::new();
    let Some(base) = base else {
        return (String::new(), restore);
    };
    let mut out = String::new();
    let mut checks = 0;
    for (id, rec) in st.published.iter().filter(|(_, r)| r.pushed) {
        let key = format!("{id}/{node}");
        if result_at(repo, base, &key).ok().flatten().is_some() {
            continue;
        }
        let Some(c) = Oid::from_str(&rec.commit)
            .ok()
            .and_then(|o| repo.find_commit(o).ok())
        else {
            continue;
        };
        if checks >= TAKEN_AWAY_CHECKS {
            break;
        }
        checks += 1;
        let held = result_at(repo, &c, &key).ok().flatten();
        let below =
            crate::git::ops::is_strict_ancestor(repo, &rec.commit, base.id()).unwrap_or(false);
        let Some(tree) = held.filter(|_| below) else {
            continue;
        };
        // Put back only into a plain folder (or none): never over a file or link.
        let id_path = format!("{RESULTS_DIR}/{id}");
        let folder_or_none =
            base.tree()
                .is_ok_and(|t| match t.get_path(std::path::Path::new(&id_path)) {
                    Ok(e) => e.filemode() == 0o040000,
                    Err(e) => e.code() == git2::ErrorCode::NotFound,
                });
        let twin = case_twin_at(repo, base, &key).ok().flatten();
        let how = if let Some(other) = twin {
            format!(
                "it is not put back, as {other} on that branch differs from it only in letter case \
                 (one folder on Windows and macOS) — whoever wrote it must remove it"
            )
        } else if folder_or_none {
            restore.insert(key.clone(), tree);
            format!(
                "this publication puts it back as published (tree {tree}, named in Carried-Over)"
            )
        } else {
            format!(
                "it is not put back, as {id_path} on that branch is not a folder — whoever wrote it \
                 must remove it; the next publication then puts the result back"
            )
        };
        out.push_str(&format!(
            "  ! {RESULTS_DIR}/{key}/, published by this node in commit {}, is no longer on that \
             branch: a later commit removed it; {how}\n",
            c.id()
        ));
    }
    (out, restore)
}

/// Refused (exit 3) while an `rxnode run` of this task holds the checkout's run
/// lock: until it ends, the outbox holds the approval's `NOT RUN` placeholder, and
/// a published placeholder would stand for the task on the results branch for
/// good (a result is never overwritten), the run's own result never published.
fn not_being_run(paths: &Paths, id: &TaskId) -> Result<()> {
    match crate::store::lock::live_run_of(paths, id.as_str()) {
        Some(h) => Err(refused(format!(
            "task {id} is being run now: {} is held by {h}; its result is not written yet, so nothing is \
             published — publish it once that run has ended",
            paths.run_lock().display()
        ))),
        None => Ok(()),
    }
}

/// Refused (exit 3) when `RX_RESULT.md` or `RX_RESULT.json` in the outbox is no
/// longer the text shown before the confirmation (a run of the task ended while
/// the operator was asked): publish again to see, and confirm, the result as it is.
fn unchanged_since_shown(paths: &Paths, prep: &Prepared) -> Result<()> {
    let dir = paths.outbox(&prep.id);
    for (name, shown) in [(MD, &prep.md), (JSON, &prep.json_text)] {
        let mut problems = Vec::new();
        let now = checks::read_result_file(&dir, name, &mut problems);
        if now.as_deref() != Some(shown.as_str()) {
            return Err(refused(format!(
                "{} changed after it was shown (a run of {} ended meanwhile?); nothing is published — \
                 run `rxnode publish {}` again to see the result as it is now",
                dir.join(name).display(),
                prep.id,
                prep.id
            )));
        }
    }
    Ok(())
}

/// The checkout as a Git repository, refused when the results branch is checked out.
fn open_checkout(ctx: &Ctx, spec: &PushRefspec) -> Result<Repository> {
    let repo = Repository::open(&ctx.repo).map_err(|e| {
        crate::git::ops::path_too_long(&ctx.repo, &e).unwrap_or_else(|| {
            anyhow::Error::new(e).context(format!(
                "cannot open the checkout {} as a Git repository",
                ctx.repo.display()
            ))
        })
    })?;
    refuse_if_rx_node_checked_out(&repo, spec)?;
    Ok(repo)
}

/// A result is never overwritten: refused when the base or either tip
/// already holds `rx-results/<ID>/<NODE>/`.
fn refuse_existing(
    repo: &Repository,
    plan: &BasePlan,
    tips: &Tips,
    prep: &Prepared,
    spec: &PushRefspec,
) -> Result<()> {
    let key = prep.key();
    let exists = |at: String| {
        refused(format!(
            "{RESULTS_DIR}/{key}/ already exists on {} (commit {at}); a result is never overwritten \
             (if another laptop also calls itself {}, give each node its own name)",
            spec.short(),
            prep.node
        ))
    };
    let twin = |at: String, other: String| {
        refused(format!(
            "{RESULTS_DIR}/{key}/ and {other} on {} (commit {at}) differ only in letter case: on a \
             case-insensitive file system (Windows, macOS) they are one folder, so one result would overwrite \
             or pass for the other; not published (a task ID or node name must differ by more than letter case)",
            spec.short()
        ))
    };
    let mut commits = Vec::new();
    if let Some(base) = &plan.base {
        commits.push(base.clone());
    }
    for t in [tips.local, tips.tracking].into_iter().flatten() {
        commits.push(repo.find_commit(t)?);
    }
    for c in &commits {
        if result_at(repo, c, &key)?.is_some() {
            return Err(exists(c.id().to_string()));
        }
        if let Some(other) = case_twin_at(repo, c, &key)? {
            return Err(twin(c.id().to_string(), other));
        }
    }
    Ok(())
}

impl Publication<'_> {
    /// The three published files with their sizes, as shown and recorded.
    fn files(&self) -> [(&'static str, usize); 3] {
        [
            (MD, self.prep.md.len()),
            (JSON, self.prep.json_text.len()),
            (LOG_META, self.log_meta.len()),
        ]
    }

    /// The files of the ledger's `published` line and of `--json`.
    fn published_files(&self) -> Vec<PublishedFile> {
        let key = &self.key;
        self.files()
            .iter()
            .map(|(n, s)| PublishedFile {
                path: format!("{RESULTS_DIR}/{key}/{n}"),
                bytes: *s,
            })
            .collect()
    }

    /// What is about to be published, shown before the confirmation.
    fn shown(&self, plan: &BasePlan, also: &[String]) -> String {
        let (prep, key) = (self.prep, &self.key);
        let mut shown = String::new();
        shown.push_str(&format!(
            "Publish task {} ({}), status {}, as node {}, to {}{}:\n",
            self.id,
            prep.title,
            prep.status,
            prep.node,
            self.refspec.branch(),
            if self.push {
                format!(" and push it to {}", self.ctx.source.remote)
            } else {
                " (local only; no push)".to_owned()
            }
        ));
        for (name, size) in self.files() {
            shown.push_str(&format!(
                "  {RESULTS_DIR}/{key}/{name:<16} {size:>8} bytes\n"
            ));
        }
        let short = self.refspec.short();
        match &plan.base {
            Some(b) => shown.push_str(&format!("  on top of {short} commit {}\n", b.id())),
            None => shown.push_str(&format!("  as the first commit of a new {short} branch\n")),
        }
        if !also.is_empty() {
            // Nothing is pushed that is not listed here.
            shown.push_str(&format!(
                "  the push also takes {} result(s) published on this node and not yet on {} (each {MD}, {JSON}, {LOG_META}):\n",
                also.len(),
                self.ctx.source.remote
            ));
            for k in also {
                shown.push_str(&format!("    {RESULTS_DIR}/{k}/\n"));
            }
        }
        if !prep.stray.is_empty() {
            shown.push_str(&format!(
                "  stays local (never published): {}\n",
                prep.stray.join(", ")
            ));
        }
        shown
    }

    /// Commit without a checkout — exactly the LOG_META that was shown and
    /// checked — move the local `rx-node`, and record it (not pushed yet).
    fn commit_locally(&self, plan: &BasePlan, tips: &Tips) -> Result<LocalCommit> {
        let (repo, prep, id) = (self.repo, self.prep, self.id);
        let sig = signature(repo)?;
        let subtree = result_subtree(repo, prep, self.log_meta)?;
        let mut add = plan.carry.clone();
        add.insert(self.key.clone(), subtree);
        let msg = commit_message(prep, &plan.carry);
        let commit = build_commit(repo, plan.base.as_ref(), &add, &msg, &sig)?;
        set_rx_node(repo, self.refspec, tips.local, commit)?;
        let at = now_iso();
        state::update(self.paths, |s| {
            s.published.insert(
                id.as_str().to_owned(),
                PublishRecord {
                    commit: commit.to_string(),
                    at: at.clone(),
                    pushed: false,
                },
            );
            Ok(())
        })?;
        ledger::append(
            self.paths,
            &Entry::new(Event::Published(Published {
                ref_: self.refspec.branch().to_owned(),
                pushed: false,
                status: prep.status.clone(),
                node: prep.node.clone(),
                files: Some(self.published_files()),
                resumed: None,
                note: None,
            }))
            .task(id.as_str())
            .sha(&prep.task_sha256)
            .commit(&commit.to_string()),
        )?;
        Ok(LocalCommit { commit, msg, sig })
    }

    /// Push the local commit (rebuilt on a new remote tip if needed) and record
    /// it; on failure the local commit stands (state says not pushed).
    fn push(&self, local: &LocalCommit) -> Result<(Oid, u32)> {
        let (repo, id, paths) = (self.repo, self.id, self.paths);
        let remote = self.ctx.source.remote.as_str();
        let job = PushJob {
            repo,
            remote,
            spec: self.refspec,
            key: &self.key,
            msg: &local.msg,
            sig: &local.sig,
        };
        let started = Instant::now();
        match push_with_retry(&job, local.commit) {
            Ok((c, n)) => {
                let landed = Landed {
                    id,
                    task_sha256: &self.prep.task_sha256,
                    remote,
                    commit: c,
                    attempts: n,
                    started,
                };
                record_push(paths, repo, &landed, self.refspec)?;
                Ok((c, n))
            }
            Err(e) => {
                // The local commit stands (state says not pushed).
                let c = repo
                    .refname_to_id(self.refspec.branch())
                    .map(|o| o.to_string())
                    .unwrap_or_default();
                let _ = state::update(paths, |s| {
                    if let Some(r) = s.published.get_mut(id.as_str()) {
                        if !c.is_empty() {
                            r.commit = c.clone();
                        }
                    }
                    Ok(())
                });
                Err(e.context(format!(
                    "committed {id} on {} locally but the push to {remote} failed",
                    self.refspec.branch()
                )))
            }
        }
    }

    /// Print what was published (`--json`: one object).
    fn report(&self, final_commit: Oid, attempts: u32) -> Result<Outcome> {
        let (id, prep, push) = (self.id, self.prep, self.push);
        let remote = &self.ctx.source.remote;
        let out = PublishReport {
            commit: final_commit.to_string(),
            files: Some(self.published_files()),
            node: Some(&prep.node),
            push_attempts: Some(attempts),
            pushed: push,
            r#ref: self.refspec.branch(),
            resumed: None,
            status: Some(&prep.status),
            task_id: id.as_str(),
        };
        self.ctx.report(&out, |_| {
            use std::fmt::Write as _;
            let mut text = String::new();
            let _ = writeln!(text);
            let _ = writeln!(
                text,
                "published {id} from node {} as {} commit {final_commit}",
                prep.node,
                self.refspec.branch()
            );
            if push {
                let _ = writeln!(text, "pushed to {remote} in {attempts} attempt(s)");
            } else {
                let _ = writeln!(
                    text,
                    "not pushed; `rxnode publish {id} --push` pushes it (so does the next publication with --push)"
                );
            }
            text
        })?;
        Ok(Outcome::Done)
    }
}

/// Show what is about to happen and read one line: only the exact
/// `PUBLISH <TASK_ID>` (line terminator stripped) goes ahead. A refusal here
/// wrote nothing: for another line, end of input or a signal its fix is the
/// same command again (`push`: with `--push`).
fn confirm(ctx: &Ctx, shown: &str, id: &TaskId, push: bool) -> Result<()> {
    let prompt = format!("{shown}Type exactly `PUBLISH {id}` to go ahead: ");
    let to = if ctx.json {
        crate::term::To::Stderr
    } else {
        crate::term::To::Stdout
    };
    let expected = format!("PUBLISH {id}");
    let fix = crate::term::retype_fix(
        &format!("rxnode publish {id}{}", if push { " --push" } else { "" }),
        &expected,
    );
    let answer = match crate::term::ask_once(&prompt, to) {
        crate::term::Once::Line(l) => l,
        crate::term::Once::Unreadable(e) => {
            return Err(refused(format!(
                "cannot read the confirmation from stdin: {e}; `{expected}` was required; nothing was written"
            )))
        }
        crate::term::Once::Eof => {
            return Err(refused(format!(
                "no confirmation (end of input); `{expected}` was required; nothing was written{fix}"
            )))
        }
        crate::term::Once::Interrupted => {
            return Err(refused(format!(
                "interrupted at the prompt (Ctrl-C or a stop signal); `{expected}` was required; nothing was written{fix}"
            )))
        }
    };
    if answer != expected {
        return Err(refused(format!(
            "the confirmation is not exactly `{expected}`: {}; nothing was written{fix}",
            rxnode_interlock::phrase_difference(&answer, &expected)
        )));
    }
    Ok(())
}

/// A push that landed, as [`record_push`] records it.
struct Landed<'a> {
    id: &'a TaskId,
    /// The approved SHA-256 of the task (empty when unknown).
    task_sha256: &'a str,
    remote: &'a str,
    /// The commit that landed.
    commit: Oid,
    attempts: u32,
    started: Instant,
}

/// After a push landed: this task and every earlier unpushed publication now
/// on the remote are recorded as pushed, with the commit that carried them.
fn record_push(paths: &Paths, repo: &Repository, l: &Landed, spec: &PushRefspec) -> Result<()> {
    let (id, c) = (l.id, l.commit);
    let landed = repo.find_commit(c)?;
    let at = now_iso();
    state::update(paths, |s| {
        s.published.insert(
            id.as_str().to_owned(),
            PublishRecord {
                commit: c.to_string(),
                at: at.clone(),
                pushed: true,
            },
        );
        // Only a record whose own tree is the one that landed: a same-ID
        // result from another node is not this node's publication.
        for (k, r) in s.published.iter_mut() {
            if !r.pushed && same_result(repo, &landed, k, &r.commit) {
                r.pushed = true;
                r.commit = c.to_string();
            }
        }
        Ok(())
    })?;
    ledger::append(
        paths,
        &Entry::new(Event::Pushed {
            ref_: spec.branch().to_owned(),
            remote: l.remote.to_owned(),
            attempts: l.attempts,
            elapsed_ms: l.started.elapsed().as_millis() as u64,
        })
        .task(id.as_str())
        .sha(l.task_sha256)
        .commit(&c.to_string()),
    )
}

/// The approved SHA-256 of a task, for ledger entries (empty when unknown).
fn repo_task_sha(paths: &Paths, id: &TaskId) -> String {
    state::load(paths)
        .ok()
        .and_then(|s| s.approvals.get(id.as_str()).map(|a| a.task_sha256.clone()))
        .unwrap_or_default()
}

/// What `publish --json` prints: the commit, whether it was pushed, and for a new
/// publication its files, node and status (for one found already committed by an
/// earlier publication that stopped, `resumed`).
#[derive(serde::Serialize)]
pub(crate) struct PublishReport<'a> {
    /// The commit on the publication branch.
    pub(crate) commit: String,
    /// The files published, when this publication made the commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<Vec<PublishedFile>>,
    /// The publishing node's name, when this publication made the commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<&'a str>,
    /// Push attempts, when it was pushed now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) push_attempts: Option<u32>,
    /// Whether it is on the remote.
    pub(crate) pushed: bool,
    /// The publication branch.
    pub(crate) r#ref: &'a str,
    /// `true`: an earlier publication had made the commit and stopped before recording it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resumed: Option<bool>,
    /// The result's status, when this publication made the commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<&'a str>,
    /// The task.
    pub(crate) task_id: &'a str,
}
