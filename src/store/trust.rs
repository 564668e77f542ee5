//! The trust root (issue 13; DESIGN §3 "The branch is hostile").
//!
//! Everything the interlock trusts lives under `.local/` (or, for the policy,
//! where `--policy` / `RXNODE_POLICY` points). None of it may come from Git: a
//! plain `git pull` silently replaces an *ignored* file by a tracked one. So
//! before any command trusts a node-local file it runs [`verify`], which refuses
//! (exit 3, one line naming the path and the fix) when
//!
//! - anything under `.local/` (any letter case) is tracked in `HEAD` or the index;
//! - `.local`, the policy, the state, the ledger, an outbox (or a file in it),
//!   `rx_iq` is a symlink (dangling or not) or not a regular file / directory;
//! - on unix: one of those files has more than one hard link or another owner,
//!   or the policy is writable by group/others;
//! - Git can see a file under `.local/` (asked about the actual files, with the
//!   ignore rules of `.gitignore`, `.git/info/exclude` and `core.excludesFile`),
//!   or a `.gitattributes` rule gives one a `filter`;
//! - `.local` belongs to another work tree (Git's work tree is not the checkout,
//!   e.g. `core.worktree`, or `.local` holds a `.git` of its own);
//! - an explicit policy path lies inside the work tree but outside `.local/`.
//!
//! [`findings`] returns every problem without changing anything (for `doctor`).
use crate::store::paths::Paths;
use anyhow::Result;
use git2::Repository;
use std::path::{Path, PathBuf};

/// One reason not to trust the node-local files.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    /// What is wrong, naming the path.
    pub(crate) detail: String,
    /// One line on how to fix it.
    pub(crate) fix: String,
}

impl Finding {
    fn new(detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            detail: detail.into(),
            fix: fix.into(),
        }
    }
}

const FIX_LINK: &str =
    "replace it by a regular file of your own (restore your copy; never a link into the checkout or elsewhere)";
const FIX_TRACKED: &str = "the branch is hostile: `git rm -r --cached .local` and commit, tell the main PC to stop committing .local/, \
     restore your own policy, then `rxnode state rebuild` (the state, ledger and outboxes Git wrote are not yours)";

/// What kind of node-local path is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    /// The policy: a file, and on unix not writable by group/others.
    Policy,
}

/// `path` (if it exists) is a real directory / regular file of ours.
fn check_path(path: &Path, kind: Kind, what: &str, out: &mut Vec<Finding>) {
    let md = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            out.push(Finding::new(
                format!("cannot inspect {what} {}: {e}", path.display()),
                "check the owner and permissions of the folder",
            ));
            return;
        }
    };
    let ft = md.file_type();
    if ft.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".to_owned());
        let dangling = if path.exists() { "" } else { " (dangling)" };
        out.push(Finding::new(
            format!(
                "{what} {} is a symlink to {target}{dangling}",
                path.display()
            ),
            FIX_LINK,
        ));
        return;
    }
    match kind {
        Kind::Dir if !ft.is_dir() => {
            out.push(Finding::new(
                format!("{what} {} is not a directory", path.display()),
                "move it aside; rxnode creates the folder itself",
            ));
            return;
        }
        Kind::File | Kind::Policy if !ft.is_file() => {
            out.push(Finding::new(
                format!("{what} {} is not a regular file", path.display()),
                "move it aside and restore the regular file",
            ));
            return;
        }
        _ => {}
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if md.uid() != me {
            out.push(Finding::new(
                format!(
                    "{what} {} is owned by uid {}, not by this user (uid {me})",
                    path.display(),
                    md.uid()
                ),
                "only the operator's own files are trusted: `chown` it or restore your copy",
            ));
        }
        if kind != Kind::Dir && md.nlink() > 1 {
            out.push(Finding::new(
                format!(
                    "{what} {} has {} hard links: another name can change it",
                    path.display(),
                    md.nlink()
                ),
                "replace it by a copy of its own (`cp F F.new && mv F.new F`) after checking its content",
            ));
        }
        if kind == Kind::Policy && md.mode() & 0o022 != 0 {
            out.push(Finding::new(
                format!(
                    "policy {} is writable by group or others (mode {:o})",
                    path.display(),
                    md.mode() & 0o777
                ),
                "`chmod go-w` it",
            ));
        }
    }
}

