//! SSH signing as the main PC does it: keys from the real `ssh-keygen`, commits
//! from the real `git commit -S` with `gpg.format=ssh`, and hand-made commit
//! objects for the hostile cases (a signature block grafted onto a commit).
use super::git::git;
use super::lab::{Lab, BRANCH, TASK_PATH};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A key pair made by `ssh-keygen -t ed25519` (no passphrase).
pub struct Key {
    /// The private key file (0600); `user.signingkey` for git.
    pub private: PathBuf,
    /// The public key file (`.pub`).
    pub public: PathBuf,
}

impl Key {
    /// A new ed25519 key `name` in `dir`.
    pub fn new(dir: &Path, name: &str) -> Key {
        let private = dir.join(name);
        let out = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&private)
            .output()
            .expect("ssh-keygen runs (Debian's openssh-client: scripts/setup.sh --tests)");
        assert!(out.status.success(), "ssh-keygen: {out:?}");
        Key {
            public: private.with_extension("pub"),
            private,
        }
    }

    /// The public key line (`ssh-ed25519 AAAA… name`).
    pub fn public_line(&self) -> String {
        std::fs::read_to_string(&self.public)
            .unwrap()
            .trim()
            .to_owned()
    }

    /// `SHA256:…` as `ssh-keygen -l` prints it.
    pub fn fingerprint(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(&self.public)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.split_whitespace().nth(1).unwrap().to_owned()
    }

    /// `ssh-keygen -Y sign -n NAMESPACE` over `data`: the armored block.
    pub fn sign(&self, namespace: &str, data: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data");
        std::fs::write(&f, data).unwrap();
        let out = Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", namespace, "-f"])
            .arg(&self.private)
            .arg(&f)
            .output()
            .unwrap();
        assert!(out.status.success(), "ssh-keygen -Y sign: {out:?}");
        std::fs::read_to_string(dir.path().join("data.sig")).unwrap()
    }
}

impl Lab {
    /// Commit `text` as the task file with `git commit -S` (`gpg.format=ssh`,
    /// `user.signingkey` = `key`) and push; returns the commit.
    pub fn post_signed(&self, text: &str, key: &Key) -> String {
        self.commit_file(TASK_PATH, text.as_bytes(), Some(key));
        git(&self.main, &["push", "-q", "origin", BRANCH]);
        self.main_head()
    }

    /// Commit `bytes` at `path` on the main PC (signed with `key`), not pushed.
    pub fn commit_file(&self, path: &str, bytes: &[u8], key: Option<&Key>) -> String {
        let p = self.main.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        git(&self.main, &["add", path]);
        match key {
            Some(k) => git(
                &self.main,
                &[
                    "-c",
                    "gpg.format=ssh",
                    "-c",
                    &format!("user.signingkey={}", k.private.display()),
                    "commit",
                    "-S",
                    "-q",
                    "-m",
                    &format!("post {path} (signed)"),
                ],
            ),
            None => git(&self.main, &["commit", "-q", "-m", &format!("post {path}")]),
        };
        self.main_head()
    }

    /// Commit `text` as the task file unsigned, then replace that commit by
    /// one whose `gpgsig` header is `block(the commit's text)`: pushed; returns
    /// the new commit.
    pub fn post_grafted(&self, text: &str, block: impl FnOnce(&[u8]) -> String) -> String {
        let c = self.commit_file(TASK_PATH, text.as_bytes(), None);
        let raw = git_raw(&self.main, &["cat-file", "commit", &c]);
        let sig = block(&raw);
        let grafted = with_gpgsig(&raw, &sig);
        let oid = hash_commit(&self.main, &grafted);
        git(
            &self.main,
            &["update-ref", &format!("refs/heads/{BRANCH}"), &oid],
        );
        git(&self.main, &["reset", "-q", "--hard", &oid]);
        git(&self.main, &["push", "-q", "origin", BRANCH]);
        oid
    }
}

/// The bytes of `git ARGS` (a commit object's exact text).
pub fn git_raw(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = super::git::git_out(dir, args);
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out.stdout
}

/// `raw` (a commit object's text) with a `gpgsig` header holding `sig`, placed
/// after the committer line as git places it.
pub fn with_gpgsig(raw: &[u8], sig: &str) -> Vec<u8> {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let (head, body) = text.split_once("\n\n").unwrap();
    let mut out = String::from(head);
    out.push_str("\ngpgsig ");
    out.push_str(&sig.trim_end().replace('\n', "\n "));
    out.push_str("\n\n");
    out.push_str(body);
    out.into_bytes()
}

/// Write `raw` as a commit object; its ID.
pub fn hash_commit(dir: &Path, raw: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .current_dir(dir)
        .args(["hash-object", "-t", "commit", "-w", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(raw).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git hash-object: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
