//! The units people type, one parser per unit type: a frequency or rate with an SI
//! suffix (`433.92M`), a duration with a unit (`500ms`, `10m`), and the bounds
//! outside which a value is a slip of the keyboard rather than a radio setting
//! (docs/operator.md#units).

/// What a number of Hz or S/s stands for: each has its own plausible range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Quantity {
    /// A radio frequency (a centre, a band edge, a tone): 1 kHz to 300 GHz.
    Frequency,
    /// A sample rate: 1 kS/s to 100 GS/s.
    SampleRate,
    /// A duration (a capture's length, a dwell, a settling time): at most 1 000 000 s
    /// (11.6 days); its sign is checked apart.
    Duration,
    /// A gain or a level difference: −100 dB to +200 dB.
    Gain,
    /// A frequency error or correction: ±1000 ppm (a radio's crystal is a few ppm to
    /// tens of ppm off; 1000 ppm is 0.1 %).
    Ppm,
    /// A frequency tolerance in parts per billion: at most 1 000 000 ppb (1000 ppm).
    Ppb,
}

impl Quantity {
    /// The lowest and highest plausible value.
    pub const fn bounds(self) -> (f64, f64) {
        match self {
            Quantity::Frequency => (1e3, 300e9),
            Quantity::SampleRate => (1e3, 100e9),
            Quantity::Duration => (0.0, 1e6),
            Quantity::Gain => (-100.0, 200.0),
            Quantity::Ppm => (-1000.0, 1000.0),
            Quantity::Ppb => (0.0, 1e6),
        }
    }

    /// The quantity a plan field holds, by its unit suffix (`duration_s`,
    /// `gain_db`, `tolerance_ppm`, `tolerance_ppb`); `None` for a field in Hz or S/s
    /// (their own checks name them) or without a unit.
    pub fn of_field(field: &str) -> Option<Quantity> {
        if field.ends_with("_s") {
            Some(Quantity::Duration)
        } else if field.ends_with("_db") {
            Some(Quantity::Gain)
        } else if field.ends_with("_ppm") {
            Some(Quantity::Ppm)
        } else if field.ends_with("_ppb") {
            Some(Quantity::Ppb)
        } else {
            None
        }
    }

    /// The unit a person writes after the number.
    const fn unit(self) -> &'static str {
        match self {
            Quantity::Frequency => "Hz",
            Quantity::SampleRate => "S/s",
            Quantity::Duration => "s",
            Quantity::Gain => "dB",
            Quantity::Ppm => "ppm",
            Quantity::Ppb => "ppb",
        }
    }

    /// Why `v` cannot be meant (a positive finite value outside
    /// [`Quantity::bounds`]); `None` when it is plausible, or not a positive
    /// finite number (another check says so).
    pub fn implausible(self, v: f64) -> Option<String> {
        let (lo, hi) = self.bounds();
        let signed = matches!(self, Quantity::Gain | Quantity::Ppm);
        if !(v.is_finite() && (signed || v > 0.0)) || (lo..=hi).contains(&v) {
            return None;
        }
        let unit = self.unit();
        if !matches!(self, Quantity::Frequency | Quantity::SampleRate) {
            return Some(format!(
                "{} {unit} is outside the plausible range {} … {} {unit}",
                g(v),
                g(lo),
                g(hi)
            ));
        }
        let (what, limit) = if v < lo {
            ("below", si(lo, unit))
        } else {
            ("above", si(hi, unit))
        };
        Some(format!("{} {unit} is implausible ({what} {limit})", g(v)))
    }
}

/// A number as a person writes it: no trailing zeros, no exponent for
/// everyday values, and never hundreds of digits (`1e300`, `1e-300`).
pub fn compact(v: f64) -> String {
    g(v)
}

