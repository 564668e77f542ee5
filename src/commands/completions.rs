//! `rxnode completions <SHELL>` and `rxnode man`.
use crate::cli::Cli;
use anyhow::Result;
use clap::CommandFactory;
use rxnode::Outcome;

/// Run the subcommand.
pub fn run(shell: clap_complete::Shell) -> Result<Outcome> {
    let mut cmd = Cli::command();
    // Generated into memory first: the generator panics on a write error, and a
    // closed pipe (`| head`) is not an error but the end (exit 0, in `main`).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rxnode", &mut script);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
    Ok(Outcome::Done)
}

/// `rxnode man`: the man page (roff).
pub fn man() -> Result<Outcome> {
    clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout())?;
    Ok(Outcome::Done)
}
