//! The ledger's events: one variant per `event` a ledger line can carry, with
//! the fields of its `detail` (docs/operator.md#files-under-local).
//!
//! A line is written as `{"at", "event", "task_id"?, "task_sha256"?, "commit"?,
//! "detail"?, "mac"?}`; `detail` is the variant's fields, an object whose keys
//! are sorted (as every ledger line's detail has always been written), absent
//! for an event without one. The readers ([`super::Line`]) take any line an
//! earlier build wrote: unknown events and detail shapes are kept as they are.
use serde::Serialize;
use serde_json::Value;

/// One ledger event and its detail.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", content = "detail", rename_all = "snake_case")]
pub(crate) enum Event {
    // ---- the watcher
    /// A watcher started.
    WatcherStarted {
        /// The watched branch.
        branch: String,
        /// Seconds between polls.
        interval_s: f64,
        /// `--no-prompt`.
        no_prompt: bool,
        /// `--once`.
        once: bool,
        /// Its process ID.
        pid: u32,
        /// The remote.
        remote: String,
        /// The task file's path on the branch.
        task_path: String,
    },
    /// A watcher stopped.
    WatcherStopped {
        /// `done`, `signal`, `error`, `stop` …
        reason: String,
    },
    /// `.local/STOP` holds the watcher.
    Held,
    /// `.local/STOP` was removed.
    HoldReleased,
    /// A fetch failed (one line per distinct failure).
    FetchFailed {
        /// The watched branch.
        branch: String,
        /// The error.
        error: String,
        /// The remote.
        remote: String,
    },
    /// A fetch worked again after failures.
    FetchRecovered {
        /// The watched branch.
        branch: String,
        /// The remote.
        remote: String,
    },
    /// A stale Git lock left by a killed watcher was removed.
    GitLockRemoved {
        /// When it was last modified.
        modified: String,
        /// The lock file.
        path: String,
        /// Who held the watcher lock.
        previous_holder: crate::store::lock::Holder,
    },
    /// A stale rxnode lock was taken over.
    LockTakenOver {
        /// Who held it, when known.
        previous_holder: Option<crate::store::lock::Holder>,
        /// Why it was stale.
        reason: String,
    },
    /// History not examined (first start, bounds, incomplete history).
    NotExamined(NotExamined),
    /// The watched branch's history was rewritten.
    HistoryRewritten {
        /// `remote/branch`.
        branch: String,
        /// The merge base, if any.
        merge_base: Option<String>,
        /// The new tip.
        new: String,
        /// The examined commit no longer on the branch.
        old: String,
        /// Pending tasks whose commit is no longer on the branch.
        pending_off_branch: Vec<String>,
    },
    // ---- task versions and decisions
    /// A new task was recorded.
    Detected,
    /// A valid new version, queued.
    Offered {
        /// Its blob ID.
        blob: String,
        /// Always true.
        queued: bool,
        /// Its risk level.
        risk_level: String,
    },
    /// A valid version replaced before it was seen.
    Superseded {
        /// Its blob ID.
        blob: String,
        /// Always true.
        queued: bool,
        /// Its risk level.
        risk_level: String,
        /// The commit that replaced it.
        superseded_by: String,
    },
    /// A version already known.
    Duplicate {
        /// What it was known as (its status, or a word).
        known: String,
        /// A note, when there is one.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        /// Why it was refused before, when it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The task file was deleted and the task withdrawn.
    Withdrawn {
        /// The status it had.
        was: crate::store::state::TaskStatus,
        /// Why.
        why: String,
    },
    /// The task file was deleted; nothing withdrawn.
    TaskFileDeleted {
        /// The task's status, when it is known and was left as it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        known: Option<String>,
        /// Always null: nothing was withdrawn.
        withdrew: Option<String>,
        /// Why.
        why: String,
    },
    /// An invalid or changed text, recorded once.
    Rejected {
        /// Its key (text SHA-256 or `blob:` ID), for texts without a valid task.
        #[serde(skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        /// Why.
        reason: String,
    },
    /// A task whose `TARGET_NODES` does not name this node.
    NotForThisNode {
        /// Why.
        reason: String,
        /// The task's target nodes.
        target_nodes: Option<Vec<String>>,
    },
    /// A task was shown for a decision.
    Prompted,
    /// A task could not be shown, or the operator's decision could not be recorded
    /// (an outbox or state write failed): it stays pending and is offered again.
    DecisionNotRecorded {
        /// The error.
        error: String,
    },
    /// `[D]`.
    Deferred,
    /// `[S]` or end of input at a prompt.
    Stopped {
        /// Why.
        reason: String,
    },
    /// `[A]`: the record MAC is the line's `mac`.
    Approved {
        /// The outbox folder, relative to the checkout.
        outbox: String,
        /// What the signature check found (the result's `approval.signature`
        /// record; null: none was made).
        signature: Value,
    },
    /// A command refused (exit 3).
    Refused(Refusal),
    /// `mark-completed`.
    MarkedCompleted,
    // ---- runs
    /// A RED authorization was typed and verified; the line's `mac` binds it.
    Authorized {
        /// When.
        at: String,
        /// `RF_TX` or `RED_OTHER`.
        kind: rxnode_interlock::AuthorizationKind,
    },
    /// A run started (before any radio is touched).
    RunStarted {
        /// Steps in its plan.
        steps: usize,
    },
    /// The TX guard asked for the stream's activation.
    TxKeyed {
        /// When (ISO 8601).
        keyed_at: String,
        /// The step (1-based).
        step: usize,
    },
    /// The TX guard process ended.
    TxGuardExit {
        /// How.
        exit: String,
        /// The step (1-based).
        step: usize,
    },
    /// A run ended before any radio stream was opened.
    RunEndedBeforeRadio(RunEnd),
    /// A run finished.
    RunFinished(RunEnd),
    /// A run that did not finish was finished as interrupted.
    RunInterrupted {
        /// What the journal knew.
        interrupted: crate::store::journal::Interrupted,
        /// Whether the result files were written again.
        result_rewritten: bool,
    },
    // ---- publication
    /// A result was committed to the publication branch.
    Published(Published),
    /// A publication was pushed.
    Pushed {
        /// Push attempts.
        attempts: u32,
        /// Milliseconds the push took.
        elapsed_ms: u64,
        /// The branch.
        #[serde(rename = "ref")]
        ref_: String,
        /// The remote.
        remote: String,
    },
    /// A publication failed (not a refusal: that is [`Event::Refused`]).
    PublishFailed(Refusal),
    // ---- the node and its radios
    /// The node's name was set.
    NodeNamed {
        /// The new name.
        name: String,
        /// The previous one.
        previous: Option<String>,
    },
    /// Where the node publishes was set.
    PublishRefSet {
        /// The branch it names.
        branch: String,
        /// The previous layout.
        previous: String,
        /// The layout.
        publish_ref: String,
    },
    /// A signer was added.
    SignerAdded {
        /// Its key's fingerprint.
        fingerprint: String,
        /// Its principals.
        principals: String,
    },
    /// Signers were removed: (principals, fingerprint) each.
    SignerRemoved {
        /// What was removed.
        removed: Vec<(String, String)>,
    },
    /// The systemd unit was installed. Written only where systemd runs; read on
    /// every platform.
    #[cfg_attr(not(unix), allow(dead_code))]
    ServiceInstalled {
        /// The unit file.
        unit: String,
        /// Whether it runs as a user service (`systemctl --user`).
        user: bool,
    },
    /// The systemd unit was removed. Written only where systemd runs.
    #[cfg_attr(not(unix), allow(dead_code))]
    ServiceUninstalled {
        /// The unit file.
        unit: String,
    },
    /// A radio's self-test.
    SelfTest {
        /// The device args.
        device_args: String,
        /// `PASS` or `FAIL`.
        outcome: String,
        /// The radio.
        radio: String,
        /// Why.
        reason: String,
    },
    /// A radio's health changed.
    RadioHealth {
        /// The device args.
        device_args: String,
        /// The health it had.
        from: String,
        /// The radio.
        radio: String,
        /// Why.
        reason: String,
        /// The health it has.
        to: String,
    },
    /// `state rebuild`.
    StateRebuilt {
        /// Tasks by status.
        counts: std::collections::BTreeMap<&'static str, usize>,
        /// Files kept aside.
        kept_aside: Vec<String>,
        /// What the rebuild noted.
        notes: Vec<String>,
    },
    // ---- measurements outside a task
    /// A standalone capture.
    Capture(CaptureDetail),
    /// A standalone sweep.
    Sweep {
        /// The bin width.
        bin_hz: f64,
        /// The radio's device args.
        device: String,
        /// Hops that failed.
        failed_hops: usize,
        /// Hops planned.
        hops: usize,
        /// The band's start.
        start_hz: f64,
        /// The sweep's status (`PASS` …).
        status: String,
        /// The band's end.
        stop_hz: f64,
    },
    /// A standalone CLKIN comparison.
    ClkinCompare(CompareDetail),
    /// A frequency calibration: the result's `freq_cal` entry without its
    /// detections, and `command: analyze` when it was measured from a recording.
    FreqCal(Value),
}

/// A standalone capture's detail: the key figures, no absolute path, no PSD; or,
/// when it could not run, the settings asked for and why.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum CaptureDetail {
    /// It ran (to the end or not: `status` and `stop_reason` say).
    Ran(Box<CaptureRan>),
    /// It could not start or failed on the way.
    Failed(CaptureFailed),
}

