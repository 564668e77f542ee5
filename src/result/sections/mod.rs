//! The sections of `RX_RESULT.json` as Rust types, one module each: `inventory`,
//! `captures`, `tx`, `sweeps`, `clkin_compares` and `freq_cal`
//! (docs/protocol.md#5-results). The same types are what the commands print with
//! `--json`, what the steps build, what the result writes and what every reader
//! deserializes.
//!
//! A section's objects are written with their keys in sorted order, as every
//! earlier build wrote them ([`sorted`]; the sections of sweeps, comparisons and
//! calibrations declare their fields in alphabetical order to the same end): a
//! field's place in its type does not move it in the file. The capture, inventory
//! and TX sections also read what another build wrote in a shape this one does not
//! (an older node's, a hand-written fixture's), as `Other`, so a result from the
//! fleet is never unreadable for its shape alone.
pub(crate) mod capture;
pub(crate) mod compare;
pub(crate) mod freq_cal;
pub(crate) mod inventory;
pub(crate) mod recording_clock;
#[cfg(test)]
mod schema_tests;
pub(crate) mod step_row;
pub(crate) mod sweep;
pub(crate) mod tone;
pub(crate) mod untyped;
pub(crate) mod wire;

pub(crate) use capture::CaptureEntry;
pub(crate) use inventory::Inventory;
pub(crate) use step_row::StepRow;
pub(crate) use tone::TxRecord;
pub(crate) use wire::sorted;
