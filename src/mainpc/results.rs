//! `rxnode results [--json] [--node N] [--status S] [--since T]`, `results show ID`,
//! `results verify ID`, `results nodes`: the main PC reads what the RX nodes
//! published (DESIGN §10).
//!
//! `rx-node` is fetched into the private ref [`PRIVATE_REF`] only — never the work
//! tree, the index, HEAD, a branch or a remote-tracking ref (so never the watched
//! branch's). Everything is read from the object database. What is read was
//! written by RX nodes and travelled through Git: it is treated as untrusted input
//! (sizes bounded before loading, names checked, terminal control characters never
//! printed raw).
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::git::ops::{redact, remote_callbacks, set_timeouts};
use crate::result::{Status, LOG_META, RESULTS_DIR, RESULT_JSON, RESULT_MD};
use anyhow::{anyhow, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};
use rxnode_interlock::{sha256_hex, TaskId};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Where the main PC keeps its copy of the remote `rx-node` (a private ref).
pub const PRIVATE_REF: &str = "refs/rxnode/main-pc/rx-node";
/// The largest published file (DESIGN §6); bigger blobs are never loaded.
const MAX_FILE_BYTES: usize = 256 * 1024;
/// How many peaks a listing carries per result.
const MAX_PEAKS: usize = 3;

/// One published result found on `rx-node`.
#[derive(Debug, Clone)]
struct Found {
    task_id: String,
    /// `Some` for `rx-results/<ID>/<NODE>/`; `None` for the layout before node names.
    dir_node: Option<String>,
    /// The tree holding the three files.
    tree: Oid,
    /// `rx-results/<ID>/<NODE>` (or `rx-results/<ID>`).
    path: String,
}

/// The listing row (DESIGN §10 shape, plus key figures).
#[derive(Debug, Clone, Serialize)]
struct Row {
    node: Option<String>,
    task_id: String,
    title: Option<String>,
    status: Option<String>,
    risk_level: Option<String>,
    completed_at: Option<String>,
    commit: Option<String>,
    path: String,
    figures: Value,
    problems: Vec<String>,
    #[serde(skip)]
    sort_time: i64,
}

/// `results` options and subcommands.
#[derive(Debug, Clone)]
pub struct ResultsOptions {
    /// Only results of this node.
    pub node: Option<String>,
    /// Only results with this status (PASS, FAIL, PARTIAL, SKIP, BLOCKED, "NOT RUN").
    pub status: Option<String>,
    /// Only results completed at or after this time: ISO 8601, a date (UTC), or an age (`90m`, `12h`, `7d`).
    pub since: Option<String>,
    /// Read the local copy only (no fetch).
    pub no_fetch: bool,
    /// `show ID`, `verify ID` or `nodes`; none lists every result.
    pub sub: Option<ResultsQuery>,
}

/// `results` subcommands.
#[derive(Debug, Clone)]
pub enum ResultsQuery {
    /// Render one result (Markdown; `--json` the JSON).
    Show {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task.
        from: Option<String>,
    },
    /// Validate one result as fetched: schema, MD/JSON agreement, the commit that added it.
    Verify {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task (default: every node).
        from: Option<String>,
    },
    /// Each node's result count and last result time.
    Nodes,
}

/// The command.
pub fn cmd_results(ctx: &Ctx, args: &ResultsOptions) -> Result<Outcome> {
    let repo = Repository::open(&ctx.repo).with_context(|| {
        format!(
            "{} is not a Git repository (run rxnode results in a clone of the project)",
            ctx.repo.display()
        )
    })?;
    let status_filter = match &args.status {
        None => None,
        Some(s) => Some(
            Status::parse(s)
                .map(|st| st.as_str().to_owned())
                .ok_or_else(|| {
                    bad_input(format!(
                        "--status {s:?} is not one of PASS, FAIL, PARTIAL, SKIP, BLOCKED, \"NOT RUN\""
                    ))
                })?,
        ),
    };
    if let Some(n) = &args.node {
        crate::store::node::check_name(n).map_err(|e| bad_input(format!("--node: {e}")))?;
    }
    let since = match &args.since {
        None => None,
        Some(s) => Some(parse_since(s, time::OffsetDateTime::now_utc()).map_err(bad_input)?),
    };
    let remote = ctx.source.remote.as_str();
    let before = read_private(&repo)?;
    let tip = if args.no_fetch {
        before
    } else {
        fetch_private(&repo, remote)?
    };
    // The branch is written by RX nodes only and never rewritten: a tip that does not
    // descend from what was fetched before means results may have been removed.
    if let (Some(b), Some(t)) = (before, tip) {
        if b != t && !repo.graph_descendant_of(t, b).unwrap_or(false) {
            eprintln!(
                "rxnode: warning: rx-node was rewritten on the remote: the previous tip {b} is not in its history; \
                 results seen before may have been removed (the old commit is still in this repository)"
            );
        }
    } else if before.is_some() && tip.is_none() {
        eprintln!("rxnode: warning: rx-node was deleted on the remote; the results seen before are gone from it");
    }
    match &args.sub {
        None => cmd_list(ctx, &repo, tip, args, status_filter.as_deref(), since),
        Some(ResultsQuery::Show { task_id, from }) => cmd_show(ctx, &repo, tip, task_id, from),
        Some(ResultsQuery::Verify { task_id, from }) => cmd_verify(ctx, &repo, tip, task_id, from),
        Some(ResultsQuery::Nodes) => cmd_nodes(ctx, &repo, tip),
    }
}

