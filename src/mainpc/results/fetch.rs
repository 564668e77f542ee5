//! The main PC's fetch into its private refs (`refs/rxnode/main-pc/…`: the
//! results branch, every node's own results branch and, when asked, every status
//! branch; a node whose branch is gone is dropped) and the sources read back
//! from them. Nothing is fetched into a branch of the checkout.
use super::fetched::{Source, OWN_PRIVATE_PREFIX, PRIVATE_REF, STATUS_PRIVATE_PREFIX};
use super::text::shown;
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, Oid, Repository};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// Fetch the remote's `refs/heads/rx-node` into [`PRIVATE_REF`] (forced: it is
/// our private copy) and every node's own `refs/heads/rx-results/<NODE>` into
/// the private refs under [`OWN_PRIVATE_PREFIX`] (replaced as a whole: a node
/// whose branch is gone is dropped), in one fetch; return the tip of
/// `rx-node`, `None` when the remote has none. `with_status`: also every
/// `refs/heads/rx-status/*` into the private refs under [`STATUS_PRIVATE_PREFIX`].
pub(super) fn fetch_private(
    repo: &Repository,
    remote: &str,
    with_status: bool,
) -> Result<Option<Oid>> {
    set_timeouts();
    let named = crate::git::ops::find_remote(repo, remote)?;
    let url = named
        .url()
        .ok_or_else(|| anyhow!("the URL of remote {remote:?} is not UTF-8"))?
        .to_owned();
    if let Some(why) = crate::git::ops::missing_local_remote(&url) {
        return Err(anyhow!("fetch of rx-node failed: {why}"));
    }
    // An anonymous remote has no configured refspecs, so libgit2 makes no
    // "opportunistic" update of refs/remotes/<remote>/*: only PRIVATE_REF moves.
    let mut rem = repo
        .remote_anonymous(&url)
        .map_err(|e| anyhow!("remote {remote:?}: {}", redact(e.message())))?;
    // Every node's own results branch and every status branch land in a
    // staging namespace first; only node names move on to the private refs
    // (`adopt`), and only the ones that changed are written. The staging refs
    // stay between runs, so a fetch writes only the branches that moved
    // (libgit2 leaves a ref that already holds the fetched commit alone, and
    // the prune drops the ones gone from the remote).
    let mut specs = vec![
        format!("+refs/heads/rx-node:{PRIVATE_REF}"),
        format!("+refs/heads/rx-results/*:{OWN_STAGING_PREFIX}*"),
    ];
    let mut staging = vec![OWN_STAGING_PREFIX];
    if with_status {
        specs.push(format!("+refs/heads/rx-status/*:{STATUS_STAGING_PREFIX}*"));
        staging.push(STATUS_STAGING_PREFIX);
    }
    let spec_strs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let fetch = |rem: &mut git2::Remote<'_>| {
        let cb = remote_callbacks(repo.config().ok());
        crate::git::ops::fetch_bounded(rem, &spec_strs, cb, None, |fo| {
            fo.update_fetchhead(false);
            fo.prune(git2::FetchPrune::On);
            fo.download_tags(git2::AutotagOption::None);
        })
    };
    let before = crate::git::ops::packs::before_fetch(repo, &["refs/rxnode/main-pc/"], None);
    let mut res = fetch(&mut rem);
    if let Err(crate::git::ops::FetchFailure {
        error: e,
        abandoned: None,
    }) = &res
    {
        // A staging ref left from an earlier fetch can stand in the way of a
        // branch now on the remote (`rx-status/N` kept, `rx-status/N/x` new):
        // with the staging emptied, the fetch is made once more.
        if e.code() != ErrorCode::Auth
            && e.code() != ErrorCode::Certificate
            && staging.iter().any(|p| has_refs(repo, p))
            && matches!(
                e.class(),
                git2::ErrorClass::Reference | git2::ErrorClass::Filesystem | git2::ErrorClass::Os
            )
            && !e.message().to_ascii_lowercase().contains("connect")
        {
            for p in &staging {
                delete_refs(repo, p);
            }
            res = fetch(&mut rem);
        }
    }
    res.map_err(|f| {
        let url = rem.url().map(redact).unwrap_or_default();
        anyhow!("fetch of rx-node from {url} failed: {}", f.message(&url))
    })?;
    if let Some(why) = crate::git::ops::packs::refuse_oversized(repo, &before) {
        return Err(crate::exit::refused(format!(
            "the fetch from {} brought {why}; nothing of it is read (the private refs are as \
             before): whoever pushed it must remove that commit from rx-node, rx-results/* or \
             rx-status/* (docs/protocol.md#bound)",
            redact(&url)
        )));
    }
    // The branches the remote advertised (kept after the fetch disconnects):
    // two node names that differ only in letter case are one ref file on a
    // case-insensitive file system, so neither is read.
    let advertised: Vec<String> = rem
        .list()
        .map_err(|e| {
            anyhow!(
                "cannot list the branches of {}: {}",
                redact(&url),
                redact(e.message())
            )
        })?
        .iter()
        .map(|h| h.name().to_owned())
        .collect();
    adopt(repo, &OWN, &advertised)?;
    if with_status {
        adopt(repo, &STATUS, &advertised)?;
    }
    read_private(repo)
}

