//! What hw's test binaries share: the process set-up (rxsim's event log in a temp
//! folder of this process, then `use_sim`, once, before any test touches SoapySDR),
//! the lines that log holds for one radio, a radio opened and configured, and an
//! exact number of samples read from a stream.
//!
//! Each binary stays a process of its own (SoapySDR loads the module set once per
//! process, and each binary asserts on exactly what its own event log records);
//! only the code is shared. Not every binary uses every helper.
#![allow(dead_code)]

use num_complex::Complex;
use rxnode_dsp::{ReadOutcome, SampleSource};
use rxnode_hw::{use_sim, RxConfig, RxRadio};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The process's test environment: a temp folder and rxsim's event log in it.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub log: PathBuf,
}

/// Points `RXSIM_EVENT_LOG` at a log of this process and installs rxsim, once.
pub fn init() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("events.log");
        std::env::set_var("RXSIM_EVENT_LOG", &log);
        use_sim().expect("install rxsim");
        Env { dir, log }
    })
}

/// The whole event log of this process (empty before anything was logged).
pub fn log_text() -> String {
    std::fs::read_to_string(&init().log).unwrap_or_default()
}

/// The event-log lines of the radio `serial` (a word `serial=<serial>`).
pub fn log_lines(serial: &str) -> Vec<String> {
    let tag = format!("serial={serial}");
    log_text()
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == tag))
        .map(str::to_owned)
        .collect()
}

/// An rxsim radio opened with `args` and configured with `cfg`.
pub fn open_configured(args: &str, cfg: &RxConfig) -> RxRadio {
    init();
    let mut r = RxRadio::open(args).expect("open rxsim");
    r.configure(cfg).expect("configure");
    r
}

/// Exactly `n` samples from `src` (1 s timeout per read; anything but samples fails).
pub fn read_exact(src: &mut impl SampleSource, n: usize) -> Vec<Complex<f32>> {
    let mut out = vec![Complex::new(0.0, 0.0); n];
    let mut got = 0;
    while got < n {
        match src.read(&mut out[got..], 1_000_000).expect("read") {
            ReadOutcome::Samples(k) => got += k,
            other => panic!("unexpected {other:?}"),
        }
    }
    out
}
