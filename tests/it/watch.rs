//! The watcher against a real bare origin, driven through
//! the real binary with piped answers.
use crate::util;
use crate::util::{text, Lab, PROMPT};
use std::process::Stdio;
use std::time::{Duration, Instant};

mod hidden_plan;
mod informed;
mod json;
mod locks;
mod manual;
mod retry;
mod tls;
mod typeahead;

/// Wait for the watcher `child` to exit; it must within 2 s.
fn stopped_within_2_s(child: &mut std::process::Child) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "watcher did not stop within 2 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `T_CASE` and `t_case` name one outbox, one `rx_iq/` folder and one
/// `rx-results/` folder on a case-insensitive file system: the second is
/// refused when examined, naming both IDs, never prompted, and the first's
/// outbox stays its own.
#[test]
fn a_task_id_differing_only_in_letter_case_is_refused() {
    let lab = Lab::new();
    let first = Lab::task("T_CASE", &lab.main_head(), &[]);
    lab.post(&first);
    expect_exit!(lab.watch_once("a\n"), 0);
    let second = Lab::task("t_case", &lab.main_head(), &[]);
    lab.post(&second);
    let out = lab.watch_once("a\n");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains(PROMPT), "{all}");
    assert!(
        all.contains("t_case") && all.contains("T_CASE") && all.contains("only in letter case"),
        "{all}"
    );
    let st = lab.state();
    assert!(st["tasks"].get("t_case").is_none(), "{st}");
    assert_eq!(st["tasks"]["T_CASE"]["status"], "approved");
    assert_eq!(
        std::fs::read(lab.local().join("rx_agent_outbox/T_CASE/TASK.md")).unwrap(),
        first.as_bytes()
    );
    assert!(!lab.local().join("rx_agent_outbox/t_case").exists());
}

#[test]
fn approve_writes_outbox_and_is_not_prompted_again() {
    let lab = Lab::new();
    let task = Lab::task("T_APPROVE", &lab.main_head(), &[]);
    let commit = lab.post(&task);
    let out = lab.watch_once("a\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(
        so.contains(PROMPT) && so.contains("T_APPROVE") && so.contains(&commit),
        "{so}"
    );
    let ob = lab.local().join("rx_agent_outbox/T_APPROVE");
    assert_eq!(std::fs::read(ob.join("TASK.md")).unwrap(), task.as_bytes());
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ob.join("TASK.meta.json")).unwrap()).unwrap();
    assert_eq!(meta["commit"], commit.as_str());
    assert_eq!(
        meta["task_sha256"],
        rxnode_interlock::sha256_hex(task.as_bytes())
    );
    let res: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ob.join("RX_RESULT.json")).unwrap()).unwrap();
    assert_eq!(res["status"], "NOT RUN");
    assert!(std::fs::read_to_string(ob.join("RX_RESULT.md"))
        .unwrap()
        .contains("NOT RUN"));
    let st = lab.state();
    assert_eq!(st["tasks"]["T_APPROVE"]["status"], "approved");
    assert_eq!(st["approvals"]["T_APPROVE"]["commit"], commit.as_str());
    assert_eq!(st["remote_marker"], commit.as_str());
    assert_eq!(st["running"], false);
    for ev in ["detected", "prompted", "approved"] {
        assert_eq!(lab.count_events(ev, "T_APPROVE"), 1, "{ev}");
    }
    assert!(!lab.local().join("rxnode.lock").exists());

    // Same ref: nothing new. A new unrelated commit: examined, already seen.
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(!text(&out.stdout).contains(PROMPT));
    let c2 = lab.post_file("notes.txt", b"unrelated\n");
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
    assert_eq!(lab.state()["remote_marker"], c2.as_str());
    assert_eq!(lab.count_events("prompted", "T_APPROVE"), 1);

    // Mark it completed; status reports it.
    let out = lab.run(&["mark-completed", "T_APPROVE"], "");
    expect_exit!(out, 0);
    let out = lab.run(&["status", "--json"], "");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["completed"][0], "T_APPROVE");
    assert_eq!(s["watcher_running"], false);
    assert!(s["heartbeat_age_s"].as_i64().unwrap() >= 0);
    assert_eq!(lab.count_events("marked_completed", "T_APPROVE"), 1);
}

