//! Dead bands, SigMF annotations, per-element gains, long hop tables and Ctrl-C during a sweep.
use super::*;

/// A hop the radio cannot deliver is retried once, then marked failed
/// with its range in the JSON, keeps a CSV line marked as no data (0 samples,
/// every bin `nan`), and the result is PARTIAL.
#[test]
fn a_dead_band_is_marked_failed_and_never_filled_in() {
    let rig = Rig::new();
    let d = rig.lab.dir.path();
    let csv = d.join("dead.csv");
    let dev = scene("SWD", ",dead_hz=98e6:100e6");
    let out = rig.rxnode(
        &sweep_args(&dev, &["--csv", csv.to_str().unwrap(), "--json"]),
        "",
    );
    expect_exit!(out, 1);
    let s: SweepT = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s.status, "PARTIAL");
    assert_eq!(s.failed_hops.len(), 1);
    let f = &s.failed_hops[0];
    let dead: Vec<&HopT> = s.hops.iter().filter(|h| h.status == "FAILED").collect();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].attempts, 2, "retried once");
    assert!(dead[0].error.as_deref().unwrap_or("").contains("timeout"));
    // One warning per attempt, each saying which attempt it was and what follows.
    let err = util::text(&out.stderr);
    let warned: Vec<&str> = err.lines().filter(|l| l.contains("sweep hop")).collect();
    assert_eq!(warned.len(), 2, "{err}");
    assert!(
        warned[0].contains("attempt 1 of 2") && warned[0].contains("retrying it once"),
        "{err}"
    );
    assert!(
        warned[1].contains("attempt 2 of 2") && warned[1].contains("marked failed"),
        "{err}"
    );
    assert!(warned.iter().all(|l| l.contains("of repeat 1")), "{err}");
    assert_eq!((f.low_hz, f.high_hz), (dead[0].low_hz, dead[0].high_hz));
    let rows = read_rtl_power(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(rows.len(), s.hops.len());
    for r in &rows {
        let dead_row = (r.hz_low - f.low_hz).abs() < 1.0 && (r.hz_high - f.high_hz).abs() < 1.0;
        if dead_row {
            assert_eq!(r.samples, 0);
            assert!(!r.db.is_empty() && r.db.iter().all(|d| d.is_nan()));
        } else {
            assert!(
                r.hz_high <= f.low_hz + 1.0 || r.hz_low >= f.high_hz - 1.0,
                "row {} overlaps the dead hop",
                r.hz_low
            );
            assert!(r.samples > 0 && r.db.iter().all(|d| d.is_finite()));
        }
    }
    // The emitter at 101.1 MHz lies in the dead hop: not reported, not invented.
    assert!(!s
        .peaks
        .iter()
        .any(|p| (p.frequency_hz - 101.1e6).abs() < 1e6));
    assert!(s
        .peaks
        .iter()
        .any(|p| (p.frequency_hz - 88.5e6).abs() <= s.bin_hz));
}

/// Validate a `.sigmf-meta` with the Python `sigmf` package (CI: `pip install
/// sigmf`, see scripts/setup.sh); prints the annotations as JSON.
fn sigmf_validate(meta: &std::path::Path) -> Result<serde_json::Value, String> {
    let script = "import json, sys\n\
from sigmf import sigmffile\n\
f = sigmffile.fromfile(sys.argv[1])\n\
f.validate()\n\
print(json.dumps(f.get_annotations()))\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(meta)
        .output()
        .map_err(|e| {
            format!("python3 not runnable ({e}); scripts/setup.sh installs it with sigmf")
        })?;
    if !out.status.success() {
        return Err(util::text(&out.stderr));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())
}

