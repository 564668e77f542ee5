//! The top-level fields of a result: keys, header, approval, authorization,
//! node, timeline, checks and the overall status, captures, the rest.
use super::capture::check_capture;
use super::{is_hex, kind, OPTIONAL_TOP_KEYS, TOP_KEYS, V};
use crate::result::model::{overall_status, Check, Status, SCHEMA_VERSION};
use rxnode_interlock::{RiskLevel, TaskId};
use serde_json::Value;
use std::path::Path;

/// Every top-level field of a result, in the order a reader meets them.
pub(super) fn check_schema(r: &Value, checkout: &Path, v: &mut V<'_>) {
    check_keys(r, v);
    let status = check_header(r, v);
    check_approval(r, v);
    check_authorization(r, v);
    check_node(r, v);
    let (started, completed) = check_timeline(r, v);
    let checks = check_checks(r, v);
    check_status(status, checks.as_deref(), started.zip(completed), v);
    check_captures(r, checks.as_ref().map(Vec::len), checkout, v);
    check_rest(r, v);
    check_tone(r, checks.as_deref(), v);
    check_interrupted(r, status, v);
    check_pictures(r, v);
}

/// `pictures` (optional): the typed summary, within its bound
/// (docs/protocol.md#pictures).
fn check_pictures(r: &Value, v: &mut V<'_>) {
    let Some(p) = r.get("pictures") else {
        return;
    };
    match serde_json::from_value::<crate::result::pictures::Pictures>(p.clone()) {
        Ok(p) => p.problems().into_iter().for_each(|m| v.bad(m)),
        Err(e) => v.bad(format!("pictures: {e}")),
    }
}

/// `interrupted` (optional): an object naming when the run started and who found
/// it unfinished; such a result is never PASS (docs/protocol.md#interrupted-runs).
fn check_interrupted(r: &Value, status: Option<Status>, v: &mut V<'_>) {
    let Some(i) = r.get("interrupted") else {
        return;
    };
    if !i.is_object() {
        v.bad(format!("interrupted: expected an object, got {}", kind(i)));
        return;
    }
    for k in ["started_at", "found_at", "found_by"] {
        v.string(i, k, &format!("interrupted.{k}"));
    }
    if status == Some(Status::Pass) {
        v.bad("status: an interrupted run is never PASS");
    }
}

/// Only known keys, and the schema version this build reads.
fn check_keys(r: &Value, v: &mut V<'_>) {
    if let Some(o) = r.as_object() {
        for k in o.keys() {
            if !TOP_KEYS.contains(&k.as_str()) && !OPTIONAL_TOP_KEYS.contains(&k.as_str()) {
                v.bad(format!(
                    "{k}: unknown key for schema_version {SCHEMA_VERSION}"
                ));
            }
        }
    }
    match r.get("schema_version") {
        Some(Value::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION as u64) => {}
        Some(Value::Number(n)) => v.bad(format!(
            "schema_version: {n} is not supported (this build reads {SCHEMA_VERSION})"
        )),
        Some(x) => v.bad(format!(
            "schema_version: expected a number, got {}",
            kind(x)
        )),
        None => v.bad("schema_version: missing"),
    }
}

/// Task, title, status (returned), risk level, branch, commit and head.
fn check_header(r: &Value, v: &mut V<'_>) -> Option<Status> {
    if let Some(id) = v.string(r, "task_id", "task_id") {
        if TaskId::parse(id).is_err() {
            v.bad(format!("task_id: {id:?} must match [A-Za-z0-9_-]{{1,64}}"));
        }
    }
    v.string(r, "task_title", "task_title");
    let status = v.status(r.get("status"), "status");
    if let Some(rl) = v.string(r, "risk_level", "risk_level") {
        if RiskLevel::parse(rl).is_none() {
            v.bad(format!("risk_level: {rl:?} is not GREEN, YELLOW or RED"));
        }
    }
    v.string(r, "source_branch", "source_branch");
    if let Some(c) = v.opt_string(r, "source_commit", "source_commit") {
        if !is_hex(c, 40) {
            v.bad(format!(
                "source_commit: {c:?} is not a full 40-hex commit SHA"
            ));
        }
    }
    if let Some(c) = v.string(r, "expected_head", "expected_head") {
        if !is_hex(c, 40) {
            v.bad(format!("expected_head: {c:?} is not 40 hex characters"));
        }
    }
    status
}

