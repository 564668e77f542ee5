//! Plans over the remote: YELLOW captures, RED TX once, Ctrl-C and a killed server during TX.
use super::*;

// ------------------------------------------------------------ plans over the remote

/// An in-policy TX policy for the radio served at `srv` (its server listed).
fn tx_policy_ok(srv: &Server) -> String {
    format!(
        r#"{{"rx": {{"max_duration_s": 10}},
 "tx": {{"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 3,
  "allowed_remote_servers": ["{}"]}}}}"#,
        srv.url()
    )
}

/// A lab whose RX laptop reaches the radio only through the server.
struct Rig {
    lab: Lab,
}

impl Rig {
    fn new() -> Rig {
        Rig { lab: Lab::new() }
    }

    fn post_and_approve(&self, id: &str, overrides: &[(&str, &str)], plan: &str) {
        self.lab.post_and_approve(id, overrides, Some(plan));
    }

    fn set_policy(&self, json: Option<&str>) {
        match json {
            Some(j) => self.lab.set_policy(j),
            None => self.lab.remove_policy(),
        }
    }

    fn spawn_run(&self, id: &str, stdin: &str) -> Child {
        let mut c = self.lab.rxnode();
        client_env(&mut c);
        spawn_fed(c.args(["run", id]), stdin.as_bytes())
    }

    fn run(&self, id: &str, stdin: &str) -> Output {
        self.spawn_run(id, stdin).wait_with_output().unwrap()
    }

    fn result(&self, id: &str) -> Value {
        let p = self.lab.outbox(id).join("RX_RESULT.json");
        let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        serde_json::from_slice(&b).unwrap()
    }
}

fn overrides(risk: &str) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("HARDWARE_ACCESS", "YES"),
        ("RISK_LEVEL", "YELLOW"),
        ("RF_RX", "YES"),
    ];
    if risk == "RED" {
        v = vec![
            ("HARDWARE_ACCESS", "YES"),
            ("RF_TX", "YES"),
            ("RISK_LEVEL", "RED"),
        ];
    }
    v
}

/// TX stream events of the server-side rxsim: `(event, serial)`.
fn tx_events(srv: &Server) -> Vec<(String, String)> {
    srv.events()
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[3] == "TX").then(|| {
                (
                    f[2].to_owned(),
                    f[4].trim_start_matches("serial=").to_owned(),
                )
            })
        })
        .collect()
}

fn event_time(srv: &Server, what: &str) -> Option<f64> {
    srv.events()
        .iter()
        .find(|l| l.ends_with(what))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
}

