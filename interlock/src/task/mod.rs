use crate::error::Issue;
use crate::header::{check_header, split_header, TaskHeader, TaskId};
use crate::plan::{find_plan_block, parse_plan, Plan};
use crate::risk::{derive_risk, RiskLevel};
use sha2::{Digest, Sha256};

/// The default watched branch (docs/protocol.md).
pub const DEFAULT_BRANCH: &str = "video-development";

/// The largest task file accepted, in bytes (1 MiB).
pub const MAX_TASK_BYTES: usize = 1024 * 1024;

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What validation needs to know about the node.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    /// The branch this node watches; `SOURCE_BRANCH` must equal it.
    pub watched_branch: String,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            watched_branch: DEFAULT_BRANCH.to_owned(),
        }
    }
}

/// A task that passed every check of docs/protocol.md. Only [`validate_task`] makes one.
#[derive(Debug, Clone)]
pub struct ValidTask {
    header: TaskHeader,
    plan: Option<Plan>,
    plan_line: Option<usize>,
    risk: RiskLevel,
    derived_risk: RiskLevel,
    risk_reasons: Vec<String>,
    sha256: String,
    text: String,
    body: String,
}

impl ValidTask {
    /// The checked header.
    pub fn header(&self) -> &TaskHeader {
        &self.header
    }
    /// The task ID.
    pub fn id(&self) -> &TaskId {
        &self.header.task_id
    }
    /// The plan, or `None` for a manual task.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }
    /// Line of the `rx-plan` fence, when there is a plan.
    pub fn plan_line(&self) -> Option<usize> {
        self.plan_line
    }
    /// The effective risk: the derived one, or the declared one when higher.
    pub fn risk(&self) -> RiskLevel {
        self.risk
    }
    /// The risk derived from the flags alone.
    pub fn derived_risk(&self) -> RiskLevel {
        self.derived_risk
    }
    /// Why the risk is what it is, one line each.
    pub fn risk_reasons(&self) -> &[String] {
        &self.risk_reasons
    }
    /// Lower-case hex SHA-256 of the exact task bytes (BOM and CRLF included).
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// The exact task text.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// The Markdown body after the header.
    pub fn body(&self) -> &str {
        &self.body
    }
    /// Whether this task transmits (`RF_TX = YES`).
    pub fn is_rf_tx(&self) -> bool {
        self.header.rf_tx
    }
}

/// Validate task bytes: size, UTF-8, no binary content, then [`validate_task`].
///
/// The size check comes first so an oversized input is never decoded.
pub fn validate_task_bytes(bytes: &[u8], opts: &ValidateOptions) -> Result<ValidTask, Vec<Issue>> {
    if bytes.len() > MAX_TASK_BYTES {
        return Err(vec![Issue::new(
            None,
            None,
            format!(
                "task file is {} bytes; at most {} (1 MiB)",
                bytes.len(),
                MAX_TASK_BYTES
            ),
        )]);
    }
    // An editor's "Unicode" (UTF-16, as Windows Notepad saves it) is named as such,
    // not as binary content.
    if let Some(enc) = utf16_bom(bytes) {
        return Err(vec![Issue::new(
            Some(1),
            None,
            format!(
                "task file is {enc} (it starts with that byte order mark); a task is UTF-8: \
                 save it as UTF-8"
            ),
        )]);
    }
    if let Some(pos) = bytes.iter().position(|b| *b == 0) {
        let line = bytes[..pos].iter().filter(|b| **b == b'\n').count() + 1;
        return Err(vec![Issue::new(
            Some(line),
            None,
            "binary content (NUL byte) in task file",
        )]);
    }
    match std::str::from_utf8(bytes) {
        Ok(t) => validate_task(t, opts),
        Err(e) => {
            let pos = e.valid_up_to();
            let line = bytes[..pos].iter().filter(|b| **b == b'\n').count() + 1;
            Err(vec![Issue::new(
                Some(line),
                None,
                format!("task file is not UTF-8 (invalid byte at offset {pos})"),
            )])
        }
    }
}

/// Parse and check a task text. Returns every problem found, not only the first.
pub fn validate_task(text: &str, opts: &ValidateOptions) -> Result<ValidTask, Vec<Issue>> {
    let unbom = refuse_unreadable(text)?;
    let mut issues = Vec::new();
    let parts = parse_parts(unbom, opts, &mut issues);
    if !issues.is_empty() {
        // File order for the reader; problems without a line first (stable sort).
        issues.sort_by_key(|i| i.line.unwrap_or(0));
        return Err(issues);
    }
    let Some(header) = parts.header else {
        return Err(vec![Issue::new(None, None, "invalid header")]);
    };
    let (derived, mut reasons) = derive_risk(header.hardware_access, header.rf_rx, header.rf_tx);
    let risk = match header.declared_risk {
        Some(d) if d > derived => {
            reasons.push(format!(
                "declared RISK_LEVEL = {d} (higher than derived {derived}; kept)"
            ));
            d
        }
        _ => derived,
    };
    Ok(ValidTask {
        risk,
        derived_risk: derived,
        risk_reasons: reasons,
        sha256: sha256_hex(text.as_bytes()),
        text: text.to_owned(),
        body: parts.body.to_owned(),
        plan: parts.plan,
        plan_line: parts.plan_line,
        header,
    })
}

