//! `rxnode doctor [--json]`: check the set-up and say how to fix what is wrong.
//!
//! Read-only: doctor fetches nothing, writes nothing under `.local/`, never
//! moves a corrupt state file aside (the commands that use the state do),
//! opens no stream and prints no credential (remote URLs are redacted).
//!
//! The checks by concern: [`git`] (the checkout, `.local/` ignored, the trust
//! root, the remote, the credentials), [`soapy`] (libSoapySDR, modules, radios,
//! the DSP engine) and [`local`] (the node's own files).
mod git;
mod local;
mod soapy;

use crate::context::Ctx;
use crate::exit::Outcome;
use crate::term;
use anyhow::Result;
use git2::Repository;
use serde::Serialize;
use std::fmt::Write as _;

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Verdict {
    /// Fine.
    Pass,
    /// Broken: the fix says what to do.
    Fail,
    /// Works, but something will be refused later: the fix says what to do.
    Warn,
    /// Could not or need not be checked here.
    Skip,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Warn => "WARN",
            Verdict::Skip => "SKIP",
        }
    }
}

/// Declares [`CheckName`]: every check's name, and the list of them all.
macro_rules! check_names {
    ($($variant:ident => $text:literal,)+) => {
        /// The name of a check as doctor prints it; each one has a row in
        /// docs/doctor.md.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum CheckName {
            $($variant,)+
        }

        impl CheckName {
            /// Every check name, in declaration order.
            #[cfg(test)]
            pub(crate) const ALL: &'static [CheckName] = &[$(CheckName::$variant,)+];

            /// The name as printed.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(CheckName::$variant => $text,)+
                }
            }
        }
    };
}

check_names! {
    GitCheckout => "git checkout",
    LocalIgnored => ".local ignored",
    TrustRoot => "trust root",
    Remote => "remote",
    Credentials => "credentials",
    StatusPublishing => "status publishing",
    LibSoapySdr => "libSoapySDR",
    ModuleSearchPath => "module search path",
    Modules => "modules",
    Radios => "radios",
    DspEngine => "DSP engine",
    Policy => "policy",
    AllowedSigners => "allowed signers",
    NodeName => "node name",
    State => "state",
    Ledger => "ledger",
    Writable => "writable",
    Watcher => "watcher",
    InterruptedRuns => "interrupted runs",
}

/// One check.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    /// Short name.
    pub(crate) name: &'static str,
    /// The verdict.
    pub(crate) status: Verdict,
    /// What was found.
    pub(crate) detail: String,
    /// One line on how to fix it (empty when nothing needs fixing).
    pub(crate) fix: String,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// Every check, in order.
    pub(crate) checks: Vec<Check>,
    /// No check failed.
    pub(crate) ok: bool,
}

/// One check, its fix as given.
fn check(name: CheckName, status: Verdict, detail: impl Into<String>, fix: &str) -> Check {
    Check {
        name: name.as_str(),
        status,
        detail: detail.into(),
        fix: fix.to_owned(),
    }
}

/// Run `rxnode doctor`.
pub fn cmd_doctor(ctx: &Ctx) -> Result<Outcome> {
    let checks = run_checks(ctx);
    for c in &checks {
        tracing::debug!(status = c.status.as_str(), "check {}: {}", c.name, c.detail);
    }
    let ok = !checks.iter().any(|c| c.status == Verdict::Fail);
    let report = Report { checks, ok };
    // The verdict is the status: a closed pipe (`| head`) does not change it.
    ctx.report_to_pipe(&report, render_human)?;
    Ok(if ok { Outcome::Done } else { Outcome::Code(1) })
}

/// The report for a person, as text: one line per check, its fix under it.
fn render_human(r: &Report) -> String {
    let mut out = String::new();
    let colour = term::stdout_colour();
    let width = r.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &r.checks {
        let _ = writeln!(
            out,
            "{} {:<width$}  {}",
            term::status(c.status.as_str(), 4, colour),
            c.name,
            c.detail
        );
        if !c.fix.is_empty() && c.status != Verdict::Pass {
            let _ = writeln!(out, "     {:<width$}  fix: {}", "", c.fix);
        }
    }
    let failed = r
        .checks
        .iter()
        .filter(|c| c.status == Verdict::Fail)
        .count();
    if failed == 0 {
        let _ = writeln!(out, "{}: nothing failed", term::status("OK", 2, colour));
    } else {
        let _ = writeln!(
            out,
            "{} {failed} check(s) failed",
            term::status("FAIL", 4, colour)
        );
    }
    out
}

