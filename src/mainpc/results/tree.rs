//! Reading the results branches (fetched by `fetch.rs` into the private refs):
//! the results in a tree, size-bounded blobs, the commit that first added each
//! result, and the walk that lists them newest first across every branch.
use super::fetched::{Fetched, Found, Source};
use super::text::shown;
use crate::exit::{bad_field, bad_input, refused};
use crate::result::RESULTS_DIR;
use anyhow::{anyhow, Result};
use git2::{ObjectType, Oid, Repository};
use rxnode_interlock::TaskId;
use serde_json::Value;
use std::cell::Cell;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// The largest published file (docs/publishing.md); bigger blobs are never loaded.
const MAX_FILE_BYTES: usize = 256 * 1024;

/// The most tree entries and commits one `results` command reads on the
/// results branches, and the most results it takes from them
/// (docs/protocol.md#6-the-main-pcs-side). Every tree is bounded in size, but one
/// tree can name another many times over: 88 KiB pushed held a folder of
/// 2 000 task IDs each naming one folder of 2 000 nodes, which `results` read
/// as 4 million results (30 s, 1.98 GB; `verify` past 3 GB).
pub(super) const MAX_ENTRIES_READ: u64 = 20_000_000;
/// See [`MAX_ENTRIES_READ`]: a result taken costs far more than an entry looked at.
pub(super) const MAX_RESULTS_READ: u64 = 1_000_000;

/// What one `results` command may still read of the results branches' trees
/// and histories: every listing of a tree takes its entries, every commit
/// walked one entry, every result taken one result; once either bound is spent
/// the command is refused.
pub(super) struct Budget {
    entries: Cell<u64>,
    results: Cell<u64>,
    /// The branch being read when a bound was reached, once one was.
    spent_on: std::cell::RefCell<Option<String>>,
}

impl Budget {
    /// The whole budget of one command.
    pub(super) fn new() -> Budget {
        Budget {
            entries: Cell::new(MAX_ENTRIES_READ),
            results: Cell::new(MAX_RESULTS_READ),
            spent_on: std::cell::RefCell::new(None),
        }
    }

    /// Take `n` tree entries (or commits) for reading `source`; refused (exit 3) once spent.
    pub(super) fn take(&self, n: usize, source: &Source) -> Result<()> {
        self.spend(&self.entries, n, source)
    }

    /// Take one result read from `source`; refused (exit 3) once spent.
    pub(super) fn result(&self, source: &Source) -> Result<()> {
        self.spend(&self.results, 1, source)
    }

    fn spend(&self, left: &Cell<u64>, n: usize, source: &Source) -> Result<()> {
        let n = u64::try_from(n).unwrap_or(u64::MAX);
        match left.get().checked_sub(n) {
            Some(rest) if self.spent_on.borrow().is_none() => {
                left.set(rest);
                Ok(())
            }
            _ => {
                left.set(0);
                self.spent_on
                    .borrow_mut()
                    .get_or_insert_with(|| source.branch.clone());
                self.still()
            }
        }
    }

    /// Refused (exit 3) once a bound was reached, naming the branch.
    pub(super) fn still(&self) -> Result<()> {
        match &*self.spent_on.borrow() {
            None => Ok(()),
            Some(branch) => Err(refused(format!(
                "{branch} asks for more than {MAX_ENTRIES_READ} tree entries and commits, or more \
                 than {MAX_RESULTS_READ} results, to be read (the bounds of one results command): \
                 its rx-results folder names the same folders over and over, or its history is too \
                 long to list; not read further — whoever wrote it must remove it from {branch}"
            ))),
        }
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
    source: &Rc<Source>,
    budget: &Budget,
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
    budget.take(results.len(), source)?;
    let ids: Vec<String> = results
        .iter()
        .map(|e| String::from_utf8_lossy(e.name_bytes()).into_owned())
        .collect();
    problems.extend(case_twins(&ids, RESULTS_DIR));
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
        budget.take(idtree.len(), source)?;
        let nodes: Vec<String> = idtree
            .iter()
            .map(|f| String::from_utf8_lossy(f.name_bytes()).into_owned())
            .collect();
        problems.extend(case_twins(&nodes, &format!("{RESULTS_DIR}/{name}")));
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
                    budget.result(source)?;
                    out.push(Found {
                        task_id: name.clone(),
                        dir_node: Some(fname.clone()),
                        tree: f.id(),
                        path: format!("{RESULTS_DIR}/{name}/{fname}"),
                        source: source.clone(),
                    });
                }
                _ => legacy = true,
            }
        }
        if legacy {
            budget.result(source)?;
            out.push(Found {
                task_id: name.clone(),
                dir_node: None,
                tree: e.id(),
                path: format!("{RESULTS_DIR}/{name}"),
                source: source.clone(),
            });
        }
    }
    Ok((out, problems))
}

