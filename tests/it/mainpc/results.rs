//! `rxnode results`, `results show`, `results verify`, `results nodes` from the private ref.
use super::*;

const PRIVATE_REF: &str = "refs/rxnode/main-pc/rx-node";

/// Everything about the main PC's clone that `results` must leave alone.
fn main_pc_state(main: &Path) -> (String, String, Vec<u8>, String) {
    let refs: String = git(main, &["for-each-ref", "--format=%(refname) %(objectname)"])
        .lines()
        .filter(|l| !l.starts_with(PRIVATE_REF))
        .collect::<Vec<_>>()
        .join("\n");
    (
        refs,
        git(main, &["symbolic-ref", "HEAD"]),
        std::fs::read(main.join(".git/index")).unwrap_or_default(),
        git(main, &["status", "--porcelain=v1", "--untracked-files=all"]),
    )
}

// ----------------------------------------------------------------- the results

#[test]
fn results_list_filter_show_verify_and_nodes_from_a_private_ref() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    // Both nodes answer the same manual task; their results land side by side.
    lab.post("RES_MANUAL_1", &[]);
    for n in [&a, &b] {
        approve(n);
        let out = publish(n, "RES_MANUAL_1");
        expect_exit!(out, 0);
    }
    // LAB-A alone runs a YELLOW CLKIN capture on the simulated radio.
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post("RES_CLKIN_2", &["--rx", "--plan", &plan]);
    approve(&a);
    let out = rxnode(&a, &["--sim", "run", "RES_CLKIN_2"], "");
    expect_exit!(out, 0);
    let out = publish(&a, "RES_CLKIN_2");
    expect_exit!(out, 0);

    let before = main_pc_state(&lab.main);
    let l = listing(&lab.main, &[]);
    assert_eq!(
        main_pc_state(&lab.main),
        before,
        "results touched more than {PRIVATE_REF}"
    );
    assert_eq!(
        git(&lab.main, &["rev-parse", PRIVATE_REF]),
        git(&lab.origin, &["rev-parse", "rx-node"])
    );
    assert_eq!(l.total, 3);
    assert_eq!(l.results.len(), 3);
    // Newest first: the capture completed last.
    let first = &l.results[0];
    assert_eq!(first.task_id, "RES_CLKIN_2");
    assert_eq!(first.node.as_deref(), Some("LAB-A"));
    assert_eq!(first.status.as_deref(), Some("PASS"));
    assert_eq!(first.risk_level.as_deref(), Some("YELLOW"));
    assert!(first.completed_at.is_some());
    assert_eq!(first.path, "rx-results/RES_CLKIN_2/LAB-A");
    assert_eq!(first.figures.captures, 1);
    assert_eq!(first.figures.overflows, 0);
    assert_eq!(first.figures.clkin_ppm.len(), 1);
    assert!(
        first.figures.clkin_ppm[0].abs() < 0.1,
        "{:?}",
        first.figures
    );
    assert!(
        (first.figures.peaks[0].frequency_hz - 100.1e6).abs() < 5e3,
        "{:?}",
        first.figures.peaks
    );
    let mut manual: Vec<(Option<&str>, &str)> = l.results[1..]
        .iter()
        .map(|r| (r.node.as_deref(), r.task_id.as_str()))
        .collect();
    manual.sort();
    assert_eq!(
        manual,
        [
            (Some("LAB-A"), "RES_MANUAL_1"),
            (Some("LAB-B"), "RES_MANUAL_1")
        ]
    );
    for r in &l.results {
        assert!(r.problems.is_empty(), "{r:?}");
        // The commit is the one that added the result on rx-node.
        let c = r.commit.as_deref().expect("commit");
        let added = git(&lab.origin, &["show", "--name-only", "--format=", c]);
        assert!(
            added.contains(&format!("{}/RX_RESULT.json", r.path)),
            "{added}"
        );
    }
    filters_and_the_human_listing(&lab);
    show_verify_and_nodes(&lab, first, before);
}

