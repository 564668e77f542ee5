use crate::error::Error;
use crate::header::TaskId;
use crate::risk::RiskLevel;
use crate::task::ValidTask;
use serde::{Deserialize, Serialize};

/// The operator's `[A] Approve` of one exact task text, as stored in state.
///
/// An approval is not an authorization: RED work needs an [`Authorization`]
/// typed at `rxnode run` as well.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The approved task.
    pub task_id: TaskId,
    /// SHA-256 of the approved text.
    pub task_sha256: String,
    /// The commit that held the approved text.
    pub commit: String,
    /// When (ISO 8601 with offset), as passed in by the caller.
    pub at: String,
}

impl Approval {
    /// Record an approval of this task (the time is passed in: no clock reads here).
    pub fn new(task: &ValidTask, commit: &str, at: &str) -> Approval {
        Approval {
            task_id: task.id().clone(),
            task_sha256: task.sha256().to_owned(),
            commit: commit.to_owned(),
            at: at.to_owned(),
        }
    }

    /// Whether this approval covers exactly this task text.
    pub fn covers(&self, task: &ValidTask) -> bool {
        &self.task_id == task.id() && self.task_sha256 == task.sha256()
    }
}

/// Which RED authorization was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuthorizationKind {
    /// `AUTHORIZE RF TX` for a task with `RF_TX = YES`.
    RfTx,
    /// `AUTHORIZE <TASK_ID>` for other RED work.
    RedOther,
}

/// The exact line the operator must type for this task, or `None` when the
/// task is not RED (GREEN/YELLOW need approval only).
pub fn required_phrase(task: &ValidTask) -> Option<(AuthorizationKind, String)> {
    if task.risk() != RiskLevel::Red {
        return None;
    }
    if task.is_rf_tx() {
        Some((AuthorizationKind::RfTx, "AUTHORIZE RF TX".to_owned()))
    } else {
        Some((
            AuthorizationKind::RedOther,
            format!("AUTHORIZE {}", task.id()),
        ))
    }
}

/// A verified RED authorization, bound to one task ID and one approved text.
///
/// Made only by [`verify_authorization`]; not `Clone`, not deserializable, and
/// consumed by [`crate::authorize`], so it is used at most once.
#[derive(Debug, Serialize)]
pub struct Authorization {
    task_id: TaskId,
    task_sha256: String,
    kind: AuthorizationKind,
    at: String,
}

impl Authorization {
    /// The task authorized.
    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }
    /// SHA-256 of the task text it is bound to.
    pub fn task_sha256(&self) -> &str {
        &self.task_sha256
    }
    /// Which phrase was given.
    pub fn kind(&self) -> AuthorizationKind {
        self.kind
    }
    /// When, as passed in.
    pub fn at(&self) -> &str {
        &self.at
    }
}

/// Check the line the operator typed (line terminator already stripped by
/// the caller, nothing else) against the phrase this task requires.
///
/// Exact and case-sensitive: a trailing space, lower case, the other phrase or
/// an empty line are refused.
pub fn verify_authorization(
    task: &ValidTask,
    approval: &Approval,
    line: &str,
    at: &str,
) -> Result<Authorization, Error> {
    let Some((kind, phrase)) = required_phrase(task) else {
        return Err(Error::NotAuthorizable {
            task_id: task.id().to_string(),
            risk: task.risk().to_string(),
            reason: "only RED tasks take an authorization".to_owned(),
        });
    };
    if !approval.covers(task) {
        return Err(Error::RecordMismatch {
            task_id: task.id().to_string(),
            reason: format!(
                "approval is for {} with text SHA-256 {}, not this text ({})",
                approval.task_id,
                approval.task_sha256,
                task.sha256()
            ),
        });
    }
    if line != phrase {
        return Err(Error::WrongPhrase {
            task_id: task.id().to_string(),
            expected: phrase,
        });
    }
    Ok(Authorization {
        task_id: task.id().clone(),
        task_sha256: task.sha256().to_owned(),
        kind,
        at: at.to_owned(),
    })
}
