//! Review pass r1: the hostile main PC. Each test is one hole found by attacking the
//! merged product end to end (a real bare origin, a real RX checkout), failing
//! before its fix.
use crate::util::{git, run_fed, rxnode_cmd, show, text, Lab, BRANCH};

const RED: [(&str, &str); 3] = [
    ("HARDWARE_ACCESS", "YES"),
    ("RF_TX", "YES"),
    ("RISK_LEVEL", "RED"),
];

/// SoapySDR parses device args into a map where the *last* `key=value` wins, but
/// the TX device check read the *first*: `remote=<allowed>,remote=<other>` passed
/// the `tx.allowed_remote_servers` check and then transmitted on the other server,
/// and `driver=rxsim,driver=remote` (no `remote=`) passed as a local radio and then
/// let SoapyRemote transmit on whatever server it discovers. A TX device with a key
/// given twice is refused by the policy (exit 3) before the phrase is asked.
#[test]
fn tx_device_with_a_repeated_key_is_refused() {
    let lab = Lab::new();
    std::fs::create_dir_all(lab.local()).unwrap();
    let devices = [
        (
            "TWO_REMOTES",
            "driver=remote,remote=tcp://127.0.0.1:1,remote=tcp://192.0.2.7:55132,remote:driver=rxsim",
        ),
        ("TWO_DRIVERS", "driver=rxsim,driver=remote,remote:driver=rxsim"),
        ("TWO_DRIVERS_SP", "driver=rxsim, driver =remote"),
    ];
    for (id, dev) in devices {
        let plan = format!(
            r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
            "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}}]}}"#
        );
        lab.post_and_approve(id, &RED, Some(&plan));
        std::fs::write(
            lab.local().join("rxnode-policy.json"),
            r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10,
                "max_duration_s": 3, "allowed_remote_servers": ["tcp://127.0.0.1:1"]}}"#,
        )
        .unwrap();
        let out = lab.run(&["--sim", "run", id], "AUTHORIZE RF TX\n");
        expect_exit!(out, 3, "{dev}");
        let se = text(&out.stderr);
        assert!(se.contains("more than once"), "{dev}: {}", show(&out));
        assert_eq!(lab.count_events("tx_started", id), 0, "{dev}");
    }
}