/// The node names of `fam`'s branches among `advertised` that another
/// advertised branch of `fam` equals but for letter case, each with a warning
/// naming the group: on a case-insensitive file system (Windows, macOS) their
/// refs are one file, so which one a fetch kept is not known.
fn case_twins(fam: &Family, advertised: &[String]) -> BTreeSet<String> {
    let prefix = format!("refs/heads/{}/", fam.remote);
    let names = advertised
        .iter()
        .filter_map(|r| r.strip_prefix(prefix.as_str()))
        .filter(|name| crate::store::node::check_name(name).is_ok());
    let mut out = BTreeSet::new();
    for names in rxnode_interlock::same_folder_groups(names) {
        let list: Vec<String> = names
            .iter()
            .map(|n| format!("{}/{n}", fam.remote))
            .collect();
        note!(
            "rxnode: warning: skipped the {}es {}: their names differ only in letter case, so on a \
             case-insensitive file system (Windows, macOS) they are one ref and one would overwrite the other; \
             neither is read — the nodes need names that differ by more than letter case",
            fam.what,
            list.join(" and ")
        );
        out.extend(names.first().map(|n| n.to_ascii_lowercase()));
    }
    out
}

/// Whether any ref stands under `prefix`.
fn has_refs(repo: &Repository, prefix: &str) -> bool {
    repo.references_glob(&format!("{prefix}*"))
        .is_ok_and(|mut r| r.next().is_some())
}

/// Where `fetch_private` first puts every `rx-status/*` branch.
const STATUS_STAGING_PREFIX: &str = "refs/rxnode/main-pc/rx-status-fetched/";
/// Where `fetch_private` first puts every `rx-results/*` branch.
const OWN_STAGING_PREFIX: &str = "refs/rxnode/main-pc/rx-results-fetched/";

/// One family of per-node branches: where they are staged, where they are kept, what they are.
struct Family {
    staging: &'static str,
    private: &'static str,
    /// `rx-status` or `rx-results`.
    remote: &'static str,
    /// `status branch` or `results branch`.
    what: &'static str,
}

/// Every node's status branch, `rx-status/<NODE>`.
const STATUS: Family = Family {
    staging: STATUS_STAGING_PREFIX,
    private: STATUS_PRIVATE_PREFIX,
    remote: "rx-status",
    what: "status branch",
};

/// Every node's own results branch, `rx-results/<NODE>`.
const OWN: Family = Family {
    staging: OWN_STAGING_PREFIX,
    private: OWN_PRIVATE_PREFIX,
    remote: "rx-results",
    what: "results branch",
};

/// Delete every ref under `prefix` (the private copies rxnode owns).
fn delete_refs(repo: &Repository, prefix: &str) {
    if let Ok(refs) = repo.references_glob(&format!("{prefix}*")) {
        for mut r in refs.flatten() {
            let _ = r.delete();
        }
    }
}

