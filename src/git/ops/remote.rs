//! Remotes: the transport timeouts, the credential callback that tries each
//! kind once, URL redaction, and the fetch of the watched branch into its
//! remote-tracking ref.
use anyhow::{anyhow, Context, Result};
use git2::{Cred, CredentialType, FetchOptions, Oid, RemoteCallbacks, Repository};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread::ThreadId;
use std::time::Duration;

/// Connect timeout for remote transports.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Per-read/write timeout on remote transports.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// A whole fetch is abandoned after this many read timeouts (120 s by default),
/// however the remote paces it (`super::deadline`).
const FETCH_DEADLINE_READS: u32 = 4;

/// Environment variable that overrides both transport timeouts (seconds,
/// 0.1 ..= 600): for slow links, and for tests of a hanging remote.
pub(crate) const TIMEOUT_ENV: &str = "RXNODE_GIT_TIMEOUT_S";

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
///
/// Also lets libgit2 cache trees up to [`TREE_CACHE_LIMIT`] (its default is
/// 4 KiB): the `rx-results` folder of a branch with 100 000 results is a
/// 3 MiB tree, which would otherwise be read, hash-checked and parsed again at
/// every lookup of a publication or a listing.
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
            let _ = git2::opts::set_cache_object_limit(git2::ObjectType::Tree, TREE_CACHE_LIMIT);
        }
    });
}

/// The largest tree libgit2 keeps in its object cache (within its overall
/// cache size, 256 MiB by default).
const TREE_CACHE_LIMIT: usize = 16 << 20;

/// Which credential kinds were already offered during one fetch.
#[derive(Default)]
struct Tried(Vec<CredKind>);

/// A credential kind to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CredKind {
    Agent,
    Helper,
    Username,
    Default,
}

/// The kinds in the order they are offered, each with the credential type
/// libgit2 must allow for it.
const CRED_ORDER: [(CredentialType, CredKind); 4] = [
    (CredentialType::SSH_KEY, CredKind::Agent),
    (CredentialType::USER_PASS_PLAINTEXT, CredKind::Helper),
    (CredentialType::USERNAME, CredKind::Username),
    (CredentialType::DEFAULT, CredKind::Default),
];

/// The next credential kind to offer, each at most once per fetch; `None`
/// when everything allowed was tried (ends libgit2's retry loop).
fn next_credential(tried: &mut Tried, allowed: CredentialType) -> Option<CredKind> {
    let (_, kind) = CRED_ORDER
        .into_iter()
        .find(|(t, k)| allowed.contains(*t) && !tried.0.contains(k))?;
    tried.0.push(kind);
    Some(kind)
}

/// The credential callback used for every fetch and push: ssh-agent, the Git
/// credential helper, a plain username, the platform default — each offered at
/// most once ([`next_credential`]), then a clear error naming the (redacted)
/// URL. libgit2 calls the callback again after every failure, so without this
/// bound it would loop for ever. Never logs or returns a credential.
///
/// Whoever asks for it is about to connect to a remote it has not named here:
/// the CA certificates are loaded first ([`crate::git::ops::tls::ready`]).
pub(crate) fn credentials_callback(
    config: Option<git2::Config>,
) -> impl FnMut(&str, Option<&str>, CredentialType) -> Result<Cred, git2::Error> {
    crate::git::ops::tls::ready();
    credentials(config)
}

/// [`credentials_callback`] without loading the CA certificates.
fn credentials(
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

/// Remote callbacks with [`credentials_callback`] installed, for a connection
/// to a remote not named here: the CA certificates are loaded first.
pub(crate) fn remote_callbacks<'a>(config: Option<git2::Config>) -> RemoteCallbacks<'a> {
    crate::git::ops::tls::ready();
    callbacks(config)
}

/// [`remote_callbacks`] for a connection to `remote`: the CA certificates are
/// loaded only when its URL may use TLS ([`crate::git::ops::tls::ready_for`]), so a
/// poll of a local or SSH remote does not read them.
pub(crate) fn remote_callbacks_for<'a>(
    remote: &git2::Remote<'_>,
    config: Option<git2::Config>,
) -> RemoteCallbacks<'a> {
    crate::git::ops::tls::ready_for(remote);
    callbacks(config)
}

