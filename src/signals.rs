//! The one owner of process signals.
//!
//! One handler for Ctrl-C, SIGINT, SIGTERM and SIGHUP (Ctrl-C / Ctrl-Break /
//! console close on Windows, through `ctrlc`'s `termination` feature) is
//! installed once per process, here, and nowhere else. Everything else asks
//! this module:
//!
//! - [`cancel_flag`]: the process-wide flag that `run`, `capture`, `sweep` and
//!   `publish` poll (the TX tone loop polls it too, so a Ctrl-C stops a
//!   transmission within its 200 ms bound); the first signal sets it;
//! - [`received`] / [`flag`]: whether a signal arrived (the watcher asks it
//!   between steps and hands the flag to a fetch);
//! - [`subscribe`]: a callback run on the handler's thread after the flag is
//!   set, e.g. to post an event to the watcher's event loop so a sleep or a
//!   prompt ends at once;
//! - [`cancel_handler_installed`]: whether the handler could be installed;
//! - [`KeyedGuard`]: while a transmitter is keyed, a job-control stop request
//!   (SIGTSTP from Ctrl-Z, SIGTTIN, SIGTTOU) keys it off first; the process
//!   stops only after the tone's stream is torn down (docs/safety.md#job-control).
//!
//! What the handler says on stderr is chosen by the first [`cancel_flag`]
//! caller (`"rxnode: interrupt: stopping {what}; …"`, then
//! `"rxnode: already stopping ({what})"` for each further signal); a process
//! that only subscribes (the watcher) says nothing from the handler.
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

/// Set by the first signal; never cleared.
static CANCEL: AtomicBool = AtomicBool::new(false);
/// What a keyed tone polls: set by Ctrl-C / SIGTERM (with [`CANCEL`]) and, while a
/// [`KeyedGuard`] lives, by a job-control stop request.
static KEY_OFF: AtomicBool = AtomicBool::new(false);
/// The job-control signal that keyed the tone off (0: none).
static SUSPENDED_BY: AtomicI32 = AtomicI32::new(0);
/// The outcome of the one installation: `Err` holds why it failed.
static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
/// What the handler names on stderr (the first [`cancel_flag`] caller's words).
static ANNOUNCE: OnceLock<&'static str> = OnceLock::new();

/// A subscriber: run on every signal; `false` drops it (its receiver is gone).
type Subscriber = Box<dyn Fn() -> bool + Send>;
static SUBSCRIBERS: Mutex<Vec<Subscriber>> = Mutex::new(Vec::new());

/// What the handler does on each signal.
fn on_signal() {
    let again = CANCEL.swap(true, Ordering::SeqCst);
    KEY_OFF.store(true, Ordering::SeqCst);
    if let Some(what) = ANNOUNCE.get() {
        if again {
            note!("rxnode: already stopping ({what})");
        } else {
            note!("rxnode: interrupt: stopping {what}; what was done so far will be written");
        }
    }
    notify_subscribers();
}

/// Tell every subscriber, dropping those that decline.
fn notify_subscribers() {
    if let Ok(mut subs) = SUBSCRIBERS.lock() {
        subs.retain(|notify| notify());
    }
}

/// Install the handler if it is not yet installed; the outcome of the one
/// attempt is kept, so every caller gets the same answer.
pub(crate) fn install() -> Result<(), String> {
    INSTALLED
        .get_or_init(|| {
            file_size_limit_is_an_error();
            ctrlc::set_handler(on_signal).map_err(|e| e.to_string())
        })
        .clone()
}

/// A file-size limit (`ulimit -f`) reached while recording is an I/O error for
/// the writer (EFBIG), like a full disk, not SIGXFSZ killing the process — with
/// a transmitter keyed, or before the result is written.
fn file_size_limit_is_an_error() {
    #[cfg(unix)]
    // SAFETY: signal(2) setting SIGXFSZ to SIG_IGN; no handler runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// The process-wide Ctrl-C / SIGTERM flag for `run` and `capture`: the first
/// signal sets it (the running step stops, what was done is written); a second
/// one only says that it is already stopping. Installs the handler on first
/// use; `what` names what is stopped (the first caller's words are kept).
pub(crate) fn cancel_flag(what: &'static str) -> &'static AtomicBool {
    let _ = ANNOUNCE.set(what);
    if let Err(e) = install() {
        // Said once: only the first call tried to install.
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| tracing::warn!("Ctrl-C / SIGTERM cannot be caught: {e}"));
    }
    &CANCEL
}

/// Whether the handler is installed: without it a Ctrl-C kills the process
/// instead of stopping the running step (and `run` keys no transmitter).
pub(crate) fn cancel_handler_installed() -> bool {
    matches!(INSTALLED.get(), Some(Ok(())))
}

/// The flag itself, for a caller that already subscribed (nothing is
/// installed or announced here): e.g. to cancel a fetch in the watcher.
pub(crate) fn flag() -> &'static AtomicBool {
    &CANCEL
}

/// Whether a stop signal arrived.
pub(crate) fn received() -> bool {
    CANCEL.load(Ordering::SeqCst)
}

