//! The arguments of the main PC's commands: `results` and `task`.
use super::SourceArgs;
use clap::{Args, Subcommand};

/// `results` options and subcommands.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[command(flatten)]
    pub options: rxnode::ResultsOptions,
    #[command(flatten)]
    pub source: SourceArgs,
    /// `show ID`, `verify ID` or `nodes`; none lists the newest results.
    #[command(subcommand)]
    pub sub: Option<ResultsCmd>,
}
/// `results` subcommands.
#[derive(Debug, Subcommand)]
pub enum ResultsCmd {
    /// One result as a person reads it: its Markdown rendered for the terminal
    /// (`--json` the JSON, `--markdown` the file, `--plot DIR` its pictures).
    Show {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task (or the result's folder,
        /// `rx-results/ID[/NODE]`, when one node answered twice).
        #[arg(long = "from")]
        from: Option<String>,
        /// Print the published RX_RESULT.md as it is (control characters escaped).
        #[arg(long, conflicts_with = "plot")]
        markdown: bool,
        /// Draw the result's pictures (spectra, heatmaps, CLKIN compare, freq_cal)
        /// into DIR from the published data, as the node drew them.
        #[arg(long, value_name = "DIR")]
        plot: Option<std::path::PathBuf>,
        /// Replace pictures already in DIR (without it, a file there is refused).
        #[arg(long, requires = "plot")]
        force: bool,
    },
    /// Validate one result as fetched: schema, MD/JSON agreement, the commit that added it.
    Verify {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task (default: every node); or
        /// the result's folder, `rx-results/ID[/NODE]`.
        #[arg(long = "from")]
        from: Option<String>,
    },
    /// Each node's result count and last result time.
    Nodes,
    /// Write a static site (no server, no script) of the fleet and its results:
    /// DIR/index.html and one page per result, with its pictures.
    Report {
        /// The folder to write the site in.
        #[arg(long, value_name = "DIR")]
        html: std::path::PathBuf,
        /// Replace pages and pictures already in DIR (without it, a file there
        /// is refused).
        #[arg(long)]
        force: bool,
    },
}

/// `task` subcommands.
#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Write a task file with EXPECTED_HEAD = the watched branch's current head, validated.
    New(TaskNewArgs),
}

/// `task new` options (the watched branch is `--branch`).
#[derive(Debug, Args)]
pub struct TaskNewArgs {
    #[command(flatten)]
    pub options: rxnode::TaskNewOptions,
    #[command(flatten)]
    pub source: SourceArgs,
}
