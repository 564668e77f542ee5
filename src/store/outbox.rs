//! The ManualExecutor: on approval, prepare `.local/rx_agent_outbox/<TASK_ID>/`.
//!
//! The folder is written complete in `.tmp-<ID>-<pid>` and renamed into place;
//! an existing outbox is never overwritten. It invokes no agent, touches no
//! radio, commits and pushes nothing.
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use rxnode_interlock::{sha256_hex, Approval, ValidTask};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `TASK.meta.json`: where the approved text came from. Written here on
/// approval and read back by `publish`; the fields an older outbox may lack
/// read as empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskMeta {
    /// The task.
    pub(crate) task_id: String,
    /// The commit that held it (empty for a dry-run file).
    pub(crate) commit: String,
    /// The blob ID of the task file (empty for a dry-run file).
    #[serde(default)]
    pub(crate) blob: String,
    /// SHA-256 of `TASK.md` (the exact approved bytes).
    pub(crate) task_sha256: String,
    /// Approval time.
    #[serde(default)]
    pub(crate) approved_at: String,
    /// The watched branch.
    #[serde(default)]
    pub(crate) source_branch: String,
}

/// What [`prepare`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// A new outbox was written.
    Written(PathBuf),
    /// An outbox for exactly this text already existed (an approval interrupted
    /// after the outbox was written); it was left as it is.
    AlreadyThere(PathBuf),
}

/// Writes the `NOT RUN` result skeleton into the folder it is given (the
/// result model is not the store's: the caller passes
/// `crate::result::write_skeleton`).
pub(crate) type Skeleton<'a> = &'a dyn Fn(&Path) -> Result<()>;

/// Write the outbox for an approved task. `bytes` are the exact task bytes.
/// Refuses (exit 3, nothing changed) when an outbox for the ID exists with other content.
pub(crate) fn prepare(
    paths: &Paths,
    task: &ValidTask,
    bytes: &[u8],
    approval: &Approval,
    blob: &str,
    skeleton: Skeleton<'_>,
) -> Result<Prepared> {
    let sha = sha256_hex(bytes);
    anyhow::ensure!(
        sha == task.sha256() && sha == approval.task_sha256,
        "task bytes do not match the approved SHA-256 (internal error)"
    );
    let dest = paths.outbox(task.id());
    if dest.exists() {
        return existing(paths, dest, task, &sha);
    }
    let root = paths.outbox_root();
    let tmp = root.join(format!(".tmp-{}-{}", task.id(), std::process::id()));
    // Every file of the outbox (and of its temporary folder) must be ignored
    // by Git before it is created.
    let files = [
        "TASK.md",
        "TASK.meta.json",
        "RX_RESULT.json",
        "RX_RESULT.md",
    ];
    let planned: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| [dest.join(f), tmp.join(f)])
        .collect();
    crate::store::trust::check_created(paths, &planned)?;
    std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    // Half-written folders of this ID left by a crash (any PID) go first: the
    // caller holds the watcher lock, so nobody else is preparing this ID.
    let leftover = format!(".tmp-{}-", task.id());
    clear_leftovers(&root, &leftover)?;
    std::fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let meta = TaskMeta {
        task_id: task.id().to_string(),
        commit: approval.commit.clone(),
        blob: blob.to_owned(),
        task_sha256: sha,
        approved_at: approval.at.clone(),
        source_branch: task.header().source_branch.clone(),
    };
    let write = || -> Result<()> {
        crate::store::fsutil::write_synced(&tmp.join("TASK.md"), bytes)?;
        let mut m = serde_json::to_vec_pretty(&meta)?;
        m.push(b'\n');
        crate::store::fsutil::write_synced(&tmp.join("TASK.meta.json"), &m)?;
        skeleton(&tmp)?;
        Ok(())
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    // `rename` of a directory onto an existing non-empty directory fails on every
    // platform, so a concurrent creator cannot be overwritten either.
    if let Err(e) = std::fs::rename(&tmp, &dest) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e).with_context(|| format!("cannot move outbox into {}", dest.display()));
    }
    crate::store::fsutil::sync_dir(&root);
    Ok(Prepared::Written(dest))
}

/// An outbox for the ID is already there: left as it is when it holds exactly
/// this text, refused when it holds another text or a finished result.
fn existing(paths: &Paths, dest: PathBuf, task: &ValidTask, sha: &str) -> Result<Prepared> {
    let meta = read_meta(&dest).ok();
    let same_text = crate::store::fsutil::read(dest.join("TASK.md"))
        .map(|b| sha256_hex(&b) == sha)
        .unwrap_or(false);
    if let Some(st) = crate::store::evidence::finished_outbox(paths, task.id().as_str()) {
        return Err(crate::exit::refused(format!(
            "outbox {} holds a finished result ({st}): a finished outbox is never approved again; \
             a re-run needs a new TASK_ID",
            dest.display()
        )));
    }
    if same_text && meta.is_some_and(|m| m.task_sha256 == sha) {
        return Ok(Prepared::AlreadyThere(dest));
    }
    Err(crate::exit::refused(format!(
        "outbox {} already exists and is not this task text; it is never overwritten — \
         move it aside to approve again",
        dest.display()
    )))
}

