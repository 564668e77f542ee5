//! `.local/calibration.json`: the radios' measured frequency errors, per radio
//! identity (driver, serial and, for a radio reached through SoapyRemote, its
//! server), for the `clock` block of every result and
//! recording and for `apply_calibration` / `--apply-cal`
//! (docs/operator.md#calibrating-a-radio-without-a-generator).
//!
//! Sealed with the node key (`crate::store::sealed`): a calibration this node did not
//! measure — planted through Git, copied, edited or written before sealing — is refused
//! with its fix and never applied. Written atomically, checked ignored by Git before it
//! is created; a damaged file is an error naming it, never silently reset.
use crate::store::paths::Paths;
use anyhow::Result;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The file's name under `.local/`.
pub(crate) const CALIBRATION_FILE: &str = "calibration.json";
/// The calibration file, sealed with the node key.
const SEALED: crate::store::sealed::Sealed = crate::store::sealed::Sealed {
    kind: "calibration",
    what: "calibration file",
    fix: "move it aside (e.g. `mv .local/calibration.json .local/calibration.json.untrusted`) \
          and measure each radio again with `rxnode clkin calibrate`",
    max_bytes: 4 << 20,
};
/// Measurements kept per radio (the newest).
const HISTORY: usize = 20;

/// One measurement of a radio's frequency error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Measurement {
    /// The radio's error, ppm (> 0: its clock runs fast).
    pub(crate) ppm: f64,
    /// One-sigma uncertainty, ppm.
    pub(crate) uncertainty_ppm: f64,
    /// `gsm` or `lte` (or another method's name).
    pub(crate) method: String,
    /// What it was measured against (`GSM BCCH 935.2 MHz`).
    pub(crate) reference: String,
    /// The estimator's confidence, 0..1.
    pub(crate) confidence: f64,
    /// When (ISO 8601 with offset).
    pub(crate) time: String,
    /// The task it was measured in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task_id: Option<String>,
}

/// One radio's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RadioCalibration {
    /// The SoapySDR driver.
    pub(crate) driver: String,
    /// The radio's serial.
    pub(crate) serial: String,
    /// The SoapyRemote server it is reached through (absent: on this host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote: Option<String>,
    /// The newest measurement.
    pub(crate) latest: Measurement,
    /// Earlier ones, oldest first (at most 20, the latest included).
    pub(crate) history: Vec<Measurement>,
}

/// The file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CalibrationFile {
    /// Always 1.
    #[schemars(range(min = 1, max = 1))]
    pub(crate) schema_version: u32,
    /// By radio identity `driver=…,serial=…` (`driver=…,remote=…,serial=…` over
    /// SoapyRemote).
    pub(crate) radios: BTreeMap<String, RadioCalibration>,
}

impl Default for CalibrationFile {
    fn default() -> Self {
        Self {
            schema_version: 1,
            radios: BTreeMap::new(),
        }
    }
}

/// One radio as a calibration names it: its driver, its serial and, when it is
/// reached through SoapyRemote, the server (the same unit on another host, or a
/// local unit with the same serial, is another radio).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Radio<'a> {
    /// The SoapySDR driver.
    pub(crate) driver: &'a str,
    /// The radio's serial (empty: unknown).
    pub(crate) serial: &'a str,
    /// The SoapyRemote server, if any.
    pub(crate) remote: Option<&'a str>,
}

impl<'a> Radio<'a> {
    /// The radio an open device's probe describes.
    pub(crate) fn of(info: &'a rxnode_hw::DeviceInfo) -> Self {
        Radio {
            driver: &info.driver,
            serial: info.serial.as_deref().unwrap_or_default(),
            remote: info.remote.as_deref(),
        }
    }

    /// The radio a result's `device` block names: no serial is an empty one, a
    /// blank server is none.
    pub(crate) fn named(driver: &'a str, serial: Option<&'a str>, remote: Option<&'a str>) -> Self {
        Radio {
            driver,
            serial: serial.unwrap_or_default(),
            remote: remote.filter(|r| !r.trim().is_empty()),
        }
    }
}

/// The radio identity a measurement is kept under; `None` without a serial (a
/// radio that cannot be told from another of its kind is never given another's
/// correction). Over SoapyRemote the server is part of it.
pub(crate) fn identity(radio: Radio<'_>) -> Option<String> {
    let (d, s) = (radio.driver.trim(), radio.serial.trim());
    if d.is_empty() || s.is_empty() {
        return None;
    }
    Some(
        match radio.remote.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => format!("driver={d},remote={r},serial={s}"),
            None => format!("driver={d},serial={s}"),
        },
    )
}

