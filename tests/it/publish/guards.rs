//! What is never pushed: another node's result, a hand-made commit, the watched branch, the checkout's absolute path, an unnamed host.
use super::*;

#[test]
fn a_result_already_on_the_remote_is_never_overwritten() {
    let fx = Fixture::new();
    let first = fx.checkout("rx1");
    let second = fx.checkout("rx2");
    // Results are per node, so "the same result" is the same ID from
    // the same node name (here a second checkout of node rx1).
    set_node_name(&second, "rx1");
    fx.outbox(&first, "RX_SAME", "RX_RESULT_ONLY");
    fx.outbox(&second, "RX_SAME", "RX_RESULT_ONLY");
    let out = publish(&first, "RX_SAME", true, Some("PUBLISH RX_SAME\n"));
    expect_exit!(out, 0);
    let tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&second, "RX_SAME", true, Some("PUBLISH RX_SAME\n"));
    expect_exit!(out, 3);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already exists"),
        "{}",
        show(&out)
    );
    assert_eq!(git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]), tip);
}

/// `rx-results/<ID>/<NODE>/` beside a folder that only letter case tells
/// apart (node `rx1` and `RX1`; task `RX_CASE` and `rx_case`) is one folder on
/// a case-insensitive file system: refused, naming both, nothing pushed.
#[test]
fn a_result_folder_differing_only_in_letter_case_is_refused() {
    for (id2, name2) in [("RX_CASE", "RX1"), ("rx_case", "rx2")] {
        let fx = Fixture::new();
        let first = fx.checkout("rx1");
        let second = fx.checkout("rx2");
        set_node_name(&second, name2);
        fx.outbox(&first, "RX_CASE", "RX_RESULT_ONLY");
        fx.outbox(&second, id2, "RX_RESULT_ONLY");
        let out = publish(&first, "RX_CASE", true, Some("PUBLISH RX_CASE\n"));
        expect_exit!(out, 0);
        let tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
        let out = publish(&second, id2, true, Some(&format!("PUBLISH {id2}\n")));
        expect_exit!(out, 3);
        let se = String::from_utf8_lossy(&out.stderr);
        assert!(
            se.contains("only in letter case")
                && se.contains(&format!("rx-results/{id2}/{name2}/"))
                && se.contains("rx-results/RX_CASE/"),
            "{}",
            show(&out)
        );
        assert_eq!(git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]), tip);
    }
}

/// A commit made by hand on the local rx-node (here an
/// operator note plus an IQ-like file) must never ride along with a push.
#[test]
fn a_hand_made_local_rx_node_commit_is_never_pushed() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_HAND_1", "RX_RESULT_ONLY");
    // Publish locally first (no push), then add a hand-made commit on rx-node.
    let out = publish(&co, "RX_HAND_1", false, Some("PUBLISH RX_HAND_1\n"));
    expect_exit!(out, 0);
    let wt = fx.root.path().join("hand");
    git(
        &co,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "rx-node"],
    );
    std::fs::write(wt.join("notes.txt"), "bench notes\n").unwrap();
    git(&wt, &["add", "notes.txt"]);
    git(
        &wt,
        &[
            "-c",
            "user.name=op",
            "-c",
            "user.email=op@x",
            "commit",
            "-q",
            "-m",
            "notes",
        ],
    );
    git(
        &co,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    let out = publish(&co, "RX_HAND_1", true, Some("PUBLISH RX_HAND_1\n"));
    expect_exit!(out, 3);
    assert!(show(&out).contains("notes.txt"), "{}", show(&out));
    assert!(
        git_try(
            &fx.origin,
            &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
        )
        .is_none(),
        "origin got rx-node"
    );
}

/// A linked worktree with rx-node checked out is refused
/// like the main one (its index and work tree would move under it).
#[test]
fn a_linked_worktree_on_rx_node_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_WT_1", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_WT_1", false, Some("PUBLISH RX_WT_1\n"));
    expect_exit!(out, 0);
    fx.outbox(&co, "RX_WT_2", "RX_RESULT_ONLY");
    let wt = fx.root.path().join("wt");
    git(
        &co,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "rx-node"],
    );
    let before = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&co, "RX_WT_2", false, Some("PUBLISH RX_WT_2\n"));
    expect_exit!(out, 3);
    assert!(show(&out).contains("worktree"), "{}", show(&out));
    assert_eq!(git(&co, &["rev-parse", "refs/heads/rx-node"]), before);
}