/// A text that cannot be a task at all (too big, binary, empty) is refused
/// with that one issue; otherwise the text without its byte-order mark.
fn refuse_unreadable(text: &str) -> Result<&str, Vec<Issue>> {
    if text.len() > MAX_TASK_BYTES {
        return Err(vec![Issue::new(
            None,
            None,
            format!(
                "task file is {} bytes; at most {MAX_TASK_BYTES} (1 MiB)",
                text.len()
            ),
        )]);
    }
    if text.contains('\0') {
        return Err(vec![Issue::new(
            None,
            None,
            "binary content (NUL byte) in task file",
        )]);
    }
    let unbom = text.strip_prefix('\u{feff}').unwrap_or(text);
    if unbom.trim().is_empty() {
        return Err(vec![Issue::new(Some(1), None, "task file is empty")]);
    }
    if let Some(why) = lfs_pointer(unbom) {
        return Err(vec![Issue::new(Some(1), None, why)]);
    }
    Ok(unbom)
}

/// The first lines of a Git LFS pointer file (the current spec and its
/// pre-release name).
const LFS_POINTER_VERSIONS: [&str; 2] = [
    "version https://git-lfs.github.com/spec/v1",
    "version https://hawser.github.com/spec/v1",
];

/// Why `text` is not a task when it is a Git LFS pointer (the file a main PC's
/// Git commits in place of the content when `.gitattributes` gives the task
/// path `filter=lfs`): the task itself is on an LFS server rxnode never
/// contacts, so each of its header lines would be named missing instead.
fn lfs_pointer(text: &str) -> Option<String> {
    let first = text.lines().next()?.trim_end();
    if !LFS_POINTER_VERSIONS.contains(&first) {
        return None;
    }
    let value = |key: &str| {
        text.lines()
            .take(8)
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().chars().take(80).collect::<String>())
    };
    let what = match (value("oid "), value("size ")) {
        (Some(oid), Some(size)) => format!(" (oid {oid}, {size} bytes)"),
        (Some(oid), None) => format!(" (oid {oid})"),
        _ => String::new(),
    };
    Some(format!(
        "task file is a Git LFS pointer{what}, not the task: the main PC's Git stored the \
         task through Git LFS (a `filter=lfs` line of its .gitattributes covers the task \
         path), and a node reads only what is in Git; commit the task file as a plain file"
    ))
}

/// A task text read into its parts; any part may have failed (see the issues).
struct Parts<'a> {
    header: Option<TaskHeader>,
    body: &'a str,
    plan: Option<Plan>,
    plan_line: Option<usize>,
}

/// Header, body and the one `rx-plan` block of the text, each checked; every
/// problem goes to `issues`.
fn parse_parts<'a>(unbom: &'a str, opts: &ValidateOptions, issues: &mut Vec<Issue>) -> Parts<'a> {
    let (raw, body_offset) = split_header(unbom, issues);
    if raw.entries.is_empty() {
        issues.push(Issue::new(
            Some(1),
            None,
            "no header: the file must start with KEY = VALUE lines",
        ));
    }
    let header = check_header(&raw, &opts.watched_branch, issues);
    let body = &unbom[body_offset.min(unbom.len())..];
    // The plan as CommonMark reads the whole file (header included), as a
    // reviewer's Markdown viewer shows it.
    let block = find_plan_block(unbom, issues);
    let plan_line = block.as_ref().map(|b| b.line);
    let plan = block.and_then(|b| parse_plan(&b.json, b.line, header.as_ref(), issues));
    Parts {
        header,
        body,
        plan,
        plan_line,
    }
}

/// The encoding a file's UTF-16 byte order mark names (`UTF-16 little-endian`,
/// as an editor's "Unicode" saves it), when it starts with one: what a refusal
/// of a task or a policy that is not UTF-8 names.
pub fn utf16_bom(bytes: &[u8]) -> Option<&'static str> {
    match bytes.get(..2) {
        Some([0xFF, 0xFE]) => Some("UTF-16 little-endian"),
        Some([0xFE, 0xFF]) => Some("UTF-16 big-endian"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
