//! Sending the results branch (`rx-node`, or this node's own
//! `rx-results/<NODE>`) to the remote: the push gate, the push itself
//! (libgit2, or a compare-and-swap ref update for a remote on this machine),
//! and the fetch–rebuild–retry loop after a lost race.
use super::checks::{check_outgoing, check_outgoing_node};
use super::local::{local_remote_path, push_local_cas};
use super::tree::{
    build_commit, case_twin_at, local_additions, result_at, set_rx_node, tracking_ref,
};
use crate::exit::{bad_input, refused};
use crate::git::ops::{redact, remote_callbacks_for};
use crate::git::refspec::PushRefspec;
use crate::result::RESULTS_DIR;
use anyhow::Result;
use git2::{ErrorClass, ErrorCode, Oid, Repository};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a publication keeps trying to land on `rx-node` (lost races, a
/// server that refuses or drops connections) before it gives up with an error
/// naming its attempts and the last rejection (docs/publishing.md#how-the-push-works).
pub(crate) const PUSH_BUDGET: Duration = Duration::from_secs(300);

/// Environment variable that overrides [`PUSH_BUDGET`]: seconds in 0 ..= 3600
/// (0: one attempt, no retry).
pub(crate) const PUSH_BUDGET_ENV: &str = "RXNODE_PUSH_BUDGET_S";

/// The first back-off after a lost attempt; it doubles with every attempt.
const BACKOFF_BASE: Duration = Duration::from_millis(100);

/// The longest back-off between two attempts.
const BACKOFF_CAP: Duration = Duration::from_secs(8);

/// The push budget: [`PUSH_BUDGET`] unless `RXNODE_PUSH_BUDGET_S` says otherwise;
/// a value that is not seconds in 0 ..= 3600 is an error naming it.
pub(crate) fn push_budget() -> Result<Duration> {
    let Ok(v) = std::env::var(PUSH_BUDGET_ENV) else {
        return Ok(PUSH_BUDGET);
    };
    match v.trim().parse::<f64>() {
        Ok(s) if (0.0..=3600.0).contains(&s) => Ok(Duration::from_secs_f64(s)),
        _ => Err(bad_input(format!(
            "{PUSH_BUDGET_ENV}={v:?}: must be seconds in 0 ..= 3600"
        ))),
    }
}

/// The wait before attempt `attempt + 1`: random in 0 ..= min(cap, base·2^(attempt−1))
/// ("full jitter"), so that nodes that lost the same race spread out instead of
/// meeting again, and a crowd of them backs off further at every loss.
pub(crate) fn backoff(attempt: u32, draw: f64) -> Duration {
    let ceiling = BACKOFF_BASE
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
        .min(BACKOFF_CAP);
    ceiling.mul_f64(draw.clamp(0.0, 1.0))
}

/// Whether a transport error is worth another attempt: the server could not be
/// reached, dropped or timed out the connection. Credentials, certificates and
/// anything the server said on purpose are final.
fn is_transient(e: &git2::Error) -> bool {
    if matches!(
        e.code(),
        ErrorCode::Auth | ErrorCode::Certificate | ErrorCode::User
    ) {
        return false;
    }
    let m = e.message().to_ascii_lowercase();
    // A name that does not resolve or a URL git cannot use is a mistake in the
    // remote's address far more often than a passing fault: say so at once.
    let mistaken = [
        "failed to resolve address",
        "unsupported url protocol",
        "malformed url",
        "invalid url",
    ];
    if mistaken.iter().any(|k| m.contains(k)) {
        return false;
    }
    let said = [
        "timed out",
        "timeout",
        "connection refused",
        "connection reset",
        "connection aborted",
        "failed to connect",
        "broken pipe",
        "early eof",
        "unexpected eof",
        "could not read from remote",
        "failed to send",
        "failed to receive",
    ]
    .iter()
    .any(|k| m.contains(k));
    said || e.class() == ErrorClass::Net
}

/// One push of the local `rx-node`: where it goes, the result it carries, and
/// what a rebuilt commit is made of.
pub(super) struct PushJob<'a> {
    /// The checkout.
    pub(super) repo: &'a Repository,
    /// The remote's name.
    pub(super) remote: &'a str,
    /// The one refspec [`crate::git::refspec::rx_node_refspec`] produces.
    pub(super) spec: &'a PushRefspec,
    /// `<ID>/<NODE>` (or `<ID>`): the result this push publishes.
    pub(super) key: &'a str,
    /// The message of a commit rebuilt on a new remote tip.
    pub(super) msg: &'a str,
    /// Its author and committer.
    pub(super) sig: &'a git2::Signature<'a>,
}

