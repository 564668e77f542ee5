//! The policy's parsing and its checks of steps.
use super::*;
use crate::plan::{check_clkin_compare, check_rx_step};
use crate::RxCaptureStep;

fn step() -> RxCaptureStep {
    RxCaptureStep {
        record_iq: true,
        ..RxCaptureStep::plain(
            "driver=rxsim".into(),
            100e6,
            2e6,
            Some(crate::sweep::GainSpec::Total(20.0)),
            2.0,
        )
    }
}

/// NaN or negative values must not slip
/// past the limits, which were written as `x > max` (false for NaN).
#[test]
fn non_finite_or_negative_values_are_refused_whatever_the_limits() {
    let p = RxPolicy::default();
    for (dur, rate, gain) in [
        (f64::NAN, 2e6, Some(20.0)),
        (-1.0, 2e6, Some(20.0)),
        (1.0, f64::NAN, Some(20.0)),
        (1.0, f64::INFINITY, Some(20.0)),
        (1.0, 0.0, Some(20.0)),
        (1.0, 2e6, Some(f64::NAN)),
    ] {
        let mut s = step();
        s.duration_s = dur;
        s.sample_rate_hz = rate;
        s.gain_db = gain.map(crate::sweep::GainSpec::Total);
        assert!(
            matches!(check_rx_step(&s, &p), Err(Error::Policy(_))),
            "{dur} {rate} {gain:?}"
        );
    }
    assert!(check_rx_step(&step(), &p).is_ok());
}

