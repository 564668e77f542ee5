//! Signed tasks (docs/safety.md#who-wrote-it): the watcher verifies the SSH
//! signature of the commit that last changed the task file against
//! `.local/allowed_signers` and `tasks.require_signature`; `run` verifies it
//! again before any radio step. Keys come from the real `ssh-keygen`, signed
//! commits from the real `git commit -S` (`gpg.format=ssh`), against a bare origin.
use crate::util::{git, show, text, Key, Lab, PROMPT, TASK_PATH};

/// The node's policy with `tasks.require_signature = rule`.
fn require(lab: &Lab, rule: &str) {
    lab.set_policy(&format!(
        r#"{{"tasks": {{"require_signature": "{rule}"}}}}"#
    ));
}

/// `rxnode node signers add PRINCIPAL KEY.pub` must succeed.
fn allow(lab: &Lab, principal: &str, key: &Key) {
    let out = lab.run(
        &[
            "node",
            "signers",
            "add",
            principal,
            key.public.to_str().unwrap(),
        ],
        "",
    );
    expect_exit!(out, 0);
}

/// The `rejected` ledger line of `id`: its commit and reason.
fn rejection(lab: &Lab, id: &str) -> (String, String) {
    let e = lab
        .ledger_events()
        .into_iter()
        .find(|e| e["event"] == "rejected" && e["task_id"] == id)
        .unwrap_or_else(|| panic!("no rejected line for {id}: {:?}", lab.ledger_events()));
    (
        e["commit"].as_str().unwrap_or("").to_owned(),
        e["detail"]["reason"].as_str().unwrap_or("").to_owned(),
    )
}

/// `id` was rejected for `why`, naming `commit` (the commit that last changed the
/// task file), never prompted, and `status` says so.
fn refused_for(lab: &Lab, id: &str, commit: &str, why: &str) {
    assert_eq!(lab.status_of(id), "rejected", "{id}");
    let (c, reason) = rejection(lab, id);
    // The ledger line's commit is the version examined (on a first start the tip).
    assert_eq!(c.len(), 40, "{reason}");
    assert!(reason.contains(why) && reason.contains(commit), "{reason}");
    assert_eq!(lab.count_events("prompted", id), 0);
    assert!(!lab.outbox(id).exists());
    let out = lab.run(&["status"], "");
    let so = text(&out.stdout);
    assert!(so.contains(id) && so.contains(why), "{so}");
}

/// A watcher poll that meets the posted task `id` (an `a` waiting on stdin) and
/// rejects it for `why`, naming `commit`: nothing is approved or prompted.
fn watch_refuses(lab: &Lab, id: &str, commit: &str, why: &str) {
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    refused_for(lab, id, commit, why);
}

/// The operator's `.local/allowed_signers`, written with `text`.
fn write_signers(lab: &Lab, text: &str) {
    std::fs::create_dir_all(lab.local()).unwrap();
    std::fs::write(lab.local().join("allowed_signers"), text).unwrap();
}

/// A RED manual task (declared), which the `red` rule covers.
fn red_task(lab: &Lab, id: &str) -> String {
    lab.plan_task(id, &[("RISK_LEVEL", "RED")], None)
}

#[test]
fn a_good_signature_is_shown_at_the_prompt_and_an_unsigned_task_says_unsigned() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    // A signer the file lists, with its fingerprint.
    let out = lab.run(&["--json", "node", "signers", "list"], "");
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["signers"][0]["principals"], "alice@lab.example");
    assert_eq!(v["signers"][0]["fingerprint"], alice.fingerprint().as_str());
    assert_eq!(v["signers"][0]["namespaces"][0], "git");
    // git itself accepts the file rxnode wrote.
    let c = lab.post_signed(&red_task(&lab, "T_SIGNED"), &alice);
    let verify = crate::util::git_out(
        &lab.rx,
        &[
            "-c",
            &format!(
                "gpg.ssh.allowedSignersFile={}",
                lab.local().join("allowed_signers").display()
            ),
            "fetch",
            "-q",
        ],
    );
    assert!(verify.status.success());
    let vc = crate::util::git_out(
        &lab.rx,
        &[
            "-c",
            &format!(
                "gpg.ssh.allowedSignersFile={}",
                lab.local().join("allowed_signers").display()
            ),
            "verify-commit",
            &c,
        ],
    );
    assert!(
        vc.status.success(),
        "git verify-commit: {}",
        text(&vc.stderr)
    );

    require(&lab, "red");
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    let line = format!(
        "Signed: good signature by alice@lab.example ({}) on commit {c}",
        alice.fingerprint()
    );
    assert!(so.contains(PROMPT) && so.contains(&line), "{so}");
    assert_eq!(lab.status_of("T_SIGNED"), "approved");
    let approved = lab
        .ledger_events()
        .into_iter()
        .find(|e| e["event"] == "approved")
        .unwrap();
    assert_eq!(approved["detail"]["signature"]["status"], "good");
    assert_eq!(approved["detail"]["signature"]["commit"], c.as_str());

    // The policy allows an unsigned GREEN task: the prompt says so in the same place.
    let c2 = lab.post(&lab.plan_task("T_PLAIN", &[], None));
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(so.contains(&format!("Unsigned (commit {c2})")), "{so}");
}

