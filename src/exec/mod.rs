//! The executor: `run` of an approved task, and the operator's own RX-only
//! commands (inventory, capture, sweep, analyze).
pub(crate) mod analyze;
pub(crate) mod capture;
pub(crate) mod inventory;
pub(crate) mod live;
pub(crate) mod run;
pub(crate) mod sweep;
