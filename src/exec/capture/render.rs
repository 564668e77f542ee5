//! The human report of `rxnode capture`: what was asked beside what the radio had,
//! the stream and its losses, the CLKIN verdict, the files and the errors, in one
//! readable block; and the lines other reports share with it.
use super::{status_name, CaptureOptions};
use crate::result::sections::capture::typed;
use crate::store::calibration::{ClockBlock, CorrectionFrom};
use rxnode_dsp::{CaptureSummary, ClkinReport};
use std::fmt::Write as _;

fn opt(v: Option<f64>, unit: &str, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$} {unit}"))
        .unwrap_or_else(|| "n/a".into())
}

/// The report's label column: the label on a list's first line, blank below it.
pub(super) fn column(i: usize, label: &str) -> String {
    if i == 0 {
        format!("{label:<14}")
    } else {
        " ".repeat(14)
    }
}

fn mhz(hz: f64) -> String {
    format!("{:.6} MHz", hz / 1e6)
}

/// The human report: one readable block.
pub(super) fn render(s: &CaptureSummary, args: &CaptureOptions) -> String {
    let mut o = String::new();
    render_settings(&mut o, s, args);
    render_stream(&mut o, s);
    o.push_str(&threshold_line(
        s.peak_threshold_db,
        args.peaks.min_snr_db,
        s.averages,
    ));
    if let Some(k) = &s.clkin {
        render_clkin(&mut o, k);
    }
    render_files(&mut o, s);
    let _ = writeln!(
        o,
        "status: {}{}",
        status_name(s.status),
        if s.cancelled {
            " (interrupted: what was captured is written)"
        } else {
            ""
        }
    );
    o
}

/// What was asked for beside what the radio really had.
fn render_settings(o: &mut String, s: &CaptureSummary, args: &CaptureOptions) {
    let a = &s.actual;
    let num = |k: &str| a.get(k).and_then(serde_json::Value::as_f64);
    let _ = writeln!(o, "capture on {}", args.device);
    let _ = writeln!(
        o,
        "  frequency     requested {}  actual {}",
        mhz(args.frequency_hz),
        num("frequency_hz").map(mhz).unwrap_or_else(|| "n/a".into())
    );
    let clock = s.clock.as_ref().and_then(typed::<ClockBlock>);
    if let Some(line) = correction_line(clock.as_ref()) {
        let _ = writeln!(o, "{line}");
    }
    let _ = writeln!(
        o,
        "  sample rate   requested {}  actual {}",
        rxnode_interlock::fmt_rate(args.sample_rate_hz),
        num("sample_rate_hz")
            .map(rxnode_interlock::fmt_rate)
            .unwrap_or_else(|| "n/a".into())
    );
    let actual_elements = a
        .get("gain_elements_db")
        .and_then(|m| m.as_object())
        .filter(|m| !m.is_empty())
        .map(|m| {
            let parts: Vec<String> = m
                .iter()
                .filter_map(|(k, v)| Some(format!("{k} {:.1}", v.as_f64()?)))
                .collect();
            format!(" ({} dB)", parts.join(", "))
        })
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "  gain          requested {}  actual {}{actual_elements}",
        requested_gain(args),
        opt(num("gain_db"), "dB", 1)
    );
    if let Some(b) = args.bandwidth_hz {
        let _ = writeln!(
            o,
            "  bandwidth     requested {}  actual {}",
            mhz(b),
            num("bandwidth_hz").map(mhz).unwrap_or_else(|| "n/a".into())
        );
    }
    if let Some(ant) = &args.antenna {
        let _ = writeln!(
            o,
            "  antenna       requested {ant}  actual {}",
            a.get("antenna").and_then(|v| v.as_str()).unwrap_or("n/a")
        );
    }
    let _ = writeln!(
        o,
        "  clock source  requested {}  actual {}",
        args.clock_source.as_deref().unwrap_or("(unchanged)"),
        a.get("clock_source")
            .and_then(|v| v.as_str())
            .unwrap_or("n/a")
    );
}

/// The line that says a calibration correction was applied (`--apply-cal`), and
/// from which measurement — so that an actual frequency off the requested one
/// never reads as a tuning error. `None` when no correction was applied.
pub(crate) fn correction_line(clock: Option<&ClockBlock>) -> Option<String> {
    let c = clock?;
    let ppm = c.ppm_correction_applied.filter(|p| p.is_finite())?;
    if c.ppm_correction_from == Some(CorrectionFrom::Manual) {
        return Some(format!(
            "  correction    {ppm:+.3} ppm applied (manual, -p): the radio is tuned off the \
             requested frequency by that much so that the requested frequency is at the centre"
        ));
    }
    let from = c
        .last_measurement
        .as_ref()
        .map(|m| {
            // How old the measurement is and how well it knew the radio: a
            // correction is only as good as both.
            let age = match m.age_s.filter(|a| a.is_finite()) {
                Some(a) => format!("{} old", crate::store::calibration::fmt_age(a)),
                None => "age unknown".to_owned(),
            };
            format!(
                "{} measurement of {}, {age}, ± {} ppm (1σ)",
                m.method,
                m.time,
                rxnode_dsp::fmt_sigma(m.uncertainty_ppm)
            )
        })
        .unwrap_or_else(|| "this radio's calibration".to_owned());
    Some(format!(
        "  correction    {ppm:+.3} ppm applied ({from}, --apply-cal): the radio is tuned off \
         the requested frequency by that much so that the requested frequency is at the centre"
    ))
}

