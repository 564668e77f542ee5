//! `rxnode task new` on the main PC.
use crate::cli::{TaskCmd, TaskNewArgs};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, cmd: &TaskCmd) -> Result<Outcome> {
    match cmd {
        TaskCmd::New(args) => rxnode::cmd_task_new(ctx, &args.options()),
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
