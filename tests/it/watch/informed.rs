//! Informed approval: before `[A]` the prompt shows the task's body (escaped, cut at
//! 40 lines with where the rest is), each step in plain units with its IQ size, and
//! this node's policy verdict per step.
use super::*;

/// A body with hostile characters, a note the operator must read, and 50 more lines.
fn hostile_body() -> String {
    let mut b = String::from(
        "\n# CLKIN check\n\nPlease make sure the SG is at -30 dBm before approving.\n\
         C1 CSI \u{9b}31m, bidi \u{202e}evil, ESC \u{1b}[2J, zero width \u{200b}.\n",
    );
    for i in 1..=50 {
        b.push_str(&format!("filler line {i}\n"));
    }
    b
}

const PLAN: &str = r#"{"steps": [
  {"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 100.0e6,
   "sample_rate_hz": 2.0e6, "gain_db": 20, "duration_s": 1.0, "record_iq": true},
  {"op": "rx_capture", "device": "driver=rxsim", "frequency_hz": 433.92e6,
   "sample_rate_hz": 2.0e6, "gain_db": 20, "duration_s": 45.0},
  {"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
   "bin_hz": 10e3, "repeats": 8}
]}"#;

fn rx_task(lab: &Lab, id: &str, body: &str, plan: &str) -> String {
    let mut t = Lab::task(
        id,
        &lab.main_head(),
        &[("HARDWARE_ACCESS", "YES"), ("RF_RX", "YES")],
    );
    // Replace the default body with ours.
    let head_end = t.find("\n\n").unwrap() + 1;
    t.truncate(head_end);
    t.push_str(body);
    t.push_str(&format!("\n```rx-plan\n{plan}\n```\n"));
    t
}

/// No raw control, C1 or bidi character reaches the terminal.
fn assert_no_raw_escapes(what: &str, s: &str) {
    for c in ['\u{9b}', '\u{202e}', '\u{1b}', '\u{200b}'] {
        assert!(
            !s.contains(c),
            "{what} holds a raw {:?}:\n{s}",
            c.escape_unicode().to_string()
        );
    }
}

/// The prompt of `watch` and of `review` shows the body (escaped, cut at 40
/// lines, with the `git show` that gives the rest) before `[A]`, each step with
/// units and IQ size, and the verdict of this node's policy per step.
#[test]
fn prompt_shows_escaped_body_steps_in_units_and_policy_verdicts_before_approval() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 30}}"#);
    let commit = lab.post(&rx_task(&lab, "T_INFORMED", &hostile_body(), PLAN));
    for (what, out) in [
        ("watch", lab.watch_once("d\n")),
        ("review", lab.run(&["review", "T_INFORMED"], "d\n")),
    ] {
        let so = text(&out.stdout);
        let se = text(&out.stderr);
        expect_exit!(out, 0, "{what}");
        assert_no_raw_escapes(what, &so);
        assert_no_raw_escapes(what, &se);
        let prompt_at = so.find(PROMPT).expect("prompted");
        let before = &so[..prompt_at];
        for want in [
            "    | Please make sure the SG is at -30 dBm before approving.",
            "    | C1 CSI \\u{9b}31m, bidi \\u{202e}evil, ESC \\u{1b}[2J, zero width \\u{200b}.",
            "    | filler line 36",
            "1. rx_capture driver=rxsim: 100.000 MHz, 2.000 MS/s, gain 20 dB, 1.0 s, records IQ cf32 ≈ 16 MB",
            "2. rx_capture driver=rxsim: 433.920 MHz, 2.000 MS/s, gain 20 dB, 45.0 s, no IQ recorded",
            "→ would be BLOCKED: duration_s 45 exceeds rx.max_duration_s 30",
            "3. rx_sweep driver=rxsim: 88.000 MHz – 108.000 MHz, bin 10.000 kHz (asked 10.000 kHz; FFT 1000 at 10.000 MS/s)",
            "3 hop(s) × 8 repeat(s), ≈ 1.440 s on the radio",
            &format!(
                "… 25 more line(s) not shown; the whole text: git show {commit}:docs/handoff/NEXT_RX_TASK.md"
            ),
        ] {
            assert!(before.contains(want), "{what}: no {want:?} before the prompt:\n{so}");
        }
        assert_eq!(before.matches("→ within policy").count(), 2, "{what}: {so}");
        // Cut at 40 body lines: 36 filler lines follow the 4 lines of the note.
        assert!(!so.contains("filler line 37"), "{what}: {so}");
        // No raw plan JSON any more.
        assert!(!so.contains("\"record_format\""), "{what}: {so}");
    }
}

