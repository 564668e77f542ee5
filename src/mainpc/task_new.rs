//! `rxnode task new --id ID --title T [--hardware] [--rx] [--tx] [--risk R]
//! [--plan FILE|-] [--body FILE] [--no-push] [--out PATH] [--force] [--node NAME]…`: the main PC
//! writes a task file that the watcher will accept (docs/protocol.md#6-the-main-pcs-side).
//!
//! `EXPECTED_HEAD` is the head of the **local** watched branch (`refs/heads/<branch>`):
//! that is the commit the user's task commit will sit on, so it is a strict ancestor
//! of the commit that holds the task, as the watcher requires. Only when there is no
//! local branch is the remote-tracking head used (as last fetched; nothing is
//! fetched here). The file is validated with the watcher's own validator before it
//! is written; nothing is committed or pushed — the exact commands are printed.
use crate::context::Ctx;
use crate::exit::{bad_field, bad_input, Outcome};
use anyhow::{Context, Result};
use git2::{ErrorCode, Oid, Repository};
use rxnode_interlock::{RiskLevel, TaskId, ValidTask};
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest plan read from a file or stdin.
const MAX_PLAN_BYTES: u64 = 256 * 1024;

/// The task to write: the options and what was read and checked for them.
struct Draft<'a> {
    a: &'a TaskNewOptions,
    id: &'a TaskId,
    branch: &'a str,
    /// `EXPECTED_HEAD`.
    head: String,
    risk: Option<RiskLevel>,
    plan: Option<String>,
    body: Option<String>,
}

/// Which head `EXPECTED_HEAD` was taken from.
struct Head {
    oid: Oid,
    /// `refs/heads/<branch>` or `refs/remotes/<remote>/<branch>`.
    refname: String,
    /// Warnings for the user (behind the remote, HEAD elsewhere).
    notes: Vec<String>,
    /// HEAD is on the watched branch.
    on_branch: bool,
}

/// `task new` options (the watched branch is the global `--branch`).
#[derive(Debug, Clone, clap::Args)]
pub struct TaskNewOptions {
    /// TASK_ID (`[A-Za-z0-9_-]{1,64}`).
    #[arg(long)]
    pub id: String,
    /// TASK_TITLE (one line, at most 200 characters).
    #[arg(long)]
    pub title: String,
    /// HARDWARE_ACCESS = YES.
    #[arg(long)]
    pub hardware: bool,
    /// RF_RX = YES (implies --hardware).
    #[arg(long)]
    pub rx: bool,
    /// RF_TX = YES (implies --hardware; RED).
    #[arg(long)]
    pub tx: bool,
    /// Declared RISK_LEVEL (any case); never lower than the derived one.
    #[arg(long, ignore_case = true, value_parser = crate::options::risk_level())]
    pub risk: Option<RiskLevel>,
    /// The rx-plan JSON: a file, or `-` for stdin.
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// A Markdown body file (the text the operator reads); default: the title.
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// ALLOW_PUSH = NO instead of RX_RESULT_ONLY.
    #[arg(long)]
    pub no_push: bool,
    /// Where to write it (default: the task path inside --repo).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
    /// Only this node may be offered the task (TARGET_NODES); repeat for several.
    /// Default: every node.
    #[arg(long = "node", value_name = "NAME")]
    pub nodes: Vec<String>,
}

