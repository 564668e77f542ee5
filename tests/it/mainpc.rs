//! Issue 18: the main PC's half of the loop — `rxnode results`, `results show`,
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

const PRIVATE_REF: &str = "refs/rxnode/main-pc/rx-node";

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
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
        assert_eq!(out.status.code(), Some(0), "task new {id}: {}", show(&out));
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}

/// Everything about the main PC's clone that `results` must leave alone.
fn main_pc_state(main: &Path) -> (String, String, Vec<u8>, String) {
    let refs: String = git(main, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter(|l| !l.starts_with(PRIVATE_REF))
        .collect::<Vec<_>>()
        .join("\n");
    (
        refs,
        git(main, &["symbolic-ref", "HEAD"]),
        std::fs::read(main.join(".git/index")).unwrap_or_default(),
        git(main, &["status", "--porcelain=v1", "--untracked-files=all"]),
    )
}

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
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
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
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("node name"),
            "{}",
            show(&out)
        );
    }
    assert!(!rx.join(".local/rxnode-node.json").exists());
    let out = rxnode(&rx, &["--json", "node", "show"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["name"],
        Value::Null
    );

    // A task approved and "run" (manual) on the unnamed node: publishing is refused with the fix.
    lab.post("NAME_T1", &[]);
    approve(&rx);
    let out = publish(&rx, "NAME_T1");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
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

    // Named now — but the result was written unnamed: it is published under the name
    // (path, LOG_META, commit message) and its JSON stays as run.
    let out = rxnode(&rx, &["node", "set-name", "LAB-RX2"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = rxnode(&rx, &["--json", "node", "show"], "");
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["name"],
        "LAB-RX2"
    );
    assert_eq!(
        git(&rx, &["status", "--porcelain"]),
        "",
        ".local/ must stay ignored"
    );
    let out = publish(&rx, "NAME_T1");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
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
    approve(&rx);
    let json = rx.join(".local/rx_agent_outbox/NAME_T2/RX_RESULT.json");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        v["node"]["name"], "LAB-RX2",
        "the result carries the node name"
    );
    let out = rxnode(&rx, &["node", "set-name", "LAB-RX3"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = publish(&rx, "NAME_T2");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("LAB-RX2") && err.contains("LAB-RX3"), "{err}");

    // A damaged node file is an error, never "no name".
    std::fs::write(rx.join(".local/rxnode-node.json"), "{\"name\": 5}").unwrap();
    let out = rxnode(&rx, &["node", "show"], "");
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rxnode-node.json"),
        "{}",
        show(&out)
    );
}

// ----------------------------------------------------------------- the results

