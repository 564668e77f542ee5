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
    // The oldest two versions now; the third waits for the next poll.
    let so = text(&out.stdout);
    assert!(
        so.contains("2 of 3 task version(s)") && !se.contains("NOT EXAMINED"),
        "{so}{se}"
    );
    let s = status(&lab);
    assert_eq!(s.history_rewrites[0].merge_base, None);
    assert_eq!(s.history_rewrites[0].pending_off_branch, ["U1"]);
    let w = s.last_walk.unwrap();
    assert_eq!(
        (w.from.as_str(), w.versions, w.examined, w.not_examined),
        ("root", 3, 2, 0)
    );
    // U1 stays pending (the rewrite decides nothing).
    assert_eq!(lab.status_of("U1"), "pending");
    assert_eq!(lab.state()["tasks"]["U1"]["commit"], u1_commit.as_str());
    assert_eq!(s.pending, ["U1", "U2", "U3"]);
    // The next poll goes on after U3's commit: U4, and no second rewrite.
    let out = lab.run(&["watch", "--once", "--history-limit", "2"], "s\n");
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert!(!se.contains("HISTORY REWRITTEN"), "{se}");
    let s = status(&lab);
    assert_eq!(s.history_rewrites.len(), 1);
    let w = s.last_walk.unwrap();
    assert_eq!((w.from.as_str(), w.versions, w.examined), ("marker", 1, 1));
    assert_eq!(s.pending, ["U1", "U2", "U3", "U4"]);
}

/// Build `n` commits on the watched branch with fast-import, each posting a
/// new valid task `H0000`…; returns the commits, oldest first.
fn post_many(lab: &Lab, n: usize) -> Vec<String> {
    post_many_sized(lab, n, 0)
}

