//! Sweeps in a pipeline: the CSV on standard output pass by pass, passes at an
//! interval for a total time within the policy, failed hops kept visible.
use super::*;

/// What keenerd's `heatmap.py` does with each line of an rtl_power CSV
/// (`calc_summary`: split on commas, strip, drop empty fields, `int()` the Hz
/// low/high, `float()` the step, `floatify()` the bins), run by python3 on the
/// CSV: prints `lines times min max` or fails on a line it could not read.
///
/// Its parsing, not the script itself: no package registry (PyPI, Debian) ships
/// heatmap.py, so CI cannot install it. `scripts/heatmap-check.sh` runs the real one
/// from a checkout of keenerd/rtl-sdr-misc on an interval sweep with a failed hop and
/// checks the PNG it draws (docs/operator.md#failed-hops-in-the-csv).
const HEATMAP_PY_PARSE: &str = r#"
import math, sys
def floatify(zs):
    out, previous = [], 0
    for z in zs:
        try:
            z = float(z)
        except ValueError:
            z = previous
        if math.isinf(z) or math.isnan(z):
            z = previous
        out.append(z)
        previous = z
    return out
lines, times, lo, hi = 0, set(), 100, -100
for line in sys.stdin:
    line = [s.strip() for s in line.strip().split(',')]
    line = [s for s in line if s]
    low, high, step = int(line[2]), int(line[3]), float(line[4])
    zs = floatify(line[6:])
    assert len(zs) == round((high - low) / step), (low, high, step, len(zs))
    times.add(line[0] + ' ' + line[1])
    lo, hi = min(lo, min(zs)), max(hi, max(zs))
    lines += 1
print(lines, len(times), lo, hi)
"#;

