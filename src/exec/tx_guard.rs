//! The TX guard process: the one process that holds a keyed transmitter
//! (docs/safety.md#the-tx-guard-process).
//!
//! `rxnode run` never opens a TX stream itself. For the one authorized
//! `tx_tone` step it turns its verified `AUTHORIZE RF TX` into a single-use,
//! MAC'd [`TxGrant`] and starts this same binary again as a hidden internal
//! command (`rxnode tx-guard <ID> --step <n>`), handing the grant over a pipe.
//! The guard checks everything again (the approval's and the grant's MACs under
//! the node key, the approved text, the policy), makes the permit through the
//! interlock's one constructor and transmits. It keys off:
//!
//! - at its own deadline, from the monotonic clock: the permit's duration plus
//!   [`GUARD_GRACE`] after the stream's activation was asked, it ends the
//!   process (ending the process ends the transmission: "keyed" lasts until
//!   `deactivateStream` or the death of the process that holds the device);
//! - at the kernel's deadline (Linux): a SIGKILL timer armed before anything can
//!   key and moved to the permit's deadline at activation, which ends the process
//!   even while it is stopped together with its parent (`KERNEL_KILL_GRACE`);
//! - when its parent stops heartbeating for [`HEARTBEAT_TIMEOUT`] (a stopped
//!   or frozen `run`), when the pipe ends (the parent died; on Linux
//!   `PR_SET_PDEATHSIG` sends SIGTERM too) or when the parent asks;
//! - on every catchable signal that would end or stop it (SIGINT, SIGTERM,
//!   SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGTSTP, SIGTTIN,
//!   SIGTTOU, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF): the handler only asks for
//!   the key-off, and the guard exits after it.
//!
//! The parent, for its part, kills the guard (SIGKILL) when it sees it stopped
//! (SIGSTOP, a debugger) or late ([`crate::exec::tx`]). On Windows the guard is
//! in a kill-on-close Job object that only `run` holds ([`crate::exec::guard_job`]):
//! it dies with `run`, and Ctrl-C / Ctrl-Break / closing the console key it off;
//! in place of the kernel's deadline, a kill-timer process of its own ends it
//! at the permit's deadline while it and `run` are both suspended
//! ([`crate::exec::guard_timer`]).
use crate::context::Ctx;
use anyhow::{anyhow, Context, Result};
use rxnode_hw::TxReport;
use rxnode_interlock::{authorize, verify_tx_grant, TaskId, TxGrant};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// After the permit's duration, how long the guard lets the tone's own
/// teardown run before it ends the process; the parent's kill comes at
/// [`PARENT_KILL_GRACE`]. Both within the 0.5 s bound of docs/safety.md.
pub(crate) const GUARD_GRACE: Duration = Duration::from_millis(450);
/// After the permit's duration, when the kernel kills the guard (Linux): a
/// SIGKILL timer on the monotonic clock that fires whatever state the process
/// is in, also stopped together with `run`, when no code of either can act.
/// Between [`GUARD_GRACE`] and [`PARENT_KILL_GRACE`], so the guard's own end
/// and its report come first whenever the guard can run.
#[cfg(target_os = "linux")]
pub(crate) const KERNEL_KILL_GRACE: Duration = Duration::from_millis(470);
/// After the permit's duration, when the guard's kill-timer process ends it
/// (Windows, [`crate::exec::guard_timer`]): it runs whatever state the guard and
/// `run` are in, also both suspended. 10 ms before the Linux kernel's 470 ms: the
/// deadline reaches the timer through a pipe, a little after the activation.
#[cfg(windows)]
pub(crate) const TIMER_KILL_GRACE: Duration = Duration::from_millis(460);
/// When the parent kills a guard that is still alive after the permit.
pub(crate) const PARENT_KILL_GRACE: Duration = Duration::from_millis(490);
/// The parent heartbeats this often.
pub(crate) const HEARTBEAT_EVERY: Duration = Duration::from_millis(50);
/// Without a heartbeat for this long the guard keys off: its parent is stopped
/// or frozen.
pub(crate) const HEARTBEAT_TIMEOUT: Duration = Duration::from_millis(250);
/// After a key-off was asked, how long the guard waits for the driver before
/// it ends the process (the tone's own watcher gives up on a silent driver
/// after 150 ms and reports first).
const KEY_OFF_WAIT: Duration = Duration::from_millis(250);

