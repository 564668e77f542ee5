//! `rxnode service install|status|uninstall` (docs/operator.md#unattended-operation):
//! a systemd unit that runs `rxnode watch --no-prompt` in this checkout and restarts
//! it when it fails. The unit holds no secrets: the node key, the policy and the
//! state stay in the checkout's `.local/`. On other systems the command says what
//! to do instead (the Windows Task Scheduler: docs/operator.md#windows-task-scheduler).
// Off Linux the commands only say what to do instead: the unit helpers stay unused there.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]
use crate::context::Ctx;
use crate::exit::{bad_field, bad_input, Outcome};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[cfg(windows)]
use windows::{install, status, uninstall};

/// The unit's file name.
pub(crate) const UNIT_NAME: &str = "rxnode-watch.service";

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
    bad_input(
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

/// The folder the unit goes to.
fn unit_dir(opts: &ServiceOptions) -> Result<PathBuf> {
    if let Some(d) = &opts.unit_dir {
        return Ok(d.clone());
    }
    if !opts.user {
        return Ok(PathBuf::from("/etc/systemd/system"));
    }
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(c) => PathBuf::from(c),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|h| PathBuf::from(h).join(".config"))
            .ok_or_else(|| {
                bad_field(
                    "user",
                    ": neither XDG_CONFIG_HOME nor HOME is set; give --unit-dir",
                )
            })?,
    };
    Ok(config.join("systemd").join("user"))
}

/// Refuse a value a unit line cannot carry: control characters (a newline
/// would start another setting), naming the value.
fn no_control(what: &str, value: &str) -> Result<()> {
    if value.chars().any(char::is_control) {
        return Err(bad_input(format!(
            "{what} {} holds a control character and cannot be written into a systemd unit",
            crate::describe::escaped(value)
        )));
    }
    Ok(())
}

/// A value quoted for systemd (systemd.syntax(7)): `"…"` with `\` and `"`
/// escaped and `%` doubled (specifiers); `$` doubled too when `dollar` (an
/// `ExecStart=` word, where `$NAME` is a variable). A quoted value never ends a
/// line with `\`, so it cannot join the next line.
fn quoted(what: &str, value: &str, dollar: bool) -> Result<String> {
    no_control(what, value)?;
    let mut q = String::with_capacity(value.len() + 2);
    q.push('"');
    for c in value.chars() {
        match c {
            '\\' => q.push_str("\\\\"),
            '"' => q.push_str("\\\""),
            '%' => q.push_str("%%"),
            '$' if dollar => q.push_str("$$"),
            c => q.push(c),
        }
    }
    q.push('"');
    Ok(q)
}

/// One `ExecStart=` word ([`quoted`], `$` doubled).
fn quote(word: &str) -> Result<String> {
    quoted("the ExecStart= word", word, true)
}

/// A path for a line that takes it unquoted (`WorkingDirectory=`): control
/// characters refused, `%` doubled, and a trailing `\` followed by `/` (the same
/// folder) so that the line does not continue onto the next one.
fn plain_path(p: &Path) -> Result<String> {
    let s = p
        .to_str()
        .ok_or_else(|| bad_input(format!("{} is not UTF-8", p.display())))?;
    no_control("the path", s)?;
    let mut out = s.replace('%', "%%");
    if out.ends_with('\\') {
        out.push('/');
    }
    Ok(out)
}

/// The variables of the installing shell that tell SoapySDR where its modules
/// are; the unit carries those that are set, so the service finds the same radios.
const CARRIED_ENV: [&str; 2] = ["SOAPY_SDR_PLUGIN_PATH", "SOAPY_SDR_ROOT"];

/// `Environment=` lines for [`CARRIED_ENV`] as set in this process.
fn environment_lines() -> Result<String> {
    let mut out = String::new();
    for k in CARRIED_ENV {
        let Some(v) = std::env::var_os(k) else {
            continue;
        };
        let v = v.into_string().map_err(|_| {
            bad_input(format!(
                "{k} is not UTF-8 and cannot be written into a systemd unit"
            ))
        })?;
        // Environment= takes no variables: only `%` is special besides the quoting.
        out.push_str(&format!(
            "Environment={}\n",
            quoted(k, &format!("{k}={v}"), false)?
        ));
    }
    Ok(out)
}

