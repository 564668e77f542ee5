//! What a person is shown about a task before deciding on it (the `watch` /
//! `review` prompt and `rxnode validate`): the Markdown body escaped and cut, each
//! plan step in plain units with the IQ it records (each op describes its own
//! steps, `Step::describe` in the interlock), and this node's policy verdict per step — the very check `rxnode run` applies
//! ([`rxnode_interlock::check_step`]), never a second one. docs/operator.md#a-task-arrives
//! shows an example.
use rxnode_interlock::{bytes, check_step, Plan, Policy, Step};
use serde::Serialize;

/// Body lines shown at most before the rest is cut (with how to see it).
pub(crate) const MAX_BODY_LINES: usize = 40;
/// Width a body line is wrapped at, in characters.
pub(crate) const BODY_WIDTH: usize = 96;

/// Text made safe for a terminal: the one escaper ([`rxnode_interlock::escaped`]):
/// every control character (C0, DEL, C1 such as U+009B), format character (bidi
/// overrides and isolates, zero-width characters) and line or paragraph
/// separator becomes a visible `\u{…}` escape; nothing of the input is dropped.
pub(crate) use rxnode_interlock::escaped;

/// The body as shown: escaped, wrapped at [`BODY_WIDTH`], at most
/// [`MAX_BODY_LINES`] screen lines; the count of body lines not shown.
pub(crate) struct BodyView {
    /// The screen lines to print.
    pub(crate) lines: Vec<String>,
    /// Lines of the body (as written, not wrapped) left out.
    pub(crate) more: usize,
    /// Lines of the body in all.
    pub(crate) total: usize,
}

/// Cut a body for the prompt (leading and trailing blank lines dropped).
pub(crate) fn body_view(body: &str) -> BodyView {
    let src: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let first = src.iter().position(|l| !l.trim().is_empty());
    let last = src.iter().rposition(|l| !l.trim().is_empty());
    let src = match (first, last) {
        (Some(a), Some(b)) => &src[a..=b],
        _ => &[][..],
    };
    let mut lines = Vec::new();
    let mut used = 0;
    for l in src {
        let wrapped = wrap(&escaped(l), BODY_WIDTH);
        if lines.len() + wrapped.len() > MAX_BODY_LINES {
            // A long line that does not fit whole: show what fits of it.
            if lines.is_empty() {
                lines.extend(wrapped.into_iter().take(MAX_BODY_LINES));
                used += 1;
            }
            break;
        }
        lines.extend(wrapped);
        used += 1;
    }
    BodyView {
        lines,
        more: src.len() - used,
        total: src.len(),
    }
}

/// Wrap one (escaped) line at `width` characters, at a space where there is one.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= width {
        return vec![line.to_owned()];
    }
    let mut out = Vec::new();
    let mut start = 0;
    while chars.len() - start > width {
        let window = &chars[start..start + width];
        let cut = match window.iter().rposition(|c| *c == ' ') {
            Some(p) if p > width / 2 => p + 1,
            _ => width,
        };
        out.push(chars[start..start + cut].iter().collect::<String>());
        start += cut;
    }
    out.push(chars[start..].iter().collect());
    out
}

/// The radio's own settings as the prompt shows them (the interlock's words,
/// which the plan steps are described in).
pub(crate) use rxnode_interlock::radio_settings_text;

/// This node's verdict on one step.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepView {
    /// 1-based.
    pub(crate) step: usize,
    /// The op as written in the plan.
    pub(crate) op: &'static str,
    /// [`Step::describe`].
    pub(crate) summary: String,
    /// Whether the step transmits.
    pub(crate) transmits: bool,
    /// IQ bytes it records.
    pub(crate) iq_bytes: u64,
    /// `within policy`, `blocked` (the step is BLOCKED, the rest runs) or `refused`
    /// (the whole run is refused before anything runs); `None` without a policy.
    pub(crate) verdict: Option<&'static str>,
    /// The limit it breaks (escaped), for `blocked` / `refused`.
    pub(crate) reason: Option<String>,
}

impl StepView {
    /// The verdict as the prompt prints it.
    pub(crate) fn verdict_text(&self) -> Option<String> {
        let why = self.reason.as_deref().unwrap_or("");
        self.verdict.map(|v| match v {
            "blocked" => format!("would be BLOCKED: {why}"),
            "refused" => format!("would be REFUSED — `rxnode run` stops before any step: {why}"),
            other => other.to_owned(),
        })
    }
}

