//! The arguments of the radio's commands (`inventory`, `capture`, `sweep`,
//! `analyze`, `clkin`) and the groups they share: the FFT, the peak list, the
//! CLKIN check and the radio's own settings.
use super::values::{
    frequency, iq_format, key_value, record_format, sample_rate, seconds, si_number,
};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The broadcast signal `clkin calibrate` measures.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CalMethodArg {
    /// A GSM BCCH carrier's FCCH bursts; `-f` is the BCCH carrier's frequency.
    Gsm,
    /// An LTE downlink's PSS/SSS; `-f` is the downlink's centre frequency.
    Lte,
}

/// `clkin calibrate` options.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// The broadcast signal to measure.
    #[arg(long, value_enum)]
    pub method: CalMethodArg,
    /// The carrier's frequency, Hz (`935.2M`): the BCCH carrier (gsm) or the
    /// downlink's centre (lte); the radio is tuned there.
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (default: 1M for gsm, 1.92M for lte).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// RX gain, dB.
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long to listen (seconds, or `6s`, `500ms`, `1m`).
    #[arg(short = 't', long, default_value_t = 6.0, value_parser = seconds)]
    pub duration_s: f64,
    /// Draw the detections (time vs offset, per-burst errors, the combined value) as a PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// `inventory` options.
#[derive(Debug, Args)]
pub struct InventoryArgs {
    /// Read-only: probe without streaming or changing settings (the only mode).
    #[arg(long)]
    pub dry_run: bool,
    /// SoapySDR device args to filter devices (e.g. `driver=hackrf`).
    #[arg(short = 'd', long = "device", alias = "args", default_value = "")]
    pub args: String,
}

/// `capture` options.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// Centre frequency, Hz (SI suffixes: `100M`, `433.92MHz`, `2.4G`).
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (`2M`, `2e6`).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// Capture length (seconds, or `2s`, `500ms`, `1m`).
    #[arg(short = 't', long, value_parser = seconds)]
    pub duration_s: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    #[arg(short = 'g', long)]
    pub gain_db: Option<String>,
    /// Antenna to select (`rxnode inventory` lists them).
    #[arg(short = 'A', long, short_alias = 'a')]
    pub antenna: Option<String>,
    /// Analog (baseband filter) bandwidth, Hz (`1.75M`).
    #[arg(short = 'w', long, value_parser = si_number)]
    pub bandwidth_hz: Option<f64>,
    /// Clock source to select.
    #[arg(long)]
    pub clock_source: Option<String>,
    #[command(flatten)]
    pub clkin: ClkinArgs,
    #[command(flatten)]
    pub fft: FftArgs,
    /// Record IQ: `.cf32`, `.wav`, `.sigmf-data` or `.sigmf-meta` (`.cs16` with
    /// `--record-format ci16`, `.cs8` with `ci8`); `-` streams raw samples to standard output (the report
    /// goes to standard error), an existing FIFO streams to the program reading it.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Sample type of the recording: `cf32` (default), `ci16`, the radio's native
    /// CS16 as it came (SigMF `ci16_le`, half the bytes; for full rate), or `ci8`, the
    /// native CS8 of a HackRF (SigMF `ci8`, a quarter of the bytes).
    #[arg(long, requires = "record", ignore_case = true, value_parser = record_format())]
    pub record_format: Option<rxnode_dsp::RecordFormat>,
    /// Write a spectrum PNG (peaks, noise floor, CLKIN tones, RBW, status).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite `--record` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub peaks: PeakArgs,
    /// Tune with the radio's frequency calibration from `rxnode clkin calibrate`
    /// (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long, conflicts_with = "ppm")]
    pub apply_cal: bool,
    #[command(flatten)]
    pub radio: RadioArgs,
}

/// The CLKIN check of `capture` and `analyze` (docs/operator.md#clkin).
#[derive(Debug, Args)]
pub struct ClkinArgs {
    /// Reference tone RF frequency for the CLKIN check, Hz (`100.1M`).
    #[arg(long, value_parser = frequency)]
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    #[arg(long, default_value_t = 0.5)]
    pub clkin_tolerance_ppm: f64,
    /// The CLKIN reference tone's expected level (dBFS, ±6 dB): tells it from other
    /// carriers in the search window (docs/operator.md#clkin).
    #[arg(long, requires = "clkin_tone_hz", allow_hyphen_values = true)]
    pub clkin_expected_dbfs: Option<f64>,
}

