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

/// A verified `AUTHORIZE RF TX`, handed from `rxnode run` to the TX guard
/// process that holds the transmitter (docs/safety.md#the-tx-guard-process).
///
/// It is not an [`Authorization`]: it is made only by consuming one
/// ([`Authorization::into_grant`]), carries a MAC under the node key over the
/// task, text, commit, authorization time, plan step, a fresh nonce and the
/// process ID of the `run` that made it, and becomes an [`Authorization`]
/// again only through [`verify_tx_grant`] in a process whose parent is that
/// `run`. The permit is then made by [`crate::authorize`], the permit's one
/// constructor, which checks everything again.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TxGrant {
    /// The task authorized.
    pub task_id: String,
    /// SHA-256 of the approved text.
    pub task_sha256: String,
    /// The commit that held it.
    pub commit: String,
    /// When the phrase was typed (the authorization's time).
    pub at: String,
    /// The plan step (0-based) the grant is for.
    pub step_index: usize,
    /// Random, fresh per grant (hex).
    pub nonce: String,
    /// The process ID of the `rxnode run` that made the grant.
    pub parent_pid: u32,
    /// HMAC-SHA256 (hex) under the node key over all of the above.
    pub mac: String,
}

impl TxGrant {
    fn bound(&self) -> String {
        grant_binding(&self.at, self.step_index, &self.nonce, self.parent_pid)
    }
}

fn grant_binding(at: &str, step_index: usize, nonce: &str, parent_pid: u32) -> String {
    format!("{at}\nstep={step_index}\nnonce={nonce}\nparent={parent_pid}")
}

impl Authorization {
    /// Consume this `AUTHORIZE RF TX` into a grant for the TX guard process:
    /// `None` when it is not RF TX or the key is not a node key.
    pub fn into_grant(
        self,
        key: &[u8],
        commit: &str,
        step_index: usize,
        nonce: &str,
        parent_pid: u32,
    ) -> Option<TxGrant> {
        if self.kind != AuthorizationKind::RfTx {
            return None;
        }
        let at = grant_binding(&self.at, step_index, nonce, parent_pid);
        let mac = record_mac(
            key,
            &RecordFields {
                kind: RecordKind::TxGrant,
                task_id: self.task_id.as_str(),
                task_sha256: &self.task_sha256,
                commit,
                at: &at,
            },
        )?;
        Some(TxGrant {
            task_id: self.task_id.to_string(),
            task_sha256: self.task_sha256,
            commit: commit.to_owned(),
            at: self.at,
            step_index,
            nonce: nonce.to_owned(),
            parent_pid,
            mac,
        })
    }
}

