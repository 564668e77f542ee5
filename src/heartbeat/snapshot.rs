//! What `STATUS.json` says (docs/protocol.md#node-status): built from the node's
//! local files, every free text made one safe line, the whole checked by the
//! publication scanner and kept within [`MAX_STATUS_BYTES`] by trimming lists.
use crate::git::scan;
use crate::store::paths::Paths;
use crate::store::state::{State, TaskStatus};
use anyhow::{anyhow, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};

/// The largest `STATUS.json` published (4 KiB); lists are trimmed to fit.
pub(crate) const MAX_STATUS_BYTES: usize = 4096;
/// `STATUS.json`'s own version.
pub(crate) const STATUS_SCHEMA: u32 = 1;
/// The file name on the status branch.
pub(crate) const STATUS_FILE: &str = "STATUS.json";
/// Refusals carried at most.
pub(crate) const MAX_REFUSALS: usize = 10;
/// Pending tasks listed at most (the count is always whole).
const MAX_PENDING_LISTED: usize = 10;
/// Longest one-line text (a title, a reason, a poll result), in characters.
const MAX_TEXT: usize = 120;
/// How much of the ledger's end is read for refusals made by `rxnode run`.
const LEDGER_TAIL_BYTES: u64 = 64 * 1024;

/// `STATUS.json`, what a node publishes on its status branch at every heartbeat
/// (docs/protocol.md#node-status); at most 4096 bytes, every text one safe line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct NodeStatus {
    /// This file's version, [`STATUS_SCHEMA`]; the main PC reads no other.
    #[schemars(extend("const" = STATUS_SCHEMA), description = "This file's version: 1.")]
    pub(crate) schema_version: u32,
    /// The node's name (`rxnode node set-name`).
    pub(crate) node: String,
    /// This build's version.
    pub(crate) rxnode_version: String,
    /// When this status was made (ISO 8601 UTC, milliseconds).
    pub(crate) time: String,
    /// The heartbeat interval the node promised (seconds).
    pub(crate) publish_every_s: f64,
    /// `running`, `held` (`.local/STOP`), `failing` (the last poll failed) or `stopped`.
    pub(crate) watcher: String,
    /// The last poll.
    pub(crate) last_poll: Option<Poll>,
    /// The queue.
    pub(crate) queue: Queue,
    /// The newest refusals, newest first (at most 10).
    pub(crate) refusals: Vec<Refusal>,
    /// The radios' health.
    pub(crate) radios: Vec<Radio>,
    /// The last frequency calibration of each radio (`rxnode clkin calibrate`,
    /// the `freq_cal` step).
    #[serde(default)]
    pub(crate) calibration: Vec<Calibration>,
    /// What was left out to stay within 4 KiB (list name → entries dropped).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) trimmed: std::collections::BTreeMap<String, usize>,
}

/// The last poll: when and its one-line result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Poll {
    /// ISO 8601.
    pub(crate) at: String,
    /// One line ("nothing new", "fetch failed: …").
    pub(crate) result: String,
    /// Whether it succeeded.
    pub(crate) ok: bool,
}

/// Queue counts, the pending tasks and the running task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Queue {
    /// Tasks waiting for the operator's `[A]`/`[D]`.
    pub(crate) pending_approval: usize,
    /// Deferred (`[D]`).
    pub(crate) deferred: usize,
    /// Approved, not yet run to completion.
    pub(crate) approved: usize,
    /// The pending tasks, in prompt order (at most 10; the count above is whole).
    pub(crate) pending: Vec<Pending>,
    /// The task `rxnode run` is executing, and its step.
    pub(crate) running: Option<Running>,
}

/// A task waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Pending {
    /// Its ID.
    pub(crate) task_id: String,
    /// Its title (one safe line).
    pub(crate) title: Option<String>,
    /// Its risk level.
    pub(crate) risk_level: Option<String>,
}

/// The running task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Running {
    /// Its ID.
    pub(crate) task_id: String,
    /// The step being executed (1-based).
    pub(crate) step: usize,
    /// Steps in the plan.
    pub(crate) steps: usize,
    /// The step's operation (`rx_capture`, …).
    pub(crate) op: String,
}

