//! `rxnode demo`: the whole loop on embedded defaults.
use anyhow::Result;
use rxnode::Outcome;
use std::path::Path;

/// Run the subcommand.
pub fn run(dir: Option<&Path>) -> Result<Outcome> {
    rxnode::cmd_demo(dir)
}
