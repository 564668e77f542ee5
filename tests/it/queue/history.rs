//! Rewritten, long, merged, reset and shallow histories of the watched branch.
use super::*;

#[test]
fn a_force_push_is_loud_examined_from_the_merge_base_and_approves_nothing() {
    let lab = started_lab();
    let base = lab.main_head();
    let c1 = lab.post(&Lab::task("F1", &base, &[]));
    expect_exit!(lab.watch_once("a\n"), 0);
    let c2 = lab.post(&Lab::task("F2", &base, &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
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
    expect_exit!(out, 0);
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
    expect_exit!(lab.watch_once("s\n"), 0);
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
    let se = text(&out.stderr);
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
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
    expect_exit!(out, 2);
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
    expect_exit!(out, 0);
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
    expect_exit!(lab.watch_once("a\n"), 0);
    let walk = status(&lab).last_walk.unwrap();
    let ledger_len = lab.ledger_events().len();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let out = lab.run(&["-v", "watch", "--once"], "");
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
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
    expect_exit!(lab.watch_once("a\n"), 0);
    let c2 = lab.post(&Lab::task("R2", &base, &[]));
    expect_exit!(lab.watch_once("s\n"), 0);
    assert_eq!(lab.status_of("R2"), "pending");
    git(&lab.main, &["reset", "-q", "--hard", &c1]);
    git(&lab.main, &["push", "-q", "--force", "origin", BRANCH]);
    let out = lab.watch_once("s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
    let tip = lab.main_head();
    for id in ["SH1", "SH2"] {
        commit_task(&lab, &Lab::task(id, &tip, &[]));
    }
    push(&lab);
    let out = lab.watch_once("a\na\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
    assert!(se.contains("HISTORY REWRITTEN"), "{se}");
    prompt_positions(&so, &["SH3"]);
    assert_eq!(lab.status_of("SH3"), "pending");
}

/// A task already on the branch when the RX laptop made a shallow clone: its
/// `EXPECTED_HEAD` lies past the clone's boundary. It is refused (ancestry is never
/// assumed), and the reason names the shallow clone and the fix instead of saying
/// the main PC's task is wrong; after `git fetch --unshallow` the task posted
/// again is offered.
#[test]
fn a_task_older_than_a_shallow_clone_is_refused_naming_the_clone_not_the_task() {
    let lab = Lab::new();
    let base = lab.main_head();
    commit_task(&lab, &Lab::task("SHB1", &base, &[]));
    push(&lab);
    std::fs::remove_dir_all(&lab.rx).unwrap();
    let url = format!("file://{}", lab.origin.display());
    let rx = lab.rx.to_str().unwrap();
    git(
        lab.dir.path(),
        &["clone", "-q", "--depth", "1", "-b", BRANCH, &url, rx],
    );
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    let se = text(&out.stderr);
    assert!(
        se.contains(&format!(
            "EXPECTED_HEAD {base} is not shown to be a strict ancestor"
        )) && se.contains("shallow clone")
            && se.contains("git fetch --unshallow"),
        "{se}"
    );
    assert!(!se.contains("is not a strict ancestor"), "{se}");
    assert!(!text(&out.stdout).contains(PROMPT));
    assert_eq!(lab.status_of("SHB1"), "rejected");
    // The fix it names: the whole history, then the task posted again.
    git(&lab.rx, &["fetch", "-q", "--unshallow"]);
    let tip = lab.main_head();
    commit_task(&lab, &Lab::task("SHB2", &tip, &[]));
    push(&lab);
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("SHB2"), "approved", "{}", text(&out.stderr));
}

/// A poll walks at most `--walk-limit` commits whatever the branch holds: the
/// older history is reported `not_examined` (stderr, ledger, status), and the
/// examined commit moves to the tip so the next poll does not pay again.
#[test]
fn a_walk_beyond_the_walk_limit_reports_not_examined_and_moves_the_examined_commit() {
    let lab = started_lab();
    let commits = post_many(&lab, 300);
    let tip = commits.last().unwrap().clone();
    let out = lab.run(&["watch", "--once", "--walk-limit", "100"], "s\n");
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert!(
        se.contains("NOT EXAMINED") && se.contains("--walk-limit"),
        "{se}"
    );
    let w = status(&lab).last_walk.unwrap();
    assert!(w.walk_truncated, "{w:?}");
    assert_eq!((w.commits, w.tip.as_str()), (100, tip.as_str()));
    // The newest 50 of the 100 walked are examined; nothing older is.
    assert_eq!(w.examined, 50);
    assert_eq!(lab.status_of("H0299"), "pending");
    assert_eq!(lab.status_of("H0199"), "");
    let line = lab
        .ledger_events()
        .into_iter()
        .rev()
        .find(|e| e["event"] == "not_examined")
        .expect("a not_examined line");
    assert_eq!(line["detail"]["walk_limit"], 100, "{line}");
    assert_eq!(
        line["detail"]["not_walked_from"],
        commits[199].as_str(),
        "{line}"
    );
    assert_eq!(lab.state()["remote_marker"], tip.as_str());
    let human = text(&lab.run(&["status"], "").stdout);
    assert!(
        human.contains(&format!(
            "history from {} back NOT EXAMINED",
            &commits[199][..12]
        )) && human.contains("--walk-limit"),
        "{human}"
    );
    // The next poll starts at the new examined commit: nothing walked again.
    let out = lab.run(&["watch", "--once", "--walk-limit", "100"], "s\n");
    expect_exit!(out, 0);
    assert!(
        text(&out.stderr).contains("nothing new") || text(&out.stdout).contains("nothing new"),
        "{}",
        text(&out.stderr)
    );
    let out = lab.run(&["watch", "--once", "--walk-limit", "0"], "");
    expect_exit!(out, 2);
}
