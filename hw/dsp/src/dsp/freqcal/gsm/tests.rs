use super::*;
use crate::dsp::freqcal::synth::{GsmScene, Xorshift};
use crate::dsp::freqcal::{CELL_TOLERANCE_PPM, CELL_UNCERTAINTY_PPM};

/// Run the estimator over `seconds` of a scene, fed in blocks of `block` samples.
fn estimate(
    scene: &mut GsmScene,
    seconds: f64,
    block: usize,
) -> Result<FreqCalEstimate, FreqCalError> {
    let cfg = FreqCalConfig::new(scene.carrier_hz, scene.center_hz, scene.rate);
    let mut est = FcchEstimator::new(cfg)?;
    let total = (seconds * scene.rate) as usize;
    let mut buf = vec![Complex::default(); block];
    let mut done = 0;
    while done < total {
        let k = block.min(total - done);
        scene.fill(&mut buf[..k]);
        est.feed(&buf[..k]);
        done += k;
    }
    est.finish()
}

/// The acceptance figure: 0 dB SNR in the 200 kHz channel, an error anywhere in
/// ±60 ppm, no prior, 6 s of samples → within ±0.1 ppm, on ten seeds.
#[test]
fn finds_the_error_at_zero_db_snr_anywhere_in_sixty_ppm_over_ten_seeds() {
    let mut worst: f64 = 0.0;
    let mut rng = Xorshift(0x5eed);
    for seed in 0..10u64 {
        let ppm = (rng.uniform() * 2.0 - 1.0) * 60.0;
        let mut scene = GsmScene::new(935.2e6, 935.2e6, 1e6, ppm, 0.0, seed + 1);
        let e = estimate(&mut scene, 6.0, 65_536).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let err = (e.ppm - ppm).abs();
        worst = worst.max(err);
        assert!(
            err <= 0.1,
            "seed {seed}: true {ppm:+.4} got {:+.4} ± {:.4}",
            e.ppm,
            e.uncertainty_ppm
        );
        assert!(
            e.measurement_uncertainty_ppm > 0.0 && e.measurement_uncertainty_ppm < 0.1,
            "{}",
            e.measurement_uncertainty_ppm
        );
        assert!(
            e.confidence > 0.5,
            "seed {seed}: confidence {}",
            e.confidence
        );
    }
    eprintln!("worst error {worst:.4} ppm");
}

/// The LO and the sample clock share the crystal: a fast radio at 1.8 GHz sees the
/// tone 90 kHz low; the sign and the scaling both come out right.
#[test]
fn the_sample_clock_sharing_the_crystal_is_accounted_for() {
    for (ppm, seed) in [(50.0, 7), (-50.0, 8)] {
        let mut scene = GsmScene::new(1_805.2e6, 1_805.2e6, 1e6, ppm, 20.0, seed);
        let e = estimate(&mut scene, 3.0, 10_000).unwrap_or_else(|e| panic!("{e}"));
        assert!((e.ppm - ppm).abs() < 0.02, "{ppm}: {}", e.ppm);
    }
}

#[test]
fn gmsk_and_noise_without_fcch_give_no_number() {
    let mut scene = GsmScene::new(935.2e6, 935.2e6, 1e6, 12.0, 20.0, 3);
    scene.fcch = false;
    let r = estimate(&mut scene, 3.0, 4096);
    assert!(
        matches!(&r, Err(FreqCalError::NotFound(m)) if m.starts_with("no GSM FCCH found")),
        "{r:?}"
    );
    // A steady carrier in the search range is background, not a burst.
    let mut scene = GsmScene::new(935.2e6, 935.2e6, 1e6, 0.0, -100.0, 4);
    scene.fcch = false;
    scene.cw_hz = Some(70e3);
    let r = estimate(&mut scene, 2.0, 4096);
    assert!(matches!(r, Err(FreqCalError::NotFound(_))), "{r:?}");
}

/// The refinement assumes one tone in the burst. A steady spur beside the FCCH tone
/// pulled every burst onto itself (+7 dB at 10 kHz: −4.86 ± 10⁻¹⁵ ppm for +5; −8 dB
/// at 300 Hz: 25σ off), and one on the tone hid every burst as "0 burst(s)" without a
/// word on the spur. Each is now no number, naming the carrier; a spur far from the
/// tone changes nothing.
#[test]
fn a_steady_carrier_beside_the_fcch_tone_gives_no_number_and_is_named() {
    let (ppm, rate) = (5.0, 1e6);
    // The FCCH tone at baseband (Hz at the stated rate).
    let tone = (935.2e6 + FCCH_OFFSET_HZ) / (1.0 + ppm * 1e-6) - 935.2e6;
    for (seed, off, db) in [(21, 10e3, 7.0), (22, 300.0, -8.0), (23, 0.0, -5.0)] {
        let mut scene = GsmScene::new(935.2e6, 935.2e6, rate, ppm, 20.0, seed);
        scene.cw_hz = Some(tone + off);
        scene.cw_db = db;
        let r = estimate(&mut scene, 2.0, 8192);
        assert!(
            matches!(&r, Err(FreqCalError::NotFound(m)) if m.contains("a steady carrier at 935.2")),
            "spur {off} Hz from the tone at {db} dB: {r:?}"
        );
    }
    let mut scene = GsmScene::new(935.2e6, 935.2e6, rate, ppm, 20.0, 24);
    scene.cw_hz = Some(tone - 40e3);
    let e = estimate(&mut scene, 2.0, 8192).unwrap_or_else(|e| panic!("far spur: {e}"));
    assert!(
        (e.ppm - ppm).abs() <= 3.0 * e.uncertainty_ppm,
        "far spur: {} ± {}",
        e.ppm,
        e.uncertainty_ppm
    );
}

