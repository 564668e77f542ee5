//! Issue 13 "The branch is hostile": nothing the interlock trusts may come from Git.
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
    assert_eq!(
        out.status.code(),
        Some(3),
        "{why}: rxnode {args:?} must be refused\n{se}{}",
        text(&out.stdout)
    );
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

/// Every command that would trust node-local files refuses.
fn every_command_refuses(rig: &Rig, id: &str, path: &str, why: &str) {
    assert_refused(rig, &["run", id], "AUTHORIZE RF TX\n", path, why);
    assert_refused(
        rig,
        &["watch", "--once", "--interval", "0.2"],
        "A\n",
        path,
        why,
    );
    assert_refused(rig, &["review", id], "A\n", path, why);
    assert_refused(rig, &["status"], "", path, why);
    assert_refused(rig, &["mark-completed", id], "", path, why);
    assert_refused(rig, &["publish", id], &format!("PUBLISH {id}\n"), path, why);
    assert_refused(
        rig,
        &[
            "capture",
            "--device",
            "driver=rxsim,serial=RX1",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "250e3",
            "--duration-s",
            "0.1",
        ],
        "",
        path,
        why,
    );
}

fn doctor_fails(rig: &Rig, needle: &str) {
    let out = rig.rx(&["--json", "doctor"], "", &[]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let trust: Vec<&serde_json::Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "trust root")
        .collect();
    assert!(
        trust.iter().any(|c| c["status"] == "FAIL"
            && c["detail"].as_str().unwrap().contains(needle)
            && !c["fix"].as_str().unwrap().is_empty()),
        "doctor: no trust root FAIL about {needle}: {trust:#?}"
    );
    assert_eq!(v["ok"], false);
    assert_eq!(out.status.code(), Some(1));
}

// ------------------------------------------------------------ committed .local files

/// Issue 13, first hole: a committed permissive policy replaced the operator's
/// on `git pull` and a RED task then transmitted at 2.4 GHz, 40 dB.
#[test]
fn a_policy_committed_by_the_main_pc_is_never_trusted() {
    let rig = Rig::new();
    let id = "HOSTILE_POLICY_1";
    rig.approved_red(id, TX_PLAN);
    rig.lab
        .post_file(".local/rxnode-policy.json", HOSTILE_POLICY.as_bytes());
    rig.pull();
    // The pull really did replace the operator's (ignored) policy, silently.
    assert_eq!(
        std::fs::read_to_string(rig.lab.local().join("rxnode-policy.json")).unwrap(),
        HOSTILE_POLICY
    );
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".local/rxnode-policy.json",
        "committed policy",
    );
    assert!(se.contains("tracked"), "{se}");
    assert!(
        !se.contains("Type exactly"),
        "nobody may be asked for the phrase: {se}"
    );
    every_command_refuses(&rig, id, ".local/rxnode-policy.json", "committed policy");
    assert_eq!(rig.tx_streams(), 0);
    doctor_fails(&rig, "rxnode-policy.json");
}