#[test]
fn results_list_filter_show_verify_and_nodes_from_a_private_ref() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    // Both nodes answer the same manual task; their results land side by side.
    lab.post("RES_MANUAL_1", &[]);
    for n in [&a, &b] {
        approve(n);
        let out = publish(n, "RES_MANUAL_1");
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    }
    // LAB-A alone runs a YELLOW CLKIN capture on the simulated radio.
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post("RES_CLKIN_2", &["--rx", "--plan", &plan]);
    approve(&a);
    let out = rxnode(&a, &["--sim", "run", "RES_CLKIN_2"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = publish(&a, "RES_CLKIN_2");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    let before = main_pc_state(&lab.main);
    let l = listing(&lab.main, &[]);
    assert_eq!(
        main_pc_state(&lab.main),
        before,
        "results touched more than {PRIVATE_REF}"
    );
    assert_eq!(
        git(&lab.main, &["rev-parse", PRIVATE_REF]),
        git(&lab.origin, &["rev-parse", "rx-node"])
    );
    assert_eq!(l.total, 3);
    assert_eq!(l.results.len(), 3);
    // Newest first: the capture completed last.
    let first = &l.results[0];
    assert_eq!(first.task_id, "RES_CLKIN_2");
    assert_eq!(first.node.as_deref(), Some("LAB-A"));
    assert_eq!(first.status.as_deref(), Some("PASS"));
    assert_eq!(first.risk_level.as_deref(), Some("YELLOW"));
    assert!(first.completed_at.is_some());
    assert_eq!(first.path, "rx-results/RES_CLKIN_2/LAB-A");
    assert_eq!(first.figures.captures, 1);
    assert_eq!(first.figures.overflows, 0);
    assert_eq!(first.figures.clkin_ppm.len(), 1);
    assert!(
        first.figures.clkin_ppm[0].abs() < 0.1,
        "{:?}",
        first.figures
    );
    assert!(
        (first.figures.peaks[0].frequency_hz - 100.1e6).abs() < 5e3,
        "{:?}",
        first.figures.peaks
    );
    let mut manual: Vec<(Option<&str>, &str)> = l.results[1..]
        .iter()
        .map(|r| (r.node.as_deref(), r.task_id.as_str()))
        .collect();
    manual.sort();
    assert_eq!(
        manual,
        [
            (Some("LAB-A"), "RES_MANUAL_1"),
            (Some("LAB-B"), "RES_MANUAL_1")
        ]
    );
    for r in &l.results {
        assert!(r.problems.is_empty(), "{r:?}");
        // The commit is the one that added the result on rx-node.
        let c = r.commit.as_deref().expect("commit");
        let added = git(&lab.origin, &["show", "--name-only", "--format=", c]);
        assert!(
            added.contains(&format!("{}/RX_RESULT.json", r.path)),
            "{added}"
        );
    }

    // Filters.
    let by_node = listing(&lab.main, &["--node", "LAB-B"]);
    assert_eq!(by_node.results.len(), 1);
    assert_eq!(by_node.results[0].node.as_deref(), Some("LAB-B"));
    let passed = listing(&lab.main, &["--status", "PASS"]);
    assert_eq!(passed.results.len(), 1);
    assert_eq!(passed.results[0].task_id, "RES_CLKIN_2");
    let not_run = listing(&lab.main, &["--status", "NOT RUN", "--node", "LAB-A"]);
    assert_eq!(not_run.results.len(), 1);
    assert_eq!(not_run.results[0].task_id, "RES_MANUAL_1");
    assert_eq!(listing(&lab.main, &["--since", "1h"]).results.len(), 1);
    assert_eq!(
        listing(&lab.main, &["--since", "2999-01-01"]).results.len(),
        0
    );
    for bad in [
        &["--status", "MAYBE"][..],
        &["--since", "yesterday"],
        &["--node", "a b"],
    ] {
        let mut args = vec!["results"];
        args.extend_from_slice(bad);
        let out = rxnode(&lab.main, &args, "");
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", show(&out));
    }
    let human = rxnode(&lab.main, &["results"], "");
    assert_eq!(human.status.code(), Some(0));
    let h = stdout(&human);
    assert!(
        h.contains("LAB-A") && h.contains("LAB-B") && h.contains("CLKIN"),
        "{h}"
    );

    // show: one result; two nodes answered RES_MANUAL_1, so --from picks one.
    let out = rxnode(&lab.main, &["results", "show", "RES_MANUAL_1"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LAB-A") && err.contains("LAB-B") && err.contains("--from"),
        "{err}"
    );
    let out = rxnode(
        &lab.main,
        &["results", "show", "RES_MANUAL_1", "--from", "LAB-B"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out).contains("| Status | NOT RUN |"),
        "{}",
        show(&out)
    );
    let out = rxnode(&lab.main, &["--json", "results", "show", "RES_CLKIN_2"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let published: Value = serde_json::from_str(&git(
        &lab.origin,
        &[
            "show",
            "rx-node:rx-results/RES_CLKIN_2/LAB-A/RX_RESULT.json",
        ],
    ))
    .unwrap();
    assert_eq!(shown, published);
    assert_eq!(shown["node"]["name"], "LAB-A");
    let out = rxnode(&lab.main, &["results", "show", "NO_SUCH"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));

    // verify: every node's result of an ID, or one.
    let out = rxnode(
        &lab.main,
        &["--json", "results", "verify", "RES_MANUAL_1"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 2, "{v}");
    let out = rxnode(
        &lab.main,
        &["results", "verify", "RES_CLKIN_2", "--from", "LAB-A"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(stdout(&out).starts_with("OK "), "{}", show(&out));

    // nodes: count and last result per node.
    let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{v}");
    assert_eq!(nodes[0]["node"], "LAB-A");
    assert_eq!(nodes[0]["results"], 2);
    assert_eq!(nodes[0]["last_task_id"], "RES_CLKIN_2");
    assert_eq!(nodes[0]["last_result_at"], json!(first.completed_at));
    assert_eq!(nodes[1]["node"], "LAB-B");
    assert_eq!(nodes[1]["results"], 1);
    assert_eq!(main_pc_state(&lab.main), before);

    // --no-fetch reads the private copy only.
    let out = rxnode(&lab.main, &["--json", "results", "--no-fetch"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

/// A commit pushed to rx-node by something that is not a clean publication:
/// `results verify` names what is wrong; `results show` never prints raw
/// terminal control sequences.
#[test]
fn verify_catches_a_tampered_or_padded_result_and_show_escapes_control_characters() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("TAMPER_1", &[]);
    approve(&a);
    assert_eq!(publish(&a, "TAMPER_1").status.code(), Some(0));
    lab.post("TAMPER_2", &[]);
    approve(&a);
    assert_eq!(publish(&a, "TAMPER_2").status.code(), Some(0));
    let out = rxnode(&lab.main, &["results", "verify", "TAMPER_1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    // Someone with push access edits TAMPER_1's Markdown (status and an escape
    // sequence) and drops an extra file beside TAMPER_2's result.
    let hand = lab.root.path().join("hand");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            "-b",
            "rx-node",
            lab.origin.to_str().unwrap(),
            hand.to_str().unwrap(),
        ],
    );
    let md = hand.join("rx-results/TAMPER_1/LAB-A/RX_RESULT.md");
    let t = std::fs::read_to_string(&md)
        .unwrap()
        .replace("| Status | NOT RUN |", "| Status | PASS |\u{1b}[2J");
    std::fs::write(&md, t).unwrap();
    std::fs::write(hand.join("rx-results/TAMPER_2/LAB-A/notes.txt"), "hello\n").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "touch-ups"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_1"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("summary row"), "{problems}");
    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_2"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("notes.txt"), "{problems}");
    // A result whose own commit is clean but whose tree was later padded is still
    // flagged by the file check; the commit check looks at the adding commit.
    let human = rxnode(&lab.main, &["results", "verify", "TAMPER_2"], "");
    assert!(stdout(&human).starts_with("FAIL "), "{}", show(&human));

    let out = rxnode(&lab.main, &["results", "show", "TAMPER_1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!out.stdout.contains(&0x1b), "raw ESC reached the terminal");
    assert!(stdout(&out).contains("\\u{1b}[2J"), "{}", show(&out));

    // A hand-made commit that adds a result folder plus a file elsewhere: the
    // commit check names the extra file.
    let t3 = hand.join("rx-results/TAMPER_3/LAB-A");
    std::fs::create_dir_all(&t3).unwrap();
    for f in ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"] {
        std::fs::copy(hand.join("rx-results/TAMPER_2/LAB-A").join(f), t3.join(f)).unwrap();
    }
    std::fs::write(hand.join("evil.sh"), "#!/bin/sh\n").unwrap();
    git(&hand, &["add", "-A"]);
    git(
        &hand,
        &[
            "commit",
            "-q",
            "-m",
            "rx-results: TAMPER_3\n\nTask: TAMPER_3\nNode-Name: LAB-A\n",
        ],
    );
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_3"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("also adds evil.sh"), "{problems}");
    assert!(problems.contains("task_id is not TAMPER_3"), "{problems}");

    // An oversize result and folders that are neither task IDs nor node names are
    // named, never loaded or followed.
    let big = hand.join("rx-results/TAMPER_4/LAB-A");
    std::fs::create_dir_all(&big).unwrap();
    std::fs::write(big.join("RX_RESULT.json"), vec![b' '; 300 * 1024]).unwrap();
    std::fs::create_dir_all(hand.join("rx-results/bad id/LAB-A")).unwrap();
    std::fs::write(hand.join("rx-results/bad id/LAB-A/x"), "x").unwrap();
    std::fs::create_dir_all(hand.join("rx-results/TAMPER_5/not a node")).unwrap();
    std::fs::write(hand.join("rx-results/TAMPER_5/not a node/x"), "x").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "junk"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["results"].as_array().unwrap();
    let t4 = rows
        .iter()
        .find(|r| r["task_id"] == "TAMPER_4")
        .expect("TAMPER_4 listed");
    assert!(t4["problems"].to_string().contains("307200 bytes"), "{t4}");
    let tree_problems = v["problems"].to_string();
    assert!(
        tree_problems.contains("bad id") && tree_problems.contains("not a node"),
        "{tree_problems}"
    );
    git(&hand, &["reset", "-q", "--hard", "HEAD~1"]);
    git(&hand, &["push", "-q", "--force", "origin", "rx-node"]);

    // A force-push that drops a result is reported on the next fetch.
    git(&hand, &["reset", "-q", "--hard", "HEAD~3"]);
    git(&hand, &["push", "-q", "--force", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rx-node was rewritten"),
        "{}",
        show(&out)
    );
}

// ------------------------------------------------------------------- task new

#[test]
fn task_new_writes_a_valid_task_on_the_branch_head_and_never_commits() {
    let lab = Lab::new();
    let head = git(&lab.main, &["rev-parse", "HEAD"]);
    let origin_before = git(&lab.origin, &["rev-parse", BRANCH]);
    let plan = lab.plan_file("plan.json", CLKIN_PLAN);
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "task",
            "new",
            "--id",
            "NEW_1",
            "--title",
            "CLKIN on bench 3",
            "--rx",
            "--plan",
            &plan,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["expected_head"], head.as_str());
    assert_eq!(v["expected_head_ref"], format!("refs/heads/{BRANCH}"));
    assert_eq!(v["risk_level"], "YELLOW");
    assert_eq!(v["steps"], json!(["rx_capture"]));
    let task = std::fs::read_to_string(lab.main.join(TASK_PATH)).unwrap();
    assert!(task.starts_with("TASK_ID = NEW_1\n"), "{task}");
    assert!(
        task.contains(&format!("EXPECTED_HEAD = {head}\n")),
        "{task}"
    );
    assert!(
        task.contains("HARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\n"),
        "{task}"
    );
    assert!(task.contains("ALLOW_PUSH = RX_RESULT_ONLY\n"), "{task}");
    assert!(task.contains("```rx-plan\n{\"steps\""), "{task}");
    // It validates exactly as the watcher's validator says.
    let val = rxnode(
        &lab.main,
        &[
            "--json",
            "validate",
            lab.main.join(TASK_PATH).to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(val.status.code(), Some(0), "{}", show(&val));
    // Nothing committed or pushed.
    assert_eq!(git(&lab.main, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&lab.origin, &["rev-parse", BRANCH]), origin_before);
    assert_eq!(git(&lab.main, &["status", "--porcelain"]), "?? docs/");
    let commands: Vec<String> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert!(
        commands
            .iter()
            .any(|c| c.ends_with(&format!("push origin {BRANCH}"))),
        "{commands:?}"
    );

    // Human output names the risk, the head and why, and the commands.
    std::fs::remove_file(lab.main.join(TASK_PATH)).unwrap();
    let out = rxnode(
        &lab.main,
        &[
            "task",
            "new",
            "--id",
            "NEW_1",
            "--title",
            "CLKIN on bench 3",
            "--rx",
            "--plan",
            &plan,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let h = stdout(&out);
    assert!(h.contains("risk:          YELLOW"), "{h}");
    assert!(
        h.contains(&format!("EXPECTED_HEAD: {head} = refs/heads/{BRANCH}")),
        "{h}"
    );
    assert!(h.contains("strict ancestor"), "{h}");
    assert!(h.contains("Nothing was committed or pushed"), "{h}");

    // No overwrite without --force; the file is unchanged.
    let before = std::fs::read(lab.main.join(TASK_PATH)).unwrap();
    let out = rxnode(
        &lab.main,
        &["task", "new", "--id", "NEW_2", "--title", "other"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--force"),
        "{}",
        show(&out)
    );
    assert_eq!(std::fs::read(lab.main.join(TASK_PATH)).unwrap(), before);

    // Refusals name the problem and write nothing.
    let tx_plan = lab.plan_file(
        "tx.json",
        r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": 433.92e6,
            "sample_rate_hz": 2e6, "tone_offset_hz": 5e4, "gain_db": 0, "duration_s": 1}]}"#,
    );
    let out_file = lab.root.path().join("draft.md");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--id", "BAD_1", "--title", "t", "--rx", "--plan", &tx_plan],
            "RF_TX",
        ),
        (
            vec!["--id", "BAD_2", "--title", "t", "--rx", "--risk", "GREEN"],
            "RISK_LEVEL: declared GREEN is lower than the derived YELLOW",
        ),
        (vec!["--id", "../x", "--title", "t"], "--id"),
        (
            vec!["--id", "BAD_3", "--title", "a\nRF_TX = YES"],
            "--title",
        ),
        (
            vec!["--id", "BAD_4", "--title", "t", "--risk", "ORANGE"],
            "--risk",
        ),
        (
            vec![
                "--id",
                "BAD_5",
                "--title",
                "t",
                "--plan",
                "/no/such/plan.json",
            ],
            "--plan",
        ),
    ];
    for (args, needle) in cases {
        let mut a = vec!["task", "new", "--out", out_file.to_str().unwrap()];
        a.extend_from_slice(&args);
        let out = rxnode(&lab.main, &a, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{args:?}: {}",
            show(&out)
        );
        assert!(!out_file.exists(), "{args:?} wrote a file");
    }

    // The plan from stdin, to --out; then the printed commands post it for real and
    // a node's watcher accepts it.
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "task",
            "new",
            "--id",
            "NEW_3",
            "--title",
            "from stdin",
            "--rx",
            "--plan",
            "-",
            "--force",
        ],
        CLKIN_PLAN,
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for c in v["commands"].as_array().unwrap() {
        let c = c.as_str().unwrap();
        let run = Command::new("sh")
            .arg("-c")
            .arg(c)
            .current_dir(&lab.main)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Main PC")
            .env("GIT_AUTHOR_EMAIL", "main@example.invalid")
            .env("GIT_COMMITTER_NAME", "Main PC")
            .env("GIT_COMMITTER_EMAIL", "main@example.invalid")
            .output()
            .unwrap();
        assert!(run.status.success(), "{c}: {}", show(&run));
    }
    assert_eq!(git(&lab.main, &["status", "--porcelain"]), "");
    let rx = lab.node("LAB-NEW");
    approve(&rx);
    let st: Value =
        serde_json::from_slice(&std::fs::read(rx.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert!(st["approvals"]["NEW_3"].is_object(), "{st}");
}

// -------------------------------------------------------------------- schemas

/// The interpreter for the schema checks (`RXNODE_TEST_PYTHON` overrides, e.g. a venv).
fn python() -> String {
    std::env::var("RXNODE_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Run the independent validator; every case's verdict by name.
fn jsonschema_verdicts(cases: &[(String, &str, Value)]) -> Vec<(String, bool, Vec<String>)> {
    let d = tempfile::tempdir().unwrap();
    let mut schemas = serde_json::Map::new();
    for kind in ["plan", "result", "policy", "task"] {
        let out = rxnode(d.path(), &["schema", kind], "");
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let s: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
        schemas.insert(kind.into(), s);
    }
    let req = json!({
        "schemas": schemas,
        "cases": cases.iter().map(|(n, s, i)| json!({"name": n, "schema": s, "instance": i})).collect::<Vec<_>>(),
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/schema_check.py");
    let mut child = Command::new(python())
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{} must run the schema checks (scripts/setup.sh): {e}",
                python()
            )
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(req.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the independent validator failed (pip install jsonschema; scripts/setup.sh): {}",
        show(&out)
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    v.into_iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["valid"].as_bool().unwrap(),
                r["errors"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e.as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// A task fixture as the task schema's `{"header": {...}, "plan": ...}`, plus
/// how many `rx-plan` blocks it has and whether their JSON parsed.
fn task_document(path: &Path) -> (Value, usize, bool) {
    let raw = std::fs::read_to_string(path).unwrap();
    let t = raw.trim_start_matches('\u{feff}').replace("\r\n", "\n");
    let (head, body) = t.split_once("\n\n").unwrap_or((&t, ""));
    let mut header = serde_json::Map::new();
    for l in head.lines() {
        if let Some((k, v)) = l.split_once('=') {
            header.insert(k.trim().to_owned(), Value::String(v.trim().to_owned()));
        }
    }
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for l in body.lines() {
        match &mut cur {
            None if l.trim_start().starts_with("```rx-plan") => cur = Some(String::new()),
            Some(b) if l.trim() == "```" => {
                blocks.push(std::mem::take(b));
                cur = None;
            }
            Some(b) => {
                b.push_str(l);
                b.push('\n');
            }
            None => {}
        }
    }
    let parsed: Vec<Option<Value>> = blocks
        .iter()
        .map(|b| serde_json::from_str(b).ok())
        .collect();
    let ok = parsed.iter().all(Option::is_some);
    let plan = parsed.into_iter().next().flatten().unwrap_or(Value::Null);
    (json!({"header": header, "plan": plan}), blocks.len(), ok)
}

#[test]
fn the_schemas_are_draft_2020_12_and_the_files_docs_link() {
    let d = tempfile::tempdir().unwrap();
    for kind in ["plan", "result", "policy", "task"] {
        let out = rxnode(d.path(), &["schema", kind], "");
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{kind}.schema.json"));
        assert_eq!(
            stdout(&out),
            std::fs::read_to_string(&file).unwrap(),
            "{kind}"
        );
        let s: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    }
    let protocol =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/protocol.md"))
            .unwrap();
    for kind in ["plan", "result", "policy", "task"] {
        assert!(
            protocol.contains(&format!("schemas/{kind}.schema.json")),
            "docs/protocol.md does not link schemas/{kind}.schema.json"
        );
    }
    let out = rxnode(d.path(), &["schema", "nonsense"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_fixture_validates_or_fails_as_the_parser_says_with_an_independent_validator() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut cases = Vec::new();
    let mut expect = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "md") && p.file_name().unwrap() != "README.md"
        })
        .collect();
    files.sort();
    let mut invalid_plans = 0;
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let valid = name.starts_with("valid_") || name == "watcher_test_task.md";
        let (doc, blocks, parsed) = task_document(f);
        if valid {
            // The parser agrees first (so the fixture is what its name says).
            let out = rxnode(&fixtures, &["validate", f.to_str().unwrap()], "");
            assert_eq!(out.status.code(), Some(0), "{name}: {}", show(&out));
            assert!(blocks <= 1 && parsed, "{name}");
            cases.push((format!("{name} as a task"), "task", doc.clone()));
            expect.push((format!("{name} as a task"), true));
            if !doc["plan"].is_null() {
                cases.push((format!("{name} plan"), "plan", doc["plan"].clone()));
                expect.push((format!("{name} plan"), true));
            }
        } else if name.starts_with("invalid_plan_") {
            invalid_plans += 1;
            let out = rxnode(&fixtures, &["validate", f.to_str().unwrap()], "");
            assert_eq!(out.status.code(), Some(2), "{name}: {}", show(&out));
            if !parsed {
                // Not JSON: no JSON validator can accept it.
                assert_eq!(name, "invalid_plan_bad_json.md");
                continue;
            }
            if blocks > 1 {
                // Two rx-plan blocks cannot even be written as one task document.
                assert_eq!(name, "invalid_plan_two_blocks.md");
                continue;
            }
            cases.push((format!("{name} as a task"), "task", doc.clone()));
            expect.push((format!("{name} as a task"), false));
        }
    }
    assert_eq!(
        invalid_plans, 8,
        "the invalid_plan_* fixtures changed: review this test"
    );
    // Plan-only failures (no header needed) fail the plan schema alone too.
    for name in [
        "invalid_plan_unknown_field.md",
        "invalid_plan_unknown_op.md",
        "invalid_plan_nonpositive.md",
    ] {
        let (doc, _, _) = task_document(&fixtures.join(name));
        cases.push((format!("{name} plan"), "plan", doc["plan"].clone()));
        expect.push((format!("{name} plan"), false));
    }
    // The forms the parsers take (issue 17): rx_sweep exactly as DESIGN §8 names it,
    // and gain_db per element.
    let extra = [
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "sample_rate_hz": 10e6, "gain_db": 20, "dwell_s": 0.05, "settle_s": 0.01,
            "crop": 0.25, "repeats": 1}]}),
            true,
        ),
        (
            json!({"steps": [{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 1e8,
            "sample_rate_hz": 2e6, "duration_s": 1, "gain_db": {"LNA": 16, "VGA": 20}}]}),
            true,
        ),
        (
            json!({"steps": [{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 1e8,
            "sample_rate_hz": 2e6, "duration_s": 1, "gain_db": {"LNA": "max"}}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "crop": 1.0}]}),
            false,
        ),
        (
            json!({"steps": [{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "power_w": 5}]}),
            false,
        ),
        (json!({"steps": []}), false),
        (json!({"steps": [{"op": "inventory"}], "extra": 1}), false),
        (
            json!({"steps": [{"op": "clock_check", "device": ""}]}),
            false,
        ),
    ];
    for (i, (plan, ok)) in extra.into_iter().enumerate() {
        cases.push((format!("extra plan {i}"), "plan", plan));
        expect.push((format!("extra plan {i}"), ok));
    }
    // Policies: the demo's, the defaults ({}), and broken ones.
    let policies = [
        (
            json!({"rx": {"max_duration_s": 10, "max_sample_rate_hz": 20000000, "max_gain_db": 50,
            "max_iq_bytes": 104857600}, "tx": {"allowed_ranges_hz": [[433050000, 434790000]],
            "max_gain_db": 10, "max_duration_s": 2}}),
            true,
        ),
        (json!({}), true),
        (json!({"rx": {"max_duration_s": -1}}), false),
        (
            json!({"tx": {"allowed_ranges_hz": [[1, 2, 3]], "max_gain_db": 0, "max_duration_s": 1}}),
            false,
        ),
        (
            json!({"rx": {"max_duration_s": 5}, "tx_enabled": true}),
            false,
        ),
    ];
    for (i, (p, ok)) in policies.into_iter().enumerate() {
        cases.push((format!("policy {i}"), "policy", p));
        expect.push((format!("policy {i}"), ok));
    }
    let verdicts = jsonschema_verdicts(&cases);
    assert_eq!(verdicts.len(), expect.len());
    for ((name, valid, errors), (ename, want)) in verdicts.iter().zip(&expect) {
        assert_eq!(name, ename);
        assert_eq!(
            valid, want,
            "{name}: schema says valid={valid}, expected {want}; errors {errors:?}"
        );
    }
}

#[test]
fn every_result_rxnode_writes_validates_against_the_result_schema() {
    let lab = Lab::new();
    let a = lab.node("LAB-SCHEMA");
    let mut cases = Vec::new();
    // A manual task's skeleton (NOT RUN), as approved.
    lab.post("SCH_MANUAL", &[]);
    approve(&a);
    // A real capture run on the simulated radio (PASS), and a mis-clocked one (FAIL).
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post("SCH_CLKIN", &["--rx", "--plan", &plan]);
    approve(&a);
    assert_eq!(
        rxnode(&a, &["--sim", "run", "SCH_CLKIN"], "").status.code(),
        Some(0)
    );
    let bad_clock = CLKIN_PLAN
        .replace("serial=lab-locked,ext_ref=1", "serial=lab-free,ppm=2.5")
        .replace("\"external\"", "\"internal\"");
    let plan2 = lab.plan_file("clkin2.json", &bad_clock);
    lab.post("SCH_FREE", &["--rx", "--plan", &plan2]);
    approve(&a);
    assert_eq!(
        rxnode(&a, &["--sim", "run", "SCH_FREE"], "").status.code(),
        Some(1)
    );
    for id in ["SCH_MANUAL", "SCH_CLKIN", "SCH_FREE"] {
        let p = a.join(format!(".local/rx_agent_outbox/{id}/RX_RESULT.json"));
        let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["node"]["name"], "LAB-SCHEMA");
        cases.push((id.to_owned(), "result", v));
    }
    // The golden result fixture.
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/results/FIX_YELLOW_001/RX_RESULT.json");
    let g: Value = serde_json::from_slice(&std::fs::read(&golden).unwrap()).unwrap();
    cases.push(("golden".into(), "result", g.clone()));
    let n_good = cases.len();
    // And the schema can fail: broken variants of a real result.
    let real = cases[1].2.clone();
    let mut broken = Vec::new();
    let mut b = real.clone();
    b["status"] = json!("MAYBE");
    broken.push(b);
    let mut b = real.clone();
    b["captures"][0]["iq_files"] =
        json!([{"path": "/home/op/.local/x.cf32", "bytes": 1, "sha256": "0".repeat(64)}]);
    broken.push(b);
    let mut b = real.clone();
    b["node"]["name"] = json!("bad name");
    broken.push(b);
    let mut b = real.clone();
    b.as_object_mut().unwrap().remove("timeline");
    broken.push(b);
    let mut b = real;
    b["surprise"] = json!(1);
    broken.push(b);
    for (i, b) in broken.into_iter().enumerate() {
        cases.push((format!("broken {i}"), "result", b));
    }
    let verdicts = jsonschema_verdicts(&cases);
    for (i, (name, valid, errors)) in verdicts.iter().enumerate() {
        assert_eq!(
            *valid,
            i < n_good,
            "{name}: valid={valid}; errors {errors:?}"
        );
    }
}

// ---------------------------------------------------------------------- fleet

/// Issue 18 item 5: eight named nodes run the same task and publish at once to
/// one origin served by `git daemon`; every result lands, none is lost or
/// overwritten, and a fresh main-PC clone lists all eight with the right nodes.
#[test]
fn a_fleet_of_eight_nodes_publishes_concurrently_over_git_daemon() {
    let lab = Lab::new();
    let daemon = start_daemon(lab.root.path())
        .expect("git daemon runs on loopback (Debian's `git` package carries it)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let names: Vec<String> = (1..=8).map(|i| format!("FLEET-RX{i}")).collect();
    let nodes: Vec<PathBuf> = names.iter().map(|n| lab.node_from(n, &url)).collect();
    // One CLKIN task for the whole fleet (the same check on every laptop).
    let plan = lab.plan_file("fleet.json", CLKIN_PLAN);
    lab.post("FLEET_CLKIN_001", &["--rx", "--plan", &plan]);
    for n in &nodes {
        approve(n);
        let out = rxnode(n, &["--sim", "run", "FLEET_CLKIN_001"], "");
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    }
    // All eight publish at once: start them, then confirm all together.
    let started = Instant::now();
    let mut children: Vec<_> = nodes
        .iter()
        .map(|n| spawn(n, &["--json", "publish", "FLEET_CLKIN_001", "--push"]))
        .collect();
    for c in &mut children {
        c.stdin
            .take()
            .unwrap()
            .write_all(b"PUBLISH FLEET_CLKIN_001\n")
            .unwrap();
    }
    let mut attempts = Vec::new();
    for (c, name) in children.into_iter().zip(&names) {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {}", show(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["node"], name.as_str());
        attempts.push(v["push_attempts"].as_u64().unwrap());
    }
    let elapsed = started.elapsed();
    let retries: u64 = attempts.iter().map(|a| a - 1).sum();
    eprintln!(
        "fleet: 8 nodes published FLEET_CLKIN_001 concurrently over git:// in {:.0} ms; push attempts {attempts:?} ({retries} retries)",
        elapsed.as_secs_f64() * 1e3
    );

    // On origin: eight folders, three files each, a linear history of eight commits.
    let files = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert_eq!(files.lines().count(), 24, "{files}");
    for n in &names {
        for f in ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"] {
            let p = format!("rx-results/FLEET_CLKIN_001/{n}/{f}");
            assert!(files.lines().any(|l| l == p), "{p} lost:\n{files}");
        }
        let j: Value = serde_json::from_str(&git(
            &lab.origin,
            &[
                "show",
                &format!("rx-node:rx-results/FLEET_CLKIN_001/{n}/RX_RESULT.json"),
            ],
        ))
        .unwrap();
        assert_eq!(
            j["node"]["name"],
            n.as_str(),
            "{n}'s folder holds another node's result"
        );
    }
    let history = git(&lab.origin, &["rev-list", "--parents", "rx-node"]);
    assert_eq!(history.lines().count(), 8, "{history}");
    assert!(
        history.lines().all(|l| l.split(' ').count() <= 2),
        "a merge: {history}"
    );

    // A fresh main-PC clone lists all eight, each with its node.
    let fresh = lab.root.path().join("fresh-main");
    git(
        lab.root.path(),
        &["clone", "-q", &url, fresh.to_str().unwrap()],
    );
    let l = listing(&fresh, &[]);
    assert_eq!(l.results.len(), 8);
    let mut seen: Vec<String> = l
        .results
        .iter()
        .map(|r| {
            assert_eq!(r.task_id, "FLEET_CLKIN_001");
            assert_eq!(r.status.as_deref(), Some("PASS"), "{r:?}");
            assert!(r.problems.is_empty(), "{r:?}");
            assert_eq!(
                r.path,
                format!("rx-results/FLEET_CLKIN_001/{}", r.node.as_deref().unwrap())
            );
            r.node.clone().unwrap()
        })
        .collect();
    seen.sort();
    assert_eq!(seen, names);
    let out = rxnode(
        &fresh,
        &["--json", "results", "verify", "FLEET_CLKIN_001"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 8);
    let out = rxnode(&fresh, &["--json", "results", "nodes"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 8, "{v}");
    assert!(
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["results"] == 1),
        "{v}"
    );
}

/// Results published before node names (`rx-results/<ID>/RX_RESULT.*` directly)
/// are still listed, shown and verified; their node comes from the result itself.
#[test]
fn results_of_the_layout_before_node_names_are_still_read() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("LEGACY_1", &[]);
    approve(&a);
    assert_eq!(publish(&a, "LEGACY_1").status.code(), Some(0));
    // Rewrite history as an old rx-node looked: the same three files one level up,
    // in the one commit (what the old `publish` made).
    let hand = lab.root.path().join("old-layout");
    git(
        lab.root.path(),
        &[
            "clone",
            "-q",
            "-b",
            "rx-node",
            lab.origin.to_str().unwrap(),
            hand.to_str().unwrap(),
        ],
    );
    git(
        &hand,
        &[
            "mv",
            "rx-results/LEGACY_1/LAB-A/RX_RESULT.md",
            "rx-results/LEGACY_1/RX_RESULT.md",
        ],
    );
    git(
        &hand,
        &[
            "mv",
            "rx-results/LEGACY_1/LAB-A/RX_RESULT.json",
            "rx-results/LEGACY_1/RX_RESULT.json",
        ],
    );
    git(
        &hand,
        &[
            "mv",
            "rx-results/LEGACY_1/LAB-A/LOG_META.json",
            "rx-results/LEGACY_1/LOG_META.json",
        ],
    );
    git(
        &hand,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "rx-results: LEGACY_1 (NOT RUN)\n\nTask: LEGACY_1\n",
        ],
    );
    git(&hand, &["push", "-q", "--force", "origin", "rx-node"]);
    let l = listing(&lab.main, &[]);
    assert_eq!(l.results.len(), 1, "{l:?}");
    let r = &l.results[0];
    assert_eq!(r.path, "rx-results/LEGACY_1");
    assert_eq!(
        r.node.as_deref(),
        Some("LAB-A"),
        "the node named inside the result"
    );
    assert!(r.problems.is_empty(), "{r:?}");
    let out = rxnode(&lab.main, &["results", "verify", "LEGACY_1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = rxnode(&lab.main, &["results", "show", "LEGACY_1"], "");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        stdout(&out).contains("# RX result: LEGACY_1"),
        "{}",
        show(&out)
    );
    // A node publishing beside it never rewrites the old folder.
    let b = lab.node("LAB-B");
    approve(&b);
    assert_eq!(publish(&b, "LEGACY_1").status.code(), Some(0));
    let files = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert_eq!(files.lines().count(), 6, "{files}");
    assert!(
        files.contains("rx-results/LEGACY_1/RX_RESULT.md"),
        "{files}"
    );
    assert!(
        files.contains("rx-results/LEGACY_1/LAB-B/RX_RESULT.md"),
        "{files}"
    );
    assert_eq!(listing(&lab.main, &[]).results.len(), 2);
}

/// A publication rebuilt after a race carries the node's earlier local-only
/// result (its `Carried-Over:` trailer names it): both verify.
#[test]
fn verify_accepts_results_carried_over_by_a_rebuild() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    lab.post("CARRY_X", &[]);
    approve(&a);
    let out = rxnode(&a, &["publish", "CARRY_X"], "PUBLISH CARRY_X\n");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    approve(&b);
    assert_eq!(publish(&b, "CARRY_X").status.code(), Some(0));
    lab.post("CARRY_Z", &[]);
    approve(&a);
    let out = publish(&a, "CARRY_Z");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let msg = git(&lab.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.contains("Carried-Over: CARRY_X/LAB-A"), "{msg}");
    for (id, from) in [
        ("CARRY_X", "LAB-A"),
        ("CARRY_X", "LAB-B"),
        ("CARRY_Z", "LAB-A"),
    ] {
        let out = rxnode(&lab.main, &["results", "verify", id, "--from", from], "");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{id} from {from}: {}",
            show(&out)
        );
    }
    assert_eq!(listing(&lab.main, &[]).results.len(), 3);
}
