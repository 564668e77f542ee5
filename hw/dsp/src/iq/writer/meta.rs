//! The SigMF `.sigmf-meta` document of a recording, and a file's size and hash.
use super::{io, PeakAnnotation, RecordFormat, RecordingMeta};
use crate::error::{Error, Result};
use crate::iq::sigmf::{
    Annotation, Capture, Channels, Extension, Global, Lenient, Rate, RxnodeCapture, RxnodeGlobal,
    SigmfMeta,
};
use sha2::{Digest, Sha256};
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
    let text = |s: &str| Some(Lenient::Valid(s.to_owned()));
    let mut global = Global {
        datatype: text(samples_as.datatype().sigmf_name()),
        sample_rate: Some(Rate(meta.sample_rate_hz).into()),
        version: text("1.2.0"),
        recorder: text(concat!("rxnode-hw ", env!("CARGO_PKG_VERSION"))),
        num_channels: Some(Channels(1).into()),
        sha512: sha512.and_then(text),
        hw: meta.hw.as_deref().and_then(text),
        description: meta.description.as_deref().and_then(text),
        rxnode: RxnodeGlobal {
            clock: clock.cloned(),
        },
        ..Global::default()
    };
    // The radio's settings, in the `rxnode` namespace: SigMF's core has no field for
    // them, and its `antenna` extension describes the antenna, not the radio's port.
    // A non-finite value has no JSON number and is left out.
    let finite = |x: Option<f64>| x.filter(|x| x.is_finite()).map(Lenient::Valid);
    let settings = RxnodeCapture {
        gain_db: finite(meta.gain_db),
        gain_elements: meta
            .gain_elements
            .clone()
            .filter(|g| !g.is_empty())
            .map(Lenient::Valid),
        antenna: meta.antenna.as_deref().and_then(text),
        bandwidth_hz: finite(meta.bandwidth_hz),
    };
    if global.rxnode.clock.is_some() || !settings.is_empty() {
        // An extension namespace of our own, declared so SigMF readers know it.
        global.extensions = Some(Lenient::Valid(vec![Lenient::Valid(Extension {
            name: "rxnode".into(),
            version: "1.0.0".into(),
            optional: true,
        })]));
    }
    let capture = Capture {
        sample_start: Some(0.into()),
        datetime: Some(datetime.into()),
        frequency: meta.center_hz.map(Lenient::Valid),
        rxnode: settings,
        ..Capture::default()
    };
    let whole = |label: &str| Annotation {
        sample_start: Some(0.into()),
        sample_count: Some(samples.into()),
        generator: text("rxnode"),
        label: text(label),
        ..Annotation::default()
    };
    let mut annotations = vec![whole(meta.description.as_deref().unwrap_or("recording"))];
    annotations.extend(peaks.iter().map(|p| Annotation {
        freq_lower_edge: Some(p.freq_lower_hz.into()),
        freq_upper_edge: Some(p.freq_upper_hz.into()),
        comment: p.comment.as_deref().and_then(text),
        ..whole(&p.label)
    }));
    let doc = SigmfMeta {
        global: Some(global),
        captures: vec![capture],
        annotations,
        ..SigmfMeta::default()
    };
    doc.to_file_text().map_err(|e| Error::Source(e.to_string()))
}

/// Size and SHA-256 of a file, read once in 1 MiB blocks.
pub(crate) fn hash_file(path: &Path) -> Result<(u64, String)> {
    let mut f = crate::open_regular(path).map_err(io(path))?;
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
