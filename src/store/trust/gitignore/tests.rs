//! Git's answer is the reference: every case is asked of the real `git` too.
use super::*;

/// The files `git add -A --dry-run` would stage under `.local/`, sorted.
fn git_sees(dir: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["add", "-A", "--dry-run"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir.join("home"))
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("add '")?
                .strip_suffix('\'')
                .map(str::to_owned)
        })
        .filter(|p| p.starts_with(".local/"))
        .collect();
    v.sort();
    v
}

/// The files under `.local/` these rules call visible, sorted.
fn rules_see(dir: &Path) -> Vec<String> {
    let repo = git2::Repository::open(dir).unwrap();
    let mut ig = GitIgnores::of(&repo).unwrap();
    let mut v = Vec::new();
    let mut stack = vec![PathBuf::from(".local")];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(dir.join(&rel)).unwrap().flatten() {
            let r = rel.join(e.file_name());
            let s = r.to_string_lossy().replace('\\', "/");
            if e.file_type().unwrap().is_dir() {
                stack.push(r);
            } else if !ig.ignored(&s, false).unwrap() {
                v.push(s);
            }
        }
    }
    v.sort();
    v
}

/// A checkout holding a node's usual files, with these ignore rules.
fn lab(
    exclude: &str,
    gitignore: &str,
    local_gitignore: Option<&str>,
    global: Option<&str>,
) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    for f in [
        ".local/rxnode-policy.json",
        ".local/rx_agent_state.json",
        ".local/rx_agent_ledger.jsonl",
        ".local/rx_iq/T1/capture.sigmf-data",
        ".local/rx_iq/T1/capture.sigmf-meta",
        ".local/rx_agent_outbox/T1/RX_RESULT.json",
        ".local/Sub/A.txt",
    ] {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    std::fs::write(d.path().join(".git/info/exclude"), exclude).unwrap();
    std::fs::write(d.path().join(".gitignore"), gitignore).unwrap();
    if let Some(g) = local_gitignore {
        std::fs::write(d.path().join(".local/.gitignore"), g).unwrap();
    }
    // The global ignore file named in the checkout's own config, for `git` and
    // these rules alike (the machine's own global file plays no part).
    let global_file = d.path().join("home/ignore");
    std::fs::create_dir_all(global_file.parent().unwrap()).unwrap();
    if let Some(g) = global {
        std::fs::write(&global_file, g).unwrap();
    }
    let repo = git2::Repository::open(d.path()).unwrap();
    repo.config()
        .unwrap()
        .set_str("core.excludesFile", &global_file.to_string_lossy())
        .unwrap();
    d
}

/// Rules a hostile branch could commit, beside the exclude rxnode writes:
/// the files these rules call visible are exactly the files `git add -A` stages.
#[test]
fn visibility_is_gits_own_answer() {
    let x = "/.local/\n";
    let cases: &[(&str, &str, Option<&str>, Option<&str>)] = &[
        (x, "", None, None),
        (x, "!/.local/\n", None, None),
        (x, "!.local\n", None, None),
        (x, "!.local/\n", None, None),
        (x, "!*\n", None, None),
        (x, "!/.local/\n!/.local/**\n", None, None),
        (x, "!/.local/rxnode-policy.json\n", None, None),
        (x, "/.local/*\n!/.local/rx_iq/\n", None, None),
        (x, "!/.local/\n/.local/*\n!/.local/rx_iq/\n", None, None),
        (x, "!/.local/\n/.local/*\n!/.local/*.json\n", None, None),
        (x, "!/.local/\n*.json\n", None, None),
        (x, "!/.local/\n**/T1/\n", None, None),
        (
            x,
            "!/.local/\n.local/**\n!.local/**/\n!.local/rx_iq/T1/*\n",
            None,
            None,
        ),
        (x, "!/.LOCAL/\n", None, None),
        (x, "!/.local/ \n", None, None),
        (x, "!/.local/\\ \n", None, None),
        (x, "\\!/.local/\n", None, None),
        (x, "!/.loc[a]l/\n", None, None),
        (x, "!/.loc?l\n", None, None),
        (x, "!/*/\n", None, None),
        (x, "!**/.local\n", None, None),
        (x, "!/.local/\n", Some("*\n"), None),
        (x, "!/.local/\n", Some("*\n!*.json\n"), None),
        ("", "", Some("*\n"), None),
        ("", "", None, Some(".local/\n")),
        ("", "!.local/\n", None, Some(".local/\n")),
        ("!.local/\n", "", None, Some(".local/\n")),
        (".local/\n", "", None, Some("!.local/\n")),
        ("", ".local/*\n!.local/Sub/\n", None, None),
        ("/.local/\n!/.local/\n", "", None, None),
        ("", "# !/.local/\n.local\n", None, None),
        ("", ".local\r\n", None, None),
    ];
    for (i, (ex, gi, lg, gl)) in cases.iter().enumerate() {
        let d = lab(ex, gi, *lg, *gl);
        let ours = rules_see(d.path());
        let git = git_sees(d.path());
        let git: Vec<String> = git
            .into_iter()
            .filter(|p| !p.ends_with("/.gitignore"))
            .collect();
        let ours: Vec<String> = ours
            .into_iter()
            .filter(|p| !p.ends_with("/.gitignore"))
            .collect();
        assert_eq!(
            ours, git,
            "case {i}: exclude {ex:?}, .gitignore {gi:?}, .local/.gitignore {lg:?}, global {gl:?}"
        );
    }
}

/// A `!` rule that cannot be read might re-include files: refused, naming the line.
#[test]
fn an_unreadable_negation_fails_closed() {
    let d = lab("/.local/\n", "# rules\n!/.local/\\\n", None, None);
    let repo = git2::Repository::open(d.path()).unwrap();
    match GitIgnores::of(&repo).and_then(|mut g| g.ignored(".local/rxnode-policy.json", false)) {
        Err(e) => assert!(e.contains(".gitignore line 2"), "{e}"),
        Ok(v) => {
            // The matcher read it after all: then it must agree with Git.
            assert_eq!(
                !v,
                git_sees(d.path()).contains(&".local/rxnode-policy.json".to_owned())
            );
        }
    }
    std::fs::write(d.path().join(".gitignore"), b"!/.local/\xff\n").unwrap();
    let e = GitIgnores::of(&repo)
        .and_then(|mut g| g.ignored(".local/rxnode-policy.json", false))
        .unwrap_err();
    assert!(e.contains("line 1: not UTF-8"), "{e}");
}
