//! Node-sealed files: the one reader and writer of every node-owned file that
//! changes what runs or what a result claims — the node's name
//! (`rxnode-node.json`), the radios' calibrations (`calibration.json`) and
//! health (`rxnode-health.json`) (`docs/safety.md#node-sealed-files`).
//!
//! A sealed file is a JSON object of two fields: `sealed`, the content, and
//! `node_mac`, the HMAC-SHA256 under the node key (`crate::store::key`, kept in
//! the Git directory, out of reach of the branch) of the file's kind and of the
//! content's exact bytes as they stand in the file (`rxnode_interlock::file_mac`;
//! nothing is re-encoded before it is checked). The writer seals what it writes;
//! the reader verifies before it parses, so a file the branch planted (no key), one
//! copied from another checkout (another key), one written by an rxnode from
//! before sealing (no MAC) or one edited by hand is refused with its fix — never
//! used, never silently replaced.
use crate::exit::refused;
use crate::store::fsutil::{read_small_regular, write_atomic, write_atomic_new};
use crate::store::key;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// The field that carries the MAC.
pub(crate) const MAC_FIELD: &str = "node_mac";

/// A sealed file as it stands on disk: the content's exact bytes and their MAC.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    node_mac: String,
    #[serde(borrow)]
    sealed: &'a serde_json::value::RawValue,
}

/// What one kind of sealed file is, for its MAC and its messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sealed {
    /// Its role, bound into the MAC (a file never verifies in another's place).
    pub(crate) kind: &'static str,
    /// What the operator calls it (`node file`).
    pub(crate) what: &'static str,
    /// What the operator does about a file that is refused.
    pub(crate) fix: &'static str,
    /// The largest file read.
    pub(crate) max_bytes: u64,
}

