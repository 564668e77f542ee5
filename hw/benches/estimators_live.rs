//! Every estimator on one live stream: the paced rxsim radio at 61.44 MS/s (samples appear
//! in real time) through the whole capture engine — reader thread, bounded pool (0.5 s of
//! samples, as rxnode sizes it for a live capture), Welch
//! (N = 2048, 50 %) and the CLKIN estimator on the consumer — with the GSM FCCH and LTE
//! PSS/SSS frequency-calibration estimators fed every block on the same thread (the
//! engine's block hook). Prints samples requested / processed, overflows and dropped
//! samples (the target: 0 lost), each estimate, the estimators' heap and the process's
//! peak heap and peak RSS.
//!
//! `cargo bench -p rxnode-hw --bench estimators_live [-- SECONDS [RATE]]` (default 3 s at
//! 61.44 MS/s). Two runs: the radio sees an LTE cell at the centre (1842.5 MHz, −6 dB in
//! its 1.08 MHz, PCI 301), a CLKIN tone 5 MHz above and a radio error of +2.5 ppm; the
//! second adds rxsim's GSM BCCH carrier 12.5 MHz below (10 dB), whose generator costs
//! rxsim's reader thread a trigonometric pair per sample.
use rxnode_dsp::{
    run_capture_with_hook, CaptureSettings, ClkinConfig, FcchEstimator, FreqCalConfig,
    FreqCalEstimator, FreqCalMethod, WelchConfig,
};
use rxnode_hw::{use_sim, RxConfig, RxRadio};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The system allocator, counting the bytes held and their high-water mark.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters
// only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            let now = HELD.fetch_add(new, Ordering::Relaxed) + new;
            PEAK.fetch_max(now, Ordering::Relaxed);
            HELD.fetch_sub(l.size(), Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const FC: f64 = 1842.5e6;
const GSM: f64 = 1830e6;
const TONE: f64 = FC + 5e6;
const PPM: f64 = 2.5;

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// A line of `/proc/self/status` (`VmHWM`: peak RSS), if readable.
fn status(key: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(seconds: f64, rate: f64, with_gsm: bool) -> Result<(), Box<dyn std::error::Error>> {
    let gsm_arg = if with_gsm {
        format!(",gsm_freq={GSM},gsm_snr_db=10")
    } else {
        String::new()
    };
    let mut radio = RxRadio::open(&format!(
        "driver=rxsim,serial=est{},pace=1,ppm={PPM},tone_hz={TONE},\
         lte_freq={FC},lte_pci=301,lte_snr_db=-6{gsm_arg}",
        u8::from(with_gsm)
    ))?;
    let actual = radio.configure(&RxConfig {
        frequency_hz: FC,
        sample_rate_hz: rate,
        ..RxConfig::default()
    })?;
    let (fc, fs) = (actual.frequency_hz, actual.sample_rate_hz);
    let samples = (seconds * fs).round() as u64;
    let mut w = WelchConfig::new(2048, fs);
    w.center_hz = Some(fc);
    let mut s = CaptureSettings::new(samples, w);
    s.block_samples = 1 << 16;
    // As rxnode sizes it for a live capture: at least 0.5 s of samples.
    s.pool_blocks = ((0.5 * fs / s.block_samples as f64).ceil() as usize).clamp(64, 4096);
    s.deadline = Some(Duration::from_secs_f64(seconds * 3.0 + 5.0));
    s.clkin = Some(ClkinConfig::new(TONE, fc, fs, 5.0));
    let before = HELD.load(Ordering::Relaxed);
    let mut gsm = FcchEstimator::new(FreqCalConfig::new(GSM, fc, fs))?;
    let mut lte =
        rxnode_dsp::freq_cal_estimator(FreqCalMethod::Lte, FreqCalConfig::new(FC, fc, fs))?;
    let built = HELD.load(Ordering::Relaxed).saturating_sub(before);
    PEAK.store(HELD.load(Ordering::Relaxed), Ordering::Relaxed);
    let stream = radio.rx_stream()?;
    let sum = run_capture_with_hook(stream, &s, &AtomicBool::new(false), None, None, &mut |b| {
        gsm.feed(b);
        lte.feed(b);
    })?;
    let g = gsm.finish();
    let l = lte.finish();
    let peak = PEAK.load(Ordering::Relaxed);
    let short = sum.samples_requested.saturating_sub(sum.samples_processed);
    println!(
        "## {:.2} MS/s, {seconds} s: Welch 2048 + CLKIN + GSM + LTE on the consumer{} (load {})",
        fs / 1e6,
        if with_gsm {
            ", rxsim generating the GSM carrier too"
        } else {
            ""
        },
        load()
    );
    println!(
        "samples {} of {} processed; {} overflows (gaps in the radio stream: the reader fell \
         behind), {} dropped (the consumer fell behind the pool), {short} short: {}",
        sum.samples_processed,
        sum.samples_requested,
        sum.overflows,
        sum.dropped_samples,
        if short == 0 && sum.overflows == 0 && sum.dropped_samples == 0 {
            "0 lost, PASS"
        } else {
            "SAMPLES LOST"
        }
    );
    match &sum.clkin {
        Some(c) => println!("CLKIN: {:?}: {}", c.status, c.detail),
        None => println!("CLKIN: no report"),
    }
    match g {
        Ok(e) => println!(
            "GSM: {:+.4} ± {:.4} ppm (radio at {PPM:+}), {} bursts used, {}",
            e.ppm,
            e.uncertainty_ppm,
            e.evidence.detections.iter().filter(|d| d.used).count(),
            e.cell
        ),
        Err(e) => println!("GSM: {e}"),
    }
    match l {
        Ok(e) => println!(
            "LTE: {:+.6} ± {:.1e} ppm (radio at {PPM:+}), {}",
            e.ppm, e.uncertainty_ppm, e.cell
        ),
        Err(e) => println!("LTE: {e}"),
    }
    println!(
        "heap: GSM + LTE estimators as built {:.1} MB; the process's peak during the capture \
         {:.1} MB (with the engine's {:.1} MB sample pool); peak RSS {} (the pool's pages \
         count once touched)",
        mb(built),
        mb(peak),
        mb(s.block_samples * s.pool_blocks * 8),
        status("VmHWM:")
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use_sim()?;
    let nums: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let seconds = nums.first().copied().unwrap_or(3.0);
    let rate = nums.get(1).copied().unwrap_or(61.44e6);
    println!(
        "machine: {} CPU(s); load average {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    run(seconds, rate, false)?;
    run(seconds, rate, true)?;
    Ok(())
}