/// `approval`: null, or when and for which task text.
fn check_approval(r: &Value, v: &mut V<'_>) {
    match r.get("approval") {
        None => v.bad("approval: missing (use null)"),
        Some(Value::Null) => {}
        Some(a @ Value::Object(_)) => {
            let at = v.string(a, "at", "approval.at");
            v.time(at, "approval.at");
            if let Some(s) = v.string(a, "task_sha256", "approval.task_sha256") {
                if !is_hex(s, 64) {
                    v.bad(format!(
                        "approval.task_sha256: {s:?} is not 64 hex characters"
                    ));
                }
            }
            check_signature(a, v);
        }
        Some(x) => v.bad(format!(
            "approval: expected an object or null, got {}",
            kind(x)
        )),
    }
}

/// `approval.signature`: absent, or the commit and what its signature was.
fn check_signature(a: &Value, v: &mut V<'_>) {
    match a.get("signature") {
        None => {}
        Some(sig @ Value::Object(_)) => {
            if let Some(c) = v.string(sig, "commit", "approval.signature.commit") {
                if !is_hex(c, 40) {
                    v.bad(format!(
                        "approval.signature.commit: {c:?} is not 40 hex characters"
                    ));
                }
            }
            if let Some(k) = sig.get("key_sha256").and_then(Value::as_str) {
                if !is_hex(k, 64) {
                    v.bad(format!(
                        "approval.signature.key_sha256: {k:?} is not 64 hex characters"
                    ));
                }
            }
            if let Some(st) = v.string(sig, "status", "approval.signature.status") {
                if !SIGNATURE_STATUSES.contains(&st) {
                    v.bad(format!(
                        "approval.signature.status: {st:?} is not one of {}",
                        SIGNATURE_STATUSES.join(", ")
                    ));
                }
            }
        }
        Some(x) => v.bad(format!(
            "approval.signature: expected an object, got {}",
            kind(x)
        )),
    }
}

/// Every `approval.signature.status` rxnode writes.
pub(crate) const SIGNATURE_STATUSES: [&str; 10] = [
    "good",
    "unsigned",
    "openpgp",
    "unknown key",
    "bad signature",
    "key not allowed for this namespace",
    "expired",
    "not yet valid",
    "malformed signature",
    "history not available",
];

/// `authorization`: null, or its kind and when.
fn check_authorization(r: &Value, v: &mut V<'_>) {
    match r.get("authorization") {
        None => v.bad("authorization: missing (use null)"),
        Some(Value::Null) => {}
        Some(a @ Value::Object(_)) => {
            if let Some(k) = v.string(a, "kind", "authorization.kind") {
                if k != "RF_TX" && k != "RED_OTHER" {
                    v.bad(format!(
                        "authorization.kind: {k:?} is not RF_TX or RED_OTHER"
                    ));
                }
            }
            let at = v.string(a, "at", "authorization.at");
            v.time(at, "authorization.at");
        }
        Some(x) => v.bad(format!(
            "authorization: expected an object or null, got {}",
            kind(x)
        )),
    }
}

/// `node`: its name, host name and versions.
fn check_node(r: &Value, v: &mut V<'_>) {
    match r.get("node") {
        Some(n @ Value::Object(_)) => {
            if n.get("hostname").is_some() {
                v.opt_string(n, "hostname", "node.hostname");
            }
            if n.get("name").is_some() {
                if let Some(name) = v.opt_string(n, "name", "node.name") {
                    if let Err(e) = crate::store::node::check_name(name) {
                        v.bad(format!("node.name: {e}"));
                    }
                }
            }
            v.string(n, "rxnode_version", "node.rxnode_version");
            v.opt_string(n, "soapysdr_version", "node.soapysdr_version");
        }
        Some(x) => v.bad(format!("node: expected an object, got {}", kind(x))),
        None => v.bad("node: missing"),
    }
}

