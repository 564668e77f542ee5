//! Per-machine radio locks: one rxnode process per physical radio
//! (docs/operator.md#one-process-per-radio).
//!
//! Before a command opens a radio (`capture`, `sweep`, a step of `run`) it
//! resolves which physical unit its device args open — SoapySDR's own
//! enumeration of the args, whose first match is the unit `Device::make` opens
//! ([`rxnode_hw::resolve_unit`]) — and takes an advisory lock named after that
//! unit's identity (driver, serial, …), so `serial=B`,
//! `driver=x,serial=B,gain=3` and `driver=x,serial=A,serial=B` name one radio
//! whatever their spelling; a unit a SoapyRemote server offers is named as its
//! server names it, so the radio reached directly and through a server on this
//! machine is one radio too. The lock is the OS's own file lock
//! (`std::fs::File::try_lock`, on every platform), which the kernel drops when
//! the process ends however it ends, so a lock can never go stale. It lives in
//! one folder per machine user ([`lock_dir`]), not in a checkout, so rxnode run
//! from two folders still takes one lock. Beside it a small JSON file says who
//! holds it (PID, host, command, since), so a second process can name the
//! holder. A held radio is waited for briefly ([`WAIT`]), then refused naming
//! the holder ([`RadioBusy`]).
//!
//! When enumeration finds no unit (opening it will fail) the identity falls back
//! to the args themselves: the driver and the keys that pick one unit, in a fixed
//! order and case; args that name no unit (`driver=hackrf`) lock every radio of
//! that driver.
//! Args that reach a SoapyRemote server are the exception ([`RadioUnnamed`]): a
//! server that does not answer now may answer when the radio is opened, and the
//! args name the server, not the radio, so such a radio is not opened at all.
use crate::store::lock::Holder;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a command waits for a radio another rxnode holds before refusing.
pub(crate) const WAIT: Duration = Duration::from_secs(3);

/// The SoapySDR argument keys that pick one unit of a driver (an enumeration's
/// descriptive `label` is left out of a resolved identity: it may carry an index).
const UNIT_KEYS: &[&str] = &[
    "serial",
    "addr",
    "uri",
    "device_id",
    "remote",
    "resource",
    "name",
    "label",
];

/// The radio is held by another process: the error a command returns (exit 1,
/// a device error) and a run records as its step's `BLOCKED` reason.
#[derive(Debug)]
pub(crate) struct RadioBusy {
    /// The device args as the command was given them.
    pub(crate) device: String,
    /// The physical unit they open ([`resolve`]).
    pub(crate) identity: String,
    /// Who holds it (`None` when its holder file could not be read).
    pub(crate) holder: Option<Holder>,
    /// How long this process waited.
    pub(crate) waited: Duration,
}

impl RadioBusy {
    /// Who holds the radio and how long this process waited, without a fix: the
    /// fix depends on whether the command can be tried again (a task cannot).
    pub(crate) fn what(&self) -> String {
        let who = match &self.holder {
            Some(h) => format!(
                "another rxnode: PID {} on {} ({}, since {})",
                h.pid, h.host, h.command, h.since
            ),
            None => "another rxnode (who holds it is not recorded)".to_owned(),
        };
        format!(
            "radio {} ({}) is in use by {who}; waited {:.0} s",
            self.device,
            self.identity,
            self.waited.as_secs_f64()
        )
    }
}

impl std::fmt::Display for RadioBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} — fix: wait for that command to finish (or stop it), then try again",
            self.what()
        )
    }
}

impl std::error::Error for RadioBusy {}

/// Args that reach a SoapyRemote server whose enumeration named no radio: the
/// radio cannot be locked under its own name, so it is not opened ([`resolve`]).
#[derive(Debug)]
pub(crate) struct RadioUnnamed {
    /// The device args as the command was given them.
    pub(crate) device: String,
    /// What the enumeration said.
    pub(crate) why: String,
}

