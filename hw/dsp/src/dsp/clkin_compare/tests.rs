//! Unit tests of `clkin_compare` on synthetic slices.
use super::*;
use crate::dsp::clkin::tests::{synth, Tone};

const FS: f64 = 1e6;
const FC: f64 = 100e6;
const TONE: f64 = 100.2e6;

/// One radio with clock error `eps` watching the tone at RF `tone` for `secs`,
/// SNR `snr_db` over the noise of the whole band, noise seed `seed`.
fn radio(eps: f64, tone: f64, secs: f64, snr_db: f64, seed: u64) -> Vec<Complex<f32>> {
    let a = 0.03;
    synth(&Tone {
        n: (secs * FS) as usize,
        fs: FS,
        fc: FC,
        tone,
        eps,
        a,
        noise: a / 10f64.powf(snr_db / 20.0),
        seed,
    })
}

/// The track of `x` fed in blocks of `chunk`.
fn track(x: &[Complex<f32>], chunk: usize) -> ToneTrack {
    let mut t = ToneTracker::new(ToneTrackConfig::new(TONE, FC, FS)).expect("valid settings");
    for c in x.chunks(chunk) {
        t.feed(c);
    }
    t.finish()
}

fn compare(
    eps_m: f64,
    eps_s: f64,
    tone: f64,
    secs: f64,
    snr_db: f64,
    seed: u64,
) -> CompareEstimate {
    let m = track(&radio(eps_m, tone, secs, snr_db, seed), 8192);
    let s = track(&radio(eps_s, tone, secs, snr_db, seed ^ 0xABCD), 8192);
    compare_tracks(&m, &s).expect("an estimate")
}

/// The exact relative frequency of two clock errors, in ppb.
fn truth(eps_m: f64, eps_s: f64) -> f64 {
    ((1.0 + eps_s) / (1.0 + eps_m) - 1.0) * 1e9
}

#[test]
fn two_radios_on_one_reference_agree_to_far_below_a_ppb_and_are_locked() {
    // Both 0.3 ppm fast: the same reference.
    let e = compare(0.3e-6, 0.3e-6, TONE, 1.0, 30.0, 1);
    assert!(e.relative_ppb.abs() < 0.05, "{e:?}");
    assert!(e.uncertainty_ppb > 0.0 && e.uncertainty_ppb < 0.05, "{e:?}");
    assert_eq!(judge_compare(&e, 10.0, true), Some(CompareVerdict::Locked));
    // Without a radio on an external reference the same agreement is only AGREE.
    assert_eq!(judge_compare(&e, 10.0, false), Some(CompareVerdict::Agree));
    assert!(e.points >= 50, "{} points", e.points);
}

#[test]
fn a_slave_on_its_own_crystal_fifty_ppb_fast_is_measured_and_unlocked() {
    let e = compare(0.0, 0.05e-6, TONE, 1.0, 30.0, 2);
    assert!((e.relative_ppb - truth(0.0, 0.05e-6)).abs() < 0.1, "{e:?}");
    assert_eq!(
        judge_compare(&e, 10.0, true),
        Some(CompareVerdict::Unlocked)
    );
    // Slow instead of fast: the sign follows.
    let e = compare(0.0, -0.05e-6, TONE, 1.0, 30.0, 3);
    assert!((e.relative_ppb + 50.0).abs() < 0.1, "{e:?}");
}

#[test]
fn a_slave_five_ppm_off_is_measured_without_bin_ambiguity() {
    // 5 ppm of 100.2 MHz is 501 Hz: many coarse bins and point bandwidths away.
    for (m, s) in [(0.0, 5e-6), (2e-6, -3e-6), (-10e-6, 10e-6)] {
        let e = compare(m, s, TONE, 1.0, 30.0, 4);
        assert!((e.relative_ppb - truth(m, s)).abs() < 0.5, "{m} {s}: {e:?}");
    }
}

#[test]
fn the_tones_own_error_drops_out() {
    // A generator 20 ppm off its dial: the same relative frequency.
    let off = TONE * (1.0 + 20e-6);
    let e = compare(1e-6, 1.05e-6, off, 1.0, 30.0, 5);
    assert!((e.relative_ppb - truth(1e-6, 1.05e-6)).abs() < 0.1, "{e:?}");
}

#[test]
fn the_estimate_does_not_depend_on_how_the_stream_is_cut() {
    let xm = radio(0.0, TONE, 0.5, 20.0, 6);
    let xs = radio(0.2e-6, TONE, 0.5, 20.0, 7);
    let a = compare_tracks(&track(&xm, 8192), &track(&xs, 8192)).expect("estimate");
    let b = compare_tracks(&track(&xm, 1000), &track(&xs, 77)).expect("estimate");
    assert!(
        (a.relative_ppb - b.relative_ppb).abs() < 1e-3,
        "{a:?} {b:?}"
    );
    assert_eq!(a.points, b.points);
}

