//! Command-line definitions (clap). One subcommand per command of docs/protocol.md.
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

/// Where tasks come from (docs/protocol.md defaults), before the command name:
/// the environment and the defaults, and the spelling `rxnode --branch B CMD`
/// that scripts and the service's unit use. Hidden: each command that reads
/// the task source lists its own [`SourceArgs`].
#[derive(Debug, Clone, Args)]
pub struct WatchConfig {
    /// Git remote to poll.
    #[arg(long, hide = true, env = "RXNODE_REMOTE", default_value = "origin")]
    pub remote: String,
    /// Watched branch on that remote.
    #[arg(long, hide = true, env = "RXNODE_BRANCH", default_value = rxnode_interlock::DEFAULT_BRANCH)]
    pub branch: String,
    /// Path of the task file inside the watched branch.
    #[arg(
        long,
        hide = true,
        env = "RXNODE_TASK_PATH",
        default_value = "docs/handoff/NEXT_RX_TASK.md"
    )]
    pub task_path: String,
}

/// The task source of a command that reads it (after the command name; over
/// the same flag before it and over the environment).
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    /// Git remote to poll [default: origin; env: RXNODE_REMOTE].
    #[arg(long, global = true, value_name = "REMOTE")]
    pub remote: Option<String>,
    /// Watched branch on that remote [default: video-development; env: RXNODE_BRANCH].
    #[arg(long, global = true, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Path of the task file inside the watched branch
    /// [default: docs/handoff/NEXT_RX_TASK.md; env: RXNODE_TASK_PATH].
    #[arg(long, global = true, value_name = "PATH")]
    pub task_path: Option<String>,
}

impl Cli {
    /// The task source: the command's own flags, else the ones before the
    /// command name, the environment, the defaults.
    pub fn source(&self) -> rxnode::TaskSource {
        let own = self.command.source().cloned().unwrap_or_default();
        let top = &self.watch_cfg;
        rxnode::TaskSource {
            remote: own.remote.unwrap_or_else(|| top.remote.clone()),
            branch: own.branch.unwrap_or_else(|| top.branch.clone()),
            task_path: own.task_path.unwrap_or_else(|| top.task_path.clone()),
        }
    }
}

impl Command {
    /// The task-source flags of the commands that read the task source.
    fn source(&self) -> Option<&SourceArgs> {
        match self {
            Command::Validate { source, .. }
            | Command::Review { source, .. }
            | Command::Run { source, .. }
            | Command::Publish { source, .. }
            | Command::Doctor { source }
            | Command::TxGuard { source, .. } => Some(source),
            Command::Watch(a) => Some(&a.source),
            Command::Results(a) => Some(&a.source),
            Command::Task(TaskCmd::New(a)) => Some(&a.source),
            Command::Service(ServiceCmd::Install { source, .. }) => Some(source),
            _ => None,
        }
    }

