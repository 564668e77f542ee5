//! One thin adapter per subcommand (in the shape of cargo's `commands/`): turn
//! the parsed arguments into the library's options and call it.
pub mod analyze;
pub mod capture;
pub mod clkin;
pub mod completions;
pub mod demo;
pub mod doctor;
mod flags;
pub mod health;
pub mod inventory;
pub mod node;
pub mod publish;
pub mod results;
pub mod review;
pub mod run;
pub mod schema;
pub mod service;
pub mod state;
pub mod status;
pub mod sweep;
pub mod task;
pub mod validate;
pub mod validate_result;
pub mod watch;

use crate::cli::{Cli, Command};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the parsed command line.
pub fn dispatch(cli: &Cli, ctx: &Ctx) -> Result<Outcome> {
    if cli.command.uses_repo() {
        rxnode::check_repo_folder(&ctx.repo)?;
    }
    if cli.command.needs_checkout() {
        rxnode::require_checkout(&ctx.repo)?;
    }
    match &cli.command {
        Command::Validate { file, .. } => validate::run(ctx, file),
        Command::Watch(args) => watch::run(ctx, args),
        Command::Review { task_id, .. } => review::run(ctx, task_id),
        Command::Status => status::run(ctx),
        Command::Run { task_id, .. } => run::run(ctx, task_id),
        Command::Inventory(args) => inventory::run(ctx, args),
        Command::Capture(args) => capture::run(ctx, args),
        Command::Analyze(args) => analyze::run(ctx, args),
        Command::Sweep(args) => sweep::run(ctx, args),
        Command::Clkin(cmd) => clkin::run(ctx, cmd),
        Command::ValidateResult { target } => validate_result::run(ctx, target),
        Command::Publish { task_id, push, .. } => publish::run(ctx, task_id, *push),
        Command::MarkCompleted {
            task_id,
            status,
            note,
            note_file,
        } => review::mark_completed(ctx, task_id, *status, note.as_deref(), note_file.as_deref()),
        Command::Doctor { .. } => doctor::run(ctx),
        Command::Node(cmd) => node::run(ctx, cmd),
        Command::Results(args) => results::run(ctx, args),
        Command::Health { cmd } => health::run(ctx, cmd.as_ref()),
        Command::Task(cmd) => task::run(ctx, cmd),
        Command::Schema { kind } => schema::run(*kind),
        Command::State(cmd) => state::run(ctx, cmd),
        Command::Service(cmd) => service::run(ctx, cmd),
        Command::Demo { dir } => demo::run(ctx.json, dir.as_deref()),
        Command::Completions { shell } => completions::run(ctx, *shell),
        Command::Man => completions::man(ctx),
        Command::TxGuard { task_id, step, .. } => {
            rxnode::cmd_tx_guard(ctx, task_id, *step).map(|()| Outcome::Done)
        }
        Command::TxGuardTimer { guard } => {
            rxnode::cmd_tx_guard_timer(*guard).map(|()| Outcome::Done)
        }
    }
}
