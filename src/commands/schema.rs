//! `rxnode schema <KIND>`.
use anyhow::Result;
use rxnode::{Outcome, SchemaKind};

/// Run the subcommand.
pub fn run(kind: SchemaKind) -> Result<Outcome> {
    rxnode::cmd_schema(kind)
}
