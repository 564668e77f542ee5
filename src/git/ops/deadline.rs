//! The whole fetch's deadline. The transport's read timeout bounds one read,
//! not a transfer: a remote that sends a few bytes within every timeout (a ref
//! advertisement one line a second, a pack a byte at a time) kept a fetch, and
//! so `watch --once` and the watcher's loop, going for as long as it liked —
//! libgit2 calls back only every 100 KiB of pack. A [`Watchdog`] armed around
//! the fetch marks it expired at the deadline and, on Unix, interrupts the
//! fetching thread's blocking read (a no-op handler for `SIGURG` without
//! `SA_RESTART`: the read fails with `EINTR`), again every 100 ms until the
//! fetch returns. Elsewhere the transfer callback checks the mark.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Set while the fetch runs; shared with the watchdog thread.
struct Shared {
    done: Mutex<bool>,
    wake: Condvar,
    expired: Arc<AtomicBool>,
}

/// The deadline of one fetch, armed on the thread that fetches; dropping it
/// (when the fetch has returned) ends its thread.
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Arm a deadline for the fetch the calling thread is about to make.
    pub(crate) fn arm(deadline: Duration) -> Watchdog {
        let shared = Arc::new(Shared {
            done: Mutex::new(false),
            wake: Condvar::new(),
            expired: Arc::new(AtomicBool::new(false)),
        });
        #[cfg(unix)]
        let target = {
            interrupt::install();
            // SAFETY: pthread_self(3) has no preconditions.
            unsafe { libc::pthread_self() }
        };
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("fetch-deadline".into())
            .spawn(move || {
                let started = Instant::now();
                let mut done = s.done.lock().unwrap_or_else(PoisonError::into_inner);
                while !*done {
                    let left = deadline.saturating_sub(started.elapsed());
                    let wait = if left.is_zero() {
                        s.expired.store(true, Ordering::SeqCst);
                        // The fetching thread is alive: it sets `done` under this
                        // lock before it goes on, and waits for this thread.
                        #[cfg(unix)]
                        interrupt::send(target);
                        Duration::from_millis(100)
                    } else {
                        left
                    };
                    done = s
                        .wake
                        .wait_timeout(done, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            })
            .ok();
        Watchdog { shared, thread }
    }

    /// The mark set at the deadline (for the transfer callback).
    pub(crate) fn expired_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.shared.expired)
    }

    /// Whether the deadline passed before the fetch returned.
    pub(crate) fn expired(&self) -> bool {
        self.shared.expired.load(Ordering::SeqCst)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        *self
            .shared
            .done
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(unix)]
mod interrupt {
    use std::sync::Once;

    /// The signal that interrupts a blocking read: ignored by default, so one
    /// that arrives before the handler is in place does nothing.
    const SIGNAL: libc::c_int = libc::SIGURG;

    extern "C" fn wake(_: libc::c_int) {}

    /// The no-op handler, without `SA_RESTART` (once per process).
    pub(super) fn install() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: sigaction(2) with a zeroed, then filled struct; the
            // handler does nothing, so it is async-signal-safe.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = wake as extern "C" fn(libc::c_int) as usize;
                act.sa_flags = 0;
                libc::sigemptyset(&mut act.sa_mask);
                if libc::sigaction(SIGNAL, &act, std::ptr::null_mut()) != 0 {
                    tracing::warn!("cannot install the fetch deadline's handler");
                }
            }
        });
    }

    /// Interrupt `thread`'s blocking call.
    pub(super) fn send(thread: libc::pthread_t) {
        // SAFETY: `thread` is alive (see the caller); pthread_kill(3) with a
        // signal whose handler does nothing.
        unsafe {
            libc::pthread_kill(thread, SIGNAL);
        }
    }
}
