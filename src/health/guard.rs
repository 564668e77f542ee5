//! What a run does about radio health (docs/protocol.md#8-radio-health): a step that
//! needs a `BAD` radio ends BLOCKED naming the failure and when it was found; a
//! radio that fails during a step (a stalled stream, a stream or driver error) is
//! marked `BAD` and re-tested at once, and one that could not be opened or set up
//! is re-tested (a failing self-test marks it `BAD`). The step holds the radio's
//! lock meanwhile, so the re-test follows with no other process in between.
use super::selftest::{self, SelfTest};
use crate::store::health::{self, Event, Health};
use crate::store::paths::Paths;
use rxnode_interlock::Policy;

// Where a radio is missing altogether: below the health checks, since the live
// capture they use names it too.
pub(crate) use crate::radio::{absent, absent_fix};

/// Why a step on `device` must not run: the radio is `BAD` (its failure and when it
/// was found), or its health cannot be read (fail closed). `None`: `GOOD` or
/// `UNTESTED`.
pub(crate) fn bad_reason(paths: &Paths, device: &str) -> Option<String> {
    match health::lookup(paths, device) {
        Ok(Some(r)) if r.health == Health::Bad => Some(format!(
            "radio {} is BAD since {}: {} — it returns to GOOD only by a passing self-test \
             (`rxnode health test {}`, or the watcher's next scheduled one)",
            r.identity, r.since, r.reason, device
        )),
        Ok(_) => None,
        Err(e) => Some(format!(
            "the health of radio {} cannot be read, so it is not used: {e:#}",
            health::identity(device)
        )),
    }
}

/// The radio failed while `what` used it: mark it `BAD`, re-test it, and say in one
/// line what happened (for the result's errors).
pub(crate) fn radio_failed(paths: &Paths, policy: &Policy, device: &str, what: &str) -> String {
    let marked = match health::record(
        paths,
        device,
        &Event::RadioError {
            reason: what.to_owned(),
        },
    ) {
        Ok(_) => "marked BAD".to_owned(),
        Err(e) => format!("could not be marked BAD ({e:#})"),
    };
    let t = selftest::test_and_record_held(paths, policy, device);
    format!("radio {} {marked}; {}", health::identity(device), said(&t))
}

/// `device` could not be opened or set up for `what`: re-test it (a failing test
/// marks it `BAD`) and say in one line what happened. A radio that is not on this
/// machine at all is not tested and not marked: that is no health failure.
pub(crate) fn retest(paths: &Paths, policy: &Policy, device: &str) -> String {
    if absent(device).is_some() {
        return format!(
            "radio {}: not re-tested and not marked BAD: no such radio on this machine",
            health::identity(device)
        );
    }
    let t = selftest::test_and_record_held(paths, policy, device);
    format!("radio {}: {}", health::identity(device), said(&t))
}

/// A self-test in one line: its outcome, why, and the health it left.
fn said(t: &SelfTest) -> String {
    let now = t
        .health
        .as_ref()
        .map_or("health not recorded".to_owned(), |h| {
            format!("now {}", h.health)
        });
    format!("re-tested: {} ({}), {now}", t.outcome, t.reason)
}
