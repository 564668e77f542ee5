//! The checks every op's sanity is made of: numbers that are positive and
//! finite, values a radio can tune or sample, device args that name something.
//! Each op's own checks are in its module (`plan/ops/`).
use crate::error::Issue;

/// Device arg keys that make a driver load an FPGA image or firmware when the
/// device is made (UHD: `fpga`, `fw`), compared without regard to case.
const IMAGE_KEYS: [&str; 2] = ["fpga", "fw"];

/// The checks of one plan step: step `n` of the plan whose fence is on `line`.
pub(crate) struct StepCheck<'a> {
    /// The line of the block's fence (every step issue is reported there).
    pub(crate) line: usize,
    /// The 1-based step number.
    pub(crate) n: usize,
    /// Where the issues go.
    pub(crate) issues: &'a mut Vec<Issue>,
}

impl StepCheck<'_> {
    /// Record one problem of this step.
    pub(crate) fn push(&mut self, field: Option<&str>, message: impl Into<String>) {
        self.issues
            .push(Issue::new(Some(self.line), field, message));
    }

    /// A positive finite number, within the plausible range of its unit
    /// ([`crate::Quantity::of_field`]).
    pub(crate) fn positive_finite(&mut self, v: f64, field: &str) {
        if !(v.is_finite() && v > 0.0) {
            let n = self.n;
            self.push(
                Some(field),
                format!(
                    "rx-plan step {n}: {field} must be a positive finite number, got {}",
                    crate::compact(v)
                ),
            );
            return;
        }
        self.in_range(v, field);
    }

    /// `v` within the plausible range of the field's unit, when it has one.
    fn in_range(&mut self, v: f64, field: &str) {
        if let Some(why) = crate::Quantity::of_field(field).and_then(|q| q.implausible(v)) {
            let n = self.n;
            self.push(Some(field), format!("rx-plan step {n}: {field} {why}"));
        }
    }

    /// A positive value outside what any radio tunes or samples: a number
    /// written in MHz or MS/s where the plan takes Hz and S/s.
    pub(crate) fn plausible(&mut self, v: f64, field: &str, q: crate::Quantity) {
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

    /// A finite number, within the plausible range of its unit.
    pub(crate) fn finite(&mut self, v: f64, field: &str) {
        if !v.is_finite() {
            let n = self.n;
            self.push(
                Some(field),
                format!("rx-plan step {n}: {field} must be finite, got {v}"),
            );
            return;
        }
        self.in_range(v, field);
    }

    /// A step that streams for `duration_s` at `sample_rate_hz` moves at least one
    /// sample: a tone of no sample would key the transmitter and send nothing.
    pub(crate) fn at_least_one_sample(&mut self, duration_s: f64, sample_rate_hz: f64) {
        let samples = duration_s * sample_rate_hz;
        if samples.is_finite() && duration_s > 0.0 && sample_rate_hz > 0.0 && samples < 1.0 {
            let n = self.n;
            self.push(
                Some("duration_s"),
                format!(
                    "rx-plan step {n}: duration_s {} at sample_rate_hz {} is less than one \
                     sample",
                    crate::compact(duration_s),
                    crate::compact(sample_rate_hz)
                ),
            );
        }
    }

    /// Device args that are not blank and hold no control character.
    pub(crate) fn device(&mut self, d: &str) {
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
        // `hackrf` for `driver=hackrf`: SoapySDR takes a bare word as a key with no
        // value that most modules ignore, so it matched whichever radio came first.
        let parts: Vec<&str> = d.split(',').map(str::trim).collect();
        if let Some(word) = parts.iter().find(|p| !p.is_empty() && !p.contains('=')) {
            let fix = if parts
                .iter()
                .any(|p| p.split('=').next().map(str::trim) == Some("driver"))
            {
                format!("give it a value (`{word}=…`) or drop it")
            } else {
                format!("`driver={word}`")
            };
            self.push(
                Some("device"),
                format!(
                    "rx-plan step {n}: device args {d:?}: {word:?} is not KEY=VALUE \
                     (e.g. driver=hackrf,serial=…) — fix: {fix}"
                ),
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
        // Nor make a radio load an FPGA image or firmware (UHD's `fpga=`, `fw=`: a
        // path or an image name, loaded when the device is made): a loaded image
        // drives the radio's transmitter itself, outside the TX interlock, and the
        // branch can put the file in this checkout.
        if let Some(key) = d
            .split(',')
            .filter_map(|kv| kv.split('=').next())
            .map(str::trim)
            .find(|k| IMAGE_KEYS.iter().any(|i| k.eq_ignore_ascii_case(i)))
        {
            self.push(
                Some("device"),
                format!(
                    "rx-plan step {n}: device args may not hold {key:?}: a task cannot make a radio load an FPGA image or firmware, which could key its transmitter outside every TX check (give it with `--device` on the command line)"
                ),
            );
        }
    }
}
