//! `TARGET_NODES`: a task for some nodes of a fleet, written by `task new --node`.
use super::*;
use crate::util::{ledger_events, PROMPT};

fn events(node: &Path, event: &str, id: &str) -> usize {
    ledger_events(node)
        .iter()
        .filter(|e| e["event"] == event && e["task_id"] == id)
        .count()
}

fn task_status(node: &Path, id: &str) -> String {
    let st: Value =
        serde_json::from_slice(&std::fs::read(node.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    st["tasks"][id]["status"].as_str().unwrap_or("").to_owned()
}

/// Two nodes on one origin and a task `task new --node LAB-RX1` wrote: LAB-RX2
/// records it as not for this node (ledger and state, once), never prompts it and
/// `run` refuses it (exit 3); LAB-RX1 is prompted, and its `run` refuses too once the
/// node is renamed to a name the task does not list.
#[test]
fn a_task_for_one_node_is_offered_there_only_and_never_runs_elsewhere() {
    let lab = Lab::new();
    let rx1 = lab.node("LAB-RX1");
    let rx2 = lab.node("LAB-RX2");
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    let id = "T_FOR_RX1";
    lab.post(id, &["--rx", "--plan", &plan, "--node", "LAB-RX1"]);
    let text = std::fs::read_to_string(lab.main.join(TASK_PATH)).unwrap();
    assert!(text.contains("\nTARGET_NODES = LAB-RX1\n"), "{text}");

    // LAB-RX2: never prompted, even with an answer waiting on stdin.
    for round in 0..2 {
        let out = rxnode(&rx2, &["watch", "--once", "--interval", "0.2"], "a\n");
        let so = stdout(&out);
        expect_exit!(out, 0);
        assert!(
            !so.contains(PROMPT),
            "round {round}: prompted on LAB-RX2: {so}"
        );
        if round == 0 {
            assert!(
                so.contains(&format!(
                    "task {id}: not for this node: TARGET_NODES = LAB-RX1; this node is LAB-RX2; not prompted"
                )),
                "{so}"
            );
        }
    }
    assert_eq!(events(&rx2, "not_for_this_node", id), 1, "recorded once");
    assert_eq!(events(&rx2, "approved", id), 0);
    assert_eq!(task_status(&rx2, id), "not_for_this_node");
    let out = rxnode(&rx2, &["--sim", "run", id], "");
    expect_exit!(out, 3);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not for this node"),
        "{}",
        show(&out)
    );
    assert!(!rx2.join(".local/rx_agent_outbox").join(id).exists());
    let out = rxnode(&rx2, &["status"], "");
    assert!(
        stdout(&out).contains(&format!("not for us: {id}")),
        "{}",
        show(&out)
    );

    // LAB-RX1: prompted, with the node list shown.
    let out = rxnode(&rx1, &["watch", "--once", "--interval", "0.2"], "a\n");
    let so = stdout(&out);
    expect_exit!(out, 0);
    assert!(so.contains(PROMPT), "{so}");
    assert!(so.contains("  Nodes:   LAB-RX1 (TARGET_NODES"), "{so}");
    assert_eq!(task_status(&rx1, id), "approved");
    // Renamed after the approval: the run refuses, before any radio is opened.
    let out = rxnode(&rx1, &["node", "set-name", "LAB-RX9"], "");
    expect_exit!(out, 0);
    let out = rxnode(&rx1, &["--sim", "run", id], "");
    expect_exit!(out, 3);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("not for this node: TARGET_NODES = LAB-RX1; this node is LAB-RX9"),
        "{}",
        show(&out)
    );
    assert_eq!(events(&rx1, "run_started", id), 0);
    let out = rxnode(&rx1, &["node", "set-name", "LAB-RX1"], "");
    expect_exit!(out, 0);
    let out = rxnode(&rx1, &["--sim", "run", id], "");
    expect_exit!(out, 0);
}