/// Planted text on `rx-node` with a bidi override (U+202E) reached the main PC's
/// terminal raw in `rxnode results` and `results show`: the task validator refuses
/// such characters because they make the screen show something else, but the
/// result reader only escaped control characters.
#[test]
fn results_never_print_bidi_or_zero_width_characters_raw() {
    let lab = Lab::new();
    let hand = lab.dir.path().join("hand");
    std::fs::create_dir_all(&hand).unwrap();
    git(&hand, &["init", "-q"]);
    git(&hand, &["checkout", "-q", "--orphan", "rx-node"]);
    let d = hand.join("rx-results/BIDI_1/LAB-A");
    std::fs::create_dir_all(&d).unwrap();
    let title = "Clock PASS\u{202E}LIAF\u{200B}";
    let j = serde_json::json!({
        "schema_version": 1, "task_id": "BIDI_1", "task_title": title,
        "status": "FAIL", "node": {"name": "LAB-A"},
        "timeline": {"completed_at": "2026-01-01T00:00:00+00:00"}
    });
    std::fs::write(d.join("RX_RESULT.json"), j.to_string()).unwrap();
    std::fs::write(d.join("RX_RESULT.md"), format!("# {title}\n")).unwrap();
    std::fs::write(d.join("LOG_META.json"), "{}").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "plant"]);
    git(
        &hand,
        &["push", "-q", lab.origin.to_str().unwrap(), "rx-node"],
    );
    let _ = BRANCH;
    for args in [
        vec!["results"],
        vec!["results", "show", "BIDI_1"],
        vec!["results", "verify", "BIDI_1"],
    ] {
        let out = crate::util::rxnode_bin()
            .arg("--repo")
            .arg(&lab.main)
            .args(&args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .unwrap();
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains("panicked"), "{args:?}: {}", show(&out));
        assert!(
            !all.contains('\u{202E}') && !all.contains('\u{200B}'),
            "{args:?}: raw bidi/zero-width reached the terminal: {}",
            show(&out)
        );
        assert!(all.contains("BIDI_1"), "{args:?}: {}", show(&out));
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Single-use RED against a replaced ledger: the evidence was whichever of the
/// `.local/` ledger and its mirror in the Git directory held *more lines*, so a
/// `.local/` put back to its state right after the approval (what a committed
/// `.local/` leaves in the work tree after a pull and the operator's `git rm -r
/// --cached .local`), its ledger padded past the mirror's length, won over the
/// mirror that recorded the run: the completed RED task was authorized and
/// transmitted a second time. A finished run in either ledger now refuses.
#[test]
fn a_padded_old_ledger_does_not_hide_a_finished_red_run() {
    let lab = Lab::new();
    let events = lab.dir.path().join("rxsim-events.log");
    let id = "RED_TWICE_1";
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TX1", "frequency_hz": 433.92e6,
        "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.2}]}"#;
    lab.post_and_approve(id, &RED, Some(plan));
    let policy = r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 2}}"#;
    std::fs::write(lab.local().join("rxnode-policy.json"), policy).unwrap();
    let saved = lab.dir.path().join("saved-local");
    copy_dir(&lab.local(), &saved);

    let run = |lab: &Lab| {
        run_fed(
            lab.rxnode()
                .args(["--sim", "run", id])
                .env("RXSIM_EVENT_LOG", &events)
                .env("NO_COLOR", "1"),
            b"AUTHORIZE RF TX\n",
        )
    };
    let tx_activations = || {
        std::fs::read_to_string(&events)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(" activateStream TX "))
            .count()
    };
    let out = run(&lab);
    expect_exit!(out, 0);
    assert_eq!(lab.status_of(id), "completed");
    let first = tx_activations();
    assert_eq!(first, 1, "{}", std::fs::read_to_string(&events).unwrap());

    // `.local/` as it was after the approval, the ledger padded past the mirror.
    std::fs::remove_dir_all(lab.local()).unwrap();
    copy_dir(&saved, &lab.local());
    let ledger = lab.local().join("rx_agent_ledger.jsonl");
    let old = std::fs::read_to_string(&ledger).unwrap();
    let approved = old
        .lines()
        .find(|l| l.contains("\"approved\""))
        .unwrap()
        .to_owned();
    let mut padded = old.clone();
    for _ in 0..50 {
        padded.push_str(&approved);
        padded.push('\n');
    }
    std::fs::write(&ledger, padded).unwrap();

    let out = run(&lab);
    assert_eq!(tx_activations(), first, "transmitted again: {}", show(&out));
    expect_exit!(out, 3);
    assert!(text(&out.stderr).contains("already ran"), "{}", show(&out));
}

