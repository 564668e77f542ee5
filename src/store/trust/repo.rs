//! The Git-level checks of the trust root on an open checkout, the watcher's
//! check of each fetched tip, and `capture --record`'s target check.
use super::gitignore::GitIgnores;
use super::{under_local, Finding};
use crate::store::paths::Paths;
use anyhow::Result;
use git2::Repository;
use std::path::{Path, PathBuf};

const FIX_TRACKED: &str = "the branch is hostile: `git rm -r --cached .local` and commit, tell the main PC to stop committing .local/, \
     restore your own policy, then `rxnode state rebuild` (the state, ledger and outboxes Git wrote are not yours)";

/// The actual files under `.local/` that Git sees (not ignored: untracked,
/// tracked or staged), asked with every ignore rule Git applies.
pub(crate) fn visible_files(repo: &Repository) -> Result<Vec<String>, git2::Error> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_unmodified(true)
        .exclude_submodules(true)
        .pathspec(".local");
    let st = repo.statuses(Some(&mut opts))?;
    let mut seen: Vec<String> = st
        .iter()
        .filter_map(|s| s.path().map(str::to_owned))
        .filter(|p| under_local(p.as_bytes()))
        .collect();
    // libgit2's ignore rules differ from Git's (a committed `!/.local/` beside
    // the exclude: libgit2 calls every file ignored, `git add -A` stages them):
    // walk the actual files with Git's own rules (gitignore.rs), asking libgit2
    // too, never descending into a folder Git ignores (Git does not either).
    if let Some(root) = repo.workdir() {
        let mut rules = GitIgnores::of(repo).map_err(|e| git2::Error::from_str(&e))?;
        for s in walk_visible(root, |rel, is_dir| rules.hidden(repo, rel, is_dir))
            .map_err(|e| git2::Error::from_str(&e))?
        {
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
    }
    seen.sort();
    Ok(seen)
}

/// The files under `.local/` (in `root`) that `hidden` does not hide, never
/// looking inside a folder it hides (at most 50 000 entries looked at).
fn walk_visible(
    root: &Path,
    mut hidden: impl FnMut(&str, bool) -> Result<bool, String>,
) -> Result<Vec<String>, String> {
    let mut seen = Vec::new();
    let mut stack = Vec::new();
    if !hidden(".local", true)? {
        stack.push(PathBuf::from(".local"));
    }
    let mut budget = 50_000usize;
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in rd.flatten() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let r = rel.join(e.file_name());
            let s = r.to_string_lossy().replace('\\', "/");
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if hidden(&s, is_dir)? {
                continue;
            }
            if is_dir {
                stack.push(r);
            } else {
                seen.push(s);
            }
        }
    }
    Ok(seen)
}

/// The node's own files, which a checkout's ignore rules must hide even before
/// they exist.
const NODE_FILES: [&str; 6] = [
    ".local/rxnode-policy.json",
    ".local/rx_agent_state.json",
    ".local/rx_agent_ledger.jsonl",
    ".local/allowed_signers",
    ".local/rx_iq/T/capture.sigmf-data",
    ".local/rx_agent_outbox/T/RX_RESULT.json",
];

/// Whether checking out commit `oid` would let Git see node-local files: its
/// top-level `.gitignore` (a `!/.local/` rule outranks `.git/info/exclude`)
/// un-ignores one of the node's files or one that exists under `.local/`.
/// `Some(the file and why)`; a `.gitignore` that cannot be read (over 8 MiB,
/// not UTF-8, an unreadable `!` rule) counts as un-ignoring.
fn commit_unignores_local(repo: &Repository, oid: git2::Oid) -> Option<String> {
    use crate::git::ops::Blob;
    let root = repo.workdir()?;
    let top = match crate::git::ops::read_blob_at(repo, oid, ".gitignore", 8 << 20) {
        Ok(Blob::Content { bytes, .. }) => Some(bytes),
        // Git does not follow a `.gitignore` that is a link, nor read a folder.
        Ok(Blob::Missing | Blob::NotAFile { .. }) => None,
        Ok(Blob::TooLarge { size, .. }) => {
            return Some(format!(
                "its .gitignore ({size} bytes) is too large to check"
            ))
        }
        Err(e) => return Some(format!("its .gitignore cannot be read: {e:#}")),
    };
    let mut rules = match GitIgnores::with_root_gitignore(repo, top.as_deref()) {
        Ok(r) => r,
        Err(e) => return Some(e),
    };
    for f in NODE_FILES {
        match rules.ignored(f, false) {
            Ok(true) => {}
            Ok(false) => return Some(format!("its .gitignore lets Git see {f}")),
            Err(e) => return Some(e),
        }
    }
    match walk_visible(root, |rel, is_dir| rules.ignored(rel, is_dir)) {
        Ok(v) => v
            .first()
            .map(|f| format!("its .gitignore lets Git see {f}")),
        Err(e) => Some(e),
    }
}

