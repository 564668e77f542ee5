//! The ledger checkpoint: what the state's load check (`state::contradiction`)
//! needs from the ledger, kept so a poll reads only the lines added since
//! (`docs/safety.md#the-ledger-checkpoint`).
//!
//! For each ledger (the `.local/` one and its mirror in the Git directory) the
//! checkpoint records the length of the prefix it has read (whole lines), the
//! SHA-256 of that prefix, how many entries it holds and what they say: the
//! task IDs with an `approved` line signed by this node and those with a
//! finished run. It lives beside the mirror (`<git dir>/rxnode/ledger-checkpoint.json`,
//! which no `git pull` or `checkout` writes) and is sealed with the node key
//! (`rxnode_interlock::file_mac`, kind [`KIND`]), so only a node with a key
//! keeps one.
//!
//! A checkpoint is only ever a shortcut to the answer the whole ledger gives:
//! one that is missing, does not verify under this node's key, was made under
//! another key or for other files, is ignored; a ledger whose prefix no longer
//! hashes to the recorded digest (an edited or truncated line, a replaced file)
//! is read again from its first line. On unix, a ledger whose device, inode,
//! size, modification and status-change times all equal those recorded is not
//! read at all: the status-change time (`ctime`) is set by the kernel on every
//! write and no user can set it back. Those times are recorded only once they
//! are [`SETTLED`] in the past, so a write in the same clock tick as the one
//! recorded cannot go unseen. Elsewhere the prefix is hashed on every read.
use crate::store::evidence::line_approval;
use crate::store::key::{self, NodeKey};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The role bound into the checkpoint's MAC.
const KIND: &str = "ledger-checkpoint";
/// The format written; any other is ignored.
const VERSION: u32 = 1;
/// The largest checkpoint read (a bigger one is ignored).
const MAX_BYTES: u64 = 64 << 20;
/// How far in the past a ledger's last change must lie before its file times
/// are recorded (more than any file system's timestamp granularity).
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// What the ledger says, for the state's load check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Said {
    /// Entries read (JSON lines).
    pub(crate) entries: usize,
    /// Tasks with an `approved` line that verifies as signed by this node.
    pub(crate) approved: BTreeSet<String>,
    /// Tasks with `run_finished`, `marked_completed` or `run_interrupted`.
    pub(crate) finished: BTreeSet<String>,
}

impl Said {
    fn extend(&mut self, other: &Said) {
        self.entries += other.entries;
        self.approved.extend(other.approved.iter().cloned());
        self.finished.extend(other.finished.iter().cloned());
    }
}

/// A ledger file's times and identity (unix).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(unix), allow(dead_code))]
struct FileTimes {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// How far one ledger file was read and what its prefix says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Mark {
    /// The file.
    path: PathBuf,
    /// Bytes read, ending after a line feed (0: nothing).
    len: u64,
    /// Line feeds in those bytes (to number the lines after them).
    lines: usize,
    /// SHA-256 (hex) of those bytes.
    sha256: String,
    /// The file's times when it was read, once [`SETTLED`].
    times: Option<FileTimes>,
    /// What those bytes say.
    said: Said,
}

/// The sealed content of the checkpoint file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Checkpoint {
    version: u32,
    marks: Vec<Mark>,
}

/// What the ledger as evidence says ([`crate::store::ledger::read_evidence`]'s
/// choice: the mirror when it holds more entries than the `.local/` one),
/// under `k` (`None`: `watch --dry-run`'s area, where every `approved` line
/// counts; `Some(None)`: no key, so none does). Uses and renews the checkpoint
/// when this node has a key; the answer is the same either way.
pub(crate) fn evidence(paths: &Paths, k: &Option<Option<NodeKey>>) -> Result<Said> {
    let key = match k {
        Some(Some(key)) => Some(key),
        _ => None,
    };
    let store = key.and_then(|_| checkpoint_path(paths));
    let before = match (key, &store) {
        (Some(key), Some(p)) => load(p, key),
        _ => None,
    };
    let mut files = vec![paths.ledger()];
    files.extend(crate::store::ledger::mirror_path(paths));
    let mut marks = Vec::new();
    let mut totals = Vec::new();
    for f in &files {
        let prior = before
            .as_ref()
            .and_then(|c| c.marks.iter().find(|m| &m.path == f));
        let Scan { mark, tail, read } = scan(f, prior, k)?;
        tracing::trace!("ledger {}: {read} byte(s) read", f.display());
        let mut total = mark.said.clone();
        total.extend(&tail);
        totals.push(total);
        marks.push(mark);
    }
    let after = Checkpoint {
        version: VERSION,
        marks,
    };
    if let (Some(key), Some(p)) = (key, &store) {
        if before.as_ref() != Some(&after) {
            if let Err(e) = save(p, key, &after) {
                tracing::debug!("ledger checkpoint {} not written: {e:#}", p.display());
            }
        }
    }
    let mut totals = totals.into_iter();
    let local = totals.next().unwrap_or_default();
    Ok(match totals.next() {
        Some(mirror) if mirror.entries > local.entries => mirror,
        _ => local,
    })
}

