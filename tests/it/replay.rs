//! A recording replayed as a radio: rxsim's `replay=FILE` streams a capture that
//! `rxnode --sim capture --record` wrote, so the same capture and CLKIN check give
//! the same answer from the file as from the radio; `SoapySDRUtil` sees the
//! replaying rxsim as any rxsim radio, offering only the recording's rate.
use crate::util::{run_fed, show, text, Lab};
use serde::Deserialize;
use std::path::Path;
use std::process::{Command, Output};

#[derive(Debug, Deserialize)]
struct CaptureT {
    status: String,
    peaks: Vec<PeakT>,
    clkin: Option<ClkinT>,
}
#[derive(Debug, Deserialize)]
struct PeakT {
    frequency_hz: f64,
    power_db: f64,
}
#[derive(Debug, Deserialize)]
struct ClkinT {
    status: String,
    ppm: Option<f64>,
    ppm_uncertainty: Option<f64>,
}

fn capture(lab: &Lab, device: &str, secs: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "--sim",
        "capture",
        "-d",
        device,
        "-f",
        "100M",
        "-r",
        "2M",
        "-t",
        secs,
        "--clkin-tone-hz",
        "100.2M",
        "--clock-source",
        "external",
        "--json",
    ];
    args.extend_from_slice(extra);
    run_fed(
        lab.rxnode()
            .args(&args)
            .env("RXSIM_EVENT_LOG", lab.events_log()),
        b"",
    )
}

fn parsed(o: &Output) -> CaptureT {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(o)))
}

/// The peak and the CLKIN answer of a capture replayed from its SigMF recording
/// (and from its data as a raw cf32 file) are those of the live capture (the
/// replaying radio is on an external reference too: the CLKIN check reads its
/// lock sensor; the reference error is in the samples).
#[test]
fn a_replayed_recording_gives_the_live_captures_peak_and_clkin() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let meta = d.join("rec.sigmf-meta");
    let live = capture(
        &lab,
        "driver=rxsim,serial=REC,tone_hz=100.2e6,tone_dbfs=-30,ext_ref=1,ext_ppm=0.2",
        "0.5",
        &["--record", meta.to_str().unwrap()],
    );
    expect_exit!(live, 0, "live capture");
    let live = parsed(&live);
    let raw = d.join("rec.cf32");
    std::fs::copy(d.join("rec.sigmf-data"), &raw).unwrap();
    for device in [
        format!("driver=rxsim,serial=PLAY1,ext_ref=1,replay={}", meta.display()),
        format!(
            "driver=rxsim,serial=PLAY2,ext_ref=1,replay={},replay_format=cf32,replay_rate=2e6,replay_freq=100e6",
            raw.display()
        ),
    ] {
        let out = capture(&lab, &device, "0.5", &[]);
        expect_exit!(out, 0, "replay {device}");
        let got = parsed(&out);
        assert_eq!(got.status, live.status);
        let (a, b) = (&live.peaks[0], &got.peaks[0]);
        assert!((a.frequency_hz - b.frequency_hz).abs() < 1.0, "{a:?} {b:?}");
        assert!((a.power_db - b.power_db).abs() < 0.01, "{a:?} {b:?}");
        let (a, b) = (live.clkin.as_ref().unwrap(), got.clkin.as_ref().unwrap());
        assert_eq!((a.status.as_str(), b.status.as_str()), ("PASS", "PASS"));
        let (pa, pb) = (a.ppm.unwrap(), b.ppm.unwrap());
        assert!((pa - 0.2).abs() < 0.01, "live {pa}");
        assert!(
            (pa - pb).abs() <= a.ppm_uncertainty.unwrap().max(1e-9),
            "live {pa} replayed {pb}"
        );
    }
    // Played once: past the end nothing arrives, and the radio's log says so.
    let out = capture(
        &lab,
        &format!(
            "driver=rxsim,serial=ONCE,replay={},replay_loop=0",
            meta.display()
        ),
        "1",
        &[],
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let log = std::fs::read_to_string(lab.events_log()).unwrap();
    assert!(
        log.contains("replayEnd RX serial=ONCE"),
        "{log}\n{}",
        show(&out)
    );
    // SoapySDRUtil sees it as a radio at the recording's one rate.
    let probe = soapy_util(
        &lab,
        &format!("--probe=driver=rxsim,replay={}", meta.display()),
    );
    assert!(probe.status.success(), "{}", show(&probe));
    let p = text(&probe.stdout);
    assert!(p.contains("Sample rates: 2 MSps"), "{p}");
    // A recording it cannot read is refused when the device is made, naming it.
    let bad = capture(
        &lab,
        "driver=rxsim,serial=BAD,replay=/nonexistent.sigmf-meta",
        "0.5",
        &[],
    );
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        text(&bad.stderr).contains("/nonexistent.sigmf-meta"),
        "{}",
        show(&bad)
    );
}

