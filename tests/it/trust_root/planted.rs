//! Approvals count only if this node made them: a planted, copied or legacy
//! (unsigned) approval never transmits, whatever `state rebuild` replays.
use super::*;
use crate::util::{git_stdout, show, BRANCH};

/// The `approved` records a hostile main PC commits under `.local/`: a state,
/// a one-line ledger and an outbox for task `id` posted at `commit`.
fn plant_local(main: &Path, id: &str, text: &str, commit: &str) {
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(text.as_bytes()))
    };
    let at = "2026-12-01T10:00:00+00:00";
    let state = serde_json::json!({
        "schema_version": 1, "last_seen_task_id": id, "last_completed_task_id": null,
        "deferred_task_ids": [], "running": false, "watcher_pid": null, "last_poll": null,
        "remote_marker": null,
        "approvals": {id: {"task_id": id, "task_sha256": sha, "commit": commit, "at": at}},
        "tasks": {id: {"status": "approved", "task_sha256": sha, "commit": commit,
                       "risk_level": "RED", "title": "Check the lab clock", "first_seen": at}}
    });
    let local = main.join(".local");
    std::fs::create_dir_all(local.join(format!("rx_agent_outbox/{id}"))).unwrap();
    std::fs::write(
        local.join("rx_agent_state.json"),
        serde_json::to_vec_pretty(&state).unwrap(),
    )
    .unwrap();
    std::fs::write(
        local.join("rx_agent_ledger.jsonl"),
        format!(
            "{}\n",
            serde_json::json!({"at": at, "event": "approved", "task_id": id,
                "task_sha256": sha, "commit": commit})
        ),
    )
    .unwrap();
    std::fs::write(local.join(format!("rx_agent_outbox/{id}/TASK.md")), text).unwrap();
}

/// Replace the RX checkout by a fresh clone of the watched branch.
fn fresh_clone(rig: &Rig) {
    std::fs::remove_dir_all(&rig.lab.rx).unwrap();
    git(
        rig.lab.dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            rig.lab.origin.to_str().unwrap(),
            rig.lab.rx.to_str().unwrap(),
        ],
    );
}

