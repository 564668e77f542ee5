//! The `rxnode` binary: parse the command line once (`cli`), build the
//! [`rxnode::Ctx`], dispatch to one adapter per subcommand (`commands/`).
// No unwrap/expect in product code: every failure on input is an error that names it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// No raw print: every write to stdout and stderr goes through the shell (`Ctx::shell`).
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
mod cli;
mod commands;

use cli::Cli;
use rxnode::{Ctx, Outcome, Shell};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::parse_command_line() {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    init_tracing(cli.verbose);
    if cli.command.uses_git() {
        // While this is the only thread: libgit2 starts without the CA bundle,
        // read when an HTTPS remote needs it (src/git/ops/tls.rs).
        rxnode::init_git();
    }
    if cli.sim {
        // Before anything touches SoapySDR: modules load once per process.
        if let Err(err) = rxnode_hw::use_sim() {
            // The message already names its cause: one line, not the chain twice.
            let err = anyhow::anyhow!("--sim: {err}");
            let shell = Shell::new(cli.json);
            let _ = if cli.json {
                shell.errln(format_args!("{}", rxnode::error_json(&err)))
            } else {
                shell.errln(format_args!("rxnode: error: {}", rxnode::error_text(&err)))
            };
            return ExitCode::from(1);
        }
    }
    // The main PC's commands work in the clone from any folder of it; the node's
    // commands in the node's checkout (`Ctx::new`).
    let repo = if cli.command.is_main_pc() {
        rxnode::work_tree_top(&cli.repo)
    } else {
        cli.repo.clone()
    };
    let ctx = Ctx::new(cli.sim, cli.json, repo, cli.policy.clone(), cli.source());
    install_panic_hook();
    // A panic unwinds (the hook never exits), so every drop guard runs, the TX
    // teardown among them; caught here, it ends with status 1. A closed stdout is
    // no panic: its `io::Error` (`BrokenPipe`) comes back in the error's chain.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        commands::dispatch(&cli, &ctx)
    })) {
        Ok(Ok(Outcome::Done)) => ExitCode::SUCCESS,
        Ok(Ok(Outcome::Code(c))) => ExitCode::from(c),
        Ok(Err(err)) if rxnode::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Ok(Err(err)) => {
            let _ = if cli.json {
                ctx.shell()
                    .errln(format_args!("{}", rxnode::error_json(&err)))
            } else {
                ctx.shell()
                    .errln(format_args!("rxnode: error: {}", rxnode::error_text(&err)))
            };
            rxnode::code_for(&err)
        }
        Err(_) => ExitCode::from(1),
    }
}

/// Whether `--json` was given (before a `--`): clap's own errors and `--version`
/// then answer in JSON too, as every other outcome does.
fn json_asked() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// clap could not parse the command line, or answered `--help`/`--version`
/// itself. Under `--json`: the version as `{"name", "version"}`, an error as the
/// documented error object (exit 2); help stays text. Else clap's own output.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if !json_asked() || e.kind() == ErrorKind::DisplayHelp {
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    if e.kind() == ErrorKind::DisplayVersion {
        /// `--version --json`.
        #[derive(serde::Serialize)]
        struct Version {
            name: &'static str,
            version: &'static str,
        }
        let v = serde_json::to_string(&Version {
            name: "rxnode",
            version: env!("CARGO_PKG_VERSION"),
        })
        .unwrap_or_default();
        let _ = Shell::new(true).outln(format_args!("{v}"));
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    // clap's first line is the message (`error: …`), with the indented lines under it
    // (the missing arguments, one a line); its tip, when it has one, is the fix.
    let mut lines = text.lines();
    let mut message = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    for more in lines.take_while(|l| l.starts_with(' ') && !l.trim().is_empty()) {
        message.push(' ');
        message.push_str(more.trim());
    }
    let fix = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("tip: "))
        .map(str::to_owned);
    let v = rxnode::ErrorReport {
        error: rxnode::ErrorBody { fix, message },
        exit: 2,
    };
    let _ = Shell::new(true).errln(format_args!("{v}"));
    ExitCode::from(2)
}

/// A panic is a bug: say so in one line (no backtrace dump at the user).
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = Shell::default().errln(format_args!(
            "rxnode: internal error (a bug; please report it): {msg}{at}"
        ));
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
    // No colour: every log line passes the terminal-safe door (`SafeStderr`),
    // which lets no escape sequence through but rxnode's own report colours.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(|| rxnode::SafeStderr)
        .with_target(false)
        .without_time()
        .try_init();
}
