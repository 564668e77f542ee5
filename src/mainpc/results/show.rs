//! `results show ID`: one fetched result, as the RX node rendered it.
use super::fetched::{Fetched, Found};
use super::text::{safe_json, terminal_safe};
use super::tree::read_small;
use crate::exit::{bad_input, Outcome};
use crate::result::RESULT_JSON;
use anyhow::{anyhow, Result};
use serde_json::Value;

/// `results show ID [--from NODE]`: the Markdown (terminal-safe), or `--json` the JSON.
pub(super) fn cmd_show(fetched: &Fetched<'_>, task_id: &str, found: &[Found]) -> Result<Outcome> {
    let (ctx, repo) = (fetched.ctx, fetched.repo);
    if found.len() > 1 {
        let nodes: Vec<String> = found.iter().map(Found::node_label).collect();
        return Err(bad_input(format!(
            "{} nodes answered {task_id} ({}); pick one with --from NODE",
            found.len(),
            nodes.join(", ")
        )));
    }
    let Some(f) = found.first() else {
        return Err(bad_input(format!("no result for {task_id}")));
    };
    let b = read_small(repo, f.tree, RESULT_JSON).map_err(|e| anyhow!("{}: {e}", f.path))?;
    let v: Value = serde_json::from_slice(&b)
        .map_err(|e| anyhow!("{}/{RESULT_JSON} is not JSON: {e}", f.path))?;
    ctx.report(&safe_json(&v)?, |_| {
        // Plain text for the terminal, from the JSON; the Markdown is for Git hosts.
        let node = f.dir_node.as_deref().unwrap_or("(unnamed)");
        terminal_safe(&plain(&v, node, &f.path))
    })?;
    Ok(Outcome::Done)
}

/// A result as the operator reads it on a terminal: the verdict first, then the
/// task, each check, the key figures and the errors — no Markdown.
fn plain(v: &Value, node: &str, path: &str) -> String {
    use std::fmt::Write as _;
    let s = |p: &[&str]| super::text::str_of(v, p).unwrap_or_else(|| "?".into());
    let mut o = String::new();
    let _ = writeln!(o, "{} from {node}: {}", s(&["task_id"]), s(&["status"]));
    let _ = writeln!(o, "  title      {}", s(&["task_title"]));
    let _ = writeln!(
        o,
        "  risk       {}; completed {}; source commit {}",
        s(&["risk_level"]),
        super::text::str_of(v, &["timeline", "completed_at"]).unwrap_or_else(|| "not given".into()),
        s(&["source_commit"])
    );
    let checks = v
        .get("checks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if checks.is_empty() {
        let _ = writeln!(o, "  checks     none (a manual task)");
    }
    for (i, c) in checks.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}{:<8} {} — {}",
            if i == 0 { "checks     " } else { "           " },
            super::text::str_of(c, &["status"]).unwrap_or_default(),
            super::text::str_of(c, &["name"]).unwrap_or_default(),
            super::text::str_of(c, &["detail"]).unwrap_or_default()
        );
    }
    let _ = writeln!(
        o,
        "  figures    {}",
        super::text::figures_line(&super::text::figures(v))
    );
    for (i, e) in v
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .enumerate()
    {
        let _ = writeln!(
            o,
            "  {}{e}",
            if i == 0 { "errors     " } else { "           " }
        );
    }
    let _ = writeln!(
        o,
        "  published  {path}/ (RX_RESULT.md for a Git host; --json for every field)"
    );
    o
}
