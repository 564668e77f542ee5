//! `rxnode inventory`: enumerate and probe radios, read-only.
use anyhow::Result;
use rxnode::{Ctx, InventoryOptions, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, options: &InventoryOptions) -> Result<Outcome> {
    rxnode::cmd_inventory(ctx, options)
}
