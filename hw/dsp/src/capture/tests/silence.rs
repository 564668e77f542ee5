//! Digital silence in a recording: runs of at least [`MIN_SILENT_RUN`] samples that
//! are exactly zero are skipped, counted and never analysed; a recording without
//! such runs gives the numbers it gave before the rule, bit for bit.
use super::*;
use crate::iq::{IqFormat, IqReader};

/// The file source as it was before the silence rule: the reader read straight
/// through.
struct Plain(IqReader);

impl SampleSource for Plain {
    fn read(&mut self, buf: &mut [Complex<f32>], _t: i64) -> Result<ReadOutcome> {
        self.0.read(buf).map(ReadOutcome::Samples)
    }
    fn is_live(&self) -> bool {
        false
    }
}

/// A tone at +300 kHz (−20 dBFS) in noise (−60 dBFS), 2 MS/s.
fn tone(n: usize) -> Vec<Complex<f32>> {
    let mut noise = Noise::new(7);
    let a = 0.1f64;
    (0..n)
        .map(|i| {
            let ph = 2.0 * PI * 300e3 * i as f64 / 2e6;
            let v = noise.complex(1e-3);
            Complex::new((a * ph.cos() + v.re) as f32, (a * ph.sin() + v.im) as f32)
        })
        .collect()
}

fn write_cf32(path: &std::path::Path, x: &[Complex<f32>]) {
    let bytes: Vec<u8> = x
        .iter()
        .flat_map(|c| [c.re, c.im])
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// The settings `rxnode analyze` uses (64 Ki-sample blocks, the CLKIN check on the
/// tone), with a hook, as analyze runs (one DSP thread).
fn analyze<S: SampleSource>(src: S, samples: u64) -> CaptureSummary {
    let mut w = WelchConfig::new(2048, 2e6);
    w.center_hz = Some(100e6);
    let mut s = CaptureSettings::new(samples, w);
    s.block_samples = 1 << 16;
    s.pool_blocks = 4;
    s.psd_points = 2048;
    s.clkin = Some(ClkinConfig::new(100.3e6, 100e6, 2e6, 50.0));
    run_capture_with_hook(src, &s, &AtomicBool::new(false), None, None, &mut |_| {}).unwrap()
}

/// The summary as JSON without the wall-clock time.
fn figures(s: &CaptureSummary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap();
    v["duration_s"] = serde_json::Value::Null;
    v
}

#[test]
fn a_recording_without_silence_gives_the_numbers_it_gave_before() {
    let dir = tempfile::tempdir().unwrap();
    // Zero runs one sample short of the rule, one across a block boundary, and
    // scattered zero samples: all analysed as before.
    let mut x = tone(400_000);
    let short = (MIN_SILENT_RUN - 1) as usize;
    for at in [1000, (1 << 16) - 500, 200_000, 400_000 - short] {
        x[at..at + short].fill(Complex::new(0.0, 0.0));
    }
    for k in (0..x.len()).step_by(97) {
        x[k] = Complex::new(0.0, -0.0);
    }
    let p = dir.path().join("near.cf32");
    write_cf32(&p, &x);
    // A quiet 8-bit band: noise of 0.5 step, so about half the samples are exactly 0.
    let mut noise = Noise::new(3);
    let q8: Vec<u8> = (0..300_000)
        .flat_map(|_| {
            // 0.5 step in each of I and Q.
            let v = noise.complex(0.5 * 2f64.sqrt());
            [v.re.round() as i8 as u8, v.im.round() as i8 as u8]
        })
        .collect();
    let zeros = q8.chunks(2).filter(|c| c == &[0, 0]).count();
    assert!(zeros > 100_000, "{zeros} zero samples");
    let p8 = dir.path().join("quiet.cs8");
    std::fs::write(&p8, &q8).unwrap();
    for (path, format) in [(&p, IqFormat::Cf32), (&p8, IqFormat::Cs8)] {
        let open = || IqReader::open(path, Some(format)).unwrap();
        let n = open().info().samples;
        let mut file = FileSource::new(open());
        let now = analyze(&mut file, n);
        let before = analyze(Plain(open()), n);
        assert_eq!(file.silence().samples, 0, "{format:?}");
        assert_eq!(file.silence().run_count, 0, "{format:?}");
        assert_eq!(file.silence().min_run, Some(MIN_SILENT_RUN));
        assert_eq!(now.samples_processed, n);
        assert_eq!(figures(&now), figures(&before), "{format:?}");
    }
}

#[test]
fn runs_of_exact_zeros_are_skipped_counted_and_not_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = tone(1_000_000);
    let min = MIN_SILENT_RUN as usize;
    // At the start, across a 64 Ki block boundary, one exactly at the rule, one
    // longer than the look-ahead (several reads), and at the end.
    let runs = [
        (0usize, 3000usize),
        ((1 << 16) - 700, 1500),
        (300_000, min),
        (400_000, 200_000),
        (1_000_000 - 5000, 5000),
    ];
    for (at, n) in runs {
        x[at..at + n].fill(Complex::new(-0.0, 0.0));
    }
    let p = dir.path().join("gaps.cf32");
    write_cf32(&p, &x);
    let mut file = FileSource::new(IqReader::open(&p, None).unwrap());
    let sum = analyze(&mut file, 1_000_000);
    let silent: u64 = runs.iter().map(|r| r.1 as u64).sum();
    let s = file.silence();
    assert_eq!(
        s.runs,
        runs.map(|(start, samples)| SilentRun {
            start: start as u64,
            samples: samples as u64
        })
    );
    assert_eq!((s.run_count, s.samples), (5, silent));
    assert_eq!(sum.silent_samples, silent);
    assert_eq!(sum.samples_received, 1_000_000);
    assert_eq!(sum.samples_processed, 1_000_000 - silent);
    assert_eq!(sum.lost_samples, Some(0));
    // Three runs lie between analysed samples; the first and last do not.
    assert_eq!(sum.gaps, 3);
    assert!(!sum.clean);
    // The mean power is of the recorded samples only: the tone's −20 dBFS with
    // its noise, not lowered by the zeros.
    let kept: Vec<&Complex<f32>> = {
        let mut silent = vec![false; x.len()];
        for (at, n) in runs {
            silent[at..at + n].fill(true);
        }
        x.iter()
            .zip(silent)
            .filter(|(_, s)| !s)
            .map(|(c, _)| c)
            .collect()
    };
    let want = 10.0
        * (kept.iter().map(|c| f64::from(c.norm_sqr())).sum::<f64>() / kept.len() as f64).log10();
    let got = sum.mean_power_dbfs.unwrap();
    assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    assert!((got + 20.0).abs() < 0.05, "{got}");
    assert!(
        (sum.peaks[0].power_db + 20.0).abs() < 0.5,
        "{:?}",
        sum.peaks
    );
    // The coherent CLKIN estimate is not made across a run of silence.
    let c = sum.clkin.unwrap();
    assert_eq!(c.status, ClkinStatus::NotMeasured);
    assert_eq!(c.ppm, None);
    assert!(
        c.detail.contains(&format!(
            "the stream has 3 gaps: {silent} samples of digital silence skipped"
        )),
        "{}",
        c.detail
    );
}

