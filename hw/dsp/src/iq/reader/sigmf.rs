//! SigMF metadata as the reader needs it: the `.sigmf-meta` text (of a pair or
//! inside a `.sigmf` archive), deserialized into [`SigmfMeta`] and checked, and the
//! byte ranges of the dataset that hold samples.
use super::{bad, io, DataRange};
use crate::error::Result;
use crate::iq::sigmf::{Capture, Extension, Lenient, SigmfMeta};
use crate::iq::Datatype;
use rxnode_interlock::Quantity;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a `.sigmf-meta` may have (its annotations included).
const META_MAX_BYTES: u64 = 64 << 20;

/// What a SigMF meta says, checked.
pub(super) struct SigmfSays {
    pub(super) datatype: Datatype,
    pub(super) rate: Option<f64>,
    pub(super) center: Option<f64>,
    pub(super) channels: u32,
    pub(super) clock: Option<serde_json::Value>,
    /// The first segment's `rxnode:bandwidth_hz` (the radio's bandwidth as read
    /// back), when it is a finite positive number.
    pub(super) bandwidth_hz: Option<f64>,
    /// `core:dataset`: the data file of a Non-Conforming Dataset, next to the meta.
    pub(super) dataset: Option<String>,
    /// `core:metadata_only`.
    pub(super) metadata_only: bool,
    /// Each capture segment's first sample, counted from the dataset's first one
    /// (`core:sample_start` less the first segment's), and its `core:header_bytes`.
    pub(super) segments: Vec<(u64, u64)>,
    /// `core:trailing_bytes`: bytes after the samples that are not samples.
    pub(super) trailing_bytes: u64,
    /// `core:sha512` of the dataset, lower-case hex, when the meta states one.
    pub(super) sha512: Option<String>,
}

/// A `.sigmf-meta` file's text, bounded in size.
pub(super) fn read_meta(meta_path: &Path) -> Result<String> {
    let f = crate::open_regular(meta_path).map_err(|e| match crate::not_regular(&e) {
        Some(n) => super::not_regular(meta_path, n.kind),
        None => io(meta_path)(e),
    })?;
    let mut bytes = Vec::new();
    f.take(META_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io(meta_path))?;
    if bytes.len() as u64 > META_MAX_BYTES {
        return Err(bad(
            meta_path,
            format!("SigMF meta is larger than {META_MAX_BYTES} bytes"),
        ));
    }
    meta_text(bytes).map_err(|why| bad(meta_path, format!("SigMF meta {why}")))
}