/// An approval planted with a padded ledger: the approval check asked the longer
/// of the two ledgers, so a `.local/` copied from another checkout where task X
/// was approved (state, outbox and ledger, the ledger padded past this node's
/// mirror) made `run X` execute a task this node's operator never approved. With
/// a mirror in the Git directory, the approval must be in the mirror.
#[test]
fn a_planted_approval_with_a_padded_ledger_does_not_run() {
    let lab = Lab::new();
    // This node's own history: one task approved, so its mirror exists.
    let base = lab.main_head();
    lab.post(&Lab::task("OWN_1", &base, &[]));
    let out = lab.watch_once("A\n");
    expect_exit!(out, 0);
    // Task X approved on another checkout of the same origin.
    let base = lab.main_head();
    lab.post(&Lab::task("PLANTED_1", &base, &[]));
    let other = lab.dir.path().join("other-rx");
    git(
        lab.dir.path(),
        &[
            "clone",
            "-q",
            "-b",
            BRANCH,
            lab.origin.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let out = run_fed(
        rxnode_cmd()
            .arg("--repo")
            .arg(&other)
            .args(["watch", "--once", "--interval", "0.2"]),
        b"A\n",
    );
    expect_exit!(out, 0);
    git(&lab.rx, &["fetch", "-q", "origin"]);

    std::fs::remove_dir_all(lab.local()).unwrap();
    copy_dir(&other.join(".local"), &lab.local());
    let _ = std::fs::remove_file(lab.local().join("rxnode.lock"));
    let ledger = lab.local().join("rx_agent_ledger.jsonl");
    let mut l = std::fs::read_to_string(&ledger).unwrap();
    let first = l.lines().next().unwrap().to_owned();
    for _ in 0..50 {
        l.push_str(&first);
        l.push('\n');
    }
    std::fs::write(&ledger, l).unwrap();

    let out = lab.run(&["run", "PLANTED_1"], "");
    expect_exit!(out, 3);
    assert_ne!(lab.status_of("PLANTED_1"), "completed", "{}", show(&out));
}

/// Gain elements that cancel out: the RX gain bound compared the *sum* of the
/// element gains with `rx.max_gain_db`, so a negative element offset the others
/// (`{"LNA": 32, "VGA": 30, "TIA": -30}` summed to 32 under a 40 dB bound), while a
/// real radio clamps each element to its own range (a VGA or TIA never goes below
/// 0 dB on most front ends) and runs at 62 dB. Negative elements now never lower
/// the total the bound is checked against.
#[test]
fn negative_gain_elements_do_not_offset_the_rx_gain_bound() {
    let lab = Lab::new();
    let id = "GAIN_OFFSET_1";
    let plan = r#"{"steps": [{"op": "rx_capture", "device": "driver=rxsim,serial=G1",
        "frequency_hz": 100e6, "sample_rate_hz": 1e6, "duration_s": 0.2,
        "gain_db": {"LNA": 32, "VGA": 30, "TIA": -30}}]}"#;
    lab.post_and_approve(
        id,
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_RX", "YES"),
            ("RISK_LEVEL", "YELLOW"),
        ],
        Some(plan),
    );
    std::fs::write(
        lab.local().join("rxnode-policy.json"),
        r#"{"rx": {"max_duration_s": 5, "max_gain_db": 40}}"#,
    )
    .unwrap();
    let out = lab.run(&["--sim", "run", id], "");
    let all = show(&out);
    // A step the policy refuses is BLOCKED (exit 3, the same refusal as from
    // `capture`), by the bound itself, before the radio is asked.
    assert!(
        all.contains("gain_db total 62 exceeds rx.max_gain_db 40"),
        "{all}"
    );
    expect_exit!(out, 3, "{all}");
}

/// A lab whose rx-node holds task HALF_1 of node LAB-B as `RX_RESULT.json` alone
/// (a result that landed in part).
fn half_published() -> Lab {
    let lab = Lab::new();
    let hand = lab.dir.path().join("hand");
    std::fs::create_dir_all(&hand).unwrap();
    git(&hand, &["init", "-q"]);
    git(&hand, &["checkout", "-q", "--orphan", "rx-node"]);
    let d = hand.join("rx-results/HALF_1/LAB-B");
    std::fs::create_dir_all(&d).unwrap();
    let j = serde_json::json!({
        "schema_version": 1, "task_id": "HALF_1", "task_title": "half published",
        "status": "PASS", "risk_level": "YELLOW", "node": {"name": "LAB-B"},
        "timeline": {"completed_at": "2026-12-01T09:00:00+00:00"},
        "checks": [{"name": "clkin", "status": "PASS"}]
    });
    std::fs::write(d.join("RX_RESULT.json"), j.to_string()).unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "rx-results: HALF_1"]);
    git(
        &hand,
        &["push", "-q", lab.origin.to_str().unwrap(), "rx-node"],
    );
    lab
}

