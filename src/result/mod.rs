//! The result model (DESIGN §5, issue 6 items 5 and 6).
//!
//! One [`RxResult`] value is rendered to `RX_RESULT.json` (pretty JSON plus a
//! final newline) and `RX_RESULT.md`; the Markdown ends with a machine-checkable
//! trailer that binds it to the exact JSON bytes:
//!
//! ```text
//! <!-- rxnode-result schema_version=1 task_id=ID status="PASS" json_sha256=HEX -->
//! ```
//!
//! and its summary table carries a fixed `| Status | PASS |` row and one row per
//! check, so [`validate_result_files`] can prove the two files agree.
//!
//! Overall status ([`overall_status`]), from the per-check statuses:
//!
//! 1. no checks: `NOT RUN`;
//! 2. every check `PASS`: `PASS` (the only way to get `PASS`);
//! 3. some `FAIL`: `PARTIAL` when some check is `BLOCKED`, `NOT RUN` or
//!    `PARTIAL` (not everything ran), else `FAIL`;
//! 4. no `FAIL` but some `PASS` or `PARTIAL`: `PARTIAL` (a `SKIP` beside a
//!    `PASS` also gives `PARTIAL`: a skipped step did not run);
//! 5. nothing passed or failed: `BLOCKED` if any check is blocked, else
//!    `NOT RUN` if any did not run, else `SKIP`.

pub(crate) mod plot;
pub(crate) mod schema;
use crate::store::fsutil::write_atomic;
use anyhow::Result;
use rxnode_interlock::{sha256_hex, Approval, RiskLevel, TaskId, ValidTask};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Component, Path};

/// The schema written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// File names in the outbox.
pub const RESULT_JSON: &str = "RX_RESULT.json";
/// The Markdown twin of [`RESULT_JSON`].
pub const RESULT_MD: &str = "RX_RESULT.md";

/// Largest result JSON the validator reads.
const MAX_RESULT_BYTES: u64 = 16 * 1024 * 1024;

/// A check or overall status. Serialized exactly as the protocol spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    /// Ran and met its criterion.
    #[serde(rename = "PASS")]
    Pass,
    /// Ran and did not meet its criterion.
    #[serde(rename = "FAIL")]
    Fail,
    /// Only part of it ran (interrupted, or some sub-steps blocked).
    #[serde(rename = "PARTIAL")]
    Partial,
    /// Deliberately not run (nothing to do).
    #[serde(rename = "SKIP")]
    Skip,
    /// Refused by policy, device not found, or a precondition.
    #[serde(rename = "BLOCKED")]
    Blocked,
    /// Never started.
    #[serde(rename = "NOT RUN")]
    NotRun,
}

impl Status {
    /// Every status, protocol spelling.
    pub const ALL: [Status; 6] = [
        Status::Pass,
        Status::Fail,
        Status::Partial,
        Status::Skip,
        Status::Blocked,
        Status::NotRun,
    ];

    /// The protocol spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Partial => "PARTIAL",
            Status::Skip => "SKIP",
            Status::Blocked => "BLOCKED",
            Status::NotRun => "NOT RUN",
        }
    }

    /// Parse the exact protocol spelling.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The overall status from the per-check statuses (rules in the module docs).
pub fn overall_status(checks: &[Check]) -> Status {
    use Status::*;
    if checks.is_empty() {
        return NotRun;
    }
    let any = |s: Status| checks.iter().any(|c| c.status == s);
    if checks.iter().all(|c| c.status == Pass) {
        return Pass;
    }
    let incomplete = any(Blocked) || any(NotRun) || any(Partial);
    if any(Fail) {
        return if incomplete { Partial } else { Fail };
    }
    if any(Pass) || any(Partial) {
        return Partial;
    }
    if any(Blocked) {
        Blocked
    } else if any(NotRun) {
        NotRun
    } else {
        Skip
    }
}

/// `approval` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// When it was approved (ISO 8601 with offset).
    pub at: String,
    /// SHA-256 of the approved task text.
    pub task_sha256: String,
}

/// `authorization` in the result (RED tasks only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationRecord {
    /// `RF_TX` or `RED_OTHER`.
    pub kind: String,
    /// When it was given (ISO 8601 with offset).
    pub at: String,
}

/// `node` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeInfo {
    /// The node's name (`rxnode node set-name`), when one was set; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Host name, only when the operator allows it.
    pub hostname: Option<String>,
    /// This build's version.
    pub rxnode_version: String,
    /// libSoapySDR's version, when it was loaded.
    pub soapysdr_version: Option<String>,
}

impl NodeInfo {
    /// This build, no host name, SoapySDR unknown.
    pub fn this_build() -> NodeInfo {
        NodeInfo {
            name: None,
            hostname: None,
            rxnode_version: env!("CARGO_PKG_VERSION").to_owned(),
            soapysdr_version: None,
        }
    }
}

/// `timeline` in the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Timeline {
    /// When the run started (ISO 8601, seconds, with offset), `null` if it never did.
    pub started_at: Option<String>,
    /// When it ended; `null` if it never started.
    pub completed_at: Option<String>,
}

/// One entry of `checks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked, e.g. `step 2: rx_capture` or `capture 1: clkin`.
    pub name: String,
    /// Its status.
    pub status: Status,
    /// One line: why (limits named, measured values).
    pub detail: String,
}

impl Check {
    /// A check.
    pub fn new(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status,
            detail: detail.into(),
        }
    }
}

/// The whole `RX_RESULT.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RxResult {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The task.
    pub task_id: String,
    /// Its title.
    pub task_title: String,
    /// Overall status (normally [`overall_status`] of `checks`).
    pub status: Status,
    /// Effective risk level of the task.
    pub risk_level: RiskLevel,
    /// The watched branch.
    pub source_branch: String,
    /// Full SHA of the commit that held the task; `null` for a local dry run.
    pub source_commit: Option<String>,
    /// `EXPECTED_HEAD` of the task.
    pub expected_head: String,
    /// The approval, if recorded.
    pub approval: Option<ApprovalRecord>,
    /// The RED authorization, if any.
    pub authorization: Option<AuthorizationRecord>,
    /// The node.
    pub node: NodeInfo,
    /// Start and end.
    pub timeline: Timeline,
    /// One status per check.
    pub checks: Vec<Check>,
    /// The `inventory` step's output, if it ran.
    pub inventory: Option<Value>,
    /// Capture summaries of the capture engine (IQ paths relative to the checkout).
    pub captures: Vec<Value>,
    /// TX window and parameters, when a tone was transmitted.
    pub tx: Option<Value>,
    /// Errors met, one line each.
    pub errors: Vec<String>,
    /// `rx_sweep` results (issue 17; see `crate::exec::sweep::sweep_json`): hop
    /// table, band peaks, noise floor, failed hops, the CSV's name, size and SHA-256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<Value>,
}

impl RxResult {
    /// The result of a task before (or without) running it: status `NOT RUN`.
    /// A manual task (no `rx-plan`) keeps this shape for the operator to fill in.
    pub fn manual_skeleton(
        task: &ValidTask,
        commit: &str,
        approval: Option<&Approval>,
    ) -> RxResult {
        let manual = task.plan().is_none();
        let checks = if manual {
            vec![Check::new(
                "manual task",
                Status::NotRun,
                "no rx-plan block: nothing touches hardware; the operator fills in the result",
            )]
        } else {
            task.plan()
                .map(|p| {
                    p.steps
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            Check::new(
                                format!("step {}: {}", i + 1, s.op()),
                                Status::NotRun,
                                "not started",
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        RxResult {
            schema_version: SCHEMA_VERSION,
            task_id: task.id().to_string(),
            task_title: task.header().task_title.clone(),
            status: overall_status(&checks),
            risk_level: task.risk(),
            source_branch: task.header().source_branch.clone(),
            source_commit: (!commit.is_empty()).then(|| commit.to_owned()),
            expected_head: task.header().expected_head.clone(),
            approval: approval.map(|a| ApprovalRecord {
                at: a.at.clone(),
                task_sha256: a.task_sha256.clone(),
            }),
            authorization: None,
            node: NodeInfo::this_build(),
            timeline: Timeline::default(),
            checks,
            inventory: None,
            captures: Vec::new(),
            tx: None,
            errors: Vec::new(),
            sweeps: Vec::new(),
        }
    }

    /// Set `status` from the checks ([`overall_status`]); call after the last check.
    pub fn recompute_status(&mut self) {
        self.status = overall_status(&self.checks);
    }

    /// The exact bytes of `RX_RESULT.json`: pretty JSON and a final newline.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // Serializing plain structs, strings, numbers and JSON values cannot fail
        // except on non-finite floats inside `Value`s, which serde_json maps to null.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            tracing::error!("cannot serialize result: {e}");
            String::from("{}")
        });
        s.push('\n');
        s.into_bytes()
    }
}

fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn fmt_hz(v: Option<f64>) -> String {
    match v {
        Some(f) if f.abs() >= 1e6 => format!("{:.6} MHz", f / 1e6),
        Some(f) if f.abs() >= 1e3 => format!("{:.3} kHz", f / 1e3),
        Some(f) => format!("{f} Hz"),
        None => "—".to_owned(),
    }
}

fn fmt_opt(v: Option<f64>, unit: &str, prec: usize) -> String {
    match v {
        Some(f) => format!("{f:.prec$}{unit}"),
        None => "—".to_owned(),
    }
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => other.to_string(),
    }
}

