//! `rxnode doctor [--json]`: check the set-up and say how to fix what is wrong.
//!
//! Read-only: doctor fetches nothing, writes nothing under `.local/`, never
//! moves a corrupt state file aside (the commands that use the state do),
//! opens no stream and prints no credential (remote URLs are redacted).
use crate::context::Ctx;
use crate::exit::Outcome;
use crate::git::ops as gitops;
use crate::store::paths::Paths;
use crate::store::{lock, policy as policy_file};
use crate::term;
use anyhow::Result;
use git2::{Direction, Repository};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a remote may take to answer before doctor gives up on it.
const REMOTE_DEADLINE: Duration = Duration::from_secs(20);

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
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

/// One check.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short name.
    pub name: &'static str,
    /// The verdict.
    pub status: Verdict,
    /// What was found.
    pub detail: String,
    /// One line on how to fix it (empty when nothing needs fixing).
    pub fix: String,
}

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Every check, in order.
    pub checks: Vec<Check>,
    /// No check failed.
    pub ok: bool,
}

fn check(name: &'static str, status: Verdict, detail: impl Into<String>, fix: &str) -> Check {
    Check {
        name,
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
    if ctx.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_human(&report);
    }
    Ok(if ok { Outcome::Done } else { Outcome::Code(1) })
}

fn print_human(r: &Report) {
    let colour = term::stdout_colour();
    let width = r.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &r.checks {
        println!(
            "{} {:<width$}  {}",
            term::status(c.status.as_str(), 4, colour),
            c.name,
            c.detail
        );
        if !c.fix.is_empty() && c.status != Verdict::Pass {
            println!("     {:<width$}  fix: {}", "", c.fix);
        }
    }
    let failed = r
        .checks
        .iter()
        .filter(|c| c.status == Verdict::Fail)
        .count();
    if failed == 0 {
        println!("{}: nothing failed", term::status("OK", 2, colour));
    } else {
        println!(
            "{} {failed} check(s) failed",
            term::status("FAIL", 4, colour)
        );
    }
}

fn run_checks(ctx: &Ctx) -> Vec<Check> {
    let paths = Paths::new(&ctx.repo);
    let mut out = Vec::new();
    let repo = match gitops::open(&ctx.repo) {
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
            out.push(check(
                "git checkout",
                Verdict::Pass,
                format!("{where_} (HEAD: {head})"),
                "",
            ));
            Some(r)
        }
        Err(e) => {
            out.push(check(
                "git checkout",
                Verdict::Fail,
                format!("{e:#}"),
                "run rxnode inside the RX clone or pass --repo DIR (`git clone URL DIR` first)",
            ));
            None
        }
    };
    match &repo {
        Some(r) => {
            out.push(local_ignored(r));
            out.extend(trust_root(&paths));
            out.extend(remote_checks(ctx, r));
        }
        None => {
            for name in [".local ignored", "remote", "credentials"] {
                out.push(check(name, Verdict::Skip, "no Git checkout", ""));
            }
        }
    }
    out.extend(soapy_checks(ctx));
    out.push(dsp_engine());
    out.push(policy(&paths));
    out.push(node_name(&paths));
    out.push(state_file(&paths));
    out.push(ledger_file(&paths));
    out.push(watcher(&paths));
    out
}

/// Which Welch engine this CPU gets (N = 2048, as in the default capture settings).
fn dsp_engine() -> Check {
    match rxnode_hw::Welch::new(rxnode_hw::WelchConfig::new(2048, 1e6)) {
        Ok(w) => {
            let why = match w.engine() {
                "rustfft" => "portable engine: this CPU has no SIMD kernel (about half the speed)",
                _ => "fused SIMD kernel (window + FFT + |X|²)",
            };
            check(
                "DSP engine",
                Verdict::Pass,
                format!("Welch N=2048 on {}: {why}", w.engine()),
                "",
            )
        }
        Err(e) => check(
            "DSP engine",
            Verdict::Fail,
            format!("{e:#}"),
            "report this: the default Welch settings were refused",
        ),
    }
}