/// A result whose Markdown never landed (a partial push: `RX_RESULT.json` alone)
/// was listed as "does not validate (1 problem(s))" though `results verify` names
/// five: the listing made the count up. Its row now names the missing file and no
/// count, in the JSON and the text.
#[test]
fn results_list_names_the_missing_file_of_a_partial_result_and_no_made_up_count() {
    let lab = half_published();
    let mut c = crate::util::rxnode_bin();
    let out = c
        .arg("--repo")
        .arg(&lab.main)
        .args(["--json", "results"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = v["results"][0]["problems"].to_string();
    assert!(
        problems.contains("does not validate (RX_RESULT.md is missing)"),
        "{v:#}"
    );
    assert!(!problems.contains("problem(s)"), "{v:#}");
}

/// `results show` of a result that landed in part (`RX_RESULT.json` alone)
/// failed with exit 1 ("RX_RESULT.md is missing"), `--json` too, though the JSON
/// is there and the listing and `--plot` read it. It now prints the JSON under
/// `--json`, and for a person the verdict line, the problems and why there is
/// no Markdown (exit 0).
#[test]
fn results_show_of_a_partial_result_prints_its_json_and_names_the_missing_markdown() {
    let lab = half_published();
    let show_it = |json: bool| {
        let mut c = crate::util::rxnode_bin();
        c.arg("--repo").arg(&lab.main);
        if json {
            c.arg("--json");
        }
        c.args(["results", "show", "HALF_1"])
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .unwrap()
    };
    let out = show_it(true);
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["task_id"], "HALF_1", "{v:#}");
    let out = show_it(false);
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(so.starts_with("HALF_1 from LAB-B: PASS\n"), "{so}");
    assert!(so.contains("! the published files do not verify"), "{so}");
    assert!(
        so.contains("RX_RESULT.md is missing: there is no Markdown to show"),
        "{so}"
    );
}

/// A result planted on `rx-node` that fails the result validator (status PASS
/// over a FAIL check, required fields missing) was listed by `rxnode results` as a
/// plain PASS row with no mark: only `results verify` said otherwise. The list now
/// flags every row whose result does not validate.
#[test]
fn results_list_flags_a_planted_result_that_does_not_validate() {
    let lab = Lab::new();
    let hand = lab.dir.path().join("hand");
    std::fs::create_dir_all(&hand).unwrap();
    git(&hand, &["init", "-q"]);
    git(&hand, &["checkout", "-q", "--orphan", "rx-node"]);
    let d = hand.join("rx-results/FAKE_1/LAB-B");
    std::fs::create_dir_all(&d).unwrap();
    let j = serde_json::json!({
        "schema_version": 1, "task_id": "FAKE_1", "task_title": "CLKIN all good",
        "status": "PASS", "risk_level": "YELLOW", "node": {"name": "LAB-B"},
        "timeline": {"completed_at": "2026-12-01T09:00:00+00:00"},
        "checks": [{"name": "clkin", "status": "FAIL"}]
    });
    std::fs::write(d.join("RX_RESULT.json"), j.to_string()).unwrap();
    std::fs::write(d.join("RX_RESULT.md"), "# all good\n").unwrap();
    std::fs::write(d.join("LOG_META.json"), "{}").unwrap();
    git(&hand, &["add", "-A"]);
    git(&hand, &["commit", "-q", "-m", "rx-results: FAKE_1"]);
    git(
        &hand,
        &["push", "-q", lab.origin.to_str().unwrap(), "rx-node"],
    );
    let results = |json: bool| {
        let mut c = crate::util::rxnode_bin();
        c.arg("--repo").arg(&lab.main);
        if json {
            c.arg("--json");
        }
        c.arg("results")
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .unwrap()
    };
    let out = results(true);
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["results"][0];
    assert_eq!(row["task_id"], "FAKE_1", "{v:#}");
    assert!(
        row["problems"].to_string().contains("does not validate"),
        "{v:#}"
    );
    let out = results(false);
    let so = text(&out.stdout);
    let line = so.lines().position(|l| l.contains("FAKE_1")).expect("row");
    assert!(
        so.lines()
            .nth(line + 1)
            .is_some_and(|l| l.contains("! does not validate")),
        "{so}"
    );
}

/// A receive-only task decided which host the node connects to: a YELLOW capture on
/// `remote=tcp://HOST:PORT` (a SoapyRemote server of the branch's choosing) or a
/// network radio's `addr=` was "within policy" and the run reached that host. Now the
/// step is BLOCKED (exit 3) naming `rx.allowed_remote_servers`, and the host is not
/// contacted; listed, the same server is no longer the policy's block.
#[test]
fn a_receive_task_reaches_only_hosts_the_node_policy_lists() {
    use std::net::TcpListener;
    let attacker = TcpListener::bind("127.0.0.1:0").unwrap();
    attacker.set_nonblocking(true).unwrap();
    let url = format!("tcp://127.0.0.1:{}", attacker.local_addr().unwrap().port());
    let yellow = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "YELLOW"),
    ];
    let lab = Lab::new();
    std::fs::create_dir_all(lab.local()).unwrap();
    let devices = [
        (
            "REACH_REMOTE",
            format!("driver=remote,remote={url},remote:driver=rxsim"),
        ),
        ("REACH_ADDR", "driver=rxsim,addr=192.0.2.7".to_owned()),
        ("REACH_LAN", "driver=remote,remote:driver=rxsim".to_owned()),
    ];
    for (id, dev) in &devices {
        let plan = format!(
            r#"{{"steps": [{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100e6,
            "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": 0.2}}]}}"#
        );
        lab.post_and_approve(id, &yellow, Some(&plan));
        std::fs::write(
            lab.local().join("rxnode-policy.json"),
            r#"{"rx": {"max_duration_s": 10}}"#,
        )
        .unwrap();
        let out = lab.run(&["run", id], "");
        expect_exit!(out, 3, "{dev}");
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            all.contains("BLOCKED") && all.contains("blocked by the node's policy"),
            "{dev}: {}",
            show(&out)
        );
        let want = if *id == "REACH_LAN" {
            "search the LAN"
        } else {
            "rx.allowed_remote_servers"
        };
        assert!(all.contains(want), "{dev}: {}", show(&out));
        assert!(
            attacker.accept().is_err(),
            "{dev}: the unlisted host was contacted"
        );
    }
    // Listed: the policy no longer blocks the step (the server there is not a real one).
    let plan = format!(
        r#"{{"steps": [{{"op": "rx_capture", "device": "{}", "frequency_hz": 100e6,
        "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": 0.2}}]}}"#,
        devices[0].1
    );
    lab.post_and_approve("REACH_LISTED", &yellow, Some(&plan));
    std::fs::write(
        lab.local().join("rxnode-policy.json"),
        format!(r#"{{"rx": {{"max_duration_s": 10, "allowed_remote_servers": ["{url}"]}}}}"#),
    )
    .unwrap();
    let out = lab.run(&["run", "REACH_LISTED"], "");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !all.contains("blocked by the node's policy"),
        "{}",
        show(&out)
    );
}

