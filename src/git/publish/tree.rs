//! The Git plumbing of a publication: which commit to build on, the result
//! trees, the commit and its message, and the local results branch (`rx-node`,
//! or this node's own `rx-results/<NODE>`) — all from blobs and trees, never
//! through the index or the work tree.
use super::prepared::{published_node, Prepared};
use crate::exit::refused;
use crate::git::refspec::PushRefspec;
use crate::result::RESULTS_DIR;
use crate::result::{RESULT_JSON as JSON, RESULT_MD as MD};
use anyhow::{Context, Result};
use git2::{Commit, ErrorCode, Oid, Repository};
use std::collections::BTreeMap;

use crate::result::LOG_META;

/// Whether the commit `landed` holds `rx-results/<id>/` with the very trees
/// that the local commit `local` (a record's commit) holds there. Only the
/// `<id>` folder of each is read, never the whole results tree.
pub(super) fn same_result(repo: &Repository, landed: &Commit, id: &str, local: &str) -> bool {
    let Some(mine) = Oid::from_str(local)
        .and_then(|o| repo.find_commit(o))
        .ok()
        .and_then(|c| id_entries(repo, &c, id).ok())
    else {
        return false;
    };
    let Ok(there) = id_entries(repo, landed, id) else {
        return false;
    };
    // The record's result is `<id>` (the old layout) or `<id>/<node>`: every such
    // entry of the local commit must have landed with the very same tree.
    !mine.is_empty() && mine.iter().all(|(k, t)| there.get(k) == Some(t))
}

/// The author when Git has no `user.name`/`user.email`: no host name in it.
pub(super) const FALLBACK_AUTHOR: (&str, &str) = ("rxnode", "rxnode@localhost.invalid");

/// Refused when the results branch (`rx-node` or `rx-results/<NODE>`) is
/// checked out here or in a linked worktree: a publication would change that work tree.
pub(super) fn refuse_if_rx_node_checked_out(repo: &Repository, spec: &PushRefspec) -> Result<()> {
    let short = spec.short();
    let on_rx_node = |r: &Repository| {
        r.find_reference("HEAD")
            .is_ok_and(|h| h.symbolic_target() == Some(spec.branch()))
    };
    if on_rx_node(repo) {
        return Err(refused(format!(
            "the checkout has {short} checked out; publishing would change its work tree — switch back to your branch first",
        )));
    }
    // Linked worktrees (`git worktree add … rx-node`) share the branch too.
    for name in repo.worktrees()?.iter().flatten() {
        let wt = repo.find_worktree(name)?;
        if let Ok(r) = Repository::open_from_worktree(&wt) {
            if on_rx_node(&r) {
                return Err(refused(format!(
                    "the linked worktree {} has {short} checked out; publishing would change its work tree",
                    wt.path().display()
                )));
            }
        }
    }
    Ok(())
}

/// The local and remote-tracking tips of the results branch.
pub(super) struct Tips {
    pub(super) local: Option<Oid>,
    pub(super) tracking: Option<Oid>,
}

impl Tips {
    pub(super) fn read(repo: &Repository, remote: &str, spec: &PushRefspec) -> Result<Tips> {
        let get = |name: &str| -> Result<Option<Oid>> {
            match repo.refname_to_id(name) {
                Ok(o) => Ok(Some(o)),
                Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
                Err(e) => Err(e).with_context(|| format!("cannot read {name}")),
            }
        };
        Ok(Tips {
            local: get(spec.branch())?,
            tracking: get(&tracking_ref(remote, spec))?,
        })
    }
}

/// The remote-tracking ref of the results branch for `remote`.
pub(super) fn tracking_ref(remote: &str, spec: &PushRefspec) -> String {
    crate::git::ops::tracking_ref(remote, spec.short())
}

/// The parent of the new commit and the local-only results carried onto it.
pub(super) struct BasePlan<'r> {
    pub(super) base: Option<Commit<'r>>,
    pub(super) carry: BTreeMap<String, Oid>,
}

/// Pick the newest of the local and remote-tracking tips; when they have
/// diverged, build on the remote one and carry the local-only results over.
pub(super) fn plan_base<'r>(repo: &'r Repository, tips: &Tips) -> Result<BasePlan<'r>> {
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

