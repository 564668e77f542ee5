//! `rxnode state rebuild`.
use crate::cli::StateCommand;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &StateCommand) -> Result<Outcome> {
    match cmd {
        StateCommand::Rebuild => rxnode::cmd_rebuild(ctx),
    }
}
