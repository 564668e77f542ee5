//! Hostile and broken remotes. Each case: a clear one-line
//! error naming the remote/branch (or the task path), a ledger entry, no panic,
//! the state intact; `watch --once` exits non-zero for fetch failures, and the
//! looping watcher backs off.
use crate::util::{free_port, git, listener, run_fed, text, Lab, BRANCH, PROMPT, TASK_PATH};
use std::io::{Read, Write};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn no_panic(out: &Output) {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains("panicked"), "{all}");
    assert_ne!(out.status.code(), Some(101), "{all}");
}

/// `watch --once` against remote `name`, with a private HOME (no credential
/// helpers or config from the machine running the tests).
fn watch_remote(lab: &Lab, name: &str, stdin: &str) -> (Output, Duration) {
    let t = Instant::now();
    let out = run_fed(
        lab.rxnode()
            .args(["--remote", name, "watch", "--once", "--interval", "0.2"])
            .env("HOME", lab.dir.path())
            .env("XDG_CONFIG_HOME", lab.dir.path())
            .env("RXNODE_GIT_TIMEOUT_S", "2"),
        stdin.as_bytes(),
    );
    (out, t.elapsed())
}

/// The checks shared by every fetch failure: exit 1, one error line naming the
/// remote and the branch and containing `why`, one `fetch_failed` ledger entry
/// for this remote, the task records untouched, the poll recorded as failed.
fn assert_fetch_failure(lab: &Lab, name: &str, why: &[&str]) -> Duration {
    let before = std::fs::read(lab.local().join("rx_agent_state.json"))
        .ok()
        .map(|b| serde_json::from_slice::<serde_json::Value>(&b).unwrap()["tasks"].clone());
    let ledger_before = lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "fetch_failed")
        .count();
    let (out, took) = watch_remote(lab, name, "");
    no_panic(&out);
    let se = text(&out.stderr);
    expect_exit!(out, 1);
    let line = se
        .lines()
        .find(|l| l.contains(&format!("fetch {name} {BRANCH}")))
        .unwrap_or_else(|| panic!("no error line naming {name} {BRANCH}: {se}"));
    let lower = line.to_lowercase();
    assert!(
        why.iter().any(|w| lower.contains(w)),
        "{name}: expected one of {why:?} in {line:?}"
    );
    assert!(!text(&out.stdout).contains(PROMPT));
    let ev = lab.ledger_events();
    let failed: Vec<_> = ev.iter().filter(|e| e["event"] == "fetch_failed").collect();
    assert_eq!(failed.len(), ledger_before + 1, "{ev:?}");
    let last = failed.last().unwrap();
    assert_eq!(last["detail"]["remote"], name);
    assert_eq!(last["detail"]["branch"], BRANCH);
    let st = lab.state();
    assert_eq!(st["last_poll"]["ok"], false);
    assert_eq!(st["running"], false);
    if let Some(b) = before {
        assert_eq!(st["tasks"], b, "{name}: task records changed");
    }
    assert!(!lab.local().join("rxnode.lock").exists());
    println!("{name}: exit 1 after {} ms: {line}", took.as_millis());
    took
}

/// A loopback server that accepts connections and never answers.
fn hanging_server() -> u16 {
    let l = listener();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = vec![];
        for s in l.incoming().flatten() {
            held.push(s); // never read, never written, never closed
        }
    });
    port
}