    /// Whether `main` starts libgit2 up front for the command (src/git/tls.rs):
    /// every command but the ones that only print rxnode's own texts, and the
    /// TX guard, which is left as it was.
    pub fn uses_git(&self) -> bool {
        !matches!(
            self,
            Command::Schema { .. }
                | Command::Completions { .. }
                | Command::Man
                | Command::TxGuard { .. }
        )
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check a task file; print the derived risk and every error.
    Validate {
        /// The task file.
        file: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Poll the watched branch and prompt [A] Approve  [D] Defer  [S] Stop watcher.
    Watch(WatchArgs),
    /// Prompt again for a deferred or pending task.
    Review {
        /// The task ID.
        task_id: String,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// State, heartbeat, pending/deferred/approved/completed tasks.
    Status,
    /// Execute an approved task's plan; results go to the outbox.
    Run {
        /// The task ID.
        task_id: String,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Enumerate and probe radios, read-only.
    Inventory(InventoryArgs),
    /// An RX-only capture for the operator at the laptop (never TX).
    Capture(CaptureArgs),
    /// The capture analysis on a recorded IQ file.
    Analyze(AnalyzeArgs),
    /// An RX-only wideband sweep for the operator (never TX; docs/operator.md#sweeps-rxnode-sweep).
    Sweep(SweepArgs),
    /// A radio's clock without a calibrated reference: compare two radios on one tone,
    /// or calibrate one against a broadcast signal (docs/operator.md#verifying-a-slaves-clkin,
    /// docs/operator.md#calibrating-a-radio-without-a-generator).
    #[command(subcommand)]
    Clkin(ClkinCmd),
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
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Mark a manually finished task complete (with --status, write its result).
    MarkCompleted {
        /// The task ID.
        task_id: String,
        /// How the manual work went; writes RX_RESULT.md and RX_RESULT.json from one value.
        #[arg(long, value_enum, ignore_case = true)]
        status: Option<ManualStatusArg>,
        /// What was done (one line in the result).
        #[arg(long, requires = "status", conflicts_with = "note_file")]
        note: Option<String>,
        /// Read the note from this file.
        #[arg(long, requires = "status")]
        note_file: Option<PathBuf>,
    },
    /// Check the set-up and explain what is wrong.
    Doctor {
        #[command(flatten)]
        source: SourceArgs,
    },
    /// This node's name, carried in every result it publishes (docs/protocol.md#6-the-main-pcs-side).
    #[command(subcommand)]
    Node(NodeCmd),
    /// On the main PC: read the results on `rx-node` (fetched into a private ref).
    Results(ResultsArgs),
    /// Radio health: list GOOD / BAD / UNTESTED radios, or self-test them
    /// (docs/protocol.md#8-radio-health).
    Health {
        /// `test`: self-test radios; none: list them.
        #[command(subcommand)]
        cmd: Option<HealthCmd>,
    },
    /// On the main PC: write tasks.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Print the JSON Schema (draft 2020-12) of a file rxnode reads or writes.
    Schema {
        /// Which schema.
        #[arg(value_parser = schema_kind())]
        kind: rxnode::SchemaKind,
    },
    /// Node-local state maintenance (`rxnode state rebuild`).
    #[command(subcommand)]
    State(StateCommand),
    /// Run the watcher unattended as a systemd service (`watch --no-prompt`, restarted
    /// on failure; docs/operator.md#unattended-operation).
    #[command(subcommand)]
    Service(ServiceCmd),
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
    /// Internal: the TX guard process that `rxnode run` starts for an
    /// authorized `tx_tone` step (docs/safety.md#the-tx-guard-process); it
    /// refuses anything but a valid grant from its parent on stdin.
    #[command(name = "tx-guard", hide = true)]
    TxGuard {
        /// The task ID.
        task_id: String,
        /// The plan step (0-based).
        #[arg(long)]
        step: usize,
        #[command(flatten)]
        source: SourceArgs,
    },
}

/// `rxnode health …`.
#[derive(Debug, Subcommand)]
pub enum HealthCmd {
    /// Self-test radios, read-only (open, a short capture at the lowest gain, check
    /// samples, overflows, timeouts, clipping and CLKIN); a pass makes a radio GOOD,
    /// a failure BAD. Exit 0 when all passed, 1 when any failed or could not run
    /// (another rxnode held the radio).
    Test {
        /// SoapySDR device args of each radio; none: every radio of the policy's
        /// `health.radios`.
        devices: Vec<String>,
    },
}

/// `rxnode service …`.
#[derive(Debug, Subcommand)]
pub enum ServiceCmd {
    /// Write the unit, then `systemctl daemon-reload` and `enable --now` it (with
    /// `--unit-dir`: only write it and print those commands).
    Install {
        #[command(flatten)]
        place: ServicePlace,
        #[command(flatten)]
        source: SourceArgs,
        /// Time between the watcher's polls (seconds, or `30s`, `2m`).
        #[arg(long, default_value_t = 30.0, value_parser = seconds)]
        interval: f64,
        /// The account a system unit runs the watcher as (needed when installing
        /// as root: the watcher never runs as root). Default: you.
        #[arg(long, value_name = "ACCOUNT")]
        run_as: Option<String>,
    },
    /// Whether the unit is installed, what it watches, and what systemd says of it.
    Status {
        #[command(flatten)]
        place: ServicePlace,
    },
    /// Stop and disable the unit, and remove it.
    Uninstall {
        #[command(flatten)]
        place: ServicePlace,
    },
}

/// Where the unit lives.
#[derive(Debug, Clone, Args)]
pub struct ServicePlace {
    /// A user unit (`systemctl --user`, `~/.config/systemd/user/`) instead of a
    /// system unit (`/etc/systemd/system/`, run as you).
    #[arg(long)]
    pub user: bool,
    /// Use this folder for the unit and leave systemd alone.
    #[arg(long)]
    pub unit_dir: Option<PathBuf>,
}

/// The broadcast signal `clkin calibrate` measures.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CalMethodArg {
    /// A GSM BCCH carrier's FCCH bursts; `-f` is the BCCH carrier's frequency.
    Gsm,
    /// An LTE downlink's PSS/SSS; `-f` is the downlink's centre frequency.
    Lte,
}

/// `clkin calibrate` options.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// The broadcast signal to measure.
    #[arg(long, value_enum)]
    pub method: CalMethodArg,
    /// The carrier's frequency, Hz (`935.2M`): the BCCH carrier (gsm) or the
    /// downlink's centre (lte); the radio is tuned there.
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (default: 1M for gsm, 1.92M for lte).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// RX gain, dB.
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long to listen (seconds, or `6s`, `500ms`, `1m`).
    #[arg(short = 't', long, default_value_t = 6.0, value_parser = seconds)]
    pub duration_s: f64,
    /// Draw the detections (time vs offset, per-burst errors, the combined value) as a PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
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
    /// Time between polls (seconds, fractions allowed, or `30s`, `2m`).
    #[arg(long, default_value_t = 30.0, value_parser = seconds)]
    pub interval: f64,
    /// The decision flow on a local file: no fetch, no radio, no commit, no push.
    #[arg(long, requires = "task_file")]
    pub dry_run: bool,
    /// The task file for --dry-run (only with --dry-run: a live watch reads the branch).
    #[arg(long, requires = "dry_run")]
    pub task_file: Option<PathBuf>,
    /// Task versions examined per poll at most (the newest; older ones are
    /// reported as not examined).
    #[arg(long, env = "RXNODE_HISTORY_LIMIT", default_value_t = rxnode::DEFAULT_HISTORY_LIMIT)]
    pub history_limit: usize,
    /// Commits one poll walks at most (the newest; older history is reported
    /// as not examined). Lower it on a slow laptop; it cannot be raised.
    #[arg(long, env = "RXNODE_WALK_LIMIT", default_value_t = rxnode::DEFAULT_WALK_LIMIT)]
    pub walk_limit: usize,
    /// Unattended: queue new tasks and never prompt (approve them with `rxnode
    /// review TASK_ID` from any terminal while the watcher runs).
    #[arg(long, conflicts_with = "dry_run")]
    pub no_prompt: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `inventory` options.
#[derive(Debug, Args)]
pub struct InventoryArgs {
    /// Read-only: probe without streaming or changing settings (the only mode).
    #[arg(long)]
    pub dry_run: bool,
    /// SoapySDR device args to filter devices (e.g. `driver=hackrf`).
    #[arg(short = 'd', long = "device", alias = "args", default_value = "")]
    pub args: String,
}

/// `capture` options.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// Centre frequency, Hz (SI suffixes: `100M`, `433.92MHz`, `2.4G`).
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate, S/s (`2M`, `2e6`).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// Capture length (seconds, or `2s`, `500ms`, `1m`).
    #[arg(short = 't', long, value_parser = seconds)]
    pub duration_s: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    #[arg(short = 'g', long)]
    pub gain_db: Option<String>,
    /// Antenna to select (`rxnode inventory` lists them).
    #[arg(short = 'A', long, short_alias = 'a')]
    pub antenna: Option<String>,
    /// Analog (baseband filter) bandwidth, Hz (`1.75M`).
    #[arg(short = 'w', long, value_parser = si_number)]
    pub bandwidth_hz: Option<f64>,
    /// Clock source to select.
    #[arg(long)]
    pub clock_source: Option<String>,
    #[command(flatten)]
    pub clkin: ClkinArgs,
    #[command(flatten)]
    pub fft: FftArgs,
    /// Record IQ: `.cf32`, `.wav`, `.sigmf-data` or `.sigmf-meta` (`.cs16` with
    /// `--record-format ci16`); `-` streams raw samples to standard output (the report
    /// goes to standard error), an existing FIFO streams to the program reading it.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Sample type of the recording: `cf32` (default) or `ci16`, the radio's native
    /// CS16 as it came (SigMF `ci16_le`, half the bytes; for full rate).
    #[arg(long, requires = "record", ignore_case = true, value_parser = record_format())]
    pub record_format: Option<rxnode_dsp::RecordFormat>,
    /// Write a spectrum PNG (peaks, noise floor, CLKIN tones, RBW, status).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite `--record` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub peaks: PeakArgs,
    /// Tune with the radio's frequency calibration from `rxnode clkin calibrate`
    /// (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long, conflicts_with = "ppm")]
    pub apply_cal: bool,
    #[command(flatten)]
    pub radio: RadioArgs,
}

/// `--risk`: a risk level as the protocol spells it (values listed, so shells
/// complete them).
fn risk_level() -> impl clap::builder::TypedValueParser<Value = rxnode_interlock::RiskLevel> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["GREEN", "YELLOW", "RED"]).try_map(|s| {
        rxnode_interlock::RiskLevel::parse(&s.to_ascii_uppercase())
            .ok_or_else(|| "not GREEN, YELLOW or RED".to_owned())
    })
}

