//! `.local/rxnode.lock`: one watcher (or prompting command) at a time.
//!
//! The file holds `{pid, host, since, started}` and is created exclusively. A
//! lock whose process has ended on this host is taken over with a warning in
//! the ledger — its PID dead, or (Linux) given by the kernel to another process
//! since, which `started` tells apart; a live holder, or a holder on another
//! host, is refused naming the holder.
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// Who holds the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Holder {
    /// Process ID.
    pub(crate) pid: u32,
    /// Host name.
    pub(crate) host: String,
    /// Since when (ISO 8601).
    pub(crate) since: String,
    /// The command holding it.
    #[serde(default)]
    pub(crate) command: String,
    /// The holding process's start as the kernel counts it ([`process_start`]):
    /// a PID that now names another process (the holder ended, the PID was
    /// reused, also after a reboot) is not the holder. `None` where it cannot
    /// be read (not Linux nor Windows) and in lock files of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<String>,
}

impl Holder {
    /// This process, running `command`, from now.
    pub(crate) fn this_process(command: &str) -> Holder {
        Holder {
            pid: std::process::id(),
            host: hostname(),
            since: now_iso(),
            command: command.to_owned(),
            started: process_start(std::process::id()),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PID {} on {} ({}, since {})",
            self.pid, self.host, self.command, self.since
        )
    }
}

/// A held lock; released (file removed) on drop.
#[derive(Debug)]
pub(crate) struct Lock {
    path: std::path::PathBuf,
    me: Holder,
    /// The dead holder whose lock this one took over, if any.
    took_over: Option<Holder>,
}

/// This host's name.
pub(crate) fn hostname() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// Whether a process with this PID exists on this host.
#[cfg(unix)]
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence/permission check; no signal is sent.
    let r = unsafe { libc::kill(p, 0) };
    if r == 0 {
        return true;
    }
    // EPERM: it exists but belongs to someone else.
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether a process with this PID is running on this host (Windows: the
/// process object, opened by its ID and not yet signalled as ended). A PID
/// Windows says does not exist (`ERROR_INVALID_PARAMETER`) is dead; any other
/// failure to open it (another user's process: access denied) counts as alive,
/// as `EPERM` does on unix: refusing is the safe side.
#[cfg(windows)]
pub(crate) fn pid_alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{
        CloseHandle, GetLastError, ERROR_INVALID_PARAMETER, WAIT_OBJECT_0,
    };
    use windows_sys::Win32::System::Threading::{
        OpenProcess, WaitForSingleObject, PROCESS_SYNCHRONIZE,
    };
    if pid == 0 {
        return false; // the idle process: never a lock holder
    }
    // SAFETY: OpenProcess takes a plain PID; the handle is closed below.
    let h = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
    if h.is_null() {
        // SAFETY: no preconditions; the error of the call just made.
        return unsafe { GetLastError() } != ERROR_INVALID_PARAMETER;
    }
    // SAFETY: `h` is open; a zero timeout only looks whether it is signalled
    // (an ended process whose object another handle keeps alive is).
    let ended = unsafe { WaitForSingleObject(h, 0) } == WAIT_OBJECT_0;
    // SAFETY: `h` came from OpenProcess and is closed once.
    unsafe { CloseHandle(h) };
    !ended
}

/// Whether a process with this PID exists on this host: no way to tell here,
/// so it counts as alive (refusing is the safe side).
#[cfg(not(any(unix, windows)))]
pub(crate) fn pid_alive(_pid: u32) -> bool {
    true
}

/// The start of process `pid` as the kernel counts it, `BOOT_ID:TICKS` (Linux:
/// the boot ID and the start time in clock ticks since boot, field 22 of
/// `/proc/PID/stat`): the same for one process all its life, different for any
/// later process given the same PID, in this boot or after a reboot; the wall
/// clock plays no part. Ticks are 10 ms (USER_HZ 100): a PID given again within
/// the same tick is not told apart, which needs the whole PID space to wrap in
/// that time. Windows: `win:` and the process's creation time (`GetProcessTimes`,
/// 100 ns since 1601), the same all its life and later for any process given
/// the ID again (Windows gives ended processes' IDs out again soon). `None` when
/// it cannot be read (another system, no such process, `/proc` hidden, a
/// process this user may not query).
pub(crate) fn process_start(pid: u32) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let boot = crate::store::fsutil::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let stat = crate::store::fsutil::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The fields after the command name's closing parenthesis start at field 3.
        let (_, rest) = stat.rsplit_once(')')?;
        let ticks = rest.split_ascii_whitespace().nth(22 - 3)?;
        ticks
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| format!("{}:{ticks}", boot.trim()))
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{CloseHandle, FILETIME};
        use windows_sys::Win32::System::Threading::{
            GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        if pid == 0 {
            return None;
        }
        // SAFETY: OpenProcess takes a plain PID; the handle is closed below.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            return None;
        }
        let mut t = [FILETIME::default(); 4];
        let [created, exited, kernel, user] = &mut t;
        // SAFETY: `h` is open; four writable FILETIMEs.
        let ok = unsafe { GetProcessTimes(h, created, exited, kernel, user) };
        // SAFETY: `h` came from OpenProcess and is closed once.
        unsafe { CloseHandle(h) };
        let c = (u64::from(t[0].dwHighDateTime) << 32) | u64::from(t[0].dwLowDateTime);
        (ok != 0 && c != 0).then(|| format!("win:{c}"))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = pid;
        None
    }
}