/// `SoapySDRUtil ARG` with only the rxsim module that `rxnode --sim` installs.
fn soapy_util(lab: &Lab, arg: &str) -> Output {
    let cache = lab.dir.path().join("cache");
    let out = lab
        .rxnode()
        .args(["--sim", "inventory", "--dry-run", "--json"])
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .unwrap();
    expect_exit!(out, 0, "rxnode --sim inventory");
    let module = std::fs::read_dir(cache.join("rxnode"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p: &std::path::PathBuf| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("librxsim-"))
        })
        .expect("rxnode --sim installed librxsim-*");
    let empty = lab.dir.path().join("empty-root");
    std::fs::create_dir_all(&empty).unwrap();
    Command::new("SoapySDRUtil")
        .arg(arg)
        .env("SOAPY_SDR_PLUGIN_PATH", Path::new(&module))
        .env("SOAPY_SDR_ROOT", &empty)
        .output()
        .expect("SoapySDRUtil (apt-get install soapysdr-tools; scripts/setup.sh)")
}

#[derive(Debug, Deserialize)]
struct LevelT {
    mean_power_dbfs: Option<f64>,
}

/// rtl_sdr's unsigned bytes replayed by rxsim read as `analyze` reads the same file,
/// (x − 127.5)/128: a recording of constant power (bytes 200 and 55 in turn, every
/// sample 72.5/128 per rail) has the same mean power streamed as analysed (the replay
/// read them over 127.5, 0.034 dB louder).
#[test]
fn a_replayed_cu8_recording_reads_as_analyze_reads_it() {
    let lab = Lab::new();
    let raw = lab.dir.path().join("rtl.cu8");
    let bytes: Vec<u8> = (0..1 << 20)
        .flat_map(|i| if i % 2 == 0 { [200u8, 55] } else { [55, 200] })
        .collect();
    std::fs::write(&raw, &bytes).unwrap();
    let want = 10.0 * (2.0 * (72.5f64 / 128.0).powi(2)).log10();
    let analysed = run_fed(
        lab.rxnode().args([
            "analyze",
            raw.to_str().unwrap(),
            "-r",
            "2M",
            "-f",
            "100M",
            "--json",
        ]),
        b"",
    );
    let a: LevelT = serde_json::from_slice(&analysed.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(&analysed)));
    let device = format!(
        "driver=rxsim,serial=RTL,replay={},replay_format=cu8,replay_rate=2e6,replay_freq=100e6",
        raw.display()
    );
    let out = run_fed(
        lab.rxnode()
            .args([
                "--sim", "capture", "-d", &device, "-f", "100M", "-r", "2M", "-t", "0.2", "--json",
            ])
            .env("RXSIM_EVENT_LOG", lab.events_log()),
        b"",
    );
    let c: LevelT = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(&out)));
    let (a, c) = (a.mean_power_dbfs.unwrap(), c.mean_power_dbfs.unwrap());
    assert!(
        (a - want).abs() < 1e-4,
        "analyze {a} dBFS, the bytes {want}"
    );
    assert!(
        (c - want).abs() < 1e-3,
        "replayed {c} dBFS, the bytes {want}"
    );
}

/// A SigMF meta that rxsim's replay, streaming the data file from its first byte as one
/// channel, would read otherwise than `analyze` is refused naming the key: two
/// channels were interleaved into one stream (4 phantom carriers, PASS), a 4096-byte
/// header was replayed as samples (0.13 % "clipped", FAIL); a `core:sample_rate`
/// named twice, segments out of order and a segment placed past the data's end (its
/// samples lost), all refused by `analyze`, were replayed (at the first rate; as if whole).
#[test]
fn a_replay_refuses_a_sigmf_meta_it_would_misread() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let samples: Vec<u8> = (0..1 << 16)
        .flat_map(|i| {
            let p = 0.1 * f32::from(i as u16 % 1000);
            [p.cos() * 0.3, p.sin() * 0.3]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    for (name, extra, key) in [
        (
            "two",
            r#""core:num_channels": 2,"#,
            "core:num_channels is not 1",
        ),
        ("hdr", "", "core:header_bytes is not 0"),
        (
            "tail",
            r#""core:trailing_bytes": 8,"#,
            "core:trailing_bytes is not 0",
        ),
        (
            "dup",
            r#""core:sample_rate": 1000000,"#,
            "core:sample_rate is named twice",
        ),
        ("lost", "", "it lacks the samples the meta describes"),
        (
            "unsorted",
            "",
            "segments must be sorted by core:sample_start",
        ),
    ] {
        // "lost": a second segment placed past the data's 65536 samples (its samples lost);
        // "unsorted": segments out of order.
        let header = match name {
            "hdr" => r#", "core:header_bytes": 8"#,
            "lost" => r#"}, {"core:sample_start": 70000, "core:frequency": 100e6"#,
            "unsorted" => {
                r#"}, {"core:sample_start": 900, "core:frequency": 100e6}, {"core:sample_start": 500, "core:frequency": 100e6"#
            }
            _ => "",
        };
        let meta = format!(
            r#"{{"global": {{"core:datatype": "cf32_le", "core:sample_rate": 2000000, {extra}
                "core:version": "1.2.0"}},
               "captures": [{{"core:sample_start": 0, "core:frequency": 100e6{header}}}],
               "annotations": []}}"#
        );
        let m = d.join(format!("{name}.sigmf-meta"));
        std::fs::write(&m, meta).unwrap();
        std::fs::write(d.join(format!("{name}.sigmf-data")), &samples).unwrap();
        let out = capture(
            &lab,
            &format!("driver=rxsim,serial={name},replay={}", m.display()),
            "0.2",
            &[],
        );
        assert_ne!(out.status.code(), Some(0), "{}", show(&out));
        assert!(text(&out.stderr).contains(key), "{key}: {}", show(&out));
    }
}

