//! Every file rxnode creates under `.local/` is ignored by Git before it is
//! created; a refusal writes nothing.
use super::*;

const RECORD_PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=RX1", "frequency_hz": 100e6,
   "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": 0.1, "fft_size": 256, "record_iq": true},
  {"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
   "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}]}"#;

/// A committed `.gitignore` that un-ignores a folder rxnode has not created
/// yet (`!/.local/`, `/.local/*`, `!/.local/rx_iq/`): nothing is visible at the
/// start, but the recording would be. The run is refused before any radio step
/// (no TX stream, no line in the radio's log), and nothing is written.
#[test]
fn a_run_whose_recording_git_would_see_is_refused_before_any_radio_step() {
    let rig = Rig::new();
    let id = "UNIGNORED_IQ_1";
    rig.lab.post_and_approve(
        id,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "RED"),
        ],
        Some(RECORD_PLAN),
    );
    rig.set_policy(POLICY_433);
    rig.lab
        .post_file(".gitignore", b"!/.local/\n/.local/*\n!/.local/rx_iq/\n");
    rig.pull();
    let se = assert_refused(
        &rig,
        &["run", id],
        "AUTHORIZE RF TX\n",
        ".local/rx_iq/UNIGNORED_IQ_1/capture-1.sigmf-data",
        "un-ignored IQ folder",
    );
    assert!(se.contains("Git does not ignore"), "{se}");
    assert_eq!(rig.tx_streams(), 0);
    assert!(!rig.lab.local().join("rx_iq").exists());
    assert_eq!(rig.lab.status_of(id), "approved");
    assert_eq!(rig.lab.count_events("run_started", id), 0);
}

/// With `.local/` un-ignored by a committed `.gitignore` in a fresh clone,
/// every command refuses and leaves `.local/` exactly as it was: no lock, no
/// lock guard, no state lock, no ledger line — both with the operator's policy
/// in place (Git sees it) and with an empty `.local/` (nothing is visible until
/// rxnode would create its first file).
#[test]
fn a_refusal_over_an_unignored_local_folder_writes_nothing() {
    let rig = Rig::new();
    rig.lab.post_file(".gitignore", b"!/.local/\n!/.local/**\n");
    rig.pull();
    std::fs::create_dir_all(rig.lab.local()).unwrap();
    let commands = [
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["review", "ANY_1"],
        vec!["run", "ANY_1"],
        vec!["state", "rebuild"],
        vec!["mark-completed", "ANY_1"],
    ];
    for args in &commands {
        assert_refused(&rig, args, "A\n", ".local/", "un-ignored, empty .local/");
    }
    assert_eq!(std::fs::read_dir(rig.lab.local()).unwrap().count(), 0);
    rig.set_policy(OPERATOR_POLICY);
    for args in commands.iter().chain([&vec!["status"]]) {
        assert_refused(&rig, args, "A\n", ".local/", "un-ignored .local/");
    }
    let names: Vec<String> = std::fs::read_dir(rig.lab.local())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["rxnode-policy.json"]);
}

/// A committed `.gitignore` that already ignores `.local/` is the branch's to
/// delete: rxnode still writes its own `/.local/` line to the exclude file, so
/// after the main PC removes the line `git add -A` stages nothing of the node.
#[test]
fn the_exclude_file_gets_local_even_when_a_gitignore_ignores_it() {
    let rig = Rig::new();
    rig.lab.post_file(".gitignore", b"/.local/\n");
    rig.pull();
    let id = "EXCLUDE_1";
    rig.lab.post_and_approve(id, &[], None);
    let exclude = std::fs::read_to_string(rig.lab.rx.join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|l| l == "/.local/"), "{exclude}");
    // The main PC deletes its line; the operator pulls.
    std::fs::write(rig.lab.main.join(".gitignore"), b"").unwrap();
    git(&rig.lab.main, &["commit", "-q", "-am", "drop ignore"]);
    git(&rig.lab.main, &["push", "-q", "origin", BRANCH]);
    rig.pull();
    git(&rig.lab.rx, &["add", "-A"]);
    let staged = git(&rig.lab.rx, &["diff", "--cached", "--name-only"]);
    assert!(!staged.contains(".local"), "{staged}");
}

/// The same for an approval: a committed rule un-ignoring the outbox folder
/// before it exists makes the watcher refuse the tip that carries it (the task
/// is not offered, so `[A]` writes no outbox) and Git never sees a file of it.
#[test]
fn an_approval_whose_outbox_git_would_see_writes_no_outbox() {
    let rig = Rig::new();
    rig.lab.post_file(
        ".gitignore",
        b"!/.local/\n/.local/*\n!/.local/rx_agent_outbox/\n",
    );
    rig.pull();
    let id = "UNIGNORED_OUTBOX_1";
    let t = rig.lab.plan_task(id, &[], None);
    rig.lab.post(&t);
    rig.pull();
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("its .gitignore lets Git see .local/rx_agent_outbox/"),
        "{all}"
    );
    assert!(!rig.lab.outbox(id).exists());
    assert_ne!(rig.lab.status_of(id), "approved");
    assert_eq!(rig.lab.porcelain(), "", "git status sees node files");
}