/// The command line of the unattended watcher a service runs (systemd unit or
/// Windows scheduled task): this binary on this checkout, with the task source,
/// policy and `--sim` of the installing command.
fn watcher_words(ctx: &Ctx, interval: f64, exe: String, repo: String) -> Vec<String> {
    let mut words: Vec<String> = vec![
        exe,
        "--repo".into(),
        repo,
        "--remote".into(),
        ctx.source.remote.clone(),
        "--branch".into(),
        ctx.source.branch.clone(),
        "--task-path".into(),
        ctx.source.task_path.clone(),
    ];
    if let Some(p) = &ctx.policy {
        words.push("--policy".into());
        words.push(p.to_string_lossy().into_owned());
    }
    if ctx.sim {
        words.push("--sim".into());
    }
    words.extend([
        "watch".into(),
        "--no-prompt".into(),
        "--interval".into(),
        format!("{interval}"),
    ]);
    words
}

/// The unit's text for this checkout and this binary.
pub(crate) fn unit_text(
    ctx: &Ctx,
    opts: &ServiceOptions,
    exe: &Path,
    repo: &Path,
) -> Result<String> {
    let words = watcher_words(
        ctx,
        opts.interval,
        exe.to_string_lossy().into_owned(),
        repo.to_string_lossy().into_owned(),
    );
    let exec = words
        .iter()
        .map(|w| quote(w))
        .collect::<Result<Vec<_>>>()?
        .join(" ");
    let repo_line = plain_path(repo)?;
    let repo_quoted = quoted("the checkout", &repo.to_string_lossy(), false)?;
    let user_line = if opts.user {
        String::new()
    } else {
        // A system unit runs as the operator: the trust root accepts only the
        // operator's own files under .local/.
        format!("User={}\n", run_as(opts)?)
    };
    let env = environment_lines()?;
    // A system unit waits for the network (the watcher fetches); a user manager
    // has no network-online.target, and the watcher backs off until it can fetch.
    let (wanted_by, network) = if opts.user {
        ("default.target", "")
    } else {
        (
            "multi-user.target",
            "Wants=network-online.target\nAfter=network-online.target\n",
        )
    };
    Ok(format!(
        "# Written by `rxnode service install` (rxnode docs/operator.md#unattended-operation).\n\
         # Runs the rxnode watcher of this checkout unattended: it queues new tasks and never\n\
         # prompts; approve them with `rxnode review TASK_ID`. It holds no secrets: the node\n\
         # key, the policy and the state stay in the checkout's .local/.\n\
         [Unit]\n\
         Description=rxnode watcher (unattended) for {repo_quoted}\n\
         {network}\
         \n\
         [Service]\n\
         Type=simple\n\
         {user_line}\
         WorkingDirectory={repo_line}\n\
         ExecStart={exec}\n\
         {env}\
         StandardInput=null\n\
         Restart=on-failure\n\
         RestartSec=15\n\
         # 2 (bad usage or input) and 3 (refused: policy, trust root) need the operator;\n\
         # restarting would only repeat them.\n\
         RestartPreventExitStatus=2 3\n\
         KillSignal=SIGTERM\n\
         TimeoutStopSec=30\n\
         # Hardening a radio agent lives with: the checkout is the only place it\n\
         # writes; /dev stays visible (USB radios), so no PrivateDevices=.\n\
         NoNewPrivileges=yes\n\
         ProtectSystem=strict\n\
         ReadWritePaths={repo_quoted}\n\
         ProtectHome=read-only\n\
         PrivateTmp=yes\n\
         ProtectKernelTunables=yes\n\
         ProtectKernelModules=yes\n\
         ProtectKernelLogs=yes\n\
         ProtectControlGroups=yes\n\
         ProtectHostname=yes\n\
         RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n\
         RestrictNamespaces=yes\n\
         RestrictSUIDSGID=yes\n\
         LockPersonality=yes\n\
         SystemCallArchitectures=native\n\
         CapabilityBoundingSet=\n\
         RemoveIPC=yes\n\
         PrivateMounts=yes\n\
         ProtectProc=invisible\n\
         SystemCallFilter=@system-service\n\
         SystemCallErrorNumber=EPERM\n\
         UMask=0077\n\
         \n\
         [Install]\n\
         WantedBy={wanted_by}\n"
    ))
}

