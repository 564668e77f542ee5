//! The LTE estimator against synthetic downlinks (`synth`: built from the standard's
//! definitions, not through rxsim): a 1.4 MHz FDD cell seen by a radio whose LO and
//! sample clock are off by the same ppm, plus Gaussian noise.
use super::*;
use crate::dsp::freqcal::freq_cal_estimator;

/// What a radio sees of a cell.
#[derive(Clone, Copy)]
struct Scene {
    carrier_hz: f64,
    center_hz: f64,
    rate: f64,
    ppm: f64,
    /// Cell power over the noise in its 1.08 MHz; `None`: no cell.
    snr_db: Option<f64>,
}

fn run(
    scene: Scene,
    pci: u16,
    seconds: f64,
    seed: u64,
) -> (Result<FreqCalEstimate, FreqCalError>, usize) {
    run_with_clock(scene, scene.ppm, pci, seconds, seed)
}

/// As [`run`], with the radio's sample clock off by `clock_ppm` (its LO by `scene.ppm`).
fn run_with_clock(
    scene: Scene,
    clock_ppm: f64,
    pci: u16,
    seconds: f64,
    seed: u64,
) -> (Result<FreqCalEstimate, FreqCalError>, usize) {
    let s = scene;
    let gen = LteScene::new(
        LteCell::new(pci, s.carrier_hz, s.rate)
            .tuned_to(s.center_hz)
            .ppm(s.ppm)
            .snr_db(s.snr_db)
            .seed(seed),
    );
    run_scene(gen, scene, clock_ppm, seconds)
}

/// The estimator over `seconds` of `gen` (its sample clock off by `clock_ppm`).
fn run_scene(
    mut gen: LteScene,
    s: Scene,
    clock_ppm: f64,
    seconds: f64,
) -> (Result<FreqCalEstimate, FreqCalError>, usize) {
    gen.clock_ppm = clock_ppm;
    let mut est =
        LteEstimator::new(FreqCalConfig::new(s.carrier_hz, s.center_hz, s.rate)).expect("config");
    let mut max_buf = 0;
    let mut block = vec![Complex::new(0.0f32, 0.0); 8192];
    let mut left = (seconds * s.rate) as usize;
    while left > 0 {
        let k = left.min(block.len());
        gen.fill(&mut block[..k]);
        est.feed(&block[..k]);
        max_buf = max_buf.max(est.buf.capacity());
        left -= k;
    }
    (est.finish(), max_buf)
}

/// The acceptance case: −6 dB, a radio at +37 ppm, 2 s → within ±0.05 ppm, the PCI
/// reported, and memory bounded (the 1.92 MS/s buffer never holds more than the
/// acquisition window, the samples that arrive during the search spread over them — at
/// most 1 s — and a few half frames).
#[test]
fn minus_6_db_at_plus_37_ppm_is_measured_within_005_ppm_with_its_pci() {
    for (seed, carrier, pci) in [(1u64, 1842.5e6, 301u16), (2, 806e6, 17), (3, 2680e6, 503)] {
        let scene = Scene {
            carrier_hz: carrier,
            center_hz: carrier,
            rate: 1.92e6,
            ppm: 37.0,
            snr_db: Some(-6.0),
        };
        let (r, max_buf) = run(scene, pci, 2.0, seed);
        let e = r.expect("estimate");
        assert!(
            (e.ppm - 37.0).abs() < 0.05,
            "seed {seed}: {} ppm ± {}",
            e.ppm,
            e.uncertainty_ppm
        );
        assert!(
            e.measurement_uncertainty_ppm > 0.0 && e.measurement_uncertainty_ppm < 0.02,
            "{}",
            e.measurement_uncertainty_ppm
        );
        // The reported uncertainty covers the error (5 σ).
        assert!(
            (e.ppm - 37.0).abs() < 5.0 * e.uncertainty_ppm + 1e-4,
            "{} ± {}",
            e.ppm,
            e.uncertainty_ppm
        );
        assert_eq!(e.cell, format!("PCI {pci} at {:.1} MHz", carrier / 1e6));
        assert!(
            e.confidence > 0.7 && e.confidence <= 1.0,
            "{}",
            e.confidence
        );
        assert_eq!(e.method, FreqCalMethod::Lte);
        assert!(e.evidence.detections.len() > 250);
        assert!(
            max_buf <= ACQ_LEN + ACQ_SPREAD + 8 * HALF_FRAME,
            "{max_buf}"
        );
    }
}

