//! Publication of one result: exactly three files land, and every refusal writes nothing.
use super::*;

#[test]
fn publish_push_lands_exactly_three_files_and_disturbs_nothing() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_PUB_1", "RX_RESULT_ONLY");
    // A local, uncommitted edit in the work tree must survive untouched.
    std::fs::write(co.join("README.md"), "operator's local edit\n").unwrap();
    let before = snapshot(&co);
    let vd_before = git(&fx.origin, &["rev-parse", "refs/heads/video-development"]);

    let out = publish(&co, "RX_PUB_1", true, Some("PUBLISH RX_PUB_1\n"));
    expect_exit!(out, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for shown in [
        "rx-results/RX_PUB_1/rx1/RX_RESULT.md",
        "RX_RESULT.json",
        "LOG_META.json",
        "NOT RUN",
        "bytes",
    ] {
        assert!(stdout.contains(shown), "summary lacks {shown}: {stdout}");
    }

    let files = git(
        &fx.origin,
        &["ls-tree", "-r", "--name-only", "refs/heads/rx-node"],
    );
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(
        files,
        [
            "rx-results/RX_PUB_1/rx1/LOG_META.json",
            "rx-results/RX_PUB_1/rx1/RX_RESULT.json",
            "rx-results/RX_PUB_1/rx1/RX_RESULT.md"
        ]
    );
    let md = git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_PUB_1/rx1/RX_RESULT.md"],
    );
    let local_md =
        std::fs::read_to_string(co.join(".local/rx_agent_outbox/RX_PUB_1/RX_RESULT.md")).unwrap();
    assert_eq!(md, local_md.trim_end());
    let meta: Value = serde_json::from_str(&git(
        &fx.origin,
        &["show", "rx-node:rx-results/RX_PUB_1/rx1/LOG_META.json"],
    ))
    .unwrap();
    assert_eq!(meta["task_id"], "RX_PUB_1");
    assert_eq!(meta["status"], "NOT RUN");
    assert_eq!(meta["source_commit"], fx.task_commit.as_str());
    let meta_text = meta.to_string();
    assert!(!meta_text.contains(&fx.root.path().display().to_string()));

    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/video-development"]),
        vd_before,
        "video-development on origin moved"
    );
    assert_eq!(snapshot(&co), before, "the checkout changed");

    let pushed = git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]);
    assert_eq!(git(&co, &["rev-parse", "refs/heads/rx-node"]), pushed);
    let st: Value =
        serde_json::from_slice(&std::fs::read(co.join(".local/rx_agent_state.json")).unwrap())
            .unwrap();
    assert_eq!(st["published"]["RX_PUB_1"]["commit"], pushed.as_str());
    assert_eq!(st["published"]["RX_PUB_1"]["pushed"], true);
    let ev = ledger_events(&co);
    assert!(ev
        .iter()
        .any(|e| e["event"] == "published" && e["task_id"] == "RX_PUB_1"));
    assert!(ev
        .iter()
        .any(|e| e["event"] == "pushed" && e["commit"] == pushed.as_str()));

    // A second publication of the same ID is refused, nothing moves.
    let again = publish(&co, "RX_PUB_1", true, Some("PUBLISH RX_PUB_1\n"));
    expect_exit!(again, 3);
    assert_eq!(
        git(&fx.origin, &["rev-parse", "refs/heads/rx-node"]),
        pushed
    );
}

#[test]
fn wrong_or_missing_confirmation_writes_nothing() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_CONF", "RX_RESULT_ONLY");
    for (answer, why) in [
        (Some("publish RX_CONF\n"), "lower case"),
        (Some("PUBLISH RX_CONF \n"), "trailing space"),
        (Some("PUBLISH OTHER\n"), "other ID"),
        (Some("yes\n"), "yes"),
        (None, "EOF"),
    ] {
        let before = refused_count(&co);
        let out = publish(&co, "RX_CONF", true, answer);
        assert_refused_nothing_written(&fx, &co, &out, before, why);
    }
    // CRLF is only a line terminator: the exact line still goes ahead.
    let out = publish(&co, "RX_CONF", false, Some("PUBLISH RX_CONF\r\n"));
    expect_exit!(out, 0);
    assert!(git_try(
        &fx.origin,
        &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]
    )
    .is_none());
    assert!(git_try(&co, &["rev-parse", "--verify", "-q", "refs/heads/rx-node"]).is_some());
}

#[test]
fn allow_push_no_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    fx.outbox(&co, "RX_NOPUSH", "NO");
    let before = refused_count(&co);
    let out = publish(&co, "RX_NOPUSH", true, Some("PUBLISH RX_NOPUSH\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "ALLOW_PUSH = NO");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ALLOW_PUSH"));
}

