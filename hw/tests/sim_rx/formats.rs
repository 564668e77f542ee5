//! The native sample formats: rxsim's CS16 and CS8 streams are its CF32 stream
//! rounded by the documented rule, cost no more than it, and a pooled native CS16
//! capture gives the CF32 results.
use super::*;

/// rxsim opened with `args` and tuned to 100 MHz at `rate`.
fn open_at(args: &str, rate: f64) -> RxRadio {
    let mut radio = RxRadio::open(args).expect("open");
    radio
        .configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: rate,
            ..RxConfig::default()
        })
        .expect("configure");
    radio
}

/// `n` of a stream's native samples, read `chunk` at a time (odd chunks put samples
/// in the converters' scalar tails).
fn read_native_exact<T: rxnode_dsp::NativeIq + Default + Copy>(
    s: &mut impl NativeSource<T>,
    n: usize,
    chunk: usize,
) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let mut got = 0;
    while got < n {
        let end = (got + chunk).min(n);
        match s.read_native(&mut out[got..end], 1_000_000).expect("read") {
            ReadOutcome::Samples(k) => got += k,
            other => panic!("unexpected {other:?}"),
        }
    }
    out
}

/// CPU time of the calling thread (unix: `CLOCK_THREAD_CPUTIME_ID`).
#[cfg(unix)]
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer to a timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

// Thread CPU time is read through a unix clock; the cost comparison runs on unix.
#[cfg(unix)]
#[test]
fn native_cs16_stream_costs_no_more_than_cf32() {
    init();
    const N: usize = 1 << 21;
    let args = "driver=rxsim,serial=fmt1,pace=0,tone_hz=100.1e6";
    let cfg = RxConfig {
        frequency_hz: 100e6,
        sample_rate_hz: 61.44e6,
        ..RxConfig::default()
    };
    let mut radio = RxRadio::open(args).expect("open");
    radio.configure(&cfg).expect("configure");
    let (mut best_f32, mut best_i16) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        {
            let mut s = radio.rx_stream().expect("cf32 stream");
            let mut buf = vec![Complex::new(0.0f32, 0.0); 16384];
            let _ = s.read(&mut buf, 100_000).expect("read");
            let (t, mut got) = (thread_cpu(), 0);
            while got < N {
                if let ReadOutcome::Samples(n) = s.read(&mut buf, 100_000).expect("read") {
                    got += n;
                }
            }
            best_f32 = best_f32.min(thread_cpu() - t);
        }
        {
            let mut s = radio.rx_stream_ci16().expect("cs16 stream");
            let mut buf = vec![Complex::new(0i16, 0); 16384];
            let _ = s.read_native(&mut buf, 100_000).expect("read");
            let (t, mut got) = (thread_cpu(), 0);
            while got < N {
                if let ReadOutcome::Samples(n) = s.read_native(&mut buf, 100_000).expect("read") {
                    got += n;
                }
            }
            best_i16 = best_i16.min(thread_cpu() - t);
        }
    }
    assert!(
        best_i16.as_secs_f64() <= 2.5 * best_f32.as_secs_f64(),
        "{N} samples: CS16 {best_i16:?}, CF32 {best_f32:?}"
    );
}

/// rxsim's CS16 conversion (SSE2, 8 floats at a time, then a scalar tail)
/// gives exactly the integers of the documented rule — clamp to ±1, × 32767, round
/// half away from zero — applied to the CF32 stream of the same settings. A fresh
/// stream starts from the same generator state, so the two streams carry the same
/// signal; odd read sizes put samples in the scalar tail, and a 0 dBFS tone over
/// -6 dBFS noise drives many samples to full scale (the clamp).
#[test]
fn cs16_stream_is_the_cf32_stream_rounded_to_full_scale() {
    init();
    const N: usize = 300_001;
    let args = "driver=rxsim,serial=cs16eq,pace=0,tone_hz=100.1e6,tone_dbfs=0,noise_dbfs=-6";
    let mut radio = open_at(args, 2e6);
    let cf32 = read_exact(&mut radio.rx_stream().expect("cf32 stream"), N);
    let cs16 = read_native_exact(&mut radio.rx_stream_ci16().expect("cs16 stream"), N, 1001);
    let rule = |v: f32| {
        let x = v.clamp(-1.0, 1.0) * 32767.0;
        (x + 0.5f32.copysign(x)) as i16
    };
    let clamped = cf32.iter().filter(|c| c.re.abs() == 1.0).count();
    assert!(clamped > 1000, "only {clamped} samples at full scale");
    for (i, (f, q)) in cf32.iter().zip(&cs16).enumerate() {
        assert_eq!(
            (rule(f.re), rule(f.im)),
            (q.re, q.im),
            "sample {i}: CF32 {f}"
        );
    }
}

