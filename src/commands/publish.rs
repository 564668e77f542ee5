//! `rxnode publish <ID> [--push]`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, task_id: &str, push: bool) -> Result<Outcome> {
    rxnode::cmd_publish(ctx, task_id, push)
}