/// Every step of `plan` in plain units with the verdict of `policy` (if given).
pub(crate) fn steps(plan: &Plan, policy: Option<&Policy>) -> Vec<StepView> {
    let mut seen_tx = false;
    plan.steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let (verdict, reason) = match policy {
                None => (None, None),
                Some(p) => match check_step(st, p) {
                    Ok(()) => match st {
                        // One AUTHORIZE RF TX covers one transmission (docs/safety.md).
                        Step::TxTone(_) if seen_tx => (
                            Some("blocked"),
                            Some(
                                "one AUTHORIZE RF TX covers only the first tx_tone step".to_owned(),
                            ),
                        ),
                        _ => (Some("within policy"), None),
                    },
                    Err(e) => {
                        let msg = e.to_string();
                        let msg = msg
                            .strip_prefix("refused by local policy: ")
                            .unwrap_or(&msg)
                            .to_owned();
                        let v = if matches!(st, Step::TxTone(_)) {
                            "refused"
                        } else {
                            "blocked"
                        };
                        (Some(v), Some(escaped(&msg)))
                    }
                },
            };
            if matches!(st, Step::TxTone(_)) {
                seen_tx = true;
            }
            StepView {
                step: i + 1,
                op: st.op(),
                summary: st.describe(),
                transmits: matches!(st, Step::TxTone(_)),
                iq_bytes: st.iq_bytes().max(0.0) as u64,
                verdict,
                reason,
            }
        })
        .collect()
}

