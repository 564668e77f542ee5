//! The node key: 32 random bytes at `<git dir>/rxnode/key`, made at first use.
//!
//! Every approval and authorization record this node writes carries an
//! HMAC-SHA256 under this key (`rxnode_interlock::record_mac`); a record that
//! does not verify under it is never an approval (`docs/safety.md#node-signed-approvals`).
//! The key lives in the Git directory of the checkout (the real one: a `.git`
//! file of a linked work tree is followed), which no `git pull`, `checkout` or
//! tracked path can write, and never under `.local/`, so a `.local/` planted
//! by the branch or copied from another checkout carries no valid MAC.
//!
//! It is created with `create_new` (0600 on unix) under a temporary name and
//! linked into place, so two processes racing to create it agree on one key
//! and a reader never sees a half-written one. A key that is a symlink, not a
//! regular file, not 32 bytes, or (unix) owned by another user or readable or
//! writable by group/others is refused, never replaced.
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use rxnode_interlock::NODE_KEY_LEN;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The node's secret (never printed).
pub(crate) struct NodeKey([u8; NODE_KEY_LEN]);

impl NodeKey {
    /// The key bytes, for the interlock's MAC functions.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for NodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeKey(..)")
    }
}

/// `<git dir>/rxnode/key` of the checkout, or an error when it is not a
/// non-bare Git checkout (no place outside the work tree to keep a key).
pub(crate) fn key_path(paths: &Paths) -> Result<PathBuf> {
    let dir = crate::store::paths::git_dir(&paths.repo).with_context(|| {
        format!(
            "{} is not a Git checkout: the node key lives in its Git directory",
            paths.repo.display()
        )
    })?;
    let Some(dir) = dir else {
        anyhow::bail!(
            "{} is a bare repository: the node key needs a checkout",
            paths.repo.display()
        );
    };
    Ok(dir.join("rxnode").join("key"))
}

/// The node key, when one exists (`None`: nothing this node could have signed).
pub(crate) fn load(paths: &Paths) -> Result<Option<NodeKey>> {
    let p = key_path(paths)?;
    read_key(&p)
}

/// The node key, created at first use — but never in place of a lost one
/// without being asked ([`load_or_create_new`]).
pub(crate) fn load_or_create(paths: &Paths) -> Result<NodeKey> {
    load_or_create_new(paths, false)
}

/// The node key, created when there is none. When this node signed records
/// before ([`signed_before`]: its key is lost) a new key is made only with
/// `replace_lost` (`node set-name --new-key`), said with what it means;
/// without it, a refusal naming the key file and the fix
/// (docs/safety.md#a-lost-node-key).
pub(crate) fn load_or_create_new(paths: &Paths, replace_lost: bool) -> Result<NodeKey> {
    let p = key_path(paths)?;
    if let Some(k) = read_key(&p)? {
        return Ok(k);
    }
    if let Some(why) = signed_before(&p) {
        if !replace_lost {
            return Err(crate::exit::refused(format!(
                "node key {} is missing, but this node signed records with a key before ({why}): \
                 a new key would leave every one of them refused (the approvals in the state and \
                 the ledger, the node file, radio health and calibration); nothing was written — \
                 fix: put the key file back from a backup of this checkout's Git directory; or, to \
                 start again with a new key, `rxnode node set-name NAME --new-key`, then \
                 `rxnode state rebuild` and approve the tasks again (docs/safety.md#a-lost-node-key)",
                p.display()
            )));
        }
        tracing::warn!(
            "node key {} was missing ({why}); a new key is made: what was signed with the lost \
             key is refused from now on — run `rxnode state rebuild`, approve the tasks again and \
             self-test and calibrate the radios again (docs/safety.md#a-lost-node-key)",
            p.display()
        );
    }
    create(&p)?;
    read_key(&p)?.with_context(|| format!("node key {} vanished after creation", p.display()))
}

/// An approval of `task` signed with the node key (created at first use).
/// In `watch --dry-run`'s area outside a checkout there is no Git directory
/// for a key: the approval stays unsigned (dry-run approvals never run).
pub(crate) fn sign_approval(
    paths: &Paths,
    task: &rxnode_interlock::ValidTask,
    commit: &str,
    at: &str,
) -> Result<rxnode_interlock::Approval> {
    match load_or_create(paths) {
        Ok(k) => Ok(rxnode_interlock::Approval::signed(
            task,
            commit,
            at,
            k.bytes(),
        )),
        Err(_) if !paths.is_checkout_local() => {
            Ok(rxnode_interlock::Approval::new(task, commit, at))
        }
        Err(e) => Err(e),
    }
}