/// The settings a standalone capture was asked for.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureAsked {
    /// The radio's device args.
    pub(crate) device: String,
    /// Seconds asked for.
    pub(crate) duration_s: f64,
    /// Centre frequency (Hz).
    pub(crate) frequency_hz: f64,
    /// Sample rate (Hz).
    pub(crate) sample_rate_hz: f64,
}

/// A standalone capture that ran.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureRan {
    /// What it was asked for.
    #[serde(flatten)]
    pub(crate) asked: CaptureAsked,
    /// The CLKIN check, when a reference tone was given.
    pub(crate) clkin: Option<CaptureClkin>,
    /// Samples lost before the analysis (the consumer was behind).
    pub(crate) dropped_samples: u64,
    /// Gaps in the analysed stream.
    pub(crate) gaps: u64,
    /// Files recorded (paths relative to the checkout, or the file name alone).
    pub(crate) iq_files: Vec<CaptureFile>,
    /// Samples lost in all; `null` when an overflow's loss could not be counted.
    pub(crate) lost_samples: Option<u64>,
    /// Median PSD bin (dBFS per bin), when measured.
    pub(crate) noise_floor_db: Option<f64>,
    /// Driver overflows.
    pub(crate) overflows: u64,
    /// The strongest peak, when there is one.
    pub(crate) peak: Option<CapturePeak>,
    /// Samples asked for.
    pub(crate) samples_requested: u64,
    /// Samples the radio delivered.
    pub(crate) samples_received: u64,
    /// `PASS`, `PARTIAL`, `FAIL` …
    pub(crate) status: &'static str,
    /// Why it ended.
    pub(crate) stop_reason: String,
    /// Reads that timed out.
    pub(crate) timeouts: u64,
}

