//! The options checked, the recording opened, its rate, centre and clock settled,
//! and the capture engine's settings for it.
use super::*;

/// The checks that need no file: the plot name is free, the format is known, the
/// overlap and FFT size are in range. Gives the format asked for, if any.
pub(super) fn check_options(args: &AnalyzeOptions) -> Result<Option<IqFormat>> {
    if let Some(p) = args.plot.as_ref().filter(|p| p.exists()) {
        if !args.force {
            return Err(bad_field(
                "plot",
                FieldText::text(": ").then_all(exists_unless_forced(p)),
            ));
        }
        if !p.is_file() {
            return Err(bad_field(
                "plot",
                FieldText::text(": ").then_all(exists_not_a_file(p)),
            ));
        }
    }
    crate::exec::check_peaks(&args.peaks)?;
    if args.freq_cal.is_none() {
        for (field, given) in [
            ("carrier_hz", args.carrier_hz.is_some()),
            ("store_for_radio", args.store_for_radio.is_some()),
        ] {
            if given {
                return Err(bad_field_text(
                    field,
                    FieldText::field(field)
                        .then(" is for a frequency calibration: give ")
                        .then_field("freq_cal"),
                ));
            }
        }
    }
    let format = args.format;
    if !(args.overlap.is_finite() && (0.0..1.0).contains(&args.overlap)) {
        return Err(bad_field(
            "overlap",
            format!(
                " {} must be in [0, 1)",
                rxnode_interlock::compact(args.overlap)
            ),
        ));
    }
    if !rxnode_interlock::fft_size_ok(args.fft.fft_size) {
        return Err(bad_field(
            "fft_size",
            format!(" {} must be in 16..=1048576", args.fft.fft_size),
        ));
    }
    Ok(format)
}

/// Open one channel of the file and settle its rate and centre: the file's own
/// where it has them (an option that disagrees is refused, naming both), else the
/// options; the file must hold at least one FFT.
pub(super) fn open_recording(
    args: &AnalyzeOptions,
    format: Option<IqFormat>,
    channel: u32,
) -> Result<(IqReader, Recording)> {
    let reader = IqReader::open_channel(&args.file, format, channel)
        .map_err(|e| bad_input(e.to_string()))?;
    let info = reader.info().clone();
    let rate = match settled(
        &info,
        "sample_rate_hz",
        args.sample_rate_hz,
        info.sample_rate_hz,
    )? {
        Some(r) => positive("sample_rate_hz", r)?,
        None => {
            return Err(bad_field_text(
                "sample_rate_hz",
                FieldText::text(match info.format {
                    IqFormat::Sigmf => format!(
                        "{}: the SigMF meta has no core:sample_rate; give ",
                        args.file.display()
                    ),
                    f => format!(
                        "{}: a raw {} file carries no sample rate; give ",
                        args.file.display(),
                        f.name()
                    ),
                })
                .then_field("sample_rate_hz")
                .then(" HZ"),
            ))
        }
    };
    if let Some(c) = args.frequency_hz.filter(|c| !c.is_finite()) {
        return Err(bad_field("frequency_hz", format!(" {c} is not finite")));
    }
    let center = settled(&info, "frequency_hz", args.frequency_hz, info.center_hz)?;
    let center_from = match (info.center_hz, center) {
        (Some(_), _) if info.from_gqrx_name || info.center_from_name.is_some() => {
            Some(CenterFrom::FileName)
        }
        (Some(_), _) => Some(CenterFrom::Recording),
        (None, Some(_)) => Some(CenterFrom::Option),
        (None, None) => None,
    };
    let mut info = info;
    info.bandwidth_hz = settled(&info, "bandwidth_hz", args.bandwidth_hz, info.bandwidth_hz)?
        .map(|b| positive("bandwidth_hz", b))
        .transpose()?;
    let clock = recorded_clock(&info)?;
    if info.samples < args.fft.fft_size as u64 {
        return Err(bad_field_text(
            "fft_size",
            FieldText::text(format!(
                "{}: {} samples, fewer than ",
                args.file.display(),
                info.samples
            ))
            .then_field("fft_size")
            .then(format!(" {}", args.fft.fft_size)),
        ));
    }
    Ok((
        reader,
        Recording {
            info,
            rate,
            center,
            center_from,
            clock,
        },
    ))
}

