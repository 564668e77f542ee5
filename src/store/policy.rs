//! Node-local policy `.local/rxnode-policy.json` (docs/safety.md): never from a task.
use crate::exit::bad_input;
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use rxnode_interlock::Policy;

/// Where the policy came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// The file existed and was valid.
    File,
    /// No file: RX defaults (60 s, device max rate, 4 GiB IQ) and no TX.
    Defaults,
}

/// A policy file's text: UTF-8 (a UTF-16 file, as an editor's "Unicode" saves
/// it, is named as such), bad input otherwise.
pub(crate) fn policy_text(bytes: Vec<u8>, name: &str) -> Result<String> {
    Policy::text_of(bytes).map_err(|e| bad_input(format!("policy {name} {e}")))
}

/// Load the policy; a missing file gives the defaults (TX refused); a
/// malformed one is an error naming the file (never silently replaced).
///
/// The trust root is checked first ([`crate::store::trust::verify`]): a policy that
/// Git tracks, that is a link, not a regular file or not the operator's is
/// refused (exit 3), never read. An explicit `--policy` / `RXNODE_POLICY` file
/// must exist (no silent defaults for a path the operator named).
pub(crate) fn load(paths: &Paths) -> Result<(Policy, Source)> {
    use crate::store::fsutil::{read_named_file, NamedFileError as E};
    crate::store::trust::verify(paths)?;
    let p = paths.policy();
    match read_named_file(&p, Policy::MAX_FILE_BYTES) {
        Ok(bytes) => {
            let text = policy_text(bytes, &p.display().to_string())?;
            let name = p.display().to_string();
            let pol = Policy::from_json(&text).map_err(|e| {
                bad_input(format!("{name}: {e} — fix: {}", Policy::repair_fix(&name)))
            })?;
            Ok((pol, Source::File))
        }
        Err(E::Missing(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            if paths.policy_is_explicit() {
                return Err(bad_input(format!(
                    "policy {} (--policy / RXNODE_POLICY) does not exist",
                    p.display()
                )));
            }
            Ok((Policy::default(), Source::Defaults))
        }
        Err(e @ (E::NotRegular | E::TooBig { .. })) => {
            Err(bad_input(format!("policy {}: {e}", p.display())))
        }
        Err(E::Missing(e) | E::Io(e)) => {
            Err(e).with_context(|| format!("cannot read policy {}", p.display()))
        }
    }
}
