//! Operator comforts: completions, the man page, help,
//! logging flags, colour only on terminals, and `analyze --plot`.
#[cfg_attr(not(unix), allow(unused_imports))]
use crate::util::{show, text};
use std::path::Path;
use std::process::{Command, Output};

fn rxnode(dir: &Path) -> Command {
    let mut c = crate::util::rxnode_bin();
    c.current_dir(dir)
        .env_remove("RUST_LOG")
        .env_remove("RXNODE_SIM")
        .env_remove("RXNODE_REPO")
        .env("RXSIM_EVENT_LOG", dir.join("rxsim-events.log"));
    c
}

fn ok(out: &Output) -> String {
    expect_exit!(out, 0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const SUBCOMMANDS: [&str; 14] = [
    "validate",
    "watch",
    "review",
    "status",
    "run",
    "inventory",
    "capture",
    "analyze",
    "validate-result",
    "publish",
    "mark-completed",
    "doctor",
    "demo",
    "completions",
];

#[test]
fn completions_for_each_shell_name_the_subcommands() {
    let d = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = ok(&rxnode(d.path())
            .args(["completions", shell])
            .output()
            .unwrap());
        assert!(out.contains("rxnode"), "{shell}: {out}");
        for sub in ["doctor", "validate-result", "mark-completed"] {
            assert!(out.contains(sub), "{shell} completions lack {sub}");
        }
    }
    let bad = rxnode(d.path())
        .args(["completions", "cmd.exe"])
        .output()
        .unwrap();
    expect_exit!(bad, 2);
}

#[test]
fn man_page_is_roff_listing_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    // roff escapes hyphens as `\-`.
    let man = ok(&rxnode(d.path()).arg("man").output().unwrap()).replace("\\-", "-");
    assert!(man.contains(".TH rxnode"), "{man}");
    assert!(man.contains(".SH COMMANDS"), "{man}");
    for sub in SUBCOMMANDS {
        assert!(man.contains(sub), "man page lacks {sub}");
    }
}

#[test]
fn help_lists_every_subcommand_and_global_flag() {
    let d = tempfile::tempdir().unwrap();
    let help = ok(&rxnode(d.path()).arg("--help").output().unwrap());
    for sub in SUBCOMMANDS {
        assert!(help.contains(sub), "--help lacks {sub}");
    }
    for flag in ["--sim", "--json", "--verbose", "--repo"] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
    let v = ok(&rxnode(d.path()).arg("--version").output().unwrap());
    assert!(v.starts_with("rxnode "), "{v}");
    let doc = ok(&rxnode(d.path())
        .args(["doctor", "--help"])
        .output()
        .unwrap());
    assert!(doc.contains("--json"));
}

#[test]
fn verbose_flag_and_rust_log_turn_on_tracing() {
    let d = tempfile::tempdir().unwrap();
    // doctor logs each check at debug level; only shown when asked.
    let doctor = |flags: &[&str], rust_log: Option<&str>| {
        let mut c = rxnode(d.path());
        c.args(["--sim", "--repo"])
            .arg(d.path())
            .args(flags)
            .arg("doctor");
        if let Some(l) = rust_log {
            c.env("RUST_LOG", l);
        }
        let out = c.output().unwrap();
        // No checkout here, so doctor reports a FAIL (exit 1), but it ran.
        expect_exit!(out, 1);
        out
    };
    let quiet = doctor(&[], None);
    let loud = doctor(&["-vv"], None);
    let env = doctor(&[], Some("debug"));
    let q = String::from_utf8_lossy(&quiet.stderr);
    let l = String::from_utf8_lossy(&loud.stderr);
    let e = String::from_utf8_lossy(&env.stderr);
    assert!(!q.contains("DEBUG"), "default is quiet: {q}");
    assert!(l.contains("DEBUG"), "-vv shows debug: {l}");
    assert!(e.contains("DEBUG"), "RUST_LOG=debug shows debug: {e}");
}

