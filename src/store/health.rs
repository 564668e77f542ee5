//! `.local/rxnode-health.json`: what this node knows about the health of each
//! radio (docs/protocol.md#8-radio-health).
//!
//! One record per radio identity ([`identity`]): `GOOD`, `BAD` or `UNTESTED`,
//! since when, the last self-test (time, outcome, reason) and the reason of the
//! current health. A radio that failed a self-test, or whose stream stalled or
//! failed during a run, is `BAD` until a passing self-test makes it `GOOD` again;
//! a radio never tested is `UNTESTED` (and not blocked). Every change of health is
//! a ledger line (`radio_health`), every self-test one too (`self_test`).
//!
//! The file is read-modify-written under an exclusive OS lock on
//! `.local/rxnode-health.lock` (the watcher, `rxnode run` and `rxnode health test`
//! may record at the same time), replaced atomically, and checked ignored by Git
//! before it is created, sealed with the node key (`crate::store::sealed`: a health
//! this node did not record — planted through Git, copied, edited — is refused, never
//! used). A damaged file is an error naming it, never silently reset (a lost `BAD`
//! would let runs reach a broken radio).
use crate::store::fsutil::now_iso;
use crate::store::ledger::{self, Entry, Event as LedgerEvent};
use crate::store::paths::Paths;
use anyhow::Result;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Current schema of the health file.
pub(crate) const HEALTH_SCHEMA: u32 = 1;

/// The health file, sealed with the node key (a lab has a handful of radios).
const SEALED: crate::store::sealed::Sealed = crate::store::sealed::Sealed {
    kind: "radio-health",
    what: "radio health file",
    fix: "move it aside (e.g. `mv .local/rxnode-health.json .local/rxnode-health.json.untrusted`) \
          and run `rxnode health test` for each radio",
    max_bytes: 1 << 20,
};

/// The health of one radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Health {
    /// The last self-test passed and nothing failed since.
    Good,
    /// A self-test failed, or the radio failed during a run (stalled stream,
    /// open or read error): runs that need it end BLOCKED until a self-test passes.
    Bad,
    /// Never tested on this node: runs are not blocked.
    Untested,
}

impl Health {
    /// The protocol spelling: `GOOD`, `BAD`, `UNTESTED`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Health::Good => "GOOD",
            Health::Bad => "BAD",
            Health::Untested => "UNTESTED",
        }
    }
}

impl std::fmt::Display for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of one self-test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct SelfTestRecord {
    /// When it ended (ISO 8601 with offset).
    pub(crate) at: String,
    /// `PASS` or `FAIL`.
    pub(crate) outcome: String,
    /// One line: what failed, or what was measured when it passed.
    pub(crate) reason: String,
}

/// What is known about one radio.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct RadioHealth {
    /// The radio's identity: its driver and the keys that pick one unit, sorted
    /// (`driver=hackrf,serial=7`).
    pub(crate) identity: String,
    /// The device args it was last opened or tested with.
    pub(crate) device_args: String,
    /// `GOOD`, `BAD` or `UNTESTED`.
    pub(crate) health: Health,
    /// Since when it has had this health (ISO 8601 with offset).
    pub(crate) since: String,
    /// Why it has this health (the failure that made it BAD; the passing test that
    /// made it GOOD).
    pub(crate) reason: String,
    /// The last self-test, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_self_test: Option<SelfTestRecord>,
}

/// The whole health file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthFile {
    /// Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub(crate) schema_version: u32,
    /// Records by identity.
    pub(crate) radios: BTreeMap<String, RadioHealth>,
}

impl Default for HealthFile {
    fn default() -> Self {
        HealthFile {
            schema_version: HEALTH_SCHEMA,
            radios: BTreeMap::new(),
        }
    }
}

/// What happened to a radio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// A self-test ran: passed (`ok`) or failed, with one line saying why.
    SelfTest {
        /// Whether it passed.
        ok: bool,
        /// What was measured or what failed.
        reason: String,
    },
    /// The radio failed while a task or command used it (stalled stream,
    /// open or read error): it becomes `BAD` and is re-tested.
    RadioError {
        /// What failed, naming the step or command.
        reason: String,
    },
}