/// `results --node/--status` filter; bad filters are refused; the human listing.
fn filters_and_the_human_listing(lab: &Lab) {
    // Filters.
    let by_node = listing(&lab.main, &["--node", "LAB-B"]);
    assert_eq!(by_node.results.len(), 1);
    assert_eq!(by_node.results[0].node.as_deref(), Some("LAB-B"));
    let passed = listing(&lab.main, &["--status", "PASS"]);
    assert_eq!(passed.results.len(), 1);
    assert_eq!(passed.results[0].task_id, "RES_CLKIN_2");
    let not_run = listing(&lab.main, &["--status", "NOT RUN", "--node", "LAB-A"]);
    assert_eq!(not_run.results.len(), 1);
    assert_eq!(not_run.results[0].task_id, "RES_MANUAL_1");
    // Statuses as people type them, as `mark-completed --status` takes them.
    for typed in ["pass", "Pass"] {
        assert_eq!(
            listing(&lab.main, &["--status", typed]).results.len(),
            1,
            "{typed}"
        );
    }
    for typed in ["not-run", "not_run", "not run"] {
        let l = listing(&lab.main, &["--status", typed, "--node", "LAB-A"]);
        assert_eq!(l.results.len(), 1, "{typed}");
    }
    assert_eq!(listing(&lab.main, &["--since", "1h"]).results.len(), 1);
    assert_eq!(
        listing(&lab.main, &["--since", "2999-01-01"]).results.len(),
        0
    );
    for bad in [
        &["--status", "MAYBE"][..],
        &["--since", "yesterday"],
        &["--node", "a b"],
    ] {
        let mut args = vec!["results"];
        args.extend_from_slice(bad);
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 2, "{bad:?}");
    }
    let human = rxnode(&lab.main, &["results"], "");
    expect_exit!(human, 0);
    let h = stdout(&human);
    assert!(
        h.contains("LAB-A") && h.contains("LAB-B") && h.contains("CLKIN"),
        "{h}"
    );
}

/// `results show` (`--from` picks a node), `results verify`, `results nodes`, `--no-fetch`; the main PC's clone unchanged.
fn show_verify_and_nodes(lab: &Lab, first: &Row, before: (String, String, Vec<u8>, String)) {
    // show: one result; two nodes answered RES_MANUAL_1, so --from picks one.
    let out = rxnode(&lab.main, &["results", "show", "RES_MANUAL_1"], "");
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LAB-A") && err.contains("LAB-B") && err.contains("--from"),
        "{err}"
    );
    let out = rxnode(
        &lab.main,
        &["results", "show", "RES_MANUAL_1", "--from", "LAB-B"],
        "",
    );
    expect_exit!(out, 0);
    // Rendered for the terminal, the verdict first; no Markdown syntax.
    let said = stdout(&out);
    assert!(
        said.starts_with("RES_MANUAL_1 from LAB-B: NOT RUN\n"),
        "{said}"
    );
    assert!(
        !said.contains("| Status |") && !said.contains("# RX result") && !said.contains("|---"),
        "{said}"
    );
    assert!(said.contains("Status         NOT RUN\n"), "{said}");
    let out = rxnode(&lab.main, &["--json", "results", "show", "RES_CLKIN_2"], "");
    expect_exit!(out, 0);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    let published: Value = serde_json::from_str(&git(
        &lab.origin,
        &[
            "show",
            "rx-node:rx-results/RES_CLKIN_2/LAB-A/RX_RESULT.json",
        ],
    ))
    .unwrap();
    assert_eq!(shown, published);
    assert_eq!(shown["node"]["name"], "LAB-A");
    let out = rxnode(&lab.main, &["results", "show", "NO_SUCH"], "");
    expect_exit!(out, 2);

    // verify: every node's result of an ID, or one.
    let out = rxnode(
        &lab.main,
        &["--json", "results", "verify", "RES_MANUAL_1"],
        "",
    );
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 2, "{v}");
    let out = rxnode(
        &lab.main,
        &["results", "verify", "RES_CLKIN_2", "--from", "LAB-A"],
        "",
    );
    expect_exit!(out, 0);
    assert!(stdout(&out).starts_with("OK "), "{}", show(&out));

    // nodes: count and last result per node.
    let out = rxnode(&lab.main, &["--json", "results", "nodes"], "");
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{v}");
    assert_eq!(nodes[0]["node"], "LAB-A");
    assert_eq!(nodes[0]["results"], 2);
    assert_eq!(nodes[0]["last_task_id"], "RES_CLKIN_2");
    assert_eq!(nodes[0]["last_result_at"], json!(first.completed_at));
    assert_eq!(nodes[1]["node"], "LAB-B");
    assert_eq!(nodes[1]["results"], 1);
    assert_eq!(main_pc_state(&lab.main), before);

    // --no-fetch reads the private copy only.
    let out = rxnode(&lab.main, &["--json", "results", "--no-fetch"], "");
    expect_exit!(out, 0);
}

