//! Unit tests of `welch`.
use super::*;
use std::f64::consts::PI;

/// With an f32-only accumulator a long capture at a
/// small FFT size lost precision (~2 M segments of one tone read ~0.5 dB
/// low; past 2^24 segments the sum stopped growing at all).
#[test]
fn long_captures_keep_their_level() {
    let mut cfg = WelchConfig::new(16, 16.0);
    cfg.dc_exclude_bins = 0;
    let mut w = Welch::new(cfg).unwrap_or_else(|e| panic!("{e}"));
    let block: Vec<Complex<f32>> = (0..1 << 16)
        .map(|i| Complex::from_polar(0.3, std::f32::consts::TAU * (i % 16) as f32 / 16.0))
        .collect();
    for _ in 0..256 {
        w.feed(&block); // 16 Mi samples, ~2 Mi segments
    }
    assert!(w.averages() > 2_000_000);
    let s = w.finish();
    let want = 20.0 * 0.3f64.log10(); // −10.46 dBFS
    assert!(
        (s.peaks[0].power_db - want).abs() < 0.01,
        "{:?}",
        s.peaks[0]
    );
}

/// rustfft and every SIMD kernel this CPU runs for `cfg`.
fn every_engine(cfg: &WelchConfig) -> Vec<Welch> {
    let mut v = fast_engines(cfg);
    if v.iter().all(|w| w.engine() != "rustfft") {
        v.push(Welch::new_with_engine(cfg.clone(), "rustfft").unwrap());
    }
    v
}

/// A constant input (a converter stuck at one code) has power only at DC: every other
/// bin holds the FFT's rounding, more than `RESOLUTION_DB` below the mean bin, so it has
/// no level, the spectrum no floor and no peak (DC excluded), on every kernel; the same
/// constant over noise 100 dB below it (a 16-bit converter's) has its floor.
#[test]
fn a_constant_input_has_no_floor_and_no_rounding_peaks() {
    for n in [256usize, 2048] {
        let cfg = WelchConfig::new(n, 1e6);
        let dc = Complex::new(0.314_159_2f32, -0.271_828);
        for mut w in every_engine(&cfg) {
            w.feed(&vec![dc; 64 * n]);
            let s = w.finish();
            let e = w.engine();
            assert_eq!(s.noise_floor_db, None, "n {n} {e}");
            assert!(s.peaks.is_empty(), "n {n} {e}: {:?}", s.peaks);
            assert!(s.mean_power_dbfs.is_finite());
            assert_eq!(
                s.noise_floor_absent(),
                Some("the samples carry no noise above the FFT's rounding")
            );
            // DC and its window's neighbours keep a level, a rounding bin or two may.
            let levelled = s.psd_db.iter().filter(|v| v.is_finite()).count();
            assert!(levelled <= 8, "n {n} {e}: {levelled} bins");
        }
        let mut noise = lcg_noise(1e-5);
        let x: Vec<Complex<f32>> = (0..64 * n).map(|_| dc + noise()).collect();
        for mut w in every_engine(&cfg) {
            w.feed(&x);
            let s = w.finish();
            let floor = s.noise_floor_db.unwrap_or(f64::NAN);
            // 10·log10(2·σ²) with σ² = (2e-5)²/12, plus 10·log10(ENBW 1.5 / n).
            let want = 10.0 * (2.0 * 4e-10 / 12.0f64).log10() + 10.0 * (1.5 / n as f64).log10();
            assert!(
                (floor - want).abs() < 0.5,
                "n {n} {}: {floor} vs {want}",
                w.engine()
            );
        }
    }
}

/// Uniform noise in ±`half` on I and Q, from a fixed seed.
fn lcg_noise(half: f32) -> impl FnMut() -> Complex<f32> {
    let mut r = 1u64;
    let mut u = move || {
        r = r
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0 * half
    };
    move || Complex::new(u(), u())
}

/// A noiseless tone (as `np.exp(2j*pi*f*t).astype(np.complex64)` makes) off the bin
/// grid: its window leakage meets the rounding far below it, so there is no floor and
/// no SNR, but the tone is still the one peak, where and as loud as it is — the ripple
/// where the leakage meets the rounding is no peak.
#[test]
fn a_noiseless_tone_keeps_its_peak_without_a_floor_or_snr() {
    // (With a short FFT the Hann leakage of a tone off the grid fills more than half
    // the bins before it meets the rounding: that leakage is then the floor.)
    for n in [2048usize, 8192] {
        let rate = 1e6;
        let f = 123.4e3;
        let cfg = WelchConfig::new(n, rate);
        let x: Vec<Complex<f32>> = (0..32 * n)
            .map(|i| {
                let ph = 2.0 * PI * (f * i as f64 / rate).fract();
                Complex::new((0.5 * ph.cos()) as f32, (0.5 * ph.sin()) as f32)
            })
            .collect();
        // Hann's scalloping at the tone's distance δ from the nearest bin.
        let k = f / (rate / n as f64);
        let d = k - k.round();
        let sinc = (PI * d).sin() / (PI * d);
        let want = 20.0 * (0.5 * sinc / (1.0 - d * d)).log10();
        for mut w in every_engine(&cfg) {
            w.feed(&x);
            let s = w.finish();
            let e = w.engine();
            assert_eq!(s.noise_floor_db, None, "n {n} {e}");
            assert_eq!(s.peaks.len(), 1, "n {n} {e}: {:?}", s.peaks);
            let p = &s.peaks[0];
            // Between bins, the tone's own frequency and power (its bin alone
            // would read `want`, the window's loss there).
            assert!((p.frequency_hz - f).abs() < 1e-3 * rate / n as f64, "{p:?}");
            assert!(
                (p.power_db - 20.0 * 0.5f64.log10()).abs() < 0.02,
                "n {n} {e}: {p:?}, the bin alone {want}"
            );
            assert_eq!(p.snr_db, None);
        }
    }
}

