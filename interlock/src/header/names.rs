//! The names a header carries that become paths and identities: the task ID
//! (a path component on every OS) and node names (`TARGET_NODES`).
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A validated task identifier: `[A-Za-z0-9_-]{1,64}`, not starting with `-`.
///
/// Safe to use as a path component (no separators, no dots, no spaces).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// Check and wrap a task ID.
    pub fn parse(s: &str) -> Result<TaskId, Error> {
        // A leading `-` would read as an option to every program the ID is
        // passed to (`git`, `rm`, scripts on the main PC).
        let ok = !s.is_empty()
            && !s.starts_with('-')
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok {
            return Err(Error::InvalidTaskId(s.to_owned()));
        }
        if let Some(name) = windows_reserved(s) {
            return Err(Error::ReservedTaskId {
                id: s.to_owned(),
                name: name.to_owned(),
            });
        }
        Ok(TaskId(s.to_owned()))
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The reserved Windows device name `s` would open instead of a file (an RX
/// laptop on Windows keeps `.local/rx_agent_outbox/<TASK_ID>/` and
/// `.local/rx_iq/<TASK_ID>/`): `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`,
/// `LPT0`–`LPT9`, in any letter case. Windows takes the part before the first
/// `.` and ignores trailing dots and spaces, so `NUL.txt` and `con ` name the
/// device too; the ID pattern already refuses `.` and spaces, and the rule is
/// applied to the stem anyway.
pub(super) fn windows_reserved(s: &str) -> Option<&'static str> {
    let stem = s
        .split('.')
        .next()
        .unwrap_or(s)
        .trim_end_matches([' ', '.']);
    const NAMES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    if let Some(n) = NAMES.iter().find(|n| stem.eq_ignore_ascii_case(n)) {
        return Some(n);
    }
    const NUMBERED: [&str; 20] = [
        "COM0", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT0",
        "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];
    NUMBERED
        .iter()
        .find(|n| stem.eq_ignore_ascii_case(n))
        .copied()
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        TaskId::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TaskId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Whether two different task IDs or node names would name one folder on a
/// case-insensitive file system (Windows, macOS; a checkout may be moved to
/// one): equal but for ASCII letter case. Both are ASCII by their rules, so
/// no Unicode case folding or normalisation can join two others.
pub fn same_folder(a: &str, b: &str) -> bool {
    a != b && a.eq_ignore_ascii_case(b)
}

/// The groups of two or more different `names` that [`same_folder`] joins, each
/// sorted, in the order of their lower-case form.
pub fn same_folder_groups<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Vec<&'a str>> {
    let mut groups: std::collections::BTreeMap<String, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for n in names {
        groups.entry(n.to_ascii_lowercase()).or_default().insert(n);
    }
    groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| g.into_iter().collect())
        .collect()
}

/// The longest node name.
pub const MAX_NODE_NAME_LEN: usize = 32;

/// Check a node name (`rxnode node set-name`, `TARGET_NODES`): 1 to 32 of
/// `A-Z a-z 0-9 _ -`, never a Windows device name (`CON`, `NUL`, `COM1`, …, any
/// letter case); the error names the value.
pub fn check_node_name(name: &str) -> Result<(), String> {
    let shown: String = name.chars().take(40).collect();
    if name.is_empty() {
        return Err("node name is empty; use 1 to 32 of A-Z a-z 0-9 _ -".into());
    }
    if name.chars().count() > MAX_NODE_NAME_LEN {
        return Err(format!(
            "node name {shown:?}… is {} characters; at most {MAX_NODE_NAME_LEN}",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(format!(
            "node name {shown:?} contains {c:?}; only A-Z a-z 0-9 _ - are allowed"
        ));
    }
    if let Some(dev) = windows_reserved(name) {
        return Err(format!(
            "node name {shown:?} is the Windows device name {dev}: on Windows its folder \
             rx-results/<TASK_ID>/{name}/ and its branches rx-results/{name}, rx-status/{name} \
             would open the device, not a file; choose another name"
        ));
    }
    Ok(())
}