#[test]
fn changed_text_under_known_id_is_refused_once() {
    let lab = Lab::new();
    let base = lab.main_head();
    lab.post(&Lab::task("T_SAME", &base, &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
    assert_eq!(lab.status_of("T_SAME"), "deferred");
    lab.post(&Lab::task(
        "T_SAME",
        &base,
        &[("TASK_TITLE", "Sneaky revision")],
    ));
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    let se = text(&out.stderr);
    assert!(se.contains("REFUSED") && se.contains("T_SAME"), "{se}");
    assert!(!text(&out.stdout).contains(PROMPT));
    assert_eq!(lab.status_of("T_SAME"), "deferred");
    assert_eq!(lab.count_events("refused", "T_SAME"), 1);
    // Not re-reported when the branch moves on.
    lab.post_file("other.txt", b"x\n");
    let out = lab.watch_once("");
    assert!(!text(&out.stderr).contains("REFUSED"));
    assert_eq!(lab.count_events("refused", "T_SAME"), 1);
}

/// A revision posted under an approved task's ID is refused by the watcher, and
/// `run` says so before it runs anything: it executes the approved text, not what
/// the branch holds now, and names the refused text's commit and hash.
#[test]
fn run_names_a_revision_refused_after_the_approval() {
    let lab = Lab::new();
    let base = lab.main_head();
    lab.post(&Lab::task("T_REV", &base, &[]));
    expect_exit!(lab.watch_once("a\n"), 0);
    assert_eq!(lab.status_of("T_REV"), "approved");
    let out = lab.run(&["run", "T_REV"], "");
    assert!(
        !text(&out.stderr).contains("another text"),
        "{}",
        text(&out.stderr)
    );
    let lab = Lab::new();
    let base = lab.main_head();
    lab.post(&Lab::task("T_REV", &base, &[]));
    expect_exit!(lab.watch_once("a\n"), 0);
    lab.post(&Lab::task("T_REV", &base, &[("TASK_TITLE", "Revised")]));
    expect_exit!(lab.watch_once(""), 0);
    assert_eq!(lab.count_events("refused", "T_REV"), 1);
    let revised = lab.main_head();
    let out = lab.run(&["run", "T_REV"], "");
    let se = text(&out.stderr);
    assert!(
        se.contains("has posted another text of T_REV")
            && se.contains(&format!("commit {}", &revised[..12]))
            && se.contains("this run executes the approved text"),
        "{se}"
    );
    assert_eq!(se.matches("another text of T_REV").count(), 1, "{se}");
}

#[test]
fn defer_then_review_approves() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_DEFER", &lab.main_head(), &[]));
    let out = lab.watch_once("D\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_DEFER"), "deferred");
    assert_eq!(lab.state()["deferred_task_ids"][0], "T_DEFER");
    lab.post_file("x.txt", b"x\n");
    let out = lab.watch_once("a\n");
    assert!(
        !text(&out.stdout).contains(PROMPT),
        "deferred task prompted again"
    );
    let out = lab.run(&["review", "T_DEFER"], "approve\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_DEFER"), "approved");
    assert!(lab.state()["deferred_task_ids"]
        .as_array()
        .unwrap()
        .is_empty());
    // Approved tasks cannot be reviewed again.
    let out = lab.run(&["review", "T_DEFER"], "a\n");
    expect_exit!(out, 2);
}

/// `review` of a deferred task that ends without a decision ([S], end of input)
/// names the status the task keeps — deferred, decided by `review` — not
/// "pending, shown at the next start", which a watcher never does for it.
#[test]
fn a_review_left_without_a_decision_says_the_task_stays_deferred() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_LEFT", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("D\n"), 0);
    for answer in ["s\n", ""] {
        let out = lab.run(&["review", "T_LEFT"], answer);
        let so = text(&out.stdout);
        assert!(
            so.contains("T_LEFT stays deferred")
                && so.contains("`rxnode review T_LEFT` decides it"),
            "answer {answer:?}: {so}"
        );
        assert!(!so.contains("stays pending"), "answer {answer:?}: {so}");
        assert_eq!(lab.status_of("T_LEFT"), "deferred");
    }
}

