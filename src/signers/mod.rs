//! Who wrote a task (docs/safety.md#who-wrote-it): the node's allowed signers
//! (`.local/allowed_signers`, git's allowed-signers format, a trust-root file
//! like the policy) and the in-process verification of the SSH signature of
//! the commit that last changed the task file.
//!
//! `allowed.rs` reads and writes the format, `verify.rs` checks one commit.
pub(crate) mod allowed;
pub(crate) mod verify;

use crate::context::Ctx;
use crate::exit::{bad_input, refused, Outcome};
use crate::store::paths::Paths;
use anyhow::{Context, Result};
use git2::{Oid, Repository};
use serde::Serialize;
use std::path::PathBuf;

pub(crate) use verify::{fingerprint_of_hex, Checked};

/// `.local/allowed_signers` of the checkout (also in a dry run).
pub(crate) fn path(paths: &Paths) -> PathBuf {
    paths.allowed_signers()
}

/// The allowed signers: none when the file does not exist. The file must be
/// the operator's own (checked as the policy: docs/safety.md#8-trust-root--nothing-the-interlock-trusts-comes-from-git),
/// and a line that cannot be read is an error naming it, never skipped.
pub(crate) fn load(paths: &Paths) -> Result<Vec<allowed::Signer>> {
    if let Some(f) = crate::store::trust::signers_file_finding(paths) {
        return Err(refused(format!(
            "untrusted node-local files: {} — fix: {}",
            f.detail, f.fix
        )));
    }
    let p = path(paths);
    let text = match crate::store::fsutil::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    let text = String::from_utf8(text)
        .map_err(|_| bad_input(format!("{}: not UTF-8 text", p.display())))?;
    allowed::parse(&text).map_err(|e| bad_input(format!("{}: {e}", p.display())))
}

/// The most first-parent commits walked back from a task version to the commit
/// that last changed the task file (a first start examines the tip, which may
/// sit on many commits that did not touch it).
pub(crate) const MAX_WALK: usize = 10_000;

