//! `captures`: one entry per `rx_capture` step — what the capture engine measured
//! on the radio, or the step's row when nothing was captured.
use super::StepRow;
use crate::store::calibration::ClockBlock;
use rxnode_dsp::{CaptureStatus, CaptureSummary, ClkinReport, IqFileRecord, Peak};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One entry of `captures`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum CaptureEntry {
    /// A capture that ran (PASS, PARTIAL or FAIL).
    Captured(Box<CaptureRecord>),
    /// A step that captured nothing.
    NotCaptured(StepRow),
    /// What another build wrote in another shape: kept as it is, bound by the
    /// rules every capture keeps (statuses, relative IQ paths, hashes).
    #[schemars(schema_with = "super::untyped::other_capture")]
    Other(Value),
}

/// What one capture did and found (docs/protocol.md#5-results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureRecord {
    /// The settings the radio read back.
    pub(crate) actual: CaptureActual,
    /// Welch segments averaged.
    pub(crate) averages: u64,
    /// `true` when the capture was cancelled (Ctrl-C).
    pub(crate) cancelled: bool,
    /// The strongest level in the span around the centre the peak search skips, when
    /// it stands above the peak threshold: a carrier at the tuned frequency or the
    /// radio's DC offset, dBFS per bin (docs/operator.md#peaks-and-the-noise-floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) centre_carrier_dbfs: Option<f64>,
    /// Half the span around the centre the peak search skips, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) centre_excluded_hz: Option<f64>,
    /// `true` only when every requested sample arrived and was processed without loss.
    pub(crate) clean: bool,
    /// Fraction of clipped samples.
    pub(crate) clipped_fraction: f64,
    /// The CLKIN check, when a reference tone was given.
    pub(crate) clkin: Option<ClkinReport>,
    /// How good the frequency axis is (docs/protocol.md#clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clock: Option<ClockBlock>,
    /// The radio.
    pub(crate) device: CaptureDevice,
    /// Samples received but skipped because the consumer was behind.
    pub(crate) dropped_samples: u64,
    /// Wall-clock duration, s.
    pub(crate) duration_s: f64,
    /// Errors met on the way.
    pub(crate) errors: Vec<String>,
    /// FFT size.
    #[schemars(range(min = 1, max = 1048576))]
    pub(crate) fft_size: usize,
    /// Runs of lost samples with analysed samples on both sides.
    pub(crate) gaps: u64,
    /// Files recorded.
    #[schemars(length(max = 8))]
    pub(crate) iq_files: Vec<IqFileRecord>,
    /// Samples lost in all; `null` when an overflow's loss could not be counted.
    pub(crate) lost_samples: Option<u64>,
    /// Mean sample power, dBFS; `null` when nothing was analysed or every sample is
    /// zero.
    pub(crate) mean_power_dbfs: Option<f64>,
    /// The mean noise power per bin, dBFS/bin, from the median bin corrected for the
    /// number of averages (docs/operator.md#peaks-and-the-noise-floor); `null` when
    /// it cannot be measured (nothing analysed, fewer samples than one FFT, or the
    /// median bin has no power: then `errors` says why and the capture FAILs).
    pub(crate) noise_floor_db: Option<f64>,
    /// Samples lost in driver overflows; `null` when not countable.
    pub(crate) overflow_lost_samples: Option<u64>,
    /// Driver overflows.
    pub(crate) overflows: u64,
    /// How far above the floor a peak must stand, dB: the larger of `min_snr_db` and
    /// the level noise alone reaches by chance with this many averages
    /// (docs/operator.md#peaks-and-the-noise-floor); absent without a floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) peak_threshold_db: Option<f64>,
    /// Strongest distinct peaks.
    #[schemars(length(max = 64))]
    pub(crate) peaks: Vec<Peak>,
    /// The decimated PSD, dBFS per FFT bin max-held over each point's bins
    /// (`null`: not a finite level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) psd_db: Option<Vec<Option<f64>>>,
    /// Frequency of the first PSD point, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) psd_start_hz: Option<f64>,
    /// Spacing of the PSD points, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) psd_step_hz: Option<f64>,
    /// Why recording stopped early (disk budget, disk full …).
    pub(crate) recording_error: Option<String>,
    /// The settings asked for.
    pub(crate) requested: CaptureRequested,
    /// Samples analysed (and recorded): received − dropped.
    pub(crate) samples_processed: u64,
    /// Samples the radio delivered.
    pub(crate) samples_received: u64,
    /// Samples asked for.
    pub(crate) samples_requested: u64,
    /// Reads that returned fewer samples than asked.
    pub(crate) short_reads: u64,
    /// The verdict.
    pub(crate) status: CaptureStatus,
    /// Why the capture ended: `complete`, `cancelled`, `deadline`, `timeouts`,
    /// `stalled`, `source error`.
    pub(crate) stop_reason: String,
    /// Reads that timed out.
    pub(crate) timeouts: u64,
}

