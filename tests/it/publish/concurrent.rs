//! Several checkouts publishing at once, locally and over the git protocol; pushing later.
use super::*;

#[test]
fn four_checkouts_publishing_at_once_all_land_linearly() {
    let fx = Fixture::new();
    let ids = ["RX_NODE_A", "RX_NODE_B", "RX_NODE_C", "RX_NODE_D"];
    let cos: Vec<PathBuf> = ids
        .iter()
        .map(|id| {
            let co = fx.checkout(&id.to_lowercase());
            fx.outbox(&co, id, "RX_RESULT_ONLY");
            co
        })
        .collect();
    let vd_before = git(&fx.origin, &["rev-parse", "refs/heads/video-development"]);
    let start = std::time::Instant::now();
    // Start all four, then confirm all four at once.
    let mut children: Vec<_> = cos
        .iter()
        .zip(ids)
        .map(|(co, id)| (id, spawn_publish(co, id, true)))
        .collect();
    for (id, c) in &mut children {
        let mut stdin = c.stdin.take().expect("stdin");
        stdin
            .write_all(format!("PUBLISH {id}\n").as_bytes())
            .unwrap();
    }
    let mut attempts = Vec::new();
    for ((id, c), co) in children.into_iter().zip(&cos) {
        let out = c.wait_with_output().unwrap();
        expect_exit!(out, 0, "{id}");
        let n = ledger_events(co)
            .iter()
            .find(|e| e["event"] == "pushed")
            .and_then(|e| e["detail"]["attempts"].as_u64())
            .unwrap_or(0);
        attempts.push(n);
    }
    eprintln!(
        "four concurrent publications: {:.0} ms wall, push attempts {attempts:?}",
        start.elapsed().as_secs_f64() * 1e3
    );
    let files = git(
        &fx.origin,
        &["ls-tree", "-r", "--name-only", "refs/heads/rx-node"],
    );
    for id in ids {
        for f in ["RX_RESULT.md", "RX_RESULT.json", "LOG_META.json"] {
            let path = format!("rx-results/{id}/{}/{f}", id.to_lowercase());
            assert!(files.lines().any(|l| l == path), "{path} lost:\n{files}");
        }
    }
    assert_eq!(files.lines().count(), 12, "{files}");
    let history = git(&fx.origin, &["rev-list", "--parents", "refs/heads/rx-node"]);
    assert_eq!(history.lines().count(), 4, "{history}");
    for l in history.lines() {
        assert!(l.split(' ').count() <= 2, "a merge commit: {l}");
    }
    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/video-development"]),
        vd_before
    );
}

#[test]
fn local_publication_then_push_of_the_next_carries_both() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_LOCAL_1", "RX_RESULT_ONLY");
    fx.outbox(&co, "RX_LOCAL_2", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_LOCAL_1", false, Some("PUBLISH RX_LOCAL_1\n"));
    expect_exit!(out, 0);
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    // Meanwhile another node publishes to origin.
    let other = fx.checkout("rx2");
    fx.outbox(&other, "RX_OTHER", "RX_RESULT_ONLY");
    let out = publish(&other, "RX_OTHER", true, Some("PUBLISH RX_OTHER\n"));
    expect_exit!(out, 0);
    // rx1 now pushes its second result: it must be rebuilt on origin's tip and keep RX_LOCAL_1.
    let out = publish(&co, "RX_LOCAL_2", true, Some("PUBLISH RX_LOCAL_2\n"));
    expect_exit!(out, 0);
    let files = git(
        &fx.origin,
        &[
            "ls-tree",
            "-d",
            "--name-only",
            "refs/heads/rx-node:rx-results",
        ],
    );
    let dirs: Vec<&str> = files.lines().collect();
    assert_eq!(dirs, ["RX_LOCAL_1", "RX_LOCAL_2", "RX_OTHER"], "{files}");
    let history = git(&fx.origin, &["rev-list", "--parents", "refs/heads/rx-node"]);
    assert_eq!(history.lines().count(), 2, "{history}");
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    let tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    for id in ["RX_LOCAL_1", "RX_LOCAL_2"] {
        assert_eq!(st["published"][id]["pushed"], true, "{id}");
        assert_eq!(st["published"][id]["commit"], tip.as_str(), "{id}");
    }
}

