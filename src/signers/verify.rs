//! The signature of one commit: split by libgit2 (`gpgsig` header and the
//! signed commit text), an SSHSIG block verified in-process against the
//! allowed signers (namespace `git`, as `git verify-commit` with
//! `gpg.format = ssh`).
use super::allowed::Signer;
use git2::{Oid, Repository};
use ssh_key::{HashAlg, PublicKey, SshSig};

/// The largest signature block read (bytes); an SSHSIG by a 16384-bit RSA key
/// is about 5 KiB.
pub(crate) const MAX_SIGNATURE_BYTES: usize = 16 * 1024;

/// The namespace git signs commits in.
pub(crate) const NAMESPACE: &str = "git";

/// What the signature of a commit is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Status {
    /// A good SSH signature by an allowed signer, in the `git` namespace, within its validity.
    Good {
        /// The signer's principals, as the allowed-signers line holds them.
        principal: String,
        /// `SHA256:…` of the key.
        fingerprint: String,
    },
    /// No signature.
    Unsigned,
    /// An OpenPGP signature: not verified by rxnode (docs/decisions.md).
    OpenPgp,
    /// A signature that does not count, and why.
    Refused {
        /// `unknown key`, `bad signature`, `key not allowed for this namespace`,
        /// `expired`, `not yet valid`, `malformed signature`, `history not
        /// available` (the commit that last changed the task file is not known).
        kind: &'static str,
        /// The details, naming the key or the value.
        detail: String,
    },
}

/// The signature of the commit that last changed a task file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checked {
    /// That commit.
    pub(crate) commit: String,
    /// Its signature.
    pub(crate) status: Status,
}

impl Status {
    fn refused(kind: &'static str, detail: impl Into<String>) -> Status {
        Status::Refused {
            kind,
            detail: detail.into(),
        }
    }

    /// The word the ledger and the result keep: `good`, `unsigned`, `openpgp`, or the refusal's kind.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Status::Good { .. } => "good",
            Status::Unsigned => "unsigned",
            Status::OpenPgp => "openpgp",
            Status::Refused { kind, .. } => kind,
        }
    }
}

impl Checked {
    /// The line shown at the prompt (after `Signed:`/`Unsigned`) and by `run`.
    pub(crate) fn line(&self) -> String {
        let c = &self.commit;
        match &self.status {
            Status::Good {
                principal,
                fingerprint,
            } => format!("Signed: good signature by {principal} ({fingerprint}) on commit {c}"),
            Status::Unsigned => format!("Unsigned (commit {c})"),
            Status::OpenPgp => format!("Signed (OpenPGP, not verified) on commit {c}"),
            Status::Refused { kind, detail } => {
                format!("Signature NOT accepted on commit {c}: {kind} ({detail})")
            }
        }
    }

    /// What the result and the ledger keep of it.
    pub(crate) fn record(&self) -> crate::result::SignatureRecord {
        let (principal, key_sha256) = match &self.status {
            Status::Good {
                principal,
                fingerprint,
            } => (Some(principal.clone()), fingerprint_hex(fingerprint)),
            _ => (None, None),
        };
        crate::result::SignatureRecord {
            commit: self.commit.clone(),
            status: self.status.word().to_owned(),
            principal,
            key_sha256,
        }
    }

    /// Why `rule` refuses a task of `risk` with this signature (`None`: it passes).
    pub(crate) fn refusal(
        &self,
        rule: rxnode_interlock::RequireSignature,
        risk: rxnode_interlock::RiskLevel,
    ) -> Option<String> {
        if !rule.applies_to(risk) {
            return None;
        }
        let c = &self.commit;
        let why = match &self.status {
            Status::Good { .. } => return None,
            Status::Unsigned => "unsigned".to_owned(),
            Status::OpenPgp => {
                "signed with OpenPGP, which this node does not verify (use SSH signing: docs/operator.md#signing-tasks)"
                    .to_owned()
            }
            Status::Refused { kind, detail } => format!("{kind}: {detail}"),
        };
        Some(format!(
            "signature required (tasks.require_signature = {}, task is {}): commit {c}, which last changed the task file, is {why}",
            rule.as_str(),
            risk.as_str()
        ))
    }
}