fn status_json(rig: &Rig) -> serde_json::Value {
    let out = rig.rx(&["--json", "status"], "", &[]);
    expect_exit!(out, 0);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The main PC commits `.local/` (state, a one-line ledger, an outbox) that
/// approve a RED TX task; the operator clones, is refused, follows the
/// refusal's own fix (`git rm -r --cached .local`, commit, `rxnode state
/// rebuild`): the task is still not approved, and `run` + `AUTHORIZE RF TX`
/// refuses with exit 3 and the radio never sees a TX stream.
#[test]
fn an_approval_planted_in_a_fresh_clone_never_transmits() {
    let rig = Rig::new();
    let id = "PLANTED_TX_1";
    let t = rig.task_text(id, TX_PLAN_433);
    let commit = rig.lab.post(&t);
    plant_local(&rig.lab.main, id, &t, &commit);
    git(&rig.lab.main, &["add", "-f", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "node files"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    fresh_clone(&rig);
    rig.set_policy(POLICY_433);
    // Refused while Git tracks .local/.
    let out = rig.rx(&["status"], "", &[]);
    expect_exit!(out, 3);
    assert!(text(&out.stderr).contains("git rm -r --cached .local"));
    // The refusal's own fix.
    git(&rig.lab.rx, &["rm", "-r", "-q", "--cached", ".local"]);
    git(&rig.lab.rx, &["commit", "-q", "-m", "untrack .local"]);
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(!so.contains("agrees with the ledger"), "{so}");
    assert!(
        so.contains(&format!("approval for {id} is not signed by this node"))
            && so.contains("rxnode review"),
        "rebuild names the unverifiable approval and the fix: {so}"
    );
    let st = status_json(&rig);
    assert!(
        !st["approved"].as_array().unwrap().iter().any(|v| v == id),
        "status lists a planted approval: {st}"
    );
    assert!(rig.lab.state()["approvals"].get(id).is_none());
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 3);
    assert_eq!(rig.tx_streams(), 0, "a planted approval transmitted");
    assert!(
        !rig.event_lines().iter().any(|l| l.contains(" TX ")),
        "{:?}",
        rig.event_lines()
    );
    let _ = git_stdout;
}

/// A `.local/` copied from another checkout (its own approvals, made and
/// signed there) does not verify here: a different node key.
#[test]
fn a_local_folder_copied_from_another_checkout_is_not_approved_here() {
    let rig = Rig::new();
    let id = "COPIED_TX_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    let other = rig.lab.dir.path().join("second-laptop");
    git(
        rig.lab.dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            rig.lab.origin.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(rig.lab.local())
        .arg(other.join(".local"))
        .status()
        .unwrap();
    assert!(status.success());
    let run_other = |args: &[&str], stdin: &str| {
        let mut c = crate::util::rxnode_cmd();
        c.arg("--sim")
            .arg("--repo")
            .arg(&other)
            .args(args)
            .env("RXSIM_EVENT_LOG", &rig.events)
            .env("HOME", rig.lab.dir.path())
            .env("XDG_CONFIG_HOME", rig.lab.dir.path());
        run_fed(&mut c, stdin.as_bytes())
    };
    let out = run_other(&["run", id], "AUTHORIZE RF TX\n");
    let se = text(&out.stderr);
    expect_exit!(out, 3);
    assert!(
        se.contains(&format!("approval for {id} is not signed by this node"))
            && se.contains("rxnode review"),
        "{se}"
    );
    let out = run_other(&["state", "rebuild"], "");
    expect_exit!(out, 0);
    let out = run_other(&["run", id], "AUTHORIZE RF TX\n");
    expect_exit!(out, 3);
    assert_eq!(rig.tx_streams(), 0, "a copied approval transmitted");
    // On the node that made it, the same approval still runs.
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.tx_streams(), 1);
}

/// An approval written by an older rxnode (no MAC) is refused, with the
/// message telling the operator to re-approve; re-approving makes it run.
#[test]
fn a_legacy_unsigned_approval_is_refused_until_approved_again() {
    let rig = Rig::new();
    let id = "LEGACY_TX_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    // Strip every MAC, as an older build wrote the files.
    let local = rig.lab.local();
    let mut st = rig.lab.state();
    st["approvals"][id].as_object_mut().unwrap().remove("mac");
    std::fs::write(
        local.join("rx_agent_state.json"),
        serde_json::to_vec_pretty(&st).unwrap(),
    )
    .unwrap();
    for ledger in [
        local.join("rx_agent_ledger.jsonl"),
        rig.lab.rx.join(".git/rxnode/ledger.jsonl"),
    ] {
        let lines: Vec<String> = std::fs::read_to_string(&ledger)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("mac");
                v.to_string()
            })
            .collect();
        std::fs::write(&ledger, lines.join("\n") + "\n").unwrap();
    }
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    let se = text(&out.stderr);
    expect_exit!(out, 3);
    assert!(
        se.contains("no MAC") && se.contains(&format!("rxnode review {id}")),
        "{se}"
    );
    assert_eq!(rig.tx_streams(), 0);
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.lab.status_of(id), "pending");
    let out = rig.rx(&["review", id], "A\n", &[]);
    expect_exit!(out, 0);
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.tx_streams(), 1);
}

