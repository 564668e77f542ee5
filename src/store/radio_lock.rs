//! `.local/radio-locks/`: one rxnode process per radio (docs/operator.md#one-process-per-radio).
//!
//! Before a command opens a radio (`capture`, `sweep`, a step of `run`) it takes
//! an advisory lock named after the radio's identity: the OS's own file lock
//! (`std::fs::File::try_lock`, on every platform), which the kernel drops when
//! the process ends however it ends, so a lock can never go stale. Beside it a
//! small JSON file says who holds it (PID, host, command, since), so a second
//! process can name the holder. A held radio is waited for briefly
//! ([`WAIT`]), then refused naming the holder ([`RadioBusy`]).
//!
//! The identity is taken from the SoapySDR device args: the driver and the keys
//! that pick one unit (`serial`, `addr`, `uri`, `device_id`, `remote`, …), in a
//! fixed order and case. Args that name no unit (`driver=hackrf`) lock every
//! radio of that driver on this node — SoapySDR opens the first one it finds.
//! Settings that do not pick a unit (`tone_hz=…`, `buffers=…`) are ignored.
use crate::store::lock::Holder;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a command waits for a radio another rxnode holds before refusing.
pub(crate) const WAIT: Duration = Duration::from_secs(3);

/// The SoapySDR argument keys that pick one unit of a driver.
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
            "radio {} is in use by {who}; waited {:.0} s",
            self.device,
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
        let identity = identity(device);
        let (lock_path, holder_path) = files(paths, &identity);
        let dir = paths.local.join("radio-locks");
        let tmp = crate::store::fsutil::atomic_tmp(&holder_path);
        // Nothing is created before the trust root is checked and each file is
        // known to be ignored by Git.
        crate::store::trust::prepare(paths)?;
        crate::store::trust::check_created(
            paths,
            &[dir.clone(), lock_path.clone(), holder_path.clone(), tmp],
        )?;
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    if start.elapsed() >= wait {
                        return Err(anyhow::Error::new(RadioBusy {
                            device: device.to_owned(),
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
            identity,
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

/// Who holds the radio `device` now, if anyone (read-only: no file is created).
#[cfg(test)]
pub(crate) fn holder_of(paths: &Paths, device: &str) -> Option<Holder> {
    let (lock_path, holder_path) = files(paths, &identity(device));
    held(&lock_path, &holder_path).map(|h| h.holder)
}

/// Every radio some rxnode holds now, by identity (for `status`); read-only.
pub(crate) fn held_radios(paths: &Paths) -> Vec<HeldRadio> {
    let Ok(entries) = std::fs::read_dir(paths.local.join("radio-locks")) else {
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
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(lock_path)
        .ok()?;
    match file.try_lock() {
        // Free: taking it for this instant changes nothing; it goes with `file`.
        Ok(()) => None,
        Err(_) => read_record(holder_path),
    }
}

fn read_record(p: &std::path::Path) -> Option<HeldRadio> {
    std::fs::read(p)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

fn read_holder(p: &std::path::Path) -> Option<Holder> {
    read_record(p).map(|r| r.holder)
}

/// The lock file and holder file of an identity: a readable, file-name-safe
/// form of it plus a short hash, so different identities never share a file.
fn files(paths: &Paths, identity: &str) -> (PathBuf, PathBuf) {
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
    let dir = paths.local.join("radio-locks");
    let stem = format!("{readable}-{short}");
    (
        dir.join(format!("{stem}.lock")),
        dir.join(format!("{stem}.json")),
    )
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
    fn a_held_radio_is_refused_naming_the_holder_and_free_after_drop() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let held = RadioLock::acquire(&paths, "driver=rxsim,serial=1", "capture").unwrap();
        let err = RadioLock::acquire_within(
            &paths,
            "serial=1,driver=rxsim,tone_hz=5",
            "sweep",
            Duration::from_millis(200),
        )
        .unwrap_err();
        let busy = err.downcast_ref::<RadioBusy>().unwrap();
        assert_eq!(busy.holder.as_ref(), Some(held.holder()));
        let text = format!("{err:#}");
        assert!(
            text.contains(&format!("PID {}", std::process::id())) && text.contains("capture"),
            "{text}"
        );
        assert_eq!(
            holder_of(&paths, "driver=rxsim,serial=1").as_ref(),
            Some(held.holder())
        );
        // Another unit of the same driver is free.
        let _other =
            RadioLock::acquire_within(&paths, "driver=rxsim,serial=2", "sweep", Duration::ZERO)
                .unwrap();
        let listed = held_radios(&paths);
        assert_eq!(
            listed
                .iter()
                .map(|h| h.identity.as_str())
                .collect::<Vec<_>>(),
            ["driver=rxsim,serial=1", "driver=rxsim,serial=2"]
        );
        drop(held);
        assert!(holder_of(&paths, "driver=rxsim,serial=1").is_none());
        assert_eq!(held_radios(&paths).len(), 1);
        let _again =
            RadioLock::acquire_within(&paths, "driver=rxsim,serial=1", "run T1", Duration::ZERO)
                .unwrap();
    }

    #[test]
    fn a_radio_freed_while_waiting_is_taken() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::new(d.path());
        let held = RadioLock::acquire(&paths, "driver=rxsim", "capture").unwrap();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let got =
            RadioLock::acquire_within(&paths, "driver=rxsim", "sweep", Duration::from_secs(5));
        t.join().unwrap();
        assert_eq!(got.unwrap().holder().command, "sweep");
    }
}
