//! Git access through git2 (never the `git` program).
//!
//! Everything here reads from or adds to the object database and remote-tracking
//! refs only: no checkout, no change to HEAD, the index or the work tree.
//! The publisher and the executor reuse [`open`], [`fetch`], [`tracking_commit`]
//! and [`read_blob_at`].
use anyhow::{anyhow, Context, Result};
use git2::{Cred, CredentialType, FetchOptions, Oid, RemoteCallbacks, Repository};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// Connect timeout for remote transports.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Per-read/write timeout on remote transports.
pub const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// A whole fetch is abandoned after this long.
pub const FETCH_DEADLINE: Duration = Duration::from_secs(120);

/// Open the checkout (`--repo`); a bare repository is refused because the
/// node needs a work tree for `.local/`.
pub fn open(repo: &Path) -> Result<Repository> {
    let r = Repository::open(repo)
        .with_context(|| format!("{} is not a Git checkout", repo.display()))?;
    if r.is_bare() {
        return Err(crate::exit::bad_input(format!(
            "{} is a bare repository; rxnode needs a checkout",
            repo.display()
        )));
    }
    Ok(r)
}

/// Environment variable that overrides both transport timeouts (seconds,
/// 0.1 ..= 600): for slow links, and for tests of a hanging remote.
pub const TIMEOUT_ENV: &str = "RXNODE_GIT_TIMEOUT_S";

/// The (connect, read/write) timeouts: [`CONNECT_TIMEOUT`] / [`IO_TIMEOUT`]
/// unless `RXNODE_GIT_TIMEOUT_S` holds a number of seconds in 0.1 ..= 600
/// (anything else is ignored with a warning).
fn timeouts() -> (Duration, Duration) {
    let Ok(v) = std::env::var(TIMEOUT_ENV) else {
        return (CONNECT_TIMEOUT, IO_TIMEOUT);
    };
    match v.trim().parse::<f64>() {
        Ok(s) if (0.1..=600.0).contains(&s) => {
            let d = Duration::from_secs_f64(s);
            (d, d)
        }
        _ => {
            tracing::warn!("{TIMEOUT_ENV}={v:?} ignored: must be seconds in 0.1 ..= 600");
            (CONNECT_TIMEOUT, IO_TIMEOUT)
        }
    }
}

/// Set libgit2's transport timeouts once per process. They bound every socket
/// connect and read/write of the git:// and http(s):// transports, so a remote
/// that accepts and never answers ends the fetch with a timeout error.
pub(crate) fn set_timeouts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let (connect, io) = timeouts();
        // SAFETY: called once, before any transport is used by this process
        // (guarded by `Once`); these only store integers in libgit2's globals.
        unsafe {
            let _ =
                git2::opts::set_server_connect_timeout_in_milliseconds(connect.as_millis() as i32);
            let _ = git2::opts::set_server_timeout_in_milliseconds(io.as_millis() as i32);
        }
    });
}

/// Which credential kinds were already offered during one fetch.
#[derive(Default)]
struct Tried {
    agent: bool,
    helper: bool,
    username: bool,
    default: bool,
}

/// A credential kind to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CredKind {
    Agent,
    Helper,
    Username,
    Default,
}

/// The next credential kind to offer, each at most once per fetch; `None`
/// when everything allowed was tried (ends libgit2's retry loop).
fn next_credential(tried: &mut Tried, allowed: CredentialType) -> Option<CredKind> {
    if allowed.contains(CredentialType::SSH_KEY) && !tried.agent {
        tried.agent = true;
        return Some(CredKind::Agent);
    }
    if allowed.contains(CredentialType::USER_PASS_PLAINTEXT) && !tried.helper {
        tried.helper = true;
        return Some(CredKind::Helper);
    }
    if allowed.contains(CredentialType::USERNAME) && !tried.username {
        tried.username = true;
        return Some(CredKind::Username);
    }
    if allowed.contains(CredentialType::DEFAULT) && !tried.default {
        tried.default = true;
        return Some(CredKind::Default);
    }
    None
}

