//! What every user of the machine may write is not trusted.
use crate::util::{run_fed, show, text, Lab};
use std::os::unix::fs::PermissionsExt;

/// `.local/` (or the ledger, or the state) at mode 777/666 let any user of the
/// machine edit the node's records, and `<git dir>/rxnode/` at 777 let them
/// take the node key away: `status` and `node show` used them without a word.
/// Each is now refused (exit 3) naming the file and `chmod o-w`; group-writable
/// (a umask of 002) stays allowed.
#[test]
fn trust_root_files_any_user_may_write_are_refused() {
    let lab = Lab::new();
    lab.set_policy(r#"{"rx": {"max_duration_s": 10}}"#);
    let out = run_fed(lab.rxnode().args(["node", "set-name", "LAB1"]), b"");
    assert!(out.status.success(), "{}", show(&out));
    let cases = [
        (lab.local(), 0o777, 0o755, "status"),
        (
            lab.local().join("rx_agent_ledger.jsonl"),
            0o666,
            0o644,
            "status",
        ),
        (lab.rx.join(".git/rxnode"), 0o777, 0o700, "show"),
    ];
    for (p, bad, good, cmd) in cases {
        let args: &[&str] = if cmd == "show" {
            &["node", "show"]
        } else {
            &["status"]
        };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(bad)).unwrap();
        let out = run_fed(lab.rxnode().args(args), b"");
        crate::util::expect_exit(&out, 3, &format!("{} at {bad:o}", p.display()));
        let err = text(&out.stderr);
        assert!(
            err.contains(&p.display().to_string())
                && err.contains("writable by every user")
                && err.contains("chmod o-w"),
            "{}: {err}",
            p.display()
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(bad & !0o002 | 0o020))
            .unwrap();
        let out = run_fed(lab.rxnode().args(args), b"");
        assert!(
            out.status.success(),
            "group-writable {}: {}",
            p.display(),
            show(&out)
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(good)).unwrap();
    }
}
