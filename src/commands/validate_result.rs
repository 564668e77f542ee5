//! `rxnode validate-result <ID|PATH>`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};
use std::path::Path;

/// Run the subcommand.
pub fn run(ctx: &Ctx, target: &Path) -> Result<Outcome> {
    rxnode::cmd_validate_result(ctx, target)
}