/// Every other result a push of `plan` would put on the remote besides this
/// publication's own `key`: the results carried over onto a diverged remote
/// tip, and those of local commits the remote does not have yet (published
/// here without `--push`). The prompt lists them, so nothing reaches `rx-node`
/// that the operator did not confirm. Only read when the local branch is ahead
/// of or apart from the remote one; a plain publication reads nothing more.
pub(super) fn also_pushed(
    repo: &Repository,
    plan: &BasePlan,
    tips: &Tips,
    key: &str,
) -> Result<Vec<String>> {
    let mut out: std::collections::BTreeSet<String> = plan.carry.keys().cloned().collect();
    if let Some(b) = &plan.base {
        match tips.tracking {
            Some(t) if t == b.id() => {}
            Some(t) => {
                let onto = repo.find_commit(t)?;
                out.extend(local_additions(repo, b.id(), &onto)?.into_keys());
            }
            None => out.extend(result_entries(repo, Some(b))?.into_keys()),
        }
    }
    out.remove(key);
    Ok(out.into_iter().collect())
}

/// Results added by the commits of `local` that `onto` lacks, and not in `onto`.
///
/// A local-only result whose ID `onto` already holds with a *different* tree
/// (another node published the same ID) is refused, naming the ID: leaving it
/// out would lose it silently, and carrying it would overwrite theirs.
/// The same tree on both sides is simply already there.
pub(super) fn local_additions(
    repo: &Repository,
    local: Oid,
    onto: &Commit,
) -> Result<BTreeMap<String, Oid>> {
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

/// What a tree entry is when it is neither a folder nor a regular file (a
/// submodule's gitlink, a symbolic link, anything else): `None` for those two.
fn not_plain(e: &git2::TreeEntry) -> Option<&'static str> {
    match (e.kind(), e.filemode()) {
        (Some(git2::ObjectType::Tree), 0o040000) => None,
        (Some(git2::ObjectType::Blob), 0o100644 | 0o100755) => None,
        (Some(git2::ObjectType::Blob), 0o120000) => Some("a symbolic link"),
        (Some(git2::ObjectType::Commit), _) | (_, 0o160000) => Some("a submodule (gitlink)"),
        _ => Some("not a plain folder or file"),
    }
}

/// Refused (exit 3) when `e`, at `path` on `rx-node` (commit `at`), is not a
/// plain folder or file: rxnode never follows or writes over such an entry.
fn refuse_not_plain(e: &git2::TreeEntry, path: &str, at: Oid) -> Result<()> {
    match not_plain(e) {
        None => Ok(()),
        Some(what) => Err(refused(format!(
            "{path} on rx-node (commit {at}) is {what}, not a plain folder or file; \
             rxnode neither reads nor writes over it — remove it from rx-node by hand \
             (docs/publishing.md#how-the-commit-is-made)"
        ))),
    }
}

/// The `rx-results` folder of a commit (`None` when absent); refused when it
/// is anything but a plain folder.
fn results_tree<'r>(repo: &'r Repository, c: &Commit) -> Result<Option<git2::Tree<'r>>> {
    let tree = c.tree()?;
    let Some(e) = tree.get_name(RESULTS_DIR) else {
        return Ok(None);
    };
    refuse_not_plain(&e, RESULTS_DIR, c.id())?;
    if e.kind() != Some(git2::ObjectType::Tree) {
        return Err(refused(format!(
            "{RESULTS_DIR} on rx-node (commit {}) is a file, not a folder; nothing is written over it",
            c.id()
        )));
    }
    Ok(Some(repo.find_tree(e.id())?))
}

/// A folder in a commit that only letter case tells from the result `key`'s
/// (`rx-results/<id>/` or `rx-results/<id>/<node>/`): on a case-insensitive
/// file system (Windows, macOS) a checkout of both is one folder, and one
/// result overwrites or passes for the other. Only the names of
/// `rx-results/` and of the matching `<id>/` folders are read.
pub(super) fn case_twin_at(repo: &Repository, c: &Commit, key: &str) -> Result<Option<String>> {
    let (id, node) = match key.split_once('/') {
        Some((i, n)) => (i, Some(n)),
        None => (key, None),
    };
    let Some(rt) = results_tree(repo, c)? else {
        return Ok(None);
    };
    for e in rt.iter() {
        let Some(name) = e.name() else { continue };
        if rxnode_interlock::same_folder(name, id) {
            return Ok(Some(format!("{RESULTS_DIR}/{name}/")));
        }
        if name != id {
            continue;
        }
        let Some(node) = node else { continue };
        let Ok(idtree) = repo.find_tree(e.id()) else {
            continue;
        };
        for f in idtree.iter() {
            if let Some(n) = f.name().filter(|n| rxnode_interlock::same_folder(n, node)) {
                return Ok(Some(format!("{RESULTS_DIR}/{name}/{n}/")));
            }
        }
    }
    Ok(None)
}