/// A standalone capture that could not run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureFailed {
    /// What it was asked for.
    #[serde(flatten)]
    pub(crate) asked: CaptureAsked,
    /// Why.
    pub(crate) error: String,
    /// Always `FAIL`.
    pub(crate) status: &'static str,
}

/// A capture's strongest peak.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CapturePeak {
    /// Its frequency (Hz).
    pub(crate) frequency_hz: f64,
    /// Its level (dBFS per bin).
    pub(crate) power_db: f64,
}

/// A capture's CLKIN check, in short.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureClkin {
    /// The reference error (ppm), when measured.
    pub(crate) ppm: Option<f64>,
    /// Its standard uncertainty (ppm), when measured.
    pub(crate) ppm_uncertainty: Option<f64>,
    /// The verdict.
    pub(crate) status: rxnode_dsp::ClkinStatus,
    /// The reference tone (Hz).
    pub(crate) tone_hz: f64,
}

/// A recorded file, in short.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CaptureFile {
    /// Its size.
    pub(crate) bytes: u64,
    /// Its format.
    pub(crate) format: String,
    /// Its path, relative to the checkout (or its name alone).
    pub(crate) path: String,
    /// Its SHA-256.
    pub(crate) sha256: String,
}

/// A standalone CLKIN comparison's detail; or, when it could not run, the radios and why.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum CompareDetail {
    /// It ran.
    Ran(Box<CompareRan>),
    /// It could not run.
    Failed {
        /// The two radios' device args (master first).
        devices: Vec<String>,
        /// Why.
        error: String,
        /// Always `FAIL`.
        status: &'static str,
    },
}

