//! `results show ID`: one fetched result as a person reads it (its Markdown
//! rendered for a terminal), the raw Markdown, the JSON, or its pictures.
use super::fetched::{Fetched, Found};
use super::text::{safe_json, terminal_safe};
use super::tree::read_small;
use crate::exit::{bad_input, Outcome};
use crate::result::{RESULT_JSON, RESULT_MD};
use anyhow::{anyhow, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What `results show` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShowAs {
    /// The Markdown rendered for a terminal (`--json`: the JSON).
    Rendered,
    /// The published `RX_RESULT.md`, as it is (terminal-safe).
    Markdown,
    /// Draw the pictures into this folder and list them; `force` replaces
    /// files already there (else they are refused).
    Plot {
        /// The folder.
        dir: PathBuf,
        /// Replace files already there.
        force: bool,
    },
}

/// `results show ID [--from NODE] [--markdown | --plot DIR]`.
pub(super) fn cmd_show(
    fetched: &Fetched<'_>,
    task_id: &str,
    found: &[Found],
    how: &ShowAs,
) -> Result<Outcome> {
    let (ctx, repo) = (fetched.ctx, fetched.repo);
    if found.len() > 1 {
        let names: Vec<String> = found.iter().map(|f| f.node_label(repo)).collect();
        let labels = Found::labels(found, repo);
        return Err(bad_input(if labels == names {
            format!(
                "{} nodes answered {task_id} ({}); pick one with --from NODE",
                found.len(),
                labels.join(", ")
            )
        } else {
            format!(
                "{} results answer {task_id} ({}); pick one with --from NODE, or with \
                 --from FOLDER where one node answered twice",
                found.len(),
                labels.join(", ")
            )
        }));
    }
    let Some(f) = found.first() else {
        return Err(bad_input(format!("no result for {task_id}")));
    };
    let js = read_small(repo, f.tree, RESULT_JSON).map_err(|e| anyhow!("{}: {e}", f.path))?;
    let v: Value = serde_json::from_slice(&js)
        .map_err(|e| anyhow!("{}/{RESULT_JSON} is not JSON: {e}", f.path))?;
    let md = || read_small(repo, f.tree, RESULT_MD).map_err(|e| anyhow!("{}: {e}", f.path));
    let node = f.node_label(repo);
    let node = node.as_str();
    match how {
        ShowAs::Plot { dir, force } => return plot(fetched, f, &v, dir, *force),
        ShowAs::Markdown => {
            let md = String::from_utf8_lossy(&md()?).into_owned();
            /// `results show --markdown --json`.
            #[derive(serde::Serialize)]
            struct Markdown<'a> {
                /// The result's Markdown as published.
                markdown: &'a str,
            }
            ctx.report(&safe_json(&Markdown { markdown: &md })?, |_| {
                terminal_safe(&md)
            })?;
        }
        ShowAs::Rendered => {
            // What `results verify` checks: the files, LOG_META and the commit that added them.
            let added = super::tree::adding_commits(repo, &f.source, &fetched.budget)?;
            let mut problems = super::verify::verify_one(fetched, f.source.tip, f, &added);
            if let Some(why) = fetched.rewritten.get(&f.source.branch) {
                problems.push(format!(
                    "{}: read from {}, which {why}",
                    f.path, f.source.branch
                ));
            }
            // A result that landed in part (no readable Markdown) is still shown:
            // its JSON whole, its verdict line and problems, and why no Markdown.
            let md = match md() {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => format!(
                    "({e:#}: there is no Markdown to show; `--json` prints the result's JSON)\n"
                ),
            };
            ctx.report(&safe_json(&v)?, |_| {
                rendered(&v, (&f.task_id, node), &f.path, &md, &problems)
            })?;
        }
    }
    Ok(Outcome::Done)
}

/// The verdict line, whether the two files agree, the Markdown rendered, and
/// where it was published. The result is named by the task it is filed under
/// (`id`, its folder), which `results verify` takes; the JSON's own `task_id`
/// may be another task's (a peer's copy), which `verify` names among its problems.
fn rendered(
    v: &Value,
    (id, node): (&str, &str),
    path: &str,
    md: &str,
    problems: &[String],
) -> String {
    use std::fmt::Write as _;
    let s = |p: &[&str]| super::text::str_of(v, p).unwrap_or_else(|| "?".into());
    let mut o = String::new();
    let _ = writeln!(o, "{id} from {node}: {}", s(&["status"]));
    if let Some(p) = problems.first() {
        let _ = writeln!(
            o,
            "! the published files do not verify ({} problem(s), first: {}); `rxnode results verify {id}` names them",
            problems.len(),
            super::text::shown(p, 200),
        );
    }
    o.push('\n');
    o.push_str(&super::term_md::render(md));
    let _ = writeln!(
        o,
        "\npublished {path}/ (--markdown: the file; --json: every field; --plot DIR: the pictures)"
    );
    terminal_safe(&o)
}

/// `--plot DIR`: draw the result's pictures from its published JSON.
fn plot(fetched: &Fetched<'_>, f: &Found, v: &Value, dir: &Path, force: bool) -> Result<Outcome> {
    let overwrite = super::draw::Overwrite {
        field: "plot",
        force,
    };
    let drawn = super::draw::draw_result(dir, v, overwrite)?;
    let files: Vec<String> = drawn
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    /// `results show --plot DIR --json`.
    #[derive(serde::Serialize)]
    struct Drawn<'a> {
        /// The pictures written.
        files: &'a [String],
        /// The node the result is listed under.
        node: Option<String>,
        /// What could not be drawn, in words.
        problems: &'a [String],
        /// The task.
        task_id: &'a str,
    }
    let out = Drawn {
        files: &files,
        node: f.node(fetched.repo),
        problems: &drawn.problems,
        task_id: &f.task_id,
    };
    fetched.ctx.report(&safe_json(&out)?, |_| {
        let mut t = String::new();
        if files.is_empty() && drawn.problems.is_empty() {
            t.push_str(&format!("{}: no pictures in this result\n", f.path));
        } else if files.is_empty() {
            t.push_str(&format!("{}: no picture written\n", f.path));
        }
        for p in &files {
            t.push_str(&format!("wrote {p}\n"));
        }
        for p in &drawn.problems {
            t.push_str(&format!("! {p}\n"));
        }
        terminal_safe(&t)
    })?;
    Ok(if drawn.problems.is_empty() || !files.is_empty() {
        Outcome::Done
    } else {
        Outcome::Code(2)
    })
}