fn callbacks<'a>(config: Option<git2::Config>) -> RemoteCallbacks<'a> {
    let mut cb = RemoteCallbacks::new();
    cb.credentials(credentials(config));
    cb
}

/// Remove `user:password@` from any URL in a message (libgit2 errors may echo
/// the remote URL, which must never put credentials in a log).
pub(crate) fn redact(msg: &str) -> String {
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

/// Why a fetch from `url` cannot work when it names a local path that is not
/// there (a moved or unmounted share): "the remote's path … does not exist".
/// libgit2 reports that as "unsupported URL protocol"; every fetch says this
/// instead. `None` for a URL that is not a local path, or one that exists.
pub(crate) fn missing_local_remote(url: &str) -> Option<String> {
    let local = url.strip_prefix("file://").unwrap_or(url);
    let looks_local = url.starts_with("file://")
        || local.starts_with('/')
        || local.starts_with('.')
        || local.starts_with('\\')
        || Path::new(local).is_absolute();
    (looks_local && !Path::new(local).exists())
        .then(|| format!("the remote's path {} does not exist", redact(url)))
}

/// Environment variable that sets the CPU time one fetch may spend (seconds,
/// 0.1 ..= 600; [`FETCH_CPU`] otherwise).
pub(crate) const FETCH_CPU_ENV: &str = "RXNODE_FETCH_CPU_S";

/// CPU time one fetch may spend, on the thread that fetches, unless
/// `RXNODE_FETCH_CPU_S` says otherwise. Indexing what a fetch received inflates
/// every object and resolves every delta: a pack of a few MB whose deltas each
/// rebuild a 2 MiB file expands without bound (600 of them, 14 MB pushed: 1.2 GB,
/// 6.7 s of CPU), and the bounds on one commit or tree do not see it. A fetch that
/// reaches this budget is abandoned; nothing of it is kept (docs/protocol.md#bound).
pub(crate) const FETCH_CPU: Duration = Duration::from_secs(3);

/// The CPU budget of one fetch: [`FETCH_CPU`] unless `RXNODE_FETCH_CPU_S` holds
/// a number of seconds in 0.1 ..= 600 (anything else is ignored with a warning).
fn fetch_cpu_budget() -> Duration {
    let Ok(v) = std::env::var(FETCH_CPU_ENV) else {
        return FETCH_CPU;
    };
    match v.trim().parse::<f64>() {
        Ok(s) if (0.1..=600.0).contains(&s) => Duration::from_secs_f64(s),
        _ => {
            tracing::warn!("{FETCH_CPU_ENV}={v:?} ignored: must be seconds in 0.1 ..= 600");
            FETCH_CPU
        }
    }
}

/// CPU time the calling thread has used (`None` when it cannot be read).
#[cfg(unix)]
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes only into the struct it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| {
        Duration::new(
            u64::try_from(ts.tv_sec).unwrap_or(0),
            u32::try_from(ts.tv_nsec).unwrap_or(0),
        )
    })
}

/// CPU time the calling thread has used (`None` when it cannot be read).
#[cfg(windows)]
fn thread_cpu() -> Option<Duration> {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let zero = || FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero(), zero(), zero(), zero());
    // SAFETY: GetThreadTimes writes only into the four structs it is given;
    // GetCurrentThread's pseudo-handle needs no closing.
    let ok = unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) };
    let ticks = |f: &FILETIME| (u64::from(f.dwHighDateTime) << 32) | u64::from(f.dwLowDateTime);
    (ok != 0).then(|| Duration::from_nanos((ticks(&k) + ticks(&u)).saturating_mul(100)))
}

/// The CPU time one fetch has spent: the fetching thread's since the fetch
/// began, plus the whole CPU time of every other thread libgit2 called back
/// from. Those are the worker threads libgit2's local transport starts, for
/// this fetch alone, to find deltas between the objects it packs from a remote
/// that is a path on this machine (one per core): the fetching thread waits
/// meanwhile, so its own clock alone misses that work.
struct FetchCpu {
    /// The thread that fetches.
    fetching: ThreadId,
    /// Its CPU time when the fetch began (`None`: it cannot be read).
    started: Option<Duration>,
    /// CPU time of the fetching thread since `started`, and of each other thread
    /// in all, as last read on that thread.
    seen: Mutex<(Duration, HashMap<ThreadId, Duration>)>,
}

