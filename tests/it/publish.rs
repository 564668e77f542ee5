//! `rxnode publish <TASK_ID> [--push]` against a real bare origin.
use crate::util::{
    file_url, git, git_out, git_try, ledger_events, run_fed, rxnode_cmd, show, snapshot,
    start_daemon,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

mod carried;
mod concurrent;
mod guards;
mod refusals;
mod resume;
mod retry;

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
        // Every node publishing has a name; here the checkout's own.
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

    /// The main PC posts task `id` on video-development (a commit holding its
    /// text at the task path, pushed); returns the commit. Checkouts made after
    /// it have it.
    fn post(&self, id: &str, allow_push: &str) -> String {
        let seed = self.root.path().join("seed");
        std::fs::write(
            seed.join("docs/handoff/NEXT_RX_TASK.md"),
            self.task_text(id, allow_push),
        )
        .unwrap();
        git(&seed, &["add", "."]);
        git(&seed, &["commit", "-q", "-m", &format!("task {id}")]);
        git(
            &seed,
            &["push", "-q", &file_url(&self.origin), "video-development"],
        );
        git(&seed, &["rev-parse", "HEAD"])
    }

    /// Outbox + approval in state for `id`. Returns the outbox folder.
    fn outbox(&self, checkout: &Path, id: &str, allow_push: &str) -> PathBuf {
        self.outbox_at(checkout, id, allow_push, &self.task_commit)
    }

    /// [`Fixture::outbox`] of the task that commit `task_commit` holds.
    fn outbox_at(&self, checkout: &Path, id: &str, allow_push: &str, task_commit: &str) -> PathBuf {
        let task = self.task_text(id, allow_push);
        let sha = hex::encode(Sha256::digest(task.as_bytes()));
        let dir = checkout.join(".local/rx_agent_outbox").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("TASK.md"), &task).unwrap();
        let meta = json!({"task_id": id, "commit": task_commit, "blob": "0".repeat(40),
            "task_sha256": sha, "approved_at": "2026-11-29T20:00:00+00:00",
            "source_branch": "video-development"});
        std::fs::write(dir.join("TASK.meta.json"), meta.to_string()).unwrap();
        let result = json!({
            "schema_version": 1, "task_id": id, "task_title": format!("Publication test {id}"),
            "status": "NOT RUN", "risk_level": "GREEN", "source_branch": "video-development",
            "source_commit": task_commit, "expected_head": self.ancestor,
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
                task_commit
            ),
        )
        .unwrap();
        // Never published: a plot beside the results.
        std::fs::write(
            dir.join("spectrum.png"),
            [0x89u8, b'P', b'N', b'G', 0, 1, 2],
        )
        .unwrap();
        approve(checkout, id, &sha, task_commit);
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
    let at = "2026-11-29T20:00:00+00:00";
    let mac = crate::util::node_mac(checkout, id, sha, commit, at);
    st["approvals"][id] = json!({"task_id": id, "task_sha256": sha, "commit": commit,
        "at": at, "mac": mac});
    st["last_seen_task_id"] = json!(id);
    std::fs::write(&p, serde_json::to_vec_pretty(&st).unwrap()).unwrap();
    // The ledger line a real approval writes first (an approval the
    // ledger never recorded is a planted one and is refused).
    let entry = json!({"at": at, "event": "approved", "task_id": id,
        "task_sha256": sha, "commit": commit, "mac": mac});
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
    expect_exit!(out, 0, "node set-name {name}");
}

/// `rxnode --repo CHECKOUT publish ID [--push]`.
fn publish_cmd(checkout: &Path, id: &str, push: bool) -> Command {
    let mut c = rxnode_cmd();
    c.arg("--repo").arg(checkout).args(["publish", id]);
    if push {
        c.arg("--push");
    }
    c
}

fn spawn_publish(checkout: &Path, id: &str, push: bool) -> std::process::Child {
    publish_cmd(checkout, id, push)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs")
}

fn publish(checkout: &Path, id: &str, push: bool, answer: Option<&str>) -> Output {
    run_fed(
        &mut publish_cmd(checkout, id, push),
        answer.unwrap_or_default().as_bytes(),
    )
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
    expect_exit!(out, 3, "{why}");
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
