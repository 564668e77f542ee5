//! Reads from commits already fetched: one file's blob at a commit, the
//! first-parent history of the task file, and ancestry.
use anyhow::{anyhow, Context, Result};
use git2::{Oid, Repository, TreeEntry};

/// A file read from a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Blob {
    /// No such file in that commit.
    Missing,
    /// The file exists but is larger than the limit; its content was not loaded.
    TooLarge {
        /// Size in bytes.
        size: usize,
        /// Blob ID.
        blob: String,
    },
    /// The path names something other than a regular file (a directory, a
    /// symlink, a submodule); nothing was loaded.
    NotAFile {
        /// What it is.
        kind: &'static str,
        /// The object ID it points to.
        id: String,
    },
    /// The content.
    Content {
        /// The bytes.
        bytes: Vec<u8>,
        /// Blob ID.
        blob: String,
    },
}

/// Read `path` from `commit` as a blob, refusing (without loading) anything
/// over `max_bytes`. Uses only the object database.
pub(crate) fn read_blob_at(
    repo: &Repository,
    commit: Oid,
    path: &str,
    max_bytes: usize,
) -> Result<Blob> {
    let Some(entry) = tree_entry(repo, commit, path)? else {
        return Ok(Blob::Missing);
    };
    let id = entry.id();
    let not_a_file = match (entry.kind(), entry.filemode()) {
        (Some(git2::ObjectType::Blob), 0o120000) => Some("a symbolic link"),
        (Some(git2::ObjectType::Blob), _) => None,
        (Some(git2::ObjectType::Tree), _) => Some("a directory"),
        (Some(git2::ObjectType::Commit), _) => Some("a submodule"),
        _ => Some("not a regular file"),
    };
    if let Some(kind) = not_a_file {
        return Ok(Blob::NotAFile {
            kind,
            id: id.to_string(),
        });
    }
    let odb = repo.odb().context("cannot open the object database")?;
    let (size, _) = odb
        .read_header(id)
        .with_context(|| format!("cannot read the header of blob {id}"))?;
    if size > max_bytes {
        return Ok(Blob::TooLarge {
            size,
            blob: id.to_string(),
        });
    }
    let blob = repo
        .find_blob(id)
        .with_context(|| format!("cannot read blob {id}"))?;
    Ok(Blob::Content {
        bytes: blob.content().to_vec(),
        blob: id.to_string(),
    })
}

/// The largest commit object rxnode reads. A commit is its header and message —
/// a few hundred bytes, a few KiB with an SSH or OpenPGP signature — but the
/// branch is hostile, and a zlib stream inflates about 1000-fold: 300 KiB pushed
/// can hold a commit of 300 MiB, which a read would load whole (twice over,
/// message and parse). Anything larger is never loaded (docs/protocol.md#bound).
pub(crate) const MAX_COMMIT_BYTES: usize = 2 << 20;

/// The largest tree object rxnode reads: 16 MiB, some 400 000 entries (the
/// `rx-results` folder of 100 000 results is 3 MiB); the same reasoning.
pub(crate) const MAX_TREE_BYTES: usize = 16 << 20;

/// Why the object `id` is not read: it is a commit or tree larger than it may
/// be, said with its size; `None` when it may be read, or is not in the object
/// database (the caller's own lookup says that). Reads only the object's header.
pub(crate) fn oversized(repo: &Repository, id: Oid) -> Option<String> {
    let (size, kind) = repo.odb().ok()?.read_header(id).ok()?;
    let (what, max) = match kind {
        git2::ObjectType::Commit => ("commit", MAX_COMMIT_BYTES),
        git2::ObjectType::Tree => ("tree", MAX_TREE_BYTES),
        _ => return None,
    };
    (size > max).then(|| {
        format!(
            "{what} {id} is {size} bytes, over the {max} bytes a {what} may have: not read \
             (a few KiB of compressed data can inflate to that)"
        )
    })
}

/// The commit `id`, read only when it is not over [`MAX_COMMIT_BYTES`]
/// ([`oversized`]): every commit of a branch is read through here.
pub(crate) fn commit(repo: &Repository, id: Oid) -> Result<git2::Commit<'_>> {
    if let Some(why) = oversized(repo, id) {
        anyhow::bail!("{why}");
    }
    repo.find_commit(id)
        .with_context(|| format!("commit {id} is not in this repository"))
}

/// The tree `id`, read only when it is not over [`MAX_TREE_BYTES`].
pub(crate) fn tree(repo: &Repository, id: Oid) -> Result<git2::Tree<'_>> {
    if let Some(why) = oversized(repo, id) {
        anyhow::bail!("{why}");
    }
    repo.find_tree(id)
        .with_context(|| format!("tree {id} is not in this repository"))
}

/// Whether the commit `id` is in the object database (its header alone is read).
fn present(repo: &Repository, id: Oid) -> bool {
    repo.odb()
        .ok()
        .and_then(|o| o.read_header(id).ok())
        .is_some_and(|(_, k)| k == git2::ObjectType::Commit)
}