/// A commit pushed to rx-node by something that is not a clean publication:
/// `results verify` names what is wrong; `results show` never prints raw
/// terminal control sequences.
#[test]
fn verify_catches_a_tampered_or_padded_result_and_show_escapes_control_characters() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("TAMPER_1", &[]);
    approve(&a);
    expect_exit!(publish(&a, "TAMPER_1"), 0);
    lab.post("TAMPER_2", &[]);
    approve(&a);
    expect_exit!(publish(&a, "TAMPER_2"), 0);
    let out = rxnode(&lab.main, &["results", "verify", "TAMPER_1"], "");
    expect_exit!(out, 0);

    // Someone with push access edits TAMPER_1's Markdown (status and an escape
    // sequence) and drops an extra file beside TAMPER_2's result.
    let hand = lab.clone_rx_node("hand");
    let md = hand.join("rx-results/TAMPER_1/LAB-A/RX_RESULT.md");
    let t = std::fs::read_to_string(&md)
        .unwrap()
        .replace("| Status | NOT RUN |", "| Status | PASS |\u{1b}[2J");
    std::fs::write(&md, t).unwrap();
    std::fs::write(hand.join("rx-results/TAMPER_2/LAB-A/notes.txt"), "hello\n").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "touch-ups"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_1"], "");
    expect_exit!(out, 2);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("summary row"), "{problems}");
    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_2"], "");
    expect_exit!(out, 2);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("notes.txt"), "{problems}");
    // A result whose own commit is clean but whose tree was later padded is still
    // flagged by the file check; the commit check looks at the adding commit.
    let human = rxnode(&lab.main, &["results", "verify", "TAMPER_2"], "");
    assert!(stdout(&human).starts_with("FAIL "), "{}", show(&human));

    let out = rxnode(&lab.main, &["results", "show", "TAMPER_1"], "");
    expect_exit!(out, 0);
    // The terminal gets the verdict from the JSON, a warning that the files do
    // not verify, the tampered Markdown escaped, and never a raw escape.
    assert!(!out.stdout.contains(&0x1b), "raw ESC reached the terminal");
    assert!(
        stdout(&out)
            .starts_with("TAMPER_1 from LAB-A: NOT RUN\n! the published files do not verify"),
        "{}",
        show(&out)
    );
    hand_made_oversize_and_dropped_results(&lab, &hand);
}

