//! The `clock_check` op: select and read a radio's clock source.
use super::{Needs, PlanOp, DEVICE_PATTERN};
use crate::error::Error;
use crate::escaped;
use crate::plan::sanity::StepCheck;
use crate::policy::Policy;
use serde::{Deserialize, Serialize};

/// `clock_check` step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockCheckStep {
    /// SoapySDR device args, e.g. driver=hackrf,serial=…
    #[schemars(length(min = 1), regex(pattern = DEVICE_PATTERN))]
    pub device: String,
    /// The clock source expected (`internal`, `external` …), if any.
    #[serde(default)]
    pub expect_source: Option<String>,
    /// A clock source to set before checking, if any.
    #[serde(default)]
    pub clock_source: Option<String>,
}

impl PlanOp for ClockCheckStep {
    const NAME: &'static str = "clock_check";
    const NEEDS: Needs = Needs::Hardware;
    const ABOUT: &'static str = "set/read the clock source (YELLOW)";
    const EXAMPLE: &'static str =
        r#"{"op": "clock_check", "device": "driver=rxsim", "expect_source": "external"}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) =
        (r#"{"op": "clock_check", "device": ""}"#, "device");

    fn sanity(&self, chk: &mut StepCheck<'_>) {
        chk.device(&self.device);
    }

    /// No policy limit applies.
    fn policy(&self, _: &Policy) -> Result<(), Error> {
        Ok(())
    }

    fn describe(&self) -> String {
        let mut s = format!("clock_check {}:", escaped(&self.device));
        if let Some(src) = &self.clock_source {
            s.push_str(&format!(" selects clock source {},", escaped(src)));
        }
        match &self.expect_source {
            Some(e) => s.push_str(&format!(" expects clock source {}", escaped(e))),
            None => s.push_str(" reads the clock source"),
        }
        s
    }

    fn device(&self) -> Option<&str> {
        Some(&self.device)
    }
}