#[test]
fn an_unsigned_task_is_rejected_when_the_policy_requires_a_signature() {
    let lab = Lab::new();
    require(&lab, "all");
    let c = lab.post(&lab.plan_task("T_UNSIGNED", &[], None));
    let out = lab.watch_once("a\n");
    expect_exit!(out, 0);
    assert!(!text(&out.stdout).contains(PROMPT), "{}", show(&out));
    refused_for(&lab, "T_UNSIGNED", &c, "is unsigned");
}

#[test]
fn a_signature_by_a_key_not_in_the_list_is_rejected() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    let mallory = Key::new(lab.dir.path(), "mallory");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "red");
    let c = lab.post_signed(&red_task(&lab, "T_MALLORY"), &mallory);
    watch_refuses(&lab, "T_MALLORY", &c, "unknown key");
    let (_, reason) = rejection(&lab, "T_MALLORY");
    assert!(reason.contains(&mallory.fingerprint()), "{reason}");
}

#[test]
fn a_signature_on_another_commit_than_the_one_that_changed_the_task_file_does_not_count() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "red");
    // An unsigned commit changes the task file; a signed one on top changes another file.
    let unsigned = lab.commit_file(TASK_PATH, red_task(&lab, "T_UNDER").as_bytes(), None);
    let tip = lab.commit_file("notes.txt", b"signed, but not the task\n", Some(&alice));
    git(&lab.main, &["push", "-q", "origin", crate::util::BRANCH]);
    watch_refuses(&lab, "T_UNDER", &unsigned, "is unsigned");
    let (at, reason) = rejection(&lab, "T_UNDER");
    // A first start examines the tip, and checks the commit below it that changed the file.
    assert_eq!(at, tip);
    assert!(
        reason.contains(&format!(
            "commit {unsigned}, which last changed the task file"
        )),
        "{reason}"
    );

    // A signed commit posts a task; a later unsigned commit replaces it.
    let signed = lab.post_signed(&red_task(&lab, "T_FIRST"), &alice);
    let _ = signed;
    let later = lab.post(&red_task(&lab, "T_LATER"));
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    refused_for(&lab, "T_LATER", &later, "is unsigned");
    // The signed version is still offered (and shown as signed).
    let so = text(&out.stdout);
    assert!(
        so.contains("T_FIRST") && so.contains("Signed: good signature by alice@lab.example"),
        "{so}"
    );
}

#[test]
fn a_signature_grafted_onto_another_commit_is_a_bad_signature() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "red");
    // Alice really signed a commit (of a harmless task) ...
    let good = lab.post_signed(&red_task(&lab, "T_HARMLESS"), &alice);
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    let raw = crate::util::git_raw(&lab.main, &["cat-file", "commit", &good]);
    let raw = String::from_utf8(raw).unwrap();
    let start = raw.find("-----BEGIN SSH SIGNATURE-----").unwrap();
    let end =
        raw.find("-----END SSH SIGNATURE-----").unwrap() + "-----END SSH SIGNATURE-----".len();
    let block = raw[start..end].replace("\n ", "\n");
    // ... and her signature is copied onto a commit whose tree holds another task.
    let c = lab.post_grafted(&red_task(&lab, "T_GRAFTED"), |_| block);
    watch_refuses(&lab, "T_GRAFTED", &c, "bad signature");
}