/// A loopback git:// server that answers well within every read timeout and
/// never finishes: its ref advertisement one line every 0.5 s, for ever.
fn trickling_server() -> u16 {
    let l = listener();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let oid = "1".repeat(40);
                let pkt = |line: String| format!("{:04x}{line}", line.len() + 4);
                let first = pkt(format!(
                    "{oid} refs/heads/{BRANCH}\0multi_ack side-band-64k ofs-delta\n"
                ));
                if s.write_all(first.as_bytes()).is_err() {
                    return;
                }
                for i in 0u64.. {
                    std::thread::sleep(Duration::from_millis(500));
                    let line = pkt(format!("{oid} refs/tags/t{i:09}\n"));
                    if s.write_all(line.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// A loopback HTTP server that answers every request with 401 Basic.
fn unauthorized_server() -> u16 {
    let l = listener();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut req = vec![];
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let _ = s.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"lab\"\r\n\
Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    port
}

#[test]
fn fetch_failures_are_one_line_ledgered_bounded_and_harmless() {
    let lab = Lab::new();
    // Something in state first, so "state intact" means something.
    lab.post(&Lab::task("HOSTILE_OK", &lab.main_head(), &[]));
    expect_exit!(lab.watch_once("a\n"), 0);

    // A remote that accepts and never answers: bounded by the I/O timeout.
    let hang = hanging_server();
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "hang",
            &format!("git://127.0.0.1:{hang}/x"),
        ],
    );
    let took = assert_fetch_failure(&lab, "hang", &["timed out", "timeout"]);
    assert!(took < Duration::from_secs(15), "hang took {took:?}");
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "hanghttp",
            &format!("http://127.0.0.1:{hang}/x"),
        ],
    );
    let took = assert_fetch_failure(&lab, "hanghttp", &["timed out", "timeout"]);
    assert!(took < Duration::from_secs(15), "hanghttp took {took:?}");

    // Unreachable: a loopback port nobody listens on, and a missing path.
    let closed = free_port();
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "down",
            &format!("git://127.0.0.1:{closed}/x"),
        ],
    );
    assert_fetch_failure(&lab, "down", &["connect", "refused"]);
    let gone = lab.dir.path().join("no-such-origin.git");
    git(&lab.rx, &["remote", "add", "gone", gone.to_str().unwrap()]);
    assert_fetch_failure(
        &lab,
        "gone",
        &["not found", "could not find", "does not exist"],
    );

    // Bad credentials: 401 every time; each credential kind is tried once, then
    // a clear authentication error (no endless libgit2 retry loop).
    let auth = unauthorized_server();
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "locked",
            &format!("http://127.0.0.1:{auth}/x"),
        ],
    );
    let took = assert_fetch_failure(&lab, "locked", &["auth", "401", "credential"]);
    assert!(took < Duration::from_secs(15), "locked took {took:?}");

    // The state still works and the good remote still polls.
    let out = lab.run(&["status", "--json"], "");
    expect_exit!(out, 0);
    let out = lab.watch_once("");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("HOSTILE_OK"), "approved");
    assert!(lab
        .ledger_events()
        .iter()
        .any(|e| e["event"] == "fetch_recovered"));
}