impl FetchCpu {
    fn start() -> Self {
        FetchCpu {
            fetching: std::thread::current().id(),
            started: thread_cpu(),
            seen: Mutex::new((Duration::ZERO, HashMap::new())),
        }
    }

    /// Read the calling thread's clock and return the sum over every thread
    /// seen (`None` when the clock cannot be read).
    fn spent(&self) -> Option<Duration> {
        let now = thread_cpu()?;
        let here = std::thread::current().id();
        let mut seen = self.seen.lock().ok()?;
        if here == self.fetching {
            seen.0 = now.saturating_sub(self.started?);
        } else {
            seen.1.insert(here, now);
        }
        Some(seen.1.values().fold(seen.0, |a, b| a.saturating_add(*b)))
    }
}

/// Why a fetch was abandoned by rxnode rather than failing by itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Abandoned {
    /// At the whole-fetch deadline.
    Deadline(Duration),
    /// At its CPU budget, with the bytes received by then.
    Cpu {
        /// The budget.
        budget: Duration,
        /// Bytes received on the wire when it was abandoned.
        received: usize,
    },
}

/// A fetch that did not finish: libgit2's error, and the whole-fetch deadline or
/// the CPU budget when that is what ended it.
pub(crate) struct FetchFailure {
    /// What libgit2 said.
    pub(crate) error: git2::Error,
    /// Why rxnode abandoned it (`None`: it failed by itself).
    pub(crate) abandoned: Option<Abandoned>,
}

impl FetchFailure {
    /// `abandoned after N s (4 read timeouts): URL kept the transfer going without
    /// finishing it (…)`, `abandoned at its CPU budget …`, or libgit2's message:
    /// the words every fetch's error uses.
    pub(crate) fn message(&self, url: &str) -> String {
        match self.abandoned {
            Some(Abandoned::Deadline(d)) => format!(
                "abandoned after {:.1} s ({FETCH_DEADLINE_READS} read timeouts): {url} kept the \
                 transfer going without finishing it ({})",
                d.as_secs_f64(),
                redact(self.error.message())
            ),
            Some(Abandoned::Cpu { budget, received }) => format!(
                "abandoned after {:.1} s of CPU ({FETCH_CPU_ENV}), {received} bytes received: \
                 what {url} sent expands to more than one fetch may index (a pack of a few MB \
                 can inflate to hundreds of MB); nothing of it is kept (for a push you trust, \
                 raise {FETCH_CPU_ENV}) ({})",
                budget.as_secs_f64(),
                redact(self.error.message())
            ),
            None => redact(self.error.message()),
        }
    }
}