/// Remove the half-written `<leftover><pid>` folders (`.tmp-<ID>-<pid>`) of
/// this ID that a crash left in `root`.
fn clear_leftovers(root: &Path, leftover: &str) -> Result<()> {
    for e in std::fs::read_dir(root)
        .with_context(|| format!("cannot list {}", root.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        // `.tmp-<ID>-<pid>` exactly (IDs may contain `-`: `T` must not match `T-1`).
        let ours = name
            .strip_prefix(leftover)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if ours {
            std::fs::remove_dir_all(e.path())
                .with_context(|| format!("cannot clear leftover {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// Read `TASK.meta.json` of an outbox.
pub(crate) fn read_meta(dir: &Path) -> Result<TaskMeta> {
    let p = dir.join("TASK.meta.json");
    let b =
        crate::store::fsutil::read(&p).with_context(|| format!("cannot read {}", p.display()))?;
    serde_json::from_slice(&b).with_context(|| format!("{} is not valid", p.display()))
}

#[cfg(test)]
mod tests {
    /// The skeleton writer the watcher passes.
    pub(super) fn skel<'a>(
        paths: &'a Paths,
        t: &'a ValidTask,
        a: &'a Approval,
    ) -> impl Fn(&Path) -> Result<()> + 'a {
        move |d: &Path| crate::result::write_skeleton(paths, d, t, &a.commit, a, None)
    }

    use super::*;

    const TASK: &str = include_str!("../../fixtures/watcher_test_task.md");

    fn task() -> ValidTask {
        crate::validate::check(TASK.as_bytes(), "video-development").unwrap()
    }

    /// Folders left half-written by a crashed approval
    /// (another PID) were never cleared; another ID's must stay.
    #[test]
    fn crash_leftovers_of_this_id_are_cleared_and_no_other() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let t = task();
        let root = paths.outbox_root();
        let mine = root.join(format!(".tmp-{}-424242", t.id()));
        let other = root.join(format!(".tmp-{}-X-1", t.id()));
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let a = Approval::new(&t, &"c".repeat(40), "2026-01-01T00:00:00+00:00");
        prepare(&paths, &t, TASK.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap();
        assert!(!mine.exists());
        assert!(other.exists(), "the leftover of ID {}-X must stay", t.id());
    }

    #[test]
    fn writes_exact_bytes_and_never_overwrites() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let t = task();
        let a = Approval::new(&t, &"c".repeat(40), "2026-01-01T00:00:00+00:00");
        let out = prepare(&paths, &t, TASK.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap();
        let dir = paths.outbox(t.id());
        assert_eq!(out, Prepared::Written(dir.clone()));
        assert_eq!(std::fs::read(dir.join("TASK.md")).unwrap(), TASK.as_bytes());
        let meta = read_meta(&dir).unwrap();
        assert_eq!(meta.task_sha256, t.sha256());
        assert_eq!(meta.blob, "b1");
        let j: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("RX_RESULT.json")).unwrap()).unwrap();
        assert_eq!(j["status"], "NOT RUN");
        let md = std::fs::read_to_string(dir.join("RX_RESULT.md")).unwrap();
        assert!(md.contains("| Status | NOT RUN |"));
        // Same text again: left alone.
        assert_eq!(
            prepare(&paths, &t, TASK.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap(),
            Prepared::AlreadyThere(dir.clone())
        );
        // Other content: refused, untouched.
        std::fs::write(dir.join("TASK.md"), b"operator notes").unwrap();
        let e = prepare(&paths, &t, TASK.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap_err();
        assert!(format!("{e:#}").contains("never overwritten"));
        assert_eq!(
            std::fs::read(dir.join("TASK.md")).unwrap(),
            b"operator notes"
        );
        // No temp folders left behind.
        let left: Vec<_> = std::fs::read_dir(paths.outbox_root())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
            .collect();
        assert!(left.is_empty());
    }

    /// The one `TaskMeta` also reads an older outbox's meta that
    /// lacks `blob`, `approved_at` or `source_branch` (publish reads them as
    /// absent), and writes every field.
    #[test]
    fn task_meta_reads_an_older_outbox_and_writes_every_field() {
        let old: TaskMeta =
            serde_json::from_str(r#"{"task_id":"T1","commit":"c","task_sha256":"s"}"#).unwrap();
        assert_eq!(old.task_id, "T1");
        assert!(old.blob.is_empty() && old.approved_at.is_empty() && old.source_branch.is_empty());
        let v = serde_json::to_value(&old).unwrap();
        for k in [
            "task_id",
            "commit",
            "blob",
            "task_sha256",
            "approved_at",
            "source_branch",
        ] {
            assert!(v.get(k).is_some(), "{k} missing in {v}");
        }
        assert!(serde_json::from_str::<TaskMeta>(r#"{"task_id":"T1","commit":"c"}"#).is_err());
    }
}

/// An outbox left by a finished run cannot be approved again.
#[cfg(test)]
mod hostile_outbox {
    use super::tests::skel;
    use super::*;

    /// A finished outbox is never accepted for a new approval.
    #[test]
    fn a_finished_outbox_is_never_approved_again() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let text = include_str!("../../fixtures/watcher_test_task.md");
        let t = crate::validate::check(text.as_bytes(), "video-development").unwrap();
        let a = Approval::new(&t, &"c".repeat(40), "2026-01-01T00:00:00+00:00");
        prepare(&paths, &t, text.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap();
        let res = paths.outbox(t.id()).join("RX_RESULT.json");
        let done = std::fs::read_to_string(&res)
            .unwrap()
            .replace("\"NOT RUN\"", "\"PASS\"");
        std::fs::write(&res, &done).unwrap();
        let e = prepare(&paths, &t, text.as_bytes(), &a, "b1", &skel(&paths, &t, &a)).unwrap_err();
        assert!(format!("{e:#}").contains("finished result (PASS)"), "{e:#}");
        assert!(e.downcast_ref::<crate::exit::Refused>().is_some());
        assert_eq!(std::fs::read_to_string(&res).unwrap(), done);
    }
}