/// Verify the signature of the commit that last changed `task_path` as of
/// `commit` (the version's own commit, or an earlier one when `commit` is a tip
/// that did not touch the file).
pub(crate) fn check(
    paths: &Paths,
    repo: &Repository,
    commit: Oid,
    task_path: &str,
) -> Result<Checked> {
    let signers = load(paths)?;
    let changed = match crate::git::ops::last_change(repo, commit, task_path, MAX_WALK) {
        Ok(c) => c,
        Err(e) => {
            return Ok(Checked {
                commit: commit.to_string(),
                status: verify::Status::Refused {
                    kind: "history not available",
                    detail: format!("{e:#}"),
                },
            })
        }
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    Ok(verify::check_commit(repo, changed, &signers, now))
}

/// One allowed signer as `node signers list` shows it.
#[derive(Debug, Serialize)]
pub(crate) struct SignerView {
    /// 1-based line in the file.
    line: usize,
    /// The principals field.
    principals: String,
    /// `SHA256:…`.
    fingerprint: String,
    /// The key type.
    key_type: String,
    /// `namespaces=` (`null`: every namespace).
    namespaces: Option<Vec<String>>,
    /// `valid-after=` (UTC, `YYYYMMDDHHMMSS`).
    valid_after: Option<String>,
    /// `valid-before=` (UTC, `YYYYMMDDHHMMSS`).
    valid_before: Option<String>,
    /// `cert-authority` (never accepted for a commit signature).
    cert_authority: bool,
}

impl SignerView {
    fn of(s: &allowed::Signer) -> SignerView {
        SignerView {
            line: s.line,
            principals: s.principals.clone(),
            fingerprint: s.fingerprint(),
            key_type: s.key.algorithm().to_string(),
            namespaces: s.namespaces.clone(),
            valid_after: s.valid_after.map(allowed::format_time),
            valid_before: s.valid_before.map(allowed::format_time),
            cert_authority: s.cert_authority,
        }
    }

    fn text(&self) -> String {
        let mut t = format!(
            "  line {}: {} {} {}",
            self.line, self.principals, self.key_type, self.fingerprint
        );
        match &self.namespaces {
            Some(ns) => t.push_str(&format!(" namespaces={}", ns.join(","))),
            None => t.push_str(" (every namespace)"),
        }
        if let Some(v) = &self.valid_after {
            t.push_str(&format!(" valid-after={v}Z"));
        }
        if let Some(v) = &self.valid_before {
            t.push_str(&format!(" valid-before={v}Z"));
        }
        if self.cert_authority {
            t.push_str(" cert-authority (not accepted for commits)");
        }
        t.push('\n');
        t
    }
}

/// What `node signers list` prints.
#[derive(Debug, Serialize)]
pub(crate) struct SignersReport {
    /// The file.
    file: String,
    /// Whether it exists.
    exists: bool,
    /// Its signers, in file order.
    signers: Vec<SignerView>,
}

/// `rxnode node signers list`.
pub fn cmd_signers_list(ctx: &Ctx) -> Result<Outcome> {
    let paths = ctx.paths();
    // The whole trust root, Git's view included: a list Git supplied is not listed as ours.
    crate::store::trust::verify(&paths)?;
    let p = path(&paths);
    let signers = load(&paths)?;
    let report = SignersReport {
        file: p.display().to_string(),
        exists: p.exists(),
        signers: signers.iter().map(SignerView::of).collect(),
    };
    ctx.report(&report, |r| {
        if r.signers.is_empty() {
            return format!(
                "no allowed signers ({}); add one with `rxnode node signers add PRINCIPAL KEY.pub`\n",
                r.file
            );
        }
        let mut t = format!("allowed signers ({}):\n", r.file);
        for s in &r.signers {
            t.push_str(&s.text());
        }
        t
    })?;
    Ok(Outcome::Done)
}

/// The key of `node signers add`: a public key line (`ssh-ed25519 AAAA… [comment]`)
/// or a file holding one (`~/.ssh/id_ed25519.pub`).
fn read_key(key: &str) -> Result<ssh_key::PublicKey> {
    let text = if key.trim_start().starts_with("ssh-")
        || key.trim_start().starts_with("ecdsa-sha2-")
        || key.trim_start().starts_with("sk-")
    {
        key.to_owned()
    } else {
        use crate::store::fsutil::{read_named_file, NamedFileError as E};
        let bytes = read_named_file(std::path::Path::new(key), 64 * 1024).map_err(|e| match e {
            E::Missing(e) => bad_input(format!(
                "key {key:?}: neither a public key nor a readable file ({e})"
            )),
            E::TooBig { len, .. } => bad_input(format!(
                "key file {key}: {} bytes; a public key file is small",
                len.map_or_else(|| "over 65536".to_owned(), |n| n.to_string())
            )),
            e => bad_input(format!("key file {key}: {e}")),
        })?;
        String::from_utf8(bytes).map_err(|_| {
            bad_input(format!(
                "key file {key}: stream did not contain valid UTF-8"
            ))
        })?
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    if line.contains("PRIVATE KEY") {
        return Err(bad_input(format!(
            "key {key:?} is a private key; give the .pub file"
        )));
    }
    ssh_key::PublicKey::from_openssh(line)
        .map_err(|e| bad_input(format!("key {key:?}: not an OpenSSH public key ({e})")))
}

/// `node signers add` options.
#[derive(Debug, Clone)]
pub struct AddSigner {
    /// The principal(s): an email, or comma-separated patterns.
    pub principal: String,
    /// A public key line or a `.pub` file.
    pub key: String,
    /// `valid-before=` (`YYYYMMDD[HHMM[SS]][Z]`).
    pub valid_before: Option<String>,
}

/// Replace the file with `text`, under the file's lock (`.local/` made ignored first).
fn write_file(paths: &Paths, text: &str) -> Result<()> {
    let p = path(paths);
    let lock = paths.repo.join(".local").join("allowed_signers.lock");
    let _guard = crate::store::trust::lock_local_file(paths, &lock, &p)?;
    crate::store::fsutil::write_atomic(&p, text.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("cannot set the mode of {}", p.display()))?;
    }
    Ok(())
}

/// `rxnode node signers add PRINCIPAL KEY`: one line with `namespaces="git"`.
pub fn cmd_signers_add(ctx: &Ctx, a: &AddSigner) -> Result<Outcome> {
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let p = path(&paths);
    if a.principal.is_empty()
        || a.principal
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"')
        || a.principal.starts_with('#')
    {
        return Err(bad_input(format!(
            "principal {:?}: give an email or comma-separated patterns, without spaces or quotes",
            a.principal
        )));
    }
    let key = read_key(&a.key)?;
    let valid_before = a
        .valid_before
        .as_deref()
        .map(allowed::parse_time)
        .transpose()
        .map_err(|e| bad_input(format!("--valid-before: {e}")))?;
    let existing = load(&paths)?;
    if let Some(s) = existing
        .iter()
        .find(|s| s.key.key_data() == key.key_data() && s.principals == a.principal)
    {
        return Err(bad_input(format!(
            "{} with key {} is already on line {} of {}",
            s.principals,
            s.fingerprint(),
            s.line,
            p.display()
        )));
    }
    let signer = allowed::Signer {
        line: 0,
        principals: a.principal.clone(),
        namespaces: Some(vec![verify::NAMESPACE.to_owned()]),
        valid_after: None,
        valid_before,
        cert_authority: false,
        key: ssh_key::PublicKey::new(key.key_data().clone(), ""),
    };
    let mut text = match crate::store::fsutil::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "# rxnode allowed signers (git's allowed-signers format): who may post tasks\n"
                .to_owned()
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&signer.to_line());
    text.push('\n');
    // The new file must read back (a line this node cannot read would refuse every task).
    allowed::parse(&text)
        .map_err(|e| bad_input(format!("the new line cannot be read back: {e}")))?;
    write_file(&paths, &text)?;
    let fp = signer.fingerprint();
    let _ = crate::store::ledger::append(
        &paths,
        &crate::store::ledger::Entry::new(crate::store::ledger::Event::SignerAdded {
            principals: a.principal.clone(),
            fingerprint: fp.clone(),
        }),
    );
    let view = SignerView::of(&signer);
    ctx.report(&view, |v| {
        format!(
            "added {} ({}) to {}, for namespace git\n",
            v.principals,
            v.fingerprint,
            p.display()
        )
    })?;
    Ok(Outcome::Done)
}