/// A YELLOW plan on `driver=remote,…` captures with 0 lost at 2 MS/s
/// and reports the actual settings; with `record_format: ci16` the recording is the
/// native SigMF `ci16_le`, 4 bytes per sample.
#[test]
fn yellow_plan_over_the_remote_captures_without_loss() {
    let srv = Server::start();
    let rig = Rig::new();
    let id = "REMOTE_YELLOW_1";
    let dev = srv.device("serial=far2,tone_hz=100.1e6");
    let plan = format!(
        r#"{{"steps": [{{"op": "rx_capture", "device": "{dev}", "frequency_hz": 100.0e6,
        "sample_rate_hz": 2.0e6, "gain_db": 20, "duration_s": 2.0, "fft_size": 2048,
        "record_iq": true, "record_format": "ci16"}}]}}"#
    );
    // A task reaches a server only when the node's policy lists it.
    rig.set_policy(Some(&format!(
        r#"{{"rx": {{"max_duration_s": 10, "allowed_remote_servers": ["{}"]}}}}"#,
        srv.url()
    )));
    rig.post_and_approve(id, &overrides("YELLOW"), &plan);
    let out = rig.run(id, "");
    expect_exit!(out, 0);
    let r = rig.result(id);
    assert_eq!(r["status"], "PASS", "{r:#}");
    let c = &r["captures"][0];
    assert_eq!(c["samples_received"], 4_000_000, "{c:#}");
    assert_eq!(c["samples_processed"], 4_000_000, "{c:#}");
    assert_eq!(c["overflows"], 0, "{c:#}");
    assert_eq!(c["dropped_samples"], 0, "{c:#}");
    assert_eq!(f(&c["actual"], "sample_rate_hz"), 2e6, "{c:#}");
    assert_eq!(f(&c["actual"], "frequency_hz"), 100e6, "{c:#}");
    assert_eq!(f(&c["actual"], "gain_db"), 20.0, "{c:#}");
    let peak = f(&c["peaks"][0], "frequency_hz");
    assert!((peak - 100.1e6).abs() < 2e6 / 2048.0, "tone at {peak}");
    let files = c["iq_files"].as_array().unwrap();
    assert_eq!(files[0]["format"], "sigmf-data", "{files:?}");
    assert_eq!(files[0]["bytes"], 4 * 4_000_000, "ci16: 4 bytes a sample");
    let meta: Value = serde_json::from_slice(
        &std::fs::read(rig.lab.rx.join(files[1]["path"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["global"]["core:datatype"], "ci16_le");
}

/// RED TX over the remote. The remote server enforces nothing: every
/// refusal is made by this node and opens no TX stream in the server-side rxsim; the
/// one authorized in-policy run opens and closes exactly one.
#[test]
fn red_tx_over_the_remote_is_refused_or_runs_once() {
    let srv = Server::start();
    let rig = Rig::new();
    let id = "REMOTE_RED_1";
    let dev = srv.device("serial=TXR");
    let plan = format!(
        r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
        "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 0.3}}]}}"#
    );
    rig.post_and_approve(id, &overrides("RED"), &plan);
    let ok = tx_policy_ok(&srv);
    let other = ok.replace(&srv.url(), "tcp://127.0.0.1:1");
    let refusals: [(Option<&str>, &str, &str); 7] = [
        (None, "AUTHORIZE RF TX\n", "no policy"),
        (
            Some(
                r#"{"tx": {"allowed_ranges_hz": [[430000000, 433000000]], "max_gain_db": 10, "max_duration_s": 2}}"#,
            ),
            "AUTHORIZE RF TX\n",
            "out of band",
        ),
        // In band, but the policy lists no remote server / another one.
        (
            Some(
                r#"{"tx": {"allowed_ranges_hz": [[433050000, 434790000]], "max_gain_db": 10, "max_duration_s": 3}}"#,
            ),
            "AUTHORIZE RF TX\n",
            "server not in tx.allowed_remote_servers",
        ),
        (
            Some(other.as_str()),
            "AUTHORIZE RF TX\n",
            "another server listed",
        ),
        (Some(ok.as_str()), "authorize rf tx\n", "wrong case"),
        (Some(ok.as_str()), "AUTHORIZE RF TX \n", "trailing space"),
        (Some(ok.as_str()), "", "no phrase (EOF)"),
    ];
    for (policy, stdin, why) in refusals {
        rig.set_policy(policy);
        let out = rig.run(id, stdin);
        expect_exit!(out, 3, "{why}: refused");
        assert!(tx_events(&srv).is_empty(), "{why}: {:?}", srv.events());
        if why.contains("server") {
            assert!(
                text(&out.stderr).contains("tx.allowed_remote_servers"),
                "{why}: {}",
                show(&out)
            );
        }
    }
    rig.set_policy(Some(ok.as_str()));
    let out = rig.run(id, "AUTHORIZE RF TX\n");
    expect_exit!(out, 0);
    let order: Vec<String> = tx_events(&srv)
        .into_iter()
        .map(|(e, s)| {
            assert_eq!(s, "TXR");
            e
        })
        .collect();
    assert_eq!(
        order,
        [
            "setupStream",
            "activateStream",
            "deactivateStream",
            "closeStream"
        ],
        "{:?}",
        srv.events()
    );
    transmitted_once_for_the_tone(&srv, &rig, id);
}

/// The result of the one authorized run over the remote: PASS, the whole tone sent,
/// the far radio on air for its duration by its own clock; a re-run is refused.
fn transmitted_once_for_the_tone(srv: &Server, rig: &Rig, id: &str) {
    let r = rig.result(id);
    assert_eq!(r["status"], "PASS", "{r:#}");
    assert_eq!(r["tx"]["samples_sent"], 300_000, "{r:#}");
    // The far radio transmitted for the tone's duration, by its own clock, less what
    // is still queued at the end (rxsim's 50 ms "DAC" queue + the ~50 ms TX socket
    // window): the remote stream's 42 MiB default window took the whole tone at once,
    // and rxnode closed the stream (PASS, "sent") after 0.015 s on the server.
    let (on, off) = (
        event_time(srv, " activateStream TX serial=TXR").expect("activateStream TX"),
        event_time(srv, "deactivateStream TX serial=TXR").expect("deactivateStream TX"),
    );
    assert!(
        off - on >= 0.18,
        "server-side TX stream active {:.3} s for a 0.3 s tone",
        off - on
    );
    // Completed: a re-run is refused and opens nothing.
    let out = rig.run(id, "AUTHORIZE RF TX\n");
    expect_exit!(out, 3);
    assert_eq!(tx_events(srv).len(), 4, "{:?}", srv.events());
}

/// Ctrl-C during a TX tone over the remote closes the server-side
/// stream within 200 ms (the server-side rxsim's own time stamps).
#[cfg(unix)]
#[test]
fn ctrl_c_during_remote_tx_closes_the_remote_stream_within_200_ms() {
    let srv = Server::start();
    let rig = Rig::new();
    let id = "REMOTE_RED_SIGINT";
    let dev = srv.device("serial=TXC");
    let plan = format!(
        r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
        "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 2.5}}]}}"#
    );
    rig.post_and_approve(id, &overrides("RED"), &plan);
    rig.set_policy(Some(tx_policy_ok(&srv).as_str()));
    let child = rig.spawn_run(id, "AUTHORIZE RF TX\n");
    let t0 = Instant::now();
    while event_time(&srv, "activateStream TX serial=TXC").is_none() {
        assert!(t0.elapsed() < Duration::from_secs(20), "TX never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(400));
    let sent = unix_now();
    // SAFETY: kill(2) on our own child's PID.
    assert_eq!(
        unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    let closed = event_time(&srv, "closeStream TX serial=TXC")
        .unwrap_or_else(|| panic!("no closeStream TX on the server: {:?}", srv.events()));
    eprintln!(
        "remote TX stream closed on the server {:.1} ms after SIGINT",
        (closed - sent) * 1e3
    );
    assert!(
        closed - sent < 0.2,
        "remote TX stream closed {:.3} s after SIGINT",
        closed - sent
    );
    expect_exit!(out, 1);
    let r = rig.result(id);
    assert_eq!(r["tx"]["cancelled"], true, "{r:#}");
    let order: Vec<String> = tx_events(&srv).into_iter().map(|(e, _)| e).collect();
    assert_eq!(
        order,
        [
            "setupStream",
            "activateStream",
            "deactivateStream",
            "closeStream"
        ]
    );
}

#[test]
fn server_killed_mid_tx_is_reported_honestly() {
    let mut srv = Server::start();
    let rig = Rig::new();
    let id = "REMOTE_RED_KILLED";
    let dev = srv.device("serial=TXK");
    let plan = format!(
        r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
        "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 2.0}}]}}"#
    );
    rig.post_and_approve(id, &overrides("RED"), &plan);
    rig.set_policy(Some(tx_policy_ok(&srv).as_str()));
    let child = rig.spawn_run(id, "AUTHORIZE RF TX\n");
    let t0 = Instant::now();
    while event_time(&srv, "activateStream TX serial=TXK").is_none() {
        assert!(t0.elapsed() < Duration::from_secs(20), "TX never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(400));
    srv.kill();
    let killed = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "took {:?}",
        killed.elapsed()
    );
    expect_exit!(out, 1);
    let r = rig.result(id);
    assert_ne!(r["status"], "PASS", "{r:#}");
    let text = r.to_string();
    assert!(
        text.contains("state after that is unknown") && text.contains("samples accepted"),
        "says what is known about the transmitter: {r:#}"
    );
}

/// A SoapySDRServer frozen (SIGSTOP) for 8 s during an authorized 3 s tone (policy
/// max 5 s) is not waited for: rxnode keys off from its side at the permit's
/// deadline, ends the run ~0.5 s after it while the server is still frozen, and the
/// result is FAIL with "TX state unknown for N s" — never PASS. Once resumed, the
/// server finds its client gone and closes the TX stream.
#[cfg(unix)]
#[test]
fn frozen_server_mid_tx_is_keyed_off_at_the_deadline_and_never_pass() {
    let srv = Server::start();
    let rig = Rig::new();
    let id = "REMOTE_RED_FROZEN";
    let dev = srv.device("serial=TXF");
    let plan = format!(
        r#"{{"steps": [{{"op": "tx_tone", "device": "{dev}", "frequency_hz": 433.92e6,
        "sample_rate_hz": 1.0e6, "tone_offset_hz": 50e3, "gain_db": 0, "duration_s": 3.0}}]}}"#
    );
    rig.post_and_approve(id, &overrides("RED"), &plan);
    rig.set_policy(Some(
        tx_policy_ok(&srv)
            .replace("\"max_duration_s\": 3", "\"max_duration_s\": 5")
            .as_str(),
    ));
    let child = rig.spawn_run(id, "AUTHORIZE RF TX\n");
    let t0 = Instant::now();
    while event_time(&srv, "activateStream TX serial=TXF").is_none() {
        assert!(t0.elapsed() < Duration::from_secs(20), "TX never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let activated = event_time(&srv, "activateStream TX serial=TXF").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    srv.signal(libc::SIGSTOP);
    let frozen = unix_now();
    let out = child.wait_with_output().unwrap();
    let ended = unix_now();
    // Thaw the server 8 s after freezing it, whatever happened.
    let thaw_in = 8.0 - (unix_now() - frozen);
    if thaw_in > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(thaw_in));
    }
    srv.signal(libc::SIGCONT);
    let thawed = unix_now();
    println!(
        "server frozen {:.2} s after activation; rxnode done {:.2} s after activation ({:.2} s before the thaw)",
        frozen - activated,
        ended - activated,
        thawed - ended
    );
    assert!(
        ended - activated < 3.0 + 0.5 + 1.5,
        "rxnode waited for the frozen server: done {:.2} s after activation",
        ended - activated
    );
    expect_exit!(out, 1);
    let r = rig.result(id);
    assert_ne!(r["status"], "PASS", "{r:#}");
    assert_eq!(r["checks"][0]["status"], "FAIL", "{r:#}");
    let unknown = r["tx"]["state_unknown_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no state_unknown_s: {r:#}"));
    let detail = r["checks"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("TX state unknown for {unknown:.1} s")),
        "{detail}"
    );
    assert!(
        r["tx"]["samples_sent"].as_u64() < r["tx"]["samples_planned"].as_u64(),
        "{r:#}"
    );
    // Resumed, the server sees its client gone and closes the stream.
    let t1 = Instant::now();
    let closed = loop {
        if let Some(t) = event_time(&srv, "closeStream TX serial=TXF") {
            break t;
        }
        assert!(
            t1.elapsed() < Duration::from_secs(10),
            "the server never closed the TX stream after the thaw: {:?}",
            srv.events()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "server TX stream active {:.2} s by its own log (closed {:.2} s after the thaw); rxnode: on_air_s {:.3}, state unknown for {unknown:.2} s",
        closed - activated,
        closed - thawed,
        r["tx"]["on_air_s"].as_f64().unwrap_or(f64::NAN)
    );
}