/// Before rxnode creates files under `.local/`: every one of `paths_to_create`
/// (absolute, under the checkout) must be ignored by Git, asked about the exact
/// path, so a committed un-ignore rule for a folder that does not exist yet
/// (`!/.local/`, `/.local/*`, `!/.local/rx_iq/`) is caught before the first
/// file appears. Refused (exit 3) naming the path; nothing is written. Outside
/// a checkout (or for `watch --dry-run`'s area outside one) there is no Git to
/// see the files: nothing to check.
pub(crate) fn check_created(paths: &Paths, paths_to_create: &[PathBuf]) -> Result<()> {
    let repo = Repository::open(&paths.repo).ok();
    check_created_in(paths, repo.as_ref(), paths_to_create)
}

/// [`check_created`] on the checkout already open (`None`: not a checkout).
pub(super) fn check_created_in(
    paths: &Paths,
    repo: Option<&Repository>,
    paths_to_create: &[PathBuf],
) -> Result<()> {
    let Some(repo) = repo else {
        return Ok(());
    };
    if repo.is_bare() {
        return Ok(());
    }
    let mut rules = GitIgnores::of(repo).map_err(|e| {
        crate::exit::refused(format!(
            "untrusted node-local files: cannot tell what Git ignores: {e}; nothing was written"
        ))
    })?;
    for p in paths_to_create {
        let Ok(rel) = p.strip_prefix(&paths.repo) else {
            continue;
        };
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        let is_dir = p.is_dir();
        if !rules.hidden(repo, &rel_s, is_dir).unwrap_or(false) {
            return Err(crate::exit::refused(format!(
                "untrusted node-local files: rxnode would create {rel_s}, which Git does not ignore \
                 (a committed .gitignore un-ignores it), so `git add -A` would stage it; nothing was written \
                 — fix: remove every `!` rule about .local from .gitignore files and keep `/.local/` in .git/info/exclude"
            )));
        }
    }
    Ok(())
}

/// The Git-level checks on an open checkout; nothing changed.
pub(super) fn git_findings(paths: &Paths, repo: &Repository) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(worktree_finding(paths, repo));
    out.extend(index_finding(repo));
    head_findings(repo, &mut out);
    out.extend(visible_finding(repo));
    out.extend(filter_finding(repo));
    out
}

/// `" (and N more …)"`-style text for a list of `total` of which one is named.
fn more(total: usize, say: impl FnOnce(usize) -> String) -> String {
    if total > 1 {
        say(total - 1)
    } else {
        String::new()
    }
}

/// `.local` must belong to this work tree.
fn worktree_finding(paths: &Paths, repo: &Repository) -> Option<Finding> {
    match (
        repo.workdir().and_then(|w| w.canonicalize().ok()),
        paths.repo.canonicalize().ok(),
    ) {
        (Some(w), Some(r)) if w != r => Some(Finding::new(
            format!(
                "Git's work tree is {} but the checkout is {}: {} belongs to another work tree (core.worktree?)",
                w.display(),
                r.display(),
                paths.local.display()
            ),
            "run rxnode with --repo pointing at the work tree itself; unset core.worktree",
        )),
        (None, _) => Some(Finding::new(
            "the repository has no work tree",
            "run rxnode inside the RX clone",
        )),
        _ => None,
    }
}

/// Nothing under `.local/` tracked in the index.
fn index_finding(repo: &Repository) -> Option<Finding> {
    let index = match repo.index() {
        Ok(index) => index,
        Err(e) => {
            return Some(Finding::new(
                format!("cannot read the Git index: {}", e.message()),
                "repair the checkout (`git status` says more)",
            ))
        }
    };
    let tracked: Vec<String> = index
        .iter()
        .filter(|e| under_local(&e.path))
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .collect();
    let first = tracked.first()?;
    Some(Finding::new(
        format!(
            "{first} is tracked in the index{}: Git (a `git pull`, `checkout`) can replace node-local files",
            more(tracked.len(), |n| format!(" (and {n} more under .local/)"))
        ),
        FIX_TRACKED,
    ))
}

