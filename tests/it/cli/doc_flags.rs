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
