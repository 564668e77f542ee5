//! Issue 15 acceptance: "Every posted task reaches the operator: the watched
//! branch's history is a queue". The real binary against a real bare origin;
//! the main PC commits several task versions between two polls.
use crate::util::{git, text, Lab, BRANCH, PROMPT, TASK_PATH};
use serde::Deserialize;

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
    assert!(out.status.success(), "{}", text(&out.stderr));
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
    assert!(out.status.success(), "{}", text(&out.stderr));
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
    assert!(out.status.success(), "{so}\n{}", text(&out.stderr));
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
    assert!(out.status.success(), "{so}");
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
    assert!(out.status.success(), "{so}\n{se}");
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
    assert!(out.status.success(), "{so}");
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

#[test]
fn deleting_the_task_file_withdraws_a_task_that_was_not_approved() {
    let lab = started_lab();
    let base = lab.main_head();
    lab.post(&Lab::task("W1", &base, &[]));
    assert!(lab.watch_once("s\n").status.success());
    assert_eq!(lab.status_of("W1"), "pending");
    let del = delete_task(&lab);
    push(&lab);
    let out = lab.watch_once("a\n");
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}");
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
    assert_eq!(lab.run(&["review", "W1"], "a\n").status.code(), Some(2));
    let again = lab.post(&Lab::task("W1", &base, &[]));
    let out = lab.watch_once("a\n");
    assert!(!text(&out.stdout).contains(PROMPT));
    assert_eq!(version_lines(&lab, &again), ["duplicate"]);
    assert_eq!(lab.status_of("W1"), "withdrawn");
    assert!(text(&lab.run(&["run", "W1"], "").stderr).contains("not approved"));

    // A deferred task is withdrawn too; an approved one is not (the deletion
    // is recorded, the approval stands).
    lab.post(&Lab::task("W2", &base, &[]));
    assert!(lab.watch_once("d\n").status.success());
    delete_task(&lab);
    push(&lab);
    assert!(lab.watch_once("").status.success());
    assert_eq!(lab.status_of("W2"), "withdrawn");
    assert!(lab.state()["deferred_task_ids"]
        .as_array()
        .unwrap()
        .is_empty());
    lab.post(&Lab::task("W3", &base, &[]));
    assert!(lab.watch_once("a\n").status.success());
    let del3 = delete_task(&lab);
    push(&lab);
    assert!(lab.watch_once("").status.success());
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

