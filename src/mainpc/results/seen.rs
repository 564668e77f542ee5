//! What the main PC saw last of every branch the nodes write, kept outside any
//! branch in `<git dir>/rxnode/main-pc-seen.json` (docs/protocol.md#6-the-main-pcs-side):
//! the tip of `rx-node` and of each `rx-results/<NODE>`, and the commit and
//! heartbeat time of each `rx-status/<NODE>`. A results branch whose new tip
//! does not descend from the tip seen last, or that is gone, and a status whose
//! heartbeat went back in time, was rewritten by someone: that is recorded and
//! named at every later run, never silently trusted.
use super::text::parse_time;
use crate::store::fsutil::{now_iso, read_small_regular, write_atomic};
use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The file's own version.
const SEEN_SCHEMA: u32 = 1;
/// The largest file read (a few hundred bytes per branch).
const MAX_BYTES: u64 = 8 << 20;

/// `<git dir>/rxnode/main-pc-seen.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeenFile {
    /// [`SEEN_SCHEMA`].
    pub(crate) schema_version: u32,
    /// Branch (`rx-node`, `rx-results/<NODE>`, `rx-status/<NODE>`) → what was seen.
    pub(crate) branches: BTreeMap<String, SeenBranch>,
}

/// What the main PC saw last of one branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeenBranch {
    /// The tip (40 hex).
    pub(crate) tip: String,
    /// A status branch's heartbeat time (`STATUS.json` `time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) heartbeat: Option<String>,
    /// The first rewrite found, kept until this file is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rewritten: Option<Rewrite>,
    /// Each later rewrite found, oldest first (at most [`MAX_LATER`]), kept
    /// as the first is: a later one is news of its own, not the first again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) later: Vec<Rewrite>,
}

/// The most later rewrites kept of one branch.
const MAX_LATER: usize = 20;

/// A rewrite of a branch, as found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rewrite {
    /// When this PC found it (ISO 8601).
    pub(crate) detected_at: String,
    /// What was found, one line.
    pub(crate) why: String,
}

/// One branch as fetched now.
pub(super) struct Now {
    /// `rx-node`, `rx-results/<NODE>` or `rx-status/<NODE>`.
    pub(super) branch: String,
    pub(super) tip: Oid,
    /// A status branch's heartbeat time.
    pub(super) heartbeat: Option<String>,
}

/// Where the file lives: in the repository's Git folder, never in a branch or the work tree.
fn path(repo: &Repository) -> PathBuf {
    repo.commondir().join("rxnode").join("main-pc-seen.json")
}

/// The file; an unreadable one is named on stderr and read as empty.
fn load(repo: &Repository) -> SeenFile {
    let p = path(repo);
    let parsed = read_small_regular(&p, MAX_BYTES, "record of seen branches", None).and_then(|b| {
        b.map(|b| serde_json::from_slice::<SeenFile>(&b).map_err(anyhow::Error::from))
            .transpose()
    });
    match parsed {
        Ok(Some(f)) if f.schema_version == SEEN_SCHEMA => f,
        Ok(None) => SeenFile {
            schema_version: SEEN_SCHEMA,
            ..SeenFile::default()
        },
        Ok(Some(f)) => {
            note!(
                "rxnode: warning: {}: schema_version {} is not {SEEN_SCHEMA}; what this PC saw before is not known, so a rewrite before now cannot be told",
                p.display(),
                f.schema_version
            );
            SeenFile {
                schema_version: SEEN_SCHEMA,
                ..SeenFile::default()
            }
        }
        Err(e) => {
            note!(
                "rxnode: warning: {e:#}; what this PC saw before is not known, so a rewrite before now cannot be told"
            );
            SeenFile {
                schema_version: SEEN_SCHEMA,
                ..SeenFile::default()
            }
        }
    }
}

