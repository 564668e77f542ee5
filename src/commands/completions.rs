//! `rxnode completions <SHELL>` and `rxnode man`.
use crate::cli::Cli;
use anyhow::Result;
use clap::CommandFactory;
use rxnode::Outcome;
use serde::Serialize;

/// `--json completions SHELL`: the script as one JSON document.
#[derive(Serialize)]
struct Completions<'a> {
    /// The shell it is for (`bash`, `zsh`, …).
    shell: String,
    /// The completion script, as the shell reads it.
    script: &'a str,
}

/// `--json man`: the page as one JSON document.
#[derive(Serialize)]
struct ManPage<'a> {
    /// The man page, roff.
    page: &'a str,
}

/// `value` as one pretty JSON document on stdout (`--json`).
fn json_out(ctx: &rxnode::Ctx, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    ctx.shell().outln(format_args!("{text}"))?;
    Ok(())
}

/// Run the subcommand.
pub fn run(ctx: &rxnode::Ctx, shell: clap_complete::Shell) -> Result<Outcome> {
    let mut cmd = Cli::command();
    // Generated into memory first: the generator panics on a write error, and a
    // closed pipe (`| head`) is not an error but the end (exit 0, in `main`).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "rxnode", &mut script);
    if ctx.shell().json() {
        let script = String::from_utf8_lossy(&script);
        json_out(
            ctx,
            &Completions {
                shell: shell.to_string(),
                script: &script,
            },
        )?;
    } else {
        ctx.shell().out_bytes(&script)?;
    }
    Ok(Outcome::Done)
}

/// `rxnode man`: the man page (roff). One page: its COMMANDS section names each
/// command and where its options are (`rxnode CMD --help`), never a
/// `rxnode-CMD(1)` page that is not installed; EXIT STATUS is the one rule of
/// docs/protocol.md#7-exit-status.
pub fn man(ctx: &rxnode::Ctx) -> Result<Outcome> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    page.extend_from_slice(own_sections(&cmd).as_bytes());
    man.render_version_section(&mut page)?;
    if ctx.shell().json() {
        json_out(
            ctx,
            &ManPage {
                page: &String::from_utf8_lossy(&page),
            },
        )?;
    } else {
        ctx.shell().out_bytes(&page)?;
    }
    Ok(Outcome::Done)
}

/// The COMMANDS and EXIT STATUS sections, in roff.
fn own_sections(cmd: &clap::Command) -> String {
    use clap_mangen::roff::{bold, roman, Roff};
    let mut r = Roff::new();
    r.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        r.control("TP", [] as [&str; 0]);
        r.text([bold(format!("rxnode {name}"))]);
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        r.text([roman(format!(
            "{}. Options: `rxnode {name} --help`.",
            about.trim_end_matches('.')
        ))]);
    }
    r.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "Done as asked."),
        ("1", "It ran, or tried the radio, and failed: FAIL or PARTIAL, a radio that is absent or busy, a network or Git error."),
        ("2", "Bad usage or invalid input; nothing ran."),
        ("3", "Refused by the safety interlock or the node policy; also a prompt left without the decision or typed confirmation it asked for (review, run's AUTHORIZE, publish's PUBLISH): nothing changed."),
    ] {
        r.control("TP", [] as [&str; 0]);
        r.text([bold(code)]);
        r.text([roman(meaning)]);
    }
    r.control("PP", [] as [&str; 0]);
    r.text([roman(
        "Under --json an error is one JSON object on stderr with its exit status; \
         a closed stdout ends any command quietly with status 0.",
    )]);
    r.to_roff()
}
