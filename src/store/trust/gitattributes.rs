//! Whether Git gives a path a `filter`, by Git's own attribute rules
//! (gitattributes(5)).
//!
//! libgit2 parses `.gitattributes` differently from `git` itself: Git reads a
//! pattern that starts with `"` as a C-style quoted string (`"\056local/*"` is
//! `.local/*`, `".local/a b"` holds a space), libgit2 takes the quotes as part
//! of the pattern, so a committed `".local/**" filter=x` set a filter that
//! libgit2 never saw. This module reads the rules as Git does:
//!
//! - the sources, lowest first: the built-in `binary` macro,
//!   `core.attributesFile` (by default `$XDG_CONFIG_HOME/git/attributes`), the
//!   top-level `.gitattributes`, each folder's `.gitattributes` down to the
//!   path's own folder, then `$GIT_DIR/info/attributes`; a higher source
//!   decides first, and within a file the last line first;
//! - an in-tree `.gitattributes` is read from the work tree, else from the
//!   index (what `git check-attr` does), and — asked separately — from the
//!   index, else the work tree (what a checkout does); a filter either way is
//!   reported; one that is a symlink is not read (Git does not follow it);
//! - a line: a pattern (C-style quoted when it starts with `"` and the quote
//!   parses, else up to the first blank) then attributes (`name`, `-name`,
//!   `!name`, `name=value`); a line with an invalid attribute name, a `!`
//!   pattern, or a macro (`[attr]name …`) outside a top-level file is dropped,
//!   as Git drops it; a line of 2048 bytes or more is ignored, as by Git;
//! - a macro set on a path sets its attributes too, recursively.
//!
//! Only rules that can decide `filter` (naming it, or a macro that expands to
//! it) are matched; each file is parsed once per process and each of those
//! patterns compiled once; more than 4096 of them are an error (the check runs
//! several times per command and must stay fast on a hostile file).
//!
//! Patterns are matched by the `ignore` crate's gitignore matcher, one rule at
//! a time (an attribute pattern never matches the files inside a folder it
//! names). A pattern that cannot be handed to it exactly (not UTF-8, a line
//! break, trailing white space, a glob it cannot parse, `{`/`}` inside `[…]`)
//! is taken to match every path: it fails closed. A file that cannot be read,
//! is over 8 MiB or holds a NUL byte is an error naming it.
use super::rules_file;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The largest attributes file read (a larger one is refused).
const MAX_ATTR_FILE: u64 = rules_file::MAX_RULES_FILE;
/// Git ignores an attributes line this long or longer.
const MAX_LINE: usize = 2048;
/// Git's own macro, the lowest source.
const BUILTIN: &[u8] = b"[attr]binary -diff -merge -text\n";

/// One attribute's state on a line.
#[derive(Debug, Clone, PartialEq)]
enum State {
    /// `name`
    Set,
    /// `-name`
    Unset,
    /// `!name`
    Unspecified,
    /// `name=value`
    Value(String),
}

/// What a line's pattern matches.
enum Pattern {
    /// One gitignore-style glob, relative to the file's folder.
    Glob(Gitignore),
    /// A pattern that cannot be read exactly: taken to match every path.
    Any,
}

/// A line's pattern as written (after Git's unquoting).
enum Raw {
    /// A path pattern, compiled when a rule that can touch `filter` needs it.
    Path(Vec<u8>, OnceCell<Pattern>),
    /// `[attr]NAME`: a macro definition, no path.
    Macro(String),
}

struct Rule {
    raw: Raw,
    states: Vec<(String, State)>,
}

/// One source's rules, in file order, patterns relative to `base`.
struct Frame {
    base: PathBuf,
    rules: Vec<Rule>,
}

/// At most this many path patterns that can touch `filter` are compiled per
/// check (a larger set is refused: the check must stay fast on every start).
const MAX_FILTER_RULES: usize = 4096;

/// Git's attribute rules of one checkout, each file parsed once and each
/// pattern compiled once across the paths and orders asked about.
pub(crate) struct Attributes<'r> {
    repo: &'r git2::Repository,
    root: PathBuf,
    icase: bool,
    index: Option<git2::Index>,
    global: Option<PathBuf>,
    compiled: usize,
}

/// (file shown, base, macro_ok, core.ignoreCase, which the compiled patterns
/// follow) → the bytes parsed and their rules.
type Parsed = HashMap<(String, PathBuf, bool, bool), Vec<(Vec<u8>, Rc<Frame>)>>;

thread_local! {
    /// Every attributes file parsed in this process (the trust root is checked
    /// several times per command): parsed, and its patterns compiled, once.
    static PARSED: RefCell<Parsed> = RefCell::new(HashMap::new());
}

