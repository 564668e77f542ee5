//! The `rxnode` library's modules form layers and no module calls up
//! (docs/architecture.md#the-rxnode-library-module-by-module): every path a
//! product source file names into the crate (`use crate::…`, `use super::…`, an
//! inline `crate::…`) leads to a module of its own layer or a lower one. Test code
//! (`#[cfg(test)]` modules and the files they declare) may reach up to build its
//! fixtures; the binary (`src/main.rs`, `src/cli/`, `src/commands/`) sits above
//! everything and calls only the library's exports.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, from the bottom; a module is in the layer of its longest prefix here.
/// A new top-level module must be placed in this table (and in
/// docs/architecture.md), or the test fails naming it.
const LAYERS: &[&[&str]] = &[
    // 0. Leaves: exit codes, JSON paths, terminal, signals, the one door for output,
    // the command line's values and shared option groups.
    &[
        "exit", "json", "stdout", "signals", "term", "shell", "options",
    ],
    // 1. The store's paths and atomic files, the context, a task's checks.
    &[
        "store::paths",
        "store::fsutil",
        "store::winsec",
        "store::key",
        "store::sealed",
        "context",
        "describe",
        "validate",
    ],
    // 2. Git access.
    &["git::ops"],
    // 3. The rest of the store; what may be pushed and the publication scanner.
    &["store", "git", "git::refspec", "git::scan"],
    // 4. The result model.
    &["result"],
    // 5. The live radio; publication; signers; the node status.
    &["radio", "git::publish", "signers", "heartbeat"],
    // 6. Radio health (self-tests through the live radio).
    &["health"],
    // 7. The watcher, the executor, the main PC, the service, the schemas.
    &["watch", "exec", "mainpc", "service", "schema"],
    // 8. Commands over all of them.
    &["store_cmds", "status", "doctor", "demo"],
];

fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, &'static str)> = None;
    for (rank, names) in LAYERS.iter().enumerate() {
        for &name in *names {
            let hit = module == name
                || module
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with("::"));
            if hit && best.is_none_or(|(_, b)| name.len() > b.len()) {
                best = Some((rank, name));
            }
        }
    }
    best
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `src/lib.rs` is the root, "".
fn module_of(rel: &Path) -> String {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without `//` comments and without its trailing
/// `#[cfg(test)] mod …` block (kept as lines, so line numbers stay).
fn product_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim_start() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|n| !n.trim_start().starts_with("#["))
                .is_some_and(|n| n.trim_start().starts_with("mod ") && n.trim_end().ends_with('{'))
        {
            break;
        }
        out.push(l.split("//").next().unwrap_or("").to_owned());
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand_tree(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match (tree.find('{'), tree.rfind('}')) {
        (Some(open), Some(close)) if close > open => {
            let head = tree[..open].trim().trim_end_matches("::");
            expand_list(&join(prefix, head), &tree[open + 1..close], out);
        }
        _ if !tree.is_empty() => {
            let item = tree.split(" as ").next().unwrap_or(tree).trim();
            out.push(join(prefix, item));
        }
        _ => {}
    }
}

/// `b, c::{d, e}` (the inside of braces) as trees under `prefix`.
fn expand_list(prefix: &str, list: &str, out: &mut Vec<String>) {
    let (mut depth, mut start) = (0i32, 0);
    for (i, ch) in list.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand_tree(prefix, &list[start..i], out);
                start = i + 1;
            }
            _ => {}
        }
    }
    expand_tree(prefix, &list[start..], out);
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}::{b}"),
    }
}

/// A path as written in module `me` (`crate::…`, `super::…`, `self::…`) as a
/// path from the crate root; `None` for paths into other crates.
fn resolve(me: &str, path: &str) -> Option<String> {
    let mut here: Vec<&str> = me.split("::").filter(|s| !s.is_empty()).collect();
    let mut segs = path.split("::").map(str::trim).peekable();
    match segs.peek().copied() {
        Some("crate") => {
            segs.next();
            here.clear();
        }
        Some("super") => {
            while segs.peek() == Some(&"super") {
                segs.next();
                here.pop();
            }
        }
        Some("self") => {
            segs.next();
        }
        _ => return None,
    }
    let rest: Vec<&str> = segs.filter(|s| *s != "self").collect();
    Some([here, rest].concat().join("::"))
}

