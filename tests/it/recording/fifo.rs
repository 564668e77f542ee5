//! A capture streamed to a FIFO (`--record FIFO`) waits for the program that reads
//! it before the radio is opened, and never in an open(2) nothing ends: a Ctrl-C
//! stops the wait at once; a reader that comes later gets every sample
//! (docs/operator.md#streaming-a-capture-to-another-program).
use super::capture_args;
use crate::util::{rxnode_cmd, text};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
    assert!(ok.success(), "mkfifo {}", p.display());
}

fn spawn_capture(dir: &Path, fifo: &Path, log: &Path, serial: &str) -> Child {
    rxnode_cmd()
        .current_dir(dir)
        .args(["--sim", "--json"])
        .args(capture_args(
            serial,
            &["--record", fifo.to_str().unwrap_or_default()],
        ))
        .env("RXSIM_EVENT_LOG", log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("rxnode: {e}"))
}

/// The child's output, or a failure (and the child killed) after `limit`.
fn wait_at_most(mut child: Child, limit: Duration, what: &str) -> Output {
    let t0 = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
            panic!(
                "{what}: still running after {limit:?} (killed): {}",
                text(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// No program reads the FIFO: the capture says it waits, holds no radio
/// meanwhile (rxsim made none), and a SIGINT ends it within seconds, naming
/// the FIFO — opening it plainly would wait in open(2), deaf to Ctrl-C.
#[test]
fn a_fifo_without_a_reader_is_waited_for_before_the_radio_and_sigint_ends_the_wait() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("live.fifo");
    mkfifo(&fifo);
    let log = dir.path().join("events.log");
    let child = spawn_capture(dir.path(), &fifo, &log, "fifo1");
    std::thread::sleep(Duration::from_millis(1500));
    let events = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !events.contains(" make "),
        "the radio was opened while no program read the FIFO: {events}"
    );
    crate::util::signal(child.id(), libc::SIGINT);
    let o = wait_at_most(child, Duration::from_secs(10), "capture after SIGINT");
    let se = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{se}");
    assert!(
        se.contains("waiting for a program to open the FIFO")
            && se.contains(&format!(
                "stopped while waiting for a program to read the FIFO {}",
                fifo.display()
            )),
        "{se}"
    );
    assert!(!se.contains("panicked"), "{se}");
}

/// The reader comes a second after the capture started: it gets every sample.
#[test]
fn a_fifo_reader_that_comes_later_gets_the_whole_capture() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fifo = dir.path().join("later.fifo");
    mkfifo(&fifo);
    let log = dir.path().join("events.log");
    let child = spawn_capture(dir.path(), &fifo, &log, "fifo2");
    std::thread::sleep(Duration::from_millis(1000));
    let mut got = Vec::new();
    std::fs::File::open(&fifo)
        .and_then(|mut f| f.read_to_end(&mut got))
        .unwrap_or_else(|e| panic!("read the FIFO: {e}"));
    let o = wait_at_most(child, Duration::from_secs(60), "capture with a reader");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(got.len(), 500_000 * 8);
}
