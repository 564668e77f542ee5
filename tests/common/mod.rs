//! Test labs: a bare `origin`, a main-PC clone that posts tasks, and an RX clone.
//! Tests may use the `git` program; the product never does.
#![allow(dead_code)]
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BRANCH: &str = "video-development";
pub const TASK_PATH: &str = "docs/handoff/NEXT_RX_TASK.md";

pub struct Lab {
    pub dir: tempfile::TempDir,
    pub origin: PathBuf,
    pub main: PathBuf,
    pub rx: PathBuf,
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args([
            "-c",
            "user.name=Main PC",
            "-c",
            "user.email=main@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The observable Git state of a checkout that rxnode must never change.
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub head: String,
    pub branch: String,
    pub index_sha: String,
    pub staged: String,
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

    pub fn rxnode(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rxnode"));
        c.arg("--repo")
            .arg(&self.rx)
            .env_remove("RXNODE_REMOTE")
            .env_remove("RXNODE_BRANCH")
            .env_remove("RXNODE_TASK_PATH")
            .env_remove("RUST_LOG")
            .env("GIT_TERMINAL_PROMPT", "0");
        c
    }

    /// Run rxnode with `args`, feeding `stdin`, checking the checkout is untouched.
    pub fn run(&self, args: &[&str], stdin: &str) -> Output {
        let before = self.snapshot();
        let mut child = self
            .rxnode()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
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
        use sha2::{Digest, Sha256};
        let index = std::fs::read(self.rx.join(".git/index")).unwrap_or_default();
        Snapshot {
            head: git(&self.rx, &["rev-parse", "HEAD"]),
            branch: git(&self.rx, &["symbolic-ref", "HEAD"]),
            index_sha: hex::encode(Sha256::digest(&index)),
            staged: git(&self.rx, &["ls-files", "--stage"]),
        }
    }

    pub fn porcelain(&self) -> String {
        git(&self.rx, &["status", "--porcelain", "--ignored=no"])
    }

    pub fn local(&self) -> PathBuf {
        self.rx.join(".local")
    }

    pub fn state(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.local().join("rx_agent_state.json")).unwrap())
            .unwrap()
    }

    pub fn ledger_events(&self) -> Vec<serde_json::Value> {
        let t =
            std::fs::read_to_string(self.local().join("rx_agent_ledger.jsonl")).unwrap_or_default();
        t.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
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

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
