//! The rxnode binary as a child process, and reading what it printed and logged.
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The rxnode binary cargo built for these tests.
pub const RXNODE: &str = env!("CARGO_BIN_EXE_rxnode");

/// The decision prompt of `watch` and of `review`: the words both menus share.
pub const PROMPT: &str = "[A] Approve  [D] Defer  [S] Stop";
/// The watcher's menu.
pub const WATCH_PROMPT: &str = "[A] Approve  [D] Defer  [S] Stop watcher";
/// `review`'s menu: it has no watcher to stop.
pub const REVIEW_PROMPT: &str = "[A] Approve  [D] Defer  [S] Stop review";

/// The calling test thread's own folder for `RXNODE_RADIO_LOCK_DIR`: rxnode keeps
/// its radio locks there (`rxnode/radio-locks/`), so every rxnode one test starts
/// shares them and tests running side by side do not.
pub fn runtime_dir() -> std::path::PathBuf {
    thread_local! {
        static RUNTIME_DIR: tempfile::TempDir =
            tempfile::tempdir().unwrap_or_else(|e| panic!("cannot make a runtime folder: {e}"));
    }
    RUNTIME_DIR.with(|d| d.path().to_path_buf())
}

/// The rxnode binary with this test's [`runtime_dir`] and nothing else changed.
pub fn rxnode_bin() -> Command {
    let mut c = Command::new(RXNODE);
    c.env("RXNODE_RADIO_LOCK_DIR", runtime_dir());
    c
}

/// `rxnode` isolated from the caller's environment: none of its own variables, no
/// log filter, no Git credential prompt, its radio locks in this test's
/// [`runtime_dir`].
pub fn rxnode_cmd() -> Command {
    let mut c = rxnode_bin();
    c.env_remove("RXNODE_REPO")
        .env_remove("RXNODE_REMOTE")
        .env_remove("RXNODE_BRANCH")
        .env_remove("RXNODE_TASK_PATH")
        .env_remove("RXNODE_SIM")
        .env_remove("RUST_LOG")
        .env("GIT_TERMINAL_PROMPT", "0");
    default_signals(&mut c);
    c
}

/// The child starts with the default action for the terminal's signals, as from a
/// shell prompt, whatever this test process inherited: a test runner started in
/// the background (`cmd &`, `nohup`) ignores SIGINT, and a child that inherits that
/// cannot be interrupted before it installs its handler, which made
/// `signals::sigint_during_publish_leaves_no_half_built_commit` fail
/// ("no publish was interrupted in 16 trials") for a reason outside rxnode.
#[cfg(unix)]
fn default_signals(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only signal(2), which is async-signal-safe, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn default_signals(_: &mut Command) {}

/// Bytes as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Exit code, stdout and stderr of a finished child, for assertion messages.
pub fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    )
}

/// Asserts that a finished child exited with `code`; on failure the message gives
/// `context` (when not empty), then the exit code, stdout and stderr (`show`). Called
/// through `expect_exit!`, which formats the context.
#[track_caller]
pub fn expect_exit(out: &Output, code: i32, context: &str) {
    let sep = if context.is_empty() { "" } else { "\n" };
    assert_eq!(out.status.code(), Some(code), "{context}{sep}{}", show(out));
}

/// Seconds since the Unix epoch (the clock of the rxsim event log).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// SHA-256 of a file, lowercase hex.
pub fn sha256_file(p: &Path) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    hex::encode(Sha256::digest(bytes))
}

/// The lines of a text file; none if it does not exist (yet).
pub fn read_lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Send `sig` to our own child with process id `pid` (not yet reaped); a child that
/// is already gone is not an error here (the caller checks what it did).
#[cfg(unix)]
pub fn signal(pid: u32, sig: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        panic!("pid {pid} out of range");
    };
    // SAFETY: kill(2) on a child we spawned and have not waited for.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// A child process killed and reaped when the guard drops: a test that fails
/// half-way (a panicking assertion) leaves no watcher running behind it.
pub struct Reaped(pub Child);

impl std::ops::Deref for Reaped {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Spawn `cmd` with all three streams piped, type `input` on its stdin, then close
/// it (EOF). A child that exits without reading its input is not an error here.
pub fn spawn_fed(cmd: &mut Command, input: &[u8]) -> Child {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
    if let Some(mut pipe) = child.stdin.take() {
        let _ = pipe.write_all(input);
    }
    child
}

/// [`spawn_fed`], then wait for the child and collect its output.
pub fn run_fed(cmd: &mut Command, input: &[u8]) -> Output {
    spawn_fed(cmd, input)
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not finish: {e}"))
}

/// Run `cmd` with stdin fed NUL bytes that never end a line (as from `/dev/zero`),
/// up to `cap` bytes or until the child stops reading and the pipe breaks; returns
/// the output and how many bytes the pipe accepted.
pub fn run_fed_endless_line(cmd: &mut Command, cap: u64) -> (Output, u64) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let feeder = std::thread::spawn(move || {
        let block = [0u8; 64 * 1024];
        let mut written = 0u64;
        while written < cap {
            match pipe.write(&block) {
                Ok(n) => written += n as u64,
                Err(_) => break,
            }
        }
        written
    });
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not finish: {e}"));
    (out, feeder.join().expect("the feeder thread"))
}

/// Make `dir` unwritable (`true`) or writable again: as root, whom file modes do
/// not stop, with the immutable attribute; otherwise with its mode.
#[cfg(unix)]
pub fn unwritable(dir: &std::path::Path, on: bool) {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let flag = if on { "+i" } else { "-i" };
        let st = std::process::Command::new("chattr")
            .arg(flag)
            .arg(dir)
            .status()
            .expect("chattr");
        assert!(st.success(), "chattr {flag} {}", dir.display());
    } else {
        let mode = if on { 0o555 } else { 0o755 };
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}
