//! `rxnode publish <TASK_ID> [--push]`: the confirmed publication of one
//! result to `refs/heads/rx-node` (DESIGN §6, issue 7).
//!
//! The commit is built from blobs and trees with git2, never through the
//! index or the work tree; HEAD and the current branch are not touched. The
//! push refspec comes only from [`refspec::rx_node_refspec`].
use super::refspec;
use super::scan;

use crate::git::ops::{redact as redact_url, remote_callbacks};
use refspec::{rx_node_refspec, PushRefspec, RX_NODE_REF};
use scan::{check_bytes, scan_text, sha256_fields, MAX_FILE_BYTES};

use crate::context::Ctx;
use crate::exit::{bad_input, refused, Outcome, Refused};
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use crate::store::state::{self, PublishRecord};
use anyhow::{Context, Result};
use git2::{Commit, ErrorCode, Oid, Repository};
use rxnode_interlock::{sha256_hex, AllowPush, TaskId};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The folder on `rx-node` holding every published result.
pub const RESULTS_DIR: &str = "rx-results";
/// How many times a non-fast-forward push is rebuilt and retried. Every lost race
/// means another publisher landed, so N nodes publishing at once need at most N
/// attempts; 16 leaves room for a fleet of 8 (issue 18) and for lock contention.
pub const MAX_PUSH_ATTEMPTS: u32 = 16;

const MD: &str = "RX_RESULT.md";
const JSON: &str = "RX_RESULT.json";
const LOG_META: &str = "LOG_META.json";
const STATUSES: [&str; 6] = ["NOT RUN", "PASS", "FAIL", "PARTIAL", "SKIP", "BLOCKED"];

/// `TASK.meta.json` beside the approved task text in the outbox.
#[derive(Debug, Deserialize)]
struct TaskMeta {
    task_id: String,
    commit: String,
    #[serde(default)]
    blob: Option<String>,
    task_sha256: String,
    #[serde(default)]
    approved_at: Option<String>,
    #[serde(default)]
    source_branch: Option<String>,
}

/// Everything checked and ready to commit.
struct Prepared {
    id: TaskId,
    title: String,
    source_branch: String,
    task_sha256: String,
    meta: TaskMeta,
    approved_at: String,
    md: String,
    json_text: String,
    json: Value,
    status: String,
    stray: Vec<String>,
    /// This node's name (`rxnode node set-name`): the result lands in `rx-results/<ID>/<node>/`.
    node: String,
}

impl Prepared {
    /// `<ID>/<NODE>`: this result's key under `rx-results/`.
    fn key(&self) -> String {
        result_key(&self.id, &self.node)
    }
}

/// `<ID>/<NODE>`: a per-node result's key under `rx-results/` (DESIGN §10).
fn result_key(id: &TaskId, node: &str) -> String {
    format!("{}/{node}", id.as_str())
}

/// The command.
pub fn cmd_publish(ctx: &Ctx, task_id: &str, push: bool) -> Result<Outcome> {
    let id = TaskId::parse(task_id).map_err(|e| bad_input(format!("task ID: {e}")))?;
    let paths = Paths::new(&ctx.repo);
    // Nothing under an untrusted .local/ is read or written, not even the ledger.
    crate::store::trust::prepare(&paths)?;
    let result = publish(ctx, &paths, &id, push);
    if let Err(e) = &result {
        let is_refusal = e.chain().any(|c| c.downcast_ref::<Refused>().is_some());
        let event = if is_refusal {
            "refused"
        } else {
            "publish_failed"
        };
        let entry = Entry::new(event)
            .task(id.as_str())
            .detail(json!({"action": "publish", "push": push, "reason": format!("{e:#}")}));
        if let Err(le) = ledger::append(&paths, &entry) {
            tracing::warn!("cannot record the {event} publication in the ledger: {le:#}");
        }
    }
    result
}