/// The file-level checks: no Git needed, nothing changed.
pub(crate) fn file_findings(paths: &Paths) -> Vec<Finding> {
    let mut out = Vec::new();
    check_path(&paths.local, Kind::Dir, ".local", &mut out);
    if !out.is_empty() {
        return out; // nothing below a foreign .local is ours
    }
    if std::fs::symlink_metadata(paths.local.join(".git")).is_ok() {
        out.push(Finding::new(
            format!(
                "{} holds a .git of its own: it belongs to another work tree",
                paths.local.display()
            ),
            "move .local/.git away; .local must be a plain folder of this checkout",
        ));
    }
    let policy = paths.policy();
    check_path(&policy, Kind::Policy, "policy", &mut out);
    if let Some(f) = policy_outside_local(paths, &policy) {
        out.push(f);
    }
    let before = out.len();
    check_path(&paths.state(), Kind::File, "state", &mut out);
    for f in &mut out[before..] {
        f.fix = "move the link (or odd file) aside — it is not your state — then `rxnode state rebuild` recovers the state from the ledger and the outboxes".to_owned();
    }
    check_path(&paths.ledger(), Kind::File, "ledger", &mut out);
    check_path(&paths.stop(), Kind::File, "hold file", &mut out);
    check_path(&paths.dry_run(), Kind::Dir, "dry-run folder", &mut out);
    let iq = paths.local.join("rx_iq");
    check_path(&iq, Kind::Dir, "IQ folder", &mut out);
    for e in list(&iq) {
        // A task's folder, or an operator's own recording (`capture --record
        // .local/rx_iq/x.cf32`, as the operator guide advises): a regular file
        // of ours with one link is as trusted as the folders.
        if std::fs::symlink_metadata(&e).is_ok_and(|m| m.is_file()) {
            check_path(&e, Kind::File, "IQ recording", &mut out);
        } else {
            check_path(&e, Kind::Dir, "IQ folder", &mut out);
        }
    }
    // No link anywhere under .local/: rxnode writes temp files, locks and
    // recordings there, and a planted link would redirect those writes.
    if out.is_empty() {
        let mut stack = vec![paths.local.clone()];
        let mut budget = 50_000usize;
        'walk: while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if budget == 0 {
                    break 'walk;
                }
                budget -= 1;
                match e.file_type() {
                    Ok(t) if t.is_symlink() => {
                        let p = e.path();
                        let target = std::fs::read_link(&p)
                            .map(|t| t.display().to_string())
                            .unwrap_or_else(|_| "?".to_owned());
                        out.push(Finding::new(
                            format!("{} is a symlink to {target}", p.display()),
                            "remove the link: nothing under .local/ may point elsewhere",
                        ));
                        break 'walk;
                    }
                    Ok(t) if t.is_dir() => stack.push(e.path()),
                    _ => {}
                }
            }
        }
    }
    let root = paths.outbox_root();
    check_path(&root, Kind::Dir, "outbox folder", &mut out);
    for dir in list(&root) {
        if dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"))
        {
            continue;
        }
        let before = out.len();
        check_path(&dir, Kind::Dir, "outbox", &mut out);
        if out.len() > before {
            continue;
        }
        for f in list(&dir) {
            check_path(&f, Kind::File, "outbox file", &mut out);
        }
    }
    out
}

/// An explicit policy path inside the work tree but outside `.local/` is a
/// file Git can write.
fn policy_outside_local(paths: &Paths, policy: &Path) -> Option<Finding> {
    if !crate::store::paths::policy_is_explicit() {
        return None;
    }
    let parent = policy.parent()?.canonicalize().ok()?;
    let repo = paths.repo.canonicalize().ok()?;
    let local = paths
        .local
        .canonicalize()
        .unwrap_or_else(|_| repo.join(".local"));
    (parent.starts_with(&repo) && !parent.starts_with(&local)).then(|| {
        Finding::new(
            format!(
                "policy {} is inside the checkout {} but not under .local/: Git can write it",
                policy.display(),
                repo.display()
            ),
            "keep the policy outside the checkout (e.g. ~/.config/rxnode/policy.json) or in .local/",
        )
    })
}

