//! `rxnode sweep …` and the `rx_sweep` plan step (docs/operator.md#sweeps-rxnode-sweep): an RX-only
//! wideband sweep. Never transmits: it opens one RX stream through
//! [`rxnode_hw::run_sweep`]. Bounded by the node-local RX policy
//! ([`rxnode_interlock::check_rx_sweep`]): a refusal names the limit (exit 3 /
//! `BLOCKED`). Outputs: the rtl_power CSV, the JSON hop table with band peaks,
//! noise floor and failed hops, a spectrum PNG and (repeats > 1) a heatmap PNG.
//!
//! Opening, configuring and sweeping the radio is in `radio.rs`; the command is
//! in `command.rs`, the plan step in `step.rs`, the CSV, JSON, pictures and
//! Markdown in `report.rs`. They depend one way: `command` and `step` on
//! `report` and `radio`; `report` on `radio`; this file only names what the
//! rest of the crate uses.
mod command;
mod radio;
mod report;
mod step;

pub use self::command::{cmd_sweep, SweepOptions};
pub(crate) use self::step::step_sweep;
pub use rxnode_interlock::SweepConfig;
