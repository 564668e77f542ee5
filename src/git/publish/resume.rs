//! A publication begun earlier: one stopped after the local results branch moved
//! and before it was recorded (found and recorded, or pushed), and one committed
//! without `--push` (pushed now, rebuilt on the remote tip when needed).
use super::prepared::{result_key, Prepared};
use super::push::{fetch_rx_node, push_with_retry, PushJob};
use super::tree::{also_pushed, id_entries, result_at, signature, BasePlan, Tips};
use super::{confirm, open_checkout, publish_refspec, record_push, repo_task_sha, Landed};
use crate::context::Ctx;
use crate::exit::{refused, Outcome};
use crate::git::refspec::PushRefspec;
use crate::result::{LOG_META, RESULTS_DIR, RESULT_JSON as JSON, RESULT_MD as MD};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event, Published};
use crate::store::paths::Paths;
use crate::store::state::{self, PublishRecord};
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use rxnode_interlock::TaskId;
use std::time::Instant;

/// A publication stopped after the local `rx-node` moved and before it was
/// recorded (a kill, a power cut): the local `rx-node` holds this node's
/// result for this task with the very `RX_RESULT.md` and `RX_RESULT.json` of
/// the outbox, added by a commit naming this task and this node. It is
/// recorded now (pushed when the remote already holds it) instead of being
/// refused as someone else's; `None` when there is no such commit.
pub(super) fn own_unrecorded(
    repo: &Repository,
    paths: &Paths,
    tips: &Tips,
    prep: &Prepared,
    spec: &PushRefspec,
) -> Result<Option<PublishRecord>> {
    let Some(local) = tips.local else {
        return Ok(None);
    };
    let key = prep.key();
    let tip = repo.find_commit(local)?;
    let Some(tree) = result_at(repo, &tip, &key)? else {
        return Ok(None);
    };
    let tree = repo.find_tree(tree)?;
    let same = |name: &str, text: &str| {
        let want = Oid::hash_object(git2::ObjectType::Blob, text.as_bytes()).ok();
        tree.get_name(name)
            .is_some_and(|e| e.filemode() == 0o100644 && Some(e.id()) == want)
    };
    if !(same(MD, &prep.md) && same(JSON, &prep.json_text)) {
        return Ok(None);
    }
    // The commit that added it (first parents, a bounded look back): made by a
    // publication of this task from this node.
    let mut c = tip;
    let mut adding = None;
    for _ in 0..MAX_RESUME_LOOKBACK {
        let parent = c.parents().next();
        let before = match &parent {
            Some(p) => result_at(repo, p, &key)?,
            None => None,
        };
        if before.is_none() {
            adding = Some(c.clone());
            break;
        }
        match parent {
            Some(p) => c = p,
            None => break,
        }
    }
    let Some(adding) = adding else {
        return Ok(None);
    };
    let msg = adding.message().unwrap_or("");
    let trailer = |k: &str, v: &str| msg.lines().any(|l| l == format!("{k}: {v}"));
    if !(trailer("Task", prep.id.as_str()) && trailer("Node-Name", &prep.node)) {
        return Ok(None);
    }
    let on_remote = match tips.tracking {
        Some(t) => result_at(repo, &repo.find_commit(t)?, &key)?.is_some(),
        None => false,
    };
    let rec = PublishRecord {
        commit: adding.id().to_string(),
        at: now_iso(),
        pushed: on_remote,
    };
    state::update(paths, |s| {
        s.published.insert(prep.id.as_str().to_owned(), rec.clone());
        Ok(())
    })?;
    ledger::append(
        paths,
        &Entry::new(Event::Published(Published {
            ref_: spec.branch().to_owned(),
            pushed: on_remote,
            status: prep.status.clone(),
            node: prep.node.clone(),
            resumed: Some(true),
            note: Some(format!(
                "found on the local {}, committed by an earlier publication that stopped before recording it",
                spec.short()
            )),
            files: None,
        }))
        .task(prep.id.as_str())
        .sha(&prep.task_sha256)
        .commit(&rec.commit),
    )?;
    Ok(Some(rec))
}

/// How far back [`own_unrecorded`] looks for the commit that added a result.
const MAX_RESUME_LOOKBACK: usize = 1000;

/// Carry on with a publication [`own_unrecorded`] found: push it (confirmed
/// again) or say what was recorded.
pub(super) fn resume(
    ctx: &Ctx,
    paths: &Paths,
    id: &TaskId,
    push: bool,
    rec: &PublishRecord,
) -> Result<Outcome> {
    let spec = publish_refspec(ctx, paths)?;
    let note = format!(
        "{id} was already committed on the local {} as {} by an earlier publication that stopped before recording it; recorded now",
        spec.branch(),
        rec.commit
    );
    note!("rxnode: {note}");
    if push && !rec.pushed {
        return push_pending(ctx, paths, id, rec);
    }
    let out = super::PublishReport {
        commit: rec.commit.clone(),
        files: None,
        node: None,
        push_attempts: None,
        pushed: rec.pushed,
        r#ref: spec.branch(),
        resumed: Some(true),
        status: None,
        task_id: id.as_str(),
    };
    ctx.report(&out, |_| {
        if rec.pushed {
            format!(
                "{id} is on the remote {} already (commit {}); recorded as pushed\n",
                spec.short(),
                rec.commit
            )
        } else {
            format!("not pushed; `rxnode publish {id} --push` pushes it\n")
        }
    })?;
    Ok(Outcome::Done)
}