#[test]
fn looping_watcher_backs_off_and_ledgers_a_repeated_failure_once() {
    let lab = Lab::new();
    let closed = free_port();
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "down",
            &format!("git://127.0.0.1:{closed}/x"),
        ],
    );
    let child = lab
        .rxnode()
        .args(["--remote", "down", "watch", "--interval", "0.05"])
        .env("HOME", lab.dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    #[cfg(unix)]
    crate::util::signal(child.id(), libc::SIGTERM);
    #[cfg(not(unix))]
    let mut child = child;
    #[cfg(not(unix))]
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    no_panic(&out);
    let se = text(&out.stderr);
    // Waits double: 0.1, 0.2, 0.4, 0.8 s (±10 % jitter) — a few tries in 1.5 s, not 30.
    let waits: Vec<f64> = se
        .lines()
        .filter_map(|l| l.split("next try in ").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(
        (2..=6).contains(&waits.len()),
        "expected a few backed-off tries: {waits:?}\n{se}"
    );
    assert!(
        waits.windows(2).all(|w| w[1] > w[0] * 1.5),
        "waits do not grow: {waits:?}"
    );
    let failed = lab
        .ledger_events()
        .iter()
        .filter(|e| e["event"] == "fetch_failed")
        .count();
    assert_eq!(failed, 1, "a repeated identical failure is ledgered once");
    assert_eq!(lab.state()["running"], false);
}

/// Shared checks for a bad task file on a healthy remote: exit 0 (the fetch
/// worked), a one-line rejection naming the path, one `rejected` ledger entry,
/// no prompt, not re-reported on the next poll.
fn assert_rejected_once(lab: &Lab, why: &str) {
    let (out, _) = watch_remote(lab, "origin", "a\n");
    no_panic(&out);
    let se = text(&out.stderr);
    expect_exit!(out, 0);
    assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
    let line = se
        .lines()
        .find(|l| l.contains(why))
        .unwrap_or_else(|| panic!("no line with {why:?}: {se}"));
    assert!(line.contains(TASK_PATH), "{line}");
    println!("{why}: {line}");
    let rejected = |lab: &Lab| {
        lab.ledger_events()
            .iter()
            .filter(|e| e["event"] == "rejected")
            .count()
    };
    assert_eq!(rejected(lab), 1);
    lab.post_file("unrelated.txt", b"x\n");
    let (out, _) = watch_remote(lab, "origin", "a\n");
    expect_exit!(out, 0);
    assert!(!text(&out.stderr).contains(why), "re-reported");
    assert_eq!(rejected(lab), 1);
    assert!(lab.state()["tasks"].as_object().unwrap().is_empty());
}

#[test]
fn task_path_as_directory_is_rejected() {
    let lab = Lab::new();
    lab.post_file(&format!("{TASK_PATH}/inner.md"), b"TASK_ID = X\n");
    assert_rejected_once(&lab, "is a directory");
}

#[cfg(unix)]
#[test]
fn task_file_as_symlink_is_rejected() {
    let lab = Lab::new();
    let p = lab.main.join(TASK_PATH);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("../../README.md", &p).unwrap();
    git(&lab.main, &["add", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-m", "symlink"]);
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
    assert_rejected_once(&lab, "is a symbolic link");
}

#[test]
fn a_40_mib_task_file_is_not_loaded() {
    let lab = Lab::new();
    let mut big = Lab::task("HUGE", &lab.main_head(), &[]).into_bytes();
    big.resize(40 << 20, b'x');
    lab.post_file(TASK_PATH, &big);
    assert_rejected_once(&lab, "41943040 bytes; at most");
}

/// `watch --once` against `origin` and the peak resident memory of that very
/// process (its own `ru_maxrss` from wait4(2), in KiB).
#[cfg(target_os = "linux")]
fn watch_peak_kib(lab: &Lab) -> (String, i64) {
    let mut cmd = lab.rxnode();
    cmd.args(["watch", "--once", "--interval", "0.2"])
        .env("HOME", lab.dir.path())
        .env("XDG_CONFIG_HOME", lab.dir.path());
    let (status, said, usage) = run_with_usage(&mut cmd);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "watch: status {status}: {said}"
    );
    (said, usage.ru_maxrss)
}

/// Run `cmd` (stdin closed) to its end and reap it with wait4(2): its wait
/// status, what it said on stdout then stderr, and its own resource usage.
#[cfg(target_os = "linux")]
#[allow(
    clippy::zombie_processes,
    reason = "reaped by wait4 below; Child::wait after it could reap another test's child of the reused PID"
)]
fn run_with_usage(cmd: &mut std::process::Command) -> (i32, String, libc::rusage) {
    use std::io::Read as _;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs");
    let mut said = String::new();
    let mut err = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this one child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's PID, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    (status, format!("{said}{err}"), usage)
}

