//! `rxnode results` (the listing): the newest results across every results
//! branch (`rx-node` and each node's own `rx-results/<NODE>`).
use super::fetched::{Fetched, Found, Source, PRIVATE_REF};
use super::posted::Posted;
use super::text::{figures, figures_line, parse_time, safe_json, shown, str_of};
use super::tree::{
    find_results, found_at, own_result, read_json, read_small, Budget, Candidate, Walker,
};
use super::verify::Scratch;
use crate::exit::Outcome;
use crate::result::{RESULTS_DIR, RESULT_JSON, RESULT_MD};
use anyhow::Result;
use git2::{Oid, Repository};
use serde::Serialize;
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

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
    /// The branch it was read from: `rx-node` or `rx-results/<NODE>`.
    pub(super) branch: String,
    /// Other branches holding the very same result (the same tree).
    pub(super) also_on: Vec<String>,
    figures: super::text::Figures,
    pub(super) problems: Vec<String>,
    #[serde(skip)]
    pub(super) sort_time: i64,
}

/// The reader every view of the results uses: the results on every results
/// branch of `f` (`rx-node` and each `rx-results/<NODE>`) that pass `keep`,
/// newest first by when they landed (see [`Merge`]), at most `limit` (`None`:
/// every one); a row read from a branch rewritten since this PC saw it says so
/// among its problems. Also: how many results the branches hold (each path
/// once) and the problems of their trees.
pub(super) fn rows(
    f: &Fetched<'_>,
    limit: Option<usize>,
    keep: &dyn Fn(&Row) -> bool,
) -> Result<(Vec<Row>, usize, Vec<String>)> {
    rows_of(f, &|_| true, limit, keep)
}

/// [`rows`], walking only the branches `walk` selects for rows (`total` and
/// the tree problems still cover every branch).
fn rows_of(
    f: &Fetched<'_>,
    walk: &dyn Fn(&Source) -> bool,
    limit: Option<usize>,
    keep: &dyn Fn(&Row) -> bool,
) -> Result<(Vec<Row>, usize, Vec<String>)> {
    let (mut list, total, mut problems) = fleet_rows(f, walk, limit, keep)?;
    for r in &mut list {
        if let Some(why) = f.rewritten.get(&r.branch) {
            r.problems.push(format!(
                "read from {}, which {why}: not to be trusted (docs/protocol.md#6-the-main-pcs-side)",
                r.branch
            ));
        }
    }
    for (b, why) in &f.rewritten {
        problems.push(format!("{b} {why}"));
    }
    Ok((list, total, problems))
}

/// Every result standing at the tips of `sources`, once per path (a node's own
/// branch first), and the problems of their trees — among them a folder on a
/// node's own branch that is not that node's, named and never listed.
pub(super) fn inventory(
    repo: &Repository,
    sources: &[Rc<Source>],
    budget: &Budget,
) -> Result<(Vec<Found>, Vec<String>)> {
    let mut by_path: BTreeMap<String, Found> = BTreeMap::new();
    let mut problems = Vec::new();
    // Own branches first, so that an identical copy on rx-node is the same entry.
    let mut order: Vec<&Rc<Source>> = sources.iter().collect();
    order.sort_by_key(|s| s.owner.is_none());
    for src in order {
        let commit = repo.find_commit(src.tip)?;
        let (found, p) = find_results(repo, &commit.tree()?, src, budget)?;
        problems.extend(p.into_iter().map(|p| match &src.owner {
            None => p,
            Some(_) => format!("{}: {p}", src.branch),
        }));
        for f in found {
            if !own_result(src, &f) {
                problems.push(format!(
                    "{} holds {}/: a node's own branch holds only its own results; not listed (rxnode did not write it)",
                    src.branch,
                    shown(&f.path, 120)
                ));
                continue;
            }
            by_path.entry(f.path.clone()).or_insert(f);
        }
    }
    Ok((by_path.into_values().collect(), problems))
}

/// The results of every branch in one stream, newest first by when they landed
/// (the committer time of the commit that last added or changed each; on a
/// tie a node's own branch first, then by branch), each path once: the copy
/// that landed later is the one handed on. Each branch is read only as far as
/// the stream is taken.
pub(super) struct Merge<'r> {
    walkers: Vec<Walker<'r>>,
    heap: BinaryHeap<(i64, bool, Reverse<usize>)>,
    seen: HashSet<String>,
}

