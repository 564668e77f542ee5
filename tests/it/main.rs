//! The integration tests of the rxnode package, as one test binary, in the
//! shape of cargo's `tests/testsuite/main.rs` and ripgrep's `tests/tests.rs`: every
//! group of tests is a module here and `util` is the one module they share.
//!
//! They drive the real `rxnode` binary (`CARGO_BIN_EXE_rxnode`) against temp bare Git
//! repositories and the simulated SoapySDR device, each test in a temp folder of its
//! own. All modules share this process and run in parallel threads, so nothing here
//! changes the process environment or the current directory (the environment of a
//! child is set on its `Command`), and loopback ports come from `util::free_port`.
//! `cargo test --test it <module>::` runs one group.
//!
//! Groups that signal their children or make symlinks and Unix permissions are
//! `cfg(unix)` (`crash` and `signals` say so inside).
#[macro_use]
mod util;

mod analyze;
mod capture;
mod cli;
mod clkin;
mod clkin_compare;
mod crash;
mod demo;
mod doctor;
mod formats;
mod freq_cal;
#[cfg(target_os = "linux")]
mod guard;
#[cfg(unix)]
mod health;
#[cfg(unix)]
mod hostile;
mod hostile_review;
mod inventory;
mod layers;
mod mainpc;
#[cfg(unix)]
mod node_status;
mod outside_text;
#[cfg(unix)]
mod publish;
mod queue;
mod recording;
#[cfg(unix)]
mod remote;
#[cfg(unix)]
mod replay;
mod results;
#[cfg(unix)]
mod run;
mod signals;
#[cfg(unix)]
mod signed;
mod source_scan;
#[cfg(unix)]
mod sweep;
#[cfg(unix)]
mod trust_root;
mod validate;
#[cfg(unix)]
mod watch;
