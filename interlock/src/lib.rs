//! `rxnode-interlock`: the pure safety core of rxnode.
//!
//! Everything that decides whether something may happen lives here and does no
//! I/O: parsing and validating task files (header and `rx-plan`), deriving the
//! risk level, the plan model, approval and authorization records, node-local
//! policy, and the one constructor of [`TxPermit`].
//!
//! ```
//! use rxnode_interlock::{validate_task, ValidateOptions, RiskLevel};
//! let text = "TASK_ID = DOC_1\nTASK_TITLE = Example\nSOURCE_BRANCH = video-development\n\
//! EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
//! HARDWARE_ACCESS = NO\nRF_RX = NO\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\nBody.\n";
//! let task = validate_task(text, &ValidateOptions::default()).unwrap();
//! assert_eq!(task.risk(), RiskLevel::Green);
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// No unwrap/expect in product code: every failure on input is an error that names it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod error;
mod header;
mod mac;
mod permit;
mod plan;
mod policy;
mod radio_settings;
mod reach;
mod records;
mod risk;
mod strict_json;
mod sweep;
mod task;
#[cfg(test)]
mod testutil;
mod units;

pub use crate::{
    error::{Error, Issue},
    header::{
        check_node_name, lenient_field, lenient_task_id, same_folder, same_folder_groups,
        AllowPush, TaskHeader, TaskId, MAX_NODE_NAME_LEN,
    },
    mac::{
        file_mac, record_mac, verify_file_mac, verify_record_mac, RecordFields, RecordKind,
        NODE_KEY_LEN,
    },
    permit::{
        authorize, check_tx_clock_error, check_tx_step, check_tx_unmeasured_clock, TxPermit,
        TX_LO_TOLERANCE_HZ,
    },
    plan::DEFAULT_CAPTURE_FFT_SIZE,
    plan::{
        body_changes_what_follows, check_clkin_compare, check_freq_cal, check_rx_step,
        check_rx_sweep, step_types::*, validate_sweep_step, ClkinSpec, FreqCalMethod,
        IqSampleFormat, Plan, Step, DEFAULT_MAX_PEAKS, DEFAULT_MIN_SNR_DB, FREQ_CAL_MAX_ERROR_PPM,
        GSM_BIT_RATE_HZ, GSM_FCCH_OFFSET_HZ, MAX_PEAKS_LIMIT, MIN_LEVEL_DBFS, RX_SWEEP_FIELDS,
    },
    plan::{
        schema::{plan_schema, policy_schema, task_schema},
        words::{bytes, mhz, radio_settings_text},
    },
    policy::{
        check_step, HealthPolicy, Policy, RequireSignature, RxPolicy, StatusPolicy, TasksPolicy,
        TxPolicy, MAX_SELF_TEST_RADIOS, MIN_SELF_TEST_EVERY_S,
    },
    radio_settings::{check_radio_settings, RadioSettings, BUFFER_STREAM_ARGS, MAX_RADIO_SETTINGS},
    reach::{check_reach, reaches, Reach},
    records::{
        phrase_difference, required_phrase, verify_authorization, verify_node_authorization,
        verify_tx_grant, Approval, Authorization, AuthorizationKind, TxGrant,
    },
    risk::{derive_risk, RiskLevel},
    strict_json::{
        escaped, find_duplicate_key, find_format_char, format_char_in, is_blank_filler,
        is_c1_control, is_format_char, is_stacking_mark, needs_escape, DuplicateKey, Escaper,
        MAX_STACKED_MARKS,
    },
    sweep::{
        check_rx_gain, fft_size_ok, sweep_grid, GainSpec, SweepConfig, SweepGrid, SweepProblem,
        FFT_SIZE_MAX, FFT_SIZE_MIN, MAX_SWEEP_HOPS, MAX_SWEEP_VALUES,
    },
    task::{
        sha256_hex, utf16_bom, validate_task, validate_task_bytes, ValidTask, ValidateOptions,
        DEFAULT_BRANCH, MAX_TASK_BYTES,
    },
    units::{compact, fmt_rate, parse_quantity, parse_seconds, parse_si, si, Quantity},
};
