//! `results show ID`: one fetched result, as the RX node rendered it.
use super::text::{print_json, terminal_safe};
use super::tree::read_small;
use super::{Fetched, Found};
use crate::exit::{bad_input, Outcome};
use crate::result::{RESULT_JSON, RESULT_MD};
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
        return Err(bad_input(format!("no result for {task_id} on rx-node")));
    };
    if ctx.json {
        let b = read_small(repo, f.tree, RESULT_JSON).map_err(|e| anyhow!("{}: {e}", f.path))?;
        let v: Value = serde_json::from_slice(&b)
            .map_err(|e| anyhow!("{}/{RESULT_JSON} is not JSON: {e}", f.path))?;
        print_json(&v)?;
    } else {
        let b = read_small(repo, f.tree, RESULT_MD).map_err(|e| anyhow!("{}: {e}", f.path))?;
        let text = String::from_utf8_lossy(&b);
        println!(
            "<!-- {} from node {} -->",
            f.path,
            f.dir_node.as_deref().unwrap_or("(unnamed)")
        );
        print!("{}", terminal_safe(&text));
        if !text.ends_with('\n') {
            println!();
        }
    }
    Ok(Outcome::Done)
}