/// The FFT of `capture` and `analyze`.
#[derive(Debug, Args)]
pub struct FftArgs {
    /// FFT size (any size in 16..=1048576; powers of two are fastest).
    #[arg(long, default_value_t = 2048)]
    pub fft_size: usize,
}

/// The peak list of `capture` and `analyze`.
#[derive(Debug, Args)]
pub struct PeakArgs {
    /// Most peaks to list, strongest first (1..=64).
    #[arg(long, default_value_t = 8)]
    pub max_peaks: usize,
    /// List a peak only this many dB above the noise floor.
    #[arg(long, default_value_t = 6.0)]
    pub min_snr_db: f64,
}

/// `clkin` subcommands.
#[derive(Debug, Subcommand)]
pub enum ClkinCmd {
    /// Two radios stream at once on one tone of any accuracy: SLAVE's clock relative
    /// to MASTER's, in ppb, LOCKED (with an external reference), AGREE or UNLOCKED (RX only).
    Compare(ClkinCompareArgs),
    /// Measure a radio's absolute frequency error from a broadcast signal (GSM FCCH,
    /// LTE PSS/SSS), no generator and no prior estimate needed within ±60 ppm; RX only.
    Calibrate(CalibrateArgs),
}

/// `clkin compare` options.
#[derive(Debug, Args)]
pub struct ClkinCompareArgs {
    /// SoapySDR device args, twice: MASTER first, then SLAVE.
    #[arg(short = 'd', long = "device", required = true, value_name = "ARGS")]
    pub devices: Vec<String>,
    /// Centre frequency both radios tune to, Hz (`100M`, `433.92MHz`).
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate of both streams, S/s (`1M`, `2e6`).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// The tone both radios see, Hz (`100.2M`); it may be off its dial by tens of ppm.
    #[arg(long, value_parser = frequency)]
    pub tone_hz: f64,
    /// RX gain of both radios, dB.
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long both radios stream (seconds, or `1s`, `500ms`).
    #[arg(short = 't', long, default_value_t = 1.0, value_parser = seconds)]
    pub duration_s: f64,
    /// LOCKED when SLAVE is within ±this many ppb of MASTER (and the measurement can tell)
    /// and a radio reads back an external clock source; AGREE without one.
    #[arg(long, default_value_t = 10.0)]
    pub tolerance_ppb: f64,
    /// Clock sources to select first, MASTER's then SLAVE's (`internal,external`).
    #[arg(long, value_delimiter = ',', value_name = "MASTER,SLAVE")]
    pub clock_sources: Option<Vec<String>>,
    /// Write the phase-difference picture (PNG) here.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// `analyze` options.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The recording.
    pub file: PathBuf,
    /// Sample rate (raw formats), S/s (`2M`); the file's own metadata wins, a
    /// different value is refused.
    #[arg(short = 'r', long, alias = "rate", value_parser = sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// Centre frequency, for an absolute axis, Hz (`100M`); the file's own
    /// metadata wins, a different value is refused.
    #[arg(short = 'f', long, alias = "center-hz", value_parser = frequency)]
    pub frequency_hz: Option<f64>,
    /// How the file stores its samples (default: from the extension): cu8, cs8,
    /// cs16, cs16_be, cu16, cs32, cs32_be, cf32 (GNU Radio's cfile), cf32_be, cf64,
    /// wav or sigmf (a .sigmf-meta/.sigmf-data pair or a .sigmf archive). SigMF's
    /// names (ci16_le …) are accepted too. A .bin, .raw, .dat or .iq file needs it.
    #[arg(short = 'F', long, ignore_case = true, value_parser = iq_format())]
    pub format: Option<String>,
    /// Analyse this channel only (0-based) of a multi-channel SigMF recording
    /// (default: every channel, each reported on its own).
    #[arg(short = 'C', long, value_name = "N")]
    pub channel: Option<u32>,
    /// Measure the recording radio's frequency error from a broadcast carrier in it,
    /// as `clkin calibrate` does live (docs/operator.md#calibrating-from-a-recording).
    #[arg(long, value_enum, value_name = "METHOD")]
    pub freq_cal: Option<CalMethodArg>,
    /// The carrier's frequency for `--freq-cal`, Hz (`935.2M`; default: the
    /// recording's centre): the BCCH carrier (gsm) or the downlink's centre (lte).
    #[arg(long, value_parser = frequency, value_name = "HZ")]
    pub carrier_hz: Option<f64>,
    /// Keep a PASS `--freq-cal` measurement in .local/calibration.json for this radio,
    /// `driver=DRIVER,serial=SERIAL[,remote=HOST]` (nothing is kept without it).
    #[arg(long, value_name = "RADIO")]
    pub store_for_radio: Option<String>,
    #[command(flatten)]
    pub fft: FftArgs,
    /// Overlap fraction, 0 ≤ F < 1.
    #[arg(long, default_value_t = 0.5)]
    pub overlap: f64,
    #[command(flatten)]
    pub clkin: ClkinArgs,
    /// Write a spectrum PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite a `--plot` file that exists (refused otherwise).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub peaks: PeakArgs,
}