/// A hand-made commit with an extra file, an oversize result, stray folders and a force-push that drops a result are all named.
fn hand_made_oversize_and_dropped_results(lab: &Lab, hand: &Path) {
    // A hand-made commit that adds a result folder plus a file elsewhere: the
    // commit check names the extra file.
    let t3 = hand.join("rx-results/TAMPER_3/LAB-A");
    std::fs::create_dir_all(&t3).unwrap();
    for f in ["LOG_META.json", "RX_RESULT.json", "RX_RESULT.md"] {
        std::fs::copy(hand.join("rx-results/TAMPER_2/LAB-A").join(f), t3.join(f)).unwrap();
    }
    std::fs::write(hand.join("evil.sh"), "#!/bin/sh\n").unwrap();
    git(hand, &["add", "-A"]);
    git(
        hand,
        &[
            "commit",
            "-q",
            "-m",
            "rx-results: TAMPER_3\n\nTask: TAMPER_3\nNode-Name: LAB-A\n",
        ],
    );
    git(hand, &["push", "-q", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results", "verify", "TAMPER_3"], "");
    expect_exit!(out, 2);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(problems.contains("also adds evil.sh"), "{problems}");
    assert!(problems.contains("task_id is not TAMPER_3"), "{problems}");

    // An oversize result and folders that are neither task IDs nor node names are
    // named, never loaded or followed.
    let big = hand.join("rx-results/TAMPER_4/LAB-A");
    std::fs::create_dir_all(&big).unwrap();
    std::fs::write(big.join("RX_RESULT.json"), vec![b' '; 300 * 1024]).unwrap();
    std::fs::create_dir_all(hand.join("rx-results/bad id/LAB-A")).unwrap();
    std::fs::write(hand.join("rx-results/bad id/LAB-A/x"), "x").unwrap();
    std::fs::create_dir_all(hand.join("rx-results/TAMPER_5/not a node")).unwrap();
    std::fs::write(hand.join("rx-results/TAMPER_5/not a node/x"), "x").unwrap();
    git(hand, &["add", "-A"]);
    git(hand, &["commit", "-q", "-m", "junk"]);
    git(hand, &["push", "-q", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results"], "");
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["results"].as_array().unwrap();
    let t4 = rows
        .iter()
        .find(|r| r["task_id"] == "TAMPER_4")
        .expect("TAMPER_4 listed");
    assert!(t4["problems"].to_string().contains("307200 bytes"), "{t4}");
    let tree_problems = v["problems"].to_string();
    assert!(
        tree_problems.contains("bad id") && tree_problems.contains("not a node"),
        "{tree_problems}"
    );
    git(hand, &["reset", "-q", "--hard", "HEAD~1"]);
    git(hand, &["push", "-q", "--force", "origin", "rx-node"]);

    // A force-push that drops a result is reported on the next fetch.
    git(hand, &["reset", "-q", "--hard", "HEAD~3"]);
    git(hand, &["push", "-q", "--force", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["--json", "results"], "");
    expect_exit!(out, 0);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rx-node was rewritten"),
        "{}",
        show(&out)
    );
}

/// A plain commit on top of `rx-node` (no forced push: its tip descends from
/// the one the main PC saw) that deletes one node's published result and
/// replaces another's: the main PC names both as taken away, at that run and
/// every later one, and `results verify` of a result still there fails (the
/// branch is not to be trusted) — never a listing that silently lost a result.
#[test]
fn a_result_removed_or_replaced_by_a_later_commit_is_named_as_a_rewrite() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    for id in ["GONE_1", "SWAP_2", "KEPT_3"] {
        lab.post(id, &[]);
        approve(&a);
        expect_exit!(publish(&a, id), 0);
    }
    let out = rxnode(&lab.main, &["results", "verify", "KEPT_3"], "");
    expect_exit!(out, 0);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("rewritten"),
        "{}",
        show(&out)
    );

    let hand = lab.clone_rx_node("hand");
    git(&hand, &["rm", "-q", "-r", "rx-results/GONE_1"]);
    let md = hand.join("rx-results/SWAP_2/LAB-A/RX_RESULT.md");
    let t = std::fs::read_to_string(&md).unwrap() + "\nchecked by hand\n";
    std::fs::write(&md, t).unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "tidy"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    for run in 0..2 {
        let out = rxnode(&lab.main, &["--json", "results"], "");
        expect_exit!(out, 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rx-node was rewritten")
                && err.contains("took away 2 result(s)")
                && err.contains("rx-results/GONE_1/LAB-A removed")
                && err.contains("rx-results/SWAP_2/LAB-A replaced"),
            "run {run}: {}",
            show(&out)
        );
        let out = rxnode(&lab.main, &["results", "verify", "KEPT_3"], "");
        expect_exit!(out, 2);
    }
}

/// A peer replaces node LAB-A's pushed result folder `rx-results/GONE_F/` with
/// a file (and then another's with a folder differing only in letter case):
/// LAB-A's next publication names the result taken away and that it is not put
/// back over the file (nor beside the twin) — and is itself published, never
/// blocked by it.
#[test]
fn an_own_result_replaced_by_a_file_or_a_case_twin_is_named_not_written_over() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("GONE_F", &[]);
    approve(&a);
    expect_exit!(publish(&a, "GONE_F"), 0);
    let hand = lab.clone_rx_node("hand");
    git(&hand, &["rm", "-q", "-r", "rx-results/GONE_F"]);
    std::fs::create_dir_all(hand.join("rx-results")).unwrap();
    std::fs::write(hand.join("rx-results/GONE_F"), "mine now\n").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "tidy"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    lab.post("NEXT_F", &[]);
    approve(&a);
    let out = publish(&a, "NEXT_F");
    expect_exit!(out, 0);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("it is not put back, as rx-results/GONE_F on that branch is not a folder"),
        "{}",
        show(&out)
    );
    let tree = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert!(
        tree.contains("rx-results/NEXT_F/LAB-A/RX_RESULT.json")
            && tree.contains("rx-results/GONE_F\n"),
        "{tree}"
    );

    // Renamed to a folder that differs only in letter case: not put back beside it.
    lab.post("GONE_G", &[]);
    approve(&a);
    expect_exit!(publish(&a, "GONE_G"), 0);
    git(&hand, &["pull", "-q", "--ff-only", "origin", "rx-node"]);
    git(&hand, &["mv", "rx-results/GONE_G", "rx-results/gone_g"]);
    git(&hand, &["commit", "-q", "-m", "tidy again"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    lab.post("NEXT_G", &[]);
    approve(&a);
    let out = publish(&a, "NEXT_G");
    expect_exit!(out, 0);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("it is not put back, as rx-results/gone_g/ on that branch differs from it only in letter case"),
        "{}",
        show(&out)
    );
    let tree = git(&lab.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    assert!(!tree.contains("rx-results/GONE_G/"), "{tree}");
}

/// A result published and then deleted by a peer's plain commit before the
/// main PC ever looked, and another published and deleted between two looks:
/// the branch's own history shows both, so both are named as taken away (with
/// the commit that published each), at that run and every later one — never
/// a first listing that silently lacks a result.
#[test]
fn a_result_removed_before_the_main_pc_looked_is_named_from_history() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    for id in ["GONE_1", "KEPT_2"] {
        lab.post(id, &[]);
        approve(&a);
        expect_exit!(publish(&a, id), 0);
    }
    let published = git(&lab.origin, &["rev-parse", "rx-node~1"]);
    let hand = lab.clone_rx_node("hand");
    git(&hand, &["rm", "-q", "-r", "rx-results/GONE_1"]);
    git(&hand, &["commit", "-q", "-m", "tidy"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);

    for run in 0..2 {
        let out = rxnode(&lab.main, &["--json", "results"], "");
        expect_exit!(out, 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rx-node was rewritten")
                && err.contains("first look")
                && err.contains(&format!(
                    "rx-results/GONE_1/LAB-A removed (published in commit {published})"
                )),
            "run {run}: {}",
            show(&out)
        );
        let out = rxnode(&lab.main, &["results", "verify", "KEPT_2"], "");
        expect_exit!(out, 2);
    }

    // Published and deleted between two looks: neither tip the main PC saw holds it.
    lab.post("GONE_3", &[]);
    approve(&a);
    expect_exit!(publish(&a, "GONE_3"), 0);
    git(&hand, &["pull", "-q", "--ff-only", "origin", "rx-node"]);
    git(&hand, &["rm", "-q", "-r", "rx-results/GONE_3"]);
    git(&hand, &["commit", "-q", "-m", "tidy again"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    for run in 0..2 {
        let out = rxnode(&lab.main, &["--json", "results"], "");
        expect_exit!(out, 0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rx-results/GONE_1/LAB-A removed")
                && err.contains("rx-results/GONE_3/LAB-A removed (published in commit"),
            "run {run}: {}",
            show(&out)
        );
    }
}

/// A peer's plain commit on `rx-node` deletes node LAB-A's pushed result of
/// GONE_A; LAB-A's next publication builds on that tip: its confirmation names
/// the result taken away, with the commit that published it, and puts it back
/// exactly as published (the same tree, named in `Carried-Over:`), so that the
/// main PC finds and verifies it — never a publication that silently goes on
/// without it.
#[test]
fn publish_names_and_puts_back_an_own_result_a_later_commit_removed() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("GONE_A", &[]);
    approve(&a);
    expect_exit!(publish(&a, "GONE_A"), 0);
    let published = git(
        &lab.origin,
        &["rev-parse", "rx-node:rx-results/GONE_A/LAB-A"],
    );
    let hand = lab.clone_rx_node("hand");
    git(&hand, &["rm", "-q", "-r", "rx-results/GONE_A"]);
    git(&hand, &["commit", "-q", "-m", "tidy"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    lab.post("NEXT_B", &[]);
    approve(&a);
    let out = publish(&a, "NEXT_B");
    expect_exit!(out, 0);
    let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        said.contains("! rx-results/GONE_A/LAB-A/, published by this node in commit")
            && said.contains("is no longer on that branch: a later commit removed it")
            && said.contains(&format!("puts it back as published (tree {published}")),
        "{}",
        show(&out)
    );
    assert_eq!(
        git(
            &lab.origin,
            &["rev-parse", "rx-node:rx-results/GONE_A/LAB-A"]
        ),
        published,
        "GONE_A was not put back as published"
    );
    let msg = git(&lab.origin, &["log", "-1", "--format=%B", "rx-node"]);
    assert!(msg.contains("Carried-Over: GONE_A/LAB-A"), "{msg}");
    for id in ["GONE_A", "NEXT_B"] {
        let out = rxnode(&lab.main, &["results", "verify", id], "");
        expect_exit!(out, 0);
    }
    // Back in place: the next publication has nothing to name.
    lab.post("NEXT_C", &[]);
    approve(&a);
    let out = publish(&a, "NEXT_C");
    expect_exit!(out, 0);
    assert!(!stdout(&out).contains("GONE_A"), "{}", show(&out));
}

/// `results` lists the newest 50 by default, `--limit N` the newest N and
/// `--all` every one, newest first by when each landed on rx-node.
#[test]
fn results_limit_and_all_list_the_newest_first_by_publication() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    for id in ["ORDER_1", "ORDER_2", "ORDER_3"] {
        lab.post(id, &[]);
        approve(&a);
        expect_exit!(publish(&a, id), 0);
    }
    let ids = |l: &Listing| {
        l.results
            .iter()
            .map(|r| r.task_id.clone())
            .collect::<Vec<_>>()
    };
    let two = listing(&lab.main, &["--limit", "2"]);
    assert_eq!(ids(&two), ["ORDER_3", "ORDER_2"]);
    assert_eq!(two.total, 3);
    let all = listing(&lab.main, &["--all"]);
    assert_eq!(ids(&all), ["ORDER_3", "ORDER_2", "ORDER_1"]);
    let default = listing(&lab.main, &[]);
    assert_eq!(ids(&default), ids(&all));
    let human = rxnode(&lab.main, &["results", "--limit", "1"], "");
    expect_exit!(human, 0);
    assert!(
        stdout(&human).contains("--all for every result"),
        "{}",
        show(&human)
    );
    let bad = rxnode(&lab.main, &["results", "--limit", "2", "--all"], "");
    expect_exit!(bad, 2);
}

/// protocol.md's synopsis of `results report --html DIR [--node N] [--status S]
/// [--since T] [--limit N | --all]`, typed as written (the filters after
/// `report`), writes the site of that node's results only; the same filters
/// with `show`, `verify` or `nodes`, where they would change nothing, are
/// refused naming the flag (exit 2) rather than ignored.
#[test]
fn results_report_takes_the_filters_its_synopsis_documents() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/protocol.md"))
            .expect("docs/protocol.md");
    let synopsis = doc
        .lines()
        .find_map(|l| l.strip_prefix("- `rxnode results report --html DIR "))
        .and_then(|l| l.split('`').next())
        .expect("protocol.md documents `results report --html DIR …`");
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let b = lab.node("LAB-B");
    for (node, id) in [(&a, "REP_A"), (&b, "REP_B")] {
        lab.post(id, &[]);
        approve(node);
        let done = rxnode(
            node,
            &["mark-completed", id, "--status", "PASS", "--note", "done"],
            "",
        );
        expect_exit!(done, 0);
        expect_exit!(publish(node, id), 0);
    }
    let all = listing(&lab.main, &[]);
    let status = all
        .results
        .iter()
        .find(|r| r.task_id == "REP_B")
        .and_then(|r| r.status.clone())
        .expect("REP_B listed with a status");
    // `[--limit N | --all]`: each alternative in turn.
    let flags: Vec<&str> = synopsis
        .split(|c: char| c.is_whitespace() || "[]|".contains(c))
        .filter(|w| w.starts_with("--"))
        .collect();
    assert!(
        flags.contains(&"--limit") && flags.contains(&"--all"),
        "{synopsis}"
    );
    for (n, alternative) in ["--limit", "--all"].into_iter().enumerate() {
        let site = lab.root.path().join(format!("site{n}"));
        let mut args = vec![
            "--json".to_owned(),
            "results".to_owned(),
            "report".to_owned(),
            "--html".to_owned(),
            site.to_string_lossy().into_owned(),
        ];
        for flag in flags
            .iter()
            .filter(|f| !["--limit", "--all"].contains(f) || **f == alternative)
        {
            let value = match *flag {
                "--node" => Some("LAB-B"),
                "--status" => Some(status.as_str()),
                "--since" => Some("1d"),
                "--limit" => Some("5"),
                "--all" => None,
                other => panic!("protocol.md's synopsis names {other}: give this test its value"),
            };
            args.push((*flag).to_owned());
            args.extend(value.map(str::to_owned));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 0);
        let report: Value = serde_json::from_slice(&out.stdout).expect("report JSON");
        assert_eq!(report["results"], 1, "{args:?}: {}", show(&out));
        let pages: Vec<String> = std::fs::read_dir(&site)
            .expect("the site")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".html") && f != "index.html")
            .collect();
        assert!(
            pages.len() == 1 && pages[0].contains("REP_B_LAB-B"),
            "{args:?}: {pages:?}"
        );
    }
    // Filters where they change nothing: refused, naming the flag and the fix.
    for (args, flag, fix) in [
        (
            &["results", "show", "REP_B", "--node", "LAB-B"][..],
            "--node",
            "--from",
        ),
        (
            &["results", "--status", "pass", "verify", "REP_B"],
            "--status",
            "--from",
        ),
        (
            &["results", "nodes", "--since", "1d"],
            "--since",
            "every node",
        ),
        (
            &["results", "show", "REP_B", "--all", "--no-fetch"],
            "--all",
            "--from",
        ),
    ] {
        let out = rxnode(&lab.main, args, "");
        expect_exit!(out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(flag) && err.contains(fix),
            "{args:?}: {}",
            show(&out)
        );
    }
    // `--all` on one side of `report` and `--limit` on the other: refused as
    // both together are.
    let site = lab.root.path().join("site_both");
    let out = rxnode(
        &lab.main,
        &[
            "results",
            "--all",
            "report",
            "--html",
            site.to_str().unwrap(),
            "--limit",
            "4",
        ],
        "",
    );
    expect_exit!(out, 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--limit"),
        "{}",
        show(&out)
    );
}