/// The gain asked for, in the operator's own terms: `20.0 dB`, or
/// `LNA 24.0 + VGA 20.0 dB` when set per element.
fn requested_gain(args: &CaptureOptions) -> String {
    match &args.gain_db {
        None => "(driver default)".into(),
        Some(rxnode_interlock::GainSpec::Total(g)) => format!("{g:.1} dB"),
        Some(rxnode_interlock::GainSpec::Elements(m)) => {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v:.1}")).collect();
            format!("{} dB", parts.join(" + "))
        }
    }
}

/// What the loss line adds: nothing for a clean capture; for one that lost
/// nothing but ended early (interrupted, or stopped by its deadline or a
/// source error), what happened and how far it got; `NOT clean` only for a
/// real loss (an overflow, a drop, a timeout, a gap).
fn loss_note(s: &CaptureSummary) -> String {
    if s.clean {
        return String::new();
    }
    let lost_none = s.overflows == 0
        && s.dropped_samples == 0
        && s.timeouts == 0
        && s.gaps == 0
        && s.lost_samples == Some(0);
    if !lost_none || s.samples_received >= s.samples_requested {
        return " — NOT clean".into();
    }
    let how_far = format!(
        "after {} of {} samples",
        s.samples_received, s.samples_requested
    );
    if s.cancelled {
        format!(" — none lost; interrupted {how_far}")
    } else {
        format!(" — none lost; stopped ({}) {how_far}", s.stop_reason)
    }
}

/// The samples, their losses, the peaks and the noise floor.
fn render_stream(o: &mut String, s: &CaptureSummary) {
    let _ = writeln!(
        o,
        "  samples       {} of {} received, {} processed in {:.2} s ({})",
        s.samples_received, s.samples_requested, s.samples_processed, s.duration_s, s.stop_reason
    );
    let _ = writeln!(
        o,
        "  loss          {} overflow(s), {} dropped, {} timeout(s){}",
        s.overflows,
        s.dropped_samples,
        s.timeouts,
        loss_note(s)
    );
    if s.lost_samples != Some(0) {
        let _ = writeln!(
            o,
            "  lost          {}; the PSD averages gap-free segments only",
            s.lost_in_words()
        );
    }
    if s.clipped_fraction > rxnode_dsp::MAX_CLIPPED_FRACTION {
        let _ = writeln!(o, "  peaks         not measured (the input saturated)");
    } else if s.peaks.is_empty() && s.centre_carrier_dbfs.is_none() {
        let _ = writeln!(
            o,
            "  peaks         none{}",
            centre_span_note(s.centre_excluded_hz)
        );
    }
    let width = s
        .peaks
        .iter()
        .map(|p| mhz(p.frequency_hz).len())
        .max()
        .unwrap_or(0);
    for (i, p) in s.peaks.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}{:>width$}  {:7.1} dBFS  {}{}",
            column(i, "peaks"),
            mhz(p.frequency_hz),
            p.power_db,
            p.snr_text(),
            p.emission_text()
        );
    }
    if let Some(c) = s.centre_carrier_dbfs {
        let _ = writeln!(
            o,
            "  {}{}",
            column(s.peaks.len(), "peaks"),
            centre_carrier_text(c, s.centre_excluded_hz)
        );
    }
    let _ = writeln!(
        o,
        "  noise floor   {}FFT {}, {} averages); mean power {}; clipped {:.4} %",
        s.noise_floor_db
            .map(|f| format!(
                "{f:.1} dBFS/bin{} (",
                rxnode_dsp::fmt_floor_band(s.noise_floor_band_hz)
            ))
            .unwrap_or_else(|| format!("n/a ({}; ", s.floor_absent().unwrap_or_default())),
        s.fft_size,
        s.averages,
        opt(s.mean_power_dbfs, "dBFS", 1),
        s.clipped_fraction * 100.0
    );
}

/// A frequency span in Hz, kHz or MHz, to four significant digits.
fn span(hz: f64) -> String {
    let (v, unit) = if hz >= 1e6 {
        (hz / 1e6, "MHz")
    } else if hz >= 1e3 {
        (hz / 1e3, "kHz")
    } else {
        (hz, "Hz")
    };
    let decimals = (3 - v.log10().floor() as i32).clamp(0, 3) as usize;
    format!("{} {unit}", crate::result::plot::trim_number(v, decimals))
}

