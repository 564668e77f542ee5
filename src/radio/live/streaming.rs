//! The stream of one live capture run through the capture engine, with a progress
//! bar beside it when asked.
use super::BlockSink;
use rxnode_dsp::{
    run_capture, run_capture_native, run_capture_with_hook, CaptureSettings, CaptureSummary,
    IqWriter,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The RX stream: CF32, or the driver's native CS16 or CS8 when recording it.
pub(super) enum Stream {
    F32(rxnode_hw::RxStream),
    I16(rxnode_hw::RxStreamCi16),
    I8(rxnode_hw::RxStreamNative<num_complex::Complex<i8>>),
}

/// One run of the capture engine over a stream.
pub(super) struct Streaming<'a, 'k> {
    pub(super) stream: Stream,
    pub(super) settings: &'a CaptureSettings,
    pub(super) cancel: &'a AtomicBool,
    pub(super) recorder: Option<IqWriter>,
    /// Draw a progress bar on stderr.
    pub(super) bar_on: bool,
    /// An analysis fed every block.
    pub(super) sink: Option<&'k mut dyn BlockSink>,
}

impl Streaming<'_, '_> {
    /// Run the engine, with a progress bar beside it when asked.
    pub(super) fn run(self) -> rxnode_dsp::Result<CaptureSummary> {
        let samples = self.settings.samples;
        let progress = AtomicU64::new(0);
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            if self.bar_on {
                s.spawn(|| progress_bar(samples, &progress, &done));
            }
            let r = match (self.stream, self.sink) {
                (Stream::F32(st), Some(k)) => run_capture_with_hook(
                    st,
                    self.settings,
                    self.cancel,
                    Some(&progress),
                    self.recorder,
                    &mut |x| k.feed(x),
                ),
                (Stream::F32(st), None) => run_capture(
                    st,
                    self.settings,
                    self.cancel,
                    Some(&progress),
                    self.recorder,
                ),
                (Stream::I16(st), _) => run_capture_native(
                    st,
                    self.settings,
                    self.cancel,
                    Some(&progress),
                    self.recorder,
                ),
                (Stream::I8(st), _) => run_capture_native(
                    st,
                    self.settings,
                    self.cancel,
                    Some(&progress),
                    self.recorder,
                ),
            };
            done.store(true, Ordering::Relaxed);
            r
        })
    }
}

/// A progress bar of `progress` out of `samples` until `done`.
fn progress_bar(samples: u64, progress: &AtomicU64, done: &AtomicBool) {
    let bar = indicatif::ProgressBar::new(samples);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} capture [{bar:40}] {percent:>3}% {elapsed}/{duration}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    while !done.load(Ordering::Relaxed) {
        bar.set_position(progress.load(Ordering::Relaxed));
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}
