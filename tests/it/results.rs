//! `rxnode validate-result` through the real binary.
//!
//! The result files are written here by hand from the documented contract
//! (docs/protocol.md, "Results"), not by the renderer, so the test also pins
//! the format other tools rely on.
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Output;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    valid: bool,
    path: String,
    problems: Vec<String>,
}

const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
const COMMIT: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn sha(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

fn result_value(iq_sha: &str, iq_bytes: u64) -> Value {
    json!({
        "schema_version": 1,
        "task_id": "RES_1",
        "task_title": "Two captures",
        "status": "FAIL",
        "risk_level": "YELLOW",
        "source_branch": "video-development",
        "source_commit": COMMIT,
        "expected_head": HEAD,
        "approval": {"at": "2026-01-01T10:00:00+00:00", "task_sha256": "a".repeat(64)},
        "authorization": null,
        "node": {"hostname": null, "rxnode_version": "0.1.0", "soapysdr_version": "0.8.1"},
        "timeline": {"started_at": "2026-01-01T10:05:00+00:00", "completed_at": "2026-01-01T10:05:09+00:00"},
        "checks": [
            {"name": "capture 1: clkin", "status": "PASS", "detail": "0.001 ppm"},
            {"name": "capture 2: clkin", "status": "FAIL", "detail": "2.5 ppm > 0.5 ppm"}
        ],
        "inventory": null,
        "captures": [{
            "device": "driver=rxsim", "status": "FAIL",
            "clkin": {"ppm": 2.5, "ppm_uncertainty": 0.01, "status": "FAIL"},
            "iq_files": [{"path": ".local/rx_iq/RES_1/cap2.cf32", "format": "cf32", "bytes": iq_bytes, "sha256": iq_sha}]
        }],
        "tx": null,
        "errors": []
    })
}

/// Write JSON + an agreeing Markdown twin into the outbox of `repo`.
fn write_result(repo: &Path, v: &Value) -> PathBuf {
    let dir = repo.join(".local/rx_agent_outbox/RES_1");
    std::fs::create_dir_all(&dir).unwrap();
    let mut json = serde_json::to_string_pretty(v).unwrap();
    json.push('\n');
    std::fs::write(dir.join("RX_RESULT.json"), &json).unwrap();
    let mut md = format!("# RX result\n\n| | |\n|---|---|\n| Status | {} |\n\n| # | Check | Status | Detail |\n|---|---|---|---|\n", v["status"].as_str().unwrap());
    for (i, c) in v["checks"].as_array().unwrap().iter().enumerate() {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            i + 1,
            c["name"].as_str().unwrap(),
            c["status"].as_str().unwrap(),
            c["detail"].as_str().unwrap()
        ));
    }
    md.push_str(&format!(
        "\n<!-- rxnode-result schema_version=1 task_id={} status=\"{}\" json_sha256={} -->\n",
        v["task_id"].as_str().unwrap(),
        v["status"].as_str().unwrap(),
        sha(json.as_bytes())
    ));
    std::fs::write(dir.join("RX_RESULT.md"), md).unwrap();
    dir.join("RX_RESULT.json")
}

fn write_iq(repo: &Path, content: &[u8]) {
    let p = repo.join(".local/rx_iq/RES_1/cap2.cf32");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn rxnode(repo: &Path, args: &[&str]) -> Output {
    crate::util::rxnode_bin()
        .args(args)
        .arg("--repo")
        .arg(repo)
        .current_dir(repo)
        .env_remove("RXNODE_REPO")
        .output()
        .expect("run rxnode")
}

fn report(repo: &Path, target: &str) -> (i32, Report) {
    let out = rxnode(repo, &["validate-result", target, "--json"]);
    let r: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), r)
}

