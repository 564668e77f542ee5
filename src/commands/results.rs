//! `rxnode results …` on the main PC.
use crate::cli::{ResultsArgs, ResultsCmd};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand.
pub fn run(ctx: &Ctx, args: &ResultsArgs) -> Result<Outcome> {
    rxnode::cmd_results(ctx, &args.options())
}

impl ResultsCmd {
    fn query(&self) -> rxnode::ResultsQuery {
        match self {
            ResultsCmd::Show { task_id, from } => rxnode::ResultsQuery::Show {
                task_id: task_id.clone(),
                from: from.clone(),
            },
            ResultsCmd::Verify { task_id, from } => rxnode::ResultsQuery::Verify {
                task_id: task_id.clone(),
                from: from.clone(),
            },
            ResultsCmd::Nodes => rxnode::ResultsQuery::Nodes,
        }
    }
}

impl ResultsArgs {
    /// The library's options for this command.
    pub fn options(&self) -> rxnode::ResultsOptions {
        let a = self;
        rxnode::ResultsOptions {
            node: a.node.clone(),
            status: a.status.clone(),
            since: a.since.clone(),
            no_fetch: a.no_fetch,
            limit: (!a.all).then_some(a.limit),
            sub: a.sub.as_ref().map(ResultsCmd::query),
        }
    }
}
