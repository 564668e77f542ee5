//! `rxnode sweep`: an RX-only wideband sweep.
use super::flags::flag_named;
use anyhow::Result;
use rxnode::{Ctx, Outcome, SweepOptions};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, options: &SweepOptions) -> Result<Outcome> {
    rxnode::cmd_sweep(ctx, options).map_err(flag_named)
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
        let Command::Sweep(options) = cli.command else {
            panic!("not the sweep command");
        };
        assert_eq!(
            options.config(),
            rxnode::SweepConfig::new(88e6, 108e6, 10e3)
        );
    }
}