/// Compare `now` with what was seen last of the branches `family` selects,
/// record it, and return every branch of the family found rewritten, now or
/// before (branch → one line). `deleted_counts`: a branch of the family seen
/// before and absent now was deleted (results branches; a status branch may
/// simply stop).
pub(super) fn check(
    repo: &Repository,
    family: &dyn Fn(&str) -> bool,
    now: &[Now],
    deleted_counts: bool,
) -> BTreeMap<String, String> {
    let mut file = load(repo);
    let at = now_iso();
    let mut current: BTreeMap<&str, &Now> = BTreeMap::new();
    for n in now {
        current.insert(n.branch.as_str(), n);
    }
    for n in now {
        let b = n.branch.clone();
        let found = match file.branches.get(&b) {
            // A first look: the branch's own history still tells what it published.
            None if is_results_branch(&b) => taken_away(repo, None, n.tip, &b),
            None => None,
            Some(seen) => judge(repo, seen, n),
        };
        let e = file.branches.entry(b).or_insert_with(|| SeenBranch {
            tip: n.tip.to_string(),
            heartbeat: None,
            rewritten: None,
            later: Vec::new(),
        });
        if let Some(why) = found {
            let r = Rewrite {
                detected_at: at.clone(),
                why,
            };
            match &e.rewritten {
                None => e.rewritten = Some(r),
                Some(_) if e.later.len() < MAX_LATER => e.later.push(r),
                Some(_) => {}
            }
        }
        e.tip = n.tip.to_string();
        // A heartbeat only ever moves forward in the record.
        let later = match (&e.heartbeat, &n.heartbeat) {
            (Some(old), Some(new)) => parse_time(new)
                .zip(parse_time(old))
                .is_some_and(|(n, o)| n > o),
            (None, Some(_)) => true,
            _ => false,
        };
        if later {
            e.heartbeat = n.heartbeat.clone();
        }
    }
    if deleted_counts {
        for (b, e) in file.branches.iter_mut() {
            if family(b) && !current.contains_key(b.as_str()) {
                e.rewritten.get_or_insert(Rewrite {
                    detected_at: at.clone(),
                    why: format!("is gone from the remote; this PC last saw it at {}", e.tip),
                });
            }
        }
    }
    save(repo, &file);
    file.branches
        .iter()
        .filter(|(b, _)| family(b))
        .filter_map(|(b, e)| {
            e.rewritten.as_ref().map(|r| {
                let mut why = format!("was rewritten (found {}): {}", r.detected_at, r.why);
                for l in &e.later {
                    why.push_str(&format!("; and again (found {}): {}", l.detected_at, l.why));
                }
                (b.clone(), why)
            })
        })
        .collect()
}

/// Why `n` is not a continuation of what was seen: a results branch whose tip
/// does not descend from the tip seen last, a status whose heartbeat went back.
fn judge(repo: &Repository, seen: &SeenBranch, n: &Now) -> Option<String> {
    let old = seen.tip.as_str();
    if old == n.tip.to_string() {
        return None;
    }
    if n.branch.starts_with("rx-status/") {
        let (new_t, old_t) = (n.heartbeat.as_deref()?, seen.heartbeat.as_deref()?);
        let (a, b) = (parse_time(new_t)?, parse_time(old_t)?);
        return (a < b).then(|| {
            format!(
                "its heartbeat went back from {old_t} (commit {old}) to {new_t} (commit {}): an older or foreign status was put in its place",
                n.tip
            )
        });
    }
    let Ok(o) = Oid::from_str(old) else {
        return Some(format!(
            "the tip this PC saw last, {old:?}, is not a commit ID"
        ));
    };
    if repo.find_commit(o).is_err() {
        return Some(format!(
            "the tip this PC saw last, {old}, is no longer in this repository, so the new tip {} cannot be checked against it",
            n.tip
        ));
    }
    match repo.graph_descendant_of(n.tip, o) {
        Ok(true) => taken_away(repo, Some(o), n.tip, &n.branch),
        _ => Some(format!(
            "the tip this PC saw last, {old}, is not in the history of its new tip {}: results seen before may have been removed or changed",
            n.tip
        )),
    }
}

/// The most tree entries [`taken_away`] reads: far more than a results
/// branch's history holds, so that a hostile history cannot make the check
/// itself unbounded; past it the check says it stopped.
const MAX_COMPARED: usize = 20_000_000;