/// One line from the guard to its parent (stdout, JSON per line).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum GuardMsg {
    /// The stream's activation was asked: from now on the transmitter may be keyed.
    Keyed {
        /// Wall clock, unix seconds.
        at_unix_s: f64,
    },
    /// The tone ended and the stream is torn down.
    Done {
        /// The driver's account.
        report: TxReport,
        /// What keyed it off early, if anything did (a signal name, or why the
        /// guard stopped trusting its parent).
        keyed_off_by: Option<String>,
    },
    /// Nothing was keyed: the step's status word and why.
    NotKeyed {
        /// `BLOCKED`, `NOT RUN` or `FAIL`.
        status: String,
        /// Why.
        detail: String,
    },
    /// The guard ends the process now, at its deadline or after a key-off the
    /// driver did not confirm: the transmitter stops with the process.
    Ending {
        /// Why.
        why: String,
    },
}

/// Why the guard keys off (0: it does not).
static KEY_OFF_REASON: AtomicI32 = AtomicI32::new(0);
static KEY_OFF: AtomicBool = AtomicBool::new(false);
const BY_PARENT_ASKED: i32 = -1;
const BY_PARENT_GONE: i32 = -2;
const BY_PARENT_SILENT: i32 = -3;
const BY_NO_KILL_TIMER: i32 = -4;

fn key_off(reason: i32) {
    let _ = KEY_OFF_REASON.compare_exchange(0, reason, Ordering::SeqCst, Ordering::SeqCst);
    KEY_OFF.store(true, Ordering::SeqCst);
}

fn reason_text() -> Option<String> {
    Some(match KEY_OFF_REASON.load(Ordering::SeqCst) {
        0 => return None,
        BY_PARENT_ASKED => "rxnode run (interrupt)".to_owned(),
        BY_PARENT_GONE => "rxnode run ended (pipe closed)".to_owned(),
        BY_PARENT_SILENT => "rxnode run stopped heartbeating (stopped or frozen)".to_owned(),
        #[cfg(not(windows))]
        BY_NO_KILL_TIMER => "the kernel's kill timer could not be set to the permit".to_owned(),
        #[cfg(windows)]
        BY_NO_KILL_TIMER => {
            "the guard's kill-timer process ended or could not be moved to the permit".to_owned()
        }
        #[cfg(unix)]
        sig => signals::name(sig).to_owned(),
        #[cfg(not(unix))]
        _ => "Ctrl-C".to_owned(),
    })
}

/// One message to the parent; a parent that is gone is not an error here (the
/// key-off is already asked by the pipe's end).
fn say(msg: &GuardMsg) {
    if let Ok(line) = serde_json::to_string(msg) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// End the process now, skipping every destructor and exit handler: the
/// transmitter ends with the process that holds it.
fn end_now(why: String) -> ! {
    say(&GuardMsg::Ending { why });
    #[cfg(windows)]
    // SAFETY: TerminateProcess on this process ends it at once, without DLL
    // detach handlers (a driver's could hang); nothing is touched after it.
    unsafe {
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};
        TerminateProcess(GetCurrentProcess(), 70);
    }
    #[cfg(unix)]
    // SAFETY: _exit(2) ends the process at once; nothing is touched after it.
    unsafe {
        libc::_exit(70)
    }
    #[cfg(not(unix))]
    std::process::exit(70)
}