/// The operator-facing reason an approval does not count, with the fix.
pub(crate) fn unsigned_message(id: &str, reason: &str) -> String {
    format!(
        "approval for {id} is not signed by this node ({reason}) — \
         it is not an approval; fix: re-approve with `rxnode review {id}` after `rxnode state rebuild` \
         (docs/safety.md#node-signed-approvals)"
    )
}

/// Whether the approval verifies under `key`; the reason when not.
pub(crate) fn check_approval(
    a: &rxnode_interlock::Approval,
    key: Option<&NodeKey>,
) -> std::result::Result<(), String> {
    match key {
        None => Err(
            "this node has no key yet, so it made no approval: a copied .local/ or a planted record"
                .to_owned(),
        ),
        Some(k) => a.verify(k.bytes()).map_err(|e| match e {
            rxnode_interlock::Error::UnsignedRecord { reason, .. } => reason,
            other => other.to_string(),
        }),
    }
}

/// What shows this node signed with a key before, when its key file `p` is
/// missing — only what lies beside the key, in the Git directory, out of the
/// branch's reach (a `.local/` planted or copied from elsewhere proves
/// nothing): a record of the newest sealed file (`latest-*`), the ledger
/// checkpoint, or a line of the ledger's mirror (`ledger.jsonl` beside the
/// key) that carries a MAC.
/// `None`: a node that never had a key here.
fn signed_before(p: &Path) -> Option<String> {
    let dir = p.parent().unwrap_or(p);
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("latest-") || n == "ledger-checkpoint.json")
            .collect();
        names.sort();
        if let Some(name) = names.first() {
            return Some(format!("{} exists", dir.join(name).display()));
        }
    }
    let mirror = dir.join("ledger.jsonl");
    holds_a_mac(&mirror).then(|| format!("{} holds a signed line", mirror.display()))
}

/// Whether the ledger file `p` holds a line with a record MAC (`"mac":"`, as
/// rxnode writes it), read in blocks; an unreadable file holds none.
fn holds_a_mac(p: &Path) -> bool {
    const NEEDLE: &[u8] = b"\"mac\":\"";
    let Ok(mut f) = crate::store::fsutil::open(p) else {
        return false;
    };
    let finder = memchr::memmem::Finder::new(NEEDLE);
    let mut block = vec![0u8; 64 << 10];
    let mut kept = 0usize;
    loop {
        let n = match f.read(&mut block[kept..]) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) | Ok(0) => return false,
            Ok(n) => n,
        };
        let end = kept + n;
        if finder.find(&block[..end]).is_some() {
            return true;
        }
        // The needle may straddle two blocks: keep its length less one.
        kept = end.min(NEEDLE.len() - 1);
        block.copy_within(end - kept..end, 0);
    }
}

/// Read and check the key file; `None` when it does not exist.
fn read_key(p: &Path) -> Result<Option<NodeKey>> {
    let md = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot inspect node key {}", p.display()))
        }
    };
    check_dir(p.parent().unwrap_or(p))?;
    if crate::store::fsutil::is_link(&md) || !md.file_type().is_file() {
        return Err(refuse_key(p, "is not a regular file (a symlink?)"));
    }
    check_owner_mode(p, &md)?;
    let mut f =
        open_nofollow(p).with_context(|| format!("cannot open node key {}", p.display()))?;
    let mut buf = Vec::with_capacity(NODE_KEY_LEN + 1);
    Read::by_ref(&mut f)
        .take(NODE_KEY_LEN as u64 + 1)
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read node key {}", p.display()))?;
    let key: [u8; NODE_KEY_LEN] = buf.as_slice().try_into().map_err(|_| {
        refuse_key(
            p,
            &format!("holds {} byte(s), not {NODE_KEY_LEN}", buf.len()),
        )
    })?;
    Ok(Some(NodeKey(key)))
}

fn refuse_key(p: &Path, why: &str) -> anyhow::Error {
    crate::exit::refused(format!(
        "node key {} {why}: no approval can be checked — fix: move it aside and re-approve \
         every approved task with `rxnode review` (docs/safety.md#node-signed-approvals)",
        p.display()
    ))
}