/// The command: check the options, compose the task, validate it as the
/// watcher will, write it (never over a file without `--force`), report.
pub fn cmd_task_new(ctx: &Ctx, a: &TaskNewOptions) -> Result<Outcome> {
    let branch = ctx.source.branch.as_str();
    let (id, risk) = check_options(a)?;
    let repo = Repository::open(&ctx.repo).map_err(|e| {
        crate::git::ops::path_too_long(&ctx.repo, &e).unwrap_or_else(|| {
            anyhow::Error::new(e).context(format!(
                "{} is not a Git repository (run task new in the main PC's clone)",
                ctx.repo.display()
            ))
        })
    })?;
    let head = watched_head(&repo, &ctx.source.remote, branch)?;
    let draft = Draft {
        a,
        id: &id,
        branch,
        head: head.oid.to_string(),
        risk,
        plan: read_plan(a.plan.as_deref())?,
        body: read_body(a.body.as_deref())?,
    };
    let text = render(&draft);
    let task = validate_text(&text, branch)?;
    same_plan_as_given(&draft, &task, branch)?;
    let (out, rel) = out_path(ctx, a)?;
    write_new(&out, a.force, &id, &text)?;
    let warnings = warnings(&task);
    let commands = git_commands(ctx, &head, rel.as_deref(), &out, &id, &a.title);
    let written = Written {
        id: &id,
        out: &out,
        task: &task,
        head: &head,
        commands: &commands,
        warnings: &warnings,
    };
    ctx.report(&written.json(), |_| written.render_report())?;
    Ok(Outcome::Done)
}

/// `id`, `title` and `nodes` checked: the ID, and the declared risk level (typed
/// by the command line). A refusal names the option's field.
fn check_options(a: &TaskNewOptions) -> Result<(TaskId, Option<RiskLevel>)> {
    let id = TaskId::parse(&a.id).map_err(|e| bad_field("id", format!(": {e}")))?;
    if a.title.chars().any(char::is_control) {
        return Err(bad_field(
            "title",
            ": must be one line without control characters (it becomes the TASK_TITLE header line)",
        ));
    }
    for (i, n) in a.nodes.iter().enumerate() {
        rxnode_interlock::check_node_name(n).map_err(|e| bad_field("nodes", format!(": {e}")))?;
        if a.nodes[..i].contains(n) {
            return Err(bad_field("nodes", format!(" {n} is given twice")));
        }
    }
    Ok((id, a.risk))
}

/// The `body` file's text (UTF-8, bounded), when given.
///
/// A body that would change how the task reads — a plan fence of its own, a code
/// fence or HTML comment it opens and never closes (which would take in the plan
/// after it) — is refused naming its line (docs/protocol.md#6-the-main-pcs-side).
fn read_body(p: Option<&Path>) -> Result<Option<String>> {
    let Some(p) = p else { return Ok(None) };
    let b = read_limited(p, MAX_PLAN_BYTES, "body")?;
    let text = String::from_utf8(b)
        .map_err(|_| bad_field("body", format!(" {}: not UTF-8", p.display())))?;
    let text = text.trim_start_matches('\u{feff}').to_owned();
    if let Some((line, why)) = rxnode_interlock::body_changes_what_follows(&text) {
        return Err(bad_field(
            "body",
            format!(" {} line {line} {why}; nothing was written", p.display()),
        ));
    }
    Ok(Some(text))
}

/// The plan the written file carries, as the node reads it, must be the one given
/// with `--plan` (or none without it): the body cannot change what runs.
fn same_plan_as_given(d: &Draft<'_>, task: &ValidTask, branch: &str) -> Result<()> {
    let given = match d.plan {
        Some(_) => {
            let alone = render(&Draft {
                a: d.a,
                id: d.id,
                branch: d.branch,
                head: d.head.clone(),
                risk: d.risk,
                plan: d.plan.clone(),
                body: None,
            });
            crate::validate::check(alone.as_bytes(), branch)
                .ok()
                .and_then(|t| t.plan().cloned())
        }
        None => None,
    };
    if task.plan() == given.as_ref() {
        return Ok(());
    }
    let seen = match task.plan() {
        Some(p) => format!("a plan of {} step(s)", p.steps.len()),
        None => "no plan (a manual task)".to_owned(),
    };
    Err(bad_input(format!(
        "the task file would carry {seen}, not the plan given with --plan: the --body text \
         changes how the file reads; nothing was written"
    )))
}