/// The radio a capture ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureDevice {
    /// The device args the step gave.
    pub(crate) args: String,
    /// SoapySDR driver key.
    pub(crate) driver: String,
    /// Hardware key (model), when reported.
    pub(crate) hardware_key: Option<String>,
    /// The SoapyRemote server the radio is reached through; absent on this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote: Option<String>,
    /// Serial number, when reported.
    pub(crate) serial: Option<String>,
}

/// The settings a capture asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureRequested {
    /// Antenna.
    pub(crate) antenna: Option<String>,
    /// Analog bandwidth, Hz.
    pub(crate) bandwidth_hz: Option<f64>,
    /// Clock source to select.
    pub(crate) clock_source: Option<String>,
    /// Length, s.
    pub(crate) duration_s: f64,
    /// Centre frequency, Hz.
    pub(crate) frequency_hz: f64,
    /// The gain asked for.
    pub(crate) gain_db: RequestedGain,
    /// Sample rate, S/s.
    pub(crate) sample_rate_hz: f64,
}

/// A requested gain: dB per gain element, or one overall figure (`null`: the
/// radio's default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum RequestedGain {
    /// dB per gain element (`LNA` → 24).
    Elements(BTreeMap<String, f64>),
    /// One overall figure, dB.
    Total(Option<f64>),
}

/// The settings a radio read back, each gain element's included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CaptureActual {
    /// Frequency, rate, gain, bandwidth, antenna and clock source as read back.
    #[serde(flatten)]
    pub(crate) settings: rxnode_hw::ActualSettings,
    /// Each gain element's gain as read back, dB.
    pub(crate) gain_elements_db: BTreeMap<String, f64>,
}

/// What the live capture layer fills in beside the engine's summary.
pub(crate) struct Described {
    /// The radio.
    pub(crate) device: CaptureDevice,
    /// What was asked.
    pub(crate) requested: CaptureRequested,
    /// What the radio had.
    pub(crate) actual: CaptureActual,
}

impl Described {
    /// Fill in the engine's summary, which carries these parts as JSON values.
    pub(crate) fn fill(self, summary: &mut CaptureSummary) {
        let value = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
        summary.device = value(serde_json::to_value(self.device));
        summary.requested = value(serde_json::to_value(self.requested));
        summary.actual = value(serde_json::to_value(self.actual));
    }
}

