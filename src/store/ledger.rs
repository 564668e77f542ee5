//! `.local/rx_agent_ledger.jsonl`: the append-only audit trail (docs/operator.md#files-under-local).
use crate::store::fsutil::now_iso;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

pub(crate) use crate::store::ledger_event::{
    CaptureAsked, CaptureClkin, CaptureDetail, CaptureFailed, CaptureFile, CapturePeak, CaptureRan,
    CompareDetail, CompareRan, CompareStream, Event, NotExamined, Published, PublishedFile,
    Refusal, RunEnd,
};

/// One ledger line, as written: its event and detail come from one [`Event`].
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Entry {
    /// UTC time, ISO 8601.
    pub(crate) at: String,
    /// What happened ([`Event`]'s name: detected, rejected, prompted, approved,
    /// deferred, stopped, refused, authorized, run_started, run_finished,
    /// published, marked_completed …).
    pub(crate) event: String,
    /// The task, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task_id: Option<String>,
    /// SHA-256 of the task text, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task_sha256: Option<String>,
    /// The commit concerned, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    /// The event's fields (keys sorted), absent for an event without any.
    #[serde(skip_serializing_if = "serde_json::Value::is_null")]
    detail: serde_json::Value,
    /// The record's MAC under the node key, for `approved` and `authorized`
    /// lines (`docs/safety.md#node-signed-approvals`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
}

impl Entry {
    /// A new entry for `event`, stamped now.
    pub(crate) fn new(event: Event) -> Entry {
        // The event as `{"event": name, "detail": fields}`; through a JSON
        // value, so the detail's keys are sorted as they always were.
        let (event, detail) = match serde_json::to_value(&event) {
            Ok(serde_json::Value::Object(mut o)) => (
                o.remove("event")
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                o.remove("detail").unwrap_or(serde_json::Value::Null),
            ),
            _ => (String::new(), serde_json::Value::Null),
        };
        Entry {
            at: now_iso(),
            event,
            task_id: None,
            task_sha256: None,
            commit: None,
            detail,
            mac: None,
        }
    }
    /// The `approved` line of `a`: its time and MAC, so the line verifies as
    /// the same signed record as the state's approval.
    pub(crate) fn approval(mut self, a: &rxnode_interlock::Approval) -> Entry {
        self.at = a.at.clone();
        self.mac = a.mac.clone();
        self
    }
    /// With a record MAC.
    pub(crate) fn mac(mut self, mac: Option<String>) -> Entry {
        self.mac = mac;
        self
    }
    /// With a task ID.
    pub(crate) fn task(mut self, id: &str) -> Entry {
        self.task_id = Some(id.to_owned());
        self
    }
    /// With a task text hash.
    pub(crate) fn sha(mut self, sha: &str) -> Entry {
        self.task_sha256 = Some(sha.to_owned());
        self
    }
    /// With a commit.
    pub(crate) fn commit(mut self, c: &str) -> Entry {
        self.commit = Some(c.to_owned());
        self
    }
}

/// One ledger line as read: whatever shape the build that wrote it gave it.
/// A field that is missing or not a string reads as absent; the line itself
/// is kept (`raw`) for what copies it on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    /// When.
    pub(crate) at: Option<String>,
    /// The event's name.
    pub(crate) event: Option<String>,
    /// The task.
    pub(crate) task_id: Option<String>,
    /// The task text's SHA-256.
    pub(crate) task_sha256: Option<String>,
    /// The commit.
    pub(crate) commit: Option<String>,
    /// The record MAC (`approved`, `authorized`).
    pub(crate) mac: Option<String>,
    /// The line as written.
    pub(crate) raw: serde_json::Value,
}