/// The folder holding the key must be a real folder (not a link) and, on unix,
/// not writable by every user: a folder any user may write lets them take the
/// key away or swap the records beside it (group-writable stays allowed, as
/// under `.local/`: a umask of 002 with a group of one's own makes 775).
fn check_dir(d: &Path) -> Result<()> {
    match std::fs::symlink_metadata(d) {
        #[cfg(unix)]
        Ok(m)
            if m.file_type().is_dir()
                && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o002 != 0 =>
        {
            Err(crate::exit::refused(format!(
                "{} is writable by every user of this machine (mode {:o}): another user could take \
                 the node key away or replace the records beside it — fix: `chmod o-w {}` after \
                 checking what is in it",
                d.display(),
                std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
                d.display()
            )))
        }
        Ok(m) if m.file_type().is_dir() && !crate::store::fsutil::is_link(&m) => Ok(()),
        Ok(_) => Err(crate::exit::refused(format!(
            "{} is not a directory (a symlink?): the node key cannot be trusted — fix: move it aside",
            d.display()
        ))),
        Err(e) => Err(e).with_context(|| format!("cannot inspect {}", d.display())),
    }
}

#[cfg(unix)]
fn check_owner_mode(p: &Path, md: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if md.uid() != me {
        return Err(refuse_key(
            p,
            &format!("is owned by uid {}, not by this user (uid {me})", md.uid()),
        ));
    }
    if md.mode() & 0o077 != 0 {
        return Err(refuse_key(
            p,
            &format!(
                "is readable or writable by group or others (mode {:o}; it must be 600)",
                md.mode() & 0o777
            ),
        ));
    }
    Ok(())
}

