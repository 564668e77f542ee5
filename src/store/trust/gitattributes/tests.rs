//! Git's answer is the reference: every case is asked of the real `git check-attr` too.
use super::*;

/// Paths asked about: the node's files, the task file, and names that need
/// quoting or escaping in a pattern.
const PATHS: &[&str] = &[
    ".local/rxnode-policy.json",
    ".local/rx_agent_state.json",
    ".local/rx_agent_outbox/X/TASK.md",
    "docs/handoff/NEXT_RX_TASK.md",
    "a b",
    "#x",
    "!x",
    "{a}",
    ".local/a b",
    "\"q\"",
];

/// A checkout with these attribute files (`None`: none), its own
/// `core.attributesFile` (absent, so the machine's plays no part).
fn lab(root: &[u8], local: Option<&[u8]>, info: Option<&[u8]>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(d.path()).unwrap();
    std::fs::write(d.path().join(".gitattributes"), root).unwrap();
    std::fs::create_dir_all(d.path().join(".local")).unwrap();
    if let Some(l) = local {
        std::fs::write(d.path().join(".local/.gitattributes"), l).unwrap();
    }
    if let Some(i) = info {
        std::fs::create_dir_all(d.path().join(".git/info")).unwrap();
        std::fs::write(d.path().join(".git/info/attributes"), i).unwrap();
    }
    let global = d.path().join("home/attributes");
    repo.config()
        .unwrap()
        .set_str("core.attributesFile", &global.to_string_lossy())
        .unwrap();
    d
}

/// `git check-attr filter` on every path: `Some(value)` when set.
fn git_says(dir: &Path, cached: bool) -> Vec<Option<String>> {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("check-attr").arg("-z");
    if cached {
        cmd.arg("--cached");
    }
    let out = cmd
        .arg("filter")
        .arg("--")
        .args(PATHS)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // -z: path NUL attribute NUL value NUL, per path.
    let parts: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    PATHS
        .iter()
        .enumerate()
        .map(|(i, p)| {
            assert_eq!(parts[3 * i], *p);
            match parts[3 * i + 2].as_str() {
                "unspecified" | "unset" => None,
                v => Some(v.to_owned()),
            }
        })
        .collect()
}

fn ours(dir: &Path, order: Order) -> Vec<Option<String>> {
    let repo = git2::Repository::open(dir).unwrap();
    PATHS
        .iter()
        .map(|p| filter_of(&repo, p, order).unwrap())
        .collect()
}

/// Pattern forms a hostile branch could commit: whenever Git sets a filter on
/// a path these rules do too, with the same value, and they never see one Git
/// does not, except for the patterns listed as failing closed.
#[test]
fn filter_attributes_are_gits_own_answer() {
    let cases: &[&[u8]] = &[
        b"",
        b".local/** filter=x\n",
        b"\".local/**\" filter=quoted\n",
        b"\".local/rxnode-policy.json\" filter=q\n\"docs/handoff/NEXT_RX_TASK.md\" filter=q2\n",
        b"\"\\056local/*\" filter=octal\n",
        b"\"\\056local/*\"filter=glued\n",
        b"\".local/a b\" filter=space\n",
        b".local/a\\ b filter=escaped\n",
        b"\"a b\" filter=ab\n",
        b"\"#x\" filter=hash\n",
        b"#x filter=comment\n",
        b"\\!x filter=bang\n",
        b"!x filter=negative\n",
        b"\"!x\" filter=negative2\n",
        b"\"\\\"q\\\"\" filter=quotes\n",
        b"\"\\q\" filter=badquote\n",
        b"\"unterminated filter=u\n",
        b"\"\" filter=empty\n",
        b".local/ filter=dir\n",
        b".local filter=name\n",
        b"*.json filter=json\n",
        b"**/TASK.md filter=deep\n",
        b"/.local/rx_agent_outbox/*/* filter=outbox\n",
        b".loc[[:alpha:]]l/** filter=class\n",
        b".loc[a-z]l/** filter=range\n",
        b".lo**l/** filter=stars\n",
        b"{.local,x}/** filter=brace\n",
        b"{a} filter=brace2\n",
        b".LOCAL/** filter=upper\n",
        b".local/** Filter=x\n",
        b".local/** builtin_x filter=y\n",
        b".local/** filter\n",
        b".local/** -filter=x\n",
        b".local/** filter=a -filter\n",
        b".local/** -filter filter=a\n",
        b".local/** filter=a\n.local/** -filter\n",
        b".local/** filter=a\n.local/** !filter\n",
        b".local/** -filter\n.local/** filter=a\n",
        b".local/** filter=a\n.local/** -x\n",
        b"[attr]ev filter=mac\n.local/** ev\n",
        b".local/** ev\n[attr]ev filter=mac\n",
        b"[attr]binary filter=mac\n.local/** binary\n",
        b"[attr]a b\n[attr]b filter=chain\n*.json a\n",
        b"[attr]a filter=m -a\n*.json a\n",
        b"\"[attr]q\" filter=qm\n*.json q\n",
        b"\xef\xbb\xbf.local/** filter=bom\n",
        b".local/** filter=crlf\r\n",
        b"  \t.local/**\tfilter=tabs  \n",
        b".local/**  filter=x  -text  eol=lf\n",
        b"\"docs/handoff/NEXT_RX_TASK.md\" filter=lfs diff=lfs merge=lfs -text\n",
    ];
    for (i, root) in cases.iter().enumerate() {
        let d = lab(root, None, None);
        let git = git_says(d.path(), false);
        let mine = ours(d.path(), Order::WorkTreeFirst);
        assert_eq!(
            mine,
            git,
            "case {i} {:?}: paths {PATHS:?}",
            String::from_utf8_lossy(root)
        );
    }
}