/// The checkout's own absolute path is refused in a
/// result — by the checkout-path check itself, not only because the fixed
/// patterns happen to name the temp folder's root (`/tmp`).
#[test]
fn the_checkouts_absolute_path_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let dir = fx.outbox(&co, "RX_ABS", "RX_RESULT_ONLY");
    let md = dir.join("RX_RESULT.md");
    let mut t = std::fs::read_to_string(&md).unwrap();
    let abs = co.canonicalize().unwrap();
    t.push_str(&format!("\nIQ kept in {}/.local/rx_iq\n", abs.display()));
    std::fs::write(&md, t).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_ABS", true, Some("PUBLISH RX_ABS\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "checkout path");
    assert!(show(&out).contains("absolute"), "{}", show(&out));
    assert!(
        show(&out).contains("RX_RESULT.md contains this checkout's absolute path"),
        "{}",
        show(&out)
    );
}

/// Publishing with the watched branch set to rx-node is refused
/// explicitly, before anything else is read.
#[test]
fn the_watched_branch_can_never_be_the_push_target() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_WATCHED", "RX_RESULT_ONLY");
    for branch in ["rx-node", "refs/heads/rx-node"] {
        let out = crate::util::rxnode_bin()
            .args(["--repo", co.to_str().unwrap(), "--branch", branch])
            .args(["publish", "RX_WATCHED", "--push"])
            .env_remove("RXNODE_REPO")
            .env_remove("RXNODE_REMOTE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        expect_exit!(out, 3, "{branch}");
        assert!(
            show(&out).contains("watched branch"),
            "{branch}: {}",
            show(&out)
        );
        assert!(git_try(
            &fx.origin,
            &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
        )
        .is_none());
    }
}

/// rx1 publishes X locally, rx2 publishes its
/// own X and pushes, then rx1 runs `publish Y --push`. rx1's X must not be
/// dropped silently nor recorded as pushed: the push is refused naming X.
#[test]
fn a_local_only_result_whose_id_another_node_pushed_is_refused_not_dropped() {
    let fx = Fixture::new();
    let rx1 = fx.checkout("rx1");
    let rx2 = fx.checkout("rx2");
    // A clash needs the same ID from the same node name (results are
    // per node): the second checkout is a re-clone of node rx1.
    set_node_name(&rx2, "rx1");
    fx.outbox(&rx1, "RX_DUP_X", "RX_RESULT_ONLY");
    fx.outbox(&rx1, "RX_DUP_Y", "RX_RESULT_ONLY");
    let theirs = fx.outbox(&rx2, "RX_DUP_X", "RX_RESULT_ONLY");
    // rx2's X is a different result (its own operator note).
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(theirs.join("RX_RESULT.md"))
        .unwrap();
    f.write_all(b"\nrx2 checked the cabling too.\n").unwrap();
    drop(f);

    let out = publish(&rx1, "RX_DUP_X", false, Some("PUBLISH RX_DUP_X\n"));
    expect_exit!(out, 0);
    let local_before = git(&rx1, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&rx2, "RX_DUP_X", true, Some("PUBLISH RX_DUP_X\n"));
    expect_exit!(out, 0);
    let origin_tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    let state_before = std::fs::read(rx1.join(".local/rx_agent_state.json")).unwrap();
    let refused_before = refused_count(&rx1);

    let out = publish(&rx1, "RX_DUP_Y", true, Some("PUBLISH RX_DUP_Y\n"));
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("RX_DUP_X"), "the conflict is not named: {err}");
    assert!(err.contains("differs"), "{err}");
    // Nothing moved: origin keeps rx2's X, rx1's X stays on its local rx-node.
    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]),
        origin_tip
    );
    assert_eq!(
        git(&rx1, &["rev-parse", "refs/heads/rx-node"]),
        local_before
    );
    assert_eq!(
        std::fs::read(rx1.join(".local/rx_agent_state.json")).unwrap(),
        state_before,
        "the state changed"
    );
    let st: Value = serde_json::from_slice(&state_before).unwrap();
    assert_eq!(st["published"]["RX_DUP_X"]["pushed"], false);
    assert!(st["published"].get("RX_DUP_Y").is_none());
    let ev = ledger_events(&rx1);
    assert_eq!(refused_count(&rx1), refused_before + 1, "{ev:?}");
    assert!(!ev.iter().any(|e| e["event"] == "pushed"), "{ev:?}");
}

