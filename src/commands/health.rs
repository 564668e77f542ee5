//! `rxnode health`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx) -> Result<Outcome> {
    rxnode::cmd_health(ctx)
}