/// `review` has no watcher to stop: its menu offers `[S] Stop review` and its [S]
/// says it stops the review; the watcher's menu keeps `[S] Stop watcher`.
#[test]
fn review_menu_offers_stop_review_not_stop_watcher() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_MENU", &lab.main_head(), &[]));
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(so.contains(util::WATCH_PROMPT), "{so}");
    let out = lab.run(&["review", "T_MENU"], "s\n");
    expect_exit!(out, 3);
    let so = text(&out.stdout);
    assert!(so.contains(util::REVIEW_PROMPT), "{so}");
    assert!(
        so.contains("stopping the review; T_MENU stays deferred"),
        "{so}"
    );
    assert!(
        !so.contains("Stop watcher") && !so.contains("stopping the watcher"),
        "review offers to stop a watcher: {so}"
    );
    assert_eq!(lab.status_of("T_MENU"), "deferred");
}

/// A `git worktree` of the RX checkout has a `.local/` of its own, empty: rxnode
/// started there is not the node. `watch`, `review`, `run` and `node set-name`
/// refuse (exit 3) and write nothing there; `node show` and `doctor` name the
/// node's checkout as the fix instead of "set a name".
#[test]
fn a_worktree_of_the_node_is_refused_as_a_second_node_naming_the_checkout() {
    let lab = Lab::new();
    let named = util::run_fed(lab.rxnode().args(["node", "set-name", "LAB1"]), b"");
    expect_exit!(named, 0);
    let commit = lab.post(&Lab::task("T_WT", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
    let wt = lab.dir.path().join("rx-try");
    util::git(
        &lab.rx,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "try",
            wt.to_str().unwrap(),
            &commit,
        ],
    );
    let main = lab.rx.display().to_string();
    let fix = format!("fix: run rxnode in {main} (`rxnode --repo {main} …`)");
    let in_wt = |args: &[&str]| {
        let mut c = util::rxnode_cmd();
        c.arg("--repo").arg(&wt).args(args);
        util::run_fed(&mut c, b"a\n")
    };
    for args in [
        &["watch", "--once", "--interval", "0.2"][..],
        &["review", "T_WT"],
        &["--sim", "run", "T_WT"],
        &["node", "set-name", "LAB2"],
        &["state", "rebuild"],
        &["mark-completed", "T_WT", "--status", "PASS"],
    ] {
        let out = in_wt(args);
        expect_exit!(out, 3, "{args:?}");
        let se = text(&out.stderr);
        assert!(
            se.contains("not started, nothing was written: this checkout is a linked Git worktree of the RX node")
                && se.contains(&fix)
                && !se.contains("another")
                && !se.contains("idle"),
            "{args:?}: {se}"
        );
        assert!(
            !wt.join(".local").exists(),
            "{args:?} wrote {}/.local",
            wt.display()
        );
    }
    let out = in_wt(&["node", "show"]);
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(
        so.contains("this node has no name;") && so.contains(&fix),
        "{so}"
    );
    assert!(!so.contains("set one once"), "{so}");
    // `status` there points at the node too, never at naming this worktree.
    let out = in_wt(&["status"]);
    let so = text(&out.stdout);
    assert!(
        so.lines()
            .any(|l| l.starts_with("node:") && l.contains(&fix)),
        "{so}"
    );
    assert!(!so.contains("rxnode node set-name"), "{so}");
    let out = in_wt(&["doctor"]);
    let so = text(&out.stdout);
    let line = so
        .lines()
        .position(|l| l.starts_with("FAIL node name"))
        .unwrap_or_else(|| panic!("{so}"));
    assert!(
        so.lines()
            .nth(line)
            .is_some_and(|l| l.contains(&format!("linked Git worktree of the RX node {main}"))),
        "{so}"
    );
    assert!(
        so.lines()
            .nth(line + 1)
            .is_some_and(|l| l.contains(&format!("fix: run rxnode in {main}"))),
        "{so}"
    );
    // The node itself is untouched: the task is still deferred there, named LAB1.
    assert_eq!(lab.status_of("T_WT"), "deferred");
}

/// A misspelt `--branch` (a first day's typo) names the remote's branches this
/// checkout has fetched and the fix, exit 1, nothing prompted.
#[test]
fn a_misspelt_branch_names_the_fetched_branches_and_the_fix() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_BR", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("s\n"), 0);
    let out = lab.run(&["--branch", "video-devlopment", "watch", "--once"], "");
    expect_exit!(out, 1);
    let se = text(&out.stderr);
    assert!(
        se.contains(&format!(
            "the remote has no branch \"video-devlopment\" (deleted or renamed, or a typo?); \
             branches of origin last fetched here: {}",
            util::BRANCH
        )) && se.contains("fix: pass the branch the main PC posts tasks on with `--branch NAME`"),
        "{se}"
    );
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
}

