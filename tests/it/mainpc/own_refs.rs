//! Nodes that publish to a ref of their own (`rx-results/<NODE>`), beside nodes
//! on the shared `rx-node`; the main PC reads both, names a conflict, and names
//! a node ref rewritten by someone else (docs/publishing.md#one-ref-per-node).
use super::*;

/// A manual task approved and marked done on `node`, ready to publish.
fn done(node: &Path, id: &str) {
    approve(node);
    let out = rxnode(
        node,
        &[
            "mark-completed",
            id,
            "--status",
            "PASS",
            "--note",
            "checked",
        ],
        "",
    );
    expect_exit!(out, 0);
}

fn set_own(node: &Path) {
    let out = rxnode(node, &["node", "set-publish-ref", "own"], "");
    expect_exit!(out, 0);
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(out)))
}

/// The listing as JSON, with the fields of the fleet.
fn fleet_listing(main: &Path) -> Value {
    let out = rxnode(main, &["--json", "results"], "");
    expect_exit!(out, 0);
    json_of(&out)
}

/// Four nodes on refs of their own and one on `rx-node` publish at the same
/// moment over `git daemon`: the own-ref nodes land in one push attempt each,
/// each on its own branch only; the shared node on `rx-node`; the main PC lists
/// all five and `results nodes` names where each publishes. The layout is the
/// operator's, shown by `node show` and `doctor`.
#[test]
fn nodes_on_refs_of_their_own_publish_at_once_and_the_main_pc_lists_every_layout() {
    let lab = Lab::new();
    let daemon = start_daemon(lab.root.path())
        .expect("git daemon runs on loopback (Debian's `git` package carries it)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let own: Vec<String> = (1..=4).map(|i| format!("OWN-RX{i}")).collect();
    let mut names = own.clone();
    names.push("SHARED-RX".to_owned());
    let nodes: Vec<PathBuf> = names.iter().map(|n| lab.node_from(n, &url)).collect();
    lab.post("OWN_REF_1", &[]);

    // The default is the shared branch, as `node show` says; `own` is the operator's choice.
    let shown = json_of(&rxnode(&nodes[4], &["--json", "node", "show"], ""));
    assert_eq!(shown["publish_ref"], "shared", "{shown}");
    assert_eq!(shown["branch"], "rx-node", "{shown}");
    for n in &nodes[..4] {
        set_own(n);
    }
    let shown = json_of(&rxnode(&nodes[0], &["--json", "node", "show"], ""));
    assert_eq!(shown["publish_ref"], "own", "{shown}");
    assert_eq!(shown["branch"], "rx-results/OWN-RX1", "{shown}");
    let text = stdout(&rxnode(&nodes[0], &["node", "show"], ""));
    assert!(text.contains("publishes to: rx-results/OWN-RX1"), "{text}");
    let doctor = json_of(&rxnode(&nodes[0], &["--json", "doctor"], ""));
    let check = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "node name")
        .cloned()
        .unwrap_or_default();
    assert!(
        check["detail"]
            .as_str()
            .unwrap_or("")
            .contains("publishes to rx-results/OWN-RX1 (own layout"),
        "{check}"
    );

    for n in &nodes {
        done(n, "OWN_REF_1");
    }
    let mut children: Vec<_> = nodes
        .iter()
        .map(|n| spawn(n, &["--json", "publish", "OWN_REF_1", "--push"]))
        .collect();
    for c in &mut children {
        c.stdin
            .take()
            .unwrap()
            .write_all(b"PUBLISH OWN_REF_1\n")
            .unwrap();
    }
    for (c, name) in children.into_iter().zip(&names) {
        let out = c.wait_with_output().unwrap();
        expect_exit!(out, 0, "{name}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if own.contains(name) {
            assert_eq!(v["ref"], format!("refs/heads/rx-results/{name}"), "{v}");
            assert_eq!(v["push_attempts"], 1, "{name} waited on another node: {v}");
        } else {
            assert_eq!(v["ref"], "refs/heads/rx-node", "{v}");
        }
    }

    // On origin: each own-ref node's three files on its branch only; rx-node holds the shared node's.
    for n in &own {
        let files = git(
            &lab.origin,
            &["ls-tree", "-r", "--name-only", &format!("rx-results/{n}")],
        );
        let want: Vec<String> = ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"]
            .iter()
            .map(|f| format!("rx-results/OWN_REF_1/{n}/{f}"))
            .collect();
        assert_eq!(files.lines().collect::<Vec<_>>(), want, "{n}");
    }
    let shared = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert_eq!(shared.lines().count(), 3, "{shared}");
    assert!(shared.contains("OWN_REF_1/SHARED-RX/"), "{shared}");

    // The main PC lists all five, each from its branch, none with a problem.
    let l = fleet_listing(&lab.main);
    assert_eq!(l["total"], 5, "{l}");
    let rows = l["results"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{l}");
    for r in rows {
        let node = r["node"].as_str().unwrap();
        let want = if node == "SHARED-RX" {
            "rx-node".to_owned()
        } else {
            format!("rx-results/{node}")
        };
        assert_eq!(r["branch"], want, "{r}");
        assert_eq!(r["problems"], json!([]), "{r}");
    }
    assert_eq!(l["branches"].as_array().unwrap().len(), 5, "{l}");
    // --node reads that node's own branch.
    let out = rxnode(&lab.main, &["--json", "results", "--node", "OWN-RX3"], "");
    expect_exit!(out, 0);
    let v = json_of(&out);
    assert_eq!(v["results"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["results"][0]["branch"], "rx-results/OWN-RX3", "{v}");
    // show and verify find a result on a node's own branch.
    let out = rxnode(
        &lab.main,
        &["results", "show", "OWN_REF_1", "--from", "OWN-RX2"],
        "",
    );
    expect_exit!(out, 0);
    let out = rxnode(&lab.main, &["--json", "results", "verify", "OWN_REF_1"], "");
    expect_exit!(out, 0);
    let v = json_of(&out);
    assert_eq!(v["results"].as_array().unwrap().len(), 5, "{v}");
    // results nodes: five nodes, each with its one result and where it publishes.
    let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
    expect_exit!(out, 0);
    let v = json_of(&out);
    let ns = v["nodes"].as_array().unwrap();
    assert_eq!(ns.len(), 5, "{v}");
    for n in ns {
        let name = n["node"].as_str().unwrap();
        assert_eq!(n["results"], 1, "{n}");
        assert_eq!(n["last_task_id"], "OWN_REF_1", "{n}");
        let want = if name == "SHARED-RX" {
            "rx-node".to_owned()
        } else {
            format!("rx-results/{name}")
        };
        assert_eq!(n["publishes_to"], json!([want]), "{n}");
    }
}

/// A result that stands on both `rx-node` and its node's own branch is one
/// result (named on both); a differing copy is a conflict, named, and the copy
/// that landed later is listed; a folder of another node on a node's own branch
/// is named and never listed.
/// `rx-results/LAB-A` and `rx-results/lab-a` are one ref file on a
/// case-insensitive file system: a fetch keeps one under the other's name.
/// Neither is read; a warning names both; `rx-node` is still read.
#[test]
fn node_branches_differing_only_in_letter_case_are_named_and_not_read() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("CASE_REF_1", &[]);
    done(&a, "CASE_REF_1");
    expect_exit!(publish(&a, "CASE_REF_1"), 0);
    for b in ["rx-results/LAB-A", "rx-results/lab-a"] {
        git(
            &a,
            &["push", "-q", "origin", &format!("rx-node:refs/heads/{b}")],
        );
    }
    let out = rxnode(&lab.main, &["--json", "results"], "");
    expect_exit!(out, 0);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        se.contains("rx-results/LAB-A and rx-results/lab-a") && se.contains("only in letter case"),
        "{}",
        show(&out)
    );
    let l = json_of(&out);
    let rows = l["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{l}");
    assert_eq!(rows[0]["branch"], "rx-node", "{l}");
    assert_eq!(rows[0]["also_on"], json!([]), "{l}");
}

