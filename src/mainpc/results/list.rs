//! `rxnode results` (the listing).
use super::fetched::{Fetched, Found, PRIVATE_REF};
use super::text::{figures, figures_line, parse_time, safe_json, str_of};
use super::tree::{find_results, newest_added, read_json, read_small};
use super::verify::validate_fetched;
use crate::exit::Outcome;
use crate::result::{LOG_META, RESULTS_DIR, RESULT_JSON, RESULT_MD};
use anyhow::Result;
use git2::{Oid, Repository};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The listing row (the shape docs/protocol.md#6-the-main-pcs-side gives, plus key figures).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Row {
    pub(super) node: Option<String>,
    pub(super) task_id: String,
    title: Option<String>,
    pub(super) status: Option<String>,
    risk_level: Option<String>,
    pub(super) completed_at: Option<String>,
    pub(super) commit: Option<String>,
    pub(super) path: String,
    figures: Value,
    problems: Vec<String>,
    #[serde(skip)]
    pub(super) sort_time: i64,
}

/// The results at `tip` that pass `keep`, newest first — by when they landed
/// on `rx-node` (the newest commit that added or changed each), then by task
/// ID (descending) and node within one commit; at most `limit` (`None`: every
/// one). Within a commit only the results needed are read.
/// Only the commits back to the `limit`-th result are read, so the cost of
/// the default listing does not grow with the number of results. Also: how
/// many results the tip holds, and the problems of its tree.
pub(super) fn rows(
    repo: &Repository,
    tip: Option<Oid>,
    limit: Option<usize>,
    keep: &dyn Fn(&Row) -> bool,
) -> Result<(Vec<Row>, usize, Vec<String>)> {
    let Some(tip) = tip else {
        return Ok((Vec::new(), 0, Vec::new()));
    };
    let commit = repo.find_commit(tip)?;
    let (found, tree_problems) = find_results(repo, &commit.tree()?)?;
    let total = found.len();
    let mut out: Vec<Row> = Vec::new();
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    newest_added(repo, tip, &mut |landed, now_rt| {
        for id in &landed.ids {
            for f in landed.results_of(id, now_rt) {
                if limit.is_some_and(|l| out.len() >= l) {
                    return Ok(false);
                }
                if !seen.insert(f.path.clone()) {
                    continue;
                }
                let r = row_of(repo, f, landed.commit)?;
                if keep(&r) {
                    out.push(r);
                }
            }
        }
        Ok(limit.is_none_or(|l| out.len() < l))
    })?;
    Ok((out, total, tree_problems))
}

/// The row of one result: its fields read from the JSON (and LOG_META), its
/// problems (does not validate, or lies in another task's or node's folder).
fn row_of(repo: &Repository, f: Found, added: Oid) -> Result<Row> {
    let mut problems = Vec::new();
    let j = match read_json(repo, f.tree, RESULT_JSON) {
        Ok(v) => v,
        Err(e) => {
            problems.push(e);
            Value::Null
        }
    };
    // A listed status is only as good as the result behind it: one that fails the
    // validator is flagged on its row, never shown as a plain PASS.
    if j.is_object() {
        let md = read_small(repo, f.tree, RESULT_MD);
        let js = read_small(repo, f.tree, RESULT_JSON);
        let n = match (md, js) {
            (Ok(md), Ok(js)) => validate_fetched(&md, &js)?.len(),
            _ => 1,
        };
        if n > 0 {
            problems.push(format!(
                "does not validate ({n} problem(s)): its status is not to be trusted; see `rxnode results verify {}`",
                f.task_id
            ));
        }
    }
    let meta = read_json(repo, f.tree, LOG_META).unwrap_or(Value::Null);
    let json_node = str_of(&j, &["node", "name"]);
    let node = f
        .dir_node
        .clone()
        .or_else(|| json_node.clone())
        .or_else(|| str_of(&meta, &["node_name"]));
    if let (Some(d), Some(n)) = (&f.dir_node, &json_node) {
        if d != n {
            problems.push(format!(
                "{RESULT_JSON} names node {n:?} but lies in the folder of node {d:?}"
            ));
        }
    }
    if let Some(t) = str_of(&j, &["task_id"]) {
        if t != f.task_id {
            problems.push(format!(
                "{RESULT_JSON} is task {t:?} but lies in {RESULTS_DIR}/{}",
                f.task_id
            ));
        }
    }
    let completed_at = str_of(&j, &["timeline", "completed_at"]);
    let commit = Some(added);
    let sort_time = completed_at
        .as_deref()
        .and_then(parse_time)
        .map(|t| t.unix_timestamp())
        .or_else(|| {
            commit
                .and_then(|c| repo.find_commit(c).ok())
                .map(|c| c.time().seconds())
        })
        .unwrap_or(i64::MIN);
    Ok(Row {
        node,
        task_id: f.task_id.clone(),
        title: str_of(&j, &["task_title"]),
        status: str_of(&j, &["status"]),
        risk_level: str_of(&j, &["risk_level"]),
        completed_at,
        commit: commit.map(|c| c.to_string()),
        path: f.path.clone(),
        figures: figures(&j),
        problems,
        sort_time,
    })
}