// ------------------------------------------------------------------- fetching

/// Fetch the remote's `refs/heads/rx-node` into [`PRIVATE_REF`] (forced: it is
/// our private copy) and return its tip; `None` when the remote has no `rx-node`.
fn fetch_private(repo: &Repository, remote: &str) -> Result<Option<Oid>> {
    set_timeouts();
    let named = repo
        .find_remote(remote)
        .with_context(|| format!("no remote named {remote:?} in this repository"))?;
    let url = named
        .url()
        .ok_or_else(|| anyhow!("the URL of remote {remote:?} is not UTF-8"))?
        .to_owned();
    // An anonymous remote has no configured refspecs, so libgit2 makes no
    // "opportunistic" update of refs/remotes/<remote>/*: only PRIVATE_REF moves.
    let mut rem = repo
        .remote_anonymous(&url)
        .map_err(|e| anyhow!("remote {remote:?}: {}", redact(e.message())))?;
    let mut fo = git2::FetchOptions::new();
    fo.remote_callbacks(remote_callbacks(repo.config().ok()));
    fo.update_fetchhead(false);
    fo.prune(git2::FetchPrune::On);
    fo.download_tags(git2::AutotagOption::None);
    let spec = format!("+refs/heads/rx-node:{PRIVATE_REF}");
    rem.fetch(&[spec.as_str()], Some(&mut fo), None)
        .map_err(|e| {
            anyhow!(
                "fetch of rx-node from {} failed: {}",
                rem.url().map(redact).unwrap_or_default(),
                redact(e.message())
            )
        })?;
    read_private(repo)
}

fn read_private(repo: &Repository) -> Result<Option<Oid>> {
    match repo.find_reference(PRIVATE_REF) {
        Ok(r) => Ok(Some(
            r.peel_to_commit()
                .with_context(|| format!("{PRIVATE_REF} does not point to a commit"))?
                .id(),
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {PRIVATE_REF}: {}", e.message())),
    }
}

// -------------------------------------------------------------------- reading

/// Every result in a tree: per-node folders and old-layout folders. Entries that
/// are neither are returned as problems (named, never followed).
fn find_results(repo: &Repository, root: &git2::Tree) -> (Vec<Found>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let Some(e) = root.get_name(RESULTS_DIR) else {
        return (out, problems);
    };
    let Ok(results) = repo.find_tree(e.id()) else {
        problems.push(format!("{RESULTS_DIR} is not a folder"));
        return (out, problems);
    };
    for e in results.iter() {
        let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
        if TaskId::parse(&name).is_err() {
            problems.push(format!(
                "{RESULTS_DIR}/{} is not a task ID; skipped",
                shown(&name, 70)
            ));
            continue;
        }
        let Ok(idtree) = repo.find_tree(e.id()) else {
            problems.push(format!("{RESULTS_DIR}/{name} is not a folder; skipped"));
            continue;
        };
        let mut legacy = false;
        for f in idtree.iter() {
            let fname = String::from_utf8_lossy(f.name_bytes()).into_owned();
            match f.kind() {
                Some(ObjectType::Tree) => {
                    if crate::store::node::check_name(&fname).is_err() {
                        problems.push(format!(
                            "{RESULTS_DIR}/{name}/{} is not a node name; skipped",
                            shown(&fname, 70)
                        ));
                        continue;
                    }
                    out.push(Found {
                        task_id: name.clone(),
                        dir_node: Some(fname.clone()),
                        tree: f.id(),
                        path: format!("{RESULTS_DIR}/{name}/{fname}"),
                    });
                }
                _ => legacy = true,
            }
        }
        if legacy {
            out.push(Found {
                task_id: name.clone(),
                dir_node: None,
                tree: e.id(),
                path: format!("{RESULTS_DIR}/{name}"),
            });
        }
    }
    (out, problems)
}

/// A blob of at most [`MAX_FILE_BYTES`], loaded only after its size was checked.
fn read_small(repo: &Repository, tree: Oid, name: &str) -> Result<Vec<u8>, String> {
    let t = repo
        .find_tree(tree)
        .map_err(|e| format!("cannot read the tree: {}", e.message()))?;
    let Some(e) = t.get_name(name) else {
        return Err(format!("{name} is missing"));
    };
    if e.kind() != Some(ObjectType::Blob) || e.filemode() != 0o100644 {
        return Err(format!("{name} is not a regular file"));
    }
    let odb = repo.odb().map_err(|e| e.message().to_owned())?;
    let (size, _) = odb
        .read_header(e.id())
        .map_err(|err| format!("{name}: {}", err.message()))?;
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{name} is {size} bytes; a published file is at most {MAX_FILE_BYTES}"
        ));
    }
    let b = repo
        .find_blob(e.id())
        .map_err(|err| format!("{name}: {}", err.message()))?;
    Ok(b.content().to_vec())
}