/// `SHA256:<base64>` as 64 lower-case hex digits (as the result keeps it).
fn fingerprint_hex(fp: &str) -> Option<String> {
    match fp.parse::<ssh_key::Fingerprint>().ok()? {
        ssh_key::Fingerprint::Sha256(b) => Some(hex::encode(b)),
        _ => None,
    }
}

/// 64 hex digits (a result's `key_sha256`) as `SHA256:<base64>`, as `ssh-keygen -l` shows it.
pub(crate) fn fingerprint_of_hex(h: &str) -> Option<String> {
    let bytes: [u8; 32] = hex::decode(h).ok()?.try_into().ok()?;
    Some(ssh_key::Fingerprint::Sha256(bytes).to_string())
}

/// Verify the signature of `commit` against `signers` at `now` (Unix seconds).
pub(crate) fn check_commit(
    repo: &Repository,
    commit: Oid,
    signers: &[Signer],
    now: i64,
) -> Checked {
    // An oversized commit is never loaded, not even to find its signature.
    if let Some(why) = crate::git::ops::oversized(repo, commit) {
        return Checked {
            commit: commit.to_string(),
            status: Status::refused("malformed signature", why),
        };
    }
    let status = match repo.extract_signature(&commit, None) {
        Ok((sig, data)) => {
            let when = crate::git::ops::commit(repo, commit)
                .map(|c| c.committer().when().seconds())
                .unwrap_or(now);
            check_block(&sig, &data, signers, now, when)
        }
        Err(e) if e.code() == git2::ErrorCode::NotFound => Status::Unsigned,
        Err(e) => Status::refused(
            "malformed signature",
            format!("cannot read the commit: {}", e.message()),
        ),
    };
    Checked {
        commit: commit.to_string(),
        status,
    }
}