/// A capture's device for the Markdown: the requested args, then the driver's
/// identity apart ("driver=rxsim,serial=X (driver rxsim, serial X)"), so the
/// driver's reported keys do not read as a duplicated args string.
fn device_text(v: Option<&Value>) -> String {
    let Some(Value::Object(o)) = v else {
        return text_of(v);
    };
    let Some(args) = o.get("args").and_then(Value::as_str) else {
        return text_of(v);
    };
    let ident: Vec<String> = ["driver", "serial", "hardware_key"]
        .iter()
        .filter_map(|k| match o.get(*k) {
            // A hardware key equal to the driver name says nothing new.
            Some(Value::String(s))
                if !s.is_empty() && (*k != "hardware_key" || o.get("driver") != o.get(*k)) =>
            {
                Some(format!("{} {s}", k.replace('_', " ")))
            }
            _ => None,
        })
        .collect();
    let args = if args.is_empty() {
        "(default device)"
    } else {
        args
    };
    if ident.is_empty() {
        args.to_owned()
    } else {
        format!("{args} ({})", ident.join(", "))
    }
}

/// A Unicode block sparkline of a PSD (dB), at most `width` columns (each the
/// maximum of its bins, so narrow tones stay visible). Non-finite values are ignored.
pub fn sparkline(psd_db: &[f64], width: usize) -> Option<String> {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = psd_db.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || width == 0 {
        return None;
    }
    let cols = width.min(finite.len());
    let mut buckets = Vec::with_capacity(cols);
    for c in 0..cols {
        let a = c * finite.len() / cols;
        let b = ((c + 1) * finite.len() / cols).max(a + 1);
        buckets.push(
            finite[a..b]
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max),
        );
    }
    let lo = buckets.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = buckets.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = hi - lo;
    Some(
        buckets
            .iter()
            .map(|v| {
                if span <= 0.0 {
                    BLOCKS[0]
                } else {
                    let i = ((v - lo) / span * 7.0).round() as usize;
                    BLOCKS[i.min(7)]
                }
            })
            .collect(),
    )
}

fn render_capture(out: &mut String, n: usize, c: &Value) {
    let get = |k: &str| c.get(k);
    let _ = writeln!(
        out,
        "### Capture {n}: {}\n",
        md_cell(&device_text(get("device")))
    );
    if let Some(s) = get("status").and_then(Value::as_str) {
        let _ = writeln!(out, "Status: **{s}**\n");
    }
    let req = get("requested");
    let act = get("actual");
    let field = |o: Option<&Value>, k: &str| o.and_then(|o| o.get(k)).and_then(num);
    let _ = writeln!(out, "| | requested | actual |\n|---|---|---|");
    for (label, k) in [
        ("frequency", "frequency_hz"),
        ("sample rate", "sample_rate_hz"),
        ("bandwidth", "bandwidth_hz"),
    ] {
        let _ = writeln!(
            out,
            "| {label} | {} | {} |",
            fmt_hz(field(req, k)),
            fmt_hz(field(act, k))
        );
    }
    let _ = writeln!(
        out,
        "| gain | {} | {} |",
        fmt_opt(field(req, "gain_db"), " dB", 1),
        fmt_opt(field(act, "gain_db"), " dB", 1)
    );
    let int = |k: &str| match get(k) {
        Some(Value::Null) | None => "—".to_owned(),
        Some(v) => v.to_string(),
    };
    let _ = writeln!(
        out,
        "\nSamples: {} received of {} requested; overflows: {}; dropped samples: {}; timeouts: {}",
        int("samples_received"),
        int("samples_requested"),
        int("overflows"),
        int("dropped_samples"),
        int("timeouts")
    );
    let _ = writeln!(
        out,
        "Noise floor: {}; mean power: {}",
        fmt_opt(get("noise_floor_db").and_then(num), " dB", 1),
        fmt_opt(get("mean_power_dbfs").and_then(num), " dBFS", 1)
    );
    if let Some(peaks) = get("peaks").and_then(Value::as_array) {
        if !peaks.is_empty() {
            let _ = writeln!(
                out,
                "\n| peak | frequency | power | SNR |\n|---|---|---|---|"
            );
            for (i, p) in peaks.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    i + 1,
                    fmt_hz(p.get("frequency_hz").and_then(num)),
                    fmt_opt(p.get("power_db").and_then(num), " dB", 1),
                    fmt_opt(p.get("snr_db").and_then(num), " dB", 1)
                );
            }
        }
    }
    if let Some(k) = get("clkin").filter(|v| !v.is_null()) {
        let _ = writeln!(
            out,
            "\nCLKIN: {} — reference error {} ± {} (tone {}, measured {})",
            k.get("status").and_then(Value::as_str).unwrap_or("—"),
            k.get("ppm")
                .and_then(num)
                // Unsigned here, as RX_RESULT.md always wrote it; -0.0 still prints 0.0000.
                .map(|p| format!("{} ppm", rxnode_hw::fmt_ppm(p, 4).trim_start_matches('+')))
                .unwrap_or_else(|| "—".to_owned()),
            fmt_opt(k.get("ppm_uncertainty").and_then(num), " ppm", 4),
            fmt_hz(k.get("tone_hz").and_then(num)),
            fmt_hz(k.get("measured_hz").and_then(num)),
        );
    }
    if let Some(files) = get("iq_files").and_then(Value::as_array) {
        if !files.is_empty() {
            let _ = writeln!(out, "\n| IQ file | bytes | SHA-256 |\n|---|---|---|");
            for f in files {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | `{}` |",
                    md_cell(f.get("path").and_then(Value::as_str).unwrap_or("?")),
                    f.get("bytes")
                        .map(|b| b.to_string())
                        .unwrap_or_else(|| "?".into()),
                    md_cell(f.get("sha256").and_then(Value::as_str).unwrap_or("?"))
                );
            }
        }
    }
    if let Some(psd) = get("psd_db").and_then(Value::as_array) {
        let vals: Vec<f64> = psd.iter().filter_map(Value::as_f64).collect();
        if let Some(line) = sparkline(&vals, 64) {
            let lo = vals
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(f64::INFINITY, f64::min);
            let hi = vals
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .fold(f64::NEG_INFINITY, f64::max);
            let span = match (field(act, "frequency_hz"), field(act, "sample_rate_hz")) {
                (Some(f), Some(r)) => format!(
                    "{} … {}, ",
                    fmt_hz(Some(f - r / 2.0)),
                    fmt_hz(Some(f + r / 2.0))
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "\nSpectrum ({span}{lo:.1} dB … {hi:.1} dB):\n\n```text\n{line}\n```"
            );
        }
    }
    out.push('\n');
}

/// The trailer line that binds the Markdown to the JSON bytes.
fn trailer(r: &RxResult, json_sha256: &str) -> String {
    format!(
        "<!-- rxnode-result schema_version={} task_id={} status=\"{}\" json_sha256={} -->",
        r.schema_version, r.task_id, r.status, json_sha256
    )
}

/// Render `RX_RESULT.md` from the value (the trailer hashes [`RxResult::to_json_bytes`]).
#[cfg(test)]
pub fn render_markdown(r: &RxResult) -> String {
    render_markdown_for(r, &r.to_json_bytes())
}

