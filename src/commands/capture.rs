//! `rxnode capture`: an RX-only capture for the operator.
use super::flags::flag_named;
use crate::cli::CaptureArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, args: &CaptureArgs) -> Result<Outcome> {
    rxnode::cmd_capture(ctx, &args.options()).map_err(flag_named)
}

impl CaptureArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::CaptureOptions {
        let a = self;
        rxnode::CaptureOptions {
            device: a.device.clone(),
            frequency_hz: a.frequency_hz,
            sample_rate_hz: a.sample_rate_hz,
            duration_s: a.duration_s,
            gain_db: a.gain_db.clone(),
            antenna: a.antenna.clone(),
            bandwidth_hz: a.bandwidth_hz,
            clock_source: a.clock_source.clone(),
            clkin_tone_hz: a.clkin.clkin_tone_hz,
            clkin_tolerance_ppm: a.clkin.clkin_tolerance_ppm,
            clkin_expected_dbfs: a.clkin.clkin_expected_dbfs,
            fft_size: a.fft.fft_size,
            record: a.record.clone(),
            record_format: a.record_format,
            plot: a.plot.clone(),
            force: a.force,
            max_peaks: a.peaks.max_peaks,
            min_snr_db: a.peaks.min_snr_db,
            apply_cal: a.apply_cal,
            radio: a.radio.settings(),
        }
    }
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
        assert_eq!(rxnode::error_json(&e)["exit"], 2);
        let other = flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(other.to_string(), "disk full");
    }
}