/// A node on its own branch does not publish while the remote holds a branch
/// only letter case tells from its own (`rx-results/lab-a` beside `LAB-A`):
/// the main PC would read neither. Refused, naming both; nothing pushed.
#[test]
fn an_own_branch_differing_only_in_letter_case_from_another_is_not_published_to() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    set_own(&a);
    lab.post("CASE_OWN_1", &[]);
    done(&a, "CASE_OWN_1");
    git(
        &a,
        &["push", "-q", "origin", "HEAD:refs/heads/rx-results/lab-a"],
    );
    let out = publish(&a, "CASE_OWN_1");
    expect_exit!(out, 3);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        se.contains("rx-results/lab-a")
            && se.contains("rx-results/LAB-A")
            && se.contains("only in letter case"),
        "{}",
        show(&out)
    );
    let refs = git(&lab.origin, &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("rx-results/LAB-A"), "{refs}");
}

/// A peer's `rx-results/case_list_1/LAB-A/` beside `rx-results/CASE_LIST_1/`
/// on rx-node: both rows stay (the tree keeps them apart), and the listing
/// names the pair as one folder on a case-insensitive checkout.
#[test]
fn results_folders_differing_only_in_letter_case_are_named_in_the_listing() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("CASE_LIST_1", &[]);
    done(&a, "CASE_LIST_1");
    expect_exit!(publish(&a, "CASE_LIST_1"), 0);
    let hand = lab.clone_rx_node("hand");
    let from = hand.join("rx-results/CASE_LIST_1/LAB-A");
    let to = hand.join("rx-results/case_list_1/LAB-A");
    std::fs::create_dir_all(&to).unwrap();
    for f in std::fs::read_dir(&from).unwrap().flatten() {
        std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
    }
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "copy"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    let l = fleet_listing(&lab.main);
    assert_eq!(l["results"].as_array().unwrap().len(), 2, "{l}");
    let tree_problems = l["problems"].to_string();
    assert!(
        tree_problems.contains(
            "rx-results/CASE_LIST_1 and rx-results/case_list_1 differ only in letter case"
        ),
        "{tree_problems}"
    );
}