/// The estimators under test for `cfg`: one per SIMD kernel this CPU runs at this
/// size, forced (so that an AVX-512 CPU tests the AVX2 kernel too), or `Welch::new`
/// where there is none.
fn fast_engines(cfg: &WelchConfig) -> Vec<Welch> {
    let v: Vec<Welch> = Isa::ALL
        .into_iter()
        .filter(|i| i.on_this_cpu() && cfg.fft_size >= i.min_n())
        .map(|i| {
            let w = Welch::new_with_engine(cfg.clone(), i.name()).unwrap();
            assert_eq!(w.engine(), i.name());
            w
        })
        .collect();
    if v.is_empty() {
        vec![Welch::new(cfg.clone()).unwrap()]
    } else {
        v
    }
}

/// `Welch::new` picks AVX-512, else AVX2, else rustfft; `new_with_engine` never falls
/// back.
#[test]
fn the_fastest_engine_is_chosen_and_a_forced_one_is_kept() {
    for n in [64usize, 128, 256, 2048, 1000] {
        let cfg = WelchConfig::new(n, 1e6);
        let want = Isa::ALL
            .into_iter()
            .find(|i| i.on_this_cpu() && n.is_power_of_two() && n >= i.min_n())
            .map_or("rustfft", Isa::name);
        assert_eq!(Welch::new(cfg.clone()).unwrap().engine(), want, "n {n}");
        let p = Welch::new_with_engine(cfg.clone(), "rustfft").unwrap();
        assert_eq!(p.engine(), "rustfft");
    }
    let err = |n: usize, name: &str| {
        Welch::new_with_engine(WelchConfig::new(n, 1e6), name)
            .unwrap_err()
            .to_string()
    };
    assert!(err(1024, "neon").contains("engine"));
    assert!(err(1000, "avx2").contains("engine"));
    assert!(err(128, "avx512").contains("engine"));
    assert!(err(8, "avx2").contains("fft_size"));
}

/// The SIMD engines' f32 sums are flushed to f64 every 1024 segments like the
/// portable engine's: over several flushes they still agree.
#[test]
fn engines_agree_across_flushes() {
    let x = tones(300_000, 1e6, &[(203_125.0, 0.5)], 0.01); // on bin 52
    let mut cfg = WelchConfig::new(256, 1e6);
    cfg.dc_exclude_bins = 0;
    let mut slow = Welch::new_portable(cfg.clone()).unwrap();
    slow.feed(&x);
    let b = slow.finish();
    for mut fast in fast_engines(&cfg) {
        fast.feed(&x);
        assert!(fast.averages() > 2 * u64::from(FLUSH_SEGMENTS));
        let a = fast.finish();
        for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
            assert!((u - v).abs() < 0.01, "{}: {u} vs {v}", fast.engine());
        }
        assert!((a.peaks[0].power_db - 20.0 * 0.5f64.log10()).abs() < 0.01);
    }
}

/// Deterministic Gaussian noise (xorshift + Box-Muller).
pub(crate) struct Noise(u64);
impl Noise {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub(crate) fn complex(&mut self, sigma: f64) -> Complex<f64> {
        let r = (-2.0 * self.uniform().ln()).sqrt() * sigma / 2f64.sqrt();
        let t = 2.0 * PI * self.uniform();
        Complex::new(r * t.cos(), r * t.sin())
    }
}

fn tones(n: usize, fs: f64, tones: &[(f64, f64)], noise: f64) -> Vec<Complex<f32>> {
    let mut g = Noise::new(7);
    (0..n)
        .map(|i| {
            let t = i as f64 / fs;
            let mut v = g.complex(noise);
            for &(f, a) in tones {
                v += Complex::from_polar(a, 2.0 * PI * f * t);
            }
            Complex::new(v.re as f32, v.im as f32)
        })
        .collect()
}

#[test]
fn tone_power_frequency_and_floor() {
    let fs = 1.024e6;
    let n = 1024;
    // Tone exactly on a bin: 100 bins above centre, amplitude 0.5 (−6.02 dBFS).
    let x = tones(1 << 16, fs, &[(100_000.0, 0.5)], 0.01);
    let mut cfg = WelchConfig::new(n, fs);
    cfg.center_hz = Some(100e6);
    let mut w = Welch::new(cfg).unwrap();
    w.feed(&x);
    let s = w.finish();
    assert_eq!(s.averages, ((1 << 16) - n) as u64 / 512 + 1);
    let p = &s.peaks[0];
    assert!((p.frequency_hz - 100.1e6).abs() < 1.0, "{p:?}");
    assert!((p.power_db + 6.02).abs() < 0.05, "{p:?}");
    // Noise: total power 1e-4 → per bin 1e-4 · ENBW(1.5) / n → −68.3 dB;
    // the median of a chi² with 2·averages dof sits slightly below the mean.
    let floor = s.noise_floor_db.expect("a noisy tone has a floor");
    assert!((floor + 68.3).abs() < 0.6, "{floor}");
    assert_eq!(p.snr_db, Some(p.power_db - floor));
    assert_eq!(s.noise_floor_absent(), None);
    assert!((s.mean_power_dbfs - 10.0 * (0.25f64 + 1e-4).log10()).abs() < 0.02);
    assert_eq!(s.clipped_fraction, 0.0);
    assert_eq!(s.psd_db.len(), n);
    assert!((s.frequency_of(0) - (100e6 - fs / 2.0)).abs() < 1e-6);
}