/// `review` asks for a decision: left without one ([S], Enter at every prompt, end
/// of input) it changes nothing and exits 3, as `run`'s and `publish`'s typed
/// confirmations do when they are not given — a script's `review ID && run ID`
/// does not go on — naming the status the task keeps and how to decide it, under
/// `--json` as the error object. A decision (D) is done: exit 0.
#[test]
fn a_review_left_without_a_decision_exits_3_and_changes_nothing() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_UND", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("s\n"), 0);
    assert_eq!(lab.status_of("T_UND"), "pending");
    for (answer, status) in [
        ("s\n", "pending"),
        ("\n\n\n", "pending"),
        ("", "pending"),
        ("d\n", ""),
        ("S\n", "deferred"),
        ("\n \n", "deferred"),
    ] {
        let out = lab.run(&["review", "T_UND"], answer);
        if status.is_empty() {
            expect_exit!(out, 0);
            assert_eq!(lab.status_of("T_UND"), "deferred");
            continue;
        }
        expect_exit!(out, 3);
        let se = text(&out.stderr);
        assert!(
            se.contains(&format!(
                "task T_UND was not decided: {}; nothing changed, it is still {status}",
                if answer.trim() == "s" || answer.trim() == "S" {
                    "[S] was chosen"
                } else {
                    "the input ended or could not be read"
                }
            )) && se.contains("fix: `rxnode review T_UND` and answer A (approve) or D (defer)"),
            "answer {answer:?}: {se}"
        );
        assert_eq!(lab.status_of("T_UND"), status, "answer {answer:?}");
    }
    let out = lab.run(&["--json", "review", "T_UND"], "");
    expect_exit!(out, 3);
    let err: serde_json::Value =
        serde_json::from_str(text(&out.stderr).lines().last().unwrap_or("")).unwrap();
    assert_eq!(err["exit"], 3);
    assert_eq!(
        err["error"]["fix"],
        "`rxnode review T_UND` and answer A (approve) or D (defer)"
    );
    assert_eq!(lab.status_of("T_UND"), "deferred");
    assert_eq!(lab.count_events("approved", "T_UND"), 0);
}

/// The terminal of a `review` closed (SIGHUP) or Ctrl-C at its prompt: no
/// decision, exit 3, the task as it was, a `stopped` ledger line, no lock left.
#[cfg(unix)]
#[test]
fn a_review_whose_terminal_hangs_up_at_the_prompt_exits_3_and_changes_nothing() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_HUP", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
    for sig in [libc::SIGHUP, libc::SIGINT] {
        let stopped = lab.count_events("stopped", "T_HUP");
        let mut pty = util::Pty::spawn(lab.rxnode().args(["review", "T_HUP"]));
        pty.wait_for("[A] Approve", 1, 60);
        std::thread::sleep(Duration::from_millis(300));
        util::signal(pty.child.id(), sig);
        let status = stopped_within_2_s(&mut pty.child);
        assert_eq!(status.code(), Some(3), "signal {sig}: {}", pty.screen());
        assert!(
            pty.screen()
                .contains("task T_HUP was not decided: a stop signal arrived"),
            "signal {sig}: {}",
            pty.screen()
        );
        assert_eq!(lab.status_of("T_HUP"), "deferred");
        assert_eq!(lab.count_events("stopped", "T_HUP"), stopped + 1);
        assert!(!lab.local().join("rxnode.lock").exists());
        assert!(!lab.local().join("rxnode-review.lock").exists());
    }
}

