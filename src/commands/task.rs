//! `rxnode task new` on the main PC.
use crate::cli::TaskCmd;
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the options is named by its flag.
pub fn run(ctx: &Ctx, cmd: &TaskCmd) -> Result<Outcome> {
    match cmd {
        TaskCmd::New(args) => {
            rxnode::cmd_task_new(ctx, &args.options).map_err(super::flags::flag_named)
        }
    }
}

#[cfg(test)]
mod tests {
    /// A refused field of `task new` is printed with the operator's flag (`nodes`
    /// is the repeated `--node`), exit 2 still; every other error passes unchanged.
    #[test]
    fn a_refused_task_field_is_told_by_its_flag() {
        let e =
            super::super::flags::flag_named(rxnode::bad_field("nodes", " lab-1 is given twice"));
        assert_eq!(e.to_string(), "--node lab-1 is given twice");
        assert_eq!(rxnode::error_json(&e).exit, 2);
        assert_eq!(
            super::super::flags::flag_of("task_path"),
            Some("--task-path")
        );
        assert_eq!(super::super::flags::flag_of("plan"), Some("--plan"));
        let other = super::super::flags::flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(other.to_string(), "disk full");
    }
}
