//! Reading the outbox for a publication: the approved task, its
//! `TASK.meta.json`, the two result files with every content check, and the
//! third file this publication writes, `LOG_META.json`.
use super::checks::{agreement, checkout_paths, read_result_file, scan_result, schema_check};
use super::prepared::{published_node, Prepared};
use crate::context::Ctx;
use crate::exit::refused;
use crate::git::scan::sha256_fields;
use crate::result::{RESULT_JSON as JSON, RESULT_MD as MD};
use crate::store::fsutil::now_iso;
use crate::store::ledger;
use crate::store::outbox::TaskMeta;
use crate::store::paths::Paths;
use crate::store::state;
use anyhow::Result;
use rxnode_interlock::{sha256_hex, AllowPush, Approval, TaskId, ValidTask};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The two result files, read and checked.
struct ResultFiles {
    md: String,
    json_text: String,
    json: Value,
    status: String,
}

/// The SHA-256 values the result files carry that are not secrets: the JSON's
/// SHA-256 fields, the SHA-256 of the JSON bytes (the Markdown's trailer names it),
/// and the trailer's own `json_sha256=` value whether or not it matches — rxnode's
/// hash line, whose disagreement with the JSON the agreement checks refuse.
fn own_hashes(json: &Value, json_text: &str, md: &str) -> std::collections::BTreeSet<String> {
    let mut allowed = sha256_fields(json);
    allowed.insert(sha256_hex(json_text.as_bytes()));
    if let Some(h) = crate::result::trailer_json_sha256(md) {
        allowed.insert(h.to_owned());
    }
    allowed
}

/// One task's outbox folder and the name it is shown by in refusals.
struct Outbox {
    dir: PathBuf,
    /// `.local/rx_agent_outbox/<ID>`.
    rel: String,
}

/// Read and check everything in the outbox; every refusal names its reason.
pub(super) fn prepare(
    ctx: &Ctx,
    paths: &Paths,
    st: &state::State,
    id: &TaskId,
) -> Result<Prepared> {
    let approval = st.approvals.get(id.as_str()).ok_or_else(|| {
        refused(format!(
            "task {id} was never approved on this node; only approved tasks are published"
        ))
    })?;
    let node = crate::store::node::require_name(paths, "a published result")?;
    let out = Outbox {
        dir: paths.outbox(id),
        rel: format!(".local/rx_agent_outbox/{id}"),
    };
    if !out.dir.is_dir() {
        return Err(refused(format!(
            "no outbox {}/ for task {id}; a result file is missing",
            out.rel
        )));
    }
    // A `mark-completed` killed before both result files were in place: the files
    // are the approval's, the operator's, or one of each; it is given again.
    // (A completed task's folder is a leftover its command could not remove.)
    let approved = st.tasks.get(id.as_str()).map(|r| r.status) == Some(state::TaskStatus::Approved);
    if let Some(why) = approved
        .then(|| crate::result::interrupted_completion(paths, id))
        .flatten()
    {
        return Err(refused(why));
    }
    let task = out.approved_task(ctx, id, approval)?;
    let meta = out.meta(id, approval, &task)?;
    let files = out.result_files(ctx, id, &task, &node)?;
    Ok(Prepared {
        id: id.clone(),
        title: task.header().task_title.clone(),
        source_branch: task.header().source_branch.clone(),
        task_sha256: task.sha256().to_owned(),
        approved_at: approval.at.clone(),
        meta,
        md: files.md,
        json_text: files.json_text,
        json: files.json,
        status: files.status,
        stray: out.stray(),
        node,
    })
}

impl Outbox {
    /// `TASK.md`: still valid, the same ID, covered by the approval, and
    /// allowed to publish its result.
    fn approved_task(&self, ctx: &Ctx, id: &TaskId, approval: &Approval) -> Result<ValidTask> {
        let rel = &self.rel;
        let task_path = self.dir.join("TASK.md");
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
        Ok(task)
    }

    /// `TASK.meta.json`: the same task, the approved commit, the same text.
    fn meta(&self, id: &TaskId, approval: &Approval, task: &ValidTask) -> Result<TaskMeta> {
        let rel = &self.rel;
        let meta_text = crate::store::fsutil::read_to_string(self.dir.join("TASK.meta.json"))
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
        Ok(meta)
    }

    /// `RX_RESULT.md` and `RX_RESULT.json`: the byte and content scan, the
    /// agreement of the two, the node that wrote them, and the full schema.
    fn result_files(
        &self,
        ctx: &Ctx,
        id: &TaskId,
        task: &ValidTask,
        node: &str,
    ) -> Result<ResultFiles> {
        let (dir, rel) = (&self.dir, &self.rel);
        let mut problems = Vec::new();
        let md = read_result_file(dir, MD, &mut problems);
        let json_text = read_result_file(dir, JSON, &mut problems);
        let (Some(md), Some(json_text)) = (md, json_text) else {
            return Err(refused(format!("{rel}: {}", problems.join("; "))));
        };
        let json: Value = match serde_json::from_str(&json_text) {
            Ok(v) => v,
            Err(e) => return Err(refused(format!("{rel}/{JSON} is not JSON: {e}"))),
        };
        let mut allowed = own_hashes(&json, &json_text, &md);
        allowed.insert(task.sha256().to_owned());
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
        problems.extend(node_mismatch(&json, node));
        problems.extend(schema_check(&dir.join(JSON), &ctx.repo));
        if !problems.is_empty() {
            return Err(refused(format!(
                "{} problem(s) in {rel}: {}",
                problems.len(),
                problems.join("; ")
            )));
        }
        Ok(ResultFiles {
            md,
            json_text,
            json,
            status,
        })
    }

