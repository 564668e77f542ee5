//! `rxnode inventory`: enumerate and probe radios, read-only.
use crate::cli::InventoryArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, args: &InventoryArgs) -> Result<Outcome> {
    rxnode::cmd_inventory(ctx, &args.options())
}

impl InventoryArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::InventoryOptions {
        let a = self;
        rxnode::InventoryOptions {
            dry_run: a.dry_run,
            args: a.args.clone(),
        }
    }
}