#[test]
fn block_size_does_not_change_the_estimate() {
    let a = estimate(
        &mut GsmScene::new(935.2e6, 935.2e6, 1e6, -23.0, 3.0, 5),
        2.0,
        1,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let b = estimate(
        &mut GsmScene::new(935.2e6, 935.2e6, 1e6, -23.0, 3.0, 5),
        2.0,
        100_003,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.ppm, b.ppm);
    assert_eq!(a.evidence.detections.len(), b.evidence.detections.len());
}

#[test]
fn a_rate_too_low_for_the_search_range_names_the_field() {
    let r = FcchEstimator::new(FreqCalConfig::new(935.2e6, 935.2e6, 250e3));
    assert!(matches!(
        r,
        Err(FreqCalError::InvalidSetting {
            field: "sample_rate_hz",
            ..
        })
    ));
}

#[test]
fn robust_inliers_trim_ten_percent_and_far_outliers() {
    let mut v: Vec<f64> = (0..20).map(|i| 1.0 + 0.001 * f64::from(i % 5)).collect();
    v[3] = 40.0;
    let k = robust_inliers(&v);
    assert!(!k[3]);
    assert_eq!(k.iter().filter(|x| **x).count(), 16);
}

/// Above 2 MS/s the detector runs behind the decimating front end at about 1 MS/s:
/// the error comes out as exactly as at the radio's own rate, and the evidence is in
/// the radio's frame (offsets around the tone's nominal offset, times from its first
/// sample).
#[test]
fn the_decimating_front_end_measures_at_high_rates_in_the_radios_frame() {
    for (rate, carrier, ppm, seed) in [(20e6, 1_805.2e6, 50.0, 7), (61.44e6, 935.2e6, -37.0, 9)] {
        let mut scene = GsmScene::new(carrier, carrier, rate, ppm, 10.0, seed);
        let cfg = FreqCalConfig::new(carrier, carrier, rate);
        let est = FcchEstimator::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        let det_rate = est.detector_rate_hz();
        assert!(
            (1e6..2e6).contains(&det_rate),
            "{rate}: detector at {det_rate}"
        );
        let e = estimate(&mut scene, 1.2, 65_536).unwrap_or_else(|e| panic!("{rate}: {e}"));
        assert!(
            (e.ppm - ppm).abs() < 0.02,
            "{rate}: true {ppm} got {}",
            e.ppm
        );
        let truth = crate::dsp::freqcal::offset_for_ppm(carrier + FCCH_OFFSET_HZ, carrier, ppm);
        let [lo, hi] = e.evidence.search_hz;
        assert!(
            lo < truth && truth < hi,
            "{rate}: {truth} not in {lo}..{hi}"
        );
        assert!((e.evidence.nominal_offset_hz - FCCH_OFFSET_HZ).abs() < 1e-6);
        assert!((e.evidence.seconds_analysed - 1.2).abs() < 1e-3);
        let used: Vec<_> = e.evidence.detections.iter().filter(|d| d.used).collect();
        assert!(used.len() >= 15, "{rate}: {} bursts", used.len());
        for d in used {
            assert!(
                (d.offset_hz - truth).abs() < 50.0,
                "{rate}: {}",
                d.offset_hz
            );
            assert!((0.0..1.2).contains(&d.time_s), "{rate}: {}", d.time_s);
        }
    }
}

/// A front end's state is a block's worth of samples and the filter, whatever the
/// capture's length: nothing grows with time but one record per burst.
#[test]
fn the_front_end_keeps_bounded_memory() {
    let (rate, carrier) = (61.44e6, 935.2e6);
    let mut scene = GsmScene::new(carrier, carrier, rate, 3.0, 10.0, 11);
    let mut est = FcchEstimator::new(FreqCalConfig::new(carrier, carrier, rate))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut buf = vec![Complex::default(); 65_536];
    let mut high = 0;
    for _ in 0..(0.5 * rate / 65_536.0) as usize {
        scene.fill(&mut buf);
        est.feed(&buf);
        let f = est.front.as_ref().map(|f| f.out.capacity() + f.dec.taps());
        high = high.max(f.unwrap_or(usize::MAX));
    }
    assert!(high < 65_536, "{high}");
    assert!(est.ring.len() <= 1 << 12, "{}", est.ring.len());
}

/// A recording whose stated rate is wrong (1 MS/s stated, 1.024 MS/s recorded; 1.001 and
/// 0.98 too) shifts the FCCH tone's place by the same factor: a confident number 1.6 ppm
/// off with a σ of 0.001 ppm. GSM's TDMA frame is a clock in the signal, and the bursts'
/// spacing says the samples ran 2.4 % off: no number. The true rate, with the radio's own
/// clock anywhere in ±60 ppm, keeps its number.
#[test]
fn a_wrong_sample_rate_is_caught_by_the_tdma_frame_timing_and_gives_no_number() {
    for stated in [1e6, 1.001e6, 0.98e6] {
        let mut scene = GsmScene::new(935.2e6, 935.2e6, 1.024e6, 5.0, 20.0, 11);
        let cfg = FreqCalConfig::new(scene.carrier_hz, scene.center_hz, stated);
        let mut est = FcchEstimator::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![Complex::default(); 65_536];
        for _ in 0..(3.0 * scene.rate / 65_536.0) as usize {
            scene.fill(&mut buf);
            est.feed(&buf);
        }
        match est.finish() {
            Ok(e) => panic!(
                "stated {stated}: a number {:+.4} ± {:.4} ppm",
                e.ppm, e.uncertainty_ppm
            ),
            Err(e) => assert!(
                e.to_string()
                    .contains("do not keep GSM's TDMA frame timing")
                    && e.to_string().contains("1.024"),
                "stated {stated}: {e}"
            ),
        }
    }
    for (ppm, seed) in [(59.0, 12), (-59.0, 13)] {
        let mut scene = GsmScene::new(935.2e6, 935.2e6, 1.024e6, ppm, 0.0, seed);
        let e = estimate(&mut scene, 3.0, 65_536).unwrap_or_else(|e| panic!("{ppm}: {e}"));
        assert!((e.ppm - ppm).abs() < 0.1, "{ppm}: {}", e.ppm);
    }
}

/// A radio 90 ppm off puts its FCCH tone outside the searched offsets: no number,
/// and the reason says what the search covered instead of only "0 burst(s)",
/// which read as "no signal" to an operator whose radio was simply further off.
#[test]
fn a_radio_beyond_the_searched_error_is_told_what_the_search_covered() {
    let mut scene = GsmScene::new(935.2e6, 935.2e6, 1e6, 90.0, 10.0, 3);
    match estimate(&mut scene, 2.0, 65_536) {
        Err(FreqCalError::NotFound(why)) => {
            assert!(why.contains("0 burst(s)"), "{why}");
            assert!(
                why.contains("within ±60 ppm of the carrier at 935.200000 MHz"),
                "{why}"
            );
        }
        other => panic!("a number or another error for a radio 90 ppm off: {other:?}"),
    }
}

/// The estimator measures the radio against the cell, whose own frequency may be
/// off by its 3GPP tolerance (±0.05 ppm): a perfect radio beside a cell at either
/// edge of it must be reported within 3σ of its true 0 ppm. Without the cell's term
/// the stated σ was the bursts' spread alone (about 0.001 ppm at 20 dB), and such a
/// cell read as a radio error of ∓0.05 ppm at 40 σ.
#[test]
fn a_cell_at_its_frequency_tolerance_stays_within_the_stated_uncertainty() {
    let nominal = 935.2e6;
    for (seed, sign) in [(7u64, 1.0), (8, -1.0)] {
        let cell_rf = nominal * (1.0 + sign * CELL_TOLERANCE_PPM * 1e-6);
        let mut scene = GsmScene::new(cell_rf, nominal, 1e6, 0.0, 20.0, seed);
        let cfg = FreqCalConfig::new(nominal, nominal, 1e6);
        let mut est = FcchEstimator::new(cfg).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = vec![Complex::default(); 65_536];
        for _ in 0..(4_000_000 / buf.len()) {
            scene.fill(&mut buf);
            est.feed(&buf);
        }
        let e = est.finish().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        // The bursts themselves see the cell's offset sharply …
        assert!(
            (e.ppm + sign * CELL_TOLERANCE_PPM).abs() < 0.01,
            "seed {seed}: {:+.4}",
            e.ppm
        );
        assert!(e.measurement_uncertainty_ppm < 0.01, "{e:?}");
        // … and the radio's error (truly 0) is stated with the cell's term in it.
        assert!(
            e.uncertainty_ppm >= CELL_UNCERTAINTY_PPM,
            "seed {seed}: σ {}",
            e.uncertainty_ppm
        );
        assert!(
            e.ppm.abs() <= 3.0 * e.uncertainty_ppm,
            "seed {seed}: {:+.4} ± {:.4} ppm for a perfect radio",
            e.ppm,
            e.uncertainty_ppm
        );
    }
}