/// A tone outside the known passband (here at 0.47 of the rate, bandwidth 1.5 MHz at
/// 2 MS/s: a receiver's anti-alias roll-off) was listed with its level and SNR as if
/// it had passed the filter whole (rxsim: a −20 dBFS tone read −33.7 dBFS). It is
/// named as outside the passband, with the passband; a tone inside it is not, and
/// without a known bandwidth nothing is said.
#[test]
fn a_peak_outside_the_known_passband_is_named() {
    let fs = 2e6;
    let n = 2048;
    let run = |bw: Option<f64>| {
        let mut cfg = WelchConfig::new(n, fs);
        cfg.center_hz = Some(100e6);
        cfg.passband_hz = bw;
        let mut w = Welch::new(cfg).unwrap();
        w.feed(&tones(
            1 << 17,
            fs,
            &[(200_000.0, 0.1), (940_000.0, 0.02), (-650_000.0, 0.05)],
            0.001,
        ));
        w.finish()
    };
    let s = run(Some(1.5e6));
    let at = |s: &Spectrum, f: f64| {
        s.peaks
            .iter()
            .find(|p| (p.frequency_hz - f).abs() < 1000.0)
            .cloned()
            .unwrap_or_else(|| panic!("no peak at {f}: {:?}", s.peaks))
    };
    assert_eq!(at(&s, 100.2e6).outside_passband_hz, None);
    for f in [100.94e6, 99.35e6] {
        let [lo, hi] = at(&s, f)
            .outside_passband_hz
            .unwrap_or_else(|| panic!("{f}: not named: {:?}", s.peaks));
        assert!(
            (lo - 99.4e6).abs() < 2e3 && (hi - 100.6e6).abs() < 2e3,
            "{lo} {hi}"
        );
        assert!(
            at(&s, f)
                .emission_text()
                .contains("outside the receiver's passband 99.4"),
            "{}",
            at(&s, f).emission_text()
        );
    }
    let s = run(None);
    assert!(
        s.peaks.iter().all(|p| p.outside_passband_hz.is_none()),
        "{:?}",
        s.peaks
    );
}

/// A weak peak at a strong one's mirror about the centre (a receiver's IQ image,
/// 28 dB down) was listed as an emitter of its own, with nothing to tell it from
/// one. It is named as the stronger one's possible image; an equal pair (two
/// emitters, or a real-valued signal's two halves) and a weak peak elsewhere are not.
#[test]
fn a_weak_peak_at_a_strong_ones_mirror_is_named_as_its_possible_image() {
    let fs = 2e6;
    let n = 2048;
    let run = |t: &[(f64, f64)]| {
        let mut cfg = WelchConfig::new(n, fs);
        cfg.center_hz = Some(100e6);
        let mut w = Welch::new(cfg).unwrap();
        w.feed(&tones(1 << 17, fs, t, 0.001));
        w.finish()
    };
    let image = 10f64.powf(-28.0 / 20.0) * 0.03;
    let s = run(&[(200_000.0, 0.03), (-200_000.0, image), (-500_000.0, image)]);
    let at = |f: f64| {
        s.peaks
            .iter()
            .find(|p| (p.frequency_hz - f).abs() < 1000.0)
            .unwrap_or_else(|| panic!("no peak at {f}: {:?}", s.peaks))
    };
    let mirrored = at(99.8e6).image_of_hz.expect("named as an image");
    assert!((mirrored - 100.2e6).abs() < 1000.0, "{mirrored}");
    assert!(at(99.8e6)
        .emission_text()
        .contains("mirror of 100.200000 MHz"));
    assert_eq!(at(100.2e6).image_of_hz, None);
    assert_eq!(
        at(99.5e6).image_of_hz,
        None,
        "no stronger peak at its mirror"
    );
    let s = run(&[(200_000.0, 0.03), (-200_000.0, 0.02)]);
    assert!(
        s.peaks.iter().all(|p| p.image_of_hz.is_none()),
        "{:?}",
        s.peaks
    );
}

#[test]
fn block_boundaries_do_not_change_the_result() {
    let x = tones(50_000, 1e6, &[(123_456.0, 0.3), (-200_000.0, 0.01)], 0.05);
    for overlap in [0.0, 0.5, 0.75, 0.9] {
        let mut cfg = WelchConfig::new(256, 1e6);
        cfg.overlap = overlap;
        let mut whole = Welch::new(cfg.clone()).unwrap();
        whole.feed(&x);
        let mut parts = Welch::new(cfg).unwrap();
        let mut i = 0;
        let mut k = 1;
        while i < x.len() {
            let e = (i + k).min(x.len());
            parts.feed(&x[i..e]);
            i = e;
            k = (k * 7 + 3) % 1000;
        }
        let (a, b) = (whole.finish(), parts.finish());
        assert_eq!(a.averages, b.averages, "overlap {overlap}");
        for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
            assert!((u - v).abs() < 1e-3, "overlap {overlap}");
        }
    }
}

#[test]
fn distinct_peaks_not_neighbouring_bins() {
    let fs = 1e6;
    // A strong tone between bins, a weak one far away, DC offset.
    let mut x = tones(1 << 15, fs, &[(100_300.0, 0.9), (-250_000.0, 0.01)], 0.001);
    for v in &mut x {
        *v += Complex::new(0.05, 0.0);
    }
    let mut w = Welch::new(WelchConfig::new(1024, fs)).unwrap();
    w.feed(&x);
    let s = w.finish();
    assert_eq!(s.peaks.len(), 2, "{:?}", s.peaks);
    assert!((s.peaks[0].frequency_hz - 100_300.0).abs() < fs / 1024.0);
    assert!((s.peaks[1].frequency_hz + 250_000.0).abs() < fs / 1024.0);
    assert!(s.peaks[0].power_db > s.peaks[1].power_db);
}

#[test]
fn clipping_is_counted() {
    let mut x = vec![Complex::new(0.1f32, 0.1); 1000];
    x[10] = Complex::new(1.0, 0.0);
    x[20] = Complex::new(0.0, -1.5);
    let mut w = Welch::new(WelchConfig::new(64, 1e3)).unwrap();
    w.feed(&x);
    assert!((w.finish().clipped_fraction - 0.002).abs() < 1e-12);
}