/// A "raw" file that is a container `analyze` reads is refused by a replay given
/// `replay_format`, naming what it is, never its headers streamed as samples: a float32
/// IQ WAV's 44-byte header swapped I and Q (its +100 kHz tone captured at 99.9 MHz,
/// PASS), a `.sigmf` archive's tar headers and meta, a GNU Radio File Meta Sink
/// header (its first bytes as GNU Radio writes them; o271 records with GNU Radio
/// itself), an SDRangel `.sdriq` header (told by its CRC-32; replayed from its header
/// when no `replay_format` is given). The same samples as a raw `.cf32` still replay, the tone at +100 kHz.
#[test]
fn a_replay_refuses_a_container_given_as_a_raw_file() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let n = 1u32 << 16;
    let samples: Vec<u8> = (0..n)
        .flat_map(|i| {
            let p = std::f32::consts::TAU * 0.05 * (i % 20) as f32; // +100 kHz at 2 MS/s
            [p.cos() * 0.1, p.sin() * 0.1]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(d.join("tone.cf32"), &samples).unwrap();
    // WAVE_FORMAT_IEEE_FLOAT, 2 channels (I, Q), 32 bits, 2 MS/s: the 44-byte header.
    let mut wav = b"RIFF".to_vec();
    wav.extend((36 + samples.len() as u32).to_le_bytes());
    wav.extend(b"WAVEfmt ");
    wav.extend(16u32.to_le_bytes());
    for v in [3u16, 2] {
        wav.extend(v.to_le_bytes());
    }
    wav.extend(2_000_000u32.to_le_bytes());
    wav.extend(16_000_000u32.to_le_bytes());
    for v in [8u16, 32] {
        wav.extend(v.to_le_bytes());
    }
    wav.extend(b"data");
    wav.extend((samples.len() as u32).to_le_bytes());
    wav.extend(&samples);
    std::fs::write(d.join("tone.wav"), wav).unwrap();
    let mut gr = vec![0x09u8, 0x07, 0x02, 0x00, 0x04, b's', b't', b'r', b't', 0x0b];
    gr.extend([0u8; 7]);
    gr.extend(&samples);
    std::fs::write(d.join("gr.cfile"), gr).unwrap();
    // SDRangel's .sdriq header (2 MS/s, 100 MHz, 16-bit), its CRC-32 as zlib computes it.
    let mut sdriq = Vec::new();
    sdriq.extend(2_000_000u32.to_le_bytes());
    sdriq.extend(100_000_000u64.to_le_bytes());
    sdriq.extend(0u64.to_le_bytes());
    sdriq.extend(16u32.to_le_bytes());
    sdriq.extend(0u32.to_le_bytes());
    let mut crc = !0u32;
    for &b in &sdriq {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    sdriq.extend((!crc).to_le_bytes());
    sdriq.extend(&samples);
    std::fs::write(d.join("rec.sdriq"), sdriq).unwrap();
    std::fs::write(d.join("tone.sigmf-data"), &samples).unwrap();
    std::fs::write(
        d.join("tone.sigmf-meta"),
        r#"{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"},
            "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}"#,
    )
    .unwrap();
    let tar = Command::new("python3")
        .current_dir(d)
        .args([
            "-c",
            "import tarfile\nwith tarfile.open('tone.sigmf', 'w', format=tarfile.USTAR_FORMAT) as a:\n \
             a.add('tone.sigmf-meta', 'tone/tone.sigmf-meta'); a.add('tone.sigmf-data', 'tone/tone.sigmf-data')",
        ])
        .output()
        .expect("python3");
    assert!(tar.status.success(), "{}", show(&tar));
    let replay = |file: &str| {
        capture(
            &lab,
            &format!(
                "driver=rxsim,serial={file},replay={},replay_format=cf32,replay_rate=2e6,replay_freq=100e6",
                d.join(file).display()
            ),
            "0.1",
            &[],
        )
    };
    for (file, what) in [
        ("tone.wav", "it is a WAV recording"),
        ("tone.sigmf", "it is a tar archive (a .sigmf archive"),
        ("gr.cfile", "it is a GNU Radio File Meta Sink recording"),
        (
            "rec.sdriq",
            "it is an SDRangel .sdriq recording (16-bit I/Q",
        ),
    ] {
        let out = replay(file);
        assert_ne!(out.status.code(), Some(0), "{file}: {}", show(&out));
        assert!(text(&out.stderr).contains(what), "{file}: {}", show(&out));
    }
    let out = replay("tone.cf32");
    let c = parsed(&out);
    assert!(
        (c.peaks[0].frequency_hz - 100.1e6).abs() < 1e3,
        "{}",
        show(&out)
    );
}

/// A file that ends mid-sample is refused by a replay as `analyze` refuses it (a
/// truncated recording, or a wrong `replay_format`, which gives the same symptom),
/// naming its byte count and the sample size: rxsim used to stream it without its
/// last bytes, PASS. A raw `cu8` and a SigMF `cf32_le` dataset alike.
#[test]
fn a_replay_refuses_a_file_that_ends_mid_sample() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let bytes: Vec<u8> = (0..100_001u32).map(|i| (i * 37 % 256) as u8).collect();
    std::fs::write(d.join("cut.cu8"), &bytes).unwrap();
    std::fs::write(d.join("cut.sigmf-data"), &bytes[..100_003 - 8]).unwrap();
    std::fs::write(
        d.join("cut.sigmf-meta"),
        r#"{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"},
            "captures": [{"core:sample_start": 0, "core:frequency": 100e6}], "annotations": []}"#,
    )
    .unwrap();
    for (device, file, what) in [
        (
            "replay_format=cu8,replay_rate=2e6,replay_freq=100e6,replay=",
            "cut.cu8",
            "100001 bytes is not a whole number of cu8 samples (2 bytes each)",
        ),
        (
            "replay=",
            "cut.sigmf-meta",
            "99995 bytes is not a whole number of cf32_le samples (8 bytes each)",
        ),
    ] {
        let analysed = run_fed(
            lab.rxnode()
                .args(["analyze", d.join(file).to_str().unwrap(), "-r", "2M"]),
            b"",
        );
        assert_eq!(analysed.status.code(), Some(2), "{}", show(&analysed));
        let out = capture(
            &lab,
            &format!(
                "driver=rxsim,serial={file},{device}{}",
                d.join(file).display()
            ),
            "0.1",
            &[],
        );
        assert_ne!(out.status.code(), Some(0), "{file}: {}", show(&out));
        assert!(text(&out.stderr).contains(what), "{file}: {}", show(&out));
    }
}

