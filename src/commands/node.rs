//! `rxnode node set-name|show`.
use crate::cli::NodeCmd;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &NodeCmd) -> Result<Outcome> {
    match cmd {
        NodeCmd::SetName { name } => rxnode::cmd_set_name(ctx, name),
        NodeCmd::Show => rxnode::cmd_show(ctx),
    }
}