/// The guard process (`rxnode tx-guard <ID> --step <n>`, started only by `rxnode run`).
pub fn cmd_tx_guard(ctx: &Ctx, task_id: &str, step: usize) -> Result<()> {
    let start = Instant::now();
    // Windows: the kill-timer process is started first, before the heartbeat is
    // watched (a process start can take a while on a loaded machine), armed to
    // the set-up bound; it is moved to the permit once the radio is open.
    #[cfg(windows)]
    let timer = crate::exec::guard_timer::KillTimer::arm(crate::exec::tx_watch::SETUP_LIMIT);
    #[cfg(not(windows))]
    let timer = NoTimer;
    #[cfg(unix)]
    signals::install();
    #[cfg(not(unix))]
    let _ = ctrlc::set_handler(|| key_off(1));
    let parent = parent_pid();
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .context("tx-guard: cannot read the grant")?;
    let grant: TxGrant = serde_json::from_str(line.trim_end())
        .map_err(|e| anyhow!("tx-guard: not a TX grant: {e}"))?;
    if grant.step_index != step {
        return Err(anyhow!("tx-guard: the grant is for another step"));
    }
    drop(stdin);
    // Heartbeats, the parent's key-off request and the pipe's end.
    let last_beat = Arc::new(AtomicU64::new(0));
    {
        let last_beat = Arc::clone(&last_beat);
        std::thread::Builder::new()
            .name("rxnode-guard-pipe".into())
            .spawn(move || read_parent(start, &last_beat))
            .context("tx-guard: cannot start the heartbeat reader")?;
    }
    // The deadline: set when the stream's activation is asked.
    let keyed_at = Arc::new(std::sync::Mutex::new(None::<(Instant, Duration)>));
    {
        let keyed_at = Arc::clone(&keyed_at);
        let last_beat = Arc::clone(&last_beat);
        std::thread::Builder::new()
            .name("rxnode-guard-watchdog".into())
            .spawn(move || watchdog(start, &last_beat, &keyed_at))
            .context("tx-guard: cannot start the watchdog")?;
    }
    match guarded_tone(ctx, task_id, &grant, parent, &keyed_at, timer) {
        Ok(msg) => {
            let hung =
                matches!(&msg, GuardMsg::Done { report, .. } if report.state_unknown_s.is_some());
            say(&msg);
            if hung {
                // The driver never confirmed the key-off and its call still holds
                // the stream: only the end of this process stops the transmitter.
                end_now(
                    "the driver did not confirm the key-off: ending the process keys the transmitter off"
                        .to_owned(),
                );
            }
        }
        Err(e) => say(&GuardMsg::NotKeyed {
            status: "BLOCKED".to_owned(),
            detail: format!("{e:#}"),
        }),
    }
    Ok(())
}

/// The TX guard's kill timer (`rxnode tx-guard-timer --guard <PID>`, started
/// only by the guard on Windows; [`crate::exec::guard_timer`]). Elsewhere the
/// kernel keeps that bound and the command refuses.
pub fn cmd_tx_guard_timer(guard: u32) -> Result<()> {
    #[cfg(windows)]
    {
        crate::exec::guard_timer::cmd_tx_guard_timer(guard)
    }
    #[cfg(not(windows))]
    {
        Err(anyhow!(
            "tx-guard-timer (--guard {guard}): only the TX guard on Windows starts it"
        ))
    }
}

/// The kill-timer process the guard starts first (Windows), or nothing where the
/// kernel keeps that bound.
#[cfg(windows)]
type EarlyTimer = Result<crate::exec::guard_timer::KillTimer>;
#[cfg(not(windows))]
type EarlyTimer = NoTimer;
/// No kill-timer process: the kernel's timer (Linux) keeps the bound.
#[cfg(not(windows))]
struct NoTimer;