/// A value the file may state and an option may give: the file's when it has one
/// (an option that disagrees by more than 1 part in 10⁹ is refused, naming both),
/// else the option's.
pub(super) fn settled(
    info: &IqInfo,
    field: &'static str,
    given: Option<f64>,
    own: Option<f64>,
) -> Result<Option<f64>> {
    match (given, own) {
        (Some(g), Some(o)) if (g - o).abs() > 1e-9 * o.abs().max(1.0) => {
            let named = info
                .center_from_name
                .as_deref()
                .map(|t| format!("{t} file name"));
            let whose = match (field, info.format) {
                _ if info.from_gqrx_name => "gqrx file name",
                ("frequency_hz", _) if named.is_some() => named.as_deref().unwrap_or_default(),
                _ if info.gnuradio_header => "GNU Radio File Meta Sink header",
                (_, IqFormat::Sdriq) => "SDRangel .sdriq header",
                ("sample_rate_hz", IqFormat::Wav) => "WAV header",
                (_, IqFormat::Wav) => "WAV's auxi chunk",
                _ => "SigMF meta",
            };
            let what = match (field, info.format) {
                ("sample_rate_hz", _) if info.from_gqrx_name => "sample rate",
                _ if info.from_gqrx_name => "centre frequency",
                ("frequency_hz", _) if named.is_some() => "centre frequency",
                ("sample_rate_hz", _) if info.gnuradio_header => "rx_rate",
                _ if info.gnuradio_header => "rx_freq",
                ("sample_rate_hz", IqFormat::Sdriq) => "sample rate",
                (_, IqFormat::Sdriq) => "centre frequency",
                ("sample_rate_hz", IqFormat::Wav) => "sample rate",
                ("sample_rate_hz", _) => "core:sample_rate",
                ("bandwidth_hz", _) => "rxnode:bandwidth_hz",
                (_, IqFormat::Wav) => "CenterFreq",
                _ => "core:frequency",
            };
            let place = info.meta_path.as_ref().unwrap_or(&info.data_path);
            Err(bad_field_text(
                field,
                FieldText::field(field)
                    .then(format!(
                        " {g} disagrees with the recording's own {o} ({what} of its {whose}, {}): \
                     the file's value is used; leave ",
                        place.display()
                    ))
                    .then_field(field)
                    .then(" out"),
            ))
        }
        (_, Some(o)) => Ok(Some(o)),
        (g, None) => Ok(g),
    }
}

