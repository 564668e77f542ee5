//! Unit tests of `writer`.
use super::*;
use crate::iq::sigmf::SigmfMeta;
use crate::iq::IqReader;

/// A WAV recording past 4 GiB would wrap hound's
/// 32-bit data size and leave a corrupt file reported as valid.
#[test]
fn wav_recordings_are_bounded_by_the_formats_4_gib() {
    let d = tempfile::tempdir().unwrap();
    let meta = RecordingMeta {
        sample_rate_hz: 2e6,
        ..Default::default()
    };
    let w = IqWriter::create(&d.path().join("x.wav"), meta.clone(), None).unwrap();
    assert_eq!(w.budget, Some(u64::from(u32::MAX) - WAV_HEADER_RESERVE));
    let w = IqWriter::create(&d.path().join("y.wav"), meta.clone(), Some(1000)).unwrap();
    assert_eq!(w.budget, Some(1000));
    let w = IqWriter::create(&d.path().join("z.cf32"), meta, None).unwrap();
    assert_eq!(w.budget, None);
}

fn ramp(n: usize) -> Vec<Complex<f32>> {
    (0..n)
        .map(|i| Complex::new(i as f32 * 1e-4, -(i as f32) * 2e-4))
        .collect()
}

fn meta() -> RecordingMeta {
    RecordingMeta {
        sample_rate_hz: 2e6,
        center_hz: Some(100e6),
        datetime: Some("2026-01-01T00:00:00Z".into()),
        hw: Some("rxsim".into()),
        description: None,
        ..Default::default()
    }
}

/// A second recording to the same path truncated the first
/// (evidence lost); now it is refused and the first stays whole, in every format.
#[test]
fn an_existing_recording_is_never_overwritten() {
    let d = tempfile::tempdir().unwrap();
    let meta = RecordingMeta {
        sample_rate_hz: 1e6,
        ..Default::default()
    };
    for name in ["a.cf32", "a.wav", "a.sigmf-data"] {
        let p = d.path().join(name);
        let mut w = IqWriter::create(&p, meta.clone(), None).unwrap();
        w.write(&ramp(1000)).unwrap();
        let first = w.finish().unwrap();
        let before: Vec<Vec<u8>> = first
            .iter()
            .map(|f| std::fs::read(&f.path).unwrap())
            .collect();
        let e = IqWriter::create(&p, meta.clone(), None).unwrap_err();
        assert!(e.to_string().contains(name), "{e}");
        for (f, b) in first.iter().zip(&before) {
            assert_eq!(&std::fs::read(&f.path).unwrap(), b, "{name}");
        }
    }
    // The SigMF meta is not overwritten either, even with the data file gone.
    std::fs::remove_file(d.path().join("a.sigmf-data")).unwrap();
    let meta_before = std::fs::read(d.path().join("a.sigmf-meta")).unwrap();
    let mut w = IqWriter::create(&d.path().join("a.sigmf-data"), meta, None).unwrap();
    w.write(&ramp(10)).unwrap();
    assert!(w.finish().is_err());
    assert_eq!(
        std::fs::read(d.path().join("a.sigmf-meta")).unwrap(),
        meta_before
    );
}

#[test]
fn every_format_round_trips_with_correct_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let x = ramp(20_000);
    for name in ["a.cf32", "b.wav", "c.sigmf-meta"] {
        let p = dir.path().join(name);
        let mut w = IqWriter::create(&p, meta(), None).unwrap();
        for c in x.chunks(3001) {
            w.write(c).unwrap();
        }
        let files = w.finish().unwrap();
        for f in &files {
            let (len, hash) = hash_file(&f.path).unwrap();
            assert_eq!(len, f.bytes, "{name}");
            assert_eq!(hash, f.sha256, "{name}");
        }
        let mut r = IqReader::open(&p, None).unwrap();
        assert_eq!(r.info().samples, 20_000);
        let mut back = vec![Complex::default(); 25_000];
        let mut got = 0;
        loop {
            let n = r.read(&mut back[got..got + 4096]).unwrap();
            if n == 0 {
                break;
            }
            got += n;
        }
        assert_eq!(got, 20_000);
        assert_eq!(&back[..got], &x[..], "{name}");
        if name.ends_with("meta") {
            assert_eq!(r.info().sample_rate_hz, Some(2e6));
            assert_eq!(r.info().center_hz, Some(100e6));
            let m: SigmfMeta =
                serde_json::from_slice(&std::fs::read(&files[1].path).unwrap()).unwrap();
            let g = m.global.unwrap();
            let data = std::fs::read(&files[0].path).unwrap();
            assert_eq!(g.sha512, Some(hex::encode(Sha512::digest(&data)).into()));
            assert_eq!(g.datatype, Some("cf32_le".to_owned().into()));
            assert_eq!(
                m.captures[0].datetime,
                Some("2026-01-01T00:00:00Z".to_owned().into())
            );
        }
    }
}

