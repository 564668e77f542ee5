//! The TX guard process (docs/safety.md#the-tx-guard-process): whatever happens to
//! `rxnode run` or to the guard that holds the transmitter — any catchable signal,
//! SIGSTOP, SIGKILL — the radio's own log (rxsim's event log, written by the process
//! that holds the device or, at its death, by rxsim's witness) shows the TX stream
//! ended within the permit's duration + 0.5 s of its activation.
#![cfg(target_os = "linux")]
use crate::util::{signal, spawn_fed, Lab};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

const POLICY: &str = r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#;
/// The tone's length, s.
const PERMIT_S: f64 = 1.0;
/// The bound on keyed time past the permit, s.
const GRACE_S: f64 = 0.5;

fn red_task(id: &str, base: &str, device_extra: &str) -> String {
    let plan = format!(
        "```rx-plan\n{{\"steps\": [{{\"op\": \"tx_tone\", \"device\": \"driver=rxsim,serial={}{device_extra}\", \
\"frequency_hz\": 433.92e6, \"sample_rate_hz\": 1.0e6, \"tone_offset_hz\": 50e3, \"gain_db\": 0, \
\"duration_s\": {PERMIT_S}}}]}}\n```\n",
        id.to_lowercase()
    );
    let mut t = Lab::task(
        id,
        base,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "RED"),
        ],
    );
    t.push('\n');
    t.push_str(&plan);
    t
}

/// One keyed interval by the radio's account: from `activateStream TX` to the
/// first `deactivateStream TX` or `exitWhileActive TX` of the same process.
#[derive(Debug)]
struct Keyed {
    pid: String,
    on: f64,
    off: Option<f64>,
}

fn keyed_intervals(log: &Path) -> Vec<Keyed> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut out: Vec<Keyed> = vec![];
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 || f.get(3) != Some(&"TX") {
            continue;
        }
        let Ok(t) = f[0].parse::<f64>() else { continue };
        match f[2] {
            "activateStream" => out.push(Keyed {
                pid: f[1].to_owned(),
                on: t,
                off: None,
            }),
            "deactivateStream" | "exitWhileActive" => {
                if let Some(k) = out.iter_mut().find(|k| k.pid == f[1] && k.off.is_none()) {
                    k.off = Some(t);
                }
            }
            _ => {}
        }
    }
    out
}

fn has_event(log: &Path, event: &str) -> bool {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .contains(&format!(" {event} TX "))
}

/// The process IDs whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut v = vec![];
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in rd.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) {
            v.push(p);
        }
    }
    v
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").and_then(|(_, r)| r.chars().next()))
        .is_some_and(|c| c != 'Z' && c != 'X')
}

/// The phase of the tone a signal lands in.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// The guard runs, nothing activated yet.
    BeforeActivate,
    /// 300 ms into the tone.
    Streaming,
    /// During a TX write that hangs (rxsim `tx_stall_after_s=0.2`).
    StalledWrite,
}

/// Which process the signal goes to.
#[derive(Clone, Copy, Debug)]
enum Target {
    Run,
    Guard,
}

/// Start `rxnode run` for `id` (approved), authorized, in a process group of its own.
fn start_run(lab: &Lab, id: &str, log: &Path) -> Child {
    let mut cmd = lab.rxnode();
    cmd.args(["--sim", "run", id])
        .env("RXNODE_SIM", "1")
        .env("RXSIM_EVENT_LOG", log);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    spawn_fed(&mut cmd, b"AUTHORIZE RF TX\n")
}

