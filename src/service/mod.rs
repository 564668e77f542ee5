//! `rxnode service install|status|uninstall` (docs/operator.md#unattended-operation):
//! a systemd unit that runs `rxnode watch --no-prompt` in this checkout and restarts
//! it when it fails. The unit holds no secrets: the node key, the policy and the
//! state stay in the checkout's `.local/`. On other systems the command says what
//! to do instead (the Windows Task Scheduler: docs/operator.md#windows-task-scheduler).
//!
//! This file holds the commands and what they check first; `unit.rs` writes the
//! unit's text (quoting, the environment it carries, the account it runs as),
//! `systemd.rs` installs, reports and removes it through `systemctl`, and
//! `windows.rs` prints the Task Scheduler's command lines instead.
// Off Linux the commands only say what to do instead: the unit helpers stay unused there.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[cfg(target_os = "linux")]
mod systemd;
mod unit;
#[cfg(windows)]
mod windows;

use crate::context::Ctx;
use crate::exit::{bad_field, Outcome};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
use systemd::{install, status, uninstall};
#[cfg(windows)]
use windows::{install, status, uninstall};

/// The unit's file name.
pub(crate) const UNIT_NAME: &str = "rxnode-watch.service";

/// What `service install|uninstall|status --json` print: on Linux the unit file and
/// what systemd was asked to do, on Windows the Task Scheduler's command line.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum ServiceReport {
    /// `install` (Linux).
    Installed {
        /// `written`, `replaced` or `unchanged`: what became of the unit file.
        file: String,
        /// Whether systemd was asked to start it.
        started: bool,
        /// The unit file.
        unit: String,
        /// A user unit.
        user: bool,
        /// Whether `systemd-analyze verify` checked and accepted the unit (false when
        /// it is not installed here).
        verified: bool,
    },
    /// `uninstall` (Linux).
    Removed {
        /// Whether the unit file was removed.
        removed: bool,
        /// Whether systemd was asked to stop it.
        stopped: bool,
        /// The unit file.
        unit: String,
    },
    /// `install`, `status`, `uninstall` (Windows): the command line to run.
    #[cfg_attr(not(windows), allow(dead_code))]
    Scheduled {
        /// The command line.
        command: String,
        /// It is longer than `schtasks` accepts (`install` only).
        #[serde(skip_serializing_if = "Option::is_none")]
        command_too_long: Option<bool>,
        /// The scheduled task's name.
        task: &'static str,
    },
}

/// Where and how the unit is managed.
#[derive(Debug, Clone, Default)]
pub struct ServiceOptions {
    /// A user unit (`systemctl --user`, `~/.config/systemd/user/`) instead of a
    /// system unit (`/etc/systemd/system/`, run as this user).
    pub user: bool,
    /// Write the unit into this folder and leave systemd alone (it prints the
    /// commands that activate it).
    pub unit_dir: Option<PathBuf>,
    /// Seconds between the watcher's polls.
    pub interval: f64,
    /// The account a system unit runs as (default: the installing user, who
    /// must not be root).
    pub run_as: Option<String>,
}

/// What `service status --json` prints.
#[derive(Debug, Serialize)]
struct Status {
    /// The unit file.
    unit: String,
    /// Whether it exists.
    installed: bool,
    /// Its `WorkingDirectory=` (the checkout it watches).
    working_directory: Option<String>,
    /// Its `ExecStart=`.
    exec_start: Option<String>,
    /// Whether it watches this checkout.
    this_checkout: bool,
    /// `systemctl is-active` (`null` with `--unit-dir` or without systemctl).
    active: Option<String>,
    /// `systemctl is-enabled` (`null` with `--unit-dir` or without systemctl).
    enabled: Option<String>,
}

/// What systemd-managed services are not on this system.
#[cfg(not(any(target_os = "linux", windows)))]
fn not_here() -> anyhow::Error {
    crate::exit::bad_input(
        "rxnode service manages a systemd unit, which only Linux has; on Windows run \
         `rxnode watch --no-prompt` from the Task Scheduler (at log on, restart on failure) \
         as docs/operator.md#windows-task-scheduler shows; on macOS use a launchd agent \
         with the same command",
    )
}

/// `rxnode service install`.
pub fn cmd_service_install(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = (ctx, opts);
        Err(not_here())
    }
    #[cfg(any(target_os = "linux", windows))]
    install(ctx, opts)
}

/// `rxnode service status`.
pub fn cmd_service_status(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = (ctx, opts);
        Err(not_here())
    }
    #[cfg(any(target_os = "linux", windows))]
    status(ctx, opts)
}

/// `rxnode service uninstall`.
pub fn cmd_service_uninstall(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = (ctx, opts);
        Err(not_here())
    }
    #[cfg(any(target_os = "linux", windows))]
    uninstall(ctx, opts)
}

/// The checkout, absolute, after checking it is one.
fn checkout(ctx: &Ctx) -> Result<PathBuf> {
    crate::git::ops::open(&ctx.repo)?;
    ctx.repo
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", ctx.repo.display()))
}

/// What the unit needs to start, checked before anything is written: the
/// remote the watcher fetches from, and the policy file it was told to use.
fn preflight(ctx: &Ctx) -> Result<()> {
    let repo = crate::git::ops::open(&ctx.repo)?;
    let remote = &ctx.source.remote;
    if repo.find_remote(remote).is_err() {
        return Err(bad_field(
            "remote",
            format!(
                " {}: this checkout has no such remote, so the watcher could not fetch; \
                 add it (`git remote add {} URL`) or give the remote it has with --remote; \
                 nothing was installed",
                crate::describe::escaped(remote),
                crate::describe::escaped(remote)
            ),
        ));
    }
    if let Some(p) = &ctx.policy {
        if !p.is_file() {
            return Err(bad_field(
                "policy",
                format!(
                    " {}: no such file, so the watcher would refuse to start; nothing was installed",
                    crate::describe::escaped(&p.display().to_string())
                ),
            ));
        }
    }
    Ok(())
}