/// `--record-format`: `cf32` or `ci16` (`cs16`, SoapySDR's name, too), listed
/// so shells complete them.
fn record_format() -> impl clap::builder::TypedValueParser<Value = rxnode_dsp::RecordFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("cf32").help("float32 I/Q, 8 bytes a sample"),
        PossibleValue::new("ci16")
            .alias("cs16")
            .help("the radio's int16 I/Q as it came, 4 bytes a sample"),
    ])
    .try_map(|s| rxnode_dsp::RecordFormat::parse(&s).map_err(|e| e.to_string()))
}

/// `analyze --format`: every layout the reader knows, with its other spellings,
/// listed so shells complete them; passed on as typed (the reader parses it once).
fn iq_format() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::{PossibleValue, PossibleValuesParser};
    PossibleValuesParser::new(
        rxnode_dsp::IqFormat::names()
            .into_iter()
            .map(|(name, aliases)| PossibleValue::new(name).aliases(aliases)),
    )
}

/// `results --status`: a result status in any case (`not-run`, `not_run` and
/// `"NOT RUN"` for NOT RUN), listed so shells complete them; passed on spelled
/// as typed (the library reads it once, [`rxnode`]'s typed status parser).
fn result_status() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::{PossibleValue, PossibleValuesParser};
    PossibleValuesParser::new([
        PossibleValue::new("PASS"),
        PossibleValue::new("FAIL"),
        PossibleValue::new("PARTIAL"),
        PossibleValue::new("SKIP"),
        PossibleValue::new("BLOCKED"),
        PossibleValue::new("NOT_RUN").aliases(["not-run", "NOT RUN"]),
    ])
}

