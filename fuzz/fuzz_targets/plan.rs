//! The rx-plan parser: a fixed valid RED header (hardware, RX and TX allowed)
//! followed by a fuzzed body, so the input reaches the plan JSON and the
//! body/header cross-checks every time.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rxnode_interlock::{validate_task, GainSpec, RiskLevel, Step, ValidateOptions};

const HEADER: &str = "TASK_ID = FUZZ_PLAN\nTASK_TITLE = fuzz\nSOURCE_BRANCH = video-development\n\
EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
HARDWARE_ACCESS = YES\nRF_RX = YES\nRF_TX = YES\nALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n";

fuzz_target!(|data: &[u8]| {
    let Ok(body) = std::str::from_utf8(data) else {
        return;
    };
    // Half the time wrap the input in an rx-plan fence so the JSON parser is hit.
    let text = if data.first().is_some_and(|b| b & 1 == 0) {
        format!("{HEADER}```rx-plan\n{body}\n```\n")
    } else {
        format!("{HEADER}{body}")
    };
    if let Ok(t) = validate_task(&text, &ValidateOptions::default()) {
        assert_eq!(t.risk(), RiskLevel::Red);
        if let Some(p) = t.plan() {
            for s in &p.steps {
                // Every accepted number is finite and positive where it must be:
                // no NaN, infinity or zero reaches a radio.
                match s {
                    Step::TxTone(tx) => {
                        for v in [tx.frequency_hz, tx.sample_rate_hz, tx.duration_s] {
                            assert!(v.is_finite() && v > 0.0, "tx step {tx:?}");
                        }
                        assert!(tx.tone_offset_hz.is_finite() && tx.gain_db.is_finite());
                    }
                    Step::RxCapture(rx) => {
                        for v in [rx.frequency_hz, rx.sample_rate_hz, rx.duration_s] {
                            assert!(v.is_finite() && v > 0.0, "rx step {rx:?}");
                        }
                        assert!(rx.gain_db.as_ref().is_none_or(|g| match g {
                            GainSpec::Total(g) => g.is_finite(),
                            GainSpec::Elements(m) => m.values().all(|v| v.is_finite()),
                        }));
                        assert!(rx.bandwidth_hz.is_none_or(|b| b.is_finite() && b > 0.0));
                        if let Some(c) = &rx.clkin {
                            assert!(c.tone_hz.is_finite() && c.tolerance_ppm.is_finite());
                        }
                    }
                    _ => {}
                }
            }
        }
    }
});