/// The AVX-512 and AVX2 kernels and the rustfft engine give the same
/// estimate, for every overlap and however the input is cut into blocks.
#[test]
fn simd_and_portable_engines_agree() {
    let x = tones(70_001, 2e6, &[(123_456.0, 0.3), (-400_000.0, 0.001)], 0.02);
    for (n, overlap, window) in [
        (64, 0.5, Window::Hann),
        (128, 0.25, Window::BlackmanHarris),
        (256, 0.0, Window::Hann),
        (1024, 0.5, Window::BlackmanHarris),
        (2048, 0.5, Window::Hann),
        (2048, 0.75, Window::FlatTop),
        (8192, 0.5, Window::Hann),
    ] {
        let mut cfg = WelchConfig::new(n, 2e6);
        cfg.overlap = overlap;
        cfg.window = window;
        cfg.center_hz = Some(433.92e6);
        let mut slow = Welch::new_portable(cfg.clone()).unwrap();
        assert_eq!(slow.engine(), "rustfft");
        slow.feed(&x);
        let b = slow.finish();
        // `fast_engines` checks that each kernel really is what runs (not a silent
        // fallback).
        for mut fast in fast_engines(&cfg) {
            let e = fast.engine();
            for b in x.chunks(4099) {
                fast.feed(b);
            }
            let a = fast.finish();
            assert_eq!(a.averages, b.averages);
            assert_eq!(a.samples, b.samples);
            assert_eq!(a.clipped_fraction, b.clipped_fraction);
            for (i, (u, v)) in a.psd_db.iter().zip(&b.psd_db).enumerate() {
                assert!((u - v).abs() < 0.01, "{e} n {n} bin {i}: {u} vs {v}");
            }
            assert_eq!(a.peaks.len(), b.peaks.len(), "{e} n {n}");
            for (p, q) in a.peaks.iter().zip(&b.peaks) {
                // Between bins the frequency is solved from three bins: the same to
                // a thousandth of a bin.
                assert!((p.frequency_hz - q.frequency_hz).abs() < 1e-3 * a.bin_hz);
                assert!((p.power_db - q.power_db).abs() < 0.01);
            }
            let (fa, fb) = (a.noise_floor_db.unwrap(), b.noise_floor_db.unwrap());
            assert!((fa - fb).abs() < 0.01);
        }
    }
}

/// CS16 fed straight to Welch (converted to float in each kernel's input stage, no
/// float copy of the block) gives the estimate of the same samples converted to CF32
/// first, on every engine: bin for bin to 0.01 dB, the same peaks, averages, samples
/// and clipped count — for the whole segments of a block, for the segments that span
/// two blocks of odd lengths, and for the 50 % overlap carry handed to a second
/// estimator (`resume`, as the DSP threads do).
#[test]
fn cs16_fed_straight_gives_the_estimate_of_the_converted_cf32_on_every_engine() {
    let x = tones(70_001, 2e6, &[(123_456.0, 0.3), (-400_000.0, 0.001)], 0.02);
    let mut q: Vec<Complex<i16>> = x
        .iter()
        .map(|c| {
            let f = |v: f32| (v * 32768.0).round().clamp(-32768.0, 32767.0) as i16;
            Complex::new(f(c.re), f(c.im))
        })
        .collect();
    // Full scale both ways, so that the clipped count is exercised.
    q[100] = Complex::new(i16::MIN, 5);
    q[40_000] = Complex::new(3, i16::MAX);
    let f: Vec<Complex<f32>> = q
        .iter()
        .map(|c| Complex::new(f32::from(c.re) / 32768.0, f32::from(c.im) / 32768.0))
        .collect();
    let same = |a: &Spectrum, b: &Spectrum, what: &str| {
        assert_eq!(a.averages, b.averages, "{what}");
        assert_eq!(a.samples, b.samples, "{what}");
        assert_eq!(a.clipped_fraction, b.clipped_fraction, "{what}");
        assert!(a.clipped_fraction > 0.0, "{what}");
        for (i, (u, v)) in a.psd_db.iter().zip(&b.psd_db).enumerate() {
            assert!(u == v || (u - v).abs() < 0.01, "{what} bin {i}: {u} vs {v}");
        }
        assert_eq!(a.peaks.len(), b.peaks.len(), "{what}");
        for (p, r) in a.peaks.iter().zip(&b.peaks) {
            assert!(
                (p.frequency_hz - r.frequency_hz).abs() < 1e-3 * a.bin_hz,
                "{what}"
            );
            assert!((p.power_db - r.power_db).abs() < 0.01, "{what}");
        }
    };
    for (n, overlap, window) in [
        (64, 0.5, Window::Hann),
        (256, 0.5, Window::Hann),
        (512, 0.0, Window::FlatTop),
        (2048, 0.5, Window::Hann),
        (2048, 0.75, Window::BlackmanHarris),
        (8192, 0.5, Window::Hann),
    ] {
        let mut cfg = WelchConfig::new(n, 2e6);
        cfg.overlap = overlap;
        cfg.window = window;
        cfg.clip_level = 32767.0 / 32768.0;
        for engine in every_engine(&cfg).iter().map(|w| w.engine()) {
            let what = format!("{engine} n {n} overlap {overlap}");
            let make = || Welch::new_with_engine(cfg.clone(), engine).unwrap();
            let mut float = make();
            float.feed(&f);
            let want = float.finish();
            // One block, then blocks of odd lengths (segments span two of them).
            let mut whole = make();
            whole.feed(&q);
            same(&whole.finish(), &want, &format!("{what}, one block"));
            let mut parts = make();
            let (mut i, mut k) = (0, 1);
            while i < q.len() {
                let e = (i + k).min(q.len());
                parts.feed(&q[i..e]);
                i = e;
                k = (k * 7 + 3) % 5003;
            }
            same(&parts.finish(), &want, &format!("{what}, odd blocks"));
            // Two estimators: the second resumes from the carry of the first's
            // blocks (a cut inside a segment) and their estimates are merged.
            let cut = 33_333;
            let mut carry = SegmentCarry::new(n, cfg.hop());
            carry.advance(&q[..cut]);
            let (mut a, mut b) = (make(), make());
            a.feed(&q[..cut]);
            b.resume(carry.carry());
            b.feed(&q[cut..]);
            a.merge(&b).unwrap();
            same(&a.finish(), &want, &format!("{what}, carry"));
        }
    }
}