/// The report's `clock` block: the recording's SigMF `rxnode:clock`, checked field by
/// field and kept as written (its `age_s` and `stale` are as of the recording), or
/// — when the file carries none — `from: "unknown"` with every field null: a
/// recording's calibration is never taken from this node's own records, since the
/// file may come from another radio or another day.
pub(super) fn recorded_clock(info: &IqInfo) -> Result<RecordingClock> {
    let Some(c) = &info.clock else {
        let what = match info.format {
            IqFormat::Sigmf => "its SigMF meta has no rxnode:clock",
            _ => "the format carries no clock metadata",
        };
        return Ok(RecordingClock {
            detail: format!(
                "{what}: the recording radio's clock source and frequency calibration are unknown"
            ),
            from: ClockFrom::Unknown,
            last_measurement: None,
            ppm_correction_applied: None,
            radio: None,
            source: None,
        });
    };
    let meta = info
        .meta_path
        .clone()
        .unwrap_or_else(|| info.data_path.clone());
    let bad = |field: &str, v: &Value, want: &str| {
        bad_input(format!(
            "{}: rxnode:clock{field} {v} must be {want}",
            meta.display()
        ))
    };
    let Some(o) = c.as_object() else {
        return Err(bad("", c, "an object"));
    };
    let text_or_null = |k: &str| -> Result<Option<String>> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(bad(&format!(".{k}"), v, "a string or null")),
        }
    };
    // A frequency error or correction within ±1000 ppm (rxnode_interlock::Quantity::Ppm):
    // a meta file saying 1e6 ppm (a 100 % correction) or 1e-300 is not believed.
    let ppm = rxnode_interlock::Quantity::Ppm;
    let finite = |v: &Value| v.as_f64().filter(|x| x.is_finite());
    let plausible = |v: &Value| finite(v).filter(|x| ppm.implausible(*x).is_none());
    let (lo, hi) = ppm.bounds();
    let in_range = format!("a number of ppm in {lo} … {hi}");
    let applied = match o.get("ppm_correction_applied") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            plausible(v)
                .ok_or_else(|| bad(".ppm_correction_applied", v, &format!("{in_range} or null")))?,
        ),
    };
    let last = match o.get("last_measurement") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => {
            let field = |k: &str| format!(".last_measurement.{k}");
            let number = |k: &str| {
                let v = m.get(k).unwrap_or(&Value::Null);
                plausible(v)
                    .filter(|x| k != "uncertainty_ppm" || *x >= 0.0)
                    .ok_or_else(|| bad(&field(k), v, &in_range))
            };
            let text = |k: &str| {
                let v = m.get(k).unwrap_or(&Value::Null);
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(&field(k), v, "a string"))
            };
            Some(RecordedMeasurement {
                age_s: m.get("age_s").map(Value::as_f64),
                method: text("method")?,
                ppm: number("ppm")?,
                reference: text("reference")?,
                stale: m.get("stale").map(Value::as_bool),
                time: text("time")?,
                uncertainty_ppm: number("uncertainty_ppm")?,
            })
        }
        Some(v) => {
            return Err(bad(
                ".last_measurement",
                v,
                "an object (ppm, uncertainty_ppm, method, reference, time) or null",
            ))
        }
    };
    Ok(RecordingClock {
        detail: format!(
            "{}: rxnode:clock, as written when it was recorded",
            meta.display()
        ),
        from: ClockFrom::Recording,
        last_measurement: last,
        ppm_correction_applied: applied,
        radio: text_or_null("radio")?,
        source: text_or_null("source")?,
    })
}

/// The engine's settings for the whole file: Welch over it, the CLKIN check if
/// asked (it needs the centre), the whole PSD kept for the plot.
pub(super) fn capture_settings(args: &AnalyzeOptions, rec: &Recording) -> Result<CaptureSettings> {
    let mut wcfg = WelchConfig::new(args.fft.fft_size, rec.rate);
    wcfg.overlap = args.overlap;
    wcfg.max_peaks = args.peaks.max_peaks;
    wcfg.min_snr_db = args.peaks.min_snr_db;
    wcfg.center_hz = rec.center;
    wcfg.clip_level = rec.info.clip_level;
    wcfg.passband_hz = rec.info.bandwidth_hz;
    let clkin = match args.clkin.clkin_tone_hz {
        None => None,
        Some(tone) => {
            let Some(c) = rec.center else {
                return Err(bad_field(
                    "clkin_tone_hz",
                    FieldText::text(" needs the centre frequency: give ")
                        .then_field("frequency_hz")
                        .then(" (or use SigMF)"),
                ));
            };
            if let Some(l) = args
                .clkin
                .clkin_expected_dbfs
                .filter(|l| !(l.is_finite() && *l <= 0.0))
            {
                return Err(bad_field(
                    "clkin_expected_dbfs",
                    format!(" {l} must be a finite level ≤ 0 dBFS"),
                ));
            }
            if !(args.clkin.clkin_tolerance_ppm.is_finite()
                && args.clkin.clkin_tolerance_ppm >= 0.0)
            {
                return Err(bad_field(
                    "clkin_tolerance_ppm",
                    format!(" {} must be ≥ 0", args.clkin.clkin_tolerance_ppm),
                ));
            }
            Some(crate::exec::live::clkin_config(
                &rxnode_interlock::ClkinSpec {
                    tone_hz: tone,
                    tolerance_ppm: args.clkin.clkin_tolerance_ppm,
                    expected_dbfs: args.clkin.clkin_expected_dbfs,
                    expected_tolerance_db: None,
                },
                c,
                rec.rate,
            ))
        }
    };
    let mut settings = CaptureSettings::new(rec.info.samples, wcfg);
    settings.block_samples = BLOCK;
    settings.pool_blocks = 4;
    // A recording carries no driver evidence (the default): the CLKIN verdict rests
    // on the measurement.
    settings.clkin = clkin;
    // The whole PSD, for the plot.
    settings.psd_points = args.fft.fft_size;
    Ok(settings)
}
