//! The task header: `KEY = VALUE` lines split from the body, each field checked,
//! every problem listed with its line; the names it carries are in `names`, its
//! schema in `schema`.
use crate::error::{Error, Issue};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod names;
mod schema;

pub use names::{check_node_name, same_folder, same_folder_groups, TaskId, MAX_NODE_NAME_LEN};
pub(crate) use schema::header_schema;

/// What a task allows to be pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AllowPush {
    /// Nothing may be pushed.
    #[serde(rename = "NO")]
    No,
    /// Only the RX result may be published to `rx-node`.
    #[serde(rename = "RX_RESULT_ONLY")]
    RxResultOnly,
}

impl AllowPush {
    /// The protocol spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AllowPush::No => "NO",
            AllowPush::RxResultOnly => "RX_RESULT_ONLY",
        }
    }
}

/// The parsed and checked header of a task file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskHeader {
    /// `TASK_ID`.
    pub task_id: TaskId,
    /// `TASK_TITLE`.
    pub task_title: String,
    /// `SOURCE_BRANCH` (equals the watched branch).
    pub source_branch: String,
    /// `EXPECTED_HEAD`, 40 lower- or upper-case hex digits as written.
    pub expected_head: String,
    /// `HARDWARE_ACCESS`.
    pub hardware_access: bool,
    /// `RF_RX`.
    pub rf_rx: bool,
    /// `RF_TX`.
    pub rf_tx: bool,
    /// `ALLOW_COMMIT`.
    pub allow_commit: bool,
    /// `ALLOW_PUSH`.
    pub allow_push: AllowPush,
    /// `RISK_LEVEL` as declared, if any.
    pub declared_risk: Option<crate::RiskLevel>,
    /// `TARGET_NODES`: the node names the task is for; `None` = every node.
    pub target_nodes: Option<Vec<String>>,
    /// The header lines as `(line, key, value)`, in file order, for display.
    pub lines: Vec<(usize, String, String)>,
}

pub(crate) const FIELDS: &[&str] = &[
    "TASK_ID",
    "TASK_TITLE",
    "SOURCE_BRANCH",
    "EXPECTED_HEAD",
    "REQUIRES_APPROVAL",
    "HARDWARE_ACCESS",
    "RF_RX",
    "RF_TX",
    "ALLOW_COMMIT",
    "ALLOW_PUSH",
    "RISK_LEVEL",
    "TARGET_NODES",
];

pub(crate) const OPTIONAL: &[&str] = &["RISK_LEVEL", "TARGET_NODES"];

/// Raw header: `(line, key, value)` in file order.
pub(crate) struct RawHeader {
    pub entries: Vec<(usize, String, String)>,
}

/// Split the text (BOM already stripped) into header entries and body.
/// Line endings `\n` and `\r\n` are accepted.
/// What surrounds a header key or value and is dropped: spaces and tabs.
const HEADER_SPACE: [char; 2] = [' ', '\t'];

