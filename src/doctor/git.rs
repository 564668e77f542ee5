//! doctor's Git checks: `.local/` ignored, the trust root, the remote and its
//! branch, the credentials. Connections list refs only: nothing is fetched or sent.
use super::{check, Check, CheckName, Verdict};
use crate::context::Ctx;
use crate::git::ops;
use crate::store::paths::Paths;
use git2::{Direction, Repository};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a remote may take to answer before doctor gives up on it.
const REMOTE_DEADLINE: Duration = Duration::from_secs(20);

/// Whether Git ignores `.local/` and every file under it.
pub(super) fn local_ignored(repo: &Repository) -> Check {
    const FIX: &str =
        "add `/.local/` to .git/info/exclude (every rxnode command that writes under .local/ does this on start: watch, review, mark-completed, run, publish, capture, sweep, node set-name)";
    // Ask about the actual files too, not only the folder.
    match crate::store::trust::visible_files(repo) {
        Ok(seen) if !seen.is_empty() => {
            return check(
                CheckName::LocalIgnored,
                Verdict::Fail,
                format!(
                    "Git sees {} file(s) under .local/ (first: {}): an ignore rule (a committed .gitignore?) lets them be added",
                    seen.len(),
                    seen[0]
                ),
                "add `/.local/` to .git/info/exclude and remove every `!` rule about .local from .gitignore files",
            )
        }
        Ok(_) => {}
        Err(e) => {
            return check(
                CheckName::LocalIgnored,
                Verdict::Fail,
                format!("cannot ask Git which files under .local/ it sees: {}", e.message()),
                FIX,
            )
        }
    }
    let hidden =
        crate::store::trust::GitIgnores::of(repo).and_then(|mut r| r.hidden(repo, ".local", true));
    match hidden {
        Ok(true) => check(
            CheckName::LocalIgnored,
            Verdict::Pass,
            ".local/ is ignored by Git",
            "",
        ),
        Ok(false) => check(
            CheckName::LocalIgnored,
            Verdict::Fail,
            ".local/ is not ignored: local state, outbox and IQ files could be committed",
            FIX,
        ),
        Err(e) => check(
            CheckName::LocalIgnored,
            Verdict::Fail,
            format!("cannot tell whether Git ignores .local/: {e}"),
            FIX,
        ),
    }
}

/// The trust root: one FAIL per reason not to trust `.local/`.
pub(super) fn trust_root(paths: &Paths) -> Vec<Check> {
    let found = crate::store::trust::findings(paths);
    if found.is_empty() {
        return vec![check(
            CheckName::TrustRoot,
            Verdict::Pass,
            "nothing under .local/ is tracked, linked, foreign or visible to Git; the policy is a regular file of yours",
            "",
        )];
    }
    found
        .into_iter()
        .map(|f| check(CheckName::TrustRoot, Verdict::Fail, f.detail, &f.fix))
        .collect()
}

/// Whether a remote URL points at this machine (a path or `file://`).
fn is_local_url(url: &str) -> bool {
    url.starts_with("file:") || !url.contains(':') || Path::new(url).exists()
}

/// For a local remote whose path does not exist, say so (libgit2 only says
/// "unsupported URL protocol").
fn missing_local_path(workdir: &Path, url: &str) -> Option<String> {
    if !is_local_url(url) {
        return None;
    }
    let p = Path::new(url.strip_prefix("file://").unwrap_or(url));
    let p = if p.is_relative() {
        workdir.join(p)
    } else {
        p.to_path_buf()
    };
    (!p.exists()).then(|| format!("the path {} does not exist", p.display()))
}

/// The outcome of connecting to a remote in one direction.
struct Connected {
    /// The branch names the remote advertises (`refs/heads/…` stripped).
    heads: Vec<(String, String)>,
    /// How often the credential callback was asked.
    credential_asks: usize,
}

