//! `rxnode health [test ARGS…]`.
use crate::cli::HealthCmd;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: Option<&HealthCmd>) -> Result<Outcome> {
    match cmd {
        None => rxnode::cmd_health(ctx),
        Some(HealthCmd::Test { radios, devices }) => {
            let all: Vec<String> = radios.iter().chain(devices).cloned().collect();
            rxnode::cmd_health_test(ctx, &all)
        }
    }
}
