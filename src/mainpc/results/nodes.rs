//! `rxnode results nodes`: per node, its last heartbeat (`rx-status/<NODE>`,
//! docs/protocol.md#node-status) and its results on `rx-node` and on its own
//! `rx-results/<NODE>`; a branch of the node rewritten by someone is named.
//!
//! The status branches are fetched into private refs under
//! [`STATUS_PRIVATE_PREFIX`] with the same anonymous fetch as `rx-node`; what
//! they hold was written by RX nodes and is read as untrusted input: one
//! bounded blob, every string escaped before it is shown.
use super::fetched::Fetched;
use super::fetched::STATUS_PRIVATE_PREFIX;
use super::list::{inventory, row_of_candidate, Merge, Row};
use super::text::{parse_time, safe_json, shown};
use crate::exit::Outcome;
use crate::heartbeat::snapshot::{NodeStatus, STATUS_SCHEMA};
use anyhow::Result;
use git2::{ObjectType, Repository};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The largest `STATUS.json` read (a node publishes at most 4 KiB).
const MAX_STATUS_READ: usize = 16 * 1024;
/// A node is `alive` while its last heartbeat is at most this many intervals old.
pub(crate) const ALIVE_INTERVALS: f64 = 2.0;
/// …and `silent` once it is older than this many intervals (`stale` between).
pub(crate) const SILENT_INTERVALS: f64 = 10.0;
/// How far ahead of the main PC's clock a heartbeat may be before it is flagged.
const CLOCK_AHEAD_TOLERANCE_S: f64 = 5.0;

/// One node as `results nodes` shows it.
#[derive(Debug, Serialize)]
pub(super) struct NodeRow {
    pub(super) node: Option<String>,
    /// `alive`, `stale`, `silent`, or `stopped` (its last status says the
    /// watcher was stopped).
    pub(super) state: &'static str,
    pub(super) last_heartbeat: Option<String>,
    pub(super) age_s: Option<f64>,
    pub(super) publish_every_s: Option<f64>,
    pub(super) watcher: Option<String>,
    pub(super) last_poll: Option<Value>,
    pub(super) pending_approval: Option<u64>,
    pub(super) deferred: Option<u64>,
    pub(super) approved: Option<u64>,
    pub(super) pending: Vec<Value>,
    pub(super) running: Option<Value>,
    pub(super) refusals: Vec<Value>,
    pub(super) radios: Vec<Value>,
    pub(super) calibration: Vec<Value>,
    pub(super) rxnode_version: Option<String>,
    pub(super) results: usize,
    pub(super) last_result_at: Option<String>,
    pub(super) last_result_landed_at: Option<String>,
    /// The branch the last result was read from.
    pub(super) last_result_branch: Option<String>,
    pub(super) last_task_id: Option<String>,
    pub(super) last_status: Option<String>,
    /// Where the node publishes as its results show it: `rx-node`, `rx-results/<NODE>`, or both.
    pub(super) publishes_to: Vec<String>,
    /// Its branches rewritten by someone since this PC saw them (branch → what was found).
    pub(super) rewritten: BTreeMap<String, String>,
    pub(super) problems: Vec<String>,
    #[serde(skip)]
    pub(super) sort_time: i64,
}

impl NodeRow {
    fn new(node: Option<String>) -> NodeRow {
        NodeRow {
            node,
            state: "silent",
            last_heartbeat: None,
            age_s: None,
            publish_every_s: None,
            watcher: None,
            last_poll: None,
            pending_approval: None,
            deferred: None,
            approved: None,
            pending: Vec::new(),
            running: None,
            refusals: Vec::new(),
            radios: Vec::new(),
            calibration: Vec::new(),
            rxnode_version: None,
            results: 0,
            last_result_at: None,
            last_result_landed_at: None,
            last_result_branch: None,
            last_task_id: None,
            last_status: None,
            publishes_to: Vec::new(),
            rewritten: BTreeMap::new(),
            problems: Vec::new(),
            sort_time: i64::MIN,
        }
    }
}

