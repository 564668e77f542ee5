//! Where local state lives (docs/operator.md#files-under-local). Everything is under `<checkout>/.local/`.
use rxnode_interlock::TaskId;
use std::path::{Path, PathBuf};

/// The local-state layout of one checkout.
#[derive(Debug, Clone)]
pub(crate) struct Paths {
    /// The checkout (work tree root).
    pub(crate) repo: PathBuf,
    /// `<repo>/.local`.
    pub(crate) local: PathBuf,
    /// `--policy PATH` / `RXNODE_POLICY` (absolute), when given.
    pub(crate) policy_override: Option<PathBuf>,
}

impl Paths {
    /// Layout for a checkout.
    pub(crate) fn new(repo: &Path) -> Paths {
        Paths {
            repo: repo.to_path_buf(),
            local: repo.join(".local"),
            policy_override: None,
        }
    }
    /// The same layout with the node policy at `policy` (`--policy` / `RXNODE_POLICY`).
    pub(crate) fn with_policy(mut self, policy: Option<PathBuf>) -> Paths {
        self.policy_override = policy;
        self
    }
    /// Whether the policy path was given explicitly (`--policy` / `RXNODE_POLICY`).
    pub(crate) fn policy_is_explicit(&self) -> bool {
        self.policy_override.is_some()
    }
    /// Whether this is the checkout's own `.local/` (not `watch --dry-run`'s area).
    pub(crate) fn is_checkout_local(&self) -> bool {
        self.local == self.repo.join(".local")
    }
    /// `.local/allowed_signers` of the checkout (also for `watch --dry-run`'s
    /// area: the signers are the node's, docs/operator.md#signing-tasks).
    pub(crate) fn allowed_signers(&self) -> PathBuf {
        self.repo.join(".local").join("allowed_signers")
    }
    /// `.local/rx_agent_state.json`.
    pub(crate) fn state(&self) -> PathBuf {
        self.local.join("rx_agent_state.json")
    }
    /// `.local/rx_agent_ledger.jsonl`.
    pub(crate) fn ledger(&self) -> PathBuf {
        self.local.join("rx_agent_ledger.jsonl")
    }
    /// `.local/rx_agent_outbox/`.
    pub(crate) fn outbox_root(&self) -> PathBuf {
        self.local.join("rx_agent_outbox")
    }
    /// `.local/rx_agent_outbox/<TASK_ID>/`.
    pub(crate) fn outbox(&self, id: &TaskId) -> PathBuf {
        self.outbox_root().join(id.as_str())
    }
    /// `.local/rx_iq/<TASK_ID>/`.
    pub(crate) fn iq_dir(&self, id: &TaskId) -> PathBuf {
        self.local.join("rx_iq").join(id.as_str())
    }
    /// `.local/rxnode.lock`.
    pub(crate) fn lock(&self) -> PathBuf {
        self.local.join("rxnode.lock")
    }
    /// `.local/rxnode-run.lock` (one `rxnode run` at a time; beside the watcher's lock).
    pub(crate) fn run_lock(&self) -> PathBuf {
        self.local.join("rxnode-run.lock")
    }
    /// `.local/STOP`.
    pub(crate) fn stop(&self) -> PathBuf {
        self.local.join("STOP")
    }
    /// Whether `.local/STOP` holds the node (docs/operator.md#holding-the-node):
    /// anything at that name holds — a file, a folder, a link that leads nowhere —
    /// and so does a name that cannot be examined (no permission, an I/O error, a
    /// `.local` that is not a folder): a hold fails closed. The one test every
    /// command, the watcher, the run's steps and the TX guard ask.
    pub(crate) fn is_held(&self) -> bool {
        match std::fs::symlink_metadata(self.stop()) {
            Ok(_) => true,
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    }
    /// The node policy: `--policy PATH` / `RXNODE_POLICY` when given, else
    /// the checkout's `.local/rxnode-policy.json` (docs/decisions.md "Policy
    /// location") — also for `watch --dry-run`, whose verdicts are the real
    /// watcher's.
    pub(crate) fn policy(&self) -> PathBuf {
        match &self.policy_override {
            Some(p) => p.clone(),
            None => self.repo.join(".local").join("rxnode-policy.json"),
        }
    }
    /// `.local/rxnode-node.json`: the node's name (`rxnode node set-name`).
    pub(crate) fn node_name(&self) -> PathBuf {
        self.local.join("rxnode-node.json")
    }
    /// `.local/dry-run/` (the only place `watch --dry-run` writes).
    pub(crate) fn dry_run(&self) -> PathBuf {
        self.local.join("dry-run")
    }
}

/// `--repo` (or `RXNODE_REPO`) must name a folder that exists: a mistyped path
/// is bad input (exit 2) naming it, never an empty node reported as idle, an
/// approved task called unknown, or a new `.local/` made there with its parents.
pub fn check_repo_folder(repo: &Path) -> anyhow::Result<()> {
    let fix = "fix: pass the RX checkout (the clone this laptop works in) with --repo, or run rxnode inside it";
    match std::fs::metadata(repo) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(crate::exit::bad_input(format!(
            "--repo {}: a file, not a folder (--repo names the RX checkout) — {fix}",
            repo.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(crate::exit::bad_input(format!(
            "--repo {}: no such folder — {fix}",
            repo.display()
        ))),
        Err(e) => Err(crate::exit::bad_input(format!(
            "--repo {}: cannot be read: {e} — {fix}",
            repo.display()
        ))),
    }
}

/// The node files whose presence in a work tree's `.local/` makes it an RX node.
const NODE_FILES: [&str; 4] = [
    "rxnode-policy.json",
    "rx_agent_state.json",
    "rx_agent_ledger.jsonl",
    "rxnode-node.json",
];

/// The checkout `--repo` stands for. A folder inside the work tree of an RX node
/// (its top's `.local/` holds the node's policy, state, ledger or name) stands
/// for that node, as Git answers from any folder of its work tree: from `docs/`
/// a command reads the node's policy, state and ledger, never an empty
/// `docs/.local/` of its own with the default limits. Anything else is kept as
/// given: a checkout's top, a folder in no work tree, a work tree that is no
/// node (a home folder kept in Git: its `~/.local/` is not the node's).
pub(crate) fn checkout_of(repo: &Path) -> PathBuf {
    let Some(top) = enclosing_top(repo) else {
        return repo.to_path_buf();
    };
    let local = top.join(".local");
    let is_node = NODE_FILES
        .iter()
        .any(|f| std::fs::symlink_metadata(local.join(f)).is_ok());
    if is_node {
        top
    } else {
        repo.to_path_buf()
    }
}

/// The main work tree of the RX node whose linked worktree (`git worktree add`)
/// `repo` is: `Some` only when `repo` is a linked worktree and the main work
/// tree's `.local/` holds a node's policy, state, ledger or name. Each work tree
/// has its own `.local/`, so rxnode started in the linked one sees no name, no
/// policy and no state of the node (docs/operator.md#files-under-local).
pub(crate) fn worktree_of_node(repo: &Path) -> Option<PathBuf> {
    let r = git2::Repository::open(repo).ok()?;
    if !r.is_worktree() {
        return None;
    }
    // A linked worktree's common directory is the main work tree's `.git`.
    let common = r.commondir();
    let main: PathBuf = common
        .parent()
        .filter(|_| common.file_name().is_some_and(|n| n == ".git"))?
        .components()
        .collect();
    let local = main.join(".local");
    NODE_FILES
        .iter()
        .any(|f| std::fs::symlink_metadata(local.join(f)).is_ok())
        .then_some(main)
}

/// The top of the Git work tree `repo` lies in, when `repo` is a folder inside
/// it and not its top (`None` at the top, in no work tree, or in a bare one).
pub(crate) fn enclosing_top(repo: &Path) -> Option<PathBuf> {
    let found = git2::Repository::discover(repo).ok()?;
    let top = found.workdir()?;
    match (std::fs::canonicalize(repo), std::fs::canonicalize(top)) {
        // libgit2 ends a work tree with a separator; the checkout is the folder.
        (Ok(here), Ok(there)) if here != there => Some(top.components().collect()),
        _ => None,
    }
}

/// The work tree a main-PC command (`results`, `task new`) works in: the top of
/// the one `repo` lies in, as Git answers from any of its folders (these
/// commands keep nothing under `.local/`); `repo` itself otherwise.
pub fn work_tree_top(repo: &Path) -> PathBuf {
    enclosing_top(repo).unwrap_or_else(|| repo.to_path_buf())
}

/// The Git directory of the repository at `work_tree` as [`git2::Repository::open`]
/// finds it (`Ok(None)`: a bare repository), opened once per process and work
/// tree: the node key and the ledger's mirror live there and are looked up
/// several times per watcher poll, and each open reads every Git config file.
/// A failed open is not remembered (the next call opens again).
pub(crate) fn git_dir(work_tree: &Path) -> Result<Option<PathBuf>, git2::Error> {
    type Found = Vec<(PathBuf, Option<PathBuf>)>;
    static FOUND: std::sync::Mutex<Found> = std::sync::Mutex::new(Vec::new());
    let cached = |found: &Found| {
        found
            .iter()
            .find(|(w, _)| w == work_tree)
            .map(|(_, d)| d.clone())
    };
    if let Some(d) = cached(
        &FOUND
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    ) {
        return Ok(d);
    }
    let repo = git2::Repository::open(work_tree)?;
    let dir = (!repo.is_bare()).then(|| repo.path().to_path_buf());
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if cached(&found).is_none() {
        found.push((work_tree.to_path_buf(), dir.clone()));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Git directory found once is the one every later call gets; a bare
    /// repository has none, and a folder that is no repository is an error.
    #[test]
    fn git_dir_is_the_checkouts_and_none_for_a_bare_repository() {
        let d = tempfile::tempdir().unwrap();
        let work = d.path().join("work");
        let repo = git2::Repository::init(&work).unwrap();
        for _ in 0..2 {
            assert_eq!(git_dir(&work).unwrap().as_deref(), Some(repo.path()));
        }
        let bare = d.path().join("bare.git");
        git2::Repository::init_bare(&bare).unwrap();
        assert_eq!(git_dir(&bare).unwrap(), None);
        let plain = d.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        assert!(git_dir(&plain).is_err());
        git2::Repository::init(&plain).unwrap();
        assert!(
            git_dir(&plain).unwrap().is_some(),
            "a failure is not remembered"
        );
    }

    /// A hold fails closed: nothing at `.local/STOP` does not hold; a file, a
    /// folder and a link that leads nowhere hold; and so does a name that cannot
    /// be examined (here: `.local` is a file, so the look-up fails with another
    /// error than "not found"), where the watcher and `run` had read "no hold".
    #[test]
    fn the_hold_is_anything_at_its_name_and_every_error_but_not_found() {
        let d = tempfile::tempdir().unwrap();
        let p = Paths::new(d.path());
        assert!(!p.is_held(), "no .local at all");
        std::fs::create_dir(d.path().join(".local")).unwrap();
        assert!(!p.is_held(), "nothing at STOP");
        std::fs::write(p.stop(), "").unwrap();
        assert!(p.is_held(), "a file");
        std::fs::remove_file(p.stop()).unwrap();
        std::fs::create_dir(p.stop()).unwrap();
        assert!(p.is_held(), "a folder");
        std::fs::remove_dir(p.stop()).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.path().join("nowhere"), p.stop()).unwrap();
            assert!(p.is_held(), "a link that leads nowhere");
            std::fs::remove_file(p.stop()).unwrap();
        }
        let e = tempfile::tempdir().unwrap();
        std::fs::write(e.path().join(".local"), "not a folder").unwrap();
        let q = Paths::new(e.path());
        assert!(
            std::fs::symlink_metadata(q.stop())
                .is_err_and(|err| err.kind() != std::io::ErrorKind::NotFound),
            "the look-up fails with another error than not found"
        );
        assert!(q.is_held(), "a name that cannot be examined");
    }
}