/// `rxnode node signers remove WHO`: every line whose principals field or key
/// fingerprint is `WHO`; comments and other lines are kept.
pub fn cmd_signers_remove(ctx: &Ctx, who: &str) -> Result<Outcome> {
    let paths = ctx.paths();
    crate::store::trust::prepare(&paths)?;
    let p = path(&paths);
    let signers = load(&paths)?;
    let gone: Vec<&allowed::Signer> = signers
        .iter()
        .filter(|s| s.principals == who || s.fingerprint() == who)
        .collect();
    if gone.is_empty() {
        return Err(bad_input(format!(
            "no line of {} has principals or fingerprint {who:?} (see `rxnode node signers list`)",
            p.display()
        )));
    }
    let lines: Vec<usize> = gone.iter().map(|s| s.line).collect();
    let text = crate::store::fsutil::read_to_string(&p)
        .with_context(|| format!("cannot read {}", p.display()))?;
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if !lines.contains(&(i + 1)) {
            out.push_str(l);
            out.push('\n');
        }
    }
    write_file(&paths, &out)?;
    let views: Vec<SignerView> = gone.iter().map(|s| SignerView::of(s)).collect();
    let _ = crate::store::ledger::append(
        &paths,
        &crate::store::ledger::Entry::new(crate::store::ledger::Event::SignerRemoved {
            removed: views
                .iter()
                .map(|v| (v.principals.clone(), v.fingerprint.clone()))
                .collect(),
        }),
    );
    ctx.report(&views, |v| {
        let mut t = format!("removed {} line(s) from {}:\n", v.len(), p.display());
        for s in v {
            t.push_str(&s.text());
        }
        t
    })?;
    Ok(Outcome::Done)
}