fn read_json(repo: &Repository, tree: Oid, name: &str) -> Result<Value, String> {
    let b = read_small(repo, tree, name)?;
    let v: Value = serde_json::from_slice(&b).map_err(|e| format!("{name} is not JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!("{name} is not a JSON object"));
    }
    Ok(v)
}

/// The commit that first added each result path (and the result's tree then),
/// walking oldest first.
fn adding_commits(repo: &Repository, tip: Oid) -> Result<BTreeMap<String, (Oid, Oid)>> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)?;
    walk.push(tip)?;
    let mut out = BTreeMap::new();
    let mut seen_roots = BTreeSet::new();
    for c in walk {
        let c = repo.find_commit(c?)?;
        let tree = c.tree()?;
        let Some(e) = tree.get_name(RESULTS_DIR) else {
            continue;
        };
        if !seen_roots.insert(e.id()) {
            continue; // the same rx-results tree as an earlier commit
        }
        let (found, _) = find_results(repo, &tree);
        for f in found {
            out.entry(f.path).or_insert((c.id(), f.tree));
        }
    }
    Ok(out)
}

fn str_of(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str().map(|s| shown(s, 200))
}

/// Printable: control and format characters (ANSI escapes, bidi overrides and
/// zero-width characters from a hostile result) become
/// `\u{…}`; at most `max` characters.
fn shown(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i >= max {
            out.push('…');
            break;
        }
        if c.is_control() || rxnode_interlock::is_format_char(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// Terminal-safe text: keeps newlines and tabs, escapes every other control
/// character and every format character (bidi, zero-width).
fn terminal_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '\n' || c == '\t' || !(c.is_control() || rxnode_interlock::is_format_char(c)) {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect()
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

/// Key figures: captures, overflows, CLKIN ppm, the strongest peaks (captures and sweeps).
fn figures(r: &Value) -> Value {
    let captures = r
        .get("captures")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let sweeps = r
        .get("sweeps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut overflows = 0u64;
    let mut clkin = Vec::new();
    let mut peaks: Vec<(f64, f64)> = Vec::new();
    for c in captures.iter().chain(sweeps.iter()) {
        overflows =
            overflows.saturating_add(c.get("overflows").and_then(Value::as_u64).unwrap_or(0));
        if let Some(p) = c.get("clkin").and_then(|k| k.get("ppm")).and_then(num) {
            clkin.push(p);
        }
        if let Some(ps) = c.get("peaks").and_then(Value::as_array) {
            for p in ps {
                let f = p.get("frequency_hz").or_else(|| p.get("hz")).and_then(num);
                let d = p
                    .get("power_db")
                    .or_else(|| p.get("dbfs"))
                    .or_else(|| p.get("power_dbfs"))
                    .and_then(num);
                if let (Some(f), Some(d)) = (f, d) {
                    peaks.push((f, d));
                }
            }
        }
    }
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    peaks.truncate(MAX_PEAKS);
    json!({
        "captures": captures.len(),
        "sweeps": sweeps.len(),
        "overflows": overflows,
        "clkin_ppm": clkin,
        "peaks": peaks.iter().map(|(f, d)| json!({"frequency_hz": f, "power_db": d})).collect::<Vec<_>>(),
    })
}

fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// `--since`: RFC 3339 (`2026-12-01T08:00:00+00:00`), a date (`2026-12-01`, UTC
/// midnight) or an age (`90s`, `30m`, `12h`, `7d`) before `now`.
fn parse_since(s: &str, now: time::OffsetDateTime) -> Result<time::OffsetDateTime, String> {
    let t = s.trim();
    if let Some(x) = parse_time(t) {
        return Ok(x);
    }
    let date_fmt = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(d) = time::Date::parse(t, &date_fmt) {
        return Ok(d.midnight().assume_utc());
    }
    let (n, unit) = t.split_at(t.len().saturating_sub(1));
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => 0,
    };
    match n.parse::<u32>() {
        Ok(k) if secs > 0 => Ok(now - time::Duration::seconds(i64::from(k) * secs)),
        _ => Err(format!(
            "--since {s:?}: use a time (2026-12-01T08:00:00+00:00), a date (2026-12-01) or an age (90m, 12h, 7d)"
        )),
    }
}

/// Every result at `tip`, as rows, newest first; plus the problems of the tree.
fn rows(repo: &Repository, tip: Option<Oid>) -> Result<(Vec<Row>, Vec<String>)> {
    let Some(tip) = tip else {
        return Ok((Vec::new(), Vec::new()));
    };
    let commit = repo.find_commit(tip)?;
    let (found, tree_problems) = find_results(repo, &commit.tree()?);
    let added = adding_commits(repo, tip)?;
    let mut out = Vec::new();
    for f in found {
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
        let commit = added.get(&f.path).map(|(c, _)| *c);
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
        out.push(Row {
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
        });
    }
    out.sort_by(|a, b| {
        b.sort_time
            .cmp(&a.sort_time)
            .then_with(|| a.task_id.cmp(&b.task_id))
            .then_with(|| a.node.cmp(&b.node))
    });
    Ok((out, tree_problems))
}

fn figures_line(f: &Value) -> String {
    let mut parts = Vec::new();
    let n = |k: &str| f.get(k).and_then(Value::as_u64).unwrap_or(0);
    if n("captures") > 0 {
        parts.push(format!(
            "{} capture(s), {} overflow(s)",
            n("captures"),
            n("overflows")
        ));
    }
    if n("sweeps") > 0 {
        parts.push(format!("{} sweep(s)", n("sweeps")));
    }
    if let Some(c) = f.get("clkin_ppm").and_then(Value::as_array) {
        let v: Vec<String> = c
            .iter()
            .filter_map(num)
            .map(|p| rxnode_hw::fmt_ppm(p, 4))
            .collect();
        if !v.is_empty() {
            parts.push(format!("CLKIN {} ppm", v.join(", ")));
        }
    }
    if let Some(p) = f
        .get("peaks")
        .and_then(Value::as_array)
        .and_then(|p| p.first())
    {
        if let (Some(hz), Some(db)) = (
            p.get("frequency_hz").and_then(num),
            p.get("power_db").and_then(num),
        ) {
            parts.push(format!("peak {:.6} MHz {db:.1} dB", hz / 1e6));
        }
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

// ------------------------------------------------------------------- commands

fn cmd_list(
    ctx: &Ctx,
    repo: &Repository,
    tip: Option<Oid>,
    args: &ResultsOptions,
    status: Option<&str>,
    since: Option<time::OffsetDateTime>,
) -> Result<Outcome> {
    let (all, tree_problems) = rows(repo, tip)?;
    let total = all.len();
    let list: Vec<Row> = all
        .into_iter()
        .filter(|r| {
            args.node
                .as_ref()
                .is_none_or(|n| r.node.as_ref() == Some(n))
        })
        .filter(|r| status.is_none_or(|s| r.status.as_deref() == Some(s)))
        .filter(|r| {
            since.is_none_or(|t| {
                r.completed_at
                    .as_deref()
                    .and_then(parse_time)
                    .is_some_and(|c| c >= t)
            })
        })
        .collect();
    if ctx.json {
        let out = json!({
            "ref": PRIVATE_REF,
            "tip": tip.map(|t| t.to_string()),
            "total": total,
            "results": list,
            "problems": tree_problems,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(Outcome::Done);
    }
    match tip {
        None => println!("no rx-node branch on the remote yet: no results"),
        Some(t) => println!(
            "{} of {total} result(s) on rx-node {} (fetched into {PRIVATE_REF}), newest first:",
            list.len(),
            &t.to_string()[..12]
        ),
    }
    if !list.is_empty() {
        println!(
            "{:<14} {:<28} {:<8} {:<6} {:<25} {:<12} figures",
            "NODE", "TASK_ID", "STATUS", "RISK", "COMPLETED", "COMMIT"
        );
    }
    for r in &list {
        println!(
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
            println!("    ! {p}");
        }
    }
    for p in &tree_problems {
        println!("! {p}");
    }
    Ok(Outcome::Done)
}

/// The results of one task ID, narrowed to `from` when given; an error names what exists.
fn select(
    repo: &Repository,
    tip: Option<Oid>,
    task_id: &str,
    from: &Option<String>,
) -> Result<Vec<Found>> {
    let id = TaskId::parse(task_id).map_err(|e| bad_input(format!("task ID: {e}")))?;
    if let Some(n) = from {
        crate::store::node::check_name(n).map_err(|e| bad_input(format!("--from: {e}")))?;
    }
    let Some(tip) = tip else {
        return Err(bad_input(format!(
            "no rx-node branch on the remote yet: no result for {id}"
        )));
    };
    let (found, _) = find_results(repo, &repo.find_commit(tip)?.tree()?);
    let of_id: Vec<Found> = found
        .into_iter()
        .filter(|f| f.task_id == id.as_str())
        .collect();
    if of_id.is_empty() {
        return Err(bad_input(format!("no result for {id} on rx-node ({tip})")));
    }
    let Some(n) = from else { return Ok(of_id) };
    let nodes: Vec<String> = of_id
        .iter()
        .map(|f| f.dir_node.clone().unwrap_or_else(|| "(unnamed)".into()))
        .collect();
    let pick: Vec<Found> = of_id
        .into_iter()
        .filter(|f| f.dir_node.as_ref() == Some(n))
        .collect();
    if pick.is_empty() {
        return Err(bad_input(format!(
            "no result for {id} from node {n}; nodes that answered: {}",
            nodes.join(", ")
        )));
    }
    Ok(pick)
}

fn cmd_show(
    ctx: &Ctx,
    repo: &Repository,
    tip: Option<Oid>,
    task_id: &str,
    from: &Option<String>,
) -> Result<Outcome> {
    let found = select(repo, tip, task_id, from)?;
    if found.len() > 1 {
        let nodes: Vec<String> = found
            .iter()
            .map(|f| f.dir_node.clone().unwrap_or_else(|| "(unnamed)".into()))
            .collect();
        return Err(bad_input(format!(
            "{} nodes answered {task_id} ({}); pick one with --from NODE",
            found.len(),
            nodes.join(", ")
        )));
    }
    let f = &found[0];
    if ctx.json {
        let b = read_small(repo, f.tree, RESULT_JSON).map_err(|e| anyhow!("{}: {e}", f.path))?;
        let v: Value = serde_json::from_slice(&b)
            .map_err(|e| anyhow!("{}/{RESULT_JSON} is not JSON: {e}", f.path))?;
        println!("{}", serde_json::to_string_pretty(&v)?);
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

/// The checks of one fetched result; empty = verified.
fn verify_one(
    repo: &Repository,
    tip: Oid,
    f: &Found,
    added: &BTreeMap<String, (Oid, Oid)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    // Exactly the three files, regular, within the size bound.
    match repo.find_tree(f.tree) {
        Ok(t) => {
            for e in t.iter() {
                let n = String::from_utf8_lossy(e.name_bytes()).into_owned();
                if f.dir_node.is_none() && e.kind() == Some(ObjectType::Tree) {
                    continue; // per-node results beside an old-layout one
                }
                if ![RESULT_MD, RESULT_JSON, LOG_META].contains(&n.as_str()) {
                    problems.push(format!(
                        "{}/{} is not one of the three result files",
                        f.path,
                        shown(&n, 60)
                    ));
                }
            }
        }
        Err(e) => problems.push(format!("{}: {}", f.path, e.message())),
    }
    let mut blobs = BTreeMap::new();
    for name in [RESULT_MD, RESULT_JSON, LOG_META] {
        match read_small(repo, f.tree, name) {
            Ok(b) => {
                blobs.insert(name, b);
            }
            Err(e) => problems.push(format!("{}/{e}", f.path)),
        }
    }
    // The validator on the fetched files (schema, statuses, timeline, MD/JSON agreement).
    if let (Some(md), Some(js)) = (blobs.get(RESULT_MD), blobs.get(RESULT_JSON)) {
        match validate_fetched(md, js) {
            Ok(p) => problems.extend(p.into_iter().map(|p| format!("{}: {p}", f.path))),
            Err(e) => problems.push(format!("{}: cannot check: {e:#}", f.path)),
        }
        let j: Value = serde_json::from_slice(js).unwrap_or(Value::Null);
        if j.get("task_id").and_then(Value::as_str) != Some(f.task_id.as_str()) {
            problems.push(format!(
                "{}/{RESULT_JSON}: task_id is not {}",
                f.path, f.task_id
            ));
        }
        if let Some(d) = &f.dir_node {
            match j.get("node").and_then(|n| n.get("name")) {
                None | Some(Value::Null) => {}
                Some(Value::String(n)) if n == d => {}
                Some(other) => problems.push(format!(
                    "{}/{RESULT_JSON}: node.name {} is not the folder's node {d}",
                    f.path,
                    shown(&other.to_string(), 60)
                )),
            }
        }
        if let Some(lm) = blobs.get(LOG_META) {
            match serde_json::from_slice::<Value>(lm) {
                Err(e) => problems.push(format!("{}/{LOG_META} is not JSON: {e}", f.path)),
                Ok(m) => {
                    if m.get("task_id").and_then(Value::as_str) != Some(f.task_id.as_str()) {
                        problems.push(format!(
                            "{}/{LOG_META}: task_id is not {}",
                            f.path, f.task_id
                        ));
                    }
                    if let Some(d) = &f.dir_node {
                        if m.get("node_name").and_then(Value::as_str) != Some(d.as_str()) {
                            problems.push(format!("{}/{LOG_META}: node_name is not {d}", f.path));
                        }
                    }
                    if m.get("status") != j.get("status") {
                        problems.push(format!(
                            "{}/{LOG_META}: status disagrees with {RESULT_JSON}",
                            f.path
                        ));
                    }
                    for (name, bytes) in [(RESULT_MD, md), (RESULT_JSON, js)] {
                        let listed = m.get("files").and_then(Value::as_array).and_then(|a| {
                            a.iter()
                                .find(|x| x.get("name").and_then(Value::as_str) == Some(name))
                        });
                        match listed {
                            None => {
                                problems.push(format!("{}/{LOG_META} does not list {name}", f.path))
                            }
                            Some(x) => {
                                if x.get("sha256").and_then(Value::as_str)
                                    != Some(sha256_hex(bytes).as_str())
                                {
                                    problems.push(format!("{}/{LOG_META}: the SHA-256 of {name} disagrees with the file", f.path));
                                }
                                if x.get("bytes").and_then(Value::as_u64)
                                    != Some(bytes.len() as u64)
                                {
                                    problems.push(format!(
                                        "{}/{LOG_META}: the size of {name} disagrees with the file",
                                        f.path
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // The commit that added it added only this result's three files (or whole results
    // its Carried-Over trailer names: a rebuild after a push race).
    match added.get(&f.path) {
        None => problems.push(format!("{}: no commit on rx-node ({tip}) adds it", f.path)),
        Some((c, tree)) => {
            problems.extend(check_adding_commit(repo, *c, f));
            if *tree != f.tree && f.dir_node.is_some() {
                problems.push(format!(
                    "{}: changed after its publication in {c}: rx-node now holds another version (a result is never replaced)",
                    f.path
                ));
            }
        }
    }
    problems
}

/// Write the fetched files to a private temporary folder and run the result validator.
fn validate_fetched(md: &[u8], js: &[u8]) -> Result<Vec<String>> {
    let d = tempfile::TempDir::new().context("cannot create a temporary folder")?;
    let json_path = d.path().join(RESULT_JSON);
    std::fs::write(&json_path, js)?;
    std::fs::write(d.path().join(RESULT_MD), md)?;
    // An empty checkout: IQ files live on the RX node, so only their paths and hashes' shape are checked.
    let empty = d.path().join("checkout");
    std::fs::create_dir_all(&empty)?;
    let probs = crate::result::validate_result_files(&json_path, &empty);
    let prefix = d.path().display().to_string();
    Ok(probs
        .into_iter()
        .map(|p| p.replace(&format!("{prefix}/"), "").replace(&prefix, ""))
        .collect())
}

fn check_adding_commit(repo: &Repository, c: Oid, f: &Found) -> Vec<String> {
    let mut problems = Vec::new();
    let commit = match repo.find_commit(c) {
        Ok(c) => c,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    if commit.parent_count() > 1 {
        problems.push(format!(
            "{}: added by the merge {c}; a publication is one plain commit",
            f.path
        ));
        return problems;
    }
    // What the commit says it publishes: its own result (`Task:` + `Node-Name:`)
    // and the whole results a rebuild carried over (`Carried-Over:`).
    let msg = commit.message().unwrap_or("");
    let trailer = |k: &str| {
        msg.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_owned())
    };
    let primary = match (trailer("Task: "), trailer("Node-Name: ")) {
        (Some(t), Some(n)) => Some(format!("{t}/{n}")),
        (Some(t), None) => Some(t),
        _ => None,
    };
    let carried: BTreeSet<String> = msg
        .lines()
        .filter_map(|l| l.strip_prefix("Carried-Over: "))
        .flat_map(|l| l.split(", ").map(|k| k.trim().to_owned()))
        .collect();
    let key = f
        .path
        .strip_prefix(&format!("{RESULTS_DIR}/"))
        .unwrap_or(&f.path)
        .to_owned();
    if primary.as_deref() != Some(key.as_str()) && !carried.contains(&key) {
        problems.push(format!(
            "commit {c} adds {} but its message names neither it (`Task:`/`Node-Name:`) nor a `Carried-Over:` of it",
            f.path
        ));
    }
    let old = if commit.parent_count() == 1 {
        commit.parent(0).ok().and_then(|p| p.tree().ok())
    } else {
        None
    };
    let new = match commit.tree() {
        Ok(t) => t,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    let diff = match repo.diff_tree_to_tree(old.as_ref(), Some(&new), None) {
        Ok(d) => d,
        Err(e) => return vec![format!("commit {c}: {}", e.message())],
    };
    let mut own = BTreeSet::new();
    for d in diff.deltas() {
        let path = crate::git::publish::delta_path(&d);
        if d.status() != git2::Delta::Added {
            problems.push(format!(
                "commit {c} (which adds {}) also changes {} ({:?}): a publication only adds files",
                f.path,
                shown(&path, 120),
                d.status()
            ));
            continue;
        }
        let parts: Vec<&str> = path.split('/').collect();
        let is_result_file = parts.first() == Some(&RESULTS_DIR)
            && (3..=4).contains(&parts.len())
            && parts
                .last()
                .is_some_and(|n| [RESULT_MD, RESULT_JSON, LOG_META].contains(n));
        let file_key = parts
            .get(1..parts.len().saturating_sub(1))
            .map(|p| p.join("/"))
            .unwrap_or_default();
        if is_result_file && file_key == key {
            own.insert(parts[parts.len() - 1].to_owned());
            continue;
        }
        // Another whole result: the commit's own, or one its trailer says it carried.
        let named = primary.as_deref() == Some(file_key.as_str()) || carried.contains(&file_key);
        if !(is_result_file && named) {
            problems.push(format!(
                "commit {c} (which adds {}) also adds {}: neither this result's three files nor a result its message names",
                f.path,
                shown(&path, 120)
            ));
        }
    }
    for n in [RESULT_MD, RESULT_JSON, LOG_META] {
        if !own.contains(n) {
            problems.push(format!("commit {c} does not add {}/{n}", f.path));
        }
    }
    problems
}

fn cmd_verify(
    ctx: &Ctx,
    repo: &Repository,
    tip: Option<Oid>,
    task_id: &str,
    from: &Option<String>,
) -> Result<Outcome> {
    let found = select(repo, tip, task_id, from)?;
    let Some(tip) = tip else {
        return Err(bad_input("no rx-node"));
    };
    let added = adding_commits(repo, tip)?;
    let mut reports = Vec::new();
    let mut all_ok = true;
    for f in &found {
        let problems = verify_one(repo, tip, f, &added);
        all_ok &= problems.is_empty();
        reports.push(json!({
            "task_id": f.task_id,
            "node": f.dir_node,
            "path": f.path,
            "commit": added.get(&f.path).map(|(c, _)| c.to_string()),
            "valid": problems.is_empty(),
            "problems": problems,
        }));
    }
    if ctx.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"valid": all_ok, "tip": tip.to_string(), "results": reports})
            )?
        );
    } else {
        for r in &reports {
            let node = r["node"].as_str().unwrap_or("(unnamed)");
            let commit = r["commit"].as_str().unwrap_or("?");
            if r["valid"] == true {
                println!(
                    "OK   {} from {node}: schema, MD/JSON agreement, LOG_META and commit {commit} (adds only its three files)",
                    r["path"].as_str().unwrap_or("")
                );
            } else {
                println!("FAIL {} from {node}:", r["path"].as_str().unwrap_or(""));
                for p in r["problems"].as_array().into_iter().flatten() {
                    println!("  - {}", shown(p.as_str().unwrap_or(""), 400));
                }
            }
        }
    }
    Ok(if all_ok {
        Outcome::Done
    } else {
        Outcome::Code(2)
    })
}

fn cmd_nodes(ctx: &Ctx, repo: &Repository, tip: Option<Oid>) -> Result<Outcome> {
    let (all, _) = rows(repo, tip)?;
    #[derive(Serialize)]
    struct NodeRow {
        node: Option<String>,
        results: usize,
        last_result_at: Option<String>,
        last_task_id: String,
        last_status: Option<String>,
    }
    let mut by: BTreeMap<Option<String>, NodeRow> = BTreeMap::new();
    // `all` is newest first: the first row seen per node is its last result.
    for r in &all {
        by.entry(r.node.clone())
            .and_modify(|n| n.results += 1)
            .or_insert_with(|| NodeRow {
                node: r.node.clone(),
                results: 1,
                last_result_at: r.completed_at.clone(),
                last_task_id: r.task_id.clone(),
                last_status: r.status.clone(),
            });
    }
    let mut nodes: Vec<(i64, NodeRow)> = by
        .into_values()
        .map(|n| {
            let t = all
                .iter()
                .find(|r| r.node == n.node)
                .map(|r| r.sort_time)
                .unwrap_or(i64::MIN);
            (t, n)
        })
        .collect();
    nodes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.node.cmp(&b.1.node)));
    let nodes: Vec<NodeRow> = nodes.into_iter().map(|(_, n)| n).collect();
    if ctx.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"nodes": nodes}))?
        );
    } else {
        if nodes.is_empty() {
            println!("no results on rx-node yet");
        } else {
            println!(
                "{:<14} {:>7}  {:<25} last task",
                "NODE", "RESULTS", "LAST RESULT"
            );
        }
        for n in &nodes {
            println!(
                "{:<14} {:>7}  {:<25} {} ({})",
                n.node.as_deref().unwrap_or("(unnamed)"),
                n.results,
                n.last_result_at.as_deref().unwrap_or("—"),
                n.last_task_id,
                n.last_status.as_deref().unwrap_or("?")
            );
        }
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_times_dates_and_ages() {
        let now = parse_time("2026-12-01T12:00:00+00:00").unwrap();
        assert_eq!(
            parse_since("2026-12-01T08:00:00+00:00", now).unwrap(),
            parse_time("2026-12-01T08:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("2026-11-30", now).unwrap(),
            parse_time("2026-11-30T00:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("2h", now).unwrap(),
            parse_time("2026-12-01T10:00:00+00:00").unwrap()
        );
        assert_eq!(
            parse_since("7d", now).unwrap(),
            parse_time("2026-11-24T12:00:00+00:00").unwrap()
        );
        for bad in ["", "yesterday", "2h30", "-1h", "12x", "2026-13-01"] {
            let e = parse_since(bad, now).unwrap_err();
            assert!(e.contains("--since"), "{bad}: {e}");
        }
    }

    #[test]
    fn hostile_text_never_reaches_the_terminal_raw() {
        assert_eq!(shown("a\u{1b}[2Jb", 10), "a\\u{1b}[2Jb");
        assert_eq!(terminal_safe("x\n\ty\u{7}"), "x\n\ty\\u{7}");
        assert_eq!(shown("abcdef", 3), "abc…");
    }

    #[test]
    fn figures_sum_overflows_and_pick_the_strongest_peaks() {
        let r = json!({"captures": [
            {"overflows": 2, "clkin": {"ppm": 0.25}, "peaks": [{"frequency_hz": 1e8, "power_db": -20.0}]},
            {"overflows": 1, "peaks": [{"frequency_hz": 2e8, "power_db": -10.0}, {"frequency_hz": 3e8, "power_db": -90.0}]}
        ]});
        let f = figures(&r);
        assert_eq!(f["captures"], 2);
        assert_eq!(f["overflows"], 3);
        assert_eq!(f["clkin_ppm"], json!([0.25]));
        assert_eq!(f["peaks"][0]["frequency_hz"], 2e8);
        assert_eq!(f["peaks"].as_array().unwrap().len(), 3);
        assert_eq!(figures(&Value::Null)["captures"], 0);
    }

    /// Polish review: a locked reference measuring -0.0 ppm printed "CLKIN -0.0000 ppm".
    #[test]
    fn figures_line_prints_signed_zero_ppm_plain() {
        let f = json!({"captures": 1, "overflows": 0, "clkin_ppm": [-0.0, -0.00001, 1.25]});
        let line = figures_line(&f);
        assert!(line.contains("CLKIN 0.0000, 0.0000, +1.2500 ppm"), "{line}");
        assert!(!line.contains("-0.0000"), "{line}");
    }
}
