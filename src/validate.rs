//! `rxnode validate FILE`: parse and check a task file.
use crate::context::Ctx;
use crate::exit::{bad_input, Outcome};
use anyhow::{Context, Result};
use rxnode_interlock::{
    validate_task_bytes, Issue, Policy, ValidTask, ValidateOptions, MAX_TASK_BYTES,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Read a task file, refusing anything over 1 MiB without reading it whole.
pub(crate) fn read_task_file(path: &Path) -> Result<Vec<u8>> {
    use crate::store::fsutil::{read_named_file, NamedFileError as E};
    match read_named_file(path, MAX_TASK_BYTES as u64) {
        Ok(b) => Ok(b),
        // A file that is not there is bad input (exit 2), like any other bad FILE.
        Err(E::Missing(e)) if e.kind() == std::io::ErrorKind::NotFound => Err(bad_input(format!(
            "cannot open task file {}: {e}",
            path.display()
        ))),
        Err(E::Missing(e)) => {
            Err(e).with_context(|| format!("cannot open task file {}", path.display()))
        }
        Err(E::NotRegular) => Err(bad_input(format!(
            "{} is not a regular file",
            path.display()
        ))),
        Err(E::TooBig { len, .. }) => Err(bad_input(format!(
            "{}: task file is {} bytes; at most {MAX_TASK_BYTES} (1 MiB)",
            path.display(),
            len.map_or_else(|| format!("more than {MAX_TASK_BYTES}"), |n| n.to_string())
        ))),
        Err(E::Io(e)) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Validate bytes as a task for the given watched branch.
pub(crate) fn check(bytes: &[u8], branch: &str) -> Result<ValidTask, Vec<Issue>> {
    validate_task_bytes(
        bytes,
        &ValidateOptions {
            watched_branch: branch.to_owned(),
        },
    )
}

/// Every issue of a refused task text on one line, `; `-separated (as
/// records and messages quote them).
pub(crate) fn issue_list(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

#[derive(Serialize)]
struct Report<'a> {
    valid: bool,
    task_id: Option<&'a str>,
    risk_level: Option<&'static str>,
    /// Why the risk is what it is, one line each (empty when invalid).
    risk_reasons: &'a [String],
    /// SHA-256 (hex) of the file's bytes: the `task_sha256` a node records in
    /// its result and `LOG_META.json`; `null` when invalid.
    task_sha256: Option<&'a str>,
    errors: Vec<Issue>,
    /// `TARGET_NODES`, when the task names nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    target_nodes: Option<&'a [String]>,
    /// The policy file the verdicts are against (`--policy`), if one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<String>,
    /// Each plan step in plain units, with the policy's verdict when one was given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    steps: Vec<crate::describe::StepView>,
}

/// The policy named by `--policy` / `RXNODE_POLICY`, read as `rxnode run` parses
/// it; `None` when none was named. A file that is missing or invalid is bad input.
fn named_policy(ctx: &Ctx) -> Result<Option<(String, Policy)>> {
    let Some(p) = &ctx.policy else {
        return Ok(None);
    };
    use crate::store::fsutil::{read_named_file, NamedFileError as E};
    let name = p.display().to_string();
    let bytes = read_named_file(p, Policy::MAX_FILE_BYTES).map_err(|e| match e {
        E::Missing(e) | E::Io(e) => bad_input(format!("policy {name}: {e}")),
        E::NotRegular | E::TooBig { .. } => bad_input(format!(
            "policy {name}: not a regular file of at most 1 MiB"
        )),
    })?;
    let text = Policy::text_of(bytes).map_err(|e| bad_input(format!("policy {name} {e}")))?;
    let pol = Policy::from_json(&text)
        .map_err(|e| bad_input(format!("{name}: {e} — fix: {}", Policy::repair_fix(&name))))?;
    Ok(Some((name, pol)))
}

/// The command.
pub fn cmd_validate(ctx: &Ctx, file: &Path) -> Result<Outcome> {
    let policy = named_policy(ctx)?;
    let result = match read_task_file(file) {
        Ok(bytes) => check(&bytes, &ctx.source.branch),
        Err(e) => {
            if e.downcast_ref::<crate::exit::BadInput>().is_some() {
                Err(vec![Issue::new(None, None, e.to_string())])
            } else {
                return Err(e);
            }
        }
    };
    let name = file.display().to_string();
    match &result {
        Ok(task) => {
            let r = Report {
                valid: true,
                task_id: Some(task.id().as_str()),
                risk_level: Some(task.risk().as_str()),
                risk_reasons: task.risk_reasons(),
                task_sha256: Some(task.sha256()),
                errors: vec![],
                target_nodes: task.header().target_nodes.as_deref(),
                policy: policy.as_ref().map(|p| p.0.clone()),
                steps: task
                    .plan()
                    .map(|p| crate::describe::steps(p, policy.as_ref().map(|p| &p.1)))
                    .unwrap_or_default(),
            };
            // The verdict is the status: a closed pipe (`| head`) does not change it.
            ctx.report_to_pipe(&r, |_| render_valid(&name, task, policy.as_ref()))?;
            Ok(Outcome::Done)
        }
        Err(issues) => {
            let r = Report {
                valid: false,
                task_id: None,
                risk_level: None,
                risk_reasons: &[],
                task_sha256: None,
                errors: issues.clone(),
                target_nodes: None,
                policy: None,
                steps: Vec::new(),
            };
            // The issues go to stderr; the report on stdout is empty.
            ctx.report_to_pipe(&r, |_| {
                print_invalid(&name, issues);
                String::new()
            })?;
            Ok(Outcome::Code(2))
        }
    }
}

/// A valid task for a person, as text: ID and title, risk and why, target nodes, the plan
/// (with the policy's verdict per step when one was named), the text's hash.
fn render_valid(name: &str, task: &ValidTask, policy: Option<&(String, Policy)>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{name}: valid");
    let _ = writeln!(
        out,
        "  task:  {} — {}",
        task.id(),
        crate::describe::escaped(&task.header().task_title)
    );
    let _ = writeln!(out, "  risk:  {}", task.risk());
    for r in task.risk_reasons() {
        let _ = writeln!(out, "         {r}");
    }
    if let Some(t) = &task.header().target_nodes {
        let _ = writeln!(
            out,
            "  nodes: {} (TARGET_NODES; other nodes never run it)",
            t.join(", ")
        );
    }
    match task.plan() {
        Some(p) => {
            let _ = match &policy {
                Some((name, _)) => writeln!(
                    out,
                    "  plan:  {} step(s), each with the verdict of the policy {}",
                    p.steps.len(),
                    crate::describe::escaped(name)
                ),
                None => writeln!(
                    out,
                    "  plan:  {} step(s) (add --policy FILE for a node's verdict per step)",
                    p.steps.len()
                ),
            };
            for l in crate::describe::plan_lines(p, policy.as_ref().map(|p| &p.1), "         ") {
                let _ = writeln!(out, "{l}");
            }
        }
        None => {
            let _ = writeln!(out, "  plan:  none (manual task: nothing touches hardware)");
        }
    }
    let _ = writeln!(out, "  sha256: {}", task.sha256());
    out
}

/// The issues of an invalid task for a person, on stderr, one line each.
fn print_invalid(name: &str, issues: &[Issue]) {
    for i in issues {
        // Print only what is known: "file: msg", "file:7: msg", "file:7: FIELD: msg".
        let line = i.line.map(|l| format!(":{l}")).unwrap_or_default();
        let field = i
            .field
            .as_deref()
            .map(|f| format!(" {f}:"))
            .unwrap_or_default();
        // A read error already starts with the name: say it once.
        let prefix = format!("{name}: ");
        let msg = i.message.strip_prefix(&prefix).unwrap_or(&i.message);
        note!("{name}{line}:{field} {msg}");
    }
    note!("{name}: invalid ({} error(s))", issues.len());
}