/// Turn a grant back into the `AUTHORIZE RF TX` it was made from, in the TX
/// guard process: the approval must be this node's ([`Approval::verify`]) and
/// cover this exact text, the grant must be for this task, text and commit,
/// made by `parent_pid` (the caller's parent process) and carry a MAC that
/// verifies under `key`. Anything else is refused.
pub fn verify_tx_grant(
    task: &ValidTask,
    approval: &Approval,
    key: &[u8],
    grant: &TxGrant,
    parent_pid: u32,
) -> Result<Authorization, Error> {
    approval.verify(key)?;
    let refuse = |reason: &str| Error::RecordMismatch {
        task_id: task.id().to_string(),
        reason: reason.to_owned(),
    };
    if !approval.covers(task) {
        return Err(refuse("the approval does not cover this task text"));
    }
    if grant.task_id != task.id().as_str()
        || grant.task_sha256 != task.sha256()
        || grant.commit != approval.commit
    {
        return Err(refuse(
            "the TX grant is for another task, text or commit than the approval",
        ));
    }
    if grant.parent_pid != parent_pid {
        return Err(refuse(
            "the TX grant was made by another process than this guard's parent",
        ));
    }
    let fields = RecordFields {
        kind: RecordKind::TxGrant,
        task_id: &grant.task_id,
        task_sha256: &grant.task_sha256,
        commit: &grant.commit,
        at: &grant.bound(),
    };
    if !verify_record_mac(key, &fields, &grant.mac) {
        return Err(Error::UnsignedRecord {
            task_id: task.id().to_string(),
            reason: "the TX grant's MAC does not verify under this node's key".to_owned(),
        });
    }
    if required_phrase(task).map(|(k, _)| k) != Some(AuthorizationKind::RfTx) {
        return Err(refuse("the task takes no AUTHORIZE RF TX"));
    }
    Ok(Authorization {
        task_id: task.id().clone(),
        task_sha256: task.sha256().to_owned(),
        kind: AuthorizationKind::RfTx,
        at: grant.at.clone(),
    })
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
            why: phrase_difference(line, &phrase),
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

/// What sets a typed `line` apart from the `phrase` it is not (an authorization,
/// `publish`'s confirmation), for the refusal:
/// the line can look the same on a terminal (a space after it, a byte-order
/// mark, a zero-width space, a Cyrillic `А`, lower case). The typed text is
/// described only when it is the phrase spelt differently; any other line is
/// named by its length alone (it goes to the ledger and, refusals being part of
/// a node's status, may leave the machine).
pub fn phrase_difference(line: &str, phrase: &str) -> String {
    use crate::strict_json::{latin_lookalike, non_ascii_note};
    if line.is_empty() {
        return "an empty line was typed".to_owned();
    }
    let ascii: String = line
        .chars()
        .filter_map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                Some(c)
            } else if c.is_whitespace() && !c.is_control() {
                Some(' ')
            } else {
                latin_lookalike(c)
            }
        })
        .collect();
    let words = ascii
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>();
    let words = words.join(" ");
    if !words.eq_ignore_ascii_case(phrase) {
        return format!(
            "the line typed is not that phrase ({} characters)",
            line.chars().count()
        );
    }
    let mut why = Vec::new();
    if let Some(note) = non_ascii_note(line) {
        why.push(format!("the line holds {note}"));
    }
    if words != ascii {
        why.push("its spaces differ (one space between words, none before or after)".to_owned());
    }
    if words != phrase {
        why.push("its letter case differs (type the phrase exactly as shown)".to_owned());
    }
    why.join("; ")
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

    /// A TX grant carries one verified `AUTHORIZE RF TX` to the guard process and
    /// nothing else: another key, task, commit, step, nonce, parent or MAC fails.
    #[test]
    fn a_tx_grant_verifies_only_for_its_task_parent_and_key() {
        let t = tx_task();
        let a = Approval::signed(&t, "c0ffee", "2026-01-01T00:00:00+00:00", &KEY);
        let grant = || {
            verify_node_authorization(&t, &a, &KEY, "AUTHORIZE RF TX", "now")
                .unwrap()
                .into_grant(&KEY, "c0ffee", 0, "n1", 42)
                .unwrap()
        };
        let g = grant();
        let back: TxGrant = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
        let auth = verify_tx_grant(&t, &a, &KEY, &back, 42).unwrap();
        assert_eq!(auth.kind(), AuthorizationKind::RfTx);
        assert_eq!(auth.at(), "now");
        assert!(
            verify_tx_grant(&t, &a, &KEY, &g, 43).is_err(),
            "another parent"
        );
        assert!(
            verify_tx_grant(&t, &a, &[1; 32], &g, 42).is_err(),
            "another key"
        );
        let edits: [fn(&mut TxGrant); 6] = [
            |g| g.step_index = 1,
            |g| g.nonce = "n2".into(),
            |g| g.parent_pid = 43,
            |g| g.at = "later".into(),
            |g| g.mac = "00".into(),
            |g| g.commit = "beef".into(),
        ];
        for (i, edit) in edits.iter().enumerate() {
            let mut g = grant();
            edit(&mut g);
            let pid = g.parent_pid;
            assert!(verify_tx_grant(&t, &a, &KEY, &g, pid).is_err(), "edit {i}");
        }
        // Only RF TX becomes a grant.
        let other = red_other();
        let ao = Approval::signed(&other, "c0ffee", "x", &KEY);
        let phrase = required_phrase(&other).unwrap().1;
        let auth = verify_node_authorization(&other, &ao, &KEY, &phrase, "now").unwrap();
        assert!(auth.into_grant(&KEY, "c0ffee", 0, "n", 1).is_none());
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

    /// A refused line that is the phrase spelt differently says what differs;
    /// any other line is named by its length, never echoed.
    #[test]
    fn a_refused_phrase_says_what_differs_and_echoes_nothing_else() {
        let p = "AUTHORIZE RF TX";
        let d = |l: &str| super::phrase_difference(l, p);
        assert_eq!(d(""), "an empty line was typed");
        assert_eq!(
            d("AUTHORIZE RF TX "),
            "its spaces differ (one space between words, none before or after)"
        );
        assert_eq!(
            d("AUTHORIZE  RF TX"),
            "its spaces differ (one space between words, none before or after)"
        );
        assert_eq!(
            d("authorize rf tx"),
            "its letter case differs (type the phrase exactly as shown)"
        );
        assert_eq!(
            d("\u{feff}AUTHORIZE RF TX"),
            "the line holds U+FEFF, an invisible format character, at position 1"
        );
        assert_eq!(
            d("AUTHORIZE RF\u{200b} TX"),
            "the line holds U+200B, an invisible format character, at position 13"
        );
        assert_eq!(
            d("\u{410}UTHORIZE RF TX"),
            "the line holds U+0410, a Cyrillic letter, at position 1"
        );
        assert_eq!(
            d("AUTHORIZE RF TX\r"),
            "the line holds U+000D, a control character, at position 16"
        );
        assert_eq!(
            d("AUTHORIZE\u{a0}RF TX"),
            "the line holds U+00A0, a space that is not ASCII, at position 10"
        );
        // Not the phrase at all: its length, not its text.
        assert_eq!(
            d("hunter2"),
            "the line typed is not that phrase (7 characters)"
        );
        assert_eq!(
            d("AUTHORIZE TASK_1"),
            "the line typed is not that phrase (16 characters)"
        );
    }
}