/// `alive` / `stale` / `silent` for a heartbeat `age_s` old at interval `every_s`.
pub(crate) fn state_of(age_s: f64, every_s: f64) -> &'static str {
    if age_s <= ALIVE_INTERVALS * every_s {
        "alive"
    } else if age_s <= SILENT_INTERVALS * every_s {
        "stale"
    } else {
        "silent"
    }
}

/// `results nodes`.
pub(super) fn cmd_nodes(f: &Fetched<'_>) -> Result<Outcome> {
    let nodes = fleet(f)?;
    /// `results nodes --json`.
    #[derive(serde::Serialize)]
    struct Nodes<'a> {
        /// Every node heard of, the most recently heard first.
        nodes: &'a [NodeRow],
    }
    let out = safe_json(&Nodes { nodes: &nodes })?;
    f.ctx.report(&out, |_| render_nodes(&nodes))?;
    Ok(Outcome::Done)
}

/// Every node that published a result or a status, the most recently heard first.
pub(super) fn fleet(f: &Fetched<'_>) -> Result<Vec<NodeRow>> {
    let now = time::OffsetDateTime::now_utc();
    let mut by = results_by_node(f)?;
    let statuses = read_statuses(f.repo)?;
    // Every status branch against what this PC saw of it last.
    let seen_now: Vec<super::seen::Now> = statuses
        .iter()
        .filter_map(|(name, (v, _), tip)| {
            Some(super::seen::Now {
                branch: format!("rx-status/{name}"),
                tip: (*tip)?,
                heartbeat: v.as_ref().ok().map(|st| st.time.clone()),
            })
        })
        .collect();
    let mut rewritten =
        super::seen::check(f.repo, &super::seen::is_status_branch, &seen_now, false);
    rewritten.extend(f.rewritten.clone());
    for (name, status, _) in statuses {
        let n = by
            .entry(Some(name.clone()))
            .or_insert_with(|| NodeRow::new(Some(name.clone())));
        heartbeat(n, &name, status, now);
    }
    for (branch, why) in rewritten {
        let node = branch
            .strip_prefix("rx-status/")
            .or_else(|| branch.strip_prefix("rx-results/"))
            .map(str::to_owned);
        // `rx-node` is every node's: named on each node that has results there.
        let targets: Vec<Option<String>> = match node {
            Some(n) => vec![Some(n)],
            None => by
                .iter()
                .filter(|(_, r)| r.publishes_to.iter().any(|b| b == "rx-node"))
                .map(|(k, _)| k.clone())
                .collect(),
        };
        for t in targets {
            let n = by
                .entry(t.clone())
                .or_insert_with(|| NodeRow::new(t.clone()));
            n.problems.push(format!(
                "{branch} {why}: what it shows is not to be trusted (docs/protocol.md#6-the-main-pcs-side)"
            ));
            n.rewritten.insert(branch.clone(), why.clone());
        }
    }
    for n in by.values_mut() {
        if n.last_heartbeat.is_none() && n.problems.is_empty() {
            n.problems.push(
                "no status published (no rx-status branch: status publishing is off on that node; docs/operator.md#letting-the-main-pc-see-this-node)"
                    .to_owned(),
            );
        }
    }
    let mut nodes: Vec<NodeRow> = by.into_values().collect();
    nodes.sort_by(|a, b| {
        b.sort_time
            .cmp(&a.sort_time)
            .then_with(|| a.node.cmp(&b.node))
    });
    Ok(nodes)
}