/// As a hostile main PC with write access to `.local/` (but not the key):
/// the MAC of another task's real approval copied onto a planted one, a real
/// approval filed under another task ID, a status "approved" with no record,
/// and the node key replaced by a symlink to a key the attacker knows — each
/// is refused, and the radio never sees a TX stream.
#[test]
fn moved_macs_refiled_approvals_and_a_swapped_key_are_refused() {
    let rig = Rig::new();
    let real = "REAL_RX_1";
    rig.lab.post_and_approve(real, &[], None);
    let id = "MOVED_TX_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    let state_p = rig.lab.local().join("rx_agent_state.json");
    let good = std::fs::read(&state_p).unwrap();
    let write = |v: &serde_json::Value| {
        std::fs::write(&state_p, serde_json::to_vec_pretty(v).unwrap()).unwrap()
    };
    let refused = |why: &str, needle: &str| {
        let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
        let se = text(&out.stderr);
        expect_exit!(out, 3, "{why}");
        assert!(se.contains(needle), "{why}: {se}");
        assert_eq!(rig.tx_streams(), 0, "{why}: transmitted");
    };
    // Another task's MAC on this approval.
    let mut st = rig.lab.state();
    st["approvals"][id]["mac"] = st["approvals"][real]["mac"].clone();
    write(&st);
    refused(
        "moved MAC",
        &format!("approval for {id} is not signed by this node"),
    );
    // The real approval of another task filed under this ID.
    let mut st: serde_json::Value = serde_json::from_slice(&good).unwrap();
    st["approvals"][id] = st["approvals"][real].clone();
    write(&st);
    refused("refiled approval", "is not signed by this node");
    // Approved in the task list, no approval record.
    let mut st: serde_json::Value = serde_json::from_slice(&good).unwrap();
    st["approvals"].as_object_mut().unwrap().remove(id);
    write(&st);
    refused("status without record", "holds no approval record");
    std::fs::write(&state_p, &good).unwrap();
    // The key swapped for a link to one the attacker knows.
    #[cfg(unix)]
    {
        let key = rig.lab.rx.join(".git/rxnode/key");
        let kept = rig.lab.dir.path().join("kept-key");
        std::fs::rename(&key, &kept).unwrap();
        let known = rig.lab.dir.path().join("known-key");
        std::fs::write(&known, [7u8; 32]).unwrap();
        std::os::unix::fs::symlink(&known, &key).unwrap();
        refused("symlinked key", "not a regular file");
        std::fs::remove_file(&key).unwrap();
        std::fs::rename(&kept, &key).unwrap();
    }
    // Untouched, the node's own approval still runs.
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.tx_streams(), 1);
}

/// A plain node name and a 40 ppm calibration of radio `cal9`, as a hostile main PC
/// writes them under `.local/` (what an rxnode before node-sealed files wrote too).
fn plant_identity(main: &Path) {
    let local = main.join(".local");
    std::fs::create_dir_all(&local).unwrap();
    let at = "2026-12-01T10:00:00+00:00";
    let node = serde_json::json!({"schema_version": 1, "name": "OTHER-NODE", "set_at": at});
    std::fs::write(
        local.join("rxnode-node.json"),
        serde_json::to_vec_pretty(&node).unwrap(),
    )
    .unwrap();
    let m = serde_json::json!({"ppm": 40.0, "uncertainty_ppm": 0.01, "method": "gsm",
        "reference": "GSM BCCH 935.2 MHz", "confidence": 0.99, "time": at});
    let cal = serde_json::json!({"schema_version": 1, "radios": {"driver=rxsim,serial=cal9": {
        "driver": "rxsim", "serial": "cal9", "latest": m, "history": [m]}}});
    std::fs::write(
        local.join("calibration.json"),
        serde_json::to_vec_pretty(&cal).unwrap(),
    )
    .unwrap();
}