/// `publish <ID> --push` for a result committed earlier without `--push`:
/// push the local `rx-node` (confirmed again), rebuilding on the remote tip if needed.
pub(super) fn push_pending(
    ctx: &Ctx,
    paths: &Paths,
    id: &TaskId,
    rec: &PublishRecord,
) -> Result<Outcome> {
    let refspec = publish_refspec(ctx, paths)?;
    let repo = open_checkout(ctx, &refspec)?;
    let remote = ctx.source.remote.as_str();
    let short = refspec.short();
    // A fresh remote-tracking tip: only what the remote lacks is checked and sent.
    fetch_rx_node(&repo, remote, &refspec).context("before pushing")?;
    let tip = repo.refname_to_id(refspec.branch()).map_err(|_| {
        refused(format!(
            "{id} was committed as {} but the local {short} is gone \
             (if this node's layout changed since, `rxnode node set-publish-ref` sets it back)",
            rec.commit
        ))
    })?;
    let tip_commit = repo.find_commit(tip)?;
    let key = recorded_key(&repo, paths, id, rec)?;
    if result_at(&repo, &tip_commit, &key)?.is_none() {
        return Err(refused(format!(
            "the local {short} ({tip}) no longer holds {RESULTS_DIR}/{key}/; not pushed \
             (if this node's layout changed since, `rxnode node set-publish-ref` sets it back)"
        )));
    }
    let mut shown = format!(
        "Push the local {short} ({tip}), which holds {RESULTS_DIR}/{key}/ (committed {} at {}), to {remote}.\n",
        rec.commit, rec.at
    );
    // Everything else the push takes is listed: nothing unconfirmed leaves.
    let tips = Tips::read(&repo, remote, &refspec)?;
    let whole = BasePlan {
        base: Some(tip_commit.clone()),
        carry: Default::default(),
    };
    let also = also_pushed(&repo, &whole, &tips, &key)?;
    if !also.is_empty() {
        shown.push_str(&format!(
            "  the push also takes {} result(s) published on this node and not yet on {remote} (each {MD}, {JSON}, {LOG_META}):\n",
            also.len()
        ));
        for k in &also {
            shown.push_str(&format!("    {RESULTS_DIR}/{k}/\n"));
        }
    }
    confirm(ctx, &shown, id, true)?;
    // As in `publish`: a signal must not kill a ref update half-way.
    let _ = crate::signals::cancel_flag("publish");
    let msg = tip_commit.message().unwrap_or("rx-results").to_owned();
    let sig = signature(&repo)?;
    let started = Instant::now();
    let job = PushJob {
        repo: &repo,
        remote,
        spec: &refspec,
        key: &key,
        msg: &msg,
        sig: &sig,
    };
    let (c, n) = push_with_retry(&job, tip)
        .map_err(|e| e.context(format!("the push of {id} to {remote} failed")))?;
    let sha = repo_task_sha(paths, id);
    let landed = Landed {
        id,
        task_sha256: &sha,
        remote,
        commit: c,
        attempts: n,
        started,
    };
    record_push(paths, &repo, &landed, &refspec)?;
    let branch = refspec.branch();
    let out = super::PublishReport {
        commit: c.to_string(),
        files: None,
        node: None,
        push_attempts: Some(n),
        pushed: true,
        r#ref: branch,
        resumed: None,
        status: None,
        task_id: id.as_str(),
    };
    ctx.report(&out, |_| {
        format!("\npushed {id} as {branch} commit {c} to {remote} in {n} attempt(s)\n")
    })?;
    Ok(Outcome::Done)
}

/// The key this node's record committed: `<id>/<node>` in the recorded commit
/// (or `<id>` from before node names).
fn recorded_key(
    repo: &Repository,
    paths: &Paths,
    id: &TaskId,
    rec: &PublishRecord,
) -> Result<String> {
    let recorded = Oid::from_str(&rec.commit)
        .ok()
        .and_then(|o| repo.find_commit(o).ok())
        .map(|c| id_entries(repo, &c, id.as_str()))
        .transpose()?
        .unwrap_or_default();
    let node = crate::store::node::load_name(paths)?;
    Ok(node
        .as_deref()
        .map(|n| result_key(id, n))
        .filter(|k| recorded.contains_key(k))
        .or_else(|| {
            let prefix = format!("{}/", id.as_str());
            recorded
                .keys()
                .find(|k| k.as_str() == id.as_str() || k.starts_with(&prefix))
                .cloned()
        })
        .unwrap_or_else(|| id.as_str().to_owned()))
}
