//! Nothing the interlock trusts may come from Git.
//!
//! Every case is played against a real bare origin: the main PC commits and
//! pushes, the operator runs a real `git pull` in the RX checkout, then rxnode
//! runs. Each refusal must exit 3 with one line naming the path and the fix,
//! leave the radio's event log (`RXSIM_EVENT_LOG`, written by the simulated
//! radio in the rxnode process) without a new line, and leave every byte under
//! `.local/` as it was after the pull.
use crate::util::{git, read_lines, run_fed, text, Lab, BRANCH, TASK_PATH};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

mod committed;
mod ledger_size;
mod lost_key;
mod planted;
mod single_use;
mod visible;
mod world_writable;

/// The operator's own policy: RX limits, no TX at all.
const OPERATOR_POLICY: &str = r#"{"rx": {"max_duration_s": 10}}"#;
/// What the hostile main PC wants: 2.4 GHz at 40 dB.
const HOSTILE_POLICY: &str = r#"{"rx": {"max_duration_s": 600},
 "tx": {"allowed_ranges_hz": [[2.3e9, 2.5e9]], "max_gain_db": 40, "max_duration_s": 60}}"#;
const TX_PLAN: &str = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 2.4e9,
  "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 40, "duration_s": 0.3}]}"#;
const TX_PLAN_433: &str = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
  "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}]}"#;
const POLICY_433: &str = r#"{"rx": {"max_duration_s": 10},
 "tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#;

struct Rig {
    lab: Lab,
    events: PathBuf,
}

fn red_tx() -> Vec<(&'static str, &'static str)> {
    vec![
        ("HARDWARE_ACCESS", "YES"),
        ("RF_TX", "YES"),
        ("RISK_LEVEL", "RED"),
    ]
}

impl Rig {
    fn new() -> Rig {
        let lab = Lab::new();
        let events = lab.events_log();
        Rig { lab, events }
    }

    fn task_text(&self, id: &str, plan: &str) -> String {
        self.lab.plan_task(id, &red_tx(), Some(plan))
    }

    /// Post a RED TX task, approve it with the watcher; the operator's policy is set.
    fn approved_red(&self, id: &str, plan: &str) -> String {
        let t = self.lab.post_and_approve(id, &red_tx(), Some(plan));
        self.set_policy(OPERATOR_POLICY);
        t
    }

    fn set_policy(&self, json: &str) {
        self.lab.set_policy(json);
    }

    /// The operator's `git pull` of the watched branch.
    fn pull(&self) {
        git(&self.lab.rx, &["pull", "-q", "--ff-only", "origin", BRANCH]);
    }

    /// `rxnode --sim ARGS` with `stdin`, the radio logging to the event file.
    fn rx(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut c = self.lab.rxnode();
        c.arg("--sim")
            .args(args)
            .env("RXSIM_EVENT_LOG", &self.events)
            .env("NO_COLOR", "1")
            .env("HOME", self.lab.dir.path())
            .env("XDG_CONFIG_HOME", self.lab.dir.path());
        for (k, v) in env {
            c.env(k, v);
        }
        run_fed(&mut c, stdin.as_bytes())
    }

    fn event_lines(&self) -> Vec<String> {
        read_lines(&self.events)
    }

    fn tx_streams(&self) -> usize {
        self.event_lines()
            .iter()
            .filter(|l| l.contains(" TX ") && l.contains("setup"))
            .count()
    }
}

/// Every file (and link) under `dir`, with its bytes (a link: its target).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(format!("{rel} ->"), t.display().to_string().into_bytes());
            } else if md.is_dir() {
                out.insert(format!("{rel}/"), vec![]);
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Ok(md) = std::fs::symlink_metadata(dir) {
        if md.file_type().is_symlink() {
            out.insert(
                ". ->".to_owned(),
                std::fs::read_link(dir)
                    .unwrap()
                    .display()
                    .to_string()
                    .into_bytes(),
            );
            return out;
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Run `args` and assert the refusal: exit 3; one stderr line that says
/// "refused", names `path` and carries a fix; no new line in the radio's event
/// log; every byte under `.local/` (and `also`) unchanged; HEAD, index and
/// `git status` unchanged.
fn assert_refused(rig: &Rig, args: &[&str], stdin: &str, path: &str, why: &str) -> String {
    assert_refused_env(rig, args, stdin, &[], path, why)
}

fn assert_refused_env(
    rig: &Rig,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
    path: &str,
    why: &str,
) -> String {
    let local_before = tree(&rig.lab.local());
    let events_before = rig.event_lines();
    let snap = rig.lab.snapshot();
    let porcelain = rig.lab.porcelain();
    let out = rig.rx(args, stdin, env);
    let se = text(&out.stderr);
    expect_exit!(out, 3, "{why}: rxnode {args:?} must be refused");
    let lines: Vec<&str> = se.lines().filter(|l| l.contains("refused")).collect();
    assert_eq!(lines.len(), 1, "{why}: one refusal line: {se}");
    assert!(
        lines[0].contains(path) && lines[0].contains("fix:"),
        "{why}: the line names {path} and the fix: {se}"
    );
    assert!(!se.contains("panicked"), "{se}");
    assert_eq!(
        rig.event_lines(),
        events_before,
        "{why}: the radio saw something"
    );
    assert_eq!(
        tree(&rig.lab.local()),
        local_before,
        "{why}: rxnode {args:?} changed .local/"
    );
    assert_eq!(rig.lab.snapshot(), snap, "{why}: the checkout changed");
    assert_eq!(rig.lab.porcelain(), porcelain, "{why}: git status changed");
    se
}
