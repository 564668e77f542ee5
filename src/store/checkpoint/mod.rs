//! The ledger checkpoint: what the state's load check (`state::contradiction`)
//! needs from the ledger, kept so a poll reads only the lines added since
//! (`docs/safety.md#the-ledger-checkpoint`).
//!
//! For each ledger (the `.local/` one and its mirror in the Git directory) the
//! checkpoint records the length of the prefix it has read (whole lines), the
//! SHA-256 of that prefix, how many entries it holds and what they say: the
//! task IDs with an `approved` line signed by this node, those with a
//! finished run, and the run journal's runs started and not closed
//! (`crate::store::journal`). It lives beside the mirror (`<git dir>/rxnode/ledger-checkpoint.json`,
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
use crate::store::journal::{self, Unfinished};
use crate::store::key::{self, NodeKey};
use crate::store::ledger::LineReader;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The role bound into the checkpoint's MAC.
const KIND: &str = "ledger-checkpoint";
/// The format written; any other is ignored (version 1 had no run journal).
const VERSION: u32 = 2;
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
    /// The run journal: runs started and not closed, in the order they started.
    pub(crate) open_runs: Vec<Unfinished>,
}

/// What both ledger files say: the `.local/` one and its mirror (none outside a checkout).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ledgers {
    /// The `.local/` ledger.
    pub(crate) local: Said,
    /// The mirror in the Git directory.
    pub(crate) mirror: Option<Said>,
}

impl Ledgers {
    /// The ledger as evidence ([`crate::store::ledger::read_evidence`]'s
    /// choice): the mirror when it holds more entries than the `.local/` one.
    pub(crate) fn evidence(self) -> Said {
        match self.mirror {
            Some(mirror) if mirror.entries > self.local.entries => mirror,
            _ => self.local,
        }
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
    read(paths, k).map(Ledgers::evidence)
}

/// What each ledger file says under `k` ([`evidence`]'s keys), through the
/// checkpoint when this node has a key; the answer is the whole files' either way.
pub(crate) fn read(paths: &Paths, k: &Option<Option<NodeKey>>) -> Result<Ledgers> {
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
        let Scan { mark, total, read } = scan(f, prior, k)?;
        tracing::trace!("ledger {}: {read} byte(s) read", f.display());
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
    Ok(Ledgers {
        local: totals.next().unwrap_or_default(),
        mirror: totals.next(),
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
    let done = rxnode_dsp::open_regular_write(&tmp, rxnode_dsp::WriteMode::CreateNew, false)
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
    /// What the whole file says: the mark's lines and the last, unterminated
    /// one (not recorded in the mark).
    total: Said,
    /// Bytes read from the file.
    read: usize,
}

/// Read the ledger file `p` from where `prior` left it, or from its first line
/// when `prior` does not describe its prefix.
fn scan(p: &Path, prior: Option<&Mark>, k: &Option<Option<NodeKey>>) -> Result<Scan> {
    let read_err = || format!("cannot read ledger {}", p.display());
    let mut f = match crate::store::fsutil::open(p) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Scan {
                mark: Mark::empty(p),
                total: Said::default(),
                read: 0,
            })
        }
        Err(e) => return Err(e).with_context(read_err),
    };
    let before = times(&f.metadata().with_context(read_err)?);
    if let Some(m) = prior.filter(|m| m.times.is_some() && m.times == before) {
        // Unchanged since it was read: only the unterminated last line, if any.
        f.seek(SeekFrom::Start(m.len)).with_context(read_err)?;
        let mut r = LineReader::new(&mut f, m.lines, m.len, None);
        let mut total = m.said.clone();
        read_lines(p, &mut r, k, &mut total, None).with_context(read_err)?;
        return Ok(Scan {
            mark: m.clone(),
            total,
            read: usize::try_from(r.read()).unwrap_or(usize::MAX),
        });
    }
    // The recorded prefix is hashed once, in blocks, without being kept: the
    // same hash state goes on over the lines after it, read as a stream.
    let (hash, start) = match prior.and_then(|m| hash_prefix(&mut f, m).transpose()) {
        Some(Ok((h, m))) => (h, m.clone()),
        Some(Err(e)) => return Err(e).with_context(read_err),
        None => {
            f.seek(SeekFrom::Start(0)).with_context(read_err)?;
            (Sha256::new(), Mark::empty(p))
        }
    };
    let prefix = start.len;
    let mut said = start.said;
    let mut total = None;
    let mut r = LineReader::new(&mut f, start.lines, prefix, Some(hash));
    read_lines(p, &mut r, k, &mut said, Some(&mut total)).with_context(read_err)?;
    let (len, lines, hash) = (r.whole, r.lines_whole(), r.whole_hash());
    let read = usize::try_from(prefix + r.read()).unwrap_or(usize::MAX);
    drop(r);
    let after = times(&f.metadata().with_context(read_err)?);
    let settled = before.is_some() && before == after && after.as_ref().is_some_and(is_settled);
    Ok(Scan {
        total: total.unwrap_or_else(|| said.clone()),
        mark: Mark {
            path: p.to_path_buf(),
            len,
            lines,
            sha256: hex::encode(hash.unwrap_or_default().finalize()),
            times: if settled { after } else { None },
            said,
        },
        read,
    })
}