pub(crate) fn split_header(text: &str, issues: &mut Vec<Issue>) -> (RawHeader, usize) {
    let mut entries = Vec::new();
    let mut offset = 0usize;
    let mut line_no = 0usize;
    let mut body_offset = text.len();
    for raw in text.split_inclusive('\n') {
        line_no += 1;
        let line = raw
            .strip_suffix('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .unwrap_or(raw);
        offset += raw.len();
        // Only ASCII spaces and tabs are trimmed: Unicode white space such as
        // U+0085 (a C1 control) is kept, so it is refused, never hidden.
        if line.trim_matches(HEADER_SPACE).is_empty() {
            body_offset = offset;
            break;
        }
        match line.split_once('=') {
            Some((k, v)) => {
                let key = k.trim_matches(HEADER_SPACE);
                let value = v.trim_matches(HEADER_SPACE);
                if key.is_empty() {
                    issues.push(Issue::new(
                        Some(line_no),
                        None,
                        "header line has no field name before '='",
                    ));
                } else {
                    entries.push((line_no, key.to_owned(), value.to_owned()));
                }
            }
            None => {
                issues.push(Issue::new(
                    Some(line_no),
                    None,
                    format!("header line is not KEY = VALUE: {:?}", truncate(line, 80)),
                ));
            }
        }
    }
    (RawHeader { entries }, body_offset)
}

/// The `TASK_ID` of a task file's header, read leniently: the first `TASK_ID`
/// line of the header (before the first blank line, as [`split_header`]
/// reads it), whatever else is wrong with the file. `None` when the bytes are
/// not UTF-8 or that line holds no valid ID. For naming an invalid file in
/// records only; it decides nothing.
pub fn lenient_task_id(bytes: &[u8]) -> Option<TaskId> {
    TaskId::parse(&lenient_field(bytes, "TASK_ID")?).ok()
}

/// The value of header field `name` as the header's first such line gives it,
/// whatever else is wrong with the file; `None` when the bytes are not UTF-8 or
/// the header has no such line. Like [`lenient_task_id`], for naming and showing
/// only; it decides nothing.
pub fn lenient_field(bytes: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (raw, _) = split_header(text, &mut Vec::new());
    let (_, _, value) = raw.entries.iter().find(|(_, k, _)| k == name)?;
    Some(value.clone())
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}

fn yes_no(line: usize, field: &str, v: &str, issues: &mut Vec<Issue>) -> Option<bool> {
    match v {
        "YES" => Some(true),
        "NO" => Some(false),
        other => {
            issues.push(Issue::new(
                Some(line),
                Some(field),
                format!(
                    "invalid value {:?}: expected YES or NO",
                    truncate(other, 80)
                ),
            ));
            None
        }
    }
}

/// The header's known fields, each at its first line: `key → (line, value)`.
/// The known fields at their first line, and the known fields present only with
/// a refused value (already an issue: never called missing as well).
struct Seen<'a>(BTreeMap<&'a str, (usize, &'a str)>, BTreeSet<&'a str>);

impl<'a> Seen<'a> {
    fn get(&self, k: &str) -> Option<(usize, &'a str)> {
        self.0.get(k).copied()
    }

    /// A YES/NO field; `None` when it is missing or invalid.
    fn flag(&self, k: &str, issues: &mut Vec<Issue>) -> Option<bool> {
        self.get(k).and_then(|(l, v)| yes_no(l, k, v, issues))
    }

    /// The line of field `k`, if it is present.
    fn line(&self, k: &str) -> Option<usize> {
        self.get(k).map(|x| x.0)
    }
}

/// The three fields the risk is derived from, as parsed (`None`: failed).
#[derive(Clone, Copy)]
struct Access {
    hardware_access: Option<bool>,
    rf_rx: Option<bool>,
    rf_tx: Option<bool>,
}

/// Check the raw entries against the field table; collects every problem.
pub(crate) fn check_header(
    raw: &RawHeader,
    watched_branch: &str,
    issues: &mut Vec<Issue>,
) -> Option<TaskHeader> {
    let seen = known_fields(raw, issues);
    missing_fields(raw, &seen, issues);
    let task_id = task_id(&seen, issues);
    let task_title = task_title(&seen, issues);
    let source_branch = source_branch(&seen, watched_branch, issues);
    let expected_head = expected_head(&seen, issues);
    requires_approval(&seen, issues);
    let access = Access {
        hardware_access: seen.flag("HARDWARE_ACCESS", issues),
        rf_rx: seen.flag("RF_RX", issues),
        rf_tx: seen.flag("RF_TX", issues),
    };
    let allow_commit = seen.flag("ALLOW_COMMIT", issues);
    let allow_push = allow_push(&seen, issues);
    let declared_risk = declared_risk(&seen, issues);
    let target_nodes = target_nodes(&seen, issues);
    contradictions(&seen, access, declared_risk, issues);
    // Every field that failed is `None` here, so `?` below gives no header; a
    // header whose fields all parsed is returned even when other lines were
    // bad, so the plan's body/header conflicts are still reported (the task is
    // rejected all the same: the caller has the issues).
    Some(TaskHeader {
        task_id: task_id?,
        task_title: task_title?,
        source_branch: source_branch?,
        expected_head: expected_head?,
        hardware_access: access.hardware_access?,
        rf_rx: access.rf_rx?,
        rf_tx: access.rf_tx?,
        allow_commit: allow_commit?,
        allow_push: allow_push?,
        declared_risk: declared_risk?,
        target_nodes: target_nodes?,
        lines: raw.entries.clone(),
    })
}

/// The known fields of the header, each at its first line; unknown fields,
/// values holding invisible format characters and repeated fields are issues.
fn known_fields<'a>(raw: &'a RawHeader, issues: &mut Vec<Issue>) -> Seen<'a> {
    let mut seen: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    let mut refused = BTreeSet::new();
    for (line, key, value) in &raw.entries {
        if !FIELDS.contains(&key.as_str()) {
            let shown = crate::strict_json::visible(&truncate(key, 80));
            let why = crate::strict_json::non_ascii_note(key)
                .map(|n| {
                    let hint = lookalike_of(key)
                        .map(|f| format!("; did you mean {f}?"))
                        .unwrap_or_default();
                    format!(" ({n}: keys are ASCII{hint})")
                })
                .or_else(|| misspelling_of(key).map(|f| format!(" (did you mean {f}?)")))
                .unwrap_or_default();
            issues.push(Issue::new(
                Some(*line),
                Some(&shown),
                format!("unknown field \"{shown}\"{why}"),
            ));
            continue;
        }
        if let Some(u) = crate::strict_json::format_char_in(value) {
            issues.push(Issue::new(
                Some(*line),
                Some(key),
                format!(
                    "value holds {u} (bidi/zero-width/control characters could make the prompt show something else)"
                ),
            ));
            refused.insert(key.as_str());
            continue;
        }
        if let Some((first, _)) = seen.get(key.as_str()) {
            issues.push(Issue::new(
                Some(*line),
                Some(key),
                format!("duplicate field {key} (first on line {first})"),
            ));
            continue;
        }
        seen.insert(key.as_str(), (*line, value.as_str()));
    }
    Seen(seen, refused)
}