/// The large sizes (radix-2 and radix-4 input stages over padded split arrays, several
/// radix-4 passes before the final groups) give rustfft's estimate on every kernel, bin
/// for bin to 0.01 dB, with the same peaks. The signal keeps every bin within ~25 dB of
/// the others: f32 rounding alone moves a bin 90 dB under a tone by ~0.02 dB at 64 Ki
/// points, in either engine.
#[test]
fn large_sizes_agree_on_every_kernel() {
    let x = tones(300_001, 2e6, &[(123_456.0, 0.02), (-400_000.0, 0.01)], 0.3);
    for (n, overlap, window) in [
        (16384, 0.5, Window::Hann),
        (32768, 0.5, Window::BlackmanHarris),
        (65536, 0.5, Window::Hann),
    ] {
        let mut cfg = WelchConfig::new(n, 2e6);
        cfg.overlap = overlap;
        cfg.window = window;
        let mut slow = Welch::new_portable(cfg.clone()).unwrap();
        slow.feed(&x);
        let b = slow.finish();
        assert!(!b.peaks.is_empty(), "n {n}: no peak to compare");
        for mut fast in fast_engines(&cfg) {
            let e = fast.engine();
            for c in x.chunks(65_536) {
                fast.feed(c);
            }
            let a = fast.finish();
            assert_eq!(a.averages, b.averages, "{e} n {n}");
            for (i, (u, v)) in a.psd_db.iter().zip(&b.psd_db).enumerate() {
                assert!((u - v).abs() < 0.01, "{e} n {n} bin {i}: {u} vs {v}");
            }
            assert_eq!(a.peaks.len(), b.peaks.len(), "{e} n {n}");
            for (p, q) in a.peaks.iter().zip(&b.peaks) {
                let df = (p.frequency_hz - q.frequency_hz).abs();
                assert!(df < 1e-3 * a.bin_hz, "{e} n {n}: {df} Hz");
                assert!((p.power_db - q.power_db).abs() < 0.01, "{e} n {n}");
            }
        }
    }
}

proptest::proptest! {
    // The seeds live in `proptest-regressions/welch.seeds`, not proptest's default
    // `….txt`: `find -name '*tx*'` must list only files that can key a transmitter.
    #![proptest_config(proptest::prelude::ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("proptest-regressions/welch.seeds"),
        )),
        ..proptest::prelude::ProptestConfig::with_cases(24)
    })]
    /// Any power-of-two size, overlap, window and block cut: every engine
    /// this CPU runs agrees with rustfft bin for bin.
    #[test]
    fn engines_agree_on_random_input(
        bits in 6u32..=13,
        overlap in 0.0f64..0.9,
        window in 0usize..3,
        len in 0usize..40_000,
        cut in 1usize..9_000,
        seed in 1u64..u64::MAX,
    ) {
        let n = 1usize << bits;
        let mut g = Noise::new(seed);
        let x: Vec<Complex<f32>> = (0..len)
            .map(|_| {
                let v = g.complex(0.3);
                Complex::new(v.re as f32, v.im as f32)
            })
            .collect();
        let mut cfg = WelchConfig::new(n, 1e6);
        cfg.overlap = overlap;
        cfg.window = [Window::Hann, Window::BlackmanHarris, Window::FlatTop][window];
        let mut slow = Welch::new_portable(cfg.clone()).unwrap();
        slow.feed(&x);
        let b = slow.finish();
        for mut fast in fast_engines(&cfg) {
            for b in x.chunks(cut) {
                fast.feed(b);
            }
            let a = fast.finish();
            proptest::prop_assert_eq!(a.averages, b.averages);
            proptest::prop_assert_eq!(a.clipped_fraction, b.clipped_fraction);
            if len > 0 {
                proptest::prop_assert!((a.mean_power_dbfs - b.mean_power_dbfs).abs() < 1e-4);
            }
            for (u, v) in a.psd_db.iter().zip(&b.psd_db) {
                // A bin without power is −∞ on every engine alike.
                proptest::prop_assert!(
                    u == v || (u - v).abs() < 0.01,
                    "{}: {} vs {}",
                    fast.engine(),
                    u,
                    v
                );
            }
        }
    }
}

#[test]
fn bad_settings_are_rejected_by_name() {
    let mut c = WelchConfig::new(8, 1e6);
    assert!(Welch::new(c.clone())
        .unwrap_err()
        .to_string()
        .contains("fft_size"));
    c.fft_size = 1024;
    c.overlap = 1.0;
    assert!(Welch::new(c.clone())
        .unwrap_err()
        .to_string()
        .contains("overlap"));
    c.overlap = 0.5;
    c.sample_rate_hz = f64::NAN;
    assert!(Welch::new(c.clone())
        .unwrap_err()
        .to_string()
        .contains("sample_rate_hz"));
    c.sample_rate_hz = 1e6;
    for level in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        c.clip_level = level;
        assert!(Welch::new(c.clone())
            .unwrap_err()
            .to_string()
            .contains("clip_level"));
    }
}

#[test]
fn empty_input_has_no_peaks() {
    let w = Welch::new(WelchConfig::new(64, 1e3)).unwrap();
    let s = w.finish();
    assert_eq!(s.averages, 0);
    assert!(s.peaks.is_empty());
    assert!(s.mean_power_dbfs.is_infinite());
    assert_eq!(s.noise_floor_db, None);
    assert_eq!(
        s.noise_floor_absent(),
        Some("no Welch segment: fewer samples than one FFT")
    );
}

/// All-zero samples (a quiet signal quantised to nothing) have no level anywhere:
/// every bin is −∞, never a stand-in number; no floor, and so no peak, on every engine.
#[test]
fn zero_samples_have_no_level_no_floor_and_no_peaks() {
    let mut cfg = WelchConfig::new(256, 1e6);
    cfg.min_snr_db = 0.0;
    let mut engines = fast_engines(&cfg);
    engines.push(Welch::new_portable(cfg).unwrap());
    for mut w in engines {
        w.feed(&vec![Complex::new(0.0f32, 0.0); 4096]);
        let s = w.finish();
        assert_eq!(s.averages, 31, "{}", w.engine());
        assert!(
            s.psd_db.iter().all(|v| *v == f32::NEG_INFINITY),
            "{}: {:?}",
            w.engine(),
            &s.psd_db[..4]
        );
        assert_eq!(s.noise_floor_db, None, "{}", w.engine());
        assert_eq!(
            s.noise_floor_absent(),
            Some("no signal: every sample is zero")
        );
        assert!(s.peaks.is_empty(), "{}: {:?}", w.engine(), s.peaks);
        let (_, _, dec) = s.decimated(16);
        assert!(dec.iter().all(|v| *v == f32::NEG_INFINITY));
    }
}

