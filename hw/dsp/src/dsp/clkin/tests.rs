//! Unit tests of `clkin`.
use super::*;
use crate::dsp::scenes::full_band;
use crate::dsp::welch::tests::Noise;
use std::f64::consts::PI;

/// A synthetic recording: a tone at RF `tone` seen by a receiver with error `eps`,
/// amplitude `a`, complex noise of total power `noise²`.
pub(crate) struct Tone {
    /// Complex samples.
    pub(crate) n: usize,
    /// Sample rate, Hz.
    pub(crate) fs: f64,
    /// Nominal centre frequency, Hz.
    pub(crate) fc: f64,
    /// The tone's RF frequency, Hz.
    pub(crate) tone: f64,
    /// The receiver's clock error (fraction, not ppm).
    pub(crate) eps: f64,
    /// Tone amplitude.
    pub(crate) a: f64,
    /// Noise amplitude (total power `noise²`).
    pub(crate) noise: f64,
    /// Noise generator seed.
    pub(crate) seed: u64,
}

/// Baseband samples of the tone `t`.
pub(crate) fn synth(t: &Tone) -> Vec<Complex<f32>> {
    let f_bb = (t.tone - t.fc * (1.0 + t.eps)) / (1.0 + t.eps);
    let cyc = f_bb / t.fs;
    let mut g = Noise::new(t.seed);
    (0..t.n)
        .map(|i| {
            let ph = 2.0 * PI * (cyc * i as f64).fract();
            let v = Complex::from_polar(t.a, ph + 0.3) + g.complex(t.noise);
            Complex::new(v.re as f32, v.im as f32)
        })
        .collect()
}

fn estimate(x: &[Complex<f32>], cfg: ClkinConfig, chunk: usize) -> Result<ClkinEstimate> {
    let band = full_band(x, cfg.sample_rate_hz, cfg.center_hz)?;
    let mut e = ClkinEstimator::new(cfg)?;
    for c in x.chunks(chunk) {
        e.feed(c);
    }
    e.finish(&band)
}

#[test]
fn ppm_within_a_hundredth_at_100_mhz() {
    // 2 s at 2 MS/s, tone 100.1 MHz, centre 100 MHz. Tone −50.5 dBFS, noise −40 dBFS.
    let (fs, fc, tone) = (2e6, 100e6, 100.1e6);
    for (eps_ppm, seed) in [(2.5, 1), (-2.5, 2), (0.3, 3)] {
        let x = synth(&Tone {
            n: 4_000_000,
            fs,
            fc,
            tone,
            eps: eps_ppm * 1e-6,
            a: 0.003,
            noise: 0.01,
            seed,
        });
        let est = estimate(&x, ClkinConfig::new(tone, fc, fs, 5.0), 10_007).expect("estimate");
        let err = est.ppm - eps_ppm;
        assert!(
            err.abs() <= 0.01,
            "ε {eps_ppm} ppm: got {} ({err:+e})",
            est.ppm
        );
        assert!(
            err.abs() <= 3.0 * est.ppm_uncertainty,
            "{est:?} err {err:e}"
        );
        assert!(est.ppm_uncertainty < 0.01, "{est:?}");
        assert!(est.ppm_uncertainty > 0.0);
        // The tone appears below its true frequency when the clock is fast.
        assert_eq!(est.measured_hz < tone, eps_ppm > 0.0);
    }
}

#[test]
fn large_offset_and_short_capture() {
    let (fs, fc, tone) = (2e6, 433.9e6, 434.0e6);
    let x = synth(&Tone {
        n: 200_000,
        fs,
        fc,
        tone,
        eps: -20e-6,
        a: 0.1,
        noise: 0.01,
        seed: 4,
    });
    let est = estimate(&x, ClkinConfig::new(tone, fc, fs, 15.0), 4096).unwrap();
    assert!((est.ppm + 20.0).abs() < 0.05, "{est:?}");
}

#[test]
fn no_tone_is_an_error_not_a_number() {
    let x = synth(&Tone {
        n: 300_000,
        fs: 2e6,
        fc: 100e6,
        tone: 100.1e6,
        eps: 0.0,
        a: 0.0,
        noise: 0.01,
        seed: 5,
    });
    let err = estimate(&x, ClkinConfig::new(100.1e6, 100e6, 2e6, 0.5), 5000).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("reference tone too weak: SNR"), "{msg}");
    assert!(msg.contains("dB after integration, need"), "{msg}");
}

