//! A lost node key is never replaced without being asked.
use crate::util::{run_fed, show, text, Lab};

/// With the node key (`.git/rxnode/key`) lost after an approval, `node set-name`
/// made a new key without a word (exit 0) and every record signed with the old
/// one was refused at the next command. It now refuses (exit 3), naming the key
/// file, what showed the node had a key and the fix, and writes nothing; with
/// `--new-key` it makes the key and says what that means.
#[test]
fn a_lost_node_key_is_replaced_only_when_asked() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 10}}"#);
    let out = run_fed(lab.rxnode().args(["node", "set-name", "LAB1"]), b"");
    assert!(out.status.success(), "{}", show(&out));
    let text_task = Lab::task("M1", &lab.main_head(), &[("HARDWARE_ACCESS", "NO")]);
    lab.post(&text_task);
    lab.approve("M1");
    let key = lab.rx.join(".git/rxnode/key");
    std::fs::remove_file(&key).unwrap();
    let node_file = lab.local().join("rxnode-node.json");
    let before = std::fs::read(&node_file).unwrap();
    let out = run_fed(lab.rxnode().args(["node", "set-name", "LAB2"]), b"");
    crate::util::expect_exit(&out, 3, "set-name with the key lost");
    let err = text(&out.stderr);
    assert!(
        err.contains(&key.display().to_string())
            && err.contains("is missing")
            && err.contains("--new-key")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!key.exists(), "a key was made");
    assert_eq!(
        std::fs::read(&node_file).unwrap(),
        before,
        "the node file changed"
    );
    let out = run_fed(
        lab.rxnode().args(["node", "set-name", "LAB2", "--new-key"]),
        b"",
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(key.exists());
    let err = text(&out.stderr);
    assert!(
        err.contains("a new key is made") && err.contains("state rebuild"),
        "{err}"
    );
}
