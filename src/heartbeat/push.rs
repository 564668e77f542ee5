//! The status commit and its push: one parentless commit holding only
//! `STATUS.json`, kept in the node's private ref and force-pushed to this
//! node's `rx-status/<NODE>` — through [`StatusRefspec`], the only refspec this
//! module can push, with the same credentials and host-key rules as `publish`.
use super::snapshot::STATUS_FILE;
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use crate::git::refspec::StatusRefspec;
use anyhow::{anyhow, Context, Result};
use git2::{Oid, Repository};

/// Build the status commit of `bytes`: a tree with `STATUS.json` only, no
/// parent; the private ref of `spec` points to it.
pub(crate) fn build(
    repo: &Repository,
    spec: &StatusRefspec,
    node: &str,
    bytes: &[u8],
) -> Result<Oid> {
    let blob = repo.blob(bytes).context("cannot store STATUS.json")?;
    let mut tb = repo.treebuilder(None)?;
    tb.insert(STATUS_FILE, blob, 0o100644)?;
    let tree = repo.find_tree(tb.write()?)?;
    let sig = git2::Signature::now(node, &format!("{node}@rxnode.invalid"))
        .context("cannot make the status commit's signature")?;
    let commit = repo.commit(None, &sig, &sig, &format!("status of {node}"), &tree, &[])?;
    repo.reference(spec.local_ref(), commit, true, "rxnode status")
        .with_context(|| format!("cannot set {}", spec.local_ref()))?;
    Ok(commit)
}

/// Force-push the private ref to `rx-status/<NODE>` on the remote named
/// `remote` (an anonymous remote of its URL, so no remote-tracking ref moves).
pub(crate) fn push(repo: &Repository, remote: &str, spec: &StatusRefspec) -> Result<()> {
    set_timeouts();
    let url = repo
        .find_remote(remote)
        .map_err(|e| anyhow!("remote {remote:?}: {}", e.message()))?
        .url()
        .ok_or_else(|| anyhow!("the URL of remote {remote:?} is not UTF-8"))?
        .to_owned();
    let mut rem = repo
        .remote_anonymous(&url)
        .map_err(|e| anyhow!("remote {remote:?}: {}", redact(e.message())))?;
    let status: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let res = {
        let mut cb = remote_callbacks(repo.config().ok());
        cb.push_update_reference(|name, st| {
            if let Some(s) = st {
                *status.borrow_mut() = Some(format!("{name}: {s}"));
            }
            Ok(())
        });
        let mut opts = git2::PushOptions::new();
        opts.remote_callbacks(cb);
        rem.push(&[spec.as_str()], Some(&mut opts))
    };
    let shown = redact(&url);
    res.map_err(|e| {
        anyhow!(
            "push of {} to {shown} failed: {}",
            spec.remote_ref(),
            redact(e.message())
        )
    })?;
    match status.into_inner() {
        None => Ok(()),
        Some(s) => Err(anyhow!(
            "{shown} rejected the status update: {}",
            redact(&s)
        )),
    }
}