/// A raw cf32 recording: a tone `offset_hz` from the centre at `rate`.
fn write_tone_cf32(path: &Path, rate: f64, offset_hz: f64, n: usize) {
    let mut bytes = Vec::with_capacity(n * 8);
    for i in 0..n {
        let ph = 2.0 * std::f64::consts::PI * offset_hz * i as f64 / rate;
        bytes.extend_from_slice(&((0.5 * ph.cos()) as f32).to_le_bytes());
        bytes.extend_from_slice(&((0.5 * ph.sin()) as f32).to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn analyze_plot_writes_a_png() {
    let d = tempfile::tempdir().unwrap();
    let iq = d.path().join("tone.cf32");
    write_tone_cf32(&iq, 1e6, 125e3, 32768);
    let png = d.path().join("spectrum.png");
    let out = rxnode(d.path())
        .args(["--json", "analyze", "--rate", "1e6", "--fft-size", "1024"])
        .arg(&iq)
        .arg("--plot")
        .arg(&png)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let peak = report["peaks"][0]["frequency_hz"].as_f64().unwrap();
    assert!((peak - 125e3).abs() < 1e3, "peak at {peak}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert!(w >= 400 && h >= 200, "{w}x{h}");
    assert!(bytes.len() > 1000, "{} bytes", bytes.len());
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        2 + usize::from(d.path().join("rxsim-events.log").exists())
    );

    // A folder that does not exist is an error naming the file.
    let bad = rxnode(d.path())
        .args(["analyze", "--rate", "1e6", "--fft-size", "1024"])
        .arg(&iq)
        .arg("--plot")
        .arg(d.path().join("no/such/dir.png"))
        .output()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("dir.png"));
}

#[test]
fn no_colour_on_a_pipe() {
    let d = tempfile::tempdir().unwrap();
    let out = rxnode(d.path())
        .args(["--sim", "--repo"])
        .arg(d.path())
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL git checkout"), "{text}");
    assert!(!text.contains('\x1b'), "escape codes on a pipe: {text}");
}

/// Run `rxnode ARGS` on a pseudo-terminal (util-linux `script`, always on Debian).
#[cfg(target_os = "linux")]
fn on_a_terminal(dir: &Path, args: &str, no_color: Option<&str>) -> String {
    let mut c = Command::new("script");
    c.current_dir(dir)
        .env_remove("RXNODE_SIM")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm")
        .env("RXSIM_EVENT_LOG", dir.join("rxsim-events.log"))
        .env("XDG_RUNTIME_DIR", crate::util::runtime_dir())
        .args(["-qec"])
        .arg(format!("{} {args}", env!("CARGO_BIN_EXE_rxnode")))
        .arg("/dev/null");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let out = c.output().expect("util-linux `script` runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(target_os = "linux")]
#[test]
fn colour_on_a_terminal_unless_no_color() {
    let d = tempfile::tempdir().unwrap();
    let args = format!("--sim --repo {} doctor", d.path().display());
    let tty = on_a_terminal(d.path(), &args, None);
    assert!(
        tty.contains("\x1b[31;1mFAIL\x1b[0m git checkout"),
        "{tty:?}"
    );
    assert!(tty.contains("\x1b[32;1mPASS\x1b[0m radios"), "{tty:?}");
    let plain = on_a_terminal(d.path(), &args, Some("1"));
    assert!(plain.contains("FAIL git checkout"), "{plain:?}");
    assert!(!plain.contains('\x1b'), "NO_COLOR ignored: {plain:?}");
}

/// Log lines on a pipe carry no colour escapes (`[33m WARN[0m` in a log file is
/// noise); the same `-vv` run on a terminal may colour them.
#[test]
fn log_lines_on_a_pipe_carry_no_colour() {
    let d = tempfile::tempdir().unwrap();
    let out = rxnode(d.path())
        .args(["--sim", "-vv", "--repo"])
        .arg(d.path())
        .arg("doctor")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DEBUG"), "-vv logs: {err}");
    assert!(
        !err.contains('\x1b'),
        "escape codes in a piped log: {err:?}"
    );
}

/// A reader that closes the pipe early (`rxnode man | head -1`) is not an error:
/// rxnode ends quietly with status 0, as `cat` and `rg` do.
#[cfg(unix)]
#[test]
fn closed_pipe_ends_quietly_with_status_zero() {
    let d = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .current_dir(d.path())
        .args([
            "-c",
            "set -o pipefail; \"$0\" man | head -c 10 >/dev/null; echo \"status=$?\" >&2",
        ])
        .arg(env!("CARGO_BIN_EXE_rxnode"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("status=0"), "{err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("error"),
        "{err}"
    );
}

/// A report printed line by line (`validate`'s verdict, human and `--json`) to a
/// reader that has already gone ends quietly with status 0, as `man` does above:
/// the closed pipe is recognised by its kind wherever the write fails, whatever
/// the task's verdict would have been.
#[cfg(unix)]
#[test]
fn a_report_printed_into_a_closed_pipe_ends_quietly_with_status_zero() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let d = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for (json, file) in [
        (false, "valid_yellow_rx.md"),
        (true, "valid_yellow_rx.md"),
        (true, "invalid_many_errors.md"),
    ] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes; each is
        // owned exactly once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let mut c = rxnode(d.path());
        if json {
            c.arg("--json");
        }
        let out = c
            .arg("validate")
            .arg(fixtures.join(file))
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        expect_exit!(out, 0, "{file} json={json}");
        assert!(out.stderr.is_empty(), "{file} json={json}: {}", show(&out));
    }
    // Generated text (completions, the man page) ends the same way.
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["man"],
    ] {
        let mut fds = [0; 2];
        // SAFETY: as above.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = rxnode(d.path())
            .args(args)
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        expect_exit!(out, 0, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", show(&out));
    }
}

/// `rxnode <cmd>` into a pipe whose reader has gone: every command ends with
/// status 0 and says nothing (no "internal error", no "Broken pipe"), whether it
/// prints a report (text or `--json`), a schema, help, a version, or a capture's
/// summary; the closed pipe comes back as an error by its kind, one rule for all.
#[cfg(unix)]
#[test]
fn every_command_into_a_closed_pipe_ends_with_status_zero() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let lab = crate::util::Lab::new();
    let sim = lab.dir.path().join("sim");
    std::fs::create_dir_all(&sim).unwrap();
    let capture = [
        "--sim",
        "--json",
        "capture",
        "--device",
        "driver=rxsim,tone_hz=100.1e6",
        "--frequency-hz",
        "100e6",
        "--sample-rate-hz",
        "1e6",
        "--duration-s",
        "0.1",
    ];
    let cases: [&[&str]; 14] = [
        &["results"],
        &["--json", "results"],
        &["status"],
        &["--json", "status"],
        &["health"],
        &["--json", "health"],
        &["schema", "result"],
        &["--json", "--version"],
        &["--help"],
        &["capture", "--help"],
        &["node", "show"],
        &["--json", "validate-result", "/nonexistent/RX_RESULT.json"],
        &["completions", "fish"],
        &capture,
    ];
    for args in cases {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors `pipe` writes; each is
        // owned exactly once below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = lab
            .rxnode()
            .current_dir(&sim)
            .env("RXSIM_EVENT_LOG", sim.join("events.log"))
            .env("XDG_CACHE_HOME", sim.join("cache"))
            .args(args)
            .stdout(std::process::Stdio::from(writer))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("internal error") && !err.contains("Broken pipe"),
            "{args:?}: {err}"
        );
        expect_exit!(out, 0, "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", show(&out));
    }
}

/// Under `--json` an error is one JSON object on stderr with the message, the fix
/// (when the message names one) and the exit status, so a program reading the
/// output never has to parse prose.
#[test]
fn json_errors_are_one_object_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    let out = rxnode(d.path())
        .args(["--json", "--repo"])
        .arg(d.path())
        .args(["run", "NO_SUCH_TASK"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert_ne!(code, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    let objects: Vec<serde_json::Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(objects.len(), 1, "one JSON object: {err}");
    let o = &objects[0];
    assert_eq!(o["exit"], code, "{o}");
    assert!(
        o["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("NO_SUCH_TASK")),
        "{o}"
    );
    assert!(o["error"].get("fix").is_some(), "{o}");
    assert!(!err.contains("rxnode: error:"), "{err}");
}

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

/// A sweep on a terminal shows its progress (hop k of n, the repeat, the time left);
/// through a pipe it prints none of it.
#[cfg(target_os = "linux")]
#[test]
fn sweep_shows_progress_on_a_terminal_only() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
    let args = "--start-hz 88M --stop-hz 108M -B 10k -r 2M -t 0.1 --settle-s 0.01 --repeats 2";
    let tty = on_a_terminal(
        d.path(),
        &format!(
            "--sim --repo {} sweep -d driver=rxsim {args}",
            d.path().display()
        ),
        None,
    );
    assert!(tty.contains("sweep ["), "{tty:?}");
    assert!(tty.contains("hop ") && tty.contains("/28"), "{tty:?}");
    assert!(tty.contains("(repeat 2 of 2)"), "{tty:?}");
    let out = rxnode(d.path())
        .args(["--sim", "--repo"])
        .arg(d.path())
        .args(["sweep", "-d", "driver=rxsim"])
        .args(args.split(' '))
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("sweep ["), "progress on a pipe: {err}");
    // The report is plain text for people, not a Markdown table.
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.starts_with("sweep PASS: 88.000–108.000 MHz"),
        "{report}"
    );
    assert!(
        report.contains("bin 10.000 kHz (asked 10.000 kHz)"),
        "{report}"
    );
    assert!(!report.contains('|') && !report.contains("###"), "{report}");
}

/// Under `--json`, clap's own answers are JSON too: a bad flag or value is the
/// documented error object (exit 2, the message naming it, a missing argument
/// included), `--version` is `{"name", "version"}`; without `--json` they stay
/// clap's text.
#[test]
fn json_mode_covers_usage_errors_and_the_version() {
    let d = tempfile::tempdir().unwrap();
    for (args, named) in [
        (
            &["--json", "--frequency-hz", "nonsense", "capture"][..],
            "frequency-hz",
        ),
        (
            &[
                "--json", "capture", "-d", "x", "-r", "1M", "-t", "1", "-f", "nonsense",
            ],
            "frequency-hz",
        ),
        (
            &[
                "--json",
                "sweep",
                "-d",
                "x",
                "--start-hz",
                "1M",
                "--stop-hz",
                "2M",
            ],
            "--bin-hz",
        ),
    ] {
        let out = rxnode(d.path()).args(args).output().unwrap();
        expect_exit!(out, 2, "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let v: serde_json::Value = serde_json::from_str(err.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {err}"));
        assert_eq!(v["exit"], 2, "{v}");
        let m = v["error"]["message"].as_str().unwrap_or("");
        assert!(m.contains(named), "{v}");
    }
    let out = rxnode(d.path())
        .args(["--json", "--version"])
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "rxnode");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    let out = rxnode(d.path()).args(["--version"]).output().unwrap();
    assert!(text(&out.stdout).starts_with("rxnode "), "{}", show(&out));
}

