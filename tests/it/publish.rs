//! Issue 7: `rxnode publish <TASK_ID> [--push]` against a real bare origin.
use crate::util::{
    file_url, git, git_try, ledger_events, rxnode_cmd, show, snapshot, start_daemon,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

struct Fixture {
    root: TempDir,
    origin: PathBuf,
    /// EXPECTED_HEAD: a strict ancestor of the task commit.
    ancestor: String,
    /// The commit that holds the task on video-development.
    task_commit: String,
}

impl Fixture {
    fn new() -> Fixture {
        let root = TempDir::new().expect("temp dir");
        let origin = root.path().join("origin.git");
        std::fs::create_dir_all(&origin).unwrap();
        git(
            &origin,
            &["init", "--bare", "-q", "-b", "video-development"],
        );
        let seed = root.path().join("seed");
        std::fs::create_dir_all(&seed).unwrap();
        git(&seed, &["init", "-q", "-b", "video-development"]);
        std::fs::write(seed.join("README.md"), "main PC project\n").unwrap();
        git(&seed, &["add", "."]);
        git(&seed, &["commit", "-q", "-m", "start"]);
        let ancestor = git(&seed, &["rev-parse", "HEAD"]);
        std::fs::create_dir_all(seed.join("docs/handoff")).unwrap();
        std::fs::write(seed.join("docs/handoff/NEXT_RX_TASK.md"), "placeholder\n").unwrap();
        git(&seed, &["add", "."]);
        git(&seed, &["commit", "-q", "-m", "task"]);
        let task_commit = git(&seed, &["rev-parse", "HEAD"]);
        let url = file_url(&origin);
        git(&seed, &["push", "-q", &url, "video-development"]);
        Fixture {
            root,
            origin,
            ancestor,
            task_commit,
        }
    }

    /// A fresh clone on video-development with `.local/` excluded.
    fn checkout(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        git(
            self.root.path(),
            &["clone", "-q", &file_url(&self.origin), name],
        );
        git(&dir, &["checkout", "-q", "video-development"]);
        let mut ex = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(".git/info/exclude"))
            .unwrap();
        writeln!(ex, ".local/").unwrap();
        // Issue 18: every node publishing has a name; here the checkout's own.
        set_node_name(&dir, name);
        dir
    }

    fn task_text(&self, id: &str, allow_push: &str) -> String {
        format!(
            "TASK_ID = {id}\nTASK_TITLE = Publication test {id}\nSOURCE_BRANCH = video-development\n\
             EXPECTED_HEAD = {}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\n\
             ALLOW_COMMIT = NO\nALLOW_PUSH = {allow_push}\n\nA manual task: check the cabling and write it down.\n",
            self.ancestor
        )
    }

    /// Outbox + approval in state for `id`. Returns the outbox folder.
    fn outbox(&self, checkout: &Path, id: &str, allow_push: &str) -> PathBuf {
        let task = self.task_text(id, allow_push);
        let sha = hex::encode(Sha256::digest(task.as_bytes()));
        let dir = checkout.join(".local/rx_agent_outbox").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("TASK.md"), &task).unwrap();
        let meta = json!({"task_id": id, "commit": self.task_commit, "blob": "0".repeat(40),
            "task_sha256": sha, "approved_at": "2026-11-29T20:00:00+00:00",
            "source_branch": "video-development"});
        std::fs::write(dir.join("TASK.meta.json"), meta.to_string()).unwrap();
        let result = json!({
            "schema_version": 1, "task_id": id, "task_title": format!("Publication test {id}"),
            "status": "NOT RUN", "risk_level": "GREEN", "source_branch": "video-development",
            "source_commit": self.task_commit, "expected_head": self.ancestor,
            "approval": {"at": "2026-11-29T20:00:00+00:00", "task_sha256": sha},
            "authorization": null,
            "node": {"hostname": null, "rxnode_version": "0.1.0", "soapysdr_version": null},
            "timeline": {"started_at": null, "completed_at": null},
            "checks": [], "inventory": null, "captures": [], "tx": null, "errors": []
        });
        let json_text = serde_json::to_string_pretty(&result).unwrap();
        let json_sha = hex::encode(Sha256::digest(json_text.as_bytes()));
        std::fs::write(dir.join("RX_RESULT.json"), &json_text).unwrap();
        // The Markdown twin as `validate-result` checks it: the summary row and
        // the trailer binding it to the exact JSON bytes.
        std::fs::write(
            dir.join("RX_RESULT.md"),
            format!(
                "# RX result: {id}\n\n| | |\n|---|---|\n| Status | NOT RUN |\n\nTask SHA-256: {sha}\n\
                 Source commit: {}\n\nThe operator checked the cabling by hand.\n\n\
                 <!-- rxnode-result schema_version=1 task_id={id} status=\"NOT RUN\" json_sha256={json_sha} -->\n",
                self.task_commit
            ),
        )
        .unwrap();
        // Never published: a plot beside the results.
        std::fs::write(
            dir.join("spectrum.png"),
            [0x89u8, b'P', b'N', b'G', 0, 1, 2],
        )
        .unwrap();
        approve(checkout, id, &sha, &self.task_commit);
        dir
    }
}