fn local_ignored(repo: &Repository) -> Check {
    const FIX: &str =
        "add `/.local/` to .git/info/exclude (every rxnode command that writes under .local/ does this on start: watch, review, mark-completed, run, publish, capture, sweep, node set-name)";
    // Ask about the actual files too, not only the folder (issue 13).
    match crate::store::trust::visible_files(repo) {
        Ok(seen) if !seen.is_empty() => {
            return check(
                ".local ignored",
                Verdict::Fail,
                format!(
                    "Git sees {} file(s) under .local/ (first: {}): an ignore rule (a committed .gitignore?) lets them be added",
                    seen.len(),
                    seen[0]
                ),
                "add `/.local/` to .git/info/exclude and remove every `!` rule about .local from .gitignore files",
            )
        }
        Ok(_) => {}
        Err(e) => {
            return check(
                ".local ignored",
                Verdict::Fail,
                format!("cannot ask Git which files under .local/ it sees: {}", e.message()),
                FIX,
            )
        }
    }
    match repo.is_path_ignored(".local/") {
        Ok(true) => check(
            ".local ignored",
            Verdict::Pass,
            ".local/ is ignored by Git",
            "",
        ),
        Ok(false) => check(
            ".local ignored",
            Verdict::Fail,
            ".local/ is not ignored: local state, outbox and IQ files could be committed",
            FIX,
        ),
        Err(e) => check(
            ".local ignored",
            Verdict::Fail,
            format!("cannot ask Git whether .local/ is ignored: {}", e.message()),
            FIX,
        ),
    }
}

/// The trust root (issue 13): one FAIL per reason not to trust `.local/`.
fn trust_root(paths: &Paths) -> Vec<Check> {
    let found = crate::store::trust::findings(paths);
    if found.is_empty() {
        return vec![check(
            "trust root",
            Verdict::Pass,
            "nothing under .local/ is tracked, linked, foreign or visible to Git; the policy is a regular file of yours",
            "",
        )];
    }
    found
        .into_iter()
        .map(|f| check("trust root", Verdict::Fail, f.detail, &f.fix))
        .collect()
}

/// Whether a remote URL points at this machine (a path or `file://`).
fn is_local_url(url: &str) -> bool {
    url.starts_with("file:") || !url.contains(':') || Path::new(url).exists()
}

/// For a local remote whose path does not exist, say so (libgit2 only says
/// "unsupported URL protocol").
fn missing_local_path(workdir: &Path, url: &str) -> Option<String> {
    if !is_local_url(url) {
        return None;
    }
    let p = Path::new(url.strip_prefix("file://").unwrap_or(url));
    let p = if p.is_relative() {
        workdir.join(p)
    } else {
        p.to_path_buf()
    };
    (!p.exists()).then(|| format!("the path {} does not exist", p.display()))
}

/// The outcome of connecting to a remote in one direction.
struct Connected {
    /// The branch names the remote advertises (`refs/heads/…` stripped).
    heads: Vec<(String, String)>,
    /// How often the credential callback was asked.
    credential_asks: usize,
}

