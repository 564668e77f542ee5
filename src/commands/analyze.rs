//! `rxnode analyze <FILE>`: the capture analysis on a recording.
use super::flags::flag_named;
use anyhow::Result;
use rxnode::{AnalyzeOptions, Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, options: &AnalyzeOptions) -> Result<Outcome> {
    rxnode::cmd_analyze(ctx, options).map_err(flag_named)
}
