//! Radio health (docs/protocol.md#8-radio-health): `rxnode health [--json]` lists
//! what this node knows about each radio, `rxnode health test [ARGS…]` self-tests
//! radios ([`selftest`]); the store is [`crate::store::health`]. The watcher's
//! scheduled self-tests are [`schedule`]; a run's check of a radio before it uses
//! it, and its re-test after a radio error, are [`guard`].
pub(crate) mod guard;
pub(crate) mod schedule;
pub(crate) mod selftest;

use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use crate::store::health::{self, Health, SelfTestRecord};
use anyhow::Result;
use serde::Serialize;

/// One radio in `rxnode health --json`.
#[derive(Debug, Serialize)]
struct Row {
    /// The device args it was last tested or used with (or as the policy lists it).
    device: String,
    /// Its identity (docs/protocol.md#8-radio-health).
    identity: String,
    /// `GOOD`, `BAD` or `UNTESTED`.
    health: Health,
    /// Since when (`null` for a radio never tested).
    since: Option<String>,
    /// Why.
    reason: String,
    /// The last self-test.
    last_self_test: Option<SelfTestRecord>,
    /// Whether the policy's `health.radios` lists it (tested on a schedule).
    scheduled: bool,
}

/// `rxnode health --json`.
#[derive(Debug, Serialize)]
struct Listing {
    /// Every radio with a record, then the policy's radios never tested.
    radios: Vec<Row>,
    /// Seconds between scheduled self-tests (`null`: none scheduled).
    self_test_every_s: Option<f64>,
}

/// `rxnode health [--json]`: every radio with a health record, and every radio the
/// policy lists for self-tests (`UNTESTED` until its first one).
pub fn cmd_health(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let (policy, _) = crate::store::policy::load(&paths)?;
    let listed: Vec<String> = policy
        .health
        .as_ref()
        .map(|h| h.radios.clone())
        .unwrap_or_default();
    let listed_ids: Vec<String> = listed.iter().map(|a| health::identity(a)).collect();
    let mut radios: Vec<Row> = health::read_all(&paths)?
        .into_iter()
        .map(|r| Row {
            scheduled: listed_ids.contains(&r.identity),
            device: r.device_args,
            identity: r.identity,
            health: r.health,
            since: Some(r.since),
            reason: r.reason,
            last_self_test: r.last_self_test,
        })
        .collect();
    for (args, id) in listed.iter().zip(&listed_ids) {
        if !radios.iter().any(|r| &r.identity == id) {
            radios.push(Row {
                device: args.clone(),
                identity: id.clone(),
                health: Health::Untested,
                since: None,
                reason: "never tested".to_owned(),
                last_self_test: None,
                scheduled: true,
            });
        }
    }
    let listing = Listing {
        radios,
        self_test_every_s: policy.health.as_ref().map(|h| h.self_test_every_s),
    };
    ctx.report(&listing, render_listing)?;
    Ok(Outcome::Done)
}

/// The health listing for a person: one block a radio, then the self-test schedule.
fn render_listing(listing: &Listing) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if listing.radios.is_empty() {
        let _ = writeln!(
            out,
            "no radio has a health record and the policy lists none for self-tests: \
             every radio is UNTESTED (not blocked); test one with `rxnode health test ARGS`"
        );
        return out;
    }
    for r in &listing.radios {
        let last = r.last_self_test.as_ref().map_or_else(
            || "never self-tested".to_owned(),
            |t| {
                let why = if t.reason == r.reason {
                    String::new()
                } else {
                    format!(": {}", t.reason)
                };
                format!("last self-test {} at {}{why}", t.outcome, t.at)
            },
        );
        let since = r
            .since
            .as_deref()
            .map_or(String::new(), |s| format!(" since {s}"));
        let _ = writeln!(out, "{:<8} {}{since}", r.health.as_str(), r.identity);
        if r.health != Health::Untested {
            let _ = writeln!(out, "         {}", r.reason);
        }
        let _ = writeln!(out, "         {last}");
    }
    if let Some(every) = listing.self_test_every_s {
        let _ = writeln!(
            out,
            "scheduled self-tests (policy health.radios): every {every} s while `rxnode watch` runs"
        );
    }
    out
}

/// `rxnode health test [ARGS…] [--json]`: self-test the named radios (or every radio
/// the policy lists), read-only, and record each outcome. Exit 0 when all passed, 1
/// when any failed or could not be tested. Each radio's lock is held while it is
/// tested (one process per radio; docs/operator.md).
pub fn cmd_health_test(ctx: &Ctx, devices: &[String]) -> Result<Outcome> {
    // Checked as every radio command's `--device` is, before anything is opened.
    for d in devices {
        crate::options::device(d)
            .map_err(|e| crate::exit::bad_input(format!("health test: device args {d:?}: {e}")))?;
    }
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let (policy, _) = crate::store::policy::load(&paths)?;
    let devices: Vec<String> = if devices.is_empty() {
        policy
            .health
            .as_ref()
            .map(|h| h.radios.clone())
            .unwrap_or_default()
    } else {
        devices.to_vec()
    };
    if devices.is_empty() {
        return Err(bad_input(
            "no radio to test: name its device args (`rxnode health test driver=hackrf,serial=…`) \
             or list radios in the policy's health.radios (docs/protocol.md#8-radio-health)",
        ));
    }
    for d in &devices {
        if d.trim().is_empty() || d.chars().any(char::is_control) {
            return Err(bad_input(format!(
                "device args {d:?}: empty or not printable"
            )));
        }
    }
    let mut tests = Vec::new();
    for d in &devices {
        if !ctx.json {
            note!("self-test of {d} …");
        }
        let t = selftest::test_and_record(&paths, &policy, d, "health test");
        if !ctx.json {
            // Printed as each self-test ends, between the `self-test of …` lines
            // on stderr, not held back for the end.
            ctx.shell().out(&render_self_test(&t))?;
        }
        tests.push(t);
    }
    // The human lines were printed as each self-test ended.
    /// `health test --json`: every self-test, in the order run.
    #[derive(serde::Serialize)]
    struct Tests<'a> {
        /// The self-tests.
        tests: &'a [selftest::SelfTest],
    }
    ctx.report(&Tests { tests: &tests }, |_| String::new())?;
    let stored = tests.iter().all(|t| t.store_error.is_none());
    Ok(if tests.iter().all(selftest::SelfTest::passed) && stored {
        Outcome::Done
    } else {
        Outcome::Code(1)
    })
}

/// One self-test's outcome for a person: the outcome, the radio's health now,
/// and a store error that kept it from being recorded.
fn render_self_test(t: &selftest::SelfTest) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "{} {}: {}", t.outcome, t.device, t.reason);
    if let Some(h) = &t.health {
        let _ = writeln!(out, "         now {} since {}", h.health, h.since);
    }
    if let Some(e) = &t.store_error {
        let _ = writeln!(out, "         NOT RECORDED: {e}");
    }
    out
}
