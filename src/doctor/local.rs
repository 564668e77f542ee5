//! doctor's checks of the node's own files under `.local/`: the policy, the
//! node name, the state, the ledger, whether this user can write them, and the
//! watcher lock. Read-only: a corrupt state is reported, never moved aside.
use super::{check, Check, CheckName, Verdict};
use crate::store::lock;
use crate::store::paths::Paths;
use crate::store::policy::{self, Source};

/// The `policy` check: the node policy file parses; its limits in one line.
pub(super) fn policy_check(paths: &Paths) -> Check {
    const FIX_MISSING: &str =
        "create .local/rxnode-policy.json to set this node's limits (docs/operator.md)";
    match policy::load(paths) {
        // The error's own fix when it names one (the same wording the commands
        // print), else the repair of the file.
        Err(e) => {
            let report = crate::exit::error_json(&e);
            let fix = report.error.fix.unwrap_or_else(|| {
                rxnode_interlock::Policy::repair_fix(&paths.policy().display().to_string())
            });
            check(CheckName::Policy, Verdict::Fail, report.error.message, &fix)
        }
        Ok((pol, source)) => {
            let rx = &pol.rx;
            let opt = |v: Option<f64>, unit: &str| {
                v.map(|x| format!("{x} {unit}"))
                    .unwrap_or_else(|| "device max".to_owned())
            };
            let rx_s = format!(
                "RX ≤ {} s, rate {}, gain {}, IQ ≤ {} bytes",
                rx.max_duration_s,
                rx.max_sample_rate_hz
                    .map_or_else(|| "device max".to_owned(), rxnode_interlock::fmt_rate),
                opt(rx.max_gain_db, "dB"),
                rx.max_iq_bytes
            );
            let tx_s = match &pol.tx {
                Some(tx) if !tx.allowed_ranges_hz.is_empty() => format!(
                    "TX allowed in {} (gain ≤ {} dB, ≤ {} s)",
                    tx.allowed_ranges_hz
                        .iter()
                        .map(|[lo, hi]| format!("{lo}–{hi} Hz"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    tx.max_gain_db,
                    tx.max_duration_s
                ),
                _ => "TX refused (no range allowed)".to_owned(),
            };
            match source {
                Source::File => check(
                    CheckName::Policy,
                    Verdict::Pass,
                    format!("{}: {rx_s}; {tx_s}", paths.policy().display()),
                    "",
                ),
                Source::Defaults => check(
                    CheckName::Policy,
                    Verdict::Skip,
                    format!(
                        "no {}: defaults apply: {rx_s}; {tx_s}",
                        paths.policy().display()
                    ),
                    FIX_MISSING,
                ),
            }
        }
    }
}

/// The `allowed signers` check: `.local/allowed_signers` is the operator's own
/// and every line reads; how many signers, and whether the policy needs them.
pub(super) fn signers_check(paths: &Paths) -> Check {
    const NAME: CheckName = CheckName::AllowedSigners;
    let rule = policy::load(paths)
        .map(|(p, _)| p.require_signature())
        .unwrap_or_default();
    let file = crate::signers::path(paths);
    match crate::signers::load(paths) {
        Err(e) => check(
            NAME,
            Verdict::Fail,
            format!("{e:#}"),
            "repair it, or rebuild it with `rxnode node signers add` (docs/operator.md#signing-tasks)",
        ),
        Ok(list) if list.is_empty() => check(
            NAME,
            if rule == rxnode_interlock::RequireSignature::None {
                Verdict::Skip
            } else {
                Verdict::Warn
            },
            format!(
                "no signer in {} (tasks.require_signature = {}): every signature shows as unknown key",
                file.display(),
                rule.as_str()
            ),
            "add the main PC's key: `rxnode node signers add alice@lab.example alice.pub` (docs/operator.md#signing-tasks)",
        ),
        Ok(list) => check(
            NAME,
            Verdict::Pass,
            format!(
                "{}: {} signer(s) ({}); tasks.require_signature = {}",
                file.display(),
                list.len(),
                list.iter()
                    .map(|s| s.principals.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                rule.as_str()
            ),
            "",
        ),
    }
}

/// Parse the state file without changing anything (unlike `state::load`,
/// which moves a corrupt file aside).
pub(super) fn state_file(paths: &Paths) -> Check {
    let p = paths.state();
    match crate::store::fsutil::read(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match crate::store::state::corrupt_aside(paths) {
            Some(aside) => check(
                CheckName::State,
                Verdict::Fail,
                format!(
                    "no {}, but a corrupt state is kept aside as {}",
                    p.display(),
                    aside.display()
                ),
                crate::store::state::REBUILD_HINT.trim_start_matches("fix: "),
            ),
            None => match crate::store::evidence::history(paths) {
                Ok(ev) if !ev.is_empty() => check(
                    CheckName::State,
                    Verdict::Fail,
                    format!(
                        "no {}, but this node has history ({}): every command refuses",
                        p.display(),
                        ev.join(", ")
                    ),
                    crate::store::state::REBUILD_HINT.trim_start_matches("fix: "),
                ),
                _ => check(
                    CheckName::State,
                    Verdict::Pass,
                    format!("no {} yet (nothing has run here)", p.display()),
                    "",
                ),
            },
        },
        Err(e) => check(
            CheckName::State,
            Verdict::Fail,
            format!("cannot read {}: {e}", p.display()),
            "check the file's owner and permissions",
        ),
        Ok(bytes) => match serde_json::from_slice::<crate::store::state::State>(&bytes) {
            Ok(s) => check(
                CheckName::State,
                Verdict::Pass,
                format!(
                    "{} readable: {} task(s) known, {} approved",
                    p.display(),
                    s.tasks.len(),
                    s.approvals.len()
                ),
                "",
            ),
            Err(e) => check(
                CheckName::State,
                Verdict::Fail,
                format!("{} is corrupt: {e}", p.display()),
                "the next command moves it aside and every command refuses until you run `rxnode state rebuild` (it recovers every decision from the ledger and the outboxes)",
            ),
        },
    }
}

/// The `ledger` check: every line is a JSON entry.
pub(super) fn ledger_file(paths: &Paths) -> Check {
    let p = paths.ledger();
    let unreadable = |e: std::io::Error| {
        check(
            CheckName::Ledger,
            Verdict::Fail,
            format!("cannot read {}: {e}", p.display()),
            "check the file's owner and permissions",
        )
    };
    let file = match crate::store::fsutil::open(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return check(
                CheckName::Ledger,
                Verdict::Pass,
                format!("no {} yet (nothing has run here)", p.display()),
                "",
            )
        }
        Err(e) => return unreadable(e),
        Ok(f) => f,
    };
    // Read as a stream: memory does not grow with the ledger.
    let mut r = crate::store::ledger::LineReader::new(file, 0, 0, None);
    let mut entries = 0usize;
    let mut bad = Vec::new();
    loop {
        let l = match r.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => return unreadable(e),
        };
        let Some(bytes) = l.bytes else {
            bad.push(format!("{} ({} bytes)", l.n, l.len));
            continue;
        };
        let line = String::from_utf8_lossy(bytes);
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&line) {
            Ok(v) if v.is_object() => entries += 1,
            _ => bad.push(l.n.to_string()),
        }
    }
    if bad.is_empty() {
        check(
            CheckName::Ledger,
            Verdict::Pass,
            format!("{} readable: {entries} entries", p.display()),
            "",
        )
    } else {
        check(
            CheckName::Ledger,
            Verdict::Fail,
            format!(
                "{}: line(s) {} are not JSON entries ({entries} good)",
                p.display(),
                bad.join(", ")
            ),
            "the ledger is an append-only audit trail: inspect those lines (a crash can tear the last one) and keep a copy before repairing",
        )
    }
}

