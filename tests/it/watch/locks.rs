//! Unreachable remotes, signals, the watcher lock and stale Git locks.
use super::*;

#[test]
fn unreachable_remote_fails_once_and_dry_run_still_works() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("gone.git");
    util::git(
        &lab.rx,
        &["remote", "set-url", "origin", missing.to_str().unwrap()],
    );
    let out = lab.watch_once("");
    expect_exit!(out, 1);
    assert!(text(&out.stderr).contains("fetch origin video-development failed"));
    assert_eq!(lab.state()["last_poll"]["ok"], false);

    let f = lab.dir.path().join("task.md");
    let task = Lab::task("T_DRY", &"a".repeat(40), &[]);
    std::fs::write(&f, &task).unwrap();
    let out = lab.run(
        &["watch", "--dry-run", "--task-file", f.to_str().unwrap()],
        "a\n",
    );
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(
        so.contains("ancestry check of EXPECTED_HEAD skipped") && so.contains("dry-run"),
        "{so}"
    );
    // A dry-run approval says what it really did, never `next: rxnode run` (run
    // would not know the task), and what to do for real.
    assert!(
        so.contains("dry run: this approval is recorded only under")
            && so.contains("`rxnode run T_DRY` does not know it")
            && so.contains("approve it in `rxnode watch`"),
        "{so}"
    );
    assert!(!so.contains("next: `rxnode run"), "{so}");
    let dry = lab.local().join("dry-run");
    assert_eq!(
        std::fs::read(dry.join("rx_agent_outbox/T_DRY/TASK.md")).unwrap(),
        task.as_bytes()
    );
    assert!(!lab.local().join("rx_agent_outbox").exists());
    assert!(lab.state()["tasks"].as_object().unwrap().is_empty());
}

