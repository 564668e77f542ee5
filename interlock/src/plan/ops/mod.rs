//! The plan ops, one module each, registered once in the table below
//! (`plan_ops!`): a module holds its step type (what serde reads and the
//! schema is derived from), its sanity checks, its node-policy check and the
//! line the operator is shown at the prompt. The parser, the header conflicts,
//! the schema and the known-op list are all read from the table.
//! docs/architecture.md#how-to-add-a-plan-op says how to add one.
use super::sanity::StepCheck;
use crate::error::{Error, Issue};
use crate::policy::Policy;
use crate::sweep::GainSpec;
use schemars::{generate::SchemaGenerator, JsonSchema, Schema};
use serde_json::{Map, Value};

pub(crate) mod clkin_compare;
pub(crate) mod clock_check;
pub(crate) mod freq_cal;
pub(crate) mod inventory;
pub(crate) mod rx_capture;
pub(crate) mod rx_sweep;
pub(crate) mod tone;

/// What a task's header must allow for a step of an op: the op's conflicts with
/// `HARDWARE_ACCESS`, `RF_RX` and `RF_TX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// `HARDWARE_ACCESS = YES`.
    Hardware,
    /// `HARDWARE_ACCESS = YES` and `RF_RX = YES`: the step receives.
    Receive,
    /// `HARDWARE_ACCESS = YES` and `RF_TX = YES`: the step transmits.
    Transmit,
}

/// Device args as the schema allows them: not empty, no control character (the
/// parser also refuses blank args and `replay` keys).
pub(crate) const DEVICE_PATTERN: &str = r"^[^\u0000-\u001f\u007f]*$";

/// One plan op: everything rxnode knows about a step of it but how it runs
/// (that is the executor's, in the `rxnode` crate).
pub(crate) trait PlanOp: Sized + serde::de::DeserializeOwned + JsonSchema {
    /// The op name as written in the plan.
    const NAME: &'static str;
    /// What the header must allow.
    const NEEDS: Needs;
    /// The schema's description of the step.
    const ABOUT: &'static str;
    /// A valid step of this op, as a plan writes it (the table's test parses it).
    const EXAMPLE: &'static str;
    /// An invalid step of this op and the field its first issue names.
    const BAD_EXAMPLE: (&'static str, &'static str);

    /// The step's fields (the op already taken out) read strictly, then checked.
    fn parse(rest: Map<String, Value>, chk: &mut StepCheck<'_>) -> Option<Self> {
        let s = de::<Self>(rest, Self::NAME, chk)?;
        s.sanity(chk);
        Some(s)
    }

    /// The physical sanity of the step's values, each problem naming its field.
    fn sanity(&self, chk: &mut StepCheck<'_>);

    /// The node policy's verdict, by the very check `rxnode run` applies.
    fn policy(&self, policy: &Policy) -> Result<(), Error>;

    /// The step in plain units for the operator (every device string escaped).
    fn describe(&self) -> String;

    /// The device args the step addresses (MASTER for a step that addresses two).
    fn device(&self) -> Option<&str>;

    /// How long the step takes, seconds, when the plan says.
    fn duration_s(&self) -> Option<f64> {
        None
    }

    /// IQ bytes the step records.
    fn iq_bytes(&self) -> f64 {
        0.0
    }

    /// The RX gain of a step that receives: `Some(None)` when the step gives none
    /// (a node with `rx.max_gain_db` blocks it); `None` for a step without an RX gain.
    fn rx_gain(&self) -> Option<Option<&GainSpec>> {
        None
    }
}

/// The step's fields as `T`; serde's error names the field between backticks.
pub(crate) fn de<T: serde::de::DeserializeOwned>(
    rest: Map<String, Value>,
    op: &str,
    chk: &mut StepCheck<'_>,
) -> Option<T> {
    // serde names a value of the wrong type, not its field: kept to find the field.
    let fields = rest.clone();
    match serde_json::from_value::<T>(Value::Object(rest)) {
        Ok(t) => Some(t),
        Err(e) => {
            let msg = e.to_string();
            let (field, msg) =
                if msg.starts_with("invalid type: ") || msg.starts_with("invalid value: ") {
                    // The field whose value serde quotes; one only, or none is named.
                    let mut of = fields
                        .iter()
                        .filter(|(_, v)| {
                            let shown = unexpected(v);
                            msg.starts_with(&format!("invalid type: {shown},"))
                                || msg.starts_with(&format!("invalid value: {shown},"))
                        })
                        .map(|(k, _)| k.as_str());
                    match (of.next(), of.next()) {
                        (Some(k), None) => (Some(k), format!("{k}: {msg}")),
                        _ => (None, msg),
                    }
                } else {
                    (msg.split('`').nth(1), msg.clone())
                };
            chk.issues.push(Issue::new(
                Some(chk.line),
                field,
                format!("rx-plan step {} ({op}): {msg}", chk.n),
            ));
            None
        }
    }
}

/// A JSON value as serde_json's "invalid type" message shows it.
fn unexpected(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_owned(),
        Value::Object(_) => "map".to_owned(),
    }
}

