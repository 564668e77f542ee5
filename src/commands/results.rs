//! `rxnode results …` on the main PC.
use crate::cli::{ResultsArgs, ResultsCmd};
use anyhow::Result;
use rxnode::{Ctx, Outcome};

/// Run the subcommand. A refused field of the options is named by its flag.
pub fn run(ctx: &Ctx, args: &ResultsArgs) -> Result<Outcome> {
    let options = rxnode::ResultsOptions {
        sub: args.sub.as_ref().map(ResultsCmd::query),
        ..args.options.clone()
    };
    rxnode::cmd_results(ctx, &options).map_err(super::flags::flag_named)
}

impl ResultsCmd {
    fn query(&self) -> rxnode::ResultsQuery {
        match self {
            ResultsCmd::Show {
                task_id,
                from,
                markdown,
                plot,
                force,
            } => rxnode::ResultsQuery::Show {
                task_id: task_id.clone(),
                from: from.clone(),
                how: match (plot, markdown) {
                    (Some(dir), _) => rxnode::ShowAs::Plot {
                        dir: dir.clone(),
                        force: *force,
                    },
                    (None, true) => rxnode::ShowAs::Markdown,
                    (None, false) => rxnode::ShowAs::Rendered,
                },
            },
            ResultsCmd::Verify { task_id, from } => rxnode::ResultsQuery::Verify {
                task_id: task_id.clone(),
                from: from.clone(),
            },
            ResultsCmd::Nodes => rxnode::ResultsQuery::Nodes,
            ResultsCmd::Report { html, force } => rxnode::ResultsQuery::Report {
                html: html.clone(),
                force: *force,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    /// A refused field of `results` is printed with the operator's flag, exit 2 still.
    #[test]
    fn a_refused_results_field_is_told_by_its_flag() {
        let e = super::super::flags::flag_named(rxnode::bad_field(
            "limit",
            " 0: list at least one result (or --all)",
        ));
        assert_eq!(
            e.to_string(),
            "--limit 0: list at least one result (or --all)"
        );
        assert_eq!(rxnode::error_json(&e).exit, 2);
        for (field, flag) in [
            ("since", "--since"),
            ("from", "--from"),
            ("status", "--status"),
            ("node", "--node"),
        ] {
            assert_eq!(super::super::flags::flag_of(field), Some(flag));
        }
    }
}