/// A standalone CLKIN comparison that ran.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompareRan {
    /// The two radios' device args (master first).
    pub(crate) devices: Vec<String>,
    /// Seconds asked for.
    pub(crate) duration_s: f64,
    /// Centre frequency (Hz).
    pub(crate) frequency_hz: f64,
    /// What the master radio delivered.
    pub(crate) master: CompareStream,
    /// The slave's offset from the master (ppb), when measured.
    pub(crate) relative_ppb: Option<f64>,
    /// Sample rate (Hz).
    pub(crate) sample_rate_hz: f64,
    /// What the slave radio delivered.
    pub(crate) slave: CompareStream,
    /// `PASS`, `FAIL`, `NOT_MEASURED` …
    pub(crate) status: &'static str,
    /// The pass/fail tolerance (ppb).
    pub(crate) tolerance_ppb: f64,
    /// The reference tone (Hz).
    pub(crate) tone_hz: f64,
    /// Its standard uncertainty (ppb), when measured.
    pub(crate) uncertainty_ppb: Option<f64>,
    /// The verdict on the offset, when there is one.
    pub(crate) verdict: Option<&'static str>,
}

/// What one radio of a comparison delivered.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompareStream {
    /// Its device args, when known.
    pub(crate) device: Option<String>,
    /// Driver overflows.
    pub(crate) overflows: u64,
    /// Samples it delivered.
    pub(crate) samples_received: u64,
}

/// A refusal's detail.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Refusal {
    /// `publish` for a refused publication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) action: Option<String>,
    /// The command refused (absent on a task version's own `refused` line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) command: Option<String>,
    /// The refused text's key (its SHA-256), for a text refused once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<String>,
    /// For a refused publication: whether a push was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) push: Option<bool>,
    /// Why.
    pub(crate) reason: String,
}

impl Refusal {
    /// `command` refused for `reason`.
    pub(crate) fn of(command: &str, reason: impl Into<String>) -> Event {
        Event::Refused(Refusal {
            command: Some(command.to_owned()),
            reason: reason.into(),
            ..Refusal::default()
        })
    }
    /// A task version refused for `reason` (no command).
    pub(crate) fn version(reason: impl Into<String>) -> Event {
        Event::Refused(Refusal {
            reason: reason.into(),
            ..Refusal::default()
        })
    }
}

/// What a `not_examined` line says.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum NotExamined {
    /// A first start: only the tip's version was examined.
    FirstStart {
        /// `remote/branch`.
        branch: String,
        /// Why.
        reason: String,
        /// The task file's path.
        task_path: String,
    },
    /// Versions beyond the bounds, or an incomplete history.
    Bounded {
        /// The first (oldest) commits of the versions not examined.
        commits: Vec<String>,
        /// At most this many are listed.
        commits_listed_max: usize,
        /// Versions not examined.
        count: usize,
        /// Why the history is incomplete, if it is.
        history_incomplete: Option<String>,
        /// The version bound (`--history-limit`).
        limit: usize,
        /// The newest commit not walked, when the walk stopped at its bound.
        not_walked_from: Option<String>,
        /// Why.
        reason: String,
        /// Where the walk started, if not at the root.
        since: Option<String>,
        /// The commit bound (`--walk-limit`).
        walk_limit: usize,
        /// Whether the walk stopped at its bound.
        walk_truncated: bool,
    },
}