/// `<git dir>/rxnode/ledger-checkpoint.json`, beside the mirror (none outside a checkout).
fn checkpoint_path(paths: &Paths) -> Option<PathBuf> {
    let m = crate::store::ledger::mirror_path(paths)?;
    Some(m.with_file_name("ledger-checkpoint.json"))
}

/// The checkpoint at `p` if it verifies under `key`; anything else is none.
fn load(p: &Path, key: &NodeKey) -> Option<Checkpoint> {
    let bytes = match crate::store::fsutil::read_small_regular(p, MAX_BYTES, KIND, None) {
        Ok(b) => b?,
        Err(e) => {
            tracing::warn!("{e:#}; the ledger is read in full");
            return None;
        }
    };
    let Some(body) = crate::store::sealed::unseal(key, KIND, &bytes) else {
        tracing::warn!(
            "ledger checkpoint {} was not written by this node (its MAC does not verify); \
             the ledger is read in full",
            p.display()
        );
        return None;
    };
    serde_json::from_str::<Checkpoint>(body)
        .ok()
        .filter(|c| c.version == VERSION)
}

/// Write the checkpoint through a temporary file and a rename, not synced: it
/// is a cache, and one torn by a crash does not verify and is ignored.
fn save(p: &Path, key: &NodeKey, c: &Checkpoint) -> Result<()> {
    let body = serde_json::to_string(c)?;
    let text = crate::store::sealed::seal(key, KIND, &body)?;
    let tmp = crate::store::fsutil::atomic_tmp(p);
    // Never written through a link planted at the temporary name.
    let _ = std::fs::remove_file(&tmp);
    let done = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, p));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done.with_context(|| format!("cannot write {}", p.display()))
}

/// One ledger file read from where its mark left it.
struct Scan {
    /// The new mark (whole lines).
    mark: Mark,
    /// What the last, unterminated line says (not recorded).
    tail: Said,
    /// Bytes read from the file.
    read: usize,
}

/// Read the ledger file `p` from where `prior` left it, or from its first line
/// when `prior` does not describe its prefix.
fn scan(p: &Path, prior: Option<&Mark>, k: &Option<Option<NodeKey>>) -> Result<Scan> {
    let read_err = || format!("cannot read ledger {}", p.display());
    let mut f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Scan {
                mark: Mark::empty(p),
                tail: Said::default(),
                read: 0,
            })
        }
        Err(e) => return Err(e).with_context(read_err),
    };
    let before = times(&f.metadata().with_context(read_err)?);
    if let Some(m) = prior.filter(|m| m.times.is_some() && m.times == before) {
        // Unchanged since it was read: only the unterminated last line, if any.
        let mut tail = Vec::new();
        f.seek(SeekFrom::Start(m.len))
            .and_then(|_| f.read_to_end(&mut tail))
            .with_context(read_err)?;
        return Ok(Scan {
            mark: m.clone(),
            tail: read_lines(p, &tail, m.lines, k),
            read: tail.len(),
        });
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).with_context(read_err)?;
    let after = times(&f.metadata().with_context(read_err)?);
    let cut = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut hash = Sha256::new();
    let mut start = Mark::empty(p);
    if let Some(m) = prior {
        let kept = usize::try_from(m.len)
            .ok()
            .and_then(|n| bytes.get(..n))
            .filter(|b| {
                let mut h = hash.clone();
                h.update(b);
                hex::encode(h.finalize()) == m.sha256
            });
        if let Some(b) = kept {
            hash.update(b);
            start = m.clone();
        }
    }
    let from = usize::try_from(start.len).unwrap_or(usize::MAX).min(cut);
    let new = &bytes[from..cut];
    hash.update(new);
    let mut said = start.said;
    said.extend(&read_lines(p, new, start.lines, k));
    let lines = start.lines + new.iter().filter(|&&b| b == b'\n').count();
    let tail = read_lines(p, &bytes[cut..], lines, k);
    let settled = before.is_some() && before == after && after.as_ref().is_some_and(is_settled);
    Ok(Scan {
        mark: Mark {
            path: p.to_path_buf(),
            len: cut as u64,
            lines,
            sha256: hex::encode(hash.finalize()),
            times: if settled { after } else { None },
            said,
        },
        tail,
        read: bytes.len(),
    })
}

