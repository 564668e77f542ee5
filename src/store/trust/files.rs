//! The file-level checks of the trust root: no Git needed, nothing changed.
use super::Finding;
use crate::store::paths::Paths;
use std::path::{Path, PathBuf};

const FIX_LINK: &str =
    "replace it by a regular file of your own (restore your copy; never a link into the checkout or elsewhere)";

/// What kind of node-local path is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    /// The policy or the allowed signers: a file, and on unix not writable
    /// by group/others.
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
    if let Some(f) = kind_finding(path, &md, kind, what) {
        out.push(f);
        return;
    }
    owner_findings(path, &md, kind, what, out);
}

/// A link, or not the kind of file `kind` says.
fn kind_finding(path: &Path, md: &std::fs::Metadata, kind: Kind, what: &str) -> Option<Finding> {
    let ft = md.file_type();
    if crate::store::fsutil::is_link(md) {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".to_owned());
        let dangling = if path.exists() { "" } else { " (dangling)" };
        return Some(Finding::new(
            format!(
                "{what} {} is a symlink to {target}{dangling}",
                path.display()
            ),
            FIX_LINK,
        ));
    }
    match kind {
        Kind::Dir if !ft.is_dir() => Some(Finding::new(
            format!("{what} {} is not a directory", path.display()),
            "move it aside; rxnode creates the folder itself",
        )),
        Kind::File | Kind::Policy if !ft.is_file() => Some(Finding::new(
            format!("{what} {} is not a regular file", path.display()),
            "move it aside and restore the regular file",
        )),
        _ => None,
    }
}

/// The fix for a file or folder every user may write.
#[cfg_attr(not(unix), allow(dead_code))]
const WORLD_WRITABLE_FIX: &str = "`chmod o-w` it after checking its content";

/// On unix: another owner, more than one hard link, a policy writable by
/// group/others, anything writable by every user. Elsewhere these are not checked (there is no portable uid or
/// mode); the link and kind checks still apply.
fn owner_findings(
    path: &Path,
    md: &std::fs::Metadata,
    kind: Kind,
    what: &str,
    out: &mut Vec<Finding>,
) {
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
                    "{what} {} is writable by group or others (mode {:o})",
                    path.display(),
                    md.mode() & 0o777
                ),
                "`chmod go-w` it",
            ));
        } else if md.mode() & 0o002 != 0 {
            // Any user of the machine could change it: the state, the ledger,
            // an outbox, `.local/` itself (group-writable stays allowed: a
            // umask of 002 with a group of one's own makes 664 and 775).
            out.push(Finding::new(
                format!(
                    "{what} {} is writable by every user of this machine (mode {:o})",
                    path.display(),
                    md.mode() & 0o777
                ),
                WORLD_WRITABLE_FIX,
            ));
        }
    }
    #[cfg(windows)]
    windows_owner_findings(path, kind, what, out);
    #[cfg(not(unix))]
    let _ = md;
    #[cfg(not(any(unix, windows)))]
    let _ = (path, kind, what, out);
}

/// Windows: another owner, more than one hard link, or a file another user may
/// write (its DACL; on unix only the policy's mode is looked at, as the files
/// rxnode creates there are 600/644 under a folder of the operator's).
#[cfg(windows)]
fn windows_owner_findings(path: &Path, kind: Kind, what: &str, out: &mut Vec<Finding>) {
    use crate::store::winsec;
    const FIX_ACL: &str = "let only your user write it: `icacls .local /inheritance:r /grant:r \"%USERNAME%:(OI)(CI)F\" /T` in the checkout (docs/safety.md#windows)";
    match winsec::access(path) {
        Err(e) => out.push(Finding::new(
            format!(
                "cannot read the owner and DACL of {what} {}: {e}",
                path.display()
            ),
            "check its Security tab (Properties → Security)",
        )),
        Ok(a) => {
            if let Some(owner) = a.foreign_owner {
                out.push(Finding::new(
                    format!("{what} {} is owned by {owner}, not by this user", path.display()),
                    "only the operator's own files are trusted: take ownership (Properties → Security → Advanced → Owner) or restore your copy",
                ));
            }
            if kind != Kind::Dir && !a.other_writers.is_empty() {
                out.push(Finding::new(
                    format!(
                        "{what} {} is writable by other users ({})",
                        path.display(),
                        a.other_writers.join(", ")
                    ),
                    FIX_ACL,
                ));
            }
        }
    }
    if kind != Kind::Dir {
        if let Ok(n) = winsec::link_count(path) {
            if n > 1 {
                out.push(Finding::new(
                    format!(
                        "{what} {} has {n} hard links: another name can change it",
                        path.display()
                    ),
                    "replace it by a copy of its own (`copy F F.new` then `move /Y F.new F`) after checking its content",
                ));
            }
        }
    }
}