/// The CLKIN check of `capture` and `analyze` (docs/operator.md#clkin).
#[derive(Debug, Args)]
pub struct ClkinArgs {
    /// Reference tone RF frequency for the CLKIN check, Hz (`100.1M`).
    #[arg(long, value_parser = frequency)]
    pub clkin_tone_hz: Option<f64>,
    /// CLKIN tolerance in ppm.
    #[arg(long, default_value_t = 0.5)]
    pub clkin_tolerance_ppm: f64,
    /// The CLKIN reference tone's expected level (dBFS, ±6 dB): tells it from other
    /// carriers in the search window (docs/operator.md#clkin).
    #[arg(long, requires = "clkin_tone_hz", allow_hyphen_values = true)]
    pub clkin_expected_dbfs: Option<f64>,
}

/// The FFT of `capture` and `analyze`.
#[derive(Debug, Args)]
pub struct FftArgs {
    /// FFT size (any size in 16..=1048576; powers of two are fastest).
    #[arg(long, default_value_t = 2048)]
    pub fft_size: usize,
}

/// The peak list of `capture` and `analyze`.
#[derive(Debug, Args)]
pub struct PeakArgs {
    /// Most peaks to list, strongest first (1..=64).
    #[arg(long, default_value_t = 8)]
    pub max_peaks: usize,
    /// List a peak only this many dB above the noise floor.
    #[arg(long, default_value_t = 6.0)]
    pub min_snr_db: f64,
}