/// The window of a `review` closed (the terminal's master side gone, so reads
/// fail with EIO): the `stopped` ledger line says the terminal was closed, not
/// only "Input/output error".
#[cfg(unix)]
#[test]
fn a_review_whose_terminal_window_closes_says_so_in_the_ledger() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_CLOSE", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("d\n"), 0);
    // python3's pty.fork keeps the one master descriptor; closing it is the window closing.
    let py = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out, t0 = b"", time.time()
while time.time() - t0 < 60 and b"> " not in out:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        out += os.read(fd, 65536)
time.sleep(0.3)
os.close(fd)
_, st = os.waitpid(pid, 0)
print(os.WEXITSTATUS(st) if os.WIFEXITED(st) else -os.WTERMSIG(st))
"#;
    let mut base = lab.rxnode();
    base.args(["review", "T_CLOSE"]);
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c")
        .arg(py)
        .arg(base.get_program())
        .args(base.get_args())
        .envs(base.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
    if let Some(dir) = base.get_current_dir() {
        cmd.current_dir(dir);
    }
    let out = cmd.output().unwrap();
    assert_eq!(text(&out.stdout).trim(), "3", "{}", util::show(&out));
    assert_eq!(lab.status_of("T_CLOSE"), "deferred");
    let why: Vec<String> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "stopped" && e["task_id"] == "T_CLOSE")
        .map(|e| {
            e["detail"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(why.len(), 1, "{why:?}");
    assert!(
        why[0].contains("the terminal was closed or hung up"),
        "{why:?}"
    );
}

#[test]
fn stop_and_eof_leave_the_task_pending_and_it_is_shown_at_next_start() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_STOP", &lab.main_head(), &[]));
    let out = lab.watch_once("s\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_STOP"), "pending");
    assert_eq!(lab.state()["last_seen_task_id"], "T_STOP");
    // EOF at the prompt: no decision, exit 0, lock released.
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(text(&out.stdout).contains("stays pending"));
    assert_eq!(lab.status_of("T_STOP"), "pending");
    assert_eq!(lab.state()["running"], false);
    assert!(!lab.local().join("rxnode.lock").exists());
    let s: serde_json::Value =
        serde_json::from_slice(&lab.run(&["status", "--json"], "").stdout).unwrap();
    assert_eq!(s["pending"][0], "T_STOP");
    // Next start: shown again; a wrong answer is asked again.
    let out = lab.watch_once("x\na\n");
    let so = text(&out.stdout);
    assert!(
        so.contains("still pending") && so.contains("unknown answer"),
        "{so}"
    );
    assert_eq!(lab.status_of("T_STOP"), "approved");
    assert_eq!(lab.count_events("detected", "T_STOP"), 1);
}

#[test]
fn non_ancestor_expected_head_is_rejected_once() {
    let lab = Lab::new();
    // A commit that exists on the main PC but is not an ancestor of the task commit.
    git_side_commit(&lab);
    let side = util::git(&lab.main, &["rev-parse", "side"]);
    lab.post(&Lab::task("T_BASE", &side, &[]));
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    let se = text(&out.stderr);
    assert!(
        se.contains("EXPECTED_HEAD") && se.contains("T_BASE"),
        "{se}"
    );
    assert!(!text(&out.stdout).contains(PROMPT));
    assert_eq!(lab.status_of("T_BASE"), "rejected");
    // A later commit does not reject the same task again.
    lab.post_file("y.txt", b"y\n");
    let out = lab.watch_once("");
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    assert_eq!(lab.count_events("rejected", "T_BASE"), 1);
}

fn git_side_commit(lab: &Lab) {
    util::git(&lab.main, &["checkout", "-q", "-b", "side"]);
    std::fs::write(lab.main.join("side.txt"), "side\n").unwrap();
    util::git(&lab.main, &["add", "side.txt"]);
    util::git(&lab.main, &["commit", "-q", "-m", "side"]);
    util::git(&lab.main, &["push", "-q", "origin", "side"]);
    util::git(&lab.main, &["checkout", "-q", util::BRANCH]);
}

