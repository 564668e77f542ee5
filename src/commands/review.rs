//! `rxnode review <ID>` and `rxnode mark-completed <ID>`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    rxnode::cmd_review(ctx, task_id)
}

/// `rxnode mark-completed <ID>`.
pub fn mark_completed(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    rxnode::cmd_mark_completed(ctx, task_id)
}