/// Wait for `cond` for up to `secs`.
fn wait_for(secs: f64, mut cond: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs_f64(secs) {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Let a stopped or living run end, reap it, and make sure its guard is gone.
fn finish(mut child: Child, guard: Option<u32>) {
    let pid = child.id();
    signal(pid, libc::SIGCONT);
    let ended = wait_for(15.0, || matches!(child.try_wait(), Ok(Some(_))));
    if !ended {
        let _ = child.kill();
    }
    let _ = child.wait();
    if let Some(g) = guard {
        assert!(
            wait_for(5.0, || !alive(g)),
            "the guard {g} outlived its run"
        );
    }
}

/// One trial: approve, run, signal `target` with `sig` in `phase`, then check
/// the radio's log. Returns the keyed time, s (0 when never keyed).
fn trial(lab: &Lab, n: usize, sig: libc::c_int, phase: Phase, target: Target) -> f64 {
    let id = format!("GUARD_{n:03}");
    let log = lab.dir.path().join(format!("events-{n}.log"));
    let extra = match phase {
        Phase::StalledWrite => ",tx_stall_after_s=0.2",
        _ => "",
    };
    lab.post(&red_task(&id, &lab.main_head(), extra));
    lab.approve(&id);
    let child = start_run(lab, &id, &log);
    let run = child.id();
    let mut guard = None;
    assert!(
        wait_for(20.0, || {
            guard = children_of(run).first().copied();
            guard.is_some()
        }),
        "{id}: no guard process"
    );
    let ready = match phase {
        Phase::BeforeActivate => true,
        Phase::Streaming => {
            let on = wait_for(20.0, || has_event(&log, "activateStream"));
            std::thread::sleep(Duration::from_millis(300));
            on
        }
        Phase::StalledWrite => wait_for(20.0, || has_event(&log, "stallWrite")),
    };
    assert!(ready, "{id}: {phase:?} never reached");
    let to = match (target, guard) {
        (Target::Guard, Some(g)) => g,
        _ => run,
    };
    signal(to, sig);
    // Let the run end (a stopped one is continued; one that does not end within
    // 15 s is killed), then judge every activation by the radio's own log: a
    // signal the process ignores (SIGPIPE to `run`) lets the tone run whole,
    // possibly activated after the signal; whatever happened, each activation
    // ended within the permit + 0.5 s.
    finish(child, guard);
    // rxsim's witness writes the holder's death a moment after it happened.
    wait_for(3.0, || {
        keyed_intervals(&log).iter().all(|k| k.off.is_some())
    });
    let keyed = keyed_intervals(&log);
    assert!(
        keyed.len() <= 1,
        "{id}: more than one activation: {keyed:?}"
    );
    match keyed.first() {
        None => 0.0,
        Some(k) => {
            let off = k.off.unwrap_or_else(|| {
                panic!(
                    "{id}: signal {sig} to {target:?} in {phase:?}: TX never keyed off\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
            let t = off - k.on;
            assert!(
                t <= PERMIT_S + GRACE_S,
                "{id}: signal {sig} to {target:?} in {phase:?}: keyed {t:.3} s (permit {PERMIT_S} s + {GRACE_S} s)\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            t
        }
    }
}

const SIGNALS: [libc::c_int; 11] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGPIPE,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
];

fn lab() -> Lab {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.local()).unwrap();
    lab.set_policy(POLICY);
    lab
}

/// Every catchable signal that ends or stops a process, sent to `rxnode run` and
/// to the guard, while the tone streams: the radio's log shows the key-off within
/// the permit + 0.5 s.
#[test]
fn every_signal_while_streaming_keys_off_within_the_permit() {
    let lab = lab();
    let mut n = 0;
    for target in [Target::Run, Target::Guard] {
        for sig in SIGNALS {
            let t = trial(&lab, n, sig, Phase::Streaming, target);
            println!("signal {sig} to {target:?} while streaming: keyed {t:.3} s");
            n += 1;
        }
    }
}

/// The same before the stream is activated: nothing stays keyed.
#[test]
fn every_signal_before_activation_keys_off_within_the_permit() {
    let lab = lab();
    let mut n = 100;
    for target in [Target::Run, Target::Guard] {
        for sig in SIGNALS {
            trial(&lab, n, sig, Phase::BeforeActivate, target);
            n += 1;
        }
    }
}

/// The same during a TX write that hangs in the driver: the guard cannot
/// deactivate the stream (the hung call holds it), so it ends its own process,
/// which the radio's log records as the end of the transmission.
#[test]
fn every_signal_during_a_stalled_write_keys_off_within_the_permit() {
    let lab = lab();
    let mut n = 200;
    for target in [Target::Run, Target::Guard] {
        for sig in SIGNALS {
            trial(&lab, n, sig, Phase::StalledWrite, target);
            n += 1;
        }
    }
}

/// SIGSTOP (which no process can catch) of `rxnode run` mid-tone: the guard
/// misses its heartbeats and keys off; SIGSTOP of the guard: `run` sees it
/// stopped and kills it. SIGKILL of either: the same bound.
#[test]
fn sigstop_or_sigkill_of_run_or_guard_keys_off_within_the_permit() {
    let lab = lab();
    let mut n = 300;
    for sig in [libc::SIGSTOP, libc::SIGKILL] {
        for target in [Target::Run, Target::Guard] {
            for phase in [Phase::Streaming, Phase::StalledWrite] {
                let t = trial(&lab, n, sig, phase, target);
                println!("signal {sig} to {target:?} {phase:?}: keyed {t:.3} s");
                n += 1;
            }
        }
    }
}

/// `run` and its guard stopped together (SIGSTOP to their process group, as
/// `kill -STOP -PGID` or `pkill -STOP rxnode` would): neither can
/// act on the other, and the kernel's SIGKILL timer ends the guard at the permit's
/// deadline while both are still stopped; the radio's log shows the key-off within
/// the permit + 0.5 s, before anything is continued.
#[test]
fn run_and_its_guard_stopped_together_key_off_within_the_permit() {
    let lab = lab();
    let id = "GUARD_PAIR";
    let log = lab.dir.path().join("events-pair.log");
    lab.post(&red_task(id, &lab.main_head(), ""));
    lab.approve(id);
    let child = start_run(&lab, id, &log);
    let run = child.id();
    assert!(
        wait_for(20.0, || has_event(&log, "activateStream")),
        "{id}: never keyed"
    );
    let guard = children_of(run).first().copied();
    std::thread::sleep(Duration::from_millis(300));
    // The process group `start_run` made: run and its guard.
    let group = libc::pid_t::try_from(run).expect("pid");
    // SAFETY: kill(2) on the process group of a child we spawned.
    unsafe {
        libc::kill(-group, libc::SIGSTOP);
    }
    std::thread::sleep(Duration::from_millis(2500));
    let keyed = keyed_intervals(&log);
    // SAFETY: as above.
    unsafe {
        libc::kill(-group, libc::SIGCONT);
    }
    finish(child, guard);
    assert_eq!(keyed.len(), 1, "{keyed:?}");
    let off = keyed[0]
        .off
        .unwrap_or_else(|| panic!("{id}: still keyed 2.5 s into a stop of run and its guard"));
    let t = off - keyed[0].on;
    println!("run and guard stopped together: keyed {t:.3} s");
    assert!(t <= PERMIT_S + GRACE_S, "keyed {t:.3} s");
    assert!(
        has_event(&log, "exitWhileActive"),
        "the guard's death ended the tone"
    );
    assert_eq!(result_of(&lab, id)["status"], "FAIL");
}

/// A hung write with nobody signalling: the guard ends itself at its deadline.
#[test]
fn a_hung_write_ends_at_the_guards_own_deadline() {
    let lab = lab();
    let id = "GUARD_HUNG";
    let log = lab.dir.path().join("events-hung.log");
    lab.post(&red_task(id, &lab.main_head(), ",tx_stall_after_s=0.2"));
    lab.approve(id);
    let child = start_run(&lab, id, &log);
    let out = child.wait_with_output().unwrap();
    let keyed = keyed_intervals(&log);
    assert_eq!(keyed.len(), 1, "{keyed:?}");
    let t = keyed[0].off.expect("keyed off") - keyed[0].on;
    assert!(t <= PERMIT_S + GRACE_S, "keyed {t:.3} s");
    assert!(
        has_event(&log, "exitWhileActive"),
        "the guard's process ended the tone"
    );
    let res: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lab.outbox(id).join("RX_RESULT.json")).unwrap())
            .unwrap();
    assert_eq!(res["status"], "FAIL", "{res}\n{}", crate::util::show(&out));
}

/// Start a RED run of `id`, wait until its tone is on air, SIGKILL `run`, and wait
/// until the guard has keyed off (the radio's log).
fn kill_run_mid_tone(lab: &Lab, id: &str, log: &Path) {
    // Publishable: the result may leave the machine.
    lab.post(
        &red_task(id, &lab.main_head(), "")
            .replace("ALLOW_PUSH = NO", "ALLOW_PUSH = RX_RESULT_ONLY"),
    );
    lab.approve(id);
    let mut child = start_run(lab, id, log);
    assert!(
        wait_for(20.0, || has_event(log, "activateStream")),
        "{id}: never keyed"
    );
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), libc::SIGKILL);
    let _ = child.wait();
    assert!(
        wait_for(5.0, || keyed_intervals(log).iter().all(|k| k.off.is_some())),
        "{id}: the guard did not key off"
    );
}