impl RadioUnnamed {
    /// What happened, without a fix (a task cannot simply be tried again).
    pub(crate) fn what(&self) -> String {
        format!(
            "radio {}: the SoapyRemote server these args name did not say which radio they open \
             ({}), so the radio cannot be locked under its own name and is not opened (it may be \
             one another rxnode holds directly)",
            self.device, self.why
        )
    }

    /// The fix for the server itself.
    pub(crate) const FIX: &'static str = "start the server or correct `remote=` (check it with \
         `rxnode inventory --dry-run`)";
}

impl std::fmt::Display for RadioUnnamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} — fix: {}, then try again",
            self.what(),
            RadioUnnamed::FIX
        )
    }
}

impl std::error::Error for RadioUnnamed {}

/// A radio in use, as its holder file records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HeldRadio {
    /// The radio's identity ([`identity`]).
    pub(crate) identity: String,
    /// Who holds it.
    #[serde(flatten)]
    pub(crate) holder: Holder,
}

/// A held radio; the lock is released when this is dropped (or the process ends).
#[derive(Debug)]
pub(crate) struct RadioLock {
    /// The open, OS-locked file: the lock itself.
    _file: std::fs::File,
    holder_path: PathBuf,
    me: Holder,
}

impl RadioLock {
    /// Take the lock of the radio `device` (SoapySDR args) for `command`
    /// (`capture`, `sweep`, `run T5 step 2`), waiting up to [`WAIT`] for another
    /// rxnode to let go; then [`RadioBusy`] naming the holder.
    pub(crate) fn acquire(paths: &Paths, device: &str, command: &str) -> Result<RadioLock> {
        RadioLock::acquire_within(paths, device, command, WAIT)
    }

    /// [`RadioLock::acquire`] with its own wait.
    pub(crate) fn acquire_within(
        paths: &Paths,
        device: &str,
        command: &str,
        wait: Duration,
    ) -> Result<RadioLock> {
        // Nothing is opened before the checkout's trust root is checked.
        crate::store::trust::prepare(paths)?;
        let identity = resolve(device)?;
        let dir = lock_dir(&identity)?;
        RadioLock::acquire_in(&dir, &identity, device, command, wait)
    }

    /// Take the lock of the radio `identity` in the lock folder `dir`.
    fn acquire_in(
        dir: &Path,
        identity: &str,
        device: &str,
        command: &str,
        wait: Duration,
    ) -> Result<RadioLock> {
        let (lock_path, holder_path) = files(dir, identity);
        let file = rxnode_dsp::open_regular_write(&lock_path, rxnode_dsp::WriteMode::Keep, false)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= wait {
                        return Err(anyhow::Error::new(RadioBusy {
                            device: device.to_owned(),
                            identity: identity.to_owned(),
                            holder: read_holder(&holder_path),
                            waited: start.elapsed(),
                        }));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()))
                }
            }
        }
        let me = Holder::this_process(command);
        let record = HeldRadio {
            identity: identity.to_owned(),
            holder: me.clone(),
        };
        crate::store::fsutil::write_atomic(&holder_path, &serde_json::to_vec(&record)?)?;
        Ok(RadioLock {
            _file: file,
            holder_path,
            me,
        })
    }

    /// Who holds it: this process.
    #[cfg(test)]
    pub(crate) fn holder(&self) -> &Holder {
        &self.me
    }
}

impl Drop for RadioLock {
    fn drop(&mut self) {
        // The holder file goes first, while the OS lock is still ours, so the
        // next holder's file is never removed; the lock goes with the file.
        if read_holder(&self.holder_path).is_some_and(|h| h == self.me) {
            let _ = std::fs::remove_file(&self.holder_path);
        }
    }
}

/// Who holds the radio `identity` in the lock folder `dir` now, if anyone
/// (read-only: no file is created).
#[cfg(test)]
fn holder_of(dir: &Path, identity: &str) -> Option<Holder> {
    let (lock_path, holder_path) = files(dir, identity);
    held(&lock_path, &holder_path).map(|h| h.holder)
}