/// The node's last result: its completion time, or — when the result carries
/// none — when it landed on `rx-node`.
fn last_result(repo: &Repository, n: &mut NodeRow, r: &Row) {
    n.last_result_at = r.completed_at.clone();
    n.last_task_id = Some(r.task_id.clone());
    n.last_status = r.status.clone();
    n.last_result_branch = Some(r.branch.clone());
    // Its status is shown only with what the listing says against it.
    if let Some(p) = r.problems.first() {
        n.problems.push(format!(
            "last result {} ({}): {}",
            r.task_id,
            r.status.as_deref().unwrap_or("?"),
            shown(p, 400)
        ));
    }
    n.last_result_landed_at = r
        .commit
        .as_deref()
        .and_then(|c| git2::Oid::from_str(c).ok())
        .and_then(|c| repo.find_commit(c).ok())
        .and_then(|c| time::OffsetDateTime::from_unix_timestamp(c.time().seconds()).ok())
        // The form of every other time in the listing (`+00:00`, never `Z`).
        .map(crate::store::fsutil::iso_utc);
    n.sort_time = n.sort_time.max(r.sort_time);
}

/// Per node: how many results it has on every results branch (each path
/// once), its last result (newest first by when it landed, across the
/// branches: the stream is read only until every node's newest is found), and
/// the branches its results are on.
fn results_by_node(f: &Fetched<'_>) -> Result<BTreeMap<Option<String>, NodeRow>> {
    let repo = f.repo;
    let mut by: BTreeMap<Option<String>, NodeRow> = BTreeMap::new();
    let (all, _) = inventory(repo, &f.sources, &f.budget)?;
    let scratch = super::verify::Scratch::new()?;
    // Results of the layout before node names say their node in the result only.
    let mut legacy_node: BTreeMap<String, Option<String>> = BTreeMap::new();
    for found in &all {
        let node = match &found.dir_node {
            Some(n) => Some(n.clone()),
            None => {
                let n =
                    row_of_candidate(repo, found.clone(), found.source.tip, (&scratch, &f.posted))?
                        .node;
                legacy_node.insert(found.path.clone(), n.clone());
                n
            }
        };
        let n = by.entry(node.clone()).or_insert_with(|| NodeRow::new(node));
        n.results += 1;
        if !n.publishes_to.contains(&found.source.branch) {
            n.publishes_to.push(found.source.branch.clone());
        }
    }
    let mut left = by.len();
    let mut m = Merge::new(repo, &f.sources, &f.budget)?;
    while left > 0 {
        let Some(c) = m.next()? else { break };
        let node = match &c.found.dir_node {
            Some(n) => Some(n.clone()),
            None => legacy_node.get(&c.found.path).cloned().flatten(),
        };
        let Some(n) = by.get_mut(&node) else { continue };
        if n.last_task_id.is_some() {
            continue;
        }
        let r = row_of_candidate(repo, c.found, c.commit, (&scratch, &f.posted))?;
        last_result(repo, n, &r);
        left -= 1;
    }
    Ok(by)
}

/// What one private status ref holds: `STATUS.json` read into the type the node
/// writes (fields it does not know are ignored), or why it cannot be read.
type Read = (Result<NodeStatus, String>, Vec<String>);

/// Every node's status branch as fetched, by node name, with its commit.
fn read_statuses(repo: &Repository) -> Result<Vec<(String, Read, Option<git2::Oid>)>> {
    let mut out = Vec::new();
    for r in repo.references_glob(&format!("{STATUS_PRIVATE_PREFIX}*"))? {
        let Ok(r) = r else { continue };
        let Some(full) = r.name() else { continue };
        let name = full.trim_start_matches(STATUS_PRIVATE_PREFIX).to_owned();
        if crate::store::node::check_name(&name).is_err() {
            // Not a node name rxnode would publish: shown, never trusted as one.
            out.push((
                shown(&name, 40),
                (
                    Err(format!(
                        "rx-status/{} is not a node name (1 to 32 of A-Z a-z 0-9 _ -)",
                        shown(&name, 40)
                    )),
                    Vec::new(),
                ),
                None,
            ));
            continue;
        }
        let tip = r.peel_to_commit().ok().map(|c| c.id());
        out.push((name.clone(), read_one(repo, &r, &name), tip));
    }
    Ok(out)
}

