//! A fleet of named nodes publishing to one `rx-node` branch, and results of older layouts.
use super::*;
use crate::util::git_stdout;

// ---------------------------------------------------------------------- fleet

/// Eight named nodes run the same task and publish at once to
/// one origin served by `git daemon`; every result lands, none is lost or
/// overwritten, and a fresh main-PC clone lists all eight with the right nodes.
#[test]
fn a_fleet_of_eight_nodes_publishes_concurrently_over_git_daemon() {
    let lab = Lab::new();
    let daemon = start_daemon(lab.root.path())
        .expect("git daemon runs on loopback (Debian's `git` package carries it)");
    let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
    let names: Vec<String> = (1..=8).map(|i| format!("FLEET-RX{i}")).collect();
    let nodes: Vec<PathBuf> = names.iter().map(|n| lab.node_from(n, &url)).collect();
    // One CLKIN task for the whole fleet (the same check on every laptop).
    let plan = lab.plan_file("fleet.json", CLKIN_PLAN);
    lab.post("FLEET_CLKIN_001", &["--rx", "--plan", &plan]);
    for n in &nodes {
        approve(n);
        let out = rxnode(n, &["--sim", "run", "FLEET_CLKIN_001"], "");
        expect_exit!(out, 0);
    }
    // All eight publish at once: start them, then confirm all together.
    let started = Instant::now();
    let mut children: Vec<_> = nodes
        .iter()
        .map(|n| spawn(n, &["--json", "publish", "FLEET_CLKIN_001", "--push"]))
        .collect();
    for c in &mut children {
        c.stdin
            .take()
            .unwrap()
            .write_all(b"PUBLISH FLEET_CLKIN_001\n")
            .unwrap();
    }
    let mut attempts = Vec::new();
    for (c, name) in children.into_iter().zip(&names) {
        let out = c.wait_with_output().unwrap();
        expect_exit!(out, 0, "{name}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["node"], name.as_str());
        attempts.push(v["push_attempts"].as_u64().unwrap());
    }
    let elapsed = started.elapsed();
    let retries: u64 = attempts.iter().map(|a| a - 1).sum();
    eprintln!(
        "fleet: 8 nodes published FLEET_CLKIN_001 concurrently over git:// in {:.0} ms; push attempts {attempts:?} ({retries} retries)",
        elapsed.as_secs_f64() * 1e3
    );
    all_eight_landed_and_are_listed(&lab, &names, &url);
}

/// On origin: eight folders of three files in a linear history; a fresh main-PC clone lists all eight, each with its node.
fn all_eight_landed_and_are_listed(lab: &Lab, names: &[String], url: &str) {
    // On origin: eight folders, three files each, a linear history of eight commits.
    let files = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert_eq!(files.lines().count(), 24, "{files}");
    for n in names {
        for f in ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"] {
            let p = format!("rx-results/FLEET_CLKIN_001/{n}/{f}");
            assert!(files.lines().any(|l| l == p), "{p} lost:\n{files}");
        }
        let j: Value = serde_json::from_str(&git(
            &lab.origin,
            &[
                "show",
                &format!("rx-node:rx-results/FLEET_CLKIN_001/{n}/RX_RESULT.json"),
            ],
        ))
        .unwrap();
        assert_eq!(
            j["node"]["name"],
            n.as_str(),
            "{n}'s folder holds another node's result"
        );
    }
    let history = git(&lab.origin, &["rev-list", "--parents", "rx-node"]);
    assert_eq!(history.lines().count(), 8, "{history}");
    assert!(
        history.lines().all(|l| l.split(' ').count() <= 2),
        "a merge: {history}"
    );

    // A fresh main-PC clone lists all eight, each with its node.
    let fresh = lab.root.path().join("fresh-main");
    git(
        lab.root.path(),
        &["clone", "-q", url, fresh.to_str().unwrap()],
    );
    let l = listing(&fresh, &[]);
    assert_eq!(l.results.len(), 8);
    let mut seen: Vec<String> = l
        .results
        .iter()
        .map(|r| {
            assert_eq!(r.task_id, "FLEET_CLKIN_001");
            assert_eq!(r.status.as_deref(), Some("PASS"), "{r:?}");
            assert!(r.problems.is_empty(), "{r:?}");
            assert_eq!(
                r.path,
                format!("rx-results/FLEET_CLKIN_001/{}", r.node.as_deref().unwrap())
            );
            r.node.clone().unwrap()
        })
        .collect();
    seen.sort();
    assert_eq!(seen, names);
    let out = rxnode(
        &fresh,
        &["--json", "results", "verify", "FLEET_CLKIN_001"],
        "",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 8);
    let out = rxnode(&fresh, &["--json", "results", "nodes"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 8, "{v}");
    assert!(
        v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["results"] == 1),
        "{v}"
    );
}

