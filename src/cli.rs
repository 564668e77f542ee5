//! Command-line definitions (clap). One subcommand per DESIGN §7 row.
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// rxnode: a safe RX agent for SDR labs.
#[derive(Debug, Parser)]
#[command(name = "rxnode", version, about, long_about = None)]
pub struct Cli {
    /// Use only the bundled simulated radio module `rxsim` (isolated from system modules).
    #[arg(long, global = true, env = "RXNODE_SIM", value_parser = clap::builder::BoolishValueParser::new(), default_value_t = false)]
    pub sim: bool,
    /// Print one JSON document instead of human text.
    #[arg(long, global = true)]
    pub json: bool,
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The RX checkout (a Git work tree); default: the current directory.
    #[arg(long, global = true, env = "RXNODE_REPO", default_value = ".")]
    pub repo: PathBuf,
    /// The node policy file (default: `.local/rxnode-policy.json`); must be a
    /// regular file of yours, outside the checkout or under `.local/`.
    #[arg(long, global = true, env = "RXNODE_POLICY")]
    pub policy: Option<PathBuf>,
    #[command(flatten)]
    pub watch_cfg: WatchConfig,
    #[command(subcommand)]
    pub command: Command,
}

/// Where tasks come from (DESIGN §2 defaults).
#[derive(Debug, Clone, Args)]
pub struct WatchConfig {
    /// Git remote to poll.
    #[arg(long, global = true, env = "RXNODE_REMOTE", default_value = "origin")]
    pub remote: String,
    /// Watched branch on that remote.
    #[arg(long, global = true, env = "RXNODE_BRANCH", default_value = rxnode_interlock::DEFAULT_BRANCH)]
    pub branch: String,
    /// Path of the task file inside the watched branch.
    #[arg(
        long,
        global = true,
        env = "RXNODE_TASK_PATH",
        default_value = "docs/handoff/NEXT_RX_TASK.md"
    )]
    pub task_path: String,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check a task file; print the derived risk and every error.
    Validate {
        /// The task file.
        file: PathBuf,
    },
    /// Poll the watched branch and prompt [A] Approve  [D] Defer  [S] Stop watcher.
    Watch(WatchArgs),
    /// Prompt again for a deferred or pending task.
    Review {
        /// The task ID.
        task_id: String,
    },
    /// State, heartbeat, pending/deferred/approved/completed tasks.
    Status,
    /// Execute an approved task's plan; results go to the outbox.
    Run {
        /// The task ID.
        task_id: String,
    },
    /// Enumerate and probe radios, read-only.
    Inventory(InventoryArgs),
    /// An RX-only capture for the operator at the laptop (never TX).
    Capture(CaptureArgs),
    /// The capture analysis on a recorded IQ file.
    Analyze(AnalyzeArgs),
    /// An RX-only wideband sweep for the operator (never TX; DESIGN §8).
    Sweep(SweepArgs),
    /// Check an RX_RESULT.json (schema, statuses, timeline, MD/JSON agreement, IQ hashes).
    ValidateResult {
        /// A task ID (its outbox) or a path to RX_RESULT.json.
        target: String,
    },
    /// Publish a task's result to the rx-node branch (confirmed by `PUBLISH <TASK_ID>`).
    Publish {
        /// The task ID.
        task_id: String,
        /// Also push refs/heads/rx-node to the remote.
        #[arg(long)]
        push: bool,
    },
    /// Mark a manually finished task complete.
    MarkCompleted {
        /// The task ID.
        task_id: String,
    },
    /// Check the set-up and explain what is wrong.
    Doctor,
    /// This node's name, carried in every result it publishes (DESIGN §10).
    #[command(subcommand)]
    Node(NodeCmd),
    /// On the main PC: read the results on `rx-node` (fetched into a private ref).
    Results(ResultsArgs),
    /// On the main PC: write tasks.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Print a JSON Schema (draft 2020-12): plan, result, policy or task.
    Schema {
        /// Which schema.
        kind: SchemaKind,
    },
    /// Node-local state maintenance (`rxnode state rebuild`).
    #[command(subcommand)]
    State(StateCommand),
    /// The whole loop on embedded defaults: a local bare origin and the simulated radio.
    Demo {
        /// Work in this folder instead of a fresh temporary one.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Print shell completions.
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// `rxnode state …`.
#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Rebuild `.local/rx_agent_state.json` from the ledger and the outboxes
    /// (after the state was lost, emptied, corrupted or replaced).
    Rebuild,
}