/// `sweep` options (docs/operator.md#sweeps-rxnode-sweep).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// Lowest frequency of the band, Hz (`88M`).
    #[arg(long, value_parser = frequency)]
    pub start_hz: f64,
    /// Highest frequency of the band, Hz (`108M`).
    #[arg(long, value_parser = frequency)]
    pub stop_hz: f64,
    /// Bin width, Hz (`10k`): exact when the sample rate is a whole multiple of it,
    /// else the widest bin no wider.
    #[arg(short = 'B', long, value_parser = si_number)]
    pub bin_hz: f64,
    /// Sample rate per hop, S/s (`10M`).
    #[arg(short = 'r', long, default_value = "10M", value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    #[arg(short = 'g', long)]
    pub gain_db: Option<String>,
    /// Samples analysed per hop (seconds, or `50ms`); `-t`, soapy_power's
    /// integration time, is accepted too.
    #[arg(long, short_alias = 't', default_value_t = 0.05, value_parser = seconds)]
    pub dwell_s: f64,
    /// Samples discarded after each retune (seconds, or `10ms`).
    #[arg(long, default_value_t = 0.01, value_parser = seconds)]
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    #[arg(long, default_value_t = 0.25)]
    pub crop: f64,
    /// Passes over the band (a heatmap is drawn when > 1).
    #[arg(long, default_value_t = 1, conflicts_with = "total_s")]
    pub repeats: u32,
    /// Start a pass every S seconds (rtl_power's `-i`; `30s`, `5m`); the stream
    /// stops in between.
    #[arg(short = 'i', long, value_parser = seconds)]
    pub interval_s: Option<f64>,
    /// Sweep for S seconds in all (rtl_power's `-e`; `1h`): floor(S / --interval-s)
    /// passes, within the policy's rx.max_duration_s.
    #[arg(short = 'e', long, requires = "interval_s", value_parser = seconds)]
    pub total_s: Option<f64>,
    /// Write the rtl_power CSV here; `-` writes it to standard output as each pass
    /// ends (the report then goes to standard error).
    #[arg(short = 'O', long)]
    pub csv: Option<PathBuf>,
    /// Write the spectrum PNG here (and `<stem>_heatmap.png` when repeats > 1).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite `--csv` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// Tune every hop with the radio's frequency calibration from `rxnode clkin
    /// calibrate` (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long, conflicts_with = "ppm")]
    pub apply_cal: bool,
    #[command(flatten)]
    pub radio: RadioArgs,
}

/// The radio's own settings (docs/operator.md#radio-settings).
#[derive(Debug, Args)]
pub struct RadioArgs {
    /// A SoapySDR setting (writeSetting), repeatable: `--setting biastee=true`. Refused
    /// unless the node's policy lists the key in rx.allowed_settings.
    #[arg(long = "setting", value_name = "KEY=VALUE", value_parser = key_value)]
    pub settings: Vec<(String, String)>,
    /// Stream args for the RX stream: `bufflen=65536,buffers=15`.
    #[arg(long, value_name = "KEY=VALUE,…", value_delimiter = ',', value_parser = key_value)]
    pub stream_args: Vec<(String, String)>,
    /// Automatic gain control on.
    #[arg(long)]
    pub agc: bool,
    /// Manual frequency correction, ppm (rtl_power's -p): tunes as a calibration of
    /// this many ppm would; not with --apply-cal.
    #[arg(short = 'p', long, allow_negative_numbers = true)]
    pub ppm: Option<f64>,
    /// RX channel of a multi-channel radio (default 0).
    #[arg(short = 'C', long)]
    pub channel: Option<usize>,
}

impl RadioArgs {
    /// The library's radio settings.
    pub fn settings(&self) -> rxnode_interlock::RadioSettings {
        rxnode_interlock::RadioSettings {
            settings: self.settings.iter().cloned().collect(),
            stream_args: self.stream_args.iter().cloned().collect(),
            agc: self.agc,
            ppm: self.ppm,
            channel: self.channel,
        }
    }
}