fn list(dir: &Path) -> Vec<PathBuf> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => return vec![],
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Whether a path's first component is `.local` in any letter case (a `.LOCAL`
/// in Git is the same folder on a case-insensitive file system).
fn under_local(path: &[u8]) -> bool {
    let first = path.split(|&b| b == b'/').next().unwrap_or_default();
    first.eq_ignore_ascii_case(b".local")
}

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
    // libgit2's status walk skips a folder its ignore rules match even when a
    // later `!` rule (a committed .gitignore) re-includes the files, which
    // `git status` and `git add` then see: ask about every actual file too.
    if let Some(root) = repo.workdir() {
        let mut stack = vec![PathBuf::from(".local")];
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
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(r),
                    Ok(_) => {
                        let s = r.to_string_lossy().replace('\\', "/");
                        if !repo.is_path_ignored(&s).unwrap_or(false) && !seen.contains(&s) {
                            seen.push(s);
                        }
                    }
                    Err(_) => {}
                }
            }
        }
    }
    seen.sort();
    Ok(seen)
}

/// The Git-level checks on an open checkout; nothing changed.
pub(crate) fn git_findings(paths: &Paths, repo: &Repository) -> Vec<Finding> {
    let mut out = Vec::new();
    // .local must belong to this work tree.
    match (
        repo.workdir().and_then(|w| w.canonicalize().ok()),
        paths.repo.canonicalize().ok(),
    ) {
        (Some(w), Some(r)) if w != r => out.push(Finding::new(
            format!(
                "Git's work tree is {} but the checkout is {}: {} belongs to another work tree (core.worktree?)",
                w.display(),
                r.display(),
                paths.local.display()
            ),
            "run rxnode with --repo pointing at the work tree itself; unset core.worktree",
        )),
        (None, _) => out.push(Finding::new(
            "the repository has no work tree",
            "run rxnode inside the RX clone",
        )),
        _ => {}
    }
    // Tracked in the index.
    match repo.index() {
        Ok(index) => {
            let tracked: Vec<String> = index
                .iter()
                .filter(|e| under_local(&e.path))
                .map(|e| String::from_utf8_lossy(&e.path).into_owned())
                .collect();
            if let Some(first) = tracked.first() {
                out.push(Finding::new(
                    format!(
                        "{first} is tracked in the index{}: Git (a `git pull`, `checkout`) can replace node-local files",
                        if tracked.len() > 1 {
                            format!(" (and {} more under .local/)", tracked.len() - 1)
                        } else {
                            String::new()
                        }
                    ),
                    FIX_TRACKED,
                ));
            }
        }
        Err(e) => out.push(Finding::new(
            format!("cannot read the Git index: {}", e.message()),
            "repair the checkout (`git status` says more)",
        )),
    }
    // Tracked in HEAD (a `.local` blob is a committed symlink or file).
    if let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) {
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
    // Git must not see any actual file under .local/.
    match visible_files(repo) {
        Ok(seen) => {
            if let Some(first) = seen.first() {
                out.push(Finding::new(
                    format!(
                        "Git can see {first}{}: no ignore rule hides it (a committed .gitignore may un-ignore .local/)",
                        if seen.len() > 1 {
                            format!(" and {} more file(s) under .local/", seen.len() - 1)
                        } else {
                            String::new()
                        }
                    ),
                    "add `/.local/` to .git/info/exclude and remove every `!` rule about .local from .gitignore files",
                ));
            }
        }
        Err(e) => out.push(Finding::new(
            format!(
                "cannot ask Git which files under .local/ it sees: {}",
                e.message()
            ),
            "repair the checkout (`git status` says more)",
        )),
    }
    // No filter driver may apply to node-local files.
    let probe = [
        ".local/rxnode-policy.json",
        ".local/rx_agent_state.json",
        ".local/rx_agent_ledger.jsonl",
        ".local/rx_agent_outbox/X/TASK.md",
    ];
    for p in probe {
        if let Ok(Some(f)) = repo.get_attr(
            Path::new(p),
            "filter",
            git2::AttrCheckFlags::FILE_THEN_INDEX,
        ) {
            out.push(Finding::new(
                format!("a .gitattributes rule sets filter={f} for {p}"),
                "remove the rule: no Git filter may touch node-local files",
            ));
            break;
        }
    }
    out
}