/// What publishing.md shows the operator of `rxnode publish ID --push` and of
/// the commit it makes is what they see: the same lines, in the same order,
/// with the node's folder in every path, up to the sizes and commit ids.
#[test]
fn publishing_md_samples_are_what_publish_prints_and_commits() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/publishing.md"))
            .expect("docs/publishing.md");
    let block = |first: &str| -> Vec<String> {
        let start = doc
            .find(first)
            .unwrap_or_else(|| panic!("publishing.md shows {first}"));
        doc[start..]
            .lines()
            .take_while(|l| !l.starts_with("```"))
            .map(str::to_owned)
            .collect()
    };
    // Sizes, hashes and the operator's echoed answer are the run's own.
    let shape = |l: &str| -> String {
        let l = regex::Regex::new(r"[0-9a-f]{7,40}…?")
            .unwrap()
            .replace_all(l, "H");
        let l = regex::Regex::new(r"\d+ bytes")
            .unwrap()
            .replace_all(&l, "N bytes");
        let l = regex::Regex::new(r"go ahead: .*")
            .unwrap()
            .replace_all(&l, "go ahead:");
        l.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let lab = Lab::new();
    let node = lab.node("LAB-RX1");
    // A first publication, so the sample's `on top of rx-node commit …` applies.
    lab.post("RX_2026_11_28_Z", &[]);
    approve(&node);
    expect_exit!(
        rxnode(
            &node,
            &[
                "mark-completed",
                "RX_2026_11_28_Z",
                "--status",
                "PASS",
                "--note",
                "ok"
            ],
            ""
        ),
        0
    );
    expect_exit!(publish(&node, "RX_2026_11_28_Z"), 0);
    let id = "RX_2026_11_29_A";
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post(id, &["--rx", "--plan", &plan]);
    approve(&node);
    expect_exit!(rxnode(&node, &["--sim", "run", id], ""), 0);
    let out = publish(&node, id);
    expect_exit!(out, 0);
    let said: Vec<String> = stdout(&out)
        .lines()
        .map(shape)
        .filter(|l| !l.is_empty())
        .collect();
    let sample: Vec<String> = block("$ rxnode publish RX_2026_11_29_A --push")
        .iter()
        .skip(1)
        .map(|l| shape(&l.replace("(Clock check)", "(Check the lab clock)")))
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(said, sample, "{}", show(&out));
    // The commit message: the same trailers in the same order (`Node:` only
    // when the result names its host, which it does not by default).
    let message = git(&lab.origin, &["log", "-1", "--format=%B", "rx-node"]);
    let keys = |lines: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        lines
            .filter_map(|l| l.split_once(": ").map(|(k, _)| k.to_owned()))
            .filter(|k| k != "Node")
            .collect()
    };
    let sample = block("rx-results: RX_2026_11_29_A (PASS) from LAB-RX1");
    assert_eq!(message.lines().next(), sample.first().map(String::as_str));
    assert_eq!(
        keys(&mut message.lines().skip(1)),
        keys(&mut sample.iter().skip(1).map(String::as_str)),
        "{message}"
    );
}

