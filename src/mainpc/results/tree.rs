//! Reading `rx-node`: the fetch into the private ref, the results in a tree,
//! size-bounded blobs, and the commit that first added each result.
use super::fetched::{Fetched, Found, PRIVATE_REF, STATUS_PRIVATE_PREFIX};
use super::text::shown;
use crate::exit::{bad_field, bad_input, refused};
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use crate::result::RESULTS_DIR;
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};
use rxnode_interlock::TaskId;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The largest published file (docs/publishing.md); bigger blobs are never loaded.
const MAX_FILE_BYTES: usize = 256 * 1024;

/// Fetch the remote's `refs/heads/rx-node` into [`PRIVATE_REF`] (forced: it is
/// our private copy) and return its tip; `None` when the remote has no `rx-node`.
/// `with_status`: also every `refs/heads/rx-status/*` into the private refs
/// under [`STATUS_PRIVATE_PREFIX`] (pruned when a node's branch is gone).
pub(super) fn fetch_private(
    repo: &Repository,
    remote: &str,
    with_status: bool,
) -> Result<Option<Oid>> {
    set_timeouts();
    let named = crate::git::ops::find_remote(repo, remote)?;
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
    let mut specs = vec![format!("+refs/heads/rx-node:{PRIVATE_REF}")];
    if with_status {
        // Every status branch lands in a staging namespace emptied first, so no
        // ref there can collide with an earlier one (`rx-status/N` against a
        // peer's `rx-status/N/x`); only node names move on (`adopt_statuses`).
        delete_refs(repo, STATUS_STAGING_PREFIX);
        specs.push(format!("+refs/heads/rx-status/*:{STATUS_STAGING_PREFIX}*"));
    }
    rem.fetch(&specs, Some(&mut fo), None).map_err(|e| {
        anyhow!(
            "fetch of rx-node from {} failed: {}",
            rem.url().map(redact).unwrap_or_default(),
            redact(e.message())
        )
    })?;
    if with_status {
        adopt_statuses(repo)?;
    }
    read_private(repo)
}

/// Where `fetch_private` first puts every `rx-status/*` branch.
const STATUS_STAGING_PREFIX: &str = "refs/rxnode/main-pc/rx-status-fetched/";

/// Delete every ref under `prefix` (the private copies rxnode owns).
fn delete_refs(repo: &Repository, prefix: &str) {
    if let Ok(refs) = repo.references_glob(&format!("{prefix}*")) {
        for mut r in refs.flatten() {
            let _ = r.delete();
        }
    }
}

/// Move each staged status branch whose name is a node name
/// (`rx-status/<NODE>`, as rxnode writes it) to [`STATUS_PRIVATE_PREFIX`],
/// replacing the previous copies (a node whose branch is gone is dropped).
/// Any other ref (a name nested below a node's, or not a node name) was not
/// written by rxnode: a warning names it (escaped) and it is skipped.
fn adopt_statuses(repo: &Repository) -> Result<()> {
    let mut staged = Vec::new();
    for r in repo
        .references_glob(&format!("{STATUS_STAGING_PREFIX}*"))
        .context("cannot list the fetched status branches")?
        .flatten()
    {
        let name = r
            .name_bytes()
            .get(STATUS_STAGING_PREFIX.len()..)
            .unwrap_or_default()
            .to_vec();
        let name = match String::from_utf8(name) {
            Ok(n) if crate::store::node::check_name(&n).is_ok() => n,
            Ok(n) => {
                skipped(&n);
                continue;
            }
            Err(e) => {
                skipped(&String::from_utf8_lossy(e.as_bytes()));
                continue;
            }
        };
        match r.target() {
            Some(oid) => staged.push((name, oid)),
            None => skipped(&name),
        }
    }
    delete_refs(repo, STATUS_PRIVATE_PREFIX);
    for (name, oid) in staged {
        repo.reference(
            &format!("{STATUS_PRIVATE_PREFIX}{name}"),
            oid,
            true,
            "rxnode results nodes",
        )
        .with_context(|| format!("cannot keep the status of node {name}"))?;
    }
    delete_refs(repo, STATUS_STAGING_PREFIX);
    Ok(())
}

