//! placeholder
use crate::cli::{Cli, ResultsArgs};
use crate::exit::Outcome;
use anyhow::Result;
pub fn cmd_results(_cli: &Cli, _a: &ResultsArgs) -> Result<Outcome> { todo!() }
