//! `rxnode doctor`: each set-up problem is named with a fix,
//! and doctor itself changes nothing.
use crate::util::{git, text, Lab};
use serde::Deserialize;
use std::process::Output;

#[derive(Debug, Deserialize)]
struct Report {
    checks: Vec<Check>,
    ok: bool,
}

#[derive(Debug, Deserialize)]
struct Check {
    name: String,
    status: String,
    detail: String,
    fix: String,
}

impl Report {
    fn get(&self, name: &str) -> &Check {
        self.checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no check {name:?} in {self:#?}"))
    }
}

/// Run doctor with `--json` (plus `extra` flags) and parse its report.
fn doctor(
    lab: &Lab,
    sim: bool,
    extra: &[&str],
    env: &[(&str, &std::path::Path)],
) -> (Output, Report) {
    let mut c = lab.rxnode();
    c.env_remove("RXNODE_SIM")
        .env_remove("SOAPY_SDR_PLUGIN_PATH")
        .env_remove("SOAPY_SDR_ROOT")
        .env("RXSIM_EVENT_LOG", lab.dir.path().join("rxsim-events.log"));
    if sim {
        c.arg("--sim");
    }
    c.args(extra).arg("--json").arg("doctor");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no report ({e}): {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        )
    });
    (out, report)
}

fn exclude_local(lab: &Lab) {
    let p = lab.rx.join(".git/info/exclude");
    let mut t = std::fs::read_to_string(&p).unwrap_or_default();
    t.push_str("/.local/\n");
    std::fs::write(p, t).unwrap();
}

fn assert_consistent(out: &Output, r: &Report) {
    let failed = r.checks.iter().any(|c| c.status == "FAIL");
    assert_eq!(r.ok, !failed, "ok disagrees with the checks: {r:#?}");
    expect_exit!(out, if failed { 1 } else { 0 });
    for c in &r.checks {
        assert!(
            ["PASS", "FAIL", "WARN", "SKIP"].contains(&c.status.as_str()),
            "bad status {c:?}"
        );
        if c.status == "FAIL" || c.status == "WARN" {
            assert!(!c.fix.is_empty(), "a {} without a fix: {c:?}", c.status);
        }
    }
}

#[test]
fn healthy_sim_checkout_passes_and_shows_the_tx_ranges() {
    let lab = Lab::new();
    exclude_local(&lab);
    std::fs::create_dir_all(lab.local()).unwrap();
    std::fs::write(
        lab.local().join("rxnode-policy.json"),
        r#"{"rx":{"max_duration_s":10},"tx":{"allowed_ranges_hz":[[433050000,434790000]],"max_gain_db":10,"max_duration_s":2}}"#,
    )
    .unwrap();
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    assert!(r.ok, "{r:#?}");
    for name in [
        "git checkout",
        ".local ignored",
        "remote",
        "libSoapySDR",
        "module search path",
        "modules",
        "radios",
        "DSP engine",
        "policy",
        "state",
        "ledger",
        "writable",
        "watcher",
    ] {
        assert_eq!(r.get(name).status, "PASS", "{:#?}", r.get(name));
    }
    let dsp = &r.get("DSP engine").detail;
    assert!(
        ["avx512", "avx2", "rustfft"]
            .iter()
            .any(|e| dsp.contains(&format!("N=2048 on {e}:"))),
        "{dsp}"
    );
    assert_eq!(r.get("credentials").status, "SKIP");
    assert!(r.get("remote").detail.contains("video-development"));
    assert!(r.get("radios").detail.contains("driver=rxsim"));
    assert!(r.get("modules").detail.contains("librxsim"));
    let pol = &r.get("policy").detail;
    assert!(
        pol.contains("433050000") && pol.contains("434790000"),
        "{pol}"
    );
    // The human report says the same, one line per check.
    let human = lab
        .rxnode()
        .env("RXSIM_EVENT_LOG", lab.dir.path().join("rxsim-events.log"))
        .env("NO_COLOR", "1")
        .args(["--sim", "doctor"])
        .output()
        .unwrap();
    expect_exit!(human, 0);
    let h = text(&human.stdout);
    assert!(h.contains("PASS radios"), "{h}");
    assert!(!h.contains('\x1b'), "colour on a pipe: {h}");
    // Doctor opened no stream on the radio.
    let events =
        std::fs::read_to_string(lab.dir.path().join("rxsim-events.log")).unwrap_or_default();
    assert!(!events.contains("stream"), "{events}");
}

