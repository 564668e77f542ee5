//! A push that loses races, meets a server that is not there yet, or runs out of
//! its time budget (docs/publishing.md#how-the-push-works).
use super::*;
use crate::util::{free_port, start_daemon_on};

/// A `pre-receive` hook that, the first `moves` times it runs, moves `rx-node` on by
/// one commit of its own (as another node landing first) so that the push being
/// received loses the race ("failed to update ref").
#[cfg(unix)]
fn install_racing_hook(origin: &Path, moves: u32) {
    use std::os::unix::fs::PermissionsExt;
    let hook = origin.join("hooks/pre-receive");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    let script = format!(
        r#"#!/bin/sh
# Write into the repository itself, not the push's quarantine.
unset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
n=$(cat moves 2>/dev/null || echo 0)
if [ "$n" -lt {moves} ]; then
    echo $((n + 1)) > moves
    tip=$(git rev-parse refs/heads/rx-node)
    c=$(echo "another node landed first ($n)" | git commit-tree "$tip^{{tree}}" -p "$tip")
    git update-ref refs/heads/rx-node "$c" "$tip"
fi
exit 0
"#
    );
    std::fs::write(&hook, script).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `rx-node` on the origin holds one result, published over the file path (no hook).
fn first_result(fx: &Fixture) {
    let a = fx.checkout("first");
    fx.outbox(&a, "RX_FIRST", "RX_RESULT_ONLY");
    let out = publish(&a, "RX_FIRST", true, Some("PUBLISH RX_FIRST\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// Every published file of `id` from `node` in a fresh clone of `url` is
/// byte-identical to the node's outbox copy.
fn landed_intact(fx: &Fixture, url: &str, co: &Path, id: &str, node: &str) {
    let fresh = fx.root.path().join(format!("fresh-{id}"));
    git(
        fx.root.path(),
        &["clone", "-q", "-b", "rx-node", url, fresh.to_str().unwrap()],
    );
    for f in ["RX_RESULT.md", "RX_RESULT.json"] {
        let published = std::fs::read(fresh.join(format!("rx-results/{id}/{node}/{f}")))
            .unwrap_or_else(|e| panic!("{id}/{node}/{f} missing from a fresh clone: {e}"));
        let local = std::fs::read(co.join(format!(".local/rx_agent_outbox/{id}/{f}"))).unwrap();
        assert_eq!(
            published, local,
            "{id}/{node}/{f} differs from what was published"
        );
    }
    assert!(fresh
        .join(format!("rx-results/{id}/{node}/LOG_META.json"))
        .is_file());
}

/// Three lost races in a row: the push fetches, rebuilds on the new tip and lands
/// on the fourth attempt, which it reports; nothing on the remote is lost.
#[cfg(unix)]
#[test]
fn a_push_that_loses_several_races_lands_and_reports_its_attempts() {
    let fx = Fixture::new();
    first_result(&fx);
    let daemon = start_daemon(fx.root.path())
        .expect("git daemon did not start on loopback (install Debian's `git` package)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    install_racing_hook(&fx.origin, 3);
    let co = fx.checkout("rx1");
    git(&co, &["remote", "set-url", "origin", &url]);
    fx.outbox(&co, "RX_RACED", "RX_RESULT_ONLY");
    let out = run_fed(
        publish_cmd(&co, "RX_RACED", true).arg("--json"),
        b"PUBLISH RX_RACED\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["push_attempts"], 4, "{v}");
    let pushed = ledger_events(&co)
        .into_iter()
        .find(|e| e["event"] == "pushed")
        .expect("a pushed event");
    assert_eq!(pushed["detail"]["attempts"], 4, "{pushed}");
    // Ours on top of the three commits that won, on top of the first result.
    let log = git(&fx.origin, &["log", "--format=%s", "refs/heads/rx-node"]);
    assert_eq!(log.lines().count(), 5, "{log}");
    assert_eq!(
        log.lines()
            .filter(|l| l.starts_with("another node"))
            .count(),
        3,
        "{log}"
    );
    landed_intact(&fx, &url, &co, "RX_RACED", "rx1");
    let files = git(&fx.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert!(
        files.contains("rx-results/RX_FIRST/first/RX_RESULT.json"),
        "{files}"
    );
}

/// A remote that keeps moving ahead: once the push budget is spent the publication
/// ends (exit 1) naming its attempts, the budget and the last rejection, and the
/// result stays committed locally for a later `publish --push`.
#[cfg(unix)]
#[test]
fn a_push_that_keeps_losing_ends_when_its_budget_is_spent() {
    let fx = Fixture::new();
    first_result(&fx);
    let daemon = start_daemon(fx.root.path())
        .expect("git daemon did not start on loopback (install Debian's `git` package)");
    install_racing_hook(&fx.origin, 1_000_000);
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
    fx.outbox(&co, "RX_LOSER", "RX_RESULT_ONLY");
    let out = run_fed(
        publish_cmd(&co, "RX_LOSER", true).env("RXNODE_PUSH_BUDGET_S", "1.5"),
        b"PUBLISH RX_LOSER\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not succeed in"), "{err}");
    assert!(err.contains("attempt(s)"), "{err}");
    assert!(err.contains("RXNODE_PUSH_BUDGET_S"), "{err}");
    assert!(
        err.contains("failed to update ref"),
        "the last rejection: {err}"
    );
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_LOSER"]["pushed"], false, "{st}");
    let files = git(&fx.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert!(!files.contains("RX_LOSER"), "{files}");
}

/// A push budget that is not seconds in 0 ..= 3600 is refused before anything is
/// asked or committed, naming the variable and the value.
#[test]
fn a_push_budget_that_is_not_seconds_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_BUDGET", "RX_RESULT_ONLY");
    for bad in ["soon", "-1", "3601", "NaN"] {
        let out = run_fed(
            publish_cmd(&co, "RX_BUDGET", true).env("RXNODE_PUSH_BUDGET_S", bad),
            b"PUBLISH RX_BUDGET\n",
        );
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("RXNODE_PUSH_BUDGET_S=\"{bad}\"")),
            "{bad}: {err}"
        );
    }
    assert!(git_try(&co, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]).is_none());
}

/// The server is not there when the publication starts (connection refused): the
/// fetch is tried again with back-off, and once the server listens the result lands.
#[test]
fn a_server_that_refuses_connections_at_first_is_tried_again() {
    let fx = Fixture::new();
    let port = free_port();
    let url = format!("git://127.0.0.1:{port}/origin.git");
    let co = fx.checkout("rx1");
    git(&co, &["remote", "set-url", "origin", &url]);
    fx.outbox(&co, "RX_LATE_SERVER", "RX_RESULT_ONLY");
    let mut child = spawn_publish(&co, "RX_LATE_SERVER", true);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"PUBLISH RX_LATE_SERVER\n")
        .unwrap();
    // Nothing listens yet: the first connection attempts are refused.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let _daemon = start_daemon_on(fx.root.path(), port).expect("git daemon on the port");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    landed_intact(&fx, &url, &co, "RX_LATE_SERVER", "rx1");
}

/// The remote advertises a branch whose tip is a commit of 8 MiB (a few KiB of
/// zlib), which a plain `git fetch` of every branch put in this checkout:
/// libgit2's push would read it whole to leave it out of the pack. The push is
/// refused naming the branch and the commit; the result stays committed locally.
#[cfg(unix)]
#[test]
fn a_push_is_refused_while_the_remote_advertises_an_oversized_commit_held_here() {
    let fx = Fixture::new();
    first_result(&fx);
    let bomb = crate::util::push_oversized_commit(
        fx.root.path(),
        fx.origin.to_str().unwrap(),
        "refs/heads/evil",
    );
    let daemon = start_daemon(fx.root.path())
        .expect("git daemon did not start on loopback (install Debian's `git` package)");
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
    git(&co, &["fetch", "-q", "origin"]);
    let before = git(&fx.origin, &["rev-parse", "rx-node"]);
    fx.outbox(&co, "RX_ADV", "RX_RESULT_ONLY");
    let out = run_fed(&mut publish_cmd(&co, "RX_ADV", true), b"PUBLISH RX_ADV\n");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refs/heads/evil"), "{err}");
    assert!(
        err.contains(&format!("commit {bomb} is 838")) && err.contains("over the 2097152 bytes"),
        "{err}"
    );
    assert_eq!(git(&fx.origin, &["rev-parse", "rx-node"]), before);
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_ADV"]["pushed"], false, "{st}");
}
