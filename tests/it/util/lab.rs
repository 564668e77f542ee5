//! Test labs: a bare `origin`, a main-PC clone that posts tasks, and an RX clone.
//! Tests may use the `git` program; the product never does.
use super::git::{git, snapshot, Snapshot};
use super::proc::{run_fed, rxnode_cmd, show};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BRANCH: &str = "video-development";
pub const TASK_PATH: &str = "docs/handoff/NEXT_RX_TASK.md";

pub struct Lab {
    pub dir: tempfile::TempDir,
    pub origin: PathBuf,
    pub main: PathBuf,
    pub rx: PathBuf,
}

impl Lab {
    pub fn new() -> Lab {
        let dir = tempfile::tempdir().unwrap();
        let origin = dir.path().join("origin.git");
        let main = dir.path().join("main-pc");
        let rx = dir.path().join("rx-laptop");
        git(
            dir.path(),
            &["init", "--bare", "-q", origin.to_str().unwrap()],
        );
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                main.to_str().unwrap(),
            ],
        );
        git(&main, &["checkout", "-q", "-b", BRANCH]);
        std::fs::write(main.join("README.md"), "lab repo\n").unwrap();
        git(&main, &["add", "README.md"]);
        git(&main, &["commit", "-q", "-m", "start"]);
        git(&main, &["push", "-q", "origin", BRANCH]);
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                "-b",
                BRANCH,
                origin.to_str().unwrap(),
                rx.to_str().unwrap(),
            ],
        );
        Lab {
            dir,
            origin,
            main,
            rx,
        }
    }

    pub fn main_head(&self) -> String {
        git(&self.main, &["rev-parse", "HEAD"])
    }

    /// A task header + body with `overrides` replacing (or adding) header fields.
    pub fn task(id: &str, base: &str, overrides: &[(&str, &str)]) -> String {
        let mut fields: Vec<(String, String)> = [
            ("TASK_ID", id),
            ("TASK_TITLE", "Check the lab clock"),
            ("SOURCE_BRANCH", BRANCH),
            ("EXPECTED_HEAD", base),
            ("REQUIRES_APPROVAL", "YES"),
            ("HARDWARE_ACCESS", "NO"),
            ("RF_RX", "NO"),
            ("RF_TX", "NO"),
            ("ALLOW_COMMIT", "NO"),
            ("ALLOW_PUSH", "NO"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in overrides {
            match fields.iter_mut().find(|(fk, _)| fk == k) {
                Some(f) => f.1 = v.to_string(),
                None => fields.push((k.to_string(), v.to_string())),
            }
        }
        let mut s: String = fields.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        s.push_str("\n# Task\n\nA manual task for the watcher tests.\n");
        s
    }

    /// [`Lab::task`] on the main PC's head, with `plan` (if any) as its `rx-plan` block.
    pub fn plan_task(&self, id: &str, overrides: &[(&str, &str)], plan: Option<&str>) -> String {
        let mut t = Lab::task(id, &self.main_head(), overrides);
        if let Some(p) = plan {
            t.push_str(&format!("\n```rx-plan\n{p}\n```\n"));
        }
        t
    }

    /// Commit `text` as the task file on the main PC and push; returns the commit.
    pub fn post(&self, text: &str) -> String {
        self.post_file(TASK_PATH, text.as_bytes())
    }

    pub fn post_file(&self, path: &str, bytes: &[u8]) -> String {
        let p = self.main.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        git(&self.main, &["add", path]);
        git(&self.main, &["commit", "-q", "-m", &format!("post {path}")]);
        git(&self.main, &["push", "-q", "origin", BRANCH]);
        self.main_head()
    }

    /// Approve the posted task `id` with the watcher (`A`): it must end approved.
    pub fn approve(&self, id: &str) {
        let out = self.watch_once("A\n");
        assert_eq!(out.status.code(), Some(0), "watch --once: {}", show(&out));
        assert_eq!(self.status_of(id), "approved", "{id}: {}", show(&out));
    }

    /// Post [`Lab::plan_task`] and [`Lab::approve`] it; returns the task text as posted.
    pub fn post_and_approve(
        &self,
        id: &str,
        overrides: &[(&str, &str)],
        plan: Option<&str>,
    ) -> String {
        let t = self.plan_task(id, overrides, plan);
        self.post(&t);
        self.approve(id);
        t
    }

    /// `rxnode --repo <the RX checkout>`, isolated from the caller's environment.
    pub fn rxnode(&self) -> Command {
        let mut c = rxnode_cmd();
        c.arg("--repo").arg(&self.rx);
        c
    }

    /// Run rxnode with `args`, feeding `stdin`, checking the checkout is untouched.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        let before = self.snapshot();
        let out = run_fed(self.rxnode().args(args), stdin.as_bytes());
        let after = self.snapshot();
        assert_eq!(before, after, "rxnode {args:?} changed the checkout");
        assert_eq!(
            self.porcelain(),
            "",
            "git status is not clean after rxnode {args:?}"
        );
        out
    }

    pub fn watch_once(&self, stdin: &str) -> Output {
        self.run(&["watch", "--once", "--interval", "0.2"], stdin)
    }

    pub fn snapshot(&self) -> Snapshot {
        snapshot(&self.rx)
    }

    pub fn porcelain(&self) -> String {
        git(&self.rx, &["status", "--porcelain", "--ignored=no"])
    }

    pub fn local(&self) -> PathBuf {
        self.rx.join(".local")
    }

    /// The rxsim event log the simulated radios of this lab write (`RXSIM_EVENT_LOG`).
    pub fn events_log(&self) -> PathBuf {
        self.dir.path().join("rxsim-events.log")
    }

    /// The operator's policy file of the RX checkout.
    pub fn set_policy(&self, json: &str) {
        std::fs::create_dir_all(self.local()).unwrap();
        std::fs::write(self.local().join("rxnode-policy.json"), json).unwrap();
    }

    pub fn remove_policy(&self) {
        let _ = std::fs::remove_file(self.local().join("rxnode-policy.json"));
    }

    /// The outbox folder of task `id`.
    pub fn outbox(&self, id: &str) -> PathBuf {
        self.local().join("rx_agent_outbox").join(id)
    }

    pub fn state(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.local().join("rx_agent_state.json")).unwrap())
            .unwrap()
    }

    pub fn ledger_events(&self) -> Vec<serde_json::Value> {
        ledger_events(&self.rx)
    }

    pub fn count_events(&self, event: &str, id: &str) -> usize {
        self.ledger_events()
            .iter()
            .filter(|e| e["event"] == event && e["task_id"] == id)
            .count()
    }

    pub fn status_of(&self, id: &str) -> String {
        self.state()["tasks"][id]["status"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    }
}

/// Every line of the ledger of `checkout`, each of which must be whole JSON.
pub fn ledger_events(checkout: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(checkout.join(".local/rx_agent_ledger.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("ledger line {l:?}: {e}")))
        .collect()
}

/// The MAC this node's key gives an approval of `id` (text `sha`, `commit`,
/// time `at`), creating the key as rxnode does (`.git/rxnode/key`, 32 random
/// bytes, 0600) when the checkout has none: for fixtures that write an
/// approval by hand as the node itself would have.
pub fn node_mac(checkout: &Path, id: &str, sha: &str, commit: &str, at: &str) -> String {
    let key_p = checkout.join(".git/rxnode/key");
    if !key_p.exists() {
        std::fs::create_dir_all(key_p.parent().unwrap()).unwrap();
        let key: [u8; 32] = rand::random();
        std::fs::write(&key_p, key).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_p, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
    let key = std::fs::read(&key_p).unwrap();
    rxnode_interlock::record_mac(
        &key,
        &rxnode_interlock::RecordFields {
            kind: rxnode_interlock::RecordKind::Approval,
            task_id: id,
            task_sha256: sha,
            commit,
            at,
        },
    )
    .unwrap()
}