/// Hash the first `m.len` bytes of `f` (read from its start, in blocks): the
/// hash state when they hash to `m.sha256`, with `f` right after them; `None`
/// when they do not, or the file is shorter.
fn hash_prefix<'m>(
    f: &mut std::fs::File,
    m: &'m Mark,
) -> std::io::Result<Option<(Sha256, &'m Mark)>> {
    let mut h = Sha256::new();
    let mut left = m.len;
    let mut block = vec![0u8; 64 << 10];
    while left > 0 {
        let want = usize::try_from(left).map_or(block.len(), |l| l.min(block.len()));
        let n = match f.read(&mut block[..want]) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r?,
        };
        if n == 0 {
            return Ok(None);
        }
        h.update(&block[..n]);
        left -= n as u64;
    }
    Ok((hex::encode(h.clone().finalize()) == m.sha256).then_some((h, m)))
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

/// Add what the ledger lines `r` gives say to `said` (what the lines before
/// them say). A last line without its line end (torn, or being written) is
/// not added to `said`: with `total`, what `said` and it say is put there.
fn read_lines<R: Read>(
    p: &Path,
    r: &mut LineReader<R>,
    k: &Option<Option<NodeKey>>,
    said: &mut Said,
    mut total: Option<&mut Option<Said>>,
) -> std::io::Result<()> {
    while let Some(l) = r.next_line()? {
        let Some(e) = crate::store::ledger::parse_line(p, &l) else {
            continue;
        };
        if l.ended {
            add(&e, k, said);
        } else if let Some(t) = total.as_deref_mut() {
            let mut whole = said.clone();
            add(&e, k, &mut whole);
            *t = Some(whole);
        } else {
            add(&e, k, said);
        }
    }
    Ok(())
}

/// Add what the ledger entry `e` says to `said`.
fn add(e: &crate::store::ledger::Line, k: &Option<Option<NodeKey>>, said: &mut Said) {
    said.entries += 1;
    journal::apply(&mut said.open_runs, e);
    let Some(id) = e.task_id.as_deref() else {
        return;
    };
    match e.event() {
        "approved" => {
            let signed = match k {
                None => true,
                Some(k) => {
                    line_approval(e).is_some_and(|a| key::check_approval(&a, k.as_ref()).is_ok())
                }
            };
            if signed {
                said.approved.insert(id.to_owned());
            }
        }
        "run_finished" | "marked_completed" | journal::RUN_INTERRUPTED => {
            said.finished.insert(id.to_owned());
        }
        _ => {}
    }
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
mod tests;