/// Why a push did not land.
pub(super) enum PushError {
    /// The remote refused the update (non-fast-forward, lock); worth a rebuild and retry.
    Rejected(String),
    /// The server could not be reached or dropped the connection: the push may or
    /// may not have landed; worth a fetch and another attempt.
    Transient(String),
    /// Anything else (credentials, permissions, the push gate).
    Failed(anyhow::Error),
}

/// What the remote said of a push it did not refuse.
#[derive(Debug, PartialEq, Eq)]
enum Pushed {
    /// The remote reported the branch updated: the server's per-ref report
    /// (`ok <ref>` of `receive-pack`'s report-status) named it with no error,
    /// or the compare-and-swap on a remote on this machine moved it.
    Accepted,
    /// The push ended without an error but no report named the branch (a
    /// server without report-status): whether it landed is not known.
    Unreported,
}

/// What the server's per-ref reports (`(ref, error)`, in the order
/// libgit2's `push_update_reference` gave them) say of `branch`: refused with
/// its message, accepted, or not named at all.
fn judge_reports(reports: &[(String, Option<String>)], branch: &str) -> Result<Pushed, String> {
    // Any refusal is one (a single ref is pushed, but a server that names
    // another one refused something of this push).
    if let Some((name, Some(why))) = reports.iter().find(|(_, st)| st.is_some()) {
        return Err(format!("{name}: {why}"));
    }
    if reports.iter().any(|(name, _)| name == branch) {
        Ok(Pushed::Accepted)
    } else {
        Ok(Pushed::Unreported)
    }
}

/// One push attempt, through the push gate; a rejection is told from a failure,
/// an update the remote reported from one it did not.
fn push_once(
    repo: &Repository,
    remote: &str,
    spec: &PushRefspec,
    ours: Oid,
) -> Result<Pushed, PushError> {
    // Whatever path led here (a fresh result, a carried one, an earlier local
    // publication), only result files may leave this machine.
    let known = repo.refname_to_id(&tracking_ref(remote, spec)).ok();
    check_outgoing(repo, ours, known).map_err(PushError::Failed)?;
    check_outgoing_node(repo, ours, known).map_err(PushError::Failed)?;
    let mut r = crate::git::ops::find_remote(repo, remote).map_err(PushError::Failed)?;
    if let Some(path) = r.url().and_then(local_remote_path) {
        return push_local_cas(repo, &path, spec, ours).map(|()| Pushed::Accepted);
    }
    let reports: std::cell::RefCell<Vec<(String, Option<String>)>> =
        std::cell::RefCell::new(Vec::new());
    let url = r.url().map(redact).unwrap_or_default();
    let mut oversized = None;
    let res = {
        let mut cb = remote_callbacks_for(&r, repo.config().ok());
        cb.push_update_reference(|name, st| {
            reports
                .borrow_mut()
                .push((name.to_owned(), st.map(str::to_owned)));
            Ok(())
        });
        let mut opts = git2::PushOptions::new();
        opts.remote_callbacks(cb);
        // Connected first, to see what the remote advertises; the push then goes
        // over the same connection (docs/protocol.md#bound).
        let first = remote_callbacks_for(&r, repo.config().ok());
        match r.connect_auth(git2::Direction::Push, Some(first), None) {
            Err(e) => Err(e),
            Ok(mut conn) => {
                oversized = conn
                    .list()
                    .ok()
                    .and_then(|h| crate::git::ops::oversized_advertised(repo, h));
                match oversized {
                    Some(_) => Ok(()),
                    None => conn.remote().push(&[spec.as_str()], Some(&mut opts)),
                }
            }
        }
    };
    if let Some(why) = oversized {
        return Err(PushError::Failed(crate::exit::refused(format!(
            "push to {url} refused: {why}"
        ))));
    }
    match res {
        Err(e) => {
            let m = e.message().to_owned();
            if e.code() == ErrorCode::NotFastForward || is_race(&m) {
                Err(PushError::Rejected(m))
            } else if is_transient(&e) {
                Err(PushError::Transient(format!("push to {url}: {m}")))
            } else {
                Err(PushError::Failed(anyhow::anyhow!(
                    "push to {url} failed: {m}"
                )))
            }
        }
        // Whether a refusal is a race is decided after a fetch (see push_with_retry).
        Ok(()) => judge_reports(&reports.into_inner(), spec.branch())
            .map_err(|s| PushError::Rejected(format!("{url} rejected the update: {s}"))),
    }
}

