//! The sections of `RX_RESULT.json` as Rust types, one module each; the same types
//! are what the commands print with `--json` and what every reader deserializes
//! (docs/protocol.md#5-results).
//!
//! Each section's fields are declared in alphabetical order: the sections were
//! first written with sorted keys, and the bytes of a result do not change.
pub(crate) mod compare;
pub(crate) mod freq_cal;
#[cfg(test)]
mod schema_tests;
pub(crate) mod step_row;
pub(crate) mod sweep;
pub(crate) mod wire;