#[test]
fn decimation_keeps_the_maximum() {
    let x = tones(1 << 14, 1e6, &[(100_000.0, 0.5)], 0.01);
    let mut w = Welch::new(WelchConfig::new(2048, 1e6)).unwrap();
    w.feed(&x);
    let s = w.finish();
    let (_, step, d) = s.decimated(512);
    assert_eq!(d.len(), 512);
    assert!((step - 4.0 * s.bin_hz).abs() < 1e-9);
    let m = d.iter().copied().fold(f32::MIN, f32::max);
    let top = s.psd_db.iter().copied().fold(f32::MIN, f32::max);
    assert_eq!(m, top);
}

/// After a break in the stream no segment spans it: two 1000-sample stretches of
/// a 256-point, 50 %-overlap Welch give 2 × 6 segments, where one unbroken
/// 2000-sample stretch gives 14; and the samples before the break still count.
#[test]
fn no_segment_spans_a_break_in_the_stream() {
    let x: Vec<Complex<f32>> = (0..1000)
        .map(|n| Complex::from_polar(0.5, 0.3 * n as f32))
        .collect();
    let mut w = Welch::new(WelchConfig::new(256, 1e6)).unwrap();
    w.feed(&x);
    w.feed(&x);
    assert_eq!(w.averages(), 14);
    let mut w = Welch::new(WelchConfig::new(256, 1e6)).unwrap();
    w.feed(&x);
    w.break_stream();
    w.feed(&x);
    assert_eq!(w.averages(), 12);
    assert_eq!(w.finish().averages, 12);
}

/// A band of noise-like signal (a modulated or OFDM carrier) 40 dB above the floor
/// with few averages ripples by several dB: it is one emission, not one carrier per
/// ripple, and its level across the centre is no carrier or DC offset there. Two
/// pilots standing 14 and 9 dB out of it are its peaks, each with the band it lies
/// in; a plain tone beside it has no band.
#[test]
fn a_wideband_signal_is_one_emission_not_a_peak_per_ripple() {
    let fs = 1.024e6;
    let n = 1024;
    let len = 12 * n;
    // Noise shaped into −300 … +100 kHz, 0.0039 in power: −48.4 dBFS per bin.
    let band = shape(&mut Noise::new(11), len, fs, 1.0, |f| {
        if (-300e3..=100e3).contains(&f) {
            1.0
        } else {
            0.0
        }
    });
    let scale = 0.1;
    // A floor 40 dB below the band, a tone well outside it.
    let rest = tones(len, fs, &[(350_000.0, 0.05)], 0.001);
    let pilots = [(-100_000.0, 0.019_05), (50_000.0, 0.010_72)];
    let x: Vec<Complex<f32>> = (0..len)
        .map(|i| {
            let t = i as f64 / fs;
            let mut v = band[i] * scale;
            for (f, a) in pilots {
                v += Complex::from_polar(a, 2.0 * PI * f * t);
            }
            Complex::new(v.re as f32 + rest[i].re, v.im as f32 + rest[i].im)
        })
        .collect();
    let mut cfg = WelchConfig::new(n, fs);
    cfg.center_hz = Some(100e6);
    let mut w = Welch::new(cfg).unwrap();
    w.feed(&x);
    let s = w.finish();
    assert!(s.averages < 30, "{}", s.averages);
    let bin = fs / n as f64;
    let in_band = |f: f64| (99.7e6 - 4.0 * bin..=100.1e6 + 4.0 * bin).contains(&f);
    let found: Vec<&Peak> = s.peaks.iter().filter(|p| in_band(p.frequency_hz)).collect();
    assert_eq!(found.len(), 2, "{:#?}", s.peaks);
    for (p, (f, _)) in found.iter().zip(pilots) {
        assert!((p.frequency_hz - (100e6 + f)).abs() < bin, "{p:?}");
        let [lo, hi] = p.emission_hz.expect("a peak in a band has the band");
        assert!(
            (lo - 99.7e6).abs() < 8.0 * bin && (hi - 100.1e6).abs() < 8.0 * bin,
            "{p:?}"
        );
    }
    // The tone at +350 kHz: one peak, no band (its window's leakage explains its bins).
    let tone: Vec<&Peak> = s
        .peaks
        .iter()
        .filter(|p| !in_band(p.frequency_hz))
        .collect();
    assert_eq!(tone.len(), 1, "{:#?}", s.peaks);
    assert!((tone[0].frequency_hz - 100.35e6).abs() < bin);
    assert_eq!(tone[0].emission_hz, None, "{:?}", tone[0]);
    // The band covers the centre: its level there is no centre carrier.
    assert_eq!(s.centre_carrier_db, None);
    // Without the grouping the band's ripples stood above the threshold as maxima.
    let level = (s.noise_floor_db.unwrap() + s.peak_threshold_db.unwrap()) as f32;
    let db = &s.psd_db;
    let maxima = (1..n - 1)
        .filter(|&i| in_band(s.frequency_of(i)))
        .filter(|&i| db[i] >= level && db[i] > db[i - 1] && db[i] >= db[i + 1])
        .count();
    assert!(maxima > 20, "{maxima}");
}

/// A radio's DC offset on an otherwise quiet centre is still reported there.
#[test]
fn a_dc_offset_alone_is_still_a_centre_carrier() {
    let fs = 1e6;
    let mut x = tones(1 << 14, fs, &[], 0.001);
    for v in &mut x {
        *v += Complex::new(0.02, -0.01);
    }
    let mut w = Welch::new(WelchConfig::new(1024, fs)).unwrap();
    w.feed(&x);
    let s = w.finish();
    let c = s
        .centre_carrier_db
        .expect("a DC offset stands out at the centre");
    assert!((c - 10.0 * (0.0005f64).log10()).abs() < 1.5, "{c}");
    assert!(s.peaks.is_empty(), "{:?}", s.peaks);
}

