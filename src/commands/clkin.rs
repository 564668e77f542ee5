//! `rxnode clkin …`: a radio's clock without a calibrated reference — two radios
//! compared on one tone, or one calibrated against a broadcast signal.
use super::flags::flag_named;
use crate::cli::{CalMethodArg, CalibrateArgs, ClkinCmd, ClkinCompareArgs};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, cmd: &ClkinCmd) -> Result<Outcome> {
    match cmd {
        ClkinCmd::Compare(args) => rxnode::cmd_clkin_compare(ctx, &args.options()),
        ClkinCmd::Calibrate(args) => rxnode::cmd_calibrate(ctx, &args.options()),
    }
    .map_err(flag_named)
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

impl From<CalMethodArg> for rxnode::FreqCalMethod {
    fn from(m: CalMethodArg) -> Self {
        match m {
            CalMethodArg::Gsm => rxnode::FreqCalMethod::Gsm,
            CalMethodArg::Lte => rxnode::FreqCalMethod::Lte,
        }
    }
}

impl CalibrateArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::CalibrateOptions {
        let a = self;
        rxnode::CalibrateOptions {
            device: a.device.clone(),
            method: a.method.into(),
            frequency_hz: a.frequency_hz,
            sample_rate_hz: a.sample_rate_hz,
            gain_db: a.gain_db,
            duration_s: a.duration_s,
            plot: a.plot.clone(),
        }
    }
}