/// Exactly the watcher's validation: header, risk, conflicts, plan.
fn validate_text(text: &str, branch: &str) -> Result<ValidTask> {
    match crate::validate::check(text.as_bytes(), branch) {
        Ok(t) => Ok(t),
        Err(issues) => {
            // The interlock's own rendering ("line 7: RF_RX: …"), as `validate` prints it,
            // with the flag of this command that sets the field.
            let list: Vec<String> = issues
                .iter()
                .map(|i| match flag_for(i.field.as_deref()) {
                    // A declared risk below the derived one: --risk was given, and
                    // too low — "add --risk" would not help.
                    Some("--risk") => format!(
                        "{i} — fix: drop --risk (the risk is derived from the task) or give \
                         --risk at least as high as the derived level"
                    ),
                    Some(f) => format!("{i} — fix: add {f}"),
                    None => i.to_string(),
                })
                .collect();
            Err(bad_input(format!(
                "the task would not validate; nothing was written:\n  {}",
                list.join("\n  ")
            )))
        }
    }
}

/// The `task new` flag that sets a header field the task needs.
fn flag_for(field: Option<&str>) -> Option<&'static str> {
    match field? {
        "RF_RX" => Some("--rx"),
        "RF_TX" => Some("--tx"),
        "HARDWARE_ACCESS" => Some("--hardware"),
        "RISK_LEVEL" => Some("--risk"),
        _ => None,
    }
}

/// Steps a node with a gain limit would BLOCK: an RX step without `gain_db`
/// (docs/decisions.md, "RX gain under a gain limit").
fn warnings(task: &ValidTask) -> Vec<String> {
    let Some(plan) = task.plan() else {
        return Vec::new();
    };
    plan.steps
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.rx_gain(), Some(None)))
        .map(|(i, s)| {
            format!(
                "step {} ({}) has no gain_db: a node whose policy sets rx.max_gain_db will BLOCK it; give the gain in dB",
                i + 1,
                s.op()
            )
        })
        .collect()
}

/// Write the task at `out`, in place of the task file there: refused only when
/// that file holds the same TASK_ID with another text (a revised task needs a
/// new ID; `--force` overrides), and never in place of something that is not a
/// regular file.
fn write_new(out: &Path, force: bool, id: &TaskId, text: &str) -> Result<()> {
    if let (Ok(old), false) = (crate::store::fsutil::read(out), force) {
        let same_id = rxnode_interlock::lenient_task_id(&old).is_some_and(|o| &o == id);
        if same_id && old != text.as_bytes() {
            return Err(bad_input(format!(
                "{} already holds task {id} with another text; a revised task needs a new --id (nodes refuse a known ID whose text changed), or --force to replace the draft",
                out.display()
            )));
        }
    }
    if let Ok(m) = std::fs::symlink_metadata(out) {
        if !m.is_file() {
            return Err(bad_input(format!(
                "{} is not a regular file; not replaced",
                out.display()
            )));
        }
    }
    crate::store::fsutil::write_atomic(out, text.as_bytes())
}

/// What was written, for the report.
struct Written<'a> {
    id: &'a TaskId,
    out: &'a Path,
    task: &'a ValidTask,
    head: &'a Head,
    commands: &'a [String],
    warnings: &'a [String],
}