/// The JSON Schema of `.local/calibration.json` (`rxnode schema calibration`).
pub(crate) fn schema() -> serde_json::Value {
    SEALED.schema::<CalibrationFile>()
}

/// `.local/calibration.json`.
pub(crate) fn path(paths: &Paths) -> PathBuf {
    paths.local.join(CALIBRATION_FILE)
}

/// `.local/calibration.lock`: held while [`record`] reads, changes and writes the file.
fn lock_path(paths: &Paths) -> PathBuf {
    paths.local.join("calibration.lock")
}

/// The file, its temporary twin and its lock: what [`record`] may create.
pub(crate) fn created_paths(paths: &Paths) -> Vec<PathBuf> {
    let p = path(paths);
    vec![
        p.clone(),
        crate::store::fsutil::atomic_tmp(&p),
        lock_path(paths),
    ]
}

/// The measurements; an empty set when there is no file. A file that is not a
/// regular file, too big or not a calibration file is an error naming it.
pub(crate) fn load(paths: &Paths) -> Result<CalibrationFile> {
    let p = path(paths);
    let Some(f) = SEALED.read::<CalibrationFile>(paths, &p)? else {
        return Ok(CalibrationFile::default());
    };
    if f.schema_version != 1 {
        return Err(crate::exit::refused(format!(
            "{}: schema_version {} is not 1",
            p.display(),
            f.schema_version
        )));
    }
    Ok(f)
}

/// The newest measurement of one radio.
pub(crate) fn lookup(paths: &Paths, radio: Radio<'_>) -> Result<Option<Measurement>> {
    let Some(id) = identity(radio) else {
        return Ok(None);
    };
    Ok(load(paths)?
        .radios
        .get(&id)
        .map(|r| with_cell_term(r.latest.clone())))
}

/// A broadcast measurement (`gsm`, `lte`) is of the radio against a cell whose own
/// frequency is only known to ±0.05 ppm: one kept before its uncertainty carried
/// that term gets it added here, so no use of it claims better than the cell.
fn with_cell_term(mut m: Measurement) -> Measurement {
    if matches!(m.method.as_str(), "gsm" | "lte")
        && m.uncertainty_ppm.is_finite()
        && m.uncertainty_ppm < rxnode_dsp::CELL_UNCERTAINTY_PPM
    {
        m.uncertainty_ppm = rxnode_dsp::with_cell_uncertainty(m.uncertainty_ppm);
    }
    m
}

/// An age as a person reads it, with the digits it needs: `45 s`, `12.5 min`,
/// `3.2 h`, `4.1 days`.
pub(crate) fn fmt_age(s: f64) -> String {
    let s = s.max(0.0);
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 2.0 * 86400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86400.0)
    }
}

/// Whether a kept measurement may still say where this radio's tone lands: no
/// older than `max_age_s` (the policy's `rx.calibration_max_age_s`; crystals drift
/// with temperature and age), its time readable and not in the future. `Err` says
/// why not, with the measurement and its age; `Ok` its age (s).
pub(crate) fn fresh_for_tx(m: &Measurement, max_age_s: f64) -> Result<f64, String> {
    match age_s(&m.time) {
        Some(a) if (-300.0..=max_age_s).contains(&a) => Ok(a.max(0.0)),
        Some(a) => Err(format!(
            "this radio's kept calibration ({:+.3} ± {} ppm, {} {}) is {} old, past \
             rx.calibration_max_age_s ({}): its clock may have drifted since, so where \
             its tone lands is not known; not transmitting — measure it again with \
             `rxnode clkin calibrate`",
            m.ppm,
            rxnode_dsp::fmt_sigma(m.uncertainty_ppm),
            m.method,
            m.time,
            fmt_age(a),
            fmt_age(max_age_s)
        )),
        None => Err(format!(
            "this radio's kept calibration has an unreadable time {:?}, so its age is not \
             known: not transmitting — measure it again with `rxnode clkin calibrate`",
            m.time
        )),
    }
}

