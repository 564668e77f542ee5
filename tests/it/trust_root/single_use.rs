//! A completed RED task never transmits again; where the policy and recordings may live; the Git environment.
use super::*;

// ------------------------------------------------------------ single use

/// After the state file is lost a completed RED task
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
    expect_exit!(out, 0);
    assert_eq!(rig.tx_streams(), 1);
    assert_eq!(rig.lab.status_of(id), "completed");
    let result_after =
        std::fs::read(local.join(format!("rx_agent_outbox/{id}/RX_RESULT.json"))).unwrap();

    let kept = lost_empty_and_dangling_states_refuse(&rig, id, &local, &state_p);
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
    expect_exit!(out, 0);
    assert_eq!(rig.lab.status_of(id), "completed");
    let _ = kept;
    assert_eq!(rig.tx_streams(), 1, "exactly one transmission, ever");
    assert_eq!(
        std::fs::read(local.join(format!("rx_agent_outbox/{id}/RX_RESULT.json"))).unwrap(),
        result_after,
        "the first result is never overwritten"
    );
}

/// The ledger checkpoint (`.git/rxnode/ledger-checkpoint.json`) lets a command
/// skip the ledger lines it has checked before; an approved line edited in
/// place afterwards (one MAC digit: same file, same size) in both copies is
/// still seen, and the state holding that approval is refused, as it was when
/// every command read the whole ledger.
#[test]
fn an_approved_line_edited_after_the_ledger_checkpoint_is_still_refused() {
    let rig = Rig::new();
    let id = "CHECKPOINT_1";
    rig.approved_red(id, TX_PLAN_433);
    rig.set_policy(POLICY_433);
    let checkpoint = rig.lab.rx.join(".git/rxnode/ledger-checkpoint.json");
    // Once the ledger's last write lies in the past, its file times are recorded.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    let out = rig.rx(&["status"], "", &[]);
    expect_exit!(out, 0);
    let cp = std::fs::read_to_string(&checkpoint).unwrap();
    assert!(
        cp.contains("\"node_mac\"") && cp.contains(&format!("\"approved\":[\"{id}\"]")),
        "{cp}"
    );
    assert!(cp.contains("\"times\":{"), "{cp}");
    let ledgers = [
        rig.lab.local().join("rx_agent_ledger.jsonl"),
        rig.lab.rx.join(".git/rxnode/ledger.jsonl"),
    ];
    for p in &ledgers {
        let mut bytes = std::fs::read(p).unwrap();
        let find = |from: usize, what: &[u8]| {
            from + bytes[from..]
                .windows(what.len())
                .position(|w| w == what)
                .unwrap()
        };
        let mac = find(find(0, b"\"event\":\"approved\""), b"\"mac\":\"") + 7;
        bytes[mac] = if bytes[mac] == b'0' { b'1' } else { b'0' };
        let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        std::io::Write::write_all(&mut f, &bytes).unwrap();
    }
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        "rx_agent_state.json",
        "approved line edited after the checkpoint",
    );
    assert!(se.contains("that the ledger never recorded"), "{se}");
    assert_eq!(rig.tx_streams(), 0);
}