/// ` (the centre ±1.465 kHz is not searched)` after `peaks none`, empty when nothing
/// is skipped (docs/operator.md#peaks-and-the-noise-floor).
pub(crate) fn centre_span_note(excluded_hz: f64) -> String {
    if excluded_hz > 0.0 {
        format!(" (the centre ±{} is not searched)", span(excluded_hz))
    } else {
        String::new()
    }
}

/// The line for a level above the peak threshold in the skipped centre span.
pub(crate) fn centre_carrier_text(dbfs: f64, excluded_hz: f64) -> String {
    format!(
        "centre {:7.1} dBFS  a carrier or the radio's DC offset at the centre (±{} not searched for peaks)",
        dbfs,
        span(excluded_hz)
    )
}

/// `  threshold     …` when noise alone, with this few averages, reaches higher than
/// the minimum SNR asked for (so the peaks stand that much above the floor); empty
/// otherwise.
pub(crate) fn threshold_line(threshold_db: Option<f64>, min_snr_db: f64, averages: u64) -> String {
    match threshold_db {
        Some(t) if t > min_snr_db + 0.05 => format!(
            "  threshold     peaks stand {t:.1} dB above the floor: with {averages} average(s) noise \
             alone reaches {t:.1} dB by chance (1 % of spectra; min SNR {min_snr_db:.1} dB)\n"
        ),
        _ => String::new(),
    }
}

/// `+p ± σ ppm` ([`rxnode_dsp::fmt_uncertain`]), or `n/a` without a number.
pub(crate) fn clkin_error(ppm: Option<f64>, sigma: Option<f64>) -> String {
    match (ppm, sigma) {
        (Some(p), Some(u)) => rxnode_dsp::fmt_uncertain(p, u, "ppm"),
        (Some(p), None) => format!("{} ppm ± n/a", rxnode_dsp::fmt_ppm(p, 4)),
        _ => "n/a".into(),
    }
}

/// The CLKIN verdict and its evidence.
fn render_clkin(o: &mut String, k: &ClkinReport) {
    let _ = writeln!(
        o,
        "  CLKIN         {}: tone {} measured {}, error {} (tolerance {} ppm)",
        match k.status {
            rxnode_dsp::ClkinStatus::Pass => "PASS",
            rxnode_dsp::ClkinStatus::Fail => "FAIL",
            rxnode_dsp::ClkinStatus::NotMeasured => "NOT MEASURED",
        },
        mhz(k.tone_hz),
        k.measured_hz.map(mhz).unwrap_or_else(|| "n/a".into()),
        clkin_error(k.ppm, k.ppm_uncertainty),
        k.tolerance_ppm
    );
    let _ = writeln!(o, "                {}", k.detail);
    for e in &k.evidence {
        let _ = writeln!(
            o,
            "                {} {} = {}",
            if e.consistent { "ok " } else { "!! " },
            e.name,
            e.value
        );
    }
}

/// The recorded files, a stopped recording and the errors.
fn render_files(o: &mut String, s: &CaptureSummary) {
    for (i, f) in s.iq_files.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {}{} ({}, {} bytes, sha256 {})",
            column(i, "files"),
            f.path.display(),
            f.format,
            f.bytes,
            f.sha256
        );
    }
    if let Some(r) = &s.recording_error {
        let _ = writeln!(o, "  recording     stopped: {r}");
    }
    for e in &s.errors {
        let _ = writeln!(o, "  error         {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::sections::capture::tests::summary;

    /// An interrupted capture that lost nothing was reported "0 overflow(s), 0
    /// dropped, 0 timeout(s) — NOT clean", as if samples had been lost; now the
    /// loss line says none was lost and how far it got, and `NOT clean` is kept
    /// for a real loss.
    #[test]
    fn an_interrupted_capture_is_incomplete_not_lossy() {
        let whole = summary();
        assert!(whole.clean);
        assert_eq!(loss_note(&whole), "");
        let interrupted = CaptureSummary {
            samples_received: 50_000,
            samples_processed: 50_000,
            clean: false,
            cancelled: true,
            stop_reason: "cancelled".into(),
            ..whole.clone()
        };
        assert_eq!(
            loss_note(&interrupted),
            " — none lost; interrupted after 50000 of 200000 samples"
        );
        let stalled = CaptureSummary {
            cancelled: false,
            stop_reason: "deadline".into(),
            ..interrupted.clone()
        };
        assert_eq!(
            loss_note(&stalled),
            " — none lost; stopped (deadline) after 50000 of 200000 samples"
        );
        let lossy = CaptureSummary {
            overflows: 1,
            gaps: 1,
            lost_samples: Some(4096),
            ..interrupted
        };
        assert_eq!(loss_note(&lossy), " — NOT clean");
        let dropped = CaptureSummary {
            dropped_samples: 10,
            clean: false,
            ..whole
        };
        assert_eq!(loss_note(&dropped), " — NOT clean");
    }
}
