//! `rxnode capture`: an RX-only capture for the operator.
use super::flags::flag_named;
use anyhow::Result;
use rxnode::{CaptureOptions, Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, options: &CaptureOptions) -> Result<Outcome> {
    rxnode::cmd_capture(ctx, options).map_err(flag_named)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field error of the library is printed with the operator's flag, exit 2 still;
    /// every other error passes unchanged.
    #[test]
    fn a_refused_field_is_told_by_its_flag() {
        let e = flag_named(rxnode::bad_field(
            "sample_rate_hz",
            " 0 must be a finite number > 0",
        ));
        assert_eq!(
            e.to_string(),
            "--sample-rate-hz 0 must be a finite number > 0"
        );
        assert_eq!(rxnode::error_json(&e).exit, 2);
        let other = flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(other.to_string(), "disk full");
    }
}