/// The node's name (`.local/rxnode-node.json`): without one every
/// publish is refused, so a missing name is a warning before the first run.
pub(super) fn node_name(paths: &Paths) -> Check {
    const FIX: &str = "rxnode node set-name NAME (1 to 32 of A-Z a-z 0-9 _ -, e.g. LAB-RX2)";
    match crate::store::node::load_file(paths) {
        Ok(Some(f)) => check(
            CheckName::NodeName,
            Verdict::Pass,
            format!(
                "{}; publishes to {} ({} layout; `rxnode node set-publish-ref shared|own` changes it)",
                f.name,
                f.publish_ref.branch(&f.name),
                f.publish_ref.as_str()
            ),
            "",
        ),
        Ok(None) => match crate::store::paths::worktree_of_node(&paths.repo) {
            // A linked worktree of the node: the name is there, and so is rxnode's place.
            Some(main) => check(
                CheckName::NodeName,
                Verdict::Fail,
                format!(
                    "no name set ({} is missing): this checkout is a linked Git worktree of the \
                     RX node {}, whose name, policy and state are in its own .local/",
                    paths.node_name().display(),
                    main.display()
                ),
                &format!(
                    "run rxnode in {m} (`rxnode --repo {m} …`); a second node needs a clone of its own",
                    m = main.display()
                ),
            ),
            None => check(
                CheckName::NodeName,
                Verdict::Warn,
                format!(
                    "no name set ({} is missing): a publish would be refused",
                    paths.node_name().display()
                ),
                FIX,
            ),
        },
        Err(e) => check(CheckName::NodeName, Verdict::Fail, format!("{e:#}"), FIX),
    }
}

