use crate::error::Issue;
use crate::header::TaskHeader;
use serde::{Deserialize, Serialize};

/// The machine-readable plan: the steps of the one `rx-plan` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Steps, executed in order.
    pub steps: Vec<Step>,
}

/// One plan step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    /// Enumerate and probe radios, read-only.
    Inventory,
    /// Set/read the clock source and check the expected source.
    ClockCheck(ClockCheckStep),
    /// A bounded receive capture.
    RxCapture(RxCaptureStep),
    /// A CW tone transmission (RED; needs a `TxPermit`).
    TxTone(TxToneStep),
}

impl Step {
    /// The op name as written in the plan.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Inventory => "inventory",
            Step::ClockCheck(_) => "clock_check",
            Step::RxCapture(_) => "rx_capture",
            Step::TxTone(_) => "tx_tone",
        }
    }

    /// The device args the step addresses, if it addresses one.
    pub fn device(&self) -> Option<&str> {
        match self {
            Step::Inventory => None,
            Step::ClockCheck(s) => Some(&s.device),
            Step::RxCapture(s) => Some(&s.device),
            Step::TxTone(s) => Some(&s.device),
        }
    }
}

/// `clock_check` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClockCheckStep {
    /// SoapySDR device args.
    pub device: String,
    /// The clock source expected (`internal`, `external` …), if any.
    #[serde(default)]
    pub expect_source: Option<String>,
    /// A clock source to set before checking, if any.
    #[serde(default)]
    pub clock_source: Option<String>,
}

/// Reference-tone check during a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClkinSpec {
    /// Absolute RF frequency of the reference tone.
    pub tone_hz: f64,
    /// Largest acceptable reference error, in ppm.
    pub tolerance_ppm: f64,
}

/// `rx_capture` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxCaptureStep {
    /// SoapySDR device args.
    pub device: String,
    /// Centre frequency.
    pub frequency_hz: f64,
    /// Sample rate.
    pub sample_rate_hz: f64,
    /// Overall RX gain, if set.
    #[serde(default)]
    pub gain_db: Option<f64>,
    /// Capture length.
    pub duration_s: f64,
    /// FFT size for the PSD (power of two, 16..=65536); default 2048.
    #[serde(default)]
    pub fft_size: Option<usize>,
    /// Keep the raw IQ under `.local/rx_iq/<TASK_ID>/`.
    #[serde(default)]
    pub record_iq: bool,
    /// Clock source to select before capturing.
    #[serde(default)]
    pub clock_source: Option<String>,
    /// Analog bandwidth, if set.
    #[serde(default)]
    pub bandwidth_hz: Option<f64>,
    /// Antenna, if set.
    #[serde(default)]
    pub antenna: Option<String>,
    /// Reference tone check, if asked.
    #[serde(default)]
    pub clkin: Option<ClkinSpec>,
}

/// `tx_tone` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxToneStep {
    /// SoapySDR device args.
    pub device: String,
    /// LO (centre) frequency.
    pub frequency_hz: f64,
    /// Sample rate.
    pub sample_rate_hz: f64,
    /// Baseband offset of the tone from the LO (may be negative).
    pub tone_offset_hz: f64,
    /// TX gain.
    pub gain_db: f64,
    /// How long the tone is on air.
    pub duration_s: f64,
}

/// Find the `rx-plan` fenced blocks: `(info line number, json text, first content line)`.
pub(crate) fn find_plan_blocks(
    body: &str,
    body_start_line: usize,
    issues: &mut Vec<Issue>,
) -> Vec<(usize, String, usize)> {
    let mut blocks = Vec::new();
    let mut lines = body.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        let fence_char = if t.starts_with("```") {
            '`'
        } else if t.starts_with("~~~") {
            '~'
        } else {
            continue;
        };
        let fence_len = t.chars().take_while(|c| *c == fence_char).count();
        let info = t[fence_len..].trim();
        let info_word = info.split_whitespace().next().unwrap_or("");
        let mut content = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            let lt = l.trim();
            if lt.len() >= fence_len && lt.chars().all(|c| c == fence_char) {
                closed = true;
                break;
            }
            content.push_str(l);
            content.push('\n');
        }
        if info_word == "rx-plan" {
            let line_no = body_start_line + i;
            if !closed {
                issues.push(Issue::new(
                    Some(line_no),
                    Some("rx-plan"),
                    "rx-plan block is not closed",
                ));
            }
            blocks.push((line_no, content, line_no + 1));
        }
    }
    blocks
}