/// A peer's result carrying C1 controls (U+009B, a CSI) and bidi overrides
/// (U+202E): every display — `results`, `results --json`, `results show`,
/// `results show --json` — escapes them; JSON as `\uXXXX`, never raw.
#[test]
fn a_peers_non_printable_characters_are_escaped_on_every_display() {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    lab.post("ESC_1", &[]);
    approve(&a);
    expect_exit!(publish(&a, "ESC_1"), 0);
    let hand = lab.clone_rx_node("hand-esc");
    let dir = hand.join("rx-results/ESC_1/LAB-A");
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(dir.join("RX_RESULT.json")).unwrap()).unwrap();
    v["task_title"] = json!("ok\u{9b}31m\u{202e}gnp.exe\u{7f}");
    std::fs::write(
        dir.join("RX_RESULT.json"),
        serde_json::to_vec_pretty(&v).unwrap(),
    )
    .unwrap();
    let md = std::fs::read_to_string(dir.join("RX_RESULT.md")).unwrap();
    std::fs::write(
        dir.join("RX_RESULT.md"),
        format!("{md}\n\u{9b}2J \u{202e}x\n"),
    )
    .unwrap();
    git(&hand, &["commit", "-qam", "planted"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    let raw = |b: &[u8]| {
        let s = String::from_utf8_lossy(b);
        s.chars()
            .any(|c| matches!(c as u32, 0x7f | 0x80..=0x9f | 0x202a..=0x202e))
    };
    for args in [
        &["results"][..],
        &["--json", "results"],
        &["results", "show", "ESC_1"],
        &["--json", "results", "show", "ESC_1"],
        &["results", "show", "ESC_1", "--markdown"],
        &["--json", "results", "show", "ESC_1", "--markdown"],
        &["--json", "results", "verify", "ESC_1"],
    ] {
        let out = rxnode(&lab.main, args, "");
        assert!(
            !raw(&out.stdout) && !raw(&out.stderr),
            "{args:?} printed raw: {}",
            show(&out)
        );
    }
    let out = rxnode(&lab.main, &["--json", "results", "show", "ESC_1"], "");
    expect_exit!(out, 0);
    let so = stdout(&out);
    assert!(so.contains("\\u009b") && so.contains("\\u202e"), "{so}");
    // Still the same value for a JSON reader.
    let back: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(back["task_title"], v["task_title"]);
}

/// A peer's `rx-node` whose `rx-results` is a submodule's gitlink: `results`
/// refuses with exit 3 naming the path.
#[test]
fn results_refuses_a_gitlink_on_the_result_path_naming_it() {
    let lab = Lab::new();
    let peer = lab.root.path().join("peer");
    git(lab.root.path(), &["init", "-q", peer.to_str().unwrap()]);
    std::fs::write(peer.join("x"), "x\n").unwrap();
    git(&peer, &["add", "x"]);
    git(&peer, &["commit", "-q", "-m", "x"]);
    let head = git(&peer, &["rev-parse", "HEAD"]);
    git(
        &peer,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{head},rx-results"),
        ],
    );
    git(&peer, &["commit", "-q", "-m", "planted"]);
    git(
        &peer,
        &[
            "push",
            "-q",
            lab.origin.to_str().unwrap(),
            "HEAD:refs/heads/rx-node",
        ],
    );
    let out = rxnode(&lab.main, &["results"], "");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rx-results on rx-node is a submodule"),
        "{err}"
    );
}

