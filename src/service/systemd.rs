//! The unit installed, reported and removed through `systemctl` (Linux only).
use super::unit::{current_uid, plain_path, unit_dir, unit_text, unit_value};
use super::{checkout, preflight, ServiceOptions, Status, UNIT_NAME};
use crate::context::Ctx;
use crate::exit::{bad_field, Outcome};
use anyhow::{Context, Result};
use std::path::Path;

/// `systemctl [--user] ARGS…`; its trimmed stdout, or an error naming the command.
pub(super) fn systemctl(user: bool, args: &[&str]) -> Result<String> {
    let mut cmd = std::process::Command::new("systemctl");
    if user {
        cmd.arg("--user");
    }
    cmd.args(args);
    let out = cmd
        .output()
        .with_context(|| format!("cannot run systemctl {}", args.join(" ")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() && !matches!(args.first(), Some(&"is-active" | &"is-enabled")) {
        anyhow::bail!(
            "systemctl {}{} failed: {}",
            if user { "--user " } else { "" },
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(stdout)
}

/// Whether systemd runs this machine (as `sd_booted()` tells it).
pub(super) fn systemd_running() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// What to do without systemd.
pub(super) const NO_SYSTEMD: &str =
    "write the unit with --unit-dir DIR and activate it where systemd runs, \
     or run `rxnode watch --no-prompt` under this machine's own supervisor \
     (docs/operator.md#unattended-operation)";

/// `systemd-analyze verify` on `text` written as a unit of its own (in a temp
/// folder): `Ok(false)` when the tool is not there, an error with what it said
/// when the unit would not load.
pub(super) fn verify(text: &str) -> Result<bool> {
    let dir = tempfile::tempdir().context("cannot make a temp folder to verify the unit")?;
    let unit = dir.path().join(UNIT_NAME);
    rxnode_dsp::write_regular(&unit, text.as_bytes())
        .with_context(|| format!("cannot write {}", unit.display()))?;
    let out = match std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).context("cannot run systemd-analyze verify"),
    };
    let said = String::from_utf8_lossy(&out.stderr);
    let ours: Vec<&str> = said.lines().filter(|l| l.contains(UNIT_NAME)).collect();
    if !out.status.success() || !ours.is_empty() {
        return Err(crate::exit::refused(format!(
            "systemd-analyze verify refuses the unit, so it could not start; nothing was installed: {}",
            crate::describe::escaped(said.trim())
        )));
    }
    Ok(true)
}

pub(super) fn install(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    use std::fmt::Write as _;
    if !(opts.interval.is_finite() && opts.interval > 0.0 && opts.interval <= 86_400.0) {
        return Err(bad_field(
            "interval",
            format!(
                " {}: must be a number of seconds in (0, 86400]",
                opts.interval
            ),
        ));
    }
    if opts.user && opts.run_as.is_some() {
        return Err(bad_field(
            "run_as",
            ": a user unit runs as the user whose manager runs it; --run-as is for a system unit",
        ));
    }
    if opts.user && current_uid() == 0 {
        return Err(bad_field(
            "user",
            ": a user unit of root would run the watcher as root; install it as the operator, \
             or a system unit with --run-as ACCOUNT",
        ));
    }
    let repo = checkout(ctx)?;
    preflight(ctx)?;
    if opts.unit_dir.is_none() && !systemd_running() {
        return Err(crate::exit::refused(format!(
            "systemd is not running on this machine (no /run/systemd/system), so there is \
             nothing to install the unit into; nothing was written: {NO_SYSTEMD}"
        )));
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("cannot find the rxnode program's own path")?;
    let text = unit_text(ctx, opts, &exe, &repo)?;
    let verified = verify(&text)?;
    let dir = unit_dir(opts)?;
    let path = dir.join(UNIT_NAME);
    let before = crate::store::fsutil::read_to_string(&path).ok();
    let created_dir = !dir.exists();
    let wrote = before.as_deref() != Some(text.as_str());
    // The report, printed once everything is done (`--json`: the fields).
    let mut human = String::new();
    let unit = if !wrote {
        let _ = writeln!(
            human,
            "{} is already installed and unchanged",
            path.display()
        );
        "unchanged"
    } else {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        crate::store::fsutil::write_atomic(&path, text.as_bytes())?;
        let done = if before.is_some() {
            "replaced"
        } else {
            "wrote"
        };
        let _ = writeln!(human, "{done} {}", path.display());
        done
    };
    if !verified {
        human.push_str("(systemd-analyze is not installed here: the unit was not verified)\n");
    }
    let u = if opts.user { "--user " } else { "" };
    if opts.unit_dir.is_none() {
        let activated = systemctl(opts.user, &["daemon-reload"])
            .and_then(|_| systemctl(opts.user, &["enable", "--now", UNIT_NAME]));
        if let Err(e) = activated {
            // Undo: the unit as it was before (or none), and systemd told so.
            let undone = match &before {
                Some(b) if wrote => crate::store::fsutil::write_atomic(&path, b.as_bytes()),
                Some(_) => Ok(()),
                None => std::fs::remove_file(&path).map_err(anyhow::Error::from),
            };
            if created_dir {
                let _ = std::fs::remove_dir(&dir);
            }
            let _ = systemctl(opts.user, &["daemon-reload"]);
            let what = match undone {
                Ok(()) if before.is_some() => "the previous unit was put back".to_owned(),
                Ok(()) => format!("{} was removed again", path.display()),
                Err(u) => format!("and {} could not be undone: {u:#}", path.display()),
            };
            return Err(anyhow::anyhow!(
                "{}; {what}. If this machine has no systemd {}manager to talk to: {NO_SYSTEMD}",
                crate::describe::escaped(&format!("{e:#}")),
                if opts.user { "user " } else { "" }
            ));
        }
    }
    let paths = ctx.paths();
    let entry = crate::store::ledger::Entry::new(crate::store::ledger::Event::ServiceInstalled {
        unit: path.display().to_string(),
        user: opts.user,
    });
    if let Err(e) = crate::store::ledger::append(&paths, &entry) {
        tracing::warn!("cannot record the service in the ledger: {e:#}");
    }
    let started = opts.unit_dir.is_none();
    if !started {
        human.push_str("systemd was not told (--unit-dir); to start it now and at every boot:\n");
        let _ = writeln!(
            human,
            "  systemctl {u}daemon-reload && systemctl {u}enable --now {UNIT_NAME}"
        );
    } else {
        let _ = writeln!(
            human,
            "enabled and started {UNIT_NAME}; it restarts on failure. Approve tasks with \
             `rxnode review TASK_ID`; logs: journalctl {u}-u {UNIT_NAME}"
        );
        if opts.user {
            let _ = writeln!(
                human,
                "so that it runs without anyone logged in: loginctl enable-linger {}",
                std::env::var("USER").unwrap_or_else(|_| "$USER".into())
            );
        }
    }
    let report = super::ServiceReport::Installed {
        file: match unit {
            "wrote" => "written",
            other => other,
        }
        .to_owned(),
        started,
        unit: path.display().to_string(),
        user: opts.user,
        verified,
    };
    ctx.report(&report, |_| human)?;
    Ok(Outcome::Done)
}

pub(super) fn status(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let path = unit_dir(opts)?.join(UNIT_NAME);
    let text = crate::store::fsutil::read_to_string(&path).ok();
    let repo = checkout(ctx).ok();
    let working_directory = text
        .as_deref()
        .and_then(|t| unit_value(t, "WorkingDirectory"));
    let this_checkout = match (&working_directory, &repo) {
        (Some(w), Some(r)) => plain_path(r).is_ok_and(|r| &r == w),
        _ => false,
    };
    let ask = |what: &str| {
        (opts.unit_dir.is_none())
            .then(|| systemctl(opts.user, &[what, UNIT_NAME]).ok())
            .flatten()
    };
    let s = Status {
        unit: path.display().to_string(),
        installed: text.is_some(),
        exec_start: text.as_deref().and_then(|t| unit_value(t, "ExecStart")),
        working_directory,
        this_checkout,
        active: ask("is-active"),
        enabled: ask("is-enabled"),
    };
    ctx.report(&s, render_service_status)?;
    Ok(Outcome::Done)
}

/// `service status` for a person.
pub(super) fn render_service_status(s: &Status) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    if !s.installed {
        let _ = writeln!(
            text,
            "not installed: {} does not exist (`rxnode service install`)",
            s.unit
        );
    } else {
        let _ = writeln!(text, "installed: {}", s.unit);
        if let Some(w) = &s.working_directory {
            let note = if s.this_checkout {
                " (this checkout)"
            } else {
                " (another checkout)"
            };
            let _ = writeln!(text, "watches:   {w}{note}");
        }
        if let Some(a) = &s.active {
            let _ = writeln!(text, "active:    {a}");
        }
        if let Some(e) = &s.enabled {
            let _ = writeln!(text, "enabled:   {e}");
        }
    }
    text
}

pub(super) fn uninstall(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let path = unit_dir(opts)?.join(UNIT_NAME);
    if std::fs::symlink_metadata(&path).is_err() {
        let report = super::ServiceReport::Removed {
            removed: false,
            stopped: false,
            unit: path.display().to_string(),
        };
        ctx.report(&report, |_| {
            format!("not installed: {} does not exist\n", path.display())
        })?;
        return Ok(Outcome::Done);
    }
    if opts.unit_dir.is_none() {
        systemctl(opts.user, &["disable", "--now", UNIT_NAME])?;
    }
    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
    let stopped = opts.unit_dir.is_none();
    if stopped {
        systemctl(opts.user, &["daemon-reload"])?;
    }
    let paths = ctx.paths();
    let entry = crate::store::ledger::Entry::new(crate::store::ledger::Event::ServiceUninstalled {
        unit: path.display().to_string(),
    });
    if let Err(e) = crate::store::ledger::append(&paths, &entry) {
        tracing::warn!("cannot record the removal in the ledger: {e:#}");
    }
    let report = super::ServiceReport::Removed {
        removed: true,
        stopped,
        unit: path.display().to_string(),
    };
    ctx.report(&report, |_| {
        if stopped {
            format!("stopped, disabled and removed {}\n", path.display())
        } else {
            format!("removed {}\n", path.display())
        }
    })?;
    Ok(Outcome::Done)
}
