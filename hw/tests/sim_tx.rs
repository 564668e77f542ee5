//! TX only through a permit, against the real libSoapySDR with rxsim.
use rxnode_hw::{Error, RxRadio};
use rxnode_interlock::{
    authorize, validate_task, verify_authorization, Approval, Policy, TxPermit, ValidateOptions,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::{init, log_lines};

/// Count log lines `<ts> pid=<pid> <event> <dir> serial=<serial>`.
/// How many times the radio `serial` was made (opened) in this process's log: the
/// anchor that shows a zero count below is read from a log that is really written.
fn made(serial: &str) -> usize {
    let tail = format!(" make serial={serial}");
    log_lines(serial)
        .iter()
        .filter(|l| l.ends_with(&tail))
        .count()
}

fn count(serial: &str, event: &str, dir: &str) -> usize {
    let tag = format!("serial={serial}");
    log_lines(serial)
        .iter()
        .filter(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 5 && w[2] == event && w[3] == dir && w[4] == tag
        })
        .count()
}

/// A real permit: RED task text, approval, `AUTHORIZE RF TX`, policy.
fn permit(id: &str, device: &str, duration_s: f64) -> TxPermit {
    let text = format!(
        "TASK_ID = {id}\nTASK_TITLE = Tone test\nSOURCE_BRANCH = video-development\n\
EXPECTED_HEAD = 0123456789abcdef0123456789abcdef01234567\nREQUIRES_APPROVAL = YES\n\
HARDWARE_ACCESS = YES\nRF_RX = NO\nRF_TX = YES\nALLOW_COMMIT = NO\nALLOW_PUSH = NO\n\n\
Key a tone.\n\n```rx-plan\n{{\"steps\": [{{\"op\": \"tx_tone\", \"device\": \"{device}\", \
\"frequency_hz\": 434.0e6, \"sample_rate_hz\": 1.0e6, \"tone_offset_hz\": 50e3, \
\"gain_db\": 0, \"duration_s\": {duration_s}}}]}}\n```\n"
    );
    let task = validate_task(&text, &ValidateOptions::default()).expect("valid task");
    let approval = Approval::new(&task, "c0ffee", "2026-01-01T00:00:00+00:00");
    let auth = verify_authorization(
        &task,
        &approval,
        "AUTHORIZE RF TX",
        "2026-01-01T00:01:00+00:00",
    )
    .expect("authorization");
    let policy = Policy::from_json(
        r#"{"tx": {"allowed_ranges_hz": [[433.0e6, 435.0e6]], "max_gain_db": 10, "max_duration_s": 2}}"#,
    )
    .expect("policy");
    authorize(&task, &approval, auth, 0, &policy).expect("permit")
}

#[test]
fn tx_through_a_permit_opens_exactly_one_stream_and_tears_it_down() {
    init();
    let dev = "driver=rxsim,serial=tx1";
    let radio = RxRadio::open(dev).expect("open");
    let mut tx = radio.into_tx(permit("TX_1", dev, 0.3)).expect("into_tx");
    let cancel = AtomicBool::new(false);
    let t = Instant::now();
    let r = tx.transmit_tone(&cancel).expect("transmit");
    let el = t.elapsed();
    assert!(!r.cancelled);
    assert_eq!(r.task_id, "TX_1");
    assert_eq!(
        (r.frequency_hz, r.tone_offset_hz, r.gain_db),
        (434.0e6, 50e3, 0.0)
    );
    assert!(
        r.samples_sent > 200_000 && r.samples_sent <= 300_000,
        "{r:?}"
    );
    assert!(r.stopped_unix_s - r.started_unix_s < 0.6, "{r:?}");
    assert!(el >= Duration::from_millis(200), "paced: {el:?}");
    for ev in [
        "setupStream",
        "activateStream",
        "deactivateStream",
        "closeStream",
    ] {
        assert_eq!(count("tx1", ev, "TX"), 1, "{ev}");
    }
    // The permit is single-use.
    assert!(matches!(
        tx.transmit_tone(&cancel),
        Err(Error::PermitUsed { .. })
    ));
    assert_eq!(count("tx1", "setupStream", "TX"), 1);
}

#[test]
fn a_permit_for_other_device_args_is_refused() {
    init();
    let radio = RxRadio::open("driver=rxsim,serial=tx2").expect("open");
    match radio.into_tx(permit("TX_2", "driver=rxsim,serial=other", 0.1)) {
        Err(e @ Error::PermitDevice { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("serial=other") && m.contains("serial=tx2"),
                "{m}"
            );
        }
        other => panic!("expected a device mismatch, got {other:?}"),
    }
    assert!(made("tx2") >= 1, "the event log holds tx2's open");
    assert_eq!(count("tx2", "setupStream", "TX"), 0);
}