/// Which copy of an in-tree `.gitattributes` is read first.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Order {
    /// The work tree's file, else the index's (`git check-attr`, `git add`).
    WorkTreeFirst,
    /// The index's, else the work tree's (a checkout, a `git pull`).
    IndexFirst,
}

impl<'r> Attributes<'r> {
    /// The rules of `repo`'s work tree; an error when it has none.
    pub(crate) fn of(repo: &'r git2::Repository) -> Result<Attributes<'r>, String> {
        let rules_file::WorkTree {
            root,
            icase,
            global,
        } = rules_file::WorkTree::of(repo, "core.attributesfile", "attributes")?;
        Ok(Attributes {
            repo,
            root,
            icase,
            index: repo.index().ok(),
            global,
            compiled: 0,
        })
    }

    fn frame(
        &mut self,
        name: String,
        base: PathBuf,
        macro_ok: bool,
        bytes: Vec<u8>,
    ) -> Result<Rc<Frame>, String> {
        // The work tree's and the index's copies are usually the same bytes.
        let key = (name, base, macro_ok, self.icase);
        let known = PARSED.with(|p| {
            p.borrow()
                .get(&key)
                .and_then(|v| v.iter().find(|(b, _)| *b == bytes).map(|(_, f)| f.clone()))
        });
        if let Some(f) = known {
            return Ok(f);
        }
        let f = Rc::new(parse(&key.0, &bytes, &key.1, macro_ok)?);
        PARSED.with(|p| {
            let mut p = p.borrow_mut();
            let v = p.entry(key).or_default();
            // Bounded: a file that keeps changing keeps only its last 4 versions.
            if v.len() >= 4 {
                v.remove(0);
            }
            v.push((bytes, f.clone()));
        });
        Ok(f)
    }

    /// The value Git gives `filter` on `rel` (relative to the work tree,
    /// `/`-separated): `Some(value)` when set (`"set"` for a bare `filter`),
    /// `None` when unset or unspecified; an error naming the file that cannot
    /// be read.
    pub(crate) fn filter_of(&mut self, rel: &str, order: Order) -> Result<Option<String>, String> {
        let root = self.root.clone();
        let mut frames =
            vec![self.frame("built-in".into(), root.clone(), true, BUILTIN.to_vec())?];
        if let Some(g) = self.global.clone() {
            if let Some(bytes) = rules_file::read(&g, false, "attribute")? {
                frames.push(self.frame(g.display().to_string(), root.clone(), true, bytes)?);
            }
        }
        let parts: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
        for depth in 0..parts.len() {
            let dir: Vec<&str> = parts[..depth].to_vec();
            let in_repo =
                dir.iter().map(|d| format!("{d}/")).collect::<String>() + ".gitattributes";
            let base: PathBuf = root.join(dir.iter().collect::<PathBuf>());
            let file = base.join(".gitattributes");
            let work = || rules_file::read(&file, true, "attribute");
            let cached = || read_index(self.repo, self.index.as_ref(), &in_repo);
            let bytes = match order {
                Order::WorkTreeFirst => match work()? {
                    Some(b) => Some(b),
                    None => cached()?,
                },
                Order::IndexFirst => match cached()? {
                    Some(b) => Some(b),
                    None => work()?,
                },
            };
            if let Some(bytes) = bytes {
                frames.push(self.frame(in_repo, base, depth == 0, bytes)?);
            }
        }
        let info = self.repo.commondir().join("info").join("attributes");
        if let Some(bytes) = rules_file::read(&info, false, "attribute")? {
            frames.push(self.frame(info.display().to_string(), root.clone(), true, bytes)?);
        }
        let path = root.join(parts.iter().collect::<PathBuf>());
        let icase = self.icase;
        Ok(
            match resolve(&frames, &path, icase, &mut self.compiled)?.get("filter") {
                Some(State::Set) => Some("set".to_owned()),
                Some(State::Value(v)) => Some(v.clone()),
                _ => None,
            },
        )
    }
}

/// [`Attributes::filter_of`] for one path.
#[cfg(test)]
pub(crate) fn filter_of(
    repo: &git2::Repository,
    rel: &str,
    order: Order,
) -> Result<Option<String>, String> {
    Attributes::of(repo)?.filter_of(rel, order)
}

/// The attributes whose state can decide `filter`: `filter` and every macro
/// whose expansion (through other macros) names one of them.
fn filter_relevant<'a>(macros: &HashMap<&'a str, &'a Rule>) -> Vec<&'a str> {
    let mut r: Vec<&str> = vec!["filter"];
    loop {
        let before = r.len();
        for (name, m) in macros {
            if !r.contains(name) && m.states.iter().any(|(n, _)| r.contains(&n.as_str())) {
                r.push(name);
            }
        }
        if r.len() == before {
            return r;
        }
    }
}

/// Git's fill: highest source first, last line first; an attribute keeps the
/// first state given to it; a macro set to true sets its own attributes. Only
/// rules that name an attribute able to decide `filter` are matched (others
/// cannot change it); their patterns are compiled here, at most
/// [`MAX_FILTER_RULES`] in all.
fn resolve(
    frames: &[Rc<Frame>],
    path: &Path,
    icase: bool,
    compiled: &mut usize,
) -> Result<HashMap<String, State>, String> {
    let mut macros: HashMap<&str, &Rule> = HashMap::new();
    for f in frames.iter().rev() {
        for r in f.rules.iter().rev() {
            if let Raw::Macro(name) = &r.raw {
                macros.entry(name.as_str()).or_insert(r);
            }
        }
    }
    let relevant = filter_relevant(&macros);
    let mut out = HashMap::new();
    for f in frames.iter().rev() {
        for r in f.rules.iter().rev() {
            let Raw::Path(pat, cell) = &r.raw else {
                continue;
            };
            if !r.states.iter().any(|(n, _)| relevant.contains(&n.as_str())) {
                continue;
            }
            if cell.get().is_none() {
                *compiled += 1;
                if *compiled > MAX_FILTER_RULES {
                    return Err(format!(
                        "the attribute rules hold more than {MAX_FILTER_RULES} patterns that can set \
                         `filter` (directly or through a macro): not checked"
                    ));
                }
            }
            let hit = match cell.get_or_init(|| glob(&f.base, pat, icase)) {
                Pattern::Any => true,
                Pattern::Glob(g) => matches!(g.matched(path, false), Match::Ignore(_)),
            };
            if hit {
                fill(&mut out, r, &macros, 0);
            }
        }
    }
    Ok(out)
}

fn fill<'a>(
    out: &mut HashMap<String, State>,
    rule: &'a Rule,
    macros: &HashMap<&str, &'a Rule>,
    depth: usize,
) {
    // A macro that names itself (directly or not) ends here, as in Git,
    // which sets each attribute once.
    if depth > 64 {
        return;
    }
    for (name, state) in rule.states.iter().rev() {
        if out.contains_key(name) {
            continue;
        }
        out.insert(name.clone(), state.clone());
        if *state == State::Set {
            if let Some(m) = macros.get(name.as_str()) {
                fill(out, m, macros, depth + 1);
            }
        }
    }
}

