//! The plan model: the steps of a task's one `rx-plan` block. Each op is one
//! module under `ops/` registered in its table (`ops/mod.rs`); finding the block
//! in the task's Markdown is in `markdown`, parsing it in `parse`, the checks the ops' sanity is made of in `sanity`, the plain
//! units of the prompt in `words`, the schemas of the plan and the task in `schema`.
use serde::Serialize;

pub(crate) mod markdown;
pub(crate) mod ops;
mod parse;
pub(crate) mod sanity;
pub(crate) mod schema;
#[cfg(test)]
mod tests;
pub(crate) mod words;

pub use markdown::body_changes_what_follows;
pub(crate) use markdown::find_plan_block;
pub use ops::clkin_compare::check_clkin_compare;
pub use ops::freq_cal::{
    check_freq_cal, FreqCalMethod, FREQ_CAL_MAX_ERROR_PPM, GSM_BIT_RATE_HZ, GSM_FCCH_OFFSET_HZ,
};
pub use ops::rx_capture::DEFAULT_CAPTURE_FFT_SIZE;
pub use ops::rx_capture::{
    check_rx_step, ClkinSpec, IqSampleFormat, DEFAULT_MAX_PEAKS, DEFAULT_MIN_SNR_DB,
    MAX_PEAKS_LIMIT, MIN_LEVEL_DBFS,
};
pub use ops::rx_sweep::{check_rx_sweep, validate_sweep_step, RX_SWEEP_FIELDS};
pub use ops::{step_types, Step};
pub(crate) use parse::parse_plan;

/// The machine-readable plan: the steps of the one `rx-plan` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Steps, executed in order.
    pub steps: Vec<Step>,
}