#[test]
fn no_module_of_the_library_calls_a_layer_above_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    let binary = |rel: &Path| {
        rel == Path::new("main.rs") || rel.starts_with("cli") || rel.starts_with("commands")
    };
    let texts: BTreeMap<String, (PathBuf, String)> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).unwrap().to_path_buf();
            let text = std::fs::read_to_string(f).unwrap();
            (module_of(&rel), (rel, text))
        })
        .filter(|(_, (rel, _))| !binary(rel))
        .collect();

    // Modules declared under `#[cfg(test)]` are test code, as are their children.
    let test_decl = regex::Regex::new(
        r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;",
    )
    .unwrap();
    let mut test_modules = Vec::new();
    for (me, (_, text)) in &texts {
        for c in test_decl.captures_iter(text) {
            test_modules.push(join(me, &c[1]));
        }
    }
    let is_test = |m: &str| {
        test_modules
            .iter()
            .any(|t| m == t || m.starts_with(&format!("{t}::")))
    };

    // The root's `pub use crate::{…}` names (`crate::Shell`, `crate::Ctx`, …).
    let lib = &texts[""].1;
    let mut reexported = BTreeMap::new();
    let pub_use = regex::Regex::new(r"(?s)pub use crate::\{(.*?)\};").unwrap();
    for c in pub_use.captures_iter(lib) {
        let mut paths = Vec::new();
        expand_list("", &c[1], &mut paths);
        for p in paths {
            let name = p.rsplit("::").next().unwrap_or(&p).to_owned();
            reexported.insert(name, p);
        }
    }
    let top: Vec<String> = regex::Regex::new(r"(?m)^(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
        .unwrap()
        .captures_iter(lib)
        .map(|c| c[1].to_owned())
        .collect();

    let use_stmt = regex::Regex::new(r"(?s)\buse\s+((?:crate|super|self)\b[^;]*);").unwrap();
    let inline = regex::Regex::new(r"(?:^|[^\w:])((?:crate|super)(?:::\w+)+)").unwrap();
    let mut upward = Vec::new();
    let mut unplaced = Vec::new();
    for (me, (rel, text)) in &texts {
        if me.is_empty() || is_test(me) {
            continue;
        }
        let Some((my_rank, _)) = layer_of(me) else {
            unplaced.push(format!("src/{}: module {me}", rel.display()));
            continue;
        };
        let code = product_lines(text);
        let joined = code.join("\n");
        let line_of = |offset: usize| joined[..offset].matches('\n').count() + 1;
        let mut named: Vec<(usize, String)> = Vec::new();
        for c in use_stmt.captures_iter(&joined) {
            let mut paths = Vec::new();
            expand_tree("", &c[1], &mut paths);
            let at = line_of(c.get(1).unwrap().start());
            named.extend(paths.into_iter().map(|p| (at, p)));
        }
        for c in inline.captures_iter(&joined) {
            named.push((line_of(c.get(1).unwrap().start()), c[1].to_owned()));
        }
        for (line, path) in named {
            let Some(mut target) = resolve(me, &path) else {
                continue;
            };
            let first = target.split("::").next().unwrap_or("").to_owned();
            if !first.is_empty() && !top.contains(&first) {
                match reexported.get(&first) {
                    Some(full) => target = target.replacen(&first, full, 1),
                    None => continue, // a macro or a name the compiler resolves
                }
            }
            if target.is_empty() {
                continue;
            }
            match layer_of(&target) {
                Some((rank, layer)) if rank > my_rank => upward.push(format!(
                    "src/{}:{line}: {me} (layer {my_rank}) uses {target} (layer {rank}, {layer})",
                    rel.display()
                )),
                Some(_) => {}
                None => unplaced.push(format!(
                    "src/{}:{line}: {target} is in no layer",
                    rel.display()
                )),
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules in no layer (place them in LAYERS and in docs/architecture.md):\n{}",
        unplaced.join("\n")
    );
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "modules that call a layer above their own (move the shared piece down):\n{}",
        upward.join("\n")
    );
}

/// The checker itself finds an upward call, so the test above can fail.
#[test]
fn the_layer_check_sees_an_upward_use_and_a_downward_one() {
    let mut paths = Vec::new();
    expand_tree(
        "",
        "crate::{exec::live::{self, LiveCapture}, store::paths::Paths}",
        &mut paths,
    );
    assert_eq!(
        paths,
        [
            "crate::exec::live::self",
            "crate::exec::live::LiveCapture",
            "crate::store::paths::Paths"
        ]
    );
    let me = "health::selftest";
    let up = resolve(me, &paths[1]).unwrap();
    assert_eq!(up, "exec::live::LiveCapture");
    assert!(layer_of(&up).unwrap().0 > layer_of(me).unwrap().0);
    let down = resolve(me, "super::guard::absent").unwrap();
    assert_eq!(down, "health::guard::absent");
    assert_eq!(layer_of(&down).unwrap().0, layer_of(me).unwrap().0);
    assert_eq!(
        resolve("store::journal", "super::ledger::Entry").unwrap(),
        "store::ledger::Entry"
    );
    assert!(layer_of("store::paths").unwrap().0 < layer_of("store::journal").unwrap().0);
    assert_eq!(resolve(me, "rxnode_hw::RxRadio"), None);
}