/// A 128 MiB task file (a few hundred KiB of zlib) is refused unread, and so is
/// its deletion: the watcher named what the deleted file held by loading the
/// blob whole before looking at its size (300 MiB: 326 MB peak for one poll).
/// The poll that examines the deletion stays within 96 MiB.
#[cfg(target_os = "linux")]
#[test]
fn a_deleted_oversized_task_file_is_not_loaded() {
    let lab = Lab::new();
    lab.post(&Lab::task("BEFORE_BIG", &lab.main_head(), &[]));
    expect_exit!(watch_remote(&lab, "origin", "a\n").0, 0);
    let mut big = Lab::task("BIG", &lab.main_head(), &[]).into_bytes();
    big.resize(128 << 20, b'#');
    lab.post_file(TASK_PATH, &big);
    drop(big);
    let (said, _) = watch_peak_kib(&lab);
    assert!(said.contains("134217728 bytes; at most"), "{said}");
    git(&lab.main, &["rm", "-q", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-m", "gone"]);
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
    let gone = lab.main_head();
    let (said, kib) = watch_peak_kib(&lab);
    assert!(said.contains("deleted (it held no usable task)"), "{said}");
    assert!(
        lab.ledger_events()
            .iter()
            .any(|e| e["event"] == "task_file_deleted" && e["commit"] == gone.as_str()),
        "no task_file_deleted line for {gone}"
    );
    assert!(
        kib < 96 << 10,
        "the poll of the deletion peaked at {kib} KiB: the deleted 128 MiB blob was loaded"
    );
}

/// A commit of 8 MiB (a few KiB of zlib: a commit of GiBs costs the main PC no
/// more to push) holding a new task: the poll refuses the tip without reading
/// the commit (one ledger line, not repeated), nothing is queued, and the node
/// is usable again once the main PC replaces the commit. A checkout that pulled
/// it anyway refuses every command, naming HEAD.
#[test]
fn an_oversized_commit_is_refused_unread() {
    let lab = Lab::new();
    lab.post(&Lab::task("BEFORE_BOMB", &lab.main_head(), &[]));
    expect_exit!(watch_remote(&lab, "origin", "a\n").0, 0);
    let good = lab.main_head();
    let msg = lab.dir.path().join("msg.txt");
    std::fs::write(&msg, vec![b'A'; 8 << 20]).unwrap();
    let t = Lab::task("T_BOMB", &good, &[]);
    std::fs::write(lab.main.join(TASK_PATH), t).unwrap();
    git(&lab.main, &["add", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-F", msg.to_str().unwrap()]);
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
    let bomb = lab.main_head();
    let refused = |lab: &Lab| {
        lab.ledger_events()
            .iter()
            .filter(|e| e["event"] == "refused" && e["commit"] == bomb.as_str())
            .count()
    };
    for _ in 0..2 {
        let (out, _) = watch_remote(&lab, "origin", "a\n");
        no_panic(&out);
        expect_exit!(out, 3);
        let se = text(&out.stderr);
        assert!(
            se.contains(&format!("commit {bomb} is 838")) && se.contains("over the 2097152 bytes"),
            "{se}"
        );
        assert!(!text(&out.stdout).contains(PROMPT), "{}", text(&out.stdout));
        assert!(lab.state()["tasks"].get("T_BOMB").is_none());
        assert_eq!(refused(&lab), 1);
    }
    // A checkout that pulled it: every command refuses, naming HEAD.
    git(&lab.rx, &["pull", "-q", "--ff-only"]);
    let out = run_fed(lab.rxnode().arg("status"), b"");
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains("HEAD cannot be checked"),
        "{}",
        text(&out.stderr)
    );
    git(&lab.rx, &["reset", "-q", "--hard", &good]);
    // The main PC replaces the commit: polling goes on.
    git(&lab.main, &["reset", "-q", "--hard", &good]);
    std::fs::write(
        lab.main.join(TASK_PATH),
        Lab::task("AFTER_BOMB", &good, &[]),
    )
    .unwrap();
    git(&lab.main, &["commit", "-q", "-am", "post AFTER_BOMB"]);
    git(&lab.main, &["push", "-q", "-f", "origin", BRANCH]);
    let (out, _) = watch_remote(&lab, "origin", "a\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("AFTER_BOMB"), "approved");
}

/// A commit whose `docs/handoff/` folder is an 18 MiB tree (half a million
/// entries, a few hundred KiB pushed) while its root tree is small: every poll
/// failed looking the task path up in it, retried for ever, with no ledger line
/// and `status` still showing the last good poll. The poll is refused before
/// anything reads the folder, naming it and the commit (exit 3, one ledger
/// line, the poll recorded as failed), and polling goes on once the main PC
/// replaces the commit.
#[test]
fn an_oversized_folder_on_the_task_path_is_refused_unread() {
    let lab = Lab::new();
    lab.post(&Lab::task("BEFORE_BIG", &lab.main_head(), &[]));
    expect_exit!(watch_remote(&lab, "origin", "a\n").0, 0);
    let good = lab.main_head();
    let task = lab.dir.path().join("task.md");
    std::fs::write(&task, Lab::task("T_BIG", &good, &[])).unwrap();
    let blob = git(&lab.main, &["hash-object", "-w", task.to_str().unwrap()]);
    let empty = git(&lab.main, &["hash-object", "-w", "--stdin"]);
    let mut listing = format!("100644 blob {blob}\tNEXT_RX_TASK.md\n");
    for i in 0..500_000 {
        listing.push_str(&format!("100644 blob {empty}\tf{i:07}\n"));
    }
    let input = lab.dir.path().join("mktree.txt");
    std::fs::write(&input, listing).unwrap();
    let out = std::process::Command::new("git")
        .current_dir(&lab.main)
        .arg("mktree")
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let folder = text(&out.stdout).trim().to_owned();
    let tree_of = |line: String| {
        let input = lab.dir.path().join("line.txt");
        std::fs::write(&input, line).unwrap();
        let out = std::process::Command::new("git")
            .current_dir(&lab.main)
            .arg("mktree")
            .stdin(std::fs::File::open(&input).unwrap())
            .output()
            .unwrap();
        text(&out.stdout).trim().to_owned()
    };
    let docs = tree_of(format!("040000 tree {folder}\thandoff\n"));
    let root = tree_of(format!("040000 tree {docs}\tdocs\n"));
    let big = git(
        &lab.main,
        &["commit-tree", &root, "-p", &good, "-m", "post T_BIG"],
    );
    git(
        &lab.main,
        &["push", "-q", "origin", &format!("{big}:{BRANCH}")],
    );
    let size = git(&lab.main, &["cat-file", "-s", &folder]);
    assert!(size.parse::<u64>().unwrap() > 16 << 20, "{size}");
    let refused = |lab: &Lab| {
        lab.ledger_events()
            .iter()
            .filter(|e| e["event"] == "refused" && e["commit"] == big.as_str())
            .count()
    };
    for _ in 0..2 {
        let (out, _) = watch_remote(&lab, "origin", "a\n");
        no_panic(&out);
        expect_exit!(out, 3);
        let se = text(&out.stderr);
        assert!(
            se.contains(&format!(
                "the folder docs/handoff/ of commit {big}: tree {folder} is {size} bytes"
            )) && se.contains("over the 16777216 bytes"),
            "{se}"
        );
        assert!(lab.state()["tasks"].get("T_BIG").is_none());
        assert_eq!(lab.state()["last_poll"]["ok"], false);
        assert_eq!(refused(&lab), 1);
    }
    // The main PC replaces the commit: polling goes on.
    std::fs::write(lab.main.join(TASK_PATH), Lab::task("AFTER_BIG", &good, &[])).unwrap();
    git(&lab.main, &["commit", "-q", "-am", "post AFTER_BIG"]);
    git(&lab.main, &["push", "-q", "-f", "origin", BRANCH]);
    let (out, _) = watch_remote(&lab, "origin", "a\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("AFTER_BIG"), "approved");
}

/// A remote that keeps a fetch going a line at a time, each within the read
/// timeout, kept `watch --once` fetching for as long as it kept sending (still
/// fetching after 200 s). The fetch is abandoned after four read timeouts
/// (8 s with `RXNODE_GIT_TIMEOUT_S=2`), said as such, like any failed fetch.
#[test]
fn a_remote_that_trickles_for_ever_is_abandoned_at_the_fetch_deadline() {
    let lab = Lab::new();
    let port = trickling_server();
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "trickle",
            &format!("git://127.0.0.1:{port}/lab.git"),
        ],
    );
    let took = assert_fetch_failure(
        &lab,
        "trickle",
        &["abandoned after 8.0 s (4 read timeouts)"],
    );
    assert!(
        took >= Duration::from_secs(8) && took < Duration::from_secs(20),
        "{took:?}"
    );
}

/// Every fetch has the same deadline: the main PC's `results` (and `publish`, and
/// the heartbeat, through the one bounded fetch) against the remote that trickles
/// is abandoned after four read timeouts too, said as such, exit 1 — where only the
/// watcher's fetch was bounded.
#[test]
fn results_against_a_remote_that_trickles_is_abandoned_at_the_fetch_deadline() {
    let lab = Lab::new();
    let port = trickling_server();
    git(
        &lab.main,
        &[
            "remote",
            "add",
            "trickle",
            &format!("git://127.0.0.1:{port}/lab.git"),
        ],
    );
    let t = Instant::now();
    let out = run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(&lab.main)
            .args(["--remote", "trickle", "results"])
            .env("HOME", lab.dir.path())
            .env("XDG_CONFIG_HOME", lab.dir.path())
            .env("RXNODE_GIT_TIMEOUT_S", "2"),
        b"",
    );
    let took = t.elapsed();
    no_panic(&out);
    expect_exit!(out, 1);
    let se = text(&out.stderr);
    assert!(
        se.contains("fetch of rx-node from git://127.0.0.1")
            && se.contains("abandoned after 8.0 s (4 read timeouts)"),
        "{se}"
    );
    assert!(
        took >= Duration::from_secs(8) && took < Duration::from_secs(20),
        "{took:?}"
    );
}

/// A pack of a few MB whose deltas each rebuild a 2 MiB file expands, when
/// indexed, without bound: 600 such commits (14 MB pushed) cost a poll 6.7 s of
/// CPU in the fetch alone (no bound on one commit or tree sees it). Each fetch has a CPU
/// budget: here 0.2 s (`RXNODE_FETCH_CPU_S`), over which the fetch of 40 commits
/// of a 2 MiB file (80 MB to index) is abandoned, said as such, ledgered, and
/// nothing fetched is kept; once the branch holds ordinary commits again, the
/// same budget fetches them.
#[test]
fn a_pack_that_expands_past_the_fetch_cpu_budget_is_abandoned() {
    let lab = Lab::new();
    let tip_before = git(&lab.rx, &["rev-parse", "HEAD"]);
    push_big_rewrites(&lab, 40);
    let pack_kib: u64 = std::fs::read_dir(lab.origin.join("objects/pack"))
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum::<u64>()
        / 1024;
    assert!(pack_kib < 8 * 1024, "the pushed pack is {pack_kib} KiB");
    let watch = |lab: &Lab| {
        run_fed(
            lab.rxnode()
                .args(["watch", "--once", "--interval", "0.2", "--no-prompt"])
                .env("HOME", lab.dir.path())
                .env("XDG_CONFIG_HOME", lab.dir.path())
                .env("RXNODE_FETCH_CPU_S", "0.2"),
            b"",
        )
    };
    let out = watch(&lab);
    no_panic(&out);
    expect_exit!(out, 1);
    let se = text(&out.stderr);
    assert!(
        se.contains(&format!(
            "fetch origin {BRANCH} failed: abandoned after 0.2 s of CPU"
        )) && se.contains("expands to more than one fetch may index"),
        "{se}"
    );
    let tracking = format!("refs/remotes/origin/{BRANCH}");
    assert_eq!(git(&lab.rx, &["rev-parse", &tracking]), tip_before);
    let ev = lab.ledger_events();
    assert_eq!(
        ev.iter().filter(|e| e["event"] == "fetch_failed").count(),
        1,
        "{ev:?}"
    );
    assert_eq!(lab.state()["last_poll"]["ok"], false);
    // The main PC drops the big commits: the same budget fetches the branch.
    git(&lab.main, &["reset", "-q", "--hard", &tip_before]);
    std::fs::write(lab.main.join("NOTE.md"), "small\n").unwrap();
    git(&lab.main, &["add", "NOTE.md"]);
    git(&lab.main, &["commit", "-q", "-m", "small"]);
    git(&lab.main, &["push", "-q", "-f", "origin", BRANCH]);
    let out = watch(&lab);
    no_panic(&out);
    expect_exit!(out, 0);
    assert_eq!(
        git(&lab.rx, &["rev-parse", &tracking]),
        git(&lab.main, &["rev-parse", "HEAD"])
    );
}

/// `n` commits on the main PC's branch, each rewriting `data/big.txt` (2 MiB of
/// random hex) in its first 8 bytes, pushed to `origin`: a small pack whose
/// deltas rebuild `n` × 2 MiB.
fn push_big_rewrites(lab: &Lab, n: usize) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let big: Vec<u8> = (0..(2 << 20) / 2)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{:02x}", x & 0xff).into_bytes()
        })
        .collect();
    std::fs::create_dir_all(lab.main.join("data")).unwrap();
    for i in 0..n {
        let mut b = big.clone();
        b[..8].copy_from_slice(format!("{i:08}").as_bytes());
        std::fs::write(lab.main.join("data/big.txt"), &b).unwrap();
        git(&lab.main, &["add", "data/big.txt"]);
        git(&lab.main, &["commit", "-q", "-m", &format!("big {i}")]);
    }
    git(&lab.main, &["push", "-q", "origin", BRANCH]);
}

