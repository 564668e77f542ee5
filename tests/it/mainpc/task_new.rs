//! `rxnode task new`: a valid task on the branch head, never committed.
use super::*;

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
    expect_exit!(out, 0);
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
    expect_exit!(val, 0);
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
    human_output_and_no_overwrite(&lab, &plan, &head);
    refusals_write_nothing(&lab);
    a_plan_from_stdin_posts_for_real(&lab);
}

/// The human output names the risk, the head and the commands; no overwrite without `--force`.
fn human_output_and_no_overwrite(lab: &Lab, plan: &str, head: &str) {
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
            plan,
        ],
        "",
    );
    expect_exit!(out, 0);
    let h = stdout(&out);
    assert!(h.contains("risk:          YELLOW"), "{h}");
    assert!(
        h.contains(&format!("EXPECTED_HEAD: {head} = refs/heads/{BRANCH}")),
        "{h}"
    );
    assert!(h.contains("strict ancestor"), "{h}");
    assert!(h.contains("Nothing was committed or pushed"), "{h}");

    // Only commands that work: the task was written where it is committed from,
    // so there is nothing to copy.
    assert!(!h.lines().any(|l| l.trim_start().starts_with("cp ")), "{h}");

    // A new task replaces the draft without --force (the previous one was posted
    // or given up); the same ID with another text is refused, the file unchanged.
    let out = rxnode(
        &lab.main,
        &["task", "new", "--id", "NEW_2", "--title", "other"],
        "",
    );
    expect_exit!(out, 0);
    let before = std::fs::read(lab.main.join(TASK_PATH)).unwrap();
    assert!(String::from_utf8_lossy(&before).starts_with("TASK_ID = NEW_2\n"));
    let out = rxnode(
        &lab.main,
        &["task", "new", "--id", "NEW_2", "--title", "other, revised"],
        "",
    );
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("already holds task NEW_2 with another text") && err.contains("new --id"),
        "{}",
        show(&out)
    );
    assert_eq!(std::fs::read(lab.main.join(TASK_PATH)).unwrap(), before);

    // A receiving plan without --rx names the flag to add.
    let rx_plan = lab.plan_file(
        "nogain.json",
        r#"{"steps": [{"op": "rx_capture", "device": "driver=hackrf", "frequency_hz": 100e6,
            "sample_rate_hz": 2e6, "duration_s": 1}]}"#,
    );
    let out = rxnode(
        &lab.main,
        &[
            "task", "new", "--id", "NEW_3", "--title", "rx", "--plan", &rx_plan,
        ],
        "",
    );
    expect_exit!(out, 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("fix: add --rx"),
        "{}",
        show(&out)
    );
    // A --risk below the derived level: the fix is to drop or raise it, not to add it.
    let out = rxnode(
        &lab.main,
        &[
            "task", "new", "--id", "NEW_3", "--title", "rx", "--rx", "--risk", "GREEN",
        ],
        "",
    );
    expect_exit!(out, 2);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(
        se.contains("fix: drop --risk") && !se.contains("fix: add --risk"),
        "{se}"
    );
    // With --rx it is written, with a warning that a gain limit will BLOCK it.
    let out = rxnode(
        &lab.main,
        &[
            "--json", "task", "new", "--id", "NEW_3", "--title", "rx", "--rx", "--plan", &rx_plan,
        ],
        "",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = v["warnings"][0].as_str().unwrap_or_default();
    assert!(
        w.contains("step 1 (rx_capture) has no gain_db") && w.contains("rx.max_gain_db"),
        "{v}"
    );
}

/// Refusals name the problem and write nothing.
fn refusals_write_nothing(lab: &Lab) {
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
        expect_exit!(out, 2, "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{args:?}: {}",
            show(&out)
        );
        assert!(!out_file.exists(), "{args:?} wrote a file");
    }
}

/// The plan from stdin, to `--out`; the printed commands post it and a node accepts it.
fn a_plan_from_stdin_posts_for_real(lab: &Lab) {
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
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The commit is signed (`-S`) with the main PC's SSH key.
    let key = crate::util::Key::new(lab.root.path(), "main-pc-key");
    for c in v["commands"].as_array().unwrap() {
        let c = c.as_str().unwrap();
        let run = Command::new("sh")
            .env("GIT_CONFIG_COUNT", "2")
            .env("GIT_CONFIG_KEY_0", "gpg.format")
            .env("GIT_CONFIG_VALUE_0", "ssh")
            .env("GIT_CONFIG_KEY_1", "user.signingkey")
            .env("GIT_CONFIG_VALUE_1", &key.private)
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
        expect_exit!(run, 0, "{c}");
    }
    assert_eq!(git(&lab.main, &["status", "--porcelain"]), "");
    let raw = git(&lab.main, &["cat-file", "commit", "HEAD"]);
    assert!(raw.contains("-----BEGIN SSH SIGNATURE-----"), "{raw}");
    let rx = lab.node("LAB-NEW");
    approve(&rx);
    let st: Value =
        serde_json::from_slice(&std::fs::read(rx.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert!(st["approvals"]["NEW_3"].is_object(), "{st}");
}
