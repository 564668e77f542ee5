//! Whether a fetched result can be tied to a task the main PC posted: its
//! `source_commit` must be a commit of the watched branch as this clone has it
//! (`refs/heads/<branch>` or `refs/remotes/<remote>/<branch>`), holding a task of
//! the result's ID at the task path. The commit is the peer's word: one this clone
//! does not have, or one a peer made itself and pushed on a branch of its own
//! (every `rx-results/<NODE>` is fetched, so its objects are in this clone), ties
//! the result to nothing the main PC posted.
use crate::context::TaskSource;
use git2::{Blob, ObjectType, Oid, Repository};
use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};

/// What one `source_commit` holds at the task path: the task ID (`None`: not
/// a task), or why it holds no task the main PC posted.
type Said = Result<Option<String>, String>;

/// The watched branch as this clone has it, walked once on first use.
pub(super) struct Posted {
    source: TaskSource,
    /// Every commit reachable from the watched branch's heads in this clone, and
    /// the heads found (`refs/…` names).
    reach: OnceCell<(HashSet<Oid>, Vec<String>)>,
    /// Per `source_commit` read: the task ID at the task path (`None`: not a
    /// task), or why there is no task the main PC posted; many results answer
    /// one commit's task.
    ids: RefCell<HashMap<Option<String>, Said>>,
}

impl Posted {
    pub(super) fn new(source: &TaskSource) -> Posted {
        Posted {
            source: source.clone(),
            reach: OnceCell::new(),
            ids: RefCell::new(HashMap::new()),
        }
    }

    /// The task path tasks are posted at.
    pub(super) fn task_path(&self) -> &str {
        &self.source.task_path
    }

    /// The watched branch's heads in this clone and every commit they reach.
    /// These are the main PC's own refs (a `results` fetch never moves them).
    fn reach(&self, repo: &Repository) -> &(HashSet<Oid>, Vec<String>) {
        self.reach.get_or_init(|| {
            let s = &self.source;
            let mut heads = Vec::new();
            let Ok(mut walk) = repo.revwalk() else {
                return (HashSet::new(), heads);
            };
            for name in [
                format!("refs/heads/{}", s.branch),
                crate::git::ops::tracking_ref(&s.remote, &s.branch),
            ] {
                let tip = repo
                    .find_reference(&name)
                    .ok()
                    .and_then(|r| r.resolve().ok())
                    .and_then(|r| r.target());
                if tip.is_some_and(|t| walk.push(t).is_ok()) {
                    heads.push(name);
                }
            }
            let seen: HashSet<Oid> = if heads.is_empty() {
                HashSet::new()
            } else {
                walk.filter_map(std::result::Result::ok).collect()
            };
            (seen, heads)
        })
    }

    /// The task blob at the task path of the result's `source_commit` (`commit`,
    /// `None` when the result names none), when that commit is on the watched
    /// branch as this clone has it; else why the result cannot be tied to a task
    /// the main PC posted, naming the commit and the fix.
    pub(super) fn task_at<'r>(
        &self,
        repo: &'r Repository,
        commit: Option<&str>,
    ) -> Result<Blob<'r>, String> {
        let (branch, remote, path) = (
            &self.source.branch,
            &self.source.remote,
            &self.source.task_path,
        );
        let Some(commit) = commit else {
            return Err(format!(
                "names no source_commit: it cannot be tied to a task posted on {branch}"
            ));
        };
        let shown = super::text::shown(commit, 60);
        let Ok(id) = Oid::from_str(commit).map_err(|_| ()).and_then(|id| {
            if commit.len() == 40 {
                Ok(id)
            } else {
                Err(())
            }
        }) else {
            return Err(format!(
                "source_commit {shown} is not a 40-hex commit SHA: it cannot be tied to a task posted on {branch}"
            ));
        };
        let present = repo
            .odb()
            .and_then(|o| o.read_header(id))
            .is_ok_and(|(_, k)| k == ObjectType::Commit);
        if !present {
            return Err(format!(
                "source_commit {id} is not in this clone: the result cannot be tied to a task posted on {branch}; \
                 fetch the watched branch (`git fetch {remote} {branch}`) and check again"
            ));
        }
        let (reach, heads) = self.reach(repo);
        if !reach.contains(&id) {
            let had = if heads.is_empty() {
                format!(
                    "this clone has neither refs/heads/{branch} nor {}",
                    crate::git::ops::tracking_ref(remote, branch)
                )
            } else {
                heads.join(", ")
            };
            return Err(format!(
                "source_commit {id} is on no branch this clone has of {branch} ({had}): the result cannot be tied to a task \
                 the main PC posted (a commit a results branch carried, not the watched branch); \
                 if {branch} moved since, fetch it (`git fetch {remote} {branch}`) and check again"
            ));
        }
        let tree = crate::git::ops::commit(repo, id)
            .and_then(|c| crate::git::ops::tree(repo, c.tree_id()))
            .map_err(|e| format!("source_commit {id}: {e:#}"))?;
        let entry = tree
            .get_path(std::path::Path::new(path))
            .map_err(|_| format!("{path} at the result's source_commit {id} does not exist: no task was posted there"))?;
        if entry.kind() != Some(ObjectType::Blob) {
            return Err(format!(
                "{path} at the result's source_commit {id} is not a file: no task was posted there"
            ));
        }
        let size = repo
            .odb()
            .and_then(|odb| odb.read_header(entry.id()))
            .map(|(size, _)| size)
            .map_err(|e| format!("{path} at the result's source_commit {id}: {}", e.message()))?;
        if size > rxnode_interlock::MAX_TASK_BYTES {
            return Err(format!(
                "{path} at the result's source_commit {id} is {size} bytes, over the {} bytes of a task: no node ran it as one",
                rxnode_interlock::MAX_TASK_BYTES
            ));
        }
        repo.find_blob(entry.id())
            .map_err(|e| format!("{path} at the result's source_commit {id}: {}", e.message()))
    }

    /// Why the result (its `source_commit`, filed under `task_id`) does not
    /// answer a task the main PC posted: not tied (see [`Posted::task_at`]), not
    /// a task there, or a task of another ID; `None` when it does.
    pub(super) fn untied(
        &self,
        repo: &Repository,
        commit: Option<&str>,
        task_id: &str,
    ) -> Option<String> {
        let key = commit.map(str::to_owned);
        let known = self.ids.borrow().get(&key).cloned();
        let said = match known {
            Some(said) => said,
            None => {
                let said = self.task_at(repo, commit).map(|b| {
                    rxnode_interlock::lenient_task_id(b.content()).map(|id| id.as_str().to_owned())
                });
                self.ids.borrow_mut().insert(key, said.clone());
                said
            }
        };
        let (path, commit) = (&self.source.task_path, commit.unwrap_or("?"));
        let at = format!("{path} at the result's source_commit {commit}");
        match said {
            Err(e) => Some(e),
            Ok(None) => Some(format!("{at} is not a task (no TASK_ID): no task was posted there")),
            Ok(Some(id)) if id == task_id => None,
            Ok(Some(id)) => Some(format!(
                "{at} is task {id}, not task {task_id}: the result does not answer the task it is filed under"
            )),
        }
    }
}