/// The uncertainty is honest: over 24 noise seeds at a low SNR the errors scatter as
/// the stated σ says (their RMS in units of σ is near 1), not far wider or narrower.
#[test]
fn the_uncertainty_matches_the_scatter_of_the_errors() {
    let mut z2 = 0.0;
    let runs = 24;
    for seed in 0..runs {
        let e = compare(0.0, 0.1e-6, TONE, 0.5, 0.0, 100 + seed);
        let z = (e.relative_ppb - truth(0.0, 0.1e-6)) / e.uncertainty_ppb;
        z2 += z * z;
    }
    let rms = (z2 / runs as f64).sqrt();
    assert!((0.5..=1.6).contains(&rms), "z RMS {rms}");
}

#[test]
fn a_tone_too_weak_in_either_radio_gives_no_number() {
    let m = track(&radio(0.0, TONE, 0.5, 30.0, 8), 4096);
    // −45 dB over the band's noise: below 0 dB in each phase point.
    let s = track(&radio(0.0, TONE, 0.5, -45.0, 9), 4096);
    let e = compare_tracks(&m, &s).expect_err("too weak");
    assert!(e.to_string().contains("tone too weak in SLAVE"), "{e}");
    let e = compare_tracks(&s, &m).expect_err("too weak");
    assert!(e.to_string().contains("tone too weak in MASTER"), "{e}");
    // No tone at all: the same refusal, never a number.
    let none = track(&radio(0.0, TONE + 300e3, 0.5, 30.0, 10), 4096);
    let e = compare_tracks(&m, &none).expect_err("no tone in the window");
    assert!(e.to_string().contains("tone too weak in SLAVE"), "{e}");
}

#[test]
fn a_stream_that_delivered_too_little_gives_no_number() {
    let m = track(&radio(0.0, TONE, 0.5, 30.0, 11), 4096);
    let s = track(&radio(0.0, TONE, 0.01, 30.0, 12), 4096);
    let e = compare_tracks(&m, &s).expect_err("too short");
    assert!(e.to_string().contains("SLAVE delivered"), "{e}");
}

#[test]
fn a_broken_stream_ends_the_track_where_it_broke() {
    let x = radio(0.0, TONE, 1.0, 30.0, 13);
    let mut t = ToneTracker::new(ToneTrackConfig::new(TONE, FC, FS)).expect("valid");
    t.feed(&x[..400_000]);
    t.break_track();
    t.feed(&x[400_000..]);
    let broken = t.finish();
    assert_eq!(broken.broken_at, Some(400_000));
    assert_eq!(broken.samples, 400_000);
    let whole = track(&x, 8192);
    assert!(broken.points.len() < whole.points.len() / 2 + 1);
    // What came before the break is still measured, over its own span.
    let e = compare_tracks(&whole, &broken).expect("estimate");
    assert_eq!(e.points, broken.points.len());
    assert!(e.relative_ppb.abs() < 0.1, "{e:?}");
}

#[test]
fn level_and_snr_are_reported_per_radio() {
    let t = track(&radio(0.0, TONE, 0.5, 30.0, 14), 4096);
    let level = t.level_dbfs.expect("level");
    assert!((level - 20.0 * 0.03f64.log10()).abs() < 1.0, "{level}");
    let snr = t.snr_db.expect("snr");
    assert!((snr - 30.0).abs() < 2.0, "{snr}");
}

#[test]
fn memory_stays_bounded_at_the_highest_rate() {
    // 61.44 MS/s: the phase points come at a few hundred per second, whatever the rate.
    let t = ToneTracker::new(ToneTrackConfig::new(433.92e6, 433.9e6, 61.44e6)).expect("valid");
    let per_s = 61.44e6 / t.samples_per_point() as f64;
    assert!(per_s < 400.0, "{per_s} points/s");
    // 60 s of points and the coarse block fit in well under a MiB.
    assert!(per_s * 60.0 * 8.0 + 16384.0 * 8.0 < 1.0 * 1024.0 * 1024.0);
}

#[test]
fn settings_outside_the_band_are_refused_by_name() {
    let e = ToneTracker::new(ToneTrackConfig::new(FC + 600e3, FC, FS)).expect_err("outside");
    assert!(e.to_string().contains("tone_hz"), "{e}");
    let e = ToneTracker::new(ToneTrackConfig::new(f64::NAN, FC, FS)).expect_err("nan");
    assert!(e.to_string().contains("tone_hz"), "{e}");
}

