//! The unit's text: the watcher's command line quoted for systemd, the
//! environment it carries, the account it runs as, and a written unit read back.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]
use super::ServiceOptions;
use crate::context::Ctx;
use crate::exit::{bad_field, bad_input};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The folder the unit goes to.
pub(super) fn unit_dir(opts: &ServiceOptions) -> Result<PathBuf> {
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
pub(super) fn no_control(what: &str, value: &str) -> Result<()> {
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
pub(super) fn quoted(what: &str, value: &str, dollar: bool) -> Result<String> {
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
pub(super) fn quote(word: &str) -> Result<String> {
    quoted("the ExecStart= word", word, true)
}

/// A path for a line that takes it unquoted (`WorkingDirectory=`): control
/// characters refused, `%` doubled, and a trailing `\` followed by `/` (the same
/// folder) so that the line does not continue onto the next one.
pub(super) fn plain_path(p: &Path) -> Result<String> {
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
pub(super) const CARRIED_ENV: [&str; 2] = ["SOAPY_SDR_PLUGIN_PATH", "SOAPY_SDR_ROOT"];

/// `Environment=` lines for [`CARRIED_ENV`] as set in this process.
pub(super) fn environment_lines() -> Result<String> {
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
pub(super) fn watcher_words(ctx: &Ctx, interval: f64, exe: String, repo: String) -> Vec<String> {
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
         # The radio locks every rxnode of this account shares, in and out of the\n\
         # service (docs/operator.md#one-process-per-radio).\n\
         ReadWritePaths=-/run/lock\n\
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
pub(super) fn run_as(opts: &ServiceOptions) -> Result<String> {
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
pub(super) fn uid_of(name: &str) -> Option<u32> {
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
pub(super) fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    0
}

/// The value of `key=` in a unit's text.
pub(super) fn unit_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .map(str::to_owned)
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
