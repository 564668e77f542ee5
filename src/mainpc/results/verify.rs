//! `results verify ID`: one fetched result checked as the RX node's publish
//! step would — its files, the validator, LOG_META, and the commit that added it.
use super::fetched::{Fetched, Found};
use super::text::shown;
use super::tree::{adding_commits, read_small};
use crate::exit::{bad_input, Outcome};
use crate::git::publish::log_meta::LogMeta;
use crate::result::{SignatureRecord, LOG_META, RESULTS_DIR, RESULT_JSON, RESULT_MD};
use anyhow::{Context, Result};
use git2::{ObjectType, Oid, Repository};
use rxnode_interlock::sha256_hex;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The checks of one fetched result; empty = verified.
pub(super) fn verify_one(
    fetched: &super::fetched::Fetched<'_>,
    tip: Oid,
    f: &Found,
    added: &BTreeMap<String, (Oid, Oid)>,
) -> Vec<String> {
    let repo = fetched.repo;
    let mut problems = check_entries(repo, f);
    let mut blobs = BTreeMap::new();
    for name in [RESULT_MD, RESULT_JSON, LOG_META] {
        match read_small(repo, f.tree, name) {
            Ok(b) => {
                blobs.insert(name, b);
            }
            Err(e) => problems.push(format!("{}/{e}", f.path)),
        }
    }
    // The validator on the fetched files (schema, statuses, timeline, MD/JSON agreement).
    if let (Some(md), Some(js)) = (blobs.get(RESULT_MD), blobs.get(RESULT_JSON)) {
        match validate_fetched(md, js) {
            Ok(p) => problems.extend(p.into_iter().map(|p| format!("{}: {p}", f.path))),
            Err(e) => problems.push(format!("{}: cannot check: {e:#}", f.path)),
        }
        let j: Value = serde_json::from_slice(js).unwrap_or(Value::Null);
        if j.get("task_id").and_then(Value::as_str) != Some(f.task_id.as_str()) {
            problems.push(format!(
                "{}/{RESULT_JSON}: task_id is not {}",
                f.path, f.task_id
            ));
        }
        if let Some(d) = &f.dir_node {
            match j.get("node").and_then(|n| n.get("name")) {
                None | Some(Value::Null) => {}
                Some(Value::String(n)) if n == d => {}
                Some(other) => problems.push(format!(
                    "{}/{RESULT_JSON}: node.name {} is not the folder's node {d}",
                    f.path,
                    shown(&other.to_string(), 60)
                )),
            }
        }
        check_task(
            repo,
            &fetched.posted,
            &fetched.ctx.source.branch,
            f,
            &j,
            &mut problems,
        );
        if let Some(lm) = blobs.get(LOG_META) {
            check_log_meta(
                f,
                lm,
                &j,
                [(RESULT_MD, md), (RESULT_JSON, js)],
                &mut problems,
            );
        }
    }
    check_publication(repo, tip, f, added, &mut problems);
    problems
}

/// The task a result answers, as the main PC's clone holds it at the result's
/// `source_commit` (the commit the node ran): that commit must be on the watched
/// branch as this clone has it, holding a task with the result's ID, and when the
/// task names `TARGET_NODES` the result's node must be one of them. A result with
/// no `source_commit`, a commit this clone does not have (a made-up one, or one
/// the watched branch got after this clone's last fetch), a commit only a results
/// branch carried (a peer's own), or one without that task at this clone's task
/// path cannot be tied to a task the main PC posted: not verified, the commit and
/// the fix named. A peer's result copied under another task's ID, or a result for
/// a task that was not for its node, fails here too.
fn check_task(
    repo: &Repository,
    posted: &super::posted::Posted,
    branch: &str,
    f: &Found,
    j: &Value,
    problems: &mut Vec<String>,
) {
    if !j.is_object() {
        // Not JSON: the validator says so; there is no `source_commit` to read.
        return;
    }
    let commit = j.get("source_commit").and_then(Value::as_str);
    if let Some(why) = posted.untied(repo, commit, &f.task_id) {
        return problems.push(format!("{}/{RESULT_JSON}: {why}", f.path));
    }
    let Ok(blob) = posted.task_at(repo, commit) else {
        return;
    };
    let at = format!(
        "{} at the result's source_commit {}",
        posted.task_path(),
        commit.unwrap_or("?")
    );
    // Its node list, from the task as a node would have read it.
    let Ok(task) = crate::validate::check(blob.content(), branch) else {
        return;
    };
    let node = j
        .get("node")
        .and_then(|n| n.get("name"))
        .and_then(Value::as_str);
    if let Some(targets) = &task.header().target_nodes {
        if !node.is_some_and(|n| targets.iter().any(|t| t == n)) {
            problems.push(format!(
                "{}/{RESULT_JSON}: {at} is for TARGET_NODES = {}, not for node {}",
                f.path,
                shown(&targets.join(", "), 200),
                shown(node.unwrap_or("(no name)"), 60)
            ));
        }
    }
}

