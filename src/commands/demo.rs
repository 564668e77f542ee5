//! `rxnode demo`: the whole loop on embedded defaults.
use anyhow::Result;
use rxnode::Outcome;
use std::path::Path;

/// Run the subcommand. The demo is a walk-through for people: `--json` is bad
/// usage (exit 2), refused before anything is set up.
pub fn run(json: bool, dir: Option<&Path>) -> Result<Outcome> {
    if json {
        return Err(rxnode::bad_input(
            "demo is a walk-through for people and prints no JSON — fix: run `rxnode demo` without --json",
        ));
    }
    rxnode::cmd_demo(dir)
}