/// Memory stays bounded on a long capture: past `max_decimated` decimated samples the
/// estimator keeps nothing more and measures over what it kept.
#[test]
fn a_long_capture_keeps_at_most_max_decimated_samples() {
    let (fs, fc, tone) = (2e6, 100e6, 100.1e6);
    let x = synth(&Tone {
        n: 2_000_000,
        fs,
        fc,
        tone,
        eps: 1.5e-6,
        a: 0.01,
        noise: 0.01,
        seed: 8,
    });
    let mut cfg = ClkinConfig::new(tone, fc, fs, 5.0);
    cfg.max_decimated = 2048;
    let mut e = ClkinEstimator::new(cfg).unwrap();
    for c in x.chunks(65_536) {
        e.feed(c);
    }
    assert_eq!(e.dec.len(), 2048);
    assert!(e.dec.capacity() <= 65_536, "{}", e.dec.capacity());
    let m = e.stage.decimation() as u64;
    let est = e.finish(&full_band(&x, fs, fc).unwrap()).unwrap();
    // 2048 decimated samples of M ≈ 250: the first ~0.26 s.
    assert_eq!(est.samples, 2049 * m);
    assert!(est.samples < 600_000);
    assert!(
        (est.ppm - 1.5).abs() <= 3.0 * est.ppm_uncertainty,
        "{est:?}"
    );
}

#[test]
fn tone_outside_the_band_is_rejected() {
    let err = ClkinEstimator::new(ClkinConfig::new(105e6, 100e6, 2e6, 0.5)).unwrap_err();
    assert!(err.to_string().contains("tone_hz"), "{err}");
}

fn est(ppm: f64) -> ClkinEstimate {
    ClkinEstimate {
        tone_hz: 1e8,
        measured_hz: 1e8,
        baseband_hz: 0.0,
        ppm,
        ppm_uncertainty: 0.001,
        tone_snr_db: 30.0,
        samples: 1,
        checked: Checks::new().pass().unwrap(),
    }
}

#[test]
fn verdict_needs_tolerance_and_no_contradiction() {
    let ev = ClockEvidence::default();
    assert_eq!(
        judge_clkin(1e8, 0.5, Ok(&est(0.2)), &ev, &[]).status,
        ClkinStatus::Pass
    );
    assert_eq!(
        judge_clkin(1e8, 0.5, Ok(&est(-0.6)), &ev, &[]).status,
        ClkinStatus::Fail
    );
    let ev = ClockEvidence {
        expected_source: Some("external".into()),
        clock_source: Some("external".into()),
        ref_locked: Some(true),
        hw_clock_source: Some("internal".into()),
        hackrf_clkin: Some(true),
    };
    let r = judge_clkin(1e8, 0.5, Ok(&est(0.0)), &ev, &[]);
    assert_eq!(r.status, ClkinStatus::Fail);
    assert!(
        r.detail.contains("hardware info clock source"),
        "{}",
        r.detail
    );
    assert_eq!(r.evidence.len(), 6);
    let ev = ClockEvidence {
        hw_clock_source: Some("external".into()),
        ..ev
    };
    assert_eq!(
        judge_clkin(1e8, 0.5, Ok(&est(0.0)), &ev, &[]).status,
        ClkinStatus::Pass
    );
    let ev = ClockEvidence {
        ref_locked: Some(false),
        ..ev
    };
    assert_eq!(
        judge_clkin(1e8, 0.5, Ok(&est(0.0)), &ev, &[]).status,
        ClkinStatus::Fail
    );
    let err = Error::Clkin("no tone".into());
    let r = judge_clkin(1e8, 0.5, Err(&err), &ClockEvidence::default(), &[]);
    assert_eq!(r.status, ClkinStatus::Fail);
    assert!(r.ppm.is_none());
}

mod table;

mod fmt_ppm_tests {
    use super::fmt_ppm;

    #[test]
    fn signed_zero_prints_plain() {
        assert_eq!(fmt_ppm(-0.0, 4), "0.0000");
        assert_eq!(fmt_ppm(0.0, 4), "0.0000");
        assert_eq!(fmt_ppm(-0.00001, 4), "0.0000");
        assert_eq!(fmt_ppm(-0.0001, 3), "0.000");
        assert_eq!(fmt_ppm(2.5012, 4), "+2.5012");
        assert_eq!(fmt_ppm(-1.25, 3), "-1.250");
    }
}

/// A reference (or clock) that drifts during the capture: 1 s at 2 MS/s, the clock
/// error running linearly from 0 to `span` ppm, a −40 dBFS tone at 100.1 MHz in
/// −60 dBFS of noise, tolerance `tol` ppm.
fn drifting(span_ppm: f64, tol: f64) -> Result<ClkinEstimate> {
    let (fs, n, tone) = (2e6, 2_000_000usize, 100.1e6);
    let mut g = Noise::new(5);
    let mut ph = 0.0f64;
    let x: Vec<Complex<f32>> = (0..n)
        .map(|i| {
            let e = span_ppm * 1e-6 * i as f64 / (n - 1) as f64;
            ph = (ph + (tone - 100e6 - tone * e) / fs).fract();
            let v = Complex::from_polar(0.01, 2.0 * PI * ph) + g.complex(1e-3);
            Complex::new(v.re as f32, v.im as f32)
        })
        .collect();
    estimate(&x, ClkinConfig::new(tone, 100e6, fs, tol), 65_536)
}

