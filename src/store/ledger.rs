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
    if std::fs::symlink_metadata(paths.ledger()).is_err() {
        // A new ledger must be a file Git ignores.
        crate::store::trust::check_created(paths, &[paths.ledger()])?;
    }
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
    if std::fs::symlink_metadata(paths.ledger()).is_err() {
        crate::store::trust::check_created(paths, &[paths.ledger()])?;
    }
    if let Some(m) = mirror_path(paths) {
        append_to(&m, entry)
            .with_context(|| format!("the ledger's mirror {} cannot be written", m.display()))?;
    }
    append_to(&paths.ledger(), entry)
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

fn append_to(p: &std::path::Path, entry: &Entry) -> Result<()> {
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
    let mut f = o
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
    let mut line = Vec::new();
    if !ends_in_newline(&mut f).with_context(|| format!("cannot read ledger {}", p.display()))? {
        tracing::warn!(
            "ledger {}: last line is torn (no trailing newline); starting a new line",
            p.display()
        );
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
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(v) => out.push(Line::of(v)),
            Err(e) => tracing::warn!(
                "ledger {} line {}: not JSON ({e}); skipped",
                p.display(),
                i + 1
            ),
        }
    }
    Ok(out)
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
