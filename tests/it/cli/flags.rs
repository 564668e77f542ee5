//! The flag language: short flags and SI suffixes, one spelling across commands,
//! statuses in any case, durations with units, and the flags a mode needs.
use super::*;

/// Capture and sweep speak as soapy_power does: `-d` device, `-f` frequency, `-r`
/// rate, `-g` gain, `-t` duration (dwell for a sweep), `-B` bin width, and numbers
/// with SI suffixes (`100M`, `2MHz`, `10k`); `100m` (milli) is refused naming it.
#[test]
fn short_flags_and_si_suffixes_for_capture_and_sweep() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let run = |args: &[&str]| {
        rxnode(d.path())
            .args(["--sim", "--json", "--repo"])
            .arg(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "capture",
        "-d",
        "driver=rxsim",
        "-f",
        "100MHz",
        "-r",
        "2M",
        "-t",
        "0.2",
        "-g",
        "20",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(j["requested"]["frequency_hz"], 100e6, "{j}");
    assert_eq!(j["requested"]["sample_rate_hz"], 2e6, "{j}");
    assert_eq!(j["requested"]["gain_db"], 20.0, "{j}");
    assert_eq!(j["samples_processed"], 400_000, "{j}");
    let out = run(&[
        "sweep",
        "-d",
        "driver=rxsim",
        "--start-hz",
        "88M",
        "--stop-hz",
        "92M",
        "-B",
        "10k",
        "-r",
        "2M",
        "-t",
        "0.01",
        "--settle-s",
        "0.001",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(j["bin_hz"], 10e3, "{j}");
    assert_eq!(j["fft_size"], 200, "{j}");
    let out = run(&[
        "capture",
        "-d",
        "driver=rxsim",
        "-f",
        "100m",
        "-r",
        "2M",
        "-t",
        "0.2",
    ]);
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`m` is milli"), "{err}");
}

/// `watch --task-file F` without `--dry-run` is bad usage (exit 2, naming the flag it
/// needs), never a live watch that silently ignores the file.
#[test]
fn watch_task_file_needs_dry_run() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("T.md");
    std::fs::write(&f, "TASK_ID = T\n\n").unwrap();
    let out = rxnode(d.path())
        .args(["--repo"])
        .arg(d.path())
        .args(["watch", "--once", "--task-file"])
        .arg(&f)
        .output()
        .unwrap();
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--dry-run"), "{err}");
}

/// One flag language: the task source (`--remote`, `--branch`, `--task-path`) is
/// in the help of the commands that read it and nowhere else; `analyze` takes the
/// flags `capture` takes (`-f/--frequency-hz`, `-r/--sample-rate-hz`) and still
/// the spellings typed before (`--rate`, `--center-hz`), with the same result.
#[test]
fn one_flag_language_across_commands() {
    let d = tempfile::tempdir().unwrap();
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--help");
        ok(&rxnode(d.path()).args(&a).output().unwrap())
    };
    for cmd in [
        &["watch"][..],
        &["task", "new"],
        &["results"],
        &["publish"],
        &["run"],
    ] {
        let h = help(cmd);
        for flag in ["--remote", "--branch", "--task-path"] {
            assert!(h.contains(flag), "{cmd:?} --help lacks {flag}");
        }
    }
    for cmd in [
        &["capture"][..],
        &["sweep"],
        &["analyze"],
        &["clkin", "calibrate"],
        &["inventory"],
        &["health"],
        &["node", "show"],
    ] {
        let h = help(cmd);
        for flag in ["--remote", "--branch", "--task-path"] {
            assert!(!h.contains(flag), "{cmd:?} --help lists {flag}:\n{h}");
        }
    }
    let top = help(&[]);
    assert!(!top.contains("--task-path"), "{top}");
    // The task source after the command, before it, or from the environment: the
    // command's own flag wins, then the one before the command, then the environment.
    let g = tempfile::tempdir().unwrap();
    git2::Repository::init(g.path()).unwrap();
    for (args, env, want) in [
        (
            &["results", "show", "X", "--remote", "after"][..],
            None,
            "after",
        ),
        (
            &["--remote", "before", "results", "show", "X"],
            Some("env"),
            "before",
        ),
        (&["results", "show", "X"], Some("env"), "env"),
        (
            &[
                "--remote", "before", "results", "show", "X", "--remote", "after",
            ],
            Some("env"),
            "after",
        ),
    ] {
        let mut c = rxnode(g.path());
        c.args(args);
        match env {
            Some(e) => c.env("RXNODE_REMOTE", e),
            None => c.env_remove("RXNODE_REMOTE"),
        };
        let out = c.output().unwrap();
        assert!(
            text(&out.stderr).contains(&format!("no remote named \"{want}\"")),
            "{args:?}: {}",
            show(&out)
        );
    }
    let a = help(&["analyze"]);
    assert!(a.contains("-f, --frequency-hz"), "{a}");
    assert!(a.contains("-r, --sample-rate-hz"), "{a}");
    assert!(!a.contains("--center-hz") && !a.contains("--rate "), "{a}");

    let f = d.path().join("tone.cf32");
    write_tone_cf32(&f, 1e6, 100e3, 1 << 15);
    let analyze = |flags: &[&str]| {
        let out = rxnode(d.path())
            .args(["--json", "analyze"])
            .arg(&f)
            .args(flags)
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&ok(&out).into_bytes()).unwrap();
        (
            j["sample_rate_hz"].clone(),
            j["peaks"][0]["frequency_hz"].clone(),
        )
    };
    let new = analyze(&["-r", "1M", "-f", "100M"]);
    let long = analyze(&["--sample-rate-hz", "1M", "--frequency-hz", "100M"]);
    let old = analyze(&["--rate", "1M", "--center-hz", "100M"]);
    assert_eq!(new.0, 1e6, "{new:?}");
    assert!((new.1.as_f64().unwrap() - 100.1e6).abs() < 1e3, "{new:?}");
    assert_eq!(new, long);
    assert_eq!(new, old);
}