/// The push gate applies the checkout-path
/// check too: a hand-made `rx-results/<ID>/RX_RESULT.md` on the local rx-node
/// naming the checkout's absolute path is refused at push.
#[test]
fn the_checkouts_absolute_path_in_an_outgoing_commit_is_refused_at_push() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_GATE_1", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_GATE_1", false, Some("PUBLISH RX_GATE_1\n"));
    expect_exit!(out, 0);
    let wt = fx.root.path().join("hand");
    git(
        &co,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "rx-node"],
    );
    let abs = co.canonicalize().unwrap();
    let dir = wt.join("rx-results/RX_GATE_HAND");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("RX_RESULT.md"),
        format!(
            "# RX_GATE_HAND\n\nIQ kept in {}/.local/rx_iq\n",
            abs.display()
        ),
    )
    .unwrap();
    git(&wt, &["add", "rx-results"]);
    git(
        &wt,
        &[
            "-c",
            "user.name=op",
            "-c",
            "user.email=op@x",
            "commit",
            "-q",
            "-m",
            "hand-made result",
        ],
    );
    git(
        &co,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    let out = publish(&co, "RX_GATE_1", true, Some("PUBLISH RX_GATE_1\n"));
    expect_exit!(out, 3);
    assert!(
        show(&out).contains(
            "rx-results/RX_GATE_HAND/RX_RESULT.md contains this checkout's absolute path"
        ),
        "{}",
        show(&out)
    );
    assert!(
        git_try(
            &fx.origin,
            &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
        )
        .is_none(),
        "origin got rx-node"
    );
}

/// `rxnode publish --push` with no global or system Git identity (a fresh
/// HOME), so the fallback author is used.
fn publish_without_git_identity(root: &Path, checkout: &Path, id: &str) -> Output {
    let home = root.join(format!("home-{id}"));
    std::fs::create_dir_all(&home).unwrap();
    run_fed(
        publish_cmd(checkout, id, true)
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .env_remove("GIT_COMMITTER_NAME")
            .env_remove("GIT_COMMITTER_EMAIL")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1"),
        format!("PUBLISH {id}\n").as_bytes(),
    )
}

/// With `node.hostname` null (the default,
/// docs/decisions.md) the host name reaches neither LOG_META.json, nor the
/// commit message, nor the author; a result that names its host publishes
/// exactly that name.
#[test]
fn the_host_name_is_published_only_when_the_result_names_it() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let host = Command::new("uname")
        .arg("-n")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    fx.outbox(&co, "RX_HOST_NULL", "RX_RESULT_ONLY");
    let out = publish_without_git_identity(fx.root.path(), &co, "RX_HOST_NULL");
    expect_exit!(out, 0);
    let meta: Value = serde_json::from_str(&git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_HOST_NULL/rx1/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["node"], Value::Null, "{meta}");
    let msg = git(&fx.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(!msg.lines().any(|l| l.starts_with("Node:")), "{msg}");
    let who = git(
        &fx.origin,
        &["log", "-1", "--format=%an <%ae>%n%cn <%ce>", "rx-node"],
    );
    assert_eq!(
        who,
        "rxnode <rxnode@localhost.invalid>\nrxnode <rxnode@localhost.invalid>"
    );
    if !host.is_empty() {
        assert!(!msg.contains(&format!("Node: {host}")), "{msg}");
        assert!(!who.contains(&format!("@{host}")), "{who}");
    }

    // A result that names its host publishes that name, and only it.
    let dir = fx.outbox(&co, "RX_HOST_SET", "RX_RESULT_ONLY");
    let jp = dir.join("RX_RESULT.json");
    let old_json = std::fs::read_to_string(&jp).unwrap();
    let mut v: Value = serde_json::from_str(&old_json).unwrap();
    v["node"]["hostname"] = json!("bench-rx-7");
    let new_json = serde_json::to_string_pretty(&v).unwrap();
    std::fs::write(&jp, &new_json).unwrap();
    let mp = dir.join("RX_RESULT.md");
    let md = std::fs::read_to_string(&mp).unwrap().replace(
        &hex::encode(Sha256::digest(old_json.as_bytes())),
        &hex::encode(Sha256::digest(new_json.as_bytes())),
    );
    std::fs::write(&mp, md).unwrap();
    let out = publish_without_git_identity(fx.root.path(), &co, "RX_HOST_SET");
    expect_exit!(out, 0);
    let meta: Value = serde_json::from_str(&git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_HOST_SET/rx1/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["node"], "bench-rx-7", "{meta}");
    let msg = git(&fx.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.lines().any(|l| l == "Node: bench-rx-7"), "{msg}");
}
