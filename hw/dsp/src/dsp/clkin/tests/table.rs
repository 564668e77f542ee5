//! The randomized, seeded table: CLKIN's numbers against the truth over reference
//! tones from −40 to −105 dBFS, with and without a second carrier, in the noise of the
//! simulated radio (`hw/rxsim`: a 2¹⁸-sample table of unit complex Gaussian noise,
//! scaled to −60 dBFS, restarted at a random place after each pass).
use super::super::*;
use crate::dsp::scenes::full_band;
use std::f64::consts::PI;
use std::sync::OnceLock;

/// rxsim's noise table (the same generator and seed).
fn noise_table() -> &'static [Complex<f32>] {
    static T: OnceLock<Vec<Complex<f32>>> = OnceLock::new();
    T.get_or_init(|| {
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (((s >> 11) & ((1u64 << 53) - 1)) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..1usize << 18)
            .map(|_| {
                let r = (-next().ln()).sqrt();
                let a = 2.0 * PI * next();
                Complex::new((r * a.cos()) as f32, (r * a.sin()) as f32)
            })
            .collect()
    })
}

/// A small seeded generator for the table.
pub(crate) struct Rng(u64);
impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [a, b).
    pub(crate) fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// What the radio sees: carriers at RF (Hz, dBFS) through a clock error, plus noise.
pub(crate) struct Scene {
    pub(crate) fs: f64,
    pub(crate) fc: f64,
    pub(crate) n: usize,
    pub(crate) ppm: f64,
    pub(crate) carriers: Vec<(f64, f64)>,
    pub(crate) noise_dbfs: f64,
    pub(crate) seed: u64,
}

/// The samples of `s`, as rxsim makes them (exact phase accumulators, its noise table).
pub(crate) fn render(s: &Scene) -> Vec<Complex<f32>> {
    let e = s.ppm * 1e-6;
    let table = noise_table();
    let na = 10f64.powf(s.noise_dbfs / 20.0) as f32;
    let mut rng = Rng::new(s.seed);
    let mut out = Vec::with_capacity(s.n);
    let mut ni = (rng.next() % (table.len() as u64 / 2)) as usize;
    while out.len() < s.n {
        let run = (s.n - out.len()).min(table.len() - ni);
        out.extend(table[ni..ni + run].iter().map(|v| v * na));
        ni += run;
        if ni >= table.len() {
            ni = (rng.next() % (table.len() as u64 / 2)) as usize;
        }
    }
    for &(f, dbfs) in &s.carriers {
        let fb = (f - s.fc * (1.0 + e)) / (1.0 + e);
        let cyc = fb / s.fs;
        let a = 10f64.powf(dbfs / 20.0);
        let ph0 = rng.uniform(0.0, 2.0 * PI);
        let step = Complex::from_polar(1.0, 2.0 * PI * cyc);
        for (c, chunk) in out.chunks_mut(4096).enumerate() {
            let i0 = (c * 4096) as f64;
            let mut z = Complex::from_polar(a, ph0 + 2.0 * PI * (cyc * i0).fract());
            for v in chunk {
                *v += Complex::new(z.re as f32, z.im as f32);
                z *= step;
            }
        }
    }
    out
}

/// A reference at −72 dBFS (+0.8 ppm) beside a carrier 27 dB stronger 230 Hz away:
/// without an expected level the reference is ambiguous (no number, both listed);
/// the expected level singles it out and the number is the reference's.
#[test]
fn a_stronger_second_carrier_makes_the_reference_ambiguous_unless_its_level_is_given() {
    let ppm = 0.8;
    let seen = TONE / (1.0 + ppm * 1e-6);
    let x = render(&Scene {
        fs: FS,
        fc: FC,
        n: 1_000_000,
        ppm,
        carriers: vec![(TONE, -72.0), (seen + 230.0 * (1.0 + ppm * 1e-6), -45.0)],
        noise_dbfs: NOISE_DBFS,
        seed: 11,
    });
    let run = |cfg: ClkinConfig| {
        let mut e = ClkinEstimator::new(cfg).unwrap();
        e.feed(&x);
        (
            e.finish(&full_band(&x, FS, FC).unwrap()),
            e.tones().to_vec(),
        )
    };
    let (out, tones) = run(ClkinConfig::new(TONE, FC, FS, TOL));
    let m = out.unwrap_err().to_string();
    assert!(m.contains("ambiguous: 2 tones"), "{m}");
    assert_eq!(tones.len(), 2, "{tones:?}");
    assert!(tones.iter().all(|t| !t.reference), "{tones:?}");
    let report = judge_clkin(
        TONE,
        TOL,
        Err(&Error::Clkin(m)),
        &ClockEvidence::default(),
        &tones,
    );
    assert_eq!(report.status, ClkinStatus::Fail);
    assert!(report.ppm.is_none() && report.ppm_uncertainty.is_none());
    let mut cfg = ClkinConfig::new(TONE, FC, FS, TOL);
    cfg.expected_dbfs = Some(-72.0);
    let e = run(cfg).0.unwrap();
    assert!((e.ppm - ppm).abs() <= 3.0 * e.ppm_uncertainty, "{e:?}");
}