/// Environment variable that sets the bytes of commit objects one poll's walk
/// reads at most (1 MiB ..= 16 GiB; [`WALK_BYTES`] otherwise).
pub(crate) const WALK_BYTES_ENV: &str = "RXNODE_WALK_BYTES";

/// Bytes of commit objects one poll's walk reads at most, unless
/// `RXNODE_WALK_BYTES` says otherwise: 5 000 commits (`--walk-limit`) of
/// 13 KiB. The bound on one commit alone did not bound a poll: commits of just
/// under [`MAX_COMMIT_BYTES`] compress to a few KiB each, so 200 of them (under
/// 600 KB pushed) made one poll read and parse 400 MB several times over
/// (11 s of CPU; docs/protocol.md#bound).
pub(crate) const WALK_BYTES: u64 = 64 << 20;

/// The commit bytes one poll's walk may read: [`WALK_BYTES`] unless
/// `RXNODE_WALK_BYTES` holds a number of bytes in 1 MiB ..= 16 GiB (anything
/// else is ignored with a warning naming it: the default stays).
pub(crate) fn walk_bytes_budget() -> u64 {
    let Ok(v) = std::env::var(WALK_BYTES_ENV) else {
        return WALK_BYTES;
    };
    match v.trim().parse::<u64>() {
        Ok(b) if ((1 << 20)..=(16 << 30)).contains(&b) => b,
        _ => {
            tracing::warn!(
                "{WALK_BYTES_ENV}={v:?} ignored: must be bytes in 1048576 ..= 17179869184; \
                 {WALK_BYTES} used"
            );
            WALK_BYTES
        }
    }
}

/// The first commit over [`MAX_COMMIT_BYTES`], or whose root tree — or, given
/// `path`, a folder on the way to `path` — is over [`MAX_TREE_BYTES`], on the
/// first-parent chain from `tip` down to (not including) `stop`, looking at no
/// more than `max` commits: why it is not read. A poll refuses such a tip before
/// anything else reads it: a walk looks `path` up in every commit it examines,
/// so an oversized `docs/` in one of them would fail every poll.
///
/// `bytes` bounds what the chain's commits may hold together (the walk that
/// follows reads each of them): the first commit that would take their sum past
/// it is not read, and why is said naming [`WALK_BYTES_ENV`].
pub(crate) fn oversized_on_chain(
    repo: &Repository,
    tip: Oid,
    stop: Option<Oid>,
    max: usize,
    path: Option<&str>,
    bytes: u64,
) -> Option<String> {
    let mut c = tip;
    let mut sum = 0u64;
    for n in 0..max {
        if Some(c) == stop || !present(repo, c) {
            return None;
        }
        if let Some(why) = oversized(repo, c) {
            return Some(why);
        }
        let size = repo
            .odb()
            .and_then(|o| o.read_header(c))
            .map_or(0, |(size, _)| size as u64);
        sum = sum.saturating_add(size);
        if sum > bytes {
            return Some(format!(
                "the {} newest commits down to {c} hold {sum} bytes, over the {bytes} bytes of \
                 commits one poll reads ({WALK_BYTES_ENV}; ordinary commits are a few hundred \
                 bytes): {c} and what is older are not read",
                n + 1
            ));
        }
        let k = repo.find_commit(c).ok()?;
        if let Some(why) = oversized(repo, k.tree_id()) {
            return Some(format!("the root {why}"));
        }
        if let Some(why) = path.and_then(|p| oversized_folder(repo, c, k.tree_id(), p)) {
            return Some(why);
        }
        c = k.parent_ids().next()?;
    }
    None
}

/// Why a folder on the way to `path` in the commit `commit` (root tree `root`,
/// itself within [`MAX_TREE_BYTES`]) is not read: the first one over
/// [`MAX_TREE_BYTES`], named with its path. `None` when every folder there may
/// be read, or the path ends earlier (a missing folder, a file where a folder
/// was): the lookup itself says that.
fn oversized_folder(repo: &Repository, commit: Oid, root: Oid, path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (_, folders) = parts.split_last()?;
    let mut t = repo.find_tree(root).ok()?;
    let mut at = String::new();
    for name in folders {
        let id = t
            .get_name(name)
            .filter(|e| e.kind() == Some(git2::ObjectType::Tree))?
            .id();
        at.push_str(name);
        at.push('/');
        if let Some(why) = oversized(repo, id) {
            return Some(format!("the folder {at} of commit {commit}: {why}"));
        }
        t = repo.find_tree(id).ok()?;
    }
    None
}