#[test]
fn a_local_publication_is_pushed_later_with_confirmation() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_LATER", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_LATER", false, Some("PUBLISH RX_LATER\n"));
    expect_exit!(out, 0);
    let local = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    // Without --push a second publish is refused (never overwritten).
    let out = publish(&co, "RX_LATER", false, Some("PUBLISH RX_LATER\n"));
    expect_exit!(out, 3);
    // --push needs the confirmation again.
    let out = publish(&co, "RX_LATER", true, Some("no\n"));
    expect_exit!(out, 3);
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    let out = publish(&co, "RX_LATER", true, Some("PUBLISH RX_LATER\n"));
    expect_exit!(out, 0);
    assert_eq!(git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]), local);
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_LATER"]["pushed"], true);
    assert_eq!(st["published"]["RX_LATER"]["commit"], local.as_str());
}

#[test]
fn concurrent_publication_over_the_git_protocol_all_land() {
    let fx = Fixture::new();
    // scripts/setup.sh installs Debian's `git`, which carries `git daemon`: a
    // missing daemon is a broken set-up, not a reason to pass silently.
    let daemon = start_daemon(fx.root.path())
        .expect("git daemon did not start on loopback (install Debian's `git` package)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let ids = ["RX_NET_A", "RX_NET_B", "RX_NET_C", "RX_NET_D"];
    let cos: Vec<PathBuf> = ids
        .iter()
        .map(|id| {
            let co = fx.checkout(&id.to_lowercase());
            git(&co, &["remote", "set-url", "origin", &url]);
            fx.outbox(&co, id, "RX_RESULT_ONLY");
            co
        })
        .collect();
    let start = std::time::Instant::now();
    let mut children: Vec<_> = cos
        .iter()
        .zip(ids)
        .map(|(co, id)| (id, spawn_publish(co, id, true)))
        .collect();
    for (id, c) in &mut children {
        let mut stdin = c.stdin.take().expect("stdin");
        stdin
            .write_all(format!("PUBLISH {id}\n").as_bytes())
            .unwrap();
    }
    let mut attempts = Vec::new();
    for ((id, c), co) in children.into_iter().zip(&cos) {
        let out = c.wait_with_output().unwrap();
        expect_exit!(out, 0, "{id}");
        let n = ledger_events(co)
            .iter()
            .find(|e| e["event"] == "pushed")
            .and_then(|e| e["detail"]["attempts"].as_u64())
            .unwrap_or(0);
        attempts.push(n);
    }
    eprintln!(
        "four concurrent publications over git://: {:.0} ms wall, push attempts {attempts:?}",
        start.elapsed().as_secs_f64() * 1e3
    );
    let files = git(
        &fx.origin,
        &[
            "ls-tree",
            "-d",
            "--name-only",
            "refs/heads/rx-node:rx-results",
        ],
    );
    assert_eq!(files.lines().collect::<Vec<_>>(), ids, "{files}");
    let history = git(&fx.origin, &["rev-list", "--parents", "refs/heads/rx-node"]);
    assert_eq!(history.lines().count(), 4, "{history}");
    assert!(
        history.lines().all(|l| l.split(' ').count() <= 2),
        "{history}"
    );
    assert!(
        attempts.iter().any(|n| *n > 1),
        "no push was ever rejected: {attempts:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_permanent_server_rejection_is_not_retried_and_keeps_the_local_commit() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new();
    // scripts/setup.sh installs Debian's `git`, which carries `git daemon`: a
    // missing daemon is a broken set-up, not a reason to pass silently.
    let daemon = start_daemon(fx.root.path())
        .expect("git daemon did not start on loopback (install Debian's `git` package)");
    let hook = fx.origin.join("hooks/pre-receive");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, "#!/bin/sh\necho 'rx-node is frozen' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let co = fx.checkout("rx1");
    git(
        &co,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("git://127.0.0.1:{}/origin.git", daemon.port),
        ],
    );
    fx.outbox(&co, "RX_FROZEN", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_FROZEN", true, Some("PUBLISH RX_FROZEN\n"));
    expect_exit!(out, 1);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rejected"),
        "{}",
        show(&out)
    );
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    let local = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_FROZEN"]["pushed"], false);
    assert_eq!(st["published"]["RX_FROZEN"]["commit"], local.as_str());
    let ev = ledger_events(&co);
    assert!(ev.iter().any(|e| e["event"] == "publish_failed"), "{ev:?}");
    assert!(!ev.iter().any(|e| e["event"] == "pushed"), "{ev:?}");
}
