//! Unit tests of the live capture: the pool, the speed check and the paths.
use super::pace::{pool_blocks, speed_notice, wants_native, POOL_MAX_BYTES};
use super::*;

/// The speed check says nothing when the DSP keeps up, and otherwise names what it
/// measured, how long it looked, what the rate needs, that the capture goes ahead
/// and reports any loss, and what to change.
#[test]
fn the_speed_notice_names_the_measurement_and_what_the_rate_needs() {
    let m = rxnode_dsp::DspSpeed {
        samples: 20_000_000,
        seconds: 0.2,
        samples_per_s: 100e6,
    };
    assert_eq!(speed_notice(&m, 100e6, "Welch N=2048"), None);
    assert_eq!(speed_notice(&m, 61.44e6, "Welch N=2048"), None);
    let n = speed_notice(&m, 200e6, "CS16 to float, Welch N=2048 + CLKIN")
        .unwrap_or_else(|| panic!("100 MS/s cannot keep up with 200 MS/s"));
    assert_eq!(
        n,
        "this machine may not keep up: its DSP (CS16 to float, Welch N=2048 + CLKIN) ran at \
         100.0 MS/s in a 0.20 s check, the sample rate needs 200.0 MS/s; the capture goes ahead \
         and reports any lost samples (status PARTIAL with the count) — lower the rate or the \
         FFT size, or drop the CLKIN check, to lose none"
    );
}

/// The pool holds 0.5 s of the stream within 384 MiB: CF32 as before up to
/// 100 MS/s, native CS16 above, and never more memory as the rate grows.
#[test]
fn the_pool_is_half_a_second_within_its_memory_bound() {
    let b = 1 << 16;
    assert_eq!(pool_blocks(2e6, b, 8, 64), 64);
    assert_eq!(pool_blocks(61.44e6, b, 8, 64), 469);
    assert_eq!(pool_blocks(200e6, b, 4, 64), 1526);
    for (rate, bytes) in [(200e6, 8), (250e6, 4), (1e12, 4), (f64::INFINITY, 8)] {
        let n = pool_blocks(rate, b, bytes, 64);
        assert!(
            (n * b * bytes) as f64 <= POOL_MAX_BYTES,
            "{rate} {bytes}: {n}"
        );
    }
    let c = |rate: f64| LiveCapture {
        device: "driver=rxsim".into(),
        frequency_hz: 100e6,
        sample_rate_hz: rate,
        gain_db: None,
        gain_elements: None,
        bandwidth_hz: None,
        antenna: None,
        clock_source: None,
        duration_s: 1.0,
        fft_size: 2048,
        clkin: None,
        record: None,
        record_format: RecordFormat::Cf32,
        max_iq_bytes: None,
        max_peaks: 5,
        min_snr_db: 10.0,
        calibration: None,
        radio: Default::default(),
    };
    assert!(!wants_native(&c(61.44e6), false));
    assert!(!wants_native(&c(100e6), false));
    assert!(wants_native(&c(200e6), false));
    assert!(!wants_native(&c(200e6), true));
    let mut rec = c(200e6);
    rec.record = Some("x.cf32".into());
    assert!(!wants_native(&rec, false));
}

#[test]
fn paths_inside_the_checkout_are_relative() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let f = d.path().join(".local/rx_iq/T/capture-1.sigmf-data");
    std::fs::create_dir_all(f.parent().unwrap_or(d.path())).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&f, b"x").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        relative_to(&f, d.path()),
        ".local/rx_iq/T/capture-1.sigmf-data"
    );
}