/// Connect to `remote` of the checkout at `repo_path` for `dir` and list its
/// refs, on a thread, giving up after [`REMOTE_DEADLINE`].
fn connect(repo_path: &Path, remote: &str, dir: Direction) -> Result<Connected, String> {
    // The same transport timeouts as every fetch (RXNODE_GIT_TIMEOUT_S honoured).
    crate::git::ops::set_timeouts();
    let (tx, rx) = std::sync::mpsc::channel();
    let repo_path: PathBuf = repo_path.to_path_buf();
    let remote = remote.to_owned();
    std::thread::spawn(move || {
        let r = (|| -> Result<Connected, String> {
            let repo = Repository::open(&repo_path).map_err(|e| e.message().to_owned())?;
            let mut rem = repo
                .find_remote(&remote)
                .map_err(|e| e.message().to_owned())?;
            let asks = Arc::new(AtomicUsize::new(0));
            let counter = Arc::clone(&asks);
            let mut inner = crate::git::ops::credentials_callback(repo.config().ok());
            let mut cb = git2::RemoteCallbacks::new();
            cb.credentials(move |url, user, allowed| {
                counter.fetch_add(1, Ordering::Relaxed);
                inner(url, user, allowed)
            });
            let conn = rem
                .connect_auth(dir, Some(cb), None)
                .map_err(|e| gitops::redact(e.message()))?;
            let heads = conn
                .list()
                .map_err(|e| gitops::redact(e.message()))?
                .iter()
                .filter_map(|h| {
                    h.name()
                        .strip_prefix("refs/heads/")
                        .map(|n| (n.to_owned(), h.oid().to_string()))
                })
                .collect();
            Ok(Connected {
                heads,
                credential_asks: asks.load(Ordering::Relaxed),
            })
        })();
        let _ = tx.send(r);
    });
    match rx.recv_timeout(REMOTE_DEADLINE) {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {} s", REMOTE_DEADLINE.as_secs())),
    }
}

