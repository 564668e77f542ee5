//! "Every posted task reaches the operator: the watched
//! branch's history is a queue". The real binary against a real bare origin;
//! the main PC commits several task versions between two polls.
use crate::util::{git, text, Lab, BRANCH, PROMPT, TASK_PATH};
use serde::Deserialize;

mod history;

/// `rxnode status --json`, the parts the queue adds.
#[derive(Debug, Deserialize)]
struct Status {
    pending: Vec<String>,
    deferred: Vec<String>,
    approved: Vec<String>,
    withdrawn: Vec<String>,
    queue: Vec<QueueItem>,
    history_rewrites: Vec<Rewrite>,
    last_walk: Option<Walk>,
    remote_marker: Option<String>,
}

#[derive(Debug, Deserialize)]
struct QueueItem {
    position: usize,
    task_id: String,
    commit: String,
    risk_level: Option<String>,
    queued_at: String,
    age_s: Option<i64>,
    superseded_by: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Rewrite {
    old: String,
    new: String,
    merge_base: Option<String>,
    pending_off_branch: Vec<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Walk {
    at: String,
    from: String,
    since: Option<String>,
    tip: String,
    commits: usize,
    versions: usize,
    examined: usize,
    not_examined: usize,
    walk_truncated: bool,
    not_examined_commits: Vec<String>,
    limit: usize,
}

fn status(lab: &Lab) -> Status {
    let out = lab.run(&["status", "--json"], "");
    expect_exit!(out, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// Commit a task file on the main PC without pushing; returns the commit.
fn commit_task(lab: &Lab, body: &str) -> String {
    commit_file(lab, TASK_PATH, body.as_bytes())
}

fn commit_file(lab: &Lab, path: &str, bytes: &[u8]) -> String {
    let p = lab.main.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    git(&lab.main, &["add", path]);
    git(&lab.main, &["commit", "-q", "-m", &format!("post {path}")]);
    lab.main_head()
}

fn delete_task(lab: &Lab) -> String {
    git(&lab.main, &["rm", "-q", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-m", "withdraw the task"]);
    lab.main_head()
}

fn push(lab: &Lab) {
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
}

/// Where each task's block starts in the watcher's output, in order of `ids`.
fn prompt_positions(so: &str, ids: &[&str]) -> Vec<usize> {
    ids.iter()
        .map(|id| {
            so.find(&format!("  ID:      {id}\n"))
                .unwrap_or_else(|| panic!("{id} was not prompted:\n{so}"))
        })
        .collect()
}

/// The one examination line (offered/superseded/refused/duplicate/withdrawn/
/// task_file_deleted) that `commit` left in the ledger.
fn version_lines(lab: &Lab, commit: &str) -> Vec<String> {
    const KINDS: [&str; 6] = [
        "offered",
        "superseded",
        "refused",
        "duplicate",
        "withdrawn",
        "task_file_deleted",
    ];
    lab.ledger_events()
        .iter()
        .filter(|e| e["commit"] == commit && KINDS.iter().any(|k| e["event"] == *k))
        .map(|e| e["event"].as_str().unwrap().to_owned())
        .collect()
}

/// Fresh lab whose first poll (no marker: tip only) has happened, so later
/// pushes are examined from a marker.
fn started_lab() -> Lab {
    let lab = Lab::new();
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(lab.state()["remote_marker"].is_string());
    lab
}

#[test]
fn three_tasks_in_one_push_give_three_prompts_in_commit_order() {
    let lab = started_lab();
    let base = lab.main_head();
    let c1 = commit_task(&lab, &Lab::task("Q1", &base, &[]));
    let c2 = commit_task(&lab, &Lab::task("Q2", &base, &[("HARDWARE_ACCESS", "YES")]));
    let c3 = commit_task(&lab, &Lab::task("Q3", &base, &[]));
    push(&lab);
    let out = lab.watch_once("a\na\na\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert_eq!(so.matches(PROMPT).count(), 3, "{so}");
    let at = prompt_positions(&so, &["Q1", "Q2", "Q3"]);
    assert!(at[0] < at[1] && at[1] < at[2], "not in commit order:\n{so}");
    // Each prompt says how many more are queued, and which commit holds it.
    assert!(so.contains("1 of 3 in this poll; 2 more queued"), "{so}");
    assert!(so.contains("2 of 3 in this poll; 1 more queued"), "{so}");
    assert!(so.contains("3 of 3 in this poll; 0 more queued"), "{so}");
    assert!(
        so.contains(&format!("replaced on the branch by commit {c2}")),
        "{so}"
    );
    for (id, c) in [("Q1", &c1), ("Q2", &c2), ("Q3", &c3)] {
        assert_eq!(lab.status_of(id), "approved", "{id}");
        assert_eq!(lab.state()["tasks"][id]["commit"], c.as_str(), "{id}");
        assert_eq!(lab.state()["approvals"][id]["commit"], c.as_str(), "{id}");
        assert_eq!(lab.count_events("prompted", id), 1, "{id}");
    }
    // One examination line per version: the two replaced ones are superseded.
    assert_eq!(version_lines(&lab, &c1), ["superseded"]);
    assert_eq!(version_lines(&lab, &c2), ["superseded"]);
    assert_eq!(version_lines(&lab, &c3), ["offered"]);
    let w = status(&lab).last_walk.unwrap();
    assert_eq!((w.from.as_str(), w.commits, w.versions), ("marker", 3, 3));
    assert_eq!((w.examined, w.not_examined), (3, 0));
    assert_eq!(w.since.as_deref(), Some(base.as_str()));
    assert_eq!(w.tip, c3);
    // Nothing is offered twice.
    lab.post_file("notes.txt", b"x\n");
    let out = lab.watch_once("a\n");
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
}

#[test]
fn a_deferred_middle_task_does_not_hold_up_the_rest() {
    let lab = started_lab();
    let base = lab.main_head();
    for id in ["D1", "D2", "D3"] {
        commit_task(&lab, &Lab::task(id, &base, &[]));
    }
    push(&lab);
    let out = lab.watch_once("a\nd\na\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert_eq!(so.matches(PROMPT).count(), 3, "{so}");
    assert_eq!(lab.status_of("D1"), "approved");
    assert_eq!(lab.status_of("D2"), "deferred");
    assert_eq!(lab.status_of("D3"), "approved");
    let s = status(&lab);
    assert_eq!(s.deferred, ["D2"]);
    assert!(s.queue.is_empty(), "{:?}", s.queue);
    // The deferred one is not asked again by later polls.
    lab.post_file("notes.txt", b"x\n");
    let out = lab.watch_once("a\n");
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
    assert_eq!(lab.count_events("prompted", "D2"), 1);
}

#[test]
fn a_refused_version_between_two_good_ones_is_reported_and_skipped() {
    let lab = started_lab();
    let base = lab.main_head();
    let g1 = commit_task(&lab, &Lab::task("G1", &base, &[]));
    let bad = commit_task(
        &lab,
        &Lab::task(
            "BAD2",
            &base,
            &[
                ("HARDWARE_ACCESS", "YES"),
                ("RF_TX", "YES"),
                ("RISK_LEVEL", "YELLOW"),
            ],
        ),
    );
    let g3 = commit_task(&lab, &Lab::task("G3", &base, &[]));
    push(&lab);
    let out = lab.watch_once("a\na\n");
    let so = text(&out.stdout);
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert_eq!(so.matches(PROMPT).count(), 2, "{so}");
    let at = prompt_positions(&so, &["G1", "G3"]);
    assert!(at[0] < at[1]);
    assert!(!so.contains("  ID:      BAD2"), "{so}");
    assert!(se.contains("BAD2") && se.contains("RISK_LEVEL"), "{se}");
    assert!(so.contains("1 of 2 in this poll; 1 more queued"), "{so}");
    assert_eq!(lab.status_of("G1"), "approved");
    assert_eq!(lab.status_of("BAD2"), "rejected");
    assert_eq!(lab.status_of("G3"), "approved");
    assert_eq!(version_lines(&lab, &g1), ["superseded"]);
    assert_eq!(version_lines(&lab, &bad), ["refused"]);
    assert_eq!(version_lines(&lab, &g3), ["offered"]);
    let refused: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "refused" && e["commit"] == bad.as_str())
        .collect();
    assert!(
        refused[0]["detail"]["reason"]
            .as_str()
            .unwrap()
            .contains("RISK_LEVEL"),
        "{refused:?}"
    );
    assert!(!lab.local().join("rx_agent_outbox/BAD2").exists());
}

#[test]
fn stop_leaves_the_rest_queued_and_status_shows_the_queue() {
    let lab = started_lab();
    let base = lab.main_head();
    let c1 = commit_task(&lab, &Lab::task("S1", &base, &[]));
    let c2 = commit_task(&lab, &Lab::task("S2", &base, &[("HARDWARE_ACCESS", "YES")]));
    let c3 = commit_task(&lab, &Lab::task("S3", &base, &[("RISK_LEVEL", "RED")]));
    push(&lab);
    let out = lab.watch_once("s\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert_eq!(so.matches(PROMPT).count(), 1, "{so}");
    assert!(so.contains("2 more task(s) stay pending"), "{so}");
    let s = status(&lab);
    assert_eq!(s.pending, ["S1", "S2", "S3"]);
    let got: Vec<(usize, &str, &str, Option<&str>)> = s
        .queue
        .iter()
        .map(|q| {
            (
                q.position,
                q.task_id.as_str(),
                q.commit.as_str(),
                q.risk_level.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, "S1", c1.as_str(), Some("GREEN")),
            (2, "S2", c2.as_str(), Some("YELLOW")),
            (3, "S3", c3.as_str(), Some("RED")),
        ]
    );
    for q in &s.queue {
        assert!(q.age_s.is_some_and(|a| (0..600).contains(&a)), "{q:?}");
        assert!(!q.queued_at.is_empty());
    }
    assert_eq!(s.queue[0].superseded_by.as_deref(), Some(c2.as_str()));
    assert_eq!(s.queue[2].superseded_by, None);
    let plain = text(&lab.run(&["status"], "").stdout);
    assert!(plain.contains("queue:      3 pending"), "{plain}");
    let l1 = plain.find("1. S1").expect("S1 listed");
    let l3 = plain.find("3. S3").expect("S3 listed");
    assert!(l1 < l3, "{plain}");
    // Next start: the whole queue, in order, is shown again.
    let out = lab.watch_once("a\nd\na\n");
    let so = text(&out.stdout);
    let at = prompt_positions(&so, &["S1", "S2", "S3"]);
    assert!(at[0] < at[1] && at[1] < at[2], "{so}");
    assert!(so.contains("still pending from an earlier run"), "{so}");
    assert_eq!(lab.status_of("S1"), "approved");
    assert_eq!(lab.status_of("S2"), "deferred");
    assert_eq!(lab.status_of("S3"), "approved");
    assert_eq!(lab.count_events("detected", "S3"), 1);
}

/// The task file's folder replaced by a submodule (a gitlink `docs/handoff`)
/// removes the task file as a deletion does: the pending task is withdrawn,
/// and the watcher says what happened to the folder, where it said "deleted".
#[test]
fn a_submodule_in_place_of_the_task_folder_is_named_when_it_withdraws_the_task() {
    let lab = started_lab();
    let base = lab.main_head();
    lab.post(&Lab::task("G1", &base, &[]));
    expect_exit!(lab.watch_once("s\n"), 0);
    assert_eq!(lab.status_of("G1"), "pending");
    git(&lab.main, &["rm", "-rq", "docs/handoff"]);
    git(
        &lab.main,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{base},docs/handoff"),
        ],
    );
    git(&lab.main, &["commit", "-q", "-m", "handoff is a submodule"]);
    let gl = lab.main_head();
    push(&lab);
    let out = lab.run(&["watch", "--once", "--no-prompt"], "");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(
        so.contains(&format!(
            "task G1 WITHDRAWN: origin/{BRANCH} removed {TASK_PATH} (docs/handoff is now a submodule, not a folder)"
        )),
        "{so}"
    );
    assert!(!so.contains("deleted"), "{so}");
    assert_eq!(lab.status_of("G1"), "withdrawn");
    assert_eq!(version_lines(&lab, &gl), ["withdrawn"]);
}

#[test]
fn deleting_the_task_file_withdraws_a_task_that_was_not_approved() {
    let lab = started_lab();
    let base = lab.main_head();
    lab.post(&Lab::task("W1", &base, &[]));
    expect_exit!(lab.watch_once("s\n"), 0);
    assert_eq!(lab.status_of("W1"), "pending");
    let del = delete_task(&lab);
    push(&lab);
    let out = lab.watch_once("a\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(!so.contains(PROMPT), "a withdrawn task was offered:\n{so}");
    assert!(so.contains("W1 WITHDRAWN"), "{so}");
    assert_eq!(lab.status_of("W1"), "withdrawn");
    assert!(!lab.local().join("rx_agent_outbox/W1").exists());
    assert_eq!(version_lines(&lab, &del), ["withdrawn"]);
    assert_eq!(lab.count_events("withdrawn", "W1"), 1);
    let s = status(&lab);
    assert_eq!(s.withdrawn, ["W1"]);
    assert!(s.pending.is_empty() && s.queue.is_empty());
    assert!(text(&lab.run(&["status"], "").stdout).contains("withdrawn:  W1"));
    // Kept in state, never offered again: not by review, not when re-posted.
    expect_exit!(lab.run(&["review", "W1"], "a\n"), 2);
    let again = lab.post(&Lab::task("W1", &base, &[]));
    let out = lab.watch_once("a\n");
    assert!(!text(&out.stdout).contains(PROMPT));
    assert_eq!(version_lines(&lab, &again), ["duplicate"]);
    assert_eq!(lab.status_of("W1"), "withdrawn");
    assert!(text(&lab.run(&["run", "W1"], "").stderr).contains("not approved"));

    // A deferred task is withdrawn too; an approved one is not (the deletion
    // is recorded, the approval stands).
    lab.post(&Lab::task("W2", &base, &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
    delete_task(&lab);
    push(&lab);
    expect_exit!(lab.watch_once(""), 0);
    assert_eq!(lab.status_of("W2"), "withdrawn");
    assert!(lab.state()["deferred_task_ids"]
        .as_array()
        .unwrap()
        .is_empty());
    lab.post(&Lab::task("W3", &base, &[]));
    expect_exit!(lab.watch_once("a\n"), 0);
    let del3 = delete_task(&lab);
    push(&lab);
    expect_exit!(lab.watch_once(""), 0);
    assert_eq!(lab.status_of("W3"), "approved");
    assert_eq!(version_lines(&lab, &del3), ["task_file_deleted"]);

    // Posted and deleted between two polls: queued, withdrawn, never prompted.
    let c4 = commit_task(&lab, &Lab::task("W4", &base, &[]));
    let del4 = delete_task(&lab);
    push(&lab);
    let out = lab.watch_once("a\n");
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
    assert_eq!(lab.status_of("W4"), "withdrawn");
    assert_eq!(version_lines(&lab, &c4), ["offered"]);
    assert_eq!(version_lines(&lab, &del4), ["withdrawn"]);
    assert_eq!(lab.count_events("prompted", "W4"), 0);
}