/// The warning for a remote ref under `rx-status/` that is not a node's status branch.
fn skipped(name: &str) {
    eprintln!(
        "rxnode: warning: skipped refs/heads/rx-status/{}: not a node's status branch \
         (rx-status/<NODE>, NODE 1 to 32 of A-Z a-z 0-9 _ -); rxnode did not write it",
        shown(name, 80)
    );
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

/// Refused (exit 3) when the entry at `path` is a submodule's gitlink, a
/// symbolic link or anything but a plain folder or file: never followed.
fn refuse_not_plain(e: &git2::TreeEntry, path: &str) -> Result<()> {
    let what = match (e.kind(), e.filemode()) {
        (Some(ObjectType::Tree), 0o040000) => return Ok(()),
        (Some(ObjectType::Blob), 0o100644 | 0o100755) => return Ok(()),
        (Some(ObjectType::Blob), 0o120000) => "a symbolic link",
        (Some(ObjectType::Commit), _) | (_, 0o160000) => "a submodule (gitlink)",
        _ => "not a plain folder or file",
    };
    Err(refused(format!(
        "{} on rx-node is {what}, not a plain folder or file; rxnode does not follow it — \
         whoever wrote it must remove it from rx-node",
        shown(path, 200)
    )))
}

/// Every result in a tree: per-node folders and old-layout folders. Entries that
/// are neither are returned as problems (named, never followed); an entry on a
/// result's path that is not a plain folder or file (a gitlink, a symbolic
/// link) is refused, naming it.
pub(super) fn find_results(
    repo: &Repository,
    root: &git2::Tree,
) -> Result<(Vec<Found>, Vec<String>)> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let Some(e) = root.get_name(RESULTS_DIR) else {
        return Ok((out, problems));
    };
    refuse_not_plain(&e, RESULTS_DIR)?;
    let Ok(results) = repo.find_tree(e.id()) else {
        problems.push(format!("{RESULTS_DIR} is not a folder"));
        return Ok((out, problems));
    };
    for e in results.iter() {
        let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
        refuse_not_plain(&e, &format!("{RESULTS_DIR}/{name}"))?;
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
            refuse_not_plain(&f, &format!("{RESULTS_DIR}/{name}/{fname}"))?;
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
    Ok((out, problems))
}

/// The result at `key` (`<ID>/<NODE>`, or `<ID>` of the old layout) in the
/// results folder `rt`, as [`find_results`] would list it; `None` when absent
/// or not a result (those are named by [`find_results`]).
fn found_at(repo: &Repository, rt: &git2::Tree, key: &str) -> Option<Found> {
    let e = rt.get_path(std::path::Path::new(key)).ok()?;
    if e.kind() != Some(ObjectType::Tree) {
        return None;
    }
    let (id, node) = match key.split_once('/') {
        Some((i, n)) => (i, Some(n)),
        None => (key, None),
    };
    TaskId::parse(id).ok()?;
    if let Some(n) = node {
        crate::store::node::check_name(n).ok()?;
    } else {
        // The old layout: files directly in `<ID>/`.
        let t = repo.find_tree(e.id()).ok()?;
        if !t.iter().any(|f| f.kind() != Some(ObjectType::Tree)) {
            return None;
        }
    }
    Some(Found {
        task_id: id.to_owned(),
        dir_node: node.map(str::to_owned),
        tree: e.id(),
        path: format!("{RESULTS_DIR}/{key}"),
    })
}

/// The names of `now`'s entries whose object differs from `before`'s entry
/// of the same name (or that `before` lacks), in tree order: a merge of the
/// two sorted entry lists, reading no object.
fn changed_names(before: Option<&git2::Tree>, now: &git2::Tree) -> Vec<String> {
    let key = |e: &git2::TreeEntry| {
        let mut k = e.name_bytes().to_vec();
        if e.kind() == Some(ObjectType::Tree) {
            k.push(b'/');
        }
        k
    };
    let mut out = Vec::new();
    let mut old = before.map(|t| t.iter()).into_iter().flatten().peekable();
    for e in now.iter() {
        let k = key(&e);
        while old.peek().is_some_and(|o| key(o) < k) {
            old.next();
        }
        let same = old.peek().is_some_and(|o| key(o) == k && o.id() == e.id());
        if !same {
            out.push(String::from_utf8_lossy(e.name_bytes()).into_owned());
        }
    }
    out
}

/// One commit's share of [`newest_added`]: the task-ID folders it added or
/// changed against its first parent, expanded to results only on demand.
pub(super) struct Landed<'r> {
    repo: &'r Repository,
    /// The commit.
    pub(super) commit: Oid,
    /// Its parent's `rx-results` (`None`: absent, or a root commit).
    before: Option<git2::Tree<'r>>,
    /// The tip's `rx-results`: only what still stands there is listed.
    tip_rt: &'r git2::Tree<'r>,
    /// The changed `<ID>` names, newest-listed first (descending).
    pub(super) ids: Vec<String>,
}