/// Keep `m` as the radio's newest measurement. Refused, with nothing written, when
/// Git would not ignore the file; `Ok(false)` when the radio has no serial. The
/// file is read, changed and written under an exclusive OS lock on
/// `.local/calibration.lock`, as the health file is: two calibrations at once (two
/// radios calibrated in two terminals, a run's `freq_cal` step beside `clkin
/// calibrate`) each read the file before the other wrote it, and the one written
/// last dropped the other's measurement, both having said it was kept.
pub(crate) fn record(paths: &Paths, radio: Radio<'_>, m: Measurement) -> Result<bool> {
    let Some(id) = identity(radio) else {
        return Ok(false);
    };
    let _guard = crate::store::trust::lock_local_file(paths, &lock_path(paths), &path(paths))?;
    let mut f = load(paths)?;
    let entry = f.radios.entry(id).or_insert_with(|| RadioCalibration {
        driver: radio.driver.trim().to_owned(),
        serial: radio.serial.trim().to_owned(),
        remote: radio.remote.map(|r| r.trim().to_owned()),
        latest: m.clone(),
        history: Vec::new(),
    });
    entry.latest = m.clone();
    entry.history.push(m);
    if entry.history.len() > HISTORY {
        let extra = entry.history.len() - HISTORY;
        entry.history.drain(..extra);
    }
    SEALED.write(paths, &path(paths), &f)?;
    Ok(true)
}

/// Seconds between an ISO 8601 time and now; `None` when it does not parse.
pub(crate) fn age_s(time: &str) -> Option<f64> {
    let t =
        time::OffsetDateTime::parse(time, &time::format_description::well_known::Rfc3339).ok()?;
    Some((time::OffsetDateTime::now_utc() - t).as_seconds_f64())
}

/// The `clock` block of a result entry (docs/protocol.md#clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClockBlock {
    /// The radio's last frequency calibration; `null`: never measured.
    pub(crate) last_measurement: Option<LastMeasurement>,
    /// The correction (ppm) applied to the tuning; `null`: none.
    pub(crate) ppm_correction_applied: Option<f64>,
    /// Where that correction came from: `manual` (the operator's `-p` / the step's
    /// `ppm`) or `calibration` (this radio's stored measurement, `--apply-cal` /
    /// `apply_calibration`); absent without a correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ppm_correction_from: Option<CorrectionFrom>,
    /// `driver=…,serial=…`; `null` when the radio reports no serial.
    pub(crate) radio: Option<String>,
    /// The clock source read back.
    pub(crate) source: Option<String>,
}

/// Where a frequency correction came from (docs/protocol.md#clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CorrectionFrom {
    /// Typed by the operator: `-p` / the step's `ppm`.
    Manual,
    /// This radio's stored frequency calibration (`--apply-cal` / `apply_calibration`).
    Calibration,
}

/// The radio's last frequency calibration in a `clock` block, with its age.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LastMeasurement {
    /// Its age when the block was made, s (whole); `null` when its time cannot be read.
    pub(crate) age_s: Option<f64>,
    /// `gsm`, `lte`, …
    pub(crate) method: String,
    /// The radio's error, ppm (> 0: its clock runs fast).
    pub(crate) ppm: f64,
    /// What it was measured against.
    pub(crate) reference: String,
    /// Older than `rx.calibration_max_age_s` (or its time unreadable).
    pub(crate) stale: bool,
    /// When (ISO 8601 with offset).
    pub(crate) time: String,
    /// One-sigma uncertainty, ppm.
    #[schemars(range(min = 0.0))]
    pub(crate) uncertainty_ppm: f64,
}

/// The `clock` block of a result entry or a recording: where the radio's clock
/// comes from and how good its frequency axis is — its last measurement (with its
/// age, and `stale` past `max_age_s`) and the correction applied, if any
/// (docs/protocol.md#clock).
pub(crate) fn clock_of(
    paths: &Paths,
    radio: Radio<'_>,
    source: Option<&str>,
    max_age_s: f64,
    applied: Option<(f64, CorrectionFrom)>,
) -> ClockBlock {
    let last = match lookup(paths, radio) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("calibration: {e:#}");
            None
        }
    };
    let last = last.map(|m| {
        let age = age_s(&m.time);
        let stale = age.is_none_or(|a| a > max_age_s || a < -300.0);
        LastMeasurement {
            age_s: age.map(|a| a.round()),
            method: m.method,
            ppm: m.ppm,
            reference: m.reference,
            stale,
            time: m.time,
            uncertainty_ppm: m.uncertainty_ppm,
        }
    });
    ClockBlock {
        last_measurement: last,
        ppm_correction_applied: applied.map(|a| a.0),
        ppm_correction_from: applied.map(|a| a.1),
        radio: identity(radio),
        source: source.map(str::to_owned),
    }
}