#[test]
fn defaults_and_full() {
    let p = Policy::from_json("{}").unwrap();
    assert_eq!(p.rx.max_duration_s, 60.0);
    assert_eq!(p.rx.max_iq_bytes, 4 * 1024 * 1024 * 1024);
    assert!(p.tx.is_none());
    let p = Policy::from_json(
        r#"{"rx": {"max_duration_s": 5, "max_sample_rate_hz": 10e6, "max_gain_db": 40, "max_iq_bytes": 1000},
            "tx": {"allowed_ranges_hz": [[433.05e6, 434.79e6]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    )
    .unwrap();
    assert_eq!(p.rx.max_sample_rate_hz, Some(10e6));
    let tx = p.tx.unwrap();
    assert_eq!(tx.allowed_ranges_hz, vec![[433.05e6, 434.79e6]]);
    assert_eq!(tx.max_gain_db, 10.0);
}

#[test]
fn status_publication_is_off_unless_the_policy_says_so() {
    assert!(Policy::from_json("{}").unwrap().status.is_none());
    let p = Policy::from_json(r#"{"status": {"publish_every_s": 300}}"#).unwrap();
    assert_eq!(p.status.map(|s| s.publish_every_s), Some(300.0));
    for (text, needle) in [
        (
            r#"{"status": {"publish_every_s": 0.1}}"#,
            "status.publish_every_s",
        ),
        (
            r#"{"status": {"publish_every_s": 90000}}"#,
            "status.publish_every_s",
        ),
        (r#"{"status": {}}"#, "missing field `publish_every_s`"),
        (
            r#"{"status": {"publish_every_s": 60, "push_to": "x"}}"#,
            "unknown field",
        ),
        (r#"{"status": 300}"#, "status must be a JSON object"),
    ] {
        let e = Policy::from_json(text).unwrap_err().to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn rejects_bad_policies() {
    for (text, needle) in [
        ("", "EOF"),
        ("[]", "invalid type"),
        (r#"{"rx": [1, 2, 3, 4]}"#, "rx must be a JSON object"),
        (r#"{"tx": [[[1, 2]], 0, 1]}"#, "tx must be a JSON object"),
        (
            r#"[{"max_duration_s": 1}, {"allowed_ranges_hz": [[1, 2]], "max_gain_db": 0, "max_duration_s": 1}]"#,
            "must be a JSON object",
        ),
        (
            r#"{"rx": {"max_duration": 5}}"#,
            "unknown field `max_duration`",
        ),
        (r#"{"danger": 1}"#, "unknown field `danger`"),
        (
            r#"{"rx": {"max_duration_s": 0}}"#,
            "rx.max_duration_s must be a positive",
        ),
        (r#"{"rx": {"max_duration_s": -1}}"#, "rx.max_duration_s"),
        (
            r#"{"rx": {"max_sample_rate_hz": 0}}"#,
            "rx.max_sample_rate_hz",
        ),
        (r#"{"rx": {"max_iq_bytes": -1}}"#, "invalid value"),
        (
            r#"{"tx": {"allowed_ranges_hz": [[2, 1]], "max_gain_db": 0, "max_duration_s": 1}}"#,
            "lo < hi",
        ),
        (
            r#"{"tx": {"allowed_ranges_hz": [[0, 1]], "max_gain_db": 0, "max_duration_s": 1}}"#,
            "allowed_ranges_hz[0]",
        ),
        (
            r#"{"tx": {"allowed_ranges_hz": [[1, 2]], "max_gain_db": 0, "max_duration_s": 0}}"#,
            "tx.max_duration_s",
        ),
        (
            r#"{"tx": {"allowed_ranges_hz": [[1, 2]], "max_duration_s": 1}}"#,
            "missing field `max_gain_db`",
        ),
        (
            r#"{"tx": {"allowed_ranges_hz": [[1, 2, 3]], "max_gain_db": 0, "max_duration_s": 1}}"#,
            "invalid length",
        ),
    ] {
        match Policy::from_json(text) {
            Err(Error::InvalidPolicy(m)) => assert!(m.contains(needle), "{text}: {m}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn health_self_tests_are_checked_and_named() {
    let p = Policy::from_json(r#"{"health": {"radios": ["driver=rtlsdr"]}}"#).unwrap();
    let h = p.health.unwrap();
    assert_eq!(h.self_test_every_s, 86_400.0);
    assert_eq!(h.radios, vec!["driver=rtlsdr".to_owned()]);
    let p = Policy::from_json(
        r#"{"health": {"self_test_every_s": 60, "radios": ["driver=hackrf"],
            "clkin": {"driver=hackrf": {"tone_hz": 100.1e6, "tolerance_ppm": 2}}}}"#,
    )
    .unwrap();
    assert_eq!(p.health.unwrap().clkin["driver=hackrf"].tone_hz, 100.1e6);
    for (text, needle) in [
        (r#"{"health": 1}"#, "health must be a JSON object"),
        (
            r#"{"health": {"self_test_every_s": 1}}"#,
            "health.self_test_every_s must be a finite number of at least 10",
        ),
        (r#"{"health": {"radios": [""]}}"#, "health.radios[0]"),
        (r#"{"health": {"every": 5}}"#, "unknown field `every`"),
        (
            r#"{"health": {"radios": ["a=1"], "clkin": {"b=2": {"tone_hz": 1e6, "tolerance_ppm": 1}}}}"#,
            "not in health.radios",
        ),
        (
            r#"{"health": {"radios": ["a=1"], "clkin": {"a=1": {"tone_hz": -1, "tolerance_ppm": 1}}}}"#,
            "health.clkin",
        ),
    ] {
        match Policy::from_json(text) {
            Err(Error::InvalidPolicy(m)) => assert!(m.contains(needle), "{text}: {m}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn rx_limits_named() {
    let p = RxPolicy {
        max_duration_s: 2.0,
        max_sample_rate_hz: Some(2e6),
        max_gain_db: Some(20.0),
        max_iq_bytes: 32_000_000,
        ..RxPolicy::default()
    };
    // Exactly at every limit: allowed (2 s × 2 MS/s × 8 B = 32 MB).
    check_rx_step(&step(), &p).unwrap();
    let over = |f: &dyn Fn(&mut RxCaptureStep), needle: &str| {
        let mut s = step();
        f(&mut s);
        match check_rx_step(&s, &p) {
            Err(Error::Policy(m)) => assert!(m.contains(needle), "{m}"),
            o => panic!("{o:?}"),
        }
    };
    over(&|s| s.duration_s = 2.001, "rx.max_duration_s 2");
    over(&|s| s.sample_rate_hz = 2.1e6, "rx.max_sample_rate_hz");
    over(
        &|s| s.gain_db = Some(crate::sweep::GainSpec::Total(20.5)),
        "rx.max_gain_db 20",
    );
    let p2 = RxPolicy {
        max_iq_bytes: 31_999_999,
        ..p.clone()
    };
    let mut s = step();
    assert!(
        matches!(check_rx_step(&s, &p2), Err(Error::Policy(m)) if m.contains("rx.max_iq_bytes"))
    );
    // A ci16 recording takes 4 bytes a sample, half of cf32's 8.
    s.record_format = Some(crate::IqSampleFormat::Ci16);
    check_rx_step(&s, &p2).unwrap();
    let p3 = RxPolicy {
        max_iq_bytes: 15_999_999,
        ..p.clone()
    };
    assert!(
        matches!(check_rx_step(&s, &p3), Err(Error::Policy(m)) if m.contains("16000000 bytes"))
    );
    s.record_format = None;
    s.record_iq = false;
    check_rx_step(&s, &p2).unwrap();
    // No gain asked under a gain limit is refused (the radio
    // would keep whatever gain it had, perhaps above the limit); without a gain
    // limit, no gain is fine.
    let mut s = step();
    s.gain_db = None;
    assert!(
        matches!(check_rx_step(&s, &p), Err(Error::Policy(m)) if m.contains("gain_db is required while rx.max_gain_db 20"))
    );
    let no_gain_limit = RxPolicy {
        max_gain_db: None,
        ..p.clone()
    };
    check_rx_step(&s, &no_gain_limit).unwrap();
    // A NaN limit (a policy built by hand, not parsed) refuses instead of passing.
    for bad in [
        RxPolicy {
            max_duration_s: f64::NAN,
            ..p.clone()
        },
        RxPolicy {
            max_sample_rate_hz: Some(f64::NAN),
            ..p.clone()
        },
        RxPolicy {
            max_gain_db: Some(f64::NAN),
            ..p.clone()
        },
    ] {
        assert!(check_rx_step(&step(), &bad).is_err(), "{bad:?}");
    }
    assert!(exceeds(1.0, f64::NAN) && exceeds(f64::NAN, 1.0) && !exceeds(1.0, 1.0));
}

/// A `clkin_compare` step is bounded like a capture on each of its radios, and
/// the refusal names the radio and the limit.
#[test]
fn clkin_compare_is_bounded_like_a_capture_on_both_radios() {
    let p = RxPolicy {
        max_duration_s: 2.0,
        max_sample_rate_hz: Some(2e6),
        max_gain_db: Some(20.0),
        max_iq_bytes: 1,
        ..RxPolicy::default()
    };
    let mut s = crate::ClkinCompareStep {
        devices: vec![
            "driver=rxsim,serial=m".into(),
            "driver=rxsim,serial=s".into(),
        ],
        frequency_hz: 100e6,
        sample_rate_hz: 2e6,
        gain_db: Some(crate::sweep::GainSpec::Total(20.0)),
        duration_s: 2.0,
        tone_hz: 100.2e6,
        tolerance_ppb: 10.0,
        clock_sources: None,
    };
    // At every limit, and no IQ is recorded whatever the IQ budget.
    check_clkin_compare(&s, &p).unwrap();
    check_step(
        &Step::ClkinCompare(s.clone()),
        &Policy {
            rx: p.clone(),
            tx: None,
            ..Default::default()
        },
    )
    .unwrap();
    s.duration_s = 2.5;
    assert!(matches!(check_clkin_compare(&s, &p),
        Err(Error::Policy(m)) if m.contains("MASTER: duration_s 2.5 exceeds rx.max_duration_s 2")));
    s.duration_s = 2.0;
    s.sample_rate_hz = 4e6;
    assert!(matches!(check_clkin_compare(&s, &p),
        Err(Error::Policy(m)) if m.contains("rx.max_sample_rate_hz")));
    s.sample_rate_hz = 2e6;
    s.gain_db = None;
    assert!(matches!(check_clkin_compare(&s, &p),
        Err(Error::Policy(m)) if m.contains("gain_db is required")));
    s.gain_db = Some(crate::sweep::GainSpec::Total(20.0));
    s.devices.pop();
    assert!(matches!(check_clkin_compare(&s, &p),
        Err(Error::Policy(m)) if m.contains("exactly two radios")));
}