fn result_of(lab: &Lab, id: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(lab.outbox(id).join("RX_RESULT.json")).unwrap()).unwrap()
}

/// A RED run killed (SIGKILL) mid-tone leaves the "not started" placeholder;
/// the next `doctor` (or `status`) finds the unfinished run in the journal and
/// finishes the result as FAIL with an `interrupted` record (keyed at, last
/// progress, who found it) — never the placeholder, never PASS; `publish` then
/// ships that, and the result validates.
#[test]
fn a_run_killed_mid_tone_is_finished_as_interrupted_by_the_next_command() {
    let lab = lab();
    crate::util::rxnode_cmd()
        .arg("--repo")
        .arg(lab.rx.as_path())
        .args(["node", "set-name", "LAB-RX"])
        .output()
        .unwrap();
    for (id, finder) in [("KILLED_A", "doctor"), ("KILLED_B", "status")] {
        let log = lab.dir.path().join(format!("events-{id}.log"));
        kill_run_mid_tone(&lab, id, &log);
        let placeholder = result_of(&lab, id);
        assert_eq!(
            placeholder["checks"][0]["detail"], "not started",
            "{placeholder}"
        );
        let out = lab.run(&[finder], "");
        let said = format!(
            "{}{}",
            crate::util::text(&out.stdout),
            crate::util::text(&out.stderr)
        );
        assert!(said.contains("INTERRUPTED"), "{finder}: {said}");
        assert!(said.contains(id), "{finder}: {said}");
        let r = result_of(&lab, id);
        assert_eq!(r["status"], "FAIL", "{r:#}");
        assert_eq!(r["interrupted"]["found_by"], finder, "{r:#}");
        assert!(r["interrupted"]["keyed_at"].is_string(), "{r:#}");
        assert_eq!(
            r["interrupted"]["last_progress"], "step 1/1: tx_tone",
            "{r:#}"
        );
        assert!(
            r["checks"][0]["detail"]
                .as_str()
                .unwrap()
                .starts_with("INTERRUPTED"),
            "{r:#}"
        );
        assert_eq!(lab.status_of(id), "completed");
        assert_eq!(lab.count_events("run_interrupted", id), 1);
        // Found once: a second look finds nothing new and changes nothing.
        let again = lab.run(&["status"], "");
        assert!(!crate::util::text(&again.stdout).contains(&format!("INTERRUPTED run: {id}")));
        assert_eq!(lab.count_events("run_interrupted", id), 1);
        let v = lab.run(&["validate-result", lab.outbox(id).to_str().unwrap()], "");
        assert_eq!(v.status.code(), Some(0), "{}", crate::util::show(&v));
    }
    // A third run killed and met first by `publish`: it publishes the interrupted
    // result, never the placeholder.
    let id = "KILLED_C";
    let log = lab.dir.path().join("events-KILLED_C.log");
    kill_run_mid_tone(&lab, id, &log);
    let out = crate::util::run_fed(
        lab.rxnode().args(["publish", id]),
        format!("PUBLISH {id}\n").as_bytes(),
    );
    assert!(
        crate::util::text(&out.stderr).contains("INTERRUPTED"),
        "{}",
        crate::util::show(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", crate::util::show(&out));
    let r = result_of(&lab, id);
    assert_eq!(r["interrupted"]["found_by"], "publish", "{r:#}");
    let shipped = crate::util::git(
        &lab.rx,
        &[
            "show",
            &format!("rx-node:rx-results/{id}/LAB-RX/RX_RESULT.json"),
        ],
    );
    assert!(
        shipped.contains("\"interrupted\""),
        "{shipped}\n{}",
        crate::util::show(&out)
    );
    assert!(!shipped.contains("not started"), "{shipped}");
}

/// The binary of a running `rxnode run` replaced on disk (an upgrade renames a new
/// file over it) after the `AUTHORIZE RF TX` prompt and before the key-up: the TX
/// guard is still the running program (`/proc/self/exe`), not what the path names
/// now, so the authorized tone goes on air once, whole, and PASSes; the new file
/// never runs. Before, the guard was started from the path, failed to start, and
/// the step FAILed with nothing keyed, the one authorization spent.
#[test]
fn a_binary_replaced_after_the_prompt_still_runs_the_authorized_tone_from_the_running_program() {
    use std::io::{BufRead, Write};
    let lab = lab();
    let id = "GUARD_SWAP";
    let log = lab.dir.path().join("events-swap.log");
    lab.post(&red_task(id, &lab.main_head(), ""));
    lab.approve(id);
    let bin = lab.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("rxnode");
    std::fs::copy(env!("CARGO_BIN_EXE_rxnode"), &exe).unwrap();
    let ran_new = lab.dir.path().join("the-new-file-ran");
    let mut child = std::process::Command::new(&exe)
        .arg("--repo")
        .arg(&lab.rx)
        .args(["--sim", "run", id])
        .env("RXNODE_SIM", "1")
        .env("RXSIM_EVENT_LOG", &log)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, prompt) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for l in std::io::BufReader::new(stderr).lines() {
            let Ok(l) = l else { break };
            if l.contains("Type exactly") {
                let _ = tx.send(());
            }
            all.push_str(&l);
            all.push('\n');
        }
        all
    });
    prompt
        .recv_timeout(Duration::from_secs(60))
        .expect("the AUTHORIZE RF TX prompt was never drawn");
    // The upgrade: a new file renamed over the running binary.
    let new = bin.join("rxnode.new");
    std::fs::write(
        &new,
        format!("#!/bin/sh\ntouch '{}'\nexit 9\n", ran_new.display()),
    )
    .unwrap();
    std::fs::set_permissions(&new, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&new, &exe).unwrap();
    stdin.write_all(b"AUTHORIZE RF TX\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(!ran_new.exists(), "the file now at the path ran:\n{err}");
    let keyed = keyed_intervals(&log);
    assert_eq!(keyed.len(), 1, "{keyed:?}\n{err}");
    let t = keyed[0].off.expect("keyed off") - keyed[0].on;
    assert!(t <= PERMIT_S + GRACE_S, "keyed {t:.3} s");
    assert!(status.success(), "{status}\n{err}");
    assert_eq!(result_of(&lab, id)["status"], "PASS", "{err}");
}
