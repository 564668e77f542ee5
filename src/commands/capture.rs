//! `rxnode capture`: an RX-only capture for the operator.
use crate::cli::CaptureArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, args: &CaptureArgs) -> Result<Outcome> {
    rxnode::cmd_capture(ctx, &args.options()).map_err(flag_named)
}

/// The flag that sets a field of [`rxnode::CaptureOptions`].
fn flag_of(field: &str) -> Option<&'static str> {
    Some(match field {
        "device" => "--device",
        "frequency_hz" => "--frequency-hz",
        "sample_rate_hz" => "--sample-rate-hz",
        "duration_s" => "--duration-s",
        "gain_db" => "--gain-db",
        "antenna" => "--antenna",
        "bandwidth_hz" => "--bandwidth-hz",
        "clock_source" => "--clock-source",
        "clkin_tone_hz" => "--clkin-tone-hz",
        "clkin_tolerance_ppm" => "--clkin-tolerance-ppm",
        "clkin_expected_dbfs" => "--clkin-expected-dbfs",
        "fft_size" => "--fft-size",
        "record" => "--record",
        "record_format" => "--record-format",
        "plot" => "--plot",
        "force" => "--force",
        "max_peaks" => "--max-peaks",
        "min_snr_db" => "--min-snr-db",
        "apply_cal" => "--apply-cal",
        _ => return None,
    })
}

/// An error about a field of the request, told with the flag the operator typed
/// (exit 2 still); any other error as it is.
fn flag_named(e: anyhow::Error) -> anyhow::Error {
    match e.downcast_ref::<rxnode::BadField>() {
        Some(b) => rxnode::bad_input(b.named(flag_of(b.field).unwrap_or(b.field))),
        None => e,
    }
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
        let e = flag_named(anyhow::Error::new(rxnode::BadField {
            field: "sample_rate_hz",
            problem: " 0 must be a finite number > 0".into(),
        }));
        assert_eq!(
            e.to_string(),
            "--sample-rate-hz 0 must be a finite number > 0"
        );
        assert_eq!(rxnode::error_json(&e)["exit"], 2);
        let other = flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(other.to_string(), "disk full");
    }
}
