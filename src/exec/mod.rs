//! The executor: `run` of an approved task (its preconditions, the RX steps and
//! the TX orchestration, which alone can key a transmitter), and the operator's
//! own RX-only commands (inventory, capture, sweep, analyze).
pub(crate) mod analyze;
pub(crate) mod capture;
pub(crate) mod compare;
pub(crate) mod compare_cmd;
pub(crate) mod freq_cal;
#[cfg(windows)]
pub(crate) mod guard_job;
#[cfg(windows)]
pub(crate) mod guard_timer;
pub(crate) mod inventory;
pub(crate) mod preconditions;
pub(crate) mod run;
pub(crate) mod steps;
pub(crate) mod sweep;
pub(crate) mod tx;
pub(crate) mod tx_guard;
pub(crate) mod tx_watch;

// The live capture sits below the executor (the radio self-test uses it too);
// the executor's steps name it by its old path.
pub(crate) use crate::radio::live;

use crate::exit::FieldText;
use crate::store::ledger::{self, Entry};
use crate::store::paths::Paths;
use std::path::Path;

/// `v` when it is a finite number > 0, else a bad-input error naming the
/// request's `field` and `v`.
pub(crate) fn positive(field: &'static str, v: f64) -> anyhow::Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(crate::exit::bad_field(
            field,
            format!(" {v} must be a finite number > 0"),
        ))
    }
}

/// A capture of `duration_s` at `sample_rate_hz` (both already > 0) asks for at
/// least one sample: fewer is refused naming `duration_s` and its value, never
/// passed on to the engine as a capture of no sample.
pub(crate) fn at_least_one_sample(duration_s: f64, sample_rate_hz: f64) -> anyhow::Result<()> {
    if (duration_s * sample_rate_hz).round() >= 1.0 {
        return Ok(());
    }
    Err(crate::exit::bad_field(
        "duration_s",
        format!(
            " {} at {} samples/s is less than one sample: give at least {} s",
            rxnode_interlock::compact(duration_s),
            rxnode_interlock::compact(sample_rate_hz),
            rxnode_interlock::compact(1.0 / sample_rate_hz)
        ),
    ))
}

/// The peak list's options, as `capture` and `analyze` take them: `max_peaks` in
/// 1..=[`rxnode_interlock::MAX_PEAKS_LIMIT`], `min_snr_db` a number of dB in 0..=200.
pub(crate) fn check_peaks(peaks: &crate::options::PeakOptions) -> anyhow::Result<()> {
    let crate::options::PeakOptions {
        max_peaks,
        min_snr_db,
    } = *peaks;
    if !(1..=rxnode_interlock::MAX_PEAKS_LIMIT).contains(&max_peaks) {
        return Err(crate::exit::bad_field(
            "max_peaks",
            format!(
                " {max_peaks} must be in 1..={}",
                rxnode_interlock::MAX_PEAKS_LIMIT
            ),
        ));
    }
    if !(min_snr_db.is_finite() && (0.0..=200.0).contains(&min_snr_db)) {
        return Err(crate::exit::bad_field(
            "min_snr_db",
            format!(
                " {} must be a number of dB in 0..=200",
                rxnode_interlock::compact(min_snr_db)
            ),
        ));
    }
    Ok(())
}

/// `PATH already exists; choose another name, or force to overwrite it`: an
/// output file the operator named is there and `force` was not given.
pub(crate) fn exists_unless_forced(p: &Path) -> FieldText {
    FieldText::text(format!(
        "{} already exists; choose another name, or ",
        p.display()
    ))
    .then_field("force")
    .then(" to overwrite it")
}

/// `PATH exists and is not a file; force overwrites files only`.
pub(crate) fn exists_not_a_file(p: &Path) -> FieldText {
    FieldText::text(format!("{} exists and is not a file; ", p.display()))
        .then_field("force")
        .then(" overwrites files only")
}

/// Whether `.local/STOP` holds the node now (docs/operator.md#holding-the-node):
/// the step's detail when it does. Asked before every radio step of a run and
/// again in the TX guard before the radio is opened and before it is keyed, so a
/// hold put in place during a run stops every step that has not started.
pub(crate) fn held(paths: &Paths) -> Option<String> {
    paths.is_held().then(|| {
        "held by .local/STOP (put in place during the run): not started; remove it to run tasks"
            .to_owned()
    })
}

/// Append `e` to the ledger; a failure is logged, not returned: the refusal or
/// outcome the entry records is what the command reports.
pub(crate) fn ledger_note(paths: &Paths, e: &Entry) {
    if let Err(err) = ledger::append(paths, e) {
        tracing::error!("cannot write the ledger: {err:#}");
    }
}