impl Mark {
    fn empty(p: &Path) -> Mark {
        Mark {
            path: p.to_path_buf(),
            len: 0,
            lines: 0,
            sha256: hex::encode(Sha256::digest(b"")),
            times: None,
            said: Said::default(),
        }
    }
}

/// What the ledger lines in `bytes` say; `first` is the number of lines before
/// them (for the message about a line that is not JSON).
fn read_lines(p: &Path, bytes: &[u8], first: usize, k: &Option<Option<NodeKey>>) -> Said {
    let mut said = Said::default();
    if bytes.is_empty() {
        return said;
    }
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        let e = match serde_json::from_slice(line) {
            Ok(v) => crate::store::ledger::Line::of(v),
            Err(e) => {
                tracing::warn!(
                    "ledger {} line {}: not JSON ({e}); skipped",
                    p.display(),
                    first + i + 1
                );
                continue;
            }
        };
        said.entries += 1;
        let Some(id) = e.task_id.as_deref() else {
            continue;
        };
        match e.event() {
            "approved" => {
                let signed = match k {
                    None => true,
                    Some(k) => line_approval(&e)
                        .is_some_and(|a| key::check_approval(&a, k.as_ref()).is_ok()),
                };
                if signed {
                    said.approved.insert(id.to_owned());
                }
            }
            "run_finished" | "marked_completed" | crate::store::journal::RUN_INTERRUPTED => {
                said.finished.insert(id.to_owned());
            }
            _ => {}
        }
    }
    said
}

#[cfg(unix)]
fn times(md: &std::fs::Metadata) -> Option<FileTimes> {
    use std::os::unix::fs::MetadataExt;
    Some(FileTimes {
        dev: md.dev(),
        ino: md.ino(),
        size: md.size(),
        mtime: (md.mtime(), md.mtime_nsec()),
        ctime: (md.ctime(), md.ctime_nsec()),
    })
}

/// No status-change time another user cannot set: the prefix is hashed on every read.
#[cfg(not(unix))]
fn times(_md: &std::fs::Metadata) -> Option<FileTimes> {
    None
}