/// A task's `inventory` step enumerated every SoapySDR module with no args, so
/// SoapyRemote searched the LAN for servers (an SSDP M-SEARCH to 239.255.255.250:1900,
/// mDNS through avahi) and connected to whichever answered. The step now lists this
/// node's radios only: nothing reaches the SSDP group during the run.
///
/// As root (the suite's loopback-only sandbox has no multicast route, so a search
/// there would fail before any socket saw it, and SoapyRemote does not search on
/// loopback) the run and an outside listener share a network namespace of their
/// own with a veth pair that routes the SSDP group, no other host on it;
/// otherwise the listener joins the group on this host's network.
#[cfg(unix)]
#[test]
fn a_task_inventory_step_does_not_search_the_lan() {
    let lab = Lab::new();
    let plan = r#"{"steps": [{"op": "inventory"}]}"#;
    lab.post_and_approve("INV_LAN", &[("HARDWARE_ACCESS", "YES")], Some(plan));
    // SAFETY: geteuid has no preconditions.
    let (out, searches) = if unsafe { libc::geteuid() } == 0 {
        run_in_a_namespace_with_ssdp(&lab, &["run", "INV_LAN"])
    } else {
        run_beside_an_ssdp_listener(&lab, &["run", "INV_LAN"])
    };
    expect_exit!(out, 0);
    assert!(
        text(&out.stdout).contains("PASS"),
        "the inventory step ran: {}",
        show(&out)
    );
    assert_eq!(searches, 0, "the task's inventory step searched the LAN");
}