/// `STATUS.json` of one status ref, and what is wrong with the branch's shape.
fn read_one(repo: &Repository, r: &git2::Reference<'_>, name: &str) -> Read {
    let mut problems = Vec::new();
    let commit = match r.peel_to_commit() {
        Ok(c) => c,
        Err(e) => {
            return (
                Err(format!("rx-status/{name} is not a commit: {}", e.message())),
                problems,
            )
        }
    };
    if commit.parent_count() > 0 {
        problems.push(format!(
            "rx-status/{name} has history (a node keeps exactly one parentless commit there)"
        ));
    }
    let tree = match commit.tree() {
        Ok(t) => t,
        Err(e) => return (Err(e.message().to_owned()), problems),
    };
    if tree.len() != 1 {
        problems.push(format!(
            "rx-status/{name} holds {} entries; a status is STATUS.json alone",
            tree.len()
        ));
    }
    let Some(entry) = tree.get_name("STATUS.json") else {
        return (
            Err(format!("rx-status/{name} has no STATUS.json")),
            problems,
        );
    };
    if entry.kind() != Some(ObjectType::Blob) || entry.filemode() != 0o100644 {
        return (
            Err(format!("rx-status/{name}: STATUS.json is not a plain file")),
            problems,
        );
    }
    let size = repo
        .odb()
        .and_then(|o| o.read_header(entry.id()))
        .map(|(n, _)| n)
        .unwrap_or(usize::MAX);
    if size > MAX_STATUS_READ {
        return (
            Err(format!(
                "rx-status/{name}: STATUS.json is {size} bytes; a status is at most 4096 (not read)"
            )),
            problems,
        );
    }
    if size > crate::heartbeat::snapshot::MAX_STATUS_BYTES {
        problems.push(format!(
            "rx-status/{name}: STATUS.json is {size} bytes; a status is at most 4096"
        ));
    }
    let v = repo
        .find_blob(entry.id())
        .map_err(|e| e.message().to_owned())
        .and_then(|b| typed_status(name, b.content()));
    (v, problems)
}

/// `STATUS.json` read into [`NodeStatus`]: a text that is not JSON, or a field
/// of the wrong type or a value out of range, is refused naming the field (its
/// path, e.g. `queue.pending_approval`) and what is wrong, shown safely.
fn typed_status(name: &str, bytes: &[u8]) -> Result<NodeStatus, String> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let st: NodeStatus = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let why = shown(&e.inner().to_string(), 160);
        if e.inner().is_syntax() || e.inner().is_eof() {
            format!("rx-status/{name}: STATUS.json does not parse ({why})")
        } else {
            format!(
                "rx-status/{name}: STATUS.json does not match `rxnode schema status` at {}: {why}",
                shown(&e.path().to_string(), 80)
            )
        }
    })?;
    de.end()
        .map_err(|e| format!("rx-status/{name}: STATUS.json does not parse ({e})"))?;
    // Another version's fields may mean other things: never read as this one's.
    if st.schema_version != STATUS_SCHEMA {
        return Err(format!(
            "rx-status/{name}: STATUS.json schema_version {} is not supported (this build reads {STATUS_SCHEMA})",
            st.schema_version
        ));
    }
    Ok(st)
}

/// A part of a status as JSON, every string shown safely.
fn safe_part<T: Serialize>(part: &T) -> Value {
    safe_value(&serde_json::to_value(part).unwrap_or(Value::Null), 1)
}

/// The first 20 entries of a status list, every string shown safely.
fn safe_list<T: Serialize>(list: &[T]) -> Vec<Value> {
    list.iter().take(20).map(safe_part).collect()
}

/// A JSON object of strings and small numbers copied with every string shown safely.
fn safe_value(v: &Value, depth: usize) -> Value {
    match v {
        Value::String(x) => Value::String(shown(x, 200)),
        Value::Array(a) if depth > 0 => Value::Array(
            a.iter()
                .take(20)
                .map(|x| safe_value(x, depth - 1))
                .collect(),
        ),
        Value::Object(o) if depth > 0 => Value::Object(
            o.iter()
                .take(20)
                .map(|(k, x)| (shown(k, 40), safe_value(x, depth - 1)))
                .collect(),
        ),
        Value::Number(_) | Value::Bool(_) | Value::Null => v.clone(),
        _ => Value::Null,
    }
}

