//! How fast the bundled rxsim module generates samples with `pace=0`: at
//! least 100 MS/s on one core, so it never limits a 61.44 MS/s test, and
//! cheap enough that SoapySDRServer's stream thread, which runs it, keeps up with
//! 61.44 MS/s over UDP.
//!
//! `cargo bench -p rxnode-hw --bench rxsim_gen` prints MS/s and ns per sample through
//! the whole path a client uses (libSoapySDR readStream), for CF32 and the native
//! CS16, with a tone in band, at three read sizes: 357 samples (what SoapySDRServer
//! asks for per 1452-byte datagram), 16384 (rxsim's MTU) and 262144.
use num_complex::Complex;
use rxnode_dsp::{NativeSource, ReadOutcome, SampleSource};
use rxnode_hw::{use_sim, RxConfig, RxRadio, RxStream, RxStreamCi16};
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const READS: [(&str, usize); 3] = [
    ("357-sample reads", 357),
    ("16384-sample reads", 16_384),
    ("262144-sample reads", 262_144),
];

fn main() -> Result<()> {
    use_sim()?;
    for (label, block) in READS {
        let mut radio = open(&format!("cf{block}"))?;
        let mut stream = radio.rx_stream()?;
        let mut buf = vec![Complex::new(0.0f32, 0.0); block];
        report("CF32", label, measure(|| cf32(&mut stream, &mut buf))?);
    }
    for (label, block) in READS {
        let mut radio = open(&format!("cs{block}"))?;
        let mut stream = radio.rx_stream_ci16()?;
        let mut buf = vec![Complex::new(0i16, 0); block];
        report("CS16", label, measure(|| cs16(&mut stream, &mut buf))?);
    }
    Ok(())
}

fn open(serial: &str) -> Result<RxRadio> {
    let args = format!("driver=rxsim,serial=bench-{serial},pace=0,tone_hz=100.1e6");
    let mut radio = RxRadio::open(&args)?;
    radio.configure(&RxConfig {
        frequency_hz: 100e6,
        sample_rate_hz: 61.44e6,
        ..RxConfig::default()
    })?;
    Ok(radio)
}

fn cf32(s: &mut RxStream, buf: &mut [Complex<f32>]) -> Result<usize> {
    Ok(match s.read(buf, 1_000_000)? {
        ReadOutcome::Samples(n) => n,
        _ => 0,
    })
}

fn cs16(s: &mut RxStreamCi16, buf: &mut [Complex<i16>]) -> Result<usize> {
    Ok(match s.read_native(buf, 1_000_000)? {
        ReadOutcome::Samples(n) => n,
        _ => 0,
    })
}

/// Warm up (tables, page faults), then read for 2 s: (samples, seconds).
fn measure(mut read: impl FnMut() -> Result<usize>) -> Result<(u64, f64)> {
    for _ in 0..20 {
        read()?;
    }
    let t = Instant::now();
    let mut total = 0u64;
    while t.elapsed() < Duration::from_secs(2) {
        total += read()? as u64;
    }
    Ok((total, t.elapsed().as_secs_f64()))
}

fn report(format: &str, label: &str, (total, secs): (u64, f64)) {
    let n = total.max(1) as f64;
    println!(
        "rxsim generation ({format}, pace=0, {label}): {:.1} MS/s, {:.2} ns/sample ({total} samples in {secs:.2} s)",
        n / secs / 1e6,
        secs * 1e9 / n
    );
}