/// `clkin` subcommands.
#[derive(Debug, Subcommand)]
pub enum ClkinCmd {
    /// Two radios stream at once on one tone of any accuracy: SLAVE's clock relative
    /// to MASTER's, in ppb, LOCKED (with an external reference), AGREE or UNLOCKED (RX only).
    Compare(ClkinCompareArgs),
    /// Measure a radio's absolute frequency error from a broadcast signal (GSM FCCH,
    /// LTE PSS/SSS), no generator and no prior estimate needed within ±60 ppm; RX only.
    Calibrate(CalibrateArgs),
}

/// `clkin compare` options.
#[derive(Debug, Args)]
pub struct ClkinCompareArgs {
    /// SoapySDR device args, twice: MASTER first, then SLAVE.
    #[arg(short = 'd', long = "device", required = true, value_name = "ARGS")]
    pub devices: Vec<String>,
    /// Centre frequency both radios tune to, Hz (`100M`, `433.92MHz`).
    #[arg(short = 'f', long, value_parser = frequency)]
    pub frequency_hz: f64,
    /// Sample rate of both streams, S/s (`1M`, `2e6`).
    #[arg(short = 'r', long, value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// The tone both radios see, Hz (`100.2M`); it may be off its dial by tens of ppm.
    #[arg(long, value_parser = frequency)]
    pub tone_hz: f64,
    /// RX gain of both radios, dB.
    #[arg(short = 'g', long)]
    pub gain_db: Option<f64>,
    /// How long both radios stream (seconds, or `1s`, `500ms`).
    #[arg(short = 't', long, default_value_t = 1.0, value_parser = seconds)]
    pub duration_s: f64,
    /// LOCKED when SLAVE is within ±this many ppb of MASTER (and the measurement can tell)
    /// and a radio reads back an external clock source; AGREE without one.
    #[arg(long, default_value_t = 10.0)]
    pub tolerance_ppb: f64,
    /// Clock sources to select first, MASTER's then SLAVE's (`internal,external`).
    #[arg(long, value_delimiter = ',', value_name = "MASTER,SLAVE")]
    pub clock_sources: Option<Vec<String>>,
    /// Write the phase-difference picture (PNG) here.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// `analyze` options.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The recording.
    pub file: PathBuf,
    /// Sample rate (raw formats), S/s (`2M`); the file's own metadata wins, a
    /// different value is refused.
    #[arg(short = 'r', long, alias = "rate", value_parser = sample_rate)]
    pub sample_rate_hz: Option<f64>,
    /// Centre frequency, for an absolute axis, Hz (`100M`); the file's own
    /// metadata wins, a different value is refused.
    #[arg(short = 'f', long, alias = "center-hz", value_parser = frequency)]
    pub frequency_hz: Option<f64>,
    /// How the file stores its samples (default: from the extension): cu8, cs8,
    /// cs16, cs16_be, cu16, cs32, cs32_be, cf32 (GNU Radio's cfile), cf32_be, cf64,
    /// wav or sigmf (a .sigmf-meta/.sigmf-data pair or a .sigmf archive). SigMF's
    /// names (ci16_le …) are accepted too. A .bin, .raw, .dat or .iq file needs it.
    #[arg(short = 'F', long, ignore_case = true, value_parser = iq_format())]
    pub format: Option<String>,
    /// Analyse this channel only (0-based) of a multi-channel SigMF recording
    /// (default: every channel, each reported on its own).
    #[arg(short = 'C', long, value_name = "N")]
    pub channel: Option<u32>,
    /// Measure the recording radio's frequency error from a broadcast carrier in it,
    /// as `clkin calibrate` does live (docs/operator.md#calibrating-from-a-recording).
    #[arg(long, value_enum, value_name = "METHOD")]
    pub freq_cal: Option<CalMethodArg>,
    /// The carrier's frequency for `--freq-cal`, Hz (`935.2M`; default: the
    /// recording's centre): the BCCH carrier (gsm) or the downlink's centre (lte).
    #[arg(long, value_parser = frequency, value_name = "HZ")]
    pub carrier_hz: Option<f64>,
    /// Keep a PASS `--freq-cal` measurement in .local/calibration.json for this radio,
    /// `driver=DRIVER,serial=SERIAL[,remote=HOST]` (nothing is kept without it).
    #[arg(long, value_name = "RADIO")]
    pub store_for_radio: Option<String>,
    #[command(flatten)]
    pub fft: FftArgs,
    /// Overlap fraction, 0 ≤ F < 1.
    #[arg(long, default_value_t = 0.5)]
    pub overlap: f64,
    #[command(flatten)]
    pub clkin: ClkinArgs,
    /// Write a spectrum PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite a `--plot` file that exists (refused otherwise).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub peaks: PeakArgs,
}