/// Results published before node names (`rx-results/<ID>/RX_RESULT.*` directly)
/// are still listed, shown and verified; their node comes from the result itself.
#[test]
fn results_of_the_layout_before_node_names_are_still_read() {
    let lab = legacy_lab();
    the_old_layout_is_read_and_never_rewritten(&lab);
}

/// A result of the layout before node names is listed under the node it names;
/// `results show` called it `(unnamed)`, and once another node answered the
/// same task neither `--from <that node>` nor `--from '(unnamed)'` reached it.
/// Every view now names it, and `--from` picks it, by the node it is listed under.
#[test]
fn an_old_layout_result_is_shown_and_picked_by_the_node_it_is_listed_under() {
    let lab = legacy_lab();
    let b = lab.node("LAB-B");
    approve(&b);
    expect_exit!(publish(&b, "LEGACY_1"), 0);
    let out = rxnode(&lab.main, &["results", "show", "LEGACY_1"], "");
    expect_exit!(out, 2);
    assert!(show(&out).contains("(LAB-A, LAB-B)"), "{}", show(&out));
    for n in ["LAB-A", "LAB-B"] {
        let out = rxnode(&lab.main, &["results", "show", "LEGACY_1", "--from", n], "");
        expect_exit!(out, 0);
        assert!(
            stdout(&out).starts_with(&format!("LEGACY_1 from {n}: ")),
            "{}",
            show(&out)
        );
        let out = rxnode(
            &lab.main,
            &["--json", "results", "verify", "LEGACY_1", "--from", n],
            "",
        );
        expect_exit!(out, 0);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["results"][0]["node"], n, "{v:#}");
    }
}

/// One node's result of the layout before node folders beside its result in its
/// folder: both named `LAB-A`, so `--from LAB-A` picked both and `results show`
/// refused with "2 nodes answered LEGACY_1 (LAB-A, LAB-A)" whatever was typed.
/// Each is now named with its folder and picked by it.
#[test]
fn one_node_answering_in_both_layouts_is_picked_by_the_folder() {
    let lab = legacy_lab_with(true);
    let out = rxnode(&lab.main, &["results", "show", "LEGACY_1"], "");
    expect_exit!(out, 2);
    let both = "(LAB-A (rx-results/LEGACY_1), LAB-A (rx-results/LEGACY_1/LAB-A))";
    assert!(show(&out).contains(both), "{}", show(&out));
    assert!(show(&out).contains("--from FOLDER"), "{}", show(&out));
    let out = rxnode(
        &lab.main,
        &["results", "show", "LEGACY_1", "--from", "LAB-A"],
        "",
    );
    expect_exit!(out, 2);
    assert!(show(&out).contains(both), "{}", show(&out));
    for folder in ["rx-results/LEGACY_1", "rx-results/LEGACY_1/LAB-A/"] {
        let args = ["--json", "results", "show", "LEGACY_1", "--from", folder];
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 0);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["task_id"], "LEGACY_1", "{v:#}");
        let args = ["--json", "results", "verify", "LEGACY_1", "--from", folder];
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 0);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let results = v["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{v:#}");
        assert_eq!(results[0]["path"], folder.trim_end_matches('/'), "{v:#}");
    }
}

/// A lab whose `rx-node` holds task LEGACY_1 of node LAB-A in the layout before
/// node names (`rx-results/LEGACY_1/RX_RESULT.*`), as an old `publish` made it.
fn legacy_lab() -> Lab {
    legacy_lab_with(false)
}