/// A folder's own `.gitattributes` and `info/attributes` stack over the top
/// one as in Git; a macro outside a top-level file is dropped.
#[test]
fn filter_attribute_sources_stack_as_in_git() {
    // (top-level, `.local/.gitattributes`, `info/attributes`)
    type Sources<'a> = (&'a [u8], Option<&'a [u8]>, Option<&'a [u8]>);
    let cases: &[Sources<'_>] = &[
        (b"", Some(b"* filter=inlocal\n"), None),
        (b"", Some(b"\"rxnode-policy.json\" filter=q\n"), None),
        (b"*.json filter=top\n", Some(b"*.json -filter\n"), None),
        (b"*.json -filter\n", Some(b"*.json filter=sub\n"), None),
        (b"", None, Some(b".local/** filter=info\n")),
        (
            b".local/** filter=top\n",
            None,
            Some(b".local/** -filter\n"),
        ),
        (b"[attr]ev filter=mac\n", Some(b"*.json ev\n"), None),
        (b"", Some(b"[attr]ev filter=mac\n*.json ev\n"), None),
        (b"*.json ev\n", None, Some(b"[attr]ev filter=info\n")),
        (
            b"[attr]ev filter=top\n*.json ev\n",
            None,
            Some(b"[attr]ev filter=info\n"),
        ),
    ];
    for (i, (root, local, info)) in cases.iter().enumerate() {
        let d = lab(root, *local, *info);
        assert_eq!(
            ours(d.path(), Order::WorkTreeFirst),
            git_says(d.path(), false),
            "case {i}"
        );
    }
}

/// With the staged `.gitattributes` differing from the work tree's, the
/// index-first order gives `git check-attr --cached`'s answer (a checkout's).
#[test]
fn staged_filter_attributes_are_read_from_the_index() {
    let d = lab(b"\".local/**\" filter=staged\n", None, None);
    let repo = git2::Repository::open(d.path()).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitattributes")).unwrap();
    index.write().unwrap();
    std::fs::write(d.path().join(".gitattributes"), "").unwrap();
    let cached = git_says(d.path(), true);
    assert_eq!(cached[0].as_deref(), Some("staged"));
    assert_eq!(ours(d.path(), Order::IndexFirst), cached);
    assert_eq!(
        ours(d.path(), Order::WorkTreeFirst),
        git_says(d.path(), false)
    );
    // Removed from the work tree: both orders read the index, as Git does.
    std::fs::remove_file(d.path().join(".gitattributes")).unwrap();
    assert_eq!(
        ours(d.path(), Order::WorkTreeFirst)[0].as_deref(),
        Some("staged")
    );
    assert_eq!(git_says(d.path(), false)[0].as_deref(), Some("staged"));
}