/// Fill the row from the node's status, its age and state.
fn heartbeat(n: &mut NodeRow, name: &str, (status, problems): Read, now: time::OffsetDateTime) {
    n.problems.extend(problems);
    let st = match status {
        Ok(st) => st,
        Err(e) => {
            n.problems.push(e);
            return;
        }
    };
    if st.node != name {
        n.problems.push(format!(
            "STATUS.json on rx-status/{name} names node {}",
            shown(&st.node, 40)
        ));
    }
    n.last_heartbeat = Some(shown(&st.time, 40));
    n.publish_every_s =
        Some(st.publish_every_s).filter(|e| e.is_finite() && (0.2..=86_400.0).contains(e));
    n.watcher = Some(shown(&st.watcher, 20));
    n.rxnode_version = Some(shown(&st.rxnode_version, 40));
    n.last_poll = Some(safe_part(&st.last_poll));
    let q = &st.queue;
    n.pending_approval = Some(q.pending_approval as u64);
    n.deferred = Some(q.deferred as u64);
    n.approved = Some(q.approved as u64);
    n.pending = safe_list(&q.pending);
    n.running = q.running.as_ref().map(safe_part);
    n.refusals = safe_list(&st.refusals);
    n.radios = safe_list(&st.radios);
    n.calibration = safe_list(&st.calibration);
    let t = parse_time(&st.time);
    match (t, n.publish_every_s) {
        (Some(t), Some(every)) => {
            let age = (now - t).as_seconds_f64();
            if age < -CLOCK_AHEAD_TOLERANCE_S {
                // Its age cannot be known: a node whose clock runs ahead looks
                // fresh however long ago it went quiet. No age, no liveness.
                n.problems.push(format!(
                    "its heartbeat is {:.0} s ahead of this PC's clock: its age and so whether it is alive are unknown (check both clocks)",
                    -age
                ));
                n.age_s = None;
                n.state = "unknown";
            } else {
                let age = age.max(0.0);
                n.age_s = Some((age * 10.0).round() / 10.0);
                n.state = state_of(age, every);
            }
            if n.watcher.as_deref() == Some("stopped") {
                // A watcher stopped on purpose is not alive, however recent its last word.
                n.state = "stopped";
            }
            n.sort_time = n.sort_time.max(t.unix_timestamp());
        }
        (None, _) => n.problems.push(format!(
            "STATUS.json on rx-status/{name} has no readable time"
        )),
        (_, None) => n.problems.push(format!(
            "STATUS.json on rx-status/{name} has no valid publish_every_s"
        )),
    }
}

