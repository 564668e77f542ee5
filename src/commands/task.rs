//! `rxnode task new` on the main PC.
use crate::cli::{TaskCmd, TaskNewArgs};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the options is named by its flag.
pub fn run(ctx: &Ctx, cmd: &TaskCmd) -> Result<Outcome> {
    match cmd {
        TaskCmd::New(args) => {
            rxnode::cmd_task_new(ctx, &args.options()).map_err(super::flags::flag_named)
        }
    }
}

impl TaskNewArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::TaskNewOptions {
        let a = self;
        rxnode::TaskNewOptions {
            id: a.id.clone(),
            title: a.title.clone(),
            hardware: a.hardware,
            rx: a.rx,
            tx: a.tx,
            risk: a.risk,
            plan: a.plan.clone(),
            body: a.body.clone(),
            no_push: a.no_push,
            out: a.out.clone(),
            force: a.force,
            nodes: a.node.clone(),
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
        assert_eq!(rxnode::error_json(&e)["exit"], 2);
        assert_eq!(
            super::super::flags::flag_of("task_path"),
            Some("--task-path")
        );
        assert_eq!(super::super::flags::flag_of("plan"), Some("--plan"));
        let other = super::super::flags::flag_named(anyhow::anyhow!("disk full"));
        assert_eq!(other.to_string(), "disk full");
    }
}
