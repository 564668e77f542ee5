//! Reading `rx-node`: the fetch into the private ref, the results in a tree,
//! size-bounded blobs, and the commit that first added each result.
use super::text::shown;
use super::{Fetched, Found, MAX_FILE_BYTES, PRIVATE_REF};
use crate::exit::bad_input;
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use crate::result::RESULTS_DIR;
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};
use rxnode_interlock::TaskId;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Fetch the remote's `refs/heads/rx-node` into [`PRIVATE_REF`] (forced: it is
/// our private copy) and return its tip; `None` when the remote has no `rx-node`.
pub(super) fn fetch_private(repo: &Repository, remote: &str) -> Result<Option<Oid>> {
    set_timeouts();
    let named = repo
        .find_remote(remote)
        .with_context(|| format!("no remote named {remote:?} in this repository"))?;
    let url = named
        .url()
        .ok_or_else(|| anyhow!("the URL of remote {remote:?} is not UTF-8"))?
        .to_owned();
    // An anonymous remote has no configured refspecs, so libgit2 makes no
    // "opportunistic" update of refs/remotes/<remote>/*: only PRIVATE_REF moves.
    let mut rem = repo
        .remote_anonymous(&url)
        .map_err(|e| anyhow!("remote {remote:?}: {}", redact(e.message())))?;
    let mut fo = git2::FetchOptions::new();
    fo.remote_callbacks(remote_callbacks(repo.config().ok()));
    fo.update_fetchhead(false);
    fo.prune(git2::FetchPrune::On);
    fo.download_tags(git2::AutotagOption::None);
    let spec = format!("+refs/heads/rx-node:{PRIVATE_REF}");
    rem.fetch(&[spec.as_str()], Some(&mut fo), None)
        .map_err(|e| {
            anyhow!(
                "fetch of rx-node from {} failed: {}",
                rem.url().map(redact).unwrap_or_default(),
                redact(e.message())
            )
        })?;
    read_private(repo)
}

pub(super) fn read_private(repo: &Repository) -> Result<Option<Oid>> {
    match repo.find_reference(PRIVATE_REF) {
        Ok(r) => Ok(Some(
            r.peel_to_commit()
                .with_context(|| format!("{PRIVATE_REF} does not point to a commit"))?
                .id(),
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {PRIVATE_REF}: {}", e.message())),
    }
}

/// Every result in a tree: per-node folders and old-layout folders. Entries that
/// are neither are returned as problems (named, never followed).
pub(super) fn find_results(repo: &Repository, root: &git2::Tree) -> (Vec<Found>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let Some(e) = root.get_name(RESULTS_DIR) else {
        return (out, problems);
    };
    let Ok(results) = repo.find_tree(e.id()) else {
        problems.push(format!("{RESULTS_DIR} is not a folder"));
        return (out, problems);
    };
    for e in results.iter() {
        let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
        if TaskId::parse(&name).is_err() {
            problems.push(format!(
                "{RESULTS_DIR}/{} is not a task ID; skipped",
                shown(&name, 70)
            ));
            continue;
        }
        let Ok(idtree) = repo.find_tree(e.id()) else {
            problems.push(format!("{RESULTS_DIR}/{name} is not a folder; skipped"));
            continue;
        };
        let mut legacy = false;
        for f in idtree.iter() {
            let fname = String::from_utf8_lossy(f.name_bytes()).into_owned();
            match f.kind() {
                Some(ObjectType::Tree) => {
                    if crate::store::node::check_name(&fname).is_err() {
                        problems.push(format!(
                            "{RESULTS_DIR}/{name}/{} is not a node name; skipped",
                            shown(&fname, 70)
                        ));
                        continue;
                    }
                    out.push(Found {
                        task_id: name.clone(),
                        dir_node: Some(fname.clone()),
                        tree: f.id(),
                        path: format!("{RESULTS_DIR}/{name}/{fname}"),
                    });
                }
                _ => legacy = true,
            }
        }
        if legacy {
            out.push(Found {
                task_id: name.clone(),
                dir_node: None,
                tree: e.id(),
                path: format!("{RESULTS_DIR}/{name}"),
            });
        }
    }
    (out, problems)
}

/// A blob of at most [`MAX_FILE_BYTES`], loaded only after its size was checked.
pub(super) fn read_small(repo: &Repository, tree: Oid, name: &str) -> Result<Vec<u8>, String> {
    let t = repo
        .find_tree(tree)
        .map_err(|e| format!("cannot read the tree: {}", e.message()))?;
    let Some(e) = t.get_name(name) else {
        return Err(format!("{name} is missing"));
    };
    if e.kind() != Some(ObjectType::Blob) || e.filemode() != 0o100644 {
        return Err(format!("{name} is not a regular file"));
    }
    let odb = repo.odb().map_err(|e| e.message().to_owned())?;
    let (size, _) = odb
        .read_header(e.id())
        .map_err(|err| format!("{name}: {}", err.message()))?;
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{name} is {size} bytes; a published file is at most {MAX_FILE_BYTES}"
        ));
    }
    let b = repo
        .find_blob(e.id())
        .map_err(|err| format!("{name}: {}", err.message()))?;
    Ok(b.content().to_vec())
}