impl Written<'_> {
    /// The `--json` report.
    fn json(&self) -> serde_json::Value {
        let (id, out, task, head, commands) =
            (self.id, self.out, self.task, self.head, self.commands);
        json!({
            "task_id": id.as_str(),
            "path": out.display().to_string(),
            "risk_level": task.risk().as_str(),
            "derived_risk": task.derived_risk().as_str(),
            "risk_reasons": task.risk_reasons(),
            "expected_head": head.oid.to_string(),
            "expected_head_ref": head.refname,
            "task_sha256": task.sha256(),
            "steps": task.plan().map(|p| p.steps.iter().map(|s| s.op()).collect::<Vec<_>>()).unwrap_or_default(),
            "notes": head.notes,
            "commands": commands,
            "warnings": self.warnings,
        })
    }

    /// The human report: risk, plan, EXPECTED_HEAD and the commands to post it.
    fn render_report(&self) -> String {
        use std::fmt::Write as _;
        let (id, out, task, head, commands) =
            (self.id, self.out, self.task, self.head, self.commands);
        let mut text = String::new();
        let _ = writeln!(text, "wrote {} (task {id}, valid)", out.display());
        let _ = writeln!(text, "  risk:          {}", task.risk());
        for r in task.risk_reasons() {
            let _ = writeln!(text, "                 {r}");
        }
        let _ = match task.plan() {
            Some(p) => writeln!(
                text,
                "  plan:          {} step(s): {}",
                p.steps.len(),
                p.steps
                    .iter()
                    .map(|s| s.op())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => writeln!(
                text,
                "  plan:          none (a manual task: nothing touches hardware)"
            ),
        };
        let _ = writeln!(
            text,
            "  EXPECTED_HEAD: {} = {} — the commit your task commit will sit on, so a strict ancestor of it as the watcher requires",
            head.oid, head.refname
        );
        for n in &head.notes {
            let _ = writeln!(text, "  note:          {n}");
        }
        for w in self.warnings {
            let _ = writeln!(text, "  warning:       {w}");
        }
        let _ = writeln!(
            text,
            "Nothing was committed or pushed. To post the task, run:"
        );
        for c in commands {
            let _ = writeln!(text, "  {c}");
        }
        let _ = writeln!(
            text,
            "`-S` signs the commit with your SSH key (set up once: docs/operator.md#signing-tasks); a node that requires signatures rejects an unsigned task."
        );
        text
    }
}

/// The head of the watched branch: local first, else remote-tracking.
fn watched_head(repo: &Repository, remote: &str, branch: &str) -> Result<Head> {
    let local = format!("refs/heads/{branch}");
    let tracking = crate::git::ops::tracking_ref(remote, branch);
    let get = |name: &str| -> Result<Option<Oid>> {
        match repo.find_reference(name) {
            Ok(r) => Ok(Some(
                r.peel_to_commit()
                    .with_context(|| format!("{name} does not point to a commit"))?
                    .id(),
            )),
            Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
                Ok(None)
            }
            Err(e) => Err(anyhow::anyhow!("cannot read {name}: {}", e.message())),
        }
    };
    let l = get(&local)?;
    let t = get(&tracking)?;
    let on_branch = repo
        .find_reference("HEAD")
        .ok()
        .and_then(|h| h.symbolic_target().map(|s| s == local))
        .unwrap_or(false);
    let mut notes = Vec::new();
    let (oid, refname) = match (l, t) {
        (Some(l), t) => {
            if let Some(t) = t {
                if t != l && repo.graph_descendant_of(t, l).unwrap_or(false) {
                    notes.push(format!(
                        "{local} is behind {tracking} ({t}); the push will be refused until you pull — \
                         EXPECTED_HEAD stays valid after a rebase (it remains an ancestor)"
                    ));
                }
            }
            (l, local)
        }
        (None, Some(t)) => {
            notes.push(format!(
                "no local branch {branch}: EXPECTED_HEAD is {tracking} as last fetched; check the branch out before committing"
            ));
            (t, tracking)
        }
        (None, None) => {
            return Err(bad_input(format!(
                "neither {local} nor {tracking} exists in {}: clone the project (or pass --branch) first",
                repo.path().display()
            )))
        }
    };
    if !on_branch {
        notes.push(format!(
            "HEAD is not on {branch}; commit the task on {branch} (`git switch {branch}` first)"
        ));
    }
    Ok(Head {
        oid,
        refname,
        notes,
        on_branch,
    })
}

/// The file `p` named by the option `field`, at most `max` bytes.
fn read_limited(p: &Path, max: u64, field: &'static str) -> Result<Vec<u8>> {
    use crate::store::fsutil::{read_named_file, NamedFileError as E};
    read_named_file(p, max).map_err(|e| match e {
        E::Missing(e) | E::Io(e) => bad_field(field, format!(" {}: {e}", p.display())),
        e => bad_field(field, format!(" {}: {e}", p.display())),
    })
}