impl Landed<'_> {
    /// The results under `rx-results/<id>` that this commit added or changed
    /// and that stand at the tip, as [`find_results`] lists them.
    pub(super) fn results_of(&self, id: &str, now_rt: &git2::Tree) -> Vec<Found> {
        let sub = |t: &git2::Tree| -> Option<git2::Tree> {
            let e = t.get_name(id)?;
            self.repo.find_tree(e.id()).ok()
        };
        let Some(now) = sub(now_rt) else {
            return Vec::new();
        };
        let before = self.before.as_ref().and_then(sub);
        let mut keys: Vec<String> = Vec::new();
        let mut legacy = false;
        for name in changed_names(before.as_ref(), &now) {
            match now.get_name(&name).map(|e| e.kind()) {
                Some(Some(ObjectType::Tree)) => keys.push(format!("{id}/{name}")),
                _ => legacy = true,
            }
        }
        if legacy {
            keys.push(id.to_owned());
        }
        keys.iter()
            .filter_map(|k| found_at(self.repo, self.tip_rt, k))
            .filter(|f| {
                // Only the very tree that stands at the tip (an old-layout
                // folder also holds the newer per-node folders beside its files).
                f.dir_node.is_none()
                    || now_rt
                        .get_path(std::path::Path::new(&f.path[RESULTS_DIR.len() + 1..]))
                        .is_ok_and(|e| e.id() == f.tree)
            })
            .collect()
    }
}

/// The results at `tip`, newest first by when they landed: walking the
/// first-parent history from `tip`, each commit's task-ID folders added or
/// changed against its parent (compared by object ID, so only what changed is
/// read), handed to `each` with that commit's `rx-results` tree; the walk
/// stops when `each` returns `false`. `each` keeps track of results already
/// listed (a newer commit lists a result first).
pub(super) fn newest_added(
    repo: &Repository,
    tip: Oid,
    each: &mut dyn FnMut(&Landed, &git2::Tree) -> Result<bool>,
) -> Result<()> {
    let results_of = |c: &git2::Commit| -> Option<git2::Tree> {
        let e = c.tree().ok()?.get_name(RESULTS_DIR)?.to_owned();
        repo.find_tree(e.id()).ok()
    };
    let tip_commit = repo.find_commit(tip)?;
    let Some(tip_rt) = results_of(&tip_commit) else {
        return Ok(());
    };
    let mut c = tip_commit;
    loop {
        let parent = c.parents().next();
        let now = results_of(&c);
        let before = parent.as_ref().and_then(&results_of);
        if let Some(now) = now.filter(|n| Some(n.id()) != before.as_ref().map(|b| b.id())) {
            let mut ids = changed_names(before.as_ref(), &now);
            ids.reverse();
            let landed = Landed {
                repo,
                commit: c.id(),
                before,
                tip_rt: &tip_rt,
                ids,
            };
            if !each(&landed, &now)? {
                return Ok(());
            }
        }
        match parent {
            Some(p) => c = p,
            None => return Ok(()),
        }
    }
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
        let Ok((found, _)) = find_results(repo, &tree) else {
            continue; // refused at the tip by the caller's own read
        };
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
            crate::store::node::check_name(n).map_err(|e| bad_field("from", format!(": {e}")))?;
        }
        let Some(tip) = tip else {
            return Err(bad_input(format!(
                "no result for {id}: {}",
                self.none_yet()
            )));
        };
        let (found, _) = find_results(repo, &repo.find_commit(tip)?.tree()?)?;
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