#[test]
fn cancel_stops_the_tone_within_milliseconds() {
    init();
    let dev = "driver=rxsim,serial=tx3";
    let mut tx = RxRadio::open(dev)
        .expect("open")
        .into_tx(permit("TX_3", dev, 1.5))
        .expect("into_tx");
    let cancel = Arc::new(AtomicBool::new(false));
    let c2 = Arc::clone(&cancel);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        c2.store(true, Ordering::SeqCst);
    });
    let r = tx.transmit_tone(&cancel).expect("transmit");
    setter.join().expect("thread");
    assert!(r.cancelled, "{r:?}");
    assert!(r.stopped_unix_s - r.started_unix_s < 0.5, "{r:?}");
    assert!(r.samples_sent < 1_000_000, "{r:?}");
    assert_eq!(count("tx3", "deactivateStream", "TX"), 1);
    assert_eq!(count("tx3", "closeStream", "TX"), 1);
}

/// A cancel that arrives before keying (Ctrl-C during
/// set-up) used to open and activate the TX stream briefly all the same.
#[test]
fn a_cancel_before_keying_never_opens_a_tx_stream() {
    init();
    let dev = "driver=rxsim,serial=tx7";
    let mut tx = RxRadio::open(dev)
        .expect("open")
        .into_tx(permit("TX_7", dev, 1.0))
        .expect("into_tx");
    let r = tx.transmit_tone(&AtomicBool::new(true)).expect("transmit");
    assert!(r.cancelled, "{r:?}");
    assert_eq!(r.samples_sent, 0, "{r:?}");
    assert!(made("tx7") >= 1, "the event log holds tx7's open");
    assert_eq!(count("tx7", "setupStream", "TX"), 0);
    assert_eq!(count("tx7", "activateStream", "TX"), 0);
}

#[test]
fn a_driver_that_refuses_tx_gives_a_typed_error_and_no_stream() {
    init();
    let dev = "driver=rxsim,serial=tx4,tx=deny";
    let mut tx = RxRadio::open(dev)
        .expect("open")
        .into_tx(permit("TX_4", dev, 0.1))
        .expect("into_tx");
    match tx.transmit_tone(&AtomicBool::new(false)) {
        Err(e @ Error::Driver { .. }) => {
            let m = e.to_string();
            assert!(m.contains("tx=deny") && m.contains("tx stream"), "{m}");
        }
        other => panic!("expected a driver error, got {other:?}"),
    }
    assert!(made("tx4") >= 1, "the event log holds tx4's open");
    assert_eq!(count("tx4", "activateStream", "TX"), 0);
}

#[test]
fn a_stream_error_mid_tone_still_tears_the_stream_down() {
    init();
    let dev = "driver=rxsim,serial=tx5,tx_fail_after=50000";
    let mut tx = RxRadio::open(dev)
        .expect("open")
        .into_tx(permit("TX_5", dev, 0.5))
        .expect("into_tx");
    match tx.transmit_tone(&AtomicBool::new(false)) {
        Err(e @ Error::Stream { .. }) => assert!(e.to_string().contains("serial=tx5"), "{e}"),
        other => panic!("expected a stream error, got {other:?}"),
    }
    for ev in [
        "setupStream",
        "activateStream",
        "deactivateStream",
        "closeStream",
    ] {
        assert_eq!(count("tx5", ev, "TX"), 1, "{ev}");
    }
}

/// A driver that takes every sample at once (rxsim `pace=0`: like a SoapyRemote link
/// with socket buffers of many MB) still gets the tone at the pace of its sample rate:
/// the tone lasts its duration on the wall clock (not the time it took to queue), and
/// a cancel in the middle stops it with at most ~50 ms of tone handed over ahead of
/// the clock, so nothing queued far ahead keeps the far transmitter keyed.
#[test]
fn a_deep_buffered_driver_is_paced_by_the_host_and_stops_on_cancel() {
    init();
    let dev = "driver=rxsim,serial=txdeep,pace=0";
    let radio = RxRadio::open(dev).expect("open");
    let mut tx = radio.into_tx(permit("TX_DEEP", dev, 0.5)).expect("into_tx");
    let cancel = AtomicBool::new(false);
    let t = Instant::now();
    let r = tx.transmit_tone(&cancel).expect("transmit");
    let el = t.elapsed();
    assert_eq!(r.samples_sent, 500_000, "{r:?}");
    assert!(el >= Duration::from_millis(500), "host-paced: {el:?}");
    // The stream stays active until the last sample handed over has had its time
    // on air: the driver still held up to 50 ms of tone when the last write returned.
    assert!(r.on_air_s >= 0.5, "the tone's end was cut off: {r:?}");
    assert!(r.complete(), "{r:?}");

    let radio = RxRadio::open(dev).expect("open");
    let mut tx = radio
        .into_tx(permit("TX_DEEP2", dev, 1.5))
        .expect("into_tx");
    let cancel = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&cancel);
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        c.store(true, Ordering::SeqCst);
    });
    let r = tx.transmit_tone(&cancel).expect("transmit");
    stopper.join().expect("stopper");
    assert!(r.cancelled, "{r:?}");
    let on_air = r.stopped_unix_s - r.started_unix_s;
    // Handed over: what the clock allowed at the cancel plus at most the lead (50 ms)
    // and one block; far below the 1.5 s an unpaced loop would have queued.
    let ahead = r.samples_sent as f64 / 1e6 - on_air;
    assert!(ahead <= 0.06, "{ahead} s of tone ahead of the clock: {r:?}");
    assert!(r.samples_sent < 600_000, "{r:?}");
}
