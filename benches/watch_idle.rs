//! Watcher idle cost: CPU time per idle poll against a local bare origin, and
//! per hour at a 10 s interval. Run: `cargo bench --bench watch_idle`.
//!
//! Measures the real binary (child CPU via `getrusage(RUSAGE_CHILDREN)`):
//! start-up cost from `watch --once` runs, then a watcher left polling a
//! branch that does not move for a fixed time; polls are counted from its
//! `-v` log ("poll: nothing new").
#[cfg(unix)]
fn main() {
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
}

#[cfg(not(unix))]
fn main() {
    println!("watch_idle: getrusage is unix-only; run on Linux or macOS");
}