/// Issue 13, second hole: a committed state + outbox planted an approval.
#[test]
fn a_state_and_outbox_committed_by_the_main_pc_plant_nothing() {
    let rig = Rig::new();
    rig.approved_red("OPERATOR_OK", TX_PLAN_433);
    let id = "PLANTED_1";
    let t = rig.task_text(id, TX_PLAN);
    let commit = rig.lab.post(&t);
    use sha2::{Digest, Sha256};
    let sha = hex::encode(Sha256::digest(t.as_bytes()));
    let state = serde_json::json!({"schema_version": 1, "last_seen_task_id": id,
        "last_completed_task_id": null, "deferred_task_ids": [],
        "approvals": {id: {"task_id": id, "task_sha256": sha, "commit": commit, "at": "2026-12-01T00:00:00+00:00"}},
        "tasks": {id: {"status": "approved", "task_sha256": sha, "commit": commit, "risk_level": "RED",
            "title": "x", "first_seen": "2026-12-01T00:00:00+00:00"}},
        "published": {}, "running": false, "watcher_pid": null, "last_poll": null, "remote_marker": null});
    let ob = format!(".local/rx_agent_outbox/{id}");
    let meta = serde_json::json!({"task_id": id, "commit": commit, "blob": "0".repeat(40),
        "task_sha256": sha, "approved_at": "2026-12-01T00:00:00+00:00", "source_branch": BRANCH});
    std::fs::create_dir_all(rig.lab.main.join(&ob)).unwrap();
    std::fs::write(rig.lab.main.join(format!("{ob}/TASK.md")), &t).unwrap();
    std::fs::write(
        rig.lab.main.join(format!("{ob}/TASK.meta.json")),
        meta.to_string(),
    )
    .unwrap();
    rig.lab.post_file(
        ".local/rx_agent_state.json",
        serde_json::to_string_pretty(&state).unwrap().as_bytes(),
    );
    git(&rig.lab.main, &["add", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "outbox"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    rig.pull();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".local/",
        "planted state",
    );
    assert!(se.contains("tracked"), "{se}");
    every_command_refuses(&rig, id, ".local/", "planted state");
    doctor_fails(&rig, "tracked");

    // The operator untracks the files but keeps them (a careless fix): the
    // planted approval is still refused — the ledger never recorded it.
    git(&rig.lab.rx, &["rm", "-r", "-q", "--cached", ".local"]);
    git(&rig.lab.rx, &["commit", "-q", "-m", "untrack .local"]);
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_state.json",
        "planted approval, untracked",
    );
    assert!(se.contains("never recorded"), "{se}");
    assert!(se.contains("rxnode state rebuild"), "{se}");
    assert!(!se.to_lowercase().contains("delete"), "{se}");
    // Rebuilding from the operator's ledger drops the planted approval.
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("has no `approved` entry"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(rig.lab.status_of(id), "");
    assert!(rig.lab.state()["approvals"].get(id).is_none());
    assert_eq!(rig.lab.status_of("OPERATOR_OK"), "approved");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not approved"));
    assert_eq!(rig.tx_streams(), 0);
}

#[test]
fn stop_file_and_case_variants_committed_are_refused() {
    // A planted STOP is tracked like anything else under .local/.
    let rig = Rig::new();
    let id = "HOSTILE_STOP_1";
    rig.approved_red(id, TX_PLAN);
    rig.lab.post_file(".local/STOP", b"held by the main PC\n");
    rig.pull();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".local/STOP",
        "STOP",
    );
    doctor_fails(&rig, ".local/STOP");

    // `.LOCAL/…` is `.local/…` on a case-insensitive file system.
    let rig = Rig::new();
    let id = "HOSTILE_CASE_1";
    rig.approved_red(id, TX_PLAN);
    rig.lab
        .post_file(".LOCAL/rxnode-policy.json", HOSTILE_POLICY.as_bytes());
    rig.pull();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".LOCAL",
        ".LOCAL variant",
    );
    doctor_fails(&rig, ".LOCAL");
}

/// `.local` tracked through the index only (`git add -f` by a careless operator).
#[test]
fn local_files_tracked_by_the_index_only_are_refused() {
    let rig = Rig::new();
    let id = "INDEX_ONLY_1";
    rig.approved_red(id, TX_PLAN);
    git(&rig.lab.rx, &["add", "-f", ".local/rxnode-policy.json"]);
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".local/rxnode-policy.json is tracked in the index",
        "index only",
    );
    doctor_fails(&rig, "tracked in the index");
}

// ------------------------------------------------------------ links and ignore rules