/// `watch` options.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// One poll cycle, then exit.
    #[arg(long)]
    pub once: bool,
    /// Seconds between polls (fractions allowed).
    #[arg(long, default_value_t = 30.0)]
    pub interval: f64,
    /// The decision flow on a local file: no fetch, no radio, no commit, no push.
    #[arg(long, requires = "task_file")]
    pub dry_run: bool,
    /// The task file for --dry-run.
    #[arg(long)]
    pub task_file: Option<PathBuf>,
    /// Task versions examined per poll at most (the newest; older ones are
    /// reported as not examined).
    #[arg(long, env = "RXNODE_HISTORY_LIMIT", default_value_t = rxnode::DEFAULT_HISTORY_LIMIT)]
    pub history_limit: usize,
    /// Commits one poll walks at most (the newest; older history is reported
    /// as not examined). Lower it on a slow laptop; it cannot be raised.
    #[arg(long, env = "RXNODE_WALK_LIMIT", default_value_t = rxnode::DEFAULT_WALK_LIMIT)]
    pub walk_limit: usize,
}

/// `inventory` options.
#[derive(Debug, Args)]
pub struct InventoryArgs {
    /// Read-only: probe without streaming or changing settings (the only mode).
    #[arg(long)]
    pub dry_run: bool,
    /// SoapySDR args to filter devices (e.g. `driver=hackrf`).
    #[arg(long, default_value = "")]
    pub args: String,
}

/// `capture` options.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// SoapySDR device args.
    #[arg(long)]
    pub device: String,
    /// Centre frequency.
    #[arg(long)]
    pub frequency_hz: f64,
    /// Sample rate.
    #[arg(long)]
    pub sample_rate_hz: f64,
    /// Capture length.
    #[arg(long)]
    pub duration_s: f64,
    /// RX gain.
    #[arg(long)]
    pub gain_db: Option<f64>,
    /// Clock source to select.
    #[arg(long)]
    pub clock_source: Option<String>,
    /// Reference tone RF frequency for the CLKIN check.
    #[arg(long)]
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    #[arg(long, default_value_t = 0.5)]
    pub clkin_tolerance_ppm: f64,
    /// FFT size.
    #[arg(long, default_value_t = 2048)]
    pub fft_size: usize,
    /// Record IQ: `.cf32`, `.wav`, `.sigmf-data` or `.sigmf-meta` (`.cs16` with
    /// `--record-format ci16`).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Sample type of the recording: `cf32` (default) or `ci16`, the radio's native
    /// CS16 as it came (SigMF `ci16_le`, half the bytes; for full rate).
    #[arg(long, requires = "record")]
    pub record_format: Option<String>,
}

/// `analyze` options.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The recording.
    pub file: PathBuf,
    /// Sample rate (raw formats).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Centre frequency, for an absolute axis.
    #[arg(long)]
    pub center_hz: Option<f64>,
    /// cf32, cs16, cs8, wav or sigmf (default: from the extension).
    #[arg(long)]
    pub format: Option<String>,
    /// FFT size.
    #[arg(long, default_value_t = 2048)]
    pub fft_size: usize,
    /// Overlap fraction, 0 ≤ F < 1.
    #[arg(long, default_value_t = 0.5)]
    pub overlap: f64,
    /// Reference tone RF frequency for the CLKIN check.
    #[arg(long)]
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    #[arg(long, default_value_t = 0.5)]
    pub clkin_tolerance_ppm: f64,
    /// Write a spectrum PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// `node` subcommands.
#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Set this node's name (`[A-Za-z0-9_-]{1,32}`), stored in `.local/rxnode-node.json`.
    SetName {
        /// The name, e.g. `LAB-RX2`.
        name: String,
    },
    /// Print this node's name.
    Show,
}

