//! Watcher idle cost: CPU time per idle poll against a local bare origin, and
//! per hour at a 10 s interval. Run: `cargo bench --bench watch_idle`.
//!
//! Measures the real binary (child CPU via `getrusage(RUSAGE_CHILDREN)`):
//! start-up cost from `watch --once` runs, then a watcher left polling a
//! branch that does not move for a fixed time; polls are counted from its
//! `-v` log ("poll: nothing new").
//!
//! Then the cost of one poll by how much history lies between the
//! marker and the tip: 0, 1, 10 and 1000 commits since the marker, either
//! touching another file (the main PC's ordinary work: walked, no version) or
//! each rewriting the task file (every one a new task version: walked, the
//! newest 50 examined and recorded, the first prompt answered by end of
//! input). Each figure is one `watch --once` with the state restored to the
//! marker before it, objects already local (the fetch transfers nothing).
//! `RXNODE_BENCH_REPS` sets the repetitions (default 5).
//!
//! Last, the idle watcher again with status publishing on (heartbeats every 1 s
//! and every 10 s to the same origin), per idle poll against status off.
//! `RXNODE_BENCH_SKIP_HISTORY=1` measures only the idle watcher.
#[cfg(unix)]
fn main() {
    if std::env::var_os("RXNODE_BENCH_SKIP_HISTORY").is_none() {
        history_cost();
    }
    use std::io::Read;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=b", "-c", "user.email=b@example.invalid"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "git {args:?} failed");
    }
    fn child_cpu() -> f64 {
        // SAFETY: getrusage only writes into the zeroed struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        t(ru.ru_utime) + t(ru.ru_stime)
    }

    let secs: f64 = std::env::var("RXNODE_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20.0);
    let interval = 0.25;
    let dir = tempfile::tempdir().expect("tempdir");
    let origin = dir.path().join("origin.git");
    let main = dir.path().join("main");
    let rx = dir.path().join("rx");
    git(
        dir.path(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    git(dir.path(), &["init", "-q", main.to_str().unwrap()]);
    git(&main, &["checkout", "-q", "-b", "video-development"]);
    std::fs::write(main.join("README.md"), "bench\n").unwrap();
    git(&main, &["add", "README.md"]);
    git(&main, &["commit", "-q", "-m", "start"]);
    git(
        &main,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    git(&main, &["push", "-q", "origin", "video-development"]);
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            "video-development",
            origin.to_str().unwrap(),
            rx.to_str().unwrap(),
        ],
    );
    let bin = env!("CARGO_BIN_EXE_rxnode");

    // Start-up + one poll.
    let runs = 5;
    let c0 = child_cpu();
    for _ in 0..runs {
        let ok = Command::new(bin)
            .args(["--repo", rx.to_str().unwrap(), "watch", "--once"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(ok, "watch --once failed");
    }
    let once = (child_cpu() - c0) / runs as f64;

    // A long-running idle watcher.
    let idle = |label: &str| -> (usize, f64, f64) {
        let c1 = child_cpu();
        let mut w = Command::new(bin)
            .args([
                "--repo",
                rx.to_str().unwrap(),
                "-v",
                "watch",
                "--interval",
                &interval.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn watcher");
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(w.id() as libc::pid_t, libc::SIGTERM) };
        let mut log = String::new();
        if let Some(mut e) = w.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        let _ = w.wait();
        let wall = t0.elapsed().as_secs_f64();
        let total = child_cpu() - c1;
        let polls = log.matches("poll: nothing new").count().max(1);
        let _ = label;
        (polls, wall, total)
    };
    let (polls, wall, total) = idle("status off");

    let per_poll = ((total - once).max(0.0)) / polls as f64;
    let per_hour_10s = per_poll * 360.0;
    println!(
        "watcher idle cost (local bare origin, debug={})",
        cfg!(debug_assertions)
    );
    println!(
        "  start-up + one poll (watch --once): {:.1} ms CPU",
        once * 1e3
    );
    println!(
        "  idle watcher: {polls} polls in {wall:.1} s, {:.1} ms CPU total",
        total * 1e3
    );
    println!(
        "  per idle poll (fetch + marker compare + heartbeat write): {:.2} ms CPU",
        per_poll * 1e3
    );
    println!(
        "  at a 10 s interval: {:.2} s CPU per hour = {:.4} % of one core (target < 0.5 %)",
        per_hour_10s,
        per_hour_10s / 3600.0 * 100.0
    );

    // The same idle watcher publishing its status (docs/protocol.md#node-status):
    // a heartbeat pushed to the local bare origin every `every` seconds, from the
    // watcher's publisher thread; the per-poll figure carries the heartbeats'
    // share (the process CPU of every thread is counted).
    let ok = Command::new(bin)
        .args([
            "--repo",
            rx.to_str().unwrap(),
            "node",
            "set-name",
            "BENCH-RX",
        ])
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "node set-name failed");
    println!("  status publishing (target: per idle poll <= 2x status off):");
    for every in [1.0, 10.0] {
        std::fs::write(
            rx.join(".local/rxnode-policy.json"),
            format!(r#"{{"status": {{"publish_every_s": {every}}}}}"#),
        )
        .unwrap();
        let (p2, w2, t2) = idle("status on");
        let per2 = ((t2 - once).max(0.0)) / p2 as f64;
        let pushes = (w2 / every).floor() + 2.0; // one at start, one at stop
        println!(
            "    heartbeat every {every} s: {p2} polls in {w2:.1} s, ~{pushes:.0} pushes, {:.1} ms CPU total; \
             per idle poll {:.2} ms CPU = {:.2}x status off",
            t2 * 1e3,
            per2 * 1e3,
            per2 / per_poll.max(1e-9)
        );
    }
    let _ = std::fs::remove_file(rx.join(".local/rxnode-policy.json"));
}

/// ms per `watch --once` with 0, 1, 10 and 1000 commits since the marker.
#[cfg(unix)]
fn history_cost() {
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    const TASK_PATH: &str = "docs/handoff/NEXT_RX_TASK.md";
    const BRANCH: &str = "video-development";
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=b", "-c", "user.email=b@example.invalid"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
    fn child_cpu() -> f64 {
        // SAFETY: getrusage only writes into the zeroed struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        t(ru.ru_utime) + t(ru.ru_stime)
    }
    fn task(id: &str, base: &str) -> String {
        format!(
            "TASK_ID = {id}\nTASK_TITLE = bench\nSOURCE_BRANCH = {BRANCH}\nEXPECTED_HEAD = {base}\n\
             REQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\n\
             ALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n# bench\n"
        )
    }
    let reps: usize = std::env::var("RXNODE_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let bin = env!("CARGO_BIN_EXE_rxnode");
    println!(
        "poll cost by history since the marker (watch --once, mean of {reps}, debug={})",
        cfg!(debug_assertions)
    );
    println!("  commits | touching      | CPU ms/poll | wall ms/poll | versions examined");
    let mut idle = None;
    for touches_task in [false, true] {
        for n in [0usize, 1, 10, 1000] {
            if touches_task && n == 0 {
                continue;
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let origin = dir.path().join("origin.git");
            let main = dir.path().join("main");
            let rx = dir.path().join("rx");
            git(
                dir.path(),
                &["init", "-q", "--bare", origin.to_str().unwrap()],
            );
            git(dir.path(), &["init", "-q", main.to_str().unwrap()]);
            git(&main, &["checkout", "-q", "-b", BRANCH]);
            std::fs::write(main.join("README.md"), "bench\n").unwrap();
            git(&main, &["add", "README.md"]);
            git(&main, &["commit", "-q", "-m", "start"]);
            git(
                &main,
                &["remote", "add", "origin", origin.to_str().unwrap()],
            );
            git(&main, &["push", "-q", "origin", BRANCH]);
            git(
                dir.path(),
                &[
                    "clone",
                    "-q",
                    "-b",
                    BRANCH,
                    origin.to_str().unwrap(),
                    rx.to_str().unwrap(),
                ],
            );
            let watch = |stdin: Stdio| {
                Command::new(bin)
                    .args(["--repo", rx.to_str().unwrap(), "watch", "--once"])
                    .env_remove("RXNODE_HISTORY_LIMIT")
                    .stdin(stdin)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .map(|s| s.success())
                    .unwrap_or(false)
            };
            assert!(watch(Stdio::null()), "first watch --once failed");
            let base = git(&main, &["rev-parse", "HEAD"]);
            // n commits in one fast-import stream, then one push.
            let mut stream = String::new();
            for i in 0..n {
                let (path, body) = if touches_task {
                    (TASK_PATH.to_owned(), task(&format!("B{i:04}"), &base))
                } else {
                    (format!("src/file{}.txt", i % 7), format!("work {i}\n"))
                };
                stream.push_str(&format!(
                    "commit refs/heads/{BRANCH}\ncommitter b <b@example.invalid> {} +0000\ndata 2\nc\n",
                    1_700_000_000 + i
                ));
                if i == 0 {
                    stream.push_str(&format!("from {base}\n"));
                }
                stream.push_str(&format!(
                    "M 100644 inline {path}\ndata {}\n{body}\n",
                    body.len()
                ));
            }
            if n > 0 {
                let mut fi = Command::new("git")
                    .current_dir(&main)
                    .args(["fast-import", "--quiet", "--force"])
                    .stdin(Stdio::piped())
                    .spawn()
                    .expect("git fast-import");
                fi.stdin
                    .take()
                    .unwrap()
                    .write_all(stream.as_bytes())
                    .unwrap();
                assert!(fi.wait().unwrap().success(), "fast-import failed");
                git(&main, &["push", "-q", "origin", BRANCH]);
            }
            // One poll to fetch the objects; then every measured poll starts
            // from the saved state (marker at `base`) and ledger.
            let local = rx.join(".local");
            let state = std::fs::read(local.join("rx_agent_state.json")).unwrap();
            let ledger = std::fs::read(local.join("rx_agent_ledger.jsonl")).unwrap();
            let restore = || {
                std::fs::write(local.join("rx_agent_state.json"), &state).unwrap();
                std::fs::write(local.join("rx_agent_ledger.jsonl"), &ledger).unwrap();
                let _ = std::fs::remove_dir_all(local.join("rx_agent_outbox"));
            };
            assert!(watch(Stdio::null()), "fetching watch --once failed");
            let mut cpu = 0.0;
            let mut wall = 0.0;
            for _ in 0..reps {
                restore();
                let c0 = child_cpu();
                let t0 = Instant::now();
                assert!(watch(Stdio::null()), "watch --once failed");
                wall += t0.elapsed().as_secs_f64();
                cpu += child_cpu() - c0;
            }
            let st: serde_json::Value =
                serde_json::from_slice(&std::fs::read(local.join("rx_agent_state.json")).unwrap())
                    .unwrap();
            let walk = &st["queue"]["last_walk"];
            let examined = if n == 0 {
                "- (marker = tip: no walk)".to_owned()
            } else {
                format!(
                    "{} of {} ({} commits walked)",
                    walk["examined"], walk["versions"], walk["commits"]
                )
            };
            let (cpu, wall) = (cpu / reps as f64 * 1e3, wall / reps as f64 * 1e3);
            if n == 0 {
                idle = Some(cpu);
            }
            let delta = idle
                .filter(|_| n > 0)
                .map(|i| format!(" ({:+.1})", cpu - i))
                .unwrap_or_default();
            println!(
                "  {n:>7} | {:<13} | {cpu:>6.1}{delta:<9} | {wall:>12.1} | {examined}",
                if touches_task {
                    "the task file"
                } else {
                    "other files"
                }
            );
        }
    }
}

#[cfg(not(unix))]
fn main() {
    println!("watch_idle: getrusage is unix-only; run on Linux or macOS");
}