#[test]
fn disk_budget_stops_the_recording_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.cf32");
    let mut w = IqWriter::create(&p, meta(), Some(8 * 1000 + 3)).unwrap();
    w.write(&ramp(600)).unwrap();
    let err = w.write(&ramp(600)).unwrap_err();
    assert!(
        matches!(err, Error::DiskBudget { written: 8000, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("disk budget"));
    assert!(w.write(&ramp(1)).is_err());
    assert!(w.stopped().is_some());
    let files = w.finish().unwrap();
    assert_eq!(files[0].bytes, 8000);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 8000);
}

/// The driver's CS16 recorded as it came: SigMF `ci16_le` (or raw
/// `.cs16`), 4 bytes a sample, the bytes exactly the samples', hashes right; the
/// reader gives them back scaled; no silent conversion either way.
#[test]
fn ci16_recordings_store_the_driver_samples_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<Complex<i16>> = (0..10_000i32)
        .map(|i| Complex::new((i * 3 - 15_000) as i16, (7 - i * 2) as i16))
        .collect();
    let mut want = Vec::new();
    for c in &x {
        want.extend_from_slice(&c.re.to_le_bytes());
        want.extend_from_slice(&c.im.to_le_bytes());
    }
    for (name, format) in [
        ("n.sigmf-meta", IqFormat::Sigmf),
        ("n.cs16", IqFormat::Cs16),
    ] {
        let p = dir.path().join(name);
        let mut w = IqWriter::create_with(&p, format, RecordFormat::Ci16, meta(), None).unwrap();
        assert!(w.write(&ramp(4)).is_err(), "float samples into ci16");
        for c in x.chunks(777) {
            w.write_ci16(c).unwrap();
        }
        assert_eq!(w.samples_written(), 10_000);
        let files = w.finish().unwrap();
        let data = std::fs::read(&files[0].path).unwrap();
        assert_eq!(data, want, "{name}");
        assert_eq!(files[0].bytes, 40_000);
        assert_eq!(files[0].sha256, hex::encode(Sha256::digest(&data)));
        let mut r = IqReader::open(&p, None).unwrap();
        let mut back = vec![Complex::default(); 10_000];
        let mut got = 0;
        while got < back.len() {
            let n = r.read(&mut back[got..]).unwrap();
            if n == 0 {
                break;
            }
            got += n;
        }
        assert_eq!(got, 10_000);
        for (b, c) in back.iter().zip(&x) {
            assert!((b.re - f32::from(c.re) / 32768.0).abs() < 1e-4, "{name}");
        }
        if format == IqFormat::Sigmf {
            let m: SigmfMeta =
                serde_json::from_slice(&std::fs::read(&files[1].path).unwrap()).unwrap();
            let g = m.global.as_ref().unwrap();
            assert_eq!(g.datatype, Some("ci16_le".to_owned().into()));
            // No SHA-512 at full rate (it is optional in SigMF); SHA-256 above.
            assert!(g.sha512.is_none(), "{m:?}");
            assert_eq!(m.annotations[0].sample_count, Some(10_000.into()));
        }
    }
    // A cf32 recording refuses int16 samples; ci16 cannot go into WAV or .cf32.
    let mut w = IqWriter::create(&dir.path().join("f.cf32"), meta(), None).unwrap();
    assert!(w.write_ci16(&x[..4]).is_err());
    for (name, format) in [("w.wav", IqFormat::Wav), ("c.cf32", IqFormat::Cf32)] {
        let e = IqWriter::create_with(
            &dir.path().join(name),
            format,
            RecordFormat::Ci16,
            meta(),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("ci16"), "{e}");
        assert!(!dir.path().join(name).exists());
    }
    // The disk budget counts 4 bytes a sample.
    let mut w = IqWriter::create_with(
        &dir.path().join("b.cs16"),
        IqFormat::Cs16,
        RecordFormat::Ci16,
        meta(),
        Some(4 * 1000 + 3),
    )
    .unwrap();
    w.write_ci16(&x[..600]).unwrap();
    let e = w.write_ci16(&x[..600]).unwrap_err();
    assert!(matches!(e, Error::DiskBudget { written: 4000, .. }), "{e}");
    assert_eq!(w.finish().unwrap()[0].bytes, 4000);
    assert_eq!(RecordFormat::parse("CS16").unwrap(), RecordFormat::Ci16);
    assert!(RecordFormat::parse("cu8").is_err());
}

