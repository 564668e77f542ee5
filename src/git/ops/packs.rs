//! What one fetch brought, checked before anything reads it: every commit and tree
//! in the pack files the fetch added, and the first-parent chain of every fetched
//! ref back to what was read before (objects a plain `git fetch` brought earlier
//! are in no new pack), each looked at by its header first. One over
//! [`super::history::MAX_COMMIT_BYTES`] / [`super::history::MAX_TREE_BYTES`] (a few
//! KiB of zlib that inflate to GiBs) makes the fetch refused, with the refs it moved
//! put back (docs/protocol.md#bound).
use anyhow::Result;
use git2::{Oid, Repository};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pack indexes and the refs under some prefixes, as they were before a fetch.
pub(crate) struct BeforeFetch {
    packs: BTreeSet<PathBuf>,
    prefixes: Vec<String>,
    refs: BTreeMap<String, Oid>,
    /// Where each fetched ref's chain is checked back to: `Some(commit)`, a commit
    /// read and checked before (`Some(None)`: the whole chain, within the bound);
    /// `None`: each ref's own value before the fetch.
    known: Option<Option<Oid>>,
}

/// First-parent commits checked per fetched ref at most (the watcher's default
/// `--walk-limit`).
const CHAIN_LIMIT: usize = 5_000;

/// The `.idx` files of the object database.
fn pack_indexes(repo: &Repository) -> BTreeSet<PathBuf> {
    let dir = repo.commondir().join("objects").join("pack");
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .collect()
        })
        .unwrap_or_default()
}

/// Every direct ref whose name starts with one of `prefixes`, with its target.
fn refs_under(repo: &Repository, prefixes: &[String]) -> BTreeMap<String, Oid> {
    let mut out = BTreeMap::new();
    for p in prefixes {
        let Ok(refs) = repo.references_glob(&format!("{p}*")) else {
            continue;
        };
        for r in refs.flatten() {
            if let (Some(n), Some(t)) = (r.name(), r.target()) {
                out.insert(n.to_owned(), t);
            }
        }
    }
    out
}

/// Remember the packs and the refs under `prefixes` (those the fetch may move)
/// before a fetch. `known`: a commit rxnode itself read and checked (its own
/// `rx-node`, `Some(None)` when there is none), back to which every fetched ref's
/// chain is checked — for refs that a plain `git fetch` also writes; `None`: each
/// ref's value before the fetch.
pub(crate) fn before_fetch(
    repo: &Repository,
    prefixes: &[&str],
    known: Option<Option<Oid>>,
) -> BeforeFetch {
    let prefixes: Vec<String> = prefixes.iter().map(|p| (*p).to_owned()).collect();
    BeforeFetch {
        packs: pack_indexes(repo),
        refs: refs_under(repo, &prefixes),
        prefixes,
        known,
    }
}

/// The object IDs a pack index (version 2, or the older version 1) lists.
fn index_ids(idx: &Path) -> Result<Vec<Oid>> {
    let b = crate::store::fsutil::read(idx)?;
    let (fanout_at, v2) = if b.starts_with(b"\xfftOc") {
        (8, true)
    } else {
        (0, false)
    };
    let n_at = fanout_at + 255 * 4;
    let n = b
        .get(n_at..n_at + 4)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]) as usize)
        .ok_or_else(|| anyhow::anyhow!("{} is too short for a pack index", idx.display()))?;
    let start = fanout_at + 256 * 4;
    let stride = if v2 { 20 } else { 24 };
    let skip = if v2 { 0 } else { 4 };
    (0..n)
        .map(|i| {
            let at = start + i * stride + skip;
            b.get(at..at + 20)
                .and_then(|x| Oid::from_bytes(x).ok())
                .ok_or_else(|| anyhow::anyhow!("{} ends before its object {i}", idx.display()))
        })
        .collect()
}

/// After a fetch: the first commit or tree over its limit in a pack the fetch
/// added, said with its size (`None` when there is none). On one, every ref under
/// the prefixes of `before` is put back as it was (refs the fetch created are
/// deleted), so nothing later reads the fetched history.
pub(crate) fn refuse_oversized(repo: &Repository, before: &BeforeFetch) -> Option<String> {
    let now = refs_under(repo, &before.prefixes);
    let why = pack_indexes(repo)
        .difference(&before.packs)
        .find_map(|idx| match index_ids(idx) {
            Ok(ids) => ids
                .into_iter()
                .find_map(|id| super::history::oversized(repo, id)),
            Err(e) => Some(format!("cannot list what the fetch brought: {e:#}")),
        })
        .or_else(|| {
            now.iter().find_map(|(name, tip)| {
                let stop = before
                    .known
                    .unwrap_or_else(|| before.refs.get(name).copied());
                super::history::oversized_on_chain(repo, *tip, stop, CHAIN_LIMIT, None, u64::MAX)
            })
        })?;
    for (name, now) in now {
        match before.refs.get(&name) {
            Some(old) if *old == now => {}
            Some(old) => {
                let _ = repo.reference(&name, *old, true, "rxnode: oversized object fetched");
            }
            None => {
                if let Ok(mut r) = repo.find_reference(&name) {
                    let _ = r.delete();
                }
            }
        }
    }
    for (name, old) in &before.refs {
        if repo.find_reference(name).is_err() {
            let _ = repo.reference(name, *old, true, "rxnode: oversized object fetched");
        }
    }
    Some(why)
}
