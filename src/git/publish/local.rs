//! A push to a repository on this machine (a `file://` URL or a plain path):
//! libgit2's local transport does not compare the remote ref before moving it,
//! so the objects are copied and the ref moved by a compare-and-swap here.
use super::push::PushError;
use crate::exit::refused;
use crate::git::refspec::PushRefspec;
use anyhow::Result;
use git2::{ErrorCode, Oid, Repository};
use std::path::Path;

/// The folder of a remote that lives on this machine (`file://` URL or a
/// plain path), for the compare-and-swap push.
pub(super) fn local_remote_path(url: &str) -> Option<std::path::PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        // `file:///C:/x` on Windows names `C:/x`.
        let b = rest.as_bytes();
        let rest = if cfg!(windows) && b.len() > 2 && b[0] == b'/' && b[2] == b':' {
            &rest[1..]
        } else {
            rest
        };
        return Some(std::path::PathBuf::from(rest));
    }
    if url.contains("://") {
        return None;
    }
    let p = Path::new(url);
    // `host:path` (scp-like ssh) is not local unless it names an existing folder.
    (p.is_absolute() || !url.contains(':'))
        .then(|| p.to_path_buf())
        .filter(|p| p.is_dir())
}

/// Push to a repository on this machine with a compare-and-swap ref update.
///
/// libgit2's local transport overwrites the remote ref without comparing it
/// to the value it listed, so two nodes pushing at once could lose one
/// publication. Here the missing objects are copied, then the remote
/// `refs/heads/rx-node` is moved only if it still holds the value our commit
/// descends from (under the ref's lock file, as `git receive-pack` does).
pub(super) fn push_local_cas(
    repo: &Repository,
    path: &Path,
    spec: &PushRefspec,
    ours: Oid,
) -> Result<(), PushError> {
    let fail = |m: String| PushError::Failed(anyhow::anyhow!(m));
    // The branch is the same on both sides (a `PushRefspec` is never anything else).
    let branch = spec.branch();
    if spec.as_str() != format!("{branch}:{branch}") {
        return Err(fail(format!("refspec {spec} refused")));
    }
    let dst = Repository::open(path).map_err(|e| {
        fail(format!(
            "cannot open the remote repository {}: {}",
            path.display(),
            e.message()
        ))
    })?;
    // This path writes the remote's refs itself (no receive-pack, so no hooks):
    // never under a work tree that has rx-node checked out.
    if !dst.is_bare()
        && dst
            .find_reference("HEAD")
            .is_ok_and(|h| h.symbolic_target() == Some(branch))
    {
        return Err(PushError::Failed(refused(format!(
            "the remote {} is a checkout with {} checked out; pushing would change its work tree",
            path.display(),
            spec.short()
        ))));
    }
    let old = match dst.refname_to_id(branch) {
        Ok(o) => Some(o),
        Err(e) if e.code() == ErrorCode::NotFound => None,
        Err(e) => {
            return Err(fail(format!(
                "cannot read the remote {branch}: {}",
                e.message()
            )))
        }
    };
    if let Some(o) = old {
        let known = repo.find_commit(o).is_ok();
        if !known || !(o == ours || repo.graph_descendant_of(ours, o).unwrap_or(false)) {
            return Err(PushError::Rejected(format!(
                "{branch}: non-fast-forward (remote at {o})"
            )));
        }
        if o == ours {
            return Ok(());
        }
    }
    copy_objects(repo, &dst, ours, old)
        .map_err(|e| fail(format!("cannot copy objects to {}: {e:#}", path.display())))?;
    let res = match old {
        Some(o) => dst.reference_matching(branch, ours, true, o, "rxnode publish (push)"),
        None => dst.reference(branch, ours, false, "rxnode publish (push)"),
    };
    match res {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::Modified | ErrorCode::Locked | ErrorCode::Exists
            ) =>
        {
            Err(PushError::Rejected(format!(
                "{branch}: {} (changed meanwhile)",
                e.message()
            )))
        }
        Err(e) => Err(fail(format!(
            "cannot move the remote {branch}: {}",
            e.message()
        ))),
    }
}

/// Copy the commits from `tip` back to (excluding) `have`, with their trees
/// and blobs, into `dst` (objects it already has are skipped).
fn copy_objects(src: &Repository, dst: &Repository, tip: Oid, have: Option<Oid>) -> Result<()> {
    let sodb = src.odb()?;
    let dodb = dst.odb()?;
    let mut walk = src.revwalk()?;
    walk.push(tip)?;
    if let Some(h) = have {
        walk.hide(h)?;
    }
    /// Copy tree `t` and what it holds; `have` is the tree at the same path in
    /// the commit's parent, which `dst` holds already (its commits were copied
    /// first or were there): an entry with the same object there is skipped
    /// without a look, so a commit beside 100 000 other results copies only
    /// the folders on its own path.
    fn copy_tree(
        sodb: &git2::Odb,
        dodb: &git2::Odb,
        src: &Repository,
        t: Oid,
        have: Option<&git2::Tree>,
    ) -> Result<()> {
        if have.is_some_and(|h| h.id() == t) || dodb.exists(t) {
            return Ok(()); // a tree present in a valid repository is complete
        }
        let tree = src.find_tree(t)?;
        for e in tree.iter() {
            let before = have.and_then(|h| e.name().and_then(|n| h.get_name(n)));
            if before.as_ref().is_some_and(|b| b.id() == e.id()) {
                continue;
            }
            match e.kind() {
                Some(git2::ObjectType::Tree) => {
                    let sub = before
                        .filter(|b| b.kind() == Some(git2::ObjectType::Tree))
                        .and_then(|b| src.find_tree(b.id()).ok());
                    copy_tree(sodb, dodb, src, e.id(), sub.as_ref())?
                }
                Some(git2::ObjectType::Blob) if !dodb.exists(e.id()) => {
                    let o = sodb.read(e.id())?;
                    dodb.write(o.kind(), o.data())?;
                }
                _ => {}
            }
        }
        let o = sodb.read(t)?;
        dodb.write(o.kind(), o.data())?;
        Ok(())
    }
    let mut commits = Vec::new();
    for c in walk {
        commits.push(c?);
    }
    // Parents first, each commit after its tree.
    for c in commits.into_iter().rev() {
        if dodb.exists(c) {
            continue;
        }
        let commit = src.find_commit(c)?;
        // The parent is in `dst` (copied before, or `have`'s history).
        let parent = commit
            .parents()
            .next()
            .filter(|p| dodb.exists(p.id()))
            .map(|p| p.tree())
            .transpose()?;
        copy_tree(&sodb, &dodb, src, commit.tree_id(), parent.as_ref())?;
        let o = sodb.read(c)?;
        dodb.write(o.kind(), o.data())?;
    }
    Ok(())
}