/// A ci8 recording (a HackRF's CS8) holds the driver's bytes unchanged — SigMF
/// `ci8` and a raw `.cs8` — reads back to the same values ÷ 128, refuses other
/// sample types, and counts 2 bytes a sample against the budget.
#[test]
fn ci8_recordings_store_the_driver_samples_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let x: Vec<Complex<i8>> = (0..1000)
        .map(|i| Complex::new((i % 256 - 128) as i8, (127 - i % 200) as i8))
        .collect();
    let raw: Vec<u8> = x.iter().flat_map(|c| [c.re as u8, c.im as u8]).collect();
    let p = dir.path().join("h.sigmf-data");
    let mut w =
        IqWriter::create_with(&p, IqFormat::Sigmf, RecordFormat::Ci8, meta(), None).unwrap();
    assert!(w.write_ci16(&[Complex::new(1, 1)]).is_err());
    assert!(w.write(&[Complex::new(0.1, 0.1)]).is_err());
    w.write_native(&x).unwrap();
    let files = w.finish().unwrap();
    assert_eq!(files[0].bytes, 2000);
    assert_eq!(std::fs::read(&p).unwrap(), raw);
    let m: SigmfMeta =
        serde_json::from_slice(&std::fs::read(dir.path().join("h.sigmf-meta")).unwrap()).unwrap();
    assert_eq!(m.global.unwrap().datatype, Some("ci8".to_owned().into()));
    let mut r = IqReader::open(&p, None).unwrap();
    let mut got = vec![Complex::new(0.0f32, 0.0); 1000];
    assert_eq!(r.read(&mut got).unwrap(), 1000);
    for (g, c) in got.iter().zip(&x) {
        assert_eq!(
            *g,
            Complex::new(f32::from(c.re) / 128.0, f32::from(c.im) / 128.0)
        );
    }
    let mut w = IqWriter::create_with(
        &dir.path().join("b.cs8"),
        IqFormat::Cs8,
        RecordFormat::Ci8,
        meta(),
        Some(2 * 300 + 1),
    )
    .unwrap();
    let e = w.write_native(&x).unwrap_err();
    assert!(matches!(e, Error::DiskBudget { written: 600, .. }), "{e}");
    assert_eq!(w.finish().unwrap()[0].bytes, 600);
    let e = IqWriter::create_with(
        &dir.path().join("c.cs16"),
        IqFormat::Cs16,
        RecordFormat::Ci8,
        meta(),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("ci8: .cs8 or SigMF"), "{e}");
    assert_eq!(RecordFormat::parse("CS8").unwrap(), RecordFormat::Ci8);
}

#[test]
fn cannot_record_integer_formats() {
    let dir = tempfile::tempdir().unwrap();
    assert!(IqWriter::create(&dir.path().join("x.cs16"), meta(), None).is_err());
}