/// `watch --once --no-prompt` with `RXNODE_FETCH_CPU_S=budget`: its output, exit
/// code, and the CPU time (user + system, every thread) of that very process,
/// from wait4(2).
#[cfg(target_os = "linux")]
fn watch_cpu(lab: &Lab, budget: &str) -> (String, i32, Duration) {
    let mut cmd = lab.rxnode();
    cmd.args(["watch", "--once", "--interval", "0.2", "--no-prompt"])
        .env("HOME", lab.dir.path())
        .env("XDG_CONFIG_HOME", lab.dir.path())
        .env("RXNODE_FETCH_CPU_S", budget);
    let (status, said, usage) = run_with_usage(&mut cmd);
    assert!(libc::WIFEXITED(status), "watch: status {status}: {said}");
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (
        said,
        libc::WEXITSTATUS(status),
        tv(usage.ru_utime) + tv(usage.ru_stime),
    )
}

/// A remote given as a path on this machine (not a URL) is fetched by libgit2's
/// local transport, which packs what it sends in this very process: counting
/// and finding deltas on a worker thread per core, before anything is indexed.
/// The fetch's CPU budget read only the fetching thread's clock, and only as it
/// indexed, so the packing went unbounded: 300 versions of a 2 MiB file cost one
/// `watch --once` 8.7 s of CPU at a 3 s budget. Every thread the fetch does its
/// work on now counts, and the packing is checked too: 100 such versions at a
/// 0.3 s budget stop within 1.3 s of CPU, said as the budget, nothing kept.
#[cfg(target_os = "linux")]
#[test]
fn a_local_path_remote_is_fetched_within_the_fetch_cpu_budget() {
    let lab = Lab::new();
    let url = git(&lab.rx, &["remote", "get-url", "origin"]);
    assert!(url.starts_with('/'), "origin is a plain path: {url}");
    let tip_before = git(&lab.rx, &["rev-parse", "HEAD"]);
    push_big_rewrites(&lab, 100);
    let (said, code, cpu) = watch_cpu(&lab, "0.3");
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(&format!(
            "fetch origin {BRANCH} failed: abandoned after 0.3 s of CPU"
        )) && said.contains("expands to more than one fetch may index"),
        "{said}"
    );
    assert!(
        cpu < Duration::from_millis(1300),
        "one poll spent {cpu:?} of CPU at a 0.3 s fetch budget: {said}"
    );
    eprintln!("one poll spent {cpu:?} of CPU at a 0.3 s fetch budget");
    let tracking = format!("refs/remotes/origin/{BRANCH}");
    assert_eq!(git(&lab.rx, &["rev-parse", &tracking]), tip_before);
}

