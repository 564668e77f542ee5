//! `rxnode run` on a terminal shows each step (k of n, op, radio, length) and
//! the time the timed steps left take; through a pipe it shows none of it.
use super::*;

const TWO_STEPS: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=PROG", "frequency_hz": 100e6,
   "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": 0.4},
  {"op": "rx_capture", "device": "driver=rxsim,serial=PROG", "frequency_hz": 101e6,
   "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": 0.2}
]}"#;

#[cfg(target_os = "linux")]
#[test]
fn run_shows_step_progress_on_a_terminal_only() {
    let rig = Rig::new();
    rig.post_and_approve("PROG_TTY", &yellow(), Some(TWO_STEPS));
    rig.post_and_approve("PROG_PIPE", &yellow(), Some(TWO_STEPS));
    // On a pseudo-terminal (util-linux `script`).
    let out = std::process::Command::new("script")
        .env("RXSIM_EVENT_LOG", &rig.events)
        .env("TERM", "xterm")
        .env("RXNODE_RADIO_LOCK_DIR", crate::util::runtime_dir())
        .env_remove("RXNODE_SIM")
        .args(["-qec"])
        .arg(format!(
            "{} --repo {} --sim run PROG_TTY",
            env!("CARGO_BIN_EXE_rxnode"),
            rig.lab.rx.display()
        ))
        .arg("/dev/null")
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        tty.contains(
            "[1/2] rx_capture on driver=rxsim,serial=PROG: 0.4 s (about 1 s left in the run)"
        ),
        "{tty:?}"
    );
    assert!(
        tty.contains(
            "[2/2] rx_capture on driver=rxsim,serial=PROG: 0.2 s (about 1 s left in the run)"
        ),
        "{tty:?}"
    );
    assert_eq!(rig.result("PROG_TTY").status, "PASS");
    // Through a pipe: the result, no progress lines.
    let out = rig.run("PROG_PIPE", None);
    assert_eq!(code(&out), Some(0), "{}", show(&out));
    assert!(!text(&out.stderr).contains("[1/2]"), "{}", show(&out));
}

/// The time left in a run counts only the steps the node's policy lets run: a
/// step it blocks says so on its line and adds nothing to the estimate.
#[cfg(target_os = "linux")]
#[test]
fn run_progress_leaves_a_blocked_step_out_of_the_time_left() {
    let rig = Rig::new();
    let plan = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=PROG", "frequency_hz": 100e6,
   "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": 0.4},
  {"op": "rx_capture", "device": "driver=rxsim,serial=PROG", "frequency_hz": 101e6,
   "sample_rate_hz": 250e3, "gain_db": 10, "duration_s": 30}
]}"#;
    rig.post_and_approve("PROG_BLOCK", &yellow(), Some(plan));
    rig.set_policy(r#"{"rx": {"max_duration_s": 5}}"#);
    let out = std::process::Command::new("script")
        .env("RXSIM_EVENT_LOG", &rig.events)
        .env("TERM", "xterm")
        .env("RXNODE_RADIO_LOCK_DIR", crate::util::runtime_dir())
        .env_remove("RXNODE_SIM")
        .args(["-qec"])
        .arg(format!(
            "{} --repo {} --sim run PROG_BLOCK",
            env!("CARGO_BIN_EXE_rxnode"),
            rig.lab.rx.display()
        ))
        .arg("/dev/null")
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(
        tty.contains(
            "[1/2] rx_capture on driver=rxsim,serial=PROG: 0.4 s (about 1 s left in the run)"
        ),
        "{tty:?}"
    );
    assert!(
        tty.contains(
            "[2/2] rx_capture on driver=rxsim,serial=PROG: blocked by the node's policy ("
        ),
        "{tty:?}"
    );
    assert!(!tty.contains("31 s left"), "{tty:?}");
}
