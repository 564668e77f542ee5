//! Record MACs: an approval or authorization counts only if this node made it.
//!
//! Every approval and authorization record the node stores (in its state and
//! its ledger) carries an HMAC-SHA256 under the node's own secret key, which
//! the caller reads from outside the work tree and passes in (no I/O here).
//! The MAC binds the record's kind, task ID, approved text SHA-256, commit and
//! time, each length-prefixed, so no field can be moved into another and no
//! record of one kind, task or text verifies as another. A record copied from
//! another checkout (another key), planted by the branch (no key) or written
//! by an older rxnode (no MAC) does not verify (`docs/safety.md#node-signed-approvals`).
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes in a node key.
pub const NODE_KEY_LEN: usize = 32;

/// Which record a MAC is for; part of the signed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The operator's `[A] Approve` (state approval, ledger `approved` line).
    Approval,
    /// `AUTHORIZE RF TX` (ledger `authorized` line).
    AuthorizeRfTx,
    /// `AUTHORIZE <TASK_ID>` (ledger `authorized` line).
    AuthorizeRedOther,
    /// A verified `AUTHORIZE RF TX` handed to the TX guard process as a
    /// single-use grant ([`crate::TxGrant`]); never stored.
    TxGrant,
}

impl RecordKind {
    fn tag(self) -> &'static str {
        match self {
            RecordKind::Approval => "approval",
            RecordKind::AuthorizeRfTx => "authorization:RF_TX",
            RecordKind::AuthorizeRedOther => "authorization:RED_OTHER",
            RecordKind::TxGrant => "grant:RF_TX",
        }
    }
}

/// The fields a record MAC binds.
#[derive(Debug, Clone, Copy)]
pub struct RecordFields<'a> {
    /// What the record is.
    pub kind: RecordKind,
    /// The task.
    pub task_id: &'a str,
    /// SHA-256 of the approved text.
    pub task_sha256: &'a str,
    /// The commit that held it.
    pub commit: &'a str,
    /// When (as stored).
    pub at: &'a str,
}

fn keyed(key: &[u8], f: &RecordFields<'_>) -> Option<Hmac<Sha256>> {
    if key.len() != NODE_KEY_LEN {
        return None;
    }
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    m.update(b"rxnode-record-mac-v1");
    for part in [f.kind.tag(), f.task_id, f.task_sha256, f.commit, f.at] {
        m.update(&(part.len() as u64).to_be_bytes());
        m.update(part.as_bytes());
    }
    Some(m)
}

/// The MAC (lowercase hex) of a record under `key`; `None` when the key is
/// not [`NODE_KEY_LEN`] bytes.
pub fn record_mac(key: &[u8], fields: &RecordFields<'_>) -> Option<String> {
    Some(hex::encode(keyed(key, fields)?.finalize().into_bytes()))
}

/// Whether `mac` (hex) is this record's MAC under `key`, compared in constant
/// time. A wrong-length key, a malformed MAC or any changed field is `false`.
pub fn verify_record_mac(key: &[u8], fields: &RecordFields<'_>, mac: &str) -> bool {
    let Ok(tag) = hex::decode(mac) else {
        return false;
    };
    match keyed(key, fields) {
        Some(m) => m.verify_slice(&tag).is_ok(),
        None => false,
    }
}

/// The MAC (lowercase hex) of a node-owned file's content under `key`: the
/// file's `kind` (its role, e.g. `node-name`, so a file never verifies in
/// another's place) and its bytes, each length-prefixed. `None` when the key is
/// not [`NODE_KEY_LEN`] bytes (`docs/safety.md#node-sealed-files`).
pub fn file_mac(key: &[u8], kind: &str, body: &[u8]) -> Option<String> {
    Some(hex::encode(
        file_keyed(key, kind, body)?.finalize().into_bytes(),
    ))
}

/// Whether `mac` (hex) is the MAC of this file content under `key`, compared in
/// constant time. A wrong-length key, a malformed MAC, another kind or any
/// changed byte is `false`.
pub fn verify_file_mac(key: &[u8], kind: &str, body: &[u8], mac: &str) -> bool {
    let Ok(tag) = hex::decode(mac) else {
        return false;
    };
    match file_keyed(key, kind, body) {
        Some(m) => m.verify_slice(&tag).is_ok(),
        None => false,
    }
}

fn file_keyed(key: &[u8], kind: &str, body: &[u8]) -> Option<Hmac<Sha256>> {
    if key.len() != NODE_KEY_LEN {
        return None;
    }
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    m.update(b"rxnode-file-mac-v1");
    for part in [kind.as_bytes(), body] {
        m.update(&(part.len() as u64).to_be_bytes());
        m.update(part);
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: [u8; 32] = [7; 32];

    fn f<'a>(id: &'a str, sha: &'a str) -> RecordFields<'a> {
        RecordFields {
            kind: RecordKind::Approval,
            task_id: id,
            task_sha256: sha,
            commit: "c",
            at: "t",
        }
    }

    #[test]
    fn a_mac_verifies_only_its_own_record_under_its_own_key() {
        let mac = record_mac(&K, &f("T1", "aa")).unwrap();
        assert!(verify_record_mac(&K, &f("T1", "aa"), &mac));
        // Another key (another checkout's .local/).
        assert!(!verify_record_mac(&[8; 32], &f("T1", "aa"), &mac));
        // Another task, text, commit, time or kind.
        assert!(!verify_record_mac(&K, &f("T2", "aa"), &mac));
        assert!(!verify_record_mac(&K, &f("T1", "ab"), &mac));
        let mut g = f("T1", "aa");
        g.commit = "d";
        assert!(!verify_record_mac(&K, &g, &mac));
        let mut g = f("T1", "aa");
        g.at = "u";
        assert!(!verify_record_mac(&K, &g, &mac));
        let mut g = f("T1", "aa");
        g.kind = RecordKind::AuthorizeRfTx;
        assert!(!verify_record_mac(&K, &g, &mac));
        // A field boundary moved ("T1"+"aa" vs "T1a"+"a").
        assert!(!verify_record_mac(&K, &f("T1a", "a"), &mac));
        // Malformed or truncated MACs, a short key.
        assert!(!verify_record_mac(&K, &f("T1", "aa"), ""));
        assert!(!verify_record_mac(&K, &f("T1", "aa"), "zz"));
        assert!(!verify_record_mac(&K, &f("T1", "aa"), &mac[..62]));
        assert!(!verify_record_mac(&K[..16], &f("T1", "aa"), &mac));
        assert_eq!(record_mac(&K[..16], &f("T1", "aa")), None);
        assert_eq!(mac.len(), 64);
    }

    #[test]
    fn a_file_mac_verifies_only_its_own_bytes_and_kind_under_its_own_key() {
        let mac = file_mac(&K, "node-name", b"{}").unwrap();
        assert!(verify_file_mac(&K, "node-name", b"{}", &mac));
        assert!(!verify_file_mac(&[8; 32], "node-name", b"{}", &mac));
        assert!(!verify_file_mac(&K, "calibration", b"{}", &mac));
        assert!(!verify_file_mac(&K, "node-name", b"{ }", &mac));
        assert!(!verify_file_mac(&K, "node-name", b"{}", ""));
        assert!(!verify_file_mac(&K, "node-nam", b"e{}", &mac));
        assert_eq!(file_mac(&K[..16], "node-name", b"{}"), None);
    }
}
