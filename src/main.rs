//! The `rxnode` binary: glue between the CLI, Git, the interlock and the radios.
mod analyze;
mod capture_cmd;
mod cli;
mod demo;
mod doctor;
mod exit;
mod fsutil;
mod gitops;
mod inventory;
mod ledger;
mod live;
mod lock;
mod node;
mod outbox;
mod paths;
mod plot;
mod policy_file;
mod publish;
mod queue;
mod results;
mod results_cmd;
mod review;
mod run;
mod schema;
mod state;
mod state_rebuild;
mod status;
mod sweep_cmd;
mod task_new;
mod term;
mod trust;
mod validate;
mod watch;

use anyhow::Result;
use clap::{CommandFactory, Parser};
use cli::{Cli, Command};
use exit::Outcome;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    if cli.sim {
        // Before anything touches SoapySDR: modules load once per process.
        if let Err(err) = rxnode_hw::use_sim() {
            eprintln!("rxnode: error: --sim: {err:#}");
            return ExitCode::from(1);
        }
    }
    paths::set_policy_override(cli.policy.as_deref());
    install_panic_hook();
    // Unwinding (not exiting) keeps every drop guard working, the TX teardown among them.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(&cli))) {
        Ok(Ok(Outcome::Done)) => ExitCode::SUCCESS,
        Ok(Ok(Outcome::Code(c))) => ExitCode::from(c),
        Ok(Err(err)) => {
            eprintln!("rxnode: error: {err:#}");
            exit::code_for(&err)
        }
        Err(_) => ExitCode::from(1),
    }
}

/// A panic is a bug: say so in one line (no backtrace dump at the user). A
/// closed stdout (`rxnode status | head`) is not even that: stay quiet.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        if msg.contains("Broken pipe") {
            return;
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("rxnode: internal error (a bug; please report it): {msg}{at}");
    }));
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}

fn dispatch(cli: &Cli) -> Result<Outcome> {
    match &cli.command {
        Command::Validate { file } => validate::cmd_validate(cli, file),
        Command::Watch(args) => watch::cmd_watch(cli, args),
        Command::Review { task_id } => review::cmd_review(cli, task_id),
        Command::Status => status::cmd_status(cli),
        Command::Run { task_id } => run::cmd_run(cli, task_id),
        Command::Inventory(args) => inventory::cmd_inventory(cli, args),
        Command::Capture(args) => capture_cmd::cmd_capture(cli, args),
        Command::Analyze(args) => analyze::cmd_analyze(cli, args),
        Command::Sweep(args) => sweep_cmd::cmd_sweep(cli, args),
        Command::ValidateResult { target } => results::cmd_validate_result(cli, target),
        Command::Publish { task_id, push } => publish::cmd_publish(cli, task_id, *push),
        Command::MarkCompleted { task_id } => review::cmd_mark_completed(cli, task_id),
        Command::Doctor => doctor::cmd_doctor(cli),
        Command::Node(cli::NodeCmd::SetName { name }) => node::cmd_set_name(cli, name),
        Command::Node(cli::NodeCmd::Show) => node::cmd_show(cli),
        Command::Results(args) => results_cmd::cmd_results(cli, args),
        Command::Task(cli::TaskCmd::New(args)) => task_new::cmd_task_new(cli, args),
        Command::Schema { kind } => schema::cmd_schema(*kind),
        Command::State(cli::StateCommand::Rebuild) => state_rebuild::cmd_rebuild(cli),
        Command::Demo { dir } => demo::cmd_demo(dir.as_deref()),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "rxnode", &mut std::io::stdout());
            Ok(Outcome::Done)
        }
        Command::Man => {
            let cmd = Cli::command();
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
            Ok(Outcome::Done)
        }
    }
}
