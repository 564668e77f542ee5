//! `rxnode clkin compare`: CLKIN checks that need no calibrated reference.
use crate::cli::{ClkinCmd, ClkinCompareArgs};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &ClkinCmd) -> Result<Outcome> {
    match cmd {
        ClkinCmd::Compare(args) => rxnode::cmd_clkin_compare(ctx, &args.options()),
    }
}

impl ClkinCompareArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::ClkinCompareOptions {
        rxnode::ClkinCompareOptions {
            devices: self.devices.clone(),
            frequency_hz: self.frequency_hz,
            sample_rate_hz: self.sample_rate_hz,
            tone_hz: self.tone_hz,
            gain_db: self.gain_db,
            duration_s: self.duration_s,
            tolerance_ppb: self.tolerance_ppb,
            clock_sources: self.clock_sources.clone(),
            plot: self.plot.clone(),
        }
    }
}