/// A tone at +100 kHz in a little noise (a fixed pseudo-random sequence) over 2^17 cf32
/// samples at 2 MS/s: the bytes of a SigMF dataset.
fn tone_cf32() -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.01
    };
    (0..1u32 << 17)
        .flat_map(|i| {
            let p = std::f64::consts::TAU * 0.05 * f64::from(i % 20);
            [
                (p.cos() * 0.3 + noise()) as f32,
                (p.sin() * 0.3 + noise()) as f32,
            ]
        })
        .flat_map(f32::to_le_bytes)
        .collect()
}

/// `rxnode --sim capture` of `driver=rxsim,DEVICE` tuned to `freq`, 0.1 s at 2 MS/s.
fn plain_capture(lab: &Lab, device: &str, freq: &str) -> Output {
    run_fed(
        lab.rxnode().args([
            "--sim",
            "capture",
            "-d",
            &format!("driver=rxsim,{device}"),
            "-f",
            freq,
            "-r",
            "2M",
            "-t",
            "0.1",
            "--json",
        ]),
        b"",
    )
}

/// A SigMF meta for a cf32_le dataset at 2 MS/s, with `extra` global keys and the
/// capture segment's `capture` keys.
fn meta_json(extra: &str, capture: &str) -> String {
    format!(
        r#"{{"global": {{"core:datatype": "cf32_le", "core:sample_rate": 2000000, {extra}
            "core:version": "1.2.0"}},
           "captures": [{{"core:sample_start": 0{capture}}}], "annotations": []}}"#
    )
}