#[test]
fn fresh_clone_with_unignored_local_fails_with_a_fix() {
    let lab = Lab::new();
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    assert!(!r.ok);
    let c = r.get(".local ignored");
    assert_eq!(c.status, "FAIL");
    assert!(c.fix.contains(".git/info/exclude"), "{c:?}");
    // Polish review: the fix used to name only watch and review; capture, sweep,
    // run, publish… add the exclude too.
    for cmd in ["watch", "review", "capture", "sweep", "publish"] {
        assert!(c.fix.contains(cmd), "fix does not name {cmd}: {c:?}");
    }
    // Doctor reports; it does not change the checkout.
    assert!(!lab.local().exists(), "doctor created .local/");
    let exclude = std::fs::read_to_string(lab.rx.join(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains(".local"));
    assert_eq!(lab.porcelain(), "");
}

#[test]
fn broken_remote_and_missing_branch_are_named() {
    let lab = Lab::new();
    exclude_local(&lab);
    let gone = lab.dir.path().join("no-such-origin.git");
    git(
        &lab.rx,
        &["remote", "add", "broken", gone.to_str().unwrap()],
    );
    let (out, r) = doctor(&lab, true, &["--remote", "broken"], &[]);
    assert_consistent(&out, &r);
    let c = r.get("remote");
    assert_eq!(c.status, "FAIL");
    assert!(c.detail.contains("does not exist"), "{c:?}");
    assert!(c.detail.contains("no-such-origin.git"), "{c:?}");
    assert_eq!(r.get("credentials").status, "SKIP");

    let (out, r) = doctor(&lab, true, &["--branch", "no-such-branch"], &[]);
    assert_consistent(&out, &r);
    let c = r.get("remote");
    assert_eq!(c.status, "FAIL");
    assert!(c.detail.contains("no branch \"no-such-branch\""), "{c:?}");
    assert!(
        c.detail.contains("video-development"),
        "lists what exists: {c:?}"
    );
}

#[test]
fn unreachable_network_remote_never_prints_its_credentials() {
    let lab = Lab::new();
    exclude_local(&lab);
    // Port 1 on loopback refuses at once.
    git(
        &lab.rx,
        &[
            "remote",
            "add",
            "net",
            "http://bob:s3cret@127.0.0.1:1/lab.git",
        ],
    );
    let (out, r) = doctor(&lab, true, &["--remote", "net"], &[]);
    assert_consistent(&out, &r);
    assert_eq!(r.get("remote").status, "FAIL");
    assert_eq!(r.get("credentials").status, "SKIP");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!all.contains("s3cret"), "{all}");
    assert!(all.contains("127.0.0.1"), "{all}");
}