/// Why `path` is absent from `commit` when a folder on the way to it is now
/// something else — a submodule (gitlink), a symbolic link, a file — named with
/// its path (`docs/handoff is now a submodule, not a folder`). `None` when the
/// folders are there or simply missing (a plain deletion), or cannot be read.
pub(crate) fn path_blocked(repo: &Repository, commit: Oid, path: &str) -> Option<String> {
    let c = self::commit(repo, commit).ok()?;
    let mut t = tree(repo, c.tree_id()).ok()?;
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let (_, folders) = parts.split_last()?;
    let mut at = String::new();
    for name in folders {
        let (kind, mode, id) = {
            let e = t.get_name(name)?;
            (e.kind(), e.filemode(), e.id())
        };
        at.push_str(name);
        let what = match (kind, mode) {
            (Some(git2::ObjectType::Tree), _) => {
                t = tree(repo, id).ok()?;
                at.push('/');
                continue;
            }
            (Some(git2::ObjectType::Commit), _) => "a submodule",
            (Some(git2::ObjectType::Blob), 0o120000) => "a symbolic link",
            (Some(git2::ObjectType::Blob), _) => "a file",
            _ => "not a folder",
        };
        return Some(format!("{at} is now {what}, not a folder"));
    }
    None
}

/// What a tree holds at a path: the object ID and file mode, or nothing.
pub(crate) type PathEntry = Option<(Oid, i32)>;

/// The entry at `path` in `commit`'s tree (`None` when absent).
pub(crate) fn entry_at(repo: &Repository, commit: Oid, path: &str) -> Result<PathEntry> {
    Ok(tree_entry(repo, commit, path)?.map(|e| (e.id(), e.filemode())))
}

/// The commit that last changed `path` as of `from`: `from` itself or its
/// nearest first-parent ancestor whose entry at `path` (object ID and mode)
/// differs from its own first parent's (a root commit that holds it). An error
/// when none is found within `max_commits`, or when the history ends at a
/// shallow boundary before it (the changing commit cannot be known).
pub(crate) fn last_change(
    repo: &Repository,
    from: Oid,
    path: &str,
    max_commits: usize,
) -> Result<Oid> {
    let mut c = from;
    let mut entry = entry_at(repo, c, path)?;
    for _ in 0..max_commits {
        let commit = self::commit(repo, c)?;
        let Ok(parent) = commit.parent_id(0) else {
            let raw = commit.raw_header_bytes();
            if raw.starts_with(b"parent ") || raw.windows(8).any(|w| w == b"\nparent ") {
                anyhow::bail!(
                    "the history of {path} ends at the shallow boundary {c}: the commit that last changed it is not in this checkout"
                );
            }
            return Ok(c);
        };
        let before = match entry_at(repo, parent, path) {
            Ok(e) => e,
            Err(_) => anyhow::bail!(
                "the parent {parent} of {c} is not in this checkout (shallow?): the commit that last changed {path} cannot be known"
            ),
        };
        if before != entry {
            return Ok(c);
        }
        c = parent;
        entry = before;
    }
    anyhow::bail!("no commit within {max_commits} first-parent commits of {from} changed {path}")
}

/// The tree entry at `path` in `commit` (`None` when absent), the one lookup of
/// [`read_blob_at`] and [`entry_at`].
fn tree_entry(repo: &Repository, commit: Oid, path: &str) -> Result<Option<TreeEntry<'static>>> {
    let c = self::commit(repo, commit)?;
    let mut t = tree(repo, c.tree_id()).with_context(|| format!("commit {commit} has no tree"))?;
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for (i, name) in parts.iter().enumerate() {
        let Some(e) = t.get_name(name).map(|e| e.to_owned()) else {
            return Ok(None);
        };
        if i + 1 == parts.len() {
            return Ok(Some(e));
        }
        if e.kind() != Some(git2::ObjectType::Tree) {
            return Ok(None);
        }
        // Each folder on the way is read only when it is not oversized.
        t = tree(repo, e.id())
            .map_err(|err| anyhow!("cannot look up {path} in {commit}: {err:#}"))?;
    }
    Ok(None)
}

/// One commit of the first-parent history that changed the task path: one
/// *task version* (docs/protocol.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    /// The commit.
    pub(crate) commit: Oid,
    /// What the path holds in this commit (`None`: the file was deleted).
    pub(crate) entry: PathEntry,
    /// What it held in the commit's first parent (`None`: absent, or a root commit).
    pub(crate) before: PathEntry,
}

/// The task versions between a stop point and the tip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct History {
    /// Every version found, oldest first.
    pub(crate) versions: Vec<Version>,
    /// First-parent commits walked.
    pub(crate) commits: usize,
    /// The walk stopped at its commit limit before reaching the stop point
    /// (older versions, if any, were not looked at).
    pub(crate) truncated: bool,
    /// When `truncated`: the newest commit the walk did not reach (the first
    /// parent of the oldest commit walked); everything from it back is not examined.
    pub(crate) not_walked_from: Option<Oid>,
    /// The walk ended early because the history is incomplete here (a shallow
    /// clone, a missing object): why. Older versions were not looked at.
    pub(crate) incomplete: Option<String>,
}

/// What a walk collected: the chain (newest first), whether it hit the commit
/// limit, and why it ended early if the history is incomplete.
type Chain = (Vec<Oid>, bool, Option<String>);