#[test]
fn rf_tx_declared_yellow_and_oversized_files_are_rejected() {
    let lab = Lab::new();
    let base = lab.main_head();
    lab.post(&Lab::task(
        "T_TX",
        &base,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
    ));
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    assert!(!text(&out.stdout).contains(PROMPT));
    assert!(
        text(&out.stderr).contains("RISK_LEVEL"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(lab.status_of("T_TX"), "rejected");
    assert!(!lab.local().join("rx_agent_outbox/T_TX").exists());

    let mut big = Lab::task("T_BIG", &base, &[]).into_bytes();
    big.resize(1024 * 1024 + 1, b'x');
    lab.post_file(util::TASK_PATH, &big);
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    assert!(text(&out.stderr).contains("1 MiB"), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains(PROMPT));
}

#[test]
fn red_task_shows_that_approval_is_not_authorization() {
    let lab = Lab::new();
    lab.post(&Lab::task(
        "T_RED",
        &lab.main_head(),
        &[("RISK_LEVEL", "RED")],
    ));
    let out = lab.watch_once("a\n");
    let so = text(&out.stdout);
    assert!(so.contains("approval is not authorization"), "{so}");
    assert!(so.contains("AUTHORIZE T_RED"), "{so}");
    assert_eq!(lab.status_of("T_RED"), "approved");
}

#[test]
fn stop_file_holds_the_watcher() {
    let lab = Lab::new();
    let before = util::git(
        &lab.rx,
        &["rev-parse", "refs/remotes/origin/video-development"],
    );
    std::fs::create_dir_all(lab.local()).unwrap();
    std::fs::write(lab.local().join("STOP"), "").unwrap();
    lab.post(&Lab::task("T_HELD", &lab.main_head(), &[]));
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    assert!(text(&out.stdout).contains("held"), "{}", text(&out.stdout));
    assert!(!text(&out.stdout).contains(PROMPT));
    let after = util::git(
        &lab.rx,
        &["rev-parse", "refs/remotes/origin/video-development"],
    );
    assert_eq!(before, after, "fetched while held");
    let s: serde_json::Value =
        serde_json::from_slice(&lab.run(&["status", "--json"], "").stdout).unwrap();
    assert_eq!(s["held"], true);
    std::fs::remove_file(lab.local().join("STOP")).unwrap();
    let out = lab.watch_once("a\n");
    assert!(text(&out.stdout).contains(PROMPT));
    assert_eq!(lab.status_of("T_HELD"), "approved");
}

/// Review finding: a task left pending by an earlier run was re-prompted (and
/// could be approved, outbox written) while `.local/STOP` existed, because the
/// re-prompt ran before the first hold check. While STOP exists the
/// watcher prompts nothing.
#[test]
fn stop_file_holds_tasks_pending_from_an_earlier_run() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_PEND", &lab.main_head(), &[]));
    let out = lab.watch_once("s\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_PEND"), "pending");
    let state_before = lab.state()["tasks"]["T_PEND"].clone();
    std::fs::write(lab.local().join("STOP"), "").unwrap();
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(so.contains("held"), "{so}");
    assert!(!so.contains(PROMPT), "{so}");
    assert!(!so.contains("still pending"), "{so}");
    assert_eq!(lab.status_of("T_PEND"), "pending");
    assert_eq!(lab.state()["tasks"]["T_PEND"], state_before);
    assert!(!lab.local().join("rx_agent_outbox/T_PEND").exists());
    assert_eq!(lab.count_events("approved", "T_PEND"), 0);
    // Released: the pending task is shown again and can be approved.
    std::fs::remove_file(lab.local().join("STOP")).unwrap();
    let out = lab.watch_once("a\n");
    assert!(text(&out.stdout).contains("still pending"));
    assert_eq!(lab.status_of("T_PEND"), "approved");
    assert!(lab.local().join("rx_agent_outbox/T_PEND").exists());
}

