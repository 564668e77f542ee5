//! `rxnode sweep`: an RX-only wideband sweep.
use crate::cli::SweepArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, args: &SweepArgs) -> Result<Outcome> {
    rxnode::cmd_sweep(ctx, &args.options())
}

impl SweepArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::SweepOptions {
        let a = self;
        rxnode::SweepOptions {
            device: a.device.clone(),
            start_hz: a.start_hz,
            stop_hz: a.stop_hz,
            bin_hz: a.bin_hz,
            sample_rate_hz: a.sample_rate_hz,
            gain_db: a.gain_db.clone(),
            dwell_s: a.dwell_s,
            settle_s: a.settle_s,
            crop: a.crop,
            repeats: a.repeats,
            csv: a.csv.clone(),
            plot: a.plot.clone(),
            apply_cal: a.apply_cal,
        }
    }
}
