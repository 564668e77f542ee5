//! `rxnode demo`: its claims are checked against the real
//! repositories and event log it made, not against its transcript.
use crate::util::{git, git_stdout, rxnode_cmd};
use serde::Deserialize;
use std::path::Path;
use std::process::Command;

#[derive(Debug, Deserialize)]
struct RxResult {
    task_id: String,
    status: String,
    checks: Vec<Check>,
    captures: Vec<Capture>,
}

#[derive(Debug, Deserialize)]
struct Check {
    name: String,
    status: String,
}

#[derive(Debug, Deserialize)]
struct Capture {
    clkin: Option<Clkin>,
}

#[derive(Debug, Deserialize)]
struct Clkin {
    status: String,
    ppm: Option<f64>,
}

#[test]
fn demo_claims_hold_in_the_repositories_it_made() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let started = std::time::Instant::now();
    let out = rxnode_cmd()
        .arg("demo")
        .arg("--dir")
        .arg(&dir)
        .output()
        .unwrap();
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("rxnode demo took {:.1} s", started.elapsed().as_secs_f64());
    expect_exit!(out, 0, "demo failed:\n{transcript}");
    published_result_holds(tmp.path(), &dir);
    radio_and_branches_hold(&dir);
    main_pc_commands_hold(&dir, &transcript);
    shown_commands_paste_into_a_shell(&transcript);
    survey_found_the_scene(&dir);
}

/// Every command line the demo shows can be pasted into a shell: the `task new`
/// line, read back by bash, gives the title as one argument.
fn shown_commands_paste_into_a_shell(transcript: &str) {
    let line = transcript
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("main-pc$ rxnode task new "))
        .expect("the demo shows its task new command");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -- {line}; printf '%s\\n' \"$@\""))
        .output()
        .unwrap();
    let args: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let title = args
        .iter()
        .position(|a| a == "--title")
        .and_then(|i| args.get(i + 1))
        .unwrap_or_else(|| panic!("no --title in {args:?}"));
    assert!(
        title.starts_with("Demo: ") && title.ends_with("(YELLOW)"),
        "the title is one argument: {args:?}"
    );
}

/// The demo's band survey (an `rx_sweep` step) found both carriers of its scene.
fn survey_found_the_scene(dir: &Path) {
    let path = dir.join("rx-laptop/.local/rx_agent_outbox/DEMO_YELLOW_002/RX_RESULT.json");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let peaks = r["sweeps"][0]["peaks"].as_array().expect("sweep peaks");
    for want in [99.5e6, 101.7e6] {
        assert!(
            peaks.iter().any(|p| p["frequency_hz"]
                .as_f64()
                .is_some_and(|f| (f - want).abs() <= 10e3)),
            "no peak near {want} Hz in {peaks:?}"
        );
    }
}

/// Without `--dir` the demo works in a temporary folder and removes it at the end.
#[test]
fn demo_without_a_folder_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let out = rxnode_cmd()
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind in TMPDIR: {left:?}");
}