/// Patterns these rules cannot hand to the matcher exactly match every path
/// (fail closed), and a file they cannot read is an error naming it.
#[test]
fn unreadable_attribute_patterns_fail_closed() {
    for root in [
        &b"\"a\\tb\" filter=ctl\n"[..],
        b"\"\\377\" filter=latin\n",
        b"\"x \" filter=trailing\n",
        b"[{]x filter=classbrace\n",
    ] {
        let d = lab(root, None, None);
        let repo = git2::Repository::open(d.path()).unwrap();
        let got = filter_of(&repo, ".local/rxnode-policy.json", Order::WorkTreeFirst).unwrap();
        assert!(got.is_some(), "{:?}", String::from_utf8_lossy(root));
    }
    let d = lab(b".local/** filter=x\n\0\n", None, None);
    let repo = git2::Repository::open(d.path()).unwrap();
    let e = filter_of(&repo, ".local/rxnode-policy.json", Order::WorkTreeFirst).unwrap_err();
    assert!(e.contains(".gitattributes") && e.contains("NUL"), "{e}");
}

#[test]
fn c_quoted_patterns_unquote_as_in_git() {
    assert_eq!(
        unquote_c(b"\"a\\tb\\\"c\\\\\\056\" rest"),
        Some((b"a\tb\"c\\.".to_vec(), &b" rest"[..]))
    );
    assert_eq!(unquote_c(b"\"\\q\""), None);
    assert_eq!(unquote_c(b"\"\\48\""), None);
    assert_eq!(unquote_c(b"\"open"), None);
    assert_eq!(unquote_c(b"plain"), None);
}

/// Only rules that can decide `filter` are matched: 100 000 other rules leave
/// the answer to the one that can; more than 4096 that can are refused (the
/// check runs several times per command and must stay fast).
#[test]
fn only_filter_rules_are_compiled_and_too_many_are_refused() {
    let mut many = String::new();
    for i in 0..100_000 {
        many.push_str(&format!("docs/f{i}.bin -text diff\n"));
    }
    many.push_str("\".local/**\" filter=last\n");
    let d = lab(many.as_bytes(), None, None);
    let repo = git2::Repository::open(d.path()).unwrap();
    let t0 = std::time::Instant::now();
    let got = filter_of(&repo, ".local/rxnode-policy.json", Order::WorkTreeFirst).unwrap();
    assert_eq!(got.as_deref(), Some("last"));
    assert!(t0.elapsed().as_secs_f64() < 5.0, "{:?}", t0.elapsed());
    let mut flood = String::new();
    for i in 0..5000 {
        flood.push_str(&format!("docs/f{i}.bin filter=x\n"));
    }
    let d = lab(flood.as_bytes(), None, None);
    let repo = git2::Repository::open(d.path()).unwrap();
    let e = filter_of(&repo, ".local/rxnode-policy.json", Order::WorkTreeFirst).unwrap_err();
    assert!(e.contains("more than 4096"), "{e}");
}

/// `core.ignoreCase` makes every attribute pattern case-insensitive, as in Git.
#[test]
fn ignore_case_config_folds_attribute_patterns_as_in_git() {
    for root in [
        &b".LOCAL/** filter=upper\n"[..],
        b"\"*.JSON\" filter=json\n",
    ] {
        let d = lab(root, None, None);
        let repo = git2::Repository::open(d.path()).unwrap();
        repo.config()
            .unwrap()
            .set_bool("core.ignorecase", true)
            .unwrap();
        let git = git_says(d.path(), false);
        assert!(git[0].is_some(), "{git:?}");
        assert_eq!(ours(d.path(), Order::WorkTreeFirst), git);
    }
}

/// Git ignores an attributes line of 2048 bytes or more; one byte shorter counts.
#[test]
fn overlong_attribute_lines_are_ignored_as_in_git() {
    for pad in [2026usize, 2027] {
        let line = format!(".local/**{} filter=long\n", " ".repeat(pad));
        let d = lab(line.as_bytes(), None, None);
        let git = git_says(d.path(), false);
        assert_eq!(git[0].is_some(), line.len() - 1 < 2048, "{git:?}");
        assert_eq!(
            ours(d.path(), Order::WorkTreeFirst),
            git,
            "line of {} bytes",
            line.len() - 1
        );
    }
}