/// The results of one task ID in a commit, read by path (`rx-results/<id>/`
/// only): key → tree id, keyed as [`result_entries`] keys them.
pub(super) fn id_entries(repo: &Repository, c: &Commit, id: &str) -> Result<BTreeMap<String, Oid>> {
    let mut out = BTreeMap::new();
    let Some(rt) = results_tree(repo, c)? else {
        return Ok(out);
    };
    let Some(e) = rt.get_name(id) else {
        return Ok(out);
    };
    let path = format!("{RESULTS_DIR}/{id}");
    refuse_not_plain(&e, &path, c.id())?;
    let Ok(idtree) = repo.find_tree(e.id()) else {
        out.insert(id.to_owned(), e.id());
        return Ok(out);
    };
    let mut legacy = idtree.is_empty();
    for f in idtree.iter() {
        let Some(node) = f.name() else { continue };
        refuse_not_plain(&f, &format!("{path}/{node}"), c.id())?;
        match f.kind() {
            Some(git2::ObjectType::Tree) => {
                out.insert(format!("{id}/{node}"), f.id());
            }
            _ => legacy = true,
        }
    }
    if legacy {
        out.insert(id.to_owned(), e.id());
    }
    Ok(out)
}

/// Whether a commit holds the result `key` (`<ID>/<NODE>` or `<ID>`), read by
/// path: its tree id, `None` when absent.
pub(super) fn result_at(repo: &Repository, c: &Commit, key: &str) -> Result<Option<Oid>> {
    let id = key.split_once('/').map_or(key, |(i, _)| i);
    Ok(id_entries(repo, c, id)?.get(key).copied())
}

/// Results under `rx-results/` of a commit: key → tree id. A per-node result
/// `rx-results/<ID>/<NODE>/` is keyed `<ID>/<NODE>`; a result of the layout before
/// node names (files directly in `rx-results/<ID>/`) is keyed `<ID>`. This reads
/// every result folder: only for a rebuild after a diverged or lost push, never
/// on a plain publication (whose cost must not grow with other nodes' results).
/// An entry that is not a plain folder or file is refused, naming its path.
pub(super) fn result_entries(
    repo: &Repository,
    c: Option<&Commit>,
) -> Result<BTreeMap<String, Oid>> {
    let mut out = BTreeMap::new();
    let Some(c) = c else { return Ok(out) };
    let Some(rt) = results_tree(repo, c)? else {
        return Ok(out);
    };
    for e in rt.iter() {
        let Some(n) = e.name() else { continue };
        refuse_not_plain(&e, &format!("{RESULTS_DIR}/{n}"), c.id())?;
        out.extend(id_entries(repo, c, n)?);
    }
    Ok(out)
}

/// The `rx-results/<ID>/` tree with exactly the three files.
pub(super) fn result_subtree(repo: &Repository, prep: &Prepared, log_meta: &str) -> Result<Oid> {
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

/// A commit on `parent` whose tree is the parent's plus the `add` results,
/// updated by path (`rx-results/<ID>/<NODE>`): only the folders on that path
/// are read and rewritten, never the other results.
pub(super) fn build_commit(
    repo: &Repository,
    parent: Option<&Commit>,
    add: &BTreeMap<String, Oid>,
    msg: &str,
    sig: &git2::Signature,
) -> Result<Oid> {
    let base = match parent {
        Some(p) => p.tree()?,
        None => repo.find_tree(repo.treebuilder(None)?.write()?)?,
    };
    let mut up = git2::build::TreeUpdateBuilder::new();
    for (name, oid) in add {
        if let Some(p) = parent {
            let (id, node) = match name.split_once('/') {
                Some((i, n)) => (i, Some(n)),
                None => (name.as_str(), None),
            };
            let there = id_entries(repo, p, id)?;
            let taken = match node {
                Some(_) => there.contains_key(name),
                // The old layout: the result is the whole `rx-results/<ID>/`.
                None => !there.is_empty(),
            };
            if taken {
                return Err(refused(format!(
                    "{RESULTS_DIR}/{name}/ already exists on rx-node; a result is never overwritten"
                )));
            }
            let id_is_file = base
                .get_path(std::path::Path::new(&format!("{RESULTS_DIR}/{id}")))
                .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree));
            if node.is_some() && id_is_file {
                return Err(refused(format!(
                    "{RESULTS_DIR}/{id} on rx-node is not a folder; nothing is written over it"
                )));
            }
        }
        up.upsert(format!("{RESULTS_DIR}/{name}"), *oid, git2::FileMode::Tree);
    }
    let tree = repo.find_tree(up.create_updated(repo, &base)?)?;
    let parents: Vec<&Commit> = parent.into_iter().collect();
    Ok(repo.commit(None, sig, sig, msg, &tree, &parents)?)
}

