//! The row of a plan step that did not get to measure (refused, blocked, failed
//! before its radio streamed): its step number, status and why.
use crate::result::Status;
use serde::{Deserialize, Serialize};

/// `{"detail", "status", "step"}`: a step that measured nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepRow {
    /// Why nothing was measured, one line.
    pub detail: String,
    /// `BLOCKED`, `FAIL` or `NOT RUN`.
    pub status: Status,
    /// The step's number in the plan, from 1.
    #[schemars(range(min = 1))]
    pub step: usize,
}

impl StepRow {
    /// The row of step `index + 1`.
    pub(crate) fn new(index: usize, status: Status, detail: String) -> StepRow {
        StepRow {
            detail,
            status,
            step: index + 1,
        }
    }
}