/// The known field that `key` spells with look-alike characters (Cyrillic `Т`,
/// Greek `Ο`, fullwidth letters) in place of some of its letters, or with
/// invisible characters added.
fn lookalike_of(key: &str) -> Option<&'static str> {
    let mut ascii = String::new();
    for c in key.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else if crate::strict_json::is_format_char(c) {
            continue;
        } else {
            ascii.push(crate::strict_json::latin_lookalike(c)?);
        }
    }
    FIELDS.iter().copied().find(|f| *f == ascii)
}

/// The known field an ASCII `key` misspells (`RF_RXX`, `TASK_TITEL`, `rf_rx`):
/// the one nearest it, letters compared without case, when it is within two edits
/// (insert, delete, replace, swap two neighbours) and no other field is as near.
fn misspelling_of(key: &str) -> Option<&'static str> {
    if !key.is_ascii() || key.len() > 64 {
        return None;
    }
    let key = key.to_ascii_uppercase();
    let mut by_distance: Vec<(usize, &'static str)> = FIELDS
        .iter()
        .map(|f| (edit_distance(&key, f), *f))
        .collect();
    by_distance.sort_unstable();
    match by_distance.as_slice() {
        [(d, f), rest @ ..] if *d <= 2 && rest.first().is_none_or(|(d2, _)| d2 > d) => Some(f),
        _ => None,
    }
}

/// Optimal string alignment distance between two ASCII strings: insertions,
/// deletions, replacements and swaps of two neighbouring letters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// Every required field that is not there, reported on the header's first line.
fn missing_fields(raw: &RawHeader, seen: &Seen<'_>, issues: &mut Vec<Issue>) {
    let header_line = raw.entries.first().map(|e| e.0).unwrap_or(1);
    for f in FIELDS {
        if !OPTIONAL.contains(f) && !seen.0.contains_key(f) && !seen.1.contains(f) {
            issues.push(Issue::new(
                Some(header_line),
                Some(f),
                format!("missing required field {f}"),
            ));
        }
    }
}

