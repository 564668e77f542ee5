//! The executor: `run` of an approved task (its preconditions, the RX steps and
//! the TX orchestration, which alone can key a transmitter), and the operator's
//! own RX-only commands (inventory, capture, sweep, analyze).
pub(crate) mod analyze;
pub(crate) mod capture;
pub(crate) mod freq_cal;
pub(crate) mod inventory;
pub(crate) mod live;
pub(crate) mod preconditions;
pub(crate) mod run;
pub(crate) mod steps;
pub(crate) mod sweep;
pub(crate) mod tx;

use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;

/// Append `e` to the ledger; a failure is logged, not returned: the refusal or
/// outcome the entry records is what the command reports.
pub(crate) fn ledger_note(paths: &Paths, e: &Entry) {
    if let Err(err) = ledger::append(paths, e) {
        tracing::error!("cannot write the ledger: {err:#}");
    }
}