#[test]
fn unapproved_or_changed_task_is_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let dir = fx.outbox(&co, "RX_UNAPP", "RX_RESULT_ONLY");
    // The outbox text differs from what was approved.
    let mut t = std::fs::read_to_string(dir.join("TASK.md")).unwrap();
    t.push_str("an extra line\n");
    std::fs::write(dir.join("TASK.md"), t).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_UNAPP", true, Some("PUBLISH RX_UNAPP\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "changed text");
    // No approval at all.
    std::fs::remove_file(co.join(".local/rx_agent_state.json")).unwrap();
    let out = publish(&co, "RX_UNAPP", true, Some("PUBLISH RX_UNAPP\n"));
    expect_exit!(out, 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("never approved"));
}

#[test]
fn planted_secrets_paths_and_oversize_files_are_refused() {
    let token = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].concat();
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "RX_TOKEN",
            "RX_RESULT.md",
            format!("\nPushed with {token}\n"),
        ),
        (
            "RX_AWS",
            "RX_RESULT.md",
            "\nkey AKIAIOSFODNN7EXAMPLE\n".into(),
        ),
        (
            "RX_HOME",
            "RX_RESULT.md",
            "\nSaved to /home/alice/iq/cap.sigmf-data\n".into(),
        ),
        (
            "RX_WIN",
            "RX_RESULT.md",
            "\nSaved to C:\\Users\\alice\\cap.wav\n".into(),
        ),
        (
            "RX_KEY",
            "RX_RESULT.md",
            "\n-----BEGIN OPENSSH PRIVATE KEY-----\n".into(),
        ),
        (
            "RX_BIG",
            "RX_RESULT.md",
            format!("\n{}\n", "word ".repeat(60_000)),
        ),
        ("RX_BIN", "RX_RESULT.md", "\n\u{0}\n".into()),
    ];
    for (id, file, planted) in cases {
        let fx = Fixture::new();
        let co = fx.checkout("rx1");
        let dir = fx.outbox(&co, id, "RX_RESULT_ONLY");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(file))
            .unwrap();
        f.write_all(planted.as_bytes()).unwrap();
        drop(f);
        let before = refused_count(&co);
        let out = publish(&co, id, true, Some(&format!("PUBLISH {id}\n")));
        assert_refused_nothing_written(&fx, &co, &out, before, id);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains(&token), "{id}: the secret was echoed: {err}");
        // Refused for the planted reason, not by accident of something else.
        let why = match id {
            "RX_TOKEN" => "GitHub token",
            "RX_AWS" => "AWS access key",
            "RX_HOME" | "RX_WIN" => "absolute local path",
            "RX_KEY" => "private key block",
            "RX_BIG" => "256 KiB",
            _ => "binary",
        };
        assert!(
            err.contains(why),
            "{id}: refused, but not for {why:?}: {err}"
        );
        let ledger = std::fs::read_to_string(co.join(".local/rx_agent_ledger.jsonl")).unwrap();
        assert!(
            !ledger.contains(&token),
            "{id}: the secret reached the ledger"
        );
    }
}

#[test]
fn planted_token_in_json_and_md_json_disagreement_are_refused() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let dir = fx.outbox(&co, "RX_JSON", "RX_RESULT_ONLY");
    let p = dir.join("RX_RESULT.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["errors"] = json!(["remote https://bob:hunter2@git.example.com/x.git failed"]);
    std::fs::write(&p, v.to_string()).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "credentials URL in JSON");

    v["errors"] = json!([]);
    v["status"] = json!("PASS");
    std::fs::write(&p, v.to_string()).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "status disagrees");
    assert!(String::from_utf8_lossy(&out.stderr).contains("status"));

    std::fs::remove_file(dir.join("RX_RESULT.md")).unwrap();
    let before = refused_count(&co);
    let out = publish(&co, "RX_JSON", true, Some("PUBLISH RX_JSON\n"));
    assert_refused_nothing_written(&fx, &co, &out, before, "missing md");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

/// A confirmation left without `PUBLISH <ID>` (another line, end of input)
/// writes nothing and names the way on: the same command again (with `--push`
/// when it was given) and the phrase to type; typing it then publishes.
#[test]
fn publish_confirmation_refused_names_the_command_again_and_the_phrase() {
    let fx = Fixture::new();
    let co = fx.checkout("rx1");
    let id = "RX_PUB_FIX";
    fx.outbox(&co, id, "RX_RESULT_ONLY");
    for (push, answer) in [
        (true, Some("publish rx_pub_fix\n")),
        (false, Some("PUBLISH RX_PUB_FIX \r\n")),
        (true, None),
    ] {
        let out = publish(&co, id, push, answer);
        expect_exit!(out, 3);
        let err = String::from_utf8_lossy(&out.stderr);
        let command = if push {
            format!("rxnode publish {id} --push")
        } else {
            format!("rxnode publish {id}")
        };
        assert!(
            err.contains(&format!(
                "nothing was written — fix: `{command}` again, then type exactly `PUBLISH {id}` and Enter"
            )),
            "{answer:?}: {err}"
        );
        assert_eq!(
            git(&co, &["for-each-ref", "refs/heads/rx-node"]),
            "",
            "{answer:?}: nothing published"
        );
    }
    let out = publish(&co, id, true, Some("PUBLISH RX_PUB_FIX\n"));
    expect_exit!(out, 0);
}
