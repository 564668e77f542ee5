use crate::error::Error;
use crate::header::TaskId;
use crate::mac::{record_mac, verify_record_mac, RecordFields, RecordKind};
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
    /// HMAC-SHA256 (hex) of the record under the node's key
    /// ([`Approval::signed`]); absent in approvals made by older builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

impl Approval {
    /// An unsigned approval of this task (the time is passed in: no clock
    /// reads here). It is not an approval a node accepts until signed.
    pub fn new(task: &ValidTask, commit: &str, at: &str) -> Approval {
        Approval {
            task_id: task.id().clone(),
            task_sha256: task.sha256().to_owned(),
            commit: commit.to_owned(),
            at: at.to_owned(),
            mac: None,
        }
    }

    /// An approval of this task signed with the node's `key`.
    pub fn signed(task: &ValidTask, commit: &str, at: &str, key: &[u8]) -> Approval {
        let mut a = Approval::new(task, commit, at);
        a.mac = record_mac(key, &a.fields());
        a
    }

    /// The fields its MAC binds.
    pub fn fields(&self) -> RecordFields<'_> {
        RecordFields {
            kind: RecordKind::Approval,
            task_id: self.task_id.as_str(),
            task_sha256: &self.task_sha256,
            commit: &self.commit,
            at: &self.at,
        }
    }

    /// Check that this node (holder of `key`) made this approval: refused when
    /// it carries no MAC (an older build, or planted) or a MAC that does not
    /// verify (another checkout's key, a planted or edited record).
    pub fn verify(&self, key: &[u8]) -> Result<(), Error> {
        let reason = match &self.mac {
            None => "it carries no MAC: made by an older rxnode, or a planted record",
            Some(m) if verify_record_mac(key, &self.fields(), m) => return Ok(()),
            Some(_) => {
                "its MAC does not verify under this node's key (a .local/ copied from another \
                 checkout, or a planted or edited record)"
            }
        };
        Err(Error::UnsignedRecord {
            task_id: self.task_id.to_string(),
            reason: reason.to_owned(),
        })
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
///
/// It cannot be copied:
///
/// ```compile_fail
/// fn twice(a: &rxnode_interlock::Authorization) -> rxnode_interlock::Authorization { a.clone() }
/// ```
///
/// Nor read back from a file (a ledger line is a record, not a key):
///
/// ```compile_fail
/// let a: rxnode_interlock::Authorization = serde_json::from_str("{}").unwrap();
/// ```
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

impl Authorization {
    /// The MAC (hex) of this authorization's ledger record under the node's
    /// `key`, bound to the commit that held the approved text.
    pub fn record_mac(&self, key: &[u8], commit: &str) -> Option<String> {
        record_mac(
            key,
            &RecordFields {
                kind: match self.kind {
                    AuthorizationKind::RfTx => RecordKind::AuthorizeRfTx,
                    AuthorizationKind::RedOther => RecordKind::AuthorizeRedOther,
                },
                task_id: self.task_id.as_str(),
                task_sha256: &self.task_sha256,
                commit,
                at: &self.at,
            },
        )
    }
}

/// [`verify_authorization`] for an approval this node must have made: the
/// approval's MAC is checked under `key` first ([`Approval::verify`]), so a
/// planted or copied approval never becomes an [`Authorization`].
pub fn verify_node_authorization(
    task: &ValidTask,
    approval: &Approval,
    key: &[u8],
    line: &str,
    at: &str,
) -> Result<Authorization, Error> {
    approval.verify(key)?;
    verify_authorization(task, approval, line, at)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    fn red_other() -> ValidTask {
        ok(&render(
            &set(fields("NO", "NO", "NO"), "RISK_LEVEL", Some("RED")),
            "Reflash CPLD.\n",
        ))
    }

    #[test]
    fn phrases_per_level() {
        assert_eq!(
            required_phrase(&ok(&render(&fields("NO", "NO", "NO"), ""))),
            None
        );
        assert_eq!(
            required_phrase(&ok(&render(&fields("YES", "YES", "NO"), ""))),
            None
        );
        assert_eq!(
            required_phrase(&tx_task()),
            Some((AuthorizationKind::RfTx, "AUTHORIZE RF TX".into()))
        );
        assert_eq!(
            required_phrase(&red_other()),
            Some((AuthorizationKind::RedOther, "AUTHORIZE T_1".into()))
        );
    }

    #[test]
    fn exact_phrase_only() {
        let t = tx_task();
        let a = Approval::new(&t, "c0ffee", "2026-01-01T00:00:00+00:00");
        for bad in [
            "AUTHORIZE RF TX ",
            " AUTHORIZE RF TX",
            "authorize rf tx",
            "AUTHORIZE RF  TX",
            "AUTHORIZE T_1",
            "AUTHORIZE RF TX\n",
            "AUTHORIZE RF TX\r",
            "",
        ] {
            match verify_authorization(&t, &a, bad, "now") {
                Err(Error::WrongPhrase { expected, .. }) => assert_eq!(expected, "AUTHORIZE RF TX"),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        let auth = verify_authorization(&t, &a, "AUTHORIZE RF TX", "now").unwrap();
        assert_eq!(auth.kind(), AuthorizationKind::RfTx);
        assert_eq!(auth.task_id().as_str(), "T_1");
        assert_eq!(auth.task_sha256(), t.sha256());
        assert_eq!(auth.at(), "now");

        let r = red_other();
        let a = Approval::new(&r, "c0ffee", "t");
        for bad in [
            "AUTHORIZE RF TX",
            "AUTHORIZE t_1",
            "AUTHORIZE T_1 ",
            "AUTHORIZE",
        ] {
            assert!(matches!(
                verify_authorization(&r, &a, bad, "now"),
                Err(Error::WrongPhrase { .. })
            ));
        }
        let auth = verify_authorization(&r, &a, "AUTHORIZE T_1", "now").unwrap();
        assert_eq!(auth.kind(), AuthorizationKind::RedOther);
    }

    #[test]
    fn not_red_is_not_authorizable() {
        let t = ok(&render(&fields("YES", "YES", "NO"), ""));
        let a = Approval::new(&t, "c", "t");
        assert!(matches!(
            verify_authorization(&t, &a, "AUTHORIZE RF TX", "now"),
            Err(Error::NotAuthorizable { .. })
        ));
    }

    #[test]
    fn bound_to_id_and_sha() {
        let t = tx_task();
        // Approval of a different text (one byte more) does not cover it.
        let other = ok(&format!("{}\n", t.text()));
        assert_ne!(other.sha256(), t.sha256());
        let a_other = Approval::new(&other, "c", "t");
        assert!(!a_other.covers(&t));
        assert!(matches!(
            verify_authorization(&t, &a_other, "AUTHORIZE RF TX", "now"),
            Err(Error::RecordMismatch { .. })
        ));
        // Approval of a different ID.
        let mut a = Approval::new(&t, "c", "t");
        a.task_id = crate::TaskId::parse("OTHER").unwrap();
        assert!(!a.covers(&t));
        assert!(verify_authorization(&t, &a, "AUTHORIZE RF TX", "now").is_err());
        let a = Approval::new(&t, "c", "t");
        assert!(a.covers(&t));
        assert_eq!(a.task_sha256, t.sha256());
        assert_eq!(a.commit, "c");
    }

    const KEY: [u8; 32] = [42; 32];

    #[test]
    fn only_a_signed_approval_under_this_key_authorizes() {
        let t = tx_task();
        let at = "2026-01-01T00:00:00+00:00";
        let a = Approval::signed(&t, "c0ffee", at, &KEY);
        assert!(a.verify(&KEY).is_ok());
        let auth = verify_node_authorization(&t, &a, &KEY, "AUTHORIZE RF TX", "now").unwrap();
        assert_eq!(auth.kind(), AuthorizationKind::RfTx);
        assert!(auth.record_mac(&KEY, "c0ffee").is_some());
        // Unsigned (older build, or planted).
        let legacy = Approval::new(&t, "c0ffee", at);
        match verify_node_authorization(&t, &legacy, &KEY, "AUTHORIZE RF TX", "now") {
            Err(Error::UnsignedRecord { task_id, reason }) => {
                assert_eq!(task_id, "T_1");
                assert!(reason.contains("no MAC"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // Another node's key (a copied .local/).
        assert!(matches!(
            a.verify(&[1; 32]),
            Err(Error::UnsignedRecord { .. })
        ));
        // A MAC copied from another task's approval, or onto an edited field.
        let other = red_other();
        let mut stolen = Approval::signed(&other, "c0ffee", at, &KEY);
        stolen.task_sha256 = t.sha256().to_owned();
        assert!(stolen.verify(&KEY).is_err());
        let mut moved = Approval::new(&t, "c0ffee", at);
        moved.mac = Approval::signed(&t, "beef", at, &KEY).mac;
        assert!(moved.verify(&KEY).is_err());
        let mut later = a.clone();
        later.at = "2026-01-02T00:00:00+00:00".into();
        assert!(later.verify(&KEY).is_err());
        // The MAC survives the state file's JSON; a legacy one reads without it.
        let j = serde_json::to_string(&a).unwrap();
        let back: Approval = serde_json::from_str(&j).unwrap();
        assert!(back.verify(&KEY).is_ok());
        let j = serde_json::to_string(&legacy).unwrap();
        assert!(!j.contains("mac"));
    }

    #[test]
    fn approval_round_trips_but_refuses_bad_id() {
        let t = tx_task();
        let a = Approval::new(&t, "c", "2026-01-01T00:00:00+00:00");
        let j = serde_json::to_string(&a).unwrap();
        let b: Approval = serde_json::from_str(&j).unwrap();
        assert_eq!(a, b);
        let evil = j.replace("\"T_1\"", "\"../x\"");
        assert!(serde_json::from_str::<Approval>(&evil).is_err());
    }
}