/// A radio at 7.68 MS/s and −52 ppm, tuned 50 kHz off the cell, at 2.68 GHz: the
/// decimator and the offset search cover it.
#[test]
fn other_rates_signs_and_an_offset_tuning_are_measured() {
    let scene = Scene {
        carrier_hz: 2680e6,
        center_hz: 2680.05e6,
        rate: 7.68e6,
        ppm: -52.0,
        snr_db: Some(0.0),
    };
    let e = run(scene, 42, 1.0, 7).0.expect("estimate");
    assert!(
        (e.ppm + 52.0).abs() < 0.05,
        "{} ± {}",
        e.ppm,
        e.uncertainty_ppm
    );
    assert_eq!(e.cell, "PCI 42 at 2680.0 MHz");
    let scene = Scene {
        rate: 2.4e6,
        ppm: 11.3,
        center_hz: 2680e6,
        ..scene
    };
    let e = run(scene, 0, 1.0, 8).0.expect("estimate");
    assert!(
        (e.ppm - 11.3).abs() < 0.05,
        "{} ± {}",
        e.ppm,
        e.uncertainty_ppm
    );
    assert_eq!(e.cell, "PCI 0 at 2680.0 MHz");
}

/// Noise alone: an error saying no cell was found, never a number.
#[test]
fn no_cell_is_an_error_never_a_number() {
    let scene = Scene {
        carrier_hz: 806e6,
        center_hz: 806e6,
        rate: 1.92e6,
        ppm: 10.0,
        snr_db: None,
    };
    for seed in [1, 2] {
        match run(scene, 0, 1.0, seed).0 {
            Err(FreqCalError::NotFound(m)) => assert!(m.starts_with("no LTE cell found"), "{m}"),
            other => panic!("expected no cell, got {other:?}"),
        }
    }
    // Too short to say anything: also no number.
    match run(
        Scene {
            snr_db: Some(10.0),
            ..scene
        },
        3,
        0.02,
        3,
    )
    .0
    {
        Err(FreqCalError::NotFound(m)) => assert!(m.contains("too short"), "{m}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Settings that cannot work are refused up front, naming the field.
#[test]
fn impossible_settings_are_refused_naming_the_field() {
    let bad = |c: FreqCalConfig| match freq_cal_estimator(FreqCalMethod::Lte, c) {
        Err(FreqCalError::InvalidSetting { field, .. }) => field,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    };
    assert_eq!(bad(FreqCalConfig::new(806e6, 806e6, 1e6)), "sample_rate_hz");
    assert_eq!(
        bad(FreqCalConfig::new(806e6, 806.5e6, 1.92e6)),
        "frequency_hz"
    );
    assert_eq!(
        bad(FreqCalConfig {
            max_error_ppm: f64::NAN,
            ..FreqCalConfig::new(806e6, 806e6, 1.92e6)
        }),
        "max_error_ppm"
    );
    assert!(freq_cal_estimator(
        FreqCalMethod::Lte,
        FreqCalConfig::new(2680e6, 2680e6, 61.44e6)
    )
    .is_ok());
}

/// The acquisition's search is spread over the blocks that follow its window: no block
/// carries more than its share (one (root, offset) pair per `per_pair` new samples), so
/// the capture engine's DSP thread is never held for the whole search; the cell is
/// still found and every PSS since the window tracked.
#[test]
fn the_acquisition_is_spread_over_the_following_blocks() {
    let mut gen = LteScene::new(
        LteCell::new(17, 806e6, 1.92e6)
            .ppm(37.0)
            .snr_db(Some(-6.0))
            .seed(4),
    );
    let mut est = LteEstimator::new(FreqCalConfig::new(806e6, 806e6, 1.92e6)).expect("config");
    let total = 3 * est.shifts.len();
    let mut block = vec![Complex::new(0.0f32, 0.0); 4800];
    let (mut most, mut calls_searching) = (0, 0);
    for _ in 0..(2.0 * 1.92e6 / 4800.0) as usize {
        gen.fill(&mut block);
        let before = est.search.as_ref().map_or(0, |s| s.next);
        let was_acquiring = matches!(est.state, State::Acquiring { .. });
        est.feed(&block);
        if was_acquiring && est.buf_start == 0 {
            let after = match (&est.search, &est.state) {
                (Some(s), _) => s.next,
                (None, State::Acquiring { .. }) => 0,
                _ => total,
            };
            most = most.max(after.saturating_sub(before));
            calls_searching += 1;
        }
    }
    assert!(
        most <= 4800 / est.per_pair + 1 + ACQ_LEN / est.per_pair,
        "{most} of {total}"
    );
    assert!(calls_searching > 10, "{calls_searching}");
    let e = est.finish().unwrap_or_else(|e| panic!("{e}"));
    assert!((e.ppm - 37.0).abs() < 0.05, "{}", e.ppm);
    assert!(
        e.evidence.detections.len() > 300,
        "{}",
        e.evidence.detections.len()
    );
}

/// A coarse estimate (the PSS timing, cyclic prefixes and SSS, reported when the PSS
/// phase's 200 Hz alias cannot be picked with 4 σ to spare) states an uncertainty that
/// covers its error: at 2.68 GHz and −9 dB every seed falls back to it, and every error
/// is within 3 σ.
#[test]
fn a_coarse_estimate_states_an_uncertainty_that_covers_its_error() {
    let scene = Scene {
        carrier_hz: 2680e6,
        center_hz: 2680e6,
        rate: 1.92e6,
        ppm: 37.0,
        snr_db: Some(-9.0),
    };
    let mut coarse = 0;
    for seed in 1..=6u64 {
        let e = run(scene, (seed * 37 % 504) as u16, 2.0, seed)
            .0
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        // The PSS phase fit states ~1e-6 ppm; the coarse estimate ~1e-2 ppm.
        if e.measurement_uncertainty_ppm > 1e-3 {
            coarse += 1;
        }
        assert!(
            (e.ppm - 37.0).abs() <= 3.0 * e.uncertainty_ppm,
            "seed {seed}: {} ± {} ppm",
            e.ppm,
            e.uncertainty_ppm
        );
    }
    assert!(coarse >= 4, "only {coarse} of 6 seeds fell back");
}

/// A radio whose sample clock is not tied to its LO (here 3 ppm apart, and LO −20 ppm
/// with the clock at +20 ppm): the PSS arrival drift and the carrier disagree, so the
/// one-crystal assumption fails and there is never a number — the step says the error
/// is not measurable and why.
#[test]
fn an_lo_and_sample_clock_on_two_crystals_give_no_number() {
    for (lo, clock, seed) in [
        (12.0, 15.0, 1u64),
        (12.0, 15.0, 2),
        (-20.0, 20.0, 3),
        (-20.0, 20.0, 4),
    ] {
        let scene = Scene {
            carrier_hz: 806e6,
            center_hz: 806e6,
            rate: 1.92e6,
            ppm: lo,
            snr_db: Some(-6.0),
        };
        match run_with_clock(scene, clock, 17, 2.0, seed).0 {
            Ok(e) => panic!(
                "LO {lo} clock {clock} seed {seed}: a number {} ± {}",
                e.ppm, e.uncertainty_ppm
            ),
            Err(FreqCalError::NotFound(m)) => {
                assert!(
                    m.contains("not measurable") || m.contains("no LTE cell found"),
                    "{m}"
                )
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
}

/// A TDD cell (frame structure type 2: SSS three symbols before the PSS, uplink
/// subframes silent) seen by a one-crystal radio is measured: the frame structure is
/// told from the data, the PCI named with "(TDD)", and the number lies within 3 of its
/// stated σ of the truth.
#[test]
fn a_tdd_cell_is_measured_within_its_stated_uncertainty() {
    for (seed, carrier, ppm, snr, pci) in [
        (5u64, 2600e6, 12.0, 0.0, 101u16),
        (6, 2350e6, -37.5, -3.0, 7),
        (7, 1900e6, 55.0, 6.0, 503),
    ] {
        let scene = Scene {
            carrier_hz: carrier,
            center_hz: carrier,
            rate: 1.92e6,
            ppm,
            snr_db: Some(snr),
        };
        let gen = LteScene::new(
            LteCell::new(pci, carrier, scene.rate)
                .ppm(ppm)
                .snr_db(scene.snr_db)
                .seed(seed)
                .frame(LteFrame::Tdd),
        );
        let e = run_scene(gen, scene, ppm, 2.0)
            .0
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let err = e.ppm - ppm;
        eprintln!(
            "TDD seed {seed}: {:+.7} ± {:.2e} ppm (truth {ppm:+}), error {err:+.2e} = {:.2} σ",
            e.ppm,
            e.uncertainty_ppm,
            err / e.uncertainty_ppm
        );
        assert_eq!(
            e.cell,
            format!("PCI {pci} at {:.1} MHz (TDD)", carrier / 1e6)
        );
        assert_eq!(e.pci, Some(pci));
        assert!(
            e.measurement_uncertainty_ppm > 0.0 && e.measurement_uncertainty_ppm < 0.05,
            "seed {seed}: σ {}",
            e.measurement_uncertainty_ppm
        );
        assert!(
            err.abs() <= 3.0 * e.uncertainty_ppm,
            "seed {seed}: {} ± {} ppm, truth {ppm}",
            e.ppm,
            e.uncertainty_ppm
        );
    }
}

/// A TDD cell seen by a radio whose LO and sample clock run on two crystals (LO −20,
/// clock +20 ppm; LO 12, clock 15 ppm): never a confident wrong number — either none,
/// saying why, or the LO's error within 3 stated σ.
#[test]
fn a_tdd_cell_with_lo_and_sample_clock_on_two_crystals_gives_no_wrong_number() {
    for (lo, clock, seed) in [(-20.0, 20.0, 8u64), (-20.0, 20.0, 9), (12.0, 15.0, 10)] {
        let scene = Scene {
            carrier_hz: 2600e6,
            center_hz: 2600e6,
            rate: 1.92e6,
            ppm: lo,
            snr_db: Some(0.0),
        };
        let gen = LteScene::new(
            LteCell::new(101, 2600e6, 1.92e6)
                .ppm(lo)
                .snr_db(scene.snr_db)
                .seed(seed)
                .frame(LteFrame::Tdd),
        );
        match run_scene(gen, scene, clock, 2.0).0 {
            Ok(e) => assert!(
                (e.ppm - lo).abs() <= 3.0 * e.uncertainty_ppm,
                "LO {lo} clock {clock} seed {seed}: {} ± {} ppm",
                e.ppm,
                e.uncertainty_ppm
            ),
            Err(FreqCalError::NotFound(m)) => {
                eprintln!("LO {lo} clock {clock} seed {seed}: {m}");
                assert!(
                    m.contains("not measurable") || m.contains("no LTE cell found"),
                    "{m}"
                )
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
}

/// A cell whose frame geometry is neither assumed one (FDD with the extended cyclic
/// prefix: its SSS 160 samples before the PSS, not 137 or 412) gives no number: its
/// PSS is found, but no SSS stands out where either frame structure puts it, so the
/// cell's identity and the geometry of the carrier looks are not confirmed.
#[test]
fn a_cell_of_neither_frame_geometry_gives_no_number() {
    for (seed, ppm) in [(11u64, 20.0), (12, -41.0)] {
        let scene = Scene {
            carrier_hz: 806e6,
            center_hz: 806e6,
            rate: 1.92e6,
            ppm,
            snr_db: Some(6.0),
        };
        let gen = LteScene::new(
            LteCell::new(55, 806e6, 1.92e6)
                .ppm(ppm)
                .snr_db(scene.snr_db)
                .seed(seed)
                .frame(LteFrame::FddExtendedCp),
        );
        match run_scene(gen, scene, ppm, 2.0).0 {
            Ok(e) => panic!("seed {seed}: a number {} ± {}", e.ppm, e.uncertainty_ppm),
            Err(e) => {
                let m = e.to_string();
                eprintln!("extended CP seed {seed}: {m}");
                assert!(
                    m.contains("not measurable") || m.contains("no LTE cell found"),
                    "{m}"
                );
            }
        }
    }
}

/// A strong cell seen by a radio far off frequency keeps its number: its two carrier
/// looks (cyclic prefixes, PSS–SSS) differ by a few hertz of timing–frequency coupling
/// while each claims a hertz or less, so they scatter beyond their σ on one alias; that
/// widens the coarse estimate instead of losing the measurement (20 dB at +17.3 ppm
/// was "4.6 σ apart", no number). The number lies within 3 of its stated σ.
#[test]
fn a_strong_cell_far_off_frequency_is_measured() {
    for (ppm, snr, seed) in [(17.3, 20.0, 21u64), (-30.0, 25.0, 22), (41.0, 15.0, 23)] {
        let scene = Scene {
            carrier_hz: 1842.5e6,
            center_hz: 1842.5e6,
            rate: 1.92e6,
            ppm,
            snr_db: Some(snr),
        };
        let e = run(scene, 0, 2.0, seed)
            .0
            .unwrap_or_else(|e| panic!("{ppm} ppm at {snr} dB: {e}"));
        assert!(
            (e.ppm - ppm).abs() <= 3.0 * e.uncertainty_ppm.max(1e-7),
            "{ppm} ppm at {snr} dB: {} ± {}",
            e.ppm,
            e.uncertainty_ppm
        );
    }
}

/// A radio whose sample clock sits exactly one SSS alias (14.01 kHz) from its LO:
/// the PSS–SSS look falls onto the arrival drift, and only the cyclic prefixes, about
/// 1 kHz away, tell — far beyond the few hertz one alias's looks may differ by. Never
/// a number, at any SNR.
#[test]
fn looks_one_alias_apart_give_no_number() {
    let carrier = 806e6;
    let alias_ppm = LTE_RATE_HZ / 137.0 / carrier * 1e6;
    for (snr, seed) in [(0.0, 31u64), (20.0, 32)] {
        let scene = Scene {
            carrier_hz: carrier,
            center_hz: carrier,
            rate: 1.92e6,
            ppm: 5.0,
            snr_db: Some(snr),
        };
        match run_with_clock(scene, 5.0 + alias_ppm, 17, 2.0, seed).0 {
            Ok(e) => panic!("{snr} dB: a number {} ± {}", e.ppm, e.uncertainty_ppm),
            Err(FreqCalError::NotFound(m)) => assert!(m.contains("not measurable"), "{m}"),
            Err(e) => panic!("{snr} dB: {e}"),
        }
    }
}