/// Every radio some rxnode on this machine holds now, by identity (for
/// `status`); read-only.
pub(crate) fn held_radios() -> Vec<HeldRadio> {
    let machine = lock_dir("any");
    let simulated = lock_dir("driver=rxsim");
    let mut out = machine.as_ref().map(|d| held_in(d)).unwrap_or_default();
    if let Ok(sim) = simulated.as_ref() {
        if machine.as_ref().ok() != Some(sim) {
            out.extend(held_in(sim));
            out.sort_by(|a, b| a.identity.cmp(&b.identity));
        }
    }
    out
}

fn held_in(dir: &Path) -> Vec<HeldRadio> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<HeldRadio> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "lock"))
        .filter_map(|lock_path| held(&lock_path, &lock_path.with_extension("json")))
        .collect();
    out.sort_by(|a, b| a.identity.cmp(&b.identity));
    out
}

/// The holder of a lock file that is locked now (a free one has none).
fn held(lock_path: &std::path::Path, holder_path: &std::path::Path) -> Option<HeldRadio> {
    let file =
        rxnode_dsp::open_regular_write(lock_path, rxnode_dsp::WriteMode::Existing, false).ok()?;
    match file.try_lock() {
        // Free: taking it for this instant changes nothing; it goes with `file`.
        Ok(()) => None,
        Err(_) => read_record(holder_path),
    }
}