/// rxsim's CS8 stream (a HackRF's native format) is the CF32 stream of the same
/// settings through an 8-bit converter with its own noise: clamp to ±1, × 127, plus a
/// triangular dither of ±1 count, clamped to ±127, rounded half away from zero —
/// read through `rx_stream_native`, as the capture's ci8 recording reads it. Every
/// value is within 1.5 counts of the exact one, the error has no bias and ½ count rms
/// (rounding alone gives 0.29 and the signal's harmonics).
#[test]
fn cs8_stream_is_the_cf32_stream_through_a_noisy_8_bit_converter() {
    init();
    const N: usize = 100_003;
    let args = "driver=rxsim,serial=cs8eq,pace=0,tone_hz=100.1e6,tone_dbfs=0,noise_dbfs=-6";
    let mut radio = open_at(args, 2e6);
    let cf32 = read_exact(&mut radio.rx_stream().expect("cf32 stream"), N);
    let mut s = radio.rx_stream_native::<Complex<i8>>().expect("cs8 stream");
    let cs8 = read_native_exact(&mut s, N, 777);
    assert!(cf32.iter().filter(|c| c.re.abs() == 1.0).count() > 100);
    let (mut sum, mut sq, mut rounded_differently, mut n) = (0.0f64, 0.0f64, 0usize, 0usize);
    for (i, (f, q)) in cf32.iter().zip(&cs8).enumerate() {
        for (v, got) in [(f.re, q.re), (f.im, q.im)] {
            let exact = v.clamp(-1.0, 1.0) * 127.0;
            let err = f32::from(got) - exact;
            assert!(err.abs() <= 1.5, "sample {i}: CF32 {f}, CS8 {q}");
            assert!(got != i8::MIN, "sample {i}: CS8 {q} past ±127");
            if v.abs() < 0.99 {
                sum += f64::from(err);
                sq += f64::from(err * err);
                rounded_differently += usize::from(f32::from(got) != exact.round());
                n += 1;
            }
        }
    }
    let (mean, rms) = (sum / n as f64, (sq / n as f64).sqrt());
    assert!(mean.abs() < 0.01, "bias {mean} counts");
    assert!((rms - 0.5).abs() < 0.02, "error {rms} counts rms");
    assert!(
        rounded_differently * 4 > n,
        "{rounded_differently} of {n} not plainly rounded"
    );
}

/// The pooled native CS16 path and the CF32 path see the same seeded rxsim scene
/// (tone, noise, reference error) the same way: the same PSD to a hundredth of a dB
/// within ±0.45·fs, the same peaks, the same CLKIN measurement and verdict. Beyond
/// ±0.45·fs the anti-alias filter takes the noise down towards CS16's rounding floor
/// (flat, −131 dBFS a bin here), which CF32 does not have, so there they differ.
#[test]
fn native_cs16_capture_gives_the_cf32_results_on_a_seeded_scene() {
    use rxnode_dsp::{
        run_capture, run_capture_native, CaptureSettings, CaptureStatus, ClkinConfig, WelchConfig,
    };
    use std::sync::atomic::AtomicBool;
    init();
    let args = "driver=rxsim,serial=same1,seed=7,pace=1,tone_hz=100.1e6,tone_dbfs=-30,noise_dbfs=-50,ppm=0.8";
    let rate = 4e6;
    let settings = || {
        let mut w = WelchConfig::new(2048, rate);
        w.center_hz = Some(100e6);
        let mut s = CaptureSettings::new(2_000_000, w);
        s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, rate, 2.0));
        s.deadline = Some(Duration::from_secs(20));
        s
    };
    let cancel = AtomicBool::new(false);
    let open = || {
        let mut r = RxRadio::open(args).expect("open");
        r.configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: rate,
            ..RxConfig::default()
        })
        .expect("configure");
        r
    };
    let mut r1 = open();
    let f = run_capture(
        r1.rx_stream().expect("cf32"),
        &settings(),
        &cancel,
        None,
        None,
    )
    .expect("cf32 capture");
    drop(r1);
    let mut r2 = open();
    let q = run_capture_native(
        r2.rx_stream_ci16().expect("cs16"),
        &settings(),
        &cancel,
        None,
        None,
    )
    .expect("cs16 capture");
    for s in [&f, &q] {
        assert_eq!(s.status, CaptureStatus::Pass, "{s:?}");
        assert_eq!(s.samples_processed, 2_000_000);
    }
    let (pf, pq) = (f.psd.as_ref().expect("psd"), q.psd.as_ref().expect("psd"));
    assert_eq!(
        (pf.start_hz, pf.step_hz, pf.db.len()),
        (pq.start_hz, pq.step_hz, pq.db.len())
    );
    let inside = |k: usize| (pf.start_hz + k as f64 * pf.step_hz - 100e6).abs() <= 0.45 * rate;
    let worst = pf
        .db
        .iter()
        .zip(&pq.db)
        .enumerate()
        .filter(|(k, _)| inside(*k))
        .map(|(_, (a, b))| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(
        (0..pf.db.len()).filter(|&k| inside(k)).count() * 10 > pf.db.len() * 8,
        "too few bins compared: {} from {} Hz by {} Hz",
        pf.db.len(),
        pf.start_hz,
        pf.step_hz
    );
    assert!(worst < 0.01, "PSD differs by {worst} dB");
    assert_eq!(f.peaks.len(), q.peaks.len());
    // Between bins a peak is solved from three bins: the same to a milli-bin.
    let bin = rate / 2048.0;
    for (a, b) in f.peaks.iter().zip(&q.peaks) {
        assert!(
            (a.frequency_hz - b.frequency_hz).abs() < 1e-3 * bin,
            "{a:?} {b:?}"
        );
        assert!((a.power_db - b.power_db).abs() < 0.01, "{a:?} {b:?}");
    }
    let (cf, cq) = (
        f.clkin.as_ref().expect("clkin"),
        q.clkin.as_ref().expect("clkin"),
    );
    assert_eq!(cf.status, cq.status);
    let (a, b) = (cf.ppm.expect("cf32 ppm"), cq.ppm.expect("cs16 ppm"));
    assert!((a - 0.8).abs() < 0.05, "cf32 measured {a} ppm");
    assert!((a - b).abs() < 1e-3, "cf32 {a} ppm, cs16 {b} ppm");
}