/// A result as first published: the commit that published it (or, for one
/// held at the tip seen last, that tip), its object and mode.
struct Published {
    commit: Oid,
    /// Held at the tip seen last (else added by `commit`).
    seen: bool,
    id: Oid,
    mode: i32,
}

/// The results published on the way to `new` that `new` no longer holds as
/// they were published (removed, or their folder or a file replaced): those
/// `old`'s `rx-results` held (`None`: a first look, nothing seen before) and
/// those any commit after `old` in `new`'s history added — so a result a
/// node published and a later commit took away is named even when this PC
/// never listed it. A result is never removed nor replaced, so such a commit
/// is a rewrite as much as a forced push (docs/protocol.md#6-the-main-pcs-side).
/// A result is a node's folder `rx-results/<ID>/<NODE>/` or a file of the
/// layout before node names (`rx-results/<ID>/RX_RESULT.json`, …).
fn taken_away(repo: &Repository, old: Option<Oid>, new: Oid, branch: &str) -> Option<String> {
    let mut published: BTreeMap<String, Published> = BTreeMap::new();
    let mut compared = 0usize;
    let mut complete = true;
    if let Some(o) = old {
        if let Some(rt) = results_of(repo, o) {
            complete &= collect(repo, o, &rt, None, &mut published, &mut compared, true);
        }
    }
    let new_rt = results_of(repo, new);
    if complete {
        complete &= walk_added(repo, old, new, &mut published, &mut compared);
    }
    if !complete {
        note!(
            "rxnode: warning: {branch}: its history is too long to check in full ({MAX_COMPARED} \
             entries read) for results a later commit took away; results published before that \
             point and removed since are not named"
        );
    }
    let mut gone: Vec<String> = Vec::new();
    for (path, p) in &published {
        let by = if p.seen {
            format!("held at {} when this PC saw it last", p.commit)
        } else {
            format!("published in commit {}", p.commit)
        };
        let rel = &path[crate::result::RESULTS_DIR.len() + 1..];
        let now = new_rt
            .as_ref()
            .and_then(|t| t.get_path(std::path::Path::new(rel)).ok());
        match now {
            None => gone.push(format!("{path} removed ({by})")),
            Some(n) if n.id() != p.id || n.filemode() != p.mode => {
                gone.push(format!("{path} replaced ({by})"))
            }
            Some(_) => {}
        }
    }
    if gone.is_empty() {
        return None;
    }
    let n = gone.len();
    let listed: Vec<String> = gone.into_iter().take(5).collect();
    let more = if n > listed.len() {
        format!(" and {} more", n - listed.len())
    } else {
        String::new()
    };
    let from = match old {
        Some(o) => format!("on the way from the tip this PC saw last, {o}, to its new tip {new}"),
        None => format!("in its history up to its tip {new} (this PC's first look at it)"),
    };
    Some(format!(
        "a later commit {from} took away {n} result(s) published before: {}{more} (a published \
         result is never removed nor replaced)",
        listed.join(", ")
    ))
}

/// `rx-results` of commit `c`.
fn results_of(repo: &Repository, c: Oid) -> Option<git2::Tree<'_>> {
    let t = repo.find_commit(c).ok()?.tree().ok()?;
    let e = t.get_name(crate::result::RESULTS_DIR)?;
    repo.find_tree(e.id()).ok()
}

