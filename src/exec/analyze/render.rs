//! The analysis for a person (text) and as a spectrum picture.
use super::*;

/// Every channel's analysis for a person, one after the other.
pub(super) fn render_all(r: &AnalyzeReport) -> String {
    if r.channels.is_empty() {
        return render_human(r);
    }
    let mut out = String::new();
    for c in &r.channels {
        let _ = writeln!(out, "── channel {} of {} ──", c.channel, c.num_channels);
        out.push_str(&render_human(c));
    }
    out
}

/// The analysis for a person, as text: the file, the Welch levels, the peaks, the clock.
pub(super) fn render_human(r: &AnalyzeReport) -> String {
    let mut out = String::new();
    let mhz = |hz: f64| format!("{:.6} MHz", hz / 1e6);
    // Without a centre the peaks are baseband offsets: kHz with a sign.
    let freq = |hz: f64| match r.center_hz {
        Some(_) => mhz(hz),
        None => format!("{:+.3} kHz", hz / 1e3),
    };
    let _ = writeln!(
        out,
        "file          {} ({}, {}{})",
        r.file,
        r.format.name(),
        r.datatype.sigmf_name(),
        if r.num_channels > 1 {
            format!(", channel {} of {}", r.channel, r.num_channels)
        } else {
            String::new()
        }
    );
    if r.silence.samples == 0 {
        let _ = writeln!(
            out,
            "samples       {} at {} ({:.3} s)",
            r.samples,
            rxnode_interlock::fmt_rate(r.sample_rate_hz),
            r.samples as f64 / r.sample_rate_hz
        );
    } else {
        silence_lines(&mut out, r);
    }
    let _ = match r.center_hz {
        Some(c) => writeln!(
            out,
            "centre        {}{}",
            mhz(c),
            match r.center_from {
                Some(CenterFrom::FileName) => " (from the file's name)",
                _ => "",
            }
        ),
        None => writeln!(
            out,
            "centre        unknown (peaks are offsets from the centre)"
        ),
    };
    let _ = writeln!(
        out,
        "welch         FFT {}, overlap {} %, {} averages",
        r.fft_size,
        crate::result::plot::trim_number(r.overlap * 100.0, 1),
        r.averages
    );
    let _ = match (r.noise_floor_db, &r.noise_floor_absent) {
        (Some(f), _) => writeln!(
            out,
            "noise floor   {f:.1} dBFS/bin{}",
            rxnode_dsp::fmt_floor_band(r.noise_floor_band_hz)
        ),
        (None, why) => writeln!(
            out,
            "noise floor   n/a ({})",
            why.as_deref().unwrap_or("not measured")
        ),
    };
    let _ = match r.mean_power_dbfs {
        Some(p) => writeln!(out, "mean power    {p:.1} dBFS"),
        None if r.samples == 0 => writeln!(out, "mean power    n/a (no sample analysed)"),
        None => writeln!(out, "mean power    n/a (no sample power)"),
    };
    let _ = writeln!(out, "clipped       {:.4} %", r.clipped_fraction * 100.0);
    let threshold =
        crate::exec::capture::threshold_line(r.peak_threshold_db, r.min_snr_db, r.averages);
    out.push_str(threshold.trim_start());
    if r.clipped_fraction > rxnode_dsp::MAX_CLIPPED_FRACTION {
        let _ = writeln!(out, "peaks         not measured (the input saturated)");
    } else if r.peaks.is_empty() && r.centre_carrier_dbfs.is_none() {
        let _ = writeln!(
            out,
            "peaks         none{}",
            crate::exec::capture::centre_span_note(r.centre_excluded_hz)
        );
    }
    let width = r
        .peaks
        .iter()
        .map(|p| freq(p.frequency_hz).len())
        .max()
        .unwrap_or(0);
    for (i, p) in r.peaks.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}{:>width$}  {:7.1} dBFS  {}{}",
            if i == 0 {
                "peaks         "
            } else {
                "              "
            },
            freq(p.frequency_hz),
            p.power_db,
            p.snr_text(),
            p.emission_text()
        );
    }
    if let Some(c) = r.centre_carrier_dbfs {
        let _ = writeln!(
            out,
            "{}{}",
            if r.peaks.is_empty() {
                "peaks         "
            } else {
                "              "
            },
            crate::exec::capture::centre_carrier_text(c, r.centre_excluded_hz)
        );
    }
    let _ = writeln!(out, "clock         {}", clock_line(&r.clock));
    if let Some(c) = &r.clkin {
        let status = match c.status {
            ClkinStatus::Pass => "PASS",
            ClkinStatus::Fail => "FAIL",
            ClkinStatus::NotMeasured => "NOT MEASURED",
        };
        let _ = writeln!(out, "CLKIN         {status}: {}", c.detail);
        if let (Some(m), Some(p), Some(u)) = (c.measured_hz, c.ppm, c.ppm_uncertainty) {
            let _ = writeln!(
                out,
                "              tone {} measured {} → {} (1σ)",
                mhz(c.tone_hz),
                mhz(m),
                rxnode_dsp::fmt_uncertain(p, u, "ppm")
            );
        }
        for e in c
            .evidence
            .iter()
            .filter(|e| e.name.starts_with("other carrier"))
        {
            let _ = writeln!(out, "              {}: {}", e.name, e.value);
        }
    }
    if let Some(f) = &r.freq_cal {
        let _ = writeln!(out, "freq cal      {}: {}", f.status, f.detail);
        if let Some(n) = &f.calibration_note {
            let _ = writeln!(out, "              calibration {n}");
        } else if f.calibration_stored == Some(true) {
            let _ = writeln!(
                out,
                "              kept in .local/calibration.json for the radio named"
            );
        }
    }
    out
}