/// The one list of rejection phrases that mean "someone else moved the
/// branch or holds its lock" (matched as whole words by [`is_race`]).
const RACE_PHRASES: [&str; 10] = [
    "fast-forward",
    "fastforward",
    "non-fastforwardable",
    "fetch first",
    "lock",
    "locked",
    "stale",
    "failed to update ref",
    "changed meanwhile",
    "already exists",
];

/// Whether a rejection message means a race: worth a rebuild and retry even
/// when a fetch does not show a new tip yet. Used both to classify a push
/// error and to decide whether to retry. Phrases match as whole words only,
/// so "lock" does not match "blocked" (a permanent rejection).
fn is_race(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    RACE_PHRASES.iter().any(|k| {
        m.match_indices(k).any(|(i, _)| {
            !word(m[..i].chars().next_back()) && !word(m[i + k.len()..].chars().next())
        })
    })
}

/// Why a fetch of the results branch failed: a transport failure worth another
/// try, or anything else.
enum FetchError {
    Transient(String),
    Failed(anyhow::Error),
}

/// One fetch of the remote results branch into its remote-tracking ref; its tip, if any.
fn fetch_once(
    repo: &Repository,
    remote: &str,
    push: &PushRefspec,
) -> Result<Option<Oid>, FetchError> {
    let mut r = crate::git::ops::find_remote(repo, remote).map_err(FetchError::Failed)?;
    if let Some(why) = r.url().and_then(crate::git::ops::missing_local_remote) {
        return Err(FetchError::Failed(anyhow::anyhow!(
            "fetch of {} failed: {why}",
            push.short()
        )));
    }
    let callbacks = remote_callbacks_for(&r, repo.config().ok());
    let tracking = tracking_ref(remote, push);
    let spec = format!("+{}:{tracking}", push.branch());
    // The tracking ref is also a plain `git fetch`'s: its chain is checked back to
    // this node's own branch, which rxnode alone writes.
    let known = repo.refname_to_id(push.branch()).ok();
    let before = crate::git::ops::packs::before_fetch(repo, &[tracking.as_str()], Some(known));
    if let Err(f) =
        crate::git::ops::fetch_bounded(&mut r, &[spec.as_str()], callbacks, None, |_| {})
    {
        let url = r.url().map(redact).unwrap_or_default();
        let m = format!(
            "fetch of {} from {url} failed: {}",
            push.short(),
            f.message(&url)
        );
        let e = f.error;
        return Err(if f.abandoned.is_none() && is_transient(&e) {
            FetchError::Transient(m)
        } else {
            FetchError::Failed(anyhow::anyhow!(m))
        });
    }
    if let Some(why) = crate::git::ops::packs::refuse_oversized(repo, &before) {
        return Err(FetchError::Failed(crate::exit::refused(format!(
            "the fetch of {} from {} brought {why}; nothing of it is read or published on \
             ({tracking} is as before): whoever pushed it must remove that commit from {} \
             (docs/protocol.md#bound)",
            push.short(),
            r.url().map(redact).unwrap_or_default(),
            push.short()
        ))));
    }
    if let Some(own) = push.branch().strip_prefix("refs/heads/rx-results/") {
        // The remote's branches, as advertised to this fetch: another node's
        // `rx-results/<name>` that only letter case tells from this node's is
        // one ref file on a case-insensitive file system (a Windows or macOS
        // main PC keeps neither).
        let heads = r.list().map_err(|e| {
            FetchError::Failed(anyhow::anyhow!(
                "cannot list the branches of {}: {}",
                r.url().map(redact).unwrap_or_default(),
                e.message()
            ))
        })?;
        if let Some(twin) =
            crate::git::ops::advertised_case_twin(heads, "refs/heads/rx-results/", own)
        {
            return Err(FetchError::Failed(crate::exit::refused(format!(
                "the remote has a branch rx-results/{twin}, which differs from this node's rx-results/{own} only \
                 in letter case: on a case-insensitive file system (a Windows or macOS main PC) they are one \
                 ref, so the main PC reads neither; not published — give this node a name that differs by \
                 more than letter case (`rxnode node set-name`), or have rx-results/{twin} removed"
            ))));
        }
    }
    match repo.refname_to_id(&tracking) {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(FetchError::Failed(e.into())),
    }
}

