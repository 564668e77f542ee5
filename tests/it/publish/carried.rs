//! Nothing reaches `rx-node` that the prompt did not list: a push lists every
//! other result it takes (local-only publications, results carried onto a
//! diverged remote tip), and `results verify` says what such a commit carries.
use super::*;

#[test]
fn a_push_lists_every_result_it_takes_and_verify_names_what_a_commit_carried() {
    let fx = Fixture::new();
    // Each task posted by the main PC: `results verify` ties a result to the
    // commit holding its task on the watched branch.
    let posted: Vec<(&str, String)> = ["CAR_A", "CAR_B", "CAR_P"]
        .into_iter()
        .map(|id| (id, fx.post(id, "RX_RESULT_ONLY")))
        .collect();
    let co = fx.checkout("rx1");
    let peer = fx.checkout("rx2");
    for (id, commit) in &posted {
        let at = if *id == "CAR_P" { &peer } else { &co };
        fx.outbox_at(at, id, "RX_RESULT_ONLY", commit);
    }
    // CAR_A is published here without --push: it stays on the local rx-node.
    let out = publish(&co, "CAR_A", false, Some("PUBLISH CAR_A\n"));
    expect_exit!(out, 0);
    // Meanwhile another node pushes: the remote rx-node moves on.
    let out = publish(&peer, "CAR_P", true, Some("PUBLISH CAR_P\n"));
    expect_exit!(out, 0);
    // Publishing CAR_B with --push takes CAR_A along: the prompt says so before
    // the operator types the line.
    let out = publish(&co, "CAR_B", true, Some("PUBLISH CAR_B\n"));
    expect_exit!(out, 0);
    let said = show(&out);
    assert!(
        said.contains(
            "the push also takes 1 result(s) published on this node and not yet on origin"
        ) && said.contains("rx-results/CAR_A/rx1/"),
        "{said}"
    );
    // What landed is exactly what was listed: CAR_B, CAR_A (carried) and the peer's.
    let tree = git(&fx.origin, &["ls-tree", "-r", "--name-only", "rx-node"]);
    let dirs: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter_map(|l| l.rsplit_once('/').map(|(d, _)| d))
        .collect();
    assert_eq!(
        dirs.into_iter().collect::<Vec<_>>(),
        [
            "rx-results/CAR_A/rx1",
            "rx-results/CAR_B/rx1",
            "rx-results/CAR_P/rx2"
        ],
        "{tree}"
    );
    // `results verify` describes the 6-file commit truthfully.
    let out = rxnode_cmd()
        .arg("--repo")
        .arg(&peer)
        .args(["results", "verify", "CAR_B"])
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("adds its three files and carries 1 whole result(s) its Carried-Over trailer names: CAR_A/rx1"),
        "{said}"
    );
    assert!(!said.contains("adds only its three files"), "{said}");
}
