//! How fast the bundled rxsim module generates samples with `pace=0` (issue 3:
//! at least 100 MS/s on one core, so it never limits a 61.44 MS/s test).
//!
//! `cargo bench -p rxnode-hw --bench rxsim_gen` prints MS/s through the whole
//! path the capture engine uses (libSoapySDR readStream into a CF32 buffer).
use num_complex::Complex;
use rxnode_dsp::{ReadOutcome, SampleSource};
use rxnode_hw::{use_sim, RxConfig, RxRadio};
use std::time::{Duration, Instant};

fn main() -> Result<(), rxnode_hw::Error> {
    use_sim()?;
    for (label, block) in [
        ("16384-sample reads", 16_384usize),
        ("262144-sample reads", 262_144),
    ] {
        let args = format!("driver=rxsim,serial=bench{block},pace=0,tone_hz=100.1e6");
        let mut radio = RxRadio::open(&args)?;
        radio.configure(&RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: 61.44e6,
            ..RxConfig::default()
        })?;
        let mut stream = radio.rx_stream()?;
        let mut buf = vec![Complex::new(0.0f32, 0.0); block];
        // Warm up (tables, page faults).
        for _ in 0..20 {
            stream.read(&mut buf, 1_000_000)?;
        }
        let t = Instant::now();
        let mut total = 0u64;
        while t.elapsed() < Duration::from_secs(2) {
            if let ReadOutcome::Samples(n) = stream.read(&mut buf, 1_000_000)? {
                total += n as u64;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "rxsim generation (CF32, pace=0, {label}): {:.1} MS/s ({total} samples in {secs:.2} s)",
            total as f64 / secs / 1e6
        );
    }
    Ok(())
}