/// Tracked in HEAD (a `.local` blob is a committed symlink or file).
fn head_findings(repo: &Repository, out: &mut Vec<Finding>) {
    let Some(id) = repo.head().ok().and_then(|h| h.resolve().ok()?.target()) else {
        return;
    };
    // A commit or tree that inflates to GiBs (docs/protocol.md#bound) is never read.
    let tree_id = crate::git::ops::commit(repo, id).map(|c| c.tree_id());
    if let Some(why) = crate::git::ops::oversized(repo, id)
        .or_else(|| crate::git::ops::oversized(repo, *tree_id.as_ref().ok()?))
    {
        out.push(Finding::new(
            format!("HEAD cannot be checked: {why}"),
            "check out the commit the checkout was on before the pull (`git reset --hard ORIG_HEAD`); \
             the main PC replaces the oversized commit",
        ));
        return;
    }
    let Ok(tree) = tree_id.and_then(|t| crate::git::ops::tree(repo, t)) else {
        return;
    };
    for e in tree.iter() {
        if under_local(e.name_bytes()) {
            let kind = match e.kind() {
                Some(git2::ObjectType::Tree) => "a folder",
                Some(git2::ObjectType::Commit) => "a submodule",
                _ if e.filemode() == 0o120000 => "a symlink",
                _ => "a file",
            };
            out.push(Finding::new(
                format!(
                    "HEAD tracks {} as {kind}: a `git pull` of the watched branch writes node-local files",
                    String::from_utf8_lossy(e.name_bytes())
                ),
                FIX_TRACKED,
            ));
        }
    }
}

/// Git must not see any actual file under `.local/`.
fn visible_finding(repo: &Repository) -> Option<Finding> {
    let seen = match visible_files(repo) {
        Ok(seen) => seen,
        Err(e) => {
            return Some(Finding::new(
                format!(
                    "cannot ask Git which files under .local/ it sees: {}",
                    e.message()
                ),
                "repair the checkout (`git status` says more)",
            ))
        }
    };
    let first = seen.first()?;
    Some(Finding::new(
        format!(
            "Git can see {first}{}: no ignore rule hides it (a committed .gitignore may un-ignore .local/)",
            more(seen.len(), |n| format!(" and {n} more file(s) under .local/"))
        ),
        "add `/.local/` to .git/info/exclude and remove every `!` rule about .local from .gitignore files",
    ))
}

/// No filter driver may apply to node-local files: asked of Git's own rules
/// (gitattributes.rs, which reads a quoted pattern as Git does), in both
/// orders Git reads a `.gitattributes`, and of libgit2's.
fn filter_finding(repo: &Repository) -> Option<Finding> {
    use super::gitattributes::{Attributes, Order};
    let probe = [
        ".local/rxnode-policy.json",
        ".local/rx_agent_state.json",
        ".local/rx_agent_ledger.jsonl",
        ".local/rx_agent_outbox/X/TASK.md",
    ];
    const FIX: &str = "remove the rule: no Git filter may touch node-local files";
    let cannot = |p: &str, e: String| {
        Some(Finding::new(
            format!("cannot tell whether a Git filter applies to {p}: {e}"),
            "fix or remove the attributes file named",
        ))
    };
    let mut attrs = match Attributes::of(repo) {
        Ok(a) => a,
        // No work tree: worktree_finding says so.
        Err(_) if repo.workdir().is_none() => return None,
        Err(e) => return cannot(probe[0], e),
    };
    probe.into_iter().find_map(|p| {
        for order in [Order::WorkTreeFirst, Order::IndexFirst] {
            match attrs.filter_of(p, order) {
                Ok(Some(f)) => {
                    return Some(Finding::new(
                        format!("a .gitattributes rule sets filter={f} for {p}"),
                        FIX,
                    ))
                }
                Ok(None) => {}
                Err(e) => return cannot(p, e),
            }
        }
        match repo.get_attr(
            Path::new(p),
            "filter",
            git2::AttrCheckFlags::FILE_THEN_INDEX,
        ) {
            Ok(Some(f)) => Some(Finding::new(
                format!("a .gitattributes rule sets filter={f} for {p}"),
                FIX,
            )),
            _ => None,
        }
    })
}

