//! One rule for every clock and frequency number (docs/operator.md#numbers-that-are-true-or-absent):
//! a number is reported only when the assumptions its estimator makes were checked in
//! the data — one carrier in the window unless the task singles one out, the carrier's
//! identity confirmed, LO and sample clock consistent, the value inside the searched
//! range. Otherwise there is no number, only the reasons.
//!
//! The rule is a type: every estimate ([`crate::ClkinEstimate`],
//! [`crate::FreqCalEstimate`]) carries a [`Checked`] proof, and a [`Checked`] can only
//! be had from [`Checks::pass`], which fails with every reason when any check failed.
//!
//! ```
//! use rxnode_dsp::Checks;
//! let mut c = Checks::new();
//! c.in_range("radio error", 67.2, 60.0);
//! assert!(c.pass().unwrap_err().contains("outside the searched ±60 ppm"));
//! ```
use serde::Serialize;

/// Proof that every assumption of an estimate was checked and held. It has no public
/// constructor: only [`Checks::pass`] gives one.
#[must_use]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    /// The assumptions that were checked, in words.
    assumptions: Vec<&'static str>,
}

impl Checked {
    /// The assumptions that were checked, in words.
    pub fn assumptions(&self) -> &[&'static str] {
        &self.assumptions
    }
}

/// The checks of one estimate: each assumption, whether the data bore it out, and why
/// not when it did not.
#[derive(Debug, Default)]
pub struct Checks {
    held: Vec<&'static str>,
    failed: Vec<String>,
}

impl Checks {
    /// No checks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record `assumption`; when it did not hold, `why` says so (in words a user reads).
    pub fn check(&mut self, assumption: &'static str, held: bool, why: impl FnOnce() -> String) {
        if held {
            self.held.push(assumption);
        } else {
            self.failed.push(why());
        }
    }

    /// A value (ppm) is inside the searched ±`limit_ppm`, and finite.
    pub fn in_range(&mut self, what: &str, value_ppm: f64, limit_ppm: f64) {
        self.check(
            "inside the searched range",
            value_ppm.is_finite() && value_ppm.abs() <= limit_ppm,
            || format!("{what} {value_ppm:+.2} ppm is outside the searched ±{limit_ppm} ppm"),
        );
    }

    /// The proof when every check held, else every reason joined by `; `.
    pub fn pass(self) -> Result<Checked, String> {
        if self.failed.is_empty() {
            Ok(Checked {
                assumptions: self.held,
            })
        } else {
            Err(self.failed.join("; "))
        }
    }
}

/// Decimals that show `sigma` with two significant figures (0 to 12).
pub fn uncertainty_decimals(sigma: f64) -> usize {
    if sigma.is_finite() && sigma > 0.0 {
        (1.0 - sigma.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        0
    }
}

/// An uncertainty with two significant figures, never a rounded zero: `0.0000014`,
/// `0.012`, `3.4`; below 10⁻¹¹ in scientific notation (`1.4e-13`); `?` when it is not
/// a finite number ≥ 0.
pub fn fmt_sigma(sigma: f64) -> String {
    if !(sigma.is_finite() && sigma >= 0.0) {
        return "?".to_owned();
    }
    if sigma == 0.0 {
        return "0".to_owned();
    }
    if sigma < 1e-11 {
        return format!("{sigma:.1e}");
    }
    let d = uncertainty_decimals(sigma);
    format!("{sigma:.d$}")
}

/// `value ± sigma unit` — the one way a person is shown a measured number: the
/// uncertainty with two significant figures (never a rounded zero), the value signed
/// and with as many decimals (a value that rounds to zero prints unsigned).
///
/// ```
/// use rxnode_dsp::fmt_uncertain;
/// assert_eq!(fmt_uncertain(0.80012, 0.0000014, "ppm"), "+0.8001200 ± 0.0000014 ppm");
/// assert_eq!(fmt_uncertain(-20.3, 1.24, "ppm"), "-20.3 ± 1.2 ppm");
/// ```
pub fn fmt_uncertain(value: f64, sigma: f64, unit: &str) -> String {
    let d = uncertainty_decimals(sigma).max(if sigma > 0.0 && sigma < 1e-11 { 12 } else { 0 });
    let v = super::clkin::fmt_ppm(value, d);
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    format!("{v} ± {}{unit}", fmt_sigma(sigma))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncertainties_keep_two_significant_figures_and_never_round_to_zero() {
        assert_eq!(fmt_sigma(1e-6), "0.0000010");
        assert_eq!(fmt_sigma(1.4e-7), "0.00000014");
        assert_eq!(fmt_sigma(0.003), "0.0030");
        assert_eq!(fmt_sigma(2.0), "2.0");
        assert_eq!(fmt_sigma(37.0), "37");
        assert_eq!(fmt_sigma(2.5e-14), "2.5e-14");
        assert_eq!(fmt_sigma(f64::NAN), "?");
        assert_eq!(fmt_uncertain(0.0012, 0.003, "ppm"), "+0.0012 ± 0.0030 ppm");
        assert_eq!(fmt_uncertain(-0.00001, 0.003, "ppm"), "0.0000 ± 0.0030 ppm");
        assert_eq!(
            fmt_uncertain(11.9148, 1.4e-7, "ppm"),
            "+11.91480000 ± 0.00000014 ppm"
        );
        for k in -14..3 {
            let s = 1.7 * 10f64.powi(k);
            assert!(
                !fmt_sigma(s).trim_start_matches(['0', '.']).is_empty(),
                "{s}"
            );
        }
    }

    #[test]
    fn one_failed_check_gives_no_proof_and_names_every_reason() {
        let mut c = Checks::new();
        c.check("one carrier", true, || unreachable!());
        c.check("clock tied", false, || {
            "LO and sample clock disagree".into()
        });
        c.in_range("radio error", f64::NAN, 60.0);
        let why = c.pass().unwrap_err();
        assert!(why.contains("LO and sample clock disagree"), "{why}");
        assert!(why.contains("outside the searched ±60 ppm"), "{why}");
        let mut c = Checks::new();
        c.check("one carrier", true, || unreachable!());
        c.in_range("radio error", -59.9, 60.0);
        let ok = c.pass().unwrap();
        assert_eq!(
            ok.assumptions(),
            ["one carrier", "inside the searched range"]
        );
    }
}
