//! The ledger is read as a stream: its size does not set a command's memory.
use crate::util::{run_fed, show, text, Lab};
use std::io::Write;
use std::os::unix::process::CommandExt;

/// The address space a command gets here: less than the ledger below.
const LIMIT: u64 = 160 << 20;
/// A ledger line of zeros, no line end inside (a sparse file, as a disk fault
/// or a copy gone wrong leaves one): bigger than [`LIMIT`].
const HUGE: u64 = 256 << 20;

/// `status` and `doctor` read the whole ledger into memory (a 1 GB ledger took
/// 1.07 GB): under a 160 MiB address-space limit, a 256 MiB ledger made
/// `status` fail with "cannot read ledger …: out of memory". The ledger is
/// now read line by line through a fixed buffer: `status` works within the
/// limit and says which line it skipped, and `doctor` still reads the entry
/// after that line.
#[test]
fn a_ledger_bigger_than_the_memory_a_command_has_is_still_read() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 10}}"#);
    let out = run_fed(lab.rxnode().args(["node", "set-name", "LAB1"]), b"");
    assert!(out.status.success(), "{}", show(&out));
    let ledger = lab.local().join("rx_agent_ledger.jsonl");
    let len = std::fs::metadata(&ledger).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&ledger)
        .unwrap();
    f.set_len(len + HUGE).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&ledger)
        .unwrap();
    f.write_all(b"\n{\"at\":\"2026-12-01T00:00:00+00:00\",\"event\":\"note\"}\n")
        .unwrap();
    drop(f);
    let limited = |args: &[&str]| {
        let mut cmd = lab.rxnode();
        cmd.args(args);
        // SAFETY: only setrlimit(2), async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: LIMIT as libc::rlim_t,
                    rlim_max: LIMIT as libc::rlim_t,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        run_fed(&mut cmd, b"")
    };
    let out = limited(&["status"]);
    assert!(out.status.success(), "status: {}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.contains("line 2: ")
            && err.contains(&format!("{HUGE} bytes"))
            && err.contains("skipped"),
        "the long line is not named: {err}"
    );
    assert!(text(&out.stdout).contains("LAB1"), "{}", show(&out));
    let out = limited(&["doctor"]);
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("line(s) 2 ({HUGE} bytes)")) && said.contains("(2 good)"),
        "doctor: {}",
        show(&out)
    );
}