/// Review finding: a SIGTERM that cancels a fetch in progress was recorded as
/// `fetch_failed` with a failed last poll. A large, incompressible commit
/// makes the fetch slow enough for the signal to land during the transfer.
#[cfg(unix)]
#[test]
fn sigterm_during_a_fetch_is_not_a_fetch_failure() {
    let lab = Lab::new();
    let before = util::git(
        &lab.rx,
        &["rev-parse", "refs/remotes/origin/video-development"],
    );
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let big: Vec<u8> = (0..(24 << 20) / 8)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect();
    lab.post_file("noise.bin", &big);
    drop(big);
    let w = lab
        .rxnode()
        .args(["watch", "--interval", "60"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !lab
        .ledger_events()
        .iter()
        .any(|e| e["event"] == "watcher_started")
    {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "watcher did not start"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    util::signal(w.id(), libc::SIGTERM);
    let out = w.wait_with_output().unwrap();
    expect_exit!(out, 0);
    let after = util::git(
        &lab.rx,
        &["rev-parse", "refs/remotes/origin/video-development"],
    );
    assert_eq!(before, after, "the fetch was not cancelled");
    assert!(
        !lab.ledger_events()
            .iter()
            .any(|e| e["event"] == "fetch_failed"),
        "{:?}",
        lab.ledger_events()
    );
    assert_ne!(lab.state()["last_poll"]["ok"], false, "{}", lab.state());
    let stopped: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "watcher_stopped")
        .collect();
    assert_eq!(stopped.len(), 1);
    assert_eq!(stopped[0]["detail"]["reason"], "signal");
}

/// A looping watcher in `lab`, once it holds its lock and has written its state;
/// killed and reaped if the test fails before stopping it.
#[cfg(unix)]
fn running_watcher(lab: &Lab) -> util::Reaped {
    let first = util::Reaped(
        lab.rxnode()
            .args(["watch", "--interval", "0.2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let lock = lab.local().join("rxnode.lock");
    let t0 = Instant::now();
    while !(lock.exists() && lab.local().join("rx_agent_state.json").exists()) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "watcher did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    first
}

#[cfg(unix)]
#[test]
fn second_watcher_refused_and_sigterm_is_graceful() {
    let lab = Lab::new();
    let mut first = running_watcher(&lab);
    let lock = lab.local().join("rxnode.lock");
    let out = lab.run(&["watch", "--once"], "");
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains(&format!("PID {}", first.id())),
        "{}",
        text(&out.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_slice(&lab.run(&["status", "--json"], "").stdout).unwrap();
    assert_eq!(s["watcher_running"], true);
    assert_eq!(s["state_running"], true);

    util::signal(first.id(), libc::SIGTERM);
    let status = stopped_within_2_s(&mut first.0);
    assert_eq!(status.code(), Some(0));
    assert!(!lock.exists());
    assert_eq!(lab.state()["running"], false);
    assert!(lab.state()["watcher_pid"].is_null());
}

/// A second watcher in the same checkout is refused (exit 3) naming the first and
/// how to stop it; under `--json` that is the error's `fix`, never null.
#[cfg(unix)]
#[test]
fn a_second_watcher_is_refused_with_the_way_to_stop_the_first() {
    let lab = Lab::new();
    let mut first = running_watcher(&lab);
    let out = lab.run(&["watch", "--once"], "");
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(
        se.contains(&format!("PID {}", first.id()))
            && se.contains(
                "one watcher runs per checkout — fix: let that rxnode finish, or stop it"
            )
            && se.contains("[S] at its prompt or Ctrl-C in its terminal"),
        "{se}"
    );
    let out = lab.run(&["--json", "watch", "--once"], "");
    expect_exit!(out, 3);
    let err: serde_json::Value =
        serde_json::from_str(text(&out.stderr).lines().last().unwrap_or("")).unwrap();
    assert!(
        err["error"]["fix"]
            .as_str()
            .is_some_and(|f| f.starts_with("let that rxnode finish")),
        "{err}"
    );
    util::signal(first.id(), libc::SIGTERM);
    assert_eq!(stopped_within_2_s(&mut first.0).code(), Some(0));
}

#[cfg(unix)]
#[test]
fn stale_lock_from_a_dead_pid_is_taken_over() {
    let lab = Lab::new();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    std::fs::create_dir_all(lab.local()).unwrap();
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    std::fs::write(
        lab.local().join("rxnode.lock"),
        serde_json::json!({"pid": pid, "host": host, "since": "2026-01-01T00:00:00+00:00", "command": "watch"}).to_string(),
    )
    .unwrap();
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert!(text(&out.stderr).contains("stale lock"));
    assert!(lab
        .ledger_events()
        .iter()
        .any(|e| e["event"] == "lock_taken_over"));
}

#[cfg(unix)]
#[test]
fn sigint_at_the_prompt_stops_without_a_decision() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_SIG", &lab.main_head(), &[]));
    let mut w = lab
        .rxnode()
        .args(["watch", "--interval", "0.2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while lab.count_events("prompted", "T_SIG") == 0 {
        assert!(t0.elapsed() < Duration::from_secs(10), "never prompted");
        std::thread::sleep(Duration::from_millis(20));
    }
    util::signal(w.id(), libc::SIGINT);
    let status = stopped_within_2_s(&mut w);
    assert_eq!(status.code(), Some(0));
    assert_eq!(lab.status_of("T_SIG"), "pending");
    assert_eq!(lab.state()["running"], false);
    assert!(!lab.local().join("rxnode.lock").exists());
    assert_eq!(lab.porcelain(), "");
}

#[test]
fn dry_run_of_an_invalid_file_reports_every_error_and_exits_2() {
    let lab = Lab::new();
    let f = lab.dir.path().join("bad.md");
    let bad = Lab::task(
        "T_BAD",
        &"a".repeat(40),
        &[("RF_RX", "MAYBE"), ("COLOUR", "red")],
    );
    std::fs::write(&f, bad).unwrap();
    let out = lab.run(
        &["watch", "--dry-run", "--task-file", f.to_str().unwrap()],
        "a\n",
    );
    expect_exit!(out, 2);
    let se = text(&out.stderr);
    assert!(se.contains("RF_RX") && se.contains("COLOUR"), "{se}");
    assert!(!text(&out.stdout).contains(PROMPT));
    assert!(!lab.local().join("rx_agent_state.json").exists());
}

#[cfg(unix)]
#[test]
fn fetch_failures_back_off_and_never_crash() {
    let lab = Lab::new();
    let missing = lab.dir.path().join("gone.git");
    util::git(
        &lab.rx,
        &["remote", "set-url", "origin", missing.to_str().unwrap()],
    );
    let w = lab
        .rxnode()
        .args(["watch", "--interval", "0.05"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    util::signal(w.id(), libc::SIGTERM);
    let out = w.wait_with_output().unwrap();
    expect_exit!(out, 0);
    let se = text(&out.stderr);
    let failures = se
        .lines()
        .filter(|l| l.contains("fetch origin video-development failed"))
        .count();
    // Without back-off 1.5 s at 0.05 s would be ~30 attempts; doubling gives ~5.
    assert!(
        (2..=8).contains(&failures),
        "{failures} failure lines:\n{se}"
    );
    assert!(se.contains("failure 2; next try in"), "{se}");
    assert_eq!(lab.state()["running"], false);
}

/// Write a watcher lock held by a PID that is dead on this host.
fn dead_watcher_lock(lab: &Lab) {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    std::fs::create_dir_all(lab.local()).unwrap();
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    std::fs::write(
        lab.local().join("rxnode.lock"),
        serde_json::json!({"pid": pid, "host": host, "since": "2026-01-01T00:00:00+00:00", "command": "watch"}).to_string(),
    )
    .unwrap();
}

/// The Git lock files a watcher SIGKILLed mid-fetch leaves (seen in
/// tests/crash.rs, seeds 1796112317612391327 and 1796114163707179361).
fn stale_git_locks(lab: &Lab) -> [std::path::PathBuf; 2] {
    let git = lab.rx.join(".git");
    let locks = [
        git.join("shallow.lock"),
        git.join("refs/remotes/origin/video-development.lock"),
    ];
    for l in &locks {
        // A fresh clone packs its refs: libgit2 creates the folder for the lock.
        std::fs::create_dir_all(l.parent().unwrap()).unwrap();
        std::fs::write(l, b"").unwrap();
    }
    locks
}

/// Reliability finding: a watcher killed during a libgit2 fetch left
/// `.git/shallow.lock` / the tracking ref's `.lock`, and every later fetch
/// failed on it. The next watcher, taking over the dead watcher's lock, removes
/// them (stderr + ledger) and fetches.
#[test]
fn git_locks_left_by_a_killed_watcher_are_removed_by_the_next() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_LOCKS", &lab.main_head(), &[]));
    let locks = stale_git_locks(&lab);
    dead_watcher_lock(&lab);
    let out = lab.watch_once("a\n");
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_LOCKS"), "approved");
    for l in &locks {
        assert!(!l.exists(), "{} left", l.display());
        assert!(
            se.contains(&format!("removing stale Git lock {}", l.display())),
            "{se}"
        );
    }
    let removed: Vec<_> = lab
        .ledger_events()
        .into_iter()
        .filter(|e| e["event"] == "git_lock_removed")
        .collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert_eq!(removed[0]["detail"]["previous_holder"]["command"], "watch");
}

/// A Git lock left by a killed watcher before the wall clock was stepped back
/// (its time still to come) was never removed: every later fetch failed on it.
/// It is removed as any other lock the dead watcher left.
#[test]
fn a_git_lock_stamped_in_the_future_by_a_killed_watcher_is_removed() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_FUTURE", &lab.main_head(), &[]));
    let locks = stale_git_locks(&lab);
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(86_400);
    for l in &locks {
        let f = std::fs::OpenOptions::new().write(true).open(l).unwrap();
        f.set_modified(later).unwrap();
    }
    dead_watcher_lock(&lab);
    let out = lab.watch_once("a\n");
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("T_FUTURE"), "approved", "{se}");
    for l in &locks {
        assert!(!l.exists(), "{} left: {se}", l.display());
    }
}

/// Without a dead watcher to blame (the lock was free) a Git lock file may be
/// an operator's live `git fetch`: it is left alone, and the fetch error names
/// it with the fix.
#[test]
fn a_git_lock_without_a_dead_watcher_is_kept_and_named() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_KEPT", &lab.main_head(), &[]));
    let locks = stale_git_locks(&lab);
    let out = lab.watch_once("");
    let se = text(&out.stderr);
    expect_exit!(out, 1);
    assert!(
        se.contains("fetch origin video-development failed")
            && se.contains("Git lock file")
            && se.contains("remove it"),
        "{se}"
    );
    for l in &locks {
        assert!(l.exists(), "{} removed", l.display());
    }
    assert!(!lab
        .ledger_events()
        .iter()
        .any(|e| e["event"] == "git_lock_removed"));
}

/// A lock file some live process has open (libgit2 keeps its lock files open
/// while it writes them) is not stale, even after a dead watcher.
#[cfg(target_os = "linux")]
#[test]
fn a_git_lock_open_by_a_live_process_is_kept() {
    let lab = Lab::new();
    lab.post(&Lab::task("T_OPEN", &lab.main_head(), &[]));
    let [shallow, tracking] = stale_git_locks(&lab);
    std::fs::remove_file(&tracking).unwrap();
    dead_watcher_lock(&lab);
    let mut holder = std::process::Command::new("sh")
        .arg("-c")
        .arg("exec 3<\"$1\"; echo ready; exec sleep 60")
        .arg("sh")
        .arg(&shallow)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    let out = lab.watch_once("");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let se = text(&out.stderr);
    expect_exit!(out, 1);
    assert!(shallow.exists());
    assert!(se.contains("shallow.lock"), "{se}");
    assert!(!se.contains("removing stale Git lock"), "{se}");
}