fn publish(ctx: &Ctx, paths: &Paths, id: &TaskId, push: bool) -> Result<Outcome> {
    // First of all: no refspec to the watched branch can even be formed.
    rx_node_refspec(&ctx.source.branch).map_err(|e| refused(e.0))?;
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

    let repo = Repository::open(&ctx.repo).with_context(|| {
        format!(
            "cannot open the checkout {} as a Git repository",
            ctx.repo.display()
        )
    })?;
    refuse_if_rx_node_checked_out(&repo)?;
    let remote = ctx.source.remote.as_str();
    let refspec = rx_node_refspec(&ctx.source.branch).map_err(|e| refused(e.0))?;
    if push {
        // Build on the freshest remote tip and see a same-ID result before asking.
        fetch_rx_node(&repo, remote).context("before publishing")?;
    }
    let tips = Tips::read(&repo, remote)?;
    let plan = plan_base(&repo, &tips)?;
    let key = prep.key();
    if let Some(base) = &plan.base {
        if result_entries(&repo, Some(base))?.contains_key(&key) {
            return Err(refused(format!(
                "{RESULTS_DIR}/{key}/ already exists on rx-node (commit {}); a result is never overwritten \
                 (if another laptop also calls itself {}, give each node its own name)",
                base.id(),
                prep.node
            )));
        }
    }
    for t in [tips.local, tips.tracking].into_iter().flatten() {
        let c = repo.find_commit(t)?;
        if result_entries(&repo, Some(&c))?.contains_key(&key) {
            return Err(refused(format!(
                "{RESULTS_DIR}/{key}/ already exists on rx-node (commit {t}); a result is never overwritten \
                 (if another laptop also calls itself {}, give each node its own name)",
                prep.node
            )));
        }
    }

    // Show, then confirm.
    let log_meta = make_log_meta(paths, &prep)?;
    check_log_meta(&prep, &log_meta)?;
    let files = [
        (MD, prep.md.len()),
        (JSON, prep.json_text.len()),
        (LOG_META, log_meta.len()),
    ];
    let mut shown = String::new();
    shown.push_str(&format!(
        "Publish task {id} ({}), status {}, as node {}, to {RX_NODE_REF}{}:\n",
        prep.title,
        prep.status,
        prep.node,
        if push {
            format!(" and push it to {remote}")
        } else {
            " (local only; no push)".to_owned()
        }
    ));
    for (name, size) in files {
        shown.push_str(&format!(
            "  {RESULTS_DIR}/{key}/{name:<16} {size:>8} bytes\n"
        ));
    }
    match &plan.base {
        Some(b) => shown.push_str(&format!("  on top of rx-node commit {}\n", b.id())),
        None => shown.push_str("  as the first commit of a new rx-node branch\n"),
    }
    if !prep.stray.is_empty() {
        shown.push_str(&format!(
            "  stays local (never published): {}\n",
            prep.stray.join(", ")
        ));
    }
    confirm(ctx, &shown, id)?;
    // From here on a Ctrl-C / SIGTERM no longer kills the process half-way through a
    // ref update (which left a stale `rx-node.lock`) or between the local commit and
    // its state record: it is honoured before the push.
    let cancel = crate::term::cancel_flag("publish");

    // Commit without a checkout — exactly the LOG_META that was shown and checked.
    let sig = signature(&repo)?;
    let subtree = result_subtree(&repo, &prep, &log_meta)?;
    let mut add = plan.carry.clone();
    add.insert(key.clone(), subtree);
    let msg = commit_message(&prep, &plan.carry);
    let commit = build_commit(&repo, plan.base.as_ref(), &add, &msg, &sig)?;
    set_rx_node(&repo, tips.local, commit)?;
    let at = now_iso();
    state::update(paths, |s| {
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
        paths,
        &Entry::new("published")
            .task(id.as_str())
            .sha(&prep.task_sha256)
            .commit(&commit.to_string())
            .detail(json!({"ref": RX_NODE_REF, "pushed": false, "status": prep.status, "node": prep.node,
                "files": files.iter().map(|(n, s)| json!({"path": format!("{RESULTS_DIR}/{key}/{n}"), "bytes": s})).collect::<Vec<_>>()})),
    )?;

    let mut final_commit = commit;
    let mut attempts = 0;
    if push && cancel.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(anyhow::anyhow!(
            "interrupted before the push: {id} is committed on the local {RX_NODE_REF} ({commit}); `rxnode publish {id} --push` pushes it"
        ));
    }
    if push {
        let started = std::time::Instant::now();
        let outcome = push_with_retry(&repo, remote, &refspec, &key, commit, &msg, &sig);
        match outcome {
            Ok((c, n)) => {
                final_commit = c;
                attempts = n;
                record_push(paths, &repo, id, &prep.task_sha256, remote, c, n, started)?;
            }
            Err(e) => {
                // The local commit stands (state says not pushed).
                let c = repo
                    .refname_to_id(RX_NODE_REF)
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
                return Err(e.context(format!(
                    "committed {id} on {RX_NODE_REF} locally but the push to {remote} failed"
                )));
            }
        }
    }

    if ctx.json {
        let out = json!({
            "task_id": id.as_str(),
            "node": prep.node,
            "status": prep.status,
            "ref": RX_NODE_REF,
            "commit": final_commit.to_string(),
            "pushed": push,
            "push_attempts": attempts,
            "files": files.iter().map(|(n, s)| json!({"path": format!("{RESULTS_DIR}/{key}/{n}"), "bytes": s})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!();
        println!(
            "published {id} from node {} as {RX_NODE_REF} commit {final_commit}",
            prep.node
        );
        if push {
            println!("pushed to {remote} in {attempts} attempt(s)");
        } else {
            println!("not pushed; run `rxnode publish` with --push for the next result, or push rx-node yourself");
        }
    }
    Ok(Outcome::Done)
}

/// Show what is about to happen and read one line: only the exact
/// `PUBLISH <TASK_ID>` (line terminator stripped) goes ahead.
fn confirm(ctx: &Ctx, shown: &str, id: &TaskId) -> Result<()> {
    let prompt = format!("{shown}Type exactly `PUBLISH {id}` to go ahead: ");
    if ctx.json {
        eprint!("{prompt}");
    } else {
        print!("{prompt}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    let expected = format!("PUBLISH {id}");
    let Some(answer) = crate::term::read_line_lossy(&mut std::io::stdin().lock())
        .context("cannot read the confirmation from stdin")?
    else {
        return Err(refused(format!(
            "no confirmation (end of input); `{expected}` was required; nothing was written"
        )));
    };
    if answer != expected {
        let shown: String = answer.chars().take(60).collect();
        return Err(refused(format!(
            "confirmation {shown:?} is not exactly `{expected}`; nothing was written"
        )));
    }
    Ok(())
}

/// After a push landed: this task and every earlier unpushed publication now
/// on the remote are recorded as pushed, with the commit that carried them.
#[allow(clippy::too_many_arguments)]
fn record_push(
    paths: &Paths,
    repo: &Repository,
    id: &TaskId,
    task_sha256: &str,
    remote: &str,
    c: Oid,
    attempts: u32,
    started: std::time::Instant,
) -> Result<()> {
    let landed = result_entries(repo, Some(&repo.find_commit(c)?))?;
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
        &Entry::new("pushed")
            .task(id.as_str())
            .sha(task_sha256)
            .commit(&c.to_string())
            .detail(
                json!({"ref": RX_NODE_REF, "remote": remote, "attempts": attempts,
                "elapsed_ms": started.elapsed().as_millis() as u64}),
            ),
    )
}

/// Whether `landed` holds `rx-results/<id>/` with the very tree that the
/// local commit `local` (a record's commit) holds there.
fn same_result(repo: &Repository, landed: &BTreeMap<String, Oid>, id: &str, local: &str) -> bool {
    let Some(mine) = Oid::from_str(local)
        .and_then(|o| repo.find_commit(o))
        .ok()
        .and_then(|c| result_entries(repo, Some(&c)).ok())
    else {
        return false;
    };
    // The record's result is `<id>` (the old layout) or `<id>/<node>`: every such
    // entry of the local commit must have landed with the very same tree.
    let prefix = format!("{id}/");
    let keys: Vec<&String> = mine
        .keys()
        .filter(|k| k.as_str() == id || k.starts_with(&prefix))
        .collect();
    !keys.is_empty() && keys.iter().all(|k| landed.get(*k) == mine.get(*k))
}

/// `publish <ID> --push` for a result committed earlier without `--push`:
/// push the local `rx-node` (confirmed again), rebuilding on the remote tip if needed.
fn push_pending(ctx: &Ctx, paths: &Paths, id: &TaskId, rec: &PublishRecord) -> Result<Outcome> {
    let repo = Repository::open(&ctx.repo).with_context(|| {
        format!(
            "cannot open the checkout {} as a Git repository",
            ctx.repo.display()
        )
    })?;
    refuse_if_rx_node_checked_out(&repo)?;
    let remote = ctx.source.remote.as_str();
    let refspec = rx_node_refspec(&ctx.source.branch).map_err(|e| refused(e.0))?;
    // A fresh remote-tracking tip: only what the remote lacks is checked and sent.
    fetch_rx_node(&repo, remote).context("before pushing")?;
    let tip = repo.refname_to_id(RX_NODE_REF).map_err(|_| {
        refused(format!(
            "{id} was committed as {} but the local rx-node is gone",
            rec.commit
        ))
    })?;
    let tip_commit = repo.find_commit(tip)?;
    // The key this node's record committed: `<id>/<node>` in the recorded commit
    // (or `<id>` from before node names).
    let recorded = Oid::from_str(&rec.commit)
        .ok()
        .and_then(|o| repo.find_commit(o).ok())
        .map(|c| result_entries(&repo, Some(&c)))
        .transpose()?
        .unwrap_or_default();
    let node = crate::store::node::load_name(paths)?;
    let key = node
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
        .unwrap_or_else(|| id.as_str().to_owned());
    if !result_entries(&repo, Some(&tip_commit))?.contains_key(&key) {
        return Err(refused(format!(
            "the local rx-node ({tip}) no longer holds {RESULTS_DIR}/{key}/; not pushed"
        )));
    }
    let shown = format!(
        "Push the local rx-node ({tip}), which holds {RESULTS_DIR}/{key}/ (committed {} at {}), to {remote}.\n",
        rec.commit, rec.at
    );
    confirm(ctx, &shown, id)?;
    // As in `publish`: a signal must not kill a ref update half-way.
    let _ = crate::term::cancel_flag("publish");
    let msg = tip_commit.message().unwrap_or("rx-results").to_owned();
    let sig = signature(&repo)?;
    let started = std::time::Instant::now();
    let (c, n) = push_with_retry(&repo, remote, &refspec, &key, tip, &msg, &sig)
        .map_err(|e| e.context(format!("the push of {id} to {remote} failed")))?;
    let sha = repo_task_sha(paths, id);
    record_push(paths, &repo, id, &sha, remote, c, n, started)?;
    if ctx.json {
        let out = json!({"task_id": id.as_str(), "ref": RX_NODE_REF, "commit": c.to_string(),
            "pushed": true, "push_attempts": n});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!();
        println!("pushed {id} as {RX_NODE_REF} commit {c} to {remote} in {n} attempt(s)");
    }
    Ok(Outcome::Done)
}

/// The approved SHA-256 of a task, for ledger entries (empty when unknown).
fn repo_task_sha(paths: &Paths, id: &TaskId) -> String {
    state::load(paths)
        .ok()
        .and_then(|s| s.approvals.get(id.as_str()).map(|a| a.task_sha256.clone()))
        .unwrap_or_default()
}

/// Read and check everything in the outbox; every refusal names its reason.
fn prepare(ctx: &Ctx, paths: &Paths, st: &state::State, id: &TaskId) -> Result<Prepared> {
    let approval = st.approvals.get(id.as_str()).ok_or_else(|| {
        refused(format!(
            "task {id} was never approved on this node; only approved tasks are published"
        ))
    })?;
    let node = crate::store::node::require_name(paths, "a published result")?;
    let dir = paths.outbox(id);
    let rel = format!(".local/rx_agent_outbox/{id}");
    if !dir.is_dir() {
        return Err(refused(format!(
            "no outbox {rel}/ for task {id}; a result file is missing"
        )));
    }
    let task_path = dir.join("TASK.md");
    let bytes = crate::validate::read_task_file(&task_path)
        .map_err(|e| refused(format!("{rel}/TASK.md: {e:#}")))?;
    let task = crate::validate::check(&bytes, &ctx.source.branch).map_err(|issues| {
        let list: Vec<String> = issues
            .iter()
            .map(|i| {
                let line = i.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                let field = i
                    .field
                    .as_deref()
                    .map(|f| format!("{f}: "))
                    .unwrap_or_default();
                format!("{line}{field}{}", i.message)
            })
            .collect();
        refused(format!(
            "{rel}/TASK.md no longer validates: {}",
            list.join("; ")
        ))
    })?;
    if task.id() != id {
        return Err(refused(format!(
            "{rel}/TASK.md is task {}, not {id}",
            task.id()
        )));
    }
    if !approval.covers(&task) {
        return Err(refused(format!(
            "the approval of {id} (SHA-256 {}) does not cover {rel}/TASK.md (SHA-256 {})",
            approval.task_sha256,
            task.sha256()
        )));
    }
    if task.header().allow_push != AllowPush::RxResultOnly {
        return Err(refused(format!(
            "task {id} says ALLOW_PUSH = {}; publishing needs ALLOW_PUSH = RX_RESULT_ONLY",
            task.header().allow_push.as_str()
        )));
    }
    let meta_text = std::fs::read_to_string(dir.join("TASK.meta.json"))
        .map_err(|e| refused(format!("{rel}/TASK.meta.json: {e}")))?;
    let meta: TaskMeta = serde_json::from_str(&meta_text)
        .map_err(|e| refused(format!("{rel}/TASK.meta.json: {e}")))?;
    if meta.task_id != id.as_str() {
        return Err(refused(format!(
            "{rel}/TASK.meta.json: task_id {:?} is not {id}",
            meta.task_id
        )));
    }
    if !approval.commit.is_empty() && meta.commit != approval.commit {
        return Err(refused(format!(
            "{rel}/TASK.meta.json: commit {} is not the approved commit {}",
            meta.commit, approval.commit
        )));
    }
    if meta.task_sha256 != task.sha256() {
        return Err(refused(format!(
            "{rel}/TASK.meta.json: task_sha256 {} does not match TASK.md ({})",
            meta.task_sha256,
            task.sha256()
        )));
    }

    let mut problems = Vec::new();
    let md = read_result_file(&dir, MD, &mut problems);
    let json_text = read_result_file(&dir, JSON, &mut problems);
    let (Some(md), Some(json_text)) = (md, json_text) else {
        return Err(refused(format!("{rel}: {}", problems.join("; "))));
    };
    let json: Value = match serde_json::from_str(&json_text) {
        Ok(v) => v,
        Err(e) => return Err(refused(format!("{rel}/{JSON} is not JSON: {e}"))),
    };
    let mut allowed = sha256_fields(&json);
    allowed.insert(task.sha256().to_owned());
    // The Markdown's trailer names the SHA-256 of the JSON bytes.
    allowed.insert(rxnode_interlock::sha256_hex(json_text.as_bytes()));
    let checkout = checkout_paths(&ctx.repo);
    for (name, text) in [(MD, &md), (JSON, &json_text)] {
        problems.extend(scan_result(name, text, &allowed, &checkout));
    }
    let status = json
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    problems.extend(agreement(id, &json, &md));
    match json.get("node").and_then(|n| n.get("name")) {
        None | Some(Value::Null) => {}
        Some(Value::String(n)) if *n == node => {}
        Some(other) => problems.push(format!(
            "{JSON} was written by node {other} but this node is named {node:?}; \
             a result is published under the node that produced it \
             (`rxnode node set-name {}` names the node back to publish it)",
            other.as_str().unwrap_or("NAME")
        )),
    }
    problems.extend(schema_check(&dir.join(JSON), &ctx.repo));
    if !problems.is_empty() {
        return Err(refused(format!(
            "{} problem(s) in {rel}: {}",
            problems.len(),
            problems.join("; ")
        )));
    }
    let mut stray = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n != MD && n != JSON {
                stray.push(n);
            }
        }
    }
    stray.sort();
    Ok(Prepared {
        id: id.clone(),
        title: task.header().task_title.clone(),
        source_branch: task.header().source_branch.clone(),
        task_sha256: task.sha256().to_owned(),
        approved_at: approval.at.clone(),
        meta,
        md,
        json_text,
        json,
        status,
        stray,
        node,
    })
}

/// The forms of the checkout's absolute path that must never be published:
/// as given (when absolute) and canonicalized, without a trailing separator.
/// Where the checkout lives is private whatever its root folder is called.
fn checkout_paths(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let canonical = dir.canonicalize().ok();
    for p in [Some(dir.to_path_buf()), canonical].into_iter().flatten() {
        if !p.is_absolute() {
            continue;
        }
        let s = p.to_string_lossy();
        let s = s.trim_end_matches(['/', '\\']);
        if s.len() > 1 && !out.iter().any(|o: &String| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

/// The publication scan of one result file, shared by `prepare` and the
/// push gate [`check_outgoing`]: the checkout's own absolute path first, then
/// every [`scan_text`] finding. Each problem names the file.
fn scan_result(
    name: &str,
    text: &str,
    allowed: &std::collections::BTreeSet<String>,
    checkout: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    let own = checkout.iter().any(|c| text.contains(c.as_str()));
    if own {
        problems.push(format!("{name} contains this checkout's absolute path"));
    }
    for f in scan_text(text, allowed) {
        // The checkout's own path is already named, more precisely.
        if own && f.kind == "absolute local path" {
            continue;
        }
        problems.push(format!("{name} {f}"));
    }
    problems
}

/// Read one result file with the byte checks; the problem is pushed on failure.
fn read_result_file(dir: &Path, name: &str, problems: &mut Vec<String>) -> Option<String> {
    let p = dir.join(name);
    let meta = match std::fs::symlink_metadata(&p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(format!("{name} is missing"));
            return None;
        }
        Err(e) => {
            problems.push(format!("{name}: {e}"));
            return None;
        }
    };
    if !meta.is_file() {
        problems.push(format!("{name} is not a regular file"));
        return None;
    }
    if meta.len() > MAX_FILE_BYTES {
        problems.push(format!(
            "{name} is {} bytes; at most {MAX_FILE_BYTES} (256 KiB) may be published",
            meta.len()
        ));
        return None;
    }
    match std::fs::read(&p) {
        Ok(b) => match check_bytes(name, &b) {
            Ok(t) => Some(t),
            Err(e) => {
                problems.push(e);
                None
            }
        },
        Err(e) => {
            problems.push(format!("{name}: {e}"));
            None
        }
    }
}

/// The overall status named by the Markdown: the first line mentioning
/// "status" that carries one of the six status words.
fn md_status(md: &str) -> Option<&'static str> {
    md.lines()
        .filter(|l| l.to_ascii_lowercase().contains("status"))
        .find_map(|l| {
            STATUSES.iter().copied().find(|s| {
                l.match_indices(s).any(|(i, _)| {
                    let before = l[..i].chars().next_back();
                    let after = l[i + s.len()..].chars().next();
                    let word =
                        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                    !word(before) && !word(after)
                })
            })
        })
}

/// The JSON and the Markdown agree on the task ID and the overall status.
fn agreement(id: &TaskId, json: &Value, md: &str) -> Vec<String> {
    let mut out = Vec::new();
    match json.get("task_id").and_then(Value::as_str) {
        Some(t) if t == id.as_str() => {}
        Some(t) => out.push(format!("{JSON}: task_id {t:?} is not {id}")),
        None => out.push(format!("{JSON}: task_id missing")),
    }
    if !md.contains(id.as_str()) {
        out.push(format!("{MD} does not name task {id}"));
    }
    let js = json.get("status").and_then(Value::as_str);
    match (js, md_status(md)) {
        (Some(j), Some(m)) if j == m => {}
        (Some(j), Some(m)) => out.push(format!("{JSON} says status {j} but {MD} says {m}")),
        (_, None) => out.push(format!("{MD} names no overall status")),
        (None, _) => out.push(format!("{JSON}: status missing")),
    }
    out
}

/// Minimal schema check of `RX_RESULT.json`.
/// The full `validate-result` checks (schema, statuses, timeline, MD/JSON agreement, IQ hashes).
fn schema_check(json_path: &Path, checkout: &Path) -> Vec<String> {
    crate::result::validate_result_files(json_path, checkout)
}

/// The node name to publish: the result's own `node.hostname` (null by
/// default, docs/decisions.md), reduced to `[A-Za-z0-9._-]`; `None` when the
/// result names no host. Publication never reads this machine's host name.
fn published_node(json: &Value) -> Option<String> {
    let h: String = json
        .get("node")
        .and_then(|n| n.get("hostname"))
        .and_then(Value::as_str)?
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .collect();
    (!h.is_empty()).then_some(h)
}

/// The author when Git has no `user.name`/`user.email`: no host name in it.
const FALLBACK_AUTHOR: (&str, &str) = ("rxnode", "rxnode@localhost.invalid");

/// `LOG_META.json`: small, path-free metadata about this publication.
fn make_log_meta(paths: &Paths, prep: &Prepared) -> Result<String> {
    let entries: Vec<Value> = ledger::read_all(paths)?
        .into_iter()
        .filter(|e| e.get("task_id").and_then(Value::as_str) == Some(prep.id.as_str()))
        .map(|e| {
            let mut o = serde_json::Map::new();
            for k in ["at", "event", "commit"] {
                if let Some(v) = e.get(k) {
                    o.insert(k.to_owned(), v.clone());
                }
            }
            Value::Object(o)
        })
        .collect();
    let total = entries.len();
    let excerpt: Vec<Value> = entries.into_iter().rev().take(100).rev().collect();
    let count = |k: &str| {
        prep.json
            .get(k)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    if let Some(checks) = prep.json.get("checks").and_then(Value::as_array) {
        for c in checks {
            let s = c.get("status").and_then(Value::as_str).unwrap_or("?");
            *by_status.entry(s.to_owned()).or_default() += 1;
        }
    }
    let tl = |k: &str| {
        prep.json
            .get("timeline")
            .and_then(|t| t.get(k))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let v = json!({
        "schema_version": 1,
        "task_id": prep.id.as_str(),
        "task_sha256": prep.task_sha256,
        "source_branch": prep.meta.source_branch.clone().unwrap_or_else(|| prep.source_branch.clone()),
        "source_commit": prep.meta.commit,
        "status": prep.status,
        "rxnode_version": env!("CARGO_PKG_VERSION"),
        "node": published_node(&prep.json),
        "node_name": prep.node,
        "timeline": {
            "approved_at": prep.meta.approved_at.clone().unwrap_or_else(|| prep.approved_at.clone()),
            "started_at": tl("started_at"),
            "completed_at": tl("completed_at"),
            "published_at": now_iso(),
        },
        "counts": {
            "checks": count("checks"),
            "checks_by_status": by_status,
            "captures": count("captures"),
            "errors": count("errors"),
            "ledger_entries": total,
        },
        "files": [
            {"name": MD, "bytes": prep.md.len(), "sha256": sha256_hex(prep.md.as_bytes())},
            {"name": JSON, "bytes": prep.json_text.len(), "sha256": sha256_hex(prep.json_text.as_bytes())},
        ],
        "ledger": excerpt,
    });
    let mut s = serde_json::to_string_pretty(&v)?;
    s.push('\n');
    Ok(s)
}

/// Our own `LOG_META.json` must pass the same scanner as the results.
fn check_log_meta(prep: &Prepared, text: &str) -> Result<()> {
    let v: Value = serde_json::from_str(text).context("LOG_META.json")?;
    let mut allowed = sha256_fields(&v);
    allowed.insert(prep.task_sha256.clone());
    let f = scan_text(text, &allowed);
    if let Err(e) = check_bytes(LOG_META, text.as_bytes()) {
        return Err(refused(e));
    }
    if f.is_empty() {
        Ok(())
    } else {
        let list: Vec<String> = f.iter().map(|f| f.to_string()).collect();
        Err(refused(format!("{LOG_META} {}", list.join("; "))))
    }
}

fn refuse_if_rx_node_checked_out(repo: &Repository) -> Result<()> {
    let on_rx_node = |r: &Repository| {
        r.find_reference("HEAD")
            .is_ok_and(|h| h.symbolic_target() == Some(RX_NODE_REF))
    };
    if on_rx_node(repo) {
        return Err(refused(
            "the checkout has rx-node checked out; publishing would change its work tree — switch back to your branch first",
        ));
    }
    // Linked worktrees (`git worktree add … rx-node`) share the branch too.
    for name in repo.worktrees()?.iter().flatten() {
        let wt = repo.find_worktree(name)?;
        if let Ok(r) = Repository::open_from_worktree(&wt) {
            if on_rx_node(&r) {
                return Err(refused(format!(
                    "the linked worktree {} has rx-node checked out; publishing would change its work tree",
                    wt.path().display()
                )));
            }
        }
    }
    Ok(())
}

/// The local and remote-tracking `rx-node` tips.
struct Tips {
    local: Option<Oid>,
    tracking: Option<Oid>,
}

impl Tips {
    fn read(repo: &Repository, remote: &str) -> Result<Tips> {
        let get = |name: &str| -> Result<Option<Oid>> {
            match repo.refname_to_id(name) {
                Ok(o) => Ok(Some(o)),
                Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
                Err(e) => Err(e).with_context(|| format!("cannot read {name}")),
            }
        };
        Ok(Tips {
            local: get(RX_NODE_REF)?,
            tracking: get(&tracking_ref(remote))?,
        })
    }
}

fn tracking_ref(remote: &str) -> String {
    format!("refs/remotes/{remote}/rx-node")
}

/// The parent of the new commit and the local-only results carried onto it.
struct BasePlan<'r> {
    base: Option<Commit<'r>>,
    carry: BTreeMap<String, Oid>,
}

/// Pick the newest of the local and remote-tracking tips; when they have
/// diverged, build on the remote one and carry the local-only results over.
fn plan_base<'r>(repo: &'r Repository, tips: &Tips) -> Result<BasePlan<'r>> {
    let (base, other) = match (tips.local, tips.tracking) {
        (None, None) => (None, None),
        (Some(l), None) => (Some(l), None),
        (None, Some(t)) => (Some(t), None),
        (Some(l), Some(t)) => {
            if l == t || repo.graph_descendant_of(l, t)? {
                (Some(l), None)
            } else if repo.graph_descendant_of(t, l)? {
                (Some(t), None)
            } else {
                (Some(t), Some(l))
            }
        }
    };
    let base = base.map(|o| repo.find_commit(o)).transpose()?;
    let carry = match (&base, other) {
        (Some(b), Some(o)) => local_additions(repo, o, b)?,
        _ => BTreeMap::new(),
    };
    Ok(BasePlan { base, carry })
}

/// Results added by the commits of `local` that `onto` lacks, and not in `onto`.
///
/// A local-only result whose ID `onto` already holds with a *different* tree
/// (another node published the same ID) is refused, naming the ID: leaving it
/// out would lose it silently, and carrying it would overwrite theirs.
/// The same tree on both sides is simply already there.
fn local_additions(repo: &Repository, local: Oid, onto: &Commit) -> Result<BTreeMap<String, Oid>> {
    let lc = repo.find_commit(local)?;
    let mine = result_entries(repo, Some(&lc))?;
    let before = match repo.merge_base(local, onto.id()) {
        Ok(mb) => result_entries(repo, Some(&repo.find_commit(mb)?))?,
        Err(e) if e.code() == ErrorCode::NotFound => BTreeMap::new(),
        Err(e) => return Err(e.into()),
    };
    let theirs = result_entries(repo, Some(onto))?;
    let mut out = BTreeMap::new();
    for (k, tree) in mine {
        if before.contains_key(&k) {
            continue;
        }
        match theirs.get(&k) {
            None => {
                out.insert(k, tree);
            }
            Some(t) if *t == tree => {}
            Some(t) => {
                return Err(refused(format!(
                    "{RESULTS_DIR}/{k}/ on the local rx-node ({local}, tree {tree}) differs from \
                     {RESULTS_DIR}/{k}/ on the remote rx-node ({}, tree {t}): another node published \
                     {k} too; a result is never overwritten nor dropped, so nothing was pushed — \
                     resolve {k} by hand (the local rx-node still holds it)",
                    onto.id()
                )));
            }
        }
    }
    Ok(out)
}

/// Results under `rx-results/` of a commit: key → tree id. A per-node result
/// `rx-results/<ID>/<NODE>/` is keyed `<ID>/<NODE>`; a result of the layout before
/// node names (files directly in `rx-results/<ID>/`) is keyed `<ID>`.
fn result_entries(repo: &Repository, c: Option<&Commit>) -> Result<BTreeMap<String, Oid>> {
    let mut out = BTreeMap::new();
    let Some(c) = c else { return Ok(out) };
    let tree = c.tree()?;
    let Some(e) = tree.get_name(RESULTS_DIR) else {
        return Ok(out);
    };
    let sub = e.to_object(repo)?;
    let Some(sub) = sub.as_tree() else {
        return Ok(out);
    };
    for e in sub.iter() {
        let Some(n) = e.name() else { continue };
        let Ok(idtree) = repo.find_tree(e.id()) else {
            out.insert(n.to_owned(), e.id());
            continue;
        };
        let mut legacy = false;
        for f in idtree.iter() {
            match (f.kind(), f.name()) {
                (Some(git2::ObjectType::Tree), Some(node)) => {
                    out.insert(format!("{n}/{node}"), f.id());
                }
                _ => legacy = true,
            }
        }
        if legacy || idtree.is_empty() {
            out.insert(n.to_owned(), e.id());
        }
    }
    Ok(out)
}

/// The `rx-results/<ID>/` tree with exactly the three files.
fn result_subtree(repo: &Repository, prep: &Prepared, log_meta: &str) -> Result<Oid> {
    let mut tb = repo.treebuilder(None)?;
    for (name, text) in [
        (MD, prep.md.as_str()),
        (JSON, prep.json_text.as_str()),
        (LOG_META, log_meta),
    ] {
        let blob = repo.blob(text.as_bytes())?;
        tb.insert(name, blob, 0o100644)?;
    }
    Ok(tb.write()?)
}

/// A commit on `parent` whose tree is the parent's plus the `add` results.
fn build_commit(
    repo: &Repository,
    parent: Option<&Commit>,
    add: &BTreeMap<String, Oid>,
    msg: &str,
    sig: &git2::Signature,
) -> Result<Oid> {
    let ptree = parent.map(|p| p.tree()).transpose()?;
    let old_results = match &ptree {
        Some(t) => match t.get_name(RESULTS_DIR) {
            Some(e) => e.to_object(repo)?.into_tree().ok(),
            None => None,
        },
        None => None,
    };
    let mut rb = repo.treebuilder(old_results.as_ref())?;
    for (name, oid) in add {
        let exists = || {
            refused(format!(
                "{RESULTS_DIR}/{name}/ already exists on rx-node; a result is never overwritten"
            ))
        };
        match name.split_once('/') {
            // The old layout: the result is the whole `rx-results/<ID>/`.
            None => {
                if rb.get(name)?.is_some() {
                    return Err(exists());
                }
                rb.insert(name, *oid, 0o040000)?;
            }
            // `rx-results/<ID>/<NODE>/`, beside the other nodes' results for <ID>.
            Some((id, node)) => {
                let old_id = match rb.get(id)? {
                    Some(e) => Some(repo.find_tree(e.id()).map_err(|_| {
                        refused(format!(
                            "{RESULTS_DIR}/{id} on rx-node is not a folder; nothing is written over it"
                        ))
                    })?),
                    None => None,
                };
                let mut ib = repo.treebuilder(old_id.as_ref())?;
                if ib.get(node)?.is_some() {
                    return Err(exists());
                }
                ib.insert(node, *oid, 0o040000)?;
                let idtree = ib.write()?;
                rb.insert(id, idtree, 0o040000)?;
            }
        }
    }
    let results = rb.write()?;
    let mut top = repo.treebuilder(ptree.as_ref())?;
    top.insert(RESULTS_DIR, results, 0o040000)?;
    let tree = repo.find_tree(top.write()?)?;
    let parents: Vec<&Commit> = parent.into_iter().collect();
    Ok(repo.commit(None, sig, sig, msg, &tree, &parents)?)
}

/// Move `refs/heads/rx-node` from `old` (compare-and-swap) to `new`.
fn set_rx_node(repo: &Repository, old: Option<Oid>, new: Oid) -> Result<()> {
    let msg = "rxnode publish";
    match old {
        Some(o) => repo.reference_matching(RX_NODE_REF, new, true, o, msg),
        None => repo.reference(RX_NODE_REF, new, false, msg),
    }
    .with_context(|| format!("cannot move {RX_NODE_REF} (changed by someone else meanwhile?)"))?;
    Ok(())
}

fn signature(repo: &Repository) -> Result<git2::Signature<'static>> {
    match repo.signature() {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Ok(git2::Signature::now(FALLBACK_AUTHOR.0, FALLBACK_AUTHOR.1)?),
    }
}

fn commit_message(prep: &Prepared, carry: &BTreeMap<String, Oid>) -> String {
    let mut m = format!(
        "rx-results: {} ({}) from {}\n\nTask: {}\nNode-Name: {}\nTask-SHA256: {}\nSource-Commit: {}\n",
        prep.id, prep.status, prep.node, prep.id, prep.node, prep.task_sha256, prep.meta.commit,
    );
    if let Some(n) = published_node(&prep.json) {
        m.push_str(&format!("Node: {n}\n"));
    }
    m.push_str(&format!("rxnode: {}\n", env!("CARGO_PKG_VERSION")));
    if let Some(b) = &prep.meta.blob {
        m.push_str(&format!("Task-Blob: {b}\n"));
    }
    if !carry.is_empty() {
        m.push_str(&format!(
            "Carried-Over: {}\n",
            carry.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    m
}

/// Why a push did not land.
enum PushError {
    /// The remote refused the update (non-fast-forward, lock); worth a rebuild and retry.
    Rejected(String),
    /// Anything else (network, credentials, permissions).
    Failed(anyhow::Error),
}

/// The folder of a remote that lives on this machine (`file://` URL or a
/// plain path), for the compare-and-swap push.
fn local_remote_path(url: &str) -> Option<std::path::PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        // `file:///C:/x` on Windows names `C:/x`.
        let b = rest.as_bytes();
        let rest = if cfg!(windows) && b.len() > 2 && b[0] == b'/' && b[2] == b':' {
            &rest[1..]
        } else {
            rest
        };
        return Some(std::path::PathBuf::from(rest));
    }
    if url.contains("://") {
        return None;
    }
    let p = Path::new(url);
    // `host:path` (scp-like ssh) is not local unless it names an existing folder.
    (p.is_absolute() || !url.contains(':'))
        .then(|| p.to_path_buf())
        .filter(|p| p.is_dir())
}

/// The path a diff entry names (the new side, else the old one, for a deletion).
pub(crate) fn delta_path(d: &git2::DiffDelta<'_>) -> String {
    d.new_file()
        .path()
        .or_else(|| d.old_file().path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The last gate before a push: every commit that would leave this machine
/// (from `tip` back to, not including, the remote-tracking `known` tip) must
/// have one parent and only *add* `rx-results/<ID>/{RX_RESULT.md,
/// RX_RESULT.json, LOG_META.json}` as regular files that pass the same size,
/// binary, secret and absolute-path checks as a fresh publication. A commit
/// made by hand on the local `rx-node` (a note, an IQ file, a changed result)
/// is refused, naming it — DESIGN §6 "refuses anything else".
fn check_outgoing(repo: &Repository, tip: Oid, known: Option<Oid>) -> Result<()> {
    // The same checkout-path check as `prepare` (the work tree as opened and
    // canonicalized; the Git folder of a bare repository).
    let checkout = checkout_paths(repo.workdir().unwrap_or_else(|| repo.path()));
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    if let Some(k) = known {
        walk.hide(k)?;
    }
    for oid in walk {
        let oid = oid?;
        let c = repo.find_commit(oid)?;
        let bad = |why: String| {
            refused(format!(
                "rx-node commit {oid} is not a plain result publication: {why}; not pushed"
            ))
        };
        if c.parent_count() > 1 {
            return Err(bad("it is a merge".into()));
        }
        let old = match c.parent_count() {
            0 => None,
            _ => Some(c.parent(0)?.tree()?),
        };
        let new = c.tree()?;
        let diff = repo.diff_tree_to_tree(old.as_ref(), Some(&new), None)?;
        for d in diff.deltas() {
            let path = delta_path(&d);
            if d.status() != git2::Delta::Added {
                return Err(bad(format!("{path} is {:?}, not added", d.status())));
            }
            let parts: Vec<&str> = path.split('/').collect();
            // `rx-results/<ID>/<NODE>/<file>`, or `rx-results/<ID>/<file>` from
            // before node names (a local publication not pushed yet).
            let shape_ok = (3..=4).contains(&parts.len())
                && parts[0] == RESULTS_DIR
                && TaskId::parse(parts[1]).is_ok()
                && (parts.len() == 3 || crate::store::node::check_name(parts[2]).is_ok())
                && [MD, JSON, LOG_META].contains(&parts[parts.len() - 1]);
            if !shape_ok {
                return Err(bad(format!(
                    "{path} is not one of {RESULTS_DIR}/<ID>/<NODE>/{{{MD}, {JSON}, {LOG_META}}}"
                )));
            }
            let dir = parts[..parts.len() - 1].join("/");
            if d.new_file().mode() != git2::FileMode::Blob {
                return Err(bad(format!("{path} is not a regular file")));
            }
            let blob = repo.find_blob(d.new_file().id())?;
            let text = check_bytes(&path, blob.content()).map_err(bad)?;
            // SHA-256 values named by the sibling JSON files (and the result's own
            // hash, which the Markdown trailer carries) are not secrets — as in
            // a fresh publication.
            let mut allowed = std::collections::BTreeSet::new();
            for sibling in [JSON, LOG_META] {
                let sp = format!("{dir}/{sibling}");
                let Ok(e) = new.get_path(Path::new(&sp)) else {
                    continue;
                };
                let Ok(b) = repo.find_blob(e.id()) else {
                    continue;
                };
                if sibling == JSON {
                    allowed.insert(sha256_hex(b.content()));
                }
                if let Ok(v) = serde_json::from_slice::<Value>(b.content()) {
                    allowed.extend(sha256_fields(&v));
                }
            }
            if let Some(p) = scan_result(&path, &text, &allowed, &checkout)
                .into_iter()
                .next()
            {
                return Err(bad(p));
            }
        }
    }
    Ok(())
}

/// Issue 18: this checkout pushes results under its own node name only. A commit
/// that would leave the machine adding `rx-results/<ID>/<OTHER>/…` for a node name
/// other than this node's is refused (a laptop never speaks for another node).
fn check_outgoing_node(repo: &Repository, tip: Oid, known: Option<Oid>) -> Result<()> {
    let Some(own) = repo
        .workdir()
        .map(Paths::new)
        .and_then(|p| crate::store::node::load_name(&p).ok().flatten())
    else {
        return Ok(()); // no name: nothing new is published (prepare refuses)
    };
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    if let Some(k) = known {
        walk.hide(k)?;
    }
    for oid in walk {
        let oid = oid?;
        let c = repo.find_commit(oid)?;
        let old = match c.parent_count() {
            0 => None,
            _ => Some(c.parent(0)?.tree()?),
        };
        let diff = repo.diff_tree_to_tree(old.as_ref(), Some(&c.tree()?), None)?;
        for d in diff.deltas() {
            let path = d
                .new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let parts: Vec<&str> = path.split('/').collect();
            if parts.len() == 4 && parts[0] == RESULTS_DIR && parts[2] != own {
                return Err(refused(format!(
                    "rx-node commit {oid} adds {path}, a result under node name {:?}, but this node is {own:?}; \
                     a node publishes only its own results — not pushed",
                    parts[2]
                )));
            }
        }
    }
    Ok(())
}

fn push_once(
    repo: &Repository,
    remote: &str,
    spec: &PushRefspec,
    ours: Oid,
) -> Result<(), PushError> {
    // Whatever path led here (a fresh result, a carried one, an earlier local
    // publication), only result files may leave this machine.
    let known = repo.refname_to_id(&tracking_ref(remote)).ok();
    check_outgoing(repo, ours, known).map_err(PushError::Failed)?;
    check_outgoing_node(repo, ours, known).map_err(PushError::Failed)?;
    let mut r = repo
        .find_remote(remote)
        .map_err(|e| PushError::Failed(anyhow::anyhow!("remote {remote}: {}", e.message())))?;
    if let Some(path) = r.url().and_then(local_remote_path) {
        return push_local_cas(repo, &path, spec, ours);
    }
    let status: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let res = {
        let mut cb = remote_callbacks(repo.config().ok());
        cb.push_update_reference(|name, st| {
            if let Some(s) = st {
                *status.borrow_mut() = Some(format!("{name}: {s}"));
            }
            Ok(())
        });
        let mut opts = git2::PushOptions::new();
        opts.remote_callbacks(cb);
        r.push(&[spec.as_str()], Some(&mut opts))
    };
    let url = r.url().map(redact_url).unwrap_or_default();
    match res {
        Err(e) => {
            let m = e.message().to_owned();
            if e.code() == ErrorCode::NotFastForward || is_race(&m) {
                Err(PushError::Rejected(m))
            } else {
                Err(PushError::Failed(anyhow::anyhow!(
                    "push to {url} failed: {m}"
                )))
            }
        }
        Ok(()) => match status.into_inner() {
            None => Ok(()),
            // Whether it is a race is decided after a fetch (see push_with_retry).
            Some(s) => Err(PushError::Rejected(format!(
                "{url} rejected the update: {s}"
            ))),
        },
    }
}

/// The one list of rejection phrases that mean "someone else moved the
/// branch or holds its lock" (matched as whole words by [`is_race`]).
const RACE_PHRASES: [&str; 10] = [
    "fast-forward",
    "fastforward",
    "non-fastforwardable",
    "fetch first",
    "lock",
    "locked",
    "stale",
    "failed to update ref",
    "changed meanwhile",
    "already exists",
];

/// Whether a rejection message means a race: worth a rebuild and retry even
/// when a fetch does not show a new tip yet. Used both to classify a push
/// error and to decide whether to retry. Phrases match as whole words only,
/// so "lock" does not match "blocked" (a permanent rejection).
fn is_race(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    RACE_PHRASES.iter().any(|k| {
        m.match_indices(k).any(|(i, _)| {
            !word(m[..i].chars().next_back()) && !word(m[i + k.len()..].chars().next())
        })
    })
}

/// Push to a repository on this machine with a compare-and-swap ref update.
///
/// libgit2's local transport overwrites the remote ref without comparing it
/// to the value it listed, so two nodes pushing at once could lose one
/// publication. Here the missing objects are copied, then the remote
/// `refs/heads/rx-node` is moved only if it still holds the value our commit
/// descends from (under the ref's lock file, as `git receive-pack` does).
fn push_local_cas(
    repo: &Repository,
    path: &Path,
    spec: &PushRefspec,
    ours: Oid,
) -> Result<(), PushError> {
    let fail = |m: String| PushError::Failed(anyhow::anyhow!(m));
    if spec.as_str() != format!("{RX_NODE_REF}:{RX_NODE_REF}") {
        return Err(fail(format!("refspec {spec} refused")));
    }
    let dst = Repository::open(path).map_err(|e| {
        fail(format!(
            "cannot open the remote repository {}: {}",
            path.display(),
            e.message()
        ))
    })?;
    // This path writes the remote's refs itself (no receive-pack, so no hooks):
    // never under a work tree that has rx-node checked out.
    if !dst.is_bare()
        && dst
            .find_reference("HEAD")
            .is_ok_and(|h| h.symbolic_target() == Some(RX_NODE_REF))
    {
        return Err(PushError::Failed(refused(format!(
            "the remote {} is a checkout with rx-node checked out; pushing would change its work tree",
            path.display()
        ))));
    }
    let old = match dst.refname_to_id(RX_NODE_REF) {
        Ok(o) => Some(o),
        Err(e) if e.code() == ErrorCode::NotFound => None,
        Err(e) => {
            return Err(fail(format!(
                "cannot read the remote {RX_NODE_REF}: {}",
                e.message()
            )))
        }
    };
    if let Some(o) = old {
        let known = repo.find_commit(o).is_ok();
        if !known || !(o == ours || repo.graph_descendant_of(ours, o).unwrap_or(false)) {
            return Err(PushError::Rejected(format!(
                "{RX_NODE_REF}: non-fast-forward (remote at {o})"
            )));
        }
        if o == ours {
            return Ok(());
        }
    }
    copy_objects(repo, &dst, ours, old)
        .map_err(|e| fail(format!("cannot copy objects to {}: {e:#}", path.display())))?;
    let res = match old {
        Some(o) => dst.reference_matching(RX_NODE_REF, ours, true, o, "rxnode publish (push)"),
        None => dst.reference(RX_NODE_REF, ours, false, "rxnode publish (push)"),
    };
    match res {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::Modified | ErrorCode::Locked | ErrorCode::Exists
            ) =>
        {
            Err(PushError::Rejected(format!(
                "{RX_NODE_REF}: {} (changed meanwhile)",
                e.message()
            )))
        }
        Err(e) => Err(fail(format!(
            "cannot move the remote {RX_NODE_REF}: {}",
            e.message()
        ))),
    }
}

/// Copy the commits from `tip` back to (excluding) `have`, with their trees
/// and blobs, into `dst` (objects it already has are skipped).
fn copy_objects(src: &Repository, dst: &Repository, tip: Oid, have: Option<Oid>) -> Result<()> {
    let sodb = src.odb()?;
    let dodb = dst.odb()?;
    let mut walk = src.revwalk()?;
    walk.push(tip)?;
    if let Some(h) = have {
        walk.hide(h)?;
    }
    fn copy_tree(sodb: &git2::Odb, dodb: &git2::Odb, src: &Repository, t: Oid) -> Result<()> {
        if dodb.exists(t) {
            return Ok(()); // a tree present in a valid repository is complete
        }
        let tree = src.find_tree(t)?;
        for e in tree.iter() {
            match e.kind() {
                Some(git2::ObjectType::Tree) => copy_tree(sodb, dodb, src, e.id())?,
                Some(git2::ObjectType::Blob) if !dodb.exists(e.id()) => {
                    let o = sodb.read(e.id())?;
                    dodb.write(o.kind(), o.data())?;
                }
                _ => {}
            }
        }
        let o = sodb.read(t)?;
        dodb.write(o.kind(), o.data())?;
        Ok(())
    }
    let mut commits = Vec::new();
    for c in walk {
        commits.push(c?);
    }
    // Parents first, each commit after its tree.
    for c in commits.into_iter().rev() {
        if dodb.exists(c) {
            continue;
        }
        copy_tree(&sodb, &dodb, src, src.find_commit(c)?.tree_id())?;
        let o = sodb.read(c)?;
        dodb.write(o.kind(), o.data())?;
    }
    Ok(())
}

/// Fetch the remote `rx-node` into its remote-tracking ref; its tip, if any.
fn fetch_rx_node(repo: &Repository, remote: &str) -> Result<Option<Oid>> {
    let mut r = repo
        .find_remote(remote)
        .with_context(|| format!("remote {remote}"))?;
    let mut opts = git2::FetchOptions::new();
    opts.remote_callbacks(remote_callbacks(repo.config().ok()));
    let spec = format!("+{RX_NODE_REF}:{}", tracking_ref(remote));
    r.fetch(&[spec.as_str()], Some(&mut opts), None)
        .map_err(|e| {
            anyhow::anyhow!(
                "fetch of rx-node from {} failed: {}",
                r.url().map(redact_url).unwrap_or_default(),
                e.message()
            )
        })?;
    match repo.refname_to_id(&tracking_ref(remote)) {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Push, and after a rejection (or a push that did not stick) fetch,
/// rebuild the one commit on the new tip and retry, with jitter.
/// Returns the commit that landed and the number of attempts.
fn push_with_retry(
    repo: &Repository,
    remote: &str,
    spec: &PushRefspec,
    id: &str,
    first: Oid,
    msg: &str,
    sig: &git2::Signature,
) -> Result<(Oid, u32)> {
    use rand::Rng;
    let mut ours = first;
    let mut last = String::new();
    for attempt in 1..=MAX_PUSH_ATTEMPTS {
        match push_once(repo, remote, spec, ours) {
            Ok(()) => {
                // Verify it stuck (a file-URL remote updates without compare-and-swap).
                let tip = fetch_rx_node(repo, remote)?;
                if let Some(t) = tip {
                    if t == ours || repo.graph_descendant_of(t, ours)? {
                        return Ok((ours, attempt));
                    }
                }
                last = "the remote rx-node moved past the pushed commit without it".to_owned();
            }
            Err(PushError::Failed(e)) => return Err(e),
            Err(PushError::Rejected(m)) => last = m,
        }
        tracing::info!(
            "push attempt {attempt} of {id} rejected ({last}); rebuilding on the new tip"
        );
        let jitter = {
            let cap = (50u64 << attempt.min(6)).min(2000);
            rand::thread_rng().gen_range(10..=cap)
        };
        std::thread::sleep(std::time::Duration::from_millis(jitter));
        let tip = fetch_rx_node(repo, remote)?;
        let moved = match tip {
            None => false,
            Some(t) if t == ours || repo.graph_descendant_of(t, ours)? => {
                return Ok((ours, attempt));
            }
            Some(t) => !repo.graph_descendant_of(ours, t)?,
        };
        let Some(tip) = tip.filter(|_| moved) else {
            // The remote did not move: a rejection that is not a race is final.
            if is_race(&last) {
                continue;
            }
            return Err(anyhow::anyhow!(
                "the push of {RX_NODE_REF} was rejected: {last}"
            ));
        };
        let base = repo.find_commit(tip)?;
        if result_entries(repo, Some(&base))?.contains_key(id) {
            return Err(refused(format!(
                "{RESULTS_DIR}/{id}/ appeared on the remote rx-node (commit {tip}) from another publisher; not overwritten"
            )));
        }
        let add = local_additions(repo, ours, &base)?;
        let rebuilt = build_commit(repo, Some(&base), &add, msg, sig)?;
        set_rx_node(repo, Some(ours), rebuilt)?;
        ours = rebuilt;
    }
    Err(anyhow::anyhow!(
        "push of {RX_NODE_REF} not accepted after {MAX_PUSH_ATTEMPTS} attempts (last: {last})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_status_reads_the_overall_line() {
        assert_eq!(md_status("# X\n\n**Status:** NOT RUN\n"), Some("NOT RUN"));
        assert_eq!(
            md_status("| check | status |\n|---|---|\nOverall status: `PASS`"),
            Some("PASS")
        );
        assert_eq!(md_status("status: PASSED"), None);
        assert_eq!(md_status("no word here PASS"), None);
    }

    #[test]
    fn agreement_finds_disagreement() {
        let id = TaskId::parse("T1").unwrap();
        let j = json!({"task_id": "T1", "status": "PASS"});
        assert!(agreement(&id, &j, "# T1\nStatus: PASS\n").is_empty());
        assert_eq!(agreement(&id, &j, "# T1\nStatus: FAIL\n").len(), 1);
        assert_eq!(
            agreement(
                &id,
                &json!({"task_id": "T2", "status": "PASS"}),
                "# T1\nStatus: PASS"
            )
            .len(),
            1
        );
        assert_eq!(agreement(&id, &j, "# other\nStatus: PASS").len(), 1);
    }

    #[test]
    fn local_remotes_are_recognised() {
        let d = tempfile::TempDir::new().unwrap();
        let p = d.path().display().to_string();
        assert!(local_remote_path(&format!("file://{p}")).is_some());
        assert_eq!(local_remote_path(&p), Some(d.path().to_path_buf()));
        assert!(local_remote_path("git@example.com:lab/rx.git").is_none());
        assert!(local_remote_path("https://example.com/lab/rx.git").is_none());
        assert!(local_remote_path("ssh://git@example.com/lab/rx.git").is_none());
        assert!(local_remote_path("git://127.0.0.1:9418/rx.git").is_none());
    }

    #[test]
    fn races_are_told_from_final_rejections() {
        assert!(is_race("cannot push non-fastforwardable reference"));
        assert!(is_race("refs/heads/rx-node: failed to update ref"));
        assert!(is_race("refs/heads/rx-node: fetch first"));
        assert!(is_race("failed to lock file"));
        assert!(!is_race("refs/heads/rx-node: pre-receive hook declined"));
        assert!(!is_race("refs/heads/rx-node: protected branch"));
        // Review of session 2 (finding 4): whole words only — "lock" is not
        // "blocked", so a permanent rejection is not retried.
        assert!(!is_race("refs/heads/rx-node: push blocked by policy"));
        assert!(!is_race("Blocked: rx-node is frozen"));
        assert!(!is_race("unlockable"));
        assert!(is_race("refs/heads/rx-node.lock: file exists"));
        assert!(is_race("the index is locked"));
        assert!(is_race("! [rejected] rx-node (non-fast-forward)"));
        assert!(is_race("refs/heads/rx-node: stale info"));
        assert!(is_race("failed to update ref 'refs/heads/rx-node'"));
    }

    /// Review of session 2 (finding 1): a same-ID result from another node is
    /// neither carried, dropped silently, nor recorded as this node's push.
    #[test]
    fn a_same_id_result_with_another_tree_is_refused_and_not_marked_pushed() {
        let d = tempfile::TempDir::new().unwrap();
        let repo = Repository::init_bare(d.path()).unwrap();
        let sig = git2::Signature::now("t", "t@localhost.invalid").unwrap();
        let sub = |text: &str| {
            let mut tb = repo.treebuilder(None).unwrap();
            let b = repo.blob(text.as_bytes()).unwrap();
            tb.insert(MD, b, 0o100644).unwrap();
            tb.write().unwrap()
        };
        let one = |id: &str, text: &str| {
            let add = BTreeMap::from([(id.to_owned(), sub(text))]);
            build_commit(&repo, None, &add, "m", &sig).unwrap()
        };
        let mine = one("RX_X", "mine");
        let theirs = one("RX_X", "theirs");
        let same = one("RX_X", "theirs");
        let tc = repo.find_commit(theirs).unwrap();
        let landed = result_entries(&repo, Some(&tc)).unwrap();
        assert!(!same_result(&repo, &landed, "RX_X", &mine.to_string()));
        assert!(same_result(&repo, &landed, "RX_X", &same.to_string()));
        assert!(!same_result(&repo, &landed, "RX_Y", &same.to_string()));
        assert!(!same_result(&repo, &landed, "RX_X", "not a commit"));
        let err = local_additions(&repo, mine, &tc).unwrap_err();
        assert!(err.downcast_ref::<Refused>().is_some(), "{err:#}");
        assert!(format!("{err:#}").contains("RX_X"), "{err:#}");
        // The identical tree is already there: nothing to carry, no refusal.
        assert!(local_additions(&repo, same, &tc).unwrap().is_empty());
    }

    /// Review of session 2 (finding 2): the checkout's own path is refused by
    /// the one scanner that both `prepare` and the push gate use, also when no
    /// fixed pattern names its root folder.
    #[test]
    fn the_checkout_path_is_found_by_the_shared_scanner() {
        let d = tempfile::TempDir::new().unwrap();
        let forms = checkout_paths(d.path());
        let canonical = d.path().canonicalize().unwrap();
        let canonical = canonical.to_string_lossy();
        assert!(forms.iter().any(|f| f == canonical.as_ref()), "{forms:?}");
        assert!(forms.iter().all(|f| !f.ends_with('/')), "{forms:?}");
        assert!(checkout_paths(Path::new("relative/dir")).is_empty());
        let lab = vec!["/lab/bench-3/rx".to_owned()];
        let none = std::collections::BTreeSet::new();
        let p = scan_result(MD, "IQ in /lab/bench-3/rx/.local/rx_iq\n", &none, &lab);
        assert_eq!(p, [format!("{MD} contains this checkout's absolute path")]);
        assert!(scan_result(MD, "IQ kept locally\n", &none, &lab).is_empty());
    }

    /// Review of session 2 (finding 3): the published node name is the
    /// result's `node.hostname` only, and the fallback author names no host.
    #[test]
    fn the_published_node_comes_from_the_result_only() {
        assert_eq!(published_node(&json!({"node": {"hostname": null}})), None);
        assert_eq!(published_node(&json!({"status": "PASS"})), None);
        assert_eq!(
            published_node(&json!({"node": {"hostname": "rx-laptop-2"}})),
            Some("rx-laptop-2".to_owned())
        );
        assert_eq!(
            published_node(&json!({"node": {"hostname": "bad\nTask: X"}})),
            Some("badTaskX".to_owned())
        );
        assert_eq!(published_node(&json!({"node": {"hostname": "\n"}})), None);
        assert_eq!(FALLBACK_AUTHOR.1, "rxnode@localhost.invalid");
    }

    #[test]
    fn schema_hook_names_missing_fields() {
        let d = tempfile::TempDir::new().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, r#"{"task_id":"T1","status":"MAYBE"}"#).unwrap();
        let probs = schema_check(&p, d.path());
        assert!(
            probs.iter().any(|p| p.contains("schema_version")),
            "{probs:?}"
        );
        assert!(probs.iter().any(|p| p.contains("MAYBE")), "{probs:?}");
    }
}
