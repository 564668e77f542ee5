//! The main PC against a hostile peer's result and odd files: a picture axis past
//! f64 or two pictures of one name are refused naming the field (and nothing
//! hangs), `results show --plot DIR` / `results report --html DIR` never replace
//! a file silently, `validate-result` never reads a device or a FIFO, and a
//! missing local origin is named as such by every command that fetches.
use super::*;
use std::time::Duration;

/// `rxnode --repo DIR ARGS`, killed and failed when it has not finished within
/// `limit`: a regression that hangs fails the test instead of hanging it.
fn rxnode_within(dir: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = rxnode_cmd()
        .arg("--repo")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rxnode runs");
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().expect("its output"),
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("rxnode {args:?} still running after {limit:?}: killed");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("rxnode {args:?}: {e}"),
        }
    }
}

/// A lab where LAB-A ran one CLKIN capture on the simulated radio and published it.
fn published(id: &str) -> Lab {
    let lab = Lab::new();
    let a = lab.node("LAB-A");
    let plan = lab.plan_file("clkin.json", CLKIN_PLAN);
    lab.post(id, &["--rx", "--plan", &plan]);
    approve(&a);
    expect_exit!(rxnode(&a, &["--sim", "run", id], ""), 0);
    expect_exit!(publish(&a, id), 0);
    lab
}

/// A peer rewrites the published `RX_RESULT.json` of `id` with `edit` and pushes
/// `rx-node`; returns the file in the peer's clone.
fn peer_edit(lab: &Lab, id: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let hand = lab.root.path().join("peer");
    if !hand.exists() {
        lab.clone_rx_node("peer");
    } else {
        git(&hand, &["pull", "-q", "--rebase"]);
    }
    let file = hand.join(format!("rx-results/{id}/LAB-A/RX_RESULT.json"));
    let mut v: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&file, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    git(&hand, &["commit", "-qam", "peer"]);
    git(&hand, &["push", "-q", "origin", "rx-node"]);
    file
}

/// A peer's picture axis that overflows f64 (start 1e308, step 1e307) is refused
/// naming the field by `validate-result`, and `results show --plot` and `results
/// report --html` name it and draw nothing, promptly (they used to loop for
/// ever inside the chart library), saying no picture was written (not that the
/// result has none). Two spectra of one index are refused, naming it.
#[test]
fn a_peer_picture_axis_past_f64_is_refused_and_never_hangs() {
    let lab = published("AXIS_1");
    let file = peer_edit(&lab, "AXIS_1", |v| {
        let s = &mut v["pictures"]["spectra"][0];
        s["start_hz"] = json!(1e308);
        s["step_hz"] = json!(1e307);
    });
    let field = "pictures.spectra[0].start_hz: 1e308 is not a frequency axis start";
    let out = rxnode_within(
        &lab.main,
        &["validate-result", file.to_str().unwrap()],
        Duration::from_secs(60),
    );
    expect_exit!(out, 2);
    assert!(show(&out).contains(field), "{}", show(&out));

    let plots = lab.root.path().join("plots");
    let out = rxnode_within(
        &lab.main,
        &[
            "results",
            "show",
            "AXIS_1",
            "--plot",
            plots.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    expect_exit!(out, 2);
    assert!(stdout(&out).contains(field), "{}", show(&out));
    // The result has a picture; none was written (never "no pictures in this result").
    assert!(
        stdout(&out).starts_with("rx-results/AXIS_1/LAB-A: no picture written\n"),
        "{}",
        show(&out)
    );
    assert!(!plots.join("SPECTRUM_1.png").exists());

    let site = lab.root.path().join("site");
    let out = rxnode_within(
        &lab.main,
        &["results", "report", "--html", site.to_str().unwrap()],
        Duration::from_secs(120),
    );
    expect_exit!(out, 0);
    let page = std::fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "html") && !p.ends_with("index.html"))
        .expect("the result's page");
    // Without the break opportunities (`<wbr>`) the page offers in long words.
    let html = std::fs::read_to_string(&page).unwrap().replace("<wbr>", "");
    assert!(html.contains(field), "{html}");

    // The same spectrum twice: one file, two pictures.
    let file = peer_edit(&lab, "AXIS_1", |v| {
        let s = &mut v["pictures"]["spectra"];
        s[0]["start_hz"] = json!(99.5e6);
        s[0]["step_hz"] = json!(1e3);
        let again = s[0].clone();
        s.as_array_mut().unwrap().push(again);
    });
    let dup = "pictures.spectra[1]: capture index 1 again (pictures.spectra[0] is drawn as SPECTRUM_1.png already)";
    let out = rxnode(&lab.main, &["validate-result", file.to_str().unwrap()], "");
    expect_exit!(out, 2);
    assert!(show(&out).contains(dup), "{}", show(&out));
    let plots = lab.root.path().join("plots-dup");
    let out = rxnode(
        &lab.main,
        &[
            "results",
            "show",
            "AXIS_1",
            "--plot",
            plots.to_str().unwrap(),
        ],
        "",
    );
    assert!(stdout(&out).contains(dup), "{}", show(&out));
    assert!(!plots.join("SPECTRUM_1.png").exists());
}

