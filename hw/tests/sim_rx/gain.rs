//! The RX gain as a front end applies it: the signals and the receiver's own noise at
//! the converter move by the gain's dB from the level reference (20 dB, the power-on
//! gain), the converter's floor stays, and a level past full scale clips in every format.
use super::*;
use std::collections::BTreeMap;

const OFF: f64 = 100e3;
const RATE: f64 = 1e6;
const N: usize = 1 << 16;
/// The receiver noise's power after the anti-alias filter, relative to `noise_dbfs`
/// (its power over the band before it): 10·log10(0.875).
const AAF_DB: f64 = -0.5799;

/// rxsim with `args` (its tone `OFF` Hz above 100 MHz) at `RATE`, the gain set to `gain`
/// dB when given (else left at the power-on gain).
fn radio(args: &str, gain: Option<f64>) -> RxRadio {
    let mut r =
        RxRadio::open(&format!("driver=rxsim,pace=0,tone_hz=100.1e6,{args}")).expect("open");
    let a = r
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: RATE,
            gain_db: gain,
            ..RxConfig::default()
        })
        .expect("configure");
    assert_eq!(a.gain_db, gain.unwrap_or(20.0), "gain read back");
    r
}

/// The tone's level (dBFS: its complex amplitude, by projection on its exact frequency)
/// and the power of the rest (dBFS), of samples scaled to full scale 1.0.
fn tone_and_floor(x: &[Complex<f64>]) -> (f64, f64) {
    let w = -2.0 * std::f64::consts::PI * OFF / RATE;
    let lo = |n: usize| Complex::from_polar(1.0, w * n as f64);
    let a = x
        .iter()
        .enumerate()
        .map(|(n, v)| v * lo(n))
        .sum::<Complex<f64>>()
        / x.len() as f64;
    let rest = x
        .iter()
        .enumerate()
        .map(|(n, v)| (v - a / lo(n)).norm_sqr())
        .sum::<f64>()
        / x.len() as f64;
    (20.0 * a.norm().log10(), 10.0 * rest.log10())
}

fn cf32(r: &mut RxRadio) -> Vec<Complex<f64>> {
    let mut s = r.rx_stream().expect("cf32 stream");
    let x = read_exact(&mut s, N);
    x.iter()
        .map(|v| Complex::new(f64::from(v.re), f64::from(v.im)))
        .collect()
}

/// A native stream's samples scaled to full scale 1.0, and the largest |I| or |Q| in counts.
trait Counts: rxnode_dsp::NativeIq + soapysdr::StreamSample + Default + Send {
    fn counts(self) -> Complex<f64>;
}
impl Counts for Complex<i16> {
    fn counts(self) -> Complex<f64> {
        Complex::new(f64::from(self.re), f64::from(self.im))
    }
}
impl Counts for Complex<i8> {
    fn counts(self) -> Complex<f64> {
        Complex::new(f64::from(self.re), f64::from(self.im))
    }
}
fn native<T: Counts>(r: &mut RxRadio, full_scale: f64) -> (Vec<Complex<f64>>, f64) {
    let mut s = r.rx_stream_native::<T>().expect("native stream");
    let mut out = vec![T::default(); N];
    let mut got = 0;
    while got < N {
        match s.read_native(&mut out[got..], 1_000_000).expect("read") {
            ReadOutcome::Samples(k) => got += k,
            other => panic!("unexpected {other:?}"),
        }
    }
    let x: Vec<Complex<f64>> = out.into_iter().map(Counts::counts).collect();
    let peak = x
        .iter()
        .map(|v| v.re.abs().max(v.im.abs()))
        .fold(0.0, f64::max);
    (x.iter().map(|v| v / full_scale).collect(), peak)
}

/// The gain as advertised (LNA + VGA, 1 dB steps) moves the tone and the receiver
/// noise by exactly its dB from the 20 dB reference; set per element too.
#[test]
fn rx_gain_moves_the_tone_and_the_receiver_noise_by_its_db() {
    init();
    let args = "serial=gainlvl,tone_dbfs=-40,noise_dbfs=-70";
    let (t, f) = tone_and_floor(&cf32(&mut radio(args, None)));
    assert!(
        (t + 40.0).abs() < 0.01 && (f - (-70.0 + AAF_DB)).abs() < 0.1,
        "power-on: tone {t} floor {f}"
    );
    for g in [0.0, 13.0, 37.0, 52.0] {
        let (t, f) = tone_and_floor(&cf32(&mut radio(args, Some(g))));
        eprintln!("gain {g}: tone {t:.3} dBFS, floor {f:.3} dBFS");
        assert!(
            (t - (-40.0 + g - 20.0)).abs() < 0.01,
            "gain {g}: tone {t} dBFS"
        );
        assert!(
            (f - (-70.0 + AAF_DB + g - 20.0)).abs() < 0.1,
            "gain {g}: floor {f} dBFS"
        );
    }
    let mut r = radio(args, None);
    let m = BTreeMap::from([("LNA".to_owned(), 24.0), ("VGA".to_owned(), 10.0)]);
    r.set_gain_elements(&m).expect("set elements");
    let (t, _) = tone_and_floor(&cf32(&mut r));
    assert!((t + 26.0).abs() < 0.01, "LNA 24 + VGA 10: tone {t} dBFS");
}