/// The plan JSON text (from a file or `-` = stdin), without a trailing newline.
fn read_plan(p: Option<&Path>) -> Result<Option<String>> {
    let Some(p) = p else { return Ok(None) };
    let bytes = if p == Path::new("-") {
        let mut b = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_PLAN_BYTES + 1)
            .read_to_end(&mut b)
            .context("cannot read the plan from stdin")?;
        if b.len() as u64 > MAX_PLAN_BYTES {
            return Err(bad_field(
                "plan",
                format!(" -: more than {MAX_PLAN_BYTES} bytes on stdin"),
            ));
        }
        b
    } else {
        read_limited(p, MAX_PLAN_BYTES, "plan")?
    };
    let text = String::from_utf8(bytes).map_err(|_| bad_field("plan", ": not UTF-8"))?;
    let text = text.trim_start_matches('\u{feff}').trim().to_owned();
    if text.is_empty() {
        return Err(bad_field("plan", ": empty"));
    }
    // A fence inside the plan would end the block early (or open a second one).
    if text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("```") || t.starts_with("~~~")
    }) {
        return Err(bad_field(
            "plan",
            ": contains a Markdown fence line; give the plan's JSON only",
        ));
    }
    Ok(Some(text))
}

fn yes(b: bool) -> &'static str {
    if b {
        "YES"
    } else {
        "NO"
    }
}

fn render(d: &Draft<'_>) -> String {
    let (a, id, branch, head, risk) = (d.a, d.id, d.branch, &d.head, d.risk);
    let (plan, body) = (d.plan.as_deref(), d.body.as_deref());
    let hardware = a.hardware || a.rx || a.tx;
    let mut t = String::new();
    t.push_str(&format!("TASK_ID = {}\n", id.as_str()));
    t.push_str(&format!("TASK_TITLE = {}\n", a.title.trim()));
    t.push_str(&format!("SOURCE_BRANCH = {branch}\n"));
    t.push_str(&format!("EXPECTED_HEAD = {head}\n"));
    t.push_str("REQUIRES_APPROVAL = YES\n");
    t.push_str(&format!("HARDWARE_ACCESS = {}\n", yes(hardware)));
    t.push_str(&format!("RF_RX = {}\n", yes(a.rx)));
    t.push_str(&format!("RF_TX = {}\n", yes(a.tx)));
    t.push_str("ALLOW_COMMIT = NO\n");
    t.push_str(&format!(
        "ALLOW_PUSH = {}\n",
        if a.no_push { "NO" } else { "RX_RESULT_ONLY" }
    ));
    if let Some(r) = risk {
        t.push_str(&format!("RISK_LEVEL = {}\n", r.as_str()));
    }
    if !a.nodes.is_empty() {
        t.push_str(&format!("TARGET_NODES = {}\n", a.nodes.join(", ")));
    }
    t.push('\n');
    t.push_str(&format!("# {}\n\n", a.title.trim()));
    match body {
        Some(b) => {
            t.push_str(b.trim_end());
            t.push_str("\n\n");
        }
        None => t.push_str("Written with `rxnode task new`.\n\n"),
    }
    if let Some(p) = plan {
        t.push_str("```rx-plan\n");
        t.push_str(p);
        t.push_str("\n```\n");
    }
    t
}