/// The index's copy of `in_repo` (`None`: not in the index, or a symlink).
fn read_index(
    repo: &git2::Repository,
    index: Option<&git2::Index>,
    in_repo: &str,
) -> Result<Option<Vec<u8>>, String> {
    let Some(e) = index.and_then(|i| i.get_path(Path::new(in_repo), 0)) else {
        return Ok(None);
    };
    if e.mode & 0o170000 != 0o100000 {
        return Ok(None);
    }
    let odb = repo
        .odb()
        .map_err(|err| format!("{in_repo} in the index cannot be read: {}", err.message()))?;
    let (size, _) = odb
        .read_header(e.id)
        .map_err(|err| format!("{in_repo} in the index cannot be read: {}", err.message()))?;
    if size as u64 > MAX_ATTR_FILE {
        return Err(format!(
            "{in_repo} in the index is over {} MiB: its attribute rules are not read",
            MAX_ATTR_FILE >> 20
        ));
    }
    let blob = repo
        .find_blob(e.id)
        .map_err(|err| format!("{in_repo} in the index cannot be read: {}", err.message()))?;
    Ok(Some(blob.content().to_vec()))
}

const BLANK: &[u8] = b" \t\r\n";

fn skip_blank(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|c| BLANK.contains(c)).count();
    &s[n..]
}

fn split_token(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| !BLANK.contains(c)).count();
    (&s[..n], &s[n..])
}

/// Git's `unquote_c_style`: the string inside the quotes at the start of `s`
/// and the rest after the closing quote; `None` when it does not parse.
pub(super) fn unquote_c(s: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = s.strip_prefix(b"\"")?;
    let mut out = Vec::new();
    loop {
        let (&c, after) = rest.split_first()?;
        rest = after;
        match c {
            b'"' => return Some((out, rest)),
            b'\\' => {}
            _ => {
                out.push(c);
                continue;
            }
        }
        let (&e, after) = rest.split_first()?;
        rest = after;
        let ch = match e {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'\\' | b'"' => e,
            b'0'..=b'3' => {
                let (&d2, after) = rest.split_first()?;
                let (&d3, after) = after.split_first()?;
                rest = after;
                if !(b'0'..=b'7').contains(&d2) || !(b'0'..=b'7').contains(&d3) {
                    return None;
                }
                ((e - b'0') << 6) | ((d2 - b'0') << 3) | (d3 - b'0')
            }
            _ => return None,
        };
        out.push(ch);
    }
}

