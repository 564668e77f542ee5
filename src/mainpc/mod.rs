//! The main PC's side (DESIGN §10): write tasks, read results.
pub(crate) mod results;
pub(crate) mod task_new;