#[test]
fn missing_module_path_without_sim_says_no_radios() {
    let lab = Lab::new();
    exclude_local(&lab);
    let missing = lab.dir.path().join("no-such-module.so");
    let root = lab.dir.path().join("empty-root");
    std::fs::create_dir_all(&root).unwrap();
    let (out, r) = doctor(
        &lab,
        false,
        &[],
        &[
            ("SOAPY_SDR_PLUGIN_PATH", missing.as_path()),
            ("SOAPY_SDR_ROOT", root.as_path()),
        ],
    );
    assert_consistent(&out, &r);
    assert!(!r.ok);
    let sp = r.get("module search path");
    assert_eq!(sp.status, "FAIL");
    assert!(sp.detail.contains("no-such-module.so"), "{sp:?}");
    assert!(sp.fix.contains("SOAPY_SDR_PLUGIN_PATH"), "{sp:?}");
    let m = r.get("modules");
    assert_eq!(m.status, "FAIL");
    assert!(
        m.detail.contains("no-such-module.so"),
        "which module: {m:?}"
    );
    let radios = r.get("radios");
    assert_eq!(radios.status, "FAIL");
    assert!(radios.detail.contains("no radios"), "{radios:?}");
    // The Git side is still judged on its own.
    assert_eq!(r.get("remote").status, "PASS");
}

#[test]
fn module_that_fails_to_load_is_named_with_why() {
    let lab = Lab::new();
    exclude_local(&lab);
    let mods = lab.dir.path().join("modules");
    std::fs::create_dir_all(&mods).unwrap();
    std::fs::write(mods.join("libbroken.so"), b"not a shared object").unwrap();
    let root = lab.dir.path().join("empty-root");
    std::fs::create_dir_all(&root).unwrap();
    let (out, r) = doctor(
        &lab,
        false,
        &[],
        &[
            ("SOAPY_SDR_PLUGIN_PATH", mods.as_path()),
            ("SOAPY_SDR_ROOT", root.as_path()),
        ],
    );
    assert_consistent(&out, &r);
    assert_eq!(r.get("module search path").status, "PASS");
    let m = r.get("modules");
    assert_eq!(m.status, "FAIL");
    assert!(m.detail.contains("libbroken.so"), "{m:?}");
    assert!(m.detail.contains("dlopen"), "says why: {m:?}");
}

#[test]
fn corrupt_state_ledger_and_lock_are_reported_and_left_in_place() {
    let lab = Lab::new();
    exclude_local(&lab);
    std::fs::create_dir_all(lab.local()).unwrap();
    let state = lab.local().join("rx_agent_state.json");
    std::fs::write(&state, b"{\"schema_version\": 1, tor").unwrap();
    let ledger = lab.local().join("rx_agent_ledger.jsonl");
    std::fs::write(&ledger, b"{\"event\":\"x\"}\nnot json\n{\"event\":\"y\"}\n").unwrap();
    std::fs::write(lab.local().join("rxnode.lock"), b"garbage").unwrap();
    std::fs::write(lab.local().join("rxnode-policy.json"), b"{\"rx\": 5}").unwrap();
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let s = r.get("state");
    assert_eq!(s.status, "FAIL");
    assert!(s.detail.contains("rx_agent_state.json"), "{s:?}");
    let l = r.get("ledger");
    assert_eq!(l.status, "FAIL");
    assert!(
        l.detail.contains("line(s) 2 ") && l.detail.contains("2 good"),
        "{l:?}"
    );
    assert_eq!(r.get("watcher").status, "FAIL");
    let p = r.get("policy");
    assert_eq!(p.status, "FAIL");
    assert!(p.detail.contains("rxnode-policy.json"), "{p:?}");
    // Nothing was moved aside or rewritten.
    assert_eq!(
        std::fs::read(&state).unwrap(),
        b"{\"schema_version\": 1, tor"
    );
    let names: Vec<String> = std::fs::read_dir(lab.local())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("corrupt")),
        "doctor moved something aside: {names:?}"
    );
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 3);
}

#[test]
fn outside_a_checkout_git_checks_fail_or_skip() {
    let d = tempfile::tempdir().unwrap();
    let out = crate::util::rxnode_bin()
        .args(["--sim", "--json", "--repo"])
        .arg(d.path())
        .arg("doctor")
        .env("RXSIM_EVENT_LOG", d.path().join("ev.log"))
        .output()
        .unwrap();
    let r: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_consistent(&out, &r);
    assert_eq!(r.get("git checkout").status, "FAIL");
    for name in [".local ignored", "remote", "credentials"] {
        assert_eq!(r.get(name).status, "SKIP");
    }
    assert_eq!(r.get("radios").status, "PASS");
}