/// Git's `attr_name_valid` and not reserved (`builtin_…`).
fn attr_name_ok(name: &[u8]) -> bool {
    !name.is_empty()
        && name[0] != b'-'
        && name
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
        && !name.starts_with(b"builtin_")
}

/// One attribute token: its name and state; `None` when Git drops the line.
fn state_of(tok: &[u8]) -> Option<(String, State)> {
    let (state, rest) = match tok.first() {
        Some(b'-') => (Some(State::Unset), &tok[1..]),
        Some(b'!') => (Some(State::Unspecified), &tok[1..]),
        _ => (None, tok),
    };
    let (name, value) = match rest.iter().position(|&c| c == b'=') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    if !attr_name_ok(name) {
        return None;
    }
    let name = std::str::from_utf8(name).ok()?.to_owned();
    let state = match (state, value) {
        (Some(s), _) => s,
        (None, None) => State::Set,
        (None, Some(v)) => State::Value(String::from_utf8_lossy(v).into_owned()),
    };
    Some((name, state))
}

/// Parse the attributes file `name`, patterns relative to `base` (absolute);
/// `macro_ok` for a top-level one.
fn parse(name: &str, bytes: &[u8], base: &Path, macro_ok: bool) -> Result<Frame, String> {
    if bytes.contains(&0) {
        return Err(format!(
            "{name} holds a NUL byte: its attribute rules cannot be checked"
        ));
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let mut rules = Vec::new();
    for raw in bytes.split(|&c| c == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.len() >= MAX_LINE {
            continue;
        }
        if let Some(rule) = parse_line(line, macro_ok) {
            rules.push(rule);
        }
    }
    Ok(Frame {
        base: base.to_path_buf(),
        rules,
    })
}

/// One line as Git's `parse_attr_line` reads it; `None`: no rule.
fn parse_line(line: &[u8], macro_ok: bool) -> Option<Rule> {
    let cp = skip_blank(line);
    if cp.is_empty() || cp[0] == b'#' {
        return None;
    }
    let (pat, rest): (Vec<u8>, &[u8]) = match unquote_c(cp) {
        Some((p, rest)) if cp[0] == b'"' => (p, rest),
        _ => {
            let (p, rest) = split_token(cp);
            (p.to_vec(), rest)
        }
    };
    let mut states = Vec::new();
    let mut rest = skip_blank(rest);
    while !rest.is_empty() {
        let (tok, after) = split_token(rest);
        states.push(state_of(tok)?);
        rest = skip_blank(after);
    }
    let raw = if pat.len() > 6 && pat.starts_with(b"[attr]") {
        if !macro_ok || !attr_name_ok(&pat[6..]) {
            return None;
        }
        Raw::Macro(String::from_utf8_lossy(&pat[6..]).into_owned())
    } else {
        if pat.first() == Some(&b'!') {
            return None;
        }
        Raw::Path(pat, OnceCell::new())
    };
    Some(Rule { raw, states })
}

/// Git's path pattern `pat` as a one-rule gitignore matcher; [`Pattern::Any`]
/// when it cannot be handed over exactly.
fn glob(base: &Path, pat: &[u8], icase: bool) -> Pattern {
    if pat.is_empty() {
        // Git: an empty pattern matches nothing.
        return Pattern::Glob(Gitignore::empty());
    }
    let trailing = pat.iter().rev().take_while(|&&c| c == b'\\').count();
    if trailing % 2 == 1 {
        // Git's wildmatch: a pattern ending in a lone `\` matches nothing.
        return Pattern::Glob(Gitignore::empty());
    }
    let Ok(s) = std::str::from_utf8(pat) else {
        return Pattern::Any;
    };
    if s.chars().any(|c| c.is_control())
        || s.ends_with(char::is_whitespace)
        || s.starts_with(char::is_whitespace)
        || (s.contains('[') && (s.contains('{') || s.contains('}')))
    {
        return Pattern::Any;
    }
    // Git's `{`, `}` are plain characters; for the matcher they group.
    let mut line = String::with_capacity(s.len() + 2);
    if s.starts_with('#') {
        line.push('\\');
    }
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                line.push(c);
                if let Some(n) = chars.next() {
                    line.push(n);
                }
            }
            '{' | '}' => {
                line.push('\\');
                line.push(c);
            }
            _ => line.push(c),
        }
    }
    let mut b = GitignoreBuilder::new(base);
    if b.case_insensitive(icase).is_err() || b.add_line(None, &line).is_err() {
        return Pattern::Any;
    }
    match b.build() {
        Ok(g) if g.num_ignores() == 1 => Pattern::Glob(g),
        _ => Pattern::Any,
    }
}

#[cfg(test)]
mod tests;