fn task_id(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<TaskId> {
    seen.get("TASK_ID")
        .and_then(|(l, v)| match TaskId::parse(v) {
            Ok(id) => Some(id),
            Err(Error::ReservedTaskId { name, .. }) => {
                issues.push(Issue::new(
                    Some(l),
                    Some("TASK_ID"),
                    format!(
                        "invalid value {v:?}: {name} is a reserved device name on Windows \
                         (the task's outbox and IQ folders are named after it)"
                    ),
                ));
                None
            }
            Err(_) => {
                issues.push(Issue::new(
                    Some(l),
                    Some("TASK_ID"),
                    format!(
                    "invalid value {:?}: must match [A-Za-z0-9_-]{{1,64}} and not start with '-'",
                    truncate(v, 80)
                ),
                ));
                None
            }
        })
}

/// `TARGET_NODES = LAB-RX1, LAB-RX2`: `Some(None)` when absent (every node), `None`
/// when invalid (an empty list or entry, a repeated or invalid name).
fn target_nodes(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<Option<Vec<String>>> {
    let Some((l, v)) = seen.get("TARGET_NODES") else {
        return Some(None);
    };
    let mut bad = |msg: String| issues.push(Issue::new(Some(l), Some("TARGET_NODES"), msg));
    if v.is_empty() {
        bad("empty list; name at least one node, or leave the field out for every node".into());
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    let mut ok = true;
    for (i, part) in v.split(',').enumerate() {
        let name = part.trim();
        if name.is_empty() {
            bad(format!("entry {} is empty (a stray comma?)", i + 1));
            ok = false;
        } else if let Err(e) = check_node_name(name) {
            bad(format!("entry {}: {e}", i + 1));
            ok = false;
        } else if names.iter().any(|n| n == name) {
            bad(format!("node {name} is listed twice"));
            ok = false;
        } else if let Some(n) = names.iter().find(|n| same_folder(n, name)) {
            bad(format!(
                "nodes {n} and {name} differ only in letter case: on a case-insensitive file system \
                 (Windows, macOS) their results share one folder rx-results/<TASK_ID>/{n}/"
            ));
            ok = false;
        } else {
            names.push(name.to_owned());
        }
    }
    ok.then_some(Some(names))
}

fn task_title(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<String> {
    seen.get("TASK_TITLE").and_then(|(l, v)| {
        if v.is_empty() {
            issues.push(Issue::new(Some(l), Some("TASK_TITLE"), "empty title"));
            None
        } else if v.chars().count() > 200 {
            issues.push(Issue::new(
                Some(l),
                Some("TASK_TITLE"),
                format!(
                    "title is {} characters long; at most 200",
                    v.chars().count()
                ),
            ));
            None
        } else if v.chars().any(char::is_control) {
            issues.push(Issue::new(
                Some(l),
                Some("TASK_TITLE"),
                "title contains control characters",
            ));
            None
        } else {
            Some(v.to_owned())
        }
    })
}

fn source_branch(seen: &Seen<'_>, watched_branch: &str, issues: &mut Vec<Issue>) -> Option<String> {
    seen.get("SOURCE_BRANCH").and_then(|(l, v)| {
        if v == watched_branch {
            Some(v.to_owned())
        } else {
            issues.push(Issue::new(
                Some(l),
                Some("SOURCE_BRANCH"),
                format!(
                    "{:?} is not the watched branch {:?}",
                    truncate(v, 80),
                    watched_branch
                ),
            ));
            None
        }
    })
}

fn expected_head(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<String> {
    seen.get("EXPECTED_HEAD").and_then(|(l, v)| {
        if v.len() == 40 && v.bytes().all(|b| b.is_ascii_hexdigit()) {
            Some(v.to_owned())
        } else {
            issues.push(Issue::new(
                Some(l),
                Some("EXPECTED_HEAD"),
                format!(
                    "invalid value {:?}: expected exactly 40 hex characters",
                    truncate(v, 80)
                ),
            ));
            None
        }
    })
}

/// `REQUIRES_APPROVAL` must be `YES`; it parses to nothing.
fn requires_approval(seen: &Seen<'_>, issues: &mut Vec<Issue>) {
    if let Some((l, v)) = seen.get("REQUIRES_APPROVAL") {
        match v {
            "YES" => {}
            "NO" => issues.push(Issue::new(
                Some(l),
                Some("REQUIRES_APPROVAL"),
                "NO is rejected: a node never runs unapproved work",
            )),
            other => issues.push(Issue::new(
                Some(l),
                Some("REQUIRES_APPROVAL"),
                format!("invalid value {:?}: expected YES", truncate(other, 80)),
            )),
        }
    }
}

fn allow_push(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<AllowPush> {
    seen.get("ALLOW_PUSH").and_then(|(l, v)| match v {
        "NO" => Some(AllowPush::No),
        "RX_RESULT_ONLY" => Some(AllowPush::RxResultOnly),
        other => {
            issues.push(Issue::new(
                Some(l),
                Some("ALLOW_PUSH"),
                format!(
                    "invalid value {:?}: expected NO or RX_RESULT_ONLY",
                    truncate(other, 80)
                ),
            ));
            None
        }
    })
}

/// `RISK_LEVEL`: `Some(None)` when absent (it is optional), `None` when invalid.
fn declared_risk(seen: &Seen<'_>, issues: &mut Vec<Issue>) -> Option<Option<crate::RiskLevel>> {
    match seen.get("RISK_LEVEL") {
        None => Some(None),
        Some((l, v)) => match crate::RiskLevel::parse(v) {
            Some(r) => Some(Some(r)),
            None => {
                issues.push(Issue::new(
                    Some(l),
                    Some("RISK_LEVEL"),
                    format!(
                        "invalid value {:?}: expected GREEN, YELLOW or RED",
                        truncate(v, 80)
                    ),
                ));
                None
            }
        },
    }
}

/// Fields that parsed but contradict each other: RF without hardware access,
/// a declared risk below the derived one.
fn contradictions(
    seen: &Seen<'_>,
    access: Access,
    declared_risk: Option<Option<crate::RiskLevel>>,
    issues: &mut Vec<Issue>,
) {
    let Access {
        hardware_access,
        rf_rx,
        rf_tx,
    } = access;
    if let (Some(false), Some(true)) = (hardware_access, rf_rx) {
        issues.push(Issue::new(
            seen.line("RF_RX"),
            Some("RF_RX"),
            "RF_RX = YES needs HARDWARE_ACCESS = YES",
        ));
    }
    if let (Some(false), Some(true)) = (hardware_access, rf_tx) {
        issues.push(Issue::new(
            seen.line("RF_TX"),
            Some("RF_TX"),
            "RF_TX = YES needs HARDWARE_ACCESS = YES",
        ));
    }
    if let (Some(h), Some(r), Some(t), Some(Some(declared))) =
        (hardware_access, rf_rx, rf_tx, declared_risk)
    {
        let (derived, reasons) = crate::derive_risk(h, r, t);
        if declared < derived {
            issues.push(Issue::new(
                seen.line("RISK_LEVEL"),
                Some("RISK_LEVEL"),
                format!(
                    "declared {declared} is lower than the derived {derived} ({})",
                    reasons.join(", ")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::names::windows_reserved;
    use super::*;

    /// A misspelt field (`RF_RXX`, `TASK_TITEL`, `rf_rx`) is named with the one
    /// known field it is nearest within two edits; a key near none, or as near
    /// two, gets no guess.
    #[test]
    fn a_misspelt_header_field_names_the_field_meant() {
        assert_eq!(misspelling_of("RF_RXX"), Some("RF_RX"));
        assert_eq!(misspelling_of("TASK_TITEL"), Some("TASK_TITLE"));
        assert_eq!(misspelling_of("rf_rx"), Some("RF_RX"));
        assert_eq!(misspelling_of("HARDWARE_ACESS"), Some("HARDWARE_ACCESS"));
        assert_eq!(misspelling_of("RF_XX"), None, "as near RF_RX as RF_TX");
        assert_eq!(misspelling_of("POWER_W"), None);
        assert_eq!(edit_distance("AB", "BA"), 1);
        assert_eq!(edit_distance("", "RF_RX"), 5);
        let raw = RawHeader {
            entries: vec![(7, "RF_RXX".to_owned(), "YES".to_owned())],
        };
        let mut issues = Vec::new();
        let _ = known_fields(&raw, &mut issues);
        assert!(
            issues.iter().any(
                |i| i.message == "unknown field \"RF_RXX\" (did you mean RF_RX?)"
                    && i.line == Some(7)
            ),
            "{issues:?}"
        );
    }

    #[test]
    fn task_id_rules() {
        assert!(TaskId::parse("WATCHER_TEST_001").is_ok());
        assert!(TaskId::parse("a-b_C9").is_ok());
        assert!(TaskId::parse(&"x".repeat(64)).is_ok());
        assert!(TaskId::parse(&"x".repeat(65)).is_err());
        assert!(TaskId::parse("").is_err());
        assert!(TaskId::parse("../etc").is_err());
        assert!(TaskId::parse("a b").is_err());
        assert!(TaskId::parse("a/b").is_err());
        assert!(TaskId::parse("é").is_err());
        assert!(TaskId::parse("CONSOLE").is_ok());
        assert!(TaskId::parse("COM10").is_ok());
        assert!(TaskId::parse("NUL_1").is_ok());
    }

    #[test]
    fn lenient_id_reads_only_a_usable_header_id() {
        let id = |b: &[u8]| lenient_task_id(b).map(|t| t.to_string());
        assert_eq!(
            id(b"TASK_ID = ok_1\nRF_RX = MAYBE\n\nbody").as_deref(),
            Some("ok_1")
        );
        assert_eq!(
            id("\u{feff}TASK_ID=B2\r\n".as_bytes()).as_deref(),
            Some("B2")
        );
        assert_eq!(id(b"TASK_ID = ../etc\n"), None);
        assert_eq!(id(b"TITLE = x\n\nTASK_ID = late\n"), None);
        assert_eq!(id(&[0xff, 0xfe]), None);
    }

    /// A header field read leniently (for showing a title's branch): the header's
    /// first such line, BOM and CRLF aside, never a line of the body, and `None`
    /// for bytes that are not UTF-8.
    #[test]
    fn lenient_field_reads_the_header_line_whatever_else_is_wrong() {
        let branch = |b: &[u8]| lenient_field(b, "SOURCE_BRANCH");
        assert_eq!(
            branch(
                b"TASK_ID = x y
SOURCE_BRANCH = lab-main
RF_RX = MAYBE
"
            )
            .as_deref(),
            Some("lab-main")
        );
        assert_eq!(
            branch("\u{feff}SOURCE_BRANCH=b2\r\n".as_bytes()).as_deref(),
            Some("b2")
        );
        assert_eq!(
            branch(
                b"TASK_ID = a

SOURCE_BRANCH = late
"
            ),
            None
        );
        assert_eq!(branch(&[0xff, 0xfe]), None);
    }

    /// Task IDs name folders on the RX laptop: the reserved Windows device
    /// names are refused in any letter case, naming the field, line and value.
    #[test]
    fn reserved_windows_device_names_are_not_task_ids() {
        for id in [
            "CON", "con", "Prn", "AUX", "nul", "COM1", "com9", "COM0", "LPT1", "lpt9", "LPT0",
        ] {
            match TaskId::parse(id) {
                Err(Error::ReservedTaskId { id: got, name }) => {
                    assert_eq!(got, id);
                    assert!(name.eq_ignore_ascii_case(id), "{name}");
                }
                other => panic!("{id}: {other:?}"),
            }
            let text = crate::testutil::render(
                &crate::testutil::set(
                    crate::testutil::fields("NO", "NO", "NO"),
                    "TASK_ID",
                    Some(id),
                ),
                "Body.\n",
            );
            let m: Vec<String> = crate::testutil::errs(&text)
                .iter()
                .map(|i| i.to_string())
                .collect();
            assert!(
                m.iter()
                    .any(|s| s.starts_with("line 1: TASK_ID: invalid value")
                        && s.contains(&format!("{id:?}"))
                        && s.contains("reserved device name on Windows")),
                "{id}: {m:?}"
            );
        }
        // The stem rule as Windows applies it, for names the pattern lets through elsewhere.
        assert_eq!(windows_reserved("NUL.txt"), Some("NUL"));
        assert_eq!(windows_reserved("con "), Some("CON"));
        assert_eq!(windows_reserved("COM1."), Some("COM1"));
        assert_eq!(windows_reserved("CONX"), None);
        // A trailing dot or space never passes the pattern.
        assert!(TaskId::parse("A.").is_err());
        assert!(TaskId::parse("A ").is_err());
    }
}
