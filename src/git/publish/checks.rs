//! The content checks of a publication: the byte and secret scan of each
//! result file, the Markdown/JSON agreement, the schema, our own
//! `LOG_META.json`, and the push gate over every commit that would leave this
//! machine.
use super::prepared::Prepared;
use crate::exit::refused;
use crate::git::scan::{check_bytes, scan_text, sha256_fields, MAX_FILE_BYTES};
use crate::result::{Status, RESULT_JSON as JSON, RESULT_MD as MD};
use crate::result::{LOG_META, RESULTS_DIR};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use rxnode_interlock::{sha256_hex, TaskId};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The order the Markdown's status line is searched in (`NOT RUN` first, as
/// it always was): the six [`Status`] words of `src/result/`.
const MD_STATUS_ORDER: [Status; 6] = [
    Status::NotRun,
    Status::Pass,
    Status::Fail,
    Status::Partial,
    Status::Skip,
    Status::Blocked,
];

/// The forms of the checkout's absolute path that must never be published:
/// as given (when absolute) and canonicalized, without a trailing separator.
/// Where the checkout lives is private whatever its root folder is called.
pub(super) fn checkout_paths(dir: &Path) -> Vec<String> {
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
pub(super) fn scan_result(
    name: &str,
    text: &str,
    allowed: &BTreeSet<String>,
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
pub(super) fn read_result_file(
    dir: &Path,
    name: &str,
    problems: &mut Vec<String>,
) -> Option<String> {
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
    match crate::store::fsutil::read(&p) {
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
            MD_STATUS_ORDER.iter().map(|s| s.as_str()).find(|s| {
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
pub(super) fn agreement(id: &TaskId, json: &Value, md: &str) -> Vec<String> {
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
pub(super) fn schema_check(json_path: &Path, checkout: &Path) -> Vec<String> {
    crate::result::validate_result_files(json_path, checkout)
}

/// Our own `LOG_META.json` must pass the same scanner as the results.
pub(super) fn check_log_meta(prep: &Prepared, text: &str) -> Result<()> {
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

/// The last gate before a push: every commit that would leave this machine
/// (from `tip` back to, not including, the remote-tracking `known` tip) must
/// have one parent and only *add* `rx-results/<ID>/{RX_RESULT.md,
/// RX_RESULT.json, LOG_META.json}` as regular files that pass the same size,
/// binary, secret and absolute-path checks as a fresh publication. A commit
/// made by hand on the local `rx-node` (a note, an IQ file, a changed result)
/// is refused, naming it — docs/publishing.md "refuses anything else".
pub(super) fn check_outgoing(repo: &Repository, tip: Oid, known: Option<Oid>) -> Result<()> {
    // The same checkout-path check as `prepare` (the work tree as opened and
    // canonicalized; the Git folder of a bare repository).
    let checkout = checkout_paths(repo.workdir().unwrap_or_else(|| repo.path()));
    for oid in outgoing(repo, tip, known)? {
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
        let (new, changes) = first_parent_changes(repo, &c)?;
        for d in &changes {
            if let Some(why) = outgoing_file_problem(repo, &new, d, &checkout)? {
                return Err(bad(why));
            }
        }
    }
    Ok(())
}

/// The commits that would leave this machine: from `tip` back to, not
/// including, the remote-tracking `known` tip.
fn outgoing(repo: &Repository, tip: Oid, known: Option<Oid>) -> Result<git2::Revwalk<'_>> {
    let mut walk = repo.revwalk()?;
    walk.push(tip)?;
    if let Some(k) = known {
        walk.hide(k)?;
    }
    Ok(walk)
}

/// One file-level change of a commit against its first parent.
pub(super) struct Change {
    /// The path (`a/b/c`).
    path: String,
    /// Added, Deleted or Modified (a type change is Modified).
    status: git2::Delta,
    /// The new side's file mode and object (for an addition or a change).
    mode: i32,
    id: Oid,
}

/// Every file-level change between `old` and `new` below `prefix`, descending
/// only into folders whose object differs (so a commit beside 100 000 other
/// results reads only the folders on its own path).
fn tree_changes(
    repo: &Repository,
    old: Option<&git2::Tree>,
    new: Option<&git2::Tree>,
    prefix: &str,
    out: &mut Vec<Change>,
) -> Result<()> {
    let join = |n: &str| {
        if prefix.is_empty() {
            n.to_owned()
        } else {
            format!("{prefix}/{n}")
        }
    };
    let is_tree = |e: &git2::TreeEntry| e.kind() == Some(git2::ObjectType::Tree);
    let sub = |e: &git2::TreeEntry| -> Result<Option<git2::Tree>> {
        Ok(if is_tree(e) {
            Some(repo.find_tree(e.id())?)
        } else {
            None
        })
    };
    if let Some(n) = new {
        for e in n.iter() {
            let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
            let before = old.and_then(|o| o.get_name_bytes(e.name_bytes()));
            if before
                .as_ref()
                .is_some_and(|b| b.id() == e.id() && b.filemode() == e.filemode())
            {
                continue;
            }
            let path = join(&name);
            match (&before, is_tree(&e)) {
                (Some(b), true) if is_tree(b) => {
                    tree_changes(repo, sub(b)?.as_ref(), sub(&e)?.as_ref(), &path, out)?
                }
                (None, true) => tree_changes(repo, None, sub(&e)?.as_ref(), &path, out)?,
                (None, false) => out.push(Change {
                    path,
                    status: git2::Delta::Added,
                    mode: e.filemode(),
                    id: e.id(),
                }),
                (Some(_), _) => out.push(Change {
                    path,
                    status: git2::Delta::Modified,
                    mode: e.filemode(),
                    id: e.id(),
                }),
            }
        }
    }
    if let Some(o) = old {
        for e in o.iter() {
            if new.is_some_and(|n| n.get_name_bytes(e.name_bytes()).is_some()) {
                continue;
            }
            out.push(Change {
                path: join(&String::from_utf8_lossy(e.name_bytes())),
                status: git2::Delta::Deleted,
                mode: e.filemode(),
                id: e.id(),
            });
        }
    }
    Ok(())
}

/// The tree of `c` and what it changes against its first parent (everything,
/// for a root commit), file by file.
fn first_parent_changes<'r>(
    repo: &'r Repository,
    c: &git2::Commit<'r>,
) -> Result<(git2::Tree<'r>, Vec<Change>)> {
    let old = match c.parent_count() {
        0 => None,
        _ => Some(c.parent(0)?.tree()?),
    };
    let new = c.tree()?;
    let mut out = Vec::new();
    tree_changes(repo, old.as_ref(), Some(&new), "", &mut out)?;
    Ok((new, out))
}

/// Why one change of an outgoing commit (whose tree is `new`) is not a plain
/// result file — added, in the result layout, a regular file passing the
/// byte and content scan — or `None` when it is one.
fn outgoing_file_problem(
    repo: &Repository,
    new: &git2::Tree,
    d: &Change,
    checkout: &[String],
) -> Result<Option<String>> {
    let path = d.path.clone();
    if d.status != git2::Delta::Added {
        return Ok(Some(format!("{path} is {:?}, not added", d.status)));
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
        return Ok(Some(format!(
            "{path} is not one of {RESULTS_DIR}/<ID>/<NODE>/{{{MD}, {JSON}, {LOG_META}}}"
        )));
    }
    let dir = parts[..parts.len() - 1].join("/");
    if d.mode != 0o100644 {
        return Ok(Some(format!("{path} is not a regular file")));
    }
    let blob = repo.find_blob(d.id)?;
    let text = match check_bytes(&path, blob.content()) {
        Ok(t) => t,
        Err(why) => return Ok(Some(why)),
    };
    let allowed = sibling_hashes(repo, new, &dir);
    Ok(scan_result(&path, &text, &allowed, checkout)
        .into_iter()
        .next())
}

/// SHA-256 values named by the sibling JSON files in `dir` (and the result's
/// own hash, which the Markdown trailer carries): not secrets — as in a fresh
/// publication.
fn sibling_hashes(repo: &Repository, new: &git2::Tree, dir: &str) -> BTreeSet<String> {
    let mut allowed = BTreeSet::new();
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
    allowed
}

/// This checkout pushes results under its own node name only. A commit
/// that would leave the machine adding `rx-results/<ID>/<OTHER>/…` for a node name
/// other than this node's is refused (a laptop never speaks for another node).
pub(super) fn check_outgoing_node(repo: &Repository, tip: Oid, known: Option<Oid>) -> Result<()> {
    let Some(own) = repo
        .workdir()
        .map(Paths::new)
        .and_then(|p| crate::store::node::load_name(&p).ok().flatten())
    else {
        return Ok(()); // no name: nothing new is published (prepare refuses)
    };
    for oid in outgoing(repo, tip, known)? {
        let oid = oid?;
        let c = repo.find_commit(oid)?;
        let (_, changes) = first_parent_changes(repo, &c)?;
        for d in changes.iter().filter(|d| d.status != git2::Delta::Deleted) {
            let path = d.path.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    /// The checkout's own path is refused by
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
        let none = BTreeSet::new();
        let p = scan_result(MD, "IQ in /lab/bench-3/rx/.local/rx_iq\n", &none, &lab);
        assert_eq!(p, [format!("{MD} contains this checkout's absolute path")]);
        assert!(scan_result(MD, "IQ kept locally\n", &none, &lab).is_empty());
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