impl Sealed {
    /// The file's value, `None` when there is none. A file that is not a
    /// regular file, too big, not a JSON object, carries no MAC or one that does
    /// not verify under this node's key is a refusal naming it and the fix.
    pub(crate) fn read<T: DeserializeOwned>(&self, paths: &Paths, p: &Path) -> Result<Option<T>> {
        let Some(bytes) = read_small_regular(p, self.max_bytes, self.what, Some(self.fix))? else {
            return Ok(None);
        };
        let not_this = |e: String| {
            refused(format!(
                "{}: not a {} ({e}); {}",
                p.display(),
                self.what,
                self.fix
            ))
        };
        let v: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| not_this(e.to_string()))?;
        let Some(obj) = v.as_object() else {
            return Err(not_this("not a JSON object".to_owned()));
        };
        if !obj.get(MAC_FIELD).is_some_and(serde_json::Value::is_string) {
            return Err(self.untrusted(p, "it carries no node MAC"));
        }
        let env: Envelope<'_> =
            serde_json::from_slice(&bytes).map_err(|e| not_this(e.to_string()))?;
        let k = match key::load(paths) {
            Ok(Some(k)) => k,
            Ok(None) => {
                return Err(self.untrusted(p, "this node has no key yet, so it wrote no such file"))
            }
            Err(e) => {
                return Err(refused(format!(
                    "{}: cannot be checked ({e:#}); it is not used",
                    p.display()
                )))
            }
        };
        let body = env.sealed.get();
        if !rxnode_interlock::verify_file_mac(k.bytes(), self.kind, body.as_bytes(), &env.node_mac)
        {
            return Err(self.untrusted(p, "its node MAC does not verify under this node's key"));
        }
        self.check_latest(paths, p, &env.node_mac)?;
        serde_json::from_str(body)
            .map(Some)
            .map_err(|e| not_this(e.to_string()))
    }

    /// Write `value` to `p` sealed with the node key (created at first use),
    /// atomically. The caller has checked that Git ignores `p`.
    pub(crate) fn write<T: Serialize>(&self, paths: &Paths, p: &Path, value: &T) -> Result<()> {
        let k = key::load_or_create(paths)
            .with_context(|| format!("cannot seal {} with the node key", p.display()))?;
        let body = serde_json::to_string_pretty(value)?;
        let mac = rxnode_interlock::file_mac(k.bytes(), self.kind, body.as_bytes())
            .context("the node key has the wrong length")?;
        // The record of the newest version goes first, naming the version in place
        // until the file is replaced: a write that stops between the two leaves the
        // version in place, still used; an older copy is never taken for the newest.
        let latest = self.latest_path(paths)?;
        let in_place = self.mac_in_place(&latest, p);
        let pending = match in_place.as_deref() {
            Some(old) if old != mac => format!("{mac}\n{old}\n"),
            _ => format!("{mac}\n"),
        };
        write_atomic(&latest, pending.as_bytes()).with_context(|| {
            format!(
                "cannot record which {} this node writes last (nothing written to {})",
                self.what,
                p.display()
            )
        })?;
        write_atomic(p, envelope(&mac, &body).as_bytes())?;
        if let Err(e) = write_atomic(&latest, format!("{mac}\n").as_bytes()) {
            tracing::warn!(
                "{} is written, but {} still names the version it replaced: {e:#}",
                p.display(),
                latest.display()
            );
        }
        Ok(())
    }

    /// `<git dir>/rxnode/latest-<kind>`: the MAC of the newest file of this kind
    /// this node wrote — and, while a write of it is under way (or was cut short),
    /// on a second line the MAC of the version it replaces — out of reach of the
    /// work tree, beside the key.
    fn latest_path(&self, paths: &Paths) -> Result<std::path::PathBuf> {
        Ok(key::key_path(paths)?.with_file_name(format!("latest-{}", self.kind)))
    }

    /// The MACs `latest` accepts (one, or two while a write is not complete);
    /// `None` when there is no record. A record that is not one or two MACs fails
    /// closed, naming it.
    fn recorded(&self, latest: &Path, p: &Path) -> Result<Option<Vec<String>>> {
        let Some(rec) = read_small_regular(latest, 256, "record of the newest sealed file", None)?
        else {
            return Ok(None);
        };
        let macs: Vec<String> = String::from_utf8_lossy(&rec)
            .lines()
            .map(str::to_ascii_lowercase)
            .collect();
        let well_formed = |m: &String| m.len() == 64 && m.bytes().all(|b| b.is_ascii_hexdigit());
        if macs.is_empty() || macs.len() > 2 || !macs.iter().all(well_formed) {
            return Err(refused(format!(
                "{}: not a record of the newest {} (one or two lines of 64 hex digits), so {} \
                 cannot be checked and is not used; fix: {}",
                latest.display(),
                self.what,
                p.display(),
                self.fix
            )));
        }
        Ok(Some(macs))
    }

    /// The MAC of the file at `p` when the record accepts it (the version in place
    /// that a write replaces); `None` for anything else.
    fn mac_in_place(&self, latest: &Path, p: &Path) -> Option<String> {
        let accepted = self.recorded(latest, p).ok()??;
        let bytes = read_small_regular(p, self.max_bytes, self.what, None).ok()??;
        let env: Envelope<'_> = serde_json::from_slice(&bytes).ok()?;
        let mac = env.node_mac.to_ascii_lowercase();
        accepted.contains(&mac).then_some(mac)
    }

    /// A file whose MAC verifies is also the newest this node wrote: an older copy
    /// of it (a restored backup, a copy kept from before a change) carries a MAC of
    /// this node's, but not the one recorded. A write cut short between its record
    /// and the file leaves the version it replaced in place, which is still used.
    /// A file sealed before this record existed is taken as the newest once, and
    /// recorded (never replacing a record another process made meanwhile).
    fn check_latest(&self, paths: &Paths, p: &Path, mac: &str) -> Result<()> {
        let latest = self.latest_path(paths)?;
        let Some(accepted) = self.recorded(&latest, p)? else {
            if let Err(e) = write_atomic_new(&latest, format!("{mac}\n").as_bytes()) {
                tracing::warn!(
                    "cannot record {} as the newest {} in {}: {e:#}",
                    p.display(),
                    self.what,
                    latest.display()
                );
            }
            return Ok(());
        };
        if !accepted.contains(&mac.to_ascii_lowercase()) {
            return Err(refused(format!(
                "{} is an older {} of this node's, not the one it wrote last (a restored \
                 backup, or a copy kept from before a change); it is not used — fix: {} \
                 (docs/operator.md#node-sealed-files)",
                p.display(),
                self.what,
                self.fix
            )));
        }
        Ok(())
    }

    /// The JSON Schema of this file holding a `T` (`rxnode schema calibration|health`):
    /// the envelope `{"node_mac": …, "sealed": T}` around `T`'s own schema.
    pub(crate) fn schema<T: schemars::JsonSchema>(&self) -> serde_json::Value {
        let mut inner = schemars::schema_for!(T).to_value();
        let defs = inner.as_object_mut().and_then(|o| {
            o.remove("$schema");
            o.remove("title");
            o.remove("$defs")
        });
        let mut s = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": format!("rxnode {}", self.what),
            "description": format!(
                "A node-sealed file (docs/safety.md#node-sealed-files): the content under \
                 `sealed`, its HMAC-SHA256 under the node key in `{MAC_FIELD}`. To repair a \
                 refused file: {}.",
                self.fix
            ),
            "type": "object",
            "additionalProperties": false,
            "required": [MAC_FIELD, "sealed"],
            "properties": {
                MAC_FIELD: {
                    "description": "HMAC-SHA256 (hex) of the file's kind and of `sealed`'s exact bytes",
                    "type": "string",
                    "pattern": "^[0-9a-f]{64}$"
                },
                "sealed": inner
            }
        });
        if let (Some(defs), Some(o)) = (defs, s.as_object_mut()) {
            o.insert("$defs".into(), defs);
        }
        s
    }

    fn untrusted(&self, p: &Path, why: &str) -> anyhow::Error {
        refused(format!(
            "{} was not written by this node ({why}): planted through Git, copied from \
             another checkout, edited, or written by an rxnode from before node-sealed files; \
             it is not used — fix: {} (docs/operator.md#node-sealed-files)",
            p.display(),
            self.fix
        ))
    }
}