#[test]
fn binary_task_file_is_rejected() {
    let lab = Lab::new();
    let mut bin = vec![0u8, 0xff, 0xfe, 0x00, b'\n'];
    let mut x: u32 = 0x1234_5678;
    for _ in 0..4096 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bin.push(x as u8);
    }
    lab.post_file(TASK_PATH, &bin);
    assert_rejected_once(&lab, "without a usable TASK_ID");
}

#[test]
fn rewritten_history_and_deleted_branch() {
    let lab = Lab::new();
    let base = lab.main_head();
    let first = Lab::task("REWRITE_A", &base, &[]);
    lab.post(&first);
    expect_exit!(lab.watch_once("a\n"), 0);
    assert_eq!(lab.status_of("REWRITE_A"), "approved");
    let outbox_a = lab.local().join("rx_agent_outbox/REWRITE_A/TASK.md");
    assert_eq!(std::fs::read(&outbox_a).unwrap(), first.as_bytes());

    // Force-push a rewritten history holding the same ID with another text.
    git(&lab.main, &["checkout", "-q", "--orphan", "rewritten"]);
    git(&lab.main, &["rm", "-rq", "--cached", "."]);
    std::fs::write(lab.main.join("README.md"), "rewritten\n").unwrap();
    git(&lab.main, &["add", "README.md"]);
    git(&lab.main, &["commit", "-q", "-m", "rewritten root"]);
    let new_base = lab.main_head();
    std::fs::write(
        lab.main.join(TASK_PATH),
        Lab::task(
            "REWRITE_A",
            &new_base,
            &[("TASK_TITLE", "Swapped under me")],
        ),
    )
    .unwrap();
    git(&lab.main, &["add", TASK_PATH]);
    git(&lab.main, &["commit", "-q", "-m", "same id, other text"]);
    git(
        &lab.main,
        &["push", "-q", "-f", "origin", &format!("rewritten:{BRANCH}")],
    );
    let (out, _) = watch_remote(&lab, "origin", "a\n");
    no_panic(&out);
    expect_exit!(out, 0);
    let se = text(&out.stderr);
    assert!(se.contains("REFUSED") && se.contains("REWRITE_A"), "{se}");
    assert_eq!(lab.status_of("REWRITE_A"), "approved");
    assert_eq!(std::fs::read(&outbox_a).unwrap(), first.as_bytes());

    // A new task on the rewritten history is handled normally.
    std::fs::write(
        lab.main.join(TASK_PATH),
        Lab::task("REWRITE_B", &new_base, &[]),
    )
    .unwrap();
    git(&lab.main, &["commit", "-qam", "task B"]);
    git(
        &lab.main,
        &["push", "-q", "-f", "origin", &format!("rewritten:{BRANCH}")],
    );
    let (out, _) = watch_remote(&lab, "origin", "a\n");
    expect_exit!(out, 0);
    assert_eq!(lab.status_of("REWRITE_B"), "approved");

    // The branch is deleted: a fetch failure naming it, not "nothing new".
    git(&lab.main, &["push", "-q", "origin", "--delete", BRANCH]);
    assert_fetch_failure(&lab, "origin", &["no branch"]);
    assert_eq!(lab.status_of("REWRITE_A"), "approved");
    assert_eq!(lab.status_of("REWRITE_B"), "approved");
}