/// The file-level checks: no Git needed, nothing changed.
pub(super) fn file_findings(paths: &Paths) -> Vec<Finding> {
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
    check_path(
        &paths.allowed_signers(),
        Kind::Policy,
        "allowed signers file",
        &mut out,
    );
    let before = out.len();
    check_path(&paths.state(), Kind::File, "state", &mut out);
    for f in out[before..]
        .iter_mut()
        .filter(|f| f.fix != WORLD_WRITABLE_FIX)
    {
        f.fix = "move the link (or odd file) aside — it is not your state — then `rxnode state rebuild` recovers the state from the ledger and the outboxes".to_owned();
    }
    check_path(&paths.ledger(), Kind::File, "ledger", &mut out);
    check_path(&paths.stop(), Kind::File, "hold file", &mut out);
    check_path(
        &crate::store::health::path(paths),
        Kind::File,
        "radio health file",
        &mut out,
    );
    check_path(
        &crate::store::calibration::path(paths),
        Kind::File,
        "frequency calibration file",
        &mut out,
    );
    check_path(&paths.dry_run(), Kind::Dir, "dry-run folder", &mut out);
    iq_findings(paths, &mut out);
    // No link anywhere under .local/: rxnode writes temp files, locks and
    // recordings there, and a planted link would redirect those writes.
    if out.is_empty() {
        out.extend(first_link_below(&paths.local));
    }
    outbox_findings(paths, &mut out);
    out
}

/// The allowed signers file's own checks (a link, not a regular file, another
/// owner, more than one hard link, writable by group/others); `None`: trusted
/// or absent. Git's view of it is part of [`super::verify`].
pub(crate) fn signers_file_finding(paths: &Paths) -> Option<Finding> {
    let mut out = Vec::new();
    check_path(&paths.repo.join(".local"), Kind::Dir, ".local", &mut out);
    check_path(
        &paths.allowed_signers(),
        Kind::Policy,
        "allowed signers file",
        &mut out,
    );
    out.into_iter().next()
}

/// `rx_iq` and what lies in it.
fn iq_findings(paths: &Paths, out: &mut Vec<Finding>) {
    let iq = paths.local.join("rx_iq");
    check_path(&iq, Kind::Dir, "IQ folder", out);
    for e in list(&iq) {
        // A task's folder, or an operator's own recording (`capture --record
        // .local/rx_iq/x.cf32`, as the operator guide advises): a regular file
        // of ours with one link is as trusted as the folders.
        if std::fs::symlink_metadata(&e).is_ok_and(|m| m.is_file()) {
            check_path(&e, Kind::File, "IQ recording", out);
        } else {
            check_path(&e, Kind::Dir, "IQ folder", out);
        }
    }
}

/// The first symlink anywhere below `local` (at most 50 000 entries looked at).
fn first_link_below(local: &Path) -> Option<Finding> {
    let mut stack = vec![local.to_path_buf()];
    let mut budget = 50_000usize;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if budget == 0 {
                return None;
            }
            budget -= 1;
            match e.file_type() {
                Ok(t) if t.is_symlink() => {
                    let p = e.path();
                    let target = std::fs::read_link(&p)
                        .map(|t| t.display().to_string())
                        .unwrap_or_else(|_| "?".to_owned());
                    return Some(Finding::new(
                        format!("{} is a symlink to {target}", p.display()),
                        "remove the link: nothing under .local/ may point elsewhere",
                    ));
                }
                Ok(t) if t.is_dir() => stack.push(e.path()),
                _ => {}
            }
        }
    }
    None
}

/// The outbox folder, each outbox (half-written `.tmp-` ones aside) and each
/// file in it.
fn outbox_findings(paths: &Paths, out: &mut Vec<Finding>) {
    let root = paths.outbox_root();
    check_path(&root, Kind::Dir, "outbox folder", out);
    for dir in list(&root) {
        if dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"))
        {
            continue;
        }
        let before = out.len();
        check_path(&dir, Kind::Dir, "outbox", out);
        if out.len() > before {
            continue;
        }
        for f in list(&dir) {
            check_path(&f, Kind::File, "outbox file", out);
        }
    }
}

/// An explicit policy path inside the work tree but outside `.local/` is a
/// file Git can write.
fn policy_outside_local(paths: &Paths, policy: &Path) -> Option<Finding> {
    if !paths.policy_is_explicit() {
        return None;
    }
    let parent = policy.parent()?.canonicalize().ok()?;
    let repo = paths.repo.canonicalize().ok()?;
    // The checkout's own `.local/` (a dry run's area is below it).
    let local = paths
        .repo
        .join(".local")
        .canonicalize()
        .unwrap_or_else(|_| repo.join(".local"));
    (parent.starts_with(&repo) && !parent.starts_with(&local)).then(|| {
        Finding::new(
            format!(
                "policy {} is inside the checkout {} but not under .local/: Git can write it",
                policy.display(),
                repo.display()
            ),
            if cfg!(windows) {
                "keep the policy outside the checkout (e.g. %APPDATA%\\rxnode\\policy.json) or in .local\\"
            } else {
                "keep the policy outside the checkout (e.g. ~/.config/rxnode/policy.json) or in .local/"
            },
        )
    })
}

/// The entries of `dir`, sorted; none when it is not a real directory.
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

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
        std::fs::remove_dir(paths.ledger()).unwrap();
        // The frequency calibration tunes the radio (`--apply-cal`): a trust-root file too.
        let cal = crate::store::calibration::path(&paths);
        std::fs::hard_link(d.path().join("x"), &cal).unwrap();
        let f = file_findings(&paths);
        assert!(
            f.iter()
                .any(|f| f.detail.contains("2 hard links") && f.detail.contains("calibration")),
            "{f:?}"
        );
    }
}