impl Line {
    /// The line of a parsed JSON value.
    pub(crate) fn of(raw: serde_json::Value) -> Line {
        let s = |k: &str| {
            raw.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        Line {
            at: s("at"),
            event: s("event"),
            task_id: s("task_id"),
            task_sha256: s("task_sha256"),
            commit: s("commit"),
            mac: s("mac"),
            raw,
        }
    }
    /// The event's name (empty when the line has none).
    pub(crate) fn event(&self) -> &str {
        self.event.as_deref().unwrap_or_default()
    }
    /// The string field `k` of the line's detail.
    pub(crate) fn detail_str(&self, k: &str) -> Option<&str> {
        self.raw.get("detail")?.get(k)?.as_str()
    }
}

/// Append one whole line (a single `write_all` of line + `\n`), then flush and fsync.
///
/// If the file does not end in `\n` (a torn earlier write), a `\n` is written
/// first, in the same `write_all`, so the new entry starts a line of its own
/// and only the torn line is lost to readers.
///
/// The same line is then appended to a mirror inside the Git directory
/// ([`mirror_path`]), which no `git pull` or `checkout` can write: if the
/// `.local/` ledger is lost or replaced, the mirror is still evidence.
pub(crate) fn append(paths: &Paths, entry: &Entry) -> Result<()> {
    check_new_files(paths)?;
    append_to(&paths.ledger(), entry)?;
    if let Some(m) = mirror_path(paths) {
        if let Err(e) = append_to(&m, entry) {
            tracing::warn!("cannot append to the ledger mirror {}: {e:#}", m.display());
        }
    }
    Ok(())
}

/// [`append`] for a line that must be on record where no `git pull` can remove
/// it before anything happens (a run about to touch a radio): the mirror first,
/// and a mirror that cannot be written is an error with the `.local/` ledger left
/// without the line; then the `.local/` ledger. Outside a checkout (no mirror)
/// it is [`append`].
pub(crate) fn append_mirrored(paths: &Paths, entry: &Entry) -> Result<()> {
    check_new_files(paths)?;
    if let Some(m) = mirror_path(paths) {
        append_to(&m, entry)
            .with_context(|| format!("the ledger's mirror {} cannot be written", m.display()))?;
    }
    append_to(&paths.ledger(), entry)
}

/// A new ledger, and a new file of its torn lines (written when the ledger ends
/// in a torn line), must be files Git ignores.
fn check_new_files(paths: &Paths) -> Result<()> {
    let ledger = paths.ledger();
    if std::fs::symlink_metadata(&ledger).is_err() {
        crate::store::trust::check_created(paths, &[ledger])?;
    } else {
        let torn = torn_path(&ledger);
        let ends_torn = crate::store::fsutil::open(&ledger)
            .ok()
            .is_some_and(|mut f| ends_in_newline(&mut f).is_ok_and(|whole| !whole));
        if ends_torn && std::fs::symlink_metadata(&torn).is_err() {
            crate::store::trust::check_created(paths, &[torn])?;
        }
    }
    Ok(())
}

/// `<git dir>/rxnode/ledger.jsonl` for the checkout's own `.local/` ledger
/// (not for `watch --dry-run`'s, nor outside a checkout).
pub(crate) fn mirror_path(paths: &Paths) -> Option<std::path::PathBuf> {
    if paths.local != paths.repo.join(".local") {
        return None;
    }
    let dir = crate::store::paths::git_dir(&paths.repo).ok()??;
    Some(dir.join("rxnode").join("ledger.jsonl"))
}

/// The ledger file to take as evidence: the `.local/` ledger, or the mirror in
/// the Git directory when that holds more entries (the `.local/` one was lost,
/// truncated or replaced by an older copy).
pub(crate) fn evidence_path(paths: &Paths) -> Result<PathBuf> {
    let local = paths.ledger();
    let Some(m) = mirror_path(paths) else {
        return Ok(local);
    };
    Ok(if count_in(&m)? > count_in(&local)? {
        m
    } else {
        local
    })
}

/// The ledger as evidence ([`evidence_path`]), read whole: for tests.
#[cfg(test)]
pub(crate) fn read_evidence(paths: &Paths) -> Result<Vec<Line>> {
    read_path(&evidence_path(paths)?)
}

/// The ledger files a finished run may be recorded in, the `.local/` one and
/// the mirror: for the single-use check, where a finished run recorded in
/// *either* counts (a longer `.local/` ledger may be an old copy padded to
/// outweigh the mirror).
pub(crate) fn both_paths(paths: &Paths) -> Vec<PathBuf> {
    let mut v = vec![paths.ledger()];
    v.extend(mirror_path(paths));
    v
}

/// The mirror, when this checkout has one holding at least one entry.
pub(crate) fn nonempty_mirror(paths: &Paths) -> Result<Option<PathBuf>> {
    let Some(m) = mirror_path(paths) else {
        return Ok(None);
    };
    Ok((count_upto(&m, 1)? > 0).then_some(m))
}

/// The longest ledger line read (bytes, without its line end). rxnode writes
/// lines of a few KiB; a longer line is skipped and said, never held in memory
/// (docs/reliability.md#a-ledger-that-grows).
pub(crate) const MAX_LINE: usize = 1 << 20;

/// One line of a ledger file as [`LineReader`] gives it.
pub(crate) struct RawLine<'a> {
    /// Its number in the file (1-based).
    pub(crate) n: usize,
    /// Its bytes without the line end; `None` when it is longer than [`MAX_LINE`].
    pub(crate) bytes: Option<&'a [u8]>,
    /// How many bytes it has, without the line end.
    pub(crate) len: u64,
    /// Whether it ends in `\n` (a last line without one is torn).
    pub(crate) ended: bool,
}