/// Render `RX_RESULT.md` for JSON bytes already serialized (no second pass over
/// captures and their PSD arrays).
fn render_markdown_for(r: &RxResult, json: &[u8]) -> String {
    let json_sha = sha256_hex(json);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# RX result: {} — {}\n",
        md_cell(&r.task_id),
        md_cell(&r.task_title)
    );
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| Status | {} |", r.status);
    let _ = writeln!(o, "| Task | `{}` |", md_cell(&r.task_id));
    let _ = writeln!(o, "| Risk level | {} |", r.risk_level);
    let _ = writeln!(
        o,
        "| Source | `{}` @ `{}` |",
        md_cell(&r.source_branch),
        md_cell(r.source_commit.as_deref().unwrap_or("—"))
    );
    let _ = writeln!(o, "| Expected head | `{}` |", md_cell(&r.expected_head));
    let _ = writeln!(
        o,
        "| Approval | {} |",
        r.approval
            .as_ref()
            .map(|a| format!(
                "{} (task SHA-256 `{}`)",
                md_cell(&a.at),
                md_cell(&a.task_sha256)
            ))
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        o,
        "| Authorization | {} |",
        r.authorization
            .as_ref()
            .map(|a| format!("{} at {}", md_cell(&a.kind), md_cell(&a.at)))
            .unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(
        o,
        "| Node | {}rxnode {}, SoapySDR {}{} |",
        r.node
            .name
            .as_deref()
            .map(|n| format!("{}, ", md_cell(n)))
            .unwrap_or_default(),
        md_cell(&r.node.rxnode_version),
        md_cell(r.node.soapysdr_version.as_deref().unwrap_or("—")),
        r.node
            .hostname
            .as_deref()
            .map(|h| format!(", host {}", md_cell(h)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "| Started | {} |",
        md_cell(r.timeline.started_at.as_deref().unwrap_or("—"))
    );
    let _ = writeln!(
        o,
        "| Completed | {} |",
        md_cell(r.timeline.completed_at.as_deref().unwrap_or("—"))
    );
    let _ = writeln!(
        o,
        "\n## Checks\n\n| # | Check | Status | Detail |\n|---|---|---|---|"
    );
    for (i, c) in r.checks.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            i + 1,
            md_cell(&c.name),
            c.status,
            md_cell(&c.detail)
        );
    }
    if !r.captures.is_empty() {
        let _ = writeln!(o, "\n## Captures\n");
        for (i, c) in r.captures.iter().enumerate() {
            render_capture(&mut o, i + 1, c);
        }
    }
    if !r.sweeps.is_empty() {
        let _ = writeln!(o, "\n## Sweeps\n");
        for (i, sw) in r.sweeps.iter().enumerate() {
            crate::exec::sweep::render_sweep_md(&mut o, i + 1, sw);
        }
    }
    if let Some(tx) = r.tx.as_ref().filter(|v| !v.is_null()) {
        let _ = writeln!(o, "\n## Transmission\n");
        if let Some(obj) = tx.as_object() {
            let _ = writeln!(o, "| | |\n|---|---|");
            for (k, v) in obj {
                let _ = writeln!(o, "| {} | {} |", md_cell(k), md_cell(&text_of(Some(v))));
            }
        } else {
            let _ = writeln!(o, "{}", md_cell(&tx.to_string()));
        }
    }
    if let Some(inv) = r.inventory.as_ref().filter(|v| !v.is_null()) {
        let n = inv
            .as_array()
            .or_else(|| inv.get("devices").and_then(Value::as_array))
            .map(Vec::len);
        let _ = writeln!(
            o,
            "\n## Inventory\n\n{} (details in RX_RESULT.json)",
            n.map(|n| format!("{n} device(s)"))
                .unwrap_or_else(|| "recorded".into())
        );
    }
    if !r.errors.is_empty() {
        let _ = writeln!(o, "\n## Errors\n");
        for e in &r.errors {
            let _ = writeln!(o, "- {}", md_cell(e));
        }
    }
    let _ = writeln!(o, "\n{}", trailer(r, &json_sha));
    o
}

/// Write `RX_RESULT.json` and `RX_RESULT.md` into `dir`, both from `r`, each atomically.
pub fn write_result_files(dir: &Path, r: &RxResult) -> Result<()> {
    let json = r.to_json_bytes();
    let md = render_markdown_for(r, &json);
    write_atomic(&dir.join(RESULT_JSON), &json)?;
    write_atomic(&dir.join(RESULT_MD), md.as_bytes())?;
    Ok(())
}

/// File name of capture `n`'s spectrum image in the outbox (never published).
pub fn spectrum_png_name(n: usize) -> String {
    format!("SPECTRUM_{n}.png")
}

// The pictures live in `crate::result::plot` (issue 17: axes, labels, an embedded font).
#[cfg(test)]
pub use crate::result::plot::write_spectrum_png;
pub use crate::result::plot::write_spectrum_pngs;

// ---------------------------------------------------------------- validation

fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    // ISO 8601 / RFC 3339 with an explicit offset (`Z` or `±HH:MM`), seconds present.
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// Whether a path string is relative to the checkout and stays inside it.
pub fn is_safe_relative(p: &str) -> bool {
    if p.is_empty() || p.starts_with('/') || p.starts_with('\\') || p.contains('\0') {
        return false;
    }
    let b = p.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return false;
    }
    if p.split(['/', '\\']).any(|c| c == "..") {
        return false;
    }
    Path::new(p)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn sha256_file(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((n, hex::encode(h.finalize())))
}

pub(crate) const TOP_KEYS: &[&str] = &[
    "schema_version",
    "task_id",
    "task_title",
    "status",
    "risk_level",
    "source_branch",
    "source_commit",
    "expected_head",
    "approval",
    "authorization",
    "node",
    "timeline",
    "checks",
    "inventory",
    "captures",
    "tx",
    "errors",
];

/// Top-level keys a result may carry (serialized only when non-empty).
const OPTIONAL_TOP_KEYS: &[&str] = &["sweeps"];

struct V<'a> {
    p: &'a mut Vec<String>,
}

impl V<'_> {
    fn bad(&mut self, s: impl Into<String>) {
        self.p.push(s.into());
    }
    fn string<'v>(&mut self, o: &'v Value, key: &str, name: &str) -> Option<&'v str> {
        match o.get(key) {
            None => {
                self.bad(format!("{name}: missing"));
                None
            }
            Some(Value::String(s)) => Some(s),
            Some(v) => {
                self.bad(format!("{name}: expected a string, got {}", kind(v)));
                None
            }
        }
    }
    fn opt_string<'v>(&mut self, o: &'v Value, key: &str, name: &str) -> Option<&'v str> {
        match o.get(key) {
            None => {
                self.bad(format!("{name}: missing (use null)"));
                None
            }
            Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(v) => {
                self.bad(format!(
                    "{name}: expected a string or null, got {}",
                    kind(v)
                ));
                None
            }
        }
    }
    fn time(&mut self, s: Option<&str>, name: &str) -> Option<time::OffsetDateTime> {
        let s = s?;
        let t = parse_time(s);
        if t.is_none() {
            self.bad(format!(
                "{name}: {s:?} is not ISO 8601 with seconds and an offset (e.g. 2026-01-31T12:00:00+00:00)"
            ));
        }
        t
    }
    fn status(&mut self, v: Option<&Value>, name: &str) -> Option<Status> {
        match v {
            None => {
                self.bad(format!("{name}: missing"));
                None
            }
            Some(Value::String(s)) => {
                let st = Status::parse(s);
                if st.is_none() {
                    self.bad(format!(
                        "{name}: {s:?} is not one of PASS, FAIL, PARTIAL, SKIP, BLOCKED, NOT RUN"
                    ));
                }
                st
            }
            Some(v) => {
                self.bad(format!("{name}: expected a status string, got {}", kind(v)));
                None
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Check a result: schema, statuses, timeline, MD/JSON agreement, IQ paths and
/// hashes on disk under `checkout`. Returns every problem found; empty = valid.
pub fn validate_result_files(json_path: &Path, checkout: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let bytes = match std::fs::metadata(json_path) {
        Err(e) => return vec![format!("{}: cannot read: {e}", json_path.display())],
        Ok(m) if m.len() > MAX_RESULT_BYTES => {
            return vec![format!(
                "{}: {} bytes; a result is at most {MAX_RESULT_BYTES}",
                json_path.display(),
                m.len()
            )]
        }
        Ok(_) => match std::fs::read(json_path) {
            Ok(b) => b,
            Err(e) => return vec![format!("{}: cannot read: {e}", json_path.display())],
        },
    };
    // Issue 13: serde keeps the last of two equal keys; a result names each once.
    if let Some(d) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(rxnode_interlock::find_duplicate_key)
    {
        return vec![format!("{}: {d}", json_path.display())];
    }
    let root: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return vec![format!("{}: not valid JSON: {e}", json_path.display())],
    };
    if !root.is_object() {
        return vec![format!(
            "{}: the result must be a JSON object",
            json_path.display()
        )];
    }
    let mut v = V { p: &mut problems };
    check_schema(&root, checkout, &mut v);
    check_no_absolute_paths(&root, "", &mut v);
    check_markdown(json_path, &root, &bytes, &mut v);
    problems
}

/// Results carry only results (issue 13): no string anywhere may hold an
/// absolute path on any OS — `/etc/…`, `C:\…`, `\\server\…`, `~/…`, `file:/…`.
fn check_no_absolute_paths(x: &Value, at: &str, v: &mut V<'_>) {
    match x {
        Value::String(s) => {
            if let Some(p) = absolute_path_in(s) {
                v.bad(format!(
                    "{}: holds the absolute path {p:?}; a result names files relative to the checkout only",
                    if at.is_empty() { "(top)" } else { at }
                ));
            }
        }
        Value::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                check_no_absolute_paths(e, &format!("{at}[{i}]"), v);
            }
        }
        Value::Object(o) => {
            for (k, e) in o {
                let here = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                if let Some(p) = absolute_path_in(k) {
                    v.bad(format!("{here}: the key holds the absolute path {p:?}"));
                }
                check_no_absolute_paths(e, &here, v);
            }
        }
        _ => {}
    }
}