#[test]
fn a_result_on_both_layouts_is_listed_once_and_a_differing_copy_is_a_named_conflict() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("BOTH_1", &[]);
    done(&a, "BOTH_1");
    expect_exit!(publish(&a, "BOTH_1"), 0);
    // The same commit on the node's own branch too (as after a move between layouts).
    git(
        &a,
        &[
            "push",
            "-q",
            "origin",
            "rx-node:refs/heads/rx-results/LAB-A",
        ],
    );
    let l = fleet_listing(&lab.main);
    assert_eq!(l["total"], 1, "{l}");
    let rows = l["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{l}");
    assert_eq!(rows[0]["problems"], json!([]), "{l}");
    let on: Vec<&str> = [rows[0]["branch"].as_str().unwrap()]
        .into_iter()
        .chain(
            rows[0]["also_on"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str()),
        )
        .collect();
    assert_eq!(on.len(), 2, "{l}");
    assert!(
        on.contains(&"rx-node") && on.contains(&"rx-results/LAB-A"),
        "{l}"
    );

    // A different copy on the own branch, landing later, and another node's folder there.
    let hand = lab.root.path().join("hand");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            "-b",
            "rx-results/LAB-A",
            lab.origin.to_str().unwrap(),
            hand.to_str().unwrap(),
        ],
    );
    let md = hand.join("rx-results/BOTH_1/LAB-A/RX_RESULT.md");
    let mut text = std::fs::read_to_string(&md).unwrap();
    text.push_str("\nA note added later.\n");
    std::fs::write(&md, text).unwrap();
    let foreign = hand.join("rx-results/BOTH_1/LAB-Z");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("RX_RESULT.md"), "# BOTH_1\n").unwrap();
    git(&hand, &["add", "-A"]);
    // One second later, so that the copies' landing times differ.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    git(&hand, &["commit", "-q", "-m", "changed by hand"]);
    git(&hand, &["push", "-q", "origin", "rx-results/LAB-A"]);
    let l = fleet_listing(&lab.main);
    let rows = l["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "the foreign folder is never listed: {l}");
    assert_eq!(rows[0]["branch"], "rx-results/LAB-A", "the later copy: {l}");
    let problems = rows[0]["problems"].to_string();
    assert!(
        problems.contains("conflict: rx-results/BOTH_1/LAB-A on rx-node"),
        "{problems}"
    );
    let tree_problems = l["problems"].to_string();
    assert!(
        tree_problems.contains("rx-results/LAB-A holds rx-results/BOTH_1/LAB-Z/"),
        "{tree_problems}"
    );
    // show takes the later copy and names the conflict.
    let out = rxnode(&lab.main, &["results", "show", "BOTH_1"], "");
    expect_exit!(out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("conflict: rx-results/BOTH_1/LAB-A differs between")
            && err.contains("on rx-results/LAB-A, is taken"),
        "{}",
        show(&out)
    );
}