/// A ledger file read line by line through a fixed buffer: memory stays within
/// [`MAX_LINE`] plus the buffer, whatever the file's size or its longest line.
pub(crate) struct LineReader<R: Read> {
    r: std::io::BufReader<R>,
    buf: Vec<u8>,
    /// Lines given so far (counting any before where reading started).
    pub(crate) lines: usize,
    /// Bytes up to and including the last line end read (counting any before).
    pub(crate) whole: u64,
    /// Lines ended by a line end so far (counting any before).
    lines_whole: usize,
    /// Bytes read by this reader.
    read: u64,
    /// SHA-256 over every byte read, when asked for.
    running: Option<sha2::Sha256>,
    /// [`Self::running`] as it was after the last line end.
    at_whole: Option<sha2::Sha256>,
}

impl<R: Read> LineReader<R> {
    /// Read `r`, which starts after `lines` lines of `whole` bytes; `hash`:
    /// the SHA-256 state of those bytes, to go on over the lines read.
    pub(crate) fn new(r: R, lines: usize, whole: u64, hash: Option<sha2::Sha256>) -> Self {
        LineReader {
            r: std::io::BufReader::with_capacity(64 << 10, r),
            buf: Vec::new(),
            lines,
            whole,
            lines_whole: lines,
            read: 0,
            at_whole: hash.clone(),
            running: hash,
        }
    }

    /// The SHA-256 state over the bytes up to the last line end read.
    pub(crate) fn whole_hash(&self) -> Option<sha2::Sha256> {
        self.at_whole.clone()
    }

    /// Lines ended by a line end so far (counting any before where reading started).
    pub(crate) fn lines_whole(&self) -> usize {
        self.lines_whole
    }

    /// Bytes read by this reader.
    pub(crate) fn read(&self) -> u64 {
        self.read
    }

    /// The next line, or `None` at the end of the file.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<RawLine<'_>>> {
        use sha2::Digest;
        use std::io::BufRead;
        self.buf.clear();
        let (mut len, mut long, mut ended) = (0u64, false, false);
        loop {
            let avail = match self.r.fill_buf() {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => r?,
            };
            if avail.is_empty() {
                break;
            }
            let (take, nl) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i + 1, true),
                None => (avail.len(), false),
            };
            let content = &avail[..take - usize::from(nl)];
            if let Some(h) = &mut self.running {
                h.update(&avail[..take]);
            }
            len += content.len() as u64;
            if !long {
                if self.buf.len() + content.len() > MAX_LINE {
                    long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(content);
                }
            }
            self.r.consume(take);
            self.read += take as u64;
            if nl {
                ended = true;
                break;
            }
        }
        if len == 0 && !ended {
            return Ok(None);
        }
        self.lines += 1;
        if ended {
            self.whole += len + 1;
            self.lines_whole = self.lines;
            self.at_whole = self.running.clone();
        }
        Ok(Some(RawLine {
            n: self.lines,
            bytes: (!long).then_some(&self.buf[..]),
            len,
            ended,
        }))
    }
}

