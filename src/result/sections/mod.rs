//! The typed sections of `RX_RESULT.json` that steps fill: `inventory`, `captures`
//! and `tx` (docs/protocol.md#5-results). Each is one Rust type that the steps
//! build, the result writes and every reader deserializes.
//!
//! A section's objects are written with their keys in sorted order, as every
//! earlier build wrote them ([`sorted`]): a field's place in its type does not
//! move it in the file. Each section also reads what another build wrote in a
//! shape this one does not (an older node's, a hand-written fixture's), as
//! `Other`, so a result from the fleet is never unreadable for its shape alone.
pub(crate) mod capture;
pub(crate) mod inventory;
pub(crate) mod tx;
pub(crate) mod untyped;

pub(crate) use capture::CaptureEntry;
pub(crate) use inventory::Inventory;
pub(crate) use tx::TxRecord;

use super::model::Status;
use serde::{Deserialize, Serialize, Serializer};

/// Write `v` as its JSON value: objects with their keys sorted, each number as
/// the value holds it (an `f32` widened to `f64`, a non-finite float `null`),
/// exactly the bytes a section built as a `serde_json::Value` had.
pub(crate) fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// The row of a step that produced no record (BLOCKED, FAIL before anything was
/// measured): its number, status and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepRow {
    /// Why, one line.
    pub(crate) detail: String,
    /// Its status.
    pub(crate) status: Status,
    /// The step's number in the plan (from 1).
    #[schemars(range(min = 1))]
    pub(crate) step: usize,
}

impl StepRow {
    /// Step `index` (from 0) with `status` for `why`.
    pub(crate) fn new(index: usize, status: Status, why: String) -> StepRow {
        StepRow {
            detail: why,
            status,
            step: index + 1,
        }
    }
}