/// Record, as published by `commit`, every result of the `rx-results` tree
/// `rt` that `before` (its first parent's `rx-results`) does not hold as it
/// is; results recorded already keep their first publication. `false` once
/// [`MAX_COMPARED`] entries were read.
fn collect(
    repo: &Repository,
    commit: Oid,
    rt: &git2::Tree,
    before: Option<&git2::Tree>,
    out: &mut BTreeMap<String, Published>,
    compared: &mut usize,
    seeding: bool,
) -> bool {
    use crate::result::{LOG_META, RESULTS_DIR, RESULT_JSON, RESULT_MD};
    use git2::ObjectType;
    let sub = |t: Option<&git2::Tree>, name: &str| -> Option<git2::Tree<'_>> {
        let e = t?.get_name(name)?;
        repo.find_tree(e.id()).ok()
    };
    for id_e in rt.iter() {
        *compared += 1;
        if *compared > MAX_COMPARED {
            return false;
        }
        let Ok(id) = std::str::from_utf8(id_e.name_bytes()) else {
            continue;
        };
        if id_e.kind() != Some(ObjectType::Tree) || rxnode_interlock::TaskId::parse(id).is_err() {
            continue;
        }
        let was = before.and_then(|b| b.get_name(id));
        if was.as_ref().is_some_and(|w| w.id() == id_e.id()) {
            continue;
        }
        let Ok(now) = repo.find_tree(id_e.id()) else {
            continue;
        };
        let was = sub(before, id);
        for e in now.iter() {
            *compared += 1;
            if *compared > MAX_COMPARED {
                return false;
            }
            let Ok(name) = std::str::from_utf8(e.name_bytes()) else {
                continue;
            };
            let is_result = match e.kind() {
                Some(ObjectType::Tree) => crate::store::node::check_name(name).is_ok(),
                Some(ObjectType::Blob) => [RESULT_JSON, RESULT_MD, LOG_META].contains(&name),
                _ => false,
            };
            let same = was
                .as_ref()
                .and_then(|w| w.get_name(name))
                .is_some_and(|w| w.id() == e.id() && w.filemode() == e.filemode());
            if !is_result || same {
                continue;
            }
            out.entry(format!("{RESULTS_DIR}/{id}/{name}"))
                .or_insert(Published {
                    commit,
                    seen: before.is_none() && seeding,
                    id: e.id(),
                    mode: e.filemode(),
                });
        }
    }
    true
}

/// [`collect`] over every commit of `new`'s history after `old` (all of it
/// when `None`), oldest first, each against its first parent. `false` once
/// [`MAX_COMPARED`] entries were read (or the history cannot be walked).
fn walk_added(
    repo: &Repository,
    old: Option<Oid>,
    new: Oid,
    out: &mut BTreeMap<String, Published>,
    compared: &mut usize,
) -> bool {
    let walk = || -> Result<git2::Revwalk<'_>, git2::Error> {
        let mut w = repo.revwalk()?;
        w.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
        w.push(new)?;
        if let Some(o) = old {
            w.hide(o)?;
        }
        Ok(w)
    };
    let Ok(walk) = walk() else {
        return false;
    };
    for c in walk {
        *compared += 1;
        if *compared > MAX_COMPARED {
            return false;
        }
        let Ok(c) = c.and_then(|c| repo.find_commit(c)) else {
            return false;
        };
        let Some(rt) = results_of(repo, c.id()) else {
            continue;
        };
        let before = c.parents().next().and_then(|p| results_of(repo, p.id()));
        if before.as_ref().is_some_and(|b| b.id() == rt.id()) {
            continue;
        }
        if !collect(repo, c.id(), &rt, before.as_ref(), out, compared, false) {
            return false;
        }
    }
    true
}

/// Write the file (a failure is named on stderr: the listing still stands).
fn save(repo: &Repository, f: &SeenFile) {
    let p = path(repo);
    let res = serde_json::to_vec_pretty(f)
        .map_err(anyhow::Error::from)
        .and_then(|mut b| {
            b.push(b'\n');
            write_atomic(&p, &b)
        });
    if let Err(e) = res {
        note!(
            "rxnode: warning: cannot record what this PC saw in {}: {e:#}",
            p.display()
        );
    }
}

/// The results branches as fetched, for [`check`].
pub(super) fn results_now(sources: &[std::rc::Rc<super::fetched::Source>]) -> Vec<Now> {
    sources
        .iter()
        .map(|s| Now {
            branch: s.branch.clone(),
            tip: s.tip,
            heartbeat: None,
        })
        .collect()
}

/// Whether `b` is a results branch (`rx-node`, `rx-results/<NODE>`).
pub(super) fn is_results_branch(b: &str) -> bool {
    b == "rx-node" || b.starts_with("rx-results/")
}

/// Whether `b` is a status branch.
pub(super) fn is_status_branch(b: &str) -> bool {
    b.starts_with("rx-status/")
}