/// One problem per pair of `names` (entries of the folder `dir`) that differ
/// only in letter case: a checkout on a case-insensitive file system (Windows,
/// macOS) makes them one folder, where one result overwrites the other; both
/// are still listed from the tree, which keeps them apart.
fn case_twins(names: &[String], dir: &str) -> Vec<String> {
    rxnode_interlock::same_folder_groups(names.iter().map(String::as_str))
        .into_iter()
        .map(|g| {
            let list: Vec<String> = g.iter().map(|n| format!("{dir}/{}", shown(n, 70))).collect();
            format!(
                "{} differ only in letter case: a checkout on a case-insensitive file system (Windows, \
                 macOS) makes them one folder, where one result overwrites the other",
                list.join(" and ")
            )
        })
        .collect()
}

/// The result at `key` (`<ID>/<NODE>`, or `<ID>` of the old layout) in the
/// results folder `rt`, as [`find_results`] would list it; `None` when absent
/// or not a result (those are named by [`find_results`]).
pub(super) fn found_at(
    repo: &Repository,
    rt: &git2::Tree,
    key: &str,
    source: &Rc<Source>,
    budget: &Budget,
) -> Result<Option<Found>> {
    let Ok(e) = rt.get_path(std::path::Path::new(key)) else {
        return Ok(None);
    };
    if e.kind() != Some(ObjectType::Tree) {
        return Ok(None);
    }
    let (id, node) = match key.split_once('/') {
        Some((i, n)) => (i, Some(n)),
        None => (key, None),
    };
    if TaskId::parse(id).is_err() {
        return Ok(None);
    }
    if let Some(n) = node {
        if crate::store::node::check_name(n).is_err() {
            return Ok(None);
        }
    } else {
        // The old layout: files directly in `<ID>/`.
        let Ok(t) = repo.find_tree(e.id()) else {
            return Ok(None);
        };
        budget.take(t.len(), source)?;
        if !t.iter().any(|f| f.kind() != Some(ObjectType::Tree)) {
            return Ok(None);
        }
    }
    budget.result(source)?;
    Ok(Some(Found {
        task_id: id.to_owned(),
        dir_node: node.map(str::to_owned),
        tree: e.id(),
        path: format!("{RESULTS_DIR}/{key}"),
        source: source.clone(),
    }))
}

/// The names of `now`'s entries whose object differs from `before`'s entry
/// of the same name (or that `before` lacks), in tree order: a merge of the
/// two sorted entry lists, reading no object.
fn changed_names(
    before: Option<&git2::Tree>,
    now: &git2::Tree,
    source: &Source,
    budget: &Budget,
) -> Result<Vec<String>> {
    budget.take(now.len() + before.map_or(0, git2::Tree::len), source)?;
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
    Ok(out)
}

/// One commit's share of a [`Walker`]: the task-ID folders it added or
/// changed against its first parent, expanded to results only on demand.
pub(super) struct Landed<'r> {
    repo: &'r Repository,
    /// Its parent's `rx-results` (`None`: absent, or a root commit).
    before: Option<git2::Tree<'r>>,
    /// The tip's `rx-results`: only what still stands there is listed.
    tip_rt: &'r git2::Tree<'r>,
    /// The changed `<ID>` names, newest-listed first (descending).
    pub(super) ids: Vec<String>,
    /// The branch walked.
    source: &'r Rc<Source>,
    /// What the command may still read.
    budget: &'r Budget,
}