#[test]
fn a_recording_of_zeros_gives_no_level() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("zero.cs16");
    std::fs::write(&p, vec![0u8; 4 * 100_000]).unwrap();
    let mut file = FileSource::new(IqReader::open(&p, None).unwrap());
    let sum = analyze(&mut file, 100_000);
    assert_eq!(file.silence().samples, 100_000);
    assert_eq!(sum.samples_processed, 0);
    assert_eq!((sum.mean_power_dbfs, sum.noise_floor_db), (None, None));
    assert!(sum.peaks.is_empty());
    assert_eq!(sum.averages, 0);
    assert_eq!(sum.status, CaptureStatus::Fail);
}

#[test]
fn an_unsigned_recording_has_no_exact_zero_and_is_read_through() {
    let dir = tempfile::tempdir().unwrap();
    // cu8 bytes 0 are the corner (−127.5, −127.5)/128, not silence: analysed as
    // they are (40 % of the samples at +3 dBFS: −1 dBFS in all).
    let p = dir.path().join("fill.cu8");
    let mut b = vec![127u8; 2 * 50_000];
    b[20_000..60_000].fill(0);
    std::fs::write(&p, &b).unwrap();
    let mut file = FileSource::new(IqReader::open(&p, None).unwrap());
    let sum = analyze(&mut file, 50_000);
    assert_eq!(file.silence().min_run, None);
    assert_eq!(file.silence().samples, 0);
    assert_eq!(sum.samples_processed, 50_000);
    let p = sum.mean_power_dbfs.unwrap();
    assert!((p + 1.0).abs() < 0.05, "{p}");
}