/// A whole STATUS.json for `node` at heartbeat `time`.
fn status_json(node: &str, time: &str) -> Value {
    json!({"schema_version": 1, "node": node, "rxnode_version": "0",
        "time": time, "publish_every_s": 30.0, "watcher": "running", "last_poll": null,
        "queue": {"pending_approval": 0, "deferred": 0, "approved": 0, "pending": [], "running": null},
        "refusals": [], "radios": []})
}

/// A STATUS.json commit for `node` at heartbeat `time`, force-pushed to its status branch by hand.
fn push_status(lab: &Lab, hand: &Path, node: &str, time: &str) {
    push_status_value(lab, hand, node, &status_json(node, time));
}

/// `status` as STATUS.json of `node`, force-pushed to its status branch by hand.
fn push_status_value(lab: &Lab, hand: &Path, node: &str, status: &Value) {
    let f = hand.join("STATUS.json");
    std::fs::write(&f, status.to_string()).unwrap();
    let blob = git(hand, &["hash-object", "-w", f.to_str().unwrap()]);
    let out = run_fed(
        Command::new("git").current_dir(hand).args(["mktree"]),
        format!("100644 blob {blob}\tSTATUS.json\n").as_bytes(),
    );
    let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let commit = git(
        hand,
        &["commit-tree", &tree, "-m", &format!("status of {node}")],
    );
    git(
        hand,
        &[
            "push",
            "-q",
            "-f",
            lab.origin.to_str().unwrap(),
            &format!("{commit}:refs/heads/rx-status/{node}"),
        ],
    );
}