/// Whether the file's last change lies at least [`SETTLED`] in the past.
fn is_settled(t: &FileTimes) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    let changed = i128::from(t.ctime.0) * 1_000_000_000 + i128::from(t.ctime.1);
    let modified = i128::from(t.mtime.0) * 1_000_000_000 + i128::from(t.mtime.1);
    now - changed.max(modified) >= SETTLED.as_nanos() as i128
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::evidence::checking_key;
    use crate::store::ledger::{self, Entry, Event};
    use crate::store::state::{contradiction, State, TaskRecord, TaskStatus};
    use rxnode_interlock::{Approval, TaskId};
    use std::io::Write;

    fn checkout() -> (tempfile::TempDir, Paths) {
        let d = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(d.path()).unwrap();
        crate::git::ops::ensure_local_excluded(&repo).unwrap();
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(&paths.local).unwrap();
        key::load_or_create(&paths).unwrap();
        (d, paths)
    }

    fn approval(paths: &Paths, id: &str) -> Approval {
        let k = key::load(paths).unwrap().unwrap();
        let mut a = Approval {
            task_id: TaskId::parse(id).unwrap(),
            task_sha256: "a".repeat(64),
            commit: "c".repeat(40),
            at: "2026-12-01T00:00:00+00:00".into(),
            mac: None,
        };
        a.mac = rxnode_interlock::record_mac(k.bytes(), &a.fields());
        a
    }

    fn approve(paths: &Paths, id: &str) {
        let a = approval(paths, id);
        let e = Entry::new(Event::Approved {
            outbox: String::new(),
            signature: None,
        })
        .task(id)
        .sha(&a.task_sha256)
        .commit(&a.commit)
        .approval(&a);
        ledger::append(paths, &e).unwrap();
    }

    fn event(paths: &Paths, ev: Event, id: &str) {
        ledger::append(paths, &Entry::new(ev).task(id)).unwrap();
    }

    fn finished() -> Event {
        Event::RunFinished(ledger::RunEnd {
            interrupted: false,
            status: "PASS".to_owned(),
        })
    }

    /// The answer of the whole ledger, as the load check computed it before
    /// there was a checkpoint: every line of the ledger as evidence, each
    /// `approved` line's MAC checked.
    fn whole(paths: &Paths) -> Said {
        let k = checking_key(paths).unwrap();
        let mut said = Said::default();
        for e in ledger::read_evidence(paths).unwrap() {
            said.entries += 1;
            let Some(id) = e.task_id.as_deref() else {
                continue;
            };
            match e.event() {
                "approved" => {
                    let signed = match &k {
                        None => true,
                        Some(k) => line_approval(&e)
                            .is_some_and(|a| key::check_approval(&a, k.as_ref()).is_ok()),
                    };
                    if signed {
                        said.approved.insert(id.to_owned());
                    }
                }
                "run_finished" | "marked_completed" | "run_interrupted" => {
                    said.finished.insert(id.to_owned());
                }
                _ => {}
            }
        }
        said
    }

    /// The checkpoint's answer, checked against the whole ledger's.
    fn same(paths: &Paths, what: &str) -> Said {
        let k = checking_key(paths).unwrap();
        let said = evidence(paths, &k).unwrap();
        let w = whole(paths);
        assert_eq!(said.approved, w.approved, "{what}");
        assert_eq!(said.finished, w.finished, "{what}");
        said
    }

    fn files(paths: &Paths) -> Vec<PathBuf> {
        vec![paths.ledger(), ledger::mirror_path(paths).unwrap()]
    }

    fn stored(paths: &Paths) -> Checkpoint {
        let k = key::load(paths).unwrap().unwrap();
        load(&checkpoint_path(paths).unwrap(), &k).unwrap()
    }

    /// Overwrite `old` by `new` (same length) in place: same file, same size.
    fn edit_in_place(p: &Path, old: &str, new: &str) {
        assert_eq!(old.len(), new.len());
        let bytes = std::fs::read(p).unwrap();
        let at = bytes
            .windows(old.len())
            .position(|w| w == old.as_bytes())
            .unwrap();
        let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        f.seek(SeekFrom::Start(at as u64)).unwrap();
        f.write_all(new.as_bytes()).unwrap();
    }

    fn state_with(paths: &Paths, approved: &[&str]) -> State {
        let mut s = State::default();
        for id in approved {
            s.approvals.insert((*id).to_owned(), approval(paths, id));
            s.tasks.insert(
                (*id).to_owned(),
                TaskRecord {
                    status: TaskStatus::Approved,
                    task_sha256: "a".repeat(64),
                    commit: "c".repeat(40),
                    risk_level: None,
                    title: None,
                    first_seen: "t".into(),
                    reason: None,
                },
            );
        }
        s
    }

    /// Whatever happens to either ledger, the answer through the checkpoint is
    /// the whole ledger's: appends, a torn line, a line that is not JSON, an
    /// unsigned approval, a truncated `.local/` ledger (the mirror answers),
    /// a replaced file, a lost mirror.
    #[test]
    fn the_checkpoint_answers_as_the_whole_ledger_after_every_change() {
        let (_d, paths) = checkout();
        same(&paths, "no ledger yet");
        approve(&paths, "A");
        same(&paths, "one approval");
        for i in 0..50 {
            event(&paths, Event::Detected, &format!("T{i}"));
        }
        event(&paths, finished(), "A");
        let s = same(&paths, "finished");
        assert!(s.approved.contains("A") && s.finished.contains("A"));
        assert!(stored(&paths).marks.iter().all(|m| m.len > 0));
        // A line that is not JSON, then a torn one (no line feed).
        for p in files(&paths) {
            let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
            f.write_all(b"not json\n{\"at\":\"x\",\"event\":\"run_finished\",\"task_id\":\"B\"}")
                .unwrap();
        }
        let s = same(&paths, "torn last line");
        assert!(
            s.finished.contains("B"),
            "an unterminated whole line counts"
        );
        event(&paths, Event::MarkedCompleted, "C");
        let s = same(&paths, "after the torn line");
        assert!(s.finished.contains("C") && s.finished.contains("B"));
        // An approval this node did not sign.
        let mut forged = approval(&paths, "D");
        forged.mac = Some("0".repeat(64));
        ledger::append(
            &paths,
            &Entry::new(Event::Approved {
                outbox: String::new(),
                signature: None,
            })
            .task("D")
            .approval(&forged),
        )
        .unwrap();
        assert!(!same(&paths, "unsigned approval").approved.contains("D"));
        // The `.local/` ledger truncated: the mirror holds more and answers.
        let local = std::fs::read(paths.ledger()).unwrap();
        std::fs::write(paths.ledger(), &local[..local.len() / 3]).unwrap();
        same(&paths, "truncated local");
        // Replaced by other content, then the mirror lost.
        std::fs::write(paths.ledger(), b"").unwrap();
        ledger::append(
            &paths,
            &Entry::new(Event::RunInterrupted {
                interrupted: crate::store::journal::Interrupted {
                    started_at: "t".into(),
                    keyed_at: None,
                    last_progress: None,
                    guard_exit: None,
                    found_at: "t".into(),
                    found_by: "status".into(),
                },
                result_rewritten: false,
            })
            .task("E"),
        )
        .unwrap();
        same(&paths, "replaced local");
        std::fs::remove_file(ledger::mirror_path(&paths).unwrap()).unwrap();
        let s = same(&paths, "mirror lost");
        assert_eq!(s.finished.iter().collect::<Vec<_>>(), ["E"]);
    }

    /// Once the ledger's times are recorded, an unchanged ledger is not read
    /// at all: the idle poll's cost does not grow with the history.
    #[test]
    fn an_unchanged_ledger_is_not_read_again() {
        let (_d, paths) = checkout();
        approve(&paths, "A");
        for i in 0..200 {
            event(&paths, Event::Detected, &format!("T{i}"));
        }
        same(&paths, "fresh");
        // Written a moment ago: its times are not recorded yet.
        assert!(stored(&paths).marks.iter().all(|m| m.times.is_none()));
        std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
        same(&paths, "settled");
        let c = stored(&paths);
        let k = checking_key(&paths).unwrap();
        for m in &c.marks {
            assert!(m.times.is_some(), "{}", m.path.display());
            let again = scan(&m.path, Some(m), &k).unwrap();
            assert_eq!(again.read, 0, "{}", m.path.display());
            assert_eq!(&again.mark, m);
        }
        // One line more: only that line is new, and the answer is the whole one.
        event(&paths, finished(), "A");
        let s = same(&paths, "appended");
        assert!(s.finished.contains("A"));
    }

    /// An earlier line edited in place after the checkpoint recorded the
    /// ledger's times (same file, same size) is seen: the approval it held no
    /// longer verifies, and the state holding that approval is refused.
    #[test]
    fn an_earlier_line_edited_after_a_settled_checkpoint_is_still_caught() {
        let (_d, paths) = checkout();
        approve(&paths, "A");
        for i in 0..20 {
            event(&paths, Event::Detected, &format!("T{i}"));
        }
        std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
        let s = state_with(&paths, &["A"]);
        assert_eq!(contradiction(&paths, &s).unwrap(), None);
        assert!(stored(&paths).marks.iter().all(|m| m.times.is_some()));
        let mac = approval(&paths, "A").mac.unwrap();
        let flipped = format!(
            "{}{}",
            if mac.starts_with('0') { "1" } else { "0" },
            &mac[1..]
        );
        for p in files(&paths) {
            edit_in_place(&p, &mac, &flipped);
        }
        same(&paths, "edited MAC");
        let why = contradiction(&paths, &s).unwrap().unwrap();
        assert!(
            why.contains("approval of task A that the ledger never recorded"),
            "{why}"
        );
    }

    /// The same edit in the same clock tick as the write the checkpoint saw:
    /// the times were not recorded yet, the prefix hash sees it.
    #[test]
    fn an_edit_right_after_a_write_is_caught_by_the_prefix_hash() {
        let (_d, paths) = checkout();
        approve(&paths, "A");
        event(&paths, finished(), "A");
        same(&paths, "fresh");
        for p in files(&paths) {
            edit_in_place(&p, "run_finished", "run_finishex");
        }
        assert!(same(&paths, "edited at once").finished.is_empty());
    }

    /// A ledger truncated after a checkpoint (both copies: no longer copy
    /// answers) is read again from its first line: the run it lost is lost to
    /// the answer too, exactly as the whole ledger says; truncated and grown
    /// back to the same size with other lines, the same.
    #[test]
    fn a_truncated_ledger_is_read_again() {
        let (_d, paths) = checkout();
        approve(&paths, "A");
        event(&paths, finished(), "A");
        let before_finish: Vec<Vec<u8>> = files(&paths)
            .iter()
            .map(|p| {
                let b = std::fs::read(p).unwrap();
                let cut = b[..b.len() - 1].iter().rposition(|&c| c == b'\n').unwrap() + 1;
                b[..cut].to_vec()
            })
            .collect();
        std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
        assert!(same(&paths, "finished").finished.contains("A"));
        assert!(stored(&paths).marks.iter().all(|m| m.times.is_some()));
        for (p, b) in files(&paths).iter().zip(&before_finish) {
            std::fs::write(p, b).unwrap();
        }
        assert!(same(&paths, "truncated").finished.is_empty());
        let s = state_with(&paths, &["A"]);
        assert_eq!(contradiction(&paths, &s).unwrap(), None);
        // Grown back to the old size with a line that finishes another task.
        event(&paths, finished(), "B");
        let s = same(&paths, "grown back");
        assert_eq!(s.finished.iter().collect::<Vec<_>>(), ["B"]);
    }

    /// A checkpoint this node did not seal — its content edited (a finished
    /// run removed), sealed by another checkout's key, not sealed at all, or
    /// another sealed file in its place — is never used: the whole ledger
    /// answers, and the rolled-back state is refused.
    #[test]
    fn a_forged_checkpoint_is_refused() {
        let (_d, paths) = checkout();
        approve(&paths, "A");
        event(&paths, finished(), "A");
        std::thread::sleep(SETTLED + std::time::Duration::from_millis(200));
        same(&paths, "settled");
        let cp = checkpoint_path(&paths).unwrap();
        let good = std::fs::read_to_string(&cp).unwrap();
        assert!(good.contains("\"finished\":[\"A\"]"), "{good}");
        let rolled = state_with(&paths, &["A"]);
        let refused = |what: &str| {
            let why = contradiction(&paths, &rolled).unwrap().unwrap_or_default();
            assert!(why.contains("task A finished"), "{what}: {why}");
        };
        // Edited: the finished run removed, the MAC kept.
        std::fs::write(&cp, good.replace("\"finished\":[\"A\"]", "\"finished\":[]")).unwrap();
        refused("edited checkpoint");
        // Sealed by another checkout's key.
        let (_d2, other) = checkout();
        let k2 = key::load(&other).unwrap().unwrap();
        let mut c = stored(&paths);
        for m in &mut c.marks {
            m.said.finished.clear();
        }
        save(&cp, &k2, &c).unwrap();
        refused("another checkout's key");
        // Not sealed: the bare content.
        std::fs::write(&cp, serde_json::to_string(&c).unwrap()).unwrap();
        refused("unsealed");
        // Sealed by this key for another role (a node file's MAC).
        let k = key::load(&paths).unwrap().unwrap();
        let body = serde_json::to_string(&c).unwrap();
        std::fs::write(
            &cp,
            crate::store::sealed::seal(&k, "node-name", &body).unwrap(),
        )
        .unwrap();
        refused("another kind");
        // And the node writes a good one again.
        assert!(stored(&paths)
            .marks
            .iter()
            .all(|m| m.said.finished.contains("A")));
    }
}
