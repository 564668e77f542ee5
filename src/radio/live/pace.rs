//! How hard a live capture may push this machine: the pool between the reader
//! and the DSP and writer threads, sized by time within a memory bound, and the
//! quick speed check of the DSP before streaming.
use super::LiveCapture;
use rxnode_dsp::CaptureSettings;
use std::time::Duration;

/// At least this much of the stream fits the pool between the reader and the DSP
/// and writer threads, so a disk or scheduler stall of that length loses nothing —
/// within [`POOL_MAX_BYTES`].
pub(super) const POOL_SECONDS: f64 = 0.5;

/// The pool never takes more memory than this, whatever the rate
/// (docs/decisions.md#live-analysis-at-high-rates): 0.5 s of CF32 up to 100.6 MS/s,
/// 0.5 s of the driver's native CS16 up to 201 MS/s, less time above.
pub(super) const POOL_MAX_BYTES: f64 = 384.0 * 1024.0 * 1024.0;

/// The speed check before a live capture handles this much of the stream
/// (or stops at [`SPEED_CHECK_BUDGET`]).
const SPEED_CHECK_STREAM_S: f64 = 0.1;

/// The speed check's longest run.
const SPEED_CHECK_BUDGET: Duration = Duration::from_millis(200);

/// Environment variable that sets how many threads run a live capture's DSP
/// (1 ..= 8; docs/operator.md#the-dsp-threads-of-a-capture); unset, one per core.
pub(crate) const DSP_THREADS_ENV: &str = "RXNODE_DSP_THREADS";

/// The DSP threads of a live capture: `RXNODE_DSP_THREADS` when it holds a whole
/// number in 1 ..= 8 (anything else is ignored with a warning), else 0 — one per
/// core (docs/architecture.md#the-capture-engine).
pub(super) fn dsp_threads() -> usize {
    let Ok(v) = std::env::var(DSP_THREADS_ENV) else {
        return 0;
    };
    match v.trim().parse::<usize>() {
        Ok(k) if (1..=8).contains(&k) => k,
        _ => {
            tracing::warn!(
                "{DSP_THREADS_ENV}={v:?} ignored: must be a whole number of threads in 1 ..= 8"
            );
            0
        }
    }
}

/// Stream the driver's native CS16 (half the memory, no float conversion in the
/// driver) when analysis alone is asked and 0.5 s of CF32 would not fit the pool.
pub(super) fn wants_native(c: &LiveCapture, has_sink: bool) -> bool {
    !has_sink && c.record.is_none() && POOL_SECONDS * c.sample_rate_hz * 8.0 > POOL_MAX_BYTES
}

/// Pool buffers for 0.5 s of the stream at `rate_hz` in samples of `bytes` each,
/// within [`POOL_MAX_BYTES`] (never fewer than `at_least`).
pub(super) fn pool_blocks(rate_hz: f64, block: usize, bytes: usize, at_least: usize) -> usize {
    let want = (POOL_SECONDS * rate_hz / block as f64).ceil();
    let most = (POOL_MAX_BYTES / (block * bytes) as f64).floor();
    let n = want.min(most);
    if n.is_finite() && n > at_least as f64 {
        n as usize
    } else {
        at_least
    }
}

/// The speed check's notice: `None` when the DSP keeps up with the rate, else what
/// it measured and what the rate needs (docs/decisions.md#live-analysis-speed-check).
pub(crate) fn speed_notice(
    measured: &rxnode_dsp::DspSpeed,
    rate_hz: f64,
    what: &str,
) -> Option<String> {
    if measured.samples_per_s >= rate_hz {
        return None;
    }
    Some(format!(
        "this machine may not keep up: its DSP ({what}) ran at {:.1} MS/s in a {:.2} s check, \
         the sample rate needs {:.1} MS/s; the capture goes ahead and reports any lost samples \
         (status PARTIAL with the count) — lower the rate or the FFT size, or drop the CLKIN check, \
         to lose none",
        measured.samples_per_s / 1e6,
        measured.seconds,
        rate_hz / 1e6,
    ))
}

/// The quick calibration before streaming: warn (never refuse) when this machine's
/// DSP is slower than the rate (docs/decisions.md#live-analysis-speed-check).
pub(super) fn speed_check(settings: &CaptureSettings, native: bool, rate_hz: f64) {
    let what = format!(
        "{}Welch N={}{}",
        if native { "CS16 to float, " } else { "" },
        settings.welch.fft_size,
        if settings.clkin.is_some() {
            " + CLKIN"
        } else {
            ""
        }
    );
    match rxnode_dsp::dsp_speed(
        settings,
        native,
        rate_hz,
        SPEED_CHECK_STREAM_S,
        SPEED_CHECK_BUDGET,
    ) {
        Ok(m) => {
            tracing::debug!(
                "speed check ({what}): {:.1} MS/s over {:.3} s, rate {:.1} MS/s",
                m.samples_per_s / 1e6,
                m.seconds,
                rate_hz / 1e6
            );
            if let Some(n) = speed_notice(&m, rate_hz, &what) {
                tracing::warn!("{n}");
            }
        }
        // The capture's own check of the same settings names what is wrong.
        Err(e) => tracing::debug!("speed check not run: {e}"),
    }
}
