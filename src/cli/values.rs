//! The value parsers only the binary uses (`rxnode schema`'s KIND); every other
//! value is parsed by the library's own parsers into its own types
//! (`rxnode::frequency`, `rxnode::gain`, `rxnode::since` …).

/// `rxnode schema`'s KIND: the library's kinds ([`rxnode::SchemaKind::ALL`]), by name.
pub(super) fn schema_kind() -> impl clap::builder::TypedValueParser<Value = rxnode::SchemaKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        rxnode::SchemaKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.about())),
    )
    .try_map(|name| rxnode::SchemaKind::from_name(&name).ok_or(format!("no schema {name}")))
}