/// A refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Refusal {
    /// The task, when its ID could be read.
    pub(crate) task_id: Option<String>,
    /// When (ISO 8601).
    pub(crate) at: String,
    /// Why, one line.
    pub(crate) reason: String,
}

/// A radio's health.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Radio {
    /// The radio's identity (driver and serial).
    pub(crate) device: String,
    /// `GOOD`, `BAD` or `UNTESTED`.
    pub(crate) health: String,
    /// When it was last self-tested.
    pub(crate) last_self_test: Option<String>,
    /// Why it is `BAD`, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// A radio's last frequency calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Calibration {
    /// The radio (`driver=…,serial=…`).
    pub(crate) device: String,
    /// Its frequency error, ppm (> 0: its clock runs fast); null with `problem`.
    pub(crate) ppm: Option<f64>,
    /// One-sigma uncertainty, ppm.
    pub(crate) uncertainty_ppm: Option<f64>,
    /// `gsm`, `lte`, …
    pub(crate) method: Option<String>,
    /// When it was measured.
    pub(crate) time: Option<String>,
    /// Why no measurement can be told (the calibration file cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) problem: Option<String>,
}

/// The JSON Schema of `STATUS.json` (`rxnode schema status`).
pub(crate) fn schema() -> serde_json::Value {
    let mut s = schemars::schema_for!(NodeStatus).to_value();
    if let Some(o) = s.as_object_mut() {
        o.insert("title".into(), "rxnode node status STATUS.json".into());
    }
    s
}

/// Now, ISO 8601 UTC with milliseconds (a heartbeat's age matters below a second
/// when the interval is short).
pub(crate) fn now_ms() -> String {
    let now = time::OffsetDateTime::now_utc();
    let fmt = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+00:00"
    );
    now.format(&fmt)
        .unwrap_or_else(|_| now.unix_timestamp().to_string())
}

/// One safe line of at most [`MAX_TEXT`] characters: control and format
/// characters become spaces, runs of 13 or more hex digits (commit IDs, hashes)
/// are cut to 12, and a text the publication scanner flags (a path, a secret)
/// is replaced by `[redacted: <what it looked like>]`.
pub(crate) fn safe_line(s: &str) -> String {
    let mut one = String::with_capacity(s.len().min(4 * MAX_TEXT));
    let mut hex_run = 0usize;
    for c in s.chars() {
        let c = if c.is_control() || rxnode_interlock::is_format_char(c) {
            ' '
        } else {
            c
        };
        if c.is_ascii_hexdigit() {
            hex_run += 1;
            if hex_run == 13 {
                one.push('…');
            }
            if hex_run > 12 {
                continue;
            }
        } else {
            hex_run = 0;
        }
        one.push(c);
    }
    let mut out: String = one.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.chars().count() > MAX_TEXT {
        out = out.chars().take(MAX_TEXT - 1).collect();
        out.push('…');
    }
    match scan::scan_text(&out, &Default::default()).first() {
        Some(f) => format!("[redacted: {}]", f.kind),
        None => out,
    }
}

/// The inputs a status is made of, read from `.local/` without changing anything.
pub(crate) struct Inputs {
    /// The node's name.
    pub(crate) node: String,
    /// The heartbeat interval.
    pub(crate) every_s: f64,
    /// The watcher's state word.
    pub(crate) watcher: &'static str,
    /// The radios the policy self-tests (`health.radios`).
    pub(crate) policy_radios: Vec<String>,
}

/// Build the status of the node at `paths`. The state file is read as it is,
/// for display only: a status never decides anything, and an unreadable state
/// is said (`last_poll`), never repaired here (the watcher's own state access
/// checks the trust root and keeps a corrupt file aside).
pub(crate) fn build(paths: &Paths, inp: &Inputs) -> NodeStatus {
    let st = read_state(paths);
    let (state, state_error) = match st {
        Ok(s) => (s, None),
        Err(e) => (State::default(), Some(e)),
    };
    let watcher = if inp.watcher == "running" && paths.is_held() {
        "held"
    } else if inp.watcher == "running" && state.last_poll.as_ref().is_some_and(|p| !p.ok) {
        "failing"
    } else {
        inp.watcher
    };
    let last_poll = match (&state_error, &state.last_poll) {
        (Some(e), _) => Some(Poll {
            at: now_ms(),
            result: safe_line(&format!("state unreadable: {e}")),
            ok: false,
        }),
        (None, Some(p)) => Some(Poll {
            at: p.at.clone(),
            result: safe_line(&p.result),
            ok: p.ok,
        }),
        (None, None) => None,
    };
    NodeStatus {
        schema_version: STATUS_SCHEMA,
        node: inp.node.clone(),
        rxnode_version: env!("CARGO_PKG_VERSION").to_owned(),
        time: now_ms(),
        publish_every_s: inp.every_s,
        watcher: watcher.to_owned(),
        last_poll,
        queue: queue(paths, &state),
        refusals: refusals(paths, &state),
        radios: radios(paths, &inp.policy_radios),
        calibration: calibration(paths),
        trimmed: Default::default(),
    }
}