/// Move the local results branch from `old` (compare-and-swap) to `new`.
pub(super) fn set_rx_node(
    repo: &Repository,
    spec: &PushRefspec,
    old: Option<Oid>,
    new: Oid,
) -> Result<()> {
    let msg = "rxnode publish";
    let branch = spec.branch();
    match old {
        Some(o) => repo.reference_matching(branch, new, true, o, msg),
        None => repo.reference(branch, new, false, msg),
    }
    .with_context(|| format!("cannot move {branch} (changed by someone else meanwhile?)"))?;
    Ok(())
}

/// The author: Git's `user.name`/`user.email`, else [`FALLBACK_AUTHOR`].
pub(super) fn signature(repo: &Repository) -> Result<git2::Signature<'static>> {
    match repo.signature() {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Ok(git2::Signature::now(FALLBACK_AUTHOR.0, FALLBACK_AUTHOR.1)?),
    }
}

/// The commit message: a summary line and the trailers that name the task, the
/// node, the hashes and any carried-over results.
pub(super) fn commit_message(prep: &Prepared, carry: &BTreeMap<String, Oid>) -> String {
    let mut m = format!(
        "rx-results: {} ({}) from {}\n\nTask: {}\nNode-Name: {}\nTask-SHA256: {}\nSource-Commit: {}\n",
        prep.id, prep.status, prep.node, prep.id, prep.node, prep.task_sha256, prep.meta.commit,
    );
    if let Some(n) = published_node(&prep.json) {
        m.push_str(&format!("Node: {n}\n"));
    }
    m.push_str(&format!("rxnode: {}\n", env!("CARGO_PKG_VERSION")));
    if !prep.meta.blob.is_empty() {
        m.push_str(&format!("Task-Blob: {}\n", prep.meta.blob));
    }
    if !carry.is_empty() {
        m.push_str(&format!(
            "Carried-Over: {}\n",
            carry.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    m
}

/// The path a diff entry names (the new side, else the old one, for a deletion).
pub(crate) fn delta_path(d: &git2::DiffDelta<'_>) -> String {
    d.new_file()
        .path()
        .or_else(|| d.old_file().path())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Refused;
    use serde_json::json;

    /// A same-ID result from another node is
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
        assert!(!same_result(&repo, &tc, "RX_X", &mine.to_string()));
        assert!(same_result(&repo, &tc, "RX_X", &same.to_string()));
        assert!(!same_result(&repo, &tc, "RX_Y", &same.to_string()));
        assert!(!same_result(&repo, &tc, "RX_X", "not a commit"));
        let err = local_additions(&repo, mine, &tc).unwrap_err();
        assert!(err.downcast_ref::<Refused>().is_some(), "{err:#}");
        assert!(format!("{err:#}").contains("RX_X"), "{err:#}");
        // The identical tree is already there: nothing to carry, no refusal.
        assert!(local_additions(&repo, same, &tc).unwrap().is_empty());
    }

    /// The published node name is the
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

    /// With the one `TaskMeta`, an empty `blob` (an older outbox
    /// lacked it) adds no `Task-Blob` trailer; a given one does.
    #[test]
    fn the_task_blob_trailer_is_written_only_when_known() {
        let meta = |blob: &str| crate::store::outbox::TaskMeta {
            task_id: "T1".into(),
            commit: "c".repeat(40),
            blob: blob.into(),
            task_sha256: "s".into(),
            approved_at: String::new(),
            source_branch: String::new(),
        };
        let prep = |blob: &str| Prepared {
            id: rxnode_interlock::TaskId::parse("T1").unwrap(),
            title: "t".into(),
            source_branch: "video-development".into(),
            task_sha256: "s".into(),
            meta: meta(blob),
            approved_at: "a".into(),
            md: String::new(),
            json_text: String::new(),
            json: json!({}),
            status: "PASS".into(),
            stray: vec![],
            node: "n1".into(),
        };
        let none = commit_message(&prep(""), &BTreeMap::new());
        assert!(!none.contains("Task-Blob"), "{none}");
        assert!(
            none.starts_with("rx-results: T1 (PASS) from n1\n"),
            "{none}"
        );
        let some = commit_message(&prep("b1"), &BTreeMap::new());
        assert!(some.contains("\nTask-Blob: b1\n"), "{some}");
    }
}