/// The first word of `s` that is an absolute path on some OS: `/name…` (unix),
/// `X:\…` or `X:/…` (a Windows drive), `\\\\server…` (UNC), `~/…` or
/// `~user/…` (a home folder), each also after `file:`. Words are split at white
/// space and quoting/punctuation, not at `:`, so `https://…` URLs and ratios
/// (`S/s`, `10/20`) are not paths; a path starts with a name character after its
/// root, so a lone `/` or `\\\\` in prose is not one either.
pub fn absolute_path_in(s: &str) -> Option<&str> {
    fn name_char(c: char) -> bool {
        c.is_ascii_alphanumeric() || "._-$".contains(c)
    }
    s.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;=|".contains(c))
        .find(|w| {
            let w =
                match w.strip_prefix("file:") {
                    // `file:///home/x`, `file://host/share`: the part after `//`.
                    Some(rest) => rest.strip_prefix("//").map_or(rest, |r| {
                        if r.starts_with('/') {
                            r
                        } else {
                            rest
                        }
                    }),
                    None => w,
                };
            let mut cs = w.chars();
            let (c0, c1, c2) = (cs.next(), cs.next(), cs.next());
            match (c0, c1, c2) {
                // `/etc`, `/home/x`, `//server/share`
                (Some('/'), Some(c), _) if c.is_alphanumeric() || "._-~".contains(c) => true,
                (Some('/'), Some('/'), Some(c)) if name_char(c) => true,
                // `\\server\share`
                (Some('\\'), Some('\\'), Some(c)) if name_char(c) => true,
                // `C:\x`, `C:/x`
                (Some(d), Some(':'), Some('\\' | '/')) if d.is_ascii_alphabetic() => true,
                // `~/x`, `~alice/x`
                (Some('~'), _, _) => w[1..]
                    .find(['/', '\\'])
                    .is_some_and(|i| w[1..1 + i].chars().all(name_char)),
                _ => false,
            }
        })
}

fn check_schema(r: &Value, checkout: &Path, v: &mut V<'_>) {
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
        }
        Some(x) => v.bad(format!(
            "approval: expected an object or null, got {}",
            kind(x)
        )),
    }
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
    if let (Some(st), true) = (status, checks_ok) {
        let derived = overall_status(&checks);
        if st != derived {
            v.bad(format!(
                "status: {st} disagrees with the checks, which give {derived}"
            ));
        }
    }
    if let Some(st) = status {
        let ran = matches!(st, Status::Pass | Status::Fail | Status::Partial);
        if ran && (started.is_none() || completed.is_none()) {
            v.bad(format!(
                "timeline: status {st} needs started_at and completed_at"
            ));
        }
    }
    match r.get("captures") {
        Some(Value::Array(a)) => {
            // Issue 13: each capture is one step's, and each step has a check.
            if checks_ok && a.len() > checks.len() {
                v.bad(format!(
                    "captures: {} entries but only {} checks (one capture per step)",
                    a.len(),
                    checks.len()
                ));
            }
            for (i, c) in a.iter().enumerate() {
                check_capture(c, i, checkout, v);
            }
        }
        Some(x) => v.bad(format!("captures: expected an array, got {}", kind(x))),
        None => v.bad("captures: missing (use [])"),
    }
    if r.get("inventory").is_none() {
        v.bad("inventory: missing (use null)");
    }
    match r.get("tx") {
        None => v.bad("tx: missing (use null)"),
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
}

#[cfg(test)]
mod strict_tests;

/// PSD points a capture may carry when it declares no `fft_size` (the capture
/// engine's default trace length).
const PSD_POINTS_WITHOUT_FFT_SIZE: u64 = 512;
/// Peaks a capture may list.
const MAX_PEAKS: u64 = 64;
/// IQ files one capture may record (SigMF data + meta, or one WAV / raw file).
const MAX_IQ_FILES: usize = 8;

fn check_capture(c: &Value, i: usize, checkout: &Path, v: &mut V<'_>) {
    let n = format!("captures[{i}]");
    if !c.is_object() {
        v.bad(format!("{n}: expected an object, got {}", kind(c)));
        return;
    }
    if let Some(s) = c.get("status").filter(|s| !s.is_null()) {
        v.status(Some(s), &format!("{n}.status"));
    }
    if let Some(k) = c.get("clkin").filter(|s| !s.is_null()) {
        if let Some(s) = k.get("status").filter(|s| !s.is_null()) {
            v.status(Some(s), &format!("{n}.clkin.status"));
        }
    }
    // Issue 13: array lengths are tied to the sizes the capture declares.
    let bins = match c.get("fft_size") {
        None | Some(Value::Null) => None,
        Some(Value::Number(x)) if x.as_u64().is_some_and(|b| (1..=1 << 20).contains(&b)) => {
            x.as_u64()
        }
        Some(x) => {
            v.bad(format!(
                "{n}.fft_size: {x} is not a bin count in 1 ..= 1048576"
            ));
            None
        }
    };
    let limit = bins.unwrap_or(PSD_POINTS_WITHOUT_FFT_SIZE);
    let why = if bins.is_some() {
        "fft_size"
    } else {
        "no fft_size declared"
    };
    match c.get("psd_db") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            if p.len() as u64 > limit {
                v.bad(format!(
                    "{n}.psd_db: {} values but the capture has {limit} bins ({why})",
                    p.len()
                ));
            }
            if let Some(j) = p.iter().position(|x| !(x.is_number() || x.is_null())) {
                v.bad(format!("{n}.psd_db[{j}]: expected a number"));
            }
        }
        Some(x) => v.bad(format!("{n}.psd_db: expected an array, got {}", kind(x))),
    }
    match c.get("peaks") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            let max = limit.min(MAX_PEAKS);
            if p.len() as u64 > max {
                v.bad(format!(
                    "{n}.peaks: {} peaks; at most {max} ({} bins, {MAX_PEAKS} reported at most)",
                    p.len(),
                    limit
                ));
            }
            if let Some(j) = p.iter().position(|x| !x.is_object()) {
                v.bad(format!("{n}.peaks[{j}]: expected an object"));
            }
        }
        Some(x) => v.bad(format!("{n}.peaks: expected an array, got {}", kind(x))),
    }
    let files = match c.get("iq_files") {
        None | Some(Value::Null) => return,
        Some(Value::Array(a)) => a,
        Some(x) => {
            v.bad(format!("{n}.iq_files: expected an array, got {}", kind(x)));
            return;
        }
    };
    if files.len() > MAX_IQ_FILES {
        v.bad(format!(
            "{n}.iq_files: {} files; one capture records at most {MAX_IQ_FILES}",
            files.len()
        ));
    }
    for (j, f) in files.iter().enumerate() {
        let fname = format!("{n}.iq_files[{j}]");
        if !f.is_object() {
            v.bad(format!("{fname}: expected an object, got {}", kind(f)));
            continue;
        }
        let path = v.string(f, "path", &format!("{fname}.path"));
        let bytes = match f.get("bytes") {
            Some(Value::Number(b)) if b.as_u64().is_some() => b.as_u64(),
            Some(x) => {
                v.bad(format!(
                    "{fname}.bytes: expected a non-negative integer, got {x}"
                ));
                None
            }
            None => {
                v.bad(format!("{fname}.bytes: missing"));
                None
            }
        };
        let sha = v.string(f, "sha256", &format!("{fname}.sha256"));
        if let Some(s) = sha {
            if !is_hex(s, 64) {
                v.bad(format!("{fname}.sha256: {s:?} is not 64 hex characters"));
            }
        }
        let Some(p) = path else { continue };
        if !is_safe_relative(p) {
            v.bad(format!(
                "{fname}.path: {p:?} must be relative to the checkout, without '..'"
            ));
            continue;
        }
        let on_disk = checkout.join(p);
        if !on_disk.is_file() {
            continue; // Checked only where the file exists (e.g. not on the main PC).
        }
        match sha256_file(&on_disk) {
            Err(e) => v.bad(format!("{fname}: cannot read {p}: {e}")),
            Ok((size, hash)) => {
                if let Some(b) = bytes {
                    if b != size {
                        v.bad(format!(
                            "{fname}: {p} is {size} bytes on disk, the result says {b}"
                        ));
                    }
                }
                if let Some(s) = sha {
                    if !s.eq_ignore_ascii_case(&hash) {
                        v.bad(format!(
                            "{fname}: {p} has SHA-256 {hash} on disk, the result says {s}"
                        ));
                    }
                }
            }
        }
    }
}

