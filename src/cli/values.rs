//! The value parsers of the command line: frequencies, rates and durations with
//! their units (docs/operator.md#units), and the listed words shells complete.
/// `--risk`: a risk level as the protocol spells it (values listed, so shells
/// complete them).
pub(super) fn risk_level(
) -> impl clap::builder::TypedValueParser<Value = rxnode_interlock::RiskLevel> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["GREEN", "YELLOW", "RED"]).try_map(|s| {
        rxnode_interlock::RiskLevel::parse(&s.to_ascii_uppercase())
            .ok_or_else(|| "not GREEN, YELLOW or RED".to_owned())
    })
}

/// `--record-format`: `cf32`, `ci16` or `ci8` (`cs16` and `cs8`, SoapySDR's names,
/// too), listed so shells complete them.
pub(super) fn record_format(
) -> impl clap::builder::TypedValueParser<Value = rxnode_dsp::RecordFormat> {
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
    .try_map(|s| rxnode_dsp::RecordFormat::parse(&s).map_err(|e| e.to_string()))
}

/// `analyze --format`: every layout the reader knows, with its other spellings,
/// listed so shells complete them; passed on as typed (the reader parses it once).
pub(super) fn iq_format() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::{PossibleValue, PossibleValuesParser};
    PossibleValuesParser::new(
        rxnode_dsp::IqFormat::names()
            .into_iter()
            .map(|(name, aliases)| PossibleValue::new(name).aliases(aliases)),
    )
}

/// `results --status`: a result status in any case (`not-run`, `not_run` and
/// `"NOT RUN"` for NOT RUN), listed so shells complete them; passed on spelled
/// as typed (the library reads it once, [`rxnode`]'s typed status parser).
pub(super) fn result_status() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::{PossibleValue, PossibleValuesParser};
    PossibleValuesParser::new([
        PossibleValue::new("PASS"),
        PossibleValue::new("FAIL"),
        PossibleValue::new("PARTIAL"),
        PossibleValue::new("SKIP"),
        PossibleValue::new("BLOCKED"),
        PossibleValue::new("NOT_RUN").aliases(["not-run", "NOT RUN"]),
    ])
}

/// `rxnode schema`'s KIND: the library's kinds ([`rxnode::SchemaKind::ALL`]), by name.
pub(super) fn schema_kind() -> impl clap::builder::TypedValueParser<Value = rxnode::SchemaKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        rxnode::SchemaKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.about())),
    )
    .try_map(|name| rxnode::SchemaKind::from_name(&name).ok_or(format!("no schema {name}")))
}

/// `KEY=VALUE`.
pub(super) fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE (e.g. biastee=true)")),
    }
}

/// A number with an optional SI suffix (`10k`, `1.75M`): bin widths and
/// bandwidths (docs/operator.md#units).
pub(crate) fn si_number(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_si(text)
}

/// A radio frequency (`433.92M`), refused when implausible (`-f 100`: did you
/// mean `100M`?).
pub(crate) fn frequency(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::Frequency)
}

/// A sample rate (`2M`, `2 MS/s`), refused when implausible.
pub(crate) fn sample_rate(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::SampleRate)
}

/// A duration: plain seconds (`0.05`) or with a unit (`500ms`, `2s`, `10m`, `1h`).
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_seconds(text)
}