/// Issue 13, third hole: a committed `.local` symlink.
#[cfg(unix)]
#[test]
fn a_committed_local_symlink_is_refused_and_nothing_is_written_through_it() {
    let rig = Rig::new();
    // A fresh node: the operator has not run rxnode yet.
    std::fs::create_dir_all(rig.lab.main.join("docs/shared")).unwrap();
    std::fs::write(rig.lab.main.join("docs/shared/README"), "shared\n").unwrap();
    git(&rig.lab.main, &["add", "docs/shared"]);
    std::os::unix::fs::symlink("docs/shared", rig.lab.main.join(".local")).unwrap();
    git(&rig.lab.main, &["add", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "link .local"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    rig.pull();
    assert!(std::fs::symlink_metadata(rig.lab.local())
        .unwrap()
        .file_type()
        .is_symlink());
    let shared_before = tree(&rig.lab.rx.join("docs/shared"));
    let se = assert_refused(
        &rig,
        &["watch", "--once", "--interval", "0.2"],
        "A\n",
        ".local",
        "symlinked .local",
    );
    assert!(se.contains("symlink"), "{se}");
    assert_refused(&rig, &["status"], "", ".local", "symlinked .local");
    assert_refused(&rig, &["run", "X_1"], "", ".local", "symlinked .local");
    assert_eq!(tree(&rig.lab.rx.join("docs/shared")), shared_before);
    doctor_fails(&rig, "symlink");
}

/// Issue 13, third hole: a committed `.gitignore` that negates `.local/`;
/// doctor used to say ".local ignored: PASS" because it asked about the folder.
#[test]
fn a_committed_gitignore_that_unignores_local_is_refused() {
    let rig = Rig::new();
    let id = "UNIGNORE_1";
    rig.approved_red(id, TX_PLAN);
    rig.lab.post_file(".gitignore", b"!/.local/\n!/.local/**\n");
    rig.pull();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "Git can see .local/",
        "unignored",
    );
    assert!(se.contains(".gitignore"), "{se}");
    assert_refused(&rig, &["status"], "", "Git can see .local/", "unignored");
    let out = rig.rx(&["--json", "doctor"], "", &[]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ign = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == ".local ignored")
        .unwrap();
    assert_eq!(ign["status"], "FAIL", "{ign}");
    assert!(ign["detail"].as_str().unwrap().contains(".local/"), "{ign}");
    doctor_fails(&rig, "Git can see");
}

#[test]
fn a_filter_attribute_on_local_files_is_refused() {
    let rig = Rig::new();
    let id = "FILTER_1";
    rig.approved_red(id, TX_PLAN);
    rig.lab
        .post_file(".gitattributes", b".local/** filter=hostile\n");
    rig.pull();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "filter=hostile",
        "filter attribute",
    );
}

