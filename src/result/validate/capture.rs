//! One capture of a result: its statuses, array lengths tied to its declared
//! sizes, and its IQ files (relative paths; sizes and hashes where on disk).
use super::{is_hex, is_safe_relative, kind, sha256_file, V};
use crate::result::sections::capture::CaptureRecord;
use crate::result::sections::wire::read_as;
use serde_json::Value;
use std::path::Path;

/// PSD points a capture may carry when it declares no `fft_size` (the capture
/// engine's default trace length).
const PSD_POINTS_WITHOUT_FFT_SIZE: u64 = 512;
/// Peaks a capture may list.
const MAX_PEAKS: u64 = 64;
/// IQ files one capture may record (SigMF data + meta, or one WAV / raw file).
const MAX_IQ_FILES: usize = 8;

/// The key every capture record this build writes carries and a capture in an
/// older node's shape lacks (its lost samples were counted since): an entry with
/// it is held to the record's type, field by field.
const THIS_SHAPE: &str = "overflow_lost_samples";

/// Capture `i`: its statuses, its array sizes, its IQ files; an entry in this
/// build's shape read as its type (a refusal names the field), one in another
/// build's shape read by its keys within the bounds every capture keeps.
pub(super) fn check_capture(c: &Value, i: usize, checkout: &Path, v: &mut V<'_>) {
    let n = format!("captures[{i}]");
    if !c.is_object() {
        v.bad(format!("{n}: expected an object, got {}", kind(c)));
        return;
    }
    if c.get(THIS_SHAPE).is_none() {
        return check_other(c, &n, Some(checkout), v);
    }
    match read_as::<CaptureRecord>(c) {
        Ok(r) => check_record(&r, &n, checkout, v),
        Err(m) => {
            // The bounds every capture keeps are named as for any capture, and
            // the type's refusal unless they already named what is wrong with
            // the entry (its files on disk aside).
            check_other(c, &n, Some(checkout), v);
            let mut shape = Vec::new();
            check_other(c, &n, None, &mut V { p: &mut shape });
            if shape.is_empty() {
                v.bad(format!("{n}{m}"));
            }
        }
    }
}

/// A capture record that read as its type: its sizes and IQ files (its statuses
/// are the type's).
fn check_record(r: &CaptureRecord, n: &str, checkout: &Path, v: &mut V<'_>) {
    let bins = u64::try_from(r.fft_size).ok().filter(|b| is_bin_count(*b));
    if bins.is_none() {
        v.bad(format!(
            "{n}.fft_size: {} is not a bin count in 1 ..= 1048576",
            r.fft_size
        ));
    }
    let limits = Limits::of(bins);
    if let Some(p) = &r.psd_db {
        limits.psd(p.len(), n, v);
    }
    limits.peaks(r.peaks.len(), n, v);
    check_iq_count(r.iq_files.len(), n, v);
    for (j, f) in r.iq_files.iter().enumerate() {
        let file = IqFile {
            path: f.path.to_str(),
            bytes: Some(f.bytes),
            sha256: Some(&f.sha256),
        };
        check_iq_file(&file, &format!("{n}.iq_files[{j}]"), Some(checkout), v);
    }
}

/// A capture in another build's shape, read by its keys; its IQ files on disk
/// under `checkout`, when given.
fn check_other(c: &Value, n: &str, checkout: Option<&Path>, v: &mut V<'_>) {
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
    check_sizes(c, n, v);
    let files = match c.get("iq_files") {
        None | Some(Value::Null) => return,
        Some(Value::Array(a)) => a,
        Some(x) => {
            v.bad(format!("{n}.iq_files: expected an array, got {}", kind(x)));
            return;
        }
    };
    check_iq_count(files.len(), n, v);
    for (j, f) in files.iter().enumerate() {
        let fname = format!("{n}.iq_files[{j}]");
        if let Some(file) = IqFile::read(f, &fname, v) {
            check_iq_file(&file, &fname, checkout, v);
        }
    }
}