/// The 8-bit converter's own floor (−45 dBFS) does not follow the gain, the receiver
/// noise above it does; and a tone past full scale clips alike in CF32, CS16 and CS8
/// exactly from where the gain puts its amplitude at full scale.
#[test]
fn rx_gain_leaves_the_converter_floor_and_clips_at_full_scale() {
    init();
    let args = "serial=gainadc,tone_dbfs=-40,noise_dbfs=-50";
    let floor = |g: f64| tone_and_floor(&native::<Complex<i8>>(&mut radio(args, Some(g)), 127.0).0);
    let ((t0, f0), (t10, f10), (t50, f50)) = (floor(0.0), floor(10.0), floor(50.0));
    eprintln!("CS8: gain 0 {t0:.2}/{f0:.2}, 10 {t10:.2}/{f10:.2}, 50 {t50:.2}/{f50:.2} dBFS");
    assert!((t10 - t0 - 10.0).abs() < 0.1, "CS8 tone {t0} -> {t10}");
    assert!(
        (f10 - f0).abs() < 0.3 && (f0 + 45.0).abs() < 0.5,
        "CS8 floor {f0} -> {f10}"
    );
    assert!(
        (f50 - (-20.0 + AAF_DB)).abs() < 0.3,
        "CS8 floor at 50 dB: {f50}"
    );
    // −10 dBFS at 20 dB: at 29 dB the tone is at −1 dBFS, at 31 dB past full scale.
    let args = "serial=gainclip,tone_dbfs=-10,noise_dbfs=-80";
    let (x, peak) = native::<Complex<i16>>(&mut radio(args, Some(29.0)), 32767.0);
    let (t, _) = tone_and_floor(&x);
    assert!(
        (t + 1.0).abs() < 0.01 && peak < 32767.0 * 0.9,
        "29 dB: tone {t} peak {peak}"
    );
    let mut r = radio(args, Some(31.0));
    let (_, p16) = native::<Complex<i16>>(&mut r, 32767.0);
    let (_, p8) = native::<Complex<i8>>(&mut r, 127.0);
    let pf = cf32(&mut r)
        .iter()
        .map(|v| v.re.abs().max(v.im.abs()))
        .fold(0.0, f64::max);
    assert_eq!(
        (p16, p8, pf),
        (32767.0, 127.0, 1.0),
        "31 dB: not clipped at full scale"
    );
}

/// The receive anti-alias filter: a tone keeps its level to ±0.4·fs, then rolls off as
/// cos² of where it is in the last tenth of the band (−6.02 dB at ±0.45·fs, −16.69 at
/// 0.475), and the noise beside it rolls off alike, so the band edges are no flat brick.
#[test]
fn rx_band_edges_roll_off_as_the_anti_alias_filter_does() {
    init();
    for (i, x) in [0.1f64, 0.4, -0.42, 0.45, -0.475].into_iter().enumerate() {
        let mut r = RxRadio::open(&format!(
            "driver=rxsim,serial=aaf{i},pace=0,tone_hz={},tone_dbfs=-20,noise_dbfs=-1000",
            100e6 + x * RATE
        ))
        .expect("open");
        r.configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: RATE,
            ..RxConfig::default()
        })
        .expect("configure");
        let v = cf32(&mut r);
        let w = -2.0 * std::f64::consts::PI * x;
        let a = v
            .iter()
            .enumerate()
            .map(|(n, s)| s * Complex::from_polar(1.0, w * n as f64))
            .sum::<Complex<f64>>()
            / v.len() as f64;
        let c = (std::f64::consts::FRAC_PI_2 * ((x.abs() - 0.4) / 0.1).max(0.0)).cos();
        let want = -20.0 + 20.0 * (c * c).log10();
        let got = 20.0 * a.norm().log10();
        assert!(
            (got - want).abs() < 0.01,
            "tone at {x}·fs: {got} dBFS, {want} expected"
        );
    }
    // Noise alone: 2^20 samples in 1024-point spectra, the band's middle against its edges.
    let mut r = RxRadio::open("driver=rxsim,serial=aafn,pace=0,noise_dbfs=-40").expect("open");
    r.configure(&RxConfig {
        frequency_hz: 100e6,
        sample_rate_hz: RATE,
        ..RxConfig::default()
    })
    .expect("configure");
    let mut s = r.rx_stream().expect("stream");
    let x = read_exact(&mut s, 1 << 20);
    let fft = FftPlanner::new().plan_fft_forward(1024);
    let mut p = vec![0.0f64; 1024];
    for block in x.chunks_exact(1024) {
        let mut b = block.to_vec();
        fft.process(&mut b);
        for (k, c) in b.iter().enumerate() {
            p[k] += f64::from(c.norm_sqr());
        }
    }
    let band = |lo: f64, hi: f64| {
        let v: Vec<f64> = (0..1024)
            .filter(|&k| {
                let f = (if k < 512 { k as f64 } else { k as f64 - 1024.0 }) / 1024.0;
                (lo..hi).contains(&f.abs())
            })
            .map(|k| p[k])
            .collect();
        10.0 * (v.iter().sum::<f64>() / v.len() as f64).log10()
    };
    let mid = band(0.0, 0.35);
    let (edge45, edge48) = (band(0.445, 0.455) - mid, band(0.475, 0.485) - mid);
    eprintln!("noise at 0.45·fs {edge45:.2} dB, at 0.48·fs {edge48:.2} dB");
    assert!((edge45 + 6.0).abs() < 1.0, "noise at 0.45·fs: {edge45} dB");
    assert!(edge48 < -15.0, "noise at 0.48·fs: {edge48} dB");
}
