//! The command line's values as the library's own types, and the argument
//! groups several commands share.
//!
//! A command's options are one library type that clap fills (`#[derive(clap::Args)]`,
//! docs/architecture.md#typed-at-the-edge): each value is parsed once, here, into
//! the type the library uses — a frequency, a rate and a duration with their units
//! (docs/operator.md#units), a [`GainSpec`], an [`IqFormat`], a [`RecordFormat`], a
//! [`FreqCalMethod`], a [`RiskLevel`] — and a refused value is clap's error, naming
//! the flag from clap's own table. The groups (FFT, peaks, CLKIN, the radio's own
//! settings) are one type each, flattened into every command that has them.
use rxnode_dsp::{IqFormat, RecordFormat};
use rxnode_interlock::{FreqCalMethod, GainSpec, RadioSettings, RiskLevel};
use std::collections::BTreeMap;

/// The FFT of `capture` and `analyze`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct FftOptions {
    /// FFT size (any size in 16..=1048576; powers of two are fastest).
    #[arg(long, default_value_t = 2048)]
    pub fft_size: usize,
}

/// The peak list of `capture` and `analyze`.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct PeakOptions {
    /// Most peaks to list, strongest first (1..=64).
    #[arg(long, default_value_t = 8)]
    pub max_peaks: usize,
    /// List a peak only this many dB above the noise floor.
    #[arg(long, default_value_t = 6.0, value_parser = decibels)]
    pub min_snr_db: f64,
}

/// The CLKIN check of `capture` and `analyze` (docs/operator.md#clkin).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ClkinOptions {
    /// Reference tone RF frequency for the CLKIN check, Hz (`100.1M`).
    #[arg(long, value_parser = frequency)]
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    #[arg(long, default_value_t = 0.5, value_parser = ppm)]
    pub clkin_tolerance_ppm: f64,
    /// The CLKIN reference tone's expected level (dBFS, ±6 dB): tells it from other
    /// carriers in the search window (docs/operator.md#clkin).
    #[arg(
        long,
        requires = "clkin_tone_hz",
        allow_hyphen_values = true,
        value_parser = level_dbfs
    )]
    pub clkin_expected_dbfs: Option<f64>,
}

/// The radio's own settings (docs/operator.md#radio-settings), as the command
/// line gives them; [`RadioOptions::settings`] is the step's [`RadioSettings`].
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct RadioOptions {
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
    #[arg(short = 'p', long, allow_negative_numbers = true, value_parser = ppm)]
    pub ppm: Option<f64>,
    /// RX channel of a multi-channel radio (default 0).
    #[arg(short = 'C', long)]
    pub channel: Option<usize>,
}

impl RadioOptions {
    /// The settings as a plan step carries them (a later key wins, as SoapySDR's
    /// own key-value args do).
    pub fn settings(&self) -> RadioSettings {
        RadioSettings {
            settings: self.settings.iter().cloned().collect(),
            stream_args: self.stream_args.iter().cloned().collect(),
            agc: self.agc,
            ppm: self.ppm,
            channel: self.channel,
        }
    }
}

/// The flag that sets `field` of the options `A`, from clap's own table of `A`'s
/// arguments (an argument's id is its field's name): `--LONG`; `None` for a
/// field no flag sets. For the library's own texts that must say the flag (a
/// refusal the ledger keeps); a command names the fields of an error itself.
pub(crate) fn flag_in<A: clap::Args>(field: &str) -> Option<String> {
    A::augment_args(clap::Command::new("options"))
        .get_arguments()
        .find(|a| a.get_id() == field)
        .and_then(|a| a.get_long())
        .map(|long| format!("--{long}"))
}

