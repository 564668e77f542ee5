//! `rxnode validate-result <ID|PATH>`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, target: &str) -> Result<Outcome> {
    rxnode::cmd_validate_result(ctx, target)
}