/// `node` subcommands.
#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Set this node's name (`[A-Za-z0-9_-]{1,32}`), stored in `.local/rxnode-node.json`.
    SetName {
        /// The name, e.g. `LAB-RX2`.
        name: String,
    },
    /// Print this node's name and where it publishes its results.
    Show,
    /// Where this node publishes its results: `shared` (the branch `rx-node`,
    /// every node's; the default) or `own` (`rx-results/<NODE>`, this node's
    /// alone, so its pushes never wait on another's); docs/publishing.md#one-ref-per-node.
    SetPublishRef {
        /// `shared` or `own`.
        layout: PublishRefArg,
    },
    /// Who may post tasks: `.local/allowed_signers` (git's allowed-signers
    /// format), checked against the SSH signature of the commit that last
    /// changed the task file (docs/operator.md#signing-tasks).
    #[command(subcommand)]
    Signers(SignersCmd),
}

/// Where a node publishes its results.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum PublishRefArg {
    /// `rx-node`, shared by every node.
    Shared,
    /// `rx-results/<NODE>`, this node's own.
    Own,
}

impl From<PublishRefArg> for rxnode::PublishRef {
    fn from(a: PublishRefArg) -> Self {
        match a {
            PublishRefArg::Shared => rxnode::PublishRef::Shared,
            PublishRefArg::Own => rxnode::PublishRef::Own,
        }
    }
}

/// `node signers` subcommands.
#[derive(Debug, Subcommand)]
pub enum SignersCmd {
    /// Allow a signer: one line `PRINCIPAL namespaces="git" KEY`.
    Add {
        /// Who it is, e.g. `alice@lab.example` (shown at the prompt).
        principal: String,
        /// The public key: a `.pub` file (`~/.ssh/id_ed25519.pub`) or its line.
        key: String,
        /// The key stops counting at this time (`YYYYMMDD[HHMM[SS]]`, `Z` for UTC).
        #[arg(long, value_name = "TIME")]
        valid_before: Option<String>,
    },
    /// List the allowed signers with their key fingerprints.
    List,
    /// Remove every line whose principals field or key fingerprint (`SHA256:…`) is WHO.
    Remove {
        /// A principals field as listed, or a fingerprint.
        who: String,
    },
}

