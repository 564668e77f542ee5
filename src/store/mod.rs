//! The node's local store (never in Git): paths, atomic files and locks,
//! state and its rebuild (`evidence` reads the ledger and the outboxes as
//! evidence, `replay` rebuilds a state from it, `rebuild` writes it), the ledger
//! (and `checkpoint`, what the state's check needs from it, kept between reads), the watcher lock, the per-radio locks, the outbox, the
//! policy, the node name, the radios' health, the frequency calibrations (the
//! last three node-sealed: `sealed`), the
//! running task's step, and the trust-root check that guards all of them.
pub(crate) mod calibration;
pub(crate) mod checkpoint;
pub(crate) mod evidence;
pub(crate) mod fsutil;
pub(crate) mod health;
pub(crate) mod journal;
pub(crate) mod key;
pub(crate) mod ledger;
mod ledger_event;
pub(crate) mod leftovers;
pub(crate) mod lock;
pub(crate) mod node;
pub(crate) mod outbox;
pub(crate) mod paths;
pub(crate) mod policy;
pub(crate) mod progress;
pub(crate) mod queue;
pub(crate) mod radio_lock;
pub(crate) mod rebuild;
mod replay;
pub(crate) mod sealed;
pub(crate) mod state;
pub(crate) mod trust;
#[cfg(windows)]
pub(crate) mod winsec;