/// A clock that drifted from 0 to 0.8 ppm over the capture read +0.4006 ± 0.0000034 ppm,
/// PASS within ±0.5 ppm, though it was 0.8 ppm off at the end; 2.5 ppm read "too weak:
/// SNR 64.5 dB …, need 18 dB". A move between the halves past a tenth of the tolerance
/// is no number; a smaller one widens the uncertainty to cover it; a steady tone keeps
/// its σ.
#[test]
fn a_drifting_reference_gives_no_number_and_a_small_drift_widens_the_uncertainty() {
    for (span, tol) in [(0.8, 0.5), (0.5, 2.0), (2.0, 2.0)] {
        let e = drifting(span, tol).map(|e| (e.ppm, e.ppm_uncertainty));
        let err = format!("{e:?}");
        assert!(
            err.contains("the reference tone is not steady"),
            "{span}: {err}"
        );
    }
    let e = drifting(2.5, 2.0).map(|e| (e.ppm, e.ppm_uncertainty));
    let err = format!("{e:?}");
    assert!(
        err.contains("no steady reference tone") && !err.contains("too weak"),
        "{err}"
    );
    let e = drifting(0.08, 0.5).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        (e.ppm - 0.04).abs() < 0.001 && e.ppm_uncertainty >= 0.035,
        "{e:?}"
    );
    let e = drifting(0.0, 0.5).unwrap_or_else(|e| panic!("{e}"));
    assert!(e.ppm.abs() < 1e-5 && e.ppm_uncertainty < 1e-5, "{e:?}");
}

/// A reference 16 ppm off (a generator set 1.6 kHz high, or a clock past the window)
/// at −40 dBFS, 80 dB over the noise after integration, was "reference tone too weak:
/// SNR 8.6 dB": the window was empty, the tone beside it. It is named with its place.
#[test]
fn a_strong_tone_beside_the_window_is_named_not_called_too_weak() {
    let x = synth(&Tone {
        n: 2_000_000,
        fs: 2e6,
        fc: 100e6,
        tone: 100.1016e6,
        eps: 0.0,
        a: 0.01,
        noise: 1e-3,
        seed: 9,
    });
    let err = format!(
        "{:?}",
        estimate(&x, ClkinConfig::new(100.1e6, 100e6, 2e6, 0.5), 65_536).map(|e| e.ppm)
    );
    assert!(
        err.contains("lies outside the window at 100.101600 MHz")
            && err.contains("-15.99 ppm")
            && !err.contains("too weak"),
        "{err}"
    );
    let noise = synth(&Tone {
        a: 0.0,
        ..Tone {
            n: 2_000_000,
            fs: 2e6,
            fc: 100e6,
            tone: 100.1e6,
            eps: 0.0,
            a: 0.0,
            noise: 1e-3,
            seed: 9,
        }
    });
    let err = format!(
        "{:?}",
        estimate(&noise, ClkinConfig::new(100.1e6, 100e6, 2e6, 0.5), 65_536).map(|e| e.ppm)
    );
    assert!(
        err.contains("reference tone too weak") && !err.contains("outside the window"),
        "{err}"
    );
}

/// Two carriers closer than the search resolves read as one between them: 1 s at
/// 2 MS/s, a −40 dBFS tone 200 Hz above 100 MHz and a second as strong 0.4 Hz above it
/// read −2.001996 ± 0.000045 ppm (44σ from either carrier's −2.0000). They beat, so the
/// tone's amplitude is not one over the capture: no number. A lone tone keeps its number.
#[test]
fn two_carriers_too_close_to_resolve_give_no_number() {
    let single = |seed| {
        synth(&Tone {
            n: 2_000_000,
            fs: 2e6,
            fc: 100e6,
            tone: 100e6 + 200.0,
            eps: 0.0,
            a: 0.01,
            noise: 1e-3,
            seed,
        })
    };
    let cfg = ClkinConfig::new(100e6, 100e6, 2e6, 10.0);
    for (apart_hz, db) in [(0.4, 0.0), (0.4, -6.0), (1.5, -3.0)] {
        let mut x = single(11);
        let a = 0.01 * 10f64.powf(db / 20.0);
        for (i, v) in x.iter_mut().enumerate() {
            let ph = 2.0 * PI * ((200.0 + apart_hz) / 2e6 * i as f64).fract() + 1.0;
            *v += Complex::new((a * ph.cos()) as f32, (a * ph.sin()) as f32);
        }
        let r = estimate(&x, cfg.clone(), 65_536).map(|e| (e.ppm, e.ppm_uncertainty));
        assert!(
            format!("{r:?}").contains("the reference tone is not one carrier"),
            "{apart_hz} Hz apart at {db} dB: {r:?}"
        );
    }
    let e = estimate(&single(12), cfg, 65_536).unwrap_or_else(|e| panic!("{e}"));
    let truth = (100e6 / (100e6 + 200.0) - 1.0) * 1e6;
    assert!(
        (e.ppm - truth).abs() <= 3.0 * e.ppm_uncertainty,
        "{} ± {} for {truth}",
        e.ppm,
        e.ppm_uncertainty
    );
}