/// Two interleaved channels are read one channel at a time (a channel it does not
/// have is refused by name); capture segments at different centre frequencies are
/// refused naming them (one axis for both would be wrong); segments that share one
/// frequency are read.
#[test]
fn multi_channel_read_per_channel_and_multi_frequency_sigmf_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.sigmf-data");
    let mut w = IqWriter::create(&p, meta(), None).unwrap();
    w.write(&ramp(1000)).unwrap();
    w.finish().unwrap();
    let mp = p.with_extension("sigmf-meta");
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mp).unwrap()).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut m = original.clone();
        f(&mut m);
        std::fs::write(&mp, serde_json::to_vec(&m).unwrap()).unwrap();
        IqReader::open(&p, None).map(|r| r.info().center_hz)
    };
    assert_eq!(
        edit(&|m| m["global"]["core:num_channels"] = 2.into()).unwrap(),
        Some(100e6)
    );
    let mut r = IqReader::open_channel(&p, None, 1).unwrap();
    assert_eq!((r.info().samples, r.info().num_channels), (500, 2));
    let mut x = vec![Complex::new(0.0, 0.0); 600];
    assert_eq!(r.read(&mut x).unwrap(), 500);
    let want = ramp(1000);
    assert_eq!((x[0], x[499]), (want[1], want[999]));
    let e = IqReader::open_channel(&p, None, 2).unwrap_err();
    assert!(e.to_string().contains("core:num_channels is 2"), "{e}");
    let e = edit(&|m| {
        m["captures"] = serde_json::json!([
            {"core:sample_start": 0, "core:frequency": 100e6},
            {"core:sample_start": 500, "core:frequency": 101e6}
        ])
    })
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("2 capture segments at different centre frequencies"),
        "{msg}"
    );
    assert!(msg.contains("segment 1 at 101000000 Hz"), "{msg}");
    let same = edit(&|m| {
        m["captures"] = serde_json::json!([
            {"core:sample_start": 0, "core:frequency": 100e6},
            {"core:sample_start": 500, "core:frequency": 100e6}
        ])
    });
    assert_eq!(same.unwrap(), Some(100e6));
}

/// A WAV recording carried no `auxi` chunk, so its centre was lost ("centre
/// unknown" when read back); now it carries SpectraVue's `auxi` (start time,
/// centre, rate) before the data, and hound still reads every sample.
#[test]
fn wav_recordings_carry_their_centre_and_start_in_an_auxi_chunk() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.wav");
    let meta = RecordingMeta {
        center_hz: Some(433.92e6),
        datetime: Some("2024-05-02T14:12:03.250Z".into()),
        ..meta()
    };
    let mut w = IqWriter::create(&p, meta, None).unwrap();
    let x = ramp(5000);
    w.write(&x).unwrap();
    let files = w.finish().unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(files[0].bytes, bytes.len() as u64);
    let riff = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    assert_eq!(u64::from(riff), bytes.len() as u64 - 8, "RIFF size");
    let at = bytes.windows(4).position(|c| c == b"auxi").unwrap();
    let data = bytes.windows(4).position(|c| c == b"data").unwrap();
    assert!(at < data, "auxi comes before the data chunk");
    let body = &bytes[at + 8..at + 8 + 164];
    let word = |i: usize| u16::from_le_bytes([body[2 * i], body[2 * i + 1]]);
    // SYSTEMTIME: year, month, weekday (Thursday = 4), day, h, m, s, ms.
    assert_eq!(
        (0..8).map(word).collect::<Vec<_>>(),
        [2024, 5, 4, 2, 14, 12, 3, 250]
    );
    let dword = |o: usize| u32::from_le_bytes(body[o..o + 4].try_into().unwrap());
    assert_eq!((dword(32), dword(36)), (433_920_000, 2_000_000));
    let mut h = hound::WavReader::open(&p).unwrap();
    assert_eq!((h.spec().channels, h.spec().sample_rate), (2, 2_000_000));
    let s: Vec<f32> = h.samples::<f32>().map(|s| s.unwrap()).collect();
    assert_eq!(s.len(), 2 * x.len());
    assert_eq!((s[2 * 4999], s[2 * 4999 + 1]), (x[4999].re, x[4999].im));
    let r = IqReader::open(&p, None).unwrap();
    assert_eq!(r.info().center_hz, Some(433.92e6));
    assert_eq!(r.info().samples, 5000);
}