/// The credential callback used for every fetch and push: ssh-agent, the Git
/// credential helper, a plain username, the platform default — each offered at
/// most once ([`next_credential`]), then a clear error naming the (redacted)
/// URL. libgit2 calls the callback again after every failure, so without this
/// bound it would loop for ever. Never logs or returns a credential.
pub fn credentials_callback(
    config: Option<git2::Config>,
) -> impl FnMut(&str, Option<&str>, CredentialType) -> Result<Cred, git2::Error> {
    let mut tried = Tried::default();
    move |url, username, allowed| {
        let user = username.unwrap_or("git");
        match next_credential(&mut tried, allowed) {
            Some(CredKind::Agent) => {
                tracing::debug!("credentials: trying ssh-agent for {}", redact(url));
                Cred::ssh_key_from_agent(user)
            }
            Some(CredKind::Helper) => match &config {
                Some(cfg) => Cred::credential_helper(cfg, url, username).map_err(|e| {
                    git2::Error::from_str(&format!(
                        "authentication required and the Git credential helper gave none ({})",
                        redact(e.message())
                    ))
                }),
                None => Err(git2::Error::from_str(
                    "authentication required and no Git config to find a credential helper",
                )),
            },
            Some(CredKind::Username) => Cred::username(user),
            Some(CredKind::Default) => Cred::default(),
            None => Err(git2::Error::from_str(&format!(
                "authentication failed for {}: tried ssh-agent and the Git credential helper once each; \
                 set up an ssh key in the agent or a credential helper",
                redact(url)
            ))),
        }
    }
}

/// Remote callbacks with [`credentials_callback`] installed.
pub fn remote_callbacks<'a>(config: Option<git2::Config>) -> RemoteCallbacks<'a> {
    let mut cb = RemoteCallbacks::new();
    cb.credentials(credentials_callback(config));
    cb
}