    /// The other files of the outbox, sorted: they stay local.
    fn stray(&self) -> Vec<String> {
        let mut stray = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&self.dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n != MD && n != JSON {
                    stray.push(n);
                }
            }
        }
        stray.sort();
        stray
    }
}

/// A result written by another node than this one is not published under it.
fn node_mismatch(json: &Value, node: &str) -> Option<String> {
    match json.get("node").and_then(|n| n.get("name")) {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) if *n == node => None,
        Some(other) => Some(format!(
            "{JSON} was written by node {other} but this node is named {node:?}; \
             a result is published under the node that produced it \
             (`rxnode node set-name {}` names the node back to publish it)",
            other.as_str().unwrap_or("NAME")
        )),
    }
}

/// A `TASK.meta.json` value, where an empty one counts as absent.
fn given(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// `LOG_META.json`: small, path-free metadata about this publication
/// ([`LogMeta`], `rxnode schema log-meta`).
pub(super) fn make_log_meta(paths: &Paths, prep: &Prepared) -> Result<String> {
    use super::log_meta::{Counts, FileEntry, LedgerLine, LogMeta, Timeline, LOG_META_SCHEMA};
    // The task's last 100 lines, the ledger read as a stream.
    let mut total = 0usize;
    let mut excerpt = std::collections::VecDeque::new();
    ledger::each_in(&paths.ledger(), |e| {
        if e.task_id.as_deref() != Some(prep.id.as_str()) {
            return;
        }
        total += 1;
        if excerpt.len() == 100 {
            excerpt.pop_front();
        }
        excerpt.push_back(LedgerLine {
            at: e.at,
            commit: e.commit,
            event: e.event,
        });
    })?;
    let excerpt: Vec<LedgerLine> = excerpt.into();
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
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let v = LogMeta {
        counts: Counts {
            captures: count("captures"),
            checks: count("checks"),
            checks_by_status: by_status,
            errors: count("errors"),
            ledger_entries: total,
        },
        files: vec![
            FileEntry {
                bytes: prep.md.len(),
                name: MD.to_owned(),
                sha256: sha256_hex(prep.md.as_bytes()),
            },
            FileEntry {
                bytes: prep.json_text.len(),
                name: JSON.to_owned(),
                sha256: sha256_hex(prep.json_text.as_bytes()),
            },
        ],
        ledger: excerpt,
        node: published_node(&prep.json),
        node_name: prep.node.clone(),
        rxnode_version: env!("CARGO_PKG_VERSION").to_owned(),
        schema_version: LOG_META_SCHEMA,
        source_branch: given(&prep.meta.source_branch)
            .unwrap_or(&prep.source_branch)
            .to_owned(),
        source_commit: prep.meta.commit.clone(),
        status: prep.status.clone(),
        task_id: prep.id.as_str().to_owned(),
        task_sha256: prep.task_sha256.clone(),
        timeline: Timeline {
            approved_at: given(&prep.meta.approved_at)
                .unwrap_or(&prep.approved_at)
                .to_owned(),
            completed_at: tl("completed_at"),
            published_at: now_iso(),
            started_at: tl("started_at"),
        },
    };
    let mut s = serde_json::to_string_pretty(&v)?;
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mark-completed` killed between its two moves left the operator's Markdown
    /// (its trailer hashing the new JSON) beside the approval's JSON: besides "the
    /// files disagree", the refusal listed the trailer's own `json_sha256=` line as
    /// a possible secret. The trailer's hash is rxnode's, matching or not; a 64-hex
    /// value elsewhere in the Markdown is still flagged.
    #[test]
    fn the_result_trailers_own_hash_is_never_called_a_possible_secret() {
        let json_text = "{\"status\": \"NOT RUN\"}\n";
        let json: Value = serde_json::from_str(json_text).unwrap();
        let other = sha256_hex(b"the operator's JSON");
        let secret = sha256_hex(b"a hex key");
        let md = format!(
            "# RX result\n\nkey {secret}\n\n<!-- rxnode-result schema_version=1 task_id=M1 \
             status=\"PASS\" json_sha256={other} -->\n"
        );
        let found = crate::git::scan::scan_text(&md, &own_hashes(&json, json_text, &md));
        let lines: Vec<usize> = found.iter().map(|f| f.line).collect();
        assert_eq!(lines, [3], "{found:?}");
        assert_eq!(
            crate::result::trailer_json_sha256(&md),
            Some(other.as_str())
        );
        assert_eq!(crate::result::trailer_json_sha256("json_sha256=ab"), None);
    }
}
