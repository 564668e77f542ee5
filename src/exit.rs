//! Exit codes (docs/protocol.md) carried through `anyhow` as marker errors.
use std::fmt;
use std::process::ExitCode;

/// Bad usage or invalid input: exit 2.
#[derive(Debug)]
pub struct BadInput(pub String);

/// Refused by the safety interlock or policy: exit 3.
#[derive(Debug)]
pub struct Refused(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.starts_with("refused") {
            f.write_str(&self.0)
        } else {
            write!(f, "refused: {}", self.0)
        }
    }
}
impl std::error::Error for BadInput {}
impl std::error::Error for Refused {}

/// A message that names fields of a library request: text with each field in
/// it by name, the library's (`sample_rate_hz`) until a command tells it with
/// the names its caller typed ([`name_fields`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldText(Vec<Piece>);

/// A piece of a [`FieldText`].
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Field(&'static str),
}

impl FieldText {
    /// A message that begins with the name of `field`.
    pub fn field(field: &'static str) -> FieldText {
        FieldText(vec![Piece::Field(field)])
    }

    /// A message that begins with `text`.
    pub fn text(text: impl Into<String>) -> FieldText {
        FieldText(vec![Piece::Text(text.into())])
    }

    /// This message, then `text`.
    pub fn then(mut self, text: impl Into<String>) -> FieldText {
        self.0.push(Piece::Text(text.into()));
        self
    }

    /// This message, then the name of `field`.
    pub fn then_field(mut self, field: &'static str) -> FieldText {
        self.0.push(Piece::Field(field));
        self
    }

    /// This message, then `more`.
    pub fn then_all(mut self, more: FieldText) -> FieldText {
        self.0.extend(more.0);
        self
    }

    /// The message with each field called `name(field)`.
    pub fn told<S: AsRef<str>>(&self, name: impl Fn(&'static str) -> S) -> String {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Field(f) => out.push_str(name(f).as_ref()),
            }
        }
        out
    }

    /// The fields it names, in order.
    pub fn fields(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Field(f) => Some(*f),
            Piece::Text(_) => None,
        })
    }
}

impl From<String> for FieldText {
    fn from(text: String) -> FieldText {
        FieldText::text(text)
    }
}
impl From<&str> for FieldText {
    fn from(text: &str) -> FieldText {
        FieldText::text(text)
    }
}
impl fmt::Display for FieldText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.told(|field| field))
    }
}

/// Bad input in a named field of a library request (`sample_rate_hz`): exit 2.
/// The library names the fields; a command names them as its caller typed them
/// (flags) with [`name_fields`] before printing.
#[derive(Debug)]
pub struct BadField {
    /// The request's field it is about, as the library calls it.
    pub field: &'static str,
    /// What is wrong, the fields in it by name
    /// (`sample_rate_hz 0 must be a finite number > 0`).
    pub message: FieldText,
}

impl fmt::Display for BadField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.message, f)
    }
}
impl std::error::Error for BadField {}

/// An error for exit status 2 about the request's `field`: its name, then
/// `problem` (`" 0 must be a finite number > 0"`, or a [`FieldText`] naming more).
pub fn bad_field(field: &'static str, problem: impl Into<FieldText>) -> anyhow::Error {
    bad_field_text(field, FieldText::field(field).then_all(problem.into()))
}

/// An error for exit status 2 about the request's `field`, told as `message`
/// (for a message that does not begin with the field's name).
pub fn bad_field_text(field: &'static str, message: FieldText) -> anyhow::Error {
    anyhow::Error::new(BadField { field, message })
}

/// In tests: `e` is a refusal of bad input (exit 2) about a field of the request.
#[cfg(test)]
pub(crate) fn expect_field_error(e: &anyhow::Error) -> &BadField {
    assert_eq!(status_for(e), 2, "{e:#}");
    e.downcast_ref::<BadField>()
        .unwrap_or_else(|| panic!("not a field error: {e:#}"))
}

/// A failure told with fields of the request (`plot …: the capture produced no
/// spectrum`) that is no bad input: its exit status is its cause's, else 1.
#[derive(Debug)]
pub(crate) struct FieldNote {
    message: FieldText,
    cause: Option<anyhow::Error>,
}