/// Under `--json` the generated files are JSON documents too: `completions SHELL`
/// is `{"shell", "script"}`, `man` is `{"page"}`; without it, the files as they are.
#[test]
fn json_mode_wraps_the_completion_script_and_the_man_page() {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Completions {
        shell: String,
        script: String,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ManPage {
        page: String,
    }
    let d = tempfile::tempdir().unwrap();
    let out = rxnode(d.path())
        .args(["--json", "completions", "bash"])
        .output()
        .unwrap();
    expect_exit!(out, 0);
    let c: Completions = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.shell, "bash");
    let plain = rxnode(d.path())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(c.script, text(&plain.stdout));
    assert!(c.script.contains("_rxnode()"), "{}", c.script);
    let out = rxnode(d.path()).args(["--json", "man"]).output().unwrap();
    expect_exit!(out, 0);
    let m: ManPage = serde_json::from_slice(&out.stdout).unwrap();
    let plain = rxnode(d.path()).arg("man").output().unwrap();
    assert_eq!(m.page, text(&plain.stdout));
    assert!(m.page.contains(".SH \"EXIT STATUS\""), "{}", m.page);
}

/// `rxnode man` names no page that does not exist (no `rxnode-CMD(1)`), says for
/// each command where its options are, and has the EXIT STATUS section.
#[test]
fn the_man_page_names_only_itself_and_has_exit_status() {
    let d = tempfile::tempdir().unwrap();
    let out = rxnode(d.path()).arg("man").output().unwrap();
    expect_exit!(out, 0);
    let page = text(&out.stdout).replace("\\-", "-");
    assert!(!page.contains("(1)"), "a page reference: {page}");
    assert!(page.contains(".SH \"EXIT STATUS\""), "{page}");
    for cmd in ["validate", "watch", "run", "publish", "results"] {
        assert!(
            page.contains(&format!("`rxnode {cmd} --help`")),
            "{cmd}: {page}"
        );
    }
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