/// No output is overwritten silently: a picture or a page already in the folder
/// is refused (exit 2) naming it, kept byte for byte, and nothing else is
/// written; `--force` replaces it; a second report into the same folder is
/// refused the same way.
#[test]
fn results_plot_and_report_refuse_existing_files_unless_forced() {
    let lab = published("OVW_1");
    let plots = lab.root.path().join("plots");
    std::fs::create_dir_all(&plots).unwrap();
    let mine = plots.join("SPECTRUM_1.png");
    std::fs::write(&mine, "my own picture").unwrap();
    let args = [
        "results",
        "show",
        "OVW_1",
        "--plot",
        plots.to_str().unwrap(),
    ];
    let out = rxnode(&lab.main, &args, "");
    expect_exit!(out, 2);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        said.contains(&format!(
            "--plot: {} already exists; choose another name, or --force to overwrite it",
            mine.display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read(&mine).unwrap(), b"my own picture");
    assert_eq!(std::fs::read_dir(&plots).unwrap().count(), 1);
    let mut forced = args.to_vec();
    forced.push("--force");
    let out = rxnode(&lab.main, &forced, "");
    expect_exit!(out, 0);
    assert_eq!(&std::fs::read(&mine).unwrap()[..4], b"\x89PNG");

    let site = lab.root.path().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let index = site.join("index.html");
    std::fs::write(&index, "my own page").unwrap();
    let args = ["results", "report", "--html", site.to_str().unwrap()];
    let out = rxnode(&lab.main, &args, "");
    expect_exit!(out, 2);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        said.contains(&format!(
            "--html: {} already exists; choose another name, or --force to overwrite it",
            index.display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read(&index).unwrap(), b"my own page");
    assert_eq!(std::fs::read_dir(&site).unwrap().count(), 1);
    // A fresh folder is written; the same report again is refused; forced, replaced.
    let fresh = lab.root.path().join("fresh");
    let args = ["results", "report", "--html", fresh.to_str().unwrap()];
    expect_exit!(rxnode(&lab.main, &args, ""), 0);
    let out = rxnode(&lab.main, &args, "");
    expect_exit!(out, 2);
    assert!(
        show(&out).contains("index.html already exists"),
        "{}",
        show(&out)
    );
    let mut forced = args.to_vec();
    forced.push("--force");
    expect_exit!(rxnode(&lab.main, &forced, ""), 0);
}

/// `validate-result` of a device or a FIFO is refused as not a regular file,
/// at once and without reading it (it used to read /dev/zero into memory
/// until stopped); `validate --policy` of one likewise.
#[cfg(unix)]
#[test]
fn validate_result_refuses_a_device_and_a_fifo_without_reading_them() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("result.fifo");
    let mk = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(mk.success());
    for target in [Path::new("/dev/zero"), fifo.as_path()] {
        let t = target.to_str().unwrap();
        let out = rxnode_within(d.path(), &["validate-result", t], Duration::from_secs(30));
        expect_exit!(out, 2);
        assert!(
            show(&out).contains(&format!(
                "{t}: not a regular file; a result is a file of at most 16777216 bytes"
            )),
            "{}",
            show(&out)
        );
        let task = d.path().join("task.md");
        std::fs::write(&task, "TASK_ID = X\n").unwrap();
        let out = rxnode_within(
            d.path(),
            &["validate", task.to_str().unwrap(), "--policy", t],
            Duration::from_secs(30),
        );
        expect_exit!(out, 2);
        assert!(
            show(&out).contains(&format!("policy {t}: not a regular file of at most 1 MiB")),
            "{}",
            show(&out)
        );
    }
}

/// A local origin that is gone (a moved share) is named as such by `results`,
/// `results nodes` and `results report`, as `watch` names it, never as
/// libgit2's "unsupported URL protocol".
#[test]
fn a_missing_local_origin_is_named_by_every_command_that_fetches() {
    let lab = Lab::new();
    let moved = lab.root.path().join("moved.git");
    std::fs::rename(&lab.origin, &moved).unwrap();
    let site = lab.root.path().join("site");
    let want = format!("the remote's path {} does not exist", lab.origin.display());
    for args in [
        vec!["results"],
        vec!["results", "nodes"],
        vec!["results", "report", "--html", site.to_str().unwrap()],
    ] {
        let out = rxnode(&lab.main, &args, "");
        expect_exit!(out, 1, "{args:?}");
        let said = show(&out);
        assert!(said.contains(&want), "{args:?}: {said}");
        assert!(
            !said.contains("unsupported URL protocol"),
            "{args:?}: {said}"
        );
    }
}

/// A peer's `rx-node` whose `rx-results` folder names one task folder `ids`
/// times, each naming one node folder `nodes` times (two small trees, however
/// many results they spell); returns the commit pushed.
fn push_repeated_results(lab: &Lab, ids: usize, nodes: usize) -> String {
    let peer = lab.root.path().join("repeat-peer");
    if !peer.exists() {
        git(lab.root.path(), &["init", "-q", peer.to_str().unwrap()]);
    }
    let feed = |args: &[&str], input: String| -> String {
        let out = run_fed(
            Command::new("git").current_dir(&peer).args(args),
            input.as_bytes(),
        );
        assert!(out.status.success(), "git {args:?}: {}", show(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let blob = feed(&["hash-object", "-w", "--stdin"], "{}\n".into());
    let node = feed(&["mktree"], format!("100644 blob {blob}\tRX_RESULT.json\n"));
    let list = |n: usize, tree: &str, prefix: &str| -> String {
        (1..=n)
            .map(|i| format!("040000 tree {tree}\t{prefix}{i:06}\n"))
            .collect()
    };
    let id = feed(&["mktree"], list(nodes, &node, "N"));
    let results = feed(&["mktree"], list(ids, &id, "T"));
    let root = feed(&["mktree"], format!("040000 tree {results}\trx-results\n"));
    let commit = git(&peer, &["commit-tree", &root, "-m", "peer"]);
    git(
        &peer,
        &[
            "push",
            "-q",
            "-f",
            lab.origin.to_str().unwrap(),
            &format!("{commit}:refs/heads/rx-node"),
        ],
    );
    commit
}

/// A peer pushes `rx-node` whose `rx-results` folder names one task folder 1 100
/// times and that folder one node folder 1 000 times: a few KiB that read as
/// 1.1 million results (3 000 × 3 000 took `results` 34 s and 4.5 GB, `results
/// verify` past 15 GB). Every command that reads the results branches stops at
/// the bound of results one command reads (exit 3, naming the branch) and
/// writes no page; 40 × 40 results below the bound are listed as before.
#[test]
fn a_results_folder_naming_the_same_folders_over_and_over_is_refused_at_the_read_bound() {
    let lab = Lab::new();
    push_repeated_results(&lab, 40, 40);
    let out = rxnode_within(&lab.main, &["results", "--json"], Duration::from_secs(60));
    expect_exit!(out, 0);
    let listed: Value = serde_json::from_slice(&out.stdout).expect("results --json");
    assert_eq!(listed["total"], 1600, "{listed}");
    let bomb = push_repeated_results(&lab, 1100, 1000);
    let html = lab.root.path().join("site");
    for args in [
        vec!["results"],
        vec!["results", "nodes"],
        vec!["results", "verify", "T000001", "--from", "N000001"],
        vec!["results", "report", "--html", html.to_str().unwrap()],
    ] {
        let out = rxnode_within(&lab.main, &args, Duration::from_secs(120));
        expect_exit!(out, 3);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rx-node asks for more than 20000000 tree entries and commits, or more than 1000000 results, to be read")
                && err.contains("whoever wrote it must remove it from rx-node"),
            "{args:?} ({bomb}): {err}"
        );
    }
    assert!(!html.join("index.html").exists(), "a page was written");
}

/// A peer (its clone of `rx-node` in `peer`) copies LAB-A's published result of
/// CLK_1 as the result of task `to`, `edit` changing its JSON, with every hash
/// (the Markdown's JSON hash, LOG_META) made consistent, and pushes it to `rx-node`.
fn peer_copies_result(peer: &Path, to: &str, edit: &dyn Fn(&mut Value)) {
    use sha2::{Digest, Sha256};
    let hex = |b: &[u8]| {
        Sha256::digest(b)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect::<String>()
    };
    let (from, to_dir) = (
        peer.join("rx-results/CLK_1/LAB-A"),
        peer.join(format!("rx-results/{to}/LAB-A")),
    );
    std::fs::create_dir_all(&to_dir).unwrap();
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(from.join("RX_RESULT.json")).unwrap()).unwrap();
    v["task_id"] = to.into();
    edit(&mut v);
    let js = serde_json::to_string_pretty(&v).unwrap() + "\n";
    let md = std::fs::read_to_string(from.join("RX_RESULT.md"))
        .unwrap()
        .replace("CLK_1", to);
    let (at, end) = (md.find("json_sha256=").unwrap() + 12, md.len());
    let tail_at = md[at..end].find(|c: char| !c.is_ascii_hexdigit()).unwrap() + at;
    let md = format!("{}{}{}", &md[..at], hex(js.as_bytes()), &md[tail_at..]);
    let mut meta: Value =
        serde_json::from_slice(&std::fs::read(from.join("LOG_META.json")).unwrap()).unwrap();
    meta["task_id"] = to.into();
    for e in meta["files"].as_array_mut().unwrap() {
        let body = if e["name"] == "RX_RESULT.md" {
            &md
        } else {
            &js
        };
        e["bytes"] = body.len().into();
        e["sha256"] = hex(body.as_bytes()).into();
    }
    std::fs::write(to_dir.join("RX_RESULT.json"), &js).unwrap();
    std::fs::write(to_dir.join("RX_RESULT.md"), &md).unwrap();
    std::fs::write(
        to_dir.join("LOG_META.json"),
        serde_json::to_string_pretty(&meta).unwrap() + "\n",
    )
    .unwrap();
    git(peer, &["add", "-A"]);
    git(peer, &["commit", "-qm", "peer"]);
    git(peer, &["push", "-q", "origin", "rx-node"]);
}

/// A peer files LAB-A's published result of one task as the result of TG1, a
/// task the main PC wrote for LAB-B only, with every hash (the Markdown's JSON
/// hash, LOG_META) made consistent: `results verify TG1` fails it, naming the
/// task its `source_commit` holds, and the node the task was for.
#[test]
fn a_result_filed_under_another_task_or_node_fails_verify() {
    let lab = published("CLK_1");
    lab.post("TG1", &["--node", "LAB-B"]);
    let peer = lab.clone_rx_node("peer");
    let tg1 = git(&lab.main, &["rev-parse", "HEAD"]).trim().to_owned();
    for retarget in [false, true] {
        // Pointed at the commit that holds TG1 itself, the ID agrees, the node does not.
        peer_copies_result(&peer, "TG1", &|v| {
            if retarget {
                v["source_commit"] = tg1.as_str().into();
            }
        });
        let out = rxnode(&lab.main, &["results", "verify", "TG1"], "");
        let all = show(&out);
        assert_eq!(out.status.code(), Some(2), "{all}");
        let why = if retarget {
            "is for TARGET_NODES = LAB-B, not for node LAB-A"
        } else {
            "is task CLK_1, not task TG1: the result does not answer the task it is filed under"
        };
        assert!(all.contains(why), "{all}");
        if !retarget {
            // The result it was copied from still verifies.
            expect_exit!(rxnode(&lab.main, &["results", "verify", "CLK_1"], ""), 0);
        }
    }
    // Once the peer replaced the TG1 result this PC had seen, the branch counts as
    // rewritten, and every result read from it says so (docs/protocol.md).
    let out = rxnode(&lab.main, &["results", "verify", "CLK_1"], "");
    let all = show(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("rx-results/TG1/LAB-A replaced"), "{all}");
}

/// A peer files results of tasks the main PC never posted, every hash
/// consistent: one whose `source_commit` is made up (not in the main PC's
/// clone), and one whose `source_commit` is a commit the peer made itself,
/// holding that task, pushed on a results branch of its own (so in the clone,
/// but not on the watched branch). Neither verifies (exit 2, the commit and the
/// fix named); the listing, `results nodes` and the HTML report flag them too.
#[test]
fn a_result_whose_source_commit_is_no_posted_task_is_not_verified() {
    let lab = published("CLK_1");
    let peer = lab.clone_rx_node("peer");
    peer_copies_result(&peer, "FAKE1", &|v| {
        v["source_commit"] = "1234567890abcdef1234567890abcdef12345678".into();
    });
    // The peer's own commit holding task FAKE2, on a branch the main PC fetches.
    git(&peer, &["checkout", "-q", "--orphan", "zz"]);
    git(&peer, &["rm", "-rqf", "."]);
    let task = std::fs::read_to_string(lab.main.join(TASK_PATH))
        .unwrap()
        .replace("CLK_1", "FAKE2");
    std::fs::create_dir_all(peer.join(TASK_PATH).parent().unwrap()).unwrap();
    std::fs::write(peer.join(TASK_PATH), task).unwrap();
    git(&peer, &["add", "-A"]);
    git(&peer, &["commit", "-qm", "made up"]);
    git(
        &peer,
        &["push", "-q", "origin", "HEAD:refs/heads/rx-results/ZZ"],
    );
    let made_up = git(&peer, &["rev-parse", "HEAD"]).trim().to_owned();
    git(&peer, &["checkout", "-q", "rx-node"]);
    peer_copies_result(&peer, "FAKE2", &|v| {
        v["source_commit"] = made_up.as_str().into();
    });
    for (id, why) in [
        ("FAKE1", "source_commit 1234567890abcdef1234567890abcdef12345678 is not in this clone: the result cannot be tied to a task posted on"),
        ("FAKE2", &format!("source_commit {made_up} is on no branch this clone has of")),
    ] {
        let out = rxnode(&lab.main, &["results", "verify", id], "");
        let all = show(&out);
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(all.contains(why) && all.contains("git fetch origin"), "{all}");
        assert!(!all.contains("OK   "), "{all}");
    }
    let out = rxnode(&lab.main, &["--json", "results", "--no-fetch"], "");
    expect_exit!(out, 0);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in v["results"].as_array().unwrap() {
        let tied = r["problems"].as_array().unwrap().iter().all(|p| {
            !p.as_str()
                .unwrap()
                .starts_with("not tied to a task the main PC posted")
        });
        assert_eq!(tied, r["task_id"] == "CLK_1", "{r}");
    }
    let out = rxnode(&lab.main, &["results", "nodes", "--no-fetch"], "");
    assert!(
        stdout(&out).contains("! last result FAKE"),
        "{}",
        show(&out)
    );
    let html = lab.root.path().join("site");
    let out = rxnode(
        &lab.main,
        &[
            "--json",
            "results",
            "report",
            "--no-fetch",
            "--html",
            html.to_str().unwrap(),
        ],
        "",
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["unverified"], 2, "{}", show(&out));
    // The real result still verifies.
    expect_exit!(rxnode(&lab.main, &["results", "verify", "CLK_1"], ""), 0);
}

/// A peer files an untouched copy of LAB-A's result of CLK_1 under X2 (its JSON
/// still says CLK_1): `results show X2` names the page X2 and points at
/// `results verify X2`, which fails it, never at `results verify CLK_1`, which
/// checks the genuine result and prints OK.
#[test]
fn results_show_of_a_copied_result_points_verify_at_the_folder_it_is_filed_under() {
    let lab = published("CLK_1");
    let peer = lab.clone_rx_node("peer");
    let (from, to) = (
        peer.join("rx-results/CLK_1/LAB-A"),
        peer.join("rx-results/X2/LAB-A"),
    );
    std::fs::create_dir_all(&to).unwrap();
    for n in ["RX_RESULT.json", "RX_RESULT.md", "LOG_META.json"] {
        std::fs::copy(from.join(n), to.join(n)).unwrap();
    }
    git(&peer, &["add", "-A"]);
    git(
        &peer,
        &[
            "commit",
            "-qm",
            "rx-results: X2\n\nTask: X2\nNode-Name: LAB-A",
        ],
    );
    git(&peer, &["push", "-q", "origin", "rx-node"]);
    let out = rxnode(&lab.main, &["results", "show", "X2"], "");
    expect_exit!(out, 0);
    let text = stdout(&out);
    assert!(text.starts_with("X2 from LAB-A: "), "{text}");
    assert!(
        text.contains("`rxnode results verify X2` names them") && !text.contains("verify CLK_1"),
        "{text}"
    );
    let out = rxnode(&lab.main, &["results", "verify", "X2", "--no-fetch"], "");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}