/// `rem.fetch(specs)` with `callbacks` and the options `configure` sets, bounded as
/// every fetch of rxnode is: the transport timeouts bound each connect and read, the
/// whole fetch is abandoned after [`FETCH_DEADLINE_READS`] read timeouts however
/// the remote paces it (`super::deadline`), and when it has spent its CPU budget
/// ([`FETCH_CPU`], [`FetchCpu`]) on what it received — over any transport, a
/// remote given as a plain path included, whose packing libgit2 does in this
/// process; `cancel` (Ctrl-C) stops it too. The one door through which the watcher, `publish`, the heartbeat and the
/// main PC's `results` fetch.
pub(crate) fn fetch_bounded<'cb>(
    rem: &mut git2::Remote<'_>,
    specs: &[&str],
    mut callbacks: git2::RemoteCallbacks<'cb>,
    cancel: Option<&'cb AtomicBool>,
    configure: impl FnOnce(&mut FetchOptions<'cb>),
) -> std::result::Result<(), FetchFailure> {
    set_timeouts();
    let deadline = timeouts().1 * FETCH_DEADLINE_READS;
    let budget = fetch_cpu_budget();
    let watchdog = super::deadline::Watchdog::arm(deadline);
    // libgit2 calls back after every object it indexed and every delta it
    // resolved, and — for a remote that is a path on this machine — while it
    // counts and deltifies the objects it packs on its own worker threads
    // (the sideband callback): the CPU spent is checked at each.
    let cpu = Arc::new(FetchCpu::start());
    let over = Arc::new(std::sync::Mutex::new(None::<usize>));
    let stop = {
        let expired = watchdog.expired_flag();
        let cpu = Arc::clone(&cpu);
        let over = Arc::clone(&over);
        move |received: Option<usize>| -> bool {
            if cpu.spent().is_some_and(|s| s > budget) {
                if let Ok(mut o) = over.lock() {
                    let had = o.unwrap_or(0);
                    *o = Some(received.unwrap_or(had).max(had));
                }
                return true;
            }
            cancel.is_some_and(|c| c.load(Ordering::Relaxed)) || expired.load(Ordering::Relaxed)
        }
    };
    let stop_sideband = stop.clone();
    callbacks.transfer_progress(move |p| !stop(Some(p.received_bytes())));
    callbacks.sideband_progress(move |_| !stop_sideband(None));
    let mut fo = FetchOptions::new();
    fo.remote_callbacks(callbacks);
    configure(&mut fo);
    let fetched = rem.fetch(specs, Some(&mut fo), None);
    let expired = watchdog.expired();
    drop(watchdog);
    drop(fo);
    let over = over.lock().ok().and_then(|o| *o);
    let abandoned = match over {
        Some(received) => Some(Abandoned::Cpu { budget, received }),
        None => expired.then_some(Abandoned::Deadline(deadline)),
    };
    fetched.map_err(|error| FetchFailure { error, abandoned })
}

/// `refs/remotes/<remote>/<branch>`.
pub(crate) fn tracking_ref(remote: &str, branch: &str) -> String {
    format!("refs/remotes/{remote}/{branch}")
}

/// Fetch `refs/heads/<branch>` of `remote` into its remote-tracking ref and
/// return the fetched commit.
///
/// Credentials: ssh-agent, then the Git credential helper, then a plain
/// username / the platform default, each offered at most once (libgit2 calls
/// the callback again after every failure). Never puts credentials in URLs or
/// logs. `cancel` aborts a transfer in progress. FETCH_HEAD is not written.
pub(crate) fn fetch(
    repo: &Repository,
    remote: &str,
    branch: &str,
    cancel: &AtomicBool,
) -> Result<Oid> {
    let mut rem = super::find_remote(repo, remote)?;
    if let Some(why) = rem.url().and_then(missing_local_remote) {
        return Err(anyhow!("fetch {remote} {branch} failed: {why}"));
    }
    let config = repo.config().context("cannot read the Git config")?;
    let cb = remote_callbacks_for(&rem, Some(config));
    let refspec = format!("+refs/heads/{branch}:{}", tracking_ref(remote, branch));
    let url = rem.url().map(redact).unwrap_or_default();
    let fetched = fetch_bounded(&mut rem, &[refspec.as_str()], cb, Some(cancel), |fo| {
        fo.update_fetchhead(false);
        fo.prune(git2::FetchPrune::On);
        fo.download_tags(git2::AutotagOption::None);
    });
    fetched.map_err(|f| {
        if f.abandoned.is_some() {
            return anyhow!("fetch {remote} {branch} failed: {}", f.message(&url));
        }
        let e = f.error;
        if e.code() == git2::ErrorCode::Certificate {
            return anyhow!(
                "fetch {remote} {branch} failed: {} — the TLS certificate of {url} did not \
                     verify (it must name that host and chain to a CA this machine trusts: \
                     SSL_CERT_FILE / SSL_CERT_DIR); nothing was fetched",
                redact(e.message())
            );
        }
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
            "fetch {remote} {branch}: the remote has no branch {branch:?} (deleted or renamed, \
             or a typo?){} — fix: pass the branch the main PC posts tasks on with `--branch NAME` \
             (or RXNODE_BRANCH), or ask the main PC to push it; `rxnode doctor` lists the \
             remote's branches",
            known_branches(repo, remote, branch)
        )
    })
}