/// The human report: per node, its heartbeat, queue, radios, calibration,
/// refusals, results and problems.
fn render_nodes(nodes: &[NodeRow]) -> String {
    let mut text = String::new();
    if nodes.is_empty() {
        let _ = writeln!(text, "no node has published a result or a status yet");
        return text;
    }
    for n in nodes {
        let name = n.node.as_deref().unwrap_or("(unnamed)");
        let _ = match (&n.last_heartbeat, n.age_s) {
            (Some(t), Some(a)) if n.state == "stopped" => writeln!(
                text,
                "{name}  STOPPED  the watcher's last heartbeat {t} ({a:.0} s ago) said it stopped"
            ),
            (Some(t), Some(a)) => writeln!(
                text,
                "{name}  {}  last heartbeat {t} ({a:.0} s ago, every {} s)  watcher {}",
                n.state.to_uppercase(),
                n.publish_every_s
                    .map(|e| format!("{e}"))
                    .unwrap_or_else(|| "?".into()),
                n.watcher.as_deref().unwrap_or("?")
            ),
            (Some(t), None) => writeln!(
                text,
                "{name}  {}  last heartbeat {t} (ahead of this PC's clock: age unknown)  watcher {}",
                n.state.to_uppercase(),
                n.watcher.as_deref().unwrap_or("?")
            ),
            _ => writeln!(text, "{name}  {}  no heartbeat", n.state.to_uppercase()),
        };
        if n.last_heartbeat.is_some() {
            let running = n
                .running
                .as_ref()
                .map(|r| {
                    format!(
                        "; running {} step {}/{} ({})",
                        r["task_id"].as_str().unwrap_or("?"),
                        r["step"],
                        r["steps"],
                        r["op"].as_str().unwrap_or("?")
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "    queue: {} pending approval, {} deferred, {} approved{running}",
                opt(n.pending_approval),
                opt(n.deferred),
                opt(n.approved)
            );
            if n.radios.is_empty() {
                let _ = writeln!(text, "    radios: none reported");
            }
            for r in &n.radios {
                let _ = writeln!(
                    text,
                    "    radio {}: {}{}{}",
                    r["device"].as_str().unwrap_or("?"),
                    r["health"].as_str().unwrap_or("?"),
                    r["last_self_test"]
                        .as_str()
                        .map(|t| format!(", self-test {t}"))
                        .unwrap_or_default(),
                    r["reason"]
                        .as_str()
                        .map(|t| format!(": {t}"))
                        .unwrap_or_default()
                );
            }
            for c in &n.calibration {
                let _ = match (c["ppm"].as_f64(), c["problem"].as_str()) {
                    (Some(ppm), _) => writeln!(
                        text,
                        "    calibration {}: {} ({}, {})",
                        c["device"].as_str().unwrap_or("?"),
                        c["uncertainty_ppm"]
                            .as_f64()
                            .map(|u| rxnode_dsp::fmt_uncertain(ppm, u, "ppm"))
                            .unwrap_or_else(|| format!("{ppm:+.3} ppm ± ?")),
                        c["method"].as_str().unwrap_or("?"),
                        c["time"].as_str().unwrap_or("?")
                    ),
                    (None, p) => writeln!(
                        text,
                        "    calibration {}: {}",
                        c["device"].as_str().unwrap_or("?"),
                        p.unwrap_or("no value")
                    ),
                };
            }
            if let Some(r) = n.refusals.first() {
                let _ = writeln!(
                    text,
                    "    refusals: {} (newest: {}: {})",
                    n.refusals.len(),
                    r["task_id"].as_str().unwrap_or("(no ID)"),
                    r["reason"].as_str().unwrap_or("?")
                );
            }
        }
        let _ = match (&n.last_task_id, &n.last_result_at, &n.last_result_landed_at) {
            (None, _, _) => writeln!(text, "    results: none"),
            (Some(id), Some(at), _) => writeln!(text,
                "    results: {} on {}; last {id} {} completed {at}",
                n.results,
                n.publishes_to.join(" and "),
                n.last_status.as_deref().unwrap_or("?")
            ),
            (Some(id), None, landed) => writeln!(text,
                "    results: {} on {}; last {id} {} (no completion time in the result; landed on {} {})",
                n.results,
                n.publishes_to.join(" and "),
                n.last_status.as_deref().unwrap_or("?"),
                n.last_result_branch.as_deref().unwrap_or("?"),
                landed.as_deref().unwrap_or("at an unknown time")
            ),
        };
        for p in &n.problems {
            let _ = writeln!(text, "    ! {p}");
        }
    }
    text
}

fn opt(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "?".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alive_within_two_intervals_silent_after_ten() {
        assert_eq!(state_of(0.0, 2.0), "alive");
        assert_eq!(state_of(4.0, 2.0), "alive");
        assert_eq!(state_of(4.1, 2.0), "stale");
        assert_eq!(state_of(20.0, 2.0), "stale");
        assert_eq!(state_of(20.1, 2.0), "silent");
    }

    /// A status of another `schema_version` (a newer or older format, whose
    /// fields may mean other things) is refused naming the version, never read
    /// as this build's: it was listed `alive` with its fields taken as version 1's.
    #[test]
    fn a_status_of_another_schema_version_is_refused_naming_it() {
        let now = time::OffsetDateTime::now_utc();
        let t = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        for version in [0, 2] {
            let v = serde_json::json!({"schema_version": version, "node": "LAB-RX2", "rxnode_version": "9",
                "time": t, "publish_every_s": 30.0, "watcher": "running", "last_poll": null,
                "queue": {"pending_approval": 0, "deferred": 0, "approved": 0, "pending": []},
                "refusals": [], "radios": []});
            let st = typed_status("LAB-RX2", v.to_string().as_bytes());
            let e = st.expect_err("another version is refused");
            assert!(
                e.contains(&format!(
                    "schema_version {version} is not supported (this build reads 1)"
                )),
                "{e}"
            );
            let mut n = NodeRow::new(Some("LAB-RX2".into()));
            heartbeat(&mut n, "LAB-RX2", (Err(e), Vec::new()), now);
            assert_ne!(n.state, "alive");
        }
    }

    /// A last status that says the watcher stopped is `stopped`, never `alive`,
    /// and the line says it once.
    #[test]
    fn a_stopped_watcher_is_not_alive() {
        let now = time::OffsetDateTime::now_utc();
        let t = now
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let mut n = NodeRow::new(Some("LAB-RX2".into()));
        let v = serde_json::json!({"schema_version": 1, "node": "LAB-RX2", "rxnode_version": "0",
            "time": t, "publish_every_s": 30.0, "watcher": "stopped", "last_poll": null,
            "queue": {"pending_approval": 0, "deferred": 0, "approved": 0, "pending": []},
            "refusals": [], "radios": []});
        let st = typed_status("LAB-RX2", v.to_string().as_bytes());
        heartbeat(&mut n, "LAB-RX2", (st, Vec::new()), now);
        assert_eq!(n.state, "stopped");
        let text = render_nodes(&[n]);
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("LAB-RX2  STOPPED  the watcher's last heartbeat"),
            "{text}"
        );
        assert!(!text.contains("ALIVE"), "{text}");
        assert_eq!(text.matches("stopped").count(), 1, "{text}");
    }

    /// A heartbeat from ahead of this PC's clock has no age that can be known: the
    /// node is `unknown` with no `age_s` (a node whose clock runs an hour ahead and
    /// went quiet was listed `alive`, age 0, for that hour), and a heartbeat within
    /// the tolerance still counts as age 0.
    #[test]
    fn a_heartbeat_from_the_future_has_no_age_and_no_liveness() {
        let now = time::OffsetDateTime::now_utc();
        let at = |dt: time::Duration| {
            (now + dt)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        };
        let row = |t: String| {
            let mut n = NodeRow::new(Some("LAB-RX2".into()));
            let v = serde_json::json!({"schema_version": 1, "node": "LAB-RX2", "rxnode_version": "0",
                "time": t, "publish_every_s": 30.0, "watcher": "running", "last_poll": null,
                "queue": {"pending_approval": 0, "deferred": 0, "approved": 0, "pending": []},
                "refusals": [], "radios": []});
            let st = typed_status("LAB-RX2", v.to_string().as_bytes());
            heartbeat(&mut n, "LAB-RX2", (st, Vec::new()), now);
            n
        };
        let ahead = row(at(time::Duration::hours(1)));
        assert_eq!((ahead.state, ahead.age_s), ("unknown", None));
        assert!(
            ahead
                .problems
                .iter()
                .any(|p| p.contains("3600 s ahead of this PC's clock")),
            "{:?}",
            ahead.problems
        );
        let text = render_nodes(&[ahead]);
        assert!(
            text.starts_with("LAB-RX2  UNKNOWN  last heartbeat") && !text.contains("ALIVE"),
            "{text}"
        );
        let near = row(at(time::Duration::seconds(3)));
        assert_eq!((near.state, near.age_s), ("alive", Some(0.0)));
    }
}