/// Lost, empty and dangling-symlink states refuse every command until a rebuild from
/// the ledger completes the task again (and keeps its approval for publishing).
/// Returns the state as it was before it was lost.
fn lost_empty_and_dangling_states_refuse(
    rig: &Rig,
    id: &str,
    local: &Path,
    state_p: &Path,
) -> Vec<u8> {
    // Lost (deleted): every command refuses until rebuilt; nothing says "delete".
    let kept = std::fs::read(state_p).unwrap();
    std::fs::remove_file(state_p).unwrap();
    for args in [
        vec!["run", id],
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["status"],
    ] {
        let se = assert_refused(
            rig,
            &args,
            "AUTHORIZE RF TX\nA\n",
            "rx_agent_state.json",
            "lost state",
        );
        assert!(se.contains("rxnode state rebuild"), "{se}");
        assert!(!se.to_lowercase().contains("delete"), "{se}");
    }
    // Empty: kept aside as corrupt, every command refuses, rebuild recovers.
    std::fs::write(state_p, b"").unwrap();
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
        std::os::unix::fs::symlink(local.join("nowhere.json"), state_p).unwrap();
        let se = assert_refused(
            rig,
            &["run", id],
            "AUTHORIZE RF TX\n",
            "rx_agent_state.json",
            "dangling state",
        );
        assert!(
            se.contains("dangling") && se.contains("rxnode state rebuild"),
            "{se}"
        );
        std::fs::remove_file(state_p).unwrap();
    }
    // Rebuild: the task is completed again, from the ledger.
    let out = rig.rx(&["state", "rebuild"], "", &[]);
    expect_exit!(out, 0);
    assert_eq!(rig.lab.status_of(id), "completed");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 3);
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
    kept
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
    expect_exit!(out, 0);
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
    expect_exit!(out, 2);
    assert_eq!(rig.tx_streams(), 1);
    let _ = TASK_PATH;
}

/// An explicit policy in another clone of the lab repository (a work copy beside
/// the RX clone) is refused while that repository tracks it — a `git pull` there
/// writes it — or does not ignore it (it may start to track it); ignored and
/// untracked there, it is used. Nothing reaches the radio before that.
#[test]
fn an_explicit_policy_in_another_checkout_that_git_can_write_is_refused() {
    let rig = Rig::new();
    let id = "POLICY_OTHER_1";
    rig.approved_red(id, TX_PLAN_433);
    let work = rig.lab.dir.path().join("work");
    git(
        rig.lab.dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            rig.lab.origin.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(work.join("config")).unwrap();
    let p = work.join("config/policy.json");
    std::fs::write(&p, POLICY_433).unwrap();
    let p_s = p.to_str().unwrap().to_owned();
    let env = [("RXNODE_POLICY", p_s.as_str())];
    assert_refused_env(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        &env,
        "does not ignore it",
        "policy untracked and visible in another checkout",
    );
    git(&work, &["add", "config/policy.json"]);
    git(&work, &["commit", "-qm", "my policy"]);
    let se = assert_refused_env(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        &env,
        "that repository tracks it",
        "policy tracked by another checkout",
    );
    assert!(se.contains(&p_s) && se.contains("work"), "{se}");
    // Untracked and ignored there: a pull cannot replace it unseen (it would
    // be tracked, and refused, the moment one did).
    git(&work, &["rm", "-q", "--cached", "config/policy.json"]);
    std::fs::write(work.join(".git/info/exclude"), "/config/\n").unwrap();
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &env);
    expect_exit!(out, 0);
    assert_eq!(rig.tx_streams(), 1);
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
        expect_exit!(out, 3, "{why}");
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
        expect_exit!(out, 3);
    }
    // A file Git ignores (.local/), and one outside any work tree, are fine.
    let ok = rig.lab.local().join("rx_iq/manual/cap.cf32");
    let out = cap(&ok);
    expect_exit!(out, 0);
    assert!(ok.exists());
    // Straight into .local/rx_iq/ (as the operator guide says): the recording
    // must not make every later command refuse the node as untrusted.
    let flat = rig.lab.local().join("rx_iq/flat.sigmf-data");
    let out = cap(&flat);
    expect_exit!(out, 0);
    let out = rig.rx(&["status"], "", &[]);
    expect_exit!(out, 0);
    let outside = rig.lab.dir.path().join("elsewhere/cap.cf32");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    let out = cap(&outside);
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
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
    expect_exit!(out, 0);
    assert_eq!(rig.lab.status_of(id), "completed");
    let out = rig.rx(&["run", id], "AUTHORIZE RF TX\n", &[]);
    expect_exit!(out, 3);
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
        expect_exit!(out, 3);
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