/// Fetch the remote results branch into its remote-tracking ref; its tip, if
/// any. A server that cannot be reached or drops the connection is tried again
/// with back-off within the push budget ([`push_budget`]).
pub(super) fn fetch_rx_node(
    repo: &Repository,
    remote: &str,
    spec: &PushRefspec,
) -> Result<Option<Oid>> {
    let mut tries = Tries::start(push_budget()?);
    loop {
        match fetch_once(repo, remote, spec) {
            Ok(tip) => return Ok(tip),
            Err(FetchError::Failed(e)) => return Err(e),
            Err(FetchError::Transient(m)) => {
                tries.wait_after(m, &format!("the fetch of {}", spec.branch()))?
            }
        }
    }
}

/// Attempts within a time budget, with back-off between them.
struct Tries {
    started: Instant,
    budget: Duration,
    /// Attempts made so far.
    made: u32,
    /// Why the last one did not succeed.
    last: String,
}

impl Tries {
    fn start(budget: Duration) -> Tries {
        Tries {
            started: Instant::now(),
            budget,
            made: 0,
            last: String::new(),
        }
    }

    /// Attempt `made` did not succeed because of `why`: wait before the next one,
    /// or end with an error naming the attempts, the time and `why` when the budget
    /// does not hold the wait, or a Ctrl-C / SIGTERM came.
    fn wait_after(&mut self, why: String, what: &str) -> Result<()> {
        use rand::Rng;
        self.made += 1;
        self.last = why;
        let wait = backoff(self.made, rand::thread_rng().gen_range(0.0..=1.0));
        let spent = self.started.elapsed();
        let stop = if crate::signals::flag().load(Ordering::SeqCst) {
            Some("stopped by a signal".to_owned())
        } else if spent + wait > self.budget {
            Some(format!(
                "the push budget of {:.0} s is spent; {PUSH_BUDGET_ENV} sets it",
                self.budget.as_secs_f64()
            ))
        } else {
            None
        };
        if let Some(stop) = stop {
            return Err(anyhow::anyhow!(
                "{what} did not succeed in {} attempt(s) over {:.1} s ({stop}); last: {}",
                self.made,
                spent.as_secs_f64(),
                self.last
            ));
        }
        tracing::info!(
            "{what}: attempt {} did not succeed ({}); next in {} ms",
            self.made,
            self.last,
            wait.as_millis()
        );
        // In slices, so that a Ctrl-C does not wait out a long back-off.
        let until = Instant::now() + wait;
        while Instant::now() < until && !crate::signals::flag().load(Ordering::SeqCst) {
            std::thread::sleep(
                until
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(50)),
            );
        }
        Ok(())
    }
}

/// Push, and after a rejection, a dropped connection or a push that did not stick:
/// wait (randomised exponential back-off), fetch, rebuild the one commit on the new
/// tip if the remote moved, and try again — within the push budget ([`push_budget`]).
/// Whether a push stuck: on the shared `rx-node` (or when the remote did not report
/// the update) a fetch after the push tells; on this node's own branch, which no
/// other node writes, the remote's report that it accepted the update does
/// (docs/publishing.md#how-the-push-works).
/// Returns the commit that landed and the number of push attempts.
pub(super) fn push_with_retry(job: &PushJob, first: Oid) -> Result<(Oid, u32)> {
    let PushJob {
        repo, remote, spec, ..
    } = *job;
    let mut tries = Tries::start(push_budget()?);
    let mut ours = first;
    loop {
        let attempt = tries.made + 1;
        let (why, retryable) = match push_once(repo, remote, spec, ours) {
            // This node's own branch, which no other node writes: the remote's
            // report that it took the update is the answer, no second connection.
            Ok(Pushed::Accepted) if !spec.is_shared() => {
                repo.reference(
                    &tracking_ref(remote, spec),
                    ours,
                    true,
                    "rxnode publish: the remote accepted the push",
                )?;
                return Ok((ours, attempt));
            }
            // The shared rx-node (another node may have moved it at the same
            // moment, on a server that does not compare and swap), or a remote that
            // did not report the update: fetch and see that it stuck.
            Ok(_) => match fetch_once(repo, remote, spec) {
                Ok(Some(t)) if t == ours || repo.graph_descendant_of(t, ours)? => {
                    return Ok((ours, attempt));
                }
                Ok(_) => (
                    format!(
                        "the remote {} moved past the pushed commit without it",
                        spec.short()
                    ),
                    true,
                ),
                Err(FetchError::Transient(m)) => (m, true),
                Err(FetchError::Failed(e)) => return Err(e),
            },
            Err(PushError::Failed(e)) => return Err(e),
            Err(PushError::Transient(m)) => (m, true),
            Err(PushError::Rejected(m)) => {
                let race = is_race(&m);
                (m, race)
            }
        };
        tries.wait_after(
            why,
            &format!(
                "the push of {RESULTS_DIR}/{}/ on {}",
                job.key,
                spec.branch()
            ),
        )?;
        match after_loss(job, ours, retryable, &tries.last)? {
            Retry::Landed => return Ok((ours, attempt)),
            Retry::Again => {}
            Retry::Rebuilt(rebuilt) => ours = rebuilt,
        }
    }
}