/// A clean reference far above the noise (−20 dBFS over −100 dBFS noise: 137 dB
/// after integration) is one carrier, not several: the search window's own
/// sidelobes (Blackman-Harris, −92 dB at 4.5 bins, −93 dB at 6.5, −104 dB at 12.5)
/// stand 30–45 dB over the noise here and were once listed as carriers 6.5 and
/// 12.5 bins from it, making every strong reference "ambiguous". The number is
/// true, and nothing else is listed.
#[test]
fn a_strong_clean_reference_is_one_carrier_not_its_windows_sidelobes() {
    for (ppm, n, seed) in [
        (0.3, 1_000_000, 21),
        (-1.7, 600_000, 22),
        (0.0, 2_000_000, 23),
    ] {
        let x = render(&Scene {
            fs: FS,
            fc: FC,
            n,
            ppm,
            carriers: vec![(TONE, -20.0)],
            noise_dbfs: -100.0,
            seed,
        });
        let mut e = ClkinEstimator::new(ClkinConfig::new(TONE, FC, FS, TOL)).unwrap();
        e.feed(&x);
        let out = e.finish(&full_band(&x, FS, FC).unwrap());
        let tones = e.tones().to_vec();
        let est = out.unwrap_or_else(|err| panic!("{ppm} ppm, {n} samples: {err}"));
        // The sidelobes are well above the detection threshold (≥ 18 dB over the
        // noise): without the leakage rule they would be listed.
        assert!(est.tone_snr_db > 92.0 + 18.0 + 10.0, "{est:?}");
        assert_eq!(tones.len(), 1, "{tones:?}");
        assert!(tones[0].reference);
        assert!(
            (est.ppm - ppm).abs() <= 3.0 * est.ppm_uncertainty,
            "{est:?}"
        );
        assert!((est.ppm - ppm).abs() < 1e-6, "{est:?}");
    }
}

/// Beside that strong reference a real second carrier is still seen wherever it
/// stands above the window's leakage: 80 dB down 14 Hz away (7 bins, 13 dB over the
/// sidelobes there), 40 dB down 40 Hz away, 90 dB down 300 Hz away; each makes the
/// reference ambiguous (no number), both listed with the second one's level.
#[test]
fn a_real_carrier_beside_a_strong_reference_is_still_ambiguous() {
    let n = 1_000_000;
    for (off_hz, level, seed) in [(14.0, -100.0, 31), (-40.0, -60.0, 32), (300.0, -110.0, 33)] {
        let x = render(&Scene {
            fs: FS,
            fc: FC,
            n,
            ppm: 0.0,
            carriers: vec![(TONE, -20.0), (TONE + off_hz, level)],
            noise_dbfs: -100.0,
            seed,
        });
        let mut e = ClkinEstimator::new(ClkinConfig::new(TONE, FC, FS, TOL)).unwrap();
        e.feed(&x);
        let m = e
            .finish(&full_band(&x, FS, FC).unwrap())
            .unwrap_err()
            .to_string();
        let tones = e.tones();
        assert!(
            m.contains("ambiguous: 2 tones"),
            "{off_hz} Hz, {level} dBFS: {m}"
        );
        assert_eq!(tones.len(), 2, "{tones:?}");
        // Where it is and how strong, to half a bin (1 Hz) and 2 dB: the reference's
        // sidelobe under it adds or takes up to 1.8 dB at 14 Hz.
        let second = &tones[1];
        assert!(
            (second.frequency_hz - TONE - off_hz).abs() < 1.0,
            "{off_hz} Hz: {second:?}"
        );
        assert!(
            (second.level_dbfs - level).abs() < 2.0,
            "{level} dBFS: {second:?}"
        );
    }
}

