//! Recordings with the outside tools engineers use: GNU Radio reading what `capture`
//! streams and writing what `analyze` reads, the HackRF's native CS8 recorded as it
//! came and checked by the `sigmf` package, SigMF files in the shapes public captures
//! take (docs/operator.md#analysing-a-recording).
use crate::util::{rxnode_cmd, show, text};
use std::path::Path;
use std::process::{Command, Output};

mod cs8;
#[cfg(unix)]
mod fifo;
#[cfg(unix)]
mod gnuradio;
mod integrity;
mod sigmf_shapes;

/// `rxnode --json ARGS…` in `dir` (the simulated radio on), its output.
fn rxnode(dir: &Path, args: &[&str]) -> Output {
    rxnode_cmd()
        .current_dir(dir)
        .args(["--sim", "--json"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run rxnode: {e}"))
}

/// A capture of 0.5 s at 1 MS/s from rxsim tuned to 100 MHz with its tone at
/// 100.1 MHz, with `extra` arguments.
fn capture_args<'a>(serial: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "capture",
        "-d",
        &format!("driver=rxsim,serial={serial},pace=0,tone_hz=100.1e6"),
        "-f",
        "100M",
        "-r",
        "1M",
        "-t",
        "0.5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// The JSON a command printed on `stdout`.
fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(o)))
}

/// python3 running `code` with `args`, which must succeed; its stdout as JSON.
fn python(python: &str, code: &str, args: &[&str], what: &str) -> serde_json::Value {
    let o = Command::new(python)
        .arg("-c")
        .arg(code)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{python}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed (scripts/setup.sh --tests installs it): {}",
        show(&o)
    );
    serde_json::from_str(text(&o.stdout).trim())
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", show(&o)))
}