/// Statuses in any case on every command (`results --status partial`,
/// `mark-completed --status Pass`), and the values of enumerated flags are what
/// the shell completes, not file names.
#[test]
fn statuses_in_any_case_and_completions_offer_values() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    for s in ["partial", "Partial", "not-run", "NOT_RUN", "blocked"] {
        let out = rxnode(d.path())
            .args(["results", "--no-fetch", "--status", s])
            .output()
            .unwrap();
        expect_exit!(out, 0);
    }
    let out = rxnode(d.path())
        .args(["results", "--no-fetch", "--status", "good"])
        .output()
        .unwrap();
    expect_exit!(out, 2);
    assert!(
        text(&out.stderr).contains("PASS, FAIL, PARTIAL, SKIP, BLOCKED, NOT_RUN"),
        "{}",
        show(&out)
    );
    // mark-completed parses `Pass` (the refusal is about the unknown task, not the word).
    let out = rxnode(d.path())
        .args(["mark-completed", "NO_SUCH", "--status", "Pass"])
        .output()
        .unwrap();
    assert!(
        !text(&out.stderr).contains("invalid value"),
        "{}",
        show(&out)
    );
    let bash = ok(&rxnode(d.path())
        .args(["completions", "bash"])
        .output()
        .unwrap());
    for values in [
        "cf32 ci16",
        "GREEN YELLOW RED",
        "PASS FAIL PARTIAL SKIP BLOCKED NOT_RUN",
        "gsm lte",
    ] {
        assert!(bash.contains(values), "bash completions lack {values:?}");
    }
}

