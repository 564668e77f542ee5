//! The radio as the node uses it, below the executor and the health checks that
//! both need it: [`live`], a live capture with an analysis riding its hot path
//! (the steps of `rxnode run`, `capture`, `clkin` and the radio self-test), and
//! [`presence`], whether a radio is on this machine at all.
pub(crate) mod live;
mod presence;

pub(crate) use presence::{absent, absent_fix};