/// Add an approval to the checkout's state file (the `crate::state::State` shape).
fn approve(checkout: &Path, id: &str, sha: &str, commit: &str) {
    let p = checkout.join(".local/rx_agent_state.json");
    let mut st: Value = std::fs::read(&p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| {
            json!({"schema_version": 1, "last_seen_task_id": null, "last_completed_task_id": null,
                "deferred_task_ids": [], "approvals": {}, "tasks": {}, "published": {},
                "running": false, "watcher_pid": null, "last_poll": null, "remote_marker": null})
        });
    st["approvals"][id] = json!({"task_id": id, "task_sha256": sha, "commit": commit,
        "at": "2026-11-29T20:00:00+00:00"});
    st["last_seen_task_id"] = json!(id);
    std::fs::write(&p, serde_json::to_vec_pretty(&st).unwrap()).unwrap();
    // The ledger line a real approval writes first (issue 13: an approval the
    // ledger never recorded is a planted one and is refused).
    let entry = json!({"at": "2026-11-29T20:00:00+00:00", "event": "approved", "task_id": id,
        "task_sha256": sha, "commit": commit});
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(checkout.join(".local/rx_agent_ledger.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, format!("{entry}\n").as_bytes()).unwrap();
}

/// `rxnode node set-name NAME` in `checkout`.
fn set_node_name(checkout: &Path, name: &str) {
    let out = rxnode_cmd()
        .args([
            "--repo",
            checkout.to_str().unwrap(),
            "node",
            "set-name",
            name,
        ])
        .output()
        .expect("rxnode runs");
    assert!(out.status.success(), "node set-name {name}: {}", show(&out));
}

fn spawn_publish(checkout: &Path, id: &str, push: bool) -> std::process::Child {
    let mut args = vec!["--repo".to_owned(), checkout.display().to_string()];
    args.extend(["publish".to_owned(), id.to_owned()]);
    if push {
        args.push("--push".to_owned());
    }
    rxnode_cmd()
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs")
}

fn publish(checkout: &Path, id: &str, push: bool, answer: Option<&str>) -> Output {
    let mut child = spawn_publish(checkout, id, push);
    {
        let mut stdin = child.stdin.take().expect("stdin");
        if let Some(a) = answer {
            let _ = stdin.write_all(a.as_bytes());
        }
    }
    child.wait_with_output().expect("rxnode finishes")
}

/// How many `refused` events the checkout's ledger holds.
fn refused_count(co: &Path) -> usize {
    ledger_events(co)
        .iter()
        .filter(|e| e["event"] == "refused")
        .count()
}

/// `refused_before` is [`refused_count`] taken just before the call: the
/// ledger accumulates, so this call must add exactly one refusal of its own.
fn assert_refused_nothing_written(
    fx: &Fixture,
    co: &Path,
    out: &Output,
    refused_before: usize,
    why: &str,
) {
    assert_eq!(out.status.code(), Some(3), "{why}: {}", show(out));
    assert!(
        git_try(
            &fx.origin,
            &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
        )
        .is_none(),
        "{why}: origin got rx-node"
    );
    assert!(
        git_try(co, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]).is_none(),
        "{why}: local rx-node was created"
    );
    let ev = ledger_events(co);
    assert!(
        ev.iter().any(|e| e["event"] == "refused"),
        "{why}: no refusal in the ledger: {ev:?}"
    );
    assert_eq!(
        refused_count(co),
        refused_before + 1,
        "{why}: this call did not add exactly one refusal to the ledger: {ev:?}"
    );
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"], json!({}), "{why}");
}

#[test]
fn publish_push_lands_exactly_three_files_and_disturbs_nothing() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_PUB_1", "RX_RESULT_ONLY");
    // A local, uncommitted edit in the work tree must survive untouched.
    std::fs::write(co.join("README.md"), "operator's local edit\n").unwrap();
    let before = snapshot(&co);
    let vd_before = git(&fx.origin, &["rev-parse", "refs/heads/video-development"]);

    let out = publish(&co, "RX_PUB_1", true, Some("PUBLISH RX_PUB_1\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "rx-results/RX_PUB_1/rx1/RX_RESULT.md",
        "RX_RESULT.json",
        "LOG_META.json",
        "NOT RUN",
        "bytes",
    ] {
        assert!(stdout.contains(shown), "summary lacks {shown}: {stdout}");
    }

    let files = git(
        &fx.origin,
        &["ls-tree", "-r", "--name-only", "refs/heads/rx-node"],
    );
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(
        files,
        [
            "rx-results/RX_PUB_1/rx1/LOG_META.json",
            "rx-results/RX_PUB_1/rx1/RX_RESULT.json",
            "rx-results/RX_PUB_1/rx1/RX_RESULT.md"
        ]
    );
    let md = git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_PUB_1/rx1/RX_RESULT.md"],
    );
    let local_md =
        std::fs::read_to_string(co.join(".local/rx_agent_outbox/RX_PUB_1/RX_RESULT.md")).unwrap();
    assert_eq!(md, local_md.trim_end());
    let meta: Value = serde_json::from_str(&git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_PUB_1/rx1/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["task_id"], "RX_PUB_1");
    assert_eq!(meta["status"], "NOT RUN");
    assert_eq!(meta["source_commit"], fx.task_commit.as_str());
    let meta_text = meta.to_string();
    assert!(!meta_text.contains(&fx.root.path().display().to_string()));

    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/video-development"]),
        vd_before,
        "video-development on origin moved"
    );
    assert_eq!(snapshot(&co), before, "the checkout changed");

    let pushed = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    assert_eq!(git(&co, &["rev-parse", "refs/heads/rx-node"]), pushed);
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_PUB_1"]["commit"], pushed.as_str());
    assert_eq!(st["published"]["RX_PUB_1"]["pushed"], true);
    let ev = ledger_events(&co);
    assert!(ev
        .iter()
        .any(|e| e["event"] == "published" && e["task_id"] == "RX_PUB_1"));
    assert!(ev
        .iter()
        .any(|e| e["event"] == "pushed" && e["commit"] == pushed.as_str()));

    // A second publication of the same ID is refused, nothing moves.
    let again = publish(&co, "RX_PUB_1", true, Some("PUBLISH RX_PUB_1\n"));
    assert_eq!(again.status.code(), Some(3), "{}", show(&again));
    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]),
        pushed
    );
}