/// Remove `user:password@` from any URL in a message (libgit2 errors may echo
/// the remote URL, which must never put credentials in a log).
pub fn redact(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let end = rest
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(rest.len());
        if let Some(at) = rest[..end].rfind('@') {
            out.push_str("***@");
            rest = &rest[at + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// `refs/remotes/<remote>/<branch>`.
pub fn tracking_ref(remote: &str, branch: &str) -> String {
    format!("refs/remotes/{remote}/{branch}")
}

/// Fetch `refs/heads/<branch>` of `remote` into its remote-tracking ref and
/// return the fetched commit.
///
/// Credentials: ssh-agent, then the Git credential helper, then a plain
/// username / the platform default, each offered at most once (libgit2 calls
/// the callback again after every failure). Never puts credentials in URLs or
/// logs. `cancel` aborts a transfer in progress. FETCH_HEAD is not written.
pub fn fetch(repo: &Repository, remote: &str, branch: &str, cancel: &AtomicBool) -> Result<Oid> {
    set_timeouts();
    let mut rem = repo
        .find_remote(remote)
        .with_context(|| format!("no remote named {remote:?} in this checkout"))?;
    // libgit2 reports a missing local path as "unsupported URL protocol"; say what it is.
    if let Some(url) = rem.url() {
        let local = url.strip_prefix("file://").unwrap_or(url);
        let looks_local =
            url.starts_with("file://") || local.starts_with('/') || local.starts_with('.');
        if looks_local && !Path::new(local).exists() {
            return Err(anyhow!(
                "fetch {remote} {branch} failed: the remote's path {} does not exist",
                redact(url)
            ));
        }
    }
    let config = repo.config().context("cannot read the Git config")?;
    let started = Instant::now();
    let mut cb = remote_callbacks(Some(config));
    cb.transfer_progress(move |_| {
        !cancel.load(Ordering::Relaxed) && started.elapsed() < FETCH_DEADLINE
    });
    let mut fo = FetchOptions::new();
    fo.remote_callbacks(cb);
    fo.update_fetchhead(false);
    fo.prune(git2::FetchPrune::On);
    fo.download_tags(git2::AutotagOption::None);
    let refspec = format!("+refs/heads/{branch}:{}", tracking_ref(remote, branch));
    rem.fetch(&[refspec.as_str()], Some(&mut fo), None)
        .map_err(|e| {
            // A lock left by a killed fetch fails every later one: name it.
            let left: Vec<String> = fetch_lock_files(repo, remote, branch)
                .into_iter()
                .filter(|p| p.exists())
                .map(|p| p.display().to_string())
                .collect();
            let hint = if left.is_empty() {
                String::new()
            } else {
                let (files, exist) = if left.len() == 1 {
                    ("file", "exists")
                } else {
                    ("files", "exist")
                };
                format!(
                    " (Git lock {files} {} {exist}: left by a killed git or rxnode? If no git \
                     process is using this checkout, remove it)",
                    left.join(", ")
                )
            };
            anyhow!(
                "fetch {remote} {branch} failed: {}{hint}",
                redact(e.message())
            )
        })?;
    // libgit2 fetches an explicit refspec whose source is absent without an
    // error; pruning (above) removes the stale tracking ref, so a deleted
    // branch is reported below instead of looking like "nothing new" for ever.
    // (`Remote::list` is not used: git2 0.20 builds a slice from a null
    // pointer when the remote advertises no refs at all.)
    tracking_commit(repo, remote, branch)?.ok_or_else(|| {
        anyhow!(
            "fetch {remote} {branch}: the remote has no branch {branch:?} (deleted or renamed?)"
        )
    })
}

/// The lock files libgit2 (1.9) creates while [`fetch`] runs: the tracking
/// ref's `refs/remotes/<remote>/<branch>.lock` (the ref update),
/// `packed-refs.lock` (pruning a tracking ref that is packed) and `shallow.lock`
/// (libgit2 rewrites `.git/shallow` after every pack download, even in a full
/// clone). FETCH_HEAD is not written, so `FETCH_HEAD.lock` is not among them.
pub fn fetch_lock_files(repo: &Repository, remote: &str, branch: &str) -> Vec<PathBuf> {
    let common = repo.commondir();
    vec![
        common.join(format!("{}.lock", tracking_ref(remote, branch))),
        common.join("packed-refs.lock"),
        repo.path().join("shallow.lock"),
    ]
}

/// The commit of `refs/remotes/<remote>/<branch>`, if the ref exists.
pub fn tracking_commit(repo: &Repository, remote: &str, branch: &str) -> Result<Option<Oid>> {
    let name = tracking_ref(remote, branch);
    match repo.find_reference(&name) {
        Ok(r) => {
            let c = r
                .peel_to_commit()
                .with_context(|| format!("{name} does not point to a commit"))?;
            Ok(Some(c.id()))
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {name}: {}", e.message())),
    }
}

/// A file read from a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
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
pub fn read_blob_at(repo: &Repository, commit: Oid, path: &str, max_bytes: usize) -> Result<Blob> {
    let c = repo
        .find_commit(commit)
        .with_context(|| format!("commit {commit} is not in this repository"))?;
    let tree = c
        .tree()
        .with_context(|| format!("commit {commit} has no tree"))?;
    let entry = match tree.get_path(Path::new(path)) {
        Ok(e) => e,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(Blob::Missing),
        Err(e) => {
            return Err(anyhow!(
                "cannot look up {path} in {commit}: {}",
                e.message()
            ))
        }
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

/// What a tree holds at a path: the object ID and file mode, or nothing.
pub type PathEntry = Option<(Oid, i32)>;

/// The entry at `path` in `commit`'s tree (`None` when absent).
pub fn entry_at(repo: &Repository, commit: Oid, path: &str) -> Result<PathEntry> {
    let c = repo
        .find_commit(commit)
        .with_context(|| format!("commit {commit} is not in this repository"))?;
    let tree = c
        .tree()
        .with_context(|| format!("commit {commit} has no tree"))?;
    match tree.get_path(Path::new(path)) {
        Ok(e) => Ok(Some((e.id(), e.filemode()))),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!(
            "cannot look up {path} in {commit}: {}",
            e.message()
        )),
    }
}

/// One commit of the first-parent history that changed the task path: one
/// *task version* (DESIGN §2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The commit.
    pub commit: Oid,
    /// What the path holds in this commit (`None`: the file was deleted).
    pub entry: PathEntry,
    /// What it held in the commit's first parent (`None`: absent, or a root commit).
    pub before: PathEntry,
}

/// The task versions between a stop point and the tip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct History {
    /// Every version found, oldest first.
    pub versions: Vec<Version>,
    /// First-parent commits walked.
    pub commits: usize,
    /// The walk stopped at its commit limit before reaching the stop point
    /// (older versions, if any, were not looked at).
    pub truncated: bool,
    /// The walk ended early because the history is incomplete here (a shallow
    /// clone, a missing object): why. Older versions were not looked at.
    pub incomplete: Option<String>,
}

/// What a walk collected: the chain (newest first), whether it hit the commit
/// limit, and why it ended early if the history is incomplete.
type Chain = (Vec<Oid>, bool, Option<String>);

/// The first-parent chain from `tip` down to (not including) `hide`, by
/// following first parents: exact when `hide` is on that chain or absent
/// (then down to the root, or to a shallow clone's boundary, reported).
/// `None` when `hide` is not met on the chain (it is reachable only through a
/// merge's second parent): the caller asks libgit2's revwalk.
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
            return Ok(hide.is_none().then_some((chain, true, None)));
        }
        let commit = repo
            .find_commit(c)
            .with_context(|| format!("commit {c} is not in this repository"))?;
        chain.push(c);
        match commit.parent_ids().next() {
            Some(p) if repo.find_commit(p).is_ok() => c = p,
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
pub fn task_history(
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
        let commit = repo
            .find_commit(c)
            .with_context(|| format!("commit {c} is not in this repository"))?;
        let parent = commit.parent_ids().next();
        if let Some(p) = parent.filter(|p| repo.find_commit(*p).is_err()) {
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
            Some(p) => entry_at(repo, p, path)?,
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
    Ok(History {
        versions,
        commits: walked,
        truncated,
        incomplete,
    })
}

/// First-parent steps tried before a full ancestry search.
const FIRST_PARENT_PROBE: usize = 10_000;

/// Whether `target` is on the first-parent chain of `from` within `max`
/// steps. Stops quietly where the history ends (a root, or a shallow clone's
/// boundary, whose parent is not in the repository).
fn first_parent_reaches(repo: &Repository, from: Oid, target: Oid, max: usize) -> bool {
    let mut c = from;
    for _ in 0..max {
        if c == target {
            return true;
        }
        match repo.find_commit(c).ok().and_then(|k| k.parent_ids().next()) {
            Some(p) => c = p,
            None => return false,
        }
    }
    false
}

/// Whether `ancestor` is `commit` or one of its ancestors. An unknown
/// `ancestor` (not in this repository) is not.
///
/// The first-parent chain is tried first (the usual case, and the one that
/// works in a shallow clone); then libgit2's full search. A history that
/// cannot be searched (objects missing past a shallow boundary) answers
/// "not an ancestor", never an error that would stop every poll.
pub fn is_ancestor_or_same(repo: &Repository, ancestor: Oid, commit: Oid) -> Result<bool> {
    if ancestor == commit {
        return Ok(true);
    }
    if repo.find_commit(ancestor).is_err() {
        return Ok(false);
    }
    if first_parent_reaches(repo, commit, ancestor, FIRST_PARENT_PROBE) {
        return Ok(true);
    }
    match repo.graph_descendant_of(commit, ancestor) {
        Ok(b) => Ok(b),
        Err(e) if e.code() == git2::ErrorCode::NotFound => {
            tracing::warn!(
                "cannot search the history of {commit} for {ancestor} ({}); taken as not an ancestor",
                e.message()
            );
            Ok(false)
        }
        Err(e) => Err(anyhow!(
            "cannot compare {commit} with {ancestor}: {}",
            e.message()
        )),
    }
}

/// The merge base of two commits, `None` when they share no history, `a` is
/// not in this repository, or the history needed is missing (shallow clone).
pub fn merge_base(repo: &Repository, a: Oid, b: Oid) -> Result<Option<Oid>> {
    if repo.find_commit(a).is_err() {
        return Ok(None);
    }
    match repo.merge_base(a, b) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.code() == git2::ErrorCode::NotFound && e.class() == git2::ErrorClass::Merge => {
            Ok(None)
        }
        // Objects missing past a shallow clone's boundary: the common history
        // cannot be found, so it is treated as absent (examined from the root,
        // bounded; decided IDs are still never offered again).
        Err(e) => {
            tracing::warn!(
                "cannot find the merge base of {a} and {b} ({}); treated as none",
                e.message()
            );
            Ok(None)
        }
    }
}

/// Whether `ancestor` is a strict ancestor of `commit` ([`is_ancestor_or_same`]).
/// An ancestor unknown to this repository is not an ancestor.
pub fn is_strict_ancestor(repo: &Repository, ancestor: &str, commit: Oid) -> Result<bool> {
    let Ok(a) = Oid::from_str(ancestor) else {
        return Ok(false);
    };
    if a == commit || repo.find_commit(a).is_err() {
        return Ok(false);
    }
    is_ancestor_or_same(repo, a, commit)
}

/// Make sure `.local/` is ignored: append `/.local/` to `.git/info/exclude`
/// unless the checkout already ignores it. Returns whether the file changed.
pub fn ensure_local_excluded(repo: &Repository) -> Result<bool> {
    if repo.is_path_ignored(".local/").unwrap_or(false) {
        return Ok(false);
    }
    let info = repo.path().join("info");
    std::fs::create_dir_all(&info).with_context(|| format!("cannot create {}", info.display()))?;
    let p = info.join("exclude");
    let mut text = match std::fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# rxnode local state (never in Git)\n/.local/\n");
    crate::store::fsutil::write_atomic(&p, text.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
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
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
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
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
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
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
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
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        let a = commit_file(&repo, "f", b"1", None);
        let b = commit_file(&repo, "f", b"2", Some(a));
        let b2 = commit_file(&repo, "f", b"3", Some(a));
        let other = commit_file(&repo, "g", b"4", None);
        assert!(is_ancestor_or_same(&repo, a, b).unwrap());
        assert!(is_ancestor_or_same(&repo, b, b).unwrap());
        assert!(!is_ancestor_or_same(&repo, b, b2).unwrap());
        let missing = Oid::from_str(&"1".repeat(40)).unwrap();
        assert!(!is_ancestor_or_same(&repo, missing, b).unwrap());
        assert_eq!(merge_base(&repo, b, b2).unwrap(), Some(a));
        assert_eq!(merge_base(&repo, b, other).unwrap(), None);
        assert_eq!(merge_base(&repo, missing, b).unwrap(), None);
    }

    #[test]
    fn each_credential_kind_is_offered_once() {
        let mut t = Tried::default();
        let all = CredentialType::SSH_KEY
            | CredentialType::USER_PASS_PLAINTEXT
            | CredentialType::USERNAME
            | CredentialType::DEFAULT;
        let mut got = vec![];
        for _ in 0..10 {
            match next_credential(&mut t, all) {
                Some(k) => got.push(k),
                None => break,
            }
        }
        use CredKind::*;
        assert_eq!(got, vec![Agent, Helper, Username, Default]);
        let mut t = Tried::default();
        assert_eq!(
            next_credential(&mut t, CredentialType::SSH_KEY),
            Some(Agent)
        );
        assert_eq!(next_credential(&mut t, CredentialType::SSH_KEY), None);
    }

    #[test]
    fn credentials_are_redacted_from_messages() {
        assert_eq!(
            redact("failed to connect to https://bob:s3cret@git.example/x.git: refused"),
            "failed to connect to https://***@git.example/x.git: refused"
        );
        assert_eq!(
            redact("ssh://git@host/repo and http://h/p"),
            "ssh://***@host/repo and http://h/p"
        );
        assert_eq!(redact("no url here"), "no url here");
    }

    #[test]
    fn exclude_is_added_once() {
        let d = tempfile::tempdir().unwrap();
        let repo = Repository::init(d.path()).unwrap();
        assert!(ensure_local_excluded(&repo).unwrap());
        assert!(!ensure_local_excluded(&repo).unwrap());
        let text = std::fs::read_to_string(repo.path().join("info/exclude")).unwrap();
        assert_eq!(text.matches("/.local/").count(), 1);
    }
}