fn check_markdown(json_path: &Path, r: &Value, json_bytes: &[u8], v: &mut V<'_>) {
    let md_path = json_path.with_extension("md");
    let md = match std::fs::read(&md_path) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => s,
            Err(_) => {
                v.bad(format!("{}: not UTF-8", md_path.display()));
                return;
            }
        },
        Err(e) => {
            v.bad(format!(
                "{}: cannot read the Markdown twin: {e}",
                md_path.display()
            ));
            return;
        }
    };
    let Some(line) = md
        .lines()
        .rev()
        .find(|l| l.starts_with("<!-- rxnode-result "))
    else {
        v.bad(format!(
            "{}: no `<!-- rxnode-result … -->` trailer line",
            md_path.display()
        ));
        return;
    };
    let field = |key: &str| -> Option<String> {
        let rest = line.split(&format!(" {key}=")).nth(1)?;
        if let Some(q) = rest.strip_prefix('"') {
            q.split('"').next().map(str::to_owned)
        } else {
            rest.split_whitespace().next().map(str::to_owned)
        }
    };
    let json_sha = sha256_hex(json_bytes);
    match field("json_sha256") {
        Some(s) if s == json_sha => {}
        Some(s) => v.bad(format!(
            "{}: trailer json_sha256 {s} does not match {} ({json_sha}): the files disagree",
            md_path.display(),
            json_path.display()
        )),
        None => v.bad(format!("{}: trailer has no json_sha256", md_path.display())),
    }
    let jid = r.get("task_id").and_then(Value::as_str);
    if field("task_id").as_deref() != jid {
        v.bad(format!(
            "{}: trailer task_id {:?} disagrees with the JSON {:?}",
            md_path.display(),
            field("task_id"),
            jid
        ));
    }
    let jst = r.get("status").and_then(Value::as_str);
    if field("status").as_deref() != jst {
        v.bad(format!(
            "{}: trailer status {:?} disagrees with the JSON {:?}",
            md_path.display(),
            field("status"),
            jst
        ));
    }
    if let Some(st) = jst {
        let row = format!("| Status | {st} |");
        if !md.lines().any(|l| l == row) {
            v.bad(format!(
                "{}: summary row `{row}` not found: the files disagree",
                md_path.display()
            ));
        }
    }
    if let Some(checks) = r.get("checks").and_then(Value::as_array) {
        for (i, c) in checks.iter().enumerate() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let st = c.get("status").and_then(Value::as_str).unwrap_or("");
            let prefix = format!("| {} | {} | {} |", i + 1, md_cell(name), st);
            if !md.lines().any(|l| l.starts_with(&prefix)) {
                v.bad(format!(
                    "{}: check row `{prefix}` not found: the files disagree",
                    md_path.display()
                ));
            }
        }
    }
}

// ---------------------------------------------------------------- the command

