//! One capture of a result: its statuses, array lengths tied to its declared
//! sizes, and its IQ files (relative paths; sizes and hashes where on disk).
use super::{is_hex, is_safe_relative, kind, sha256_file, V};
use serde_json::Value;
use std::path::Path;

/// PSD points a capture may carry when it declares no `fft_size` (the capture
/// engine's default trace length).
const PSD_POINTS_WITHOUT_FFT_SIZE: u64 = 512;
/// Peaks a capture may list.
const MAX_PEAKS: u64 = 64;
/// IQ files one capture may record (SigMF data + meta, or one WAV / raw file).
const MAX_IQ_FILES: usize = 8;

/// Capture `i`: its statuses, its array sizes, its IQ files.
pub(super) fn check_capture(c: &Value, i: usize, checkout: &Path, v: &mut V<'_>) {
    let n = format!("captures[{i}]");
    if !c.is_object() {
        v.bad(format!("{n}: expected an object, got {}", kind(c)));
        return;
    }
    if let Some(s) = c.get("status").filter(|s| !s.is_null()) {
        v.status(Some(s), &format!("{n}.status"));
    }
    if let Some(k) = c.get("clkin").filter(|s| !s.is_null()) {
        // Beside the step statuses, a CLKIN check has one more: NOT_MEASURED, when the
        // stream lost samples and no coherent estimate could be made
        // (docs/protocol.md#5-results).
        if let Some(s) = k.get("status").filter(|s| !s.is_null()) {
            if s.as_str() != Some("NOT_MEASURED") {
                v.status(Some(s), &format!("{n}.clkin.status"));
            }
        }
    }
    check_sizes(c, &n, v);
    let files = match c.get("iq_files") {
        None | Some(Value::Null) => return,
        Some(Value::Array(a)) => a,
        Some(x) => {
            v.bad(format!("{n}.iq_files: expected an array, got {}", kind(x)));
            return;
        }
    };
    if files.len() > MAX_IQ_FILES {
        v.bad(format!(
            "{n}.iq_files: {} files; one capture records at most {MAX_IQ_FILES}",
            files.len()
        ));
    }
    for (j, f) in files.iter().enumerate() {
        check_iq_file(f, &format!("{n}.iq_files[{j}]"), checkout, v);
    }
}

/// `psd_db` and `peaks` no longer than the bins the capture declares.
fn check_sizes(c: &Value, n: &str, v: &mut V<'_>) {
    // Array lengths are tied to the sizes the capture declares.
    let bins = match c.get("fft_size") {
        None | Some(Value::Null) => None,
        Some(Value::Number(x)) if x.as_u64().is_some_and(|b| (1..=1 << 20).contains(&b)) => {
            x.as_u64()
        }
        Some(x) => {
            v.bad(format!(
                "{n}.fft_size: {x} is not a bin count in 1 ..= 1048576"
            ));
            None
        }
    };
    let limit = bins.unwrap_or(PSD_POINTS_WITHOUT_FFT_SIZE);
    let why = if bins.is_some() {
        "fft_size"
    } else {
        "no fft_size declared"
    };
    match c.get("psd_db") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            if p.len() as u64 > limit {
                v.bad(format!(
                    "{n}.psd_db: {} values but the capture has {limit} bins ({why})",
                    p.len()
                ));
            }
            if let Some(j) = p.iter().position(|x| !(x.is_number() || x.is_null())) {
                v.bad(format!("{n}.psd_db[{j}]: expected a number"));
            }
        }
        Some(x) => v.bad(format!("{n}.psd_db: expected an array, got {}", kind(x))),
    }
    match c.get("peaks") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            let max = limit.min(MAX_PEAKS);
            if p.len() as u64 > max {
                v.bad(format!(
                    "{n}.peaks: {} peaks; at most {max} ({} bins, {MAX_PEAKS} reported at most)",
                    p.len(),
                    limit
                ));
            }
            if let Some(j) = p.iter().position(|x| !x.is_object()) {
                v.bad(format!("{n}.peaks[{j}]: expected an object"));
            }
        }
        Some(x) => v.bad(format!("{n}.peaks: expected an array, got {}", kind(x))),
    }
}

/// One IQ file: its path stays in the checkout; where the file is on disk, its
/// size and SHA-256 are the ones the result names.
fn check_iq_file(f: &Value, fname: &str, checkout: &Path, v: &mut V<'_>) {
    if !f.is_object() {
        v.bad(format!("{fname}: expected an object, got {}", kind(f)));
        return;
    }
    let path = v.string(f, "path", &format!("{fname}.path"));
    let bytes = match f.get("bytes") {
        Some(Value::Number(b)) if b.as_u64().is_some() => b.as_u64(),
        Some(x) => {
            v.bad(format!(
                "{fname}.bytes: expected a non-negative integer, got {x}"
            ));
            None
        }
        None => {
            v.bad(format!("{fname}.bytes: missing"));
            None
        }
    };
    let sha = v.string(f, "sha256", &format!("{fname}.sha256"));
    if let Some(s) = sha {
        if !is_hex(s, 64) {
            v.bad(format!("{fname}.sha256: {s:?} is not 64 hex characters"));
        }
    }
    let Some(p) = path else { return };
    if !is_safe_relative(p) {
        v.bad(format!(
            "{fname}.path: {p:?} must be relative to the checkout, without '..'"
        ));
        return;
    }
    let on_disk = checkout.join(p);
    if !on_disk.is_file() {
        return; // Checked only where the file exists (e.g. not on the main PC).
    }
    match sha256_file(&on_disk) {
        Err(e) => v.bad(format!("{fname}: cannot read {p}: {e}")),
        Ok((size, hash)) => {
            if let Some(b) = bytes {
                if b != size {
                    v.bad(format!(
                        "{fname}: {p} is {size} bytes on disk, the result says {b}"
                    ));
                }
            }
            if let Some(s) = sha {
                if !s.eq_ignore_ascii_case(&hash) {
                    v.bad(format!(
                        "{fname}: {p} has SHA-256 {hash} on disk, the result says {s}"
                    ));
                }
            }
        }
    }
}