/// What the result records of the signature of the task it answers
/// (`approval.signature`); `None`: not recorded (an unsigned-era or manual result).
fn task_signature(repo: &Repository, f: &Found) -> Option<SignatureRecord> {
    let js = read_small(repo, f.tree, RESULT_JSON).ok()?;
    let v: Value = serde_json::from_slice(&js).ok()?;
    serde_json::from_value(v.get("approval")?.get("signature")?.clone()).ok()
}

/// One line on the task's signature as the node checked it.
fn signature_text(sig: Option<&SignatureRecord>) -> String {
    match sig {
        None => "signature not recorded by the node".to_owned(),
        Some(s) => match s.status.as_str() {
            "good" => format!(
                "signed: good signature by {} ({}) on commit {}, as the node checked it",
                s.principal.as_deref().unwrap_or("?"),
                s.key_sha256
                    .as_deref()
                    .and_then(crate::signers::fingerprint_of_hex)
                    .unwrap_or_else(|| "?".to_owned()),
                s.commit
            ),
            "unsigned" => format!("unsigned (commit {})", s.commit),
            "openpgp" => format!("signed (OpenPGP, not verified) on commit {}", s.commit),
            other => format!(
                "signature not accepted by the node ({other}) on commit {}",
                s.commit
            ),
        },
    }
}

/// Exactly the three files, regular, within the size bound.
fn check_entries(repo: &Repository, f: &Found) -> Vec<String> {
    let mut problems = Vec::new();
    match repo.find_tree(f.tree) {
        Ok(t) => {
            for e in t.iter() {
                let n = String::from_utf8_lossy(e.name_bytes()).into_owned();
                if f.dir_node.is_none() && e.kind() == Some(ObjectType::Tree) {
                    continue; // per-node results beside an old-layout one
                }
                if ![RESULT_MD, RESULT_JSON, LOG_META].contains(&n.as_str()) {
                    problems.push(format!(
                        "{}/{} is not one of the three result files",
                        f.path,
                        shown(&n, 60)
                    ));
                }
            }
        }
        Err(e) => problems.push(format!("{}: {}", f.path, e.message())),
    }
    problems
}

/// `results verify --json`: the verdict over every result checked.
#[derive(serde::Serialize)]
struct VerifyReport<'a> {
    /// Each result checked.
    results: &'a [Verified],
    /// The fetched `rx-node` tip, when there is one.
    tip: Option<String>,
    /// Every result checked is valid.
    valid: bool,
}

/// One result of `results verify --json`.
#[derive(serde::Serialize)]
struct Verified {
    /// The branch it was read from.
    branch: String,
    /// Whole results the adding commit carries along (its Carried-Over trailer).
    carried: Vec<String>,
    /// The commit that added it, when one was found.
    commit: Option<String>,
    /// The node it is listed under.
    node: Option<String>,
    /// Its folder on the branch.
    path: String,
    /// What does not hold, in words.
    problems: Vec<String>,
    /// The task.
    task_id: String,
    /// The signature check of the task it answers, when the result records one.
    task_signature: Option<SignatureRecord>,
    /// Nothing in `problems`.
    valid: bool,
}