/// What a lost push attempt leads to.
enum Retry {
    /// The remote already holds our commit.
    Landed,
    /// The remote did not move (or could not be read) and the loss was a race or a
    /// dropped connection: push again.
    Again,
    /// Rebuilt on the new remote tip: push this commit.
    Rebuilt(Oid),
}

/// After a lost attempt (and its back-off): fetch, and rebuild our one commit on the
/// new remote tip. A rejection that is neither a race nor a dropped connection, with
/// the remote not moved, is final.
fn after_loss(job: &PushJob, ours: Oid, retryable: bool, last: &str) -> Result<Retry> {
    let PushJob {
        repo,
        remote,
        key,
        spec,
        ..
    } = *job;
    let tip = match fetch_once(repo, remote, spec) {
        Ok(t) => t,
        // Whether the remote moved is unknown, so whether even a rejection that is
        // not a race is final: the next attempt tells; the budget bounds the loop.
        Err(FetchError::Transient(_)) => return Ok(Retry::Again),
        Err(FetchError::Failed(e)) => return Err(e),
    };
    let moved = match tip {
        None => false,
        Some(t) if t == ours || repo.graph_descendant_of(t, ours)? => {
            return Ok(Retry::Landed);
        }
        Some(t) => !repo.graph_descendant_of(ours, t)?,
    };
    let Some(tip) = tip.filter(|_| moved) else {
        if retryable {
            return Ok(Retry::Again);
        }
        return Err(anyhow::anyhow!(
            "the push of {} was rejected: {last}",
            spec.branch()
        ));
    };
    let base = repo.find_commit(tip)?;
    if result_at(repo, &base, key)?.is_some() {
        return Err(refused(format!(
            "{RESULTS_DIR}/{key}/ appeared on the remote {} (commit {tip}) from another publisher; not overwritten",
            spec.short()
        )));
    }
    if let Some(other) = case_twin_at(repo, &base, key)? {
        return Err(refused(format!(
            "{other} appeared on the remote {} (commit {tip}) from another publisher and differs from \
             {RESULTS_DIR}/{key}/ only in letter case: on a case-insensitive file system (Windows, macOS) they \
             are one folder; not published",
            spec.short()
        )));
    }
    let add = local_additions(repo, ours, &base)?;
    let rebuilt = build_commit(repo, Some(&base), &add, job.msg, job.sig)?;
    set_rx_node(repo, spec, Some(ours), rebuilt)?;
    Ok(Retry::Rebuilt(rebuilt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_report_naming_the_branch_with_no_error_is_an_acceptance() {
        let b = "refs/heads/rx-results/LAB-RX1";
        let r = |v: &[(&str, Option<&str>)]| {
            let v: Vec<(String, Option<String>)> = v
                .iter()
                .map(|(n, s)| ((*n).to_owned(), s.map(str::to_owned)))
                .collect();
            judge_reports(&v, b)
        };
        assert_eq!(r(&[(b, None)]), Ok(Pushed::Accepted));
        // No report at all (a server without report-status) is not an acceptance.
        assert_eq!(r(&[]), Ok(Pushed::Unreported));
        assert_eq!(r(&[("refs/heads/rx-node", None)]), Ok(Pushed::Unreported));
        let e = r(&[(b, Some("pre-receive hook declined"))]).unwrap_err();
        assert!(
            e.contains("pre-receive hook declined") && e.contains(b),
            "{e}"
        );
        // A refusal anywhere in the report outweighs an acceptance.
        assert!(r(&[(b, None), ("refs/heads/x", Some("no"))]).is_err());
    }

    #[test]
    fn local_remotes_are_recognised() {
        let d = tempfile::TempDir::new().unwrap();
        let p = d.path().display().to_string();
        assert!(local_remote_path(&format!("file://{p}")).is_some());
        assert_eq!(local_remote_path(&p), Some(d.path().to_path_buf()));
        assert!(local_remote_path("git@example.com:lab/rx.git").is_none());
        assert!(local_remote_path("https://example.com/lab/rx.git").is_none());
        assert!(local_remote_path("ssh://git@example.com/lab/rx.git").is_none());
        assert!(local_remote_path("git://127.0.0.1:9418/rx.git").is_none());
    }

    #[test]
    fn the_back_off_doubles_up_to_its_cap_and_is_drawn_below_it() {
        assert_eq!(backoff(1, 1.0), BACKOFF_BASE);
        assert_eq!(backoff(2, 1.0), BACKOFF_BASE * 2);
        assert_eq!(backoff(4, 1.0), BACKOFF_BASE * 8);
        assert_eq!(backoff(30, 1.0), BACKOFF_CAP);
        assert_eq!(backoff(u32::MAX, 1.0), BACKOFF_CAP);
        assert_eq!(backoff(5, 0.0), Duration::ZERO);
        assert_eq!(backoff(3, 0.5), BACKOFF_BASE * 2);
        // A draw outside 0..=1 is held inside it.
        assert_eq!(backoff(3, 7.0), BACKOFF_BASE * 4);
    }

    #[test]
    fn dropped_connections_are_told_from_final_transport_errors() {
        let e = |class, code, msg: &str| git2::Error::new(code, class, msg);
        assert!(is_transient(&e(
            ErrorClass::Os,
            ErrorCode::GenericError,
            "failed to connect to 127.0.0.1: Connection refused"
        )));
        assert!(is_transient(&e(
            ErrorClass::Net,
            ErrorCode::GenericError,
            "early EOF"
        )));
        assert!(is_transient(&e(
            ErrorClass::Os,
            ErrorCode::Timeout,
            "failed to read from socket: Operation timed out"
        )));
        assert!(!is_transient(&e(
            ErrorClass::Net,
            ErrorCode::GenericError,
            "failed to resolve address for no-such-host.invalid: Name or service not known"
        )));
        assert!(!is_transient(&e(
            ErrorClass::Net,
            ErrorCode::GenericError,
            "unsupported URL protocol"
        )));
        assert!(!is_transient(&e(
            ErrorClass::Net,
            ErrorCode::Auth,
            "authentication required but no callback set"
        )));
        assert!(!is_transient(&e(
            ErrorClass::Reference,
            ErrorCode::GenericError,
            "reference 'refs/heads/rx-node' not found"
        )));
        assert!(!is_transient(&e(
            ErrorClass::Os,
            ErrorCode::GenericError,
            "could not open 'x': Permission denied"
        )));
    }

    #[test]
    fn races_are_told_from_final_rejections() {
        assert!(is_race("cannot push non-fastforwardable reference"));
        assert!(is_race("refs/heads/rx-node: failed to update ref"));
        assert!(is_race("refs/heads/rx-node: fetch first"));
        assert!(is_race("failed to lock file"));
        assert!(!is_race("refs/heads/rx-node: pre-receive hook declined"));
        assert!(!is_race("refs/heads/rx-node: protected branch"));
        // Whole words only — "lock" is not
        // "blocked", so a permanent rejection is not retried.
        assert!(!is_race("refs/heads/rx-node: push blocked by policy"));
        assert!(!is_race("Blocked: rx-node is frozen"));
        assert!(!is_race("unlockable"));
        assert!(is_race("refs/heads/rx-node.lock: file exists"));
        assert!(is_race("the index is locked"));
        assert!(is_race("! [rejected] rx-node (non-fast-forward)"));
        assert!(is_race("refs/heads/rx-node: stale info"));
        assert!(is_race("failed to update ref 'refs/heads/rx-node'"));
    }
}
