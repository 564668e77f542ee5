//! A run whose result files cannot be written (a full disk, a file in the way)
//! still reports its measurement, leaves no stale result that `publish` would
//! send, and advises what the operator can really do
//! (docs/reliability.md#a-full-disk).
use super::*;

const PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim,serial=UNWRITTEN", "frequency_hz": 100e6,
   "sample_rate_hz": 1e6, "gain_db": 20, "duration_s": 0.3}
]}"#;

/// The run's files limited to 16 KiB each (`RLIMIT_FSIZE`, SIGXFSZ ignored:
/// a write past it fails as on a full disk), so the ledger and the state are
/// written and the 40 KB result JSON is not: the run prints its PASS result
/// (the only copy of the measurement), exits 1 with advice that names no
/// `state rebuild` (which cannot bring a result back), and the outbox keeps no
/// result — not the approval's `NOT RUN` placeholder, which `publish` sent as
/// the result of a task that ran.
#[test]
fn a_result_that_cannot_be_written_is_printed_and_no_stale_result_is_left() {
    use std::os::unix::process::CommandExt;
    let rig = Rig::new();
    let id = "UNWRITTEN_1";
    rig.post_and_approve(id, &yellow(), Some(PLAN));
    let ob = rig.lab.outbox(id);
    assert!(
        ob.join("RX_RESULT.json").is_file(),
        "approval wrote no placeholder"
    );
    let mut cmd = rig.lab.rxnode();
    cmd.args(["--sim", "run", id])
        .env("RXSIM_EVENT_LOG", rig.lab.events_log())
        .env("NO_COLOR", "1");
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 16 * 1024,
                rlim_max: 16 * 1024,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = spawn_fed(&mut cmd, b"").wait_with_output().unwrap();
    assert_eq!(code(&out), Some(1), "{}", show(&out));
    let so = text(&out.stdout);
    assert!(
        so.contains(&format!("{id}: PASS")) && so.contains("rx_capture"),
        "the measurement was not reported: {}",
        show(&out)
    );
    let se = text(&out.stderr);
    assert!(
        se.contains("its result files could not be written")
            && se.contains("The result printed above is the only copy of this measurement")
            && se.contains("new TASK_ID")
            && !se.contains("state rebuild"),
        "{se}"
    );
    for name in ["RX_RESULT.json", "RX_RESULT.md"] {
        assert!(
            !ob.join(name).exists(),
            "{name} was left in {} for publish to send",
            ob.display()
        );
    }
    assert_eq!(rig.lab.status_of(id), "completed");
    assert_eq!(rig.lab.count_events("run_finished", id), 1);
}