/// A radio's DC offset or LO leakage is a carrier at 0 Hz of baseband whatever its
/// clock does: with the reference tone at the tuned centre and no reference connected,
/// it read PASS −0.0000003 ± 0.0000011 ppm. A tone read within two bins of DC gives no
/// number; the same reference 200 Hz from DC is still measured, within 3σ.
#[test]
fn a_tone_at_the_receivers_dc_gives_no_number() {
    let scene = |eps: f64, dc: f64, a: f64, seed| {
        let mut x = synth(&Tone {
            n: 2_000_000,
            fs: 2e6,
            fc: 100e6,
            tone: 100e6,
            eps,
            a,
            noise: 1e-3,
            seed,
        });
        for v in &mut x {
            *v += Complex::new(dc as f32, (0.5 * dc) as f32);
        }
        x
    };
    let cfg = ClkinConfig::new(100e6, 100e6, 2e6, 5.0);
    // The leakage alone (no reference), a locked radio's tone on DC, and a tone 0.4 Hz
    // from the leakage.
    for (eps, dc, a) in [(0.0, 0.01, 0.0), (0.0, 0.0, 0.01), (-0.004e-6, 0.003, 0.01)] {
        let r = estimate(&scene(eps, dc, a, 21), cfg.clone(), 65_536)
            .map(|e| (e.ppm, e.ppm_uncertainty));
        assert!(
            format!("{r:?}").contains("at the receiver's own DC"),
            "ε {eps}, DC {dc}, tone {a}: {r:?}"
        );
    }
    // A clock 2 ppm fast puts the tone 200 Hz below DC: a number, true within 3σ.
    let e = estimate(&scene(2e-6, 0.0, 0.01, 22), cfg, 65_536).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        (e.ppm - 2.0).abs() <= 3.0 * e.ppm_uncertainty,
        "{} ± {}",
        e.ppm,
        e.ppm_uncertainty
    );
}

/// CS16 fed as it is gives the decimated stream, and so the estimate, of the converted
/// CF32 to the bit, over blocks cut at every kind of place (inside a mixer block, on its
/// edge, shorter than one kernel step); where the CPU has no kernel for it, nothing is
/// fed and the caller is told.
#[test]
fn cs16_fed_as_it_is_gives_the_converted_stream_to_the_bit() {
    let (fs, fc, tone) = (2e6, 100e6, 100.1e6);
    let t = Tone {
        n: 200_000,
        fs,
        fc,
        tone,
        eps: 3e-6,
        a: 0.3,
        noise: 0.05,
        seed: 7,
    };
    let q = |v: f32| (v * 32768.0).round().clamp(-32768.0, 32767.0) as i16;
    let raw: Vec<Complex<i16>> = synth(&t)
        .iter()
        .map(|c| Complex::new(q(c.re), q(c.im)))
        .collect();
    // The engine's conversion: v / 32768, exact.
    let conv: Vec<Complex<f32>> = raw
        .iter()
        .map(|c| Complex::new(f32::from(c.re) / 32768.0, f32::from(c.im) / 32768.0))
        .collect();
    let cfg = ClkinConfig::new(tone, fc, fs, 5.0);
    let mut a = ClkinEstimator::new(cfg.clone()).unwrap();
    let mut b = ClkinEstimator::new(cfg).unwrap();
    let m = a.stage.decimation();
    let cuts = [1, 15, 16, 17, 31, m - 1, m, m + 1, 3 * m + 5, 4096, 777];
    let (mut at, mut i) = (0, 0);
    while at < raw.len() {
        let to = (at + cuts[i % cuts.len()]).min(raw.len());
        if !b.feed_cs16(&raw[at..to]) {
            assert!(!mac::reads_cs16());
            assert_eq!(b.samples, 0, "nothing fed where there is no kernel");
            return;
        }
        a.feed(&conv[at..to]);
        (at, i) = (to, i + 1);
    }
    assert_eq!(a.samples, b.samples);
    assert!(a.dec.len() > 100, "{} decimated samples", a.dec.len());
    let bits = |e: &ClkinEstimator| {
        e.dec
            .iter()
            .map(|c| (c.re.to_bits(), c.im.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a), bits(&b));
}