impl CaptureRecord {
    /// The record of a capture from the engine's summary, whose `device`,
    /// `requested`, `actual` and `clock` the live capture layer filled in
    /// ([`Described`]); `None` when they do not read as those types (a float
    /// the radio reported as NaN, written `null`).
    pub(crate) fn of(summary: &CaptureSummary) -> Option<CaptureRecord> {
        let clock = match &summary.clock {
            Some(c) => Some(typed(c)?),
            None => None,
        };
        let psd = summary.psd.as_ref();
        Some(CaptureRecord {
            actual: typed(&summary.actual)?,
            averages: summary.averages,
            cancelled: summary.cancelled,
            centre_carrier_dbfs: summary.centre_carrier_dbfs,
            centre_excluded_hz: Some(summary.centre_excluded_hz),
            clean: summary.clean,
            clipped_fraction: summary.clipped_fraction,
            clkin: summary.clkin.clone(),
            clock,
            device: typed(&summary.device)?,
            dropped_samples: summary.dropped_samples,
            duration_s: summary.duration_s,
            errors: summary.errors.clone(),
            fft_size: summary.fft_size,
            gaps: summary.gaps,
            iq_files: summary.iq_files.clone(),
            lost_samples: summary.lost_samples,
            mean_power_dbfs: summary.mean_power_dbfs,
            noise_floor_db: summary.noise_floor_db,
            overflow_lost_samples: summary.overflow_lost_samples,
            overflows: summary.overflows,
            peak_threshold_db: summary.peak_threshold_db,
            peaks: summary.peaks.clone(),
            psd_db: psd.map(|p| {
                p.db.iter()
                    .map(|x| Some(f64::from(*x)).filter(|x| x.is_finite()))
                    .collect()
            }),
            psd_start_hz: psd.map(|p| p.start_hz),
            psd_step_hz: psd.map(|p| p.step_hz),
            recording_error: summary.recording_error.clone(),
            requested: typed(&summary.requested)?,
            samples_processed: summary.samples_processed,
            samples_received: summary.samples_received,
            samples_requested: summary.samples_requested,
            short_reads: summary.short_reads,
            status: summary.status,
            stop_reason: summary.stop_reason.clone(),
            timeouts: summary.timeouts,
        })
    }
}

impl CaptureEntry {
    /// The JSON of an entry in another build's shape (the tests' hand-made
    /// captures).
    #[cfg(test)]
    pub(crate) fn other_mut(&mut self) -> &mut Value {
        match self {
            CaptureEntry::Other(v) => v,
            _ => panic!("not a capture in another shape: {self:?}"),
        }
    }
}