type Time = time::OffsetDateTime;

/// `timeline`: both times ISO 8601 with an offset, in order; returns them parsed.
fn check_timeline(r: &Value, v: &mut V<'_>) -> (Option<Time>, Option<Time>) {
    let mut started = None;
    let mut completed = None;
    match r.get("timeline") {
        Some(t @ Value::Object(_)) => {
            let s = v.opt_string(t, "started_at", "timeline.started_at");
            started = v.time(s, "timeline.started_at");
            let c = v.opt_string(t, "completed_at", "timeline.completed_at");
            completed = v.time(c, "timeline.completed_at");
            if let (Some(s), Some(c)) = (started, completed) {
                if c < s {
                    v.bad("timeline: completed_at is before started_at");
                }
            }
            if c.is_some() && s.is_none() {
                v.bad("timeline: completed_at without started_at");
            }
        }
        Some(x) => v.bad(format!("timeline: expected an object, got {}", kind(x))),
        None => v.bad("timeline: missing"),
    }
    (started, completed)
}

/// `checks`: each a name, a status and a detail; `None` when any is malformed.
fn check_checks(r: &Value, v: &mut V<'_>) -> Option<Vec<Check>> {
    let mut checks = Vec::new();
    let mut checks_ok = true;
    match r.get("checks") {
        Some(Value::Array(a)) => {
            for (i, c) in a.iter().enumerate() {
                let n = format!("checks[{i}]");
                if !c.is_object() {
                    v.bad(format!("{n}: expected an object, got {}", kind(c)));
                    checks_ok = false;
                    continue;
                }
                let name = v.string(c, "name", &format!("{n}.name"));
                let st = v.status(c.get("status"), &format!("{n}.status"));
                let detail = v.string(c, "detail", &format!("{n}.detail"));
                match (name, st, detail) {
                    (Some(name), Some(st), Some(d)) => checks.push(Check::new(name, st, d)),
                    _ => checks_ok = false,
                }
            }
        }
        Some(x) => {
            v.bad(format!("checks: expected an array, got {}", kind(x)));
            checks_ok = false;
        }
        None => {
            v.bad("checks: missing");
            checks_ok = false;
        }
    }
    checks_ok.then_some(checks)
}

/// The overall status agrees with the checks, and a run that ran has both times.
fn check_status(
    status: Option<Status>,
    checks: Option<&[Check]>,
    times: Option<(Time, Time)>,
    v: &mut V<'_>,
) {
    if let (Some(st), Some(checks)) = (status, checks) {
        let derived = overall_status(checks);
        if st != derived {
            v.bad(format!(
                "status: {st} disagrees with the checks, which give {derived}"
            ));
        }
    }
    if let Some(st) = status {
        let ran = matches!(st, Status::Pass | Status::Fail | Status::Partial);
        if ran && times.is_none() {
            v.bad(format!(
                "timeline: status {st} needs started_at and completed_at"
            ));
        }
    }
}

/// `captures`: at most one per check (`checks` counted when well formed), each checked.
fn check_captures(r: &Value, checks: Option<usize>, checkout: &Path, v: &mut V<'_>) {
    match r.get("captures") {
        Some(Value::Array(a)) => {
            // Each capture is one step's, and each step has a check.
            if let Some(n) = checks.filter(|n| a.len() > *n) {
                v.bad(format!(
                    "captures: {} entries but only {} checks (one capture per step)",
                    a.len(),
                    n
                ));
            }
            for (i, c) in a.iter().enumerate() {
                check_capture(c, i, checkout, v);
            }
        }
        Some(x) => v.bad(format!("captures: expected an array, got {}", kind(x))),
        None => v.bad("captures: missing (use [])"),
    }
}

