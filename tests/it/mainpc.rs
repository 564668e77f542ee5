//! The main PC's half of the loop — `rxnode results`, `results show`,
//! `results verify`, `results nodes`, `rxnode task new`, `rxnode schema` — and a
//! fleet of named RX nodes publishing to one `rx-node` branch.
//!
//! Everything drives the real binary against real temp Git repositories (a bare
//! origin, a main-PC clone, one clone per RX node) and the simulated radio.
use crate::util::{git, git_out, run_fed, rxnode_cmd, show, start_daemon, BRANCH, TASK_PATH};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

mod fleet;
mod hostile_files;
mod names;
mod own_refs;
mod report;
mod results;
pub(crate) mod schemas;
mod targets;
mod task_new;
mod task_new_body;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `rxnode --repo DIR ARGS` with `stdin`, isolated from the caller's environment.
fn rxnode(dir: &Path, args: &[&str], stdin: &str) -> Output {
    run_fed(
        rxnode_cmd().arg("--repo").arg(dir).args(args),
        stdin.as_bytes(),
    )
}

/// `rxnode --repo DIR ARGS` started with its stdin open, for the caller to type into.
fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    rxnode_cmd()
        .arg("--repo")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs")
}

/// A bare origin, the main PC's clone, and RX nodes cloned on demand.
struct Lab {
    root: tempfile::TempDir,
    origin: PathBuf,
    main: PathBuf,
}

impl Lab {
    /// A plain `git clone -b rx-node` of the origin in `name` (a peer writing by hand).
    fn clone_rx_node(&self, name: &str) -> PathBuf {
        let hand = self.root.path().join(name);
        git(
            self.root.path(),
            &[
                "clone",
                "-q",
                "-b",
                "rx-node",
                self.origin.to_str().unwrap(),
                hand.to_str().unwrap(),
            ],
        );
        hand
    }

    fn new() -> Lab {
        let root = tempfile::tempdir().unwrap();
        let origin = root.path().join("origin.git");
        let main = root.path().join("main-pc");
        git(
            root.path(),
            &[
                "init",
                "--bare",
                "-q",
                "-b",
                BRANCH,
                origin.to_str().unwrap(),
            ],
        );
        git(
            root.path(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                main.to_str().unwrap(),
            ],
        );
        git(&main, &["checkout", "-q", "-b", BRANCH]);
        std::fs::write(main.join("README.md"), "lab project\n").unwrap();
        git(&main, &["add", "README.md"]);
        git(&main, &["commit", "-q", "-m", "start"]);
        git(&main, &["push", "-q", "origin", BRANCH]);
        Lab { root, origin, main }
    }

    /// A fresh RX checkout (cloned from `url`, default the origin's path) named `name`.
    fn node_from(&self, name: &str, url: &str) -> PathBuf {
        let dir = self.root.path().join(format!("rx-{name}"));
        git(
            self.root.path(),
            &["clone", "-q", "-b", BRANCH, url, dir.to_str().unwrap()],
        );
        let out = rxnode(&dir, &["node", "set-name", name], "");
        expect_exit!(out, 0);
        dir
    }

    fn node(&self, name: &str) -> PathBuf {
        self.node_from(name, self.origin.to_str().unwrap())
    }

    /// `rxnode task new` on the main PC (with --force), then commit and push.
    fn post(&self, id: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "task",
            "new",
            "--id",
            id,
            "--title",
            "Check the lab clock",
            "--force",
        ];
        args.extend_from_slice(extra);
        let out = rxnode(&self.main, &args, "");
        expect_exit!(out, 0, "task new {id}");
        git(&self.main, &["add", TASK_PATH]);
        git(&self.main, &["commit", "-q", "-m", &format!("task {id}")]);
        git(&self.main, &["push", "-q", "origin", BRANCH]);
        out
    }

    /// A plan file under the lab folder.
    fn plan_file(&self, name: &str, plan: &str) -> String {
        let p = self.root.path().join(name);
        std::fs::write(&p, plan).unwrap();
        p.display().to_string()
    }
}

/// Approve the posted task on `node` ([A] at the watcher prompt).
fn approve(node: &Path) {
    let out = rxnode(node, &["watch", "--once", "--interval", "0.2"], "a\n");
    expect_exit!(out, 0);
    assert!(stdout(&out).contains("approved"), "{}", show(&out));
}

fn publish(node: &Path, id: &str) -> Output {
    rxnode(node, &["publish", id, "--push"], &format!("PUBLISH {id}\n"))
}

/// A YELLOW plan: one short CLKIN capture on the simulated radio (locked to its reference).
const CLKIN_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=lab-locked,ext_ref=1,tone_hz=100100000",
   "clock_source": "external", "frequency_hz": 100.0e6, "sample_rate_hz": 1.0e6, "gain_db": 20,
   "duration_s": 0.25, "fft_size": 1024, "clkin": {"tone_hz": 100.1e6, "tolerance_ppm": 0.5}}
]}"#;

#[derive(Debug, Deserialize)]
struct Listing {
    results: Vec<Row>,
    total: usize,
}

#[derive(Debug, Deserialize)]
struct Row {
    node: Option<String>,
    task_id: String,
    status: Option<String>,
    risk_level: Option<String>,
    completed_at: Option<String>,
    commit: Option<String>,
    path: String,
    figures: Figures,
    problems: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Figures {
    captures: u64,
    overflows: u64,
    clkin_ppm: Vec<f64>,
    peaks: Vec<Peak>,
}

#[derive(Debug, Deserialize)]
struct Peak {
    frequency_hz: f64,
}

fn listing(main: &Path, args: &[&str]) -> Listing {
    let mut a = vec!["results", "--json"];
    a.extend_from_slice(args);
    let out = rxnode(main, &a, "");
    expect_exit!(out, 0);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}