/// [`compact`].
fn g(v: f64) -> String {
    let s = format!("{v}");
    if s.len() <= 16 {
        return s;
    }
    // Six significant digits at most, trailing zeros dropped: 1e300, 1.23457e-300.
    let e = format!("{v:.5e}");
    match e.split_once('e') {
        Some((m, x)) if m.contains('.') => {
            format!("{}e{x}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => e,
    }
}

/// `v` with its SI prefix (`433.92 MHz`, `2 MS/s`).
pub fn si(v: f64, unit: &str) -> String {
    let a = v.abs();
    let (scale, prefix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let n = v / scale;
    // Up to six decimals, trailing zeros dropped: 433.92 MHz, 2 MS/s, 1.024 MHz.
    let t = format!("{n:.6}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t} {prefix}{unit}")
}

/// A sample rate as every report writes it: MS/s with three decimals, more
/// only when the rate needs them (`2.000 MS/s`, `1.920 MS/s`, `2.4576 MS/s`,
/// `0.250 MS/s`).
pub fn fmt_rate(sps: f64) -> String {
    let m = sps / 1e6;
    let text = (3..=6)
        .map(|d| format!("{m:.d$}"))
        .find(|t| {
            t.parse::<f64>()
                .is_ok_and(|x| (x - m).abs() <= m.abs() * 1e-12)
        })
        .unwrap_or_else(|| format!("{m:.6}"));
    format!("{text} MS/s")
}

/// A frequency, rate or bin width with an optional SI suffix, as SDR tools write
/// them: `433.92M`, `2.4G`, `10k`, `2e6`, `100MHz`, `2 MS/s`. `k`/`K` is 10³, `M`
/// 10⁶, `G`/`g` 10⁹ (a lower-case `m` would be milli, and is refused).
pub fn parse_si(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let unitless = ["Hz", "hz", "HZ", "S/s", "Sps", "sps"]
        .iter()
        .find_map(|u| t.strip_suffix(u))
        .unwrap_or(t)
        .trim_end();
    let (number, scale) = match unitless.chars().last() {
        Some('k' | 'K') => (&unitless[..unitless.len() - 1], 1e3),
        Some('M') => (&unitless[..unitless.len() - 1], 1e6),
        Some('G' | 'g') => (&unitless[..unitless.len() - 1], 1e9),
        Some('m') => {
            return Err(format!(
                "{text:?}: `m` is milli; write M for mega (e.g. 433.92M)"
            ))
        }
        _ => (unitless, 1.0),
    };
    let v: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number (e.g. 433.92M, 2.4G, 10k, 2e6)"))?;
    let v = v * scale;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("{text:?} is not a finite number"))
    }
}

/// [`parse_si`], then refused when implausible for `q` ([`Quantity::implausible`]).
pub fn parse_quantity(text: &str, q: Quantity) -> Result<f64, String> {
    let v = parse_si(text)?;
    match q.implausible(v) {
        // 100 is 100 MHz, 2 is 2 MS/s: the number was written in mega.
        Some(why) if v < q.bounds().0 => Err(format!(
            "{why}: did you mean {}M ({})?",
            text.trim(),
            si(v * 1e6, q.unit())
        )),
        Some(why) => Err(why),
        None => Ok(v),
    }
}

/// A duration in seconds: a plain number is seconds (`0.05`, `30`); else a
/// number and one unit, `ms`, `s`, `m` (minutes), `h` or `d` (`500ms`, `2s`,
/// `10m`, `1.5h`). Refused: negative, not finite, an unknown unit.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use ms, s, m, h or d, e.g. 500ms, 2s, 10m, 1h)"
            ))
        }
    };
    let v: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 2, 500ms, 2s, 10m, 1h)"))?;
    let v = v * scale;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{text:?} is not a duration ≥ 0"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_suffixes_as_sdr_tools_write_them() {
        for (text, want) in [
            ("433.92M", 433.92e6),
            ("2.4G", 2.4e9),
            ("10k", 10e3),
            ("10K", 10e3),
            ("2e6", 2e6),
            ("100MHz", 100e6),
            ("100 MHz", 100e6),
            ("2 MS/s", 2e6),
            ("61.44M", 61.44e6),
            ("1500", 1500.0),
        ] {
            let got = parse_si(text).unwrap();
            assert!((got - want).abs() <= want * 1e-12, "{text}: {got}");
        }
        for bad in ["", "M", "100m", "1e400", "ten", "NaNk", "1.2.3M"] {
            assert!(parse_si(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn durations_take_units_and_plain_seconds() {
        for (text, want) in [
            ("2", 2.0),
            ("0.05", 0.05),
            ("2s", 2.0),
            ("500ms", 0.5),
            ("10m", 600.0),
            ("1h", 3600.0),
            ("1.5h", 5400.0),
            ("1d", 86400.0),
            ("1e-3", 1e-3),
            (" 30 s ", 30.0),
        ] {
            let got = parse_seconds(text).unwrap();
            assert!((got - want).abs() <= want * 1e-12, "{text}: {got}");
        }
        for bad in ["", "s", "-1", "2x", "10 mins", "inf", "1e400"] {
            assert!(parse_seconds(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_number_written_in_mega_is_implausible_and_the_fix_is_named() {
        let e = parse_quantity("100", Quantity::Frequency).unwrap_err();
        assert_eq!(
            e,
            "100 Hz is implausible (below 1 kHz): did you mean 100M (100 MHz)?"
        );
        let e = parse_quantity("2", Quantity::SampleRate).unwrap_err();
        assert!(e.ends_with("did you mean 2M (2 MS/s)?"), "{e}");
        assert_eq!(
            Quantity::Frequency.implausible(433.92).unwrap(),
            "433.92 Hz is implausible (below 1 kHz)"
        );
        assert!(Quantity::Frequency.implausible(433.92e6).is_none());
        assert!(Quantity::Frequency
            .implausible(1e12)
            .unwrap()
            .contains("above 300 GHz"));
        assert!(
            Quantity::SampleRate.implausible(0.0).is_none(),
            "another check says so"
        );
    }

    #[test]
    fn a_rate_is_ms_per_s_with_the_decimals_it_needs() {
        assert_eq!(fmt_rate(2e6), "2.000 MS/s");
        assert_eq!(fmt_rate(10e6), "10.000 MS/s");
        assert_eq!(fmt_rate(1.92e6), "1.920 MS/s");
        assert_eq!(fmt_rate(2.4576e6), "2.4576 MS/s");
        assert_eq!(fmt_rate(250e3), "0.250 MS/s");
    }

    #[test]
    fn si_prints_the_prefix_a_person_reads() {
        assert_eq!(si(2e6, "S/s"), "2 MS/s");
        assert_eq!(si(433.92e6, "Hz"), "433.92 MHz");
        assert_eq!(si(10e3, "Hz"), "10 kHz");
        assert_eq!(si(1.92e6, "S/s"), "1.92 MS/s");
    }
}
