//! The stall watchdog over SoapyRemote: a served radio whose stream stops delivering
//! ends the capture PARTIAL within 3 s, and in a run the radio is re-tested over the
//! network and the next task runs on it.
use super::*;

/// `rxnode capture` on a served rxsim that stalls 0.5 s into the stream: PARTIAL,
/// "stream stalled at sample N", within 3 s of the stall.
#[test]
fn a_served_stream_that_stalls_ends_partial_within_3_s() {
    let srv = Server::start();
    let t0 = Instant::now();
    let out = capture(
        &mut client(),
        &srv.device("serial=RSTALL,rx_stall_after_s=0.5"),
        &["--sample-rate-hz", "1e6", "--duration-s", "4"],
    );
    let took = t0.elapsed();
    expect_exit!(out, 1);
    let s = json_of(&out);
    assert_eq!(s["status"], "PARTIAL", "{s:#}");
    assert_eq!(s["stop_reason"], "stalled", "{s:#}");
    let got = s["samples_received"].as_u64().unwrap();
    assert!(got > 0 && got < 4_000_000, "{s:#}");
    assert!(
        f(&s, "duration_s") < 0.5 + 3.0,
        "the capture ran {} s; the stall began at 0.5 s",
        f(&s, "duration_s")
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(
        s["errors"]
            .to_string()
            .contains(&format!("stream stalled at sample {got}")),
        "{s:#}"
    );
    assert!(
        srv.events().iter().any(|l| l.contains("stallRead RX")),
        "the server-side radio stalled: {:?}",
        srv.events()
    );
}

/// A run over SoapyRemote: the stalled capture ends PARTIAL, the served radio is
/// re-tested over the network (and passes: the fault shows only after 0.6 s), and
/// the next task's capture on it runs.
#[test]
fn a_run_on_a_served_radio_that_stalls_re_tests_it_and_goes_on() {
    let srv = Server::start();
    let lab = Lab::new();
    // A task reaches a server only when the node's policy lists it.
    lab.set_policy(&format!(
        r#"{{"rx": {{"allowed_remote_servers": ["{}"]}}}}"#,
        srv.url()
    ));
    let dev = srv.device("serial=RRUN,rx_stall_after_s=0.6");
    let yellow = [
        ("HARDWARE_ACCESS", "YES"),
        ("RF_RX", "YES"),
        ("RISK_LEVEL", "YELLOW"),
    ];
    for (id, duration) in [("REMOTE_STALL_1", 3.0), ("REMOTE_STALL_2", 0.3)] {
        let plan = format!(
            r#"{{"steps": [{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100e6,
               "sample_rate_hz": 1e6, "gain_db": 10, "duration_s": {duration}}}]}}"#
        );
        lab.post_and_approve(id, &yellow, Some(&plan));
        let out = client_env(lab.rxnode().args(["run", id]))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let r: Value =
            serde_json::from_slice(&std::fs::read(lab.outbox(id).join("RX_RESULT.json")).unwrap())
                .unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
        if id == "REMOTE_STALL_1" {
            expect_exit!(out, 1);
            assert_eq!(r["checks"][0]["status"], "PARTIAL", "{r:#}");
            assert_eq!(r["captures"][0]["stop_reason"], "stalled", "{r:#}");
            let errors = r["errors"].to_string();
            assert!(
                errors.contains("marked BAD; re-tested: PASS") && errors.contains("now GOOD"),
                "{errors}"
            );
        } else {
            expect_exit!(out, 0);
            assert_eq!(r["checks"][0]["status"], "PASS", "{r:#}");
        }
    }
}
