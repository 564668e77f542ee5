//! `rxnode task new --body`: notes that would change how the task reads — a code
//! fence or HTML comment left open (it would take in the plan after it), a plan
//! fence of their own — are refused naming the line; nothing is written.
use super::*;

/// Each body that would swallow or add a plan: exit 2, the body's line and the
/// cause named, no task file; the same notes closed properly give a task whose
/// plan is the one given.
#[test]
fn task_new_refuses_a_body_that_would_change_the_plan() {
    let lab = Lab::new();
    let plan = lab.plan_file("plan.json", CLKIN_PLAN);
    let out_path = lab.root.path().join("task.md");
    for (name, body, want) in [
        (
            "fence.md",
            "```\n",
            "line 1 opens a fenced code block that is never closed",
        ),
        (
            "later.md",
            "Notes.\n\n~~~~sh\nls\n~~~\n",
            "line 3 opens a fenced code block that is never closed",
        ),
        (
            "comment.md",
            "Notes.\n<!-- draft\n",
            "line 2 opens an HTML block or comment that is never closed",
        ),
        (
            "plan.md",
            "Example:\n\n    ```rx-plan\n",
            "line 3 holds a plan fence",
        ),
    ] {
        let body = lab.plan_file(name, body);
        let out = rxnode(
            &lab.main,
            &[
                "task",
                "new",
                "--id",
                "BODY_1",
                "--title",
                "t",
                "--rx",
                "--plan",
                &plan,
                "--body",
                &body,
                "--out",
                out_path.to_str().unwrap(),
            ],
            "",
        );
        expect_exit!(out, 2, "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{body} {want}")), "{name}: {err}");
        assert!(err.contains("nothing was written"), "{name}: {err}");
        assert!(!out_path.exists(), "{name}: a task file was written");
    }
    let body = lab.plan_file("closed.md", "Notes.\n\n```sh\nls\n```\n<!-- done -->\n");
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "task",
            "new",
            "--id",
            "BODY_2",
            "--title",
            "t",
            "--rx",
            "--plan",
            &plan,
            "--body",
            &body,
            "--out",
            out_path.to_str().unwrap(),
        ],
        "",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["steps"], json!(["rx_capture"]));
    let val = rxnode(
        &lab.main,
        &["--json", "validate", out_path.to_str().unwrap()],
        "",
    );
    expect_exit!(val, 0);
    let r: Value = serde_json::from_slice(&val.stdout).unwrap();
    assert_eq!(r["steps"][0]["op"], "rx_capture", "{r}");
}
