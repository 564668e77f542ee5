//! The checkout `--repo` names: a folder inside the node's work tree stands for
//! the node, and a folder that does not exist is bad input.
use crate::util::{git, rxnode_cmd, show, text, Lab};
use std::path::Path;
use std::process::Command;

/// rxnode started in `dir` with no `--repo` (the default `.`), on the lab's radios.
fn in_folder(lab: &Lab, dir: &Path) -> Command {
    let mut c = rxnode_cmd();
    c.current_dir(dir)
        .env("RXSIM_EVENT_LOG", lab.events_log())
        .env("HOME", lab.dir.path());
    c
}

/// From `docs/` of the node's checkout (the operator reading a task there) every
/// command is the node's: its policy's limits hold for `capture` and `sweep` (they
/// were the defaults: 60 dB and 20 s ran under a 30 dB / 1 s policy), `status`
/// shows its name and approved task (it showed an empty node, exit 0), `run` finds
/// the task approved (it was "unknown to this node", exit 3), and no `docs/.local/`
/// appears for Git to see.
#[test]
fn a_folder_inside_the_checkout_is_the_node_with_its_policy_and_state() {
    let lab = Lab::new();
    let o = lab
        .rxnode()
        .args(["node", "set-name", "LAB1"])
        .output()
        .unwrap();
    expect_exit!(o, 0);
    lab.post_and_approve("T1", &[], None);
    lab.set_policy(r#"{"rx": {"max_duration_s": 1, "max_gain_db": 30}}"#);
    let docs = lab.rx.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    for (what, dir) in [
        ("docs", docs.clone()),
        ("--repo docs", lab.dir.path().to_path_buf()),
    ] {
        let repo_flag: Vec<&std::ffi::OsStr> = if what == "docs" {
            vec![]
        } else {
            vec!["--repo".as_ref(), docs.as_os_str()]
        };
        let o = in_folder(&lab, &dir)
            .args(&repo_flag)
            .args([
                "--sim",
                "capture",
                "-d",
                "driver=rxsim",
                "-f",
                "100M",
                "-r",
                "1M",
            ])
            .args(["-t", "0.1", "-g", "60"])
            .output()
            .unwrap();
        expect_exit!(o, 3, "{what}: capture above the policy's gain");
        assert!(
            text(&o.stderr).contains("rx.max_gain_db 30"),
            "{what}: {}",
            show(&o)
        );
        let o = in_folder(&lab, &dir)
            .args(&repo_flag)
            .args(["--sim", "sweep", "-d", "driver=rxsim", "--start-hz", "100M"])
            .args([
                "--stop-hz",
                "104M",
                "--bin-hz",
                "10k",
                "-g",
                "20",
                "--repeats",
                "40",
            ])
            .output()
            .unwrap();
        expect_exit!(o, 3, "{what}: a sweep past the policy's duration");
        assert!(
            text(&o.stderr).contains("rx.max_duration_s"),
            "{what}: {}",
            show(&o)
        );
        let o = in_folder(&lab, &dir)
            .args(&repo_flag)
            .arg("status")
            .output()
            .unwrap();
        expect_exit!(o, 0);
        let out = text(&o.stdout);
        assert!(out.contains("LAB1"), "{what}: status: {out}");
        assert!(
            out.lines()
                .any(|l| l.starts_with("approved:") && l.contains("T1")),
            "{what}: status: {out}"
        );
        let o = in_folder(&lab, &dir)
            .args(&repo_flag)
            .args(["--sim", "run", "T1"])
            .output()
            .unwrap();
        assert!(
            !text(&o.stderr).contains("unknown to this node"),
            "{what}: run: {}",
            show(&o)
        );
        assert!(
            !docs.join(".local").exists(),
            "{what}: docs/.local/ was made"
        );
        assert_eq!(lab.porcelain(), "", "{what}: Git sees files the node made");
    }
    // A work tree that is no node (nothing of rxnode in its `.local/`) is not taken
    // for one: its `.local/` is left alone, and `status` names its top.
    let other = tempfile::tempdir().unwrap();
    git(other.path(), &["init", "-q"]);
    let sub = other.path().join("captures");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(other.path().join(".local")).unwrap();
    let o = in_folder(&lab, &sub).arg("status").output().unwrap();
    expect_exit!(o, 2);
    assert!(!text(&o.stdout).contains("LAB1"), "{}", show(&o));
    assert!(
        text(&o.stderr).contains("inside the Git checkout"),
        "{}",
        show(&o)
    );
    assert_eq!(
        std::fs::read_dir(other.path().join(".local"))
            .unwrap()
            .count(),
        0,
        "the home-like work tree's .local/ was written"
    );
}

/// A `--repo` that does not exist (a typo, a stale `RXNODE_REPO`) is bad input
/// naming it, and nothing is made there: `status` reported an idle empty node
/// (exit 0), `state rebuild` made the folder and its parents and said "rebuilt",
/// `run` called the task unknown (exit 3).
#[test]
fn a_repo_folder_that_does_not_exist_is_named_and_nothing_is_made() {
    let d = tempfile::tempdir().unwrap();
    let gone = d.path().join("lab-rx").join("typo");
    let file = d.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for args in [
        vec!["status"],
        vec!["state", "rebuild"],
        vec!["run", "T1"],
        vec!["mark-completed", "T1", "--status", "PASS"],
        vec!["publish", "T1"],
        vec!["health"],
        vec!["node", "set-name", "LAB1"],
        vec![
            "capture",
            "-d",
            "driver=rxsim",
            "-f",
            "100M",
            "-r",
            "1M",
            "-t",
            "0.1",
        ],
    ] {
        let o = rxnode_cmd()
            .arg("--sim")
            .arg("--repo")
            .arg(&gone)
            .args(&args)
            .output()
            .unwrap();
        expect_exit!(o, 2, "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("--repo {}: no such folder", gone.display())),
            "{args:?}: {err}"
        );
        assert!(err.contains("fix:"), "{args:?}: {err}");
        assert!(
            !d.path().join("lab-rx").exists(),
            "{args:?} made the folder"
        );
        let o = rxnode_cmd()
            .arg("--repo")
            .arg(&file)
            .args(&args)
            .output()
            .unwrap();
        expect_exit!(o, 2, "{args:?} on a file");
        assert!(
            text(&o.stderr).contains("a file, not a folder"),
            "{}",
            show(&o)
        );
    }
}

/// The main PC's commands work from any folder of its clone, as Git does: `task new`
/// from `docs/` writes the task at the clone's task path and `results` reads the
/// clone's results (both said ". is not a Git repository", false). In a node's clone
/// that is no node yet, a command that needs the checkout names its top and the fix
/// (it said "not a Git checkout", false).
#[test]
fn a_folder_inside_a_clone_is_its_work_tree_or_names_the_top() {
    let lab = Lab::new();
    let docs = lab.main.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let o = in_folder(&lab, &docs)
        .args(["task", "new", "--id", "SUB_1", "--title", "from docs"])
        .output()
        .unwrap();
    expect_exit!(o, 0);
    let task = std::fs::read_to_string(lab.main.join(crate::util::TASK_PATH)).unwrap();
    assert!(task.contains("TASK_ID = SUB_1"), "{task}");
    assert!(
        !docs.join("docs").exists(),
        "the task was written under docs/docs/"
    );
    let o = in_folder(&lab, &docs).arg("results").output().unwrap();
    expect_exit!(o, 0);
    assert!(
        !text(&o.stderr).contains("not a Git repository"),
        "{}",
        show(&o)
    );

    let sub = lab.rx.join("docs");
    std::fs::create_dir_all(&sub).unwrap();
    for args in [vec!["node", "set-name", "LAB1"], vec!["watch", "--once"]] {
        let o = in_folder(&lab, &sub).args(&args).output().unwrap();
        expect_exit!(o, 2, "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("inside the Git checkout {}", lab.rx.display()))
                && err.contains(&format!("--repo {}", lab.rx.display())),
            "{args:?}: {err}"
        );
        assert!(!err.contains("not a Git checkout"), "{args:?}: {err}");
        assert!(!sub.join(".local").exists(), "{args:?} made docs/.local/");
    }
}

/// In a folder that is in no checkout (the home folder, a download folder) the
/// commands that keep the node's record say so and name the fix, exit 1, and make
/// nothing there: `status` reported an idle empty node (exit 0), `state rebuild`
/// wrote a new state in a `.local/` it made, `run` called the task unknown.
#[test]
fn the_node_record_commands_outside_a_checkout_say_so_and_make_nothing() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        vec!["status"],
        vec!["state", "rebuild"],
        vec!["run", "T1"],
        vec!["mark-completed", "T1", "--status", "PASS"],
        vec!["publish", "T1"],
    ] {
        let o = rxnode_cmd()
            .current_dir(d.path())
            .args(&args)
            .output()
            .unwrap();
        expect_exit!(o, 2, "{args:?}");
        let err = text(&o.stderr);
        assert!(
            err.contains(". is not a Git checkout")
                && err.contains("fix: run rxnode inside the RX clone"),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "{args:?} made files"
        );
    }
}
