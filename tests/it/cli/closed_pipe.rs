//! A reader that closes the pipe early is not an error: every command ends quietly,
//! with status 0 or, for a verdict, the verdict's status.
#[cfg_attr(not(unix), allow(unused_imports))]
use super::*;

/// A reader that closes the pipe early (`rxnode man | head -1`) is not an error:
/// rxnode ends quietly with status 0, as `cat` and `rg` do.
#[cfg(unix)]
#[test]
fn closed_pipe_ends_quietly_with_status_zero() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .current_dir(d.path())
        .args([
            "-c",
            "set -o pipefail; \"$0\" man | head -c 10 >/dev/null; echo \"status=$?\" >&2",
        ])
        .arg(env!("CARGO_BIN_EXE_rxnode"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("status=0"), "{err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("error"),
        "{err}"
    );
}

/// A report printed line by line (`validate`'s verdict on a valid task, human and
/// `--json`) to a reader that has already gone ends quietly with status 0, as `man`
/// does above: the closed pipe is recognised by its kind wherever the write fails.
#[cfg(unix)]
#[test]
fn a_report_printed_into_a_closed_pipe_ends_quietly_with_status_zero() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let d = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (json, file) in [(false, "valid_yellow_rx.md"), (true, "valid_yellow_rx.md")] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes; each is
        // owned exactly once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let mut c = rxnode(d.path());
        if json {
            c.arg("--json");
        }
        let out = c
            .arg("validate")
            .arg(fixtures.join(file))
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        expect_exit!(out, 0, "{file} json={json}");
        assert!(out.stderr.is_empty(), "{file} json={json}: {}", show(&out));
    }
    // Generated text (completions, the man page) ends the same way.
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["man"],
    ] {
        let mut fds = [0; 2];
        // SAFETY: as above.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = rxnode(d.path())
            .args(args)
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        expect_exit!(out, 0, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", show(&out));
    }
}

/// `rxnode <cmd>` into a pipe whose reader has gone: every command ends with
/// status 0 and says nothing (no "internal error", no "Broken pipe"), whether it
/// prints a report (text or `--json`), a schema, help, a version, or a capture's
/// summary; the closed pipe comes back as an error by its kind, one rule for all.
#[cfg(unix)]
#[test]
fn every_command_into_a_closed_pipe_ends_with_status_zero() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let lab = crate::util::Lab::new();
    let sim = lab.dir.path().join("sim");
    std::fs::create_dir_all(&sim).unwrap();
    let capture = [
        "--sim",
        "--json",
        "capture",
        "--device",
        "driver=rxsim,tone_hz=100.1e6",
        "--frequency-hz",
        "100e6",
        "--sample-rate-hz",
        "1e6",
        "--duration-s",
        "0.1",
    ];
    let cases: [&[&str]; 13] = [
        &["results"],
        &["--json", "results"],
        &["status"],
        &["--json", "status"],
        &["health"],
        &["--json", "health"],
        &["schema", "result"],
        &["--json", "--version"],
        &["--help"],
        &["capture", "--help"],
        &["node", "show"],
        &["completions", "fish"],
        &capture,
    ];
    for args in cases {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes; each is
        // owned exactly once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = lab
            .rxnode()
            .current_dir(&sim)
            .env("RXSIM_EVENT_LOG", sim.join("events.log"))
            .env("XDG_CACHE_HOME", sim.join("cache"))
            .args(args)
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("internal error") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        expect_exit!(out, 0, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", show(&out));
    }
}

/// A verdict keeps its status into a closed pipe: `validate` of an invalid task,
/// `validate-result` of an invalid result, `results verify` of a result that does
/// not verify (2) and a failing `doctor` (1) ended with status 0 — "valid" — when
/// the reader had gone (`| grep -q`, `| head -0`), so `set -o pipefail` read a
/// refused task or a tampered result as good.
#[cfg(unix)]
#[test]
fn a_verdict_keeps_its_status_into_a_closed_pipe() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let lab = crate::util::Lab::new();
    // A result on rx-node that does not verify (its Markdown and LOG_META are missing).
    let hand = lab.dir.path().join("hand");
    std::fs::create_dir_all(&hand).unwrap();
    crate::util::git(&hand, &["init", "-q"]);
    crate::util::git(&hand, &["checkout", "-q", "--orphan", "rx-node"]);
    let d = hand.join("rx-results/BAD_1/LAB-B");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("RX_RESULT.json"),
        r#"{"schema_version": 1, "task_id": "BAD_1", "status": "PASS"}"#,
    )
    .unwrap();
    crate::util::git(&hand, &["add", "-A"]);
    crate::util::git(&hand, &["commit", "-q", "-m", "rx-results: BAD_1"]);
    crate::util::git(
        &hand,
        &["push", "-q", lab.origin.to_str().unwrap(), "rx-node"],
    );
    let bad_result = d.join("RX_RESULT.json");
    let invalid = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/invalid_many_errors.md");
    let outside = lab.dir.path().join("not-a-checkout");
    std::fs::create_dir_all(&outside).unwrap();
    let main = lab.main.to_str().unwrap().to_owned();
    let cases: Vec<(Vec<String>, &Path, i32)> = vec![
        (
            vec!["validate".into(), invalid.display().to_string()],
            &outside,
            2,
        ),
        (
            vec![
                "--json".into(),
                "validate".into(),
                invalid.display().to_string(),
            ],
            &outside,
            2,
        ),
        (
            vec![
                "--json".into(),
                "validate-result".into(),
                bad_result.display().to_string(),
            ],
            &outside,
            2,
        ),
        (
            vec![
                "--repo".into(),
                main.clone(),
                "results".into(),
                "verify".into(),
                "BAD_1".into(),
            ],
            &outside,
            2,
        ),
        (
            vec![
                "--json".into(),
                "--repo".into(),
                main,
                "results".into(),
                "verify".into(),
                "BAD_1".into(),
            ],
            &outside,
            2,
        ),
        (
            vec![
                "--repo".into(),
                outside.display().to_string(),
                "doctor".into(),
            ],
            &outside,
            1,
        ),
    ];
    for (args, cwd, want) in cases {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes; each is
        // owned exactly once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = crate::util::rxnode_cmd()
            .current_dir(cwd)
            .env("GIT_TERMINAL_PROMPT", "0")
            .args(&args)
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("internal error") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        expect_exit!(out, want, "{args:?}");
        // The same command with a reader: the same status (the case is what it says).
        let read = crate::util::rxnode_cmd()
            .current_dir(cwd)
            .env("GIT_TERMINAL_PROMPT", "0")
            .args(&args)
            .output()
            .unwrap();
        expect_exit!(read, want, "{args:?} with a reader");
    }
}