impl fmt::Display for FieldNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.message, f)
    }
}
impl std::error::Error for FieldNote {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_ref()
            .map(|c| -> &(dyn std::error::Error + 'static) { c.as_ref() })
    }
}

/// A failure (exit 1) told as `message`, naming fields of the request.
pub(crate) fn field_failure(message: FieldText) -> anyhow::Error {
    anyhow::Error::new(FieldNote {
        message,
        cause: None,
    })
}

/// `cause` with `message`, naming fields of the request, as its context; the
/// exit status stays the cause's.
pub(crate) fn field_context(cause: impl Into<anyhow::Error>, message: FieldText) -> anyhow::Error {
    anyhow::Error::new(FieldNote {
        message,
        cause: Some(cause.into()),
    })
}

/// `err` told with each field of the request called `name(field)` (a command's
/// flags; a field `name` does not know keeps its own name): the same messages
/// in the same order (`{:#}`) and the same exit status. An error that names no
/// field is returned as it is.
pub fn name_fields(
    err: anyhow::Error,
    name: impl Fn(&'static str) -> Option<&'static str>,
) -> anyhow::Error {
    let names_fields =
        |e: &(dyn std::error::Error + 'static)| e.is::<BadField>() || e.is::<FieldNote>();
    if !err.chain().any(names_fields) || is_broken_pipe(&err) {
        return err;
    }
    let name = |f: &'static str| name(f).unwrap_or(f);
    let text = err
        .chain()
        .map(|e| {
            if let Some(b) = e.downcast_ref::<BadField>() {
                b.message.told(name)
            } else if let Some(n) = e.downcast_ref::<FieldNote>() {
                n.message.told(name)
            } else {
                e.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(": ");
    match status_for(&err) {
        2 => bad_input(text),
        3 if text.starts_with("refused") => refused(text),
        // A refusal told under a context of its own keeps the library's names
        // rather than change its text (no command makes one).
        3 => err,
        _ => anyhow::Error::msg(text),
    }
}

/// An error for exit status 2.
pub fn bad_input(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(BadInput(msg.into()))
}

/// An error for exit status 3.
pub fn refused(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Refused(msg.into()))
}

/// Map an error to its exit status: a `Refused` anywhere in the chain wins, then `BadInput`.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    ExitCode::from(status_for(err))
}

/// The exit status of [`code_for`] as a number (3 refused, 2 bad input, 1 failed).
pub fn status_for(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.downcast_ref::<Refused>().is_some()) {
        3
    } else if err
        .chain()
        .any(|e| e.downcast_ref::<BadInput>().is_some() || e.downcast_ref::<BadField>().is_some())
    {
        2
    } else {
        1
    }
}

/// Whether the error is a closed pipe on the output (`rxnode man | head -1`): not a
/// failure of the command, so it ends quietly with status 0.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error as one line for people: the whole chain (`{:#}`), without the Git
/// library's internal codes (`; class=Config (7); code=NotFound (-3)`), which
/// say nothing to an operator; the message before them says what went wrong.
pub fn error_text(err: &anyhow::Error) -> String {
    let text = format!("{err:#}");
    let text = match disk_full_note(err, &text).or_else(|| denied_note(err, &text)) {
        Some(note) => format!("{text}{note}"),
        None => text,
    };
    // Made terminal-safe whole: an error can carry a server's or a peer's text.
    crate::stdout::terminal_safe(&strip_git_codes(&text), false).into_owned()
}

/// What a full disk (or a used-up quota) adds to an error that names no fix of
/// its own: the folder whose disk is full — the one holding the file the
/// message names just before the OS's words (`cannot write PATH: No space left
/// on device`) — and the way out: free space, then run the command again.
fn disk_full_note(err: &anyhow::Error, text: &str) -> Option<String> {
    use std::io::ErrorKind;
    let full = err.chain().find_map(|e| {
        e.downcast_ref::<std::io::Error>()
            .filter(|io| matches!(io.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded))
    })?;
    if text.contains("fix: ") {
        return None;
    }
    let os_words = full.to_string();
    let folder = text
        .find(&format!(": {os_words}"))
        .and_then(|at| text[..at].rsplit(' ').next())
        .filter(|file| file.contains('/') || file.contains('\\'))
        .and_then(|file| std::path::Path::new(file).parent())
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty());
    let disk = folder.map_or_else(
        || "the disk".to_owned(),
        |f| format!("the disk holding {f}"),
    );
    let state = if full.kind() == ErrorKind::QuotaExceeded {
        format!("your quota on {disk} is used up")
    } else {
        format!("{disk} is full")
    };
    Some(format!(
        "; {state} — fix: free space on it, then run the command again"
    ))
}

/// What a refused write (permissions, a read-only file system) adds to an error
/// that names no fix of its own: who can fix it and how to see every place.
fn denied_note(err: &anyhow::Error, text: &str) -> Option<String> {
    use std::io::ErrorKind;
    let io = err.chain().find_map(|e| {
        e.downcast_ref::<std::io::Error>().filter(|io| {
            matches!(
                io.kind(),
                ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem
            )
        })
    })?;
    if text.contains("fix: ") {
        return None;
    }
    let how = if io.kind() == ErrorKind::ReadOnlyFilesystem {
        "the file system is mounted read-only (`rxnode doctor` checks every place the node \
         writes) — fix: give the checkout a writable disk, then run the command again"
    } else {
        "this user may not write there (`rxnode doctor` checks every place the node \
         writes) — fix: run rxnode as the user who owns the checkout, or give this user \
         write access to that place (`ls -ld` shows its owner)"
    };
    Some(format!("; {how}"))
}

fn strip_git_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["; class=", "; code="]
            .iter()
            .filter_map(|m| rest.find(m))
            .min();
        let Some(at) = next else {
            out.push_str(rest);
            return out;
        };
        // `; class=Word (n)`: only that exact shape is dropped.
        let tail = &rest[at..];
        let shape = tail.find(')').filter(|&close| {
            let inner = &tail[..close];
            inner.contains(" (")
                && inner.rsplit(" (").next().is_some_and(|n| {
                    n.trim_start_matches('-')
                        .chars()
                        .all(|c| c.is_ascii_digit())
                })
        });
        match shape {
            Some(close) => {
                out.push_str(&rest[..at]);
                rest = &rest[at + close + 1..];
            }
            None => {
                out.push_str(&rest[..at + 2]);
                rest = &rest[at + 2..];
            }
        }
    }
}

