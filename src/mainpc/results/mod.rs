//! `rxnode results [--json] [--node N] [--status S] [--since T]`, `results show ID`,
//! `results verify ID`, `results nodes`: the main PC reads what the RX nodes
//! published (docs/protocol.md#6-the-main-pcs-side).
//!
//! `rx-node` is fetched into the private ref [`PRIVATE_REF`] and every node's own
//! `rx-results/<NODE>` under `refs/rxnode/main-pc/rx-results/` only — never the
//! work tree, the index, HEAD, a branch or a remote-tracking ref (so never the
//! watched branch's). Everything is read from the object database; what was
//! seen of each branch is kept in the Git folder (`seen.rs`), so a branch
//! rewritten by someone is named. What is read was
//! written by RX nodes and travelled through Git: it is treated as untrusted input
//! (sizes bounded before loading, names checked, terminal control characters never
//! printed raw).
mod draw;
mod fetch;
mod fetched;
mod html;
mod list;
mod nodes;
mod posted;
mod seen;
mod show;
mod term_md;
mod text;
mod tree;
mod verify;

use crate::context::Ctx;
use crate::exit::{bad_field, Outcome};
use crate::result::Status;
use anyhow::Result;
use fetch::{fetch_private, read_private, read_sources};
use fetched::Fetched;
pub(crate) use fetched::PRIVATE_REF;
use git2::Repository;
use list::Filter;
pub use show::ShowAs;
use text::parse_since;

/// Results listed unless `--limit N` or `--all` says otherwise.
pub const DEFAULT_RESULTS_LIMIT: usize = 50;

/// `results` options and subcommands.
#[derive(Debug, Clone, clap::Args)]
pub struct ResultsOptions {
    /// Only results of this node (the listing and `report`; before or after `report`).
    #[arg(long, global = true)]
    pub node: Option<String>,
    /// Only results with this status (any case; `not-run` for NOT RUN).
    #[arg(long, global = true, ignore_case = true, value_parser = result_status())]
    pub status: Option<Status>,
    /// Only results completed at or after this time: ISO 8601, a date (UTC), or an age (`90m`, `12h`, `7d`).
    #[arg(long, global = true, value_parser = since)]
    pub since: Option<time::OffsetDateTime>,
    /// Read the local copy only (no fetch); before or after `show`, `verify`, `nodes`.
    #[arg(long, global = true)]
    pub no_fetch: bool,
    /// List at most the newest N results (by when they landed on rx-node).
    #[arg(long, global = true, default_value_t = DEFAULT_RESULTS_LIMIT, conflicts_with = "all")]
    pub limit: usize,
    /// List every result (reads the whole rx-node history: slow with many results).
    #[arg(long, global = true)]
    pub all: bool,
    /// `show ID`, `verify ID` or `nodes`; none lists every result (the command
    /// line's subcommand, not a flag).
    #[arg(skip)]
    pub sub: Option<ResultsQuery>,
}

impl ResultsOptions {
    /// The newest results to list at most; `None` lists every one (`all`).
    fn most(&self) -> Option<usize> {
        (!self.all).then_some(self.limit)
    }
}

/// `results` subcommands.
#[derive(Debug, Clone)]
pub enum ResultsQuery {
    /// One result: its Markdown rendered for a terminal (`--json` the JSON),
    /// the raw Markdown, or its pictures drawn into a folder.
    Show {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task.
        from: Option<String>,
        /// What to print.
        how: ShowAs,
    },
    /// Validate one result as fetched: schema, MD/JSON agreement, the commit that added it.
    Verify {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task (default: every node).
        from: Option<String>,
    },
    /// Each node's last heartbeat (alive, stale, silent), queue, radios and last result.
    Nodes,
    /// A static site of the fleet and its results in this folder
    /// (docs/operator.md#the-fleet-page).
    Report {
        /// Where `index.html` and the result pages go.
        html: std::path::PathBuf,
        /// Replace files already there (else they are refused, naming one).
        force: bool,
    },
}

