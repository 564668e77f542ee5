//! `rxnode review <ID>` and `rxnode mark-completed <ID>`.
use anyhow::Result;
use rxnode::{Ctx, Outcome};
use std::path::Path;

/// Run the subcommand.
pub fn run(ctx: &Ctx, task_id: &str) -> Result<Outcome> {
    rxnode::cmd_review(ctx, task_id)
}

/// `rxnode mark-completed <ID> [--status S] [--note TEXT | --note-file F]`.
pub fn mark_completed(
    ctx: &Ctx,
    task_id: &str,
    status: Option<crate::cli::ManualStatusArg>,
    note: Option<&str>,
    note_file: Option<&Path>,
) -> Result<Outcome> {
    let note = match note_file {
        Some(f) => Some(rxnode::read_note_file(f)?),
        None => note.map(str::to_owned),
    };
    let opts = rxnode::MarkCompleted {
        status: status.map(Into::into),
        note,
    };
    rxnode::cmd_mark_completed(ctx, task_id, &opts).map_err(super::flags::flag_named)
}
