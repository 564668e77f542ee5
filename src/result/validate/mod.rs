//! The result validator (`validate-result`, and publish's and the main PC's
//! checks): schema, statuses, timeline, MD/JSON agreement, IQ paths and hashes.
mod capture;
mod fields;
#[cfg(test)]
mod strict_tests;
#[cfg(test)]
mod tests;
mod twin;

use super::abs_path::absolute_path_in;
use super::model::{Status, RESULT_JSON};
use anyhow::Result;
use fields::check_schema;
use rxnode_interlock::TaskId;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Component, Path};
use twin::check_markdown;

/// Largest result JSON the validator reads.
const MAX_RESULT_BYTES: u64 = 16 * 1024 * 1024;

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    // ISO 8601 / RFC 3339 with an explicit offset (`Z` or `±HH:MM`), seconds present.
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// Whether a path string is relative to the checkout and stays inside it.
pub(crate) fn is_safe_relative(p: &str) -> bool {
    if p.is_empty() || p.starts_with('/') || p.starts_with('\\') || p.contains('\0') {
        return false;
    }
    let b = p.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return false;
    }
    if p.split(['/', '\\']).any(|c| c == "..") {
        return false;
    }
    Path::new(p)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn sha256_file(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = crate::store::fsutil::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((n, hex::encode(h.finalize())))
}

pub(crate) const TOP_KEYS: &[&str] = &[
    "schema_version",
    "task_id",
    "task_title",
    "status",
    "risk_level",
    "source_branch",
    "source_commit",
    "expected_head",
    "approval",
    "authorization",
    "node",
    "timeline",
    "checks",
    "inventory",
    "captures",
    "tx",
    "errors",
];

/// Top-level keys a result may carry (serialized only when non-empty).
pub(crate) const OPTIONAL_TOP_KEYS: &[&str] = &[
    "sweeps",
    "clkin_compares",
    "freq_cal",
    "interrupted",
    "pictures",
];

struct V<'a> {
    p: &'a mut Vec<String>,
}