/// The first path under `.local/` (any letter case) that the commit `oid`
/// tracks, if any: what a `git pull` of it would write into the node's files.
fn commit_tracks_local(repo: &Repository, oid: git2::Oid) -> Option<String> {
    let tree = repo.find_commit(oid).ok()?.tree().ok()?;
    let e = tree.iter().find(|e| under_local(e.name_bytes()))?;
    let top = String::from_utf8_lossy(e.name_bytes()).into_owned();
    let mut first = None;
    if let Some(git2::ObjectType::Tree) = e.kind() {
        // Never an oversized tree (docs/protocol.md#bound): the folder is named instead.
        if let Ok(sub) = crate::git::ops::tree(repo, e.id()) {
            let _ = sub.walk(git2::TreeWalkMode::PreOrder, |dir, x| {
                if x.kind() == Some(git2::ObjectType::Blob) {
                    first = Some(format!(
                        "{top}/{dir}{}",
                        String::from_utf8_lossy(x.name_bytes())
                    ));
                    return git2::TreeWalkResult::Abort;
                }
                git2::TreeWalkResult::Ok
            });
        }
    }
    Some(first.unwrap_or(top))
}

/// The watcher's check of each fetched tip: a watched branch that
/// tracks `.local/` is hostile — a `git pull` would overwrite this node's
/// policy, state and ledger. Refused (exit 3; the looping watcher backs off and
/// says it again), with one ledger `refused` line per commit; no task of that
/// tip is examined.
pub(crate) fn check_watched_tip(
    paths: &Paths,
    repo: &Repository,
    oid: git2::Oid,
    remote: &str,
    branch: &str,
) -> Result<()> {
    let reason = if let Some(p) = commit_tracks_local(repo, oid) {
        format!(
            "{remote}/{branch} at {oid} tracks {p}: a `git pull` would overwrite this node's own files \
             (policy, state, ledger) — do not pull it; fix: the main PC removes .local/ from the branch \
             (`git rm -r --cached .local` and commit)"
        )
    } else if let Some(why) = commit_unignores_local(repo, oid) {
        format!(
            "{remote}/{branch} at {oid}: {why}: after a `git pull` this node's own files (policy, state, \
             ledger, raw IQ) could be staged and pushed — do not pull it; fix: the main PC removes every `!` \
             rule about .local from .gitignore (a `.gitignore` outranks .git/info/exclude)"
        )
    } else {
        return Ok(());
    };
    let oid_s = oid.to_string();
    let seen = crate::store::ledger::any_in(&paths.ledger(), |e| {
        e.event() == "refused"
            && e.commit.as_deref() == Some(oid_s.as_str())
            && e.detail_str("command") == Some("watch")
    })?;
    if !seen {
        crate::store::ledger::append(
            paths,
            &crate::store::ledger::Entry::new(crate::store::ledger::Refusal::of(
                "watch",
                reason.clone(),
            ))
            .commit(&oid_s),
        )?;
    }
    Err(crate::exit::refused(reason))
}

/// An explicit policy (`--policy`, `RXNODE_POLICY`) in the work tree of another
/// Git checkout — a second clone of the lab repository beside the RX clone — is a
/// file a `git pull` there can write when that repository tracks it, or may start
/// to track it when it does not ignore it: refused like a policy in this
/// checkout outside `.local/` (docs/operator.md#where-the-policy-lives). Inside
/// that repository's own `.git/` or ignored and untracked there, it is left
/// alone. This checkout itself is judged by the file-level check.
pub(super) fn explicit_policy_finding(paths: &Paths) -> Option<Finding> {
    if !paths.policy_is_explicit() {
        return None;
    }
    let policy = paths.policy();
    let parent = policy.parent()?.canonicalize().ok()?;
    let name = policy.file_name()?;
    let other = Repository::discover(&parent).ok()?;
    let work = other.workdir()?.canonicalize().ok()?;
    if paths.repo.canonicalize().ok().as_deref() == Some(work.as_path()) {
        return None;
    }
    let rel = parent.join(name).strip_prefix(&work).ok()?.to_path_buf();
    if rel
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == ".git")
    {
        return None;
    }
    let rel_s = rel.to_string_lossy().replace('\\', "/");
    let tracked = other
        .index()
        .ok()
        .is_some_and(|i| i.get_path(Path::new(&rel_s), 0).is_some());
    let how = if tracked {
        "that repository tracks it"
    } else if !GitIgnores::of(&other)
        .and_then(|mut r| r.hidden(&other, &rel_s, false))
        .unwrap_or(false)
    {
        "that repository does not ignore it"
    } else {
        return None;
    };
    Some(Finding::new(
        format!(
            "policy {} is inside the Git work tree {} and {how}: a `git pull` there can write it",
            policy.display(),
            work.display()
        ),
        if cfg!(windows) {
            "keep the policy outside every checkout (e.g. %APPDATA%\\rxnode\\policy.json) or in this checkout's .local\\"
        } else {
            "keep the policy outside every checkout (e.g. ~/.config/rxnode/policy.json) or in this checkout's .local/"
        },
    ))
}