/// `; branches of REMOTE last fetched here: a, b` (at most 10), or nothing: the
/// remote-tracking branches this checkout holds, to spot a misspelt name.
fn known_branches(repo: &Repository, remote: &str, branch: &str) -> String {
    let prefix = format!("refs/remotes/{remote}/");
    let Ok(refs) = repo.references_glob(&format!("{prefix}*")) else {
        return String::new();
    };
    let names: Vec<String> = refs
        .flatten()
        .filter_map(|r| {
            r.name()
                .and_then(|n| n.strip_prefix(&prefix))
                .map(str::to_owned)
        })
        .filter(|n| n != "HEAD" && n != branch)
        .take(10)
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!(
            "; branches of {remote} last fetched here: {}",
            names.join(", ")
        )
    }
}

/// The lock files libgit2 (1.9) creates while [`fetch`] runs: the tracking
/// ref's `refs/remotes/<remote>/<branch>.lock` (the ref update),
/// `packed-refs.lock` (pruning a tracking ref that is packed) and `shallow.lock`
/// (libgit2 rewrites `.git/shallow` after every pack download, even in a full
/// clone). FETCH_HEAD is not written, so `FETCH_HEAD.lock` is not among them.
pub(crate) fn fetch_lock_files(repo: &Repository, remote: &str, branch: &str) -> Vec<PathBuf> {
    let common = repo.commondir();
    vec![
        common.join(format!("{}.lock", tracking_ref(remote, branch))),
        common.join("packed-refs.lock"),
        repo.path().join("shallow.lock"),
    ]
}

/// First-parent commits checked below each advertised ref by
/// [`oversized_advertised`]: libgit2's push reads the newest of them (by date)
/// while it sorts out which of its own commits the remote lacks.
const ADVERTISED_DEPTH: usize = 16;

/// libgit2's push leaves out of the pack every commit the remote advertises that
/// this repository holds, reading each whole to do so (and some of their parents):
/// an oversized commit among them — a plain `git fetch` of every branch brings it
/// — would be inflated at every push (docs/protocol.md#bound). Called on a remote
/// connected for pushing, before the push on the same connection: why the first
/// advertised ref that leads to one (within [`ADVERTISED_DEPTH`]) refuses the push.
pub(crate) fn oversized_advertised(
    repo: &Repository,
    heads: &[git2::RemoteHead<'_>],
) -> Option<String> {
    heads.iter().find_map(|h| {
        let why = super::history::oversized_on_chain(repo, h.oid(), None, ADVERTISED_DEPTH, None, u64::MAX)?;
        Some(format!(
            "the remote's {} leads to a commit this checkout holds: {why}; nothing is pushed \
             while it is advertised — whoever pushed it must remove it from the remote, then \
             here: `git fetch --prune`, `git reflog expire --expire=now --all`, `git gc --prune=now`",
            h.name()
        ))
    })
}

/// The commit of `refs/remotes/<remote>/<branch>`, if the ref exists.
pub(crate) fn tracking_commit(
    repo: &Repository,
    remote: &str,
    branch: &str,
) -> Result<Option<Oid>> {
    let name = tracking_ref(remote, branch);
    match repo.find_reference(&name) {
        Ok(r) => {
            // The commit's ID without reading the commit: a tip may be a commit
            // that inflates to GiBs, which the poll refuses unread
            // (super::history::oversized). Only a tag in between is read, small.
            let r = r
                .resolve()
                .map_err(|e| anyhow!("cannot resolve {name}: {}", e.message()))?;
            let id = r
                .target()
                .ok_or_else(|| anyhow!("{name} does not point to an object"))?;
            let (size, kind) = repo
                .odb()
                .and_then(|o| o.read_header(id))
                .map_err(|e| anyhow!("{name}: cannot read {id}: {}", e.message()))?;
            match kind {
                git2::ObjectType::Commit => Ok(Some(id)),
                git2::ObjectType::Tag if size <= super::history::MAX_COMMIT_BYTES => {
                    let c = r
                        .peel_to_commit()
                        .with_context(|| format!("{name} does not point to a commit"))?;
                    Ok(Some(c.id()))
                }
                _ => Err(anyhow!(
                    "{name} does not point to a commit ({kind} {id}, {size} bytes)"
                )),
            }
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {name}: {}", e.message())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
