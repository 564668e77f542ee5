//! Reading the files of Git's path rules (`.gitignore`, `.gitattributes`, the
//! repository's `info/` files and the user's global ones) as Git reads them:
//! an in-tree file that is a link is not followed, a missing one is no rules.
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest rules file read (Git reads any size; a larger one is refused).
pub(super) const MAX_RULES_FILE: u64 = 8 << 20;

/// A rules file's bytes; `None` when there is none (or, `in_tree`, when it is a
/// link, which Git does not follow). `what` names the rules in errors
/// ("ignore", "attribute").
pub(super) fn read(file: &Path, in_tree: bool, what: &str) -> Result<Option<Vec<u8>>, String> {
    let opened = if in_tree {
        rxnode_dsp::open_regular_nofollow(file)
    } else {
        rxnode_dsp::open_regular(file)
    };
    let f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // Git skips an in-tree rules file that is a link (ELOOP from the
        // no-follow open; Windows: a reparse point).
        Err(_) if in_tree && is_link(file) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "cannot read the {what} rules in {}: {e}",
                file.display()
            ))
        }
    };
    let mut bytes = Vec::new();
    f.take(MAX_RULES_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the {what} rules in {}: {e}", file.display()))?;
    if bytes.len() as u64 > MAX_RULES_FILE {
        return Err(format!(
            "{} is over {} MiB: its {what} rules are not read",
            file.display(),
            MAX_RULES_FILE >> 20
        ));
    }
    Ok(Some(bytes))
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| crate::store::fsutil::is_link(&m))
}

/// What every set of Git's path rules of a work tree starts from.
pub(super) struct WorkTree {
    /// The work tree's top.
    pub(super) root: PathBuf,
    /// `core.ignoreCase`: patterns match without regard to case.
    pub(super) icase: bool,
    /// The user's global rules file: the config's `key`, else Git's default.
    pub(super) global: Option<PathBuf>,
}

impl WorkTree {
    /// `repo`'s, with its global rules file from `key` (`core.excludesFile`,
    /// `core.attributesFile`) or Git's default `name`; an error for a bare
    /// repository.
    pub(super) fn of(repo: &git2::Repository, key: &str, name: &str) -> Result<WorkTree, String> {
        let root = repo
            .workdir()
            .ok_or("the repository has no work tree")?
            .to_path_buf();
        let config = repo.config().ok();
        let icase = config
            .as_ref()
            .and_then(|c| c.get_bool("core.ignorecase").ok())
            .unwrap_or(false);
        let global = config
            .as_ref()
            .and_then(|c| c.get_path(key).ok())
            .or_else(|| default_global(name));
        Ok(WorkTree {
            root,
            icase,
            global,
        })
    }
}

/// Git's default global rules file `name` (`ignore` for `core.excludesFile`,
/// `attributes` for `core.attributesFile`): `$XDG_CONFIG_HOME/git/NAME`, else
/// `~/.config/git/NAME`.
fn default_global(name: &str) -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("git").join(name));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("USERPROFILE").filter(|h| !h.is_empty()))?;
    Some(PathBuf::from(home).join(".config").join("git").join(name))
}