/// A missing `.git/info/exclude` is restored before anything is trusted; the
/// operator's checkout keeps working.
#[test]
fn a_missing_exclude_is_restored_not_a_refusal() {
    let rig = Rig::new();
    rig.approved_red("EXCL_1", TX_PLAN);
    std::fs::remove_file(rig.lab.rx.join(".git/info/exclude")).unwrap();
    let out = rig.rx(&["status"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ex = std::fs::read_to_string(rig.lab.rx.join(".git/info/exclude")).unwrap();
    assert!(ex.contains("/.local/"), "{ex}");
    assert_eq!(rig.lab.porcelain(), "");
}

#[cfg(unix)]
#[test]
fn linked_hardlinked_or_foreign_node_files_are_refused() {
    let rig = Rig::new();
    let id = "LINKS_1";
    rig.approved_red(id, TX_PLAN);
    let pol = rig.lab.local().join("rxnode-policy.json");
    let elsewhere = rig.lab.dir.path().join("hostile-policy.json");
    std::fs::write(&elsewhere, HOSTILE_POLICY).unwrap();
    // A policy that is a symlink.
    std::fs::remove_file(&pol).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &pol).unwrap();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rxnode-policy.json",
        "policy symlink",
    );
    // A policy hard-linked to a file another name can change.
    std::fs::remove_file(&pol).unwrap();
    std::fs::hard_link(&elsewhere, &pol).unwrap();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rxnode-policy.json",
        "hard link",
    );
    assert!(se.contains("hard links"), "{se}");
    // A policy others may write.
    std::fs::remove_file(&pol).unwrap();
    std::fs::write(&pol, OPERATOR_POLICY).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pol, std::fs::Permissions::from_mode(0o666)).unwrap();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rxnode-policy.json",
        "world-writable",
    );
    assert!(se.contains("writable by group or others"), "{se}");
    std::fs::set_permissions(&pol, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A ledger that is a symlink: never appended through.
    let led = rig.lab.local().join("rx_agent_ledger.jsonl");
    let led_copy = rig.lab.dir.path().join("ledger-elsewhere.jsonl");
    std::fs::rename(&led, &led_copy).unwrap();
    std::os::unix::fs::symlink(&led_copy, &led).unwrap();
    let before = std::fs::read(&led_copy).unwrap();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_ledger.jsonl",
        "ledger symlink",
    );
    assert_refused(
        &rig,
        &["watch", "--once", "--interval", "0.2"],
        "",
        "rx_agent_ledger.jsonl",
        "ledger symlink",
    );
    assert_eq!(std::fs::read(&led_copy).unwrap(), before);
    std::fs::remove_file(&led).unwrap();
    std::fs::rename(&led_copy, &led).unwrap();
    // An outbox TASK.md that is a symlink.
    let task_md = rig
        .lab
        .local()
        .join(format!("rx_agent_outbox/{id}/TASK.md"));
    let md_copy = rig.lab.dir.path().join("TASK.md");
    std::fs::rename(&task_md, &md_copy).unwrap();
    std::os::unix::fs::symlink(&md_copy, &task_md).unwrap();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "TASK.md",
        "outbox symlink",
    );
    std::fs::remove_file(&task_md).unwrap();
    std::fs::rename(&md_copy, &task_md).unwrap();
    // A planted link anywhere under .local/ (e.g. at the state's temp-file name).
    std::os::unix::fs::symlink(
        rig.lab.dir.path().join("victim"),
        rig.lab.local().join(".rx_agent_state.json.tmp-1234"),
    )
    .unwrap();
    assert_refused(
        &rig,
        &["status"],
        "",
        ".rx_agent_state.json.tmp-1234",
        "planted link",
    );
    std::fs::remove_file(rig.lab.local().join(".rx_agent_state.json.tmp-1234")).unwrap();
    assert!(!rig.lab.dir.path().join("victim").exists());
    // `.local` holding a `.git` of its own (another work tree).
    std::fs::create_dir(rig.lab.local().join(".git")).unwrap();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".git of its own",
        "nested .git",
    );
    std::fs::remove_dir(rig.lab.local().join(".git")).unwrap();
    // core.worktree pointing elsewhere: .local belongs to another work tree.
    let other = rig.lab.dir.path().join("other-tree");
    std::fs::create_dir_all(&other).unwrap();
    git(
        &rig.lab.rx,
        &["config", "core.worktree", other.to_str().unwrap()],
    );
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("another work tree"),
        "{}",
        text(&out.stderr)
    );
    git(&rig.lab.rx, &["config", "--unset", "core.worktree"]);
    // Everything restored: the task is still runnable (refused by the policy's
    // missing TX range, exit 3, before any prompt — the operator's policy holds).
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("tx_tone"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(rig.tx_streams(), 0);
}

// ------------------------------------------------------------ single use

