//! Command-line definitions (clap). One subcommand per command of docs/protocol.md.
//!
//! This file holds the top level (global flags, the task source, the list of
//! subcommands); the arguments of each group of commands are in [`radio`] (the
//! radio's commands, whose options are the library's own types), [`node`] (the
//! node's own: watch, health, service, state, node), [`mainpc`] (the main PC's:
//! results, task) and [`values`] (the value parsers only the binary uses; the
//! library's are in `rxnode`: frequencies, rates, durations, gains, formats).
mod mainpc;
mod node;
mod radio;
mod values;

pub use mainpc::{ResultsArgs, ResultsCmd, TaskCmd};
pub use node::{
    HealthCmd, ManualStatusArg, NodeCmd, ServiceCmd, ServicePlace, SignersCmd, StateCommand,
    WatchArgs,
};
pub use radio::ClkinCmd;
use values::schema_kind;

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
    /// The checkout (a Git work tree): the RX clone on a node, the main PC's
    /// clone for `results` and `task new`; default: the current directory.
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
    /// Parse this process's command line. Every flag that takes a value takes a
    /// negative number too (`-g -5`, `-t -1`, `-f -5`): the flag's own check then
    /// refuses or accepts it naming the flag and its range, never clap's
    /// "unexpected argument '-5' found" with a tip (`-- -5`) that does not work.
    /// With an SI suffix (`-r -2M`) it stays clap's: a flag after a forgotten
    /// value (`-f -r 2M`) must stay a flag.
    pub fn parse_command_line() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut matches = negative_numbers(Cli::command()).try_get_matches()?;
        Cli::from_arg_matches_mut(&mut matches)
            .map_err(|e| e.format(&mut negative_numbers(Cli::command())))
    }

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

    /// Whether the command works in the checkout `--repo` names, which must then
    /// be a folder that exists: all but the ones that only print rxnode's own
    /// texts, the demo (its own folders), `doctor` (which reports a missing
    /// checkout as its first check) and the TX guard (started by `run` itself).
    pub fn uses_repo(&self) -> bool {
        !matches!(
            self,
            Command::Schema { .. }
                | Command::Completions { .. }
                | Command::Man
                | Command::TxGuard { .. }
                | Command::TxGuardTimer { .. }
                | Command::Demo { .. }
                | Command::Doctor { .. }
        )
    }

    /// Whether the command reads or changes the node's own record (state, ledger,
    /// outboxes, approvals), which lives only in a Git checkout: run anywhere else
    /// it would report an empty node or make a `.local/` there.
    pub fn needs_checkout(&self) -> bool {
        matches!(
            self,
            Command::Status
                | Command::Run { .. }
                | Command::MarkCompleted { .. }
                | Command::Publish { .. }
                | Command::State(_)
        )
    }

    /// Whether the command is the main PC's (`results`, `task new`): it works in
    /// the clone's work tree from any folder of it and keeps nothing under `.local/`.
    pub fn is_main_pc(&self) -> bool {
        matches!(self, Command::Results(_) | Command::Task(_))
    }

    /// Whether `main` starts libgit2 up front for the command (src/git/ops/tls.rs):
    /// every command but the ones that only print rxnode's own texts, and the
    /// TX guard, which is left as it was.
    pub fn uses_git(&self) -> bool {
        !matches!(
            self,
            Command::Schema { .. }
                | Command::Completions { .. }
                | Command::Man
                | Command::TxGuard { .. }
                | Command::TxGuardTimer { .. }
        )
    }
}

