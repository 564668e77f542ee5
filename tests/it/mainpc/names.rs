//! Node names: every published result is under its node's name, and a node without one does not publish.
use super::*;

// ------------------------------------------------------------------ node names

#[test]
fn help_lists_the_main_pc_commands() {
    let d = tempfile::tempdir().unwrap();
    let help = stdout(&rxnode(d.path(), &["--help"], ""));
    for sub in ["node", "results", "task", "schema"] {
        assert!(help.contains(sub), "--help lacks {sub}: {help}");
    }
    let r = stdout(&rxnode(d.path(), &["results", "--help"], ""));
    for f in ["--node", "--status", "--since", "show", "verify", "nodes"] {
        assert!(r.contains(f), "results --help lacks {f}: {r}");
    }
    let t = stdout(&rxnode(d.path(), &["task", "new", "--help"], ""));
    for f in [
        "--id",
        "--title",
        "--hardware",
        "--rx",
        "--tx",
        "--risk",
        "--plan",
        "--out",
        "--force",
    ] {
        assert!(t.contains(f), "task new --help lacks {f}: {t}");
    }
}

/// A laptop never pushes a result under another node's name, even from a
/// hand-made local rx-node commit.
#[test]
fn a_node_never_pushes_a_result_under_another_nodes_name() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("IMPOSTOR_1", &[]);
    approve(&a);
    assert_eq!(
        rxnode(&a, &["publish", "IMPOSTOR_1"], "PUBLISH IMPOSTOR_1\n")
            .status
            .code(),
        Some(0)
    );
    // A hand-made commit on the local rx-node: a copy of the result under LAB-B.
    let wt = lab.root.path().join("hand-wt");
    git(
        &a,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "rx-node"],
    );
    let src = wt.join("rx-results/IMPOSTOR_1/LAB-A");
    let dst = wt.join("rx-results/IMPOSTOR_1/LAB-B");
    std::fs::create_dir_all(&dst).unwrap();
    for f in ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    git(&wt, &["add", "-A"]);
    git(&wt, &["commit", "-q", "-m", "speak for LAB-B"]);
    git(&a, &["worktree", "remove", "--force", wt.to_str().unwrap()]);
    let out = publish(&a, "IMPOSTOR_1");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LAB-B") && err.contains("own results"),
        "{err}"
    );
    assert!(git_out(
        &lab.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .stdout
    .is_empty());
}

#[test]
fn node_names_are_checked_and_publishing_without_one_is_refused() {
    let lab = Lab::new();
    let rx = lab.root.path().join("rx-unnamed");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            lab.origin.to_str().unwrap(),
            rx.to_str().unwrap(),
        ],
    );
    for bad in ["LAB RX", "lab/rx", "", "x".repeat(33).as_str(), "ünï"] {
        let out = rxnode(&rx, &["node", "set-name", bad], "");
        expect_exit!(out, 2, "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("node name"),
            "{}",
            show(&out)
        );
    }
    assert!(!rx.join(".local/rxnode-node.json").exists());
    let out = rxnode(&rx, &["--json", "node", "show"], "");
    expect_exit!(out, 0);
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["name"],
        Value::Null
    );

    // A task approved and "run" (manual) on the unnamed node: publishing is refused with the fix.
    lab.post("NAME_T1", &[]);
    approve(&rx);
    let out = publish(&rx, "NAME_T1");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rxnode node set-name"), "{err}");
    assert!(git_out(
        &lab.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .stdout
    .is_empty());
    assert!(
        git_out(&rx, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"])
            .stdout
            .is_empty()
    );
    named_later_and_renamed_results(&lab, &rx);
}

/// A result written unnamed is published under the name set later; one written under another name is not renamed; a damaged node file is an error.
fn named_later_and_renamed_results(lab: &Lab, rx: &Path) {
    // Named now — but the result was written unnamed: it is published under the name
    // (path, LOG_META, commit message) and its JSON stays as run.
    let out = rxnode(rx, &["node", "set-name", "LAB-RX2"], "");
    expect_exit!(out, 0);
    let out = rxnode(rx, &["--json", "node", "show"], "");
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["name"],
        "LAB-RX2"
    );
    assert_eq!(
        git(rx, &["status", "--porcelain"]),
        "",
        ".local/ must stay ignored"
    );
    let out = publish(rx, "NAME_T1");
    expect_exit!(out, 0);
    let meta: Value = serde_json::from_str(&git(
        &lab.origin,
        &["show", "rx-node:rx-results/NAME_T1/LAB-RX2/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["node_name"], "LAB-RX2");
    let msg = git(&lab.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.lines().any(|l| l == "Node-Name: LAB-RX2"), "{msg}");
    assert!(
        msg.starts_with("rx-results: NAME_T1 (NOT RUN) from LAB-RX2"),
        "{msg}"
    );

    // A result written by this node under another name is not published under a new one.
    lab.post("NAME_T2", &[]);
    approve(rx);
    let json = rx.join(".local/rx_agent_outbox/NAME_T2/RX_RESULT.json");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        v["node"]["name"], "LAB-RX2",
        "the result carries the node name"
    );
    let out = rxnode(rx, &["node", "set-name", "LAB-RX3"], "");
    expect_exit!(out, 0);
    let out = publish(rx, "NAME_T2");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("LAB-RX2") && err.contains("LAB-RX3"), "{err}");

    // A damaged node file is an error, never "no name".
    std::fs::write(rx.join(".local/rxnode-node.json"), "{\"name\": 5}").unwrap();
    let out = rxnode(rx, &["node", "show"], "");
    expect_exit!(out, 3);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rxnode-node.json"),
        "{}",
        show(&out)
    );
}