/// Issue 13, fourth hole: after the state file is lost a completed RED task
/// could be approved again and transmit a second time.
#[test]
fn a_completed_red_task_never_transmits_again_whatever_happens_to_the_state() {
    let rig = Rig::new();
    let id = "ONCE_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    let local = rig.lab.local();
    let state_p = local.join("rx_agent_state.json");
    let ledger_p = local.join("rx_agent_ledger.jsonl");
    let approved_state = std::fs::read(&state_p).unwrap();
    let approved_ledger = std::fs::read(&ledger_p).unwrap();
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.tx_streams(), 1);
    assert_eq!(rig.lab.status_of(id), "completed");
    let result_after =
        std::fs::read(local.join(format!("rx_agent_outbox/{id}/RX_RESULT.json"))).unwrap();

    // Lost (deleted): every command refuses until rebuilt; nothing says "delete".
    let kept = std::fs::read(&state_p).unwrap();
    std::fs::remove_file(&state_p).unwrap();
    for args in [
        vec!["run", id],
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["status"],
    ] {
        let se = assert_refused(
            &rig,
            &args,
            "AUTHORIZE RF TX\nA\n",
            "rx_agent_state.json",
            "lost state",
        );
        assert!(se.contains("rxnode state rebuild"), "{se}");
        assert!(!se.to_lowercase().contains("delete"), "{se}");
    }
    // Empty: kept aside as corrupt, every command refuses, rebuild recovers.
    std::fs::write(&state_p, b"").unwrap();
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("rxnode state rebuild"),
        "{}",
        text(&out.stderr)
    );
    assert!(!text(&out.stderr).to_lowercase().contains("delete"));
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains(".corrupt-"),
        "{}",
        text(&out.stderr)
    );
    // Dangling symlink: never read as an empty state.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(local.join("nowhere.json"), &state_p).unwrap();
        let se = assert_refused(
            &rig,
            &["run", id],
            "AUTHORIZE RF TX\n",
            "rx_agent_state.json",
            "dangling state",
        );
        assert!(
            se.contains("dangling") && se.contains("rxnode state rebuild"),
            "{se}"
        );
        std::fs::remove_file(&state_p).unwrap();
    }
    // Rebuild: the task is completed again, from the ledger.
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.lab.status_of(id), "completed");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stderr).contains("already run to completion"),
        "{}",
        text(&out.stderr)
    );
    // …and its result can still be published: the rebuild keeps the approval
    // it ran under (publish used to refuse "never approved on this node").
    assert!(rig.lab.state()["approvals"][id].is_object());
    let out = rig.rx(&["publish", id], "\n", &[]);
    assert!(
        !text(&out.stderr).contains("never approved"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        rig.tx_streams(),
        1,
        "a rebuild never leads to a second transmission"
    );

    // Replaced by an older copy (the approved-but-not-run state): refused.
    std::fs::write(&state_p, &approved_state).unwrap();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_state.json",
        "rolled-back state",
    );
    assert!(se.contains("does not match the ledger"), "{se}");
    // Both state and ledger rolled back: the ledger's mirror in the Git
    // directory (which no pull can write) still shows the run.
    std::fs::write(&ledger_p, &approved_ledger).unwrap();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_state.json",
        "rolled-back state and ledger",
    );
    assert!(se.contains("does not match the ledger"), "{se}");
    // …and with the mirror gone too, the outbox result is the evidence.
    let mirror = rig.lab.rx.join(".git/rxnode/ledger.jsonl");
    std::fs::remove_file(&mirror).unwrap();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "outbox result is",
        "rolled-back state, ledger and mirror",
    );
    assert!(se.contains("runs once"), "{se}");
    // And a rebuild from that ledger still completes it (the outbox).
    std::fs::remove_file(&state_p).unwrap();
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.lab.status_of(id), "completed");
    let _ = kept;
    assert_eq!(rig.tx_streams(), 1, "exactly one transmission, ever");
    assert_eq!(
        std::fs::read(local.join(format!("rx_agent_outbox/{id}/RX_RESULT.json"))).unwrap(),
        result_after,
        "the first result is never overwritten"
    );
}

// ------------------------------------------------------------ policy location