/// The entry of one line of the ledger `p`, or `None` for a blank line and for
/// one that is skipped (not JSON, torn, too long: said once, [`say_bad_line`]).
pub(crate) fn parse_line(p: &Path, l: &RawLine<'_>) -> Option<Line> {
    let Some(bytes) = l.bytes else {
        if first_time(p, l.n) {
            tracing::warn!(
                "ledger {} line {}: {} bytes, longer than any entry rxnode writes ({} bytes at \
                 most are read); skipped",
                p.display(),
                l.n,
                l.len,
                MAX_LINE
            );
        }
        return None;
    };
    if bytes.trim_ascii().is_empty() {
        return None;
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Some(Line::of(v)),
        Err(e) => {
            say_bad_line(p, l.n, bytes, &e, !l.ended);
            None
        }
    }
}

/// Each entry of the ledger file `p`, in order, given to `f` until it says
/// [`ControlFlow::Break`] or returns an error; a missing file has none. Read as
/// a stream: memory does not grow with the file (a torn, non-JSON or too long
/// line is skipped and said).
pub(crate) fn try_each_in(
    p: &Path,
    mut f: impl FnMut(Line) -> Result<ControlFlow<()>>,
) -> Result<()> {
    let file = match crate::store::fsutil::open(p) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read ledger {}", p.display())),
    };
    let mut r = LineReader::new(file, 0, 0, None);
    while let Some(l) = r
        .next_line()
        .with_context(|| format!("cannot read ledger {}", p.display()))?
    {
        if let Some(line) = parse_line(p, &l) {
            if f(line)?.is_break() {
                break;
            }
        }
    }
    Ok(())
}

/// Each entry of the ledger file `p` given to `f` ([`try_each_in`]).
pub(crate) fn each_in(p: &Path, mut f: impl FnMut(Line)) -> Result<()> {
    try_each_in(p, |l| {
        f(l);
        Ok(ControlFlow::Continue(()))
    })
}

/// Whether an entry of the ledger file `p` satisfies `pred` (read until one does).
pub(crate) fn any_in(p: &Path, mut pred: impl FnMut(&Line) -> bool) -> Result<bool> {
    let mut found = false;
    try_each_in(p, |l| {
        found = pred(&l);
        Ok(if found {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    })?;
    Ok(found)
}

/// How many entries (JSON lines) the ledger file `p` holds (each line checked
/// as JSON, not kept; the lines skipped are those [`parse_line`] skips, said by it).
pub(crate) fn count_in(p: &Path) -> Result<usize> {
    count_upto(p, usize::MAX)
}

/// [`count_in`], stopping at `stop` entries.
fn count_upto(p: &Path, stop: usize) -> Result<usize> {
    let file = match crate::store::fsutil::open(p) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("cannot read ledger {}", p.display())),
    };
    let mut r = LineReader::new(file, 0, 0, None);
    let mut n = 0usize;
    while n < stop {
        let Some(l) = r
            .next_line()
            .with_context(|| format!("cannot read ledger {}", p.display()))?
        else {
            break;
        };
        let whole = l.bytes.is_some_and(|b| {
            !b.trim_ascii().is_empty() && serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok()
        });
        if whole {
            n += 1;
        } else {
            parse_line(p, &l);
        }
    }
    Ok(n)
}