/// The error object `--json` prints on standard error (docs/protocol.md, exit
/// status): `{"error": {"fix", "message"}, "exit": N}`, one line.
#[derive(Debug, serde::Serialize)]
pub struct ErrorReport {
    /// What went wrong and how to fix it.
    pub error: ErrorBody,
    /// The exit status.
    pub exit: u8,
}

/// The `error` of an [`ErrorReport`].
#[derive(Debug, serde::Serialize)]
pub struct ErrorBody {
    /// How to fix it, when the message names a fix.
    pub fix: Option<String>,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let line = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&line)
    }
}

/// An error as one JSON object for `--json` (docs/protocol.md, exit status):
/// `{"error": {"message", "fix"}, "exit": N}`; `fix` is the text after the message's
/// `fix: ` (null when it names none).
pub fn error_json(err: &anyhow::Error) -> ErrorReport {
    let text = error_text(err);
    let (message, fix) = match text.find("fix: ") {
        Some(at) => (
            text[..at]
                .trim_end_matches([' ', ';', ',', '—', '-', '('])
                .to_string(),
            Some(fix_text(&text[at + 5..])),
        ),
        None => (text.clone(), None),
    };
    ErrorReport {
        error: ErrorBody { fix, message },
        exit: status_for(err),
    }
}

/// The fix of a message, from after its `fix: ` to the end: the `)` closing a
/// `(fix: …)` is dropped, a `)` closing a parenthesis of the fix's own
/// (`pick a setting (`rxnode inventory --dry-run` lists its ranges)`) is kept.
fn fix_text(after: &str) -> String {
    let fix = after.trim();
    let open = fix.matches('(').count();
    let close = fix.matches(')').count();
    match fix.strip_suffix(')') {
        Some(inner) if close > open => inner.trim().to_owned(),
        _ => fix.to_owned(),
    }
}

/// A command's successful outcome: usually 0, but `validate` of an invalid
/// file reports its findings and still exits 2.
pub enum Outcome {
    /// Exit 0.
    Done,
    /// Exit with this code after the command printed its own report.
    Code(u8),
}

