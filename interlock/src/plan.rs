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
    /// A wideband receive sweep (DESIGN §8).
    RxSweep(crate::sweep::RxSweepStep),
}

impl Step {
    /// The op name as written in the plan.
    pub fn op(&self) -> &'static str {
        match self {
            Step::Inventory => "inventory",
            Step::ClockCheck(_) => "clock_check",
            Step::RxCapture(_) => "rx_capture",
            Step::TxTone(_) => "tx_tone",
            Step::RxSweep(_) => "rx_sweep",
        }
    }

    /// The device args the step addresses, if it addresses one.
    pub fn device(&self) -> Option<&str> {
        match self {
            Step::Inventory => None,
            Step::ClockCheck(s) => Some(&s.device),
            Step::RxCapture(s) => Some(&s.device),
            Step::TxTone(s) => Some(&s.device),
            Step::RxSweep(s) => Some(&s.device),
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

/// The sample type of an IQ recording (`rx_capture` `record_format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IqSampleFormat {
    /// SigMF `cf32_le`: float32 I/Q, 8 bytes per sample (the default).
    #[default]
    Cf32,
    /// SigMF `ci16_le`: the radio's native int16 I/Q (SoapySDR CS16) as it came,
    /// 4 bytes per sample; for full-rate recording.
    Ci16,
}

impl IqSampleFormat {
    /// Bytes one complex sample takes on disk.
    pub fn sample_bytes(self) -> u64 {
        match self {
            Self::Cf32 => 8,
            Self::Ci16 => 4,
        }
    }
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
    /// RX gain, if set: overall dB, or dB per gain element (`{"LNA": 24, "VGA": 20}`).
    #[serde(default)]
    pub gain_db: Option<crate::sweep::GainSpec>,
    /// Capture length.
    pub duration_s: f64,
    /// FFT size for the PSD (power of two, 16..=65536); default 2048.
    #[serde(default)]
    pub fft_size: Option<usize>,
    /// Keep the raw IQ under `.local/rx_iq/<TASK_ID>/`.
    #[serde(default)]
    pub record_iq: bool,
    /// The recording's sample type (`cf32` default, `ci16` native); only with `record_iq`.
    #[serde(default)]
    pub record_format: Option<IqSampleFormat>,
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
///
/// Body/header conflicts are checked per step from its op name as soon as the
/// op is known, so a conflict is reported even when another field of the same
/// step (or another step) is invalid: every problem is listed, not only the first.
pub(crate) fn parse_plan(
    json: &str,
    line: usize,
    header: Option<&TaskHeader>,
    issues: &mut Vec<Issue>,
) -> Option<Plan> {
    if let Some(d) = crate::strict_json::find_duplicate_key(json) {
        issues.push(Issue::new(
            Some(line + d.line),
            Some(&crate::header::truncate(&d.key, 80)),
            format!(
                "rx-plan: duplicate key {:?} in {} (a key may appear once)",
                crate::header::truncate(&d.key, 80),
                d.path
            ),
        ));
        return None;
    }
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
    if let Some((path, u)) = crate::strict_json::find_format_char(&value) {
        issues.push(Issue::new(
            Some(line),
            Some("rx-plan"),
            format!(
                "rx-plan: {path} holds the invisible format character {u} (bidi/zero-width characters could hide what runs)"
            ),
        ));
        return None;
    }
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
                Some(&crate::header::truncate(k, 80)),
                format!(
                    "rx-plan: unknown field {:?}",
                    crate::header::truncate(k, 80)
                ),
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
        if let Some(h) = header {
            op_conflicts(n, &op, h, line, issues);
        }
        let rest = serde_json::Value::Object(o);
        let step = match op.as_str() {
            "inventory" => {
                if let serde_json::Value::Object(o) = &rest {
                    for k in o.keys() {
                        issues.push(Issue::new(
                            Some(line),
                            Some(&crate::header::truncate(k, 80)),
                            format!(
                                "rx-plan step {n} (inventory): unknown field {:?}",
                                crate::header::truncate(k, 80)
                            ),
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
                if let Some(g) = &s.gain_db {
                    for p in g.problems() {
                        issues.push(Issue::new(
                            Some(line),
                            Some("gain_db"),
                            format!("rx-plan step {n}: {p}"),
                        ));
                    }
                }
                if let Some(b) = s.bandwidth_hz {
                    positive_finite(b, line, n, "bandwidth_hz", issues);
                }
                if let (Some(f), false) = (s.record_format, s.record_iq) {
                    issues.push(Issue::new(
                        Some(line),
                        Some("record_format"),
                        format!(
                            "rx-plan step {n}: record_format {} needs \"record_iq\": true",
                            serde_json::to_string(&f).unwrap_or_default()
                        ),
                    ));
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
                    if c.tone_hz.is_finite()
                        && s.frequency_hz.is_finite()
                        && s.sample_rate_hz.is_finite()
                        && s.sample_rate_hz > 0.0
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
            "rx_sweep" => de::<crate::sweep::RxSweepStep>(rest, line, n, &op, issues).map(|s| {
                non_empty_device(&s.device, line, n, issues);
                s.check(line, n, issues);
                Step::RxSweep(s)
            }),
            other => {
                issues.push(Issue::new(
                    Some(line),
                    Some("op"),
                    format!(
                        "rx-plan step {n}: unknown op {:?} (known: inventory, clock_check, rx_capture, rx_sweep, tx_tone)",
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

/// Body/header conflicts for one step, from its op: steps the header does not allow.
fn op_conflicts(n: usize, op: &str, header: &TaskHeader, line: usize, issues: &mut Vec<Issue>) {
    let known = matches!(
        op,
        "inventory" | "clock_check" | "rx_capture" | "tx_tone" | "rx_sweep"
    );
    if known && !header.hardware_access {
        issues.push(Issue::new(
            Some(line),
            Some("HARDWARE_ACCESS"),
            format!("rx-plan step {n} ({op}) touches hardware but HARDWARE_ACCESS = NO"),
        ));
    }
    if op == "rx_capture" && !header.rf_rx {
        issues.push(Issue::new(
            Some(line),
            Some("RF_RX"),
            format!("rx-plan step {n} (rx_capture) receives but RF_RX = NO"),
        ));
    }
    if op == "rx_sweep" && !header.rf_rx {
        issues.push(Issue::new(
            Some(line),
            Some("RF_RX"),
            format!("rx-plan step {n} (rx_sweep) receives but RF_RX = NO"),
        ));
    }
    if op == "tx_tone" && !header.rf_tx {
        issues.push(Issue::new(
            Some(line),
            Some("RF_TX"),
            format!("rx-plan step {n} (tx_tone) transmits but RF_TX = NO"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    /// YELLOW RX-capable header; plan fence is on line 14, its JSON on 15.
    fn rx_hdr() -> Vec<(String, String)> {
        fields("YES", "YES", "NO")
    }

    fn steps(s: &str) -> String {
        format!(r#"{{"steps": [{s}]}}"#)
    }

    /// Regression (review of session 1): a bad header line elsewhere (here an
    /// unknown field) used to hide the plan's body/header conflicts.
    #[test]
    fn conflicts_are_reported_beside_other_header_errors() {
        let f = set(fields("YES", "NO", "NO"), "PRIORITY", Some("HIGH"));
        let e = errs(&render(
            &f,
            &plan(&steps(
                r#"{"op": "tx_tone", "device": "driver=rxsim", "frequency_hz": 433.92e6,
                   "sample_rate_hz": 2e6, "tone_offset_hz": 5e4, "gain_db": 0, "duration_s": 1}"#,
            )),
        ));
        assert!(
            e.iter().any(|i| i.field.as_deref() == Some("PRIORITY")),
            "{e:?}"
        );
        assert!(
            e.iter().any(|i| i.field.as_deref() == Some("RF_TX")),
            "{e:?}"
        );
    }

    #[test]
    fn full_rx_plan_parses() {
        let t = ok(&render(
            &rx_hdr(),
            &plan(&steps(&format!(
                r#"{{"op": "inventory"}}, {{"op": "clock_check", "device": "driver=hackrf", "expect_source": "external"}}, {RX_STEP}"#
            ))),
        ));
        let p = t.plan().unwrap();
        assert_eq!(t.plan_line(), Some(14));
        assert_eq!(p.steps.len(), 3);
        assert_eq!(p.steps[0], Step::Inventory);
        match &p.steps[2] {
            Step::RxCapture(s) => {
                assert_eq!(s.frequency_hz, 100.0e6);
                assert!(s.record_iq);
                assert_eq!(s.fft_size, Some(2048));
                let c = s.clkin.as_ref().unwrap();
                assert_eq!(c.tone_hz, 100.1e6);
                assert_eq!(c.tolerance_ppm, 0.5);
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(p.steps[1].device(), Some("driver=hackrf"));
        assert_eq!(p.steps[1].op(), "clock_check");
    }

    #[test]
    fn tilde_fence_and_crlf() {
        let body = format!("~~~rx-plan\n{}\n~~~\n", steps(r#"{"op":"inventory"}"#));
        let t = ok(&render(&rx_hdr(), &body).replace('\n', "\r\n"));
        assert_eq!(t.plan().unwrap().steps.len(), 1);
    }

    #[test]
    fn other_fences_ignored_and_nested_example_not_a_plan() {
        let body = "```json\n{\"steps\": [{\"op\": \"tx_tone\"}]}\n```\n\
                    ````markdown\n```rx-plan\n{\"steps\": []}\n```\n````\n";
        let t = ok(&render(&fields("NO", "NO", "NO"), body));
        assert!(t.plan().is_none());
    }

    #[test]
    fn unknown_op() {
        let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"op": "reflash"}"#))));
        has(&e, Some(14), Some("op"), "unknown op \"reflash\"");
        let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"device": "x"}"#))));
        has(&e, Some(14), Some("op"), "missing field op");
        let e = errs(&render(&rx_hdr(), &plan(&steps(r#"{"op": 3}"#))));
        has(&e, Some(14), Some("op"), "op must be a string");
    }

    #[test]
    fn unknown_fields() {
        let e = errs(&render(
            &rx_hdr(),
            &plan(&steps(r#"{"op": "inventory", "device": "x"}"#)),
        ));
        has(&e, Some(14), Some("device"), "unknown field \"device\"");
        let e = errs(&render(
            &rx_hdr(),
            &plan(&steps(
                r#"{"op": "clock_check", "device": "d", "power_w": 5}"#,
            )),
        ));
        has(&e, Some(14), Some("power_w"), "unknown field `power_w`");
        let e = errs(&render(
            &rx_hdr(),
            &plan(r#"{"steps": [{"op": "inventory"}], "loop": true}"#),
        ));
        has(&e, Some(14), Some("loop"), "unknown field \"loop\"");
        let clk = RX_STEP.replace("\"tolerance_ppm\"", "\"tol\"");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&clk))));
        assert!(
            e.iter().any(|i| i.message.contains("unknown field `tol`")),
            "{e:#?}"
        );
    }

    #[test]
    fn bad_json_names_the_line() {
        let body = "```rx-plan\n{\"steps\": [\n  {\"op\": \"inventory\"},\n  {\"op\": }\n]}\n```\n";
        let e = errs(&render(&rx_hdr(), body));
        // fence on line 12, the broken step on line 15.
        has(&e, Some(15), Some("rx-plan"), "not valid JSON");
        let e = errs(&render(&rx_hdr(), &plan("[1, 2]")));
        has(&e, Some(14), Some("rx-plan"), "must be a JSON object");
        let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": {}}"#)));
        has(&e, Some(14), Some("steps"), "must be an array");
        let e = errs(&render(&rx_hdr(), &plan(r#"{}"#)));
        has(&e, Some(14), Some("steps"), "missing field steps");
        let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": []}"#)));
        has(&e, Some(14), Some("steps"), "steps is empty");
        let e = errs(&render(&rx_hdr(), &plan(r#"{"steps": [1]}"#)));
        has(&e, Some(14), Some("steps"), "not a JSON object");
        let many = vec![r#"{"op":"inventory"}"#; 65].join(",");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&many))));
        has(&e, Some(14), Some("steps"), "65 steps; at most 64");
    }

    #[test]
    fn unclosed_block() {
        let e = errs(&render(
            &rx_hdr(),
            "```rx-plan\n{\"steps\": [{\"op\": \"inventory\"}]}\n",
        ));
        has(&e, Some(12), Some("rx-plan"), "not closed");
    }

    #[test]
    fn two_blocks() {
        let one = plan(&steps(r#"{"op":"inventory"}"#));
        let e = errs(&render(&rx_hdr(), &format!("{one}\n{one}")));
        // second fence: 12 + 6 lines of the first block + blank.
        has(
            &e,
            Some(20),
            Some("rx-plan"),
            "more than one rx-plan block (2 found; first on line 14)",
        );
    }

    #[test]
    fn body_header_conflicts() {
        // tx_tone with RF_TX = NO.
        let e = errs(&render(&rx_hdr(), &plan(&steps(TX_STEP))));
        has(
            &e,
            Some(14),
            Some("RF_TX"),
            "step 1 (tx_tone) transmits but RF_TX = NO",
        );
        // rx_capture with RF_RX = NO.
        let e = errs(&render(&fields("YES", "NO", "NO"), &plan(&steps(RX_STEP))));
        has(
            &e,
            Some(14),
            Some("RF_RX"),
            "step 1 (rx_capture) receives but RF_RX = NO",
        );
        // any device step with HARDWARE_ACCESS = NO.
        for s in [
            r#"{"op":"inventory"}"#,
            r#"{"op":"clock_check","device":"d"}"#,
        ] {
            let e = errs(&render(&fields("NO", "NO", "NO"), &plan(&steps(s))));
            has(
                &e,
                Some(14),
                Some("HARDWARE_ACCESS"),
                "touches hardware but HARDWARE_ACCESS = NO",
            );
        }
        // A conflict is reported even when another step is broken.
        let e = errs(&render(
            &rx_hdr(),
            &plan(&steps(&format!(r#"{{"op":"bogus"}}, {TX_STEP}"#))),
        ));
        has(&e, Some(14), Some("op"), "unknown op");
        has(&e, Some(14), Some("RF_TX"), "step 2 (tx_tone) transmits");
        // TX plan in a RED TX header is fine.
        let t = tx_task();
        assert!(matches!(t.plan().unwrap().steps[0], Step::TxTone(_)));
    }

    /// Issue 17: `rx_sweep` parses with the DESIGN §8 fields, needs RF_RX = YES and
    /// HARDWARE_ACCESS = YES, and every bad value is named.
    #[test]
    fn rx_sweep_parses_conflicts_and_bad_values() {
        let sweep = r#"{"op": "rx_sweep", "device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6,
            "bin_hz": 10e3, "sample_rate_hz": 10e6, "gain_db": {"LNA": 24, "VGA": 10}, "dwell_s": 0.05,
            "settle_s": 0.01, "crop": 0.25, "repeats": 2}"#;
        let t = ok(&render(&rx_hdr(), &plan(&steps(sweep))));
        match &t.plan().unwrap().steps[0] {
            Step::RxSweep(s) => {
                assert_eq!(s.stop_hz, 108e6);
                assert_eq!(s.repeats, 2);
                assert_eq!(s.gain_db.as_ref().map(|g| g.total()), Some(34.0));
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(t.plan().unwrap().steps[0].op(), "rx_sweep");
        assert_eq!(t.risk(), crate::RiskLevel::Yellow);
        let e = errs(&render(&fields("YES", "NO", "NO"), &plan(&steps(sweep))));
        has(
            &e,
            Some(14),
            Some("RF_RX"),
            "step 1 (rx_sweep) receives but RF_RX = NO",
        );
        let e = errs(&render(&fields("NO", "NO", "NO"), &plan(&steps(sweep))));
        has(&e, Some(14), Some("HARDWARE_ACCESS"), "touches hardware");
        for (from, to, field, msg) in [
            (
                "\"stop_hz\": 108e6",
                "\"stop_hz\": 80e6",
                "stop_hz",
                "must be above start_hz",
            ),
            (
                "\"crop\": 0.25",
                "\"crop\": 1.5",
                "crop",
                "must be in [0, 0.95)",
            ),
            ("\"repeats\": 2", "\"repeats\": 0", "repeats", "1..=10000"),
            (
                "\"bin_hz\": 10e3",
                "\"bin_hz\": 0",
                "bin_hz",
                "positive finite",
            ),
            (
                "\"bin_hz\": 10e3",
                "\"bin_hz\": 5e6",
                "bin_hz",
                "wider than sample_rate_hz / 16",
            ),
            ("\"settle_s\": 0.01", "\"settle_s\": -1", "settle_s", "≥ 0"),
            (
                "\"VGA\": 10",
                "\"\": 10",
                "gain_db",
                "not a gain element name",
            ),
            (
                "\"stop_hz\": 108e6",
                "\"stop_hz\": 6e15",
                "stop_hz",
                "more than 1000000",
            ),
        ] {
            let s = sweep.replace(from, to);
            has(
                &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
                Some(14),
                Some(field),
                msg,
            );
        }
        let s = sweep.replace("\"repeats\": 2", "\"repeats\": 2, \"record_iq\": true");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
        assert!(
            e.iter()
                .any(|i| i.message.contains("unknown field `record_iq`")),
            "{e:#?}"
        );
        let s = sweep.replace("{\"LNA\": 24, \"VGA\": 10}", "\"max\"");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
        assert!(
            e.iter().any(|i| i.message.contains("gain element to dB")),
            "{e:#?}"
        );
    }

    /// Issue 16: `record_format` picks the recording's sample type; it needs
    /// `record_iq`, and only cf32/ci16 exist.
    #[test]
    fn record_format_is_cf32_or_ci16_and_needs_record_iq() {
        let s = RX_STEP.replace(
            "\"record_iq\": true",
            "\"record_iq\": true, \"record_format\": \"ci16\"",
        );
        let t = ok(&render(&rx_hdr(), &plan(&steps(&s))));
        match &t.plan().unwrap().steps[0] {
            Step::RxCapture(c) => assert_eq!(c.record_format, Some(IqSampleFormat::Ci16)),
            other => panic!("{other:?}"),
        }
        let s = RX_STEP.replace(
            "\"record_iq\": true",
            "\"record_iq\": false, \"record_format\": \"ci16\"",
        );
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("record_format"),
            "needs \"record_iq\": true",
        );
        let s = RX_STEP.replace(
            "\"record_iq\": true",
            "\"record_iq\": true, \"record_format\": \"cs8\"",
        );
        assert!(!errs(&render(&rx_hdr(), &plan(&steps(&s)))).is_empty());
    }

    #[test]
    fn physical_sanity() {
        for (field, bad) in [
            ("frequency_hz", "0"),
            ("frequency_hz", "-100e6"),
            ("sample_rate_hz", "0.0"),
            ("duration_s", "-1"),
        ] {
            let s = RX_STEP.replace(
                &format!("\"{field}\": "),
                &format!("\"{field}\": {bad}, \"_x\": "),
            );
            // Put the bad value in place of the good one.
            let s = s.replace(", \"_x\": ", ", \"_drop\": ");
            let v: serde_json::Value = serde_json::from_str(&s).unwrap();
            let mut o = v.as_object().unwrap().clone();
            o.remove("_drop");
            let e = errs(&render(
                &rx_hdr(),
                &plan(&steps(&serde_json::Value::Object(o).to_string())),
            ));
            has(
                &e,
                Some(14),
                Some(field),
                "must be a positive finite number",
            );
        }
        // Out-of-range numbers (JSON cannot say NaN/inf) are refused as bad JSON.
        let s = RX_STEP.replace("\"duration_s\": 2.0", "\"duration_s\": 1e999");
        let e = errs(&render(&rx_hdr(), &plan(&steps(&s))));
        assert!(!e.is_empty());
        let s = RX_STEP.replace("\"duration_s\": 2.0", "\"duration_s\": NaN");
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(15),
            Some("rx-plan"),
            "not valid JSON",
        );
        let s = RX_STEP.replace("2048", "1000");
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("fft_size"),
            "power of two",
        );
        let s = RX_STEP.replace("\"tolerance_ppm\": 0.5", "\"tolerance_ppm\": 0");
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("clkin.tolerance_ppm"),
            "positive",
        );
        let s = RX_STEP.replace("100.1e6", "102e6");
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("clkin.tone_hz"),
            "outside the captured band",
        );
        let s = RX_STEP.replace("\"driver=hackrf\"", "\" \"");
        has(
            &errs(&render(&rx_hdr(), &plan(&steps(&s)))),
            Some(14),
            Some("device"),
            "must not be empty",
        );
        let tx = fields("YES", "NO", "YES");
        let s = TX_STEP.replace("50e3", "1.5e6");
        has(
            &errs(&render(&tx, &plan(&steps(&s)))),
            Some(14),
            Some("tone_offset_hz"),
            "below half the sample rate",
        );
        let s = TX_STEP.replace("\"duration_s\": 1.0", "\"duration_s\": 0");
        has(
            &errs(&render(&tx, &plan(&steps(&s)))),
            Some(14),
            Some("duration_s"),
            "positive finite",
        );
        let s = TX_STEP.replace("\"gain_db\": 0", "\"gain_db\": \"max\"");
        has(
            &errs(&render(&tx, &plan(&steps(&s)))),
            Some(14),
            None,
            "invalid type",
        );
        let s = TX_STEP.replace(", \"gain_db\": 0", "");
        has(
            &errs(&render(&tx, &plan(&steps(&s)))),
            Some(14),
            Some("gain_db"),
            "missing field `gain_db`",
        );
    }
}