/// Open the ledger file `p` (or its torn-lines file) to append, creating it: never
/// through a link, never a FIFO or device (refused naming the file).
fn open_append(p: &std::path::Path) -> Result<std::fs::File> {
    let p = p.to_path_buf();
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    // Never append through a link (into a tracked file, or anywhere else).
    if let Ok(m) = std::fs::symlink_metadata(&p) {
        if !m.file_type().is_file() {
            return Err(crate::exit::refused(format!(
                "ledger {} is not a regular file (a symlink?); nothing was written",
                p.display()
            )));
        }
    }
    let mut o = std::fs::OpenOptions::new();
    o.create(true).read(true).append(true);
    // A FIFO or device swapped in after the look above is not waited on, a link
    // not followed; what was opened is looked at again.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW);
    }
    // Windows: a symlink or junction swapped in is opened as itself, not followed,
    // and refused below by its reparse-point attribute.
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        o.custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let f = o
        .open(&p)
        .with_context(|| format!("cannot open ledger {}", p.display()))?;
    let opened = f
        .metadata()
        .with_context(|| format!("cannot open ledger {}", p.display()))?;
    #[cfg(windows)]
    let link = {
        use std::os::windows::fs::MetadataExt;
        opened.file_attributes()
            & windows_sys::Win32::Storage::FileSystem::FILE_ATTRIBUTE_REPARSE_POINT
            != 0
    };
    #[cfg(not(windows))]
    let link = false;
    if !opened.is_file() || link {
        return Err(crate::exit::refused(format!(
            "ledger {} is not a regular file; nothing was written",
            p.display()
        )));
    }
    Ok(f)
}

fn append_to(p: &std::path::Path, entry: &Entry) -> Result<()> {
    let mut f = open_append(p)?;
    let mut line = Vec::new();
    if !ends_in_newline(&mut f).with_context(|| format!("cannot read ledger {}", p.display()))? {
        set_aside_torn(p, &mut f)?;
        line.push(b'\n');
    }
    serde_json::to_writer(&mut line, entry)?;
    line.push(b'\n');
    f.write_all(&line)
        .with_context(|| format!("cannot append to ledger {}", p.display()))?;
    f.sync_data()
        .with_context(|| format!("cannot fsync ledger {}", p.display()))?;
    Ok(())
}

/// The file beside the ledger `p` where its torn lines are kept:
/// `rx_agent_ledger.torn.jsonl` beside `rx_agent_ledger.jsonl`.
pub(crate) fn torn_path(p: &std::path::Path) -> std::path::PathBuf {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    p.with_file_name(format!("{stem}.torn.jsonl"))
}

/// One torn ledger line, kept aside (docs/reliability.md#a-torn-ledger-line).
#[derive(Debug, Serialize, serde::Deserialize)]
pub(crate) struct TornLine {
    /// When it was set aside (UTC, ISO 8601).
    pub(crate) set_aside_at: String,
    /// The ledger's file name.
    pub(crate) ledger: String,
    /// Its line number in the ledger (1-based).
    pub(crate) line: usize,
    /// Its first byte's offset in the ledger.
    pub(crate) offset: u64,
    /// How many bytes it has.
    pub(crate) bytes: usize,
    /// SHA-256 of its bytes.
    pub(crate) sha256: String,
    /// Its bytes as text (invalid UTF-8 replaced by U+FFFD; the first
    /// [`MAX_LINE`] bytes of a longer line).
    pub(crate) text: String,
}