impl Landed<'_> {
    /// The results under `rx-results/<id>` that this commit added or changed
    /// and that stand at the tip, as [`find_results`] lists them.
    pub(super) fn results_of(&self, id: &str, now_rt: &git2::Tree) -> Result<Vec<Found>> {
        let sub = |t: &git2::Tree| -> Option<git2::Tree> {
            let e = t.get_name(id)?;
            self.repo.find_tree(e.id()).ok()
        };
        let Some(now) = sub(now_rt) else {
            return Ok(Vec::new());
        };
        let before = self.before.as_ref().and_then(sub);
        let mut keys: Vec<String> = Vec::new();
        let mut legacy = false;
        for name in changed_names(before.as_ref(), &now, self.source, self.budget)? {
            match now.get_name(&name).map(|e| e.kind()) {
                Some(Some(ObjectType::Tree)) => keys.push(format!("{id}/{name}")),
                _ => legacy = true,
            }
        }
        if legacy {
            keys.push(id.to_owned());
        }
        let mut out = Vec::new();
        for k in &keys {
            let Some(f) = found_at(self.repo, self.tip_rt, k, self.source, self.budget)? else {
                continue;
            };
            // Only the very tree that stands at the tip (an old-layout
            // folder also holds the newer per-node folders beside its files).
            if f.dir_node.is_none()
                || now_rt
                    .get_path(std::path::Path::new(&f.path[RESULTS_DIR.len() + 1..]))
                    .is_ok_and(|e| e.id() == f.tree)
            {
                out.push(f);
            }
        }
        Ok(out)
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
/// walking oldest first. Each commit is read as what it changed against its
/// first parent (the parents come first, so a path already there was taken
/// from an earlier commit): a history of n results each added by one commit
/// takes n results, not n²/2. An entry that [`find_results`] would refuse (a
/// gitlink, a symbolic link) is skipped here; the caller's own read of the tip
/// refuses it.
pub(super) fn adding_commits(
    repo: &Repository,
    source: &Rc<Source>,
    budget: &Budget,
) -> Result<BTreeMap<String, (Oid, Oid)>> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    walk.push(source.tip)?;
    let mut out = BTreeMap::new();
    let plain = |e: &git2::TreeEntry| refuse_not_plain(e, "").is_ok();
    let sub = |t: Option<&git2::Tree>, name: &str| -> Option<git2::Tree> {
        let e = t?.get_name(name)?;
        repo.find_tree(e.id()).ok()
    };
    for c in walk {
        budget.take(1, source)?;
        let c = repo.find_commit(c?)?;
        let Some(now) = tree_results(repo, &c) else {
            continue;
        };
        let before = c.parents().next().and_then(|p| tree_results(repo, &p));
        if before.as_ref().is_some_and(|b| b.id() == now.id()) {
            continue; // the same rx-results tree as its parent
        }
        for id in changed_names(before.as_ref(), &now, source, budget)? {
            let Some(e) = now.get_name(&id) else { continue };
            if !plain(&e) || TaskId::parse(&id).is_err() {
                continue;
            }
            let Ok(idtree) = repo.find_tree(e.id()) else {
                continue;
            };
            let was = sub(before.as_ref(), &id);
            let mut legacy = false;
            for name in changed_names(was.as_ref(), &idtree, source, budget)? {
                let Some(f) = idtree.get_name(&name) else {
                    continue;
                };
                if !plain(&f) {
                    continue;
                }
                if f.kind() != Some(ObjectType::Tree) {
                    legacy = true;
                } else if crate::store::node::check_name(&name).is_ok() {
                    let path = format!("{RESULTS_DIR}/{id}/{name}");
                    if let Entry::Vacant(v) = out.entry(path) {
                        budget.result(source)?;
                        v.insert((c.id(), f.id()));
                    }
                }
            }
            let path = format!("{RESULTS_DIR}/{id}");
            if let (true, Entry::Vacant(v)) = (legacy, out.entry(path)) {
                budget.result(source)?;
                v.insert((c.id(), idtree.id()));
            }
        }
    }
    Ok(out)
}

