//! `rxnode analyze` against recordings generated here with known truth (tones, an
//! interferer, a reference error in ppm), through every format, and bad inputs.
use serde::Deserialize;
use std::f64::consts::PI;
use std::path::{Path, PathBuf};

mod image;
mod levels;
mod noise;
mod silence;

#[derive(Debug, Deserialize)]
struct Peak {
    frequency_hz: f64,
    power_db: f64,
    snr_db: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Clkin {
    tone_hz: f64,
    measured_hz: Option<f64>,
    ppm: Option<f64>,
    ppm_uncertainty: Option<f64>,
    status: String,
}

#[derive(Debug, Deserialize)]
struct Report {
    samples: u64,
    sample_rate_hz: f64,
    center_hz: Option<f64>,
    #[serde(default)]
    center_from: Option<String>,
    fft_size: usize,
    overlap: f64,
    averages: u64,
    peaks: Vec<Peak>,
    noise_floor_db: Option<f64>,
    #[serde(default)]
    noise_floor_absent: Option<String>,
    mean_power_dbfs: Option<f64>,
    clipped_fraction: f64,
    clkin: Option<Clkin>,
    clock: serde_json::Value,
}

const FS: f64 = 2e6;
const FC: f64 = 100e6;
const TONE: f64 = 100.1e6;
const INTERFERER: f64 = 99.7e6;

/// Tone at TONE seen by a receiver with error `ppm`, an interferer 20 dB lower, noise.
fn signal(n: usize, ppm: f64, amp: f64) -> Vec<(f32, f32)> {
    let eps = ppm * 1e-6;
    let c1 = (TONE - FC * (1.0 + eps)) / (1.0 + eps) / FS;
    let c2 = (INTERFERER - FC * (1.0 + eps)) / (1.0 + eps) / FS;
    let mut s = 0x1234_5678_9abc_def1u64;
    let mut uni = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let p1 = 2.0 * PI * (c1 * i as f64).fract();
            let p2 = 2.0 * PI * (c2 * i as f64).fract();
            // Complex Gaussian noise with total power (0.1·amp)².
            let r = (-2.0 * uni().ln()).sqrt() * amp * 0.1 / 2f64.sqrt();
            let t = 2.0 * PI * uni();
            let re = amp * p1.cos() + 0.1 * amp * p2.cos() + r * t.cos();
            let im = amp * p1.sin() + 0.1 * amp * p2.sin() + r * t.sin();
            (re as f32, im as f32)
        })
        .collect()
}

fn cf32(x: &[(f32, f32)]) -> Vec<u8> {
    x.iter()
        .flat_map(|&(i, q)| [i.to_le_bytes(), q.to_le_bytes()].concat())
        .collect()
}

