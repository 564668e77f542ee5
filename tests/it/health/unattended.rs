//! Unattended operation: `watch --no-prompt` queues and never prompts while
//! `rxnode review` approves from another terminal, and the systemd unit of
//! `rxnode service`.
use super::*;
use crate::util::{git, run_fed, rxnode_cmd, BRANCH};
use std::io::Read;

/// Wait until `f` holds (at most `secs`), polling.
fn wait_for(secs: u64, what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn status_or_empty(lab: &Lab, id: &str) -> String {
    // The state is replaced atomically: a reader never sees half a file.
    let p = lab.local().join("rx_agent_state.json");
    let Ok(b) = std::fs::read(&p) else {
        return String::new();
    };
    let v: serde_json::Value =
        serde_json::from_slice(&b).unwrap_or_else(|e| panic!("torn state file ({e})"));
    v["tasks"][id]["status"].as_str().unwrap_or("").to_owned()
}

/// `watch --no-prompt` queues tasks and never reads stdin; `rxnode review` approves
/// and defers them while it polls every 0.1 s, and neither loses the other's
/// writes; an interactive watcher cannot start beside it; SIGTERM stops it cleanly.
#[test]
fn no_prompt_watcher_queues_and_review_decides_while_it_runs() {
    let lab = Lab::new();
    let mut w = lab
        .rxnode()
        .args(["watch", "--no-prompt", "--interval", "0.1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for id in ["UN_1", "UN_2"] {
        lab.post(&lab.plan_task(id, &[], None));
        wait_for(20, &format!("{id} queued"), || {
            status_or_empty(&lab, id) == "pending"
        });
    }
    let review = |id: &str, answer: &str| {
        util::run_fed(lab.rxnode().args(["review", id]), answer.as_bytes())
    };
    let out = review("UN_1", "A\n");
    expect_exit!(out, 0);
    let out = review("UN_2", "D\n");
    expect_exit!(out, 0);
    // A task posted now is queued too, beside the decisions already made.
    lab.post(&lab.plan_task("UN_3", &[], None));
    wait_for(20, "UN_3 queued", || {
        status_or_empty(&lab, "UN_3") == "pending"
    });
    assert_eq!(lab.status_of("UN_1"), "approved");
    assert_eq!(lab.status_of("UN_2"), "deferred");
    assert!(lab.state()["running"].as_bool().unwrap());
    // One watcher at a time, prompting or not.
    let out = util::run_fed(lab.rxnode().args(["watch", "--once"]), b"");
    expect_exit!(out, 3);
    assert!(
        text(&out.stderr).contains("watch --no-prompt"),
        "{}",
        show(&out)
    );

    util::signal(w.id(), libc::SIGTERM);
    let t0 = Instant::now();
    let code = loop {
        if let Some(st) = w.try_wait().unwrap() {
            break st.code();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "watcher did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut so = String::new();
    w.stdout.take().unwrap().read_to_string(&mut so).unwrap();
    let mut se = String::new();
    w.stderr.take().unwrap().read_to_string(&mut se).unwrap();
    assert_eq!(code, Some(0), "{so}{se}");
    for id in ["UN_1", "UN_2", "UN_3"] {
        assert!(
            so.contains(&format!("queued for approval: task {id}")),
            "{id}: {so}"
        );
    }
    assert!(!so.contains(util::PROMPT), "it never prompts: {so}");
    let s = lab.state();
    assert!(!s["running"].as_bool().unwrap());
    assert_eq!(lab.status_of("UN_1"), "approved");
    assert_eq!(lab.status_of("UN_3"), "pending");
    let out = lab.run(&["--json", "status"], "");
    expect_exit!(out, 0);
}

/// Whether this test process runs as root (a system unit then needs `--run-as`).
fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// `--run-as` for a system unit when the tests run as root (an ordinary system
/// account that Debian has; `nobody` is refused by systemd-analyze verify).
fn run_as_args() -> Vec<&'static str> {
    if as_root() {
        vec!["--run-as", "daemon"]
    } else {
        vec![]
    }
}

/// `systemd-analyze verify` of `unit`: must pass with nothing said. The tool is
/// required (scripts/setup.sh --tests installs systemd): never skipped.
fn verify_unit(unit: &std::path::Path) {
    let verify = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .output()
        .unwrap_or_else(|e| {
            panic!("systemd-analyze is missing ({e}): scripts/setup.sh --tests installs systemd")
        });
    expect_exit!(verify, 0);
    assert!(text(&verify.stderr).trim().is_empty(), "{}", show(&verify));
}

/// The value of `k=` in unit text `t`.
fn unit_line(t: &str, k: &str) -> String {
    t.lines()
        .find_map(|l| l.strip_prefix(&format!("{k}=")))
        .unwrap_or_else(|| panic!("no {k}= in {t}"))
        .to_owned()
}

/// The unit `rxnode service install` writes runs `watch --no-prompt` in this
/// checkout, restarts it on failure, holds no secret, never runs as root, is
/// hardened, carries SoapySDR's module variables (quoted, whatever they hold),
/// and passes `systemd-analyze verify`; status reads it back; uninstall removes it.
#[cfg(target_os = "linux")]
#[test]
fn service_unit_verifies_and_is_managed() {
    let lab = Lab::new();
    let units = lab.dir.path().join("units");
    let d = units.to_str().unwrap();
    let plugins = r#"/opt/soapy 100%/$HOME "q"\"#;
    let mut args = vec!["service", "install", "--unit-dir", d, "--interval", "20"];
    args.extend(run_as_args());
    let out = run_fed(
        lab.rxnode()
            .env("SOAPY_SDR_PLUGIN_PATH", plugins)
            .env_remove("SOAPY_SDR_ROOT")
            .args(&args),
        b"",
    );
    expect_exit!(out, 0);
    let unit = units.join("rxnode-watch.service");
    let t = std::fs::read_to_string(&unit).unwrap();
    let rx = lab.rx.canonicalize().unwrap();
    let line = |k: &str| unit_line(&t, k);
    assert_eq!(line("WorkingDirectory"), rx.to_str().unwrap());
    assert_eq!(line("Restart"), "on-failure");
    assert!(line("RestartSec").parse::<u32>().unwrap() >= 5);
    assert_eq!(line("WantedBy"), "multi-user.target");
    if as_root() {
        assert_eq!(line("User"), "daemon", "never root");
    } else {
        assert!(
            line("User").parse::<u32>().is_ok(),
            "a system unit runs as the operator"
        );
    }
    let exec = line("ExecStart");
    for w in ["watch", "--no-prompt", "--interval", "20", "--repo"] {
        assert!(exec.contains(&format!("\"{w}\"")), "{w}: {exec}");
    }
    assert!(exec.contains(&format!("\"{}\"", rx.display())), "{exec}");
    for h in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateTmp=yes",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
    ] {
        assert!(t.lines().any(|l| l == h), "{h}: {t}");
    }
    assert_eq!(line("ReadWritePaths"), format!("\"{}\"", rx.display()));
    assert!(
        !t.lines().any(|l| l.starts_with("PrivateDevices=")),
        "USB radios need /dev: {t}"
    );
    // Only the SoapySDR variable of the installing shell, quoted: `%` doubled,
    // `"` and `\` escaped, `$` kept (Environment= expands no variables).
    let env: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("Environment="))
        .collect();
    assert_eq!(
        env,
        [r#"Environment="SOAPY_SDR_PLUGIN_PATH=/opt/soapy 100%%/$HOME \"q\"\\""#],
        "{t}"
    );
    verify_unit(&unit);

    let out = lab.run(&["--json", "service", "status", "--unit-dir", d], "");
    expect_exit!(out, 0);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["installed"], true);
    assert_eq!(s["this_checkout"], true);
    assert_eq!(s["exec_start"].as_str(), Some(exec.as_str()));

    // A user unit: no User=, wanted by the user's default target (never root's).
    let out = lab.run(&["service", "install", "--user", "--unit-dir", d], "");
    if as_root() {
        expect_exit!(out, 2);
        assert!(text(&out.stderr).contains("root"), "{}", show(&out));
        return;
    }
    expect_exit!(out, 0);
    let t = std::fs::read_to_string(&unit).unwrap();
    assert!(text(&out.stdout).starts_with("replaced"), "{}", show(&out));
    assert!(!t.contains("\nUser="), "{t}");
    assert!(t.contains("WantedBy=default.target"), "{t}");

    let out = lab.run(&["service", "uninstall", "--unit-dir", d], "");
    expect_exit!(out, 0);
    assert!(!unit.exists());
    let out = lab.run(&["--json", "service", "status", "--unit-dir", d], "");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["installed"], false);
}

