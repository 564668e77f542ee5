//! The checks every op's sanity is made of: numbers that are positive and
//! finite, values a radio can tune or sample, device args that name something.
//! Each op's own checks are in its module (`plan/ops/`).
use crate::error::Issue;

/// Device arg keys that make a driver load an FPGA image or firmware when the
/// device is made (UHD: `fpga`, `fw`), compared without regard to case.
const IMAGE_KEYS: [&str; 2] = ["fpga", "fw"];

/// The only device arg keys a task's plan may give (exactly, as SoapySDR and the
/// drivers spell them): the ones that pick a radio. Every other key is a driver's
/// own switch, read when the device is made (docs/safety.md). A radio of another
/// host is picked by its address (UHD's `addr`, SoapyPlutoSDR's `hostname`, `uri`),
/// and transmits only when `tx.allowed_remote_servers` lists it. Beside them: `remote`
/// (the SoapyRemote server, which `tx.allowed_remote_servers` gates for TX) and
/// `remote:KEY` for one of these keys, which SoapyRemote passes on as `KEY`.
const TASK_DEVICE_KEYS: [&str; 8] = [
    "driver", "serial", "label", "type", "product", "name", "addr", "hostname",
];

/// The `uri=` a task may give (libiio's, SoapyPlutoSDR): a radio on a local bus or
/// at a network address, never `xml:` (a file on this node) or another backend.
const TASK_URI_SCHEMES: [&str; 3] = ["usb:", "ip:", "local:"];

/// The simulator's model keys (hw/rxsim/registration.cpp, but its `replay*` keys,
/// which name a file): allowed beside `driver=rxsim`, whose args reach no other
/// driver (SoapySDR makes only the module a `driver` key names) and no hardware.
const SIM_KEYS: [&str; 26] = [
    "ppm",
    "ext_ref",
    "ext_ppm",
    "tone_hz",
    "tone_dbfs",
    "noise_dbfs",
    "pace",
    "tx",
    "buffer_samples",
    "tx_fail_after",
    "tx_stall_after_s",
    "tx_stall_s",
    "emitters",
    "settle_s",
    "dead_hz",
    "seed",
    "rx_stall_after_s",
    "fail_open",
    "lte_freq",
    "lte_pci",
    "lte_snr_db",
    "lte_seed",
    "lte_tdd",
    "sample_ppm",
    "gsm_freq",
    "gsm_snr_db",
];

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
        // A plan comes from the branch, and a driver reads every device arg when the
        // device is made, past every other check: SoapyAirspy and SoapyAirspyHF write
        // any arg named like a setting (`biastee=true` powers the antenna port, with
        // no `rx.allowed_settings`), UHD loads an FPGA image or firmware (`fpga=`,
        // `fw=`) that drives the transmitter itself, sets `clock_source=`; libiio
        // reads the file `uri=xml:PATH` names, rxsim the file `replay=` names. So a task names a radio and nothing
        // more: only the keys of [`TASK_DEVICE_KEYS`] pass (and a SoapyRemote server,
        // whose TX `tx.allowed_remote_servers` gates); anything else is the
        // operator's, with `--device`.
        let pairs: Vec<(&str, &str)> = d
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        // Every value of `key` is `want`, and there is one (SoapySDR keeps the last).
        let all_are = |key: &str, want: &str| {
            pairs.iter().any(|(k, _)| *k == key)
                && pairs.iter().all(|(k, v)| *k != key || *v == want)
        };
        // The args reach the simulator only: locally, or on a SoapyRemote server,
        // which gets every key but `driver`/`type`, `remote:` keys with the prefix cut.
        let sim = all_are("driver", "rxsim")
            || (all_are("driver", "remote") && all_are("remote:driver", "rxsim"));
        let picks = |k: &str, v: &str| {
            TASK_DEVICE_KEYS.contains(&k)
                || (k == "uri" && TASK_URI_SCHEMES.iter().any(|s| v.starts_with(s)))
                || (sim && SIM_KEYS.contains(&k))
        };
        let mut refused: Vec<&str> = Vec::new();
        for &(key, value) in &pairs {
            let allowed = match key.strip_prefix("remote:") {
                Some(far) => picks(far, value),
                None => key == "remote" || picks(key, value),
            };
            if allowed || refused.contains(&key) {
                continue;
            }
            refused.push(key);
            let shown = crate::header::truncate(key, 40);
            let bare = key.strip_prefix("remote:").unwrap_or(key);
            let why = if bare == "replay" || bare.starts_with("replay_") {
                "a task cannot name a file on this node for a radio to read (replay a recording with `--device` on the command line)".to_string()
            } else if IMAGE_KEYS.iter().any(|i| bare.eq_ignore_ascii_case(i)) {
                "a task cannot make a radio load an FPGA image or firmware, which could key its transmitter outside every TX check (give it with `--device` on the command line)".to_string()
            } else {
                format!(
                    "a task names its radio only by {}, uri=usb:|ip:|local: (and a SoapyRemote server by remote=, remote:driver=) — the driver reads any other key when the device is made (a bias-T, a clock or reference output, a calibration, an image to load, another host), outside the settings policy and every TX check — fix: drop {shown:?}, or give it with `--device` on the command line",
                    TASK_DEVICE_KEYS.join(", ")
                )
            };
            self.push(
                Some("device"),
                format!("rx-plan step {n}: device args may not hold {shown:?}: {why}"),
            );
        }
    }
}