/// A node's own results branch force-pushed to another history, and a status
/// put back to an older heartbeat, are named on that node by `results nodes`
/// and on its rows by `results` — at this run and every later one — never
/// silently trusted.
#[test]
fn a_node_branch_rewritten_by_someone_else_is_named_never_silently_trusted() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    set_own(&a);
    set_own(&b);
    for id in ["REWR_1", "REWR_2"] {
        lab.post(id, &[]);
        done(&a, id);
        expect_exit!(publish(&a, id), 0);
    }
    done(&b, "REWR_2");
    expect_exit!(publish(&b, "REWR_2"), 0);
    let hand = lab.root.path().join("hand");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            lab.origin.to_str().unwrap(),
            hand.to_str().unwrap(),
        ],
    );
    push_status(&lab, &hand, "LAB-A", "2026-12-01T10:00:00.000Z");
    // The main PC sees everything once: nothing to name.
    let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
    expect_exit!(out, 0);
    let v = json_of(&out);
    for n in v["nodes"].as_array().unwrap() {
        assert_eq!(n["rewritten"], json!({}), "{n}");
    }
    assert_eq!(
        fleet_listing(&lab.main)["results"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Someone rewrites LAB-A's branch (its last result dropped) and puts an older status back.
    git(&hand, &["fetch", "-q", "origin", "rx-results/LAB-A"]);
    git(
        &hand,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            "FETCH_HEAD~1:refs/heads/rx-results/LAB-A",
        ],
    );
    push_status(&lab, &hand, "LAB-A", "2026-11-30T10:00:00.000Z");
    for run in 0..2 {
        let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
        expect_exit!(out, 0);
        let v = json_of(&out);
        let nodes = v["nodes"].as_array().unwrap();
        let node = |name: &str| {
            nodes
                .iter()
                .find(|n| n["node"] == name)
                .cloned()
                .unwrap_or_default()
        };
        let na = node("LAB-A");
        let rew = na["rewritten"].as_object().cloned().unwrap_or_default();
        assert!(
            rew.get("rx-results/LAB-A")
                .and_then(|w| w.as_str())
                .is_some_and(|w| w.contains("is not in the history of its new tip")),
            "run {run}: {na}"
        );
        assert!(
            rew.get("rx-status/LAB-A")
                .and_then(|w| w.as_str())
                .is_some_and(|w| w.contains("heartbeat went back")),
            "run {run}: {na}"
        );
        assert!(
            na["problems"].to_string().contains("not to be trusted"),
            "run {run}: {na}"
        );
        assert_eq!(node("LAB-B")["rewritten"], json!({}), "run {run}");
        let l = fleet_listing(&lab.main);
        for r in l["results"].as_array().unwrap() {
            let flagged = r["problems"].to_string().contains("rewritten");
            assert_eq!(flagged, r["node"] == "LAB-A", "run {run}: {r}");
        }
    }
    let out = rxnode(&lab.main, &["results", "nodes"], "");
    let text = stdout(&out);
    assert!(
        text.contains("rx-results/LAB-A was rewritten"),
        "{}",
        show(&out)
    );
}

/// A hostile node's status is read into the type the node writes: fields the
/// type does not know are ignored (never shown), a field of the wrong type
/// refuses the status with a problem naming the field, safely shown; neither
/// stops `results nodes`.
#[test]
fn a_status_with_odd_fields_is_read_by_its_type_or_refused_naming_the_field() {
    let lab = Lab::new();
    let hand = lab.root.path().join("hand");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            lab.origin.to_str().unwrap(),
            hand.to_str().unwrap(),
        ],
    );
    let now = "2026-12-01T10:00:00.000Z";
    let mut odd = status_json("ODD-A", now);
    odd["injected"] = json!("\u{1b}[2Jx");
    odd["radios"] = json!([{"device": "driver=rxsim,serial=1", "health": "GOOD",
        "last_self_test": null, "extra": "\u{1b}[31mred"}]);
    push_status_value(&lab, &hand, "ODD-A", &odd);
    let mut bad = status_json("ODD-B", now);
    bad["queue"]["pending_approval"] = json!("many\u{1b}[2J");
    push_status_value(&lab, &hand, "ODD-B", &bad);
    let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
    expect_exit!(out, 0);
    let v = json_of(&out);
    let node = |name: &str| -> Value {
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["node"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} listed: {v}"))
    };
    let a = node("ODD-A");
    assert_eq!(
        a["radios"],
        json!([{"device": "driver=rxsim,serial=1", "health": "GOOD", "last_self_test": null}]),
        "{a}"
    );
    assert_eq!(a["problems"], json!([]), "{a}");
    let b = node("ODD-B");
    let problems = b["problems"].to_string();
    assert!(
        problems.contains("does not match `rxnode schema status` at queue.pending_approval"),
        "{b}"
    );
    assert!(!out.stdout.contains(&0x1b), "{}", show(&out));
}

