//! The `inventory` op: enumerate and probe every radio, read-only.
use super::{Needs, PlanOp};
use crate::error::Error;
use crate::header::truncate;
use crate::plan::sanity::StepCheck;
use crate::policy::Policy;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `inventory` step: it has no field but its op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InventoryStep {}

impl PlanOp for InventoryStep {
    const NAME: &'static str = "inventory";
    const NEEDS: Needs = Needs::Hardware;
    const ABOUT: &'static str =
        "enumerate and probe radios, read-only (YELLOW; HARDWARE_ACCESS = YES)";
    const EXAMPLE: &'static str = r#"{"op": "inventory"}"#;
    const BAD_EXAMPLE: (&'static str, &'static str) =
        (r#"{"op": "inventory", "device": "driver=rxsim"}"#, "device");

    /// Every field is unknown, each named.
    fn parse(rest: Map<String, Value>, chk: &mut StepCheck<'_>) -> Option<Self> {
        let n = chk.n;
        for k in rest.keys() {
            chk.push(
                Some(&truncate(k, 80)),
                format!(
                    "rx-plan step {n} (inventory): unknown field {:?}",
                    truncate(k, 80)
                ),
            );
        }
        Some(InventoryStep {})
    }

    fn sanity(&self, _: &mut StepCheck<'_>) {}

    /// No policy limit applies.
    fn policy(&self, _: &Policy) -> Result<(), Error> {
        Ok(())
    }

    fn describe(&self) -> String {
        "inventory: list and probe every radio, read-only".to_owned()
    }

    fn device(&self) -> Option<&str> {
        None
    }
}
