//! `rxnode --sim inventory --dry-run` against the bundled rxsim module.
use serde::Deserialize;
use std::collections::BTreeMap;
use std::process::Command;

#[derive(Debug, Deserialize)]
struct Report {
    devices: Vec<Device>,
    soapysdr_version: String,
    sim: bool,
    hint: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Device {
    driver: String,
    serial: Option<String>,
    label: Option<String>,
    hardware_key: Option<String>,
    rx_channels: usize,
    tx_channels: usize,
    frequency_ranges_hz: Vec<[f64; 2]>,
    sample_rate_ranges_hz: Vec<[f64; 2]>,
    gain_range_db: Option<[f64; 2]>,
    antennas: Vec<String>,
    clock_sources: Vec<String>,
    sensors: BTreeMap<String, String>,
    hardware_info: BTreeMap<String, String>,
}

fn rxnode(dir: &std::path::Path, log: &std::path::Path) -> Command {
    let mut c = crate::util::rxnode_bin();
    c.current_dir(dir)
        .env("RXSIM_EVENT_LOG", log)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("RXNODE_SIM");
    c
}

#[test]
fn sim_inventory_json_lists_the_simulated_radio_and_opens_no_stream() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let log = tmp.path().join("events.log");
    let out = rxnode(tmp.path(), &log)
        .args(["--sim", "inventory", "--dry-run", "--json"])
        .output()
        .expect("run rxnode");
    expect_exit!(out, 0);
    let r: Report = serde_json::from_slice(&out.stdout).expect("json");
    assert!(r.sim);
    assert!(
        r.soapysdr_version.starts_with("0."),
        "{}",
        r.soapysdr_version
    );
    assert!(r.hint.is_none());
    assert_eq!(r.devices.len(), 1, "{:?}", r.devices);
    let d = &r.devices[0];
    assert_eq!(d.driver, "rxsim");
    assert_eq!(d.serial.as_deref(), Some("rxsim0"));
    assert!(d.label.as_deref().is_some_and(|l| l.contains("rxsim0")));
    assert_eq!(d.hardware_key.as_deref(), Some("rxsim"));
    assert_eq!((d.rx_channels, d.tx_channels), (1, 1));
    assert_eq!(d.frequency_ranges_hz, vec![[1e6, 6e9]]);
    assert!((d.sample_rate_ranges_hz[0][1] - 250e6).abs() < 1.0);
    assert_eq!(d.gain_range_db, Some([0.0, 60.0]));
    assert!(d.antennas.contains(&"RX".to_owned()));
    assert_eq!(d.clock_sources, vec!["internal", "external"]);
    assert_eq!(d.sensors["ref_locked"], "false");
    assert_eq!(d.hardware_info["clock source"], "internal");

    let events = std::fs::read_to_string(&log).expect("event log");
    assert!(events.lines().any(|l| l.contains(" make ")), "{events}");
    assert!(
        !events.contains("Stream"),
        "inventory opened a stream: {events}"
    );
    // The module was installed in the per-user cache given by XDG_CACHE_HOME.
    let cached = std::fs::read_dir(tmp.path().join("cache").join("rxnode"))
        .expect("cache dir")
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("librxsim-"));
    assert!(cached);
}

#[test]
fn sim_inventory_with_args_naming_another_driver_is_empty_with_a_hint() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let log = tmp.path().join("events.log");
    let out = rxnode(tmp.path(), &log)
        .args([
            "--sim",
            "inventory",
            "--dry-run",
            "--json",
            "--args",
            "driver=hackrf",
        ])
        .output()
        .expect("run rxnode");
    expect_exit!(out, 0);
    let r: Report = serde_json::from_slice(&out.stdout).expect("json");
    assert!(r.devices.is_empty());
    let hint = r.hint.expect("hint");
    assert!(
        hint.contains("librxsim-") && hint.contains("SOAPY_SDR_PLUGIN_PATH"),
        "{hint}"
    );
    // Under --sim the hint says why (only rxsim is loaded), never to try what was run.
    assert!(
        hint.contains("Under --sim only the simulated radio is loaded")
            && !hint.contains("try `rxnode --sim inventory --dry-run`"),
        "{hint}"
    );
}

#[test]
fn sim_inventory_human_output_has_one_block_per_device() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let log = tmp.path().join("events.log");
    let out = rxnode(tmp.path(), &log)
        .env("RXNODE_SIM", "1")
        .args([
            "inventory",
            "--dry-run",
            "--args",
            "driver=rxsim,serial=bench2",
        ])
        .output()
        .expect("run rxnode");
    expect_exit!(out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 device(s)"), "{text}");
    assert!(text.contains("serial:        bench2"), "{text}");
    assert!(text.contains("clock sources: internal, external"), "{text}");
    assert!(text.contains("sensor ref_locked: false"), "{text}");
}