/// `rx-node` on the bare origin holds exactly the one published result, as the outbox holds it.
fn published_result_holds(tmp: &Path, dir: &Path) {
    let origin = dir.join("origin.git");

    // rx-node on the bare origin holds exactly the one published result.
    let files = git(&origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    let mut files: Vec<&str> = files.lines().collect();
    files.sort_unstable();
    assert_eq!(
        files,
        [
            "rx-results/DEMO_YELLOW_002/DEMO-RX1/LOG_META.json",
            "rx-results/DEMO_YELLOW_002/DEMO-RX1/RX_RESULT.json",
            "rx-results/DEMO_YELLOW_002/DEMO-RX1/RX_RESULT.md",
        ]
    );

    // The published result: overall FAIL, one CLKIN PASS (locked) and one FAIL (2.5 ppm).
    let published = git_stdout(
        &origin,
        &[
            "show",
            "rx-node:rx-results/DEMO_YELLOW_002/DEMO-RX1/RX_RESULT.json",
        ],
    );
    let r: RxResult = serde_json::from_str(&published).unwrap();
    assert_eq!(r.task_id, "DEMO_YELLOW_002");
    assert_eq!(r.status, "FAIL");
    let clkin: Vec<&Clkin> = r.captures.iter().filter_map(|c| c.clkin.as_ref()).collect();
    assert_eq!(clkin.len(), 2, "{r:#?}");
    let pass: Vec<_> = clkin.iter().filter(|c| c.status == "PASS").collect();
    let fail: Vec<_> = clkin.iter().filter(|c| c.status == "FAIL").collect();
    assert_eq!((pass.len(), fail.len()), (1, 1), "{clkin:?}");
    let ppm = fail[0].ppm.expect("the failing CLKIN has a measurement");
    assert!(
        (ppm - 2.5).abs() < 0.1,
        "mis-clocked radio measured {ppm} ppm"
    );
    let capture_checks: Vec<&str> = r
        .checks
        .iter()
        .filter(|c| c.name.contains("rx_capture"))
        .map(|c| c.status.as_str())
        .collect();
    assert_eq!(capture_checks.len(), 2);
    assert!(capture_checks.contains(&"PASS") && capture_checks.contains(&"FAIL"));
    // What was published is what the outbox holds, and names no local path.
    let outbox = std::fs::read_to_string(
        dir.join("rx-laptop/.local/rx_agent_outbox/DEMO_YELLOW_002/RX_RESULT.json"),
    )
    .unwrap();
    assert_eq!(published, outbox);
    assert!(!published.contains(tmp.to_str().unwrap()));
}

/// The main PC read the commit back, no TX stream was opened, the watched branch holds only the tasks.
fn radio_and_branches_hold(dir: &Path) {
    let origin = dir.join("origin.git");

    // The main-PC clone read the same commit back.
    let tip = git(&origin, &["rev-parse", "rx-node"]);
    let seen = git(
        &dir.join("main-pc"),
        &["rev-parse", "refs/rxnode/main-pc/rx-node"],
    );
    assert_eq!(tip, seen);

    // The RED task opened no TX stream; the YELLOW captures did stream RX.
    let events = std::fs::read_to_string(dir.join("rxsim-events.log")).unwrap();
    let tx: Vec<&str> = events
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == "TX"))
        .collect();
    assert!(tx.is_empty(), "TX activity in the event log: {tx:?}");
    assert!(!events.contains("writeStream"));
    assert!(events.contains("activateStream RX serial=demo-locked"));
    assert!(events.contains("activateStream RX serial=demo-free"));

    // The watched branch got the three task commits and nothing from the node.
    let log = git(&origin, &["log", "--format=%s", "video-development"]);
    for id in ["DEMO_GREEN_001", "DEMO_YELLOW_002", "DEMO_RED_003"] {
        assert_eq!(
            log.lines().filter(|s| s.contains(id)).count(),
            1,
            "{id} in {log}"
        );
    }
    let watched = git(
        &origin,
        &["ls-tree", "-r", "--name-only", "video-development"],
    );
    assert!(!watched.contains("rx-results"), "{watched}");
}

/// The main PC used `task new`, `results`, `results verify` and `results show`, and moved only its private ref.
fn main_pc_commands_hold(dir: &Path, transcript: &str) {
    let origin = dir.join("origin.git");

    // The main PC used `task new`, `results`, `results verify` and `results show`.
    for shown in [
        "main-pc$ rxnode task new --id DEMO_YELLOW_002",
        "main-pc$ rxnode results --json",
        "main-pc$ rxnode results verify DEMO_YELLOW_002",
        "OK   rx-results/DEMO_YELLOW_002/DEMO-RX1",
        "main-pc$ rxnode results show DEMO_YELLOW_002",
    ] {
        assert!(
            transcript.contains(shown),
            "the demo does not show {shown:?}"
        );
    }
    let yellow = git(
        &origin,
        &[
            "log",
            "-1",
            "--format=%H",
            "--grep=DEMO_YELLOW_002",
            "video-development",
        ],
    );
    let task = git(
        &origin,
        &[
            "show",
            &format!("{}:docs/handoff/NEXT_RX_TASK.md", yellow.trim()),
        ],
    );
    let parent = git(&origin, &["rev-parse", &format!("{}^", yellow.trim())]);
    assert!(
        task.contains(&format!("EXPECTED_HEAD = {}", parent.trim())),
        "task new set EXPECTED_HEAD to the head the task commit sits on:\n{task}"
    );
    // Only the private ref moved on the main PC: no remote-tracking rx-node.
    let refs = git(
        &dir.join("main-pc"),
        &["for-each-ref", "--format=%(refname)"],
    );
    assert!(!refs.contains("refs/remotes/origin/rx-node"), "{refs}");
    // The RX checkout stayed clean.
    assert_eq!(
        git(&dir.join("rx-laptop"), &["status", "--porcelain"]).trim(),
        ""
    );
}

#[test]
fn demo_refuses_a_dir_that_already_holds_a_lab() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("origin.git")).unwrap();
    let out = crate::util::rxnode_bin()
        .args(["demo", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already exists"), "{err}");
}

/// `demo --json` is bad usage (the demo is a walk-through for people): exit 2,
/// one JSON error on stderr, nothing set up.
#[test]
fn demo_refuses_json_as_bad_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("demo");
    let out = crate::util::rxnode_cmd()
        .args(["--json", "demo", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    expect_exit!(out, 2);
    assert!(out.stdout.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["exit"], 2);
    assert!(
        v["error"]["fix"]
            .as_str()
            .unwrap()
            .contains("without --json"),
        "{v}"
    );
    assert!(!dir.exists());
}