/// The `watcher` check: who holds the watch lock, and whether `.local/STOP` holds runs.
pub(super) fn watcher(paths: &Paths) -> Check {
    let hold = if paths.is_held() {
        format!("; held by {}", paths.stop().display())
    } else {
        String::new()
    };
    match lock::holder(paths) {
        Ok(None) => check(
            CheckName::Watcher,
            Verdict::Pass,
            format!("no other watcher running{hold}"),
            "",
        ),
        Ok(Some(h)) if lock::holder_alive(&h) => check(
            CheckName::Watcher,
            Verdict::Pass,
            format!("a watcher is running: {h} (another `rxnode watch` here is refused){hold}"),
            "",
        ),
        Ok(Some(h)) => check(
            CheckName::Watcher,
            Verdict::Pass,
            format!("stale lock from {h}: the next `rxnode watch` takes it over{hold}"),
            "",
        ),
        Err(e) => check(
            CheckName::Watcher,
            Verdict::Fail,
            format!("{e:#}"),
            "make sure no rxnode is running, then remove .local/rxnode.lock",
        ),
    }
}

/// The `writable` check: this user can write every place the node writes — the
/// checkout's `.local/` (state, ledger, outboxes, the watcher's lock), the state
/// and ledger files themselves, and the node's folder in the Git directory
/// (`<git dir>/rxnode/`: the key, the ledger's mirror, the newest-version
/// records). A place that does not exist yet is judged by the folder that would
/// hold it. Asked of the operating system, so nothing is written; a read-only
/// file system counts as not writable.
pub(super) fn writable(paths: &Paths) -> Check {
    let mut places = vec![paths.local.clone(), paths.state(), paths.ledger()];
    if let Ok(Some(git)) = crate::store::paths::git_dir(&paths.repo) {
        places.push(git.join("rxnode"));
    }
    let mut denied = Vec::new();
    let mut asked = Vec::new();
    for place in &places {
        // The place itself, or the nearest folder above it that exists.
        let Some(existing) = place.ancestors().find(|p| p.exists()) else {
            continue;
        };
        if asked.contains(&existing.to_path_buf()) {
            continue;
        }
        asked.push(existing.to_path_buf());
        if let Err(e) = can_write(existing) {
            denied.push(format!("{}: {e}", existing.display()));
        }
    }
    if denied.is_empty() {
        return check(
            CheckName::Writable,
            Verdict::Pass,
            format!(
                "this user can write {}{}",
                asked
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                WRITABLE_HOW
            ),
            "",
        );
    }
    check(
        CheckName::Writable,
        Verdict::Fail,
        format!(
            "this user cannot write {}: every command that records something (watch, run, publish, node set-name) fails",
            denied.join("; ")
        ),
        "run rxnode as the user who owns the checkout, or give this user write access to those places (`ls -ld` shows their owner); a read-only file system cannot hold a node",
    )
}

#[cfg(unix)]
const WRITABLE_HOW: &str = "";
#[cfg(not(unix))]
const WRITABLE_HOW: &str = " (Windows: only the files' read-only attribute is checked)";

/// Whether this process may write `p` (a file, or create files in a folder),
/// as the operating system judges it for the effective user, without writing.
#[cfg(unix)]
fn can_write(p: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path that lives across the call;
    // faccessat reads it and nothing else.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Windows: a file's read-only attribute (a folder's means nothing for the
/// files in it, and ACLs are not read).
#[cfg(not(unix))]
fn can_write(p: &std::path::Path) -> std::io::Result<()> {
    let m = std::fs::metadata(p)?;
    if m.is_file() && m.permissions().readonly() {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "read-only attribute set",
        ))
    } else {
        Ok(())
    }
}
