//! Physical sanity of a step's values: numbers that are positive and finite,
//! device args that name something, a reference tone inside the captured band.
use super::{ClkinCompareStep, ClkinSpec, RxCaptureStep, TxToneStep};
use crate::error::Issue;

/// The checks of one plan step: step `n` of the plan whose fence is on `line`.
pub(super) struct StepCheck<'a> {
    /// The line of the block's fence (every step issue is reported there).
    pub(super) line: usize,
    /// The 1-based step number.
    pub(super) n: usize,
    /// Where the issues go.
    pub(super) issues: &'a mut Vec<Issue>,
}

impl StepCheck<'_> {
    /// Record one problem of this step.
    pub(super) fn push(&mut self, field: Option<&str>, message: impl Into<String>) {
        self.issues
            .push(Issue::new(Some(self.line), field, message));
    }

    fn positive_finite(&mut self, v: f64, field: &str) {
        if !(v.is_finite() && v > 0.0) {
            let n = self.n;
            self.push(
                Some(field),
                format!("rx-plan step {n}: {field} must be a positive finite number, got {v}"),
            );
        }
    }

    /// A positive value outside what any radio tunes or samples: a number
    /// written in MHz or MS/s where the plan takes Hz and S/s.
    pub(super) fn plausible(&mut self, v: f64, field: &str, q: crate::Quantity) {
        if let Some(why) = q.implausible(v) {
            let n = self.n;
            let hint = if v < q.bounds().0 {
                format!("; plan values are in Hz and S/s ({v} M is {})", v * 1e6)
            } else {
                String::new()
            };
            self.push(
                Some(field),
                format!("rx-plan step {n}: {field} {why}{hint}"),
            );
        }
    }

    fn finite(&mut self, v: f64, field: &str) {
        if !v.is_finite() {
            let n = self.n;
            self.push(
                Some(field),
                format!("rx-plan step {n}: {field} must be finite, got {v}"),
            );
        }
    }

    /// A step that streams for `duration_s` at `sample_rate_hz` moves at least one
    /// sample: a tone of no sample would key the transmitter and send nothing.
    fn at_least_one_sample(&mut self, duration_s: f64, sample_rate_hz: f64) {
        let samples = duration_s * sample_rate_hz;
        if samples.is_finite() && duration_s > 0.0 && sample_rate_hz > 0.0 && samples < 1.0 {
            let n = self.n;
            self.push(
                Some("duration_s"),
                format!(
                    "rx-plan step {n}: duration_s {duration_s} at sample_rate_hz {sample_rate_hz} \
                     is less than one sample"
                ),
            );
        }
    }

    /// Device args that are not blank and hold no control character.
    pub(super) fn device(&mut self, d: &str) {
        let n = self.n;
        if d.trim().is_empty() {
            self.push(
                Some("device"),
                format!("rx-plan step {n}: device args must not be empty"),
            );
        }
        if d.chars().any(char::is_control) {
            self.push(
                Some("device"),
                format!("rx-plan step {n}: device args contain control characters"),
            );
        }
        // A plan comes from the branch: it may not name a file on this laptop for a
        // radio to read (the simulator's `replay=FILE`); replaying a recording is the
        // operator's choice on the command line.
        if let Some(key) = d
            .split(',')
            .filter_map(|kv| kv.split('=').next())
            .map(str::trim)
            .find(|k| *k == "replay" || k.starts_with("replay_"))
        {
            self.push(
                Some("device"),
                format!(
                    "rx-plan step {n}: device args may not hold {key:?}: a task cannot name a file on this node for a radio to read (replay a recording with `--device` on the command line)"
                ),
            );
        }
    }

    /// An `rx_capture` step's values.
    pub(super) fn rx_capture(&mut self, s: &RxCaptureStep) {
        let n = self.n;
        self.device(&s.device);
        self.positive_finite(s.frequency_hz, "frequency_hz");
        self.positive_finite(s.sample_rate_hz, "sample_rate_hz");
        self.plausible(s.frequency_hz, "frequency_hz", crate::Quantity::Frequency);
        self.plausible(
            s.sample_rate_hz,
            "sample_rate_hz",
            crate::Quantity::SampleRate,
        );
        self.positive_finite(s.duration_s, "duration_s");
        self.at_least_one_sample(s.duration_s, s.sample_rate_hz);
        if let Some(g) = &s.gain_db {
            for p in g.problems() {
                self.push(Some("gain_db"), format!("rx-plan step {n}: {p}"));
            }
        }
        if let Some(b) = s.bandwidth_hz {
            self.positive_finite(b, "bandwidth_hz");
        }
        if let (Some(f), false) = (s.record_format, s.record_iq) {
            self.push(
                Some("record_format"),
                format!(
                    "rx-plan step {n}: record_format {} needs \"record_iq\": true",
                    serde_json::to_string(&f).unwrap_or_default()
                ),
            );
        }
        if let Some(f) = s.fft_size {
            if !crate::sweep::fft_size_ok(f) {
                self.push(
                    Some("fft_size"),
                    format!(
                        "rx-plan step {n}: fft_size {f} must be in {}..={}",
                        crate::sweep::FFT_SIZE_MIN,
                        crate::sweep::FFT_SIZE_MAX
                    ),
                );
            }
        }
        if let Some(c) = &s.clkin {
            self.clkin(c, s);
        }
        if let Some(m) = s.max_peaks {
            if !(1..=super::MAX_PEAKS_LIMIT).contains(&m) {
                self.push(
                    Some("max_peaks"),
                    format!(
                        "rx-plan step {n}: max_peaks {m} must be in 1..={}",
                        super::MAX_PEAKS_LIMIT
                    ),
                );
            }
        }
        if let Some(t) = s
            .min_snr_db
            .filter(|t| !(t.is_finite() && (0.0..=200.0).contains(t)))
        {
            self.push(
                Some("min_snr_db"),
                format!("rx-plan step {n}: min_snr_db {t} must be a number of dB in 0..=200"),
            );
        }
    }

    /// The reference-tone check of an `rx_capture` step: its own values, and the
    /// tone inside the captured band.
    fn clkin(&mut self, c: &ClkinSpec, s: &RxCaptureStep) {
        self.positive_finite(c.tone_hz, "clkin.tone_hz");
        self.plausible(c.tone_hz, "clkin.tone_hz", crate::Quantity::Frequency);
        self.positive_finite(c.tolerance_ppm, "clkin.tolerance_ppm");
        if let Some(t) = c.expected_tolerance_db {
            self.positive_finite(t, "clkin.expected_tolerance_db");
        }
        if c.expected_tolerance_db.is_some() && c.expected_dbfs.is_none() {
            let n = self.n;
            self.push(
                Some("clkin.expected_tolerance_db"),
                format!("rx-plan step {n}: clkin.expected_tolerance_db needs clkin.expected_dbfs"),
            );
        }
        if let Some(l) = c.expected_dbfs.filter(|l| !(l.is_finite() && *l <= 0.0)) {
            let n = self.n;
            self.push(
                Some("clkin.expected_dbfs"),
                format!("rx-plan step {n}: clkin.expected_dbfs must be a finite level ≤ 0 dBFS, got {l}"),
            );
        }
        if c.tone_hz.is_finite()
            && s.frequency_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.sample_rate_hz > 0.0
            && (c.tone_hz - s.frequency_hz).abs() >= s.sample_rate_hz / 2.0
        {
            let n = self.n;
            self.push(
                Some("clkin.tone_hz"),
                format!(
                    "rx-plan step {n}: clkin tone {} Hz is outside the captured band {} Hz ± {} Hz",
                    c.tone_hz,
                    s.frequency_hz,
                    s.sample_rate_hz / 2.0
                ),
            );
        }
    }

    /// A `tx_tone` step's values.
    pub(super) fn tx_tone(&mut self, s: &TxToneStep) {
        self.device(&s.device);
        self.positive_finite(s.frequency_hz, "frequency_hz");
        self.positive_finite(s.sample_rate_hz, "sample_rate_hz");
        self.plausible(s.frequency_hz, "frequency_hz", crate::Quantity::Frequency);
        self.plausible(
            s.sample_rate_hz,
            "sample_rate_hz",
            crate::Quantity::SampleRate,
        );
        self.positive_finite(s.duration_s, "duration_s");
        self.at_least_one_sample(s.duration_s, s.sample_rate_hz);
        self.finite(s.tone_offset_hz, "tone_offset_hz");
        self.finite(s.gain_db, "gain_db");
        if s.tone_offset_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.tone_offset_hz.abs() >= s.sample_rate_hz / 2.0
        {
            let n = self.n;
            self.push(
                Some("tone_offset_hz"),
                format!(
                    "rx-plan step {n}: |tone_offset_hz| {} must be below half the sample rate {}",
                    s.tone_offset_hz.abs(),
                    s.sample_rate_hz / 2.0
                ),
            );
        }
    }

    /// A `clkin_compare` step's values: two different radios, the tone inside the
    /// captured band, a positive tolerance, two clock sources if any.
    pub(super) fn clkin_compare(&mut self, s: &ClkinCompareStep) {
        let n = self.n;
        if s.devices.len() != 2 {
            self.push(
                Some("devices"),
                format!(
                    "rx-plan step {n}: devices must be exactly two radios [MASTER, SLAVE], got {}",
                    s.devices.len()
                ),
            );
        }
        for d in &s.devices {
            self.device(d);
        }
        if let [m, sl] = s.devices.as_slice() {
            if m.trim() == sl.trim() && !m.trim().is_empty() {
                self.push(
                    Some("devices"),
                    format!("rx-plan step {n}: MASTER and SLAVE are the same device args {m:?}"),
                );
            }
        }
        self.positive_finite(s.frequency_hz, "frequency_hz");
        self.positive_finite(s.sample_rate_hz, "sample_rate_hz");
        self.plausible(s.frequency_hz, "frequency_hz", crate::Quantity::Frequency);
        self.plausible(
            s.sample_rate_hz,
            "sample_rate_hz",
            crate::Quantity::SampleRate,
        );
        self.positive_finite(s.duration_s, "duration_s");
        self.at_least_one_sample(s.duration_s, s.sample_rate_hz);
        self.positive_finite(s.tone_hz, "tone_hz");
        self.plausible(s.tone_hz, "tone_hz", crate::Quantity::Frequency);
        self.positive_finite(s.tolerance_ppb, "tolerance_ppb");
        if let Some(g) = &s.gain_db {
            for p in g.problems() {
                self.push(Some("gain_db"), format!("rx-plan step {n}: {p}"));
            }
        }
        if s.tone_hz.is_finite()
            && s.frequency_hz.is_finite()
            && s.sample_rate_hz.is_finite()
            && s.sample_rate_hz > 0.0
            && (s.tone_hz - s.frequency_hz).abs() >= s.sample_rate_hz / 2.0
        {
            self.push(
                Some("tone_hz"),
                format!(
                    "rx-plan step {n}: tone {} Hz is outside the captured band {} Hz ± {} Hz",
                    s.tone_hz,
                    s.frequency_hz,
                    s.sample_rate_hz / 2.0
                ),
            );
        }
        if let Some(c) = &s.clock_sources {
            if c.len() != 2 {
                self.push(
                    Some("clock_sources"),
                    format!(
                        "rx-plan step {n}: clock_sources must be two names [MASTER, SLAVE], got {}",
                        c.len()
                    ),
                );
            }
            if c.iter()
                .any(|x| x.trim().is_empty() || x.chars().any(char::is_control))
            {
                self.push(
                    Some("clock_sources"),
                    format!("rx-plan step {n}: a clock source must be a name without control characters"),
                );
            }
        }
    }
}
