//! placeholder
use crate::cli::{Cli, TaskNewArgs};
use crate::exit::Outcome;
use anyhow::Result;
pub fn cmd_task_new(_cli: &Cli, _a: &TaskNewArgs) -> Result<Outcome> { todo!() }