/// The first-parent chain from `tip` down to (not including) `hide`, by
/// following first parents: exact when `hide` is on that chain or absent
/// (then down to the root, or to a shallow clone's boundary, reported).
/// When `max_commits` commits are collected before `hide` is met, the chain so
/// far is returned as truncated: the walk never goes further than its bound.
/// `None` when the chain ends (root or shallow boundary) without meeting
/// `hide` (it is reachable only through a merge's second parent): the caller
/// asks libgit2's revwalk.
fn first_parent_chain(
    repo: &Repository,
    tip: Oid,
    hide: Option<Oid>,
    max_commits: usize,
) -> Result<Option<Chain>> {
    let mut chain = Vec::new();
    let mut c = tip;
    loop {
        if Some(c) == hide {
            return Ok(Some((chain, false, None)));
        }
        if chain.len() >= max_commits {
            return Ok(Some((chain, true, None)));
        }
        if let Some(why) = oversized(repo, c) {
            // Never read, and never handed to libgit2's revwalk either.
            return Ok(Some((chain, false, Some(why))));
        }
        let commit = self::commit(repo, c)?;
        chain.push(c);
        match commit.parent_ids().next() {
            Some(p) if present(repo, p) => c = p,
            Some(p) => {
                let why =
                    format!("the parent {p} of {c} is not in this repository (a shallow clone?)");
                return Ok(hide.is_none().then_some((chain, false, Some(why))));
            }
            None => return Ok(hide.is_none().then_some((chain, false, None))),
        }
    }
}

/// `git rev-list --first-parent tip ^hide` through libgit2's revwalk.
fn revwalk_chain(
    repo: &Repository,
    tip: Oid,
    hide: Option<Oid>,
    max_commits: usize,
) -> Result<Chain> {
    let mut walk = repo.revwalk().context("cannot walk the history")?;
    walk.simplify_first_parent()
        .context("cannot walk first parents")?;
    walk.push(tip)
        .with_context(|| format!("cannot walk from {tip}"))?;
    if let Some(h) = hide {
        walk.hide(h)
            .with_context(|| format!("cannot exclude {h} from the walk"))?;
    }
    let mut chain: Vec<Oid> = Vec::new();
    let mut truncated = false;
    let mut incomplete = None;
    for oid in walk {
        let oid = match oid {
            Ok(o) => o,
            Err(e) => {
                incomplete = Some(format!(
                    "the history walk from {tip} ended early: {}",
                    e.message()
                ));
                break;
            }
        };
        if chain.len() >= max_commits {
            truncated = true;
            break;
        }
        chain.push(oid);
    }
    Ok((chain, truncated, incomplete))
}

/// Walk the first-parent history of `tip`, newest first, excluding `hide` and
/// everything reachable from it (`git rev-list --first-parent tip ^hide`), and
/// collect every commit whose `path` entry differs from its first parent's.
/// At most `max_commits` commits are walked. Reads only the object database.
pub(crate) fn task_history(
    repo: &Repository,
    tip: Oid,
    hide: Option<Oid>,
    path: &str,
    max_commits: usize,
) -> Result<History> {
    let (chain, truncated, mut incomplete) = match first_parent_chain(repo, tip, hide, max_commits)?
    {
        Some(found) => found,
        None => revwalk_chain(repo, tip, hide, max_commits)?,
    };
    // `chain` is newest first; each commit is compared with its first parent,
    // which is the next one in the chain (looked up once).
    let mut versions = Vec::new();
    let mut entry = match chain.first() {
        Some(&c) => entry_at(repo, c, path)?,
        None => None,
    };
    let mut walked = 0;
    for (i, &c) in chain.iter().enumerate() {
        if let Some(why) = oversized(repo, c) {
            incomplete = Some(why);
            break;
        }
        let commit = self::commit(repo, c)?;
        let parent = commit.parent_ids().next();
        if let Some(why) = parent.and_then(|p| oversized(repo, p)) {
            // What `c` changed cannot be told without its parent's tree.
            incomplete = Some(why);
            break;
        }
        if let Some(p) = parent.filter(|p| !present(repo, *p)) {
            // A shallow clone's boundary: what `c` changed cannot be told.
            incomplete = Some(format!(
                "the parent {p} of {c} is not in this repository (a shallow clone?)"
            ));
            break;
        }
        walked += 1;
        if let (Some(p), Some(&next)) = (parent, chain.get(i + 1)) {
            if p != next {
                return Err(anyhow!(
                    "history walk from {tip}: {next} follows {c} but is not its first parent"
                ));
            }
        }
        let before = match parent {
            // The same tree holds the same entry: no path lookup needed.
            Some(p) => match self::commit(repo, p) {
                Ok(pc) if pc.tree_id() == commit.tree_id() => entry,
                _ => entry_at(repo, p, path)?,
            },
            None => None,
        };
        if before != entry {
            versions.push(Version {
                commit: c,
                entry,
                before,
            });
        }
        entry = before;
    }
    versions.reverse();
    let not_walked_from = if truncated {
        match chain.last() {
            Some(&c) => self::commit(repo, c)?.parent_ids().next(),
            None => Some(tip),
        }
    } else {
        None
    };
    Ok(History {
        versions,
        commits: walked,
        truncated,
        not_walked_from,
        incomplete,
    })
}

