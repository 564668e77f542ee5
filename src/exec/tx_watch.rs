//! `rxnode run`'s side of the TX guard process (docs/safety.md#the-tx-guard-process):
//! start it with the grant, heartbeat it, pass on a key-off request, and kill
//! it (SIGKILL) when it is stopped (SIGSTOP, a debugger) or still alive past the
//! permit's deadline. The guard, for its part, keys off when this process stops
//! heartbeating or dies ([`crate::exec::tx_guard`]). On Windows the guard is in
//! a kill-on-close Job object that only this process holds
//! ([`crate::exec::guard_job`]), a suspended guard is seen by its lateness, and
//! the guard's own kill-timer process ([`crate::exec::guard_timer`]) ends it at
//! its deadline while both are suspended.
use crate::exec::steps::StepCtx;
use crate::exec::tx::unix_to_iso as unix_iso;
use crate::exec::tx::GuardOutcome;
use crate::exec::tx_guard::{GuardMsg, HEARTBEAT_EVERY, PARENT_KILL_GRACE};
use crate::result::Status;
use crate::store::ledger::{Entry, Event};
use anyhow::{anyhow, Context, Result};
use rxnode_interlock::{TxGrant, TxToneStep};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the guard is looked at.
const WATCH_EVERY: Duration = Duration::from_millis(10);
/// How long the guard may take to open, tune and key the radio before it is
/// killed (nothing is on air before the key-off bound starts).
pub(crate) const SETUP_LIMIT: Duration = Duration::from_secs(30);

/// Start the guard for `grant`, watch it to its end, and say how it ended.
pub(crate) fn run_guard(
    s: &StepCtx,
    grant: &TxGrant,
    t: &TxToneStep,
    key_off: &AtomicBool,
) -> Result<GuardOutcome> {
    let mut child = spawn(s, grant)?;
    // Windows has no parent-death signal: the guard goes in a Job object that kills
    // it when this process's handle closes, however this process ends. Without it
    // nothing is keyed.
    #[cfg(windows)]
    let _job = match crate::exec::guard_job::kill_with_me(&child) {
        Ok(job) => job,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(GuardOutcome::NotKeyed {
                status: Status::Blocked,
                detail: format!(
                    "the TX guard process could not be tied to rxnode run (a kill-on-close Job object: {e}), so it could outlive this process: not transmitting"
                ),
            });
        }
    };
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| anyhow!("tx-guard: no pipe to its stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow!("tx-guard: no pipe from its stdout"))?;
    let line = serde_json::to_string(grant).context("tx-guard: grant")?;
    let _ = writeln!(stdin, "{line}");
    let (to_me, msgs) = mpsc::channel();
    let reader = std::thread::Builder::new()
        .name("rxnode-guard-reader".into())
        .spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                if let Ok(m) = serde_json::from_str::<GuardMsg>(&l) {
                    if to_me.send(m).is_err() {
                        break;
                    }
                }
            }
        })
        .context("tx-guard: cannot start its reader")?;
    let duration = Duration::try_from_secs_f64(t.duration_s).unwrap_or(Duration::MAX);
    // The run journal (docs/protocol.md#interrupted-runs): when it keyed.
    let journal = |keyed_at: f64| {
        crate::exec::ledger_note(
            s.paths,
            &Entry::new(Event::TxKeyed {
                step: grant.step_index + 1,
                keyed_at: unix_iso(keyed_at),
            })
            .task(&grant.task_id),
        );
    };
    let w = watch(&mut child, &mut stdin, &msgs, key_off, duration, &journal);
    drop(stdin);
    let _ = reader.join();
    let mut w = w?;
    for m in msgs.try_iter() {
        w.take(m);
    }
    // …and how the guard ended.
    let exit = match (&w.killed, &w.exit) {
        (Some(why), Some(st)) => format!("{why} ({st})"),
        (None, Some(st)) => st.clone(),
        (Some(why), None) => why.clone(),
        (None, None) => "unknown".to_owned(),
    };
    crate::exec::ledger_note(
        s.paths,
        &Entry::new(Event::TxGuardExit {
            step: grant.step_index + 1,
            exit,
        })
        .task(&grant.task_id),
    );
    Ok(w.outcome())
}

/// Start `rxnode tx-guard` with this process's node settings.
fn spawn(s: &StepCtx, grant: &TxGrant) -> Result<Child> {
    let ctx = s.ctx;
    let repo = std::fs::canonicalize(&s.paths.repo).unwrap_or_else(|_| s.paths.repo.clone());
    let mut cmd = own_binary()?;
    cmd.arg("--repo").arg(repo);
    if ctx.sim {
        cmd.arg("--sim");
    }
    if let Some(p) = &ctx.policy {
        cmd.arg("--policy").arg(p);
    }
    cmd.args(["--remote", &ctx.source.remote])
        .args(["--branch", &ctx.source.branch])
        .args(["--task-path", &ctx.source.task_path])
        .arg("tx-guard")
        .arg(&grant.task_id)
        .args(["--step", &grant.step_index.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd.spawn()
        .context("tx-guard: cannot start the guard process")
}

/// A command that runs this very program, not whatever its path names now.
///
/// Linux: `/proc/self/exe`, which the kernel resolves in the new process (a copy
/// of this one until the exec) to the file this process runs, even when a new
/// binary was renamed over the path or the file was deleted (an upgrade between
/// the `AUTHORIZE RF TX` prompt and the key-up): the guard is always the code that
/// verified the phrase, and the one authorization is never spent on a guard that
/// could not start. argv[0] stays the path, for `ps`. Elsewhere the path
/// (docs/safety.md#the-tx-guard-process says what that leaves open).
fn own_binary() -> Result<Command> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("/proc/self/exe");
        if let Ok(path) = std::env::current_exe() {
            cmd.arg0(path);
        }
        Ok(cmd)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let exe = std::env::current_exe().context("tx-guard: cannot find rxnode's own binary")?;
        Ok(Command::new(exe))
    }
}

