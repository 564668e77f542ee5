//! Driver overflows counted from the stream times, and no number made up without them.
use super::*;

/// A source with stream times (as a SoapySDR driver setting `HAS_TIME`): the time
/// of each read's first sample, and at one read an overflow that skipped samples.
struct Timed {
    synth: Synth,
    /// Stream time of sample 0 (ns).
    base_ns: i64,
    /// The time of the last read's first sample, `None` before the first read;
    /// `fixed` instead when set (a driver that never sets the time).
    time: Option<i64>,
    fixed: Option<i64>,
    /// Samples the overflow at `synth.overflow_at` skips.
    skip: u64,
}

impl SampleSource for Timed {
    fn read(&mut self, buf: &mut [Complex<f32>], t: i64) -> Result<ReadOutcome> {
        let first = self.synth.n;
        let r = self.synth.read(buf, t)?;
        match r {
            ReadOutcome::Overflow => self.synth.n += self.skip,
            ReadOutcome::Samples(_) => {
                let ns = (first as f64 / self.synth.fs * 1e9).round() as i64;
                self.time = Some(self.base_ns + ns);
            }
            ReadOutcome::Timeout | ReadOutcome::Silence(_) => {}
        }
        Ok(r)
    }

    fn time_ns(&self) -> Option<i64> {
        self.fixed.or(self.time)
    }
}

fn timed(skip: u64, fixed: Option<i64>) -> Timed {
    let mut synth = Synth::new(2e6, 100e6, 100.1e6, 0.0);
    synth.overflow_at = Some(4);
    synth.max_read = 5000;
    Timed {
        synth,
        base_ns: 1_700_000_000_123_456_789,
        time: None,
        fixed,
        skip,
    }
}

/// An overflow's lost samples are counted from the jump of the stream time
/// (× the rate) when the driver gives times that agree with the sample count.
#[test]
fn an_overflow_is_counted_from_the_stream_times() {
    let mut s = settings(400_000);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let sum = run_capture(timed(12_345, None), &s, &AtomicBool::new(false), None, None).unwrap();
    assert_eq!(sum.overflows, 1);
    assert_eq!(sum.overflow_lost_samples, Some(12_345), "{sum:?}");
    assert_eq!(sum.lost_samples, Some(12_345));
    assert_eq!(sum.dropped_samples, 0);
    assert_eq!(sum.gaps, 1);
    assert_eq!(sum.samples_processed, 400_000);
    assert_eq!(sum.status, CaptureStatus::Partial);
    let k = sum.clkin.as_ref().unwrap();
    assert_eq!(k.status, ClkinStatus::NotMeasured);
    assert_eq!(k.ppm, None);
    assert!(
        k.detail
            .contains("not measured: the stream lost 12345 samples in 1 gap;"),
        "{}",
        k.detail
    );
    assert!(sum.errors.is_empty(), "{:?}", sum.errors);
}

/// Without trusted stream times (none at all, or a time the driver never updates)
/// an overflow's loss is unknown and the result says so: no number is made up.
#[test]
fn an_overflow_without_stream_times_says_its_loss_is_unknown() {
    let mut s = settings(400_000);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let no_times = {
        let mut t = timed(12_345, None);
        t.synth.overflow_at = Some(4);
        t.synth
    };
    for sum in [
        run_capture(no_times, &s, &AtomicBool::new(false), None, None).unwrap(),
        run_capture(
            timed(12_345, Some(0)),
            &s,
            &AtomicBool::new(false),
            None,
            None,
        )
        .unwrap(),
    ] {
        assert_eq!(sum.overflows, 1);
        assert_eq!(sum.overflow_lost_samples, None, "{sum:?}");
        assert_eq!(sum.lost_samples, None);
        assert_eq!(sum.gaps, 1);
        assert_eq!(sum.status, CaptureStatus::Partial);
        assert!(
            sum.errors
                .iter()
                .any(|e| e.contains("1 driver overflow(s); the samples they lost are not counted")),
            "{:?}",
            sum.errors
        );
        let k = sum.clkin.as_ref().unwrap();
        assert_eq!(k.status, ClkinStatus::NotMeasured);
        assert_eq!(k.ppm, None);
        assert!(
            k.detail.contains("unknown number of samples"),
            "{}",
            k.detail
        );
    }
}

/// A stream without loss keeps its CLKIN estimate when it comes with stream times:
/// times that agree are no gap.
#[test]
fn stream_times_without_an_overflow_change_nothing() {
    let mut t = timed(0, None);
    t.synth.overflow_at = None;
    t.synth.cyc = Synth::new(2e6, 100e6, 100.1e6, 1.0e-6).cyc;
    let mut s = settings(400_000);
    s.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 2e6, 2.0));
    let sum = run_capture(t, &s, &AtomicBool::new(false), None, None).unwrap();
    assert_eq!((sum.gaps, sum.lost_samples), (0, Some(0)));
    assert_eq!(sum.status, CaptureStatus::Pass, "{sum:?}");
    let k = sum.clkin.as_ref().unwrap();
    assert!((k.ppm.unwrap() - 1.0).abs() < 0.05, "{k:?}");
}