/// `task new --node` is repeatable, writes the names in order, and refuses a bad or
/// repeated name naming it (exit 2); the watcher's validator refuses a repeated or
/// empty entry naming the line.
#[test]
fn task_new_node_flags_write_target_nodes_and_bad_names_are_refused() {
    let lab = Lab::new();
    let out = lab.post("T_TWO", &["--node", "LAB-RX1", "--node", "LAB-RX3"]);
    let v = stdout(&out);
    let text = std::fs::read_to_string(lab.main.join(TASK_PATH)).unwrap();
    assert!(
        text.contains("\nTARGET_NODES = LAB-RX1, LAB-RX3\n"),
        "{v}\n{text}"
    );
    for (args, needle) in [
        (
            &["--node", "LAB RX1"][..],
            "--node: node name \"LAB RX1\" contains ' '",
        ),
        (
            &["--node", "A", "--node", "A"][..],
            "--node A is given twice",
        ),
    ] {
        let mut a = vec!["task", "new", "--id", "T_BAD", "--title", "t", "--force"];
        a.extend_from_slice(args);
        let out = rxnode(&lab.main, &a, "");
        expect_exit!(out, 2);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{}",
            show(&out)
        );
    }
    // A hand-written header with a repeated and an empty entry.
    let bad = text.replace(
        "TARGET_NODES = LAB-RX1, LAB-RX3",
        "TARGET_NODES = LAB-RX1, , LAB-RX1",
    );
    let f = lab.root.path().join("bad.md");
    std::fs::write(&f, bad).unwrap();
    let out = rxnode(&lab.main, &["validate", f.to_str().unwrap()], "");
    expect_exit!(out, 2);
    let se = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .position(|l| l.starts_with("TARGET_NODES"))
        .unwrap()
        + 1;
    for needle in [
        format!(":{line}: TARGET_NODES: entry 2 is empty"),
        format!(":{line}: TARGET_NODES: node LAB-RX1 is listed twice"),
    ] {
        assert!(se.contains(&needle), "no {needle:?} in {se}");
    }
}

/// `state rebuild` keeps what the node decided about tasks for other nodes (they stay
/// "not for this node", never "unknown") and the last poll, and refuses to run
/// beside a live watcher, naming it and the fix.
#[test]
fn state_rebuild_keeps_not_for_this_node_and_the_last_poll_and_waits_for_the_watcher() {
    let lab = Lab::new();
    let rx2 = lab.node("LAB-RX2");
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    let id = "T_REBUILD_RX1";
    lab.post(id, &["--rx", "--plan", &plan, "--node", "LAB-RX1"]);
    let out = rxnode(&rx2, &["watch", "--once", "--interval", "0.2"], "");
    expect_exit!(out, 0);
    assert_eq!(task_status(&rx2, id), "not_for_this_node");
    let state_path = rx2.join(".local/rx_agent_state.json");
    let before: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert!(before["last_poll"].is_object(), "{before}");
    // A live watcher holds the node: rebuild refuses, naming it, and changes nothing.
    let mut w = rxnode_cmd()
        .arg("--repo")
        .arg(&rx2)
        .args(["watch", "--interval", "30"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = rx2.join(".local/rxnode.lock");
    let t0 = Instant::now();
    let polled = |v: &Value| v["last_poll"]["at"] != before["last_poll"]["at"];
    while !(lock.exists()
        && std::fs::read(&state_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| polled(&v)))
        && t0.elapsed().as_secs() < 20
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Its first poll is done (the next is 30 s away): now damage the state.
    let before: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    // Plant an approval the ledger never recorded, so that the state contradicts
    // the evidence and must be rebuilt; and forget the task.
    let mut damaged = before.clone();
    damaged["tasks"] = json!({});
    damaged["approvals"]["PLANTED_1"] = json!({
        "task_id": "PLANTED_1", "task_sha256": "a".repeat(64),
        "commit": "c".repeat(40), "at": "2026-12-01T00:00:00+00:00"
    });
    std::fs::write(&state_path, serde_json::to_vec(&damaged).unwrap()).unwrap();

    let out = rxnode(&rx2, &["state", "rebuild"], "");
    let _ = w.kill();
    let _ = w.wait();
    expect_exit!(out, 3);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        se.contains("state rebuild needs the node idle") && se.contains("stop that watcher"),
        "{se}"
    );

    let out = rxnode(&rx2, &["state", "rebuild"], "");
    expect_exit!(out, 0);
    assert_eq!(task_status(&rx2, id), "not_for_this_node", "{}", show(&out));
    let after: Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    assert_eq!(after["last_poll"], before["last_poll"]);
    assert!(after["approvals"].get("PLANTED_1").is_none(), "{after}");
    assert!(after["tasks"][id]["reason"]
        .as_str()
        .unwrap_or("")
        .contains("TARGET_NODES = LAB-RX1"));
    let out = rxnode(&rx2, &["status"], "");
    assert!(
        stdout(&out).contains(&format!("not for us: {id}")),
        "{}",
        show(&out)
    );
}