/// `cmd` and its subcommands with every flag that takes a value open to a
/// negative number (`-5`, `-1.5`, `-1e6`; a positional keeps its own rules). A
/// flag after a flag whose value was forgotten (`-f -r 2M`) is still a flag.
fn negative_numbers(cmd: clap::Command) -> clap::Command {
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut cmd = cmd.mut_args(|a| {
        if a.get_action().takes_values() && !a.is_positional() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    for name in subs {
        cmd = cmd.mut_subcommand(name, negative_numbers);
    }
    cmd
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
    Inventory(rxnode::InventoryOptions),
    /// An RX-only capture for the operator at the laptop (never TX).
    Capture(rxnode::CaptureOptions),
    /// The capture analysis on a recorded IQ file.
    Analyze(rxnode::AnalyzeOptions),
    /// An RX-only wideband sweep for the operator (never TX; docs/operator.md#sweeps-rxnode-sweep).
    Sweep(rxnode::SweepOptions),
    /// A radio's clock without a calibrated reference: compare two radios on one tone,
    /// or calibrate one against a broadcast signal (docs/operator.md#verifying-a-slaves-clkin,
    /// docs/operator.md#calibrating-a-radio-without-a-generator).
    #[command(subcommand)]
    Clkin(ClkinCmd),
    /// Check an RX_RESULT.json (schema, statuses, timeline, MD/JSON agreement, IQ hashes).
    ValidateResult {
        /// A task ID (its outbox) or a path to RX_RESULT.json (any bytes a path may hold).
        target: std::path::PathBuf,
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
    /// Internal (Windows): the TX guard's kill timer, which the guard starts
    /// for itself (docs/safety.md#the-tx-guard-process); it ends the guard at
    /// the deadline the guard gives it on stdin.
    #[command(name = "tx-guard-timer", hide = true)]
    TxGuardTimer {
        /// The guard's process ID (this process's parent).
        #[arg(long)]
        guard: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("rxnode").chain(args.iter().copied()))
            .map(|c| c.command)
    }

    /// clap turns each value into the library's own type, and the shared groups
    /// into the library's group types, with nothing copied in between.
    #[test]
    fn values_are_parsed_into_the_librarys_types() {
        let capture = [
            "capture",
            "-d",
            "driver=rxsim",
            "-f",
            "100M",
            "-r",
            "2M",
            "-t",
            "500ms",
        ];
        let Ok(Command::Capture(o)) = parse(&[&capture[..], &["-g", "LNA=24,VGA=20"]].concat())
        else {
            panic!("capture parses");
        };
        assert_eq!(
            o.gain_db,
            Some(rxnode_interlock::GainSpec::Elements(
                [("LNA".into(), 24.0), ("VGA".into(), 20.0)].into()
            ))
        );
        assert_eq!(
            (o.frequency_hz, o.sample_rate_hz, o.duration_s),
            (100e6, 2e6, 0.5)
        );
        assert_eq!((o.fft.fft_size, o.peaks.max_peaks), (2048, 8));
        assert_eq!(o.clkin.clkin_tolerance_ppm, 0.5);
        let Ok(Command::Analyze(o)) = parse(&["analyze", "x.bin", "-F", "CI16_LE"]) else {
            panic!("analyze parses");
        };
        assert_eq!(o.format, Some(rxnode_dsp::IqFormat::Cs16));
        let Ok(Command::Results(a)) =
            parse(&["results", "--status", "not-run", "--since", "2026-11-30"])
        else {
            panic!("results parses");
        };
        assert_eq!(a.options.status, Some(rxnode::ResultStatus::NotRun));
        assert_eq!(
            a.options.since.map(|t| t.unix_timestamp()),
            Some(1_795_996_800)
        );
    }

    /// A radio setting left out is not set, so the radio keeps what it has: each
    /// radio command's `--help` says so of its gain, antenna, bandwidth and
    /// clock source(s), as the report's `(driver default)` / `(unchanged)` do.
    #[test]
    fn radio_settings_say_their_default_in_help() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let find = |path: &[&str]| {
            path.iter()
                .try_fold(cli.clone(), |c, name| c.find_subcommand(name).cloned())
        };
        let mut seen = 0;
        for path in [
            &["capture"][..],
            &["sweep"],
            &["clkin", "compare"],
            &["clkin", "calibrate"],
        ] {
            let cmd = find(path).unwrap_or_else(|| panic!("rxnode {path:?}"));
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if ![
                    "gain_db",
                    "antenna",
                    "bandwidth_hz",
                    "clock_source",
                    "clock_sources",
                ]
                .contains(&id)
                {
                    continue;
                }
                seen += 1;
                let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(
                    help.contains("default") || !arg.get_default_values().is_empty(),
                    "rxnode {path:?} --{id}: the help does not say what happens without it: {help}"
                );
            }
        }
        assert!(seen >= 8, "{seen} radio settings found");
    }

    /// A bad value is clap's own error (exit 2), naming the flag as clap's table spells it.
    #[test]
    fn a_bad_value_is_refused_by_the_command_line() {
        for (args, flag) in [
            (
                &[
                    "capture", "-d", "driver=x", "-f", "100M", "-r", "2M", "-t", "1", "-g", "loud",
                ][..],
                "'--gain-db <GAIN_DB>'",
            ),
            (
                &[
                    "sweep",
                    "-d",
                    "driver=x",
                    "--start-hz",
                    "88M",
                    "--stop-hz",
                    "108M",
                    "-B",
                    "10k",
                    "-g",
                    "LNA=1,LNA=2",
                ],
                "'--gain-db <GAIN_DB>'",
            ),
            (&["results", "--since", "yesterday"], "'--since <SINCE>'"),
            (&["results", "--status", "MAYBE"], "'--status <STATUS>'"),
            (
                &["analyze", "x.bin", "--format", "nope"],
                "'--format <FORMAT>'",
            ),
        ] {
            let e = parse(args).expect_err("refused");
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::InvalidValue | ErrorKind::ValueValidation
                ),
                "{args:?}"
            );
            assert_eq!(e.exit_code(), 2, "{args:?}");
            assert!(e.to_string().contains(flag), "{args:?}: {e}");
        }
    }
}