/// A publication's detail.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Published {
    /// The files committed (path, bytes), for a new publication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<Vec<PublishedFile>>,
    /// The node that published.
    pub(crate) node: String,
    /// For a publication found committed but not recorded: what was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
    /// Whether it is on the remote.
    pub(crate) pushed: bool,
    /// The branch.
    #[serde(rename = "ref")]
    pub(crate) ref_: String,
    /// For a publication found committed but not recorded: true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resumed: Option<bool>,
    /// The result's status.
    pub(crate) status: String,
}

/// One published file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PublishedFile {
    /// Its size.
    pub(crate) bytes: usize,
    /// Its path on the publication branch.
    pub(crate) path: String,
}

/// How a run ended.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunEnd {
    /// Whether it was interrupted.
    pub(crate) interrupted: bool,
    /// The result's status.
    pub(crate) status: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ledger::Entry;

    /// The line of `e` without its time.
    fn line(e: Event) -> String {
        let mut v = serde_json::to_value(Entry::new(e)).unwrap();
        v.as_object_mut().unwrap().remove("at");
        v.to_string()
    }

    /// Each event's line has the bytes earlier builds wrote: keys sorted, an
    /// absent field absent, a null field null, no detail for an event without one.
    #[test]
    fn events_are_written_as_earlier_builds_wrote_them() {
        let cases = [
            (Event::Held, r#"{"event":"held"}"#),
            (
                Refusal::of("run", "no"),
                r#"{"detail":{"command":"run","reason":"no"},"event":"refused"}"#,
            ),
            (
                Refusal::version("bad"),
                r#"{"detail":{"reason":"bad"},"event":"refused"}"#,
            ),
            (
                Event::PublishFailed(Refusal {
                    action: Some("publish".into()),
                    push: Some(true),
                    reason: "x".into(),
                    ..Refusal::default()
                }),
                r#"{"detail":{"action":"publish","push":true,"reason":"x"},"event":"publish_failed"}"#,
            ),
            (
                Event::Duplicate {
                    known: "pending".to_owned(),
                    note: Some("already queued".into()),
                    reason: None,
                },
                r#"{"detail":{"known":"pending","note":"already queued"},"event":"duplicate"}"#,
            ),
            (
                Event::TaskFileDeleted {
                    known: None,
                    withdrew: None,
                    why: "w".into(),
                },
                r#"{"detail":{"why":"w","withdrew":null},"event":"task_file_deleted"}"#,
            ),
            (
                Event::HistoryRewritten {
                    branch: "o/b".into(),
                    merge_base: None,
                    new: "n".into(),
                    old: "o".into(),
                    pending_off_branch: vec![],
                },
                r#"{"detail":{"branch":"o/b","merge_base":null,"new":"n","old":"o","pending_off_branch":[]},"event":"history_rewritten"}"#,
            ),
            (
                Event::Approved {
                    outbox: ".local/rx_agent_outbox/T".into(),
                    signature: Value::Null,
                },
                r#"{"detail":{"outbox":".local/rx_agent_outbox/T","signature":null},"event":"approved"}"#,
            ),
            (
                Event::WatcherStarted {
                    branch: "b".into(),
                    interval_s: 30.0,
                    no_prompt: false,
                    once: true,
                    pid: 7,
                    remote: "origin".into(),
                    task_path: "t.md".into(),
                },
                r#"{"detail":{"branch":"b","interval_s":30.0,"no_prompt":false,"once":true,"pid":7,"remote":"origin","task_path":"t.md"},"event":"watcher_started"}"#,
            ),
            (
                Event::NotExamined(NotExamined::FirstStart {
                    branch: "o/b".into(),
                    reason: "r".into(),
                    task_path: "t".into(),
                }),
                r#"{"detail":{"branch":"o/b","reason":"r","task_path":"t"},"event":"not_examined"}"#,
            ),
        ];
        for (e, want) in cases {
            assert_eq!(line(e), want);
        }
    }
}