/// A policy check's message about a radio command, its plan fields told as the
/// flags of the command's options `A` the operator typed (`duration_s` is
/// `--duration-s`, `apply_calibration` `--apply-cal`), as `sweep` tells its own;
/// a field the command has no flag for keeps its name.
pub(crate) fn policy_flags<A: clap::Args>(msg: &str) -> String {
    const FIELDS: [&str; 8] = [
        "frequency_hz",
        "sample_rate_hz",
        "duration_s",
        "gain_db",
        "bandwidth_hz",
        "tone_hz",
        "ppm",
        "apply_calibration",
    ];
    crate::exit::plan_fields(msg, &FIELDS).told(|f| {
        let id = if f == "apply_calibration" {
            "apply_cal"
        } else {
            f
        };
        flag_in::<A>(id).unwrap_or_else(|| f.to_owned())
    })
}

/// `KEY=VALUE`.
pub fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE (e.g. biastee=true)")),
    }
}

/// A number with an optional SI suffix (`10k`, `1.75M`): bin widths and
/// bandwidths (docs/operator.md#units).
pub fn si_number(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_si(text)
}

/// A radio frequency (`433.92M`), refused when implausible (`-f 100`: did you
/// mean `100M`?).
pub fn frequency(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::Frequency)
}

/// A sample rate (`2M`, `2 MS/s`), refused when implausible.
pub fn sample_rate(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::SampleRate)
}

/// A duration: plain seconds (`0.05`) or with a unit (`500ms`, `2s`, `10m`, `1h`).
pub fn seconds(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_seconds(text)
}

/// A radio operation's length (a capture, a dwell, a settling time) as
/// [`seconds`], refused beyond the range a plan's durations have
/// (docs/operator.md#units).
pub fn duration(text: &str) -> Result<f64, String> {
    let v = rxnode_interlock::parse_seconds(text)?;
    match rxnode_interlock::Quantity::Duration.implausible(v) {
        Some(why) => Err(why),
        None => Ok(v),
    }
}

/// A plain number (`0.5`, `-20`, `1e-3`), finite; the message never prints
/// hundreds of digits.
fn finite(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{text:?} is not a finite number")),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

/// A number as a quantity has it, refused outside its plausible range
/// (docs/operator.md#units).
fn within(text: &str, q: rxnode_interlock::Quantity) -> Result<f64, String> {
    let v = finite(text)?;
    match q.implausible(v) {
        Some(why) => Err(why),
        None => Ok(v),
    }
}

/// A frequency error or tolerance in ppm, within ±1000 ppm.
pub fn ppm(text: &str) -> Result<f64, String> {
    within(text, rxnode_interlock::Quantity::Ppm)
}

/// A frequency tolerance in ppb, at most 1 000 000 ppb.
pub fn ppb(text: &str) -> Result<f64, String> {
    within(text, rxnode_interlock::Quantity::Ppb)
}

/// A level difference in dB (an SNR), within −100 … 200 dB.
pub fn decibels(text: &str) -> Result<f64, String> {
    within(text, rxnode_interlock::Quantity::Gain)
}

/// A level in dBFS: −300 … 0 (a plan's `expected_dbfs` has the same range).
pub fn level_dbfs(text: &str) -> Result<f64, String> {
    let v = finite(text)?;
    let lo = rxnode_interlock::MIN_LEVEL_DBFS;
    if (lo..=0.0).contains(&v) {
        return Ok(v);
    }
    Err(format!(
        "{} dBFS is outside the levels {lo} … 0 dBFS",
        rxnode_interlock::compact(v)
    ))
}

/// SoapySDR device args as typed after `-d`/`--device`: `KEY=VALUE[,KEY=VALUE…]`.
/// A bare word (`-d hackrf`) is refused naming the fix (`driver=hackrf`): SoapySDR
/// takes it as a key with no value that most modules ignore, so it matched
/// whichever radio was found first.
pub fn device(s: &str) -> Result<String, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let Some(word) = parts.iter().find(|p| !p.is_empty() && !p.contains('=')) else {
        return Ok(s.to_owned());
    };
    // A lone word with no driver named is a driver's name typed without `driver=`.
    let fix = if parts
        .iter()
        .any(|p| p.split('=').next().map(str::trim) == Some("driver"))
    {
        format!("give it a value (`{word}=…`) or drop it")
    } else {
        format!("`driver={word}`")
    };
    Err(format!(
        "{word:?} is not KEY=VALUE: device args are SoapySDR's KEY=VALUE[,KEY=VALUE…] \
         (e.g. driver=hackrf,serial=…) — fix: {fix} (`rxnode inventory --dry-run` lists each \
         radio's args)"
    ))
}