#[test]
fn valid_result_by_task_id_and_path() {
    let tmp = tempfile::TempDir::new().unwrap();
    let iq = b"\x00\x01\x02\x03iq";
    write_iq(tmp.path(), iq);
    let json_path = write_result(tmp.path(), &result_value(&sha(iq), iq.len() as u64));
    let (code, r) = report(tmp.path(), "RES_1");
    assert_eq!(code, 0, "{r:?}");
    assert!(r.valid && r.problems.is_empty());
    assert!(r.path.ends_with("RX_RESULT.json"));
    let (code, _) = report(tmp.path(), json_path.to_str().unwrap());
    assert_eq!(code, 0);
    let (code, _) = report(tmp.path(), json_path.parent().unwrap().to_str().unwrap());
    assert_eq!(code, 0, "a folder means its RX_RESULT.json");
    let out = rxnode(tmp.path(), &["validate-result", "RES_1"]);
    expect_exit!(out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid"));
    // A task ID this checkout has no result of, and no such file: the problem says
    // which reading was taken and that there is no result of it.
    let (code, r) = report(tmp.path(), "RES_9");
    assert_eq!(code, 2);
    assert!(
        r.path.ends_with("rx_agent_outbox/RES_9/RX_RESULT.json")
            && r.problems[0].contains("cannot read")
            && r.problems[0].contains(
                "RES_9 is no file or folder here, so it was read as a task ID: this checkout has no result of it"
            ),
        "{r:?}"
    );
}

#[test]
fn iq_hash_and_size_checked_on_disk() {
    let tmp = tempfile::TempDir::new().unwrap();
    write_iq(tmp.path(), b"actual bytes");
    write_result(tmp.path(), &result_value(&sha(b"other bytes"), 5));
    let (code, r) = report(tmp.path(), "RES_1");
    assert_eq!(code, 2);
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("is 12 bytes on disk, the result says 5")),
        "{r:?}"
    );
    assert!(
        r.problems.iter().any(|p| p.contains("has SHA-256")),
        "{r:?}"
    );
}

#[test]
fn absolute_and_parent_paths_refused() {
    for bad in ["/home/op/cap.cf32", "../cap.cf32", ".local/../../cap.cf32"] {
        let tmp = tempfile::TempDir::new().unwrap();
        let mut v = result_value(&"0".repeat(64), 1);
        v["captures"][0]["iq_files"][0]["path"] = json!(bad);
        write_result(tmp.path(), &v);
        let (code, r) = report(tmp.path(), "RES_1");
        assert_eq!(code, 2, "{bad}");
        assert!(
            r.problems
                .iter()
                .any(|p| p.contains("must be relative to the checkout")),
            "{bad}: {r:?}"
        );
    }
}

#[test]
fn status_vocabulary_timeline_and_agreement() {
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["status"] = json!("NOT_RUN")),
            "is not one of PASS, FAIL, PARTIAL, SKIP, BLOCKED, NOT RUN",
        ),
        (
            Box::new(|v| v["status"] = json!("PASS")),
            "status: PASS disagrees with the checks, which give FAIL",
        ),
        (
            Box::new(|v| v["checks"][1]["status"] = json!("failed")),
            "checks[1].status",
        ),
        (
            Box::new(|v| v["timeline"]["completed_at"] = json!("2026-01-01T10:04:00+00:00")),
            "completed_at is before started_at",
        ),
        (
            Box::new(|v| v["timeline"]["started_at"] = json!("2026-01-01T10:05:00")),
            "not ISO 8601",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("errors");
            }),
            "errors: missing",
        ),
        (
            Box::new(|v| v["schema_version"] = json!(7)),
            "schema_version: 7 is not supported",
        ),
    ];
    for (edit, needle) in cases {
        let tmp = tempfile::TempDir::new().unwrap();
        let mut v = result_value(&"0".repeat(64), 1);
        edit(&mut v);
        write_result(tmp.path(), &v);
        let (code, r) = report(tmp.path(), "RES_1");
        assert_eq!(code, 2, "{needle}");
        assert!(
            r.problems.iter().any(|p| p.contains(needle)),
            "no {needle:?} in {r:?}"
        );
    }
}