/// A replayed SigMF dataset whose meta states `core:sha512` is checked against it, as
/// `analyze` checks it: a dataset cut to half its samples (whole samples, so nothing
/// else gives it away) is refused when the radio is made, naming the meta, the dataset
/// and both hashes; it used to be replayed as if whole, PASS. The whole dataset, whose
/// hash matches, replays (its tone where it was recorded).
#[test]
fn a_replay_refuses_a_dataset_that_does_not_match_its_sha512() {
    use sha2::{Digest, Sha512};
    let lab = Lab::new();
    let d = lab.dir.path();
    let data = tone_cf32();
    let want = hex::encode(Sha512::digest(&data));
    let hash = format!(r#""core:sha512": "{}","#, want.to_uppercase());
    for (name, bytes) in [("whole", &data[..]), ("cut", &data[..data.len() / 2])] {
        std::fs::write(d.join(format!("{name}.sigmf-data")), bytes).unwrap();
        std::fs::write(
            d.join(format!("{name}.sigmf-meta")),
            meta_json(&hash, r#", "core:frequency": 100e6"#),
        )
        .unwrap();
    }
    let meta = d.join("cut.sigmf-meta");
    let analysed = run_fed(lab.rxnode().args(["analyze", meta.to_str().unwrap()]), b"");
    assert_eq!(analysed.status.code(), Some(2), "{}", show(&analysed));
    let out = capture(
        &lab,
        &format!("driver=rxsim,serial=CUT,replay={}", meta.display()),
        "0.1",
        &[],
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let got = hex::encode(Sha512::digest(&data[..data.len() / 2]));
    let e = text(&out.stderr);
    for part in [
        format!("{}: core:sha512 does not match the dataset", meta.display()),
        d.join("cut.sigmf-data").display().to_string(),
        format!("the meta says {want}, the data hashes to {got}"),
    ] {
        assert!(e.contains(&part), "{part}: {}", show(&out));
    }
    let whole = plain_capture(
        &lab,
        &format!(
            "serial=WHOLE,replay={}",
            d.join("whole.sigmf-meta").display()
        ),
        "100M",
    );
    expect_exit!(whole, 0, "the whole dataset, its hash matching");
    let c = parsed(&whole);
    assert!(
        (c.peaks[0].frequency_hz - 100.1e6).abs() < 1e3,
        "{}",
        show(&whole)
    );
}

/// A replay is never tuned to a centre nobody stated: a SigMF recording whose capture
/// segment states no `core:frequency` (one only in an annotation is no tuning) and a raw
/// file without `replay_freq` are refused when the radio is made (they used to become a
/// radio at 100 MHz, or at the annotation's frequency), one stated by only one of two
/// segments is refused as `analyze` refuses it, `replay_freq` states the centre of
/// one that has none and is refused when it disagrees with the meta's, and tuning a
/// replay away from its centre is refused (a 433.92 MHz recording's +100 kHz tone was
/// reported at 100.1 MHz, PASS).
#[test]
fn a_replay_is_never_tuned_to_a_centre_the_recording_does_not_state() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let data = tone_cf32();
    for name in ["nofreq", "ism"] {
        std::fs::write(d.join(format!("{name}.sigmf-data")), &data).unwrap();
    }
    std::fs::write(d.join("nofreq.sigmf-meta"), meta_json("", "")).unwrap();
    // A centre only in an annotation (not the tuning), and in one of two segments.
    for name in ["annotated", "half"] {
        std::fs::write(d.join(format!("{name}.sigmf-data")), &data).unwrap();
    }
    std::fs::write(
        d.join("annotated.sigmf-meta"),
        r#"{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0"},
            "captures": [{"core:sample_start": 0}],
            "annotations": [{"core:sample_start": 0, "core:sample_count": 10, "core:frequency": 433.92e6}]}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("half.sigmf-meta"),
        meta_json(
            "",
            r#"}, {"core:sample_start": 1000, "core:frequency": 433.92e6"#,
        ),
    )
    .unwrap();
    let annotated = d.join("annotated.sigmf-meta").display().to_string();
    let half = d.join("half.sigmf-meta").display().to_string();
    std::fs::write(
        d.join("ism.sigmf-meta"),
        meta_json("", r#", "core:frequency": 433.92e6"#),
    )
    .unwrap();
    std::fs::write(d.join("raw.cf32"), &data).unwrap();
    let nofreq = d.join("nofreq.sigmf-meta").display().to_string();
    let ism = d.join("ism.sigmf-meta").display().to_string();
    let raw = d.join("raw.cf32").display().to_string();
    for (device, freq, refused) in [
        (
            format!("replay={nofreq}"),
            "100M",
            format!("{nofreq} states no core:frequency"),
        ),
        (
            format!("replay={annotated}"),
            "433.92M",
            format!("{annotated} states no core:frequency"),
        ),
        (
            format!("replay={half}"),
            "433.92M",
            "1 of its 2 capture segments state no core:frequency".to_string(),
        ),
        (
            format!("replay={raw},replay_format=cf32,replay_rate=2e6"),
            "100M",
            "replay_rate=R and replay_freq=F".to_string(),
        ),
        (
            format!("replay={ism},replay_freq=100e6"),
            "100M",
            format!("replay_freq=100e6 disagrees with {ism}'s core:frequency 433920000 Hz"),
        ),
        (
            format!("replay={ism}"),
            "100M",
            "frequency 100000000 Hz: the replayed recording was made at 433920000 Hz".to_string(),
        ),
    ] {
        let out = plain_capture(&lab, &device, freq);
        assert_ne!(out.status.code(), Some(0), "{device}: {}", show(&out));
        assert!(
            text(&out.stderr).contains(&refused),
            "{refused}: {}",
            show(&out)
        );
    }
    for (device, freq, peak) in [
        (
            format!("replay={nofreq},replay_freq=433.92e6"),
            "433.92M",
            434.02e6,
        ),
        (format!("replay={ism}"), "433.92M", 434.02e6),
        (
            format!("replay={raw},replay_format=cf32,replay_rate=2e6,replay_freq=100e6"),
            "100M",
            100.1e6,
        ),
    ] {
        let out = plain_capture(&lab, &device, freq);
        expect_exit!(out, 0, "a replay at its stated centre");
        let c = parsed(&out);
        assert!(
            (c.peaks[0].frequency_hz - peak).abs() < 1e3,
            "{device}: {}",
            show(&out)
        );
    }
}

/// A SigMF meta larger than the 16 MiB a replay reads is refused naming the limit, never
/// read in part: a meta whose long `core:description` pushed its `core:sha512` past the
/// cut had a dataset cut to half its samples replayed unchecked, PASS.
#[test]
fn a_replay_refuses_a_meta_too_large_to_read_whole() {
    use sha2::{Digest, Sha512};
    let lab = Lab::new();
    let d = lab.dir.path();
    let data = tone_cf32();
    std::fs::write(d.join("long.sigmf-data"), &data[..data.len() / 2]).unwrap();
    let meta = format!(
        r#"{{"captures": [{{"core:sample_start": 0, "core:frequency": 100e6}}], "annotations": [],
            "global": {{"core:datatype": "cf32_le", "core:sample_rate": 2000000, "core:version": "1.2.0",
            "core:description": "{}", "core:sha512": "{}"}}}}"#,
        "x".repeat((1 << 24) + 100_000),
        hex::encode(Sha512::digest(&data))
    );
    let path = d.join("long.sigmf-meta");
    std::fs::write(&path, meta).unwrap();
    let out = plain_capture(&lab, &format!("replay={}", path.display()), "100M");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr).contains(&format!("{} is larger than 16777216 bytes", path.display())),
        "{}",
        show(&out)
    );
}

