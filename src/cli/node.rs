//! The arguments of the node's own commands: `watch`, `health`, `service`,
//! `state`, `node` and `mark-completed`.
use super::SourceArgs;
use clap::{Args, Subcommand};
use std::path::PathBuf;

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
        #[arg(value_name = "DEVICES")]
        radios: Vec<String>,
        /// A radio's SoapySDR device args, as every radio command takes them
        /// (repeatable; tested after the ones named without `-d`).
        #[arg(short = 'd', long = "device", value_name = "DEVICE")]
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
        #[arg(long, default_value_t = 30.0, value_parser = rxnode::seconds)]
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
    #[command(flatten)]
    pub options: rxnode::WatchOptions,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// `node` subcommands.
#[derive(Debug, Subcommand)]
pub enum NodeCmd {
    /// Set this node's name (`[A-Za-z0-9_-]{1,32}`), stored in `.local/rxnode-node.json`.
    SetName {
        /// The name, e.g. `LAB-RX2`.
        name: String,
        /// Make a new node key when this node's key is lost: everything signed
        /// with the lost key (approvals, node file, radio health, calibration) is
        /// refused from then on (docs/safety.md#a-lost-node-key). Without it a
        /// lost key is refused. An existing key is never replaced.
        #[arg(long)]
        new_key: bool,
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