/// The human line of the `clock` block.
pub(super) fn clock_line(c: &RecordingClock) -> String {
    if c.from != ClockFrom::Recording {
        return format!("unknown ({})", c.detail);
    }
    let mut s = format!(
        "from the recording: source {}",
        c.source.as_deref().unwrap_or("not recorded")
    );
    match &c.last_measurement {
        Some(m) => {
            s.push_str(&format!(
                "; last calibration {} ({}, {}, {})",
                rxnode_dsp::fmt_uncertain(m.ppm, m.uncertainty_ppm, "ppm"),
                m.method,
                m.reference,
                m.time
            ));
        }
        None => s.push_str("; no calibration recorded"),
    }
    match c.ppm_correction_applied {
        Some(p) => s.push_str(&format!(
            "; tuning corrected by {}{} ppm",
            if p >= 0.0 { "+" } else { "" },
            rxnode_interlock::compact(p)
        )),
        None => s.push_str("; no correction applied"),
    }
    s
}

/// Spectrum PNG with axes, title, labelled peaks, noise floor and CLKIN markers
/// (`crate::result::plot`).
pub(super) fn write_plot(
    path: &std::path::Path,
    force: bool,
    psd: &PsdTrace,
    r: &AnalyzeReport,
) -> Result<()> {
    let name = std::path::Path::new(&r.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.file.clone());
    let title = format!(
        "{name} · {} · {:.3} MS/s · fft {} · {} averages",
        r.center_hz
            .map(|c| format!("centre {:.6} MHz", c / 1e6))
            .unwrap_or_else(|| "baseband (centre unknown)".into()),
        r.sample_rate_hz / 1e6,
        r.fft_size,
        r.averages
    );
    let peaks = r
        .peaks
        .iter()
        .map(|p| (p.frequency_hz, p.power_db))
        .collect();
    let plot =
        crate::result::plot::live_spectrum(title, psd, peaks, r.noise_floor_db, r.clkin.as_ref());
    crate::result::plot::write_output(path, force, |t| {
        crate::result::plot::write_spectrum(t, &plot)
    })
}

/// Runs of digital silence listed in the human text (`--json` lists up to
/// [`rxnode_dsp::LISTED_SILENT_RUNS`]).
const SHOWN_RUNS: usize = 5;

/// The samples line of a file with digital silence: what was analysed of the
/// file, how much was skipped and where (docs/reliability.md#8-digital-silence-in-a-recording).
fn silence_lines(out: &mut String, r: &AnalyzeReport) {
    let s = &r.silence;
    let rate = r.sample_rate_hz;
    let total = r.samples + s.samples;
    let _ = writeln!(
        out,
        "samples       {} analysed of the file's {} at {} ({:.3} s of {:.3} s)",
        r.samples,
        total,
        rxnode_interlock::fmt_rate(rate),
        r.samples as f64 / rate,
        total as f64 / rate
    );
    let _ = writeln!(
        out,
        "silence       {} samples ({:.1} %) in {} run{} of exact zeros (I and Q both 0, at \
         least {} in a row): not analysed; every level, the floor and the peaks below are \
         of the {} recorded samples only",
        s.samples,
        100.0 * s.samples as f64 / total.max(1) as f64,
        s.run_count,
        if s.run_count == 1 { "" } else { "s" },
        s.min_run.unwrap_or(0),
        r.samples
    );
    for run in s.runs.iter().take(SHOWN_RUNS) {
        let end = run.start + run.samples;
        let _ = writeln!(
            out,
            "              samples {}…{} ({} samples, {:.6} s to {:.6} s)",
            run.start,
            end - 1,
            run.samples,
            run.start as f64 / rate,
            end as f64 / rate
        );
    }
    if s.run_count > SHOWN_RUNS as u64 {
        let _ = writeln!(
            out,
            "              and {} more run(s) (--json lists the first {})",
            s.run_count - SHOWN_RUNS as u64,
            rxnode_dsp::LISTED_SILENT_RUNS
        );
    }
}