#[test]
fn a_running_watcher_is_named_and_its_stale_lock_noted_after_it_dies() {
    let lab = Lab::new();
    exclude_local(&lab);
    let mut watcher = lab
        .rxnode()
        .env("RXSIM_EVENT_LOG", lab.dir.path().join("rxsim-events.log"))
        .args(["--sim", "watch", "--interval", "30"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = lab.local().join("rxnode.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !lock.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (out, r) = doctor(&lab, true, &[], &[]);
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert_consistent(&out, &r);
    let w = r.get("watcher");
    assert_eq!(w.status, "PASS", "{w:?}");
    assert!(
        w.detail.contains(&format!("PID {}", watcher.id())) && w.detail.contains("running"),
        "{w:?}"
    );
    // Killed without cleanup: the lock stays behind and is reported as stale.
    assert!(lock.exists(), "a killed watcher cannot remove its lock");
    let (_, r) = doctor(&lab, true, &[], &[]);
    let w = r.get("watcher");
    assert_eq!(w.status, "PASS");
    assert!(w.detail.contains("stale"), "{w:?}");
}

/// Doctor and status show the node's name; doctor WARNs (exit 0) when
/// none is set, since every publish would then be refused, and FAILs on a
/// damaged name file, which status reports without failing.
#[test]
fn node_name_is_shown_by_doctor_and_status_and_a_missing_one_warns() {
    let lab = Lab::new();
    exclude_local(&lab);
    let status = |json: bool| {
        let mut c = lab.rxnode();
        c.env("NO_COLOR", "1");
        if json {
            c.arg("--json");
        }
        let out = c.arg("status").output().unwrap();
        expect_exit!(out, 0);
        text(&out.stdout)
    };

    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let n = r.get("node name");
    assert_eq!(n.status, "WARN", "{n:?}");
    assert!(n.detail.contains("a publish would be refused"), "{n:?}");
    assert!(n.fix.contains("rxnode node set-name NAME"), "{n:?}");
    assert!(r.ok, "a missing name is a warning, not a failure: {r:#?}");
    let human = lab
        .rxnode()
        .env("NO_COLOR", "1")
        .args(["--sim", "doctor"])
        .output()
        .unwrap();
    let h = text(&human.stdout);
    assert!(h.contains("WARN node name"), "{h}");
    assert!(h.contains("fix: rxnode node set-name NAME"), "{h}");
    let s = status(false);
    assert!(
        s.contains("node:       no name set") && s.contains("rxnode node set-name NAME"),
        "{s}"
    );
    let j: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(j["node_name"], serde_json::Value::Null, "{j}");
    assert_eq!(j["node_name_error"], serde_json::Value::Null, "{j}");

    let set = lab.run(&["node", "set-name", "LAB-RX2"], "");
    expect_exit!(set, 0);
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let n = r.get("node name");
    assert_eq!(n.status, "PASS");
    assert!(
        n.detail
            .starts_with("LAB-RX2; publishes to rx-node (shared layout;"),
        "{}",
        n.detail
    );
    assert!(status(false).contains("node:       LAB-RX2"));
    let j: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(j["node_name"], "LAB-RX2", "{j}");

    // A damaged file: doctor fails naming it; status still answers.
    let f = lab.local().join("rxnode-node.json");
    std::fs::write(
        &f,
        b"{\"schema_version\":1,\"name\":\"no spaces\",\"set_at\":\"2026-01-01T00:00:00+00:00\"}",
    )
    .unwrap();
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let n = r.get("node name");
    assert_eq!(n.status, "FAIL", "{n:?}");
    assert!(n.detail.contains("rxnode-node.json"), "{n:?}");
    let j: serde_json::Value = serde_json::from_str(&status(true)).unwrap();
    assert_eq!(j["node_name"], serde_json::Value::Null, "{j}");
    assert!(
        j["node_name_error"]
            .as_str()
            .is_some_and(|e| e.contains("rxnode-node.json")),
        "{j}"
    );
    assert!(status(false).contains("node:       [FAILED]"));
}

/// A policy that does not parse (a trailing comma) is named with its line and
/// column and a fix, the same wording from a command (`--json` `fix`), from
/// `validate --policy` and from doctor's policy check: never `"fix": null`.
#[test]
fn a_policy_parse_error_carries_one_fix_everywhere() {
    let lab = Lab::new();
    exclude_local(&lab);
    std::fs::create_dir_all(lab.local()).unwrap();
    let pol = lab.local().join("rxnode-policy.json");
    std::fs::write(&pol, b"{\"rx\": {\"max_duration_s\": 10,},\n}\n").unwrap();
    let name = format!(
        "{}",
        lab.rx.join(".local").join("rxnode-policy.json").display()
    );
    let want = format!("repair {name} (docs/operator.md shows the fields)");
    let out = lab
        .rxnode()
        .args([
            "--sim",
            "--json",
            "capture",
            "-d",
            "driver=rxsim",
            "-f",
            "100M",
        ])
        .args(["-r", "1M", "-t", "0.1"])
        .output()
        .unwrap();
    expect_exit!(out, 2);
    let e: serde_json::Value = serde_json::from_slice(&out.stderr)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let message = e["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("trailing comma at line 1 column 30"),
        "{e}"
    );
    assert_eq!(e["error"]["fix"].as_str(), Some(want.as_str()), "{e}");
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let p = r.get("policy");
    assert_eq!(p.status, "FAIL", "{p:?}");
    assert!(
        p.detail.contains("trailing comma at line 1 column 30"),
        "{p:?}"
    );
    assert!(!p.detail.contains("fix:"), "{p:?}");
    assert_eq!(p.fix, want, "{p:?}");
}

/// A checkout this user cannot write (another user's, a read-only mount, an
/// immutable folder): doctor's `writable` check names the place and the fix, and
/// a command that has to record something fails with that same fix instead of
/// the bare OS error.
#[cfg(unix)]
#[test]
fn a_node_folder_this_user_cannot_write_is_named_by_doctor_and_by_the_command() {
    struct Writable<'a>(&'a std::path::Path);
    impl Drop for Writable<'_> {
        fn drop(&mut self) {
            crate::util::unwritable(self.0, false);
        }
    }
    let lab = Lab::new();
    exclude_local(&lab);
    let named = lab
        .rxnode()
        .args(["node", "set-name", "LAB1"])
        .output()
        .unwrap();
    expect_exit!(named, 0);
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let w = r.get("writable");
    assert_eq!(w.status, "PASS", "{w:?}");
    assert!(w.detail.contains(".local"), "{w:?}");
    assert!(
        w.detail.contains("rxnode"),
        "the Git directory's folder: {w:?}"
    );

    let local = lab.local();
    crate::util::unwritable(&local, true);
    let _restore = Writable(&local);
    let (out, r) = doctor(&lab, true, &[], &[]);
    assert_consistent(&out, &r);
    let w = r.get("writable");
    assert_eq!(w.status, "FAIL", "{w:?}");
    assert!(
        w.detail.contains(&local.display().to_string()),
        "names the folder: {w:?}"
    );
    assert!(w.fix.contains("owns the checkout"), "{w:?}");
    let watch = lab
        .rxnode()
        .args(["watch", "--once"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_ne!(watch.status.code(), Some(0), "{}", text(&watch.stderr));
    let err = text(&watch.stderr);
    assert!(
        err.contains("fix: run rxnode as the user who owns the checkout")
            && err.contains("rxnode doctor"),
        "{err}"
    );
}
