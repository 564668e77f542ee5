//! A publication stopped half-way is resumed by a re-run, and an `rx-node`
//! entry that is not a plain folder or file is refused by name.
use super::*;

/// Publish killed after the local `rx-node` moved and before the state
/// recorded it: the re-run finds its own commit (same node, task and
/// content) and pushes it instead of refusing it as another laptop's.
#[test]
fn publish_killed_between_the_ref_update_and_the_state_write_is_resumed_by_a_rerun() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_KILL", "RX_RESULT_ONLY");
    // Hold the state lock: publish stops at its state write, which comes right
    // after it moved the local rx-node; there it is killed.
    let lock_path = co.join(".local/rx_agent_state.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    lock.lock().unwrap();
    let mut child = spawn_publish(&co, "RX_KILL", true);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"PUBLISH RX_KILL\n")
        .unwrap();
    let started = std::time::Instant::now();
    while git_try(&co, &["rev-parse", "-q", "--verify", "refs/heads/rx-node"]).is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the local rx-node never moved"
        );
        assert!(child.try_wait().unwrap().is_none(), "publish ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "publish did not wait at the state write"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(lock);
    let local = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    let state: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert!(state["published"]["RX_KILL"].is_null(), "{state}");
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "-q", "--verify", "refs/heads/rx-node"]
    )
    .is_none());

    let out = publish(&co, "RX_KILL", true, Some("PUBLISH RX_KILL\n"));
    expect_exit!(out, 0);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stopped before recording it"),
        "{}",
        show(&out)
    );
    assert_eq!(git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]), local);
    let files = git(
        &fx.origin,
        &["ls-tree", "-r", "--name-only", "refs/heads/rx-node"],
    );
    assert!(
        files.contains("rx-results/RX_KILL/rx1/RX_RESULT.json"),
        "{files}"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(state["published"]["RX_KILL"]["pushed"], true, "{state}");
    // The same result is not published twice.
    let out = publish(&co, "RX_KILL", true, Some("PUBLISH RX_KILL\n"));
    expect_exit!(out, 3);
}

/// A peer's `rx-node` whose `rx-results` (or a folder below it) is a
/// submodule's gitlink or a symbolic link: publish refuses with exit 3 naming
/// the path, not "object not found" with exit 1.
#[test]
fn a_gitlink_or_symlink_on_the_rx_results_path_is_refused_naming_it() {
    for (path, mode) in [
        ("rx-results", "160000"),
        ("rx-results/RX_GL", "160000"),
        ("rx-results/RX_GL/rx1", "120000"),
    ] {
        let fx = Fixture::new();
        let peer = fx.root.path().join("peer");
        git(fx.root.path(), &["init", "-q", peer.to_str().unwrap()]);
        std::fs::write(peer.join("x"), "x\n").unwrap();
        git(&peer, &["add", "x"]);
        git(&peer, &["commit", "-q", "-m", "x"]);
        let target = if mode == "160000" {
            git(&peer, &["rev-parse", "HEAD"])
        } else {
            git(&peer, &["hash-object", "-w", "--stdin"]) // empty link target
        };
        git(
            &peer,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("{mode},{target},{path}"),
            ],
        );
        git(&peer, &["commit", "-q", "-m", "planted"]);
        git(
            &peer,
            &[
                "push",
                "-q",
                &file_url(&fx.origin),
                "HEAD:refs/heads/rx-node",
            ],
        );
        let co = fx.checkout("rx1");
        fx.outbox(&co, "RX_GL", "RX_RESULT_ONLY");
        let out = publish(&co, "RX_GL", true, Some("PUBLISH RX_GL\n"));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        expect_exit!(out, 3, "{path}");
        assert!(err.contains(&format!("{path} on rx-node")), "{path}: {err}");
        assert!(!err.contains("object not found"), "{err}");
    }
}

/// A peer pushes `rx-node` holding a commit of 8 MiB (a few KiB of zlib): the
/// fetch before publishing is refused naming it, nothing is read or committed on
/// it, and the remote-tracking ref is left as it was.
#[test]
fn an_oversized_commit_on_rx_node_is_refused_unread() {
    let fx = Fixture::new();
    let bomb = crate::util::push_oversized_commit(
        fx.root.path(),
        &file_url(&fx.origin),
        "refs/heads/rx-node",
    );
    let co = fx.checkout("rx1");
    let tracked = git_out(
        &co,
        &["rev-parse", "--verify", "-q", "refs/remotes/origin/rx-node"],
    );
    let tracked = String::from_utf8_lossy(&tracked.stdout).into_owned();
    fx.outbox(&co, "RX_BIG", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_BIG", true, Some("PUBLISH RX_BIG\n"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    expect_exit!(out, 3);
    assert!(
        err.contains(&format!("commit {bomb} is 838")) && err.contains("over the 2097152 bytes"),
        "{err}"
    );
    // Nothing committed on it; the remote-tracking ref as the clone (plain Git) left it.
    let o = git_out(&co, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]);
    assert!(!o.status.success(), "a local rx-node was made on it");
    let o = git_out(
        &co,
        &["rev-parse", "--verify", "-q", "refs/remotes/origin/rx-node"],
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), tracked.trim());
    assert_eq!(git(&fx.origin, &["rev-parse", "rx-node"]), bomb);
}
