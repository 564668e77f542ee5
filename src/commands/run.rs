//! `rxnode run <ID>`: execute an approved task.
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    rxnode::cmd_run(ctx, task_id)
}
