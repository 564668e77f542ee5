//! Reading recordings: every raw layout through [`IqReader`] (file in the page cache,
//! 64 Ki-sample reads, one thread), and the frequency estimators fed from a file
//! against the same estimators fed in memory, as the live capture feeds them.
//!
//! `cargo bench -p rxnode-dsp --bench iq_read [-- --seconds S]`
use num_complex::Complex;
use rxnode_dsp::{
    freq_cal_estimator, FreqCalConfig, FreqCalMethod, GsmScene, IqFormat, IqReader, LteCell,
    LteScene,
};
use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const BLOCK: usize = 1 << 16;

/// Best MS/s over repeated runs of `f` (each reading `n` samples) within `secs`.
fn best(secs: f64, n: u64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut best = 0.0f64;
    while start.elapsed().as_secs_f64() < secs || best == 0.0 {
        let t = Instant::now();
        f();
        best = best.max(n as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    best
}

/// Read a whole file through the reader; the samples read.
fn read_all(path: &Path, format: IqFormat, buf: &mut [Complex<f32>]) -> u64 {
    let mut r = IqReader::open(path, Some(format)).expect("open");
    let mut total = 0u64;
    loop {
        let k = r.read(buf).expect("read");
        if k == 0 {
            return total;
        }
        black_box(&buf[..k]);
        total += k as u64;
    }
}

/// Write `x` as raw interleaved little-endian float32.
fn write_cf32(path: &Path, x: &[Complex<f32>]) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for c in x {
        f.write_all(&c.re.to_le_bytes()).expect("write");
        f.write_all(&c.im.to_le_bytes()).expect("write");
    }
    f.flush().expect("flush");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: f64 = args
        .iter()
        .position(|a| a == "--seconds")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let dir = tempfile::tempdir().expect("tempdir");
    let n: u64 = 1 << 24;
    let mut buf = vec![Complex::new(0.0f32, 0.0); BLOCK];
    println!(
        "# IqReader: {n} samples from a file in the page cache, {BLOCK}-sample reads, one thread"
    );
    for (format, bytes) in [
        (IqFormat::Cu8, 2),
        (IqFormat::Cs8, 2),
        (IqFormat::Cs16, 4),
        (IqFormat::Cs16Be, 4),
        (IqFormat::Cs32, 8),
        (IqFormat::Cf32, 8),
        (IqFormat::Cf32Be, 8),
        (IqFormat::Cf64, 16),
    ] {
        let path = dir.path().join(format!("x.{}", format.name()));
        // A ramp of bytes: every value, no NaN in any layout's floats (small exponents).
        let data: Vec<u8> = (0..n * bytes).map(|i| (i % 0x3b) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        let _ = read_all(&path, format, &mut buf);
        let r = best(secs, n, || {
            assert_eq!(read_all(&path, format, &mut buf), n);
        });
        println!(
            "read {:8}  {r:8.1} MS/s  ({:.0} MB/s of file)",
            format.name(),
            r * bytes as f64
        );
        std::fs::remove_file(&path).expect("remove");
    }

    println!("# frequency estimators: fed in memory (the live capture's hook) vs read from a cf32 file and fed, one thread");
    for (method, rate, carrier, seconds) in [
        (FreqCalMethod::Gsm, 1e6, 935.2e6, 3.0),
        (FreqCalMethod::Lte, 1.92e6, 1842.5e6, 2.0),
    ] {
        let len = (seconds * rate) as usize;
        let mut x = vec![Complex::new(0.0f32, 0.0); len];
        match method {
            FreqCalMethod::Gsm => GsmScene::new(carrier, carrier, rate, 23.0, 10.0, 5).fill(&mut x),
            FreqCalMethod::Lte => LteScene::new(
                LteCell::new(301, carrier, rate)
                    .ppm(-14.0)
                    .snr_db(Some(0.0))
                    .seed(5),
            )
            .fill(&mut x),
        }
        let path = dir.path().join("scene.cf32");
        write_cf32(&path, &x);
        let cfg = || FreqCalConfig::new(carrier, carrier, rate);
        let mut ppm = (f64::NAN, f64::NAN);
        let live = best(secs, len as u64, || {
            let mut e = freq_cal_estimator(method, cfg()).expect("estimator");
            for b in x.chunks(BLOCK) {
                e.feed(b);
            }
            ppm.0 = e.finish().map_or(f64::NAN, |e| e.ppm);
        });
        let file = best(secs, len as u64, || {
            let mut e = freq_cal_estimator(method, cfg()).expect("estimator");
            let mut r = IqReader::open(&path, Some(IqFormat::Cf32)).expect("open");
            loop {
                let k = r.read(&mut buf).expect("read");
                if k == 0 {
                    break;
                }
                e.feed(&buf[..k]);
            }
            ppm.1 = e.finish().map_or(f64::NAN, |e| e.ppm);
        });
        println!(
            "{:?} at {:.2} MS/s: in memory {live:7.1} MS/s, from file {file:7.1} MS/s \
             ({:.0} % of in-memory; {:.0}× real time); ppm {:+.4} / {:+.4}",
            method,
            rate / 1e6,
            100.0 * file / live,
            file * 1e6 / rate,
            ppm.0,
            ppm.1
        );
    }
}
