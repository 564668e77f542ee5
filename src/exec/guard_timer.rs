//! Windows: the TX guard's kill timer (docs/safety.md#the-tx-guard-process).
//!
//! Linux bounds a keyed transmitter with a SIGKILL timer the kernel fires even
//! while the guard and `rxnode run` are both stopped. Windows has no such timer:
//! a Job object's time limits count CPU time, which a suspended process does not
//! use, and a timer of the guard's own runs on one of its threads, which a
//! suspension stops too. So the guard starts a third, tiny process of this same
//! binary (`rxnode tx-guard-timer --guard <PID>`) that holds a handle to the
//! guard with terminate rights and ends it at the deadline it is given, whatever
//! the guard's state: `TerminateProcess` ends a suspended process at once. The
//! guard arms it before it opens the radio (the set-up bound) and moves it to the
//! permit's deadline when the stream's activation is asked; a timer that cannot
//! be started, armed or moved, or that ends while the guard runs, keys off.
//!
//! The timer is the guard's child, so it is in the same kill-on-close Job object
//! and ends with `run`; it ignores Ctrl-C and Ctrl-Break (the guard keys off on
//! them itself) and ends when the guard ends. What it cannot bound: a machine
//! whose every process is frozen at once (sleep, Modern Standby's desktop
//! freeze), or a debugger that suspends this process too.
use anyhow::{anyhow, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
use windows_sys::Win32::System::Threading::{
    OpenProcess, TerminateProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE, PROCESS_TERMINATE,
};

/// The exit code the timer gives the guard it ends: `run` names it in the
/// guard's outcome.
pub(crate) const TIMER_KILL_CODE: u32 = 71;
/// How often the timer looks for a new deadline while it waits on the guard
/// (a deadline is never moved nearer than the permit's grace, 460 ms, so a new
/// one is never missed by this slice).
const SLICE: Duration = Duration::from_millis(50);
/// How long the guard waits for the timer to say it holds the guard's handle.
const ARM_WAIT: Duration = Duration::from_secs(10);

/// Set when the guard's armed kill-timer process has ended: the guard's
/// watchdog then keys off (nothing outside would bound the transmission).
pub(crate) static TIMER_ENDED: AtomicBool = AtomicBool::new(false);

/// The guard's side: the pipe that moves the timer process's deadline.
pub(crate) struct KillTimer {
    stdin: std::sync::Mutex<ChildStdin>,
}

impl KillTimer {
    /// Start the timer process for this process, ending it `after` from now;
    /// `Ok` only once the timer said it holds this process's handle and the deadline.
    pub(crate) fn arm(after: Duration) -> Result<KillTimer> {
        let exe = std::env::current_exe().context("cannot find rxnode's own binary")?;
        let mut child = Command::new(exe)
            .arg("tx-guard-timer")
            .arg("--guard")
            .arg(std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the kill-timer process")?;
        match Self::handshake(&mut child, after) {
            Ok(stdin) => {
                std::thread::Builder::new()
                    .name("rxnode-guard-timer-wait".into())
                    .spawn(move || {
                        let _ = child.wait();
                        TIMER_ENDED.store(true, Ordering::SeqCst);
                    })
                    .context("cannot start the kill timer's waiter")?;
                Ok(KillTimer {
                    stdin: std::sync::Mutex::new(stdin),
                })
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }

    fn handshake(child: &mut Child, after: Duration) -> Result<ChildStdin> {
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| anyhow!("no pipe to the kill timer"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow!("no pipe from the kill timer"))?;
        writeln!(stdin, "{}", millis(after)).context("cannot give the kill timer its deadline")?;
        stdin
            .flush()
            .context("cannot give the kill timer its deadline")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("rxnode-guard-timer-armed".into())
            .spawn(move || {
                let mut line = String::new();
                let _ = BufReader::new(stdout).read_line(&mut line);
                let _ = tx.send(line);
            })
            .context("cannot read the kill timer")?;
        match rx.recv_timeout(ARM_WAIT) {
            Ok(l) if l.trim_end() == "armed" => Ok(stdin),
            Ok(l) if l.is_empty() => Err(anyhow!("the kill timer ended before it was armed")),
            Ok(l) => Err(anyhow!(
                "the kill timer said {:?}, not \"armed\"",
                l.trim_end()
            )),
            Err(_) => Err(anyhow!(
                "the kill timer did not say it was armed within {} s",
                ARM_WAIT.as_secs()
            )),
        }
    }

    /// Move the deadline to `after` from now.
    pub(crate) fn set(&self, after: Duration) -> Result<()> {
        if TIMER_ENDED.load(Ordering::SeqCst) {
            return Err(anyhow!("the kill-timer process ended"));
        }
        let mut stdin = self
            .stdin
            .lock()
            .map_err(|_| anyhow!("the kill timer's pipe is poisoned"))?;
        writeln!(stdin, "{}", millis(after)).context("cannot move the kill timer")?;
        stdin.flush().context("cannot move the kill timer")
    }
}

/// `d` in whole milliseconds, rounded down (the bound is never moved later).
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// An open process handle, closed once.
struct Process(HANDLE);

// SAFETY: a process handle may be waited on, terminated and closed from any thread.
unsafe impl Send for Process {}
// SAFETY: as above; the calls made through `&Process` are thread-safe kernel calls.
unsafe impl Sync for Process {}

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenProcess and is closed once, here.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// Console control events (Ctrl-C, Ctrl-Break, close) do not end the timer: the
/// guard keys off on them itself, and the timer stays its bound until it ends.
unsafe extern "system" fn ignore_ctrl(_event: u32) -> i32 {
    1
}

/// The timer process (`rxnode tx-guard-timer --guard <PID>`, started only by
/// the TX guard): the first line of stdin is the deadline, in milliseconds from
/// now; each later line moves it. At the deadline it ends the guard; when the
/// guard ends first, it ends too.
pub fn cmd_tx_guard_timer(guard: u32) -> Result<()> {
    // SAFETY: a handler routine that only returns TRUE.
    unsafe {
        SetConsoleCtrlHandler(Some(ignore_ctrl), 1);
    }
    if crate::exec::guard_job::parent_pid() != guard {
        return Err(anyhow!(
            "tx-guard-timer: --guard {guard} is not this process's parent"
        ));
    }
    // SAFETY: OpenProcess with a PID; the handle is checked and owned below. The
    // guard is alive: it waits for this process to say "armed".
    let h = unsafe { OpenProcess(PROCESS_TERMINATE | PROCESS_SYNCHRONIZE, 0, guard) };
    if h.is_null() {
        return Err(anyhow!(
            "tx-guard-timer: cannot open the guard process {guard}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let guard = Process(h);
    let start = Instant::now();
    let mut lines = BufReader::new(std::io::stdin());
    let mut first = String::new();
    lines
        .read_line(&mut first)
        .context("tx-guard-timer: cannot read the deadline")?;
    let first: u64 = first
        .trim_end()
        .parse()
        .map_err(|e| anyhow!("tx-guard-timer: deadline {:?}: {e}", first.trim_end()))?;
    // The deadline, in milliseconds since `start`.
    let deadline = Arc::new(AtomicU64::new(first.saturating_add(elapsed_ms(start))));
    {
        let deadline = Arc::clone(&deadline);
        std::thread::Builder::new()
            .name("rxnode-timer-pipe".into())
            .spawn(move || loop {
                let mut l = String::new();
                match lines.read_line(&mut l) {
                    // The guard's end closes the pipe; the deadline stays.
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if let Ok(ms) = l.trim_end().parse::<u64>() {
                            deadline.store(ms.saturating_add(elapsed_ms(start)), Ordering::SeqCst);
                        }
                    }
                }
            })
            .context("tx-guard-timer: cannot start its reader")?;
    }
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "armed").context("tx-guard-timer: cannot say it is armed")?;
        out.flush()
            .context("tx-guard-timer: cannot say it is armed")?;
    }
    wait_or_end(&guard, start, &deadline);
    Ok(())
}

/// Wait for the process `p` to end; end it (exit code [`TIMER_KILL_CODE`]) once
/// `deadline` (milliseconds since `start`) has passed.
fn wait_or_end(p: &Process, start: Instant, deadline: &AtomicU64) {
    loop {
        let now = elapsed_ms(start);
        let until = deadline.load(Ordering::SeqCst);
        if now >= until {
            // SAFETY: a handle opened with PROCESS_TERMINATE; a suspended process
            // ends at once.
            unsafe {
                TerminateProcess(p.0, TIMER_KILL_CODE);
            }
            // SAFETY: as below; the end is awaited so the report follows it.
            unsafe {
                WaitForSingleObject(p.0, 5_000);
            }
            return;
        }
        let wait = (until - now).min(millis(SLICE)) as u32;
        // SAFETY: a handle opened with PROCESS_SYNCHRONIZE.
        if unsafe { WaitForSingleObject(p.0, wait.max(1)) } == WAIT_OBJECT_0 {
            return;
        }
    }
}

fn elapsed_ms(start: Instant) -> u64 {
    millis(start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::windows::io::AsRawHandle;
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::Foundation::DuplicateHandle;
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, CREATE_SUSPENDED};

    /// A process that never runs a single instruction (created suspended), as a
    /// guard suspended together with `rxnode run` is.
    fn suspended_child() -> Child {
        let exe = std::env::current_exe().expect("test binary");
        Command::new(exe)
            .arg("--list")
            .creation_flags(CREATE_SUSPENDED)
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn a suspended child")
    }

    fn handle_of(c: &Child) -> Process {
        let mut h: HANDLE = std::ptr::null_mut();
        // SAFETY: duplicating the child's open process handle into this process.
        let ok = unsafe {
            DuplicateHandle(
                GetCurrentProcess(),
                c.as_raw_handle(),
                GetCurrentProcess(),
                &mut h,
                0,
                0,
                2, // DUPLICATE_SAME_ACCESS
            )
        };
        assert_ne!(ok, 0, "DuplicateHandle");
        Process(h)
    }

    #[test]
    fn the_kill_timer_ends_a_suspended_guard_at_its_deadline() {
        let mut child = suspended_child();
        let p = handle_of(&child);
        let start = Instant::now();
        // Armed for the set-up bound, then moved to 300 ms as at keying.
        let deadline = AtomicU64::new(30_000);
        std::thread::scope(|s| {
            s.spawn(|| wait_or_end(&p, start, &deadline));
            std::thread::sleep(Duration::from_millis(50));
            deadline.store(300, Ordering::SeqCst);
        });
        let took = start.elapsed();
        let st = child.try_wait().expect("try_wait");
        assert_eq!(
            st.and_then(|s| s.code()),
            Some(TIMER_KILL_CODE as i32),
            "the suspended child was not ended by the timer (after {took:?})"
        );
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(800),
            "ended after {took:?}, not at its 300 ms deadline"
        );
    }

    #[test]
    fn a_kill_timer_that_never_says_it_is_armed_is_refused() {
        // The test binary is no rxnode: it ends without saying "armed", as a
        // timer that cannot open its guard does.
        let Err(e) = KillTimer::arm(Duration::from_secs(30)) else {
            panic!("a timer process that never said \"armed\" was taken as armed");
        };
        let e = format!("{e:#}");
        assert!(
            e.contains("kill timer"),
            "the refusal does not name the kill timer: {e}"
        );
    }

    #[test]
    fn the_kill_timer_ends_with_its_guard() {
        let mut child = suspended_child();
        let p = handle_of(&child);
        let start = Instant::now();
        let deadline = AtomicU64::new(30_000);
        std::thread::scope(|s| {
            s.spawn(|| wait_or_end(&p, start, &deadline));
            std::thread::sleep(Duration::from_millis(100));
            child.kill().expect("kill");
        });
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the timer outlived its guard"
        );
        assert_ne!(
            child.wait().expect("wait").code(),
            Some(TIMER_KILL_CODE as i32),
            "the timer ended a guard whose deadline had not come"
        );
    }
}