/// Units people type: durations with a unit wherever a duration is asked
/// (`-t 200ms`), plain numbers stay seconds; a frequency or rate typed in
/// mega without the `M` is refused with the spelling that was meant.
#[test]
fn durations_take_units_and_implausible_numbers_name_the_fix() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let run = |args: &[&str]| {
        rxnode(d.path())
            .args(["--sim", "--json", "--repo"])
            .arg(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    let cap = [
        "capture",
        "-d",
        "driver=rxsim",
        "-f",
        "100M",
        "-r",
        "2M",
        "-t",
    ];
    for (t, samples) in [("200ms", 400_000), ("0.1", 200_000), ("0.05s", 100_000)] {
        let mut a = cap.to_vec();
        a.push(t);
        let out = run(&a);
        let j: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{t}: {e}: {}", show(&out)));
        assert_eq!(j["samples_processed"], samples, "{t}: {j}");
    }
    for (args, want) in [
        (&["-f", "100", "-r", "2M", "-t", "1"][..], "--frequency-hz <FREQUENCY_HZ>': 100 Hz is implausible (below 1 kHz): did you mean 100M (100 MHz)?"),
        (&["-f", "100M", "-r", "2", "-t", "1"], "2 S/s is implausible (below 1 kS/s): did you mean 2M (2 MS/s)?"),
        (&["-f", "100M", "-r", "2M", "-t", "2x"], "unknown unit \"x\" (use ms, s, m, h or d"),
    ] {
        let mut a = vec!["capture", "-d", "driver=rxsim"];
        a.extend_from_slice(args);
        let out = rxnode(d.path()).args(&a).output().unwrap();
        expect_exit!(out, 2);
        assert!(text(&out.stderr).contains(want), "{args:?}: {}", show(&out));
    }
    let out = rxnode(d.path())
        .args(["watch", "--interval", "1h", "--help"])
        .output()
        .unwrap();
    expect_exit!(out, 0);
}

/// A radio operation's length typed on the command line has the range a plan's
/// durations have: `-t 1e300` and a 20-day dwell are refused by the flag's parser
/// (exit 2, the flag and the range named, printed compactly) before any radio is
/// opened; the interval between sweep passes is not bounded so.
#[test]
fn durations_of_radio_operations_are_bounded_as_in_plans() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let run = |args: &[&str]| {
        rxnode(d.path())
            .args(["--sim", "--repo"])
            .arg(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    let capture = ["capture", "-d", "driver=rxsim", "-f", "100M", "-r", "1M"];
    for (flag, value, shown) in [("-t", "1e300", "1e300 s"), ("-t", "20d", "1728000 s")] {
        let mut args = capture.to_vec();
        args.extend([flag, value]);
        let out = run(&args);
        expect_exit!(out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--duration-s"), "{err}");
        assert!(
            err.contains(&format!(
                "{shown} is outside the plausible range 0 … 1000000 s"
            )),
            "{err}"
        );
        assert!(err.len() < 400, "{err}");
    }
    let sweep = [
        "sweep",
        "-d",
        "driver=rxsim",
        "--start-hz",
        "88M",
        "--stop-hz",
        "92M",
        "-B",
        "10k",
        "-r",
        "2M",
        "--dwell-s",
        "20d",
    ];
    let out = run(&sweep);
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--dwell-s") && err.contains("plausible range"),
        "{err}"
    );
    assert!(
        !d.path().join("rxsim-events.log").exists()
            || std::fs::read_to_string(d.path().join("rxsim-events.log"))
                .unwrap_or_default()
                .is_empty(),
        "a radio was opened"
    );
}

/// Every number typed as a flag or given in a plan that is absurd (`1e300`) is
/// refused naming it, printed compactly — never hundreds of digits: the ppm,
/// SNR, CLKIN tolerance and level, bandwidth, overlap, crop and bin flags, and a
/// plan's `ppm`, `bandwidth_hz` and `clkin.expected_dbfs` (which `validate` let
/// through: the node's policy refused them later with 300 digits).
#[test]
fn absurd_numbers_in_flags_and_plans_are_refused_compactly() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let run = |args: &[&str]| {
        rxnode(d.path())
            .args(["--sim", "--repo"])
            .arg(d.path())
            .args(args)
            .output()
            .unwrap()
    };
    std::fs::write(d.path().join("x.cf32"), vec![0u8; 8 * 4096]).unwrap();
    let x = d.path().join("x.cf32");
    let x = x.to_str().unwrap();
    let capture = [
        "capture",
        "-d",
        "driver=rxsim",
        "-f",
        "100M",
        "-r",
        "1M",
        "-t",
        "0.1",
    ];
    let analyze = ["analyze", x, "-r", "2M", "-f", "100M"];
    let sweep = [
        "sweep",
        "-d",
        "driver=rxsim",
        "--start-hz",
        "88M",
        "--stop-hz",
        "92M",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        ([&capture[..], &["-p", "1e300"]].concat(), "--ppm"),
        (
            [&capture[..], &["--bandwidth-hz", "1e300"]].concat(),
            "--bandwidth-hz",
        ),
        (
            [&analyze[..], &["--min-snr-db", "1e300"]].concat(),
            "--min-snr-db",
        ),
        (
            [
                &analyze[..],
                &[
                    "--clkin-tone-hz",
                    "100.1M",
                    "--clkin-tolerance-ppm",
                    "1e300",
                ],
            ]
            .concat(),
            "--clkin-tolerance-ppm",
        ),
        (
            [
                &analyze[..],
                &[
                    "--clkin-tone-hz",
                    "100.1M",
                    "--clkin-expected-dbfs",
                    "-1e300",
                ],
            ]
            .concat(),
            "--clkin-expected-dbfs",
        ),
        (
            [&analyze[..], &["--overlap", "1e300"]].concat(),
            "--overlap",
        ),
        (
            [&sweep[..], &["-B", "10k", "--crop", "1e300"]].concat(),
            "--crop",
        ),
        ([&sweep[..], &["-B", "1e300"]].concat(), "--bin-hz"),
        (
            [&sweep[..], &["-B", "10k", "-i", "1", "-e", "1e300"]].concat(),
            "--total-s",
        ),
    ];
    for (args, flag) in cases {
        let out = run(&args);
        expect_exit!(out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(flag) && err.contains("1e300"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("0000000000"), "{args:?}: {err}");
    }
    let plan = r#"{"steps":[{"op":"rx_capture","device":"driver=rxsim","frequency_hz":100e6,
        "sample_rate_hz":2e6,"duration_s":1,"bandwidth_hz":1e300,"ppm":1e300,"min_snr_db":1e300,
        "clkin":{"tone_hz":100.1e6,"tolerance_ppm":0.5,"expected_dbfs":-1e300}}]}"#;
    let task = format!(
        "TASK_ID = T1\nTASK_TITLE = t\nSOURCE_BRANCH = video-development\nEXPECTED_HEAD = \
         0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\nHARDWARE_ACCESS = YES\n\
         RF_RX = YES\nRF_TX = NO\nALLOW_COMMIT = NO\nALLOW_PUSH = RX_RESULT_ONLY\n\n# t\n\n\
         ```rx-plan\n{plan}\n```\n"
    );
    std::fs::write(d.path().join("t.md"), task).unwrap();
    let out = run(&["validate", d.path().join("t.md").to_str().unwrap()]);
    expect_exit!(out, 2);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for field in [
        "bandwidth_hz:",
        "ppm:",
        "min_snr_db:",
        "clkin.expected_dbfs:",
    ] {
        assert!(said.contains(field), "{field} not named: {said}");
    }
    assert!(!said.contains("0000000000"), "{said}");
}

