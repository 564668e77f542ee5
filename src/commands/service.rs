//! `rxnode service install|status|uninstall`.
use crate::cli::{ServiceCmd, ServicePlace};
use anyhow::Result;
use rxnode::{Ctx, Outcome, ServiceOptions};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &ServiceCmd) -> Result<Outcome> {
    match cmd {
        ServiceCmd::Install { place, interval } => {
            rxnode::cmd_service_install(ctx, &options(place, *interval))
        }
        ServiceCmd::Status { place } => rxnode::cmd_service_status(ctx, &options(place, 30.0)),
        ServiceCmd::Uninstall { place } => {
            rxnode::cmd_service_uninstall(ctx, &options(place, 30.0))
        }
    }
}

fn options(place: &ServicePlace, interval: f64) -> ServiceOptions {
    ServiceOptions {
        user: place.user,
        unit_dir: place.unit_dir.clone(),
        interval,
    }
}
