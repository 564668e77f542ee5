//! The IQ file readers (`rxnode_dsp::IqReader`) on a temp file. Input byte 0
//! picks the format; for SigMF, bytes 1..3 (u16 LE) give the length of the
//! `.sigmf-meta` JSON and the rest is `.sigmf-data`; a `.sigmf` archive is the
//! input as a tar. Opening and reading every sample (every channel's) must never
//! panic, and a reader never returns more than asked.
#![no_main]
use libfuzzer_sys::fuzz_target;
use num_complex::Complex;
use rxnode_dsp::{IqFormat, IqReader};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let (path, format) = match sel % 10 {
        0 => ("x.cf32", Some(IqFormat::Cf32)),
        1 => ("x.cs16", Some(IqFormat::Cs16)),
        2 => ("x.cs8", Some(IqFormat::Cs8)),
        3 => ("x.wav", Some(IqFormat::Wav)),
        4 => ("x.sigmf-data", None),
        5 => ("x.cu8", None),
        6 => ("x.bin", Some(IqFormat::Cf64)),
        7 => ("x.bin", Some(IqFormat::Cs16Be)),
        8 => ("x.sigmf", None),
        _ => ("x.wav", None),
    };
    let p = dir.path().join(path);
    if path.ends_with("sigmf-data") {
        if rest.len() < 2 {
            return;
        }
        let n = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        let body = &rest[2..];
        let n = n.min(body.len());
        if std::fs::write(dir.path().join("x.sigmf-meta"), &body[..n]).is_err()
            || std::fs::write(&p, &body[n..]).is_err()
        {
            return;
        }
    } else if std::fs::write(&p, rest).is_err() {
        return;
    }
    let channel = u32::from(sel / 10 % 3);
    let Ok(mut r) = IqReader::open_channel(&p, format, channel) else {
        return;
    };
    let _ = format!("{:?}", r.info());
    let mut buf = vec![Complex::new(0.0f32, 0.0); 1024];
    let mut total = 0usize;
    // Bounded: the file is at most the input's size.
    for _ in 0..10_000 {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                assert!(n <= buf.len(), "read {n} into {}", buf.len());
                total += n;
            }
        }
    }
    assert!(
        total <= data.len(),
        "{total} samples from {} bytes",
        data.len()
    );
});