/// Connect to `remote` of the checkout at `repo_path` for `dir` and list its
/// refs, on a thread, giving up after [`REMOTE_DEADLINE`].
fn connect(repo_path: &Path, remote: &str, dir: Direction) -> Result<Connected, String> {
    // The same transport timeouts as every fetch (RXNODE_GIT_TIMEOUT_S honoured).
    ops::set_timeouts();
    let (tx, rx) = std::sync::mpsc::channel();
    let repo_path: PathBuf = repo_path.to_path_buf();
    let remote = remote.to_owned();
    std::thread::spawn(move || {
        let r = (|| -> Result<Connected, String> {
            let repo = Repository::open(&repo_path).map_err(|e| e.message().to_owned())?;
            let mut rem = repo
                .find_remote(&remote)
                .map_err(|e| e.message().to_owned())?;
            let asks = Arc::new(AtomicUsize::new(0));
            let counter = Arc::clone(&asks);
            let mut inner = ops::credentials_callback(repo.config().ok());
            let mut cb = git2::RemoteCallbacks::new();
            cb.credentials(move |url, user, allowed| {
                counter.fetch_add(1, Ordering::Relaxed);
                inner(url, user, allowed)
            });
            let conn = rem
                .connect_auth(dir, Some(cb), None)
                .map_err(|e| ops::redact(e.message()))?;
            let heads = conn
                .list()
                .map_err(|e| ops::redact(e.message()))?
                .iter()
                .filter_map(|h| {
                    h.name()
                        .strip_prefix("refs/heads/")
                        .map(|n| (n.to_owned(), h.oid().to_string()))
                })
                .collect();
            Ok(Connected {
                heads,
                credential_asks: asks.load(Ordering::Relaxed),
            })
        })();
        let _ = tx.send(r);
    });
    match rx.recv_timeout(REMOTE_DEADLINE) {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {} s", REMOTE_DEADLINE.as_secs())),
    }
}

/// The remote as doctor shows it.
struct Remote<'a> {
    /// Its name in the checkout.
    name: &'a str,
    /// Its URL, credentials redacted.
    url: &'a str,
    /// Its URL as configured.
    raw_url: &'a str,
    /// The checkout's work tree (a relative local URL is relative to it).
    workdir: &'a Path,
}

/// The remote: reachable with the watched branch, then whether it takes our credentials.
pub(super) fn remote_checks(ctx: &Ctx, repo: &Repository) -> Vec<Check> {
    let name = ctx.source.remote.as_str();
    let (url, raw_url) = match repo.find_remote(name) {
        Ok(r) => (
            r.url().map(ops::redact).unwrap_or_default(),
            r.url().unwrap_or_default().to_owned(),
        ),
        Err(_) => {
            return vec![
                check(
                    CheckName::Remote,
                    Verdict::Fail,
                    format!("no remote named {name:?} in this checkout"),
                    &format!("`git remote add {name} URL`, or pass --remote NAME"),
                ),
                check(CheckName::Credentials, Verdict::Skip, "no remote", ""),
            ]
        }
    };
    let workdir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.path().to_path_buf());
    let remote = Remote {
        name,
        url: &url,
        raw_url: &raw_url,
        workdir: &workdir,
    };
    let mut out = vec![reachable(&remote, ctx.source.branch.as_str())];
    if is_local_url(&raw_url) {
        out.push(check(
            CheckName::Credentials,
            Verdict::Skip,
            "a local remote needs no credentials",
            "",
        ));
        return out;
    }
    if out.first().is_some_and(|c| c.status == Verdict::Fail)
        && !out[0].detail.contains("reachable but")
    {
        out.push(check(
            CheckName::Credentials,
            Verdict::Skip,
            "the remote is unreachable, so credentials could not be tried",
            "",
        ));
        return out;
    }
    out.push(credentials(&remote));
    out
}

