//! SigMF files in the shapes public captures take (written by the `sigmf` package and
//! numpy: fixtures/recordings/write_shapes.py), read by `analyze` with the right
//! centre, rate and sample count, or refused naming the key it cannot honour.
use super::{json, rxnode};
use crate::util::{show, text};
use std::path::Path;

/// One recording the generator wrote and what `analyze` must make of it.
#[derive(Debug, serde::Deserialize)]
struct Shape {
    path: String,
    args: Vec<String>,
    samples: Option<u64>,
    datatype: Option<String>,
    refused: Option<String>,
}

fn write_shapes(dir: &Path) -> Vec<Shape> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/recordings/write_shapes.py");
    let o = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    assert!(
        o.status.success(),
        "the generator failed (numpy and sigmf: scripts/setup.sh --tests installs them): {}",
        show(&o)
    );
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Non-Conforming Datasets (`core:dataset`, `core:header_bytes` before each capture
/// segment, `core:trailing_bytes`), `core:offset` with later `core:sample_start`s and
/// `core:global_index`, annotations, declared extensions and unknown keys,
/// big-endian 2-channel data, a file without `core:sample_rate` (given `--rate`;
/// refused naming the key without it) and a `cf32` without its byte order
/// (little-endian, as the `sigmf` package reads it) are read with the
/// tone where it was written and every sample (header and footer bytes are not
/// samples); `core:metadata_only`, a `core:dataset` with a path, headers past the
/// end of the data and an unknown extension declared not optional are refused naming
/// the key.
#[test]
fn sigmf_shapes_of_public_captures_read_back_or_are_refused_by_key() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let shapes = write_shapes(dir.path());
    assert_eq!(shapes.len(), 11, "{shapes:?}");
    for s in &shapes {
        let mut args = vec!["analyze", s.path.as_str()];
        args.extend(s.args.iter().map(String::as_str));
        let o = rxnode(dir.path(), &args);
        if let Some(key) = &s.refused {
            crate::util::expect_exit(&o, 2, &s.path);
            assert!(show(&o).contains(key.as_str()), "{}: {}", s.path, show(&o));
            continue;
        }
        crate::util::expect_exit(&o, 0, &s.path);
        let r = json(&o);
        assert_eq!(
            r["datatype"].as_str(),
            s.datatype.as_deref(),
            "{}: {r}",
            s.path
        );
        assert_eq!(r["samples"].as_u64(), s.samples, "{}: {r}", s.path);
        assert_eq!(r["sample_rate_hz"].as_f64(), Some(2e6), "{}: {r}", s.path);
        assert_eq!(r["center_hz"].as_f64(), Some(100e6), "{}: {r}", s.path);
        let p = &r["peaks"][0];
        assert!(
            (p["frequency_hz"].as_f64().unwrap_or_default() - 100.25e6).abs() < 1.0,
            "{}: {r}",
            s.path
        );
        // A header or footer read as samples would smear the tone: it stays clean.
        assert!(
            (p["power_db"].as_f64().unwrap_or_default() + 6.02).abs() < 0.1,
            "{}: {r}",
            s.path
        );
        assert!(
            r["peaks"][1]["power_db"]
                .as_f64()
                .is_none_or(|q| p["power_db"].as_f64().unwrap_or_default() - q > 30.0),
            "{}: {r}",
            s.path
        );
    }
}
