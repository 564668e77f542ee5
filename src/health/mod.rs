//! Radio health (docs/protocol.md#radio-health): `rxnode health [--json]` lists
//! what this node knows about each radio; the store is
//! [`crate::store::health`].
use crate::context::Ctx;
use crate::exit::Outcome;
use crate::store::health::{self, RadioHealth};
use anyhow::Result;
use serde::Serialize;

/// `rxnode health --json`.
#[derive(Debug, Serialize)]
struct Listing {
    /// One entry per radio with a record, in identity order.
    radios: Vec<RadioHealth>,
}

/// `rxnode health [--json]`: every radio this node has a health record of.
pub fn cmd_health(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    let radios = health::read_all(&paths)?;
    if ctx.json {
        println!("{}", serde_json::to_string_pretty(&Listing { radios })?);
        return Ok(Outcome::Done);
    }
    if radios.is_empty() {
        println!(
            "no radio has been self-tested on this node: every radio is UNTESTED (not blocked)"
        );
        return Ok(Outcome::Done);
    }
    for r in &radios {
        let last = r.last_self_test.as_ref().map_or_else(
            || "never self-tested".to_owned(),
            |t| format!("last self-test {} at {}", t.outcome, t.at),
        );
        println!("{:<8} {}", r.health.as_str(), r.identity);
        println!("         since {}: {}", r.since, r.reason);
        println!("         {last}");
    }
    Ok(Outcome::Done)
}