/// Every recorded capture's `.sigmf-meta` carries one annotation per
/// reported peak (label, generator rxnode, −3 dB edges around the peak, the
/// capture's sample range), accepted by the sigmf package's validator — which
/// does reject a broken annotation, so the check can fail.
#[test]
fn sigmf_annotations_per_peak_pass_the_sigmf_validator() {
    let rig = Rig::new();
    let d = rig.lab.dir.path();
    let data = d.join("cap.sigmf-data");
    let out = rig.rxnode(
        &[
            "capture",
            "--device",
            "driver=rxsim,serial=SG1,tone_hz=100.1e6,emitters=99.7e6:-50;100.5e6:-40",
            "--frequency-hz",
            "100e6",
            "--sample-rate-hz",
            "2e6",
            "--duration-s",
            "0.2",
            "--record",
            data.to_str().unwrap(),
            "--json",
        ],
        "",
    );
    expect_exit!(out, 0);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let peaks = summary["peaks"].as_array().unwrap();
    assert_eq!(peaks.len(), 3, "{peaks:?}");
    let samples = summary["samples_processed"].as_u64().unwrap();
    let meta = d.join("cap.sigmf-meta");
    let ann = sigmf_validate(&meta).unwrap_or_else(|e| panic!("sigmf validator: {e}"));
    let ann: Vec<&serde_json::Value> = ann
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a.get("core:freq_lower_edge").is_some())
        .collect();
    assert_eq!(ann.len(), peaks.len(), "one annotation per peak: {ann:?}");
    for (a, p) in ann.iter().zip(peaks) {
        let f = p["frequency_hz"].as_f64().unwrap();
        assert_eq!(a["core:generator"], "rxnode");
        assert_eq!(a["core:sample_start"], 0);
        assert_eq!(a["core:sample_count"].as_u64(), Some(samples));
        let (lo, hi) = (
            a["core:freq_lower_edge"].as_f64().unwrap(),
            a["core:freq_upper_edge"].as_f64().unwrap(),
        );
        assert!(lo < f && f < hi, "{lo} < {f} < {hi}");
        assert!(hi - lo < 10e3, "a CW tone is narrow: {}", hi - lo);
        let label = a["core:label"].as_str().unwrap();
        assert!(label.contains(&format!("{:.6} MHz", f / 1e6)), "{label}");
    }
    // The validator is real: a broken annotation is refused.
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
    m["annotations"][1]["core:freq_lower_edge"] = "low".into();
    let bad = d.join("bad.sigmf-meta");
    std::fs::write(&bad, serde_json::to_vec(&m).unwrap()).unwrap();
    std::fs::copy(&data, d.join("bad.sigmf-data")).unwrap();
    assert!(
        sigmf_validate(&bad).is_err(),
        "the validator must reject a string edge"
    );
}

/// `gain_db` as an object of element → dB on an `rx_capture`: set per
/// element, each read back into the result; an element the device does not have
/// is BLOCKED naming it, and never streams.
#[test]
fn per_element_gains_on_a_capture_are_set_read_back_or_blocked() {
    let rig = Rig::new();
    let id = "GAIN_ELEM_1";
    let plan = r#"{"steps": [
      {"op": "rx_capture", "device": "driver=rxsim,serial=GE1,tone_hz=100.1e6", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": {"LNA": 24, "VGA": 7}, "duration_s": 0.1},
      {"op": "rx_capture", "device": "driver=rxsim,serial=GE2,tone_hz=100.1e6", "frequency_hz": 100e6,
       "sample_rate_hz": 1e6, "gain_db": {"MIX": 3}, "duration_s": 0.1}
    ]}"#;
    rig.post_and_approve(id, plan);
    let out = rig.rxnode(&["run", id], "");
    expect_exit!(out, 1);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rig.outbox(id).join("RX_RESULT.json")).unwrap())
            .unwrap();
    assert_eq!(r["checks"][0]["status"], "PASS", "{:#}", r["checks"]);
    let c = &r["captures"][0];
    assert_eq!(c["actual"]["gain_elements_db"]["LNA"], 24.0);
    assert_eq!(c["actual"]["gain_elements_db"]["VGA"], 7.0);
    assert_eq!(c["actual"]["gain_db"], 31.0);
    assert_eq!(c["requested"]["gain_db"]["LNA"], 24.0);
    assert_eq!(r["checks"][1]["status"], "BLOCKED");
    let d = r["checks"][1]["detail"].as_str().unwrap();
    assert!(d.contains("MIX") && d.contains("LNA, VGA"), "{d}");
    assert_eq!(rig.streams_of("GE2"), 0);
}