#[test]
fn existing_outbox_is_never_overwritten() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_OB", &lab.main_head(), &[]));
    let ob = lab.local().join("rx_agent_outbox/T_OB");
    std::fs::create_dir_all(&ob).unwrap();
    std::fs::write(ob.join("TASK.md"), "operator notes\n").unwrap();
    let out = lab.watch_once("a\n");
    assert!(
        text(&out.stderr).contains("never overwritten"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(ob.join("TASK.md")).unwrap(),
        "operator notes\n"
    );
    assert_eq!(std::fs::read_dir(&ob).unwrap().count(), 1);
    assert_eq!(lab.status_of("T_OB"), "pending");
    assert_eq!(lab.count_events("refused", "T_OB"), 1);
}

#[test]
fn corrupt_state_is_kept_aside_and_the_command_fails() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.local()).unwrap();
    std::fs::write(lab.local().join("rx_agent_state.json"), "{ not json").unwrap();
    let out = lab.watch_once("");
    expect_exit!(out, 1);
    assert!(
        text(&out.stderr).contains("rx_agent_state.json"),
        "{}",
        text(&out.stderr)
    );
    let aside: Vec<_> = std::fs::read_dir(lab.local())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        std::fs::read_to_string(aside[0].path()).unwrap(),
        "{ not json"
    );
    // Regression: the next command must not start from an empty state while
    // the corrupt one sits aside unresolved (that would re-prompt and re-run
    // tasks already decided) — it fails again, naming the file kept aside.
    let again = lab.watch_once("");
    expect_exit!(again, 1);
    assert!(
        text(&again.stderr).contains(".corrupt-"),
        "{}",
        text(&again.stderr)
    );
    assert!(!lab.local().join("rx_agent_state.json").exists());
    // Once the operator deletes it, a fresh start is their decision.
    std::fs::remove_file(aside[0].path()).unwrap();
    let fresh = lab.watch_once("");
    assert_ne!(fresh.status.code(), Some(1), "{}", text(&fresh.stderr));
}

/// The watcher's `[A]/[D]/[S]` and `publish`'s confirmation read a bounded line:
/// NUL bytes that never end a line (stdin from `/dev/zero`) stop the watcher
/// without a decision (the task stays pending, the ledger says why) and refuse
/// the publication (exit 3, nothing published), after reading only the bound.
#[test]
fn an_endless_answer_line_decides_nothing_and_is_not_read_on() {
    let lab = Lab::new();
    let id = "W_LONG_1";
    lab.post(&Lab::task(
        id,
        &lab.main_head(),
        &[("ALLOW_PUSH", "RX_RESULT_ONLY")],
    ));
    let (out, written) = util::run_fed_endless_line(
        lab.rxnode().args(["watch", "--once", "--interval", "0.2"]),
        256 << 20,
    );
    let err = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(err.contains(PROMPT), "{err}");
    assert!(err.contains("longer than 4096 bytes"), "{err}");
    assert!(
        written < 1 << 20,
        "{written} bytes were read for one answer"
    );
    assert_eq!(lab.status_of(id), "pending");
    assert_eq!(lab.count_events("approved", id), 0);
    let stopped = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "stopped" && e["task_id"] == id)
        .count();
    assert_eq!(stopped, 1);

    // Approved and completed, the publication is asked for and refused.
    lab.approve(id);
    expect_exit!(lab.run(&["node", "set-name", "LAB-RX1"], ""), 0);
    let out = lab.run(
        &["mark-completed", id, "--status", "PASS", "--note", "ok"],
        "",
    );
    expect_exit!(out, 0);
    let (out, written) = util::run_fed_endless_line(lab.rxnode().args(["publish", id]), 256 << 20);
    expect_exit!(out, 3);
    assert!(
        text(&out.stdout).contains(&format!("`PUBLISH {id}`")),
        "{}",
        util::show(&out)
    );
    assert!(
        text(&out.stderr).contains("longer than 4096 bytes"),
        "{}",
        util::show(&out)
    );
    assert!(
        written < 1 << 20,
        "{written} bytes were read for one confirmation"
    );
    assert_eq!(lab.count_events("published", id), 0);
}