/// `rxnode ARGS` (the lab's checkout) in a new network namespace whose only link
/// (a veth pair, 10.255.0.1/24) routes the SSDP group, beside a Python listener
/// on 1900/udp there;
/// its output and the number of M-SEARCH datagrams the listener saw.
#[cfg(unix)]
fn run_in_a_namespace_with_ssdp(lab: &Lab, args: &[&str]) -> (std::process::Output, usize) {
    const LISTENER: &str = r#"
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 1900))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             struct.pack("4s4s", socket.inet_aton("239.255.255.250"), socket.inet_aton("10.255.0.1")))
f = open(sys.argv[1], "w")
f.write("ready\n"); f.flush()
while True:
    d, _ = s.recvfrom(4096)
    f.write(d.split(b"\r\n")[0].decode("latin-1") + "\n"); f.flush()
"#;
    const SCRIPT: &str = r#"ip link set lo up && ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up && ip addr add 10.255.0.1/24 dev v0 && ip route add 239.255.255.250/32 dev v0 || exit 97
heard=$1; shift
python3 -c "$LISTENER" "$heard" & l=$!
i=0; while ! grep -q ready "$heard" 2>/dev/null; do i=$((i+1)); [ $i -gt 100 ] && exit 98; sleep 0.05; done
"$@"; rc=$?
sleep 0.3; kill $l; wait $l 2>/dev/null
exit $rc"#;
    let heard = lab.dir.path().join("ssdp-heard.txt");
    let inner = lab.rxnode();
    let mut c = std::process::Command::new("unshare");
    c.args(["--net", "--", "sh", "-c", SCRIPT, "sh"])
        .arg(&heard)
        .arg(inner.get_program())
        .args(inner.get_args())
        .args(args)
        .env("LISTENER", LISTENER)
        .stdin(std::process::Stdio::null());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().expect("unshare");
    assert!(
        !matches!(out.status.code(), Some(97 | 98)),
        "the namespace with the SSDP route or its listener did not start ({:?}): {}",
        out.status,
        show(&out)
    );
    let heard = std::fs::read_to_string(&heard).unwrap_or_default();
    let searches = heard.lines().filter(|l| l.starts_with("M-SEARCH")).count();
    (out, searches)
}

/// `rxnode ARGS` on this host's network beside a listener that joined the SSDP
/// group; its output and the number of M-SEARCH datagrams heard.
#[cfg(unix)]
fn run_beside_an_ssdp_listener(lab: &Lab, args: &[&str]) -> (std::process::Output, usize) {
    use std::net::Ipv4Addr;
    let group = Ipv4Addr::new(239, 255, 255, 250);
    let ssdp = ssdp_listener();
    ssdp.join_multicast_v4(&group, &Ipv4Addr::UNSPECIFIED)
        .expect("join the SSDP group (this host needs a multicast route)");
    ssdp.set_nonblocking(true).unwrap();
    let out = lab.run(args, "");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut buf = [0u8; 2048];
    let mut searches = 0;
    while let Ok((n, _)) = ssdp.recv_from(&mut buf) {
        if buf[..n].starts_with(b"M-SEARCH") {
            searches += 1;
        }
    }
    (out, searches)
}

/// A UDP socket on the SSDP port, shared (`SO_REUSEADDR`) as SoapyRemote shares it:
/// an exclusive one would make SoapyRemote's own bind fail and it send nothing.
#[cfg(unix)]
fn ssdp_listener() -> std::net::UdpSocket {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a descriptor this function owns; the address is
    // a zeroed sockaddr_in filled field by field.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let one: libc::c_int = 1;
        let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let on = (&one as *const libc::c_int).cast();
        assert_eq!(
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, on, len),
            0
        );
        let mut a: libc::sockaddr_in = std::mem::zeroed();
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_port = 1900u16.to_be();
        let r = libc::bind(
            fd,
            (&a as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(
            r,
            0,
            "bind the SSDP port: {}",
            std::io::Error::last_os_error()
        );
        std::net::UdpSocket::from_raw_fd(fd)
    }
}