/// The identity of a radio from its device args: the one the per-radio lock uses
/// ([`crate::store::radio_lock::identity`]) — the driver and the keys that pick
/// one unit (`serial`, `addr`, `uri`, `remote` …), sorted — so `serial=7,
/// driver=hackrf` and `driver=hackrf,serial=7,gain=3` are one radio, and a radio
/// reached over SoapyRemote is identified by its server (docs/protocol.md#8-radio-health).
pub(crate) fn identity(args: &str) -> String {
    crate::store::radio_lock::identity(args)
}

/// `.local/rxnode-health.json`.
pub(crate) fn path(paths: &Paths) -> std::path::PathBuf {
    paths.local.join("rxnode-health.json")
}

/// `.local/rxnode-health.lock`.
fn lock_path(paths: &Paths) -> std::path::PathBuf {
    paths.local.join("rxnode-health.lock")
}

/// The JSON Schema of `.local/rxnode-health.json` (`rxnode schema health`).
pub(crate) fn schema() -> serde_json::Value {
    SEALED.schema::<HealthFile>()
}

/// Read the health file; a missing file is an empty one (every radio `UNTESTED`).
/// A link, a folder, an oversized or unreadable file is an error naming it.
pub(crate) fn load(paths: &Paths) -> Result<HealthFile> {
    let p = path(paths);
    let Some(f) = SEALED.read::<HealthFile>(paths, &p)? else {
        return Ok(HealthFile::default());
    };
    if f.schema_version != HEALTH_SCHEMA {
        return Err(crate::exit::refused(format!(
            "radio health file {}: schema_version {} is not {HEALTH_SCHEMA}",
            p.display(),
            f.schema_version
        )));
    }
    Ok(f)
}

/// Every radio this node has a health record of, in identity order.
pub(crate) fn read_all(paths: &Paths) -> Result<Vec<RadioHealth>> {
    Ok(load(paths)?.radios.into_values().collect())
}

/// The record of the radio these args name, if it has one (`None`: `UNTESTED`).
pub(crate) fn lookup(paths: &Paths, device_args: &str) -> Result<Option<RadioHealth>> {
    Ok(load(paths)?.radios.remove(&identity(device_args)))
}

/// Record what happened to the radio `device_args` names and return its new
/// record. A passing self-test makes it `GOOD`, a failing one or a radio error
/// `BAD`. A change of health is a `radio_health` ledger line, a self-test a
/// `self_test` one. Under the health lock; the file is checked ignored by Git
/// before it is created.
pub(crate) fn record(paths: &Paths, device_args: &str, event: &Event) -> Result<RadioHealth> {
    let _guard = lock(paths)?;
    let mut file = load(paths)?;
    let now = now_iso();
    let id = identity(device_args);
    let old = file.radios.get(&id).cloned();
    let old_health = old.as_ref().map_or(Health::Untested, |r| r.health);
    let (new_health, reason) = match event {
        Event::SelfTest { ok: true, reason } => (Health::Good, reason.clone()),
        Event::SelfTest { ok: false, reason } | Event::RadioError { reason } => {
            (Health::Bad, reason.clone())
        }
    };
    let mut rec = old.unwrap_or_else(|| RadioHealth {
        identity: id.clone(),
        device_args: device_args.to_owned(),
        health: Health::Untested,
        since: now.clone(),
        reason: "never tested".to_owned(),
        last_self_test: None,
    });
    rec.device_args = device_args.to_owned();
    if let Event::SelfTest { ok, reason } = event {
        rec.last_self_test = Some(SelfTestRecord {
            at: now.clone(),
            outcome: if *ok { "PASS" } else { "FAIL" }.to_owned(),
            reason: reason.clone(),
        });
    }
    if new_health != old_health {
        rec.since = now.clone();
        rec.reason = reason.clone();
    } else if new_health == Health::Bad {
        // Still BAD: keep when it was found, say the latest failure.
        rec.reason = reason.clone();
    }
    rec.health = new_health;
    file.radios.insert(id.clone(), rec.clone());
    SEALED.write(paths, &path(paths), &file)?;
    if let Event::SelfTest { ok, reason } = event {
        let e = Entry::new(LedgerEvent::SelfTest {
            radio: id.to_owned(),
            device_args: device_args.to_owned(),
            outcome: if *ok { "PASS" } else { "FAIL" }.to_owned(),
            reason: reason.to_owned(),
        });
        ledger::append(paths, &e)?;
    }
    if new_health != old_health {
        let e = Entry::new(LedgerEvent::RadioHealth {
            radio: id.to_owned(),
            device_args: device_args.to_owned(),
            from: old_health.as_str().to_owned(),
            to: new_health.as_str().to_owned(),
            reason: reason.to_owned(),
        });
        ledger::append(paths, &e)?;
    }
    Ok(rec)
}