/// At most [`MAX_IQ_FILES`] files.
fn check_iq_count(files: usize, n: &str, v: &mut V<'_>) {
    if files > MAX_IQ_FILES {
        v.bad(format!(
            "{n}.iq_files: {files} files; one capture records at most {MAX_IQ_FILES}"
        ));
    }
}

/// Whether `b` is an FFT size a capture may declare.
fn is_bin_count(b: u64) -> bool {
    (1..=1 << 20).contains(&b)
}

/// How long `psd_db` and `peaks` may be, from the bins a capture declares.
struct Limits {
    /// The bins, or the default trace length when none are declared.
    bins: u64,
    /// Where the bound comes from, for a refusal.
    why: &'static str,
}

impl Limits {
    fn of(bins: Option<u64>) -> Limits {
        Limits {
            bins: bins.unwrap_or(PSD_POINTS_WITHOUT_FFT_SIZE),
            why: if bins.is_some() {
                "fft_size"
            } else {
                "no fft_size declared"
            },
        }
    }

    /// `psd_db` of `len` values.
    fn psd(&self, len: usize, n: &str, v: &mut V<'_>) {
        if len as u64 > self.bins {
            v.bad(format!(
                "{n}.psd_db: {len} values but the capture has {} bins ({})",
                self.bins, self.why
            ));
        }
    }

    /// `peaks` of `len` peaks.
    fn peaks(&self, len: usize, n: &str, v: &mut V<'_>) {
        let max = self.bins.min(MAX_PEAKS);
        if len as u64 > max {
            v.bad(format!(
                "{n}.peaks: {len} peaks; at most {max} ({} bins, {MAX_PEAKS} reported at most)",
                self.bins
            ));
        }
    }
}

/// `psd_db` and `peaks` no longer than the bins the capture declares.
fn check_sizes(c: &Value, n: &str, v: &mut V<'_>) {
    // Array lengths are tied to the sizes the capture declares.
    let bins = match c.get("fft_size") {
        None | Some(Value::Null) => None,
        Some(Value::Number(x)) if x.as_u64().is_some_and(is_bin_count) => x.as_u64(),
        Some(x) => {
            v.bad(format!(
                "{n}.fft_size: {x} is not a bin count in 1 ..= 1048576"
            ));
            None
        }
    };
    let limits = Limits::of(bins);
    match c.get("psd_db") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            limits.psd(p.len(), n, v);
            if let Some(j) = p.iter().position(|x| !(x.is_number() || x.is_null())) {
                v.bad(format!("{n}.psd_db[{j}]: expected a number"));
            }
        }
        Some(x) => v.bad(format!("{n}.psd_db: expected an array, got {}", kind(x))),
    }
    match c.get("peaks") {
        None | Some(Value::Null) => {}
        Some(Value::Array(p)) => {
            limits.peaks(p.len(), n, v);
            if let Some(j) = p.iter().position(|x| !x.is_object()) {
                v.bad(format!("{n}.peaks[{j}]: expected an object"));
            }
        }
        Some(x) => v.bad(format!("{n}.peaks: expected an array, got {}", kind(x))),
    }
}

/// What an IQ file names: its path, size and hash (each absent when unreadable,
/// already named).
struct IqFile<'a> {
    path: Option<&'a str>,
    bytes: Option<u64>,
    sha256: Option<&'a str>,
}

impl<'a> IqFile<'a> {
    /// An IQ file in another build's shape, read by its keys.
    fn read(f: &'a Value, fname: &str, v: &mut V<'_>) -> Option<IqFile<'a>> {
        if !f.is_object() {
            v.bad(format!("{fname}: expected an object, got {}", kind(f)));
            return None;
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
        let sha256 = v.string(f, "sha256", &format!("{fname}.sha256"));
        Some(IqFile {
            path,
            bytes,
            sha256,
        })
    }
}

/// One IQ file: its path stays in the checkout; where the file is on disk under
/// `checkout` (when given), its size and SHA-256 are the ones the result names.
fn check_iq_file(f: &IqFile<'_>, fname: &str, checkout: Option<&Path>, v: &mut V<'_>) {
    let (path, bytes, sha) = (f.path, f.bytes, f.sha256);
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
    let Some(checkout) = checkout else { return };
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
