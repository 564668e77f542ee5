//! `rxnode watch`: poll the watched branch and prompt.
use crate::cli::WatchArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, args: &WatchArgs) -> Result<Outcome> {
    rxnode::cmd_watch(ctx, &args.options())
}

impl WatchArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::WatchOptions {
        let a = self;
        rxnode::WatchOptions {
            once: a.once,
            interval: a.interval,
            dry_run: a.dry_run,
            task_file: a.task_file.clone(),
            history_limit: a.history_limit,
            walk_limit: a.walk_limit,
            no_prompt: a.no_prompt,
        }
    }
}