/// A peer pushes `rx-node` holding a commit of 8 MiB (a few KiB of zlib; GiBs cost
/// no more to push): `results` refuses the fetch naming the commit and its size,
/// reads none of it and leaves the private ref as it was.
#[test]
fn results_refuses_an_oversized_commit_unread() {
    let lab = Lab::new();
    let bomb = crate::util::push_oversized_commit(
        lab.root.path(),
        lab.origin.to_str().unwrap(),
        "refs/heads/rx-node",
    );
    let out = rxnode(&lab.main, &["results"], "");
    expect_exit!(out, 3);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("commit {bomb} is 838")) && err.contains("over the 2097152 bytes"),
        "{err}"
    );
    let private = git_out(
        &lab.main,
        &["rev-parse", "--verify", "-q", "refs/rxnode/main-pc/rx-node"],
    );
    assert!(
        !private.status.success(),
        "the private ref moved to the oversized commit"
    );
    let out = rxnode(&lab.main, &["results", "--no-fetch"], "");
    expect_exit!(out, 0);
}

/// `results --no-fetch` before any fetch says nothing was fetched yet and how to
/// fetch (not "no rx-node branch on the remote", which it cannot know).
#[test]
fn results_no_fetch_before_any_fetch_says_nothing_was_fetched() {
    let lab = Lab::new();
    let out = rxnode(&lab.main, &["results", "--no-fetch"], "");
    expect_exit!(out, 0);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("nothing fetched yet")
            && said.contains("run `rxnode results` without --no-fetch"),
        "{said}"
    );
    assert!(!said.contains("no rx-node branch on the remote"), "{said}");
    // `--no-fetch` before or after the subcommand: the same read of the local copy.
    for args in [
        ["results", "--no-fetch", "show", "T_NONE"],
        ["results", "show", "T_NONE", "--no-fetch"],
        ["results", "verify", "T_NONE", "--no-fetch"],
    ] {
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 2);
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("no result for T_NONE: nothing fetched yet"),
            "{args:?}: {}",
            show(&out)
        );
    }
    // After a fetch of a remote without rx-node, the other words.
    let out = rxnode(&lab.main, &["results"], "");
    expect_exit!(out, 0);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no rx-node branch on the remote yet"),
        "{}",
        show(&out)
    );
}