impl<'r> Merge<'r> {
    pub(super) fn new(
        repo: &'r Repository,
        sources: &[Rc<Source>],
        budget: &'r Budget,
    ) -> Result<Merge<'r>> {
        let mut m = Merge {
            walkers: Vec::new(),
            heap: BinaryHeap::new(),
            seen: HashSet::new(),
        };
        for s in sources {
            let mut w = Walker::new(repo, s.clone(), budget)?;
            let i = m.walkers.len();
            if let Some(c) = w.peek()? {
                m.heap.push((c.time, s.owner.is_some(), Reverse(i)));
            }
            m.walkers.push(w);
        }
        Ok(m)
    }

    /// The next result not handed on before; `None` when every branch is read.
    pub(super) fn next(&mut self) -> Result<Option<Candidate>> {
        while let Some((_, own, Reverse(i))) = self.heap.pop() {
            let Some(w) = self.walkers.get_mut(i) else {
                continue;
            };
            let Some(c) = w.pop()? else { continue };
            if let Some(n) = w.peek()? {
                self.heap.push((n.time, own, Reverse(i)));
            }
            // A folder that is not its branch's own is named by `inventory`.
            if !own_result(w.source(), &c.found) || !self.seen.insert(c.found.path.clone()) {
                continue;
            }
            return Ok(Some(c));
        }
        Ok(None)
    }
}

/// The newest results across every branch in `sources` that pass `keep`, at
/// most `limit` (`None`: every one), as [`Merge`] orders them; each row says
/// its branch, the other branches holding the very same result, and a conflict
/// (another branch holding a different copy) among its problems. Also: how
/// many results the branches hold (each path once) and the problems of their
/// trees. `walk` narrows the branches read for rows (`total` counts them all).
fn fleet_rows(
    f: &Fetched<'_>,
    walk: &dyn Fn(&Source) -> bool,
    limit: Option<usize>,
    keep: &dyn Fn(&Row) -> bool,
) -> Result<(Vec<Row>, usize, Vec<String>)> {
    let (repo, sources, budget) = (f.repo, &f.sources[..], &f.budget);
    let (all, problems) = inventory(repo, sources, budget)?;
    let walked: Vec<Rc<Source>> = sources.iter().filter(|s| walk(s)).cloned().collect();
    let mut m = Merge::new(repo, &walked, budget)?;
    let mut out = Vec::new();
    let scratch = Scratch::new()?;
    while limit.is_none_or(|l| out.len() < l) {
        let Some(c) = m.next()? else { break };
        let mut r = row_of(repo, c.found.clone(), c.commit, (&scratch, &f.posted))?;
        other_copy(repo, sources, &c, &mut r, budget)?;
        if keep(&r) {
            out.push(r);
        }
    }
    Ok((out, all.len(), problems))
}

/// The other branch that may hold `c`'s result: `rx-results/<NODE>` for a
/// result of NODE on `rx-node`, `rx-node` for one on a node's own branch. The
/// same tree there: named in `also_on`; another tree: a conflict, named among
/// the row's problems (this copy landed later, so it is the one listed).
fn other_copy(
    repo: &Repository,
    sources: &[Rc<Source>],
    c: &Candidate,
    r: &mut Row,
    budget: &Budget,
) -> Result<()> {
    let f = &c.found;
    let other = match (&f.source.owner, &f.dir_node) {
        (None, Some(n)) => sources.iter().find(|s| s.owner.as_ref() == Some(n)),
        (Some(_), _) => sources.iter().find(|s| s.owner.is_none()),
        (None, None) => None,
    };
    let Some(other) = other else { return Ok(()) };
    let Some(rt) = repo
        .find_commit(other.tip)
        .ok()
        .and_then(|c| c.tree().ok())
        .and_then(|t| t.get_name(RESULTS_DIR).map(|e| e.id()))
        .and_then(|id| repo.find_tree(id).ok())
    else {
        return Ok(());
    };
    let key = &f.path[RESULTS_DIR.len() + 1..];
    let Some(o) = found_at(repo, &rt, key, other, budget)? else {
        return Ok(());
    };
    if o.tree == f.tree {
        r.also_on.push(other.branch.clone());
    } else {
        r.problems.push(format!(
            "conflict: {} on {} (tree {}) differs from the copy on {} (tree {}); the one that landed later, on {}, is listed",
            f.path, other.branch, o.tree, f.source.branch, f.tree, f.source.branch
        ));
    }
    Ok(())
}

/// The row of one result that landed in commit `added`.
pub(super) fn row_of_candidate(
    repo: &Repository,
    f: Found,
    added: Oid,
    check: (&Scratch, &Posted),
) -> Result<Row> {
    row_of(repo, f, added, check)
}