#[test]
fn a_carrier_folded_in_from_outside_the_decimated_band_is_no_number() {
    // The search's decimated rate fd (±10 ppm of 100.1 MHz fills a quarter of it).
    let m = (FS / (8.0 * 10e-6 * TONE)).floor();
    let fd = FS / m;
    let mut r = Rng::new(77);
    for seed in 0..6u64 {
        // A carrier one or two decimated bands from the tone, its image inside the
        // ±1 kHz window; a clock anywhere within ±3 ppm.
        let k = [1.0, -1.0, 2.0][seed as usize % 3];
        // (Away from the null at k·fd, so the image stands well over the noise.)
        let sign = if r.uniform(0.0, 1.0) < 0.5 { -1.0 } else { 1.0 };
        let image = sign * r.uniform(350.0, 850.0);
        let ppm = r.uniform(-3.0, 3.0);
        let neighbour = (TONE + k * fd + image, r.uniform(-10.0, -3.0));
        // No reference at all, then a reference as weak as the image (its level
        // given, so the level does not set the image aside).
        for with_reference in [false, true] {
            let mut carriers = vec![neighbour];
            let mut cfg = ClkinConfig::new(TONE, FC, FS, TOL);
            if with_reference {
                // The image's level: the sinc² response there.
                let x = PI * (k * fd + image) / FS;
                let amp = ((m * x).sin() / (m * x.sin())).powi(2);
                let level = neighbour.1 + 20.0 * amp.log10();
                carriers.push((TONE + image + 3.0, level));
                cfg.expected_dbfs = Some(level);
            }
            let x = render(&Scene {
                fs: FS,
                fc: FC,
                n: 1_000_000,
                ppm,
                carriers,
                noise_dbfs: NOISE_DBFS,
                seed,
            });
            let mut e = ClkinEstimator::new(cfg).unwrap();
            e.feed(&x);
            let out = e.finish(&full_band(&x, FS, FC).unwrap());
            let what = format!("seed {seed}, {neighbour:?}, reference {with_reference}");
            let m = match out {
                Ok(est) => panic!("{what}: a number from a folded carrier: {est:?}"),
                Err(err) => err.to_string(),
            };
            assert!(
                m.contains("may be another carrier folded in") || m.contains("ambiguous"),
                "{what}: {m}"
            );
            if !with_reference {
                // It names the carrier, where the capture's spectrum shows it.
                // (The spectrum's bin: within one of its 977 Hz.)
                let named = m
                    .split("dBFS at ")
                    .nth(1)
                    .and_then(|t| t.split(' ').next())
                    .and_then(|t| t.parse::<f64>().ok())
                    .unwrap_or_else(|| panic!("{what}: no frequency named: {m}"));
                assert!(
                    m.contains("folded in") && (named * 1e6 - neighbour.0).abs() <= FS / 2048.0,
                    "{what}: {m}"
                );
            }
        }
    }
}

#[test]
fn a_reference_far_stronger_than_a_folded_carrier_is_still_measured() {
    let m = (FS / (8.0 * 10e-6 * TONE)).floor();
    let fd = FS / m;
    for (seed, ppm) in [(41u64, 1.7), (42, -2.4), (43, 0.6)] {
        // The reference at −30 dBFS; a −60 dBFS carrier one band up whose image,
        // about 94 dB under the reference, lands on it.
        let e_ = ppm * 1e-6;
        let seen = (TONE - FC * (1.0 + e_)) / (1.0 + e_) + FC;
        let x = render(&Scene {
            fs: FS,
            fc: FC,
            n: 1_000_000,
            ppm,
            carriers: vec![(TONE, -30.0), (seen + fd + 0.3, -60.0)],
            noise_dbfs: NOISE_DBFS,
            seed,
        });
        let mut e = ClkinEstimator::new(ClkinConfig::new(TONE, FC, FS, TOL)).unwrap();
        e.feed(&x);
        let est = e
            .finish(&full_band(&x, FS, FC).unwrap())
            .unwrap_or_else(|err| panic!("{ppm} ppm: {err}"));
        assert!(
            (est.ppm - ppm).abs() <= 3.0 * est.ppm_uncertainty,
            "{ppm} ppm: {est:?}"
        );
    }
}