/// A meta's bytes as text: UTF-8, as JSON is exchanged (RFC 8259 §8.1). A UTF-16
/// file (an editor's "Unicode") is named by its byte order mark; the error completes
/// "SigMF meta …".
fn meta_text(bytes: Vec<u8>) -> std::result::Result<String, String> {
    if let Some(enc) = rxnode_interlock::utf16_bom(&bytes) {
        return Err(format!(
            "is {enc} (it starts with that byte order mark); JSON is UTF-8: save it as \
             UTF-8 without a byte order mark"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A SigMF archive (a tar holding one `.sigmf-meta` and its `.sigmf-data`): the
/// meta's text and where the data lies inside the archive, read in place.
pub(super) fn archived(path: &Path) -> Result<(String, DataRange)> {
    let (file, _) = super::open_regular(path)?;
    let mut tar = tar::Archive::new(file);
    let not_tar = |e: std::io::Error| bad(path, format!("not a readable SigMF archive (tar): {e}"));
    let mut metas: Vec<(PathBuf, String)> = Vec::new();
    let mut datas: Vec<(PathBuf, u64, u64)> = Vec::new();
    for entry in tar.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry.path().map_err(not_tar)?.into_owned();
        match name.extension().and_then(|e| e.to_str()) {
            Some("sigmf-meta") => {
                if entry.size() > META_MAX_BYTES {
                    return Err(bad(
                        path,
                        format!(
                            "{} in the archive is larger than {META_MAX_BYTES} bytes",
                            name.display()
                        ),
                    ));
                }
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(|e| {
                    bad(
                        path,
                        format!("{} in the archive is unreadable: {e}", name.display()),
                    )
                })?;
                let text = meta_text(bytes)
                    .map_err(|why| bad(path, format!("{} in the archive {why}", name.display())))?;
                metas.push((name, text));
            }
            Some("sigmf-data") => {
                datas.push((name, entry.raw_file_position(), entry.size()));
            }
            _ => {}
        }
    }
    let (meta_name, text) = match metas.len() {
        1 => metas.swap_remove(0),
        0 => return Err(bad(path, "the archive holds no .sigmf-meta")),
        n => {
            let names: Vec<String> = metas.iter().map(|(p, _)| p.display().to_string()).collect();
            return Err(bad(
                path,
                format!(
                    "the archive holds {n} recordings ({}); only an archive of one is read: \
                     extract it and name the .sigmf-meta",
                    names.join(", ")
                ),
            ));
        }
    };
    let want = meta_name.with_extension("sigmf-data");
    let (_, offset, len) = datas
        .into_iter()
        .find(|(p, _, _)| *p == want)
        .ok_or_else(|| {
            bad(
                path,
                format!("the archive holds no {} for its meta", want.display()),
            )
        })?;
    Ok((
        text,
        DataRange {
            path: path.to_path_buf(),
            offset,
            len,
        },
    ))
}

/// Check a SigMF meta: its datatype, rate, channels and capture segments. What this
/// reader cannot read is refused by name, never read wrongly: capture segments at
/// different centre frequencies, or a header inside the data
/// (docs/operator.md#analysing-a-recording). Keys it does not know are left alone.
pub(super) fn sigmf_meta(meta_path: &Path, text: &str) -> Result<SigmfSays> {
    // JSON text has no byte order mark (RFC 8259 §8.1) and the `sigmf` package refuses
    // one ("Unexpected UTF-8 BOM"): refused naming it, as it is invisible in an editor.
    if text.starts_with('\u{feff}') {
        return Err(bad(
            meta_path,
            "SigMF meta starts with a UTF-8 byte order mark (BOM, the bytes EF BB BF, as \
             some Windows editors save): JSON has none and the sigmf package refuses it too; \
             save it as UTF-8 without a BOM",
        ));
    }
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(
            meta_path,
            format!(
                "invalid SigMF meta JSON: {e}{}",
                json_error_context(text, &e)
            ),
        )
    })?;
    // serde keeps the last of two equal keys: a meta naming one twice is ambiguous
    // (another reader may take the first), so it is refused naming the key.
    if let Some(d) = rxnode_interlock::find_duplicate_key(text) {
        return Err(bad(meta_path, format!("SigMF meta {d}")));
    }
    // Every field is lenient: only a document that is no JSON object fails, and it
    // has no "global" either.
    let doc = SigmfMeta::deserialize(&v).unwrap_or_default();
    let global = doc
        .global
        .ok_or_else(|| bad(meta_path, "SigMF meta has no \"global\" object"))?;
    let dt = global
        .datatype
        .as_ref()
        .and_then(Lenient::valid)
        .ok_or_else(|| bad(meta_path, "SigMF meta has no core:datatype"))?;
    // A multi-byte type without `_le`/`_be` (not SigMF, but written by some tools) is
    // read little-endian, as the `sigmf` package reads it on little-endian hosts.
    let spelled = dt.to_ascii_lowercase();
    let datatype = Datatype::from_sigmf(&spelled)
        .or_else(|| {
            (!spelled.contains('_'))
                .then(|| Datatype::from_sigmf(&format!("{spelled}_le")))
                .flatten()
        })
        .ok_or_else(|| {
            bad(
                meta_path,
                format!(
                    "unsupported SigMF core:datatype {dt:?}{} (supported: {})",
                    if dt.starts_with('r') {
                        ": real-valued samples, and analysis needs complex I/Q"
                    } else {
                        ""
                    },
                    Datatype::sigmf_names()
                ),
            )
        })?;
    refuse_required_extensions(meta_path, global.extensions.as_ref())?;
    // Optional in SigMF: a recording without it needs the rate given.
    let rate = match &global.sample_rate {
        None => None,
        Some(Lenient::Valid(r)) => match Quantity::SampleRate.implausible(r.0) {
            None => Some(r.0),
            Some(why) => return Err(bad(meta_path, format!("core:sample_rate: {why}"))),
        },
        Some(Lenient::Other(r)) => {
            return Err(bad(
                meta_path,
                format!("core:sample_rate {r} is not a rate in Hz > 0"),
            ))
        }
    };
    let channels = match &global.num_channels {
        None => 1,
        Some(Lenient::Valid(c)) => c.0,
        Some(Lenient::Other(c)) => {
            return Err(bad(
                meta_path,
                format!("core:num_channels {c} is not a count in 1..=1024"),
            ))
        }
    };
    let segments = &doc.captures;
    let count = |at: &str, key: &str, x: &Option<Lenient<u64>>| -> Result<u64> {
        match x {
            None => Ok(0),
            Some(Lenient::Valid(n)) => Ok(*n),
            Some(Lenient::Other(n)) => Err(bad(
                meta_path,
                format!("{at} has {key} {n}: not a count (a whole number ≥ 0)"),
            )),
        }
    };
    // Each segment's first sample counted from the dataset's (the first segment
    // starts it, whatever `core:offset` says the index of that sample is), and the
    // header bytes before it (a Non-Conforming Dataset).
    let mut starts = Vec::with_capacity(segments.len().max(1));
    let mut first = None;
    for (i, c) in segments.iter().enumerate() {
        let at = format!("capture segment {i}");
        let start = count(&at, "core:sample_start", &c.sample_start)?;
        let first = *first.get_or_insert(start);
        let rel = start.checked_sub(first).ok_or_else(|| {
            bad(
                meta_path,
                format!(
                    "{at} has core:sample_start {start}, before segment 0's {first}: segments \
                     must be sorted by core:sample_start"
                ),
            )
        })?;
        if let Some(&(prev, _)) = starts.last() {
            if rel < prev {
                return Err(bad(
                    meta_path,
                    format!(
                        "{at} has core:sample_start {start}, before the segment before it: \
                         segments must be sorted by core:sample_start"
                    ),
                ));
            }
        }
        let header = count(&at, "core:header_bytes", &c.header_bytes)?;
        starts.push((rel, header));
    }
    if starts.is_empty() {
        starts.push((0, 0));
    }
    let trailing_bytes = count(
        "the global object",
        "core:trailing_bytes",
        &global.trailing_bytes,
    )?;
    let dataset = match &global.dataset {
        None => None,
        Some(d) => {
            let name = d.valid().map_or("", String::as_str);
            let plain = !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains(['/', '\\', ':'])
                && Path::new(name).file_name().is_some_and(|f| f == name);
            if !plain {
                let d = serde_json::to_value(d).unwrap_or_default();
                return Err(bad(
                    meta_path,
                    format!(
                        "core:dataset {d} is not a file name: the dataset must be a file in \
                         the meta's own folder, named without a path"
                    ),
                ));
            }
            Some(name.to_owned())
        }
    };
    let metadata_only = global
        .metadata_only
        .as_ref()
        .and_then(Lenient::valid)
        .copied()
        .unwrap_or(false);
    for (i, c) in segments.iter().enumerate() {
        let why = match &c.frequency {
            None => None,
            Some(Lenient::Valid(f)) if *f > 0.0 => Quantity::Frequency.implausible(*f),
            Some(f) => Some(format!(
                "{} is not a frequency in Hz > 0",
                serde_json::to_value(f).unwrap_or_default()
            )),
        };
        if let Some(why) = why {
            return Err(bad(
                meta_path,
                format!("capture segment {i} has core:frequency: {why}"),
            ));
        }
    }
    let sha512 = match &global.sha512 {
        None => None,
        Some(Lenient::Valid(h)) if h.len() == 128 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(h.to_ascii_lowercase())
        }
        Some(h) => {
            let h = serde_json::to_value(h).unwrap_or_default();
            return Err(bad(
                meta_path,
                format!(
                    "core:sha512 {} is not a SHA-512 (128 hex digits)",
                    rxnode_interlock::escaped(&h.to_string())
                ),
            ));
        }
    };
    let freq_of = |c: &Capture| c.frequency.as_ref().and_then(Lenient::valid).copied();
    let center = segments.first().and_then(freq_of);
    if let Some((i, other)) = segments
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, c)| freq_of(c) != center)
    {
        let hz = |f: Option<f64>| f.map_or("no core:frequency".to_owned(), |f| format!("{f} Hz"));
        return Err(bad(
            meta_path,
            format!(
                "{} capture segments at different centre frequencies (segment 0 at {}, segment {i} at {}): \
                 each would need its own frequency axis, and only recordings whose segments share one \
                 core:frequency are read",
                segments.len(),
                hz(center),
                hz(freq_of(other))
            ),
        ));
    }
    Ok(SigmfSays {
        datatype,
        rate,
        center,
        channels,
        clock: global.rxnode.clock,
        bandwidth_hz: segments
            .first()
            .and_then(|c| c.rxnode.bandwidth_hz.as_ref())
            .and_then(Lenient::valid)
            .copied()
            .filter(|b| b.is_finite() && *b > 0.0),
        dataset,
        metadata_only,
        segments: starts,
        trailing_bytes,
        sha512,
    })
}