/// A replay reads its SigMF meta by the rule `analyze` reads it by, JSON: a meta
/// `analyze` refuses is refused when the radio is made, naming what is wrong, never read
/// by a laxer look for its keys. `core:sample_rate` written `0x1E8480` (a number to C's
/// strtod, 2 MS/s, none to JSON) was replayed at 2 MS/s, PASS; so was a centre written
/// `0x5F5E100` (100 MHz), a meta with a UTF-8 byte order mark, an annotation edge of
/// `Infinity`, a second document after the meta and an extension rxnode does not know
/// declared `"optional": false`. The same meta written as JSON replays (its tone where it
/// was recorded) and reads in `analyze`.
#[test]
fn a_replay_refuses_a_meta_that_analyze_refuses() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let data = tone_cf32();
    let plain = meta_json("", r#", "core:frequency": 100e6"#);
    let cases: [(&str, String, &str); 10] = [
        ("json", plain.clone(), ""),
        (
            "huge",
            plain.replace(
                r#""annotations": []"#,
                r#""annotations": [{"core:sample_start": 0, "core:freq_lower_edge": 1e999}]"#,
            ),
            r#"the value of "core:freq_lower_edge" is a number out of range"#,
        ),
        (
            "hexrate",
            plain.replace("2000000", "0x1E8480"),
            r#"the value of "core:sample_rate" is not JSON"#,
        ),
        (
            "hexfreq",
            plain.replace("100e6", "0x5F5E100"),
            r#"the value of "core:frequency" is not JSON"#,
        ),
        ("bom", format!("\u{feff}{plain}"), "byte order mark (BOM"),
        (
            "inf",
            plain.replace(
                r#""annotations": []"#,
                r#""annotations": [{"core:sample_start": 0, "core:freq_lower_edge": Infinity}]"#,
            ),
            r#"the value of "core:freq_lower_edge" is not JSON"#,
        ),
        (
            "two",
            format!("{plain}\n{plain}"),
            "text after the JSON document",
        ),
        (
            "ext",
            meta_json(
                r#""core:extensions": [{"name": "acme", "version": "2.1.0", "optional": false}],"#,
                r#", "core:frequency": 100e6"#,
            ),
            r#"core:extensions[0] declares the extension "acme""#,
        ),
        // The form before SigMF 1.0: namespace → "optional" or "required".
        (
            "ext0",
            meta_json(
                r#""core:extensions": {"antenna": "optional", "acme": "required"},"#,
                r#", "core:frequency": 100e6"#,
            ),
            r#"core:extensions names the extension "acme" as "required", not "optional""#,
        ),
        (
            "json0",
            meta_json(
                r#""core:extensions": {"antenna": "optional"},"#,
                r#", "core:frequency": 100e6"#,
            ),
            "",
        ),
    ];
    for (name, meta, refused) in cases {
        let m = d.join(format!("{name}.sigmf-meta"));
        std::fs::write(&m, meta).unwrap();
        std::fs::write(d.join(format!("{name}.sigmf-data")), &data).unwrap();
        let analysed = run_fed(lab.rxnode().args(["analyze", m.to_str().unwrap()]), b"");
        let out = plain_capture(&lab, &format!("replay={}", m.display()), "100M");
        if refused.is_empty() {
            assert_eq!(analysed.status.code(), Some(0), "{}", show(&analysed));
            assert_eq!(out.status.code(), Some(0), "{}", show(&out));
            let c = parsed(&out);
            assert!(
                c.peaks
                    .iter()
                    .any(|p| (p.frequency_hz - 100.1e6).abs() < 2e3),
                "{}",
                show(&out)
            );
            continue;
        }
        assert_eq!(
            analysed.status.code(),
            Some(2),
            "{name}: {}",
            show(&analysed)
        );
        assert_ne!(out.status.code(), Some(0), "{name}: {}", show(&out));
        // The error as JSON (`--json`): its quotes escaped.
        let said = text(&out.stderr).replace("\\\"", "\"");
        assert!(
            said.contains(refused) && said.contains("(rxnode analyze refuses it too)"),
            "{name}: {refused}: {}",
            show(&out)
        );
    }
}

