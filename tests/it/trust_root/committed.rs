//! Node files committed by the main PC, links and ignore rules are refused.
use super::*;

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
    expect_exit!(out, 1);
}

// ------------------------------------------------------------ committed .local files

/// A committed permissive policy replaced the operator's
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

/// A committed state + outbox planted an approval.
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
    // planted approval is still refused — this node never signed it.
    git(&rig.lab.rx, &["rm", "-r", "-q", "--cached", ".local"]);
    git(&rig.lab.rx, &["commit", "-q", "-m", "untrack .local"]);
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_state.json",
        "planted approval, untracked",
    );
    assert!(
        se.contains(&format!("approval for {id} is not signed by this node")),
        "{se}"
    );
    assert!(se.contains("rxnode state rebuild"), "{se}");
    assert!(!se.to_lowercase().contains("delete"), "{se}");
    // Rebuilding from the operator's ledger drops the planted approval.
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    expect_exit!(out, 0);
    assert!(
        text(&out.stdout).contains("has no `approved` entry"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(rig.lab.status_of(id), "");
    assert!(rig.lab.state()["approvals"].get(id).is_none());
    assert_eq!(rig.lab.status_of("OPERATOR_OK"), "approved");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 3);
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

/// A committed `.local` symlink.
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

/// A committed `.gitignore` that negates `.local/`;
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

/// Git reads a `.gitattributes` pattern that starts with `"` as a C-style
/// quoted string; libgit2 took the quotes literally and saw no filter.
#[test]
fn a_quoted_filter_attribute_on_local_files_is_refused() {
    for (n, rule) in [
        &b"\".local/**\" filter=hostile\n"[..],
        b"\"\\056local/rxnode-policy.json\" filter=hostile\n",
    ]
    .into_iter()
    .enumerate()
    {
        let rig = Rig::new();
        let id = format!("QFILTER_{n}");
        rig.approved_red(&id, TX_PLAN);
        rig.lab.post_file(".gitattributes", rule);
        rig.pull();
        assert_refused(
            &rig,
            &["run", &id],
            "AUTHORIZE RF TX\n",
            "filter=hostile",
            "quoted filter attribute",
        );
        doctor_fails(&rig, "filter=hostile");
    }
}

/// `LOCAL~1` (Windows' 8.3 name of `.local`), `.local.` (Win32 drops the dot)
/// and `.lo\u{200c}cal` (HFS+ drops U+200C) are `.local` on the laptop a
/// checkout may be moved to: refused by the rule, on every OS.
#[test]
fn a_local_folder_under_another_file_systems_name_is_refused() {
    for (n, dir) in ["LOCAL~1", ".local.", ".lo\u{200c}cal"]
        .into_iter()
        .enumerate()
    {
        let rig = Rig::new();
        let id = format!("ALIAS_{n}");
        rig.approved_red(&id, TX_PLAN);
        rig.lab.post_file(
            &format!("{dir}/rxnode-policy.json"),
            HOSTILE_POLICY.as_bytes(),
        );
        rig.pull();
        let se = assert_refused(
            &rig,
            &["run", &id],
            "AUTHORIZE RF TX\n",
            "rxnode-policy.json",
            "policy under another name of .local",
        );
        assert!(se.contains("tracked"), "{se}");
    }
}

/// A missing `.git/info/exclude` is restored before anything is trusted; the
/// operator's checkout keeps working.
#[test]
fn a_missing_exclude_is_restored_not_a_refusal() {
    let rig = Rig::new();
    rig.approved_red("EXCL_1", TX_PLAN);
    std::fs::remove_file(rig.lab.rx.join(".git/info/exclude")).unwrap();
    let out = rig.rx(&["status"], "", &[]);
    expect_exit!(out, 0);
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
    linked_ledger_outbox_and_foreign_trees_are_refused(&rig, id);
}

/// A linked ledger or outbox file, a planted link, a `.git` inside `.local` and a foreign `core.worktree` are refused; restored, the task is runnable.
fn linked_ledger_outbox_and_foreign_trees_are_refused(rig: &Rig, id: &str) {
    // A ledger that is a symlink: never appended through.
    let led = rig.lab.local().join("rx_agent_ledger.jsonl");
    let led_copy = rig.lab.dir.path().join("ledger-elsewhere.jsonl");
    std::fs::rename(&led, &led_copy).unwrap();
    std::os::unix::fs::symlink(&led_copy, &led).unwrap();
    let before = std::fs::read(&led_copy).unwrap();
    assert_refused(
        rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_ledger.jsonl",
        "ledger symlink",
    );
    assert_refused(
        rig,
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
        rig,
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
        rig,
        &["status"],
        "",
        ".rx_agent_state.json.tmp-1234",
        "planted link",
    );
    std::fs::remove_file(rig.lab.local().join(".rx_agent_state.json.tmp-1234")).unwrap();
    assert!(!rig.lab.dir.path().join("victim").exists());
    foreign_work_trees_are_refused_then_restored(rig, id);
}

/// `.local` holding a `.git` of its own and a `core.worktree` elsewhere are refused; restored, the task is runnable.
fn foreign_work_trees_are_refused_then_restored(rig: &Rig, id: &str) {
    // `.local` holding a `.git` of its own (another work tree).
    std::fs::create_dir(rig.lab.local().join(".git")).unwrap();
    assert_refused(
        rig,
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
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains("another work tree"),
        "{}",
        text(&out.stderr)
    );
    git(&rig.lab.rx, &["config", "--unset", "core.worktree"]);
    // Everything restored: the task is still runnable (refused by the policy's
    // missing TX range, exit 3, before any prompt — the operator's policy holds).
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains("tx_tone"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(rig.tx_streams(), 0);
}