/// The extension namespaces this reader supports: its own.
const KNOWN_EXTENSIONS: [&str; 1] = ["rxnode"];

/// `core:extensions`: an extension declared `"optional": false` must be supported to
/// parse the recording, and a reader that does not support it should report an error
/// (SigMF 1.2): it may change what the samples mean. One rxnode does not know is
/// refused naming it, as is an entry that does not say whether it is optional; an
/// optional one is left alone (docs/operator.md#analysing-a-recording).
fn refuse_required_extensions(
    meta_path: &Path,
    extensions: Option<&Lenient<Vec<Lenient<Extension>>>>,
) -> Result<()> {
    // The value as written, its first 80 characters.
    let shown = |v: &serde_json::Value| {
        let t = v.to_string();
        let cut: String = t.chars().take(80).collect();
        let more = if cut.len() < t.len() { "…" } else { "" };
        format!("{}{more}", rxnode_interlock::escaped(&cut))
    };
    let list = match extensions {
        None => return Ok(()),
        Some(Lenient::Valid(list)) => list,
        // The form of SigMF before 1.0: an object of namespace → "optional" or "required".
        Some(Lenient::Other(v)) if v.is_object() => {
            let named = std::collections::BTreeMap::<String, serde_json::Value>::deserialize(v)
                .unwrap_or_default();
            return match named
                .iter()
                .find(|(_, how)| how.as_str() != Some("optional"))
            {
                None => Ok(()),
                Some((name, how)) => Err(bad(
                    meta_path,
                    format!(
                        "core:extensions names the extension \"{}\" as {}, not \"optional\": \
                         a reader that does not support it must not read the recording (it may \
                         change what the samples mean), and rxnode supports no extension but \
                         its own",
                        rxnode_interlock::escaped(name),
                        shown(how)
                    ),
                )),
            };
        }
        Some(Lenient::Other(v)) => {
            return Err(bad(
                meta_path,
                format!(
                    "core:extensions {} is not a list of extensions (each with name, version \
                     and optional): whether a reader may ignore them is not known",
                    shown(v)
                ),
            ))
        }
    };
    for (i, e) in list.iter().enumerate() {
        match e {
            Lenient::Valid(e) if e.optional || KNOWN_EXTENSIONS.contains(&e.name.as_str()) => {}
            Lenient::Valid(e) => {
                return Err(bad(
                    meta_path,
                    format!(
                        "core:extensions[{i}] declares the extension \"{}\" (version {}) with \
                         \"optional\": false: SigMF says a reader that does not support it must \
                         not read the recording (it may change what the samples mean), and rxnode \
                         supports no extension but its own; if you know it changes nothing about \
                         the samples' type, rate, centre, scale or order, mark it \"optional\": \
                         true in a copy of the meta",
                        rxnode_interlock::escaped(&e.name),
                        rxnode_interlock::escaped(&e.version)
                    ),
                ))
            }
            Lenient::Other(v) => {
                return Err(bad(
                    meta_path,
                    format!(
                        "core:extensions[{i}] {} is not an extension (name and version, strings, \
                         and optional, true or false): whether a reader may ignore it is not \
                         known",
                        shown(v)
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// Where a meta's JSON fails, as a reader can find it: the key whose value it was
/// reading and the text there (JSON has no NaN or infinity, which some writers put).
fn json_error_context(text: &str, e: &serde_json::Error) -> String {
    let Some(line) = text.lines().nth(e.line().saturating_sub(1)) else {
        return String::new();
    };
    // serde_json counts the column in bytes, 1-based, at the offending byte.
    let mut at = e.column().saturating_sub(1).min(line.len());
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    let (before, after) = line.split_at(at);
    let key = before
        .trim_end()
        .strip_suffix(':')
        .map(str::trim_end)
        .and_then(|b| b.strip_suffix('"'))
        .and_then(|b| b.rfind('"').map(|q| &b[q + 1..]));
    let shown: String = after.chars().take(24).collect();
    let more = if after.chars().count() > 24 {
        "…"
    } else {
        ""
    };
    let what = match key {
        Some(k) => format!("the value of \"{}\"", rxnode_interlock::escaped(k)),
        None => "the text".to_owned(),
    };
    let hint = if ["NaN", "Infinity", "-Infinity", "inf", "-inf", "nan"]
        .iter()
        .any(|w| after.starts_with(w))
    {
        ": JSON has no NaN or infinity"
    } else {
        ""
    };
    format!(
        " ({what} is `{}{more}`{hint})",
        rxnode_interlock::escaped(&shown)
    )
}

/// The byte ranges of `data` that hold samples, and their total: each capture
/// segment's samples after its `core:header_bytes`, the last one up to the
/// `core:trailing_bytes` at the end. A dataset too short for what the meta says is
/// refused naming the segment.
pub(super) fn sample_ranges(
    meta_path: &Path,
    m: &SigmfSays,
    data: &DataRange,
    frame: u64,
) -> Result<(Vec<(u64, u64)>, u64)> {
    let short = |what: String| {
        bad(
            meta_path,
            format!(
                "{what}, but the dataset {} has {} bytes",
                data.path.display(),
                data.len
            ),
        )
    };
    let end = data
        .len
        .checked_sub(m.trailing_bytes)
        .ok_or_else(|| short(format!("core:trailing_bytes is {}", m.trailing_bytes)))?;
    let mut ranges = Vec::with_capacity(m.segments.len());
    let mut pos = 0u64;
    let mut total = 0u64;
    for (i, &(start, header)) in m.segments.iter().enumerate() {
        let begin = start
            .checked_mul(frame)
            .and_then(|b| b.checked_add(pos))
            .and_then(|b| b.checked_add(header))
            .filter(|&b| b <= end)
            .ok_or_else(|| {
                short(format!(
                    "capture segment {i} starts at sample {start} after core:header_bytes {header}"
                ))
            })?;
        pos += header;
        let stop = match m.segments.get(i + 1) {
            Some(&(next, _)) => next
                .checked_mul(frame)
                .and_then(|b| b.checked_add(pos))
                .filter(|&b| b <= end)
                .ok_or_else(|| {
                    short(format!("capture segment {} starts at sample {next}", i + 1))
                })?,
            None => end,
        };
        let len = stop - begin;
        if i + 1 < m.segments.len() && len % frame != 0 {
            return Err(short(format!("capture segment {i} is not whole samples")));
        }
        ranges.push((data.offset + begin, len));
        total += len;
    }
    Ok((ranges, total))
}

#[cfg(test)]
mod tests {
    use crate::iq::IqReader;
    use num_complex::Complex;

    /// A meta and 100 ci8 samples beside it; the error `open` gives, as text.
    fn refusal(meta: serde_json::Value) -> String {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.sigmf-meta");
        std::fs::write(&p, meta.to_string()).unwrap();
        std::fs::write(dir.path().join("r.sigmf-data"), [0u8; 200]).unwrap();
        IqReader::open(&p, None).unwrap_err().to_string()
    }

    /// Hostile capture segments are refused naming the key, never read wrongly nor a
    /// panic: sizes past u64, out-of-order segments, counts that are not counts.
    #[test]
    fn bad_capture_segments_are_refused_by_key() {
        let global = serde_json::json!({"core:datatype": "ci8", "core:sample_rate": 1e6});
        let with = |captures: serde_json::Value| {
            refusal(serde_json::json!({"global": global, "captures": captures}))
        };
        let e = with(serde_json::json!([{"core:sample_start": 0, "core:header_bytes": u64::MAX}]));
        assert!(e.contains("core:header_bytes"), "{e}");
        let e =
            with(serde_json::json!([{"core:sample_start": 0}, {"core:sample_start": u64::MAX}]));
        assert!(e.contains("segment 1 starts at sample"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": 50}, {"core:sample_start": 10}]));
        assert!(e.contains("sorted by core:sample_start"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": -1}]));
        assert!(e.contains("core:sample_start -1"), "{e}");
        let e = with(serde_json::json!([{"core:sample_start": 0, "core:header_bytes": 1.5}]));
        assert!(e.contains("core:header_bytes 1.5"), "{e}");
        let e = refusal(serde_json::json!({"global": {
            "core:datatype": "ci8", "core:trailing_bytes": 201}}));
        assert!(e.contains("core:trailing_bytes is 201"), "{e}");
        let e = refusal(serde_json::json!({"global": {
            "core:datatype": "ci8", "core:dataset": "/etc/passwd"}}));
        assert!(e.contains("core:dataset"), "{e}");
        let e = refusal(serde_json::json!({"global": {"core:datatype": "rf32_le"}}));
        assert!(e.contains("real-valued"), "{e}");
    }

    /// A meta saved with a byte order mark (UTF-8's, as some Windows editors save it, or
    /// UTF-16's) is refused naming it, in a pair and inside an archive; the same text
    /// without it reads.
    #[test]
    fn a_meta_with_a_byte_order_mark_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let meta = r#"{"global": {"core:datatype": "ci8", "core:sample_rate": 1000000},
            "captures": [{"core:sample_start": 0, "core:frequency": 100e6}]}"#;
        std::fs::write(dir.path().join("r.sigmf-data"), [0u8; 200]).unwrap();
        let p = dir.path().join("r.sigmf-meta");
        let open = |bytes: &[u8]| {
            std::fs::write(&p, bytes).unwrap();
            IqReader::open(&p, None)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(open(meta.as_bytes()), Ok(()));
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend(meta.as_bytes());
        let e = open(&bom).unwrap_err();
        assert!(e.contains("byte order mark (BOM"), "{e}");
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(meta.encode_utf16().flat_map(u16::to_le_bytes));
        let e = open(&utf16).unwrap_err();
        assert!(e.contains("is UTF-16 little-endian"), "{e}");
        // The same meta inside a .sigmf archive.
        let mut tar = tar::Builder::new(Vec::new());
        for (name, bytes) in [
            ("r/r.sigmf-meta", &bom[..]),
            ("r/r.sigmf-data", &[0u8; 200][..]),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, name, bytes).unwrap();
        }
        let a = dir.path().join("r.sigmf");
        std::fs::write(&a, tar.into_inner().unwrap()).unwrap();
        let e = IqReader::open(&a, None)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("byte order mark (BOM"), "{e}");
    }

    /// An extension declared `"optional": false` that rxnode does not know is refused
    /// naming it (SigMF: a reader that does not support it must not read the
    /// recording), as is an entry or a list that does not say whether it may be ignored;
    /// an optional one, and rxnode's own, read.
    #[test]
    fn an_unknown_extension_that_is_not_optional_is_refused_naming_it() {
        let with = |ext: serde_json::Value| {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("r.sigmf-meta");
            let meta = serde_json::json!({"global": {"core:datatype": "ci8",
                "core:sample_rate": 1e6, "core:extensions": ext}});
            std::fs::write(&p, meta.to_string()).unwrap();
            std::fs::write(dir.path().join("r.sigmf-data"), [0u8; 200]).unwrap();
            IqReader::open(&p, None)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let ext = |name: &str, optional: bool| serde_json::json!({"name": name, "version": "1.0.0", "optional": optional});
        assert_eq!(with(serde_json::json!([])), Ok(()));
        assert_eq!(
            with(serde_json::json!([
                ext("antenna", true),
                ext("rxnode", false)
            ])),
            Ok(())
        );
        let e = with(serde_json::json!([
            ext("antenna", true),
            ext("spatial", false)
        ]))
        .unwrap_err();
        assert!(
            e.contains(r#"core:extensions[1] declares the extension "spatial" (version 1.0.0)"#)
                && e.contains(r#""optional": false"#),
            "{e}"
        );
        let e = with(serde_json::json!([{"name": "acme", "version": "1"}])).unwrap_err();
        assert!(e.contains("core:extensions[0] {"), "{e}");
        // The form before SigMF 1.0: namespace → "optional" or "required".
        assert_eq!(with(serde_json::json!({"antenna": "optional"})), Ok(()));
        let e = with(serde_json::json!({"antenna": "optional", "acme": "required"})).unwrap_err();
        assert!(
            e.contains(r#"core:extensions names the extension "acme" as "required""#),
            "{e}"
        );
        let e = with(serde_json::json!("antenna")).unwrap_err();
        assert!(
            e.contains(r#"core:extensions "antenna" is not a list"#),
            "{e}"
        );
    }

    /// A ci8 dataset of two segments: 3 header bytes, samples (1, 2) (3, 4), 5 header
    /// bytes, sample (5, 6), 7 trailing bytes.
    fn padded_ci8_dataset() -> Vec<u8> {
        let mut data = vec![0xEEu8; 3];
        data.extend([1, 2, 3, 4]);
        data.extend([0xEE; 5]);
        data.extend([5, 6]);
        data.extend([0xEE; 7]);
        data
    }

    /// Samples after a header, between segments' headers and before a footer are
    /// read in order, the header and footer bytes never.
    #[test]
    fn headers_and_footers_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let data = padded_ci8_dataset();
        std::fs::write(dir.path().join("x.dat"), &data).unwrap();
        let meta = serde_json::json!({
            "global": {"core:datatype": "ci8", "core:dataset": "x.dat",
                       "core:trailing_bytes": 7},
            "captures": [{"core:sample_start": 10, "core:header_bytes": 3},
                         {"core:sample_start": 12, "core:header_bytes": 5}]});
        let p = dir.path().join("x.sigmf-meta");
        std::fs::write(&p, meta.to_string()).unwrap();
        let mut r = IqReader::open(&p, None).unwrap();
        assert_eq!(r.info().samples, 3);
        assert_eq!(r.info().sample_rate_hz, None);
        let mut out = vec![Complex::new(0.0f32, 0.0); 8];
        assert_eq!(r.read(&mut out).unwrap(), 3);
        let got: Vec<(f32, f32)> = out[..3]
            .iter()
            .map(|c| (c.re * 128.0, c.im * 128.0))
            .collect();
        assert_eq!(got, [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]);
    }

    /// `core:sha512` is checked over the whole dataset file, header and trailing bytes
    /// included (as SigMF defines it): the file's own hash reads, the hash of the
    /// samples alone or of a changed byte in a header is refused naming both hashes.
    #[test]
    fn sha512_covers_the_whole_dataset() {
        use sha2::{Digest, Sha512};
        let dir = tempfile::tempdir().unwrap();
        let mut data = padded_ci8_dataset();
        std::fs::write(dir.path().join("x.dat"), &data).unwrap();
        let read_all = |sha: &str| -> Result<usize, String> {
            let meta = serde_json::json!({
                "global": {"core:datatype": "ci8", "core:dataset": "x.dat",
                           "core:trailing_bytes": 7, "core:sha512": sha},
                "captures": [{"core:sample_start": 0, "core:header_bytes": 3},
                             {"core:sample_start": 2, "core:header_bytes": 5}]});
            let p = dir.path().join("x.sigmf-meta");
            std::fs::write(&p, meta.to_string()).unwrap();
            let mut r = IqReader::open(&p, None).map_err(|e| e.to_string())?;
            let mut out = vec![Complex::new(0.0f32, 0.0); 2];
            let mut n = 0;
            loop {
                match r.read(&mut out).map_err(|e| e.to_string())? {
                    0 => return Ok(n),
                    k => n += k,
                }
            }
        };
        let whole = hex::encode(Sha512::digest(&data)).to_ascii_uppercase();
        assert_eq!(read_all(&whole), Ok(3));
        let samples = hex::encode(Sha512::digest([1u8, 2, 3, 4, 5, 6]));
        let e = read_all(&samples).unwrap_err();
        assert!(e.contains("core:sha512 does not match the dataset"), "{e}");
        assert!(
            e.contains(&samples) && e.contains(&whole.to_ascii_lowercase()),
            "{e}"
        );
        data[0] = 9;
        std::fs::write(dir.path().join("x.dat"), &data).unwrap();
        assert!(read_all(&whole).is_err());
        let e = read_all("abc").unwrap_err();
        assert!(e.contains("core:sha512 \"abc\" is not a SHA-512"), "{e}");
    }
}
