//! `rxnode analyze <FILE>`: the capture analysis on a recording.
use super::flags::flag_named;
use crate::cli::AnalyzeArgs;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the request is named by its flag.
pub fn run(ctx: &Ctx, args: &AnalyzeArgs) -> Result<Outcome> {
    rxnode::cmd_analyze(ctx, &args.options()).map_err(flag_named)
}

impl AnalyzeArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::AnalyzeOptions {
        let a = self;
        rxnode::AnalyzeOptions {
            file: a.file.clone(),
            rate: a.sample_rate_hz,
            center_hz: a.frequency_hz,
            format: a.format.clone(),
            fft_size: a.fft.fft_size,
            overlap: a.overlap,
            clkin_tone_hz: a.clkin.clkin_tone_hz,
            clkin_tolerance_ppm: a.clkin.clkin_tolerance_ppm,
            clkin_expected_dbfs: a.clkin.clkin_expected_dbfs,
            plot: a.plot.clone(),
            force: a.force,
            max_peaks: a.peaks.max_peaks,
            min_snr_db: a.peaks.min_snr_db,
            channel: a.channel,
            freq_cal: a.freq_cal.map(Into::into),
            carrier_hz: a.carrier_hz,
            store_for_radio: a.store_for_radio.clone(),
        }
    }
}