/// Whether the process `pid` on `host`, which started at `started` (see
/// [`process_start`]), may still be running: on another host it may; on this
/// one its PID must be alive and, when both starts are known, name the same
/// process (a PID the kernel gave to another process after the first ended is
/// not it). The one liveness test for every PID rxnode records.
pub(crate) fn process_running(pid: u32, host: &str, started: Option<&str>) -> bool {
    if host != hostname() {
        return true;
    }
    if !pid_alive(pid) {
        return false;
    }
    match (started, process_start(pid)) {
        (Some(then), Some(now)) => then == now,
        // Cannot tell: the PID is alive, so it may be the holder (the safe side).
        _ => true,
    }
}

/// Read the current holder of the watcher lock, if any (an unreadable file gives `Err`).
pub(crate) fn holder(paths: &Paths) -> Result<Option<Holder>> {
    holder_at(&paths.lock())
}

/// The holder of the run lock (`.local/rxnode-run.lock`), if it is readable.
pub(crate) fn run_holder(paths: &Paths) -> Option<Holder> {
    holder_at(&paths.run_lock()).ok().flatten()
}

/// Read the holder of the lock file at `p`, if any.
fn holder_at(p: &std::path::Path) -> Result<Option<Holder>> {
    match crate::store::fsutil::read(p) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .with_context(|| format!("lock file {} is not valid", p.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
    }
}

/// The command an `rxnode run` of task `id` holds the run lock under: one
/// spelling for the run that takes it and for `publish`, which refuses while it
/// names the task being published.
pub(crate) fn run_command(id: &str) -> String {
    format!("run {id}")
}

/// The live `rxnode run` of task `id`, if one holds this checkout's run lock now.
pub(crate) fn live_run_of(paths: &Paths, id: &str) -> Option<Holder> {
    run_holder(paths).filter(|h| holder_alive(h) && h.command == run_command(id))
}

/// Whether the holder is a live process (on this host, a dead PID or a PID
/// that now names another process is stale: [`process_running`]).
pub(crate) fn holder_alive(h: &Holder) -> bool {
    process_running(h.pid, &h.host, h.started.as_deref())
}

/// Why the holder `h` of a lock on this host is stale, for the warning.
fn why_stale(h: &Holder) -> String {
    if pid_alive(h.pid) {
        format!(
            "its process has ended: PID {} now names another process (started {}, the holder {})",
            h.pid,
            process_start(h.pid).as_deref().unwrap_or("?"),
            h.started.as_deref().unwrap_or("?")
        )
    } else {
        "its PID is dead".to_owned()
    }
}

impl Lock {
    /// Take the watcher lock (`.local/rxnode.lock`) for `command`, or fail
    /// (exit 3) naming the holder.
    pub(crate) fn acquire(paths: &Paths, command: &str) -> Result<Lock> {
        Lock::acquire_at(paths, paths.lock(), command)
    }

    /// Take the lock file `path` (under `.local/`) for `command`, or fail (exit 3)
    /// naming the holder; a dead holder on this host is taken over with a ledger entry.
    pub(crate) fn acquire_at(
        paths: &Paths,
        path: std::path::PathBuf,
        command: &str,
    ) -> Result<Lock> {
        // A linked worktree of a node is not a node: its `.local/` would be a
        // second, empty one (no policy, no state) deciding the same tasks.
        crate::store::node::refuse_worktree_of_node(paths, command)?;
        // Nothing is created before the trust root is checked and every file
        // this takes (the lock, its guard, its temp file) is ignored by Git:
        // a refusal writes nothing.
        crate::store::trust::prepare(paths)?;
        crate::store::trust::check_created(
            paths,
            &[
                path.clone(),
                path.with_extension("lock.guard"),
                path.with_extension(format!("lock.tmp-{}", std::process::id())),
            ],
        )?;
        crate::store::fsutil::create_local(&paths.local)?;
        let me = Holder::this_process(command);
        // Acquirers take turns (an OS lock the kernel drops if we die), so two
        // of them can never both take over the same stale lock.
        let guard_path = path.with_extension("lock.guard");
        let _guard = crate::store::fsutil::lock_exclusive(&guard_path)?;
        // The lock file appears complete or not at all: written to a temp file,
        // then hard-linked into place (fails if it exists) — never torn.
        let tmp = path.with_extension(format!("lock.tmp-{}", me.pid));
        crate::store::fsutil::write_synced(&tmp, &serde_json::to_vec(&me)?)?;
        let result = Lock::link_into_place(paths, &tmp, path, me);
        let _ = std::fs::remove_file(&tmp);
        result
    }

    fn link_into_place(
        paths: &Paths,
        tmp: &std::path::Path,
        path: std::path::PathBuf,
        me: Holder,
    ) -> Result<Lock> {
        let mut took_over = None;
        for _ in 0..3 {
            match std::fs::hard_link(tmp, &path) {
                Ok(()) => {
                    return Ok(Lock {
                        path,
                        me,
                        took_over,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let current = match holder_at(&path) {
                        Ok(Some(h)) => h,
                        Ok(None) => continue, // released meanwhile
                        Err(e) => {
                            // Lock files appear whole (hard link) and acquirers take
                            // turns, so an unreadable one is damage, not a writer at
                            // work: take it over, with the warning in the ledger.
                            take_over(paths, &path, None, &format!("{e:#}"))?;
                            continue;
                        }
                    };
                    if holder_alive(&current) {
                        return Err(crate::exit::refused(format!(
                            "another rxnode holds {}: {current}",
                            path.display()
                        )));
                    }
                    take_over(paths, &path, Some(&current), &why_stale(&current))?;
                    took_over = Some(current);
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()))
                }
            }
        }
        Err(crate::exit::refused(format!(
            "could not take {} (contended)",
            path.display()
        )))
    }

    /// The holder (a dead PID on this host) whose stale lock this one
    /// replaced; `None` when the lock was free (or unreadable, i.e. damaged).
    pub(crate) fn took_over(&self) -> Option<&Holder> {
        self.took_over.as_ref()
    }

    /// Who we are.
    #[cfg(test)]
    pub(crate) fn me(&self) -> &Holder {
        &self.me
    }
}

fn take_over(paths: &Paths, path: &std::path::Path, old: Option<&Holder>, why: &str) -> Result<()> {
    let who = old
        .map(|h| h.to_string())
        .unwrap_or_else(|| "unknown".into());
    note!(
        "rxnode: warning: taking over stale lock {} held by {who}: {why}",
        path.display()
    );
    ledger::append(
        paths,
        &Entry::new(Event::LockTakenOver {
            previous_holder: old.cloned(),
            reason: why.to_owned(),
        }),
    )?;
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove stale {}", path.display())),
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Remove only our own lock.
        let ours = crate::store::fsutil::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Holder>(&b).ok())
            .is_some_and(|h| h == self.me);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_refused_and_released_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let l = Lock::acquire(&paths, "watch").unwrap();
        let err = Lock::acquire(&paths, "watch").unwrap_err();
        assert!(format!("{err:#}").contains(&format!("PID {}", std::process::id())));
        drop(l);
        assert!(!paths.lock().exists());
        let _l2 = Lock::acquire(&paths, "watch").unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn stale_lock_taken_over_with_ledger_warning() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        // A child that has exited is a dead PID.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_alive(pid));
        std::fs::create_dir_all(&paths.local).unwrap();
        let stale = Holder {
            pid,
            host: hostname(),
            since: now_iso(),
            command: "watch".into(),
            started: None,
        };
        std::fs::write(paths.lock(), serde_json::to_vec(&stale).unwrap()).unwrap();
        let l = Lock::acquire(&paths, "watch").unwrap();
        assert_eq!(l.me().pid, std::process::id());
        let entries = ledger::read_all(&paths).unwrap();
        assert!(entries.iter().any(|e| e.event() == "lock_taken_over"));
    }

    /// A damaged (unreadable) lock file is taken over at once with a ledger
    /// warning: lock files appear whole, so it cannot be a writer at work; and
    /// no temp file is left behind.
    #[test]
    fn a_damaged_lock_is_taken_over_and_nothing_is_left_aside() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(paths.lock(), b"").unwrap();
        let l = Lock::acquire(&paths, "watch").unwrap();
        let on_disk: Holder =
            serde_json::from_slice(&std::fs::read(paths.lock()).unwrap()).unwrap();
        assert_eq!(&on_disk, l.me());
        assert!(ledger::read_all(&paths)
            .unwrap()
            .iter()
            .any(|e| e.event() == "lock_taken_over"));
        let tmp: Vec<_> = std::fs::read_dir(&paths.local)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(tmp.is_empty(), "{tmp:?}");
    }

    /// The PID of a killed holder, given by the kernel to another process (the
    /// PID space wraps; after a reboot PIDs start again): the lock is taken
    /// over with the ledger warning naming the reuse, and the holder is not
    /// alive for the run journal or `status`.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_lock_whose_pid_now_names_another_process_is_taken_over() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        // The holder: a process that ran, recorded its start, and ended.
        let mut gone = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let gone_start = process_start(gone.id()).expect("a live child's start");
        gone.kill().unwrap();
        gone.wait().unwrap();
        // Starts are counted in clock ticks (10 ms at USER_HZ 100): the next
        // process starts in a later one, as any process the kernel gives a
        // reused PID does (the PID space must wrap first).
        std::thread::sleep(std::time::Duration::from_millis(50));
        // Another process now holds that PID: the record names a live PID.
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let stale = Holder {
            pid: other.id(),
            host: hostname(),
            since: now_iso(),
            command: "run T1".into(),
            started: Some(gone_start),
        };
        assert!(pid_alive(stale.pid));
        assert!(!holder_alive(&stale), "a reused PID counted as the holder");
        // The same PID with its own start is the holder: alive, refused.
        let live = Holder {
            started: process_start(other.id()),
            ..stale.clone()
        };
        assert!(holder_alive(&live));
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(paths.run_lock(), serde_json::to_vec(&live).unwrap()).unwrap();
        let err = Lock::acquire_at(&paths, paths.run_lock(), "run T2").unwrap_err();
        assert!(
            format!("{err:#}").contains("another rxnode holds"),
            "{err:#}"
        );
        std::fs::write(paths.run_lock(), serde_json::to_vec(&stale).unwrap()).unwrap();
        let l = Lock::acquire_at(&paths, paths.run_lock(), "run T2").unwrap();
        assert_eq!(l.took_over(), Some(&stale));
        let entries = ledger::read_all(&paths).unwrap();
        let taken = entries
            .iter()
            .find(|e| e.event() == "lock_taken_over")
            .expect("a lock_taken_over line");
        let reason = taken.detail_str("reason").unwrap_or_default();
        assert!(reason.contains("now names another process"), "{reason}");
        other.kill().unwrap();
        other.wait().unwrap();
    }

    /// A lock file of an earlier version (no `started`) keeps the PID test.
    #[test]
    fn a_lock_without_a_recorded_start_is_judged_by_its_pid() {
        let mut me = Holder::this_process("watch");
        me.started = None;
        assert!(holder_alive(&me));
        let back: Holder =
            serde_json::from_slice(br#"{"pid":1,"host":"elsewhere","since":"x"}"#).unwrap();
        assert_eq!(back.started, None);
    }

    #[test]
    fn own_pid_is_alive() {
        assert!(pid_alive(std::process::id()));
    }

    /// This test executable, asked for a test that does not exist: it starts,
    /// runs nothing and ends.
    fn short_lived_child() -> std::process::Child {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "no_such_test_here"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    /// A running process is alive and one that has ended is not, also while its
    /// parent still holds it (on Windows a handle keeps the ended process's
    /// object, and its ID, in place). Runs under Wine too (scripts/check-windows.sh):
    /// there `tasklist` printed nothing, and every live lock holder was taken
    /// for dead.
    #[test]
    fn pid_alive_sees_a_running_process_and_not_an_ended_one() {
        let mut child = short_lived_child();
        let pid = child.id();
        let started = std::time::Instant::now();
        loop {
            // Looked at before asking whether it ended: when it had not ended
            // then, it was running when looked at.
            let alive = pid_alive(pid);
            if child.try_wait().unwrap().is_some() {
                break;
            }
            assert!(alive, "a running child counted as dead");
            assert!(started.elapsed() < std::time::Duration::from_secs(60));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!pid_alive(pid), "an ended child counted as alive");
        drop(child);
        assert!(!pid_alive(pid), "an ended child counted as alive");
        assert!(pid_alive(std::process::id()));
    }

    /// A process's recorded start is the same each time it is read and differs
    /// from that of a process started after it, so a lock naming an ID given
    /// out again (Wine gives an ended process's ID to the next one at once) is
    /// stale; the holder with its own start is alive (Linux and Windows; under
    /// Wine by scripts/check-windows.sh).
    #[cfg(any(target_os = "linux", windows))]
    #[test]
    fn a_lock_naming_a_reused_pid_with_another_start_is_stale() {
        let me = process_start(std::process::id()).expect("this process's start");
        assert_eq!(
            process_start(std::process::id()).as_deref(),
            Some(me.as_str())
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut child = short_lived_child();
        let theirs = process_start(child.id());
        child.wait().unwrap();
        let theirs = theirs.expect("a child's start, read while it ran or before it was reaped");
        assert_ne!(theirs, me, "two processes with one recorded start");
        let mut h = Holder::this_process("watch");
        assert!(holder_alive(&h));
        h.started = Some(theirs);
        assert!(
            !holder_alive(&h),
            "this PID with another process's start counted as the holder"
        );
    }
}