/// `rxnode validate-result TASK_ID|PATH [--json]`: exit 0 valid, 2 invalid.
pub fn cmd_validate_result(
    ctx: &crate::context::Ctx,
    target: &str,
) -> Result<crate::exit::Outcome> {
    use crate::exit::Outcome;
    let as_path = Path::new(target);
    let json_path = if let (Ok(id), false) = (TaskId::parse(target), as_path.exists()) {
        crate::store::paths::Paths::new(&ctx.repo)
            .outbox(&id)
            .join(RESULT_JSON)
    } else if as_path.is_dir() {
        as_path.join(RESULT_JSON)
    } else {
        as_path.to_path_buf()
    };
    let problems = validate_result_files(&json_path, &ctx.repo);
    if ctx.json {
        let report = serde_json::json!({
            "valid": problems.is_empty(),
            "path": json_path.display().to_string(),
            "problems": problems,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if problems.is_empty() {
        println!("{}: valid", json_path.display());
    } else {
        // Some problems already start with the path (cannot read, not JSON…): name it once.
        let prefix = format!("{}: ", json_path.display());
        for p in &problems {
            eprintln!("{prefix}{}", p.strip_prefix(&prefix).unwrap_or(p));
        }
        eprintln!(
            "{}: invalid ({} problem(s))",
            json_path.display(),
            problems.len()
        );
    }
    Ok(if problems.is_empty() {
        Outcome::Done
    } else {
        Outcome::Code(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rxnode_interlock::{validate_task, ValidateOptions};
    use serde_json::json;

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
    const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";

    fn task(plan: bool) -> ValidTask {
        let mut t = format!(
            "TASK_ID = R_1\nTASK_TITLE = Result | test\nSOURCE_BRANCH = video-development\n\
             EXPECTED_HEAD = {HEAD}\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\nRF_RX = YES\n\
             RF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\nBody\n"
        );
        if plan {
            t.push_str("```rx-plan\n{\"steps\": [{\"op\": \"inventory\"}, {\"op\": \"rx_capture\", \"device\": \"driver=rxsim\", \"frequency_hz\": 1e8, \"sample_rate_hz\": 1e6, \"duration_s\": 1}]}\n```\n");
        }
        validate_task(&t, &ValidateOptions::default()).unwrap()
    }

    fn ran(dir: &Path) -> RxResult {
        let t = task(true);
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        let mut r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
        r.timeline = Timeline {
            started_at: Some("2026-01-01T10:05:00+00:00".into()),
            completed_at: Some("2026-01-01T11:05:03+01:00".into()),
        };
        let iq = dir.join(".local/rx_iq/R_1/cap1.sigmf-data");
        std::fs::create_dir_all(iq.parent().unwrap()).unwrap();
        std::fs::write(&iq, b"0123456789").unwrap();
        r.checks = vec![
            Check::new("step 1: inventory", Status::Pass, "1 device"),
            Check::new("step 2: rx_capture", Status::Pass, "2000000 samples"),
        ];
        r.status = overall_status(&r.checks);
        r.captures = vec![json!({
            "device": "driver=rxsim,serial=SIM0",
            "requested": {"frequency_hz": 1e8, "sample_rate_hz": 1e6, "gain_db": 20.0},
            "actual": {"frequency_hz": 1e8, "sample_rate_hz": 1e6, "gain_db": 20.0, "bandwidth_hz": 1e6},
            "samples_requested": 1000000, "samples_received": 1000000,
            "overflows": 0, "dropped_samples": 0, "timeouts": 0,
            "peaks": [{"frequency_hz": 100.1e6, "power_db": -20.5, "snr_db": 60.1}],
            "noise_floor_db": -80.25,
            "clkin": {"tone_hz": 100.1e6, "measured_hz": 100.1e6, "ppm": 0.0012, "ppm_uncertainty": 0.003, "status": "PASS"},
            "iq_files": [{"path": ".local/rx_iq/R_1/cap1.sigmf-data", "format": "sigmf", "bytes": 10,
                          "sha256": sha256_hex(b"0123456789")}],
            "psd_db": [-80.0, -79.0, -81.0, -20.0, -80.0, -78.0],
            "status": "PASS"
        })];
        r
    }

    /// Polish review: the capture heading printed "args=driver=rxsim,serial=X,driver=rxsim,
    /// hardware_key=rxsim,serial=X" — requested args and the driver's identity run together.
    #[test]
    fn capture_heading_shows_args_then_identity() {
        let d = json!({"args": "driver=rxsim,serial=demo-free,ppm=2.5", "driver": "rxsim",
                       "serial": "demo-free", "hardware_key": "rxsim"});
        assert_eq!(
            device_text(Some(&d)),
            "driver=rxsim,serial=demo-free,ppm=2.5 (driver rxsim, serial demo-free)"
        );
        let mut out = String::new();
        render_capture(&mut out, 1, &json!({"device": d}));
        assert!(!out.contains("args="), "{out}");
        assert_eq!(device_text(Some(&json!("driver=rxsim"))), "driver=rxsim");
    }

    fn write_raw(dir: &Path, v: &Value) -> std::path::PathBuf {
        // Write a JSON value and a Markdown twin that agrees with it byte for byte.
        let r: RxResult = serde_json::from_value(v.clone()).unwrap();
        let out = dir.join("out");
        write_result_files(&out, &r).unwrap();
        out.join(RESULT_JSON)
    }

    #[test]
    fn status_spelling() {
        let s: Vec<String> = Status::ALL
            .iter()
            .map(|s| serde_json::to_string(s).unwrap())
            .collect();
        assert_eq!(
            s,
            [
                "\"PASS\"",
                "\"FAIL\"",
                "\"PARTIAL\"",
                "\"SKIP\"",
                "\"BLOCKED\"",
                "\"NOT RUN\""
            ]
        );
        for st in Status::ALL {
            assert_eq!(Status::parse(st.as_str()), Some(st));
            let back: Status = serde_json::from_str(&serde_json::to_string(&st).unwrap()).unwrap();
            assert_eq!(back, st);
        }
        assert!(serde_json::from_str::<Status>("\"pass\"").is_err());
        assert!(serde_json::from_str::<Status>("\"NOT_RUN\"").is_err());
    }

    #[test]
    fn overall_rules() {
        use Status::*;
        let o = |s: &[Status]| {
            overall_status(
                &s.iter()
                    .map(|s| Check::new("c", *s, ""))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(o(&[]), NotRun);
        assert_eq!(o(&[Pass]), Pass);
        assert_eq!(o(&[Pass, Pass]), Pass);
        assert_eq!(o(&[Pass, Fail]), Fail);
        assert_eq!(o(&[Fail, Skip]), Fail);
        assert_eq!(o(&[Pass, Fail, Blocked]), Partial);
        assert_eq!(o(&[Fail, NotRun]), Partial);
        assert_eq!(o(&[Pass, Blocked]), Partial);
        assert_eq!(o(&[Pass, NotRun]), Partial);
        assert_eq!(o(&[Pass, Skip]), Partial);
        assert_eq!(o(&[Partial]), Partial);
        assert_eq!(o(&[Blocked]), Blocked);
        assert_eq!(o(&[Blocked, NotRun, Skip]), Blocked);
        assert_eq!(o(&[NotRun, Skip]), NotRun);
        assert_eq!(o(&[Skip]), Skip);
        // Nothing that did not run is ever PASS.
        for s in [Fail, Partial, Skip, Blocked, NotRun] {
            assert_ne!(o(&[Pass, Pass, s]), Pass);
        }
    }

    #[test]
    fn skeletons() {
        let t = task(false);
        let r = RxResult::manual_skeleton(&t, "", None);
        assert_eq!(r.status, Status::NotRun);
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.source_commit, None);
        assert_eq!(r.approval, None);
        assert_eq!(r.checks.len(), 1);
        assert_eq!(r.expected_head, HEAD);
        assert_eq!(r.risk_level, RiskLevel::Yellow);
        let v: Value = serde_json::from_slice(&r.to_json_bytes()).unwrap();
        for k in TOP_KEYS {
            assert!(v.get(*k).is_some(), "key {k} missing");
        }
        assert_eq!(v["status"], "NOT RUN");
        assert_eq!(v["timeline"]["started_at"], Value::Null);
        let t = task(true);
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        let r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
        assert_eq!(r.checks.len(), 2);
        assert!(r.checks.iter().all(|c| c.status == Status::NotRun));
        assert_eq!(r.approval.as_ref().unwrap().task_sha256, t.sha256());
        assert_eq!(r.source_commit.as_deref(), Some(COMMIT));
    }

    #[test]
    fn written_files_validate_and_render_details() {
        let d = tempfile::TempDir::new().unwrap();
        let r = ran(d.path());
        let out = d.path().join(".local/rx_agent_outbox/R_1");
        write_result_files(&out, &r).unwrap();
        let p = validate_result_files(&out.join(RESULT_JSON), d.path());
        assert!(p.is_empty(), "{p:#?}");
        let md = std::fs::read_to_string(out.join(RESULT_MD)).unwrap();
        assert!(md.contains("| Status | PASS |"));
        assert!(md.contains("Result \\| test"), "pipes escaped");
        assert!(md.contains("0.0012 ppm ± 0.0030 ppm"), "{md}");
        assert!(md.contains("| `.local/rx_iq/R_1/cap1.sigmf-data` | 10 |"));
        assert!(md.contains("-80.2 dB") || md.contains("-80.3 dB"));
        assert!(md.contains("overflows: 0; dropped samples: 0"));
        assert!(md.contains('█') && md.contains('▁'), "sparkline: {md}");
        assert!(
            md.contains("Spectrum (99.500000 MHz … 100.500000 MHz, -81.0 dB … -20.0 dB)"),
            "{md}"
        );
        assert!(md.trim_end().ends_with("-->"));
        let json = std::fs::read(out.join(RESULT_JSON)).unwrap();
        assert!(md.contains(&format!("json_sha256={} -->", sha256_hex(&json))));
        // The JSON reads back into the same value.
        let back: RxResult = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn skeleton_files_validate() {
        let d = tempfile::TempDir::new().unwrap();
        let r = RxResult::manual_skeleton(&task(false), "", None);
        write_result_files(d.path(), &r).unwrap();
        let p = validate_result_files(&d.path().join(RESULT_JSON), d.path());
        assert!(p.is_empty(), "{p:#?}");
    }

    fn problems_after(edit: impl Fn(&mut Value)) -> Vec<String> {
        let d = tempfile::TempDir::new().unwrap();
        let mut v = serde_json::to_value(ran(d.path())).unwrap();
        edit(&mut v);
        // Render a twin that agrees, so only the edited property is wrong.
        let out = d.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let bytes = {
            let mut s = serde_json::to_string_pretty(&v).unwrap();
            s.push('\n');
            s.into_bytes()
        };
        std::fs::write(out.join(RESULT_JSON), &bytes).unwrap();
        let md = match serde_json::from_value::<RxResult>(v.clone()) {
            Ok(r) => render_markdown(&r).replace(&sha256_hex(&r.to_json_bytes()), &sha256_hex(&bytes)),
            Err(_) => format!(
                "| Status | {} |\n<!-- rxnode-result schema_version=1 task_id={} status=\"{}\" json_sha256={} -->\n",
                v["status"].as_str().unwrap_or(""),
                v["task_id"].as_str().unwrap_or(""),
                v["status"].as_str().unwrap_or(""),
                sha256_hex(&bytes)
            ),
        };
        std::fs::write(out.join(RESULT_MD), md).unwrap();
        validate_result_files(&out.join(RESULT_JSON), d.path())
    }

    fn expect(p: &[String], needle: &str) {
        assert!(
            p.iter().any(|x| x.contains(needle)),
            "no {needle:?} in {p:#?}"
        );
    }

    #[test]
    fn schema_problems_named() {
        expect(
            &problems_after(|v| v["schema_version"] = json!(2)),
            "schema_version: 2 is not supported",
        );
        expect(
            &problems_after(|v| v["schema_version"] = json!("1")),
            "schema_version: expected a number",
        );
        expect(
            &problems_after(|v| {
                v.as_object_mut().unwrap().remove("task_title");
            }),
            "task_title: missing",
        );
        expect(
            &problems_after(|v| v["task_id"] = json!("../x")),
            "task_id: \"../x\"",
        );
        expect(
            &problems_after(|v| v["extra"] = json!(1)),
            "extra: unknown key",
        );
        expect(
            &problems_after(|v| v["risk_level"] = json!("ORANGE")),
            "risk_level",
        );
        expect(
            &problems_after(|v| v["source_commit"] = json!("abc")),
            "source_commit",
        );
        expect(
            &problems_after(|v| v["approval"]["task_sha256"] = json!("zz")),
            "approval.task_sha256",
        );
        expect(
            &problems_after(|v| {
                v["authorization"] = json!({"kind": "YOLO", "at": "2026-01-01T00:00:00Z"})
            }),
            "authorization.kind",
        );
        expect(
            &problems_after(|v| v["errors"] = json!([1])),
            "errors[0]: expected a string",
        );
        expect(
            &problems_after(|v| v["captures"] = json!({})),
            "captures: expected an array",
        );
        expect(
            &problems_after(|v| v["node"] = json!({})),
            "node.rxnode_version: missing",
        );
    }

    #[test]
    fn status_vocabulary_and_consistency() {
        expect(
            &problems_after(|v| v["status"] = json!("pass")),
            "status: \"pass\" is not one of",
        );
        expect(
            &problems_after(|v| v["checks"][0]["status"] = json!("OK")),
            "checks[0].status: \"OK\"",
        );
        expect(
            &problems_after(|v| v["checks"][1]["status"] = json!("FAIL")),
            "status: PASS disagrees with the checks, which give FAIL",
        );
        expect(
            &problems_after(|v| v["checks"] = json!([])),
            "status: PASS disagrees with the checks, which give NOT RUN",
        );
        expect(
            &problems_after(|v| v["captures"][0]["clkin"]["status"] = json!("GOOD")),
            "captures[0].clkin.status",
        );
    }

    #[test]
    fn timeline_rules() {
        expect(
            &problems_after(|v| v["timeline"]["completed_at"] = json!("2026-01-01T09:00:00+00:00")),
            "completed_at is before started_at",
        );
        // 11:05:03+01:00 is 10:05:03 UTC: offsets are honoured.
        let p = problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01T10:05:04Z"));
        expect(&p, "completed_at is before started_at");
        expect(
            &problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01T10:05:00")),
            "not ISO 8601",
        );
        expect(
            &problems_after(|v| v["timeline"]["started_at"] = json!("2026-01-01 10:05")),
            "not ISO 8601",
        );
        expect(
            &problems_after(|v| v["timeline"]["started_at"] = Value::Null),
            "completed_at without started_at",
        );
        expect(
            &problems_after(|v| v["timeline"] = json!({"started_at": null, "completed_at": null})),
            "status PASS needs started_at and completed_at",
        );
    }

    #[test]
    fn iq_paths_and_hashes() {
        let f = |v: &mut Value, k: &str, x: Value| v["captures"][0]["iq_files"][0][k] = x;
        expect(
            &problems_after(|v| f(v, "path", json!("/home/op/.local/x.cf32"))),
            "must be relative",
        );
        expect(
            &problems_after(|v| f(v, "path", json!("../x.cf32"))),
            "without '..'",
        );
        expect(
            &problems_after(|v| f(v, "path", json!(".local/../../x"))),
            "without '..'",
        );
        expect(
            &problems_after(|v| f(v, "path", json!("C:\\x.cf32"))),
            "must be relative",
        );
        expect(
            &problems_after(|v| f(v, "bytes", json!(11))),
            "is 10 bytes on disk, the result says 11",
        );
        expect(
            &problems_after(|v| f(v, "sha256", json!("0".repeat(64)))),
            "has SHA-256",
        );
        expect(
            &problems_after(|v| f(v, "sha256", json!("xyz"))),
            "not 64 hex",
        );
        expect(
            &problems_after(|v| f(v, "bytes", json!(-1))),
            "non-negative integer",
        );
        // A file that is not on this machine is not an error.
        assert!(
            problems_after(|v| f(v, "path", json!(".local/rx_iq/R_1/elsewhere.cf32"))).is_empty()
        );
        assert!(is_safe_relative("a/b.cf32") && is_safe_relative("./a"));
        assert!(!is_safe_relative("") && !is_safe_relative("\\\\server\\x"));
    }

    #[test]
    fn md_json_disagreement() {
        let d = tempfile::TempDir::new().unwrap();
        let r = ran(d.path());
        write_result_files(d.path(), &r).unwrap();
        let j = d.path().join(RESULT_JSON);
        let m = d.path().join(RESULT_MD);
        let md = std::fs::read_to_string(&m).unwrap();
        // JSON edited after rendering: hash no longer matches.
        let json = std::fs::read_to_string(&j).unwrap();
        std::fs::write(&j, json.replace("1 device", "2 devices")).unwrap();
        expect(&validate_result_files(&j, d.path()), "does not match");
        std::fs::write(&j, &json).unwrap();
        assert!(validate_result_files(&j, d.path()).is_empty());
        // Markdown status row edited.
        std::fs::write(&m, md.replace("| Status | PASS |", "| Status | FAIL |")).unwrap();
        expect(
            &validate_result_files(&j, d.path()),
            "summary row `| Status | PASS |` not found",
        );
        std::fs::write(
            &m,
            md.replace(
                "| 2 | step 2: rx_capture | PASS |",
                "| 2 | step 2: rx_capture | FAIL |",
            ),
        )
        .unwrap();
        expect(
            &validate_result_files(&j, d.path()),
            "check row `| 2 | step 2: rx_capture | PASS |`",
        );
        std::fs::write(&m, md.replace("status=\"PASS\"", "status=\"FAIL\"")).unwrap();
        expect(&validate_result_files(&j, d.path()), "trailer status");
        let no_trailer: String = md
            .lines()
            .filter(|l| !l.starts_with("<!--"))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&m, no_trailer).unwrap();
        expect(&validate_result_files(&j, d.path()), "trailer line");
        std::fs::remove_file(&m).unwrap();
        expect(
            &validate_result_files(&j, d.path()),
            "cannot read the Markdown twin",
        );
    }

    #[test]
    fn unreadable_json() {
        let d = tempfile::TempDir::new().unwrap();
        let j = d.path().join(RESULT_JSON);
        expect(&validate_result_files(&j, d.path()), "cannot read");
        std::fs::write(&j, b"{not json").unwrap();
        expect(&validate_result_files(&j, d.path()), "not valid JSON");
        std::fs::write(&j, b"[]").unwrap();
        expect(
            &validate_result_files(&j, d.path()),
            "must be a JSON object",
        );
        std::fs::write(&j, b"\xff\xfe").unwrap();
        expect(&validate_result_files(&j, d.path()), "not valid JSON");
    }

    #[test]
    fn sparkline_shape() {
        assert_eq!(sparkline(&[], 10), None);
        assert_eq!(sparkline(&[f64::NAN], 10), None);
        assert_eq!(sparkline(&[0.0, 7.0], 10).unwrap(), "▁█");
        assert_eq!(sparkline(&[1.0, 1.0, 1.0], 10).unwrap(), "▁▁▁");
        let wide: Vec<f64> = (0..1000)
            .map(|i| if i == 500 { 0.0 } else { -90.0 })
            .collect();
        let s = sparkline(&wide, 64).unwrap();
        assert_eq!(s.chars().count(), 64);
        assert_eq!(
            s.chars().filter(|c| *c == '█').count(),
            1,
            "a one-bin tone stays visible"
        );
    }

    proptest::proptest! {
        /// PASS exactly when there are checks and all passed; FAIL only when
        /// something failed; never PASS with anything that did not run.
        #[test]
        fn overall_is_honest(idx in proptest::collection::vec(0usize..6, 0..8)) {
            let checks: Vec<Check> = idx.iter().map(|i| Check::new("c", Status::ALL[*i], "")).collect();
            let o = overall_status(&checks);
            let all_pass = !checks.is_empty() && checks.iter().all(|c| c.status == Status::Pass);
            proptest::prop_assert_eq!(o == Status::Pass, all_pass);
            if o == Status::Fail {
                proptest::prop_assert!(checks.iter().any(|c| c.status == Status::Fail));
            }
            if checks.iter().any(|c| c.status == Status::Fail) {
                proptest::prop_assert!(matches!(o, Status::Fail | Status::Partial));
            }
        }
    }

    #[test]
    fn spectrum_png() {
        let d = tempfile::TempDir::new().unwrap();
        let r = ran(d.path());
        let files = write_spectrum_pngs(d.path(), &r).unwrap();
        assert_eq!(files, vec![d.path().join("SPECTRUM_1.png")]);
        let b = std::fs::read(&files[0]).unwrap();
        assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
        assert!(write_spectrum_png(&d.path().join("x.png"), &[f64::NAN]).is_err());
        let mut r2 = r.clone();
        r2.captures[0]["psd_db"] = Value::Null;
        assert!(write_spectrum_pngs(d.path(), &r2).unwrap().is_empty());
    }

    /// The golden result (`fixtures/results/FIX_YELLOW_001/`): the acceptance
    /// shape of issue 6 (two captures, CLKIN PASS then FAIL ⇒ overall FAIL).
    fn golden() -> RxResult {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("fixtures/valid_yellow_rx.md")).unwrap();
        let t = validate_task(&text, &ValidateOptions::default()).unwrap();
        let a = Approval::new(&t, COMMIT, "2026-01-01T10:00:00+00:00");
        let mut r = RxResult::manual_skeleton(&t, COMMIT, Some(&a));
        r.node.soapysdr_version = Some("0.8.1".into());
        r.timeline = Timeline {
            started_at: Some("2026-01-01T10:05:00+00:00".into()),
            completed_at: Some("2026-01-01T10:05:09+00:00".into()),
        };
        r.checks = vec![
            Check::new(
                "step 1: inventory",
                Status::Pass,
                "1 device: driver=rxsim,serial=SIM0",
            ),
            Check::new(
                "step 2: clock_check",
                Status::Pass,
                "clock source external, as expected",
            ),
            Check::new(
                "step 3: rx_capture",
                Status::Pass,
                "4000000 of 4000000 samples, 0 overflows",
            ),
            Check::new(
                "capture 1: clkin",
                Status::Fail,
                "+2.5012 ppm ± 0.0040 ppm exceeds 0.5 ppm",
            ),
        ];
        r.status = overall_status(&r.checks);
        r.inventory =
            Some(json!([{"driver": "rxsim", "serial": "SIM0", "label": "rxsim simulated radio"}]));
        let psd: Vec<f64> = (0..128)
            .map(|i| {
                if i == 77 {
                    -18.0
                } else {
                    -80.0 + ((i * 37) % 11) as f64 * 0.3
                }
            })
            .collect();
        r.captures = vec![json!({
            "device": {"driver": "rxsim", "serial": "SIM0"},
            "requested": {"frequency_hz": 100.0e6, "sample_rate_hz": 2.0e6, "gain_db": 20.0, "bandwidth_hz": null},
            "actual": {"frequency_hz": 100.0e6, "sample_rate_hz": 2.0e6, "gain_db": 20.0, "bandwidth_hz": 2.0e6},
            "samples_requested": 4000000, "samples_received": 4000000,
            "overflows": 0, "dropped_samples": 0, "timeouts": 0, "duration_s": 2.0,
            "peaks": [{"frequency_hz": 100099749.6, "power_db": -18.0, "snr_db": 62.0}],
            "noise_floor_db": -79.4, "mean_power_dbfs": -60.2, "clipped_fraction": 0.0,
            "clkin": {"tone_hz": 100.1e6, "measured_hz": 100099749.6, "ppm": 2.5012,
                      "ppm_uncertainty": 0.004, "status": "FAIL"},
            "iq_files": [{"path": ".local/rx_iq/FIX_YELLOW_001/capture_3.sigmf-data", "format": "sigmf",
                          "bytes": 32000000, "sha256": "5".repeat(64)}],
            "psd_db": psd,
            "status": "FAIL"
        })];
        r
    }

    /// Golden files: the JSON and Markdown this build renders for [`golden`].
    /// `RXNODE_BLESS=1 cargo test --bin rxnode golden` rewrites them.
    #[test]
    fn golden_result_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/results/FIX_YELLOW_001");
        let r = golden();
        assert_eq!(r.status, Status::Fail);
        if std::env::var_os("RXNODE_BLESS").is_some() {
            write_result_files(&dir, &r).unwrap();
        }
        for (name, got) in [
            (RESULT_JSON, String::from_utf8(r.to_json_bytes()).unwrap()),
            (RESULT_MD, render_markdown(&r)),
        ] {
            let want = std::fs::read_to_string(dir.join(name)).unwrap();
            if want != got {
                let (i, (w, g)) = want
                    .lines()
                    .zip(got.lines())
                    .enumerate()
                    .find(|(_, (w, g))| w != g)
                    .unwrap_or((0, ("(length differs)", "(length differs)")));
                panic!(
                    "{name} differs at line {}:\nexpected: {w}\n     got: {g}",
                    i + 1
                );
            }
        }
        // The golden files validate (their IQ file is not on disk: not checked).
        let p = validate_result_files(
            &dir.join(RESULT_JSON),
            Path::new(env!("CARGO_MANIFEST_DIR")),
        );
        assert!(p.is_empty(), "{p:#?}");
        // And the JSON reads back to the same value.
        let back: RxResult =
            serde_json::from_slice(&std::fs::read(dir.join(RESULT_JSON)).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Whatever the check names, details, errors and title hold (pipes,
        /// newlines, backticks, Unicode), the two written files validate.
        #[test]
        fn any_text_round_trips(
            checks in proptest::collection::vec(("(\\PC|[|\\n\\r`\\\\]){0,30}", 0usize..6, "(\\PC|[|\\n\\r]){0,40}"), 0..6),
            title in "\\PC{1,60}",
            errors in proptest::collection::vec("\\PC{0,40}", 0..3),
            with_time in proptest::bool::ANY,
        ) {
            let d = tempfile::TempDir::new().unwrap();
            let mut r = RxResult::manual_skeleton(&task(false), COMMIT, None);
            r.task_title = title;
            r.errors = errors;
            r.checks = checks.into_iter().map(|(n, i, det)| Check::new(n, Status::ALL[i], det)).collect();
            r.recompute_status();
            if with_time || matches!(r.status, Status::Pass | Status::Fail | Status::Partial) {
                r.timeline = Timeline {
                    started_at: Some("2026-01-01T10:05:00+00:00".into()),
                    completed_at: Some("2026-01-01T10:05:00+00:00".into()),
                };
            }
            write_result_files(d.path(), &r).unwrap();
            let p = validate_result_files(&d.path().join(RESULT_JSON), d.path());
            // Issue 13: text that holds an absolute path (any OS) is refused for
            // that reason and no other; any other text validates.
            let texts: Vec<&str> = std::iter::once(r.task_title.as_str())
                .chain(r.errors.iter().map(String::as_str))
                .chain(r.checks.iter().flat_map(|c| [c.name.as_str(), c.detail.as_str()]))
                .collect();
            if texts.iter().any(|t| absolute_path_in(t).is_some()) {
                proptest::prop_assert!(!p.is_empty());
                proptest::prop_assert!(p.iter().all(|x| x.contains("holds the absolute path")), "{:#?}", p);
            } else {
                proptest::prop_assert!(p.is_empty(), "{:#?}", p);
            }
        }
    }

    #[test]
    fn write_raw_helper_round_trip() {
        let d = tempfile::TempDir::new().unwrap();
        let v = serde_json::to_value(ran(d.path())).unwrap();
        let j = write_raw(d.path(), &v);
        assert!(validate_result_files(&j, d.path()).is_empty());
    }
}