/// The published result stays small (≤ 256 KiB) however long
/// the sweep — a hop table over 200 rows moves to `SWEEP_<n>_hops.json` in the
/// outbox, its hash in the result.
#[test]
fn a_long_hop_table_moves_to_its_own_file() {
    let rig = Rig::new();
    let id = "SWEEP_LONG_1";
    let plan = r#"{"steps": [{"op": "rx_sweep", "device": "driver=rxsim,serial=SL1,emitters=915e6:-30",
        "start_hz": 70e6, "stop_hz": 1.8e9, "bin_hz": 100e3, "sample_rate_hz": 10e6, "gain_db": 10,
        "dwell_s": 0.0002, "settle_s": 0}]}"#;
    rig.post_and_approve(id, plan);
    let out = rig.rxnode(&["run", id], "");
    expect_exit!(out, 0);
    let dir = rig.outbox(id);
    let bytes = std::fs::read(dir.join("RX_RESULT.json")).unwrap();
    assert!(bytes.len() < 256 * 1024, "{} bytes", bytes.len());
    let r: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let sw = &r["sweeps"][0];
    let total = sw["hops_per_repeat"].as_u64().unwrap();
    assert!(total > 200, "{total}");
    assert_eq!(sw["hops"].as_array().unwrap().len(), 0, "all hops clean");
    let hf = &sw["hops_file"];
    assert_eq!(hf["file"], "SWEEP_1_hops.json");
    assert_eq!(hf["hops"].as_u64(), Some(total));
    let text = std::fs::read(dir.join("SWEEP_1_hops.json")).unwrap();
    assert_eq!(hf["sha256"], hex::encode(Sha256::digest(&text)));
    let hops: Vec<HopT> = serde_json::from_slice(&text).unwrap();
    assert_eq!(hops.len() as u64, total);
    assert!(sw["peaks"].as_array().unwrap().iter().any(|p| {
        (p["frequency_hz"].as_f64().unwrap() - 915e6).abs() <= sw["bin_hz"].as_f64().unwrap()
    }));
    let v = rig.rxnode(&["validate-result", id], "");
    expect_exit!(v, 0);
}

/// Ctrl-C stops a sweep between reads: the stream is closed, the hops not
/// reached are `NOT_RUN`, the status is PARTIAL (exit 1) and what was measured is
/// still written.
#[cfg(unix)]
#[test]
fn sigint_stops_a_sweep_partial_with_hops_not_run() {
    use std::time::Duration;
    let rig = Rig::new();
    let csv = rig.lab.dir.path().join("cut.csv");
    let dev = scene("SIG1", "");
    let mut args = vec!["--sim".to_owned()];
    args.extend(
        sweep_args(&dev, &["--csv", csv.to_str().unwrap(), "--json"])
            .iter()
            .map(|s| s.to_string()),
    );
    let i = args.iter().position(|x| x == "--stop-hz").unwrap();
    args[i + 1] = "5.99e9".into();
    // Wait until the sweep streams, then interrupt it.
    let (out, sent) = rig.interrupt_while_streaming(&args, "SIG1", Duration::from_millis(300));
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    expect_exit!(out, 1);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["status"], "PARTIAL");
    assert_eq!(s["cancelled"], true);
    assert_eq!(s["passes_completed"], 0, "the one pass was cut short");
    let hops = s["hops"].as_array().unwrap();
    let ok = hops.iter().filter(|h| h["status"] == "OK").count();
    let not_run = hops.iter().filter(|h| h["status"] == "NOT_RUN").count();
    assert!(ok > 0 && not_run > 0, "ok {ok}, not run {not_run}");
    let rows = read_rtl_power(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(
        rows.len(),
        ok,
        "one CSV line per measured hop, none for the rest"
    );
    let log = std::fs::read_to_string(&rig.events).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("closeStream RX serial=SIG1")),
        "{log}"
    );
}

/// Ctrl-C in a repeated sweep says how many passes over the band were done (text
/// and JSON), and the heatmap ends at the last pass that started.
#[cfg(unix)]
#[test]
fn an_interrupted_repeated_sweep_says_how_many_repeats_were_done() {
    use std::time::Duration;
    let rig = Rig::new();
    let png = rig.lab.dir.path().join("rep.png");
    let dev = scene("SIGREP", "");
    let mut args = vec!["--sim".to_owned()];
    args.extend(
        sweep_args(&dev, &["--plot", png.to_str().unwrap(), "--repeats", "500"])
            .iter()
            .map(|s| s.to_string()),
    );
    let i = args.iter().position(|x| x == "--dwell-s").unwrap();
    args[i + 1] = "20ms".into();
    let (out, _) = rig.interrupt_while_streaming(&args, "SIGREP", Duration::from_millis(1500));
    expect_exit!(out, 1);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("stopped: "))
        .unwrap_or_else(|| panic!("{}", show(&out)));
    let done: u64 = line
        .trim()
        .trim_start_matches("stopped: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        line.contains(&format!("{done} of 500 pass(es) completed")),
        "{line}"
    );
    assert!((1..500).contains(&done), "{line}");
    assert!(text.contains("sweep PARTIAL"), "{text}");
    let heat = rig.lab.dir.path().join("rep_heatmap.png");
    assert!(heat.is_file(), "{}", show(&out));
}
