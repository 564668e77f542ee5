//! Node-local policy `.local/rxnode-policy.json` (DESIGN §3): never from a task.
use crate::exit::bad_input;
use crate::paths::Paths;
use anyhow::{Context, Result};
use rxnode_interlock::Policy;

/// Where the policy came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The file existed and was valid.
    File,
    /// No file: RX defaults (60 s, device max rate, 4 GiB IQ) and no TX.
    Defaults,
}

/// Load the policy; a missing file gives the defaults (TX refused); a
/// malformed one is an error naming the file (never silently replaced).
pub fn load(paths: &Paths) -> Result<(Policy, Source)> {
    let p = paths.policy();
    match std::fs::read_to_string(&p) {
        Ok(text) => {
            let pol =
                Policy::from_json(&text).map_err(|e| bad_input(format!("{}: {e}", p.display())))?;
            Ok((pol, Source::File))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok((Policy::default(), Source::Defaults))
        }
        Err(e) => Err(e).with_context(|| format!("cannot read policy {}", p.display())),
    }
}