/// Windows: the owner is this user and no other user may read or write the
/// key (its DACL), as mode 600 on unix.
#[cfg(windows)]
fn check_owner_mode(p: &Path, _md: &std::fs::Metadata) -> Result<()> {
    let a = crate::store::winsec::access(p).map_err(|e| {
        refuse_key(
            p,
            &format!("has an owner or DACL that cannot be read ({e})"),
        )
    })?;
    if let Some(owner) = a.foreign_owner {
        return Err(refuse_key(
            p,
            &format!("is owned by {owner}, not by this user"),
        ));
    }
    let mut others = a.other_writers;
    others.extend(a.other_readers);
    others.sort();
    others.dedup();
    if !others.is_empty() {
        return Err(refuse_key(
            p,
            &format!(
                "is readable or writable by other users ({}; only this user may have access)",
                others.join(", ")
            ),
        ));
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn check_owner_mode(_p: &Path, _md: &std::fs::Metadata) -> Result<()> {
    // No portable owner or mode: the file lives in the Git directory, which
    // no tracked path reaches; the link and kind checks still apply.
    Ok(())
}

/// The key file opened for reading: a regular file, a link at its name refused
/// (not followed), a FIFO or device refused without blocking on it.
fn open_nofollow(p: &Path) -> std::io::Result<std::fs::File> {
    rxnode_dsp::open_regular_nofollow(p)
}

/// Create the key: random bytes into a new temporary file (0600), then a
/// hard link to the final name, which fails if another process made it first
/// (its key is then the key). Where the file system has no hard links, the
/// final name is created with `create_new` directly.
fn create(p: &Path) -> Result<()> {
    let dir = p.parent().unwrap_or(p);
    create_private_dir(dir)?;
    check_dir(dir)?;
    let mut key = [0u8; NODE_KEY_LEN];
    rand::RngCore::try_fill_bytes(&mut rand::rngs::OsRng, &mut key)
        .context("cannot read random bytes for the node key")?;
    let tmp = dir.join(format!(".key.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_new_private(&tmp, &key)?;
    let linked = std::fs::hard_link(&tmp, p);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => match write_new_private(p, &key) {
            Ok(()) => {}
            Err(e)
                if e.chain().any(|c| {
                    c.downcast_ref::<std::io::Error>()
                        .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
                }) => {}
            Err(e) => return Err(e),
        },
    }
    crate::store::fsutil::sync_dir(dir);
    Ok(())
}

fn create_private_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot create {}", dir.display())),
        }
    }
    // Windows: a folder only this user may open (a protected owner-only DACL,
    // inherited by the key), as mode 700.
    #[cfg(windows)]
    match std::fs::create_dir(dir) {
        Ok(()) => crate::store::winsec::set_owner_only(dir, true)
            .with_context(|| format!("cannot make {} private to this user", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot create {}", dir.display())),
    }
    #[cfg(not(any(unix, windows)))]
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

fn write_new_private(p: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = rxnode_dsp::open_regular_write(p, rxnode_dsp::WriteMode::CreateNew, true)
        .with_context(|| format!("cannot create node key {}", p.display()))?;
    // Windows: owner-only before a byte is written (mode 600 on unix).
    // A file that could not be made private is not left behind (it was made
    // here, `CreateNew`).
    #[cfg(windows)]
    if let Err(e) = crate::store::winsec::set_owner_only_checked(p) {
        drop(f);
        let _ = std::fs::remove_file(p);
        return Err(anyhow::Error::new(e).context(format!(
            "cannot make node key {} private to this user",
            p.display()
        )));
    }
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write node key {}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout() -> (tempfile::TempDir, Paths) {
        let d = tempfile::tempdir().unwrap();
        git2::Repository::init(d.path()).unwrap();
        let paths = Paths::new(d.path());
        (d, paths)
    }

    #[test]
    fn the_key_is_made_once_in_the_git_directory_and_kept() {
        let (d, paths) = checkout();
        assert!(load(&paths).unwrap().is_none());
        let k1 = load_or_create(&paths).unwrap();
        let p = d.path().join(".git/rxnode/key");
        assert_eq!(std::fs::read(&p).unwrap(), k1.bytes());
        let k2 = load_or_create(&paths).unwrap();
        assert_eq!(k1.bytes(), k2.bytes());
        assert_ne!(k1.bytes(), &[0u8; 32]);
        assert_eq!(format!("{k1:?}"), "NodeKey(..)");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Another checkout has another key.
        let (_d2, other) = checkout();
        assert_ne!(load_or_create(&other).unwrap().bytes(), k1.bytes());
    }

    #[test]
    fn a_linked_work_tree_keeps_its_key_in_its_own_git_directory() {
        let (d, paths) = checkout();
        let repo = git2::Repository::open(d.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.invalid").unwrap();
        let tree = repo
            .find_tree(repo.index().unwrap().write_tree().unwrap())
            .unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap();
        let wt_dir = d.path().join("wt");
        repo.worktree("wt", &wt_dir, None).unwrap();
        // The work tree's `.git` is a file naming the real Git directory.
        assert!(std::fs::symlink_metadata(wt_dir.join(".git"))
            .unwrap()
            .is_file());
        let wt = Paths::new(&wt_dir);
        let k = load_or_create(&wt).unwrap();
        assert!(d.path().join(".git/worktrees/wt/rxnode/key").is_file());
        assert!(!wt_dir.join(".git/rxnode").exists() || wt_dir.join(".git").is_file());
        assert_ne!(k.bytes(), load_or_create(&paths).unwrap().bytes());
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_loose_or_short_key_is_refused_never_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let (d, paths) = checkout();
        let k = load_or_create(&paths).unwrap();
        let p = d.path().join(".git/rxnode/key");
        // Group/other bits.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = format!("{:#}", load(&paths).unwrap_err());
        assert!(e.contains("mode 640"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        // A symlink to a key the attacker knows.
        let planted = d.path().join("planted-key");
        std::fs::write(&planted, [1u8; 32]).unwrap();
        std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::rename(&p, d.path().join("kept")).unwrap();
        std::os::unix::fs::symlink(&planted, &p).unwrap();
        let e = format!("{:#}", load_or_create(&paths).unwrap_err());
        assert!(e.contains("not a regular file"), "{e}");
        assert!(std::fs::symlink_metadata(&p)
            .unwrap()
            .file_type()
            .is_symlink());
        std::fs::remove_file(&p).unwrap();
        // A short key.
        std::fs::write(&p, [1u8; 16]).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = format!("{:#}", load(&paths).unwrap_err());
        assert!(e.contains("16 byte(s)"), "{e}");
        std::fs::rename(d.path().join("kept"), &p).unwrap();
        assert_eq!(load(&paths).unwrap().unwrap().bytes(), k.bytes());
        // The folder replaced by a link.
        std::fs::rename(d.path().join(".git/rxnode"), d.path().join("rxnode-real")).unwrap();
        std::os::unix::fs::symlink(d.path().join("rxnode-real"), d.path().join(".git/rxnode"))
            .unwrap();
        let e = format!("{:#}", load(&paths).unwrap_err());
        assert!(e.contains("not a directory"), "{e}");
    }
}