/// Every check, in the order they are shown.
fn run_checks(ctx: &Ctx) -> Vec<Check> {
    let paths = ctx.paths();
    let (found, repo) = checkout(ctx);
    let mut out = vec![found];
    match &repo {
        Some(r) => {
            out.push(git::local_ignored(r));
            out.extend(git::trust_root(&paths));
            out.extend(git::remote_checks(ctx, r));
            out.push(git::status_publishing(ctx, &paths, r));
        }
        None => {
            for name in [
                CheckName::LocalIgnored,
                CheckName::Remote,
                CheckName::Credentials,
                CheckName::StatusPublishing,
            ] {
                out.push(check(name, Verdict::Skip, "no Git checkout", ""));
            }
        }
    }
    out.extend(soapy::soapy_checks(ctx));
    out.push(soapy::dsp_engine());
    out.push(local::policy_check(&paths));
    out.push(local::signers_check(&paths));
    out.push(local::node_name(&paths));
    let state = local::state_file(&paths);
    let state_ok = state.status == Verdict::Pass;
    out.push(state);
    let ledger = local::ledger_file(&paths);
    let ledger_ok = ledger.status == Verdict::Pass;
    out.push(ledger);
    out.push(local::writable(&paths));
    out.push(local::watcher(&paths));
    out.push(interrupted_runs(ctx, &paths, state_ok && ledger_ok));
    out
}

/// Runs that started and never finished: finished as interrupted now
/// (docs/protocol.md#interrupted-runs), and said as a warning.
fn interrupted_runs(ctx: &Ctx, paths: &crate::store::paths::Paths, readable: bool) -> Check {
    // Only on a sound local store: doctor never creates, moves or rewrites
    // anything to find out (a fresh clone, a damaged state or ledger is reported
    // by the checks above).
    if !paths.ledger().is_file() {
        return check(
            CheckName::InterruptedRuns,
            Verdict::Pass,
            "none (no ledger yet)",
            "",
        );
    }
    if !readable
        || crate::store::trust::verify(paths).is_err()
        || crate::store::state::load(paths).is_err()
    {
        return check(
            CheckName::InterruptedRuns,
            Verdict::Skip,
            "the state or ledger cannot be trusted (see above)",
            "",
        );
    }
    let lines = crate::result::finish_interrupted(paths, &ctx.source.branch, "doctor");
    if lines.is_empty() {
        check(CheckName::InterruptedRuns, Verdict::Pass, "none", "")
    } else {
        check(
            CheckName::InterruptedRuns,
            Verdict::Warn,
            format!("INTERRUPTED: {}", lines.join(" | ")),
            "check the radio and the result; a re-run needs a new TASK_ID",
        )
    }
}

/// The `git checkout` check, and the checkout when there is one.
fn checkout(ctx: &Ctx) -> (Check, Option<Repository>) {
    match crate::git::ops::open(&ctx.repo) {
        Ok(r) => {
            let where_ = r
                .workdir()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let head = r
                .head()
                .ok()
                .and_then(|h| h.shorthand().map(str::to_owned))
                .unwrap_or_else(|| "no commit yet".to_owned());
            let c = check(
                CheckName::GitCheckout,
                Verdict::Pass,
                format!("{where_} (HEAD: {head})"),
                "",
            );
            (c, Some(r))
        }
        Err(e) => {
            let c = check(
                CheckName::GitCheckout,
                Verdict::Fail,
                format!("{e:#}"),
                "run rxnode inside the RX clone or pass --repo DIR (`git clone URL DIR` first)",
            );
            (c, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/doctor.md had no row for `status publishing` nor `interrupted runs`,
    /// two checks doctor prints; every name doctor can print (a `CheckName`,
    /// the only name `check` takes) now must have its row in the table, and
    /// the table no row for a check that does not exist.
    #[test]
    fn every_check_doctor_prints_has_a_row_in_docs_doctor_md() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/doctor.md");
        let mut f = rxnode_dsp::open_regular(&path).expect("docs/doctor.md opens");
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).expect("docs/doctor.md reads");
        let rows: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        let names: Vec<&str> = CheckName::ALL.iter().map(|n| n.as_str()).collect();
        let missing: Vec<&&str> = names.iter().filter(|n| !rows.contains(n)).collect();
        assert!(
            missing.is_empty(),
            "no row in docs/doctor.md for {missing:?}"
        );
        let unknown: Vec<&&str> = rows.iter().filter(|r| !names.contains(r)).collect();
        assert!(
            unknown.is_empty(),
            "docs/doctor.md rows for no check: {unknown:?}"
        );
        assert_eq!(rows.len(), names.len(), "one row per check: {rows:?}");
    }

    #[test]
    fn verdicts_serialize_in_capitals() {
        let c = check(CheckName::Policy, Verdict::Skip, "d", "f");
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["status"], "SKIP");
        assert_eq!(v["fix"], "f");
    }
}