/// A negative number given to any flag reaches that flag's own check, which names
/// the flag, the value and what is allowed (a gain the radio refuses, a duration,
/// a frequency, an SNR floor): clap refused each as "unexpected argument '-5'
/// found" with a tip (`-- -5`) that does not work. A flag after a forgotten value
/// stays a flag.
#[test]
fn a_negative_number_reaches_the_flags_own_check() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let base = ["--sim", "capture", "-d", "driver=rxsim"];
    for (args, says) in [
        (
            &["-f", "100M", "-r", "1M", "-t", "0.1", "-g", "-5"][..],
            "gain_db -5 is not supported",
        ),
        (
            &["-f", "100M", "-r", "1M", "-t", "-1", "-g", "20"][..],
            "'--duration-s",
        ),
        (
            &["-f", "-5", "-r", "1M", "-t", "0.1", "-g", "20"][..],
            "--frequency-hz -5",
        ),
        (
            &[
                "-f",
                "100M",
                "-r",
                "1M",
                "-t",
                "0.1",
                "-g",
                "20",
                "--min-snr-db",
                "-3",
            ][..],
            "--min-snr-db -3",
        ),
        (
            &["-f", "-r", "1M", "-t", "0.1", "-g", "20"][..],
            "a value is required for '--frequency-hz",
        ),
    ] {
        let out = rxnode(d.path())
            .arg("--repo")
            .arg(d.path())
            .args(base)
            .args(args)
            .output()
            .unwrap();
        expect_exit!(out, 2, "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}