/// `results` options and subcommands.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Only results of this node.
    #[arg(long)]
    pub node: Option<String>,
    /// Only results with this status (PASS, FAIL, PARTIAL, SKIP, BLOCKED, "NOT RUN").
    #[arg(long)]
    pub status: Option<String>,
    /// Only results completed at or after this time: ISO 8601, a date (UTC), or an age (`90m`, `12h`, `7d`).
    #[arg(long)]
    pub since: Option<String>,
    /// Read the local copy only (no fetch).
    #[arg(long)]
    pub no_fetch: bool,
    /// List at most the newest N results (by when they landed on rx-node).
    #[arg(long, default_value_t = rxnode::DEFAULT_RESULTS_LIMIT, conflicts_with = "all")]
    pub limit: usize,
    /// List every result (reads the whole rx-node history: slow with many results).
    #[arg(long)]
    pub all: bool,
    /// `show ID`, `verify ID` or `nodes`; none lists the newest results.
    #[command(subcommand)]
    pub sub: Option<ResultsCmd>,
}

/// `results` subcommands.
#[derive(Debug, Subcommand)]
pub enum ResultsCmd {
    /// Render one result (Markdown; `--json` the JSON).
    Show {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task.
        #[arg(long = "from")]
        from: Option<String>,
    },
    /// Validate one result as fetched: schema, MD/JSON agreement, the commit that added it.
    Verify {
        /// The task ID.
        task_id: String,
        /// The node, when several answered this task (default: every node).
        #[arg(long = "from")]
        from: Option<String>,
    },
    /// Each node's result count and last result time.
    Nodes,
}

/// `task` subcommands.
#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Write a task file with EXPECTED_HEAD = the watched branch's current head, validated.
    New(TaskNewArgs),
}

/// `task new` options (the watched branch is the global `--branch`).
#[derive(Debug, Args)]
pub struct TaskNewArgs {
    /// TASK_ID (`[A-Za-z0-9_-]{1,64}`).
    #[arg(long)]
    pub id: String,
    /// TASK_TITLE (one line, at most 200 characters).
    #[arg(long)]
    pub title: String,
    /// HARDWARE_ACCESS = YES.
    #[arg(long)]
    pub hardware: bool,
    /// RF_RX = YES (implies --hardware).
    #[arg(long)]
    pub rx: bool,
    /// RF_TX = YES (implies --hardware; RED).
    #[arg(long)]
    pub tx: bool,
    /// Declared RISK_LEVEL (GREEN, YELLOW, RED); never lower than the derived one.
    #[arg(long)]
    pub risk: Option<String>,
    /// The rx-plan JSON: a file, or `-` for stdin.
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// A Markdown body file (the text the operator reads); default: the title.
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// ALLOW_PUSH = NO instead of RX_RESULT_ONLY.
    #[arg(long)]
    pub no_push: bool,
    /// Where to write it (default: the task path inside --repo).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

/// The schemas `rxnode schema` prints.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SchemaKind {
    /// The `rx-plan` JSON block.
    Plan,
    /// `RX_RESULT.json`.
    Result,
    /// `.local/rxnode-policy.json`.
    Policy,
    /// A task as `{"header": {...}, "plan": {...}}`, with the header/plan conflict rules.
    Task,
}

/// `sweep` options (DESIGN §8).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// SoapySDR device args.
    #[arg(long)]
    pub device: String,
    /// Lowest frequency of the band, Hz.
    #[arg(long)]
    pub start_hz: f64,
    /// Highest frequency of the band, Hz.
    #[arg(long)]
    pub stop_hz: f64,
    /// Widest acceptable bin, Hz.
    #[arg(long)]
    pub bin_hz: f64,
    /// Sample rate per hop.
    #[arg(long, default_value_t = 10e6)]
    pub sample_rate_hz: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    #[arg(long)]
    pub gain_db: Option<String>,
    /// Samples analysed per hop, seconds.
    #[arg(long, default_value_t = 0.05)]
    pub dwell_s: f64,
    /// Samples discarded after each retune, seconds.
    #[arg(long, default_value_t = 0.01)]
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    #[arg(long, default_value_t = 0.25)]
    pub crop: f64,
    /// Passes over the band (a heatmap is drawn when > 1).
    #[arg(long, default_value_t = 1)]
    pub repeats: u32,
    /// Write the rtl_power CSV here.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the spectrum PNG here (and `<stem>_heatmap.png` when repeats > 1).
    #[arg(long)]
    pub plot: Option<PathBuf>,
}