/// A replay reads each SigMF key from its place in the parsed meta, as `analyze` does,
/// never by finding its text: a `core:sample_rate` standing only in a capture segment
/// (analyze: no core:sample_rate) and a `core:datatype` standing only in an annotation
/// (analyze: no core:datatype) are refused naming the key and "global"; they used to be
/// taken as the recording's (replayed at 2 MS/s, PASS). An annotation's
/// `core:num_channels` is not the recording's either: that meta replays, as analyze reads it.
#[test]
fn a_replay_reads_each_key_from_its_place_as_analyze_does() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let data = tone_cf32();
    let cases: [(&str, &str, &str); 3] = [
        (
            "rate",
            r#"{"global": {"core:datatype": "cf32_le", "core:version": "1.2.0"},
               "captures": [{"core:sample_start": 0, "core:frequency": 100e6,
                             "core:sample_rate": 2000000}], "annotations": []}"#,
            r#"has no core:sample_rate in its "global" object"#,
        ),
        (
            "type",
            r#"{"global": {"core:sample_rate": 2000000, "core:version": "1.2.0"},
               "captures": [{"core:sample_start": 0, "core:frequency": 100e6}],
               "annotations": [{"core:sample_start": 0, "core:datatype": "cf32_le"}]}"#,
            r#"has no core:datatype in its "global" object"#,
        ),
        (
            "note",
            r#"{"global": {"core:datatype": "cf32_le", "core:sample_rate": 2000000,
                           "core:version": "1.2.0"},
               "captures": [{"core:sample_start": 0, "core:frequency": 100e6}],
               "annotations": [{"core:sample_start": 0, "core:num_channels": 2}]}"#,
            "",
        ),
    ];
    for (name, meta, refused) in cases {
        let m = d.join(format!("{name}.sigmf-meta"));
        std::fs::write(&m, meta).unwrap();
        std::fs::write(d.join(format!("{name}.sigmf-data")), &data).unwrap();
        let analysed = run_fed(lab.rxnode().args(["analyze", m.to_str().unwrap()]), b"");
        let out = plain_capture(&lab, &format!("replay={}", m.display()), "100M");
        if refused.is_empty() {
            assert_eq!(analysed.status.code(), Some(0), "{}", show(&analysed));
            assert_eq!(out.status.code(), Some(0), "{name}: {}", show(&out));
            let c = parsed(&out);
            assert!(
                c.peaks
                    .iter()
                    .any(|p| (p.frequency_hz - 100.1e6).abs() < 2e3),
                "{}",
                show(&out)
            );
            continue;
        }
        assert_eq!(
            analysed.status.code(),
            Some(2),
            "{name}: {}",
            show(&analysed)
        );
        assert_ne!(out.status.code(), Some(0), "{name}: {}", show(&out));
        let said = text(&out.stderr).replace("\\\"", "\"");
        assert!(said.contains(refused), "{name}: {refused}: {}", show(&out));
    }
}

/// An SDRangel `.sdriq` recording replays from its header (rate, centre, sample
/// size), as `analyze` reads it: rxsim refused `replay=x.sdriq` (it asked for
/// `replay_format`, `replay_rate` and `replay_freq`, and given them refused the file as
/// a container). Now the 16-bit and the 24-bit one (24-bit values in 32-bit words, full
/// scale 2^23) play their tone at 100.1 MHz at the level of the same samples as a raw
/// `.cf32`; a `replay_freq` that disagrees with the header, and a `.sdriq` whose CRC-32
/// is wrong, are refused naming the field.
#[test]
fn a_replay_reads_an_sdriq_recording_from_its_header() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let n = 1u32 << 16;
    let tone: Vec<[f64; 2]> = (0..n)
        .map(|i| {
            let p = std::f64::consts::TAU * 0.05 * f64::from(i % 20); // +100 kHz at 2 MS/s
            [p.cos() * 0.25, p.sin() * 0.25]
        })
        .collect();
    let cf32: Vec<u8> = tone
        .iter()
        .flatten()
        .flat_map(|v| (*v as f32).to_le_bytes())
        .collect();
    std::fs::write(d.join("tone.cf32"), cf32).unwrap();
    for bits in [16u32, 24] {
        let mut b = Vec::new();
        b.extend(2_000_000u32.to_le_bytes());
        b.extend(100_000_000u64.to_le_bytes());
        b.extend(1_700_000_000_000u64.to_le_bytes());
        b.extend(bits.to_le_bytes());
        b.extend(0u32.to_le_bytes());
        let crc = crc32fast::hash(&b);
        b.extend(crc.to_le_bytes());
        for v in tone.iter().flatten() {
            if bits == 16 {
                b.extend(((v * 32767.0).round() as i16).to_le_bytes());
            } else {
                b.extend(((v * 8_388_608.0).round() as i32).to_le_bytes());
            }
        }
        std::fs::write(d.join(format!("rec{bits}.sdriq")), &b).unwrap();
        b[28] ^= 1;
        std::fs::write(d.join("bad.sdriq"), &b).unwrap();
    }
    let play = |file: &str, extra: &str| {
        capture(
            &lab,
            &format!(
                "driver=rxsim,serial=s,replay={}{extra}",
                d.join(file).display()
            ),
            "0.1",
            &[],
        )
    };
    let raw = play(
        "tone.cf32",
        ",replay_format=cf32,replay_rate=2e6,replay_freq=100e6",
    );
    let raw = parsed(&raw).peaks[0].power_db;
    for file in ["rec16.sdriq", "rec24.sdriq"] {
        // (The capture's clock check finds no reference tone in these samples: its
        // status is not this test's concern; the samples played are.)
        let out = play(file, "");
        let c = parsed(&out);
        let p = &c.peaks[0];
        assert!(
            (p.frequency_hz - 100.1e6).abs() < 1e3,
            "{file}: {}",
            show(&out)
        );
        assert!((p.power_db - raw).abs() < 0.05, "{file}: {p:?}, raw {raw}");
    }
    for (file, extra, said) in [
        ("rec16.sdriq", ",replay_freq=101e6", "disagrees with"),
        ("bad.sdriq", "", "its header's CRC-32 (bytes 28..32) is 0x"),
    ] {
        let out = play(file, extra);
        assert_ne!(out.status.code(), Some(0), "{file}: {}", show(&out));
        assert!(text(&out.stderr).contains(said), "{file}: {}", show(&out));
    }
}