impl Fetched<'_> {
    /// The results of one task ID on every results branch, narrowed to `from`
    /// when given; an error names what exists. A result on two branches with
    /// the same content is one result; with different content it is a
    /// conflict, named on stderr, and the copy that landed later is taken
    /// (docs/protocol.md#6-the-main-pcs-side).
    pub(super) fn select(&self, task_id: &str, from: &Option<String>) -> Result<Vec<Found>> {
        let repo = self.repo;
        let id = TaskId::parse(task_id).map_err(|e| bad_input(format!("task ID: {e}")))?;
        if let Some(n) = from {
            check_from(n, &id)?;
        }
        if !self.any() {
            return Err(bad_input(format!(
                "no result for {id}: {}",
                self.none_yet()
            )));
        }
        let mut by_path: BTreeMap<String, Vec<Found>> = BTreeMap::new();
        for src in &self.sources {
            let Some(rt) = results_root(repo, src.tip) else {
                continue;
            };
            let Some(e) = rt.get_name(id.as_str()) else {
                continue;
            };
            refuse_not_plain(&e, &format!("{RESULTS_DIR}/{id}"))?;
            let Ok(idtree) = repo.find_tree(e.id()) else {
                continue;
            };
            self.budget.take(idtree.len(), src)?;
            let mut keys: Vec<String> = Vec::new();
            let mut legacy = false;
            for f in idtree.iter() {
                let fname = String::from_utf8_lossy(f.name_bytes()).into_owned();
                refuse_not_plain(&f, &format!("{RESULTS_DIR}/{id}/{fname}"))?;
                match f.kind() {
                    Some(ObjectType::Tree) => keys.push(format!("{id}/{fname}")),
                    _ => legacy = true,
                }
            }
            if legacy {
                keys.push(id.as_str().to_owned());
            }
            for k in keys {
                let Some(f) = found_at(repo, &rt, &k, src, &self.budget)? else {
                    continue;
                };
                if !own_result(src, &f) {
                    continue; // named by the listing, never taken as this node's
                }
                by_path.entry(f.path.clone()).or_default().push(f);
            }
        }
        let mut of_id = Vec::new();
        for (path, copies) in by_path {
            of_id.push(pick_copy(repo, &path, copies, &self.budget)?);
        }
        if of_id.is_empty() {
            let on: Vec<&str> = self.sources.iter().map(|s| s.branch.as_str()).collect();
            return Err(bad_input(format!(
                "no result for {id} on {}",
                on.join(", ")
            )));
        }
        let Some(n) = from else { return Ok(of_id) };
        let nodes = Found::labels(&of_id, repo);
        // A node, or (where one node answered twice: a result of the layout before
        // node folders beside one in its folder) the result's folder.
        let pick: Vec<Found> = of_id
            .into_iter()
            .filter(|f| match n.contains('/') {
                true => f.path == n.trim_end_matches('/'),
                false => f.node(repo).as_ref() == Some(n),
            })
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

/// `--from`: a node's name, or a result's folder (`rx-results/<ID>` of the
/// layout before node folders, `rx-results/<ID>/<NODE>`) of this task `id`.
fn check_from(from: &str, id: &TaskId) -> Result<()> {
    let bad = |why: String| bad_field("from", format!(" {from:?}: {why}"));
    let Some(rest) = from.strip_prefix(&format!("{RESULTS_DIR}/")) else {
        if from.contains('/') {
            return Err(bad(format!(
                "a node's name, or a result's folder {RESULTS_DIR}/{id}[/NODE]"
            )));
        }
        return crate::store::node::check_name(from)
            .map_err(|e| bad_field("from", format!(": {e}")));
    };
    let mut parts = rest.trim_end_matches('/').split('/');
    if parts.next() != Some(id.as_str()) {
        return Err(bad(format!("not a folder of {id}")));
    }
    match (parts.next(), parts.next()) {
        (None, _) => Ok(()),
        (Some(node), None) => crate::store::node::check_name(node).map_err(|e| bad(e.to_string())),
        _ => Err(bad(format!(
            "a result's folder is {RESULTS_DIR}/{id}[/NODE]"
        ))),
    }
}

/// The `rx-results` folder of commit `tip`, `None` when it has none.
fn results_root(repo: &Repository, tip: Oid) -> Option<git2::Tree<'_>> {
    let c = repo.find_commit(tip).ok()?;
    let e = c.tree().ok()?.get_name(RESULTS_DIR)?.to_owned();
    repo.find_tree(e.id()).ok()
}

/// Whether `f` may stand on its branch: anything on the shared `rx-node`; on a
/// node's own `rx-results/<NODE>`, only that node's own folders
/// (`rx-results/<ID>/<NODE>/`).
pub(super) fn own_result(src: &Source, f: &Found) -> bool {
    match &src.owner {
        None => true,
        Some(o) => f.dir_node.as_deref() == Some(o.as_str()),
    }
}