/// The plan and verdict lines of the prompt and of `validate`, indented by
/// `indent`; a last line when the task's IQ in all exceeds `rx.max_iq_bytes`.
pub(crate) fn plan_lines(plan: &Plan, policy: Option<&Policy>, indent: &str) -> Vec<String> {
    let views = steps(plan, policy);
    let mut out = Vec::new();
    for v in &views {
        out.push(format!("{indent}{}. {}", v.step, v.summary));
        if let Some(t) = v.verdict_text() {
            out.push(format!("{indent}   → {t}"));
        }
    }
    let total: u64 = views.iter().map(|v| v.iq_bytes).sum();
    if let Some(p) = policy {
        if total > p.rx.max_iq_bytes {
            out.push(format!(
                "{indent}   IQ of all steps ≈ {} exceeds rx.max_iq_bytes {} ({}): recording stops at the limit",
                bytes(total as f64),
                p.rx.max_iq_bytes,
                bytes(p.rx.max_iq_bytes as f64)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rxnode_interlock::{needs_escape, ClkinCompareStep, GainSpec, RxCaptureStep, RxSweepStep};

    /// The prompt shows every radio setting a step writes (a bias-T powers the
    /// antenna port), its stream args, AGC, a manual correction and a sweep's interval.
    #[test]
    fn the_prompt_shows_radio_settings_and_the_interval() {
        let w: RxSweepStep = serde_json::from_str(
            r#"{"device": "driver=rxsim", "start_hz": 88e6, "stop_hz": 108e6, "bin_hz": 10e3,
                "repeats": 3, "interval_s": 60, "settings": {"biastee": "true"},
                "stream_args": {"bufflen": "4096"}, "agc": true, "ppm": -1.5}"#,
        )
        .expect("step");
        let line = Step::RxSweep(w).describe();
        for want in [
            "one pass every",
            "radio settings written: biastee=true",
            "stream args bufflen=4096",
            "AGC on",
            "manual frequency correction -1.5 ppm",
        ] {
            assert!(line.contains(want), "{want:?} not in {line}");
        }
        let c: RxCaptureStep = serde_json::from_str(
            r#"{"device": "driver=rxsim", "frequency_hz": 100e6, "sample_rate_hz": 2e6,
                "duration_s": 1, "settings": {"bias\u001b[2J": "1"}}"#,
        )
        .expect("step");
        let text = radio_settings_text(&c.radio());
        assert!(text.contains("bias\\u{1b}[2J=1"), "{text}");
    }

    /// Every character that could move the cursor, reorder or hide text is shown as
    /// an escape, and nothing else changes.
    #[test]
    fn controls_c1_bidi_and_zero_width_are_escaped() {
        let s = "a\u{9b}31m b\u{202e}c\u{1b}[2J d\u{200b}e\u{2066}f\u{7f}g\u{2028}h\tå";
        let e = escaped(s);
        assert_eq!(
            e,
            "a\\u{9b}31m b\\u{202e}c\\u{1b}[2J d\\u{200b}e\\u{2066}f\\u{7f}g\\u{2028}h\\u{9}å"
        );
        assert!(e.chars().all(|c| !needs_escape(c)));
    }

    #[test]
    fn body_is_wrapped_and_cut_at_forty_lines() {
        let body: String = (1..=63).map(|i| format!("line {i}\n")).collect();
        let v = body_view(&format!("\n\n{body}\n"));
        assert_eq!(v.lines.len(), 40);
        assert_eq!(v.lines[39], "line 40");
        assert_eq!((v.more, v.total), (23, 63));
        let long = "word ".repeat(60);
        let v = body_view(&long);
        assert!(v.lines.len() >= 3 && v.lines.iter().all(|l| l.chars().count() <= BODY_WIDTH));
        assert_eq!(v.lines.concat().trim_end(), long.trim_end());
        assert_eq!(v.more, 0);
    }

    /// A freq_cal step reads in plain units with the policy's verdict: within the
    /// limits, or blocked naming the limit it breaks.
    #[test]
    fn freq_cal_steps_read_in_plain_units_with_their_verdict() {
        let plan: Plan = Plan {
            steps: vec![Step::FreqCal(rxnode_interlock::FreqCalStep {
                device: "driver=rxsim,serial=a".into(),
                method: rxnode_interlock::FreqCalMethod::Gsm,
                frequency_hz: 935.2e6,
                sample_rate_hz: 1e6,
                gain_db: Some(GainSpec::Total(30.0)),
                duration_s: 6.0,
            })],
        };
        let v = steps(&plan, Some(&Policy::default()));
        assert_eq!(
            v[0].summary,
            "freq_cal driver=rxsim,serial=a: measures the radio's frequency error from the GSM BCCH \
             carrier (FCCH bursts) at 935.200 MHz, 1.000 MS/s, gain 30 dB, 6.0 s, receive only, no IQ recorded"
        );
        assert_eq!(
            (v[0].verdict, v[0].transmits, v[0].iq_bytes),
            (Some("within policy"), false, 0)
        );
        let mut tight = Policy::default();
        tight.rx.max_duration_s = 2.0;
        let v = steps(&plan, Some(&tight));
        assert_eq!(v[0].verdict, Some("blocked"));
        assert_eq!(
            v[0].reason.as_deref(),
            Some("duration_s 6 exceeds rx.max_duration_s 2")
        );
    }

    /// A `clkin_compare` step is described with both radios, its settings in plain
    /// units, the tolerance and the clock sources, and the policy's verdict names
    /// the radio and the limit.
    #[test]
    fn a_comparison_step_is_described_with_both_radios_and_its_verdict() {
        let step = Step::ClkinCompare(ClkinCompareStep {
            devices: vec![
                "driver=uhd,serial=M1".into(),
                "driver=hackrf,\u{1b}[2J".into(),
            ],
            frequency_hz: 100e6,
            sample_rate_hz: 2e6,
            gain_db: Some(GainSpec::Total(20.0)),
            duration_s: 2.0,
            tone_hz: 100.2e6,
            tolerance_ppb: 10.0,
            clock_sources: Some(vec!["internal".into(), "external".into()]),
        });
        let plan = Plan { steps: vec![step] };
        let policy = Policy::from_json(r#"{"rx": {"max_duration_s": 1}}"#).expect("policy");
        let v = steps(&plan, Some(&policy));
        let s = &v[0].summary;
        assert!(
            s.contains("MASTER driver=uhd,serial=M1 and SLAVE driver=hackrf,\\u{1b}[2J"),
            "{s}"
        );
        assert!(
            s.contains("100.000 MHz, 2.000 MS/s, gain 20 dB, 2.0 s each, tone 100.200 MHz"),
            "{s}"
        );
        assert!(
            s.contains("±10 ppb") && s.contains("internal/external"),
            "{s}"
        );
        assert!(!v[0].transmits);
        assert_eq!(v[0].verdict, Some("blocked"));
        assert_eq!(
            v[0].reason.as_deref(),
            Some("MASTER: duration_s 2 exceeds rx.max_duration_s 1")
        );
    }
}
