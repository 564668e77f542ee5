//! Every flag the README and docs/ write after an `rxnode` command is one that
//! command's own `--help` lists: a lab engineer who types what the docs say is
//! never answered "unexpected argument".
use std::collections::BTreeMap;
use std::path::Path;

/// The pages a new user follows.
const PAGES: [&str; 6] = [
    "README.md",
    "docs/operator.md",
    "docs/protocol.md",
    "docs/publishing.md",
    "docs/safety.md",
    "docs/hardware.md",
];

/// `rxnode PATH… --help`: its text and its subcommands' names (none on failure).
fn help(
    cache: &mut BTreeMap<Vec<String>, Option<(String, Vec<String>)>>,
    path: &[String],
) -> Option<(String, Vec<String>)> {
    cache
        .entry(path.to_vec())
        .or_insert_with(|| {
            let out = crate::util::rxnode_bin()
                .args(path)
                .arg("--help")
                .env_remove("RXNODE_REPO")
                .output()
                .expect("run rxnode");
            if !out.status.success() {
                return None;
            }
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let subs = text
                .split_once("\nCommands:\n")
                .map(|(_, rest)| {
                    rest.lines()
                        .take_while(|l| l.starts_with("  "))
                        .filter_map(|l| l.split_whitespace().next())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Some((text, subs))
        })
        .clone()
}

#[test]
fn every_documented_flag_is_one_the_command_takes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cache = BTreeMap::new();
    let (top, commands) = help(&mut cache, &[]).expect("rxnode --help");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in PAGES {
        let text = std::fs::read_to_string(root.join(page)).expect(page);
        for (n, line) in text.lines().enumerate() {
            // Each `rxnode …` up to the end of its code span (or of the line).
            for (at, _) in line.match_indices("rxnode ") {
                if at > 0 && !line[..at].ends_with([' ', '`', '$', '(', '"']) {
                    continue;
                }
                let rest = &line[at + "rxnode ".len()..];
                let span = rest.split(['`', '|', '#', ';']).next().unwrap_or("");
                let words: Vec<&str> = span.split_whitespace().collect();
                // Global flags first (`--sim`, `--repo DIR` …), then the command.
                let mut i = 0;
                while i < words.len() && words[i].starts_with('-') {
                    i += if ["--repo", "--policy"].contains(&words[i]) {
                        2
                    } else {
                        1
                    };
                }
                let Some(first) = words.get(i) else { continue };
                if !commands.iter().any(|c| c == first) {
                    continue;
                }
                let mut path = vec![(*first).to_owned()];
                i += 1;
                // Down the subcommands the words name.
                while let Some(w) = words.get(i) {
                    let subs = help(&mut cache, &path).map(|h| h.1).unwrap_or_default();
                    if subs.iter().any(|s| s == w) {
                        path.push((*w).to_owned());
                        i += 1;
                    } else {
                        break;
                    }
                }
                let Some((own, _)) = help(&mut cache, &path) else {
                    wrong.push(format!(
                        "{page}:{}: rxnode {} --help fails",
                        n + 1,
                        path.join(" ")
                    ));
                    continue;
                };
                for w in &words[i..] {
                    let w = w.trim_start_matches(['[', '(']);
                    let Some(flag) = w.strip_prefix("--") else {
                        continue;
                    };
                    let flag: String = flag
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if flag.is_empty() {
                        continue;
                    }
                    checked += 1;
                    let listed = |t: &str| {
                        t.contains(&format!("--{flag} "))
                            || t.contains(&format!("--{flag}\n"))
                            || t.contains(&format!("--{flag}..."))
                            || t.contains(&format!("--{flag},"))
                    };
                    if !listed(&own) && !listed(&top) {
                        wrong.push(format!(
                            "{page}:{}: `rxnode {} … --{flag}`: not in `rxnode {} --help`",
                            n + 1,
                            path.join(" "),
                            path.join(" ")
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 80, "only {checked} documented flags found");
    assert!(
        wrong.is_empty(),
        "{checked} flags checked:\n{}",
        wrong.join("\n")
    );
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped
/// (`-` and `_` kept), each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every `.rs` and `.md` file under `dir`, `target` left out.
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("a folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target" && n != ".git") {
                sources(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs" || x == "md") {
            out.push(p);
        }
    }
}

/// Every `docs/PAGE.md#anchor` that a message, a `--help` text or a page points a
/// reader to is a heading (or an `<a id>`) of that page: a link a user follows
/// from an error lands where it says.
#[test]
fn every_docs_link_names_a_heading_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let id = regex::Regex::new(r#"<a id="([^"]+)"></a>"#).unwrap();
    let mut anchors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".md") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let mut a = Vec::new();
        for line in text.lines() {
            a.extend(id.captures_iter(line).map(|c| c[1].to_owned()));
            if let Some(h) = line.strip_prefix('#') {
                a.push(slug(&id.replace_all(h.trim_start_matches('#'), "")));
            }
        }
        anchors.insert(name, a);
    }
    let link = regex::Regex::new(r"\b([a-z-]+\.md)#([\w-]+)").unwrap();
    let mut files = Vec::new();
    for d in ["src", "hw", "interlock", "docs"] {
        sources(&root.join(d), &mut files);
    }
    files.push(root.join("README.md"));
    let mut checked = 0;
    let mut broken = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for c in link.captures_iter(line) {
                let Some(a) = anchors.get(&c[1]) else {
                    continue;
                };
                checked += 1;
                if !a.iter().any(|x| x == &c[2]) {
                    broken.push(format!(
                        "{}:{}: docs/{}#{}",
                        f.display(),
                        n + 1,
                        &c[1],
                        &c[2]
                    ));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(
        broken.is_empty(),
        "{checked} links, these land nowhere:\n{}",
        broken.join("\n")
    );
}
