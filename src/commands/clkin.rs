//! `rxnode clkin …`: a radio's clock without a calibrated reference.
use crate::cli::{CalMethodArg, CalibrateArgs, ClkinCmd};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &ClkinCmd) -> Result<Outcome> {
    match cmd {
        ClkinCmd::Calibrate(args) => rxnode::cmd_calibrate(ctx, &args.options()),
    }
}

impl CalibrateArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::CalibrateOptions {
        let a = self;
        rxnode::CalibrateOptions {
            device: a.device.clone(),
            method: match a.method {
                CalMethodArg::Gsm => rxnode::FreqCalMethod::Gsm,
                CalMethodArg::Lte => rxnode::FreqCalMethod::Lte,
            },
            frequency_hz: a.frequency_hz,
            sample_rate_hz: a.sample_rate_hz,
            gain_db: a.gain_db,
            duration_s: a.duration_s,
            plot: a.plot.clone(),
        }
    }
}
