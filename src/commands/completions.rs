//! `rxnode completions <SHELL>` and `rxnode man`.
use crate::cli::Cli;
use anyhow::Result;
use clap::CommandFactory;
use rxnode::Outcome;

/// Run the subcommand.
pub fn run(shell: clap_complete::Shell) -> Result<Outcome> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "rxnode", &mut std::io::stdout());
    Ok(Outcome::Done)
}

/// `rxnode man`: the man page (roff).
pub fn man() -> Result<Outcome> {
    clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
    Ok(Outcome::Done)
}
