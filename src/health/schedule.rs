//! The watcher's scheduled self-tests (docs/protocol.md#radio-health): every radio
//! the policy's `health.radios` lists is tested when the watcher starts and then
//! every `health.self_test_every_s`. A test waits while a run (or another
//! self-test) holds the run lock — one process uses the radios at a time — and is
//! tried again at the next poll.
use super::selftest;
use crate::store::lock::Lock;
use crate::store::paths::Paths;
use std::time::{Duration, Instant};

/// When the next round of self-tests is due.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    /// `None`: at the first poll (watcher start).
    next: Option<Instant>,
}

impl Schedule {
    /// Run the round of self-tests if it is due; `say` prints one line per radio.
    pub(crate) fn run_due(&mut self, paths: &Paths, say: &dyn Fn(String)) {
        if self.next.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let policy = match crate::store::policy::load(paths) {
            Ok((p, _)) => p,
            Err(e) => {
                say(format!(
                    "self-tests skipped: the policy cannot be read: {e:#}"
                ));
                self.next = Some(Instant::now() + Duration::from_secs(60));
                return;
            }
        };
        let Some(h) = policy.health.as_ref().filter(|h| !h.radios.is_empty()) else {
            // Nothing scheduled; look at the policy again in a minute.
            self.next = Some(Instant::now() + Duration::from_secs(60));
            return;
        };
        let every =
            Duration::try_from_secs_f64(h.self_test_every_s).unwrap_or(Duration::from_secs(86_400));
        let _lock = match Lock::acquire_at(paths, paths.run_lock(), "watch self-test") {
            Ok(l) => l,
            Err(e) => {
                tracing::info!("self-tests wait: {e:#}");
                return; // due again at the next poll
            }
        };
        for device in &h.radios {
            let t = selftest::test_and_record(paths, &policy, device);
            let now = t
                .health
                .as_ref()
                .map_or(String::new(), |r| format!(" — {}", r.health));
            say(format!(
                "self-test {} {device}: {}{now}",
                t.outcome, t.reason
            ));
        }
        self.next = Some(Instant::now() + every);
    }
}
