//! Windows: the watcher runs from the Task Scheduler, at log on, as the operator
//! (docs/operator.md#windows-task-scheduler). `install` prints the one
//! `schtasks` command line that registers it; `status` and `uninstall` print
//! theirs. rxnode registers nothing itself: the operator runs the line (Windows
//! may ask for an administrator's terminal to create a log-on task).
use super::{checkout, ServiceOptions};
use crate::context::Ctx;
use crate::exit::{bad_field, Outcome};
use anyhow::{Context, Result};

/// The scheduled task's name.
const TASK_NAME: &str = "rxnode watcher";
/// What `schtasks /TR` accepts at most.
const TR_MAX: usize = 261;

/// One word of the `/TR` command: quoted (`\"…\"`) when it holds a space.
fn word(w: &str) -> String {
    if w.contains([' ', '\t']) {
        format!("\\\"{w}\\\"")
    } else {
        w.to_owned()
    }
}

pub(super) fn install(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    if !(opts.interval.is_finite() && opts.interval > 0.0 && opts.interval <= 86_400.0) {
        return Err(bad_field(
            "interval",
            format!(
                " {}: must be a number of seconds in (0, 86400]",
                opts.interval
            ),
        ));
    }
    let repo = plain(checkout(ctx)?);
    let exe = plain(
        std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .context("cannot find the rxnode program's own path")?,
    );
    let words = super::unit::watcher_words(ctx, opts.interval, exe, repo);
    if let Some(bad) = words
        .iter()
        .find(|w| w.contains('"') || w.chars().any(char::is_control))
    {
        return Err(bad_field(
            "repo",
            format!(" {bad:?}: a quote or control character cannot go into a scheduled task"),
        ));
    }
    let tr = words.iter().map(|w| word(w)).collect::<Vec<_>>().join(" ");
    let command =
        format!("schtasks /Create /F /TN \"{TASK_NAME}\" /SC ONLOGON /RL LIMITED /TR \"{tr}\"");
    let mut human = format!(
        "Windows runs the watcher from the Task Scheduler. To start it at every log on, \
         as you, run in a terminal:\n\n  {command}\n\n\
         then in Task Scheduler → {TASK_NAME} → Settings choose \"If the task fails, restart \
         every 1 minute\" (or register it with PowerShell as \
         docs/operator.md#windows-task-scheduler shows, restart included). Approve tasks \
         with `rxnode review TASK_ID`.\n"
    );
    let too_long = tr.len() > TR_MAX;
    if too_long {
        human.push_str(&format!(
            "note: the command is {} characters, over the {TR_MAX} schtasks accepts: use \
             the PowerShell form of docs/operator.md#windows-task-scheduler\n",
            tr.len()
        ));
    }
    let report = super::ServiceReport::Scheduled {
        command,
        command_too_long: Some(too_long),
        task: TASK_NAME,
    };
    ctx.report(&report, |_| human)?;
    Ok(Outcome::Done)
}

pub(super) fn status(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let _ = opts;
    let command = format!("schtasks /Query /TN \"{TASK_NAME}\" /V /FO LIST");
    let report = super::ServiceReport::Scheduled {
        command: command.clone(),
        command_too_long: None,
        task: TASK_NAME,
    };
    ctx.report(&report, |_| {
        format!("Windows runs the watcher from the Task Scheduler; its state: {command}\n")
    })?;
    Ok(Outcome::Done)
}

pub(super) fn uninstall(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let _ = opts;
    let command =
        format!("schtasks /End /TN \"{TASK_NAME}\" & schtasks /Delete /F /TN \"{TASK_NAME}\"");
    let report = super::ServiceReport::Scheduled {
        command: command.clone(),
        command_too_long: None,
        task: TASK_NAME,
    };
    ctx.report(&report, |_| {
        format!("Windows runs the watcher from the Task Scheduler; to remove it: {command}\n")
    })?;
    Ok(Outcome::Done)
}

/// A path as the operator types it: `canonicalize` gives `\\?\C:\…`.
fn plain(p: std::path::PathBuf) -> String {
    let s = p.to_string_lossy().into_owned();
    match s.strip_prefix(r"\\?\") {
        Some(rest) if !rest.starts_with("UNC\\") => rest.to_owned(),
        _ => s,
    }
}