fn positive_finite(v: f64, line: usize, step: usize, field: &str, issues: &mut Vec<Issue>) {
    if !(v.is_finite() && v > 0.0) {
        issues.push(Issue::new(
            Some(line),
            Some(field),
            format!("rx-plan step {step}: {field} must be a positive finite number, got {v}"),
        ));
    }
}

fn finite(v: f64, line: usize, step: usize, field: &str, issues: &mut Vec<Issue>) {
    if !v.is_finite() {
        issues.push(Issue::new(
            Some(line),
            Some(field),
            format!("rx-plan step {step}: {field} must be finite, got {v}"),
        ));
    }
}

fn non_empty_device(d: &str, line: usize, step: usize, issues: &mut Vec<Issue>) {
    if d.trim().is_empty() {
        issues.push(Issue::new(
            Some(line),
            Some("device"),
            format!("rx-plan step {step}: device args must not be empty"),
        ));
    }
    if d.chars().any(char::is_control) {
        issues.push(Issue::new(
            Some(line),
            Some("device"),
            format!("rx-plan step {step}: device args contain control characters"),
        ));
    }
}

/// Parse one plan JSON text; `line` is the line of the block's fence.
pub(crate) fn parse_plan(json: &str, line: usize, issues: &mut Vec<Issue>) -> Option<Plan> {
    let value: serde_json::Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => {
            issues.push(Issue::new(
                Some(line + e.line()),
                Some("rx-plan"),
                format!("rx-plan is not valid JSON: {e}"),
            ));
            return None;
        }
    };
    let obj = match value {
        serde_json::Value::Object(o) => o,
        _ => {
            issues.push(Issue::new(
                Some(line),
                Some("rx-plan"),
                "rx-plan must be a JSON object {\"steps\": [...]}",
            ));
            return None;
        }
    };
    for k in obj.keys() {
        if k != "steps" {
            issues.push(Issue::new(
                Some(line),
                Some(k),
                format!("rx-plan: unknown field {k:?}"),
            ));
        }
    }
    let steps_v = match obj.get("steps") {
        Some(serde_json::Value::Array(a)) => a,
        Some(_) => {
            issues.push(Issue::new(
                Some(line),
                Some("steps"),
                "rx-plan: steps must be an array",
            ));
            return None;
        }
        None => {
            issues.push(Issue::new(
                Some(line),
                Some("steps"),
                "rx-plan: missing field steps",
            ));
            return None;
        }
    };
    if steps_v.is_empty() {
        issues.push(Issue::new(
            Some(line),
            Some("steps"),
            "rx-plan: steps is empty",
        ));
    }
    if steps_v.len() > 64 {
        issues.push(Issue::new(
            Some(line),
            Some("steps"),
            format!("rx-plan: {} steps; at most 64", steps_v.len()),
        ));
        return None;
    }
    let before = issues.len();
    let mut steps = Vec::new();
    for (i, sv) in steps_v.iter().enumerate() {
        let n = i + 1;
        let mut o = match sv {
            serde_json::Value::Object(o) => o.clone(),
            _ => {
                issues.push(Issue::new(
                    Some(line),
                    Some("steps"),
                    format!("rx-plan step {n}: not a JSON object"),
                ));
                continue;
            }
        };
        let op = match o.remove("op") {
            Some(serde_json::Value::String(s)) => s,
            Some(_) => {
                issues.push(Issue::new(
                    Some(line),
                    Some("op"),
                    format!("rx-plan step {n}: op must be a string"),
                ));
                continue;
            }
            None => {
                issues.push(Issue::new(
                    Some(line),
                    Some("op"),
                    format!("rx-plan step {n}: missing field op"),
                ));
                continue;
            }
        };
        let rest = serde_json::Value::Object(o);
        let step = match op.as_str() {
            "inventory" => {
                if let serde_json::Value::Object(o) = &rest {
                    for k in o.keys() {
                        issues.push(Issue::new(
                            Some(line),
                            Some(k),
                            format!("rx-plan step {n} (inventory): unknown field {k:?}"),
                        ));
                    }
                }
                Some(Step::Inventory)
            }
            "clock_check" => de::<ClockCheckStep>(rest, line, n, &op, issues).map(|s| {
                non_empty_device(&s.device, line, n, issues);
                Step::ClockCheck(s)
            }),
            "rx_capture" => de::<RxCaptureStep>(rest, line, n, &op, issues).map(|s| {
                non_empty_device(&s.device, line, n, issues);
                positive_finite(s.frequency_hz, line, n, "frequency_hz", issues);
                positive_finite(s.sample_rate_hz, line, n, "sample_rate_hz", issues);
                positive_finite(s.duration_s, line, n, "duration_s", issues);
                if let Some(g) = s.gain_db {
                    finite(g, line, n, "gain_db", issues);
                }
                if let Some(b) = s.bandwidth_hz {
                    positive_finite(b, line, n, "bandwidth_hz", issues);
                }
                if let Some(f) = s.fft_size {
                    if !(16..=65536).contains(&f) || !f.is_power_of_two() {
                        issues.push(Issue::new(
                            Some(line),
                            Some("fft_size"),
                            format!("rx-plan step {n}: fft_size {f} must be a power of two in 16..=65536"),
                        ));
                    }
                }
                if let Some(c) = &s.clkin {
                    positive_finite(c.tone_hz, line, n, "clkin.tone_hz", issues);
                    positive_finite(c.tolerance_ppm, line, n, "clkin.tolerance_ppm", issues);
                    if c.tone_hz.is_finite() && s.frequency_hz.is_finite() && s.sample_rate_hz.is_finite()
                        && (c.tone_hz - s.frequency_hz).abs() >= s.sample_rate_hz / 2.0
                    {
                        issues.push(Issue::new(
                            Some(line),
                            Some("clkin.tone_hz"),
                            format!(
                                "rx-plan step {n}: clkin tone {} Hz is outside the captured band {} Hz ± {} Hz",
                                c.tone_hz,
                                s.frequency_hz,
                                s.sample_rate_hz / 2.0
                            ),
                        ));
                    }
                }
                Step::RxCapture(s)
            }),
            "tx_tone" => de::<TxToneStep>(rest, line, n, &op, issues).map(|s| {
                non_empty_device(&s.device, line, n, issues);
                positive_finite(s.frequency_hz, line, n, "frequency_hz", issues);
                positive_finite(s.sample_rate_hz, line, n, "sample_rate_hz", issues);
                positive_finite(s.duration_s, line, n, "duration_s", issues);
                finite(s.tone_offset_hz, line, n, "tone_offset_hz", issues);
                finite(s.gain_db, line, n, "gain_db", issues);
                if s.tone_offset_hz.is_finite() && s.sample_rate_hz.is_finite() && s.tone_offset_hz.abs() >= s.sample_rate_hz / 2.0 {
                    issues.push(Issue::new(
                        Some(line),
                        Some("tone_offset_hz"),
                        format!(
                            "rx-plan step {n}: |tone_offset_hz| {} must be below half the sample rate {}",
                            s.tone_offset_hz.abs(),
                            s.sample_rate_hz / 2.0
                        ),
                    ));
                }
                Step::TxTone(s)
            }),
            other => {
                issues.push(Issue::new(
                    Some(line),
                    Some("op"),
                    format!(
                        "rx-plan step {n}: unknown op {:?} (known: inventory, clock_check, rx_capture, tx_tone)",
                        crate::header::truncate(other, 40)
                    ),
                ));
                None
            }
        };
        if let Some(s) = step {
            steps.push(s);
        }
    }
    if issues.len() != before {
        return None;
    }
    Some(Plan { steps })
}