/// The `remote` check: a fetch connection lists the watched branch.
fn reachable(remote: &Remote, branch: &str) -> Check {
    let Remote { name, url, .. } = *remote;
    tracing::info!("connecting to {name} ({url}) to list its branches");
    match connect(remote.workdir, name, Direction::Fetch) {
        Ok(c) => match c.heads.iter().find(|(b, _)| b == branch) {
            Some((_, oid)) => check(
                CheckName::Remote,
                Verdict::Pass,
                format!(
                    "{name} ({url}) reachable; {branch} at {}",
                    oid.get(..12).unwrap_or(oid)
                ),
                "",
            ),
            None => check(
                CheckName::Remote,
                Verdict::Fail,
                format!(
                    "{name} ({url}) reachable but has no branch {branch:?} (it has: {})",
                    if c.heads.is_empty() {
                        "no branches".to_owned()
                    } else {
                        c.heads
                            .iter()
                            .map(|(b, _)| b.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
                "ask the main PC to push the branch, or pass --branch NAME",
            ),
        },
        Err(e) => check(
            CheckName::Remote,
            Verdict::Fail,
            format!(
                "{name} ({url}) unreachable: {}",
                missing_local_path(remote.workdir, remote.raw_url).unwrap_or(e)
            ),
            &format!(
                "check the URL (`git remote set-url {name} URL`), the network, and that the repository exists"
            ),
        ),
    }
}

/// The `credentials` check: connecting for push lists the refs the node could
/// update; nothing is sent.
fn credentials(remote: &Remote) -> Check {
    let Remote { name, url, .. } = *remote;
    match connect(remote.workdir, name, Direction::Push) {
        Ok(c) if c.credential_asks == 0 => check(
            CheckName::Credentials,
            Verdict::Pass,
            "the remote accepted a push connection without asking for credentials",
            "",
        ),
        Ok(_) => check(
            CheckName::Credentials,
            Verdict::Pass,
            "the remote asked for credentials and accepted them (push connection, nothing sent)",
            "",
        ),
        Err(e) => check(
            CheckName::Credentials,
            Verdict::Fail,
            format!("push connection to {name} ({url}) refused: {e}"),
            "load your ssh key into ssh-agent (`ssh-add`) or set up a Git credential helper",
        ),
    }
}

/// The `status publishing` check (docs/protocol.md#node-status): when the
/// policy asks to publish this node's status, the node has a name and the
/// remote takes a push connection; a last push that failed is a warning with
/// its error.
pub(super) fn status_publishing(ctx: &Ctx, paths: &Paths, repo: &Repository) -> Check {
    use crate::heartbeat::{record, Setting};
    const NAME: CheckName = CheckName::StatusPublishing;
    let cfg = match crate::heartbeat::setting(paths, &ctx.source) {
        Setting::Off => {
            return check(
                NAME,
                Verdict::Skip,
                "off (no \"status\" in the policy): this node's status is never pushed",
                "",
            )
        }
        Setting::Refused(why) => {
            return check(
                NAME,
                Verdict::Fail,
                why,
                "`rxnode node set-name NAME`, or remove \"status\" from the policy",
            )
        }
        Setting::PolicyUnreadable(why) => {
            return check(
                NAME,
                Verdict::Fail,
                why,
                "fix the policy (see the policy check)",
            )
        }
        Setting::On(cfg) => cfg,
    };
    let url = repo
        .find_remote(&cfg.remote)
        .ok()
        .and_then(|r| r.url().map(ops::redact))
        .unwrap_or_default();
    let workdir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.path().to_path_buf());
    if let Err(e) = connect(&workdir, &cfg.remote, Direction::Push) {
        return check(
            NAME,
            Verdict::Fail,
            format!(
                "on, every {} s to {}, but {} ({url}) refuses a push connection: {e}",
                cfg.every_s,
                cfg.spec.remote_ref(),
                cfg.remote
            ),
            "check the URL, the network and the push credentials (ssh-agent or a credential helper); \
             the watcher keeps retrying at every heartbeat",
        );
    }
    match record::load(paths) {
        Some(r) if r.last_error.is_some() => check(
            NAME,
            Verdict::Warn,
            format!(
                "on, every {} s to {}; the remote takes a push connection now, but the last push ({}) failed: {}",
                cfg.every_s,
                cfg.spec.remote_ref(),
                r.last_attempt_at.as_deref().unwrap_or("?"),
                r.last_error.as_deref().unwrap_or("")
            ),
            "if it keeps failing: a branch protection rule on rx-status/* may refuse the forced update; allow it for this node",
        ),
        r => check(
            NAME,
            Verdict::Pass,
            format!(
                "on, every {} s to {} on {} ({url}), which takes a push connection; last pushed: {}",
                cfg.every_s,
                cfg.spec.remote_ref(),
                cfg.remote,
                r.and_then(|r| r.last_pushed_at)
                    .unwrap_or_else(|| "never".to_owned())
            ),
            "",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_are_recognised() {
        assert!(is_local_url("/srv/git/lab.git"));
        assert!(is_local_url("file:///srv/git/lab.git"));
        assert!(is_local_url("../lab.git"));
        assert!(!is_local_url("git@github.com:lab/repo.git"));
        assert!(!is_local_url("https://git.example/lab.git"));
        assert!(!is_local_url("ssh://git@host/lab.git"));
    }
}