/// [`post_many`] with each task file padded (Markdown) to `size` bytes.
fn post_many_sized(lab: &Lab, n: usize, size: usize) -> Vec<String> {
    let base = lab.main_head();
    let mut stream = String::new();
    for i in 0..n {
        let mut body = Lab::task(&format!("H{i:04}"), &base, &[]);
        while body.len() < size {
            let line = "x".repeat(99.min(size - body.len()).max(1) - 1);
            body.push_str(&line);
            body.push('\n');
        }
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

/// 1000 versions pushed between two polls: each poll examines the oldest 50
/// not yet examined (`--history-limit`) and the next goes on after them, so
/// every version reaches the operator in commit order; none is reported NOT
/// EXAMINED (the newest 50 were examined and the 950 older ones dropped).
#[test]
fn a_1000_commit_history_is_examined_50_versions_a_poll_oldest_first_none_dropped() {
    let lab = started_lab();
    let commits = post_many(&lab, 1000);
    assert_eq!(commits.len(), 1000);
    let out = lab.watch_once("s\n");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    expect_exit!(out, 0);
    assert!(
        so.contains("50 of 1000 task version(s)") && !se.contains("NOT EXAMINED"),
        "{so}{se}"
    );
    // The first prompt is the oldest version, with 49 behind it.
    assert_eq!(so.matches(PROMPT).count(), 1);
    prompt_positions(&so, &["H0000"]);
    assert!(so.contains("1 of 50 in this poll; 49 more queued"), "{so}");
    let s = status(&lab);
    let w = s.last_walk.unwrap();
    assert_eq!(
        (w.commits, w.versions, w.examined, w.not_examined, w.limit),
        (1000, 1000, 50, 0, 50)
    );
    assert!(!w.walk_truncated);
    assert_eq!(s.remote_marker.as_deref(), Some(commits[49].as_str()));
    let st_text = text(&lab.run(&["status"], "").stdout);
    assert!(
        st_text.contains("950 newer version(s) waiting for the next poll")
            && !st_text.contains("NOT EXAMINED"),
        "{st_text}"
    );
    // The next poll: the following 50.
    expect_exit!(lab.run(&["watch", "--once", "--no-prompt"], ""), 0);
    let s = status(&lab);
    assert_eq!(s.remote_marker.as_deref(), Some(commits[99].as_str()));
    // The rest in one poll (a higher bound), up to the tip.
    let out = lab.run(
        &["watch", "--once", "--no-prompt", "--history-limit", "1000"],
        "",
    );
    expect_exit!(out, 0);
    let s = status(&lab);
    assert_eq!(s.remote_marker.as_deref(), Some(commits[999].as_str()));
    let ids: Vec<&str> = s.queue.iter().map(|q| q.task_id.as_str()).collect();
    let want: Vec<String> = (0..1000).map(|i| format!("H{i:04}")).collect();
    assert_eq!(ids, want);
    assert!(lab
        .ledger_events()
        .iter()
        .all(|e| e["event"] != "not_examined"));
    // Every version left its one line, in commit order.
    assert_eq!(version_lines(&lab, &commits[0]), ["superseded"]);
    assert_eq!(version_lines(&lab, &commits[49]), ["superseded"]);
    assert_eq!(version_lines(&lab, &commits[50]), ["superseded"]);
    assert_eq!(version_lines(&lab, &commits[999]), ["offered"]);
    let order: Vec<String> = lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "superseded" || e["event"] == "offered")
        .filter_map(|e| e["commit"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(order, commits);
    // The bound is configurable; a bad value is bad usage.
    let out = lab.run(&["watch", "--once", "--history-limit", "0"], "");
    expect_exit!(out, 2);
    assert!(text(&out.stderr).contains("--history-limit 0"));
}

/// 40 versions of a task file of 1 048 000 bytes pushed between two polls: a
/// poll reads at most 32 MiB of task file whatever `--history-limit` says (300
/// versions of one cost a poll 2.8 s), so it examines the oldest 32 and the
/// next poll the other 8, in commit order, none reported NOT EXAMINED.
#[test]
fn a_poll_reads_at_most_32_mib_of_task_file_and_the_next_goes_on_from_there() {
    let lab = started_lab();
    let commits = post_many_sized(&lab, 40, 1_048_000);
    let size = git(&lab.main, &["cat-file", "-s", &format!("HEAD:{TASK_PATH}")]);
    assert_eq!(size, "1048000");
    let poll = |lab: &Lab| {
        let out = lab.run(
            &["watch", "--once", "--no-prompt", "--history-limit", "300"],
            "",
        );
        expect_exit!(out, 0);
        format!("{}{}", text(&out.stdout), text(&out.stderr))
    };
    let se = poll(&lab);
    assert!(
        se.contains("32 of 40 task version(s)")
            && se.contains("reads at most 32 MiB of task file")
            && !se.contains("NOT EXAMINED"),
        "{se}"
    );
    let s = status(&lab);
    let w = s.last_walk.unwrap();
    assert_eq!((w.versions, w.examined, w.not_examined), (40, 32, 0));
    assert_eq!(s.remote_marker.as_deref(), Some(commits[31].as_str()));
    // H0031 is superseded by H0032, which this poll did not examine.
    assert_eq!(version_lines(&lab, &commits[31]), ["superseded"]);
    assert!(version_lines(&lab, &commits[32]).is_empty());
    let se = poll(&lab);
    assert!(!se.contains("NOT EXAMINED"), "{se}");
    let s = status(&lab);
    let w = s.last_walk.unwrap();
    assert_eq!((w.from.as_str(), w.versions, w.examined), ("marker", 8, 8));
    assert_eq!(s.remote_marker.as_deref(), Some(commits[39].as_str()));
    let ids: Vec<&str> = s.queue.iter().map(|q| q.task_id.as_str()).collect();
    let want: Vec<String> = (0..40).map(|i| format!("H{i:04}")).collect();
    assert_eq!(ids, want);
    // Idle again: the next poll walks nothing.
    poll(&lab);
    assert_eq!(status(&lab).last_walk.unwrap().versions, 8);
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
/// older history is reported `not_examined` (stderr, ledger, status); the
/// versions of the commits walked are examined oldest first, 50 a poll, and the
/// examined commit moves past them so the next poll goes on from there, up to
/// the tip, without walking the older history again.
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
    // The oldest 50 of the 100 walked are examined; nothing older is.
    assert_eq!(w.examined, 50);
    assert_eq!(lab.status_of("H0200"), "pending");
    assert_eq!(lab.status_of("H0249"), "pending");
    assert_eq!(lab.status_of("H0250"), "");
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
    assert_eq!(lab.state()["remote_marker"], commits[249].as_str());
    let human = text(&lab.run(&["status"], "").stdout);
    assert!(
        human.contains(&format!(
            "history from {} back NOT EXAMINED",
            &commits[199][..12]
        )) && human.contains("--walk-limit"),
        "{human}"
    );
    // The next poll starts at the new examined commit: the other 50, up to the tip.
    let out = lab.run(
        &["watch", "--once", "--walk-limit", "100", "--no-prompt"],
        "",
    );
    expect_exit!(out, 0);
    let w = status(&lab).last_walk.unwrap();
    assert_eq!((w.commits, w.examined, w.walk_truncated), (50, 50, false));
    assert_eq!(lab.status_of("H0299"), "pending");
    assert_eq!(lab.state()["remote_marker"], tip.as_str());
    let out = lab.run(
        &["watch", "--once", "--walk-limit", "100", "--no-prompt"],
        "",
    );
    expect_exit!(out, 0);
    assert!(
        text(&out.stderr).contains("nothing new") || text(&out.stdout).contains("nothing new"),
        "{}",
        text(&out.stderr)
    );
    let out = lab.run(&["watch", "--once", "--walk-limit", "0"], "");
    expect_exit!(out, 2);
}
