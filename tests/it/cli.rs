//! Operator comforts: completions, the man page, help,
//! logging flags, colour only on terminals, and `analyze --plot`.
#[cfg_attr(not(unix), allow(unused_imports))]
use crate::util::{show, text};
use std::path::Path;
use std::process::{Command, Output};

mod closed_pipe;
mod doc_flags;
mod flags;
mod repo_folder;

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

/// `--repo` in the main PC's commands' help (`results`, `task new`) names the
/// main PC's clone they read, not only "the RX checkout".
#[test]
fn repo_flag_help_names_the_main_pc_clone_too() {
    let d = tempfile::tempdir().unwrap();
    for args in [
        &["results", "--help"][..],
        &["task", "new", "--help"],
        &["watch", "--help"],
    ] {
        let help = ok(&rxnode(d.path()).args(args).output().unwrap());
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with("--repo"))
            .unwrap_or_else(|| panic!("{args:?}: no --repo line: {help}"));
        assert!(
            line.contains(
                "the RX clone on a node, the main PC's clone for `results` and `task new`"
            ),
            "{args:?}: {line}"
        );
    }
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
/// A tone of amplitude 0.5 over a receiver's noise ~60 dB down (uniform, ±1e-3 on I
/// and Q; a noiseless tone has no noise floor: docs/operator.md#levels-without-power).
fn write_tone_cf32(path: &Path, rate: f64, offset_hz: f64, n: usize) {
    let mut bytes = Vec::with_capacity(n * 8);
    let mut r = 1u64;
    let mut noise = move || {
        r = r
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((r >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e-3
    };
    for i in 0..n {
        let ph = 2.0 * std::f64::consts::PI * offset_hz * i as f64 / rate;
        bytes.extend_from_slice(&((0.5 * ph.cos() + noise()) as f32).to_le_bytes());
        bytes.extend_from_slice(&((0.5 * ph.sin() + noise()) as f32).to_le_bytes());
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
        .env("RXNODE_RADIO_LOCK_DIR", crate::util::runtime_dir())
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

/// Under `--json` an error is one JSON object on stderr with the message, the fix
/// (when the message names one) and the exit status, so a program reading the
/// output never has to parse prose.
#[test]
fn json_errors_are_one_object_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    git2::Repository::init(d.path()).unwrap();
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
                "--json", "capture", "-d", "driver=x", "-r", "1M", "-t", "1", "-f", "nonsense",
            ],
            "frequency-hz",
        ),
        (
            &[
                "--json",
                "sweep",
                "-d",
                "driver=x",
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

/// `--sim` that cannot install the simulated radio's module (its cache folder is
/// a file) answered `--json` in text; the error is the one JSON object every
/// other error is, naming the folder, exit 1.
#[test]
fn a_sim_module_that_cannot_be_installed_is_a_json_error_under_json() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(&cache, b"a file").unwrap();
    let out = rxnode(dir.path())
        .env("XDG_CACHE_HOME", &cache)
        .args(["--json", "--sim", "inventory"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let e: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|err| {
        panic!("stderr is not one JSON object ({err}): {}", show(&out));
    });
    assert_eq!(e["exit"], 1, "{e}");
    let msg = e["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("--sim: ") && msg.contains(&cache.display().to_string()),
        "{e}"
    );
}

/// `-d hackrf` (a driver's name without `driver=`) is refused before any radio is
/// opened (exit 2), naming the word and the fix; under `--sim` it used to capture
/// from rxsim and print `capture on hackrf`.
#[test]
fn device_flag_with_a_bare_word_is_refused_naming_driver_equals() {
    let d = tempfile::tempdir().unwrap();
    for cmd in [
        &[
            "--sim", "capture", "-d", "hackrf", "-f", "100M", "-r", "1M", "-t", "0.1",
        ][..],
        &[
            "--sim",
            "sweep",
            "-d",
            "hackrf",
            "--start-hz",
            "88M",
            "--stop-hz",
            "90M",
            "--bin-hz",
            "10k",
        ],
        &["--sim", "inventory", "--dry-run", "-d", "hackrf"],
        &["--sim", "health", "test", "hackrf"],
    ] {
        let out = rxnode(d.path()).args(cmd).output().unwrap();
        expect_exit!(out, 2, "{cmd:?}");
        let se = text(&out.stderr);
        assert!(
            se.contains("\"hackrf\" is not KEY=VALUE") && se.contains("fix: `driver=hackrf`"),
            "{cmd:?}: {se}"
        );
        assert!(
            !text(&out.stdout).contains("capture on"),
            "{cmd:?}: {}",
            show(&out)
        );
    }
}