/// Where to write: `--out`, else the task path inside `--repo`. Also the path
/// relative to the work tree, when the file lies in it.
fn out_path(ctx: &Ctx, a: &TaskNewOptions) -> Result<(PathBuf, Option<String>)> {
    let task_path = &ctx.source.task_path;
    if !crate::result::is_safe_relative(task_path) {
        return Err(bad_field(
            "task_path",
            format!(" {task_path:?} must be relative, without '..'"),
        ));
    }
    let out = match &a.out {
        Some(p) => p.clone(),
        // The task file itself: no copy to print.
        None => return Ok((ctx.repo.join(task_path), Some(task_path.clone()))),
    };
    let rel = match (
        out.canonicalize().ok().or_else(|| {
            out.parent()
                .and_then(|p| p.canonicalize().ok())
                .and_then(|p| out.file_name().map(|n| p.join(n)))
        }),
        ctx.repo.canonicalize().ok(),
    ) {
        (Some(o), Some(r)) => o
            .strip_prefix(&r)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/")),
        _ => None,
    };
    Ok((out, rel))
}

/// POSIX shell single-quoting.
fn sh(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@=+,".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn git_commands(
    ctx: &Ctx,
    head: &Head,
    rel: Option<&str>,
    out: &Path,
    id: &TaskId,
    title: &str,
) -> Vec<String> {
    let branch = &ctx.source.branch;
    let repo = ctx.repo.display().to_string();
    let g = if repo == "." {
        "git".to_owned()
    } else {
        format!("git -C {}", sh(&repo))
    };
    let mut c = Vec::new();
    if !head.on_branch {
        c.push(format!("{g} switch {}", sh(branch)));
    }
    let task_path = &ctx.source.task_path;
    if rel != Some(task_path.as_str()) {
        c.push(format!(
            "cp {} {}",
            sh(&out.display().to_string()),
            sh(&ctx.repo.join(task_path).display().to_string())
        ));
    }
    c.push(format!("{g} add {}", sh(task_path)));
    // Signed (`-S`): a node whose policy requires signatures rejects an unsigned
    // task (docs/operator.md#signing-tasks).
    c.push(format!(
        "{g} commit -S -m {}",
        sh(&format!("rx task {}: {}", id.as_str(), title.trim()))
    ));
    c.push(format!(
        "{g} push {} {}",
        sh(&ctx.source.remote),
        sh(branch)
    ));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_survives_hostile_titles() {
        assert_eq!(
            sh("docs/handoff/NEXT_RX_TASK.md"),
            "docs/handoff/NEXT_RX_TASK.md"
        );
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's $(rm -rf /)"), "'it'\\''s $(rm -rf /)'");
        assert_eq!(sh(""), "''");
    }

    /// Every receiving step without a gain is named, as a node with
    /// `rx.max_gain_db` would block it (each op says whether it has an RX gain);
    /// a step with a gain, or one that receives nothing, is not.
    #[test]
    fn every_receiving_step_without_a_gain_is_warned_about() {
        let text = "TASK_ID = W_1\nTASK_TITLE = w\nSOURCE_BRANCH = video-development\n\
            EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
            HARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n\
            ```rx-plan\n{\"steps\": [{\"op\": \"inventory\"},\n\
            {\"op\": \"freq_cal\", \"device\": \"driver=rxsim\", \"method\": \"gsm\",\n\
             \"frequency_hz\": 935.2e6, \"sample_rate_hz\": 1e6, \"duration_s\": 6},\n\
            {\"op\": \"clkin_compare\", \"devices\": [\"driver=rxsim,serial=m\", \"driver=rxsim,serial=s\"],\n\
             \"frequency_hz\": 100e6, \"sample_rate_hz\": 1e6, \"duration_s\": 1, \"tone_hz\": 100.2e6},\n\
            {\"op\": \"rx_capture\", \"device\": \"driver=rxsim\", \"frequency_hz\": 100e6,\n\
             \"sample_rate_hz\": 1e6, \"duration_s\": 1, \"gain_db\": 20}]}\n```\n";
        let task = rxnode_interlock::validate_task(text, &Default::default()).expect("valid");
        let w = warnings(&task);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("step 2 (freq_cal) has no gain_db"),
            "{w:?}"
        );
        assert!(
            w[1].starts_with("step 3 (clkin_compare) has no gain_db"),
            "{w:?}"
        );
    }
}