#[test]
fn the_trace_and_its_fit_line_follow_the_phase_difference() {
    let e = compare(0.0, 0.05e-6, TONE, 1.0, 30.0, 15);
    assert!(e.trace_t_s.len() <= TRACE_POINTS && e.trace_t_s.len() > 50);
    assert_eq!(e.trace_t_s.len(), e.trace_rad.len());
    // 50 ppb of 100.2 MHz is 5.01 Hz: the slave's tone is lower, its phase falls.
    let last = e.trace_rad.len() - 1;
    let fit = e.fit_intercept_rad + e.fit_slope_rad_s * e.trace_t_s[last];
    assert!(
        (e.trace_rad[last] - fit).abs() < 0.2,
        "{} vs {fit}",
        e.trace_rad[last]
    );
    assert!(e.fit_slope_rad_s < 0.0);
}

/// A radio whose input saturated: rxsim's +6 dBFS tone clipped at full scale read
/// "tone 1.7 dBFS (65.9 dB over the band's noise)", the converter's level, not the
/// tone's. With more than 1 % of the samples clipped the track has no level and no
/// band SNR; its phase points, which keep the tone's frequency, still compare.
#[test]
fn a_clipped_radio_has_no_tone_level_but_still_compares() {
    let clip = |x: Vec<Complex<f32>>, gain: f32| -> Vec<Complex<f32>> {
        x.into_iter()
            .map(|v| {
                Complex::new(
                    (v.re * gain).clamp(-1.0, 1.0),
                    (v.im * gain).clamp(-1.0, 1.0),
                )
            })
            .collect()
    };
    let (eps_m, eps_s) = (0.5e-6, 0.7e-6);
    let m = track(&radio(eps_m, TONE, 1.0, 30.0, 3), 8192);
    // 0.03 × 66 ≈ 2: a +6 dBFS tone, clipped on most samples.
    let s = track(&clip(radio(eps_s, TONE, 1.0, 30.0, 4), 66.0), 8192);
    assert!(m.level_dbfs.is_some() && m.snr_db.is_some(), "{m:?}");
    assert!(
        s.clipped * 100 > s.samples,
        "{} of {}",
        s.clipped,
        s.samples
    );
    assert_eq!((s.level_dbfs, s.snr_db), (None, None), "{s:?}");
    let e = compare_tracks(&m, &s).expect("an estimate");
    assert!(
        (e.relative_ppb - truth(eps_m, eps_s)).abs() <= 3.0 * e.uncertainty_ppb + 0.01,
        "{e:?}"
    );
    // Just under full scale is not clipped: the level stays.
    let s = track(&clip(radio(eps_s, TONE, 1.0, 30.0, 4), 20.0), 8192);
    assert_eq!(s.clipped, 0);
    assert!(s.level_dbfs.is_some_and(|l| (l + 4.4).abs() < 0.1), "{s:?}");
}

/// Two radios tuned to the tone with no tone connected see only their own DC offset /
/// LO leakage, at 0 Hz of baseband whatever their clocks do: they compared to
/// −0.00034 ± 0.00038 ppb (AGREE). A tone read at either radio's DC gives no number; the
/// same radios 200 kHz from the tone are still measured within 3σ.
#[test]
fn a_tone_at_a_radios_dc_gives_no_comparison() {
    let leak = |phase: f64, seed| -> Vec<Complex<f32>> {
        let mut g = crate::dsp::welch::tests::Noise::new(seed);
        (0..FS as usize)
            .map(|_| {
                let v = Complex::from_polar(0.01, phase) + g.complex(0.001);
                Complex::new(v.re as f32, v.im as f32)
            })
            .collect()
    };
    let at_centre = |x: &[Complex<f32>]| {
        let mut t = ToneTracker::new(ToneTrackConfig::new(FC, FC, FS)).expect("valid");
        t.feed(x);
        t.finish()
    };
    let m = at_centre(&leak(0.3, 3));
    let s = at_centre(&leak(1.7, 4));
    let r = compare_tracks(&m, &s).map(|e| (e.relative_ppb, e.uncertainty_ppb));
    assert!(
        format!("{r:?}").contains("the tone lies at MASTER's own DC"),
        "{r:?}"
    );
    // A real tone at the centre of a locked pair is no number either (nothing tells it
    // from the leakage) …
    let m = at_centre(&radio(0.0, FC, 1.0, 30.0, 5));
    let s = at_centre(&radio(0.0, FC, 1.0, 30.0, 6));
    let r = compare_tracks(&m, &s).map(|e| e.relative_ppb);
    assert!(format!("{r:?}").contains("own DC"), "{r:?}");
    // … while the tone 200 kHz from the centre is measured.
    let e = compare(1e-6, 1.5e-6, TONE, 1.0, 30.0, 7);
    let t = truth(1e-6, 1.5e-6);
    assert!(
        (e.relative_ppb - t).abs() <= 3.0 * e.uncertainty_ppb,
        "{} ± {} for {t}",
        e.relative_ppb,
        e.uncertainty_ppb
    );
}