/// One result found on more than one branch: identical copies are one; different
/// copies are a conflict, named on stderr, and the copy whose commit landed
/// later (its committer time; on a tie the node's own branch) is taken.
fn pick_copy(
    repo: &Repository,
    path: &str,
    mut copies: Vec<Found>,
    budget: &Budget,
) -> Result<Found> {
    if copies.len() > 1 && copies.iter().any(|c| c.tree != copies[0].tree) {
        let mut when = Vec::new();
        for c in &copies {
            when.push(
                landed_at(repo, c, budget)?
                    .map(|(_, t)| t)
                    .unwrap_or(i64::MIN),
            );
        }
        let best = (0..copies.len())
            .max_by_key(|&i| (when[i], copies[i].source.owner.is_some()))
            .unwrap_or(0);
        let list: Vec<String> = copies
            .iter()
            .map(|c| format!("{} (tree {})", c.source.branch, c.tree))
            .collect();
        note!(
            "rxnode: warning: conflict: {} differs between {}; the copy that landed later, on {}, is taken",
            shown(path, 120),
            list.join(" and "),
            copies[best].source.branch
        );
        return Ok(copies.swap_remove(best));
    }
    // Identical copies (or one): the node's own branch first.
    copies.sort_by_key(|c| c.source.owner.is_none());
    copies
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("no copy of {path}"))
}

/// The commit on its branch that last added or changed `f` as it stands, and its
/// committer time; `None` when the walk does not find it.
pub(super) fn landed_at(
    repo: &Repository,
    f: &Found,
    budget: &Budget,
) -> Result<Option<(Oid, i64)>> {
    let mut w = Walker::new(repo, f.source.clone(), budget)?;
    while let Some(c) = w.pop()? {
        if c.found.path == f.path {
            return Ok(Some((c.commit, c.time)));
        }
    }
    Ok(None)
}

/// One result as a branch's walk hands it on: where it landed and when.
pub(super) struct Candidate {
    pub(super) found: Found,
    /// The commit that last added or changed it (first-parent walk from the tip).
    pub(super) commit: Oid,
    /// That commit's committer time (seconds since the epoch).
    pub(super) time: i64,
}

/// The results of one branch, newest first by when they landed, read one
/// commit at a time as they are asked for.
pub(super) struct Walker<'r> {
    repo: &'r Repository,
    source: Rc<Source>,
    tip_rt: Option<git2::Tree<'r>>,
    next: Option<git2::Commit<'r>>,
    queue: VecDeque<Candidate>,
    /// What the command may still read.
    budget: &'r Budget,
}

impl<'r> Walker<'r> {
    /// A walk of `source` from its tip.
    pub(super) fn new(
        repo: &'r Repository,
        source: Rc<Source>,
        budget: &'r Budget,
    ) -> Result<Walker<'r>> {
        let tip = repo.find_commit(source.tip)?;
        let tip_rt = tree_results(repo, &tip);
        Ok(Walker {
            repo,
            source,
            next: tip_rt.as_ref().map(|_| tip),
            tip_rt,
            queue: VecDeque::new(),
            budget,
        })
    }

    /// The branch walked.
    pub(super) fn source(&self) -> &Rc<Source> {
        &self.source
    }

    /// The next result (without taking it); `None` at the end of the history.
    pub(super) fn peek(&mut self) -> Result<Option<&Candidate>> {
        self.fill()?;
        Ok(self.queue.front())
    }

    /// The next result; `None` at the end of the history.
    pub(super) fn pop(&mut self) -> Result<Option<Candidate>> {
        self.fill()?;
        Ok(self.queue.pop_front())
    }

    /// Walk on until a commit hands on a result or the history ends.
    fn fill(&mut self) -> Result<()> {
        while self.queue.is_empty() {
            let (Some(c), Some(tip_rt)) = (self.next.take(), self.tip_rt.as_ref()) else {
                return Ok(());
            };
            self.budget.take(1, &self.source)?;
            let parent = c.parents().next();
            let now = tree_results(self.repo, &c);
            let before = parent.as_ref().and_then(|p| tree_results(self.repo, p));
            if let Some(now) = now.filter(|n| Some(n.id()) != before.as_ref().map(|b| b.id())) {
                let mut ids = changed_names(before.as_ref(), &now, &self.source, self.budget)?;
                ids.reverse();
                let landed = Landed {
                    repo: self.repo,
                    before,
                    tip_rt,
                    ids,
                    source: &self.source,
                    budget: self.budget,
                };
                let time = c.time().seconds();
                for id in &landed.ids {
                    for found in landed.results_of(id, &now)? {
                        self.queue.push_back(Candidate {
                            found,
                            commit: c.id(),
                            time,
                        });
                    }
                }
            }
            self.next = parent;
        }
        Ok(())
    }
}

/// The `rx-results` folder of a commit, `None` when absent.
fn tree_results<'r>(repo: &'r Repository, c: &git2::Commit) -> Option<git2::Tree<'r>> {
    let e = c.tree().ok()?.get_name(RESULTS_DIR)?.to_owned();
    repo.find_tree(e.id()).ok()
}