/// One row of the table and what came out.
struct Row {
    ppm: f64,
    tone_dbfs: f64,
    spur: Option<(f64, f64)>,
    expected: bool,
    out: std::result::Result<ClkinEstimate, String>,
}

const FS: f64 = 2e6;
const FC: f64 = 100e6;
const TONE: f64 = 100.1e6;
const TOL: f64 = 5.0;
const NOISE_DBFS: f64 = -60.0;
/// Rows in the table.
const ROWS: u64 = 160;

/// The tone's SNR after integration over `n` samples in the search spectrum
/// (the Blackman-Harris window keeps half the coherent gain over its noise).
fn expected_snr_db(level: f64, n: usize) -> f64 {
    level - NOISE_DBFS + 10.0 * (n as f64 * 0.499).log10()
}

fn run_row(seed: u64, n: usize) -> Row {
    let mut r = Rng::new(seed);
    let ppm = r.uniform(-10.0, 10.0);
    let tone_dbfs = r.uniform(-105.0, -40.0);
    let spur = (r.uniform(0.0, 1.0) < 0.5).then(|| {
        // Anywhere in the window ±2·TOL ppm, not closer than 6 Hz (the resolution
        // over 1 s: two carriers closer than that are one to any estimator).
        let tone_seen = TONE / (1.0 + ppm * 1e-6);
        loop {
            let f = TONE * (1.0 + r.uniform(-2.0 * TOL, 2.0 * TOL) * 1e-6);
            if (f - tone_seen).abs() > 6.0 {
                return (f, (tone_dbfs + r.uniform(-40.0, 30.0)).min(-30.0));
            }
        }
    });
    // A spur far stronger than the reference needs the task to name the level (a lone
    // carrier cannot say whether it is the reference); otherwise sometimes named.
    let expected = spur.is_some_and(|(_, l)| l > tone_dbfs + 20.0)
        || (spur.is_some() && r.uniform(0.0, 1.0) < 0.3);
    let mut carriers = vec![(TONE, tone_dbfs)];
    carriers.extend(spur);
    let x = render(&Scene {
        fs: FS,
        fc: FC,
        n,
        ppm,
        carriers,
        noise_dbfs: NOISE_DBFS,
        seed,
    });
    let mut cfg = ClkinConfig::new(TONE, FC, FS, TOL);
    if expected {
        cfg.expected_dbfs = Some(tone_dbfs);
    }
    let chunk = 1000 + (seed as usize * 7919) % 60_000;
    let out = ClkinEstimator::new(cfg).and_then(|mut e| {
        for c in x.chunks(chunk) {
            e.feed(c);
        }
        e.finish(&full_band(&x, FS, FC)?)
    });
    Row {
        ppm,
        tone_dbfs,
        spur,
        expected,
        out: out.map_err(|e| e.to_string()),
    }
}