/// Everything from the grant to the report.
fn guarded_tone(
    ctx: &Ctx,
    task_id: &str,
    grant: &TxGrant,
    parent: u32,
    keyed_at: &std::sync::Mutex<Option<(Instant, Duration)>>,
    timer: EarlyTimer,
) -> Result<GuardMsg> {
    #[cfg(not(windows))]
    let NoTimer = timer;
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let id = TaskId::parse(task_id).map_err(|e| anyhow!("{e}"))?;
    let st = crate::store::state::load(&paths)?;
    let approval = st
        .approvals
        .get(id.as_str())
        .cloned()
        .ok_or_else(|| anyhow!("task {id} is not approved"))?;
    let bytes = crate::validate::read_task_file(&paths.outbox(&id).join("TASK.md"))?;
    let task = crate::validate::check(&bytes, &ctx.source.branch)
        .map_err(|issues| anyhow!("{}", crate::validate::issue_list(&issues)))?;
    if task.id() != &id {
        return Err(anyhow!("the outbox text is task {}, not {id}", task.id()));
    }
    let key = crate::store::key::load(&paths)?
        .ok_or_else(|| anyhow!("this node has no key, so it made no approval"))?;
    let auth = verify_tx_grant(&task, &approval, key.bytes(), grant, parent)?;
    let (policy, _) = crate::store::policy::load(&paths)?;
    if KEY_OFF.load(Ordering::SeqCst) {
        return Ok(GuardMsg::NotKeyed {
            status: "NOT RUN".to_owned(),
            detail: format!(
                "interrupted before keying ({})",
                reason_text().unwrap_or_default()
            ),
        });
    }
    // `.local/STOP` put in place since `run` handed over the grant: nothing is opened.
    if let Some(why) = crate::exec::held(&paths) {
        return Ok(GuardMsg::NotKeyed {
            status: "NOT RUN".to_owned(),
            detail: why,
        });
    }
    let permit = authorize(&task, &approval, auth, grant.step_index, &policy)?;
    let duration = Duration::try_from_secs_f64(permit.duration_s()).unwrap_or(Duration::MAX);
    let device = permit.device().to_owned();
    let radio =
        rxnode_hw::RxRadio::open(&device).map_err(|e| anyhow!("device not available: {e}"))?;
    // Where this radio's tone really lands: its kept calibration moves the span.
    if let Some(why) = clock_error_refusal(&paths, &radio.probe(), &task, grant.step_index, &policy)
    {
        drop(radio);
        return Ok(GuardMsg::NotKeyed {
            status: "BLOCKED".to_owned(),
            detail: why,
        });
    }
    let mut txr = radio.into_tx(permit)?;
    // The kernel's bound (Linux): armed before anything can key, to the set-up bound
    // `run` applies, then moved to the permit's deadline when the activation is asked.
    #[cfg(target_os = "linux")]
    let kill_timer = match kill_timer::KillTimer::arm(
        crate::exec::tx_watch::SETUP_LIMIT
            .saturating_add(duration)
            .saturating_add(KERNEL_KILL_GRACE),
    ) {
        Ok(t) => t,
        Err(e) => {
            drop(txr);
            return Ok(GuardMsg::NotKeyed {
                status: "BLOCKED".to_owned(),
                detail: format!(
                    "the kernel's kill timer for the TX guard could not be set ({e}), so nothing would bound the transmission while rxnode run and its guard are both stopped: not transmitting"
                ),
            });
        }
    };
    // The same bound on Windows, kept by a process of its own (no kernel kill
    // timer there): armed before anything can key, moved at activation.
    #[cfg(windows)]
    let kill_timer = match timer.and_then(|t| {
        t.set(
            crate::exec::tx_watch::SETUP_LIMIT
                .saturating_add(duration)
                .saturating_add(TIMER_KILL_GRACE),
        )
        .map(|()| t)
    }) {
        Ok(t) => t,
        Err(e) => {
            drop(txr);
            return Ok(GuardMsg::NotKeyed {
                status: "BLOCKED".to_owned(),
                detail: format!(
                    "the TX guard's kill-timer process could not be started ({e:#}), so nothing would bound the transmission while rxnode run and its guard are both suspended: not transmitting"
                ),
            });
        }
    };
    let on_keyed = |at: Instant| {
        #[cfg(windows)]
        {
            let deadline = at
                .checked_add(duration.saturating_add(TIMER_KILL_GRACE))
                .map_or(Duration::MAX, |d| {
                    d.saturating_duration_since(Instant::now())
                });
            if kill_timer.set(deadline).is_err() {
                key_off(BY_NO_KILL_TIMER);
            }
        }
        #[cfg(target_os = "linux")]
        {
            let deadline = at
                .checked_add(duration.saturating_add(KERNEL_KILL_GRACE))
                .map_or(Duration::MAX, |d| {
                    d.saturating_duration_since(Instant::now())
                });
            if kill_timer.set(deadline).is_err() {
                key_off(BY_NO_KILL_TIMER);
            }
        }
        if let Ok(mut k) = keyed_at.lock() {
            *k = Some((at, duration));
        }
        say(&GuardMsg::Keyed {
            at_unix_s: unix_now(),
        });
    };
    // …and while the radio was being opened: never keyed.
    if let Some(why) = crate::exec::held(&paths) {
        drop(txr);
        return Ok(GuardMsg::NotKeyed {
            status: "NOT RUN".to_owned(),
            detail: why,
        });
    }
    match txr.transmit_tone_observed(&KEY_OFF, &on_keyed) {
        Ok(report) => Ok(GuardMsg::Done {
            report,
            keyed_off_by: reason_text(),
        }),
        Err(e) => Ok(GuardMsg::NotKeyed {
            status: "FAIL".to_owned(),
            detail: e.to_string(),
        }),
    }
}