/// The listing's filters, checked: `--node`, `--status` (protocol spelling), `--since`.
pub(super) struct Filter<'a> {
    pub(super) node: Option<&'a str>,
    pub(super) status: Option<String>,
    pub(super) since: Option<time::OffsetDateTime>,
}

impl Filter<'_> {
    /// Whether the row passes every filter given.
    pub(super) fn keeps(&self, r: &Row) -> bool {
        self.node.is_none_or(|n| r.node.as_deref() == Some(n))
            && self
                .status
                .as_deref()
                .is_none_or(|s| r.status.as_deref() == Some(s))
            && self.since.is_none_or(|t| {
                r.completed_at
                    .as_deref()
                    .and_then(parse_time)
                    .is_some_and(|c| c >= t)
            })
    }
}

/// `rxnode results`: the newest results on `rx-node` that pass the filters
/// (at most `limit`; `None`: every one), newest first.
pub(super) fn cmd_list(
    f: &Fetched<'_>,
    filter: &Filter<'_>,
    limit: Option<usize>,
) -> Result<Outcome> {
    let (list, total, tree_problems) = rows(f.repo, f.tip, limit, &|r| filter.keeps(r))?;
    let out = safe_json(&json!({
        "ref": PRIVATE_REF,
        "tip": f.tip.map(|t| t.to_string()),
        "total": total,
        "limit": limit,
        "results": list,
        "problems": tree_problems,
    }))?;
    f.ctx.report(&out, |_| {
        if f.tip.is_none() {
            return format!("{}\n", f.none_yet());
        }
        let mut text = render_list(f.tip, total, &list, &tree_problems);
        if limit.is_some_and(|l| list.len() >= l) {
            let _ = writeln!(
                text,
                "(the newest {} listed; --limit N for more, --all for every result)",
                list.len()
            );
        }
        text
    })?;
    Ok(Outcome::Done)
}

/// The human listing: a summary line, one line per row and its problems, then
/// the problems of the tree.
fn render_list(tip: Option<Oid>, total: usize, list: &[Row], tree_problems: &[String]) -> String {
    let mut text = String::new();
    let _ = match tip {
        None => writeln!(text, "no rx-node branch on the remote yet: no results"),
        Some(t) => writeln!(
            text,
            "{} of {total} result(s) on rx-node {} (fetched into {PRIVATE_REF}), newest first:",
            list.len(),
            &t.to_string()[..12]
        ),
    };
    if !list.is_empty() {
        let _ = writeln!(
            text,
            "{:<14} {:<28} {:<8} {:<6} {:<25} {:<12} figures",
            "NODE", "TASK_ID", "STATUS", "RISK", "COMPLETED", "COMMIT"
        );
    }
    for r in list {
        let _ = writeln!(
            text,
            "{:<14} {:<28} {:<8} {:<6} {:<25} {:<12} {}",
            r.node.as_deref().unwrap_or("(unnamed)"),
            r.task_id,
            r.status.as_deref().unwrap_or("?"),
            r.risk_level.as_deref().unwrap_or("?"),
            r.completed_at.as_deref().unwrap_or("—"),
            r.commit
                .as_deref()
                .map(|c| &c[..12.min(c.len())])
                .unwrap_or("?"),
            figures_line(&r.figures)
        );
        for p in &r.problems {
            let _ = writeln!(text, "    ! {p}");
        }
    }
    for p in tree_problems {
        let _ = writeln!(text, "! {p}");
    }
    text
}
