//! `rxnode health [test ARGS…]`.
use crate::cli::HealthCmd;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: Option<&HealthCmd>) -> Result<Outcome> {
    match cmd {
        None => rxnode::cmd_health(ctx),
        Some(HealthCmd::Test { devices, device }) => {
            let all: Vec<String> = devices.iter().chain(device).cloned().collect();
            rxnode::cmd_health_test(ctx, &all)
        }
    }
}