/// LOG_META names this task, this node, the JSON's status, and the size and
/// SHA-256 of each of the two `files` as fetched.
fn check_log_meta(
    f: &Found,
    lm: &[u8],
    j: &Value,
    files: [(&str, &Vec<u8>); 2],
    problems: &mut Vec<String>,
) {
    let m = match serde_json::from_slice::<LogMeta>(lm) {
        Ok(m) => m,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return problems.push(format!("{}/{LOG_META} is not JSON: {e}", f.path));
        }
        Err(e) => {
            return problems.push(format!(
                "{}/{LOG_META} does not match its schema (`rxnode schema log-meta`): {e}",
                f.path
            ));
        }
    };
    if m.task_id != f.task_id.as_str() {
        problems.push(format!(
            "{}/{LOG_META}: task_id is not {}",
            f.path, f.task_id
        ));
    }
    if let Some(d) = &f.dir_node {
        if m.node_name != d.as_str() {
            problems.push(format!("{}/{LOG_META}: node_name is not {d}", f.path));
        }
    }
    if j.get("status").and_then(Value::as_str) != Some(m.status.as_str()) {
        problems.push(format!(
            "{}/{LOG_META}: status disagrees with {RESULT_JSON}",
            f.path
        ));
    }
    for (name, bytes) in files {
        match m.files.iter().find(|x| x.name == name) {
            None => problems.push(format!("{}/{LOG_META} does not list {name}", f.path)),
            Some(x) => {
                if x.sha256 != sha256_hex(bytes) {
                    problems.push(format!(
                        "{}/{LOG_META}: the SHA-256 of {name} disagrees with the file",
                        f.path
                    ));
                }
                if x.bytes != bytes.len() {
                    problems.push(format!(
                        "{}/{LOG_META}: the size of {name} disagrees with the file",
                        f.path
                    ));
                }
            }
        }
    }
}

/// The commit that added it added only this result's three files (or whole results
/// its Carried-Over trailer names: a rebuild after a push race).
fn check_publication(
    repo: &Repository,
    tip: Oid,
    f: &Found,
    added: &BTreeMap<String, (Oid, Oid)>,
    problems: &mut Vec<String>,
) {
    match added.get(&f.path) {
        None => problems.push(format!(
            "{}: no commit on {} ({tip}) adds it",
            f.path, f.source.branch
        )),
        Some((c, tree)) => {
            problems.extend(check_adding_commit(repo, *c, f));
            if *tree != f.tree && f.dir_node.is_some() {
                problems.push(format!(
                    "{}: changed after its publication in {c}: {} now holds another version (a result is never replaced)",
                    f.path, f.source.branch
                ));
            }
        }
    }
}

/// A private temporary folder the fetched files are written to for the result
/// validator: made once per command and reused for every result it checks
/// (removed when dropped).
pub(super) struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub(super) fn new() -> Result<Scratch> {
        let dir = tempfile::TempDir::new().context("cannot create a temporary folder")?;
        // An empty checkout: IQ files live on the RX node, so only their paths and hashes' shape are checked.
        std::fs::create_dir_all(dir.path().join("checkout"))?;
        Ok(Scratch { dir })
    }

    /// Write the fetched files (replacing the previous ones) and run the result validator.
    pub(super) fn validate(&self, md: &[u8], js: &[u8]) -> Result<Vec<String>> {
        let d = self.dir.path();
        let json_path = d.join(RESULT_JSON);
        rxnode_dsp::write_regular(&json_path, js)?;
        rxnode_dsp::write_regular(&d.join(RESULT_MD), md)?;
        let probs = crate::result::validate_result_files(&json_path, &d.join("checkout"));
        let prefix = d.display().to_string();
        Ok(probs
            .into_iter()
            .map(|p| p.replace(&format!("{prefix}/"), "").replace(&prefix, ""))
            .collect())
    }
}

/// Write the fetched files to a private temporary folder and run the result validator.
pub(super) fn validate_fetched(md: &[u8], js: &[u8]) -> Result<Vec<String>> {
    Scratch::new()?.validate(md, js)
}