fn capture_json(rig: &Rig, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec![
        "capture",
        "-d",
        "driver=rxsim,serial=cal9,pace=0,tone_hz=935.3e6",
        "-f",
        "935.2M",
        "-r",
        "1M",
        "-t",
        "0.3",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = rig.rx(&args, "", &[]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out, v)
}

/// The main PC commits a node name (`OTHER-NODE`) and a 40 ppm calibration under
/// `.local/`, and a task for `OTHER-NODE` only. The operator follows the refusal's
/// own fix (untrack, commit): the files stay on disk, but they were not written by
/// this node (no node MAC), so neither is used — the task is not for this node,
/// `node show` refuses with the fix, `--apply-cal` refuses and a capture reports no
/// measurement. Once the operator names the node, its results carry that name and
/// no correction.
#[test]
fn a_node_name_and_calibration_planted_by_the_branch_are_never_used() {
    let rig = Rig::new();
    plant_identity(&rig.lab.main);
    git(&rig.lab.main, &["add", "-f", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "node files"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    fresh_clone(&rig);
    // Refused while Git tracks .local/.
    let out = rig.rx(&["status"], "", &[]);
    expect_exit!(out, 3);
    assert!(text(&out.stderr).contains("git rm -r --cached .local"));
    // The refusal's own fix: the files stay on disk.
    git(&rig.lab.rx, &["rm", "-r", "-q", "--cached", ".local"]);
    git(&rig.lab.rx, &["commit", "-q", "-m", "untrack .local"]);
    assert!(rig.lab.local().join("rxnode-node.json").is_file());
    assert!(rig.lab.local().join("calibration.json").is_file());
    // The main PC takes .local/ off the branch too, so the watcher may poll it.
    git(&rig.lab.main, &["rm", "-r", "-q", "--cached", ".local"]);
    git(&rig.lab.main, &["commit", "-q", "-m", "untrack .local"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    git(
        &rig.lab.rx,
        &["pull", "-q", "--no-rebase", "origin", BRANCH],
    );
    assert!(rig.lab.local().join("rxnode-node.json").is_file());
    let t = rig
        .lab
        .plan_task("FOR_OTHER_1", &[("TARGET_NODES", "OTHER-NODE")], None);
    rig.lab.post(&t);
    // The planted name is not this node's.
    let out = rig.rx(&["node", "show"], "", &[]);
    expect_exit!(out, 3);
    let e = text(&out.stderr);
    assert!(
        e.contains("rxnode-node.json was not written by this node")
            && e.contains("rxnode node set-name NAME"),
        "{e}"
    );
    assert!(!text(&out.stdout).contains("OTHER-NODE"), "{}", show(&out));
    // A task for OTHER-NODE only is not run here.
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(
        so.contains("task FOR_OTHER_1: not for this node")
            && so.contains("this node's name cannot be read"),
        "{so}"
    );
    assert!(rig.lab.state()["approvals"].get("FOR_OTHER_1").is_none());
    // The planted calibration is never applied, nor reported as this radio's.
    let (out, _) = capture_json(&rig, &["--apply-cal"]);
    expect_exit!(out, 3);
    let e = show(&out);
    assert!(
        e.contains("calibration.json was not written by this node")
            && e.contains("rxnode clkin calibrate"),
        "{e}"
    );
    let (out, v) = capture_json(&rig, &[]);
    expect_exit!(out, 0);
    assert_eq!(
        v["clock"]["last_measurement"],
        serde_json::Value::Null,
        "{v}"
    );
    assert_eq!(
        v["clock"]["ppm_correction_applied"],
        serde_json::Value::Null
    );
    let peak = v["peaks"][0]["frequency_hz"].as_f64().unwrap_or(0.0);
    assert!((peak - 935.3e6).abs() < 1_000.0, "{peak}");
    // The operator names the node: sealed, and the name every result carries.
    let out = rig.rx(&["node", "set-name", "LAB-RX"], "", &[]);
    expect_exit!(out, 0);
    let node = std::fs::read_to_string(rig.lab.local().join("rxnode-node.json")).unwrap();
    assert!(
        node.contains("\"node_mac\"") && node.contains("LAB-RX"),
        "{node}"
    );
    let plan = r#"{"steps": [{"op": "rx_capture", "device": "driver=rxsim,serial=cal9,pace=0,tone_hz=935.3e6",
      "frequency_hz": 935.2e6, "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": 0.2}]}"#;
    let t = rig.lab.plan_task(
        "FOR_ME_1",
        &[
            ("TARGET_NODES", "LAB-RX"),
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(plan),
    );
    rig.lab.post(&t);
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.lab.status_of("FOR_ME_1"), "approved", "{}", show(&out));
    let out = rig.rx(&["run", "FOR_ME_1"], "", &[]);
    expect_exit!(out, 0);
    let r: serde_json::Value = serde_json::from_slice(
        &std::fs::read(rig.lab.outbox("FOR_ME_1").join("RX_RESULT.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["node"]["name"], "LAB-RX", "{r}");
    let rendered = r.to_string();
    assert!(!rendered.contains("OTHER-NODE"), "{rendered}");
    assert!(!rendered.contains("\"ppm\":40"), "{rendered}");
}