/// What the parent saw of the guard.
#[derive(Default)]
struct Watched {
    keyed: Option<(Instant, f64)>,
    last: Option<GuardMsg>,
    killed: Option<String>,
    exit: Option<String>,
    #[cfg(windows)]
    exit_code: Option<i32>,
}

impl Watched {
    fn take(&mut self, m: GuardMsg) {
        match m {
            GuardMsg::Keyed { at_unix_s } => self.keyed = Some((Instant::now(), at_unix_s)),
            // The report stands; the guard then ended its process to key off.
            GuardMsg::Ending { .. } if matches!(self.last, Some(GuardMsg::Done { .. })) => {}
            m => self.last = Some(m),
        }
    }

    fn outcome(self) -> GuardOutcome {
        let keyed_at = self.keyed.map(|(_, u)| u);
        match (self.killed, self.last) {
            (
                None,
                Some(GuardMsg::Done {
                    report,
                    keyed_off_by,
                }),
            ) => GuardOutcome::Done {
                report,
                keyed_off_by,
            },
            (None, Some(GuardMsg::NotKeyed { status, detail })) => GuardOutcome::NotKeyed {
                status: match status.as_str() {
                    "NOT RUN" => Status::NotRun,
                    "FAIL" => Status::Fail,
                    _ => Status::Blocked,
                },
                detail,
            },
            (Some(why), _) => GuardOutcome::Ended { keyed_at, why },
            (None, Some(GuardMsg::Ending { why })) => GuardOutcome::Ended {
                keyed_at,
                why: format!("the guard process ended itself: {why}"),
            },
            #[cfg(windows)]
            (None, _)
                if self.exit_code
                    == i32::try_from(crate::exec::guard_timer::TIMER_KILL_CODE).ok() =>
            {
                GuardOutcome::Ended {
                    keyed_at,
                    why: format!(
                        "the TX guard's kill-timer process ended it at its deadline (the permit's duration + {} ms, or the {} s set-up bound): neither the guard nor rxnode run ended it in time (both suspended?)",
                        crate::exec::tx_guard::TIMER_KILL_GRACE.as_millis(),
                        SETUP_LIMIT.as_secs()
                    ),
                }
            }
            (None, _) => GuardOutcome::Ended {
                keyed_at,
                why: format!(
                    "the guard process ended without a report ({})",
                    self.exit.unwrap_or_else(|| "unknown exit".to_owned())
                ),
            },
        }
    }
}

/// Heartbeat and watch the guard until it exits.
fn watch(
    child: &mut Child,
    stdin: &mut ChildStdin,
    msgs: &mpsc::Receiver<GuardMsg>,
    key_off: &AtomicBool,
    duration: Duration,
    journal: &dyn Fn(f64),
) -> Result<Watched> {
    let started = Instant::now();
    let mut w = Watched::default();
    let mut beat = Instant::now();
    let mut asked_off = false;
    let _ = writeln!(stdin, "h");
    loop {
        if let Some(status) = child.try_wait().context("tx-guard: wait")? {
            w.exit = Some(status.to_string());
            #[cfg(windows)]
            {
                w.exit_code = status.code();
            }
            return Ok(w);
        }
        let was_keyed = w.keyed.is_some();
        for m in msgs.try_iter() {
            w.take(m);
        }
        if let (false, Some((_, at))) = (was_keyed, w.keyed) {
            journal(at);
        }
        let now = Instant::now();
        if !asked_off && key_off.load(Ordering::SeqCst) {
            asked_off = true;
            let _ = writeln!(stdin, "k");
        }
        if now.duration_since(beat) >= HEARTBEAT_EVERY {
            beat = now;
            let _ = writeln!(stdin, "h");
        }
        let kill_why = if stopped(child.id()) {
            Some("the guard process was stopped (SIGSTOP, a debugger): rxnode killed it".to_owned())
        } else {
            match w.keyed {
                Some((at, _)) if now >= at + duration + PARENT_KILL_GRACE => Some(format!(
                    "the guard process was still alive {:.3} s after keying (permit {:.3} s): rxnode killed it",
                    now.duration_since(at).as_secs_f64(),
                    duration.as_secs_f64()
                )),
                None if now >= started + SETUP_LIMIT + duration => Some(format!(
                    "the guard process did not key the radio within {} s: rxnode killed it",
                    SETUP_LIMIT.as_secs()
                )),
                _ => None,
            }
        };
        if let Some(why) = kill_why {
            tracing::error!("{why}");
            let _ = child.kill();
            let status = child.wait().context("tx-guard: wait")?;
            w.killed = Some(why);
            w.exit = Some(status.to_string());
            return Ok(w);
        }
        std::thread::sleep(WATCH_EVERY);
    }
}

/// Whether process `pid` is stopped (job control or traced).
fn stopped(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(stat) = crate::store::fsutil::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        // The state is the first field after the command name's closing parenthesis.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|c| c == 'T' || c == 't')
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}