/// Commits an ancestry check or a merge-base search looks at, at most, so that
/// no check can make a poll walk a whole hostile history (see
/// `docs/protocol.md#bound`). An ancestor further away than this is taken as
/// not found: a task naming one is refused, a marker beyond it is reported.
pub(crate) const MAX_ANCESTRY_COMMITS: usize = 2_000;

/// Bytes of commit objects one ancestry search through every parent reads, at
/// most: 2 000 commits of 16 KiB. The commit bound alone did not bound the
/// work: a commit of just under [`MAX_COMMIT_BYTES`] is an octopus merge of
/// 40 000 parents, and a search that met a merge of 2 000 of them parsed each
/// (twice), 4 GB in all — 30 s for one task version. A search that reaches
/// this budget stops: the ancestor is not found (docs/protocol.md#bound).
pub(crate) const MAX_ANCESTRY_BYTES: usize = 32 << 20;

/// What one ancestry search may still read ([`MAX_ANCESTRY_BYTES`]).
struct Budget {
    left: usize,
}

/// Why [`Budget::read`] did not give a commit.
enum Unread {
    /// Not a commit in this repository (a shallow boundary): its line ends.
    Missing,
    /// Reading it would pass the budget: the whole search ends.
    Spent,
}

impl Budget {
    /// The commit `id`, its size (from the object's header) taken from the budget.
    fn read<'r>(&mut self, repo: &'r Repository, id: Oid) -> Result<git2::Commit<'r>, Unread> {
        let (size, kind) = repo
            .odb()
            .and_then(|o| o.read_header(id))
            .map_err(|_| Unread::Missing)?;
        if kind != git2::ObjectType::Commit {
            return Err(Unread::Missing);
        }
        if size > self.left {
            return Err(Unread::Spent);
        }
        self.left -= size;
        self::commit(repo, id).map_err(|_| Unread::Missing)
    }
}

/// Whether `target` is on the first-parent chain of `from` within `max`
/// steps. Stops quietly where the history ends (a root, or a shallow clone's
/// boundary, whose parent is not in the repository). The chain is the one a
/// poll walks anyway: no byte budget here.
fn first_parent_reaches(repo: &Repository, from: Oid, target: Oid, max: usize) -> bool {
    let mut c = from;
    for _ in 0..max {
        if c == target {
            return true;
        }
        match self::commit(repo, c)
            .ok()
            .and_then(|k| k.parent_ids().next())
        {
            Some(p) => c = p,
            None => return false,
        }
    }
    false
}

/// Whether `target` is reachable from `from` through any parents, looking at
/// no more than `max` commits and reading no more than the byte budget
/// (breadth first, newest commit time first). Commits missing from the
/// repository (a shallow boundary) end their line; the budget spent ends the
/// search (not found).
fn reaches_within(
    repo: &Repository,
    from: Oid,
    target: Oid,
    max: usize,
    budget: &mut Budget,
) -> bool {
    use std::collections::{BinaryHeap, HashMap, HashSet};
    let mut seen: HashSet<Oid> = HashSet::new();
    // Each commit is read once: its parents are kept until it is looked at.
    let mut parents: HashMap<Oid, Vec<Oid>> = HashMap::new();
    let mut queue: BinaryHeap<(i64, Oid)> = BinaryHeap::new();
    let mut push =
        |q: &mut BinaryHeap<(i64, Oid)>, parents: &mut HashMap<Oid, Vec<Oid>>, o: Oid| -> bool {
            if o == target {
                q.push((i64::MAX, o));
                return true;
            }
            if seen.insert(o) {
                match budget.read(repo, o) {
                    Ok(c) => {
                        parents.insert(o, c.parent_ids().collect());
                        q.push((c.time().seconds(), o));
                    }
                    Err(Unread::Missing) => {}
                    Err(Unread::Spent) => return false,
                }
            }
            true
        };
    if !push(&mut queue, &mut parents, from) {
        return false;
    }
    let mut looked = 0usize;
    while let Some((_, o)) = queue.pop() {
        if o == target {
            return true;
        }
        looked += 1;
        if looked >= max {
            return false;
        }
        for p in parents.remove(&o).unwrap_or_default() {
            if !push(&mut queue, &mut parents, p) {
                return false;
            }
        }
    }
    false
}

/// Whether `ancestor` is `commit` or one of its ancestors, looking at no more
/// than [`MAX_ANCESTRY_COMMITS`] commits (and, off the first-parent chain,
/// reading no more than [`MAX_ANCESTRY_BYTES`] of them). An unknown `ancestor` (not in this
/// repository), or one further away than the bound, is not.
///
/// The first-parent chain is tried first (the usual case, and the one that
/// works in a shallow clone); then a bounded search through every parent. A
/// history that cannot be searched (objects missing past a shallow boundary)
/// answers "not an ancestor", never an error that would stop every poll.
pub(crate) fn is_ancestor_or_same(repo: &Repository, ancestor: Oid, commit: Oid) -> Result<bool> {
    is_ancestor_within(repo, ancestor, commit, MAX_ANCESTRY_COMMITS)
}