pub(super) fn read_json(repo: &Repository, tree: Oid, name: &str) -> Result<Value, String> {
    let b = read_small(repo, tree, name)?;
    let v: Value = serde_json::from_slice(&b).map_err(|e| format!("{name} is not JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!("{name} is not a JSON object"));
    }
    Ok(v)
}

/// The commit that first added each result path (and the result's tree then),
/// walking oldest first.
pub(super) fn adding_commits(repo: &Repository, tip: Oid) -> Result<BTreeMap<String, (Oid, Oid)>> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    walk.push(tip)?;
    let mut out = BTreeMap::new();
    let mut seen_roots = BTreeSet::new();
    for c in walk {
        let c = repo.find_commit(c?)?;
        let tree = c.tree()?;
        let Some(e) = tree.get_name(RESULTS_DIR) else {
            continue;
        };
        if !seen_roots.insert(e.id()) {
            continue; // the same rx-results tree as an earlier commit
        }
        let (found, _) = find_results(repo, &tree);
        for f in found {
            out.entry(f.path).or_insert((c.id(), f.tree));
        }
    }
    Ok(out)
}

impl Fetched<'_> {
    /// The results of one task ID, narrowed to `from` when given; an error names what exists.
    pub(super) fn select(&self, task_id: &str, from: &Option<String>) -> Result<Vec<Found>> {
        let (repo, tip) = (self.repo, self.tip);
        let id = TaskId::parse(task_id).map_err(|e| bad_input(format!("task ID: {e}")))?;
        if let Some(n) = from {
            crate::store::node::check_name(n).map_err(|e| bad_input(format!("--from: {e}")))?;
        }
        let Some(tip) = tip else {
            return Err(bad_input(format!(
                "no rx-node branch on the remote yet: no result for {id}"
            )));
        };
        let (found, _) = find_results(repo, &repo.find_commit(tip)?.tree()?);
        let of_id: Vec<Found> = found
            .into_iter()
            .filter(|f| f.task_id == id.as_str())
            .collect();
        if of_id.is_empty() {
            return Err(bad_input(format!("no result for {id} on rx-node ({tip})")));
        }
        let Some(n) = from else { return Ok(of_id) };
        let nodes: Vec<String> = of_id.iter().map(Found::node_label).collect();
        let pick: Vec<Found> = of_id
            .into_iter()
            .filter(|f| f.dir_node.as_ref() == Some(n))
            .collect();
        if pick.is_empty() {
            return Err(bad_input(format!(
                "no result for {id} from node {n}; nodes that answered: {}",
                nodes.join(", ")
            )));
        }
        Ok(pick)
    }
}