/// The first path under `.local/` (any letter case) that the commit `oid`
/// tracks, if any: what a `git pull` of it would write into the node's files.
pub(crate) fn commit_tracks_local(repo: &Repository, oid: git2::Oid) -> Option<String> {
    let tree = repo.find_commit(oid).ok()?.tree().ok()?;
    let e = tree.iter().find(|e| under_local(e.name_bytes()))?;
    let top = String::from_utf8_lossy(e.name_bytes()).into_owned();
    let mut first = None;
    if let Some(git2::ObjectType::Tree) = e.kind() {
        if let Ok(sub) = repo.find_tree(e.id()) {
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

/// The watcher's check of each fetched tip (issue 13): a watched branch that
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
    let Some(p) = commit_tracks_local(repo, oid) else {
        return Ok(());
    };
    let reason = format!(
        "{remote}/{branch} at {oid} tracks {p}: a `git pull` would overwrite this node's own files \
         (policy, state, ledger) — do not pull it; fix: the main PC removes .local/ from the branch \
         (`git rm -r --cached .local` and commit)"
    );
    let oid_s = oid.to_string();
    let seen = crate::store::ledger::read_all(paths)?.iter().any(|e| {
        e["event"] == "refused"
            && e["commit"] == oid_s.as_str()
            && e["detail"]["command"] == "watch"
    });
    if !seen {
        crate::store::ledger::append(
            paths,
            &crate::store::ledger::Entry::new("refused")
                .commit(&oid_s)
                .detail(serde_json::json!({"command": "watch", "reason": reason})),
        )?;
    }
    Err(crate::exit::refused(reason))
}

/// Every problem, without changing anything (doctor).
pub(crate) fn findings(paths: &Paths) -> Vec<Finding> {
    let mut out = file_findings(paths);
    if let Ok(repo) = Repository::open(&paths.repo) {
        if !repo.is_bare() {
            out.extend(git_findings(paths, &repo));
        }
    }
    out
}

fn refusal(f: &Finding) -> anyhow::Error {
    crate::exit::refused(format!(
        "untrusted node-local files: {} — fix: {}",
        f.detail, f.fix
    ))
}

/// Every check as a refusal (exit 3), changing nothing.
pub(crate) fn verify(paths: &Paths) -> Result<()> {
    match findings(paths).first() {
        Some(f) => Err(refusal(f)),
        None => Ok(()),
    }
}

/// What a command runs before it trusts anything: keep `.local/` excluded
/// (`.git/info/exclude`, as `watch` always did), then [`verify`].
pub(crate) fn prepare(paths: &Paths) -> Result<()> {
    if let Ok(repo) = Repository::open(&paths.repo) {
        if !repo.is_bare() && file_findings(paths).is_empty() {
            // Only when .local is a folder of ours: never write through a link.
            if let Err(e) = crate::git::ops::ensure_local_excluded(&repo) {
                tracing::warn!("cannot keep .local/ out of Git: {e:#}");
            }
        }
    }
    verify(paths)
}

/// `rxnode capture --record PATH` (issue 13): raw IQ never lands where Git can
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
        if !repo.is_path_ignored(&rel_s).unwrap_or(false) {
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

    #[test]
    fn local_in_any_case_is_local() {
        assert!(under_local(b".local/x"));
        assert!(under_local(b".LOCAL/rx_agent_state.json"));
        assert!(under_local(b".Local"));
        assert!(!under_local(b"docs/.local/x"));
        assert!(!under_local(b".localx/y"));
    }

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

    #[cfg(unix)]
    #[test]
    fn links_and_odd_files_are_findings() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(&paths.local).unwrap();
        assert!(file_findings(&paths).is_empty());
        std::os::unix::fs::symlink("/nonexistent", paths.state()).unwrap();
        let f = file_findings(&paths);
        assert!(
            f[0].detail.contains("is a symlink") && f[0].detail.contains("dangling"),
            "{f:?}"
        );
        std::fs::remove_file(paths.state()).unwrap();
        std::fs::write(d.path().join("x"), b"{}").unwrap();
        std::fs::hard_link(d.path().join("x"), paths.policy()).unwrap();
        let f = file_findings(&paths);
        assert!(f[0].detail.contains("2 hard links"), "{f:?}");
        std::fs::remove_file(paths.policy()).unwrap();
        std::fs::create_dir(paths.ledger()).unwrap();
        let f = file_findings(&paths);
        assert!(f[0].detail.contains("not a regular file"), "{f:?}");
    }
}