#[test]
fn a_key_listed_for_another_namespace_or_signing_another_namespace_is_refused() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    write_signers(
        &lab,
        &format!(
            "alice@lab.example namespaces=\"file\" {}\n",
            alice.public_line()
        ),
    );
    require(&lab, "all");
    let c = lab.post_signed(&lab.plan_task("T_NS", &[], None), &alice);
    watch_refuses(&lab, "T_NS", &c, "key not allowed for this namespace");

    // Listed for git, but the block was made in the namespace `file` (`ssh-keygen -Y sign -n file`).
    write_signers(
        &lab,
        &format!("alice@lab.example {}\n", alice.public_line()),
    );
    let c = lab.post_grafted(&lab.plan_task("T_FILE_NS", &[], None), |raw| {
        alice.sign("file", raw)
    });
    watch_refuses(&lab, "T_FILE_NS", &c, "namespace \"file\"");

    // The same key signing in namespace git over the real commit text: good.
    let c = lab.post_grafted(&lab.plan_task("T_GIT_NS", &[], None), |raw| {
        alice.sign("git", raw)
    });
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(
        so.contains(&format!(
            "Signed: good signature by alice@lab.example ({}) on commit {c}",
            alice.fingerprint()
        )),
        "{so}"
    );
}

#[test]
fn an_expired_key_is_refused() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    write_signers(
        &lab,
        &format!(
            "alice@lab.example namespaces=\"git\",valid-before=20200101Z {}\n",
            alice.public_line()
        ),
    );
    require(&lab, "all");
    let c = lab.post_signed(&lab.plan_task("T_OLD_KEY", &[], None), &alice);
    watch_refuses(&lab, "T_OLD_KEY", &c, "expired");
}

#[test]
fn a_malformed_or_huge_signature_block_is_refused_without_a_crash() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "all");
    let c = lab.post_grafted(&lab.plan_task("T_GARBLED", &[], None), |_| {
        "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg\n-----END SSH SIGNATURE-----\n".to_owned()
    });
    watch_refuses(&lab, "T_GARBLED", &c, "malformed signature");

    let c = lab.post_grafted(&lab.plan_task("T_HUGE", &[], None), |_| {
        let mut s = "-----BEGIN SSH SIGNATURE-----\n".to_owned();
        for _ in 0..20_000 {
            s.push_str(
                "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\n",
            );
        }
        s.push_str("-----END SSH SIGNATURE-----\n");
        s
    });
    watch_refuses(&lab, "T_HUGE", &c, "at most 16384");
}

#[test]
fn a_signers_file_planted_through_git_or_writable_by_others_stops_everything() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "red");
    let signers = lab.local().join("allowed_signers");
    // World-writable: refused, naming the file, nothing examined.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&signers, std::fs::Permissions::from_mode(0o666)).unwrap();
    lab.post_signed(&red_task(&lab, "T_WW"), &alice);
    let out = lab.watch_once("a\n");
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(
        se.contains("allowed signers file") && se.contains("writable by group or others"),
        "{se}"
    );
    assert!(!lab.outbox("T_WW").exists());
    assert_eq!(lab.count_events("prompted", "T_WW"), 0);
    let out = lab.run(&["doctor"], "");
    assert!(
        text(&out.stdout).contains("allowed signers file"),
        "{}",
        show(&out)
    );
    std::fs::set_permissions(&signers, std::fs::Permissions::from_mode(0o644)).unwrap();

    // Planted through Git: the main PC commits a signers file of its own.
    let mallory = Key::new(lab.dir.path(), "mallory");
    let planted = format!("mallory@evil.example {}\n", mallory.public_line());
    let lab2 = Lab::new();
    allow(&lab2, "alice@lab.example", &alice);
    require(&lab2, "red");
    lab2.commit_file(".local/allowed_signers", planted.as_bytes(), None);
    lab2.post_signed(&red_task(&lab2, "T_PLANTED"), &mallory);
    let before = std::fs::read(lab2.local().join("allowed_signers")).unwrap();
    // Before a pull: the watcher refuses the fetched tip that tracks it ("do not pull").
    let out = crate::util::run_fed(
        lab2.rxnode().args(["watch", "--once", "--interval", "0.2"]),
        b"a\n",
    );
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(se.contains("tracks .local/allowed_signers"), "{se}");
    assert_eq!(
        std::fs::read(lab2.local().join("allowed_signers")).unwrap(),
        before
    );
    assert!(!lab2.outbox("T_PLANTED").exists());
    assert_eq!(lab2.count_events("prompted", "T_PLANTED"), 0);
    // After a careless pull (Git overwrites the ignored file with mallory's): refused.
    git(&lab2.rx, &["pull", "-q", "origin", crate::util::BRANCH]);
    assert_eq!(
        std::fs::read_to_string(lab2.local().join("allowed_signers")).unwrap(),
        planted
    );
    let out = crate::util::run_fed(
        lab2.rxnode().args(["watch", "--once", "--interval", "0.2"]),
        b"a\n",
    );
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(
        se.contains("untrusted node-local files") && se.contains("allowed_signers"),
        "{se}"
    );
    assert!(!lab2.outbox("T_PLANTED").exists());
    let out = crate::util::run_fed(lab2.rxnode().args(["node", "signers", "list"]), b"");
    expect_exit!(out, 3);
}