fn read_record(p: &std::path::Path) -> Option<HeldRadio> {
    crate::store::fsutil::read(p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

fn read_holder(p: &std::path::Path) -> Option<Holder> {
    read_record(p).map(|r| r.holder)
}

/// The lock file and holder file of an identity: a readable, file-name-safe
/// form of it plus a short hash, so different identities never share a file.
fn files(dir: &Path, identity: &str) -> (PathBuf, PathBuf) {
    let readable: String = identity
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let hash = Sha256::digest(identity.as_bytes());
    let short: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let stem = format!("{readable}-{short}");
    (
        dir.join(format!("{stem}.lock")),
        dir.join(format!("{stem}.json")),
    )
}

/// The identity of the physical unit `device` opens: SoapySDR's enumeration of
/// the args ([`rxnode_hw::resolve_unit`]) gives the unit's driver and the keys
/// that pick it (serial, …; [`unit_identity`]); with no match, the args' own
/// [`identity`] — except for args that reach a SoapyRemote server
/// ([`reaches_server`]): a server that does not answer now may answer a moment
/// later, when the radio is opened, and the args name the server, not the radio
/// it serves (the lock a capture on that radio holds directly). Such a radio is
/// an error: it is never opened under a name that is not its own.
pub(crate) fn resolve(device: &str) -> Result<String> {
    let why = match rxnode_hw::resolve_unit(device) {
        Ok(Some(unit)) => return Ok(unit_identity(&unit)),
        Ok(None) => {
            "enumerating them found no radio: the server is down or offers no such radio".to_owned()
        }
        Err(e) => {
            tracing::debug!("cannot enumerate {device}: {e}");
            e.to_string()
        }
    };
    if reaches_server(device) {
        return Err(anyhow::Error::new(RadioUnnamed {
            device: device.to_owned(),
            why,
        }));
    }
    Ok(identity(device))
}

/// Whether SoapySDR device args reach a SoapyRemote server: `driver=remote`, a
/// `remote` key (the server's address) or a `remote:` key (what the server is
/// asked for), in any letter case.
fn reaches_server(device: &str) -> bool {
    device.split(',').any(|part| match part.split_once('=') {
        Some((k, v)) => {
            let k = k.trim();
            k.eq_ignore_ascii_case("remote")
                || k.get(..7)
                    .is_some_and(|p| p.eq_ignore_ascii_case("remote:"))
                || (k.eq_ignore_ascii_case("driver") && v.trim().eq_ignore_ascii_case("remote"))
        }
        None => false,
    })
}

/// Two of `devices` that open one physical radio (their [`resolve`]d identities
/// are equal), as a sentence naming both args and the radio; `None` when each
/// names its own. One process cannot lock a radio twice: without this check it
/// would wait for itself and blame "another rxnode" with its own PID.
pub(crate) fn same_radio_twice(devices: &[String], roles: &[&str]) -> Option<String> {
    // A radio that cannot be named is refused when its lock is taken.
    let ids: Vec<String> = devices
        .iter()
        .map(|d| resolve(d).unwrap_or_else(|_| identity(d)))
        .collect();
    for (j, b) in ids.iter().enumerate() {
        if let Some(i) = ids[..j].iter().position(|a| a == b) {
            let role = |k: usize| roles.get(k).copied().unwrap_or("radio");
            return Some(format!(
                "{} {:?} and {} {:?} are the same radio ({b}): give two different radios",
                role(i),
                devices[i],
                role(j),
                devices[j]
            ));
        }
    }
    None
}

/// The identity of an enumerated unit: `driver` and its unit keys, sorted.
///
/// A unit a SoapyRemote server offers (`driver=remote`, `remote=URL`,
/// `remote:driver=D`) is the unit as its server names it: `driver=D` and its
/// unit keys, without the server. The same radio reached directly and through
/// a server on this machine (`tcp://127.0.0.1:…`, its own address or name), or
/// through two spellings of one server, is then one lock, as it is one radio;
/// two radios on two hosts that share a driver and a serial share a lock too
/// (one waits for the other, then is refused): the side that never opens a
/// radio in use.
fn unit_identity(unit: &BTreeMap<String, String>) -> String {
    let is_remote = unit
        .get("driver")
        .is_some_and(|d| d.trim().eq_ignore_ascii_case("remote"));
    let served_as = unit
        .get("remote:driver")
        .map(|d| d.trim())
        .filter(|d| is_remote && !d.is_empty());
    let driver = served_as.or_else(|| unit.get("driver").map(|d| d.trim()));
    let mut parts: Vec<String> = Vec::new();
    if let Some(d) = driver {
        parts.push(format!("driver={}", d.to_ascii_lowercase()));
    }
    let mut keys: Vec<String> = unit
        .iter()
        .filter(|(k, v)| k.as_str() != "label" && UNIT_KEYS.contains(&k.as_str()) && !v.is_empty())
        .filter(|(k, _)| served_as.is_none() || k.as_str() != "remote")
        .map(|(k, v)| format!("{k}={}", v.trim()))
        .collect();
    keys.sort();
    parts.extend(keys);
    if parts.is_empty() {
        "any".to_owned()
    } else {
        parts.join(",")
    }
}

/// The one folder of this machine (per user) where radio locks live, created
/// private (0700 on unix) at first use: `/run/lock/rxnode-<uid>/radio-locks`,
/// else `/tmp/rxnode-<uid>/radio-locks`
/// (unix, [`unix_base_dir`]); `<FOLDERID_LocalAppData>\rxnode\radio-locks`,
/// else `<temp>\rxnode\radio-locks` (Windows: created with an owner-only DACL). A
/// folder that is a link (on Windows any reparse point), not a folder, or not this
/// user's (unix: its uid; Windows: its owner SID) is refused, never used.
///
/// [`LOCK_DIR_ENV`] moves it only for simulated radios ([`is_simulated`]): a
/// variable left exported in one shell must never split the lock of a real
/// radio, or a RED tone from that shell would key a radio another rxnode is
/// receiving on.
pub(crate) fn lock_dir(identity: &str) -> Result<PathBuf> {
    let base = base_dir(lock_dir_var(identity, std::env::var_os(LOCK_DIR_ENV)));
    make_private_dir(&base)?;
    let dir = base.join("radio-locks");
    make_private_dir(&dir)?;
    Ok(dir)
}

/// Environment variable that names the lock folder's parent of *simulated*
/// radios outright (an absolute folder): for test suites that run many rxnodes
/// at once, each with rxsim units of the same names. Real radios ignore it.
pub(crate) const LOCK_DIR_ENV: &str = "RXNODE_RADIO_LOCK_DIR";

/// The value of [`LOCK_DIR_ENV`] that counts for the radio `identity`: none
/// unless it is a simulated radio.
fn lock_dir_var(identity: &str, var: Option<std::ffi::OsString>) -> Option<std::ffi::OsString> {
    var.filter(|_| is_simulated(identity))
}

/// Whether a radio identity is one of rxsim's simulated units (directly or
/// as a SoapyRemote server names it): the only radios whose locks
/// [`LOCK_DIR_ENV`] may move.
fn is_simulated(identity: &str) -> bool {
    identity == "driver=rxsim" || identity.starts_with("driver=rxsim,")
}

#[cfg(unix)]
fn base_dir(explicit: Option<std::ffi::OsString>) -> PathBuf {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    unix_base_dir(explicit, uid, |d| {
        use std::os::unix::fs::MetadataExt;
        // The machine's lock folder: root's, sticky (no one removes another's files).
        std::fs::symlink_metadata(d)
            .is_ok_and(|m| m.is_dir() && m.uid() == 0 && m.mode() & 0o1000 != 0)
    })
}

/// The lock folder's parent for user `uid`: `$RXNODE_RADIO_LOCK_DIR` when it is
/// set (an absolute folder); else `/run/lock/rxnode-<uid>` in the machine's lock
/// folder when it is there (root's and sticky: Debian, Ubuntu, every systemd
/// machine); else `/tmp/rxnode-<uid>`. Nothing that depends on the login
/// session — `XDG_RUNTIME_DIR` and `/run/user/<uid>` come and go with logins
/// (a watcher left in tmux after logout, the operator's next SSH shell, cron,
/// the service) — nor on `$TMPDIR`: shells that disagree would lock one radio
/// in two folders, and each would open it.
#[cfg(unix)]
fn unix_base_dir(
    explicit: Option<std::ffi::OsString>,
    uid: u32,
    machine_lock_dir: impl Fn(&Path) -> bool,
) -> PathBuf {
    if let Some(d) = explicit.map(PathBuf::from).filter(|p| p.is_absolute()) {
        return d.join("rxnode");
    }
    let run_lock = Path::new("/run/lock");
    if machine_lock_dir(run_lock) {
        return run_lock.join(format!("rxnode-{uid}"));
    }
    PathBuf::from(format!("/tmp/rxnode-{uid}"))
}

/// `%RXNODE_RADIO_LOCK_DIR%` when it is set (test suites); else the user's local
/// application data folder as Windows knows it (`FOLDERID_LocalAppData`),
/// whatever `%LOCALAPPDATA%` or `%TMP%` a shell has: two shells of one user always
/// lock a radio in one folder. The variable, then the temp folder, only when
/// Windows cannot say.
#[cfg(windows)]
fn base_dir(explicit: Option<std::ffi::OsString>) -> PathBuf {
    if let Some(d) = explicit.map(PathBuf::from).filter(|p| p.is_absolute()) {
        return d.join("rxnode");
    }
    known_local_app_data()
        .or_else(|| {
            std::env::var_os("LOCALAPPDATA")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("rxnode")
}

/// `SHGetKnownFolderPath(FOLDERID_LocalAppData)`, `None` when it fails.
#[cfg(windows)]
fn known_local_app_data() -> Option<PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::Com::CoTaskMemFree;
    use windows_sys::Win32::UI::Shell::{FOLDERID_LocalAppData, SHGetKnownFolderPath};
    let mut path: windows_sys::core::PWSTR = std::ptr::null_mut();
    // SAFETY: a valid GUID, no flags, the current user (null token), and an out
    // pointer that receives a string the shell allocates (freed below).
    let hr =
        unsafe { SHGetKnownFolderPath(&FOLDERID_LocalAppData, 0, std::ptr::null_mut(), &mut path) };
    let found = if hr >= 0 && !path.is_null() {
        // SAFETY: on success `path` is a NUL-terminated UTF-16 string.
        let len = (0..).take_while(|&i| unsafe { *path.add(i) } != 0).count();
        // SAFETY: `len` units before the NUL were read just above.
        let units = unsafe { std::slice::from_raw_parts(path, len) };
        Some(PathBuf::from(std::ffi::OsString::from_wide(units)))
    } else {
        None
    };
    // SAFETY: `path` came from SHGetKnownFolderPath (null is allowed), freed once.
    unsafe { CoTaskMemFree(path.cast()) };
    found.filter(|p| p.is_absolute())
}

#[cfg(not(any(unix, windows)))]
fn base_dir(_explicit: Option<std::ffi::OsString>) -> PathBuf {
    std::env::temp_dir().join("rxnode")
}

fn make_private_dir(d: &Path) -> Result<()> {
    #[cfg(unix)]
    let made = {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(d)
    };
    // Windows: a protected owner-only DACL, as mode 700 (winsec::set_owner_only).
    #[cfg(windows)]
    let made = std::fs::create_dir(d).and_then(|()| crate::store::winsec::set_owner_only(d, true));
    #[cfg(not(any(unix, windows)))]
    let made = std::fs::create_dir(d);
    match made {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot create the radio lock folder {}", d.display()))
        }
    }
    let md = std::fs::symlink_metadata(d)
        .with_context(|| format!("cannot inspect the radio lock folder {}", d.display()))?;
    let refuse = |why: String| {
        crate::exit::refused(format!(
            "radio lock folder {} {why}: no radio can be locked — fix: remove it \
             (docs/operator.md#one-process-per-radio)",
            d.display()
        ))
    };
    if crate::store::fsutil::is_link(&md) || !md.is_dir() {
        return Err(refuse("is not a folder (a symlink?)".to_owned()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if md.uid() != me {
            return Err(refuse(format!(
                "is owned by uid {}, not by this user (uid {me})",
                md.uid()
            )));
        }
    }
    // Windows: the owner SID (SYSTEM and Administrators can take any folder anyway).
    #[cfg(windows)]
    match crate::store::winsec::access(d) {
        Ok(a) => {
            if let Some(owner) = a.foreign_owner {
                return Err(refuse(format!("is owned by {owner}, not by this user")));
            }
        }
        Err(e) => return Err(refuse(format!("has an owner that cannot be read ({e})"))),
    }
    Ok(())
}

/// The radio's identity from SoapySDR device args: `driver` and the keys that
/// pick one unit, lower-case keys, sorted; the whole args when they are not
/// `key=value` pairs.
pub(crate) fn identity(device: &str) -> String {
    let mut driver = None;
    let mut unit = Vec::new();
    let mut plain = Vec::new();
    for part in device.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some((k, v)) => {
                let k = k.trim().to_ascii_lowercase();
                let v = v.trim();
                if k == "driver" {
                    driver = Some(v.to_ascii_lowercase());
                } else if UNIT_KEYS.contains(&k.as_str()) {
                    unit.push(format!("{k}={v}"));
                }
            }
            None => plain.push(part.to_owned()),
        }
    }
    unit.sort();
    let mut out: Vec<String> = Vec::new();
    if let Some(d) = driver {
        out.push(format!("driver={d}"));
    }
    out.extend(unit);
    out.extend(plain);
    if out.is_empty() {
        // No args: SoapySDR opens the first radio it finds — any radio.
        "any".to_owned()
    } else {
        out.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_lock_folder_never_follows_tmpdir() {
        let tmp = tempfile::tempdir().unwrap();
        let set = Some(tmp.path().as_os_str().to_owned());
        assert_eq!(
            unix_base_dir(set, 1000, |_| true),
            tmp.path().join("rxnode")
        );
        // Without it: the machine's lock folder, the same for every session…
        assert_eq!(
            unix_base_dir(None, 1000, |d| d == Path::new("/run/lock")),
            PathBuf::from("/run/lock/rxnode-1000")
        );
        // …else one fixed folder under /tmp, whatever TMPDIR says.
        assert_eq!(
            unix_base_dir(None, 1000, |_| false),
            PathBuf::from("/tmp/rxnode-1000")
        );
        // A relative value counts as unset.
        assert_eq!(
            unix_base_dir(Some("rel".into()), 7, |_| false),
            PathBuf::from("/tmp/rxnode-7")
        );
    }

    /// A lock-folder variable left exported in one shell must not split a real
    /// radio's lock from the one every other rxnode takes: only simulated
    /// radios (rxsim, directly or as a server names it) follow it.
    #[test]
    fn the_lock_folder_variable_moves_only_simulated_radios() {
        let var = || Some(std::ffi::OsString::from("/tmp/suite"));
        for real in [
            "driver=hackrf,serial=0000000000000000a06063c8234e925f",
            "driver=uhd,serial=30AD2F2",
            "driver=rtlsdr",
            "driver=rxsimx,serial=A",
            "any",
        ] {
            assert_eq!(lock_dir_var(real, var()), None, "{real}");
        }
        for sim in ["driver=rxsim", "driver=rxsim,serial=B"] {
            assert_eq!(lock_dir_var(sim, var()), var(), "{sim}");
        }
        // A radio served by SoapyRemote is named as its own driver names it.
        let served: BTreeMap<String, String> = [
            ("driver", "remote"),
            ("remote", "tcp://127.0.0.1:55132"),
            ("remote:driver", "rxsim"),
            ("serial", "C"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(lock_dir_var(&unit_identity(&served), var()), var());
        assert_eq!(lock_dir_var("driver=rxsim", None), None);
    }

    #[test]
    fn identity_keeps_what_picks_a_unit_in_one_order() {
        assert_eq!(
            identity("serial=ABC, driver=HackRF"),
            identity("driver=hackrf,serial=ABC")
        );
        assert_eq!(
            identity("driver=rxsim,tone_hz=100.1e6,ppm=3"),
            "driver=rxsim"
        );
        assert_ne!(
            identity("driver=hackrf,serial=A"),
            identity("driver=hackrf,serial=B")
        );
        assert_eq!(identity(""), "any");
    }

    #[test]
    fn an_enumerated_unit_is_its_driver_and_unit_keys() {
        let unit: BTreeMap<String, String> = [
            ("driver", "rxsim"),
            ("serial", "B"),
            ("label", "rxsim simulated radio :: B"),
            ("tone_hz", "1e6"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(unit_identity(&unit), "driver=rxsim,serial=B");
        let mut remote = unit.clone();
        remote.insert("remote".into(), "tcp://10.0.0.5:55132".into());
        assert_eq!(
            unit_identity(&remote),
            "driver=rxsim,remote=tcp://10.0.0.5:55132,serial=B"
        );
    }

    #[test]
    fn a_radio_served_by_soapyremote_locks_as_the_radio_itself() {
        let unit = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        // As SoapyRemote's client enumerates a server's unit, and as the radio's
        // own driver enumerates it on the server's machine.
        let direct = unit(&[
            ("driver", "rxsim"),
            ("serial", "B"),
            ("label", "rxsim simulated radio :: B"),
        ]);
        let served = |url: &str| {
            unit(&[
                ("driver", "remote"),
                ("remote", url),
                ("remote:driver", "rxsim"),
                ("serial", "B"),
                ("label", "rxsim simulated radio :: B"),
            ])
        };
        assert_eq!(unit_identity(&direct), "driver=rxsim,serial=B");
        assert_eq!(
            unit_identity(&served("tcp://127.0.0.1:55132")),
            unit_identity(&direct)
        );
        assert_eq!(
            unit_identity(&served("tcp://localhost:55132")),
            unit_identity(&served("tcp://[::1]:55132"))
        );
        // Another unit behind the same server is another radio.
        let mut other = served("tcp://127.0.0.1:55132");
        other.insert("serial".into(), "C".into());
        assert_ne!(unit_identity(&other), unit_identity(&direct));
        // A server that does not name the unit's own driver: the server stays in it.
        let mut unnamed = served("tcp://10.0.0.5:55132");
        unnamed.remove("remote:driver");
        assert_eq!(
            unit_identity(&unnamed),
            "driver=remote,remote=tcp://10.0.0.5:55132,serial=B"
        );
        // Two args that reach one radio directly and through a local server are
        // one lock: the second holder waits, then is refused.
        let d = tempfile::tempdir().unwrap();
        let id = unit_identity(&direct);
        let _held =
            RadioLock::acquire_in(d.path(), &id, "driver=rxsim,serial=B", "capture", WAIT).unwrap();
        let via = unit_identity(&served("tcp://127.0.0.1:55132"));
        let err = RadioLock::acquire_in(
            d.path(),
            &via,
            "driver=remote,remote=tcp://127.0.0.1:55132,remote:driver=rxsim,serial=B",
            "run T1 step 1",
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(err.downcast_ref::<RadioBusy>().is_some(), "{err:#}");
    }

    const A: &str = "driver=rxsim,serial=1";

    #[test]
    fn a_remote_radio_whose_server_does_not_answer_is_refused_not_locked_under_its_args() {
        // A loopback port nothing listens on: the server is down.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        for args in [
            format!("driver=remote,remote=tcp://127.0.0.1:{port},remote:driver=rxsim,serial=B"),
            format!("remote=tcp://127.0.0.1:{port},serial=B"),
            format!("Driver=Remote, REMOTE = tcp://127.0.0.1:{port} ,serial=B"),
        ] {
            // Before: the args' own identity, server included — not the lock the
            // radio takes when opened directly (driver=rxsim,serial=B).
            let err = resolve(&args).expect_err(&args);
            let unnamed = err.downcast_ref::<RadioUnnamed>().expect("a RadioUnnamed");
            assert_eq!(unnamed.device, args);
            let text = err.to_string();
            assert!(
                text.contains("did not say which radio") && text.contains("fix:"),
                "{text}"
            );
        }
        // Every spelling that reaches a server, and none that does not.
        for args in [
            "driver=remote,serial=B",
            "remote=tcp://h:1",
            "remote:driver=rxsim,serial=B",
            "serial=B,Remote:Timeout=100",
        ] {
            assert!(reaches_server(args), "{args}");
        }
        for args in [
            "driver=rxsim,serial=B",
            "serial=remote",
            "driver=remotex",
            "",
        ] {
            assert!(!reaches_server(args), "{args}");
        }
        // Local args that match nothing still name the radio by themselves.
        assert_eq!(
            resolve("driver=nosuchdriver,serial=B").unwrap(),
            "driver=nosuchdriver,serial=B"
        );
    }

    #[test]
    fn a_held_radio_is_refused_naming_the_holder_and_free_after_drop() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        let held = RadioLock::acquire_in(dir, A, "driver=rxsim,serial=1", "capture", WAIT).unwrap();
        let err = RadioLock::acquire_in(
            dir,
            A,
            "serial=1,tone_hz=5",
            "sweep",
            Duration::from_millis(200),
        )
        .unwrap_err();
        let busy = err.downcast_ref::<RadioBusy>().unwrap();
        assert_eq!(busy.holder.as_ref(), Some(held.holder()));
        let text = format!("{err:#}");
        assert!(
            text.contains(&format!("PID {}", std::process::id()))
                && text.contains("capture")
                && text.contains("serial=1,tone_hz=5 (driver=rxsim,serial=1)"),
            "{text}"
        );
        assert_eq!(holder_of(dir, A).as_ref(), Some(held.holder()));
        // Another unit of the same driver is free.
        let b = "driver=rxsim,serial=2";
        let _other = RadioLock::acquire_in(dir, b, b, "sweep", Duration::ZERO).unwrap();
        let listed = held_in(dir);
        assert_eq!(
            listed
                .iter()
                .map(|h| h.identity.as_str())
                .collect::<Vec<_>>(),
            [A, b]
        );
        drop(held);
        assert!(holder_of(dir, A).is_none());
        assert_eq!(held_in(dir).len(), 1);
        let _again = RadioLock::acquire_in(dir, A, A, "run T1", Duration::ZERO).unwrap();
    }

    #[test]
    fn a_radio_freed_while_waiting_is_taken() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().to_path_buf();
        let held =
            RadioLock::acquire_in(&dir, "driver=rxsim", "driver=rxsim", "capture", WAIT).unwrap();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let got = RadioLock::acquire_in(
            &dir,
            "driver=rxsim",
            "driver=rxsim",
            "sweep",
            Duration::from_secs(5),
        );
        t.join().unwrap();
        assert_eq!(got.unwrap().holder().command, "sweep");
    }
}
