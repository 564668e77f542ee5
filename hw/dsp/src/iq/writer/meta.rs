//! The SigMF `.sigmf-meta` document of a recording, and a file's size and hash.
use super::{io, PeakAnnotation, RecordFormat, RecordingMeta};
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The `.sigmf-meta` JSON (SigMF 1.2): global, one capture, one annotation over
/// the whole recording and one per reported peak.
pub(super) fn sigmf_meta(
    meta: &RecordingMeta,
    samples_as: RecordFormat,
    sha512: Option<&str>,
    samples: u64,
    peaks: &[PeakAnnotation],
    clock: Option<&serde_json::Value>,
) -> Result<Vec<u8>> {
    let datetime = match &meta.datetime {
        Some(d) => d.clone(),
        None => time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
    };
    let mut global = serde_json::json!({
        "core:datatype": samples_as.datatype().sigmf_name(),
        "core:sample_rate": meta.sample_rate_hz,
        "core:version": "1.2.0",
        "core:recorder": concat!("rxnode-hw ", env!("CARGO_PKG_VERSION")),
        "core:num_channels": 1,
    });
    if let Some(h) = sha512 {
        global["core:sha512"] = h.into();
    }
    if let Some(hw) = &meta.hw {
        global["core:hw"] = hw.clone().into();
    }
    if let Some(d) = &meta.description {
        global["core:description"] = d.clone().into();
    }
    let mut ours = false;
    if let Some(c) = clock {
        global["rxnode:clock"] = c.clone();
        ours = true;
    }
    let mut capture = serde_json::json!({ "core:sample_start": 0, "core:datetime": datetime });
    if let Some(f) = meta.center_hz {
        capture["core:frequency"] = f.into();
    }
    // The radio's settings, in the `rxnode` namespace: SigMF's core has no field for
    // them, and its `antenna` extension describes the antenna, not the radio's port.
    let settings = [
        ("rxnode:gain_db", meta.gain_db.map(serde_json::Value::from)),
        (
            "rxnode:gain_elements",
            meta.gain_elements
                .as_ref()
                .filter(|g| !g.is_empty())
                .map(|g| serde_json::json!(g)),
        ),
        ("rxnode:antenna", meta.antenna.clone().map(Into::into)),
        ("rxnode:bandwidth_hz", meta.bandwidth_hz.map(Into::into)),
    ];
    for (k, v) in settings {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            capture[k] = v;
            ours = true;
        }
    }
    if ours {
        // An extension namespace of our own, declared so SigMF readers know it.
        global["core:extensions"] = serde_json::json!([
            {"name": "rxnode", "version": "1.0.0", "optional": true}
        ]);
    }
    let mut annotations = vec![serde_json::json!({
        "core:sample_start": 0,
        "core:sample_count": samples,
        "core:generator": "rxnode",
        "core:label": meta.description.as_deref().unwrap_or("recording"),
    })];
    for p in peaks {
        let mut a = serde_json::json!({
            "core:sample_start": 0,
            "core:sample_count": samples,
            "core:generator": "rxnode",
            "core:label": p.label,
            "core:freq_lower_edge": p.freq_lower_hz,
            "core:freq_upper_edge": p.freq_upper_hz,
        });
        if let Some(c) = &p.comment {
            a["core:comment"] = c.clone().into();
        }
        annotations.push(a);
    }
    let doc = serde_json::json!({
        "global": global,
        "captures": [capture],
        "annotations": annotations,
    });
    let mut text = serde_json::to_vec_pretty(&doc).map_err(|e| Error::Source(e.to_string()))?;
    text.push(b'\n');
    Ok(text)
}

/// Size and SHA-256 of a file, read once in 1 MiB blocks.
pub(crate) fn hash_file(path: &Path) -> Result<(u64, String)> {
    let mut f = File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hex::encode(h.finalize())))
}