/// `rxnode capture --record PATH`: raw IQ never lands where Git can
/// see it. When `path` (or, for SigMF, one of its two files) lies inside a Git
/// work tree — found from the nearest existing folder, links resolved — Git must
/// ignore it; otherwise the capture is refused (exit 3) before the radio opens.
pub(crate) fn check_record_target(path: &Path) -> Result<()> {
    let abs = std::path::absolute(path)
        .map_err(|e| crate::exit::bad_input(format!("--record {}: {e}", path.display())))?;
    let targets: Vec<PathBuf> = match abs.extension().and_then(|e| e.to_str()) {
        Some("sigmf-data" | "sigmf-meta") => {
            vec![
                abs.with_extension("sigmf-data"),
                abs.with_extension("sigmf-meta"),
            ]
        }
        _ => vec![abs.clone()],
    };
    // The nearest folder that exists, with every link resolved.
    let mut dir = abs.parent().map(Path::to_path_buf);
    let mut rest = Vec::new();
    while let Some(d) = dir.clone() {
        if let Ok(c) = d.canonicalize() {
            dir = Some(c);
            break;
        }
        rest.push(d.file_name().map(|n| n.to_os_string()));
        dir = d.parent().map(Path::to_path_buf);
    }
    let Some(existing) = dir else {
        return Ok(());
    };
    let Ok(repo) = Repository::discover(&existing) else {
        return Ok(()); // not inside a Git work tree
    };
    let Some(workdir) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return Ok(());
    };
    let mut real_parent = existing.clone();
    for n in rest.iter().rev().flatten() {
        real_parent.push(n);
    }
    for t in &targets {
        let Some(name) = t.file_name() else { continue };
        let real = real_parent.join(name);
        let Ok(rel) = real.strip_prefix(&workdir) else {
            continue;
        };
        if rel
            .components()
            .next()
            .is_some_and(|c| c.as_os_str() == ".git")
        {
            return Err(crate::exit::refused(format!(
                "--record {}: inside the Git directory of {} — fix: record under .local/ or outside the checkout",
                path.display(),
                workdir.display()
            )));
        }
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        let hidden = GitIgnores::of(&repo)
            .and_then(|mut r| r.hidden(&repo, &rel_s, false))
            .unwrap_or(false);
        if !hidden {
            return Err(crate::exit::refused(format!(
                "--record {}: {} is inside the Git work tree {} and Git does not ignore it (raw IQ could be committed) — \
                 fix: record under .local/ (ignored) or outside the checkout, or make Git ignore that folder",
                path.display(),
                rel_s,
                workdir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libgit2 calls the folder ignored while a `!` rule re-includes its files
    /// (and `git status` shows them): the files are asked about one by one.
    #[test]
    fn a_negated_ignore_rule_makes_files_visible() {
        let d = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(d.path()).unwrap();
        std::fs::create_dir_all(d.path().join(".local/sub")).unwrap();
        std::fs::write(d.path().join(".local/sub/a"), "x").unwrap();
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n").unwrap();
        assert!(visible_files(&repo).unwrap().is_empty());
        std::fs::write(d.path().join(".gitignore"), "!/.local/\n!/.local/**\n").unwrap();
        assert_eq!(
            visible_files(&repo).unwrap(),
            vec![".local/sub/a".to_owned()]
        );
    }
}