/// `mark-completed --status` renders the result in a staging folder beside the
/// outbox: a committed `.gitignore` that un-ignores that folder (the outbox itself
/// stays ignored) gets a refusal naming it, and nothing is written or changed.
#[test]
fn a_manual_result_whose_staging_folder_git_would_see_is_refused() {
    let rig = Rig::new();
    let id = "UNIGNORED_STAGE_1";
    rig.lab.post_and_approve(id, &[], None);
    rig.lab.post_file(
        ".gitignore",
        format!(
            "!/.local/\n/.local/*\n!/.local/rx_agent_outbox/\n/.local/rx_agent_outbox/*\n\
             !/.local/rx_agent_outbox/.tmp-{id}.mark-completed/\n"
        )
        .as_bytes(),
    );
    rig.pull();
    let json = rig.lab.outbox(id).join("RX_RESULT.json");
    let before = std::fs::read(&json).unwrap();
    assert_refused(
        &rig,
        &["mark-completed", id, "--status", "PASS", "--note", "done"],
        "",
        &format!(".local/rx_agent_outbox/.tmp-{id}.mark-completed"),
        "un-ignored staging folder",
    );
    let staging = rig
        .lab
        .outbox(id)
        .with_file_name(format!(".tmp-{id}.mark-completed"));
    assert!(!staging.exists());
    assert_eq!(std::fs::read(&json).unwrap(), before);
    assert_eq!(rig.lab.status_of(id), "approved");
}

/// A committed `.gitignore` of one line, `!/.local/`, outranks the exclude rxnode
/// writes: after the pull `git add -A` would stage the policy, the state and the
/// ledger. Every command refuses, naming a file Git can see, and changes nothing.
#[test]
fn a_committed_unignore_of_local_alone_is_refused_after_the_pull() {
    let rig = Rig::new();
    rig.set_policy(OPERATOR_POLICY);
    rig.lab.post_file(".gitignore", b"!/.local/\n");
    rig.pull();
    let staged = std::process::Command::new("git")
        .args(["add", "-A", "--dry-run"])
        .current_dir(&rig.lab.rx)
        .output()
        .unwrap();
    assert!(
        text(&staged.stdout).contains("add '.local/rxnode-policy.json'"),
        "git itself must see the policy: {}",
        text(&staged.stdout)
    );
    for args in [
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["run", "ANY_1"],
        vec!["status"],
        vec!["state", "rebuild"],
    ] {
        let se = assert_refused(
            &rig,
            &args,
            "A\n",
            ".local/rxnode-policy.json",
            "un-ignored .local/",
        );
        assert!(se.contains("Git can see"), "{se}");
    }
}

/// The watcher refuses a fetched tip whose `.gitignore` would un-ignore the
/// node's files, before the operator pulls it: exit 3, the effect named, one
/// `refused` line in the ledger, and no task of that tip examined.
#[test]
fn a_watched_tip_that_unignores_local_is_refused_before_the_pull() {
    let rig = Rig::new();
    rig.set_policy(OPERATOR_POLICY);
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "", &[]);
    expect_exit!(out, 0);
    let tip = rig.lab.post_file(".gitignore", b"# lab rules\n!/.local/\n");
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
    let se = text(&out.stderr);
    expect_exit!(out, 3, "{se}");
    assert!(
        se.contains(&tip)
            && se.contains("its .gitignore lets Git see .local/")
            && se.contains("do not pull it"),
        "{se}"
    );
    let refused: Vec<_> = rig
        .lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "refused" && e["commit"] == tip.as_str())
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
    // A tip whose .gitignore keeps `.local/` ignored is examined as usual.
    rig.lab
        .post_file(".gitignore", b"/.local/\n!/.local/\n/.local/*\n");
    let out = rig.rx(&["watch", "--once", "--interval", "0.2"], "A\n", &[]);
    expect_exit!(out, 0, "{}", text(&out.stderr));
}

/// A `.local/` in a folder of a clone (`docs/.local/`) is a folder Git writes: a
/// commit carrying `docs/.local/rxnode-policy.json` must not set the limits of a
/// capture run from `docs/` of a clone that is no node yet. Refused (exit 3)
/// naming the work tree, before the radio opens; outside every checkout a
/// `.local/` is still used.
#[test]
fn a_local_folder_inside_a_clones_subfolder_is_not_trusted() {
    let rig = Rig::new();
    rig.lab.post_file(
        "docs/.local/rxnode-policy.json",
        br#"{"rx":{"max_duration_s":100000,"max_gain_db":200}}"#,
    );
    rig.pull();
    let docs = rig.lab.rx.join("docs");
    let capture = [
        "--sim",
        "capture",
        "-d",
        "driver=rxsim",
        "-f",
        "100M",
        "-r",
        "2M",
        "-t",
        "0.1",
        "-g",
        "20",
    ];
    let out = crate::util::rxnode_cmd()
        .arg("--repo")
        .arg(&docs)
        .args(capture)
        .env("RXSIM_EVENT_LOG", &rig.events)
        .output()
        .unwrap();
    let se = text(&out.stderr);
    expect_exit!(out, 3, "{se}");
    assert!(
        se.contains("docs/.local lies inside the Git work tree") && se.contains("fix:"),
        "{se}"
    );
    assert!(
        rig.event_lines().is_empty(),
        "the radio opened: {:?}",
        rig.event_lines()
    );
    let plain = tempfile::tempdir().unwrap();
    std::fs::create_dir(plain.path().join(".local")).unwrap();
    let out = crate::util::rxnode_cmd()
        .arg("--repo")
        .arg(plain.path())
        .args(capture)
        .env("RXSIM_EVENT_LOG", &rig.events)
        .output()
        .unwrap();
    expect_exit!(out, 0, "{}", text(&out.stderr));
}