/// `inventory`, `tx` and `errors`. An inventory or a `tx` record in this build's
/// shape (`{"devices": …}`; a tone's record with `state_unknown_s`, which every
/// record since the key-off was timed carries) is read as its type and a refusal
/// names the field; one in another build's shape is kept as it is.
fn check_rest(r: &Value, v: &mut V<'_>) {
    use crate::result::sections::{inventory::Devices, tone::Tone, wire::read_as};
    match r.get("inventory") {
        None => v.bad("inventory: missing (use null)"),
        Some(i) if i.get("devices").is_some() => {
            if let Err(m) = read_as::<Devices>(i) {
                v.bad(format!("inventory{m}"));
            }
        }
        Some(_) => {}
    }
    match r.get("tx") {
        None => v.bad("tx: missing (use null)"),
        Some(t @ Value::Object(o)) if o.contains_key("state_unknown_s") => {
            if let Err(m) = read_as::<Tone>(t) {
                v.bad(format!("tx{m}"));
            }
        }
        Some(Value::Null | Value::Object(_)) => {}
        Some(x) => v.bad(format!("tx: expected an object or null, got {}", kind(x))),
    }
    match r.get("errors") {
        Some(Value::Array(a)) => {
            for (i, e) in a.iter().enumerate() {
                if !e.is_string() {
                    v.bad(format!("errors[{i}]: expected a string, got {}", kind(e)));
                }
            }
        }
        Some(x) => v.bad(format!("errors: expected an array, got {}", kind(x))),
        None => v.bad("errors: missing (use [])"),
    }
    check_step_sections(r, v);
}

/// The tone's status agrees with its record, by the rule `run` applies
/// (docs/safety.md#time-on-air): a `tx_tone` check is PASS only when every
/// planned sample was sent, the stream was active at least as long as those
/// samples take, nothing cut it short and it was on air no longer than
/// its samples last plus the 0.25 s key-off grace; a tone keyed past that (by
/// `past_permit_s`, `state_unknown_s` or `on_air_s` itself) is never PASS nor
/// PARTIAL. A record in another build's shape is not read.
fn check_tone(r: &Value, checks: Option<&[Check]>, v: &mut V<'_>) {
    use crate::result::sections::tone::Tone;
    let tones: Vec<&Check> = checks
        .unwrap_or_default()
        .iter()
        .filter(|c| c.name.ends_with(": tx_tone"))
        .collect();
    let tx = r.get("tx");
    let Some(t) = tx.filter(|t| t.get("state_unknown_s").is_some()) else {
        if tx.is_some_and(Value::is_null) {
            for c in tones
                .iter()
                .filter(|c| matches!(c.status, Status::Pass | Status::Partial))
            {
                v.bad(format!(
                    "{}: {} but `tx` is null: a tone that went on air has its record",
                    c.name, c.status
                ));
            }
        }
        return;
    };
    let Ok(t) = serde_json::from_value::<Tone>(t.clone()) else {
        return; // named by the record's own check
    };
    // Only a RED task's tone, authorized with `AUTHORIZE RF TX`, is ever keyed.
    let risk = r.get("risk_level").and_then(Value::as_str);
    if risk != Some("RED") {
        v.bad(format!(
            "tx: a transmission is recorded under a task whose risk level is {}: only a RED task transmits (docs/safety.md)",
            risk.unwrap_or("missing")
        ));
    }
    let kind = r.pointer("/authorization/kind").and_then(Value::as_str);
    if kind != Some("RF_TX") {
        v.bad(format!(
            "tx: a transmission is recorded without an RF_TX authorization ({}): only `AUTHORIZE RF TX` keys a transmitter (docs/safety.md)",
            kind.map_or("authorization is null".to_owned(), |k| format!("authorization.kind is {k}"))
        ));
    }
    // The grace `run` allows after the permit's duration before it counts the
    // stream as past it; the planned samples are the duration times the rate
    // rounded down (one sample short at most), and a millisecond for rounding.
    const GRACE_S: f64 = 0.25 + 1e-3;
    let lasts_s = t.samples_planned as f64 / t.sample_rate_hz;
    let sample_s = 1.0 / t.sample_rate_hz;
    let mut past = Vec::new();
    if t.past_permit_s > 0.0 {
        past.push(format!("tx.past_permit_s is {} s", t.past_permit_s));
    }
    if let Some(u) = t.state_unknown_s {
        past.push(format!("tx.state_unknown_s is {u} s"));
    }
    if !lasts_s.is_finite() {
        past.push(format!(
            "tx.sample_rate_hz {} gives its {} samples no length to bound the time on air by",
            t.sample_rate_hz, t.samples_planned
        ));
    } else if t.on_air_s.is_nan() || t.on_air_s > lasts_s + sample_s + GRACE_S {
        past.push(format!(
            "tx.on_air_s {} s is longer than the tone's {} samples at {} S/s ({lasts_s:.3} s) plus the 0.25 s key-off grace",
            t.on_air_s, t.samples_planned, t.sample_rate_hz
        ));
    }
    let mut short = Vec::new();
    if t.samples_sent < t.samples_planned {
        short.push(format!(
            "tx.samples_sent {} of {} planned",
            t.samples_sent, t.samples_planned
        ));
    }
    // Active for less time than its samples take at the rate: the driver still
    // held the tone's end when the stream was deactivated.
    if lasts_s.is_finite() && t.on_air_s < lasts_s - 1e-9 {
        short.push(format!(
            "tx.on_air_s {} s is shorter than the {lasts_s:.3} s its {} samples take at {} S/s",
            t.on_air_s, t.samples_planned, t.sample_rate_hz
        ));
    }
    if t.cancelled {
        short.push("tx.cancelled is true".to_owned());
    }
    if let Some(by) = &t.keyed_off_by {
        short.push(format!("tx.keyed_off_by is {by:?}"));
    }
    for c in tones {
        let why = match c.status {
            Status::Pass | Status::Partial if !past.is_empty() => past.join("; "),
            Status::Pass if !short.is_empty() => short.join("; "),
            _ => continue,
        };
        v.bad(format!(
            "{}: {} although {why} (docs/safety.md#time-on-air)",
            c.name, c.status
        ));
    }
}

