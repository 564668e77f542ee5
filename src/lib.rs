//! `rxnode`: the node's library — its local store, Git access and publication,
//! the result model, the watcher and the executor. The binary (`src/main.rs`
//! and `src/commands/`) parses the command line once into a [`Ctx`] and the
//! command's options — this library's own types, which clap fills (values typed
//! by the parsers of [`frequency`], [`gain`] …) — and calls one entry point here
//! per subcommand; below the options nothing parses a flag or names one.
//!
//! Dependencies point one way: `rxnode → rxnode-hw → rxnode-dsp`, and all of
//! them → `rxnode-interlock` (docs/architecture.md).
//!
//! ```
//! use rxnode::{Ctx, Outcome, TaskSource};
//! let source = TaskSource {
//!     remote: "origin".into(),
//!     branch: "video-development".into(),
//!     task_path: "docs/handoff/NEXT_RX_TASK.md".into(),
//! };
//! let ctx = Ctx::new(false, true, ".".into(), None, source);
//! // What `rxnode --json validate fixtures/valid_green.md` does.
//! let outcome = rxnode::cmd_validate(&ctx, "fixtures/valid_green.md".as_ref())?;
//! assert!(matches!(outcome, Outcome::Done));
//! // An invalid file is reported, and the command exits 2.
//! let outcome = rxnode::cmd_validate(&ctx, "fixtures/invalid_bad_value.md".as_ref())?;
//! assert!(matches!(outcome, Outcome::Code(2)));
//! # Ok::<(), anyhow::Error>(())
//! ```
#![deny(missing_docs)]
// No unwrap/expect in product code: every failure on input is an error that names it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// No raw print: every write to stdout and stderr goes through the shell.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

// First: the shell's `note!` (one line on stderr).
#[macro_use]
mod shell;
mod stdout;

mod context;
mod demo;
mod describe;
mod doctor;
mod exec;
mod exit;
mod git;
mod health;
mod heartbeat;
mod json;
mod mainpc;
mod options;
mod radio;
mod result;
mod schema;
mod service;
mod signals;
mod signers;
mod status;
mod store;
mod store_cmds;
mod term;
mod validate;
mod watch;

pub use rxnode_interlock::FreqCalMethod;

pub use crate::{
    context::{Ctx, TaskSource},
    demo::cmd_demo,
    doctor::cmd_doctor,
    exec::{
        analyze::{cmd_analyze, AnalyzeOptions},
        capture::{cmd_capture, CaptureOptions},
        compare_cmd::{cmd_clkin_compare, ClkinCompareOptions},
        freq_cal::{cmd_calibrate, CalibrateOptions},
        inventory::{cmd_inventory, InventoryOptions},
        run::cmd_run,
        sweep::{cmd_sweep, SweepConfig, SweepOptions},
        tx_guard::{cmd_tx_guard, cmd_tx_guard_timer},
    },
    exit::{
        bad_field, bad_field_text, bad_input, code_for, error_json, error_text, is_broken_pipe,
        name_fields, BadField, ErrorBody, ErrorReport, FieldText, Outcome,
    },
    git::{ops::require_checkout, ops::tls::init as init_git, publish::cmd_publish},
    health::{cmd_health, cmd_health_test},
    mainpc::{
        results::{
            cmd_results, result_status, since, ResultsOptions, ResultsQuery, ShowAs,
            DEFAULT_RESULTS_LIMIT,
        },
        task_new::{cmd_task_new, TaskNewOptions},
    },
    options::{
        cal_method, frequency, gain, iq_format, key_value, record_format, risk_level, sample_rate,
        seconds, si_number, ClkinOptions, FftOptions, PeakOptions, RadioOptions,
    },
    result::{
        cmd_validate_result, markdown_for_result_json, validate_result_files, ManualStatus,
        Status as ResultStatus, RESULT_JSON, RESULT_MD,
    },
    schema::{cmd_schema, SchemaKind},
    service::{cmd_service_install, cmd_service_status, cmd_service_uninstall, ServiceOptions},
    shell::Shell,
    signers::{cmd_signers_add, cmd_signers_list, cmd_signers_remove, AddSigner},
    status::cmd_status,
    stdout::SafeStderr,
    store::node::PublishRef,
    store::paths::{check_repo_folder, work_tree_top},
    store::queue::{DEFAULT_HISTORY_LIMIT, DEFAULT_WALK_LIMIT},
    store_cmds::{cmd_rebuild, cmd_set_name, cmd_set_publish_ref, cmd_show},
    validate::cmd_validate,
    watch::{
        cmd_watch,
        review::{cmd_mark_completed, cmd_review, read_note_file, MarkCompleted},
        WatchOptions,
    },
};
