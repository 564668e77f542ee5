use serde::Serialize;
use std::fmt;

/// One problem found in a task file, located by 1-based line and field name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// 1-based line number in the task file, when the problem has a place.
    pub line: Option<usize>,
    /// The header field (or plan field) concerned, when there is one.
    pub field: Option<String>,
    /// What is wrong, naming the bad value.
    pub message: String,
}

impl Issue {
    /// An issue; the field name and the message are made terminal-safe here
    /// ([`crate::escaped`]), once, so a name or value taken from the task file
    /// (an unknown header key holding `ESC [ 2J`, a C1 control, a bidi override)
    /// reaches no screen, log or JSON document raw.
    pub fn new(line: Option<usize>, field: Option<&str>, message: impl Into<String>) -> Self {
        Issue {
            line,
            field: field.map(crate::escaped),
            message: crate::escaped(&message.into()),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, &self.field) {
            (Some(l), Some(fl)) => write!(f, "line {l}: {fl}: {}", self.message),
            (Some(l), None) => write!(f, "line {l}: {}", self.message),
            (None, Some(fl)) => write!(f, "{fl}: {}", self.message),
            (None, None) => write!(f, "{}", self.message),
        }
    }
}

/// Everything the interlock can refuse.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The task file is invalid; every problem found is listed.
    #[error("invalid task: {}", .0.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; "))]
    InvalidTask(Vec<Issue>),
    /// A task ID does not match `[A-Za-z0-9_-]{1,64}`.
    #[error("invalid task id {0:?}: must match [A-Za-z0-9_-]{{1,64}} and not start with '-'")]
    InvalidTaskId(String),
    /// A task ID that is a reserved device name on Windows (`CON`, `NUL`, `COM1` …).
    #[error("invalid task id {id:?}: {name} is a reserved device name on Windows")]
    ReservedTaskId {
        /// The ID given.
        id: String,
        /// The device name it stands for.
        name: String,
    },
    /// The authorization line typed by the operator is not the required phrase.
    #[error(
        "authorization refused for task {task_id}: expected the exact line {expected:?}; {why}"
    )]
    WrongPhrase {
        /// The task being authorized.
        task_id: String,
        /// The phrase that would have been accepted.
        expected: String,
        /// What sets the typed line apart from the phrase (never the typed text
        /// itself unless it is the phrase spelt differently).
        why: String,
    },
    /// The task does not need (or cannot get) this kind of authorization.
    #[error("task {task_id} is {risk}: {reason}")]
    NotAuthorizable {
        /// The task concerned.
        task_id: String,
        /// Its risk level.
        risk: String,
        /// Why no authorization applies.
        reason: String,
    },
    /// An approval or authorization record this node cannot verify as its own.
    #[error("record for task {task_id} is not signed by this node: {reason}")]
    UnsignedRecord {
        /// The task concerned.
        task_id: String,
        /// Why it does not verify.
        reason: String,
    },
    /// An approval or authorization record does not belong to this task text.
    #[error("record mismatch for task {task_id}: {reason}")]
    RecordMismatch {
        /// The task concerned.
        task_id: String,
        /// What differs.
        reason: String,
    },
    /// The node-local policy refuses the step; names the limit.
    #[error("refused by local policy: {0}")]
    Policy(String),
    /// The local policy file is malformed.
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
}