/// Take the health lock after checking that Git ignores the lock, the file and
/// its temporary file (a refusal writes nothing).
fn lock(paths: &Paths) -> Result<std::fs::File> {
    crate::store::trust::lock_local_file(paths, &lock_path(paths), &path(paths))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> (tempfile::TempDir, Paths) {
        let d = tempfile::tempdir().unwrap();
        git2::Repository::init(d.path()).unwrap();
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n").unwrap();
        let paths = Paths::new(d.path());
        (d, paths)
    }

    #[test]
    fn identity_is_the_driver_and_the_unit_keys() {
        assert_eq!(
            identity("serial=0042, driver=hackrf ,gain=3"),
            "driver=hackrf,serial=0042"
        );
        assert_eq!(identity("driver=rxsim,rx_stall_after_s=1"), "driver=rxsim");
        // Over SoapyRemote the server is part of the identity.
        assert_eq!(
            identity("driver=remote,remote=tcp://h:1,serial=7"),
            "driver=remote,remote=tcp://h:1,serial=7"
        );
    }

    #[test]
    fn a_radio_is_untested_until_tested_then_bad_until_a_test_passes() {
        let (_d, paths) = node();
        assert!(lookup(&paths, "driver=rxsim").unwrap().is_none());
        let r = record(
            &paths,
            "driver=rxsim",
            &Event::RadioError {
                reason: "stream stalled at sample 100".into(),
            },
        )
        .unwrap();
        assert_eq!(r.health, Health::Bad);
        let since = r.since.clone();
        // A failing self-test keeps it BAD and keeps when it was found.
        let r = record(
            &paths,
            "driver=rxsim",
            &Event::SelfTest {
                ok: false,
                reason: "0 samples received".into(),
            },
        )
        .unwrap();
        assert_eq!((r.health, r.since.as_str()), (Health::Bad, since.as_str()));
        assert_eq!(r.reason, "0 samples received");
        assert_eq!(r.last_self_test.as_ref().unwrap().outcome, "FAIL");
        let r = record(
            &paths,
            "driver=rxsim",
            &Event::SelfTest {
                ok: true,
                reason: "4096 samples".into(),
            },
        )
        .unwrap();
        assert_eq!(r.health, Health::Good);
        let all = read_all(&paths).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].health, Health::Good);
        // Each change is a ledger line, each self-test too.
        let lines = ledger::read_all(&paths).unwrap();
        let ev: Vec<_> = lines.iter().map(|l| l.event().to_owned()).collect();
        assert_eq!(
            ev,
            ["radio_health", "self_test", "self_test", "radio_health"]
        );
        assert_eq!(lines[3].detail_str("from"), Some("BAD"));
        assert_eq!(lines[3].detail_str("to"), Some("GOOD"));
    }

    #[test]
    fn a_damaged_file_is_an_error_and_is_not_overwritten() {
        let (_d, paths) = node();
        std::fs::create_dir_all(&paths.local).unwrap();
        std::fs::write(path(&paths), "{").unwrap();
        let e = format!("{:#}", read_all(&paths).unwrap_err());
        assert!(e.contains("rxnode-health.json"), "{e}");
        let r = record(
            &paths,
            "driver=rxsim",
            &Event::SelfTest {
                ok: true,
                reason: "x".into(),
            },
        );
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(path(&paths)).unwrap(), "{");
    }

    #[test]
    fn a_health_file_git_would_see_is_never_created() {
        let (d, paths) = node();
        std::fs::write(d.path().join(".gitignore"), "!/.local/\n!/.local/**\n").unwrap();
        let e = record(
            &paths,
            "driver=rxsim",
            &Event::SelfTest {
                ok: true,
                reason: "x".into(),
            },
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("untrusted node-local files"),
            "{e:#}"
        );
        assert!(!path(&paths).exists());
    }
}