/// Beside a watcher that prompts, `rxnode review` decides a deferred task (the
/// watcher never shows those again) and, for a pending one the watcher is showing,
/// refuses naming the fix: answer at the watcher's own prompt.
#[test]
fn review_decides_a_deferred_task_beside_a_prompting_watcher() {
    let lab = Lab::new();
    lab.post(&Lab::task("RV_DEF", &lab.main_head(), &[]));
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    assert_eq!(status_or_empty(&lab, "RV_DEF"), "deferred");
    let mut w = util::rxnode_cmd()
        .arg("--repo")
        .arg(&lab.rx)
        .args(["watch", "--interval", "0.2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = lab.local().join("rxnode.lock");
    wait_for(10, "the watcher holds its lock", || lock.exists());
    let out = util::run_fed(lab.rxnode().args(["review", "RV_DEF"]), b"A\n");
    expect_exit!(out, 0);
    assert_eq!(status_or_empty(&lab, "RV_DEF"), "approved");
    // A new task the watcher prompts: review refuses it and says where to answer.
    lab.post(&Lab::task("RV_PEND", &lab.main_head(), &[]));
    wait_for(15, "the watcher saw RV_PEND", || {
        status_or_empty(&lab, "RV_PEND") == "pending"
    });
    let out = util::run_fed(lab.rxnode().args(["review", "RV_PEND"]), b"A\n");
    let _ = w.kill();
    let _ = w.wait();
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(
        se.contains("answer [A]/[D]/[S] in the watcher's terminal"),
        "{se}"
    );
    assert_eq!(status_or_empty(&lab, "RV_PEND"), "pending");
}

/// A checkout whose path ends in `\\` (and holds `%`, `$`, `"` and a space) gets
/// a unit that systemd reads as written: `systemd-analyze verify` passes, the
/// `WorkingDirectory=` line does not swallow `ExecStart=`, and status finds it.
#[cfg(target_os = "linux")]
#[test]
fn service_unit_of_a_checkout_path_ending_in_a_backslash_starts() {
    let lab = Lab::new();
    let odd = lab.dir.path().join(r#"odd 100%$x "co"\"#);
    git(
        lab.dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            lab.origin.to_str().unwrap(),
            odd.to_str().unwrap(),
        ],
    );
    let units = lab.dir.path().join("units");
    let d = units.to_str().unwrap();
    let mut args = vec!["service", "install", "--unit-dir", d];
    args.extend(run_as_args());
    let out = run_fed(rxnode_cmd().arg("--repo").arg(&odd).args(&args), b"");
    expect_exit!(out, 0);
    let unit = units.join("rxnode-watch.service");
    let t = std::fs::read_to_string(&unit).unwrap();
    let exec = unit_line(&t, "ExecStart");
    assert!(exec.contains("\"watch\""), "{t}");
    assert!(
        t.lines().all(|l| !l.ends_with('\\')),
        "a line would continue onto the next: {t}"
    );
    verify_unit(&unit);
    let out = run_fed(
        rxnode_cmd()
            .arg("--repo")
            .arg(&odd)
            .args(["--json", "service", "status", "--unit-dir", d]),
        b"",
    );
    expect_exit!(out, 0);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["this_checkout"], true, "{s}");
}

/// A unit that could not start is never installed — exit non-zero, nothing
/// left in the unit folder: no `origin` remote, a `--policy` file that does not
/// exist, root without `--run-as` (or `--run-as root`); without a running
/// systemd and no `--unit-dir`, install says what to do instead and writes nothing.
#[cfg(target_os = "linux")]
#[test]
fn service_install_refuses_a_unit_that_cannot_start() {
    let lab = Lab::new();
    let units = lab.dir.path().join("units");
    let d = units.to_str().unwrap();
    let nothing_left = |what: &str| {
        assert!(!units.exists(), "{what}: the unit folder was made");
    };

    let missing = lab.dir.path().join("no-such-policy.json");
    let mut args = vec![
        "--policy",
        missing.to_str().unwrap(),
        "service",
        "install",
        "--unit-dir",
        d,
    ];
    args.extend(run_as_args());
    let out = run_fed(lab.rxnode().args(&args), b"");
    expect_exit!(out, 2, "missing policy");
    assert!(text(&out.stderr).contains("--policy"), "{}", show(&out));
    nothing_left("missing policy");

    let mut args = vec!["service", "install", "--unit-dir", d, "--run-as", "root"];
    let out = run_fed(lab.rxnode().args(&args), b"");
    expect_exit!(out, 2, "--run-as root");
    assert!(
        text(&out.stderr).contains("never runs as root"),
        "{}",
        show(&out)
    );
    nothing_left("--run-as root");
    if as_root() {
        args.truncate(4);
        let out = run_fed(lab.rxnode().args(&args), b"");
        expect_exit!(out, 2, "root without --run-as");
        assert!(text(&out.stderr).contains("--run-as"), "{}", show(&out));
        nothing_left("root without --run-as");
    }

    if !std::path::Path::new("/run/systemd/system").exists() {
        let mut args = vec!["service", "install"];
        args.extend(run_as_args());
        let out = run_fed(lab.rxnode().args(&args), b"");
        expect_exit!(out, 3, "no systemd");
        let e = text(&out.stderr);
        assert!(
            e.contains("--unit-dir") && e.contains("supervisor"),
            "{}",
            show(&out)
        );
        assert!(
            !std::path::Path::new("/etc/systemd/system/rxnode-watch.service").exists(),
            "a unit was written without systemd"
        );
    } else {
        println!("systemd runs here: the no-systemd refusal is not exercised");
    }

    git(&lab.rx, &["remote", "remove", "origin"]);
    let mut args = vec!["service", "install", "--unit-dir", d];
    args.extend(run_as_args());
    let out = run_fed(lab.rxnode().args(&args), b"");
    expect_exit!(out, 2, "no origin");
    assert!(text(&out.stderr).contains("origin"), "{}", show(&out));
    nothing_left("no origin");
}

/// Under `--json`, `service install` and `service uninstall` answer with one JSON
/// document each (the unit, what was done to it), as every command does; the
/// text for a person says the same.
#[cfg(target_os = "linux")]
#[test]
fn service_install_and_uninstall_answer_in_json() {
    let lab = Lab::new();
    let units = lab.dir.path().join("units");
    let d = units.to_str().unwrap();
    let unit = units.join("rxnode-watch.service");
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(out)))
    };
    let mut install = vec!["--json", "service", "install", "--unit-dir", d];
    install.extend(run_as_args());
    let out = run_fed(lab.rxnode().args(&install), b"");
    expect_exit!(out, 0);
    let v = json(&out);
    assert_eq!(v["unit"], unit.to_str().unwrap(), "{v}");
    assert_eq!(v["file"], "written", "{v}");
    assert_eq!(v["started"], false, "{v}");
    assert_eq!(v["verified"], true, "{v}");
    let out = run_fed(lab.rxnode().args(&install), b"");
    expect_exit!(out, 0);
    assert_eq!(json(&out)["file"], "unchanged");
    let uninstall = ["--json", "service", "uninstall", "--unit-dir", d];
    let out = run_fed(lab.rxnode().args(uninstall), b"");
    expect_exit!(out, 0);
    let v = json(&out);
    assert_eq!(
        (&v["removed"], &v["stopped"]),
        (&true.into(), &false.into()),
        "{v}"
    );
    assert!(!unit.exists());
    let out = run_fed(lab.rxnode().args(uninstall), b"");
    expect_exit!(out, 0);
    assert_eq!(json(&out)["removed"], false);
    // The same steps for a person, in words.
    let out = run_fed(lab.rxnode().args(&install[1..]), b"");
    expect_exit!(out, 0);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "wrote {}\nsystemd was not told (--unit-dir); to start it now and at every boot:\n  \
             systemctl daemon-reload && systemctl enable --now rxnode-watch.service\n",
            unit.display()
        )
    );
}