/// Install the handler (if needed) and run `notify` on every later signal,
/// after the flag is set, on the handler's thread; `notify` returns `false`
/// once it has nobody left to tell, and is then dropped. A signal that came
/// before the subscription is seen through [`received`], so check it before
/// waiting.
pub(crate) fn subscribe(notify: impl Fn() -> bool + Send + 'static) -> Result<(), String> {
    install()?;
    if let Ok(mut subs) = SUBSCRIBERS.lock() {
        subs.push(Box::new(notify));
    }
    Ok(())
}

/// While it lives, a transmitter is keyed: the flag to hand the tone loop
/// ([`KeyedGuard::key_off_flag`]) is set by Ctrl-C / SIGTERM and by a job-control
/// stop request (SIGTSTP, SIGTTIN, SIGTTOU), which is held back until the guard
/// is dropped — after the tone's stream is torn down — and then takes its default
/// action: the process stops, as the operator asked, and carries on at SIGCONT.
/// On systems without job control (Windows) nothing can stop the process with the
/// transmitter keyed, and the guard only carries the Ctrl-C flag.
#[must_use]
pub(crate) struct KeyedGuard {
    #[cfg(unix)]
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl KeyedGuard {
    /// Start holding job-control stop requests back; call with the Ctrl-C
    /// handler installed ([`cancel_flag`]).
    pub(crate) fn new() -> KeyedGuard {
        KEY_OFF.store(CANCEL.load(Ordering::SeqCst), Ordering::SeqCst);
        SUSPENDED_BY.store(0, Ordering::SeqCst);
        KeyedGuard {
            #[cfg(unix)]
            previous: job_control::hold(),
        }
    }

    /// The flag the tone loop polls: Ctrl-C, SIGTERM or a stop request.
    pub(crate) fn key_off_flag(&self) -> &'static AtomicBool {
        &KEY_OFF
    }

    /// The name of the job-control signal that keyed the tone off, if one did.
    pub(crate) fn suspended_by(&self) -> Option<&'static str> {
        match SUSPENDED_BY.load(Ordering::SeqCst) {
            0 => None,
            #[cfg(unix)]
            n => Some(job_control::name(n)),
            #[cfg(not(unix))]
            _ => None,
        }
    }
}

impl Drop for KeyedGuard {
    fn drop(&mut self) {
        #[cfg(unix)]
        job_control::release(std::mem::take(&mut self.previous));
    }
}

/// Job-control stop requests while a transmitter is keyed (unix only).
#[cfg(unix)]
mod job_control {
    use super::{KEY_OFF, SUSPENDED_BY};
    use std::sync::atomic::Ordering;

    const SIGNALS: [libc::c_int; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

    pub(super) fn name(sig: libc::c_int) -> &'static str {
        match sig {
            libc::SIGTSTP => "SIGTSTP",
            libc::SIGTTIN => "SIGTTIN",
            _ => "SIGTTOU",
        }
    }

    /// The handler: async-signal-safe, it only stores to atomics.
    extern "C" fn on_stop_request(sig: libc::c_int) {
        let _ = SUSPENDED_BY.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        KEY_OFF.store(true, Ordering::SeqCst);
    }

    /// Catch the stop requests; returns the dispositions to restore. A signal
    /// that was ignored (a shell without job control) stays ignored.
    pub(super) fn hold() -> Vec<(libc::c_int, libc::sigaction)> {
        let mut previous = Vec::new();
        for sig in SIGNALS {
            // SAFETY: sigaction(2) with a zeroed, then filled struct; the handler
            // only stores to atomics, which is async-signal-safe.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = on_stop_request as extern "C" fn(libc::c_int) as usize;
                act.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(sig, &act, &mut old) == 0 {
                    previous.push((sig, old));
                } else {
                    tracing::warn!(
                        signal = name(sig),
                        "cannot hold back the stop request while keyed"
                    );
                }
            }
        }
        previous
    }

    /// Restore the dispositions; then, if a stop request came while keyed (the
    /// transmitter is off by now), stop as it asked.
    pub(super) fn release(previous: Vec<(libc::c_int, libc::sigaction)>) {
        for (sig, old) in &previous {
            // SAFETY: restoring the disposition read by `hold`.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
        let sig = SUSPENDED_BY.load(Ordering::SeqCst);
        if sig != 0 {
            note!(
                "rxnode: {}: transmitter keyed off; stopping as asked (fg or SIGCONT to carry on)",
                name(sig)
            );
            // SAFETY: raise(3) of a job-control signal whose disposition was
            // just restored (default: stop the process).
            unsafe {
                libc::raise(sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn subscribers_are_told_until_they_decline() {
        // No real signal and no flag: a signal, or the flag set, would reach
        // every test of this process.
        let told = Arc::new(AtomicUsize::new(0));
        let (t1, t2) = (told.clone(), told.clone());
        SUBSCRIBERS
            .lock()
            .map(|mut s| {
                s.push(Box::new(move || t1.fetch_add(1, Ordering::SeqCst) < 1));
                s.push(Box::new(move || {
                    t2.fetch_add(10, Ordering::SeqCst);
                    true
                }));
            })
            .ok();
        notify_subscribers();
        notify_subscribers();
        // The first said `false` at its second call and was dropped after it.
        notify_subscribers();
        assert_eq!(told.load(Ordering::SeqCst), 2 + 30);
    }
}