/// A gain as typed: a number of dB (`20`), per element (`LNA=24,VGA=20`), or a
/// JSON object (`{"LNA": 24}`, as a plan step writes it).
pub fn gain(s: &str) -> Result<GainSpec, String> {
    let t = s.trim();
    if let Ok(g) = t.parse::<f64>() {
        return Ok(GainSpec::Total(g));
    }
    if t.starts_with('{') {
        return serde_json::from_str::<GainSpec>(t).map_err(|e| e.to_string());
    }
    let mut m = BTreeMap::new();
    for part in t.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(
                "expected a number of dB or ELEMENT=DB[,ELEMENT=DB…] (e.g. LNA=24,VGA=20)"
                    .to_owned(),
            );
        };
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{:?} is not a number of dB", v.trim()))?;
        if m.insert(k.trim().to_owned(), v).is_some() {
            return Err(format!("element {:?} given twice", k.trim()));
        }
    }
    Ok(GainSpec::Elements(m))
}

/// `--record-format`: `cf32`, `ci16` or `ci8` (`cs16` and `cs8`, SoapySDR's names,
/// too), listed so shells complete them.
pub fn record_format() -> impl clap::builder::TypedValueParser<Value = RecordFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("cf32").help("float32 I/Q, 8 bytes a sample"),
        PossibleValue::new("ci16")
            .alias("cs16")
            .help("the radio's int16 I/Q as it came, 4 bytes a sample"),
        PossibleValue::new("ci8")
            .alias("cs8")
            .help("the radio's int8 I/Q as it came (HackRF), 2 bytes a sample"),
    ])
    .try_map(|s| RecordFormat::parse(&s).map_err(|e| e.to_string()))
}

/// `analyze --format`: every layout the reader knows, with its other spellings,
/// listed so shells complete them.
pub fn iq_format() -> impl clap::builder::TypedValueParser<Value = IqFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        IqFormat::names()
            .into_iter()
            .map(|(name, aliases)| PossibleValue::new(name).aliases(aliases)),
    )
    .try_map(|s| IqFormat::parse(&s).map_err(|e| e.to_string()))
}

/// The broadcast signal a frequency calibration measures: `gsm` or `lte`.
pub fn cal_method() -> impl clap::builder::TypedValueParser<Value = FreqCalMethod> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("gsm")
            .help("A GSM BCCH carrier's FCCH bursts; `-f` is the BCCH carrier's frequency"),
        PossibleValue::new("lte")
            .help("An LTE downlink's PSS/SSS; `-f` is the downlink's centre frequency"),
    ])
    .map(|s| match s.as_str() {
        "gsm" => FreqCalMethod::Gsm,
        _ => FreqCalMethod::Lte,
    })
}

/// `--risk`: a risk level as the protocol spells it (values listed, so shells
/// complete them).
pub fn risk_level() -> impl clap::builder::TypedValueParser<Value = RiskLevel> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["GREEN", "YELLOW", "RED"]).try_map(|s| {
        RiskLevel::parse(&s.to_ascii_uppercase())
            .ok_or_else(|| "not GREEN, YELLOW or RED".to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gain_flag_forms() {
        assert_eq!(gain("20").unwrap(), GainSpec::Total(20.0));
        assert_eq!(
            gain("LNA=24, VGA=20").unwrap(),
            GainSpec::Elements([("LNA".into(), 24.0), ("VGA".into(), 20.0)].into())
        );
        assert_eq!(gain(r#"{"LNA": 8}"#).unwrap().total(), 8.0);
        assert!(gain("LNA=x").unwrap_err().contains("not a number"));
        assert!(gain("loud").unwrap_err().contains("ELEMENT=DB"));
        assert!(gain("LNA=1,LNA=2").unwrap_err().contains("twice"));
    }
}