/// The row of one result: its fields read from the JSON (and LOG_META), its
/// problems (does not validate, lies in another task's or node's folder, or
/// cannot be tied to a task the main PC posted).
fn row_of(
    repo: &Repository,
    f: Found,
    added: Oid,
    (scratch, posted): (&Scratch, &Posted),
) -> Result<Row> {
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
        // The first problem, named: a count here would be the validator's alone
        // (`results verify` and `results show` also check LOG_META.json and the
        // commit), and a file that cannot be read is no count at all.
        let first = match (md, js) {
            (Ok(md), Ok(js)) => scratch.validate(&md, &js)?.into_iter().next(),
            (Err(e), _) | (_, Err(e)) => Some(e),
        };
        if let Some(first) = first {
            problems.push(format!(
                "does not validate ({}): its status is not to be trusted; `rxnode results verify {}` names every problem",
                shown(&first, 200),
                f.task_id
            ));
        }
    }
    // A status is only as good as the task it answers: one the result's
    // `source_commit` does not tie to the watched branch is flagged too.
    if j.is_object() {
        let commit = j.get("source_commit").and_then(Value::as_str);
        if let Some(why) = posted.untied(repo, commit, &f.task_id) {
            problems.push(format!(
                "not tied to a task the main PC posted ({}): its status is not to be trusted; `rxnode results verify {}` says more",
                shown(&why, 300),
                f.task_id
            ));
        }
    }
    let json_node = str_of(&j, &["node", "name"]);
    let node = f.node(repo);
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
        branch: f.source.branch.clone(),
        also_on: Vec::new(),
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

/// `results --json`: the listing.
#[derive(serde::Serialize)]
struct Listing<'a> {
    /// Every results branch read.
    branches: Vec<ListedBranch<'a>>,
    /// At most this many results listed (`null`: `--all`).
    limit: Option<usize>,
    /// What could not be read of the branches, in words.
    problems: &'a [String],
    /// The private ref the listing was read from.
    r#ref: &'static str,
    /// The results listed, newest first.
    results: &'a [Row],
    /// The fetched `rx-node` tip, when there is one.
    tip: Option<String>,
    /// Results that pass the filters, listed or not.
    total: usize,
}

/// A results branch of [`Listing`].
#[derive(serde::Serialize)]
struct ListedBranch<'a> {
    /// `rx-node` or `rx-results/<NODE>`.
    branch: &'a str,
    /// The node whose own branch it is; `null` for the shared `rx-node`.
    node: Option<&'a str>,
    /// Its tip as fetched.
    tip: String,
}

/// `rxnode results`: the newest results on every results branch that pass the
/// filters (at most `limit`; `None`: every one), newest first.
pub(super) fn cmd_list(
    f: &Fetched<'_>,
    filter: &Filter<'_>,
    limit: Option<usize>,
) -> Result<Outcome> {
    let keep = |r: &Row| filter.keeps(r);
    let (list, total, tree_problems) = match filter.node {
        None => rows(f, limit, &keep)?,
        // `--node N`: the other nodes' own branches need not be walked.
        Some(n) => rows_of(
            f,
            &|s| s.owner.as_deref().is_none_or(|o| o == n),
            limit,
            &keep,
        )?,
    };
    let branches: Vec<ListedBranch> = f
        .sources
        .iter()
        .map(|s| ListedBranch {
            branch: &s.branch,
            node: s.owner.as_deref(),
            tip: s.tip.to_string(),
        })
        .collect();
    let out = safe_json(&Listing {
        branches,
        limit,
        problems: &tree_problems,
        r#ref: PRIVATE_REF,
        results: &list,
        tip: f.tip.map(|t| t.to_string()),
        total,
    })?;
    f.ctx.report(&out, |_| {
        if !f.any() {
            return format!("{}\n", f.none_yet());
        }
        let own = f.sources.iter().filter(|s| s.owner.is_some()).count();
        let mut text = render_list(f.tip, own, total, &list, &tree_problems);
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
fn render_list(
    tip: Option<Oid>,
    own: usize,
    total: usize,
    list: &[Row],
    tree_problems: &[String],
) -> String {
    let mut text = String::new();
    let shared = match tip {
        None => "no rx-node".to_owned(),
        Some(t) => format!("rx-node {}", &t.to_string()[..12]),
    };
    let _ = writeln!(
        text,
        "{} of {total} result(s) on {shared} and {own} node branch(es) rx-results/<NODE> (fetched under refs/rxnode/main-pc/), newest first:",
        list.len()
    );
    if !list.is_empty() {
        let _ = writeln!(
            text,
            "{:<14} {:<8} {:<28} {:<8} {:<6} {:<25} {:<12} figures",
            "NODE", "ON", "TASK_ID", "STATUS", "RISK", "COMPLETED", "COMMIT"
        );
    }
    for r in list {
        // Which layout it was read from: the shared rx-node, the node's own branch, or both.
        let on = match (r.branch == "rx-node", r.also_on.is_empty()) {
            (_, false) => "both",
            (true, true) => "rx-node",
            (false, true) => "own",
        };
        let _ = writeln!(
            text,
            "{:<14} {on:<8} {:<28} {:<8} {:<6} {:<25} {:<12} {}",
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