#[test]
fn a_force_push_is_loud_examined_from_the_merge_base_and_approves_nothing() {
    let lab = started_lab();
    let base = lab.main_head();
    let c1 = lab.post(&Lab::task("F1", &base, &[]));
    assert!(lab.watch_once("a\n").status.success());
    let c2 = lab.post(&Lab::task("F2", &base, &[]));
    assert!(lab.watch_once("d\n").status.success());
    let old_marker = lab.state()["remote_marker"].as_str().unwrap().to_owned();
    assert_eq!(old_marker, c2);
    // The main PC rewrites the branch from `base`: the same two tasks again
    // (decided: never re-offered), a new one, and F1 with a changed text.
    git(&lab.main, &["reset", "-q", "--hard", &base]);
    // (A commit of its own first, so no rewritten commit can be byte-identical
    // to an old one made in the same second.)
    commit_file(&lab, "rewrite.txt", b"rewritten history\n");
    let r1 = commit_task(&lab, &Lab::task("F1", &base, &[]));
    let r2 = commit_task(&lab, &Lab::task("F2", &base, &[]));
    let r4 = commit_task(&lab, &Lab::task("F4", &base, &[]));
    let r1x = commit_task(
        &lab,
        &Lab::task("F1", &base, &[("TASK_TITLE", "Rewritten")]),
    );
    git(&lab.main, &["push", "-q", "--force", "origin", BRANCH]);
    let out = lab.watch_once("s\n");
    let so = text(&out.stdout);
    let se = text(&out.stderr);
    assert!(out.status.success(), "{so}\n{se}");
    assert!(
        se.contains("HISTORY REWRITTEN")
            && se.contains(&old_marker)
            && se.contains(&format!("merge base {base}")),
        "{se}"
    );
    assert!(se.contains("REFUSED") && se.contains("F1"), "{se}");
    // Only the new task is offered, and the rewrite decides nothing.
    assert_eq!(so.matches(PROMPT).count(), 1, "{so}");
    prompt_positions(&so, &["F4"]);
    assert_eq!(lab.status_of("F4"), "pending");
    assert_eq!(lab.status_of("F1"), "approved");
    assert_eq!(lab.status_of("F2"), "deferred");
    assert_eq!(lab.state()["approvals"]["F1"]["commit"], c1.as_str());
    assert_eq!(
        lab.state()["approvals"].as_object().unwrap().len(),
        1,
        "{}",
        lab.state()
    );
    assert_eq!(lab.count_events("prompted", "F1"), 1);
    assert_eq!(lab.count_events("prompted", "F2"), 1);
    assert_eq!(version_lines(&lab, &r1), ["duplicate"]);
    assert_eq!(version_lines(&lab, &r2), ["duplicate"]);
    assert_eq!(version_lines(&lab, &r4), ["superseded"]);
    assert_eq!(version_lines(&lab, &r1x), ["refused"]);
    let rw: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "history_rewritten")
        .collect();
    assert_eq!(rw.len(), 1, "{rw:?}");
    assert_eq!(rw[0]["detail"]["old"], old_marker.as_str());
    assert_eq!(rw[0]["detail"]["merge_base"], base.as_str());
    let s = status(&lab);
    assert_eq!(s.history_rewrites.len(), 1);
    assert_eq!(s.history_rewrites[0].old, old_marker);
    assert_eq!(s.history_rewrites[0].new, r1x);
    assert_eq!(
        s.history_rewrites[0].merge_base.as_deref(),
        Some(base.as_str())
    );
    assert!(s.history_rewrites[0].pending_off_branch.is_empty());
    assert_eq!(s.last_walk.as_ref().unwrap().from, "merge_base");
    assert_eq!(s.last_walk.as_ref().unwrap().examined, 4);
    assert_eq!(s.approved, ["F1"]);
    assert!(text(&lab.run(&["status"], "").stdout).contains("HISTORY REWRITTEN"));
    // Reported once: the next poll is an ordinary one.
    lab.post_file("notes.txt", b"x\n");
    let out = lab.watch_once("s\n");
    assert!(!text(&out.stderr).contains("HISTORY REWRITTEN"));
    assert_eq!(status(&lab).history_rewrites.len(), 1);
}

#[test]
fn a_force_push_of_an_unrelated_history_is_examined_from_its_root_bounded() {
    let lab = started_lab();
    let base = lab.main_head();
    lab.post(&Lab::task("U1", &base, &[]));
    assert!(lab.watch_once("s\n").status.success());
    let u1_commit = lab.state()["tasks"]["U1"]["commit"]
        .as_str()
        .unwrap()
        .to_owned();
    git(&lab.main, &["checkout", "-q", "--orphan", "fresh"]);
    git(&lab.main, &["rm", "-rq", "--cached", "."]);
    let root = commit_file(&lab, "README.md", b"new history\n");
    for id in ["U2", "U3", "U4"] {
        commit_task(&lab, &Lab::task(id, &root, &[]));
    }
    git(
        &lab.main,
        &[
            "push",
            "-q",
            "--force",
            "origin",
            &format!("fresh:{BRANCH}"),
        ],
    );
    let out = lab.run(&["watch", "--once", "--history-limit", "2"], "s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    assert!(
        se.contains("HISTORY REWRITTEN") && se.contains("share no history"),
        "{se}"
    );
    assert!(
        se.contains("still pending although their commit is no longer on the branch: U1"),
        "{se}"
    );
    assert!(
        se.contains("1 older task version(s)") && se.contains("NOT EXAMINED"),
        "{se}"
    );
    let s = status(&lab);
    assert_eq!(s.history_rewrites[0].merge_base, None);
    assert_eq!(s.history_rewrites[0].pending_off_branch, ["U1"]);
    let w = s.last_walk.unwrap();
    assert_eq!(
        (w.from.as_str(), w.versions, w.examined, w.not_examined),
        ("root", 3, 2, 1)
    );
    // U1 stays pending (the rewrite decides nothing); U2 was not examined.
    assert_eq!(lab.status_of("U1"), "pending");
    assert_eq!(lab.state()["tasks"]["U1"]["commit"], u1_commit.as_str());
    assert_eq!(lab.status_of("U2"), "");
    assert_eq!(s.pending, ["U1", "U3", "U4"]);
}

