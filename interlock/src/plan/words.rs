//! Numbers and settings in the plain units a step is described in at the
//! operator's prompt (`Step::describe`): MHz, MS/s, seconds, bytes, gains.
use crate::escaped;
use crate::sweep::GainSpec;

/// A frequency in MHz: three decimals, more when they are needed (up to 1 Hz).
pub fn mhz(hz: f64) -> String {
    if !hz.is_finite() || hz.abs() >= 1e15 {
        return format!("{} Hz", crate::compact(hz));
    }
    let mut s = format!("{:.6}", hz / 1e6);
    while s.ends_with('0') && s.len() - s.find('.').unwrap_or(s.len()) > 4 {
        s.pop();
    }
    format!("{s} MHz")
}

/// A frequency in kHz, three decimals.
pub(crate) fn khz(hz: f64) -> String {
    if !hz.is_finite() || hz.abs() >= 1e15 {
        return format!("{} Hz", crate::compact(hz));
    }
    format!("{:.3} kHz", hz / 1e3)
}

/// A sample rate in MS/s.
pub(crate) fn msps(rate: f64) -> String {
    crate::fmt_rate(rate)
}

/// Seconds, one decimal at least, as many as given up to milliseconds.
pub(crate) fn secs(s: f64) -> String {
    if !s.is_finite() || s.abs() >= 1e9 || (s != 0.0 && s.abs() < 1e-3) {
        return format!("{} s", crate::compact(s));
    }
    if s.is_finite() && (s * 10.0).fract().abs() < 1e-9 {
        format!("{s:.1} s")
    } else {
        format!("{s:.3} s")
    }
}

/// Bytes in decimal units (`16 MB`, `1.2 GB`).
pub fn bytes(b: f64) -> String {
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e3 {
        (b / 1e3, "kB")
    } else {
        return format!("{b:.0} B");
    };
    if !v.is_finite() || v >= 1e6 {
        return format!("{} {unit}", crate::compact(v));
    }
    if v >= 10.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// An RX gain as the prompt shows it (element names escaped).
pub(crate) fn gain(g: Option<&GainSpec>) -> String {
    match g {
        None => "gain not set (the radio keeps its current gain)".to_owned(),
        Some(GainSpec::Total(t)) => format!("gain {} dB", crate::compact(*t)),
        Some(GainSpec::Elements(m)) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}={}", escaped(k), crate::compact(*v)))
                .collect();
            format!(
                "gain {} dB (total {} dB)",
                parts.join(" "),
                crate::compact(g.map_or(0.0, GainSpec::total))
            )
        }
    }
}

/// The radio's own settings as the prompt shows them: every setting written (a
/// bias-T powers the antenna port), stream args, AGC, a manual correction.
pub fn radio_settings_text(r: &crate::RadioSettings) -> String {
    let pairs = |m: &std::collections::BTreeMap<String, String>| {
        m.iter()
            .map(|(k, v)| format!("{}={}", escaped(k), escaped(v)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::new();
    if !r.settings.is_empty() {
        s.push_str(&format!(", radio settings written: {}", pairs(&r.settings)));
    }
    if !r.stream_args.is_empty() {
        s.push_str(&format!(", stream args {}", pairs(&r.stream_args)));
    }
    if r.agc {
        s.push_str(", AGC on");
    }
    if let Some(p) = r.ppm {
        s.push_str(&format!(
            ", manual frequency correction {} ppm",
            crate::compact(p)
        ));
    }
    if let Some(c) = r.channel {
        s.push_str(&format!(", RX channel {c}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_sizes() {
        assert_eq!(mhz(100e6), "100.000 MHz");
        assert_eq!(mhz(433.9195312e6), "433.919531 MHz");
        assert_eq!(bytes(16e6), "16 MB");
        assert_eq!(bytes(4.2e9), "4.2 GB");
        assert_eq!(secs(1.0), "1.0 s");
        assert_eq!(secs(0.25), "0.250 s");
        assert_eq!(secs(0.3), "0.3 s");
        // Absurd values stay short: the prompt line never runs to hundreds of digits.
        assert_eq!(secs(1e300), "1e300 s");
        assert_eq!(mhz(1e300), "1e300 Hz");
        assert_eq!(bytes(1e300), "1e291 GB");
        assert_eq!(gain(Some(&GainSpec::Total(-1e308))), "gain -1e308 dB");
    }
}