#[cfg(all(test, unix))]
mod bench {
    //! The CPU a poll that finds a task spends on its signature:
    //! `cargo test --release -p rxnode --lib -- --ignored --nocapture signature_cost`
    //! (docs/benchmarks.md#signature-verification).
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=b", "-c", "user.email=b@example.invalid"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// Process CPU time (user + system), seconds.
    fn cpu() -> f64 {
        // SAFETY: getrusage only writes into the zeroed struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        t(ru.ru_utime) + t(ru.ru_stime)
    }

    #[test]
    #[ignore = "a measurement: run with --release --ignored --nocapture"]
    fn signature_cost() {
        let d = tempfile::tempdir().unwrap();
        let repo_dir = d.path().join("rx");
        std::fs::create_dir(&repo_dir).unwrap();
        git(&repo_dir, &["init", "-q"]);
        let key = d.path().join("k");
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(ok.success());
        let path = "docs/handoff/NEXT_RX_TASK.md";
        std::fs::create_dir_all(repo_dir.join("docs/handoff")).unwrap();
        std::fs::write(repo_dir.join(path), "TASK_ID = X\n").unwrap();
        git(&repo_dir, &["add", "."]);
        let sk = format!("user.signingkey={}", key.display());
        git(
            &repo_dir,
            &[
                "-c",
                "gpg.format=ssh",
                "-c",
                &sk,
                "commit",
                "-S",
                "-q",
                "-m",
                "t",
            ],
        );
        let paths = Paths::new(&repo_dir);
        std::fs::create_dir_all(&paths.local).unwrap();
        let pubkey = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        // A realistic list: 20 signers, ours last.
        let mut list = String::new();
        for i in 0..19 {
            let other = d.path().join(format!("o{i}"));
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(&other)
                .status()
                .unwrap();
            let p = std::fs::read_to_string(other.with_extension("pub")).unwrap();
            list.push_str(&format!("u{i}@lab namespaces=\"git\" {p}"));
        }
        list.push_str(&format!("me@lab namespaces=\"git\" {pubkey}"));
        std::fs::write(path_of(&paths), list).unwrap();
        let repo = Repository::open(&repo_dir).unwrap();
        crate::store::trust::prepare(&paths).unwrap();
        let head = repo.head().unwrap().target().unwrap();
        let n = 200;
        let t0 = cpu();
        for _ in 0..n {
            let c = check(&paths, &repo, head, path).unwrap();
            assert_eq!(c.status.word(), "good");
        }
        let per = (cpu() - t0) / f64::from(n) * 1e3;
        let t0 = cpu();
        for _ in 0..n {
            crate::store::policy::load(&paths).unwrap();
        }
        let pol = (cpu() - t0) / f64::from(n) * 1e3;
        println!(
            "signature check (load 20 signers, find the changing commit, extract, verify ed25519): {per:.3} ms CPU per task version"
        );
        println!(
            "policy load (trust root check included), once more per examination: {pol:.3} ms CPU"
        );
        println!(
            "a poll that finds one task checks it twice (examination, prompt): {:.3} ms CPU added",
            2.0 * (per + pol)
        );
    }

    fn path_of(paths: &Paths) -> PathBuf {
        path(paths)
    }
}