/// A device string holding a C1 or bidi character is either refused by validation
/// (the message escapes it) or shown escaped: it never reaches the terminal raw.
#[test]
fn hostile_characters_in_device_args_never_reach_the_terminal_raw() {
    for (id, dev, extra) in [
        ("T_DEV_C1", "driver=rxsim,label=\\u009b31m", ""),
        ("T_DEV_BIDI", "driver=rxsim,label=\\u202eevil", ""),
        ("T_DEV_ESC", "driver=rxsim,label=\\u001b[2J", ""),
        ("T_ANT_C1", "driver=rxsim", r#", "antenna": "RX\u009b2""#),
        (
            "T_CLK_BIDI",
            "driver=rxsim",
            r#", "clock_source": "ext\u202eernal""#,
        ),
    ] {
        let lab = Lab::new();
        let plan = format!(
            r#"{{"steps": [{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100e6,
              "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": 0.5{extra}}}]}}"#
        );
        lab.post(&rx_task(&lab, id, "Body.\n", &plan));
        let out = lab.watch_once("d\n");
        let (so, se) = (text(&out.stdout), text(&out.stderr));
        assert_no_raw_escapes(id, &so);
        assert_no_raw_escapes(id, &se);
        if so.contains(PROMPT) {
            assert!(so.contains("\\u{"), "{id}: shown, but not escaped:\n{so}");
        } else {
            assert_eq!(lab.status_of(id), "rejected", "{id}: {so}\n{se}");
            assert!(se.contains(id), "{id}: the refusal names the task: {se}");
        }
    }
}

/// A transmitting step is marked TRANSMIT with where it lands on air, and a node
/// without a TX range says before `[A]` that `run` would refuse it.
#[test]
fn prompt_marks_a_tx_step_transmit_and_shows_the_tx_policy_verdict() {
    let lab = Lab::new();
    let plan = r#"{"steps": [{"op": "tx_tone", "device": "driver=rxsim,serial=TX1",
      "frequency_hz": 433.92e6, "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3,
      "gain_db": 0, "duration_s": 0.3}]}"#;
    let mut t = Lab::task(
        "T_TX_SHOWN",
        &lab.main_head(),
        &[
            ("HARDWARE_ACCESS", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "RED"),
        ],
    );
    t.push_str(&format!("\n```rx-plan\n{plan}\n```\n"));
    lab.post(&t);
    let out = lab.watch_once("d\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    let before = &so[..so.find(PROMPT).expect("prompted")];
    for want in [
        "  Policy:  no policy file: defaults (RX up to 60 s, 4 GiB IQ; TX refused)",
        "1. TRANSMIT tx_tone driver=rxsim,serial=TX1: LO 433.920 MHz, tone offset +50.000 kHz → on air 433.970 MHz (image 433.870 MHz, LO leakage 433.920 MHz), 1.000 MS/s, TX gain 0 dB, 0.3 s",
        "→ would be REFUSED — `rxnode run` stops before any step: no tx section in the local policy: TX is refused",
    ] {
        assert!(before.contains(want), "no {want:?} before the prompt:\n{so}");
    }
}