#[test]
fn an_explicit_policy_outside_the_checkout_is_used_and_inside_it_is_refused() {
    let rig = Rig::new();
    let id = "POLICY_PATH_1";
    rig.approved_red(id, TX_PLAN_433);
    let outside = rig.lab.dir.path().join("node-policy.json");
    std::fs::write(&outside, POLICY_433).unwrap();
    // The .local policy has no TX; the explicit one allows 433 MHz.
    let out = rig.rx(
        &["--policy", outside.to_str().unwrap(), "run", id],
        "AUTHORIZE RF TX\n",
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.tx_streams(), 1);
    // A path inside the work tree (not .local/) is a file Git can write.
    let id2 = "POLICY_PATH_2";
    rig.approved_red(id2, TX_PLAN_433);
    std::fs::create_dir_all(rig.lab.rx.join("docs")).unwrap();
    let inside = rig.lab.rx.join("docs/policy.json");
    std::fs::write(&inside, POLICY_433).unwrap();
    git(&rig.lab.rx, &["update-index", "--refresh"]);
    let inside_s = inside.to_str().unwrap().to_owned();
    // (The file is untracked; git status changes because of it, not rxnode.)
    assert_refused_env(
        &rig,
        &["run", id2],
        "AUTHORIZE RF TX\n",
        &[("RXNODE_POLICY", &inside_s)],
        "docs/policy.json",
        "policy inside the work tree",
    );
    // An explicit policy that does not exist is bad input, never defaults.
    let out = rig.rx(&["--policy", "/nonexistent/p.json", "run", id2], "", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(rig.tx_streams(), 1);
    let _ = TASK_PATH;
}

// ------------------------------------------------------------ capture --record

/// `rxnode capture --record PATH` inside a work tree is refused unless Git
/// ignores PATH; the radio is never opened.
#[test]
fn capture_record_inside_the_work_tree_needs_an_ignored_path() {
    let rig = Rig::new();
    std::fs::create_dir_all(rig.lab.local()).unwrap();
    std::fs::write(rig.lab.local().join("rxnode-policy.json"), OPERATOR_POLICY).unwrap();
    let cap = |rec: &Path| {
        let r = rec.to_str().unwrap().to_owned();
        rig.rx(
            &[
                "capture",
                "--device",
                "driver=rxsim",
                "--frequency-hz",
                "100e6",
                "--sample-rate-hz",
                "250e3",
                "--duration-s",
                "0.1",
                "--gain-db",
                "10",
                "--record",
                &r,
            ],
            "",
            &[],
        )
    };
    for (rec, why) in [
        (rig.lab.rx.join("iq/cap.cf32"), "a tracked-able folder"),
        (
            rig.lab.rx.join("cap.sigmf-data"),
            "the work tree root (SigMF pair)",
        ),
        (
            rig.lab.rx.join("docs/new/deeper/cap.wav"),
            "a folder that does not exist yet",
        ),
        (rig.lab.rx.join(".git/cap.cf32"), "the Git directory"),
    ] {
        let before = rig.event_lines();
        let out = cap(&rec);
        assert_eq!(out.status.code(), Some(3), "{why}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("fix:"),
            "{why}: {}",
            text(&out.stderr)
        );
        assert_eq!(rig.event_lines(), before, "{why}: the radio was opened");
        assert!(!rec.exists(), "{why}: recorded anyway");
    }
    // Through a symlinked folder that points into the work tree.
    #[cfg(unix)]
    {
        let link = rig.lab.dir.path().join("into-tree");
        std::fs::create_dir_all(rig.lab.rx.join("docs")).unwrap();
        std::os::unix::fs::symlink(rig.lab.rx.join("docs"), &link).unwrap();
        let out = cap(&link.join("cap.cf32"));
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    }
    // A file Git ignores (.local/), and one outside any work tree, are fine.
    let ok = rig.lab.local().join("rx_iq/manual/cap.cf32");
    let out = cap(&ok);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(ok.exists());
    // Straight into .local/rx_iq/ (as the operator guide says): the recording
    // must not make every later command refuse the node as untrusted.
    let flat = rig.lab.local().join("rx_iq/flat.sigmf-data");
    let out = cap(&flat);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = rig.rx(&["status"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let outside = rig.lab.dir.path().join("elsewhere/cap.cf32");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    let out = cap(&outside);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.lab.porcelain(), "");
}

/// The two-commit attack: the main PC commits `.local/` files, the operator
/// pulls (every command refuses), the main PC deletes them again, the operator
/// pulls again — Git deletes the files it had overwritten, state and ledger
/// included. The ledger's mirror in the Git directory still holds the history:
/// no fresh start, and `state rebuild` recovers every decision from it.
#[test]
fn committed_then_deleted_local_files_leave_no_fresh_start() {
    let rig = Rig::new();
    let id = "TWO_STEP_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.tx_streams(), 1);
    // Step 1: plant a state, a ledger and the task's outbox.
    std::fs::create_dir_all(rig.lab.main.join(".local")).unwrap();
    for f in ["rx_agent_state.json", "rx_agent_ledger.jsonl"] {
        std::fs::write(rig.lab.main.join(".local").join(f), "{}\n").unwrap();
    }
    let ob = format!(".local/rx_agent_outbox/{id}");
    std::fs::create_dir_all(rig.lab.main.join(&ob)).unwrap();
    for f in [
        "TASK.md",
        "TASK.meta.json",
        "RX_RESULT.json",
        "RX_RESULT.md",
    ] {
        std::fs::write(rig.lab.main.join(&ob).join(f), "x\n").unwrap();
    }
    git(&rig.lab.main, &["add", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "plant"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    rig.pull();
    assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "tracked",
        "planted",
    );
    // Step 2: delete them; the pull removes what it had overwritten.
    git(&rig.lab.main, &["rm", "-r", "-q", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "remove"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    rig.pull();
    assert!(!rig.lab.local().join("rx_agent_state.json").exists());
    assert!(!rig.lab.local().join("rx_agent_ledger.jsonl").exists());
    assert!(!rig.lab.rx.join(&ob).join("TASK.meta.json").exists());
    for args in [
        vec!["run", id],
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["status"],
    ] {
        let se = assert_refused(
            &rig,
            &args,
            "AUTHORIZE RF TX\nA\n",
            "rx_agent_state.json",
            "wiped by git",
        );
        assert!(se.contains("rxnode state rebuild"), "{se}");
    }
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rig.lab.status_of(id), "completed");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(rig.tx_streams(), 1, "exactly one transmission, ever");
}

/// Before the operator pulls: the watcher sees that the fetched tip tracks
/// `.local/` and refuses it (exit 3, "do not pull"), prompting nothing from it.
#[test]
fn the_watcher_warns_before_a_pull_of_a_branch_that_tracks_local() {
    let rig = Rig::new();
    rig.approved_red("BEFORE_PULL_0", TX_PLAN_433);
    let t = rig.task_text("BEFORE_PULL_1", TX_PLAN);
    std::fs::create_dir_all(rig.lab.main.join(".local")).unwrap();
    std::fs::write(
        rig.lab.main.join(".local/rxnode-policy.json"),
        HOSTILE_POLICY,
    )
    .unwrap();
    git(&rig.lab.main, &["add", ".local"]);
    rig.lab.post(&t);
    let state_before = std::fs::read(rig.lab.local().join("rx_agent_state.json")).unwrap();
    let policy_before = std::fs::read(rig.lab.local().join("rxnode-policy.json")).unwrap();
    let refused_before = rig
        .lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "refused")
        .count();
    for _ in 0..2 {
        let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{se}");
        assert!(
            se.contains(".local/rxnode-policy.json") && se.contains("do not pull"),
            "{se}"
        );
        assert!(se.contains("fix:"), "{se}");
        assert!(
            !text(&out.stdout).contains("[A] Approve"),
            "prompted from a hostile tip"
        );
    }
    // One ledger line for that commit, however often it is polled.
    let refused: Vec<_> = rig
        .lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "refused")
        .collect();
    assert_eq!(refused.len(), refused_before + 1, "{refused:?}");
    assert_eq!(rig.lab.status_of("BEFORE_PULL_1"), "");
    assert_eq!(
        std::fs::read(rig.lab.local().join("rx_agent_state.json")).unwrap(),
        state_before
    );
    assert_eq!(
        std::fs::read(rig.lab.local().join("rxnode-policy.json")).unwrap(),
        policy_before
    );
    assert_eq!(rig.event_lines(), Vec::<String>::new());
}

/// `GIT_DIR` / `GIT_WORK_TREE` in the environment do not redirect which
/// checkout rxnode checks: `--repo` is the checkout, whatever the environment says.
#[test]
fn git_dir_and_work_tree_in_the_environment_change_nothing() {
    let rig = Rig::new();
    let id = "ENV_DIR_1";
    rig.approved_red(id, TX_PLAN);
    // Another clone whose .local is clean.
    let other = rig.lab.dir.path().join("other");
    git(
        rig.lab.dir.path(),
        &[
            "clone",
            "-q",
            rig.lab.origin.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    // Our checkout tracks .local (index only); the environment points elsewhere.
    git(&rig.lab.rx, &["add", "-f", ".local/rxnode-policy.json"]);
    let gd = other.join(".git");
    let env = [
        ("GIT_DIR", gd.to_str().unwrap()),
        ("GIT_WORK_TREE", other.to_str().unwrap()),
    ];
    assert_refused_env(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        &env,
        ".local/rxnode-policy.json is tracked in the index",
        "GIT_DIR elsewhere",
    );
}
