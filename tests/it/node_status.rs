//! Nodes that report their health (docs/protocol.md#node-status): the watcher's
//! `rx-status/<NODE>` branch, one parentless commit with `STATUS.json`, and the
//! main PC's `results nodes` view of it — real binary, real bare repositories,
//! `git daemon` on loopback where several nodes push at once.
use crate::util::{git, git_try, signal, start_daemon, Lab, BRANCH};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod published;

/// A watcher left running with its stdin open (it never gets an answer).
struct Watcher(Child);

impl Watcher {
    fn start(mut cmd: Command, interval: &str) -> Watcher {
        let child = cmd
            .args(["watch", "--interval", interval])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rxnode watch starts");
        Watcher(child)
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn set_status_policy(lab: &Lab, every_s: f64) {
    lab.set_policy(&format!(
        r#"{{"status": {{"publish_every_s": {every_s}}}}}"#
    ));
}

fn name(lab: &Lab, node: &str) {
    let out = lab.run(&["node", "set-name", node], "");
    expect_exit!(out, 0);
}

/// Each `(name, schema kind, instance, valid)`: the independent validator
/// (Python `jsonschema`) agrees with `valid` under `rxnode schema KIND`.
fn assert_schemas(cases: Vec<(&str, &str, Value, bool)>) {
    let input: Vec<(String, &str, Value)> = cases
        .iter()
        .map(|(n, k, v, _)| ((*n).to_owned(), *k, v.clone()))
        .collect();
    let verdicts = crate::mainpc::schemas::jsonschema_verdicts(&input);
    assert_eq!(verdicts.len(), cases.len());
    for ((name, valid, errors), (_, _, instance, want)) in verdicts.iter().zip(&cases) {
        assert_eq!(
            valid, want,
            "{name}: schema says valid={valid}; errors {errors:?}; {instance}"
        );
    }
}

/// A sealed file of `.local/` as JSON.
fn local_json(lab: &Lab, file: &str) -> Value {
    let text = std::fs::read_to_string(lab.local().join(file)).expect("the file exists");
    serde_json::from_str(&text).expect("the file is JSON")
}

/// `STATUS.json` of `rx-status/<node>` on the bare repository, if the branch exists.
fn published(origin: &Path, node: &str) -> Option<Value> {
    let text = git_try(origin, &["show", &format!("rx-status/{node}:STATUS.json")])?;
    Some(serde_json::from_str(&text).expect("STATUS.json parses"))
}

/// Poll `f` every 100 ms until it gives `Some`, at most `within`.
fn wait_for<T>(within: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `results nodes --json` in `main`, by node name.
fn nodes(main: &Path) -> Vec<Value> {
    let out = crate::util::run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(main)
            .args(["--json", "results", "nodes"]),
        b"",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["nodes"].as_array().cloned().unwrap_or_default()
}

fn node_of<'a>(list: &'a [Value], node: &str) -> Option<&'a Value> {
    list.iter().find(|n| n["node"] == node)
}

/// Every ref of the bare repository.
fn refs(origin: &Path) -> Vec<String> {
    git(origin, &["for-each-ref", "--format=%(refname)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A node: a clone of `url` with a name and the status policy.
fn fleet_node(lab: &Lab, name: &str, url: &str, every_s: f64) -> PathBuf {
    let dir = lab.dir.path().join(format!("rx-{name}"));
    git(
        lab.dir.path(),
        &["clone", "-q", "-b", BRANCH, url, dir.to_str().unwrap()],
    );
    let mut c = crate::util::rxnode_cmd();
    c.arg("--repo").arg(&dir).args(["node", "set-name", name]);
    let out = crate::util::run_fed(&mut c, b"");
    expect_exit!(out, 0);
    std::fs::write(
        dir.join(".local/rxnode-policy.json"),
        format!(r#"{{"status": {{"publish_every_s": {every_s}}}}}"#),
    )
    .unwrap();
    dir
}

fn watcher_at(dir: &Path, interval: &str) -> Watcher {
    let mut c = crate::util::rxnode_cmd();
    c.arg("--repo").arg(dir);
    Watcher::start(c, interval)
}

/// Three nodes publishing every 2 s to one origin served by `git daemon` are all
/// `alive` on the main PC, each with its own branch of exactly one commit, and
/// stay alive over several intervals.
#[test]
fn three_nodes_at_a_two_second_interval_are_all_alive_over_git_daemon() {
    let lab = Lab::new();
    let daemon = start_daemon(lab.dir.path())
        .expect("git daemon runs on loopback (Debian's `git` package carries it)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let names = ["FLEET-S1", "FLEET-S2", "FLEET-S3"];
    let dirs: Vec<PathBuf> = names
        .iter()
        .map(|n| fleet_node(&lab, n, &url, 2.0))
        .collect();
    let _watchers: Vec<Watcher> = dirs.iter().map(|d| watcher_at(d, "0.5")).collect();
    let all_there = wait_for(Duration::from_secs(20), || {
        names
            .iter()
            .all(|n| published(&lab.origin, n).is_some())
            .then_some(())
    });
    assert!(all_there.is_some(), "refs: {:?}", refs(&lab.origin));
    // Over three intervals, every look sees all three alive.
    for _ in 0..3 {
        let list = nodes(&lab.main);
        for n in names {
            let v = node_of(&list, n).unwrap_or_else(|| panic!("{n} missing: {list:?}"));
            assert_eq!(v["state"], "alive", "{v}");
            assert_eq!(v["watcher"], "running", "{v}");
            assert_eq!(v["publish_every_s"], 2.0, "{v}");
            assert!(v["age_s"].as_f64().unwrap() <= 4.0, "{v}");
            assert_eq!(v["pending_approval"], 0, "{v}");
            assert!(v["radios"].is_array(), "{v}");
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    for n in names {
        let count = git(
            &lab.origin,
            &["rev-list", "--count", &format!("rx-status/{n}")],
        );
        assert_eq!(count, "1", "rx-status/{n}");
    }
}

/// A watcher killed with SIGKILL (no last status) turns `stale` within 3
/// intervals and `silent` after 10, and not before.
#[test]
fn a_killed_watcher_turns_stale_within_three_intervals_and_silent_after_ten() {
    let lab = Lab::new();
    name(&lab, "KILL-RX");
    set_status_policy(&lab, 1.0);
    let w = Watcher::start(lab.rxnode(), "0.3");
    let up = wait_for(Duration::from_secs(15), || {
        node_of(&nodes(&lab.main), "KILL-RX")
            .filter(|v| v["state"] == "alive")
            .cloned()
    });
    assert!(up.is_some(), "never alive: {:?}", nodes(&lab.main));
    signal(w.pid(), libc::SIGKILL);
    let killed = Instant::now();
    let stale = wait_for(Duration::from_secs(3), || {
        node_of(&nodes(&lab.main), "KILL-RX")
            .filter(|v| v["state"] == "stale")
            .map(|_| killed.elapsed())
    });
    assert!(
        stale.is_some(),
        "not stale within 3 intervals: {:?}",
        nodes(&lab.main)
    );
    // Still stale (not silent) before 10 intervals have passed since the last heartbeat.
    std::thread::sleep(Duration::from_secs(8).saturating_sub(killed.elapsed()));
    let v = nodes(&lab.main);
    assert_eq!(node_of(&v, "KILL-RX").unwrap()["state"], "stale", "{v:?}");
    std::thread::sleep(Duration::from_millis(11_500).saturating_sub(killed.elapsed()));
    let v = nodes(&lab.main);
    let n = node_of(&v, "KILL-RX").unwrap();
    assert_eq!(n["state"], "silent", "{n}");
    assert!(n["age_s"].as_f64().unwrap() > 10.0, "{n}");
    // Killed without a word: the last status still says the watcher ran.
    assert_eq!(n["watcher"], "running", "{n}");
}

/// A remote branch `rx-status/case-rx` beside this node's `rx-status/CASE-RX`
/// is one ref on a Windows or macOS main PC: the status push is refused with
/// the reason (in `rx_status_push.json`), and nothing is pushed.
#[test]
fn a_status_branch_differing_only_in_letter_case_from_another_is_not_pushed() {
    let lab = Lab::new();
    name(&lab, "CASE-RX");
    set_status_policy(&lab, 0.2);
    let head = lab.main_head();
    git(
        &lab.origin,
        &["update-ref", "refs/heads/rx-status/case-rx", &head],
    );
    let w = Watcher::start(lab.rxnode(), "0.5");
    let rec = wait_for(Duration::from_secs(30), || {
        let r: Value =
            serde_json::from_slice(&std::fs::read(lab.local().join("rx_status_push.json")).ok()?)
                .ok()?;
        (r["failures_in_a_row"].as_u64()? >= 2).then_some(r)
    });
    drop(w);
    let rec = rec.expect("two refused status pushes within 30 s");
    let why = rec["last_error"].as_str().unwrap_or_default();
    assert!(
        why.contains("rx-status/case-rx")
            && why.contains("rx-status/CASE-RX")
            && why.contains("only in letter case"),
        "{rec}"
    );
    assert!(published(&lab.origin, "CASE-RX").is_none());
}

/// After 100 heartbeats the status branch holds exactly one parentless commit
/// with STATUS.json alone, and no other ref was ever pushed; `rxnode status`
/// shows the last push.
#[test]
fn a_status_branch_holds_one_commit_after_a_hundred_heartbeats() {
    let lab = Lab::new();
    name(&lab, "BEAT-RX");
    set_status_policy(&lab, 0.2);
    let before = refs(&lab.origin);
    let w = Watcher::start(lab.rxnode(), "0.5");
    let attempts = wait_for(Duration::from_secs(90), || {
        let r: Value =
            serde_json::from_slice(&std::fs::read(lab.local().join("rx_status_push.json")).ok()?)
                .ok()?;
        (r["attempts"].as_u64()? >= 100).then_some(r)
    });
    drop(w);
    let rec = attempts.expect("100 heartbeats within 90 s");
    assert_eq!(rec["failures_in_a_row"], 0, "{rec}");
    assert_eq!(
        git(&lab.origin, &["rev-list", "--count", "rx-status/BEAT-RX"]),
        "1"
    );
    assert_eq!(
        git(
            &lab.origin,
            &["rev-list", "--parents", "-n", "1", "rx-status/BEAT-RX"]
        )
        .split(' ')
        .count(),
        1,
        "the status commit has a parent"
    );
    assert_eq!(
        git(
            &lab.origin,
            &["ls-tree", "-r", "--name-only", "rx-status/BEAT-RX"]
        ),
        "STATUS.json"
    );
    let mut after = refs(&lab.origin);
    after.retain(|r| !before.contains(r));
    assert_eq!(after, vec!["refs/heads/rx-status/BEAT-RX".to_owned()]);
    let s = published(&lab.origin, "BEAT-RX").unwrap();
    assert_eq!(s["node"], "BEAT-RX");
    assert!(s["rxnode_version"].is_string(), "{s}");
    // The checkout is untouched: no branch, no remote-tracking ref for it.
    let local = git(&lab.rx, &["for-each-ref", "--format=%(refname)"]);
    assert!(!local.contains("refs/heads/rx-status"), "{local}");
    assert!(!local.contains("refs/remotes/origin/rx-status"), "{local}");
    assert_eq!(lab.porcelain(), "");
    let out = lab.run(&["--json", "status"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["status_publishing"];
    assert_eq!(p["publishing"], "on", "{p}");
    assert_eq!(p["remote_ref"], "refs/heads/rx-status/BEAT-RX", "{p}");
    assert!(p["last_push"]["last_pushed_at"].is_string(), "{p}");
    assert_eq!(p["would_publish"]["node"], "BEAT-RX", "{p}");
}

/// Without "status" in the policy no status ref ever appears — not with a
/// policy that has other sections, not over a watcher's life with a task.
#[test]
fn with_status_off_no_status_ref_ever_appears() {
    let lab = Lab::new();
    name(&lab, "QUIET-RX");
    lab.set_policy(r#"{"rx": {"max_duration_s": 5}}"#);
    let w = Watcher::start(lab.rxnode(), "0.2");
    let t = Lab::task("QUIET_1", &lab.main_head(), &[]);
    lab.post(&t);
    let seen = wait_for(Duration::from_secs(15), || {
        let st: Value =
            serde_json::from_slice(&std::fs::read(lab.local().join("rx_agent_state.json")).ok()?)
                .ok()?;
        (st["tasks"]["QUIET_1"]["status"] == "pending").then_some(())
    });
    assert!(seen.is_some());
    std::thread::sleep(Duration::from_secs(2));
    drop(w);
    let all = refs(&lab.origin);
    assert!(
        all.iter().all(|r| !r.contains("rx-status")),
        "a status ref appeared: {all:?}"
    );
    let local = git(&lab.rx, &["for-each-ref", "--format=%(refname)"]);
    assert!(!local.contains("node-status"), "{local}");
    assert!(!lab.local().join("rx_status_push.json").exists());
    let out = lab.run(&["--json", "status"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status_publishing"]["publishing"], "off");
}

/// A refused task shows up in the next STATUS.json with its ID and reason; a
/// pending task whose title carries an absolute path is published with the
/// title redacted, and the path is nowhere in the status.
#[test]
fn a_refusal_and_a_redacted_title_show_in_the_next_status() {
    let lab = Lab::new();
    name(&lab, "SCAN-RX");
    set_status_policy(&lab, 30.0);
    let _w = Watcher::start(lab.rxnode(), "0.2");
    let first = wait_for(Duration::from_secs(15), || {
        published(&lab.origin, "SCAN-RX")
    });
    assert!(first.is_some());
    // A refused text (RF_TX without a value the header allows).
    let bad = Lab::task("SCAN_BAD_2", &lab.main_head(), &[("RF_TX", "MAYBE")]);
    lab.post(&bad);
    // Changes are published at once, not at the next (30 s) heartbeat.
    let s = wait_for(Duration::from_secs(10), || {
        published(&lab.origin, "SCAN-RX").filter(|s| {
            s["refusals"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x["task_id"] == "SCAN_BAD_2"))
        })
    })
    .expect("the refusal in the next status");
    let r = s["refusals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["task_id"] == "SCAN_BAD_2")
        .unwrap();
    let reason = r["reason"].as_str().unwrap();
    assert!(reason.contains("RF_TX"), "{r}");
    assert!(!reason.contains('\n'), "{r}");
    // Then a pending task whose title names a local file (the watcher then
    // waits at its prompt).
    let t = Lab::task(
        "SCAN_PATH_1",
        &lab.main_head(),
        &[(
            "TASK_TITLE",
            "Compare with /home/alice/captures/ref.sigmf-data",
        )],
    );
    lab.post(&t);
    let s = wait_for(Duration::from_secs(10), || {
        published(&lab.origin, "SCAN-RX").filter(|s| s["queue"]["pending_approval"] == 1)
    })
    .expect("the pending task in the status before the next heartbeat");
    assert_eq!(s["queue"]["pending"][0]["task_id"], "SCAN_PATH_1", "{s}");
    assert_eq!(
        s["queue"]["pending"][0]["title"], "[redacted: absolute local path]",
        "{s}"
    );
    let raw = git(&lab.origin, &["show", "rx-status/SCAN-RX:STATUS.json"]);
    assert!(!raw.contains("/home/alice"), "{raw}");
    assert!(!raw.contains(&lab.rx.display().to_string()), "{raw}");
    assert!(raw.len() <= 4096);
    // The main PC sees the same, escaped.
    let list = nodes(&lab.main);
    let n = node_of(&list, "SCAN-RX").unwrap();
    assert_eq!(n["pending_approval"], 1, "{n}");
    assert!(
        n["refusals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["task_id"] == "SCAN_BAD_2"),
        "{n}"
    );
}

/// A policy that asks for status on a node without a name: the watcher refuses
/// to start (exit 3) with the fix, and doctor fails the check the same way;
/// with a name but an unreachable remote, doctor fails with the fix.
#[test]
fn status_without_a_node_name_is_refused_and_doctor_checks_the_remote() {
    let lab = Lab::new();
    set_status_policy(&lab, 60.0);
    let out = lab.run(&["watch", "--once"], "");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rxnode node set-name"), "{err}");
    assert!(refs(&lab.origin).iter().all(|r| !r.contains("rx-status")));
    let doc = |lab: &Lab| -> Value {
        let out = lab.run(&["--json", "doctor"], "");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "status publishing")
            .cloned()
            .expect("a status publishing check")
    };
    let c = doc(&lab);
    assert_eq!(c["status"], "FAIL", "{c}");
    assert!(c["fix"].as_str().unwrap().contains("set-name"), "{c}");
    name(&lab, "DOC-RX");
    let c = doc(&lab);
    assert_eq!(c["status"], "PASS", "{c}");
    let port = crate::util::free_port();
    git(
        &lab.rx,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("git://127.0.0.1:{port}/none.git"),
        ],
    );
    let c = doc(&lab);
    assert_eq!(c["status"], "FAIL", "{c}");
    assert!(
        c["detail"].as_str().unwrap().contains("push connection"),
        "{c}"
    );
    lab.remove_policy();
    assert_eq!(doc(&lab)["status"], "SKIP");
}

/// `results nodes` in `main`: exit 0, stdout as JSON, stderr as text.
fn nodes_with_warnings(main: &Path) -> (Vec<Value>, String) {
    let out = crate::util::run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(main)
            .args(["--json", "results", "nodes"]),
        b"",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    (
        v["nodes"].as_array().cloned().unwrap_or_default(),
        crate::util::text(&out.stderr),
    )
}

/// A peer's branch nested below a node's status ref (`rx-status/<NODE>/x`)
/// neither breaks `results nodes` (a warning names it and it is skipped, also
/// when the main PC held that node's status from before) nor blocks the node's
/// own heartbeat (its push removes the nested ref and lands).
#[test]
fn a_peer_ref_below_a_status_branch_is_skipped_and_blocks_no_heartbeat() {
    let lab = Lab::new();
    name(&lab, "NEST-RX");
    set_status_policy(&lab, 1.0);
    let peer = |r: &str| git(&lab.main, &["push", "-q", "origin", &format!("HEAD:{r}")]);
    peer("refs/heads/rx-status/NEST-RX/x");
    peer("refs/heads/rx-status/PEER/deep");

    let (list, err) = nodes_with_warnings(&lab.main);
    assert!(node_of(&list, "NEST-RX").is_none(), "{list:?}");
    for r in ["rx-status/NEST-RX/x", "rx-status/PEER/deep"] {
        assert!(
            err.lines()
                .any(|l| l.contains("warning") && l.contains(&format!("refs/heads/{r}"))),
            "{r} not named: {err}"
        );
    }

    let w = watcher_at(&lab.rx, "0.2");
    let st = wait_for(Duration::from_secs(20), || {
        published(&lab.origin, "NEST-RX")
    });
    assert!(
        st.is_some(),
        "the heartbeat never landed: {:?}",
        refs(&lab.origin)
    );
    assert!(!refs(&lab.origin).contains(&"refs/heads/rx-status/NEST-RX/x".to_owned()));
    drop(w);
    let (list, err) = nodes_with_warnings(&lab.main);
    assert!(node_of(&list, "NEST-RX").is_some(), "{list:?} {err}");
    assert!(err.contains("refs/heads/rx-status/PEER/deep"), "{err}");

    // The main PC holds NEST-RX's status; on the remote a peer replaces it by a nested ref.
    git(
        &lab.origin,
        &["update-ref", "-d", "refs/heads/rx-status/NEST-RX"],
    );
    peer("refs/heads/rx-status/NEST-RX/x");
    let (list, err) = nodes_with_warnings(&lab.main);
    assert!(err.contains("refs/heads/rx-status/NEST-RX/x"), "{err}");
    assert!(
        node_of(&list, "NEST-RX").is_none_or(|n| n["last_heartbeat"].is_null()),
        "{list:?}"
    );
}

/// A watcher stopped on purpose (SIGTERM: it pushes a last status) is
/// `stopped` on the main PC, never `ALIVE … watcher stopped`.
#[test]
fn a_watcher_stopped_on_purpose_is_stopped_not_alive() {
    let lab = Lab::new();
    name(&lab, "STOP-RX");
    set_status_policy(&lab, 5.0);
    let mut w = Watcher::start(lab.rxnode(), "0.3");
    let up = wait_for(Duration::from_secs(15), || {
        node_of(&nodes(&lab.main), "STOP-RX")
            .filter(|v| v["state"] == "alive")
            .cloned()
    });
    assert!(up.is_some(), "never alive: {:?}", nodes(&lab.main));
    signal(w.pid(), libc::SIGTERM);
    let _ = w.0.wait();
    let stopped = wait_for(Duration::from_secs(10), || {
        node_of(&nodes(&lab.main), "STOP-RX")
            .filter(|v| v["watcher"] == "stopped")
            .cloned()
    })
    .unwrap_or_else(|| panic!("no last status: {:?}", nodes(&lab.main)));
    assert_eq!(stopped["state"], "stopped", "{stopped}");
    let out = crate::util::run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(&lab.main)
            .args(["results", "nodes"]),
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("STOP-RX"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("STOP-RX  STOPPED  "), "{text}");
    assert!(!text.contains("ALIVE"), "{text}");
}