/// Verify one signature block over `data`; `when` is the commit's own time.
pub(crate) fn check_block(
    sig: &[u8],
    data: &[u8],
    signers: &[Signer],
    now: i64,
    when: i64,
) -> Status {
    if sig.len() > MAX_SIGNATURE_BYTES {
        return Status::refused(
            "malformed signature",
            format!(
                "the signature block is {} bytes; at most {MAX_SIGNATURE_BYTES}",
                sig.len()
            ),
        );
    }
    let Ok(text) = std::str::from_utf8(sig) else {
        return Status::refused("malformed signature", "the signature block is not text");
    };
    let text = text.trim();
    if text.starts_with("-----BEGIN PGP SIGNATURE-----") {
        return Status::OpenPgp;
    }
    if !text.starts_with("-----BEGIN SSH SIGNATURE-----") {
        let first: String = text.lines().next().unwrap_or("").chars().take(40).collect();
        return Status::refused(
            "malformed signature",
            format!("not an SSH or OpenPGP signature block (starts {first:?})"),
        );
    }
    let parsed = match SshSig::from_pem(text) {
        Ok(s) => s,
        Err(e) => {
            return Status::refused(
                "malformed signature",
                format!("the SSH signature block cannot be read: {e}"),
            )
        }
    };
    let key = PublicKey::from(parsed.public_key().clone());
    let fp = key.fingerprint(HashAlg::Sha256).to_string();
    if parsed.namespace() != NAMESPACE {
        return Status::refused(
            "bad signature",
            format!(
                "made in namespace {:?}, not {NAMESPACE:?}, by key {fp}",
                parsed.namespace()
            ),
        );
    }
    let listed: Vec<&Signer> = signers
        .iter()
        .filter(|s| !s.cert_authority && s.key.key_data() == parsed.public_key())
        .collect();
    if listed.is_empty() {
        return Status::refused(
            "unknown key",
            format!("key {fp} is not in .local/allowed_signers"),
        );
    }
    if let Err(e) = key.verify(NAMESPACE, data, &parsed) {
        return Status::refused(
            "bad signature",
            format!("the signature by key {fp} does not match this commit ({e})"),
        );
    }
    // The first line that accepts it wins; else the first line's reason.
    let mut first_reason = None;
    for s in listed {
        let reason = if !s.allows_namespace(NAMESPACE) {
            Some((
                "key not allowed for this namespace",
                format!(
                    "{} (line {}) may sign only namespaces=\"{}\", not {NAMESPACE:?}",
                    s.principals,
                    s.line,
                    s.namespaces.as_deref().unwrap_or_default().join(",")
                ),
            ))
        } else if let Some(t) = s.valid_before.filter(|t| now >= *t || when >= *t) {
            Some((
                "expired",
                format!(
                    "{} (line {}) is valid before {}Z only",
                    s.principals,
                    s.line,
                    super::allowed::format_time(t)
                ),
            ))
        } else {
            s.valid_after.filter(|t| now < *t || when < *t).map(|t| {
                (
                    "not yet valid",
                    format!(
                        "{} (line {}) is valid after {}Z only",
                        s.principals,
                        s.line,
                        super::allowed::format_time(t)
                    ),
                )
            })
        };
        match reason {
            None => {
                return Status::Good {
                    principal: s.principals.clone(),
                    fingerprint: fp,
                }
            }
            Some(r) => {
                first_reason.get_or_insert(r);
            }
        }
    }
    match first_reason {
        Some((kind, detail)) => Status::refused(kind, detail),
        None => Status::refused(
            "unknown key",
            format!("key {fp} is not in .local/allowed_signers"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(ns: Option<&str>, before: Option<i64>) -> Vec<Signer> {
        let key =
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHJ4bm9kZS10ZXN0LWtleS0wMDAwMDAwMDAwMDAwMDAw";
        let mut s = super::super::allowed::parse_line(1, &format!("a@b {key}")).unwrap();
        s.namespaces = ns.map(|n| vec![n.to_owned()]);
        s.valid_before = before;
        vec![s]
    }

    #[test]
    fn odd_blocks_are_refused_by_kind() {
        let s = signer(None, None);
        let kind = |sig: &[u8]| match check_block(sig, b"data", &s, 0, 0) {
            Status::Refused { kind, .. } => kind,
            other => panic!("{other:?}"),
        };
        assert_eq!(kind(&[0xff, 0xfe]), "malformed signature");
        assert_eq!(kind(b"hello"), "malformed signature");
        assert_eq!(
            kind(b"-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n"),
            "malformed signature"
        );
        assert_eq!(
            kind(&vec![b'A'; MAX_SIGNATURE_BYTES + 1]),
            "malformed signature"
        );
        assert_eq!(
            check_block(
                b"-----BEGIN PGP SIGNATURE-----\n\n-----END PGP SIGNATURE-----",
                b"",
                &s,
                0,
                0
            ),
            Status::OpenPgp
        );
    }

    #[test]
    fn the_rule_applies_by_risk() {
        use rxnode_interlock::{RequireSignature as R, RiskLevel as L};
        let c = |status| Checked {
            commit: "c".repeat(40),
            status,
        };
        let unsigned = c(Status::Unsigned);
        assert!(unsigned.refusal(R::None, L::Red).is_none());
        assert!(unsigned.refusal(R::Red, L::Green).is_none());
        assert!(unsigned
            .refusal(R::Red, L::Red)
            .unwrap()
            .contains("is unsigned"));
        assert!(unsigned.refusal(R::All, L::Green).is_some());
        assert!(c(Status::OpenPgp).refusal(R::All, L::Green).is_some());
        let good = c(Status::Good {
            principal: "a".into(),
            fingerprint: "SHA256:x".into(),
        });
        assert!(good.refusal(R::All, L::Red).is_none());
        assert!(good
            .line()
            .starts_with("Signed: good signature by a (SHA256:x) on commit "));
    }
}
