//! `rxnode watch`: poll the watched branch and prompt.
use crate::cli::WatchArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand (its task source is in the context).
pub fn run(ctx: &Ctx, args: &WatchArgs) -> Result<Outcome> {
    rxnode::cmd_watch(ctx, &args.options)
}