/// [`is_ancestor_or_same`] with its own bound of `max` commits looked at.
pub(crate) fn is_ancestor_within(
    repo: &Repository,
    ancestor: Oid,
    commit: Oid,
    max: usize,
) -> Result<bool> {
    if ancestor == commit {
        return Ok(true);
    }
    if self::commit(repo, ancestor).is_err() {
        return Ok(false);
    }
    if first_parent_reaches(repo, commit, ancestor, max) {
        return Ok(true);
    }
    let mut budget = Budget {
        left: MAX_ANCESTRY_BYTES,
    };
    Ok(reaches_within(repo, commit, ancestor, max, &mut budget))
}

/// The newest commit of `b`'s first-parent chain that is also on `a`'s, each
/// chain followed at most `max` commits: the merge base of a rewrite, found
/// without walking either history further than the bound. `None` when the
/// two chains share no commit within the bound (unrelated histories, or a
/// common commit further back), or `a` is not in this repository.
pub(crate) fn merge_base_within(
    repo: &Repository,
    a: Oid,
    b: Oid,
    max: usize,
) -> Result<Option<Oid>> {
    use std::collections::HashSet;
    let chain = |from: Oid| -> Vec<Oid> {
        let mut out = Vec::new();
        let mut c = from;
        while out.len() < max {
            let Ok(k) = self::commit(repo, c) else { break };
            out.push(c);
            match k.parent_ids().next() {
                Some(p) => c = p,
                None => break,
            }
        }
        out
    };
    let on_a: HashSet<Oid> = chain(a).into_iter().collect();
    Ok(chain(b).into_iter().find(|c| on_a.contains(c)))
}

/// Whether `ancestor` is a strict ancestor of `commit` ([`is_ancestor_or_same`]).
/// An ancestor unknown to this repository is not an ancestor.
pub(crate) fn is_strict_ancestor(repo: &Repository, ancestor: &str, commit: Oid) -> Result<bool> {
    let Ok(a) = Oid::from_str(ancestor) else {
        return Ok(false);
    };
    if a == commit || self::commit(repo, a).is_err() {
        return Ok(false);
    }
    is_ancestor_or_same(repo, a, commit)
}

