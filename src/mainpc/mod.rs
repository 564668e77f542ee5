//! The main PC's side (docs/protocol.md#6-the-main-pcs-side): write tasks, read results.
pub(crate) mod results;
pub(crate) mod task_new;