#[test]
fn wrong_or_missing_confirmation_writes_nothing() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_CONF", "RX_RESULT_ONLY");
    for (answer, why) in [
        (Some("publish RX_CONF\n"), "lower case"),
        (Some("PUBLISH RX_CONF \n"), "trailing space"),
        (Some("PUBLISH OTHER\n"), "other ID"),
        (Some("yes\n"), "yes"),
        (None, "EOF"),
    ] {
        let before = refused_count(&co);
        let out = publish(&co, "RX_CONF", true, answer);
        assert_refused_nothing_written(&fx, &co, &out, before, why);
    }
    // CRLF is only a line terminator: the exact line still goes ahead.
    let out = publish(&co, "RX_CONF", false, Some("PUBLISH RX_CONF\r\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    assert!(git_try(&co, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]).is_some());
}

#[test]
fn allow_push_no_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_NOPUSH", "NO");
    let before = refused_count(&co);
    let out = publish(&co, "RX_NOPUSH", true, Some("PUBLISH RX_NOPUSH\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "ALLOW_PUSH = NO");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ALLOW_PUSH"));
}

#[test]
fn unapproved_or_changed_task_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let dir = fx.outbox(&co, "RX_UNAPP", "RX_RESULT_ONLY");
    // The outbox text differs from what was approved.
    let mut t = std::fs::read_to_string(dir.join("TASK.md")).unwrap();
    t.push_str("an extra line\n");
    std::fs::write(dir.join("TASK.md"), t).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_UNAPP", true, Some("PUBLISH RX_UNAPP\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "changed text");
    // No approval at all.
    std::fs::remove_file(co.join(".local/rx_agent_state.json")).unwrap();
    let out = publish(&co, "RX_UNAPP", true, Some("PUBLISH RX_UNAPP\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("never approved"));
}

#[test]
fn planted_secrets_paths_and_oversize_files_are_refused() {
    let token = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].concat();
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "RX_TOKEN",
            "RX_RESULT.md",
            format!("\nPushed with {token}\n"),
        ),
        (
            "RX_AWS",
            "RX_RESULT.md",
            "\nkey AKIAIOSFODNN7EXAMPLE\n".into(),
        ),
        (
            "RX_HOME",
            "RX_RESULT.md",
            "\nSaved to /home/alice/iq/cap.sigmf-data\n".into(),
        ),
        (
            "RX_WIN",
            "RX_RESULT.md",
            "\nSaved to C:\\Users\\alice\\cap.wav\n".into(),
        ),
        (
            "RX_KEY",
            "RX_RESULT.md",
            "\n-----BEGIN OPENSSH PRIVATE KEY-----\n".into(),
        ),
        (
            "RX_BIG",
            "RX_RESULT.md",
            format!("\n{}\n", "word ".repeat(60_000)),
        ),
        ("RX_BIN", "RX_RESULT.md", "\n\u{0}\n".into()),
    ];
    for (id, file, planted) in cases {
        let fx = Fixture::new();
        let co = fx.checkout("rx1");
        let dir = fx.outbox(&co, id, "RX_RESULT_ONLY");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(file))
            .unwrap();
        f.write_all(planted.as_bytes()).unwrap();
        drop(f);
        let before = refused_count(&co);
        let out = publish(&co, id, true, Some(&format!("PUBLISH {id}\n")));
        assert_refused_nothing_written(&fx, &co, &out, before, id);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains(&token), "{id}: the secret was echoed: {err}");
        // Refused for the planted reason, not by accident of something else.
        let why = match id {
            "RX_TOKEN" => "GitHub token",
            "RX_AWS" => "AWS access key",
            "RX_HOME" | "RX_WIN" => "absolute local path",
            "RX_KEY" => "private key block",
            "RX_BIG" => "256 KiB",
            _ => "binary",
        };
        assert!(
            err.contains(why),
            "{id}: refused, but not for {why:?}: {err}"
        );
        let ledger = std::fs::read_to_string(co.join(".local/rx_agent_ledger.jsonl")).unwrap();
        assert!(
            !ledger.contains(&token),
            "{id}: the secret reached the ledger"
        );
    }
}

