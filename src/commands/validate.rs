//! `rxnode validate <FILE>`: parse and check a task file.
use anyhow::Result;
use rxnode::{Ctx, Outcome};
use std::path::Path;

/// Run the subcommand.
pub fn run(ctx: &Ctx, file: &Path) -> Result<Outcome> {
    rxnode::cmd_validate(ctx, file)
}