/// The text of a sealed file of `kind` holding `body` (JSON), under `key`.
pub(crate) fn seal(key: &key::NodeKey, kind: &str, body: &str) -> Result<String> {
    let mac = rxnode_interlock::file_mac(key.bytes(), kind, body.as_bytes())
        .context("the node key has the wrong length")?;
    Ok(envelope(&mac, body))
}

/// The text of a sealed file: `mac` and `body` (JSON) in their envelope.
fn envelope(mac: &str, body: &str) -> String {
    format!("{{\n\"{MAC_FIELD}\": \"{mac}\",\n\"sealed\": {body}\n}}\n")
}

/// The content (exact bytes) of a sealed file of `kind`, when its MAC verifies
/// under `key`; `None` for anything else (not a sealed file, another kind or key,
/// an edited byte).
pub(crate) fn unseal<'a>(key: &key::NodeKey, kind: &str, bytes: &'a [u8]) -> Option<&'a str> {
    let env: Envelope<'a> = serde_json::from_slice(bytes).ok()?;
    let body = env.sealed.get();
    rxnode_interlock::verify_file_mac(key.bytes(), kind, body.as_bytes(), &env.node_mac)
        .then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct F {
        name: String,
        ppm: f64,
    }

    const S: Sealed = Sealed {
        kind: "test",
        what: "test file",
        fix: "write it again",
        max_bytes: 4096,
    };

    fn checkout() -> (tempfile::TempDir, Paths) {
        let d = tempfile::tempdir().unwrap();
        git2::Repository::init(d.path()).unwrap();
        let paths = Paths::new(d.path());
        (d, paths)
    }

    #[test]
    fn an_older_copy_of_what_this_node_sealed_is_refused_until_written_again() {
        let (d, paths) = checkout();
        let p = d.path().join("f.json");
        let f = |name: &str| F {
            name: name.into(),
            ppm: 1.0,
        };
        S.write(&paths, &p, &f("OLD")).unwrap();
        let old = std::fs::read(&p).unwrap();
        S.write(&paths, &p, &f("NEW")).unwrap();
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(f("NEW")));
        // The older version, valid under this node's key, restored: refused, named.
        std::fs::write(&p, &old).unwrap();
        let e = format!("{:#}", S.read::<F>(&paths, &p).unwrap_err());
        assert!(
            e.contains("f.json") && e.contains("older") && e.contains("write it again"),
            "{e}"
        );
        // Written again, it is the newest.
        S.write(&paths, &p, &f("THIRD")).unwrap();
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(f("THIRD")));
        // A write cut short after its record: the version in place is still used (and
        // the one it replaced is not); the next write makes its own version the newest.
        let latest = key::key_path(&paths).unwrap().with_file_name("latest-test");
        let third = std::fs::read(&p).unwrap();
        let mac_of = |b: &[u8]| {
            serde_json::from_slice::<serde_json::Value>(b).unwrap()["node_mac"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        std::fs::write(
            &latest,
            format!("{}\n{}\n", "ab".repeat(32), mac_of(&third)),
        )
        .unwrap();
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(f("THIRD")));
        std::fs::write(&p, &old).unwrap();
        assert!(S.read::<F>(&paths, &p).is_err());
        std::fs::write(&p, &third).unwrap();
        S.write(&paths, &p, &f("FOURTH")).unwrap();
        assert_eq!(std::fs::read_to_string(&latest).unwrap().lines().count(), 1);
        std::fs::write(&p, &third).unwrap();
        assert!(S.read::<F>(&paths, &p).is_err());
        // A file sealed before any record existed is taken once, then recorded: an
        // older copy of it is refused from then on.
        std::fs::remove_file(&latest).unwrap();
        let k = key::load(&paths).unwrap().unwrap();
        let a = seal(&k, "test", r#"{"name": "A", "ppm": 1.0}"#).unwrap();
        let b = seal(&k, "test", r#"{"name": "B", "ppm": 1.0}"#).unwrap();
        std::fs::write(&p, &b).unwrap();
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(f("B")));
        std::fs::write(&p, &a).unwrap();
        assert!(S.read::<F>(&paths, &p).is_err());
        // A damaged record fails closed, naming it.
        std::fs::write(&latest, "not a mac\n").unwrap();
        std::fs::write(&p, &b).unwrap();
        let e = format!("{:#}", S.read::<F>(&paths, &p).unwrap_err());
        assert!(e.contains("latest-test") && e.contains("not used"), "{e}");
    }

    #[test]
    fn what_this_node_wrote_reads_back_and_nothing_else_does() {
        let (d, paths) = checkout();
        let p = d.path().join("f.json");
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), None);
        let f = F {
            name: "RX-1".into(),
            ppm: 0.1 + 0.2,
        };
        S.write(&paths, &p, &f).unwrap();
        assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(f));
        let sealed = std::fs::read_to_string(&p).unwrap();
        // Edited by hand: refused.
        std::fs::write(&p, sealed.replace("RX-1", "RX-2")).unwrap();
        let e = format!("{:#}", S.read::<F>(&paths, &p).unwrap_err());
        assert!(
            e.contains("does not verify") && e.contains("write it again"),
            "{e}"
        );
        // Floats come back exactly as written (the MAC covers the bytes, not a re-encoding).
        for ppm in [
            41.7,
            -12.503988982459962,
            1e-300,
            0.1 + 0.2,
            f64::MIN_POSITIVE,
        ] {
            let g = F {
                name: "x".into(),
                ppm,
            };
            S.write(&paths, &p, &g).unwrap();
            assert_eq!(S.read::<F>(&paths, &p).unwrap(), Some(g));
        }
        // No MAC (an earlier rxnode, or planted): refused.
        std::fs::write(&p, r#"{"name": "RX-1", "ppm": 1.0}"#).unwrap();
        let e = format!("{:#}", S.read::<F>(&paths, &p).unwrap_err());
        assert!(e.contains("carries no node MAC"), "{e}");
        // Another kind under the same key: refused.
        std::fs::write(&p, &sealed).unwrap();
        let other = Sealed { kind: "other", ..S };
        assert!(other.read::<F>(&paths, &p).is_err());
        // Another checkout's key: refused.
        let (_d2, paths2) = checkout();
        key::load_or_create(&paths2).unwrap();
        let e = format!("{:#}", S.read::<F>(&paths2, &p).unwrap_err());
        assert!(e.contains("does not verify"), "{e}");
        // A checkout with no key at all: refused.
        let (_d3, paths3) = checkout();
        let e = format!("{:#}", S.read::<F>(&paths3, &p).unwrap_err());
        assert!(e.contains("no key yet"), "{e}");
    }
}