impl V<'_> {
    fn bad(&mut self, s: impl Into<String>) {
        self.p.push(s.into());
    }
    fn string<'v>(&mut self, o: &'v Value, key: &str, name: &str) -> Option<&'v str> {
        match o.get(key) {
            None => {
                self.bad(format!("{name}: missing"));
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(v) => {
                self.bad(format!("{name}: expected a string, got {}", kind(v)));
                None
            }
        }
    }
    fn opt_string<'v>(&mut self, o: &'v Value, key: &str, name: &str) -> Option<&'v str> {
        match o.get(key) {
            None => {
                self.bad(format!("{name}: missing (use null)"));
                None
            }
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(v) => {
                self.bad(format!(
                    "{name}: expected a string or null, got {}",
                    kind(v)
                ));
                None
            }
        }
    }
    fn time(&mut self, s: Option<&str>, name: &str) -> Option<time::OffsetDateTime> {
        let s = s?;
        let t = parse_time(s);
        if t.is_none() {
            self.bad(format!(
                "{name}: {s:?} is not ISO 8601 with seconds and an offset (e.g. 2026-01-31T12:00:00+00:00)"
            ));
        }
        t
    }
    fn status(&mut self, v: Option<&Value>, name: &str) -> Option<Status> {
        match v {
            None => {
                self.bad(format!("{name}: missing"));
                None
            }
            Some(Value::String(s)) => {
                let st = Status::parse(s);
                if st.is_none() {
                    self.bad(format!(
                        "{name}: {s:?} is not one of PASS, FAIL, PARTIAL, SKIP, BLOCKED, NOT RUN"
                    ));
                }
                st
            }
            Some(v) => {
                self.bad(format!("{name}: expected a status string, got {}", kind(v)));
                None
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Check a result: schema, statuses, timeline, MD/JSON agreement, IQ paths and
/// hashes on disk under `checkout`. Returns every problem found; empty = valid.
pub fn validate_result_files(json_path: &Path, checkout: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let bytes = match crate::store::fsutil::read_named_file(json_path, MAX_RESULT_BYTES) {
        Ok(b) => b,
        Err(crate::store::fsutil::NamedFileError::TooBig { len: Some(n), .. }) => {
            return vec![format!(
                "{}: {n} bytes; a result is at most {MAX_RESULT_BYTES}",
                json_path.display()
            )]
        }
        Err(e @ crate::store::fsutil::NamedFileError::NotRegular) => {
            return vec![format!(
                "{}: {e}; a result is a file of at most {MAX_RESULT_BYTES} bytes",
                json_path.display()
            )]
        }
        Err(e) => return vec![format!("{}: {e}", json_path.display())],
    };
    // serde keeps the last of two equal keys; a result names each once.
    if let Some(d) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(rxnode_interlock::find_duplicate_key)
    {
        return vec![format!("{}: {d}", json_path.display())];
    }
    let root: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return vec![format!("{}: not valid JSON: {e}", json_path.display())],
    };
    if !root.is_object() {
        return vec![format!(
            "{}: the result must be a JSON object",
            json_path.display()
        )];
    }
    let mut v = V { p: &mut problems };
    check_schema(&root, checkout, &mut v);
    check_no_absolute_paths(&root, "", &mut v);
    check_markdown(json_path, &root, &bytes, &mut v);
    problems
}

/// Results carry only results: no string anywhere may hold an
/// absolute path on any OS — `/etc/…`, `C:\…`, `\\server\…`, `~/…`, `file:/…`.
fn check_no_absolute_paths(x: &Value, at: &str, v: &mut V<'_>) {
    match x {
        Value::String(s) => {
            if let Some(p) = absolute_path_in(s) {
                v.bad(format!(
                    "{}: holds the absolute path {p:?}; a result names files relative to the checkout only",
                    if at.is_empty() { "(top)" } else { at }
                ));
            }
        }
        Value::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                check_no_absolute_paths(e, &format!("{at}[{i}]"), v);
            }
        }
        Value::Object(o) => {
            for (k, e) in o {
                let here = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                if let Some(p) = absolute_path_in(k) {
                    v.bad(format!("{here}: the key holds the absolute path {p:?}"));
                }
                check_no_absolute_paths(e, &here, v);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------- the command

/// `rxnode validate-result TASK_ID|PATH [--json]`: exit 0 valid, 2 invalid.
pub fn cmd_validate_result(
    ctx: &crate::context::Ctx,
    target: &Path,
) -> Result<crate::exit::Outcome> {
    use crate::exit::Outcome;
    let as_path = target;
    // A task ID is text; a path may hold any bytes (a folder name that is not UTF-8).
    let id = target.to_str().map(TaskId::parse);
    let mut as_id = None;
    let json_path = if let (Some(Ok(id)), false) = (id, as_path.exists()) {
        let p = ctx.paths().outbox(&id).join(RESULT_JSON);
        if std::fs::symlink_metadata(&p).is_err() {
            as_id = Some(id);
        }
        p
    } else if as_path.is_dir() {
        as_path.join(RESULT_JSON)
    } else {
        as_path.to_path_buf()
    };
    let mut problems = validate_result_files(&json_path, &ctx.repo);
    if let (Some(id), Some(first)) = (as_id, problems.first_mut()) {
        // Neither a file here nor a result of the task: say which reading was taken.
        first.push_str(&format!(
            " ({} is no file or folder here, so it was read as a task ID: this checkout has no result of it — give the ID of a task this node ran, or the path of an RX_RESULT.json or its folder)",
            id.as_str()
        ));
    }
    /// `validate-result --json`.
    #[derive(serde::Serialize)]
    struct Report<'a> {
        /// The result file checked.
        path: String,
        /// What does not hold, in words.
        problems: &'a [String],
        /// Nothing in `problems`.
        valid: bool,
    }
    let report = Report {
        path: json_path.display().to_string(),
        problems: &problems,
        valid: problems.is_empty(),
    };
    // The verdict is the status: a closed pipe (`| head`) does not change it.
    ctx.report_to_pipe(&report, |_| render_problems(&json_path, &problems))?;
    Ok(if problems.is_empty() {
        Outcome::Done
    } else {
        Outcome::Code(2)
    })
}

/// `validate-result` for a person: the text `valid` for stdout, or each problem and
/// the count printed on stderr here and no text for stdout.
fn render_problems(json_path: &Path, problems: &[String]) -> String {
    let mut out = String::new();
    if problems.is_empty() {
        let _ = writeln!(out, "{}: valid", json_path.display());
        return out;
    }
    // Some problems already start with the path (cannot read, not JSON…): name it once.
    let prefix = format!("{}: ", json_path.display());
    for p in problems {
        note!("{prefix}{}", p.strip_prefix(&prefix).unwrap_or(p));
    }
    note!(
        "{}: invalid ({} problem(s))",
        json_path.display(),
        problems.len()
    );
    out
}
