//! `rxnode sweep`: an RX-only wideband sweep.
use super::flags::flag_named;
use crate::cli::SweepArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, args: &SweepArgs) -> Result<Outcome> {
    rxnode::cmd_sweep(ctx, &args.options()).map_err(flag_named)
}

impl SweepArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::SweepOptions {
        let a = self;
        rxnode::SweepOptions {
            device: a.device.clone(),
            sweep: rxnode::SweepConfig {
                start_hz: a.start_hz,
                stop_hz: a.stop_hz,
                bin_hz: a.bin_hz,
                sample_rate_hz: a.sample_rate_hz,
                dwell_s: a.dwell_s,
                settle_s: a.settle_s,
                crop: a.crop,
                repeats: a.repeats,
                interval_s: a.interval_s,
            },
            total_s: a.total_s,
            gain_db: a.gain_db.clone(),
            csv: a.csv.clone(),
            plot: a.plot.clone(),
            force: a.force,
            apply_cal: a.apply_cal,
            radio: a.radio.settings(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    /// A flag left out takes the same default as a plan field left out: the command's
    /// defaults and the plan's are one set, `SweepConfig`'s.
    #[test]
    fn omitted_flags_take_the_plans_defaults() {
        let cli = Cli::try_parse_from([
            "rxnode",
            "sweep",
            "-d",
            "driver=rxsim",
            "--start-hz",
            "88M",
            "--stop-hz",
            "108M",
            "-B",
            "10k",
        ])
        .expect("parse");
        let Command::Sweep(args) = cli.command else {
            panic!("not the sweep command");
        };
        assert_eq!(
            args.options().sweep,
            rxnode::SweepConfig::new(88e6, 108e6, 10e3)
        );
    }
}