/// On a node's own branch the server's per-ref report is the check that a push
/// landed: a `pre-receive` hook that refuses `rx-results/<NODE>` makes the
/// publication fail (exit 1, named), recorded as not pushed, with nothing on the
/// origin — never reported as landed. Once the hook is gone, the same result
/// lands in one attempt, the origin's branch at the commit reported.
#[cfg(unix)]
#[test]
fn a_push_the_server_refuses_on_the_own_layout_is_reported_as_not_landed() {
    use std::os::unix::fs::PermissionsExt;
    let lab = Lab::new();
    let daemon = start_daemon(lab.root.path())
        .expect("git daemon runs on loopback (Debian's `git` package carries it)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let a = lab.node_from("OWN-RX1", &url);
    set_own(&a);
    lab.post("REFUSED_1", &[]);
    done(&a, "REFUSED_1");
    let hook = lab.origin.join("hooks/pre-receive");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in refs/heads/rx-results/*)\n    echo \"$ref is frozen by the lab\" >&2; exit 1;;\n  esac\ndone\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();

    let out = rxnode(
        &a,
        &["--json", "publish", "REFUSED_1", "--push"],
        "PUBLISH REFUSED_1\n",
    );
    expect_exit!(out, 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rejected") && err.contains("refs/heads/rx-results/OWN-RX1"),
        "{}",
        show(&out)
    );
    assert!(
        git_out(
            &lab.origin,
            &[
                "rev-parse",
                "--verify",
                "-q",
                "refs/heads/rx-results/OWN-RX1"
            ]
        )
        .status
        .code()
            != Some(0),
        "the refused branch exists on the origin"
    );
    let local = git(&a, &["rev-parse", "refs/heads/rx-results/OWN-RX1"]);
    let st: Value =
        serde_json::from_slice(&std::fs::read(a.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["REFUSED_1"]["pushed"], false, "{st}");
    assert_eq!(
        st["published"]["REFUSED_1"]["commit"],
        local.as_str(),
        "{st}"
    );
    let ev = crate::util::ledger_events(&a);
    assert!(ev.iter().any(|e| e["event"] == "publish_failed"), "{ev:?}");
    assert!(!ev.iter().any(|e| e["event"] == "pushed"), "{ev:?}");
    assert!(
        git_out(
            &a,
            &[
                "rev-parse",
                "--verify",
                "-q",
                "refs/remotes/origin/rx-results/OWN-RX1"
            ]
        )
        .status
        .code()
            != Some(0),
        "the remote-tracking ref claims a push that was refused"
    );

    // The hook gone, the same result lands in one attempt, where it says.
    std::fs::remove_file(&hook).unwrap();
    let out = rxnode(
        &a,
        &["--json", "publish", "REFUSED_1", "--push"],
        "PUBLISH REFUSED_1\n",
    );
    expect_exit!(out, 0);
    let v = json_of(&out);
    assert_eq!(v["push_attempts"], 1, "{v}");
    assert_eq!(v["ref"], "refs/heads/rx-results/OWN-RX1", "{v}");
    let on_origin = git(&lab.origin, &["rev-parse", "refs/heads/rx-results/OWN-RX1"]);
    assert_eq!(v["commit"], on_origin.as_str(), "{v}");
    assert_eq!(
        git(&a, &["rev-parse", "refs/remotes/origin/rx-results/OWN-RX1"]),
        on_origin
    );
    let files = git(
        &lab.origin,
        &["ls-tree", "-r", "--name-only", "rx-results/OWN-RX1"],
    );
    assert!(
        files.contains("rx-results/REFUSED_1/OWN-RX1/RX_RESULT.json"),
        "{files}"
    );
}