/// One row of the op table: an op's name, what it needs, how it parses and its schema.
pub(crate) struct OpEntry {
    /// The op name as written in the plan.
    pub(crate) name: &'static str,
    /// What the header must allow.
    pub(crate) needs: Needs,
    /// The schema's description of the step.
    pub(crate) about: &'static str,
    /// Parse a step's fields (the op taken out) into a [`Step`].
    pub(crate) parse: fn(Map<String, Value>, &mut StepCheck<'_>) -> Option<Step>,
    /// The step's schema, its shared parts put in the generator's definitions.
    pub(crate) schema: fn(&mut SchemaGenerator) -> Schema,
    /// A valid step (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) example: &'static str,
    /// An invalid step and the field it is refused by (tests).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) bad_example: (&'static str, &'static str),
}

/// The table: `Variant(module::StepType)`, one line per op, in the order the
/// parser lists them and the schema holds them. Builds [`Step`], [`OPS`], the
/// dispatch of every [`PlanOp`] method on a `Step` and the export of each step type.
macro_rules! plan_ops {
    ($( $(#[$doc:meta])* $variant:ident($m:ident::$ty:ident), )*) => {
        /// Every op's step type, by name (the crate exports them all).
        pub mod step_types {
            $( pub use super::$m::$ty; )*
        }
        use step_types::*;

        /// One plan step: one variant per op of the table in `plan/ops/mod.rs`.
        #[derive(Debug, Clone, PartialEq, serde::Serialize)]
        #[serde(tag = "op", rename_all = "snake_case")]
        pub enum Step {
            $( $(#[$doc])* $variant($ty), )*
        }

        /// Every op, in table order.
        pub(crate) const OPS: &[OpEntry] = &[$(
            OpEntry {
                name: <$ty as PlanOp>::NAME,
                needs: <$ty as PlanOp>::NEEDS,
                about: <$ty as PlanOp>::ABOUT,
                parse: |rest, chk| <$ty as PlanOp>::parse(rest, chk).map(Step::$variant),
                schema: <$ty as JsonSchema>::json_schema,
                example: <$ty as PlanOp>::EXAMPLE,
                bad_example: <$ty as PlanOp>::BAD_EXAMPLE,
            },
        )*];

        impl Step {
            /// The op name as written in the plan.
            pub fn op(&self) -> &'static str {
                match self { $( Step::$variant(_) => <$ty as PlanOp>::NAME, )* }
            }

            /// What the header must allow for this step.
            #[cfg_attr(not(test), allow(dead_code))]
            pub(crate) fn needs(&self) -> Needs {
                match self { $( Step::$variant(_) => <$ty as PlanOp>::NEEDS, )* }
            }

            /// The device args the step addresses, if it addresses one (MASTER for
            /// `clkin_compare`, which addresses two).
            pub fn device(&self) -> Option<&str> {
                match self { $( Step::$variant(s) => s.device(), )* }
            }

            /// How long the step takes on its radio, seconds, when the plan says.
            pub fn duration_s(&self) -> Option<f64> {
                match self { $( Step::$variant(s) => s.duration_s(), )* }
            }

            /// The step in plain units, as the approval prompt and `rxnode
            /// validate` show it (every device string and name escaped).
            pub fn describe(&self) -> String {
                match self { $( Step::$variant(s) => s.describe(), )* }
            }

            /// IQ bytes the step records (0 when it records none).
            pub fn iq_bytes(&self) -> f64 {
                match self { $( Step::$variant(s) => s.iq_bytes(), )* }
            }

            /// The RX gain of a step that receives: `Some(None)` when it gives
            /// none (a node with `rx.max_gain_db` would block it).
            pub fn rx_gain(&self) -> Option<Option<&GainSpec>> {
                match self { $( Step::$variant(s) => s.rx_gain(), )* }
            }

            /// The node policy's verdict on the step ([`crate::check_step`]).
            pub(crate) fn policy(&self, policy: &Policy) -> Result<(), Error> {
                match self { $( Step::$variant(s) => s.policy(policy), )* }
            }
        }
    };
}

plan_ops! {
    /// Enumerate and probe radios, read-only.
    Inventory(inventory::InventoryStep),
    /// Set/read the clock source and check the expected source.
    ClockCheck(clock_check::ClockCheckStep),
    /// A bounded receive capture.
    RxCapture(rx_capture::RxCaptureStep),
    /// A wideband receive sweep (docs/operator.md#sweeps-rxnode-sweep).
    RxSweep(rx_sweep::RxSweepStep),
    /// A CW tone transmission (RED; needs a `TxPermit`).
    TxTone(tone::TxToneStep),
    /// Two radios at once on one tone: SLAVE's clock relative to MASTER's
    /// (docs/operator.md#verifying-a-slaves-clkin).
    ClkinCompare(clkin_compare::ClkinCompareStep),
    /// A radio's frequency error from a broadcast signal
    /// (docs/operator.md#calibrating-a-radio-without-a-generator).
    FreqCal(freq_cal::FreqCalStep),
}

/// The op named `name`, if any.
pub(crate) fn find(name: &str) -> Option<&'static OpEntry> {
    OPS.iter().find(|o| o.name == name)
}

/// The known op names, comma-separated, for a message.
pub(crate) fn known_list() -> String {
    OPS.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