/// Why the tone must not be keyed on this radio given its measured clock error
/// (`.local/calibration.json`, checked by the node key), or, never measured,
/// by up to `tx.unmeasured_clock_ppm`: `None` when the span it moves to stays
/// inside the policy. A kept
/// calibration that cannot be read blocks too: where the tone lands is then not
/// known, and the check fails closed.
fn clock_error_refusal(
    paths: &crate::store::paths::Paths,
    info: &rxnode_hw::DeviceInfo,
    task: &rxnode_interlock::ValidTask,
    step_index: usize,
    policy: &rxnode_interlock::Policy,
) -> Option<String> {
    use crate::store::calibration;
    let Some(rxnode_interlock::Step::TxTone(step)) =
        task.plan().and_then(|p| p.steps.get(step_index))
    else {
        return Some(format!(
            "plan step {} is not a tx_tone step",
            step_index + 1
        ));
    };
    match calibration::lookup(paths, calibration::Radio::of(info)) {
        Ok(None) => rxnode_interlock::check_tx_unmeasured_clock(step, policy)
            .err()
            .map(|e| e.to_string()),
        Ok(Some(m)) => match calibration::fresh_for_tx(&m, policy.rx.calibration_max_age_s) {
            Err(why) => Some(why),
            Ok(age) => {
                rxnode_interlock::check_tx_clock_error(step, policy, m.ppm, m.uncertainty_ppm)
                    .err()
                    .map(|e| format!("{e} (measured {} ago)", calibration::fmt_age(age)))
            }
        },
        Err(e) => Some(format!(
            "this radio's kept calibration cannot be read ({e:#}), so where its tone lands is not known: not transmitting"
        )),
    }
}

/// Read the parent's pipe: `h` is a heartbeat, `k` asks for the key-off, the
/// end of the pipe means the parent is gone.
fn read_parent(start: Instant, last_beat: &AtomicU64) {
    last_beat.store(start.elapsed().as_millis() as u64, Ordering::SeqCst);
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let mut buf = String::new();
    loop {
        buf.clear();
        match lines.read_line(&mut buf) {
            Ok(0) | Err(_) => {
                key_off(BY_PARENT_GONE);
                return;
            }
            Ok(_) => match buf.trim_end() {
                "k" => key_off(BY_PARENT_ASKED),
                _ => last_beat.store(start.elapsed().as_millis() as u64, Ordering::SeqCst),
            },
        }
    }
}

/// The guard's own clock: a silent parent keys the tone off; at the permit's
/// deadline, or when a key-off is not confirmed in time, the process ends.
fn watchdog(
    start: Instant,
    last_beat: &AtomicU64,
    keyed_at: &std::sync::Mutex<Option<(Instant, Duration)>>,
) {
    let mut off_asked: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(5));
        // Windows: the kill-timer process ended while the guard runs; nothing
        // outside would bound a transmission any more.
        #[cfg(windows)]
        if crate::exec::guard_timer::TIMER_ENDED.load(Ordering::SeqCst) {
            key_off(BY_NO_KILL_TIMER);
        }
        let now = Instant::now();
        let beat = start + Duration::from_millis(last_beat.load(Ordering::SeqCst));
        if now.duration_since(beat) > HEARTBEAT_TIMEOUT {
            key_off(BY_PARENT_SILENT);
        }
        if KEY_OFF.load(Ordering::SeqCst) && off_asked.is_none() {
            off_asked = Some(now);
        }
        let keyed = keyed_at.lock().ok().and_then(|k| *k);
        if let Some((at, duration)) = keyed {
            if now >= at + duration + GUARD_GRACE {
                end_now(format!(
                    "the permit's deadline ({:.3} s + {:.3} s) passed with the tone still running: ending the process keys the transmitter off",
                    duration.as_secs_f64(),
                    GUARD_GRACE.as_secs_f64()
                ));
            }
            if let Some(asked) = off_asked {
                if now >= asked + KEY_OFF_WAIT {
                    end_now(format!(
                        "key-off ({}) not confirmed by the driver within {} ms: ending the process keys the transmitter off",
                        reason_text().unwrap_or_default(),
                        KEY_OFF_WAIT.as_millis()
                    ));
                }
            }
        }
    }
}