/// The ledger `p` (opened as `f`) ends in a line without its `\n`: a write cut
/// short by a crash or power loss. Its bytes are kept in [`torn_path`] — the
/// ledger itself is never rewritten: the line stays where it is, the caller ends
/// it with a line break and appends after it — and it is said once, here (unless
/// this command's read of the ledger said already that it would be).
fn set_aside_torn(p: &std::path::Path, f: &mut std::fs::File) -> Result<()> {
    // Read in blocks, never whole: where the last line starts and how many
    // lines come before it, then the torn line's hash and (up to MAX_LINE
    // bytes) its text.
    let read_err = || format!("cannot read ledger {}", p.display());
    f.seek(SeekFrom::Start(0)).with_context(read_err)?;
    let (mut start, mut line, mut at) = (0u64, 1usize, 0u64);
    let mut block = vec![0u8; 64 << 10];
    loop {
        let n = match f.read(&mut block) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.with_context(read_err)?,
        };
        if n == 0 {
            break;
        }
        for i in memchr::memchr_iter(b'\n', &block[..n]) {
            line += 1;
            start = at + i as u64 + 1;
        }
        at += n as u64;
    }
    f.seek(SeekFrom::Start(start)).with_context(read_err)?;
    let (mut text, mut hash) = (Vec::new(), <sha2::Sha256 as sha2::Digest>::new());
    let mut left = at - start;
    while left > 0 {
        let want = usize::try_from(left).map_or(block.len(), |l| l.min(block.len()));
        let n = match f.read(&mut block[..want]) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => r.with_context(read_err)?,
        };
        if n == 0 {
            break;
        }
        sha2::Digest::update(&mut hash, &block[..n]);
        let keep = n.min(MAX_LINE.saturating_sub(text.len()));
        text.extend_from_slice(&block[..keep]);
        left -= n as u64;
    }
    let rec = TornLine {
        set_aside_at: now_iso(),
        ledger: p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        line,
        offset: start,
        bytes: usize::try_from(at - start).unwrap_or(usize::MAX),
        sha256: hex::encode(sha2::Digest::finalize(hash)),
        text: String::from_utf8_lossy(&text).into_owned(),
    };
    let aside = torn_path(p);
    let mut rec_line = serde_json::to_vec(&rec)?;
    rec_line.push(b'\n');
    let mut t = open_append(&aside)?;
    if !ends_in_newline(&mut t).with_context(|| format!("cannot read {}", aside.display()))? {
        rec_line.insert(0, b'\n');
    }
    t.write_all(&rec_line)
        .and_then(|()| t.sync_data())
        .with_context(|| format!("cannot keep the torn ledger line in {}", aside.display()))?;
    // Said once: not again when this command's read of the ledger said it would be.
    if !first_time(p, rec.line) {
        return Ok(());
    }
    tracing::warn!(
        "ledger {} line {} is torn ({} bytes without a line end: a write cut short by a crash or \
         power loss); its bytes are kept in {}, and the ledger goes on on a new line",
        p.display(),
        rec.line,
        rec.bytes,
        aside.display()
    );
    Ok(())
}

/// Whether `f` is empty or its last byte is `\n`.
fn ends_in_newline(f: &mut std::fs::File) -> std::io::Result<bool> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// The `.local/` ledger's entries, read whole: for tests (the product streams
/// them, [`each_in`]).
#[cfg(test)]
pub(crate) fn read_all(paths: &Paths) -> Result<Vec<Line>> {
    read_path(&paths.ledger())
}

#[cfg(test)]
fn read_path(p: &Path) -> Result<Vec<Line>> {
    let mut out = Vec::new();
    each_in(p, |l| out.push(l))?;
    Ok(out)
}

/// Say on stderr that line `n` (`line`, not JSON: `e`) of the ledger `p` is skipped —
/// once per process (a command reads the ledger several times), and not at all for a
/// torn line already kept aside (said when it was, [`set_aside_torn`]). `last`: it is
/// the file's last line, without its line end (torn, not yet set aside).
pub(crate) fn say_bad_line(
    p: &std::path::Path,
    n: usize,
    line: &[u8],
    e: &serde_json::Error,
    last: bool,
) {
    if kept_aside(p).contains(&(n, rxnode_interlock::sha256_hex(line))) || !first_time(p, n) {
        return;
    }
    if last {
        tracing::warn!(
            "ledger {} line {n} is torn (no line end: a write cut short by a crash or power \
             loss); skipped; the next entry keeps its bytes in {} and starts a new line",
            p.display(),
            torn_path(p).display()
        );
    } else {
        tracing::warn!("ledger {} line {n}: not JSON ({e}); skipped", p.display());
    }
}

/// The (line, SHA-256) of every line of the ledger `p` kept in its [`torn_path`].
fn kept_aside(p: &std::path::Path) -> std::collections::BTreeSet<(usize, String)> {
    let Ok(b) = crate::store::fsutil::read(torn_path(p)) else {
        return Default::default();
    };
    b.split(|&c| c == b'\n')
        .filter_map(|l| serde_json::from_slice::<TornLine>(l).ok())
        .map(|t| (t.line, t.sha256))
        .collect()
}

