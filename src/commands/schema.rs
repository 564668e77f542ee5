//! `rxnode schema <KIND>`.
use crate::cli::SchemaKind;
use anyhow::Result;
use rxnode::Outcome;

/// Run the subcommand.
pub fn run(kind: SchemaKind) -> Result<Outcome> {
    rxnode::cmd_schema(match kind {
        SchemaKind::Plan => rxnode::SchemaKind::Plan,
        SchemaKind::Result => rxnode::SchemaKind::Result,
        SchemaKind::Policy => rxnode::SchemaKind::Policy,
        SchemaKind::Task => rxnode::SchemaKind::Task,
    })
}