fn de<T: serde::de::DeserializeOwned>(
    v: serde_json::Value,
    line: usize,
    n: usize,
    op: &str,
    issues: &mut Vec<Issue>,
) -> Option<T> {
    match serde_json::from_value::<T>(v) {
        Ok(t) => Some(t),
        Err(e) => {
            let msg = e.to_string();
            let field = msg.split('`').nth(1).map(str::to_owned);
            issues.push(Issue {
                line: Some(line),
                field,
                message: format!("rx-plan step {n} ({op}): {msg}"),
            });
            None
        }
    }
}

/// Body/header conflicts: steps the header does not allow.
pub(crate) fn check_conflicts(
    plan: &Plan,
    header: &TaskHeader,
    line: usize,
    issues: &mut Vec<Issue>,
) {
    for (i, s) in plan.steps.iter().enumerate() {
        let n = i + 1;
        if !header.hardware_access {
            issues.push(Issue::new(
                Some(line),
                Some("HARDWARE_ACCESS"),
                format!(
                    "rx-plan step {n} ({}) touches hardware but HARDWARE_ACCESS = NO",
                    s.op()
                ),
            ));
        }
        match s {
            Step::RxCapture(_) if !header.rf_rx => issues.push(Issue::new(
                Some(line),
                Some("RF_RX"),
                format!("rx-plan step {n} (rx_capture) receives but RF_RX = NO"),
            )),
            Step::TxTone(_) if !header.rf_tx => issues.push(Issue::new(
                Some(line),
                Some("RF_TX"),
                format!("rx-plan step {n} (tx_tone) transmits but RF_TX = NO"),
            )),
            _ => {}
        }
    }
}
