//! The Markdown twin agrees with the JSON: trailer hash, task, status, rows.
use super::V;
use crate::result::md_cell::md_cell;
use rxnode_interlock::sha256_hex;
use serde_json::Value;
use std::path::Path;

/// The Markdown twin agrees with the JSON bytes and the parsed result `r`.
pub(super) fn check_markdown(json_path: &Path, r: &Value, json_bytes: &[u8], v: &mut V<'_>) {
    let md_path = json_path.with_extension("md");
    let Some(md) = read_twin(&md_path, v) else {
        return;
    };
    let twin = Twin {
        json_path,
        md_path: &md_path,
        md: &md,
    };
    let Some(line) = twin
        .md
        .lines()
        .rev()
        .find(|l| l.starts_with("<!-- rxnode-result "))
    else {
        v.bad(format!(
            "{}: no `<!-- rxnode-result … -->` trailer line",
            md_path.display()
        ));
        return;
    };
    twin.check_trailer(line, r, json_bytes, v);
    twin.check_rows(r, v);
}

/// The twin's text, when it can be read as UTF-8.
fn read_twin(md_path: &Path, v: &mut V<'_>) -> Option<String> {
    match crate::store::fsutil::read_named_file(md_path, super::MAX_RESULT_BYTES) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => Some(s),
            Err(_) => {
                v.bad(format!("{}: not UTF-8", md_path.display()));
                None
            }
        },
        Err(e) => {
            v.bad(format!(
                "{}: cannot read the Markdown twin: {e}",
                md_path.display()
            ));
            None
        }
    }
}

/// The two files of one result, the Markdown read.
struct Twin<'a> {
    json_path: &'a Path,
    md_path: &'a Path,
    md: &'a str,
}

impl Twin<'_> {
    /// The trailer names the JSON's SHA-256, its task and its status.
    fn check_trailer(&self, line: &str, r: &Value, json_bytes: &[u8], v: &mut V<'_>) {
        let field = |key: &str| -> Option<String> {
            let rest = line.split(&format!(" {key}=")).nth(1)?;
            if let Some(q) = rest.strip_prefix('"') {
                q.split('"').next().map(str::to_owned)
            } else {
                rest.split_whitespace().next().map(str::to_owned)
            }
        };
        let json_sha = sha256_hex(json_bytes);
        match field("json_sha256") {
            Some(s) if s == json_sha => {}
            Some(s) => v.bad(format!(
                "{}: trailer json_sha256 {s} does not match {} ({json_sha}): the files disagree",
                self.md_path.display(),
                self.json_path.display()
            )),
            None => v.bad(format!(
                "{}: trailer has no json_sha256",
                self.md_path.display()
            )),
        }
        // A value quoted (escaped as Rust quotes a string), an absent one said so:
        // never Rust's `Some(..)`/`None` in a message.
        let quoted = |s: Option<&str>| s.map_or_else(|| "(none)".to_owned(), |s| format!("{s:?}"));
        for key in ["task_id", "status"] {
            let in_json = r.get(key).and_then(Value::as_str);
            let in_trailer = field(key);
            if in_trailer.as_deref() != in_json {
                v.bad(format!(
                    "{}: trailer {key} {} disagrees with the JSON {}",
                    self.md_path.display(),
                    quoted(in_trailer.as_deref()),
                    quoted(in_json)
                ));
            }
        }
    }

    /// The summary's status row and one row per check, as the JSON has them.
    fn check_rows(&self, r: &Value, v: &mut V<'_>) {
        let jst = r.get("status").and_then(Value::as_str);
        if let Some(st) = jst {
            let row = format!("| Status | {st} |");
            if !self.md.lines().any(|l| l == row) {
                v.bad(format!(
                    "{}: summary row `{row}` not found: the files disagree",
                    self.md_path.display()
                ));
            }
        }
        if let Some(checks) = r.get("checks").and_then(Value::as_array) {
            for (i, c) in checks.iter().enumerate() {
                let name = c.get("name").and_then(Value::as_str).unwrap_or("");
                let st = c.get("status").and_then(Value::as_str).unwrap_or("");
                let prefix = format!("| {} | {} | {} |", i + 1, md_cell(name), st);
                if !self.md.lines().any(|l| l.starts_with(&prefix)) {
                    v.bad(format!(
                        "{}: check row `{prefix}` not found: the files disagree",
                        self.md_path.display()
                    ));
                }
            }
        }
    }
}