/// A part the live capture layer filled in, read back as its type.
/// `v` as `T`, when it reads as one.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
    serde_json::from_value(v.clone()).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use num_complex::Complex;
    use rxnode_dsp::{run_capture, CaptureSettings, ClkinConfig, ReadOutcome, WelchConfig};

    /// A tone 100.1 kHz above the centre with a little noise, as a live stream.
    struct Tone {
        n: u64,
        left: u64,
    }

    impl rxnode_dsp::SampleSource for Tone {
        fn read(
            &mut self,
            buf: &mut [Complex<f32>],
            _: i64,
        ) -> Result<ReadOutcome, rxnode_dsp::Error> {
            let k = buf.len().min(self.left as usize);
            for x in &mut buf[..k] {
                let t = self.n as f64 / 1e6;
                let ph = 2.0 * std::f64::consts::PI * 100.1e3 * t;
                let noise = ((self.n.wrapping_mul(2862933555777941757) >> 40) as f64 / 16777216.0
                    - 0.5)
                    * 1e-3;
                *x = Complex::new((0.1 * ph.cos() + noise) as f32, (0.1 * ph.sin()) as f32);
                self.n += 1;
            }
            self.left -= k as u64;
            Ok(ReadOutcome::Samples(k))
        }

        fn is_live(&self) -> bool {
            false
        }
    }

    /// A real summary of the capture engine, filled in as the live layer fills it.
    pub(crate) fn summary() -> CaptureSummary {
        let mut welch = WelchConfig::new(1024, 1e6);
        welch.center_hz = Some(100e6);
        let mut settings = CaptureSettings::new(200_000, welch);
        settings.clkin = Some(ClkinConfig::new(100.1e6, 100e6, 1e6, 2.0));
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let mut s = run_capture(
            Tone {
                n: 0,
                left: 200_000,
            },
            &settings,
            &cancel,
            None,
            None,
        )
        .expect("the capture runs");
        s.iq_files.push(IqFileRecord {
            path: ".local/rx_iq/T/capture-1.sigmf-data".into(),
            format: "sigmf-data".into(),
            bytes: 1_600_000,
            sha256: "ab".repeat(32),
            partial: false,
        });
        Described {
            device: CaptureDevice {
                args: "driver=rxsim,serial=S1".into(),
                driver: "rxsim".into(),
                hardware_key: Some("rxsim".into()),
                remote: None,
                serial: Some("S1".into()),
            },
            requested: CaptureRequested {
                antenna: None,
                bandwidth_hz: None,
                clock_source: Some("external".into()),
                duration_s: 0.2,
                frequency_hz: 100e6,
                gain_db: RequestedGain::Elements([("LNA".to_owned(), 24.0)].into()),
                sample_rate_hz: 1e6,
            },
            actual: CaptureActual {
                settings: rxnode_hw::ActualSettings {
                    frequency_hz: 100e6,
                    sample_rate_hz: 1e6,
                    gain_db: 24.0,
                    bandwidth_hz: Some(1.5e6),
                    antenna: Some("RX".into()),
                    clock_source: Some("external".into()),
                },
                gain_elements_db: [("LNA".to_owned(), 24.0)].into(),
            },
        }
        .fill(&mut s);
        s.clock = Some(value(&ClockBlock {
            last_measurement: None,
            ppm_correction_applied: Some(0.25),
            ppm_correction_from: Some(crate::store::calibration::CorrectionFrom::Calibration),
            radio: Some("driver=rxsim,serial=S1".into()),
            source: Some("external".into()),
        }));
        s
    }

    fn value<T: Serialize>(x: &T) -> Value {
        serde_json::to_value(x).expect("value")
    }

    /// How the entry was written when it was a JSON value: the summary's value,
    /// its PSD trace as three flat fields.
    fn as_value_before(s: &CaptureSummary) -> Value {
        let mut v = serde_json::to_value(s).expect("value");
        if let (Some(obj), Some(p)) = (v.as_object_mut(), s.psd.as_ref()) {
            obj.insert("psd_db".into(), serde_json::json!(p.db));
            obj.insert("psd_start_hz".into(), serde_json::json!(p.start_hz));
            obj.insert("psd_step_hz".into(), serde_json::json!(p.step_hz));
            obj.remove("psd");
        }
        v
    }

    /// The typed record is written byte for byte as the value was (keys sorted,
    /// the PSD's `f32` levels as the value widened them), and what was written
    /// reads back as the typed record.
    #[test]
    fn a_capture_record_is_written_as_its_value_was_and_reads_back_typed() {
        #[derive(Serialize)]
        struct Section<'a>(
            #[serde(serialize_with = "crate::result::sections::sorted")] &'a [CaptureEntry],
        );
        let s = summary();
        assert!(
            s.clkin.is_some() && s.psd.is_some() && !s.peaks.is_empty(),
            "{s:?}"
        );
        let record = CaptureRecord::of(&s).expect("the summary reads as its types");
        let typed = vec![CaptureEntry::Captured(Box::new(record))];
        let now = serde_json::to_string_pretty(&Section(&typed)).expect("typed");
        let before = serde_json::to_string_pretty(&vec![as_value_before(&s)]).expect("value");
        assert_eq!(now, before);
        // serde_json parses a float to within one unit in the last place, so the
        // read-back record is compared in its exact fields.
        let back: Vec<CaptureEntry> = serde_json::from_str(&before).expect("reads back");
        match (&back[0], &typed[0]) {
            (CaptureEntry::Captured(b), CaptureEntry::Captured(t)) => {
                assert_eq!(
                    (&b.device, &b.clock, &b.iq_files),
                    (&t.device, &t.clock, &t.iq_files)
                );
                assert_eq!(b.samples_received, t.samples_received);
                assert_eq!(
                    b.psd_db.as_ref().map(Vec::len),
                    t.psd_db.as_ref().map(Vec::len)
                );
            }
            (b, _) => panic!("not read as a capture record: {b:?}"),
        }
        // A step that captured nothing is its row, as before.
        let row = vec![CaptureEntry::NotCaptured(StepRow::new(
            1,
            crate::result::Status::Blocked,
            "no radio".into(),
        ))];
        assert_eq!(
            serde_json::to_string(&Section(&row)).expect("row"),
            r#"[{"detail":"no radio","status":"BLOCKED","step":2}]"#
        );
    }
}
