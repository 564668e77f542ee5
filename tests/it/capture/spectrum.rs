//! `rxnode capture`: the spectrum's figures of a silent radio, and on several DSP threads.
use super::*;

/// A radio that delivers every sample as zero (rxsim's noise below anything a
/// float holds) measured nothing: FAIL naming why, the floor and the mean power
/// `null`, no peak, a CLKIN check without an SNR, no PNG — never −300 dBFS.
#[test]
fn capture_of_a_silent_radio_fails_without_a_floor() {
    let env = Env::new();
    let dev = "driver=rxsim,noise_dbfs=-1000";
    let o = env.capture(dev, "0.1", &["--json", "--clkin-tone-hz", "100.1e6"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    let s = summary(&o);
    assert_eq!(s.samples_processed, 100_000);
    assert!(s.clean && s.averages > 0, "{s:?}");
    assert_eq!(s.status, CaptureStatus::Fail);
    assert_eq!((s.noise_floor_db, s.mean_power_dbfs), (None, None));
    assert!(s.peaks.is_empty(), "{:?}", s.peaks);
    assert!(
        s.errors
            .contains(&"noise floor not measured (no signal: every sample is zero)".to_owned()),
        "{:?}",
        s.errors
    );
    let k = s.clkin.expect("the CLKIN check");
    assert_eq!(k.status, ClkinStatus::Fail);
    assert!(
        k.detail
            .contains("no signal, the searched band has no power"),
        "{}",
        k.detail
    );
    let o = env.capture(dev, "0.1", &["--clkin-tone-hz", "100.1e6"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 1, "{text}{}", err(&o));
    assert!(
        text.contains("noise floor   n/a (no signal: every sample is zero; FFT 2048"),
        "{text}"
    );
    for bad in ["-300", "inf dB", "NaN"] {
        assert!(!text.contains(bad), "{bad} in:\n{text}");
    }
    let png = env.path().join("silent.png");
    let o = env.capture(dev, "0.1", &["--plot", png.to_str().unwrap()]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert!(
        err(&o).contains("no bin of the capture's spectrum has power"),
        "{}",
        err(&o)
    );
    assert!(!png.exists());
}

/// The analysis on three DSP threads gives the one-thread PSD (to 0.01 dB), peaks,
/// counts and CLKIN figures on the same rxsim stream, native CS16 recorded beside it
/// (the recordings are the same bytes: the writer takes the threads' blocks in order).
#[test]
fn dsp_threads_give_the_one_thread_spectrum() {
    let env = Env::new();
    let run = |threads: &str, file: &str| {
        let o = env
            .rxnode()
            .env("RXNODE_DSP_THREADS", threads)
            .args([
                "capture",
                "--device",
                "driver=rxsim,tone_hz=100.1e6,tone_dbfs=-30,ext_ref=1,ext_ppm=0.7",
                "--frequency-hz",
                "100e6",
                "--sample-rate-hz",
                "1e6",
                "--duration-s",
                "0.6",
                "--clock-source",
                "external",
                "--clkin-tone-hz",
                "100.1e6",
                "--clkin-tolerance-ppm",
                "2",
                "--record",
                file,
                "--record-format",
                "ci16",
                "--json",
            ])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        summary(&o)
    };
    let one = run("1", "one.sigmf-data");
    let three = run("3", "three.sigmf-data");
    for s in [&one, &three] {
        assert_eq!(s.status, CaptureStatus::Pass, "{s:?}");
        assert_eq!(s.samples_processed, 600_000);
        assert_eq!(s.lost_samples, Some(0));
    }
    assert_eq!(one.averages, three.averages);
    let (p, q) = (one.psd.as_ref().unwrap(), three.psd.as_ref().unwrap());
    assert_eq!(p.db.len(), q.db.len());
    assert_eq!((p.start_hz, p.step_hz), (q.start_hz, q.step_hz));
    let worst =
        p.db.iter()
            .zip(&q.db)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
    assert!(worst < 0.01, "PSD {worst} dB apart");
    let peaks = |s: &CaptureSummary| -> Vec<(f64, f64)> {
        s.peaks
            .iter()
            .map(|p| (p.frequency_hz, p.power_db))
            .collect()
    };
    assert!(!one.peaks.is_empty());
    for (a, b) in peaks(&one).iter().zip(&peaks(&three)) {
        assert_eq!(a.0, b.0);
        assert!((a.1 - b.1).abs() < 0.01, "{a:?} vs {b:?}");
    }
    assert_eq!(one.peaks.len(), three.peaks.len());
    let (a, b) = (one.clkin.as_ref().unwrap(), three.clkin.as_ref().unwrap());
    assert_eq!(a.status, ClkinStatus::Pass, "{a:?}");
    assert_eq!(a.status, b.status);
    let ppm = a.ppm.expect("ppm");
    assert!((ppm - 0.7).abs() < 0.05, "{ppm}");
    assert_eq!(a.ppm, b.ppm);
    let data = |f: &str| std::fs::read(env.path().join(f)).unwrap();
    assert_eq!(data("one.sigmf-data").len(), 4 * 600_000);
    assert!(data("one.sigmf-data") == data("three.sigmf-data"));
}
