//! Whether Git ignores a path, by Git's own rules (docs/safety.md, "Trust root").
//!
//! libgit2's `is_path_ignored` answers differently from `git` itself: with
//! `/.local/` in `.git/info/exclude` and a committed `.gitignore` of `!/.local/`,
//! `git add -A` stages the policy, the state and the ledger, while libgit2 calls
//! every one of them ignored (it lets the exclude file decide for the folder).
//! This module applies Git's documented order instead (gitignore(5)):
//!
//! - the sources, highest first: the `.gitignore` of each folder from the
//!   path's own folder up to the work tree's root, then `$GIT_DIR/info/exclude`,
//!   then `core.excludesFile` (by default `$XDG_CONFIG_HOME/git/ignore`);
//!   the first source with a matching pattern decides, and within a source the
//!   last matching pattern (a `!` pattern re-includes);
//! - a path below a folder Git ignores is ignored whatever its own rules say
//!   ("it is not possible to re-include a file if a parent directory of that
//!   file is excluded"): Git never looks inside such a folder;
//! - an in-tree `.gitignore` that is a symlink is not read (Git does not follow
//!   it); `core.ignoreCase` makes every match case-insensitive.
//!
//! Patterns are matched by the `ignore` crate's gitignore matcher (ripgrep's).
//! Every check that needs "Git cannot see this" asks both this and libgit2 and
//! trusts a path only when both call it ignored, so neither engine's mistake
//! alone can expose a node-local file. A rule that cannot be read fails closed:
//! an unreadable or oversized ignore file, a line that is not UTF-8, or a `!`
//! pattern the matcher cannot parse is an error naming the file and line.
use super::rules_file;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Git's ignore rules for one work tree, with each folder's `.gitignore` read
/// once, when a path below it is first asked about.
pub(crate) struct GitIgnores {
    root: PathBuf,
    icase: bool,
    /// `$GIT_DIR/info/exclude`, then `core.excludesFile`.
    files: Vec<Gitignore>,
    /// Each folder's `.gitignore` (relative folder → its rules; `None`: none).
    per_dir: HashMap<PathBuf, Option<Gitignore>>,
}

impl GitIgnores {
    /// The rules of `repo`'s work tree; an error (naming the file) when one
    /// cannot be read. A bare repository has none.
    pub(crate) fn of(repo: &git2::Repository) -> Result<GitIgnores, String> {
        let rules_file::WorkTree {
            root,
            icase,
            global,
        } = rules_file::WorkTree::of(repo, "core.excludesfile", "ignore")?;
        let mut files = Vec::new();
        let exclude = repo.commondir().join("info").join("exclude");
        files.extend(load(&root, &exclude, icase, false)?);
        if let Some(global) = global {
            files.extend(load(&root, &global, icase, false)?);
        }
        Ok(GitIgnores {
            root,
            icase,
            files,
            per_dir: HashMap::new(),
        })
    }

    /// The rules `repo`'s work tree would have with `root_gitignore` as the
    /// content of its top-level `.gitignore` (`None`: none) — what a checkout of
    /// another commit would give, before it is checked out.
    pub(crate) fn with_root_gitignore(
        repo: &git2::Repository,
        root_gitignore: Option<&[u8]>,
    ) -> Result<GitIgnores, String> {
        let mut rules = GitIgnores::of(repo)?;
        let top = match root_gitignore {
            Some(bytes) => Some(self::rules(
                &rules.root,
                &rules.root.join(".gitignore"),
                bytes,
                rules.icase,
            )?),
            None => None,
        };
        rules.per_dir.insert(PathBuf::new(), top);
        Ok(rules)
    }

    /// Whether Git ignores `rel` (relative to the work tree, `/`-separated),
    /// a folder when `is_dir`: it or a folder above it is excluded.
    pub(crate) fn ignored(&mut self, rel: &str, is_dir: bool) -> Result<bool, String> {
        let parts: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
        for n in 1..=parts.len() {
            let last = n == parts.len();
            if self.excluded(&parts[..n], !last || is_dir)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether Git cannot see `rel`: ignored by these rules *and* by libgit2's
    /// (`repo` is the checkout these rules were read from).
    pub(crate) fn hidden(
        &mut self,
        repo: &git2::Repository,
        rel: &str,
        is_dir: bool,
    ) -> Result<bool, String> {
        // libgit2 takes a folder for a file unless it exists or ends in `/`.
        let asked = if is_dir {
            format!("{}/", rel.trim_end_matches('/'))
        } else {
            rel.to_owned()
        };
        Ok(self.ignored(rel, is_dir)? && repo.is_path_ignored(&asked).unwrap_or(false))
    }

    /// The path `parts` matched on its own (its folders' exclusion aside).
    fn excluded(&mut self, parts: &[&str], is_dir: bool) -> Result<bool, String> {
        let path: PathBuf = self.root.join(parts.iter().collect::<PathBuf>());
        // The `.gitignore` of its own folder first, then each folder above.
        for depth in (0..parts.len()).rev() {
            let dir: PathBuf = parts[..depth].iter().collect();
            if let Some(rules) = self.dir_rules(&dir)? {
                match rules.matched(&path, is_dir) {
                    Match::Ignore(_) => return Ok(true),
                    Match::Whitelist(_) => return Ok(false),
                    Match::None => {}
                }
            }
        }
        for rules in &self.files {
            match rules.matched(&path, is_dir) {
                Match::Ignore(_) => return Ok(true),
                Match::Whitelist(_) => return Ok(false),
                Match::None => {}
            }
        }
        Ok(false)
    }

    fn dir_rules(&mut self, dir: &Path) -> Result<Option<&Gitignore>, String> {
        if !self.per_dir.contains_key(dir) {
            let base = self.root.join(dir);
            let rules = load(&base, &base.join(".gitignore"), self.icase, true)?;
            self.per_dir.insert(dir.to_path_buf(), rules);
        }
        Ok(self.per_dir.get(dir).and_then(Option::as_ref))
    }
}

/// The rules of the ignore file `file`, patterns relative to `base`; `None`
/// when there is no such file (or, `in_tree`, when it is a symlink, which Git
/// does not follow).
fn load(base: &Path, file: &Path, icase: bool, in_tree: bool) -> Result<Option<Gitignore>, String> {
    match rules_file::read(file, in_tree, "ignore")? {
        Some(bytes) => rules(base, file, &bytes, icase).map(Some),
        None => Ok(None),
    }
}

/// Parse an ignore file's bytes. A pattern the matcher cannot parse never
/// matches; that is safe for an ignore pattern (Git would only hide more), not
/// for a `!` pattern (Git might show a file this would call ignored): refused.
fn rules(base: &Path, file: &Path, bytes: &[u8], icase: bool) -> Result<Gitignore, String> {
    let mut b = GitignoreBuilder::new(base);
    b.case_insensitive(icase)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    for (i, raw) in bytes.split(|&c| c == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.first() == Some(&b'#') || raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = std::str::from_utf8(raw).map_err(|_| {
            format!(
                "{} line {}: not UTF-8, so its ignore rule cannot be checked",
                file.display(),
                i + 1
            )
        })?;
        if let Err(e) = b.add_line(Some(file.to_path_buf()), line) {
            if line.starts_with('!') {
                return Err(format!(
                    "{} line {}: the rule {line:?} cannot be read ({e}), and it may re-include files",
                    file.display(),
                    i + 1
                ));
            }
        }
    }
    b.build().map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests;