/// A tone driven past full scale (a gain too high) is clipped on most samples: its
/// spectrum holds the converter's distortion (odd harmonics tens of dB over the
/// floor, which were listed as peaks), so no floor, peak or SNR is given, and the
/// reason says so. At 1 % clipped the spectrum is still measured.
#[test]
fn a_saturated_input_has_no_floor_and_no_peaks() {
    let fs = 1e6;
    let clip = |x: &mut Vec<Complex<f32>>| {
        for v in x.iter_mut() {
            *v = Complex::new(v.re.clamp(-1.0, 1.0), v.im.clamp(-1.0, 1.0));
        }
    };
    let mut hot = tones(1 << 15, fs, &[(100_000.0, 1.5)], 0.01);
    clip(&mut hot);
    let mut w = Welch::new(WelchConfig::new(1024, fs)).unwrap();
    w.feed(&hot);
    let s = w.finish();
    assert!(s.clipped_fraction > 0.9, "{}", s.clipped_fraction);
    assert_eq!((s.noise_floor_db, s.peak_threshold_db), (None, None));
    assert!(
        s.peaks.is_empty() && s.centre_carrier_db.is_none(),
        "{:?}",
        s.peaks
    );
    assert!(s
        .noise_floor_absent()
        .is_some_and(|w| w.starts_with("the input saturated")));
    // One sample in a hundred at full scale: still measured.
    let mut x = tones(100_000, fs, &[(100_000.0, 0.3)], 0.01);
    for v in x.iter_mut().step_by(100) {
        *v = Complex::new(1.0, 0.0);
    }
    let mut w = Welch::new(WelchConfig::new(1024, fs)).unwrap();
    w.feed(&x);
    let s = w.finish();
    assert!(
        (s.clipped_fraction - 0.01).abs() < 1e-12,
        "{}",
        s.clipped_fraction
    );
    assert!(s.noise_floor_db.is_some() && !s.peaks.is_empty());
}

/// A tone between bins is reported at its own frequency and power, not its bin's
/// centre and the window's loss there (up to half a bin and 1.42 dB low with Hann),
/// through every window; two tones inside one main lobe have no one tone's shape and
/// keep their bin's centre and level.
#[test]
fn a_tone_between_bins_has_its_own_frequency_and_power() {
    let fs = 1.024e6;
    let n = 1024;
    let bin = fs / n as f64;
    for window in [Window::Hann, Window::BlackmanHarris, Window::FlatTop] {
        for offset in [0.0, 0.25, 0.5, -0.37, 0.11] {
            let f = (100.0 + offset) * bin;
            let x = tones(1 << 16, fs, &[(f, 0.1)], 0.0003);
            let mut cfg = WelchConfig::new(n, fs);
            cfg.window = window;
            let mut w = Welch::new(cfg).unwrap();
            w.feed(&x);
            let p = &w.finish().peaks[0];
            assert!(
                (p.frequency_hz - f).abs() < 0.01 * bin,
                "{window:?} {offset}: {p:?}"
            );
            assert!(
                (p.power_db + 20.0).abs() < 0.02,
                "{window:?} {offset}: {p:?}"
            );
        }
    }
    // Two equal tones a bin apart: one peak, at a bin's centre (no tone's shape).
    let x = tones(
        1 << 16,
        fs,
        &[(99.8 * bin, 0.1), (100.8 * bin, 0.1)],
        0.0003,
    );
    let mut w = Welch::new(WelchConfig::new(n, fs)).unwrap();
    w.feed(&x);
    let p = &w.finish().peaks[0];
    let in_bins = p.frequency_hz / bin;
    assert!((in_bins - in_bins.round()).abs() < 1e-9, "{p:?}");
}

/// `len` samples of complex Gaussian noise of power `sigma²` from `g`, shaped by
/// `gain(f)` (an amplitude gain per frequency, Hz) in the frequency domain.
fn shape(
    g: &mut Noise,
    len: usize,
    fs: f64,
    sigma: f64,
    gain: impl Fn(f64) -> f64,
) -> Vec<Complex<f64>> {
    let mut x: Vec<Complex<f64>> = (0..len).map(|_| g.complex(sigma)).collect();
    let mut fft = rustfft::FftPlanner::new();
    fft.plan_fft_forward(len).process(&mut x);
    for (k, v) in x.iter_mut().enumerate() {
        let f = if k < len / 2 {
            k as f64
        } else {
            k as f64 - len as f64
        } * fs
            / len as f64;
        *v *= gain(f);
    }
    fft.plan_fft_inverse(len).process(&mut x);
    x.iter().map(|v| v / len as f64).collect()
}

/// `len` samples of complex Gaussian noise of power `sigma²` shaped by `gain(f)` (an
/// amplitude gain per frequency, Hz) in the frequency domain, plus white noise of
/// power `white²` (a converter's) and a tone `(f, amplitude)`.
fn shaped_noise(
    len: usize,
    fs: f64,
    sigma: f64,
    gain: impl Fn(f64) -> f64,
    white: f64,
    tone: (f64, f64),
) -> Vec<Complex<f32>> {
    let mut g = Noise::new(29);
    let x = shape(&mut g, len, fs, sigma, gain);
    x.iter()
        .enumerate()
        .map(|(i, v)| {
            let t = i as f64 / fs;
            let s = v + g.complex(white) + Complex::from_polar(tone.1, 2.0 * PI * tone.0 * t);
            Complex::new(s.re as f32, s.im as f32)
        })
        .collect()
}

/// A raised-cosine low-pass of `bw` Hz (two-sided), its edges 10 % of its half-width.
fn low_pass(bw: f64) -> impl Fn(f64) -> f64 {
    move |f: f64| {
        let (a, edge) = (f.abs(), 0.05 * bw);
        if a <= bw / 2.0 - edge {
            1.0
        } else if a >= bw / 2.0 + edge {
            0.0
        } else {
            0.5 * (1.0 + (PI * (a - (bw / 2.0 - edge)) / (2.0 * edge)).cos())
        }
    }
}