/// Why `EXPECTED_HEAD` `base` was not found before `commit`, in words that
/// hold: in a shallow clone the history may end before `base` (the answer is
/// then "not shown", and `git fetch --unshallow` is the fix), elsewhere it is not
/// an ancestor.
pub(crate) fn not_an_ancestor_reason(repo: &Repository, base: &str, commit: Oid) -> String {
    if repo.is_shallow() {
        format!(
            "EXPECTED_HEAD {base} is not shown to be a strict ancestor of the task commit {commit}: \
             this checkout is a shallow clone and its history ends before it can be told \
             (run `git fetch --unshallow` in the checkout, then ask the main PC to post the task again)"
        )
    } else {
        format!("EXPECTED_HEAD {base} is not a strict ancestor of the task commit {commit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh repository in a temp folder (kept while the folder lives).
    fn temp_repo() -> (tempfile::TempDir, Repository) {
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        (d, repo)
    }

    /// A commit over the limit is never loaded: `commit` refuses it by its size, the
    /// chain check finds it behind a commit of normal size, a path lookup in it and an
    /// ancestry search through it stop, and the walk reports it as where history ends.
    #[test]
    fn an_oversized_commit_is_never_read() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "f", b"a", None);
        let tree = repo.find_commit(a).unwrap().tree_id();
        let mut raw = format!(
            "tree {tree}\nparent {a}\nauthor t <t@x> 1 +0000\ncommitter t <t@x> 1 +0000\n\n"
        )
        .into_bytes();
        raw.resize(raw.len() + MAX_COMMIT_BYTES, b'A');
        let big = repo
            .odb()
            .unwrap()
            .write(git2::ObjectType::Commit, &raw)
            .unwrap();
        let c = commit_file(&repo, "f", b"c", Some(big));
        let why = oversized(&repo, big).unwrap();
        assert!(
            why.contains(&format!("commit {big} is {} bytes", raw.len())),
            "{why}"
        );
        assert!(oversized(&repo, a).is_none());
        assert!(commit(&repo, big).is_err());
        assert!(entry_at(&repo, big, "f").is_err());
        assert_eq!(
            oversized_on_chain(&repo, c, Some(a), 10, None, u64::MAX),
            Some(why.clone())
        );
        assert_eq!(
            oversized_on_chain(&repo, c, Some(big), 10, None, u64::MAX),
            None
        );
        assert!(!is_ancestor_within(&repo, a, c, 10).unwrap());
        let h = task_history(&repo, c, Some(a), "f", 10).unwrap();
        assert!(h.versions.is_empty(), "{:?}", h.versions);
        assert_eq!(h.incomplete, Some(why));
    }

    /// New commits each within the one-commit bound but over the poll's byte
    /// budget together (10 commits of 300 KiB against 1 MiB) are refused before
    /// the walk reads them, naming the budget's variable and the first commit
    /// not read; the same chain within a 4 MiB budget passes.
    #[test]
    fn a_poll_walk_stops_at_its_commit_byte_budget() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "f", b"a", None);
        let tree = repo.find_commit(a).unwrap().tree_id();
        let mut chain = vec![a];
        for t in 0..10 {
            let prev = chain[chain.len() - 1];
            let mut raw = format!(
                "tree {tree}\nparent {prev}\nauthor t <t@x> {t} +0000\ncommitter t <t@x> {t} +0000\n\n"
            )
            .into_bytes();
            raw.resize(raw.len() + (300 << 10), b'A');
            let id = repo
                .odb()
                .unwrap()
                .write(git2::ObjectType::Commit, &raw)
                .unwrap();
            chain.push(id);
        }
        let tip = chain[10];
        let why = oversized_on_chain(&repo, tip, Some(a), 100, None, 1 << 20).unwrap();
        // 4 commits of ~300 KiB pass 1 MiB: the 4th newest (chain[7]) is not read.
        assert!(why.contains(WALK_BYTES_ENV), "{why}");
        assert!(
            why.contains(&format!("the 4 newest commits down to {}", chain[7])),
            "{why}"
        );
        assert_eq!(
            oversized_on_chain(&repo, tip, Some(a), 100, None, 4 << 20),
            None
        );
        // The bound counts only the new part: from the 3rd commit on it is within 1 MiB.
        assert_eq!(
            oversized_on_chain(&repo, tip, Some(chain[7]), 100, None, 1 << 20),
            None
        );
    }

    /// A commit written as raw bytes with these parents, in this order (repeats
    /// kept: the octopus of a hostile branch), committed at time `t`.
    fn raw_commit(repo: &Repository, tree: Oid, parents: &[Oid], t: i64) -> Oid {
        let mut raw = format!("tree {tree}\n");
        for p in parents {
            raw.push_str(&format!("parent {p}\n"));
        }
        raw.push_str(&format!(
            "author t <t@x> {t} +0000\ncommitter t <t@x> {t} +0000\n\nm {t}\n"
        ));
        repo.odb()
            .unwrap()
            .write(git2::ObjectType::Commit, raw.as_bytes())
            .unwrap()
    }

    /// An ancestor found only past 20 octopus merges of 40 000 parents each
    /// (1.9 MB per commit, 38 MB in all, within the 2 000-commit bound) is not
    /// found: the search stops once it has read MAX_ANCESTRY_BYTES of commits,
    /// where it read every one of them (4 GB for a merge of 2 000 such
    /// commits: 30 s for one task version). The same ancestor
    /// behind 5 of them is found.
    #[test]
    fn an_ancestry_search_stops_after_reading_its_byte_budget() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "f", b"a", None);
        let tree = repo.find_commit(a).unwrap().tree_id();
        let u = raw_commit(&repo, tree, &[], 5);
        let behind = |n: i64| {
            let mut parents = vec![a; 40_000];
            parents.push(u);
            let sides: Vec<Oid> = (0..n)
                .map(|i| raw_commit(&repo, tree, &parents, 1000 + i))
                .collect();
            let mut top = vec![a];
            top.extend(sides);
            let merge = raw_commit(&repo, tree, &top, 10);
            raw_commit(&repo, tree, &[merge], 20)
        };
        let (far, near) = (behind(20), behind(5));
        let size = repo.odb().unwrap().read_header(far).unwrap().0;
        assert!(size < 1000, "{size}");
        assert!(!is_ancestor_within(&repo, u, far, MAX_ANCESTRY_COMMITS).unwrap());
        assert!(is_ancestor_within(&repo, u, near, MAX_ANCESTRY_COMMITS).unwrap());
        assert!(is_ancestor_within(&repo, a, far, MAX_ANCESTRY_COMMITS).unwrap());
    }

    fn commit_file(repo: &Repository, path: &str, bytes: &[u8], parent: Option<Oid>) -> Oid {
        let blob = repo.blob(bytes).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        // Only flat paths in these unit tests.
        tb.insert(path, blob, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let parents: Vec<git2::Commit> = parent
            .map(|p| vec![repo.find_commit(p).unwrap()])
            .unwrap_or_default();
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        repo.commit(None, &sig, &sig, "m", &tree, &refs).unwrap()
    }

    #[test]
    fn blob_reading_and_size_limit() {
        let (_d, repo) = temp_repo();
        let c = commit_file(&repo, "t.md", b"hello", None);
        assert_eq!(
            read_blob_at(&repo, c, "t.md", 10).unwrap(),
            Blob::Content {
                bytes: b"hello".to_vec(),
                blob: repo.blob(b"hello").unwrap().to_string()
            }
        );
        assert!(matches!(
            read_blob_at(&repo, c, "t.md", 4).unwrap(),
            Blob::TooLarge { size: 5, .. }
        ));
        assert_eq!(
            read_blob_at(&repo, c, "nope.md", 10).unwrap(),
            Blob::Missing
        );
    }

    #[test]
    fn strict_ancestry() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "f", b"1", None);
        let b = commit_file(&repo, "f", b"2", Some(a));
        let other = commit_file(&repo, "f", b"3", None);
        assert!(is_strict_ancestor(&repo, &a.to_string(), b).unwrap());
        assert!(!is_strict_ancestor(&repo, &b.to_string(), b).unwrap());
        assert!(!is_strict_ancestor(&repo, &b.to_string(), a).unwrap());
        assert!(!is_strict_ancestor(&repo, &other.to_string(), b).unwrap());
        assert!(!is_strict_ancestor(&repo, &"0".repeat(40), b).unwrap());
    }

    #[test]
    fn task_history_lists_first_parent_changes_oldest_first() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "t.md", b"1", None);
        let b = commit_file(&repo, "t.md", b"2", Some(a));
        let c = commit_file(&repo, "t.md", b"2", Some(b)); // no change
        let e = commit_file(&repo, "other", b"x", Some(c)); // t.md deleted
        let f = commit_file(&repo, "t.md", b"3", Some(e));
        let h = task_history(&repo, f, Some(a), "t.md", 1000).unwrap();
        assert_eq!(h.commits, 4);
        assert!(!h.truncated);
        let got: Vec<Oid> = h.versions.iter().map(|v| v.commit).collect();
        assert_eq!(got, vec![b, e, f]);
        assert!(h.versions[1].entry.is_none() && h.versions[1].before.is_some());
        assert_eq!(
            h.versions[0].before.map(|x| x.0),
            Some(repo.blob(b"1").unwrap())
        );
        // From the root: the first commit is a version too.
        let all = task_history(&repo, f, None, "t.md", 1000).unwrap();
        assert_eq!(all.versions.len(), 4);
        assert_eq!(all.versions[0].commit, a);
        assert!(all.versions[0].before.is_none());
        // Bounded walk.
        let short = task_history(&repo, f, None, "t.md", 2).unwrap();
        assert!(short.truncated);
        assert_eq!(short.commits, 2);
        assert_eq!(
            short.versions.iter().map(|v| v.commit).collect::<Vec<_>>(),
            vec![e, f]
        );
        // Nothing since the tip itself.
        assert!(task_history(&repo, f, Some(f), "t.md", 10)
            .unwrap()
            .versions
            .is_empty());
    }

    #[test]
    fn a_marker_reachable_only_through_a_second_parent_is_walked_by_revwalk() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "t.md", b"1", None);
        let b = commit_file(&repo, "t.md", b"2", Some(a));
        let side = commit_file(&repo, "t.md", b"s", Some(a));
        let tree = repo.find_commit(b).unwrap().tree().unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let (cb, cs) = (
            repo.find_commit(b).unwrap(),
            repo.find_commit(side).unwrap(),
        );
        let m = repo
            .commit(None, &sig, &sig, "merge", &tree, &[&cb, &cs])
            .unwrap();
        assert!(is_ancestor_or_same(&repo, side, m).unwrap());
        let h = task_history(&repo, m, Some(side), "t.md", 100).unwrap();
        assert_eq!(h.commits, 2, "{h:?}");
        assert_eq!(
            h.versions.iter().map(|v| v.commit).collect::<Vec<_>>(),
            vec![b]
        );
        assert!(h.incomplete.is_none() && !h.truncated);
    }

    #[test]
    fn ancestry_and_merge_base() {
        let (_d, repo) = temp_repo();
        let a = commit_file(&repo, "f", b"1", None);
        let b = commit_file(&repo, "f", b"2", Some(a));
        let b2 = commit_file(&repo, "f", b"3", Some(a));
        let other = commit_file(&repo, "g", b"4", None);
        assert!(is_ancestor_or_same(&repo, a, b).unwrap());
        assert!(is_ancestor_or_same(&repo, b, b).unwrap());
        assert!(!is_ancestor_or_same(&repo, b, b2).unwrap());
        let missing = Oid::from_str(&"1".repeat(40)).unwrap();
        assert!(!is_ancestor_or_same(&repo, missing, b).unwrap());
        assert_eq!(merge_base_within(&repo, b, b2, 10).unwrap(), Some(a));
        assert_eq!(merge_base_within(&repo, b, other, 10).unwrap(), None);
        assert_eq!(merge_base_within(&repo, missing, b, 10).unwrap(), None);
        // Bounded: a base one step beyond either chain's bound is not found.
        assert_eq!(merge_base_within(&repo, b, b2, 1).unwrap(), None);
        assert!(!is_ancestor_within(&repo, a, b, 1).unwrap());
        assert!(is_ancestor_within(&repo, a, b, 2).unwrap());
    }
}
