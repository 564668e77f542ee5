//! Text from outside — a task file's header key, a Git server's error text —
//! reaches no terminal raw (docs/safety.md#text-from-outside): each command that
//! can show it is run with a hostile string (`ESC [ 2J`, the C1 CSI U+009B, BEL,
//! a bidi override) in every field that can carry one, and neither stdout nor
//! stderr holds a raw control or format character, in text or JSON.
use crate::util::{git, listener, run_fed, show, text, Lab, TASK_PATH};
use std::io::{Read, Write};
use std::process::Output;

/// The hostile text: clear screen, C1 CSI, bell, right-to-left override.
const HOSTILE: &str = "X\x1b[2J\u{9b}31m\x07\u{202e}Y";

/// Nothing in `out` that a terminal would act on or hide: only newlines and tabs
/// of all control and format characters; the hostile text was shown escaped.
fn assert_clean(out: &Output, what: &str) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let t = text(bytes);
        let raw: Vec<char> = t
            .chars()
            .filter(|&c| c != '\n' && c != '\t' && rxnode_interlock::needs_escape(c))
            .collect();
        assert!(
            raw.is_empty(),
            "{what}: raw {raw:?} on {stream}: {}",
            show(out)
        );
    }
}

/// Whether `out` shows the hostile text escaped (in either escape form).
fn shows_escaped(out: &Output) -> bool {
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    all.contains("\\u{1b}[2J") || all.contains("\\u001b[2J")
}

/// An unknown header key holding the hostile text is named escaped in the
/// rejection by `watch`, `watch --dry-run`, `validate` and `validate --json`.
#[test]
fn a_hostile_header_key_reaches_no_terminal_raw() {
    let lab = Lab::new();
    let mut t = Lab::task("T_HOSTILE_KEY", &lab.main_head(), &[]);
    t = t.replacen("\n\n", &format!("\n{HOSTILE} = 1\n\n"), 1);
    lab.post(&t);
    let file = lab.main.join(TASK_PATH);
    let f = file.to_str().unwrap();
    for args in [
        vec!["watch", "--once", "--interval", "0.2"],
        vec!["watch", "--dry-run", "--task-file", f],
        vec!["validate", f],
        vec!["--json", "validate", f],
        vec!["--json", "watch", "--once", "--interval", "0.2"],
        vec!["status"],
        vec!["--json", "status"],
    ] {
        let out = run_fed(lab.rxnode().args(&args), b"");
        assert_clean(&out, &format!("{args:?}"));
        if args.contains(&"validate") || args.contains(&"--dry-run") {
            assert!(shows_escaped(&out), "{args:?}: not shown: {}", show(&out));
        }
    }
}

/// A smart-HTTP Git server that answers every request with an `ERR` packet
/// holding the hostile text (what `git-upload-pack` sends to refuse a client).
fn hostile_git_server() -> String {
    let l = listener();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let pkt = |s: &str| format!("{:04x}{s}", s.len() + 4);
            let body = format!(
                "{}0000{}",
                pkt("# service=git-upload-pack\n"),
                pkt(&format!("ERR {HOSTILE} access denied\n"))
            );
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/lab.git")
}

/// A Git server's error text holding the hostile text is shown escaped by
/// `watch`, `status` (which keeps it), `doctor`, and the main PC's `results`
/// and `results nodes`, in text and JSON.
#[test]
fn a_hostile_git_server_reaches_no_terminal_raw() {
    let lab = Lab::new();
    let url = hostile_git_server();
    git(&lab.rx, &["remote", "set-url", "origin", &url]);
    git(&lab.main, &["remote", "set-url", "origin", &url]);
    let out = run_fed(
        lab.rxnode().args(["watch", "--once", "--interval", "0.2"]),
        b"",
    );
    assert_clean(&out, "watch");
    assert!(shows_escaped(&out), "watch: {}", show(&out));
    for (dir, args) in [
        (&lab.rx, vec!["status"]),
        (&lab.rx, vec!["--json", "status"]),
        (&lab.rx, vec!["doctor"]),
        (&lab.rx, vec!["--json", "doctor"]),
        (&lab.main, vec!["results"]),
        (&lab.main, vec!["--json", "results"]),
        (&lab.main, vec!["results", "nodes"]),
    ] {
        let out = run_fed(
            crate::util::rxnode_cmd().arg("--repo").arg(dir).args(&args),
            b"",
        );
        assert_clean(&out, &format!("{args:?}"));
    }
    let out = run_fed(lab.rxnode().args(["status"]), b"");
    assert!(
        shows_escaped(&out),
        "status keeps the error: {}",
        show(&out)
    );
    let out = run_fed(
        crate::util::rxnode_cmd()
            .arg("--repo")
            .arg(&lab.main)
            .args(["results"]),
        b"",
    );
    assert!(shows_escaped(&out), "results: {}", show(&out));
}