/// rxsim's CF32 stream stays within the converter's full scale, as a real driver's
/// CF32 (its integers scaled into ±1.0) does: a +3 dBFS tone (amplitude 1.41) clips at
/// ±1.0 in CF32 exactly where CS16 clips at ±32767, so both formats carry the same
/// clipped signal and the same mean power — not +3 dBFS in CF32 and +1.3 in CS16.
#[test]
fn cf32_stream_clips_at_full_scale_as_the_integer_formats_do() {
    init();
    const N: usize = 200_003;
    let args = "driver=rxsim,serial=cf32fs,pace=0,tone_hz=100.1e6,tone_dbfs=3";
    let mut radio = open_at(args, 1e6);
    let cf32 = read_exact(&mut radio.rx_stream().expect("cf32 stream"), N);
    let cs16 = read_native_exact(&mut radio.rx_stream_ci16().expect("cs16 stream"), N, N);
    let peak = cf32
        .iter()
        .map(|c| c.re.abs().max(c.im.abs()))
        .fold(0.0f32, f32::max);
    assert!(peak <= 1.0, "CF32 component {peak} past full scale");
    let at_full = cf32.iter().filter(|c| c.re.abs() == 1.0).count();
    assert!(
        at_full > N / 4,
        "only {at_full} of {N} CF32 samples at full scale"
    );
    let power_db = |p: f64| 10.0 * (p / N as f64).log10();
    let p_f32 = power_db(cf32.iter().map(|c| c.norm_sqr() as f64).sum());
    let p_i16 = power_db(
        cs16.iter()
            .map(|c| (f64::from(c.re).powi(2) + f64::from(c.im).powi(2)) / 32767.0f64.powi(2))
            .sum(),
    );
    assert!(
        (p_f32 - p_i16).abs() < 0.01 && p_f32 < 2.0,
        "mean power CF32 {p_f32:.3} dBFS, CS16 {p_i16:.3} dBFS"
    );
}

/// rxsim lists, per direction, exactly the stream formats its setupStream opens, as a
/// client that picks from the list (`SoapySDRUtil --probe`, GNU Radio, SoapyRemote)
/// relies on: on RX CF32, CS16 and CS8, each of which opens; on TX CF32 and CS16 only
/// (CS8 is a HackRF's receive format; rxsim's TX set-up refuses it, so it listed a
/// format it refused).
#[test]
fn each_direction_lists_only_the_formats_it_opens() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=fmtlist").expect("open");
    let list = |d| {
        dev.stream_formats(d, 0)
            .expect("stream formats")
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(list(soapysdr::Direction::Rx), ["CF32", "CS16", "CS8"]);
    drop(dev.rx_stream::<Complex<f32>>(&[0]).expect("CF32 opens"));
    drop(dev.rx_stream::<Complex<i16>>(&[0]).expect("CS16 opens"));
    drop(dev.rx_stream::<Complex<i8>>(&[0]).expect("CS8 opens"));
    assert_eq!(list(soapysdr::Direction::Tx), ["CF32", "CS16"]);
}

/// A stream is one channel, as the radio has one: channel 0 named twice is refused at
/// set-up (rxsim used to accept it and fill only the first of the two buffers a client
/// then passes, leaving the second as it was), and channel 1 does not exist.
#[test]
fn a_stream_names_its_one_channel_once() {
    init();
    let dev = soapysdr::Device::new("driver=rxsim,serial=chans").expect("open");
    let twice = dev
        .rx_stream::<Complex<f32>>(&[0, 0])
        .err()
        .expect("channel 0 twice refused");
    assert!(twice.message.contains("one channel per stream"), "{twice}");
    let one = dev
        .rx_stream::<Complex<f32>>(&[1])
        .err()
        .expect("channel 1 refused");
    assert!(one.message.contains("no channel 1"), "{one}");
    drop(
        dev.rx_stream::<Complex<f32>>(&[0])
            .expect("channel 0 opens"),
    );
}