fn cs16(x: &[(f32, f32)]) -> Vec<u8> {
    let q = |v: f32| ((v * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes();
    x.iter()
        .flat_map(|&(i, qq)| [q(i), q(qq)].concat())
        .collect()
}

fn cs8(x: &[(f32, f32)]) -> Vec<u8> {
    let q = |v: f32| (v * 128.0).round().clamp(-128.0, 127.0) as i8 as u8;
    x.iter().flat_map(|&(i, qq)| [q(i), q(qq)]).collect()
}

fn wav(data: &[u8], channels: u16, bits: u16, float: bool, declared: Option<u32>) -> Vec<u8> {
    let mut h = Vec::new();
    let len = declared.unwrap_or(data.len() as u32);
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&36u32.saturating_add(len).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&(if float { 3u16 } else { 1 }).to_le_bytes());
    h.extend_from_slice(&channels.to_le_bytes());
    h.extend_from_slice(&(FS as u32).to_le_bytes());
    let align = channels * bits / 8;
    h.extend_from_slice(&(FS as u32 * u32::from(align)).to_le_bytes());
    h.extend_from_slice(&align.to_le_bytes());
    h.extend_from_slice(&bits.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(data);
    h
}

fn sigmf(dir: &Path, name: &str, datatype: &str, data: &[u8]) -> PathBuf {
    let meta = serde_json::json!({
        "global": {"core:datatype": datatype, "core:sample_rate": FS, "core:version": "1.2.0"},
        "captures": [{"core:sample_start": 0, "core:frequency": FC}],
        "annotations": []
    });
    let m = dir.join(format!("{name}.sigmf-meta"));
    std::fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    std::fs::write(dir.join(format!("{name}.sigmf-data")), data).unwrap();
    m
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = crate::util::rxnode_bin()
        .args(args)
        .output()
        .expect("run rxnode");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn analyze_json(file: &Path, extra: &[&str]) -> (i32, Report) {
    let mut args = vec!["--json", "analyze", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert!(!err.contains("panicked"), "{err}");
    let r: Report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, r)
}

fn bin() -> f64 {
    FS / 2048.0
}

/// The strong tone and the interferer are found where they are, absolute.
fn check_peaks(r: &Report, ppm: f64) {
    let seen = TONE / (1.0 + ppm * 1e-6);
    assert!(r.peaks.len() >= 2, "{:?}", r.peaks);
    assert!(
        (r.peaks[0].frequency_hz - seen).abs() <= bin(),
        "{:?}",
        r.peaks[0]
    );
    assert!(
        (r.peaks[1].frequency_hz - INTERFERER).abs() <= 2.0 * bin(),
        "{:?}",
        r.peaks[1]
    );
    // Interferer 20 dB below the tone (± Hann scalloping).
    let d = r.peaks[0].power_db - r.peaks[1].power_db;
    assert!((d - 20.0).abs() < 2.0, "{d}");
    let snr = r.peaks[0].snr_db.expect("an SNR over the floor");
    assert!(snr > 30.0, "{:?}", r.peaks[0]);
    assert!((snr - (r.peaks[0].power_db - r.noise_floor_db.unwrap())).abs() < 1e-6);
    assert_eq!(r.noise_floor_absent, None);
}

#[test]
fn cf32_two_tones_and_ppm() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.cf32");
    let n = 1 << 21;
    std::fs::write(&p, cf32(&signal(n, 2.5, 0.1))).unwrap();
    let (code, r) = analyze_json(
        &p,
        &[
            "--rate",
            "2e6",
            "--center-hz",
            "100e6",
            "--clkin-tone-hz",
            "100.1e6",
            "--clkin-tolerance-ppm",
            "3",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(r.samples, n as u64);
    assert_eq!(r.sample_rate_hz, FS);
    assert_eq!(r.center_hz, Some(FC));
    assert_eq!((r.fft_size, r.overlap), (2048, 0.5));
    assert_eq!(r.averages, (n as u64 - 2048) / 1024 + 1);
    check_peaks(&r, 2.5);
    // Tone 0.1 + interferer 0.01 + noise 0.01 (powers add): ≈ −19.96 dBFS.
    assert!((r.mean_power_dbfs.unwrap() - 10.0 * (0.01f64 + 1e-4 + 1e-4).log10()).abs() < 0.05);
    assert_eq!(r.clipped_fraction, 0.0);
    let c = r.clkin.unwrap();
    assert_eq!(c.tone_hz, TONE);
    assert!((c.ppm.unwrap() - 2.5).abs() < 0.01, "{c:?}");
    assert!(c.ppm_uncertainty.unwrap() < 0.01);
    assert!(c.measured_hz.unwrap() < TONE);
    assert_eq!(c.status, "PASS");
    // Same file, default tolerance 0.5 ppm: FAIL, exit 1.
    let (code, r) = analyze_json(
        &p,
        &[
            "--rate",
            "2e6",
            "--center-hz",
            "100e6",
            "--clkin-tone-hz",
            "100.1e6",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(r.clkin.unwrap().status, "FAIL");
}

#[test]
fn cs16_and_cs8_with_explicit_format() {
    let dir = tempfile::tempdir().unwrap();
    let x = signal(1 << 20, -0.3, 0.3);
    let p16 = dir.path().join("x.bin");
    std::fs::write(&p16, cs16(&x)).unwrap();
    let (code, r) = analyze_json(
        &p16,
        &[
            "--format",
            "cs16",
            "--rate",
            "2e6",
            "--center-hz",
            "100e6",
            "--clkin-tone-hz",
            "100.1e6",
        ],
    );
    assert_eq!(code, 0);
    check_peaks(&r, -0.3);
    assert!((r.clkin.unwrap().ppm.unwrap() + 0.3).abs() < 0.01);
    let p8 = dir.path().join("x.cs8");
    std::fs::write(&p8, cs8(&x)).unwrap();
    let (code, r) = analyze_json(
        &p8,
        &[
            "--rate",
            "2e6",
            "--center-hz",
            "100e6",
            "--fft-size",
            "4096",
            "--overlap",
            "0",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(r.samples, 1 << 20);
    assert_eq!((r.fft_size, r.averages), (4096, 256));
    let seen = TONE / (1.0 - 0.3e-6);
    assert!((r.peaks[0].frequency_hz - seen).abs() <= FS / 4096.0);
}

#[test]
fn wav_rate_from_the_header_baseband_without_centre() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.wav");
    std::fs::write(
        &p,
        wav(&cf32(&signal(1 << 19, 0.0, 0.1)), 2, 32, true, None),
    )
    .unwrap();
    let (code, r) = analyze_json(&p, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.sample_rate_hz, FS);
    assert_eq!(r.center_hz, None);
    assert!(
        (r.peaks[0].frequency_hz - (TONE - FC)).abs() <= bin(),
        "{:?}",
        r.peaks
    );
    // 16-bit integer WAV too.
    let p = dir.path().join("y.wav");
    std::fs::write(
        &p,
        wav(&cs16(&signal(1 << 19, 0.0, 0.1)), 2, 16, false, None),
    )
    .unwrap();
    let (code, r) = analyze_json(&p, &["--center-hz", "100e6"]);
    assert_eq!(code, 0);
    check_peaks(&r, 0.0);
}

/// A WAV as SDR#, HDSDR and SDRuno write it: an `auxi` chunk (start and stop
/// SYSTEMTIME, then `CenterFreq` in Hz) between `fmt ` and `data`.
fn wav_auxi(data: &[u8], center_hz: u32) -> Vec<u8> {
    let plain = wav(data, 2, 16, false, None);
    let mut auxi = Vec::new();
    auxi.extend_from_slice(b"auxi");
    auxi.extend_from_slice(&164u32.to_le_bytes());
    for _ in 0..2 {
        for v in [2024u16, 5, 2, 14, 12, 0, 0, 0] {
            auxi.extend_from_slice(&v.to_le_bytes());
        }
    }
    for v in [center_hz, FS as u32, 0, 0, 0] {
        auxi.extend_from_slice(&v.to_le_bytes());
    }
    auxi.resize(8 + 164, 0);
    // After the 12-byte RIFF/WAVE head and the 24-byte fmt chunk.
    let mut out = plain[..36].to_vec();
    out.extend_from_slice(&auxi);
    out.extend_from_slice(&plain[36..]);
    let riff = (out.len() - 8) as u32;
    out[4..8].copy_from_slice(&riff.to_le_bytes());
    out
}

/// The centre an SDR#/HDSDR/SDRuno WAV records in its `auxi` chunk is the
/// recording's centre (the peaks in absolute frequency, no `--center-hz`
/// needed); a `--center-hz` that disagrees is refused naming the chunk; a 0
/// there is "not recorded"; an implausible one is refused naming it.
#[test]
fn a_wav_auxi_chunk_gives_the_centre() {
    let dir = tempfile::tempdir().unwrap();
    let data = cs16(&signal(1 << 19, 0.0, 0.1));
    let p = dir.path().join("sdrsharp.wav");
    std::fs::write(&p, wav_auxi(&data, FC as u32)).unwrap();
    let (code, r) = analyze_json(&p, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.center_hz, Some(FC));
    check_peaks(&r, 0.0);
    let f = p.to_str().unwrap();
    expect_bad(
        &["analyze", f, "--center-hz", "433.92M"],
        "disagrees with the recording's own 100000000 (CenterFreq of its WAV's auxi chunk",
    );
    let z = dir.path().join("zero.wav");
    std::fs::write(&z, wav_auxi(&data, 0)).unwrap();
    let (code, r) = analyze_json(&z, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.center_hz, None);
    let low = dir.path().join("low.wav");
    std::fs::write(&low, wav_auxi(&data, 5)).unwrap();
    expect_bad(
        &["analyze", low.to_str().unwrap()],
        "the auxi chunk's CenterFreq: 5 Hz is implausible",
    );
}

/// An SDR# or HDSDR baseband WAV without a centre in an `auxi` chunk takes it from
/// its name (`center_from: "file_name"`, the text says so); a chunk's centre within
/// the name's last digit wins; a chunk and a name that disagree are refused naming
/// both (the chunk was silently used); an audio recording's name (`_AF`) gives none.
#[test]
fn a_wav_name_gives_the_centre_when_no_chunk_does_and_two_centres_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = cs16(&signal(1 << 19, 0.0, 0.1));
    let named = dir
        .path()
        .join("SDRSharp_20230115_093012Z_100000000Hz_IQ.wav");
    std::fs::write(&named, wav(&data, 2, 16, false, None)).unwrap();
    let (code, r) = analyze_json(&named, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.center_hz, Some(FC));
    assert_eq!(r.center_from.as_deref(), Some("file_name"));
    check_peaks(&r, 0.0);
    let (code, out, err) = run(&["analyze", named.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("centre        100.000000 MHz (from the file's name)"),
        "{out}"
    );
    expect_bad(
        &["analyze", named.to_str().unwrap(), "-f", "101M"],
        "disagrees with the recording's own 100000000 (centre frequency of its SDR# file name",
    );
    let hdsdr = dir.path().join("HDSDR_20230115_093012Z_100000kHz_RF.wav");
    std::fs::write(&hdsdr, wav_auxi(&data, FC as u32 + 200)).unwrap();
    let (code, r) = analyze_json(&hdsdr, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.center_hz, Some(FC + 200.0));
    assert_eq!(r.center_from.as_deref(), Some("recording"));
    let two = dir.path().join("HDSDR_20230115_093012Z_99000kHz_RF.wav");
    std::fs::write(&two, wav_auxi(&data, FC as u32)).unwrap();
    expect_bad(
        &["analyze", two.to_str().unwrap()],
        "two centres: its auxi chunk's CenterFreq is 100000000 Hz, its HDSDR file name says \
         99000000 Hz",
    );
    let audio = dir
        .path()
        .join("SDRSharp_20230115_093012Z_100000000Hz_AF.wav");
    std::fs::write(&audio, wav(&data, 2, 16, false, None)).unwrap();
    let (code, r) = analyze_json(&audio, &[]);
    assert_eq!(code, 0);
    assert_eq!((r.center_hz, r.center_from), (None, None));
    let (code, r) = analyze_json(&audio, &["-f", "100M"]);
    assert_eq!(code, 0);
    assert_eq!(r.center_from.as_deref(), Some("option"));
}

/// 24- and 32-bit integer PCM WAV (HDSDR, SDRuno) are analysed at their true level:
/// the tone where a 16-bit WAV of the same signal puts it (they were refused).
#[test]
fn a_wav_of_24_or_32_bit_pcm_is_analysed_at_its_level() {
    let dir = tempfile::tempdir().unwrap();
    let x = signal(1 << 19, 0.0, 0.1);
    let p16 = dir.path().join("x16.wav");
    std::fs::write(&p16, wav(&cs16(&x), 2, 16, false, None)).unwrap();
    let (_, want) = analyze_json(&p16, &["-f", "100M"]);
    for bits in [24u32, 32] {
        let q = |v: f32| {
            let full = f64::from(1u32 << (bits - 1));
            ((f64::from(v) * full).round() as i64).to_le_bytes()[..bits as usize / 8].to_vec()
        };
        let data: Vec<u8> = x
            .iter()
            .flat_map(|&(i, qq)| [q(i), q(qq)].concat())
            .collect();
        let p = dir.path().join(format!("x{bits}.wav"));
        std::fs::write(&p, wav(&data, 2, bits as u16, false, None)).unwrap();
        let (code, r) = analyze_json(&p, &["-f", "100M"]);
        assert_eq!(code, 0, "{bits}");
        check_peaks(&r, 0.0);
        let d = r.peaks[0].power_db - want.peaks[0].power_db;
        assert!(d.abs() < 0.001, "{bits}-bit: {d} dB from the 16-bit WAV");
        let m = r.mean_power_dbfs.unwrap() - want.mean_power_dbfs.unwrap();
        assert!(m.abs() < 0.001, "{bits}-bit: mean power {m} dB off");
    }
}

/// RIFF pads a chunk of odd length with one byte. A WAV with such a chunk before its
/// samples (a 5-byte LIST-style note, as some writers leave one) was refused as "not a
/// readable WAV file: Failed to read enough bytes" (hound 3.5 skips the chunk but not
/// its pad); it is read: every sample, the peaks where they are, as its twin without
/// the chunk; an odd chunk after the samples changes nothing either.
#[test]
fn a_wav_with_an_odd_sized_chunk_before_its_samples_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 19;
    let data = cs16(&signal(n, 0.0, 0.1));
    let plain = wav(&data, 2, 16, false, None);
    let odd_chunk = |id: &[u8]| {
        let mut c = id.to_vec();
        c.extend_from_slice(&5u32.to_le_bytes());
        c.extend_from_slice(b"HDSDR\0");
        c
    };
    // The fmt chunk ends at byte 36: the odd chunk and its pad go there, another at the end.
    let mut odd = plain[..36].to_vec();
    odd.extend_from_slice(&odd_chunk(b"junk"));
    odd.extend_from_slice(&plain[36..]);
    odd.extend_from_slice(&odd_chunk(b"note"));
    let riff = (odd.len() - 8) as u32;
    odd[4..8].copy_from_slice(&riff.to_le_bytes());
    let p = dir.path().join("odd.wav");
    std::fs::write(&p, &odd).unwrap();
    let (code, r) = analyze_json(&p, &["--center-hz", "100M"]);
    assert_eq!(code, 0);
    assert_eq!((r.samples, r.sample_rate_hz), (n as u64, FS));
    check_peaks(&r, 0.0);
    let twin = dir.path().join("plain.wav");
    std::fs::write(&twin, &plain).unwrap();
    let (_, t) = analyze_json(&twin, &["--center-hz", "100M"]);
    assert_eq!(
        (
            r.peaks[0].frequency_hz,
            r.peaks[0].power_db,
            r.noise_floor_db
        ),
        (
            t.peaks[0].frequency_hz,
            t.peaks[0].power_db,
            t.noise_floor_db
        )
    );
}

/// A gqrx raw I/Q recording says its layout, centre and rate in its name
/// (`gqrx_YYYYMMDD_HHMMSS_FREQ_RATE_fc.raw`, cf32): read without flags, the peaks
/// absolute at the name's rate; a `--sample-rate-hz` or `--center-hz` that disagrees
/// (which moved every peak) is refused naming the name; an implausible value in the
/// name is refused naming it; a `.raw` of any other name still needs `--format`.
#[test]
fn a_gqrx_name_gives_the_layout_centre_and_rate() {
    let dir = tempfile::tempdir().unwrap();
    let data = cf32(&signal(1 << 19, 0.0, 0.1));
    let name = format!("gqrx_20240502_141200_{}_{}_fc.raw", FC as u64, FS as u64);
    let p = dir.path().join(&name);
    std::fs::write(&p, &data).unwrap();
    for extra in [&[][..], &["--format", "cf32", "-r", "2M", "-f", "100M"][..]] {
        let (code, r) = analyze_json(&p, extra);
        assert_eq!(code, 0, "{extra:?}");
        assert_eq!((r.sample_rate_hz, r.center_hz), (FS, Some(FC)), "{extra:?}");
        check_peaks(&r, 0.0);
    }
    let f = p.to_str().unwrap();
    expect_bad(
        &["analyze", f, "--format", "cf32", "-r", "2.4M"],
        &format!(
            "disagrees with the recording's own 2000000 (sample rate of its gqrx file name, {f}"
        ),
    );
    expect_bad(
        &["analyze", f, "--center-hz", "433.92M"],
        "(centre frequency of its gqrx file name",
    );
    let zero = dir.path().join("gqrx_20240502_141200_100000000_0_fc.raw");
    std::fs::write(&zero, &data).unwrap();
    expect_bad(
        &["analyze", zero.to_str().unwrap()],
        "the sample rate in its gqrx file name (gqrx_20240502_141200_100000000_0_fc.raw): 0 S/s",
    );
    let other = dir.path().join("gqrx_capture.raw");
    std::fs::write(&other, &data).unwrap();
    expect_bad(
        &["analyze", other.to_str().unwrap(), "-r", "2M"],
        "a .raw file does not say how its samples are stored",
    );
}

/// An RF64 WAV (EBU Tech 3306, what HDSDR and SDRuno write past 4 GiB): `RF64`,
/// a `ds64` chunk with the 64-bit data size, `fmt `, an `auxi`, and a data chunk
/// whose 32-bit size is the placeholder 0xFFFFFFFF.
fn rf64(data: &[u8], center_hz: u32) -> Vec<u8> {
    let riff = wav_auxi(data, center_hz);
    // From the RIFF: fmt and auxi as they are, then the data under a placeholder.
    let data_at = riff.len() - data.len() - 8;
    let mut ds64 = Vec::new();
    ds64.extend_from_slice(b"ds64");
    ds64.extend_from_slice(&28u32.to_le_bytes());
    ds64.extend_from_slice(&0u64.to_le_bytes());
    ds64.extend_from_slice(&(data.len() as u64).to_le_bytes());
    ds64.extend_from_slice(&((data.len() / 4) as u64).to_le_bytes());
    ds64.extend_from_slice(&0u32.to_le_bytes());
    let mut out = b"RF64\xff\xff\xff\xffWAVE".to_vec();
    out.extend_from_slice(&ds64);
    out.extend_from_slice(&riff[12..data_at]);
    out.extend_from_slice(b"data\xff\xff\xff\xff");
    out.extend_from_slice(data);
    out
}

/// An RF64 WAV is read like the WAV it extends: its rate from `fmt `, its
/// length from `ds64`, its centre from `auxi`; one cut short is refused by the
/// size `ds64` gives (it was "no RIFF tag found").
#[test]
fn an_rf64_wav_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = cs16(&signal(1 << 19, 0.0, 0.1));
    let p = dir.path().join("hdsdr.wav");
    let bytes = rf64(&data, FC as u32);
    std::fs::write(&p, &bytes).unwrap();
    let (code, r) = analyze_json(&p, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.samples, 1 << 19);
    assert_eq!(r.sample_rate_hz, FS);
    assert_eq!(r.center_hz, Some(FC));
    check_peaks(&r, 0.0);
    let cut = dir.path().join("cut.wav");
    std::fs::write(&cut, &bytes[..bytes.len() - 1000]).unwrap();
    expect_bad(
        &["analyze", cut.to_str().unwrap()],
        &format!(
            "its ds64 chunk says the data holds {} bytes, but only {} follow the header: truncated",
            data.len(),
            data.len() - 1000
        ),
    );
}

#[test]
fn sigmf_meta_or_data_path_rate_and_centre_from_the_meta() {
    let dir = tempfile::tempdir().unwrap();
    let x = signal(1 << 20, 1.0, 0.1);
    let meta = sigmf(dir.path(), "rec", "cf32_le", &cf32(&x));
    for path in [meta.clone(), meta.with_extension("sigmf-data")] {
        let (code, r) = analyze_json(
            &path,
            &["--clkin-tone-hz", "100.1e6", "--clkin-tolerance-ppm", "1.5"],
        );
        assert_eq!(code, 0, "{}", path.display());
        assert_eq!(r.center_hz, Some(FC));
        check_peaks(&r, 1.0);
        assert!((r.clkin.unwrap().ppm.unwrap() - 1.0).abs() < 0.01);
    }
    let m16 = sigmf(dir.path(), "rec16", "ci16_le", &cs16(&x));
    let (code, r) = analyze_json(&m16, &[]);
    assert_eq!(code, 0);
    check_peaks(&r, 1.0);
}

#[test]
fn human_output_names_the_peaks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.cf32");
    std::fs::write(&p, cf32(&signal(1 << 16, 0.0, 0.1))).unwrap();
    let png = dir.path().join("x.png");
    let (code, out, err) = run(&[
        "analyze",
        p.to_str().unwrap(),
        "--rate",
        "2e6",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("peaks") && out.contains("noise floor"),
        "{out}"
    );
    // Polish review: peak powers say dBFS like the floor and mean power (not "dB").
    // Without a centre frequency the peaks are offsets, in kHz for people.
    let peak = out
        .lines()
        .find(|l| l.starts_with("peaks "))
        .unwrap_or_default();
    assert!(
        peak.contains(" kHz ") && peak.contains(" dBFS  SNR "),
        "{out}"
    );
    assert!(out.contains("centre        unknown"), "{out}");
    // With one, frequencies are MHz with Hz precision, never a bare count of Hz.
    let (code, out, err) = run(&[
        "analyze",
        p.to_str().unwrap(),
        "--rate",
        "2e6",
        "-f",
        "433.92M",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("centre        433.920000 MHz"), "{out}");
    assert!(out.contains("at 2.000 MS/s"), "{out}");
    let peak = out
        .lines()
        .find(|l| l.starts_with("peaks "))
        .unwrap_or_default();
    assert!(peak.contains(" MHz ") && !peak.contains(" Hz "), "{out}");
    let head = std::fs::read(&png).unwrap();
    assert_eq!(&head[..8], b"\x89PNG\r\n\x1a\n");
    // A second analysis never overwrites the picture the operator kept.
    let (code, _, err) = run(&[
        "analyze",
        p.to_str().unwrap(),
        "--rate",
        "2e6",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--plot") && err.contains("already exists"),
        "{err}"
    );
    assert_eq!(std::fs::read(&png).unwrap(), head);
}

fn expect_bad(args: &[&str], needle: &str) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: stdout {out} stderr {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected {needle:?} in {err}"
    );
}

#[test]
fn bad_inputs_are_clear_errors_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = cf32(&signal(4096, 0.0, 0.1));
    bad_sizes_and_absurd_numbers(dir.path(), &good);
    bad_samples_and_containers(dir.path(), &good);
    bad_usage(dir.path(), &good);
}

/// Empty and truncated files, and absurd rates and centres.
fn bad_sizes_and_absurd_numbers(dir: &Path, good: &[u8]) {
    let d = |n: &str| dir.join(n).to_str().unwrap().to_owned();

    // Zero-length files, every format.
    for name in ["z.cf32", "z.cs16", "z.cs8", "z.wav"] {
        std::fs::write(d(name), b"").unwrap();
        expect_bad(&["analyze", &d(name), "--rate", "2e6"], "empty");
    }
    sigmf(dir, "z", "cf32_le", b"");
    expect_bad(&["analyze", &d("z.sigmf-meta")], "empty");

    // Odd byte counts / truncated raw files.
    std::fs::write(d("odd.cf32"), &good[..good.len() - 3]).unwrap();
    expect_bad(
        &["analyze", &d("odd.cf32"), "--rate", "2e6"],
        "not a whole number of cf32",
    );
    std::fs::write(d("odd.cs16"), [0u8; 4099]).unwrap();
    expect_bad(&["analyze", &d("odd.cs16"), "--rate", "2e6"], "cs16");
    std::fs::write(d("odd.cs8"), [0u8; 4097]).unwrap();
    expect_bad(&["analyze", &d("odd.cs8"), "--rate", "2e6"], "cs8");
    sigmf(dir, "odd", "cf32_le", &good[..good.len() - 4]);
    expect_bad(&["analyze", &d("odd.sigmf-data")], "not a whole number");

    // A CLKIN set-up from absurd numbers (here a 1 PHz rate, also
    // reachable from a SigMF meta) tried to allocate a 2 TB mixing table.
    std::fs::write(d("tone.cf32"), good).unwrap();
    expect_bad(
        &[
            "analyze",
            &d("tone.cf32"),
            "--rate",
            "1e15",
            "--center-hz",
            "0",
            "--clkin-tone-hz",
            "1e6",
        ],
        "--sample-rate-hz",
    );
    // … and a centre of 1e300 Hz made the coarse search loop over 2^64 bins.
    let (code, out, err) = run(&[
        "analyze",
        &d("tone.cf32"),
        "--rate",
        "2e6",
        "--center-hz",
        "1e300",
        "--clkin-tone-hz",
        "1e300",
    ]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(code, 0..=2), "exit {code}: {out} {err}");
}

/// NaN samples, broken WAV and SigMF containers.
fn bad_samples_and_containers(dir: &Path, good: &[u8]) {
    let d = |n: &str| dir.join(n).to_str().unwrap().to_owned();

    // NaN samples.
    let mut nan = good.to_vec();
    nan[8 * 3000..8 * 3000 + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(d("nan.cf32"), &nan).unwrap();
    expect_bad(
        &["analyze", &d("nan.cf32"), "--rate", "2e6"],
        "sample 3000 is not finite",
    );
    std::fs::write(d("nan.wav"), wav(&nan, 2, 32, true, None)).unwrap();
    expect_bad(&["analyze", &d("nan.wav")], "sample 3000 is not finite");

    // WAV: not 2 channels; truncated data; garbage.
    std::fs::write(d("mono.wav"), wav(good, 1, 32, true, None)).unwrap();
    expect_bad(&["analyze", &d("mono.wav")], "1 channel");
    std::fs::write(
        d("trunc.wav"),
        wav(good, 2, 32, true, Some(good.len() as u32 * 2)),
    )
    .unwrap();
    expect_bad(&["analyze", &d("trunc.wav")], "trunc");
    std::fs::write(d("junk.wav"), b"this is not a wav file at all").unwrap();
    expect_bad(&["analyze", &d("junk.wav")], "WAV");

    // SigMF: unsupported datatype, broken JSON, missing data file.
    // A real (not complex) datatype: not a receiver's IQ.
    sigmf(dir, "real", "rf32_le", good);
    expect_bad(
        &["analyze", &d("real.sigmf-meta")],
        "unsupported SigMF core:datatype \"rf32_le\"",
    );
    std::fs::write(d("broken.sigmf-meta"), b"{\"global\": ").unwrap();
    expect_bad(
        &["analyze", &d("broken.sigmf-meta")],
        "invalid SigMF meta JSON",
    );
    let m = sigmf(dir, "nodata", "cf32_le", good);
    std::fs::remove_file(m.with_extension("sigmf-data")).unwrap();
    expect_bad(&["analyze", &d("nodata.sigmf-meta")], "nodata.sigmf-data");
}

/// Usage errors: missing or bad flags, too short, a missing file.
fn bad_usage(dir: &Path, good: &[u8]) {
    let d = |n: &str| dir.join(n).to_str().unwrap().to_owned();

    // Usage: no rate for raw, unknown format, bad overlap, too short, clkin without centre.
    std::fs::write(d("ok.cf32"), good).unwrap();
    expect_bad(&["analyze", &d("ok.cf32")], "--sample-rate-hz");
    expect_bad(
        &["analyze", &d("ok.cf32"), "--rate", "2e6", "--format", "mp3"],
        "mp3",
    );
    std::fs::write(d("ok.iq"), good).unwrap();
    expect_bad(&["analyze", &d("ok.iq"), "--rate", "2e6"], "iq");
    expect_bad(
        &[
            "analyze",
            &d("ok.cf32"),
            "--rate",
            "2e6",
            "--overlap",
            "1.5",
        ],
        "--overlap",
    );
    // The old spelling still works, and the error names the flag as documented.
    expect_bad(&["analyze", &d("ok.cf32"), "--rate=0"], "--sample-rate-hz");
    expect_bad(
        &[
            "analyze",
            &d("ok.cf32"),
            "--rate",
            "2e6",
            "--fft-size",
            "8192",
        ],
        "fewer than",
    );
    expect_bad(
        &[
            "analyze",
            &d("ok.cf32"),
            "--rate",
            "2e6",
            "--clkin-tone-hz",
            "1e8",
        ],
        "centre",
    );
    expect_bad(
        &["analyze", &d("missing.cf32"), "--rate", "2e6"],
        "missing.cf32",
    );
}

/// A SigMF recording whose meta carries `global` entries `extra` besides the core ones.
fn sigmf_with(dir: &Path, name: &str, extra: serde_json::Value, data: &[u8]) -> PathBuf {
    let m = sigmf(dir, name, "cf32_le", data);
    let mut meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
    for (k, v) in extra.as_object().unwrap() {
        meta["global"][k] = v.clone();
    }
    std::fs::write(&m, serde_json::to_vec(&meta).unwrap()).unwrap();
    m
}

/// Every analysis carries a `clock` block: the recording's own `rxnode:clock` as
/// written (said to come from the recording), else "unknown" with every field null —
/// never a calibration the file does not carry; a malformed one is refused naming the
/// field.
#[test]
fn the_clock_block_comes_from_the_recording_or_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let data = cf32(&signal(1 << 16, 0.0, 0.1));
    let recorded = serde_json::json!({
        "source": "external",
        "radio": "driver=rxsim,serial=ab12",
        "last_measurement": {"ppm": 17.2951, "uncertainty_ppm": 0.0123, "method": "gsm",
            "reference": "GSM BCCH 935.200 MHz", "time": "2026-12-01T10:00:00Z",
            "age_s": 42.0, "stale": false},
        "ppm_correction_applied": 17.2951
    });
    let m = sigmf_with(
        dir.path(),
        "cal",
        serde_json::json!({"rxnode:clock": recorded}),
        &data,
    );
    let (code, r) = analyze_json(&m, &[]);
    assert_eq!(code, 0);
    assert_eq!(r.clock["from"], "recording");
    for k in [
        "source",
        "radio",
        "last_measurement",
        "ppm_correction_applied",
    ] {
        assert_eq!(r.clock[k], recorded[k], "{k}");
    }
    let (code, out, _) = run(&["analyze", m.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("clock         from the recording: source external; last calibration +17.295")
            && out.contains("(gsm, GSM BCCH 935.200 MHz, 2026-12-01T10:00:00Z)")
            && out.contains("tuning corrected by +17.2951 ppm"),
        "{out}"
    );
    // No rxnode:clock (a SigMF from elsewhere) and a raw file: unknown, nothing invented.
    let plain = sigmf(dir.path(), "plain", "cf32_le", &data);
    let raw = dir.path().join("raw.cf32");
    std::fs::write(&raw, &data).unwrap();
    for (file, extra) in [(plain, vec![]), (raw, vec!["--rate", "2e6"])] {
        let (code, r) = analyze_json(&file, &extra);
        assert_eq!(code, 0);
        assert_eq!(r.clock["from"], "unknown", "{}", file.display());
        for k in [
            "source",
            "radio",
            "last_measurement",
            "ppm_correction_applied",
        ] {
            assert!(r.clock[k].is_null(), "{k}: {}", r.clock);
        }
        assert!(r.clock["detail"].as_str().unwrap().contains("unknown"));
    }
    // A malformed one names the field and the value.
    for (bad, needle) in [
        (
            serde_json::json!("external"),
            "rxnode:clock \"external\" must be an object",
        ),
        (
            serde_json::json!({"last_measurement": {"ppm": "17", "uncertainty_ppm": 0.1,
                "method": "gsm", "reference": "x", "time": "t"}}),
            "rxnode:clock.last_measurement.ppm \"17\" must be a number of ppm in -1000 … 1000",
        ),
        // A 100 % correction is not a clock error: refused, the range named.
        (
            serde_json::json!({"ppm_correction_applied": 1e6}),
            "rxnode:clock.ppm_correction_applied 1000000.0 must be a number of ppm in -1000 … 1000 or null",
        ),
        (
            serde_json::json!({"source": 3}),
            "rxnode:clock.source 3 must be a string or null",
        ),
    ] {
        let m = sigmf_with(
            dir.path(),
            "bad",
            serde_json::json!({"rxnode:clock": bad}),
            &data,
        );
        expect_bad(&["analyze", m.to_str().unwrap()], needle);
    }
}

/// A SigMF recording `analyze` cannot read rightly is refused (exit 2) naming what,
/// never analysed wrongly: a second capture segment at another centre frequency (its
/// centre was ignored), an absurd channel count. (Multi-channel recordings are read
/// per channel: tests/it/formats.rs.)
#[test]
fn multi_frequency_sigmf_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let good = cf32(&signal(8192, 0.0, 0.1));
    let many = sigmf_with(
        dir.path(),
        "many",
        serde_json::json!({"core:num_channels": 0}),
        &good,
    );
    expect_bad(
        &["analyze", many.to_str().unwrap()],
        "core:num_channels 0 is not a count",
    );
    let seg = sigmf(dir.path(), "seg", "cf32_le", &good);
    let mut meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&seg).unwrap()).unwrap();
    meta["captures"] = serde_json::json!([
        {"core:sample_start": 0, "core:frequency": FC},
        {"core:sample_start": 4096, "core:frequency": FC + 1e6}
    ]);
    std::fs::write(&seg, serde_json::to_vec(&meta).unwrap()).unwrap();
    expect_bad(
        &["analyze", seg.to_str().unwrap()],
        "2 capture segments at different centre frequencies",
    );
}

/// Runs rxnode with a deadline: a command that blocks on a FIFO fails the test
/// (killed after 30 s) instead of hanging it.
#[cfg(unix)]
fn run_within(args: &[&str], dir: &Path) -> (i32, String) {
    let mut child = crate::util::rxnode_bin()
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run rxnode");
    let t0 = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} blocked on a FIFO (killed after 30 s)");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    (out.status.code().unwrap_or(-1), text(&out.stderr))
}

#[cfg(unix)]
fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A FIFO (no writer: opening it plainly waits for ever) or a device named as a
/// recording — a `.sigmf-meta`, the `.sigmf-data` its meta points to, a WAV, a raw
/// file — is refused at once with what it is, exit 2; so is one named as a task,
/// a result or the policy.
#[cfg(unix)]
#[test]
fn fifos_and_devices_named_as_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = |name: &str| {
        let mk = std::process::Command::new("mkfifo")
            .arg(d.join(name))
            .output()
            .expect("mkfifo");
        assert!(mk.status.success(), "mkfifo {name}");
    };
    for name in [
        "m.sigmf-meta",
        "p.sigmf-data",
        "w.wav",
        "r.cf32",
        "task.md",
        "RX_RESULT.json",
        "policy.json",
    ] {
        fifo(name);
    }
    // A good meta whose dataset is the FIFO.
    let meta = serde_json::json!({
        "global": {"core:datatype": "cf32_le", "core:sample_rate": FS, "core:version": "1.2.0"},
        "captures": [{"core:sample_start": 0, "core:frequency": FC}],
        "annotations": []
    });
    std::fs::write(d.join("p.sigmf-meta"), serde_json::to_vec(&meta).unwrap()).unwrap();
    for (args, named) in [
        (&["analyze", "m.sigmf-meta"][..], "m.sigmf-meta"),
        (&["analyze", "m.sigmf-data"][..], "m.sigmf-meta"),
        (&["analyze", "p.sigmf-meta"][..], "p.sigmf-data"),
        (&["analyze", "w.wav"][..], "w.wav"),
        (&["analyze", "r.cf32", "-r", "2M"][..], "r.cf32"),
        (
            &["analyze", "/dev/zero", "-F", "cf32", "-r", "2M"][..],
            "/dev/zero",
        ),
    ] {
        let (code, err) = run_within(args, d);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("{named}: not a regular file: a ")),
            "{args:?}: {err}"
        );
    }
    // `status` keeps the node's record, so it runs only in a checkout.
    git2::Repository::init(d).unwrap();
    for args in [
        &["validate", "task.md"][..],
        &["validate-result", "RX_RESULT.json"][..],
        &["--policy", "policy.json", "status"][..],
    ] {
        let (code, err) = run_within(args, d);
        assert_ne!(code, 0, "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
}

/// A `--plot` that cannot be written (its folder is a file) loses no analysis:
/// the JSON report is printed whole, then the failure is the error, naming the
/// file plainly (never the drawing library's debug text), exit 1.
#[test]
fn an_unwritable_plot_keeps_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("tone.cf32");
    std::fs::write(&f, cf32(&signal(65_536, 0.0, 0.1))).unwrap();
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let png = blocker.join("x.png");
    let (code, out, err) = run(&[
        "--json",
        "analyze",
        f.to_str().unwrap(),
        "-r",
        "2M",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out} {err}");
    let r: Report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    assert!(!r.peaks.is_empty(), "{out}");
    assert!(
        err.contains("the recording was analysed and reported, but its --plot was not written")
            && err.contains("Not a directory")
            && !err.contains("IoError"),
        "{err}"
    );
}

/// A WAV whose recorder was stopped before it finalised the header (data chunk
/// length 0, or the streaming placeholder 0xFFFFFFFF, samples after it) is not
/// called empty: the refusal says the header was not finalised, with the bytes
/// there and the fix; a copy cut short is not taken for one.
#[test]
fn an_unfinalised_wav_is_named_as_such_never_empty() {
    let dir = tempfile::tempdir().unwrap();
    let good = cs16(&signal(4096, 0.0, 0.1));
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    for (name, declared) in [("stopped.wav", 0u32), ("streamed.wav", u32::MAX)] {
        std::fs::write(d(name), wav(&good, 2, 16, false, Some(declared))).unwrap();
        let (code, _, err) = run(&["analyze", &d(name)]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!(
                "its header says the data chunk holds {declared} bytes, but {} bytes follow it: \
                 the header was not finalised",
                good.len()
            )) && err.contains("sox --ignore-length"),
            "{err}"
        );
    }
    let declared = good.len() as u32 * 2;
    std::fs::write(d("cut.wav"), wav(&good, 2, 16, false, Some(declared))).unwrap();
    let (code, _, err) = run(&["analyze", &d("cut.wav")]);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "its data chunk says the data holds {declared} bytes, but only {} follow the header: \
             truncated",
            good.len()
        )),
        "{err}"
    );
    assert!(!err.contains("not finalised"), "{err}");
}
