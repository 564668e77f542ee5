//! The `git` program as the tests use it (the product never does), the observable
//! state of a checkout, and a loopback `git daemon`.
use super::net::free_port;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// `git ARGS` in `dir` as the main PC: a fixed identity, no system config, no
/// optional locks (so `git status` never rewrites the index a snapshot hashes), no
/// credential prompt.
pub fn git_out(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .args([
            "-c",
            "user.name=Main PC",
            "-c",
            "user.email=main@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs")
}

/// [`git_out`] that must succeed: its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_stdout(dir, args).trim().to_owned()
}

/// [`git_out`] that must succeed: its stdout as it is (a blob's exact text).
pub fn git_stdout(dir: &Path, args: &[&str]) -> String {
    let out = git_out(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// [`git_out`] that may fail (e.g. a missing ref): its stdout, trimmed, or None.
pub fn git_try(dir: &Path, args: &[&str]) -> Option<String> {
    let out = git_out(dir, args);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `file://` URL of a local repository.
pub fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The observable Git state of a checkout that rxnode must never change.
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    head: String,
    branch: String,
    index_sha: String,
    staged: String,
    /// `git status` but for rxnode's own `.local/` (which its first run may add to
    /// `.git/info/exclude`, outside the work tree).
    status: String,
    /// Every tracked path with its bytes in the work tree (None: unreadable there).
    worktree: Vec<(String, Option<Vec<u8>>)>,
}

/// The [`Snapshot`] of the checkout at `checkout`.
pub fn snapshot(checkout: &Path) -> Snapshot {
    use sha2::{Digest, Sha256};
    let index = std::fs::read(checkout.join(".git/index")).unwrap_or_default();
    let worktree = git(checkout, &["ls-files"])
        .lines()
        .map(|f| (f.to_owned(), std::fs::read(checkout.join(f)).ok()))
        .collect();
    Snapshot {
        head: git(checkout, &["rev-parse", "HEAD"]),
        branch: git(checkout, &["symbolic-ref", "HEAD"]),
        index_sha: hex::encode(Sha256::digest(&index)),
        staged: git(checkout, &["ls-files", "--stage"]),
        status: git(
            checkout,
            &[
                "status",
                "--porcelain=v1",
                "--untracked-files=all",
                "--",
                ".",
                ":(exclude).local",
            ],
        ),
        worktree,
    }
}

/// A `git daemon` on loopback (receive-pack enabled) serving `base`, killed on drop
/// with its whole process group: `git daemon` runs `git-daemon` as a child, which
/// forks one more per connection, and killing only the first left them running.
pub struct GitDaemon {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) on the process group this daemon leads (see start_daemon_on).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start a [`GitDaemon`] on a port no other test of this process holds; None if it
/// does not listen within 10 s (or exits: then the port was taken by someone else).
pub fn start_daemon(base: &Path) -> Option<GitDaemon> {
    start_daemon_on(base, free_port())
}

/// Start a [`GitDaemon`] on `port` (e.g. one a client was already told about).
pub fn start_daemon_on(base: &Path, port: u16) -> Option<GitDaemon> {
    let mut cmd = Command::new("git");
    // Its own process group, so that drop ends every process it starts.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .args([
            "daemon",
            "--reuseaddr",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
            &format!("--base-path={}", base.display()),
            "--export-all",
            "--enable=receive-pack",
            &base.display().to_string(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut d = GitDaemon { child, port };
    for _ in 0..200 {
        if !matches!(d.child.try_wait(), Ok(None)) {
            return None;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(d);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// A peer repository under `root` pushes to `remote` (a path or URL), as `refname`,
/// one commit whose message is 8 MiB of `A` (a few KiB once compressed: a commit of
/// any size costs a hostile peer no more to push). Its id.
pub fn push_oversized_commit(root: &Path, remote: &str, refname: &str) -> String {
    let peer = root.join("peer");
    git(root, &["init", "-q", peer.to_str().unwrap()]);
    std::fs::write(peer.join("x"), "x\n").unwrap();
    git(&peer, &["add", "x"]);
    let msg = root.join("msg.txt");
    std::fs::write(&msg, vec![b'A'; 8 << 20]).unwrap();
    git(&peer, &["commit", "-q", "-F", msg.to_str().unwrap()]);
    let bomb = git(&peer, &["rev-parse", "HEAD"]);
    git(&peer, &["push", "-q", remote, &format!("HEAD:{refname}")]);
    bomb
}