fn remote_checks(ctx: &Ctx, repo: &Repository) -> Vec<Check> {
    let name = ctx.source.remote.as_str();
    let branch = ctx.source.branch.as_str();
    let (url, raw_url) = match repo.find_remote(name) {
        Ok(r) => (
            r.url().map(gitops::redact).unwrap_or_default(),
            r.url().unwrap_or_default().to_owned(),
        ),
        Err(_) => {
            return vec![
                check(
                    "remote",
                    Verdict::Fail,
                    format!("no remote named {name:?} in this checkout"),
                    &format!("`git remote add {name} URL`, or pass --remote NAME"),
                ),
                check("credentials", Verdict::Skip, "no remote", ""),
            ]
        }
    };
    let workdir = repo
        .workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.path().to_path_buf());
    let mut out = Vec::new();
    tracing::info!("connecting to {name} ({url}) to list its branches");
    match connect(&workdir, name, Direction::Fetch) {
        Ok(c) => match c.heads.iter().find(|(b, _)| b == branch) {
            Some((_, oid)) => out.push(check(
                "remote",
                Verdict::Pass,
                format!(
                    "{name} ({url}) reachable; {branch} at {}",
                    oid.get(..12).unwrap_or(oid)
                ),
                "",
            )),
            None => out.push(check(
                "remote",
                Verdict::Fail,
                format!(
                    "{name} ({url}) reachable but has no branch {branch:?} (it has: {})",
                    if c.heads.is_empty() {
                        "no branches".to_owned()
                    } else {
                        c.heads
                            .iter()
                            .map(|(b, _)| b.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
                "ask the main PC to push the branch, or pass --branch NAME",
            )),
        },
        Err(e) => out.push(check(
            "remote",
            Verdict::Fail,
            format!(
                "{name} ({url}) unreachable: {}",
                missing_local_path(&workdir, &raw_url).unwrap_or(e)
            ),
            &format!(
                "check the URL (`git remote set-url {name} URL`), the network, and that the repository exists"
            ),
        )),
    }
    if is_local_url(&raw_url) {
        out.push(check(
            "credentials",
            Verdict::Skip,
            "a local remote needs no credentials",
            "",
        ));
        return out;
    }
    if out.first().is_some_and(|c| c.status == Verdict::Fail)
        && !out[0].detail.contains("reachable but")
    {
        out.push(check(
            "credentials",
            Verdict::Skip,
            "the remote is unreachable, so credentials could not be tried",
            "",
        ));
        return out;
    }
    // Connecting for push lists the refs the node could update; nothing is sent.
    out.push(match connect(&workdir, name, Direction::Push) {
        Ok(c) if c.credential_asks == 0 => check(
            "credentials",
            Verdict::Pass,
            "the remote accepted a push connection without asking for credentials",
            "",
        ),
        Ok(_) => check(
            "credentials",
            Verdict::Pass,
            "the remote asked for credentials and accepted them (push connection, nothing sent)",
            "",
        ),
        Err(e) => check(
            "credentials",
            Verdict::Fail,
            format!("push connection to {name} ({url}) refused: {e}"),
            "load your ssh key into ssh-agent (`ssh-add`) or set up a Git credential helper",
        ),
    });
    out
}

fn soapy_checks(ctx: &Ctx) -> Vec<Check> {
    let mut out = Vec::new();
    let version = rxnode_hw::soapysdr_version();
    out.push(if version.is_empty() {
        check(
            "libSoapySDR",
            Verdict::Fail,
            "libSoapySDR reports no version",
            "install libsoapysdr (Debian/Ubuntu: `sudo apt install libsoapysdr-dev soapysdr-tools`)",
        )
    } else {
        check(
            "libSoapySDR",
            Verdict::Pass,
            format!(
                "version {version}{}",
                if ctx.sim {
                    " (--sim: only the bundled rxsim module is loaded)"
                } else {
                    ""
                }
            ),
            "",
        )
    });

    let paths = rxnode_hw::soapysdr_search_paths();
    let env_plugin = std::env::var_os("SOAPY_SDR_PLUGIN_PATH")
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty());
    let env_missing: Vec<String> = env_plugin
        .iter()
        .flat_map(|v| std::env::split_paths(v).collect::<Vec<_>>())
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    let shown = paths
        .iter()
        .map(|p| {
            if Path::new(p).exists() {
                p.clone()
            } else {
                format!("{p} (missing)")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let env_note = env_plugin
        .as_deref()
        .map(|v| format!("; SOAPY_SDR_PLUGIN_PATH={v}"))
        .unwrap_or_default();
    out.push(if !env_missing.is_empty() {
        check(
            "module search path",
            Verdict::Fail,
            format!(
                "SOAPY_SDR_PLUGIN_PATH names what does not exist: {}; searched: {shown}",
                env_missing.join(", ")
            ),
            "fix or unset SOAPY_SDR_PLUGIN_PATH (it must name module files or folders that exist)",
        )
    } else if paths.iter().any(|p| Path::new(p).exists()) {
        check(
            "module search path",
            Verdict::Pass,
            format!("{shown}{env_note}"),
            "",
        )
    } else {
        check(
            "module search path",
            Verdict::Fail,
            format!("no search path exists: {shown}{env_note}"),
            "install your radio's SoapySDR module (e.g. `sudo apt install soapysdr-module-hackrf`)",
        )
    });

    let modules = rxnode_hw::soapysdr_load_modules();
    let failed: Vec<String> = modules
        .iter()
        .filter_map(|m| m.error.as_ref().map(|e| format!("{}: {e}", m.path)))
        .collect();
    let listed = modules
        .iter()
        .map(|m| match &m.version {
            Some(v) => format!("{} ({v})", m.path),
            None => m.path.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ");
    out.push(if modules.is_empty() {
        check(
            "modules",
            Verdict::Fail,
            "no SoapySDR module found: no radio driver is installed",
            "install your radio's module (`sudo apt install soapysdr-module-all`) or fix SOAPY_SDR_PLUGIN_PATH",
        )
    } else if !failed.is_empty() {
        check(
            "modules",
            Verdict::Fail,
            format!(
                "{} of {} failed to load: {}",
                failed.len(),
                modules.len(),
                failed.join("; ")
            ),
            "reinstall the failing module for this libSoapySDR version, or remove it from the search path",
        )
    } else {
        check(
            "modules",
            Verdict::Pass,
            format!("{} loaded: {listed}", modules.len()),
            "",
        )
    });

    out.push(match rxnode_hw::enumerate("") {
        Err(e) => check(
            "radios",
            Verdict::Fail,
            format!("enumeration failed: {e}"),
            "check the module install with `SoapySDRUtil --find`",
        ),
        Ok(devs) if devs.is_empty() => check(
            "radios",
            Verdict::Fail,
            "no radios found",
            "plug the radio in, check its USB permissions (udev rules) and module, then `SoapySDRUtil --find`",
        ),
        Ok(devs) => {
            let list = devs
                .iter()
                .map(|d| {
                    let mut s = d.args.clone();
                    if let Some(e) = &d.error {
                        s.push_str(&format!(" (cannot open: {e})"));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join("; ");
            if devs.iter().any(|d| d.error.is_some()) {
                check(
                    "radios",
                    Verdict::Fail,
                    format!("{} found, not all open: {list}", devs.len()),
                    "close other programs using the radio, check USB permissions and power",
                )
            } else {
                check(
                    "radios",
                    Verdict::Pass,
                    format!("{} found: {list}", devs.len()),
                    "",
                )
            }
        }
    });
    out
}

fn policy(paths: &Paths) -> Check {
    const FIX_MISSING: &str =
        "create .local/rxnode-policy.json to set this node's limits (docs/operator.md)";
    match policy_file::load(paths) {
        Err(e) => check(
            "policy",
            Verdict::Fail,
            format!("{e:#}"),
            "repair .local/rxnode-policy.json (docs/operator.md shows the fields)",
        ),
        Ok((pol, source)) => {
            let rx = &pol.rx;
            let opt = |v: Option<f64>, unit: &str| {
                v.map(|x| format!("{x} {unit}"))
                    .unwrap_or_else(|| "device max".to_owned())
            };
            let rx_s = format!(
                "RX ≤ {} s, rate {}, gain {}, IQ ≤ {} bytes",
                rx.max_duration_s,
                opt(rx.max_sample_rate_hz, "S/s"),
                opt(rx.max_gain_db, "dB"),
                rx.max_iq_bytes
            );
            let tx_s = match &pol.tx {
                Some(tx) if !tx.allowed_ranges_hz.is_empty() => format!(
                    "TX allowed in {} (gain ≤ {} dB, ≤ {} s)",
                    tx.allowed_ranges_hz
                        .iter()
                        .map(|[lo, hi]| format!("{lo}–{hi} Hz"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    tx.max_gain_db,
                    tx.max_duration_s
                ),
                _ => "TX refused (no range allowed)".to_owned(),
            };
            match source {
                policy_file::Source::File => check(
                    "policy",
                    Verdict::Pass,
                    format!("{}: {rx_s}; {tx_s}", paths.policy().display()),
                    "",
                ),
                policy_file::Source::Defaults => check(
                    "policy",
                    Verdict::Skip,
                    format!(
                        "no {}: defaults apply: {rx_s}; {tx_s}",
                        paths.policy().display()
                    ),
                    FIX_MISSING,
                ),
            }
        }
    }
}

/// Parse the state file without changing anything (unlike `state::load`,
/// which moves a corrupt file aside).
fn state_file(paths: &Paths) -> Check {
    let p = paths.state();
    match std::fs::read(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match crate::store::state::corrupt_aside(paths) {
            Some(aside) => check(
                "state",
                Verdict::Fail,
                format!(
                    "no {}, but a corrupt state is kept aside as {}",
                    p.display(),
                    aside.display()
                ),
                crate::store::state::REBUILD_HINT.trim_start_matches("fix: "),
            ),
            None => match crate::store::rebuild::evidence(paths) {
                Ok(ev) if !ev.is_empty() => check(
                    "state",
                    Verdict::Fail,
                    format!(
                        "no {}, but this node has history ({}): every command refuses",
                        p.display(),
                        ev.join(", ")
                    ),
                    crate::store::state::REBUILD_HINT.trim_start_matches("fix: "),
                ),
                _ => check(
                    "state",
                    Verdict::Pass,
                    format!("no {} yet (nothing has run here)", p.display()),
                    "",
                ),
            },
        },
        Err(e) => check(
            "state",
            Verdict::Fail,
            format!("cannot read {}: {e}", p.display()),
            "check the file's owner and permissions",
        ),
        Ok(bytes) => match serde_json::from_slice::<crate::store::state::State>(&bytes) {
            Ok(s) => check(
                "state",
                Verdict::Pass,
                format!(
                    "{} readable: {} task(s) known, {} approved",
                    p.display(),
                    s.tasks.len(),
                    s.approvals.len()
                ),
                "",
            ),
            Err(e) => check(
                "state",
                Verdict::Fail,
                format!("{} is corrupt: {e}", p.display()),
                "the next command moves it aside and every command refuses until you run `rxnode state rebuild` (it recovers every decision from the ledger and the outboxes)",
            ),
        },
    }
}

fn ledger_file(paths: &Paths) -> Check {
    let p = paths.ledger();
    let text = match std::fs::read(&p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return check(
                "ledger",
                Verdict::Pass,
                format!("no {} yet (nothing has run here)", p.display()),
                "",
            )
        }
        Err(e) => {
            return check(
                "ledger",
                Verdict::Fail,
                format!("cannot read {}: {e}", p.display()),
                "check the file's owner and permissions",
            )
        }
        Ok(b) => b,
    };
    let text = String::from_utf8_lossy(&text);
    let mut entries = 0usize;
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) if v.is_object() => entries += 1,
            _ => bad.push((i + 1).to_string()),
        }
    }
    if bad.is_empty() {
        check(
            "ledger",
            Verdict::Pass,
            format!("{} readable: {entries} entries", p.display()),
            "",
        )
    } else {
        check(
            "ledger",
            Verdict::Fail,
            format!(
                "{}: line(s) {} are not JSON entries ({entries} good)",
                p.display(),
                bad.join(", ")
            ),
            "the ledger is an append-only audit trail: inspect those lines (a crash can tear the last one) and keep a copy before repairing",
        )
    }
}

/// The node's name (`.local/rxnode-node.json`, issue 18): without one every
/// publish is refused, so a missing name is a warning before the first run.
fn node_name(paths: &Paths) -> Check {
    const FIX: &str = "rxnode node set-name NAME (1 to 32 of A-Z a-z 0-9 _ -, e.g. LAB-RX2)";
    match crate::store::node::load_name(paths) {
        Ok(Some(n)) => check("node name", Verdict::Pass, n, ""),
        Ok(None) => check(
            "node name",
            Verdict::Warn,
            format!(
                "no name set ({} is missing): a publish would be refused",
                paths.node_name().display()
            ),
            FIX,
        ),
        Err(e) => check("node name", Verdict::Fail, format!("{e:#}"), FIX),
    }
}

fn watcher(paths: &Paths) -> Check {
    let hold = if paths.stop().exists() {
        format!("; held by {}", paths.stop().display())
    } else {
        String::new()
    };
    match lock::holder(paths) {
        Ok(None) => check(
            "watcher",
            Verdict::Pass,
            format!("no other watcher running{hold}"),
            "",
        ),
        Ok(Some(h)) if lock::holder_alive(&h) => check(
            "watcher",
            Verdict::Pass,
            format!("a watcher is running: {h} (another `rxnode watch` here is refused){hold}"),
            "",
        ),
        Ok(Some(h)) => check(
            "watcher",
            Verdict::Pass,
            format!("stale lock from {h}: the next `rxnode watch` takes it over{hold}"),
            "",
        ),
        Err(e) => check(
            "watcher",
            Verdict::Fail,
            format!("{e:#}"),
            "make sure no rxnode is running, then remove .local/rxnode.lock",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_are_recognised() {
        assert!(is_local_url("/srv/git/lab.git"));
        assert!(is_local_url("file:///srv/git/lab.git"));
        assert!(is_local_url("../lab.git"));
        assert!(!is_local_url("git@github.com:lab/repo.git"));
        assert!(!is_local_url("https://git.example/lab.git"));
        assert!(!is_local_url("ssh://git@host/lab.git"));
    }

    #[test]
    fn verdicts_serialize_in_capitals() {
        let c = check("x", Verdict::Skip, "d", "f");
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["status"], "SKIP");
        assert_eq!(v["fix"], "f");
    }
}