/// Whether line `n` of the ledger `p` is said for the first time by this process:
/// a command reads the ledger several times, and says a bad line once.
fn first_time(p: &std::path::Path, n: usize) -> bool {
    static SAID: std::sync::Mutex<std::collections::BTreeSet<(std::path::PathBuf, usize)>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    SAID.lock()
        .map(|mut s| s.insert((p.to_path_buf(), n)))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Paths) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(dir.path());
        (dir, paths)
    }

    fn events(paths: &Paths) -> Vec<String> {
        read_all(paths)
            .unwrap()
            .iter()
            .map(|v| v.event().to_owned())
            .collect()
    }

    /// A line that must reach the mirror: with the mirror unwritable (here its
    /// folder is a file; a read-only or full Git directory alike) it is an error
    /// naming the mirror and the `.local/` ledger does not get the line either;
    /// an ordinary line still goes to `.local/` (the mirror is then best effort).
    #[test]
    fn a_line_that_must_reach_the_mirror_fails_when_the_mirror_cannot_be_written() {
        let (d, paths) = setup();
        git2::Repository::init(d.path()).unwrap();
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n").unwrap();
        let m = mirror_path(&paths).expect("a checkout has a mirror");
        append_mirrored(&paths, &Entry::new(Event::Held)).unwrap();
        assert_eq!(events(&paths), ["held"]);
        assert_eq!(read_path(&m).unwrap().len(), 1);
        let folder = m.parent().unwrap();
        std::fs::remove_dir_all(folder).unwrap();
        std::fs::write(folder, b"not a folder").unwrap();
        let e = append_mirrored(&paths, &Entry::new(Event::HoldReleased)).unwrap_err();
        assert!(format!("{e:#}").contains("the ledger's mirror"), "{e:#}");
        assert_eq!(read_path(&paths.ledger()).unwrap().len(), 1);
        append(&paths, &Entry::new(Event::HoldReleased)).unwrap();
        assert_eq!(read_path(&paths.ledger()).unwrap().len(), 2);
    }

    /// Review finding: after a torn write the next entry was glued onto the
    /// torn line and lost to readers.
    #[test]
    fn append_after_a_torn_line_starts_a_new_line() {
        let (_d, paths) = setup();
        append(&paths, &Entry::new(Event::Held)).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.ledger())
            .unwrap();
        f.write_all(br#"{"at":"2026-01-01T00:00:00Z","ev"#).unwrap();
        drop(f);
        append(&paths, &Entry::new(Event::HoldReleased)).unwrap();
        assert_eq!(events(&paths), ["held", "hold_released"]);
        let bytes = std::fs::read(paths.ledger()).unwrap();
        assert!(bytes.ends_with(b"\n"));
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 3);
    }

    /// A torn last line (power lost mid-append) was warned about at every read —
    /// three times per command — and never set aside. The next entry keeps its
    /// bytes in `rx_agent_ledger.torn.jsonl` (line, offset, length, SHA-256, text),
    /// leaves every byte of the ledger as it was and goes on after a line break;
    /// readers then skip the line without a word, and a later entry adds nothing
    /// more to the torn-lines file.
    #[test]
    fn a_torn_last_line_is_kept_aside_once_and_the_ledger_goes_on_after_a_line_break() {
        let (_d, paths) = setup();
        append(&paths, &Entry::new(Event::Held)).unwrap();
        let torn = br#"{"at":"2026-01-01T00:00:00Z","ev"#;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.ledger())
            .unwrap();
        f.write_all(torn).unwrap();
        drop(f);
        let before = std::fs::read(paths.ledger()).unwrap();
        assert!(first_time(&paths.ledger(), 2));
        assert!(!first_time(&paths.ledger(), 2), "said twice by one process");
        append(&paths, &Entry::new(Event::HoldReleased)).unwrap();
        append(&paths, &Entry::new(Event::Detected)).unwrap();
        let after = std::fs::read(paths.ledger()).unwrap();
        assert!(after.starts_with(&before), "the ledger was rewritten");
        assert_eq!(after[before.len()], b'\n');
        assert_eq!(events(&paths), ["held", "hold_released", "detected"]);
        let aside = std::fs::read_to_string(torn_path(&paths.ledger())).unwrap();
        assert_eq!(aside.lines().count(), 1, "{aside}");
        let t: TornLine = serde_json::from_str(aside.trim_end()).unwrap();
        assert_eq!(t.ledger, "rx_agent_ledger.jsonl");
        assert_eq!((t.line, t.bytes), (2, torn.len()));
        assert_eq!(t.offset as usize, before.len() - torn.len());
        assert_eq!(t.sha256, rxnode_interlock::sha256_hex(torn));
        assert_eq!(t.text.as_bytes(), torn);
        assert!(kept_aside(&paths.ledger()).contains(&(2, t.sha256.clone())));
        assert_eq!(
            torn_path(&paths.ledger()),
            paths.local.join("rx_agent_ledger.torn.jsonl")
        );
    }

    #[test]
    fn append_to_a_whole_or_new_ledger_adds_no_blank_line() {
        let (_d, paths) = setup();
        append(&paths, &Entry::new(Event::Held)).unwrap();
        append(&paths, &Entry::new(Event::HoldReleased)).unwrap();
        let bytes = std::fs::read(paths.ledger()).unwrap();
        assert!(!bytes.starts_with(b"\n"));
        assert!(!bytes.windows(2).any(|w| w == b"\n\n"));
        assert_eq!(events(&paths), ["held", "hold_released"]);
    }

    /// Review finding: a tear inside a multi-byte UTF-8 character made the
    /// whole ledger unreadable (`read_to_string` failed).
    #[test]
    fn read_all_skips_a_line_torn_inside_a_utf8_character() {
        let (_d, paths) = setup();
        append(&paths, &Entry::new(Event::Held)).unwrap();
        let torn = serde_json::to_vec(&Entry::new(Event::WatcherStopped {
            reason: "µ".to_owned(),
        }))
        .unwrap();
        let cut = torn.iter().position(|&b| b == 0xC2).unwrap() + 1;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(paths.ledger())
            .unwrap();
        f.write_all(&torn[..cut]).unwrap();
        drop(f);
        assert_eq!(events(&paths), ["held"]);
        append(&paths, &Entry::new(Event::Detected)).unwrap();
        assert_eq!(events(&paths), ["held", "detected"]);
    }

    /// Lines any earlier build wrote are read: an unknown event, no detail, a
    /// field of another type (read as absent), even a line that is not an
    /// object (an entry with nothing in it); only a line that is not JSON is skipped.
    #[test]
    fn lines_of_any_earlier_shape_are_read() {
        let (_d, paths) = setup();
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(
            paths.ledger(),
            concat!(
                "{\"at\":\"2025-01-01T00:00:00Z\",\"event\":\"some_old_event\",\"task_id\":\"T\",\"detail\":{\"x\":1}}\n",
                "{\"event\":\"approved\",\"task_id\":7,\"mac\":null}\n",
                "[1,2]\n",
                "not json\n",
                "{\"event\":\"tx_keyed\",\"task_id\":\"T\",\"detail\":{\"keyed_at\":\"k\"}}\n",
            ),
        )
        .unwrap();
        let lines = read_all(&paths).unwrap();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].event(), "some_old_event");
        assert_eq!(lines[0].task_id.as_deref(), Some("T"));
        assert_eq!(lines[0].at.as_deref(), Some("2025-01-01T00:00:00Z"));
        assert_eq!(
            (lines[1].event(), lines[1].task_id.as_deref()),
            ("approved", None)
        );
        assert_eq!(lines[1].mac, None);
        assert_eq!(
            (lines[2].event(), lines[2].raw.clone()),
            ("", serde_json::json!([1, 2]))
        );
        assert_eq!(lines[3].detail_str("keyed_at"), Some("k"));
    }
}