/// A raw file whose GNU Radio File Meta Sink headers lie beside it (`FILE.hdr`,
/// detached: cf32, 1 MS/s, `rx_freq` 433.92 MHz, as GNU Radio 3.10 wrote them) is
/// refused by a raw replay naming the header file: rxsim took `replay_rate=2e6` and
/// `replay_freq=100e6` instead and played the +100 kHz tone at 100.2 MHz, where
/// `analyze` reads it at 434.02 MHz. Without the `.hdr` the same samples replay.
#[test]
fn a_replay_refuses_a_raw_file_with_a_gnu_radio_detached_header() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let header = hex::decode(
        [
            "0907020004737472740b00000000000000ab090702000562797465730b00000000000c3500090702000463706c780009",
            "07020004747970650300000005090702000473697a650300000008090702000772785f74696d650c000000020b000000",
            "0000000000040000000000000000090702000772785f7261746504412e848000000000090702000776657273696f6e03",
            "0000000006090702000772785f667265710441b9dd180000000006",
        ]
        .concat(),
    )
    .unwrap();
    let samples: Vec<u8> = (0..100_000u32)
        .flat_map(|i| {
            let p = std::f32::consts::TAU * 0.1 * (i % 10) as f32; // +100 kHz at 1 MS/s
            [p.cos() * 0.5, p.sin() * 0.5]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(d.join("rec.cfile"), &samples).unwrap();
    std::fs::write(d.join("rec.cfile.hdr"), &header).unwrap();
    std::fs::write(d.join("bare.cfile"), &samples).unwrap();
    let o = analyze_json(d, "rec.cfile");
    assert!(o.contains("\"center_hz\": 433920000.0"), "{o}");
    let replay = |file: &str| {
        capture(
            &lab,
            &format!(
                "driver=rxsim,serial={file},replay={},replay_format=cf32,replay_rate=2e6,replay_freq=100e6",
                d.join(file).display()
            ),
            "0.1",
            &[],
        )
    };
    let out = replay("rec.cfile");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr)
            .contains("rec.cfile.hdr beside it is its GNU Radio File Meta Sink header"),
        "{}",
        show(&out)
    );
    let out = replay("bare.cfile");
    assert!(!parsed(&out).peaks.is_empty(), "{}", show(&out));
}

/// `rxnode --json analyze FILE` in `dir`, its standard output (the report whatever
/// its verdict).
fn analyze_json(dir: &Path, file: &str) -> String {
    let o = crate::util::rxnode_bin()
        .current_dir(dir)
        .args(["--json", "analyze", file])
        .output()
        .unwrap();
    text(&o.stdout)
}

/// A gqrx raw recording (`gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw`, cf32) replays at the
/// centre and rate its name states, as `analyze` reads them: rxsim took
/// `replay_rate=2e6`, `replay_freq=100e6` instead and played a 1 MS/s recording's
/// +100 kHz tone at 100.2 MHz, where `analyze` reads 434.02 MHz. A disagreeing
/// `replay_rate` or `replay_freq` is now refused naming the name's value; without them
/// the tone plays at 434.02 MHz.
#[test]
fn a_replay_takes_a_gqrx_recordings_centre_and_rate_from_its_name() {
    let lab = Lab::new();
    let d = lab.dir.path();
    let samples: Vec<u8> = (0..100_000u32)
        .flat_map(|i| {
            let p = std::f32::consts::TAU * 0.1 * (i % 10) as f32; // +100 kHz at 1 MS/s
            [p.cos() * 0.5, p.sin() * 0.5]
        })
        .flat_map(f32::to_le_bytes)
        .collect();
    let name = "gqrx_20231010_120000_433920000_1000000_fc.raw";
    std::fs::write(d.join(name), &samples).unwrap();
    let play = |extra: &str, f: &str, r: &str| {
        let device = format!(
            "driver=rxsim,serial=q,replay={}{extra}",
            d.join(name).display()
        );
        run_fed(
            lab.rxnode()
                .args([
                    "--sim", "capture", "-d", &device, "-f", f, "-r", r, "-t", "0.1", "--json",
                ])
                .env("RXSIM_EVENT_LOG", lab.events_log()),
            b"",
        )
    };
    for (extra, said) in [
        (
            ",replay_format=cf32,replay_rate=2e6,replay_freq=100e6",
            "its gqrx file name states 1000000 S/s; replay_rate=2e6 disagrees",
        ),
        (
            ",replay_freq=100e6",
            "its gqrx file name states the centre 433920000 Hz; replay_freq=100e6 disagrees",
        ),
    ] {
        let out = play(extra, "100M", "2M");
        assert_ne!(out.status.code(), Some(0), "{extra}: {}", show(&out));
        assert!(text(&out.stderr).contains(said), "{extra}: {}", show(&out));
    }
    let out = play("", "433.92M", "1M");
    let c = parsed(&out);
    assert!(
        (c.peaks[0].frequency_hz - 434.02e6).abs() < 1e3,
        "{}",
        show(&out)
    );
}