#[test]
fn run_verifies_the_signature_again_before_any_radio_step() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "all");
    let plan = r#"{"steps": [{"op": "inventory"}]}"#;
    let overrides = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "YELLOW"),
        ("ALLOW_PUSH", "RX_RESULT_ONLY"),
    ];
    let c = lab.post_signed(&lab.plan_task("T_RUN_OK", &overrides, Some(plan)), &alice);
    lab.approve("T_RUN_OK");
    let run = |id: &str| {
        crate::util::run_fed(
            lab.rxnode()
                .args(["--sim", "run", id])
                .env("RXSIM_EVENT_LOG", lab.events_log()),
            b"",
        )
    };
    let out = run("T_RUN_OK");
    expect_exit!(out, 0);
    assert!(
        text(&out.stderr).contains("Signed: good signature by alice@lab.example"),
        "{}",
        show(&out)
    );
    let res: serde_json::Value = serde_json::from_slice(
        &std::fs::read(lab.outbox("T_RUN_OK").join("RX_RESULT.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(res["approval"]["signature"]["status"], "good");
    assert_eq!(res["approval"]["signature"]["commit"], c.as_str());
    assert_eq!(
        res["approval"]["signature"]["principal"],
        "alice@lab.example"
    );
    // The key as 64 hex digits: the publication scanner takes it for the SHA-256 it is.
    assert_eq!(
        res["approval"]["signature"]["key_sha256"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    let out = lab.run(&["validate-result", "T_RUN_OK"], "");
    expect_exit!(out, 0);
    // Published, the main PC's `results verify` says the task was signed, and by whom.
    expect_exit!(lab.run(&["node", "set-name", "LAB-RX"], ""), 0);
    let out = lab.run(&["publish", "T_RUN_OK", "--push"], "PUBLISH T_RUN_OK\n");
    expect_exit!(out, 0);
    let out = crate::util::run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(&lab.main)
            .args(["results", "verify", "T_RUN_OK"]),
        b"",
    );
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(
        so.contains(&format!(
            "task: signed: good signature by alice@lab.example ({}) on commit {c}",
            alice.fingerprint()
        )),
        "{so}"
    );

    // Approved while alice was allowed; removed before the run: refused, nothing touched.
    lab.post_signed(&lab.plan_task("T_RUN_LATE", &overrides, Some(plan)), &alice);
    lab.approve("T_RUN_LATE");
    let out = lab.run(&["node", "signers", "remove", "alice@lab.example"], "");
    expect_exit!(out, 0);
    let events_before = std::fs::read_to_string(lab.events_log()).unwrap_or_default();
    let out = run("T_RUN_LATE");
    expect_exit!(out, 3);
    let se = text(&out.stderr);
    assert!(se.contains("unknown key") && se.contains("not run"), "{se}");
    assert_eq!(
        std::fs::read_to_string(lab.events_log()).unwrap_or_default(),
        events_before,
        "a radio was touched"
    );
    assert_eq!(lab.status_of("T_RUN_LATE"), "approved");
}

/// A task signed on a side branch and brought in by an unsigned merge: the
/// watched branch's version is the merge (the commit that changed the file on
/// its first-parent history), and the merge is what must be signed.
#[test]
fn a_signed_side_branch_merged_without_a_signature_is_unsigned() {
    let lab = Lab::new();
    let alice = Key::new(lab.dir.path(), "alice");
    allow(&lab, "alice@lab.example", &alice);
    require(&lab, "red");
    // A first version so the watcher has a marker (not a first start).
    lab.post_signed(&red_task(&lab, "T_BEFORE"), &alice);
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    git(&lab.main, &["checkout", "-q", "-b", "side"]);
    let signed = lab.commit_file(TASK_PATH, red_task(&lab, "T_SIDE").as_bytes(), Some(&alice));
    git(&lab.main, &["checkout", "-q", crate::util::BRANCH]);
    lab.commit_file("notes.txt", b"meanwhile\n", None);
    git(&lab.main, &["merge", "-q", "--no-ff", "--no-edit", "side"]);
    let merge = lab.main_head();
    git(&lab.main, &["push", "-q", "origin", crate::util::BRANCH]);
    watch_refuses(&lab, "T_SIDE", &merge, "is unsigned");
    let (at, reason) = rejection(&lab, "T_SIDE");
    assert_eq!(at, merge);
    assert!(!reason.contains(&signed), "{reason}");
}