/// The `User=` of a system unit: `--run-as` (an existing account, not root),
/// else the installing user — refused when that is root: the watcher never runs
/// as root.
fn run_as(opts: &ServiceOptions) -> Result<String> {
    match &opts.run_as {
        Some(name) => match uid_of(name) {
            Some(0) => Err(bad_field(
                "run_as",
                format!(
                    " {}: the watcher never runs as root",
                    crate::describe::escaped(name)
                ),
            )),
            Some(_) => Ok(name.clone()),
            None => Err(bad_field(
                "run_as",
                format!(
                    " {}: no such account on this machine",
                    crate::describe::escaped(name)
                ),
            )),
        },
        None if current_uid() == 0 => Err(bad_field(
            "run_as",
            ": installing as root: the watcher never runs as root; give --run-as ACCOUNT \
             (the operator account that owns the checkout, or one made for it: \
             `useradd --system rxnode`, then give it the checkout and the radios' device groups)",
        )),
        None => Ok(current_uid().to_string()),
    }
}

/// The user ID of account `name`, if there is one.
fn uid_of(name: &str) -> Option<u32> {
    #[cfg(unix)]
    {
        let c = std::ffi::CString::new(name).ok()?;
        // SAFETY: `passwd` is plain data (integers and pointers); all zero is a valid value.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut out: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call and the buffer length is its own.
        let r =
            unsafe { libc::getpwnam_r(c.as_ptr(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
        (r == 0 && !out.is_null()).then_some(pw.pw_uid)
    }
    #[cfg(not(unix))]
    {
        let _ = name;
        None
    }
}

/// This process's user ID (unix); system units run as it.
fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    0
}

/// `systemctl [--user] ARGS…`; its trimmed stdout, or an error naming the command.
fn systemctl(user: bool, args: &[&str]) -> Result<String> {
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

/// Whether systemd runs this machine (as `sd_booted()` tells it).
fn systemd_running() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// What to do without systemd.
const NO_SYSTEMD: &str = "write the unit with --unit-dir DIR and activate it where systemd runs, \
     or run `rxnode watch --no-prompt` under this machine's own supervisor \
     (docs/operator.md#unattended-operation)";

/// `systemd-analyze verify` on `text` written as a unit of its own (in a temp
/// folder): `Ok(false)` when the tool is not there, an error with what it said
/// when the unit would not load.
fn verify(text: &str) -> Result<bool> {
    let dir = tempfile::tempdir().context("cannot make a temp folder to verify the unit")?;
    let unit = dir.path().join(UNIT_NAME);
    std::fs::write(&unit, text).with_context(|| format!("cannot write {}", unit.display()))?;
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

#[cfg(target_os = "linux")]
fn install(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
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
    let before = std::fs::read_to_string(&path).ok();
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
    let entry = crate::store::ledger::Entry::new("service_installed")
        .detail(serde_json::json!({"unit": path.display().to_string(), "user": opts.user}));
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
    let report = serde_json::json!({
        "unit": path.display().to_string(),
        "user": opts.user,
        "file": match unit { "wrote" => "written", other => other },
        "verified": verified,
        "started": started,
    });
    ctx.report(&report, |_| human)?;
    Ok(Outcome::Done)
}

/// The value of `key=` in a unit's text.
fn unit_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_owned)
}

#[cfg(target_os = "linux")]
fn status(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let path = unit_dir(opts)?.join(UNIT_NAME);
    let text = std::fs::read_to_string(&path).ok();
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
fn render_service_status(s: &Status) -> String {
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

#[cfg(target_os = "linux")]
fn uninstall(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
    let path = unit_dir(opts)?.join(UNIT_NAME);
    if std::fs::symlink_metadata(&path).is_err() {
        let report = serde_json::json!({"unit": path.display().to_string(), "removed": false, "stopped": false});
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
    let entry = crate::store::ledger::Entry::new("service_uninstalled")
        .detail(serde_json::json!({"unit": path.display().to_string()}));
    if let Err(e) = crate::store::ledger::append(&paths, &entry) {
        tracing::warn!("cannot record the removal in the ledger: {e:#}");
    }
    let report = serde_json::json!({"unit": path.display().to_string(), "removed": true, "stopped": stopped});
    ctx.report(&report, |_| {
        if stopped {
            format!("stopped, disabled and removed {}\n", path.display())
        } else {
            format!("removed {}\n", path.display())
        }
    })?;
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_systemd() {
        assert_eq!(quote("/a b/rxnode").unwrap(), "\"/a b/rxnode\"");
        assert_eq!(quote(r#"x"y\z"#).unwrap(), r#""x\"y\\z""#);
        assert_eq!(quote("100%$HOME").unwrap(), "\"100%%$$HOME\"");
        let e = quote("a\nExecStartPre=/bin/evil").unwrap_err();
        assert!(format!("{e}").contains("control character"), "{e}");
    }

    #[test]
    fn an_unquoted_path_never_ends_a_line_with_a_backslash() {
        assert_eq!(plain_path(Path::new("/lab/rx")).unwrap(), "/lab/rx");
        assert_eq!(plain_path(Path::new("/lab/rx\\")).unwrap(), "/lab/rx\\/");
        assert_eq!(plain_path(Path::new("/lab/100%")).unwrap(), "/lab/100%%");
        assert_eq!(
            quoted("x", "A=1%$\"\\", false).unwrap(),
            "\"A=1%%$\\\"\\\\\""
        );
    }

    #[test]
    fn unit_values_are_read_back() {
        let t = "[Service]\nWorkingDirectory=/lab/rx\nExecStart=\"/bin/rxnode\" \"watch\"\n";
        assert_eq!(
            unit_value(t, "WorkingDirectory").as_deref(),
            Some("/lab/rx")
        );
        assert_eq!(
            unit_value(t, "ExecStart").as_deref(),
            Some("\"/bin/rxnode\" \"watch\"")
        );
        assert_eq!(unit_value(t, "User"), None);
    }
}

/// Windows: the watcher runs from the Task Scheduler, at log on, as the operator
/// (docs/operator.md#windows-task-scheduler). `install` prints the one
/// `schtasks` command line that registers it; `status` and `uninstall` print
/// theirs. rxnode registers nothing itself: the operator runs the line (Windows
/// may ask for an administrator's terminal to create a log-on task).
#[cfg(windows)]
mod windows {
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
        let words = super::watcher_words(ctx, opts.interval, exe, repo);
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
        let report = serde_json::json!({"task": TASK_NAME, "command": command, "command_too_long": too_long});
        ctx.report(&report, |_| human)?;
        Ok(Outcome::Done)
    }

    pub(super) fn status(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
        let _ = opts;
        let command = format!("schtasks /Query /TN \"{TASK_NAME}\" /V /FO LIST");
        let report = serde_json::json!({"task": TASK_NAME, "command": command});
        ctx.report(&report, |_| {
            format!("Windows runs the watcher from the Task Scheduler; its state: {command}\n")
        })?;
        Ok(Outcome::Done)
    }

    pub(super) fn uninstall(ctx: &Ctx, opts: &ServiceOptions) -> Result<Outcome> {
        let _ = opts;
        let command =
            format!("schtasks /End /TN \"{TASK_NAME}\" & schtasks /Delete /F /TN \"{TASK_NAME}\"");
        let report = serde_json::json!({"task": TASK_NAME, "command": command});
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
}