/// A check's message with the plan-field names among `fields` (`stop_hz`,
/// `duration_s`, …) as fields of the request. Only whole words:
/// `rx.max_sample_rate_hz` stays a policy key.
pub(crate) fn plan_fields(msg: &str, fields: &[&'static str]) -> FieldText {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.' || c == '-';
    let mut out = FieldText::default();
    let mut text = String::new();
    let mut at_boundary = true;
    let mut rest = msg;
    while let Some(c) = rest.chars().next() {
        let hit = fields.iter().find(|f| {
            at_boundary
                && rest.starts_with(**f)
                && !rest[f.len()..].chars().next().is_some_and(word)
        });
        if let Some(f) = hit {
            if !text.is_empty() {
                out = out.then(std::mem::take(&mut text));
            }
            out = out.then_field(f);
            rest = &rest[f.len()..];
            at_boundary = false;
        } else {
            text.push(c);
            rest = &rest[c.len_utf8()..];
            at_boundary = !word(c);
        }
    }
    if text.is_empty() {
        out
    } else {
        out.then(text)
    }
}

#[cfg(test)]
mod field_tests {
    use super::*;

    fn flag(field: &'static str) -> Option<&'static str> {
        match field {
            "plot" => Some("--plot"),
            "force" => Some("--force"),
            _ => None,
        }
    }

    /// The library's message names fields; told with flags it is the same text
    /// with each field replaced, and the same exit status.
    #[test]
    fn fields_are_told_by_the_callers_names() {
        let e = bad_field(
            "plot",
            FieldText::text(": a.png already exists; choose another name, or ")
                .then_field("force")
                .then(" to overwrite it"),
        );
        assert_eq!(
            e.to_string(),
            "plot: a.png already exists; choose another name, or force to overwrite it"
        );
        let told = name_fields(e, flag);
        assert_eq!(
            error_text(&told),
            "--plot: a.png already exists; choose another name, or --force to overwrite it"
        );
        assert_eq!(status_for(&told), 2);
        // A field the caller does not name keeps the library's name.
        let e = name_fields(bad_field("overlap", " 2 must be in [0, 1)"), flag);
        assert_eq!(error_text(&e), "overlap 2 must be in [0, 1)");
    }

    /// A failure that names a field (a plot that cannot be drawn, a file that
    /// cannot be removed) keeps its cause and its exit status, 1.
    #[test]
    fn a_failure_naming_a_field_keeps_its_cause_and_status() {
        let e = field_failure(FieldText::field("plot").then(" a.png: nothing to draw"));
        assert_eq!(status_for(&e), 1);
        let told = name_fields(e, flag);
        assert_eq!(error_text(&told), "--plot a.png: nothing to draw");
        assert_eq!(status_for(&told), 1);
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = field_context(io, FieldText::field("force").then(": cannot remove a.cf32"));
        assert_eq!(format!("{e:#}"), "force: cannot remove a.cf32: denied");
        let told = name_fields(e, flag);
        assert_eq!(error_text(&told), "--force: cannot remove a.cf32: denied");
        assert_eq!(status_for(&told), 1);
        // The cause's own status wins, as for any context.
        let e = field_context(
            bad_input("not a PNG"),
            FieldText::field("plot").then(" a.png"),
        );
        let told = name_fields(e, flag);
        assert_eq!(error_text(&told), "--plot a.png: not a PNG");
        assert_eq!(status_for(&told), 2);
    }

    /// An error that names no field, or a closed pipe, is returned as it is.
    #[test]
    fn other_errors_are_untouched() {
        let pipe = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        let e = name_fields(
            field_context(pipe, FieldText::field("plot").then(" a.png")),
            flag,
        );
        assert!(is_broken_pipe(&e));
        let e = name_fields(refused("rx.max_gain_db 40"), flag);
        assert_eq!(error_text(&e), "refused: rx.max_gain_db 40");
        assert_eq!(status_for(&e), 3);
    }
}

#[cfg(test)]
mod git_code_tests {
    use super::*;

    /// git2's internal class and code never reach the operator; the message does.
    #[test]
    fn git_library_codes_are_dropped_from_error_text() {
        let e =
            anyhow::anyhow!("remote 'nosuch' does not exist; class=Config (7); code=NotFound (-3)")
                .context("fetch failed");
        assert_eq!(
            error_text(&e),
            "fetch failed: remote 'nosuch' does not exist"
        );
        let plain = anyhow::anyhow!("a; code=x but not a git code");
        assert_eq!(error_text(&plain), "a; code=x but not a git code");
    }
}

#[cfg(test)]
mod fix_tests {
    use super::{error_json, refused};

    #[test]
    fn a_json_fix_keeps_the_parenthesis_it_closes_and_drops_one_around_it() {
        let fix = |msg: &str| error_json(&refused(msg.to_owned())).error.fix;
        assert_eq!(
            fix("no such rate — fix: pick a setting the radio supports (`rxnode inventory --dry-run` lists its ranges)")
                .as_deref(),
            Some("pick a setting the radio supports (`rxnode inventory --dry-run` lists its ranges)")
        );
        assert_eq!(
            fix("the lock is held (fix: wait for it)").as_deref(),
            Some("wait for it")
        );
        assert_eq!(fix("x (see y) — fix: run `z`").as_deref(), Some("run `z`"));
        assert_eq!(fix("no fix named here"), None);
    }
}

#[cfg(test)]
mod disk_full_tests {
    use super::{error_json, error_text};
    use anyhow::Context;
    use std::io::{Error, ErrorKind};

    fn failed(kind: ErrorKind, context: &str) -> anyhow::Error {
        Err::<(), _>(Error::from(kind))
            .context(context.to_owned())
            .unwrap_err()
    }

    /// A write that fails on a full disk (or a used-up quota) names the folder whose
    /// disk it is and the fix — free space, then run the command again — as the
    /// `--json` `fix` too; an error with a fix of its own keeps it alone, and
    /// another OS error gets no disk named.
    #[test]
    fn a_full_disk_names_its_folder_and_the_fix() {
        let full = failed(
            ErrorKind::StorageFull,
            "cannot write ./.local/rxnode-run.lock.tmp-1",
        );
        let text = error_text(&full);
        assert!(
            text.ends_with(
                "; the disk holding ./.local is full — fix: free space on it, then run the command again"
            ),
            "{text}"
        );
        let json = error_json(&full);
        assert_eq!(
            json.error.fix.as_deref(),
            Some("free space on it, then run the command again")
        );
        assert!(
            json.error
                .message
                .starts_with("cannot write ./.local/rxnode-run.lock.tmp-1: ")
                && json
                    .error
                    .message
                    .ends_with("the disk holding ./.local is full"),
            "{}",
            json.error.message
        );
        let quota = error_text(&failed(
            ErrorKind::QuotaExceeded,
            "cannot write /srv/lab/.local/x.json",
        ));
        assert!(
            quota.contains("; your quota on the disk holding /srv/lab/.local is used up — fix: "),
            "{quota}"
        );
        let unnamed = error_text(&failed(
            ErrorKind::StorageFull,
            "cannot append to the ledger",
        ));
        assert!(
            unnamed.contains("; the disk is full — fix: free space on it"),
            "{unnamed}"
        );
        let own = error_text(&failed(
            ErrorKind::StorageFull,
            "result lost — fix: keep it",
        ));
        assert!(!own.contains("free space on it"), "{own}");
        let other = error_text(&failed(
            ErrorKind::PermissionDenied,
            "cannot write ./.local/x",
        ));
        assert!(!other.contains("disk"), "{other}");
    }

    /// A write refused by permissions or a read-only file system names who can
    /// fix it and where to look; an error with a fix of its own keeps it alone.
    #[test]
    fn a_refused_write_names_the_fix() {
        let denied = error_json(&failed(
            ErrorKind::PermissionDenied,
            "cannot create ./.local/rxnode.lock.guard",
        ));
        assert!(
            denied
                .error
                .message
                .starts_with("cannot create ./.local/rxnode.lock.guard: "),
            "{}",
            denied.error.message
        );
        assert!(
            denied
                .error
                .fix
                .as_deref()
                .is_some_and(|f| f.starts_with("run rxnode as the user who owns the checkout")),
            "{:?}",
            denied.error.fix
        );
        let ro = error_text(&failed(ErrorKind::ReadOnlyFilesystem, "cannot write x"));
        assert!(
            ro.contains("mounted read-only")
                && ro.contains("fix: give the checkout a writable disk"),
            "{ro}"
        );
        let own = error_text(&failed(
            ErrorKind::PermissionDenied,
            "cannot open /dev/x — fix: add yourself to plugdev",
        ));
        assert!(!own.contains("owns the checkout"), "{own}");
        let other = error_text(&failed(ErrorKind::NotFound, "cannot read x"));
        assert!(!other.contains("fix:"), "{other}");
    }
}
