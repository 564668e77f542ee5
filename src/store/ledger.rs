//! `.local/rx_agent_ledger.jsonl`: the append-only audit trail (docs/operator.md#files-under-local).
use crate::store::fsutil::now_iso;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom, Write};

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

/// The ledger as evidence: the `.local/` ledger, or the mirror in the Git
/// directory when that holds more entries (the `.local/` one was lost,
/// truncated or replaced by an older copy).
pub(crate) fn read_evidence(paths: &Paths) -> Result<Vec<Line>> {
    let local = read_all(paths)?;
    let Some(m) = mirror_path(paths) else {
        return Ok(local);
    };
    let mirror = read_path(&m)?;
    Ok(if mirror.len() > local.len() {
        mirror
    } else {
        local
    })
}

/// Both ledgers, the `.local/` one and the mirror, one after the other: for the
/// single-use check, where a finished run recorded in *either* counts (a longer
/// `.local/` ledger may be an old copy padded to outweigh the mirror).
pub(crate) fn read_both(paths: &Paths) -> Result<Vec<Line>> {
    let mut all = read_all(paths)?;
    if let Some(m) = mirror_path(paths) {
        all.extend(read_path(&m)?);
    }
    Ok(all)
}

/// The mirror's entries, when this checkout has a non-empty mirror.
pub(crate) fn read_mirror(paths: &Paths) -> Result<Option<Vec<Line>>> {
    let Some(m) = mirror_path(paths) else {
        return Ok(None);
    };
    let v = read_path(&m)?;
    Ok((!v.is_empty()).then_some(v))
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
    /// Its bytes as text (invalid UTF-8 replaced by U+FFFD).
    pub(crate) text: String,
}

/// The ledger `p` (opened as `f`) ends in a line without its `\n`: a write cut
/// short by a crash or power loss. Its bytes are kept in [`torn_path`] — the
/// ledger itself is never rewritten: the line stays where it is, the caller ends
/// it with a line break and appends after it — and it is said once, here (unless
/// this command's read of the ledger said already that it would be).
fn set_aside_torn(p: &std::path::Path, f: &mut std::fs::File) -> Result<()> {
    let mut all = Vec::new();
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.read_to_end(&mut all))
        .with_context(|| format!("cannot read ledger {}", p.display()))?;
    let start = all.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = &all[start..];
    let rec = TornLine {
        set_aside_at: now_iso(),
        ledger: p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        line: all[..start].iter().filter(|&&b| b == b'\n').count() + 1,
        offset: start as u64,
        bytes: torn.len(),
        sha256: rxnode_interlock::sha256_hex(torn),
        text: String::from_utf8_lossy(torn).into_owned(),
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

/// Read the ledger entries as JSON values (a torn last line is skipped and reported).
///
/// Read as bytes and parsed line by line, so a line torn inside a multi-byte
/// UTF-8 character loses only that line, not the whole ledger.
pub(crate) fn read_all(paths: &Paths) -> Result<Vec<Line>> {
    read_path(&paths.ledger())
}

fn read_path(p: &std::path::Path) -> Result<Vec<Line>> {
    let bytes = match crate::store::fsutil::read(p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e).with_context(|| format!("cannot read ledger {}", p.display())),
    };
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let last = bytes.split(|&b| b == b'\n').count();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(v) => out.push(Line::of(v)),
            Err(e) => bad.push((i + 1, line, e)),
        }
    }
    for (n, line, e) in bad {
        say_bad_line(p, n, line, &e, n == last);
    }
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
