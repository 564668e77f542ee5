//! `rxnode clkin …`: a radio's clock without a calibrated reference — two radios
//! compared on one tone, or one calibrated against a broadcast signal.
use super::flags::flag_named;
use crate::cli::ClkinCmd;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, cmd: &ClkinCmd) -> Result<Outcome> {
    match cmd {
        ClkinCmd::Compare(options) => rxnode::cmd_clkin_compare(ctx, options),
        ClkinCmd::Calibrate(options) => rxnode::cmd_calibrate(ctx, options),
    }
    .map_err(flag_named)
}
