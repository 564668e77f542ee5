//! Sweeps over the rxsim scene: emitters found within one bin, the
//! settle garbage discarded, a dead band retried once and marked, never filled in.
use rxnode_hw::{run_sweep, HopStatus, RxConfig, RxRadio, SweepConfig};
use std::sync::atomic::AtomicBool;

mod common;
use common::open_configured;

fn radio(args: &str, rate: f64) -> RxRadio {
    open_configured(
        args,
        &RxConfig {
            frequency_hz: 100e6,
            sample_rate_hz: rate,
            gain_db: Some(20.0),
            ..RxConfig::default()
        },
    )
}

fn cfg(settle_s: f64) -> SweepConfig {
    SweepConfig {
        start_hz: 88e6,
        stop_hz: 108e6,
        bin_hz: 10e3,
        sample_rate_hz: 10e6,
        dwell_s: 0.005,
        settle_s,
        crop: 0.25,
        repeats: 1,
        interval_s: None,
    }
}

#[test]
fn every_emitter_is_found_within_one_bin_and_the_floor_is_honest() {
    let emitters = [(88.5e6, -30.0), (101.1e6, -25.0), (104.3e6, -45.0)];
    let list: Vec<String> = emitters.iter().map(|(f, p)| format!("{f}:{p}")).collect();
    let args = format!(
        "driver=rxsim,serial=sweep1,emitters={},settle_s=0.002,noise_dbfs=-60",
        list.join(";")
    );
    let mut r = radio(&args, 10e6);
    let rep = run_sweep(&mut r, &cfg(0.002), &AtomicBool::new(false)).expect("sweep");
    assert!(
        rep.hops.iter().all(|h| h.status == HopStatus::Ok),
        "{:?}",
        rep.failed_ranges_hz
    );
    assert!(rep.failed_ranges_hz.is_empty());
    for (f, p) in emitters {
        let hit = rep
            .peaks
            .iter()
            .find(|k| (k.frequency_hz - f).abs() <= rep.plan.bin_hz)
            .unwrap_or_else(|| panic!("emitter {f} not found in {:?}", rep.peaks));
        assert!(
            (hit.power_db - p).abs() < 2.0,
            "{f}: {} vs {p}",
            hit.power_db
        );
    }
    // Noise −60 dBFS spread over 1024 Hann bins: about −88 dBFS per bin.
    let floor = rep.noise_floor_db.unwrap();
    assert!((-92.0..-84.0).contains(&floor), "floor {floor}");
    assert_eq!(rep.peaks.len(), 3, "no false peaks: {:?}", rep.peaks);
}

#[test]
fn settle_garbage_is_discarded_and_visible_when_not() {
    let args = "driver=rxsim,serial=sweep2,settle_s=0.002,noise_dbfs=-60";
    let mut r = radio(args, 10e6);
    let kept = run_sweep(&mut r, &cfg(0.002), &AtomicBool::new(false)).expect("sweep");
    let mut r = radio(&args.replace("sweep2", "sweep2b"), 10e6);
    let raw = run_sweep(&mut r, &cfg(0.0), &AtomicBool::new(false)).expect("sweep");
    let (a, b) = (kept.noise_floor_db.unwrap(), raw.noise_floor_db.unwrap());
    assert!(a < -84.0, "with the discard the floor is the noise: {a}");
    assert!(
        b > a + 10.0,
        "without the discard the relock garbage shows: {b} vs {a}"
    );
}

#[test]
fn a_dead_hop_is_retried_once_then_marked_and_left_empty() {
    let args = "driver=rxsim,serial=sweep3,dead_hz=98e6:100e6,emitters=105e6:-25";
    let mut r = radio(args, 10e6);
    let rep = run_sweep(&mut r, &cfg(0.0), &AtomicBool::new(false)).expect("sweep");
    let failed: Vec<_> = rep
        .hops
        .iter()
        .filter(|h| h.status == HopStatus::Failed)
        .collect();
    assert!(!failed.is_empty());
    for h in &failed {
        assert_eq!(h.attempts, 2, "retried once");
        assert!((98e6..=100e6).contains(&h.requested_center_hz));
        assert!(h.db.is_empty());
        assert!(
            h.error.as_deref().unwrap_or("").contains("timeout"),
            "{:?}",
            h.error
        );
        // Its bins stay empty in the stitched spectrum.
        let m0 = ((h.low_hz - 88e6) / rep.plan.bin_hz).round() as usize;
        let m1 = ((h.high_hz - 88e6) / rep.plan.bin_hz).round() as usize;
        assert!(rep.spectrum_db[m0..m1].iter().all(Option::is_none));
    }
    assert_eq!(rep.failed_ranges_hz.len(), failed.len());
    assert!(rep
        .peaks
        .iter()
        .any(|p| (p.frequency_hz - 105e6).abs() <= rep.plan.bin_hz));
}

/// Each measured hop's spectrum is finished while the next hop settles (or, for
/// the last hop, after the band): every hop, the last one and the one before a
/// failed hop included, keeps its own bins, and the stitched band is made of them.
#[test]
fn every_measured_hop_keeps_its_own_bins_up_to_the_last() {
    let args = "driver=rxsim,serial=sweep4,dead_hz=98e6:100e6,emitters=90e6:-30;105e6:-35";
    let mut r = radio(args, 10e6);
    let rep = run_sweep(&mut r, &cfg(0.001), &AtomicBool::new(false)).expect("sweep");
    let status: Vec<_> = rep.hops.iter().map(|h| h.status).collect();
    assert_eq!(
        status,
        [HopStatus::Ok, HopStatus::Failed, HopStatus::Ok],
        "hop 2 of 3 is in the dead band"
    );
    for (h, emitter) in [(0, 90e6), (2, 105e6)] {
        let hop = &rep.hops[h];
        let (b0, b1) = rep.plan.hop_bins(h);
        assert_eq!(hop.db.len(), b1 - b0, "hop {h} kept all its bins");
        assert!(hop.db.iter().all(|v| v.is_finite()), "hop {h}");
        // Its strongest bin is its own emitter: the bins are this hop's, not a
        // neighbour's.
        let (i, _) = hop
            .db
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .expect("bins");
        let f = hop.low_hz + i as f64 * hop.step_hz;
        assert!(
            (f - emitter).abs() <= rep.plan.bin_hz,
            "hop {h}: peak at {f}"
        );
        // One pass: the stitched band holds exactly this hop's values.
        for (k, v) in hop.db.iter().enumerate() {
            let s = rep.spectrum_db[b0 + k].expect("measured bin");
            assert!((s - v).abs() < 1e-3, "hop {h} bin {k}: {s} vs {v}");
        }
    }
}