/// The state file as it is on disk (display only; see [`build`]).
fn read_state(paths: &Paths) -> Result<State, String> {
    match crate::store::fsutil::read(paths.state()) {
        Ok(b) => {
            serde_json::from_slice(&b).map_err(|e| format!("the state file does not parse ({e})"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(format!("cannot read the state file ({})", e.kind())),
    }
}

fn queue(paths: &Paths, st: &State) -> Queue {
    let pending_ids = crate::store::queue::pending_in_order(st);
    Queue {
        pending_approval: pending_ids.len(),
        deferred: st.ids_with(TaskStatus::Deferred).len(),
        approved: st.ids_with(TaskStatus::Approved).len(),
        pending: pending_ids
            .iter()
            .take(MAX_PENDING_LISTED)
            .map(|id| {
                let r = st.tasks.get(id);
                Pending {
                    task_id: safe_line(id),
                    title: r.and_then(|r| r.title.as_deref()).map(safe_line),
                    risk_level: r.and_then(|r| r.risk_level.as_deref()).map(safe_line),
                }
            })
            .collect(),
        running: crate::store::progress::running(paths).map(|p| Running {
            task_id: safe_line(&p.task_id),
            step: p.step,
            steps: p.steps,
            op: safe_line(&p.op),
        }),
    }
}

/// The newest refusals: task texts the watcher refused (state) and runs that
/// were refused (the end of the ledger), newest first.
fn refusals(paths: &Paths, st: &State) -> Vec<Refusal> {
    let mut all: Vec<Refusal> = Vec::new();
    for (id, r) in &st.tasks {
        if r.status == TaskStatus::Rejected {
            all.push(Refusal {
                task_id: Some(id.clone()),
                at: r.first_seen.clone(),
                reason: r.reason.clone().unwrap_or_else(|| "refused".to_owned()),
            });
        }
    }
    for r in st.rejected_texts.values() {
        all.push(Refusal {
            task_id: r.task_id.clone(),
            at: r.at.clone(),
            reason: r.reason.clone(),
        });
    }
    all.extend(ledger_refusals(paths));
    // ISO 8601 with the same offset sorts as text; newest first.
    all.sort_by(|a, b| b.at.cmp(&a.at));
    all.dedup_by(|a, b| a.task_id == b.task_id && a.reason == b.reason);
    all.truncate(MAX_REFUSALS);
    for r in &mut all {
        r.task_id = r.task_id.as_deref().map(safe_line);
        r.reason = safe_line(&r.reason);
    }
    all
}

/// `refused` lines at the end of the ledger (a run, a capture, a sweep refused).
fn ledger_refusals(paths: &Paths) -> Vec<Refusal> {
    let Ok(mut f) = crate::store::fsutil::open(paths.ledger()) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(LEDGER_TAIL_BYTES);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut buf = Vec::new();
    if f.take(LEDGER_TAIL_BYTES).read_to_end(&mut buf).is_err() {
        return Vec::new();
    }
    // The first line may be cut by the seek: skip it unless the tail is the whole file.
    let lines = buf.split(|b| *b == b'\n').skip(usize::from(start > 0));
    lines
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "refused" && v["detail"]["command"].is_string())
        .map(|v| Refusal {
            task_id: v["task_id"].as_str().map(str::to_owned),
            at: v["at"].as_str().unwrap_or_default().to_owned(),
            reason: format!(
                "{}: {}",
                v["detail"]["command"].as_str().unwrap_or("run"),
                v["detail"]["reason"].as_str().unwrap_or("refused")
            ),
        })
        .collect()
}

/// The radios' health as this node's radio health store records it
/// (`.local/rxnode-health.json`), and every radio the policy self-tests that has
/// no record yet as `UNTESTED`. A health file that cannot be read is said as
/// one entry, never guessed around.
fn radios(paths: &Paths, policy_radios: &[String]) -> Vec<Radio> {
    use crate::store::health;
    let mut out: Vec<Radio> = Vec::new();
    let known = match health::read_all(paths) {
        Ok(all) => all,
        Err(e) => {
            return vec![Radio {
                device: "(radio health file)".to_owned(),
                health: "UNTESTED".to_owned(),
                last_self_test: None,
                reason: Some(safe_line(&format!("unreadable: {e:#}"))),
            }]
        }
    };
    for r in &known {
        out.push(Radio {
            device: safe_identity(&r.identity),
            health: r.health.as_str().to_owned(),
            last_self_test: r.last_self_test.as_ref().map(|t| t.at.clone()),
            reason: (r.health == health::Health::Bad).then(|| safe_line(&r.reason)),
        });
    }
    for args in policy_radios {
        let id = health::identity(args);
        if !known.iter().any(|r| r.identity == id) {
            out.push(Radio {
                device: safe_identity(&id),
                health: "UNTESTED".to_owned(),
                last_self_test: None,
                reason: None,
            });
        }
    }
    out
}

/// The newest calibration of each radio the node's calibration file keeps
/// (`.local/calibration.json`); an unreadable file is said as one entry's method.
fn calibration(paths: &Paths) -> Vec<Calibration> {
    match crate::store::calibration::load(paths) {
        Ok(f) => f
            .radios
            .iter()
            .map(|(id, r)| Calibration {
                device: safe_identity(id),
                ppm: Some(r.latest.ppm).filter(|v| v.is_finite()),
                uncertainty_ppm: Some(r.latest.uncertainty_ppm).filter(|v| v.is_finite()),
                method: Some(safe_line(&r.latest.method)),
                time: Some(safe_line(&r.latest.time)),
                problem: None,
            })
            .collect(),
        Err(e) => vec![Calibration {
            device: "(calibration file)".to_owned(),
            ppm: None,
            uncertainty_ppm: None,
            method: None,
            time: None,
            problem: Some(safe_line(&format!("unreadable: {e:#}"))),
        }],
    }
}

/// A radio identity as one safe line: a hex run longer than 12 digits (a
/// HackRF serial) keeps its last 12, which tell radios apart.
pub(crate) fn safe_identity(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_hexdigit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_hexdigit() {
                i += 1;
            }
            let run = &chars[start..i];
            if run.len() > 12 {
                out.push('…');
                out.extend(&run[run.len() - 12..]);
            } else {
                out.extend(run);
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    safe_line(&out)
}

impl NodeStatus {
    /// The status without what changes at every heartbeat (its time, the last
    /// poll's time): two statuses with the same key say the same thing.
    pub(crate) fn key(&self) -> String {
        let mut k = self.clone();
        k.time = String::new();
        if let Some(p) = &mut k.last_poll {
            p.at = String::new();
        }
        serde_json::to_string(&k).unwrap_or_default()
    }

    /// `STATUS.json`'s bytes: at most [`MAX_STATUS_BYTES`], lists trimmed
    /// (oldest refusals, last pending tasks, radios) until it fits, and the
    /// whole text passed by the publication scanner. A text the scanner flags
    /// is refused (never published), naming what it found.
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut s = self.clone();
        let mut bytes = render(&s)?;
        while bytes.len() > MAX_STATUS_BYTES {
            let dropped = if !s.queue.pending.is_empty() {
                s.queue.pending.pop();
                "pending"
            } else if !s.refusals.is_empty() {
                s.refusals.pop();
                "refusals"
            } else if !s.calibration.is_empty() {
                s.calibration.pop();
                "calibration"
            } else if !s.radios.is_empty() {
                s.radios.pop();
                "radios"
            } else {
                return Err(anyhow!(
                    "STATUS.json is {} bytes with every list empty; at most {MAX_STATUS_BYTES}",
                    bytes.len()
                ));
            };
            *s.trimmed.entry(dropped.to_owned()).or_insert(0) += 1;
            bytes = render(&s)?;
        }
        let text = scan::check_bytes(STATUS_FILE, &bytes).map_err(|e| anyhow!(e))?;
        if let Some(f) = scan::scan_text(&text, &Default::default()).first() {
            return Err(crate::exit::refused(format!(
                "{STATUS_FILE} not published: {f} (docs/safety.md#node-status)"
            )));
        }
        Ok(bytes)
    }
}

fn render(s: &NodeStatus) -> Result<Vec<u8>> {
    let mut b = serde_json::to_vec_pretty(s)?;
    b.push(b'\n');
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> NodeStatus {
        NodeStatus {
            schema_version: STATUS_SCHEMA,
            node: "LAB-RX1".into(),
            rxnode_version: "0.0.0".into(),
            time: now_ms(),
            publish_every_s: 300.0,
            watcher: "running".into(),
            last_poll: None,
            queue: Queue::default(),
            refusals: Vec::new(),
            radios: Vec::new(),
            calibration: Vec::new(),
            trimmed: Default::default(),
        }
    }

    #[test]
    fn free_text_becomes_one_safe_line() {
        assert_eq!(safe_line("a\nb\t\u{1b}[31mc\u{202e}d"), "a b [31mc d");
        assert_eq!(
            safe_line("examined 0123456789abcdef0123456789abcdef01234567; 1 new"),
            "examined 0123456789ab…; 1 new"
        );
        assert_eq!(
            safe_line("Calibrate with /home/alice/ref.cfg"),
            "[redacted: absolute local path]"
        );
        assert_eq!(
            safe_line("token ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "[redacted: GitHub token]"
        );
        assert_eq!(safe_line(&"x".repeat(500)).chars().count(), MAX_TEXT);
        assert_eq!(
            safe_identity("driver=hackrf,serial=0000000000000000a06063c8234e6fcf"),
            "driver=hackrf,serial=…63c8234e6fcf"
        );
    }

    /// However many refusals and pending tasks, STATUS.json stays within 4 KiB
    /// and says what it left out.
    #[test]
    fn a_status_is_trimmed_to_four_kib_never_refused_for_its_size() {
        let mut s = status();
        for i in 0..10 {
            s.refusals.push(Refusal {
                task_id: Some(format!("TASK_{i:03}")),
                at: now_ms(),
                reason: "x".repeat(MAX_TEXT),
            });
        }
        for i in 0..10 {
            s.queue.pending.push(Pending {
                task_id: format!("PENDING_{i:03}"),
                title: Some("y".repeat(MAX_TEXT)),
                risk_level: Some("YELLOW".into()),
            });
        }
        s.queue.pending_approval = 25;
        let b = s.to_bytes().unwrap();
        assert!(b.len() <= MAX_STATUS_BYTES, "{}", b.len());
        let back: NodeStatus = serde_json::from_slice(&b).unwrap();
        assert!(back.trimmed.values().sum::<usize>() > 0, "{back:?}");
        assert_eq!(back.queue.pending_approval, 25);
        assert_eq!(
            back.queue.pending.len() + back.trimmed.get("pending").copied().unwrap_or(0),
            10
        );
    }

    /// A status carrying a path or a secret is never published, even if a
    /// field escaped [`safe_line`].
    #[test]
    fn the_scanner_refuses_a_status_with_a_path_or_a_secret() {
        let mut s = status();
        s.watcher = "/home/alice/.ssh/id_rsa".into();
        let e = s.to_bytes().unwrap_err();
        assert!(e.to_string().contains("absolute local path"), "{e}");
        let mut s = status();
        s.node = "AKIAABCDEFGHIJKLMNOP".into();
        assert!(s.to_bytes().is_err());
        assert!(status().to_bytes().is_ok());
    }

    #[test]
    fn the_key_ignores_the_time_only() {
        let a = status();
        let mut b = a.clone();
        b.time = "2000-01-01T00:00:00.000+00:00".into();
        assert_eq!(a.key(), b.key());
        b.queue.pending_approval = 1;
        assert_ne!(a.key(), b.key());
    }
}