/// The correction to apply to radio `driver`/`serial` when asked: its newest
/// measurement, fresh (no older than `max_age_s`). A missing or stale one is an
/// error naming the radio and the measurement's age — never applied silently.
pub(crate) fn correction_for(
    paths: &Paths,
    radio: Radio<'_>,
    max_age_s: f64,
) -> Result<Measurement, String> {
    let Some(id) = identity(radio) else {
        return Err(format!(
            "apply_calibration (--apply-cal): the radio (driver {:?}) reports no serial, so no measurement can be tied to it",
            radio.driver
        ));
    };
    let m = lookup(paths, radio)
        .map_err(|e| format!("apply_calibration (--apply-cal): {e:#}"))?
        .ok_or_else(|| {
            format!(
                "apply_calibration (--apply-cal): no frequency calibration of {id} in .local/calibration.json; \
                 measure one with `rxnode clkin calibrate`"
            )
        })?;
    match age_s(&m.time) {
        Some(a) if (-300.0..=max_age_s).contains(&a) => Ok(m),
        Some(a) => Err(format!(
            "apply_calibration (--apply-cal): the calibration of {id} ({:+.4} ppm, {}) is stale: {:.1} h old, \
             rx.calibration_max_age_s is {:.1} h; measure again with `rxnode clkin calibrate`",
            m.ppm,
            m.time,
            a / 3600.0,
            max_age_s / 3600.0
        )),
        None => Err(format!(
            "apply_calibration (--apply-cal): the calibration of {id} has an unreadable time {:?}",
            m.time
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ppm: f64) -> Measurement {
        Measurement {
            ppm,
            uncertainty_ppm: 0.01,
            method: "gsm".into(),
            reference: "GSM BCCH 935.2 MHz".into(),
            confidence: 0.9,
            time: crate::store::fsutil::now_iso(),
            task_id: None,
        }
    }

    fn r<'a>(driver: &'a str, serial: &'a str) -> Radio<'a> {
        Radio {
            driver,
            serial,
            remote: None,
        }
    }

    /// A broadcast measurement kept before its uncertainty carried the cell's own
    /// ±0.05 ppm is read with it; a newer one (already carrying it) is unchanged.
    #[test]
    fn a_kept_broadcast_calibration_never_claims_better_than_the_cell() {
        let old = with_cell_term(m(1.0));
        assert!(
            (old.uncertainty_ppm - 0.01f64.hypot(rxnode_dsp::CELL_UNCERTAINTY_PPM)).abs() < 1e-12,
            "{}",
            old.uncertainty_ppm
        );
        let new = Measurement {
            uncertainty_ppm: 0.04,
            ..m(1.0)
        };
        assert_eq!(with_cell_term(new.clone()), new);
        assert_eq!(fmt_age(45.2), "45 s");
        assert_eq!(fmt_age(750.0), "12.5 min");
        assert_eq!(fmt_age(3.0 * 3600.0), "3.0 h");
    }

    /// A measurement past the policy's age says where a tone lands no more: the
    /// TX check refuses it, naming its age and the limit; a fresh one gives its age.
    #[test]
    fn a_stale_or_undated_calibration_does_not_judge_a_tone() {
        let fresh = m(20.0);
        assert!(fresh_for_tx(&fresh, 3600.0).is_ok_and(|a| a < 60.0));
        let old = Measurement {
            time: "2026-01-01T00:00:00+00:00".into(),
            ..m(20.0)
        };
        let e = fresh_for_tx(&old, 24.0 * 3600.0).unwrap_err();
        assert!(
            e.contains("days old, past") && e.contains("(24.0 h)"),
            "{e}"
        );
        let undated = Measurement {
            time: "yesterday".into(),
            ..m(20.0)
        };
        assert!(fresh_for_tx(&undated, 1e9)
            .unwrap_err()
            .contains("unreadable time"));
    }

    /// Two calibrations recorded at once, each of its own radios: every
    /// measurement is kept. Without the lock each read the file before the other
    /// wrote it, and the one written last dropped the other's radios.
    #[test]
    fn calibrations_recorded_at_once_are_all_kept() {
        let d = tempfile::TempDir::new().unwrap_or_else(|e| panic!("{e}"));
        git2::Repository::init(d.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let paths = Paths::new(d.path());
        // The node key exists before the two start.
        assert!(record(&paths, r("rxsim", "first"), m(0.5)).unwrap_or(false));
        const EACH: usize = 40;
        let failures: Vec<String> = std::thread::scope(|s| {
            let workers: Vec<_> = ["x", "y"]
                .iter()
                .map(|who| {
                    let paths = &paths;
                    s.spawn(move || {
                        (0..EACH)
                            .filter_map(|i| {
                                let serial = format!("{who}{i}");
                                record(paths, r("rxsim", &serial), m(i as f64))
                                    .err()
                                    .map(|e| format!("{serial}: {e:#}"))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap_or_else(|_| vec!["panicked".into()]))
                .collect()
        });
        assert!(failures.is_empty(), "{failures:?}");
        let kept = load(&paths).unwrap_or_else(|e| panic!("{e:#}")).radios;
        let lost: Vec<String> = ["x", "y"]
            .iter()
            .flat_map(|who| (0..EACH).map(move |i| format!("{who}{i}")))
            .filter(|serial| lookup(&paths, r("rxsim", serial)).ok().flatten().is_none())
            .collect();
        assert!(
            lost.is_empty(),
            "{} of {} lost: {lost:?}",
            lost.len(),
            2 * EACH
        );
        assert_eq!(kept.len(), 2 * EACH + 1);
    }

    #[test]
    fn measurements_are_kept_per_radio_and_the_newest_wins() {
        let d = tempfile::TempDir::new().unwrap_or_else(|e| panic!("{e}"));
        git2::Repository::init(d.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let paths = Paths::new(d.path());
        assert_eq!(lookup(&paths, r("rxsim", "a")).ok().flatten(), None);
        assert!(record(&paths, r("rxsim", "a"), m(1.0)).unwrap_or(false));
        assert!(record(&paths, r("rxsim", "b"), m(-2.0)).unwrap_or(false));
        assert!(record(&paths, r("rxsim", "a"), m(3.0)).unwrap_or(false));
        assert_eq!(
            lookup(&paths, r("rxsim", "a"))
                .ok()
                .flatten()
                .map(|x| x.ppm),
            Some(3.0)
        );
        assert_eq!(
            lookup(&paths, r("rxsim", "b"))
                .ok()
                .flatten()
                .map(|x| x.ppm),
            Some(-2.0)
        );
        // No serial: nothing stored, nothing found.
        assert!(!record(&paths, r("rxsim", ""), m(5.0)).unwrap_or(true));
        assert_eq!(lookup(&paths, r("rxsim", "")).ok().flatten(), None);
        // The same serial behind a SoapyRemote server is another radio.
        let remote = Radio {
            remote: Some("tcp://10.0.0.5:55132"),
            ..r("rxsim", "a")
        };
        assert_eq!(lookup(&paths, remote).ok().flatten(), None);
        assert!(record(&paths, remote, m(-9.0)).unwrap_or(false));
        assert_eq!(
            lookup(&paths, remote).ok().flatten().map(|x| x.ppm),
            Some(-9.0)
        );
        assert_eq!(
            lookup(&paths, r("rxsim", "a"))
                .ok()
                .flatten()
                .map(|x| x.ppm),
            Some(3.0)
        );
        let f = load(&paths).unwrap_or_default();
        assert_eq!(f.radios["driver=rxsim,serial=a"].history.len(), 2);
        assert_eq!(
            f.radios["driver=rxsim,remote=tcp://10.0.0.5:55132,serial=a"]
                .history
                .len(),
            1
        );
        assert!(age_s(&f.radios["driver=rxsim,serial=a"].latest.time).is_some_and(|a| a < 60.0));
    }

    #[test]
    fn a_damaged_file_is_an_error_not_an_empty_set() {
        let d = tempfile::TempDir::new().unwrap_or_else(|e| panic!("{e}"));
        git2::Repository::init(d.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join(".git/info/exclude"), "/.local/\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let paths = Paths::new(d.path());
        std::fs::create_dir_all(&paths.local).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path(&paths), b"{\"radios\": 7}").unwrap_or_else(|e| panic!("{e}"));
        let e = load(&paths).map(|_| ()).map_err(|e| format!("{e:#}"));
        assert!(
            matches!(&e, Err(m) if m.contains("calibration.json was not written by this node")
                && m.contains("rxnode clkin calibrate")),
            "{e:?}"
        );
        assert!(record(&paths, r("rxsim", "a"), m(1.0)).is_err());
        assert_eq!(
            std::fs::read(path(&paths)).unwrap_or_default(),
            b"{\"radios\": 7}"
        );
    }
}