#[test]
fn planted_token_in_json_and_md_json_disagreement_are_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let dir = fx.outbox(&co, "RX_JSON", "RX_RESULT_ONLY");
    let p = dir.join("RX_RESULT.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["errors"] = json!(["remote https://bob:hunter2@git.example.com/x.git failed"]);
    std::fs::write(&p, v.to_string()).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "credentials URL in JSON");

    v["errors"] = json!([]);
    v["status"] = json!("PASS");
    std::fs::write(&p, v.to_string()).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "status disagrees");
    assert!(String::from_utf8_lossy(&out.stderr).contains("status"));

    std::fs::remove_file(dir.join("RX_RESULT.md")).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "missing md");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

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
        assert_eq!(out.status.code(), Some(0), "{id}: {}", show(&out));
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    // Meanwhile another node publishes to origin.
    let other = fx.checkout("rx2");
    fx.outbox(&other, "RX_OTHER", "RX_RESULT_ONLY");
    let out = publish(&other, "RX_OTHER", true, Some("PUBLISH RX_OTHER\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // rx1 now pushes its second result: it must be rebuilt on origin's tip and keep RX_LOCAL_1.
    let out = publish(&co, "RX_LOCAL_2", true, Some("PUBLISH RX_LOCAL_2\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let local = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    // Without --push a second publish is refused (never overwritten).
    let out = publish(&co, "RX_LATER", false, Some("PUBLISH RX_LATER\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    // --push needs the confirmation again.
    let out = publish(&co, "RX_LATER", true, Some("no\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    let out = publish(&co, "RX_LATER", true, Some("PUBLISH RX_LATER\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
        assert_eq!(out.status.code(), Some(0), "{id}: {}", show(&out));
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
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
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

#[test]
fn a_result_already_on_the_remote_is_never_overwritten() {
    let fx = Fixture::new();
    let first = fx.checkout("rx1");
    let second = fx.checkout("rx2");
    // Issue 18: results are per node, so "the same result" is the same ID from
    // the same node name (here a second checkout of node rx1).
    set_node_name(&second, "rx1");
    fx.outbox(&first, "RX_SAME", "RX_RESULT_ONLY");
    fx.outbox(&second, "RX_SAME", "RX_RESULT_ONLY");
    let out = publish(&first, "RX_SAME", true, Some("PUBLISH RX_SAME\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&second, "RX_SAME", true, Some("PUBLISH RX_SAME\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already exists"),
        "{}",
        show(&out)
    );
    assert_eq!(git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]), tip);
}

/// Review of session 1: a commit made by hand on the local rx-node (here an
/// operator note plus an IQ-like file) must never ride along with a push.
#[test]
fn a_hand_made_local_rx_node_commit_is_never_pushed() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_HAND_1", "RX_RESULT_ONLY");
    // Publish locally first (no push), then add a hand-made commit on rx-node.
    let out = publish(&co, "RX_HAND_1", false, Some("PUBLISH RX_HAND_1\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
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

/// Review of session 1: a linked worktree with rx-node checked out is refused
/// like the main one (its index and work tree would move under it).
#[test]
fn a_linked_worktree_on_rx_node_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_WT_1", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_WT_1", false, Some("PUBLISH RX_WT_1\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    fx.outbox(&co, "RX_WT_2", "RX_RESULT_ONLY");
    let wt = fx.root.path().join("wt");
    git(
        &co,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "rx-node"],
    );
    let before = git(&co, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&co, "RX_WT_2", false, Some("PUBLISH RX_WT_2\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(show(&out).contains("worktree"), "{}", show(&out));
    assert_eq!(git(&co, &["rev-parse", "refs/heads/rx-node"]), before);
}

/// Review of session 1: the checkout's own absolute path is refused in a
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

/// DESIGN §6: publishing with the watched branch set to rx-node is refused
/// explicitly, before anything else is read.
#[test]
fn the_watched_branch_can_never_be_the_push_target() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_WATCHED", "RX_RESULT_ONLY");
    for branch in ["rx-node", "refs/heads/rx-node"] {
        let out = Command::new(env!("CARGO_BIN_EXE_rxnode"))
            .args(["--repo", co.to_str().unwrap(), "--branch", branch])
            .args(["publish", "RX_WATCHED", "--push"])
            .env_remove("RXNODE_REPO")
            .env_remove("RXNODE_REMOTE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{branch}: {}", show(&out));
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

/// Review of session 2 (finding 1): rx1 publishes X locally, rx2 publishes its
/// own X and pushes, then rx1 runs `publish Y --push`. rx1's X must not be
/// dropped silently nor recorded as pushed: the push is refused naming X.
#[test]
fn a_local_only_result_whose_id_another_node_pushed_is_refused_not_dropped() {
    let fx = Fixture::new();
    let rx1 = fx.checkout("rx1");
    let rx2 = fx.checkout("rx2");
    // Issue 18: a clash needs the same ID from the same node name (results are
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let local_before = git(&rx1, &["rev-parse", "refs/heads/rx-node"]);
    let out = publish(&rx2, "RX_DUP_X", true, Some("PUBLISH RX_DUP_X\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let origin_tip = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    let state_before = std::fs::read(rx1.join(".local/rx_agent_state.json")).unwrap();
    let refused_before = refused_count(&rx1);

    let out = publish(&rx1, "RX_DUP_Y", true, Some("PUBLISH RX_DUP_Y\n"));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
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

/// Review of session 2 (finding 2): the push gate applies the checkout-path
/// check too: a hand-made `rx-results/<ID>/RX_RESULT.md` on the local rx-node
/// naming the checkout's absolute path is refused at push.
#[test]
fn the_checkouts_absolute_path_in_an_outgoing_commit_is_refused_at_push() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_GATE_1", "RX_RESULT_ONLY");
    let out = publish(&co, "RX_GATE_1", false, Some("PUBLISH RX_GATE_1\n"));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
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
    let mut child = Command::new(env!("CARGO_BIN_EXE_rxnode"))
        .args([
            "--repo",
            checkout.to_str().unwrap(),
            "publish",
            id,
            "--push",
        ])
        .env_remove("RXNODE_REPO")
        .env_remove("RXNODE_BRANCH")
        .env_remove("RXNODE_REMOTE")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("PUBLISH {id}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Review of session 2 (finding 3): with `node.hostname` null (the default,
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let meta: Value = serde_json::from_str(&git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_HOST_SET/rx1/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["node"], "bench-rx-7", "{meta}");
    let msg = git(&fx.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.lines().any(|l| l == "Node: bench-rx-7"), "{msg}");
}
