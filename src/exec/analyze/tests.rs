//! Unit tests of `rxnode analyze`'s option checks.
use super::recording::check_options;
use super::*;

fn options() -> AnalyzeOptions {
    AnalyzeOptions {
        file: "x.cf32".into(),
        sample_rate_hz: None,
        frequency_hz: None,
        bandwidth_hz: None,
        format: None,
        fft: crate::options::FftOptions { fft_size: 2048 },
        overlap: 0.5,
        clkin: crate::options::ClkinOptions {
            clkin_tone_hz: None,
            clkin_tolerance_ppm: 0.5,
            clkin_expected_dbfs: None,
        },
        plot: None,
        force: false,
        peaks: crate::options::PeakOptions {
            max_peaks: 8,
            min_snr_db: 6.0,
        },
        channel: None,
        freq_cal: None,
        carrier_hz: None,
        store_for_radio: None,
    }
}

/// A refused option is named by the request's field (exit 2), never by a flag;
/// a second field in the message is named as a field too.
#[test]
fn bad_options_name_the_fields_not_flags() {
    assert!(check_options(&options()).is_ok());
    let refusal = |o: AnalyzeOptions| {
        let e = check_options(&o).expect_err("must be refused");
        let b = crate::exit::expect_field_error(&e);
        (
            b.field,
            b.message.fields().collect::<Vec<_>>(),
            e.to_string(),
        )
    };
    let mut o = options();
    o.peaks.max_peaks = 0;
    let (field, _, text) = refusal(o);
    assert_eq!(field, "max_peaks");
    assert_eq!(text, "max_peaks 0 must be in 1..=64");
    let (field, _, text) = refusal(AnalyzeOptions {
        overlap: 1.0,
        ..options()
    });
    assert_eq!(field, "overlap");
    assert_eq!(text, "overlap 1 must be in [0, 1)");
    let dir = tempfile::tempdir().expect("tempdir");
    let plot = dir.path().join("a.png");
    std::fs::write(&plot, b"").expect("write");
    let (field, fields, text) = refusal(AnalyzeOptions {
        plot: Some(plot.clone()),
        ..options()
    });
    assert_eq!(field, "plot");
    assert_eq!(fields, ["plot", "force"]);
    assert_eq!(
        text,
        format!(
            "plot: {} already exists; choose another name, or force to overwrite it",
            plot.display()
        )
    );
}
