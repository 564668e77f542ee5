//! The status commit and its push: one parentless commit holding only
//! `STATUS.json`, kept in the node's private ref and force-pushed to this
//! node's `rx-status/<NODE>` — through [`StatusRefspec`], the only refspec this
//! module can push, with the same credentials and host-key rules as `publish`.
use super::snapshot::STATUS_FILE;
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use crate::git::refspec::{StatusRefspec, STATUS_REF_PREFIX};
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
    let shown = redact(&url);
    let first = push_specs(repo, &mut rem, &[spec.as_str().to_owned()], spec, &shown);
    if first.is_ok() {
        return first;
    }
    // A ref nested below this node's status ref (`rx-status/<NODE>/…`) was not
    // written by rxnode and keeps the status ref from being created: after a
    // failed push each is named in the log and removed with the next try
    // (docs/protocol.md#node-status).
    let mut specs = vec![spec.as_str().to_owned()];
    for (name, oid) in nested_refs(repo, &mut rem, spec) {
        match spec.nested_deletion(&name) {
            // A name that is not UTF-8 came back altered (U+FFFD): it cannot be named in a push.
            Some(d) if !name.contains('\u{fffd}') => {
                tracing::warn!(
                    "{shown}: removing {} (commit {oid}): a ref below this node's status branch \
                     was not written by rxnode and blocks it",
                    crate::describe::escaped(&name)
                );
                specs.push(d);
            }
            _ => tracing::warn!(
                "{shown}: {} (commit {oid}) blocks this node's status branch and cannot be removed \
                 by rxnode (its name is not UTF-8); remove it on the server",
                crate::describe::escaped(&name)
            ),
        }
    }
    if specs.len() == 1 {
        return first;
    }
    push_specs(repo, &mut rem, &specs, spec, &shown)
}

/// Push `specs` (the status refspec, and deletions of nested refs); an error
/// names the status ref and what the remote said.
fn push_specs(
    repo: &Repository,
    rem: &mut git2::Remote<'_>,
    specs: &[String],
    spec: &StatusRefspec,
    shown: &str,
) -> Result<()> {
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
        // Connected first, to see what the remote advertises; the push then goes
        // over the same connection (docs/protocol.md#bound).
        let first = remote_callbacks(repo.config().ok());
        let mut conn = rem
            .connect_auth(git2::Direction::Push, Some(first), None)
            .map_err(|e| {
                anyhow!(
                    "push of {} to {shown} failed: {}",
                    spec.remote_ref(),
                    redact(e.message())
                )
            })?;
        if let Some(why) = conn
            .list()
            .ok()
            .and_then(|h| crate::git::ops::oversized_advertised(repo, h))
        {
            return Err(anyhow!("status push to {shown} refused: {}", redact(&why)));
        }
        // Another node's `rx-status/<name>` that only letter case tells from
        // this node's is one ref file on a Windows or macOS main PC, which then
        // reads neither.
        let own = spec
            .remote_ref()
            .strip_prefix(STATUS_REF_PREFIX)
            .unwrap_or_default();
        if let Some(twin) = conn
            .list()
            .ok()
            .and_then(|heads| crate::git::ops::advertised_case_twin(heads, STATUS_REF_PREFIX, own))
        {
            return Err(anyhow!(
                "status push to {shown} refused: the remote has rx-status/{twin}, which differs from this \
                 node's rx-status/{own} only in letter case; on a case-insensitive file system (a Windows or \
                 macOS main PC) they are one ref, so the main PC reads neither — give this node a name that \
                 differs by more than letter case, or have rx-status/{twin} removed"
            ));
        }
        conn.remote().push(specs, Some(&mut opts))
    };
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

/// Where the refs nested below this node's status ref are fetched to be named.
const NESTED_PRIVATE_PREFIX: &str = "refs/rxnode/node-status-nested/";

/// The remote's refs nested below this node's status ref, with their commits:
/// fetched into [`NESTED_PRIVATE_PREFIX`] (emptied first) and read back as
/// bytes, so no name the remote sends can stop the push. Empty when the remote
/// cannot be read (the push then says why).
fn nested_refs(
    repo: &Repository,
    rem: &mut git2::Remote<'_>,
    spec: &StatusRefspec,
) -> Vec<(String, Oid)> {
    clear_nested(repo);
    let cb = remote_callbacks(repo.config().ok());
    let glob = format!("+{}/*:{NESTED_PRIVATE_PREFIX}*", spec.remote_ref());
    let fetched = crate::git::ops::fetch_bounded(rem, &[glob.as_str()], cb, None, |fo| {
        fo.update_fetchhead(false);
        fo.download_tags(git2::AutotagOption::None);
    });
    if fetched.is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Ok(refs) = repo.references_glob(&format!("{NESTED_PRIVATE_PREFIX}*")) {
        for r in refs.flatten() {
            let rest = String::from_utf8_lossy(
                r.name_bytes()
                    .get(NESTED_PRIVATE_PREFIX.len()..)
                    .unwrap_or_default(),
            )
            .into_owned();
            if let Some(oid) = r.target() {
                out.push((format!("{}/{rest}", spec.remote_ref()), oid));
            }
        }
    }
    clear_nested(repo);
    out
}

/// Drop the private copies of nested refs.
fn clear_nested(repo: &Repository) {
    if let Ok(refs) = repo.references_glob(&format!("{NESTED_PRIVATE_PREFIX}*")) {
        for mut r in refs.flatten() {
            let _ = r.delete();
        }
    }
}