/// The wall clock, unix seconds.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The parent's process ID (0 where unknown).
fn parent_pid() -> u32 {
    #[cfg(unix)]
    // SAFETY: getppid(2) has no preconditions.
    unsafe {
        libc::getppid() as u32
    }
    #[cfg(windows)]
    {
        crate::exec::guard_job::parent_pid()
    }
    #[cfg(not(any(unix, windows)))]
    0
}

/// The kernel's SIGKILL timer (Linux): `timer_create` on `CLOCK_MONOTONIC` with
/// SIGKILL as its signal. The kernel delivers it whatever the process does or
/// whatever state it is in — a SIGKILL wakes a stopped process to end it — so it
/// bounds the transmission when neither the guard nor `run` can run any code.
#[cfg(target_os = "linux")]
mod kill_timer {
    use std::time::Duration;

    /// One armed timer of this process (never deleted: it ends with the process).
    pub(super) struct KillTimer(libc::timer_t);

    impl KillTimer {
        /// A timer that kills this process `after` from now.
        pub(super) fn arm(after: Duration) -> std::io::Result<KillTimer> {
            // SAFETY: a zeroed sigevent filled for SIGEV_SIGNAL; timer_create(2)
            // writes the new timer's id into `id`.
            let id = unsafe {
                let mut sev: libc::sigevent = std::mem::zeroed();
                sev.sigev_notify = libc::SIGEV_SIGNAL;
                sev.sigev_signo = libc::SIGKILL;
                let mut id: libc::timer_t = std::ptr::null_mut();
                if libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut id) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                id
            };
            let t = KillTimer(id);
            t.set(after)?;
            Ok(t)
        }

        /// Move the kill to `after` from now (at least 1 ns: zero would disarm it).
        pub(super) fn set(&self, after: Duration) -> std::io::Result<()> {
            let after = after.max(Duration::from_nanos(1));
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: libc::time_t::try_from(after.as_secs()).unwrap_or(libc::time_t::MAX),
                    tv_nsec: libc::c_long::from(after.subsec_nanos() as i32),
                },
            };
            // SAFETY: timer_settime(2) on the timer this process created.
            if unsafe { libc::timer_settime(self.0, 0, &spec, std::ptr::null_mut()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }
    }
}

/// The guard's signal handlers (unix).
#[cfg(unix)]
mod signals {
    /// Every catchable signal whose default action ends or stops the process.
    const SIGNALS: [libc::c_int; 15] = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGPIPE,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGVTALRM,
        libc::SIGPROF,
    ];

    pub(super) fn name(sig: libc::c_int) -> &'static str {
        match sig {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGHUP => "SIGHUP",
            libc::SIGQUIT => "SIGQUIT",
            libc::SIGUSR1 => "SIGUSR1",
            libc::SIGUSR2 => "SIGUSR2",
            libc::SIGALRM => "SIGALRM",
            libc::SIGPIPE => "SIGPIPE",
            libc::SIGTSTP => "SIGTSTP",
            libc::SIGTTIN => "SIGTTIN",
            libc::SIGTTOU => "SIGTTOU",
            libc::SIGXCPU => "SIGXCPU",
            libc::SIGXFSZ => "SIGXFSZ",
            libc::SIGVTALRM => "SIGVTALRM",
            libc::SIGPROF => "SIGPROF",
            _ => "a signal",
        }
    }

    /// Async-signal-safe: it only stores to atomics.
    extern "C" fn on_signal(sig: libc::c_int) {
        super::key_off(sig);
    }

    /// Catch every signal of [`SIGNALS`]; on Linux, ask for SIGTERM when the
    /// parent dies.
    pub(super) fn install() {
        for sig in SIGNALS {
            // SAFETY: sigaction(2) with a zeroed, then filled struct; the
            // handler only stores to atomics.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(sig, &act, std::ptr::null_mut()) != 0 {
                    tracing::warn!(signal = name(sig), "tx-guard: cannot catch");
                }
            }
        }
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) PR_SET_PDEATHSIG with a signal number.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
        }
    }
}