/// The command.
pub fn cmd_results(ctx: &Ctx, args: &ResultsOptions) -> Result<Outcome> {
    let repo = Repository::open(&ctx.repo).map_err(|e| {
        crate::git::ops::path_too_long(&ctx.repo, &e).unwrap_or_else(|| {
            anyhow::Error::new(e).context(format!(
                "{} is not a Git repository (run rxnode results in a clone of the project)",
                ctx.repo.display()
            ))
        })
    })?;
    let filter = filter(args)?;
    refuse_unused_filter(args)?;
    crate::git::ops::set_timeouts();
    let remote = ctx.source.remote.as_str();
    let before = read_private(&repo)?;
    // `nodes` also reads every node's status branch (docs/protocol.md#node-status).
    let with_status = matches!(
        args.sub,
        Some(ResultsQuery::Nodes | ResultsQuery::Report { .. })
    );
    let tip = if args.no_fetch {
        before
    } else {
        fetch_private(&repo, remote, with_status)?
    };
    let sources = read_sources(&repo, tip)?;
    // Every results branch against what this PC saw of it last.
    let rewritten = seen::check(
        &repo,
        &seen::is_results_branch,
        &seen::results_now(&sources),
        !args.no_fetch,
    );
    for (b, why) in &rewritten {
        note!("rxnode: warning: {b} {why}");
    }
    let fetched = Fetched {
        ctx,
        repo: &repo,
        tip,
        never_fetched: args.no_fetch && before.is_none() && sources.is_empty(),
        sources,
        rewritten,
        budget: tree::Budget::new(),
        posted: posted::Posted::new(&ctx.source),
    };
    match &args.sub {
        None => list::cmd_list(&fetched, &filter, args.most()),
        Some(ResultsQuery::Show { task_id, from, how }) => {
            show::cmd_show(&fetched, task_id, &fetched.select(task_id, from)?, how)
        }
        Some(ResultsQuery::Verify { task_id, from }) => {
            verify::cmd_verify(&fetched, &fetched.select(task_id, from)?)
        }
        Some(ResultsQuery::Nodes) => nodes::cmd_nodes(&fetched),
        Some(ResultsQuery::Report { html, force }) => {
            let overwrite = draw::Overwrite {
                field: "html",
                force: *force,
            };
            html::cmd_report(&fetched, &filter, args.most(), html, overwrite)
        }
    }
}

/// `show`, `verify` and `nodes` read one result or every node: a listing
/// filter given with them would change nothing, so it is refused (exit 2)
/// rather than silently ignored; `show`/`verify` pick a node with `--from`.
fn refuse_unused_filter(args: &ResultsOptions) -> Result<()> {
    let what = match &args.sub {
        Some(ResultsQuery::Show { .. }) => "show",
        Some(ResultsQuery::Verify { .. }) => "verify",
        Some(ResultsQuery::Nodes) => "nodes",
        None | Some(ResultsQuery::Report { .. }) => return Ok(()),
    };
    let given = [
        ("node", args.node.is_some()),
        ("status", args.status.is_some()),
        ("since", args.since.is_some()),
        ("limit", args.limit != DEFAULT_RESULTS_LIMIT),
        ("all", args.all),
    ];
    let Some((field, _)) = given.into_iter().find(|(_, on)| *on) else {
        return Ok(());
    };
    let fix = if what == "nodes" {
        "`results nodes` lists every node"
    } else {
        "pick a node with --from NODE"
    };
    Err(bad_field(
        field,
        format!(" filters the listing and `results report`, not `results {what}`: {fix}"),
    ))
}

/// The listing's filters from the options; a bad `status`, `limit`, `node` or
/// `since` is the operator's input error, naming the field.
fn filter(args: &ResultsOptions) -> Result<Filter<'_>> {
    let status_filter = args.status.map(|st| st.as_str().to_owned());
    if args.all && args.limit != DEFAULT_RESULTS_LIMIT {
        // Given on either side of `report`, where the parser cannot see both.
        return Err(bad_field(
            "limit",
            format!(" {}: give --limit N or --all, not both", args.limit),
        ));
    }
    if args.most() == Some(0) {
        return Err(bad_field(
            "limit",
            " 0: list at least one result (or --all)",
        ));
    }
    if let Some(n) = &args.node {
        crate::store::node::check_name(n).map_err(|e| bad_field("node", format!(": {e}")))?;
    }
    Ok(Filter {
        node: args.node.as_deref(),
        status: status_filter,
        since: args.since,
    })
}

/// `--since` as typed: ISO 8601, a date (UTC), or an age (`90m`, `12h`, `7d`)
/// before now.
pub fn since(text: &str) -> std::result::Result<time::OffsetDateTime, String> {
    parse_since(text, time::OffsetDateTime::now_utc())
}

/// `--status`: a result status in any case (`not-run`, `not_run` and `"NOT RUN"`
/// for NOT RUN), listed so shells complete them.
pub fn result_status() -> impl clap::builder::TypedValueParser<Value = Status> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("PASS"),
        PossibleValue::new("FAIL"),
        PossibleValue::new("PARTIAL"),
        PossibleValue::new("SKIP"),
        PossibleValue::new("BLOCKED"),
        PossibleValue::new("NOT_RUN").aliases(["not-run", "NOT RUN"]),
    ])
    .try_map(|s| Status::parse_typed(&s).ok_or_else(|| format!("{s:?} is no result status")))
}