/// Move each staged branch of `fam` whose name is a node name
/// (`rx-status/<NODE>`, `rx-results/<NODE>`, as rxnode writes them) to its
/// private prefix, replacing the previous copies (a node whose branch is gone
/// is dropped). Any other ref (a name nested below a node's, or not a node
/// name) was not written by rxnode: a warning names it (escaped) and it is skipped.
fn adopt(repo: &Repository, fam: &Family, advertised: &[String]) -> Result<()> {
    let twins = case_twins(fam, advertised);
    let mut staged = Vec::new();
    for r in repo
        .references_glob(&format!("{}*", fam.staging))
        .with_context(|| format!("cannot list the fetched {}es", fam.what))?
        .flatten()
    {
        let name = r
            .name_bytes()
            .get(fam.staging.len()..)
            .unwrap_or_default()
            .to_vec();
        let name = match String::from_utf8(name) {
            Ok(n) if crate::store::node::check_name(&n).is_ok() => n,
            Ok(n) => {
                skipped(fam, &n);
                continue;
            }
            Err(e) => {
                skipped(fam, &String::from_utf8_lossy(e.as_bytes()));
                continue;
            }
        };
        if twins.contains(&name.to_ascii_lowercase()) {
            continue; // named by case_twins
        }
        match r.target() {
            Some(oid) => staged.push((name, oid)),
            None => skipped(fam, &name),
        }
    }
    // The private copies become the staged ones: a node whose branch is gone
    // is dropped, and only a copy that moved is written.
    let want: BTreeMap<String, Oid> = staged.into_iter().collect();
    let mut have: BTreeMap<String, Oid> = BTreeMap::new();
    if let Ok(refs) = repo.references_glob(&format!("{}*", fam.private)) {
        for mut r in refs.flatten() {
            let name = r
                .name_bytes()
                .get(fam.private.len()..)
                .and_then(|n| std::str::from_utf8(n).ok())
                .map(str::to_owned);
            match (name, r.target()) {
                (Some(n), Some(t)) if want.get(&n) == Some(&t) => {
                    have.insert(n, t);
                }
                _ => {
                    let _ = r.delete();
                }
            }
        }
    }
    for (name, oid) in want {
        if have.contains_key(&name) {
            continue;
        }
        repo.reference(
            &format!("{}{name}", fam.private),
            oid,
            true,
            "rxnode results",
        )
        .with_context(|| format!("cannot keep the {} of node {name}", fam.what))?;
    }
    Ok(())
}

/// The warning for a remote ref under `rx-status/` or `rx-results/` that is not a node's branch.
fn skipped(fam: &Family, name: &str) {
    note!(
        "rxnode: warning: skipped refs/heads/{}/{}: not a node's {} \
         ({}/<NODE>, NODE 1 to 32 of A-Z a-z 0-9 _ -); rxnode did not write it",
        fam.remote,
        shown(name, 80),
        fam.what,
        fam.remote
    );
}

/// Every results branch as last fetched: `rx-node` (tip `rx_node`) first, then
/// each node's own `rx-results/<NODE>` by name.
pub(super) fn read_sources(repo: &Repository, rx_node: Option<Oid>) -> Result<Vec<Rc<Source>>> {
    let mut out: Vec<Rc<Source>> = rx_node
        .map(|t| Rc::new(Source::shared(t)))
        .into_iter()
        .collect();
    let mut own = Vec::new();
    for r in repo
        .references_glob(&format!("{OWN_PRIVATE_PREFIX}*"))
        .context("cannot list the fetched results branches")?
        .flatten()
    {
        let Some(name) = r.name().and_then(|n| n.strip_prefix(OWN_PRIVATE_PREFIX)) else {
            continue;
        };
        if crate::store::node::check_name(name).is_err() {
            continue; // never adopted under this name
        }
        let Ok(c) = r.peel_to_commit() else { continue };
        own.push(Source {
            branch: format!("rx-results/{name}"),
            owner: Some(name.to_owned()),
            tip: c.id(),
        });
    }
    own.sort_by(|a, b| a.owner.cmp(&b.owner));
    out.extend(own.into_iter().map(Rc::new));
    Ok(out)
}

pub(super) fn read_private(repo: &Repository) -> Result<Option<Oid>> {
    match repo.find_reference(PRIVATE_REF) {
        Ok(r) => Ok(Some(
            r.peel_to_commit()
                .with_context(|| format!("{PRIVATE_REF} does not point to a commit"))?
                .id(),
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {PRIVATE_REF}: {}", e.message())),
    }
}