#[test]
fn markdown_must_agree() {
    let tmp = tempfile::TempDir::new().unwrap();
    let j = write_result(tmp.path(), &result_value(&"0".repeat(64), 1));
    let md_path = j.with_file_name("RX_RESULT.md");
    // The JSON changed after the Markdown was written.
    let text = std::fs::read_to_string(&j)
        .unwrap()
        .replace("2.5 ppm > 0.5 ppm", "fine");
    std::fs::write(&j, text).unwrap();
    let out = rxnode(tmp.path(), &["validate-result", "RES_1"]);
    expect_exit!(out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not match"), "{err}");
    assert!(
        err.contains("check row `| 2 | capture 2: clkin | FAIL |`")
            || err.contains("the files disagree"),
        "{err}"
    );
    // Missing twin.
    std::fs::remove_file(&md_path).unwrap();
    let (code, r) = report(tmp.path(), "RES_1");
    assert_eq!(code, 2);
    assert!(r.problems.iter().any(|p| p.contains("Markdown twin")));
}

#[test]
fn missing_or_broken_result() {
    let tmp = tempfile::TempDir::new().unwrap();
    let (code, r) = report(tmp.path(), "NOPE_1");
    assert_eq!(code, 2);
    assert!(
        r.path
            .contains(".local/rx_agent_outbox/NOPE_1/RX_RESULT.json"),
        "{r:?}"
    );
    assert!(r.problems[0].contains("cannot read"));
    let p = tmp.path().join("x.json");
    std::fs::write(&p, b"\xff\x00 not json").unwrap();
    let (code, r) = report(tmp.path(), p.to_str().unwrap());
    assert_eq!(code, 2);
    assert!(r.problems[0].contains("not valid JSON"));
}

/// A result in a folder whose name is not UTF-8 (any bytes a Unix path may
/// hold) is validated like any other: `validate-result` refused the argument as
/// "invalid UTF-8 was detected in one or more arguments", naming neither it nor
/// the flag.
#[cfg(unix)]
#[test]
fn a_result_in_a_folder_whose_name_is_not_utf8_is_validated() {
    use std::os::unix::ffi::OsStrExt;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::TempDir::new().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"lab\xfe"));
    std::fs::create_dir(&dir).unwrap();
    for f in ["RX_RESULT.json", "RX_RESULT.md"] {
        std::fs::copy(
            root.join("fixtures/results/FIX_YELLOW_001").join(f),
            dir.join(f),
        )
        .unwrap();
    }
    for target in [dir.clone(), dir.join("RX_RESULT.json")] {
        let out = crate::util::rxnode_bin()
            .arg("--json")
            .arg("--repo")
            .arg(root)
            .arg("validate-result")
            .arg(&target)
            .current_dir(root)
            .env_remove("RXNODE_REPO")
            .output()
            .unwrap();
        let r: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not a report ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(out.status.code(), Some(0), "{target:?}: {r:?}");
        assert!(r.valid && r.problems.is_empty(), "{r:?}");
    }
}

#[test]
fn golden_fixture_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = root.join("fixtures/results/FIX_YELLOW_001/RX_RESULT.json");
    let (code, r) = report(root, p.to_str().unwrap());
    assert_eq!(code, 0, "{r:?}");
    let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    assert_eq!(v["status"], "FAIL");
    assert_eq!(v["captures"][0]["clkin"]["status"], "FAIL");
}

/// A sweep and a comparison in this build's shape with an optional field left
/// out (this build writes `null` for none) are refused by the field's path;
/// written `null`, they are valid.
#[test]
fn an_optional_field_left_out_is_named_and_null_is_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sweeps: Vec<Value> =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/sections/sweeps.json")).unwrap())
            .unwrap();
    let compares: Vec<Value> = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/sections/clkin_compares.json")).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::TempDir::new().unwrap();
    let iq = b"\x00\x01\x02\x03iq";
    write_iq(tmp.path(), iq);
    let with = |edit: &dyn Fn(&mut Value, &mut Value)| {
        let (mut s, mut k) = (sweeps[0].clone(), compares[0].clone());
        edit(&mut s, &mut k);
        let mut v = result_value(&sha(iq), iq.len() as u64);
        v["sweeps"] = json!([s]);
        v["clkin_compares"] = json!([k]);
        write_result(tmp.path(), &v);
        report(tmp.path(), "RES_1")
    };
    let (code, r) = with(&|s, k| {
        s.as_object_mut().unwrap().remove("noise_floor_db");
        k["clkin_compare"]
            .as_object_mut()
            .unwrap()
            .remove("uncertainty_ppb");
    });
    assert_eq!(code, 2, "{r:?}");
    assert_eq!(
        r.problems,
        [
            "sweeps[0]: missing field `noise_floor_db`",
            "clkin_compares[0].clkin_compare: missing field `uncertainty_ppb`"
        ]
    );
    let (code, r) = with(&|s, _| s["noise_floor_db"] = Value::Null);
    assert_eq!((code, r.problems.as_slice()), (0, &[][..]), "{r:?}");
    // A field added after nodes wrote the record without it reads with its default.
    let (code, r) = with(&|s, _| {
        s.as_object_mut().unwrap().remove("radio_settings");
    });
    assert_eq!((code, r.problems.as_slice()), (0, &[][..]), "{r:?}");
}