/// Build `n` commits on the watched branch with fast-import, each posting a
/// new valid task `H0000`…; returns the commits, oldest first.
fn post_many(lab: &Lab, n: usize) -> Vec<String> {
    let base = lab.main_head();
    let mut stream = String::new();
    for i in 0..n {
        let body = Lab::task(&format!("H{i:04}"), &base, &[]);
        let msg = format!("task {i}");
        stream.push_str(&format!(
            "commit refs/heads/{BRANCH}\nmark :{}\ncommitter Main PC <main@example.invalid> {} +0000\ndata {}\n{msg}\n",
            i + 1,
            1_700_000_000 + i,
            msg.len() + 1
        ));
        if i == 0 {
            stream.push_str(&format!("from {base}\n"));
        }
        stream.push_str(&format!(
            "M 100644 inline {TASK_PATH}\ndata {}\n{body}\n",
            body.len()
        ));
    }
    stream.push_str("done\n");
    let mut child = std::process::Command::new("git")
        .current_dir(&lab.main)
        .args(["fast-import", "--quiet", "--done", "--force"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    git(&lab.main, &["reset", "-q", "--hard", BRANCH]);
    push(lab);
    let list = git(
        &lab.main,
        &[
            "rev-list",
            "--reverse",
            "--first-parent",
            &format!("{base}..{BRANCH}"),
        ],
    );
    list.lines().map(str::to_owned).collect()
}

#[test]
fn a_1000_commit_history_examines_the_newest_50_and_reports_the_rest() {
    let lab = started_lab();
    let commits = post_many(&lab, 1000);
    assert_eq!(commits.len(), 1000);
    let out = lab.watch_once("s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    assert!(
        se.contains("950 older task version(s)") && se.contains("only the newest 50"),
        "{se}"
    );
    // The first prompt is the oldest examined version, with 49 behind it.
    assert_eq!(so.matches(PROMPT).count(), 1);
    prompt_positions(&so, &["H0950"]);
    assert!(so.contains("1 of 50 in this poll; 49 more queued"), "{so}");
    let s = status(&lab);
    let w = s.last_walk.unwrap();
    assert_eq!(
        (w.commits, w.versions, w.examined, w.not_examined, w.limit),
        (1000, 1000, 50, 950, 50)
    );
    assert!(!w.walk_truncated);
    assert_eq!(w.not_examined_commits.len(), 100);
    assert_eq!(w.not_examined_commits[0], commits[0]);
    let ids: Vec<&str> = s.queue.iter().map(|q| q.task_id.as_str()).collect();
    let want: Vec<String> = (950..1000).map(|i| format!("H{i:04}")).collect();
    assert_eq!(ids, want);
    let st = lab.state();
    assert!(st["tasks"].get("H0949").is_none());
    assert!(st["tasks"].get("H0000").is_none());
    let ne: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "not_examined" && e["detail"]["count"] == 950)
        .collect();
    assert_eq!(ne.len(), 1);
    assert_eq!(ne[0]["detail"]["commits"][0], commits[0].as_str());
    // Every examined version left its line; none of the older ones did.
    assert_eq!(version_lines(&lab, &commits[950]), ["superseded"]);
    assert_eq!(version_lines(&lab, &commits[999]), ["offered"]);
    assert!(version_lines(&lab, &commits[949]).is_empty());
    assert!(text(&lab.run(&["status"], "").stdout).contains("NOT EXAMINED"));
    // The bound is configurable; a bad value is bad usage.
    let out = lab.run(&["watch", "--once", "--history-limit", "0"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--history-limit 0"));
}

#[test]
fn first_start_examines_only_the_tip_and_says_so() {
    let lab = Lab::new();
    let base = lab.main_head();
    commit_task(&lab, &Lab::task("OLD1", &base, &[]));
    let tip = commit_task(&lab, &Lab::task("TIP2", &base, &[]));
    push(&lab);
    let out = lab.watch_once("a\n");
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}");
    assert!(
        so.contains("first start") && so.contains("only the task file at the tip"),
        "{so}"
    );
    assert_eq!(so.matches(PROMPT).count(), 1);
    prompt_positions(&so, &["TIP2"]);
    assert!(lab.state()["tasks"].get("OLD1").is_none());
    assert_eq!(lab.status_of("TIP2"), "approved");
    let ne: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "not_examined")
        .collect();
    assert_eq!(ne.len(), 1);
    assert_eq!(ne[0]["commit"], tip.as_str());
    assert!(ne[0]["detail"]["reason"]
        .as_str()
        .unwrap()
        .contains("first start"));
    let w = status(&lab).last_walk.unwrap();
    assert_eq!((w.from.as_str(), w.examined), ("first_start", 1));
}

#[test]
fn an_idle_poll_with_the_marker_at_the_tip_walks_nothing() {
    let lab = started_lab();
    let base = lab.main_head();
    lab.post(&Lab::task("I1", &base, &[]));
    assert!(lab.watch_once("a\n").status.success());
    let walk = status(&lab).last_walk.unwrap();
    let ledger_len = lab.ledger_events().len();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = lab.run(&["-v", "watch", "--once"], "");
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("poll: nothing new"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(lab.state()["last_poll"]["result"], "nothing new");
    // The walk record is the previous poll's, untouched, and no version line was added.
    assert_eq!(status(&lab).last_walk.unwrap(), walk);
    let new: Vec<String> = lab.ledger_events()[ledger_len..]
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(new, ["watcher_started", "watcher_stopped"]);
}

#[test]
fn a_merged_side_branch_is_one_version_at_the_merge_and_a_revert_is_a_duplicate() {
    let lab = started_lab();
    let base = lab.main_head();
    git(&lab.main, &["checkout", "-q", "-b", "feature"]);
    commit_task(&lab, &Lab::task("M1", &base, &[]));
    git(&lab.main, &["checkout", "-q", BRANCH]);
    commit_file(&lab, "notes.txt", b"meanwhile\n");
    git(
        &lab.main,
        &["merge", "-q", "--no-ff", "-m", "merge feature", "feature"],
    );
    let merge = lab.main_head();
    let m2 = commit_task(&lab, &Lab::task("M2", &base, &[]));
    let back = commit_task(&lab, &Lab::task("M1", &base, &[]));
    push(&lab);
    let out = lab.watch_once("a\nd\n");
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}");
    assert_eq!(so.matches(PROMPT).count(), 2, "{so}");
    let at = prompt_positions(&so, &["M1", "M2"]);
    assert!(at[0] < at[1]);
    assert_eq!(lab.state()["tasks"]["M1"]["commit"], merge.as_str());
    assert_eq!(version_lines(&lab, &merge), ["superseded"]);
    assert_eq!(version_lines(&lab, &m2), ["superseded"]);
    assert_eq!(version_lines(&lab, &back), ["duplicate"]);
    assert_eq!(lab.count_events("prompted", "M1"), 1);
    assert_eq!(lab.status_of("M1"), "approved");
    assert_eq!(lab.status_of("M2"), "deferred");
}

/// Each version is checked against the commit that holds it, not the tip: an
/// `EXPECTED_HEAD` that only became an ancestor later (a side branch merged
/// after the task was committed) is refused for that version.
#[test]
fn each_version_is_checked_against_its_own_commit_not_the_tip() {
    let lab = started_lab();
    git(&lab.main, &["checkout", "-q", "-b", "side"]);
    let side = commit_file(&lab, "side.txt", b"side\n");
    git(&lab.main, &["checkout", "-q", BRANCH]);
    let early = commit_task(&lab, &Lab::task("E1", &side, &[]));
    git(
        &lab.main,
        &["merge", "-q", "--no-ff", "-m", "merge side", "side"],
    );
    let later = commit_task(&lab, &Lab::task("E2", &side, &[]));
    push(&lab);
    // At the tip, `side` is an ancestor; at `early` it is not.
    let out = lab.watch_once("a\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    assert!(se.contains("E1") && se.contains("EXPECTED_HEAD"), "{se}");
    assert_eq!(so.matches(PROMPT).count(), 1, "{so}");
    prompt_positions(&so, &["E2"]);
    assert_eq!(lab.status_of("E1"), "rejected");
    assert_eq!(lab.status_of("E2"), "approved");
    assert_eq!(version_lines(&lab, &early), ["refused"]);
    assert_eq!(version_lines(&lab, &later), ["offered"]);
}

/// A branch reset to an older commit is a rewrite too: loud, nothing examined
/// (the merge base is the new tip), the approval stands, and the pending task
/// that left the branch stays pending and says so when shown.
#[test]
fn a_branch_reset_backwards_is_loud_and_decides_nothing() {
    let lab = started_lab();
    let base = lab.main_head();
    let c1 = lab.post(&Lab::task("R1", &base, &[]));
    assert!(lab.watch_once("a\n").status.success());
    let c2 = lab.post(&Lab::task("R2", &base, &[]));
    assert!(lab.watch_once("s\n").status.success());
    assert_eq!(lab.status_of("R2"), "pending");
    git(&lab.main, &["reset", "-q", "--hard", &c1]);
    git(&lab.main, &["push", "-q", "--force", "origin", BRANCH]);
    let out = lab.watch_once("s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    assert!(
        se.contains("HISTORY REWRITTEN")
            && se.contains(&c2)
            && se.contains(&format!("merge base {c1}")),
        "{se}"
    );
    assert!(se.contains("no longer on the branch: R2"), "{se}");
    assert!(
        so.contains("its commit is no longer on the watched branch"),
        "{so}"
    );
    assert_eq!(lab.status_of("R1"), "approved");
    assert_eq!(lab.status_of("R2"), "pending");
    assert_eq!(lab.state()["approvals"].as_object().unwrap().len(), 1);
    let s = status(&lab);
    let w = s.last_walk.unwrap();
    assert_eq!(
        (w.from.as_str(), w.commits, w.versions),
        ("merge_base", 0, 0)
    );
    assert_eq!(s.history_rewrites[0].pending_off_branch, ["R2"]);
    assert_eq!(lab.state()["remote_marker"], c1.as_str());
}

/// A shallow RX checkout (`git clone --depth 1`) is a real lab set-up: its
/// history ends at the clone. The queue still works from the marker (the
/// ancestry checks follow first parents before any full search), and a force
/// push, whose merge base cannot be searched for, is examined from the new
/// root instead of failing every poll.
#[test]
fn a_shallow_rx_clone_queues_tasks_and_survives_a_force_push() {
    let lab = Lab::new();
    commit_file(&lab, "more.txt", b"history before the clone\n");
    push(&lab);
    std::fs::remove_dir_all(&lab.rx).unwrap();
    let url = format!("file://{}", lab.origin.display());
    git(
        lab.dir.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "-b",
            BRANCH,
            &url,
            lab.rx.to_str().unwrap(),
        ],
    );
    assert!(lab.rx.join(".git/shallow").exists());
    let out = lab.watch_once("");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tip = lab.main_head();
    for id in ["SH1", "SH2"] {
        commit_task(&lab, &Lab::task(id, &tip, &[]));
    }
    push(&lab);
    let out = lab.watch_once("a\na\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    let at = prompt_positions(&so, &["SH1", "SH2"]);
    assert!(at[0] < at[1]);
    assert_eq!(lab.status_of("SH1"), "approved");
    assert_eq!(lab.status_of("SH2"), "approved");
    // An unrelated force push makes the walk go to the root, which this
    // clone does not have past its boundary: reported, not a failure.
    git(&lab.main, &["checkout", "-q", "--orphan", "fresh"]);
    git(&lab.main, &["rm", "-rq", "--cached", "."]);
    let root = commit_file(&lab, "README.md", b"new\n");
    commit_task(&lab, &Lab::task("SH3", &root, &[]));
    git(
        &lab.main,
        &[
            "push",
            "-q",
            "--force",
            "origin",
            &format!("fresh:{BRANCH}"),
        ],
    );
    let out = lab.watch_once("s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{so}\n{se}");
    assert!(se.contains("HISTORY REWRITTEN"), "{se}");
    prompt_positions(&so, &["SH3"]);
    assert_eq!(lab.status_of("SH3"), "pending");
}