/// Coverage, sensitivity and the ambiguity rule over 160 seeded cases of 1 s at
/// 2 MS/s: every reported ppm is within 3 claimed standard uncertainties of the truth
/// (≥ 99 %), a tone at −100 dBFS or stronger is always reported within 0.01 ppm
/// unless a second carrier makes it ambiguous, two carriers in the window are never
/// resolved by guessing (whatever their levels) unless the expected level leaves one,
/// and no number is ever the spur's.
#[test]
fn randomized_table_against_the_truth() {
    let n = 2_000_000;
    let (mut reported, mut covered, mut weak, mut ambiguous, mut spur_cases) = (0, 0, 0, 0, 0);
    let mut weakest_within: f64 = 0.0;
    // The largest error of a tone at −100 dBFS or stronger (ppm).
    let mut worst_strong: f64 = 0.0;
    let mut worst_ratio: f64 = 0.0;
    let mut problems = Vec::new();
    // Two workers: the rows are independent.
    let rows: Vec<(u64, Row)> = std::thread::scope(|sc| {
        let h: Vec<_> = (0..2u64)
            .map(|w| {
                sc.spawn(move || {
                    (1..=ROWS)
                        .filter(|s| s % 2 == w)
                        .map(|s| (s, run_row(s, n)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(u64, Row)> = h
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect();
        all.sort_by_key(|r| r.0);
        all
    });
    assert_eq!(rows.len(), ROWS as usize, "a worker failed");
    for (seed, row) in rows {
        let snr = expected_snr_db(row.tone_dbfs, n);
        // Both carriers clearly detectable and within the ambiguity band (margins for
        // the level estimates).
        // Where the spur appears relative to the window (±2·TOL ppm of the tone's
        // expected place), as the radio's clock error moves it.
        let e = row.ppm * 1e-6;
        let inside = |f: f64, margin: f64| {
            let off = (f - FC * (1.0 + e)) / (1.0 + e) - (TONE - FC);
            off.abs() <= 2.0 * TOL * 1e-6 * TONE + margin
        };
        // A second carrier at any level makes the reference ambiguous, unless the
        // expected level (±6 dB) leaves only one.
        let spur_rival = row.spur.is_some_and(|(f, l)| {
            inside(f, 3.0)
                && (!row.expected || (l - row.tone_dbfs).abs() <= 9.0)
                && expected_snr_db(l, n) >= 12.0
        });
        let clear_rival = row.spur.is_some_and(|(f, l)| {
            inside(f, -3.0)
                && (!row.expected || (l - row.tone_dbfs).abs() <= 3.0)
                && expected_snr_db(l.min(row.tone_dbfs), n) >= 24.0
        });
        spur_cases += usize::from(row.spur.is_some());
        let what = format!(
            "seed {seed}: ppm {:+.4}, tone {:.1} dBFS, spur {:?}, expected level {}",
            row.ppm, row.tone_dbfs, row.spur, row.expected
        );
        match &row.out {
            Ok(e) => {
                reported += 1;
                let err = e.ppm - row.ppm;
                let ratio = err.abs() / e.ppm_uncertainty;
                worst_ratio = worst_ratio.max(ratio);
                if ratio <= 3.0 {
                    covered += 1;
                } else {
                    eprintln!("outside 3σ: {what}: {e:?} err {err:+e} ({ratio:.1} σ)");
                }
                if err.abs() <= 0.01 {
                    weakest_within = weakest_within.min(row.tone_dbfs);
                }
                if row.tone_dbfs >= -100.0 {
                    worst_strong = worst_strong.max(err.abs());
                }
                if err.abs() > 0.05 {
                    problems.push(format!("{what}: a wrong number {e:?}"));
                }
                if clear_rival && !row.expected {
                    problems.push(format!("{what}: a second carrier, yet a number {e:?}"));
                }
            }
            Err(m) if m.contains("reference tone too weak") => {
                weak += 1;
                if snr >= 21.0 {
                    problems.push(format!("{what}: {m} (expected SNR {snr:.1} dB)"));
                }
            }
            Err(m)
                if m.contains("ambiguous: ")
                    && m.contains("tones within ±10 ppm of the reference") =>
            {
                ambiguous += 1;
                if !spur_rival {
                    problems.push(format!("{what}: {m}"));
                }
            }
            Err(m) if m.contains("no tone at the expected") => {
                weak += 1;
                if snr >= 21.0 {
                    problems.push(format!("{what}: {m}"));
                }
            }
            Err(m) => problems.push(format!("{what}: unexpected {m}")),
        }
    }
    eprintln!(
        "CLKIN table: {reported} reported, {covered} within 3σ ({:.1} %), worst |err|/σ {worst_ratio:.2}; \
         {weak} too weak, {ambiguous} ambiguous; {spur_cases} cases with a second carrier; \
         weakest tone reported within 0.01 ppm {weakest_within:.1} dBFS; largest error at ≥ −100 dBFS {worst_strong:.2e} ppm",
        100.0 * covered as f64 / reported.max(1) as f64
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(reported >= 100, "only {reported} numbers reported");
    assert!(
        covered as f64 >= 0.99 * reported as f64,
        "coverage {covered}/{reported} below 99 %"
    );
    assert!(
        weakest_within <= -100.0,
        "weakest within 0.01 ppm: {weakest_within}"
    );
    assert!(ambiguous >= 5, "only {ambiguous} ambiguity cases");
}