/// Noise through a receive filter narrower than the rate (200, 600 and 900 kHz of
/// 2 MS/s), a converter's white noise 60 dB below it and a tone 20 dB over the
/// passband's noise per bin. The stopband held more than half of the bins, so the
/// median bin read the floor about 60 dB low, and the passband's own noise stood
/// above it as one wide emission, its "SNR" 80 dB. From the data alone the
/// passband and a signal tuned to the centre cannot be told apart: no floor, the
/// reason given, the tone still the one peak (without SNR and without an emission).
/// With the radio's bandwidth known: the passband's floor to 0.3 dB, the band it was
/// read over given, and the tone's true SNR.
#[test]
fn a_passband_narrower_than_the_rate_never_puts_the_floor_in_the_stopband() {
    let (fs, n) = (2e6, 2048);
    let sigma = 0.02;
    // Per bin (Hann): σ² · 1.5 / n.
    let truth = 10.0 * (sigma * sigma * 1.5 / n as f64).log10();
    let amplitude = 10f64.powf((truth + 20.0) / 20.0);
    for bw in [200e3, 600e3, 900e3] {
        let tone_hz = bw / 4.0 + 1234.5;
        let x = shaped_noise(
            64 * n,
            fs,
            sigma,
            low_pass(bw),
            sigma * 1e-3,
            (tone_hz, amplitude),
        );
        let mut cfg = WelchConfig::new(n, fs);
        cfg.center_hz = Some(100e6);
        let mut w = Welch::new(cfg.clone()).unwrap();
        w.feed(&x);
        let s = w.finish();
        assert_eq!(s.noise_floor_db, None, "{bw}: {:?}", s.noise_floor_db);
        assert_eq!(s.noise_floor_absent(), Some(NOT_LEVEL), "{bw}");
        assert_eq!(s.peak_threshold_db, None);
        assert_eq!(s.peaks.len(), 1, "{bw}: {:#?}", s.peaks);
        let p = &s.peaks[0];
        assert!(
            (p.frequency_hz - 100e6 - tone_hz).abs() < 0.02 * fs / n as f64,
            "{bw}: {p:?}"
        );
        assert_eq!((p.snr_db, p.emission_hz), (None, None), "{bw}: {p:?}");
        // Stored as floats with nothing in the stopband: the median bin has no level,
        // yet the samples carry noise; the reason says which.
        let bare = shaped_noise(64 * n, fs, sigma, low_pass(bw), 0.0, (tone_hz, amplitude));
        let mut w = Welch::new(cfg.clone()).unwrap();
        w.feed(&bare);
        let b = w.finish();
        assert_eq!(b.noise_floor_db, None);
        assert_eq!(b.noise_floor_absent(), Some(NOT_LEVEL), "{bw}");
        assert_eq!(b.peaks.len(), 1, "{bw}: {:#?}", b.peaks);
        assert_eq!(b.peaks[0].emission_hz, None);
        cfg.passband_hz = Some(bw);
        let mut w = Welch::new(cfg).unwrap();
        w.feed(&x);
        let s = w.finish();
        let floor = s.noise_floor_db.expect("the passband has a floor");
        assert!(
            (floor - truth).abs() < 0.3,
            "{bw}: floor {floor:.2} vs {truth:.2}"
        );
        let [lo, hi] = s.noise_floor_band_hz.expect("read over the passband");
        assert!(
            lo >= 100e6 - bw / 2.0 && hi <= 100e6 + bw / 2.0,
            "{bw}: {lo} {hi}"
        );
        assert_eq!(s.peaks.len(), 1, "{bw}: {:#?}", s.peaks);
        let snr = s.peaks[0].snr_db.expect("a floor gives an SNR");
        assert!((snr - 20.0).abs() < 0.5, "{bw}: SNR {snr:.2}");
        assert_eq!(s.peaks[0].emission_hz, None);
    }
}

/// A front end whose roll-off eats the outer 10 % of the band on either side (15 dB
/// down at the edges, as a decimating receiver's) keeps its floor: read between the
/// low edges, to 0.3 dB, with that band given — also when the radio's bandwidth is
/// given as the rate or wider. A band-limited signal tuned to the
/// centre and filling 59 % of the band (an LTE channel at 30.72 MS/s) leaves it
/// without one rather than taking the signal for the noise (the median bin was the
/// signal's level, 25 dB above the floor).
#[test]
fn a_roll_off_at_the_edges_keeps_the_floor_a_centred_wide_signal_has_none() {
    let (fs, n) = (2.4e6, 2048);
    let sigma = 0.01;
    let truth = 10.0 * (sigma * sigma * 1.5 / n as f64).log10();
    let roll_off = |f: f64| {
        let a = f.abs();
        if a < 0.4 * fs {
            1.0
        } else {
            10f64.powf(-15.0 * (a - 0.4 * fs) / (0.1 * fs) / 20.0)
        }
    };
    let x = shaped_noise(64 * n, fs, sigma, roll_off, sigma * 0.03, (300e3, 0.01));
    // The same with the radio's bandwidth unknown, set to the rate, and set above it
    // (an analog filter wider than the rate says nothing of the decimator's edges).
    for bandwidth in [None, Some(fs), Some(1.1 * fs), Some(1.5 * fs)] {
        let mut cfg = WelchConfig::new(n, fs);
        cfg.passband_hz = bandwidth;
        let mut w = Welch::new(cfg).unwrap();
        w.feed(&x);
        let s = w.finish();
        let floor = s.noise_floor_db.expect("a roll-off keeps the floor");
        assert!(
            (floor - truth).abs() < 0.3,
            "{bandwidth:?}: floor {floor:.2} vs {truth:.2}"
        );
        let [lo, hi] = s.noise_floor_band_hz.expect("read between the edges");
        assert!(
            lo > -0.5 * fs && lo < -0.35 * fs && hi < 0.5 * fs && hi > 0.35 * fs,
            "{bandwidth:?}: {lo} {hi}"
        );
        assert_eq!(s.peaks.len(), 1, "{bandwidth:?}: {:#?}", s.peaks);
    }

    let fs = 30.72e6;
    let lte = |f: f64| if f.abs() <= 9e6 { 1.0 } else { 0.0 };
    let x = shaped_noise(64 * n, fs, 0.05, lte, 0.003, (0.0, 0.0));
    let mut w = Welch::new(WelchConfig::new(n, fs)).unwrap();
    w.feed(&x);
    let s = w.finish();
    assert_eq!(s.noise_floor_db, None, "{:?}", s.noise_floor_db);
    assert_eq!(s.noise_floor_absent(), Some(NOT_LEVEL));
}