/// What a publication commit's message says it publishes: its own result
/// (`Task:` + `Node-Name:`) and the whole results a rebuild carried over
/// (`Carried-Over:`), each as `<ID>/<NODE>` (or `<ID>`).
struct Claims {
    primary: Option<String>,
    carried: BTreeSet<String>,
}

impl Claims {
    fn of(msg: &str) -> Claims {
        let trailer = |k: &str| {
            msg.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_owned())
        };
        let primary = match (trailer("Task: "), trailer("Node-Name: ")) {
            (Some(t), Some(n)) => Some(format!("{t}/{n}")),
            (Some(t), None) => Some(t),
            _ => None,
        };
        let carried: BTreeSet<String> = msg
            .lines()
            .filter_map(|l| l.strip_prefix("Carried-Over: "))
            .flat_map(|l| l.split(", ").map(|k| k.trim().to_owned()))
            .collect();
        Claims { primary, carried }
    }

    /// Whether the message names the result `key`.
    fn names(&self, key: &str) -> bool {
        self.primary.as_deref() == Some(key) || self.carried.contains(key)
    }
}

/// The commit `c` that added result `f`: one plain commit whose message names
/// it, adding only its three files and whole results its message names.
fn check_adding_commit(repo: &Repository, c: Oid, f: &Found) -> Vec<String> {
    let mut problems = Vec::new();
    let commit = match repo.find_commit(c) {
        Ok(c) => c,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    if commit.parent_count() > 1 {
        problems.push(format!(
            "{}: added by the merge {c}; a publication is one plain commit",
            f.path
        ));
        return problems;
    }
    let claims = Claims::of(commit.message().unwrap_or(""));
    let key = f
        .path
        .strip_prefix(&format!("{RESULTS_DIR}/"))
        .unwrap_or(&f.path)
        .to_owned();
    if !claims.names(&key) {
        problems.push(format!(
            "commit {c} adds {} but its message names neither it (`Task:`/`Node-Name:`) nor a `Carried-Over:` of it",
            f.path
        ));
    }
    let old = if commit.parent_count() == 1 {
        commit.parent(0).ok().and_then(|p| p.tree().ok())
    } else {
        None
    };
    let new = match commit.tree() {
        Ok(t) => t,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    let diff = match repo.diff_tree_to_tree(old.as_ref(), Some(&new), None) {
        Ok(d) => d,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    let mut own = BTreeSet::new();
    for d in diff.deltas() {
        let added = Added {
            c,
            f,
            key: &key,
            claims: &claims,
        };
        if let Some(p) = added.check(&d, &mut own) {
            problems.push(p);
        }
    }
    for n in [RESULT_MD, RESULT_JSON, LOG_META] {
        if !own.contains(n) {
            problems.push(format!("commit {c} does not add {}/{n}", f.path));
        }
    }
    problems
}

/// One file change of the commit `c` that added result `f` (`key`).
struct Added<'a> {
    c: Oid,
    f: &'a Found,
    key: &'a str,
    claims: &'a Claims,
}

impl Added<'_> {
    /// The problem with change `d`, if any; this result's own files go into `own`.
    fn check(&self, d: &git2::DiffDelta<'_>, own: &mut BTreeSet<String>) -> Option<String> {
        let (c, f, key) = (self.c, self.f, self.key);
        let path = crate::git::publish::delta_path(d);
        if d.status() != git2::Delta::Added {
            let how = match d.status() {
                git2::Delta::Deleted => "deletes",
                git2::Delta::Modified => "modifies",
                git2::Delta::Renamed => "renames",
                git2::Delta::Copied => "copies",
                git2::Delta::Typechange => "changes the type of",
                _ => "changes",
            };
            return Some(format!(
                "commit {c} (which adds {}) also {how} {}: a publication only adds files",
                f.path,
                shown(&path, 120),
            ));
        }
        let parts: Vec<&str> = path.split('/').collect();
        let is_result_file = parts.first() == Some(&RESULTS_DIR)
            && (3..=4).contains(&parts.len())
            && parts
                .last()
                .is_some_and(|n| [RESULT_MD, RESULT_JSON, LOG_META].contains(n));
        let file_key = parts
            .get(1..parts.len().saturating_sub(1))
            .map(|p| p.join("/"))
            .unwrap_or_default();
        if is_result_file && file_key == key {
            own.insert(parts[parts.len() - 1].to_owned());
            return None;
        }
        // Another whole result: the commit's own, or one its trailer says it carried.
        let named = self.claims.names(&file_key);
        (!(is_result_file && named)).then(|| {
            format!(
                "commit {c} (which adds {}) also adds {}: neither this result's three files nor a result its message names",
                f.path,
                shown(&path, 120)
            )
        })
    }
}

/// The other whole results commit `c` adds beside `key` (`<ID>/<NODE>`): what a
/// rebuild after a push race carried over, named in its `Carried-Over:` trailer.
fn carried_by(repo: &Repository, c: Oid, key: &str) -> Vec<String> {
    let Ok(commit) = repo.find_commit(c) else {
        return Vec::new();
    };
    let old = commit.parent(0).ok().and_then(|p| p.tree().ok());
    let (Ok(new), true) = (commit.tree(), commit.parent_count() <= 1) else {
        return Vec::new();
    };
    let Ok(diff) = repo.diff_tree_to_tree(old.as_ref(), Some(&new), None) else {
        return Vec::new();
    };
    let mut keys = BTreeSet::new();
    for d in diff.deltas() {
        let path = crate::git::publish::delta_path(&d);
        let parts: Vec<&str> = path.split('/').collect();
        if parts.first() == Some(&RESULTS_DIR) && (3..=4).contains(&parts.len()) {
            let k = parts[1..parts.len() - 1].join("/");
            if k != key {
                keys.insert(k);
            }
        }
    }
    keys.into_iter().collect()
}

/// `results verify ID [--from NODE]`: exit 0 when every result of the task verifies, 2 otherwise.
pub(super) fn cmd_verify(fetched: &Fetched<'_>, found: &[Found]) -> Result<Outcome> {
    let (ctx, repo) = (fetched.ctx, fetched.repo);
    if !fetched.any() {
        return Err(bad_input(fetched.none_yet()));
    }
    // The commits that added each result, per branch read.
    let mut by_branch: BTreeMap<String, BTreeMap<String, (Oid, Oid)>> = BTreeMap::new();
    for f in found {
        if !by_branch.contains_key(&f.source.branch) {
            by_branch.insert(
                f.source.branch.clone(),
                adding_commits(repo, &f.source, &fetched.budget)?,
            );
        }
    }
    let empty = BTreeMap::new();
    let mut reports = Vec::new();
    let mut all_ok = true;
    for f in found {
        let tip = f.source.tip;
        let added = by_branch.get(&f.source.branch).unwrap_or(&empty);
        let mut problems = verify_one(fetched, tip, f, added);
        if let Some(why) = fetched.rewritten.get(&f.source.branch) {
            problems.push(format!(
                "{}: read from {}, which {why}",
                f.path, f.source.branch
            ));
        }
        all_ok &= problems.is_empty();
        let key = f
            .path
            .strip_prefix(&format!("{RESULTS_DIR}/"))
            .unwrap_or(&f.path);
        let carried = added
            .get(&f.path)
            .map(|(c, _)| carried_by(repo, *c, key))
            .unwrap_or_default();
        let signature = task_signature(repo, f);
        reports.push(Verified {
            branch: f.source.branch.clone(),
            carried,
            commit: added.get(&f.path).map(|(c, _)| c.to_string()),
            node: f.node(repo),
            path: f.path.clone(),
            valid: problems.is_empty(),
            problems,
            task_id: f.task_id.clone(),
            task_signature: signature,
        });
    }
    let out = VerifyReport {
        results: &reports,
        tip: fetched.tip.map(|t| t.to_string()),
        valid: all_ok,
    };
    // The verdict is the status: a closed pipe (`| head`) does not change it.
    ctx.report_to_pipe(&super::text::safe_json(&out)?, |_| {
        let mut text = String::new();
        for r in &reports {
            let node = r.node.as_deref().unwrap_or("(unnamed)");
            let commit = r.commit.as_deref().unwrap_or("?");
            let carried = &r.carried;
            let what = if carried.is_empty() {
                "adds only its three files".to_owned()
            } else {
                format!(
                    "adds its three files and carries {} whole result(s) its Carried-Over trailer names: {}",
                    carried.len(),
                    carried.join(", ")
                )
            };
            if r.valid {
                let _ = writeln!(
                    text,
                    "OK   {} from {node}: schema, MD/JSON agreement, LOG_META and commit {commit} ({what})",
                    r.path
                );
            } else {
                let _ = writeln!(text, "FAIL {} from {node}:", r.path);
                for p in &r.problems {
                    let _ = writeln!(text, "  - {}", shown(p, 400));
                }
            }
            let _ = writeln!(
                text,
                "     task: {}",
                shown(&signature_text(r.task_signature.as_ref()), 400)
            );
        }
        text
    })?;
    Ok(if all_ok {
        Outcome::Done
    } else {
        Outcome::Code(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mainpc::results::fetched::Source;
    use std::rc::Rc;

    fn found() -> Found {
        Found {
            task_id: "T_1".into(),
            dir_node: Some("LAB-A".into()),
            tree: Oid::zero(),
            path: "rx-results/T_1/LAB-A".into(),
            source: Rc::new(Source::shared(Oid::zero())),
        }
    }

    fn meta(md: &[u8], json: &[u8]) -> serde_json::Value {
        serde_json::json!({
            "counts": {"captures": 0, "checks": 0, "checks_by_status": {}, "errors": 0, "ledger_entries": 0},
            "files": [
                {"name": RESULT_MD, "bytes": md.len(), "sha256": sha256_hex(md)},
                {"name": RESULT_JSON, "bytes": json.len(), "sha256": sha256_hex(json)},
            ],
            "ledger": [], "node": null, "node_name": "LAB-A", "rxnode_version": "0",
            "schema_version": 1, "source_branch": "b", "source_commit": "c",
            "status": "PASS", "task_id": "T_1", "task_sha256": "s",
            "timeline": {"approved_at": "a", "completed_at": null, "published_at": "p", "started_at": null},
        })
    }

    fn problems(lm: &serde_json::Value, md: &Vec<u8>, json: &Vec<u8>) -> Vec<String> {
        let j: Value = serde_json::from_slice(json).unwrap_or_default();
        let mut p = Vec::new();
        check_log_meta(
            &found(),
            lm.to_string().as_bytes(),
            &j,
            [(RESULT_MD, md), (RESULT_JSON, json)],
            &mut p,
        );
        p
    }

    /// `LOG_META.json` is read through its one type: a file that agrees with the
    /// result passes, and a field of the wrong type is named as a schema mismatch
    /// (`rxnode schema log-meta`) instead of passing unread or reading as absent.
    #[test]
    fn log_meta_is_read_through_its_type_and_a_wrong_field_is_named() {
        let (md, json) = (b"# T_1\n".to_vec(), br#"{"status": "PASS"}"#.to_vec());
        let good = meta(&md, &json);
        assert_eq!(problems(&good, &md, &json), Vec::<String>::new());
        let mut bad = good.clone();
        bad["files"][0]["bytes"] = serde_json::json!("6");
        let p = problems(&bad, &md, &json);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("LOG_META.json does not match its schema (`rxnode schema log-meta`)")
                && p[0].contains("invalid type: string \"6\""),
            "{p:?}"
        );
        let mut other = good.clone();
        other["files"][1]["sha256"] = serde_json::json!("00");
        other["node_name"] = serde_json::json!("LAB-B");
        let p = problems(&other, &md, &json);
        assert!(
            p.iter()
                .any(|m| m.contains("the SHA-256 of RX_RESULT.json disagrees"))
                && p.iter().any(|m| m.contains("node_name is not LAB-A")),
            "{p:?}"
        );
        assert!(
            problems(&serde_json::json!([1]), &md, &json)[0].contains("does not match its schema")
        );
    }
}
