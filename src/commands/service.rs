//! `rxnode service install|status|uninstall`.
use crate::cli::{ServiceCmd, ServicePlace};
use anyhow::Result;
use rxnode::{Ctx, Outcome, ServiceOptions};

/// Run the subcommand. A refused field of the options is named by its flag.
pub fn run(ctx: &Ctx, cmd: &ServiceCmd) -> Result<Outcome> {
    let done = match cmd {
        ServiceCmd::Install {
            place,
            interval,
            run_as,
            ..
        } => {
            let mut o = options(place, *interval);
            o.run_as = run_as.clone();
            rxnode::cmd_service_install(ctx, &o)
        }
        ServiceCmd::Status { place } => rxnode::cmd_service_status(ctx, &options(place, 30.0)),
        ServiceCmd::Uninstall { place } => {
            rxnode::cmd_service_uninstall(ctx, &options(place, 30.0))
        }
    };
    done.map_err(super::flags::flag_named)
}

fn options(place: &ServicePlace, interval: f64) -> ServiceOptions {
    ServiceOptions {
        user: place.user,
        unit_dir: place.unit_dir.clone(),
        interval,
        run_as: None,
    }
}

#[cfg(test)]
mod tests {
    /// A refused field of `service` is printed with the operator's flag, exit 2 still.
    #[test]
    fn a_refused_service_field_is_told_by_its_flag() {
        let e = super::super::flags::flag_named(rxnode::bad_field(
            "interval",
            " 0: must be a number of seconds in (0, 86400]",
        ));
        assert_eq!(
            e.to_string(),
            "--interval 0: must be a number of seconds in (0, 86400]"
        );
        assert_eq!(rxnode::error_json(&e).exit, 2);
        assert_eq!(super::super::flags::flag_of("user"), Some("--user"));
    }
}