/// The optional step sections (`sweeps`, `clkin_compares`, `freq_cal`): arrays
/// whose every entry reads as its section's type (a refusal names the field);
/// a comparison's verdict only with a number and its uncertainty, and PASS only
/// LOCKED (docs/protocol.md#clkin_compare).
fn check_step_sections(r: &Value, v: &mut V<'_>) {
    use crate::result::sections::{compare, freq_cal, step_row::StepRow, sweep, wire::read_entry};
    for (i, e) in entries(r, "sweeps", v) {
        // Only the row of a sweep that did not run carries `detail`.
        if let Err(m) = read_entry::<StepRow, sweep::SweepRecord>(e, "detail") {
            v.bad(format!("sweeps[{i}]{m}"));
        }
    }
    for (i, e) in entries(r, "freq_cal", v) {
        if let Err(m) = read_entry::<freq_cal::FreqCalRecord, StepRow>(e, "method") {
            v.bad(format!("freq_cal[{i}]{m}"));
        }
    }
    for (i, e) in entries(r, "clkin_compares", v) {
        let name = format!("clkin_compares[{i}]");
        match read_entry::<compare::CompareRecord, StepRow>(e, "clkin_compare") {
            Err(m) => v.bad(format!("{name}{m}")),
            Ok(Err(_)) => {}
            Ok(Ok(c)) => {
                let k = &c.clkin_compare;
                if let Some(verdict) = k.verdict {
                    if k.relative_ppb.is_none() || k.uncertainty_ppb.is_none() {
                        v.bad(format!(
                            "{name}.clkin_compare: verdict {} without relative_ppb and uncertainty_ppb",
                            verdict.as_str()
                        ));
                    }
                }
                if c.status == Status::Pass && k.verdict != Some(compare::Verdict::Locked) {
                    v.bad(format!("{name}: PASS without the verdict LOCKED"));
                }
            }
        }
    }
}

/// The entries of the optional array `key`, numbered (a non-array is named).
fn entries<'a>(r: &'a Value, key: &str, v: &mut V<'_>) -> Vec<(usize, &'a Value)> {
    match r.get(key) {
        None => Vec::new(),
        Some(Value::Array(a)) => a.iter().enumerate().collect(),
        Some(x) => {
            v.bad(format!("{key}: expected an array, got {}", kind(x)));
            Vec::new()
        }
    }
}