/// `results` options and subcommands.
#[derive(Debug, Args)]
pub struct ResultsArgs {
    /// Only results of this node.
    #[arg(long)]
    pub node: Option<String>,
    /// Only results with this status (any case; `not-run` for NOT RUN).
    #[arg(long, ignore_case = true, value_parser = result_status())]
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
        /// The node, when several answered this task.
        #[arg(long = "from")]
        from: Option<String>,
        /// Print the published RX_RESULT.md as it is (control characters escaped).
        #[arg(long, conflicts_with = "plot")]
        markdown: bool,
        /// Draw the result's pictures (spectra, heatmaps, CLKIN compare, freq_cal)
        /// into DIR from the published data, as the node drew them.
        #[arg(long, value_name = "DIR")]
        plot: Option<std::path::PathBuf>,
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
    /// Write a static site (no server, no script) of the fleet and its results:
    /// DIR/index.html and one page per result, with its pictures.
    Report {
        /// The folder to write the site in.
        #[arg(long, value_name = "DIR")]
        html: std::path::PathBuf,
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
    /// Declared RISK_LEVEL (any case); never lower than the derived one.
    #[arg(long, ignore_case = true, value_parser = risk_level())]
    pub risk: Option<rxnode_interlock::RiskLevel>,
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
    /// Only this node may be offered the task (TARGET_NODES); repeat for several.
    /// Default: every node.
    #[arg(long, value_name = "NAME")]
    pub node: Vec<String>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `mark-completed --status`: what the operator says of a manual task.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ManualStatusArg {
    /// Done, and it worked.
    #[value(name = "PASS")]
    Pass,
    /// Done, and it did not.
    #[value(name = "FAIL")]
    Fail,
    /// Done in part.
    #[value(name = "PARTIAL")]
    Partial,
    /// Deliberately not done.
    #[value(name = "SKIP")]
    Skip,
}

impl From<ManualStatusArg> for rxnode::ManualStatus {
    fn from(s: ManualStatusArg) -> Self {
        match s {
            ManualStatusArg::Pass => rxnode::ManualStatus::Pass,
            ManualStatusArg::Fail => rxnode::ManualStatus::Fail,
            ManualStatusArg::Partial => rxnode::ManualStatus::Partial,
            ManualStatusArg::Skip => rxnode::ManualStatus::Skip,
        }
    }
}

/// `rxnode schema`'s KIND: the library's kinds ([`rxnode::SchemaKind::ALL`]), by name.
fn schema_kind() -> impl clap::builder::TypedValueParser<Value = rxnode::SchemaKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        rxnode::SchemaKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.about())),
    )
    .try_map(|name| rxnode::SchemaKind::from_name(&name).ok_or(format!("no schema {name}")))
}

