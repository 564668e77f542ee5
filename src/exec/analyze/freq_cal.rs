//! `analyze --freq-cal`: the estimator over the recording, its entry, and keeping
//! a PASS for the radio the operator names.
use super::*;

/// A frequency calibration over a recording: the method, the carrier, the estimator.
pub(super) struct FreqCalRun {
    pub(super) method: FreqCalMethod,
    pub(super) carrier_hz: f64,
    pub(super) est: Box<dyn FreqCalEstimator>,
}

/// The estimator `--freq-cal` asks for, set up for the recording's centre and rate;
/// the carrier defaults to the centre (as `clkin calibrate` tunes to it).
pub(super) fn freq_cal_setup(args: &AnalyzeOptions, rec: &Recording) -> Result<Option<FreqCalRun>> {
    let Some(method) = args.freq_cal else {
        return Ok(None);
    };
    let Some(center) = rec.center else {
        return Err(bad_field_text(
            "freq_cal",
            FieldText::text(format!(
                "{}: the recording's centre frequency is unknown; give ",
                args.file.display()
            ))
            .then_field("frequency_hz"),
        ));
    };
    let carrier = match args.carrier_hz {
        Some(c) if !(c.is_finite() && c > 0.0) => {
            return Err(bad_field(
                "carrier_hz",
                format!(" {c} must be a frequency > 0"),
            ))
        }
        Some(c) => c,
        None => center,
    };
    let cfg = FreqCalConfig::new(carrier, center, rec.rate);
    match freq_cal_estimator(crate::exec::freq_cal::dsp_method(method), cfg) {
        Ok(est) => Ok(Some(FreqCalRun {
            method,
            carrier_hz: carrier,
            est,
        })),
        Err(e @ FreqCalError::Unavailable(_)) => Err(bad_input(e.to_string())),
        Err(e) => Err(bad_field_text(
            "freq_cal",
            FieldText::text(format!("{}: {e}", args.file.display())),
        )),
    }
}

/// The `freq_cal` entry of a recording: as `clkin calibrate` prints it, with the
/// recording in place of the radio, and nothing stored (yet).
pub(super) fn freq_cal_entry(rec: &Recording, mut entry: FreqCalRecord) -> FreqCalRecord {
    let settings = RecordingSettings {
        frequency_hz: rec.center,
        sample_rate_hz: rec.rate,
    };
    entry.requested = Some(FreqCalRequested::Recording(settings.clone()));
    entry.actual = Some(FreqCalActual::Recording(settings));
    if entry.ppm.is_some() {
        entry.calibration_stored = Some(false);
        entry.calibration_note = Some("not kept: a recording's radio is not necessarily this node's (docs/operator.md#calibrating-from-a-recording)".to_owned());
    }
    // A recording tuned with a correction holds the error left after it, not the
    // radio's: say so where the figure is named.
    if let Some(c) = rec
        .clock
        .ppm_correction_applied
        .filter(|c| c.is_finite() && *c != 0.0)
    {
        if entry.ppm.is_some() {
            entry.detail = entry.detail.replacen(
                "radio error",
                &format!("error left after the recording's {c:+.4} ppm correction"),
                1,
            );
        }
    }
    entry.clock = Some(FreqCalClock::Recording(rec.clock.clone()));
    entry
}

/// Keep the `freq_cal` measurement for the radio the operator named (`driver=…,
/// serial=…[,remote=…]`, the key of `.local/calibration.json`): only a PASS, only in
/// a checkout, and never from a recording whose tuning was already corrected (its
/// error would be the residual, not the radio's).
pub(super) fn store_measurement(
    ctx: &Ctx,
    args: &AnalyzeOptions,
    radio: &str,
    report: &mut AnalyzeReport,
) -> Result<()> {
    let refuse = |why: String| {
        bad_field_text(
            "store_for_radio",
            FieldText::field("store_for_radio").then(format!(" {radio:?}: {why}")),
        )
    };
    let mut driver = None;
    let mut serial = None;
    let mut remote = None;
    for part in radio.split(',') {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| refuse(format!("{part:?} is not KEY=VALUE")))?;
        let v = v.trim();
        if v.is_empty() || v.chars().any(char::is_control) {
            return Err(refuse(format!("{k} has no usable value")));
        }
        match k.trim() {
            "driver" => driver = Some(v),
            "serial" => serial = Some(v),
            "remote" => remote = Some(v),
            other => {
                return Err(refuse(format!(
                    "unknown key {other:?} (driver, serial, remote)"
                )))
            }
        }
    }
    let (Some(driver), Some(serial)) = (driver, serial) else {
        return Err(refuse(
            "name the radio as driver=DRIVER,serial=SERIAL[,remote=HOST] (as `rxnode inventory` lists it)"
                .to_owned(),
        ));
    };
    if !crate::exec::capture::in_checkout(&ctx.repo) {
        return Err(refuse(
            "not run in an rxnode checkout: nowhere to keep it".to_owned(),
        ));
    }
    if let Some(p) = report.clock.ppm_correction_applied.filter(|p| *p != 0.0) {
        return Err(refuse(format!(
            "the recording was tuned with a {p:+} ppm correction: its error is the residual, not the radio's"
        )));
    }
    let Some(entry) = report.freq_cal.as_mut() else {
        return Ok(());
    };
    let fin = |v: Option<f64>| v.filter(|x| x.is_finite());
    let (Some(ppm), Some(unc), crate::result::Status::Pass) =
        (fin(entry.ppm), fin(entry.uncertainty_ppm), entry.status)
    else {
        return Ok(());
    };
    let method = args.freq_cal.map_or("", |m| m.as_str());
    let meas = crate::store::calibration::Measurement {
        ppm,
        uncertainty_ppm: unc,
        method: method.to_owned(),
        reference: format!(
            "{} {} (recording {})",
            method.to_uppercase(),
            entry.cell.as_deref().unwrap_or_default(),
            args.file.display()
        ),
        confidence: fin(entry.confidence).unwrap_or(0.0),
        time: crate::store::fsutil::now_iso(),
        task_id: None,
    };
    let paths = ctx.paths();
    let r = crate::store::calibration::Radio {
        driver,
        serial,
        remote,
    };
    let stored = crate::store::calibration::record(&paths, r, meas)?;
    entry.calibration_stored = Some(stored);
    entry.calibration_note = None;
    entry.stored_for = Some(StoredFor {
        driver: driver.to_owned(),
        remote: remote.map(str::to_owned),
        serial: serial.to_owned(),
    });
    /// The ledger's detail: the entry, and the command it came from.
    #[derive(serde::Serialize)]
    struct Detail {
        #[serde(flatten)]
        entry: FreqCalRecord,
        command: &'static str,
    }
    let detail = serde_json::to_value(Detail {
        entry: FreqCalRecord {
            detections: None,
            ..entry.clone()
        },
        command: "analyze",
    })
    .unwrap_or_default();
    crate::exec::ledger_note(
        &paths,
        &crate::store::ledger::Entry::new(crate::store::ledger::Event::FreqCal(detail)),
    );
    Ok(())
}