/// `--csv -` with `-i`/`-e`: two passes a second apart, the CSV alone on
/// stdout (one line per hop and pass, the failed hop marked `nan` with 0
/// samples, one time stamp per pass), a progress line per pass and the report
/// on stderr; heatmap.py's own parsing reads every line. `--json` with `--csv -`
/// is refused (both want stdout), and an interval run longer than the policy's
/// rx.max_duration_s is refused before any stream.
#[test]
fn csv_on_stdout_at_an_interval_keeps_failed_hops_for_heatmap_py() {
    let rig = Rig::new();
    let dev = scene("PIPE1", ",dead_hz=98e6:100e6");
    let out = rig.rxnode(
        &sweep_args(
            &dev,
            &["--interval-s", "1", "--total-s", "2.5", "--csv", "-"],
        ),
        "",
    );
    expect_exit!(out, 1, "PARTIAL: a hop failed");
    let csv = util::text(&out.stdout);
    let err = util::text(&out.stderr);
    let rows = read_rtl_power(&csv);
    assert_eq!(rows.len(), 2 * 3, "2 passes × 3 hops:\n{csv}");
    let dead: Vec<&RtlRow> = rows.iter().filter(|r| r.samples == 0).collect();
    assert_eq!(dead.len(), 2, "the dead hop once per pass");
    for r in &dead {
        assert!(r.hz_low <= 98e6 && r.hz_high >= 100e6, "{}", r.hz_low);
        assert!(r.db.iter().all(|d| d.is_nan()));
    }
    // One time stamp per pass, the passes a second apart.
    let stamps: std::collections::BTreeSet<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.date, r.time))
        .collect();
    assert_eq!(stamps.len(), 2, "{stamps:?}");
    assert!(
        err.contains("sweep pass 1 of 2 done: 3 hop(s), 1 failed"),
        "{err}"
    );
    assert!(err.contains("sweep pass 2 of 2 done"), "{err}");
    assert!(err.contains("sweep PARTIAL"), "{err}");
    assert!(!csv.contains("sweep"), "stdout carries CSV only");
    // heatmap.py reads it: every line, one picture row per pass.
    let parsed = run_fed(
        std::process::Command::new("python3").args(["-c", HEATMAP_PY_PARSE]),
        csv.as_bytes(),
    );
    assert!(parsed.status.success(), "{}", util::text(&parsed.stderr));
    let got = util::text(&parsed.stdout);
    let f: Vec<&str> = got.split_whitespace().collect();
    assert_eq!(&f[..2], &["6", "2"], "{got}");

    // Both on stdout: refused, naming the flags.
    let out = rig.rxnode(&sweep_args(&dev, &["--csv", "-", "--json"]), "");
    expect_exit!(out, 2);
    assert!(util::text(&out.stderr).contains("--csv - and --json"));
    // A total time the policy does not allow: refused before any stream.
    let out = rig.rxnode(
        &sweep_args(&scene("PIPE2", ""), &["-i", "30", "-e", "90", "--csv", "-"]),
        "",
    );
    expect_exit!(out, 3);
    let err = util::text(&out.stderr);
    assert!(
        err.contains("3 passes, one every --interval-s 30 s")
            && err.contains("rx.max_duration_s 60"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(rig.streams_of("PIPE2"), 0);
    // --total-s without --interval-s, and with --repeats: usage errors.
    let out = rig.rxnode(&sweep_args(&dev, &["-e", "10"]), "");
    expect_exit!(out, 2);
    let out = rig.rxnode(
        &sweep_args(&dev, &["-i", "1", "-e", "10", "--repeats", "3"]),
        "",
    );
    expect_exit!(out, 2);
}

/// Ctrl-C between passes of an interval sweep: PARTIAL (exit 1), the stderr
/// report says how many passes completed, and the CSV already on stdout holds
/// exactly those passes' lines.
#[cfg(unix)]
#[test]
fn sigint_between_interval_passes_says_how_many_completed() {
    use std::time::Duration;
    let rig = Rig::new();
    let dev = scene("PIPE3", "");
    let mut args = vec!["--sim".to_owned()];
    args.extend(
        sweep_args(&dev, &["-i", "1", "-e", "20", "--csv", "-"])
            .iter()
            .map(|s| s.to_string()),
    );
    // Passes start at 0, 1 and 2 s and take a few ms: interrupt in the idle time after the third.
    let (out, _) = rig.interrupt_while_streaming(&args, "PIPE3", Duration::from_millis(2500));
    expect_exit!(out, 1);
    let err = util::text(&out.stderr);
    assert!(err.contains("sweep PARTIAL"), "{err}");
    // Three passes normally; a loaded machine may have been slower to start.
    let done: usize = err
        .split("stopped: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no stopped line: {err}"));
    assert!((2..=3).contains(&done), "{err}");
    assert!(
        err.contains(&format!("stopped: {done} of 20 pass(es) completed")),
        "{err}"
    );
    let rows = read_rtl_power(&util::text(&out.stdout));
    // The whole passes, and the measured hops of one cut short (if it was).
    assert!(
        (done * 3..done * 3 + 3).contains(&rows.len()),
        "{} lines for {done} passes",
        rows.len()
    );
    assert!(rows.iter().all(|r| r.samples > 0));
}

/// A reader that closes the pipe (`| head -1`) stops an interval sweep at its next
/// pass, quietly: exit 0, no error on stderr, the radio's stream closed.
#[cfg(unix)]
#[test]
fn a_closed_pipe_stops_the_sweep_quietly() {
    use std::io::BufRead as _;
    use std::time::{Duration, Instant};
    let rig = Rig::new();
    let dev = scene("PIPE4", "");
    let mut args = vec!["--sim".to_owned()];
    args.extend(
        sweep_args(&dev, &["-i", "0.5", "-e", "30", "--csv", "-"])
            .iter()
            .map(|s| s.to_string()),
    );
    let mut child = rig
        .lab
        .rxnode()
        .args(&args)
        .env("RXSIM_EVENT_LOG", &rig.events)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut first).unwrap();
    assert!(first.contains(", 88000000, "), "{first}");
    drop(out);
    let t = Instant::now();
    let done = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    expect_exit!(done, 0);
    let err = util::text(&done.stderr);
    assert!(!err.contains("error"), "{err}");
    // The pass that found the pipe closed was the last (60 were asked).
    let passes = err.matches("sweep pass ").count();
    assert!((1..=3).contains(&passes), "{passes} passes: {err}");
    let log = std::fs::read_to_string(&rig.events).unwrap();
    assert!(log.contains("closeStream RX serial=PIPE4"), "{log}");
}