/// `sweep` options (docs/operator.md#sweeps-rxnode-sweep).
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// SoapySDR device args.
    #[arg(short = 'd', long)]
    pub device: String,
    /// Lowest frequency of the band, Hz (`88M`).
    #[arg(long, value_parser = frequency)]
    pub start_hz: f64,
    /// Highest frequency of the band, Hz (`108M`).
    #[arg(long, value_parser = frequency)]
    pub stop_hz: f64,
    /// Bin width, Hz (`10k`): exact when the sample rate is a whole multiple of it,
    /// else the widest bin no wider.
    #[arg(short = 'B', long, value_parser = si_number)]
    pub bin_hz: f64,
    /// Sample rate per hop, S/s (`10M`).
    #[arg(short = 'r', long, default_value = "10M", value_parser = sample_rate)]
    pub sample_rate_hz: f64,
    /// RX gain: dB, or per element `LNA=24,VGA=20`.
    #[arg(short = 'g', long)]
    pub gain_db: Option<String>,
    /// Samples analysed per hop (seconds, or `50ms`); `-t`, soapy_power's
    /// integration time, is accepted too.
    #[arg(long, short_alias = 't', default_value_t = 0.05, value_parser = seconds)]
    pub dwell_s: f64,
    /// Samples discarded after each retune (seconds, or `10ms`).
    #[arg(long, default_value_t = 0.01, value_parser = seconds)]
    pub settle_s: f64,
    /// Fraction of each hop's band dropped (half at each edge).
    #[arg(long, default_value_t = 0.25)]
    pub crop: f64,
    /// Passes over the band (a heatmap is drawn when > 1).
    #[arg(long, default_value_t = 1, conflicts_with = "total_s")]
    pub repeats: u32,
    /// Start a pass every S seconds (rtl_power's `-i`; `30s`, `5m`); the stream
    /// stops in between.
    #[arg(short = 'i', long, value_parser = seconds)]
    pub interval_s: Option<f64>,
    /// Sweep for S seconds in all (rtl_power's `-e`; `1h`): floor(S / --interval-s)
    /// passes, within the policy's rx.max_duration_s.
    #[arg(short = 'e', long, requires = "interval_s", value_parser = seconds)]
    pub total_s: Option<f64>,
    /// Write the rtl_power CSV here; `-` writes it to standard output as each pass
    /// ends (the report then goes to standard error).
    #[arg(short = 'O', long)]
    pub csv: Option<PathBuf>,
    /// Write the spectrum PNG here (and `<stem>_heatmap.png` when repeats > 1).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Overwrite `--csv` / `--plot` files that exist (refused otherwise).
    #[arg(long)]
    pub force: bool,
    /// Tune every hop with the radio's frequency calibration from `rxnode clkin
    /// calibrate` (refused when it is missing or older than the policy's
    /// rx.calibration_max_age_s).
    #[arg(long, conflicts_with = "ppm")]
    pub apply_cal: bool,
    #[command(flatten)]
    pub radio: RadioArgs,
}

/// The radio's own settings (docs/operator.md#radio-settings).
#[derive(Debug, Args)]
pub struct RadioArgs {
    /// A SoapySDR setting (writeSetting), repeatable: `--setting biastee=true`. Refused
    /// unless the node's policy lists the key in rx.allowed_settings.
    #[arg(long = "setting", value_name = "KEY=VALUE", value_parser = key_value)]
    pub settings: Vec<(String, String)>,
    /// Stream args for the RX stream: `bufflen=65536,buffers=15`.
    #[arg(long, value_name = "KEY=VALUE,…", value_delimiter = ',', value_parser = key_value)]
    pub stream_args: Vec<(String, String)>,
    /// Automatic gain control on.
    #[arg(long)]
    pub agc: bool,
    /// Manual frequency correction, ppm (rtl_power's -p): tunes as a calibration of
    /// this many ppm would; not with --apply-cal.
    #[arg(short = 'p', long, allow_negative_numbers = true)]
    pub ppm: Option<f64>,
    /// RX channel of a multi-channel radio (default 0).
    #[arg(short = 'C', long)]
    pub channel: Option<usize>,
}

impl RadioArgs {
    /// The library's radio settings.
    pub fn settings(&self) -> rxnode_interlock::RadioSettings {
        rxnode_interlock::RadioSettings {
            settings: self.settings.iter().cloned().collect(),
            stream_args: self.stream_args.iter().cloned().collect(),
            agc: self.agc,
            ppm: self.ppm,
            channel: self.channel,
        }
    }
}

/// `KEY=VALUE`.
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE (e.g. biastee=true)")),
    }
}

/// A number with an optional SI suffix (`10k`, `1.75M`): bin widths and
/// bandwidths (docs/operator.md#units).
pub(crate) fn si_number(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_si(text)
}

/// A radio frequency (`433.92M`), refused when implausible (`-f 100`: did you
/// mean `100M`?).
pub(crate) fn frequency(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::Frequency)
}

/// A sample rate (`2M`, `2 MS/s`), refused when implausible.
pub(crate) fn sample_rate(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_quantity(text, rxnode_interlock::Quantity::SampleRate)
}

/// A duration: plain seconds (`0.05`) or with a unit (`500ms`, `2s`, `10m`, `1h`).
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    rxnode_interlock::parse_seconds(text)
}