/// `[D]` in a dry run defers only in the dry-run area: it does not send the
/// operator to `rxnode review ID`, which reads the node's own state and answers
/// "not known on this node" (exit 2), but says how to rehearse it again.
#[test]
fn a_dry_run_defer_points_where_the_deferral_lives() {
    let lab = Lab::new();
    let f = lab.dir.path().join("dry.md");
    std::fs::write(&f, rx_task(&lab, "T_DRY_DEF", "\n# Dry\n", PLAN)).unwrap();
    let file = f.to_str().unwrap();
    let out = lab.run(&["watch", "--dry-run", "--task-file", file], "d\n");
    expect_exit!(out, 0);
    let so = text(&out.stdout);
    assert!(!so.contains("until `rxnode review T_DRY_DEF`"), "{so}");
    assert!(
        so.contains("dry run: deferred T_DRY_DEF only under") && so.contains("remove that folder"),
        "{so}"
    );
    // What the old line sent the operator to: review knows nothing of it.
    let out = lab.run(&["review", "T_DRY_DEF"], "");
    expect_exit!(out, 2);
    assert!(
        text(&out.stderr).contains("not known on this node"),
        "{}",
        util::show(&out)
    );
}

/// `watch --dry-run` gives the verdict the real watcher would: the checkout's own
/// policy (also when named with `--policy .local/rxnode-policy.json`), what the
/// node's state already knows of the ID, and an edited file under an ID that was
/// only pending in the dry-run area is rehearsed again instead of refused there.
#[test]
fn dry_run_uses_the_real_policy_and_state_and_rehearses_an_edited_pending_task() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 30}}"#);
    let f = lab.dir.path().join("dry.md");
    std::fs::write(&f, rx_task(&lab, "T_DRY_POL", "\n# Dry\n", PLAN)).unwrap();
    let file = f.to_str().unwrap();
    let out = lab.run(&["watch", "--dry-run", "--task-file", file], "\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(
        so.contains("→ would be BLOCKED: duration_s 45 exceeds rx.max_duration_s 30"),
        "{so}"
    );
    assert!(
        so.contains("task T_DRY_POL is new to this node; the real watcher would prompt it"),
        "{so}"
    );
    // The same policy named explicitly, relative to the checkout: accepted.
    let pol = lab.local().join("rxnode-policy.json");
    let out = lab.run(
        &[
            "--policy",
            pol.to_str().unwrap(),
            "watch",
            "--dry-run",
            "--task-file",
            file,
        ],
        "\n",
    );
    expect_exit!(out, 0);
    assert!(
        text(&out.stdout).contains("would be BLOCKED: duration_s 45"),
        "{}",
        util::show(&out)
    );
    // Edited under the same ID while only pending in the dry-run area: prompted again.
    std::fs::write(&f, rx_task(&lab, "T_DRY_POL", "\n# Dry, edited\n", PLAN)).unwrap();
    let out = lab.run(&["watch", "--dry-run", "--task-file", file], "d\n");
    let so = text(&out.stdout);
    expect_exit!(out, 0);
    assert!(so.contains("rehearsing this text afresh"), "{so}");
    assert!(so.contains(PROMPT), "{so}");
    // Deferred in the dry-run area: not prompted again, and it says so plainly.
    let out = lab.run(&["watch", "--dry-run", "--task-file", file], "\n");
    let so = text(&out.stdout);
    assert!(
        so.contains("task T_DRY_POL is already deferred in the dry-run area"),
        "{so}"
    );
    assert!(!so.contains(PROMPT), "{so}");
    // Known to the real node with another text: the dry run says the real watcher refuses it.
    let posted = rx_task(&lab, "T_DRY_POL", "\n# Posted\n", PLAN);
    lab.post(&posted);
    let out = lab.watch_once("d\n");
    expect_exit!(out, 0);
    let out = lab.run(&["watch", "--dry-run", "--task-file", file], "\n");
    let so = text(&out.stdout);
    assert!(
        so.contains("the real watcher would REFUSE this text: task T_DRY_POL is already deferred"),
        "{so}"
    );
}