/// [`legacy_lab`], keeping the result in LAB-A's folder too when `keep_folder`.
fn legacy_lab_with(keep_folder: bool) -> Lab {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("LEGACY_1", &[]);
    approve(&a);
    expect_exit!(publish(&a, "LEGACY_1"), 0);
    // Rewrite history as an old rx-node looked: the same three files one level up,
    // in the one commit (what the old `publish` made).
    let hand = lab.clone_rx_node("old-layout");
    let published = git_stdout(&hand, &["rev-parse", "HEAD"]);
    let message = git_stdout(&hand, &["log", "-1", "--format=%B"]);
    for f in ["RX_RESULT.md", "RX_RESULT.json", "LOG_META.json"] {
        let (from, to) = (
            format!("rx-results/LEGACY_1/LAB-A/{f}"),
            format!("rx-results/LEGACY_1/{f}"),
        );
        git(&hand, &["mv", &from, &to]);
    }
    git(
        &hand,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "rx-results: LEGACY_1 (NOT RUN)\n\nTask: LEGACY_1\n",
        ],
    );
    if keep_folder {
        // The node then published the same result in its folder, as `publish` does now.
        let folder = "rx-results/LEGACY_1/LAB-A";
        git(&hand, &["checkout", published.trim(), "--", folder]);
        git(&hand, &["commit", "-q", "-m", message.trim()]);
    }
    git(&hand, &["push", "-q", "--force", "origin", "rx-node"]);
    lab
}

/// The old layout is listed, verified and shown, and a node publishing beside it never rewrites it.
fn the_old_layout_is_read_and_never_rewritten(lab: &Lab) {
    let l = listing(&lab.main, &[]);
    assert_eq!(l.results.len(), 1, "{l:?}");
    let r = &l.results[0];
    assert_eq!(r.path, "rx-results/LEGACY_1");
    assert_eq!(
        r.node.as_deref(),
        Some("LAB-A"),
        "the node named inside the result"
    );
    assert!(r.problems.is_empty(), "{r:?}");
    let out = rxnode(&lab.main, &["results", "verify", "LEGACY_1"], "");
    expect_exit!(out, 0);
    let out = rxnode(&lab.main, &["results", "show", "LEGACY_1"], "");
    expect_exit!(out, 0);
    assert!(
        stdout(&out).starts_with("LEGACY_1 from LAB-A: "),
        "{}",
        show(&out)
    );
    // A node publishing beside it never rewrites the old folder.
    let b = lab.node("LAB-B");
    approve(&b);
    expect_exit!(publish(&b, "LEGACY_1"), 0);
    let files = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert_eq!(files.lines().count(), 6, "{files}");
    assert!(
        files.contains("rx-results/LEGACY_1/RX_RESULT.md"),
        "{files}"
    );
    assert!(
        files.contains("rx-results/LEGACY_1/LAB-B/RX_RESULT.md"),
        "{files}"
    );
    assert_eq!(listing(&lab.main, &[]).results.len(), 2);
}

/// A publication rebuilt after a race carries the node's earlier local-only
/// result (its `Carried-Over:` trailer names it): both verify.
#[test]
fn verify_accepts_results_carried_over_by_a_rebuild() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    lab.post("CARRY_X", &[]);
    approve(&a);
    let out = rxnode(&a, &["publish", "CARRY_X"], "PUBLISH CARRY_X\n");
    expect_exit!(out, 0);
    approve(&b);
    expect_exit!(publish(&b, "CARRY_X"), 0);
    lab.post("CARRY_Z", &[]);
    approve(&a);
    let out = publish(&a, "CARRY_Z");
    expect_exit!(out, 0);
    let msg = git(&lab.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.contains("Carried-Over: CARRY_X/LAB-A"), "{msg}");
    for (id, from) in [
        ("CARRY_X", "LAB-A"),
        ("CARRY_X", "LAB-B"),
        ("CARRY_Z", "LAB-A"),
    ] {
        let out = rxnode(&lab.main, &["results", "verify", id, "--from", from], "");
        expect_exit!(out, 0, "{id} from {from}");
    }
    assert_eq!(listing(&lab.main, &[]).results.len(), 3);
}
